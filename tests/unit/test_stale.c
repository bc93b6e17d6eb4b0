/* test_stale.c: a kernel whose params changed since its last successful check is refused by every entry point (issue 22, row 1). */
#include "cachet.h"
#include "harness.h"
#include "run_views.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel: M is the loop's size, N the arrays'; T is tunable and a tile. */
static const char copy_text[] = "kernel copy\n"
				"param M = 64, N = 64\n"
				"param T = 16 tune {8, 16}\n"
				"array A : f32[N] input\n"
				"array B : f32[N] output\n"
				"for (i: M) {\n  B[i] = A[i]\n}\n"
				"schedule {\n  ii = split(i, T)\n}\n";

static const char want_msg[] =
	"kernel 'copy': params changed since the last successful check; call ct_kernel_recheck";

/* What one entry point gets: the kernel, a selector made while it was good,
 * a scratch folder. Returns the status (NULL results count as their ctx's status). */
typedef struct env {
	ct_ctx *ctx;
	ct_kernel *k;
	ct_selector *sel;
	const char *dir;
	ct_looptree *tree; /* lowered while the kernel was good */
} env;

typedef ct_status (*entry_fn)(env *e);

static ct_status null_status(env *e, const void *p)
{
	return p ? CT_OK : ct_ctx_last_status(e->ctx);
}

static ct_status e_lower(env *e)
{
	ct_looptree *t = ct_kernel_lower(e->k, 1);
	ct_status st = null_status(e, t);
	ct_looptree_free(t);
	return st;
}

static ct_status e_lower_ref(env *e)
{
	ct_looptree *t = ct_kernel_lower(e->k, 0);
	ct_status st = null_status(e, t);
	ct_looptree_free(t);
	return st;
}

static ct_status e_emit(env *e)
{
	char *s = ct_kernel_emit(e->k, "host", NULL);
	ct_status st = null_status(e, s);
	free(s);
	return st;
}

static ct_status e_emit_opencl(env *e)
{
	char *s = ct_kernel_emit(e->k, "opencl", NULL);
	ct_status st = null_status(e, s);
	free(s);
	return st;
}

static ct_status e_build(env *e) { return ct_kernel_build(e->k, e->dir); }

static ct_status run_with(env *e, ct_engine engine)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = engine;
	ct_run_result r;
	return ct_kernel_run(e->k, &o, &r);
}

static ct_status e_run_native(env *e) { return run_with(e, CT_ENGINE_NATIVE); }
static ct_status e_run_interp(env *e) { return run_with(e, CT_ENGINE_INTERP); }

static ct_status e_simulate(env *e)
{
	ct_sim_result r;
	ct_status st = ct_kernel_simulate(e->k, "32768:64", &r);
	ct_sim_result_free(&r);
	return st;
}

static ct_status e_predict(env *e)
{
	ct_predict_result r;
	ct_status st = ct_kernel_predict(e->k, "32768:64", &r);
	ct_predict_result_free(&r);
	return st;
}

static ct_status e_predict_refs(env *e)
{
	ct_predict_result r;
	ct_ref_table t;
	ct_status st = ct_kernel_predict_refs(e->k, "32768:64", -1, &r, &t);
	ct_ref_table_free(&t);
	ct_predict_result_free(&r);
	return st;
}

static ct_status e_tiles(env *e)
{
	ct_tiles_result r;
	ct_status st = ct_kernel_tiles(e->k, "32768:64", NULL, &r);
	ct_tiles_result_free(&r);
	return st;
}

static ct_status e_tune_key(env *e)
{
	char fam[96], cls[256];
	ct_dtype t;
	return ct_kernel_tune_key(e->k, fam, sizeof fam, cls, sizeof cls, &t);
}

static ct_status e_tune(env *e)
{
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.budget = 5;
	o.no_store = 1;
	o.cache_spec = "32768:64";
	ct_tune_result r;
	ct_status st = ct_tune(e->k, &o, &r);
	ct_tune_result_free(&r);
	return st;
}

