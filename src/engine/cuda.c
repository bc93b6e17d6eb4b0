/* cuda.c: the CUDA engine (placeholder until the runtime lands: every entry reports CT_ERR_UNSUPPORTED). */
#include "gen/ocl.h"
#include "engine/engine.h"

#include <stdlib.h>

char *cuda_kernel_source(ct_kernel *k, size_t *len, ocl_launch *L)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return NULL;
	char *src = gen_cuda(t, len, L);
	ct_looptree_free(t);
	return src;
}

ct_status run_cuda(ct_kernel *k, const ct_run_options *o, ct_run_result *r)
{
	(void)o;
	r->engine = "cuda";
	return ct_error(k->ctx, CT_ERR_UNSUPPORTED, "CUDA: the CUDA engine is not built yet");
}
