/* model_fp.c: the cache model's footprints: distinct lines of windows of the run, memoised. */
#include "model/model_int.h"

/* One access's box in a window: per dimension lo, hi and the step g of the progression. */
typedef struct box {
	int64_t lo[IR_MAX_RANK], hi[IR_MAX_RANK], g[IR_MAX_RANK];
} box;

typedef struct term {
	int64_t b, len;
} term;

/* The set c + sum b_k [0, len_k) as lo, hi and step g; false when it is not exactly a
 * progression (then lo, hi, g still bound it). */
static bool progression(int64_t c, term *tm, int nt, int64_t *lo, int64_t *hi, int64_t *g)
{
	*lo = *hi = c;
	*g = 1;
	int k = 0;
	for (int i = 0; i < nt; i++) {
		if (tm[i].b == 0 || tm[i].len <= 1)
			continue;
		int64_t v = tm[i].b * (tm[i].len - 1);
		if (v < 0)
			*lo += v;
		else
			*hi += v;
		tm[k].b = tm[i].b < 0 ? -tm[i].b : tm[i].b;
		tm[k++].len = tm[i].len;
	}
	if (k == 0)
		return true;
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && tm[j].b < tm[j - 1].b; j--) {
			term x = tm[j];
			tm[j] = tm[j - 1];
			tm[j - 1] = x;
		}
	*g = tm[0].b;
	int64_t span = 0;
	bool exact = true;
	for (int i = 0; i < k; i++) {
		if (tm[i].b % *g != 0 || tm[i].b > span + *g)
			exact = false;
		span += tm[i].b * (tm[i].len - 1);
	}
	return exact;
}

/* Everything one DL evaluation needs. */
typedef struct dlctx {
	model *m;
	int array;
	int nb;
	box *b;
	int64_t *shift;   /* per box: extra address shift in elements (enumerated instances) */
	bool inexact;
	int *cand;        /* scratch: nb entries */
	int *in;          /* scratch: nb entries */
	/* the walk counts nr address shifts at once (the residues of a window's instances): the
	 * rows, bands and planes do not depend on the shift, only where their lines start */
	int nr;
	const int64_t *r; /* [nr] bytes */
} dlctx;

/* Most shifts one walk counts (RMEMO_MAX_LINE: the residues of a cached line size). */
#define MAX_SHIFTS 256

typedef struct seg {
	int64_t a, z; /* byte range, inclusive */
} seg;

/* The geometry dl_boxes walks: the array's dims by stride, most major first. */
typedef struct rowgeo {
	const int *ord;
	const int64_t *st;
	int64_t e, L;
	int inner, nout;
	int *cand;            /* boxes that contain the current outer coordinates but the last */
	int ncand;
} rowgeo;

/* New lines of the row at outer coordinates x (address rowaddr), for each shift k of d added
 * to cnt[k], given the highest line counted so far (last[k], updated). Only the boxes in
 * g->cand are looked at. */
static void row_lines(dlctx *d, const rowgeo *g, const int64_t *x, int64_t rowaddr, int64_t *last,
                      int64_t *cnt)
{
	seg sg[64];
	int ns = 0;
	int64_t count = 0, sparse_top = INT64_MIN;
	int q = g->nout - 1, inner = g->inner;
	for (int c = 0; c < g->ncand; c++) {
		int i = g->cand[c];
		const box *bb = &d->b[i];
		if (q >= 0) {
			int dd = g->ord[q];
			if (x[q] < bb->lo[dd] || x[q] > bb->hi[dd] || (x[q] - bb->lo[dd]) % bb->g[dd] != 0)
				continue;
		}
		int64_t base = rowaddr + g->e * (d->shift ? d->shift[i] : 0), es = g->e * g->st[inner];
		if (bb->g[inner] * es > g->L && bb->hi[inner] > bb->lo[inner]) {
			/* a sparse row: one line per element */
			count += (bb->hi[inner] - bb->lo[inner]) / bb->g[inner] + 1;
			if (d->nb > 1)
				d->inexact = true;
			int64_t top = base + es * bb->hi[inner];
			if (top > sparse_top)
				sparse_top = top;
			continue;
		}
		if (ns == (int)(sizeof sg / sizeof sg[0])) {
			d->inexact = true;
			continue;
		}
		sg[ns].a = base + es * bb->lo[inner];
		sg[ns].z = base + es * bb->hi[inner] + g->e - 1;
		ns++;
	}
	/* a row of boxes costs its boxes once, each further shift its segments */
	d->m->work += 1 + g->ncand + (int64_t)ns * d->nr;
	for (int i = 1; i < ns; i++)
		for (int j = i; j > 0 && sg[j].a < sg[j - 1].a; j--) {
			seg sw = sg[j];
			sg[j] = sg[j - 1];
			sg[j - 1] = sw;
		}
	/* a shift moves every segment alike: the order holds for all of them */
	for (int k = 0; k < d->nr; k++) {
		int64_t r = d->r[k], lst = last[k], n = count;
		if (sparse_top != INT64_MIN) {
			int64_t zl = ct_floordiv(sparse_top + r, g->L);
			if (zl > lst)
				lst = zl;
		}
		for (int i = 0; i < ns; i++) {
			int64_t la = ct_floordiv(sg[i].a + r, g->L), lz = ct_floordiv(sg[i].z + r, g->L);
			if (la > lst)
				n += lz - la + 1;
			else if (lz > lst)
				n += lz - lst;
			if (lz > lst)
				lst = lz;
		}
		last[k] = lst;
		cnt[k] += n;
	}
}

int64_t mdl_gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The total of R increments: inc[0], then inc[1 .. P] (summing to sum) repeating; inc[k] is
 * at inc[k * stride]. */
