/* plan_internal.h: what the plan pass's files share (the pass state, blocks, sites); private to
 * plan/. */
#ifndef CT_PLAN_INTERNAL_H
#define CT_PLAN_INTERNAL_H

#include "ir/looptree.h"
#include "ir/order.h"

#define PP_MAX_WRITES 64

/* Where a cache buffer's elements lie in the root array: buffer element
 * (slots..., u) is root element off + u for the region at site node
 * (a cache of a cache guards its copies with the root array's extents). */
typedef struct bufsite {
	int storage, root, nslot;
	const struct lt_node *node;
	aff off[IR_MAX_RANK];
} bufsite;

/* A double buffer to apply once every cache is placed. */
typedef struct pending {
	int region, npro, item;
	struct lt_node *node;
} pending;

typedef struct pp {
	ct_looptree *t;
	ct_kernel *k;
	ct_arena *a;
	ct_ctx *ctx;
	bool ok;      /* false after an allocation failure or overflow */
	ct_status st; /* first error */
	int copy_idx[IR_MAX_RANK];
	int ncopy;
	/* the item being applied */
	int item;
	const ir_plan_item *it;
	bool *is_src; /* per storage: counts as the cache's source */
	int nis_src;
	int parent_item; /* hierarchical: the source cache item, else -1 */
	int src_store;   /* a storage of the source (for types and rank) */
	pending *db;     /* double buffers to apply at the end */
	int ndb;
	bufsite *bs; /* every buffer's sites, in the order made */
	int nbs;
	int order_len; /* the loop order L around the deepest use */
	int order[IR_MAX_DEPTH * 4];
} pp;

typedef struct wr {
	const bx *lo[IR_MAX_RANK], *hi[IR_MAX_RANK];
	bool dense;
} wr;

typedef struct blk {
	int rank;
	bool any, mismatch;
	const lt_node *affine; /* an affine loop of the site that moves the block where no box
	                          over its range is known (refused) */
	const lt_node *affine_write; /* one that moves a written element (refused: the box's
	                                copy-out would cover elements the loop never wrote) */
	aff outer[IR_MAX_RANK];
	const bx *lo[IR_MAX_RANK], *hi[IR_MAX_RANK];
	bool read, accum, setw, inner_if, guarded;
	int nw;
	wr w[PP_MAX_WRITES];
	bool too_many_writes;
} blk;

typedef struct walkst {
	const lt_node *in[IR_MAX_DEPTH * 4]; /* loops inside the site, outermost first */
	int nin;
	bool under_if;
} walkst;

/* What a rewritten access of the source becomes in one region. */
typedef struct rwmap {
	int buffer;
	int nslot;
	aff slot[IR_MAX_RANK];
	aff off[IR_MAX_RANK]; /* block start per source dimension */
} rwmap;

typedef enum copy_op { CP_IN, CP_ZERO, CP_OUT, CP_REDUCE } copy_op;

/* The bounds test of a copy: the copied element of dimension d >= nskip
 * of the array side is root element off[d - nskip] + base[d] + c_d, which
 * must lie in root's extents (halo elements outside it are skipped). */
typedef struct gspec {
	int root, nskip;
	const aff *off;
} gspec;

/* One side of a copy: storage[prefix..., base[d] + c_d] */
typedef struct side {
	int storage;
	int npre;
	const aff *pre;
	const aff *base; /* per copied dimension */
} side;

typedef struct site {
	lt_node *node;    /* the cache position: a loop */
	lt_node *trigger; /* where the copies go (== node unless multicache) */
	bool element;     /* element level: the region wraps node's body, not node */
	blk b;
	lt_node *version; /* a later version (tail) of the trigger loop folded into
	                     an earlier version's region (trigger), or NULL */
} site;

typedef struct sitelist {
	site *v;
	int n, cap;
} sitelist;

/* ------------------------------------------------------------ plan_base.c */

/* Record an allocation failure; false. */
bool pp_nomem(pp *p);
/* An error at the position of the item's argument pos. */
bool pp_err(pp *p, ir_pos pos, const char *fmt, const char *a1, const char *a2);
/* Grow an arena array from n to n + 1 elements (copying). */
void *pl_arena_grow(pp *p, void *old, int n, size_t elt);
/* A new storage (a buffer) of the given rank and type; its id. */
int pl_new_storage(pp *p, const char *name, ct_dtype type, int rank, const bx *const *ext,
                   const int *order);
/* The loop variable of copy dimension d (made on first use; copy nests never nest). */
int pl_copy_index(pp *p, int d);
/* The constant bound v. */
const bx *pl_bxc(pp *p, int64_t v);
/* The bound x (kind) y. */
const bx *pl_bxb(pp *p, bx_kind kind, const bx *x, const bx *y);
/* Last value a loop takes: lo + (hi - lo - 1) / step * step. */
const bx *pl_loop_last(pp *p, const lt_node *l);
/* An upper bound of x without the floor divisions and remainders of
 * tails: x mod c <= c - 1, so a tail's extent is bounded by its tile. */
const bx *pl_bx_ub(pp *p, const bx *x, bool upper);
/* An affine expression for a bound: sums, differences and constant
 * multiples of params stay affine; anything else becomes a derived value. */
