/* test_cudart.c: the CUDA runtime's parts that need no GPU: a missing driver or device is a clear CT_ERR_UNSUPPORTED, NVRTC is found (or hidden), kernels compile to cubins with NVRTC or nvcc, the cubin cache's key and hits, launch shapes, and no CUDA kernel ever runs as host code. */
#include "cachet.h"
#include "harness.h"

#include "engine/engine.h"
#include "gen/ocl.h"
#include "ir/ir.h"
#include "jit/jit.h"
#include "target/cuda.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The parser of this branch may not know plan(target=cuda) yet: kernels are
 * parsed with plan(target=opencl) and switched to TARGET_CUDA, which is all
 * the run paths look at. Each case sets the environment it needs and puts
 * it back. The compile cases need NVRTC or nvcc (this project's machines
 * and CI have both, under /usr/local/cuda); where neither is installed
 * they say so (h_skip_case) and are counted as skipped, never as passed.
 */

static const char small_cu[] = "extern \"C\" __global__ void axpy(float *y, const float *x, long long n)\n"
                               "{\n"
                               "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                               "  if (i < n) y[i] = 2.0f * x[i] + y[i];\n"
                               "}\n";

static const char kernel_src[] = "kernel scale\n"
                                 "param N = 37\n"
                                 "param T = 8 tune {4, 8}\n"
                                 "array X : f32[N] input\n"
                                 "array Y : f32[N] inout\n"
                                 "for (i: N) {\n"
                                 "  Y[i] = 3 * X[i] + Y[i]\n"
                                 "}\n"
                                 "schedule {\n  ii = split(i, T)\n}\n"
                                 "plan(target=opencl) {\n  parallelize(i)\n}\n";

static char warned[2048];

static void on_warn(void *ud, const char *msg)
{
	(void)ud;
	snprintf(warned, sizeof warned, "%s", msg);
}

/* A fresh cache folder for one case. */
static void fresh_dir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "%s/cachet-cudart-%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(),
	         name);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot empty %s\n", dir);
}

static ct_ctx *ctx_on(const char *dir)
{
	ct_ctx *ctx = ct_ctx_new();
	if (ctx && dir)
		ct_cache_set_dir(ctx, dir);
	return ctx;
}

/* The kernel with plan(target=cuda): parsed so where the parser takes it,
 * else parsed with plan(target=opencl) and switched. */
static ct_kernel *cuda_kernel(ct_ctx *ctx)
{
	char src[sizeof kernel_src];
	snprintf(src, sizeof src, "%s", kernel_src);
	char *at = strstr(src, "plan(target=opencl)");
	memcpy(at, "plan(target=cuda)  ", 19);
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "scale.cachet");
	if (k)
		return k;
	k = ct_kernel_parse(ctx, kernel_src, sizeof kernel_src - 1, "scale.cachet");
	if (k)
		k->target = TARGET_CUDA;
	else
		fprintf(stderr, "parse: %s\n", ct_ctx_last_message(ctx));
	return k;
}

/* Skip the current case with a formatted reason. */
static void skip_case(const char *fmt, const char *arg)
{
	char why[5000];
	snprintf(why, sizeof why, fmt, arg);
	h_skip_case(why);
}

/* Whether a CUDA compiler is here; else the case is skipped (reason printed). */
static bool have_compiler(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char id[512];
	bool ok = ctx && cuda_compiler(ctx, id, sizeof id) == CT_OK;
	if (!ok)
		skip_case("no NVRTC and no nvcc (%s)", ctx ? ct_ctx_last_message(ctx) : "");
	ct_ctx_free(ctx);
	return ok;
}

