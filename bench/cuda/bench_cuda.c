/* bench_cuda.c: cachet's CUDA kernels on the GPU against cuBLAS (sgemm, dgemm) and the device's copy bandwidth (stencil), with the tuned sgemm; CUDA loaded with dlopen. */
#include "cachet.h"
#include "engine/engine.h"
#include "gen/ocl.h"

#include <dlfcn.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bench_util.h"

/*
 * Method (printed in the header too). For each kernel file and size n
 * (every size param of the kernel set to n): cachet's CUDA C (the same
 * source `cachet emit --target cuda` prints, from cuda_kernel_source) is
 * compiled here with nvcc --cubin for the device's architecture, loaded with
 * cuModuleLoadData and launched on device buffers of this process; the peer
 * (cuBLAS, or cuMemcpyDtoD for the stencil) runs on the same context, stream
 * and buffers. Both are timed with CUDA events around each launch: one
 * untimed warm-up, then the median of `reps`. The library's own path is
 * timed too (ct_kernel_run, verify off: its r->seconds, CUDA events in the
 * engine) as a cross-check ("lib s"). Every kernel is verified by the
 * library against the interpreter at a size it can take (--verify-size),
 * and at every size the gemm outputs of cachet and cuBLAS are compared
 * (|a - b| <= tol x max|C|, tol 1e-4 for f32, 1e-10 for f64) and 64 sampled
 * elements of cachet's against a double (long double for f64) host sum.
 * cuBLAS runs with CUBLAS_DEFAULT_MATH: no TF32 (true fp32 FMAs), as
 * cachet's kernel computes. A mismatch fails the bench (exit 1); no CUDA
 * device: "no CUDA device: <reason>", exit 2.
 */

#define DIE(...)                                                                                                       \
	do {                                                                                                           \
		fprintf(stderr, "bench_cuda: " __VA_ARGS__);                                                           \
		fputc('\n', stderr);                                                                                   \
		exit(1);                                                                                               \
	} while (0)

/* ------------------------------------------------------------------ the driver API, by dlopen */

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_ATTR_CLOCK_KHZ = 13,
	CU_FUNC_ATTR_MAX_DYN_SHARED = 8
};

typedef struct cu_api {
	void *lib;
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*ModuleGetFunctionCount)(unsigned *, CUmodule);
	CUresult (*ModuleEnumerateFunctions)(CUfunction *, unsigned, CUmodule);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                         CUstream, void **, void **);
	CUresult (*GetErrorString)(CUresult, const char **);
} cu_api;

static cu_api cu;
static CUcontext g_ctx;
static CUevent g_ev[2];

static const char *cu_err(CUresult e)
{
	const char *s = NULL;
	if (cu.GetErrorString)
		cu.GetErrorString(e, &s);
	return s ? s : "unknown CUDA error";
}

#define CU(call)                                                                                                       \
	do {                                                                                                           \
		CUresult e_ = (call);                                                                                  \
		if (e_ != 0)                                                                                           \
			DIE("%s: %s (%d)", #call, cu_err(e_), e_);                                                     \
	} while (0)

/* Look up name (or name_v2 first when v2) in lib; NULL when absent. */
static void *sym(void *lib, const char *name, bool v2)
{
	char buf[96];
	void *p = NULL;
	if (v2) {
		snprintf(buf, sizeof buf, "%s_v2", name);
		p = dlsym(lib, buf);
	}
	return p ? p : dlsym(lib, name);
}

/* Load libcuda.so.1 and open the first device's primary context; NULL, or the reason there is
 * no device (written into why). */
static bool cu_open(char *why, size_t cap, CUdevice *dev)
{
	cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!cu.lib) {
		snprintf(why, cap, "cannot load libcuda.so.1 (%s)", dlerror());
		return false;
	}
#define S(f, name, v2) *(void **)&cu.f = sym(cu.lib, "cu" name, v2)
	S(Init, "Init", false);
	S(DriverGetVersion, "DriverGetVersion", false);
	S(DeviceGetCount, "DeviceGetCount", false);
	S(DeviceGet, "DeviceGet", false);
	S(DeviceGetName, "DeviceGetName", false);
	S(DeviceGetAttribute, "DeviceGetAttribute", false);
	S(DeviceTotalMem, "DeviceTotalMem", true);
	S(DevicePrimaryCtxRetain, "DevicePrimaryCtxRetain", false);
	S(CtxSetCurrent, "CtxSetCurrent", false);
	S(CtxSynchronize, "CtxSynchronize", false);
	S(MemAlloc, "MemAlloc", true);
	S(MemFree, "MemFree", true);
	S(MemcpyHtoD, "MemcpyHtoD", true);
	S(MemcpyDtoH, "MemcpyDtoH", true);
	S(MemcpyDtoD, "MemcpyDtoD", true);
	S(MemsetD8, "MemsetD8", true);
	S(EventCreate, "EventCreate", false);
	S(EventRecord, "EventRecord", false);
	S(EventSynchronize, "EventSynchronize", false);
	S(EventElapsedTime, "EventElapsedTime", true);
	S(ModuleLoadData, "ModuleLoadData", false);
	S(ModuleUnload, "ModuleUnload", false);
	S(ModuleGetFunction, "ModuleGetFunction", false);
	S(ModuleGetFunctionCount, "ModuleGetFunctionCount", false);
	S(ModuleEnumerateFunctions, "ModuleEnumerateFunctions", false);
	S(FuncSetAttribute, "FuncSetAttribute", false);
	S(LaunchKernel, "LaunchKernel", false);
	S(GetErrorString, "GetErrorString", false);
#undef S
	if (!cu.Init || !cu.DeviceGet || !cu.DevicePrimaryCtxRetain || !cu.MemAlloc || !cu.LaunchKernel ||
	    !cu.EventElapsedTime || !cu.ModuleLoadData || !cu.MemcpyDtoD || !cu.MemsetD8) {
		snprintf(why, cap, "libcuda.so.1 lacks a driver API entry point this bench uses");
		return false;
	}
	int n = 0;
	CUresult e = cu.Init(0);
	if (e == 0)
		e = cu.DeviceGetCount(&n);
	if (e != 0 || n < 1) {
		snprintf(why, cap, "%s", e ? cu_err(e) : "the driver lists no device");
		return false;
	}
	if ((e = cu.DeviceGet(dev, 0)) != 0 || (e = cu.DevicePrimaryCtxRetain(&g_ctx, *dev)) != 0 ||
	    (e = cu.CtxSetCurrent(g_ctx)) != 0) {
		snprintf(why, cap, "cannot open device 0: %s", cu_err(e));
		return false;
	}
	CU(cu.EventCreate(&g_ev[0], 0));
	CU(cu.EventCreate(&g_ev[1], 0));
	return true;
}

