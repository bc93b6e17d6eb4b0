/* random_kernels.h: random (kernel, schedule, cache) cases for the model bench's --random mode and
 * its test: the model's prediction against the exact simulator. Header-only (static functions):
 * bench_model.c and tests/unit/test_model_random.c include it. */
#ifndef CT_BENCH_RANDOM_KERNELS_H
#define CT_BENCH_RANDOM_KERNELS_H

#include "cachet.h"
#include "model/model.h" /* --model-only: the model without predict's simulator fallback */

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The kernel families; the order of the report. */
enum { RK_MATMUL, RK_MATVEC, RK_TRANSPOSE, RK_STENCIL5, RK_TWO_INDEX, RK_STENCIL3D, RK_MULTI, RK_PLANNED,
       RK_NFAM };
static const char *const rk_family_name[RK_NFAM] = {"matmul", "matvec", "transpose",
                                                    "stencil5 (guarded)", "two-index (imperfect)",
                                                    "stencil3d (guarded)", "multi-stmt (imperfect)",
                                                    "planned (caches)"};

/* xorshift64*: small, fast, and the same sequence on every machine. */
typedef struct rk_rng {
	uint64_t s;
} rk_rng;

static uint64_t rk_next(rk_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * UINT64_C(2685821657736338717);
}

/* Uniform in lo .. hi (inclusive). */
static int64_t rk_range(rk_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rk_next(r) % (uint64_t)(hi - lo + 1));
}

/* One generated case: the kernel, the cache spec, and the values of its runtime params (none
 * when its sizes are compile-time params). */
typedef struct rk_case {
	int family;
	char src[2048];
	char spec[32];
	int nrt;
	char rt_name[4][4];
	int64_t rt_val[4];
} rk_case;

/* Append printf text to c->src. */
static void rk_put(rk_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void rk_put(rk_case *c, const char *fmt, ...)
{
	size_t n = strlen(c->src);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->src + n, sizeof c->src - n, fmt, ap);
	va_end(ap);
}

/* A random schedule of one band of loops idx[0..n) with extents ext[]: each index tiled with
 * probability 3/5 (tile 2 .. extent, often small, dividing or not), then a random order of all
 * outer and inner indices in which an inner index follows its outer one. `sfx` makes the inner
 * names unique across bands. Nothing is written when nothing is tiled and the order is kept. */
static void rk_band(rk_rng *r, rk_case *c, const char *const *idx, const int64_t *ext, int n,
                    const char *sfx)
{
	bool tiled[8] = {false};
	int64_t tile[8];
	int ntiled = 0;
	for (int i = 0; i < n; i++) {
		if (ext[i] >= 4 && rk_range(r, 0, 4) < 3) {
			tiled[i] = true;
			int64_t hi = ext[i] - 1;
			tile[i] = rk_range(r, 0, 1) ? rk_range(r, 2, hi < 8 ? hi : 8) : rk_range(r, 2, hi);
			ntiled++;
		}
	}
	/* names: 0..n-1 the outer (original) indices, n..2n-1 the inner ones */
	char name[16][16];
	int all = 0;
	for (int i = 0; i < n; i++)
		snprintf(name[i], sizeof name[i], "%s", idx[i]);
	for (int i = 0; i < n; i++)
		snprintf(name[n + i], sizeof name[n + i], "%s%s%s", idx[i], idx[i], sfx);
	if (ntiled) {
		rk_put(c, "  ");
		int k = 0;
		for (int i = 0; i < n; i++)
			if (tiled[i])
				rk_put(c, "%s%s", k++ ? ", " : "", name[n + i]);
		rk_put(c, " = tile(");
		k = 0;
		for (int i = 0; i < n; i++)
			if (tiled[i])
				rk_put(c, "%s%s=%lld", k++ ? ", " : "", name[i], (long long)tile[i]);
		rk_put(c, ")\n");
	}
	bool placed[16] = {false};
	int order[16];
	for (int i = 0; i < n; i++)
		all += tiled[i] ? 2 : 1;
	for (int p = 0; p < all; p++) {
		int cand[16], nc = 0;
		for (int i = 0; i < 2 * n; i++) {
			bool exists = i < n || tiled[i - n];
			if (exists && !placed[i] && (i < n || placed[i - n]))
				cand[nc++] = i;
		}
		int pick = cand[rk_range(r, 0, nc - 1)];
		placed[pick] = true;
		order[p] = pick;
	}
	bool same = !ntiled;
	for (int p = 0; p < all && same; p++)
		same = order[p] == p;
	if (same)
		return;
	rk_put(c, "  reorder(");
	for (int p = 0; p < all; p++)
		rk_put(c, "%s%s", p ? ", " : "", name[order[p]]);
	rk_put(c, ")\n");
}

