/* cuda_package.c: a program that uses the package `cachet build` makes of a CUDA kernel, without cachet or CUDA to build it.
 *
 *   cachet build tests/plans/cuda/package_matmul.cachet -o pkg
 *   cc -Ipkg examples/cuda_package.c pkg/libmatmul_cuda.a -ldl -lm -o mm && ./mm
 *
 * The package embeds the kernel's CUDA C, a cubin for sm_90a (H100, H200)
 * and a PTX: on a GPU of compute capability 9.0 the kernel loads from the
 * cubin, on another one the driver compiles the PTX. The wrapper opens the
 * NVIDIA driver (libcuda.so.1) at run time: where there is none, the
 * program says so and exits 2. */
#include "matmul_cuda.h"

#include <math.h>
#include <stdio.h>

enum { M = 37, N = 32, K = 21 }; /* the sizes of tests/plans/cuda/package_matmul.cachet */

int main(void)
{
	static float A[M * K], B[K * N], C[M * N], want[M * N];
	for (int i = 0; i < M * K; i++)
		A[i] = (float)(i % 7) - 3.0f;
	for (int i = 0; i < K * N; i++)
		B[i] = (float)(i % 5) * 0.5f;
	for (int i = 0; i < M * N; i++)
		C[i] = want[i] = 1.0f;
	for (int i = 0; i < M; i++) /* C += A * B, the plain way */
		for (int j = 0; j < N; j++)
			for (int k = 0; k < K; k++)
				want[i * N + j] += A[i * K + k] * B[k * N + j];

	char err[4096];
	cachet_matmul_cuda_cu *h = NULL;
	int st = cachet_matmul_cuda_cu_new(&h, 0, err, sizeof err); /* device 0 */
	if (st != CACHET_CU_OK) {
		fprintf(stderr, "cuda_package: %s\n", err);
		/* 2: no GPU here (no driver, no device); 1: a real failure */
		return st == CACHET_CU_NO_DRIVER || st == CACHET_CU_NO_DEVICE ? 2 : 1;
	}
	printf("%s: kernel %s\n", cachet_matmul_cuda_cu_device(h),
	       cachet_matmul_cuda_cu_from_cubin(h) ? "loaded from the embedded cubin" : "compiled from the embedded PTX");
	st = cachet_matmul_cuda_cu_run(h, A, B, C); /* copies in, runs, copies C back */
	if (st != CACHET_CU_OK) {
		fprintf(stderr, "cuda_package: %s\n", cachet_matmul_cuda_cu_error(h));
		cachet_matmul_cuda_cu_free(h);
		return 1;
	}
	cachet_matmul_cuda_cu_free(h);
	for (int i = 0; i < M * N; i++)
		if (fabsf(C[i] - want[i]) > 1e-3f) {
			fprintf(stderr, "cuda_package: C[%d] = %g, want %g\n", i, C[i], want[i]);
			return 1;
		}
	printf("C = A * B + C: all %d elements right\n", M * N);
	return 0;
}
