#!/bin/sh
# fuzz_quick.sh: the fixed-seed quick pass of the differential fuzzer (docs/FUZZ.md): 3000 random
# kernels (seeds 1..3000) checked in the interpreter, every 15th accepted one also natively on 1 and
# 2 threads; every refusal must carry file:line:col, every accepted kernel must verify. One line per
# failing seed ("FAIL seed S: CLASS (ENGINE): message"), then "N passed, M failed" (one per kernel).
# These are the classic generator's kernels (--families classic: the templates before issue 34); the
# extended families have their own pass, tests/cli/fuzz_families.sh.
# Reproduce and minimize one seed: build/fuzz/difffuzz --families classic --seed S --count 1 --engines interp,native --out DIR
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
"$FUZZ" --families classic --seed 1 --count ${FUZZ_QUICK_COUNT:-3000} --engines $engines --native-every 15 --no-minimize --timeout 60