static int64_t periodic_total(const int64_t *inc, int stride, int64_t sum, int64_t P, int64_t R)
{
	int64_t full = (R - 1) / P, rem = (R - 1) % P, t = inc[0] + full * sum;
	for (int64_t k = 1; k <= rem; k++)
		t += inc[k * stride];
	return t;
}

/* Per shift: the new lines of the first P + 1 of R rows or planes, inc[k * nr + shift] (their
 * highest lines in last), added to cnt as the total of all R (the increments after the first
 * repeat with period P); last is then the highest line of the last one, tail. */
static void periodic_add(const dlctx *d, const int64_t *inc, int64_t P, int64_t R, const int64_t *tail,
                         int64_t *last, int64_t *cnt)
{
	for (int k = 0; k < d->nr; k++) {
		int64_t sum = 0;
		for (int64_t t = 1; t <= P; t++)
			sum += inc[t * d->nr + k];
		cnt[k] += periodic_total(inc + k, d->nr, sum, P, R);
		if (tail[k] > last[k])
			last[k] = tail[k];
	}
}

_Static_assert(MODEL_INC_SCRATCH == 2 * 129 * MAX_SHIFTS, "dl_boxes's scratch: two levels of 129 x MAX_SHIFTS");

/* Scratch for the increments of periodic_add: (P + 1) * nr entries, P <= 128; level 0 for
 * rows, 1 for planes. */
static int64_t *inc_scratch(dlctx *d, int level)
{
	return d->m->incs + (size_t)level * 129 * MAX_SHIFTS;
}

/* Lines of the rows x[q] = x0 .. x1-1 of the last outer dimension q (the other outer
 * coordinates fixed in x), all in the same boxes: after the first row, the new lines of a
 * row repeat with the period of the row address modulo the line. */
static void band_lines(dlctx *d, const rowgeo *g, int64_t *x, int64_t x0, int64_t x1, int64_t base,
                       int64_t *last, int64_t *cnt)
{
	int q = g->nout - 1, dd = g->ord[q];
	int64_t rs = g->e * g->st[dd], P = g->L / mdl_gcd64(ct_mod(rs, g->L) ? ct_mod(rs, g->L) : g->L, g->L);
	bool periodic = true;
	for (int c = 0; c < g->ncand && periodic; c++) {
		const box *bb = &d->b[g->cand[c]];
		if (bb->lo[dd] <= x0 && bb->hi[dd] >= x1 - 1)
			periodic = bb->g[dd] == 1;
	}
	int64_t R = x1 - x0;
	if (!periodic || R <= 2 * P + 1 || P > 128) {
		for (x[q] = x0; x[q] < x1; x[q]++)
			row_lines(d, g, x, base + rs * x[q], last, cnt);
		return;
	}
	int64_t *inc = inc_scratch(d, 0), tail[MAX_SHIFTS];
	memset(inc, 0, sizeof *inc * (size_t)((P + 1) * d->nr));
	for (int64_t k = 0; k <= P; k++) {
		x[q] = x0 + k;
		row_lines(d, g, x, base + rs * x[q], last, inc + k * d->nr);
	}
	/* the highest line is that of the band's last row */
	x[q] = x1 - 1;
	int64_t junk[MAX_SHIFTS] = {0}; /* counted into and thrown away: never read uninitialised */
	for (int k = 0; k < d->nr; k++)
		tail[k] = INT64_MIN;
	row_lines(d, g, x, base + rs * x[q], tail, junk);
	periodic_add(d, inc, P, R, tail, last, cnt);
}

#define MAX_CUTS (2 * 256 + 2)

/* Sort n cut points: insertion sort for a few, else Shell sort (Ciura's gaps; MAX_CUTS is
 * below 701). Many boxes make many cuts: an insertion sort of them was most of the model's
 * time, and qsort's comparator calls a tenth of it on the guarded 3-D stencils. */
static void sort_cuts(int64_t *cut, int n)
{
	static const int gaps[] = {301, 132, 57, 23, 10, 4, 1};
	for (size_t k = n > 16 ? 0 : sizeof gaps / sizeof gaps[0] - 1; k < sizeof gaps / sizeof gaps[0]; k++) {
		int gap = gaps[k];
		for (int i = gap; i < n; i++) {
			int64_t t = cut[i];
			int j = i;
			for (; j >= gap && cut[j - gap] > t; j -= gap)
				cut[j] = cut[j - gap];
			cut[j] = t;
		}
	}
}

/* The bands of one plane (all outer coordinates but the last fixed): the cuts of the last
 * outer dimension at the edges of the plane's boxes, kept from one plane to the next while its
 * boxes are the same (the common case). */
typedef struct planecuts {
	int64_t cut[MAX_CUTS];
	int nc, nprev;
	int prev[256];
	bool have;
} planecuts;

/* Whether box bb holds coordinate v of its dimension dd. */
static bool box_has(const box *bb, int dd, int64_t v)
{
	return v >= bb->lo[dd] && v <= bb->hi[dd] && (v - bb->lo[dd]) % bb->g[dd] == 0;
}

/* Lines of the plane at outer coordinates x[0 .. nout-2] (base: their address): its rows in
 * bands between the boxes' edges. in[0 .. nin) are the boxes that hold x[0 .. nout-3]
 * (dim_lines chose them): only coordinate nout-2 is left to test. */
