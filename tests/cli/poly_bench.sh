#!/bin/sh
# poly_bench.sh: the PolyBench-style suite's harness (bench/poly/bench_poly.c) in its --quick mode:
# gemm and jacobi2d at their small sizes, 1 thread (gemm also on 2), each peer (gcc, Polly, OpenBLAS, cachet
# auto) measured and verified against the interpreter, the table and its geometric means printed;
# the auto columns measured through a stand-in `cachet auto` (it writes the plain nest back), and
# "n/a (no cachet auto)" when the binary has none; the Halide peer (Halide 14's autoschedulers)
# measured and verified for gemm and jacobi2d where Debian's libhalide14-0-dev is installed (else
# skipped, with the reason); a wrong result (the test hook CACHET_BENCH_POLY_INJECT) is reported as
# WRONG with exit 1 (for the BLAS peer: under every kernel set tried). No timing is asserted.
. tests/cli/lib/expect.sh

BUILD=${CACHET_BUILD:-build}
CC=${CC:-cc}
printf '#include <cblas.h>\nint main(void) { return openblas_get_num_threads() < 1; }\n' >"$tmp/t.c"
if ! $CC -o "$tmp/t" "$tmp/t.c" -lopenblas 2>/dev/null; then
	skip "no OpenBLAS to compile against (cblas.h, -lopenblas; make bench-deps installs it)"
	counts
	exit 0
fi
abs=$(cd "$BUILD" && pwd)
# under the sanitizers (SAN=1) the instrumented library needs its runtimes linked in; Halide (an
# uninstrumented LLVM) is then left out
SANFL=""
[ "${SAN:-}" = 1 ] && SANFL="-fsanitize=address,undefined"
if $CC -O2 $SANFL -D_GNU_SOURCE -std=c11 -Iinclude -o "$tmp/bench_poly" bench/poly/bench_poly.c \
	-L"$abs" -lcachet -Wl,-rpath,"$abs" -ldl -lm 2>"$tmp/cc.err"; then
	ok "build bench_poly"
else
	bad "build bench_poly: $(head -5 "$tmp/cc.err")"
	counts
	exit 1
fi
unset CACHET_BENCH_POLY_INJECT
real=$(cd "$(dirname "$CACHET")" && pwd)/$(basename "$CACHET")
cat >"$tmp/cachet" <<EOS
#!/bin/sh
if [ "\$1" = auto ]; then
	shift
	[ "\$1" = --help ] && exit 0
	in=\$1 out=""
	while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
	cp "\$in" "\$out"
	exit 0
fi
exec "$real" "\$@"
EOS
chmod +x "$tmp/cachet"

# 0. a name of --only with no kernel file is refused (it dropped its kernel from the table unseen)
"$tmp/bench_poly" --quick --only gemm,2mm --no-halide --cachet "$tmp/cachet" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q "no kernel named '2mm'" "$tmp/err" && [ ! -s "$tmp/out" ] && ok "--only: unknown name refused" ||
	bad "--only: unknown name: exit $rc: $(tail -2 "$tmp/err")"

# 1. --quick, gemm on 2 threads with a stand-in auto: every peer measured and verified
# (1 thread, Halide and jacobi2d in 2.)
"$tmp/bench_poly" --quick --only gemm --threads 2 --no-halide --cachet "$tmp/cachet" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] && ok "quick: exit 0" || bad "quick: exit $rc: $(tail -5 "$tmp/err")"
grep -q '^all results verified' "$tmp/out" && ok "quick: verified" || bad "quick: no 'all results verified'"
grep -q '^cpu: ' "$tmp/out" && ok "quick: cpu line" || bad "quick: no cpu line"
grep -q "^threads 2: seconds" "$tmp/out" && ok "quick: table, 2 threads" || bad "quick: no table for 2 threads"
[ "$(grep -c '^geomean' "$tmp/out")" = 1 ] && ok "quick: geomean" || bad "quick: want 1 geomean line"
# gemm: gcc, polly (when a clang with Polly is here), blas, auto, auto-b each timed
line=$(grep -m1 '^gemm ' "$tmp/out")
n=$(echo "$line" | grep -o '[0-9.e+-]* *[0-9]*\.[0-9][0-9] ' | wc -l)
want=5
grep -q '^polly: (none)' "$tmp/out" && want=4
[ "$n" -ge "$want" ] && ok "quick: gemm has $n timed peers" || bad "quick: gemm has $n timed peers, want $want: $line"
echo "$line" | grep -q ' n/a ' && ok "quick: halide column" || bad "quick: no halide column: $line"
# the BLAS column: the fastest correct of OpenBLAS's own kernel set and each named one, each loaded by a child
grep -q '^blas: OpenBLAS (libopenblas.so.0), the fastest correct of its own kernel set and of Haswell' "$tmp/out" &&
	ok "quick: the BLAS peer's kernel sets said" || bad "quick: no blas line: $(grep '^blas' "$tmp/out")"
