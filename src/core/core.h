/* core.h: the context, error reporting, arenas and growable arrays every module uses. */
#ifndef CT_CORE_H
#define CT_CORE_H

#include "cachet.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_INTERN __attribute__((visibility("hidden")))

#define CT_MAX_CLEANUPS 8

/* One diagnostic of a parse or check. */
typedef struct ct_diag {
	int line, col;     /* 1-based; 0 when unknown */
	char *msg;         /* owned (ctx allocator) */
} ct_diag;

struct ct_ctx {
	ct_alloc_fn alloc;
	void *alloc_ud;
	/* last error */
	ct_status status;
	char msg[1024];
	char file[512];
	int line, col;
	/* diagnostics of the last parse */
	ct_diag *diags;
	int ndiags, cap_diags;
	int ndropped;      /* diagnostics past max_errors, counted but not kept */
	char *src;         /* copy of the last parsed text, for caret lines */
	size_t src_len;
	char *rendered;    /* last ct_ctx_diag_render result */
	/* options */
	int64_t threads, max_errors, seed, vector_bytes;
	int64_t branching; /* CT_OPT_BRANCHING: 1 = guarded copies and boundary ifs as written */
	int64_t sim_max_accesses; /* CT_OPT_SIM_MAX_ACCESSES (0: no limit) */
	/* later modules hang their state here (kernel memo, code cache, target)
	 * and register a cleanup with ct_ctx_on_free */
	void *kernel_memo;
	void *code_cache;
	void *target;
	void *opencl; /* src/engine/ocl.c: the open device and the programs loaded in this ctx */
	void *cuda;   /* src/engine/cuda.c: the open CUDA device, NVRTC and the modules loaded in this ctx */
	/* ct_ctx_set_progress; phase names the step under way that reports
	 * (NULL: none; src/engine sets it around the reference run) */
	ct_progress_fn progress;
	void *progress_ud;
	const char *progress_phase;
	void (*cleanup[CT_MAX_CLEANUPS])(ct_ctx *);
};

/* Threads a parallel loop uses: want when > 0, else the ctx's CT_OPT_THREADS
 * when set, else one per online processor; clamped to 1..4096. The one rule
 * the tuner's cost, the native runner and callables share. */
CT_INTERN int ct_ctx_threads(const ct_ctx *ctx, int64_t want);

/* Register fn to run when ctx is freed (once per fn; false if full). */
CT_INTERN bool ct_ctx_on_free(ct_ctx *ctx, void (*fn)(ct_ctx *));

/* Memory through the ctx hook. ct_alloc returns zeroed memory; all report
 * CT_ERR_NOMEM on ctx and return NULL on failure. ct_free(ctx, NULL) is a no-op. */
CT_INTERN void *ct_alloc(ct_ctx *ctx, size_t size);
CT_INTERN void *ct_realloc(ct_ctx *ctx, void *p, size_t size);
CT_INTERN void ct_free(ct_ctx *ctx, void *p);
CT_INTERN char *ct_strdup(ct_ctx *ctx, const char *s);

