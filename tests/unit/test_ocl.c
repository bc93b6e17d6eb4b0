/* test_ocl.c: the OpenCL target on PoCL: generated kernels equal the interpreter; plans it cannot honour, device limits and build failures are clear errors. */
#include "cachet.h"
#include "harness.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * PoCL compiles slowly (seconds per program on a busy machine), so the
 * kernels are small and each run case combines several features. Every
 * run is verified against the unscheduled interpreter by ct_kernel_run.
 */

#define MATMUL_HEAD                                                                                  \
	"kernel mm\n"                                                                                \
	"param M = %d, N = %d, K = %d\n"                                                             \
	"array A : f32[M, K] input\n"                                                                \
	"array B : f32[K, N] input\n"                                                                \
	"array C : f32[M, N] inout\n"                                                                \
	"for (i: M, j: N, k: K) {\n"                                                                 \
	"  C[i, j] += A[i, k] * B[k, j]\n"                                                           \
	"}\n"

typedef struct run_case {
	const char *name;
	int m, n, k;
	const char *rest; /* schedule and plan */
} run_case;

static const run_case runs[] = {
	/* no parallelize: one work-item runs the whole nest */
	{"serial", 5, 6, 7, "plan(target=opencl) {\n  AA = cache(A, level=1)\n}\n"},
	/* unsplit indices: one work-item per (i, j), the runtime's group size */
	{"global_ids", 9, 7, 5, "plan(target=opencl) {\n  parallelize(i, j)\n}\n"},
	/* work-groups of 4 x 4, non-dividing M and K; a private cache per
	 * work-item that accumulates and writes back (zero_fill / reduce) */
	{"private_reduce", 10, 8, 7,
	 "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	 "plan(target=opencl) {\n  CC = cache(C, index=kk, location=private)\n  parallelize(i, j)\n}\n"},
	/* __local caches filled by the group, blocked and striped, tails in i
	 * and k (PoCL 3.1 ran the tail's guarded code for every work-item
	 * before each barrier loop ended with a barrier: docs/OPENCL.md) */
	{"local_blocked_striped", 11, 8, 10,
	 "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	 "plan(target=opencl) {\n  AA = cache(A, index=ii, location=local, strategy=blocked)\n"
	 "  BB = cache(B, index=ii, location=local, strategy=striped)\n  parallelize(i, j)\n}\n"},
	/* double buffering: the next block into private memory, moved in between barriers */
	{"local_double_buffer", 8, 8, 12,
	 "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	 "plan(target=opencl) {\n  AA = cache(A, index=ii, location=local, double_buffer=true)\n"
	 "  parallelize(i, j)\n}\n"},
	/* a __local cache of C drained back to global memory (reduce), after a barrier */
	{"local_reduce", 8, 12, 6,
	 "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=3)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	 "plan(target=opencl) {\n  CC = cache(C, index=ii, location=local, strategy=striped)\n"
	 "  parallelize(i, j)\n}\n"},
};

/* Local caches with tails (tiles of 4): each combination of non-dividing
 * M, N, K, under both strategies and double buffering. Each tail version
 * of the barrier-laden body is a separate code path on the device. */
#define LOCAL_SCHED "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
#define LOCAL_BS                                                                                     \
	LOCAL_SCHED "plan(target=opencl) {\n  AA = cache(A, index=ii, location=local, strategy=blocked)\n" \
	            "  BB = cache(B, index=ii, location=local, strategy=striped)\n  parallelize(i, j)\n}\n"
#define LOCAL_SB                                                                                     \
	LOCAL_SCHED "plan(target=opencl) {\n  AA = cache(A, index=ii, location=local, strategy=striped)\n" \
	            "  BB = cache(B, index=ii, location=local, strategy=blocked)\n  parallelize(i, j)\n}\n"
#define LOCAL_DB                                                                                     \
	LOCAL_SCHED "plan(target=opencl) {\n  AA = cache(A, index=ii, location=local, double_buffer=true)\n" \
	            "  BB = cache(B, index=ii, location=local, strategy=striped, double_buffer=true)\n"      \
	            "  parallelize(i, j)\n}\n"

static const run_case tails[] = {
	{"tails_none", 8, 8, 8, LOCAL_BS},
	{"tails_i", 11, 8, 8, LOCAL_BS},
	{"tails_j", 8, 11, 8, LOCAL_BS},
	{"tails_k", 8, 8, 10, LOCAL_BS},
	{"tails_ij", 11, 11, 8, LOCAL_BS},
	{"tails_ik", 11, 8, 10, LOCAL_BS},
	{"tails_jk", 8, 11, 10, LOCAL_BS},
	{"tails_ijk", 11, 10, 10, LOCAL_BS},
	{"tails_ik_striped_blocked", 11, 8, 10, LOCAL_SB},
	{"tails_ijk_striped_blocked", 9, 11, 7, LOCAL_SB},
	{"tails_ik_double_buffer", 11, 8, 10, LOCAL_DB},
	{"tails_ijk_double_buffer", 11, 10, 14, LOCAL_DB},
};

static char *kernel_text(const run_case *c)
{
	size_t cap = strlen(MATMUL_HEAD) + strlen(c->rest) + 64;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	int n = snprintf(s, cap, MATMUL_HEAD, c->m, c->n, c->k);
	snprintf(s + n, cap - (size_t)n, "%s", c->rest);
	return s;
}

/* Parse, run on OpenCL (explicit vector types of vb bytes when vb > 0) and
 * verify; the status, and the message in msg. */
static ct_status run_text_vb(const char *name, const char *text, int vb, char *msg, size_t cap, ct_run_result *r)
{
	ct_ctx *ctx = ct_ctx_new();
	if (vb > 0)
		ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, vb);
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), name);
	ct_status st = k ? CT_OK : ct_ctx_last_status(ctx);
	if (k) {
		ct_run_options o;
		ct_run_options_init(&o);
		st = ct_kernel_run(k, &o, r);
	}
	if (st && ct_ctx_last_line(ctx) > 0)
		snprintf(msg, cap, "%s:%d:%d: error: %s", ct_ctx_last_file(ctx), ct_ctx_last_line(ctx),
		         ct_ctx_last_col(ctx), ct_ctx_last_message(ctx));
	else
		snprintf(msg, cap, "%s", st ? ct_ctx_last_message(ctx) : "");
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return st;
}

static ct_status run_text(const char *name, const char *text, char *msg, size_t cap, ct_run_result *r)
{
	return run_text_vb(name, text, 0, msg, cap, r);
}

/* unroll and vectorize on OpenCL plans, with tails (verified against the
 * interpreter): the default form (a scalar loop, left to the OpenCL
 * compiler's vectorizer) and explicit vector types (vb bytes: N lanes from the trip
 * count, a scalar loop for the rest). */
typedef struct verb_case {
	const char *name;
	int vb;           /* CT_OPT_VECTOR_BYTES; 0: the default form */
	const char *want; /* text the OpenCL source must contain */
	const char *text;
} verb_case;

#define VERB_MM(M, N, K, TJ)                                                                         \
	"kernel mm\nparam M = " #M ", N = " #N ", K = " #K "\narray A : f32[M, K] input\n"              \
	"array B : f32[K, N] input\narray C : f32[M, N] inout\nfor (i: M, k: K, j: N) {\n"              \
	"  C[i, j] += A[i, k] * B[k, j]\n}\nschedule {\n  ii, kk, jj = tile(i=4, k=4, j=" #TJ ")\n"       \
	"  reorder(i, j, k, ii, kk, jj)\n}\nplan(target=opencl) {\n  unroll(kk)\n  vectorize(jj)\n"   \
	"  parallelize(i)\n}\n"
#define VERB_EW                                                                                      \
	"kernel ew\nparam N = 37\narray X : f32[N] input\narray Y : f32[N] input\narray Z : f32[N] inout\n" \
	"for (i: N) {\n  Z[i] = max(Z[i], X[i] * 2.5 - Y[i] / 3) + sqrt(abs(Y[i])) - fma(X[i], Y[i], 1)\n}\n" \
	"schedule {\n  ii = split(i, 16)\n}\nplan(target=opencl) {\n  vectorize(ii)\n}\n"
#define VERB_LET                                                                                     \
	"kernel lt\nparam N = 21\narray X : f32[N] input\narray Z : f32[N] output\nfor (i: N) {\n"     \
	"  let t = X[i] * 2\n  Z[i] = select(t > 1, t, 0)\n}\nschedule {\n  ii = split(i, 8)\n}\n"   \
	"plan(target=opencl) {\n  unroll(ii)\n}\n"

static const verb_case verbs[] = {
	/* tails in i, k (unrolled: 4 then 2 copies) and j (8 lanes, then 5) */
	{"mm_default", 0, "a scalar loop, vectorized by the OpenCL compiler", VERB_MM(11, 13, 10, 8)},
	{"mm_float8", 64, "vload8(0, &B[", VERB_MM(11, 13, 10, 8)},
	/* 16 bytes: float4, the j tail of 5 as one float4 and one scalar */
	{"mm_float4", 16, "vstore4(vload4(0, &C[", VERB_MM(9, 21, 6, 16)},
	/* calls, division, broadcast constants; 37 = 2 x 16 + 5 */
	{"elementwise_float16", 64, "fmax(", VERB_EW},
	{"elementwise_default", 0, "a scalar loop, vectorized by the OpenCL compiler", VERB_EW},
	/* unroll of a loop with a let and a select; tail of 5 */
	{"unroll_let_select", 0, "unrolled: ii in 0 .. 8", VERB_LET},
};

static void test_verbs(void)
{
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		h_begin(verbs[i].name);
		char msg[4096];
		ct_run_result r;
		memset(&r, 0, sizeof r);
		ct_status st = run_text_vb(verbs[i].name, verbs[i].text, verbs[i].vb, msg, sizeof msg, &r);
		CHECKF(st == CT_OK && r.verified == 1, "%s\n%s", msg, verbs[i].text);
		ct_ctx *ctx = ct_ctx_new();
		if (verbs[i].vb > 0)
			ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, verbs[i].vb);
		ct_kernel *k = ct_kernel_parse(ctx, verbs[i].text, strlen(verbs[i].text), verbs[i].name);
		size_t len = 0;
		char *src = k ? ct_kernel_emit(k, "opencl", &len) : NULL;
		CHECKF(src && strstr(src, verbs[i].want), "the OpenCL source lacks '%s': %s", verbs[i].want,
		       src ? src : ct_ctx_last_message(ctx));
		free(src);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		h_end();
	}
}