static bool is_elf(const unsigned char *b, size_t n)
{
	return n > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

/* ------------------------------------------------------------ no driver, no device */

static void test_no_driver(void)
{
	setenv("CACHET_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	ct_ctx *ctx = ct_ctx_new();
	cuda_dev d;
	CHECK(target_cuda_open(ctx, &d) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "CUDA: no NVIDIA driver: /nonexistent/libcuda.so.1 not found") != NULL,
	       "%s", ct_ctx_last_message(ctx));
	/* ct_kernel_run of a CUDA kernel: the CUDA engine's answer, never host code */
	ct_kernel *k = cuda_kernel(ctx);
	CHECK(k != NULL);
	if (k) {
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		CHECK(ct_kernel_run(k, &o, &r) == CT_ERR_UNSUPPORTED);
		CHECKF(strcmp(r.engine, "cuda") == 0, "engine %s", r.engine);
		CHECKF(strstr(ct_ctx_last_message(ctx), "no NVIDIA driver") != NULL, "%s", ct_ctx_last_message(ctx));
		CHECK(r.verified == -1);
		/* checked runs cover host kernels only */
		o.checked = 1;
		CHECK(ct_kernel_run(k, &o, &r) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "plan(target=cuda)") != NULL, "%s", ct_ctx_last_message(ctx));
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	unsetenv("CACHET_LIBCUDA");
}

/* The machine's own libcuda.so.1: absent here, so the default message. */
static void test_no_driver_default(void)
{
	ct_ctx *ctx = ct_ctx_new();
	cuda_api a;
	ct_status st = target_cuda_load(ctx, &a);
	if (st == CT_OK) {
		h_skip_case("this machine has libcuda.so.1");
	} else {
		CHECK(st == CT_ERR_UNSUPPORTED);
		CHECKF(strcmp(ct_ctx_last_message(ctx), "CUDA: no NVIDIA driver: libcuda.so.1 not found "
		                                        "(plan(target=cuda) needs an NVIDIA GPU)") == 0,
		       "%s", ct_ctx_last_message(ctx));
	}
	ct_ctx_free(ctx);
}

/* A made-up driver whose cuInit answers CUDA_ERROR_NO_DEVICE (built with
 * cc): "the driver found no device"; one lacking an entry point is "too old". */
static bool build_fake_driver(const char *so, bool complete)
{
	char src[4300], cmd[9000];
	snprintf(src, sizeof src, "%s.c", so);
	FILE *f = fopen(src, "w");
	if (!f)
		return false;
	static const char *const names[] = {
		"cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute",
		"cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent",
		"cuCtxSynchronize", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleUnload", "cuModuleGetFunction",
		"cuFuncGetAttribute", "cuFuncSetAttribute", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2",
		"cuMemcpyDtoH_v2", "cuMemsetD8_v2", "cuLaunchKernel", "cuEventCreate", "cuEventRecord",
		"cuEventSynchronize", "cuEventElapsedTime", "cuEventDestroy_v2", "cuGetErrorName", "cuGetErrorString"};
	fprintf(f, "int cuInit(unsigned f) { (void)f; return 100; }\n");
	for (size_t i = 0; i < sizeof names / sizeof names[0] - (complete ? 0 : 1); i++)
		fprintf(f, "int %s(void) { return 0; }\n", names[i]);
	fclose(f);
	const char *cc = getenv("CC");
	snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o '%s' '%s' 2>&1", cc && *cc ? cc : "cc", so, src);
	return system(cmd) == 0;
}

static void test_fake_driver(void)
{
	char dir[4096], so[4300];
	fresh_dir(dir, sizeof dir, "fake");
	snprintf(so, sizeof so, "%s/libcuda-nodev.so", dir);
	char mk[4200];
	snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
	CHECK(system(mk) == 0);
	if (!build_fake_driver(so, true)) {
		h_case_failed = 0;
		h_skip_case("no C compiler to build a made-up driver");
		return;
	}
	setenv("CACHET_LIBCUDA", so, 1);
	ct_ctx *ctx = ct_ctx_new();
	cuda_dev d;
	CHECK(target_cuda_open(ctx, &d) == CT_ERR_UNSUPPORTED);
	CHECKF(strcmp(ct_ctx_last_message(ctx), "CUDA: the driver found no device") == 0, "%s", ct_ctx_last_message(ctx));
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, CT_PROBE_CUDA, &p) == CT_OK);
	CHECK(p.cuda_probed == 1 && p.ncuda == 0);
	CHECKF(strstr(p.cuda_reason, "found no device") != NULL, "%s", p.cuda_reason);
	ct_ctx_free(ctx);
	snprintf(so, sizeof so, "%s/libcuda-old.so", dir);
	if (build_fake_driver(so, false)) {
		setenv("CACHET_LIBCUDA", so, 1);
		ctx = ct_ctx_new();
		CHECK(target_cuda_open(ctx, &d) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "lacks cuGetErrorString") != NULL, "%s", ct_ctx_last_message(ctx));
		ct_ctx_free(ctx);
	}
	unsetenv("CACHET_LIBCUDA");
	fresh_dir(dir, sizeof dir, "fake");
}

