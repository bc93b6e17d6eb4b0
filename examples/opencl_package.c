/* opencl_package.c: a program that uses the package `cachet build` makes of an OpenCL kernel, without cachet.
 *
 *   cachet build examples/opencl_local.cachet -o pkg
 *   cc -Ipkg examples/opencl_package.c pkg/libmatmul_local.a -lOpenCL -o mm && ./mm
 *
 * The package embeds the kernel's OpenCL C and the program binary for the
 * device it was built on (PoCL here): on that device the program loads from
 * the binary, on another one it is built from the source. */
#include "matmul_local.h"

#include <math.h>
#include <stdio.h>

enum { M = 37, N = 32, K = 21 }; /* the sizes of examples/opencl_local.cachet */

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
	/* NULL, NULL, NULL: the first OpenCL device, with a context and queue
	 * of the handle's own (or pass yours) */
	cachet_matmul_local_cl *h = cachet_matmul_local_cl_new(NULL, NULL, NULL, err, sizeof err);
	if (!h) {
		fprintf(stderr, "opencl_package: %s\n", err);
		return 1;
	}
	printf("program %s\n", cachet_matmul_local_cl_from_binary(h) ? "loaded from the embedded binary"
	                                                               : "built from the embedded source");
	cl_int e = cachet_matmul_local_cl_run(h, A, B, C); /* copies in, runs, reads C back */
	cachet_matmul_local_cl_free(h);
	if (e != CL_SUCCESS) {
		fprintf(stderr, "opencl_package: OpenCL error %d\n", (int)e);
		return 1;
	}
	for (int i = 0; i < M * N; i++)
		if (fabsf(C[i] - want[i]) > 1e-3f) {
			fprintf(stderr, "opencl_package: C[%d] = %g, want %g\n", i, C[i], want[i]);
			return 1;
		}
	printf("C = A * B + C: all %d elements right\n", M * N);
	return 0;
}