static const char *rk_type(rk_rng *r) { return rk_range(r, 0, 1) ? "f32" : "f64"; }

/* The param line of sizes name[i] = val[i]: compile-time values, or (one case in four) runtime
 * params whose values the run sets with ct_kernel_set_param. */
static void rk_params(rk_rng *r, rk_case *c, const char *const *name, const int64_t *val, int n)
{
	bool rt = rk_range(r, 0, 3) == 0;
	rk_put(c, "param ");
	for (int i = 0; i < n; i++) {
		if (rt) {
			rk_put(c, "%s%s : runtime", i ? ", " : "", name[i]);
			snprintf(c->rt_name[c->nrt], sizeof c->rt_name[c->nrt], "%s", name[i]);
			c->rt_val[c->nrt++] = val[i];
		} else {
			rk_put(c, "%s%s = %lld", i ? ", " : "", name[i], (long long)val[i]);
		}
	}
	rk_put(c, "\n");
}

static void rk_matmul(rk_rng *r, rk_case *c)
{
	int64_t e[3] = {rk_range(r, 4, 48), rk_range(r, 4, 48), rk_range(r, 4, 48)};
	const char *t = rk_type(r);
	static const char *const pn[] = {"M", "N", "K"};
	rk_put(c, "kernel mm\n");
	rk_params(r, c, pn, e, 3);
	rk_put(c, "array A : %s[M, K] input\narray B : %s[K, N] input\narray C : %s[M, N] inout\n", t, t, t);
	rk_put(c, "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\nschedule {\n");
	static const char *const idx[] = {"i", "j", "k"};
	rk_band(r, c, idx, e, 3, "");
	rk_put(c, "}\n");
}

static void rk_matvec(rk_rng *r, rk_case *c)
{
	int64_t e[2] = {rk_range(r, 8, 256), rk_range(r, 8, 256)};
	const char *t = rk_type(r);
	static const char *const pn[] = {"M", "N"};
	rk_put(c, "kernel mv\n");
	rk_params(r, c, pn, e, 2);
	rk_put(c, "array A : %s[M, N] input\narray X : %s[N] input\narray Y : %s[M] inout\n", t, t, t);
	rk_put(c, "for (i: M, j: N) {\n  Y[i] += A[i, j] * X[j]\n}\nschedule {\n");
	static const char *const idx[] = {"i", "j"};
	rk_band(r, c, idx, e, 2, "");
	rk_put(c, "}\n");
}

static void rk_transpose(rk_rng *r, rk_case *c)
{
	int64_t e[2] = {rk_range(r, 8, 128), rk_range(r, 8, 128)};
	const char *t = rk_type(r);
	static const char *const pn[] = {"M", "N"};
	rk_put(c, "kernel tr\n");
	rk_params(r, c, pn, e, 2);
	rk_put(c, "array A : %s[M, N] input\narray B : %s[N, M] output\n", t, t);
	rk_put(c, "for (i: M, j: N) {\n  B[j, i] = A[i, j]\n}\nschedule {\n");
	static const char *const idx[] = {"i", "j"};
	rk_band(r, c, idx, e, 2, "");
	rk_put(c, "}\n");
}

