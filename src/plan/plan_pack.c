/* plan_pack.c: packed=lower|upper caches: a triangular block's box buffer becomes a 1-D buffer of
 * the triangle alone. */
#include "plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * A packed cache is first made as any other (plan_region.c): a rank-2 box
 * buffer, its uses rewritten to buffer coordinates (row r, column c, both
 * relative to the block) and a copy-in nest over the box. This pass then
 *   1. proves that every use lies in a triangle: lower c <= r + d, upper
 *      r <= c + d, for a constant d (the least that the bounds of the loops
 *      around the uses show; 0 when it is negative): with M the major
 *      subscript (r for lower, c for upper) and m the minor one, m <= M + d;
 *   2. makes the buffer 1-D with T(n) + d * n elements (T(n) = n * (n + 1)
 *      / 2), n the box's extent along M: row M holds M + d + 1 elements;
 *   3. rewrites each access to T(M) + d * M + m, where M is one loop
 *      variable v plus a constant a: T(v + a) = T(v) + a * v + T(a), with
 *      T(v) an AFF_TRI term, the one non-linear term of the loop tree
 *      (looptree.h);
 *   4. guards the copy-in so that it fills the triangle only (M + d - m >= 0).
 * Lowered subscripts are affine (ir.h), and no affine map packs a triangle
 * (the box around any affine image of it is twice its area): hence the term.
 */

/* Offsets beyond this are refused (they keep T(a) and d * v far from overflow), as are bound
 * coefficients beyond PK_MAX_COEF in the proof. */
#define PK_MAX_OFF (INT64_C(1) << 30)
#define PK_MAX_COEF (INT64_C(1) << 40)
/* The term count that marks a rewritten access: its second (unused) subscript has it. */
#define PK_DONE (-1)

/* The dimension of the block whose value bounds the other: the row for lower, the column for upper.
 */
static int major_dim(const ir_plan_item *it)
{
	return it->packed == PACK_UPPER ? 1 : 0;
}

static const char *packed_word(const ir_plan_item *it)
{
	return it->packed == PACK_UPPER ? "upper" : "lower";
}

/* n * (n + 1) / 2, or -1 on overflow (n >= 0). */
int64_t pl_pack_count(int64_t n)
{
	int64_t w;
	if (n < 0 || n == INT64_MAX || !ct_mul_ok(n, n + 1, &w))
		return -1;
	return w / 2;
}

/* s as *v + *c for one loop variable v with coefficient 1 (an AFF_LOOP term, or an original
 * index that is its own chain). */
static bool one_var(const pp *p, aff s, int *v, int64_t *c)
{
	if (s.n != 1 || s.t[0].coef != 1)
		return false;
	const aff_term *tm = &s.t[0];
	const ct_looptree *t = p->t;
	if (tm->kind == AFF_LOOP)
		*v = tm->id;
	else if (tm->kind == AFF_INDEX && tm->id >= 0 && tm->id < p->k->nindices && t->chain &&
	         t->chain[tm->id] && t->chain_len[tm->id] == 1)
		*v = t->chain[tm->id][0];
	else
		return false;
	*c = s.c;
	return true;
}

/* The innermost loop over index v above node x, up to the site loop top (included). */
static const lt_node *loop_above(const lt_node *x, int v, const lt_node *top)
{
	for (const lt_node *y = x->parent; y; y = y->parent) {
		if (y->kind == LT_LOOP && y->index == v)
			return y;
		if (y == top)
			break;
	}
	return NULL;
}

/* Upper values of the minor variable w (w <= each, from w's loop) and lower values of the major
 * v (v >= each), as affine expressions over loop variables: an affine loop's terms, a
 * rectangular loop's constant range. At most 16 + 1 of each. */
typedef struct ends {
	aff e[18];
	int n;
} ends;