/* ------------------------------------------------------------------ cuBLAS, by dlopen */

typedef struct cublas_api {
	void *lib;
	char path[700];
	void *h;
	int (*Create)(void **);
	int (*SetMathMode)(void *, int);
	int (*GetVersion)(void *, int *);
	int (*Sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
	             const float *, float *, int);
	int (*Dgemm)(void *, int, int, int, int, int, const double *, const double *, int, const double *, int,
	             const double *, double *, int);
} cublas_api;

static cublas_api blas;

/* Try to dlopen path into blas; true when it has the entry points. */
static bool blas_try(const char *path)
{
	void *l = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!l)
		return false;
	blas.lib = l;
	snprintf(blas.path, sizeof blas.path, "%s", path);
	*(void **)&blas.Create = dlsym(l, "cublasCreate_v2");
	*(void **)&blas.SetMathMode = dlsym(l, "cublasSetMathMode");
	*(void **)&blas.GetVersion = dlsym(l, "cublasGetVersion_v2");
	*(void **)&blas.Sgemm = dlsym(l, "cublasSgemm_v2");
	*(void **)&blas.Dgemm = dlsym(l, "cublasDgemm_v2");
	return blas.Create && blas.SetMathMode && blas.Sgemm && blas.Dgemm;
}

/* Find and open cuBLAS: CACHET_CUBLAS, the toolkit's (/usr/local/cuda, $CUDA_HOME), the loader's
 * path, then the pip wheels' (nvidia/cublas/lib, nvidia/cu13/lib) of the machine's Pythons. */
static bool blas_open(char *why, size_t cap)
{
	const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
	char path[700];
	const char *env = getenv("CACHET_CUBLAS");
	if (env && blas_try(env))
		goto ok;
	const char *dirs[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
	for (int d = 0; d < 3; d++)
		for (int i = 0; dirs[d] && i < 3; i++) {
			snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], names[i]);
			if (blas_try(path))
				goto ok;
		}
	for (int i = 0; i < 3; i++)
		if (blas_try(names[i]))
			goto ok;
	const char *pats[] = {"/opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.*",
	                      "/opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.*",
	                      "/usr/local/lib/python3*/dist-packages/nvidia/cu*/lib/libcublas.so.*",
	                      "/usr/local/lib/python3*/dist-packages/nvidia/cublas/lib/libcublas.so.*",
	                      "/usr/lib/python3/dist-packages/nvidia/cublas/lib/libcublas.so.*",
	                      "/opt/*/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.*"};
	for (int p = 0; p < 6; p++) {
		glob_t g;
		if (glob(pats[p], 0, NULL, &g) == 0) {
			for (size_t i = g.gl_pathc; i-- > 0;) /* the newest name first */
				if (blas_try(g.gl_pathv[i])) {
					globfree(&g);
					goto ok;
				}
			globfree(&g);
		}
	}
	snprintf(why, cap, "no usable libcublas (tried CACHET_CUBLAS, CUDA_HOME, /usr/local/cuda/lib64, the "
	                   "loader's path and the pip nvidia/*/lib folders)");
	return false;
