/* selftest.c: check newly compiled code against the reference interpreter on a test instance before its first use (a guard against the C compiler's own miscompiles). */
#include "gen/gen.h"
#include "engine/engine.h"
#include "jit/jit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runtime param values a test instance tries, in order: one above the
 * widest vector's lanes (so vector code and its tails both run), then
 * smaller ones for kernels whose arrays grow fast with them. */
static const int64_t rt_candidates[] = {37, 9, 2};

/* What the interpreter costs on k as it stands: its flops plus every
 * array's elements (INFINITY when a size overflows). */
static double instance_cost(const ct_kernel *k)
{
	double c = ct_kernel_flops(k);
	for (int a = 0; a < k->narrays; a++) {
		int64_t n = ct_kernel_array_elements(k, a);
		if (n < 0)
			return INFINITY;
		c += (double)n;
	}
	return c;
}

/* One run of the entry (plain or checked) on buffers, params in the one
 * layout (entry_args_fill) for k's current values. */
static ct_status call_entry(ct_kernel *k, const selftest_fns *f, void *const *buffers)
{
	int64_t *pv = calloc((size_t)entry_param_count(k) + 1, sizeof *pv);
	if (!pv)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	ir_param_values(k, pv);
	entry_args_fill(k, NULL, pv, NULL, NULL, pv);
	int rc;
	ct_status st = CT_OK;
	if (f->checked) {
		gen_oob oob;
		memset(&oob, 0, sizeof oob);
		rc = f->checked(buffers, pv, &oob);
		if (oob.hit)
			st = gen_oob_error(k, &oob);
	} else {
		rc = f->entry(buffers, pv);
	}
	free(pv);
	if (!st && rc != 0)
		st = gen_status_error(k, rc);
	return st;
}

/* The test on k as it stands: reference first (an instance the
 * interpreter refuses is no test: *tested false), then the entry. */
static ct_status test_instance(ct_kernel *k, const selftest_fns *f, selftest_result *res, bool *tested)
{
	ct_ctx *ctx = k->ctx;
	run_buffers init, want, work;
	memset(&init, 0, sizeof init);
	memset(&want, 0, sizeof want);
	memset(&work, 0, sizeof work);
	*tested = false;
	ct_status st = run_buffers_alloc(k, &init, true);
	if (!st)
		st = run_buffers_alloc(k, &want, false);
	if (!st)
		st = run_buffers_alloc(k, &work, false);
	if (!st && run_reference(k, &init, &want) != CT_OK) {
		ct_ctx_clear_error(ctx); /* not an instance of this kernel */
		goto out;
	}
	if (!st) {
		run_buffers_copy(&work, &init);
		st = call_entry(k, f, (void *const *)work.data);
	}
	if (!st) {
		*tested = true;
		ct_run_result r;
		memset(&r, 0, sizeof r);
		res->verdict = run_verify(k, &work, &want, &r) == CT_OK ? SELFTEST_OK : SELFTEST_BAD;
		res->max_rel_error = r.max_rel_error;
		snprintf(res->array, sizeof res->array, "%s", r.mismatch_array ? r.mismatch_array : "");
		ct_ctx_clear_error(ctx);
	}
out:
	run_buffers_free(&init);
	run_buffers_free(&want);
	run_buffers_free(&work);
	return st;
}

/* "N=12, L=37": the instance's params, for messages. */
static void describe(const ct_kernel *k, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < k->nparams && n + 1 < cap; i++) {
		int w = snprintf(buf + n, cap - n, "%s%s=%lld", i ? ", " : "", k->params[i].name,
		                 (long long)k->params[i].value);
		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
}

ct_status selftest_run(ct_kernel *k, const selftest_fns *f, selftest_result *res)
{
	memset(res, 0, sizeof *res);
	res->verdict = SELFTEST_SKIPPED;
	int64_t saved_v[CT_MAX_SELFTEST_PARAMS];
	bool saved_h[CT_MAX_SELFTEST_PARAMS];
	int nrt = 0;
	for (int i = 0; i < k->nparams; i++)
		nrt += k->params[i].runtime;
	if (k->nparams > CT_MAX_SELFTEST_PARAMS)
		return CT_OK;
	for (int i = 0; i < k->nparams; i++) {
		saved_v[i] = k->params[i].value;
		saved_h[i] = k->params[i].has_value;
	}
	ct_status st = CT_OK;
	/* the candidates, then the values the caller gave (-D), when it gave them all */
	bool given = true;
	for (int i = 0; i < k->nparams; i++)
		given = given && saved_h[i];
	size_t nc = sizeof rt_candidates / sizeof *rt_candidates;
	size_t ncand = nrt ? nc + (given ? 1 : 0) : 1;
	for (size_t c = 0; c < ncand && !st && res->verdict == SELFTEST_SKIPPED; c++) {
		for (int i = 0; i < k->nparams; i++)
			if (k->params[i].runtime) {
				k->params[i].value = c < nc ? rt_candidates[c] : saved_v[i];
				k->params[i].has_value = true;
			}
		if (ir_params_need_values(k) != CT_OK) {
			ct_ctx_clear_error(k->ctx);
			break;
		}
		if (!(instance_cost(k) <= SELFTEST_BUDGET))
			continue;
		bool tested = false;
		st = test_instance(k, f, res, &tested);
		if (tested)
			describe(k, res->instance, sizeof res->instance);
	}
	for (int i = 0; i < k->nparams; i++) {
		k->params[i].value = saved_v[i];
		k->params[i].has_value = saved_h[i];
	}
	return st;
}

/* ------------------------------------------------------------ verdicts kept with the module */

/* A verdict holds for the budget it was reached under (a larger budget may
 * test a kernel that was skipped). */
static void verdict_text(selftest_verdict v, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s budget %.0f\n", v == SELFTEST_OK ? "ok" : "bad", SELFTEST_BUDGET);
}

selftest_verdict selftest_verdict_get(ct_ctx *ctx, const char *digest)
{
	char got[64], want[64];
	if (!jit_verdict_get(ctx, digest, got, sizeof got))
		return SELFTEST_SKIPPED;
	verdict_text(SELFTEST_OK, want, sizeof want);
	if (strcmp(got, want) == 0)
		return SELFTEST_OK;
	verdict_text(SELFTEST_BAD, want, sizeof want);
	return strcmp(got, want) == 0 ? SELFTEST_BAD : SELFTEST_SKIPPED;
}

void selftest_verdict_put(ct_ctx *ctx, const char *digest, selftest_verdict v)
{
	char text[64];
	if (v == SELFTEST_SKIPPED)
		return;
	verdict_text(v, text, sizeof text);
	jit_verdict_put(ctx, digest, text);
}