aff pl_bx_aff(pp *p, const bx *x);
/* x over loop variables: each original index becomes the sum of its chain. */
aff pl_to_loop(pp *p, aff x);
/* x + k * y. */
aff pl_aff_plus(pp *p, aff x, aff y, int64_t k);
/* coef times one variable of kind (AFF_LOOP, AFF_PARAM, ...). */
aff pl_aff_var(pp *p, int kind, int id, int64_t coef);
/* The slot that holds x in its parent's kids or among the roots. */
lt_node **pl_kid_slot(ct_looptree *t, lt_node *x);
/* A new loop-tree node of kind under parent. */
lt_node *pl_new_node(pp *p, lt_kind kind, lt_node *parent);
/* Set x's kids to a copy of v[0..n) (parents updated). */
bool pl_set_kids(pp *p, lt_node *x, lt_node *const *v, int n);
/* Whether e reads or writes the source. */
bool pl_expr_uses(const pp *p, const ir_expr *e);
/* Whether x is a copy statement of some cache. */
bool pl_is_copy(const lt_node *x);
/* Whether node x (not a cache copy) accesses the source itself. */
bool pl_node_uses(const pp *p, const lt_node *x);
/* Whether anything under x (x included) uses the source. */
bool pl_subtree_uses(const pp *p, const lt_node *x);
/* Whether a statement under x (copies aside) writes the cached array. */
bool pl_subtree_writes(const pp *p, const lt_node *x);
/* Inside a region of the source cache (hierarchical caches only). */
bool pl_inside_parent(const pp *p, const lt_node *x);
/* Position of index in the loop order around the deepest use, -1 if absent. */
int pl_order_pos(const pp *p, int index);

/* ------------------------------------------------------------ plan_block.c */

/* Add every access of the source under x to block b. */
void pl_blk_walk(pp *p, blk *b, walkst *w, const lt_node *x);
/* The active block of the source over site x (x's own loop is inside). */
void pl_block_of(pp *p, const lt_node *x, blk *b);
/* Extent of dimension d of block b: hi - lo + 1. */
const bx *pl_blk_extent(pp *p, const blk *b, int d);
/* Whether two blocks cover the same elements. */
bool pl_blk_equal(pp *p, const blk *x, const blk *y);
/* Element count of a block when it is a constant; -1 otherwise. */
int64_t pl_blk_volume(pp *p, const blk *b);
/* Whether the block moves with the loop over index. */
bool pl_blk_uses_loop(const blk *b, int index);
/* The range [*a, *z] that affine loop l's variable covers over every iteration around it: its
 * bounds over params where it has them, else its index's span (a box around the triangle or
 * band). false where neither is known. */
bool pl_affine_span(pp *p, const lt_node *l, const bx **a, const bx **z);

/* ------------------------------------------------------------ plan_copy.c */

/* storage[sub[0..rank)] */
ir_expr *pl_access_expr(pp *p, int storage, const aff *sub, int rank);
/* Rewrite every access of the source under x (copies of other caches
 * included: they only name the source when it is their own). */
void pl_rw_tree(pp *p, const rwmap *m, lt_node *x);
/* The copy nest `buf (op) array` over ext[], loops in the order ord[], guarded by g when set;
 * the outermost node. */
lt_node *pl_copy_nest(pp *p, copy_op op, const side *buf, const side *arr, int rank,
                      const bx *const *ext, const int *ord, const gspec *g, lt_node *parent);
/* Source strides as constants (-1 where one is not known when the code is
 * generated: runtime extents). */
void pl_source_strides(pp *p, int storage, int64_t *stride);
/* Thrifty: whether the buffer would be the source itself (walking it in layout order steps
 * through the source one element at a time). */
bool pl_elidable(pp *p, int src, int rank, int nslot, const int64_t *slot_step,
                 const bx *const *ext, const int *border);

/* ------------------------------------------------------------ plan_region.c */

/* Double buffering of region rg (node r, npro prologue nodes) around its nearest loop. */
bool pl_double_buffer(pp *p, lt_region *rg, lt_node *r, int npro);
/* The loop over index around site x (a multicache loop's version there). */
const lt_node *pl_anc_loop(const lt_node *x, int index);
/* Position of x among its parent's kids, -1 when it is not one. */
int pl_kid_pos(const lt_node *x);
/* Make one region for the sites sharing trigger s[0].trigger. */
bool pl_make_region(pp *p, site *s, int ns);

/* ------------------------------------------------------------ plan_pack.c */

/* n * (n + 1) / 2: the elements of a packed cache whose block's major extent is n; -1 on overflow. */
int64_t pl_pack_count(int64_t n);
/* packed=lower|upper of the item being applied: region rid's box buffer made the triangle alone,
 * the uses under the sites s[0..ns) checked to lie in it and rewritten, the fills pro[0..npro)
 * guarded to fill it only; false after an error. */
bool pl_pack_region(pp *p, int rid, const site *s, int ns, lt_node *const *pro, int npro);

/* ------------------------------------------------------------ plan_place.c */

/* Whether two sites under one trigger can share a buffer's slots. */
bool pl_share_slots(pp *p, const site *a, const site *b);
/* The sites of the cache item being applied, over loops over index (trigger tindex), or by its
 * max_elements= budget; false after an error. */
bool pl_place_sites(pp *p, int index, int tindex, sitelist *l);

#endif
