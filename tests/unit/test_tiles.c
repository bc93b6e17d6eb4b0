/* test_tiles.c: the tile-size search: which params it searches, bounds, ranking, agreement
 * with ct_kernel_predict, unknown bounds, affine loop bounds (the simulator counts), and that
 * the kernel is left as it was. */
#include "cachet.h"

#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The two-index transform of examples/tiles_two_index.cachet, small. */
static const char two_index[] = "kernel two_index_tiled\n"
                                "param V = 16, N = 24\n"
                                "param TA = 4, TQ = 8, TP = 6, TB = 12\n"
                                "array A  : f64[N, N] input\n"
                                "array C1 : f64[N, V] input\n"
                                "array C2 : f64[N, V] input\n"
                                "array T  : f64[V, N] temp\n"
                                "array B  : f64[V, V] inout\n"
                                "for (a0: V, q0: N) { T[a0, q0] = 0 }\n"
                                "for (a: V, q: N, p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
                                "for (a2: V, b: V, q2: N) { B[a2, b] += C2[q2, b] * T[a2, q2] }\n"
                                "schedule {\n"
                                "  aa, qq, pp = tile(a=TA, q=TQ, p=TP)\n"
                                "  reorder(a, q, p, aa, qq, pp)\n"
                                "  aa2, bb, qq2 = tile(a2=TA, b=TB, q2=TQ)\n"
                                "  reorder(a2, b, q2, aa2, bb, qq2)\n"
                                "}\n";

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	if (!k)
		fprintf(stderr, "parse: %s\n", ct_ctx_last_message(ctx));
	return k;
}

/* Value of the param called name. */
static int64_t param(const ct_kernel *k, const char *name, int *is_set)
{
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		if (strcmp(ct_kernel_param_name(k, i), name) == 0)
			return ct_kernel_param_value(k, i, is_set);
	return -1;
}

/* Predicted misses of level `level` with the params of candidate c set on k (and put back). */
static int64_t predict_with(ct_kernel *k, const ct_tiles_result *r, const ct_tiles_candidate *c,
                            const char *spec, int level)
{
	int64_t old[16];
	for (int i = 0; i < r->nindices; i++) {
		old[i] = param(k, r->params[i], NULL);
		ct_kernel_set_param(k, r->params[i], c->tiles[i]);
	}
	ct_predict_result p;
	int64_t m = -1;
	if (ct_kernel_recheck(k) == CT_OK && ct_kernel_predict(k, spec, &p) == CT_OK) {
		m = p.level[level].misses;
		ct_predict_result_free(&p);
	}
	for (int i = 0; i < r->nindices; i++)
		ct_kernel_set_param(k, r->params[i], old[i]);
	ct_kernel_recheck(k);
	return m;
}

static void test_two_index(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, two_index);
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	const char *spec = "2K:64";
	ct_predict_result before;
	CHECK(ct_kernel_predict(k, spec, &before) == CT_OK);
	ct_tiles_result r;
	ct_status st = ct_kernel_tiles(k, spec, NULL, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.nindices == 4);
		CHECK(r.simulated == 0 && r.simulate_seconds == 0);
		const char *want[4] = {"a", "q", "p", "b"}, *wantp[4] = {"TA", "TQ", "TP", "TB"};
		for (int i = 0; i < 4 && i < r.nindices; i++) {
			CHECK(strcmp(r.indices[i], want[i]) == 0);
			CHECK(strcmp(r.params[i], wantp[i]) == 0);
		}
		int64_t bound[4] = {16, 24, 24, 16};
		CHECK(r.ncandidates >= 1 && r.ncandidates <= 10);
		CHECK(r.evaluated >= r.ncandidates && r.evaluated <= 4096);
		CHECK(r.runtime_bounds == 0 && r.nlevels == 1 && r.rank_level == 0);
		for (int c = 0; c < r.ncandidates; c++) {
			for (int i = 0; i < 4; i++)
				CHECK(r.candidates[c].tiles[i] >= 1 &&
				      r.candidates[c].tiles[i] <= bound[i]);
			if (c > 0)
				CHECK(r.candidates[c].misses_max[0] >=
				      r.candidates[c - 1].misses_max[0]);
			/* the search's counts are the model's counts of that tiling */
			CHECKF(predict_with(k, &r, &r.candidates[c], spec, 0) ==
			           r.candidates[c].misses[0],
			       "candidate %d", c);
			CHECK(r.candidates[c].misses_max[0] >= r.candidates[c].misses[0]);
			CHECK(!r.candidates[c].exact ||
			      r.candidates[c].misses_max[0] == r.candidates[c].misses[0]);
		}
		/* the untiled kernel (every tile = its extent) is on the coarse grid */
		ct_tiles_candidate whole;
		memset(&whole, 0, sizeof whole);
		whole.tiles = bound;
		CHECK(r.ncandidates < 1 ||
		      r.candidates[0].misses[0] <= predict_with(k, &r, &whole, spec, 0));
	}
	ct_tiles_result_free(&r);
	ct_tiles_result_free(&r); /* twice is harmless */
	/* the kernel is as it was */
	CHECK(param(k, "TA", NULL) == 4 && param(k, "TQ", NULL) == 8 && param(k, "TP", NULL) == 6 &&
	      param(k, "TB", NULL) == 12);
	ct_predict_result after;
	CHECK(ct_kernel_predict(k, spec, &after) == CT_OK);
	CHECK(after.level[0].misses == before.level[0].misses && after.accesses == before.accesses);
	ct_predict_result_free(&before);
	ct_predict_result_free(&after);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_options(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, two_index);
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_tile = 8;
	o.max_evals = 300;
	o.keep = 3;
	ct_tiles_result r;
	ct_status st = ct_kernel_tiles(k, "2K:64,8K:64", &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.evaluated <= 300);
		CHECK(r.ncandidates >= 1 && r.ncandidates <= 3);
		CHECK(r.nlevels == 2 && r.rank_level == 0);
		for (int c = 0; c < r.ncandidates; c++)
			for (int i = 0; i < r.nindices; i++)
				CHECK(r.candidates[c].tiles[i] >= 1 &&
				      r.candidates[c].tiles[i] <= 8);
	}
	ct_tiles_result_free(&r);
	/* the smallest level ranks first, wherever it is in the spec */
	st = ct_kernel_tiles(k, "8K:64,2K:64", &o, &r);
	CHECK(st == CT_OK && r.rank_level == 1);
	ct_tiles_result_free(&r);
	CHECK(ct_kernel_tiles(NULL, "2K:64", &o, &r) == CT_ERR_USAGE);
	CHECK(ct_kernel_tiles(k, "2K:63", &o, &r) == CT_ERR_INPUT);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Which params are tiles: only compile-time params written alone as split sizes, and not
 * when they also size the problem. */
