/* tuner.c: the model-guided tuner: enumerate tunable params, rank by the cache model, measure the best few, store the winner. */
#include "ir/canon.h"
#include "model/sim.h"
#include "tune/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#define TUNER_VERSION "1"
/* More points than this are refused: ranking each costs a model analysis. */
#define TUNE_MAX_SPACE 1000000
/* Latency of one miss served by the next level when the probe has not
 * measured it (ns; typical of current x86 cores): L2, L3, memory. */
static const double default_next_ns[] = {4.0, 12.0, 80.0};

void ct_tune_opts_init(ct_tune_opts *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof *o);
	o->verify = 1;
}

/* ------------------------------------------------------------ keys */

bool tune_is_size_param(const ct_kernel *k, int i)
{
	const ir_param *p = &k->params[i];
	if (p->ntune > 0)
		return false;
	return p->runtime ? p->has_value : p->def == NULL;
}

ct_dtype tune_kernel_dtype(const ct_kernel *k)
{
	for (int i = 0; i < k->narrays; i++)
		if (k->arrays[i].role == CT_OUTPUT || k->arrays[i].role == CT_INOUT)
			return k->arrays[i].type;
	return k->narrays ? k->arrays[0].type : CT_F32;
}

/* Every value that follows from params (param values, split sizes, index
 * steps and windows), saved and zeroed so that canon sees none of them. */
static size_t value_slots(const ct_kernel *k)
{
	size_t n = (size_t)k->nparams + 4 * (size_t)k->nindices;
	for (int s = 0; s < k->nsched; s++)
		n += k->sched[s].size ? (size_t)k->sched[s].n : 0;
	return n;
}

/* Swap k's values with w->v (zeros first, then the saved ones back). */
static void swap_values(ct_kernel *k, int64_t *w)
{
	size_t j = 0;
	int64_t t;
#define SWAP(x) (t = (x), (x) = w[j], w[j++] = t)
	for (int i = 0; i < k->nparams; i++)
		SWAP(k->params[i].value);
	for (int i = 0; i < k->nindices; i++) {
		SWAP(k->indices[i].step);
		SWAP(k->indices[i].window);
		/* a split index runs over its window: constant bounds that follow the tile */
		if (k->indices[i].kind == IX_SPLIT) {
			SWAP(k->indices[i].lo.c);
			SWAP(k->indices[i].hi.c);
		}
	}
	for (int s = 0; s < k->nsched; s++)
		for (int i = 0; k->sched[s].size && i < k->sched[s].n; i++)
			SWAP(k->sched[s].size[i]);
#undef SWAP
}

ct_status tune_family(ct_kernel *k, char *out, size_t n)
{
	/* the canonical bytes with every size and tile left out (restored right
	 * after; canon only reads) */
	int64_t *w = calloc(value_slots(k) + 1, sizeof *w);
	if (!w)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	swap_values(k, w);
	size_t len = 0;
	char *c = canon_kernel(k, "host", &len);
	swap_values(k, w);
	free(w);
	if (!c)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	snprintf(out, n, "%.60s-%016llx", k->name, (unsigned long long)XXH3_64bits(c, len));
	free(c);
	return CT_OK;
}