ok:
	if (blas.Create(&blas.h) != 0) {
		snprintf(why, cap, "cublasCreate_v2 failed (%.500s)", blas.path);
		return false;
	}
	if (blas.SetMathMode(blas.h, 0 /* CUBLAS_DEFAULT_MATH */) != 0) {
		snprintf(why, cap, "cublasSetMathMode(CUBLAS_DEFAULT_MATH) failed");
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ cachet's kernel */

typedef struct bench_opts {
	int reps;
	int verify_size;   /* the library verifies each kernel at this size (0: off) */
	double tune_budget; /* seconds for the tuner (0: no tuned row) */
	int tune_size;
	int stencil_size;
	const char *nvcc;
	const char *arch;   /* sm_90a ... */
	const char *dir;    /* examples folder */
	bool compile_only;  /* --compile-only: generate and nvcc every kernel, no device */
	bool no_lib;        /* --no-lib: no ct_kernel_run (the library's verification and time) nor tuner */
} bench_opts;

/* A kernel file parsed, with its size params set to n (and extra NAME=VALUE settings). */
static ct_kernel *load_kernel(ct_ctx *ctx, const char *file, int64_t n, const char *const *set, int nset)
{
	ct_kernel *k = ct_kernel_parse_file(ctx, file);
	if (!k)
		DIE("%s: %s", file, ct_ctx_last_message(ctx));
	char fam[128], cls[512];
	ct_dtype dt;
	if (ct_kernel_tune_key(k, fam, sizeof fam, cls, sizeof cls, &dt) != CT_OK)
		DIE("%s: %s", file, ct_ctx_last_message(ctx));
	/* size_class: "M=256:N=256:K=256" */
	for (char *p = strtok(cls, ":"); p; p = strtok(NULL, ":")) {
		char *eq = strchr(p, '=');
		if (!eq)
			continue;
		*eq = 0;
		if (ct_kernel_set_param(k, p, n) != CT_OK)
			DIE("%s: -D %s=%lld: %s", file, p, (long long)n, ct_ctx_last_message(ctx));
	}
	for (int i = 0; i < nset; i++) {
		char name[64];
		long long v;
		if (sscanf(set[i], "%63[^=]=%lld", name, &v) != 2 || ct_kernel_set_param(k, name, v) != CT_OK)
			DIE("%s: %s: %s", file, set[i], ct_ctx_last_message(ctx));
	}
	if (ct_kernel_recheck(k) != CT_OK)
		DIE("%s at %lld: %s", file, (long long)n, ct_ctx_last_message(ctx));
	return k;
}

/* cachet's kernel compiled and loaded on the device: its function and launch. */
typedef struct gpu_kernel {
	CUmodule mod;
	CUfunction fn;
	unsigned grid[3], block[3];
	unsigned shared; /* dynamic shared memory bytes */
	char name[320];
} gpu_kernel;

/* The grid and block of launch L (as the CUDA engine launches it): the generator's block when it
 * fixes one (explicit_local); else 256 threads along the first dimension and the grid rounded up
 * (the kernel's guards stop the threads past the iteration space). */
static void launch_dims(const ocl_launch *L, gpu_kernel *g)
{
	for (int d = 0; d < 3; d++) {
		size_t gl = d < L->ndims ? L->global[d] : 1, lo = 1;
		if (L->explicit_local)
			lo = d < L->ndims && L->local[d] > 0 ? L->local[d] : 1;
		else if (d == 0)
			lo = gl < 256 ? gl : 256;
		if (lo == 0)
			lo = 1;
		g->block[d] = (unsigned)lo;
		g->grid[d] = (unsigned)((gl + lo - 1) / lo);
	}
}

/* Compile src with nvcc --cubin for the device, load it, find L's function. false with why. */
static bool gpu_kernel_make(const bench_opts *o, const char *src, const ocl_launch *L, gpu_kernel *g, char *why,
                            size_t cap)
{
	char dir[] = "/tmp/bench-cuda-XXXXXX";
	if (!mkdtemp(dir))
		DIE("mkdtemp failed");
	char cu_path[300], bin_path[300], cmd[1200];
	snprintf(cu_path, sizeof cu_path, "%s/k.cu", dir);
	snprintf(bin_path, sizeof bin_path, "%s/k.cubin", dir);
	FILE *f = fopen(cu_path, "w");
	if (!f || fputs(src, f) < 0 || fclose(f) != 0)
		DIE("cannot write %s", cu_path);
	snprintf(cmd, sizeof cmd, "'%s' --cubin -O3 -arch=%s -o '%s' '%s' 2>'%s/log'", o->nvcc, o->arch, bin_path,
	         cu_path, dir);
	int rc = system(cmd);
	size_t n = 0;
	unsigned char *bin = NULL;
	FILE *b = rc == 0 ? fopen(bin_path, "rb") : NULL;
	if (b) {
		fseek(b, 0, SEEK_END);
		n = (size_t)ftell(b);
		fseek(b, 0, SEEK_SET);
		bin = malloc(n + 1);
		if (!bin || fread(bin, 1, n, b) != n)
			n = 0;
		fclose(b);
	}
	char log[400] = "";
	snprintf(cmd, sizeof cmd, "%s/log", dir);
	FILE *lf = fopen(cmd, "r");
	size_t got = lf ? fread(log, 1, sizeof log - 1, lf) : 0;
	log[got] = 0;
	if (lf)
		fclose(lf);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_cuda: cannot remove %s\n", dir);
	if (!n) {
		snprintf(why, cap, "nvcc --cubin -arch=%s failed: %s", o->arch, log);
		free(bin);
		return false;
	}
	memset(g, 0, sizeof *g);
	launch_dims(L, g);
	if (o->compile_only) {
		snprintf(why, cap, "%zu bytes of cubin", n);
		free(bin);
		return true;
	}
	CUresult e = cu.ModuleLoadData(&g->mod, bin);
	free(bin);
	if (e != 0) {
		snprintf(why, cap, "cuModuleLoadData: %s", cu_err(e));
		return false;
	}
	snprintf(g->name, sizeof g->name, "%s", L->fn);
	if (cu.ModuleGetFunction(&g->fn, g->mod, L->fn) != 0) {
		/* a C++-mangled name: the module's only function */
		unsigned cnt = 0;
		if (cu.ModuleGetFunctionCount && cu.ModuleEnumerateFunctions &&
		    cu.ModuleGetFunctionCount(&cnt, g->mod) == 0 && cnt == 1 &&
		    cu.ModuleEnumerateFunctions(&g->fn, 1, g->mod) == 0) {
			snprintf(g->name, sizeof g->name, "%.300s (mangled)", L->fn);
		} else {
			snprintf(why, cap, "no function '%s' in the module (%u functions)", L->fn, cnt);
			return false;
		}
	}
	if (strstr(src, "extern __shared__") && L->local_bytes > 0) {
		g->shared = (unsigned)L->local_bytes;
		if (g->shared > 48 * 1024 && cu.FuncSetAttribute)
			cu.FuncSetAttribute(g->fn, CU_FUNC_ATTR_MAX_DYN_SHARED, (int)g->shared);
	}
	return true;
}

/* The device buffers of one kernel instance: one per array (temps: none), inputs filled. */
typedef struct gpu_bufs {
	int n;
	CUdeviceptr d[16];
	size_t bytes[16];
	void *host[16];
	int role[16];
	ct_dtype dtype[16];
	int64_t elems[16];
} gpu_bufs;

static void bufs_make(ct_kernel *k, gpu_bufs *b)
{
	memset(b, 0, sizeof *b);
	b->n = ct_kernel_array_count(k);
	if (b->n > 16)
		DIE("more than 16 arrays");
	for (int i = 0; i < b->n; i++) {
		b->role[i] = ct_kernel_array_role(k, i);
		if (b->role[i] == CT_TEMP)
			continue;
		b->dtype[i] = ct_kernel_array_dtype(k, i);
		b->elems[i] = ct_kernel_array_elements(k, i);
		b->bytes[i] = (size_t)b->elems[i] * ct_dtype_size(b->dtype[i]);
		b->host[i] = malloc(b->bytes[i]);
		if (!b->host[i])
			DIE("out of memory");
		if (b->role[i] == CT_OUTPUT)
			memset(b->host[i], 0, b->bytes[i]);
		else
			ct_fill_random(b->host[i], b->dtype[i], b->elems[i], 20261128u, (uint64_t)i);
		if (b->role[i] == CT_INOUT)
			memset(b->host[i], 0, b->bytes[i]); /* C += A B from C = 0, as the peer's beta = 0 */
		CU(cu.MemAlloc(&b->d[i], b->bytes[i]));
		CU(cu.MemcpyHtoD(b->d[i], b->host[i], b->bytes[i]));
	}
}

static void bufs_free(gpu_bufs *b)
{
	for (int i = 0; i < b->n; i++)
		if (b->host[i]) {
			cu.MemFree(b->d[i]);
			free(b->host[i]);
		}
}

/* Reset the written arrays to zero on the device. */
static void bufs_zero_outputs(const gpu_bufs *b)
{
	for (int i = 0; i < b->n; i++)
		if (b->host[i] && (b->role[i] == CT_OUTPUT || b->role[i] == CT_INOUT))
			CU(cu.MemsetD8(b->d[i], 0, b->bytes[i]));
}

/* One launch of g on b, timed by events: seconds. */
static double launch_timed(const gpu_kernel *g, gpu_bufs *b)
{
	void *args[16];
	int na = 0;
	for (int i = 0; i < b->n; i++)
		if (b->host[i])
			args[na++] = &b->d[i];
	CU(cu.EventRecord(g_ev[0], NULL));
	CU(cu.LaunchKernel(g->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2], g->shared,
	                   NULL, args, NULL));
	CU(cu.EventRecord(g_ev[1], NULL));
	CU(cu.EventSynchronize(g_ev[1]));
	float ms = 0;
	CU(cu.EventElapsedTime(&ms, g_ev[0], g_ev[1]));
	return ms * 1e-3;
}

