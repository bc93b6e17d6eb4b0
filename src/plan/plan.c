/* plan.c: the plan pass: cache regions, buffers, copy loops and access rewriting (Accera's plan.cache);
 * this file drives it item by item; placement is in plan_place.c, construction in plan_region.c and
 * plan_copy.c, the active blocks in plan_block.c, shared pieces in plan_base.c. */
#include "plan/plan.h"
#include "ir/order.h"
#include "ir/targets.h"
#include "plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * How a cache becomes loops. For each `cache(...)` item, in plan order:
 *   1. resolve its position against the loop order around the deepest use
 *      of its source (index=, level=, or the max_elements= walk);
 *   2. the sites are the loop nodes at that position whose subtree uses the
 *      source (main and tail versions are separate sites);
 *   3. each site's active block is the box of every subscript of the source
 *      over the site's iterations: per dimension an affine part in the
 *      enclosing loop variables plus [lo, hi] over the loops inside;
 *   4. hoisting moves a site out over loops that leave the block unchanged;
 *   5. the accesses decide prologue and epilogue; the thrifty test may
 *      elide the copy; otherwise a buffer is made, accesses inside are
 *      rewritten to it and copy loops are placed around the site (at the
 *      trigger for multicaches; peeled around the enclosing loop for
 *      double buffering).
 * Everything it adds is ordinary loop-tree material (loops, statements,
 * guard ifs), so the interpreter, the trace, the simulator and the C
 * backend run caches without knowing about them.
 */


static bool set_sources(pp *p)
{
	ct_looptree *t = p->t;
	const ir_plan_item *it = p->it;
	p->nis_src = t->narrays;
	p->is_src = ct_arena_alloc(p->a, sizeof *p->is_src * (size_t)(t->narrays + 1));
	if (!p->is_src)
		return pp_nomem(p);
	p->parent_item = it->src_cache;
	if (it->src_cache < 0) {
		p->is_src[it->src_array] = true;
		p->src_store = it->src_array;
		return true;
	}
	p->src_store = -1;
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *g = &t->regions[r];
		if (g->item != it->src_cache)
			continue;
		p->is_src[g->buffer] = true;
		if (p->src_store < 0 || g->buffer != g->source)
			p->src_store = g->buffer;
	}
	return p->src_store >= 0;
}

/* Every site's block must move with the loops around the cache the same way in all its uses. */
static bool check_blocks(pp *p, const sitelist *l)
{
	for (int i = 0; i < l->n && p->ok; i++) {
		const site *s = &l->v[i];
		if (!s->b.any)
			continue;
		if (s->b.affine)
			return pp_err(p, p->it->pos,
			              "cache '%s' holds loop '%s', whose bounds are affine (they use enclosing indices or "
			              "min/max), and its block moves with it: a cache's region must be rectangular (place "
			              "it inside that loop)",
			              p->it->name, p->t->indices[s->b.affine->index].name);
		/* the box is copied in whole and out whole (describe_region never zero-fills a region
		 * holding an affine loop); the host's dependence test of parallelize sees the copy-outs,
		 * a GPU generator tests that the boxes of its work-groups stay apart (oclgen.c,
		 * written_boxes_apart) */
		if (s->b.mismatch)
			return pp_err(p, p->it->pos,
			              "cache '%s': the uses of '%s' move differently with the loops around the cache "
			              "(e.g. A[i, j] and A[j, i]), so no single block follows them",
			              p->it->name, p->t->arrays[p->src_store].name);
	}
	return true;
}

/* One region per trigger: sites sharing a trigger are multicached together,
 * as long as their blocks can share the buffer's slots (construction,
 * plan_region.c). */
static void make_regions(pp *p, sitelist *l)
{
	site *group = l->n ? ct_alloc(p->ctx, sizeof *group * (size_t)l->n) : NULL;
	if (l->n && !group)
		pp_nomem(p);
	for (int i = 0; i < l->n && p->ok; i++) {
		if (!l->v[i].node || !l->v[i].b.any)
			continue;
		int ng = 0;
		for (int j = i; j < l->n; j++) {
			if (!l->v[j].node || l->v[j].trigger != l->v[i].trigger || !l->v[j].b.any)
				continue;
			bool fits = true;
			for (int q = 0; q < ng && fits; q++)
				fits = pl_share_slots(p, &group[q], &l->v[j]);
			if (fits) {
				group[ng++] = l->v[j];
				l->v[j].node = NULL;
			}
		}
		pl_make_region(p, group, ng);
	}
	ct_free(p->ctx, group);
}

/* Apply cache item `item`: its sources, its place in the loop order, its
 * sites (placement), then its regions (construction). */
static bool apply_item(pp *p, int item)
{
	p->item = item;
	p->it = &p->k->plan[item];
	if (!set_sources(p))
		return p->ok; /* the source cache made no region: nothing to cache */
	/* the loop order and the cache's place in it: asked of the one
	 * authority the checks use too (src/ir/order.c) */
	sched_place pl;
	pl.order = ct_arena_alloc(p->a, sizeof *pl.order * ((size_t)p->k->nindices + 1));
	if (!pl.order)
		return pp_nomem(p);
	bool placed = sched_place_cache(p->k, item, &pl);
	if (pl.uses == 0)
		return true; /* no use: nothing to cache */
	if (!placed)
		return pp_err(p, pl.err_pos, "%s%s", pl.err, "");
	p->order_len = pl.depth < (int)(sizeof p->order / sizeof p->order[0]) ? pl.depth : 0;
	memcpy(p->order, pl.order, sizeof *p->order * (size_t)p->order_len);
	if (p->order_len == 0)
		return true; /* no loop around any use: nothing to cache */
	sitelist l = {NULL, 0, 0};
	if (pl_place_sites(p, pl.index, pl.trigger_index, &l) && check_blocks(p, &l))
		make_regions(p, &l);
	ct_free(p->ctx, l.v);
	return p->ok;
}

