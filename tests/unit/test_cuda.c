/* test_cuda.c: the CUDA runtime on a GPU: runs verified against the interpreter, kernel time from events, guard bytes, device limits, kernel faults, memory and disk cache hits, the probe's measured rates, the tuner; every case skipped, with the reason, where there is no CUDA device. */
#include "cachet.h"
#include "harness.h"

#include "engine/engine.h"
#include "gen/ocl.h"
#include "ir/ir.h"
#include "target/cuda.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Two kinds of cases. The runtime's own (run_cuda_source) take a
 * hand-written CUDA kernel, so they test the runtime whatever the
 * generator does: a kernel `scale` (Y = 3 X + Y over N = 37 floats) with
 * arrays X, Y in declaration order, as gen_cuda's kernels take them. The
 * generated ones parse plan(target=cuda) kernels and go through
 * ct_kernel_run (gen_cuda + run_cuda); where this build's parser or
 * generator does not take them yet they are skipped with the reason.
 * Without a device (no libcuda.so.1, or the driver sees none) every case
 * is skipped: "skipped: no CUDA device (reason)".
 */

static char no_device[512];

/* Skip the current case (counted as skipped, the reason printed) and return. */
#define SKIP(...)                                                                                                      \
	do {                                                                                                           \
		char why_[1024];                                                                                       \
		snprintf(why_, sizeof why_, __VA_ARGS__);                                                              \
		h_skip_case(why_);                                                                                     \
		return;                                                                                                \
	} while (0)

static const char scale_src[] = "kernel scale\n"
                                "param N = 37\n"
                                "array X : f32[N] input\n"
                                "array Y : f32[N] inout\n"
                                "for (i: N) {\n"
                                "  Y[i] = 3 * X[i] + Y[i]\n"
                                "}\n";

#include "cuda_kernels.h"

static const char slow_cu[] = "extern \"C\" __global__ void scale_slow(const float *X, float *Y)\n"
                              "{\n"
                              "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                              "  if (i >= 37) return;\n"
                              "  float v = Y[i];\n"
                              "  for (int r = 0; r < (1 << 20); r++) v = v * 1.0000001f;\n"
                              "  Y[i] = 3.0f * X[i] + Y[i] + (v == 12345.0f ? 1.0f : 0.0f);\n"
                              "}\n";

/* A fresh cache folder for one case. */
static void fresh_dir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "%s/cachet-cuda-%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(), name);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot empty %s\n", dir);
}

static ct_ctx *ctx_on(const char *dir)
{
	ct_ctx *ctx = ct_ctx_new();
	if (ctx)
		ct_cache_set_dir(ctx, dir);
	return ctx;
}

/* scale (no plan) switched to TARGET_CUDA: run_cuda_source looks at nothing else. */
static ct_kernel *scale_kernel(ct_ctx *ctx)
{
	ct_kernel *k = ct_kernel_parse(ctx, scale_src, sizeof scale_src - 1, "scale.cachet");
	if (k) {
		k->has_plan = true;
		k->target = TARGET_CUDA;
	} else {
		fprintf(stderr, "parse: %s\n", ct_ctx_last_message(ctx));
	}
	return k;
}

/* The launch of the hand-written kernels: blocks of `block` threads. */
static ocl_launch launch(const char *fn, size_t block)
{
	ocl_launch L;
	memset(&L, 0, sizeof L);
	L.ndims = 1;
	L.sizes_known = true;
	L.explicit_local = true;
	L.local[0] = block;
	L.global[0] = (37 + block - 1) / block * block;
	L.global[1] = L.global[2] = L.local[1] = L.local[2] = 1;
	snprintf(L.dim_name[0], sizeof L.dim_name[0], "i/ii");
	snprintf(L.fn, sizeof L.fn, "%s", fn);
	return L;
}

/* Run src on ctx's scale kernel: the status; *r filled. */
static ct_status run_src(ct_ctx *ctx, const char *src, const ocl_launch *L, int repeat, ct_run_result *r)
{
	ct_kernel *k = scale_kernel(ctx);
	if (!k)
		return CT_ERR_INPUT;
	ct_run_options o;
	ct_run_options_init(&o);
	o.repeat = repeat;
	memset(r, 0, sizeof *r);
	r->engine = r->code_cache = r->mismatch_array = "";
	r->verified = -1;
	ct_status st = run_cuda_source(k, &o, src, strlen(src), L, r);
	/* the mismatching array's name lives in the kernel: kept past its free */
	static char mismatch[64];
	snprintf(mismatch, sizeof mismatch, "%s", r->mismatch_array ? r->mismatch_array : "");
	r->mismatch_array = mismatch;
	ct_kernel_free(k);
	return st;
}