/* Median of reps timed runs of fn(ud) after one untimed warm-up (3 runs at most when the
 * warm-up took over 0.25 s: the suite has minutes on the GPU). */
static double median_of(int reps, double (*fn)(void *), void *ud)
{
	double t[64];
	if (reps > 64)
		reps = 64;
	if (fn(ud) > 0.25 && reps > 3)
		reps = 3;
	for (int r = 0; r < reps; r++)
		t[r] = fn(ud);
	return median(t, reps);
}

typedef struct cachet_run {
	gpu_kernel g;
	gpu_bufs b;
} cachet_run;

static double cachet_once(void *ud)
{
	cachet_run *c = ud;
	return launch_timed(&c->g, &c->b);
}

/* The library's own timing of k (ct_kernel_run, native engine, verify off): seconds, or -1 with
 * the message printed. */
static double lib_seconds(ct_ctx *ctx, ct_kernel *k, int reps)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 0;
	o.repeat = reps;
	ct_run_result r;
	memset(&r, 0, sizeof r);
	ct_status st = ct_kernel_run(k, &o, &r);
	CU(cu.CtxSetCurrent(g_ctx)); /* the engine may have made its own context current */
	if (st != CT_OK) {
		printf("       library run: %s\n", ct_ctx_last_message(ctx));
		return -1;
	}
	return r.seconds;
}

/* The library's verification of file at size n against the interpreter: "verified at N",
 * or why not (into buf). Returns 0 when it failed. */
