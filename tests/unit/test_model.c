/* test_model.c: the analytical cache model against the exact simulator on a table of small
 * kernels and caches, hand-counted cases, partition sums and errors. */
#include "model/model.h"

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One kernel of the table, with the params it is checked at. */
typedef struct mcase {
	const char *name;
	const char *src;
	const char *params; /* "NAME=V NAME=V" or "" */
} mcase;

static const mcase cases[] = {
    {"copy", "kernel c\nparam N = 1000\narray A : f32[N] input\narray B : f32[N] output\n"
             "for (i: N) { B[i] = A[i] }\n", ""},
    {"matmul_ijk", "kernel m\nparam N = 40\narray A : f32[N, N] input\narray B : f32[N, N] input\n"
                   "array C : f32[N, N] inout\nfor (i: N, j: N, k: N) { C[i, j] += A[i, k] * B[k, j] }\n",
     ""},
    {"matmul_kij", "kernel m\nparam N = 36\narray A : f64[N, N] input\narray B : f64[N, N] input\n"
                   "array C : f64[N, N] inout\nfor (k: N, i: N, j: N) { C[i, j] += A[i, k] * B[k, j] }\n",
     ""},
    {"matmul_tiled_tails",
     "kernel m\nparam M = 50, N = 45, K = 40\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
     "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
     "schedule {\n  ii, jj, kk = tile(i=16, j=12, k=7)\n  reorder(j, k, i, kk, ii, jj)\n}\n",
     ""},
    {"transpose", "kernel t\nparam N = 70\narray A : f32[N, N] input\narray B : f32[N, N] output\n"
                  "for (i: N, j: N) { B[j, i] = A[i, j] }\n", ""},
    {"col_major", "kernel t\nparam N = 50\narray A : f32[N, N] input layout=col_major\n"
                  "array B : f32[N, N] output\nfor (i: N, j: N) { B[i, j] = A[i, j] * 2 }\n", ""},
    {"strided", "kernel s\nparam N = 300\narray A : f32[2*N] input\narray B : f32[N] output\n"
                "for (i: N) { B[i] = A[2*i] + A[2*i+1] }\n", ""},
    {"stencil_if",
     "kernel s\nparam N = 40, M = 50\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
     "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
     "    B[x, y] = A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]\n"
     "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
     "schedule {\n  xx, yy = tile(x=8, y=16)\n  reorder(x, y, xx, yy)\n}\n",
     ""},
    {"jacobi", "kernel j\nparam N = 60\narray A : f64[N, N] input\narray B : f64[N, N] output\n"
               "for (i: 1 .. N-1, j: 1 .. N-1) {\n"
               "  B[i, j] = A[i, j] + A[i-1, j] + A[i+1, j] + A[i, j-1] + A[i, j+1]\n}\n",
     ""},
    {"two_index",
     "kernel t\nparam V = 20, N = 30\narray A : f64[N, N] input\narray C1 : f64[N, V] input\n"
     "array C2 : f64[N, V] input\narray T : f64[V, N] temp\narray B : f64[V, V] inout\n"
     "for (a: V, q: N) {\n  T[a, q] = 0\n  for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
     "  for (b: V) { B[a, b] += C2[q, b] * T[a, q] }\n}\n",
     ""},
    {"unfused",
     "kernel u\nparam N = 64\narray A : f32[N, N] input\narray T : f32[N, N] temp\n"
     "array B : f32[N, N] output\nfor (i: N, j: N) { T[i, j] = A[j, i] }\n"
     "for (i2: N, j2: N) { B[i2, j2] = T[i2, j2] + T[j2, i2] }\n",
     ""},
    {"plan_cache",
     "kernel p\nparam M = 32, N = 32, K = 32\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
     "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
     "schedule {\n  ii, jj, kk = tile(i=8, j=16, k=8)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
     "plan {\n  BB = cache(B, index=k)\n  CC = cache(C, index=ii)\n}\n",
     ""},
    {"runtime", "kernel r\nparam N : runtime\narray A : f32[N] input\narray B : f32[N] output\n"
                "for (i: N) { B[i] = A[i] + A[N-1-i] }\n", "N=777"},
};

static const char *const specs[] = {"1K:64", "2K:32", "4K:64", "8K:128", "32K:64"};

/* Parse src and apply "NAME=V ..." params. NULL (with a failed check) on error. */
static ct_kernel *load(ct_ctx *ctx, const char *src, const char *params)
{
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "test.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	if (!k)
		return NULL;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", params);
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = 0;
		CHECK(ct_kernel_set_param(k, tok, strtoll(eq + 1, NULL, 10)) == CT_OK);
	}
	CHECK(ct_kernel_recheck(k) == CT_OK);
	return k;
}