void tune_size_class(const ct_kernel *k, const int64_t *sizes, char *out, size_t n)
{
	size_t len = 0;
	int j = 0;
	out[0] = 0;
	for (int i = 0; i < k->nparams && len < n; i++) {
		if (!tune_is_size_param(k, i))
			continue;
		int64_t v = sizes ? sizes[j] : k->params[i].value;
		j++;
		int w = snprintf(out + len, n - len, "%s%s=%lld", len ? ":" : "", k->params[i].name,
		                 (long long)v);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

ct_status ct_kernel_tune_key(ct_kernel *k, char *family, size_t nfamily, char *size_class,
                             size_t nclass, ct_dtype *dtype)
{
	if (!k)
		return CT_ERR_USAGE;
	if (family && nfamily) {
		ct_status st = tune_family(k, family, nfamily);
		if (st)
			return st;
	}
	if (size_class && nclass)
		tune_size_class(k, NULL, size_class, nclass);
	if (dtype)
		*dtype = tune_kernel_dtype(k);
	return CT_OK;
}

/* ------------------------------------------------------------ params */

/* What tuning changes, to put back at the end. */
typedef struct saved_params {
	int n;
	int64_t *value;
	bool *overridden;
} saved_params;

static ct_status save_params(ct_kernel *k, saved_params *s)
{
	s->n = k->nparams;
	s->value = ct_alloc(k->ctx, sizeof *s->value * ((size_t)s->n + 1));
	s->overridden = ct_alloc(k->ctx, sizeof *s->overridden * ((size_t)s->n + 1));
	if (!s->value || !s->overridden)
		return CT_ERR_NOMEM;
	for (int i = 0; i < s->n; i++) {
		s->value[i] = k->params[i].value;
		s->overridden[i] = k->params[i].overridden;
	}
	return CT_OK;
}

static void restore_params(ct_kernel *k, saved_params *s)
{
	if (s->value && s->overridden) {
		for (int i = 0; i < s->n; i++) {
			k->params[i].value = s->value[i];
			k->params[i].overridden = s->overridden[i];
		}
		/* derived values and split sizes follow again */
		(void)ct_kernel_recheck(k);
	}
	ct_free(k->ctx, s->value);
	ct_free(k->ctx, s->overridden);
	s->value = NULL;
	s->overridden = NULL;
}

ct_status tune_apply(ct_kernel *k, const int *ids, const int64_t *values, int n)
{
	for (int i = 0; i < n; i++) {
		ct_status st = ct_kernel_set_param(k, k->params[ids[i]].name, values[i]);
		if (st)
			return st;
	}
	return ct_kernel_recheck(k);
}

/* ------------------------------------------------------------ the model's cost */

void tune_weights(ct_ctx *ctx, int nlevels, double *w)
{
	ct_probe_info pi;
	memset(&pi, 0, sizeof pi);
	/* pointer chases of a few ms: the latencies the weights come from */
	if (ct_probe_run(ctx, CT_PROBE_MEASURE_LATENCY, &pi) != CT_OK)
		memset(&pi, 0, sizeof pi);
	for (int l = 0; l < nlevels; l++) {
		double ns = 0;
		if (l + 1 < nlevels && l + 1 < pi.ncaches)
			ns = pi.caches[l + 1].latency_ns;
		else if (l + 1 == nlevels)
			ns = pi.mem_latency_ns;
		if (!(ns > 0)) {
			int d = l + 1 == nlevels ? 2 : (l < 2 ? l : 1);
			ns = default_next_ns[d];
		}
		w[l] = ns;
	}
}

/* The model's cost of k as it stands: sum over levels of misses x weight. */
static ct_status model_cost(ct_kernel *k, const char *spec, const double *w, ct_tune_candidate *c,
                            int *nlevels)
{
	ct_predict_result pr;
	ct_status st = ct_kernel_predict(k, spec, &pr);
	if (st)
		return st;
	double cost = 0;
	for (int l = 0; l < pr.nlevels && l < CT_SIM_MAX_LEVELS; l++) {
		c->misses[l] = pr.level[l].misses;
		cost += (double)pr.level[l].misses * w[l];
	}
	*nlevels = pr.nlevels;
	c->cost = cost;
	ct_predict_result_free(&pr);
	return CT_OK;
}

/* ------------------------------------------------------------ search */

typedef struct tuner {
	ct_kernel *k;
	const ct_tune_opts *o;
	ct_tune_result *r;
	int ids[64];         /* tunable params */
	int nt;
	double deadline;
	int64_t *values;     /* [ncandidates * nt] */
} tuner;

static void progress(const tuner *t, const char *phase, int done, int total)
{
	if (t->o->progress)
		t->o->progress(t->o->progress_ud, phase, done, total);
}

/* Point number p of the space as values (mixed radix, the first param slowest). */
static void point_values(const ct_kernel *k, const int *ids, int nt, int64_t p, int64_t *out)
{
	for (int i = nt - 1; i >= 0; i--) {
		const ir_param *q = &k->params[ids[i]];
		out[i] = q->tune[p % q->ntune];
		p /= q->ntune;
	}
}

static int cmp_cost(const void *a, const void *b)
{
	const ct_tune_candidate *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	/* ties: the later point of the enumeration first (larger values of the
	 * last params: fewer loop iterations for the same misses) */
	return x->values < y->values ? 1 : x->values > y->values ? -1 : 0;
}

/* Rank every valid point of the space by the model. */
static ct_status rank_all(tuner *t)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	t->values = malloc(sizeof *t->values * (size_t)(r->space * t->nt + 1));
	r->candidates = calloc((size_t)r->space + 1, sizeof *r->candidates);
	if (!t->values || !r->candidates)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	double t0 = ct_now();
	for (int64_t p = 0; p < r->space; p++) {
		/* ranking may take at most half of the budget: measuring needs the rest */
		if (ct_now() > t0 + 0.5 * (t->deadline - t0) && r->ncandidates > 0) {
			r->budget_hit = 1;
			break;
		}
		int64_t *v = t->values + (size_t)r->ncandidates * (size_t)t->nt;
		point_values(k, t->ids, t->nt, p, v);
		ct_tune_candidate *c = &r->candidates[r->ncandidates];
		c->values = v;
		c->verified = -1;
		int nl = 0;
		if (tune_apply(k, t->ids, v, t->nt) == CT_OK && model_cost(k, t->o->cache_spec, r->weight_ns, c, &nl) == CT_OK) {
			r->ncandidates++;
			if (nl > r->nlevels)
				r->nlevels = nl;
		}
		progress(t, "model", (int)p + 1, (int)r->space);
	}
	ct_ctx_clear_error(k->ctx);
	if (r->ncandidates == 0) {
		/* nothing points into the block: free it here (result_free frees it otherwise) */
		free(t->values);
		t->values = NULL;
	}
	qsort(r->candidates, (size_t)r->ncandidates, sizeof *r->candidates, cmp_cost);
	r->model_seconds = ct_now() - t0;
	return CT_OK;
}

/* Compile and run the candidate on a small instance against the interpreter:
 * 1 right, 0 wrong, -1 could not be built (discarded too). */
static int verify_small(tuner *t)
{
	ct_kernel *k = t->k;
	int64_t cap = t->o->verify_max > 0 ? t->o->verify_max : 67;
	for (int i = 0; i < k->nparams; i++)
		if (tune_is_size_param(k, i) && k->params[i].value > cap)
			ct_kernel_set_param(k, k->params[i].name, cap);
	int res = -1;
	if (ct_kernel_recheck(k) == CT_OK) {
		ct_run_options ro;
		ct_run_options_init(&ro);
		ro.threads = t->o->threads;
		ct_run_result rr;
		ct_status st = ct_kernel_run(k, &ro, &rr);
		res = st == CT_OK ? 1 : st == CT_ERR_VERIFY ? 0 : -1;
	}
	return res;
}

/* Measure candidate c (its values applied): verify, then time. */
static void measure_one(tuner *t, ct_tune_candidate *c, const saved_params *sizes)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	c->measured = 1;
	r->nmeasured++;
	if (t->o->verify) {
		c->verified = verify_small(t);
		/* back to the real sizes */
		for (int i = 0; i < k->nparams; i++)
			if (tune_is_size_param(k, i))
				k->params[i].value = sizes->value[i];
		if (ct_kernel_recheck(k) != CT_OK || c->verified != 1) {
			r->nwrong += c->verified == 0;
			c->seconds = 0;
			ct_ctx_clear_error(k->ctx);
			return;
		}
	}
	ct_run_options ro;
	ct_run_options_init(&ro);
	ro.verify = 0;
	ro.repeat = t->o->repeat > 0 ? t->o->repeat : 3;
	ro.threads = t->o->threads;
	ct_run_result rr;
	ct_status st = ct_kernel_run(k, &ro, &rr);
	/* short kernels: enough runs for about 20 ms in all, so the median is not noise */
	if (st == CT_OK && t->o->repeat <= 0 && rr.seconds > 0 && rr.seconds * ro.repeat < 0.02) {
		double want = 0.02 / rr.seconds;
		ro.repeat = want > 200 ? 200 : (int)want;
		st = ct_kernel_run(k, &ro, &rr);
	}
	/* the best of three such medians: on a shared machine noise only adds time */
	double best = rr.seconds;
	for (int round = 1; round < 3 && st == CT_OK; round++) {
		ct_run_result r2;
		st = ct_kernel_run(k, &ro, &r2);
		if (st == CT_OK && r2.seconds < best) {
			best = r2.seconds;
			rr.gflops = r2.gflops;
		}
	}
	rr.seconds = best;
	if (st == CT_OK) {
		c->seconds = rr.seconds;
		c->gflops = rr.gflops;
	} else {
		c->verified = t->o->verify ? -1 : c->verified;
		c->seconds = 0;
		ct_ctx_clear_error(k->ctx);
	}
}

