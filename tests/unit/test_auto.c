/* test_auto.c: ct_kernel_autoschedule: the file it returns parses and verifies, the choices follow the
 * machine description (vector width, threads), a written schedule is kept, errors and misuse. */
#include "cachet.h"

#include "harness.h"

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
	return h_report();
}
