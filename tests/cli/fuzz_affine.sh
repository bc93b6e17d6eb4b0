#!/bin/sh
# fuzz_affine.sh: the fixed-seed quick pass of the differential fuzzer's affine family (issue #31,
# docs/FUZZ.md): triangular, banded, tetrahedral and in-place triangular nests with max/min bounds;
# seeds 2000001..2000400 in the interpreter, every 4th accepted kernel also natively on 1 and 2
# threads (checked), samples through a callable, a package, Python and `cachet auto`. One line per failing seed,
# then "N passed, M failed" (one per kernel).
# Reproduce one seed: build/fuzz/difffuzz --families affine --seed S --count 1 --engines interp,native --out DIR
BUILD=${CACHET_BUILD:-build}
FUZZ=$BUILD/fuzz/difffuzz
if [ ! -x "$FUZZ" ]; then
	echo "FAIL $FUZZ is missing (make $FUZZ)"
	echo "0 passed, 1 failed"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
engines=interp
set -- ${CC:-cc}
command -v "$1" >/dev/null 2>&1 && engines=interp,native || echo "skip native runs: no C compiler ($1)"
entries=
if [ "$engines" = interp,native ]; then
	e=${FUZZ_ENTRIES:-run:4,callable:8,package:50,python:50,auto:4}
	[ -d "$BUILD/python/cachet" ] && /usr/bin/python3 -c "import numpy" 2>/dev/null ||
		e=$(echo "$e" | sed 's/,*python:[0-9]*//')
	entries="--entries $e --checked 1"
	[ "${SAN:-}" = 1 ] && entries="$entries --python $(pwd)/tests/cli/lib/pysan"
fi
"$FUZZ" --families affine --edges 1 --seed 2000001 --count ${FUZZ_AFFINE_COUNT:-400} \
	--engines $engines --native-every 4 $entries --no-minimize --timeout 60 >"$tmp/out" 2>&1
rc=$?
grep -v '^\[' "$tmp/out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -n 1)
pass=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
fail=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
[ -z "$line" ] && pass=0 fail=1
[ "$rc" != 0 ] && [ "$fail" = 0 ] && fail=1
# the family must reach compiled code: a pass that verified no native run proves nothing
if [ "$engines" = interp,native ] && ! grep -qE '^verified: interp [0-9]+, native [1-9]' "$tmp/out"; then
	echo "FAIL no affine kernel ran natively"
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
