/* host_package.c: a program that calls the package `cachet build` makes of a host kernel, without cachet, and checks the status it returns.
 *
 *   cachet build examples/axpy_runtime.cachet -o pkg
 *   cc -Ipkg examples/host_package.c pkg/libaxpy.a -lm -o axpy && ./axpy
 *
 * The kernel function returns 0, or 1 when the temps and cache buffers it
 * allocates on the heap (a large or runtime-sized `temp`, a cache buffer of
 * runtime size) could not be allocated: then it returned before touching
 * any output, and the caller decides what to do. */
#include "axpy.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	enum { L = 1000 };
	static float X[L], Y[L];
	for (int i = 0; i < L; i++) {
		X[i] = (float)i;
		Y[i] = 1.0f;
	}
	if (cachet_axpy(X, Y, L) != 0) {
		fprintf(stderr, "axpy: out of memory, Y untouched\n");
		return EXIT_FAILURE;
	}
	for (int i = 0; i < L; i++)
		if (Y[i] != 2.5f * (float)i + 1.0f) {
			fprintf(stderr, "axpy: Y[%d] = %g\n", i, (double)Y[i]);
			return EXIT_FAILURE;
		}
	printf("axpy: ok\n");
	return EXIT_SUCCESS;
}
