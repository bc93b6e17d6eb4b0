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
/* Print as C (params by name) into b. */
void bx_print(ct_buf *b, const ct_kernel *k, const bx *x);

typedef enum lt_kind {
	LT_LOOP,       /* for (index = lo; index < hi; index += step) kids */
	LT_STMT,       /* stmt (ND_STMT) */
	LT_LET,        /* stmt (ND_LET) */
	LT_IF,         /* if (stmt->cond) kids else els */
	LT_CACHE       /* a cache region (plans issue): cache, kids */
} lt_kind;

typedef struct lt_node {
	lt_kind kind;
	/* LT_LOOP */
	int index;             /* ir_index id: the loop variable */
	const bx *lo, *hi;
	int64_t step;
	bool tail;             /* the tail version of a non-dividing split */
	/* LT_STMT, LT_LET, LT_IF: the IR node (subscripts and conditions are in
	 * original indices; see lt_orig_index) */
	const ir_node *stmt;
	/* LT_CACHE */
	void *cache;
	int nkids;
	struct lt_node **kids;
	int nels;
	struct lt_node **els;
	struct lt_node *parent;
} lt_node;

struct ct_looptree {
	ct_kernel *k;
	ct_arena arena;
	bool scheduled;
	int nroots;
	lt_node **roots;
	/* chain[i] lists the loop indices whose sum is original index i
	 * (chain_len[i] of them; the original index itself first); only for
	 * IX_LOOP indices. Without the schedule each chain is just {i}. */
	int **chain;
	int *chain_len;
	/* number of loop-tree indices (= k->nindices) */
	int nindices;
};

/* Build the loop tree of k (with or without the schedule). NULL with an
 * error on k->ctx on failure. */
ct_looptree *lt_build(ct_kernel *k, bool with_schedule);

#endif
