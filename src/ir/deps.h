/* deps.h: exact dependence analysis (isl) of a kernel's statement instances: the dependences of its written order, and whether the order of a loop tree keeps them. */
#ifndef CT_DEPS_H
#define CT_DEPS_H

#include "ir/looptree.h"

/*
 * A statement instance is a statement (ND_STMT) or let (ND_LET) of the
 * kernel at one value of the original indices of the `for`s around it. The
 * written order of the instances is that of the unscheduled loop tree
 * (imperfect nests, several statements, ifs included); a dependence is a
 * pair of instances that access one element, at least one of them writing
 * it, the first before the second in that order (RAW, WAR and WAW: memory
 * based, so exact and conservative). Subscripts and conditions are affine,
 * so the relations are exact integer sets (isl); runtime params without a
 * value stay symbols, assumed >= 0, compile-time params are their values.
 *
 * Reductions: the updates `X[f] += e`, `-=` and `*=` of one statement to
 * one element may run in any order (a reassociation of the sum or product,
 * not an order violation): the pairs of instances of one such statement
 * that meet only through its left-hand side are not dependences. A read of
 * X elsewhere (in e too), another statement's update of X[f], or a plain
 * `=` keeps its order. dep_info keeps those reduction pairs apart, for
 * questions where they matter (parallel loops race on them).
 */

typedef struct dep_info dep_info;

/* The dependences of kernel k (checked, not stale) in its written order;
 * NULL with an error on k->ctx (CT_ERR_LIMIT when isl gives up on its
 * operation budget). Free with dep_free. */
dep_info *dep_compute(ct_kernel *k);
/* The same for the statements under the top-level nodes k->body[r] with
 * roots[r] true only (roots: k->nbody entries, borrowed for the life of the
 * result); the others are left out. A question about a loop of those nests
 * (dep_loop_carries) gets dep_compute's answer, since both ends of a
 * dependence it carries lie under it; dep_loop_carries_private does when
 * roots also holds every nest that accesses a temp of the loop's nest. */
dep_info *dep_compute_roots(ct_kernel *k, const bool *roots);
/* The instances of k and their written order only, without the dependences
 * (cheaper: for dep_reads_written, which needs nothing else; the other
 * questions need dep_compute). NULL with an error on k->ctx. */
dep_info *dep_compute_order(ct_kernel *k);
void dep_free(dep_info *d);

/* One dependence that an order breaks: instance src must run before dst.
 * The statements and the accesses that meet, the original indices of each
 * statement (index ids, outermost first) and a concrete pair of values;
 * params[] holds the runtime params' values of that example (k->nparams of
 * them; compile-time ones are their values). Arrays owned by the caller of
 * dep_order_keeps, freed with dep_violation_free. */
typedef struct dep_violation {
	const ir_node *src, *dst;
	const ir_expr *src_acc, *dst_acc;
	int nsrc, ndst;
	int *src_idx, *dst_idx;
	int64_t *src_at, *dst_at;
	int64_t *params;
	bool *param_used;      /* per param: the broken pairs depend on its value */
} dep_violation;
void dep_violation_free(ct_ctx *ctx, dep_violation *v);

/* Whether the order of loop tree t (built by lt_build_loops, with or
 * without the schedule, before the plan) runs the source of every
 * dependence of d before its sink: 1 yes, 0 no (then *v, when v is not
 * NULL, is one broken dependence), -1 on error (on the ctx). The order is
 * taken in closed form from k's schedule (t->scheduled says which): the
 * versions of the tree's loops run in the order of their values, which
 * dep_same_instances checks against t itself. */
int dep_order_keeps(dep_info *d, const ct_looptree *t, dep_violation *v);

/* Whether tree t runs exactly the instances of the written order and, for
 * a tree without inner balanced splits, in the order of the closed-form
 * functions the checks use (the versions of a loop run in the order of
 * its values): 1 yes, 0 no, -1 on error. A self-test of the loop tree's
 * splits, tails and versions against the analysis
 * (tests/unit/test_deps.c). */
int dep_same_instances(dep_info *d, const ct_looptree *t);

