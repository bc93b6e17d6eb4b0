/* cachet.h: the whole public API of libcachet (loop nests -> cache-aware kernels). */
#ifndef CACHET_H
#define CACHET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CACHET_VERSION "0.1.0"

/* Ownership annotations (as in isl). They expand to nothing; they document who
 * frees what:
 *   CT_GIVE  the function returns an object the caller must free;
 *   CT_TAKE  the function takes over the argument (the caller must not use it again);
 *   CT_KEEP  the function only borrows the argument for the duration of the call
 *            (or, for a ctx, for the lifetime of the object it creates). */
#define CT_GIVE
#define CT_TAKE
#define CT_KEEP

#if defined(__GNUC__)
#define CT_API __attribute__((visibility("default")))
#else
#define CT_API
#endif

/* ---------------------------------------------------------------- status */

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
CT_API const char *ct_strerror(ct_status s);

/* ---------------------------------------------------------------- context */

/* realloc-style allocator hook (as in Lua): ptr == NULL allocates, size == 0
 * frees and returns NULL, otherwise resizes. Must return NULL on failure. */
typedef void *(*ct_alloc_fn)(void *ud, void *ptr, size_t size);

typedef struct ct_ctx ct_ctx;

/* Create a context with the default allocator (malloc/realloc/free). NULL on
 * out-of-memory. A context is used by one thread at a time. */
CT_API CT_GIVE ct_ctx *ct_ctx_new(void);
/* Create a context whose every allocation goes through fn(ud, ...). */
CT_API CT_GIVE ct_ctx *ct_ctx_new_with_alloc(ct_alloc_fn fn, void *ud);
/* Free a context and everything it still caches. ct_ctx_free(NULL) is a no-op.
 * Objects created from ctx must be freed before it. */
CT_API void ct_ctx_free(CT_TAKE ct_ctx *ctx);

/* The last error recorded on ctx: status, message ("" when none), and for
 * errors about an input file its name ("" when unknown), line and column
 * (1-based; 0 when unknown). Pointers stay valid until the next call on ctx. */
CT_API ct_status ct_ctx_last_status(CT_KEEP const ct_ctx *ctx);
CT_API const char *ct_ctx_last_message(CT_KEEP const ct_ctx *ctx);
CT_API const char *ct_ctx_last_file(CT_KEEP const ct_ctx *ctx);
CT_API int ct_ctx_last_line(CT_KEEP const ct_ctx *ctx);
CT_API int ct_ctx_last_col(CT_KEEP const ct_ctx *ctx);
/* Forget the last error and all diagnostics. */
CT_API void ct_ctx_clear_error(CT_KEEP ct_ctx *ctx);

/* Diagnostics of the last parse/check (several errors per run). Each is
 * rendered as "file:line:col: error: message" followed by the source line and
 * a caret; the string stays valid until the next parse on ctx. */
CT_API int ct_ctx_diag_count(CT_KEEP const ct_ctx *ctx);
CT_API const char *ct_ctx_diag_render(CT_KEEP ct_ctx *ctx, int i);

/* Integer options of a context. */
typedef enum ct_option {
	CT_OPT_THREADS = 1,     /* threads for native kernels (0 = all cores) */
	CT_OPT_MAX_ERRORS = 2,  /* diagnostics kept per parse (default 20) */
	CT_OPT_SEED = 3         /* seed of deterministic input data (default 1) */
} ct_option;
CT_API ct_status ct_ctx_set_option(CT_KEEP ct_ctx *ctx, ct_option opt, int64_t value);
CT_API int64_t ct_ctx_get_option(CT_KEEP const ct_ctx *ctx, ct_option opt);

/* ---------------------------------------------------------------- kernels */

typedef enum ct_dtype { CT_F32 = 0, CT_F64 = 1, CT_I32 = 2, CT_I64 = 3 } ct_dtype;
typedef enum ct_role {
	CT_INPUT = 0, CT_OUTPUT = 1, CT_INOUT = 2, CT_TEMP = 3, CT_CONST = 4
} ct_role;

/* Size in bytes and name ("f32" ...) of an element type. */
CT_API size_t ct_dtype_size(ct_dtype t);
CT_API const char *ct_dtype_name(ct_dtype t);
CT_API const char *ct_role_name(ct_role r);

typedef struct ct_kernel ct_kernel;

/* Parse and check the .cachet text (length len, need not be NUL-terminated).
 * file names the source in diagnostics. Returns NULL and records diagnostics
 * on ctx when the text has errors. The kernel keeps ctx. */
