/* plan_pack.c: packed=lower|upper caches: a triangular block's box buffer becomes a 1-D buffer of
 * the triangle alone. */
#include "plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * A packed cache is first made as any other (plan_region.c): a rank-2 box
 * buffer, its uses rewritten to buffer coordinates (row r, column c, both
 * relative to the block) and a copy-in nest over the box. This pass then
 *   1. proves that every use lies in the triangle (lower: c <= r, upper:
 *      r <= c) from the bounds of the loops around it;
 *   2. makes the buffer 1-D with T(n) = n * (n + 1) / 2 elements, n the
 *      box's extent along the major dimension (r for lower, c for upper);
 *   3. rewrites each access (r, c) of lower to T(r) + c (upper: T(c) + r),
 *      where the major subscript is one loop variable v plus a constant a:
 *      T(v + a) = T(v) + a * v + T(a), with T(v) an AFF_TRI term, the one
 *      non-linear term of the loop tree (looptree.h);
 *   4. guards the copy-in so that it fills the triangle only.
 * Lowered subscripts are affine (ir.h), and no affine map packs a triangle
 * (the box around any affine image of it is twice its area): hence the term.
 */

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

/* Whether d (an affine expression over loop variables) is a constant <= 0. */
static bool nonpositive(aff d)
{
	return d.n == 0 && d.c <= 0;
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

/* Whether minor <= major at every instance of node x (site loop top): minor = w + b and major =
 * v + a, where some bound of w's loop above or v's loop below (or one of each) makes
 * minor - major a constant <= 0. */
static bool in_triangle(pp *p, const lt_node *x, const lt_node *top, aff minor, int v, int64_t a)
{
	minor = pl_to_loop(p, minor);
	aff d = pl_aff_plus(p, minor, pl_aff_var(p, AFF_LOOP, v, 1), -1);
	d = pl_aff_plus(p, d, aff_const(a), -1);
	if (nonpositive(d))
		return true;
	int w;
	int64_t b;
	ends wu, vl;
	wu.n = vl.n = 0;
	if (one_var(p, minor, &w, &b))
		loop_ends(p, loop_above(x, w, top), true, &wu);
	loop_ends(p, loop_above(x, v, top), false, &vl);
	/* d = w + b - v - a; w <= wu.e[i]; -v <= -vl.e[j] */
	for (int i = -1; i < wu.n; i++) {
		aff dw = i < 0
		             ? d
		             : pl_aff_plus(p, pl_aff_plus(p, d, pl_aff_var(p, AFF_LOOP, w, 1), -1),
		                           wu.e[i], 1);
		if (i >= 0 && nonpositive(dw))
			return true;
		for (int j = 0; j < vl.n; j++) {
			aff dv = pl_aff_plus(
			    p, pl_aff_plus(p, dw, pl_aff_var(p, AFF_LOOP, v, 1), 1), vl.e[j], -1);
			if (nonpositive(dv))
				return true;
		}
	}
	return false;
}

/* One access e of the buffer at node x: checked (body uses) and rewritten to its packed index. */
static bool pack_access(pp *p, ir_expr *e, const lt_node *x, const lt_node *top, bool copy)
{
	const ir_plan_item *it = p->it;
	int mj = major_dim(it), v;
	int64_t a, ta;
	char msg[400];
	if (!one_var(p, e->sub[mj], &v, &a)) {
		snprintf(msg, sizeof msg,
		         "cache '%s': packed=%s needs the %s subscript of each use of '%s' to be "
		         "one loop inside the "
		         "cache plus a constant (no split, no multiple)",
		         it->name, packed_word(it), mj == 0 ? "row" : "column",
		         p->k->arrays[it->root_array].name);
		return pp_err(p, it->packed_opt.pos, "%s%s", msg, "");
	}
	if (!copy && !in_triangle(p, x, top, e->sub[1 - mj], v, a)) {
		snprintf(msg, sizeof msg,
		         "cache '%s': packed=%s, but a use of '%s' may lie %s the diagonal of its "
		         "block (no loop bound "
		         "shows %s)",
		         it->name, packed_word(it), p->k->arrays[it->root_array].name,
		         mj == 0 ? "above" : "below", mj == 0 ? "column <= row" : "row <= column");
		return pp_err(p, it->packed_opt.pos, "%s%s", msg, "");
	}
	/* T(v + a) + minor = T(v) + a * v + T(a) + minor (T(a) = a * (a + 1) / 2 for a < 0 too) */
	if (a < -(INT64_C(1) << 30) || a > (INT64_C(1) << 30))
		return pp_err(p, it->packed_opt.pos, "cache '%s': packed= offset out of range%s",
		              it->name, "");
	ta = a * (a + 1) / 2;
	aff s = pl_aff_plus(p, e->sub[1 - mj], pl_aff_var(p, AFF_TRI, v, 1), 1);
	if (a)
		s = pl_aff_plus(p, s, pl_aff_var(p, AFF_LOOP, v, a), 1);
	s = pl_aff_plus(p, s, aff_const(ta), 1);
	aff *ns = ct_arena_alloc(p->a, sizeof *ns * 2);
	if (!ns)
		return pp_nomem(p);
	ns[0] = s;
	e->sub = ns;
	return p->ok;
}

static bool pack_expr(pp *p, int buf, ir_expr *e, const lt_node *x, const lt_node *top, bool copy)
{
	if (!e)
		return true;
	if (e->kind == EX_ACCESS && e->id == buf && !pack_access(p, e, x, top, copy))
		return false;
	for (int i = 0; i < e->nargs; i++)
		if (!pack_expr(p, buf, e->args[i], x, top, copy))
			return false;
	return true;
}

/* The copy-in statement x fills only the triangle: guard major - minor >= 0 (the buffer side's
 * subscripts, copy loop variables), added to the bounds guard around it or a new guard if. */
static bool guard_copy(pp *p, lt_node *x)
{
	int mj = major_dim(p->it);
	const aff *sub = x->stmt->lhs->sub;
	aff g = pl_aff_plus(p, sub[mj], sub[1 - mj], -1);
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

/* Walk x (under site loop top): guard the copies of buf and rewrite every access of it. */
static bool pack_tree(pp *p, int buf, lt_node *x, const lt_node *top)
{
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET || x->kind == LT_IF)) {
		const ir_node *s = x->stmt;
		bool copy = pl_is_copy(x);
		if (copy && s->lhs && s->lhs->id == buf && !guard_copy(p, x))
			return false;
		if (!pack_expr(p, buf, s->lhs, x, top, copy) ||
		    !pack_expr(p, buf, s->rhs, x, top, copy) ||
		    !pack_expr(p, buf, s->cond, x, top, copy))
			return false;
	}
	/* guard_copy may replace a kid: walk the kids as they are now */
	for (int i = 0; i < x->nkids; i++)
		if (!pack_tree(p, buf, x->kids[i], top))
			return false;
	for (int i = 0; i < x->nels; i++)
		if (!pack_tree(p, buf, x->els[i], top))
			return false;
	return true;
}

