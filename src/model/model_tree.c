/* model_tree.c: the cache model's tree: constant trip counts, affine accesses, split conditions. */
#include "model/model_int.h"

bool mdl_fail(model *m, ct_status st, const char *what)
{
	if (!m->st)
		m->st = ct_error(m->ctx, st, "cache model: %s", what);
	return false;
}

void *mdl_alloc(model *m, size_t n)
{
	void *p = ct_arena_alloc(&m->arena, n ? n : 1);
	if (!p)
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	else
		memset(p, 0, n ? n : 1);
	return p;
}

static bool add_kid(model *m, mnode *parent, mnode *kid)
{
	if (parent->nkids == parent->capkids) {
		int cap = parent->capkids ? 2 * parent->capkids : 4;
		mnode **k = mdl_alloc(m, sizeof *k * (size_t)cap);
		if (!k)
			return false;
		if (parent->nkids)
			memcpy(k, parent->kids, sizeof *k * (size_t)parent->nkids);
		parent->kids = k;
		parent->capkids = cap;
	}
	kid->parent = parent;
	parent->kids[parent->nkids++] = kid;
	return true;
}

/* ------------------------------------------------------------ affine forms on the path */

/* The innermost path entry that loops over tree index id, or -1. */
static int path_of(const model *m, int id)
{
	for (int j = m->depth - 1; j >= 0; j--)
		if (m->path[j].lt->index == id)
			return j;
	return -1;
}

static bool affine_box(const model *m, const lt_node *n, int64_t *lo, int64_t *hi);

/* Value range of tree index id over the loops of subtree n (not on the path), and the step
 * of such a loop; *found stays false when there is none. False on overflow. */
static bool subtree_range(const model *m, const lt_node *n, int id, int64_t *lo, int64_t *hi,
                          int64_t *step, bool *found)
{
	if (!n)
		return true;
	if (n->kind == LT_LOOP && n->index == id) {
		bool ok = true;
		int64_t l, h;
		if (lt_affine_loop(n)) {
			if (!affine_box(m, n, &l, &h))
				return false;
		} else {
			l = bx_eval(n->lo, m->pv, &ok);
			h = bx_eval(n->hi, m->pv, &ok);
		}
		if (!ok)
			return false;
		if (h > l) {
			int64_t last = l + (h - l - 1) / n->step * n->step;
			if (!*found || l < *lo)
				*lo = l;
			if (!*found || last > *hi)
				*hi = last;
			*step = n->step;
			*found = true;
		}
	}
	for (int i = 0; i < n->nkids; i++)
		if (!subtree_range(m, n->kids[i], id, lo, hi, step, found))
			return false;
	for (int i = 0; i < n->nels; i++)
		if (!subtree_range(m, n->els[i], id, lo, hi, step, found))
			return false;
	return true;
}

/* x = *c + sum beta[j] t_j (j < m->depth) + a rest in [*rlo, *rhi] from symbols of loops in
 * subtree `below` (not on the path). False when a symbol has no loop at all. */
static bool lin(const model *m, aff x, const lt_node *below, int64_t *c, int64_t *beta, int64_t *rlo,
                int64_t *rhi)
{
	const ct_looptree *t = m->t;
	*c = x.c;
	*rlo = *rhi = 0;
	memset(beta, 0, sizeof *beta * (size_t)(m->depth ? m->depth : 1));
	for (int i = 0; i < x.n; i++) {
		const aff_term *at = &x.t[i];
		if (at->kind == AFF_PARAM) {
			*c += at->coef * m->pv[at->id];
			continue;
		}
		if (at->kind == AFF_TRI)
			return false; /* a packed cache's row start: not linear in its loop */
		int nch = 1;
		const int *ch = NULL;
		if (at->kind == AFF_INDEX && at->id < t->k->nindices && t->chain && t->chain[at->id]) {
			ch = t->chain[at->id];
			nch = t->chain_len[at->id];
		}
		for (int q = 0; q < nch; q++) {
			int id = ch ? ch[q] : at->id;
			int j = path_of(m, id);
			if (j >= 0) {
				const mpath *p = &m->path[j];
				if (at->kind == AFF_TRIP) {
					*c += at->coef * (ct_floordiv(p->lo, p->step) + p->off);
					beta[j] += at->coef;
				} else {
					*c += at->coef * (p->lo + p->step * p->off);
					beta[j] += at->coef * p->step;
				}
				continue;
			}
			int64_t lo = 0, hi = 0, step = 1;
			bool found = false;
			if (!below || !subtree_range(m, below, id, &lo, &hi, &step, &found) || !found)
				return false;
			if (at->kind == AFF_TRIP) {
				lo = ct_floordiv(lo, step);
				hi = ct_floordiv(hi, step);
			}
			int64_t a = at->coef * lo, b = at->coef * hi;
			*rlo += a < b ? a : b;
			*rhi += a < b ? b : a;
		}
	}
	return true;
}

