/* tuner.c: the model-guided tuner: enumerate tunable params, rank by the cache model, measure the best few, store the winner. */
#include "core/json.h"
#include "ir/canon.h"
#include "model/model.h"
#include "model/sim.h"
#include "tune/corecost.h"
#include "engine/engine.h"
#include "engine/targets.h"
#include "tune/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/* 2: the default point is always measured and kept unless the winner is
 * confirmed faster by more than the spread; params carry ";decision=..".
 * 3: measuring goes on until the budget; points are kept (resume). */
#define TUNER_VERSION "3"
/* The fastest few (other than the default) are timed once more at the end. */
#define TUNE_TOP_REMEASURE 3
/* Share of the budget held back for the winner's final reference check. */
#define TUNE_VERIFY_SHARE 0.05
/* Speed of the reference interpreter assumed when sizing that check (flops/s). */
#define TUNE_INTERP_FLOPS 5e7
/* Measured points needed before they re-rank the rest (correct_keys). */
#define TUNE_CORRECT_MIN 3
/* More points than this are refused: ranking each costs a model analysis. */
/* Every point is ranked with the model at this refinement depth (model.h),
 * as the tile search screens; the best few are analysed again in full. */
#define TUNE_SCREEN_DEPTH 3
#define TUNE_FINAL_MIN 16
/* Interleaved re-timings of the winner against the file's default point
 * (tune_decide needs at least TUNE_DECIDE_MIN_ROUNDS of them). */
#define TUNE_CONFIRM_ROUNDS 5
/* A timing lasts at least this long (runs repeated), and at most this many runs. */
#define TUNE_MIN_SECONDS 0.05
#define TUNE_MAX_REPEAT 1000
/* The small verification instance: each size capped to this. */
#define TUNE_VERIFY_CAP 67
/* The winner's final check (verify_winner) is skipped beyond this many flops:
 * the interpreter takes a few seconds for 3e8. */
#define TUNE_VERIFY_MAX_FLOPS 4e8
/* A kernel with affine loop bounds (which the model does not analyse): every
 * point's misses come from the exact simulator when simulating all of them
 * fits in this share of the budget (measured on the default point), else
 * the ranking is by the core cost alone (docs/TUNE.md, "Affine loop bounds"). */
#define TUNE_SIM_SHARE 0.25
/* The simulator's pace assumed to size the default point's trial (optimistic,
 * so that the trial is not cut short of a trace the measured pace allows). */
#define TUNE_SIM_NS 10.0
/* One model analysis outside the ranking (the default point, the final re-ranking, the
 * budget check) may take this share of the budget; the ranking shares half of it among its
 * points. Past that a point's misses are not counted (the core cost ranks it): covariance at
 * PolyBench's LARGE sizes analysed one point for over 10 minutes under a 30 s budget. */
#define TUNE_MODEL_CALL_SHARE 0.05
#define TUNE_MODEL_MIN_WORK 1000000
/* The final re-ranking at full depth shares this part of the budget among its points. */
#define TUNE_MODEL_REFINE_SHARE 0.1
/* tune_model_best (the selector without a record, at run time): simulated
 * points only while all of them make at most this many accesses together. */
#define TUNE_SELECT_SIM_TOTAL ((int64_t)1 << 24)
#define TUNE_SELECT_SIM_SECONDS 0.25 /* and within this time (measured on the first) */
/* The selector's model ranking without a record runs before the kernel, at run time: it may
 * take about this long in all (each point's analysis bounded by its share, the ranking cut
 * when the time is up). When it cannot rank every point in full, the values the file
 * wrote are kept: a mix of counted and uncounted misses would favour the points whose
 * analysis is the costliest (covariance's auto file at LARGE ranked 256 points for minutes). */
#define TUNE_SELECT_MODEL_SECONDS 1.0
/* Latency of one miss served by the next level when the probe has not
 * measured it (ns; typical of current x86 cores): L2, L3, memory. */
static const double default_next_ns[] = {4.0, 12.0, 80.0};
/* Lines in flight between memory and a core (Little's law: latency x
 * bandwidth / line) when the probe could not measure the bandwidth; about
 * 100-160 on the machines measured (docs/TUNE.md). */
#define TUNE_DEFAULT_INFLIGHT 100.0

void ct_tune_options_init(ct_tune_options *o)
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
	if (ir_kernel_ready(k) != CT_OK)
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
	/* pointer chases and a copy of a few hundred ms in all, once per ctx:
	 * the latencies and the bandwidth the weights come from */
	if (ct_probe_run(ctx, CT_PROBE_MEASURE_LATENCY | CT_PROBE_MEASURE_BANDWIDTH, &pi) != CT_OK)
		memset(&pi, 0, sizeof pi);
	/* streams are prefetched: misses overlap, as many as the memory keeps in
	 * flight; a miss then costs its latency over that count (at memory:
	 * the time the bandwidth takes to move its line) */
	double line = pi.ncaches > 0 && pi.caches[pi.ncaches - 1].line > 0 ? (double)pi.caches[pi.ncaches - 1].line : 64;
	double inflight = pi.mem_latency_ns > 0 && pi.copy_gbs_core > 0 ? pi.mem_latency_ns * pi.copy_gbs_core / line
	                                                                 : TUNE_DEFAULT_INFLIGHT;
	if (inflight < 1)
		inflight = 1;
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
		w[l] = ns / inflight;
	}
}

/* The misses per level of tree t (affine loop bounds) from the exact simulator, at most cap
 * accesses (cap 0: none counted, the misses left 0: the core cost alone ranks). */
static ct_status affine_misses(ct_looptree *t, const sim_spec *spec, int64_t cap, int64_t *misses)
{
	if (cap <= 0)
		return CT_OK;
	affine_sim a;
	ct_status st = affine_simulate(t, spec, cap, "the tuner (per point)", 0, &a);
	for (int l = 0; !st && l < spec->nlevels && l < CT_SIM_MAX_LEVELS; l++)
		misses[l] = a.misses[l];
	affine_sim_free(&a);
	return st;
}

/* The tuner's cost of k as it stands (docs/TUNE.md): the larger of the
 * core's issue time (register tiles, vector loads, FMAs) and the memory
 * time (the model's misses per level x weight), which an out-of-order core
 * with prefetchers overlaps. The tree is lowered and analysed here, not
 * through ct_kernel_predict, which also attributes misses to arrays. A
 * kernel with affine loop bounds has its misses simulated instead, up to
 * sim_cap accesses (0: not counted, the core cost alone). work > 0 bounds the analysis
 * (model_analyse_budget's units, about 10 ns each): past it the misses are not counted and
 * the core cost alone ranks the point, as for a trace too long to simulate. */
static ct_status model_cost_over(ct_kernel *k, const sim_spec *spec, const tune_machine *m, const double *w,
                                 int depth, int64_t sim_cap, int64_t work, ct_tune_candidate *c, int *nlevels,
                                 bool *over);

static ct_status model_cost(ct_kernel *k, const sim_spec *spec, const tune_machine *m,
                            const double *w, int depth, int64_t sim_cap, int64_t work, ct_tune_candidate *c,
                            int *nlevels)
{
	return model_cost_over(k, spec, m, w, depth, sim_cap, work, c, nlevels, NULL);
}

/* model_cost, and *over (when not NULL) says whether the analysis passed work, so that the
 * misses were not counted. */
