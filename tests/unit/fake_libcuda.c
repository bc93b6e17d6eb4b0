/* fake_libcuda.c: a made-up libcuda.so.1 for test_cudart (built by it with cc): one "device" whose memory is host memory and whose kernels are C functions chosen by name, so the CUDA runtime's whole path (cubins, copies, guards, launches, events, faults) runs without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Kernels (by the name cuModuleGetFunction is asked for):
 *   scale_*        Y = 3 X + Y over i < 37 (the launch's grid x block threads, 1-D)
 *   scale_wrong    Y = 2 X + Y
 *   scale_past     also writes Y[37]
 *   scale_n        over i < N, N its third argument (a runtime param, long long)
 *   scale_fault    an illegal address: the launch succeeds, the next
 *                  synchronization says CUDA_ERROR_ILLEGAL_ADDRESS (700),
 *                  and so does every call until the context is released
 *   ct_probe_copy  b = a (n float4s); ct_probe_fma: nothing
 * A module is accepted when its image starts as an ELF file (a cubin).
 * FAKE_CUDA_NODEV=1: cuInit says CUDA_ERROR_NO_DEVICE. Every launch is
 * counted (FAKE_CUDA_LAUNCHES in the environment is not read; the test
 * asks fake_launches()).
 */

typedef struct fn {
	char name[256];
} fn;

static int sticky;   /* a fault's error, until the primary context is released */
static int retained; /* primary context references */
static int launches;

int fake_launches(void);
int fake_launches(void)
{
	return launches;
}

int cuInit(unsigned f)
{
	(void)f;
	const char *e = getenv("FAKE_CUDA_NODEV");
	return e && *e == '1' ? 100 : 0;
}

int cuDriverGetVersion(int *v)
{
	*v = 13000;
	return 0;
}

int cuDeviceGetCount(int *n)
{
	*n = 1;
	return 0;
}

int cuDeviceGet(int *d, int i)
{
	*d = i;
	return i == 0 ? 0 : 101;
}

int cuDeviceGetName(char *s, int n, int d)
{
	(void)d;
	snprintf(s, (size_t)n, "Fake GPU");
	return 0;
}

int cuDeviceGetAttribute(int *v, int what, int d)
{
	(void)d;
	switch (what) {
	case 1: *v = 1024; break;              /* threads per block */
	case 2: *v = 1024; break;              /* block x */
	case 3: *v = 1024; break;              /* block y */
	case 4: *v = 64; break;                /* block z */
	case 5: *v = 2147483647; break;        /* grid x */
	case 6: case 7: *v = 65535; break;     /* grid y, z */
	case 8: *v = 49152; break;             /* shared per block */
	case 10: *v = 32; break;               /* warp */
	case 12: *v = 65536; break;            /* registers per block */
	case 13: *v = 1980000; break;          /* clock, kHz */
	case 16: *v = 132; break;              /* SMs */
	case 36: *v = 2619000; break;          /* memory clock */
	case 37: *v = 6144; break;             /* bus width */
	case 38: *v = 50331648; break;         /* L2 */
	case 39: *v = 2048; break;             /* threads per SM */
	case 75: *v = 9; break;                /* cc major */
	case 76: *v = 0; break;                /* cc minor */
	case 81: *v = 233472; break;           /* shared per SM */
	case 82: *v = 65536; break;            /* registers per SM */
	case 97: *v = 232448; break;           /* shared per block, opt-in */
	default: *v = 0; return 1;
	}
	return 0;
}

int cuDeviceTotalMem_v2(size_t *b, int d)
{
	(void)d;
	*b = (size_t)1 << 30;
	return 0;
}

int cuDevicePrimaryCtxRetain(void **c, int d)
{
	(void)d;
	retained++;
	*c = &retained;
	return 0;
}

int cuDevicePrimaryCtxRelease_v2(int d)
{
	(void)d;
	if (--retained == 0)
		sticky = 0; /* the context is destroyed: a fresh one next time */
	return 0;
}

int cuCtxSetCurrent(void *c)
{
	(void)c;
	return 0;
}

int cuCtxSynchronize(void)
{
	return sticky;
}

int cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v)
{
	(void)n;
	(void)o;
	(void)v;
	if (sticky)
		return sticky;
	const unsigned char *b = img;
	if (!(b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'))
		return 200; /* CUDA_ERROR_INVALID_IMAGE */
	*m = malloc(1);
	return 0;
}

int cuModuleLoadData(void **m, const void *img)
{
	return cuModuleLoadDataEx(m, img, 0, NULL, NULL);
}

int cuModuleUnload(void *m)
{
	free(m);
	return 0;
}

int cuModuleGetFunction(void **f, void *m, const char *name)
{
	(void)m;
	if (strncmp(name, "scale_", 6) != 0 && strncmp(name, "ct_probe_", 9) != 0)
		return 500; /* CUDA_ERROR_NOT_FOUND */
	/* one handle per name, kept for the process (no allocation to leak) */
	static fn fns[64];
	static int nfns;
	for (int i = 0; i < nfns; i++)
		if (strcmp(fns[i].name, name) == 0) {
			*f = &fns[i];
			return 0;
		}
	if (nfns == 64)
		return 2;
	snprintf(fns[nfns].name, sizeof fns[nfns].name, "%s", name);
	*f = &fns[nfns++];
	return 0;
}

int cuFuncGetAttribute(int *v, int what, void *f)
{
	(void)f;
	*v = what == 0 ? 1024 : 0;
	return 0;
}

int cuFuncSetAttribute(void *f, int what, int v)
{
	(void)f;
	(void)what;
	(void)v;
	return 0;
}

int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
	if (sticky)
		return sticky;
	if (n > ((size_t)1 << 30))
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY: more than the 1 GiB cuDeviceTotalMem says */
	void *m = malloc(n ? n : 1);
	if (!m)
		return 2;
	*p = (unsigned long long)(size_t)m;
	return 0;
}

int cuMemFree_v2(unsigned long long p)
{
	free((void *)(size_t)p);
	return 0;
}

int cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n)
{
	if (sticky)
		return sticky;
	memcpy((void *)(size_t)d, s, n);
	return 0;
}

int cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n)
{
	if (sticky)
		return sticky;
	memcpy(d, (const void *)(size_t)s, n);
	return 0;
}

int cuMemsetD8_v2(unsigned long long d, unsigned char c, size_t n)
{
	memset((void *)(size_t)d, c, n);
	return 0;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned sh, void *st, void **args, void **extra)
{
	(void)gy;
	(void)gz;
	(void)by;
	(void)bz;
	(void)sh;
	(void)st;
	(void)extra;
	if (sticky)
		return sticky;
	launches++;
	const char *name = ((fn *)f)->name;
	long long threads = (long long)gx * bx;
	if (strcmp(name, "ct_probe_copy") == 0) {
		const char *a = *(const char **)args[0];
		char *b = *(char **)args[1];
		long long n = *(long long *)args[2];
		memcpy(b, a, (size_t)n * 16);
		return 0;
	}
	if (strcmp(name, "ct_probe_fma") == 0)
		return 0;
	const float *x = *(const float **)args[0];
	float *y = *(float **)args[1];
	if (strcmp(name, "scale_fault") == 0) {
		sticky = 700;
		return 0;
	}
	float a = strcmp(name, "scale_wrong") == 0 ? 2.0f : 3.0f;
	long long end = strcmp(name, "scale_past") == 0 ? 38 : 37;
	if (strcmp(name, "scale_n") == 0) /* a runtime param N: the third argument, a long long */
		end = *(const long long *)args[2];
	for (long long i = 0; i < threads && i < end; i++)
		y[i] = a * x[i] + y[i];
	return 0;
}

int cuEventCreate(void **e, unsigned f)
{
	(void)f;
	*e = calloc(1, sizeof(struct timespec));
	return 0;
}

int cuEventRecord(void *e, void *s)
{
	(void)s;
	if (sticky)
		return sticky;
	clock_gettime(CLOCK_MONOTONIC, e);
	return 0;
}

int cuEventSynchronize(void *e)
{
	(void)e;
	return sticky;
}

int cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
	const struct timespec *x = a, *y = b;
	*ms = (float)((double)(y->tv_sec - x->tv_sec) * 1e3 + (double)(y->tv_nsec - x->tv_nsec) * 1e-6);
	if (*ms <= 0)
		*ms = 1e-3f;
	return 0;
}

int cuEventDestroy_v2(void *e)
{
	free(e);
	return 0;
}

int cuGetErrorName(int e, const char **s)
{
	*s = e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : e == 200 ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_FAKE";
	return 0;
}

int cuGetErrorString(int e, const char **s)
{
	*s = e == 700 ? "an illegal memory access was encountered" : "a made-up error";
	return 0;
}
