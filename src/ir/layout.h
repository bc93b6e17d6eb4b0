/* layout.h: the one rule from an array's layout (its dimension order) to its dense strides, numeric and symbolic. */
#ifndef CT_LAYOUT_H
#define CT_LAYOUT_H

#include "ir/looptree.h"

/*
 * A layout lists the dimensions most major first: order[rank-1] is
 * contiguous (stride 1) and the stride of order[j] is the product of the
 * extents of order[j+1..rank-1]. An empty extent (0) counts as 1 there, so
 * the strides of an empty tensor stay distinct (numpy's rule); kernel
 * arrays are never empty (extents are checked to be at least 1), so for
 * them the plain product that ir_layout_product builds is the same rule.
 */
typedef enum ir_layout_status {
	IR_LAYOUT_OK,
	IR_LAYOUT_MALFORMED, /* order is not a permutation of 0..rank-1, or rank is out of range */
	IR_LAYOUT_OVERFLOW   /* a stride or the span exceeds int64_t */
} ir_layout_status;

/* Numeric form. ext[d] < 0 means "not known": the strides of that
 * dimension's more major neighbours are then -1. stride[d] is written per
 * dimension as the walk (minor to major) reaches it; on overflow the
 * dimensions not reached keep what the caller put there. *span (optional):
 * elements a dense buffer reserves, every empty extent counted as 1;
 * *count (optional): the product of the extents, 0 when one is empty; both
 * -1 when an extent is unknown. */
ir_layout_status ir_layout_strides(int rank, const int *order, const int64_t *ext, int64_t *stride,
                                   int64_t *span, int64_t *count);

/* Symbolic form: the product of ext[order[from..rank-1]] as a folded bound
 * expression (the stride at layout position from-1; from = 0 gives the
 * element count). NULL when an extent is NULL or allocation fails. */
const bx *ir_layout_product(ct_arena *a, int rank, const int *order, const bx *const *ext, int from);

#endif
