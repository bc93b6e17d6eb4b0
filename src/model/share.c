/* share.c: which iterations of a parallel band each thread runs (predict --threads). */
#include "model/model_int.h"

bool share_is_band(const lt_node *lt)
{
	if (!lt || lt->kind != LT_LOOP)
		return false;
	const lt_node *p = lt;
	for (int d = 0; p && p->kind == LT_LOOP && d < SHARE_MAX_BAND; d++) {
		if (p->parallel)
			return d < p->collapse;
		if (!p->parent || p->parent->kind != LT_LOOP || p->parent->nkids != 1)
			return false;
		p = p->parent;
	}
	return false;
}

int share_level(const mshare *s, const mnode *x)
{
	if (!x->is_loop || !x->lt)
		return -1;
	if (s->active) {
		/* level 0 too: a later piece of the parallel loop itself */
		for (int c = 0; c < s->ncol; c++)
			if (s->band[c] == x->lt)
				return c;
		return -1;
	}
	return x->lt->parallel ? 0 : -1;
}

/* The iterations of x's loop before piece x (its earlier siblings of the same loop), and all of
 * them. */
static void piece_offset(const mnode *x, int64_t *off, int64_t *total)
{
	*off = 0;
	*total = 0;
	const mnode *p = x->parent;
	bool before = true;
	for (int i = 0; p && i < p->nkids; i++) {
		const mnode *y = p->kids[i];
		if (y == x)
			before = false;
		if (!y->is_loop || y->lt != x->lt)
			continue;
		*total += y->n;
		if (before && y != x)
			*off += y->n;
	}
	if (!p)
		*total = x->n;
}

bool share_first_piece(const mnode *x)
{
	int64_t off, total;
	piece_offset(x, &off, &total);
	return off == 0;
}

bool share_last_piece(const mnode *x)
{
	int64_t off, total;
	piece_offset(x, &off, &total);
	return off + x->n == total;
}

/* The band of parallel loop piece x: its loops, trips, team and this thread's chunk. */
static void share_start(mshare *s, const mnode *x)
{
	const lt_node *lt = x->lt;
	int ncol = lt->collapse < 1 ? 1 : lt->collapse > SHARE_MAX_BAND ? SHARE_MAX_BAND : lt->collapse;
	int64_t off;
	s->band[0] = lt;
	piece_offset(x, &off, &s->trips[0]);
	const mnode *y = x;
	int c = 1;
	for (; c < ncol; c++) {
		const lt_node *in = s->band[c - 1]->nkids == 1 ? s->band[c - 1]->kids[0] : NULL;
		const mnode *first = NULL;
		int64_t trips = 0;
		for (int i = 0; in && i < y->nkids; i++)
			if (y->kids[i]->is_loop && y->kids[i]->lt == in) {
				trips += y->kids[i]->n;
				first = first ? first : y->kids[i];
			}
		if (!first)
			break;
		s->band[c] = in;
		s->trips[c] = trips;
		y = first;
	}
	s->ncol = c;
	int64_t n = 1;
	for (int i = s->ncol - 1; i >= 0; i--) {
		s->below[i] = n;
		n = n > INT64_MAX / s->trips[i] ? INT64_MAX : n * s->trips[i];
	}
	const ir_plan_item *it = lt->par_item >= 0 && lt->par_item < s->k->nplan ? &s->k->plan[lt->par_item] : NULL;
	/* the generated code's ct_team(nt, most, trips) */
	int64_t team = s->nthreads;
	if (it && it->max_threads > 0 && it->max_threads < team)
		team = it->max_threads;
	if (n < team)
		team = n;
	if (team < 1)
		team = 1;
	s->team = (int)team;
	s->assumed = s->assumed || lt->tail || (it && (it->policy == POLICY_DYNAMIC || it->spmd));
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
	piece_offset(x, off, &total);
	/* iteration g of the level-c loop covers flattened [(P * T + g) * R, + R) */
	if (s->lo >= s->hi) {
		*a = *b = 0;
		return;
	}
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
	if (c == 0 && share_last_piece(x))
		s->active = false;
}

bool share_runs_serial(const mshare *s)
{
	return s->active || s->thread == 0;
}
