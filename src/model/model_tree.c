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

/* Value range of tree index id over the loops of subtree n (not on the path), and the step
 * of such a loop; *found stays false when there is none. False on overflow. */
static bool subtree_range(const model *m, const lt_node *n, int id, int64_t *lo, int64_t *hi,
                          int64_t *step, bool *found)
{
	if (!n)
		return true;
	if (n->kind == LT_LOOP && n->index == id) {
		bool ok = true;
		int64_t l = bx_eval(n->lo, m->pv, &ok), h = bx_eval(n->hi, m->pv, &ok);
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
	bool ok = true;
	int64_t lo = bx_eval(n->lo, m->pv, &ok), hi = bx_eval(n->hi, m->pv, &ok);
	if (!ok)
		return mdl_fail(m, CT_ERR_LIMIT, "a loop bound overflows");
	if (n->step < 1)
		return mdl_fail(m, CT_ERR_INPUT, "a loop step below 1");
	int64_t trips = ct_trip_count(lo, hi, n->step);
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
		bool r = mdl_build_list(m, n->kids, n->nkids, x);
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
