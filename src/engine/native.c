/* native.c: the native engine: generate C, compile or fetch it from the code cache, run and verify. */
#include "gen/gen.h"
#include "engine/kernelmemo.h"
#include "ir/canon.h"
#include "jit/jit.h"
#include "engine/engine.h"
#include "engine/targets.h"
#include "ir/slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The source of k for the target named target (NULL or "c": the host), by
 * the target's row. The host's C can be printed for any plan (its loops as
 * C); a target that does not run as a host entry needs its own plan. */
char *ct_kernel_emit(ct_kernel *k, const char *target, size_t *len)
{
	if (!k || ir_kernel_ready(k) != CT_OK)
		return NULL;
	if (target && strcmp(target, "mpi") == 0)
		return gen_dist_c(k, len); /* the MPI program of distribute() (docs/DISTRIBUTED.md) */
	const ir_target_info *want = ir_target_find(!target || strcmp(target, "c") == 0 ? "host" : target);
	if (!want) {
		char names[160];
		ct_error(k->ctx, CT_ERR_UNSUPPORTED, "target '%s' is not supported (%s)", target,
		         ir_target_list(names, sizeof names, "", "", false));
		return NULL;
	}
	const ir_target_info *planned = ir_kernel_target(k);
	if (!want->native_entry && k->has_plan && planned != want) {
		ct_error(k->ctx, CT_ERR_USAGE, "--target %s needs plan(target=%s), not plan(target=%s)", want->name,
		         want->name, planned->name);
		return NULL;
	}
	return eng_target_row(want->id)->source(k, len, NULL);
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
	/* every caller that loads host code comes here: a GPU kernel's host C never runs in its place */
	ct_status own = eng_native_only(k, "the native engine");
	if (own)
		return own;
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

/* Load src under co through the code cache and fill fns from it. */
static ct_status load_module(ct_kernel *k, bool checked, const char *src, size_t len, const ct_compile_options *co,
                             native_fns *fns, ct_run_result *r, char digest[JIT_DIGEST_HEX])
{
	ct_module *m = NULL;
	ct_load_info info;
	ct_status st = ct_module_load(k->ctx, src, len, co, &m, &info);
	if (st)
		return st;
	memcpy(digest, info.key, JIT_DIGEST_HEX);
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
	if (gen_c_openmp(k) == 2) {
		gen_threads_symbol(k, ename, sizeof ename);
		sym = ct_module_symbol(m, ename);
		if (!sym)
			return ct_error(k->ctx, CT_ERR_COMPILE, "generated code lacks symbol %s", ename);
		memcpy(&fns->set_threads, &sym, sizeof sym);
	}
	return CT_OK;
}

/* Load src under co and check it before its first use (selftest.c): the
 * verdict kept with the module, else a test instance against the
 * interpreter. A module found wrong keeps its verdict, so the next load
 * goes straight to the fallback. */
static ct_status load_tested(ct_kernel *k, bool checked, const char *src, size_t len, const ct_compile_options *co,
                             native_fns *fns, ct_run_result *r, selftest_result *res)
{
	ct_ctx *ctx = k->ctx;
	memset(res, 0, sizeof *res);
	char digest[JIT_DIGEST_HEX];
	/* a module already found wrong is not compiled again */
	if (jit_key(ctx, src, len, co, digest, NULL) == CT_OK && selftest_verdict_get(ctx, digest) == SELFTEST_BAD) {
		res->verdict = SELFTEST_BAD;
		res->kept = true;
		return CT_OK;
	}
	ct_ctx_clear_error(ctx);
	ct_status st = load_module(k, checked, src, len, co, fns, r, digest);
	if (st)
		return st;
	res->verdict = selftest_verdict_get(ctx, digest);
	if (res->verdict == SELFTEST_OK)
		return CT_OK;
	selftest_fns f = {fns->entry, NULL};
	if (checked)
		memcpy(&f.checked, &fns->checked, sizeof f.checked);
	st = selftest_run(k, &f, res);
	if (st)
		return st;
	/* a wrong module stays on disk marked "bad": never loaded again, and
	 * never compiled again (the next load goes straight to the fallback) */
	selftest_verdict_put(ctx, digest, res->verdict);
	return CT_OK;
}

/* The refusal of a kernel whose code is wrong under the policy and the
 * fallback both. */
static ct_status refuse_miscompiled(ct_kernel *k, const ct_compile_options *co, const selftest_result *res)
{
	char cc[300], why[400];
	jit_compiler_line(k->ctx, co, cc, sizeof cc);
	if (res->kept)
		snprintf(why, sizeof why, "found by an earlier check, whose verdict is kept with the code");
	else
		snprintf(why, sizeof why, "test instance %s: array '%s', max relative error %.3g", res->instance,
			 res->array, res->max_rel_error);
	return ct_error(k->ctx, CT_ERR_VERIFY,
			"kernel '%s': its compiled code gives wrong results where the reference interpreter is "
			"right (%s), also compiled with %s: "
			"a miscompile by the C compiler %s or a code generation bug of cachet is suspected (please "
			"report it with the file), and the code is not used. Workaround: "
			"another compiler (--cc clang-14, $CC, ct_ctx_set_compiler) or another schedule or plan; "
			"see docs/LIBRARY.md, \"The compile policy\"",
			k->name, why, JIT_FALLBACK_FLAG, cc);
}

/* k's code src was found wrong under the policy (options co, result
 * first): load it again with JIT_FALLBACK_FLAG (no auto-vectorization) and
 * use it, with a warning when the wrong result is news, when that is
 * right; else refuse it. */
static ct_status load_fallback(ct_kernel *k, bool checked, const char *src, size_t len, const ct_compile_options *co,
                               const selftest_result *first, native_fns *fns, ct_run_result *r)
{
	const char *flags[8];
	int n = 0;
	for (int i = 0; i < co->nflags && n < 7; i++)
		flags[n++] = co->flags[i];
	flags[n++] = JIT_FALLBACK_FLAG;
	ct_compile_options fb = *co;
	fb.flags = flags;
	fb.nflags = n;
	selftest_result res;
	ct_status st = load_tested(k, checked, src, len, &fb, fns, r, &res);
	if (st)
		return st;
	if (res.verdict == SELFTEST_BAD)
		return refuse_miscompiled(k, co, first->kept ? &res : first);
	if (!first->kept) {
		char cc[300];
		jit_compiler_line(k->ctx, co, cc, sizeof cc);
		jit_warn_ctx(k->ctx,
			     "kernel '%s': its code compiled by %s gave wrong results (test instance %s: "
			     "array '%s', max relative error %.3g), a suspected compiler bug; compiled again "
			     "with %s, which is right (docs/LIBRARY.md, \"The compile policy\")",
			     k->name, cc, first->instance, first->array, first->max_rel_error, JIT_FALLBACK_FLAG);
	}
	return CT_OK;
}

/* Generate k's code, load it through the code cache, check it before its
 * first use (load_tested; load_fallback when it is wrong); fill fns. */
static ct_status generate_and_load(ct_kernel *k, bool checked, native_fns *fns, ct_run_result *r)
{
	/* the code allocates and zeroes the plan's buffers on each call (and the
	 * self-test calls it): refused before compiling when no run could hold them */
	ct_looptree *t = ct_kernel_lower(k, 1);
	ct_status st = t ? lt_check_buffers(t) : ct_ctx_last_status(k->ctx);
	ct_looptree_free(t);
	if (st)
		return st;
	size_t len = 0;
	char *src = emit_host(k, checked, &len);
	if (!src)
		return ct_ctx_last_status(k->ctx);
	ct_compile_options co;
	native_options(k, checked, &co);
	selftest_result res;
	st = load_tested(k, checked, src, len, &co, fns, r, &res);
	if (!st && res.verdict == SELFTEST_BAD)
		st = load_fallback(k, checked, src, len, &co, &res, fns, r);
	free(src);
	return st;
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

/* The iterations of the parallel band that starts at loop x (x and the
 * collapse - 1 loops nested in it), at the param values p; -1 when a bound
 * cannot be evaluated or the product overflows. */
static int64_t band_iterations(const lt_node *x, const int64_t *p)
{
	int64_t total = 1;
	for (int d = 0; x && x->kind == LT_LOOP && d < (x->collapse > 0 ? x->collapse : 1); d++) {
		bool ok = !lt_affine_loop(x); /* its lo and hi are not its range */
		int64_t lo = bx_eval(x->lo, p, &ok), hi = bx_eval(x->hi, p, &ok);
		if (!ok || x->step <= 0)
			return -1;
		int64_t trips = hi > lo ? (hi - lo - 1) / x->step + 1 : 0;
		if (trips > 0 && total > INT64_MAX / trips)
			return -1;
		total *= trips;
		x = x->nkids == 1 ? x->kids[0] : NULL;
	}
	return total;
}

/* The most iterations any parallel band under the nodes xs[0..n-1] has at
 * the param values p, into *most; false when one cannot be evaluated. */
static bool most_band_iterations(lt_node *const *xs, int n, const int64_t *p, int64_t *most)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = xs[i];
		if (x->kind == LT_LOOP && x->parallel) {
			int64_t it = band_iterations(x, p);
			if (it < 0)
				return false;
			*most = it > *most ? it : *most;
		}
		if (!most_band_iterations(x->kids, x->nkids, p, most) ||
		    !most_band_iterations(x->els, x->nels, p, most))
			return false;
	}
	return true;
}

