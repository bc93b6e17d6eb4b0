#!/bin/sh
# poly_suite.sh: every kernel of the PolyBench-style suite (bench/poly/kernels) is accepted by
# `cachet check` at its default (PolyBench LARGE) sizes and at its small size (its "# small:"
# line), and runs natively and verifies against the interpreter at the small size; the suite
# holds at least 16 kernels, and a kernel whose result depends on its sweep order (seidel2d)
# stays in place (one array, no temp).
CACHET=${CACHET:-build/cachet}
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
n=0
for f in bench/poly/kernels/*.cachet; do
	n=$((n + 1))
	small=$(sed -n 's/^# small: //p' "$f")
	[ -n "$small" ] && ok || bad "$f has no '# small:' line"
	grep -q '^# Sizes: ' "$f" && ok || bad "$f has no '# Sizes:' line"
	if "$CACHET" check "$f" >/dev/null 2>&1; then ok; else bad "check $f (default sizes)"; fi
	if "$CACHET" check "$f" $small >/dev/null 2>&1; then ok; else bad "check $f $small"; fi
	out=$("$CACHET" run "$f" $small --json 2>&1)
	if echo "$out" | grep -q '"verified": true'; then ok; else bad "run $f $small: $out"; fi
	# the plain nest: no schedule and no plan (cachet auto chooses them)
	if grep -qE '^(schedule|plan)' "$f"; then bad "$f has a schedule or plan"; else ok; fi
done
[ "$n" -ge 16 ] && ok || bad "only $n kernels in bench/poly/kernels (at least 16)"
[ "$(grep -c '^array' bench/poly/kernels/seidel2d.cachet)" = 1 ] && ok || bad "seidel2d is not in place"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
