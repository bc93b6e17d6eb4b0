/* native.c: the native engine: generate C, compile or fetch it from the code cache, run and verify. */
#include "gen/gen.h"
#include "gen/plancache.h"
#include "ir/canon.h"
#include "run/run.h"

#include <stdlib.h>
#include <string.h>

char *ct_kernel_emit(ct_kernel *k, const char *target, size_t *len)
{
	if (!k)
		return NULL;
	if (target && strcmp(target, "host") != 0 && strcmp(target, "c") != 0) {
		ct_error(k->ctx, CT_ERR_UNSUPPORTED, "target '%s' is not supported by this build (host only)",
			 target);
		return NULL;
	}
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return NULL;
	char *src = gen_c(t, len);
	ct_looptree_free(t);
	return src;
}

/* Whether CACHET_NO_CACHE asks to bypass every cache. */
static bool no_cache(void)
{
	const char *v = getenv("CACHET_NO_CACHE");
	return v && *v && strcmp(v, "0") != 0;
}

static ct_status generate_and_load(ct_kernel *k, gen_entry_fn *entry, ct_run_result *r);

/* k's uniform entry point: from the plan cache when this ctx has already
 * loaded the same kernel (canonically), else generated and loaded. */
static ct_status load_entry(ct_kernel *k, gen_entry_fn *entry, ct_run_result *r)
{
	if (no_cache())
		return generate_and_load(k, entry, r);
	size_t klen = 0;
	char *key = canon_kernel(k, "host", &klen);
	if (!key)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	void *hit = plan_cache_get(k->ctx, key, klen);
	ct_status st = CT_OK;
	if (hit) {
		memcpy(entry, &hit, sizeof hit);
		r->code_cache = "memory";
		r->compile_seconds = 0;
	} else {
		st = generate_and_load(k, entry, r);
		void *v;
		memcpy(&v, entry, sizeof v);
		if (!st)
			plan_cache_put(k->ctx, key, klen, v);
	}
	free(key);
	return st;
}

/* Generate k's code, load it through the code cache; *entry is its uniform entry point. */
static ct_status generate_and_load(ct_kernel *k, gen_entry_fn *entry, ct_run_result *r)
{
	size_t len = 0;
	char *src = ct_kernel_emit(k, "host", &len);
	if (!src)
		return ct_ctx_last_status(k->ctx);
	ct_compile_options co;
	ct_compile_options_init(&co);
	co.no_cache = no_cache();
	ct_module *m = NULL;
	ct_load_info info;
	ct_status st = ct_module_load(k->ctx, src, len, &co, &m, &info);
	free(src);
	if (st)
		return st;
	r->code_cache = info.how;
	r->compile_seconds = strcmp(info.how, "compiled") == 0 ? info.seconds : 0;
	char fn[300], ename[300];
	gen_symbol_names(k, fn, ename, sizeof fn);
	void *sym = ct_module_symbol(m, ename);
	if (!sym)
		return ct_error(k->ctx, CT_ERR_COMPILE, "generated code lacks symbol %s", ename);
	/* dlsym gives a data pointer; POSIX guarantees it converts to a function pointer */
	memcpy(entry, &sym, sizeof sym);
	return CT_OK;
}

/* A loaded kernel and its param values: one native run (run_once_fn). */
typedef struct native_call {
	gen_entry_fn entry;
	const int64_t *params;
} native_call;

static ct_status native_once(void *ud, void *const *buffers)
{
	const native_call *c = ud;
	c->entry(buffers, c->params);
	return CT_OK;
}

ct_status run_native(ct_kernel *k, const ct_run_options *o, ct_run_result *r)
{
	native_call call = {NULL, NULL};
	ct_status st = load_entry(k, &call.entry, r);
	if (st)
		return st;
	r->threads = 1;
	int64_t *params = calloc((size_t)k->nparams + 1, sizeof *params);
	if (!params)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	ir_param_values(k, params);
	call.params = params;
	st = run_measure(k, o, native_once, &call, r);
	free(params);
	return st;
}
