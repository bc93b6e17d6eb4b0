/* model_parts.c: the cache model's reuse partitions (carried, sibling, statement, cold). */
#include "model/model_int.h"

model_part *mdl_new_part(model *m)
{
	model_lines *ml = m->ml;
	if (ml->nparts == m->capparts) {
		int cap = m->capparts ? 2 * m->capparts : 64;
		model_part *p = realloc(ml->parts, sizeof *p * (size_t)cap);
		if (!p) {
			mdl_fail(m, CT_ERR_NOMEM, "out of memory");
			return NULL;
		}
		ml->parts = p;
		m->capparts = cap;
	}
	return &ml->parts[ml->nparts++];
}

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
	model_part *p = mdl_new_part(m);
	if (!p)
		return false;
	if (!exact)
		m->inexact[array] = true;
	p->array = array;
	p->kind = kind;
	p->delta = delta;
	p->node = node ? node->lt : NULL;
	p->count = count;
	p->distance = kind == MR_COLD ? -1 : (int64_t)(dist + 0.5);
	p->distance_lo = kind == MR_COLD ? -1 : (int64_t)(lo < 0 ? 0 : lo + 0.5);
	p->distance_hi = kind == MR_COLD ? -1 : (int64_t)(hi + 0.5);
	/* the estimate (an average of footprints, less the line) can fall a little outside the
	 * bounds: the bounds hold, so clamp it into them (a cell whose least distance is the
	 * capacity is a miss, whatever the average says) */
	if (p->distance_lo > p->distance_hi)
		p->distance_lo = p->distance_hi;
	if (p->distance < p->distance_lo)
		p->distance = p->distance_lo;
	if (p->distance > p->distance_hi)
		p->distance = p->distance_hi;
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

static bool straddles(const model *m, double lo, double hi);
static bool stmt_grid(model *m, const mnode *x, int a, int64_t total, bool ix);

/* Reuse within one statement instance: one partition when its distance (below the instance's
 * footprint) is on one side of every capacity, else split by access (stmt_grid). */
