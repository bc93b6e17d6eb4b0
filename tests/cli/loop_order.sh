#!/bin/sh
# loop_order.sh: one loop order for every stage (src/ir/order.c; docs/PLANS.md, section 1).
#
# Table 1, the order itself: a schedule of `for (i: M, j: N, k: K)` and the
# loops `cachet lower` prints, outermost first.
#
# Table 2, equivalent spellings: a schedule and two plans that name the same
# places (index= for level=, trigger_index= for trigger_level=). Both must
# give the same exit code of `check`; when accepted, the same "caches" of
# `lower --json` and a verified interpreter run; when refused, the same
# message (positions differ with the spelling), and `lower` must refuse
# with the message `check` gave (a plan that checks must run).
#
# One line per case: "ok ..." or "FAIL ..."; the last line is "N passed, M failed".
verbose=1
. "$(dirname "$0")/lib/expect.sh"

# kernel FILE SCHEDULE PLAN: a matmul with the schedule and plan items
# (items separated by ';' in both)
kernel() {
	{
		echo "kernel mm"
		echo "param M = 16, N = 32, K = 12"
		echo "array A : f32[M, K] input"
		echo "array B : f32[K, N] input"
		echo "array C : f32[M, N] inout"
		echo "for (i: M, j: N, k: K) {"
		echo "  C[i, j] += A[i, k] * B[k, j]"
		echo "}"
		echo "schedule {"
		echo "$2" | tr ';' '\n'
		echo "}"
		if [ -n "$3" ]; then
			echo "plan {"
			echo "$3" | tr ';' '\n'
			echo "}"
		fi
	} >"$1"
}

# The message of the first error on stdin, without file and position.
message() {
	grep -m1 ': error: ' | sed 's/^.*: error: //'
}

# The "caches" list of `lower --json` on stdin.
caches() {
	tr -d '\n' | sed 's/^.*"caches": *//'
}

# ---------------------------------------------------------------- table 1
# SCHEDULE | LOOPS
while IFS='|' read -r sched want; do
	[ -z "$sched" ] && continue
	kernel "$tmp/o.cachet" "$sched" ""
	got=$("$CACHET" lower "$tmp/o.cachet" 2>&1 | sed -n 's/^ *for \([a-z]*\) in .*/\1/p' | awk '!seen[$0]++' | tr '\n' ' ' |
		sed 's/ $//')
	want=$(echo "$want" | sed 's/^ *//; s/ *$//')
	if [ "$got" = "$want" ]; then
		ok "order of [$(echo "$sched" | sed 's/ *$//')]: $got"
	else
		bad "order of [$sched]: got '$got', want '$want'"
	fi
done <<'EOF'
ii, jj = tile(i=4, j=8)                                 | i ii j jj k
ii, jj, kk = tile(i=4, j=8, k=4)                        | i ii j jj k kk
kk = split(k, 4); kkk = split(kk, 2); ii = split(i, 8)  | i ii j k kk kkk
ii, jj = tile(i=4, j=8); reorder(i, j, k, ii, jj)       | i j k ii jj
reorder(j, i, k); jj = split(j, 8)                      | j jj i k
reorder(k, j, i); ii = split(i, 4)                      | k j i ii
reorder(j, i, k); ii = split(i, 4); reorder(i, j, k, ii) | i j k ii
EOF

