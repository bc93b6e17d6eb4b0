/* test_auto.c: ct_kernel_autoschedule: the file it returns parses and verifies, the choices follow the
 * machine description (vector width, threads), a written schedule is kept, errors and misuse. */
#include "cachet.h"

#include "harness.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char gemm[] = "kernel g\n"
                           "param M = 64, N = 64, K = 48\n"
                           "array A : f32[M, K] input\n"
                           "array B : f32[K, N] input\n"
                           "array C : f32[M, N] inout\n"
                           "for (i: M, j: N, k: K) {\n"
                           "  C[i, j] += A[i, k] * B[k, j]\n"
                           "}\n";

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	if (!k)
		fprintf(stderr, "parse: %s\n", ct_ctx_last_message(ctx));
	return k;
}

/* auto's text for gemm with vector width vb and t threads (malloc'd). */
static char *auto_text(int vb, int threads)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, vb);
	ct_kernel *k = parse(ctx, gemm);
	char *text = NULL;
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = threads;
	size_t len = 0;
	if (k && ct_kernel_autoschedule(k, &o, &text, &len) != CT_OK)
		fprintf(stderr, "auto: %s\n", ct_ctx_last_message(ctx));
	CHECK(!text || len == strlen(text));
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return text;
}

static void test_runs(void)
{
	char *text = auto_text(32, 2);
	CHECK(text != NULL);
	if (!text)
		return;
	CHECK(strstr(text, "kernel g\n") != NULL);
	CHECK(strstr(text, "register tile") != NULL);
	CHECK(strstr(text, "parallelize(i, j)") != NULL);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *a = parse(ctx, text);
	CHECK(a != NULL);
	if (a) {
		CHECK(ct_kernel_set_param(a, "M", 29) == CT_OK && ct_kernel_set_param(a, "N", 37) == CT_OK);
		CHECK(ct_kernel_recheck(a) == CT_OK);
		ct_run_options ro;
		ct_run_options_init(&ro);
		ro.threads = 2;
		ct_run_result rr;
		ct_status st = ct_kernel_run(a, &ro, &rr);
		CHECKF(st == CT_OK && rr.verified == 1, "%s", ct_ctx_last_message(ctx));
	}
	ct_kernel_free(a);
	ct_ctx_free(ctx);
	free(text);
}

/* The same description gives the same file; another vector width another register tile. */
static void test_machine(void)
{
	char *a = auto_text(32, 1), *b = auto_text(32, 1), *c = auto_text(64, 1);
	CHECK(a && b && c);
	if (a && b && c) {
		CHECK(strcmp(a, b) == 0);
		CHECK(strcmp(a, c) != 0);
		CHECK(strstr(a, "32-byte vectors") != NULL && strstr(c, "64-byte vectors") != NULL);
		CHECK(strstr(a, "parallelize(") == NULL || strstr(a, "parallelize(") > strstr(a, "# ----"));
		CHECK(strstr(a, "\n  parallelize(") == NULL);
	}
	free(a);
	free(b);
	free(c);
}

