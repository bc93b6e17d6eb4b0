#!/bin/sh
# fuzz_dist.sh: a fixed-seed sample of the differential fuzzer's distributed family (issue #32,
# docs/FUZZ.md): 10 kernels of `--families dist` (a transpose read backwards, a row sum, 2-D and
# 3-D stencils with halos of width 2, a Jacobi update, an imperfect gemm, a 2-D sum beside an
# aligned write; three that distribute() must refuse), each in the interpreter and then on its
# drawn ranks (1..4) with ct_kernel_run_ranks (mpicc, mpirun, verified against the interpreter);
# then one refused kernel through `cachet run --ranks 2`: exit 2, a located "error: distribute:"
# message. SKIP without Open MPI. One line per failing check, then "N passed, M failed".
# Reproduce one seed: build/fuzz/difffuzz --families dist --engines interp,mpi --seed S --count 1 --verbose
BUILD=${CACHET_BUILD:-build}
FUZZ=$BUILD/fuzz/difffuzz
CACHET=${CACHET:-$BUILD/cachet}
if [ ! -x "$FUZZ" ]; then
	echo "FAIL $FUZZ is missing (make $FUZZ)"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! command -v "${CACHET_MPICC:-mpicc}" >/dev/null 2>&1 || ! command -v "${CACHET_MPIRUN:-mpirun}" >/dev/null 2>&1; then
	echo "skip no mpicc or mpirun (make deps installs openmpi-bin and libopenmpi-dev): the distributed fuzz sample is not run"
	echo "0 passed, 0 failed, 11 skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CACHET_CACHE_DIR="$tmp/cache"
pass=0 fail=0
# verified on their ranks: 100 transpose (A[N-1-x, y]), 105 row sum, 113 2-D stencil (width 2),
# 119 Jacobi, 121 imperfect gemm, 123 3-D box, 126 2-D sum + aligned write;
# refused: 104 a written array read at another rank's element, 108 a cache outside the
# distributed loops, 111 an index from a split
for s in 100 105 113 119 121 123 126 104 108 111; do
	"$FUZZ" --families dist --engines interp,mpi --seed $s --count 1 --verbose --no-minimize --timeout 60 \
		>"$tmp/out" 2>&1
	rc=$?
	# `cachet check` refuses what distribute() cannot do (docs/DISTRIBUTED.md), so a refused
	# kernel is rejected at the check, with its distribute: message
	case $s in
	104 | 108 | 111) want="rejected (check) .*distribute: " ;;
	*) want="pass .*mpi verified" ;;
	esac
	if [ "$rc" = 0 ] && grep -q "^seed $s: $want" "$tmp/out"; then
		pass=$((pass + 1))
	else
		echo "FAIL seed $s (exit $rc, wanted \"$want\"):"
		grep -E "^(seed|FAIL)" "$tmp/out" | head -n 3
		fail=$((fail + 1))
	fi
done
# a kernel distribute() refuses, through the CLI: exit 2 and the located message, no crash
"$FUZZ" --print 109 --families dist >"$tmp/refused.cachet"
"$CACHET" run "$tmp/refused.cachet" --ranks 2 >"$tmp/cli.out" 2>"$tmp/cli.err"
rc=$?
if [ "$rc" = 2 ] && grep -q "refused.cachet:[0-9]*:[0-9]*: error: distribute: " "$tmp/cli.err"; then
	pass=$((pass + 1))
else
	echo "FAIL cachet run --ranks 2 of a refused kernel: exit $rc (wanted 2 with \"error: distribute:\"):"
	head -n 3 "$tmp/cli.err"
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