echo "$line" | grep -qE ' (own|Haswell|SkylakeX|Cooperlake|SapphireRapids|Zen) ' && ok "quick: the kernel set named" ||
	bad "quick: gemm's kernel set not named: $line"
grep -q '^halide: not measured (--no-halide)' "$tmp/out" && ok "quick: halide off said" || bad "quick: halide off not said"
grep -q 'WRONG\|failed' "$tmp/out" && bad "quick: a peer failed: $(grep 'WRONG\|failed' "$tmp/out")" || ok "quick: no failed peer"

# 2. a wrong result is caught; the real binary's auto is measured or said to be missing; Halide's
# autoschedulers (when Debian's libhalide14-0-dev is here) give gemm and jacobi2d, verified
hal=""
if [ "${SAN:-}" = 1 ]; then
	:
elif [ -f /usr/include/halide14/Halide.h ]; then
	if ${CXX:-g++} -O0 -std=c++17 -Wall -Wextra -Werror -fPIC -shared -isystem /usr/include/halide14 -o "$tmp/poly_halide.so" \
		bench/poly/halide/poly_halide.cpp -lHalide14 2>"$tmp/cc.err"; then
		ok "build poly_halide.so"
		hal="--halide-lib $tmp/poly_halide.so"
	else
		bad "build poly_halide.so: $(head -5 "$tmp/cc.err")"
	fi
fi
CACHET_BENCH_POLY_INJECT=blas:gemm "$tmp/bench_poly" --quick --threads 1 --cachet "$real" $hal >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && ok "inject: exit 1" || bad "inject: exit $rc, want 1"
grep -q "^threads 1: seconds" "$tmp/out" && ok "inject: table, 1 thread" || bad "inject: no table for 1 thread"
grep -q '^geomean' "$tmp/out" && ok "inject: geomean" || bad "inject: no geomean line"
grep -q '^gemm .*WRONG' "$tmp/out" && ok "inject: WRONG in the table" || bad "inject: no WRONG: $(grep '^gemm' "$tmp/out")"
grep -q 'gemm blas threads 1: max rel error' "$tmp/err" && ok "inject: the error named" || bad "inject: no error message"
if "$real" auto --help 2>&1 | grep -q "unknown command 'auto'"; then
	grep -q 'n/a (no cachet auto)' "$tmp/out" && ok "no auto: said so" || bad "no auto: not said"
else
	grep -q '^auto: ' "$tmp/out" && ok "auto: measured" || bad "auto: not measured"
fi

# 3. usage errors
"$tmp/bench_poly" --bogus >/dev/null 2>&1
[ $? = 2 ] && ok "usage: exit 2" || bad "usage: not exit 2"
"$tmp/bench_poly" --quick --only nosuchkernel >/dev/null 2>&1
[ $? = 2 ] && ok "unknown kernel: exit 2" || bad "unknown kernel: not exit 2"
# jacobi2d has no BLAS formulation
grep -m1 '^jacobi2d ' "$tmp/out" | grep -q ' n/a ' && ok "jacobi2d: blas n/a" || bad "jacobi2d: blas not n/a"
if [ -n "$hal" ]; then
	for k in gemm jacobi2d; do
		grep "^$k " "$tmp/out" | grep -qE '(Mullapudi2016|Li2018|Adams2019) ' && ok "halide: $k measured" ||
			bad "halide: $k not measured: $(grep "^$k " "$tmp/out") $(grep halide "$tmp/err")"
	done
	grep -q 'halide.*WRONG\|halide-[a-z0-9]* threads 1: max rel' "$tmp/err" && bad "halide: a wrong result" || ok "halide: verified"
	grep -q '^jacobi2d .*failed\|^jacobi2d .*WRONG' "$tmp/out" && bad "jacobi2d: a peer failed" || ok "jacobi2d: every peer verified"
elif [ "${SAN:-}" = 1 ]; then
	skip "Halide peer: not under the sanitizers (SAN=1; Halide's LLVM is not instrumented)"
else
	skip "Halide peer: no /usr/include/halide14/Halide.h (Debian's libhalide14-0-dev; make bench-deps)"
fi
counts
[ "$fail" = 0 ]
