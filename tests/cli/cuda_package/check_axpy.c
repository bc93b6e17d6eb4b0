/* check_axpy.c: run a package of Y = 2.5 * X + Y (runtime size L) and compare with the host (tests/cli/cuda_package.sh):
 * on host arrays (_run), then, with a second argument "launch", on device arrays the program allocates itself
 * through the driver (_launch on the default stream). Exit 2 when there is no GPU (the message says why), 1 on a
 * wrong result or a failed call. */
#include PKG_HEADER

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(x) CAT(CAT(cachet_, KNAME), x)

typedef int (*cu_fn)();

static int same(const float *Y, const float *want, long L, const char *how)
{
	for (long i = 0; i < L; i++)
		if (fabsf(Y[i] - want[i]) > 1e-5f) {
			fprintf(stderr, "check_axpy (%s): Y[%ld] = %g, want %g\n", how, i, Y[i], want[i]);
			return 0;
		}
	return 1;
}

/* The driver call name of libcuda.so.1, or NULL. */
static cu_fn sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	cu_fn f = NULL;
	memcpy(&f, &p, sizeof f);
	return f;
}

/* _launch on device arrays of the device's primary context, made here. */
static int by_launch(FN(_cu) * h, const float *X, float *Y, long L)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 0;
	cu_fn retain = sym(lib, "cuDevicePrimaryCtxRetain"), release = sym(lib, "cuDevicePrimaryCtxRelease_v2"),
	      push = sym(lib, "cuCtxPushCurrent_v2"), pop = sym(lib, "cuCtxPopCurrent_v2"), alloc = sym(lib, "cuMemAlloc_v2"),
	      mfree = sym(lib, "cuMemFree_v2"), htod = sym(lib, "cuMemcpyHtoD_v2"), dtoh = sym(lib, "cuMemcpyDtoH_v2"),
	      sync = sym(lib, "cuStreamSynchronize");
	void *cx = NULL, *prev = NULL;
	unsigned long long dX = 0, dY = 0;
	size_t n = (size_t)L * sizeof(float);
	int ok = retain && retain(&cx, 0) == 0 && push(cx) == 0;
	ok = ok && alloc(&dX, n) == 0 && alloc(&dY, n) == 0 && htod(dX, X, n) == 0 && htod(dY, Y, n) == 0;
	int st = ok ? FN(_cu_launch)(h, dX, dY, (int64_t)L, NULL) : -1;
	if (st > 0)
		fprintf(stderr, "check_axpy: launch: %s\n", FN(_cu_error)(h));
	ok = ok && st == CACHET_CU_OK && sync(NULL) == 0 && dtoh(Y, dY, n) == 0;
	if (dX)
		mfree(dX);
	if (dY)
		mfree(dY);
	if (cx) {
		pop(&prev);
		release(0);
	}
	dlclose(lib);
	return ok;
}

/* Load the kernel, run it, and check it; an exit status. */
static int check(const float *X, float *Y, const float *Y0, const float *want, long L, int launch)
{
	char err[4096];
	FN(_cu) *h = NULL;
	int st = FN(_cu_new)(&h, 0, err, sizeof err);
	if (st != CACHET_CU_OK) {
		fprintf(stderr, "check_axpy: %s\n", err);
		return st == CACHET_CU_NO_DRIVER || st == CACHET_CU_NO_DEVICE ? 2 : 1;
	}
	st = FN(_cu_run)(h, X, Y, (int64_t)L);
	if (st != CACHET_CU_OK) {
		fprintf(stderr, "check_axpy: %s\n", FN(_cu_error)(h));
		FN(_cu_free)(h);
		return 1;
	}
	printf("%s, %s\n", FN(_cu_device)(h), FN(_cu_from_cubin)(h) ? "cubin" : "PTX");
	int ok = same(Y, want, L, "run");
	if (ok && launch) {
		memcpy(Y, Y0, (size_t)L * sizeof *Y);
		ok = by_launch(h, X, Y, L) && same(Y, want, L, "launch");
		if (ok)
			printf("launch on device pointers: right\n");
	}
	FN(_cu_free)(h);
	if (ok)
		printf("Y = 2.5 * X + Y: all %ld elements right\n", L);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	long L = argc > 1 ? atol(argv[1]) : 1001;
	int launch = argc > 2 && strcmp(argv[2], "launch") == 0;
	float *X = malloc((size_t)L * sizeof *X), *Y = malloc((size_t)L * sizeof *Y), *Y0 = malloc((size_t)L * sizeof *Y0),
	      *want = malloc((size_t)L * sizeof *want);
	int rc = 1;
	if (X && Y && Y0 && want) {
		for (long i = 0; i < L; i++) {
			X[i] = (float)(i % 13) - 6.0f;
			Y[i] = Y0[i] = (float)(i % 7) * 0.25f;
			want[i] = 2.5f * X[i] + Y0[i];
		}
		rc = check(X, Y, Y0, want, L, launch);
	}
	free(X);
	free(Y);
	free(Y0);
	free(want);
	return rc;
}