static ct_status e_selector(env *e)
{
	ct_selector *s = ct_selector_new(e->k, e->dir);
	ct_status st = null_status(e, s);
	ct_selector_free(s);
	return st;
}

static ct_status e_run_selected(env *e)
{
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	ct_solution sol;
	return ct_kernel_run_selected(e->sel, &o, &r, &sol);
}

static ct_status e_run_views(env *e)
{
	ct_ctx *ctx = e->ctx;
	float a[64] = {0}, b[64] = {0};
	int64_t ext[1] = {64};
	ct_tensor *v[2] = {ct_tensor_new(ctx, a, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR),
			ct_tensor_new(ctx, b, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR)};
	ct_status st = run_views(e->k, v, CT_ENGINE_INTERP, 1);
	ct_tensor_free(v[0]);
	ct_tensor_free(v[1]);
	return st;
}

/* A tree lowered while the kernel was good, run after its params changed. */
static ct_status e_interp_old_tree(env *e)
{
	float a[64] = {0}, b[64] = {0};
	void *p[2] = {a, b};
	return e->tree ? ct_interp_run(e->tree, p) : CT_ERR_USAGE;
}

static void ignore_access(void *ud, int buffer, int64_t offset, int is_write)
{
	(void)ud;
	(void)buffer;
	(void)offset;
	(void)is_write;
}

static ct_status e_trace_old_tree(env *e)
{
	return e->tree ? ct_interp_trace(e->tree, ignore_access, NULL) : CT_ERR_USAGE;
}

static ct_status e_compile(env *e)
{
	ct_callable *h = ct_kernel_compile(e->k);
	ct_status st = null_status(e, h);
	ct_callable_free(h);
	return st;
}

static const struct entry {
	const char *name;
	entry_fn fn;
} entries[] = {
	{"ct_kernel_lower", e_lower},
	{"ct_kernel_lower (reference)", e_lower_ref},
	{"ct_kernel_emit host", e_emit},
	{"ct_kernel_emit opencl", e_emit_opencl},
	{"ct_kernel_build", e_build},
	{"ct_kernel_run native", e_run_native},
	{"ct_kernel_run interp", e_run_interp},
	{"ct_kernel_simulate", e_simulate},
	{"ct_kernel_predict", e_predict},
	{"ct_kernel_predict_refs", e_predict_refs},
	{"ct_kernel_tiles", e_tiles},
	{"ct_kernel_tune_key", e_tune_key},
	{"ct_tune", e_tune},
	{"ct_selector_new", e_selector},
	{"ct_kernel_run_selected", e_run_selected},
	{"ct_kernel_run_views", e_run_views},
	{"ct_kernel_compile", e_compile},
	{"ct_interp_run (tree lowered before)", e_interp_old_tree},
	{"ct_interp_trace (tree lowered before)", e_trace_old_tree},
};
#define NENTRIES (sizeof entries / sizeof entries[0])

/* How the kernel is made stale before each entry point is called. */
static const struct staling {
	const char *name;
	const char *param;
	int64_t value;
	int recheck;            /* 1: recheck (which fails) after setting */
	const char *recheck_msg; /* the failed recheck's message */
} stalings[] = {
	{"set M without recheck", "M", 100000, 0, NULL},
	{"set N without recheck", "N", 32, 0, NULL},
	{"set T without recheck", "T", 8, 0, NULL},
	{"failed recheck M", "M", 100000, 1, "subscript 'i' of 'B' may exceed the extent N of dimension 1"},
	{"failed recheck N=0", "N", 0, 1, "extent of dimension 1 of 'A' is 0 (it must be at least 1)"},
	{"failed recheck N=-5", "N", -5, 1, "extent of dimension 1 of 'A' is -5 (it must be at least 1)"},
};

