/* fake_gpu.c: a made-up libcuda.so.1 and libcublas for testing bench_cuda without a GPU (tests/cli/gpu_suite.sh): device memory is host memory, a cachet gemm kernel is a host gemm, cuBLAS a column-major host gemm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Built twice by the test, as libcuda.so.1 and as libfakeblas.so (CACHET_CUBLAS). Kernels, by
 * the name cuModuleGetFunction is asked for: a name with "gemm" computes C += A B row-major on
 * its first three arguments, n from the size of A's allocation ("dgemm": double); FAKE_GPU_WRONG=1
 * adds 1 to C[0] (a wrong kernel); any other cachet_ name does nothing. Events read the clock.
 * Only what the bench calls is here.
 */

int cuInit(unsigned f);
int cuDriverGetVersion(int *v);
int cuDeviceGetCount(int *n);
int cuDeviceGet(int *d, int i);
int cuDeviceGetName(char *s, int n, int d);
int cuDeviceGetAttribute(int *v, int what, int d);
int cuDeviceTotalMem_v2(size_t *b, int d);
int cuDevicePrimaryCtxRetain(void **c, int d);
int cuCtxSetCurrent(void *c);
int cuCtxSynchronize(void);
int cuMemAlloc_v2(unsigned long long *p, size_t n);
int cuMemFree_v2(unsigned long long p);
int cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n);
int cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n);
int cuMemcpyDtoD_v2(unsigned long long d, unsigned long long s, size_t n);
int cuMemsetD8_v2(unsigned long long d, unsigned char c, size_t n);
int cuEventCreate(void **e, unsigned f);
int cuEventRecord(void *e, void *s);
int cuEventSynchronize(void *e);
int cuEventElapsedTime_v2(float *ms, void *a, void *b);
int cuModuleLoadData(void **m, const void *img);
int cuModuleUnload(void *m);
int cuModuleGetFunction(void **f, void *m, const char *name);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                   void *st, void **args, void **extra);
int cuGetErrorString(int e, const char **s);
int cublasCreate_v2(void **h);
int cublasSetMathMode(void *h, int m);
int cublasGetVersion_v2(void *h, int *v);
int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *al, const float *A, int lda,
                   const float *B, int ldb, const float *be, float *C, int ldc);
int cublasDgemm_v2(void *h, int ta, int tb, int m, int n, int k, const double *al, const double *A, int lda,
                   const double *B, int ldb, const double *be, double *C, int ldc);

/* the allocations, to find n from A's size */
static struct {
	void *p;
	size_t n;
} allocs[64];

static size_t alloc_size(const void *p)
{
	for (int i = 0; i < 64; i++)
		if (allocs[i].p == p)
			return allocs[i].n;
	return 0;
}

