#!/bin/sh
# cc-fast.sh: the C compiler of the differential fuzzer's native runs: cachet compiles with -O3;
# the flags in FUZZ_OPT (default -O1) come last and win, which makes each compile several times
# faster while the generated code (what the fuzzer tests) is unchanged. FUZZ_REAL_CC picks the compiler.
exec ${FUZZ_REAL_CC:-cc} "$@" ${FUZZ_OPT--O1}