static void plane_lines(dlctx *d, rowgeo *g, int64_t *x, const int *in, int nin, const int64_t *blo,
                        const int64_t *bhi, int64_t base, planecuts *pc, int64_t *last, int64_t *cnt)
{
	int nout = g->nout;
	g->ncand = 0;
	for (int c = 0; c < nin; c++)
		if (nout < 2 || box_has(&d->b[in[c]], g->ord[nout - 2], x[nout - 2]))
			g->cand[g->ncand++] = in[c];
	int dl = g->ord[nout - 1];
	bool same = pc->have && g->ncand == pc->nprev;
	for (int c = 0; c < g->ncand && same; c++)
		same = g->cand[c] == pc->prev[c];
	if (!same) {
		int nc = 0;
		pc->cut[nc++] = blo[nout - 1];
		pc->cut[nc++] = bhi[nout - 1] + 1;
		for (int c = 0; c < g->ncand && nc + 2 <= MAX_CUTS; c++) {
			pc->cut[nc++] = d->b[g->cand[c]].lo[dl];
			pc->cut[nc++] = d->b[g->cand[c]].hi[dl] + 1;
		}
		sort_cuts(pc->cut, nc);
		pc->nc = nc;
		pc->have = g->ncand <= (int)(sizeof pc->prev / sizeof pc->prev[0]);
		pc->nprev = g->ncand;
		for (int c = 0; c < g->ncand && pc->have; c++)
			pc->prev[c] = g->cand[c];
	}
	for (int i = 0; i + 1 < pc->nc; i++)
		if (pc->cut[i + 1] > pc->cut[i] && pc->cut[i] >= blo[nout - 1] && pc->cut[i + 1] <= bhi[nout - 1] + 1)
			band_lines(d, g, x, pc->cut[i], pc->cut[i + 1], base, last, cnt);
}

/* Lines of the planes x[q] = x0 .. x1-1 (q = nout - 2, the coordinates before it fixed in x,
 * base their address), all held by the same boxes in[0 .. nin), each box holding every one of
 * them: after the first plane, the new lines of a plane repeat with the period of the plane
 * address modulo the line (as band_lines does for rows). */
static void planes_lines(dlctx *d, rowgeo *g, int64_t *x, int64_t x0, int64_t x1, const int *in, int nin,
                         const int64_t *blo, const int64_t *bhi, int64_t base, planecuts *pc, int64_t *last,
                         int64_t *cnt)
{
	int q = g->nout - 2, dd = g->ord[q];
	int64_t ps = g->e * g->st[dd], pm = ct_mod(ps, g->L), P = g->L / mdl_gcd64(pm ? pm : g->L, g->L);
	int64_t R = x1 - x0;
	if (R <= 2 * P + 1 || P > 128) {
		for (x[q] = x0; x[q] < x1; x[q]++)
			plane_lines(d, g, x, in, nin, blo, bhi, base + ps * x[q], pc, last, cnt);
		return;
	}
	int64_t *inc = inc_scratch(d, 1), tail[MAX_SHIFTS];
	memset(inc, 0, sizeof *inc * (size_t)((P + 1) * d->nr));
	for (int64_t k = 0; k <= P; k++) {
		x[q] = x0 + k;
		plane_lines(d, g, x, in, nin, blo, bhi, base + ps * x[q], pc, last, inc + k * d->nr);
	}
	/* the highest line is that of the last plane */
	x[q] = x1 - 1;
	int64_t junk[MAX_SHIFTS] = {0}; /* counted into and thrown away: never read uninitialised */
	for (int k = 0; k < d->nr; k++)
		tail[k] = INT64_MIN;
	plane_lines(d, g, x, in, nin, blo, bhi, base + ps * x[q], pc, tail, junk);
	periodic_add(d, inc, P, R, tail, last, cnt);
}

/* The planes of dimension q = nout - 2 at the coordinates before it (fixed in x, base their
 * address): cut at the edges of the boxes that hold those coordinates, each stretch of planes
 * the same boxes hold whole counted by planes_lines, the others plane by plane. */
static void dim_lines(dlctx *d, rowgeo *g, int64_t *x, int *in, const int64_t *blo, const int64_t *bhi,
                      int64_t base, planecuts *pc, int64_t *last, int64_t *cnt)
{
	int q = g->nout - 2, dd = g->ord[q], nin = 0;
	for (int i = 0; i < d->nb; i++) {
		bool hold = true;
		for (int p = 0; p < q && hold; p++)
			hold = box_has(&d->b[i], g->ord[p], x[p]);
		if (hold)
			in[nin++] = i;
	}
	int64_t cut[MAX_CUTS];
	int nc = 0;
	cut[nc++] = blo[q];
	cut[nc++] = bhi[q] + 1;
	for (int c = 0; c < nin && nc + 2 <= MAX_CUTS; c++) {
		cut[nc++] = d->b[in[c]].lo[dd];
		cut[nc++] = d->b[in[c]].hi[dd] + 1;
	}
	bool exact_cuts = 2 * nin + 2 <= MAX_CUTS;
	sort_cuts(cut, nc);
	for (int i = 0; i + 1 < nc; i++) {
		int64_t x0 = cut[i], x1 = cut[i + 1];
		if (x1 <= x0 || x0 < blo[q] || x1 > bhi[q] + 1)
			continue;
		/* the same boxes hold every plane of the stretch when those that reach it are dense
		 * there (step 1) */
		bool whole = exact_cuts;
		for (int c = 0; c < nin && whole; c++) {
			const box *bb = &d->b[in[c]];
			if (bb->lo[dd] <= x0 && bb->hi[dd] >= x1 - 1)
				whole = bb->g[dd] == 1 || bb->hi[dd] == bb->lo[dd];
		}
		if (whole) {
			planes_lines(d, g, x, x0, x1, in, nin, blo, bhi, base, pc, last, cnt);
			continue;
		}
		for (x[q] = x0; x[q] < x1; x[q]++)
			plane_lines(d, g, x, in, nin, blo, bhi, base + g->e * g->st[dd] * x[q], pc, last, cnt);
	}
}

/* Distinct lines of the union of the boxes with every address shifted by d->r[k] bytes, into
 * cnt[k] for each of the d->nr shifts (one walk of the boxes for all of them). */
