/* core.c: context lifetime, errors and diagnostics, arenas, growable arrays and strings. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double ct_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t ct_mem_quarter(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return (int64_t)4 << 30;
	return (int64_t)pages / 4 * (int64_t)size;
}

static void *default_alloc(void *ud, void *ptr, size_t size)
{
	(void)ud;
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, size);
}

ct_ctx *ct_ctx_new_with_alloc(ct_alloc_fn fn, void *ud)
{
	if (!fn)
		return NULL;
	ct_ctx *ctx = fn(ud, NULL, sizeof *ctx);
	if (!ctx)
		return NULL;
	memset(ctx, 0, sizeof *ctx);
	ctx->alloc = fn;
	ctx->alloc_ud = ud;
	ctx->max_errors = 20;
	ctx->seed = 1;
	ctx->sim_max_accesses = CT_SIM_MAX_ACCESSES;
	return ctx;
}

ct_ctx *ct_ctx_new(void)
{
	return ct_ctx_new_with_alloc(default_alloc, NULL);
}

int ct_ctx_threads(const ct_ctx *ctx, int64_t want)
{
	int64_t n = want > 0 ? want : ctx->threads;
	if (n <= 0) {
		long p = sysconf(_SC_NPROCESSORS_ONLN);
		n = p > 0 ? p : 1;
	}
	return n > 4096 ? 4096 : (int)n;
}

bool ct_ctx_on_free(ct_ctx *ctx, void (*fn)(ct_ctx *))
{
	for (int i = 0; i < CT_MAX_CLEANUPS; i++) {
		if (ctx->cleanup[i] == fn)
			return true;
		if (!ctx->cleanup[i]) {
			ctx->cleanup[i] = fn;
			return true;
		}
	}
	return false;
}

static void diag_clear(ct_ctx *ctx)
{
	for (int i = 0; i < ctx->ndiags; i++)
		ct_free(ctx, ctx->diags[i].msg);
	ctx->ndiags = 0;
	ctx->ndropped = 0;
}

void ct_ctx_free(ct_ctx *ctx)
{
	if (!ctx)
		return;
	for (int i = CT_MAX_CLEANUPS - 1; i >= 0; i--)
		if (ctx->cleanup[i])
			ctx->cleanup[i](ctx);
	diag_clear(ctx);
	ct_free(ctx, ctx->diags);
	ct_free(ctx, ctx->src);
	ct_free(ctx, ctx->rendered);
	ctx->alloc(ctx->alloc_ud, ctx, 0);
}

const char *ct_strerror(ct_status s)
{
	switch (s) {
	case CT_OK: return "ok";
	case CT_ERR_NOMEM: return "out of memory";
	case CT_ERR_INPUT: return "bad input";
	case CT_ERR_USAGE: return "API misuse";
	case CT_ERR_LIMIT: return "limit exceeded";
	case CT_ERR_RUNTIME: return "run-time failure";
	case CT_ERR_COMPILE: return "compile failure";
	case CT_ERR_VERIFY: return "verification failure";
	case CT_ERR_IO: return "I/O error";
	case CT_ERR_UNSUPPORTED: return "unsupported";
	}
	return "unknown status";
}

ct_status ct_ctx_last_status(const ct_ctx *ctx) { return ctx ? ctx->status : CT_ERR_USAGE; }
const char *ct_ctx_last_message(const ct_ctx *ctx) { return ctx ? ctx->msg : ""; }
const char *ct_ctx_last_file(const ct_ctx *ctx) { return ctx ? ctx->file : ""; }
int ct_ctx_last_line(const ct_ctx *ctx) { return ctx ? ctx->line : 0; }
int ct_ctx_last_col(const ct_ctx *ctx) { return ctx ? ctx->col : 0; }

void ct_ctx_clear_error(ct_ctx *ctx)
{
	if (!ctx)
		return;
	ctx->status = CT_OK;
	ctx->msg[0] = 0;
	ctx->file[0] = 0;
	ctx->line = ctx->col = 0;
	diag_clear(ctx);
}

void ct_ctx_set_progress(ct_ctx *ctx, ct_progress_fn fn, void *ud)
{
	if (!ctx)
		return;
	ctx->progress = fn;
	ctx->progress_ud = ud;
}

ct_status ct_ctx_set_option(ct_ctx *ctx, ct_option opt, int64_t value)
{
	if (!ctx)
		return CT_ERR_USAGE;
	switch (opt) {
	case CT_OPT_THREADS:
		if (value < 0 || value > 4096)
			return ct_error(ctx, CT_ERR_USAGE, "threads must be in 0..4096, not %lld", (long long)value);
		ctx->threads = value;
		return CT_OK;
	case CT_OPT_MAX_ERRORS:
		if (value < 1 || value > 10000)
			return ct_error(ctx, CT_ERR_USAGE, "max errors must be in 1..10000");
		ctx->max_errors = value;
		return CT_OK;
	case CT_OPT_SEED:
		ctx->seed = value;
		return CT_OK;
	case CT_OPT_VECTOR_BYTES:
		if (value != 0 && (value < 8 || value > 256 || (value & (value - 1)) != 0))
			return ct_error(ctx, CT_ERR_USAGE,
			                "vector bytes must be 0 (the target's) or a power of two in 8..256, not %lld",
			                (long long)value);
		ctx->vector_bytes = value;
		return CT_OK;
	case CT_OPT_BRANCHING:
		if (value != 0 && value != 1)
			return ct_error(ctx, CT_ERR_USAGE, "branching must be 0 or 1, not %lld", (long long)value);
		ctx->branching = value;
		return CT_OK;
	case CT_OPT_SIM_MAX_ACCESSES:
		if (value < 0)
			return ct_error(ctx, CT_ERR_USAGE, "the simulator's access limit must be 0 (none) or more, not %lld",
			                (long long)value);
		ctx->sim_max_accesses = value;
		return CT_OK;
	}
	return ct_error(ctx, CT_ERR_USAGE, "unknown option %d", (int)opt);
}

int64_t ct_ctx_get_option(const ct_ctx *ctx, ct_option opt)
{
	if (!ctx)
		return 0;
	switch (opt) {
	case CT_OPT_BRANCHING: return ctx->branching;
	case CT_OPT_SIM_MAX_ACCESSES: return ctx->sim_max_accesses;
	case CT_OPT_THREADS: return ctx->threads;
	case CT_OPT_MAX_ERRORS: return ctx->max_errors;
	case CT_OPT_SEED: return ctx->seed;
	case CT_OPT_VECTOR_BYTES: return ctx->vector_bytes;
	}
	return 0;
}

/* ------------------------------------------------------------ memory */

