/* looptree.h: the scheduled loop tree (splits, tails, reorders, later cache regions). */
#ifndef CT_LOOPTREE_H
#define CT_LOOPTREE_H

#include "ir/ir.h"

/* Loop bounds: expressions over params (runtime params stay symbolic; the
 * values of compile-time params are folded in) and constants. */
typedef enum bx_kind {
	BX_CONST, BX_PARAM, BX_ADD, BX_SUB, BX_MUL, BX_FLOORDIV, BX_MOD, BX_MIN, BX_MAX
} bx_kind;

typedef struct bx {
	bx_kind kind;
	int64_t v;             /* BX_CONST */
	int id;                /* BX_PARAM */
	const struct bx *a, *b;
} bx;

/* Builders fold constants; NULL on allocation failure. */
const bx *bx_const(ct_arena *a, int64_t v);
const bx *bx_param(ct_arena *a, int id);
const bx *bx_bin(ct_arena *a, bx_kind kind, const bx *x, const bx *y);
/* From an affine expression over params only (folds compile-time params). */
const bx *bx_from_aff(ct_arena *a, const ct_kernel *k, aff x);
/* Value with params[id]; *ok = false on overflow or division by zero. */
int64_t bx_eval(const bx *x, const int64_t *params, bool *ok);
bool bx_is_const(const bx *x, int64_t *v);
/* Structural equality (after the folding the builders do). */
bool bx_equal(const bx *x, const bx *y);
/* Print as C (params by name) into b. */
void bx_print(ct_buf *b, const ct_kernel *k, const bx *x);

/*
 * Affine terms that only statements of a planned tree use (the plan pass,
 * src/plan, rewrites accesses inside cache regions with them), beyond
 * AFF_PARAM and AFF_INDEX of ir.h:
 *   AFF_LOOP id: the value of the loop variable of tree index id itself (the
 *                innermost enclosing loop over id), NOT the sum of a chain
 *                as AFF_INDEX means for an original index;
 *   AFF_TRIP id: floor(v / step) for that loop's variable v and step
 *                (consecutive iterations give consecutive values; the
 *                multicache slot of a loop is this minus a constant);
 *   AFF_TRI id:  v * (v + 1) / 2 for that loop's variable v: the start of
 *                row v of a packed triangular cache buffer (plan_pack.c;
 *                only in the subscripts of such buffers, never linear in v:
 *                every reader that wants a coefficient of v refuses it).
 * An AFF_PARAM term with id >= k->nparams names derived value
 * t->derived[id - k->nparams]: a bound expression over params that is
 * evaluated once per run (e.g. the start of a runtime tail).
 */
enum { AFF_LOOP = 2, AFF_TRIP = 3, AFF_TRI = 4 };

typedef enum lt_kind {
	LT_LOOP,       /* for (index = lo; index < hi; index += step) kids */
	LT_STMT,       /* stmt (ND_STMT) */
	LT_LET,        /* stmt (ND_LET) */
	LT_IF,         /* if (stmt->cond) kids else els; or, when stmt is NULL,
	                  if (guard[0] >= 0 && ... && guard[nguard-1] >= 0) kids */
	LT_CACHE       /* a cache region: kids run in order (prologue copies,
	                  the body, epilogue copies); cache = region number */
} lt_kind;

