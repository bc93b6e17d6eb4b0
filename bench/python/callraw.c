/* callraw.c: times ct_callable_call in a C loop, the baseline of the Python per-call overhead (make bench-python). */
#include <cachet.h>
#include <stdint.h>
#include <time.h>

__attribute__((visibility("default"))) double cachet_bench_raw_ns(const ct_callable *h, void *const *args,
							       const int64_t *params, int64_t n);

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Mean nanoseconds of one ct_callable_call(h, args, params) over n calls. */
double cachet_bench_raw_ns(const ct_callable *h, void *const *args, const int64_t *params, int64_t n)
{
	double t0 = now_ns();
	for (int64_t i = 0; i < n; i++)
		if (ct_callable_call(h, args, params) != CT_OK)
			return -1;
	return (now_ns() - t0) / (double)n;
}