/* The head of the band holding the outermost loop a cache placed by index= copies at (its
 * trigger index's, else its index's: sched_band_head); NULL when placed by level, budget or
 * trigger_level (those are found in the loop tree, not the text). */
static const ir_node *item_root(const ct_kernel *k, const ir_plan_item *it)
{
	if (it->where != CP_INDEX || (it->has_trigger && !it->trigger_is_index))
		return NULL;
	return sched_band_head(k, it->has_trigger ? it->trigger_index : it->index_id);
}

static bool encloses(const ir_node *a, const ir_node *b)
{
	for (; b; b = b->parent)
		if (b == a)
			return true;
	return false;
}

/* Two caches of one array must form a chain (a cache of a cache), unless each copies at a
 * loop of its own, in nests apart (neither `for` holds the other's): no use of the array is
 * then under both, their copies do not overlap in time, and each copies its own blocks (a
 * kernel of several nests packs an operand in each). */
static bool check_items(pp *p)
{
	const ct_kernel *k = p->k;
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *a = &k->plan[i];
		if (a->kind != PL_CACHE || a->src_array < 0)
			continue;
		const ir_node *na = item_root(k, a);
		for (int j = 0; j < i; j++) {
			const ir_plan_item *b = &k->plan[j];
			if (b->kind != PL_CACHE || b->src_array != a->src_array)
				continue;
			const ir_node *nb = item_root(k, b);
			if (na && nb && !encloses(na, nb) && !encloses(nb, na))
				continue; /* nests apart */
			p->it = a;
			return pp_err(p, a->src_pos,
			              "'%s' already has cache '%s'; a second cache of it must be a cache of that cache, "
			              "or both must copy at loops of nests apart (index= and trigger_index=, "
			              "neither loop inside the other's nest)",
			              k->arrays[a->src_array].name, b->name);
		}
	}
	return true;
}

static bool lt_holds(const lt_node *a, const lt_node *b)
{
	for (; b; b = b->parent)
		if (b == a)
			return true;
	return false;
}

/* Two caches of one array that check_items let through (copying at loops of nests apart)
 * must also be placed apart: `index=` names a level of the array's loop order, counted in
 * its deepest use, and the region is placed at that level around every use (a level that
 * lies above the nest, around a time loop holding both nests, would hold the other cache). */
static bool regions_apart(pp *p)
{
	const ct_looptree *t = p->t;
	const ct_kernel *k = p->k;
	for (int r = 0; r < t->nregions; r++)
		for (int q = 0; q < r; q++) {
			const lt_region *x = &t->regions[r], *y = &t->regions[q];
			const ir_plan_item *a = &k->plan[x->item], *b = &k->plan[y->item];
			if (x->item == y->item || a->src_array < 0 || a->src_array != b->src_array)
				continue;
			bool x_outer = lt_holds(x->node, y->node);
			if (!x_outer && !lt_holds(y->node, x->node))
				continue;
			const ir_plan_item *later = x->item > y->item ? a : b, *first = later == a ? b : a;
			const lt_region *outer = x_outer ? x : y;
			char msg[512];
			snprintf(msg, sizeof msg,
			         "'%s' already has cache '%s'; a second cache of it must be a cache of that cache, "
			         "or both must copy at loops of nests apart: cache '%s' is placed at loop '%s', "
			         "around the other's uses (index= names a level of the array's loops, and the "
			         "region lies around every use at that level)",
			         k->arrays[later->src_array].name, first->name, k->plan[outer->item].name,
			         outer->index >= 0 ? k->indices[outer->index].name : "?");
			p->it = later;
			return pp_err(p, later->src_pos, "%s%s", msg, "");
		}
	return true;
}

ct_status plan_apply(ct_looptree *t)
{
	pp p;
	memset(&p, 0, sizeof p);
	p.t = t;
	p.k = t->k;
	p.a = &t->arena;
	p.ctx = t->k->ctx;
	p.ok = true;
	p.parent_item = -1;
	if (!check_items(&p))
		return p.st;
	for (int i = 0; i < p.k->nplan && p.ok; i++)
		if (p.k->plan[i].kind == PL_CACHE)
			apply_item(&p, i);
	if (p.ok)
		regions_apart(&p);
	for (int i = 0; i < p.ndb && p.ok; i++) {
		p.item = p.db[i].item;
		p.it = &p.k->plan[p.item];
		pl_double_buffer(&p, &t->regions[p.db[i].region], p.db[i].node, p.db[i].npro);
	}
	if (p.ok && t->arena.failed)
		pp_nomem(&p);
	if (!p.ok && p.st == CT_OK) {
		ct_error(p.ctx, CT_ERR_LIMIT, "the plan of kernel '%s' overflows 64-bit arithmetic", p.k->name);
		p.st = CT_ERR_LIMIT;
	}
	return p.st;
}
