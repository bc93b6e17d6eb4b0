/* lower.c: the lowering behind ct_kernel_lower: ir's loop tree, then the plan's passes (caches, loop verbs) in order. */
#include "plan/plan.h"
#include "plan/plan_internal.h"
#include "ir/targets.h"

#include <stdio.h>

bool plan_has_caches(const ct_kernel *k)
{
	for (int i = 0; k->has_plan && i < k->nplan; i++)
		if (k->plan[i].kind == PL_CACHE)
			return true;
	return false;
}

/* Balanced splits (split(.., balanced=true)) give one index versions with
 * different steps; caches (multicache slots count trips of one step) and
 * the GPU mapping (one step per work-group or block dimension) assume one
 * step, so they do not combine yet. */
static bool balanced_ok(ct_kernel *k)
{
	const ir_target_info *row = ir_kernel_target(k);
	bool caches = plan_has_caches(k), grid = row->parallel == IR_PAR_GRID;
	for (int s = 0; (caches || grid) && s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		if (!sc->balanced)
			continue;
		char what[64] = "cache(...) in the plan";
		if (grid)
			snprintf(what, sizeof what, "the %s target", row->name);
		ct_error_at(k->ctx, CT_ERR_INPUT, k->file, sc->balanced_pos.line, sc->balanced_pos.col,
		            "balanced=true does not combine with %s yet", what);
		return false;
	}
	return true;
}

/* On a GPU target (gpu): whether a node under x (region g's own fills excepted) writes g's
 * buffer (its box over the affine loop's range would be copied out over other work-groups'
 * elements). A multicache's slot loops with affine bounds are plain loops there too: the copies
 * run the loop's range or its span (plan_region.c's affine_mcloops), as on the host. */
static bool buffer_moves(const ct_looptree *t, const lt_region *g, const lt_node *x, bool gpu)
{
	const ir_node *st = x->stmt;
	if (!gpu)
		return false;
	if (st && (x->kind == LT_STMT || x->kind == LT_LET)) {
		bool own_fill = pl_is_copy(x) && st->lhs && st->lhs->id == g->buffer;
		if (!own_fill && st->kind == ND_STMT && st->lhs && st->lhs->id == g->buffer)
			return true; /* written in the region: its block would be copied out */
	}
	for (int i = 0; i < x->nkids + x->nels; i++)
		if (buffer_moves(t, g, i < x->nkids ? x->kids[i] : x->els[i - x->nkids], gpu))
			return true;
	return false;
}

/* A cache's region may hold an affine loop: its block is a box over the loop's range where the
 * loop moves it (plan_block.c). On the host a written box is copied in whole and out whole
 * (describe_region), so the elements the loop never wrote go back unchanged, a double buffer
 * prefetches the next box, and a multicache has one slot per value of an affine slot loop's
 * span; a GPU target does the same for a box it only reads (its prefetches, moves and slot
 * loops are plain loops and ifs of the tree), but a written one is refused (one work-group's
 * box could overlap another's writes: buffer_moves). Its copies are
 * bounds-tested, since an affine loop that runs no iteration, or a box wider than the triangle,
 * leaves the box unproved (pl_block_of). CT_ERR_INPUT naming the cache and the loop otherwise. */
static ct_status affine_regions_ok(const ct_looptree *t)
{
	const ct_kernel *k = t->k;
	bool grid = ir_kernel_target(k)->parallel == IR_PAR_GRID;
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *g = &t->regions[r];
		const lt_node *x = g->node ? lt_affine_below(g->node) : NULL;
		if (!x || g->elided ||
		    ((!grid || g->epilogue == LT_EPI_NONE) &&
		     !buffer_moves(t, g, g->node, grid)))
			continue;
		const ir_plan_item *it = &k->plan[g->item];
		return ct_error_at(k->ctx, CT_ERR_INPUT, k->file, it->pos.line, it->pos.col,
		                   "cache '%s' holds loop '%s', whose bounds are affine (they use enclosing "
		                   "indices or min/max): a cache's region must be rectangular (place it "
		                   "inside that loop)",
		                   it->name, t->indices[x->index].name);
	}
	return CT_OK;
}

ct_looptree *plan_lower(ct_kernel *k, bool with_schedule)
{
	if (with_schedule && !balanced_ok(k))
		return NULL;
	ct_looptree *t = lt_build_loops(k, with_schedule);
	if (!t || !with_schedule)
		return t;
	ct_status st = CT_OK;
	if (plan_has_caches(k))
		st = plan_apply(t);
	if (st == CT_OK && !t->arena.failed && k->affine_bounds && t->nregions > 0)
		st = affine_regions_ok(t);
	if (st == CT_OK && !t->arena.failed && plan_has_verbs(k))
		st = plan_verbs(t);
	if (st == CT_OK && !t->arena.failed)
		st = plan_check_edges(t);
	if (st == CT_OK && t->arena.failed)
		st = ct_error(k->ctx, CT_ERR_NOMEM, "cannot build the loop tree");
	if (st != CT_OK) {
		ct_looptree_free(t);
		return NULL;
	}
	return t;
}

ct_looptree *ct_kernel_lower(ct_kernel *k, int with_schedule)
{
	if (!k || ir_kernel_ready(k) != CT_OK)
		return NULL;
	return plan_lower(k, with_schedule != 0);
}