static bool stmt_parts(model *m, const mnode *x)
{
	wspec w = one_part(x->depth, 0, x, 0, 0);
	/* the distance is below the most footprint of one instance (the average is no bound) */
	double flo, fhi, f = mdl_footprint_stat(m, &w, &flo, &fhi);
	for (int a = 0; a < m->na; a++) {
		if (!x->per_iter[a])
			continue;
		bool ix = false;
		int64_t h = x->inst * x->per_iter[a] - mdl_dl_sum(m, a, &w, &ix);
		if (h > 0 && straddles(m, 0, fhi - 1) && m->refine > 0 && x->nacc <= 4096) {
			if (!stmt_grid(m, x, a, h, ix))
				return false;
			continue;
		}
		if (!emit(m, a, MR_STMT, 0, x, h, f - 1, 0, fhi - 1, !ix && !straddles(m, 0, fhi - 1)))
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
	int a0, a1;                /* with stmt_units: the accesses a0 .. a1-1 are the units */
	int npin;
	int pin_depth[MAX_PINS];
	int64_t pin_value[MAX_PINS];
} useq;

static int64_t units_of(const mnode *x) { return x->is_loop ? x->n : 1; }

static int64_t seq_units(const useq *q)
{
	if (q->stmt_units)
		return q->a1 - q->a0;
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
		p.alo = head ? q->a0 : q->a1 - (int)u;
		p.ahi = head ? q->a0 + (int)u : q->a1;
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
			in->a0 = 0;
			in->a1 = x->nacc;
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
	int bisect;        /* grid_bisect splits in the cells above */
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

/* What is known of one position of one side of a cell's grid (the same axes and instances):
 * the lines of that side's window alone (v) and with the window between (vb); or, for the
 * window between alone, v. */
typedef struct sidek {
	bool hv, hb;
	int64_t v, vb;
} sidek;

/* dl_sum of window s, or the value k has for it (NULL: none kept). */
static int64_t side_dl(model *m, int a, const wspec *s, sidek *k, bool with_between, bool *ix)
{
	if (!k)
		return mdl_dl_sum(m, a, s, ix);
	bool *h = with_between ? &k->hb : &k->hv;
	int64_t *v = with_between ? &k->vb : &k->v;
	if (!*h) {
		*v = mdl_dl_sum(m, a, s, ix);
		*h = true;
	}
	return *v;
}

/* Lines touched in the prev window (w) and in the next window (u), and not in between,
 * summed over the instances. ks, kp and kb keep the windows of w, of u and between alone for
 * the other corners that share them (NULL: none). */
static int64_t grid_common(grid *g, const axis *pa, int64_t w, const axis *na, int64_t u, sidek *ks, sidek *kp,
                           sidek *kb)
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
	int64_t s = side_dl(m, a, S, ks, false, &ix), p = side_dl(m, a, P, kp, false, &ix),
	        sp = mdl_dl_sum(m, a, SP, &ix);
	int64_t c = s + p - sp;
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
		/* S, P and SP as above (looked up once) */
		int64_t spb = s + p + side_dl(m, a, B, kb, false, &ix) - sp - side_dl(m, a, SB, ks, true, &ix) -
		              side_dl(m, a, PB, kp, true, &ix) + mdl_dl_sum(m, a, SPB, &ix);
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
	return mdl_footprint_stat(g->m, s, lo, hi);
}

/* Whether some capacity of the line size lies in (lo, hi]: the cell is undecided. */
static bool straddles(const model *m, double lo, double hi)
{
	for (int i = 0; i < m->ncaps; i++)
		if ((double)m->caps[i] > lo && (double)m->caps[i] <= hi)
			return true;
	return false;
}

/* What is known of one corner (w, u) of a cell: its grid_common and its footprint. A cell
 * hands its corners to the cells it splits into (the same grid, axes and instances), which
 * would otherwise look each one up again (three to seven memo lookups a corner). */
typedef struct corner {
	bool hc, hf;
	int64_t c;
	double f, lo, hi;
} corner;

static int64_t corner_common(grid *g, const axis *pa, int64_t w, const axis *na, int64_t u, corner *k,
                             sidek *ks, sidek *kp, sidek *kb)
{
	if (!k->hc) {
		k->c = grid_common(g, pa, w, na, u, ks, kp, kb);
		k->hc = true;
	}
	return k->c;
}

static double corner_fp(grid *g, const axis *pa, int64_t w, const axis *na, int64_t u, corner *k,
                        double *lo, double *hi)
{
	if (!k->hf) {
		k->f = grid_fp(g, pa, w, na, u, &k->lo, &k->hi);
		k->hf = true;
	}
	*lo = k->lo;
	*hi = k->hi;
	return k->f;
}

/* What a cell knows: its corners (w0, u0), (w0, u1), (w1, u0), (w1, u1), its sides' windows at
 * w0, w1 and u0, u1, and the window between; NULL entries unknown. */
typedef struct cellk {
	corner *c[4];
	sidek *row[2], *col[2], *b;
} cellk;

static bool grid_inside(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, bool prev_side, int depth, const cellk *known, bool *done);
static bool grid_emit(grid *g, int64_t cnt, double est, double lo, double hi);

/* gcd of g and the address shifts (bytes, mod the line) per step of counter j of the
 * accesses below x. */
static int64_t shift_gcd(const model *m, const mnode *x, int j, int64_t g)
{
	for (int i = 0; i < x->nacc; i++)
		if (x->acc[i].depth > j)
			g = mdl_gcd64(g, ct_mod(mdl_gamma_of(m, &x->acc[i], j), m->line));
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
                      int64_t u1, int depth, const cellk *known);

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
		ok = grid_cell(g, pa, w0, w1, na, u0, u1, depth + 1, NULL);
	}
	g->base.flt_mask[f] = mask;
	return ok;
}