static ct_status model_cost_over(ct_kernel *k, const sim_spec *spec, const tune_machine *m, const double *w,
                                 int depth, int64_t sim_cap, int64_t work, ct_tune_candidate *c, int *nlevels,
                                 bool *over)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(k->ctx);
	tune_core_cost core;
	model_result mr;
	memset(&mr, 0, sizeof mr);
	memset(c->misses, 0, sizeof c->misses);
	ct_status st = tune_core_cycles(t, m, &core);
	if (!st && k->affine_bounds)
		st = affine_misses(t, spec, sim_cap, c->misses);
	else if (!st)
		st = model_analyse_budget(t, spec, depth, work, &mr);
	if (!st) {
		double mem = 0;
		for (int l = 0; l < spec->nlevels && l < CT_SIM_MAX_LEVELS; l++) {
			const sim_level *sl = &spec->level[l];
			if (!k->affine_bounds && !mr.over_budget)
				c->misses[l] = model_misses(model_for_line(&mr, sl->line), sl->size / sl->line, -1, NULL);
			mem += (double)c->misses[l] * w[l];
		}
		*nlevels = spec->nlevels;
		if (over)
			*over = !k->affine_bounds && mr.over_budget;
		c->core_ns = core.ns;
		/* the threads of parallel loops share the misses as they share the work (the
		 * memory's bandwidth, which they also share, is not modelled) */
		c->memory_ns = mem * core.share;
		c->cost = core.ns > c->memory_ns ? core.ns : c->memory_ns;
		model_result_free(&mr);
	}
	ct_looptree_free(t);
	return st;
}

/* ------------------------------------------------------------ search */

typedef struct tuner {
	ct_kernel *k;
	const ct_tune_options *o;
	ct_tune_result *r;
	int ids[64];         /* tunable params */
	int nt;
	double deadline;
	int64_t *values;     /* [ncandidates * nt] */
	sim_spec spec;       /* the levels the model predicts */
	tune_machine m;      /* what the core cost reads of the target */
	double t0;           /* when tuning began */
	double reserve;      /* seconds held back for the end (re-timings, the final check) */
	double reserve_confirm; /* the part of it after remeasure_top (confirmation, final check) */
	double *key;         /* [ncandidates] the model's cost corrected by the measurements */
	ct_store *store;     /* where measured points are kept (NULL: not kept) */
	int64_t sim_cap;     /* affine loop bounds: accesses a point's simulation may make (0: none) */
} tuner;

/* The model's work units (about TUNE_SIM_NS each, model.h) in this share of the budget; at
 * least TUNE_MODEL_MIN_WORK, so that small kernels are always counted. */
static int64_t work_cap(const tuner *t, double share)
{
	double units = share * t->r->budget / (TUNE_SIM_NS * 1e-9);
	return units < (double)TUNE_MODEL_MIN_WORK ? TUNE_MODEL_MIN_WORK : (int64_t)units;
}

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

/* The model's order of two candidates (0: a tie). */
static int cmp_model(const ct_tune_candidate *x, const ct_tune_candidate *y)
{
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	/* the same bound: the one that leaves more slack to the other term */
	double sx = x->core_ns + x->memory_ns, sy = y->core_ns + y->memory_ns;
	return sx < sy ? -1 : sx > sy ? 1 : 0;
}

static int cmp_cost(const void *a, const void *b)
{
	const ct_tune_candidate *x = a, *y = b;
	int m = cmp_model(x, y);
	if (m)
		return m;
	/* ties: the later point of the enumeration first (larger values of the
	 * last params: fewer loop iterations for the same misses) */
	return x->values < y->values ? 1 : x->values > y->values ? -1 : 0;
}

/* The most candidates measure_best measures: every valid one (the budget
 * stops it), or a share of them when opts.fraction is set (benchmarks of
 * the model's pruning). */
static int measure_count(const tuner *t)
{
	const ct_tune_result *r = t->r;
	if (t->o->exhaustive || !(t->o->fraction > 0))
		return r->ncandidates;
	/* floor: the fraction is the most that is measured (5% of 288 is 14, not 15) */
	int want = (int)floor(t->o->fraction * r->ncandidates);
	if (want < 1)
		want = 1;
	return want > r->ncandidates ? r->ncandidates : want;
}

/* Every point was screened at a shallow depth of the model; the ones that
 * may be measured (the first max(TUNE_FINAL_MIN, 2 x the measured count))
 * are analysed again at full depth and re-ordered. Refining the others
 * would change the order of points that are never measured. */
static void refine_best(tuner *t)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	/* the measurements re-rank the rest (correct_keys): the full depth
	 * matters most for the first ones measured */
	int want = 2 * (t->o->fraction > 0 && !t->o->exhaustive ? measure_count(t) : (int)ceil(0.05 * r->ncandidates));
	int n = want > TUNE_FINAL_MIN ? want : TUNE_FINAL_MIN;
	if (n > r->ncandidates)
		n = r->ncandidates;
	if (k->affine_bounds)
		return; /* the simulator's counts (or none) do not depend on the depth */
	int64_t cap = work_cap(t, TUNE_MODEL_REFINE_SHARE / (double)(n > 0 ? n : 1));
	for (int i = 0; i < n; i++) {
		ct_tune_candidate *c = &r->candidates[i];
		int nl = 0;
		if (tune_apply(k, t->ids, c->values, t->nt) != CT_OK ||
		    model_cost(k, &t->spec, &t->m, r->weight_ns, MODEL_REFINE_FULL, 0, cap, c, &nl) != CT_OK)
			ct_ctx_clear_error(k->ctx); /* it keeps its screened cost */
	}
	qsort(r->candidates, (size_t)n, sizeof *r->candidates, cmp_cost);
}

/* Rank every valid point of the space by the model. */
static ct_status rank_all(tuner *t)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	/* one point more: the default, should the ranking stop before it (find_default) */
	t->values = malloc(sizeof *t->values * (size_t)((r->space + 1) * t->nt + 1));
	r->candidates = calloc((size_t)r->space + 1, sizeof *r->candidates);
	if (!t->values || !r->candidates)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	double t0 = ct_now();
	/* each point's analysis within its share of the ranking's half of the budget */
	int64_t rank_cap = work_cap(t, 0.5 / (double)(r->space > 0 ? r->space : 1));
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
		if (tune_apply(k, t->ids, v, t->nt) == CT_OK &&
		    model_cost(k, &t->spec, &t->m, r->weight_ns, TUNE_SCREEN_DEPTH, t->sim_cap, rank_cap, c, &nl) == CT_OK) {
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
	refine_best(t);
	r->model_seconds = ct_now() - t0;
	return CT_OK;
}

/* Set every size param to min(its real size, cap) and re-check k. */
static ct_status cap_sizes(tuner *t, const saved_params *sizes, int64_t cap)
{
	ct_kernel *k = t->k;
	/* through set_param: the params derived from the sizes follow */
	for (int i = 0; i < k->nparams; i++)
		if (tune_is_size_param(k, i) &&
		    ct_kernel_set_param(k, k->params[i].name, sizes->value[i] > cap ? cap : sizes->value[i]) != CT_OK)
			return ct_ctx_last_status(k->ctx);
	return ct_kernel_recheck(k);
}

/* Run k as it stands against the interpreter: 1 right, 0 wrong, -1 could
 * not be built or run (discarded too). */
