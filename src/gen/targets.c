/* targets.c: the generator column of the targets' table (src/ir/targets.c holds the facts). */
#include "gen/targets.h"
#include "gen/gen.h"

/* Host C takes no launch: the entry is called on the host. */
static char *host_c(ct_looptree *t, size_t *len, ocl_launch *L)
{
	(void)L;
	return gen_c(t, len);
}

/* Row i is target i, as in ir's table (tests/unit/test_targets.c). */
static const gen_target rows[] = {
	{TARGET_HOST, host_c, true},
	{TARGET_OPENCL, gen_opencl, false},
	{TARGET_CUDA, gen_cuda, false},
};

const gen_target *gen_target_row(ir_target t)
{
	int i = (int)t;
	return i >= 0 && i < (int)(sizeof rows / sizeof rows[0]) ? &rows[i] : &rows[TARGET_HOST];
}