/* Refine the cell on filter f's range below mid, then from mid on (the range restored). */
static bool split_halves(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                         int64_t u1, int depth, int f, int64_t mid)
{
	wspec *base = &g->base;
	int64_t lo0 = base->flt_lo[f], hi0 = base->flt_hi[f];
	base->flt_hi[f] = mid;
	bool ok = grid_cell(g, pa, w0, w1, na, u0, u1, depth + 1, NULL);
	base->flt_hi[f] = hi0;
	if (ok) {
		base->flt_lo[f] = mid;
		ok = grid_cell(g, pa, w0, w1, na, u0, u1, depth + 1, NULL);
		base->flt_lo[f] = lo0;
	}
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
	return split_halves(g, pa, w0, w1, na, u0, u1, depth, f, mid);
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
		int f = mdl_filter_of(base, j);
		if (!y || (f < 0 && base->nflt == MAX_FILTERS) || mdl_inst_count(base, j, y->n) < 2)
			continue;
		int64_t gj = 0;
		for (int i = 0; i < s->np; i++)
			gj = shift_gcd(m, s->p[i].x, j, gj);
		ccounter c = {j, f, y->n, m->line / mdl_gcd64(m->line, gj)};
		if (j == base->fix - 1 && base->mlast > 0)
			c.n = base->mlast;
		out[nc++] = c;
	}
	return nc;
}