/* ------------------------------------------------------------ the whole run on a made-up driver */

/*
 * tests/unit/fake_libcuda.c, built here with cc, is a driver whose device
 * memory is host memory and whose kernels are C functions named like the
 * hand-written CUDA kernels below (which NVRTC or nvcc compile for real:
 * the fake takes any ELF image). So every step of run_cuda_source runs:
 * compile, blob cache, module load, allocation, copies, guards, launch
 * arguments, events, verification, limits, faults and the recovery.
 */

#include "cuda_kernels.h"

static const char other_cu[] = SCALE_CU("other", "i < 37", "Y[i] = 3.0f * X[i] + Y[i]");

static char fake_so[4400];

/* Build the fake driver once (false: the case is skipped, reason printed). */
static bool fake_driver(void)
{
	if (fake_so[0])
		return true;
	char dir[4096], mk[4200], cmd[9200], src[4200];
	fresh_dir(dir, sizeof dir, "fakecuda");
	snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
	/* the source next to this file, as make compiled it from the repository root */
	snprintf(src, sizeof src, "%s", __FILE__);
	char *slash = strrchr(src, '/');
	snprintf(slash ? slash + 1 : src, sizeof src - (size_t)(slash ? slash + 1 - src : 0), "fake_libcuda.c");
	const char *cc = getenv("CC");
	snprintf(fake_so, sizeof fake_so, "%s/libcuda.so.1", dir);
	snprintf(cmd, sizeof cmd, "%s -shared -fPIC -O1 -o '%s' '%s'", cc && *cc ? cc : "cc", fake_so, src);
	if (access(src, R_OK) != 0 || system(mk) != 0 || system(cmd) != 0) {
		skip_case("cannot build the made-up driver from %s", src);
		fake_so[0] = 0;
		return false;
	}
	return true;
}

/* The scale kernel (no plan), switched to TARGET_CUDA. */
static ct_kernel *scale_kernel(ct_ctx *ctx)
{
	static const char src[] = "kernel scale\nparam N = 37\narray X : f32[N] input\narray Y : f32[N] inout\n"
	                          "for (i: N) {\n  Y[i] = 3 * X[i] + Y[i]\n}\n";
	ct_kernel *k = ct_kernel_parse(ctx, src, sizeof src - 1, "scale.cachet");
	if (k) {
		k->has_plan = true;
		k->target = TARGET_CUDA;
	}
	return k;
}

static ocl_launch launch_of(const char *fn, size_t block)
{
	ocl_launch L;
	memset(&L, 0, sizeof L);
	L.ndims = 1;
	L.sizes_known = L.explicit_local = true;
	L.local[0] = block;
	L.global[0] = (37 + block - 1) / block * block;
	L.global[1] = L.global[2] = L.local[1] = L.local[2] = 1;
	snprintf(L.dim_name[0], sizeof L.dim_name[0], "i/ii");
	snprintf(L.fn, sizeof L.fn, "%s", fn);
	return L;
}

static ct_status run_src(ct_ctx *ctx, const char *src, const ocl_launch *L, ct_run_result *r)
{
	ct_kernel *k = scale_kernel(ctx);
	if (!k)
		return CT_ERR_INPUT;
	ct_run_options o;
	ct_run_options_init(&o);
	o.repeat = 2;
	memset(r, 0, sizeof *r);
	r->engine = r->code_cache = r->mismatch_array = "";
	ct_status st = run_cuda_source(k, &o, src, strlen(src), L, r);
	/* the mismatching array's name lives in the kernel: kept past its free */
	static char mismatch[64];
	snprintf(mismatch, sizeof mismatch, "%s", r->mismatch_array ? r->mismatch_array : "");
	r->mismatch_array = mismatch;
	ct_kernel_free(k);
	return st;
}

