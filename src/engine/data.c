/* data.c: deterministic pseudo-random inputs and the relative-error measure of verification. */
#include "core/core.h"

#include <math.h>

/* The splitmix64 finaliser: a bijective mix whose outputs pass BigCrush. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* Element i depends only on (seed, stream, i): the same array gets the same
 * leading values whatever its size, and filling can be split freely. */
void ct_fill_random(void *buffer, ct_dtype t, int64_t n, uint64_t seed, uint64_t stream)
{
	if (!buffer || n <= 0)
		return;
	uint64_t key = mix64(mix64(seed) + GOLDEN * (stream + 1));
	for (int64_t i = 0; i < n; i++) {
		uint64_t x = mix64(key + GOLDEN * (uint64_t)i);
		switch (t) {
		case CT_F32:
			((float *)buffer)[i] = (float)((double)(x >> 40) * 0x1p-23 - 1.0);
			break;
		case CT_F64:
			((double *)buffer)[i] = (double)(x >> 11) * 0x1p-52 - 1.0;
			break;
		case CT_I32:
			((int32_t *)buffer)[i] = (int32_t)(x % 17) - 8;
			break;
		case CT_I64:
			((int64_t *)buffer)[i] = (int64_t)(x % 17) - 8;
			break;
		}
	}
}

static double elem(const void *p, ct_dtype t, int64_t i)
{
	switch (t) {
	case CT_F32:
		return (double)((const float *)p)[i];
	case CT_F64:
		return ((const double *)p)[i];
	case CT_I32:
		return (double)((const int32_t *)p)[i];
	case CT_I64:
		return (double)((const int64_t *)p)[i];
	}
	return 0;
}

/* NaN or an infinity where the other side differs counts as an infinite
 * error, so that verification never passes on garbage. */
double ct_max_rel_error(const void *got, const void *want, ct_dtype t, int64_t n)
{
	if (!got || !want || n <= 0)
		return 0;
	double worst = 0;
	for (int64_t i = 0; i < n; i++) {
		double e;
		if (t == CT_I64) {
			int64_t g = ((const int64_t *)got)[i], w = ((const int64_t *)want)[i];
			if (g == w)
				continue;
			/* exact difference in unsigned arithmetic, then scaled */
			uint64_t diff =
			    g > w ? (uint64_t)g - (uint64_t)w : (uint64_t)w - (uint64_t)g;
			double aw = fabs((double)w);
			e = (double)diff / (aw > 1 ? aw : 1);
		} else {
			double g = elem(got, t, i), w = elem(want, t, i);
			if (g == w || (isnan(g) && isnan(w)))
				continue;
			if (!isfinite(g) || !isfinite(w)) {
				e = INFINITY;
			} else {
				double aw = fabs(w);
				e = fabs(g - w) / (aw > 1 ? aw : 1);
			}
		}
		if (e > worst)
			worst = e;
	}
	return worst;
}