static void test_device(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char desc[512];
	ct_status st = ct_opencl_device(ctx, desc, sizeof desc);
	CHECKF(st == CT_OK, "no OpenCL device (install pocl-opencl-icd: make deps): %s", ct_ctx_last_message(ctx));
	CHECKF(strstr(desc, "|") != NULL, "description '%s'", desc);
	ct_ctx_free(ctx);
}

/* Run each case on the device; verified against the interpreter, and the
 * runtime's guard bytes after every array unchanged. */
static void run_table(const run_case *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h_begin(v[i].name);
		char *text = kernel_text(&v[i]);
		char msg[4096];
		ct_run_result r;
		memset(&r, 0, sizeof r);
		ct_status st = text ? run_text(v[i].name, text, msg, sizeof msg, &r) : CT_ERR_NOMEM;
		CHECKF(st == CT_OK, "%s\n%s", msg, text ? text : "");
		CHECK(st != CT_OK || r.verified == 1);
		CHECK(st != CT_OK || strcmp(r.engine, "opencl") == 0);
		free(text);
		h_end();
	}
}

static void test_runs(void)
{
	run_table(runs, sizeof runs / sizeof runs[0]);
	run_table(tails, sizeof tails / sizeof tails[0]);
}

typedef struct err_case {
	const char *name;
	int m, n, k;
	const char *rest;
	ct_status want;
	const char *text; /* part of the message */
} err_case;

