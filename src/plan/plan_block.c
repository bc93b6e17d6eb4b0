/* plan_block.c: the active block of a cache site: the box its source's subscripts cover over the site's iterations. */
#include "plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

static const lt_node *inner_loop(const walkst *w, int index)
{
	for (int i = w->nin - 1; i >= 0; i--)
		if (w->in[i]->index == index)
			return w->in[i];
	return NULL;
}

/* Whether the inner terms of one subscript dimension (var, coef > 0)
 * sweep a range without gaps: sorted by step, each step is at most the
 * span of the smaller ones plus one. */
static bool dense_terms(pp *p, const walkst *w, const aff *x, bool *used)
{
	int64_t span = 0;
	bool taken[64] = {false};
	int n = 0;
	for (int i = 0; i < x->n; i++)
		if ((x->t[i].kind == AFF_LOOP || x->t[i].kind == AFF_TRIP) && inner_loop(w, x->t[i].id))
			n++;
	if (x->n > 64) /* taken[] is per term */
		return false;
	for (int round = 0; round < n; round++) {
		int best = -1;
		int64_t best_step = 0, best_span = 0;
		for (int i = 0; i < x->n; i++) {
			const aff_term *tm = &x->t[i];
			const lt_node *l = (tm->kind == AFF_LOOP || tm->kind == AFF_TRIP) ? inner_loop(w, tm->id) : NULL;
			if (!l || taken[i])
				continue;
			int64_t lo, last, st, sp;
			if (tm->coef <= 0 || lt_affine_loop(l) || !bx_is_const(l->lo, &lo) ||
			    !bx_is_const(pl_loop_last(p, l), &last))
				return false;
			st = tm->coef;
			if ((tm->kind != AFF_TRIP && !ct_mul_ok(tm->coef, l->step, &st)) || !ct_sub_ok(last, lo, &sp) ||
			    !ct_mul_ok(tm->coef, tm->kind == AFF_TRIP ? sp / l->step : sp, &sp))
				return false;
			if (best < 0 || st < best_step) {
				best = i;
				best_step = st;
				best_span = sp;
			}
		}
		if (best < 0 || best_step > span + 1)
			return false;
		taken[best] = true;
		if (!ct_add_ok(span, best_span, &span))
			return false;
		int v = x->t[best].id;
		for (int j = 0; j < w->nin; j++)
			if (w->in[j]->index == v) {
				if (used[j])
					return false;
				used[j] = true;
			}
	}
	return true;
}

/* Bound x (over params) widened to one end of its range: an affine loop's terms are affine in
 * params and original indices, each index taken at the end of its own span that makes the term
 * smallest (upper: largest). NULL when the span is unknown. */
static const bx *index_end(pp *p, int v, bool upper, int depth);

static const bx *term_end(pp *p, aff e, bool upper, int depth)
{
	const bx *r = pl_bxc(p, e.c);
	for (int i = 0; i < e.n && r; i++) {
		const aff_term *tm = &e.t[i];
		const bx *x = NULL;
		if (tm->kind == AFF_PARAM)
			x = bx_from_aff(p->a, p->k, pl_aff_var(p, AFF_PARAM, tm->id, 1));
		else if (tm->kind == AFF_INDEX)
			x = index_end(p, tm->id, (tm->coef > 0) == upper, depth + 1);
		else if (tm->kind == AFF_LOOP && tm->id >= 0 && tm->id < p->k->nindices &&
		         p->k->indices[tm->id].kind == IX_LOOP)
			/* the variable of a loop over a loop index (the outer loop of its split chain)
			 * takes values within that index's span */
			x = index_end(p, tm->id, (tm->coef > 0) == upper, depth + 1);
		else if (tm->kind == AFF_LOOP && tm->id >= 0 && tm->id < p->k->nindices &&
		         p->k->indices[tm->id].kind == IX_SPLIT && p->k->indices[tm->id].window > 0)
			/* the variable of a split's inner loop counts from 0 within its window */
			x = pl_bxc(p, (tm->coef > 0) == upper ? p->k->indices[tm->id].window - 1 : 0);
		if (!x)
			return NULL;
		r = pl_bxb(p, BX_ADD, r, pl_bxb(p, BX_MUL, x, pl_bxc(p, tm->coef)));
	}
	return r;
}

static const bx *index_end(pp *p, int v, bool upper, int depth)
{
	const ir_index *ix = &p->k->indices[v];
	if (depth > p->k->nindices || ix->kind != IX_LOOP)
		return NULL;
	if (!ir_index_affine(ix)) {
		const bx *e = bx_from_aff(p->a, p->k, upper ? ix->hi : ix->lo);
		return upper && e ? pl_bxb(p, BX_SUB, e, pl_bxc(p, 1)) : e;
	}
	/* lower: the largest of the lower terms' least values; upper: the smallest of the upper
	 * terms' greatest values, less one */
	int n = upper ? ix->nhi : ix->nlo;
	const bx *r = NULL;
	for (int j = 0; j < n; j++) {
		const bx *x = term_end(p, upper ? ix->his[j] : ix->los[j], upper, depth);
		if (!x)
			return NULL;
		r = !r ? x : pl_bxb(p, upper ? BX_MIN : BX_MAX, r, x);
	}
	return upper && r ? pl_bxb(p, BX_SUB, r, pl_bxc(p, 1)) : r;
}

