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

int main(void)
{
	lang_rows();
	RUN(lang_override);
	return h_report();
}
