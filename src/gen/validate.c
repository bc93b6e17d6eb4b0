/* validate.c: what `cachet check` promises: every plan error that lower, emit, build or run would report, found without compiling. */
#include "gen/gen.h"
#include "gen/ocl.h"

#include <stdio.h>
#include <stdlib.h>

/* A failure of the later stages without a position (an internal error of
 * the plan pass or an emitter, a limit) is given the position of the plan
 * (or of the kernel's name), so that every error of a check names a place
 * in the file. */
static ct_status positioned(ct_kernel *k)
{
	ct_ctx *ctx = k->ctx;
	ct_status st = ct_ctx_last_status(ctx);
	if (st == CT_OK)
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory checking kernel '%s'", k->name);
	if (ct_ctx_last_line(ctx) > 0)
		return st;
	char msg[sizeof ctx->msg];
	snprintf(msg, sizeof msg, "%s", ct_ctx_last_message(ctx));
	ir_pos at = k->has_plan ? k->plan_pos : k->name_pos;
	return ct_error_at(ctx, st, k->file, at.line, at.col, "%s", msg);
}

ct_status gen_validate(ct_kernel *k)
{
	ct_looptree *t = lt_build(k, true);
	if (!t)
		return positioned(k);
	size_t len = 0;
	char *src = k->has_plan && k->target == TARGET_OPENCL ? gen_opencl(t, &len, NULL) : gen_c(t, &len);
	ct_looptree_free(t);
	if (!src)
		return positioned(k);
	free(src);
	return CT_OK;
}
