#!/bin/sh
# run.sh: build every libFuzzer target tests/fuzz/fuzz_*.c (clang, libFuzzer + ASan + UBSan) against
# libcachet built with the same flags in $FUZZ_BUILD (default build-fuzz; the library's own source
# list, so the targets cannot rot), then run each for SECONDS (default 60).
#   sh tests/fuzz/run.sh [SECONDS] [TARGET...]      TARGET: parse, plan, ... (default: all)
# The working corpus of each target is $FUZZ_BUILD/corpus-TARGET, seeded from examples/,
# tests/plans/ and tests/fuzz/corpus/; crashes land in $FUZZ_BUILD/artifacts/ (copy them to
# tests/fuzz/regress/ once fixed). Exit 1 on a finding; prints "N passed, M failed" (one per target).
# Without clang (or its libFuzzer runtime) every target is skipped with a message.
SECS=${1:-60}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/../.." || exit 2
OUT=${FUZZ_BUILD:-build-fuzz}
CC=${FUZZ_CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
targets=$*
[ -z "$targets" ] && targets=$(ls tests/fuzz/fuzz_*.c | sed 's|tests/fuzz/fuzz_||; s|\.c$||')
count=$(echo $targets | wc -w)
skip() {
	echo "skip: $1"
	for t in $targets; do echo "skip $t"; done
	echo "$count passed, 0 failed"
	exit 0
}
command -v "$CC" >/dev/null 2>&1 || skip "no $CC (make deps installs clang)"
mkdir -p "$OUT"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$OUT/probe.c"
"$CC" -fsanitize=fuzzer $SAN -o "$OUT/probe" "$OUT/probe.c" >/dev/null 2>&1 ||
	skip "$CC cannot link libFuzzer (-fsanitize=fuzzer): install clang's runtime (libclang-rt / compiler-rt)"
# the library, instrumented for coverage and the sanitizers; warnings are not errors under clang
make -s BUILD="$OUT" CC="$CC" OPT="-O1 -g -fsanitize=fuzzer-no-link $SAN -fno-omit-frame-pointer" \
	WARN="-Wall -Wno-unused-command-line-argument" "$OUT/libcachet.a" >"$OUT/build.log" 2>&1 || {
	cat "$OUT/build.log"
	echo "FAIL: the library does not build with $CC"
	echo "0 passed, $count failed"
	exit 1
}
LIBS=$(pkg-config --libs libxxhash hwloc sqlite3 jansson isl 2>/dev/null || echo -lxxhash -lhwloc -lsqlite3 -ljansson -lisl -lgmp)
pass=0
fail=0
mkdir -p "$OUT/artifacts"
for t in $targets; do
	bin="$OUT/fuzz_$t"
	if ! "$CC" -std=c11 -g -O1 -fsanitize=fuzzer $SAN -Iinclude -D_GNU_SOURCE -o "$bin" \
		"tests/fuzz/fuzz_$t.c" "$OUT/libcachet.a" $LIBS -lm -ldl -lpthread; then
		echo "FAIL $t: does not build"
		fail=$((fail + 1))
		continue
	fi
	corpus="$OUT/corpus-$t"
	mkdir -p "$corpus"
	for f in examples/*.cachet tests/plans/*.cachet tests/fuzz/corpus/* tests/fuzz/regress/*; do
		[ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$f")"
	done
	# -timeout: a hang, not a slow seed: examples/trsm_blocked.cachet's check (isl dependence
	# tests) takes 4.5 s under the sanitizers on an idle 2-core machine, and a loaded one
	# tripled that past the old 10 s (2026-11-29)
	if "$bin" -max_total_time="$SECS" -max_len=8192 -timeout=30 -rss_limit_mb=2048 \
		-dict=tests/fuzz/cachet.dict -artifact_prefix="$OUT/artifacts/$t-" -print_final_stats=1 \
		"$corpus" >"$OUT/$t.log" 2>&1; then
		echo "ok   $t ($(grep -E '^stat::number_of_executed_units' "$OUT/$t.log" | awk '{print $2}') runs in ${SECS}s)"
		pass=$((pass + 1))
	else
		echo "FAIL $t: a finding in $OUT/artifacts/ (log: $OUT/$t.log)"
		grep -E 'ERROR|SUMMARY|runtime error' "$OUT/$t.log" | head -5
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