int cuInit(unsigned f)
{
	(void)f;
	return 0;
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
	return 0;
}
int cuDeviceGetName(char *s, int n, int d)
{
	(void)d;
	strncpy(s, "Made-up GPU (bench/cuda/fake_gpu.c)", (size_t)n);
	return 0;
}
int cuDeviceGetAttribute(int *v, int what, int d)
{
	(void)d;
	*v = what == 75 ? 9 : what == 76 ? 0 : what == 16 ? 132 : what == 13 ? 1980000 : 0;
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
	*c = (void *)allocs;
	return 0;
}
int cuCtxSetCurrent(void *c)
{
	(void)c;
	return 0;
}
int cuCtxSynchronize(void)
{
	return 0;
}
int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
	void *m = malloc(n ? n : 1);
	for (int i = 0; m && i < 64; i++)
		if (!allocs[i].p) {
			allocs[i].p = m;
			allocs[i].n = n;
			break;
		}
	*p = (unsigned long long)(size_t)m;
	return m ? 0 : 2;
}
int cuMemFree_v2(unsigned long long p)
{
	for (int i = 0; i < 64; i++)
		if (allocs[i].p == (void *)(size_t)p)
			allocs[i].p = NULL;
	free((void *)(size_t)p);
	return 0;
}
int cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n)
{
	memcpy((void *)(size_t)d, s, n);
	return 0;
}
int cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n)
{
	memcpy(d, (const void *)(size_t)s, n);
	return 0;
}
int cuMemcpyDtoD_v2(unsigned long long d, unsigned long long s, size_t n)
{
	memcpy((void *)(size_t)d, (const void *)(size_t)s, n);
	return 0;
}
int cuMemsetD8_v2(unsigned long long d, unsigned char c, size_t n)
{
	memset((void *)(size_t)d, c, n);
	return 0;
}
int cuEventCreate(void **e, unsigned f)
{
	(void)f;
	*e = calloc(1, sizeof(struct timespec));
	return *e ? 0 : 2;
}
int cuEventRecord(void *e, void *s)
{
	(void)s;
	clock_gettime(CLOCK_MONOTONIC, e);
	return 0;
}
int cuEventSynchronize(void *e)
{
	(void)e;
	return 0;
}
int cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
	const struct timespec *x = a, *y = b;
	*ms = (float)((double)(y->tv_sec - x->tv_sec) * 1e3 + (double)(y->tv_nsec - x->tv_nsec) * 1e-6);
	return 0;
}
int cuModuleLoadData(void **m, const void *img)
{
	*m = (void *)img; /* the bench keeps the image until the module is unloaded: unused */
	return memcmp(img, "\177ELF", 4) == 0 ? 0 : 200;
}
int cuModuleUnload(void *m)
{
	(void)m;
	return 0;
}
int cuModuleGetFunction(void **f, void *m, const char *name)
{
	(void)m;
	static char names[16][256];
	static int n;
	if (strncmp(name, "cachet_", 7) != 0)
		return 500;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0) {
			*f = names[i];
			return 0;
		}
	if (n == 16)
		return 2;
	strncpy(names[n], name, 255);
	*f = names[n++];
	return 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                   void *st, void **args, void **extra)
{
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)st, (void)extra;
	const char *name = f;
	if (!strstr(name, "gemm"))
		return 0;
	int dbl = strstr(name, "dgemm") != NULL;
	size_t es = dbl ? sizeof(double) : sizeof(float);
	void *A = *(void **)args[0], *B = *(void **)args[1], *C = *(void **)args[2];
	size_t n = (size_t)llround(sqrt((double)(alloc_size(A) / es)));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			double s = 0;
			for (size_t k = 0; k < n; k++)
				s += dbl ? ((double *)A)[i * n + k] * ((double *)B)[k * n + j]
				         : (double)((float *)A)[i * n + k] * (double)((float *)B)[k * n + j];
			if (dbl)
				((double *)C)[i * n + j] += s;
			else
				((float *)C)[i * n + j] += (float)s;
		}
	if (getenv("FAKE_GPU_WRONG") && n) {
		if (dbl)
			((double *)C)[0] += 1;
		else
			((float *)C)[0] += 1;
	}
	return 0;
}
int cuGetErrorString(int e, const char **s)
{
	(void)e;
	*s = "made-up error";
	return 0;
}

int cublasCreate_v2(void **h)
{
	*h = (void *)allocs;
	return 0;
}
int cublasSetMathMode(void *h, int m)
{
	(void)h;
	return m == 0 ? 0 : 7; /* only CUBLAS_DEFAULT_MATH is expected */
}
int cublasGetVersion_v2(void *h, int *v)
{
	(void)h;
	*v = 0;
	return 0;
}
int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *al, const float *A, int lda,
                   const float *B, int ldb, const float *be, float *C, int ldc)
{
	(void)h;
	if (ta || tb)
		return 7;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;
			for (int p = 0; p < k; p++)
				s += (double)A[i + p * lda] * (double)B[p + j * ldb];
			C[i + j * ldc] = (float)(*al * s) + (*be != 0 ? *be * C[i + j * ldc] : 0);
		}
	return 0;
}
int cublasDgemm_v2(void *h, int ta, int tb, int m, int n, int k, const double *al, const double *A, int lda,
                   const double *B, int ldb, const double *be, double *C, int ldc)
{
	(void)h;
	if (ta || tb)
		return 7;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;
			for (int p = 0; p < k; p++)
				s += A[i + p * lda] * B[p + j * ldb];
			C[i + j * ldc] = *al * s + (*be != 0 ? *be * C[i + j * ldc] : 0);
		}
	return 0;
}