static void loop_ends(pp *p, const lt_node *l, bool upper, ends *out)
{
	out->n = 0;
	if (!l)
		return;
	int64_t lo, hi;
	if (upper) {
		for (int j = 0; j < l->ndhi && out->n < 17; j++)
			out->e[out->n++] =
			    pl_aff_plus(p, pl_to_loop(p, l->dhi[j]), aff_const(-1), 1);
		if (bx_is_const(l->hi, &hi) && hi != LT_NO_HI && hi > INT64_MIN)
			out->e[out->n++] = aff_const(hi - 1);
	} else {
		for (int j = 0; j < l->ndlo && out->n < 17; j++)
			out->e[out->n++] = pl_to_loop(p, l->dlo[j]);
		if (bx_is_const(l->lo, &lo) && lo != LT_NO_LO)
			out->e[out->n++] = aff_const(lo);
	}
}

/* How many loops up from node x the innermost loop over index v is (0: x's parent), up to the
 * site loop top; -1 when it is not among them. */
static int loop_depth(const lt_node *x, int v, const lt_node *top)
{
	int n = 0;
	for (const lt_node *y = x->parent; y; y = y->parent, n++) {
		if (y->kind == LT_LOOP && y->index == v)
			return n;
		if (y == top)
			break;
	}
	return -1;
}

/* The least constant that bounds d (an affine expression over the loop variables inside the
 * site) from above at every instance of node x, into *best: the variable of the innermost loop
 * in d replaced by each of that loop's upper bounds (a positive coefficient) or lower bounds,
 * then the next, until a constant is left (bounds use only enclosing indices, so the walk ends).
 * *budget caps the branches (min/max terms). */
static void bound_above(pp *p, const lt_node *x, const lt_node *top, aff d, int *budget,
                        bool *found, int64_t *best)
{
	if (!p->ok || --*budget < 0)
		return;
	if (d.n == 0) {
		if (!*found || d.c < *best)
			*best = d.c;
		*found = true;
		return;
	}
	int w = -1, wd = -1;
	int64_t cf = 0;
	for (int i = 0; i < d.n; i++) {
		if (d.t[i].kind != AFF_LOOP)
			return; /* a param or a trip count: no constant bound here */
		int dep = loop_depth(x, d.t[i].id, top);
		if (dep < 0)
			return;
		if (w < 0 || dep < wd)
			w = d.t[i].id, wd = dep, cf = d.t[i].coef;
	}
	ends e;
	loop_ends(p, loop_above(x, w, top), cf > 0, &e);
	aff rest = pl_aff_plus(p, d, pl_aff_var(p, AFF_LOOP, w, 1), -cf);
	for (int j = 0; j < e.n; j++) {
		int64_t m;
		aff ej = e.e[j];
		bool ok = true;
		for (int i = 0; i < ej.n && ok; i++)
			ok = ct_mul_ok(ej.t[i].coef, cf, &m) && m > -PK_MAX_COEF && m < PK_MAX_COEF;
		if (ok && ct_mul_ok(ej.c, cf, &m) && m > -PK_MAX_COEF && m < PK_MAX_COEF)
			bound_above(p, x, top, pl_aff_plus(p, rest, ej, cf), budget, found, best);
	}
}

/* The least constant bound *dd of minor - major (major = v + a) at every instance of node x (site
 * loop top) that the bounds of the loops around it show; false when none does. */
static bool diag_bound(pp *p, const lt_node *x, const lt_node *top, aff minor, int v, int64_t a,
                       int64_t *dd)
{
	aff d = pl_aff_plus(p, pl_to_loop(p, minor), pl_aff_var(p, AFF_LOOP, v, 1), -1);
	d = pl_aff_plus(p, d, aff_const(a), -1);
	int budget = 256;
	bool found = false;
	bound_above(p, x, top, d, &budget, &found, dd);
	return found && p->ok;
}

/* The packing pass's state: the buffer, its major dimension, the diagonal offset d. */
typedef struct pk {
	pp *p;
	int buf, mj;
	int64_t d;
	bool measure; /* the first walk: check the uses and find d; the second rewrites them */
} pk;

/* One access e of the buffer at node x (a copy when copy): measured, or rewritten to its packed
 * index T(M) + d * M + m. */
