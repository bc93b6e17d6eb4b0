/* targets.c: the engine column of the targets' table (src/ir/targets.c holds the facts). */
#include "engine/targets.h"
#include "gen/gen.h"
#include "gen/targets.h"

/* Row i is target i, as in ir's table (tests/unit/test_targets.c). */
static const eng_target rows[] = {
	{TARGET_HOST, host_kernel_source, run_native, aot_host_package, NULL},
	{TARGET_OPENCL, ocl_kernel_source, run_opencl, gen_opencl_package, NULL},
	{TARGET_CUDA, cuda_kernel_source, run_cuda, gen_cuda_package, cuda_device_ready},
};

const eng_target *eng_target_row(ir_target t)
{
	int i = (int)t;
	return i >= 0 && i < (int)(sizeof rows / sizeof rows[0]) ? &rows[i] : &rows[TARGET_HOST];
}

const eng_target *eng_kernel_target(const ct_kernel *k)
{
	return eng_target_row(ir_kernel_target(k)->id);
}

char *eng_lowered_source(ct_kernel *k, ir_target target, size_t *len, struct ocl_launch *L)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return NULL;
	char *src = gen_target_row(target)->emit(t, len, L);
	ct_looptree_free(t);
	return src;
}

char *host_kernel_source(ct_kernel *k, size_t *len, struct ocl_launch *L)
{
	return eng_lowered_source(k, TARGET_HOST, len, L);
}

ct_status eng_native_only(ct_kernel *k, const char *what)
{
	const ir_target_info *row = ir_kernel_target(k);
	if (row->native_entry)
		return CT_OK;
	return ct_error(k->ctx, CT_ERR_UNSUPPORTED,
	                "kernel '%s' targets %s: %s gives host code only (use ct_kernel_run or cachet build)",
	                k->name, row->title, what);
}
