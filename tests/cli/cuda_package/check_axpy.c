/* check_axpy.c: run a package of Y = 2.5 * X + Y (runtime size L) on host arrays and compare with the host
 * (tests/cli/cuda_package.sh). Exit 2 when there is no GPU (the message says why), 1 on a wrong result. */
#include PKG_HEADER

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(x) CAT(CAT(cachet_, KNAME), x)

int main(int argc, char **argv)
{
	long L = argc > 1 ? atol(argv[1]) : 1001;
	float *X = malloc((size_t)L * sizeof *X), *Y = malloc((size_t)L * sizeof *Y), *want = malloc((size_t)L * sizeof *want);
	if (!X || !Y || !want)
		return 1;
	for (long i = 0; i < L; i++) {
		X[i] = (float)(i % 13) - 6.0f;
		Y[i] = want[i] = (float)(i % 7) * 0.25f;
		want[i] = 2.5f * X[i] + want[i];
	}
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
	FN(_cu_free)(h);
	for (long i = 0; i < L; i++)
		if (fabsf(Y[i] - want[i]) > 1e-5f) {
			fprintf(stderr, "check_axpy: Y[%ld] = %g, want %g\n", i, Y[i], want[i]);
			return 1;
		}
	printf("Y = 2.5 * X + Y: all %ld elements right\n", L);
	free(X);
	free(Y);
	free(want);
	return 0;
}
