#!/bin/sh
# run.sh: run every test program and CLI test script; print "N passed, M failed".
BUILD=${1:-build}
export CACHET=$BUILD/cachet
export CACHET_BUILD=$BUILD
pass=0
fail=0
skip=0
failed_names=""
skipped_names=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CACHET_CACHE_DIR="$tmp/cache"
# under the sanitizers, leaks inside PoCL/LLVM (third-party frames only) are suppressed
if [ "${SAN:-}" = 1 ] && [ -z "${LSAN_OPTIONS:-}" ]; then
	export LSAN_OPTIONS="suppressions=$(pwd)/tests/sanitize/lsan-thirdparty.supp:print_suppressions=0"
fi
run_one() {
	name=$1
	shift
	start=$(date +%s)
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -n 1)
	k=0
	if [ -z "$line" ]; then
		p=0
		f=1
	else
		p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
		f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
		k=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
		k=${k:-0}
		[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + ${k:-0}))
	[ "${k:-0}" != 0 ] && skipped_names="$skipped_names $name($k)"
	end=$(date +%s)
	if [ "$f" != 0 ]; then
		failed_names="$failed_names $name"
		echo "FAIL $name ($p passed, $f failed, exit $rc, $((end - start))s)"
		tail -n 40 "$tmp/err" | sed 's/^/    /'
		tail -n 10 "$tmp/out" | sed 's/^/    /'
	else
		echo "ok   $name ($p passed$([ "${k:-0}" != 0 ] && echo ", $k skipped"), $((end - start))s)"
		grep '^skip ' "$tmp/out" | head -n 5 | sed 's/^/    /'
	fi
}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for s in tests/cli/*.sh; do
	[ -f "$s" ] || continue
	run_one "$(basename "$s" .sh)" sh "$s"
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
[ -n "$skipped_names" ] && echo "skipped (could not run on this machine; reasons above):$skipped_names"
if [ "$skip" != 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ "$fail" = 0 ]
