/* target_int.h: what the files of src/target share and nothing else needs: the x86 switch with its intrinsics headers, and the byte units. */
#ifndef CT_TARGET_INT_H
#define CT_TARGET_INT_H

#include <stdint.h>

/* detect.c reads cpuid, measure.c runs AVX/SSE kernels: both only on x86. */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define PROBE_X86 1
#else
#define PROBE_X86 0
#endif

#define KIB ((int64_t)1024)
#define MIB (KIB * 1024)

#endif
