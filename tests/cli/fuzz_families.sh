#!/bin/sh
# fuzz_families.sh: the fixed-seed quick pass of the differential fuzzer's extended families
# (docs/FUZZ.md, issue 34): wavefront recurrences, accumulators with non-associative updates,
# in-place sweeps, imperfect multi-statement nests, tune params, strided arrays; seeds
# 1000001..1000800 in the interpreter, every 20th accepted kernel also natively on 1 and 2 threads,
# a few through a callable, a package and Python; then a check that a compile slower than
# --slow-compile is the verdict slow-compile.
# FUZZ_FAMILIES (default all: reorders of dependence-carrying bands too, which check must refuse),
# FUZZ_EDGES (default 1: split sizes at the 64-bit edge, runtime params of 0 / -1, double unrolls)
# and FUZZ_ENTRIES (default run:20,selector:10,callable:20,package:100,python:100,auto:20) choose what runs
# (docs/FUZZ.md). One line per failing seed, then "N passed, M failed" (one per kernel, and one for
# the slow-compile check).
# Reproduce one seed: build/fuzz/difffuzz --families all --edges 1 --seed S --count 1 --engines interp,native --out DIR
BUILD=${CACHET_BUILD:-build}
FUZZ=$BUILD/fuzz/difffuzz
if [ ! -x "$FUZZ" ]; then
	echo "FAIL $FUZZ is missing (make $FUZZ)"
	echo "0 passed, 1 failed"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
engines=interp
set -- ${CC:-cc}
command -v "$1" >/dev/null 2>&1 && engines=interp,native || echo "skip native runs: no C compiler ($1)"
entries=
if [ "$engines" = interp,native ]; then
	e=${FUZZ_ENTRIES:-run:20,selector:10,callable:20,package:100,python:100,auto:20}
	# the python entry needs the package built next to the library (make python) and numpy
	[ -d "$BUILD/python/cachet" ] && /usr/bin/python3 -c "import numpy" 2>/dev/null ||
		e=$(echo "$e" | sed 's/,*python:[0-9]*//')
	entries="--entries $e"
	# under the sanitizers the Python entry's interpreter gets their runtimes preloaded (lib/pysan)
	[ "${SAN:-}" = 1 ] && entries="$entries --python $(pwd)/tests/cli/lib/pysan"
fi
"$FUZZ" --families ${FUZZ_FAMILIES:-all} --edges ${FUZZ_EDGES:-1} --seed 1000001 \
	--count ${FUZZ_FAMILIES_COUNT:-800} --engines $engines --native-every 20 $entries --no-minimize \
	--timeout 60 >"$tmp/out" 2>&1
rc=$?
grep -v '^\[' "$tmp/out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -n 1)
pass=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
fail=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
[ -z "$line" ] && pass=0 fail=1
[ "$rc" != 0 ] && [ "$fail" = 0 ] && fail=1
# a compile slower than --slow-compile (here 1 ms) must be reported as slow-compile (seed 1000002
# is accepted and compiled natively)
if [ "$engines" = interp,native ]; then
	if "$FUZZ" --families legal --edges 0 --seed 1000002 --count 1 --engines interp,native \
		--native-every 1 --no-minimize --slow-compile 0.001 >"$tmp/slow" 2>&1 ||
		! grep -q "slow-compile (compile): the C compiler took" "$tmp/slow"; then
		echo "FAIL slow-compile check: a compile over --slow-compile was not reported"
		cat "$tmp/slow"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
