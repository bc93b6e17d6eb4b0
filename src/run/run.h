/* run.h: buffers, timing and verification shared by the interpreter and native run paths. */
#ifndef CT_RUN_H
#define CT_RUN_H

#include "ir/ir.h"

/* One host buffer per array of a kernel (64-byte aligned, malloc'd). */
typedef struct run_buffers {
	int n;
	void **data;
	int64_t *bytes;
} run_buffers;

/* Whether one copy of k's arrays fits the run's memory limit (a quarter of
 * the physical memory): CT_ERR_LIMIT, before anything is allocated, if not. */
ct_status run_check_size(ct_kernel *k);
/* Allocate every array of k (temps too); fill = deterministic random data
 * from the ctx seed (stream = array index), else zeros. */
ct_status run_buffers_alloc(ct_kernel *k, run_buffers *b, bool fill);
void run_buffers_copy(run_buffers *dst, const run_buffers *src);
void run_buffers_free(run_buffers *b);

/* Median of t[0..n-1] (sorts t). */
double run_median(double *t, int n);

/* Run the unscheduled reference interpreter on a copy of init into want. */
ct_status run_reference(ct_kernel *k, const run_buffers *init, run_buffers *want);
/* Compare every output/inout array of got with want; fills verified,
 * max_rel_error, mismatch_array; CT_ERR_VERIFY on mismatch. */
ct_status run_verify(ct_kernel *k, const run_buffers *got, const run_buffers *want, ct_run_result *r);

/* One run of a kernel on buffers (one per array); the interpreter and the
 * native engine each give theirs to run_measure. */
typedef ct_status (*run_once_fn)(void *ud, void *const *buffers);
/* Fill the inputs deterministically, call once() o->repeat times (each on a
 * fresh copy of the inputs, timed without the copy), set r->seconds (median)
 * and r->gflops, and verify the last result against the unscheduled
 * reference when o->verify (CT_ERR_VERIFY on a mismatch). */
ct_status run_measure(ct_kernel *k, const ct_run_options *o, run_once_fn once, void *ud, ct_run_result *r);

/* The native engine (src/gen): compile (or fetch from the code cache), run
 * and verify. Fills r; CT_ERR_UNSUPPORTED where no native engine is built. */
ct_status run_native(ct_kernel *k, const ct_run_options *o, ct_run_result *r);

/* The loaded uniform entry of k (generated, compiled or fetched from the
 * code caches), its parallel loops set to `threads` threads (0: the ctx's
 * option, else one per processor); *used is the count they will run on. */
ct_status native_entry(ct_kernel *k, int threads, void (**entry)(void *const *, const int64_t *), int *used);

/* The OpenCL engine (src/run/ocl.c), for plan(target=opencl) kernels:
 * generate OpenCL C, build it (or load its cached binary), run it on the
 * first OpenCL device and verify. Fills r (engine "opencl");
 * CT_ERR_UNSUPPORTED where OpenCL is not available. */
ct_status run_opencl(ct_kernel *k, const ct_run_options *o, ct_run_result *r);

/* List up to cap OpenCL devices of every platform into out (*n of them),
 * for the probe. No OpenCL (no loader, no platform) is *n = 0 and CT_OK,
 * with the ctx's error left clear. */
ct_status ocl_list_devices(ct_ctx *ctx, ct_opencl_devinfo *out, int cap, int *n);

/* For `cachet build`: the program binary of k (malloc'd) for the OpenCL
 * device, built (or loaded) and run once on zero-filled arrays with the
 * launch of k's param values, so it holds the work-group function compiled
 * for that launch; desc: the device description it is for (as in the
 * binary cache's key). CT_OK with *bin NULL when none can be had (no
 * OpenCL here, or runtime sizes): the package builds from source. Build
 * failures are CT_ERR_COMPILE with the log. */
ct_status run_opencl_binary(ct_kernel *k, unsigned char **bin, size_t *n, char *desc, size_t cap);

#endif
