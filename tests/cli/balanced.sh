#!/bin/sh
# balanced.sh: split(x, s, balanced=true) and tile(..., balanced=true): blocks of s and s-1 instead of a short tail (docs/LANGUAGE.md section 7): lower shows the versions, both get register tiles, results equal the interpreter for runtime and -D sizes, option errors are file:line:col.
. tests/cli/lib/expect.sh

ex=examples/plan_balanced.cachet
# the same kernel with M a compile-time param
ct=$tmp/ct.cachet
sed 's/^param M : runtime$/param M = 64/' "$ex" >"$ct"
if grep -q '^param M = 64$' "$ct"; then ok; else bad "compile-time copy of the example"; fi

# 127 = 17 x 6 + 5 x 5, 100 = 15 x 6 + 2 x 5, 64 = 9 x 6 + 2 x 5, no tail
expect "lower 127" 0 'for i in range\(102, 127, step=5\)' "$CACHET" lower "$ct" -D M=127
expect "lower 127 blocks of 6" 0 'for i in range\(0, 102, step=6\)' "$CACHET" lower "$ct" -D M=127
expect "lower 100" 0 'for i in range\(90, 100, step=5\)' "$CACHET" lower "$ct" -D M=100
expect "lower 64" 0 'for i in range\(54, 64, step=5\)' "$CACHET" lower "$ct" -D M=64
expect "lower 64 no tail" 1 '' sh -c "\"$CACHET\" lower \"$ct\" -D M=64 | grep -q tail"
# 7 by 6 cannot be balanced (5 blocks of 5 would be needed): the plain split
expect "lower 7 plain" 0 'for i in range\(6, 7, step=6\):  # tail' "$CACHET" lower "$ct" -D M=7
# 12 divides: only blocks of 6
expect "lower 12 no blocks of 5" 1 '' sh -c "\"$CACHET\" lower \"$ct\" -D M=12 | grep -q 'step=5'"

# both versions keep a full register tile, with M known only at run time
"$CACHET" emit "$ex" >"$tmp/emit" 2>&1
if grep -q 'register tile: 6 x 32 of C' "$tmp/emit"; then ok; else bad "6 x 32 tile"; fi
if grep -q 'register tile: 5 x 32 of C' "$tmp/emit"; then ok; else bad "5 x 32 tile"; fi

# results equal the interpreter: M in {1, b-1, b, b+1, 2b-1, 64, 100, 127}
# and more, runtime (one compiled kernel) and compile-time sizes
for m in 1 2 5 6 7 11 12 13 19 29 30 31 64 100 127; do
	expect "runtime M=$m" 0 '"verified": true' "$CACHET" run "$ex" -D M="$m" --json
	expect "-D M=$m" 0 '"verified": true' "$CACHET" run "$ct" -D M="$m" --json
done
# a balanced tile of two indices, with tails of their own (j: 45 = 5 x 9,
# 9 blocks; k: 29 by 4 = 7 x 4 + 1 -> 5 x 4 + 3 x 3)
t2=$(kfile t2.cachet 'kernel t2' 'param M = 37, N = 45, K = 29' 'array A : f64[M, K] input' \
	'array B : f64[K, N] input' 'array C : f64[M, N] inout' \
	'for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }' \
	'schedule {' '  ii, kk = tile(i=5, k=4, balanced=true)' '  jj = split(j, 16)' \
	'  reorder(i, j, k, kk, ii, jj)' '}' 'plan { unroll(ii); vectorize(jj) }')
expect "tile balanced k" 0 'for k in range\(20, 29, step=3\)' "$CACHET" lower "$t2"
for d in "" "-D M=1" "-D M=4" "-D M=9 -D K=3" "-D M=100 -D N=100 -D K=100"; do
	# shellcheck disable=SC2086
	expect "tile run $d" 0 '"verified": true' "$CACHET" run "$t2" $d --json
