#!/bin/sh
# vreduce.sh: vectorize of a loop that carries a reduction (src/gen/vreduce.c, docs/PLANS.md
# section 17): the host C sums it in private accumulators (its comment, ct_vr0), and the native
# run verifies against the interpreter for trip counts around the accumulators' width
# (1 .. 1001, a runtime length) and vector widths 16, 32 and 64 bytes, checked code too; an
# integer sum is exact; plan(strict=true) refuses a float sum and accepts an integer one.
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
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