static int verify_run(tuner *t)
{
	ct_kernel *k = t->k;
	ct_run_options ro;
	ct_run_options_init(&ro);
	ro.threads = t->o->threads;
	ct_run_result rr;
	ct_status st = ct_kernel_run(k, &ro, &rr);
	if (st != CT_OK)
		ct_ctx_clear_error(k->ctx);
	return st == CT_OK ? 1 : st == CT_ERR_VERIFY ? 0 : -1;
}

/* Verify the candidate applied to k on a small instance (every size capped
 * to verify_max), then put the real sizes back: 1 right, 0 wrong, -1 not
 * built. Tiles larger than the cap only run in their partial versions
 * here: verify_winner checks the winner with its full tiles. */
/* The small instance's cap for kernel k: cap, or with loops written with a step (tiles written
 * by hand, `for (t: 0 .. N step T)`: their bounds check needs the tile to divide the range) the
 * least multiple of every step's lcm at or above cap; cap when the lcm passes 4096. */
static int64_t stepped_cap(const ct_kernel *k, int64_t cap)
{
	int64_t l = 1;
	for (int x = 0; x < k->nindices; x++) {
		int64_t s = ir_index_src_step(&k->indices[x]), a = l, b = s;
		while (b) {
			int64_t r = a % b;
			a = b;
			b = r;
		}
		l = l / a * s;
		if (l > 4096)
			return cap;
	}
	return l > 1 ? (cap + l - 1) / l * l : cap;
}

static int verify_small(tuner *t, const saved_params *sizes)
{
	int64_t cap = stepped_cap(t->k, t->o->verify_max > 0 ? t->o->verify_max : TUNE_VERIFY_CAP);
	int res = cap_sizes(t, sizes, cap) == CT_OK ? verify_run(t) : -1;
	if (cap_sizes(t, sizes, INT64_MAX) != CT_OK)
		res = -1;
	ct_ctx_clear_error(t->k->ctx);
	return res;
}

/* The median seconds of one run of k as it stands, at the real sizes: one
 * untimed warm-up run (it loads the code and shows how long a run takes),
 * then enough runs to last TUNE_MIN_SECONDS (at least `least` or, if 0,
 * opts.repeat, 3 by default; at most TUNE_MAX_REPEAT, fewer when they would end after
 * `until`, at least one). A warm-up run longer than `abandon` (> 0) ends it
 * there: *abandoned = 1 and the warm-up's time is returned. *gflops and
 * *abandoned may be NULL; *wall gets what a re-timing costs (all this less
 * compiling and loading). 0 when it does not run. */
static double time_point(tuner *t, int least, double abandon, double until, double *gflops, double *wall,
                         int *abandoned)
{
	ct_kernel *k = t->k;
	ct_run_options ro;
	ct_run_options_init(&ro);
	ro.verify = 0;
	ro.threads = t->o->threads;
	ro.repeat = 1;
	ct_run_result rr;
	ct_status st = ct_kernel_run(k, &ro, &rr);
	/* the first call compiled and loaded the code: what follows is what a
	 * re-timing with the code loaded costs */
	double t1 = ct_now(), first = st == CT_OK ? rr.seconds : 0;
	if (abandoned)
		*abandoned = 0;
	if (st == CT_OK && abandon > 0 && rr.seconds > abandon) {
		if (abandoned)
			*abandoned = 1;
	} else if (st == CT_OK && until > 0 && ct_now() + rr.seconds > until) {
		/* not one more run fits the budget: the warm-up's time stands */
	} else if (st == CT_OK) {
		if (least <= 0)
			least = t->o->repeat > 0 ? t->o->repeat : 3;
		double want = rr.seconds > 0 ? ceil(TUNE_MIN_SECONDS / rr.seconds) : least;
		want = want < least ? least : want > TUNE_MAX_REPEAT ? TUNE_MAX_REPEAT : want;
		/* the budget bounds the timing too */
		double fit = until > 0 && rr.seconds > 0 ? floor((until - ct_now()) / rr.seconds) : want;
		ro.repeat = (int)(fit < want ? (fit < 1 ? 1 : fit) : want);
		st = ct_kernel_run(k, &ro, &rr);
	}
	if (wall)
		*wall = ct_now() - t1 + first;
	if (st != CT_OK) {
		ct_ctx_clear_error(k->ctx);
		return 0;
	}
	if (gflops)
		*gflops = rr.gflops;
	return rr.seconds;
}

/* Whether c can win: timed in full, and verified (when verifying). */
static bool usable(const tuner *t, const ct_tune_candidate *c)
{
	return c->measured && c->seconds > 0 && !c->abandoned && (c->verified == 1 || !t->o->verify);
}

/* Measure candidate c (its values applied): verify, then time, abandoning
 * it after its first run when that is over CT_TUNE_ABANDON x the best so far. */
static void measure_one(tuner *t, ct_tune_candidate *c, const saved_params *sizes, double *wall)
{
	ct_tune_result *r = t->r;
	c->measured = 1;
	r->nmeasured++;
	c->seconds = 0;
	*wall = 0;
	if (t->o->verify) {
		c->verified = verify_small(t, sizes);
		if (c->verified != 1) {
			r->nwrong += c->verified == 0;
			return;
		}
	}
	double abandon = r->best >= 0 ? CT_TUNE_ABANDON * r->candidates[r->best].seconds : 0;
	c->seconds = time_point(t, 0, abandon, t->deadline - t->reserve, &c->gflops, wall, &c->abandoned);
	r->nabandoned += c->abandoned;
	if (!(c->seconds > 0) && t->o->verify)
		c->verified = -1;
}

/* Whether candidate c holds the values the kernel had when tuning began. */
static bool is_default(const tuner *t, const ct_tune_candidate *c, const saved_params *sizes)
{
	for (int p = 0; p < t->nt; p++)
		if (c->values[p] != sizes->value[t->ids[p]])
			return false;
	return true;
}

/* The default point's candidate: found among the ranked ones, else (the
 * ranking stopped at the budget before it) modelled and appended, since it
 * is always measured. -1 when the checks refuse it. */
static int find_default(tuner *t, const saved_params *sizes)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	for (int i = 0; i < r->ncandidates; i++)
		if (is_default(t, &r->candidates[i], sizes))
			return i;
	if (r->ncandidates >= r->space + 1 || !t->values)
		return -1;
	ct_tune_candidate *c = &r->candidates[r->ncandidates];
	memset(c, 0, sizeof *c);
	c->values = t->values + (size_t)r->ncandidates * (size_t)t->nt;
	c->verified = -1;
	for (int p = 0; p < t->nt; p++)
		c->values[p] = sizes->value[t->ids[p]];
	int nl = 0;
	if (tune_apply(k, t->ids, c->values, t->nt) != CT_OK ||
	    model_cost(k, &t->spec, &t->m, r->weight_ns, MODEL_REFINE_FULL, t->sim_cap, work_cap(t, TUNE_MODEL_CALL_SHARE), c, &nl) != CT_OK) {
		ct_ctx_clear_error(k->ctx);
		return -1;
	}
	return r->ncandidates++;
}

/* The winner, when it is not the default, runs against the interpreter once
 * more on an instance where each size is its real one or, if smaller, the
 * winner's largest tile + 1 (so every tile runs whole and with a tail):
 * the small instance of the search may have run only partial tiles. An
 * instance beyond TUNE_VERIFY_MAX_FLOPS, or beyond what the interpreter
 * does in the budget left, is not checked further (the small check stands).
 * Returns 0 when the winner computes a wrong result. */