static void test_fake_runs(void)
{
	if (!have_compiler() || !fake_driver())
		return;
	setenv("CACHET_LIBCUDA", fake_so, 1);
	char dir[4096];
	fresh_dir(dir, sizeof dir, "fakeruns");
	ct_ctx *ctx = ctx_on(dir);
	ct_run_result r;
	ocl_launch L = launch_of("scale_good", 8);
	CHECKF(run_src(ctx, good_cu, &L, &r) == CT_OK, "%s", ct_ctx_last_message(ctx));
	CHECK(r.verified == 1 && strcmp(r.engine, "cuda") == 0 && r.seconds > 0);
	CHECKF(strcmp(r.code_cache, "compiled") == 0, "%s", r.code_cache);
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_OK && r.verified == 1);
	CHECKF(strcmp(r.code_cache, "memory") == 0, "%s", r.code_cache);
	/* the runtime's own block: a divisor of 37 threads */
	L.explicit_local = false;
	L.global[0] = 37;
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_OK && r.verified == 1);
	ct_ctx_free(ctx);
	ctx = ctx_on(dir);
	L = launch_of("scale_good", 8);
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_OK && r.verified == 1);
	CHECKF(strcmp(r.code_cache, "disk") == 0, "%s", r.code_cache);
	/* a kept cubin the driver refuses (garbage under the right key): reported,
	 * removed, compiled again */
	char id[512];
	CHECK(cuda_compiler(ctx, id, sizeof id) == CT_OK);
	size_t klen = 0;
	char *key = cuda_cubin_key(id, "sm_90a", 13000, strncmp(id, "nvrtc", 5) == 0 ? "--gpu-architecture=sm_90a"
	                                                                             : "--cubin -arch=sm_90a",
	                           good_cu, strlen(good_cu), &klen);
	CHECK(key != NULL);
	if (key) {
		static const char junk[] = "not a cubin";
		jit_blob_put(ctx, key, klen, junk, sizeof junk);
		warned[0] = 0;
		ct_cache_set_warning_handler(ctx, on_warn, NULL);
		ct_ctx *c2 = ctx_on(dir); /* a new ctx: its memory does not hold the module */
		ct_cache_set_warning_handler(c2, on_warn, NULL);
		CHECK(run_src(c2, good_cu, &L, &r) == CT_OK && r.verified == 1);
		CHECKF(strcmp(r.code_cache, "compiled") == 0, "%s", r.code_cache);
		CHECKF(strstr(warned, "is bad (cuModuleLoadDataEx refused it") != NULL, "warning '%s'", warned);
		CHECK(run_src(c2, good_cu, &L, &r) == CT_OK && strcmp(r.code_cache, "memory") == 0);
		ct_ctx_free(c2);
		c2 = ctx_on(dir);
		CHECK(run_src(c2, good_cu, &L, &r) == CT_OK && strcmp(r.code_cache, "disk") == 0);
		ct_ctx_free(c2);
		free(key);
	}
	/* a runtime param: passed as a long long after the arrays */
	L = launch_of("scale_n", 8);
	L.global[0] = 104;
	CHECKF(run_rt(ctx, 100, &L, &r) == CT_OK && r.verified == 1, "%s", ct_ctx_last_message(ctx));
	/* wrong results, writes past the end, limits, a kernel that is not there */
	L = launch_of("scale_wrong", 8);
	CHECK(run_src(ctx, wrong_cu, &L, &r) == CT_ERR_VERIFY);
	CHECK(r.verified == 0 && strcmp(r.mismatch_array, "Y") == 0);
	L = launch_of("scale_past", 8);
	CHECK(run_src(ctx, past_cu, &L, &r) == CT_ERR_RUNTIME);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'scale_past' wrote past the end of array 'Y'") != NULL, "%s",
	       ct_ctx_last_message(ctx));
	L = launch_of("scale_good", 2048);
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_ERR_LIMIT);
	CHECKF(strstr(ct_ctx_last_message(ctx), "2048") != NULL, "%s", ct_ctx_last_message(ctx));
	L = launch_of("scale_good", 8);
	L.local_bytes = 65536;
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_ERR_LIMIT);
	CHECKF(strstr(ct_ctx_last_message(ctx), "65536 bytes of shared memory") != NULL, "%s", ct_ctx_last_message(ctx));
	L = launch_of("other", 8);
	CHECK(run_src(ctx, other_cu, &L, &r) == CT_ERR_COMPILE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'other'") != NULL, "%s", ct_ctx_last_message(ctx));
	/* arrays the device has no room for (1.2 GB on the made-up 1 GiB) */
	static const char big[] = "kernel scale\nparam N = 300000000\narray X : f32[N] input\narray Y : f32[N] inout\n"
	                          "for (i: N) {\n  Y[i] = 3 * X[i] + Y[i]\n}\n";
	ct_kernel *kb = ct_kernel_parse(ctx, big, sizeof big - 1, "big.cachet");
	CHECK(kb != NULL);
	if (kb) {
		kb->has_plan = true;
		kb->target = TARGET_CUDA;
		ct_run_options o;
		ct_run_options_init(&o);
		L = launch_of("scale_good", 8);
		CHECK(run_cuda_source(kb, &o, good_cu, strlen(good_cu), &L, &r) == CT_ERR_LIMIT);
		CHECKF(strstr(ct_ctx_last_message(ctx), "no room on the device for array 'X' (1200000000 bytes)") != NULL,
		       "%s", ct_ctx_last_message(ctx));
		ct_kernel_free(kb);
	}
	/* a fault: named, and the next run opens a fresh context */
	L = launch_of("scale_fault", 8);
	CHECK(run_src(ctx, fault_cu, &L, &r) == CT_ERR_RUNTIME);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'scale_fault'") &&
	       strstr(ct_ctx_last_message(ctx), "CUDA_ERROR_ILLEGAL_ADDRESS"), "%s", ct_ctx_last_message(ctx));
	L = launch_of("scale_good", 8);
	CHECKF(run_src(ctx, good_cu, &L, &r) == CT_OK && r.verified == 1, "after the fault: %s",
	       ct_ctx_last_message(ctx));
	/* CACHET_CUDA_DEVICE picks the device: one that is not there is a usage error */
	setenv("CACHET_CUDA_DEVICE", "3", 1);
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_ERR_USAGE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "CACHET_CUDA_DEVICE=3: the driver found 1 device") != NULL, "%s",
	       ct_ctx_last_message(ctx));
	setenv("CACHET_CUDA_DEVICE", "0", 1);
	CHECK(run_src(ctx, good_cu, &L, &r) == CT_OK);
	unsetenv("CACHET_CUDA_DEVICE");
	ct_ctx_free(ctx);
	/* the probe lists the made-up device, then measures it when asked */
	ctx = ct_ctx_new();
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, CT_PROBE_CUDA, &p) == CT_OK);
	CHECK(p.ncuda == 1 && p.cuda[0].copy_gbs == 0 && p.cuda[0].gflops_f32 == 0);
	CHECK(ct_probe_run(ctx, CT_PROBE_CUDA | CT_PROBE_MEASURE_BANDWIDTH | CT_PROBE_MEASURE_FLOPS, &p) == CT_OK);
	CHECK(p.cuda_probed && p.ncuda == 1);
	if (p.ncuda == 1) {
		const ct_cuda_devinfo *c = &p.cuda[0];
		CHECK(strcmp(c->name, "Fake GPU") == 0 && strcmp(c->arch, "sm_90a") == 0 && c->sms == 132);
		CHECK(c->shared_block == 49152 && c->shared_block_optin == 232448 && c->l2 == 50331648);
		CHECK(c->regs_block == 65536 && c->clock_mhz == 1980 && c->driver_version == 13000);
		CHECKF(c->copy_gbs > 0 && c->gflops_f32 > 0, "copy %g, fp32 %g (%s)", c->copy_gbs, c->gflops_f32, c->note);
	}
	char *text = NULL;
	size_t tn = 0;
	FILE *f = open_memstream(&text, &tn);
	CHECK(f && ct_probe_print(ctx, CT_FORMAT_TEXT, f) == CT_OK);
	if (f)
		fclose(f);
	CHECKF(text && strstr(text, "cuda        0: Fake GPU, compute capability 9.0 (sm_90a), 132 SMs, driver 13.0"),
	       "%s", text ? text : "");
	CHECKF(text && strstr(text, "shared 48 KiB per block"), "%s", text ? text : "");
	free(text);
	ct_ctx_free(ctx);
	unsetenv("CACHET_LIBCUDA");
	fresh_dir(dir, sizeof dir, "fakeruns");
}

