/* test_tune.c: tunable params, the model-guided tuner, the store round trip through it, the
 * solution selector's fallbacks and its main + tail decomposition. */
#include "harness.h"

#include "cachet.h"

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ language */

#define TMM_HEAD                                                                                   \
	"kernel tmm\n"                                                                             \
	"param M = 24, N = 20, K = 16\n"

#define TMM_BODY                                                                                   \
	"array A : f32[M, K] input\n"                                                              \
	"array B : f32[K, N] input\n"                                                              \
	"array C : f32[M, N] inout\n"                                                              \
	"for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"                                \
	"schedule { ii, jj, kk = tile(i=TI, j=TJ, k=TK); reorder(i, j, k, ii, kk, jj) }\n"

/* One row of the language table: the tune lines (line 3 on), and the first
 * diagnostic expected ("LINE:COL: error: message" prefix) or NULL. */
typedef struct lrow {
	const char *name;
	const char *tune;
	const char *want;
	const char *values; /* accepted rows: TI's candidates, comma-separated */
} lrow;

static const lrow lrows[] = {
    {"list", "param TI = 8 tune {4, 8, 16}, TJ = 4, TK = 4\n", NULL, "4,8,16"},
    {"list sorted", "param TI = 8 tune {16, 4, 8}, TJ = 4, TK = 4\n", NULL, "4,8,16"},
    {"range step", "param TI = 8 tune 4..16 step 4, TJ = 4, TK = 4\n", NULL, "4,8,12,16"},
    {"range unit", "param TI = 3 tune 1..4, TJ = 4, TK = 4\n", NULL, "1,2,3,4"},
    {"literal arithmetic", "param TI = 8 tune {2*2, 2*4}, TJ = 4, TK = 4\n", NULL, "4,8"},
    {"two tunables", "param TI = 8 tune {4, 8}, TJ = 4 tune {2, 4}, TK = 4\n", NULL, "4,8"},
    {"default missing", "param TI = 6 tune {4, 8}, TJ = 4, TK = 4\n",
     "3:14: error: the default 6 of 'TI' is not among its tune values", NULL},
    {"duplicate", "param TI = 8 tune {4, 8, 4}, TJ = 4, TK = 4\n",
     "3:14: error: tune value 4 of 'TI' is listed twice", NULL},
    {"zero", "param TI = 8 tune {0, 8}, TJ = 4, TK = 4\n",
     "3:20: error: tune value 0 of 'TI' must be at least 1", NULL},
    {"param in value", "param TI = 8 tune {M, 8}, TJ = 4, TK = 4\n", "3:20: error: a tune value must be an integer constant", NULL},
    {"bad step", "param TI = 8 tune 4..18 step 4, TJ = 4, TK = 4\n",
     "3:19: error: tune range 4..18 of 'TI' does not end on a step of 4", NULL},
    {"empty range", "param TI = 8 tune 16..4, TJ = 4, TK = 4\n",
     "3:19: error: empty tune range 16..4 of 'TI'", NULL},
    {"too many", "param TI = 8 tune 1..100000, TJ = 4, TK = 4\n",
     "3:19: error: param 'TI' has more than 4096 tune values", NULL},
    {"derived default", "param TI = M/3 tune {8}, TJ = 4, TK = 4\n",
     "3:16: error: tunable param 'TI' needs a plain integer default", NULL},
    {"runtime", "param TI = 8, TJ = 4, TK = 4\nparam L : runtime tune {1, 2}\n",
     "4:19: error: runtime param 'L' cannot be tuned", NULL},
    {"unclosed list", "param TI = 8 tune {4, 8, TJ = 4, TK = 4\n", "3:26: error: unknown name 'TJ'", NULL},
};

static void lang_rows(void)
{
	for (size_t r = 0; r < sizeof lrows / sizeof lrows[0]; r++) {
		const lrow *w = &lrows[r];
		h_begin(w->name);
		char src[2048];
		snprintf(src, sizeof src, "%s%s%s", TMM_HEAD, w->tune, TMM_BODY);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "t.cachet");
		if (!w->want) {
			CHECKF(k != NULL, "%s", ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : "");
			if (k) {
				const int64_t *v = NULL;
				int n = ct_kernel_param_candidates(k, 3, &v);
				char got[256] = "";
				for (int i = 0; i < n; i++)
					snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld",
					         i ? "," : "", (long long)v[i]);
				CHECKF(strcmp(got, w->values) == 0, "candidates %s, want %s", got, w->values);
				/* the default is what normal compilation uses */
				CHECK(ct_kernel_param_value(k, 3, NULL) ==
				      strtoll(strstr(w->tune, "= ") + 2, NULL, 10));
				CHECK(ct_kernel_param_candidates(k, 0, NULL) == 0);
			}
		} else {
			CHECK(k == NULL);
			const char *d = ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : "";
			char want[256];
			snprintf(want, sizeof want, "t.cachet:%s", w->want);
			CHECKF(strncmp(d, want, strlen(want)) == 0, "got '%s', want '%s'", d, want);
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		h_end();
	}
}

