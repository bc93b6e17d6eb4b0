/* test_spmd.c: parallelize(..., spmd=true): every grid of 1-4 threads, with remainders and tails, equals the single-threaded reference. */
#include "cachet.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stencil of size N x M tiled TX x TY, A cached per tile (a per-thread
 * private tile plus halo), SPMD over PAR. */
static char *stencil(int n, int m, int tx, int ty, const char *par, const char *cache)
{
	char *s = malloc(2048);
	if (!s)
		return NULL;
	snprintf(s, 2048,
	         "kernel spmd_t\nparam N = %d, M = %d\n"
	         "array A : f64[N, M] input\narray B : f64[N, M] output\n"
	         "for (x: N, y: M) {\n"
	         "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	         "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	         "  } else {\n    B[x, y] = A[x, y] - 1\n  }\n}\n"
	         "schedule {\n  xx, yy = tile(x=%d, y=%d)\n  reorder(x, y, xx, yy)\n}\n"
	         "plan {\n%s  parallelize(%s, spmd=true)\n}\n",
	         n, m, tx, ty, cache, par);
	return s;
}

typedef struct row {
	int n, m, tx, ty;
	const char *par, *cache;
} row;

static const row rows[] = {
	/* 2-D grids: 1x1, 2x1, 3x1, 2x2; trips 5 x 3 do not divide */
	{40, 48, 8, 16, "x, y", "  AA = cache(A, index=xx)\n"},
	/* one block per thread on two threads: tile = n / cores */
	{16, 8, 8, 8, "x, y", "  AA = cache(A, index=xx)\n"},
	/* more threads than blocks: idle threads */
	{8, 8, 8, 8, "x, y", "  AA = cache(A, index=xx)\n"},
	/* tails (non-dividing tiles): the band is SPMD over x only */
	{37, 29, 8, 8, "x, y", "  AA = cache(A, index=xx)\n"},
	/* 1-D grids over x, and over y inside x */
	{40, 48, 8, 16, "x", "  AA = cache(A, index=xx)\n"},
	{40, 48, 8, 16, "y", ""},
	/* output through a per-thread cache too */
	{33, 40, 4, 8, "x, y", "  AA = cache(A, index=xx)\n  BB = cache(B, index=xx)\n"},
};

static void test_grids(void)
{
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
		for (int threads = 1; threads <= 4; threads++)
			for (int e = 0; e < 2; e++) {
				const row *w = &rows[r];
				char *text = stencil(w->n, w->m, w->tx, w->ty, w->par, w->cache);
				ct_ctx *ctx = ct_ctx_new();
				ct_kernel *k = text ? ct_kernel_parse(ctx, text, strlen(text), "spmd.cachet") : NULL;
				CHECKF(k != NULL, "row %zu: %s", r, ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : "");
				ct_run_options o;
				ct_run_options_init(&o);
				o.threads = threads;
				o.engine = e ? CT_ENGINE_INTERP : CT_ENGINE_NATIVE;
				ct_run_result res;
				ct_status st = k ? ct_kernel_run(k, &o, &res) : CT_ERR_INPUT;
				CHECKF(st == CT_OK && res.verified == 1, "row %zu threads %d engine %d: %s", r, threads, e,
				       ct_ctx_last_message(ctx));
				ct_kernel_free(k);
				ct_ctx_free(ctx);
				free(text);
			}
}

/* The generated code has one parallel region and the grid split. */
static void test_emitted(void)
{
	char *text = stencil(40, 48, 8, 16, "x, y", "  AA = cache(A, index=xx)\n");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = text ? ct_kernel_parse(ctx, text, strlen(text), "spmd.cachet") : NULL;
	char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
	CHECK(src != NULL);
	if (src) {
		CHECKF(strstr(src, "#pragma omp parallel num_threads(") != NULL, "%s", src);
		CHECKF(strstr(src, "#pragma omp parallel for") == NULL, "%s", src);
		CHECKF(strstr(src, "ct_spmd_blocks(ct_thread_num(), ct_num_threads(), 2,") != NULL, "%s", src);
		CHECKF(strstr(src, "this thread's") != NULL, "the cache is per thread: %s", src);
	}
	free(src);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	free(text);
}

int main(void)
{
	RUN(test_grids);
	RUN(test_emitted);
	return h_report();
}