CT_API CT_GIVE ct_kernel *ct_kernel_parse(CT_KEEP ct_ctx *ctx, CT_KEEP const char *text,
					  size_t len, CT_KEEP const char *file);
/* Read FILE and parse it (as ct_kernel_parse). */
CT_API CT_GIVE ct_kernel *ct_kernel_parse_file(CT_KEEP ct_ctx *ctx, CT_KEEP const char *path);
CT_API void ct_kernel_free(CT_TAKE ct_kernel *k);

/* Override param `name` (compile-time or runtime) with value. Must be called
 * before lowering; the kernel is re-checked with the new sizes by
 * ct_kernel_recheck (out-of-bounds subscripts may appear or vanish). */
CT_API ct_status ct_kernel_set_param(CT_KEEP ct_kernel *k, CT_KEEP const char *name, int64_t value);
/* Re-run the semantic checks with the current param values. */
CT_API ct_status ct_kernel_recheck(CT_KEEP ct_kernel *k);

CT_API const char *ct_kernel_name(CT_KEEP const ct_kernel *k);
CT_API int ct_kernel_param_count(CT_KEEP const ct_kernel *k);
CT_API const char *ct_kernel_param_name(CT_KEEP const ct_kernel *k, int i);
/* Value of param i; 0 and *is_set = 0 for a runtime param not given yet. */
CT_API int64_t ct_kernel_param_value(CT_KEEP const ct_kernel *k, int i, CT_KEEP int *is_set);
CT_API int ct_kernel_param_is_runtime(CT_KEEP const ct_kernel *k, int i);

CT_API int ct_kernel_array_count(CT_KEEP const ct_kernel *k);
CT_API const char *ct_kernel_array_name(CT_KEEP const ct_kernel *k, int i);
CT_API ct_dtype ct_kernel_array_dtype(CT_KEEP const ct_kernel *k, int i);
CT_API ct_role ct_kernel_array_role(CT_KEEP const ct_kernel *k, int i);
CT_API int ct_kernel_array_rank(CT_KEEP const ct_kernel *k, int i);
/* Extent of dimension d of array i under the current params; -1 if it
 * depends on a runtime param that has no value yet. */
CT_API int64_t ct_kernel_array_extent(CT_KEEP const ct_kernel *k, int i, int d);
/* Number of elements of array i (-1 as above). */
CT_API int64_t ct_kernel_array_elements(CT_KEEP const ct_kernel *k, int i);

CT_API int ct_kernel_index_count(CT_KEEP const ct_kernel *k);
CT_API const char *ct_kernel_index_name(CT_KEEP const ct_kernel *k, int i);

/* Floating-point operations of one run (a multiply-add counts 2), -1 if
 * runtime params are unset. */
CT_API double ct_kernel_flops(CT_KEEP const ct_kernel *k);

/* ---------------------------------------------------------------- loop tree */

typedef struct ct_looptree ct_looptree;

/* Build the scheduled loop tree (splits, tails, reorders; later the plan's
 * cache regions). with_schedule = 0 gives the unscheduled reference order.
 * Every runtime param must have a value. */
CT_API CT_GIVE ct_looptree *ct_kernel_lower(CT_KEEP ct_kernel *k, int with_schedule);
CT_API void ct_looptree_free(CT_TAKE ct_looptree *t);
/* Print the loop tree as pseudo-code (json = 0) or as one JSON object
 * (json = 1). Returns a NUL-terminated string the caller frees with free(). */
CT_API CT_GIVE char *ct_looptree_print(CT_KEEP ct_looptree *t, int json);

/* ---------------------------------------------------------------- interpreter */

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
CT_API ct_status ct_interp_trace(CT_KEEP ct_looptree *t, ct_trace_fn fn, void *ud);

/* ---------------------------------------------------------------- data */

/* Fill buffer (n elements of type t) with deterministic pseudo-random values
 * in [-1, 1] (integers in [-8, 8]) from seed and stream. */
CT_API void ct_fill_random(void *buffer, ct_dtype t, int64_t n, uint64_t seed, uint64_t stream);
/* Largest relative error between got and want (n elements); the error of an
 * element is |got-want| / max(1, |want|). */
CT_API double ct_max_rel_error(const void *got, const void *want, ct_dtype t, int64_t n);

/* ---------------------------------------------------------------- code generation (src/gen) */
/* @@gen-api */

/* ---------------------------------------------------------------- compile, load and code cache (src/jit) */
/* @@jit-api */

/* ---------------------------------------------------------------- cache model and simulator (src/model) */
/* @@model-api */

#ifdef __cplusplus
}
#endif
#endif
