/* distrt.c: blocks, owned and needed boxes and messages of distributed kernels (see distrt.h); its text is also part of every generated MPI program. */
#include "ir/distrt.h"

CTD_FN void ctd_share(int64_t n, int64_t g, int64_t c, int64_t *b)
{
	int64_t q = g > 0 ? n / g : 0, r = g > 0 ? n % g : 0;
	b[0] = c * q + (c < r ? c : r);
	b[1] = b[0] + q + (c < r ? 1 : 0);
}

CTD_FN int64_t ctd_trips(const ctd_axis *a)
{
	return a->hi > a->lo ? (a->hi - a->lo - 1) / a->step + 1 : 0;
}

CTD_FN void ctd_block(const ctd_axis *a, int64_t c, int64_t *lo, int64_t *hi)
{
	int64_t b[2];
	ctd_share(ctd_trips(a), a->ranks, c, b);
	*lo = a->lo + b[0] * a->step;
	*hi = a->lo + b[1] * a->step;
	if (*lo > a->hi)
		*lo = a->hi;
	if (*hi > a->hi)
		*hi = a->hi;
}

CTD_FN int64_t ctd_rank_of(const ctd_axis *ax, int naxes, const int64_t *c)
{
	int64_t r = 0;
	for (int g = 0; g < naxes; g++)
		r = r * ax[g].ranks + c[g];
	return r;
}

CTD_FN void ctd_coords(const ctd_axis *ax, int naxes, int64_t r, int64_t *c)
{
	for (int g = naxes - 1; g >= 0; g--) {
		c[g] = r % ax[g].ranks;
		r /= ax[g].ranks;
	}
}

CTD_FN int64_t ctd_nranks(const ctd_axis *ax, int naxes)
{
	int64_t n = 1;
	for (int g = 0; g < naxes; g++)
		n *= ax[g].ranks;
	return n;
}

CTD_FN void ctd_dims_create(int64_t n, int nd, int64_t *dims)
{
	int64_t primes[64];
	int np = 0;
	for (int d = 0; d < nd; d++)
		dims[d] = 1;
	for (int64_t p = 2; p * p <= n && np < 64; p++)
		while (n % p == 0 && np < 64) {
			primes[np++] = p;
			n /= p;
		}
	if (n > 1 && np < 64)
		primes[np++] = n;
	/* the largest prime first, each onto the smallest dimension so far */
	for (int i = np - 1; i >= 0; i--) {
		int m = 0;
		for (int d = 1; d < nd; d++)
			if (dims[d] < dims[m])
				m = d;
		dims[m] *= primes[i];
	}
	for (int i = 1; i < nd; i++)
		for (int j = i; j > 0 && dims[j] > dims[j - 1]; j--) {
			int64_t t = dims[j];
			dims[j] = dims[j - 1];
			dims[j - 1] = t;
		}
}

CTD_FN int ctd_box_empty(const ctd_box *b, int rank)
{
	for (int d = 0; d < rank; d++)
		if (b->hi[d] <= b->lo[d])
			return 1;
	return 0;
}

CTD_FN int64_t ctd_box_count(const ctd_box *b, int rank)
{
	if (ctd_box_empty(b, rank))
		return 0;
	int64_t n = 1;
	for (int d = 0; d < rank; d++)
		n *= b->hi[d] - b->lo[d];
	return n;
}

CTD_FN void ctd_box_meet(ctd_box *b, const ctd_box *c, int rank)
{
	for (int d = 0; d < rank; d++) {
		if (c->lo[d] > b->lo[d])
			b->lo[d] = c->lo[d];
		if (c->hi[d] < b->hi[d])
			b->hi[d] = c->hi[d];
	}
}

CTD_FN void ctd_box_join(ctd_box *b, const ctd_box *c, int rank)
{
	if (ctd_box_empty(c, rank))
		return;
	if (ctd_box_empty(b, rank)) {
		*b = *c;
		return;
	}
	for (int d = 0; d < rank; d++) {
		if (c->lo[d] < b->lo[d])
			b->lo[d] = c->lo[d];
		if (c->hi[d] > b->hi[d])
			b->hi[d] = c->hi[d];
	}
}

/* The axis that splits a's panel dimension: the panel loop's values over panel_axis's ranks. */
static inline ctd_axis ctd_panel_axis(const ctd_array *a, const ctd_axis *ax)
{
	ctd_axis p = {a->plo, a->phi, a->pstep, ax[a->panel_axis].ranks};
	return p;
}