static void test_arch_names(void)
{
	char a[16];
	target_cuda_arch(9, 0, a, sizeof a);
	CHECK(strcmp(a, "sm_90a") == 0);
	target_cuda_arch(8, 0, a, sizeof a);
	CHECK(strcmp(a, "sm_80") == 0);
	target_cuda_arch(8, 9, a, sizeof a);
	CHECK(strcmp(a, "sm_89") == 0);
	target_cuda_arch(10, 0, a, sizeof a);
	CHECK(strcmp(a, "sm_100a") == 0);
}

/* ------------------------------------------------------------ NVRTC's search list */

static void test_nvrtc_paths(void)
{
	char(*p)[512] = calloc(NVRTC_MAX_PATHS, 512);
	CHECK(p != NULL);
	if (!p)
		return;
	unsetenv("CACHET_NVRTC");
	int n = target_nvrtc_paths(p, NVRTC_MAX_PATHS);
	CHECK(n >= 6);
	CHECK(n > 0 && strcmp(p[0], "libnvrtc.so.13") == 0);
	bool local = false;
	for (int i = 0; i < n; i++)
		local = local || strcmp(p[i], "/usr/local/cuda/lib64/libnvrtc.so.12") == 0;
	CHECK(local);
	setenv("CACHET_NVRTC", "/a/libnvrtc.so.13:/b/libnvrtc.so", 1);
	n = target_nvrtc_paths(p, NVRTC_MAX_PATHS);
	CHECK(n == 2 && strcmp(p[1], "/b/libnvrtc.so") == 0);
	setenv("CACHET_NVRTC", "none", 1);
	CHECK(target_nvrtc_paths(p, NVRTC_MAX_PATHS) == 0);
	ct_ctx *ctx = ct_ctx_new();
	nvrtc_api a;
	CHECK(target_nvrtc_load(ctx, &a) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "NVRTC not found (CACHET_NVRTC=none: hidden)") != NULL, "%s",
	       ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
	unsetenv("CACHET_NVRTC");
	free(p);
}

