/* test_entryargs.c: the one argument layout of a compiled kernel's entry (entry_args_fill) and the paths that use it: run, selector pieces, callables, views. */
#include "cachet.h"
#include "harness.h"

#include "engine/engine.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* issue 34, item 2: a tune param and a strided array (the selector's piece
 * call once passed the params only) */
static const char s3_text[] = "kernel s3\n"
			      "param N = 2\n"
			      "param T = 1 tune {1, 2}\n"
			      "array A : f32[N] input strided\n"
			      "array Y : f32[N] output\n"
			      "for (i: N) { Y[i] = A[i] }\n";

/* two strided arrays, a temp between them and a tile the selector cuts */
static const char cut_text[] = "kernel scut\n"
			       "param N = 7\n"
			       "param C = 3\n"
			       "param T = 2 tune {2, 4}\n"
			       "array A : f64[N, C] input strided\n"
			       "array W : f64[N, C] temp\n"
			       "array Y : f64[N, C] output strided\n"
			       "for (i: N, j: C) {\n"
			       "  W[i, j] = A[i, j] * 2\n"
			       "  Y[i, j] = W[i, j] + j\n"
			       "}\n"
			       "schedule { ii = split(i, T) }\n";

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	return k;
}

/* The layout: params, then per strided array base 0 and its dense strides;
 * temps get no pointer; given slots are taken as they are. */
static void test_layout(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, cut_text);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	CHECK(entry_param_count(k) == 3 + 3 + 3);
	double a[21], y[21];
	void *bufs[3] = {a, (void *)0x10, y}, *args[3];
	int64_t pv[3] = {7, 3, 2}, params[9];
	memset(params, 0x55, sizeof params);
	entry_args_fill(k, bufs, pv, NULL, args, params);
	CHECK(args[0] == a && args[1] == NULL && args[2] == y);
	CHECK(params[0] == 7 && params[1] == 3 && params[2] == 2);
	/* A and Y row-major [7, 3]: base 0, strides 3, 1 */
	CHECKF(params[3] == 0 && params[4] == 3 && params[5] == 1, "A: %lld %lld %lld", (long long)params[3],
	       (long long)params[4], (long long)params[5]);
	CHECKF(params[6] == 0 && params[7] == 3 && params[8] == 1, "Y: %lld %lld %lld", (long long)params[6],
	       (long long)params[7], (long long)params[8]);
	/* given slots (a view's layout), and in place */
	int64_t slots[6] = {5, 6, 2, 1, 1, 9};
	memcpy(params, pv, sizeof pv);
	memcpy(params + 3, slots, sizeof slots);
	entry_args_fill(k, bufs, params, params + 3, args, params);
	CHECK(params[0] == 7 && params[3] == 5 && params[4] == 6 && params[8] == 9);
	int64_t other[9];
	entry_args_fill(k, NULL, pv, slots, NULL, other);
	CHECK(other[2] == 2 && other[3] == 5 && other[7] == 1 && other[8] == 9);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Run k through the selector (the model picks T); verified. */
static void selected_ok(const char *text, int want_pieces)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	char dir[] = "/tmp/ct_entryargs_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	ct_selector *s = ct_selector_new(k, dir);
	CHECKF(s != NULL, "%s", ct_ctx_last_message(ctx));
	if (s) {
		ct_run_options o;
		ct_run_options_init(&o);
		o.repeat = 2;
		ct_run_result r;
		ct_solution sol;
		ct_status st = ct_kernel_run_selected(s, &o, &r, &sol);
		CHECKF(st == CT_OK && r.verified == 1, "%s: status %d, %s", text, (int)st, ct_ctx_last_message(ctx));
		CHECKF(want_pieces < 0 || sol.npieces == want_pieces, "%d pieces", sol.npieces);
		ct_selector_free(s);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	(void)rmdir(dir);
}

static void test_selector_strided(void) { selected_ok(s3_text, 1); }

/* pieces of a cut problem take their blocks' layouts (main and tail) */
static void test_selector_strided_pieces(void) { selected_ok(cut_text, 2); }

/* Every T through the plain run, and through a callable on dense buffers. */
static void test_run_and_callable(void)
{
	for (int t = 1; t <= 2; t++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse(ctx, s3_text);
		if (!k) {
			ct_ctx_free(ctx);
			return;
		}
		CHECK(ct_kernel_set_param(k, "T", t) == CT_OK && ct_kernel_recheck(k) == CT_OK);
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		CHECKF(ct_kernel_run(k, &o, &r) == CT_OK && r.verified == 1, "T=%d: %s", t, ct_ctx_last_message(ctx));
		ct_callable *h = ct_kernel_compile(k);
		CHECKF(h != NULL, "%s", ct_ctx_last_message(ctx));
		float a[2] = {1.5f, -2.0f}, y[2] = {0, 0};
		void *args[2] = {a, y};
		CHECK(h && ct_callable_call(h, args, NULL) == CT_OK);
		CHECK(y[0] == 1.5f && y[1] == -2.0f);
		ct_callable_free(h);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* The selector never runs a plan(target=opencl) kernel's host pieces in
 * the device's place (issue 34: it ran the host C version silently). */
static void test_selector_opencl_pieces_refused(void)
{
	static const char text[] = "kernel ocltune\n"
				   "param N = 24\n"
				   "param T = 4 tune {4, 8}\n"
				   "array A : f32[N] input\n"
				   "array Y : f32[N] output\n"
				   "for (i: N) { Y[i] = A[i] * 2 }\n"
				   "schedule { ii = split(i, T) }\n"
				   "plan(target=opencl) { }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	char dir[] = "/tmp/ct_entryargs_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	ct_selector *s = k ? ct_selector_new(k, dir) : NULL;
	CHECK(s != NULL);
	if (s) {
		int64_t sizes[1] = {24};
		ct_solution sol;
		CHECKF(ct_select(s, sizes, 1, &sol) == CT_OK, "%s", ct_ctx_last_message(ctx));
		CHECK(sol.npieces == 1);
		float a[24] = {0}, y[24];
		void *bufs[2] = {a, y};
		CHECK(ct_solution_run(s, &sol, bufs) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "targets OpenCL"), "%s", ct_ctx_last_message(ctx));
		ct_selector_free(s);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	(void)rmdir(dir);
}

int main(void)
{
	RUN(test_layout);
	RUN(test_selector_strided);
	RUN(test_selector_strided_pieces);
	RUN(test_run_and_callable);
	RUN(test_selector_opencl_pieces_refused);
	return h_report();
}
