/* test_selftest.c: newly compiled code is checked against the interpreter before its first use, on every native path (run, selector, callable, views, packages); a miscompiling compiler is refused. */
#include "cachet.h"
#include "harness.h"

#include "jit/jit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* a runtime param: the test instance is small (L = 37) whatever the call's L */
static const char rt_text[] = "kernel scale\n"
			      "param L : runtime\n"
			      "array X : f32[L] input\n"
			      "array Y : f32[L] output\n"
			      "for (i: L) { Y[i] = X[i] * 3 }\n";

/* a tune param: `cachet run` goes through the selector */
static const char tune_text[] = "kernel tscale\n"
				"param N = 64\n"
				"param T = 2 tune {2, 4}\n"
				"array X : f32[N] input strided\n"
				"array Y : f32[N] output\n"
				"for (i: N) { Y[i] = X[i] * 3 }\n"
				"schedule { ii = split(i, T) }\n";

static char tmp[64], evilcc[128], logpath[128];

/* A compiler wrapper that miscompiles (" * " becomes " + " in the source it
 * compiles) and logs each compile. */
static void make_evilcc(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/ct_selftest_XXXXXX");
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(evilcc, sizeof evilcc, "%s/evilcc", tmp);
	snprintf(logpath, sizeof logpath, "%s/log", tmp);
	FILE *f = fopen(evilcc, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\n"
		   "for a in \"$@\"; do case $a in *.c) echo c >>%s; sed -i 's/ \\* / + /g' \"$a\" ;; esac; done\n"
		   "exec cc \"$@\"\n",
		logpath);
	fclose(f);
	CHECK(chmod(evilcc, 0755) == 0);
}

/* Compiles the wrapper did so far. */
static int compiles(void)
{
	FILE *f = fopen(logpath, "r");
	int n = 0, c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	return k;
}

/* The message of a refusal names the suspicion, the compiler and the workaround. */
static void check_refusal(ct_ctx *ctx, ct_status st)
{
	const char *m = ct_ctx_last_message(ctx);
	CHECKF(st == CT_ERR_VERIFY, "status %d: %s", (int)st, m);
	CHECKF(strstr(m, "a miscompile by the C compiler") && strstr(m, evilcc) && strstr(m, "Workaround"), "%s", m);
}

static ct_ctx *evil_ctx(void)
{
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_ctx_set_compiler(ctx, evilcc) == CT_OK);
	return ctx;
}

