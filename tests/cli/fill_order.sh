#!/bin/sh
# fill_order.sh: the versions of a multicache's trigger loop share one buffer; a cache's fill (copy_in, zero_fill) walks the buffer in its layout order, so that its stores go in sequence and only the loads stride where the layout transposes; the write-back walks the array in its own order; results equal the interpreter's with tails on 1 and 2 threads.
. tests/cli/lib/expect.sh

# plan_layout: BB = B[k.., j..] last_major: the loop over c1 (B's columns,
# BB's major dimension) outside the loop over c0, and the store BB[c0 + c1 * 16]
"$CACHET" emit examples/plan_layout.cachet >"$tmp/emit" 2>&1
if grep -A2 'for (int64_t c1 = 0; c1 < 32; c1++)' "$tmp/emit" | grep -q 'for (int64_t c0 = 0; c0 < 16; c0++)'; then
	ok
else
	bad "plan_layout: fill loop over c1 outside c0"
fi
if grep -A1 'for (int64_t c0 = 0; c0 < 16; c0++)' "$tmp/emit" | grep -q 'BB\[c0 + c1 \* 16\] = B\['; then ok; else bad "plan_layout: fill stores BB in sequence"; fi

# layout_list: XX layout (1, 0, 2) filled c1, c0, c2; YY last_major zero-filled
# c2, c1, c0 and written back to Y in Y's order c0, c1, c2
"$CACHET" emit tests/plans/layout_list.cachet >"$tmp/emit2" 2>&1
order=$(grep -o 'for (int64_t c[0-9]' "$tmp/emit2" | sed 's/for (int64_t //' | tr '\n' ' ')
if [ "$order" = "c1 c0 c2 c2 c1 c0 c0 c1 c2 " ]; then ok; else bad "layout_list: copy loop order '$order'"; fi

# gemm's packed A (k-major AA): the loop over c0 (rows of A) innermost
"$CACHET" emit examples/dgemm.cachet -D M=300 -D N=20 -D K=270 >"$tmp/emit3" 2>&1
if grep -A1 'for (int64_t c0 = 0; c0 < 8; c0++)' "$tmp/emit3" | grep -qE 'AA\[(.* \+ )?c0 \+ c1 \* 8\] = A\['; then ok; else bad "dgemm: AA stored in sequence"; fi

# versions of a multicache's trigger loop share one buffer when the block does
# not move with it: dgemm at M = 257 (rows 128 + 1 per half): one BB per
# parallel version (the blocks of i), not one more for the tail of ih
"$CACHET" emit examples/dgemm.cachet -D M=257 -D N=256 -D K=256 >"$tmp/emit4" 2>&1
n=$(grep -c 'cache BB of B' "$tmp/emit4")
if [ "$n" = 2 ]; then ok; else bad "dgemm M=257: two BB regions, found $n"; fi
if grep -q 'BB_3' "$tmp/emit4"; then bad "dgemm M=257: no third BB"; else ok; fi
# dgemm at N = 257: the packed row of A (trigger jj) serves the main and the
# tail version of jj: one AA per parallel version, not two
"$CACHET" emit examples/dgemm.cachet -D M=257 -D N=257 -D K=256 >"$tmp/emit6" 2>&1
n=$(grep -c 'cache AA of A: AA' "$tmp/emit6")
if [ "$n" = 2 ]; then ok; else bad "dgemm N=257: two AA regions, found $n"; fi
# two_index_fast: the tails of qq and bb use C1P and TP, no second copies
"$CACHET" emit examples/two_index_fast.cachet >"$tmp/emit5" 2>&1
if grep -qE 'C1P_2|TP_2' "$tmp/emit5"; then bad "two_index_fast: one C1P and one TP"; else ok; fi

# results with tails (rows, columns, the sum, the multicache slots), 1 and 2 threads
set -- \
	"examples/plan_layout.cachet|-D M=37 -D N=45 -D K=29" \
	"tests/plans/layout_list.cachet|-D P=5 -D Q=7 -D R=13" \
	"examples/dgemm.cachet|-D M=300 -D N=20 -D K=270" \
	"examples/dgemm.cachet|-D M=261 -D N=600 -D K=33" \
	"examples/dgemm.cachet|-D M=257 -D N=256 -D K=256" \
	"examples/dgemm.cachet|-D M=257 -D N=257 -D K=257" \
	"examples/dgemm.cachet|-D M=1000 -D N=40 -D K=300" \
	"examples/sgemm.cachet|-D M=300 -D N=40 -D K=37" \
	"examples/sgemm.cachet|-D M=45 -D N=530 -D K=300" \
	"examples/two_index_fast.cachet|-D V=60 -D N=53"
for row in "$@"; do
	f=${row%%|*}
	defs=${row#*|}
	for t in 1 2; do
		# shellcheck disable=SC2086
		expect "$f $defs --threads $t" 0 '"verified": true' "$CACHET" run "$f" $defs --threads "$t" --json
	done
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