# ---------------------------------------------------------------- table 2
# SCHEDULE | PLAN A | PLAN B
while IFS='|' read -r sched pa pb; do
	[ -z "$sched" ] && continue
	kernel "$tmp/a.cachet" "$sched" "$pa"
	kernel "$tmp/b.cachet" "$sched" "$pb"
	"$CACHET" check "$tmp/a.cachet" >/dev/null 2>"$tmp/ea"
	ra=$?
	"$CACHET" check "$tmp/b.cachet" >/dev/null 2>"$tmp/eb"
	rb=$?
	case_name=$(echo "[$sched] [$pa] vs [$pb]" | sed 's/ *\]/]/g; s/\[ */[/g')
	if [ "$ra" != "$rb" ]; then
		bad "$case_name: check exit $ra vs $rb"
		head -3 "$tmp/ea" "$tmp/eb" | sed 's/^/    /' >&2
		continue
	fi
	if [ "$ra" = 0 ]; then
		"$CACHET" lower --json "$tmp/a.cachet" 2>&1 | caches >"$tmp/ca"
		"$CACHET" lower --json "$tmp/b.cachet" 2>&1 | caches >"$tmp/cb"
		if ! cmp -s "$tmp/ca" "$tmp/cb"; then
			bad "$case_name: different caches"
			cat "$tmp/ca" "$tmp/cb" | sed 's/^/    /' >&2
		elif ! "$CACHET" run "$tmp/a.cachet" --engine interp >"$tmp/r" 2>&1 || ! grep -q verified "$tmp/r"; then
			bad "$case_name: accepted but the interpreter run fails"
			head -5 "$tmp/r" | sed 's/^/    /' >&2
		else
			ok "$case_name: same caches"
		fi
	else
		ma=$(message <"$tmp/ea")
		mb=$(message <"$tmp/eb")
		ml=$("$CACHET" lower "$tmp/b.cachet" 2>&1 | message)
		if [ "$ra" != 2 ] || [ -z "$ma" ]; then
			bad "$case_name: check exit $ra, no error message"
		elif [ "$ma" != "$mb" ]; then
			bad "$case_name: different errors: '$ma' vs '$mb'"
		elif [ "$ml" != "$mb" ]; then
			bad "$case_name: lower says '$ml', check '$mb'"
		elif ! grep -q "a.cachet:[0-9]*:[0-9]*: error: " "$tmp/ea"; then
			bad "$case_name: the error has no file:line:col"
		else
			ok "$case_name: same error: $ma"
		fi
	fi
done <<'EOF'
ii, jj = tile(i=4, j=8) | AA = cache(A, index=j, trigger_index=ii) | AA = cache(A, level=3, trigger_level=4)
ii, jj = tile(i=4, j=8) | AA = cache(A, index=j, trigger_index=ii) | AA = cache(A, index=j, trigger_level=4)
ii, jj = tile(i=4, j=8) | AA = cache(A, level=3, trigger_index=ii) | AA = cache(A, level=3, trigger_level=4)
ii, jj = tile(i=4, j=8) | AA = cache(A, index=ii, trigger_index=j) | AA = cache(A, level=4, trigger_level=3)
ii, jj = tile(i=4, j=8) | AA = cache(A, index=ii, trigger_index=j) | AA = cache(A, index=ii, trigger_level=3)
ii, jj = tile(i=4, j=8) | AA = cache(A, index=jj) | AA = cache(A, level=2)
ii, jj = tile(i=4, j=8) | BB = cache(B, index=i) | BB = cache(B, level=5)
ii, jj = tile(i=4, j=8); reorder(i, j, k, ii, jj) | AA = cache(A, index=ii, trigger_index=j) | AA = cache(A, level=2, trigger_level=4)
ii, jj = tile(i=4, j=8); reorder(i, j, k, ii, jj) | AA = cache(A, index=j, trigger_index=ii) | AA = cache(A, level=4, trigger_level=2)
reorder(j, i, k); jj = split(j, 8) | AA = cache(A, index=i) | AA = cache(A, level=2)
reorder(j, i, k); jj = split(j, 8) | BB = cache(B, index=jj, trigger_index=j) | BB = cache(B, level=3, trigger_level=4)
kk = split(k, 4); kkk = split(kk, 2) | AA = cache(A, index=kk, trigger_index=k) | AA = cache(A, level=2, trigger_level=3)
kk = split(k, 4); kkk = split(kk, 2) | AA = cache(A, index=kk, trigger_index=kkk) | AA = cache(A, level=2, trigger_level=1)
ii, jj, kk = tile(i=4, j=8, k=4) | AA = cache(A, index=j); AAA = cache(AA, index=jj) | AA = cache(A, level=4); AAA = cache(AA, level=3)
ii, jj, kk = tile(i=4, j=8, k=4) | AA = cache(A, index=jj); AAA = cache(AA, index=j) | AA = cache(A, level=3); AAA = cache(AA, level=4)
ii, jj, kk = tile(i=4, j=8, k=4) | AA = cache(A, index=j); AAA = cache(AA, level=2, trigger_index=jj) | AA = cache(A, level=4); AAA = cache(AA, level=2, trigger_level=3)
EOF

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