/* Every case at every cache: the model calls its count exact and it equals the simulator's. */
static void test_table(void)
{
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
			char name[96];
			snprintf(name, sizeof name, "model %s %s", cases[c].name, specs[s]);
			h_begin(name);
			ct_ctx *ctx = ct_ctx_new();
			ct_kernel *k = load(ctx, cases[c].src, cases[c].params);
			ct_sim_result sr;
			ct_predict_result pr;
			memset(&sr, 0, sizeof sr);
			memset(&pr, 0, sizeof pr);
			if (k) {
				CHECKF(ct_kernel_simulate(k, specs[s], &sr) == CT_OK, "%s", ct_ctx_last_message(ctx));
				CHECKF(ct_kernel_predict(k, specs[s], &pr) == CT_OK, "%s", ct_ctx_last_message(ctx));
				CHECK(pr.accesses == sr.accesses);
				int64_t want = sr.level[0].misses, got = pr.level[0].misses;
				CHECKF(pr.level[0].exact && got == want, "model %lld (exact %d), simulator %lld",
				       (long long)got, pr.level[0].exact, (long long)want);
				int64_t acc = 0, miss = 0;
				for (int a = 0; a < pr.narrays; a++) {
					acc += pr.arrays[a].accesses;
					miss += pr.arrays[a].misses[0];
				}
				CHECK(acc == pr.accesses);
				CHECK(miss == got);
			}
			ct_sim_result_free(&sr);
			ct_predict_result_free(&pr);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
			h_end();
		}
}