static void dl_boxes(dlctx *d, int64_t *cnt)
{
	model *m = d->m;
	int a = d->array, rank = m->rank[a];
	rowgeo g = {m->order + a * IR_MAX_RANK, m->stride + a * IR_MAX_RANK, m->elem[a], m->line, 0,
	            rank - 1, d->cand, 0};
	g.inner = g.ord[rank - 1];
	int nout = g.nout;
	int64_t blo[IR_MAX_RANK], bhi[IR_MAX_RANK], x[IR_MAX_RANK] = {0};
	for (int q = 0; q < nout; q++) {
		int dd = g.ord[q];
		blo[q] = INT64_MAX;
		bhi[q] = INT64_MIN;
		for (int i = 0; i < d->nb; i++) {
			if (d->b[i].lo[dd] < blo[q])
				blo[q] = d->b[i].lo[dd];
			if (d->b[i].hi[dd] > bhi[q])
				bhi[q] = d->b[i].hi[dd];
		}
		x[q] = blo[q];
	}
	int64_t last[MAX_SHIFTS];
	for (int k = 0; k < d->nr; k++) {
		last[k] = INT64_MIN;
		cnt[k] = 0;
	}
	if (nout == 0) {
		for (int i = 0; i < d->nb; i++)
			g.cand[g.ncand++] = i;
		row_lines(d, &g, x, 0, last, cnt);
		return;
	}
	planecuts cuts, *pc = &cuts;
	pc->have = false;
	int *in = d->in;
	if (nout == 1) {
		for (int i = 0; i < d->nb; i++)
			in[i] = i;
		plane_lines(d, &g, x, in, d->nb, blo, bhi, 0, pc, last, cnt);
		return;
	}
	/* every value of the coordinates before dimension nout - 2, odometer order */
	for (;;) {
		int64_t base = 0;
		for (int q = 0; q < nout - 2; q++)
			base += g.e * g.st[g.ord[q]] * x[q];
		dim_lines(d, &g, x, in, blo, bhi, base, pc, last, cnt);
		int q = nout - 3;
		while (q >= 0 && ++x[q] > bhi[q]) {
			x[q] = blo[q];
			q--;
		}
		if (q < 0)
			break;
	}
}

/* Collected accesses of a window. */
typedef struct wacc {
	const macc *acc;
	const mnode *stmt;
	const wpart *part;
} wacc;

typedef struct wlist_s wlist;

static bool collect(model *m, const mnode *x, const wpart *part, int array, wlist *wl)
{
	if (!x->per_iter[array])
		return true;
	if (!x->is_loop && x->nkids == 0) {
		int lo = part->x == x && part->ahi ? part->alo : 0, hi = part->x == x && part->ahi ? part->ahi : x->nacc;
		for (int i = lo; i < hi; i++) {
			if (x->acc[i].array != array)
				continue;
			if (wl->n == wl->cap) {
				int cap = wl->cap ? 2 * wl->cap : 16;
				wacc *v = realloc(wl->v, sizeof *v * (size_t)cap);
				if (!v)
					return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
				wl->v = v;
				wl->cap = cap;
			}
			wl->v[wl->n++] = (wacc){&x->acc[i], x, part};
		}
		return true;
	}
	for (int i = 0; i < x->nkids; i++)
		if (!collect(m, x->kids[i], part, array, wl))
			return false;
	return true;
}

/* Range of counter j for an access of a window at instance 0: [*lo, *lo + *len). */
static void counter_range(const wspec *w, const wacc *wa, int j, int64_t *lo, int64_t *len)
{
	const wpart *p = wa->part;
	bool own = p->x->is_loop && p->x->depth == j;
	for (int k = 0; k < p->npin; k++)
		if (p->pin_depth[k] == j) {
			*lo = p->pin_value[k];
			*len = 1;
			return;
		}
	if (own) {
		*lo = p->a;
		*len = p->b - p->a;
	} else if (j < w->fix) {
		*lo = j == w->fix - 1 ? p->xoff : 0;
		*len = 1;
	} else {
		*lo = 0;
		*len = wa->stmt->anc[j]->n;
	}
}

/* Values t < x with t = r (mod per). */
static int64_t below(int64_t x, int64_t r, int64_t per) { return x > r ? (x - r + per - 1) / per : 0; }

/* The filter of counter j in w, or -1. */
int mdl_filter_of(const wspec *w, int j)
{
	for (int i = 0; i < w->nflt; i++)
		if (w->flt_j[i] == j)
			return i;
	return -1;
}

/* The values counter j (< fix) of window w takes when its loop runs n times: how many, and
 * the k-th of them (in increasing order). */
int64_t mdl_inst_count(const wspec *w, int j, int64_t n)
{
	if (j == w->fix - 1 && w->mlast > 0)
		n = w->mlast;
	int f = mdl_filter_of(w, j);
	if (f < 0)
		return n;
	int64_t c = 0, per = w->flt_per[f], lo = w->flt_lo[f], hi = w->flt_hi[f] < n ? w->flt_hi[f] : n;
	for (int r = 0; r < per; r++)
		if (w->flt_mask[f] >> r & 1 && hi > lo)
			c += below(hi, r, per) - below(lo, r, per);
	return c;
}

static int64_t inst_value(const wspec *w, int j, int64_t k)
{
	int f = mdl_filter_of(w, j);
	if (f < 0)
		return k;
	uint32_t mask = w->flt_mask[f];
	int64_t per = w->flt_per[f], lo = w->flt_lo[f];
	/* skip the values of lo's block below lo, then whole blocks of pc values */
	int64_t k2 = k + (int64_t)__builtin_popcount(mask & ((1u << (lo % per)) - 1u));
	int pc = __builtin_popcount(mask), idx = (int)(k2 % pc), r = 0;
	for (;; r++)
		if ((mask >> r & 1) && idx-- == 0)
			break;
	return (lo / per + k2 / pc) * per + r;
}

/* The instance ranges m_j of a window (j < fix). */
static int64_t inst_range(const wspec *w, const wacc *wa, int j)
{
	return mdl_inst_count(w, j, wa->stmt->anc[j]->n);
}