/* The threads k's parallel loops can keep busy with n available at the
 * param values p: n capped by their max_threads and by the iterations of the
 * largest parallel band (a 32-iteration loop uses at most 32 threads,
 * whatever was asked), so that a run reports the count it used. */
static int capped_threads(ct_kernel *k, int n, const int64_t *p)
{
	int64_t most = 0;
	for (int i = 0; i < k->nplan; i++)
		if (k->plan[i].kind == PL_PARALLELIZE) {
			int64_t m = k->plan[i].max_threads > 0 ? k->plan[i].max_threads : n;
			most = m > most ? m : most;
		}
	int used = most > 0 && most < n ? (int)most : n;
	if (used <= 1)
		return used;
	ct_status saved = k->ctx->status;
	char saved_msg[sizeof k->ctx->msg];
	memcpy(saved_msg, k->ctx->msg, sizeof saved_msg);
	ct_looptree *t = ct_kernel_lower(k, 1);
	int64_t iters = 0;
	if (t && most_band_iterations(t->roots, t->nroots, p, &iters) && iters < used)
		used = iters > 1 ? (int)iters : 1;
	ct_looptree_free(t);
	k->ctx->status = saved; /* a count is a report: it never fails the run */
	memcpy(k->ctx->msg, saved_msg, sizeof saved_msg);
	return used;
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
		fns.set_threads(ct_ctx_threads(k->ctx, o->threads));
	}
	int64_t *params = calloc((size_t)entry_param_count(k) + 1, sizeof *params);
	if (!params)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	ir_param_values(k, params);
	if (fns.set_threads)
		r->threads = capped_threads(k, ct_ctx_threads(k->ctx, o->threads), params);
	entry_args_fill(k, NULL, params, NULL, NULL, params);
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
		int n = ct_ctx_threads(k->ctx, o.threads);
		set_threads(n);
		*used = n;
		int64_t *params = calloc((size_t)entry_param_count(k) + 1, sizeof *params);
		if (params) {
			ir_param_values(k, params);
			*used = capped_threads(k, n, params);
			free(params);
		}
	}
	return CT_OK;
}
