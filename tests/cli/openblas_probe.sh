#!/bin/sh
# openblas_probe.sh: the benches' OpenBLAS probe (bench/common/openblas_best.c, bench_openblas_at_best in bench_util.h) runs whatever the environment's OPENBLAS_CORETYPE says, verifies every candidate and excludes one that computes a wrong result or crashes (its test hook CACHET_BENCH_OPENBLAS_INJECT), times them on gemm or on the routine --score names; tiny sizes (CACHET_BENCH_OPENBLAS_QUICK), no timing.
. tests/cli/lib/expect.sh

CC=${CC:-cc}
printf '#include <cblas.h>\nint main(void) { return openblas_get_num_threads() < 1; }\n' >"$tmp/t.c"
if ! $CC -o "$tmp/t" "$tmp/t.c" -lopenblas 2>/dev/null; then
	echo "SKIP: no OpenBLAS to compile against (cblas.h, -lopenblas; make bench-deps installs it)"
	echo "0 passed, 0 failed (skipped: no OpenBLAS)"
	exit 0
fi
for p in openblas_best openblas_pick; do
	if ! $CC -O2 -D_GNU_SOURCE -std=c11 -o "$tmp/$p" "bench/common/$p.c" -lopenblas -lm 2>"$tmp/cc.err"; then
		bad "build $p"
		sed 's/^/    /' "$tmp/cc.err" | head -5 >&2
	fi
done
export CACHET_BENCH_OPENBLAS_QUICK=1
unset CACHET_BENCH_OPENBLAS_PICKED CACHET_BENCH_PEER_NOTE CACHET_BENCH_OPENBLAS_INJECT
# the candidates other than the library's own pick, as the probe labels them
SETS="Haswell SkylakeX Cooperlake SapphireRapids Zen environment"
all_but_default() { # ACTION: every candidate but "default" made to fail so
	s=""
	for c in $SETS; do s="$s${s:+,}$c:$1"; done
	echo "$s"
}
# the environment forces a kernel set as these machines' does
ENVV="OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512"

# 1. every candidate probed and verified; the environment does not stop the probe
# shellcheck disable=SC2086
expect "probe under the environment's OPENBLAS_CORETYPE: a choice" 0 '^label ' env $ENVV "$tmp/openblas_best"
expect "probe: the default candidate measured, both variables removed" 0 'openblas_best: default +[0-9.]+ GFLOP/s' \
	env $ENVV "$tmp/openblas_best"
expect "probe: the environment's values named in the note" 0 \
	'^note .*environment had OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512' env $ENVV "$tmp/openblas_best"

# 2. injected wrong results and crashes: excluded, the only correct candidate chosen
expect "wrong results excluded: the default chosen" 0 '^coretype -$' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default wrong)" "$tmp/openblas_best"
expect "wrong results excluded: OPENBLAS_L2_SIZE removed" 0 '^l2 -$' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default wrong)" "$tmp/openblas_best"
expect "wrong result: said so" 0 'Haswell +excluded: wrong result' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default wrong)" "$tmp/openblas_best"
expect "crashes excluded: the default chosen" 0 '^label default$' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default crash)" "$tmp/openblas_best"
expect "crash: said so" 0 'environment +excluded: crashed \(signal 11\)' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default crash)" "$tmp/openblas_best"
# the library's own pick wrong: another one chosen
expect "the default wrong: another chosen" 0 '^label (Haswell|SkylakeX|Cooperlake|SapphireRapids|Zen|environment)$' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT=default:wrong "$tmp/openblas_best"
expect "nothing correct: exit 1" 1 'no usable candidate' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT="default:crash,$(all_but_default wrong)" "$tmp/openblas_best"
# the candidates timed on the routine a bench compares with (the triangular benches: their sets'
# strsm differ where their gemm does not); an unknown routine is a usage error
for r in trmm trsm syrk; do
	expect "--score $r: the note names the routine timed" 0 "^note .*probed, 1-thread s$r GFLOP/s: default" \
		env $ENVV "$tmp/openblas_best" --score $r
done
expect "--score gemm: s/dgemm, as without it" 0 '^note .*probed, 1-thread s/dgemm GFLOP/s' \
	"$tmp/openblas_best" --score gemm
expect "--score with --coretype: that one, verified" 0 '^label Zen$' "$tmp/openblas_best" --coretype Zen --score trsm
expect "--score of an unknown routine: usage" 2 'usage: openblas_best \[--score' "$tmp/openblas_best" --score gemv

# 3. a bench (the same code path: bench_openblas_at_best) runs with the choice, not the environment's
own=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$tmp/openblas_pick" --openblas-coretype default 2>/dev/null | sed -n 's/^loaded: //p')
out=$(env $ENVV CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default wrong)" "$tmp/openblas_pick" 2>/dev/null)
case $out in
*"loaded: $own"*"OPENBLAS_CORETYPE=(unset)"*"OPENBLAS_L2_SIZE=(unset)"*) ok ;;
*) bad "bench under OPENBLAS_CORETYPE=Haswell: not re-executed with the probe's choice (library's own $own): $out" ;;
esac
case $out in
*"peer: kernel set $own (probed"*"environment had OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512"*) ok ;;
*) bad "bench header: lacks the choice and the environment's values: $out" ;;
esac
# a fixed candidate (the bench option, not the variable): used when correct, the bench stops when not
expect "--openblas-coretype default: used" 0 '^OPENBLAS_CORETYPE=\(unset\)' \
	env $ENVV "$tmp/openblas_pick" --openblas-coretype default
expect "--openblas-coretype default: said so" 0 'fixed by --openblas-coretype default' \
	env $ENVV "$tmp/openblas_pick" --openblas-coretype default
expect "--openblas-coretype of a wrong candidate: the bench stops" 2 'not usable here' \
	env $ENVV CACHET_BENCH_OPENBLAS_INJECT=default:wrong "$tmp/openblas_pick" --openblas-coretype default

# 4. the Python bench (bench_python.py's own copy of the pick): numpy's OpenBLAS runs with the choice
PY=${PYTHON:-/usr/bin/python3}
# under the sanitizers (SAN=1) the instrumented library needs its runtimes preloaded (lib/pysan)
[ "${SAN:-}" = 1 ] && PY="$(pwd)/tests/cli/lib/pysan"
BUILD=${CACHET_BUILD:-build}
skipped=""
if [ -f "$BUILD/python/cachet/__init__.py" ] && "$PY" -c "import numpy, threadpoolctl" 2>/dev/null; then
	out=$(env $ENVV OPENBLAS_NUM_THREADS=1 CACHET_BENCH_OPENBLAS_INJECT="$(all_but_default wrong)" \
		CACHET_BENCH_OPENBLAS_BEST="$tmp/openblas_best" PYTHONPATH="$BUILD/python" \
		"$PY" bench/python/bench_python.py --peer-only 2>&1)
	case $out in
	*"OpenBLAS kernel set $own (probed"*"numpy's BLAS: openblas "*"kernel set $own, "*) ok ;;
	*) bad "bench_python under OPENBLAS_CORETYPE=Haswell: numpy not on the probe's choice ($own): $out" ;;
	esac
	case $out in
	*"threads (set to cachet's"*"environment had OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512 OPENBLAS_NUM_THREADS=1"*) ok ;;
	*) bad "bench_python header: lacks numpy's threads or the environment's values: $out" ;;
	esac
else
	skipped=" bench_python (no $BUILD/python or no numpy/threadpoolctl for $PY)"
	echo "SKIP:$skipped"
fi

echo "$pass passed, $fail failed${skipped:+ (skipped:$skipped)}"
[ "$fail" = 0 ]