bool pl_affine_span(pp *p, const lt_node *l, const bx **a, const bx **z)
{
	int64_t c;
	bool nolo = bx_is_const(l->lo, &c) && c == LT_NO_LO, nohi = bx_is_const(l->hi, &c) && c == LT_NO_HI;
	*a = nolo ? index_end(p, l->index, false, 0) : l->lo;
	*z = nohi ? index_end(p, l->index, true, 0) : pl_bxb(p, BX_SUB, l->hi, pl_bxc(p, 1));
	/* a bound over params as well as affine terms (the inner loop of a split of an affine
	 * loop: `0 .. min(W, N - i)`): each term's own end tightens it, else a huge W would size
	 * the box */
	for (int j = 0; j < l->ndlo && *a && !nolo; j++) {
		const bx *t = term_end(p, l->dlo[j], false, 0);
		if (t)
			*a = pl_bxb(p, BX_MAX, *a, t);
	}
	for (int j = 0; j < l->ndhi && *z && !nohi; j++) {
		const bx *t = term_end(p, l->dhi[j], true, 0);
		if (t)
			*z = pl_bxb(p, BX_MIN, *z, pl_bxb(p, BX_SUB, t, pl_bxc(p, 1)));
	}
	return *a && *z;
}

/* Fold one access (subscripts sub[]) into the block. */
static void blk_access(pp *p, blk *b, const walkst *w, const aff *sub, int rank, bool is_write)
{
	if (!b->any) {
		b->rank = rank;
	} else if (b->rank != rank) {
		b->mismatch = true;
		return;
	}
	wr cur;
	memset(&cur, 0, sizeof cur);
	bool used[IR_MAX_DEPTH * 4] = {false};
	cur.dense = is_write && !w->under_if;
	for (int d = 0; d < rank && p->ok; d++) {
		aff x = pl_to_loop(p, sub[d]);
		/* the constant joins the range: A[x-1] and A[x+1] move alike */
		aff outer = aff_const(0);
		const bx *lo = pl_bxc(p, x.c), *hi = pl_bxc(p, x.c);
		for (int i = 0; i < x.n; i++) {
			const aff_term *tm = &x.t[i];
			const lt_node *l = (tm->kind == AFF_LOOP || tm->kind == AFF_TRIP) ? inner_loop(w, tm->id) : NULL;
			if (!l) {
				outer = pl_aff_plus(p, outer, pl_aff_var(p, tm->kind, tm->id, 1), tm->coef);
				continue;
			}
			const bx *a = l->lo, *z = NULL;
			if (lt_affine_loop(l)) {
				/* its lo and hi are no range: the box over its span, for reads only (a written
				 * box would be copied back over elements the loop never wrote) */
				if (tm->kind == AFF_TRIP || !pl_affine_span(p, l, &a, &z))
					b->affine = b->affine ? b->affine : l;
				else if (is_write)
					b->affine_write = b->affine_write ? b->affine_write : l;
				if (!z)
					continue;
			} else {
				z = pl_loop_last(p, l);
			}
			if (tm->kind == AFF_TRIP) {
				a = pl_bxb(p, BX_FLOORDIV, a, pl_bxc(p, l->step));
				z = pl_bxb(p, BX_FLOORDIV, z, pl_bxc(p, l->step));
			}
			const bx *ca = pl_bxb(p, BX_MUL, a, pl_bxc(p, tm->coef)), *cz = pl_bxb(p, BX_MUL, z, pl_bxc(p, tm->coef));
			lo = pl_bxb(p, BX_ADD, lo, tm->coef > 0 ? ca : cz);
			hi = pl_bxb(p, BX_ADD, hi, tm->coef > 0 ? cz : ca);
		}
		if (cur.dense)
			cur.dense = dense_terms(p, w, &x, used);
		cur.lo[d] = lo;
		cur.hi[d] = hi;
		if (!b->any) {
			b->outer[d] = outer;
			b->lo[d] = lo;
			b->hi[d] = hi;
		} else {
			if (!aff_equal(b->outer[d], outer))
				b->mismatch = true;
			b->lo[d] = pl_bxb(p, BX_MIN, b->lo[d], lo);
			b->hi[d] = pl_bxb(p, BX_MAX, b->hi[d], hi);
		}
	}
	b->any = true;
	if (w->under_if)
		b->inner_if = true;
	if (is_write) {
		if (b->nw < PP_MAX_WRITES)
			b->w[b->nw++] = cur;
		else
			b->too_many_writes = true;
	}
}