/* Boxes of the accesses at instance 0 (plus per-access shifts s of the instance counters). */
static void make_boxes(dlctx *d, const wspec *w, const wlist *wl, const int64_t *s)
{
	model *m = d->m;
	int rank = m->rank[d->array];
	for (int i = 0; i < wl->n; i++) {
		const wacc *wa = &wl->v[i];
		const macc *ac = wa->acc;
		box *b = &d->b[i];
		if (ac->inexact)
			d->inexact = true;
		for (int dd = 0; dd < rank; dd++) {
			term tm[MODEL_MAX_DEPTH];
			int nt = 0;
			int64_t c = ac->c[dd];
			bool coupled = false;
			for (int j = 0; j < ac->depth; j++) {
				int64_t bt = ac->beta[dd * ac->depth + j], lo, len;
				if (!bt)
					continue;
				counter_range(w, wa, j, &lo, &len);
				c += bt * lo;
				if (s && j < w->fix)
					c += bt * s[j];
				tm[nt++] = (term){bt, len};
				for (int e2 = 0; e2 < rank && !coupled; e2++)
					coupled = e2 != dd && len > 1 && ac->beta[e2 * ac->depth + j] != 0;
			}
			if (!progression(c, tm, nt, &b->lo[dd], &b->hi[dd], &b->g[dd]) || coupled)
				d->inexact = true;
		}
	}
}

/* The step of box b in dimension dd, 0 when it is one point there. */
static int64_t box_step(const box *b, int dd) { return b->hi[dd] > b->lo[dd] ? b->g[dd] : 0; }

/* Whether box q's points are all in box p. */
static bool box_within(const box *p, const box *q, int rank)
{
	for (int dd = 0; dd < rank; dd++) {
		int64_t gp = box_step(p, dd), gq = box_step(q, dd);
		if (q->lo[dd] < p->lo[dd] || q->hi[dd] > p->hi[dd])
			return false;
		if (gp == 0 ? q->lo[dd] != p->lo[dd] || gq : (q->lo[dd] - p->lo[dd]) % gp || gq % gp)
			return false;
	}
	return true;
}

/* Merge box q into box p when their union is one box (equal in every dimension but one, where
 * the two progressions join into one); true when merged. */
static bool box_join(box *p, const box *q, int rank, int inner)
{
	int diff = -1;
	for (int dd = 0; dd < rank; dd++) {
		if (p->lo[dd] == q->lo[dd] && p->hi[dd] == q->hi[dd] && box_step(p, dd) == box_step(q, dd))
			continue;
		if (diff >= 0)
			return false;
		diff = dd;
	}
	if (diff < 0)
		return true; /* the same box */
	int dd = diff;
	int64_t gp = box_step(p, dd), gq = box_step(q, dd), g;
	if (!gp && !gq) {
		g = p->lo[dd] > q->lo[dd] ? p->lo[dd] - q->lo[dd] : q->lo[dd] - p->lo[dd];
		/* a new step along the row would make it sparse (row_lines counts those apart) */
		if (dd == inner && g != 1)
			return false;
	}
	else if (gp && gq && gp != gq)
		return false;
	else
		g = gp ? gp : gq;
	/* one progression of step g: aligned, and overlapping or touching */
	if ((q->lo[dd] - p->lo[dd]) % g || q->lo[dd] > p->hi[dd] + g || p->lo[dd] > q->hi[dd] + g)
		return false;
	p->lo[dd] = p->lo[dd] < q->lo[dd] ? p->lo[dd] : q->lo[dd];
	p->hi[dd] = p->hi[dd] > q->hi[dd] ? p->hi[dd] : q->hi[dd];
	p->g[dd] = g;
	return true;
}

/* Fewer boxes with the same union: drop the boxes inside another and join pairs whose union
 * is a box (the pieces of a split loop, the statements of one access), until none changes.
 * A row costs one look at each box, and the guarded stencils' pieces make dozens. */
static void merge_boxes(dlctx *d)
{
	int rank = d->m->rank[d->array], inner = d->m->order[d->array * IR_MAX_RANK + rank - 1];
	bool changed = true;
	/* passes until none changes (a join can make a box that swallows or joins another); a
	 * dropped box j takes the last one's place, which is looked at next */
	while (changed && d->nb > 1) {
		changed = false;
		/* a pair costs about a row of boxes: the work budget counts it */
		d->m->work += (int64_t)d->nb * (d->nb - 1) / 2;
		for (int i = 0; i < d->nb; i++)
			for (int j = i + 1; j < d->nb; j++) {
				box *p = &d->b[i], *q = &d->b[j];
				if (box_within(q, p, rank))
					*p = *q;
				else if (!box_within(p, q, rank) && !box_join(p, q, rank, inner))
					continue;
				d->b[j--] = d->b[--d->nb];
				changed = true;
			}
	}
}

/* Address shift coefficient (bytes per step) of counter j for access wa. */
int64_t mdl_gamma_of(const model *m, const macc *ac, int j)
{
	int a = ac->array;
	int64_t g = 0, t;
	bool over = false;
	for (int dd = 0; dd < m->rank[a]; dd++)
		over = over || __builtin_mul_overflow(ac->beta[dd * ac->depth + j], m->stride[a * IR_MAX_RANK + dd], &t) ||
		       __builtin_add_overflow(g, t, &g);
	over = over || __builtin_mul_overflow(g, m->elem[a], &g);
	/* a split of 2^63 - 1 (the edge fuzz family) gives steps no address can take: saturated */
	return over ? INT64_MAX : g;
}

