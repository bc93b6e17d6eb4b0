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
/* The most statements an unrolled nest may hand the C compiler (verbs.c:
 * unrolled copies times their bodies, each other loop inside counted as
 * at most PLAN_UNROLL_INNER_TRIPS copies of its body). */
#define PLAN_MAX_UNROLLED 256
#define PLAN_UNROLL_INNER_TRIPS 16
ct_status plan_verbs(ct_looptree *t);

/* Prove the planned tree's arithmetic (edges.c): every loop's bounds and
 * `v += step` after its last iteration within 64 bits, every cache buffer
 * within PLAN_MAX_BYTES, no loop nested deeper than PLAN_MAX_DEPTH blocks
 * (loops, ifs, cache regions). Bounds that name a runtime param without a
 * value are left to the run. CT_OK, or CT_ERR_INPUT with the position of
 * the split, loop or cache on the kernel's ctx. */
#define PLAN_MAX_DEPTH 256
#define PLAN_MAX_BYTES ((int64_t)1 << 62)
ct_status plan_check_edges(ct_looptree *t);
/* The loop tree of k (with or without the schedule) with the plan's passes
 * applied (lower.c): ir's loops, then plan_apply and plan_verbs where the
 * plan has caches or verbs. NULL with an error on k->ctx on failure. */
ct_looptree *plan_lower(ct_kernel *k, bool with_schedule);

#endif
