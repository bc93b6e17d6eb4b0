/* fakecuda.c: a stand-in libcuda.so.1 on the host, so that tests/cli/cuda_package.sh checks the package wrapper's driver calls without a GPU.
 *
 * Built as libcuda.so.1 and found by the wrapper's dlopen through LD_LIBRARY_PATH. Device memory is host
 * memory; a "kernel" whose name has "axpy" in it runs Y[i] = 2.5 * X[i] + Y[i] for i < L on every thread of
 * the grid, others run nothing. Each call of note is logged on stderr ("fake: ..."). The environment picks
 * the device and the failures:
 *   FAKECUDA_DEVICES   devices (default 1; 0: cuInit says CUDA_ERROR_NO_DEVICE)
 *   FAKECUDA_CC        compute capability as 10 * major + minor (default 90)
 *   FAKECUDA_MAX_THREADS  threads per block the kernel may have (default 1024)
 *   FAKECUDA_REFUSE_CUBIN, FAKECUDA_REFUSE_PTX, FAKECUDA_FAIL_ALLOC, FAKECUDA_FAULT: set, that call fails
 * Built with -DFAKECUDA_OLD it lacks cuLaunchKernel (a driver too old). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int live_arrays, push_depth;
static int ctx_token;
static char fn_name[256];

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

CUresult cuInit(unsigned flags);
CUresult cuInit(unsigned flags)
{
	(void)flags;
	return env_int("FAKECUDA_DEVICES", 1) ? 0 : 100;
}

CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGetCount(int *n)
{
	*n = env_int("FAKECUDA_DEVICES", 1);
	return 0;
}

CUresult cuDeviceGet(int *dev, int ordinal);
CUresult cuDeviceGet(int *dev, int ordinal)
{
	*dev = ordinal;
	return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev);
CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	int cc = env_int("FAKECUDA_CC", 90);
	switch (attr) {
	case 75: *v = cc / 10; return 0;
	case 76: *v = cc % 10; return 0;
	case 5: *v = 2147483647; return 0;
	case 6:
	case 7: *v = 65535; return 0;
	default: return 1;
	}
}

CUresult cuDeviceGetName(char *name, int len, int dev);
CUresult cuDeviceGetName(char *name, int len, int dev)
{
	(void)dev;
	snprintf(name, (size_t)len, "Fake GPU");
	return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev);
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	(void)dev;
	*ctx = &ctx_token;
	return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev);
CUresult cuDevicePrimaryCtxRelease_v2(int dev)
{
	(void)dev;
	fprintf(stderr, "fake: released; %d arrays live, push depth %d\n", live_arrays, push_depth);
	return 0;
}

CUresult cuCtxPushCurrent_v2(void *ctx);
CUresult cuCtxPushCurrent_v2(void *ctx)
{
	push_depth += ctx == &ctx_token;
	return ctx == &ctx_token ? 0 : 201;
}

CUresult cuCtxPopCurrent_v2(void **ctx);
CUresult cuCtxPopCurrent_v2(void **ctx)
{
	*ctx = &ctx_token;
	push_depth--;
	return 0;
}

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals);
CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	int elf = memcmp(image, "\177ELF", 4) == 0;
	if (elf && getenv("FAKECUDA_REFUSE_CUBIN"))
		return 209;
	if (!elf && getenv("FAKECUDA_REFUSE_PTX")) {
		for (unsigned i = 0; i < n; i++)
			if (opts[i] == 5)
				snprintf(vals[i], 64, "ptxas fatal: the fake driver's log");
		return 222;
	}
	if (!elf && !strstr(image, ".entry "))
		return 218; /* CUDA_ERROR_INVALID_PTX */
	fprintf(stderr, "fake: load %s\n", elf ? "cubin" : "ptx");
	*mod = &ctx_token;
	return 0;
}

CUresult cuModuleUnload(void *mod);
CUresult cuModuleUnload(void *mod)
{
	(void)mod;
	fprintf(stderr, "fake: unload\n");
	return 0;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name);
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	(void)mod;
	snprintf(fn_name, sizeof fn_name, "%s", name);
	fprintf(stderr, "fake: function %s\n", name);
	*fn = fn_name;
	return 0;
}

CUresult cuFuncGetAttribute(int *v, int attr, void *fn);
CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
	(void)fn;
	if (attr != 0)
		return 1;
	*v = env_int("FAKECUDA_MAX_THREADS", 1024);
	return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n);
CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n)
{
	if (getenv("FAKECUDA_FAIL_ALLOC") || n == 0)
		return n == 0 ? 1 : 2;
	void *p = malloc(n);
	if (!p)
		return 2;
	live_arrays++;
	*d = (CUdeviceptr)(uintptr_t)p;
	return 0;
}

CUresult cuMemFree_v2(CUdeviceptr d);
CUresult cuMemFree_v2(CUdeviceptr d)
{
	live_arrays--;
	free((void *)(uintptr_t)d);
	return 0;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *src, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *src, size_t n)
{
	memcpy((void *)(uintptr_t)d, src, n);
	return 0;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr d, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr d, size_t n)
{
	memcpy(dst, (const void *)(uintptr_t)d, n);
	return 0;
}

#ifndef FAKECUDA_OLD
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void *stream, void **params, void **extra);
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void *stream, void **params, void **extra)
{
	(void)shmem;
	(void)stream;
	(void)extra;
	fprintf(stderr, "fake: launch grid %u x %u x %u block %u x %u x %u\n", gx, gy, gz, bx, by, bz);
	if (strstr(fn, "axpy")) {
		const float *X = (const float *)(uintptr_t)*(CUdeviceptr *)params[0];
		float *Y = (float *)(uintptr_t)*(CUdeviceptr *)params[1];
		long long L = *(long long *)params[2];
		for (unsigned long long i = 0; i < (unsigned long long)gx * bx; i++)
			if ((long long)i < L)
				Y[i] = 2.5f * X[i] + Y[i];
	}
	return 0;
}
#endif

CUresult cuStreamSynchronize(void *stream);
CUresult cuStreamSynchronize(void *stream)
{
	(void)stream;
	return getenv("FAKECUDA_FAULT") ? 700 : 0;
}

CUresult cuGetErrorName(CUresult r, const char **s);
CUresult cuGetErrorName(CUresult r, const char **s)
{
	switch (r) {
	case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
	case 100: *s = "CUDA_ERROR_NO_DEVICE"; break;
	case 209: *s = "CUDA_ERROR_NO_BINARY_FOR_GPU"; break;
	case 222: *s = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; break;
	case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
	default: *s = "CUDA_ERROR_UNKNOWN"; break;
	}
	return 0;
}

CUresult cuGetErrorString(CUresult r, const char **s);
CUresult cuGetErrorString(CUresult r, const char **s)
{
	(void)r;
	*s = "as the fake driver says";
	return 0;
}