/* The key of a window (with its array) as a flat list of integers; returns its length. */
static int spec_key(int array, const wspec *w, int64_t *key)
{
	int n = 0;
	key[n++] = array;
	key[n++] = w->fix;
	key[n++] = w->mlast;
	key[n++] = w->nflt;
	for (int i = 0; i < w->nflt; i++) {
		key[n++] = w->flt_j[i];
		key[n++] = w->flt_per[i];
		key[n++] = w->flt_mask[i];
		key[n++] = w->flt_lo[i];
		key[n++] = w->flt_hi[i];
	}
	key[n++] = w->np;
	for (int i = 0; i < w->np; i++) {
		const wpart *p = &w->p[i];
		key[n++] = (int64_t)(uintptr_t)p->x;
		key[n++] = p->a;
		key[n++] = p->b;
		key[n++] = p->xoff;
		key[n++] = p->alo * 4096 + p->ahi;
		key[n++] = p->npin;
		for (int k = 0; k < p->npin; k++) {
			key[n++] = p->pin_depth[k];
			key[n++] = p->pin_value[k];
		}
	}
	return n;
}

#define KEY_MAX (5 + 5 * MAX_FILTERS + MAX_PARTS * (6 + 2 * MAX_PINS))

static uint64_t hash_key(const int64_t *key, int n)
{
	/* four independent multiply chains: one chain is latency-bound on long keys, and the
	 * hash was a tenth of the model's time */
	uint64_t h[4] = {1469598103934665603ULL, 0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL,
	                 0x165667B19E3779F9ULL};
	int i = 0;
	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			h[k] = (h[k] ^ (uint64_t)key[i + k]) * 1099511628211ULL;
	for (; i < n; i++)
		h[0] = (h[0] ^ (uint64_t)key[i]) * 1099511628211ULL;
	uint64_t x = h[0] ^ (h[1] * 0xBF58476D1CE4E5B9ULL) ^ (h[2] * 0x94D049BB133111EBULL) ^
	             (h[3] * 0xD6E8FEB86659FD93ULL) ^ (uint64_t)n;
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 32);
}

static dlstat dl_sum_eval(model *m, int array, const wspec *w, bool *inexact);
static dlstat fp_sum(model *m, const wspec *w);

static bool memo_grow(model *m)
{
	int cap = m->capmemo ? 2 * m->capmemo : 4096;
	memo *nm = calloc((size_t)cap, sizeof *nm);
	if (!nm)
		return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	for (int i = 0; i < m->capmemo; i++) {
		if (!m->memo[i].key)
			continue;
		int j = (int)(m->memo[i].hash & (uint64_t)(cap - 1));
		while (nm[j].key)
			j = (j + 1) & (cap - 1);
		nm[j] = m->memo[i];
	}
	free(m->memo);
	m->memo = nm;
	m->capmemo = cap;
	return true;
}

/* Sum over the instances of window w of the distinct lines of array it touches (memoized
 * per line size). */
static dlstat dl_stat(model *m, int array, const wspec *w, bool *inexact)
{
	int64_t key[KEY_MAX];
	int n = spec_key(array, w, key);
	uint64_t h = hash_key(key, n);
	dlstat zero = {0, 0, 0};
	/* a lookup costs about as much as a hundred rows of boxes (measured on the random bench) */
	m->work += MODEL_LOOKUP_WORK;
	if (m->budget && m->work > m->budget && !m->st) {
		m->over_budget = true;
		m->st = CT_ERR_LIMIT;
	}
	if (m->deadline && m->work > m->deadline && !m->st) {
		m->bailing = true;
		m->fired = m->deadline;
		m->st = CT_ERR_LIMIT;
	}
	if (m->st)
		return zero;
	if (m->capmemo) {
		/* capmemo is a power of two */
		int i = (int)(h & (uint64_t)(m->capmemo - 1));
		for (; m->memo[i].key; i = (i + 1) & (m->capmemo - 1)) {
			memo *e = &m->memo[i];
			if (e->hash == h && e->n == n && memcmp(e->key, key, sizeof *key * (size_t)n) == 0) {
				if (e->inexact && inexact)
					*inexact = true;
				return (dlstat){e->sum, e->mn, e->mx};
			}
		}
	}
	bool ix = false;
	dlstat v = array < 0 ? fp_sum(m, w) : dl_sum_eval(m, array, w, &ix);
	if (ix && inexact)
		*inexact = true;
	if (m->st || (2 * (m->nmemo + 1) > m->capmemo && !memo_grow(m)))
		return zero;
	int64_t *k = ct_arena_alloc(&m->arena, sizeof *k * (size_t)n);
	if (!k) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		return zero;
	}
	memcpy(k, key, sizeof *k * (size_t)n);
	int i = (int)(h & (uint64_t)(m->capmemo - 1));
	while (m->memo[i].key)
		i = (i + 1) & (m->capmemo - 1);
	m->memo[i] = (memo){h, n, k, v.sum, v.mn, v.mx, ix};
	m->nmemo++;
	return v;
}

/* Sum over the instances of window w of the distinct lines of array it touches (memoized
 * per line size; array -1: all arrays). */
int64_t mdl_dl_sum(model *m, int array, const wspec *w, bool *inexact)
{
	return dl_stat(m, array, w, inexact).sum;
}

void mdl_memo_clear(model *m)
{
	/* the keys live in the arena */
	free(m->memo);
	m->memo = NULL;
	m->nmemo = m->capmemo = 0;
	free(m->rmemo);
	m->rmemo = NULL;
	m->nrmemo = m->caprmemo = 0;
}

/* Number of instances of window w. */
static int64_t spec_instances(const wspec *w)
{
	const mnode *x = w->p[0].x;
	int64_t n = 1;
	/* the counters 0 .. fix-1 are those of x's enclosing loops (x itself for a sliding
	 * window: fix - 1 == x->depth) */
	const mnode *y = x->is_loop && x->depth == w->fix - 1 ? x : x->parent;
	for (; y && y->is_loop; y = y->parent) {
		if (y->depth >= w->fix)
			continue;
		n *= mdl_inst_count(w, y->depth, y->n);
	}
	return n;
}