static int lib_verify(ct_ctx *ctx, const char *file, int n, const char *const *set, int nset, char *buf, size_t cap)
{
	if (n <= 0) {
		snprintf(buf, cap, "library verification off");
		return 1;
	}
	ct_kernel *k = load_kernel(ctx, file, n, set, nset);
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 1;
	ct_run_result r;
	memset(&r, 0, sizeof r);
	ct_status st = ct_kernel_run(k, &o, &r);
	CU(cu.CtxSetCurrent(g_ctx));
	int on_gpu = r.engine && strcmp(r.engine, "cuda") == 0;
	int ok = st == CT_OK && r.verified == 1 && on_gpu;
	if (st == CT_OK && r.verified == 1 && !on_gpu)
		snprintf(buf, cap, "NOT VERIFIED ON THE GPU: the library ran it on engine '%s'", r.engine ? r.engine : "?");
	else if (ok)
		snprintf(buf, cap, "verified by the library at n=%d against the interpreter (max rel. error %.2g, engine %s)",
		         n, r.max_rel_error, r.engine ? r.engine : "?");
	else
		snprintf(buf, cap, "NOT VERIFIED at n=%d: %s", n,
		         st == CT_OK ? "not verified" : ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	return ok;
}

/* The library's time for the table ("-" when it was not run or failed). */
static void fmt_lib(char *buf, size_t cap, double t)
{
	if (t < 0)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.6f", t);
}

/* ------------------------------------------------------------------ gemm against cuBLAS */

typedef struct blas_run {
	bool dbl;
	int n;
	CUdeviceptr A, B, C;
} blas_run;

static double blas_once(void *ud)
{
	blas_run *p = ud;
	int n = p->n, st;
	CU(cu.EventRecord(g_ev[0], NULL));
	/* row-major C = A B is column-major C^T = B^T A^T: B first, then A */
	if (p->dbl) {
		const double one = 1.0, zero = 0.0;
		st = blas.Dgemm(blas.h, 0, 0, n, n, n, &one, (const double *)(uintptr_t)p->B, n,
		                (const double *)(uintptr_t)p->A, n, &zero, (double *)(uintptr_t)p->C, n);
	} else {
		const float one = 1.0f, zero = 0.0f;
		st = blas.Sgemm(blas.h, 0, 0, n, n, n, &one, (const float *)(uintptr_t)p->B, n,
		                (const float *)(uintptr_t)p->A, n, &zero, (float *)(uintptr_t)p->C, n);
	}
	if (st != 0)
		DIE("cuBLAS %sgemm failed: status %d", p->dbl ? "D" : "S", st);
	CU(cu.EventRecord(g_ev[1], NULL));
	CU(cu.EventSynchronize(g_ev[1]));
	float ms = 0;
	CU(cu.EventElapsedTime(&ms, g_ev[0], g_ev[1]));
	return ms * 1e-3;
}

static double elem(const void *x, bool dbl, size_t i)
{
	return dbl ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/* cachet's C (c1) against cuBLAS's (c2) and 64 sampled elements of c1 against a host sum of A, B;
 * "ok" or what differs, into buf. */
static bool compare_gemm(const void *a, const void *b, const void *c1, const void *c2, bool dbl, int n, char *buf,
                         size_t cap)
{
	size_t nn = (size_t)n * (size_t)n;
	double d = 0, scale = 0;
	for (size_t i = 0; i < nn; i++) {
		double x = fabs(elem(c1, dbl, i) - elem(c2, dbl, i)), m = fabs(elem(c2, dbl, i));
		if (!(x <= d)) /* NaN counts */
			d = isnan(x) ? INFINITY : x;
		scale = m > scale ? m : scale;
	}
	double tol = dbl ? 1e-10 : 1e-4;
	bool ok = d <= tol * scale + (dbl ? 1e-12 : 1e-6);
	double sd = 0;
	unsigned seed = 99u;
	for (int s = 0; s < 64; s++) {
		seed = seed * 1103515245u + 12345u;
		size_t i = (seed >> 4) % (size_t)n, j = (seed >> 16) % (size_t)n;
		long double ref = 0;
		for (int k = 0; k < n; k++)
			ref += (long double)elem(a, dbl, i * (size_t)n + (size_t)k) *
			       (long double)elem(b, dbl, (size_t)k * (size_t)n + j);
		double x = fabs((double)ref - elem(c1, dbl, i * (size_t)n + j));
		sd = x > sd ? x : sd;
	}
	if (!(sd <= tol * scale + (dbl ? 1e-12 : 1e-5)))
		ok = false;
	snprintf(buf, cap, "%s: max|cachet-cuBLAS| %.2g, max|cachet-host| %.2g (64 samples), max|C| %.3g",
	         ok ? "ok" : "MISMATCH", d, sd, scale);
	return ok;
}

/* Whether array i of k is a dense row-major matrix. */
static bool row_major(ct_kernel *k, int i)
{
	int order[8];
	return ct_kernel_array_order(k, i, order) == 2 && order[0] == 0 && order[1] == 1 &&
	       !ct_kernel_array_is_strided(k, i);
}

/* One table of gemm rows (file at each size, with set[] applied) against cuBLAS; returns the
 * count of failures. */
static int gemm_table(const bench_opts *o, ct_ctx *ctx, const char *title, const char *file, const int *sizes,
                      int nsizes, const char *const *set, int nset, int verify_size)
{
	char vbuf[600] = "the library's verification left out (--no-lib): the outputs are checked below";
	int failed = 0;
	if (!o->no_lib && !lib_verify(ctx, file, verify_size, set, nset, vbuf, sizeof vbuf))
		failed++;
	printf("\n== %s: %s against cuBLAS (%s)\n", title, file, vbuf);
	printf("%6s | %10s %9s | %10s %9s | %6s | %10s | %s\n", "n", "cachet s", "GFLOP/s", "cuBLAS s", "GFLOP/s", "ratio",
	       "lib s", "outputs");
	fflush(stdout);
	for (int si = 0; si < nsizes; si++) {
		int n = sizes[si];
		ct_kernel *k = load_kernel(ctx, file, n, set, nset);
		ocl_launch L;
		memset(&L, 0, sizeof L);
		size_t len = 0;
		char *src = cuda_kernel_source(k, &len, &L);
		if (!src)
			DIE("%s: CUDA source: %s", file, ct_ctx_last_message(ctx));
		cachet_run c;
		char why[600] = "";
		bool own = gpu_kernel_make(o, src, &L, &c.g, why, sizeof why);
		bufs_make(k, &c.b);
		int ia = -1, ib = -1, ic = -1;
		for (int i = 0; i < c.b.n; i++) {
			if (!c.b.host[i])
				continue;
			if ((c.b.role[i] == CT_INPUT || c.b.role[i] == CT_CONST) && ia < 0)
				ia = i;
			else if (c.b.role[i] == CT_INPUT || c.b.role[i] == CT_CONST)
				ib = i;
			else
				ic = i;
		}
		if (ia < 0 || ib < 0 || ic < 0 || !row_major(k, ia) || !row_major(k, ib) || !row_major(k, ic))
			DIE("%s: expected inputs A[n, n], B[n, n] and an output C[n, n], row-major", file);
		bool dbl = c.b.dtype[ic] == CT_F64;
		double tc = -1;
		void *c1 = malloc(c.b.bytes[ic]), *c2 = malloc(c.b.bytes[ic]);
		if (!c1 || !c2)
			DIE("out of memory");
		if (own) {
			tc = median_of(o->reps, cachet_once, &c);
			bufs_zero_outputs(&c.b);
			launch_timed(&c.g, &c.b);
			CU(cu.MemcpyDtoH(c1, c.b.d[ic], c.b.bytes[ic]));
		}
		blas_run br = {dbl, n, c.b.d[ia], c.b.d[ib], 0};
		CU(cu.MemAlloc(&br.C, c.b.bytes[ic]));
		double tb = median_of(o->reps, blas_once, &br);
		CU(cu.MemcpyDtoH(c2, br.C, c.b.bytes[ic]));
		cu.MemFree(br.C);
		char cmp[300];
		bool ok = own ? compare_gemm(c.b.host[ia], c.b.host[ib], c1, c2, dbl, n, cmp, sizeof cmp) : false;
		if (!own)
			snprintf(cmp, sizeof cmp, "not compared: own launch failed: %.260s", why);
		bufs_free(&c.b);
		if (own)
			cu.ModuleUnload(c.g.mod);
		double tl = o->no_lib ? -1 : lib_seconds(ctx, k, tc > 0.25 ? 1 : o->reps);
		if (tc < 0)
			tc = tl; /* the library's time stands in */
		double fl = 2.0 * (double)n * (double)n * (double)n;
		char lib[32];
		fmt_lib(lib, sizeof lib, tl);
		printf("%6d | %10.6f %9.1f | %10.6f %9.1f | %5.2fx | %10s | %s\n", n, tc, tc > 0 ? fl / tc * 1e-9 : 0, tb,
		       fl / tb * 1e-9, tc > 0 ? tb / tc : 0, lib, cmp);
		if (si == 0 && own)
			printf("       launch: %s, grid %u x %u x %u, block %u x %u x %u, dynamic shared %u B\n", c.g.name,
			       c.g.grid[0], c.g.grid[1], c.g.grid[2], c.g.block[0], c.g.block[1], c.g.block[2], c.g.shared);
		fflush(stdout);
		if (!ok)
			failed++;
		free(c1);
		free(c2);
		free(src);
		ct_kernel_free(k);
	}
	printf("ratio = cuBLAS time / cachet time (>= 1: cachet as fast or faster); goal: >= 0.8 at 4096-8192\n");
	return failed;
}

/* ------------------------------------------------------------------ stencil against the copy bandwidth */

typedef struct copy_run {
	CUdeviceptr src, dst;
	size_t bytes;
} copy_run;

static double copy_once(void *ud)
{
	copy_run *p = ud;
	CU(cu.EventRecord(g_ev[0], NULL));
	CU(cu.MemcpyDtoD(p->dst, p->src, p->bytes));
	CU(cu.EventRecord(g_ev[1], NULL));
	CU(cu.EventSynchronize(g_ev[1]));
	float ms = 0;
	CU(cu.EventElapsedTime(&ms, g_ev[0], g_ev[1]));
	return ms * 1e-3;
}

static int stencil_table(const bench_opts *o, ct_ctx *ctx, const char *file)
{
	char vbuf[600] = "NOT VERIFIED: the library's verification left out (--no-lib)";
	int vn = o->stencil_size < 1024 ? o->stencil_size : 1024;
	int failed = o->no_lib ? 0 : !lib_verify(ctx, file, o->verify_size > 0 ? vn : 0, NULL, 0, vbuf, sizeof vbuf);
	printf("\n== stencil: %s against the device's copy bandwidth (%s)\n", file, vbuf);
	int sizes[2] = {o->stencil_size / 2, o->stencil_size};
	printf("%6s | %10s %9s | %10s %9s | %6s | %10s\n", "n", "cachet s", "GB/s", "copy s", "GB/s", "ratio", "lib s");
	for (int si = 0; si < 2; si++) {
		int n = sizes[si];
		ct_kernel *k = load_kernel(ctx, file, n, NULL, 0);
		ocl_launch L;
		memset(&L, 0, sizeof L);
		char *src = cuda_kernel_source(k, NULL, &L);
		if (!src)
			DIE("%s: CUDA source: %s", file, ct_ctx_last_message(ctx));
		cachet_run c;
		char why[600] = "";
		bool own = gpu_kernel_make(o, src, &L, &c.g, why, sizeof why);
		bufs_make(k, &c.b);
		/* compulsory traffic: inputs read once, outputs written once, inouts both */
		double bytes = 0;
		size_t biggest = 0;
		int ib = -1;
		for (int i = 0; i < c.b.n; i++) {
			if (!c.b.host[i])
				continue;
			bytes += (double)c.b.bytes[i] * (c.b.role[i] == CT_INOUT ? 2 : 1);
			if (c.b.bytes[i] > biggest)
				biggest = c.b.bytes[i], ib = i;
		}
		double tc = own ? median_of(o->reps, cachet_once, &c) : -1;
		copy_run cr = {c.b.d[ib], 0, biggest};
		CU(cu.MemAlloc(&cr.dst, biggest));
		double tcopy = median_of(o->reps, copy_once, &cr);
		cu.MemFree(cr.dst);
		bufs_free(&c.b);
		if (own)
			cu.ModuleUnload(c.g.mod);
		else
			printf("       own launch failed: %s\n", why);
		double tl = o->no_lib ? -1 : lib_seconds(ctx, k, tc > 0.25 ? 1 : o->reps);
		if (tc < 0)
			tc = tl;
		double gb = tc > 0 ? bytes / tc * 1e-9 : 0, cgb = 2.0 * (double)biggest / tcopy * 1e-9;
		char lib[32];
		fmt_lib(lib, sizeof lib, tl);
		printf("%6d | %10.6f %9.1f | %10.6f %9.1f | %5.2fx | %10s\n", n, tc, gb, tcopy, cgb, cgb > 0 ? gb / cgb : 0, lib);
		fflush(stdout);
		free(src);
		ct_kernel_free(k);
	}
	printf("GB/s = bytes the kernel must move (inputs read, outputs written once) / time; copy: cuMemcpyDtoD of the "
	       "largest array, read + written; ratio = cachet GB/s / copy GB/s (goal >= 0.8)\n");
	return failed;
}

/* ------------------------------------------------------------------ the tuned sgemm */

/* Tune file at o->tune_size within o->tune_budget; the winner as NAME=VALUE strings in set
 * (their count), described in desc. */
static int tune_winner(const bench_opts *o, ct_ctx *ctx, const char *file, char set[][80], int cap, char *desc,
                       size_t dcap)
{
	ct_kernel *k = load_kernel(ctx, file, o->tune_size, NULL, 0);
	ct_tune_options to;
	ct_tune_options_init(&to);
	to.budget = o->tune_budget;
	ct_tune_result r;
	memset(&r, 0, sizeof r);
	double t0 = now();
	ct_status st = ct_tune(k, &to, &r);
	CU(cu.CtxSetCurrent(g_ctx));
	int n = 0;
	if (st != CT_OK || r.best < 0) {
		snprintf(desc, dcap, "the tuner failed: %s", st != CT_OK ? ct_ctx_last_message(ctx) : "no verified candidate");
	} else {
		size_t used = 0;
		used += (size_t)snprintf(desc, dcap, "tuned at n=%d in %.0f s (budget %.0f s): %d of %d candidates measured, "
		                                     "decision %s, winner",
		                         o->tune_size, now() - t0, o->tune_budget, r.nmeasured, r.ncandidates,
		                         ct_tune_decision_name(r.decision));
		for (int p = 0; p < r.nparams && n < cap; p++, n++) {
			snprintf(set[n], 80, "%s=%lld", r.params[p], (long long)r.candidates[r.best].values[p]);
			if (used < dcap)
				used += (size_t)snprintf(desc + used, dcap - used, " %s", set[n]);
		}
		if (used < dcap)
			snprintf(desc + used, dcap - used, " (%.1f GFLOP/s in the tuner)", r.candidates[r.best].gflops);
	}
	ct_tune_result_free(&r);
	ct_kernel_free(k);
	return n;
}

/* --compile-only: file at each size (with set[]) generated and compiled by nvcc for o->arch; the
 * count of failures. */
static int compile_check(const bench_opts *o, ct_ctx *ctx, const char *file, const int *sizes, int nsizes,
                         const char *const *set, int nset)
{
	int failed = 0;
	for (int si = 0; si < nsizes; si++) {
		ct_kernel *k = load_kernel(ctx, file, sizes[si], set, nset);
		ocl_launch L;
		memset(&L, 0, sizeof L);
		char *src = cuda_kernel_source(k, NULL, &L);
		gpu_kernel g;
		char why[600] = "";
		bool ok = src && gpu_kernel_make(o, src, &L, &g, why, sizeof why);
		printf("%s %s n=%d: %s", ok ? "ok  " : "FAIL", file, sizes[si], src ? why : ct_ctx_last_message(ctx));
		if (ok)
			printf(", grid %u x %u x %u, block %u x %u x %u", g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
			       g.block[2]);
		printf("\n");
		failed += !ok;
		free(src);
		ct_kernel_free(k);
	}
	return failed;
}

/* ------------------------------------------------------------------ main */

static void cpu_line(void)
{
	char line[512], model[256] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			if (c) {
				snprintf(model, sizeof model, "%s", c + 2);
				model[strcspn(model, "\n")] = 0;
			}
			break;
		}
	if (f)
		fclose(f);
	printf("cpu: %s, %ld cores online\n", model, sysconf(_SC_NPROCESSORS_ONLN));
}

static int parse_sizes(const char *s, int *out, int cap)
{
	int n = 0;
	while (*s && n < cap) {
		out[n++] = atoi(s);
		const char *c = strchr(s, ',');
		if (!c)
			break;
		s = c + 1;
	}
	return n;
}

/* nvcc: $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, else the one on PATH. */
static const char *find_nvcc(void)
{
	static char path[600];
	const char *home = getenv("CUDA_HOME");
	if (home) {
		snprintf(path, sizeof path, "%s/bin/nvcc", home);
		if (access(path, X_OK) == 0)
			return path;
	}
	if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
		return "/usr/local/cuda/bin/nvcc";
	return "nvcc";
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_cuda [--reps N] [--sizes 1024,2048,4096,8192] [--verify-size N] [--tune-budget S]\n"
	                "                  [--tune-size N] [--stencil-size N] [--only sgemm,dgemm,stencil,tuned]\n"
	                "                  [--examples DIR] [--quick] [--no-lib]\n"
	                "       bench_cuda --compile-only [--arch sm_90a] [...]: generate and nvcc every kernel, no GPU\n");
}

