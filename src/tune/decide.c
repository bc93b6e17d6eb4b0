/* decide.c: the tuner's last word: does the best candidate replace the hand-written (default) point? */
#include "tune/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y ? 1 : 0;
}

/* The median of v[0..n-1] (n >= 1); v is sorted in place. */
static double median_sorted(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void tune_decide(const double *td, const double *tb, int n, tune_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->keep_default = 1;
	if (!td || !tb || n <= 0)
		return;
	double *a = malloc(sizeof *a * (size_t)n * 3);
	if (!a)
		return; /* no evidence can be weighed: the plan as written stays */
	double *b = a + n, *ratio = b + n;
	int m = 0;
	/* only rounds in which both ran count: a pair shares the machine's mood */
	for (int i = 0; i < n; i++) {
		if (!(td[i] > 0) || !(tb[i] > 0))
			continue;
		a[m] = td[i];
		b[m] = tb[i];
		ratio[m] = td[i] / tb[i];
		m++;
	}
	v->rounds = m;
	if (m > 0) {
		v->default_s = median_sorted(a, m);
		v->best_s = median_sorted(b, m);
		double r = median_sorted(ratio, m);
		v->gain = r - 1;
		/* the spread: the median absolute deviation of the round ratios,
		 * which one disturbed round does not move (a range would) */
		for (int i = 0; i < m; i++)
			a[i] = fabs(ratio[i] - r);
		v->spread = median_sorted(a, m);
	}
	free(a);
	double bar = v->spread > TUNE_DECIDE_MIN_GAIN ? v->spread : TUNE_DECIDE_MIN_GAIN;
	if (m >= TUNE_DECIDE_MIN_ROUNDS && v->gain > bar)
		v->keep_default = 0;
}