/* ct_kernel_run, also without verification, refuses the wrong code. */
static void test_run_refused(void)
{
	ct_ctx *ctx = evil_ctx();
	ct_kernel *k = parse(ctx, rt_text);
	CHECK(k && ct_kernel_set_param(k, "L", 5000) == CT_OK);
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 0;
	ct_run_result r;
	check_refusal(ctx, ct_kernel_run(k, &o, &r));
	/* the instance tested was the small one, not L = 5000 */
	CHECKF(strstr(ct_ctx_last_message(ctx), "L=37"), "%s", ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A callable is never handed out. */
static void test_callable_refused(void)
{
	ct_ctx *ctx = evil_ctx();
	ct_kernel *k = parse(ctx, rt_text);
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	CHECK(h == NULL);
	check_refusal(ctx, ct_ctx_last_status(ctx));
	ct_callable_free(h);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The selector's pieces are refused too. */
static void test_selector_refused(void)
{
	ct_ctx *ctx = evil_ctx();
	ct_kernel *k = parse(ctx, tune_text);
	ct_selector *s = k ? ct_selector_new(k, tmp) : NULL;
	CHECK(s != NULL);
	if (s) {
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		ct_solution sol;
		check_refusal(ctx, ct_kernel_run_selected(s, &o, &r, &sol));
		ct_selector_free(s);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Kernels on views load the same way. */
static void test_views_refused(void)
{
	ct_ctx *ctx = evil_ctx();
	ct_kernel *k = parse(ctx, rt_text);
	CHECK(k && ct_kernel_set_param(k, "L", 8) == CT_OK);
	float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
	int64_t ext[1] = {8};
	ct_tensor *tx = ct_tensor_new(ctx, x, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *ty = ct_tensor_new(ctx, y, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *views[2] = {tx, ty};
	CHECK(tx && ty);
	if (tx && ty)
		check_refusal(ctx, ct_kernel_run_views(k, views, NULL));
	ct_tensor_free(tx);
	ct_tensor_free(ty);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* `cachet build` checks the package's library before it ships: refused,
 * no library left. */
static void test_build_refused(void)
{
	ct_ctx *ctx = evil_ctx();
	ct_kernel *k = parse(ctx, rt_text);
	char dir[128], so[160], a[160];
	snprintf(dir, sizeof dir, "%s/pkg", tmp);
	snprintf(so, sizeof so, "%s/libscale.so", dir);
	snprintf(a, sizeof a, "%s/libscale.a", dir);
	check_refusal(ctx, k ? ct_kernel_build(k, dir) : CT_ERR_USAGE);
	CHECK(access(so, F_OK) != 0 && access(a, F_OK) != 0);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The verdict is kept with the module: a second ctx refuses without
 * compiling again (policy and fallback both known wrong). */
static void test_verdict_kept(void)
{
	ct_ctx *ctx = evil_ctx();
	ct_kernel *k = parse(ctx, rt_text);
	int before = compiles();
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	CHECK(h == NULL);
	check_refusal(ctx, ct_ctx_last_status(ctx));
	CHECKF(strstr(ct_ctx_last_message(ctx), "whose verdict is kept"), "%s", ct_ctx_last_message(ctx));
	CHECKF(compiles() == before, "%d compiles, want %d", compiles(), before);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The right compiler: every path works, the callable on a large L. */
static void test_good_compiler(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, rt_text);
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	CHECKF(h != NULL, "%s", ct_ctx_last_message(ctx));
	enum { L = 1000 };
	static float x[L], y[L];
	for (int i = 0; i < L; i++)
		x[i] = (float)i;
	void *args[2] = {x, y};
	int64_t p[1] = {L};
	CHECK(h && ct_callable_call(h, args, p) == CT_OK);
	CHECK(y[L - 1] == 3.0f * (float)(L - 1));
	ct_callable_free(h);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The compile policy and the compiler's identity are in the code cache's
 * key: GCC's -fno-tree-slp-vectorize, clang's policy without it. */
static void test_key_has_policy(void)
{
	static const char src[] = "int f(void) { return 0; }\n";
	ct_ctx *ctx = ct_ctx_new();
	char hex[JIT_DIGEST_HEX], *text = NULL;
	CHECK(ct_ctx_set_compiler(ctx, "gcc") == CT_OK);
	CHECKF(jit_key(ctx, src, strlen(src), NULL, hex, &text) == CT_OK, "%s", ct_ctx_last_message(ctx));
	CHECKF(text && strstr(text, " -fno-tree-slp-vectorize\n") && strstr(text, "compiler-version ") &&
	               strstr(text, "-O3") && strstr(text, "gcc"),
	       "%s", text ? text : "(none)");
	free(text);
	text = NULL;
	if (system("clang-14 --version >/dev/null 2>&1") == 0) {
		char hex2[JIT_DIGEST_HEX];
		CHECK(ct_ctx_set_compiler(ctx, "clang-14") == CT_OK);
		CHECK(jit_key(ctx, src, strlen(src), NULL, hex2, &text) == CT_OK);
		CHECKF(text && !strstr(text, "slp") && strstr(text, "clang"), "%s", text ? text : "(none)");
		CHECK(strcmp(hex, hex2) != 0);
		free(text);
	}
	ct_ctx_free(ctx);
}

int main(void)
{
	char cache[] = "/tmp/ct_selftest_cache_XXXXXX";
	if (!mkdtemp(cache) || setenv("CACHET_CACHE_DIR", cache, 1) != 0)
		return 1;
	make_evilcc();
	RUN(test_run_refused);
	RUN(test_callable_refused);
	RUN(test_selector_refused);
	RUN(test_views_refused);
	RUN(test_build_refused);
	RUN(test_verdict_kept);
	RUN(test_good_compiler);
	RUN(test_key_has_policy);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", tmp, cache);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return h_report();
}
