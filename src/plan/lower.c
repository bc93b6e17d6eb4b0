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
	/* a cache's region may hold an affine loop on every target: its block is a box over the
	 * loop's range where the loop moves it, copied in and out whole, its copies bounds-tested
	 * (plan_block.c; a GPU generator tests that written boxes of its work-groups stay apart) */
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
