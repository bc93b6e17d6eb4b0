#!/bin/sh
# vreduce.sh: vectorize of a loop that carries a reduction (src/gen/vreduce.c, docs/PLANS.md
# section 17): the host C sums it in private accumulators (its comment, ct_vr0), and the native
# run verifies against the interpreter for trip counts around the accumulators' width
# (1 .. 1001, a runtime length) and vector widths 16, 32 and 64 bytes, checked code too; an
# integer sum is exact; plan(strict=true) refuses a float sum and accepts an integer one; the sums
# of several rows jammed into one vector loop (an unrolled loop inside it), rows not a multiple of
# the unrolled loop's trip count.
# Prints "N passed, M failed".
BUILD=${CACHET_BUILD:-build}
CACHET=${CACHET:-$BUILD/cachet}
pass=0
fail=0
check() {
	if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=tests/plans/vreduce_dot.cachet
"$CACHET" emit "$f" --vector-bytes 64 >"$tmp/dot.c"
check $? "emit $f"
grep -q 'vectorize(j): 1 reduction, each summed in [0-9]* partial sums ([0-9]* x 16 lanes)' "$tmp/dot.c" &&
	grep -q 'S\[0\] += ct_vr0\[0\];' "$tmp/dot.c"
check $? "the dot product sums in f32 accumulators of 16 lanes and adds the sum to S[0]"
"$CACHET" emit "$f" --vector-bytes 16 | grep -q 'each summed in [0-9]* partial sums ([0-9]* x 4 lanes)'
check $? "--vector-bytes 16: 4 lanes"
for vb in 16 32 64; do
	for n in 1 2 7 15 16 17 31 33 64 100 1001; do
		"$CACHET" run "$f" -D L=$n --vector-bytes $vb >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
		check $? "run L=$n --vector-bytes $vb"
	done
done
for n in 1 33; do
	"$CACHET" run "$f" -D L=$n --checked >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
	check $? "run L=$n --checked"
done
# an i32 sum that wraps: exact whatever the order
cat >"$tmp/isum.cachet" <<'EOC'
kernel isum
param L : runtime
array X : i32[L] input
array S : i32[1] inout
for (j: L) {
  S[0] += X[j] * 65537
}
plan(target=host, strict=true) {
  vectorize(j)
}
EOC
"$CACHET" run "$tmp/isum.cachet" -D L=1003 --json >"$tmp/out" 2>&1 && grep -q '"verified": true' "$tmp/out" &&
	grep -q '"max_rel_error": 0[,}]' "$tmp/out"
check $? "an integer sum under strict=true: accepted, exact"
sed 's/i32/f32/g' "$tmp/isum.cachet" >"$tmp/fsum.cachet"
"$CACHET" check "$tmp/fsum.cachet" -D L=10 >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "the plan is strict=true" "$tmp/out"
check $? "a float sum under strict=true: refused (exit $rc)"
# unroll and jam: the sums over j of 4 rows in one vector loop (gesummv), each row its own
# accumulators; rows and columns around the split and the accumulators' width, as compile-time
# sizes (the tail of the split: its own unrolled copies) and as runtime sizes (the tail of the
# split is not unrolled: the scalar loops)
cat >"$tmp/jam.cachet" <<'EOC'
kernel jam
param N = 13, M = 37
array A : f64[N, M] input
array B : f64[N, M] input
array x : f64[M] input
array y : f64[N] inout
for (i: N, j: M) {
  y[i] += 1.5 * A[i, j] * x[j] + 1.2 * B[i, j] * x[j]
}
schedule {
  iu = split(i, 4)
  reorder(i, j, iu)
}
plan {
  unroll(iu)
  vectorize(j)
}
EOC
"$CACHET" emit "$tmp/jam.cachet" --vector-bytes 32 >"$tmp/jam.c"
check $? "emit the jammed sums"
awk '/vectorize\(j\): 4 reductions \(the copies of unrolled loops jammed\)/ { v = 1 } v && /#pragma omp simd/ { s++ } v && /unrolled: iu in 0 .. 4/ { u++ }
	/ct_vr3\[j - ct_vb\] \+=/ { r++ } /y\[i \+ iu\] \+= ct_vr3\[0\];/ { a++ }
	/vectorize\(j\): 1 reduction / { t++ } END { exit !(v && u == 2 && r == 2 && a == 1 && t == 1) }' "$tmp/jam.c"
check $? "4 rows summed in one vector loop (its blocks and its tail), 4 accumulators, added after it; the 1-row tail of i"
for n in 1 3 4 5 8 13; do
	for m in 1 4 9 33; do
		"$CACHET" run "$tmp/jam.cachet" -D N=$n -D M=$m >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
		check $? "jammed sums: run N=$n M=$m"
	done
done
sed 's/^param N = 13, M = 37/param N : runtime\nparam M : runtime/' "$tmp/jam.cachet" >"$tmp/jamr.cachet"
"$CACHET" emit "$tmp/jamr.cachet" | grep -q 'a loop inside is not unrolled: the scalar loops'
check $? "runtime rows: the split's tail runs as the scalar loops"
for n in 3 9; do
	"$CACHET" run "$tmp/jamr.cachet" -D N=$n -D M=19 --checked >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
	check $? "jammed sums, runtime sizes: run N=$n M=19 --checked"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