typedef struct lt_node {
	lt_kind kind;
	/* LT_LOOP */
	int index;             /* ir_index id: the loop variable */
	const bx *lo, *hi;
	int64_t step;
	bool tail;             /* the tail version of a non-dividing split */
	/* LT_LOOP over an index with affine bounds (ir_index_affine): the
	 * loop runs from max(lo, dlo[0..ndlo-1]) to min(hi, dhi[0..ndhi-1]),
	 * each dlo/dhi term affine in params and original indices (AFF_INDEX:
	 * the sum of the index's chain, as in subscripts); lo and hi are the
	 * bounds over params only (LT_NO_LO / LT_NO_HI where it has none). A
	 * rectangular loop has ndlo = ndhi = 0; lt_affine_loop tells. */
	int ndlo, ndhi;
	const aff *dlo, *dhi;
	/* LT_STMT, LT_LET, LT_IF: the IR node (subscripts and conditions are in
	 * original indices; see lt_orig_index) */
	const ir_node *stmt;
	/* LT_IF without stmt: affine guards over params, AFF_LOOP and AFF_TRIP
	 * terms (the bounds tests of halo copies) */
	int nguard;
	const aff *guard;
	/* LT_CACHE: index into t->regions */
	int cache;
	/* LT_LOOP: the plan's loop verbs (src/plan/verbs.c) as marked on the
	 * loops they apply to; false/0 everywhere without them. */
	bool unroll;           /* unroll(x): constant trip count, emitted unrolled */
	int unroll_by;         /* unroll(x, by=n): n, the loop kept with an unroll hint; 0 none */
	bool vector;           /* vectorize(x): innermost, contiguous, independent */
	bool reduce;           /* LT_STMT under a vector loop: a `+=` / `-=` of an element that does
	                          not move with the loop (a reduction over it), which the C backend
	                          sums in private accumulators and adds after the loop */
	bool parallel;         /* parallelize: the outermost loop of a parallel band */
	int par_item;          /* parallel: its PL_PARALLELIZE item of k->plan */
	int collapse;          /* parallel: loops of the band (this one and the
	                          collapse - 1 single loops nested in it) */
	const bool *preduce;   /* parallel: per storage, whether the band sums into it with `+=` /
	                          `-=` only (a parallel reduction: each thread sums into its own
	                          zeroed copy, added to the array after the loop); NULL none */
	int nkids;
	struct lt_node **kids;
	int nels;
	struct lt_node **els;
	struct lt_node *parent;
} lt_node;

/* What a cache region does before and after its body. */
typedef enum lt_prologue { LT_PRO_NONE, LT_PRO_COPY_IN, LT_PRO_ZERO_FILL } lt_prologue;
typedef enum lt_epilogue { LT_EPI_NONE, LT_EPI_COPY_OUT, LT_EPI_REDUCE } lt_epilogue;
/* Their names ("none", "copy_in", ...), as `cachet lower` (text and JSON) and
 * the generated code's comments print them (ir/lower.c). */
const char *lt_prologue_name(lt_prologue x);
const char *lt_epilogue_name(lt_epilogue x);

/* One cache region: where one `cache(...)` of the plan lives in the tree
 * (a cache yields several regions: main and tail versions of its loops, or
 * statements under different loops). */
typedef struct lt_region {
	int item;              /* the PL_CACHE item of k->plan */
	int source;            /* storage copied from: a kernel array or the parent cache's buffer */
	int buffer;            /* storage the body uses: its buffer, or source when elided */
	int index;             /* loop index at the cache position; -1 for an element-level cache */
	int level;             /* 1 = innermost loop of the order; 0 for element level */
	int trigger_index;     /* where the copies happen (multicache: outside index) */
	int trigger_level;
	int rank;              /* buffer rank: nmulti multicache dims, then the source's dims */
	int nmulti;
	const bx *shape[IR_MAX_RANK]; /* buffer extents (upper bounds for partial blocks) */
	int order[IR_MAX_RANK];       /* buffer layout, most major first */
	bool first_major, last_major; /* the layout is that one */
	bool elided;
	lt_prologue prologue;
	lt_epilogue epilogue;
	bool double_buffer;    /* requested and applied (a loop encloses the trigger) */
	int temp;              /* double buffer: storage of the prefetch buffer; -1 otherwise */
	lt_node *node;         /* the LT_CACHE node */
} lt_region;