/* A new filter of counter j in w: the residues in mask (mod per) of [0, hi); its slot. */
static int add_filter(wspec *w, int j, int64_t per, uint32_t mask, int64_t hi)
{
	int f = w->nflt++;
	w->flt_j[f] = j;
	w->flt_per[f] = per;
	w->flt_mask[f] = mask;
	w->flt_lo[f] = 0;
	w->flt_hi[f] = hi;
	return f;
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
			f = add_filter(base, j, 1, 1, n);
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
#define MODEL_FORCED 4

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
			f = add_filter(base, j, per, (uint32_t)((1ull << per) - 1), INT64_MAX);
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

/* The very last resort, for a cell of few reuses that still straddles: its reuses are a few
 * instances among many, whose footprints differ; halve the range of an instance counter even
 * where the halves have the same bounds, so that the halves without reuse drop out and the
 * bounds close on the instances that have it. */
#define MODEL_BISECT_COUNT 64
#define MODEL_BISECT_DEPTH 40

static bool grid_bisect(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, int depth, bool *done)
{
	wspec *base = &g->base;
	ccounter cs[MAX_CELL_COUNTERS];
	*done = false;
	if (g->bisect >= MODEL_BISECT_DEPTH)
		return true;
	int nc = cell_counters(g, pa, w1, na, u1, cs);
	for (int c = 0; c < nc; c++) {
		int j = cs[c].j, f = cs[c].f;
		int64_t n = cs[c].n;
		bool fresh = f < 0;
		if (fresh) {
			f = add_filter(base, j, 1, 1, n);
		}
		int64_t lo0 = base->flt_lo[f], hi0 = base->flt_hi[f] < n ? base->flt_hi[f] : n;
		if (mdl_inst_count(base, j, n) < 2 || hi0 - lo0 < 2) {
			if (fresh)
				base->nflt--;
			continue;
		}
		*done = true;
		g->bisect++;
		bool ok = split_halves(g, pa, w0, w1, na, u0, u1, depth, f, lo0 + (hi0 - lo0) / 2);
		g->bisect--;
		if (fresh)
			base->nflt--;
		return ok;
	}
	return true;
}

/* The corners of a cell and of its halves: t[i][j] at (xs[i], ys[j]), the cell's own at i, j in
 * {0, 2}, its midpoints at 1. */
typedef struct ctable {
	int64_t xs[3], ys[3];
	corner *t[3][3];
	corner own[3][3];
	sidek *row[3], *col[3], *b;  /* the sides' windows at xs[i] and ys[j], and between */
	sidek ownrow[3], owncol[3], ownb;
} ctable;

/* The reuse of the cell (xs[i0], xs[i1]] x (ys[j0], ys[j1]]. */
static int64_t tab_count(grid *g, const axis *pa, const axis *na, ctable *T, int i0, int i1, int j0, int j1)
{
	return corner_common(g, pa, T->xs[i1], na, T->ys[j1], T->t[i1][j1], T->row[i1], T->col[j1], T->b) -
	       corner_common(g, pa, T->xs[i0], na, T->ys[j1], T->t[i0][j1], T->row[i0], T->col[j1], T->b) -
	       corner_common(g, pa, T->xs[i1], na, T->ys[j0], T->t[i1][j0], T->row[i1], T->col[j0], T->b) +
	       corner_common(g, pa, T->xs[i0], na, T->ys[j0], T->t[i0][j0], T->row[i0], T->col[j0], T->b);
}

static double tab_fp(grid *g, const axis *pa, const axis *na, ctable *T, int i, int j, double *lo, double *hi)
{
	return corner_fp(g, pa, T->xs[i], na, T->ys[j], T->t[i][j], lo, hi);
}

/* Refine the sub-cell (xs[i0], xs[i1]] x (ys[j0], ys[j1]] with the corners and sides known so far. */
static bool tab_cell(grid *g, const axis *pa, const axis *na, ctable *T, int i0, int i1, int j0, int j1,
                     int depth)
{
	cellk k = {{T->t[i0][j0], T->t[i0][j1], T->t[i1][j0], T->t[i1][j1]},
	           {T->row[i0], T->row[i1]}, {T->col[j0], T->col[j1]}, T->b};
	return grid_cell(g, pa, T->xs[i0], T->xs[i1], na, T->ys[j0], T->ys[j1], depth, &k);
}

static bool grid_cell(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                      int64_t u1, int depth, const cellk *known)
{
	ctable T;
	memset(&T, 0, sizeof T);
	T.xs[0] = w0;
	T.xs[1] = w0 + (w1 - w0) / 2;
	T.xs[2] = w1;
	T.ys[0] = u0;
	T.ys[1] = u0 + (u1 - u0) / 2;
	T.ys[2] = u1;
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 3; j++)
			T.t[i][j] = &T.own[i][j];
		T.row[i] = &T.ownrow[i];
		T.col[i] = &T.owncol[i];
	}
	T.b = &T.ownb;
	if (known) {
		for (int c = 0; c < 4; c++)
			if (known->c[c])
				T.t[c / 2 * 2][c % 2 * 2] = known->c[c];
		for (int c = 0; c < 2; c++) {
			if (known->row[c])
				T.row[2 * c] = known->row[c];
			if (known->col[c])
				T.col[2 * c] = known->col[c];
		}
		if (known->b)
			T.b = known->b;
	}
	int64_t cnt = tab_count(g, pa, na, &T, 0, 2, 0, 2);
	if (cnt <= 0 || g->m->st)
		return !g->m->st;
	/* the distance of a line in the cell lies between the footprints of the windows at
	 * the cell's inner and outer corners (between included): the inner window lies between
	 * source and target and holds no copy of the line (else the cell would not count it),
	 * the outer one holds it once; the least of the inner one and the most of the outer one
	 * bound the distance, their averages estimate it */
	double l0, h0, l1, h1;
	double f0 = tab_fp(g, pa, na, &T, 0, 0, &l0, &h0), f1 = tab_fp(g, pa, na, &T, 2, 2, &l1, &h1);
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
		cellk k = {{T.t[0][0], T.t[0][2], T.t[2][0], T.t[2][2]}, {T.row[0], T.row[2]}, {T.col[0], T.col[2]}, T.b};
		/* a side that is one unit: look inside it first, so both sides shrink together */
		bool ok = true;
		if (!split_u && split_w)
			ok = grid_inside(g, pa, w0, w1, na, u0, u1, false, depth, &k, &done);
		else if (!split_w && split_u)
			ok = grid_inside(g, pa, w0, w1, na, u0, u1, true, depth, &k, &done);
		if (done || !ok)
			return ok;
		/* a side whose reuse all lies in one half narrows for free */
		if (split_u) {
			int64_t c = tab_count(g, pa, na, &T, 0, 2, 0, 1);
			if (c == 0 || c == cnt)
				return tab_cell(g, pa, na, &T, 0, 2, c ? 0 : 1, c ? 1 : 2, depth + 1);
		}
		if (split_w) {
			int64_t c = tab_count(g, pa, na, &T, 0, 1, 0, 2);
			if (c == 0 || c == cnt)
				return tab_cell(g, pa, na, &T, c ? 0 : 1, c ? 1 : 2, 0, 2, depth + 1);
		}
		if (split_w && split_u)
			return tab_cell(g, pa, na, &T, 0, 1, 0, 1, depth + 1) && tab_cell(g, pa, na, &T, 0, 1, 1, 2, depth + 1) &&
			       tab_cell(g, pa, na, &T, 1, 2, 0, 1, depth + 1) && tab_cell(g, pa, na, &T, 1, 2, 1, 2, depth + 1);
		if (split_w)
			return tab_cell(g, pa, na, &T, 0, 1, 0, 2, depth + 1) && tab_cell(g, pa, na, &T, 1, 2, 0, 2, depth + 1);
		if (split_u)
			return tab_cell(g, pa, na, &T, 0, 2, 0, 1, depth + 1) && tab_cell(g, pa, na, &T, 0, 2, 1, 2, depth + 1);
		/* one unit on each side: look inside the wider one, else the other */
		double x0, x1;
		bool wider_w = tab_fp(g, pa, na, &T, 2, 0, &x0, &x1) >= tab_fp(g, pa, na, &T, 0, 2, &x0, &x1);
		ok = grid_inside(g, pa, w0, w1, na, u0, u1, wider_w, depth, &k, &done);
		if (ok && !done)
			ok = grid_inside(g, pa, w0, w1, na, u0, u1, !wider_w, depth, &k, &done);
		if (done || !ok)
			return ok;
		if (h0 > l0 || h1 > l1) {
			ok = grid_force(g, pa, w0, w1, na, u0, u1, depth, &done);
			if (done || !ok)
				return ok;
		}
		if ((h0 > l0 || h1 > l1) && cnt <= MODEL_BISECT_COUNT) {
			ok = grid_bisect(g, pa, w0, w1, na, u0, u1, depth, &done);
			if (done || !ok)
				return ok;
		}
	}
	return grid_emit(g, cnt, est, lo, hi);
}