/* Add to h2 the histogram h of address residues (mod L) shifted by v0 + t * step for each t
 * in [0, cnt): the residues of a counter's values convolved with the others'. */
static void hist_shift(const int64_t *h, int64_t *h2, int64_t *nz, int64_t L, int64_t v0, int64_t step,
                       int64_t cnt)
{
	if (cnt <= 0)
		return;
	/* t * step mod L has period P; each of the first P values occurs cnt / P times, the
	 * first cnt % P once more */
	int64_t P = L / mdl_gcd64(step, L), full = cnt / P, rem = cnt % P;
	/* the histogram is sparse (one residue before the first counter): visit its support */
	int64_t nnz = 0;
	for (int64_t r = 0; r < L; r++)
		if (h[r])
			nz[nnz++] = r;
	for (int64_t t = 0; t < P; t++) {
		int64_t c = full + (t < rem), v = (v0 + t * step) % L;
		if (!c)
			continue;
		for (int64_t i = 0; i < nnz; i++) {
			int64_t r = nz[i] + v;
			h2[r >= L ? r - L : r] += h[nz[i]] * c;
		}
	}
}

/* Most line size whose per-residue counts are cached. */
#define RMEMO_MAX_LINE 256

static bool rmemo_grow(model *m)
{
	int cap = m->caprmemo ? 2 * m->caprmemo : 1024;
	rmemo *nm = calloc((size_t)cap, sizeof *nm);
	if (!nm)
		return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	for (int i = 0; i < m->caprmemo; i++) {
		if (!m->rmemo[i].key)
			continue;
		int j = (int)(m->rmemo[i].hash & (uint64_t)(cap - 1));
		while (nm[j].key)
			j = (j + 1) & (cap - 1);
		nm[j] = m->rmemo[i];
	}
	free(m->rmemo);
	m->rmemo = nm;
	m->caprmemo = cap;
	return true;
}

/* The per-residue counts of array's boxes in window w (its parts and fix; not its instances),
 * found or made (all -1); NULL when the line is too long to cache or out of memory. */
static rmemo *residue_cache(model *m, int array, const wspec *w)
{
	if (m->line > RMEMO_MAX_LINE)
		return NULL;
	int64_t key[KEY_MAX];
	int n = spec_key(array, w, key);
	/* drop the instances: mlast and the filters */
	int nf = w->nflt;
	memmove(key + 4, key + 4 + 5 * nf, sizeof *key * (size_t)(n - 4 - 5 * nf));
	n -= 5 * nf;
	key[2] = 0;
	key[3] = 0;
	uint64_t h = hash_key(key, n);
	if (m->caprmemo) {
		int i = (int)(h & (uint64_t)(m->caprmemo - 1));
		for (; m->rmemo[i].key; i = (i + 1) & (m->caprmemo - 1)) {
			rmemo *e = &m->rmemo[i];
			if (e->hash == h && e->n == n && memcmp(e->key, key, sizeof *key * (size_t)n) == 0)
				return e;
		}
	}
	if (2 * (m->nrmemo + 1) > m->caprmemo && !rmemo_grow(m))
		return NULL;
	int64_t *k = ct_arena_alloc(&m->arena, sizeof *k * (size_t)n);
	int64_t *val = ct_arena_alloc(&m->arena, sizeof *val * (size_t)m->line);
	uint8_t *ix = ct_arena_alloc(&m->arena, (size_t)m->line);
	if (!k || !val || !ix) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(k, key, sizeof *k * (size_t)n);
	for (int64_t r = 0; r < m->line; r++)
		val[r] = -1;
	memset(ix, 0, (size_t)m->line);
	int i = (int)(h & (uint64_t)(m->caprmemo - 1));
	while (m->rmemo[i].key)
		i = (i + 1) & (m->caprmemo - 1);
	m->rmemo[i] = (rmemo){h, n, k, val, ix};
	m->nrmemo++;
	return &m->rmemo[i];
}