static bool pack_access(pk *q, ir_expr *e, const lt_node *x, const lt_node *top, bool copy)
{
	pp *p = q->p;
	const ir_plan_item *it = p->it;
	int mj = q->mj, v;
	int64_t a, dd = 0;
	char msg[400];
	if (e->sub[1].n == PK_DONE)
		return true; /* an expression reached twice: rewritten already */
	if (!one_var(p, e->sub[mj], &v, &a) || a < -PK_MAX_OFF || a > PK_MAX_OFF) {
		snprintf(
		    msg, sizeof msg,
		    "cache '%s': packed=%s needs the %s subscript of each use of '%s' to be one "
		    "loop inside the cache plus a constant (no split, no multiple)",
		    it->name, packed_word(it), mj == 0 ? "row" : "column",
		    p->k->arrays[it->root_array].name);
		return pp_err(p, it->packed_opt.pos, "%s%s", msg, "");
	}
	if (q->measure) {
		if (copy)
			return true;
		if (!diag_bound(p, x, top, e->sub[1 - mj], v, a, &dd) || dd > PK_MAX_OFF) {
			snprintf(msg, sizeof msg,
			         "cache '%s': packed=%s, but a use of '%s' may lie anywhere %s the "
			         "diagonal "
			         "of its block (no loop bound shows %s plus a constant)",
			         it->name, packed_word(it), p->k->arrays[it->root_array].name,
			         mj == 0 ? "above" : "below",
			         mj == 0 ? "column <= row" : "row <= column");
			return pp_err(p, it->packed_opt.pos, "%s%s", msg, "");
		}
		if (dd > q->d)
			q->d = dd;
		return true;
	}
	/* T(v + a) + d * (v + a) + m = T(v) + (a + d) * v + T(a) + d * a + m */
	int64_t d = q->d, c0 = a * (a + 1) / 2 + d * a;
	aff s = pl_aff_plus(p, e->sub[1 - mj], pl_aff_var(p, AFF_TRI, v, 1), 1);
	if (a + d)
		s = pl_aff_plus(p, s, pl_aff_var(p, AFF_LOOP, v, a + d), 1);
	s = pl_aff_plus(p, s, aff_const(c0), 1);
	aff *ns = ct_arena_alloc(p->a, sizeof *ns * 2);
	if (!ns)
		return pp_nomem(p);
	ns[0] = s;
	ns[1] = aff_const(0);
	ns[1].n = PK_DONE;
	e->sub = ns;
	return p->ok;
}

static bool pack_expr(pk *q, ir_expr *e, const lt_node *x, const lt_node *top, bool copy)
{
	if (!e)
		return true;
	if (e->kind == EX_ACCESS && e->id == q->buf && !pack_access(q, e, x, top, copy))
		return false;
	for (int i = 0; i < e->nargs; i++)
		if (!pack_expr(q, e->args[i], x, top, copy))
			return false;
	return true;
}

/* The copy-in statement x fills only the triangle: guard major + d - minor >= 0 (the buffer side's
 * subscripts, copy loop variables), added to the bounds guard around it or a new guard if. */
static bool guard_copy(pk *q, lt_node *x)
{
	pp *p = q->p;
	int mj = q->mj;
	const aff *sub = x->stmt->lhs->sub;
	aff g = pl_aff_plus(p, pl_aff_plus(p, sub[mj], sub[1 - mj], -1), aff_const(q->d), 1);
	lt_node *par = x->parent;
	if (par && par->kind == LT_IF && !par->stmt) {
		aff *gv = ct_arena_alloc(p->a, sizeof *gv * (size_t)(par->nguard + 1));
		if (!gv)
			return pp_nomem(p);
		if (par->nguard)
			memcpy(gv, par->guard, sizeof *gv * (size_t)par->nguard);
		gv[par->nguard] = g;
		par->guard = gv;
		par->nguard++;
		return true;
	}
	lt_node **slot = pl_kid_slot(p->t, x);
	lt_node *gn = pl_new_node(p, LT_IF, par);
	aff *gv = ct_arena_alloc(p->a, sizeof *gv);
	if (!slot || !gn || !gv)
		return slot ? pp_nomem(p)
		            : pp_err(p, p->it->pos,
		                     "internal error: cache '%s'%s: copy has no place", p->it->name,
		                     "");
	gv[0] = g;
	gn->guard = gv;
	gn->nguard = 1;
	*slot = gn;
	return pl_set_kids(p, gn, &x, 1);
}