/* The family leaves every size and tile out; the size class names the sizes. */
static void tune_key(void)
{
	const char *src = TMM_HEAD "param TI = 8 tune {4, 8}, TJ = 4 tune {4}, TK = 4 tune {4}\n" TMM_BODY;
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "t.cachet");
	char f1[128], f2[128], c1[128], c2[128];
	ct_dtype t;
	CHECK(k && ct_kernel_tune_key(k, f1, sizeof f1, c1, sizeof c1, &t) == CT_OK);
	if (k) {
		CHECK(strncmp(f1, "tmm-", 4) == 0 && strlen(f1) == 20 && t == CT_F32);
		CHECK(strcmp(c1, "M=24:N=20:K=16") == 0);
		CHECK(ct_kernel_set_param(k, "TI", 4) == CT_OK && ct_kernel_set_param(k, "M", 99) == CT_OK &&
		      ct_kernel_recheck(k) == CT_OK);
		CHECK(ct_kernel_tune_key(k, f2, sizeof f2, c2, sizeof c2, NULL) == CT_OK);
		CHECK(strcmp(f1, f2) == 0);
		CHECK(strcmp(c2, "M=99:N=20:K=16") == 0);
		/* and the kernel still has its values */
		CHECK(ct_kernel_param_value(k, 0, NULL) == 99 && ct_kernel_param_value(k, 3, NULL) == 4);
	}
	ct_kernel_free(k);
	/* another computation is another family */
	const char *other = TMM_HEAD "param TI = 8 tune {4, 8}, TJ = 4 tune {4}, TK = 4 tune {4}\n"
	                    "array A : f32[M, K] input\narray B : f32[K, N] input\narray C : f32[M, N] inout\n"
	                    "for (i: M, j: N, k: K) { C[i, j] += A[i, k] + B[k, j] }\n"
	                    "schedule { ii, jj, kk = tile(i=TI, j=TJ, k=TK); reorder(i, j, k, ii, kk, jj) }\n";
	k = ct_kernel_parse(ctx, other, strlen(other), "t.cachet");
	CHECK(k && ct_kernel_tune_key(k, f2, sizeof f2, NULL, 0, NULL) == CT_OK && strcmp(f1, f2) != 0);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* -D (ct_kernel_set_param) overrides a tunable param with any value, as any param. */
static void lang_override(void)
{
	const char *src = TMM_HEAD "param TI = 8 tune {4, 8}, TJ = 4, TK = 4\n" TMM_BODY;
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "t.cachet");
	CHECK(k != NULL);
	if (k) {
		CHECK(ct_kernel_set_param(k, "TI", 5) == CT_OK);
		CHECK(ct_kernel_recheck(k) == CT_OK);
		CHECK(ct_kernel_param_value(k, 3, NULL) == 5);
		ct_run_options o;
		ct_run_options_init(&o);
		o.engine = CT_ENGINE_INTERP;
		ct_run_result rr;
		CHECK(ct_kernel_run(k, &o, &rr) == CT_OK && rr.verified == 1);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ tuner and selector */

static char tmp_root[] = "/tmp/ct_tune_XXXXXX";
static int dir_seq;

static void new_dir(char *out, size_t n)
{
	snprintf(out, n, "%s/d%d", tmp_root, ++dir_seq);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A plain (scalar) matmul with tunable TI, TJ at sizes m x n x k. */
static ct_kernel *tmm(ct_ctx *ctx, int64_t m, int64_t n, int64_t k, const char *ti, const char *tj)
{
	char src[2048];
	snprintf(src, sizeof src,
	         "kernel tmm\nparam M = %lld, N = %lld, K = %lld\nparam TI = %s\nparam TJ = %s\n"
	         "param TK = 8 tune {8}\n" TMM_BODY,
	         (long long)m, (long long)n, (long long)k, ti, tj);
	ct_kernel *kk = ct_kernel_parse(ctx, src, strlen(src), "tmm.cachet");
	CHECKF(kk != NULL, "%s", ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : ct_ctx_last_message(ctx));
	return kk;
}

/* The store round trip through the tuner: a short real run at tiny sizes. */
static void tune_roundtrip(void)
{
	char dir[256];
	new_dir(dir, sizeof dir);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 24, 20, 16, "8 tune {4, 8}", "4 tune {4, 8}");
	if (!k)
		return;
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.budget = 30;
	o.fraction = 0.05; /* a cap: 5% of 4, at least one */
	o.store_dir = dir;
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.space == 4 && r.ncandidates == 4);
		CHECK(r.nmeasured == 1); /* 5% of 4, at least one: the file's default first */
		CHECK(r.best >= 0 && r.candidates[r.best].verified == 1 && r.candidates[r.best].seconds > 0);
		CHECK(r.best >= 0 && r.candidates[r.best].values[0] == 8 && r.candidates[r.best].values[1] == 4);
		CHECK(r.stored == 1);
		CHECK(r.decision == CT_TUNE_DEFAULT_FASTEST && r.default_index == r.best && r.challenger == -1);
		/* ranked by the model: costs never decrease */
		for (int i = 1; i < r.ncandidates; i++)
			CHECK(r.candidates[i].cost >= r.candidates[i - 1].cost);
		CHECK(strcmp(r.size_class, "M=24:N=20:K=16") == 0);
		/* the record is in the store, under the family, with the winner's values */
		ct_store *s = ct_store_open(ctx, dir, CT_STORE_QUIET);
		ct_tune_record rec;
		int found = 0;
		CHECK(s && ct_store_get(s, r.family, r.dtype, r.size_class, &rec, &found) == CT_OK && found);
		if (found) {
			char want[64];
			/* the values, then which way the decision went: only the default was measured */
			snprintf(want, sizeof want, "TI=%lld:TJ=%lld:TK=8;decision=default", (long long)r.candidates[r.best].values[0],
			         (long long)r.candidates[r.best].values[1]);
			CHECKF(strcmp(rec.params, want) == 0, "params %s, want %s", rec.params, want);
			CHECK(rec.verified == 1 && rec.seconds > 0);
		}
		ct_store_close(s);
		FILE *out = tmpfile();
		char text[4096] = "";
		CHECK(out && ct_tune_print(&r, CT_FORMAT_JSON, out) == CT_OK);
		if (out) {
			rewind(out);
			size_t n = fread(text, 1, sizeof text - 1, out);
			text[n] = 0;
			fclose(out);
		}
		CHECKF(strstr(text, "\"stored\": true") && strstr(text, "\"space\": 4"), "%s", text);
		ct_tune_result_free(&r);
	}
	/* k is left with its defaults */
	CHECK(ct_kernel_param_value(k, 3, NULL) == 8 && ct_kernel_param_value(k, 4, NULL) == 4);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* fraction 1 measures all; a spent budget stops after the first. */