int main(int argc, char **argv)
{
	bench_opts o = {5, 256, 40, 4096, 8192, NULL, NULL, "examples", false, false};
	int sizes[8] = {1024, 2048, 4096, 8192}, nsizes = 4;
	const char *only = "sgemm,dgemm,stencil,tuned";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && ++i)
		if (ARG("--reps"))
			o.reps = atoi(v) < 1 ? 1 : atoi(v);
		else if (ARG("--sizes"))
			nsizes = parse_sizes(v, sizes, 8);
		else if (ARG("--verify-size"))
			o.verify_size = atoi(v);
		else if (ARG("--tune-budget"))
			o.tune_budget = atof(v);
		else if (ARG("--tune-size"))
			o.tune_size = atoi(v);
		else if (ARG("--stencil-size"))
			o.stencil_size = atoi(v);
		else if (ARG("--only"))
			only = v;
		else if (ARG("--examples"))
			o.dir = v;
		else if (ARG("--arch"))
			o.arch = v;
		else if (strcmp(a, "--compile-only") == 0)
			o.compile_only = true;
		else if (strcmp(a, "--no-lib") == 0)
			o.no_lib = true;
		else if (strcmp(a, "--quick") == 0) {
			nsizes = 2;
			o.reps = 3;
			o.tune_budget = 20;
			o.tune_size = 1024;
			o.stencil_size = 4096;
		} else {
			usage();
			return 2;
		}