static void test_kept(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char text[1024];
	snprintf(text, sizeof text, "%sschedule {\n  ii = split(i, 8)\n}\n", gemm);
	ct_kernel *k = parse(ctx, text);
	char *out = NULL;
	CHECK(k && ct_kernel_autoschedule(k, NULL, &out, NULL) == CT_OK);
	CHECK(out && strstr(out, "  ii = split(i, 8)\n") && strstr(out, "kept from the file: its schedule"));
	/* k is left as it was: it still runs its own schedule */
	CHECK(k && ct_kernel_param_count(k) == 3);
	free(out);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Stencil sweeps in a time loop (fdtd-like: a source row, then three sweeps; time-blocked), at sizes
 * past any L2 (fused) and then run at small ones: the fused
 * kernel's outputs equal the written kernel's, bit for bit (the fusion is a rewrite of the loops, so
 * only a comparison with the original shows that its shifts keep every dependence). */
static const char fdtd[] = "kernel fd\n"
                           "param T = 2, NX = 1000, NY = 1200\n"
                           "array fict : f64[T] input\n"
                           "array ex : f64[NX, NY] inout\n"
                           "array ey : f64[NX, NY] inout\n"
                           "array hz : f64[NX, NY] inout\n"
                           "for (t: T) {\n"
                           "  for (j: NY) { ey[0, j] = fict[t] }\n"
                           "  for (i: 1 .. NX, j2: NY) { ey[i, j2] -= 0.5 * (hz[i, j2] - hz[i-1, j2]) }\n"
                           "  for (i3: NX, j3: 1 .. NY) { ex[i3, j3] -= 0.5 * (hz[i3, j3] - hz[i3, j3-1]) }\n"
                           "  for (i4: 0 .. NX-1, j4: 0 .. NY-1) {\n"
                           "    hz[i4, j4] -= 0.7 * (ex[i4, j4+1] - ex[i4, j4] + ey[i4+1, j4] - ey[i4, j4])\n"
                           "  }\n"
                           "}\n";
/* the second sweep reads two rows ahead: a shift of 2; the whole time loop's body, so also time
 * blocks (of 2 steps: T = 2; at the small sizes T = 3, a partial last block) */
static const char ahead[] = "kernel ah\n"
                            "param T = 2, NX = 1500, NY = 1500\n"
                            "array A : f64[NX, NY] inout\n"
                            "array B : f64[NX, NY] inout\n"
                            "for (t: T) {\n"
                            "  for (i: 1 .. NX-1, j: 1 .. NY-1) {\n"
                            "    B[i, j] = 0.2 * (A[i, j] + A[i, j-1] + A[i, j+1] + A[i+1, j] + A[i-1, j])\n"
                            "  }\n"
                            "  for (i2: 1 .. NX-3, j2: 1 .. NY-1) { A[i2, j2] = 0.5 * (B[i2+2, j2] + B[i2-1, j2]) }\n"
                            "}\n";
/* the second sweep reads B transposed: no common row dimension, not fused */
static const char transposed[] = "kernel tr\n"
                                 "param T = 2, NX = 1500, NY = 1500\n"
                                 "array A : f64[NX, NY] inout\n"
                                 "array B : f64[NX, NY] inout\n"
                                 "for (t: T) {\n"
                                 "  for (i: NX, j: NY) { B[i, j] = A[i, j] * 0.5 }\n"
                                 "  for (i2: NX, j2: NY) { A[i2, j2] = B[j2, i2] + 1 }\n"
                                 "}\n";

/* Runs kernel text at the small sizes (names[i] = vals[i]) on inputs made from seed; the outputs
 * into out (nel elements per array, in order). */
static bool run_small(ct_ctx *ctx, const char *text, const char *const *names, const int64_t *vals, int n,
                      double **arr, int narr, const int64_t *nel)
{
	ct_kernel *k = parse(ctx, text);
	bool ok = k != NULL;
	for (int i = 0; ok && i < n; i++)
		ok = ct_kernel_set_param(k, names[i], vals[i]) == CT_OK;
	ok = ok && ct_kernel_recheck(k) == CT_OK;
	ct_callable *h = ok ? ct_kernel_compile(k) : NULL;
	ok = h != NULL && ct_callable_arg_count(h) == narr;
	if (ok) {
		for (int a = 0; a < narr; a++)
			for (int64_t e = 0; e < nel[a]; e++)
				arr[a][e] = (double)((e * 7919 + a * 104729) % 1000) / 997.0;
		ok = ct_callable_call(h, (void *const *)arr, NULL) == CT_OK;
	}
	if (!ok)
		fprintf(stderr, "run_small: %s\n", ct_ctx_last_message(ctx));
	ct_callable_free(h);
	ct_kernel_free(k);
	return ok;
}

/* auto (on threads, for the caches spec; NULL: this machine's) on text at its own sizes: whether
 * its comment has note (fused) and time blocks
 * (blocked); then both kernels at the small sizes, their outputs equal (exact: bit for bit, else
 * within 1e-12 relative: a vectorized sum adds in another order). */
static void rewrite_case_on(const char *text, const char *spec, const char *note, bool fused, bool blocked, bool exact,
                            int threads, const char *const *names, const int64_t *vals, int n, const int64_t *nel,
                            int narr)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = threads;
	o.cache_spec = spec;
	char *out = NULL;
	CHECKF(k && ct_kernel_autoschedule(k, &o, &out, NULL) == CT_OK, "%s", ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	CHECKF(out && (strstr(out, note) != NULL) == fused, "%s", out ? out : "");
	CHECKF(out && (strstr(out, "the time loop t in blocks of TB_t") != NULL) == blocked, "%s", out ? out : "");
	double *x[8] = {0}, *y[8] = {0};
	bool ok = out != NULL && narr <= 8;
	for (int a = 0; ok && a < narr; a++) {
		x[a] = calloc((size_t)nel[a], sizeof(double));
		y[a] = calloc((size_t)nel[a], sizeof(double));
		ok = ok && x[a] && y[a];
	}
	ok = ok && run_small(ctx, text, names, vals, n, x, narr, nel) && run_small(ctx, out, names, vals, n, y, narr, nel);
	CHECK(ok);
	for (int a = 0; ok && a < narr; a++) {
		bool same = !exact || memcmp(x[a], y[a], (size_t)nel[a] * sizeof(double)) == 0;
		for (int64_t e = 0; !exact && e < nel[a]; e++)
			same = same && fabs(x[a][e] - y[a][e]) <= 1e-12 * fmax(1.0, fabs(x[a][e]));
		CHECKF(same, "array %d differs", a);
	}
	for (int a = 0; a < narr && a < 8; a++) {
		free(x[a]);
		free(y[a]);
	}
	free(out);
	ct_ctx_free(ctx);
}

static void rewrite_case(const char *text, const char *spec, const char *note, bool fused, bool blocked, bool exact,
                         const char *const *names, const int64_t *vals, int n, const int64_t *nel, int narr)
{
	rewrite_case_on(text, spec, note, fused, blocked, exact, 1, names, vals, n, nel, narr);
}

static void fused_case(const char *text, bool fused, bool blocked, const char *const *names, const int64_t *vals,
                       int n, const int64_t *nel, int narr)
{
	rewrite_case(text, NULL, "are fused along their rows", fused, blocked, true, names, vals, n, nel, narr);
}

static void test_fused(void)
{
	const char *names[] = {"T", "NX", "NY"};
	const int64_t small[] = {3, 17, 23}, nel[] = {3, 17 * 23, 17 * 23, 17 * 23};
	fused_case(fdtd, true, true, names, small, 3, nel, 4);
	const int64_t small2[] = {3, 19, 13}, nel2[] = {19 * 13, 19 * 13};
	fused_case(ahead, true, true, names, small2, 3, nel2, 2);
	const int64_t small3[] = {3, 13, 13}, nel3[] = {13 * 13, 13 * 13};
	fused_case(transposed, false, false, names, small3, 3, nel3, 2);
}

/* ct_auto_options.cache_spec: auto plans for the caches it names, not this machine's: a Jacobi
 * pair of 13 KiB arrays is fused and time-blocked for an L1 of 1 KiB and an L2 of 8 KiB, left
 * alone for one level of 1 MiB, and verifies either way; a spec predict refuses is refused. */
static void test_cache_spec(void)
{
	static const char pair[] =
		"kernel jp\nparam T = 4, N = 40\narray A : f64[N, N] inout\narray B : f64[N, N] inout\n"
		"for (t: T) {\n"
		"  for (i: 1 .. N-1, j: 1 .. N-1) { B[i, j] = 0.2 * (A[i, j] + A[i, j-1] + A[i, j+1] + A[i+1, j] + A[i-1, j]) }\n"
		"  for (i2: 1 .. N-1, j2: 1 .. N-1) { A[i2, j2] = 0.2 * (B[i2, j2] + B[i2, j2-1] + B[i2, j2+1] + B[i2+1, j2] + B[i2-1, j2]) }\n"
		"}\n";
	const char *names[] = {"T", "N"};
	const int64_t vals[] = {4, 40}, nel[] = {40 * 40, 40 * 40};
	rewrite_case(pair, "1K:64:2,8K:64:4", "are fused along their rows", true, true, true, names, vals, 2, nel, 2);
	rewrite_case(pair, "1M:64:8", "are fused along their rows", false, false, true, names, vals, 2, nel, 2);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, pair);
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.cache_spec = "3K:48";
	char *out = NULL;
	CHECK(k && ct_kernel_autoschedule(k, &o, &out, NULL) == CT_ERR_INPUT && out == NULL);
	CHECK(strstr(ct_ctx_last_message(ctx), "not a power of two") != NULL);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Gauss-Seidel in place (seidel-2d's 9-point mean): every loop carries, and auto writes its rows as a
 * wavefront (src/tune/wave.c). Chosen at N = 40, run at awkward sizes (N - 2 rows not a multiple of
 * the rows param, fewer rows than it, N = 3: one row) and with other rows params: the outputs equal
 * the written kernel's bit for bit. The lag written is the least that ends every dependence in a
 * later step; with the lag 0, below the least legal one (1), the outputs differ: the comparison
 * sees a broken dependence. */
static const char seidel9[] = "kernel s9\n"
                              "param T = 2, N = 40\n"
                              "array A : f64[N, N] inout\n"
                              "for (t: T, i: 1 .. N-1, j: 1 .. N-1) {\n"
                              "  A[i, j] = (A[i-1, j-1] + A[i-1, j] + A[i-1, j+1] + A[i, j-1] + A[i, j] + A[i, j+1]\n"
                              "           + A[i+1, j-1] + A[i+1, j] + A[i+1, j+1]) / 9\n"
                              "}\n";
/* a row reads the row before it reflected (column N-1-j): no constant lag keeps that, untouched */
static const char reflected[] = "kernel rf\n"
                                "param T = 2, N = 40\n"
                                "array A : f64[N, N] inout\n"
                                "for (t: T) {\n"
                                "  for (i: 1 .. N, j: 1 .. N-1) { A[i, j] = 0.5 * (A[i, j-1] + A[i-1, N-1-j]) }\n"
                                "}\n";

/* auto's text for kernel text at its sizes, one thread (malloc'd). */
static char *auto_one(const char *text)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = 1;
	char *out = NULL;
	CHECKF(k && ct_kernel_autoschedule(k, &o, &out, NULL) == CT_OK, "%s", ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return out;
}

/* Whether kernel a at (T, N) and kernel b at (T, N, U_i = u; u 0: its own) give the same A, bit for bit. */
static bool same_seidel(const char *a, const char *b, int64_t t, int64_t n, int64_t u)
{
	const char *names[] = {"T", "N", "U_i"};
	const int64_t vals[] = {t, n, u}, nel[] = {n * n};
	double *x = calloc((size_t)(n * n), sizeof(double)), *y = calloc((size_t)(n * n), sizeof(double));
	ct_ctx *ctx = ct_ctx_new();
	bool ok = x && y && run_small(ctx, a, names, vals, 2, &x, 1, nel) &&
	          run_small(ctx, b, names, vals, u > 0 ? 3 : 2, &y, 1, nel);
	CHECKF(ok, "T=%lld N=%lld U_i=%lld", (long long)t, (long long)n, (long long)u);
	bool same = ok && memcmp(x, y, (size_t)(n * n) * sizeof(double)) == 0;
	free(x);
	free(y);
	ct_ctx_free(ctx);
	return same;
}

static void test_wave(void)
{
	char *out = auto_one(seidel9);
	CHECKF(out && strstr(out, "runs its rows in a wavefront") && strstr(out, "\nparam U_i = ") &&
	           strstr(out, "  unroll(i_u)\n") && strstr(out, "j_w - 2*i_u"),
	       "%s", out ? out : "");
	if (out) {
		static const int64_t sizes[][3] = {{3, 40, 0}, {3, 11, 0}, {2, 10, 3}, {3, 4, 5}, {2, 3, 0},
		                                   {2, 5, 2}, {1, 17, 64}, {3, 9, 1}};
		for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++)
			CHECKF(same_seidel(seidel9, out, sizes[c][0], sizes[c][1], sizes[c][2]),
			       "T=%lld N=%lld U_i=%lld: the wavefront differs from the written order", (long long)sizes[c][0],
			       (long long)sizes[c][1], (long long)sizes[c][2]);
		/* lag 0 (below the least legal lag, 1): the comparison must see it */
		char *bad = strdup(out);
		size_t nrep = 0;
		for (char *p = bad ? strstr(bad, "2*") : NULL; p; p = strstr(p + 2, "2*"), nrep++)
			p[0] = '0';
		CHECK(nrep >= 2);
		CHECK(bad && !same_seidel(seidel9, bad, 2, 20, 4));
		free(bad);
	}
	free(out);
	out = auto_one(reflected);
	CHECKF(out && !strstr(out, "wavefront") && strstr(out, "\nfor (t: T) {\n  for (i: 1 .. N, j: 1 .. N-1) {"),
	       "%s", out ? out : "");
	free(out);
}

/* Matrix-vector passes over one matrix, chosen at PolyBench's LARGE sizes (the matrix past any L2,
 * a row and the vectors within it: fused along the rows on one thread), run at small odd sizes
 * (vector tails) against the written kernels. bicg: the column sum, distributed from its
 * initialisation, runs inside the row loop. */
static const char bicg[] = "kernel bc\n"
                           "param M = 1900, N = 2100\n"
                           "array A : f64[N, M] input\n"
                           "array r : f64[N] input\n"
                           "array p : f64[M] input\n"
                           "array s : f64[M] output\n"
                           "array q : f64[N] output\n"
                           "for (j: M) {\n"
                           "  s[j] = 0\n"
                           "  for (i: N) { s[j] += r[i] * A[i, j] }\n"
                           "}\n"
                           "for (i2: N) {\n"
                           "  q[i2] = 0\n"
                           "  for (j2: M) { q[i2] += A[i2, j2] * p[j2] }\n"
                           "}\n";
/* mvt: two perfect bands, the second reading A transposed */
static const char mvt[] = "kernel mv\n"
                          "param N = 2000\n"
                          "array A : f64[N, N] input\n"
                          "array y1 : f64[N] input\n"
                          "array y2 : f64[N] input\n"
                          "array x1 : f64[N] inout\n"
                          "array x2 : f64[N] inout\n"
                          "for (i: N, j: N) { x1[i] += A[i, j] * y1[j] }\n"
                          "for (i2: N, j2: N) { x2[i2] += A[j2, i2] * y2[j2] }\n";
/* atax: the second pass reads the first's t[i] of its own row; y's initialisation moves before */
static const char atax[] = "kernel at\n"
                           "param M = 1900, N = 2100\n"
                           "array A : f64[M, N] input\n"
                           "array x : f64[N] input\n"
                           "array t : f64[M] temp\n"
                           "array y : f64[N] output\n"
                           "for (i: M) {\n"
                           "  t[i] = 0\n"
                           "  for (j: N) { t[i] += A[i, j] * x[j] }\n"
                           "}\n"
                           "for (j2: N) {\n"
                           "  y[j2] = 0\n"
                           "  for (i2: M) { y[j2] += A[i2, j2] * t[i2] }\n"
                           "}\n";
/* the second pass reads all of t in every row: fused, row i would read t[j] of rows not yet
 * summed; the dependence analysis refuses it */
static const char ahead_t[] = "kernel ng\n"
                              "param N = 2000\n"
                              "array A : f64[N, N] input\n"
                              "array x : f64[N] input\n"
                              "array t : f64[N] temp\n"
                              "array y : f64[N] inout\n"
                              "for (i: N) {\n"
                              "  t[i] = 0\n"
                              "  for (j: N) { t[i] += A[i, j] * x[j] }\n"
                              "}\n"
                              "for (i2: N, j2: N) { y[i2] += A[i2, j2] * t[j2] }\n";
/* a column sum into one element: inside the row loop its updates would add in another order (not
 * moved, so not fused) */
static const char scalar_sum[] = "kernel sc\n"
                                 "param M = 1900, N = 2100\n"
                                 "array A : f64[N, M] input\n"
                                 "array r : f64[N] input\n"
                                 "array p : f64[M] input\n"
                                 "array S : f64[1] inout\n"
                                 "array q : f64[N] output\n"
                                 "for (j: M, i: N) { S[0] += r[i] * A[i, j] }\n"
                                 "for (i2: N) {\n"
                                 "  q[i2] = 0\n"
                                 "  for (j2: M) { q[i2] += A[i2, j2] * p[j2] }\n"
                                 "}\n";

/* two column sums over one matrix: fused along the rows and jammed, each y[j] still adds its rows
 * in row order, so the jammed file's sums are bit for bit the written kernel's */
static const char colsums[] = "kernel cs\n"
                              "param M = 1900, N = 2100\n"
                              "array A : f64[M, N] input\n"
                              "array x : f64[M] input\n"
                              "array w : f64[M] input\n"
                              "array y : f64[N] inout\n"
                              "array z : f64[N] inout\n"
                              "for (i: M, j: N) { y[j] += A[i, j] * x[i] }\n"
                              "for (i2: M, j2: N) { z[j2] += A[i2, j2] * w[i2] }\n";

/* auto on text (threads): its fused row loop is jammed in blocks of rows (the loop over the blocks
 * stepped, the rows unrolled, the column loops vectorized, on threads the blocks parallel), or the
 * comment says the vector registers hold one row only (a machine of 8 registers); the jammed
 * loops' names (i_b, i_u) as auto writes them from the row loop's name i. */
static void jam_case(const char *text, int threads)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = threads;
	char *out = NULL;
	CHECKF(k && ct_kernel_autoschedule(k, &o, &out, NULL) == CT_OK, "%s", ct_ctx_last_message(ctx));
	bool jammed = out && strstr(out, "#   jammed: blocks of ") != NULL;
	CHECKF(out && (jammed || strstr(out, "not jammed (rows one at a time): the vector registers")), "%s",
	       out ? out : "");
	if (jammed) {
		CHECKF(strstr(out, "for (i_b: 0 .. ") && strstr(out, " step ") && strstr(out, "  unroll(i_u)\n") &&
		           (threads == 1 || strstr(out, "  parallelize(i_b)\n")) &&
		           (threads > 1 ? strstr(out, "if (i_b + i_u") != NULL : strstr(out, "} else {") != NULL),
		       "%s", out);
		/* the block's column loops stay whole vector loops: not fused as sweeps into a scalar
		 * loop over loops of one iteration ("for (j_f: ...) { for (j: j_f .. j_f + 1) ...") */
		CHECKF(!strstr(out, "_f + 1)"), "%s", out);
	}
	free(out);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_rowfused(void)
{
	const char *note = "are fused along its rows";
	const char *mn[] = {"M", "N"}, *nn[] = {"N"};
	const int64_t small[] = {37, 41}, nelb[] = {41 * 37, 41, 37, 37, 41};
	rewrite_case(bicg, NULL, note, true, false, false, mn, small, 2, nelb, 5);
	const int64_t n43[] = {43}, nelm[] = {43 * 43, 43, 43, 43, 43};
	rewrite_case(mvt, NULL, note, true, false, false, nn, n43, 1, nelm, 5);
	const int64_t nela[] = {37 * 41, 41, 41};
	rewrite_case(atax, NULL, note, true, false, false, mn, small, 2, nela, 3);
	const int64_t neln[] = {43 * 43, 43, 43};
	rewrite_case(ahead_t, NULL, "stay apart: fused along the rows, a dependence", true, false, false, nn, n43, 1, neln, 3);
	const int64_t nels[] = {41 * 37, 41, 37, 1, 41};
	rewrite_case(scalar_sum, NULL, note, false, false, false, mn, small, 2, nels, 5);
	/* jammed in blocks of rows (the last rows of 37 or 43 one at a time), on 2 threads too (each
	 * row's copy under an if); column sums alone on one thread: exact */
	jam_case(bicg, 1);
	jam_case(mvt, 1);
	jam_case(atax, 1);
	jam_case(colsums, 1);
	jam_case(bicg, 2);
	jam_case(atax, 2);
	rewrite_case_on(bicg, NULL, note, true, false, false, 2, mn, small, 2, nelb, 5);
	rewrite_case_on(mvt, NULL, note, true, false, false, 2, nn, n43, 1, nelm, 5);
	rewrite_case_on(atax, NULL, note, true, false, false, 2, mn, small, 2, nela, 3);
	const int64_t nelc[] = {37 * 41, 37, 37, 41, 41};
	rewrite_case(colsums, NULL, note, true, false, true, mn, small, 2, nelc, 5);
	/* on threads each thread sums its blocks into its own copy, added in thread order: not exact */
	rewrite_case_on(colsums, NULL, note, true, false, false, 2, mn, small, 2, nelc, 5);
	/* on two threads too: the fused row loop carries the column sums, which run as a parallel
	 * reduction (each thread's into its own copy) */
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, mvt);
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = 2;
	char *out = NULL;
	CHECKF(k && ct_kernel_autoschedule(k, &o, &out, NULL) == CT_OK, "%s", ct_ctx_last_message(ctx));
	CHECKF(out && strstr(out, note) &&
	           strstr(out, strstr(out, "jammed: blocks of") ? "  parallelize(i_b)\n" : "  parallelize(i)\n") &&
	           strstr(out, "(a parallel reduction)"),
	       "%s", out ? out : "");
	free(out);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ct_run_options.reference: the run is verified against another kernel's interpreter (what
 * `cachet run --auto` does with the kernel auto was given): the same computation verifies, a
 * different one fails verification, other arrays are a usage error. */
