#!/bin/sh
# run.sh: build the parser fuzzer (clang, libFuzzer + ASan + UBSan) and run it for SECONDS (default 60).
# The working corpus lives in build-fuzz/corpus, seeded from examples/ and tests/fuzz/corpus/;
# crashes land in build-fuzz/artifacts/ (copy them to tests/fuzz/regress/ once fixed).
set -e
SECS=${1:-60}
cd "$(dirname "$0")/../.."
OUT=${FUZZ_BUILD:-build-fuzz}
mkdir -p "$OUT/corpus" "$OUT/artifacts"
CC=${FUZZ_CC:-clang}
$CC -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iinclude -Isrc -D_GNU_SOURCE -o "$OUT/fuzz_parse" tests/fuzz/fuzz_parse.c \
	src/core/core.c src/ir/aff.c src/ir/kernel.c src/ir/looptree.c src/plan/plan.c src/lang/*.c -lxxhash -lm
for f in examples/*.cachet tests/fuzz/corpus/* tests/fuzz/regress/*; do
	[ -f "$f" ] && cp "$f" "$OUT/corpus/seed-$(basename "$f")"
done
"$OUT/fuzz_parse" -max_total_time="$SECS" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
	-dict=tests/fuzz/cachet.dict -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 \
	"$OUT/corpus"
