/* order.h: the schedule's loop order and cache levels, computed in one place for checks, the loop tree and the plan pass. */
#ifndef CT_ORDER_H
#define CT_ORDER_H

#include "ir/ir.h"

/*
 * The rule (docs/PLANS.md, section 1): a band starts in its `for` order,
 * outermost first; the schedule is replayed in the order it is written:
 * each split (or each index of a tile) puts its new inner index right after
 * the index it splits, and a reorder replaces the band's order by the one
 * it names. Every stage that needs the order of loops (the checks of
 * src/lang, the loop tree of looptree.c, the plan pass) asks these
 * functions, so they cannot disagree.
 */

/* The band of index x (original or split): the outermost FOR of the nest
 * of single-child FORs that holds x's root. */
const ir_node *sched_band_head(const ct_kernel *k, int x);

/* The loop order of the band headed by FOR node head, outermost first,
 * into order[] (room for k->nindices + 1); *n its length. Without the
 * schedule (with_schedule false): the `for` order of the band, unsplit. */
void sched_band_order(const ct_kernel *k, const ir_node *head, bool with_schedule, int *order,
                      int *n);

/* Where cache item `item` of k's plan sits: the loop order L[0..depth)
 * around the deepest statement using its bottom array (for index=x the
 * deepest one with x around it; for a cache of a level= or index= cache
 * the deepest one inside that cache's loop), its loop and level (level 1 =
 * L[depth-1])
 * and its trigger's loop and level (the cache's own without a trigger).
 * index and level are -1 and 0 for a max_elements= cache. */
typedef struct sched_place {
	int depth;
	int *order;            /* caller's room for k->nindices + 1 */
	int uses;              /* statements using the array */
	int index, level;
	int trigger_index, trigger_level;
	/* when placing fails: where, and the message */
	ir_pos err_pos;
	char err[320];
} sched_place;

/* Place cache item `item` (a PL_CACHE) using pl->order as room. False with
 * pl->err and pl->err_pos set when the array has no use, the level, index
 * or trigger is not among the loops around its uses, or the trigger is
 * below the cache's level; equivalent spellings (index=/level=,
 * trigger_index=/trigger_level=) give equal places and equal errors. */
bool sched_place_cache(const ct_kernel *k, int item, sched_place *pl);

#endif
