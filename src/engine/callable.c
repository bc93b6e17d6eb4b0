/* callable.c: ct_kernel_compile -> a native entry point the user calls on their own buffers. */
#include "gen/gen.h"
#include "engine/engine.h"
#include "engine/targets.h"

#include <stdlib.h>
#include <string.h>

/* Arguments and params of one call live on the stack up to this many
 * entries (so calls from several threads need no lock), else on the heap. */
#define CALL_STACK 64

struct ct_callable {
	ct_ctx *ctx;                  /* allocated from it */
	ct_kernel *k;                 /* kept: array shapes and the param layout */
	gen_entry_fn entry;
	void (*set_threads)(int);     /* NULL without parallel loops */
	int threads;
	int nslots;                   /* k->nparams + view slots */
	int64_t *pv;                  /* [nslots]: param values at compile time */
	int nrt;                      /* runtime params */
	int *rt;                      /* [nrt] their param numbers */
};

void ct_callable_free(ct_callable *h)
{
	if (!h)
		return;
	ct_ctx *ctx = h->ctx;
	ct_free(ctx, h->pv);
	ct_free(ctx, h->rt);
	ct_free(ctx, h);
}

/* The param layout of k: compile-time values now, the runtime params' numbers. */
static ct_status callable_layout(ct_callable *h)
{
	ct_kernel *k = h->k;
	h->nslots = entry_param_count(k);
	h->pv = ct_alloc(k->ctx, sizeof *h->pv * ((size_t)h->nslots + 1));
	h->rt = ct_alloc(k->ctx, sizeof *h->rt * ((size_t)k->nparams + 1));
	if (!h->pv || !h->rt)
		return CT_ERR_NOMEM;
	ir_param_values(k, h->pv);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].runtime)
			h->rt[h->nrt++] = i;
	return CT_OK;
}

ct_callable *ct_kernel_compile(ct_kernel *k)
{
	if (!k || ir_kernel_ready(k) != CT_OK)
		return NULL;
	if (eng_native_only(k, "ct_kernel_compile")) /* a GPU kernel: its host C never runs in its place */
		return NULL;
	ct_callable *h = ct_alloc(k->ctx, sizeof *h);
	if (!h)
		return NULL;
	h->ctx = k->ctx;
	h->k = k;
	ct_status st = callable_layout(h);
	if (!st)
		st = native_entry_fns(k, &h->entry, &h->set_threads);
	if (st) {
		ct_callable_free(h);
		return NULL;
	}
	h->threads = ct_ctx_threads(k->ctx, 0); /* CT_OPT_THREADS, else every processor */
	return h;
}

/* Check one call's arguments and fill args (one slot per array, temps NULL)
 * and pv (the runtime values and the strided arrays' dense layouts). */
static ct_status callable_bind(const ct_callable *h, void *const *user, const int64_t *params,
			       void **args, int64_t *pv)
{
	const ct_kernel *k = h->k;
	memcpy(pv, h->pv, sizeof *pv * (size_t)h->nslots);
	if (h->nrt > 0 && !params)
		return ct_error(k->ctx, CT_ERR_USAGE, "kernel '%s': params is NULL but it has %d runtime param%s",
				k->name, h->nrt, h->nrt == 1 ? "" : "s");
	for (int i = 0; i < h->nrt; i++) {
		if (params[i] < 1)
			return ct_error(k->ctx, CT_ERR_USAGE,
					"kernel '%s': runtime param '%s' is %lld (it must be at least 1)",
					k->name, k->params[h->rt[i]].name, (long long)params[i]);
		pv[h->rt[i]] = params[i];
	}
	int u = 0;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		args[a] = NULL;
		if (arr->role == CT_TEMP)
			continue;
		if (!user || !user[u])
			return ct_error(k->ctx, CT_ERR_USAGE, "kernel '%s': argument %d (array '%s') is NULL",
					k->name, u, arr->name);
		args[a] = user[u++];
		int64_t n = (int64_t)ct_dtype_size(arr->type);
		for (int d = 0; d < arr->rank; d++) {
			bool ok = true;
			int64_t e = aff_eval(arr->ext[d], pv, NULL, &ok);
			if (!ok || !ct_mul_ok(n, e, &n) || n > ((int64_t)1 << 62))
				return ct_error(k->ctx, CT_ERR_LIMIT,
						"kernel '%s': array '%s' is too large for these params",
						k->name, arr->name);
		}
	}
	entry_args_fill(k, (void *const *)args, pv, NULL, args, pv);
	return CT_OK;
}

/* Buffers the kernel writes must not share a byte with any other argument:
 * the generated code declares its pointers restrict, so an overlap would
 * give a wrong result silently. Each buffer spans its dense size (the
 * extents were checked by callable_bind); two inputs may overlap. */
static ct_status callable_overlap(const ct_kernel *k, void *const *argv, const int64_t *pv)
{
	for (int w = 0; w < k->narrays; w++) {
		const ir_array *aw = &k->arrays[w];
		if (aw->role != CT_OUTPUT && aw->role != CT_INOUT)
			continue;
		for (int o = 0; o < k->narrays; o++) {
			const ir_array *ao = &k->arrays[o];
			bool o_written = ao->role == CT_OUTPUT || ao->role == CT_INOUT;
			if (o == w || ao->role == CT_TEMP || (o < w && o_written))
				continue; /* a pair of written arrays is tested once */
			int64_t span[2];
			for (int s = 0; s < 2; s++) {
				const ir_array *arr = s ? ao : aw;
				span[s] = (int64_t)ct_dtype_size(arr->type);
				for (int d = 0; d < arr->rank; d++) {
					bool ok = true;
					span[s] *= aff_eval(arr->ext[d], pv, NULL, &ok);
				}
			}
			uintptr_t bw = (uintptr_t)argv[w], bo = (uintptr_t)argv[o];
			if (bw < bo + (uintptr_t)span[1] && bo < bw + (uintptr_t)span[0])
				return ct_error(k->ctx, CT_ERR_USAGE,
						"kernel '%s': array '%s' (written) overlaps array '%s' in memory",
						k->name, aw->name, ao->name);
		}
	}
	return CT_OK;
}

ct_status ct_callable_call(const ct_callable *h, void *const *args, const int64_t *params)
{
	if (!h)
		return CT_ERR_USAGE;
	const ct_kernel *k = h->k;
	void *args_s[CALL_STACK];
	int64_t pv_s[CALL_STACK];
	void **argv = k->narrays <= CALL_STACK ? args_s : malloc(sizeof *argv * (size_t)k->narrays);
	int64_t *pv = h->nslots <= CALL_STACK ? pv_s : malloc(sizeof *pv * (size_t)h->nslots);
	ct_status st = argv && pv ? callable_bind(h, args, params, argv, pv)
				  : ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	if (!st)
		st = callable_overlap(k, argv, pv);
	if (!st) {
		if (h->set_threads)
			h->set_threads(h->threads);
		/* the generated entry allocates the kernel's temps and cache buffers */
		int rc = h->entry(argv, pv);
		if (rc != 0)
			st = gen_status_error(h->k, rc);
	}
	if (argv != args_s)
		free(argv);
	if (pv != pv_s)
		free(pv);
	return st;
}

int ct_callable_arg_count(const ct_callable *h)
{
	int n = 0;
	for (int a = 0; h && a < h->k->narrays; a++)
		n += h->k->arrays[a].role != CT_TEMP;
	return n;
}

int ct_callable_param_count(const ct_callable *h) { return h ? h->nrt : 0; }
