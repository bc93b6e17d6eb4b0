/* callable.c: compile a kernel once with libcachet and call it on the program's own buffers.
 *
 *   cc examples/callable.c $(pkg-config --cflags --libs cachet) -o callable
 *   ./callable examples/axpy_runtime.cachet
 *
 * ct_kernel_compile gives a handle; ct_callable_call takes one pointer per
 * array of the kernel (declaration order, temps left out) and the values of
 * its runtime params (declaration order). No ct_tensor, no copies: the
 * kernel works in place on the program's arrays. */
#include <cachet.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* y = 2.5 * x + y on n elements through h; 0 when every element is right. */
static int axpy(ct_callable *h, int64_t n)
{
	float *x = malloc(sizeof *x * (size_t)n), *y = malloc(sizeof *y * (size_t)n);
	if (!x || !y) {
		free(x);
		free(y);
		return 1;
	}
	for (int64_t i = 0; i < n; i++) {
		x[i] = (float)(i % 10);
		y[i] = 1.0f;
	}
	void *args[] = {x, y};           /* X then Y, as the kernel declares them */
	const int64_t params[] = {n};    /* L */
	ct_status st = ct_callable_call(h, args, params);
	int wrong = st != CT_OK;
	for (int64_t i = 0; i < n && !wrong; i++)
		wrong = fabsf(y[i] - (2.5f * (float)(i % 10) + 1.0f)) > 1e-5f;
	printf("L = %lld: %s\n", (long long)n, st ? ct_strerror(st) : wrong ? "wrong" : "all right");
	free(x);
	free(y);
	return wrong;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "examples/axpy_runtime.cachet";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ctx ? ct_kernel_parse_file(ctx, path) : NULL;
	ct_callable *h = k ? ct_kernel_compile(k) : NULL;
	if (!h) {
		fprintf(stderr, "%s: %s\n", path, ctx ? ct_ctx_last_message(ctx) : "out of memory");
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		return 1;
	}
	printf("%s: %d buffers, %d runtime params\n", ct_kernel_name(k), ct_callable_arg_count(h),
	       ct_callable_param_count(h));
	int bad = axpy(h, 1000) | axpy(h, 37); /* one compile, any size */
	ct_callable_free(h);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return bad;
}