static int verify_winner(tuner *t, const ct_tune_candidate *c, const saved_params *sizes)
{
	ct_kernel *k = t->k;
	int64_t cap = t->o->verify_max > 0 ? t->o->verify_max : TUNE_VERIFY_CAP;
	for (int p = 0; p < t->nt; p++)
		if (c->values[p] + 1 > cap)
			cap = c->values[p] + 1;
	double left = t->deadline - ct_now(), most = TUNE_VERIFY_MAX_FLOPS;
	if (left * TUNE_INTERP_FLOPS < most)
		most = left > 0 ? left * TUNE_INTERP_FLOPS : 0;
	int ok = 1;
	if (tune_apply(k, t->ids, c->values, t->nt) == CT_OK && cap_sizes(t, sizes, cap) == CT_OK &&
	    ct_kernel_flops(k) <= most) {
		int64_t big = 0;
		for (int i = 0; i < k->nparams; i++)
			if (tune_is_size_param(k, i) && k->params[i].value > big)
				big = k->params[i].value;
		t->r->final_verify_size = big;
		ok = verify_run(t) == 1;
	}
	(void)cap_sizes(t, sizes, INT64_MAX);
	ct_ctx_clear_error(k->ctx);
	return ok;
}

/* A candidate (b) that beat the default point (d) during the search is
 * timed again against it, interleaved (TUNE_CONFIRM_ROUNDS rounds, the
 * order swapped each round so that a drift of the machine's load hits both
 * alike), and replaces it only when tune_decide finds it faster by more
 * than the spread of those rounds: the plan as written is not replaced on
 * the strength of a quieter moment. Rounds stop where the next would end
 * past the deadline (the search held their time back); with fewer than
 * TUNE_DECIDE_MIN_ROUNDS the default stays. */
static void confirm_best(tuner *t, int dflt, const saved_params *sizes)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	ct_tune_candidate *d = &r->candidates[dflt], *b = &r->candidates[r->best];
	double td[TUNE_CONFIRM_ROUNDS], tb[TUNE_CONFIRM_ROUNDS];
	int n = 0;
	r->challenger = r->best;
	double round_s = 0;
	for (; n < TUNE_CONFIRM_ROUNDS; n++) {
		double r0 = ct_now();
		/* the final check's share stays held back */
		if (n > 0 && r0 + round_s > t->deadline - TUNE_VERIFY_SHARE * r->budget)
			break;
		for (int s = 0; s < 2; s++) {
			bool def = (s == 0) == (n % 2 == 0);
			ct_tune_candidate *c = def ? d : b;
			double *out = def ? &td[n] : &tb[n];
			*out = tune_apply(k, t->ids, c->values, t->nt) == CT_OK ? time_point(t, 1, 0, 0, NULL, NULL, NULL) : 0;
			ct_ctx_clear_error(k->ctx);
		}
		round_s = ct_now() - r0;
	}
	tune_verdict v;
	tune_decide(td, tb, n, &v);
	r->confirm_rounds = v.rounds;
	r->confirm_gain = v.gain;
	r->confirm_spread = v.spread;
	/* the medians of the re-timings are the figures that count now */
	if (v.default_s > 0) {
		d->gflops *= d->seconds / v.default_s;
		d->seconds = v.default_s;
	}
	if (v.best_s > 0) {
		b->gflops *= b->seconds / v.best_s;
		b->seconds = v.best_s;
	}
	bool checked = v.keep_default || !t->o->verify || verify_winner(t, b, sizes);
	if (!checked) {
		/* wrong with whole tiles: discarded like any wrong candidate */
		b->verified = 0;
		r->nwrong++;
	}
	if (!v.keep_default && checked) {
		r->decision = CT_TUNE_REPLACED;
	} else {
		r->decision = CT_TUNE_DEFAULT_KEPT;
		r->best = dflt;
	}
}

/* ------------------------------------------------------------ the measurements' correction */

/* Where value v is in param p's candidate list. */
static int value_slot(const ir_param *q, int64_t v)
{
	for (int i = 0; i < q->ntune; i++)
		if (q->tune[i] == v)
			return i;
	return 0;
}

/* Kendall's tau of model cost and measured time over the usable measured
 * candidates: 1 when the model ordered them as they measured, 0 when the
 * order is unrelated, -1 reversed (0 with fewer than 3). */
static double rank_agreement(const tuner *t)
{
	const ct_tune_result *r = t->r;
	int64_t conc = 0, disc = 0;
	int m = 0;
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *x = &r->candidates[i];
		if (!usable(t, x))
			continue;
		m++;
		for (int j = i + 1; j < r->ncandidates; j++) {
			const ct_tune_candidate *y = &r->candidates[j];
			if (!usable(t, y) || x->cost == y->cost || x->seconds == y->seconds)
				continue;
			if ((x->cost < y->cost) == (x->seconds < y->seconds))
				conc++;
			else
				disc++;
		}
	}
	return m < 3 || conc + disc == 0 ? 0 : (double)(conc - disc) / (double)(conc + disc);
}

/* The cheap correction (docs/TUNE.md): the log of measured / modelled time
 * of each measured candidate, less its mean, averaged per value of each
 * tunable param (shrunk towards 0 by n / (n + 1) for n points of that
 * value); an unmeasured candidate's key is its cost times exp(the sum of
 * its values' averages). A candidate whose first run was abandoned counts
 * with that run's time (a lower bound of its median). So where the model
 * underrates, say, a register-tile width, the measurements push every
 * candidate of that width down or up the order. */
static void correct_keys(tuner *t)
{
	ct_tune_result *r = t->r;
	ct_kernel *k = t->k;
	int total = 0, m = 0;
	int off[64];
	for (int p = 0; p < t->nt; p++) {
		off[p] = total;
		total += k->params[t->ids[p]].ntune;
	}
	double g = 0;
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		if (c->measured && c->seconds > 0 && c->cost > 0) {
			g += log(c->seconds * 1e9 / c->cost);
			m++;
		}
	}
	for (int i = 0; i < r->ncandidates; i++)
		t->key[i] = r->candidates[i].cost;
	if (m < TUNE_CORRECT_MIN)
		return;
	g /= m;
	double *sum = calloc((size_t)total + 1, sizeof *sum), *cnt = calloc((size_t)total + 1, sizeof *cnt);
	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return; /* the model's order stands */
	}
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		if (!(c->measured && c->seconds > 0 && c->cost > 0))
			continue;
		double e = log(c->seconds * 1e9 / c->cost) - g;
		for (int p = 0; p < t->nt; p++) {
			int s = off[p] + value_slot(&k->params[t->ids[p]], c->values[p]);
			sum[s] += e;
			cnt[s] += 1;
		}
	}
	double biggest = 0;
	for (int s = 0; s < total; s++) {
		sum[s] = cnt[s] > 0 ? sum[s] / (cnt[s] + 1) : 0; /* mean x n / (n + 1) */
		biggest = fabs(sum[s]) > biggest ? fabs(sum[s]) : biggest;
	}
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		double e = 0;
		for (int p = 0; p < t->nt; p++)
			e += sum[off[p] + value_slot(&k->params[t->ids[p]], c->values[p])];
		t->key[i] = c->cost * exp(e);
	}
	/* a correction of more than 10% on some value changes the order */
	if (biggest > log(1.1))
		r->reranked = 1;
	free(sum);
	free(cnt);
}

