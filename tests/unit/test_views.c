/* test_views.c: kernels on tensor views: strided arrays, index casting of boundary tests, halo caches, both engines. */
#include "cachet.h"
#include "harness.h"
#include "run_views.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 30
#define M 28

/* The 5-point stencil over the block X0..X1 x Y0..Y1 of N x M arrays; the
 * boundary test is on the whole array's indices. */
static const char stencil_text[] =
    "kernel vstencil\n"
    "param N = 30, M = 28, X0 = 0, X1 = 30, Y0 = 0, Y1 = 28\n"
    "array A : f64[N, M] input strided\n"
    "array B : f64[N, M] output strided\n"
    "for (x: X0 .. X1, y: Y0 .. Y1) {\n"
    "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + 2*A[x, y]) / 6\n"
    "  } else {\n"
    "    B[x, y] = A[x, y] + 1\n"
    "  }\n"
    "}\n";

/* The same, tiled, with A cached (with its halo) inside the kernel: the
 * cache copies read the strided view. */
static const char planned_text[] =
    "kernel vstencil_plan\n"
    "param N = 30, M = 28, X0 = 0, X1 = 30, Y0 = 0, Y1 = 28\n"
    "array A : f64[N, M] input strided\n"
    "array B : f64[N, M] output strided\n"
    "for (x: X0 .. X1, y: Y0 .. Y1) {\n"
    "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + 2*A[x, y]) / 6\n"
    "  } else {\n"
    "    B[x, y] = A[x, y] + 1\n"
    "  }\n"
    "}\n"
    "schedule {\n"
    "  xx, yy = tile(x=4, y=8)\n"
    "  reorder(x, y, xx, yy)\n"
    "}\n"
    "plan {\n"
    "  AA = cache(A, index=xx)\n"
    "}\n";

/* The same, SPMD on a grid of threads with a per-thread halo cache read
 * from the strided view. */
static const char spmd_text[] =
    "kernel vstencil_spmd\n"
    "param N = 30, M = 28, X0 = 0, X1 = 30, Y0 = 0, Y1 = 28\n"
    "array A : f64[N, M] input strided\n"
    "array B : f64[N, M] output strided\n"
    "for (x: X0 .. X1, y: Y0 .. Y1) {\n"
    "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + 2*A[x, y]) / 6\n"
    "  } else {\n"
    "    B[x, y] = A[x, y] + 1\n"
    "  }\n"
    "}\n"
    "schedule {\n"
    "  xx, yy = tile(x=5, y=7)\n"
    "  reorder(x, y, xx, yy)\n"
    "}\n"
    "plan {\n"
    "  AA = cache(A, index=xx)\n"
    "  parallelize(x, y, spmd=true)\n"
    "}\n";

/* The stencil on dense row-major arrays, written directly: the reference. */
static void reference(const double *a, double *b)
{
	for (int x = 0; x < N; x++)
		for (int y = 0; y < M; y++) {
			const double *p = a + x * M + y;
			if (0 < x && x < N - 1 && 0 < y && y < M - 1)
				b[x * M + y] = (p[-M] + p[M] + p[-1] + p[1] + 2 * p[0]) / 6;
			else
				b[x * M + y] = p[0] + 1;
		}
}

static void fill(double *a)
{
	for (int i = 0; i < N * M; i++)
		a[i] = (double)((i * 37) % 101) - 50.0;
}

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "views.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	return k;
}

static bool set_block(ct_kernel *k, int64_t x0, int64_t x1, int64_t y0, int64_t y1)
{
	return ct_kernel_set_param(k, "X0", x0) == CT_OK && ct_kernel_set_param(k, "X1", x1) == CT_OK &&
	       ct_kernel_set_param(k, "Y0", y0) == CT_OK && ct_kernel_set_param(k, "Y1", y1) == CT_OK &&
	       ct_kernel_recheck(k) == CT_OK;
}

/* Largest difference between view v (N x M) and the row-major want. */
static double max_diff(const ct_tensor *v, const double *want)
{
	double worst = 0;
	for (int64_t x = 0; x < N; x++)
		for (int64_t y = 0; y < M; y++) {
			int64_t idx[2] = {x, y};
			double got = 0;
			if (ct_tensor_get(v, idx, &got) != CT_OK)
				return 1e300;
			double d = got - want[x * M + y];
			d = d < 0 ? -d : d;
			worst = d > worst ? d : worst;
		}
	return worst;
}

