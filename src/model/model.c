/* model.c: the analytical stack-distance model: its entry points (docs/MODEL.md; the parts in model_*.c). */
#include "model/model_int.h"

/* ------------------------------------------------------------ footprints */

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
} dlctx;

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

/* New lines of the row at outer coordinates x (address rowaddr), given the highest line
 * counted so far (*last, updated). Only the boxes in g->cand are looked at. */
static int64_t row_lines(dlctx *d, const rowgeo *g, const int64_t *x, int64_t rowaddr, int64_t *last)
{
	seg sg[64];
	int ns = 0;
	int64_t count = 0;
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
			int64_t zl = ct_floordiv(base + es * bb->hi[inner], g->L);
			if (zl > *last)
				*last = zl;
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
	for (int i = 1; i < ns; i++)
		for (int j = i; j > 0 && sg[j].a < sg[j - 1].a; j--) {
			seg sw = sg[j];
			sg[j] = sg[j - 1];
			sg[j - 1] = sw;
		}
	for (int i = 0; i < ns; i++) {
		int64_t la = ct_floordiv(sg[i].a, g->L), lz = ct_floordiv(sg[i].z, g->L);
		if (la > *last)
			count += lz - la + 1;
		else if (lz > *last)
			count += lz - *last;
		if (lz > *last)
			*last = lz;
	}
	return count;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Lines of the rows x[q] = x0 .. x1-1 of the last outer dimension q (the other outer
 * coordinates fixed in x), all in the same boxes: after the first row, the new lines of a
 * row repeat with the period of the row address modulo the line. */
static int64_t band_lines(dlctx *d, const rowgeo *g, int64_t *x, int64_t x0, int64_t x1, int64_t base,
                          int64_t *last)
{
	int q = g->nout - 1, dd = g->ord[q];
	int64_t rs = g->e * g->st[dd], P = g->L / gcd64(ct_mod(rs, g->L) ? ct_mod(rs, g->L) : g->L, g->L);
	bool periodic = true;
	for (int c = 0; c < g->ncand && periodic; c++) {
		const box *bb = &d->b[g->cand[c]];
		if (bb->lo[dd] <= x0 && bb->hi[dd] >= x1 - 1)
			periodic = bb->g[dd] == 1;
	}
	int64_t count = 0, R = x1 - x0;
	if (!periodic || R <= 2 * P + 1 || P > 128) {
		for (x[q] = x0; x[q] < x1; x[q]++)
			count += row_lines(d, g, x, base + rs * x[q], last);
		return count;
	}
	int64_t inc[129], sum = 0;
	for (int64_t k = 0; k <= P; k++) {
		x[q] = x0 + k;
		inc[k] = row_lines(d, g, x, base + rs * x[q], last);
		if (k)
			sum += inc[k];
	}
	int64_t full = (R - 1) / P, rem = (R - 1) % P;
	count = inc[0] + full * sum;
	for (int64_t k = 1; k <= rem; k++)
		count += inc[k];
	/* the highest line is that of the band's last row */
	x[q] = x1 - 1;
	int64_t tail = INT64_MIN;
	row_lines(d, g, x, base + rs * x[q], &tail);
	if (tail > *last)
		*last = tail;
	return count;
}

/* Distinct lines of the union of the boxes, every address shifted by r bytes. */
static int64_t dl_boxes(dlctx *d, int64_t r)
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
	int64_t count = 0, last = INT64_MIN;
	if (nout == 0) {
		for (int i = 0; i < d->nb; i++)
			g.cand[g.ncand++] = i;
		return row_lines(d, &g, x, r, &last);
	}
	for (;;) {
		/* the boxes that contain the outer coordinates but the last */
		int64_t base = r;
		for (int q = 0; q < nout - 1; q++)
			base += g.e * g.st[g.ord[q]] * x[q];
		g.ncand = 0;
		for (int i = 0; i < d->nb; i++) {
			const box *bb = &d->b[i];
			bool in = true;
			for (int q = 0; q < nout - 1 && in; q++) {
				int dd = g.ord[q];
				in = x[q] >= bb->lo[dd] && x[q] <= bb->hi[dd] && (x[q] - bb->lo[dd]) % bb->g[dd] == 0;
			}
			if (in)
				d->cand[g.ncand++] = i;
		}
		/* bands of the last outer dimension between the boxes' edges */
		int dl = g.ord[nout - 1];
		int64_t cut[2 * 256 + 2];
		int nc = 0;
		cut[nc++] = blo[nout - 1];
		cut[nc++] = bhi[nout - 1] + 1;
		for (int c = 0; c < g.ncand && nc + 2 <= (int)(sizeof cut / sizeof cut[0]); c++) {
			cut[nc++] = d->b[g.cand[c]].lo[dl];
			cut[nc++] = d->b[g.cand[c]].hi[dl] + 1;
		}
		for (int i = 1; i < nc; i++)
			for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
				int64_t t = cut[j];
				cut[j] = cut[j - 1];
				cut[j - 1] = t;
			}
		for (int i = 0; i + 1 < nc; i++)
			if (cut[i + 1] > cut[i] && cut[i] >= blo[nout - 1] && cut[i + 1] <= bhi[nout - 1] + 1)
				count += band_lines(d, &g, x, cut[i], cut[i + 1], base, &last);
		x[nout - 1] = blo[nout - 1];
		int q = nout - 2;
		while (q >= 0 && ++x[q] > bhi[q]) {
			x[q] = blo[q];
			q--;
		}
		if (q < 0)
			break;
	}
	return count;
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
static int filter_of(const wspec *w, int j)
{
	for (int i = 0; i < w->nflt; i++)
		if (w->flt_j[i] == j)
			return i;
	return -1;
}

/* The values counter j (< fix) of window w takes when its loop runs n times: how many, and
 * the k-th of them (in increasing order). */
static int64_t inst_count(const wspec *w, int j, int64_t n)
{
	if (j == w->fix - 1 && w->mlast > 0)
		n = w->mlast;
	int f = filter_of(w, j);
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
	int f = filter_of(w, j);
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
	return inst_count(w, j, wa->stmt->anc[j]->n);
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

/* Address shift coefficient (bytes per step) of counter j for access wa. */
static int64_t gamma_of(const model *m, const macc *ac, int j)
{
	int a = ac->array;
	int64_t g = 0;
	for (int dd = 0; dd < m->rank[a]; dd++)
		g += ac->beta[dd * ac->depth + j] * m->stride[a * IR_MAX_RANK + dd];
	return g * m->elem[a];
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
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)key[i]) * 1099511628211ULL;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	return h ^ (h >> 32);
}

