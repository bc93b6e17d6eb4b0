/* engine.h: interface of src/engine: loading and running compiled code (native, OpenCL), packages, and the buffers, timing and verification every run path shares. */
#ifndef CT_ENGINE_H
#define CT_ENGINE_H

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
/* One run that times its own kernel (a GPU's events): *seconds is the
 * kernel's time alone, the copies to and from the device excluded. */
typedef ct_status (*run_timed_fn)(void *ud, void *const *buffers, double *seconds);
/* run_measure with the times once() reports instead of the wall clock. */
ct_status run_measure_timed(ct_kernel *k, const ct_run_options *o, run_timed_fn once, void *ud, ct_run_result *r);

/* ------------------------------------------------------------ the entry's arguments (entryargs.c) */

/* The one argument layout of a compiled kernel's uniform entry
 * (gen_entry_fn), for every path into it: ct_kernel_run, the selector's
 * pieces, callables (and Python through them), kernels on views and the
 * build-time check of packages. args: one pointer per array in declaration
 * order, temps NULL; params: entry_param_count(k) values, every param's
 * value in declaration order, then each strided array's base offset and
 * strides (ir/slots.h). */
int entry_param_count(const ct_kernel *k);
/* Fill args (k->narrays) and params (entry_param_count(k)) from bufs (one
 * per array; NULL: every pointer NULL), the param values pv (k->nparams)
 * and the strided arrays' slots (view_slots(k) values; NULL: each strided
 * array dense in its declared layout under pv, base 0); args NULL: the
 * params only (the caller's buffers are already one per array). args and
 * params may be bufs and pv themselves. */
void entry_args_fill(const ct_kernel *k, void *const *bufs, const int64_t *pv, const int64_t *slots, void **args,
                     int64_t *params);

/* ------------------------------------------------------------ the check before first use (selftest.c) */

/* The interpreter's budget of a test instance: flops plus array elements
 * (about 0.1 to 0.3 s). A kernel whose compile-time sizes cost more is
 * not checked before use (docs/LIBRARY.md, "Checked before first use"). */
#define SELFTEST_BUDGET 8.0e6
#define CT_MAX_SELFTEST_PARAMS 256

typedef enum selftest_verdict { SELFTEST_SKIPPED, SELFTEST_OK, SELFTEST_BAD } selftest_verdict;

/* A compiled entry to test: the plain one, or the checked one instead. */
typedef struct selftest_fns {
	int (*entry)(void *const *, const int64_t *);
	int (*checked)(void *const *, const int64_t *, void *);
} selftest_fns;

typedef struct selftest_result {
	selftest_verdict verdict; /* SKIPPED: no affordable instance the interpreter takes */
	bool kept;                /* the verdict was kept from an earlier check (nothing below is set) */
	double max_rel_error;
	char array[64];     /* the first array that differs */
	char instance[256]; /* the params of the instance tested ("N=12, L=37") */
} selftest_result;

/* Run f on a test instance of k (its compile-time params as they are, its
 * runtime params 37, else 9, else 2, else the values the caller set: the
 * first instance within SELFTEST_BUDGET that the interpreter runs) on the ctx seed's data and
 * compare with the unscheduled reference. k's params are put back. An
 * error (out of memory, a checked entry's bounds failure) is returned;
 * wrong results are res->verdict SELFTEST_BAD, not an error. */
ct_status selftest_run(ct_kernel *k, const selftest_fns *f, selftest_result *res);
/* The verdict kept for the module named digest (the code cache's key
 * digest: compiler, flags, source), SKIPPED when none is kept. */
selftest_verdict selftest_verdict_get(ct_ctx *ctx, const char *digest);
void selftest_verdict_put(ct_ctx *ctx, const char *digest, selftest_verdict v);

/* The native engine (engine/native.c): compile (or fetch from the code cache), run
 * and verify. Fills r; CT_ERR_UNSUPPORTED where no native engine is built. */
ct_status run_native(ct_kernel *k, const ct_run_options *o, ct_run_result *r);

/* The loaded uniform entry of k (generated, compiled or fetched from the
 * code caches; it returns non-zero when the kernel could not allocate its
 * temps and cache buffers), its parallel loops set to `threads` threads (0: the ctx's
 * option, else one per processor); *used is the count they will run on. */
ct_status native_entry(ct_kernel *k, int threads, int (**entry)(void *const *, const int64_t *), int *used);

/* The OpenCL engine (engine/ocl.c), for plan(target=opencl) kernels:
 * generate OpenCL C, build it (or load its cached binary), run it on the
 * first OpenCL device and verify. Fills r (engine "opencl");
 * CT_ERR_UNSUPPORTED where OpenCL is not available. */
ct_status run_opencl(ct_kernel *k, const ct_run_options *o, ct_run_result *r);

struct ocl_launch;
/* k lowered and written as OpenCL C (malloc'd, *len bytes), its launch in *L
 * (L may be NULL); NULL with the ctx's error on failure: the one way the
 * engine, `cachet emit --target opencl` and the package get the source. */
char *ocl_kernel_source(ct_kernel *k, size_t *len, struct ocl_launch *L);

/* For `cachet build`: the program binary of k (malloc'd) for the OpenCL
 * device, built (or loaded) and run once on zero-filled arrays with the
 * launch of k's param values, so it holds the work-group function compiled
 * for that launch; desc: the device description it is for (as in the
 * binary cache's key). CT_OK with *bin NULL when none can be had (no
 * OpenCL here, or runtime sizes): the package builds from source. Build
 * failures are CT_ERR_COMPILE with the log. */
