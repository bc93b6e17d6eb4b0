/* test_misuse.c: issue 22's library pieces: suppressed diagnostics counted, the verify progress callback, instant size refusals (arrays and plan buffers). */
#include "harness.h"

#include "cachet.h"

#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char matmul[] = "kernel mm\n"
			     "param M = 8, N = 8, K = 8\n"
			     "array A : f32[M, K] input\n"
			     "array B : f32[K, N] input\n"
			     "array C : f32[M, N] inout\n"
			     "for (i: M, j: N, k: K) {\n"
			     "  C[i, j] += A[i, k] * B[k, j]\n"
			     "}\n";

/* 30 unknown names: 20 kept, 10 counted; a good parse forgets the count. */
static void diag_suppressed(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char text[4096];
	int n = snprintf(text, sizeof text, "kernel k\nparam N = 8\narray A : f32[N] inout\nfor (i: N) {\n");
	for (int i = 0; i < 30; i++)
		n += snprintf(text + n, sizeof text - (size_t)n, "  A[i] = Q%d\n", i);
	snprintf(text + n, sizeof text - (size_t)n, "}\n");
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "many.cachet");
	CHECK(k == NULL);
	CHECKF(ct_ctx_diag_count(ctx) == 20, "%d kept", ct_ctx_diag_count(ctx));
	CHECKF(ct_ctx_diag_suppressed(ctx) == 10, "%d suppressed", ct_ctx_diag_suppressed(ctx));
	k = ct_kernel_parse(ctx, matmul, strlen(matmul), "mm.cachet");
	CHECK(k != NULL);
	CHECK(ct_ctx_diag_suppressed(ctx) == 0);
	CHECK(ct_ctx_diag_suppressed(NULL) == 0);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

typedef struct calls {
	int n, last_done, last_total, backwards;
	const char *phase;
} calls;

static void count_call(void *ud, const char *phase, int done, int total)
{
	calls *c = ud;
	if (c->n && done < c->last_done)
		c->backwards++;
	c->n++;
	c->phase = phase;
	c->last_done = done;
	c->last_total = total;
}

static ct_kernel *sized(ct_ctx *ctx, int64_t m, int64_t n, int64_t kk)
{
	ct_kernel *k = ct_kernel_parse(ctx, matmul, strlen(matmul), "mm.cachet");
	if (k && (ct_kernel_set_param(k, "M", m) || ct_kernel_set_param(k, "N", n) ||
	          ct_kernel_set_param(k, "K", kk) || ct_kernel_recheck(k))) {
		ct_kernel_free(k);
		return NULL;
	}
	return k;
}

/* A reference run past a second reports "verify", in order, ending at
 * done == total; a short one says nothing. */
static void verify_progress(void)
{
	ct_ctx *ctx = ct_ctx_new();
	calls c = {0, 0, 0, 0, NULL};
	ct_ctx_set_progress(ctx, count_call, &c);
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	ct_kernel *k = sized(ctx, 8, 8, 8);
	CHECK(k && ct_kernel_run(k, &o, &r) == CT_OK);
	CHECKF(c.n == 0, "%d calls for a short run", c.n);
	ct_kernel_free(k);
	/* about 0.5 G multiply-adds: some seconds in the reference interpreter */
	k = sized(ctx, 512, 512, 1024);
	CHECK(k && ct_kernel_run(k, &o, &r) == CT_OK && r.verified == 1);
	CHECKF(c.n >= 2, "%d calls", c.n);
	CHECK(c.phase && strcmp(c.phase, "verify") == 0);
	CHECKF(c.last_done == c.last_total && c.last_total == 512, "last %d/%d", c.last_done, c.last_total);
	CHECK(c.backwards == 0);
	ct_kernel_free(k);
	ct_ctx_set_progress(ctx, NULL, NULL);
	ct_ctx_free(ctx);
}

/* Arrays larger than the run's limit are refused before any compile or allocation. */
static void check_buffer_refusal(ct_ctx *ctx, double t0, int line, const char *what);

/* Both engines of ct_kernel_run refuse k at once for its size: at line:3
 * of its text when line > 0. */
static void run_refused(ct_ctx *ctx, ct_kernel *k, int line)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 0;
	ct_run_result r;
	for (int e = 0; e < 2 && k; e++) {
		o.engine = e ? CT_ENGINE_INTERP : CT_ENGINE_NATIVE;
		double t0 = now();
		CHECK(ct_kernel_run(k, &o, &r) == CT_ERR_LIMIT);
		check_buffer_refusal(ctx, t0, line, e ? "interp" : "native");
	}
}

static void size_refused_at_once(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = sized(ctx, 1 << 20, 1 << 20, 1 << 20);
	CHECK(k != NULL);
	run_refused(ctx, k, 0);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A split far longer than the loop sizes the cache buffer by the split
 * (8 TiB here) even though that code never runs: every engine refuses it at
 * the plan item in an instant instead of allocating and zeroing it (a fuzz
 * kernel of this kind paged the machine for minutes). */
static const char huge_buffer[] = "kernel big\n"
				  "param N = 2\n"
				  "array A : f64[N] inout\n"
				  "for (i: 1 .. N-1) {\n"
				  "  A[i] = A[i-1] + A[i+1]\n"
				  "}\n"
				  "schedule {\n"
				  "  ii = split(i, 1099511627776)\n"
				  "}\n"
				  "plan {\n"
				  "  AA = cache(A, index=ii, thrifty=false)\n"
				  "}\n";

/* The refusal just made: within a second, the memory limit named, at
 * line:3 when line > 0. */
static void check_buffer_refusal(ct_ctx *ctx, double t0, int line, const char *what)
{
	CHECKF(now() - t0 < 1.0, "%s: refused after %.2f s", what, now() - t0);
	CHECKF(strstr(ct_ctx_last_message(ctx), "quarter of this machine's memory") != NULL, "%s: %s", what,
	       ct_ctx_last_message(ctx));
	if (line > 0)
		CHECKF(ct_ctx_last_line(ctx) == line && ct_ctx_last_col(ctx) == 3, "%s: at %d:%d", what,
		       ct_ctx_last_line(ctx), ct_ctx_last_col(ctx));
}

static void buffer_refused_at_once(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, huge_buffer, strlen(huge_buffer), "big.cachet");
	CHECK(k != NULL);
	run_refused(ctx, k, 11);
	if (k) {
		double t0 = now();
		ct_callable *h = ct_kernel_compile(k);
		CHECK(h == NULL && ct_ctx_last_status(ctx) == CT_ERR_LIMIT);
		check_buffer_refusal(ctx, t0, 11, "compile");
		ct_callable_free(h);
		ct_looptree *t = ct_kernel_lower(k, 1);
		double a[2] = {1, 2};
		void *bufs[1] = {a};
		t0 = now();
		CHECK(t && ct_interp_run(t, bufs) == CT_ERR_LIMIT);
		check_buffer_refusal(ctx, t0, 11, "ct_interp_run");
		CHECK(a[0] == 1 && a[1] == 2);
		ct_looptree_free(t);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(diag_suppressed);
	RUN(verify_progress);
	RUN(size_refused_at_once);
	RUN(buffer_refused_at_once);
	return h_report();
}