/* Measure the best-ranked candidates, within the budget. */
static void measure_best(tuner *t, const saved_params *sizes)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	double frac = t->o->fraction > 0 ? t->o->fraction : 0.05;
	int want = t->o->exhaustive ? r->ncandidates : (int)ceil(frac * r->ncandidates);
	if (want < 1)
		want = 1;
	if (want > r->ncandidates)
		want = r->ncandidates;
	/* the file's default point (the plan as written) is measured first, as
	 * the baseline, within the same count: tuning never returns a slower one */
	int dflt = -1;
	for (int i = 0; i < r->ncandidates && !t->o->exhaustive && !t->o->no_default; i++) {
		bool same = true;
		for (int p = 0; p < t->nt; p++)
			same &= r->candidates[i].values[p] == sizes->value[t->ids[p]];
		if (same) {
			dflt = i;
			break;
		}
	}
	double t0 = ct_now();
	int done = 0;
	for (int j = dflt >= 0 ? -1 : 0; j < r->ncandidates && done < want; j++) {
		int i = j < 0 ? dflt : j;
		if (j >= 0 && j == dflt)
			continue;
		/* the first candidate is always measured; later ones only in time */
		if (done > 0 && ct_now() > t->deadline) {
			r->budget_hit = 1;
			break;
		}
		ct_tune_candidate *c = &r->candidates[i];
		done++;
		if (tune_apply(k, t->ids, c->values, t->nt) != CT_OK) {
			ct_ctx_clear_error(k->ctx);
			continue;
		}
		measure_one(t, c, sizes);
		progress(t, "measure", done, want);
		bool ok = c->seconds > 0 && (c->verified == 1 || !t->o->verify);
		if (ok && (r->best < 0 || c->seconds < r->candidates[r->best].seconds))
			r->best = i;
	}
	r->measure_seconds = ct_now() - t0;
}