/* Range of c + sum beta_j t_j over the path's counters. */
static void path_range(const model *m, int64_t c, const int64_t *beta, int64_t *lo, int64_t *hi)
{
	*lo = *hi = c;
	for (int j = 0; j < m->depth; j++) {
		int64_t v = beta[j] * (m->path[j].n - 1);
		if (v < 0)
			*lo += v;
		else
			*hi += v;
	}
}

/* ------------------------------------------------------------ affine loops (predict's estimate) */

/*
 * A loop with affine bounds (issue #31) has no constant trip count, so the model takes it only for
 * predict's estimate of a trace too long to simulate (predict.c): each instance of such a loop, in
 * each piece of the path, runs the mean trip count of the iterations of the path loops its bounds
 * use, from their mean first value (weighted by trips); those path loops are cut into at most
 * MODEL_AFFINE_PIECES pieces (MODEL_AFFINE_PATH_PIECES along one path) so that a piece's mean
 * stays near each iteration's own. The accesses of a bound that is linear in the path counters
 * are then counted exactly, the misses approximately: every array is marked inexact.
 */
#define MODEL_AFFINE_PIECES 16
#define MODEL_AFFINE_PATH_PIECES 256
/* Path counter values a mean is taken over: all up to this many, a regular grid beyond. */
#define MODEL_AFFINE_SAMPLES 4096

/* The first and last value loop n (affine) can take over the whole path, from the bound terms the
 * path decides (the others could only narrow it); false when a side stays unbounded. */
static bool affine_box(const model *m, const lt_node *n, int64_t *lo, int64_t *hi)
{
	bool ok = true;
	int64_t l = bx_eval(n->lo, m->pv, &ok), h = bx_eval(n->hi, m->pv, &ok);
	int64_t beta[MODEL_MAX_DEPTH];
	for (int side = 0; side < 2 && ok; side++) {
		int nt = side ? n->ndhi : n->ndlo;
		for (int i = 0; i < nt; i++) {
			int64_t c, rlo, rhi, vlo, vhi;
			if (!lin(m, side ? n->dhi[i] : n->dlo[i], NULL, &c, beta, &rlo, &rhi))
				continue;
			path_range(m, c, beta, &vlo, &vhi);
			if (side && vhi < h)
				h = vhi;
			if (!side && vlo > l)
				l = vlo;
		}
	}
	if (!ok || l == LT_NO_LO || h == LT_NO_HI || h <= l)
		return false;
	*lo = l;
	*hi = h - 1;
	return true;
}

/* One bound term of an affine loop as c + sum beta[j] t_j over the path counters. */
typedef struct aterm {
	int64_t c;
	int64_t *beta;
	bool upper;
} aterm;

/* The trip count of an affine loop (bounds lo_c, hi_c over params, terms x) at path counters t;
 * false when a term overflows. */
static bool affine_trips_at(const model *m, const lt_node *n, int64_t lo_c, int64_t hi_c, const aterm *x,
                            int nx, const int64_t *t, int64_t *trips, int64_t *first)
{
	int64_t lo = lo_c, hi = hi_c;
	for (int i = 0; i < nx; i++) {
		int64_t v = x[i].c, p;
		for (int j = 0; j < m->depth; j++)
			if (x[i].beta[j] && (!ct_mul_ok(x[i].beta[j], t[j], &p) || !ct_add_ok(v, p, &v)))
				return false;
		if (x[i].upper && v < hi)
			hi = v;
		if (!x[i].upper && v > lo)
			lo = v;
	}
	*first = lo;
	*trips = lo == LT_NO_LO || hi == LT_NO_HI ? 0 : ct_trip_count(lo, hi, n->step);
	return true;
}

