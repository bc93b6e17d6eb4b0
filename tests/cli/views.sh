#!/bin/sh
# views.sh: the CLI side of issue "views": --branching, SPMD runs on 1-4 threads, strided arrays.
. "$(dirname "$0")/lib/expect.sh"

ex=examples/stencil_spmd.cachet
for t in 1 2 3 4; do
	expect "spmd threads $t" 0 "verified" "$CACHET" run "$ex" --threads "$t"
	expect "spmd threads $t branching" 0 "verified" "$CACHET" run "$ex" --threads "$t" --branching
done
expect "spmd interp" 0 "verified" "$CACHET" run "$ex" --engine interp
expect "spmd emit: one parallel region" 0 "ct_spmd_blocks\(ct_thread_num\(\), ct_num_threads\(\), 2," "$CACHET" emit "$ex"

# the halo copy: tested per element only in the branching form
"$CACHET" emit examples/plan_halo.cachet >"$tmp/bf.c" 2>&1
"$CACHET" emit examples/plan_halo.cachet --branching >"$tmp/br.c" 2>&1
if grep -q "if (x + c0 - 1 >= 0" "$tmp/br.c" && ! grep -q "if (x + c0" "$tmp/bf.c" &&
	grep -q "interior: no tests" "$tmp/bf.c" && ! grep -q "interior: no tests" "$tmp/br.c"; then
	ok
else
	bad "emit --branching: the branching and branch-free forms are not as expected"
fi

# strided arrays: strides are arguments; a dense run verifies
f=$(kfile strided.cachet "kernel strided" "param N = 12" "array A : f64[N, N] input strided" \
	"array B : f64[N, N] output" "for (i: N, j: N) {" "  B[i, j] = A[j, i] * 2" "}")
expect "strided emit" 0 "int64_t ct_vo0, int64_t ct_vs0_0, int64_t ct_vs0_1" "$CACHET" emit "$f"
expect "strided run" 0 "verified" "$CACHET" run "$f"
expect "strided interp" 0 "verified" "$CACHET" run "$f" --engine interp

# three SPMD indices are refused with a position
g=$(kfile spmd3.cachet "kernel s3" "param N = 8" "array A : f32[N, N, N] input" "array B : f32[N, N, N] output" \
	"for (i: N, j: N, k: N) {" "  B[i, j, k] = A[i, j, k]" "}" "plan {" "  parallelize(i, j, k, spmd=true)" "}")
expect "spmd three indices" 2 "spmd3.cachet:9:3: error: parallelize\(\.\.\., spmd=true\) takes one or two indices" \
	"$CACHET" check "$g"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
