#!/bin/sh
# unroll_by.sh: unroll(x, by=n) puts `#pragma GCC unroll n` before every loop over x (register tiles' reduction loops included), shows in lower, and leaves the result equal to the interpreter's.
. tests/cli/lib/expect.sh

f=tests/plans/verbs_unroll_by.cachet
d="-D M=37 -D N=45 -D K=29 -D L=11"
# every version of the tiled nest (main and tail of j and of i: four
# register tiles) and the runtime-sized loop get the hint
# shellcheck disable=SC2086
"$CACHET" emit "$f" $d >"$tmp/emit" 2>&1
n=$(grep -c '#pragma GCC unroll 4' "$tmp/emit")
if [ "$n" = 4 ]; then ok; else bad "four register tiles with the unroll-by-4 hint, found $n"; fi
n=$(grep -c '#pragma GCC unroll 3' "$tmp/emit")
if [ "$n" = 1 ]; then ok; else bad "the loop over l with the unroll-by-3 hint, found $n"; fi
# the hint sits right before the reduction loop of a tile
if grep -A1 '#pragma GCC unroll 4' "$tmp/emit" | grep -q 'for (int64_t k = 0; k < 29; k++)'; then ok; else bad "hint before the loop over k"; fi
# shellcheck disable=SC2086
expect "lower marks the loops" 0 'for k in range\(0, 29\):  # unroll by 4' "$CACHET" lower "$f" $d
# shellcheck disable=SC2086
expect "lower --json" 0 '"unroll_by": 3' "$CACHET" lower "$f" $d --json
# shellcheck disable=SC2086
expect "equal to the interpreter" 0 '"verified": true' "$CACHET" run "$f" $d --json
# a plan without by= has no hint
expect "no by=, no hint" 1 '' sh -c "\"$CACHET\" emit examples/matmul.cachet | grep -q 'GCC unroll'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
