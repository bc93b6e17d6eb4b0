/* validate.c: what `cachet check` promises: every plan error that lower, emit, build or run would report, found without compiling. */
#include "gen/gen.h"
#include "gen/ocl.h"
#include "gen/targets.h"
#include "interp/interp.h"
#include "ir/deps.h"
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The source for k's plan target from tree t, by the target's emitter (NULL with the error on ctx). */
static char *emit_source(ct_kernel *k, ct_looptree *t)
{
	size_t len = 0;
	const gen_target *g = gen_target_row(ir_kernel_target(k)->id);
	if (!g->probes_machine)
		return g->emit(t, &len, NULL);
	/* the register tiles' vector width shapes the C, never whether it can
	 * be generated: unless one is set (or this machine already probed),
	 * check with 16 bytes rather than probe the machine, which costs more
	 * than the whole check */
	ct_ctx *ctx = k->ctx;
	int64_t vb = ct_ctx_get_option(ctx, CT_OPT_VECTOR_BYTES);
	bool pin = vb <= 0 && !ctx->target && ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, 16) == CT_OK;
	char *src = g->emit(t, &len, NULL);
	if (pin)
		(void)ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, vb);
	return src;
}

/* The interpreter's arithmetic proof of tree t (its compiler refuses
 * index arithmetic, offsets and loops that could overflow 64 bits): what
 * a run would refuse, refused now. Only with every param known (runtime
 * ones given values); a refusal for another reason (a kernel too large
 * to interpret) is not check's business: false only for an overflow. */
static bool interp_proves(ct_kernel *k, ct_looptree *t)
{
	if (!ir_params_complete(k))
		return true;
	int n = 0;
	ct_status st = interp_unproven(t, &n);
	if (st == CT_OK)
		return true;
	if (st == CT_ERR_LIMIT && strstr(ct_ctx_last_message(k->ctx), "overflow"))
		return false;
	/* forget that error, but not the diagnostics of the check so far */
	ct_ctx *ctx = k->ctx;
	ctx->status = CT_OK;
	ctx->msg[0] = ctx->file[0] = 0;
	ctx->line = ctx->col = 0;
	return true;
}

ct_status gen_validate(ct_kernel *k)
{
	/* a reorder keeps every dependence of the written order (exact, isl) */
	ct_status st = dep_check_schedule(k);
	if (st != CT_OK)
		return st;
	ct_looptree *t = plan_lower(k, true);
	if (!t)
		return positioned(k);
	if (!interp_proves(k, t)) {
		ct_looptree_free(t);
		return positioned(k);
	}
	char *src = emit_source(k, t);
	ct_looptree_free(t);
	if (!src)
		return positioned(k);
	free(src);
	/* distribute(): the refusals belong to `check`, not to the first distributed run */
	return gen_dist_check(k);
}