static void tune_fraction_and_budget(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 16, 16, 8, "8 tune {4, 8}", "4 tune {4, 8}");
	if (!k)
		return;
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.no_store = 1;
	o.fraction = 1;
	o.verify = 0;
	ct_tune_result r;
	CHECK(ct_tune(k, &o, &r) == CT_OK && r.nmeasured == 4 && r.best >= 0 && !r.stored);
	/* the default was measured; a candidate replaces it only when confirmed faster by
	 * more than the spread of the interleaved re-timings */
	CHECK(r.default_index >= 0 && r.candidates[r.default_index].measured);
	CHECKF(r.decision == CT_TUNE_DEFAULT_FASTEST ? r.best == r.default_index && r.challenger < 0
	       : r.decision == CT_TUNE_DEFAULT_KEPT ? r.best == r.default_index && r.challenger >= 0 &&
	                                                  r.challenger != r.default_index
	       : r.decision == CT_TUNE_REPLACED && r.best == r.challenger && r.best != r.default_index &&
	             r.confirm_rounds >= 3 && r.confirm_gain > r.confirm_spread && r.confirm_gain > 0.01,
	       "decision %s best %d default %d challenger %d rounds %d gain %g spread %g",
	       ct_tune_decision_name(r.decision), r.best, r.default_index, r.challenger, r.confirm_rounds,
	       r.confirm_gain, r.confirm_spread);
	ct_tune_result_free(&r);
	/* a millisecond: past the ranking, one candidate (always), then the budget stops it */
	o.budget = 1e-3;
	CHECKF(ct_tune(k, &o, &r) == CT_OK && r.nmeasured == 1 && r.budget_hit == 1, "%s", ct_ctx_last_message(ctx));
	ct_tune_result_free(&r);
	/* without the default: the model's first */
	o.budget = 0;
	o.fraction = 0.05;
	o.no_default = 1;
	CHECK(ct_tune(k, &o, &r) == CT_OK && r.nmeasured == 1 && r.best == 0 && r.candidates[0].measured);
	CHECK(r.decision == CT_TUNE_NO_DEFAULT && r.default_index == -1);
	ct_tune_result_free(&r);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A default point outside the tune set (a value set by the caller) is still
 * measured, appended to the candidates, and is the baseline. */
static void tune_default_outside_set(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 16, 16, 8, "8 tune {4, 8}", "4 tune {4, 8}");
	if (!k)
		return;
	CHECK(ct_kernel_set_param(k, "TI", 16) == CT_OK && ct_kernel_recheck(k) == CT_OK);
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.no_store = 1;
	o.fraction = 0.05; /* the default alone */
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECKF(r.space == 4 && r.ncandidates == 5 && r.default_index == 4, "space %lld valid %d default %d",
		       (long long)r.space, r.ncandidates, r.default_index);
		CHECK(r.default_index == 4 && r.candidates[4].values[0] == 16 && r.candidates[4].values[1] == 4 &&
		      r.candidates[4].measured && r.candidates[4].verified == 1);
		CHECK(r.nmeasured == 1 && r.best == 4 && r.decision == CT_TUNE_DEFAULT_FASTEST);
		ct_tune_result_free(&r);
	}
	CHECK(ct_kernel_param_value(k, 3, NULL) == 16);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A candidate that computes a wrong result is discarded, and nothing is stored. */