done
# parallel over the versions of a balanced split with a runtime size (the
# blocks of s - 1 and the tail run as one parallel loop: long trip counts)
pa=$(kfile pa.cachet 'kernel pa' 'param M : runtime' 'param N = 40, K = 17' 'array A : f64[M, K] input' \
	'array B : f64[K, N] input' 'array C : f64[M, N] inout' \
	'for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }' \
	'schedule {' '  ii = split(i, 4, balanced=true)' '  reorder(i, k, ii, j)' '}' \
	'plan { parallelize(i); unroll(ii); vectorize(j) }')
for m in 1 3 5 11 100 127; do
	expect "parallel M=$m" 0 '"verified": true' "$CACHET" run "$pa" -D M="$m" --threads 2 --json
done
# a balanced split of an inner index (k -> kk -> kkk)
ne=$(kfile ne.cachet 'kernel ne' 'param M = 100, N = 37, K = 29' 'array A : f32[M, K] input' \
	'array B : f32[K, N] input' 'array C : f32[M, N] inout' \
	'for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }' \
	'schedule {' '  ii = split(i, 32)' '  iii = split(ii, 6, balanced=true)' '  jj = split(j, 16)' \
	'  reorder(j, i, ii, k, iii, jj)' '}' 'plan { unroll(iii); vectorize(jj) }')
for m in 1 5 31 33 100; do
	expect "inner index M=$m" 0 '"verified": true' "$CACHET" run "$ne" -D M="$m" --json
done
# a loop that does not start at 0
of=$(kfile of.cachet 'kernel of' 'param N : runtime' 'array X : f32[N] input' 'array Y : f32[N] inout' \
	'for (i: 1 .. N - 1) { Y[i] += X[i - 1] + X[i + 1] }' 'schedule { ii = split(i, 7, balanced=true) }' \
	'plan { unroll(ii) }')
for n in 2 3 9 51 53; do
	expect "offset N=$n" 0 '"verified": true' "$CACHET" run "$of" -D N="$n" --json
done
# balanced=false is the plain split
pf=$(kfile pf.cachet 'kernel pf' 'param M = 13' 'array X : f32[M] inout' 'for (i: M) { X[i] += 1 }' \
	'schedule { ii = split(i, 6, balanced=false) }')
expect "balanced=false" 0 'for i in range\(12, 13, step=6\):  # tail' "$CACHET" lower "$pf"

# errors: file:line:col, non-zero exit
e1=$(kfile e1.cachet 'kernel e1' 'param M = 13' 'array X : f32[M] inout' 'for (i: M) { X[i] += 1 }' \
	'schedule { ii = split(i, 6, balanced=maybe) }')
expect "bad value" 2 'e1.cachet:5:38: error: expected true or false for .balanced.' "$CACHET" check "$e1"
e2=$(kfile e2.cachet 'kernel e2' 'param M = 13' 'array X : f32[M] inout' 'for (i: M) { X[i] += 1 }' \
	'schedule { ii = split(i, 6, balanced=true, balanced=true) }')
expect "twice" 2 'e2.cachet:5:44: error: option .balanced. is given twice' "$CACHET" check "$e2"
e3=$(kfile e3.cachet 'kernel e3' 'param M = 13' 'array X : f32[M] inout' 'for (i: M) { X[i] += 1 }' \
	'schedule { ii = split(i, 6, 7) }')
expect "not an option" 2 'e3.cachet:5:29: error: expected the option balanced=true or false' "$CACHET" check "$e3"
e4=$(kfile e4.cachet 'kernel e4' 'param M = 64' 'array X : f32[M] inout' 'for (i: M) { X[i] += 1 }' \
	'schedule { ii = split(i, 6, balanced=true) }' 'plan { c = cache(X, index=ii) }')
expect "with a cache" 2 'e4.cachet:5:29: error: balanced=true does not combine with cache' "$CACHET" lower "$e4"
# an index called balanced can still be tiled
e5=$(kfile e5.cachet 'kernel e5' 'param M = 13' 'array X : f32[M, M] inout' \
	'for (i: M, balanced: M) { X[i, balanced] += 1 }' 'schedule { ii, bb = tile(i=6, balanced=4) }')
expect "index called balanced" 0 'for balanced in range\(0, 12, step=4\)' "$CACHET" lower "$e5"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
