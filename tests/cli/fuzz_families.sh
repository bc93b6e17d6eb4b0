#!/bin/sh
# fuzz_families.sh: the fixed-seed quick pass of the differential fuzzer's extended families
# (docs/FUZZ.md, issue 34): wavefront recurrences, accumulators with non-associative updates,
# in-place sweeps, imperfect multi-statement nests, tune params, strided arrays; seeds
# 1000001..1000800 in the interpreter, every 20th accepted kernel also natively on 1 and 2 threads.
# FUZZ_FAMILIES (default legal: no reorder of a band that carries a dependence, the only schedules
# today's checks get right), FUZZ_EDGES (default 0: no split sizes at the 64-bit edge, runtime params
# of 0 / -1 or double unrolls) and FUZZ_ENTRIES (default run:20; e.g. run:20,selector:10,callable:20)
# switch on more once the fixes land (docs/FUZZ.md, "Switching on"). One line per failing seed, then
# "N passed, M failed".
# Reproduce one seed: build/fuzz/difffuzz --families legal --seed S --count 1 --engines interp,native --out DIR
BUILD=${CACHET_BUILD:-build}
FUZZ=$BUILD/fuzz/difffuzz
if [ ! -x "$FUZZ" ]; then
	echo "FAIL $FUZZ is missing (make $FUZZ)"
	echo "0 passed, 1 failed"
	exit 1
fi
engines=interp
set -- ${CC:-cc}
command -v "$1" >/dev/null 2>&1 && engines=interp,native || echo "skip native runs: no C compiler ($1)"
entries=
[ "$engines" = interp,native ] && entries="--entries ${FUZZ_ENTRIES:-run:20}"
"$FUZZ" --families ${FUZZ_FAMILIES:-legal} --edges ${FUZZ_EDGES:-0} --seed 1000001 --count ${FUZZ_FAMILIES_COUNT:-800} --engines $engines \
	--native-every 20 $entries --no-minimize --timeout 60
