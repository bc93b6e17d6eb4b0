/* plan_copy.c: construction of a cache's copies: accesses rewritten to the buffer, copy loop nests, the thrifty test. */
#include "plan/plan_internal.h"
#include "ir/layout.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ expressions */

static ir_expr *new_expr(pp *p, ir_expr_kind kind, ct_dtype type)
{
	ir_expr *e = ct_arena_alloc(p->a, sizeof *e);
	if (!e) {
		pp_nomem(p);
		return NULL;
	}
	e->kind = kind;
	e->type = type;
	e->height = 1;
	return e;
}

/* storage[sub[0..rank)] */
ir_expr *pl_access_expr(pp *p, int storage, const aff *sub, int rank)
{
	ir_expr *e = new_expr(p, EX_ACCESS, p->t->arrays[storage].type);
	aff *s = ct_arena_alloc(p->a, sizeof *s * (size_t)(rank + 1));
	if (!e || !s)
		return e ? (pp_nomem(p), NULL) : NULL;
	memcpy(s, sub, sizeof *s * (size_t)rank);
	e->id = storage;
	e->sub = s;
	return e;
}


static ir_expr *rw_expr(pp *p, const rwmap *m, ir_expr *e);

static ir_expr *rw_access(pp *p, const rwmap *m, const ir_expr *e)
{
	int rank = p->t->arrays[e->id].rank;
	aff sub[IR_MAX_RANK];
	int n = 0;
	for (int j = 0; j < m->nslot; j++)
		sub[n++] = m->slot[j];
	for (int d = 0; d < rank && n < IR_MAX_RANK; d++)
		sub[n++] = pl_aff_plus(p, pl_to_loop(p, e->sub[d]), m->off[d], -1);
	ir_expr *r = pl_access_expr(p, m->buffer, sub, n);
	if (r) {
		r->pos = e->pos;
		r->sub_expr = NULL;
	}
	return r;
}

static ir_expr *rw_expr(pp *p, const rwmap *m, ir_expr *e)
{
	if (!e || !p->ok || !pl_expr_uses(p, e))
		return e;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id])
		return rw_access(p, m, e);
	ir_expr *c = new_expr(p, e->kind, e->type);
	ir_expr **args = ct_arena_alloc(p->a, sizeof *args * (size_t)(e->nargs + 1));
	if (!c || !args) {
		pp_nomem(p);
		return e;
	}
	*c = *e;
	for (int i = 0; i < e->nargs; i++)
		args[i] = rw_expr(p, m, e->args[i]);
	c->args = args;
	return c;
}

/* Rewrite every access of the source under x (copies of other caches
 * included: they only name the source when it is their own). */
void pl_rw_tree(pp *p, const rwmap *m, lt_node *x)
{
	if (!p->ok)
		return;
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET || x->kind == LT_IF) && !pl_is_copy(x) &&
	    pl_node_uses(p, x)) {
		ir_node *s = ct_arena_alloc(p->a, sizeof *s);
		if (!s) {
			pp_nomem(p);
			return;
		}
		*s = *x->stmt;
		if (x->kind == LT_IF) {
			s->cond = rw_expr(p, m, s->cond);
		} else {
			s->rhs = rw_expr(p, m, s->rhs);
			if (x->kind == LT_STMT && s->lhs && s->lhs->id >= 0 && s->lhs->id < p->nis_src &&
			    p->is_src[s->lhs->id])
				s->lhs = rw_access(p, m, s->lhs);
		}
		x->stmt = s;
	}
	for (int i = 0; i < x->nkids; i++)
		pl_rw_tree(p, m, x->kids[i]);
	for (int i = 0; i < x->nels; i++)
		pl_rw_tree(p, m, x->els[i]);
}

/* ------------------------------------------------------------ copy loops */


static aff side_sub(pp *p, const side *s, int d)
{
	return pl_aff_plus(p, s->base[d], pl_aff_var(p, AFF_LOOP, pl_copy_index(p, d), 1), 1);
}

static ir_expr *side_expr(pp *p, const side *s, int rank)
{
	aff sub[IR_MAX_RANK];
	int n = 0;
	for (int j = 0; j < s->npre; j++)
		sub[n++] = s->pre[j];
	for (int d = 0; d < rank && n < IR_MAX_RANK; d++)
		sub[n++] = side_sub(p, s, d);
	return pl_access_expr(p, s->storage, sub, n);
}

/*
 * The copy nest `buf (op) array` over ext[] (one per copied dimension),
 * loops in the order of ord[] (most major first: the buffer's layout for
 * fills, the array's for write-backs),
 * guarded by the root array's extents when g is set. Returns the outermost
 * node, parent set.
 */