static const ct_engine engines[] = {CT_ENGINE_INTERP, CT_ENGINE_NATIVE};
static const char *const texts[] = {stencil_text, planned_text, spmd_text};
#define NTEXTS 3

/* Column-major top-level tensors for A and B. */
static void test_col_major(void)
{
	static double a[N * M], ref[N * M], ac[N * M], bc[N * M];
	fill(a);
	reference(a, ref);
	for (int x = 0; x < N; x++)
		for (int y = 0; y < M; y++)
			ac[y * N + x] = a[x * M + y];
	int64_t ext[2] = {N, M};
	for (int t = 0; t < NTEXTS; t++)
		for (int e = 0; e < 2; e++) {
			ct_ctx *ctx = ct_ctx_new();
			ct_kernel *k = parse(ctx, texts[t]);
			memset(bc, 0, sizeof bc);
			ct_tensor *va = ct_tensor_new(ctx, ac, CT_F64, 2, ext, CT_TENSOR_COL_MAJOR);
			ct_tensor *vb = ct_tensor_new(ctx, bc, CT_F64, 2, ext, CT_TENSOR_COL_MAJOR);
			ct_tensor *views[2] = {va, vb};
			ct_status st = k ? run_views(k, views, engines[e], 1 + t / 2) : CT_ERR_INPUT;
			CHECKF(st == CT_OK, "text %d engine %d: %s", t, e, ct_ctx_last_message(ctx));
			CHECKF(max_diff(vb, ref) < 1e-12, "text %d engine %d", t, e);
			ct_tensor_free(va);
			ct_tensor_free(vb);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
		}
}

/* A and B inside larger buffers with padded rows, a column stride of 2
 * and a non-zero origin: any strides. */
static void test_strided_buffers(void)
{
	enum { RS = 2 * M + 5, ORG = 7, TOTAL = ORG + N * RS };
	static double a[N * M], ref[N * M], sa[TOTAL], sb[TOTAL];
	fill(a);
	reference(a, ref);
	for (int i = 0; i < TOTAL; i++)
		sa[i] = -999;
	for (int x = 0; x < N; x++)
		for (int y = 0; y < M; y++)
			sa[ORG + x * RS + 2 * y] = a[x * M + y];
	int64_t ext[2] = {N, M}, st[2] = {RS, 2};
	for (int t = 0; t < NTEXTS; t++)
		for (int e = 0; e < 2; e++) {
			ct_ctx *ctx = ct_ctx_new();
			ct_kernel *k = parse(ctx, texts[t]);
			for (int i = 0; i < TOTAL; i++)
				sb[i] = 12345;
			ct_tensor *va = ct_tensor_new_strided(ctx, sa, TOTAL, CT_F64, 2, ext, st, ORG);
			ct_tensor *vb = ct_tensor_new_strided(ctx, sb, TOTAL, CT_F64, 2, ext, st, ORG);
			ct_tensor *views[2] = {va, vb};
			ct_status s = k ? run_views(k, views, engines[e], 1 + t / 2) : CT_ERR_INPUT;
			CHECKF(s == CT_OK, "text %d engine %d: %s", t, e, ct_ctx_last_message(ctx));
			CHECKF(max_diff(vb, ref) < 1e-12, "text %d engine %d", t, e);
			/* the gaps between B's elements are untouched */
			int gaps = 0;
			for (int x = 0; x < N; x++)
				for (int y = 0; y < RS; y++)
					if (!(y % 2 == 0 && y / 2 < M) && sb[ORG + x * RS + y] != 12345)
						gaps++;
			CHECKF(gaps == 0, "%d gap elements written", gaps);
			ct_tensor_free(va);
			ct_tensor_free(vb);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
		}
}

/*
 * SPMD by hand: a 3 x 3 grid of blocks (corners, edges and the middle of
 * the parent, uneven sizes). Each block runs the kernel with A as a cached
 * copy of its block plus a halo of 1 (clipped at the parent's edges) and B
 * as a sub-view of a sub-view of a column-major output. The boundary tests
 * speak of the whole array, so the result equals the reference.
 */