static const err_case errs[] = {
	{"location_global", 8, 8, 8,
	 "schedule {\n  ii, jj = tile(i=4, j=4)\n  reorder(i, j, k, ii, jj)\n}\n"
	 "plan(target=opencl) {\n  AA = cache(A, index=ii, location=global)\n  parallelize(i, j)\n}\n",
	 CT_ERR_INPUT, "location=global cannot be honoured"},
	{"local_inside_items", 8, 8, 8,
	 "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	 "plan(target=opencl) {\n  AA = cache(A, index=kk, location=local)\n  parallelize(i, j)\n}\n",
	 CT_ERR_INPUT, "must sit outside the work-item loop over 'ii'"},
	{"private_writeback_outside", 8, 8, 8,
	 "schedule {\n  ii, jj = tile(i=4, j=4)\n  reorder(i, j, k, ii, jj)\n}\n"
	 "plan(target=opencl) {\n  CC = cache(C, index=k, location=private)\n  parallelize(i, j)\n}\n",
	 CT_ERR_INPUT, "writes back to 'C' from outside the work-item loops"},
	{"reduction_index", 8, 8, 8, "plan(target=opencl) {\n  parallelize(k)\n}\n", CT_ERR_INPUT,
	 "iterations of 'k' are not independent"},
	{"split_index_named", 8, 8, 8,
	 "schedule {\n  ii = split(i, 4)\n}\nplan(target=opencl) {\n  parallelize(ii)\n}\n", CT_ERR_INPUT,
	 "name the loop's own index ('i')"},
	{"strategy_on_private", 8, 8, 8,
	 "schedule {\n  ii, jj = tile(i=4, j=4)\n  reorder(i, j, k, ii, jj)\n}\n"
	 "plan(target=opencl) {\n  CC = cache(C, index=jj, strategy=striped)\n  parallelize(i, j)\n}\n",
	 CT_ERR_INPUT, "strategy= applies to location=local"},
	{"vectorize_work_items", 8, 8, 8,
	 "schedule {\n  ii, jj = tile(i=4, j=4)\n  reorder(i, j, k, ii, jj)\n}\n"
	 "plan(target=opencl) {\n  vectorize(jj)\n  parallelize(i, j)\n}\n",
	 CT_ERR_INPUT, "vectorize(jj): 'jj' is parallelized on plan(target=opencl)"},
	{"unroll_too_many", 300, 4, 2, "plan(target=opencl) {\n  unroll(i)\n}\n", CT_ERR_INPUT,
	 "unroll(i): the loop over 'i' has 300 iterations"},
	/* 128 x 128 = 16384 work-items per group: above PoCL's 4096 (and any GPU's) */
	{"device_limit", 256, 256, 1,
	 "schedule {\n  ii, jj = tile(i=128, j=128)\n  reorder(i, j, k, ii, jj)\n}\n"
	 "plan(target=opencl) {\n  parallelize(i, j)\n}\n",
	 CT_ERR_LIMIT, "exceeds the device's limit"},
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		h_begin(errs[i].name);
		run_case c = {errs[i].name, errs[i].m, errs[i].n, errs[i].k, errs[i].rest};
		char *text = kernel_text(&c);
		char msg[4096];
		ct_run_result r;
		ct_status st = text ? run_text(errs[i].name, text, msg, sizeof msg, &r) : CT_ERR_NOMEM;
		CHECKF(st == errs[i].want, "status %d, want %d: %s", (int)st, (int)errs[i].want, msg);
		CHECKF(strstr(msg, errs[i].text) != NULL, "message '%s' lacks '%s'", msg, errs[i].text);
		if (errs[i].want == CT_ERR_INPUT)
			CHECKF(strstr(msg, errs[i].name) != NULL && strstr(msg, ": error: ") != NULL,
			       "message '%s' is not FILE:LINE:COL: error: ...", msg);
		free(text);
		h_end();
	}
}