struct ct_looptree {
	ct_kernel *k;
	ct_arena arena;
	bool scheduled;
	int nroots;
	lt_node **roots;
	/* Storage: the kernel's arrays (ids 0 .. k->narrays-1, copies of
	 * k->arrays), then cache buffers (role CT_TEMP, named after their
	 * cache). ext[a * IR_MAX_RANK + d]: the extents as bound expressions
	 * over params (for kernel arrays, their ext[] folded). */
	int narrays;
	ir_array *arrays;
	const bx **ext;
	/* Derived values (AFF_PARAM ids k->nparams ..): nderived of them */
	int nderived;
	const bx **derived;
	/* Indices: the kernel's (ids 0 .. k->nindices-1, copies of k->indices)
	 * then the loop variables of cache copies (kind IX_LOOP, chain NULL,
	 * named c0, c1, ... made unique) */
	ir_index *indices;
	/* Cache regions, in the order the plan made them */
	int nregions;
	lt_region *regions;
	/* chain[i] lists the loop indices whose sum is original index i
	 * (chain_len[i] of them; the original index itself first); only for
	 * IX_LOOP indices. Without the schedule each chain is just {i}. */
	int **chain;
	int *chain_len;
	/* number of loop-tree indices (>= k->nindices) */
	int nindices;
	/* Loop verbs (src/plan/verbs.c): whether some loop is parallel or
	 * vectorized, and per storage whether each thread of a parallel loop
	 * has its own copy (cache buffers whose regions all lie inside
	 * parallel loops); priv is NULL when no loop is parallel. */
	bool has_parallel, has_vector;
	bool *priv;
	/* per storage: summed by some parallel loop (lt_node.preduce), which
	 * the C backend gives a slab of one copy per thread; NULL when none */
	bool *pred;
};

/* The bounds an affine loop has where none of its terms is over params
 * only: a max over nothing, a min over nothing. */
#define LT_NO_LO INT64_MIN
#define LT_NO_HI INT64_MAX

static inline bool lt_affine_loop(const lt_node *x)
{
	return x->kind == LT_LOOP && (x->ndlo > 0 || x->ndhi > 0);
}

/* The first loop with affine bounds at or under x (x itself, then its
 * kids and else branches in order), or NULL. */
const lt_node *lt_affine_below(const lt_node *x);

/* Loop x's constant range [*lo, *hi): false when a bound is not a
 * constant or the loop is affine (its lo and hi are then bounds over
 * params only, or the sentinels above: never its range). Every reader of
 * a loop's range goes through this or lt_const_lo. */
static inline bool lt_const_range(const lt_node *x, int64_t *lo, int64_t *hi)
{
	return !lt_affine_loop(x) && bx_is_const(x->lo, lo) && bx_is_const(x->hi, hi);
}

/* Loop x's constant lower bound: false when it is not a constant or has
 * affine lower terms (its upper bound may still be affine). */
static inline bool lt_const_lo(const lt_node *x, int64_t *lo)
{
	return x->ndlo == 0 && bx_is_const(x->lo, lo);
}

/* Coefficient of loop variable x (a tree index) in subscript s: its own
 * AFF_LOOP terms plus the original indices (AFF_INDEX) whose split chain
 * holds it. *bad is set when s uses floor(x / step) (AFF_TRIP), x * (x + 1) / 2
 * (AFF_TRI) or the sum overflows. */
int64_t lt_var_coef(const ct_looptree *t, aff s, int x, bool *bad);

/* Param values then derived values of t: pv[k->nparams + t->nderived]
 * (runtime params without a value count as 0). False on overflow or
 * division by zero in a derived value. */
bool lt_param_values(const ct_looptree *t, int64_t *pv);
/* Element strides and count of storage a of t under pv (lt_param_values):
 * the layout shared by the interpreter, the trace, the simulator and the
 * generated code. CT_ERR_INPUT for a negative extent, CT_ERR_LIMIT on
 * overflow (error on the kernel's ctx). */
ct_status lt_array_layout(const ct_looptree *t, const int64_t *pv, int a, int64_t *stride,
                          int64_t *count);

/* The plan item whose cache uses storage s of t (its buffer, not elided, or
 * its prefetch temp); -1 for a kernel array or none. */
int lt_storage_item(const ct_looptree *t, int s);

/* Refuse t's plan buffers (its storages past the kernel's arrays) when
 * together they need more than ct_mem_quarter(): CT_ERR_LIMIT with the
 * message at the plan item of the largest one. A tile far larger than the
 * data sizes its buffer by the tile, even where that code never runs, and
 * allocating and zeroing such a buffer would page the machine for minutes.
 * Extents of runtime params without a value count as 0. */
ct_status lt_check_buffers(const ct_looptree *t);

/* The loop tree of k (with or without the schedule), before the plan's
 * passes (src/plan/lower.c runs them: plan_lower). NULL with an error on
 * k->ctx on failure. */
ct_looptree *lt_build_loops(ct_kernel *k, bool with_schedule);

#endif
