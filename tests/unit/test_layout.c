/* test_layout.c: the one layout -> strides rule (ir/layout.h), numeric and symbolic, empty and unknown extents. */
#include "harness.h"

#include "cachet.h"
#include "ir/layout.h"

/* One row: a layout, its extents, and the strides, span and count it gives. */
typedef struct layout_row {
	const char *name;
	int rank;
	int order[4];
	int64_t ext[4];
	ir_layout_status want_status;
	int64_t stride[4];
	int64_t span, count;
} layout_row;

static const layout_row rows[] = {
	{"row-major 2x3", 2, {0, 1}, {2, 3}, IR_LAYOUT_OK, {3, 1}, 6, 6},
	{"column-major 2x3", 2, {1, 0}, {2, 3}, IR_LAYOUT_OK, {1, 2}, 6, 6},
	{"3-d permuted", 3, {2, 0, 1}, {2, 3, 4}, IR_LAYOUT_OK, {3, 1, 6}, 24, 24},
	{"scalar-like rank 1", 1, {0}, {5}, IR_LAYOUT_OK, {1}, 5, 5},
	/* empty dimensions count as 1 in the strides: they stay distinct */
	{"empty minor", 2, {0, 1}, {2, 0}, IR_LAYOUT_OK, {1, 1}, 2, 0},
	{"empty major", 2, {0, 1}, {0, 3}, IR_LAYOUT_OK, {3, 1}, 3, 0},
	{"empty middle", 3, {0, 1, 2}, {2, 0, 4}, IR_LAYOUT_OK, {4, 4, 1}, 8, 0},
	/* unknown extents: the more major strides are unknown too */
	{"unknown minor", 2, {0, 1}, {2, -1}, IR_LAYOUT_OK, {-1, 1}, -1, -1},
	{"unknown major", 2, {0, 1}, {-1, 3}, IR_LAYOUT_OK, {3, 1}, -1, -1},
	{"repeated dimension", 2, {0, 0}, {2, 3}, IR_LAYOUT_MALFORMED, {7, 7}, 7, 7},
	{"dimension out of range", 2, {0, 2}, {2, 3}, IR_LAYOUT_MALFORMED, {7, 7}, 7, 7},
	{"overflow", 2, {0, 1}, {INT64_MAX / 2, 3}, IR_LAYOUT_OVERFLOW, {3, 1}, 7, 7},
};

static void table(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const layout_row *r = &rows[i];
		h_begin(r->name);
		int64_t stride[4] = {7, 7, 7, 7}, span = 7, count = 7;
		ir_layout_status st = ir_layout_strides(r->rank, r->order, r->ext, stride, &span, &count);
		CHECKF(st == r->want_status, "status %d", (int)st);
		for (int d = 0; d < r->rank; d++)
			CHECKF(stride[d] == r->stride[d], "stride %d is %lld", d, (long long)stride[d]);
		if (st == IR_LAYOUT_OK) {
			CHECKF(span == r->span, "span %lld", (long long)span);
			CHECKF(count == r->count, "count %lld", (long long)count);
		}
		h_end();
	}
}

/* The symbolic form folds constant extents to the numeric strides. */
static void symbolic_matches_numeric(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_arena ar;
	ct_arena_init(&ar, ctx);
	const int order[3] = {2, 0, 1};
	const int64_t ext[3] = {2, 3, 4};
	const bx *bext[3] = {bx_const(&ar, 2), bx_const(&ar, 3), bx_const(&ar, 4)};
	int64_t stride[3];
	CHECK(ir_layout_strides(3, order, ext, stride, NULL, NULL) == IR_LAYOUT_OK);
	for (int pos = 0; pos < 3; pos++) {
		int64_t v = 0;
		const bx *p = ir_layout_product(&ar, 3, order, bext, pos + 1);
		CHECK(p && bx_is_const(p, &v) && v == stride[order[pos]]);
	}
	int64_t n = 0;
	CHECK(bx_is_const(ir_layout_product(&ar, 3, order, bext, 0), &n) && n == 24);
	const bx *missing[3] = {bext[0], NULL, bext[2]};
	CHECK(ir_layout_product(&ar, 3, order, missing, 0) == NULL);
	ct_arena_free(&ar);
	ct_ctx_free(ctx);
}

/* Public tensors follow the rule: an empty dense tensor keeps distinct strides. */
static void tensor_follows_rule(void)
{
	ct_ctx *ctx = ct_ctx_new();
	double buf[1];
	const int64_t ext[3] = {2, 0, 4};
	ct_tensor *t = ct_tensor_new(ctx, buf, CT_F64, 3, ext, CT_TENSOR_ROW_MAJOR);
	CHECK(t != NULL);
	if (t) {
		CHECK(ct_tensor_stride(t, 2) == 1);
		CHECK(ct_tensor_stride(t, 1) == 4);
		CHECK(ct_tensor_stride(t, 0) == 4);
		ct_tensor_free(t);
	}
	ct_ctx_free(ctx);
}

int main(void)
{
	table();
	RUN(symbolic_matches_numeric);
	RUN(tensor_follows_rule);
	return h_report();
}