ct_status run_opencl_binary(ct_kernel *k, unsigned char **bin, size_t *n, char *desc, size_t cap);

/* The CUDA engine (engine/cuda.c), for plan(target=cuda) kernels: generate
 * CUDA C, compile it (NVRTC, else nvcc --cubin, or load it from the code
 * cache), run it on the first CUDA device through the driver API (loaded
 * with dlopen) and verify. Fills r (engine "cuda"); CT_ERR_UNSUPPORTED with
 * a message saying what is missing where there is no GPU or no driver. */
ct_status run_cuda(ct_kernel *k, const ct_run_options *o, ct_run_result *r);
/* k lowered and written as CUDA C (malloc'd), its launch in *L (may be
 * NULL): the one way the engine, `cachet emit --target cuda` and the
 * package get the source. */
char *cuda_kernel_source(ct_kernel *k, size_t *len, struct ocl_launch *L);
/* The compile path of the CUDA engine, usable without a GPU (tests). The
 * compiler's identity into id (cap bytes): "nvrtc MAJOR.MINOR FILE" when
 * NVRTC is found (target_nvrtc_paths), else "nvcc PATH | release line |
 * build line"; CT_ERR_UNSUPPORTED when there is neither. */
ct_status cuda_compiler(ct_ctx *ctx, char *id, size_t cap);
/* The code cache's key of a cubin (malloc'd, *klen bytes): every input
 * of the binary (compiler identity, architecture, driver version,
 * options, source). */
char *cuda_cubin_key(const char *compiler, const char *arch, int driver, const char *opts, const char *src,
                     size_t len, size_t *klen);
/* The cubin (malloc'd) of CUDA C src for arch ("sm_90a"): from the blob
 * cache (how "disk") or compiled with NVRTC, else nvcc --cubin, and kept
 * (how "compiled"). CT_ERR_COMPILE with the compiler's log. */
ct_status cuda_cubin(ct_ctx *ctx, const char *src, size_t len, const char *arch, int driver, unsigned char **bin,
                     size_t *n, const char **how);
/* run_cuda on a given source and launch (src: CUDA C with kernel L->fn
 * taking k's arrays and runtime params as gen_cuda's do): the runtime
 * tested apart from the generator, and the one path run_cuda takes. */
ct_status run_cuda_source(ct_kernel *k, const ct_run_options *o, const char *src, size_t len,
                          const struct ocl_launch *L, ct_run_result *r);
/* CT_OK when the ctx can run CUDA kernels (the driver loads and the
 * device opens: it stays open in the ctx); else run_cuda's
 * CT_ERR_UNSUPPORTED (or CT_ERR_USAGE) with its message. */
ct_status cuda_device_ready(ct_ctx *ctx);
/* The grid and block (in threads) of launch L (see cuda.c). */
void cuda_launch_shape(const struct ocl_launch *L, unsigned grid[3], unsigned block[3]);
/* The package of a plan(target=cuda) kernel (cudapkg.c): DIR/NAME.cu,
 * NAME.h, NAME.c (a C host wrapper over the driver API), libNAME.a,
 * libNAME.so. */
ct_status gen_cuda_package(ct_kernel *k, const char *dir);

/* native.c: k's compiled entry point (kernel memo, code cache); native_entry_load
 * also says where the code came from ("memory", "disk", "compiled"; how may be
 * NULL) and how long compiling took (0 unless compiled). */
ct_status native_entry_load(ct_kernel *k, int (**entry)(void *const *, const int64_t *),
                            void (**set_threads)(int), const char **how, double *compile_s);
ct_status native_entry_fns(ct_kernel *k, int (**entry)(void *const *, const int64_t *),
                           void (**set_threads)(int));

/* ------------------------------------------------------------ packages (aot.c, oclpkg.c) */

/* Write data to path atomically (a temp file renamed into place). */
ct_status aot_write_atomic(ct_ctx *ctx, const char *path, const char *data, size_t len);
/* Compile the package source src into lib_a and lib_so (through obj,
 * removed after) with the code cache's compiler and compile policy
 * (jit_policy_flags: -O3 -march=native ...), then extra (a flag, or NULL);
 * lib (e.g. "-lOpenCL", or NULL) is linked into lib_so; openmp: apply k's
 * OpenMP flags (host kernels). */
ct_status aot_compile_package(ct_kernel *k, const char *src, const char *obj, const char *lib_a, const char *lib_so,
                              const char *lib, bool openmp, const char *extra);
/* The package of a plan(target=opencl) kernel (oclpkg.c): DIR/NAME.cl,
 * NAME.h, NAME.c (the host wrapper embedding the source and this device's
 * binary), libNAME.a, libNAME.so. */
ct_status gen_opencl_package(ct_kernel *k, const char *dir);

/* The absolute path of program name on $PATH into out (CT_ERR_COMPILE when absent). */
ct_status aot_find_on_path(ct_ctx *ctx, const char *name, char *out, size_t cap);
/* The MPI package of distributed kernel k in dir (src/engine/distpkg.c): NAME_mpi.c,
 * NAME_mpi.h and, with mpicc, libNAME_mpi.a. */
ct_status dist_package(ct_kernel *k, const char *dir);
/* The path of Open MPI's program name into out: env (CACHET_MPICC, CACHET_MPIRUN) when set,
 * else the PATH; false when not found. */
bool dist_find_tool(ct_ctx *ctx, const char *env, const char *name, char *out, size_t cap);
/* The native engine's compile policy flags for Open MPI's mpicc (its compiler probed as any
 * other): out[JIT_POLICY_MAX]; the count. */
int dist_policy_flags(ct_ctx *ctx, const char *mpicc, const char **out);

#endif
