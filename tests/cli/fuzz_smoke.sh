#!/bin/sh
# fuzz_smoke.sh: a 20-second run of every libFuzzer target (tests/fuzz/run.sh; FUZZ_SMOKE_SECONDS
# changes it), so the targets keep building against the library and find nothing new quickly.
# Skipped visibly (and counted as passed) only where clang with libFuzzer cannot be had.
exec sh tests/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-20}"