static void test_no_tiles(void)
{
	static const char *const texts[] = {
	    /* literal sizes */
	    "kernel k\nparam N = 64\narray A : f32[N] inout\nfor (i: N) { A[i] += 1 }\n"
	    "schedule { ii = split(i, 8) }\n",
	    /* no schedule */
	    "kernel k\nparam N = 64\narray A : f32[N] inout\nfor (i: N) { A[i] += 1 }\n",
	    /* the param also sizes the array */
	    "kernel k\nparam N = 64, T = 8\narray A : f32[N] inout\narray W : f32[T] input\n"
	    "for (i: N) { A[i] += W[0] }\nschedule { ii = split(i, T) }\n",
	    /* an expression, not the param alone */
	    "kernel k\nparam N = 64, T = 8\narray A : f32[N] inout\nfor (i: N) { A[i] += 1 }\n"
	    "schedule { ii = split(i, 2*T) }\n",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse(ctx, texts[i]);
		CHECK(k != NULL);
		ct_tiles_result r;
		memset(&r, 0, sizeof r);
		ct_status st = k ? ct_kernel_tiles(k, "1K:64", NULL, &r) : CT_ERR_INPUT;
		CHECKF(st == CT_ERR_INPUT, "text %zu: status %d", i, (int)st);
		CHECKF(strstr(ct_ctx_last_message(ctx), "no tile params") != NULL, "text %zu: %s",
		       i, ct_ctx_last_message(ctx));
		CHECK(ct_ctx_last_line(ctx) == 1);
		CHECK(r.ncandidates == 0 && r.candidates == NULL);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* A split of a split index: the inner tile never exceeds the outer one. */
static void test_nested(void)
{
	static const char text[] =
	    "kernel mm\nparam M = 32, N = 32, K = 32, TI = 8, TJ = 8, TK = 8, TK2 = 4\n"
	    "array A : f32[M, K] input\narray B : f32[K, N] input\narray C : f32[M, N] inout\n"
	    "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	    "schedule {\n  ii, jj, kk = tile(i=TI, j=TJ, k=TK)\n  kkk = split(kk, TK2)\n"
	    "  reorder(i, j, k, ii, kk, jj, kkk)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	ct_tiles_result r;
	memset(&r, 0, sizeof r);
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_evals = 600;
	ct_status st = k ? ct_kernel_tiles(k, "1K:64", &o, &r) : CT_ERR_INPUT;
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.nindices == 4 && strcmp(r.indices[3], "kk") == 0);
		for (int c = 0; c < r.ncandidates; c++)
			CHECK(r.candidates[c].tiles[3] <= r.candidates[c].tiles[2]);
	}
	ct_tiles_result_free(&r);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Unknown bounds: the runtime param stays without a value afterwards. */
static void test_runtime(void)
{
	static const char text[] =
	    "kernel mv\nparam L : runtime\nparam TI = 8, TJ = 8\n"
	    "array A : f32[L, 64] input\narray X : f32[64] input\narray Y : f32[L] inout\n"
	    "for (i: L, j: 64) { Y[i] += A[i, j] * X[j] }\n"
	    "schedule {\n  ii, jj = tile(i=TI, j=TJ)\n  reorder(i, j, ii, jj)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_tile = 32;
	o.probe[0] = 256;
	o.probe[1] = 512;
	o.max_evals = 200;
	ct_tiles_result r;
	memset(&r, 0, sizeof r);
	ct_status st = k ? ct_kernel_tiles(k, "1K:64", &o, &r) : CT_ERR_INPUT;
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.runtime_bounds == 1);
		CHECK(r.ncandidates >= 1);
		for (int c = 0; c < r.ncandidates; c++)
			CHECK(r.candidates[c].tiles[0] <= 32 && r.candidates[c].tiles[1] <= 32);
	}
	ct_tiles_result_free(&r);
	int set = 1;
	CHECK(k && param(k, "L", &set) == 0 && set == 0);
	CHECK(k && param(k, "TI", NULL) == 8);
	/* with a value the bound is known */
	if (k) {
		CHECK(ct_kernel_set_param(k, "L", 100) == CT_OK && ct_kernel_recheck(k) == CT_OK);
		st = ct_kernel_tiles(k, "1K:64", &o, &r);
		CHECK(st == CT_OK && r.runtime_bounds == 0);
		ct_tiles_result_free(&r);
		CHECK(param(k, "L", &set) == 100 && set == 1);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A triangular nest (k: 0 .. i+1) with a split of its rectangular j and of its affine k. */
static const char trmm_tiled[] = "kernel trmm_tiled\n"
                                 "param N = 20, M = 20\n"
                                 "param TJ = 4, TK = 4\n"
                                 "array L : f32[N, N] input\n"
                                 "array B : f32[N, M] input\n"
                                 "array C : f32[N, M] inout\n"
                                 "for (i: N, j: M, k: 0 .. i+1) { C[i, j] += L[i, k] * B[k, j] }\n"
                                 "schedule {\n"
                                 "  jj = split(j, TJ)\n"
                                 "  kk = split(k, TK)\n"
                                 "  reorder(i, j, k, jj, kk)\n"
                                 "}\n";

/* Simulated misses of level `level` with the params of candidate c set on k (and put back). */
static int64_t simulate_with(ct_kernel *k, const ct_tiles_result *r, const ct_tiles_candidate *c,
                             const char *spec, int level)
{
	int64_t old[16];
	for (int i = 0; i < r->nindices; i++) {
		old[i] = param(k, r->params[i], NULL);
		ct_kernel_set_param(k, r->params[i], c->tiles[i]);
	}
	ct_sim_result p;
	int64_t m = -1;
	if (ct_kernel_recheck(k) == CT_OK && ct_kernel_simulate(k, spec, &p) == CT_OK) {
		m = p.level[level].misses;
		ct_sim_result_free(&p);
	}
	for (int i = 0; i < r->nindices; i++)
		ct_kernel_set_param(k, r->params[i], old[i]);
	ct_kernel_recheck(k);
	return m;
}

/* Affine loop bounds: every tiling counted by the simulator, each candidate's counts those of
 * ct_kernel_simulate at its tiles, the box of the affine k (0 .. 20) bounding TK, the kernel as
 * it was. */
static void test_affine(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, trmm_tiled);
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	const char *spec = "256:16,1K:32";
	ct_tiles_result r;
	CHECK(ct_kernel_tiles(k, spec, NULL, &r) == CT_OK);
	CHECK(r.simulated == 1);
	CHECK(r.nindices == 2);
	CHECK(r.accesses == 4 * 20 * 210);
	CHECK(r.ncandidates >= 1);
	CHECK(r.simulate_seconds > 0 && r.simulate_seconds <= r.seconds);
	for (int c = 0; c < r.ncandidates; c++) {
		const ct_tiles_candidate *x = &r.candidates[c];
		CHECK(x->exact == 1);
		CHECK(x->tiles[0] >= 1 && x->tiles[0] <= 20 && x->tiles[1] >= 1 && x->tiles[1] <= 20);
		for (int l = 0; l < 2; l++) {
			CHECK(x->misses[l] == x->misses_max[l]);
			int64_t sim = simulate_with(k, &r, x, spec, l);
			CHECKF(sim == x->misses[l], "candidate %d level %d: simulated %lld, search %lld", c, l,
			       (long long)sim, (long long)x->misses[l]);
		}
		/* ranked: no later candidate has fewer first-level misses */
		if (c > 0)
			CHECK(r.candidates[c - 1].misses[0] <= x->misses[0]);
	}
	int set = 0;
	CHECK(param(k, "TJ", &set) == 4 && set);
	CHECK(param(k, "TK", &set) == 4 && set);
	ct_tiles_result_free(&r);
	/* a max_evals given is kept as the simulations' budget */
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_evals = 6;
	CHECK(ct_kernel_tiles(k, spec, &o, &r) == CT_OK);
	CHECKF(r.evaluated >= 1 && r.evaluated <= 6, "%lld evaluated", (long long)r.evaluated);
	ct_tiles_result_free(&r);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_two_index);
	RUN(test_options);
	RUN(test_no_tiles);
	RUN(test_nested);
	RUN(test_runtime);
	RUN(test_affine);
	return h_report();
}
