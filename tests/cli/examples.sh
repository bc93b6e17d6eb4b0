#!/bin/sh
# examples.sh: every example is accepted by `cachet check` and verified in the interpreter and natively (a CUDA example's native run counts as skipped where the CUDA engine finds no GPU).
CACHET=${CACHET:-build/cachet}
pass=0
fail=0
skipped=0
for f in examples/*.cachet; do
	defs=""
	# an example may name the -D values it needs to run in a line "# run-with: -D L=1000"
	line=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	[ -n "$line" ] && defs=$line
	if "$CACHET" check "$f" $defs >/dev/null 2>"${TMPDIR:-/tmp}/ex.err.$$"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: check $f" >&2
		cat "${TMPDIR:-/tmp}/ex.err.$$" >&2
	fi
	out=$("$CACHET" run "$f" $defs --engine interp --json 2>&1)
	if echo "$out" | grep -q '"verified": true'; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: run --engine interp $f: $out" >&2
	fi
	out=$("$CACHET" run "$f" $defs --json 2>&1)
	if echo "$out" | grep -q '"verified": true'; then
		pass=$((pass + 1))
	elif grep -q 'plan(target=cuda)' "$f" && echo "$out" | grep -qi 'cuda'; then
		# the CUDA engine without a GPU or driver here: skipped, with its reason
		skipped=$((skipped + 1))
		echo "SKIP: run (native) $f: $(echo "$out" | head -1)"
	else
		fail=$((fail + 1))
		echo "FAIL: run (native) $f: $out" >&2
	fi
done
rm -f "${TMPDIR:-/tmp}/ex.err.$$"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" = 0 ]
