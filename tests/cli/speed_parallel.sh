#!/bin/sh
# speed_parallel.sh: parallel loops whose main and tail versions run as one parallel loop give the interpreter's result on 1 to 4 threads.
. tests/cli/lib/expect.sh

# kernel file, its -D values: main and tail versions of the parallel index
set -- \
	"examples/dgemm.cachet|-D M=37 -D N=1100 -D K=29" \
	"examples/sgemm.cachet|-D M=9 -D N=600 -D K=300" \
	"examples/sgemm.cachet|-D M=20 -D N=100 -D K=7" \
	"examples/two_index_fast.cachet|-D V=300 -D N=270" \
	"tests/plans/verbs_collapse_tail.cachet|-D N=61" \
	"examples/stencil5_fast.cachet|-D N=37 -D M=45"
for row in "$@"; do
	f=${row%%|*}
	defs=${row#*|}
	for t in 1 2 3 4; do
		# shellcheck disable=SC2086
		expect "$f $defs --threads $t" 0 '"verified": true' "$CACHET" run "$f" $defs --threads "$t" --json
	done
done

# the merged loop is what runs: one directive over the main and the tail block
# shellcheck disable=SC2046
expect "dgemm N=1100: one parallel loop over main and tail blocks of j" 0 \
	'parallel over the blocks of i and j, main and tail versions together' \
	"$CACHET" emit examples/dgemm.cachet -D M=37 -D N=1100 -D K=29
expect "dgemm N=1100: three blocks on up to three threads" 0 \
	'num_threads\(ct_team\(ct_nt, 0, 1 \* 3\)\)' \
	"$CACHET" emit examples/dgemm.cachet -D M=37 -D N=1100 -D K=29

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