static void tune_wrong_discarded(void)
{
	char dir[256], cc[300];
	new_dir(dir, sizeof dir);
	snprintf(cc, sizeof cc, "%s/badcc.sh", tmp_root);
	FILE *f = fopen(cc, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	/* a compiler that turns every `ARRAY[..] +=` of the kernel into -= */
	fprintf(f, "#!/bin/sh\nargs=\nfor a in \"$@\"; do\n  case $a in\n  *.c) b=$(mktemp %s/bad_XXXXXX).c; sed 's/\\] += /] -= /g' \"$a\" > $b; "
	           "args=\"$args $b\";;\n  *) args=\"$args $a\";;\n  esac\ndone\nexec cc $args\n", tmp_root);
	fclose(f);
	chmod(cc, 0755);
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_ctx_set_compiler(ctx, cc) == CT_OK);
	ct_kernel *k = tmm(ctx, 12, 12, 8, "4 tune {4, 8}", "4");
	if (k) {
		ct_tune_options o;
		ct_tune_options_init(&o);
		o.store_dir = dir;
		o.fraction = 1;
		ct_tune_result r;
		CHECK(ct_tune(k, &o, &r) == CT_OK);
		CHECKF(r.nwrong == 2 && r.best == -1 && !r.stored, "wrong %d best %d", r.nwrong, r.best);
		ct_tune_result_free(&r);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}


/* Measuring goes on past 5% until the budget or the space ends; the run
 * stays within its budget; the winner is the default or confirmed faster. */
static void tune_spends_budget(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 16, 16, 8, "8 tune {2, 4, 8, 16}", "4 tune {2, 4, 8, 16}");
	if (!k)
		return;
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.no_store = 1;
	o.verify = 0;
	o.budget = 3;
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		/* more than floor(5% of 16) = 0 -> 1 point, unless one compile took it all */
		CHECKF(r.nmeasured == r.ncandidates || r.budget_hit, "measured %d of %d", r.nmeasured, r.ncandidates);
		CHECKF(r.seconds < o.budget + 1.5, "%.2f s for a budget of %.0f", r.seconds, o.budget);
		CHECK(r.budget == 3);
		CHECK(r.best == r.default_index || (r.decision == CT_TUNE_REPLACED && r.confirm_gain > 0));
		CHECK(r.rank_agreement >= -1 && r.rank_agreement <= 1);
		ct_tune_result_free(&r);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A candidate whose first run is over CT_TUNE_ABANDON x the best is not
 * timed further and cannot win: R = 64 does 64 times the work of R = 1. */
static void tune_abandons_slow(void)
{
	static const char src[] = "kernel slow\nparam N = 8192\nparam R = 1 tune {1, 64}\nparam W = N * R\n"
	                          "array A : f32[W] inout\nfor (i: W) { A[i] += 1 }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "slow.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : ct_ctx_last_message(ctx));
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.no_store = 1;
	o.budget = 20;
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		int slow = -1;
		for (int i = 0; i < r.ncandidates; i++)
			if (r.candidates[i].values[0] == 64)
				slow = i;
		CHECK(slow >= 0 && r.candidates[slow].measured);
		CHECKF(slow >= 0 && r.candidates[slow].abandoned == 1 && r.nabandoned == 1, "abandoned %d",
		       slow >= 0 ? r.candidates[slow].abandoned : -1);
		CHECK(r.best == r.default_index && r.candidates[r.best].values[0] == 1);
		ct_tune_result_free(&r);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The points a run measured are kept in the store: a second run of the
 * same sizes resumes from them and measures the others. */
static void tune_resumes(void)
{
	char dir[256];
	new_dir(dir, sizeof dir);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 16, 16, 8, "8 tune {4, 8}", "4 tune {4, 8}");
	if (!k)
		return;
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.store_dir = dir;
	o.verify = 0;
	o.fraction = 0.5; /* 2 of 4 per run: as if the first were interrupted */
	ct_tune_result r;
	CHECK(ct_tune(k, &o, &r) == CT_OK && r.nmeasured == 2 && r.nresumed == 0);
	ct_tune_result_free(&r);
	CHECK(ct_tune(k, &o, &r) == CT_OK);
	CHECKF(r.nresumed == 2 && r.nmeasured == 4, "resumed %d measured %d", r.nresumed, r.nmeasured);
	int resumed = 0;
	for (int i = 0; i < r.ncandidates; i++)
		resumed += r.candidates[i].resumed;
	CHECK(resumed == 2);
	ct_tune_result_free(&r);
	/* no_resume measures again */
	o.no_resume = 1;
	CHECK(ct_tune(k, &o, &r) == CT_OK && r.nresumed == 0 && r.nmeasured == 2);
	ct_tune_result_free(&r);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* check_only: the sizes and the arrays' total, no ranking; a budget shorter
 * than one run is refused up front. */
static void tune_refusals(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 16, 16, 8, "8 tune {4, 8}", "4 tune {4, 8}");
	if (!k)
		return;
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.no_store = 1;
	o.check_only = 1;
	ct_tune_result r;
	CHECK(ct_tune(k, &o, &r) == CT_OK && r.nmeasured == 0 && r.ncandidates == 0);
	ct_tune_result_free(&r);
	CHECK(ct_kernel_set_param(k, "M", 100000000) == CT_OK && ct_kernel_set_param(k, "N", 100000000) == CT_OK &&
	      ct_kernel_recheck(k) == CT_OK);
	CHECK(ct_tune(k, &o, &r) == CT_ERR_LIMIT && strstr(ct_ctx_last_message(ctx), "the arrays need more than"));
	CHECK(ct_kernel_set_param(k, "M", 2000) == CT_OK && ct_kernel_set_param(k, "N", 2000) == CT_OK &&
	      ct_kernel_set_param(k, "K", 2000) == CT_OK && ct_kernel_recheck(k) == CT_OK);
	o.check_only = 0;
	o.budget = 0.01;
	CHECKF(ct_tune(k, &o, &r) == CT_ERR_LIMIT && strstr(ct_ctx_last_message(ctx), "give a budget of at least"),
	       "%s", ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Export, import on "another machine" (another folder), refusal of another
 * device id unless forced; forced records are stale (nearest only). */
static void store_export_import(void)
{
	char d1[256], d2[256], file[300], file2[300];
	new_dir(d1, sizeof d1);
	new_dir(d2, sizeof d2);
	snprintf(file, sizeof file, "%s/export.json", tmp_root);
	snprintf(file2, sizeof file2, "%s/export2.json", tmp_root);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = ct_store_open(ctx, d1, CT_STORE_QUIET);
	ct_tune_record rec;
	memset(&rec, 0, sizeof rec);
	rec.family = "fam-1";
	rec.dtype = CT_F32;
	rec.size_class = "M=64";
	rec.params = "T=8;decision=default";
	rec.seconds = 0.5;
	rec.gflops = 1;
	rec.verified = 1;
	rec.tuner_version = "3";
	CHECK(s && ct_store_put(s, &rec, NULL) == CT_OK && ct_store_export(s, NULL, file) == CT_OK);
	ct_store_close(s);
	/* the same device elsewhere: trusted */
	s = ct_store_open(ctx, d2, CT_STORE_QUIET);
	int kept = 0, total = 0;
	CHECKF(s && ct_store_import(s, file, 0, &kept, &total) == CT_OK && kept == 1 && total == 1, "%s",
	       ct_ctx_last_message(ctx));
	ct_tune_record got;
	int found = 0;
	CHECK(ct_store_get(s, "fam-1", CT_F32, "M=64", &got, &found) == CT_OK && found && got.trusted &&
	      strcmp(got.params, rec.params) == 0);
	ct_store_close(s);
	/* the file, as another device wrote it */
	FILE *in = fopen(file, "r"), *out = fopen(file2, "w");
	char line[8192];
	const char *id = ct_device_id(ctx);
	while (in && out && fgets(line, sizeof line, in)) {
		for (char *p; id && (p = strstr(line, id));) {
			memmove(p + 5, p + strlen(id), strlen(p + strlen(id)) + 1);
			memcpy(p, "other", 5);
		}
		fputs(line, out);
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	rec.family = "fam-2";
	char d3[256];
	new_dir(d3, sizeof d3);
	s = ct_store_open(ctx, d3, CT_STORE_QUIET);
	CHECK(s && ct_store_import(s, file2, 0, &kept, &total) == CT_ERR_INPUT &&
	      strstr(ct_ctx_last_message(ctx), "records of device 'other'"));
	CHECK(ct_store_import(s, file2, 1, &kept, &total) == CT_OK && kept == 1);
	found = 0;
	CHECK(ct_store_get(s, "fam-1", CT_F32, "M=64", &got, &found) == CT_OK && found && !got.trusted &&
	      strstr(got.params, "from=other"));
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void put_rec(ct_ctx *ctx, const char *dir, ct_kernel *k, const char *cls, const char *params,
                    int verified)
{
	char family[128];
	ct_dtype t;
	CHECK(ct_kernel_tune_key(k, family, sizeof family, NULL, 0, &t) == CT_OK);
	ct_store *s = ct_store_open(ctx, dir, CT_STORE_QUIET);
	ct_tune_record r;
	memset(&r, 0, sizeof r);
	r.family = family;
	r.dtype = t;
	r.size_class = cls;
	r.params = params;
	r.seconds = 1e-3;
	r.gflops = 1;
	r.verified = verified;
	r.tuner_version = "1";
	int stored = 0;
	CHECK(s && ct_store_put(s, &r, &stored) == CT_OK && stored);
	ct_store_close(s);
}

/* exact record, else nearest size class, else the model; mismatches never. */
static void select_fallbacks(void)
{
	char dir[256];
	new_dir(dir, sizeof dir);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 24, 20, 16, "8 tune {4, 8, 16}", "4 tune {4, 8, 16}");
	if (!k)
		return;
	/* no store yet: the model */
	ct_selector *s = ct_selector_new(k, dir);
	ct_solution sol;
	int64_t a[3] = {24, 20, 16}, b[3] = {30, 20, 16}, c[3] = {40, 40, 30}, d[3] = {24, 20, 16};
	CHECK(s && ct_select(s, a, 3, &sol) == CT_OK && sol.source == CT_SELECT_MODEL &&
	      sol.ntuned == 3 && sol.size_class[0] == 0);
	ct_selector_free(s);
	put_rec(ctx, dir, k, "M=24:N=20:K=16", "TI=4:TJ=8:TK=8", 1);
	put_rec(ctx, dir, k, "M=48:N=40:K=32", "TI=16:TJ=4:TK=8", 1);
	put_rec(ctx, dir, k, "M=30:N=20:K=16", "TI=8:TJ=8:TK=8", 0); /* failed verification */
	s = ct_selector_new(k, dir);
	CHECK(s != NULL);
	if (s) {
		CHECK(ct_select(s, a, 3, &sol) == CT_OK && sol.source == CT_SELECT_EXACT &&
		      sol.values[0] == 4 && sol.values[1] == 8);
		CHECK(ct_select(s, b, 3, &sol) == CT_OK && sol.source == CT_SELECT_NEAREST &&
		      strcmp(sol.size_class, "M=24:N=20:K=16") == 0);
		CHECK(ct_select(s, c, 3, &sol) == CT_OK && sol.source == CT_SELECT_NEAREST &&
		      strcmp(sol.size_class, "M=48:N=40:K=32") == 0 && sol.values[0] == 16);
		/* warm: the same answer from memory */
		CHECK(ct_select(s, d, 3, &sol) == CT_OK && sol.source == CT_SELECT_EXACT);
		CHECK(ct_select(s, a, 2, &sol) == CT_ERR_USAGE);
	}
	ct_selector_free(s);
	ct_kernel_free(k);
	/* a kernel without tunable params has no selector */
	const char *plain = "kernel p\nparam N = 4\narray A : f32[N] inout\nfor (i: N) { A[i] += 1 }\n";
	k = ct_kernel_parse(ctx, plain, strlen(plain), "p.cachet");
	CHECK(k && ct_selector_new(k, dir) == NULL && ct_ctx_last_status(ctx) == CT_ERR_INPUT);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void count_warning(void *ud, const char *msg)
{
	char *last = ud;
	snprintf(last, 512, "%s", msg);
}

/* A record whose tuned values lie outside the params' tune sets (a planted
 * TI = 2^63-1) is ignored with a warning when read (issue 22, row 9). */
static void select_out_of_space(void)
{
	static const struct {
		const char *params;
		int ok;
	} rows[] = {
		{"TI=9223372036854775807:TJ=8:TK=8", 0},
		{"TI=5:TJ=8:TK=8", 0},
		{"TI=4:TJ=8:TK=16", 0},
		{"TI=16:TJ=16:TK=8", 1},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char dir[256], last[512] = "";
		new_dir(dir, sizeof dir);
		ct_ctx *ctx = ct_ctx_new();
		ct_cache_set_warning_handler(ctx, count_warning, last);
		ct_kernel *k = tmm(ctx, 24, 20, 16, "8 tune {4, 8, 16}", "4 tune {4, 8, 16}");
		if (!k) {
			ct_ctx_free(ctx);
			continue;
		}
		put_rec(ctx, dir, k, "M=24:N=20:K=16", rows[i].params, 1);
		ct_selector *s = ct_selector_new(k, dir);
		int64_t a[3] = {24, 20, 16};
		ct_solution sol;
		CHECK(s && ct_select(s, a, 3, &sol) == CT_OK);
		if (rows[i].ok) {
			CHECKF(s && sol.source == CT_SELECT_EXACT && sol.values[0] == 16, "%s", rows[i].params);
			CHECK(last[0] == 0);
		} else {
			CHECKF(s && sol.source == CT_SELECT_MODEL, "%s: %d", rows[i].params, (int)sol.source);
			CHECKF(s && (sol.values[0] == 4 || sol.values[0] == 8 || sol.values[0] == 16),
			       "%lld", (long long)sol.values[0]);
			CHECKF(strstr(last, "not among the params' tune values") && strstr(last, rows[i].params),
			       "%s", last);
		}
		ct_selector_free(s);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* Run sol and the unscheduled interpreter from the same inputs; the largest error. */
static double solution_error(ct_kernel *k, ct_selector *s, const ct_solution *sol)
{
	int na = ct_kernel_array_count(k);
	void *got[8] = {0}, *want[8] = {0};
	for (int a = 0; a < na; a++) {
		int64_t n = ct_kernel_array_elements(k, a);
		got[a] = malloc((size_t)n * 4);
		want[a] = malloc((size_t)n * 4);
		ct_fill_random(got[a], CT_F32, n, 7, (uint64_t)a);
		memcpy(want[a], got[a], (size_t)n * 4);
	}
	double err = 1e30;
	ct_looptree *ref = ct_kernel_lower(k, 0);
	if (ref && ct_solution_run(s, sol, got) == CT_OK && ct_interp_run(ref, want) == CT_OK)
		err = ct_max_rel_error(got[2], want[2], CT_F32, ct_kernel_array_elements(k, 2));
	ct_looptree_free(ref);
	for (int a = 0; a < na; a++) {
		free(got[a]);
		free(want[a]);
	}
	return err;
}

/* Prime sizes: a main piece and tails, in order, equal to the interpreter. */
static void select_tails_prime(void)
{
	char dir[256];
	new_dir(dir, sizeof dir);
	ct_ctx *ctx = ct_ctx_new();
	/* 67 x 31 x 401: M is cut without copies (rows are contiguous); N is cut
	 * too, its blocks gathered, since K makes the copies small next to the work */
	ct_kernel *k = tmm(ctx, 67, 31, 401, "16 tune {16}", "8 tune {8}");
	if (!k)
		return;
	put_rec(ctx, dir, k, "M=67:N=31:K=401", "TI=16:TJ=8:TK=8", 1);
	ct_selector *s = ct_selector_new(k, dir);
	ct_solution sol;
	int64_t sz[3] = {67, 31, 401};
	CHECK(s && ct_select(s, sz, 3, &sol) == CT_OK && sol.source == CT_SELECT_EXACT);
	if (s) {
		CHECKF(sol.npieces == 4, "%d pieces", sol.npieces);
		/* main first: 64 x 24, then the tails 3 and 7 */
		CHECK(sol.pieces[0].value[0] == 64 && sol.pieces[0].value[1] == 24);
		CHECK(sol.pieces[0].offset[0] == 0 && sol.pieces[0].offset[1] == 0);
		CHECK(sol.pieces[3].value[0] == 3 && sol.pieces[3].offset[0] == 64);
		CHECK(sol.pieces[3].value[1] == 7 && sol.pieces[3].offset[1] == 24);
		double e = solution_error(k, s, &sol);
		CHECKF(e <= 1e-3, "error %g", e);
		/* and the run path of cachet run, verified by the library */
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result rr;
		CHECK(ct_kernel_run_selected(s, &o, &rr, &sol) == CT_OK && rr.verified == 1);
	}
	ct_selector_free(s);
	ct_kernel_free(k);
	/* small primes: only the contiguous cut pays (copies would cost more than the work) */
	k = tmm(ctx, 37, 29, 13, "8 tune {8}", "8 tune {8}");
	new_dir(dir, sizeof dir); /* no records: the same family has one in the other folder */
	s = k ? ct_selector_new(k, dir) : NULL;
	int64_t sm[3] = {37, 29, 13};
	CHECK(s && ct_select(s, sm, 3, &sol) == CT_OK && sol.source == CT_SELECT_MODEL);
	if (s) {
		CHECKF(sol.npieces == 2 && sol.pieces[1].offset[0] == 32 && sol.pieces[1].value[0] == 5,
		       "%d pieces", sol.npieces);
		double e = solution_error(k, s, &sol);
		CHECKF(e <= 1e-3, "error %g", e);
	}
	ct_selector_free(s);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The file's values as the answer without a record (cachet run --auto): the kernel's own
 * values of its tunable params, one piece where the model's answer cuts a tail; a record
 * still wins; the model again when asked; any other source refused. */
static void select_file_fallback(void)
{
	char dir[256];
	new_dir(dir, sizeof dir);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = tmm(ctx, 37, 29, 13, "16 tune {8, 16}", "4 tune {4, 8}");
	ct_selector *s = k ? ct_selector_new(k, dir) : NULL;
	ct_solution sol;
	int64_t sm[3] = {37, 29, 13};
	CHECK(s && ct_selector_fallback(s, CT_SELECT_FILE) == CT_OK);
	CHECK(s && ct_select(s, sm, 3, &sol) == CT_OK && sol.source == CT_SELECT_FILE);
	if (s) {
		CHECKF(sol.ntuned == 3 && sol.values[0] == 16 && sol.values[1] == 4 && sol.values[2] == 8,
		       "values %lld %lld %lld", (long long)sol.values[0], (long long)sol.values[1],
		       (long long)sol.values[2]);
		CHECKF(sol.npieces == 1 && sol.pieces[0].value[0] == 37, "%d pieces", sol.npieces);
		CHECK(strcmp(ct_select_source_name(sol.source), "file") == 0 && sol.size_class[0] == 0);
		double e = solution_error(k, s, &sol);
		CHECKF(e <= 1e-3, "error %g", e);
		CHECK(ct_selector_fallback(s, CT_SELECT_EXACT) == CT_ERR_USAGE);
		CHECK(ct_selector_fallback(s, CT_SELECT_MODEL) == CT_OK);
		CHECK(ct_select(s, sm, 3, &sol) == CT_OK && sol.source == CT_SELECT_MODEL);
	}
	CHECK(ct_selector_fallback(NULL, CT_SELECT_FILE) == CT_ERR_USAGE);
	ct_selector_free(s);
	/* a record of these sizes: the record, not the file's values */
	if (k)
		put_rec(ctx, dir, k, "M=37:N=29:K=13", "TI=8:TJ=8:TK=8", 1);
	s = k ? ct_selector_new(k, dir) : NULL;
	CHECK(s && ct_selector_fallback(s, CT_SELECT_FILE) == CT_OK);
	CHECK(s && ct_select(s, sm, 3, &sol) == CT_OK && sol.source == CT_SELECT_EXACT && sol.values[0] == 8 &&
	      sol.values[1] == 8);
	ct_selector_free(s);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A size used other than as a plain extent is never cut. */
static void select_no_unsafe_cut(void)
{
	const char *src = "kernel sh\nparam N = 37\nparam T = 8 tune {8}\n"
	                  "array A : f32[N] input\narray B : f32[N] inout\n"
	                  "for (i: N) { B[i] += A[i] * N }\n"
	                  "schedule { ii = split(i, T) }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "sh.cachet");
	CHECK(k != NULL);
	ct_selector *s = k ? ct_selector_new(k, "/nonexistent/folder") : NULL;
	ct_solution sol;
	int64_t n = 1000003;
	CHECK(s && ct_select(s, &n, 1, &sol) == CT_OK && sol.npieces == 1);
	ct_selector_free(s);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* An index that an affine bound reads (k: 0 .. min(i+1, K) reads i) is never cut: a piece
 * would run i from 0 and give its rows the sums of the first rows. 37 = 32 + 5 would be cut
 * (B's rows are contiguous) without that rule. */
static void select_no_affine_cut(void)
{
	const char *src = "kernel tri\nparam N = 37, K = 40\nparam T = 8 tune {8}\n"
	                  "array A : f32[K] input\narray B : f32[N] inout\n"
	                  "for (i: N, k: 0 .. min(i+1, K)) { B[i] += A[k] }\n"
	                  "schedule { ii = split(i, T) }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "tri.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	char dir[256];
	new_dir(dir, sizeof dir);
	ct_selector *s = k ? ct_selector_new(k, dir) : NULL;
	CHECKF(s != NULL, "%s", ct_ctx_last_message(ctx));
	ct_solution sol;
	int64_t n[2] = {37, 40};
	if (s) {
		CHECK(ct_select(s, n, 2, &sol) == CT_OK && sol.source == CT_SELECT_MODEL && sol.npieces == 1);
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result rr;
		CHECK(ct_kernel_run_selected(s, &o, &rr, &sol) == CT_OK && rr.verified == 1);
	}
	ct_selector_free(s);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A kernel with affine loop bounds is tuned: each point's misses from the simulator (those
 * of ct_kernel_simulate at its values), the core cost over the triangle's iterations, the
 * winner stored and picked by the selector; a budget too short to simulate every point ranks
 * by the core cost alone. */
static void tune_affine(void)
{
	char dir[256];
	new_dir(dir, sizeof dir);
	const char *src = "kernel tri\nparam N = 24, M = 24\nparam TJ = 8 tune {4, 8}\nparam TK = 8 tune {4, 8}\n"
	                  "array L : f32[N, N] input\narray B : f32[N, M] input\narray C : f32[N, M] inout\n"
	                  "for (i: N, j: M, k: 0 .. i+1) { C[i, j] += L[i, k] * B[k, j] }\n"
	                  "schedule { jj = split(j, TJ); kk = split(k, TK); reorder(i, j, k, jj, kk) }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "tri.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	/* the family leaves the tiles out (the split of the affine k too) */
	char f1[128], f2[128];
	CHECK(ct_kernel_tune_key(k, f1, sizeof f1, NULL, 0, NULL) == CT_OK);
	CHECK(ct_kernel_set_param(k, "TK", 4) == CT_OK && ct_kernel_set_param(k, "TJ", 4) == CT_OK &&
	      ct_kernel_recheck(k) == CT_OK && ct_kernel_tune_key(k, f2, sizeof f2, NULL, 0, NULL) == CT_OK);
	CHECKF(strcmp(f1, f2) == 0, "%s vs %s", f1, f2);
	CHECK(ct_kernel_set_param(k, "TK", 8) == CT_OK && ct_kernel_set_param(k, "TJ", 8) == CT_OK &&
	      ct_kernel_recheck(k) == CT_OK);
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.budget = 10;
	o.fraction = 0.5; /* two measured */
	o.store_dir = dir;
	o.cache_spec = "512:64,4K:64";
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.space == 4 && r.ncandidates == 4 && r.memory_source == CT_TUNE_MEMORY_SIMULATOR);
		CHECK(r.best >= 0 && r.stored == 1 && r.candidates[r.best].verified == 1);
		for (int i = 0; i < r.ncandidates; i++) {
			const ct_tune_candidate *c = &r.candidates[i];
			CHECK(c->core_ns > 0 && c->cost >= c->core_ns && c->cost >= c->memory_ns);
			CHECK(ct_kernel_set_param(k, "TJ", c->values[0]) == CT_OK &&
			      ct_kernel_set_param(k, "TK", c->values[1]) == CT_OK && ct_kernel_recheck(k) == CT_OK);
			ct_sim_result sr;
			CHECK(ct_kernel_simulate(k, o.cache_spec, &sr) == CT_OK);
			for (int l = 0; l < 2; l++)
				CHECKF(sr.level[l].misses == c->misses[l], "point %d level %d: %lld simulated, %lld ranked", i,
				       l, (long long)sr.level[l].misses, (long long)c->misses[l]);
			ct_sim_result_free(&sr);
		}
		CHECK(ct_kernel_set_param(k, "TJ", 8) == CT_OK && ct_kernel_set_param(k, "TK", 8) == CT_OK &&
		      ct_kernel_recheck(k) == CT_OK);
		ct_selector *s = ct_selector_new(k, dir);
		ct_solution sol;
		int64_t n[2] = {24, 24};
		CHECKF(s != NULL, "%s", ct_ctx_last_message(ctx));
		if (s && r.best >= 0) {
			CHECK(ct_select(s, n, 2, &sol) == CT_OK && sol.source == CT_SELECT_EXACT &&
			      sol.values[0] == r.candidates[r.best].values[0] &&
			      sol.values[1] == r.candidates[r.best].values[1]);
			ct_run_options ro;
			ct_run_options_init(&ro);
			ct_run_result rr;
			CHECK(ct_kernel_run_selected(s, &ro, &rr, &sol) == CT_OK && rr.verified == 1);
		}
		ct_selector_free(s);
		ct_tune_result_free(&r);
	}
	/* 1024 x 1024: 2^29 accesses, far more than a quarter of 2 s simulates for 4 points */
	CHECK(ct_kernel_set_param(k, "N", 1024) == CT_OK && ct_kernel_set_param(k, "M", 1024) == CT_OK &&
	      ct_kernel_recheck(k) == CT_OK);
	o.budget = 2;
	o.check_only = 0;
	o.fraction = 0.25;
	o.verify = 0;
	o.no_store = 1;
	st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		/* all 4 points ranked, unless ranking used its half of the budget first (a loaded
		 * machine, a sanitizer build) */
		CHECKF(r.memory_source == CT_TUNE_MEMORY_NONE && (r.ncandidates == 4 || (r.budget_hit && r.ncandidates > 0)),
		       "memory source %d, %d candidates, budget hit %d", (int)r.memory_source, r.ncandidates, r.budget_hit);
		for (int i = 0; i < r.ncandidates; i++)
			CHECK(r.candidates[i].memory_ns == 0 && r.candidates[i].cost == r.candidates[i].core_ns &&
			      r.candidates[i].core_ns > 0);
		ct_tune_result_free(&r);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	lang_rows();
	RUN(lang_override);
	RUN(tune_key);
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(tune_roundtrip);
	RUN(tune_fraction_and_budget);
	RUN(tune_default_outside_set);
	RUN(tune_wrong_discarded);
	RUN(tune_spends_budget);
	RUN(tune_abandons_slow);
	RUN(tune_resumes);
	RUN(tune_refusals);
	RUN(store_export_import);
	RUN(select_fallbacks);
	RUN(select_out_of_space);
	RUN(select_tails_prime);
	RUN(select_file_fallback);
	RUN(select_no_unsafe_cut);
	RUN(select_no_affine_cut);
	RUN(tune_affine);
	nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return h_report();
}