static void rk_stencil5(rk_rng *r, rk_case *c)
{
	int64_t e[2] = {rk_range(r, 6, 96), rk_range(r, 6, 96)};
	const char *t = rk_type(r);
	static const char *const pn[] = {"N", "M"};
	rk_put(c, "kernel s5\n");
	rk_params(r, c, pn, e, 2);
	rk_put(c, "array A : %s[N, M] input\narray B : %s[N, M] output\n", t, t);
	rk_put(c, "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	          "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	          "  } else {\n    B[x, y] = A[x, y]\n  }\n}\nschedule {\n");
	static const char *const idx[] = {"x", "y"};
	rk_band(r, c, idx, e, 2, "");
	rk_put(c, "}\n");
}

static void rk_two_index(rk_rng *r, rk_case *c)
{
	int64_t e[2] = {rk_range(r, 4, 24), rk_range(r, 4, 32)};
	static const char *const pn[] = {"V", "N"};
	rk_put(c, "kernel ti\n");
	rk_params(r, c, pn, e, 2);
	rk_put(c, "array A : f64[N, N] input\narray C1 : f64[N, V] input\narray C2 : f64[N, V] input\n"
	          "array T : f64[V, N] temp\narray B : f64[V, V] inout\n");
	rk_put(c, "for (a: V, q: N) {\n  T[a, q] = 0\n  for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
	          "  for (b: V) { B[a, b] += C2[q, b] * T[a, q] }\n}\nschedule {\n");
	static const char *const idx[] = {"a", "q"};
	rk_band(r, c, idx, e, 2, "");
	rk_put(c, "}\n");
}

static void rk_stencil3d(rk_rng *r, rk_case *c)
{
	int64_t e[3] = {rk_range(r, 4, 24), rk_range(r, 4, 24), rk_range(r, 4, 24)};
	const char *t = rk_type(r);
	static const char *const pn[] = {"N", "M", "P"};
	rk_put(c, "kernel s3\n");
	rk_params(r, c, pn, e, 3);
	rk_put(c, "array A : %s[N, M, P] input\narray B : %s[N, M, P] output\n", t, t);
	rk_put(c, "for (x: N, y: M, z: P) {\n"
	          "  if (0 < x && x < N-1 && 0 < y && y < M-1 && 0 < z && z < P-1) {\n"
	          "    B[x, y, z] = (A[x-1, y, z] + A[x+1, y, z] + A[x, y-1, z] + A[x, y+1, z] + "
	          "A[x, y, z-1] + A[x, y, z+1]) / 6\n"
	          "  } else {\n    B[x, y, z] = A[x, y, z]\n  }\n}\nschedule {\n");
	static const char *const idx[] = {"x", "y", "z"};
	rk_band(r, c, idx, e, 3, "");
	rk_put(c, "}\n");
}

/* An imperfect nest of several statements around two loops of one outer index: a row sum, a
 * scaled copy of the row into another array, a use of the sum and an update of a vector. */
static void rk_multi(rk_rng *r, rk_case *c)
{
	int64_t e[2] = {rk_range(r, 4, 64), rk_range(r, 4, 96)};
	const char *t = rk_type(r);
	static const char *const pn[] = {"N", "M"};
	rk_put(c, "kernel ms\n");
	rk_params(r, c, pn, e, 2);
	rk_put(c, "array A : %s[N, M] input\narray X : %s[M] input\narray S : %s[N] temp\n"
	          "array B : %s[N, M] output\narray Y : %s[M] inout\narray Z : %s[N] output\n",
	       t, t, t, t, t, t);
	rk_put(c, "for (i: N) {\n  S[i] = 0\n  for (j: M) { S[i] += A[i, j] * X[j] }\n"
	          "  Z[i] = S[i] * S[i]\n  for (k: M) {\n    B[i, k] = A[i, k] * S[i]\n"
	          "    Y[k] += B[i, k]\n  }\n}\nschedule {\n");
	static const char *const idx[] = {"i"};
	rk_band(r, c, idx, e, 1, "");
	rk_put(c, "}\n");
}

/* A planned kernel: a tiled matmul with cache buffers of one to three of its arrays at a point
 * loop, or a tiled guarded 5-point stencil with a cache of its input (halo) and/or output. */
