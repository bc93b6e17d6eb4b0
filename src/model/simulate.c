/* simulate.c: run a kernel's exact address trace through the cache simulator (cachet simulate). */
#include "interp/interp.h"
#include "model/model.h"
#include "model/sim.h"
#include "target/target.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The machine's caches as a spec (sim.h): also what predict and tiles use without a spec. */
ct_status sim_machine_spec(ct_ctx *ctx, sim_spec *spec)
{
	const ct_probe_info *t = target_get(ctx);
	if (!t)
		return ct_ctx_last_status(ctx);
	memset(spec, 0, sizeof *spec);
	for (int i = 0; i < t->ncaches && spec->nlevels < SIM_MAX_LEVELS; i++) {
		sim_level *l = &spec->level[spec->nlevels];
		l->size = t->caches[i].size;
		l->line = t->caches[i].line > 0 ? t->caches[i].line : 64;
		l->ways = t->caches[i].ways;
		if (l->ways > 0 && l->size % (l->line * l->ways) != 0)
			l->ways = 0;
		/* what the probe knows of sharing (predict --threads); unknown: the spec's default */
		int priv = target_level_private(t, i);
		l->sharing = priv > 0 ? SIM_SHARE_PRIVATE : priv == 0 ? SIM_SHARE_SHARED : SIM_SHARE_DEFAULT;
		/* keep the simulated state bounded: the hypervisor may report huge L3s */
		if (l->size > ((int64_t)1 << 30))
			l->size = (int64_t)1 << 30;
		spec->nlevels++;
	}
	if (spec->nlevels == 0)
		return ct_error(ctx, CT_ERR_UNSUPPORTED, "no cache levels known on this machine: give --cache");
	return sim_spec_check(ctx, spec);
}

/* The simulator fed by the trace, and the progress it tells (phase
 * "simulate", as the interpreter tells "verify": first after a second, then
 * at most ten times a second, and the end if anything was said). */
typedef struct sim_feed {
	sim *s;
	ct_ctx *ctx;
	int64_t done, total;
	double next;
	bool said;
	int64_t limit; /* stop past it (affine kernels: the length is not known before); 0 none */
} sim_feed;

static void feed_progress(sim_feed *f, bool end)
{
	double now = ct_now();
	if ((!end && now < f->next) || (end && !f->said) || f->total <= 0)
		return;
	f->next = now + 0.1;
	f->said = true;
	int64_t done = end || f->done > f->total ? f->total : f->done;
	int64_t scale = f->total / INT_MAX + 1;
	f->ctx->progress(f->ctx->progress_ud, "simulate", (int)(done / scale), (int)(f->total / scale));
}

static ct_status feed(void *ud, const interp_access *acc, int n)
{
	sim_feed *f = ud;
	for (int i = 0; i < n; i++)
		sim_access_ref(f->s, acc[i].ref, acc[i].buffer, acc[i].offset, acc[i].is_write);
	f->done += n;
	if (f->limit > 0 && f->done > f->limit)
		return ct_error(f->ctx, CT_ERR_LIMIT,
		                "the trace passed the simulator's limit of %lld accesses (raise it: "
		                "CT_OPT_SIM_MAX_ACCESSES, cachet simulate --max-accesses)",
		                (long long)f->limit);
	if (f->ctx->progress)
		feed_progress(f, false);
	return CT_OK;
}

/* The trace's length as the model counts it (its time does not grow with
 * the loop extents): the limit is checked before a walk of months starts.
 * 0 when the model cannot count it: then the walk goes on unchecked, as
 * before there was a limit (the simulator takes what the model may not);
 * for kernels with affine loop bounds the walk itself stops at the limit. */
static int64_t trace_length(ct_looptree *t, const sim_spec *spec)
{
	if (t->k->affine_bounds) /* the model takes no affine loops: the walk checks the limit */
		return 0;
	model_result m;
	memset(&m, 0, sizeof m);
	/* a budget of 1 stops the analysis once the accesses are counted */
	ct_status st = model_analyse_budget(t, spec, MODEL_REFINE_FULL, 1, &m);
	int64_t n = st ? 0 : m.accesses;
	if (st)
		ct_ctx_clear_error(t->k->ctx);
	model_result_free(&m);
	return n;
}

void ct_sim_result_free(ct_sim_result *r)
{
	if (!r)
		return;
	free(r->refs);
	r->refs = NULL;
	r->nrefs = 0;
}