/* "TI=64:TJ=128", the store's params text. */
void tune_params_text(const ct_kernel *k, const int *ids, const int64_t *v, int n, char *out,
                      size_t cap)
{
	size_t len = 0;
	out[0] = 0;
	for (int i = 0; i < n && len < cap; i++) {
		int w = snprintf(out + len, cap - len, "%s%s=%lld", i ? ":" : "", k->params[ids[i]].name,
		                 (long long)v[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

static void store_best(tuner *t)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	ct_store *s = ct_store_open(k->ctx, t->o->store_dir, 0);
	if (!s)
		return;
	snprintf(r->store_path, sizeof r->store_path, "%s", ct_store_path(s));
	const ct_tune_candidate *c = &r->candidates[r->best];
	char params[1024];
	tune_params_text(k, t->ids, c->values, t->nt, params, sizeof params);
	ct_tune_record rec;
	memset(&rec, 0, sizeof rec);
	rec.family = r->family;
	rec.dtype = r->dtype;
	rec.size_class = r->size_class;
	rec.params = params;
	rec.seconds = c->seconds;
	rec.gflops = c->gflops;
	rec.verified = c->verified;
	rec.tuner_version = TUNER_VERSION;
	int stored = 0;
	if (ct_store_put(s, &rec, &stored) == CT_OK)
		r->stored = stored;
	else
		ct_ctx_clear_error(k->ctx);
	ct_store_close(s);
}

static ct_status tune_setup(tuner *t)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	for (int i = 0; i < k->nparams; i++) {
		if (k->params[i].ntune == 0)
			continue;
		if (t->nt == 64)
			return ct_error(k->ctx, CT_ERR_LIMIT, "more than 64 tunable params");
		t->ids[t->nt++] = i;
	}
	if (t->nt == 0)
		return ct_error_at(k->ctx, CT_ERR_INPUT, k->file ? k->file : "", k->name_pos.line,
		                   k->name_pos.col, "kernel '%s' has no tunable param (param T = 64 tune {..})",
		                   k->name);
	if (!ir_params_complete(k))
		for (int i = 0; i < k->nparams; i++)
			if (!k->params[i].has_value)
				return ct_error(k->ctx, CT_ERR_USAGE, "runtime param '%s' needs a value (-D %s=VALUE)",
				                k->params[i].name, k->params[i].name);
	r->space = 1;
	for (int i = 0; i < t->nt; i++) {
		r->space *= k->params[t->ids[i]].ntune;
		if (r->space > TUNE_MAX_SPACE)
			return ct_error(k->ctx, CT_ERR_LIMIT, "the tuning space has more than %d points",
			                TUNE_MAX_SPACE);
	}
	r->nparams = t->nt;
	r->params = calloc((unsigned)t->nt + 1u, sizeof *r->params);
	if (!r->params)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	for (int i = 0; i < t->nt; i++)
		r->params[i] = k->params[t->ids[i]].name;
	ct_status st = ct_kernel_tune_key(k, r->family, sizeof r->family, r->size_class,
	                                  sizeof r->size_class, &r->dtype);
	if (st)
		return st;
	sim_spec spec;
	st = t->o->cache_spec ? sim_spec_parse(k->ctx, t->o->cache_spec, &spec)
	                      : sim_machine_spec(k->ctx, &spec);
	if (st)
		return st;
	tune_weights(k->ctx, spec.nlevels, r->weight_ns);
	r->nlevels = spec.nlevels;
	return CT_OK;
}

ct_status ct_tune(ct_kernel *k, const ct_tune_opts *opts, ct_tune_result *r)
{
	if (!k || !r)
		return CT_ERR_USAGE;
	memset(r, 0, sizeof *r);
	r->best = -1;
	ct_tune_opts dflt;
	ct_tune_opts_init(&dflt);
	tuner t;
	memset(&t, 0, sizeof t);
	t.k = k;
	t.o = opts ? opts : &dflt;
	t.r = r;
	double t0 = ct_now();
	t.deadline = t0 + (t.o->budget > 0 ? t.o->budget : 60);
	saved_params saved;
	memset(&saved, 0, sizeof saved);
	ct_status st = tune_setup(&t);
	if (!st)
		st = save_params(k, &saved);
	if (!st)
		st = rank_all(&t);
	if (!st)
		measure_best(&t, &saved);
	restore_params(k, &saved);
	if (!st && r->best >= 0 && !t.o->no_store)
		store_best(&t);
	if (!r->ncandidates)
		free(t.values);
	r->seconds = ct_now() - t0;
	if (st)
		ct_tune_result_free(r);
	return st;
}

void ct_tune_result_free(ct_tune_result *r)
{
	if (!r)
		return;
	if (r->candidates && r->ncandidates > 0) {
		/* every candidate's values live in one block, starting at the lowest */
		int64_t *lo = r->candidates[0].values;
		for (int i = 1; i < r->ncandidates; i++)
			if (r->candidates[i].values < lo)
				lo = r->candidates[i].values;
		free(lo);
	}
	free(r->candidates);
	free(r->params);
	r->candidates = NULL;
	r->params = NULL;
	r->ncandidates = 0;
}

/* ------------------------------------------------------------ printing */

static void put_values(ct_buf *b, const ct_tune_result *r, const ct_tune_candidate *c, bool json)
{
	for (int i = 0; i < r->nparams; i++)
		ct_buf_printf(b, json ? "%s\"%s\": %lld" : "%s%s=%lld", i ? (json ? ", " : " ") : "",
		              r->params[i], (long long)c->values[i]);
}

static void print_json(ct_buf *b, const ct_tune_result *r)
{
	ct_buf_puts(b, "{\"family\": ");
	ct_buf_json_str(b, r->family);
	ct_buf_puts(b, ", \"size_class\": ");
	ct_buf_json_str(b, r->size_class);
	ct_buf_printf(b, ", \"dtype\": \"%s\", \"space\": %lld, \"valid\": %d, \"measured\": %d, "
	                 "\"wrong\": %d, \"budget_hit\": %s, \"weights_ns\": [",
	              ct_dtype_name(r->dtype), (long long)r->space, r->ncandidates, r->nmeasured,
	              r->nwrong, r->budget_hit ? "true" : "false");
	for (int l = 0; l < r->nlevels; l++)
		ct_buf_printf(b, "%s%.3g", l ? ", " : "", r->weight_ns[l]);
	ct_buf_puts(b, "], \"best\": ");
	if (r->best >= 0) {
		const ct_tune_candidate *c = &r->candidates[r->best];
		ct_buf_puts(b, "{\"params\": {");
		put_values(b, r, c, true);
		ct_buf_printf(b, "}, \"rank\": %d, \"seconds\": %.9g, \"gflops\": %.6g, \"verified\": %s}",
		              r->best, c->seconds, c->gflops,
		              c->verified == 1 ? "true" : c->verified == 0 ? "false" : "null");
	} else {
		ct_buf_puts(b, "null");
	}
	ct_buf_printf(b, ", \"stored\": %s, \"store\": ", r->stored ? "true" : "false");
	ct_buf_json_str(b, r->store_path);
	ct_buf_puts(b, ", \"candidates\": [");
	bool first = true;
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		if (!c->measured)
			continue;
		ct_buf_printf(b, "%s{\"rank\": %d, \"params\": {", first ? "" : ", ", i);
		put_values(b, r, c, true);
		ct_buf_printf(b, "}, \"cost_ns\": %.6g, \"seconds\": %.9g, \"verified\": %s}", c->cost,
		              c->seconds, c->verified == 1 ? "true" : c->verified == 0 ? "false" : "null");
		first = false;
	}
	ct_buf_printf(b, "], \"model_seconds\": %.6g, \"measure_seconds\": %.6g, \"seconds\": %.6g}\n",
	              r->model_seconds, r->measure_seconds, r->seconds);
}

static void print_text(ct_buf *b, const ct_tune_result *r)
{
	ct_buf_printf(b, "family %s, %s, %s\n", r->family, ct_dtype_name(r->dtype), r->size_class);
	ct_buf_printf(b, "space %lld points, %d valid, ranked by the model in %.3f s; measured %d (%.1f%%)"
	                 "%s in %.3f s\n",
	              (long long)r->space, r->ncandidates, r->model_seconds, r->nmeasured,
	              r->ncandidates ? 100.0 * r->nmeasured / r->ncandidates : 0.0,
	              r->budget_hit ? ", budget reached" : "", r->measure_seconds);
	ct_buf_puts(b, "  rank  params                          model cost (ns)     seconds  verified\n");
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		if (!c->measured)
			continue;
		ct_buf vb;
		ct_buf_init(&vb);
		put_values(&vb, r, c, false);
		ct_buf_printf(b, "%s %4d  %-30s  %15.4g  %10.4g  %s\n", i == r->best ? "*" : " ", i,
		              vb.s ? vb.s : "", c->cost, c->seconds,
		              c->verified == 1 ? "yes" : c->verified == 0 ? "WRONG" : "-");
		ct_buf_free(&vb);
	}
	if (r->best < 0)
		ct_buf_puts(b, "no candidate was measured and verified: nothing stored\n");
	else
		ct_buf_printf(b, "best: rank %d, %.4g GFLOP/s; %s %s\n", r->best,
		              r->candidates[r->best].gflops, r->stored ? "stored in" : "not better than the record in",
		              r->store_path[0] ? r->store_path : "(no store)");
}