/* The next candidate to measure: the default point first, then the
 * unmeasured one of the smallest corrected cost (-1: none left). */
static int next_candidate(const tuner *t, int dflt)
{
	const ct_tune_result *r = t->r;
	if (dflt >= 0 && !r->candidates[dflt].measured)
		return dflt;
	int best = -1;
	for (int i = 0; i < r->ncandidates; i++)
		if (!r->candidates[i].measured && (best < 0 || t->key[i] < t->key[best]))
			best = i;
	return best;
}

/* ------------------------------------------------------------ measuring, resuming */

/* Keep what candidate c measured in the store, so that an interrupted run
 * (Ctrl-C, kill) loses nothing it measured. */
static void keep_point(tuner *t, const ct_tune_candidate *c)
{
	if (!t->store)
		return;
	char params[1024];
	tune_params_text(t->k, t->ids, c->values, t->nt, params, sizeof params);
	tune_point p = {params, c->seconds, c->gflops, c->verified, c->abandoned};
	if (tune_points_put(t->store, t->r->family, t->r->dtype, t->r->size_class, TUNER_VERSION, &p) != CT_OK)
		ct_ctx_clear_error(t->k->ctx);
}

/* A point an earlier run measured: its candidate counts as measured. */
static void resume_point(void *ud, const tune_point *p)
{
	tuner *t = ud;
	ct_tune_result *r = t->r;
	char params[1024];
	for (int i = 0; i < r->ncandidates; i++) {
		ct_tune_candidate *c = &r->candidates[i];
		if (c->measured)
			continue;
		tune_params_text(t->k, t->ids, c->values, t->nt, params, sizeof params);
		if (strcmp(params, p->params) != 0)
			continue;
		c->measured = c->resumed = 1;
		c->seconds = p->seconds;
		c->gflops = p->gflops;
		c->verified = p->verified;
		c->abandoned = p->abandoned;
		r->nmeasured++;
		r->nresumed++;
		r->nwrong += c->verified == 0;
		r->nabandoned += c->abandoned;
		if (usable(t, c) && (r->best < 0 || c->seconds < r->candidates[r->best].seconds))
			r->best = i;
		return;
	}
}

/* The fastest few other than the default, timed once more: each one's time
 * becomes the mean of its two timings, so that one lucky timing does not
 * make a winner. */
static void remeasure_top(tuner *t, int dflt)
{
	ct_tune_result *r = t->r;
	int done[TUNE_TOP_REMEASURE];
	for (int n = 0; n < TUNE_TOP_REMEASURE; n++) {
		int top = -1;
		for (int i = 0; i < r->ncandidates; i++) {
			const ct_tune_candidate *c = &r->candidates[i];
			bool seen = false;
			for (int j = 0; j < n; j++)
				seen |= done[j] == i;
			if (i != dflt && !seen && usable(t, c) && (top < 0 || c->seconds < r->candidates[top].seconds))
				top = i;
		}
		if (top < 0)
			return;
		done[n] = top;
		ct_tune_candidate *c = &r->candidates[top];
		/* its timing again, within what the confirmation leaves */
		double until = t->deadline - t->reserve_confirm;
		if (ct_now() + c->seconds * 2 + TUNE_MIN_SECONDS > until)
			return;
		if (tune_apply(t->k, t->ids, c->values, t->nt) != CT_OK) {
			ct_ctx_clear_error(t->k->ctx);
			continue;
		}
		double g = 0, again = time_point(t, 1, 0, until, &g, NULL, NULL);
		if (again > 0) {
			c->seconds = (c->seconds + again) / 2;
			c->gflops = (c->gflops + g) / 2;
			r->nremeasured++;
		}
	}
}

/* The time the end of the search needs, from one re-timing of the default
 * point (wall: a warm-up and one run, or 50 ms of runs): the confirmation's
 * least rounds (two re-timings each; more rounds run when time is left)
 * and the top few's re-timings, and the final check's share of the budget; into
 * t->reserve (all of it) and t->reserve_confirm (what follows the re-timings). */
static void end_reserve(tuner *t, double wall)
{
	t->reserve_confirm = 2.0 * TUNE_DECIDE_MIN_ROUNDS * wall + TUNE_VERIFY_SHARE * t->r->budget;
	t->reserve = t->reserve_confirm + TUNE_TOP_REMEASURE * wall;
}

/* Measure in the model's order, corrected by the measurements, until the
 * budget (less what the end needs) or the space runs out: the default point
 * first, then the unmeasured candidate of the smallest corrected cost.
 * Then re-time the fastest few, and confirm the fastest against the default. */
static void measure_best(tuner *t, const saved_params *sizes)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	int want = measure_count(t);
	int dflt = t->o->no_default ? -1 : find_default(t, sizes);
	r->default_index = dflt;
	double t0 = ct_now(), typical = 0;
	t->reserve = t->reserve_confirm = TUNE_VERIFY_SHARE * r->budget;
	t->key = malloc(sizeof *t->key * ((size_t)r->ncandidates + 1));
	if (!t->key) {
		ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
		ct_ctx_clear_error(k->ctx);
		return;
	}
	if (t->store && !t->o->no_resume)
		tune_points_each(t->store, r->family, r->dtype, r->size_class, TUNER_VERSION, resume_point, t);
	/* a default measured by an earlier run: its time sizes the end's share */
	if (dflt >= 0 && r->candidates[dflt].resumed && r->candidates[dflt].seconds > 0)
		end_reserve(t, 2 * r->candidates[dflt].seconds + TUNE_MIN_SECONDS);
	correct_keys(t);
	int done = 0, i;
	while (done < want && (i = next_candidate(t, dflt)) >= 0) {
		/* the first candidate is always measured; later ones when one
		 * more (as long as those so far took) fits */
		if (done > 0 && ct_now() + typical + t->reserve > t->deadline) {
			r->budget_hit = 1;
			break;
		}
		ct_tune_candidate *c = &r->candidates[i];
		done++;
		double c0 = ct_now(), wall = 0;
		if (tune_apply(k, t->ids, c->values, t->nt) != CT_OK) {
			ct_ctx_clear_error(k->ctx);
			c->measured = 1; /* refused: not a candidate after all */
			continue;
		}
		measure_one(t, c, sizes, &wall);
		c->at_seconds = ct_now() - t->t0;
		keep_point(t, c);
		double took = ct_now() - c0;
		typical = typical > 0 ? 0.5 * (typical + took) : took;
		/* a re-timing: the warm-up and 50 ms of runs, at least one */
		if (i == dflt && c->seconds > 0)
			end_reserve(t, 2 * c->seconds + TUNE_MIN_SECONDS);
		if (usable(t, c) && (r->best < 0 || c->seconds < r->candidates[r->best].seconds))
			r->best = i;
		correct_keys(t);
		progress(t, "measure", r->nmeasured, r->ncandidates);
		if (t->o->on_measure)
			t->o->on_measure(t->o->progress_ud, r, i, t->deadline - ct_now());
	}
	r->rank_agreement = rank_agreement(t);
	remeasure_top(t, dflt);
	r->best = -1;
	for (int j = 0; j < r->ncandidates; j++)
		if (usable(t, &r->candidates[j]) && (r->best < 0 || r->candidates[j].seconds < r->candidates[r->best].seconds))
			r->best = j;
	const ct_tune_candidate *d = dflt >= 0 ? &r->candidates[dflt] : NULL;
	bool dok = d && usable(t, d);
	if (!dok)
		r->decision = CT_TUNE_NO_DEFAULT;
	else if (r->best == dflt)
		r->decision = CT_TUNE_DEFAULT_FASTEST;
	else
		confirm_best(t, dflt, sizes);
	if (r->best >= 0)
		r->best_found_seconds = r->candidates[r->best].at_seconds;
	free(t->key);
	t->key = NULL;
	r->measure_seconds = ct_now() - t0;
}

