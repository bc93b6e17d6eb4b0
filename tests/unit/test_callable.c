/* test_callable.c: ct_kernel_compile + ct_callable_call on plain buffers equal the reference interpreter (issue 22, row 11). */
#include "cachet.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

typedef struct crow {
	const char *name;
	const char *text;
	int64_t rt[3]; /* values of the runtime params (declaration order), 0 ends */
} crow;

static const crow rows[] = {
	{"axpy, runtime size with a tail",
	 "kernel axpy\nparam L : runtime\narray X : f32[L] input\narray Y : f32[L] inout\n"
	 "for (i: L) {\n  Y[i] = 2.5 * X[i] + Y[i]\n}\nschedule {\n  ii = split(i, 16)\n}\n",
	 {1000, 0}},
	{"axpy, another size from the same handle",
	 "kernel axpy\nparam L : runtime\narray X : f32[L] input\narray Y : f32[L] inout\n"
	 "for (i: L) {\n  Y[i] = 2.5 * X[i] + Y[i]\n}\nschedule {\n  ii = split(i, 16)\n}\n",
	 {37, 0}},
	{"temp and column-major output",
	 "kernel rt2\nparam L : runtime\nparam C = 3\narray A : f64[L, C, L] input\n"
	 "array T : f64[L, C] temp\narray B : f64[L, C] output layout=col_major\n"
	 "for (i: L, j: C) {\n  T[i, j] = A[i, j, 0] + A[i, j, L-1]\n  B[i, j] = T[i, j] * 2\n}\n"
	 "schedule {\n  ii = split(i, 4)\n}\n",
	 {37, 0}},
	{"two runtime params, a strided array",
	 "kernel add2\nparam R : runtime\nparam S : runtime\narray A : f32[R, S] input strided\n"
	 "array B : f32[R, S] output\nfor (i: R, j: S) {\n  B[i, j] = A[i, j] + 1\n}\n",
	 {13, 29, 0}},
	{"parallel tiled matmul with a cache",
	 "kernel mm\nparam M = 64, N = 64, K = 64\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
	 "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	 "schedule {\n  ii, jj, kk = tile(i=16, j=32, k=32)\n  reorder(i, j, k, ii, kk, jj)\n}\n"
	 "plan {\n  CC = cache(C, index=k)\n  parallelize(i, j)\n}\n",
	 {0}},
	{"integers",
	 "kernel hist\nparam N = 100\narray X : i32[N] input\narray Y : i64[N] output\n"
	 "for (i: N) {\n  Y[i] = X[i] * 3 - 1\n}\n",
	 {0}},
};

/* Run row w through a callable and through the interpreter on the same data. */
static void one_row(const crow *w)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, w->text, strlen(w->text), "c.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	CHECKF(h != NULL, "%s", ct_ctx_last_message(ctx));
	int nrt = 0;
	while (nrt < 3 && w->rt[nrt])
		nrt++;
	/* the runtime values, given to the kernel only for the interpreter and the sizes */
	for (int p = 0, r = 0; k && p < ct_kernel_param_count(k); p++)
		if (ct_kernel_param_is_runtime(k, p))
			CHECK(ct_kernel_set_param(k, ct_kernel_param_name(k, p), w->rt[r++]) == CT_OK);
	int na = k ? ct_kernel_array_count(k) : 0;
	void *got[8] = {0}, *want[8] = {0}, *args[8] = {0};
	int nargs = 0;
	for (int a = 0; a < na && h; a++) {
		if (ct_kernel_array_role(k, a) == CT_TEMP)
			continue;
		int64_t n = ct_kernel_array_elements(k, a);
		size_t bytes = (size_t)n * ct_dtype_size(ct_kernel_array_dtype(k, a));
		got[a] = malloc(bytes);
		want[a] = malloc(bytes);
		ct_fill_random(got[a], ct_kernel_array_dtype(k, a), n, 7, (uint64_t)a);
		memcpy(want[a], got[a], bytes);
		args[nargs++] = got[a];
	}
	if (h) {
		CHECK(ct_callable_arg_count(h) == nargs && ct_callable_param_count(h) == nrt);
		CHECKF(ct_callable_call(h, args, nrt ? w->rt : NULL) == CT_OK, "%s", ct_ctx_last_message(ctx));
		ct_looptree *t = ct_kernel_lower(k, 0);
		CHECK(t && ct_interp_run(t, want) == CT_OK);
		ct_looptree_free(t);
		for (int a = 0; a < na; a++) {
			if (!got[a] || ct_kernel_array_role(k, a) == CT_INPUT)
				continue;
			ct_dtype ty = ct_kernel_array_dtype(k, a);
			double e = ct_max_rel_error(got[a], want[a], ty, ct_kernel_array_elements(k, a));
			CHECKF(e <= ct_dtype_tolerance(ty), "array %s: error %g", ct_kernel_array_name(k, a), e);
		}
	}
	for (int a = 0; a < na; a++) {
		free(got[a]);
		free(want[a]);
	}
	ct_callable_free(h);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void table(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		h_begin(rows[i].name);
		one_row(&rows[i]);
		h_end();
	}
}