/* Mean trip count `mean` of affine loop n in the current path piece, rounded so that the trips of
 * n's instances summed over the pieces built so far stay within one instance of the true sum: the
 * rounding error, weighted by the piece's instances, is carried to n's next piece (pieces of half
 * trips would otherwise all round up). */
static int64_t affine_round(model *m, const lt_node *n, double mean)
{
	double w = 1;
	for (int j = 0; j < m->depth; j++)
		w *= (double)m->path[j].n;
	int i = 0;
	while (i < m->naffine && m->affine[i].lt != n)
		i++;
	if (i == m->naffine && i < MODEL_AFFINE_LOOPS)
		m->affine[m->naffine++] = (affine_carry){n, 0};
	double carry = i < m->naffine ? m->affine[i].carry : 0;
	double v = mean + carry / w;
	int64_t r = v < 0 ? 0 : v >= 9e18 ? INT64_MAX : (int64_t)(v + 0.5);
	if (i < m->naffine)
		m->affine[i].carry = carry + (mean - (double)r) * w;
	return r;
}

/* True when b^e <= cap (b >= 2). */
static bool ipow_le(int64_t b, int e, int64_t cap)
{
	int64_t p = 1;
	for (int i = 0; i < e; i++)
		if ((p *= b) > cap)
			return false;
	return true;
}

/* Loop n's mean first value *lo and mean trip count *trips over the path counters its bound terms
 * use (all of their values, or a grid of them). False with m->st set when a term is not affine in
 * the path's counters or a side is unbounded. */
static bool affine_mean(model *m, const lt_node *n, int64_t *lo, int64_t *trips)
{
	bool ok = true;
	int64_t lo_c = bx_eval(n->lo, m->pv, &ok), hi_c = bx_eval(n->hi, m->pv, &ok);
	int nx = n->ndlo + n->ndhi, d = m->depth;
	aterm *x = mdl_alloc(m, sizeof *x * (size_t)nx);
	int64_t *beta = mdl_alloc(m, sizeof *beta * (size_t)(nx * (d ? d : 1)));
	if (!x || !beta)
		return false;
	bool used[MODEL_MAX_DEPTH] = {false};
	for (int i = 0; i < nx && ok; i++) {
		int64_t rlo, rhi;
		x[i].upper = i >= n->ndlo;
		x[i].beta = beta + i * (d ? d : 1);
		ok = lin(m, x[i].upper ? n->dhi[i - n->ndlo] : n->dlo[i], NULL, &x[i].c, x[i].beta, &rlo, &rhi);
		for (int j = 0; j < d && ok; j++)
			used[j] = used[j] || x[i].beta[j] != 0;
	}
	if (!ok)
		return mdl_fail(m, CT_ERR_LIMIT, "an affine loop bound that is not affine in the enclosing loops");
	/* the counters used, and how many values of each are visited (g[j] of n[j], evenly spread) */
	int64_t g[MODEL_MAX_DEPTH], all = 1;
	int nused = 0;
	for (int j = 0; j < d; j++)
		if (used[j]) {
			nused++;
			all = all > MODEL_AFFINE_SAMPLES / m->path[j].n ? MODEL_AFFINE_SAMPLES + 1 : all * m->path[j].n;
		}
	/* past the limit, per values of each used counter: per^nused <= MODEL_AFFINE_SAMPLES */
	int64_t per = 1;
	while (all > MODEL_AFFINE_SAMPLES && ipow_le(per + 1, nused, MODEL_AFFINE_SAMPLES))
		per++;
	for (int j = 0; j < d; j++)
		g[j] = !used[j] ? 1 : all <= MODEL_AFFINE_SAMPLES || m->path[j].n < per ? m->path[j].n : per;
	int64_t s[MODEL_MAX_DEPTH] = {0}, t[MODEL_MAX_DEPTH] = {0};
	double sum_trips = 0, sum_first = 0, count = 0;
	for (;;) {
		/* the middle of each of the g[j] even parts of the counter's range */
		for (int j = 0; j < d; j++)
			t[j] = g[j] == m->path[j].n ? s[j]
			                            : (int64_t)(((double)s[j] + 0.5) * (double)m->path[j].n / (double)g[j]);
		int64_t first, k;
		if (!affine_trips_at(m, n, lo_c, hi_c, x, nx, t, &k, &first))
			return mdl_fail(m, CT_ERR_LIMIT, "a loop bound overflows");
		sum_trips += (double)k;
		sum_first += (double)k * (double)first;
		count++;
		int j = d - 1;
		while (j >= 0 && ++s[j] == g[j])
			s[j--] = 0;
		if (j < 0)
			break;
	}
	double first = sum_trips > 0 ? sum_first / sum_trips : 0;
	*trips = affine_round(m, n, sum_trips / count);
	if (first <= -9e18 || first >= 9e18)
		return mdl_fail(m, CT_ERR_LIMIT, "a loop bound overflows");
	*lo = (int64_t)(first < 0 ? first - 0.5 : first + 0.5);
	for (int a = 0; a < m->na; a++)
		m->inexact[a] = true;
	return true;
}

