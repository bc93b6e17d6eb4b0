/* share.c: which iterations of a parallel band each thread runs (predict --threads). */
#include "model/model_int.h"

/* The PL_PARALLELIZE item of parallel loop lt, or NULL. */
static const ir_plan_item *par_item(const ct_kernel *k, const lt_node *lt)
{
	if (!lt->parallel || lt->par_item < 0 || lt->par_item >= k->nplan)
		return NULL;
	const ir_plan_item *it = &k->plan[lt->par_item];
	return it->kind == PL_PARALLELIZE ? it : NULL;
}

bool share_is_band(const lt_node *lt)
{
	if (!lt || lt->kind != LT_LOOP)
		return false;
	if (lt->parallel)
		return true;
	const lt_node *p = lt->parent;
	for (int d = 1; p && p->kind == LT_LOOP && d < SHARE_MAX_BAND; d++, p = p->parent)
		if (p->parallel)
			return true;
	return false;
}

/* True when y belongs to level c of the band (a piece of one of its loops). */
static bool in_level(const mshare *s, const mnode *y, int c)
{
	if (!y->is_loop || !y->lt)
		return false;
	if (c == 0)
		return y->lt == s->top[0] || (s->ntop > 1 && y->lt == s->top[1]);
	return y->lt->index == s->bidx[c];
}

int share_level(const mshare *s, const mnode *x)
{
	if (!x->is_loop || !x->lt)
		return -1;
	if (s->active) {
		/* level 0 too: a later piece or the tail version of the parallel loop */
		for (int c = 0; c < s->ncol; c++)
			if (in_level(s, x, c))
				return c;
		return -1;
	}
	return x->lt->parallel ? 0 : -1;
}

/* The iterations of level c before piece x (its earlier siblings of that level), and all of
 * them. */
static void piece_offset(const mshare *s, const mnode *x, int c, int64_t *off, int64_t *total)
{
	*off = 0;
	*total = 0;
	const mnode *p = x->parent;
	if (!p) {
		*total = x->n;
		return;
	}
	bool before = true;
	for (int i = 0; i < p->nkids; i++) {
		const mnode *y = p->kids[i];
		if (y == x)
			before = false;
		if (!in_level(s, y, c))
			continue;
		*total += y->n;
		if (before)
			*off += y->n;
	}
}

bool share_first_piece(const mshare *s, const mnode *x)
{
	int64_t off, total;
	piece_offset(s, x, 0, &off, &total);
	return off == 0;
}

bool share_last_piece(const mshare *s, const mnode *x)
{
	int64_t off, total;
	piece_offset(s, x, 0, &off, &total);
	return off + x->n == total;
}

/* The node of the loop tree right after piece x's loop among its siblings (the next child of
 * x's parent in the model tree that comes from another node: the loop tree's top level has no
 * parent to ask), or NULL. */
static const lt_node *next_sibling(const mnode *x)
{
	const mnode *p = x->parent;
	bool after = false;
	for (int i = 0; p && i < p->nkids; i++) {
		const mnode *y = p->kids[i];
		if (y == x)
			after = true;
		else if (after && y->lt != x->lt)
			return y->lt;
	}
	return NULL;
}

/* The tail version right after main version x that the code generator runs in one loop with it
 * (cgen.c, parallel_versions), or NULL. */
static const lt_node *merged_tail(const mnode *piece)
{
	const lt_node *x = piece->lt, *y = next_sibling(piece);
	if (!y || y->kind != LT_LOOP || !y->parallel || x->collapse != 1 || y->collapse != 1 || x->index != y->index ||
	    x->tail || !y->tail || x->par_item != y->par_item || x->unroll || y->unroll)
		return NULL;
	return y;
}

/* A loop the code generator's grid takes as an inner version (pgrid.c, plain_loop_over). */
static bool plain_over(const lt_node *y, int idx)
{
	return y->kind == LT_LOOP && y->index == idx && !y->unroll && !y->vector && !y->parallel;
}

/* pgrid.c's match_grid: parallelize(i, j) (not spmd) over the versions of i (x, and the tail
 * right after it), each holding the same one or two plain loops over j (main, tail), with
 * versions at some level. Fills s's level 0 and 1 when it matches. */
