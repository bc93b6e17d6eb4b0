/* plan.h: interface of src/plan: the plan's passes (caches, loop verbs) on a scheduled loop tree, and the lowering that runs them. */
#ifndef CT_PLAN_H
#define CT_PLAN_H

#include "ir/looptree.h"

/* Whether k's plan has a cache(...) item (only then does plan_apply run). */
bool plan_has_caches(const ct_kernel *k);
/* Apply the plan's caches to a scheduled tree (src/plan/plan.c): adds
 * regions, buffers, copy loops and rewrites accesses. CT_OK, or an error
 * with the position of the offending plan argument on the kernel's ctx. */
ct_status plan_apply(ct_looptree *t);

/* Whether k's plan has vectorize, unroll or parallelize items for the host
 * (only then does plan_verbs run). */
bool plan_has_verbs(const ct_kernel *k);
/* Check the plan's loop verbs on a scheduled, planned tree and mark the
 * loops they apply to (src/plan/verbs.c): unroll needs a constant trip
 * count of at most PLAN_MAX_UNROLL; vectorize an innermost loop whose
 * accesses are contiguous in it and whose iterations are independent;
 * parallelize consecutive loops whose iterations are independent. CT_OK,
 * or CT_ERR_INPUT with the position of the offending index on the
 * kernel's ctx. */
#define PLAN_MAX_UNROLL 64
ct_status plan_verbs(ct_looptree *t);

/* The loop tree of k (with or without the schedule) with the plan's passes
 * applied (lower.c): ir's loops, then plan_apply and plan_verbs where the
 * plan has caches or verbs. NULL with an error on k->ctx on failure. */
ct_looptree *plan_lower(ct_kernel *k, bool with_schedule);

#endif