static void rk_planned(rk_rng *r, rk_case *c)
{
	const char *t = rk_type(r);
	if (rk_range(r, 0, 1)) {
		int64_t e[3] = {rk_range(r, 8, 48), rk_range(r, 8, 48), rk_range(r, 8, 48)};
		static const char *const pn[] = {"M", "N", "K"};
		rk_put(c, "kernel pm\n");
		rk_params(r, c, pn, e, 3);
		rk_put(c, "array A : %s[M, K] input\narray B : %s[K, N] input\narray C : %s[M, N] inout\n", t, t, t);
		rk_put(c, "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\nschedule {\n");
		int64_t ti = rk_range(r, 2, 16), tj = rk_range(r, 2, 16), tk = rk_range(r, 2, 16);
		rk_put(c, "  ii, jj, kk = tile(i=%lld, j=%lld, k=%lld)\n", (long long)ti, (long long)tj, (long long)tk);
		static const char *const orders[] = {"i, j, k, ii, jj, kk", "i, k, j, ii, kk, jj",
		                                     "j, k, i, jj, kk, ii", "k, i, j, kk, ii, jj"};
		rk_put(c, "  reorder(%s)\n}\nplan {\n", orders[rk_range(r, 0, 3)]);
		static const char *const arr[] = {"A", "B", "C"};
		static const char *const pt[] = {"ii", "jj", "kk"};
		int mask = (int)rk_range(r, 1, 7);
		for (int a = 0; a < 3; a++)
			if (mask & (1 << a))
				rk_put(c, "  %s%s = cache(%s, index=%s)\n", arr[a], arr[a], arr[a], pt[rk_range(r, 0, 2)]);
		rk_put(c, "}\n");
	} else {
		int64_t e[2] = {rk_range(r, 8, 96), rk_range(r, 8, 96)};
		static const char *const pn[] = {"N", "M"};
		rk_put(c, "kernel ps\n");
		rk_params(r, c, pn, e, 2);
		rk_put(c, "array A : %s[N, M] input\narray B : %s[N, M] output\n", t, t);
		rk_put(c, "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
		          "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
		          "  } else {\n    B[x, y] = A[x, y]\n  }\n}\nschedule {\n");
		rk_put(c, "  xx, yy = tile(x=%lld, y=%lld)\n", (long long)rk_range(r, 2, 24), (long long)rk_range(r, 2, 32));
		rk_put(c, "  reorder(%s)\n}\nplan {\n", rk_range(r, 0, 1) ? "x, y, xx, yy" : "y, x, yy, xx");
		int mask = (int)rk_range(r, 1, 3);
		const char *at = rk_range(r, 0, 1) ? "xx" : "yy";
		if (mask & 1)
			rk_put(c, "  AA = cache(A, index=%s)\n", at);
		if (mask & 2)
			rk_put(c, "  BB = cache(B, index=%s)\n", at);
		rk_put(c, "}\n");
	}
}

/* --plru: the set-associative caches are tree-PLRU (SIZE:LINE:WAYS:plru), the same draws. */
static bool rk_plru;

/* One level of 256 B .. 32 KiB (a power of two, or 3/2 of one) with 8-, 32- or 64-byte lines:
 * fully associative, or (one case in four) set-associative with 1, 2, 4 or 8 ways and more than
 * one set. */
static void rk_cache(rk_rng *r, rk_case *c)
{
	static const int lines[] = {8, 32, 64};
	int line = lines[rk_range(r, 0, 2)];
	int64_t size = (int64_t)1 << rk_range(r, 8, 15);
	if (size < 32768 && rk_range(r, 0, 2) == 0)
		size = size * 3 / 2;
	int64_t ways = rk_range(r, 0, 3) == 0 ? (int64_t)1 << rk_range(r, 0, 3) : 0;
	while (ways > 1 && size / line / ways < 2)
		ways /= 2;
	if (ways && size / line / ways >= 2)
		snprintf(c->spec, sizeof c->spec, "%lld:%d:%lld%s", (long long)size, line, (long long)ways,
		         rk_plru ? ":plru" : "");
	else
		snprintf(c->spec, sizeof c->spec, "%lld:%d", (long long)size, line);
}