/* Record an error on ctx (returns status, for `return ct_error(...)`). */
CT_INTERN ct_status ct_error(ct_ctx *ctx, ct_status status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record an error about a position in an input file. */
CT_INTERN ct_status ct_error_at(ct_ctx *ctx, ct_status status, const char *file, int line,
				int col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
CT_INTERN ct_status ct_verror_at(ct_ctx *ctx, ct_status status, const char *file, int line,
				 int col, const char *fmt, va_list ap);

/* Diagnostics: start a new parse (forgets old ones, keeps a copy of the
 * source for carets), add one (also becomes the last error). Adding beyond
 * the max_errors option is ignored but still counts as an error. */
CT_INTERN void ct_diag_begin(ct_ctx *ctx, const char *file, const char *text, size_t len);
CT_INTERN void ct_diag_add(ct_ctx *ctx, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
CT_INTERN void ct_diag_vadd(ct_ctx *ctx, int line, int col, const char *fmt, va_list ap);

/* ------------------------------------------------------------ arena */

/* A bump allocator over the ctx hook: many small objects, freed at once.
 * Allocations are zeroed and 16-byte aligned. */
typedef struct ct_arena_chunk ct_arena_chunk;
typedef struct ct_arena {
	ct_ctx *ctx;
	ct_arena_chunk *head;
	bool failed;       /* sticky: an allocation failed */
} ct_arena;

CT_INTERN void ct_arena_init(ct_arena *a, ct_ctx *ctx);
CT_INTERN void *ct_arena_alloc(ct_arena *a, size_t size);
CT_INTERN char *ct_arena_strdup(ct_arena *a, const char *s);
CT_INTERN char *ct_arena_strndup(ct_arena *a, const char *s, size_t n);
CT_INTERN void ct_arena_free(ct_arena *a);

/* Growable array in an arena or on the ctx heap: ensure *cap >= need for
 * elements of elt bytes; doubles, with a hard limit of 1<<28 elements. */
CT_INTERN bool ct_vec_grow(ct_ctx *ctx, void **p, int *cap, int need, size_t elt);

/* ------------------------------------------------------------ strings */

/* A growable NUL-terminated string with a sticky error (heap via malloc so
 * that the result can be handed to users who free() it). */
typedef struct ct_buf {
	char *s;
	size_t len, cap;
	bool failed;
} ct_buf;

CT_INTERN void ct_buf_init(ct_buf *b);
CT_INTERN void ct_buf_puts(ct_buf *b, const char *s);
CT_INTERN void ct_buf_putc(ct_buf *b, char c);
CT_INTERN void ct_buf_printf(ct_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
CT_INTERN void ct_buf_vprintf(ct_buf *b, const char *fmt, va_list ap);
/* Append s as a JSON string literal (with quotes). */
CT_INTERN void ct_buf_json_str(ct_buf *b, const char *s);
/* Give the string to the caller (free() it); NULL if any append failed. */
CT_INTERN char *ct_buf_take(ct_buf *b);
CT_INTERN void ct_buf_free(ct_buf *b);

/* Monotonic wall-clock seconds (for timing and deadlines). */
CT_INTERN double ct_now(void);
/* A quarter of this machine's physical memory in bytes (4 GiB when the
 * system does not say): the most one run's arrays, or one run's cache
 * buffers, may take, so that a too-large problem is refused with a message
 * instead of paging the machine to a standstill or meeting the OOM killer. */
CT_INTERN int64_t ct_mem_quarter(void);

/* ------------------------------------------------------------ checked arithmetic */

/* *r = a op b; false on int64 overflow. */
static inline bool ct_add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool ct_sub_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_sub_overflow(a, b, r); }
static inline bool ct_mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
/* Floor division and non-negative modulo for b > 0 (no intermediate
 * overflow: b may be near 2^63, a may be INT64_MIN). */
static inline int64_t ct_floordiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }
static inline int64_t ct_mod(int64_t a, int64_t b) { return a - ct_floordiv(a, b) * b; }

/* Iterations of a loop from lo to hi by step >= 1: 0 when hi <= lo; never
 * overflows when hi - lo does not (not (hi - lo + step - 1) / step: step
 * may be near 2^63). */
static inline int64_t ct_trip_count(int64_t lo, int64_t hi, int64_t step)
{
	return hi > lo ? (int64_t)(((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step) + 1 : 0;
}
/* *last = the last value of that loop's variable (lo when it runs no
 * iteration). False when step < 1, hi - lo overflows, or the variable
 * would overflow after the last iteration (last + step > 2^63 - 1): the one rule of the check
 * (plan/edges.c), the interpreter and the generated code's entry checks. */
static inline bool ct_loop_last(int64_t lo, int64_t hi, int64_t step, int64_t *last)
{
	int64_t probe;
	*last = lo;
	if (step < 1)
		return false;
	if (hi <= lo)
		return true;
	if (!ct_sub_ok(hi, lo, &probe))
		return false;
	*last = (int64_t)((uint64_t)lo + (uint64_t)(ct_trip_count(lo, hi, step) - 1) * (uint64_t)step);
	return ct_add_ok(*last, step, &probe);
}

#endif
