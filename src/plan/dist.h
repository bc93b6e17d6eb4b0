/* dist.h: distribute() over MPI ranks: what a kernel's plan distributes, each array's distribution, and the kernel every rank runs on its block. */
#ifndef CT_DIST_H
#define CT_DIST_H

#include "ir/distrt.h"
#include "ir/ir.h"

/* The distribution of a kernel (docs/DISTRIBUTED.md). */
typedef struct dist_plan {
	int item;                     /* the PL_DISTRIBUTE item of k->plan */
	int naxes;
	int axis_index[CTD_MAX_AXES]; /* the original loop index of each axis */
	int64_t grid[CTD_MAX_AXES];   /* grid= as written (0: auto) */
	ctd_axis axes[CTD_MAX_AXES];  /* ranks 0 until dist_set_grid */
	int narrays;                  /* k->narrays */
	ctd_array *arrays;            /* role 3 for temps */
	int64_t *params;              /* the value of every param of k */
	int panel_index;              /* SUMMA: the loop whose panels are broadcast, or -1 */
	ctd_axis panel;               /* its values lo .. hi-1 in blocks of step */
} dist_plan;

/* Whether k's plan has a distribute() item. */
bool dist_wanted(const ct_kernel *k);

/* The distribution of k into *out (NULL when k has no distribute item), or an error at the
 * item's position saying why it cannot be distributed: a GPU target, affine loop bounds,
 * runtime params, an index that is not an original loop, a statement outside a distributed
 * loop, a dependence carried by a distributed loop, a write outside the rank's block, a read
 * of what another rank writes in the same call, a cache outside the distributed loops. */
ct_status dist_analyse(ct_kernel *k, dist_plan **out);
void dist_plan_free(ct_ctx *ctx, dist_plan *p);

/* The ranks per axis for nranks ranks: grid= as written (its product must be nranks), or
 * as MPI_Dims_create would choose; want (NULL, or naxes values) overrides grid=. */
ct_status dist_set_grid(ct_ctx *ctx, dist_plan *p, int64_t nranks, const int64_t *want);

/* What dist_localize changed, for dist_restore. */
typedef struct dist_saved {
	int nparams;
	ir_param *params;
	int naxes;                    /* axes, then the panel loop when there is one */
	int axis_index[CTD_MAX_AXES + 1];
	aff lo[CTD_MAX_AXES + 1], hi[CTD_MAX_AXES + 1];
	bool strided[64], unit_minor[64];
	bool dist_rank;
	int narrays;
} dist_saved;

/* The kernel one rank runs, made in place from k: each axis index, then the panel loop when
 * there is one, runs over two new runtime params (ct_lo_X .. ct_hi_X, appended after k's
 * params), and every array is strided (a rank
 * holds a box of it, indexed by the global logical indices). dist_restore undoes it; nothing
 * else may use k in between. At most 64 arrays. */
ct_status dist_localize(ct_kernel *k, const dist_plan *p, dist_saved *s);
void dist_restore(ct_kernel *k, dist_saved *s);

/* Bytes rank r sends and receives in the halo exchange of one call, and in the reductions
 * (each partial sum sent once to its canonical rank). */
void dist_rank_bytes(const dist_plan *p, int64_t r, int64_t *sent, int64_t *received);

#endif