static void rk_generate(rk_rng *r, rk_case *c)
{
	memset(c, 0, sizeof *c);
	c->family = (int)rk_range(r, 0, RK_NFAM - 1);
	switch (c->family) {
	case RK_MATMUL: rk_matmul(r, c); break;
	case RK_MATVEC: rk_matvec(r, c); break;
	case RK_TRANSPOSE: rk_transpose(r, c); break;
	case RK_STENCIL5: rk_stencil5(r, c); break;
	case RK_TWO_INDEX: rk_two_index(r, c); break;
	case RK_STENCIL3D: rk_stencil3d(r, c); break;
	case RK_MULTI: rk_multi(r, c); break;
	default: rk_planned(r, c); break;
	}
	rk_cache(r, c);
}

/* ---------------------------------------------------------------- the run */

/* What one case gave. */
typedef struct rk_result {
	int family;
	int64_t predicted, simulated;
	bool claimed_exact;
	bool simulated_by_predict;  /* ct_kernel_predict took level 0's count from the simulator */
	int fallback;               /* why (a ct_fallback_reason) */
	bool set_assoc;             /* the level is set-associative (or PLRU over more than 2 ways) */
	int source;                 /* where predict's count came from (a ct_count_source) */
	double err_pct;   /* |predicted - simulated| / simulated, in percent (0 when both are 0) */
	double model_s;   /* thread CPU time of ct_kernel_predict (lowering included) */
	int64_t accesses, enumerated; /* --model-only: the kernel's accesses, and those whose reuse
	                               * the model counted by partial enumeration */
	rk_case kernel;   /* the case itself, to print the worst ones */
} rk_result;

typedef struct rk_stats {
	int cases, rejected, failed;
	int equal, claimed, wrong_claims;
	rk_result *res;   /* [cases] */
} rk_stats;

/* --log-cases: one line per case (index, family, cache, ms, model, simulator, claimed exact). */
static FILE *rk_case_log;
/* --pick: only the cases whose index is set here run (the others are generated and parsed, so
 * the stream is the same); NULL: all. */
static const bool *rk_pick;
static int rk_npick;

/* When set, cases run the model alone (model_analyse: no simulator fallback, set-associative
 * levels as if fully associative) instead of ct_kernel_predict. */
static bool rk_model_only;
/* With rk_model_only: how the model may enumerate (--no-enumerate: the analysis alone). */
static model_enum_mode rk_enumerate = MODEL_ENUM_AUTO;

/* The model alone on k at spec: level 0's misses and whether the model calls them exact (a
 * set-associative level never is); out's accesses and enumerated. */
static ct_status rk_model_alone(ct_ctx *ctx, ct_kernel *k, const char *spec_text, int64_t *misses,
                                bool *exact, rk_result *out)
{
	sim_spec spec;
	ct_status st = sim_spec_parse(ctx, spec_text, &spec);
	if (st)
		return st;
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(ctx);
	model_result m;
	model_options o = {MODEL_REFINE_FULL, 0, rk_enumerate, 0};
	st = model_analyse_opts(t, &spec, &o, &m);
	if (!st) {
		out->accesses = m.accesses;
		out->enumerated = m.enumerated;
		const sim_level *l = &spec.level[0];
		bool ex = true;
		for (int a = 0; a < m.narrays; a++)
			ex = ex && (!m.array_accesses[a] || m.array_exact[a]);
		*misses = model_misses(model_for_line(&m, l->line), l->size / l->line, -1, &ex);
		*exact = ex && !sim_level_conflicts(l);
		model_result_free(&m);
	}
	ct_looptree_free(t);
	return st;
}

static double rk_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run generated case number index: 0 done, 1 rejected (the checker refuses the schedule), 2 the
 * model or the simulator failed (logged), 3 not picked (--pick). */
