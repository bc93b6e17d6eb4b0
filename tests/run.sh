#!/bin/sh
# run.sh: run every test program and CLI test script; print "N passed, M failed".
# Tests run CACHET_TEST_JOBS at a time (default: the number of CPUs, at most 4), each with its
# own disk cache; results are printed in a fixed order (unit programs, then scripts by name)
# whatever order they finish in. The slowest tests start first so the lanes end together.
BUILD=${1:-build}
export CACHET=$BUILD/cachet
export CACHET_BUILD=$BUILD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# under the sanitizers, leaks inside PoCL/LLVM (third-party frames only) are suppressed
if [ "${SAN:-}" = 1 ] && [ -z "${LSAN_OPTIONS:-}" ]; then
	export LSAN_OPTIONS="suppressions=$(pwd)/tests/sanitize/lsan-thirdparty.supp:print_suppressions=0"
fi
jobs=${CACHET_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && jobs=4
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
# The lanes share the CPUs, each test's parallel loops using all of them: a thread waiting at
# a barrier sleeps at once rather than spin (the CLI's bounded spin, ct_threads_wait_default,
# pays when one process has the cores to itself), unless the caller chose.
if [ -z "${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}" ]; then export OMP_WAIT_POLICY=passive; fi

# The test list, one "name command..." per line, in the order results are printed.
list() {
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		echo "$(basename "$t") $t"
	done
	for s in tests/cli/*.sh; do
		[ -f "$s" ] || continue
		echo "$(basename "$s" .sh) sh $s"
	done
}
list >"$tmp/order"
# slowest first (seconds measured on CI's 2 cores); the rest keep their order
slow="fuzz_smoke report test_native cuda test_checked fuzz_quick tune plans cuda_package poly_bench python auto distributed"
for n in $slow; do grep "^$n " "$tmp/order"; done >"$tmp/queue"
grep -v -F -x -f "$tmp/queue" "$tmp/order" >>"$tmp/queue"

# Run one test (name, then its command) into $tmp/res/NAME.{out,err,rc,secs}.
export RUN_RES="$tmp/res" RUN_CACHE="$tmp/cache"
mkdir -p "$RUN_RES" "$RUN_CACHE"
cat >"$tmp/one.sh" <<'EOF'
name=$1
shift
start=$(date +%s)
CACHET_CACHE_DIR="$RUN_CACHE/$name" "$@" >"$RUN_RES/$name.out" 2>"$RUN_RES/$name.err"
echo $? >"$RUN_RES/$name.rc"
echo $(($(date +%s) - start)) >"$RUN_RES/$name.secs"
EOF
# word splitting of each line is intended: names and paths have no blanks
tr '\n' '\0' <"$tmp/queue" | xargs -0 -P "$jobs" -n 1 sh -c 'sh "$0" $1' "$tmp/one.sh"

pass=0
fail=0
skip=0
failed_names=""
skipped_names=""
# Fold one finished test into the totals and print its line.
report() {
	name=$1
	rc=$(cat "$RUN_RES/$name.rc" 2>/dev/null || echo 127)
	secs=$(cat "$RUN_RES/$name.secs" 2>/dev/null || echo 0)
	out="$RUN_RES/$name.out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" 2>/dev/null | tail -n 1)
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
	skip=$((skip + k))
	[ "$k" != 0 ] && skipped_names="$skipped_names $name($k)"
	if [ "$f" != 0 ]; then
		failed_names="$failed_names $name"
		echo "FAIL $name ($p passed, $f failed, exit $rc, ${secs}s)"
		tail -n 40 "$RUN_RES/$name.err" 2>/dev/null | sed 's/^/    /'
		tail -n 10 "$out" 2>/dev/null | sed 's/^/    /'
	else
		echo "ok   $name ($p passed$([ "$k" != 0 ] && echo ", $k skipped"), ${secs}s)"
		grep '^skip ' "$out" | head -n 5 | sed 's/^/    /'
	fi
}
while read -r name _; do
	report "$name"
done <"$tmp/order"
[ -n "$failed_names" ] && echo "failed:$failed_names"
[ -n "$skipped_names" ] && echo "skipped (could not run on this machine; reasons above):$skipped_names"
if [ "$skip" != 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ "$fail" = 0 ]