static void test_blocks(void)
{
	static double a[N * M], ref[N * M], bc[N * M];
	fill(a);
	reference(a, ref);
	int64_t ext[2] = {N, M}, one[2] = {1, 1};
	const int64_t xs[4] = {0, 9, 20, N}, ys[4] = {0, 11, 17, M};
	for (int t = 0; t < NTEXTS; t++)
		for (int e = 0; e < 2; e++) {
			ct_ctx *ctx = ct_ctx_new();
			ct_kernel *k = parse(ctx, texts[t]);
			memset(bc, 0, sizeof bc);
			ct_tensor *ta = ct_tensor_new(ctx, a, CT_F64, 2, ext, CT_TENSOR_ROW_MAJOR);
			ct_tensor *tb = ct_tensor_new(ctx, bc, CT_F64, 2, ext, CT_TENSOR_COL_MAJOR);
			/* B's blocks are sub-views of the lower-right 2 x 2 blocks' sub-view, or of B */
			int64_t hoff[2] = {0, 0}, hext[2] = {N, M};
			ct_tensor *half = ct_tensor_sub(tb, hoff, hext);
			for (int bi = 0; bi < 3 && k; bi++)
				for (int bj = 0; bj < 3; bj++) {
					int64_t off[2] = {xs[bi], ys[bj]};
					int64_t be[2] = {xs[bi + 1] - xs[bi], ys[bj + 1] - ys[bj]};
					int64_t zero[2] = {0, 0};
					ct_tensor *ca = ct_tensor_cache(ta, off, be, one, one,
					                                (bi + bj) % 2 ? CT_TENSOR_COL_MAJOR : CT_TENSOR_ROW_MAJOR);
					ct_tensor *sb = ct_tensor_sub(half, off, be);
					ct_tensor *ssb = ct_tensor_sub(sb, zero, be);
					CHECK(ca && sb && ssb);
					CHECK(ct_tensor_copy_in(ca) == CT_OK);
					CHECK(set_block(k, off[0], off[0] + be[0], off[1], off[1] + be[1]));
					ct_tensor *views[2] = {ca, ssb};
					ct_status st = run_views(k, views, engines[e], 1 + t / 2);
					CHECKF(st == CT_OK, "block %d,%d text %d engine %d: %s", bi, bj, t, e,
					       ct_ctx_last_message(ctx));
					ct_tensor_free(ssb);
					ct_tensor_free(sb);
					ct_tensor_free(ca);
				}
			CHECKF(max_diff(tb, ref) < 1e-12, "text %d engine %d", t, e);
			ct_tensor_free(half);
			ct_tensor_free(ta);
			ct_tensor_free(tb);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
		}
}

/* Refusals: a cache without the halo the stencil reads, a view of the
 * wrong type or top-level shape, a non-strided array on a strided view. */
static void test_refusals(void)
{
	static double a[N * M], b[N * M];
	float f[N * M];
	fill(a);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, stencil_text);
	int64_t ext[2] = {N, M}, small[2] = {N, M - 1};
	ct_tensor *ta = ct_tensor_new(ctx, a, CT_F64, 2, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *tb = ct_tensor_new(ctx, b, CT_F64, 2, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *tf = ct_tensor_new(ctx, f, CT_F32, 2, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *ts = ct_tensor_new(ctx, b, CT_F64, 2, small, CT_TENSOR_ROW_MAJOR);
	int64_t off[2] = {10, 10}, be[2] = {5, 5};
	ct_tensor *nohalo = ct_tensor_cache(ta, off, be, NULL, NULL, CT_TENSOR_ROW_MAJOR);
	CHECK(k && set_block(k, 10, 15, 10, 15));
	ct_tensor *v1[2] = {nohalo, tb};
	CHECK(run_views(k, v1, CT_ENGINE_INTERP, 1) == CT_ERR_USAGE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "outside its view's window") != NULL, "%s",
	       ct_ctx_last_message(ctx));
	ct_tensor *v2[2] = {ta, tf};
	CHECK(run_views(k, v2, CT_ENGINE_INTERP, 1) == CT_ERR_USAGE);
	ct_tensor *v3[2] = {ta, ts};
	CHECK(run_views(k, v3, CT_ENGINE_NATIVE, 1) == CT_ERR_USAGE);
	ct_tensor *v4[2] = {ta, NULL};
	CHECK(run_views(k, v4, CT_ENGINE_INTERP, 1) == CT_ERR_USAGE);
	CHECK(run_views(k, NULL, CT_ENGINE_INTERP, 1) == CT_ERR_USAGE);
	CHECK(run_views(NULL, v1, CT_ENGINE_INTERP, 1) == CT_ERR_USAGE);
	ct_kernel_free(k);
	/* without `strided`, only the dense declared layout is accepted */
	static const char dense[] = "kernel vcopy\nparam N = 30, M = 28\narray A : f64[N, M] input\n"
	                            "array B : f64[N, M] output\nfor (x: N, y: M) { B[x, y] = A[x, y] }\n";
	k = parse(ctx, dense);
	ct_tensor *col = ct_tensor_new(ctx, a, CT_F64, 2, ext, CT_TENSOR_COL_MAJOR);
	ct_tensor *v5[2] = {col, tb};
	CHECK(k && run_views(k, v5, CT_ENGINE_INTERP, 1) == CT_ERR_USAGE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "not declared strided") != NULL, "%s", ct_ctx_last_message(ctx));
	ct_tensor *v6[2] = {ta, tb};
	memset(b, 0, sizeof b);
	CHECK(k && run_views(k, v6, CT_ENGINE_NATIVE, 1) == CT_OK);
	CHECK(memcmp(a, b, sizeof a) == 0);
	/* options: NULL is the defaults (native); checked native code is refused, the interpreter always tests */
	memset(b, 0, sizeof b);
	CHECK(k && ct_kernel_run_views(k, v6, NULL) == CT_OK);
	CHECK(memcmp(a, b, sizeof a) == 0);
	ct_run_options o;
	ct_run_options_init(&o);
	o.checked = 1;
	CHECK(k && ct_kernel_run_views(k, v6, &o) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "checked") != NULL, "%s", ct_ctx_last_message(ctx));
	o.engine = CT_ENGINE_INTERP;
	memset(b, 0, sizeof b);
	CHECK(k && ct_kernel_run_views(k, v6, &o) == CT_OK);
	CHECK(memcmp(a, b, sizeof a) == 0);
	o.engine = (ct_engine)7;
	CHECK(k && ct_kernel_run_views(k, v6, &o) == CT_ERR_USAGE);
	ct_tensor_free(col);
	ct_tensor_free(nohalo);
	ct_tensor_free(ta);
	ct_tensor_free(tb);
	ct_tensor_free(tf);
	ct_tensor_free(ts);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The generated code takes strides at run time only for strided arrays. */