void *ct_alloc(ct_ctx *ctx, size_t size)
{
	void *p = ctx->alloc(ctx->alloc_ud, NULL, size ? size : 1);
	if (!p) {
		ct_error(ctx, CT_ERR_NOMEM, "out of memory (%zu bytes)", size);
		return NULL;
	}
	memset(p, 0, size ? size : 1);
	return p;
}

void *ct_realloc(ct_ctx *ctx, void *p, size_t size)
{
	void *q = ctx->alloc(ctx->alloc_ud, p, size ? size : 1);
	if (!q)
		ct_error(ctx, CT_ERR_NOMEM, "out of memory (%zu bytes)", size);
	return q;
}

void ct_free(ct_ctx *ctx, void *p)
{
	if (p)
		ctx->alloc(ctx->alloc_ud, p, 0);
}

char *ct_strdup(ct_ctx *ctx, const char *s)
{
	size_t n = strlen(s);
	char *d = ct_alloc(ctx, n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

bool ct_vec_grow(ct_ctx *ctx, void **p, int *cap, int need, size_t elt)
{
	if (need <= *cap)
		return true;
	if (need > (1 << 28)) {
		ct_error(ctx, CT_ERR_LIMIT, "too many elements (%d)", need);
		return false;
	}
	int n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *q = ct_realloc(ctx, *p, (size_t)n * elt);
	if (!q)
		return false;
	memset((char *)q + (size_t)*cap * elt, 0, (size_t)(n - *cap) * elt);
	*p = q;
	*cap = n;
	return true;
}

/* ------------------------------------------------------------ errors */

ct_status ct_verror_at(ct_ctx *ctx, ct_status status, const char *file, int line, int col,
		       const char *fmt, va_list ap)
{
	ctx->status = status;
	vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
	snprintf(ctx->file, sizeof ctx->file, "%s", file ? file : "");
	ctx->line = line;
	ctx->col = col;
	return status;
}

ct_status ct_error_at(ct_ctx *ctx, ct_status status, const char *file, int line, int col,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_verror_at(ctx, status, file, line, col, fmt, ap);
	va_end(ap);
	return status;
}

ct_status ct_error(ct_ctx *ctx, ct_status status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_verror_at(ctx, status, NULL, 0, 0, fmt, ap);
	va_end(ap);
	return status;
}

void ct_diag_begin(ct_ctx *ctx, const char *file, const char *text, size_t len)
{
	ct_ctx_clear_error(ctx);
	snprintf(ctx->file, sizeof ctx->file, "%s", file ? file : "<input>");
	ct_free(ctx, ctx->src);
	ctx->src = NULL;
	ctx->src_len = 0;
	char *copy = ctx->alloc(ctx->alloc_ud, NULL, len + 1);
	if (copy) {
		if (len)
			memcpy(copy, text, len);
		copy[len] = 0;
		ctx->src = copy;
		ctx->src_len = len;
	}
}

void ct_diag_vadd(ct_ctx *ctx, int line, int col, const char *fmt, va_list ap)
{
	char file[sizeof ctx->file];
	memcpy(file, ctx->file, sizeof file);
	va_list ap2;
	va_copy(ap2, ap);
	bool first = ctx->ndiags == 0;
	/* the first error stays the ctx's last error: it is usually the cause */
	if (first || ctx->status == CT_OK)
		ct_verror_at(ctx, CT_ERR_INPUT, file, line, col, fmt, ap2);
	va_end(ap2);
	if (ctx->ndiags >= ctx->max_errors) {
		ctx->ndropped++;
		return;
	}
	if (!ct_vec_grow(ctx, (void **)&ctx->diags, &ctx->cap_diags, ctx->ndiags + 1, sizeof(ct_diag)))
		return;
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	ct_diag *d = &ctx->diags[ctx->ndiags];
	d->line = line;
	d->col = col;
	d->msg = ct_strdup(ctx, msg);
	if (d->msg)
		ctx->ndiags++;
	ctx->status = CT_ERR_INPUT;
}

void ct_diag_add(ct_ctx *ctx, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_diag_vadd(ctx, line, col, fmt, ap);
	va_end(ap);
}

int ct_ctx_diag_count(const ct_ctx *ctx) { return ctx ? ctx->ndiags : 0; }

int ct_ctx_diag_suppressed(const ct_ctx *ctx) { return ctx ? ctx->ndropped : 0; }

/* The text of source line `line` (1-based) as [start, end). */
static bool source_line(const ct_ctx *ctx, int line, const char **start, size_t *n)
{
	if (!ctx->src || line < 1)
		return false;
	const char *p = ctx->src, *end = ctx->src + ctx->src_len;
	for (int l = 1; l < line && p < end; p++)
		if (*p == '\n')
			l++;
	if (p >= end && line > 1)
		return false;
	const char *q = p;
	while (q < end && *q != '\n')
		q++;
	*start = p;
	*n = (size_t)(q - p);
	return true;
}

const char *ct_ctx_diag_render(ct_ctx *ctx, int i)
{
	if (!ctx || i < 0 || i >= ctx->ndiags)
		return "";
	const ct_diag *d = &ctx->diags[i];
	ct_buf b;
	ct_buf_init(&b);
	if (d->line > 0)
		ct_buf_printf(&b, "%s:%d:%d: error: %s", ctx->file, d->line, d->col, d->msg);
	else
		ct_buf_printf(&b, "%s: error: %s", ctx->file, d->msg);
	const char *ls;
	size_t ln;
	if (d->line > 0 && source_line(ctx, d->line, &ls, &ln) && ln < 400) {
		ct_buf_puts(&b, "\n  ");
		for (size_t k = 0; k < ln; k++) {
			unsigned char c = (unsigned char)ls[k];
			ct_buf_putc(&b, (c == '\t' || (c >= 32 && c < 127)) ? (char)c : '?');
		}
		ct_buf_puts(&b, "\n  ");
		for (int k = 1; k < d->col && (size_t)k <= ln; k++)
			ct_buf_putc(&b, ls[k - 1] == '\t' ? '\t' : ' ');
		ct_buf_putc(&b, '^');
	}
	char *s = ct_buf_take(&b);
	if (!s)
		return d->msg;
	/* hand out a ctx-owned copy so callers need not free it */
	ct_free(ctx, ctx->rendered);
	ctx->rendered = ct_strdup(ctx, s);
	free(s);
	return ctx->rendered ? ctx->rendered : d->msg;
}

/* ------------------------------------------------------------ arena */

struct ct_arena_chunk {
	ct_arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

void ct_arena_init(ct_arena *a, ct_ctx *ctx)
{
	a->ctx = ctx;
	a->head = NULL;
	a->failed = false;
}

void *ct_arena_alloc(ct_arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	ct_arena_chunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t want = size > 16384 ? size : 16384;
		if (size > ((size_t)1 << 40)) {
			a->failed = true;
			ct_error(a->ctx, CT_ERR_NOMEM, "arena request too large");
			return NULL;
		}
		c = ct_alloc(a->ctx, sizeof *c + want);
		if (!c) {
			a->failed = true;
			return NULL;
		}
		c->size = want;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

char *ct_arena_strndup(ct_arena *a, const char *s, size_t n)
{
	char *d = ct_arena_alloc(a, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

char *ct_arena_strdup(ct_arena *a, const char *s)
{
	return ct_arena_strndup(a, s, strlen(s));
}

void ct_arena_free(ct_arena *a)
{
	ct_arena_chunk *c = a->head;
	while (c) {
		ct_arena_chunk *n = c->next;
		ct_free(a->ctx, c);
		c = n;
	}
	a->head = NULL;
}

/* ------------------------------------------------------------ strings */

void ct_buf_init(ct_buf *b)
{
	b->s = NULL;
	b->len = b->cap = 0;
	b->failed = false;
}

static bool buf_reserve(ct_buf *b, size_t extra)
{
	if (b->failed)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t n = b->cap ? b->cap : 256;
	while (n < b->len + extra + 1)
		n *= 2;
	char *q = realloc(b->s, n);
	if (!q) {
		b->failed = true;
		return false;
	}
	b->s = q;
	b->cap = n;
	return true;
}

void ct_buf_puts(ct_buf *b, const char *s)
{
	size_t n = strlen(s);
	if (!buf_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void ct_buf_putc(ct_buf *b, char c)
{
	if (!buf_reserve(b, 1))
		return;
	b->s[b->len++] = c;
	b->s[b->len] = 0;
}

void ct_buf_vprintf(ct_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !buf_reserve(b, (size_t)n))
		return;
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void ct_buf_printf(ct_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void ct_buf_json_str(ct_buf *b, const char *s)
{
	ct_buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			ct_buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			ct_buf_puts(b, "\\n");
		else if (*p < 32 || *p >= 127)
			ct_buf_printf(b, "\\u%04x", *p);
		else
			ct_buf_putc(b, (char)*p);
	}
	ct_buf_putc(b, '"');
}

char *ct_buf_take(ct_buf *b)
{
	if (b->failed) {
		free(b->s);
		ct_buf_init(b);
		return NULL;
	}
	if (!b->s) {
		b->s = malloc(1);
		if (!b->s)
			return NULL;
		b->s[0] = 0;
	}
	char *s = b->s;
	ct_buf_init(b);
	return s;
}

void ct_buf_free(ct_buf *b)
{
	free(b->s);
	ct_buf_init(b);
}