static bool grid_shape(mshare *s, const mnode *piece, const ir_plan_item *it)
{
	const lt_node *x = piece->lt;
	if (!it || it->spmd || it->n != 2 || it->idx[0] != x->index)
		return false;
	const lt_node *outer[2] = {x, NULL}, *y = next_sibling(piece);
	int nouter = 1;
	if (y && !x->tail && y->kind == LT_LOOP && y->index == x->index && y->tail && y->parallel &&
	    y->par_item == x->par_item)
		outer[nouter++] = y;
	int ninner = x->nkids;
	if (ninner < 1 || ninner > 2)
		return false;
	for (int o = 0; o < nouter; o++) {
		const lt_node *ox = outer[o];
		if (ox->nkids != ninner || ox->unroll || ox->vector)
			return false;
		for (int c = 0; c < ninner; c++)
			if (!plain_over(ox->kids[c], it->idx[1]) || (ninner == 2 && ox->kids[c]->tail != (c == 1)))
				return false;
	}
	if (nouter == 1 && ninner == 1)
		return false;
	s->top[1] = outer[1];
	s->ntop = nouter;
	s->ncol = 2;
	s->bidx[1] = it->idx[1];
	return true;
}

/* The band's shape from its parallel loop lt (the first version met), as cgen.c's cg_nodes
 * emits it: a grid over the versions of two indices (tried first), else the main and tail
 * versions as one loop, else the loop and its collapsed single loops. */
static void band_shape(mshare *s, const mnode *piece, const ir_plan_item *it)
{
	const lt_node *lt = piece->lt;
	s->top[0] = lt;
	s->top[1] = NULL;
	s->ntop = 1;
	s->ncol = 1;
	s->bidx[0] = lt->index;
	if (grid_shape(s, piece, it))
		return;
	const lt_node *tail = merged_tail(piece);
	if (tail) {
		s->top[1] = tail;
		s->ntop = 2;
		return;
	}
	const lt_node *y = lt;
	for (int c = 1; c < lt->collapse && c < SHARE_MAX_BAND && y->nkids == 1 && y->kids[0]->kind == LT_LOOP; c++) {
		y = y->kids[0];
		s->bidx[c] = y->index;
		s->ncol = c + 1;
	}
}

/* The band of parallel loop piece x: its levels, trips, team and this thread's chunk. */
static void share_start(mshare *s, const mnode *x)
{
	const lt_node *lt = x->lt;
	const ir_plan_item *it = par_item(s->k, lt);
	band_shape(s, x, it);
	int64_t off;
	piece_offset(s, x, 0, &off, &s->trips[0]);
	/* the inner levels' trips under the first piece of the level above */
	const mnode *y = x;
	int c = 1;
	for (; c < s->ncol; c++) {
		const mnode *first = NULL;
		int64_t trips = 0;
		for (int i = 0; i < y->nkids; i++)
			if (in_level(s, y->kids[i], c)) {
				trips += y->kids[i]->n;
				first = first ? first : y->kids[i];
			}
		if (!first)
			break;
		s->trips[c] = trips;
		y = first;
	}
	s->ncol = c;
	int64_t n = 1;
	for (int i = s->ncol - 1; i >= 0; i--) {
		s->below[i] = n;
		n = n > INT64_MAX / s->trips[i] ? INT64_MAX : n * s->trips[i];
	}
	/* the generated code's ct_team(nt, most, trips) */
	int64_t team = s->nthreads;
	if (it && it->max_threads > 0 && it->max_threads < team)
		team = it->max_threads;
	if (n < team)
		team = n;
	if (team < 1)
		team = 1;
	s->team = (int)team;
	s->assumed = s->assumed || (it && (it->policy == POLICY_DYNAMIC || it->spmd));
	/* libgomp's static schedule: q = n / team each, the first n % team threads one more */
	int64_t q = n / team, r = n % team, i = s->thread;
	if (i >= team) {
		s->lo = s->hi = 0;
	} else if (i < r) {
		s->lo = i * (q + 1);
		s->hi = s->lo + q + 1;
	} else {
		s->lo = q * i + r;
		s->hi = s->lo + q;
	}
	s->pre[0] = 0;
	s->active = true;
	s->bands++;
}

void share_enter(mshare *s, const mnode *x, int c, int64_t *a, int64_t *b, int64_t *off)
{
	int64_t total;
	if (c == 0 && !s->active)
		share_start(s, x);
	piece_offset(s, x, c, off, &total);
	if (s->lo >= s->hi) {
		*a = *b = 0;
		return;
	}
	/* iteration g of level c covers flattened [(P * T + g) * R, + R) */
	int64_t base = s->pre[c] * s->trips[c], R = s->below[c];
	int64_t gfirst = s->lo / R - base, gend = (s->hi + R - 1) / R - base;
	*a = gfirst - *off > 0 ? gfirst - *off : 0;
	*b = gend - *off < x->n ? gend - *off : x->n;
	if (*b < *a)
		*b = *a;
}

void share_iter(mshare *s, int c, int64_t off, int64_t it)
{
	s->pre[c + 1] = s->pre[c] * s->trips[c] + off + it;
}

void share_leave(mshare *s, const mnode *x, int c)
{
	if (c == 0 && share_last_piece(s, x))
		s->active = false;
}

bool share_runs_serial(const mshare *s)
{
	return s->active || s->thread == 0;
}
