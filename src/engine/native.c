/* native.c: the native engine: generate C, compile or fetch it from the code cache, run and verify. */
#include "gen/gen.h"
#include "engine/kernelmemo.h"
#include "ir/canon.h"
#include "jit/jit.h"
#include "engine/engine.h"
#include "ir/slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OpenCL C of a plan(target=opencl) kernel (ocl_kernel_source). */
static char *emit_opencl(ct_kernel *k, size_t *len)
{
	if (k->has_plan && k->target != TARGET_OPENCL) {
		ct_error(k->ctx, CT_ERR_USAGE, "--target opencl needs plan(target=opencl), not plan(target=host)");
		return NULL;
	}
	return ocl_kernel_source(k, len, NULL);
}

char *ct_kernel_emit(ct_kernel *k, const char *target, size_t *len)
{
	if (!k || ir_kernel_ready(k) != CT_OK)
		return NULL;
	if (target && strcmp(target, "opencl") == 0)
		return emit_opencl(k, len);
	if (target && strcmp(target, "host") != 0 && strcmp(target, "c") != 0) {
		ct_error(k->ctx, CT_ERR_UNSUPPORTED, "target '%s' is not supported (host or opencl)", target);
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

/* A loaded kernel: its uniform entry and, with parallel loops, its thread
 * setter (gen_threads_symbol). */
typedef struct native_fns {
	gen_entry_fn entry;
	gen_checked_entry_fn checked; /* instead of entry, for checked code */
	void (*set_threads)(int n);
} native_fns;

static ct_status generate_and_load(ct_kernel *k, bool checked, native_fns *fns, ct_run_result *r);

/* The kernel memo holds function pointers as void * (POSIX lets a dlsym
 * data pointer convert to a function pointer and back). */
static void *fn_to_ptr(const void *fn, size_t size)
{
	void *v = NULL;
	memcpy(&v, fn, size);
	return v;
}

/* k's functions (checked: the checked entry): from the kernel memo when
 * this ctx has already loaded the same kernel (canonically), else
 * generated and loaded. The thread setter is kept under the key plus a
 * suffix. */
static ct_status load_fns(ct_kernel *k, bool checked, native_fns *fns, ct_run_result *r)
{
	if (no_cache())
		return generate_and_load(k, checked, fns, r);
	size_t klen = 0;
	/* the register tiles' vector width is part of the code */
	char target[32] = "host";
	int64_t vb = ct_ctx_get_option(k->ctx, CT_OPT_VECTOR_BYTES);
	if (vb > 0)
		snprintf(target, sizeof target, "host:v%lld", (long long)vb);
	if (ct_ctx_get_option(k->ctx, CT_OPT_BRANCHING)) /* the branching form is other code */
		strcat(target, ":branching");
	if (checked) /* checked code has another entry: never shared with unchecked code */
		strcat(target, ":checked");
	char *key = canon_kernel(k, target, &klen);
	char *tkey = key ? malloc(klen + 9) : NULL;
	if (!key || !tkey) {
		free(key);
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	}
	memcpy(tkey, key, klen);
	memcpy(tkey + klen, "\nthreads", 9);
	bool parallel = gen_c_openmp(k) == 2;
	void *hit = kernel_memo_get(k->ctx, key, klen);
	void *thit = hit && parallel ? kernel_memo_get(k->ctx, tkey, klen + 8) : NULL;
	ct_status st = CT_OK;
	if (hit && (!parallel || thit)) {
		if (checked)
			memcpy(&fns->checked, &hit, sizeof hit);
		else
			memcpy(&fns->entry, &hit, sizeof hit);
		if (thit)
			memcpy(&fns->set_threads, &thit, sizeof thit);
		r->code_cache = "memory";
		r->compile_seconds = 0;
	} else {
		st = generate_and_load(k, checked, fns, r);
		if (!st && checked)
			kernel_memo_put(k->ctx, key, klen, fn_to_ptr(&fns->checked, sizeof fns->checked));
		else if (!st)
			kernel_memo_put(k->ctx, key, klen, fn_to_ptr(&fns->entry, sizeof fns->entry));
		if (!st && fns->set_threads)
			kernel_memo_put(k->ctx, tkey, klen + 8, fn_to_ptr(&fns->set_threads, sizeof fns->set_threads));
	}
	free(key);
	free(tkey);
	return st;
}

/* The compile options of k's generated code: OpenMP for parallel loops,
 * -fopenmp-simd for simd pragmas alone, and for checked code its flag (in
 * the code cache's key too, though the source differs anyway). */
static void native_options(ct_kernel *k, bool checked, ct_compile_options *co)
{
	static const char *const simd_flags[] = {"-fopenmp-simd", "-DCACHET_CHECKED=1"};
	static const char *const checked_flags[] = {"-DCACHET_CHECKED=1"};
	ct_compile_options_init(co);
	co->no_cache = no_cache();
	int omp = gen_c_openmp(k);
	co->openmp = omp == 2;
	if (omp == 1) {
		co->flags = simd_flags;
		co->nflags = checked ? 2 : 1;
	} else if (checked) {
		co->flags = checked_flags;
		co->nflags = 1;
	}
}

/* k's C, checked or not. */
static char *emit_host(ct_kernel *k, bool checked, size_t *len)
{
	if (!checked)
		return ct_kernel_emit(k, "host", len);
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return NULL;
	char *src = gen_c_opts(t, len, true, NULL, NULL);
	ct_looptree_free(t);
	return src;
}

/* Generate k's code, load it through the code cache; fill fns from it. */
static ct_status generate_and_load(ct_kernel *k, bool checked, native_fns *fns, ct_run_result *r)
{
	size_t len = 0;
	char *src = emit_host(k, checked, &len);
	if (!src)
		return ct_ctx_last_status(k->ctx);
	ct_compile_options co;
	native_options(k, checked, &co);
	int omp = gen_c_openmp(k);
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
	if (checked)
		snprintf(ename, sizeof ename, "cachet_%s_checked_entry", k->name);
	void *sym = ct_module_symbol(m, ename);
	if (!sym)
		return ct_error(k->ctx, CT_ERR_COMPILE, "generated code lacks symbol %s", ename);
	/* dlsym gives a data pointer; POSIX guarantees it converts to a function pointer */
	if (checked)
		memcpy(&fns->checked, &sym, sizeof sym);
	else
		memcpy(&fns->entry, &sym, sizeof sym);
	fns->set_threads = NULL;
	if (omp == 2) {
		gen_threads_symbol(k, ename, sizeof ename);
		sym = ct_module_symbol(m, ename);
		if (!sym)
			return ct_error(k->ctx, CT_ERR_COMPILE, "generated code lacks symbol %s", ename);
		memcpy(&fns->set_threads, &sym, sizeof sym);
	}
	return CT_OK;
}

/* A loaded kernel and its param values: one native run (run_once_fn). */
typedef struct native_call {
	ct_kernel *k;
	native_fns fns;
	const int64_t *params;
} native_call;

static ct_status native_once(void *ud, void *const *buffers)
{
	const native_call *c = ud;
	int rc;
	if (c->fns.checked) {
		gen_oob oob;
		memset(&oob, 0, sizeof oob);
		rc = c->fns.checked(buffers, c->params, &oob);
		if (oob.hit)
			return gen_oob_error(c->k, &oob);
	} else {
		rc = c->fns.entry(buffers, c->params);
	}
	if (rc != 0)
		return gen_status_error(c->k, rc);
	return CT_OK;
}

/* Threads a run with options o uses: --threads, else the ctx's option,
 * else one per processor this process may use. */
static int run_threads(const ct_kernel *k, const ct_run_options *o)
{
	int64_t n = o->threads > 0 ? o->threads : k->ctx->threads;
	if (n <= 0) {
		long p = sysconf(_SC_NPROCESSORS_ONLN);
		n = p > 0 ? p : 1;
	}
	return n > 4096 ? 4096 : (int)n;
}

/* The most threads a parallel loop of k runs on with n available (its
 * max_threads). */
static int capped_threads(const ct_kernel *k, int n)
{
	int64_t most = 0;
	for (int i = 0; i < k->nplan; i++)
		if (k->plan[i].kind == PL_PARALLELIZE) {
			int64_t m = k->plan[i].max_threads > 0 ? k->plan[i].max_threads : n;
			most = m > most ? m : most;
		}
	return most > 0 && most < n ? (int)most : n;
}

/* k's compiled code gave wrong results: forget it in the kernel memo, the
 * module memo and the code cache on disk, so the next run compiles
 * it again (with a compiler that may have been fixed meanwhile) instead
 * of reusing a wrong binary. The verification error on the ctx is kept. */
static void evict_wrong(ct_kernel *k, bool checked)
{
	ct_ctx *ctx = k->ctx;
	ct_status saved = ctx->status;
	char saved_msg[sizeof ctx->msg];
	memcpy(saved_msg, ctx->msg, sizeof saved_msg);
	kernel_memo_clear(ctx);
	size_t len = 0;
	char *src = emit_host(k, checked, &len);
	if (src) {
		ct_compile_options co;
		native_options(k, checked, &co);
		(void)jit_evict(ctx, src, len, &co);
		free(src);
	}
	ctx->status = saved;
	memcpy(ctx->msg, saved_msg, sizeof saved_msg);
}

ct_status run_native(ct_kernel *k, const ct_run_options *o, ct_run_result *r)
{
	native_call call;
	memset(&call, 0, sizeof call);
	native_fns fns = {NULL, NULL, NULL};
	ct_status st = load_fns(k, o->checked != 0, &fns, r);
	if (st)
		return st;
	call.k = k;
	call.fns = fns;
	r->threads = 1;
	if (fns.set_threads) {
		int n = run_threads(k, o);
		fns.set_threads(n);
		r->threads = capped_threads(k, n);
	}
	int64_t *params = calloc((size_t)k->nparams + (size_t)view_slots(k) + 1, sizeof *params);
	if (!params)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	ir_param_values(k, params);
	view_dense_values(k, params, params + k->nparams);
	call.params = params;
	st = run_measure(k, o, native_once, &call, r);
	free(params);
	if (st == CT_ERR_VERIFY)
		evict_wrong(k, o->checked != 0);
	return st;
}

/* For the solution selector (src/tune/select.c): k's entry point and thread setter as they
 * stand, through the plan and code caches; declared in tune/tune.h. */
ct_status native_entry_load(ct_kernel *k, gen_entry_fn *entry, void (**set_threads)(int), const char **how,
                            double *compile_s);
ct_status native_entry_load(ct_kernel *k, gen_entry_fn *entry, void (**set_threads)(int), const char **how,
                            double *compile_s)
{
	native_fns fns = {NULL, NULL, NULL};
	ct_run_result r;
	memset(&r, 0, sizeof r);
	r.code_cache = "memory";
	ct_status st = load_fns(k, false, &fns, &r);
	*entry = fns.entry;
	*set_threads = fns.set_threads;
	if (how)
		*how = r.code_cache;
	if (compile_s)
		*compile_s = r.compile_seconds;
	return st;
}

ct_status native_entry_fns(ct_kernel *k, gen_entry_fn *entry, void (**set_threads)(int));
ct_status native_entry_fns(ct_kernel *k, gen_entry_fn *entry, void (**set_threads)(int))
{
	return native_entry_load(k, entry, set_threads, NULL, NULL);
}

ct_status native_entry(ct_kernel *k, int threads, gen_entry_fn *entry, int *used)
{
	void (*set_threads)(int) = NULL;
	ct_status st = native_entry_fns(k, entry, &set_threads);
	if (st)
		return st;
	ct_run_options o;
	ct_run_options_init(&o);
	o.threads = threads;
	*used = 1;
	if (set_threads) {
		int n = run_threads(k, &o);
		set_threads(n);
		*used = capped_threads(k, n);
	}
	return CT_OK;
}