/* Misuse: each is refused with a status and a message, nothing runs. */
static void misuse(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *text = rows[0].text;
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "c.cachet");
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	CHECK(h != NULL);
	float x[4] = {1, 2, 3, 4}, y[4] = {0};
	void *args[2] = {x, y}, *nullarg[2] = {x, NULL};
	int64_t four = 4, zero = 0;
	CHECK(ct_callable_call(h, args, NULL) == CT_ERR_USAGE);
	CHECKF(strcmp(ct_ctx_last_message(ctx), "kernel 'axpy': params is NULL but it has 1 runtime param") == 0,
	       "%s", ct_ctx_last_message(ctx));
	CHECK(ct_callable_call(h, args, &zero) == CT_ERR_USAGE);
	CHECKF(strcmp(ct_ctx_last_message(ctx), "kernel 'axpy': runtime param 'L' is 0 (it must be at least 1)") == 0,
	       "%s", ct_ctx_last_message(ctx));
	CHECK(ct_callable_call(h, nullarg, &four) == CT_ERR_USAGE);
	CHECKF(strcmp(ct_ctx_last_message(ctx), "kernel 'axpy': argument 1 (array 'Y') is NULL") == 0, "%s",
	       ct_ctx_last_message(ctx));
	CHECK(ct_callable_call(h, NULL, &four) == CT_ERR_USAGE);
	CHECK(y[0] == 0 && y[3] == 0);
	int64_t huge = INT64_MAX / 2;
	CHECK(ct_callable_call(h, args, &huge) == CT_ERR_LIMIT);
	CHECK(ct_callable_call(h, args, &four) == CT_OK && y[0] == 2.5f && y[3] == 10.0f);
	CHECK(ct_callable_call(NULL, args, &four) == CT_ERR_USAGE);
	CHECK(ct_kernel_compile(NULL) == NULL && ct_callable_arg_count(NULL) == 0);
	ct_callable_free(NULL);
	ct_callable_free(h);
	/* an OpenCL kernel is refused (host code only) */
	const char *ocl = "kernel o\nparam N = 64\narray X : f32[N] input\narray Y : f32[N] output\n"
			  "for (i: N) {\n  Y[i] = X[i]\n}\nschedule {\n  ii = split(i, 16)\n}\n"
			  "plan(target=opencl) {\n  parallelize(i)\n}\n";
	ct_kernel *ko = ct_kernel_parse(ctx, ocl, strlen(ocl), "o.cachet");
	CHECKF(ko != NULL, "%s", ct_ctx_last_message(ctx));
	CHECK(ko && ct_kernel_compile(ko) == NULL && ct_ctx_last_status(ctx) == CT_ERR_UNSUPPORTED);
	ct_kernel_free(ko);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ct_kernel_array_order and ct_kernel_array_is_strided: what a binding reads to check a buffer's layout. */
static void layouts(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *text = "kernel lay\nparam N = 4\narray A : f32[N, N, N] input layout=(2, 0, 1)\n"
			   "array B : f32[N, N] input layout=col_major strided\narray C : f32[N, N] output\n"
			   "for (i: N, j: N) {\n  C[i, j] = A[i, j, 0] + B[i, j]\n}\n";
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "lay.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	int o[CT_TENSOR_MAX_RANK] = {0};
	CHECK(ct_kernel_array_order(k, 0, o) == 3 && o[0] == 2 && o[1] == 0 && o[2] == 1);
	CHECK(ct_kernel_array_order(k, 1, o) == 2 && o[0] == 1 && o[1] == 0);
	CHECK(ct_kernel_array_order(k, 2, o) == 2 && o[0] == 0 && o[1] == 1);
	CHECK(ct_kernel_array_order(k, 2, NULL) == 2);
	CHECK(ct_kernel_array_is_strided(k, 1) == 1 && ct_kernel_array_is_strided(k, 0) == 0);
	CHECK(ct_kernel_array_order(k, 3, o) == 0 && ct_kernel_array_order(NULL, 0, o) == 0);
	CHECK(ct_kernel_array_is_strided(k, -1) == 0 && ct_kernel_array_is_strided(NULL, 0) == 0);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A buffer the kernel writes that overlaps another argument is refused before anything runs
 * (the generated pointers are restrict: the result would be wrong); inputs may overlap. */
static void overlaps(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *text = "kernel mm\nparam N : runtime\narray A : f64[N, N] input\narray B : f64[N, N] input\n"
			   "array C : f64[N, N] inout\nfor (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n";
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "mm.cachet");
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	CHECKF(h != NULL, "%s", ct_ctx_last_message(ctx));
	double big[8 * 4], b[4 * 4], c[4 * 4];
	for (int i = 0; i < 32; i++)
		big[i] = 1;
	for (int i = 0; i < 16; i++)
		b[i] = 1, c[i] = 0;
	int64_t n = 4;
	void *same[3] = {big, big, big}, *shifted[3] = {big, b, big + 8}, *apart[3] = {big, b, big + 16},
	     *inputs[3] = {b, b, c}, *last[3] = {big, b, big + 15}, *before[3] = {big + 16, b, big};
	CHECK(ct_callable_call(h, same, &n) == CT_ERR_USAGE);
	CHECKF(strcmp(ct_ctx_last_message(ctx), "kernel 'mm': array 'C' (written) overlaps array 'A' in memory") == 0,
	       "%s", ct_ctx_last_message(ctx));
	CHECK(ct_callable_call(h, shifted, &n) == CT_ERR_USAGE);
	CHECK(ct_callable_call(h, last, &n) == CT_ERR_USAGE); /* one element in common */
	CHECK(big[8] == 1 && big[15] == 1 && big[31] == 1);   /* nothing ran */
	CHECK(ct_callable_call(h, apart, &n) == CT_OK && big[16] == 5 && big[31] == 5 && big[15] == 1);
	CHECK(ct_callable_call(h, before, &n) == CT_OK);       /* adjacent, below the input */
	CHECK(ct_callable_call(h, inputs, &n) == CT_OK && c[0] == 4 && c[15] == 4);
	ct_callable_free(h);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	table();
	RUN(misuse);
	RUN(layouts);
	RUN(overlaps);
	return h_report();
}