/* A sum over the instances of a window, with the least and the most of one instance. */
typedef struct dlstat {
	int64_t sum, mn, mx;
} dlstat;

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
		int j = (int)(m->memo[i].hash % (uint64_t)cap);
		while (nm[j].key)
			j = (j + 1) % cap;
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
	if (m->capmemo) {
		int i = (int)(h % (uint64_t)m->capmemo);
		for (; m->memo[i].key; i = (i + 1) % m->capmemo) {
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
	int i = (int)(h % (uint64_t)m->capmemo);
	while (m->memo[i].key)
		i = (i + 1) % m->capmemo;
	m->memo[i] = (memo){h, n, k, v.sum, v.mn, v.mx, ix};
	m->nmemo++;
	return v;
}

/* Sum over the instances of window w of the distinct lines of array it touches (memoized
 * per line size; array -1: all arrays). */
static int64_t dl_sum(model *m, int array, const wspec *w, bool *inexact)
{
	return dl_stat(m, array, w, inexact).sum;
}

static void memo_clear(model *m)
{
	/* the keys live in the arena */
	free(m->memo);
	m->memo = NULL;
	m->nmemo = m->capmemo = 0;
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
		n *= inst_count(w, y->depth, y->n);
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
	int64_t P = L / gcd64(step, L), full = cnt / P, rem = cnt % P;
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

static dlstat dl_sum_eval(model *m, int array, const wspec *w, bool *inexact)
{
	wlist wl = m->scratch;
	wl.n = 0;
	for (int i = 0; i < w->np && !m->st; i++)
		collect(m, w->p[i].x, &w->p[i], array, &wl);
	m->scratch = wl;
	if (m->st || wl.n == 0)
		return (dlstat){0, 0, 0};
	dlctx d = {m, array, wl.n, NULL, NULL, false, NULL};
	if (wl.n > m->capboxes) {
		free(m->boxes);
		m->capboxes = 2 * wl.n;
		m->boxes = malloc(sizeof *m->boxes * (size_t)m->capboxes);
		if (!m->boxes)
			m->capboxes = 0;
	}
	d.b = m->boxes;
	if (wl.n > m->capcand) {
		free(m->cand);
		m->capcand = 2 * wl.n;
		m->cand = malloc(sizeof *m->cand * (size_t)m->capcand);
		if (!m->cand)
			m->capcand = 0;
	}
	d.cand = m->cand;
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
		gam[j] = gamma_of(m, wl.v[0].acc, j);
		for (int i = 1; i < wl.n && uniform; i++)
			if (gamma_of(m, wl.v[i].acc, j) != gam[j] &&
			    (inst_range(w, &wl.v[0], j) > 1 || inst_value(w, j, 0) != 0))
				uniform = false;
	}
	int64_t L = m->line;
	if (uniform) {
		make_boxes(&d, w, &wl, NULL);
		int64_t *h = m->hist, *h2 = m->hist2;
		memset(h, 0, sizeof *h * (size_t)L);
		h[0] = 1;
		for (int j = 0; j < w->fix; j++) {
			int64_t mj = inst_range(w, &wl.v[0], j);
			if (mj == 1 && inst_value(w, j, 0) == 0)
				continue;
			memset(h2, 0, sizeof *h2 * (size_t)L);
			int f = filter_of(w, j);
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
		for (int64_t r = 0; r < L; r++)
			if (h[r]) {
				int64_t v = dl_boxes(&d, r);
				total += h[r] * v;
				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
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
			make_boxes(&d, w, &wl, s);
			ix = ix || d.inexact;
			int64_t v = dl_boxes(&d, 0);
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
static double footprint(model *m, const wspec *w)
{
	int64_t ninst = spec_instances(w);
	return ninst ? (double)dl_sum(m, -1, w, NULL) / (double)ninst : 0;
}

/* The least and the most footprint of one instance of window w. */
static void footprint_range(model *m, const wspec *w, double *lo, double *hi)
{
	dlstat d = dl_stat(m, -1, w, NULL);
	*lo = (double)d.mn;
	*hi = (double)d.mx;
}
/* ------------------------------------------------------------ partitions */

static bool emit(model *m, int array, model_reuse kind, int delta, const mnode *node, int64_t count,
                 double dist, double lo, double hi, bool exact)
{
	if (count == 0)
		return true;
	if (count < 0) {
		/* only sampling noise makes a difference negative */
		m->inexact[array] = true;
		return true;
	}
	model_lines *ml = m->ml;
	if (ml->nparts == m->capparts) {
		int cap = m->capparts ? 2 * m->capparts : 64;
		model_part *p = realloc(ml->parts, sizeof *p * (size_t)cap);
		if (!p)
			return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		ml->parts = p;
		m->capparts = cap;
	}
	if (!exact)
		m->inexact[array] = true;
	model_part *p = &ml->parts[ml->nparts++];
	p->array = array;
	p->kind = kind;
	p->delta = delta;
	p->node = node ? node->lt : NULL;
	p->count = count;
	p->distance = kind == MR_COLD ? -1 : (int64_t)(dist + 0.5);
	p->distance_lo = kind == MR_COLD ? -1 : (int64_t)(lo < 0 ? 0 : lo + 0.5);
	p->distance_hi = kind == MR_COLD ? -1 : (int64_t)(hi + 0.5);
	if (p->distance_lo > p->distance)
		p->distance_lo = p->distance;
	if (p->distance_hi < p->distance)
		p->distance_hi = p->distance;
	p->exact = exact;
	return true;
}


static wspec one_part(int fix, int64_t mlast, const mnode *x, int64_t a, int64_t b)
{
	/* only the header and the parts in use are ever read: no memset of the whole */
	wspec w;
	w.fix = fix;
	w.mlast = mlast;
	w.nflt = 0;
	w.np = 1;
	w.p[0] = (wpart){.x = x, .a = a, .b = b};
	return w;
}

/* A node as a whole part. */
static wpart whole(const mnode *x) { return (wpart){.x = x, .b = x->is_loop ? x->n : 0}; }

/* Reuse within one statement instance. */
static bool stmt_parts(model *m, const mnode *x)
{
	wspec w = one_part(x->depth, 0, x, 0, 0);
	double f = footprint(m, &w);
	for (int a = 0; a < m->na; a++) {
		if (!x->per_iter[a])
			continue;
		bool ix = false;
		int64_t h = x->inst * x->per_iter[a] - dl_sum(m, a, &w, &ix);
		if (!emit(m, a, MR_STMT, 0, x, h, f - 1, 0, f - 1, !ix))
			return false;
	}
	return true;
}

/* A sequence of units: the kids k[0..nk) of one iteration (a loop kid is one unit per
 * iteration), below counter fix-1 at offset xoff when that counter slides, with some
 * counters between held at one value (the iteration a unit lies in). */
typedef struct useq {
	const mnode *const *k;
	int nk;                    /* with stmt_units: one statement whose accesses are the units */
	int64_t xoff;
	bool stmt_units;
	int npin;
	int pin_depth[MAX_PINS];
	int64_t pin_value[MAX_PINS];
} useq;

static int64_t units_of(const mnode *x) { return x->is_loop ? x->n : 1; }

static int64_t seq_units(const useq *q)
{
	if (q->stmt_units)
		return q->k[0]->nacc;
	int64_t u = 0;
	for (int i = 0; i < q->nk; i++)
		u += units_of(q->k[i]);
	return u;
}

static wpart seq_part(const useq *q, const mnode *x)
{
	wpart p = whole(x);
	p.xoff = q->xoff;
	p.npin = q->npin;
	memcpy(p.pin_depth, q->pin_depth, sizeof p.pin_depth);
	memcpy(p.pin_value, q->pin_value, sizeof p.pin_value);
	return p;
}

/* Append the parts of the first (head) or last (!head) u units of q to w. */
static bool seq_window(const useq *q, int64_t u, bool head, wspec *w)
{
	if (q->stmt_units) {
		if (u <= 0)
			return true;
		if (w->np == MAX_PARTS)
			return false;
		wpart p = seq_part(q, q->k[0]);
		int n = q->k[0]->nacc;
		p.alo = head ? 0 : n - (int)u;
		p.ahi = head ? (int)u : n;
		w->p[w->np++] = p;
		return true;
	}
	for (int c = 0; c < q->nk && u > 0; c++) {
		const mnode *x = q->k[head ? c : q->nk - 1 - c];
		int64_t n = units_of(x), take = u < n ? u : n;
		if (w->np == MAX_PARTS)
			return false;
		wpart p = seq_part(q, x);
		if (x->is_loop && take < n) {
			p.a = head ? 0 : n - take;
			p.b = head ? take : n;
		}
		w->p[w->np++] = p;
		u -= take;
	}
	return true;
}

/* The sequence inside unit idx (0-based from the start) of q: the kids of that iteration
 * of a loop kid. False when the unit is a statement (nothing inside) or pins run out. */
static bool seq_inside(const useq *q, int64_t idx, useq *in)
{
	if (q->stmt_units)
		return false;
	for (int c = 0; c < q->nk; c++) {
		const mnode *x = q->k[c];
		int64_t n = units_of(x);
		if (idx >= n) {
			idx -= n;
			continue;
		}
		if (!x->is_loop && x->nkids == 0 && x->nacc > 1) {
			/* a statement: its accesses, in trace order */
			*in = *q;
			in->k = &q->k[c];
			in->nk = 1;
			in->stmt_units = true;
			return true;
		}
		if (!x->is_loop || x->nkids == 0 || q->npin == MAX_PINS)
			return false;
		*in = *q;
		in->k = (const mnode *const *)x->kids;
		in->nk = x->nkids;
		in->pin_depth[in->npin] = x->depth;
		in->pin_value[in->npin++] = idx;
		return true;
	}
	return false;
}

/* One side of a reuse: fixed parts, plus the last (prev) or first (next) units of q. */
typedef struct axis {
	int nbase;
	wpart base[MAX_PARTS];
	useq q;
	bool head;
} axis;

static bool axis_window(const axis *ax, int64_t w, wspec *s)
{
	if (w <= 0 && ax->nbase == 0)
		return true;
	for (int i = 0; i < ax->nbase; i++) {
		if (s->np == MAX_PARTS)
			return false;
		s->p[s->np++] = ax->base[i];
	}
	return seq_window(&ax->q, w, ax->head, s);
}

/* The axis one level down: inside the unit between w0 and w0 + 1. */
static bool axis_inside(const axis *ax, int64_t w0, axis *in)
{
	int64_t U = seq_units(&ax->q);
	if (!seq_inside(&ax->q, ax->head ? w0 : U - w0 - 1, &in->q))
		return false;
	wspec s;
	s.fix = 0;
	s.mlast = 0;
	s.nflt = 0;
	s.np = 0;
	if (!axis_window(ax, w0, &s))
		return false;
	in->nbase = s.np;
	memcpy(in->base, s.p, sizeof s.p[0] * (size_t)s.np);
	in->head = ax->head;
	return true;
}

/* The reuse between a previous sequence and a next one (the lines the next one touches
 * first and the previous one touched last, none in between), split until each cell's
 * distance is on one side of every capacity. */
typedef struct grid {
	model *m;
	int array;
	wspec base;        /* fix and mlast; no parts */
	wspec between;     /* np == 0: nothing in between */
	model_reuse kind;
	int delta;
	const mnode *node; /* the loop that carries the reuse, or the parent of the siblings */
	bool inexact;
	int64_t found;
	int forced;        /* grid_force splits in the cells above */
} grid;

/* Start window s with the instances of base (fix, mlast, classes) and no parts. */
static void copy_instances(wspec *s, const wspec *base)
{
	s->fix = base->fix;
	s->mlast = base->mlast;
	s->nflt = base->nflt;
	memcpy(s->flt_j, base->flt_j, sizeof s->flt_j);
	memcpy(s->flt_per, base->flt_per, sizeof s->flt_per);
	memcpy(s->flt_mask, base->flt_mask, sizeof s->flt_mask);
	memcpy(s->flt_lo, base->flt_lo, sizeof s->flt_lo);
	memcpy(s->flt_hi, base->flt_hi, sizeof s->flt_hi);
	s->np = 0;
}

static bool grid_window(const grid *g, const axis *pa, int64_t w, const axis *na, int64_t u,
                        bool with_between, wspec *s)
{
	copy_instances(s, &g->base);
	if ((pa && !axis_window(pa, w, s)) || (na && !axis_window(na, u, s)))
		return false;
	for (int i = 0; with_between && i < g->between.np; i++) {
		if (s->np == MAX_PARTS)
			return false;
		s->p[s->np++] = g->between.p[i];
	}
	return true;
}

/* Lines touched in the prev window (w) and in the next window (u), and not in between,
 * summed over the instances. */
static int64_t grid_common(grid *g, const axis *pa, int64_t w, const axis *na, int64_t u)
{
	if ((w <= 0 && pa->nbase == 0) || (u <= 0 && na->nbase == 0))
		return 0;
	bool ix = false;
	model *m = g->m;
	int a = g->array;
	/* the windows live in the model's scratch, not on the stack: grid_cell recurses deeply
	 * and each window is a few KiB (fresh stack pages cost page faults) */
	wspec *ws = g->m->ws, *S = &ws[0], *P = &ws[1], *SP = &ws[2];
	if (!grid_window(g, pa, w, NULL, 0, false, S) || !grid_window(g, NULL, 0, na, u, false, P) ||
	    !grid_window(g, pa, w, na, u, false, SP)) {
		g->inexact = true;
		return 0;
	}
	int64_t c = dl_sum(m, a, S, &ix) + dl_sum(m, a, P, &ix) - dl_sum(m, a, SP, &ix);
	if (g->between.np) {
		/* |S n P n B| by inclusion-exclusion */
		wspec *B = &ws[3], *SB = &ws[4], *PB = &ws[5], *SPB = &ws[6];
		copy_instances(B, &g->base);
		for (int i = 0; i < g->between.np; i++)
			B->p[B->np++] = g->between.p[i];
		if (!grid_window(g, pa, w, NULL, 0, true, SB) || !grid_window(g, NULL, 0, na, u, true, PB) ||
		    !grid_window(g, pa, w, na, u, true, SPB)) {
			g->inexact = true;
			return c;
		}
		int64_t spb = dl_sum(m, a, S, &ix) + dl_sum(m, a, P, &ix) + dl_sum(m, a, B, &ix) -
		              dl_sum(m, a, SP, &ix) - dl_sum(m, a, SB, &ix) - dl_sum(m, a, PB, &ix) +
		              dl_sum(m, a, SPB, &ix);
		c -= spb;
	}
	if (ix)
		g->inexact = true;
	return c;
}

/* Footprint (all arrays) of the prev window w, the next window u and what lies between:
 * the average over the instances, and the least and the most of one instance. */
static double grid_fp(grid *g, const axis *pa, int64_t w, const axis *na, int64_t u, double *lo,
                      double *hi)
{
	wspec *s = &g->m->ws[7];
	*lo = *hi = 0;
	if (!grid_window(g, pa, w, na, u, true, s)) {
		g->inexact = true;
		return 0;
	}
	if (!s->np)
		return 0;
	footprint_range(g->m, s, lo, hi);
	return footprint(g->m, s);
}

/* Whether some capacity of the line size lies in (lo, hi]: the cell is undecided. */
static bool straddles(const model *m, double lo, double hi)
{
	for (int i = 0; i < m->ncaps; i++)
		if ((double)m->caps[i] > lo && (double)m->caps[i] <= hi)
			return true;
	return false;
}

static bool grid_inside(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, bool prev_side, int depth, bool *done);
static bool grid_emit(grid *g, int64_t cnt, double est, double lo, double hi);

/* Reuse of the cell (w0, w1] x (u0, u1]. */
static int64_t grid_count(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                          int64_t u1)
{
	return grid_common(g, pa, w1, na, u1) - grid_common(g, pa, w0, na, u1) -
	       grid_common(g, pa, w1, na, u0) + grid_common(g, pa, w0, na, u0);
}

/* gcd of g and the address shifts (bytes, mod the line) per step of counter j of the
 * accesses below x. */
static int64_t shift_gcd(const model *m, const mnode *x, int j, int64_t g)
{
	for (int i = 0; i < x->nacc; i++)
		if (x->acc[i].depth > j)
			g = gcd64(g, ct_mod(gamma_of(m, &x->acc[i], j), m->line));
	for (int i = 0; i < x->nkids && g != 1; i++)
		g = shift_gcd(m, x->kids[i], j, g);
	return g;
}

/* The loop of counter j above (or at) x. */
static const mnode *counter_loop(const mnode *x, int j)
{
	for (; x; x = x->parent)
		if (x->is_loop && x->depth == j)
			return x;
	return NULL;
}

static bool grid_cell(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                      int64_t u1, int depth);

/* The footprint bounds of a cell's inner and outer corners: equal ones refine alike. */
typedef struct csig {
	double l0, h0, l1, h1;
} csig;

static csig cell_sig(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                     int64_t u1)
{
	csig c;
	grid_fp(g, pa, w0, na, u0, &c.l0, &c.h0);
	grid_fp(g, pa, w1, na, u1, &c.l1, &c.h1);
	return c;
}

/* Group the residues of mask (mod per) in filter f of the grid's instances by the bounds of
 * the cell restricted to each: groups[i] are bit sets. Returns how many groups. */
static int class_groups(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, int f, uint32_t mask, uint32_t *groups)
{
	wspec *base = &g->base;
	csig sig[MAX_PERIOD];
	int ng = 0;
	for (int r = 0; r < base->flt_per[f]; r++) {
		if (!(mask >> r & 1))
			continue;
		base->flt_mask[f] = 1u << r;
		csig c = cell_sig(g, pa, w0, w1, na, u0, u1);
		int k = 0;
		while (k < ng && memcmp(&sig[k], &c, sizeof c) != 0)
			k++;
		if (k == ng) {
			sig[ng] = c;
			groups[ng++] = 0;
		}
		groups[k] |= 1u << r;
	}
	base->flt_mask[f] = mask;
	return ng;
}

/* Refine the cell once per residue group of filter f (groups from class_groups). */
static bool split_residues(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                           int64_t u1, int depth, int f, const uint32_t *groups, int ng)
{
	uint32_t mask = g->base.flt_mask[f];
	bool ok = true;
	for (int k = 0; k < ng && ok; k++) {
		g->base.flt_mask[f] = groups[k];
		ok = grid_cell(g, pa, w0, w1, na, u0, u1, depth + 1);
	}
	g->base.flt_mask[f] = mask;
	return ok;
}

/* Refine the cell once per half of filter f's range [lo, hi) when the halves' bounds differ
 * (instances whose accesses shift apart: the distance moves with the counter). *done is
 * false when they do not. */
static bool split_range(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, int depth, int f, int64_t hi, bool *done)
{
	wspec *base = &g->base;
	int64_t lo0 = base->flt_lo[f], hi0 = base->flt_hi[f], mid = lo0 + (hi - lo0) / 2;
	*done = false;
	if (hi - lo0 < 2)
		return true;
	base->flt_hi[f] = mid;
	csig a = cell_sig(g, pa, w0, w1, na, u0, u1);
	base->flt_hi[f] = hi0;
	base->flt_lo[f] = mid;
	csig b = cell_sig(g, pa, w0, w1, na, u0, u1);
	base->flt_lo[f] = lo0;
	if (memcmp(&a, &b, sizeof a) == 0)
		return true;
	*done = true;
	base->flt_hi[f] = mid;
	bool ok = grid_cell(g, pa, w0, w1, na, u0, u1, depth + 1);
	base->flt_hi[f] = hi0;
	if (ok) {
		base->flt_lo[f] = mid;
		ok = grid_cell(g, pa, w0, w1, na, u0, u1, depth + 1);
		base->flt_lo[f] = lo0;
	}
	return ok;
}

/* An instance counter of a cell that may be split: its depth, how many values its loop runs
 * (the window's mlast for the sliding one), the period (mod the line) of its address shifts,
 * and its filter slot (-1: none yet). */
typedef struct ccounter {
	int j, f;
	int64_t n, per;
} ccounter;

/* Counters a cell split considers (the innermost ones; the grid recurses, so this lives on
 * the stack many times over). */
#define MAX_CELL_COUNTERS 16

/* The counters of the cell with corners (w1, u1) that take at least two values and can get
 * a filter, innermost first, at most MAX_CELL_COUNTERS. Returns how many (0 when the window
 * is empty). */
static int cell_counters(grid *g, const axis *pa, int64_t w1, const axis *na, int64_t u1, ccounter *out)
{
	model *m = g->m;
	wspec *s = &m->ws[7], *base = &g->base;
	if (!grid_window(g, pa, w1, na, u1, true, s) || !s->np)
		return 0;
	int nc = 0;
	for (int j = base->fix - 1; j >= 0 && nc < MAX_CELL_COUNTERS; j--) {
		const mnode *y = counter_loop(s->p[0].x, j);
		int f = filter_of(base, j);
		if (!y || (f < 0 && base->nflt == MAX_FILTERS) || inst_count(base, j, y->n) < 2)
			continue;
		int64_t gj = 0;
		for (int i = 0; i < s->np; i++)
			gj = shift_gcd(m, s->p[i].x, j, gj);
		ccounter c = {j, f, y->n, m->line / gcd64(m->line, gj)};
		if (j == base->fix - 1 && base->mlast > 0)
			c.n = base->mlast;
		out[nc++] = c;
	}
	return nc;
}

/* Split a cell whose distance varies from instance to instance: by the residues (mod the
 * line) of an instance counter's address shifts, grouping the residues whose cells have the
 * same bounds (inside a class every instance of a uniformly shifting window touches the
 * same number of lines, so the bounds close), else by halves of the counter's range.
 * *done is false when no counter makes a difference. */
static bool grid_classes(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                         int64_t u1, int depth, bool *done)
{
	model *m = g->m;
	wspec *base = &g->base;
	ccounter cs[MAX_CELL_COUNTERS];
	int nc = cell_counters(g, pa, w1, na, u1, cs);
	*done = false;
	for (int c = 0; c < nc && !*done; c++) {
		int j = cs[c].j, f = cs[c].f;
		int64_t per = cs[c].per, n = cs[c].n;
		int saved_n = base->nflt;
		int64_t per_before = f < 0 ? 0 : base->flt_per[f];
		uint32_t mask_before = f < 0 ? 0 : base->flt_mask[f];
		if (f < 0) {
			f = base->nflt++;
			base->flt_j[f] = j;
			base->flt_per[f] = 1;
			base->flt_mask[f] = 1;
			base->flt_lo[f] = 0;
			base->flt_hi[f] = n;
		}
		if (base->flt_per[f] == 1 && per > 1 && per <= MAX_PERIOD) {
			base->flt_per[f] = per;
			base->flt_mask[f] = (uint32_t)((1ull << per) - 1);
		}
		bool ok = true;
		if (base->flt_per[f] > 1) {
			uint32_t groups[MAX_PERIOD];
			int ng = class_groups(g, pa, w0, w1, na, u0, u1, f, base->flt_mask[f], groups);
			if (ng > 1 && !m->st) {
				*done = true;
				ok = split_residues(g, pa, w0, w1, na, u0, u1, depth, f, groups, ng);
			}
		}
		if (!*done && ok && !m->st) {
			int64_t hi = base->flt_hi[f] < n ? base->flt_hi[f] : n;
			ok = split_range(g, pa, w0, w1, na, u0, u1, depth, f, hi, done);
		}
		/* split_residues and split_range restore the mask and range they change */
		if (base->nflt > saved_n) {
			base->nflt = saved_n;
		} else if (base->flt_per[f] != per_before) {
			base->flt_per[f] = per_before;
			base->flt_mask[f] = mask_before;
		}
		if (!ok || m->st)
			return false;
	}
	return true;
}

/* The last resort for a cell that still straddles through its instances: split the
 * innermost counter whose residues matter into single residues, even where each residue's
 * cell has the same bounds (the distance then depends on two counters' residues together,
 * which the next split tells apart). At most MODEL_FORCED such splits nest. */
#define MODEL_FORCED 2

static bool grid_force(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                       int64_t u1, int depth, bool *done)
{
	wspec *base = &g->base;
	ccounter cs[MAX_CELL_COUNTERS];
	*done = false;
	int nc = g->forced >= MODEL_FORCED ? 0 : cell_counters(g, pa, w1, na, u1, cs);
	for (int c = 0; c < nc; c++) {
		int j = cs[c].j, f = cs[c].f;
		int64_t per = cs[c].per;
		if (per < 2 || per > MAX_PERIOD || (f >= 0 && base->flt_per[f] != per) ||
		    (f >= 0 && __builtin_popcount(base->flt_mask[f]) < 2))
			continue;
		bool fresh = f < 0;
		if (fresh) {
			f = base->nflt++;
			base->flt_j[f] = j;
			base->flt_per[f] = per;
			base->flt_mask[f] = (uint32_t)((1ull << per) - 1);
			base->flt_lo[f] = 0;
			base->flt_hi[f] = INT64_MAX;
		}
		uint32_t mask = base->flt_mask[f], groups[MAX_PERIOD];
		int ng = 0;
		for (int r = 0; r < per; r++)
			if (mask >> r & 1)
				groups[ng++] = 1u << r;
		*done = true;
		g->forced++;
		bool ok = split_residues(g, pa, w0, w1, na, u0, u1, depth, f, groups, ng);
		g->forced--;
		if (fresh)
			base->nflt--;
		return ok;
	}
	return true;
}

static bool grid_cell(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                      int64_t u1, int depth)
{
	int64_t cnt = grid_count(g, pa, w0, w1, na, u0, u1);
	if (cnt <= 0 || g->m->st)
		return !g->m->st;
	/* the distance of a line in the cell lies between the footprints of the windows at
	 * the cell's inner and outer corners (between included): the inner window lies between
	 * source and target and holds no copy of the line (else the cell would not count it),
	 * the outer one holds it once; the least of the inner one and the most of the outer one
	 * bound the distance, their averages estimate it */
	double l0, h0, l1, h1;
	double f0 = grid_fp(g, pa, w0, na, u0, &l0, &h0), f1 = grid_fp(g, pa, w1, na, u1, &l1, &h1);
	double lo = l0, hi = h1 - 1, est = (f0 + f1) / 2 - 1;
	if (straddles(g->m, lo, hi) && depth < g->m->refine) {
		bool done = false;
		/* instances alone straddle a capacity: smaller cells would not close the bounds */
		if (straddles(g->m, l0, h0) || straddles(g->m, l1 - 1, h1 - 1)) {
			if (!grid_classes(g, pa, w0, w1, na, u0, u1, depth, &done))
				return false;
			if (done)
				return true;
		}
		bool split_w = w1 - w0 > 1, split_u = u1 - u0 > 1;
		/* reuse often lies along the diagonal (the same order on both sides): halving
		 * both sides at once keeps the cells square, and the off-diagonal ones empty */
		int64_t wm = w0 + (w1 - w0) / 2, um = u0 + (u1 - u0) / 2;
		/* a side that is one unit: look inside it first, so both sides shrink together */
		bool ok = true;
		if (!split_u && split_w)
			ok = grid_inside(g, pa, w0, w1, na, u0, u1, false, depth, &done);
		else if (!split_w && split_u)
			ok = grid_inside(g, pa, w0, w1, na, u0, u1, true, depth, &done);
		if (done || !ok)
			return ok;
		/* a side whose reuse all lies in one half narrows for free */
		if (split_u) {
			int64_t c = grid_count(g, pa, w0, w1, na, u0, um);
			if (c == 0 || c == cnt)
				return grid_cell(g, pa, w0, w1, na, c ? u0 : um, c ? um : u1, depth + 1);
		}
		if (split_w) {
			int64_t c = grid_count(g, pa, w0, wm, na, u0, u1);
			if (c == 0 || c == cnt)
				return grid_cell(g, pa, c ? w0 : wm, c ? wm : w1, na, u0, u1, depth + 1);
		}
		if (split_w && split_u)
			return grid_cell(g, pa, w0, wm, na, u0, um, depth + 1) &&
			       grid_cell(g, pa, w0, wm, na, um, u1, depth + 1) &&
			       grid_cell(g, pa, wm, w1, na, u0, um, depth + 1) &&
			       grid_cell(g, pa, wm, w1, na, um, u1, depth + 1);
		if (split_w)
			return grid_cell(g, pa, w0, wm, na, u0, u1, depth + 1) &&
			       grid_cell(g, pa, wm, w1, na, u0, u1, depth + 1);
		if (split_u)
			return grid_cell(g, pa, w0, w1, na, u0, um, depth + 1) &&
			       grid_cell(g, pa, w0, w1, na, um, u1, depth + 1);
		/* one unit on each side: look inside the wider one, else the other */
		double x0, x1;
		bool wider_w = grid_fp(g, pa, w1, na, u0, &x0, &x1) >= grid_fp(g, pa, w0, na, u1, &x0, &x1);
		ok = grid_inside(g, pa, w0, w1, na, u0, u1, wider_w, depth, &done);
		if (ok && !done)
			ok = grid_inside(g, pa, w0, w1, na, u0, u1, !wider_w, depth, &done);
		if (done || !ok)
			return ok;
		if (h0 > l0 || h1 > l1) {
			ok = grid_force(g, pa, w0, w1, na, u0, u1, depth, &done);
			if (done || !ok)
				return ok;
		}
	}
	return grid_emit(g, cnt, est, lo, hi);
}

/* Refine the cell inside the single unit of the prev (prev_side) or next side. *done is
 * false (and nothing happens) when that unit has nothing inside. */
static bool grid_inside(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, bool prev_side, int depth, bool *done)
{
	*done = false;
	axis *in = malloc(sizeof *in);
	if (!in)
		return mdl_fail(g->m, CT_ERR_NOMEM, "out of memory");
	bool ok = true;
	if (prev_side && w1 - w0 == 1 && axis_inside(pa, w0, in)) {
		*done = true;
		ok = grid_cell(g, in, 0, seq_units(&in->q), na, u0, u1, depth + 1);
	} else if (!prev_side && u1 - u0 == 1 && axis_inside(na, u0, in)) {
		*done = true;
		ok = grid_cell(g, pa, w0, w1, in, 0, seq_units(&in->q), depth + 1);
	}
	free(in);
	return ok;
}

static bool grid_emit(grid *g, int64_t cnt, double est, double lo, double hi)
{
	g->found += cnt;
	bool exact = !g->inexact && !straddles(g->m, lo, hi);
	return emit(g->m, g->array, g->kind, g->delta, g->node, cnt, est, lo, hi, exact);
}

/* Split `total` accesses of reuse between the sequences prev and next into cells of known
 * distance. */
static bool grid_run(grid *g, const useq *prev, const useq *next, int64_t total)
{
	axis *pa = calloc(2, sizeof *pa);
	if (!pa)
		return mdl_fail(g->m, CT_ERR_NOMEM, "out of memory");
	axis *na = pa + 1;
	pa->q = *prev;
	pa->head = false;
	na->q = *next;
	na->head = true;
	int64_t W = seq_units(prev), U = seq_units(next);
	bool ok = grid_cell(g, pa, 0, W, na, 0, U, 0);
	if (ok && total != g->found) {
		/* what the cells did not account for (an inexact footprint somewhere) */
		double l, h, f = grid_fp(g, pa, W, na, U, &l, &h) - 1;
		ok = emit(g->m, g->array, g->kind, g->delta, g->node, total - g->found, f / 2, 0, h - 1, false);
	}
	free(pa);
	return ok;
}

/* Average footprint (all arrays) of k consecutive iterations of loop x; *lo, *hi: the least
 * and the most of one instance. */
static double iter_footprint(model *m, const mnode *x, int64_t k, double *lo, double *hi)
{
	*lo = *hi = 0;
	if (k <= 0)
		return 0;
	if (k > x->n)
		k = x->n;
	wspec w = one_part(x->depth + 1, x->n - k + 1, x, 0, k);
	footprint_range(m, &w, lo, hi);
	return footprint(m, &w);
}

/* W_dl of loop x for array a: accesses whose line was touched in the same iteration or in
 * one of the dl before it (A - sum_inst [DL_dl(0) + sum_{s < n-dl} (DL_{dl+1}(s) - DL_dl(s))]). */
static int64_t within(model *m, const mnode *x, int a, int64_t dl, bool *ix)
{
	int64_t n = x->n, atot = x->inst * n * x->per_iter[a];
	int D = x->depth;
	if (dl >= n)
		dl = n - 1;
	if (dl <= 0) {
		wspec it = one_part(D + 1, n, x, 0, 1);
		return atot - dl_sum(m, a, &it, ix);
	}
	wspec head = one_part(D, 0, x, 0, dl);
	wspec big = one_part(D + 1, n - dl, x, 0, dl + 1);
	wspec small = one_part(D + 1, n - dl, x, 0, dl);
	return atot - dl_sum(m, a, &head, ix) - dl_sum(m, a, &big, ix) + dl_sum(m, a, &small, ix);
}

/* The count of sources exactly dl iterations back, split by the positions of source and
 * target in their iterations. */
static bool carried_delta(model *m, const mnode *x, int a, int64_t dl, int64_t count, bool ix)
{
	grid g;
	memset(&g, 0, sizeof g);
	g.m = m;
	g.array = a;
	g.base.fix = x->depth + 1;
	g.base.mlast = x->n - dl;
	useq qp = {.k = (const mnode *const *)x->kids, .nk = x->nkids};
	useq qn = qp;
	qn.xoff = dl;
	if (dl > 1) {
		g.between.np = 1;
		g.between.p[0] = (wpart){.x = x, .a = 1, .b = dl};
	}
	g.kind = MR_CARRIED;
	g.node = x;
	g.delta = (int)dl;
	g.inexact = ix;
	return grid_run(&g, &qp, &qn, count);
}

/* Sources between d0 + 1 and d1 iterations back (w0 = W_d0, w1 = W_d1): one partition when
 * the distance range is on one side of every capacity, else halve the range. */
static bool carried_range(model *m, const mnode *x, int a, int64_t d0, int64_t d1, int64_t w0,
                          int64_t w1, bool ix, int depth)
{
	if (w1 <= w0 || m->st)
		return !m->st;
	if (d1 == d0 + 1)
		return carried_delta(m, x, a, d1, w1 - w0, ix);
	/* at least d0 whole iterations lie between source and target, at most d1 + 1 */
	double l0, h0, l1, h1;
	double f0 = iter_footprint(m, x, d0, &l0, &h0), f1 = iter_footprint(m, x, d1 + 1, &l1, &h1);
	double lo = l0, hi = h1 - 1;
	if (!straddles(m, lo, hi) || depth >= m->refine)
		return emit(m, a, MR_FAR, (int)d1, x, w1 - w0, (f0 + f1) / 2 - 1, lo, hi,
		            !ix && !straddles(m, lo, hi));
	int64_t dm = d0 + (d1 - d0) / 2;
	int64_t wm = within(m, x, a, dm, &ix);
	return carried_range(m, x, a, d0, dm, w0, wm, ix, depth + 1) &&
	       carried_range(m, x, a, dm, d1, wm, w1, ix, depth + 1);
}

/* Reuse carried by loop x: sources 1 .. MODEL_MAX_DELTA iterations back one by one, farther
 * ones by ranges. */
static bool carried_parts(model *m, const mnode *x)
{
	int64_t n = x->n;
	int D = x->depth;
	if (n < 2)
		return true;
	wspec all = one_part(D, 0, x, 0, n);
	for (int a = 0; a < m->na; a++) {
		if (!x->per_iter[a])
			continue;
		bool ix = false;
		int64_t atot = x->inst * n * x->per_iter[a];
		int64_t hall = atot - dl_sum(m, a, &all, &ix);
		int64_t prev = within(m, x, a, 0, &ix);
		if (hall - prev <= 0)
			continue;
		int64_t maxd = n - 1 < MODEL_MAX_DELTA ? n - 1 : MODEL_MAX_DELTA, dl;
		for (dl = 1; dl <= maxd && prev < hall; dl++) {
			int64_t wv = within(m, x, a, dl, &ix);
			if (wv - prev > 0 && !carried_delta(m, x, a, dl, wv - prev, ix))
				return false;
			prev = wv;
		}
		if (prev < hall && !carried_range(m, x, a, dl - 1, n - 1, prev, hall, ix, 0))
			return false;
	}
	return !m->st;
}

/* Reuse of kid i of parent (an iteration of a loop, or the run) from earlier kids. */
static bool sibling_parts(model *m, const mnode *parent, int i, int fix)
{
	const mnode *ki = parent->kids[i];
	for (int a = 0; a < m->na; a++) {
		if (!ki->per_iter[a])
			continue;
		int p = i - 1;
		while (p >= 0 && !parent->kids[p]->per_iter[a])
			p--;
		if (p < 0)
			continue;
		bool ix = i > MAX_PARTS / 2;
		int lo0 = ix ? i - MAX_PARTS / 2 : 0;
		grid g;
		memset(&g, 0, sizeof g);
		g.m = m;
		g.array = a;
		g.base.fix = fix;
		useq qp = {.k = (const mnode *const *)parent->kids + lo0, .nk = i - lo0};
		useq qn = {.k = (const mnode *const *)parent->kids + i, .nk = 1};
		g.kind = MR_SIBLING;
		g.node = parent;
		wspec pre = g.base, only = g.base, withi;
		seq_window(&qp, seq_units(&qp), false, &pre);
		seq_window(&qn, seq_units(&qn), true, &only);
		withi = pre;
		seq_window(&qn, seq_units(&qn), true, &withi);
		int64_t common = dl_sum(m, a, &pre, &ix) + dl_sum(m, a, &only, &ix) - dl_sum(m, a, &withi, &ix);
		g.inexact = ix;
		if (common > 0 && !grid_run(&g, &qp, &qn, common))
			return false;
	}
	return !m->st;
}

static bool node_parts(model *m, const mnode *x)
{
	if (!x->is_loop && x->nkids == 0 && x != &m->root)
		return stmt_parts(m, x);
	if (x->is_loop && !carried_parts(m, x))
		return false;
	int fix = x == &m->root ? 0 : x->depth + 1;
	for (int i = 0; i < x->nkids; i++) {
		if (i > 0 && !sibling_parts(m, x, i, fix))
			return false;
		if (!node_parts(m, x->kids[i]))
			return false;
	}
	return true;
}

static bool cold_parts(model *m)
{
	wspec w;
	memset(&w, 0, sizeof w);
	w.fix = 0;
	for (int i = 0; i < m->root.nkids && w.np < MAX_PARTS; i++)
		w.p[w.np++] = whole(m->root.kids[i]);
	bool over = m->root.nkids > MAX_PARTS;
	for (int a = 0; a < m->na; a++) {
		if (!m->root.per_iter[a])
			continue;
		bool ix = over;
		int64_t c = dl_sum(m, a, &w, &ix);
		if (!emit(m, a, MR_COLD, 0, NULL, c, -1, -1, -1, !ix))
			return false;
	}
	return true;
}

static bool analyse_line(model *m, const sim_spec *spec, int64_t line, model_lines *ml)
{
	m->line = line;
	m->ncaps = 0;
	for (int l = 0; l < spec->nlevels; l++)
		if (spec->level[l].line == line)
			m->caps[m->ncaps++] = spec->level[l].size / line;
	m->ml = ml;
	m->capparts = 0;
	ml->line = line;
	memo_clear(m);
	free(m->hist);
	free(m->hist2);
	free(m->nz);
	m->hist = malloc(sizeof *m->hist * (size_t)line);
	m->hist2 = malloc(sizeof *m->hist2 * (size_t)line);
	m->nz = malloc(sizeof *m->nz * (size_t)line);
	if (!m->hist || !m->hist2 || !m->nz)
		return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	return cold_parts(m) && node_parts(m, &m->root);
}

/* ------------------------------------------------------------ entry points */

void model_result_free(model_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nlines; i++)
		free(r->lines[i].parts);
	free(r->array_accesses);
	free(r->array_exact);
	free(r->exec);
	memset(r, 0, sizeof *r);
}

const model_lines *model_for_line(const model_result *r, int64_t line)
{
	for (int i = 0; i < r->nlines; i++)
		if (r->lines[i].line == line)
			return &r->lines[i];
	return NULL;
}

int64_t model_misses(const model_lines *ml, int64_t lines, int array, bool *exact)
{
	int64_t n = 0;
	for (int i = 0; ml && i < ml->nparts; i++) {
		const model_part *p = &ml->parts[i];
		if (array >= 0 && p->array != array)
			continue;
		if (p->kind == MR_COLD || p->distance >= lines)
			n += p->count;
		if (exact && (!p->exact || (p->kind != MR_COLD && p->distance_lo < lines &&
		                            p->distance_hi >= lines)))
			*exact = false;
	}
	return n;
}

static bool setup(model *m, ct_looptree *t)
{
	m->t = t;
	m->ctx = t->k->ctx;
	ct_arena_init(&m->arena, m->ctx);
	m->na = t->narrays;
	int npv = t->k->nparams + t->nderived;
	m->pv = mdl_alloc(m, sizeof *m->pv * (size_t)(npv + 1));
	m->elem = mdl_alloc(m, sizeof *m->elem * (size_t)m->na);
	m->stride = mdl_alloc(m, sizeof *m->stride * (size_t)m->na * IR_MAX_RANK);
	m->order = mdl_alloc(m, sizeof *m->order * (size_t)m->na * IR_MAX_RANK);
	m->rank = mdl_alloc(m, sizeof *m->rank * (size_t)m->na);
	m->inexact = mdl_alloc(m, sizeof *m->inexact * (size_t)m->na);
	if (m->st)
		return false;
	if (!lt_param_values(t, m->pv))
		return mdl_fail(m, CT_ERR_LIMIT, "a derived value overflows 64 bits");
	for (int a = 0; a < m->na; a++) {
		int64_t count;
		ct_status st = lt_array_layout(t, m->pv, a, m->stride + a * IR_MAX_RANK, &count);
		if (st) {
			m->st = st;
			return false;
		}
		m->elem[a] = (int64_t)ct_dtype_size(t->arrays[a].type);
		m->rank[a] = t->arrays[a].rank;
		int *o = m->order + a * IR_MAX_RANK;
		const int64_t *s = m->stride + a * IR_MAX_RANK;
		for (int d = 0; d < m->rank[a]; d++)
			o[d] = d;
		/* most major first: decreasing stride (stable for equal strides of extent-1 dims) */
		for (int i = 1; i < m->rank[a]; i++)
			for (int j = i; j > 0 && s[o[j]] > s[o[j - 1]]; j--) {
				int tmp = o[j];
				o[j] = o[j - 1];
				o[j - 1] = tmp;
			}
	}
	return true;
}

/* True when statement x accesses the storages of entry e (a tail of a planned loop may read
 * another buffer than the main part). */
static bool same_storage(const model_exec *e, const mnode *x)
{
	if (e->nacc != x->nacc)
		return false;
	for (int i = 0; i < x->nacc && i < 16; i++)
		if (e->acc_array[i] != x->acc[i].array)
			return false;
	return true;
}

/* Add the executions of every statement and let below x to r (one entry per statement number
 * and storages: the pieces and tails of a statement are one unless a plan gave them different
 * buffers); false when out of memory. */
static bool add_execs(const mnode *x, model_result *r, int *cap)
{
	if (!x->is_loop && x->nkids == 0 && x->lt && x->lt->stmt) {
		const ir_node *s = x->lt->stmt;
		for (int i = 0; i < r->nexec; i++)
			if ((x->stmt_id > 0 ? r->exec[i].stmt_id == x->stmt_id : r->exec[i].node == s) &&
			    same_storage(&r->exec[i], x)) {
				r->exec[i].count += x->inst;
				return true;
			}
		if (r->nexec == *cap) {
			int nc = *cap ? 2 * *cap : 16;
			model_exec *ne = realloc(r->exec, sizeof *ne * (size_t)nc);
			if (!ne)
				return false;
			r->exec = ne;
			*cap = nc;
		}
		model_exec *e = &r->exec[r->nexec++];
		memset(e, 0, sizeof *e);
		e->stmt_id = x->stmt_id;
		e->node = s;
		e->count = x->inst;
		e->nacc = x->nacc;
		for (int i = 0; i < 16; i++)
			e->acc_array[i] = i < x->nacc ? x->acc[i].array : -1;
		return true;
	}
	for (int i = 0; i < x->nkids; i++)
		if (!add_execs(x->kids[i], r, cap))
			return false;
	return true;
}

ct_status model_analyse(ct_looptree *t, const sim_spec *spec, model_result *r)
{
	return model_analyse_depth(t, spec, MODEL_REFINE_FULL, r);
}

ct_status model_analyse_depth(ct_looptree *t, const sim_spec *spec, int refine, model_result *r)
{
	memset(r, 0, sizeof *r);
	model *m = calloc(1, sizeof *m);
	if (!m)
		return ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory");
	m->refine = refine < 0 ? 0 : refine;
	m->ws = malloc(sizeof *m->ws * 8);
	if (!m->ws) {
		free(m);
		return ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory");
	}
	ct_status st = CT_OK;
	if (!setup(m, t) || !mdl_build_list(m, t->roots, t->nroots, &m->root) ||
	    !mdl_count_accesses(m, &m->root, 1))
		goto out;
	r->narrays = m->na;
	r->array_accesses = calloc((size_t)m->na + 1, sizeof *r->array_accesses);
	r->array_exact = calloc((size_t)m->na + 1, sizeof *r->array_exact);
	if (!r->array_accesses || !r->array_exact) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int a = 0; a < m->na; a++) {
		r->array_accesses[a] = m->root.per_iter[a];
		r->accesses += m->root.per_iter[a];
	}
	int ecap = 0;
	if (!add_execs(&m->root, r, &ecap)) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int l = 0; l < spec->nlevels; l++) {
		int64_t line = spec->level[l].line;
		if (model_for_line(r, line))
			continue;
		model_lines *ml = &r->lines[r->nlines++];
		if (!analyse_line(m, spec, line, ml))
			goto out;
	}
	for (int a = 0; a < m->na; a++)
		r->array_exact[a] = !m->inexact[a];
out:
	st = m->st;
	memo_clear(m);
	free(m->scratch.v);
	free(m->boxes);
	free(m->cand);
	free(m->ws);
	free(m->hist);
	free(m->hist2);
	free(m->nz);
	ct_arena_free(&m->arena);
	free(m);
	if (st)
		model_result_free(r);
	return st;
}