#undef ARG
	}
	cpu_line();
	if (o.compile_only) {
		/* no device: every kernel of the bench generated and compiled, as a check before a GPU run */
		o.nvcc = find_nvcc();
		if (!o.arch)
			o.arch = "sm_90a";
		ct_ctx *ctx = ct_ctx_new();
		const char *files[] = {"cuda_sgemm", "cuda_dgemm", "cuda_sgemm_tune"};
		int failed = 0, ssz[2] = {o.stencil_size / 2, o.stencil_size};
		char file[600];
		for (int i = 0; i < 3; i++) {
			snprintf(file, sizeof file, "%s/%s.cachet", o.dir, files[i]);
			failed += compile_check(&o, ctx, file, sizes, nsizes, NULL, 0);
		}
		snprintf(file, sizeof file, "%s/cuda_stencil.cachet", o.dir);
		failed += compile_check(&o, ctx, file, ssz, 2, NULL, 0);
		ct_ctx_free(ctx);
		printf("bench_cuda --compile-only: %s\n", failed ? "FAILED" : "every kernel compiled");
		return failed ? 1 : 0;
	}
	char why[600];
	CUdevice dev;
	if (!cu_open(why, sizeof why, &dev)) {
		printf("no CUDA device: %s\n", why);
		return 2;
	}
	char name[256] = "?";
	int sms = 0, ccM = 0, ccm = 0, khz = 0, drv = 0;
	size_t mem = 0;
	cu.DeviceGetName(name, sizeof name, dev);
	cu.DeviceGetAttribute(&sms, CU_ATTR_SM_COUNT, dev);
	cu.DeviceGetAttribute(&ccM, CU_ATTR_CC_MAJOR, dev);
	cu.DeviceGetAttribute(&ccm, CU_ATTR_CC_MINOR, dev);
	cu.DeviceGetAttribute(&khz, CU_ATTR_CLOCK_KHZ, dev);
	if (cu.DeviceTotalMem)
		cu.DeviceTotalMem(&mem, dev);
	if (cu.DriverGetVersion)
		cu.DriverGetVersion(&drv);
	static char arch[32];
	snprintf(arch, sizeof arch, "sm_%d%d%s", ccM, ccm, ccM >= 9 ? "a" : "");
	if (!o.arch)
		o.arch = arch;
	o.nvcc = find_nvcc();
	printf("gpu: %s, %d SMs, compute capability %d.%d (%s), %.0f GiB, %.0f MHz max, CUDA driver API %d.%d\n", name,
	       sms, ccM, ccm, arch, (double)mem / 1073741824.0, khz / 1e3, drv / 1000, drv % 1000 / 10);
	if (!blas_open(why, sizeof why)) {
		printf("no cuBLAS: %s\n", why);
		return 2;
	}
	int bv = 0;
	if (blas.GetVersion)
		blas.GetVersion(blas.h, &bv);
	printf("peer: cuBLAS %d (%s), CUBLAS_DEFAULT_MATH: no TF32, fp32 and fp64 FMAs as cachet's kernels\n", bv,
	       blas.path);
	printf("method: cachet's CUDA C (cuda_kernel_source) compiled by %s --cubin -O3 -arch=%s and launched here; both "
	       "timed with CUDA events, one warm-up, median of %d; lib s = ct_kernel_run's own time (verify off)\n",
	       o.nvcc, o.arch, o.reps);
	fflush(stdout);
	ct_ctx *ctx = ct_ctx_new();
	int failed = 0;
	char file[600];
	if (strstr(only, "sgemm")) {
		snprintf(file, sizeof file, "%s/cuda_sgemm.cachet", o.dir);
		failed += gemm_table(&o, ctx, "sgemm", file, sizes, nsizes, NULL, 0, o.verify_size);
	}
	if (strstr(only, "dgemm")) {
		snprintf(file, sizeof file, "%s/cuda_dgemm.cachet", o.dir);
		failed += gemm_table(&o, ctx, "dgemm", file, sizes, nsizes, NULL, 0, o.verify_size);
	}
	if (strstr(only, "stencil")) {
		snprintf(file, sizeof file, "%s/cuda_stencil.cachet", o.dir);
		failed += stencil_table(&o, ctx, file);
	}
	if (strstr(only, "tuned") && o.tune_budget > 0 && !o.no_lib) {
		snprintf(file, sizeof file, "%s/cuda_sgemm_tune.cachet", o.dir);
		char set[16][80], desc[1200];
		int nset = tune_winner(&o, ctx, file, set, 16, desc, sizeof desc);
		printf("\n== tuned sgemm: %s\n", desc);
		if (nset > 0) {
			const char *sp[16];
			for (int i = 0; i < nset; i++)
				sp[i] = set[i];
			failed += gemm_table(&o, ctx, "tuned sgemm", file, sizes, nsizes, sp, nset, o.verify_size);
		} else {
			failed++;
		}
	}
	ct_ctx_free(ctx);
	printf("\nbench_cuda: %s\n", failed      ? "FAILED (see MISMATCH / NOT VERIFIED above)"
	                             : o.no_lib ? "every gemm output checked (--no-lib: the library's verification left out)"
	                                        : "every result verified");
	return failed ? 1 : 0;
}