/* Whether loop node x of tree t (as above) carries a dependence of d: two
 * instances of one iteration of the loops around x, in different
 * iterations of x, that must keep their order. with_reductions counts the
 * reduction pairs too (they race when x runs in parallel; they may be
 * reordered when x is only moved). 1 carries, 0 does not, -1 on error. */
int dep_loop_carries(dep_info *d, const ct_looptree *t, const lt_node *x, bool with_reductions);

/* Whether temp array a is private to the iterations of loop node x of
 * tree t (as above): every write of a in the kernel lies under x (or a
 * version of x: a sibling loop over its index), and every read of a (a
 * right-hand side's, or the old value an update reads) has a write of the
 * same element earlier in the same iteration of x (the loops around x at
 * one iteration too). Then no value of a flows between iterations of x, or
 * into or out of x: each thread of a parallel x may keep its own copy. 1
 * yes, 0 no, -1 on error (on the ctx). */
int dep_temp_private(dep_info *d, const ct_looptree *t, const lt_node *x, int a);

/* Whether every read of array a in d's written order (a right-hand side's,
 * or the old value an update reads) has a write of the same element by an
 * earlier instance: then no read of a meets an element its run has not yet
 * written. 1 yes, 0 no, -1 on error (on the ctx). d may come from
 * dep_compute_order. */
int dep_reads_written(dep_info *d, int a);
/* dep_loop_carries, except through the temps private to x
 * (dep_temp_private): asked only when x carries, with those temps'
 * accesses left out of a second analysis. priv (k->narrays entries, or
 * NULL) gets the temps x needs private to carry nothing: none when x
 * carries nothing as it is or carries anyway. */
int dep_loop_carries_private(dep_info *d, const ct_looptree *t, const lt_node *x, bool with_reductions, bool *priv);

/* Whether distributing the loops around parts[0..nparts) (sibling nodes
 * of k's body, one loop's children) keeps every dependence of d: running
 * all instances of one part before any of the next, in the parts' order,
 * keeps the order of each dependence pair unless its source lies under a
 * later part than its sink (a dependence from a later part to an earlier
 * part's later iteration). The first `keep` original indices around the
 * parts (the loops that stay around the distributed ones) are the same in
 * both instances of the pairs asked about (keep 0: the whole nest is
 * distributed). 1 keeps, 0 breaks, -1 on error. */
int dep_parts_ordered(dep_info *d, ir_node *const *parts, int nparts, int keep);

/* The statements of d (ND_STMT and ND_LET in written order, both branches
 * of ifs), and the number of statement n among them (-1 when none) with the
 * count of original indices around it in *ndims (when not NULL): the
 * numbering dep_rewrite_keeps takes. */
int dep_stmt_count(const dep_info *d);
int dep_stmt_number(const dep_info *d, const ir_node *n, int *ndims);

/* Whether kernel nk, a rewrite of d's kernel (d from dep_compute) whose
 * statements correspond one to one with the original's, runs the same
 * instances and keeps the order of every dependence of d and of every pair
 * of one reduction statement's updates of an element (a rewrite reorders
 * no sum). Statement s of nk (in written order, as d numbers them) is the
 * original's statement old_stmt[s], and its p-th original index (outermost
 * first) is the original's old_dim[s][p]-th. 1 yes, 0 no (a statement or
 * index that does not correspond counts as no), -1 on error (on the ctx). */
int dep_rewrite_keeps(dep_info *d, ct_kernel *nk, const int *old_stmt, int *const *old_dim);

/* Text "iteration (i, j) of S[0] must run after (i, j-1), e.g. ..." of
 * violation v of kernel k into b. */
void dep_violation_text(const ct_kernel *k, const dep_violation *v, ct_buf *b);

/* The check `cachet check` makes: when k's schedule reorders a band, the
 * scheduled order keeps every dependence of the written one; otherwise
 * CT_ERR_INPUT at the reorder, "reorder(j, i): iteration (i, j) of S[0]
 * must run after (i, j-1) ...". Splits, tiles and balanced splits alone
 * keep the order by construction (docs/LANGUAGE.md, section 7) and are
 * checked with the reorder that follows them. */
ct_status dep_check_schedule(ct_kernel *k);

#endif
