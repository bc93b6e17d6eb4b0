#!/bin/sh
# cc-fast.sh: the C compiler of the differential fuzzer's native runs when FUZZ_OPT is set: cachet
# compiles with -O3 -march=native ...; the flags in FUZZ_OPT (say -O1) come last and win. Measured on
# the fuzzer's small kernels, -O0, -O1 and -O3 cost the same (about 0.25 s a kernel, mostly starting
# the compiler, assembler and linker), so by default the fuzzer compiles as users do. FUZZ_REAL_CC
# picks the compiler.
exec ${FUZZ_REAL_CC:-cc} "$@" ${FUZZ_OPT}