const char *ct_tune_memory_name(ct_tune_memory m)
{
	switch (m) {
	case CT_TUNE_MEMORY_MODEL: return "model";
	case CT_TUNE_MEMORY_SIMULATOR: return "simulator";
	case CT_TUNE_MEMORY_NONE: return "none";
	}
	return "?";
}

const char *ct_tune_decision_name(ct_tune_decision d)
{
	switch (d) {
	case CT_TUNE_NO_DEFAULT: return "no-default";
	case CT_TUNE_DEFAULT_FASTEST: return "default";
	case CT_TUNE_DEFAULT_KEPT: return "default-kept";
	case CT_TUNE_REPLACED: return "tuned";
	}
	return "?";
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
	ct_store *s = t->store;
	if (!s)
		return;
	snprintf(r->store_path, sizeof r->store_path, "%s", ct_store_path(s));
	if (!ct_store_writable(s)) { /* "not better than the record" would be untrue */
		r->store_readonly = 1;
		return;
	}
	const ct_tune_candidate *c = &r->candidates[r->best];
	char params[1024];
	tune_params_text(k, t->ids, c->values, t->nt, params, sizeof params);
	/* which way the decision went, after the values (the selector reads up to the ';') */
	size_t len = strlen(params);
	if (r->decision == CT_TUNE_DEFAULT_KEPT || r->decision == CT_TUNE_REPLACED)
		snprintf(params + len, sizeof params - len, ";decision=%s,gain=%.4f,spread=%.4f,rounds=%d",
		         ct_tune_decision_name(r->decision), r->confirm_gain, r->confirm_spread,
		         r->confirm_rounds);
	else
		snprintf(params + len, sizeof params - len, ";decision=%s", ct_tune_decision_name(r->decision));
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
}

/* Refuse up front a budget that cannot time one run: the model's cost of
 * the default point (one core's time) is a run's length. */
static ct_status budget_check(tuner *t)
{
	ct_kernel *k = t->k;
	if (!ir_kernel_target(k)->native_entry)
		return CT_OK; /* the model's cost is one host core's, not a device's */
	ct_tune_candidate c;
	memset(&c, 0, sizeof c);
	int nl = 0;
	if (model_cost(k, &t->spec, &t->m, t->r->weight_ns, TUNE_SCREEN_DEPTH, 0, work_cap(t, TUNE_MODEL_CALL_SHARE), &c, &nl) != CT_OK) {
		ct_ctx_clear_error(k->ctx);
		return CT_OK; /* the ranking says more */
	}
	/* two runs: the warm-up and one timed */
	double run = c.cost * 1e-9;
	if (2 * run <= t->r->budget)
		return CT_OK;
	return ct_error(k->ctx, CT_ERR_LIMIT,
	                "at these sizes one run of '%s' takes about %.3g s by the model (one core); a candidate "
	                "needs two runs (warm-up, timing), more than the budget of %.3g s allows: give a budget "
	                "of at least %.0f s (room for a few candidates)",
	                k->name, run, t->r->budget, ceil(20 * run));
}

/* A kernel with affine loop bounds: whether the ranking can simulate every point, from a
 * trial on the default point (k as it stands) with the accesses a point may make in its share
 * of TUNE_SIM_SHARE of the budget: then t->sim_cap, and r->memory_source says which. */
static void affine_plan(tuner *t)
{
	ct_kernel *k = t->k;
	ct_tune_result *r = t->r;
	if (!k->affine_bounds)
		return;
	double share = TUNE_SIM_SHARE * r->budget / (double)(r->space > 0 ? r->space : 1);
	double most = share / (TUNE_SIM_NS * 1e-9);
	int64_t cap = most >= (double)AFFINE_SIM_MAX ? AFFINE_SIM_MAX : (int64_t)most;
	if (cap < 1)
		return;
	ct_tune_candidate c;
	memset(&c, 0, sizeof c);
	int nl = 0;
	double t0 = ct_now();
	ct_status st = model_cost(k, &t->spec, &t->m, r->weight_ns, 0, cap, 0, &c, &nl);
	double secs = ct_now() - t0;
	ct_ctx_clear_error(k->ctx);
	if (st || secs > share)
		return; /* too long a trace: the core cost alone ranks */
	/* a point's trace may be longer than the default's (copies of caches) */
	t->sim_cap = cap > AFFINE_SIM_MAX / 2 ? AFFINE_SIM_MAX : 2 * cap;
	r->memory_source = CT_TUNE_MEMORY_SIMULATOR;
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
	if (ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
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
	if (st || t->o->check_only)
		return st; /* a check needs no probe (seconds of microbenchmarks) */
	st = t->o->cache_spec ? sim_spec_parse(k->ctx, t->o->cache_spec, &t->spec)
	                      : sim_machine_spec(k->ctx, &t->spec);
	if (st)
		return st;
	tune_weights(k->ctx, t->spec.nlevels, r->weight_ns);
	tune_machine_init(k->ctx, &t->m);
	if (t->o->threads > 0) /* the threads the candidates are measured on */
		t->m.threads = t->o->threads;
	r->nlevels = t->spec.nlevels;
	return CT_OK;
}

ct_status ct_tune(ct_kernel *k, const ct_tune_options *opts, ct_tune_result *r)
{
	if (!k || !r)
		return CT_ERR_USAGE;
	memset(r, 0, sizeof *r);
	r->best = -1;
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	r->default_index = -1;
	r->challenger = -1;
	/* affine loop bounds: no model; affine_plan says whether the simulator counts */
	r->memory_source = k->affine_bounds ? CT_TUNE_MEMORY_NONE : CT_TUNE_MEMORY_MODEL;
	ct_tune_options dflt;
	ct_tune_options_init(&dflt);
	tuner t;
	memset(&t, 0, sizeof t);
	t.k = k;
	t.o = opts ? opts : &dflt;
	t.r = r;
	double t0 = ct_now();
	t.t0 = t0;
	r->budget = t.o->budget > 0 ? t.o->budget : 60;
	t.deadline = t0 + r->budget;
	saved_params saved;
	memset(&saved, 0, sizeof saved);
	ct_status st = tune_setup(&t);
	if (!st)
		st = save_params(k, &saved);
	/* refusals come before any work: arrays too large to run, a budget
	 * shorter than one run */
	if (!st)
		st = run_check_size(k);
	/* a device's kernel is timed on the device: without one, say so now
	 * rather than after every candidate failed */
	if (!st && !t.o->check_only && eng_kernel_target(k)->ready)
		st = eng_kernel_target(k)->ready(k->ctx);
	if (!st && !t.o->check_only)
		st = budget_check(&t);
	if (!st && !t.o->check_only)
		affine_plan(&t);
	if (!st && !t.o->check_only) {
		if (!t.o->no_store)
			t.store = ct_store_open(k->ctx, t.o->store_dir, 0);
		st = rank_all(&t);
	}
	if (!st && !t.o->check_only)
		measure_best(&t, &saved);
	/* putting the params back re-checks k, which clears the ctx's error */
	char why[512] = "";
	if (st && saved.value)
		snprintf(why, sizeof why, "%s", ct_ctx_last_message(k->ctx));
	restore_params(k, &saved);
	if (why[0])
		ct_error(k->ctx, st, "%s", why);
	if (!st && r->best >= 0 && !t.o->no_store)
		store_best(&t);
	ct_store_close(t.store);
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

static void put_values(ct_buf *b, const ct_tune_result *r, const ct_tune_candidate *c)
{
	for (int i = 0; i < r->nparams; i++)
		ct_buf_printf(b, "%s%s=%lld", i ? " " : "", r->params[i], (long long)c->values[i]);
}

/* A candidate's params as a JSON object, name: value. */
static json_t *json_values(const ct_tune_result *r, const ct_tune_candidate *c, bool *ok)
{
	json_t *o = json_object();
	for (int i = 0; i < r->nparams; i++)
		ct_json_set(o, r->params[i], json_integer((json_int_t)c->values[i]), ok);
	return o;
}

/* "best": the winner's params, rank, time, speed; null when none. */
static json_t *json_best(const ct_tune_result *r, bool *ok)
{
	if (r->best < 0)
		return json_null();
	const ct_tune_candidate *c = &r->candidates[r->best];
	json_t *o = json_object();
	ct_json_set(o, "params", json_values(r, c, ok), ok);
	ct_json_set(o, "rank", json_integer(r->best), ok);
	ct_json_set(o, "seconds", ct_json_real(c->seconds, 9), ok);
	ct_json_set(o, "gflops", ct_json_real(c->gflops, 6), ok);
	ct_json_set(o, "verified", ct_json_tristate(c->verified), ok);
	return o;
}

/* "confirm": the default against its challenger. */
static json_t *json_confirm(const ct_tune_result *r, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "challenger", json_integer(r->challenger), ok);
	ct_json_set(o, "rounds", json_integer(r->confirm_rounds), ok);
	ct_json_set(o, "gain", ct_json_real(r->confirm_gain, 6), ok);
	ct_json_set(o, "spread", ct_json_real(r->confirm_spread, 6), ok);
	return o;
}

/* "candidates": every measured one, by model rank. */
static json_t *json_candidates(const ct_tune_result *r, bool *ok)
{
	json_t *a = json_array();
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		if (!c->measured)
			continue;
		json_t *o = json_object();
		ct_json_set(o, "rank", json_integer(i), ok);
		ct_json_set(o, "params", json_values(r, c, ok), ok);
		ct_json_set(o, "cost_ns", ct_json_real(c->cost, 6), ok);
		ct_json_set(o, "core_ns", ct_json_real(c->core_ns, 6), ok);
		ct_json_set(o, "memory_ns", ct_json_real(c->memory_ns, 6), ok);
		ct_json_set(o, "seconds", ct_json_real(c->seconds, 9), ok);
		ct_json_set(o, "verified", ct_json_tristate(c->verified), ok);
		ct_json_set(o, "abandoned", json_boolean(c->abandoned), ok);
		ct_json_set(o, "resumed", json_boolean(c->resumed), ok);
		ct_json_set(o, "at_seconds", ct_json_real(c->at_seconds, 4), ok);
		ct_json_push(a, o, ok);
	}
	return a;
}