static void test_emitted_strides(void)
{
	static const char text[] = "kernel vmix\nparam N = 8\narray A : f32[N, N] input strided\n"
	                           "array B : f32[N, N] output\nfor (i: N, j: N) { B[i, j] = A[j, i] }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
	CHECK(src != NULL);
	if (src) {
		CHECKF(strstr(src, "int64_t ct_vo0, int64_t ct_vs0_0, int64_t ct_vs0_1") != NULL, "%s", src);
		CHECKF(strstr(src, "ct_vo1") == NULL, "B is not strided: %s", src);
		CHECKF(strstr(src, "B[i * 8 + j]") != NULL, "B keeps its constant strides: %s", src);
		CHECKF(strstr(src, "A[ct_vo0 + j * ct_vs0_0 + i * ct_vs0_1]") != NULL, "%s", src);
	}
	free(src);
	/* vectorizing over a strided array is refused (its contiguity is unknown) */
	static const char vec[] = "kernel vvec\nparam N = 8\narray A : f32[N] input strided\n"
	                          "array B : f32[N] output\nfor (i: N) { B[i] = A[i] }\nplan { vectorize(i) }\n";
	ct_kernel *kv = ct_kernel_parse(ctx, vec, strlen(vec), "vvec.cachet");
	char *s2 = kv ? ct_kernel_emit(kv, NULL, NULL) : NULL;
	CHECK(s2 == NULL);
	CHECKF(strstr(ct_ctx_last_message(ctx), "strided") != NULL || ct_ctx_diag_count(ctx) > 0, "%s",
	       ct_ctx_last_message(ctx));
	free(s2);
	ct_kernel_free(kv);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ct_kernel_run (dense buffers) still verifies a strided kernel. */
static void test_dense_run(void)
{
	for (int t = 0; t < NTEXTS; t++)
		for (int e = 0; e < 2; e++) {
			ct_ctx *ctx = ct_ctx_new();
			ct_kernel *k = parse(ctx, texts[t]);
			ct_run_options o;
			ct_run_options_init(&o);
			o.engine = engines[e];
			ct_run_result r;
			CHECKF(k && ct_kernel_run(k, &o, &r) == CT_OK && r.verified == 1, "%s",
			       ct_ctx_last_message(ctx));
			ct_kernel_free(k);
			ct_ctx_free(ctx);
		}
}

int main(void)
{
	RUN(test_col_major);
	RUN(test_strided_buffers);
	RUN(test_blocks);
	RUN(test_refusals);
	RUN(test_emitted_strides);
	RUN(test_dense_run);
	return h_report();
}