/* Counts by hand: a stream of 1000 floats in 64-byte lines misses once per line per array. */
static void test_hand_counted(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = load(ctx, cases[0].src, "");
	ct_predict_result pr;
	if (k && ct_kernel_predict(k, "1K:64,1M:64", &pr) == CT_OK) {
		/* 1000 * 4 bytes = 62.5 lines: 63 per array, A and B */
		CHECK(pr.level[0].misses == 126 && pr.level[1].misses == 126);
		CHECK(pr.level[0].exact && pr.level[1].exact);
		CHECK(pr.narrays == 2 && pr.arrays[0].nrefs == 1 && pr.arrays[0].stmt == 1);
		ct_predict_result_free(&pr);
	} else {
		CHECK(0);
	}
	ct_kernel_free(k);
	/* matmul 40^3 f32, a 32 KiB cache holds everything: only the cold misses, 3 * 40 * 3 lines
	 * (40 floats = 160 bytes = 2.5 lines, so 3 lines per row) */
	k = load(ctx, cases[1].src, "");
	if (k && ct_kernel_predict(k, "32K:64", &pr) == CT_OK) {
		CHECKF(pr.level[0].misses == 3 * 100, "%lld", (long long)pr.level[0].misses);
		ct_predict_result_free(&pr);
	} else {
		CHECK(0);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The partitions of one line size add up to the accesses, and a set-associative level is
 * never called exact. */
static void test_partition_sums(void)
{
	ct_ctx *ctx = ct_ctx_new();
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		ct_kernel *k = load(ctx, cases[c].src, cases[c].params);
		if (!k)
			continue;
		ct_looptree *t = ct_kernel_lower(k, 1);
		sim_spec spec;
		CHECK(sim_spec_parse(ctx, "4K:64,64K:32", &spec) == CT_OK);
		model_result r;
		CHECK(t && model_analyse(t, &spec, &r) == CT_OK);
		if (t) {
			CHECK(r.nlines == 2);
			for (int l = 0; l < r.nlines; l++) {
				int64_t sum = 0;
				for (int i = 0; i < r.lines[l].nparts; i++) {
					CHECK(r.lines[l].parts[i].count > 0);
					sum += r.lines[l].parts[i].count;
				}
				CHECKF(sum == r.accesses, "%s: %lld of %lld", cases[c].name, (long long)sum,
				       (long long)r.accesses);
				/* a cache of no lines misses every access */
				CHECK(model_misses(&r.lines[l], 0, -1, NULL) == r.accesses);
			}
			model_result_free(&r);
		}
		ct_looptree_free(t);
		ct_predict_result pr;
		/* a set-associative level is counted exactly: by the model's own simulation with
		 * warping, or by the simulator where that cannot (the trace is short) */
		CHECK(ct_kernel_predict(k, "4K:64:4,4K:64", &pr) == CT_OK);
		CHECK(pr.level[0].exact && pr.level[0].ways == 4);
		CHECK((pr.source[0] == CT_SOURCE_MODEL && pr.fallback[0] == CT_FALLBACK_NONE) ||
		      (pr.source[0] == CT_SOURCE_SIMULATOR && pr.fallback[0] == CT_FALLBACK_SET_ASSOC));
		/* the fully associative level: the model's, or simulated where the model could not
		 * decide it exactly or would take longer (test_fallback_*) */
		CHECK(pr.source[1] == CT_SOURCE_MODEL ||
		      (pr.source[1] == CT_SOURCE_SIMULATOR && pr.fallback[1] != CT_FALLBACK_SET_ASSOC));
		ct_sim_result sr;
		CHECK(ct_kernel_simulate(k, "4K:64:4", &sr) == CT_OK);
		CHECK(pr.level[0].misses == sr.level[0].misses);
		int64_t sum = 0;
		for (int a = 0; a < pr.narrays; a++)
			sum += pr.arrays[a].misses[0];
		CHECK(sum == pr.level[0].misses);
		ct_sim_result_free(&sr);
		ct_predict_result_free(&pr);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
}

/* A 3-D stencil whose tiny cache (4 lines of 64 bytes) the model cannot decide exactly
 * (bench_model --random, seed 21), and a tiling whose analysis is slow (seed 21's slowest,
 * made 18 times longer, 0.5M accesses: at the bench's size partial enumeration keeps its work
 * small). */
/* a guard that compares two indices: the model keeps its branch and is not exact (the mixed
 * pieces, 100 iterations, are too long to cut into single ones), on a trace short enough for
 * predict to simulate it */
static const char tri_src[] =
	"kernel tri\nparam N = 100\narray A : f64[N, N] input\narray C : f64[N, N] output\n"
	"for (i: N, j: N) {\n  if (j < i) {\n    C[i, j] = A[i, j]\n  }\n}\n";
static const char s3d_exact_src[] =
	"kernel s3\nparam N = 12, M = 12, P = 9\narray A : f64[N, M, P] input\narray B : f64[N, M, P] output\n"
	"for (x: N, y: M, z: P) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1 && 0 < z && z < P-1) {\n"
	"    B[x, y, z] = (A[x-1, y, z] + A[x+1, y, z] + A[x, y-1, z] + A[x, y+1, z] + A[x, y, z-1] + "
	"A[x, y, z+1]) / 6\n  } else {\n    B[x, y, z] = A[x, y, z]\n  }\n}\n"
	"schedule {\n  xx = tile(x=6)\n  reorder(y, x, xx, z)\n}\n";
static const char s3d_slow_src[] =
	"kernel s3\nparam N = 69, M = 30, P = 40\narray A : f64[N, M, P] input\narray B : f64[N, M, P] output\n"
	"for (x: N, y: M, z: P) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1 && 0 < z && z < P-1) {\n"
	"    B[x, y, z] = (A[x-1, y, z] + A[x+1, y, z] + A[x, y-1, z] + A[x, y+1, z] + A[x, y, z-1] + "
	"A[x, y, z+1]) / 6\n  } else {\n    B[x, y, z] = A[x, y, z]\n  }\n}\n"
	"schedule {\n  xx, yy, zz = tile(x=3, y=6, z=3)\n  reorder(z, y, zz, x, yy, xx)\n}\n";

/* The model alone on k at spec: level 0's misses, *exact its claim, *work its work. */
static int64_t model_alone(ct_ctx *ctx, ct_kernel *k, const char *spec_text, bool *exact, int64_t *work)
{
	sim_spec spec;
	ct_looptree *t = ct_kernel_lower(k, 1);
	model_result m;
	int64_t n = -1;
	if (t && sim_spec_parse(ctx, spec_text, &spec) == CT_OK && model_analyse(t, &spec, &m) == CT_OK) {
		*exact = true;
		for (int a = 0; a < m.narrays; a++)
			*exact = *exact && (!m.array_accesses[a] || m.array_exact[a]);
		n = model_misses(&m.lines[0], spec.level[0].size / spec.level[0].line, -1, exact);
		*work = m.work;
		model_result_free(&m);
	}
	ct_looptree_free(t);
	return n;
}

/* predict simulates a fully associative level the model cannot decide exactly (the trace is
 * short), says so (source simulator, fallback "not exact") and gets the simulator's count;
 * the per-array counts add up to it. */
static void test_fallback_inexact(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, tri_src, strlen(tri_src), "s3.cachet");
	CHECK(k != NULL);
	bool exact = true;
	int64_t work = 0;
	int64_t alone = model_alone(ctx, k, "256:64", &exact, &work);
	ct_sim_result sr;
	CHECK(ct_kernel_simulate(k, "256:64", &sr) == CT_OK);
	CHECKF(!exact, "the model alone: %lld (exact %d), simulator %lld",
	       (long long)alone, exact, (long long)sr.level[0].misses);
	ct_predict_result pr;
	CHECK(ct_kernel_predict(k, "256:64", &pr) == CT_OK);
	CHECKF(pr.level[0].exact && pr.source[0] == CT_SOURCE_SIMULATOR && pr.fallback[0] == CT_FALLBACK_INEXACT,
	       "exact %d source %d fallback %d work %lld", pr.level[0].exact, pr.source[0], pr.fallback[0],
	       (long long)work);
	CHECK(pr.level[0].misses == sr.level[0].misses);
	int64_t sum = 0;
	for (int a = 0; a < pr.narrays; a++) {
		sum += pr.arrays[a].misses[0];
		CHECK(pr.arrays[a].exact);
	}
	CHECK(sum == pr.level[0].misses);
	ct_predict_result_free(&pr);
	/* a level the model decides exactly keeps the model's count (a tiled guarded 3-D
	 * stencil, exact at 32K) */
	ct_kernel_free(k);
	k = ct_kernel_parse(ctx, s3d_exact_src, strlen(s3d_exact_src), "s3.cachet");
	CHECK(k != NULL);
	CHECK(ct_kernel_predict(k, "32K:64", &pr) == CT_OK);
	CHECK(pr.level[0].exact && pr.source[0] == CT_SOURCE_MODEL && pr.fallback[0] == CT_FALLBACK_NONE);
	ct_predict_result_free(&pr);
	ct_sim_result_free(&sr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* An analysis over the model's work budget stops and predict simulates the short trace instead
 * (fallback "over budget"); ct_kernel_predict_refs keeps the whole analysis (its table needs
 * the partitions). */
static void test_fallback_budget(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, s3d_slow_src, strlen(s3d_slow_src), "s3.cachet");
	CHECK(k != NULL);
	bool exact = false;
	int64_t work = 0;
	int64_t alone = model_alone(ctx, k, "8192:32", &exact, &work);
	CHECKF(work > 1500000, "work %lld", (long long)work);
	ct_sim_result sr;
	CHECK(ct_kernel_simulate(k, "8192:32", &sr) == CT_OK);
	ct_predict_result pr;
	CHECK(ct_kernel_predict(k, "8192:32", &pr) == CT_OK);
	CHECK(pr.level[0].exact && pr.source[0] == CT_SOURCE_SIMULATOR && pr.fallback[0] == CT_FALLBACK_BUDGET);
	CHECK(pr.level[0].misses == sr.level[0].misses);
	CHECK(!exact || alone == sr.level[0].misses);
	ct_predict_result_free(&pr);
	ct_ref_table tab;
	CHECK(ct_kernel_predict_refs(k, "8192:32", -1, &pr, &tab) == CT_OK);
	CHECK(pr.fallback[0] != CT_FALLBACK_BUDGET && pr.level[0].misses == sr.level[0].misses);
	ct_ref_table_free(&tab);
	ct_predict_result_free(&pr);
	/* a set-associative level alone: counted by the model's simulation with warping, without
	 * the analysis, and equal to the simulator's */
	CHECK(ct_kernel_predict(k, "8192:32:4", &pr) == CT_OK);
	CHECK(pr.source[0] == CT_SOURCE_MODEL && pr.fallback[0] == CT_FALLBACK_NONE && pr.level[0].exact);
	ct_sim_result_free(&sr);
	CHECK(ct_kernel_simulate(k, "8192:32:4", &sr) == CT_OK);
	CHECK(pr.level[0].misses == sr.level[0].misses);
	ct_predict_result_free(&pr);
	ct_sim_result_free(&sr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A trace longer than CT_PREDICT_FA_SIM_MAX keeps the model's count, however long the analysis. */
static void test_fallback_long_trace(void)
{
	ct_ctx *ctx = ct_ctx_new();
	static const char src[] = "kernel mm\nparam M = 80, N = 80, K = 80\narray A : f32[M, K] input\n"
	                          "array B : f32[K, N] input\narray C : f32[M, N] inout\n"
	                          "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	                          "schedule {\n  ii, jj, kk = tile(i=16, j=16, k=16)\n  reorder(i, j, k, ii, jj, kk)\n}\n";
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "mm.cachet");
	CHECK(k != NULL);
	ct_predict_result pr;
	CHECK(ct_kernel_predict(k, "4K:64", &pr) == CT_OK);
	CHECK(pr.accesses > CT_PREDICT_FA_SIM_MAX);
	CHECK(pr.source[0] == CT_SOURCE_MODEL && pr.fallback[0] == CT_FALLBACK_NONE);
	ct_predict_result_free(&pr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_errors(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, cases[12].src, strlen(cases[12].src), "r.cachet");
	ct_predict_result pr;
	CHECK(k != NULL);
	/* a runtime param without a value */
	CHECK(ct_kernel_predict(k, "1K:64", &pr) == CT_ERR_USAGE);
	CHECK(strstr(ct_ctx_last_message(ctx), "runtime param 'N'") != NULL);
	CHECK(pr.narrays == 0 && pr.arrays == NULL);
	CHECK(ct_kernel_set_param(k, "N", 10) == CT_OK && ct_kernel_recheck(k) == CT_OK);
	/* bad specs */
	CHECK(ct_kernel_predict(k, "1K:48", &pr) == CT_ERR_INPUT);
	CHECK(ct_kernel_predict(k, "", &pr) == CT_ERR_INPUT);
	CHECK(ct_kernel_predict(k, "1K", &pr) == CT_ERR_INPUT);
	CHECK(ct_kernel_predict(NULL, "1K:64", &pr) == CT_ERR_USAGE);
	CHECK(ct_kernel_predict(k, "1K:64", NULL) == CT_ERR_USAGE);
	ct_predict_result_free(NULL);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Cases the model must call exact and count exactly: reuse whose distance varies from
 * instance to instance across a capacity (split by the residues of the instance counters, or
 * by ranges where accesses run in opposite directions), and a cache of one line. */
static void test_exact_cases(void)
{
	static const struct {
		int kase;          /* a row of cases[] */
		const char *params;
		const char *spec;
	} rows[] = {
	    {12, "N=777", "1K:64"},  /* B[i] = A[i] + A[N-1-i] */
	    {12, "N=777", "2K:32"},
	    {12, "N=777", "4K:64"},
	    {10, "", "4K:64"},       /* unfused: T[i2, j2] + T[j2, i2] */
	    {10, "", "8K:128"},
	    {0, "", "64:64"},        /* a one-line cache */
	};
	/* the two-index transform tiled degenerately (b by 1, p by 4): every 8th iteration of b
	 * starts new lines of C2 and B, which pushes T's reuse just past the capacity */
	static const char *degenerate =
	    "kernel t\nparam V = 32, N = 48\narray A : f64[N, N] input\narray C1 : f64[N, V] input\n"
	    "array C2 : f64[N, V] input\narray T : f64[V, N] temp\narray B : f64[V, V] inout\n"
	    "for (a0: V, q0: N) { T[a0, q0] = 0 }\n"
	    "for (a: V, q: N, p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
	    "for (a2: V, b: V, q2: N) { B[a2, b] += C2[q2, b] * T[a2, q2] }\n"
	    "schedule {\n  aa, qq, pp = tile(a=32, q=48, p=4)\n  reorder(a, q, p, aa, qq, pp)\n"
	    "  aa2, bb, qq2 = tile(a2=32, b=1, q2=48)\n  reorder(a2, b, q2, aa2, bb, qq2)\n}\n";
	int n = (int)(sizeof rows / sizeof rows[0]);
	for (int i = 0; i <= n; i++) {
		const char *src = i < n ? cases[rows[i].kase].src : degenerate;
		const char *params = i < n ? rows[i].params : "";
		const char *spec = i < n ? rows[i].spec : "20K:64";
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = load(ctx, src, params);
		ct_sim_result sr;
		ct_predict_result pr;
		if (k && ct_kernel_simulate(k, spec, &sr) == CT_OK) {
			CHECKF(ct_kernel_predict(k, spec, &pr) == CT_OK, "%s", ct_ctx_last_message(ctx));
			CHECKF(pr.level[0].exact && pr.level[0].misses == sr.level[0].misses,
			       "row %d at %s: model %lld (exact %d), simulator %lld", i, spec,
			       (long long)pr.level[0].misses, pr.level[0].exact, (long long)sr.level[0].misses);
			/* the case is not trivial: some reuse is lost */
			CHECK(sr.level[0].misses > 0);
			ct_predict_result_free(&pr);
			ct_sim_result_free(&sr);
		} else {
			CHECKF(0, "row %d: %s", i, ct_ctx_last_message(ctx));
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* Caches of four lines, where the reuse within a statement and the carried reuse lie at
 * distances around the capacity: the model alone decides them exactly (random cases 5475 and
 * 4984 of bench_model --random 10000 --seed 20, 46% and 11% off before the statement's reuse
 * was split by access and a cell's estimate kept within its bounds). */
static void test_tiny_caches(void)
{
	static const char *const srcs[] = {
	    "kernel s3\nparam N = 22, M = 8, P = 7\narray A : f32[N, M, P] input\narray B : f32[N, M, P] output\n"
	    "for (x: N, y: M, z: P) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1 && 0 < z && z < P-1) {\n"
	    "    B[x, y, z] = (A[x-1, y, z] + A[x+1, y, z] + A[x, y-1, z] + A[x, y+1, z] + A[x, y, z-1] + "
	    "A[x, y, z+1]) / 6\n  } else {\n    B[x, y, z] = A[x, y, z]\n  }\n}\n"
	    "schedule {\n  xx, yy = tile(x=21, y=7)\n  reorder(z, x, xx, y, yy)\n}\n",
	    "kernel s5\nparam N = 76, M = 81\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	    "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	    "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
	    "schedule {\n  yy = tile(y=72)\n  reorder(x, y, yy)\n}\n",
	};
	for (int i = 0; i < 2; i++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, srcs[i], strlen(srcs[i]), "tiny.cachet");
		CHECK(k != NULL);
		bool exact = false;
		int64_t work = 0;
		int64_t alone = model_alone(ctx, k, "256:64", &exact, &work);
		ct_sim_result sr;
		CHECK(ct_kernel_simulate(k, "256:64", &sr) == CT_OK);
		CHECKF(exact && alone == sr.level[0].misses, "case %d: the model alone %lld (exact %d), simulator %lld", i,
		       (long long)alone, exact, (long long)sr.level[0].misses);
		ct_sim_result_free(&sr);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* ct_kernel_predict_refs on every kernel of the table, split by simulation and by accesses: the
 * rows add up to the per-level totals, the accesses to the kernel's, cold misses stay within the
 * misses, and the split says how it was made. */
static void test_per_ref(void)
{
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int64_t sim_max = 0; sim_max >= -1; sim_max--) {
			ct_ctx *ctx = ct_ctx_new();
			ct_kernel *k = load(ctx, cases[c].src, cases[c].params);
			ct_predict_result pr;
			ct_ref_table t;
			if (!k || ct_kernel_predict_refs(k, "2K:32,16K:64", sim_max, &pr, &t) != CT_OK) {
				CHECKF(0, "%s: %s", cases[c].name, ct_ctx_last_message(ctx));
				ct_kernel_free(k);
				ct_ctx_free(ctx);
				continue;
			}
			int64_t acc = 0, miss[2] = {0, 0};
			for (int i = 0; i < t.nrefs; i++) {
				const ct_ref_misses *r = &t.refs[i];
				acc += r->accesses;
				for (int l = 0; l < 2; l++) {
					miss[l] += r->misses[l];
					CHECK(r->cold[l] >= 0 && r->cold[l] <= r->misses[l]);
				}
				CHECK(r->split == CT_SPLIT_MODEL || r->split == (sim_max == 0 ? CT_SPLIT_ACCESSES : CT_SPLIT_SIM));
				if (i > 0)
					CHECK(t.refs[i - 1].misses[0] >= r->misses[0]);
			}
			CHECKF(acc == pr.accesses, "%s: %lld accesses in rows, %lld", cases[c].name, (long long)acc,
			       (long long)pr.accesses);
			for (int l = 0; l < 2; l++)
				CHECKF(miss[l] == pr.level[l].misses, "%s level %d: rows %lld, level %lld", cases[c].name,
				       l, (long long)miss[l], (long long)pr.level[l].misses);
			ct_ref_table_free(&t);
			ct_predict_result_free(&pr);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
		}
}

/* The model with options o on tree t at spec (CHECKs that it succeeds; *r to free). The
 * partitions name t's nodes: analyses to compare share one tree. */
static bool analyse_with(ct_ctx *ctx, ct_looptree *t, const char *spec_text, const model_options *o,
                         model_result *r)
{
	sim_spec spec;
	bool ok = t && sim_spec_parse(ctx, spec_text, &spec) == CT_OK && model_analyse_opts(t, &spec, o, r) == CT_OK;
	CHECKF(ok, "%s", ct_ctx_last_message(ctx));
	return ok;
}

/* A kernel lowered once (the analyses to compare share its tree) and simulated at a spec. */
typedef struct fixture {
	ct_ctx *ctx;
	ct_kernel *k;
	ct_looptree *t;
	ct_sim_result sr;
	bool ok;
} fixture;

static fixture fixture_open(const char *src, const char *params, const char *spec)
{
	fixture f = {ct_ctx_new(), NULL, NULL, {0}, false};
	f.k = load(f.ctx, src, params);
	f.t = f.k ? ct_kernel_lower(f.k, 1) : NULL;
	f.ok = f.t && ct_kernel_simulate(f.k, spec, &f.sr) == CT_OK;
	CHECKF(f.ok, "%s", ct_ctx_last_message(f.ctx));
	return f;
}

static void fixture_close(fixture *f)
{
	if (f->ok)
		ct_sim_result_free(&f->sr);
	ct_looptree_free(f->t);
	ct_kernel_free(f->k);
	ct_ctx_free(f->ctx);
}

static bool is_carried(model_reuse kind) { return kind == MR_CARRIED || kind == MR_FAR; }

/* The same reuse: array, node and kind, a loop's carried reuse as one (the analysis gives a
 * range of iterations back the delta of one when it narrows it to one), or (delta1) only its
 * sources one iteration back. */
static bool same_reuse(const model_part *p, const model_part *q, bool delta1)
{
	if (delta1)
		return p->array == q->array && p->node == q->node && p->kind == MR_CARRIED && p->delta == 1 &&
		       q->kind == MR_CARRIED && q->delta == 1;
	return p->array == q->array && p->node == q->node &&
	       (p->kind == q->kind || (is_carried(p->kind) && is_carried(q->kind)));
}

/* The count of the partitions of ml of the reuse of p. */
static int64_t reuse_count(const model_lines *ml, const model_part *p, bool delta1)
{
	int64_t n = 0;
	for (int i = 0; i < ml->nparts; i++)
		if (same_reuse(&ml->parts[i], p, delta1))
			n += ml->parts[i].count;
	return n;
}

/* Partial enumeration gives what the analysis gives: every kind of reuse (the same statement
 * instance, an earlier sibling, carried d iterations back by a loop, farther) with the same
 * counts, and exact misses equal to the simulator's, whichever nodes are enumerated (the run's
 * children whole, or loops deeper down: their instances in classes of equal residues). */
static void test_enum_matches_analysis(void)
{
	static const char spec[] = "2K:64,8K:32,64K:8";
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char name[96];
		snprintf(name, sizeof name, "enumeration %s", cases[c].name);
		h_begin(name);
		fixture f = fixture_open(cases[c].src, cases[c].params, spec);
		ct_ctx *ctx = f.ctx;
		ct_looptree *t = f.t;
		const ct_sim_result sr = f.sr;
		model_result a;
		model_options never = {MODEL_REFINE_FULL, 0, MODEL_ENUM_NEVER, 0};
		if (!f.ok || !analyse_with(ctx, t, spec, &never, &a)) {
			fixture_close(&f);
			continue;
		}
		for (int d = 0; d <= 3; d++) {
			model_options always = {MODEL_REFINE_FULL, 0, MODEL_ENUM_ALWAYS, d};
			model_result b;
			if (!analyse_with(ctx, t, spec, &always, &b))
				continue;
			CHECKF(b.enumerated > 0 || d > 0, "%s depth %d: nothing enumerated", cases[c].name, d);
			for (int l = 0; l < sr.nlevels; l++) {
				const model_lines *la = model_for_line(&a, sr.level[l].line);
				const model_lines *lb = model_for_line(&b, sr.level[l].line);
				CHECK(la && lb);
				if (!la || !lb)
					continue;
				int64_t sum = 0;
				for (int i = 0; i < lb->nparts; i++) {
					const model_part *p = &lb->parts[i];
					sum += p->count;
					for (int one = 0; one <= (p->kind == MR_CARRIED && p->delta == 1); one++)
						CHECKF(reuse_count(la, p, one) == reuse_count(lb, p, one),
						       "%s depth %d line %lld: kind %d delta %d: analysis %lld, enumeration %lld",
						       cases[c].name, d, (long long)sr.level[l].line, (int)p->kind, p->delta,
						       (long long)reuse_count(la, p, one), (long long)reuse_count(lb, p, one));
				}
				CHECK(sum == b.accesses);
				bool exact = true;
				int64_t got = model_misses(lb, sr.level[l].size / sr.level[l].line, -1, &exact);
				CHECKF(exact && got == (int64_t)sr.level[l].misses, "%s depth %d level %d: %lld, simulator %lld",
				       cases[c].name, d, l, (long long)got, (long long)sr.level[l].misses);
			}
			model_result_free(&b);
		}
		model_result_free(&a);
		fixture_close(&f);
	}
}

/* Many distinct lines in one instance: the line table grows and the marks are renumbered many
 * times while lines are live (a transpose, and a matmul whose reuse distances lie around the
 * capacity), and rows in one residue class (one walked row stands for all). */
static void test_enum_large(void)
{
	static const struct {
		const char *src, *spec;
	} big[] = {
	    {"kernel t\nparam N = 300\narray A : f64[N, N] input\narray B : f64[N, N] output\n"
	     "for (i: N, j: N) { B[j, i] = A[i, j] + A[i, N-1-j] }\n",
	     "64K:8,512:8"},
	    {"kernel m\nparam N = 64\narray A : f64[N, N] input\narray B : f64[N, N] input\n"
	     "array C : f64[N, N] inout\nfor (i: N, j: N, k: N) { C[i, j] += A[i, k] * B[k, j] }\n",
	     "32K:8,33K:8,256:8"},
	};
	for (size_t c = 0; c < sizeof big / sizeof big[0]; c++) {
		fixture f = fixture_open(big[c].src, "", big[c].spec);
		ct_ctx *ctx = f.ctx;
		ct_looptree *t = f.t;
		const ct_sim_result sr = f.sr;
		if (!f.ok) {
			fixture_close(&f);
			continue;
		}
		for (int d = 0; d <= 1; d++) {
			model_options always = {MODEL_REFINE_FULL, 0, MODEL_ENUM_ALWAYS, d};
			model_result b;
			if (!analyse_with(ctx, t, big[c].spec, &always, &b))
				continue;
			CHECK(b.enumerated == b.accesses);
			/* the transpose at depth 1: one row walked for all of them (the rows start at the
			 * same residue; the analysis above is of one loop without reuse) */
			CHECKF(c > 0 || d == 0 || b.work < 8 * b.accesses / 32, "case %zu depth %d: work %lld for %lld accesses", c,
			       d, (long long)b.work, (long long)b.accesses);
			for (int l = 0; l < sr.nlevels; l++) {
				bool exact = true;
				int64_t got = model_misses(&b.lines[0], sr.level[l].size / sr.level[l].line, -1, &exact);
				CHECKF(exact && got == (int64_t)sr.level[l].misses, "case %zu depth %d level %d: %lld, simulator %lld",
				       c, d, l, (long long)got, (long long)sr.level[l].misses);
			}
			model_result_free(&b);
		}
		fixture_close(&f);
	}
}

/* A kernel whose distances cross the capacity at the grain of single iterations (bench_model
 * --random seed 20's slowest matmul: the analysis took 0.5 s): the model enumerates it, stays
 * exact, and does a small part of the analysis's work. */
static void test_enum_auto(void)
{
	static const char src[] = "kernel mm\nparam M = 40, N = 9, K = 19\narray A : f32[M, K] input\n"
	                          "array B : f32[K, N] input\narray C : f32[M, N] inout\n"
	                          "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	                          "schedule {\n  ii, kk = tile(i=6, k=8)\n  reorder(k, j, kk, i, ii)\n}\n";
	fixture f = fixture_open(src, "", "4096:64");
	const ct_sim_result sr = f.sr;
	model_result a, b;
	model_options never = {MODEL_REFINE_FULL, 0, MODEL_ENUM_NEVER, 0};
	model_options auto_ = {MODEL_REFINE_FULL, 0, MODEL_ENUM_AUTO, 0};
	if (!f.ok || !analyse_with(f.ctx, f.t, "4096:64", &never, &a)) {
		fixture_close(&f);
		return;
	}
	if (analyse_with(f.ctx, f.t, "4096:64", &auto_, &b)) {
		bool ea = true, eb = true;
		int64_t ma = model_misses(&a.lines[0], 64, -1, &ea), mb = model_misses(&b.lines[0], 64, -1, &eb);
		CHECK(ea && eb && ma == (int64_t)sr.level[0].misses && mb == ma);
		CHECK(a.enumerated == 0 && b.enumerated > 0);
		CHECKF(b.work * 10 < a.work, "work: enumerated %lld, analysis alone %lld", (long long)b.work,
		       (long long)a.work);
		model_result_free(&b);
	}
	model_result_free(&a);
	fixture_close(&f);
}

/* Affine loop bounds: every reference counted by the simulator (CT_SPLIT_SIMULATED), each row
 * equal to ct_kernel_simulate's count of that reference (an update's read and write together),
 * carriers unknown where a row has more than its cold misses, the rows adding up to the
 * levels. */
static void test_per_ref_affine(void)
{
	const char *src = "kernel tri\nparam N = 40, M = 24\narray L : f32[N, N] input\n"
	                  "array B : f32[N, M] input\narray C : f32[N, M] inout\n"
	                  "for (i: N, j: M, k: 0 .. i+1) { C[i, j] += L[i, k] * B[k, j] }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "tri.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	ct_predict_result pr;
	ct_ref_table t;
	ct_sim_result sr;
	const char *spec = "1K:32,8K:64";
	if (!k || ct_kernel_predict_refs(k, spec, -1, &pr, &t) != CT_OK || ct_kernel_simulate(k, spec, &sr) != CT_OK) {
		CHECKF(0, "%s", ct_ctx_last_message(ctx));
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		return;
	}
	CHECK(t.nrefs == 3 && sr.nrefs == 4);
	int64_t miss[2] = {0, 0};
	for (int i = 0; i < t.nrefs; i++) {
		const ct_ref_misses *r = &t.refs[i];
		CHECK(r->split == CT_SPLIT_SIMULATED);
		int64_t want[2] = {0, 0};
		for (int j = 0; j < sr.nrefs; j++)
			if (strcmp(sr.refs[j].array, r->array) == 0)
				for (int l = 0; l < 2; l++)
					want[l] += sr.refs[j].misses[l];
		for (int l = 0; l < 2; l++) {
			CHECKF(r->misses[l] == want[l], "%s level %d: %lld, simulate %lld", r->array, l,
			       (long long)r->misses[l], (long long)want[l]);
			CHECK(r->cold[l] >= 0 && r->cold[l] <= r->misses[l]);
			CHECK(r->carrier[l] == (r->cold[l] == r->misses[l] ? CT_CARRIER_NONE : CT_CARRIER_UNKNOWN));
			miss[l] += r->misses[l];
		}
	}
	for (int l = 0; l < 2; l++)
		CHECK(miss[l] == pr.level[l].misses && pr.fallback[l] == CT_FALLBACK_AFFINE);
	ct_sim_result_free(&sr);
	ct_ref_table_free(&t);
	ct_predict_result_free(&pr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	test_table();
	RUN(test_per_ref);
	RUN(test_per_ref_affine);
	RUN(test_exact_cases);
	RUN(test_hand_counted);
	RUN(test_partition_sums);
	RUN(test_errors);
	RUN(test_tiny_caches);
	RUN(test_fallback_inexact);
	RUN(test_fallback_budget);
	RUN(test_fallback_long_trace);
	RUN(test_enum_matches_analysis);
	RUN(test_enum_large);
	RUN(test_enum_auto);
	return h_report();
}