/* A program that does not compile: CT_ERR_COMPILE with the device's log. */
static void test_build_failure(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *bad = "__kernel void f(__global float *x) { x[0] = undeclared_name; }\n";
	ct_status st = ct_opencl_build(ctx, bad, NULL);
	const char *m = ct_ctx_last_message(ctx);
	CHECKF(st == CT_ERR_COMPILE, "status %d: %s", (int)st, m);
	CHECKF(strstr(m, "build log") && strstr(m, "undeclared_name"), "message '%s'", m);
	const char *good = "__kernel void f(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n";
	CHECKF(ct_opencl_build(ctx, good, NULL) == CT_OK, "%s", ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
}

/* The OpenCL source: a __kernel with __local buffers and barriers; a host
 * plan cannot be emitted for OpenCL. */
static void test_emit(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char *text = kernel_text(&runs[3]);
	ct_kernel *k = text ? ct_kernel_parse(ctx, text, strlen(text), "emit") : NULL;
	CHECK(k != NULL);
	size_t len = 0;
	char *src = k ? ct_kernel_emit(k, "opencl", &len) : NULL;
	CHECKF(src != NULL, "%s", ct_ctx_last_message(ctx));
	CHECK(!src || (strstr(src, "__kernel void cachet_mm(") && strstr(src, "__local float") &&
	               strstr(src, "barrier(CLK_LOCAL_MEM_FENCE);") && strstr(src, "get_group_id(1)") &&
	               strstr(src, "get_local_id(0)") && strlen(src) == len));
	free(src);
	ct_kernel_free(k);
	const char *host = "kernel h\nparam N = 4\narray A : f32[N] inout\nfor (i: N) {\n  A[i] = A[i] * 2\n}\n"
	                   "plan(target=host) {\n  parallelize(i)\n}\n";
	k = ct_kernel_parse(ctx, host, strlen(host), "host");
	CHECK(k != NULL);
	src = k ? ct_kernel_emit(k, "opencl", &len) : NULL;
	CHECK(src == NULL && strstr(ct_ctx_last_message(ctx), "plan(target=opencl)"));
	free(src);
	ct_kernel_free(k);
	free(text);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_device);
	RUN(test_emit);
	RUN(test_build_failure);
	test_errors();
	test_runs();
	test_verbs();
	return h_report();
}