/* The result as CLI.md's `tune --json` object, one line. */
static char *print_json(const ct_tune_result *r)
{
	bool ok = true;
	json_t *o = json_object(), *weights = json_array();
	ct_json_set(o, "family", json_string(r->family), &ok);
	ct_json_set(o, "size_class", json_string(r->size_class), &ok);
	ct_json_set(o, "dtype", json_string(ct_dtype_name(r->dtype)), &ok);
	ct_json_set(o, "space", json_integer((json_int_t)r->space), &ok);
	ct_json_set(o, "valid", json_integer(r->ncandidates), &ok);
	ct_json_set(o, "measured", json_integer(r->nmeasured), &ok);
	ct_json_set(o, "wrong", json_integer(r->nwrong), &ok);
	ct_json_set(o, "budget_hit", json_boolean(r->budget_hit), &ok);
	for (int l = 0; l < r->nlevels; l++)
		ct_json_push(weights, ct_json_real(r->weight_ns[l], 3), &ok);
	ct_json_set(o, "weights_ns", weights, &ok);
	ct_json_set(o, "memory_source", json_string(ct_tune_memory_name(r->memory_source)), &ok);
	ct_json_set(o, "best", json_best(r, &ok), &ok);
	ct_json_set(o, "decision", json_string(ct_tune_decision_name(r->decision)), &ok);
	ct_json_set(o, "default_rank", json_integer(r->default_index), &ok);
	ct_json_set(o, "confirm", json_confirm(r, &ok), &ok);
	ct_json_set(o, "final_verify_size", json_integer((json_int_t)r->final_verify_size), &ok);
	ct_json_set(o, "stored", json_boolean(r->stored), &ok);
	ct_json_set(o, "store", ct_json_text(r->store_path), &ok);
	ct_json_set(o, "store_writable", json_boolean(!r->store_readonly), &ok);
	ct_json_set(o, "candidates", json_candidates(r, &ok), &ok);
	ct_json_set(o, "model_seconds", ct_json_real(r->model_seconds, 6), &ok);
	ct_json_set(o, "measure_seconds", ct_json_real(r->measure_seconds, 6), &ok);
	ct_json_set(o, "seconds", ct_json_real(r->seconds, 6), &ok);
	ct_json_set(o, "budget", ct_json_real(r->budget, 6), &ok);
	ct_json_set(o, "budget_used", ct_json_fixed(r->budget > 0 ? r->seconds / r->budget : 0.0, 4), &ok);
	ct_json_set(o, "abandoned", json_integer(r->nabandoned), &ok);
	ct_json_set(o, "resumed", json_integer(r->nresumed), &ok);
	ct_json_set(o, "remeasured", json_integer(r->nremeasured), &ok);
	ct_json_set(o, "rank_agreement", ct_json_fixed(r->rank_agreement, 4), &ok);
	ct_json_set(o, "reranked", json_boolean(r->reranked), &ok);
	ct_json_set(o, "best_found_seconds", ct_json_real(r->best_found_seconds, 6), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return ct_json_line(o);
}

/* One line on how the winner was chosen. */
static const char *decision_text(const ct_tune_result *r, char *out, size_t n)
{
	switch (r->decision) {
	case CT_TUNE_DEFAULT_FASTEST:
		snprintf(out, n, "the default point (rank %d), no candidate was faster", r->default_index);
		break;
	case CT_TUNE_DEFAULT_KEPT:
	case CT_TUNE_REPLACED:
		snprintf(out, n, "%s: rank %d against the default (rank %d) over %d interleaved rounds, "
		         "%+.1f%% faster, spread %.1f%%",
		         r->decision == CT_TUNE_REPLACED ? "tuned" : "default kept", r->challenger,
		         r->default_index, r->confirm_rounds, 100 * r->confirm_gain, 100 * r->confirm_spread);
		break;
	default:
		snprintf(out, n, "the fastest candidate (the default point was not measured)");
	}
	return out;
}

static void print_text(ct_buf *b, const ct_tune_result *r)
{
	char why[256];
	ct_buf_printf(b, "family %s, %s, %s\n", r->family, ct_dtype_name(r->dtype), r->size_class);
	ct_buf_printf(b, "space %lld points, %d valid, ranked by the model in %.3f s; measured %d (%.1f%%)"
	                 "%s in %.3f s\n",
	              (long long)r->space, r->ncandidates, r->model_seconds, r->nmeasured,
	              r->ncandidates ? 100.0 * r->nmeasured / r->ncandidates : 0.0,
	              r->budget_hit ? ", budget reached" : "", r->measure_seconds);
	if (r->memory_source == CT_TUNE_MEMORY_SIMULATOR)
		ct_buf_printf(b, "loops with affine bounds, which the model does not analyse yet: each point's misses "
		                 "counted by the exact simulator (%.3g s a point)\n",
		              r->ncandidates ? r->model_seconds / r->ncandidates : 0.0);
	else if (r->memory_source == CT_TUNE_MEMORY_NONE)
		ct_buf_puts(b, "loops with affine bounds, which the model does not analyse yet, and a trace too long to "
		               "simulate every point in a quarter of the budget: ranked by the core cost alone\n");
	ct_buf_printf(b, "budget %.3g s, used %.3g s (%.0f%%)", r->budget, r->seconds,
	              r->budget > 0 ? 100 * r->seconds / r->budget : 0.0);
	if (r->nresumed)
		ct_buf_printf(b, "; %d point%s resumed from an earlier run", r->nresumed, r->nresumed == 1 ? "" : "s");
	if (r->nabandoned)
		ct_buf_printf(b, "; %d abandoned after a first run over %.0fx the best", r->nabandoned, CT_TUNE_ABANDON);
	if (r->nremeasured)
		ct_buf_printf(b, "; the fastest %d timed again", r->nremeasured);
	ct_buf_puts(b, "\n");
	if (r->seconds > 1.05 * r->budget && r->default_index >= 0 && r->candidates[r->default_index].at_seconds > 0.5 * r->budget)
		ct_buf_printf(b, "over budget: the default point, always measured (compiled, checked, timed), was done only "
		                 "after %.3g s\n", r->candidates[r->default_index].at_seconds);
	if (r->nmeasured - r->nwrong >= 3)
		ct_buf_printf(b, "model vs measured order: Kendall tau %.2f%s%s\n", r->rank_agreement,
		              r->rank_agreement < 0.5 ? " (the model's order disagrees with the measurements)" : "",
		              r->reranked ? "; the unmeasured were re-ranked by measured/model time per param value" : "");
	ct_buf_puts(b, "  rank  params                          model cost (ns)     seconds  verified\n");
	for (int i = 0; i < r->ncandidates; i++) {
		const ct_tune_candidate *c = &r->candidates[i];
		if (!c->measured)
			continue;
		ct_buf vb;
		ct_buf_init(&vb);
		put_values(&vb, r, c);
		ct_buf_printf(b, "%s %4d  %-30s  %15.4g  %10.4g  %s%s%s\n", i == r->best ? "*" : " ", i,
		              vb.s ? vb.s : "", c->cost, c->seconds,
		              c->verified == 1 ? "yes" : c->verified == 0 ? "WRONG" : "-",
		              c->abandoned ? "  abandoned (first run)" : "", c->resumed ? "  (earlier run)" : "");
		ct_buf_free(&vb);
	}
	if (r->best < 0)
		ct_buf_puts(b, "no candidate was measured and verified: nothing stored\n");
	else
		ct_buf_printf(b, "decision: %s\n", decision_text(r, why, sizeof why));
	if (r->best >= 0)
		ct_buf_printf(b, "best: rank %d, %.4g GFLOP/s, found after %.3g s; %s %s\n", r->best,
		              r->candidates[r->best].gflops, r->best_found_seconds,
		              r->stored ? "stored in"
		              : r->store_readonly ? "not stored: the store is read-only:"
		                                  : "not better than the record in",
		              r->store_path[0] ? r->store_path : "(no store)");
}

ct_status ct_tune_print(const ct_tune_result *r, ct_format format, FILE *out)
{
	if (!r || !out)
		return CT_ERR_USAGE;
	if (format == CT_FORMAT_JSON) {
		char *line = print_json(r);
		ct_status st = !line ? CT_ERR_NOMEM : fputs(line, out) < 0 ? CT_ERR_IO : CT_OK;
		free(line);
		return st;
	}
	ct_buf b;
	ct_buf_init(&b);
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
	tune_machine m;
	tune_machine_init(k->ctx, &m);
	int64_t v[64], v0[64];
	int64_t step = space > max_evals ? (space + max_evals - 1) / max_evals : 1;
	int64_t points = (space + step - 1) / step;
	/* affine loop bounds: simulated while every point together stays short (probed on the
	 * first; a longer trace ranks by the core cost alone) */
	int64_t cap = k->affine_bounds ? TUNE_SELECT_SIM_TOTAL / (points > 0 ? points : 1) : 0;
	if (cap > 0) {
		point_values(k, ids, nt, 0, v0);
		ct_tune_candidate c;
		memset(&c, 0, sizeof c);
		int nl = 0;
		double t0 = ct_now();
		if (tune_apply(k, ids, v0, nt) != CT_OK || model_cost(k, &spec, &m, w, 0, cap, 0, &c, &nl) != CT_OK ||
		    (ct_now() - t0) * (double)points > TUNE_SELECT_SIM_SECONDS)
			cap = 0;
		ct_ctx_clear_error(k->ctx);
	}
	int64_t written[64];
	for (int i = 0; i < nt; i++)
		written[i] = k->params[ids[i]].value;
	double units = TUNE_SELECT_MODEL_SECONDS / (double)(points > 0 ? points : 1) / (TUNE_SIM_NS * 1e-9);
	int64_t work = units < (double)TUNE_MODEL_MIN_WORK ? TUNE_MODEL_MIN_WORK : (int64_t)units;
	double start = ct_now();
	bool partial = false;
	ct_tune_candidate top;
	memset(&top, 0, sizeof top);
	bool found = false;
	for (int64_t p = 0; p < space && !partial; p += step) {
		point_values(k, ids, nt, p, v);
		ct_tune_candidate c;
		memset(&c, 0, sizeof c);
		int nl = 0;
		bool over = false;
		if (tune_apply(k, ids, v, nt) != CT_OK ||
		    model_cost_over(k, &spec, &m, w, MODEL_REFINE_FULL, cap, work, &c, &nl, &over) != CT_OK)
			continue;
		partial = over || ct_now() - start > TUNE_SELECT_MODEL_SECONDS;
		/* the tuner's order; ties: the later point */
		if (!found || cmp_model(&c, &top) <= 0) {
			top = c;
			found = true;
			memcpy(best, v, sizeof *v * (size_t)nt);
		}
	}
	ct_ctx_clear_error(k->ctx);
	if (partial && tune_apply(k, ids, written, nt) == CT_OK) {
		memcpy(best, written, sizeof *best * (size_t)nt);
		return CT_OK;
	}
	ct_ctx_clear_error(k->ctx);
	if (!found)
		return ct_error(k->ctx, CT_ERR_INPUT, "no candidate of kernel '%s' passes the checks", k->name);
	return tune_apply(k, ids, best, nt);
}
