/* slots.c: where the run-time layout values (base, strides) of strided arrays sit after the params, and their dense values. */
#include "ir/slots.h"
#include "ir/layout.h"

#include <string.h>

int view_slot(const ct_kernel *k, int a)
{
	int slot = 0;
	for (int i = 0; i < k->narrays; i++) {
		const ir_array *arr = &k->arrays[i];
		if (!arr->strided || arr->role == CT_TEMP)
			continue;
		if (i == a)
			return slot;
		slot += 1 + arr->rank;
	}
	return -1;
}

int view_slots(const ct_kernel *k)
{
	int n = 0;
	for (int i = 0; i < k->narrays; i++)
		if (k->arrays[i].strided && k->arrays[i].role != CT_TEMP)
			n += 1 + k->arrays[i].rank;
	return n;
}

bool view_dense_strides(const ct_kernel *k, int a, const int64_t *pv, int64_t *stride)
{
	const ir_array *arr = &k->arrays[a];
	int64_t ext[IR_MAX_RANK];
	bool ok = true;
	for (int d = 0; d < arr->rank; d++)
		ext[d] = aff_eval(arr->ext[d], pv, NULL, &ok);
	return ok && ir_layout_strides(arr->rank, arr->order, ext, stride, NULL, NULL) == IR_LAYOUT_OK;
}

void view_dense_values(const ct_kernel *k, const int64_t *pv, int64_t *out)
{
	for (int a = 0; a < k->narrays; a++) {
		int slot = view_slot(k, a);
		if (slot < 0)
			continue;
		out[slot] = 0;
		if (!view_dense_strides(k, a, pv, out + slot + 1))
			memset(out + slot + 1, 0, sizeof *out * (size_t)k->arrays[a].rank);
	}
}