/* ------------------------------------------------------------ compiling */

static void test_compile_nvrtc(void)
{
	unsetenv("CACHET_NVRTC");
	ct_ctx *probe = ct_ctx_new();
	nvrtc_api a;
	bool have = target_nvrtc_load(probe, &a) == CT_OK;
	if (have)
		target_nvrtc_close(&a);
	ct_ctx_free(probe);
	if (!have) {
		h_skip_case("no NVRTC on this machine");
		return;
	}
	char dir[4096];
	fresh_dir(dir, sizeof dir, "nvrtc");
	ct_ctx *ctx = ctx_on(dir);
	char id[512];
	CHECK(cuda_compiler(ctx, id, sizeof id) == CT_OK);
	CHECKF(strncmp(id, "nvrtc ", 6) == 0, "%s", id);
	unsigned char *bin = NULL;
	size_t n = 0;
	const char *how = "";
	CHECKF(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 13000, &bin, &n, &how) == CT_OK, "%s",
	       ct_ctx_last_message(ctx));
	CHECK(is_elf(bin, n));
	CHECK(strcmp(how, "compiled") == 0);
	free(bin);
	/* the same source again: the blob cache, then from another ctx */
	bin = NULL;
	CHECK(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 13000, &bin, &n, &how) == CT_OK);
	CHECKF(strcmp(how, "disk") == 0, "%s", how);
	CHECK(is_elf(bin, n));
	free(bin);
	ct_ctx_free(ctx);
	ctx = ctx_on(dir);
	bin = NULL;
	CHECK(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 13000, &bin, &n, &how) == CT_OK);
	CHECKF(strcmp(how, "disk") == 0, "%s", how);
	free(bin);
	/* another architecture or driver is another cubin */
	bin = NULL;
	CHECK(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_80", 13000, &bin, &n, &how) == CT_OK);
	CHECKF(strcmp(how, "compiled") == 0, "%s", how);
	free(bin);
	bin = NULL;
	CHECK(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 12080, &bin, &n, &how) == CT_OK);
	CHECKF(strcmp(how, "compiled") == 0, "%s", how);
	free(bin);
	/* a compile error is CT_ERR_COMPILE with NVRTC's log */
	static const char bad[] = "extern \"C\" __global__ void f(float *y) { y[0] = undeclared; }\n";
	bin = NULL;
	CHECK(cuda_cubin(ctx, bad, sizeof bad - 1, "sm_90a", 13000, &bin, &n, &how) == CT_ERR_COMPILE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "undeclared") != NULL, "%s", ct_ctx_last_message(ctx));
	CHECK(bin == NULL);
	ct_ctx_free(ctx);
	fresh_dir(dir, sizeof dir, "nvrtc");
}