static void blk_expr(pp *p, blk *b, const walkst *w, const ir_expr *e)
{
	if (!e || !p->ok)
		return;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id]) {
		b->read = true;
		blk_access(p, b, w, e->sub, p->t->arrays[e->id].rank, false);
	}
	for (int i = 0; i < e->nargs; i++)
		blk_expr(p, b, w, e->args[i]);
}

void pl_blk_walk(pp *p, blk *b, walkst *w, const lt_node *x)
{
	if (!p->ok)
		return;
	bool pushed = false, was_if = w->under_if;
	switch (x->kind) {
	case LT_LOOP:
		if (w->nin == (int)(sizeof w->in / sizeof w->in[0])) {
			pp_err(p, p->it->pos, "cache '%s': more than 256 loops nested inside it%s", p->it->name, "");
			return;
		}
		w->in[w->nin++] = x;
		pushed = true;
		break;
	case LT_STMT:
		if (!pl_is_copy(x) && x->stmt) {
			const ir_node *s = x->stmt;
			blk_expr(p, b, w, s->rhs);
			const ir_expr *l = s->lhs;
			if (l && l->id >= 0 && l->id < p->nis_src && p->is_src[l->id]) {
				if (s->op == AS_ADD || s->op == AS_SUB)
					b->accum = true;
				else
					b->setw = true;
				if (s->op == AS_MUL)
					b->read = true;
				blk_access(p, b, w, l->sub, p->t->arrays[l->id].rank, true);
			}
		}
		break;
	case LT_LET:
		if (x->stmt)
			blk_expr(p, b, w, x->stmt->rhs);
		break;
	case LT_IF:
		if (x->stmt)
			blk_expr(p, b, w, x->stmt->cond);
		w->under_if = true;
		break;
	case LT_CACHE:
		break;
	}
	for (int i = 0; i < x->nkids; i++)
		pl_blk_walk(p, b, w, x->kids[i]);
	for (int i = 0; i < x->nels; i++)
		pl_blk_walk(p, b, w, x->els[i]);
	w->under_if = was_if;
	if (pushed)
		w->nin--;
}

/* The active block of the source over site x (x's own loop is inside). A
 * block under an `if`, or over an affine loop (which may run no iteration
 * where the box's rows were never proved in bounds), is guarded: its copies
 * test the array's bounds. */
void pl_block_of(pp *p, const lt_node *x, blk *b)
{
	memset(b, 0, sizeof *b);
	walkst w;
	memset(&w, 0, sizeof w);
	pl_blk_walk(p, b, &w, x);
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_IF)
			b->guarded = true;
	if (b->inner_if || lt_affine_below(x))
		b->guarded = true;
}

const bx *pl_blk_extent(pp *p, const blk *b, int d)
{
	return pl_bxb(p, BX_ADD, pl_bxb(p, BX_SUB, b->hi[d], b->lo[d]), pl_bxc(p, 1));
}

bool pl_blk_equal(pp *p, const blk *x, const blk *y)
{
	if (!x->any || !y->any || x->mismatch || y->mismatch || x->rank != y->rank)
		return false;
	for (int d = 0; d < x->rank; d++)
		if (!aff_equal(x->outer[d], y->outer[d]) || !bx_equal(pl_blk_extent(p, x, d), pl_blk_extent(p, y, d)) ||
		    !bx_equal(x->lo[d], y->lo[d]))
			return false;
	return true;
}

/* Element count of a block when it is a constant; -1 otherwise. A packed cache's block counts
 * its triangle (plan_pack.c). */
int64_t pl_blk_volume(pp *p, const blk *b)
{
	int64_t n = 1, e;
	for (int d = 0; d < b->rank; d++) {
		if (!bx_is_const(pl_blk_extent(p, b, d), &e))
			return -1;
		if (e < 0)
			e = 0;
		if (!ct_mul_ok(n, e, &n))
			return -1;
		if (p->it && p->it->packed != PACK_NONE && b->rank == 2 && d == (p->it->packed == PACK_UPPER ? 1 : 0))
			return pl_pack_count(e);
	}
	return n;
}

/* Whether a loop variable (either term kind) occurs in x. */
static bool aff_uses_loop(aff x, int index)
{
	for (int i = 0; i < x.n; i++)
		if ((x.t[i].kind == AFF_LOOP || x.t[i].kind == AFF_TRIP) && x.t[i].id == index)
			return true;
	return false;
}

bool pl_blk_uses_loop(const blk *b, int index)
{
	for (int d = 0; d < b->rank; d++)
		if (aff_uses_loop(b->outer[d], index))
			return true;
	return false;
}
