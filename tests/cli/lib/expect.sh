# expect.sh: what the table-driven CLI test scripts share (sourced, not run): the binary, pass
# and fail counters (ok, bad), a scratch folder, expect and kfile. The script prints the counts itself.
CACHET=${CACHET:-build/cachet}
pass=0
fail=0
skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A script that sets verbose=1 before sourcing this prints one line per check on
# stdout, "ok   WHAT" or "FAIL WHAT"; a failure always goes to stderr.
ok() {
	pass=$((pass + 1))
	if [ "${verbose:-0}" = 1 ]; then echo "ok   $*"; fi
}
bad() {
	fail=$((fail + 1))
	if [ "${verbose:-0}" = 1 ]; then echo "FAIL $*"; fi
	echo "FAIL: $*" >&2
}

# A check that cannot run on this machine (no GPU, no nvcc): counted as skipped,
# never as passed; the reason is printed. A script that uses it ends with
# `counts` ("N passed, M failed, K skipped").
skip() {
	skipped=$((skipped + 1))
	echo "skip $*"
}
counts() {
	if [ "$skipped" != 0 ]; then echo "$pass passed, $fail failed, $skipped skipped"; else echo "$pass passed, $fail failed"; fi
}

# expect NAME EXIT_CODE PATTERN_IN_OUTPUT COMMAND...
expect() {
	name=$1 want=$2 pat=$3
	shift 3
	"$@" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	# under the sanitizers, LeakSanitizer's own tracer now and then crashes while it stops the
	# threads of a process that has many (PoCL's workers, on a loaded machine): its "fatal
	# error" is not a leak report, so the command runs once more (a leak still fails)
	if [ "$rc" != "$want" ] && [ "${SAN:-}" = 1 ] && grep -q "LeakSanitizer has encountered a fatal error" "$tmp/e"; then
		echo "note $name: LeakSanitizer's tracer crashed (not a leak report); run again" >&2
		"$@" >"$tmp/o" 2>"$tmp/e"
		rc=$?
	fi
	if [ "$rc" != "$want" ]; then
		bad "$name: exit $rc, want $want"
		sed 's/^/    /' "$tmp/e" | head -5 >&2
		return
	fi
	if [ -n "$pat" ] && ! grep -qE -- "$pat" "$tmp/o" "$tmp/e"; then
		bad "$name: output lacks /$pat/"
		head -5 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
		return
	fi
	ok
}


# a kernel file with one line of text per argument
kfile() {
	f=$tmp/$1
	shift
	: >"$f"
	for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
	echo "$f"
}