lt_node *pl_copy_nest(pp *p, copy_op op, const side *buf, const side *arr, int rank, const bx *const *ext,
                          const int *ord, const gspec *g, lt_node *parent)
{
	ct_dtype ty = p->t->arrays[buf->storage].type;
	ir_node *s = ct_arena_alloc(p->a, sizeof *s);
	if (!s) {
		pp_nomem(p);
		return NULL;
	}
	s->kind = ND_STMT;
	s->stmt_id = 0;
	if (op == CP_IN || op == CP_ZERO) {
		s->lhs = side_expr(p, buf, rank);
		if (op == CP_IN) {
			s->rhs = side_expr(p, arr, rank);
		} else {
			s->rhs = new_expr(p, EX_NUM, ty);
			if (s->rhs)
				s->rhs->untyped = true;
		}
		s->op = AS_SET;
	} else {
		s->lhs = side_expr(p, arr, rank);
		s->rhs = side_expr(p, buf, rank);
		s->op = op == CP_REDUCE ? AS_ADD : AS_SET;
	}
	if (!s->lhs || !s->rhs)
		return NULL;
	s->lhs->height = s->rhs->height = 1;
	lt_node *top = NULL, *at = parent;
	lt_node **hole = &top;
	for (int j = 0; j < rank; j++) {
		int d = ord[j];
		lt_node *l = pl_new_node(p, LT_LOOP, at);
		if (!l)
			return NULL;
		l->index = pl_copy_index(p, d);
		l->lo = pl_bxc(p, 0);
		l->hi = ext[d];
		*hole = l;
		l->kids = ct_arena_alloc(p->a, sizeof *l->kids);
		if (!l->kids) {
			pp_nomem(p);
			return NULL;
		}
		l->nkids = 1;
		hole = &l->kids[0];
		at = l;
	}
	if (g && g->nskip < rank) {
		lt_node *gn = pl_new_node(p, LT_IF, at);
		aff *gv = ct_arena_alloc(p->a, sizeof *gv * (size_t)(2 * rank + 1));
		if (!gn || !gv) {
			pp_nomem(p);
			return NULL;
		}
		const ir_array *ar = &p->t->arrays[g->root];
		int ng = 0;
		for (int d = g->nskip; d < rank; d++) {
			aff v = pl_aff_plus(p, g->off[d - g->nskip], side_sub(p, arr, d), 1);
			gv[ng++] = v;
			gv[ng++] = pl_aff_plus(p, pl_aff_plus(p, ar->ext[d - g->nskip], aff_const(-1), 1), v, -1);
		}
		gn->guard = gv;
		gn->nguard = ng;
		gn->kids = ct_arena_alloc(p->a, sizeof *gn->kids);
		if (!gn->kids) {
			pp_nomem(p);
			return NULL;
		}
		gn->nkids = 1;
		*hole = gn;
		hole = &gn->kids[0];
		at = gn;
	}
	lt_node *st = pl_new_node(p, LT_STMT, at);
	if (!st)
		return NULL;
	st->stmt = s;
	*hole = st;
	return top;
}

/* ------------------------------------------------------------ layouts and thrifty */

/* Source strides as constants (-1 where one is not known when the code is
 * generated: runtime extents). */
void pl_source_strides(pp *p, int storage, int64_t *stride)
{
	const ir_array *ar = &p->t->arrays[storage];
	int64_t ext[IR_MAX_RANK];
	if (ar->strided) /* strides come with the call: never elided */
		return;
	for (int d = 0; d < ar->rank; d++)
		if (!bx_is_const(p->t->ext[storage * IR_MAX_RANK + d], &ext[d]))
			ext[d] = -1;
	/* on overflow the dimensions not reached keep the caller's -1 */
	(void)ir_layout_strides(ar->rank, ar->order, ext, stride, NULL, NULL);
}

/*
 * Thrifty: the buffer is the source itself when walking the buffer in its
 * layout order steps through the source one element at a time: the
 * minor-most dimension that moves has source stride 1, and each next one
 * moves the source by exactly the span of those below it.
 */
bool pl_elidable(pp *p, int src, int rank, int nslot, const int64_t *slot_step, const bx *const *ext,
                     const int *border)
{
	int64_t sst[IR_MAX_RANK];
	for (int d = 0; d < IR_MAX_RANK; d++)
		sst[d] = -1;
	pl_source_strides(p, src, sst);
	int64_t expect = 1;
	for (int j = nslot + rank - 1; j >= 0; j--) {
		int d = border[j]; /* buffer dimension */
		int64_t e;
		if (!bx_is_const(ext[d], &e))
			return false;
		if (e <= 1)
			continue;
		int64_t st = d < nslot ? slot_step[d] : sst[d - nslot];
		if (st != expect)
			return false;
		if (!ct_mul_ok(e, st, &expect))
			return false;
	}
	return true;
}