static int rk_run_case(ct_ctx *ctx, int index, const rk_case *c, rk_result *out, FILE *log)
{
	ct_kernel *k = ct_kernel_parse(ctx, c->src, strlen(c->src), "random.cachet");
	if (!k)
		return 1;
	if (rk_pick && (index >= rk_npick || !rk_pick[index])) {
		ct_kernel_free(k);
		return 3;
	}
	for (int i = 0; i < c->nrt; i++)
		if (ct_kernel_set_param(k, c->rt_name[i], c->rt_val[i])) {
			if (log)
				fprintf(log, "set_param failed (%s):\n%s\n", ct_ctx_last_message(ctx), c->src);
			ct_kernel_free(k);
			return 2;
		}
	ct_predict_result pr;
	ct_sim_result sr;
	int64_t alone = 0;
	bool alone_exact = false;
	memset(&pr, 0, sizeof pr);
	double t0 = rk_cpu_s();
	ct_status st = rk_model_only ? rk_model_alone(ctx, k, c->spec, &alone, &alone_exact, out)
	                             : ct_kernel_predict(k, c->spec, &pr);
	double secs = rk_cpu_s() - t0;
	if (st) {
		if (log)
			fprintf(log, "model failed (%s) idx %d on %s:\n%s\n", ct_ctx_last_message(ctx), index, c->spec, c->src);
		ct_kernel_free(k);
		return 2;
	}
	st = ct_kernel_simulate(k, c->spec, &sr);
	if (st) {
		if (log)
			fprintf(log, "simulator failed (%s) on %s:\n%s\n", ct_ctx_last_message(ctx), c->spec, c->src);
		ct_predict_result_free(&pr);
		ct_kernel_free(k);
		return 2;
	}
	out->family = c->family;
	out->predicted = rk_model_only ? alone : pr.level[0].misses;
	out->simulated = sr.level[0].misses;
	out->claimed_exact = rk_model_only ? alone_exact : pr.level[0].exact != 0;
	out->simulated_by_predict = !rk_model_only && pr.source[0] == CT_SOURCE_SIMULATOR;
	out->fallback = rk_model_only ? 0 : pr.fallback[0];
	out->set_assoc = sr.level[0].ways > 0 && sr.level[0].size / (sr.level[0].line * sr.level[0].ways) > 1;
	out->source = rk_model_only ? 0 : (int)pr.source[0];
	out->model_s = secs;
	int64_t d = out->predicted - out->simulated;
	out->err_pct = out->simulated ? 100.0 * fabs((double)d) / (double)out->simulated : (d ? 100.0 : 0.0);
	ct_predict_result_free(&pr);
	ct_sim_result_free(&sr);
	ct_kernel_free(k);
	return 0;
}

/* n accepted cases from seed; rejected kernels (schedules the checker refuses) are replaced. */
static bool rk_run(int n, uint64_t seed, rk_stats *s, FILE *log)
{
	memset(s, 0, sizeof *s);
	s->res = calloc((size_t)n + 1, sizeof *s->res);
	if (!s->res)
		return false;
	rk_rng r = {seed ? seed : 1};
	rk_case c;
	int index = 0;
	while (index < n) {
		rk_generate(&r, &c);
		ct_ctx *ctx = ct_ctx_new();
		if (!ctx)
			return false;
		rk_result *x = &s->res[s->cases];
		int rc = rk_run_case(ctx, index, &c, x, log);
		if (rc == 3) {
			ct_ctx_free(ctx);
			index++;
			continue;
		}
		if (rc) {
			s->rejected += rc == 1;
			s->failed += rc == 2;
			ct_ctx_free(ctx);
			if (s->rejected + s->failed > 10 * n + 100)
				return false;
			continue;
		}
		ct_ctx_free(ctx);
		x->kernel = c;
		if (rk_case_log)
			fprintf(rk_case_log, "%d %s %s %.3f %lld %lld %d\n", index, rk_family_name[x->family], c.spec,
			        x->model_s * 1e3, (long long)x->predicted, (long long)x->simulated, x->claimed_exact);
		index++;
		s->cases++;
		s->equal += x->predicted == x->simulated;
		s->claimed += x->claimed_exact;
		if (x->claimed_exact && x->predicted != x->simulated) {
			s->wrong_claims++;
			if (log)
				fprintf(log, "WRONG exact claim: model %lld, simulator %lld at %s:\n%s\n",
				        (long long)x->predicted, (long long)x->simulated, c.spec, c.src);
		}
	}
	return true;
}

#endif
