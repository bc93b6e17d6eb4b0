/* test_check.c: a kernel that ct_kernel_parse / ct_kernel_recheck accept lowers and emits for its plan's target; what the emitter would refuse is refused at check, with a position. */
#include "cachet.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines 1-12; the plan starts on line 13, its first item on line 14. */
#define MM                                                                                         \
	"kernel mm\n"                                                                              \
	"param M = 37, N = 32, K = 21\n"                                                           \
	"array A : f32[M, K] input\n"                                                              \
	"array B : f32[K, N] input\n"                                                              \
	"array C : f32[M, N] inout\n"                                                              \
	"for (i: M, j: N, k: K) {\n"                                                               \
	"  C[i, j] += A[i, k] * B[k, j]\n"                                                         \
	"}\n"                                                                                      \
	"schedule {\n"                                                                             \
	"  ii, jj, kk = tile(i=8, j=8, k=8)\n"                                                     \
	"  reorder(i, j, k, ii, jj, kk)\n"                                                         \
	"}\n"

/* A plan, and the start of the first error ("LINE:COL: message") or NULL
 * when the kernel must be accepted. */
typedef struct row {
	const char *name;
	const char *plan;
	const char *want;
} row;

static const row rows[] = {
    {"opencl local caches between group and item loops",
     "plan(target=opencl) {\n  AA = cache(A, index=ii, location=local, strategy=blocked)\n"
     "  BB = cache(B, index=ii, location=local, strategy=striped)\n  parallelize(i, j)\n}\n",
     NULL},
    {"opencl private caches inside the item loops",
     "plan(target=opencl) {\n  AA = cache(A, index=kk, location=private)\n"
     "  CC = cache(C, index=kk, location=private)\n  parallelize(i, j)\n}\n",
     NULL},
    {"opencl local cache inside the item loop",
     "plan(target=opencl) {\n  AA = cache(A, index=kk, location=local)\n  parallelize(i, j)\n}\n",
     "14:27: cache 'AA': a location=local cache must sit outside the work-item loop over 'ii'"},
    {"opencl local cache outside the group loop",
     "plan(target=opencl) {\n  AA = cache(A, index=i, location=local)\n  parallelize(i, j)\n}\n",
     "14:26: cache 'AA': a location=local cache must sit inside the work-group loop over 'i'"},
    {"opencl private cache writing back outside the item loops",
     "plan(target=opencl) {\n  CC = cache(C, index=k, location=private)\n  parallelize(i, j)\n}\n",
     "14:26: cache 'CC' (location=private) writes back to 'C' from outside the work-item loops"},
    {"opencl spmd",
     "plan(target=opencl) {\n  parallelize(i, j, spmd=true)\n}\n",
     "14:3: parallelize(..., spmd=true) is not implemented for plan(target=opencl)"},
    {"opencl parallelize of a split index",
     "plan(target=opencl) {\n  parallelize(ii)\n}\n",
     "14:15: parallelize(ii): on plan(target=opencl) name the loop's own index ('i')"},
    {"host multicache",
     "plan {\n  AA = cache(A, index=k, trigger_index=j)\n  BB = cache(B, level=2)\n}\n", NULL},
    {"host trigger below level",
     "plan {\n  AA = cache(A, index=k, trigger_index=ii)\n}\n",
     "14:26: trigger level 3 of cache 'AA' is below its level 4"},
};

/* The first error of ctx as "LINE:COL: message". */
static void first_error(ct_ctx *ctx, char *buf, size_t n)
{
	if (ct_ctx_diag_count(ctx) > 0) {
		const char *r = ct_ctx_diag_render(ctx, 0);
		const char *c = strchr(r, ':');
		snprintf(buf, n, "%s", c ? c + 1 : r);
		char *e = strstr(buf, ": error: ");
		if (e)
			memmove(e + 2, e + 9, strlen(e + 9) + 1);
	} else {
		snprintf(buf, n, "%d:%d: %s", ct_ctx_last_line(ctx), ct_ctx_last_col(ctx),
		         ct_ctx_last_message(ctx));
	}
}

/* An accepted kernel lowers and emits for its plan's target. */
static void emits(ct_ctx *ctx, ct_kernel *k, const char *target)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	CHECKF(t != NULL, "lower: %s", ct_ctx_last_message(ctx));
	ct_looptree_free(t);
	size_t len = 0;
	char *src = ct_kernel_emit(k, target, &len);
	CHECKF(src != NULL && len > 0, "emit %s: %s", target, ct_ctx_last_message(ctx));
	free(src);
}

static void run_row(const row *r)
{
	char text[4096];
	snprintf(text, sizeof text, "%s%s", MM, r->plan);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	if (!r->want) {
		CHECKF(k != NULL, "rejected: %s", ct_ctx_last_message(ctx));
		if (k)
			emits(ctx, k, strstr(r->plan, "opencl") ? "opencl" : "host");
	} else {
		char got[1024];
		first_error(ctx, got, sizeof got);
		CHECK(k == NULL);
		CHECK(ct_ctx_last_status(ctx) == CT_ERR_INPUT);
		CHECKF(strncmp(got, r->want, strlen(r->want)) == 0, "\n  want: %s\n  got:  %s", r->want, got);
		CHECKF(strcmp(ct_ctx_last_file(ctx), "t.cachet") == 0, "file '%s'", ct_ctx_last_file(ctx));
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ct_kernel_recheck after an override runs the emitter too: a private
 * cache that fits with K = 21 needs more than 64 KiB with K = 20000. */
static void test_recheck_emits(void)
{
	const char *text = MM "plan(target=opencl) {\n  BB = cache(B, index=k, location=private)\n"
	                      "  parallelize(j)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	CHECKF(k != NULL, "rejected: %s", ct_ctx_last_message(ctx));
	if (k) {
		CHECK(ct_kernel_set_param(k, "K", 20000) == CT_OK);
		CHECK(ct_kernel_recheck(k) == CT_ERR_INPUT);
		char got[1024];
		first_error(ctx, got, sizeof got);
		const char *want = "14:3: cache buffer 'BB' needs 640000 bytes per work-item";
		CHECKF(strncmp(got, want, strlen(want)) == 0, "\n  want: %s\n  got:  %s", want, got);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A runtime param without a value stays symbolic: the kernel checks and
 * emits. */
static void test_runtime_param(void)
{
	const char *text = "kernel mm\nparam M : runtime\nparam N = 32, K = 21\n"
	                   "array A : f32[M, K] input\narray B : f32[K, N] input\narray C : f32[M, N] inout\n"
	                   "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	                   "schedule {\n  ii, jj, kk = tile(i=8, j=8, k=8)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	                   "plan {\n  AA = cache(A, index=ii)\n  BB = cache(B, index=k, trigger_index=j)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	CHECKF(k != NULL, "rejected: %s", ct_ctx_last_message(ctx));
	if (k)
		emits(ctx, k, "host");
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		h_begin(rows[i].name);
		run_row(&rows[i]);
		h_end();
	}
	RUN(test_recheck_emits);
	RUN(test_runtime_param);
	return h_report();
}