ct_status ct_tune_print(const ct_tune_result *r, int json, FILE *out)
{
	if (!r || !out)
		return CT_ERR_USAGE;
	ct_buf b;
	ct_buf_init(&b);
	if (json)
		print_json(&b, r);
	else
		print_text(&b, r);
	ct_status st = b.failed ? CT_ERR_NOMEM : CT_OK;
	if (!st && b.s && fputs(b.s, out) < 0)
		st = CT_ERR_IO;
	ct_buf_free(&b);
	return st;
}

ct_status tune_model_best(ct_kernel *k, const int *ids, int nt, int max_evals, int64_t *best)
{
	int64_t space = 1;
	for (int i = 0; i < nt; i++)
		space *= k->params[ids[i]].ntune;
	double w[CT_SIM_MAX_LEVELS];
	sim_spec spec;
	ct_status st = sim_machine_spec(k->ctx, &spec);
	if (st)
		return st;
	tune_weights(k->ctx, spec.nlevels, w);
	int64_t step = space > max_evals ? (space + max_evals - 1) / max_evals : 1;
	double best_cost = -1;
	int64_t v[64];
	for (int64_t p = 0; p < space; p += step) {
		point_values(k, ids, nt, p, v);
		ct_tune_candidate c;
		memset(&c, 0, sizeof c);
		int nl = 0;
		if (tune_apply(k, ids, v, nt) != CT_OK || model_cost(k, NULL, w, &c, &nl) != CT_OK)
			continue;
		/* ties: the later point, as the tuner ranks */
		if (best_cost < 0 || c.cost <= best_cost) {
			best_cost = c.cost;
			memcpy(best, v, sizeof *v * (size_t)nt);
		}
	}
	ct_ctx_clear_error(k->ctx);
	if (best_cost < 0)
		return ct_error(k->ctx, CT_ERR_INPUT, "no candidate of kernel '%s' passes the checks", k->name);
	return tune_apply(k, ids, best, nt);
}
