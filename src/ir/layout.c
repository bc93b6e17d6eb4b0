/* layout.c: dense strides from a layout, the one rule that interp, model, plan, run and the C printer share. */
#include "ir/layout.h"

ir_layout_status ir_layout_strides(int rank, const int *order, const int64_t *ext, int64_t *stride,
                                   int64_t *span, int64_t *count)
{
	if (rank < 0 || rank > IR_MAX_RANK)
		return IR_LAYOUT_MALFORMED;
	bool seen[IR_MAX_RANK] = {false};
	for (int j = 0; j < rank; j++) {
		if (order[j] < 0 || order[j] >= rank || seen[order[j]])
			return IR_LAYOUT_MALFORMED;
		seen[order[j]] = true;
	}
	int64_t s = 1;
	bool unknown = false, empty = false;
	for (int j = rank - 1; j >= 0; j--) {
		int d = order[j];
		stride[d] = s;
		if (s < 0)
			continue;
		if (ext[d] < 0)
			s = -1;
		else if (!ct_mul_ok(s, ext[d] > 0 ? ext[d] : 1, &s))
			return IR_LAYOUT_OVERFLOW;
	}
	for (int d = 0; d < rank; d++) {
		unknown = unknown || ext[d] < 0;
		empty = empty || ext[d] == 0;
	}
	if (span)
		*span = s;
	if (count)
		*count = unknown ? -1 : empty ? 0 : s;
	return IR_LAYOUT_OK;
}

const bx *ir_layout_product(ct_arena *a, int rank, const int *order, const bx *const *ext, int from)
{
	const bx *p = bx_const(a, 1);
	for (int r = from; r < rank && p; r++) {
		const bx *e = ext[order[r]];
		p = e ? bx_bin(a, BX_MUL, p, e) : NULL;
	}
	return p;
}