/* Walk x (under site loop top): measure or rewrite every access of the buffer; in the second
 * walk, guard its copies. */
static bool pack_tree(pk *q, lt_node *x, const lt_node *top)
{
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET || x->kind == LT_IF)) {
		const ir_node *s = x->stmt;
		bool copy = pl_is_copy(x);
		if (!q->measure && copy && s->lhs && s->lhs->id == q->buf && !guard_copy(q, x))
			return false;
		if (!pack_expr(q, s->lhs, x, top, copy) || !pack_expr(q, s->rhs, x, top, copy) ||
		    !pack_expr(q, s->cond, x, top, copy))
			return false;
	}
	/* guard_copy may replace a kid: walk the kids as they are now */
	for (int i = 0; i < x->nkids; i++)
		if (!pack_tree(q, x->kids[i], top))
			return false;
	for (int i = 0; i < x->nels; i++)
		if (!pack_tree(q, x->els[i], top))
			return false;
	return true;
}

/* Both walks over the sites s[0..ns) and the fills pro[0..npro). */
static bool pack_walk(pk *q, const site *s, int ns, lt_node *const *pro, int npro)
{
	for (int i = 0; i < ns; i++)
		if (!pack_tree(q, s[i].node, s[i].node))
			return false;
	for (int i = 0; i < npro; i++)
		if (!pack_tree(q, pro[i], NULL))
			return false;
	return true;
}

bool pl_pack_region(pp *p, int rid, const site *s, int ns, lt_node *const *pro, int npro)
{
	const ir_plan_item *it = p->it;
	lt_region *rg = &p->t->regions[rid];
	pk q = {p, rg->buffer, major_dim(it), 0, true};
	if (rg->elided || rg->nmulti != 0 || rg->rank != 2 || rg->prologue != LT_PRO_COPY_IN ||
	    rg->epilogue != LT_EPI_NONE || q.buf == rg->source)
		return pp_err(
		    p, it->packed_opt.pos,
		    "cache '%s': packed= needs a block that is only read and copied in once "
		    "(no multicache slots)%s",
		    it->name, "");
	if (!pack_walk(&q, s, ns, pro, npro))
		return false;
	/* T(n) + d * n elements: fewer than the box's, or packing would not save (an error) */
	const bx *n = rg->shape[q.mj];
	const bx *cnt = pl_bxb(
	    p, BX_FLOORDIV, pl_bxb(p, BX_MUL, n, pl_bxb(p, BX_ADD, n, pl_bxc(p, 1))), pl_bxc(p, 2));
	cnt = pl_bxb(p, BX_ADD, cnt, pl_bxb(p, BX_MUL, n, pl_bxc(p, q.d)));
	int64_t e0, e1, ec, box;
	if (bx_is_const(rg->shape[0], &e0) && bx_is_const(rg->shape[1], &e1) &&
	    bx_is_const(cnt, &ec) && ct_mul_ok(e0, e1, &box) && ec > box) {
		char msg[300];
		snprintf(
		    msg, sizeof msg,
		    "cache '%s': packed=%s would hold %lld elements, more than its %lld x %lld box "
		    "(drop packed=)",
		    it->name, packed_word(it), (long long)ec, (long long)e0, (long long)e1);
		return pp_err(p, it->packed_opt.pos, "%s%s", msg, "");
	}
	q.measure = false;
	if (!pack_walk(&q, s, ns, pro, npro))
		return false;
	ct_looptree *t = p->t;
	t->arrays[q.buf].rank = 1;
	t->arrays[q.buf].order[0] = 0;
	t->ext[q.buf * IR_MAX_RANK] = cnt;
	t->ext[q.buf * IR_MAX_RANK + 1] = NULL;
	rg->rank = 1;
	rg->shape[0] = cnt;
	rg->shape[1] = NULL;
	rg->order[0] = 0;
	rg->first_major = true;
	rg->last_major = false;
	return p->ok;
}
