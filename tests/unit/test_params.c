/* test_params.c: every entry point refuses a runtime param without a value with the one message. */
#include "cachet.h"
#include "harness.h"
#include "run_views.h"

#include <stdlib.h>
#include <unistd.h>

static const char *const text = "kernel k\n"
                                "param L : runtime\n"
                                "param T = 2 tune {1, 2}\n"
                                "array X : f64[L] inout\n"
                                "for (i: L) {\n"
                                "  X[i] *= 2\n"
                                "}\n"
                                "schedule { ii = split(i, T) }\n";

static const char *const want = "runtime param 'L' needs a value (-D L=VALUE)";

typedef ct_status (*entry_fn)(ct_kernel *k);

static ct_status run_native(ct_kernel *k)
{
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	return ct_kernel_run(k, &o, &r);
}

static ct_status run_interp(ct_kernel *k)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = CT_ENGINE_INTERP;
	ct_run_result r;
	return ct_kernel_run(k, &o, &r);
}

static ct_status simulate(ct_kernel *k)
{
	ct_sim_result r;
	return ct_kernel_simulate(k, "32K:64", &r);
}

static ct_status predict(ct_kernel *k)
{
	ct_predict_result r;
	return ct_kernel_predict(k, "32K:64", &r);
}

static ct_status views(ct_kernel *k)
{
	ct_tensor *v[1] = {NULL};
	return run_views(k, v, CT_ENGINE_INTERP, 1);
}

static ct_status tune(ct_kernel *k)
{
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.store_dir = "/nonexistent-cachet-test";
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	if (st == CT_OK)
		ct_tune_result_free(&r);
	return st;
}

static ct_status run_selected(ct_kernel *k)
{
	ct_selector *s = ct_selector_new(k, "/nonexistent-cachet-test");
	if (!s)
		return CT_ERR_INPUT;
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	ct_solution sol;
	ct_status st = ct_kernel_run_selected(s, &o, &r, &sol);
	ct_selector_free(s);
	return st;
}

static const struct {
	const char *name;
	entry_fn fn;
} entries[] = {
	{"ct_kernel_run native", run_native},
	{"ct_kernel_run interp", run_interp},
	{"ct_kernel_simulate", simulate},
	{"ct_kernel_predict", predict},
	{"ct_kernel_run_views", views},
	{"ct_tune", tune},
	{"ct_kernel_run_selected", run_selected},
};

int main(void)
{
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		h_begin(entries[i].name);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "params.cachet");
		CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
		if (k) {
			ct_status st = entries[i].fn(k);
			CHECKF(st == CT_ERR_USAGE, "status %d: %s", (int)st, ct_ctx_last_message(ctx));
			CHECKF(strcmp(ct_ctx_last_message(ctx), want) == 0, "message: %s", ct_ctx_last_message(ctx));
			ct_kernel_free(k);
		}
		ct_ctx_free(ctx);
		h_end();
	}
	return h_report();
}
