#!/bin/sh
# par_reduce.sh: parallelize of a loop that carries only `+=` / `-=` sums (a parallel reduction,
# src/gen/preduce.c, docs/LANGUAGE.md "Loop verbs"): the host C gives each thread a zeroed copy
# of the summed array and adds the copies after the loop; native runs on 1, 2 and 3 threads
# verify against the interpreter (float sums within the run's tolerance, integer sums exact,
# runtime sizes, checked code); the same file run twice on 2 threads gives the same result;
# plan(strict=true) refuses a float sum and accepts an integer one. Prints "N passed, M failed".
BUILD=${CACHET_BUILD:-build}
CACHET=${CACHET:-$BUILD/cachet}
pass=0
fail=0
check() {
	if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=examples/colsum_parallel.cachet
"$CACHET" emit "$f" >"$tmp/cs.c"
check $? "emit $f"
grep -q 'parallel reduction over i into x2' "$tmp/cs.c" &&
	grep -q 'double \*restrict x2 = ct_rs_[0-9]* + ct_rn_[0-9]* \* (size_t)ct_thread_num();' "$tmp/cs.c" &&
	grep -q 'x2\[ct_re\] += ct_rc\[ct_re\];' "$tmp/cs.c"
check $? "the rows sum into per-thread copies of x2, added to x2 after the loop"
"$CACHET" lower "$f" | grep -q '# parallel reduce(x2)$' &&
	"$CACHET" lower "$f" --json | grep -q '"reduce": \["x2"\]'
check $? "lower shows the reduction on the parallel loop (text and JSON)"
for t in 1 2 3; do
	for d in "-D N=1 -D M=1" "-D N=2 -D M=5" "-D N=37 -D M=23" "-D N=300 -D M=64"; do
		# shellcheck disable=SC2086
		"$CACHET" run "$f" $d --threads $t >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
		check $? "run $d --threads $t"
	done
done
"$CACHET" run "$f" -D N=37 -D M=23 --threads 2 --checked >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
check $? "run --threads 2 --checked"
for p in tests/plans/par_reduce_colsum.cachet tests/plans/par_reduce_dot.cachet tests/plans/par_reduce_int.cachet; do
	args=$(sed -n 's/^# run-with://p' "$p")
	for t in 1 2; do
		# shellcheck disable=SC2086
		"$CACHET" run "$p" $args --threads $t --json >"$tmp/out" 2>&1 && grep -q '"verified": true' "$tmp/out"
		check $? "run $p --threads $t"
	done
done
# integer sums are exact on any thread count
"$CACHET" run tests/plans/par_reduce_int.cachet -D N=23 -D K=7 -D M=33 --threads 2 --json >"$tmp/out" 2>&1 &&
	grep -q '"max_rel_error": 0[,}]' "$tmp/out"
check $? "integer sums on 2 threads: exact"
# the same thread count, the same order of the float sums: two runs agree to the bit
"$CACHET" run "$f" -D N=301 -D M=77 --threads 2 --json >"$tmp/a" 2>&1
"$CACHET" run "$f" -D N=301 -D M=77 --threads 2 --json >"$tmp/b" 2>&1
ea=$(grep -o '"max_rel_error": [^,}]*' "$tmp/a")
eb=$(grep -o '"max_rel_error": [^,}]*' "$tmp/b")
[ -n "$ea" ] && [ "$ea" = "$eb" ]
check $? "two runs on 2 threads: the same error against the interpreter ($ea)"
# cachet auto on 2 threads: the matrix-vector passes fused along the rows of one matrix run on
# threads, the fused row loop's column sums as a parallel reduction (docs/AUTO.md)
# (planned at the files' sizes, where the rows fit a nearer cache than the matrix; run smaller)
for k in mvt bicg atax; do
	small="-D N=43"
	[ "$k" = mvt ] || small="-D N=43 -D M=37"
	"$CACHET" auto bench/poly/kernels/$k.cachet --threads 2 >"$tmp/$k.cachet" 2>"$tmp/err" &&
		grep -q '(a parallel reduction)' "$tmp/$k.cachet" &&
		# shellcheck disable=SC2086
		"$CACHET" run "$tmp/$k.cachet" $small --threads 2 >"$tmp/out" 2>&1 && grep -q 'verified against' "$tmp/out"
	check $? "auto $k --threads 2: fused rows on threads with a parallel reduction, verified"
done
sed 's/^plan {/plan(strict=true) {/' "$f" >"$tmp/strict.cachet"
"$CACHET" check "$tmp/strict.cachet" >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "carries a sum into 'x2', which parallel threads re-associate; the plan is strict=true" "$tmp/out"
check $? "a float sum under strict=true: refused (exit $rc)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
