/* target.h: interface of src/target: the machine the ctx runs on (cores, caches, vector ISA, measured rates, OpenCL devices), hung on ct_ctx. */
#ifndef CT_TARGET_H
#define CT_TARGET_H

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ctx's target description, detected on first use (no microbenchmarks)
 * and kept in ctx->target until the ctx is freed (a re-probe updates it in
 * place, so the pointer stays valid). NULL (error on ctx) only when out of
 * memory. Modules read per-target numbers from here, never constants. */
CT_INTERN const ct_probe_info *target_get(ct_ctx *ctx);

/* Whether cache level i of p is private to a core: 1 when one instance serves at most one
 * core's hardware threads (shared_by <= hw_threads / cores), 0 when more share it, -1 when the
 * probe does not know (shared_by 0). */
CT_INTERN int target_level_private(const ct_probe_info *p, int i);

/* The widest vector of the target in bytes, as the code generators take it:
 * the ctx's CT_OPT_VECTOR_BYTES when set, else the detected width, else 16. */
CT_INTERN int target_vector_bytes(ct_ctx *ctx);

/* Fill p with everything that costs no measurement (detect.c); flags:
 * CT_PROBE_NO_HWLOC, CT_PROBE_NO_SYSFS. */
CT_INTERN void target_detect(unsigned flags, ct_probe_info *p);

/* Run the microbenchmarks in what (CT_PROBE_MEASURE_* bits) into p
 * (measure.c); CT_ERR_NOMEM if even the small bookkeeping cannot be
 * allocated (big buffers retry smaller, or skip). */
CT_INTERN ct_status target_measure(ct_ctx *ctx, ct_probe_info *p, unsigned what);

/* CPUs this process may run on; fills cpus[0..max) with their numbers
 * (cpus may be NULL to count them). */
CT_INTERN int target_allowed_cpus(int *cpus, int max);

/* Read the caches described under dir (a sysfs cpuN/cache folder: index0,
 * index1 ... with level, type, size, coherency_line_size,
 * ways_of_associativity, shared_cpu_list) into out[0..max): data and unified
 * caches only, sorted by level, one per level, marked CT_SRC_SYSFS. Returns
 * how many were found (0 if dir is missing or unreadable). */
CT_INTERN int target_caches_sysfs(const char *dir, ct_cache_level *out, int max);

/* Write s into out (n bytes, NUL-terminated) as an id: lower case, "(R)" and
 * "(TM)" dropped, every run of other characters than [a-z0-9] one '_', no
 * leading or trailing '_'; "unknown" when nothing is left. */
CT_INTERN void target_sanitize(const char *s, char *out, size_t n);

/* List up to cap OpenCL devices of every platform into out (*n of them),
 * for the probe. No OpenCL (no loader, no platform) is *n = 0 and CT_OK,
 * with the ctx's error left clear. */
CT_INTERN ct_status target_opencl_devices(ct_ctx *ctx, ct_opencl_devinfo *out, int cap, int *n);

/* List up to CT_PROBE_MAX_CUDA CUDA devices into p->cuda (p->ncuda), and
 * with CT_PROBE_MEASURE_BANDWIDTH / _FLOPS in what measure their copy
 * bandwidth and fp32 peak (cudaprobe.c). No driver or no device is
 * p->ncuda = 0 with p->cuda_reason saying why, CT_OK, the ctx's error
 * left clear. */
CT_INTERN ct_status target_cuda_devices(ct_ctx *ctx, ct_probe_info *p, unsigned what);

#endif