static void test_reference(void)
{
	static const char twice[] = "kernel r\nparam N = 40\narray A : f64[N] input\narray B : f64[N] output\n"
	                            "for (i: N) { B[i] = 2 * A[i] }\n";
	static const char split[] = "kernel r\nparam N = 40\narray A : f64[N] input\narray B : f64[N] output\n"
	                            "for (i: N) { B[i] = A[i] }\nfor (i2: N) { B[i2] += A[i2] }\n";
	static const char thrice[] = "kernel r\nparam N = 40\narray A : f64[N] input\narray B : f64[N] output\n"
	                             "for (i: N) { B[i] = 3 * A[i] }\n";
	static const char other[] = "kernel r\nparam N = 40\narray A : f64[N] input\narray C : f64[N] output\n"
	                            "for (i: N) { C[i] = 2 * A[i] }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, twice), *s = parse(ctx, split), *t = parse(ctx, thrice), *o = parse(ctx, other);
	CHECK(k && s && t && o);
	if (k && s && t && o) {
		ct_run_options ro;
		ct_run_options_init(&ro);
		CHECK(ro.reference == NULL);
		ct_run_result rr;
		ro.reference = k;
		CHECKF(ct_kernel_run(s, &ro, &rr) == CT_OK && rr.verified == 1, "%s", ct_ctx_last_message(ctx));
		CHECK(ct_kernel_run(t, &ro, &rr) == CT_ERR_VERIFY && rr.verified == 0);
		CHECK(ct_kernel_run(o, &ro, &rr) == CT_ERR_USAGE && strstr(ct_ctx_last_message(ctx), "'C'") != NULL);
		ro.reference = NULL;
		CHECK(ct_kernel_run(t, &ro, &rr) == CT_OK && rr.verified == 1);
	}
	ct_kernel_free(k);
	ct_kernel_free(s);
	ct_kernel_free(t);
	ct_kernel_free(o);
	ct_ctx_free(ctx);
}

static void test_errors(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, gemm);
	char *out = (char *)1;
	CHECK(ct_kernel_autoschedule(NULL, NULL, &out, NULL) == CT_ERR_USAGE);
	CHECK(ct_kernel_autoschedule(k, NULL, NULL, NULL) == CT_ERR_USAGE);
	ct_kernel_free(k);
	/* a runtime param without a value: the one message every entry point gives */
	k = parse(ctx, "kernel r\nparam N : runtime\narray A : f32[N] inout\nfor (i: N) { A[i] += 1 }\n");
	out = NULL;
	CHECK(k && ct_kernel_autoschedule(k, NULL, &out, NULL) == CT_ERR_USAGE && out == NULL);
	CHECK(strstr(ct_ctx_last_message(ctx), "needs a value") != NULL);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_runs);
	RUN(test_machine);
	RUN(test_kept);
	RUN(test_errors);
	RUN(test_reference);
	RUN(test_fused);
	RUN(test_cache_spec);
	RUN(test_wave);
	RUN(test_rowfused);
	return h_report();
}
