/* test_interp.c: the interpreter against C, scheduled against unscheduled trees, trace, speed. */
#include "harness.h"

#include "interp/interp.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

/* ------------------------------------------------------------ helpers */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "test.cachet");
	if (!k) {
		for (int i = 0; i < ct_ctx_diag_count(ctx); i++)
			fprintf(stderr, "%s\n", ct_ctx_diag_render(ctx, i));
		fprintf(stderr, "parse failed: %s\n--- text:\n%s", ct_ctx_last_message(ctx), text);
	}
	return k;
}

/* One buffer per array (temps NULL: the interpreter allocates them). */
typedef struct bufs {
	int n;
	void *p[16];
	int64_t count[16];
} bufs;

static void bufs_free(bufs *b)
{
	for (int i = 0; i < b->n; i++)
		free(b->p[i]);
	memset(b, 0, sizeof *b);
}

static bool bufs_alloc(ct_kernel *k, bufs *b, uint64_t seed)
{
	memset(b, 0, sizeof *b);
	b->n = ct_kernel_array_count(k);
	if (b->n > 16)
		return false;
	for (int i = 0; i < b->n; i++) {
		b->count[i] = ct_kernel_array_elements(k, i);
		if (b->count[i] < 0)
			return false;
		if (ct_kernel_array_role(k, i) == CT_TEMP)
			continue;
		size_t bytes = (size_t)b->count[i] * ct_dtype_size(ct_kernel_array_dtype(k, i));
		b->p[i] = malloc(bytes ? bytes : 1);
		ct_fill_random(b->p[i], ct_kernel_array_dtype(k, i), b->count[i], seed,
		               (uint64_t)i);
	}
	return true;
}

/* Run k unscheduled and scheduled on the same random inputs; every array
 * must agree (integers exactly, f32 within 1e-5, f64 within 1e-12). */
static void check_sched_equal(ct_kernel *k)
{
	bufs ref, got;
	CHECK(bufs_alloc(k, &ref, 7) && bufs_alloc(k, &got, 7));
	ct_looptree *t0 = ct_kernel_lower(k, 0), *t1 = ct_kernel_lower(k, 1);
	CHECKF(t0 && t1, "%s", ct_ctx_last_message(k->ctx));
	if (t0 && t1) {
		ct_status s0 = ct_interp_run(t0, ref.p), s1 = ct_interp_run(t1, got.p);
		CHECKF(s0 == CT_OK && s1 == CT_OK, "%s", ct_ctx_last_message(k->ctx));
		for (int i = 0; i < ref.n && !s0 && !s1; i++) {
			if (!ref.p[i])
				continue;
			ct_dtype t = ct_kernel_array_dtype(k, i);
			double e = ct_max_rel_error(got.p[i], ref.p[i], t, ref.count[i]);
			double tol = t == CT_F32 ? 1e-5 : t == CT_F64 ? 1e-12 : 0;
			CHECKF(e <= tol, "array %s differs: %g", ct_kernel_array_name(k, i), e);
		}
	}
	ct_looptree_free(t0);
	ct_looptree_free(t1);
	bufs_free(&ref);
	bufs_free(&got);
}