/* The region rid's buffer packed: its uses (the sites s[0..ns)) and its fills (pro[0..npro)). */
bool pl_pack_region(pp *p, int rid, const site *s, int ns, lt_node *const *pro, int npro)
{
	const ir_plan_item *it = p->it;
	lt_region *rg = &p->t->regions[rid];
	int buf = rg->buffer, mj = major_dim(it);
	if (rg->elided || rg->nmulti != 0 || rg->rank != 2 || rg->prologue != LT_PRO_COPY_IN ||
	    rg->epilogue != LT_EPI_NONE || buf == rg->source)
		return pp_err(p, it->packed_opt.pos,
		              "cache '%s': packed= needs a block that is only read and copied in "
		              "once (no multicache "
		              "slots)%s",
		              it->name, "");
	/* the triangle's element count; a box no larger is kept (an error: packing would not save)
	 */
	const bx *n = rg->shape[mj];
	const bx *cnt = pl_bxb(
	    p, BX_FLOORDIV, pl_bxb(p, BX_MUL, n, pl_bxb(p, BX_ADD, n, pl_bxc(p, 1))), pl_bxc(p, 2));
	int64_t e0, e1, ec;
	if (bx_is_const(rg->shape[0], &e0) && bx_is_const(rg->shape[1], &e1) &&
	    bx_is_const(cnt, &ec) && e0 * e1 <= ec) {
		char msg[300];
		snprintf(msg, sizeof msg,
		         "cache '%s': packed=%s would hold %lld elements, its %lld x %lld box no "
		         "more (drop packed=)",
		         it->name, packed_word(it), (long long)ec, (long long)e0, (long long)e1);
		return pp_err(p, it->packed_opt.pos, "%s%s", msg, "");
	}
	for (int i = 0; i < ns; i++)
		if (!pack_tree(p, buf, s[i].node, s[i].node))
			return false;
	for (int i = 0; i < npro; i++)
		if (!pack_tree(p, buf, pro[i], NULL))
			return false;
	ct_looptree *t = p->t;
	t->arrays[buf].rank = 1;
	t->arrays[buf].order[0] = 0;
	t->ext[buf * IR_MAX_RANK] = cnt;
	t->ext[buf * IR_MAX_RANK + 1] = NULL;
	rg->rank = 1;
	rg->shape[0] = cnt;
	rg->shape[1] = NULL;
	rg->order[0] = 0;
	rg->first_major = true;
	rg->last_major = false;
	return p->ok;
}
