/* bench_util.h: timing helpers the benchmarks share (wall clock, sorting, median). */
#ifndef CT_BENCH_UTIL_H
#define CT_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Monotonic wall-clock seconds. */
static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort comparator of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (n >= 1); sorts v. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