static void stale_table(void)
{
	char dir[] = "/tmp/ct_stale_XXXXXX";
	if (!mkdtemp(dir)) {
		h_begin("mkdtemp");
		CHECK(0);
		h_end();
		return;
	}
	for (size_t s = 0; s < sizeof stalings / sizeof stalings[0]; s++) {
		const struct staling *w = &stalings[s];
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, copy_text, strlen(copy_text), "copy.cachet");
		env e = {ctx, k, k ? ct_selector_new(k, dir) : NULL, dir, k ? ct_kernel_lower(k, 1) : NULL};
		for (size_t i = 0; k && i < NENTRIES; i++) {
			char name[160];
			snprintf(name, sizeof name, "%s: %s", w->name, entries[i].name);
			h_begin(name);
			CHECK(e.sel != NULL);
			CHECK(ct_kernel_set_param(k, w->param, w->value) == CT_OK);
			if (w->recheck) {
				CHECK(ct_kernel_recheck(k) == CT_ERR_INPUT);
				CHECKF(strcmp(ct_ctx_last_message(ctx), w->recheck_msg) == 0, "%s",
				       ct_ctx_last_message(ctx));
			}
			ct_ctx_clear_error(ctx);
			ct_status st = entries[i].fn(&e);
			CHECKF(st == CT_ERR_USAGE, "status %s", ct_strerror(st));
			CHECKF(strcmp(ct_ctx_last_message(ctx), want_msg) == 0, "%s", ct_ctx_last_message(ctx));
			/* back to the checked values: the same entry point works again */
			CHECK(ct_kernel_set_param(k, "M", 64) == CT_OK && ct_kernel_set_param(k, "N", 64) == CT_OK &&
			      ct_kernel_set_param(k, "T", 16) == CT_OK);
			CHECKF(ct_kernel_recheck(k) == CT_OK, "%s", ct_ctx_last_message(ctx));
			if (entries[i].fn != e_build && entries[i].fn != e_tune && entries[i].fn != e_tiles &&
			    entries[i].fn != e_run_selected && entries[i].fn != e_emit_opencl)
				CHECKF(entries[i].fn(&e) == CT_OK, "%s", ct_ctx_last_message(ctx));
			h_end();
		}
		ct_selector_free(e.sel);
		ct_looptree_free(e.tree);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* Setting a value that changes nothing, or a runtime param, needs no recheck. */
static void no_recheck_needed(void)
{
	ct_ctx *ctx = ct_ctx_new();
	static const char text[] = "kernel axpy\nparam L : runtime\nparam C = 4\narray X : f32[L] input\n"
				   "array Y : f32[L] inout\nfor (i: L) {\n  Y[i] = 2.5 * X[i] + Y[i]\n}\n";
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "axpy.cachet");
	CHECK(k != NULL);
	if (k) {
		CHECK(ct_kernel_set_param(k, "L", 100) == CT_OK);
		ct_looptree *t = ct_kernel_lower(k, 1);
		CHECKF(t != NULL, "%s", ct_ctx_last_message(ctx));
		ct_looptree_free(t);
		CHECK(ct_kernel_set_param(k, "C", 4) == CT_OK); /* the same value */
		t = ct_kernel_lower(k, 1);
		CHECKF(t != NULL, "%s", ct_ctx_last_message(ctx));
		ct_looptree_free(t);
		/* a runtime value below 1: the run names the extent, not a missing value */
		CHECK(ct_kernel_set_param(k, "L", -5) == CT_OK);
		ct_run_options o;
		ct_run_options_init(&o);
		o.engine = CT_ENGINE_INTERP;
		ct_run_result r;
		CHECK(ct_kernel_run(k, &o, &r) != CT_OK);
		CHECKF(strcmp(ct_ctx_last_message(ctx),
			      "extent of dimension 1 of 'X' is -5 (it must be at least 1)") == 0,
		       "%s", ct_ctx_last_message(ctx));
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	stale_table();
	RUN(no_recheck_needed);
	return h_report();
}
