#!/bin/sh
# tune.sh: `cachet tune` (a short real run at tiny sizes, --sizes, --budget, --json, --show),
# `cachet run` through the solution selector, and the tune errors.
. "$(dirname "$0")/lib/expect.sh"

# every run here uses its own store and code cache
export CACHET_CACHE_DIR="$tmp/cache"

ex=examples/tune_matmul.cachet
plain=$(kfile plain.cachet "kernel p" "param N = 8" "array A : f32[N] inout" "for (i: N) {" "  A[i] += 1" "}")
bad=$(kfile bad.cachet "kernel b" "param N = 8" "param T = 3 tune {4, 8}" "array A : f32[N] inout" \
	"for (i: N) {" "  A[i] += 1" "}")

expect "tune: no tunable param" 2 "plain.cachet:1:8: error: kernel 'p' has no tunable param" \
	"$CACHET" tune "$plain"
expect "tune: default not a candidate" 2 "bad.cachet:3:13: error: the default 3 of 'T' is not among" \
	"$CACHET" tune "$bad"
expect "tune: bad --sizes" 2 "is not one value per size param" "$CACHET" tune "$ex" --sizes 8x8
expect "tune: bad --budget" 2 "positive seconds" "$CACHET" tune "$ex" --budget 0
expect "tune: unknown option" 2 "unknown option" "$CACHET" tune "$ex" --fast
expect "tune --show: empty store" 0 "0 records" "$CACHET" tune --show

# a real tuning run: tiny sizes, a budget of seconds
expect "tune: two size sets, json" 0 '"stored": true' \
	"$CACHET" tune "$ex" --sizes 24x20x16,40x36x32 --budget 20 --json
n=$(grep -c '"family"' "$tmp/o")
[ "$n" = 2 ] && ok || bad "tune: $n JSON objects for two size sets"
grep -q '"space": 48, "valid": 48, "measured": 2' "$tmp/o" && ok || bad "tune: 2 of 48 measured (5%, rounded down): $(head -c 300 "$tmp/o")"
expect "tune: text table" 0 "best: rank" "$CACHET" tune "$ex" -D M=24 -D N=20 -D K=16 --budget 10
expect "tune --show" 0 "M=24:N=20:K=16" "$CACHET" tune --show
grep -q "M=40:N=36:K=32" "$tmp/o" && ok || bad "tune --show lacks the second size class"
expect "tune --show FILE --json" 0 '"records": \[' "$CACHET" tune --show "$ex" --json
expect "tune --show other family" 0 "0 records" "$CACHET" tune --show "$plain"

# cachet run asks the selector: exact record, nearest class, the model
expect "run: exact record" 0 "tuned .*\(exact M=24:N=20:K=16\)" "$CACHET" run "$ex" -D M=24 -D N=20 -D K=16
expect "run: nearest class, prime sizes" 0 '"source": "nearest", "size_class": "M=40:N=36:K=32"' \
	"$CACHET" run "$ex" -D M=41 -D N=37 -D K=31 --json
grep -q '"verified": true' "$tmp/o" && ok || bad "run: nearest not verified"
expect "run: a -D of a tunable param pins it" 0 "verified" "$CACHET" run "$ex" -D TI=16
grep -q "tuned" "$tmp/o" && bad "run -D TI: the selector was asked" || ok
expect "run: interp engine uses the defaults" 0 "interp engine" "$CACHET" run "$ex" --engine interp
CACHET_CACHE_DIR="$tmp/empty" expect "run: no store, the model" 0 "\(model\)" \
	"$CACHET" run "$ex" -D M=37 -D N=29 -D K=13

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