/* Refine the cell inside the single unit of the prev (prev_side) or next side. *done is
 * false (and nothing happens) when that unit has nothing inside. */
static bool grid_inside(grid *g, const axis *pa, int64_t w0, int64_t w1, const axis *na, int64_t u0,
                        int64_t u1, bool prev_side, int depth, const cellk *known, bool *done)
{
	*done = false;
	axis *in = malloc(sizeof *in);
	if (!in)
		return mdl_fail(g->m, CT_ERR_NOMEM, "out of memory");
	bool ok = true;
	/* the inner axis at 0 units is the outer one at w0 (u0): the same windows, so those
	 * corners carry over */
	if (prev_side && w1 - w0 == 1 && axis_inside(pa, w0, in)) {
		*done = true;
		cellk k = {{known->c[0], known->c[1], NULL, NULL}, {known->row[0], NULL}, {known->col[0], known->col[1]},
		           known->b};
		ok = grid_cell(g, in, 0, seq_units(&in->q), na, u0, u1, depth + 1, &k);
	} else if (!prev_side && u1 - u0 == 1 && axis_inside(na, u0, in)) {
		*done = true;
		cellk k = {{known->c[0], NULL, known->c[2], NULL}, {known->row[0], known->row[1]}, {known->col[0], NULL},
		           known->b};
		ok = grid_cell(g, pa, w0, w1, in, 0, seq_units(&in->q), depth + 1, &k);
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
	bool ok = grid_cell(g, pa, 0, W, na, 0, U, 0, NULL);
	if (ok && total != g->found) {
		/* what the cells did not account for (an inexact footprint somewhere) */
		double l, h, f = grid_fp(g, pa, W, na, U, &l, &h) - 1;
		ok = emit(g->m, g->array, g->kind, g->delta, g->node, total - g->found, f / 2, 0, h - 1, false);
	}
	free(pa);
	return ok;
}

/* The reuse within one statement instance of array a (total accesses) split by the access
 * that reuses: access i finds its line in the accesses before it, a grid of those (the
 * suffixes) against access i, like siblings. */
static bool stmt_grid(model *m, const mnode *x, int a, int64_t total, bool ix)
{
	int64_t found = 0;
	for (int i = 1; i < x->nacc && !m->st; i++) {
		if (x->acc[i].array != a)
			continue;
		grid g;
		memset(&g, 0, sizeof g);
		g.m = m;
		g.array = a;
		g.base.fix = x->depth;
		g.kind = MR_STMT;
		g.node = x;
		useq qp = {.k = &x, .nk = 1, .stmt_units = true, .a0 = 0, .a1 = i};
		useq qn = {.k = &x, .nk = 1, .stmt_units = true, .a0 = i, .a1 = i + 1};
		wspec pre = g.base, only = g.base, withi = g.base;
		bool gix = ix;
		if (!seq_window(&qp, i, false, &pre) || !seq_window(&qn, 1, true, &only) ||
		    !seq_window(&qn, 1, true, &withi) || !seq_window(&qp, i, false, &withi))
			return mdl_fail(m, CT_ERR_LIMIT, "a statement window has too many parts");
		int64_t common = mdl_dl_sum(m, a, &pre, &gix) + mdl_dl_sum(m, a, &only, &gix) -
		                 mdl_dl_sum(m, a, &withi, &gix);
		g.inexact = gix;
		if (common > 0 && !grid_run(&g, &qp, &qn, common))
			return false;
		found += common;
	}
	if (found != total && !m->st) {
		/* the accesses' windows did not add up (an inexact footprint): the rest unrefined */
		wspec w = one_part(x->depth, 0, x, 0, 0);
		double f = mdl_footprint(m, &w);
		return emit(m, a, MR_STMT, 0, x, total - found, f - 1, 0, f - 1, false);
	}
	return !m->st;
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
	return mdl_footprint_stat(m, &w, lo, hi);
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
		return atot - mdl_dl_sum(m, a, &it, ix);
	}
	wspec head = one_part(D, 0, x, 0, dl);
	wspec big = one_part(D + 1, n - dl, x, 0, dl + 1);
	wspec small = one_part(D + 1, n - dl, x, 0, dl);
	return atot - mdl_dl_sum(m, a, &head, ix) - mdl_dl_sum(m, a, &big, ix) + mdl_dl_sum(m, a, &small, ix);
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
		int64_t hall = atot - mdl_dl_sum(m, a, &all, &ix);
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
		int64_t common = mdl_dl_sum(m, a, &pre, &ix) + mdl_dl_sum(m, a, &only, &ix) - mdl_dl_sum(m, a, &withi, &ix);
		g.inexact = ix;
		if (common > 0 && !grid_run(&g, &qp, &qn, common))
			return false;
	}
	return !m->st;
}

