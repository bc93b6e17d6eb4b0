#!/bin/sh
# auto_bench.sh: issue #30 item 4's bench (bench/auto/bench_auto.c) in its --quick mode: every hand-written
# plan of sgemm, dgemm, the two-index transform and the stencil and each plain-nest twin through auto
# parse, run and verify (against the interpreter at a small size, and against the best hand plan in the
# table), the table has a row per case, a wrong result (the test hook CACHET_BENCH_AUTO_INJECT) is
# WRONG with exit 1; `cachet run --auto` verifies each twin and `cachet auto` gives the same file twice
# at the bench's sizes. No timing is asserted.
. tests/cli/lib/expect.sh

BUILD=${CACHET_BUILD:-build}
CC=${CC:-cc}
export CACHET_CACHE_DIR="$tmp/cache"
abs=$(cd "$BUILD" && pwd)
# under the sanitizers (SAN=1) the instrumented library needs its runtimes linked in
SANFL=""
[ "${SAN:-}" = 1 ] && SANFL="-fsanitize=address,undefined"
if $CC -O2 $SANFL -D_GNU_SOURCE -std=c11 -Wall -Wextra -Werror -Iinclude -o "$tmp/bench_auto" bench/auto/bench_auto.c \
	-L"$abs" -lcachet -Wl,-rpath,"$abs" -lm 2>"$tmp/cc.err"; then
	ok
else
	bad "build bench_auto: $(head -5 "$tmp/cc.err")"
	counts
	exit 1
fi
unset CACHET_BENCH_AUTO_INJECT

# 1. --quick on 2 threads: the reference check and one row per case, all verified
"$tmp/bench_auto" --quick --threads 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] && ok || bad "quick: exit $rc: $(tail -5 "$tmp/err")"
grep -q '^cpu: .*measured FMA peak' "$tmp/out" && ok || bad "quick: no cpu line"
grep -q '^all results verified' "$tmp/out" && ok || bad "quick: no 'all results verified'"
grep -q 'WRONG' "$tmp/out" && bad "quick: WRONG: $(grep WRONG "$tmp/out")" || ok
for c in sgemm dgemm two-index stencil5; do
	# the reference check: every hand plan and auto verified against the interpreter
	line=$(grep "^$c .* thr:" "$tmp/out")
	want=3
	[ "$c" = two-index ] && want=4
	n=$(echo "$line" | grep -o ' ok (' | wc -l)
	[ "$n" = "$want" ] && ok || bad "quick: $c: $n of $want plans verified against the interpreter: $line"
	# the table's row: the hand plans' and auto's times, the best hand plan, a verdict, verified
	row=$(grep "^$c  *[0-9][0-9]*  *2 " "$tmp/out")
	[ "$(echo "$row" | grep -c .)" = 1 ] && echo "$row" | grep -qE ' (within 10%|NOT within 10%) ' &&
		echo "$row" | grep -qE ' ok$' && ok || bad "quick: no verified row for $c: $row"
done
# two-index: the three hand plans timed (two_index_fused's tiles divide the quick size)
grep '^two-index ' "$tmp/out" | grep -qE '^two-index +128 +2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ ' && ok ||
	bad "quick: two-index lacks a timed hand plan: $(grep '^two-index ' "$tmp/out")"
grep -q "^[0-9]* of 4 rows: auto within 10%" "$tmp/out" && ok || bad "quick: no summary line"

# 2. (no reference check) a wrong result is WRONG, exit 1; a hand plan that does not check at a size is n/a
CACHET_BENCH_AUTO_INJECT=stencil5 "$tmp/bench_auto" --quick --no-check --threads 1 --cases stencil5,two-index --sizes 96 \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && ok || bad "inject: exit $rc, want 1"
grep -q '^stencil5 .*WRONG$' "$tmp/out" && ok || bad "inject: no WRONG row: $(grep '^stencil5' "$tmp/out")"
grep -q 'auto differs from' "$tmp/err" && ok || bad "inject: the error not named"
grep -q '^two-index .* ok$' "$tmp/out" && grep -q 'n/a: two_index_fused at 96' "$tmp/out" && ok ||
	bad "inject: two-index at 96 (fused n/a): $(grep -A1 '^two-index ' "$tmp/out")"

# 3. usage errors
"$tmp/bench_auto" --bogus >/dev/null 2>&1
[ $? = 2 ] && ok || bad "usage: not exit 2"
"$tmp/bench_auto" --quick --cases nosuchcase >/dev/null 2>&1
[ $? = 2 ] && ok || bad "unknown case: not exit 2"

# 4. each twin: `cachet run --auto` verifies; `cachet auto` at the bench's sizes gives the same file twice
# (run at small sizes: the interpreter verifies it)
for spec in "auto_matmul -D M=2048 -D N=2048 -D K=2048 : -D M=50 -D N=70 -D K=30" \
	"auto_dgemm -D M=1024 -D N=1024 -D K=1024 : -D M=50 -D N=70 -D K=30" \
	"auto_two_index -D V=512 -D N=512 : -D V=40 -D N=52" "auto_stencil5 -D N=4096 -D M=4096 : -D N=61 -D M=67"; do
	small=${spec#*: }
	set -- ${spec%% :*}
	f=examples/$1.cachet
	shift
	expect "run --auto $f" 0 "verified against the reference interpreter" "$CACHET" run --auto "$f" $small --threads 2
	"$CACHET" auto "$f" "$@" --threads 2 >"$tmp/s1" 2>&1
	"$CACHET" auto "$f" "$@" --threads 2 >"$tmp/s2" 2>&1
	[ -s "$tmp/s1" ] && cmp -s "$tmp/s1" "$tmp/s2" && ok || bad "auto $f $*: two runs differ"
done

counts
[ "$fail" = 0 ]
