#!/bin/sh
# parallel_grid.sh: parallelize(i, j) whose loops have main and tail versions runs the pairs of blocks of every version as one parallel loop and equals the interpreter on 1 to 4 threads, with every mix of versions.
. tests/cli/lib/expect.sh

f=tests/plans/verbs_grid.cachet
# rows: main only (32 = 4 x 8), main and tail (37), tail only (5 < 8);
# columns likewise (32 = 2 x 16, 45, 13 < 16)
for m in 32 37 5; do
	for n in 32 45 13; do
		for t in 1 2 3 4; do
			expect "$f M=$m N=$n --threads $t" 0 '"verified": true' \
				"$CACHET" run "$f" -D M="$m" -D N="$n" -D K=7 --threads "$t" --json
		done
	done
done
# runtime-sized loops: trip counts of the versions computed at run time
for t in 1 2 3; do
	expect "runtime sizes --threads $t" 0 '"verified": true' \
		"$CACHET" run tests/plans/verbs_grid_runtime.cachet -D M=37 -D N=45 --threads "$t" --json
done
# the gemm examples with N <= 512 and M >= 256 cut the rows in two and run
# the halves on two threads (an odd M: a main and a tail half); fewer rows,
# or more than 512 columns, keep one block of rows
for ex in sgemm dgemm; do
	for d in "-D M=257 -D N=33 -D K=20" "-D M=256 -D N=40 -D K=300" "-D M=65 -D N=33 -D K=30" "-D M=9 -D N=1100 -D K=7"; do
		for t in 1 2 3; do
			# shellcheck disable=SC2086
			expect "$ex $d --threads $t" 0 '"verified": true' \
				"$CACHET" run examples/$ex.cachet $d --threads "$t" --json
		done
	done
done

# what is emitted: one directive over 5 x 3 pairs (4 main + 1 tail blocks of
# i, 2 main + 1 tail of j), the versions chosen from the pair's number
"$CACHET" emit "$f" >"$tmp/grid" 2>&1
n=$(grep -c 'parallel over the blocks of i and j, main and tail versions together' "$tmp/grid")
if [ "$n" = 1 ]; then ok; else bad "one merged loop over i and j, found $n"; fi
if grep -q 'num_threads(ct_team(ct_nt, 0, 5 \* 3))' "$tmp/grid"; then ok; else bad "5 x 3 pairs"; fi
if grep -q 'const int64_t i = 32 + (ct_pg_a - (0 + 4)) \* 8;' "$tmp/grid"; then ok; else bad "tail of i from the pair number"; fi
# sgemm 2048 x 32 x 2048: two halves of rows, one block of columns (no tails:
# plain OpenMP collapse); 2047 rows: a main and a tail half, merged here
expect "sgemm N=32: two row halves in parallel" 0 'collapse\(2\) schedule\(static\) num_threads\(ct_team\(ct_nt, 0, 2\)\)' \
	"$CACHET" emit examples/sgemm.cachet -D M=2048 -D N=32 -D K=2048
expect "sgemm M=2047 N=32: main and tail halves in parallel" 0 'num_threads\(ct_team\(ct_nt, 0, 2 \* 1\)\)' \
	"$CACHET" emit examples/sgemm.cachet -D M=2047 -D N=32 -D K=2048
# sgemm 2048^3: one block of rows, four of columns, plain OpenMP collapse
expect "sgemm 2048: the four column blocks" 0 'collapse\(2\) schedule\(static\) num_threads\(ct_team\(ct_nt, 0, 4\)\)' \
	"$CACHET" emit examples/sgemm.cachet -D M=2048 -D N=2048 -D K=2048

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