/* The reuse inside each instance of x that x itself carries: within a statement instance,
 * carried by loop x, or between the children of one iteration (of the run for the root). */
static bool own_parts(model *m, const mnode *x)
{
	if (!x->is_loop && x->nkids == 0 && x != &m->root)
		return stmt_parts(m, x);
	if (x->is_loop && !carried_parts(m, x))
		return false;
	int fix = x == &m->root ? 0 : x->depth + 1;
	for (int i = 1; i < x->nkids; i++)
		if (!sibling_parts(m, x, i, fix))
			return false;
	return !m->st;
}

/* The analysis's work allowed on the reuse a node carries before the node's accesses are
 * enumerated instead: MODEL_ENUM_RATIO units per access, half the work of walking them (so the
 * model never takes much longer than walking the kernel's accesses, however fine the grain at
 * which its distances cross a capacity), and at least MODEL_ENUM_FLOOR (a few tenths of a
 * millisecond: a small node's analysis finishes; bench_model --random measured the trade). */
#define MODEL_ENUM_RATIO 4
#define MODEL_ENUM_FLOOR 50000

/* own_parts within the share of work of a node of `cost` accesses. When the share runs out,
 * *over is set, the node's partitions and the arrays' inexact flags are as before, and the
 * status is clear again (its reuse is for enumeration). */