/* Parse text, apply runtime values (name, value pairs), compare. */
static void sched_case(const char *name, const char *text, const char *rt_name, int64_t rt_value)
{
	h_begin(name);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	if (k && rt_name) {
		CHECK(ct_kernel_set_param(k, rt_name, rt_value) == CT_OK);
		CHECKF(ct_kernel_recheck(k) == CT_OK, "%s", ct_ctx_last_message(ctx));
	}
	if (k)
		check_sched_equal(k);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

static const char *const tnames[] = {"f32", "f64", "i32", "i64"};

/* ------------------------------------------------------------ the interpreter against C */

static void test_matmul_vs_c(void)
{
	const char *text = "kernel mm\nparam M = 7, N = 5, K = 6\narray A : f64[M, K] input\n"
	                   "array B : f64[K, N] input layout=col_major\narray C : f64[M, N] inout\n"
	                   "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	bufs b;
	CHECK(k && bufs_alloc(k, &b, 3));
	double want[7 * 5];
	const double *A = b.p[0], *B = b.p[1];
	for (int i = 0; i < 7; i++)
		for (int j = 0; j < 5; j++) {
			double c = ((double *)b.p[2])[i * 5 + j];
			for (int kk = 0; kk < 6; kk++)
				c = c + A[i * 6 + kk] * B[kk + j * 6];
			want[i * 5 + j] = c;
		}
	ct_looptree *t = ct_kernel_lower(k, 0);
	CHECK(t && ct_interp_run(t, b.p) == CT_OK);
	CHECK(ct_max_rel_error(b.p[2], want, CT_F64, 35) == 0);
	ct_looptree_free(t);
	bufs_free(&b);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_stencil_vs_c(void)
{
	const char *text =
	    "kernel st\nparam N = 6, M = 5\narray A : i32[N, M] input\narray B : i32[N, M] output\n"
	    "for (x: N, y: M) {\n"
	    "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	    "  } else {\n    B[x, y] = A[x, y] * x - y\n  }\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	bufs b;
	CHECK(k && bufs_alloc(k, &b, 5));
	int32_t want[30];
	const int32_t *A = b.p[0];
	for (int x = 0; x < 6; x++)
		for (int y = 0; y < 5; y++) {
			if (0 < x && x < 5 && 0 < y && y < 4)
				want[x * 5 + y] =
				    (A[(x - 1) * 5 + y] + A[(x + 1) * 5 + y] + A[x * 5 + y - 1] +
				     A[x * 5 + y + 1] + A[x * 5 + y]) /
				    5;
			else
				want[x * 5 + y] = A[x * 5 + y] * x - y;
		}
	ct_looptree *t = ct_kernel_lower(k, 0);
	CHECK(t && ct_interp_run(t, b.p) == CT_OK);
	CHECK(memcmp(b.p[1], want, sizeof want) == 0);
	ct_looptree_free(t);
	bufs_free(&b);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Every function, every type, conversions, lets, op= forms. */
static void test_mixed_vs_c(void)
{
	const char *text =
	    "kernel mixed\nparam N = 37\n"
	    "array A : f32[N] input\narray B : f64[N] input\narray I : i32[N] input\n"
	    "array J : i64[N] input\narray Y : f64[N] inout\narray Z : i32[N] output\n"
	    "array W : f32[N] output\narray V : i64[N] inout\narray U : i32[N] output\n"
	    "for (i: N) {\n"
	    "  let t = A[i] * I[i] + B[i]\n"
	    "  Y[i] += select(t > 0, sqrt(abs(t)), exp(min(t, 1.0) - max(B[i], 0.5)))\n"
	    "  Z[i] = I[i] * 3 / (J[i] - 2) + i\n"
	    "  W[i] = fma(A[i], A[i], -A[i]) / 2\n"
	    "  V[i] -= J[i] * J[i] + min(I[i], 2) * (i - 5)\n"
	    "  V[i] *= 3\n"
	    "  U[i] = A[i] * 10\n"
	    "}\nschedule { ii = split(i, 8) }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	bufs b;
	CHECK(k && bufs_alloc(k, &b, 11));
	if (!k)
		goto out;
	const float *A = b.p[0];
	const double *B = b.p[1];
	const int32_t *I = b.p[2];
	const int64_t *J = b.p[3];
	double Y[37];
	int32_t Z[37], U[37];
	float W[37];
	int64_t V[37];
	for (int i = 0; i < 37; i++) {
		double t = (double)(A[i] * (float)I[i]) + B[i];
		double tm = t < 1.0 ? t : 1.0, bm = B[i] > 0.5 ? B[i] : 0.5;
		Y[i] = ((double *)b.p[4])[i] + (t > 0 ? sqrt(fabs(t)) : exp(tm - bm));
		int64_t den = J[i] - 2;
		Z[i] = (int32_t)((den == 0 ? 0 : (int64_t)I[i] * 3 / den) + i);
		W[i] = fmaf(A[i], A[i], -A[i]) / 2.0f;
		int64_t v = ((int64_t *)b.p[7])[i];
		v -= J[i] * J[i] + (I[i] < 2 ? I[i] : 2) * (int64_t)(i - 5);
		V[i] = v * 3;
		U[i] = (int32_t)(A[i] * 10.0f);
	}
	for (int s = 0; s <= 1; s++) {
		bufs c;
		bufs_alloc(k, &c, 11);
		ct_looptree *t = ct_kernel_lower(k, s);
		CHECKF(t && ct_interp_run(t, c.p) == CT_OK, "%s", ct_ctx_last_message(ctx));
		CHECKF(ct_max_rel_error(c.p[4], Y, CT_F64, 37) <= 1e-15, "Y %g",
		       ct_max_rel_error(c.p[4], Y, CT_F64, 37));
		CHECK(memcmp(c.p[5], Z, sizeof Z) == 0);
		CHECK(memcmp(c.p[6], W, sizeof W) == 0);
		CHECK(memcmp(c.p[7], V, sizeof V) == 0);
		CHECK(memcmp(c.p[8], U, sizeof U) == 0);
		ct_looptree_free(t);
		bufs_free(&c);
	}
out:
	bufs_free(&b);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Integer corner cases: x/0 = 0, wrapping, saturating float-to-int. */
static void test_int_semantics(void)
{
	const char *text =
	    "kernel ints\nparam N = 4\narray X : i64[N] inout\narray Y : i32[N] output\n"
	    "array F : f64[N] input\n"
	    "for (i: N) {\n"
	    "  X[i] = X[i] / (i - i) + (X[i] * 4611686018427387904) * 4\n"
	    "  Y[i] = F[i] * 1e30 + 2147483647 + i\n"
	    "}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		int64_t X[4] = {1, -3, 5, INT64_MIN};
		int32_t Y[4];
		double F[4] = {0, 1, -1, NAN};
		void *p[3] = {X, Y, F};
		ct_looptree *t = ct_kernel_lower(k, 1);
		CHECKF(t && ct_interp_run(t, p) == CT_OK, "%s", ct_ctx_last_message(ctx));
		/* x * 2^62 * 4 wraps to 0 in 64 bits */
		for (int i = 0; i < 4; i++)
			CHECKF(X[i] == 0, "X[%d] = %lld", i, (long long)X[i]);
		/* 0 + 2147483647 + 0 fits; then saturated int64 values are
		 * truncated to 32 bits as a store of an int64 does */
		CHECK(Y[0] == 2147483647);
		CHECK(Y[1] == (int32_t)(uint32_t)(uint64_t)INT64_MAX);
		CHECK(Y[2] == (int32_t)(uint32_t)(uint64_t)INT64_MIN);
		/* NaN converts to 0 */
		CHECK(Y[3] == 0);
		ct_looptree_free(t);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_runtime_errors(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(
	    ctx, "kernel r\nparam L : runtime\narray X : f32[L] input\narray Y : f32[L] output\n"
	         "array T : f32[L] temp\n"
	         "for (i: L) { T[i] = X[i] * 2 }\nfor (j: L) { Y[j] = T[j] + 1 }\n");
	CHECK(k != NULL);
	if (k) {
		ct_looptree *t = ct_kernel_lower(k, 1);
		CHECK(t != NULL);
		float X[5] = {1, 2, 3, 4, 5}, Y[5];
		void *p[3] = {X, Y, NULL};
		/* no value for L */
		CHECK(t && ct_interp_run(t, p) == CT_ERR_USAGE);
		CHECK(strstr(ct_ctx_last_message(ctx), "'L'") != NULL);
		ct_looptree_free(t);
		CHECK(ct_kernel_set_param(k, "L", 5) == CT_OK);
		t = ct_kernel_lower(k, 1);
		/* the temp T is allocated by the interpreter */
		CHECKF(t && ct_interp_run(t, p) == CT_OK, "%s", ct_ctx_last_message(ctx));
		CHECK(Y[0] == 3 && Y[4] == 11);
		/* a missing non-temp buffer is an error */
		void *q[3] = {X, NULL, NULL};
		CHECK(t && ct_interp_run(t, q) == CT_ERR_USAGE);
		ct_looptree_free(t);
		k->params[0].value = -1; /* bypasses the checks on purpose */
		t = ct_kernel_lower(k, 1);
		CHECK(t && ct_interp_run(t, p) == CT_ERR_USAGE);
		ct_looptree_free(t);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ scheduled = unscheduled */

/* Every order of (i, j, k, ii, jj, kk) that keeps each index before its
 * split child: 6!/2^3 = 90. */
static int mm_orders(char out[][32])
{
	const char *names[6] = {"i", "j", "k", "ii", "jj", "kk"};
	int n = 0, perm[6];
	for (int a = 0; a < 46656; a++) {
		int x = a, used = 0, ok = 1;
		for (int p = 0; p < 6; p++) {
			perm[p] = x % 6;
			x /= 6;
			if (used & (1 << perm[p]))
				ok = 0;
			used |= 1 << perm[p];
		}
		if (!ok)
			continue;
		int pos[6];
		for (int p = 0; p < 6; p++)
			pos[perm[p]] = p;
		if (pos[0] > pos[3] || pos[1] > pos[4] || pos[2] > pos[5])
			continue;
		out[n][0] = 0;
		for (int p = 0; p < 6; p++) {
			strcat(out[n], names[perm[p]]);
			if (p < 5)
				strcat(out[n], ", ");
		}
		n++;
	}
	return n;
}

static void test_matmul_orders(void)
{
	static char orders[90][32];
	int n = mm_orders(orders);
	h_begin("matmul orders: count");
	CHECK(n == 90);
	h_end();
	/* dividing tiles, and prime extents that leave tails on every index */
	static const struct {
		int m, n, k, ti, tj, tk;
	} sizes[2] = {{12, 8, 6, 4, 4, 3}, {13, 11, 7, 4, 3, 2}};
	char text[1024], name[160];
	for (int o = 0; o < n; o++)
		for (int s = 0; s < 2; s++) {
			const char *ty = tnames[(o + s) % 4];
			snprintf(
			    text, sizeof text,
			    "kernel mm\nparam M = %d, N = %d, K = %d\narray A : %s[M, K] input\n"
			    "array B : %s[K, N] input%s\narray C : %s[M, N] inout\n"
			    "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
			    "schedule {\n  ii, jj, kk = tile(i=%d, j=%d, k=%d)\n  "
			    "reorder(%.31s)\n}\n",
			    sizes[s].m, sizes[s].n, sizes[s].k, ty, ty,
			    o % 3 ? "" : " layout=col_major", ty, sizes[s].ti, sizes[s].tj,
			    sizes[s].tk, orders[o]);
			snprintf(name, sizeof name, "matmul %s %s order (%.31s)", ty,
			         s ? "tails" : "dividing", orders[o]);
			sched_case(name, text, NULL, 0);
		}
}

static void test_nested_splits(void)
{
	static const char *const scheds[] = {
	    "ii, jj = tile(i=6, j=4)\n iii = split(ii, 4)\n reorder(i, j, ii, k, jj, iii)",
	    "ii = split(i, 5)\n iii = split(ii, 2)\n kk = split(k, 3)\n reorder(k, i, j, ii, kk, "
	    "iii)",
	    "jj = split(j, 7)\n jjj = split(jj, 3)\n jjjj = split(jjj, 2)\n reorder(j, i, k, jj, "
	    "jjj, jjjj)",
	    "kk = split(k, 4)\n kkk = split(kk, 3)\n ii = split(i, 8)\n reorder(i, k, kk, j, ii, "
	    "kkk)",
	};
	char text[1024], name[160];
	for (int s = 0; s < 4; s++)
		for (int t = 0; t < 4; t++) {
			snprintf(
			    text, sizeof text,
			    "kernel mm\nparam M = 17, N = 13, K = 11\narray A : %s[M, K] input\n"
			    "array B : %s[K, N] input\narray C : %s[M, N] inout\n"
			    "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
			    "schedule {\n %s\n}\n",
			    tnames[t], tnames[t], tnames[t], scheds[s]);
			snprintf(name, sizeof name, "nested splits %d %s", s, tnames[t]);
			sched_case(name, text, NULL, 0);
		}
}

static void test_two_index(void)
{
	static const char *const scheds[] = {
	    "aa, qq = tile(a=3, q=4)\n reorder(a, q, aa, qq)",
	    "aa, qq = tile(a=3, q=4)\n pp = split(p, 3)\n bb = split(b, 2)\n reorder(q, a, qq, aa)",
	    "qq = split(q, 7)\n pp = split(p, 4)\n ppp = split(pp, 3)",
	    "aa = split(a, 5)\n bb = split(b, 5)\n reorder(a, aa, q)",
	};
	char text[1400], name[160];
	for (int s = 0; s < 4; s++)
		for (int t = 0; t < 4; t += 1) {
			if ((s + t) % 2)
				continue;
			snprintf(text, sizeof text,
			         "kernel two_index\nparam N = 10, V = 7\narray A : %s[N, N] input\n"
			         "array C1 : %s[N, V] input\narray C2 : %s[N, V] input "
			         "layout=col_major\n"
			         "array T : %s[V, N] temp\narray B : %s[V, V] inout\n"
			         "for (a: V, q: N) {\n  T[a, q] = 0\n  for (p: N) {\n    T[a, q] "
			         "+= C1[p, a] * A[p, q]\n"
			         "  }\n  for (b: V) {\n    B[a, b] += C2[q, b] * T[a, q]\n  }\n}\n"
			         "schedule {\n %s\n}\n",
			         tnames[t], tnames[t], tnames[t], tnames[t], tnames[t], scheds[s]);
			snprintf(name, sizeof name, "two-index transform %d %s", s, tnames[t]);
			sched_case(name, text, NULL, 0);
		}
}

static void test_stencils(void)
{
	static const char *const scheds[] = {
	    "xx, yy = tile(x=4, y=3)\n reorder(x, y, xx, yy)",
	    "xx, yy = tile(x=5, y=16)\n reorder(y, x, yy, xx)",
	    "yy = split(y, 2)\n yyy = split(yy, 1)",
	};
	char text[1400], name[160];
	for (int s = 0; s < 3; s++)
		for (int t = 0; t < 4; t++) {
			snprintf(
			    text, sizeof text,
			    "kernel stencil5\nparam N = 13, M = 11\narray A : %s[N, M] input\n"
			    "array B : %s[N, M] output\n"
			    "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
			    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, "
			    "y]) / 5\n"
			    "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
			    "schedule {\n %s\n}\n",
			    tnames[t], tnames[t], scheds[s]);
			snprintf(name, sizeof name, "5-point stencil %d %s", s, tnames[t]);
			sched_case(name, text, NULL, 0);
		}
	/* conditions that are not a plain conjunction, and facts from else */
	sched_case("5-point stencil, negated disjunction",
	           "kernel st\nparam N = 13, M = 11\narray A : f64[N, M] input\narray B : f64[N, "
	           "M] output\n"
	           "for (x: N, y: M) {\n  if (!(x == 0 || x == N-1 || y == 0 || y == M-1)) {\n"
	           "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	           "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
	           "schedule {\n  xx, yy = tile(x=4, y=3)\n}\n",
	           NULL, 0);
	sched_case("1-D stencil, bounds from the else branch",
	           "kernel st\nparam N = 29\narray A : i32[N] input\narray B : i32[N] output\n"
	           "for (x: N) {\n  if (x < 1) { B[x] = A[x] } else { if (x >= N-1) { B[x] = -A[x] "
	           "} else {\n"
	           "    B[x] = A[x-1] - 2 * A[x] + A[x+1] } }\n}\n"
	           "schedule {\n  xx = split(x, 4)\n}\n",
	           NULL, 0);
}

static void test_axpy_runtime(void)
{
	static const int64_t sizes[] = {1, 2, 15, 16, 17, 100, 161};
	char text[1024], name[160];
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		const char *ty = tnames[s % 4];
		snprintf(
		    text, sizeof text,
		    "kernel axpy\nparam L : runtime\narray X : %s[L] input\narray Y : %s[L] inout\n"
		    "for (i: L) {\n  Y[i] = 2 * X[i] + Y[i]\n}\n"
		    "schedule {\n  ii = split(i, 16)\n  iii = split(ii, 5)\n}\n",
		    ty, ty);
		snprintf(name, sizeof name, "runtime axpy L=%lld %s", (long long)sizes[s], ty);
		sched_case(name, text, "L", sizes[s]);
	}
}

static void test_bounds(void)
{
	char text[1024], name[160];
	for (int t = 0; t < 4; t++) {
		snprintf(
		    text, sizeof text,
		    "kernel bounds\nparam M = 23, N = 17\narray A : %s[M, N] input\narray B : "
		    "%s[M, N] inout\n"
		    "for (i: 2 .. M-3, j: 1 .. N) {\n  B[i, j] += A[i-1, j-1] * 3 - A[i+2, j]\n}\n"
		    "schedule {\n  ii, jj = tile(i=5, j=4)\n  reorder(i, j, jj, ii)\n}\n",
		    tnames[t], tnames[t]);
		snprintf(name, sizeof name, "lo .. hi bounds %s", tnames[t]);
		sched_case(name, text, NULL, 0);
	}
	static const int64_t sizes[] = {1, 2, 3, 4, 8, 50};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		snprintf(text, sizeof text,
		         "kernel jac\nparam L : runtime\narray A : f64[L] input\narray B : f64[L] "
		         "inout\n"
		         "for (i: 1 .. L-1) {\n  B[i] = (A[i-1] + A[i] + A[i+1]) / 3\n}\n"
		         "schedule {\n  ii = split(i, 7)\n}\n");
		snprintf(name, sizeof name, "runtime lo .. hi L=%lld", (long long)sizes[s]);
		sched_case(name, text, "L", sizes[s]);
	}
}

static void test_lets_and_selects(void)
{
	char text[1024], name[160];
	for (int t = 0; t < 4; t++) {
		snprintf(
		    text, sizeof text,
		    "kernel rb\nparam R = 9, C = 14\narray X : %s[R, C] input\narray Bias : %s[C] "
		    "input\n"
		    "array Y : %s[R, C] inout\n"
		    "for (r: R) {\n  for (c: C) {\n    let t = X[r, c] + Bias[c] - r\n"
		    "    Y[r, c] -= select(t > 0 && !(c == 3), t * t, min(t, -t) + c)\n  }\n}\n"
		    "schedule {\n  cc, rr = tile(c=4, r=2)\n  reorder(c, r, cc, rr)\n}\n",
		    tnames[t], tnames[t], tnames[t]);
		snprintf(name, sizeof name, "lets and selects %s", tnames[t]);
		sched_case(name, text, NULL, 0);
	}
}

/* ------------------------------------------------------------ trace */

typedef struct tr_rec {
	int n, cap;
	int buf[256];
	int64_t off[256];
	int w[256];
	int64_t total;
} tr_rec;

static void rec_fn(void *ud, int buffer, int64_t offset, int is_write)
{
	tr_rec *r = ud;
	if (r->n < 256) {
		r->buf[r->n] = buffer;
		r->off[r->n] = offset;
		r->w[r->n] = is_write;
		r->n++;
	}
	r->total++;
}

/* want: triples (buffer, offset, is_write). */
static void check_trace(const char *text, int sched, const int *want, int nwant)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	ct_looptree *t = k ? ct_kernel_lower(k, sched) : NULL;
	CHECK(t != NULL);
	tr_rec r;
	memset(&r, 0, sizeof r);
	CHECKF(t && ct_interp_trace(t, rec_fn, &r) == CT_OK, "%s", ct_ctx_last_message(ctx));
	CHECKF(r.total == nwant, "%lld accesses, want %d", (long long)r.total, nwant);
	for (int i = 0; i < nwant && i < r.n; i++)
		CHECKF(r.buf[i] == want[3 * i] && r.off[i] == want[3 * i + 1] &&
		           r.w[i] == want[3 * i + 2],
		       "access %d is (%d, %lld, %d), want (%d, %d, %d)", i, r.buf[i],
		       (long long)r.off[i], r.w[i], want[3 * i], want[3 * i + 1], want[3 * i + 2]);
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_trace_opassign(void)
{
	static const int want[] = {0, 0, 0, 1, 0, 0, 2, 0, 0, 2, 0, 1,
	                           0, 1, 0, 1, 1, 0, 2, 1, 0, 2, 1, 1};
	check_trace("kernel t1\nparam N = 2\narray A : f32[N] input\narray B : f32[N] input\n"
	            "array C : f32[N] inout\nfor (i: N) { C[i] += A[i] * B[i] }\n",
	            1, want, 8);
}

static void test_trace_let_select_layout(void)
{
	/* X col_major (offset i + 2j), A and Y row_major (3i + j) */
	int want[6 * 5 * 3], n = 0;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++) {
			int seq[5][3] = {{0, i + 2 * j, 0},
			                 {1, 3 * i + j, 0},
			                 {1, 3 * i + j, 0},
			                 {0, i + 2 * j, 0},
			                 {2, 3 * i + j, 1}};
			for (int s = 0; s < 5; s++)
				for (int c = 0; c < 3; c++)
					want[n++] = seq[s][c];
		}
	check_trace("kernel t2\nparam M = 2, N = 3\narray X : f64[M, N] input layout=col_major\n"
	            "array A : f64[M, N] input\narray Y : f64[M, N] output\n"
	            "for (i: M, j: N) {\n  let t = X[i, j] + A[i, j]\n"
	            "  Y[i, j] = select(t > 0, A[i, j], X[i, j])\n}\n",
	            1, want, 30);
}

static void test_trace_if(void)
{
	static const int want[] = {0, 0, 0, 1, 0, 1,          /* x=0: else */
	                           0, 0, 0, 0, 2, 0, 1, 1, 1, /* x=1 */
	                           0, 1, 0, 0, 3, 0, 1, 2, 1, /* x=2 */
	                           0, 3, 0, 1, 3, 1};         /* x=3: else */
	check_trace("kernel t3\nparam N = 4\narray A : i32[N] input\narray B : i32[N] output\n"
	            "for (x: N) {\n  if (0 < x && x < N-1) { B[x] = A[x-1] + A[x+1] } else { B[x] "
	            "= A[x] }\n}\n"
	            "schedule { xx = split(x, 3) }\n",
	            1, want, 10);
}

static void test_trace_schedule_order(void)
{
	/* (i, j) visited as (0,0) (1,0) (0,1) (1,1) (2,0) (2,1); A[i,j] at
	 * 2i+j, B[j,i] at 3j+i */
	static const int ij[6][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}};
	int want[6 * 2 * 3], n = 0;
	for (int s = 0; s < 6; s++) {
		int i = ij[s][0], j = ij[s][1];
		int seq[6] = {0, 2 * i + j, 0, 1, 3 * j + i, 1};
		for (int c = 0; c < 6; c++)
			want[n++] = seq[c];
	}
	check_trace(
	    "kernel t4\nparam M = 3, N = 2\narray A : i64[M, N] input\narray B : i64[N, M] output\n"
	    "for (i: M, j: N) { B[j, i] = A[i, j] }\nschedule { ii = split(i, 2)\n reorder(i, j, "
	    "ii) }\n",
	    1, want, 12);
}

static void test_trace_subassign(void)
{
	static const int want[] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1,
	                           0, 2, 0, 0, 2, 0, 1, 1, 0, 1, 1, 1};
	check_trace("kernel t5\nparam N = 2\narray A : f32[N+1] input\narray B : f32[N] inout\n"
	            "for (i: N) { B[i] -= A[i+1] * A[2*i] }\n",
	            0, want, 8);
}

typedef struct batch_rec {
	int64_t n;
	uint64_t hash;
	int maxref;
} batch_rec;

static ct_status batch_fn(void *ud, const interp_access *acc, int n)
{
	batch_rec *r = ud;
	for (int i = 0; i < n; i++) {
		r->hash = r->hash * 1000003u + (uint64_t)acc[i].offset * 31u +
		          (uint64_t)acc[i].buffer * 7u + (uint64_t)acc[i].is_write;
		if (acc[i].ref > r->maxref)
			r->maxref = acc[i].ref;
	}
	r->n += n;
	return CT_OK;
}

static void hash_fn(void *ud, int buffer, int64_t offset, int is_write)
{
	batch_rec *r = ud;
	r->hash = r->hash * 1000003u + (uint64_t)offset * 31u + (uint64_t)buffer * 7u +
	          (uint64_t)is_write;
	r->n++;
}

static ct_status stop_fn(void *ud, const interp_access *acc, int n)
{
	(void)acc;
	(void)n;
	(*(int *)ud)++;
	return CT_ERR_LIMIT;
}

static void test_trace_batch_and_refs(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(
	    ctx, "kernel mm\nparam M = 13, N = 11, K = 7\narray A : f32[M, K] input\n"
	         "array B : f32[K, N] input\narray C : f32[M, N] inout\n"
	         "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	         "schedule { ii, jj, kk = tile(i=4, j=3, k=2)\n reorder(k, i, j, kk, jj, ii) }\n");
	ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
	CHECK(t != NULL);
	if (t) {
		batch_rec a = {0, 0, -1}, b = {0, 0, -1};
		CHECK(interp_trace_batch(t, batch_fn, &a) == CT_OK);
		CHECK(ct_interp_trace(t, hash_fn, &b) == CT_OK);
		CHECK(a.n == 4 * 13 * 11 * 7 && b.n == a.n && a.hash == b.hash);
		CHECK(a.maxref == 3);
		interp_ref *refs;
		int nrefs;
		CHECK(interp_refs(t, &refs, &nrefs) == CT_OK);
		CHECK(nrefs == 4);
		if (nrefs == 4) {
			CHECK(refs[0].array == 0 && refs[1].array == 1 && refs[2].array == 2 &&
			      refs[3].array == 2);
			CHECK(!refs[2].is_write && refs[3].is_write && refs[3].pos == 3 &&
			      refs[0].stmt == 1);
		}
		ct_free(ctx, refs);
		int calls = 0;
		CHECK(interp_trace_batch(t, stop_fn, &calls) == CT_ERR_LIMIT);
		CHECK(calls == 1);
	}
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ hand-edited trees (what the plan
 * pass makes) */

/* Editing context: the tree and the ids the edits name. */
typedef struct ed {
	ct_looptree *t;
	int i, ii;      /* the kernel's index i and its split ii */
	int np;         /* k->nparams: the first derived value's AFF_PARAM id */
	int abuf, bbuf; /* buffers added by the edit (-1 when none) */
	bool ok;        /* allocation and arithmetic went well */
} ed;

static void *ed_alloc(ed *e, size_t n)
{
	void *p = ct_arena_alloc(&e->t->arena, n ? n : 1);
	if (!p)
		e->ok = false;
	else
		memset(p, 0, n ? n : 1);
	return p;
}

/* c + sum of n terms given as (kind, id, coef) triples. */
static aff mk_aff(ed *e, int64_t c, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	aff r = aff_const(c);
	for (int j = 0; j < n; j++) {
		int kind = va_arg(ap, int), id = va_arg(ap, int);
		int64_t coef = va_arg(ap, int64_t);
		r = aff_add(&e->t->arena, r, aff_sym1(&e->t->arena, kind, id, coef, &e->ok),
		            &e->ok);
	}
	va_end(ap);
	return r;
}

#define T_(kind, id, coef) (int)(kind), (int)(id), (int64_t)(coef)

static lt_node *mk_node(ed *e, lt_kind kind, int nkids, lt_node *const *kids)
{
	lt_node *x = ed_alloc(e, sizeof *x);
	if (!x)
		return NULL;
	x->kind = kind;
	x->step = 1;
	if (nkids > 0) {
		x->kids = ed_alloc(e, sizeof *x->kids * (size_t)nkids);
		if (!x->kids)
			return NULL;
		memcpy(x->kids, kids, sizeof *x->kids * (size_t)nkids);
		x->nkids = nkids;
		for (int j = 0; j < nkids; j++)
			if (kids[j])
				kids[j]->parent = x;
	}
	return x;
}

static lt_node *mk_loop(ed *e, int index, int64_t lo, int64_t hi, int64_t step, lt_node *body)
{
	lt_node *x = mk_node(e, LT_LOOP, 1, &body);
	if (x) {
		x->index = index;
		x->lo = bx_const(&e->t->arena, lo);
		x->hi = bx_const(&e->t->arena, hi);
		x->step = step;
	}
	return x;
}

/* if (g0 >= 0 && ...) body, the guard of halo copies */
static lt_node *mk_guard(ed *e, int ng, const aff *g, int nkids, lt_node *const *kids)
{
	lt_node *x = mk_node(e, LT_IF, nkids, kids);
	aff *gc = ed_alloc(e, sizeof *gc * (size_t)(ng + 1));
	if (x && gc) {
		memcpy(gc, g, sizeof *gc * (size_t)ng);
		x->guard = gc;
		x->nguard = ng;
	}
	return x;
}

static ir_expr *mk_access(ed *e, int array, const aff *sub)
{
	const ir_array *a = &e->t->arrays[array];
	ir_expr *x = ed_alloc(e, sizeof *x);
	aff *s = ed_alloc(e, sizeof *s * (size_t)a->rank);
	if (!x || !s)
		return NULL;
	memcpy(s, sub, sizeof *s * (size_t)a->rank);
	x->kind = EX_ACCESS;
	x->type = a->type;
	x->id = array;
	x->sub = s;
	x->height = 1;
	return x;
}

/* A cache copy (stmt_id 0): dst[dsub] op= src[ssub], or = 0 when src < 0. */
static lt_node *mk_copy(ed *e, int dst, const aff *dsub, int src, const aff *ssub, ir_assign op)
{
	ir_node *s = ed_alloc(e, sizeof *s);
	lt_node *x = mk_node(e, LT_STMT, 0, NULL);
	if (!s || !x)
		return NULL;
	s->kind = ND_STMT;
	s->op = op;
	s->lhs = mk_access(e, dst, dsub);
	if (src >= 0) {
		s->rhs = mk_access(e, src, ssub);
	} else {
		s->rhs = ed_alloc(e, sizeof *s->rhs);
		if (s->rhs) {
			s->rhs->kind = EX_NUM;
			s->rhs->type = e->t->arrays[dst].type;
			s->rhs->untyped = true;
			s->rhs->height = 1;
		}
	}
	x->stmt = s;
	return x;
}

/* Append a storage (role temp) of the given type and constant extents. */
static int add_storage(ed *e, const char *name, ct_dtype type, int rank, const int64_t *ext)
{
	ct_looptree *t = e->t;
	int n = t->narrays;
	ir_array *arrays = ed_alloc(e, sizeof *arrays * (size_t)(n + 1));
	const bx **x = ed_alloc(e, sizeof *x * (size_t)(n + 1) * IR_MAX_RANK);
	if (!arrays || !x)
		return -1;
	memcpy(arrays, t->arrays, sizeof *arrays * (size_t)n);
	memcpy(x, t->ext, sizeof *x * (size_t)n * IR_MAX_RANK);
	ir_array *a = &arrays[n];
	a->name = name;
	a->type = type;
	a->role = CT_TEMP;
	a->rank = rank;
	for (int d = 0; d < rank; d++) {
		a->order[d] = d;
		x[n * IR_MAX_RANK + d] = bx_const(&t->arena, ext[d]);
	}
	t->arrays = arrays;
	t->ext = x;
	t->narrays = n + 1;
	return n;
}

/* Append a copy-loop index (no chain). */
static int add_index(ed *e, const char *name)
{
	ct_looptree *t = e->t;
	int n = t->nindices;
	ir_index *v = ed_alloc(e, sizeof *v * (size_t)(n + 1));
	if (!v)
		return -1;
	memcpy(v, t->indices, sizeof *v * (size_t)n);
	v[n].name = name;
	v[n].kind = IX_LOOP;
	v[n].step = 1;
	v[n].parent = v[n].child = -1;
	v[n].root = n;
	t->indices = v;
	t->nindices = n + 1;
	return n;
}

/* Rewrites an access of a cloned statement in place (id and subscripts). */
typedef void (*acc_fn)(ed *e, ir_expr *acc);

static ir_expr *clone_expr(ed *e, const ir_expr *x, acc_fn fn)
{
	if (!x)
		return NULL;
	ir_expr *c = ed_alloc(e, sizeof *c);
	if (!c)
		return NULL;
	*c = *x;
	if (x->nargs > 0) {
		c->args = ed_alloc(e, sizeof *c->args * (size_t)x->nargs);
		if (!c->args)
			return NULL;
		for (int j = 0; j < x->nargs; j++)
			c->args[j] = clone_expr(e, x->args[j], fn);
	}
	if (x->kind == EX_ACCESS) {
		c->sub = ed_alloc(e, sizeof *c->sub * IR_MAX_RANK);
		if (!c->sub)
			return NULL;
		memcpy(c->sub, x->sub, sizeof *c->sub * (size_t)e->t->arrays[x->id].rank);
		fn(e, c);
	}
	return c;
}

/* Replace the statement of every LT_STMT under v by a clone (same stmt_id,
 * as the plan pass makes them) whose accesses fn rewrites. */
static void map_stmts(ed *e, lt_node *const *v, int n, acc_fn fn)
{
	for (int j = 0; j < n; j++) {
		lt_node *x = v[j];
		if (x->kind == LT_STMT) {
			ir_node *s = ed_alloc(e, sizeof *s);
			if (!s)
				return;
			*s = *x->stmt;
			s->lhs = clone_expr(e, x->stmt->lhs, fn);
			s->rhs = clone_expr(e, x->stmt->rhs, fn);
			x->stmt = s;
		}
		map_stmts(e, x->kids, x->nkids, fn);
		map_stmts(e, x->els, x->nels, fn);
	}
}

/* The tree of the kernel below: main loops over i (step 4) and a tail:
 *   for i in [0,8) step 4: for ii in [0,4): S      for i in [8,10) step 4: for ii in [0,2): S */
static const char *const k_split =
    "kernel ed\nparam N = 10\narray A : f64[N] input\narray B : f64[N] inout\n"
    "for (i: N) { B[i] += A[i] * 2 }\nschedule { ii = split(i, 4) }\n";

static void acc_loop(ed *e, ir_expr *a)
{
	a->sub[0] = mk_aff(e, 0, 2, T_(AFF_LOOP, e->i, 1), T_(AFF_LOOP, e->ii, 1));
}

static void acc_trip(ed *e, ir_expr *a)
{
	a->sub[0] = mk_aff(e, 0, 2, T_(AFF_TRIP, e->i, 4), T_(AFF_LOOP, e->ii, 1));
}

static void acc_derived(ed *e, ir_expr *a)
{
	/* i + D0 - 9 with D0 = N - 1 = 9 */
	a->sub[0] = mk_aff(e, -9, 2, T_(AFF_INDEX, e->i, 1), T_(AFF_PARAM, e->np, 1));
}

static void acc_to_buffers(ed *e, ir_expr *a)
{
	a->id = a->id == 0 ? e->abuf : e->bbuf;
}

static void acc_a_minus_1(ed *e, ir_expr *a)
{
	if (a->id == 0)
		a->sub[0] = mk_aff(e, -1, 1, T_(AFF_INDEX, e->i, 1));
}

static void acc_a_multi(ed *e, ir_expr *a)
{
	if (a->id == 0) {
		a->id = e->abuf;
		a->sub[0] = mk_aff(e, 0, 1, T_(AFF_TRIP, e->i, 1));
		a->sub[1] = mk_aff(e, 0, 1, T_(AFF_LOOP, e->ii, 1));
	}
}

static bool edit_loop(ed *e)
{
	map_stmts(e, e->t->roots, e->t->nroots, acc_loop);
	return true;
}

static bool edit_trip(ed *e)
{
	map_stmts(e, e->t->roots, e->t->nroots, acc_trip);
	return true;
}

/* Derived values: D0 = N - 1 in a subscript, D1 = N / 4 * 4 as the start
 * of the tail loop. */
static bool edit_derived(ed *e)
{
	ct_looptree *t = e->t;
	ct_arena *a = &t->arena;
	const bx **d = ed_alloc(e, sizeof *d * 2);
	if (!d || t->nroots != 2)
		return false;
	d[0] = bx_bin(a, BX_SUB, bx_param(a, 0), bx_const(a, 1));
	d[1] = bx_bin(a, BX_MUL, bx_bin(a, BX_FLOORDIV, bx_param(a, 0), bx_const(a, 4)),
	              bx_const(a, 4));
	t->derived = d;
	t->nderived = 2;
	t->roots[1]->lo = bx_param(a, e->np + 1);
	map_stmts(e, t->roots, t->nroots, acc_derived);
	return true;
}

/* Each statement S becomes two guard-ifs that together run it once:
 * if (i + ii - 3 >= 0) S; if (2 - 4*trip(i) - ii >= 0) S. */
static void guard_split(ed *e, lt_node **v, int n)
{
	for (int j = 0; j < n; j++) {
		lt_node *x = v[j];
		if (x->kind != LT_STMT) {
			guard_split(e, x->kids, x->nkids);
			continue;
		}
		aff g1 = mk_aff(e, -3, 2, T_(AFF_LOOP, e->i, 1), T_(AFF_LOOP, e->ii, 1));
		aff g2 = mk_aff(e, 2, 2, T_(AFF_INDEX, e->ii, -1), T_(AFF_TRIP, e->i, -4));
		lt_node *s2 = mk_node(e, LT_STMT, 0, NULL);
		if (!s2)
			return;
		s2->stmt = x->stmt;
		lt_node *ifs[2] = {mk_guard(e, 1, &g1, 1, &x), mk_guard(e, 1, &g2, 1, &s2)};
		lt_node *parent = x->parent;
		if (!ifs[0] || !ifs[1] || !parent)
			return;
		/* replace x by the two ifs in its parent's kids */
		lt_node **kids = ed_alloc(e, sizeof *kids * (size_t)(parent->nkids + 1));
		if (!kids)
			return;
		int m = 0;
		for (int q = 0; q < parent->nkids; q++) {
			if (parent->kids[q] == x) {
				kids[m++] = ifs[0];
				kids[m++] = ifs[1];
			} else {
				kids[m++] = parent->kids[q];
			}
		}
		parent->kids = kids;
		parent->nkids = m;
		return;
	}
}

static bool edit_guard(ed *e)
{
	for (int r = 0; r < e->t->nroots; r++)
		guard_split(e, &e->t->roots[r], 1);
	return true;
}

/* LT_CACHE nodes: one around all roots, one around each loop over ii. */
static bool edit_cache_nodes(ed *e)
{
	ct_looptree *t = e->t;
	for (int r = 0; r < t->nroots; r++) {
		lt_node *x = t->roots[r];
		if (x->kind != LT_LOOP || x->nkids != 1)
			return false;
		x->kids[0] = mk_node(e, LT_CACHE, 1, &x->kids[0]);
	}
	lt_node *c = mk_node(e, LT_CACHE, t->nroots, t->roots);
	t->roots[0] = c;
	t->nroots = 1;
	return c != NULL;
}

/* A copy-in buffer for A and a zero-filled, reduced buffer for B:
 *   cache { for c0 in [0,N): Abuf[c0] = A[c0]; for c0: Bbuf[c0] = 0;
 *           body with A -> Abuf, B -> Bbuf; for c0: B[c0] += Bbuf[c0] } */
static bool edit_buffers(ed *e)
{
	ct_looptree *t = e->t;
	const int64_t n10[1] = {10};
	e->abuf = add_storage(e, "Abuf", CT_F64, 1, n10);
	e->bbuf = add_storage(e, "Bbuf", CT_F64, 1, n10);
	int c0 = add_index(e, "c0");
	if (e->abuf < 0 || e->bbuf < 0 || c0 < 0)
		return false;
	map_stmts(e, t->roots, t->nroots, acc_to_buffers);
	aff s = mk_aff(e, 0, 1, T_(AFF_LOOP, c0, 1));
	lt_node *kids[8];
	int n = 0;
	kids[n++] = mk_loop(e, c0, 0, 10, 1, mk_copy(e, e->abuf, &s, 0, &s, AS_SET));
	kids[n++] = mk_loop(e, c0, 0, 10, 1, mk_copy(e, e->bbuf, &s, -1, NULL, AS_SET));
	for (int r = 0; r < t->nroots; r++)
		kids[n++] = t->roots[r];
	kids[n++] = mk_loop(e, c0, 0, 10, 1, mk_copy(e, 1, &s, e->bbuf, &s, AS_ADD));
	t->roots[0] = mk_node(e, LT_CACHE, n, kids);
	t->nroots = 1;
	return true;
}

/* A multicache: Abuf[3][4], slot trip(i), filled inside each loop over i
 * by a halo-style guarded copy (the tail's copy loop runs past N):
 *   for i: cache { for c1 in [0,4): if (9 - i - c1 >= 0) Abuf[trip(i), c1] = A[i + c1]
 *                  for ii: S with A -> Abuf[trip(i), ii] } */
static bool edit_multicache(ed *e)
{
	ct_looptree *t = e->t;
	const int64_t ext[2] = {3, 4};
	e->abuf = add_storage(e, "Abuf", CT_F64, 2, ext);
	int c1 = add_index(e, "c1");
	if (e->abuf < 0 || c1 < 0)
		return false;
	map_stmts(e, t->roots, t->nroots, acc_a_multi);
	for (int r = 0; r < t->nroots; r++) {
		lt_node *x = t->roots[r];
		if (x->kind != LT_LOOP || x->nkids != 1)
			return false;
		aff g = mk_aff(e, 9, 2, T_(AFF_LOOP, e->i, -1), T_(AFF_LOOP, c1, -1));
		aff ds[2] = {mk_aff(e, 0, 1, T_(AFF_TRIP, e->i, 1)),
		             mk_aff(e, 0, 1, T_(AFF_LOOP, c1, 1))};
		aff ss = mk_aff(e, 0, 2, T_(AFF_LOOP, e->i, 1), T_(AFF_LOOP, c1, 1));
		lt_node *cp = mk_copy(e, e->abuf, ds, 0, &ss, AS_SET);
		lt_node *kids[2] = {mk_loop(e, c1, 0, 4, 1, mk_guard(e, 1, &g, 1, &cp)),
		                    x->kids[0]};
		x->kids[0] = mk_node(e, LT_CACHE, 2, kids);
	}
	return true;
}

/* A copy loop with a negative start: for c0 in [-6,4) step 4:
 * B[trip(c0) + 2] = A[c0 + 6], trips -2, -1, 0 (floor division). */
static bool edit_trip_negative(ed *e)
{
	ct_looptree *t = e->t;
	int c0 = add_index(e, "c0");
	if (c0 < 0)
		return false;
	aff d = mk_aff(e, 2, 1, T_(AFF_TRIP, c0, 1)), s = mk_aff(e, 6, 1, T_(AFF_LOOP, c0, 1));
	lt_node **roots = ed_alloc(e, sizeof *roots * (size_t)(t->nroots + 1));
	if (!roots)
		return false;
	memcpy(roots, t->roots, sizeof *roots * (size_t)t->nroots);
	roots[t->nroots] = mk_loop(e, c0, -6, 4, 4, mk_copy(e, 1, &d, 0, &s, AS_SET));
	t->roots = roots;
	t->nroots++;
	return true;
}

static void want_trip_negative(double *a, double *b)
{
	for (int x = 0; x < 10; x++)
		b[x] = b[x] + a[x] * 2;
	b[0] = a[0];
	b[1] = a[4];
	b[2] = a[8];
}

/* A[i - 1] under a guard i + ii - 1 >= 0 written with loop variables: the
 * guard's fact proves the access, written over original indices. */
static bool edit_guard_proves(ed *e)
{
	map_stmts(e, e->t->roots, e->t->nroots, acc_a_minus_1);
	aff g = mk_aff(e, -1, 2, T_(AFF_LOOP, e->i, 1), T_(AFF_LOOP, e->ii, 1));
	for (int r = 0; r < e->t->nroots; r++) {
		lt_node *x = e->t->roots[r]->kids[0]; /* loop over ii */
		x->kids[0] = mk_guard(e, 1, &g, 1, &x->kids[0]);
	}
	return true;
}

static void want_minus_1(double *a, double *b)
{
	for (int x = 1; x < 10; x++)
		b[x] = b[x] + a[x - 1] * 2;
}

/* The same access without the guard: checked at run time, an error at i = 0. */
static bool edit_unguarded(ed *e)
{
	map_stmts(e, e->t->roots, e->t->nroots, acc_a_minus_1);
	return true;
}

/* A buffer of 4 elements that a copy loop over [0,10) overruns. */
static bool edit_buffer_overrun(ed *e)
{
	const int64_t n4[1] = {4};
	e->abuf = add_storage(e, "Abuf", CT_F64, 1, n4);
	int c0 = add_index(e, "c0");
	if (e->abuf < 0 || c0 < 0)
		return false;
	aff s = mk_aff(e, 0, 1, T_(AFF_LOOP, c0, 1));
	lt_node *kids[2] = {mk_loop(e, c0, 0, 10, 1, mk_copy(e, e->abuf, &s, 0, &s, AS_SET)),
	                    e->t->roots[0]};
	e->t->roots[0] = mk_node(e, LT_CACHE, 2, kids);
	return true;
}

/* A user `if (0 < i)` proves A[i + ii - 1] written with loop variables. */
static void acc_loop_minus_1(ed *e, ir_expr *a)
{
	if (a->id == 0)
		a->sub[0] = mk_aff(e, -1, 2, T_(AFF_LOOP, e->i, 1), T_(AFF_LOOP, e->ii, 1));
}

static bool edit_user_if(ed *e)
{
	map_stmts(e, e->t->roots, e->t->nroots, acc_loop_minus_1);
	return true;
}

typedef struct edit_case {
	const char *name;
	const char *text; /* NULL: k_split */
	bool (*edit)(ed *e);
	void (*want)(double *a, double *b); /* NULL: the unedited tree's results */
	bool same_trace;  /* the trace equals the unedited one access for access */
	int ncopy;        /* accesses with ref -1 (cache copies) */
	int unproven;     /* accesses checked at run time; -1: not looked at */
	ct_status status; /* of the run and of the trace */
	const char *msg;  /* in the error message */
} edit_case;

static const edit_case edit_cases[] = {
    {"edit_aff_loop", NULL, edit_loop, NULL, true, 0, 0, CT_OK, NULL},
    {"edit_aff_trip", NULL, edit_trip, NULL, true, 0, 0, CT_OK, NULL},
    {"edit_derived", NULL, edit_derived, NULL, true, 0, 0, CT_OK, NULL},
    {"edit_guard_if", NULL, edit_guard, NULL, true, 0, 0, CT_OK, NULL},
    {"edit_cache_nodes", NULL, edit_cache_nodes, NULL, true, 0, 0, CT_OK, NULL},
    {"edit_buffers", NULL, edit_buffers, NULL, false, 20 + 10 + 30, 0, CT_OK, NULL},
    {"edit_multicache", NULL, edit_multicache, NULL, false, 20, 0, CT_OK, NULL},
    {"edit_trip_negative", NULL, edit_trip_negative, want_trip_negative, false, 6, 0, CT_OK, NULL},
    {"edit_guard_proves", NULL, edit_guard_proves, want_minus_1, false, 0, 0, CT_OK, NULL},
    {"edit_user_if_proves",
     "kernel ed\nparam N = 10\narray A : f64[N] input\n"
     "array B : f64[N] inout\nfor (i: N) { if (0 < i) { B[i] += A[i-1] "
     "* 2 } }\nschedule { ii = split(i, 4) }\n",
     edit_user_if, want_minus_1, true, 0, 0, CT_OK, NULL},
    {"edit_unguarded_checked", NULL, edit_unguarded, NULL, false, 0, 1, CT_ERR_RUNTIME,
     "out-of-bounds access to array 'A' (element -1 of 10)"},
    {"edit_buffer_overrun", NULL, edit_buffer_overrun, NULL, false, 0, 1, CT_ERR_RUNTIME,
     "out-of-bounds access to array 'Abuf' (element 4 of 4)"},
};

typedef struct acc_list {
	int n, cap;
	interp_access *v;
} acc_list;

static ct_status acc_collect(void *ud, const interp_access *acc, int n)
{
	acc_list *l = ud;
	if (l->n + n > l->cap) {
		l->cap = (l->n + n) * 2;
		l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
		if (!l->v)
			return CT_ERR_NOMEM;
	}
	memcpy(l->v + l->n, acc, sizeof *acc * (size_t)n);
	l->n += n;
	return CT_OK;
}

static void run_edit_case(const edit_case *ec)
{
	h_begin(ec->name);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, ec->text ? ec->text : k_split);
	bufs ref, got;
	CHECK(k && bufs_alloc(k, &ref, 11) && bufs_alloc(k, &got, 11));
	ct_looptree *t0 = k ? ct_kernel_lower(k, 1) : NULL, *t1 = k ? ct_kernel_lower(k, 1) : NULL;
	CHECK(t0 && t1);
	ed e = {t1, -1, -1, k ? k->nparams : 0, -1, -1, true};
	for (int x = 0; k && x < k->nindices; x++) {
		if (strcmp(k->indices[x].name, "i") == 0)
			e.i = x;
		if (strcmp(k->indices[x].name, "ii") == 0)
			e.ii = x;
	}
	bool edited = t0 && t1 && e.i >= 0 && e.ii >= 0 && ec->edit(&e) && e.ok;
	CHECK(edited);
	if (edited) {
		/* the reference: the unedited tree, or C */
		if (ec->want)
			ec->want(ref.p[0], ref.p[1]);
		else
			CHECK(ct_interp_run(t0, ref.p) == CT_OK);
		int nun = -1;
		CHECKF(interp_unproven(t1, &nun) == CT_OK, "%s", ct_ctx_last_message(ctx));
		if (ec->unproven >= 0)
			CHECKF(nun == ec->unproven, "%d accesses checked at run time, want %d", nun,
			       ec->unproven);
		ct_status st = ct_interp_run(t1, got.p);
		CHECKF(st == ec->status, "run: %d (%s)", (int)st, ct_ctx_last_message(ctx));
		if (ec->msg)
			CHECKF(strstr(ct_ctx_last_message(ctx), ec->msg) != NULL, "message '%s'",
			       ct_ctx_last_message(ctx));
		for (int a = 0; st == CT_OK && a < ref.n; a++)
			CHECKF(ct_max_rel_error(got.p[a], ref.p[a], CT_F64, ref.count[a]) == 0,
			       "array %d differs", a);
		acc_list l0 = {0, 0, NULL}, l1 = {0, 0, NULL};
		CHECK(interp_trace_batch(t0, acc_collect, &l0) == CT_OK);
		st = interp_trace_batch(t1, acc_collect, &l1);
		CHECKF(st == ec->status, "trace: %d (%s)", (int)st, ct_ctx_last_message(ctx));
		if (st == CT_OK) {
			/* copies carry ref -1; every other access keeps its reference
			 * (the unedited order, where the edit keeps the iterations) */
			int ncopy = 0, m = 0;
			for (int j = 0; j < l1.n; j++) {
				const interp_access *a = &l1.v[j];
				CHECK(a->buffer >= 0 && a->buffer < t1->narrays);
				if (a->ref < 0) {
					ncopy++;
					continue;
				}
				if (!ec->want && m < l0.n) {
					const interp_access *b = &l0.v[m];
					CHECKF(a->ref == b->ref && a->is_write == b->is_write,
					       "access %d: ref %d, want %d", j, a->ref, b->ref);
					if (ec->same_trace)
						CHECKF(a->buffer == b->buffer &&
						           a->offset == b->offset,
						       "access %d: (%d, %lld), want (%d, %lld)", j,
						       a->buffer, (long long)a->offset, b->buffer,
						       (long long)b->offset);
				}
				m++;
			}
			CHECKF(ncopy == ec->ncopy, "%d copy accesses, want %d", ncopy, ec->ncopy);
			if (!ec->want)
				CHECKF(m == l0.n, "%d accesses with a reference, want %d", m, l0.n);
		}
		free(l0.v);
		free(l1.v);
	}
	ct_looptree_free(t0);
	ct_looptree_free(t1);
	bufs_free(&ref);
	bufs_free(&got);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

static void test_edited_trees(void)
{
	for (size_t j = 0; j < sizeof edit_cases / sizeof edit_cases[0]; j++)
		run_edit_case(&edit_cases[j]);
}

/* ------------------------------------------------------------ data helpers */

static void test_fill_random(void)
{
	float f[1000], f2[1000];
	double d[1000];
	int32_t i32[1000];
	int64_t i64[1000];
	ct_fill_random(f, CT_F32, 1000, 42, 0);
	ct_fill_random(f2, CT_F32, 1000, 42, 0);
	CHECK(memcmp(f, f2, sizeof f) == 0);
	ct_fill_random(f2, CT_F32, 1000, 42, 1);
	CHECK(memcmp(f, f2, sizeof f) != 0);
	ct_fill_random(f2, CT_F32, 1000, 43, 0);
	CHECK(memcmp(f, f2, sizeof f) != 0);
	/* a prefix does not depend on the length */
	ct_fill_random(f2, CT_F32, 10, 42, 0);
	CHECK(memcmp(f, f2, 10 * sizeof *f) == 0);
	ct_fill_random(d, CT_F64, 1000, 42, 0);
	ct_fill_random(i32, CT_I32, 1000, 42, 0);
	ct_fill_random(i64, CT_I64, 1000, 42, 0);
	double mean = 0;
	bool seen_lo = false, seen_hi = false;
	for (int i = 0; i < 1000; i++) {
		CHECK(f[i] >= -1 && f[i] <= 1 && d[i] >= -1 && d[i] <= 1);
		CHECK(i32[i] >= -8 && i32[i] <= 8 && i64[i] >= -8 && i64[i] <= 8);
		seen_lo |= i32[i] == -8;
		seen_hi |= i64[i] == 8;
		mean += d[i];
	}
	CHECK(seen_lo && seen_hi);
	CHECK(fabs(mean / 1000) < 0.1);
}

static void test_max_rel_error(void)
{
	double w[4] = {0.5, -2, 100, 0}, g[4] = {0.5, -2, 100, 0};
	CHECK(ct_max_rel_error(g, w, CT_F64, 4) == 0);
	g[0] = 0.75; /* |0.25| / max(1, 0.5) */
	g[2] = 101;  /* 1 / 100 */
	CHECK(fabs(ct_max_rel_error(g, w, CT_F64, 4) - 0.25) < 1e-15);
	g[0] = 0.5;
	CHECK(fabs(ct_max_rel_error(g, w, CT_F64, 4) - 0.01) < 1e-15);
	g[3] = NAN;
	CHECK(isinf(ct_max_rel_error(g, w, CT_F64, 4)));
	w[3] = NAN;
	CHECK(fabs(ct_max_rel_error(g, w, CT_F64, 4) - 0.01) < 1e-15);
	int64_t a[2] = {INT64_MAX, 3}, b[2] = {INT64_MIN, 3};
	CHECK(ct_max_rel_error(a, b, CT_I64, 2) > 0.99);
	int32_t x[2] = {7, -8}, y[2] = {7, -4};
	CHECK(ct_max_rel_error(x, y, CT_I32, 2) == 1.0);
	float p[1] = {1.5f}, q[1] = {1.5f};
	CHECK(ct_max_rel_error(p, q, CT_F32, 1) == 0);
	CHECK(ct_max_rel_error(p, q, CT_F32, 0) == 0);
}

/* ------------------------------------------------------------ speed */

static void count_fn(void *ud, int buffer, int64_t offset, int is_write)
{
	(void)buffer;
	(void)is_write;
	*(int64_t *)ud += offset;
}

static ct_status count_batch(void *ud, const interp_access *acc, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += acc[i].offset;
	*(int64_t *)ud += s;
	return CT_OK;
}

/* Sanitizer builds are ten times slower: smaller problems there. */
#if defined(__SANITIZE_ADDRESS__)
#define MM_N "96"
#define ST_N "512"
#else
#define MM_N "256"
#define ST_N "2048"
#endif

static void test_speed(void)
{
	const int64_t mn = atoi(MM_N), sn = atoi(ST_N);
	const char *texts[2] = {
	    "kernel mm\nparam M = " MM_N ", N = " MM_N ", K = " MM_N
	    "\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
	    "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	    "schedule { ii, jj, kk = tile(i=32, j=64, k=48)\n reorder(i, j, k, ii, kk, jj) }\n",
	    "kernel st\nparam N = " ST_N ", M = " ST_N
	    "\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	    "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	    "  } else {\n    B[x, y] = A[x, y]\n  }\n}\nschedule { xx, yy = tile(x=16, y=64)\n "
	    "reorder(x, y, xx, yy) }\n",
	};
	const double inst[2] = {(double)(mn * mn * mn), (double)(sn * sn)};
	const double acc[2] = {4.0 * (double)(mn * mn * mn), 0};
	for (int w = 0; w < 2; w++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse(ctx, texts[w]);
		bufs b;
		CHECK(k && bufs_alloc(k, &b, 1));
		for (int s = 0; k && s <= 1; s++) {
			ct_looptree *t = ct_kernel_lower(k, s);
			double t0 = now();
			CHECK(t && ct_interp_run(t, b.p) == CT_OK);
			double t1 = now();
			int64_t sum = 0;
			CHECK(t && ct_interp_trace(t, count_fn, &sum) == CT_OK);
			double t2 = now();
			CHECK(t && interp_trace_batch(t, count_batch, &sum) == CT_OK);
			double t3 = now();
			double na = acc[w] > 0 ? acc[w] : 0;
			if (w == 1) /* 5 reads + 1 write inside, 2 accesses on the border */
				na = (double)((sn - 2) * (sn - 2)) * 6 +
				     (inst[w] - (double)((sn - 2) * (sn - 2))) * 2;
			printf("speed %s %s: run %.3f s (%.0f M statements/s); trace %.3f s (%.0f "
			       "M accesses/s), "
			       "batched %.3f s (%.0f M accesses/s)\n",
			       k->name, s ? "scheduled" : "unscheduled", t1 - t0,
			       inst[w] / (t1 - t0) * 1e-6, t2 - t1, na / (t2 - t1) * 1e-6, t3 - t2,
			       na / (t3 - t2) * 1e-6);
			ct_looptree_free(t);
		}
		bufs_free(&b);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

int main(void)
{
	RUN(test_matmul_vs_c);
	RUN(test_stencil_vs_c);
	RUN(test_mixed_vs_c);
	RUN(test_int_semantics);
	RUN(test_runtime_errors);
	test_matmul_orders();
	test_nested_splits();
	test_two_index();
	test_stencils();
	test_axpy_runtime();
	test_bounds();
	test_lets_and_selects();
	RUN(test_trace_opassign);
	RUN(test_trace_let_select_layout);
	RUN(test_trace_if);
	RUN(test_trace_schedule_order);
	RUN(test_trace_subassign);
	RUN(test_trace_batch_and_refs);
	test_edited_trees();
	RUN(test_fill_random);
	RUN(test_max_rel_error);
	RUN(test_speed);
	return h_report();
}
