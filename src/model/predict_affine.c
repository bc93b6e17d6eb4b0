/* predict_affine.c: predict (and the tile search, the tuner, --per-ref) for kernels with affine loop
 * bounds, which the analytical model does not take yet (issue #31): the exact simulator counts every
 * level when the trace is short enough. */
#include "model/model.h"
#include "model/sim.h"
#include "interp/interp.h"

#include <stdlib.h>
#include <string.h>

/* The trace's consumer: the simulator, each storage's accesses, and a cap on their number. */
typedef struct affine_feed {
	sim *s;
	int64_t *accesses; /* per storage */
	int nbuf;
	int64_t total, cap;
	bool by_ref;      /* give the simulator each access's reference id */
	const char *what; /* the stage that simulates, for the limit's message */
	ct_ctx *ctx;
} affine_feed;

static ct_status feed(void *ud, const interp_access *acc, int n)
{
	affine_feed *f = ud;
	f->total += n;
	if (f->total > f->cap)
		return ct_error(f->ctx, CT_ERR_LIMIT,
		                "the cache model does not analyse loops with affine bounds yet (issue #31), "
		                "and the trace has more than %lld accesses, too many to simulate within "
		                "%s: use `cachet simulate`, or smaller sizes",
		                (long long)f->cap, f->what);
	for (int i = 0; i < n; i++) {
		if (f->by_ref)
			sim_access_ref(f->s, acc[i].ref, acc[i].buffer, acc[i].offset, acc[i].is_write);
		else
			sim_access(f->s, acc[i].buffer, acc[i].offset, acc[i].is_write);
		if (acc[i].buffer >= 0 && acc[i].buffer < f->nbuf)
			f->accesses[acc[i].buffer]++;
	}
	return CT_OK;
}

ct_status affine_simulate(ct_looptree *t, const sim_spec *spec, int64_t cap, const char *what, int nrefs,
                          affine_sim *out)
{
	ct_ctx *ctx = t->k->ctx;
	memset(out, 0, sizeof *out);
	double t0 = ct_now();
	sim_buffer *buf = NULL;
	affine_feed f = {NULL, NULL, t->narrays, 0, cap > 0 ? cap : AFFINE_SIM_MAX, nrefs > 0, what, ctx};
	f.accesses = calloc((size_t)t->narrays + 1, sizeof *f.accesses);
	ct_status st = f.accesses ? sim_tree_buffers(t, &buf) : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st && !(f.s = sim_new(ctx, spec, buf, t->narrays, nrefs > 0 ? nrefs : 0)))
		st = ct_ctx_last_status(ctx);
	if (!st)
		st = interp_trace_batch(t, feed, &f);
	uint64_t misses[SIM_MAX_LEVELS];
	if (!st)
		st = sim_result(f.s, misses, NULL, NULL);
	free(buf);
	if (st) {
		sim_free(f.s);
		free(f.accesses);
		return st;
	}
	out->s = f.s;
	out->buffer_accesses = f.accesses;
	out->accesses = f.total;
	for (int l = 0; l < spec->nlevels; l++)
		out->misses[l] = (int64_t)misses[l];
	out->seconds = ct_now() - t0;
	return CT_OK;
}

void affine_sim_free(affine_sim *a)
{
	if (!a)
		return;
	sim_free(a->s);
	free(a->buffer_accesses);
	memset(a, 0, sizeof *a);
}

/* r's per-array entries from the simulation: the storages with accesses, in order, with their
 * reference counts and first statements as the model's table gives them. */
static ct_status fill_arrays(ct_looptree *t, const sim_spec *spec, const affine_sim *f,
                             ct_predict_result *r)
{
	int na = t->narrays;
	int *nrefs = calloc((size_t)na + 1, sizeof *nrefs), *first = calloc((size_t)na + 1, sizeof *first);
	size_t names = 0;
	for (int a = 0; a < na; a++)
		names += strlen(t->arrays[a].name) + 1;
	r->arrays = calloc(1, sizeof *r->arrays * (size_t)(na + 1) + names);
	ct_status st = CT_OK;
	if (!nrefs || !first || !r->arrays)
		st = ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory");
	if (!st)
		st = predict_ref_counts(t, nrefs, first);
	char *name = r->arrays ? (char *)(r->arrays + na + 1) : NULL;
	for (int a = 0; !st && a < na; a++) {
		if (!f->buffer_accesses[a])
			continue;
		ct_model_ref *x = &r->arrays[r->narrays++];
		size_t len = strlen(t->arrays[a].name) + 1;
		memcpy(name, t->arrays[a].name, len);
		x->array = name;
		name += len;
		x->stmt = first[a];
		x->nrefs = nrefs[a];
		x->accesses = f->buffer_accesses[a];
		x->exact = 1;
		for (int l = 0; l < spec->nlevels; l++)
			x->misses[l] = (int64_t)sim_buffer_misses(f->s, l, a);
	}
	free(nrefs);
	free(first);
	return st;
}

ct_status predict_affine(ct_looptree *t, const sim_spec *spec, ct_predict_result *r)
{
	affine_sim f;
	ct_status st = affine_simulate(t, spec, AFFINE_SIM_MAX, "predict", 0, &f);
	if (!st) {
		r->accesses = f.accesses;
		r->nlevels = spec->nlevels;
		for (int l = 0; l < spec->nlevels; l++) {
			r->level[l].size = spec->level[l].size;
			r->level[l].line = spec->level[l].line;
			r->level[l].ways = spec->level[l].ways;
			r->level[l].misses = f.misses[l];
			r->level[l].exact = 1;
			r->source[l] = CT_SOURCE_SIMULATOR;
			r->fallback[l] = CT_FALLBACK_AFFINE;
		}
		st = fill_arrays(t, spec, &f, r);
		r->simulate_seconds = f.seconds;
	}
	affine_sim_free(&f);
	return st;
}
