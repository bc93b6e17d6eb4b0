/* plan_place.c: placement of a cache: its sites (index=, level=, max_elements=), hoisting, triggers, folded versions. */
#include "plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ sites */


static bool add_site(pp *p, sitelist *l, lt_node *x, bool element)
{
	if (!ct_vec_grow(p->ctx, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return pp_nomem(p);
	site *s = &l->v[l->n++];
	memset(s, 0, sizeof *s);
	s->node = x;
	s->trigger = x;
	s->element = element;
	return true;
}

/* Loops over index x whose subtree uses the source (not inside another such loop). */
static void find_index_sites(pp *p, lt_node *x, int index, sitelist *l)
{
	if (!p->ok)
		return;
	if (x->kind == LT_LOOP && x->index == index) {
		if (pl_subtree_uses(p, x) && pl_inside_parent(p, x))
			add_site(p, l, x, false);
		return;
	}
	for (int i = 0; i < x->nkids; i++)
		find_index_sites(p, x->kids[i], index, l);
	for (int i = 0; i < x->nels; i++)
		find_index_sites(p, x->els[i], index, l);
}

/* Whether x's body uses the source outside any loop nested in it. */
static bool direct_use(const pp *p, const lt_node *x)
{
	for (int i = 0; i < x->nkids; i++) {
		const lt_node *y = x->kids[i];
		if (y->kind == LT_LOOP)
			continue;
		if (pl_node_uses(p, y) || ((y->kind == LT_IF || y->kind == LT_CACHE) && direct_use(p, y)))
			return true;
	}
	for (int i = 0; i < x->nels; i++) {
		const lt_node *y = x->els[i];
		if (y->kind != LT_LOOP && (pl_node_uses(p, y) || direct_use(p, y)))
			return true;
	}
	return false;
}

/* Innermost loops around uses (budget caches start there). */
static void find_innermost(pp *p, lt_node *x, sitelist *l)
{
	if (!p->ok)
		return;
	if (x->kind == LT_LOOP && direct_use(p, x) && pl_inside_parent(p, x))
		add_site(p, l, x, false);
	for (int i = 0; i < x->nkids; i++)
		find_innermost(p, x->kids[i], l);
	for (int i = 0; i < x->nels; i++)
		find_innermost(p, x->els[i], l);
}

static bool is_ancestor(const lt_node *a, const lt_node *x)
{
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y == a)
			return true;
	return false;
}

/* A site inside another site (or at the same node as an earlier one)
 * belongs to it: that site's block covers its uses, and a second region
 * there would copy the block twice (a reduce would add it twice). */
static void drop_nested_sites(sitelist *l)
{
	for (int i = 0; i < l->n; i++)
		for (int j = 0; j < l->n; j++)
			if (i != j && l->v[i].node && l->v[j].node &&
			    (is_ancestor(l->v[j].node, l->v[i].node) || (j < i && l->v[j].node == l->v[i].node)))
				l->v[i].node = NULL;
	int m = 0;
	for (int i = 0; i < l->n; i++)
		if (l->v[i].node)
			l->v[m++] = l->v[i];
	l->n = m;
}

/* The loop directly around x, looking through the region nodes of other
 * caches (never through one of the source cache: a cache of a cache stays
 * inside it); NULL at an `if` or the top. */
static lt_node *loop_above(const pp *p, const lt_node *x)
{
	lt_node *y = x->parent;
	while (y && y->kind == LT_CACHE && y->cache >= 0 && y->cache < p->t->nregions &&
	       p->t->regions[y->cache].item != p->parent_item)
		y = y->parent;
	return y && y->kind == LT_LOOP ? y : NULL;
}

/* The block of the body of loop x for one iteration (element level). */
static void block_of_body(pp *p, const lt_node *x, blk *b)
{
	memset(b, 0, sizeof *b);
	walkst w;
	memset(&w, 0, sizeof w);
	for (int i = 0; i < x->nkids; i++)
		pl_blk_walk(p, b, &w, x->kids[i]);
	for (const lt_node *y = x; y; y = y->parent)
		if (y->kind == LT_IF)
			b->guarded = true;
	if (b->inner_if)
		b->guarded = true;
}

/* The max_elements walk from an innermost loop. */
static bool budget_site(pp *p, site *s)
{
	lt_node *x = s->node;
	blk b;
	pl_block_of(p, x, &b);
	int64_t n = pl_blk_volume(p, &b);
	if (n < 0 || n > p->it->value) {
		s->element = true;
		block_of_body(p, x, &s->b);
		return p->ok;
	}
	s->b = b;
	for (lt_node *y = loop_above(p, x); y; y = loop_above(p, x)) {
		blk up;
		pl_block_of(p, y, &up);
		int64_t m = pl_blk_volume(p, &up);
		if (m < 0 || m > p->it->value || up.mismatch)
			break;
		x = y;
		s->b = up;
	}
	s->node = s->trigger = x;
	return true;
}

/* Hoisting: out over loops that do not move or widen the block (never
 * above limit, the trigger of a multicache). */
static void hoist(pp *p, site *s, const lt_node *limit)
{
	while (s->node != limit) {
		lt_node *y = loop_above(p, s->node);
		if (!y)
			break;
		blk up;
		pl_block_of(p, y, &up);
		if (!pl_blk_equal(p, &up, &s->b))
			break;
		bool trig = s->trigger == s->node;
		s->node = y;
		if (trig)
			s->trigger = y;
		s->b = up;
	}
}

/*
 * Versions of a cache's trigger loop share one buffer (a cache with a
 * trigger; one without is hoisted over the loops that do not move it): a
 * site whose trigger is a later version (the tail) of the loop that
 * triggers an earlier site, with the same block, and a block that the loop
 * does not move, is grouped with that site; its region then spans the
 * versions (one copy, filled once, instead of one per version: B packed
 * again for a tail of rows). The versions must follow each other among
 * their parent's kids.
 */
static void fold_versions(pp *p, site *v, int n)
{
	for (int i = 0; i < n; i++) {
		site *s = &v[i];
		lt_node *T = s->trigger;
		if (!s->b.any || s->b.mismatch || s->element || T->kind != LT_LOOP ||
		    pl_blk_uses_loop(&s->b, T->index))
			continue;
		int pt = pl_kid_pos(T);
		if (pt < 0)
			continue;
		for (int j = 0; j < i; j++) {
			const site *o = &v[j];
			lt_node *U = o->trigger;
			if (U == T || o->element || U->parent != T->parent || U->kind != LT_LOOP ||
			    U->index != T->index || !pl_blk_equal(p, &s->b, &o->b))
				continue;
			int pu = pl_kid_pos(U);
			bool between = pu >= 0 && pu < pt;
			for (int q = pu + 1; q < pt && between; q++) {
				const lt_node *w = T->parent->kids[q];
				between = w->kind == LT_LOOP && w->index == T->index;
			}
			if (!between)
				continue;
			s->version = T;
			s->trigger = U;
			break;
		}
	}
}

/* Whether two versions x, y of one loop run disjoint trip numbers
 * floor(v / step): constant ranges that do not meet, or a main version
 * ending where the other (its tail) starts. */
static bool trips_disjoint(const lt_node *x, const lt_node *y)
{
	int64_t xl, xh, yl, yh;
	if (lt_const_range(x, &xl, &xh) && lt_const_range(y, &yl, &yh)) {
		if (xh <= xl || yh <= yl)
			return true; /* an empty version fills nothing */
		int64_t s = x->step;
		int64_t x0 = ct_floordiv(xl, s), x1 = ct_floordiv(xh - 1, s);
		int64_t y0 = ct_floordiv(yl, s), y1 = ct_floordiv(yh - 1, s);
		return x1 < y0 || y1 < x0;
	}
	return bx_equal(x->hi, y->lo) || bx_equal(y->hi, x->lo);
}

/*
 * Whether two sites under one trigger can share a buffer. The buffer has
 * one slot per iteration of the loops between the trigger and the sites
 * that move the block, and each site's copy fills the slots of its own
 * iterations. Two sites under versions (main, tail) of such a loop with
 * disjoint trips fill different slots; two with the same block fill the
 * same slots with the same elements. Any other pair would fill one slot
 * with two different blocks (the main and the tail version of the cache
 * loop itself under one trigger iteration): those get a region each.
 */
bool pl_share_slots(pp *p, const site *a, const site *b)
{
	if (pl_blk_equal(p, &a->b, &b->b))
		return true;
	for (const lt_node *y = a->node->parent; y; y = y->parent) {
		if (y->kind == LT_LOOP && pl_blk_uses_loop(&a->b, y->index)) {
			const lt_node *z = pl_anc_loop(b->node, y->index);
			if (z && z != y && z->step == y->step && trips_disjoint(y, z))
				return true;
		}
		if (y == a->trigger || y == a->version)
			break;
	}
	return false;
}

/* The loop over tindex around site x (*trig; left alone when there is
 * none). False when a cache of a cache would find it only outside its
 * source cache's region: the copies would read a buffer that does not
 * hold the block yet (levels that check and the loop tree count alike
 * never place it so; this keeps the tree sound if they ever differ). */
static bool find_trigger(const pp *p, lt_node *x, int tindex, lt_node **trig)
{
	for (lt_node *y = x->parent; y; y = y->parent) {
		if (y->kind == LT_LOOP && y->index == tindex) {
			*trig = y;
			return true;
		}
		if (p->parent_item >= 0 && y->kind == LT_CACHE && y->cache >= 0 && y->cache < p->t->nregions &&
		    p->t->regions[y->cache].item == p->parent_item) {
			for (const lt_node *z = y->parent; z; z = z->parent)
				if (z->kind == LT_LOOP && z->index == tindex)
					return false;
			return true;
		}
	}
	return true;
}

/* The storages that count as the item's source. */

/* The sites of the cache item being applied (index= and level=: the loops
 * over index, each hoisted and given its trigger, the loop over tindex
 * around it; max_elements=: the budget walk from the innermost loops);
 * false after an error. */
bool pl_place_sites(pp *p, int index, int tindex, sitelist *l)
{
	ct_looptree *t = p->t;
	const ir_plan_item *it = p->it;
	if (it->where == CP_BUDGET) {
		for (int i = 0; i < t->nroots; i++)
			find_innermost(p, t->roots[i], l);
		for (int i = 0; i < l->n && p->ok; i++)
			budget_site(p, &l->v[i]);
		drop_nested_sites(l);
		return true;
	}
	for (int i = 0; i < t->nroots; i++)
		find_index_sites(p, t->roots[i], index, l);
	for (int i = 0; i < l->n && p->ok; i++) {
		site *s = &l->v[i];
		pl_block_of(p, s->node, &s->b);
		lt_node *trig = s->node;
		if (tindex != index && !find_trigger(p, s->node, tindex, &trig))
			return pp_err(p, it->trigger_opt.pos,
			              "the trigger of cache '%s' lies outside the region of its source cache '%s'",
			              it->name, p->k->plan[p->parent_item].name);
		s->trigger = trig;
		hoist(p, s, trig != s->node ? trig : NULL);
		if (s->node == trig)
			s->trigger = s->node;
	}
	/* versions of a loop inside one that does not move the block (the
	 * main and tail k2 inside a tail k) hoist to the same loop: one site */
	drop_nested_sites(l);
	if (!it->double_buffer && it->has_trigger)
		fold_versions(p, l->v, l->n);
	return true;
}