/* True when affine term x uses tree index id (itself, or through a chain of split indices). */
static bool aff_mentions(const model *m, aff x, int id)
{
	const ct_looptree *t = m->t;
	for (int i = 0; i < x.n; i++) {
		const aff_term *at = &x.t[i];
		if (at->kind == AFF_PARAM)
			continue;
		if (at->kind == AFF_INDEX && at->id < t->k->nindices && t->chain && t->chain[at->id]) {
			for (int q = 0; q < t->chain_len[at->id]; q++)
				if (t->chain[at->id][q] == id)
					return true;
		} else if (at->id == id) {
			return true;
		}
	}
	return false;
}

/* True when a loop strictly below n has an affine bound that uses n's index. */
static bool affine_uses(const model *m, const lt_node *n, int id)
{
	for (int i = 0; i < n->nkids + n->nels; i++) {
		const lt_node *y = i < n->nkids ? n->kids[i] : n->els[i - n->nkids];
		for (int q = 0; lt_affine_loop(y) && q < y->ndlo + y->ndhi; q++)
			if (aff_mentions(m, q < y->ndlo ? y->dlo[q] : y->dhi[q - y->ndlo], id))
				return true;
		if (affine_uses(m, y, id))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------ conditions */

enum { TV_FALSE = 0, TV_TRUE = 1, TV_UNKNOWN = 2 };

/* Truth of g >= 0 over the path (g affine; every symbol on the path). */
static int atom_truth(model *m, aff g)
{
	int64_t c, rlo, rhi, lo, hi;
	int64_t beta[MODEL_MAX_DEPTH];
	if (!lin(m, g, NULL, &c, beta, &rlo, &rhi))
		return TV_UNKNOWN;
	path_range(m, c, beta, &lo, &hi);
	return lo >= 0 ? TV_TRUE : hi < 0 ? TV_FALSE : TV_UNKNOWN;
}

static int tv_and(int a, int b) { return a == TV_FALSE || b == TV_FALSE ? TV_FALSE : a == TV_TRUE && b == TV_TRUE ? TV_TRUE : TV_UNKNOWN; }
static int tv_or(int a, int b) { return a == TV_TRUE || b == TV_TRUE ? TV_TRUE : a == TV_FALSE && b == TV_FALSE ? TV_FALSE : TV_UNKNOWN; }
static int tv_not(int a) { return a == TV_UNKNOWN ? a : !a; }

/* Truth of an `if` condition over the current path. */
static int cond_truth(model *m, const ir_expr *e)
{
	if (!e)
		return TV_UNKNOWN;
	switch (e->kind) {
	case EX_AND:
		return tv_and(cond_truth(m, e->args[0]), cond_truth(m, e->args[1]));
	case EX_OR:
		return tv_or(cond_truth(m, e->args[0]), cond_truth(m, e->args[1]));
	case EX_NOT:
		return tv_not(cond_truth(m, e->args[0]));
	case EX_CMP: {
		if (!e->has_diff)
			return TV_UNKNOWN;
		aff d = e->diff, dm1 = d;
		dm1.c = d.c - 1;
		int ge0 = atom_truth(m, d), ge1 = atom_truth(m, dm1);
		switch (e->cmp) {
		case CMP_GE:
			return ge0;
		case CMP_GT:
			return ge1;
		case CMP_LT:
			return tv_not(ge0);
		case CMP_LE:
			return tv_not(ge1);
		case CMP_EQ:
			return tv_and(ge0, tv_not(ge1));
		case CMP_NE:
			return tv_or(tv_not(ge0), ge1);
		}
		return TV_UNKNOWN;
	}
	default:
		return TV_UNKNOWN;
	}
}

static int if_truth(model *m, const lt_node *n)
{
	if (n->stmt)
		return cond_truth(m, n->stmt->cond);
	int r = TV_TRUE;
	for (int i = 0; i < n->nguard; i++)
		r = tv_and(r, atom_truth(m, n->guard[i]));
	return r;
}

/* Cut points of counter t of the loop on top of the path (entry j) that decide g >= 0 for
 * every value of the symbols below: added to cuts (sorted later). */
typedef struct cuts {
	int64_t v[256];
	int n;
	bool overflow;
} cuts;

static void add_cut(cuts *cs, int64_t v, int64_t n)
{
	if (v <= 0 || v >= n)
		return;
	if (cs->n == (int)(sizeof cs->v / sizeof cs->v[0])) {
		cs->overflow = true;
		return;
	}
	cs->v[cs->n++] = v;
}

/* Smallest t >= 0 with c + b t >= 0 (b > 0), at most INT64_MAX. ceil(-c / b) in unsigned
 * arithmetic: -c + b - 1 overflowed for a split of 2^63 - 1 (the edge fuzz family). */
static int64_t first_true(int64_t c, int64_t b)
{
	if (c >= 0)
		return 0;
	uint64_t t = (0 - (uint64_t)c - 1) / (uint64_t)b + 1;
	return t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t;
}

static void atom_cuts(model *m, aff g, const lt_node *below, cuts *cs, bool *mixed_inner)
{
	int64_t c, rlo, rhi, lo, hi;
	int64_t beta[MODEL_MAX_DEPTH];
	if (!lin(m, g, below, &c, beta, &rlo, &rhi))
		return;
	int j = m->depth - 1;
	int64_t b = beta[j], n = m->path[j].n;
	if (b == 0)
		return;
	beta[j] = 0;
	path_range(m, c, beta, &lo, &hi);
	lo += rlo;
	hi += rhi;
	/* g = b t + [lo, hi] */
	int64_t t1, t2;
	if (b > 0) {
		t1 = first_true(lo, b); /* from t1 on: always true */
		t2 = first_true(hi, b); /* before t2: always false */
	} else {
		/* -|b| t + x >= 0  <=>  t <= x / |b| */
		int64_t ab = -b;
		t1 = hi < 0 ? 0 : hi / ab + 1; /* from t1 on: always false */
		t2 = lo < 0 ? 0 : lo / ab + 1; /* before t2: always true */
	}
	add_cut(cs, t1, n);
	add_cut(cs, t2, n);
	if (rlo != rhi) {
		int64_t a = t1 < t2 ? t1 : t2, z = t1 < t2 ? t2 : t1;
		if (a < 0)
			a = 0;
		if (z > n)
			z = n;
		if (z - a > 1 && z - a <= MODEL_CUT_LIMIT)
			for (int64_t v = a + 1; v < z; v++)
				add_cut(cs, v, n);
		*mixed_inner = true;
	}
}

static void cond_cuts(model *m, const ir_expr *e, const lt_node *below, cuts *cs, bool *mi)
{
	if (!e)
		return;
	if (e->kind == EX_CMP && e->has_diff) {
		aff d = e->diff;
		atom_cuts(m, d, below, cs, mi);
		d.c -= 1;
		atom_cuts(m, d, below, cs, mi);
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		cond_cuts(m, e->args[i], below, cs, mi);
}

/* Cut points from every condition in the subtree of the loop on top of the path. */
static void subtree_cuts(model *m, const lt_node *n, const lt_node *below, cuts *cs, bool *mi)
{
	if (n->kind == LT_IF) {
		if (n->stmt)
			cond_cuts(m, n->stmt->cond, below, cs, mi);
		else
			for (int i = 0; i < n->nguard; i++)
				atom_cuts(m, n->guard[i], below, cs, mi);
	}
	for (int i = 0; i < n->nkids; i++)
		subtree_cuts(m, n->kids[i], below, cs, mi);
	for (int i = 0; i < n->nels; i++)
		subtree_cuts(m, n->els[i], below, cs, mi);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ building */


static void collect_reads(const ir_expr *e, const ir_expr **out, int *n, int cap)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS && *n < cap)
		out[(*n)++] = e;
	for (int i = 0; i < e->nargs; i++)
		collect_reads(e->args[i], out, n, cap);
}

static int count_reads(const ir_expr *e)
{
	if (!e)
		return 0;
	int n = e->kind == EX_ACCESS;
	for (int i = 0; i < e->nargs; i++)
		n += count_reads(e->args[i]);
	return n;
}

static bool make_access(model *m, const ir_expr *e, macc *a)
{
	a->array = e->id;
	a->depth = m->depth;
	if (e->id < 0 || e->id >= m->na)
		return mdl_fail(m, CT_ERR_INPUT, "an access to an unknown array");
	int rank = m->rank[e->id];
	a->beta = mdl_alloc(m, sizeof *a->beta * (size_t)(rank * (m->depth ? m->depth : 1)));
	if (!a->beta)
		return false;
	for (int d = 0; d < rank; d++) {
		int64_t rlo, rhi;
		if (!lin(m, e->sub[d], NULL, &a->c[d], a->beta + d * m->depth, &rlo, &rhi)) {
			a->inexact = true;
			m->inexact[e->id] = true;
		}
	}
	return true;
}

static bool build_stmt(model *m, const lt_node *n, mnode *parent)
{
	const ir_node *s = n->stmt;
	int nr = count_reads(s->rhs);
	int nw = s->kind == ND_STMT && s->lhs ? (s->op == AS_SET ? 1 : 2) : 0;
	mnode *x = mdl_alloc(m, sizeof *x);
	if (!x)
		return false;
	x->lt = n;
	x->depth = m->depth;
	x->stmt_id = s->kind == ND_STMT ? s->stmt_id : 0;
	x->nacc = nr + nw;
	x->acc = mdl_alloc(m, sizeof *x->acc * (size_t)(x->nacc ? x->nacc : 1));
	x->anc = mdl_alloc(m, sizeof *x->anc * (size_t)(m->depth ? m->depth : 1));
	const ir_expr **reads = mdl_alloc(m, sizeof *reads * (size_t)(nr ? nr : 1));
	if (!x->acc || !x->anc || !reads)
		return false;
	for (int j = 0; j < m->depth; j++)
		x->anc[j] = m->path[j].node;
	int k = 0;
	collect_reads(s->rhs, reads, &k, nr);
	for (int i = 0; i < nr; i++)
		if (!make_access(m, reads[i], &x->acc[i]))
			return false;
	for (int w = 0; w < nw; w++)
		if (!make_access(m, s->lhs, &x->acc[nr + w]))
			return false;
	return add_kid(m, parent, x);
}

static bool build_loop(model *m, const lt_node *n, mnode *parent)
{
	if (n->step < 1)
		return mdl_fail(m, CT_ERR_INPUT, "a loop step below 1");
	int64_t lo, trips;
	if (lt_affine_loop(n)) {
		if (!affine_mean(m, n, &lo, &trips))
			return false;
	} else {
		bool ok = true;
		lo = bx_eval(n->lo, m->pv, &ok);
		int64_t hi = bx_eval(n->hi, m->pv, &ok);
		if (!ok)
			return mdl_fail(m, CT_ERR_LIMIT, "a loop bound overflows");
		trips = ct_trip_count(lo, hi, n->step);
	}
	if (trips == 0)
		return true;
	if (m->depth >= MODEL_MAX_DEPTH)
		return mdl_fail(m, CT_ERR_LIMIT, "loops nested too deeply");
	/* index-set splitting: cut the range where a condition below changes */
	mpath *p = &m->path[m->depth++];
	*p = (mpath){n, lo, n->step, 0, trips, NULL};
	cuts cs = {0};
	bool mixed = false;
	subtree_cuts(m, n, n, &cs, &mixed);
	m->depth--;
	int64_t pieces = m->affine_pieces > 0 ? m->affine_pieces : 1, g = 1;
	if (m->t->k->affine_bounds && affine_uses(m, n, n->index)) {
		g = MODEL_AFFINE_PIECES < trips ? MODEL_AFFINE_PIECES : trips;
		if (g > MODEL_AFFINE_PATH_PIECES / pieces)
			g = MODEL_AFFINE_PATH_PIECES / pieces;
		for (int64_t q = 1; q < g; q++) /* q * trips / g without overflow */
			add_cut(&cs, trips / g * q + trips % g * q / g, trips);
	}
	if (cs.overflow)
		for (int a = 0; a < m->na; a++)
			m->inexact[a] = true;
	qsort(cs.v, (size_t)cs.n, sizeof cs.v[0], cmp_i64);
	int64_t start = 0;
	for (int c = 0; c <= cs.n; c++) {
		int64_t end = c < cs.n ? cs.v[c] : trips;
		if (end <= start)
			continue;
		mnode *x = mdl_alloc(m, sizeof *x);
		if (!x)
			return false;
		x->is_loop = true;
		x->lt = n;
		x->n = end - start;
		x->depth = m->depth;
		if (!add_kid(m, parent, x))
			return false;
		p = &m->path[m->depth++];
		*p = (mpath){n, lo, n->step, start, end - start, x};
		m->affine_pieces = pieces * (g > 1 ? g : 1);
		bool r = mdl_build_list(m, n->kids, n->nkids, x);
		m->affine_pieces = pieces;
		m->depth--;
		if (!r)
			return false;
		start = end;
	}
	return true;
}

bool mdl_build_list(model *m, lt_node *const *kids, int nkids, mnode *parent)
{
	for (int i = 0; i < nkids && !m->st; i++) {
		const lt_node *n = kids[i];
		switch (n->kind) {
		case LT_LOOP:
			if (!build_loop(m, n, parent))
				return false;
			break;
		case LT_STMT:
		case LT_LET:
			if (n->stmt && !build_stmt(m, n, parent))
				return false;
			break;
		case LT_CACHE:
			if (!mdl_build_list(m, n->kids, n->nkids, parent))
				return false;
			break;
		case LT_IF: {
			int tv = if_truth(m, n);
			if (tv == TV_UNKNOWN)
				for (int a = 0; a < m->na; a++)
					m->inexact[a] = true;
			if (tv != TV_FALSE && !mdl_build_list(m, n->kids, n->nkids, parent))
				return false;
			if (tv == TV_FALSE && !mdl_build_list(m, n->els, n->nels, parent))
				return false;
			break;
		}
		}
	}
	return !m->st;
}

/* per_iter and inst of every node below x. */
/* x->aff: the byte address of each access of statement x as an affine function of its
 * counters. */
static bool statement_affine(model *m, mnode *x)
{
	int w = x->depth + 1;
	x->aff = mdl_alloc(m, sizeof *x->aff * (size_t)(x->nacc * w));
	if (!x->aff)
		return false;
	for (int i = 0; i < x->nacc; i++) {
		const macc *ac = &x->acc[i];
		int a = ac->array;
		int64_t base = 0;
		for (int d = 0; d < m->rank[a]; d++)
			base += ac->c[d] * m->stride[a * IR_MAX_RANK + d];
		x->aff[i * w] = base * m->elem[a];
		for (int j = 0; j < ac->depth && j < x->depth; j++)
			x->aff[i * w + 1 + j] = mdl_gamma_of(m, ac, j);
	}
	return true;
}

bool mdl_count_accesses(model *m, mnode *x, int64_t inst)
{
	x->inst = inst;
	x->per_iter = mdl_alloc(m, sizeof *x->per_iter * (size_t)m->na);
	if (!x->per_iter)
		return false;
	if (!x->is_loop && x->nkids == 0) {
		for (int i = 0; i < x->nacc; i++) {
			x->per_iter[x->acc[i].array]++;
			x->any_inexact = x->any_inexact || x->acc[i].inexact;
		}
		return statement_affine(m, x);
	}
	int64_t kinst = x->is_loop ? inst * x->n : inst;
	for (int i = 0; i < x->nkids; i++) {
		mnode *k = x->kids[i];
		if (!mdl_count_accesses(m, k, kinst))
			return false;
		x->any_inexact = x->any_inexact || k->any_inexact;
		int64_t f = k->is_loop ? k->n : 1;
		for (int a = 0; a < m->na; a++)
			x->per_iter[a] += f * k->per_iter[a];
	}
	return true;
}