static dlstat dl_sum_eval(model *m, int array, const wspec *w, bool *inexact)
{
	wlist wl = m->scratch;
	wl.n = 0;
	for (int i = 0; i < w->np && !m->st; i++)
		collect(m, w->p[i].x, &w->p[i], array, &wl);
	m->scratch = wl;
	if (m->st || wl.n == 0)
		return (dlstat){0, 0, 0};
	dlctx d = {m, array, wl.n, NULL, NULL, false, NULL, NULL, 0, NULL};
	if (wl.n > m->capboxes) {
		free(m->boxes);
		m->capboxes = 2 * wl.n;
		m->boxes = malloc(sizeof *m->boxes * (size_t)m->capboxes);
		if (!m->boxes)
			m->capboxes = 0;
	}
	d.b = m->boxes;
	if (wl.n > m->capcand) {
		/* cand and in, capcand entries each */
		free(m->cand);
		m->capcand = 2 * wl.n;
		m->cand = malloc(sizeof *m->cand * (size_t)(2 * m->capcand));
		if (!m->cand)
			m->capcand = 0;
	}
	d.cand = m->cand;
	d.in = m->cand ? m->cand + m->capcand : NULL;
	d.shift = NULL;
	int64_t total = 0, mn = INT64_MAX, mx = 0;
	if (!d.b || !d.cand) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		return (dlstat){0, 0, 0};
	}
	/* do all accesses shift alike with the instance counters? */
	bool uniform = true;
	int64_t gam[MODEL_MAX_DEPTH];
	for (int j = 0; j < w->fix; j++) {
		gam[j] = mdl_gamma_of(m, wl.v[0].acc, j);
		for (int i = 1; i < wl.n && uniform; i++)
			if (mdl_gamma_of(m, wl.v[i].acc, j) != gam[j] &&
			    (inst_range(w, &wl.v[0], j) > 1 || inst_value(w, j, 0) != 0))
				uniform = false;
	}
	int64_t L = m->line;
	if (uniform) {
		int64_t *h = m->hist, *h2 = m->hist2;
		memset(h, 0, sizeof *h * (size_t)L);
		h[0] = 1;
		for (int j = 0; j < w->fix; j++) {
			int64_t mj = inst_range(w, &wl.v[0], j);
			if (mj == 1 && inst_value(w, j, 0) == 0)
				continue;
			memset(h2, 0, sizeof *h2 * (size_t)L);
			int f = mdl_filter_of(w, j);
			if (f < 0) {
				hist_shift(h, h2, m->nz, L, 0, ct_mod(gam[j], L), mj);
			} else {
				int64_t n = wl.v[0].stmt->anc[j]->n, per = w->flt_per[f], lo = w->flt_lo[f];
				if (j == w->fix - 1 && w->mlast > 0)
					n = w->mlast;
				if (w->flt_hi[f] < n)
					n = w->flt_hi[f];
				for (int r = 0; r < per; r++) {
					int64_t t0 = lo + ct_mod(r - lo, per); /* the first value >= lo */
					if ((w->flt_mask[f] >> r & 1) && n > t0)
						hist_shift(h, h2, m->nz, L, ct_mod(t0 * gam[j], L), ct_mod(per * gam[j], L),
						           (n - t0 + per - 1) / per);
				}
			}
			memcpy(h, h2, sizeof *h * (size_t)L);
		}
		/* the boxes are those of instance 0 whatever the instances: windows that differ only
		 * in them (a split's classes) share the counts per residue */
		rmemo *rc = residue_cache(m, array, w);
		if (m->st)
			return (dlstat){0, 0, 0};
		/* the residues not cached yet, counted by one walk of the boxes (m->nz and m->hist2
		 * are free again: the residues and their counts) */
		int64_t *todo = m->nz, *cnt = m->hist2;
		int nr = 0;
		for (int64_t r = 0; r < L; r++)
			if (h[r] && !(rc && rc->val[r] >= 0))
				todo[nr++] = r;
		/* whether a walk is inexact does not depend on the shift (its rows and boxes do not) */
		bool walk_ix = false, any_ix = false;
		if (nr) {
			d.inexact = false;
			make_boxes(&d, w, &wl, NULL);
			merge_boxes(&d);
			bool box_ix = d.inexact;
			for (int k0 = 0; k0 < nr; k0 += MAX_SHIFTS) {
				d.nr = nr - k0 < MAX_SHIFTS ? nr - k0 : MAX_SHIFTS;
				d.r = todo + k0;
				d.inexact = box_ix;
				dl_boxes(&d, cnt + k0);
				walk_ix = walk_ix || d.inexact;
			}
		}
		int t = 0;
		for (int64_t r = 0; r < L; r++)
			if (h[r]) {
				int64_t v;
				if (t < nr && todo[t] == r) {
					v = cnt[t++];
					if (rc) {
						rc->val[r] = v;
						rc->ix[r] = walk_ix;
					}
					any_ix = any_ix || walk_ix;
				} else {
					v = rc->val[r];
					any_ix = any_ix || rc->ix[r];
				}
				total += h[r] * v;
				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
		d.inexact = any_ix;
	} else {
		/* enumerate the instances (or sample them) with per-access shifts */
		int64_t ninst = spec_instances(w);
		d.inexact = ninst > MODEL_ENUM_LIMIT;
		int64_t samples = ninst > MODEL_ENUM_LIMIT ? MODEL_SAMPLES : ninst;
		int64_t s[MODEL_MAX_DEPTH];
		bool ix = d.inexact;
		double acc = 0;
		for (int64_t k = 0; k < samples; k++) {
			int64_t idx = samples == ninst ? k : (int64_t)((double)k * (double)ninst / (double)samples);
			for (int j = w->fix - 1; j >= 0; j--) {
				int64_t mj = inst_range(w, &wl.v[0], j);
				s[j] = inst_value(w, j, idx % mj);
				idx /= mj;
			}
			d.inexact = false;
			d.nb = wl.n;
			make_boxes(&d, w, &wl, s);
			merge_boxes(&d);
			ix = ix || d.inexact;
			int64_t v, r0 = 0;
			d.nr = 1;
			d.r = &r0;
			dl_boxes(&d, &v);
			acc += (double)v;
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		d.inexact = ix;
		total = (int64_t)(acc * (double)ninst / (double)samples + 0.5);
	}
	if (d.inexact)
		*inexact = true;
	return (dlstat){total, mn == INT64_MAX ? 0 : mn, mx};
}


/* Sum over the instances of window w of its footprint in lines (all arrays); the bounds
 * add the arrays' own bounds. */
static dlstat fp_sum(model *m, const wspec *w)
{
	dlstat f = {0, 0, 0};
	for (int a = 0; a < m->na; a++) {
		bool any = false;
		for (int i = 0; i < w->np && !any; i++)
			any = w->p[i].x->per_iter[a] != 0;
		if (any) {
			dlstat d = dl_stat(m, a, w, NULL);
			f.sum += d.sum;
			f.mn += d.mn;
			f.mx += d.mx;
		}
	}
	return f;
}

/* Average footprint in lines (all arrays) of one instance of window w. */
double mdl_footprint(model *m, const wspec *w)
{
	double lo, hi;
	return mdl_footprint_stat(m, w, &lo, &hi);
}

double mdl_footprint_stat(model *m, const wspec *w, double *lo, double *hi)
{
	dlstat d = dl_stat(m, -1, w, NULL);
	*lo = (double)d.mn;
	*hi = (double)d.mx;
	int64_t ninst = spec_instances(w);
	return ninst ? (double)d.sum / (double)ninst : 0;
}