static void test_nvcc_fallback(void)
{
	setenv("CACHET_NVRTC", "none", 1);
	if (!have_compiler()) {
		unsetenv("CACHET_NVRTC");
		return;
	}
	char dir[4096];
	fresh_dir(dir, sizeof dir, "nvcc");
	ct_ctx *ctx = ctx_on(dir);
	char id[512];
	CHECK(cuda_compiler(ctx, id, sizeof id) == CT_OK);
	CHECKF(strncmp(id, "nvcc ", 5) == 0 && strstr(id, "release") != NULL, "%s", id);
	unsigned char *bin = NULL;
	size_t n = 0;
	const char *how = "";
	CHECKF(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 13000, &bin, &n, &how) == CT_OK, "%s",
	       ct_ctx_last_message(ctx));
	CHECK(is_elf(bin, n));
	CHECK(strcmp(how, "compiled") == 0);
	free(bin);
	bin = NULL;
	CHECK(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 13000, &bin, &n, &how) == CT_OK);
	CHECKF(strcmp(how, "disk") == 0, "%s", how);
	free(bin);
	/* nvcc's errors: CT_ERR_COMPILE with its output */
	static const char bad[] = "extern \"C\" __global__ void f(float *y) { y[0] = undeclared; }\n";
	bin = NULL;
	CHECK(cuda_cubin(ctx, bad, sizeof bad - 1, "sm_90a", 13000, &bin, &n, &how) == CT_ERR_COMPILE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "undeclared") != NULL, "%s", ct_ctx_last_message(ctx));
	/* the environment changes within the ctx: the compiler is chosen again */
	unsetenv("CACHET_NVRTC");
	char id2[512];
	if (cuda_compiler(ctx, id2, sizeof id2) == CT_OK)
		CHECKF(strcmp(id, id2) != 0 || strncmp(id2, "nvcc", 4) == 0, "%s", id2);
	ct_ctx_free(ctx);
	fresh_dir(dir, sizeof dir, "nvcc");
}

static void test_no_compiler(void)
{
	setenv("CACHET_NVRTC", "none", 1);
	setenv("CACHET_NVCC", "/nonexistent/nvcc", 1);
	ct_ctx *ctx = ct_ctx_new();
	char id[512];
	CHECK(cuda_compiler(ctx, id, sizeof id) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "NVRTC not found") && strstr(ct_ctx_last_message(ctx), "no nvcc"), "%s",
	       ct_ctx_last_message(ctx));
	unsigned char *bin = NULL;
	size_t n = 0;
	const char *how = "";
	CHECK(cuda_cubin(ctx, small_cu, sizeof small_cu - 1, "sm_90a", 13000, &bin, &n, &how) == CT_ERR_UNSUPPORTED);
	CHECK(bin == NULL);
	ct_ctx_free(ctx);
	unsetenv("CACHET_NVRTC");
	unsetenv("CACHET_NVCC");
}

static void test_key(void)
{
	size_t n0, n;
	char *k0 = cuda_cubin_key("nvrtc 13.0 x", "sm_90a", 13000, "--gpu-architecture=sm_90a", "src", 3, &n0);
	const char *variants[][4] = {{"nvrtc 12.8 x", "sm_90a", "--gpu-architecture=sm_90a", "src"},
	                             {"nvrtc 13.0 x", "sm_80", "--gpu-architecture=sm_90a", "src"},
	                             {"nvrtc 13.0 x", "sm_90a", "--gpu-architecture=sm_80", "src"},
	                             {"nvrtc 13.0 x", "sm_90a", "--gpu-architecture=sm_90a", "srd"}};
	CHECK(k0 != NULL);
	for (size_t i = 0; i < 4; i++) {
		char *k = cuda_cubin_key(variants[i][0], variants[i][1], 13000, variants[i][2], variants[i][3], 3, &n);
		CHECKF(k && (n != n0 || memcmp(k, k0, n) != 0), "variant %zu", i);
		free(k);
	}
	char *k = cuda_cubin_key("nvrtc 13.0 x", "sm_90a", 12080, "--gpu-architecture=sm_90a", "src", 3, &n);
	CHECK(k && (n != n0 || memcmp(k, k0, n) != 0));
	free(k);
	k = cuda_cubin_key("nvrtc 13.0 x", "sm_90a", 13000, "--gpu-architecture=sm_90a", "src", 3, &n);
	CHECK(k && n == n0 && memcmp(k, k0, n) == 0);
	free(k);
	free(k0);
}

/* ------------------------------------------------------------ launches */