ct_status sim_tree_buffers(ct_looptree *t, sim_buffer **out)
{
	ct_ctx *ctx = t->k->ctx;
	int nbuf = t->narrays;
	int64_t *params = calloc((size_t)t->k->nparams + (size_t)t->nderived + 1, sizeof *params);
	sim_buffer *buf = calloc((size_t)nbuf + 1, sizeof *buf);
	ct_status st = CT_OK;
	if (!params || !buf)
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	else if (!lt_param_values(t, params))
		st = ct_error(ctx, CT_ERR_LIMIT, "a derived value of kernel '%s' overflows 64 bits", t->k->name);
	for (int a = 0; a < nbuf && !st; a++) {
		int64_t stride[IR_MAX_RANK];
		buf[a].elem_size = (int64_t)ct_dtype_size(t->arrays[a].type);
		st = lt_array_layout(t, params, a, stride, &buf[a].count);
	}
	free(params);
	if (st) {
		free(buf);
		buf = NULL;
	}
	*out = buf;
	return st;
}

ct_status ct_kernel_simulate(ct_kernel *k, const char *spec_text, ct_sim_result *r)
{
	if (!k || !r)
		return CT_ERR_USAGE;
	ct_ctx *ctx = k->ctx;
	memset(r, 0, sizeof *r);
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	if (ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
	sim_spec spec;
	ct_status st = spec_text ? sim_spec_parse(ctx, spec_text, &spec) : sim_machine_spec(ctx, &spec);
	if (st)
		return st;
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(ctx);
	/* every storage of the tree (the kernel's arrays, then cache buffers)
	 * is a buffer of the simulator on its own line-aligned region */
	int nbuf = t->narrays;
	sim_buffer *buf = NULL;
	interp_ref *refs = NULL;
	int nrefs = 0;
	sim *s = NULL;
	st = sim_tree_buffers(t, &buf);
	if (!st)
		st = interp_refs(t, &refs, &nrefs);
	if (st)
		goto out;
	int64_t total = 0;
	if (ctx->sim_max_accesses > 0 || ctx->progress) {
		total = trace_length(t, &spec);
		if (ctx->sim_max_accesses > 0 && total > ctx->sim_max_accesses) {
			/* at about 30 million accesses a second (the bench's machine) */
			double secs = (double)total / 3e7;
			char len[64];
			if (secs < 7200)
				snprintf(len, sizeof len, "%.0f minutes", secs / 60);
			else if (secs < 4 * 86400)
				snprintf(len, sizeof len, "%.0f hours", secs / 3600);
			else
				snprintf(len, sizeof len, "%.3g days", secs / 86400);
			st = ct_error(ctx, CT_ERR_LIMIT,
			              "kernel '%s' makes %lld accesses, over the simulator's limit of %lld (that "
			              "trace would take about %s); raise the limit (CT_OPT_SIM_MAX_ACCESSES, "
			              "cachet simulate --max-accesses) or use the model (cachet predict)",
			              k->name, (long long)total, (long long)ctx->sim_max_accesses, len);
			goto out;
		}
	}
	s = sim_new(ctx, &spec, buf, nbuf, nrefs);
	if (!s) {
		st = ct_ctx_last_status(ctx);
		goto out;
	}
	double t0 = ct_now();
	sim_feed f = {s, ctx, 0, total, t0 + 1.0, false, k->affine_bounds ? ctx->sim_max_accesses : 0};
	st = interp_trace_batch(t, feed, &f);
	if (!st && ctx->progress)
		feed_progress(&f, true);
	uint64_t misses[SIM_MAX_LEVELS], accesses = 0, writes = 0;
	if (!st)
		st = sim_result(s, misses, &accesses, &writes);
	r->seconds = ct_now() - t0;
	if (st)
		goto out;
	r->accesses = (int64_t)accesses;
	r->nlevels = spec.nlevels;
	for (int l = 0; l < spec.nlevels; l++) {
		r->level[l].size = spec.level[l].size;
		r->level[l].line = spec.level[l].line;
		r->level[l].ways = spec.level[l].ways;
		r->level[l].misses = (int64_t)misses[l];
	}
	r->refs = calloc((size_t)nrefs + 1, sizeof *r->refs);
	if (!r->refs) {
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	r->nrefs = nrefs;
	for (int i = 0; i < nrefs; i++) {
		/* references are accesses of the kernel's statements: their
		 * arrays are kernel arrays, whose names outlive t */
		int a = refs[i].array;
		r->refs[i].array = a >= 0 && a < k->narrays ? k->arrays[a].name : "?";
		r->refs[i].stmt = refs[i].stmt;
		r->refs[i].is_write = refs[i].is_write;
		for (int l = 0; l < spec.nlevels; l++)
			r->refs[i].misses[l] = (int64_t)sim_ref_misses(s, l, i);
	}
out:
	sim_free(s);
	ct_free(ctx, refs);
	free(buf);
	ct_looptree_free(t);
	return st;
}
