/* entryargs.c: the one argument layout of a compiled kernel's uniform entry, shared by every path into it. */
#include "engine/engine.h"
#include "ir/slots.h"

#include <string.h>

int entry_param_count(const ct_kernel *k)
{
	return k->nparams + view_slots(k);
}

void entry_args_fill(const ct_kernel *k, void *const *bufs, const int64_t *pv, const int64_t *slots, void **args,
                     int64_t *params)
{
	/* memmove: a caller may fill its own vectors in place */
	if (params != pv)
		memmove(params, pv, sizeof *params * (size_t)k->nparams);
	int ns = view_slots(k);
	if (slots && ns > 0 && slots != params + k->nparams)
		memmove(params + k->nparams, slots, sizeof *params * (size_t)ns);
	else if (!slots)
		view_dense_values(k, params, params + k->nparams);
	for (int a = 0; args && a < k->narrays; a++)
		args[a] = k->arrays[a].role == CT_TEMP || !bufs ? NULL : bufs[a];
}