/* ------------------------------------------------------------ the runtime */

static void test_run_and_caches(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	char dir[4096];
	fresh_dir(dir, sizeof dir, "caches");
	ct_ctx *ctx = ctx_on(dir);
	ocl_launch L = launch("scale_good", 8);
	ct_run_result r;
	ct_status st = run_src(ctx, good_cu, &L, 3, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	CHECK(r.verified == 1);
	CHECKF(strcmp(r.engine, "cuda") == 0, "%s", r.engine);
	CHECKF(strcmp(r.code_cache, "compiled") == 0, "%s", r.code_cache);
	CHECK(r.seconds > 0 && r.seconds < 0.5);
	/* again in the ctx: the loaded module */
	st = run_src(ctx, good_cu, &L, 1, &r);
	CHECK(st == CT_OK && r.verified == 1);
	CHECKF(strcmp(r.code_cache, "memory") == 0, "%s", r.code_cache);
	ct_ctx_free(ctx);
	/* another ctx: the cubin from the code cache's folder */
	ctx = ctx_on(dir);
	st = run_src(ctx, good_cu, &L, 1, &r);
	CHECKF(st == CT_OK && r.verified == 1, "%s", ct_ctx_last_message(ctx));
	CHECKF(strcmp(r.code_cache, "disk") == 0, "%s", r.code_cache);
	/* no explicit block: the runtime picks one (37 threads, one block) */
	L.explicit_local = false;
	L.global[0] = 37;
	st = run_src(ctx, good_cu, &L, 1, &r);
	CHECKF(st == CT_OK && r.verified == 1, "%s", ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
	fresh_dir(dir, sizeof dir, "caches");
}

/* A runtime param is passed as a long long after the arrays. */
static void test_runtime_param(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L = launch("scale_n", 128);
	L.global[0] = 100000 + 128 - 100000 % 128;
	ct_run_result r;
	CHECKF(run_rt(ctx, 100000, &L, &r) == CT_OK && r.verified == 1, "%s", ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
}

/* r.seconds is the kernel's time from events, not the transfers': a
 * kernel of ~2^20 dependent multiplies per thread takes milliseconds; the
 * same with nothing to do takes microseconds. */
static void test_event_timing(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L = launch("scale_slow", 32);
	ct_run_result r;
	double t0 = ct_now();
	ct_status st = run_src(ctx, slow_cu, &L, 3, &r);
	double wall = ct_now() - t0;
	CHECKF(st == CT_OK && r.verified == 1, "%s", ct_ctx_last_message(ctx));
	CHECKF(r.seconds > 1e-4 && r.seconds < wall, "kernel %g s, wall %g s", r.seconds, wall);
	double slow = r.seconds;
	L = launch("scale_good", 32);
	st = run_src(ctx, good_cu, &L, 3, &r);
	CHECK(st == CT_OK);
	CHECKF(r.seconds > 0 && r.seconds < slow / 10, "fast %g s, slow %g s", r.seconds, slow);
	ct_ctx_free(ctx);
}

static void test_wrong_result(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L = launch("scale_wrong", 8);
	ct_run_result r;
	CHECK(run_src(ctx, wrong_cu, &L, 1, &r) == CT_ERR_VERIFY);
	CHECK(r.verified == 0 && strcmp(r.mismatch_array, "Y") == 0);
	ct_ctx_free(ctx);
}

static void test_guard(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L = launch("scale_past", 8);
	ct_run_result r;
	CHECK(run_src(ctx, past_cu, &L, 1, &r) == CT_ERR_RUNTIME);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'scale_past' wrote past the end of array 'Y'") != NULL, "%s",
	       ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
}

static void test_limits(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L = launch("scale_good", 2048); /* over every GPU's 1024 threads per block */
	ct_run_result r;
	CHECK(run_src(ctx, good_cu, &L, 1, &r) == CT_ERR_LIMIT);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'scale_good'") != NULL, "%s", ct_ctx_last_message(ctx));
	L = launch("scale_good", 8);
	L.local_bytes = (int64_t)1 << 20; /* caches no block can hold */
	CHECK(run_src(ctx, good_cu, &L, 1, &r) == CT_ERR_LIMIT);
	CHECKF(strstr(ct_ctx_last_message(ctx), "shared memory") != NULL, "%s", ct_ctx_last_message(ctx));
	/* the same ctx still runs */
	L.local_bytes = 0;
	CHECK(run_src(ctx, good_cu, &L, 1, &r) == CT_OK && r.verified == 1);
	ct_ctx_free(ctx);
}

/* A kernel that faults is CT_ERR_RUNTIME naming it; the ctx releases the
 * device (its primary context is destroyed) and opens it afresh. Whether
 * the driver lets the process use the GPU again after an illegal address
 * is the driver's: the next run is either right or a clear
 * CT_ERR_RUNTIME / CT_ERR_UNSUPPORTED, never a crash; the line printed
 * says which. */
static void test_fault(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L = launch("scale_fault", 8);
	ct_run_result r;
	CHECK(run_src(ctx, fault_cu, &L, 1, &r) == CT_ERR_RUNTIME);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'scale_fault'") != NULL, "%s", ct_ctx_last_message(ctx));
	L = launch("scale_good", 8);
	ct_status st = run_src(ctx, good_cu, &L, 1, &r);
	CHECKF((st == CT_OK && r.verified == 1) || st == CT_ERR_RUNTIME || st == CT_ERR_UNSUPPORTED, "after a fault: %s",
	       ct_ctx_last_message(ctx));
	printf("after a fault: %s\n", st == CT_OK ? "the next run was right (the device was opened afresh)"
	                                           : ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
}

/* The compile error of a hand-written kernel: CT_ERR_COMPILE with the log. */
static void test_compile_error(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	static const char bad[] = "extern \"C\" __global__ void scale_bad(const float *X, float *Y) { Y[0] = nope; }\n";
	ocl_launch L = launch("scale_bad", 8);
	ct_run_result r;
	CHECK(run_src(ctx, bad, &L, 1, &r) == CT_ERR_COMPILE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "nope") != NULL, "%s", ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ the probe */

static void test_probe(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, CT_PROBE_CUDA | CT_PROBE_MEASURE_BANDWIDTH | CT_PROBE_MEASURE_FLOPS, &p) == CT_OK);
	CHECK(p.cuda_probed == 1 && p.ncuda >= 1);
	if (p.ncuda >= 1) {
		const ct_cuda_devinfo *c = &p.cuda[0];
		CHECK(c->name[0] && c->sms > 0 && c->cc_major >= 3 && c->shared_block >= 16384 && c->l2 > 0);
		CHECK(c->regs_block > 0 && c->global_mem > 0 && strncmp(c->arch, "sm_", 3) == 0);
		CHECKF(c->copy_gbs > 50, "copy %g GB/s (%s)", c->copy_gbs, c->note);
		CHECKF(c->gflops_f32 > 500, "fp32 %g GFLOP/s (%s)", c->gflops_f32, c->note);
		printf("probe: %s %s, %d SMs, copy %.0f GB/s, fp32 %.0f GFLOP/s\n", c->name, c->arch, c->sms, c->copy_gbs,
		       c->gflops_f32);
	}
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ generated kernels (gen_cuda) */

typedef struct gen_case {
	const char *name;
	const char *src;
} gen_case;

#define MM_HEAD(m, n, k)                                                                                               \
	"kernel mm\nparam M = " #m ", N = " #n ", K = " #k "\narray A : f32[M, K] input\narray B : f32[K, N] input\n"  \
	"array C : f32[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"

static const gen_case gens[] = {
	{"serial", MM_HEAD(5, 6, 7) "plan(target=cuda) {\n  AA = cache(A, level=1)\n}\n"},
	{"global_ids", MM_HEAD(9, 7, 5) "plan(target=cuda) {\n  parallelize(i, j)\n}\n"},
	{"private_reduce", MM_HEAD(10, 8, 7) "schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	                   "plan(target=cuda) {\n  CC = cache(C, index=kk, location=private)\n  parallelize(i, j)\n}\n"},
	{"shared_blocked_striped",
	 MM_HEAD(70, 64, 50) "schedule {\n  ii, jj, kk = tile(i=16, j=16, k=8)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	                     "plan(target=cuda) {\n  AA = cache(A, index=ii, location=shared, strategy=blocked)\n"
	                     "  BB = cache(B, index=ii, location=shared, strategy=striped)\n  parallelize(i, j)\n}\n"},
	{"shared_double_buffer",
	 MM_HEAD(64, 64, 48) "schedule {\n  ii, jj, kk = tile(i=16, j=16, k=8)\n  reorder(i, j, k, ii, jj, kk)\n}\n"
	                     "plan(target=cuda) {\n  AA = cache(A, index=ii, location=shared, double_buffer=true)\n"
	                     "  parallelize(i, j)\n}\n"},
	{"f64", "kernel mm\nparam M = 33, N = 17, K = 9\narray A : f64[M, K] input\narray B : f64[K, N] input\n"
	        "array C : f64[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	        "schedule {\n  ii, jj = tile(i=8, j=8)\n}\nplan(target=cuda) {\n  parallelize(i, j)\n}\n"},
};

static void test_generated(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	ct_ctx *ctx = ct_ctx_new();
	int ran = 0;
	for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
		ct_kernel *k = ct_kernel_parse(ctx, gens[i].src, strlen(gens[i].src), "gen.cachet");
		if (!k) {
			char m[512];
			snprintf(m, sizeof m, "%s", ct_ctx_last_message(ctx));
			if (strstr(m, "target") && strstr(m, "cuda")) {
				ct_ctx_free(ctx);
				SKIP("this build does not take plan(target=cuda) yet (%s)", m);
			}
			CHECKF(false, "%s: parse: %s", gens[i].name, m);
			continue;
		}
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		ct_status st = ct_kernel_run(k, &o, &r);
		if (st == CT_ERR_UNSUPPORTED && strstr(ct_ctx_last_message(ctx), "not built yet")) {
			ct_kernel_free(k);
			ct_ctx_free(ctx);
			SKIP("gen_cuda is not built yet");
		}
		CHECKF(st == CT_OK && r.verified == 1 && strcmp(r.engine, "cuda") == 0, "%s: %s", gens[i].name,
		       ct_ctx_last_message(ctx));
		ran++;
		ct_kernel_free(k);
	}
	CHECK(ran == (int)(sizeof gens / sizeof gens[0]));
	ct_ctx_free(ctx);
}

/* The tuner measures a CUDA kernel on the GPU (through ct_kernel_run) and
 * the selector runs the winner there. */
static void test_tune(void)
{
	if (no_device[0])
		SKIP("no CUDA device (%s)", no_device);
	static const char src[] = "kernel scale\nparam N = 4096\nparam T = 64 tune {32, 64, 128}\n"
	                          "array X : f32[N] input\narray Y : f32[N] inout\n"
	                          "for (i: N) {\n  Y[i] = 3 * X[i] + Y[i]\n}\n"
	                          "schedule {\n  ii = split(i, T)\n}\nplan(target=cuda) {\n  parallelize(i)\n}\n";
	char dir[4096];
	fresh_dir(dir, sizeof dir, "tune");
	ct_ctx *ctx = ctx_on(dir);
	ct_kernel *k = ct_kernel_parse(ctx, src, sizeof src - 1, "tune.cachet");
	if (!k) {
		char m[512];
		snprintf(m, sizeof m, "%s", ct_ctx_last_message(ctx));
		ct_ctx_free(ctx);
		SKIP("this build does not take plan(target=cuda) yet (%s)", m);
	}
	ct_tune_options to;
	ct_tune_options_init(&to);
	to.store_dir = dir;
	to.budget = 20;
	ct_tune_result tr;
	ct_status st = ct_tune(k, &to, &tr);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		if (tr.best < 0 && strstr(ct_ctx_last_message(ctx), "not built yet")) {
			ct_tune_result_free(&tr);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
			SKIP("gen_cuda is not built yet");
		}
		CHECKF(tr.best >= 0 && tr.candidates[tr.best].seconds > 0, "best %d", tr.best);
		ct_tune_result_free(&tr);
	}
	ct_selector *s = ct_selector_new(k, dir);
	CHECK(s != NULL);
	if (s) {
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		ct_solution sol;
		st = ct_kernel_run_selected(s, &o, &r, &sol);
		CHECKF(st == CT_OK && r.verified == 1 && strcmp(r.engine, "cuda") == 0, "%s", ct_ctx_last_message(ctx));
		ct_selector_free(s);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	fresh_dir(dir, sizeof dir, "tune");
}

int main(void)
{
	ct_ctx *ctx = ct_ctx_new();
	cuda_dev d;
	if (target_cuda_open(ctx, &d) == CT_OK) {
		printf("device: %s\n", d.desc);
		target_cuda_close(&d);
	} else {
		snprintf(no_device, sizeof no_device, "%s", ct_ctx_last_message(ctx));
		printf("skipped: no CUDA device (%s)\n", no_device);
	}
	ct_ctx_free(ctx);
	RUN(test_run_and_caches);
	RUN(test_runtime_param);
	RUN(test_event_timing);
	RUN(test_wrong_result);
	RUN(test_guard);
	RUN(test_limits);
	RUN(test_compile_error);
	RUN(test_probe);
	RUN(test_generated);
	RUN(test_tune);
	RUN(test_fault); /* last: a fault may leave the device in a state other runs see */
	return h_report();
}