static void test_launch_shape(void)
{
	ocl_launch L;
	memset(&L, 0, sizeof L);
	unsigned g[3], b[3];
	L.ndims = 2;
	L.explicit_local = true;
	L.global[0] = 40;
	L.local[0] = 8;
	L.global[1] = 12;
	L.local[1] = 4;
	cuda_launch_shape(&L, g, b);
	CHECK(g[0] == 5 && b[0] == 8 && g[1] == 3 && b[1] == 4 && g[2] == 1 && b[2] == 1);
	/* no explicit block: 256 threads, fewer for a smaller global size; the
	 * last block may be partial (the kernel returns past its global size) */
	L.explicit_local = false;
	L.ndims = 2;
	L.global[1] = 5;
	const size_t globals[] = {1000, 7, 257, 512, 1};
	const unsigned blocks[] = {256, 7, 256, 256, 1}, grids[] = {4, 1, 2, 2, 1};
	for (int i = 0; i < 5; i++) {
		L.global[0] = globals[i];
		cuda_launch_shape(&L, g, b);
		CHECKF(b[0] == blocks[i] && g[0] == grids[i] && b[1] == 1 && g[1] == 5, "global %zu: grid %u block %u",
		       globals[i], g[0], b[0]);
	}
}

/* ------------------------------------------------------------ the tuner and the selector */

/* A CUDA kernel never runs as host code: not through the selector's
 * pieces, not through a callable; ct_kernel_run_selected and ct_tune go
 * to the CUDA engine (here: no driver). */
static void test_no_host_code(void)
{
	setenv("CACHET_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	char dir[4096];
	fresh_dir(dir, sizeof dir, "sel");
	ct_ctx *ctx = ctx_on(dir);
	ct_kernel *k = cuda_kernel(ctx);
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	CHECK(ct_kernel_compile(k) == NULL);
	CHECKF(strstr(ct_ctx_last_message(ctx), "targets CUDA") != NULL, "%s", ct_ctx_last_message(ctx));
	ct_selector *s = ct_selector_new(k, dir);
	CHECK(s != NULL);
	ct_solution sol;
	ct_status sel = s ? ct_select(s, (const int64_t[]){37}, 1, &sol) : CT_ERR_NOMEM;
	if (sel != CT_OK && strstr(ct_ctx_last_message(ctx), "not built yet")) {
		/* a build with the targets' table but not the generator: selecting
		 * rechecks the kernel, which generates its CUDA C */
		h_skip_case("selecting a CUDA kernel's values needs gen_cuda (CUDA C generation is not built yet)");
		ct_selector_free(s);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		unsetenv("CACHET_LIBCUDA");
		fresh_dir(dir, sizeof dir, "sel");
		return;
	}
	CHECKF(sel == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (s && sel == CT_OK) {
		float x[37] = {0}, y[37] = {0};
		void *bufs[2] = {x, y};
		CHECK(ct_solution_run(s, &sol, bufs) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "targets CUDA") != NULL, "%s", ct_ctx_last_message(ctx));
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		CHECK(ct_kernel_run_selected(s, &o, &r, &sol) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "no NVIDIA driver") != NULL, "%s", ct_ctx_last_message(ctx));
		CHECKF(strcmp(r.engine, "cuda") == 0, "engine %s", r.engine);
	}
	ct_selector_free(s);
	ct_tune_options to;
	ct_tune_options_init(&to);
	to.store_dir = dir;
	ct_tune_result tr;
	/* the tuner measures through ct_kernel_run: with no GPU it says so
	 * before timing anything */
	ct_status st = ct_tune(k, &to, &tr);
	CHECK(st == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "no NVIDIA driver") != NULL, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK)
		ct_tune_result_free(&tr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	unsetenv("CACHET_LIBCUDA");
	fresh_dir(dir, sizeof dir, "sel");
}

int main(void)
{
	RUN(test_no_driver);
	RUN(test_no_driver_default);
	RUN(test_fake_driver);
	RUN(test_arch_names);
	RUN(test_nvrtc_paths);
	RUN(test_compile_nvrtc);
	RUN(test_nvcc_fallback);
	RUN(test_no_compiler);
	RUN(test_key);
	RUN(test_launch_shape);
	RUN(test_no_host_code);
	RUN(test_fake_runs);
	char dir[4096];
	fresh_dir(dir, sizeof dir, "fakecuda");
	return h_report();
}