static bool own_parts_within(model *m, const mnode *x, int64_t cost, bool *over)
{
	int64_t allow = cost > (INT64_MAX / 4) / MODEL_ENUM_RATIO ? INT64_MAX / 4 : cost * MODEL_ENUM_RATIO;
	int64_t mine = m->work + (allow > MODEL_ENUM_FLOOR ? allow : MODEL_ENUM_FLOOR);
	int nparts = m->ml->nparts;
	bool *ix = malloc(sizeof *ix * (size_t)(m->na ? m->na : 1));
	if (!ix)
		return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	memcpy(ix, m->inexact, sizeof *ix * (size_t)m->na);
	m->deadline = mine;
	/* some steps finish their loop after a failure: the status tells */
	bool ok = own_parts(m, x) && !m->st;
	m->deadline = 0;
	*over = !ok && m->bailing && !m->over_budget && m->fired == mine;
	if (*over) {
		m->bailing = false;
		m->st = CT_OK;
		m->ml->nparts = nparts;
		memcpy(m->inexact, ix, sizeof *ix * (size_t)m->na);
	}
	free(ix);
	return ok;
}

/* The reuse inside each instance of node x: the reuse x carries analysed, then its children's,
 * top down; when the analysis of the reuse x carries passes its share of work (partial
 * enumeration), all of x's reuse counted from its accesses instead. */
static bool node_parts(model *m, const mnode *x)
{
	int64_t cost = m->enumerate != MODEL_ENUM_NEVER ? mdl_enum_cost(m, x) : -1;
	bool can = cost >= 0;
	bool always = m->enumerate == MODEL_ENUM_ALWAYS && x != &m->root && x->depth >= m->enum_depth;
	bool over = false, ok = true;
	if (can && m->enumerate == MODEL_ENUM_AUTO)
		ok = own_parts_within(m, x, cost, &over);
	else if (!(can && always))
		ok = own_parts(m, x) && !m->st;
	if (can && (always || over)) {
		m->enumerated += cost;
		return mdl_enum_node(m, x);
	}
	for (int i = 0; ok && i < x->nkids; i++)
		ok = node_parts(m, x->kids[i]);
	return ok;
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
		int64_t c = mdl_dl_sum(m, a, &w, &ix);
		if (!emit(m, a, MR_COLD, 0, NULL, c, -1, -1, -1, !ix))
			return false;
	}
	return true;
}

bool mdl_analyse_line(model *m, const sim_spec *spec, int64_t line, model_lines *ml)
{
	m->line = line;
	m->ncaps = 0;
	for (int l = 0; l < spec->nlevels; l++)
		if (spec->level[l].line == line)
			m->caps[m->ncaps++] = spec->level[l].size / line;
	m->ml = ml;
	m->capparts = 0;
	ml->line = line;
	mdl_memo_clear(m);
	free(m->hist);
	free(m->hist2);
	free(m->nz);
	m->incs = m->incs ? m->incs : malloc(sizeof *m->incs * MODEL_INC_SCRATCH);
	m->hist = malloc(sizeof *m->hist * (size_t)line);
	m->hist2 = malloc(sizeof *m->hist2 * (size_t)line);
	m->nz = malloc(sizeof *m->nz * (size_t)line);
	if (!m->hist || !m->hist2 || !m->nz || !m->incs)
		return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	return cold_parts(m) && node_parts(m, &m->root);
}