CTD_FN void ctd_owned(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *c, ctd_box *out)
{
	for (int d = 0; d < a->rank; d++) {
		int g = a->align[d];
		out->lo[d] = 0;
		out->hi[d] = a->ext[d];
		ctd_axis pa;
		const ctd_axis *x = &ax[g < 0 ? 0 : g];
		if (d == a->panel_dim && a->panel_axis >= 0 && a->panel_axis < naxes) {
			pa = ctd_panel_axis(a, ax);
			x = &pa;
			g = a->panel_axis;
		} else if (g < 0 || g >= naxes) {
			continue;
		}
		int64_t lo, hi;
		ctd_block(x, c[g], &lo, &hi);
		if (c[g] > 0)
			out->lo[d] = lo < 0 ? 0 : lo > a->ext[d] ? a->ext[d] : lo;
		if (c[g] < x->ranks - 1)
			out->hi[d] = hi < 0 ? 0 : hi > a->ext[d] ? a->ext[d] : hi;
	}
}

CTD_FN int64_t ctd_panel_next(const ctd_array *arrs, int narrays, const ctd_axis *ax, int64_t k0)
{
	int64_t best = -1;
	for (int i = 0; i < narrays; i++) {
		const ctd_array *a = &arrs[i];
		if (a->panel_dim < 0)
			continue;
		ctd_axis pa = ctd_panel_axis(a, ax);
		for (int64_t c = 0; c < pa.ranks; c++) {
			int64_t lo, hi;
			ctd_block(&pa, c, &lo, &hi);
			if (hi > k0 && (best < 0 || hi < best))
				best = hi;
		}
		if (best < 0)
			best = a->phi;
	}
	return best;
}

CTD_FN int64_t ctd_panel_owner(const ctd_array *a, const ctd_axis *ax, int64_t k0)
{
	ctd_axis pa = ctd_panel_axis(a, ax);
	for (int64_t c = 0; c < pa.ranks; c++) {
		int64_t lo, hi;
		ctd_block(&pa, c, &lo, &hi);
		if (k0 >= lo && k0 < hi)
			return c;
	}
	return 0;
}

CTD_FN void ctd_panel_box(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *c, int64_t k0, int64_t k1,
                          ctd_box *out)
{
	ctd_owned(a, ax, naxes, c, out);
	out->lo[a->panel_dim] = k0;
	out->hi[a->panel_dim] = k1;
}

CTD_FN void ctd_ref_box(const ctd_array *a, int i, const ctd_axis *ax, int naxes, const int64_t *c, ctd_box *out)
{
	int64_t blo[CTD_MAX_AXES], bhi[CTD_MAX_AXES];
	int empty = 0;
	for (int g = 0; g < naxes; g++) {
		ctd_block(&ax[g], c[g], &blo[g], &bhi[g]);
		if (bhi[g] <= blo[g])
			empty = 1;
	}
	const ctd_ref *r = &a->ref[i];
	for (int d = 0; d < a->rank; d++) {
		int64_t lo = r->rlo[d], hi = r->rhi[d];
		for (int g = 0; g < naxes && !empty; g++) {
			int64_t k = r->coef[d][g];
			lo += k >= 0 ? k * blo[g] : k * (bhi[g] - 1);
			hi += k >= 0 ? k * (bhi[g] - 1) : k * blo[g];
		}
		out->lo[d] = lo < 0 ? 0 : lo;
		out->hi[d] = hi + 1 > a->ext[d] ? a->ext[d] : hi + 1;
		if (empty)
			out->hi[d] = out->lo[d];
	}
}

CTD_FN void ctd_local(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *c, ctd_box *out)
{
	ctd_owned(a, ax, naxes, c, out);
	if (a->panel_dim >= 0)
		return; /* its panels come with each call, into a buffer of their own */
	for (int i = 0; i < a->nref; i++) {
		ctd_box b;
		ctd_ref_box(a, i, ax, naxes, c, &b);
		ctd_box_join(out, &b, a->rank);
	}
}

/* Whether some dimension of a is aligned with axis g. */
static inline int ctd_aligned_axis(const ctd_array *a, int g)
{
	for (int d = 0; d < a->rank; d++)
		if (a->align[d] == g)
			return 1;
	return 0;
}

CTD_FN int ctd_canonical(const ctd_array *a, int naxes, const int64_t *c)
{
	for (int g = 0; g < naxes; g++)
		if (!ctd_aligned_axis(a, g) && c[g] != 0)
			return 0;
	return 1;
}

CTD_FN void ctd_message(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *from, const int64_t *to,
                        ctd_box *out)
{
	int same = 1;
	for (int d = 0; d < a->rank; d++)
		out->lo[d] = out->hi[d] = 0;
	for (int g = 0; g < naxes; g++) {
		if (from[g] != to[g])
			same = 0;
		/* a replicated copy comes from the holder in to's own row of that axis */
		if (!ctd_aligned_axis(a, g) && from[g] != to[g])
			return;
	}
	if (same || a->role == 1 || a->role == 3 || a->panel_dim >= 0)
		return;
	ctd_box own;
	ctd_owned(a, ax, naxes, from, &own);
	for (int i = 0; i < a->nref; i++) {
		ctd_box b;
		ctd_ref_box(a, i, ax, naxes, to, &b);
		ctd_box_meet(&b, &own, a->rank);
		ctd_box_join(out, &b, a->rank);
	}
}
