/* cachet.h: the whole public API of libcachet (loop nests -> cache-aware kernels). */
#ifndef CACHET_H
#define CACHET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* FILE, for the printers */

#ifdef __cplusplus
extern "C" {
#endif

#define CACHET_VERSION "0.1.0"
/* The ABI version: the library's SONAME is libcachet.so.<CACHET_SOVERSION>.
 * It grows by one with every change of this header that breaks programs
 * or bindings built against the previous one (CHANGES.md lists them); the
 * Makefile reads it from here. */
#define CACHET_SOVERSION 1

/* Ownership annotations (as in isl). They expand to nothing; they document who
 * frees what:
 *   CT_GIVE  the function returns an object the caller must free;
 *   CT_TAKE  the function takes over the argument (the caller must not use it again);
 *   CT_KEEP  the function only borrows the argument for the duration of the call
 *            (or, for a ctx, for the lifetime of the object it creates); on a
 *            returned pointer: the library keeps it (never free it; how long it
 *            stays valid is in the function's comment). */
#define CT_GIVE
#define CT_TAKE
#define CT_KEEP

#if defined(__GNUC__)
#define CT_API __attribute__((visibility("default")))
#else
#define CT_API
#endif

/* ---------------------------------------------------------------- status and output formats (src/core) */

typedef enum ct_status {
	CT_OK = 0,
	CT_ERR_NOMEM,    /* an allocation failed */
	CT_ERR_INPUT,    /* bad kernel text or bad argument (exit code 2 in the CLI) */
	CT_ERR_USAGE,    /* API misuse: wrong handle, wrong index, wrong order */
	CT_ERR_LIMIT,    /* a size, depth or count exceeds what cachet supports */
	CT_ERR_RUNTIME,  /* a kernel failed at run time (exit code 1 in the CLI) */
	CT_ERR_COMPILE,  /* generated code failed to compile or load */
	CT_ERR_VERIFY,   /* a result differs from the reference */
	CT_ERR_IO,       /* a file or folder could not be read or written */
	CT_ERR_UNSUPPORTED /* valid request that this build or target cannot honour */
} ct_status;

/* Return a static, human-readable name for status s (never NULL). */
CT_API CT_KEEP const char *ct_strerror(ct_status s);

/* What a printer writes. Every printer is
 *   ct_status ct_<object>_print(object, [what to print,] ct_format format, FILE *out)
 * and writes to out (borrowed, not closed): CT_OK, CT_ERR_USAGE for a NULL
 * object or out, CT_ERR_IO when writing fails. */
typedef enum ct_format {
	CT_FORMAT_TEXT = 0, /* aligned text for people */
	CT_FORMAT_JSON = 1  /* one JSON object followed by a newline */
} ct_format;

/* ---------------------------------------------------------------- context (src/core) */

/* realloc-style allocator hook (as in Lua): ptr == NULL allocates, size == 0
 * frees and returns NULL, otherwise resizes. Must return NULL on failure. */
typedef void *(*ct_alloc_fn)(void *ud, void *ptr, size_t size);

typedef struct ct_ctx ct_ctx;

/* Create a context with the default allocator (malloc/realloc/free). NULL on
 * out-of-memory. A context is used by one thread at a time. */
CT_API CT_GIVE ct_ctx *ct_ctx_new(void);
/* Create a context whose every allocation goes through fn(ud, ...). */
CT_API CT_GIVE ct_ctx *ct_ctx_new_with_alloc(ct_alloc_fn fn, CT_KEEP void *ud);
/* Free a context and everything it still caches. ct_ctx_free(NULL) is a no-op.
 * Objects created from ctx must be freed before it. */
CT_API void ct_ctx_free(CT_TAKE ct_ctx *ctx);
/* Undo what ctx has under way outside this process, for a program that is
 * about to die of a signal: kill the process groups of the compilers (and
 * other programs) ctx is running, and remove the temporary build folders
 * it has made (with the compiler's temporaries in them). Async-signal-safe
 * (system calls only, no lock, no allocation): meant to be called from the
 * program's SIGINT/SIGTERM/SIGHUP handler, which the library never installs
 * (signals belong to the program). ctx may be NULL (nothing is done). After
 * it the call under way fails and ctx starts no further program; free it
 * (or exit). The disk cache needs nothing: its writes are atomic renames. */
CT_API void ct_ctx_cancel(CT_KEEP ct_ctx *ctx);

/* The last error recorded on ctx: status, message ("" when none), and for
 * errors about an input file its name ("" when unknown), line and column
 * (1-based; 0 when unknown). Pointers stay valid until the next call on ctx. */
CT_API ct_status ct_ctx_last_status(CT_KEEP const ct_ctx *ctx);
CT_API CT_KEEP const char *ct_ctx_last_message(CT_KEEP const ct_ctx *ctx);
CT_API CT_KEEP const char *ct_ctx_last_file(CT_KEEP const ct_ctx *ctx);
CT_API int ct_ctx_last_line(CT_KEEP const ct_ctx *ctx);
CT_API int ct_ctx_last_col(CT_KEEP const ct_ctx *ctx);
/* Forget the last error and all diagnostics. */
CT_API void ct_ctx_clear_error(CT_KEEP ct_ctx *ctx);

/* Diagnostics of the last parse/check (several errors per run). Each is
 * rendered as "file:line:col: error: message" followed by the source line and
 * a caret; the string stays valid until the next parse on ctx. */
CT_API int ct_ctx_diag_count(CT_KEEP const ct_ctx *ctx);
CT_API CT_KEEP const char *ct_ctx_diag_render(CT_KEEP ct_ctx *ctx, int i);
/* Errors of the last parse/check beyond CT_OPT_MAX_ERRORS: found, not kept. */
CT_API int ct_ctx_diag_suppressed(CT_KEEP const ct_ctx *ctx);

/* Integer options of a context. */
typedef enum ct_option {
	CT_OPT_THREADS = 1,     /* threads for native kernels (0 = all cores) */
	CT_OPT_MAX_ERRORS = 2,  /* diagnostics kept per parse (default 20) */
	CT_OPT_SEED = 3,        /* seed of deterministic input data (default 1) */
	CT_OPT_VECTOR_BYTES = 4, /* widest vector the C backend's register tiles use, in
	                            bytes (a power of two, 8..256); 0 (default) = the
	                            target's, from the hardware probe */
	CT_OPT_BRANCHING = 5,    /* 1: the C backend emits the branching form:
	                            per-element bounds tests in the copies of halo
	                            caches, and boundary `if`s tested in every
	                            iteration. 0 (default): branch-free: copy loops
	                            whose bounds absorb the tests, and loops split
	                            into boundary and interior pieces so that the
	                            interior runs without tests (docs/VIEWS.md,
	                            "Branch-free code"). Same results either way. */
	CT_OPT_SIM_MAX_ACCESSES = 6 /* the longest address trace ct_kernel_simulate walks,
	                            in accesses (counted by the model first, in
	                            milliseconds); a longer one is refused with
	                            CT_ERR_LIMIT before it starts. Default
	                            CT_SIM_MAX_ACCESSES (about 5 minutes of
	                            simulation); 0 = no limit. */
} ct_option;
/* The default of CT_OPT_SIM_MAX_ACCESSES: 10^10 accesses. */
#define CT_SIM_MAX_ACCESSES ((int64_t)10000000000)
/* Progress of long steps: fn(ud, phase, done, total) is called while one
 * runs, first once it has taken a second, then at most ten times a second,
 * and a last time with done == total if it was called before. One step
 * reports today: "verify", the reference interpreter's run that a
 * verification compares with (done: outermost loop iterations), and
 * "simulate", ct_kernel_simulate's trace (done: accesses, scaled to fit
 * an int when they do not). fn = NULL
 * (the default): no calls. fn must not call back into ctx. */
typedef void (*ct_progress_fn)(void *ud, const char *phase, int done, int total);
CT_API void ct_ctx_set_progress(CT_KEEP ct_ctx *ctx, ct_progress_fn fn, CT_KEEP void *ud);
CT_API ct_status ct_ctx_set_option(CT_KEEP ct_ctx *ctx, ct_option opt, int64_t value);
CT_API int64_t ct_ctx_get_option(CT_KEEP const ct_ctx *ctx, ct_option opt);

/* ---------------------------------------------------------------- kernels (src/api: parse, check; src/ir: accessors) */

typedef enum ct_dtype { CT_F32 = 0, CT_F64 = 1, CT_I32 = 2, CT_I64 = 3 } ct_dtype;
typedef enum ct_role {
	CT_INPUT = 0, CT_OUTPUT = 1, CT_INOUT = 2, CT_TEMP = 3, CT_CONST = 4
} ct_role;

/* Size in bytes and name ("f32" ...) of an element type. */
CT_API size_t ct_dtype_size(ct_dtype t);
CT_API CT_KEEP const char *ct_dtype_name(ct_dtype t);
CT_API CT_KEEP const char *ct_role_name(ct_role r);

typedef struct ct_kernel ct_kernel;

/* Parse and check the .cachet text (length len, need not be NUL-terminated).
 * file names the source in diagnostics. Returns NULL and records diagnostics
 * on ctx when the text has errors. The kernel keeps ctx. */
CT_API CT_GIVE ct_kernel *ct_kernel_parse(CT_KEEP ct_ctx *ctx, CT_KEEP const char *text,
					  size_t len, CT_KEEP const char *file);
/* Read FILE and parse it (as ct_kernel_parse). */
CT_API CT_GIVE ct_kernel *ct_kernel_parse_file(CT_KEEP ct_ctx *ctx, CT_KEEP const char *path);
CT_API void ct_kernel_free(CT_TAKE ct_kernel *k);

/* Override param `name` (compile-time or runtime) with value. A new value of
 * a compile-time param (or of a derived param that follows it) makes k
 * stale: every call that lowers, emits, builds, runs, models or tunes k
 * (ct_kernel_lower, _emit, _build, _run, _run_views, _compile, _simulate,
 * _predict, _tiles, _tune_key, ct_tune, ct_selector_new,
 * ct_kernel_run_selected, and ct_interp_run / ct_interp_trace of a tree
 * lowered before) returns CT_ERR_USAGE ("kernel 'X': params changed since
 * the last successful check; call ct_kernel_recheck") until
 * ct_kernel_recheck succeeds. A runtime param's value needs no recheck
 * (runtime params are symbols, at least 1, in the checks). */
CT_API ct_status ct_kernel_set_param(CT_KEEP ct_kernel *k, CT_KEEP const char *name, int64_t value);
/* Re-run the semantic checks with the current param values (out-of-bounds
 * subscripts may appear or vanish). CT_OK makes k usable again; on an error
 * (CT_ERR_INPUT with diagnostics) k stays stale. */
CT_API ct_status ct_kernel_recheck(CT_KEEP ct_kernel *k);

CT_API CT_KEEP const char *ct_kernel_name(CT_KEEP const ct_kernel *k);
CT_API int ct_kernel_param_count(CT_KEEP const ct_kernel *k);
CT_API CT_KEEP const char *ct_kernel_param_name(CT_KEEP const ct_kernel *k, int i);
/* Value of param i; 0 and *is_set = 0 for a runtime param not given yet. */
CT_API int64_t ct_kernel_param_value(CT_KEEP const ct_kernel *k, int i, CT_KEEP int *is_set);
CT_API int ct_kernel_param_is_runtime(CT_KEEP const ct_kernel *k, int i);

CT_API int ct_kernel_array_count(CT_KEEP const ct_kernel *k);
CT_API CT_KEEP const char *ct_kernel_array_name(CT_KEEP const ct_kernel *k, int i);
CT_API ct_dtype ct_kernel_array_dtype(CT_KEEP const ct_kernel *k, int i);
CT_API ct_role ct_kernel_array_role(CT_KEEP const ct_kernel *k, int i);
CT_API int ct_kernel_array_rank(CT_KEEP const ct_kernel *k, int i);
/* The layout of array i as a dimension order, most major first (row_major:
 * 0, 1, ..., r-1; col_major: r-1, ..., 0; layout=(1, 0) as written): writes
 * rank entries into order (may be NULL; room for CT_TENSOR_MAX_RANK is
 * enough) and returns the rank, 0 for a bad k or i. A binding uses it to
 * check that a caller's dense buffer is laid out as the kernel expects. */
CT_API int ct_kernel_array_order(CT_KEEP const ct_kernel *k, int i, CT_KEEP int *order);
/* 1 when array i is declared `strided` (its strides and base offset come
 * with each call on views, ct_kernel_run_views), else 0. */
CT_API int ct_kernel_array_is_strided(CT_KEEP const ct_kernel *k, int i);
/* Extent of dimension d of array i under the current params; -1 if it
 * depends on a runtime param that has no value yet. */
CT_API int64_t ct_kernel_array_extent(CT_KEEP const ct_kernel *k, int i, int d);
/* Number of elements of array i (-1 as above). */
CT_API int64_t ct_kernel_array_elements(CT_KEEP const ct_kernel *k, int i);

CT_API int ct_kernel_index_count(CT_KEEP const ct_kernel *k);
CT_API CT_KEEP const char *ct_kernel_index_name(CT_KEEP const ct_kernel *k, int i);

/* Floating-point operations of one run (a multiply-add counts 2), -1 if
 * runtime params are unset. */
CT_API double ct_kernel_flops(CT_KEEP const ct_kernel *k);

/* ---------------------------------------------------------------- loop tree (src/plan lowers, src/ir prints) */

typedef struct ct_looptree ct_looptree;

/* Build the scheduled loop tree (splits, tails, reorders; later the plan's
 * cache regions). with_schedule = 0 gives the unscheduled reference order.
 * Runtime params stay symbolic in the bounds (the interpreter needs their
 * values, lowering does not). */
CT_API CT_GIVE ct_looptree *ct_kernel_lower(CT_KEEP ct_kernel *k, int with_schedule);
CT_API void ct_looptree_free(CT_TAKE ct_looptree *t);
/* Print the loop tree as pseudo-code (CT_FORMAT_TEXT) or as one JSON
 * object (CT_FORMAT_JSON), as every printer (ct_format). */
CT_API ct_status ct_looptree_print(CT_KEEP ct_looptree *t, ct_format format, CT_KEEP FILE *out);
/* The same text as a NUL-terminated string the caller frees with free();
 * NULL (with the ctx's error) on out-of-memory. */
CT_API CT_GIVE char *ct_looptree_to_string(CT_KEEP ct_looptree *t, ct_format format);

/* ---------------------------------------------------------------- interpreter (src/interp) */

/* One buffer per array of the kernel, in declaration order, each of
 * ct_kernel_array_elements() elements laid out by the array's layout. temp
 * arrays may be NULL (the interpreter allocates them). */
CT_API ct_status ct_interp_run(CT_KEEP ct_looptree *t, CT_KEEP void *const *buffers);

/* One memory access of the address trace: array index (or a cache buffer,
 * numbered after the arrays), element offset in that buffer, is_write. */
typedef void (*ct_trace_fn)(void *ud, int buffer, int64_t offset, int is_write);
/* Walk the loop tree without arithmetic, reporting each access in the order
 * fixed by CLI.md (right-hand side reads left to right, then for op= the
 * left-hand side read, then the left-hand side write). */
CT_API ct_status ct_interp_trace(CT_KEEP ct_looptree *t, ct_trace_fn fn, CT_KEEP void *ud);

/* ---------------------------------------------------------------- data (src/engine/data.c) */

/* Fill buffer (n elements of type t) with deterministic pseudo-random values
 * in [-1, 1] (integers in [-8, 8]) from seed and stream. */
CT_API void ct_fill_random(CT_KEEP void *buffer, ct_dtype t, int64_t n, uint64_t seed, uint64_t stream);
/* Largest relative error between got and want (n elements); the error of an
 * element is |got-want| / max(1, |want|). */
CT_API double ct_max_rel_error(CT_KEEP const void *got, CT_KEEP const void *want, ct_dtype t, int64_t n);

/* ---------------------------------------------------------------- running and verifying (src/engine/run.c) */

/* The threads of generated parallel loops spin for a bounded time (about 0.1-0.4 ms) at a
 * barrier or between calls before they sleep: sets GOMP_SPINCOUNT in the process's
 * environment unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is already set (the user's choice
 * wins). The cachet tool and the Python package call it at start; a C program calls it
 * before its first kernel with parallel loops loads (libgomp reads the environment once),
 * and before it starts threads of its own (it calls setenv). Returns 1 when it set the
 * variable, 0 otherwise. */
CT_API int ct_threads_wait_default(void);

typedef enum ct_engine { CT_ENGINE_NATIVE = 0, CT_ENGINE_INTERP = 1 } ct_engine;

typedef struct ct_run_options {
	ct_engine engine;   /* native (compiled) or the reference interpreter */
	int repeat;         /* timed runs (>= 1); the median is reported */
	int threads;        /* 0 = the ctx's CT_OPT_THREADS */
	int verify;         /* compare with the unscheduled interpreter run */
	int checked;        /* native engine: compile the kernel with a bounds test on
	                       every array and cache-buffer access; the first access
	                       outside its storage fails the run with CT_ERR_RUNTIME
	                       ("out-of-bounds access to array 'A' (element E of N) in
	                       statement at FILE:LINE"). The interpreter always tests;
	                       plan(target=opencl) and plan(target=cuda) kernels refuse
	                       it (CT_ERR_UNSUPPORTED).
	                       Default 0. */
	ct_kernel *reference; /* verify against this kernel's unscheduled interpreter run
	                       instead of the run kernel's own: borrowed, NULL (the
	                       default) for the kernel itself. Its arrays must be the run
	                       kernel's, in order (names, types, elements; the run kernel
	                       may have more after them, temps only: a copy auto reads a
	                       matrix through), else the run fails with CT_ERR_USAGE. `cachet run --auto` passes the
	                       kernel auto was given: the chosen file may have rewritten
	                       its loops (distributed, fused), and must compute what the
	                       user wrote. Distributed runs (ct_kernel_run_ranks) ignore it. */
} ct_run_options;

typedef struct ct_run_result {
	double seconds;          /* median over the timed runs */
	double gflops;           /* ct_kernel_flops / seconds / 1e9 */
	int verified;            /* 1 verified, 0 mismatch, -1 not verified */
	double max_rel_error;    /* over every output/inout array */
	const char *engine;      /* "native", "interp", or the device target's ("opencl", "cuda") */
	const char *code_cache;  /* where the code came from: "memory" (this ctx's kernel memo
	                            or module memo), "disk" (the code cache), "compiled" or "none" */
	double compile_seconds;
	int threads;
	const char *mismatch_array; /* first array that failed verification, or "" */
} ct_run_result;

/* Set o to the defaults: native engine, repeat 1, threads 0, verify on,
 * checked off. */
CT_API void ct_run_options_init(CT_KEEP ct_run_options *o);
/* Run kernel k (every runtime param set) on deterministic pseudo-random
 * inputs from the ctx seed, time it, and verify it against the unscheduled
 * reference interpreter. Returns CT_ERR_VERIFY (with the result filled) on
 * a mismatch beyond the per-type tolerance (ct_dtype_tolerance; an f64
 * array of a kernel that also holds an f32 array gets f32's); the native
 * code that gave it is then evicted from the kernel memo, the module memo
 * and the code cache, so the next run compiles it again instead of reusing
 * a wrong binary. */
CT_API ct_status ct_kernel_run(CT_KEEP ct_kernel *k, CT_KEEP const ct_run_options *o,
			       CT_KEEP ct_run_result *r);
/* Run kernel k, whose plan has distribute(), on `ranks` MPI processes: its MPI program (see
 * ct_kernel_emit target "mpi") is compiled with Open MPI's mpicc and launched with mpirun
 * (--oversubscribe; --allow-run-as-root as root; CACHET_MPICC / CACHET_MPIRUN name other
 * programs, CACHET_MPI_TIMEOUT the seconds before the ranks are killed, default 300) on the
 * deterministic inputs of ct_kernel_run, which rank 0 scatters and gathers; the gathered
 * arrays are verified against the interpreter when o->verify (o may be NULL). grid: NULL (the
 * plan's grid= or MPI_Dims_create's) or ngrid ranks per distributed index. r: seconds is the
 * whole launch, compile_seconds the mpicc build, threads the OpenMP threads of each rank
 * (o->threads, else the processors over the ranks; OMP_NUM_THREADS of the ranks). report: NULL or receives
 * (malloc'd) the program's output: "grid PxQ", then per rank its exchange and compute seconds
 * and bytes sent and received. CT_ERR_UNSUPPORTED without Open MPI, CT_ERR_INPUT when k cannot
 * be distributed, CT_ERR_RUNTIME when a rank fails or the time runs out, CT_ERR_VERIFY. */
CT_API ct_status ct_kernel_run_ranks(CT_KEEP ct_kernel *k, CT_KEEP const ct_run_options *o, int ranks,
                                     CT_KEEP const int64_t *grid, int ngrid, CT_KEEP ct_run_result *r,
                                     CT_KEEP char **report);
/* Whether k's plan has distribute() (docs/DISTRIBUTED.md). */
CT_API int ct_kernel_is_distributed(CT_KEEP const ct_kernel *k);
/* The bytes each of `ranks` ranks of distributed kernel k sends (sent[r]) and receives
 * (received[r]) in one call: its halo messages before the block runs, and the partial sums
 * each sends to the rank that adds them (that rank receives one per other rank). grid as for
 * ct_kernel_run_ranks; dims (NULL or 3 entries) receives the ranks per axis (0 beyond them).
 * The generated program counts its messages the same way (its report), so a test can hold the
 * two side by side. */
CT_API ct_status ct_kernel_predict_ranks(CT_KEEP ct_kernel *k, int ranks, CT_KEEP const int64_t *grid,
                                         int ngrid, CT_KEEP int64_t *sent, CT_KEEP int64_t *received,
                                         CT_KEEP int64_t *dims);
/* What `cachet lower` shows of k's distribution: each array's alignment, halo and reductions,
 * and each rank's block and messages on a grid of `ranks` ranks (0: the plan's grid=, or 2 per
 * distributed index). Caller frees; NULL with the ctx's error. */
CT_API CT_GIVE char *ct_kernel_distribution_text(CT_KEEP ct_kernel *k, int ranks);
/* Relative tolerance used by verification for type t. */
CT_API double ct_dtype_tolerance(ct_dtype t);

/* ---------------------------------------------------------------- calling a kernel on your own buffers (src/engine/callable.c) */

/* A compiled kernel with a plain C entry point: no ct_tensor, no copies,
 * no verification. */
typedef struct ct_callable ct_callable;

/* Compile k (host code, through the kernel memo and the code cache as ct_kernel_run)
 * and return a handle to call it. The compile-time params are fixed now;
 * the runtime params are given at each call. k is kept: it must outlive
 * the handle (later ct_kernel_set_param calls on k do not change it).
 * Newly compiled code is checked against the interpreter on a test
 * instance before the handle is given (docs/LIBRARY.md, "Checked before
 * first use").
 * NULL with the ctx's error: CT_ERR_USAGE when k's params changed since its
 * last successful check, CT_ERR_UNSUPPORTED for an OpenCL or CUDA kernel,
 * CT_ERR_COMPILE, CT_ERR_VERIFY when the compiled code gives wrong results
 * (a suspected compiler bug), CT_ERR_NOMEM. Free with ct_callable_free
 * before k and its ctx. */
CT_API CT_GIVE ct_callable *ct_kernel_compile(CT_KEEP ct_kernel *k);
/* Run h once. args: one buffer per array of the kernel in declaration order,
 * temps left out (ct_callable_arg_count of them), each holding
 * ct_kernel_array_elements() elements in the array's declared layout (a
 * strided array is taken dense in that layout); the kernel reads inputs,
 * writes outputs and temps are its own. params: the values of the runtime
 * params in declaration order (ct_callable_param_count of them; may be NULL
 * when there are none), each at least 1. A buffer the kernel writes must not
 * overlap another one (the byte ranges of their dense sizes; inputs may
 * overlap each other). The call uses the ctx's CT_OPT_THREADS (read at compile
 * time). CT_ERR_USAGE (nothing run) for a NULL buffer, a missing params
 * array, a runtime value below 1 or a written buffer that overlaps another; CT_ERR_LIMIT when an array would exceed
 * 2^62 bytes; CT_ERR_NOMEM when the kernel could not allocate its temps and
 * cache buffers (outputs untouched). Errors go to the kernel's ctx, so call
 * from one thread at a time. */
CT_API ct_status ct_callable_call(CT_KEEP const ct_callable *h, CT_KEEP void *const *args,
				  CT_KEEP const int64_t *params);
/* Buffers and runtime values one call takes (0 for NULL). */
CT_API int ct_callable_arg_count(CT_KEEP const ct_callable *h);
CT_API int ct_callable_param_count(CT_KEEP const ct_callable *h);
/* Free h (NULL: no-op). The compiled code stays loaded in the ctx. */
CT_API void ct_callable_free(CT_TAKE ct_callable *h);

/* ---------------------------------------------------------------- generated code, kernel memo, packages (src/gen, src/engine) */

/* The name of plan target i (0, 1, ...: "host", "opencl", "cuda"), as
 * written in plan(target=NAME) and passed to ct_kernel_emit; NULL past the
 * last. The list is the library's table of targets (docs/ARCHITECTURE.md,
 * "Targets"). */
CT_API CT_KEEP const char *ct_target_name(int i);

/* The generated source of kernel k (scheduled and planned) for target
 * "host" (C; NULL means host), "opencl" (OpenCL C) or "cuda" (CUDA C); a
 * target other than the host needs a kernel of that plan target (or without
 * a plan). Returns a malloc'd NUL-terminated string the
 * caller frees with free(), its length in *len (may be NULL); NULL with an
 * error on the kernel's ctx. Runtime params stay symbolic (arguments). */
CT_API CT_GIVE char *ct_kernel_emit(CT_KEEP ct_kernel *k, CT_KEEP const char *target, CT_KEEP size_t *len);

/* The kernel memo of a ctx (in memory): a kernel's canonical form (names
 * alpha-renamed, so files differing only in index names share an entry)
 * -> its loaded entry points, so running the same kernel again emits and
 * compiles nothing. Bounded (default 256 entries), least recently used out
 * first. ct_kernel_run, ct_kernel_compile, ct_kernel_run_views and the
 * selector go through it. */
typedef struct ct_kernel_memo_info {
	int64_t entries, max_entries, hits, misses, evictions;
} ct_kernel_memo_info;
CT_API ct_status ct_kernel_memo_stats(CT_KEEP ct_ctx *ctx, CT_KEEP ct_kernel_memo_info *info);
/* Bound the kernel memo to entries (1..1048576), evicting the least
 * recently used ones now if it holds more. */
CT_API ct_status ct_kernel_memo_set_max(CT_KEEP ct_ctx *ctx, int64_t entries);

/* Build an ahead-of-time package of kernel k in folder dir (created if
 * missing): dir/NAME.h (the prototype, each argument's shape, type, layout
 * and role in a comment), dir/libNAME.a, dir/libNAME.so and the generated
 * dir/NAME.c, so a C program calls cachet_NAME with no cachet at run time.
 * Files are replaced atomically. Uses $CC (default cc) with the compile
 * policy (-O3 -march=native ...): the package is for this machine. The
 * library is checked against the interpreter before it ships:
 * CT_ERR_VERIFY, and no library left, when it gives wrong results. A
 * plan(target=opencl) or plan(target=cuda) kernel's package is instead its
 * device code with a C host wrapper (docs/OPENCL.md, docs/CUDA.md); a CUDA
 * package needs nvcc here (CT_ERR_UNSUPPORTED without it) and no CUDA
 * library where it runs. */
CT_API ct_status ct_kernel_build(CT_KEEP ct_kernel *k, CT_KEEP const char *dir);

/* ---------------------------------------------------------------- compile, load, module memo and code cache (src/jit) */
/* Generated C -> compiler -> dlopen. A ctx remembers each module it loaded
 * (its module memo, in memory) and shares compiled modules across processes
 * through the code cache (on disk, in the cache folder). */

/* A shared object of generated code, compiled by the system compiler and
 * loaded with dlopen(RTLD_NOW | RTLD_LOCAL). Owned by the ctx that loaded it:
 * valid until ct_ctx_free; every load of the same key in one ctx returns the
 * same module (the ctx's module memo: key -> module, in memory). */
typedef struct ct_module ct_module;

/* How generated code is compiled. The flags are always
 * -O3 -march=native -fPIC -shared [-fopenmp], then `flags`. */
typedef struct ct_compile_options {
	const char *cc;            /* compiler command: a program (searched on PATH) and optional
				    * fixed words, split on blanks, never given to a shell. NULL:
				    * the ctx's (ct_ctx_set_compiler), else $CC, else "cc" */
	int openmp;                /* add -fopenmp */
	const char *const *flags;  /* nflags extra flags, placed after the source file */
	int nflags;
	double timeout;            /* seconds the compiler may run (0 = 300) */
	int no_cache;              /* bypass the module memo and the code cache for this load */
} ct_compile_options;

/* Set o to the defaults (every field 0 / NULL). */
CT_API void ct_compile_options_init(CT_KEEP ct_compile_options *o);

/* How one load was satisfied. */
typedef struct ct_load_info {
	const char *how;           /* "memory" (the module memo), "disk" (the code cache) or
				      "compiled" (static string) */
	double seconds;            /* wall time of this load, the compile included on a miss */
	char key[33];              /* the key's XXH3-128 digest in hex (the entry's name on disk) */
} ct_load_info;

/* Compile C source src (len bytes, need not be NUL-terminated) with options o
 * (NULL = defaults) and load it, or fetch it from the code cache. The key is
 * the source, the compiler's resolved path (found on PATH), that file's size,
 * mtime and XXH3 hash (read once per compiler per ctx, so a wrapper script or
 * a compiler replaced in place is a new key) and --version text, the flags with
 * -march=native resolved to the CPU's features, the compiler's environment
 * (CPATH, C_INCLUDE_PATH, LIBRARY_PATH, GCC_EXEC_PREFIX, COMPILER_PATH), the
 * cachet version and the cache format. On success *out is the module and
 * info (if not NULL) says how it was found. CT_ERR_COMPILE when the source
 * does not compile or load: the message holds the compiler's output, and the
 * source is kept in a private folder whose path is the error's file
 * (ct_ctx_last_file; ct_ctx_last_line/col point at the first error). */
CT_API ct_status ct_module_load(CT_KEEP ct_ctx *ctx, CT_KEEP const char *src, size_t len,
				CT_KEEP const ct_compile_options *o, CT_KEEP ct_module **out,
				CT_KEEP ct_load_info *info);
/* Address of symbol name in module m, or NULL when absent. */
CT_API CT_KEEP void *ct_module_symbol(CT_KEEP ct_module *m, CT_KEEP const char *name);

/* Default compiler command of ctx (as ct_compile_options.cc); NULL restores
 * $CC / "cc". The string is copied. */
CT_API ct_status ct_ctx_set_compiler(CT_KEEP ct_ctx *ctx, CT_KEEP const char *cc);

/* Warnings of the code cache (a corrupt entry rebuilt, an unsafe folder not
 * used, a failed publish) go to fn(ud, message); without a handler they are
 * printed on stderr as "cachet: warning: ...". fn = NULL restores stderr. */
typedef void (*ct_warn_fn)(void *ud, const char *msg);
CT_API void ct_cache_set_warning_handler(CT_KEEP ct_ctx *ctx, ct_warn_fn fn, CT_KEEP void *ud);

/* The disk cache lives in dir (copied); NULL restores $CACHET_CACHE_DIR,
 * else ${XDG_CACHE_HOME:-~/.cache}/cachet. The folder is created with mode
 * 0700; one owned by another user or writable by group or others is not
 * used (a warning; loads still work, without the disk cache); below it the
 * same holds for every shard and entry folder and file (an entry that fails
 * is not loaded but rebuilt; an unsafe shard is not used). Tuning stores
 * (ct_store_open with dir NULL) and OpenCL binaries live in this folder under
 * the same rules. The ctx reads
 * CACHET_CACHE_DIR, CACHET_NO_CACHE (=1 bypasses the kernel memo, the module
 * memo and the code cache),
 * CACHET_CACHE_MAX_BYTES and CC when it first uses the code cache. */
CT_API ct_status ct_cache_set_dir(CT_KEEP ct_ctx *ctx, CT_KEEP const char *dir);
/* Size cap of the disk cache in bytes (0 = the default, 1 GiB). Over the cap,
 * the least recently used entries are removed (at most once a minute after a
 * compile, or now with ct_cache_prune). */
CT_API ct_status ct_cache_set_max_bytes(CT_KEEP ct_ctx *ctx, int64_t bytes);

/* The code cache as one ctx sees it, with the ctx's module memo: disk
 * totals are read from the folder, counters are this ctx's. */
typedef struct ct_cache_info {
	const char *path;          /* the cache folder (valid until the next call on ctx) */
	int disk_enabled;          /* 0: bypassed (CACHET_NO_CACHE) or refused (unsafe folder) */
	int64_t entries, bytes;    /* on disk now */
	int64_t max_bytes;         /* the size cap */
	int64_t memo_entries;      /* modules in this ctx's module memo */
	int64_t memo_hits;         /* loads answered by the module memo */
	int64_t disk_hits;         /* loads answered by the code cache */
	int64_t compiles;          /* loads that ran the compiler */
	int64_t corrupt;           /* bad entries found (removed and rebuilt) */
	int64_t evicted;           /* entries removed by the size cap */
	int64_t swept;             /* orphan temp folders removed */
} ct_cache_info;
CT_API ct_status ct_cache_stats(CT_KEEP ct_ctx *ctx, CT_KEEP ct_cache_info *info);
/* The cache folder (whether or not it is usable); valid until ctx is freed
 * or the folder is changed. "" when no folder can be named (no HOME). */
CT_API CT_KEEP const char *ct_cache_path(CT_KEEP ct_ctx *ctx);
/* Remove every disk entry. Loaded modules stay valid. */
CT_API ct_status ct_cache_clear(CT_KEEP ct_ctx *ctx);
/* Check every disk entry (key digest against its name, checksum of its
 * shared object); remove the bad ones and set *bad (if not NULL) to their
 * count. */
CT_API ct_status ct_cache_verify(CT_KEEP ct_ctx *ctx, CT_KEEP int64_t *bad);
/* Apply the size cap now and sweep orphan temp folders. */
CT_API ct_status ct_cache_prune(CT_KEEP ct_ctx *ctx);

/* ---------------------------------------------------------------- cache folders (src/jit) */

/* One folder (or family of files) that cachet writes in its cache folder
 * (ct_cache_path): "code-v1" (compiled kernels, the part ct_cache_info
 * counts and the size cap prunes), "blob-v1" (OpenCL program binaries),
 * "pocl-v1" (PoCL's own kernel cache, where the cachet tool points PoCL
 * when POCL_CACHE_DIR is unset) and "*.sqlite" (tuning stores). entries:
 * kernels, binaries, PoCL programs or stores; bytes: their files. */
typedef struct ct_cache_folder {
	const char *name; /* static */
	const char *what; /* static, one line */
	int64_t entries, bytes;
} ct_cache_folder;
/* Fill out[0 .. min(cap, n)) with each folder's totals read from disk now
 * and return n, the number of folders (4); -1 with the ctx's error when the
 * cache folder is not usable. ct_cache_clear empties every folder but the
 * tuning stores, and removes only names of the shapes cachet and PoCL
 * write (a user's own file in the cache folder is kept). */
CT_API int ct_cache_folders(CT_KEEP ct_ctx *ctx, CT_KEEP ct_cache_folder *out, int cap);

/* ---------------------------------------------------------------- OpenCL target (src/engine/ocl.c; devices: src/target) */

/* Kernels with plan(target=opencl) run through OpenCL: ct_kernel_run with
 * the native engine generates OpenCL C (ct_kernel_emit(k, "opencl")),
 * builds it on the first OpenCL device (CACHET_OPENCL_DEVICE: a substring
 * of the platform or device name picks another; CACHET_OPENCL_OPTIONS: build
 * options), keeps the program binary in the code cache folder, and reports
 * engine "opencl". libOpenCL.so.1 is loaded at first use: without it these
 * calls return CT_ERR_UNSUPPORTED with a message, and nothing else changes. */

/* Build OpenCL C source with options (NULL: none) on the OpenCL device, to
 * check it. CT_OK; CT_ERR_COMPILE with the device's build log in the ctx's
 * message; CT_ERR_UNSUPPORTED without OpenCL. */
CT_API ct_status ct_opencl_build(CT_KEEP ct_ctx *ctx, CT_KEEP const char *source, CT_KEEP const char *options);
/* Write "platform | version | device | driver | device version" of the
 * OpenCL device into buf (cap bytes, truncated). CT_ERR_UNSUPPORTED (and
 * buf "") without OpenCL. */
CT_API ct_status ct_opencl_device(CT_KEEP ct_ctx *ctx, CT_KEEP char *buf, size_t cap);

/* ---------------------------------------------------------------- CUDA target (src/engine/cuda.c; driver, NVRTC, devices: src/target) */

/* Kernels with plan(target=cuda) run through CUDA: ct_kernel_run with the
 * native engine generates CUDA C, compiles it to a cubin for the device's
 * architecture with NVRTC (else nvcc --cubin), keeps the cubin in the code
 * cache folder, runs it on the device CACHET_CUDA_DEVICE names (an index;
 * default 0), reports engine "cuda" and, as seconds, the kernel's time from
 * CUDA events. libcuda.so.1 and NVRTC are loaded at first use: without a
 * driver or a device these runs return CT_ERR_UNSUPPORTED with a message,
 * and nothing else changes. The probe lists the devices (CT_PROBE_CUDA). */

/* ---------------------------------------------------------------- tensor views (src/engine/tensor.c) */
/* Logical tensor indexing (docs/VIEWS.md). A ct_tensor maps the logical
 * indices a kernel uses onto a physical buffer: element (i0, ..., ir-1) lives
 * at data[origin + i0*stride0 + ... + ir-1*strider-1] (offsets and strides in
 * elements). A top-level tensor borrows a caller's buffer; a sub-view shares
 * its parent's buffer; a cached copy owns a buffer of its own (allocated
 * through the ctx) and is only logically nested in its parent, so that its
 * logical indices still cast to the parent's.
 *
 * Windows: besides its extents [0, extent), a view can address a larger
 * logical range, its window: a sub-view reaches its neighbours inside the
 * top-level tensor, a cached copy its halo. Element access, physical offsets
 * and casts accept any index inside the window.
 *
 * Errors: every function reports on the tensor's (or the given) ctx:
 * CT_ERR_USAGE for NULL handles or pointers, an index or dimension out of
 * range, a sub-view outside its parent, a copy on a view that is not cached,
 * a cast to a tensor that is not an ancestor, or freeing a tensor that still
 * has views; CT_ERR_INPUT for a bad element type, layout, dimension order,
 * rank below 1, negative extent, stride, halo or buffer size, a strided view
 * that leaves its buffer, or a value an integer tensor cannot hold;
 * CT_ERR_LIMIT for rank above CT_TENSOR_MAX_RANK, arithmetic overflow of a
 * size or offset, or a cache buffer above 16 GiB; CT_ERR_NOMEM when the
 * allocator fails. A tensor is used by one thread at a time, like its ctx. */

#define CT_TENSOR_MAX_RANK 8

typedef struct ct_tensor ct_tensor;

/* Dense layouts of a top-level tensor or of a cache buffer. */
typedef enum ct_tensor_layout {
	CT_TENSOR_ROW_MAJOR = 0, /* the last dimension is contiguous (C order) */
	CT_TENSOR_COL_MAJOR = 1  /* the first dimension is contiguous (Fortran order) */
} ct_tensor_layout;

/* A top-level tensor of type `type` and extents[0..rank-1] (each >= 0) over
 * data, laid out densely by layout. data (at least the product of the extents
 * elements) is borrowed for the life of the view and never freed by it; the
 * tensor keeps ctx. NULL on error. */
CT_API CT_GIVE ct_tensor *ct_tensor_new(CT_KEEP ct_ctx *ctx, CT_KEEP void *data, ct_dtype type,
					int rank, CT_KEEP const int64_t *extents,
					ct_tensor_layout layout);
/* As ct_tensor_new, laid out densely in dimension order order[0..rank-1], a
 * permutation of 0..rank-1 from the outermost (largest stride) to the
 * contiguous dimension: (0,1) is row-major, (1,0) column-major. */
CT_API CT_GIVE ct_tensor *ct_tensor_new_ordered(CT_KEEP ct_ctx *ctx, CT_KEEP void *data,
						ct_dtype type, int rank,
						CT_KEEP const int64_t *extents,
						CT_KEEP const int *order);
/* As ct_tensor_new, with explicit strides[0..rank-1] (>= 0, in elements; 0
 * repeats an element) and the physical offset origin (>= 0) of the logical
 * origin. Every element must lie inside data[0 .. data_elements-1]. */
CT_API CT_GIVE ct_tensor *ct_tensor_new_strided(CT_KEEP ct_ctx *ctx, CT_KEEP void *data,
						int64_t data_elements, ct_dtype type, int rank,
						CT_KEEP const int64_t *extents,
						CT_KEEP const int64_t *strides, int64_t origin);

/* The sub-view of parent whose logical origin is parent index offsets[] and
 * whose extents are extents[] (rank of the parent). The block must lie inside
 * the parent's extents. It shares the parent's buffer; the parent must
 * outlive it. NULL on error (recorded on the parent's ctx). */
CT_API CT_GIVE ct_tensor *ct_tensor_sub(CT_KEEP ct_tensor *parent, CT_KEEP const int64_t *offsets,
					CT_KEEP const int64_t *extents);
/* A cached copy of the block (offsets, extents) of parent (as ct_tensor_sub)
 * with halo_lo[d] / halo_hi[d] extra elements below / above the block on each
 * dimension d (NULL means no halo). The buffer, of extents[d] + halo_lo[d] +
 * halo_hi[d] per dimension laid out by layout, is allocated through the ctx
 * and zeroed; its logical indices run from -halo_lo[d] to
 * extents[d] + halo_hi[d] - 1. Halo that falls outside the data the parent
 * can supply (the top-level tensor's extents, or a cached ancestor's kept
 * halo) is clipped: it stays zero and is never copied; ct_tensor_halo tells
 * how much was kept per side. No data is copied until ct_tensor_copy_in. */
CT_API CT_GIVE ct_tensor *ct_tensor_cache(CT_KEEP ct_tensor *parent,
					  CT_KEEP const int64_t *offsets,
					  CT_KEEP const int64_t *extents,
					  CT_KEEP const int64_t *halo_lo,
					  CT_KEEP const int64_t *halo_hi, ct_tensor_layout layout);
/* Copy the block and its kept halo from the parent into the cached copy
 * cache, and zero its clipped halo. CT_ERR_USAGE if cache is not cached. */
CT_API ct_status ct_tensor_copy_in(CT_KEEP ct_tensor *cache);
/* Copy the interior (the block, no halo) of cache back into its parent;
 * nothing else of the parent changes. CT_ERR_USAGE if cache is not cached. */
CT_API ct_status ct_tensor_copy_out(CT_KEEP ct_tensor *cache);
/* Free t (and the buffer of a cached copy; never a borrowed one). A tensor
 * that still has views is not freed: CT_ERR_USAGE. ct_tensor_free(NULL) is a
 * no-op returning CT_OK. */
CT_API ct_status ct_tensor_free(CT_TAKE ct_tensor *t);

/* Index casting: out[] = the logical index in ancestor of t's logical index
 * idx[] (inside t's window). ancestor may be t itself, any tensor up t's
 * parent chain (through cached copies too), or NULL for the top-level
 * tensor. out may alias idx; it is written only on success. */
CT_API ct_status ct_tensor_cast(CT_KEEP const ct_tensor *t, CT_KEEP const ct_tensor *ancestor,
				CT_KEEP const int64_t *idx, CT_KEEP int64_t *out);
/* *offset = the physical offset, in elements from ct_tensor_data(t), of
 * logical index idx[] (inside t's window). */
CT_API ct_status ct_tensor_offset(CT_KEEP const ct_tensor *t, CT_KEEP const int64_t *idx,
				  CT_KEEP int64_t *offset);
/* Read element idx[] (inside t's window) as a double, for tests and tools. */
CT_API ct_status ct_tensor_get(CT_KEEP const ct_tensor *t, CT_KEEP const int64_t *idx,
			       CT_KEEP double *value);
/* Write value to element idx[] (inside t's window). Integer tensors take the
 * value truncated toward zero and refuse NaN, infinities and values out of
 * their range; f32 tensors refuse finite values beyond FLT_MAX (CT_ERR_INPUT). */
CT_API ct_status ct_tensor_set(CT_KEEP ct_tensor *t, CT_KEEP const int64_t *idx, double value);

/* Accessors. A NULL t gives NULL, 0 or -1 without recording anything; a
 * dimension d outside 0..rank-1 gives -1 (or CT_ERR_USAGE) on the ctx. */
CT_API CT_KEEP ct_ctx *ct_tensor_get_ctx(CT_KEEP const ct_tensor *t);
/* The buffer that ct_tensor_offset indexes (owned by the view when cached). */
CT_API CT_KEEP void *ct_tensor_data(CT_KEEP const ct_tensor *t);
/* Element type (CT_F32 for NULL), rank (0 for NULL). */
CT_API ct_dtype ct_tensor_dtype(CT_KEEP const ct_tensor *t);
CT_API int ct_tensor_rank(CT_KEEP const ct_tensor *t);
CT_API int64_t ct_tensor_extent(CT_KEEP const ct_tensor *t, int d);
CT_API int64_t ct_tensor_stride(CT_KEEP const ct_tensor *t, int d);
/* Physical offset of the logical origin (0, ..., 0) in ct_tensor_data(t). */
CT_API int64_t ct_tensor_origin(CT_KEEP const ct_tensor *t);
/* Number of logical elements (the product of the extents). */
CT_API int64_t ct_tensor_elements(CT_KEEP const ct_tensor *t);
/* Logical index in the parent of t's origin along d (0 for a top-level one). */
CT_API int64_t ct_tensor_parent_offset(CT_KEEP const ct_tensor *t, int d);
/* The parent (NULL for a top-level tensor) and the top-level tensor (t itself
 * for a top-level one); both borrowed. */
CT_API CT_KEEP ct_tensor *ct_tensor_parent(CT_KEEP const ct_tensor *t);
CT_API CT_KEEP ct_tensor *ct_tensor_root(CT_KEEP const ct_tensor *t);
/* 1 for a cached copy (own buffer), 0 otherwise. */
CT_API int ct_tensor_is_cached(CT_KEEP const ct_tensor *t);
/* Number of live views (sub-views and cached copies) whose parent is t. */
CT_API int64_t ct_tensor_child_count(CT_KEEP const ct_tensor *t);
/* Halo of a cached copy along d: *lo / *hi elements kept below / above the
 * block (copied from the parent); 0 for other views. */
CT_API ct_status ct_tensor_halo(CT_KEEP const ct_tensor *t, int d, CT_KEEP int64_t *lo,
				CT_KEEP int64_t *hi);
/* Halo of a cached copy along d that was asked for but clipped (zero-filled,
 * never copied) below / above the block; 0 for other views. */
CT_API ct_status ct_tensor_clipped(CT_KEEP const ct_tensor *t, int d, CT_KEEP int64_t *lo,
				   CT_KEEP int64_t *hi);
/* The window along d: logical indices lo <= i < hi that t can address. */
CT_API ct_status ct_tensor_window(CT_KEEP const ct_tensor *t, int d, CT_KEEP int64_t *lo,
				  CT_KEEP int64_t *hi);

/* ---------------------------------------------------------------- kernels on views (src/engine/views.c) */
/* Run kernel k once on views: views[i] is array i's tensor, in declaration
 * order (temps: NULL, ignored). The kernel's subscripts and `if` tests are
 * logical indices of each view's top-level tensor (ct_tensor_root), whose
 * extents must equal the array's declared ones: a view is cast to them
 * (index casting), so the kernel may run on a sub-view, a sub-view of a
 * sub-view or a cached copy with a halo, and its boundary tests still
 * speak of the whole tensor. Every element the kernel may access (its
 * subscripts' ranges over the loops, narrowed by one-index `if` atoms) must
 * lie in the view's window (ct_tensor_window). An array declared `strided`
 * takes any strides and base offset, passed at run time; any other array's
 * view must be the dense buffer of its top-level tensor in the declared
 * layout (its strides are compiled in). Views written by the kernel must
 * not overlap other views. o (NULL: ct_run_options_init's defaults) gives
 * the engine (CT_ENGINE_NATIVE: generated code, through the kernel memo and
 * the code cache; or CT_ENGINE_INTERP) and the threads; the kernel runs
 * once on the caller's data, so repeat and verify are not used, and
 * checked with the native engine is CT_ERR_UNSUPPORTED (the interpreter
 * always tests); with the native engine an OpenCL or CUDA kernel is
 * CT_ERR_UNSUPPORTED (its host C never runs in the device's place).
 * CT_ERR_USAGE for a missing or mismatched view or an access outside a
 * window, else the engine's errors. */
CT_API ct_status ct_kernel_run_views(CT_KEEP ct_kernel *k, CT_KEEP ct_tensor *const *views,
				     CT_KEEP const ct_run_options *o);

/* ---------------------------------------------------------------- cache model and simulator (src/model) */

#define CT_SIM_MAX_LEVELS 8

/* Misses of one access reference (an array access of one statement) per level. */
typedef struct ct_sim_ref {
	const char *array;        /* owned by the kernel */
	int stmt;                 /* statement number (1..; 0 for a let) */
	int is_write;
	int64_t misses[CT_SIM_MAX_LEVELS];
} ct_sim_ref;

typedef struct ct_sim_result {
	int64_t accesses;
	int nlevels;
	struct {
		int64_t size, line, ways, misses;
	} level[CT_SIM_MAX_LEVELS];
	double seconds;           /* time of the simulation itself */
	int nrefs;
	ct_sim_ref *refs;         /* free with ct_sim_result_free */
} ct_sim_result;

/* Simulate kernel k (every runtime param set) exactly: its scheduled loop
 * tree's address trace (CLI.md conventions: arrays on their own line-aligned
 * regions, fixed access order in a statement) through LRU caches given by
 * spec ("SIZE:LINE[:WAYS],...", NULL = this machine's caches). Each level
 * sees the whole access stream. */
CT_API ct_status ct_kernel_simulate(CT_KEEP ct_kernel *k, CT_KEEP const char *spec, CT_KEEP ct_sim_result *r);
CT_API void ct_sim_result_free(CT_KEEP ct_sim_result *r);

/* The analytical model's count for one array (all of its references: the
 * model attributes reuse per array, see docs/MODEL.md). */
typedef struct ct_model_ref {
	const char *array;        /* owned by the result (cache buffers: the cache's name) */
	int stmt;                 /* first statement that accesses it (1..; 0 for a copy-only buffer) */
	int nrefs;                /* references of the kernel to it */
	int exact;                /* 1 when every partition of it was decided exactly */
	int64_t accesses;
	int64_t misses[CT_SIM_MAX_LEVELS];
} ct_model_ref;

/* Where ct_kernel_predict's count of a level comes from. The model predicts
 * fully associative levels, and set-associative ones (more than one set)
 * exactly by simulating its own loop tree with warping (docs/MODEL.md);
 * where it cannot (accesses it cannot express exactly, or past its work
 * budget), a set-associative level is simulated exactly when the kernel
 * makes at most CT_PREDICT_SIM_MAX accesses (its per-array counts too), and
 * otherwise predicted as if fully associative, which misses its conflict
 * misses. */
typedef enum ct_count_source {
	CT_SOURCE_MODEL = 0,      /* the model (set-associative: its simulation with warping, exact) */
	CT_SOURCE_SIMULATOR = 1,  /* set-associative: the exact simulator (exact) */
	CT_SOURCE_FA_ESTIMATE = 2, /* set-associative, trace too long: the model as if fully associative (not exact) */
	CT_SOURCE_AFFINE_ESTIMATE = 3 /* loops with affine bounds, trace too long to simulate: the model
	                                 with each affine loop's trip count averaged over pieces of the
	                                 loops its bounds use, every level as if fully associative (not
	                                 exact) */
} ct_count_source;
#define CT_PREDICT_SIM_MAX ((int64_t)1 << 21)

/* Why ct_kernel_predict simulated a level. A fully associative level is
 * simulated when the kernel makes at most CT_PREDICT_FA_SIM_MAX accesses and
 * the model cannot decide its count exactly, or (ct_kernel_predict, not
 * ct_kernel_predict_refs) the model's analysis would take longer than
 * simulating: then every level is simulated. */
typedef enum ct_fallback_reason {
	CT_FALLBACK_NONE = 0,      /* the model's count (or its fully associative estimate) */
	CT_FALLBACK_SET_ASSOC = 1, /* a set-associative level */
	CT_FALLBACK_INEXACT = 2,   /* the model's count would not have been exact */
	CT_FALLBACK_BUDGET = 3,    /* the model's analysis went over its work budget */
	CT_FALLBACK_AFFINE = 4     /* loops with affine bounds, which the model does not analyse yet */
} ct_fallback_reason;
#define CT_PREDICT_FA_SIM_MAX ((int64_t)1 << 20)
/* A kernel with affine loop bounds is simulated (every level exact, fallback
 * CT_FALLBACK_AFFINE) when its trace has at most this many accesses, and
 * estimated by the model beyond (CT_SOURCE_AFFINE_ESTIMATE). */
#define CT_PREDICT_AFFINE_SIM_MAX ((int64_t)1 << 26)

typedef struct ct_predict_result {
	int64_t accesses;
	int nlevels;
	struct {
		int64_t size, line, ways, misses;
		int exact;            /* 1 when the count is exact (never for CT_SOURCE_FA_ESTIMATE and
		                         CT_SOURCE_AFFINE_ESTIMATE) */
	} level[CT_SIM_MAX_LEVELS];
	double seconds;           /* time of the model itself */
	int narrays;
	ct_model_ref *arrays;     /* free with ct_predict_result_free */
	ct_count_source source[CT_SIM_MAX_LEVELS]; /* where each level's counts come from */
	double simulate_seconds;  /* time of the fallback simulation (0 without one) */
	/* why a level with source CT_SOURCE_SIMULATOR was simulated (CT_FALLBACK_NONE for the others) */
	ct_fallback_reason fallback[CT_SIM_MAX_LEVELS];
} ct_predict_result;

/* Predict the misses of kernel k (every runtime param set) for the LRU
 * levels of spec (as ct_kernel_simulate; NULL = this machine's caches)
 * with the stack-distance model (docs/MODEL.md), without walking the
 * trace: the counts of reuse partitions come from footprints of loop
 * iterations and their distances from the footprints between source and
 * target. Set-associative levels are counted by the model's simulation
 * with warping, simulated, or predicted as fully associative: r->source
 * says which (ct_count_source). */
CT_API ct_status ct_kernel_predict(CT_KEEP ct_kernel *k, CT_KEEP const char *spec, CT_KEEP ct_predict_result *r);
CT_API void ct_predict_result_free(CT_KEEP ct_predict_result *r);

/* Most threads ct_kernel_predict_threads splits a kernel over. */
#define CT_PREDICT_MAX_THREADS 4096

/* ct_kernel_predict_threads's counts: each core's own misses on the levels
 * private to a core, and the misses of all threads' accesses together on
 * the shared ones (docs/MODEL.md, "Threads"). */
typedef struct ct_thread_result {
	int nthreads;             /* T as asked */
	int team;                 /* most threads any parallel band uses (1: all work on thread 0) */
	int parallel;             /* 1 when the plan parallelizes a loop the run reaches */
	int assumed;              /* 1 when a band is split as a static omp for although its code
	                             does not fix the split (policy=dynamic, spmd=true) */
	int64_t accesses;         /* all threads together */
	int64_t *thread_accesses; /* [nthreads] */
	int nlevels;
	struct {
		int64_t size, line, ways;
		int plru;             /* 1: tree-PLRU, 0: LRU */
		int private_level;    /* 1: one per core (thread_misses), 0: shared by all */
		int exact;            /* 1 when every count of the level is exact */
		int64_t misses;       /* private: the sum over threads; shared: all threads together */
		int64_t *thread_misses; /* private: [nthreads]; NULL for a shared level */
		const char *why;      /* not exact: why (static text); NULL otherwise */
	} level[CT_SIM_MAX_LEVELS];
	double seconds;
} ct_thread_result;

/* Predict the misses of kernel k run by `threads` threads (1..
 * CT_PREDICT_MAX_THREADS) on the levels of spec (as ct_kernel_predict; a
 * level's `:private`/`:shared` mark, unmarked: every level but the last is
 * private): each parallel band of the plan is split as the generated code's
 * `omp for schedule(static)` splits it, everything else runs on thread 0;
 * a private level's misses are counted per thread over that thread's own
 * accesses, a shared level's over all threads' accesses interleaved one at a
 * time in turn between the bands' barriers (an assumption: real threads do
 * not keep step). A kernel without parallelize puts all its work on thread
 * 0 (parallel = 0). Free r with ct_thread_result_free. */
CT_API ct_status ct_kernel_predict_threads(CT_KEEP ct_kernel *k, CT_KEEP const char *spec, int threads,
                                           CT_KEEP ct_thread_result *r);
CT_API void ct_thread_result_free(CT_KEEP ct_thread_result *r);

/* Options of the tile-size search; ct_tiles_options_init sets the defaults. */
typedef struct ct_tiles_options {
	int64_t max_tile;         /* largest tile tried for any index (0 = the index's
	                             extent, or 1024 when the extent is a runtime param) */
	int max_evals;            /* tiles analysed at most (0 = 4096) */
	int keep;                 /* candidates kept in the result (0 = 10) */
	int64_t probe[2];         /* values runtime params without a value take to tell which
	                             stack distances depend on them (0 = 4096 and 8192) */
} ct_tiles_options;

/* The defaults: every field 0. */
CT_API void ct_tiles_options_init(CT_KEEP ct_tiles_options *o);

/* One tiling: a tile size per searched index and its predicted misses. */
typedef struct ct_tiles_candidate {
	int64_t *tiles;           /* [nindices], owned by the result */
	int64_t misses[CT_SIM_MAX_LEVELS]; /* the model's count per level of the spec */
	int64_t misses_max[CT_SIM_MAX_LEVELS]; /* its upper bound (= misses when exact): what ranks */
	int exact;                /* 1 when every level's count is exact */
} ct_tiles_candidate;

typedef struct ct_tiles_result {
	int nindices;             /* tile params searched */
	const char **params;      /* [nindices] their names (owned by the kernel; array by the result) */
	const char **indices;     /* [nindices] the index each one splits (the first, if several) */
	int nlevels;
	struct {
		int64_t size, line, ways;
	} level[CT_SIM_MAX_LEVELS];
	int rank_level;           /* the level whose misses rank first (the smallest) */
	int runtime_bounds;       /* 1: some runtime param had no value, so only the stack
	                             distances that do not depend on the bounds were used */
	int64_t evaluated;        /* tilings the model analysed */
	int ncandidates;          /* at most o->keep */
	ct_tiles_candidate *candidates; /* best first */
	double seconds;           /* time of the whole search */
	int simulated;            /* 1: the kernel has loops with affine bounds, which the model does
	                             not analyse yet: every tiling was counted by the exact simulator
	                             (its counts exact, as ct_kernel_predict's CT_FALLBACK_AFFINE) */
	double simulate_seconds;  /* simulated: the time of those simulations (/ evaluated: per tiling) */
	int64_t accesses;         /* simulated: the trace length of the last tiling simulated */
} ct_tiles_result;

/* Search tile sizes for kernel k as the Tensor Contraction Engine does
 * (docs/MODEL.md, "Tile search"): the tiles are the compile-time params
 * that are, as written, the sizes of split/tile in k's schedule
 * (`param TA = 16` ... `tile(a=TA)`). Candidates on a coarse grid; keep
 * those that cannot grow in any index without one more reuse partition's
 * stack distance reaching a level's capacity; refine around them with
 * smaller steps; re-analyse the best with the full model; drop tilings
 * that a larger one predicts no worse; rank by the predicted misses of the
 * smallest level (their upper bound where the model is not exact), then of
 * the next ones; ties: larger tiles first. Runtime params without a value are unknown bounds:
 * then a partition whose stack distance changes with them counts as a
 * miss. A kernel with affine loop bounds has every tiling counted by the
 * exact simulator instead (r->simulated): its runtime params need values
 * (CT_ERR_USAGE otherwise), and a tiling whose trace passes 2^26 accesses
 * stops the search (CT_ERR_LIMIT, naming the tiling). spec as
 * ct_kernel_predict; o NULL = defaults. k is left as it
 * was. CT_ERR_INPUT (at the kernel's name) when no tile param exists. */
CT_API ct_status ct_kernel_tiles(CT_KEEP ct_kernel *k, CT_KEEP const char *spec,
                                 CT_KEEP const ct_tiles_options *o, CT_KEEP ct_tiles_result *r);
CT_API void ct_tiles_result_free(CT_KEEP ct_tiles_result *r);

/* ---------------------------------------------------------------- per-reference misses (src/model/perref.c) */

/* What carries the reuse whose misses dominate a reference's capacity
 * misses at one level (docs/MODEL.md's reuse partitions). */
typedef enum ct_carrier {
	CT_CARRIER_NONE = 0,     /* no capacity misses at this level */
	CT_CARRIER_LOOP = 1,     /* an earlier iteration of the loop `carried_by` */
	CT_CARRIER_SIBLING = 2,  /* an earlier child of one iteration of loop `carried_by` (NULL: of the run) */
	CT_CARRIER_STMT = 3,     /* an earlier access of the same statement execution */
	CT_CARRIER_CONFLICT = 4, /* a set-associative level counted exactly (simulated or warped):
	                            misses beyond the cold ones where a fully associative cache
	                            would have none (conflicts) */
	CT_CARRIER_UNKNOWN = 5   /* capacity or conflict misses counted by the simulator alone
	                            (CT_SPLIT_SIMULATED): what carries them is not known */
} ct_carrier;

/* How a reference's counts were obtained from the model's per-array counts. */
typedef enum ct_ref_split {
	CT_SPLIT_MODEL = 0,      /* the array's only reference: the model's own counts */
	CT_SPLIT_SIM = 1,        /* the array's counts shared out by an exact simulation's per-reference counts */
	CT_SPLIT_ACCESSES = 2,   /* shared out by accesses (the trace was too long to simulate) */
	CT_SPLIT_SIMULATED = 3   /* loops with affine bounds (a trace of at most 2^26 accesses):
	                            the exact simulator's own counts of the reference */
} ct_ref_split;

/* One array reference of the source: an access of a statement or let (the
 * read and the write of an `op=` element are one reference). */
typedef struct ct_ref_misses {
	const char *array;        /* owned by the kernel */
	int stmt;                 /* statement number (1..; 0 for a let) */
	int line, col;            /* source position of the access (1-based; 0 = unknown) */
	int is_write;             /* 0 read, 1 store, 2 read-modify-write (op=) */
	ct_ref_split split;       /* how its counts were obtained */
	int64_t accesses;
	int64_t misses[CT_SIM_MAX_LEVELS];   /* predicted misses per level */
	int64_t cold[CT_SIM_MAX_LEVELS];     /* of which compulsory; the rest are capacity misses */
	ct_carrier carrier[CT_SIM_MAX_LEVELS]; /* what carries the array's largest missing reuse */
	const char *carried_by[CT_SIM_MAX_LEVELS]; /* loop index name, owned by the kernel; NULL if none */
} ct_ref_misses;

typedef struct ct_ref_table {
	const char *file;         /* the kernel's source file, owned by the kernel (may be NULL) */
	int nrefs;
	ct_ref_misses *refs;      /* sorted by misses (first level, then the next), then by position */
} ct_ref_table;

/* Predict the misses of kernel k as ct_kernel_predict does (filling r, which
 * the caller frees with ct_predict_result_free) and also per source
 * reference (filling t, freed with ct_ref_table_free). The model attributes
 * reuse per array: an array with one reference gives it the model's counts;
 * the counts of an array with several references are shared out in
 * proportion to an exact simulation's per-reference counts when the kernel
 * makes at most sim_max accesses (sim_max < 0: 16M), otherwise in
 * proportion to their accesses; `split` says which. The references' misses
 * add up to the array's and so to r's per-level totals. A kernel with affine
 * loop bounds has every row counted by the exact simulator (CT_SPLIT_SIMULATED,
 * carrier CT_CARRIER_UNKNOWN where misses are not all cold) up to 2^26
 * accesses; past that, where ct_kernel_predict estimates
 * (CT_SOURCE_AFFINE_ESTIMATE), the rows share out the estimate's per-array
 * counts as above (CT_SPLIT_MODEL, or CT_SPLIT_ACCESSES: nothing is
 * simulated), and where it refuses, so does this (CT_ERR_LIMIT); sim_max is
 * not used for them. On error both are left empty. */
CT_API ct_status ct_kernel_predict_refs(CT_KEEP ct_kernel *k, CT_KEEP const char *spec, int64_t sim_max,
                                        CT_KEEP ct_predict_result *r, CT_KEEP ct_ref_table *t);
CT_API void ct_ref_table_free(CT_KEEP ct_ref_table *t);

/* The model's misses of kernel k as formulas in its runtime params (which
 * need no values; `cachet predict --symbolic`, docs/MODEL.md "Symbolic
 * formulas"): per level and per array, a piecewise quasi-polynomial (a
 * polynomial on a lattice of the params, with the chambers where a reuse's
 * stack distance reaches the capacity), and the count and stack distance of
 * each reuse class. A kernel outside the class the formulas cover is not an
 * error: the output says "unsupported: REASON" (JSON: "supported": false).
 * spec as ct_kernel_predict. Returns the text (CT_FORMAT_TEXT) or one JSON
 * object and a newline (CT_FORMAT_JSON), malloc'd, the caller frees it with
 * free(); NULL with an error on the kernel's ctx. */
CT_API CT_GIVE char *ct_kernel_predict_symbolic(CT_KEEP ct_kernel *k, CT_KEEP const char *spec,
                                                ct_format format);

/* ---------------------------------------------------------------- hardware probe (src/target) */

/* Where a probed value came from (printed next to it by ct_probe_print). */
typedef enum ct_probe_source {
	CT_SRC_DEFAULT = 0, /* a portable default: nothing better was found */
	CT_SRC_HWLOC = 1,   /* the hwloc topology */
	CT_SRC_SYSFS = 2,   /* /sys/devices/system/cpu */
	CT_SRC_CPUID = 3,   /* the cpuid instruction (x86) */
	CT_SRC_OS = 4,      /* sysconf, sched_getaffinity, uname */
	CT_SRC_MEASURED = 5 /* a microbenchmark */
} ct_probe_source;

/* Static name of a source ("hwloc", "sysfs", ...; never NULL). */
CT_API CT_KEEP const char *ct_probe_source_name(ct_probe_source s);

/* Vector ISA extensions usable by this process: the CPU has them AND the OS
 * saves their registers (xgetbv), so code using them will not fault. The
 * bits of ct_probe_info.isa. */
enum ct_isa_bit {
	CT_ISA_SSE2 = 1 << 0,
	CT_ISA_SSE3 = 1 << 1,
	CT_ISA_SSSE3 = 1 << 2,
	CT_ISA_SSE41 = 1 << 3,
	CT_ISA_SSE42 = 1 << 4,
	CT_ISA_AVX = 1 << 5,
	CT_ISA_AVX2 = 1 << 6,
	CT_ISA_FMA = 1 << 7,
	CT_ISA_F16C = 1 << 8,
	CT_ISA_AVX512F = 1 << 9,
	CT_ISA_AVX512CD = 1 << 10,
	CT_ISA_AVX512DQ = 1 << 11,
	CT_ISA_AVX512BW = 1 << 12,
	CT_ISA_AVX512VL = 1 << 13,
	CT_ISA_AVX512VNNI = 1 << 14,
	CT_ISA_AVX512BF16 = 1 << 15,
	CT_ISA_AVX512FP16 = 1 << 16,
	CT_ISA_AVXVNNI = 1 << 17,
	CT_ISA_NEON = 1 << 24 /* AArch64 Advanced SIMD (architectural there) */
};

/* Static name of one CT_ISA_* bit ("avx512f"), "" for anything else. */
CT_API CT_KEEP const char *ct_isa_name(uint32_t bit);

#define CT_PROBE_MAX_CACHES 6

/* One level of data (or unified) cache, as seen by one core. */
typedef struct ct_cache_level {
	int level;          /* 1 = closest to the core */
	int64_t size;       /* bytes of one instance */
	int line;           /* line size in bytes (a power of two) */
	int ways;           /* associativity; 0 = fully associative or unknown */
	int shared_by;      /* hardware threads sharing one instance (0 = unknown) */
	int instances;      /* instances in the machine (0 = unknown) */
	double latency_ns;  /* load-to-use latency by pointer chase; 0 = not measured */
	ct_probe_source source;
	int64_t reported_size; /* what hwloc/sysfs/cpuid said, when CT_PROBE_MEASURE_CAPACITY
	                          found far less usable (size is then the measured one and
	                          source CT_SRC_MEASURED); 0 = size is as reported */
} ct_cache_level;

#define CT_PROBE_MAX_OPENCL 8

/* One OpenCL device as the probe lists it (CT_PROBE_OPENCL). */
typedef struct ct_opencl_devinfo {
	char platform[64];   /* CL_PLATFORM_NAME ("Portable Computing Language") */
	char name[128];      /* CL_DEVICE_NAME */
	char type[16];       /* "cpu", "gpu", "accelerator" or "other" */
	char version[128];   /* CL_DEVICE_VERSION ("OpenCL 3.0 PoCL ...") */
	char driver[64];     /* CL_DRIVER_VERSION */
	int compute_units;   /* CL_DEVICE_MAX_COMPUTE_UNITS */
	int64_t max_work_group; /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
	int64_t local_mem;   /* CL_DEVICE_LOCAL_MEM_SIZE, bytes */
	int64_t global_mem;  /* CL_DEVICE_GLOBAL_MEM_SIZE, bytes */
} ct_opencl_devinfo;

#define CT_PROBE_MAX_CUDA 8

/* One CUDA device as the probe lists it (CT_PROBE_CUDA): the driver's
 * attributes, and with CT_PROBE_MEASURE_BANDWIDTH / _FLOPS also measured
 * rates (0 = not measured; note says why). */
typedef struct ct_cuda_devinfo {
	char name[128];      /* cuDeviceGetName ("NVIDIA H200") */
	int index;           /* the driver's ordinal (CACHET_CUDA_DEVICE) */
	int cc_major, cc_minor; /* compute capability */
	char arch[16];       /* the code architecture cachet compiles for ("sm_90a") */
	int driver_version;  /* cuDriverGetVersion (13000 = CUDA 13.0) */
	int sms;             /* streaming multiprocessors */
	int warp;            /* threads per warp */
	int max_threads_block, max_threads_sm;
	int64_t shared_block;       /* static shared memory per block, bytes */
	int64_t shared_block_optin; /* per block with the opt-in attribute, bytes */
	int64_t shared_sm;          /* shared memory per SM, bytes */
	int regs_block, regs_sm;    /* 32-bit registers */
	int64_t l2;          /* L2 cache, bytes */
	int64_t global_mem;  /* device memory, bytes */
	int clock_mhz;       /* SM clock (the driver's peak figure) */
	int mem_clock_mhz;   /* memory clock */
	int bus_width;       /* memory bus, bits */
	double copy_gbs;     /* measured device-to-device copy, GB/s of bytes read + written */
	double gflops_f32;   /* measured fp32 FMA peak, all SMs */
	char note[160];      /* why the rates were not measured ("" when they were or were not asked) */
} ct_cuda_devinfo;

/* The target description: what the model, the emitter and the tuner read.
 * A plain value (copy it freely). Measured fields are 0 until measured. */
typedef struct ct_probe_info {
	char device_id[96]; /* names the tuning store: vendor-model-<cores>c, [a-z0-9_-] only */
	char identity[768]; /* everything a tuned result depends on, cachet version included */
	char vendor[32];    /* "AuthenticAMD", "GenuineIntel", ... or "unknown" */
	char model[80];     /* marketing name, blanks collapsed */
	char arch[24];      /* uname machine: "x86_64", "aarch64" ... */
	int family, model_number, stepping; /* x86 signature (0 elsewhere) */
	ct_probe_source vendor_source;
	int cores;          /* physical cores of the machine */
	int hw_threads;     /* hardware threads of the machine */
	int cpus_allowed;   /* CPUs this process may run on (sched_getaffinity) */
	ct_probe_source cores_source;
	int ncaches;
	ct_cache_level caches[CT_PROBE_MAX_CACHES]; /* by level, sizes increasing */
	uint32_t isa;       /* CT_ISA_* bits */
	ct_probe_source isa_source;
	int vector_bytes;   /* widest usable vector register, bytes (8 = scalar only) */
	int vector_registers; /* architectural vector registers */
	int fma_units;      /* vector FMAs issued per cycle and core */
	int fma_latency;    /* cycles from one dependent FMA to the next */
	ct_probe_source fma_source; /* CT_SRC_MEASURED once the flops were measured */
	/* microbenchmarks (only those asked for with CT_PROBE_MEASURE_*) */
	unsigned measured;  /* CT_PROBE_MEASURE_* bits done */
	double ghz;         /* core clock estimated during the run (0 = unknown) */
	double gflops_f32_core, gflops_f64_core; /* FMA peak of one core */
	double gflops_f32_all, gflops_f64_all;   /* FMA peak of all threads together */
	int threads_measured; /* threads used for the *_all numbers */
	double copy_gbs_core, copy_gbs_all; /* copy bandwidth, GB/s of bytes read + written */
	int64_t copy_bytes; /* size of each copied array */
	double mem_latency_ns; /* main-memory latency by pointer chase */
	double measure_seconds; /* wall time the microbenchmarks took */
	/* OpenCL devices: listed only when asked (CT_PROBE_OPENCL), because
	 * starting an OpenCL platform can take a noticeable time */
	int opencl_probed;  /* 1 once the devices were listed (nopencl may still be 0) */
	int nopencl;        /* devices in opencl[] (0: no OpenCL, or none found) */
	ct_opencl_devinfo opencl[CT_PROBE_MAX_OPENCL];
	/* CUDA devices: listed only when asked (CT_PROBE_CUDA; the driver is
	 * loaded with dlopen), measured with CT_PROBE_MEASURE_* too */
	int cuda_probed;     /* 1 once the devices were listed (ncuda may still be 0) */
	int ncuda;           /* devices in cuda[] (0: cuda_reason says why) */
	char cuda_reason[256]; /* why there is none ("CUDA: no NVIDIA driver: ...") */
	ct_cuda_devinfo cuda[CT_PROBE_MAX_CUDA];
} ct_probe_info;

/* Flags of ct_probe_run (or'ed into its unsigned flags). */
enum ct_probe_flag {
	CT_PROBE_MEASURE_FLOPS = 1 << 0,     /* FMA peak f32/f64: one core, all cores (~0.3 s) */
	CT_PROBE_MEASURE_BANDWIDTH = 1 << 1, /* copy bandwidth over arrays >> last-level cache */
	CT_PROBE_MEASURE_LATENCY = 1 << 2,   /* pointer chase per cache level and memory */
	CT_PROBE_MEASURE_CAPACITY = 1 << 5,  /* the last level's usable size, by pointer chases over
	                                        doubling sizes (virtual machines report sizes no core
	                                        can use); ~0.1 s */
	CT_PROBE_MEASURE = 0x27,             /* all four */
	CT_PROBE_OPENCL = 1 << 3,            /* list the OpenCL devices (libOpenCL loaded with dlopen) */
	CT_PROBE_CUDA = 1 << 4,              /* list the CUDA devices (libcuda loaded with dlopen); with
	                                        MEASURE_BANDWIDTH / MEASURE_FLOPS also their copy bandwidth
	                                        and fp32 peak (kernels compiled with NVRTC) */
	CT_PROBE_REFRESH = 1 << 8,           /* forget the ctx's result and probe again */
	CT_PROBE_NO_HWLOC = 1 << 9,          /* do not ask hwloc (on a fresh probe) */
	CT_PROBE_NO_SYSFS = 1 << 10          /* do not read sysfs (on a fresh probe) */
};

/* Probe the machine once per ctx (later calls reuse the ctx's result) and run
 * the microbenchmarks named in flags that have not run yet on this ctx; copy
 * the result to *out when out is not NULL. Detection never fails for lack of
 * hwloc or sysfs (the fallbacks are marked by their source); errors are
 * CT_ERR_NOMEM or CT_ERR_LIMIT. */
CT_API ct_status ct_probe_run(CT_KEEP ct_ctx *ctx, unsigned flags, CT_KEEP ct_probe_info *out);
/* Print the ctx's probe (probing first, without microbenchmarks, if needed;
 * call ct_probe_run with CT_PROBE_MEASURE before to include them) for
 * `cachet probe`, as every printer (ct_format). */
CT_API ct_status ct_probe_print(CT_KEEP ct_ctx *ctx, ct_format format, CT_KEEP FILE *out);
/* The stable device id of this machine (probing if needed); owned by ctx,
 * valid until ctx is freed. NULL on failure. */
CT_API CT_KEEP const char *ct_device_id(CT_KEEP ct_ctx *ctx);

/* ---------------------------------------------------------------- tuning store (src/tune/store.c) */

/* One tuning result: the best schedule found for a kernel family, element
 * type and size class on this device. Strings are NUL-terminated. */
typedef struct ct_tune_record {
	const char *family;     /* canonical kernel key without sizes */
	ct_dtype dtype;
	const char *size_class; /* "M=1024:N=1024:K=1024" or a class name */
	const char *params;     /* canonical schedule/plan text or JSON (opaque here) */
	double seconds;         /* measured time (0 = not measured: worst) */
	double gflops;
	int verified;           /* 1 verified, 0 mismatch, -1 not verified */
	const char *tuner_version;
	int64_t timestamp;      /* unix seconds of the measurement (0 on put = now) */
	/* set by reads, ignored by ct_store_put: */
	const char *cachet_version; /* the cachet that wrote the record */
	int trusted;            /* 0: stale (other cachet version, device identity or
				   parameter names), re-measure before relying on it */
} ct_tune_record;

/* The per-device tuning store: one SQLite file <dir>/<device-id>.sqlite,
 * safe for concurrent tuners and readers (processes). */
typedef struct ct_store ct_store;

/* Flags of ct_store_open (or'ed into its unsigned flags). */
enum ct_store_flag {
	CT_STORE_READONLY = 1, /* never write (no folder, no schema, no set-aside) */
	CT_STORE_QUIET = 2     /* keep warnings in ct_store_warnings, not on stderr */
};

/* Open the store of this device in dir (NULL: the code cache's folder,
 * ct_cache_path), creating the folder (0700) and the file as needed. A
 * folder or store file that group or others may write, or that another user
 * owns, is neither read nor written (a warning; reads find nothing, puts
 * fail with CT_ERR_IO), as for the code cache. A corrupt or foreign file is renamed <file>.bad-<timestamp> with
 * a warning and a fresh store is used. Never fails for I/O reasons: a store
 * that cannot be written opens read-only (or empty) with a warning, and
 * ct_store_put then fails with CT_ERR_IO. NULL only on CT_ERR_NOMEM/USAGE. */
CT_API CT_GIVE ct_store *ct_store_open(CT_KEEP ct_ctx *ctx, CT_KEEP const char *dir,
				       unsigned flags);
/* Close s; ct_store_close(NULL) is a no-op. */
CT_API void ct_store_close(CT_TAKE ct_store *s);
/* Path of the store file (owned by s). */
CT_API CT_KEEP const char *ct_store_path(CT_KEEP const ct_store *s);
/* 1 if ct_store_put can write, else 0. */
CT_API int ct_store_writable(CT_KEEP const ct_store *s);
/* Warnings since open, one per line ("" if none); owned by s. */
CT_API CT_KEEP const char *ct_store_warnings(CT_KEEP const ct_store *s);
/* Insert r, or update the record with the same (family, dtype, size_class)
 * if r is better: a stale or damaged old record is always replaced, else
 * verified beats not verified beats mismatch, then the shorter time wins.
 * *stored (if not NULL) says whether r was kept. r's strings are copied. */
CT_API ct_status ct_store_put(CT_KEEP ct_store *s, CT_KEEP const ct_tune_record *r,
			      CT_KEEP int *stored);
/* Look up one record exactly. *found = 0 if there is none (or only a damaged
 * one, skipped with a warning). out's strings are owned by s and stay valid
 * until the next get/list/print on s. */
CT_API ct_status ct_store_get(CT_KEEP ct_store *s, CT_KEEP const char *family, ct_dtype dtype,
			      CT_KEEP const char *size_class, CT_KEEP ct_tune_record *out,
			      CT_KEEP int *found);
/* All records of family (NULL: every family) and *dtype (NULL: every type),
 * sorted by family, type, size class, for nearest-size-class selection and
 * `cachet tune --show`. *recs is owned by s, valid until the next
 * get/list/print on s. Damaged records are skipped with a warning. */
CT_API ct_status ct_store_list(CT_KEEP ct_store *s, CT_KEEP const char *family, CT_KEEP const ct_dtype *dtype,
			       CT_KEEP const ct_tune_record **recs, CT_KEEP int *n);
/* Print the records of family (NULL: all) as an aligned table or one JSON
 * object {"path", "device_id", "writable", "records": [...]}, as every
 * printer (ct_format). */
CT_API ct_status ct_store_print(CT_KEEP ct_store *s, CT_KEEP const char *family, ct_format format,
				CT_KEEP FILE *out);
/* Write the records of family (NULL: all) to the file path as JSON
 * {"format": "cachet-tune-export", "version": 1, "device_id", "device",
 * "records": [...]}, each record naming the device id and description it was
 * measured on. CT_ERR_IO when path cannot be written. */
CT_API ct_status ct_store_export(CT_KEEP ct_store *s, CT_KEEP const char *family,
				 CT_KEEP const char *path);
/* Read an export file into s (opened writable). Records of another device id
 * are refused (CT_ERR_INPUT, nothing after the first such record is read)
 * unless force; forced ones, and records of another cachet version, are
 * kept stale (the selector uses them as nearest only, never over a trusted
 * record of this machine) with "from=<device id>" after the params' ';'.
 * Each record replaces the store's only when it is better (ct_store_put).
 * *imported (may be NULL) gets how many were kept, *total how many were read. */
CT_API ct_status ct_store_import(CT_KEEP ct_store *s, CT_KEEP const char *path, int force,
				 CT_KEEP int *imported, CT_KEEP int *total);

/* ---------------------------------------------------------------- tuner and solution selector (src/tune; param candidates: src/ir) */
/* `param T = 64 tune {..}` params, ct_tune, ct_select (docs/TUNE.md). */

/* The candidate values of param i (`tune {...}` or `tune lo..hi step s` in the
 * file): their count, 0 for a param that is not tunable, and *values (may be
 * NULL; owned by k, increasing, the default among them). */
CT_API int ct_kernel_param_candidates(CT_KEEP const ct_kernel *k, int i,
				      CT_KEEP const int64_t **values);

/* How the store names k's tuning problem: family = kernel name + "-" + the
 * XXH3-64 (hex) of the canonical kernel with every param value left out (so
 * every size and tile shares it), size_class = the values of the size params
 * (compile-time params that are neither tunable nor derived, and runtime
 * params with a value) as "M=256:N=256:K=256", dtype = the type of the first
 * output/inout array. Strings are written into the caller's buffers. */
CT_API ct_status ct_kernel_tune_key(CT_KEEP ct_kernel *k, CT_KEEP char *family, size_t nfamily,
				    CT_KEEP char *size_class, size_t nclass, CT_KEEP ct_dtype *dtype);

/* Options of ct_tune; ct_tune_options_init sets the defaults. */
struct ct_tune_result;
typedef struct ct_tune_options {
	double budget;          /* wall seconds for the whole tuning, ranking, measuring,
				   re-timing and the reference checks included (0 = 60) */
	double fraction;        /* 0: measure in the model's order (corrected by the
				   measurements) until the budget or the space ends; > 0:
				   at most this share of the valid ones (at least 1) */
	int exhaustive;         /* measure every valid candidate (benchmarks) */
	int no_default;         /* do not measure the file's default point first (it is
				   otherwise the first of the measured ones, as the baseline) */
	int verify;             /* check each measured candidate against the interpreter
				   on a small instance; a wrong one is discarded (default 1) */
	int64_t verify_max;     /* the small instance: each size param capped to this (0 = 67) */
	int repeat;             /* least timed runs per timing (more until they last 50 ms, after
				   one untimed warm-up run); the median counts (0 = 3) */
	int threads;            /* threads of parallel loops while timing (0 = the ctx's) */
	const char *cache_spec; /* levels for the model (NULL = this machine's caches) */
	const char *store_dir;  /* store folder (NULL = the cachet cache folder) */
	int no_store;           /* do not write the winner */
	/* called after each candidate ranked or measured (may be NULL) */
	ct_progress_fn progress;
	void *progress_ud;
	/* called after each candidate measured (may be NULL): r as it stands,
	   the candidate's index, the seconds of the budget left; same ud */
	void (*on_measure)(void *ud, const struct ct_tune_result *r, int cand, double left_s);
	int check_only;         /* only check k, the sizes and the arrays' total (no ranking) */
	int no_resume;          /* re-measure points an earlier run of these sizes measured */
} ct_tune_options;
CT_API void ct_tune_options_init(CT_KEEP ct_tune_options *o);

/* One point of the candidate space. */
typedef struct ct_tune_candidate {
	int64_t *values;        /* [nparams] in the order of ct_tune_result.params */
	double cost;            /* the tuner's cost in ns: max(core_ns, memory_ns) (docs/TUNE.md) */
	int64_t misses[CT_SIM_MAX_LEVELS]; /* predicted misses per level */
	int measured;           /* 1: compiled and timed */
	double seconds;         /* median measured time (0: not measured) */
	double gflops;
	int verified;           /* 1 ok, 0 wrong (discarded), -1 not verified */
	double core_ns;         /* the cost's parts: the core's issue time (register tiles, */
	double memory_ns;       /* loads, FMAs) and misses x weight; cost = the larger */
	int abandoned;          /* 1: its first run was over CT_TUNE_ABANDON x the best: not timed further */
	int resumed;            /* 1: measured by an earlier run (the store's points), not here */
	double at_seconds;      /* when it was measured, seconds after tuning began (0: resumed) */
} ct_tune_candidate;
/* A candidate whose first (warm-up) run takes more than this many times the
 * best median so far is abandoned (docs/TUNE.md). */
#define CT_TUNE_ABANDON 2.0

/* Why ct_tune_result.best is what it is. */
typedef enum ct_tune_decision {
	CT_TUNE_NO_DEFAULT = 0,      /* the default point was not measured (no_default, or it
					failed): the fastest candidate */
	CT_TUNE_DEFAULT_FASTEST = 1, /* no candidate was faster than the default in the search */
	CT_TUNE_DEFAULT_KEPT = 2,    /* one looked faster, but not by more than the spread of the
					interleaved re-timings: the default is kept */
	CT_TUNE_REPLACED = 3         /* the re-timings confirmed the candidate faster */
} ct_tune_decision;

/* Where the tuner's ranking takes each point's misses from: the cache model;
 * for a kernel with affine loop bounds (which the model does not analyse
 * yet) the exact simulator when simulating every point fits in a quarter of
 * the budget, otherwise none (the core cost alone ranks the points). */
typedef enum ct_tune_memory {
	CT_TUNE_MEMORY_MODEL = 0,
	CT_TUNE_MEMORY_SIMULATOR = 1,
	CT_TUNE_MEMORY_NONE = 2
} ct_tune_memory;

typedef struct ct_tune_result {
	int nparams;
	const char **params;    /* [nparams] names of the tunable params (owned by the kernel) */
	char family[96], size_class[256];
	ct_dtype dtype;
	int nlevels;
	double weight_ns[CT_SIM_MAX_LEVELS]; /* cost of one (overlapped) miss of each level (docs/TUNE.md) */
	int64_t space;          /* candidates enumerated */
	int ncandidates;        /* valid ones (checked and modelled), best model cost first */
	ct_tune_candidate *candidates;
	int nmeasured, nwrong;  /* timed; discarded by verification */
	int best;               /* index of the fastest verified candidate, -1 if none */
	int stored;             /* 1: written to the store (it beat what was there) */
	int budget_hit;         /* 1: the budget stopped measuring early */
	char store_path[512];
	double model_seconds, measure_seconds, seconds;
	/* how the winner was chosen (docs/TUNE.md, "Keeping the hand-written point") */
	int default_index;      /* the default point's candidate (measured first), -1 if none */
	ct_tune_decision decision; /* how best was chosen; also written into the store record */
	int challenger;         /* the candidate re-timed against the default, -1 if none */
	int confirm_rounds;     /* interleaved re-timings of the challenger and the default */
	double confirm_gain;    /* median over them of default time / candidate time, minus 1 */
	double confirm_spread;  /* the median absolute deviation of those ratios */
	int64_t final_verify_size; /* largest size of the winner's final check (0: not run) */
	double budget;          /* the budget in seconds (seconds / budget = the share used) */
	int nabandoned;         /* abandoned after their first run */
	int nresumed;           /* measured by an earlier run, read from the store */
	int nremeasured;        /* the fastest few timed again at the end */
	double rank_agreement;  /* Kendall's tau of model cost and measured time (1: same order) */
	int reranked;           /* 1: the measurements re-ranked the unmeasured candidates */
	double best_found_seconds; /* when the winner was first measured (0: resumed) */
	int store_readonly;     /* 1: nothing was stored because the store cannot be written
	                           (read-only folder or file: ct_store_writable is 0) */
	ct_tune_memory memory_source; /* where the ranking's misses come from (docs/TUNE.md) */
} ct_tune_result;

/* "no-default", "default", "default-kept", "tuned" ("?" otherwise). */
CT_API CT_KEEP const char *ct_tune_decision_name(ct_tune_decision d);
/* "model", "simulator", "none" ("?" otherwise). */
CT_API CT_KEEP const char *ct_tune_memory_name(ct_tune_memory m);

/* Tune k's tunable params for k's current sizes: enumerate the product of
 * their candidate values, drop the combinations the checks refuse, rank all
 * the others by the cache model's cost, compile and time the best
 * floor(fraction * valid) of them (at least 1) (all with exhaustive; the file's default
 * point first, counted among them, unless no_default) within the budget,
 * verify each against the interpreter on a small instance, and write the
 * winner to the per-device store. The default point (the tunable params'
 * values when ct_tune is called) is always measured; a faster candidate
 * replaces it only when interleaved re-timings of the two confirm it faster
 * by more than their spread (decision; docs/TUNE.md). k is left as it was.
 * CT_ERR_INPUT (at the kernel's name) when k has no tunable param,
 * CT_ERR_LIMIT when the space exceeds 1,000,000 points. */
CT_API ct_status ct_tune(CT_KEEP ct_kernel *k, CT_KEEP const ct_tune_options *o,
			 CT_KEEP ct_tune_result *r);
CT_API void ct_tune_result_free(CT_KEEP ct_tune_result *r);
/* Print r as a table or one JSON object, as every printer (ct_format). */
CT_API ct_status ct_tune_print(CT_KEEP const ct_tune_result *r, ct_format format, CT_KEEP FILE *out);

/* ---------------------------------------------------------------- automatic schedules and plans (src/tune/auto.c) */

/* Options of ct_kernel_autoschedule; ct_auto_options_init sets the defaults. */
typedef struct ct_auto_options {
	int threads;            /* threads the plan is for (0 = the CPUs this process may use) */
	double budget;          /* 0: model only, no kernel is measured; > 0: wall seconds in
				   which the tuner measures the model's best tile sizes */
	const char *cache_spec; /* cache levels (ct_kernel_simulate's spec) the model and every
				   cache-derived choice use (NULL = this machine's caches) */
	const char *store_dir;  /* the tuner's store with a budget (NULL = the cache folder) */
	ct_progress_fn progress; /* the tuner's progress with a budget (may be NULL) */
	void *progress_ud;
} ct_auto_options;
/* The defaults: every field 0. */
CT_API void ct_auto_options_init(CT_KEEP ct_auto_options *o);

/* Choose a schedule and a plan for kernel k (parsed from text, checked,
 * every runtime param set; target host) from its nests, this machine's
 * description (the probe, or the ctx's CT_OPT_VECTOR_BYTES) and the cache
 * model (docs/AUTO.md): loop order from reuse, register and cache tiles
 * for sums (tile params with `tune` lists, picked by the model), vector
 * and parallel loops where no dependence is carried. A schedule or plan
 * the file has is kept. *text (malloc'd, the caller frees it; *len its
 * length when len is not NULL) is the whole file, comments on each choice
 * included; it checks. It has k's arrays, in order, and may add temps
 * after them (a copy a triangle's blocks read an operand through); it may
 * rewrite the loops, so verify its runs against k (ct_run_options.reference). With o->budget > 0 the tuner measures the tile
 * params (ct_tune) and the file takes the fastest verified point; with 0
 * no kernel is measured (the probe may measure the last cache level's
 * usable size where a choice turns on it: CT_PROBE_MEASURE_CAPACITY, once
 * per ctx). o NULL = defaults. k is left as it was.
 * CT_ERR_INPUT for a kernel of another target. */
CT_API ct_status ct_kernel_autoschedule(CT_KEEP ct_kernel *k, CT_KEEP const ct_auto_options *o,
					CT_KEEP char **text, CT_KEEP size_t *len);

/* The run-time solution selector of one kernel: reads the store once, keeps
 * its records and every answer in memory, so a repeated ct_select costs a
 * hash lookup. */
typedef struct ct_selector ct_selector;

/* Where a solution's values came from. */
typedef enum ct_select_source {
	CT_SELECT_EXACT = 0,   /* a verified store record of these sizes */
	CT_SELECT_NEAREST = 1, /* the record of the nearest size class */
	CT_SELECT_MODEL = 2,   /* no record: the model's best candidate */
	CT_SELECT_FILE = 3     /* no record: the kernel's own values (ct_selector_fallback) */
} ct_select_source;
CT_API CT_KEEP const char *ct_select_source_name(ct_select_source s);

#define CT_SELECT_MAX_PARAMS 16
#define CT_SELECT_MAX_PIECES 64

/* One subproblem: for each param of the kernel its value in this piece
 * (sizes and tiles) and, for a size param, the offset of the piece. */
typedef struct ct_select_piece {
	int64_t value[CT_SELECT_MAX_PARAMS * 4];
	int64_t offset[CT_SELECT_MAX_PARAMS * 4];
} ct_select_piece;

/* What to run for one problem. */
typedef struct ct_solution {
	ct_select_source source;
	int ntuned;                        /* tunable params */
	int tuned[CT_SELECT_MAX_PARAMS];   /* their param numbers */
	int64_t values[CT_SELECT_MAX_PARAMS]; /* their chosen values */
	const char *size_class;            /* the record's class ("" for the model); owned by the selector */
	int npieces;                       /* main piece first, then the tails */
	const ct_select_piece *pieces;     /* owned by the selector */
} ct_solution;

/* A selector for k (kept; it must outlive the selector) reading the store in
 * store_dir (NULL = the cachet cache folder; a missing or unreadable store
 * means no records). NULL on CT_ERR_NOMEM, CT_ERR_INPUT when k has no
 * tunable param, CT_ERR_LIMIT when it has more than CT_SELECT_MAX_PARAMS
 * tunable ones or more than 4 * CT_SELECT_MAX_PARAMS params in all
 * (cachet run then runs the file's own values). */
CT_API CT_GIVE ct_selector *ct_selector_new(CT_KEEP ct_kernel *k, CT_KEEP const char *store_dir);
CT_API void ct_selector_free(CT_TAKE ct_selector *s);
/* What s answers for sizes the store has no record of (neither exact nor
 * of a size class): CT_SELECT_MODEL (the default), the model's best
 * candidate, or CT_SELECT_FILE, the kernel's own values of its tunable
 * params in one piece (its own tail loops take the sizes that are not
 * multiples of its tiles, as a run with every value set does): what
 * cachet run --auto asks, auto's values being derived from the machine
 * already (docs/AUTO.md). Answers given before are forgotten.
 * CT_ERR_USAGE for another source. */
CT_API ct_status ct_selector_fallback(CT_KEEP ct_selector *s, ct_select_source fallback);
/* The solution for the sizes sizes[0..nsizes-1] (the values of k's size
 * params in declaration order, as ct_kernel_tune_key names them): the
 * verified record of exactly these sizes, else the record of the nearest
 * size class (the least sum of |log2| ratios of the sizes), else the
 * model's best candidate. Where a size is not a multiple of its tile and
 * the index it sizes can be cut (docs/TUNE.md), the problem is cut into a
 * main piece (the multiples) and tail pieces. sol's pointers are owned by s
 * and valid until s is freed. */
CT_API ct_status ct_select(CT_KEEP ct_selector *s, CT_KEEP const int64_t *sizes, int nsizes,
			   CT_KEEP ct_solution *sol);
/* Run sol on buffers (one per array of the kernel, as ct_interp_run takes
 * them, for the sizes it was selected for): each piece is compiled (or
 * fetched from the kernel memo or the code cache, and checked against the
 * interpreter before its first use) and run in order on its block of the
 * arrays. A plan(target=opencl) or plan(target=cuda) kernel is
 * CT_ERR_UNSUPPORTED (its pieces would be host code; ct_kernel_run_selected
 * runs it on the device).
 * k's params are left as they were. */
CT_API ct_status ct_solution_run(CT_KEEP ct_selector *s, CT_KEEP const ct_solution *sol,
				 CT_KEEP void *const *buffers);
/* Run k (the selector's kernel, with its current sizes) as cachet run does:
 * select the solution for its sizes (into *sol), run it on deterministic
 * inputs o->repeat times (after one untimed run that loads its pieces) and
 * verify it against the unscheduled interpreter when o->verify. Only the
 * native engine, unchecked (o->checked set: CT_ERR_UNSUPPORTED); a
 * plan(target=opencl) or plan(target=cuda) kernel runs whole on its
 * target's engine at the selected values (r->engine "opencl", "cuda"). */
CT_API ct_status ct_kernel_run_selected(CT_KEEP ct_selector *s, CT_KEEP const ct_run_options *o,
					CT_KEEP ct_run_result *r, CT_KEEP ct_solution *sol);

#ifdef __cplusplus
}
#endif
#endif
