/* test_interp.c: the interpreter against C, scheduled against unscheduled trees, trace, speed. */
#include "harness.h"

#include "interp/interp.h"

#include <math.h>
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
	RUN(test_fill_random);
	RUN(test_max_rel_error);
	RUN(test_speed);
	return h_report();
}
