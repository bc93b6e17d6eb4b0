/* predict.c: cachet predict: the analytical model's misses of a kernel, per level and per array. */
#include "interp/interp.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

void ct_predict_result_free(ct_predict_result *r)
{
	if (!r)
		return;
	free(r->arrays);
	r->arrays = NULL;
	r->narrays = 0;
}

/* Count the references of the kernel to each storage (cache buffers have none) and the
 * first statement of each. */
ct_status predict_ref_counts(ct_looptree *t, int *nrefs, int *first)
{
	interp_ref *refs = NULL;
	int n = 0;
	ct_status st = interp_refs(t, &refs, &n);
	if (st)
		return st;
	for (int i = 0; i < n; i++) {
		int a = refs[i].array;
		if (a < 0 || a >= t->narrays)
			continue;
		/* a read and the write of one op= element are one reference to the user */
		if (!(refs[i].is_write && i > 0 && !refs[i - 1].is_write && refs[i - 1].node == refs[i].node &&
		      refs[i - 1].array == a && refs[i].node->kind == ND_STMT && refs[i].node->op != AS_SET &&
		      refs[i].pos == refs[i - 1].pos + 1))
			nrefs[a]++;
		if (refs[i].stmt > 0 && (first[a] == 0 || refs[i].stmt < first[a]))
			first[a] = refs[i].stmt;
	}
	ct_free(t->k->ctx, refs);
	return CT_OK;
}

/* How predict counts each level of the spec. */
typedef enum level_way {
	LW_MODEL,     /* fully associative: the model */
	LW_FITS,      /* set-associative, but every set holds all the lines that map to it: no
	               * line is ever evicted, so the level misses what a fully associative one of
	               * its size does (each distinct line once): the model */
	LW_WARP,      /* set-associative: warp_count (exact) */
	LW_COLD,      /* set-associative LRU that provably misses only first touches (cold_certify):
	               * the model's cold misses, when exact */
	LW_CONFLICT   /* set-associative, warp_count could not: the simulator, or the estimate */
} level_way;

/* The capacity (lines) at which level l's count is read from the model: its own, or for a
 * level that only misses first touches one that holds every line (every reuse a hit). */
static int64_t level_lines(const sim_level *sl, level_way way)
{
	return way == LW_COLD ? INT64_MAX : sl->size / sl->line;
}

/* Fill r from the partitions of m for the levels of spec. */
static ct_status fill_result(ct_looptree *t, const sim_spec *spec, const model_result *m,
                             const level_way *way, ct_predict_result *r)
{
	ct_ctx *ctx = t->k->ctx;
	int na = t->narrays;
	int *nrefs = calloc((size_t)na + 1, sizeof *nrefs), *first = calloc((size_t)na + 1, sizeof *first);
	size_t names = 0;
	for (int a = 0; a < na; a++)
		names += strlen(t->arrays[a].name) + 1;
	/* the names live after the entries, in the same block */
	r->arrays = calloc(1, sizeof *r->arrays * (size_t)(na + 1) + names);
	ct_status st = CT_OK;
	if (!nrefs || !first || !r->arrays) {
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((st = predict_ref_counts(t, nrefs, first)))
		goto out;
	r->accesses = m->accesses;
	r->nlevels = spec->nlevels;
	bool all_exact = true;
	for (int a = 0; a < na; a++)
		if (m->array_accesses[a] && !m->array_exact[a])
			all_exact = false;
	for (int l = 0; l < spec->nlevels; l++) {
		const sim_level *sl = &spec->level[l];
		const model_lines *ml = model_for_line(m, sl->line);
		bool exact = all_exact && (way[l] == LW_MODEL || way[l] == LW_FITS || way[l] == LW_COLD);
		r->level[l].size = sl->size;
		r->level[l].line = sl->line;
		r->level[l].ways = sl->ways;
		r->level[l].misses = model_misses(ml, level_lines(sl, way[l]), -1, &exact);
		r->level[l].exact = exact;
	}
	char *name = (char *)(r->arrays + na + 1);
	for (int a = 0; a < na; a++) {
		if (!m->array_accesses[a])
			continue;
		ct_model_ref *x = &r->arrays[r->narrays++];
		size_t len = strlen(t->arrays[a].name) + 1;
		memcpy(name, t->arrays[a].name, len);
		x->array = name;
		name += len;
		x->stmt = first[a];
		x->nrefs = nrefs[a];
		x->accesses = m->array_accesses[a];
		bool exact = m->array_exact[a];
		for (int l = 0; l < spec->nlevels; l++) {
			const sim_level *sl = &spec->level[l];
			x->misses[l] = model_misses(model_for_line(m, sl->line), level_lines(sl, way[l]), a, &exact);
		}
		x->exact = exact;
	}
out:
	free(nrefs);
	free(first);
	return st;
}

static ct_status feed_sim(void *ud, const interp_access *acc, int n)
{
	sim *s = ud;
	for (int i = 0; i < n; i++)
		sim_access(s, acc[i].buffer, acc[i].offset, acc[i].is_write);
	return CT_OK;
}

/* True for a set-associative level with more than one set, or a tree-PLRU one of more than 2
 * ways (the stack distances alone do not decide it: choose_ways says how it is counted). */
static bool conflict_level(const sim_level *l)
{
	return sim_level_conflicts(l);
}

/* Which levels of r to simulate, and why (a ct_fallback_reason per level, 0: keep the model's
 * count): set-associative levels warp_count could not count, when the trace has at most
 * CT_PREDICT_SIM_MAX accesses (longer: the model's fully associative estimate); fully
 * associative levels, and those that never evict, the model could not
 * decide exactly, or every level when the model went over its work budget, when the trace has
 * at most CT_PREDICT_FA_SIM_MAX accesses. True when some level is to be simulated. */
static bool plan_fallback(const sim_spec *spec, const model_result *m, const level_way *way,
                          ct_predict_result *r, int *why)
{
	bool any = false;
	for (int l = 0; l < spec->nlevels; l++) {
		why[l] = CT_FALLBACK_NONE;
		if (way[l] == LW_WARP)
			continue;
		if (way[l] == LW_CONFLICT) {
			r->source[l] = CT_SOURCE_FA_ESTIMATE;
			if (m->accesses <= CT_PREDICT_SIM_MAX)
				why[l] = CT_FALLBACK_SET_ASSOC;
		} else if (m->over_budget) {
			why[l] = CT_FALLBACK_BUDGET;
		} else if (!r->level[l].exact && m->accesses <= CT_PREDICT_FA_SIM_MAX) {
			why[l] = CT_FALLBACK_INEXACT;
		}
		any = any || why[l] != CT_FALLBACK_NONE;
	}
	return any;
}

/* Simulate the kernel exactly and take the counts of the levels plan_fallback chose (totals and
 * per-array counts) from the simulator; r->source and r->fallback say which. */
static ct_status sim_fallback(ct_looptree *t, const sim_spec *spec, const model_result *m,
                              const level_way *way, ct_predict_result *r)
{
	int why[SIM_MAX_LEVELS];
	if (!plan_fallback(spec, m, way, r, why))
		return CT_OK;
	ct_ctx *ctx = t->k->ctx;
	int nbuf = t->narrays;
	sim_buffer *buf = NULL;
	sim *s = NULL;
	double t0 = ct_now();
	ct_status st = sim_tree_buffers(t, &buf);
	/* the buffers keep the layout of the whole spec: its largest line aligns them */
	if (!st && !(s = sim_new(ctx, spec, buf, nbuf, 0)))
		st = ct_ctx_last_status(ctx);
	if (!st)
		st = interp_trace_batch(t, feed_sim, s);
	uint64_t misses[SIM_MAX_LEVELS];
	if (!st)
		st = sim_result(s, misses, NULL, NULL);
	if (st)
		goto out;
	for (int l = 0; l < spec->nlevels; l++) {
		if (why[l] == CT_FALLBACK_NONE)
			continue;
		r->level[l].misses = (int64_t)misses[l];
		r->level[l].exact = 1;
		r->source[l] = CT_SOURCE_SIMULATOR;
		r->fallback[l] = why[l];
		/* the entries of r->arrays are the storages with accesses, in order */
		int e = 0;
		for (int a = 0; a < nbuf && e < r->narrays; a++)
			if (m->array_accesses[a])
				r->arrays[e++].misses[l] = (int64_t)sim_buffer_misses(s, l, a);
	}
out:
	r->simulate_seconds = ct_now() - t0;
	sim_free(s);
	free(buf);
	return st;
}

/* The model's work budget (model_result.work; a unit is about 3 to 10 ns of model time on the
 * bench's machine: 5 to 8 ms) for kernels short enough to simulate: past it the analysis stops
 * and the simulator counts (bench_model --random: most kernels need far less; the rest took
 * up to seconds). */
#define PREDICT_WORK_BUDGET ((int64_t)1500000)

/* The most work (about 5 ns a unit: accesses simulated, states compared) warp_count may spend
 * on one set-associative level before predict falls back to the simulator or the estimate. */
#define PREDICT_WARP_BUDGET ((int64_t)1 << 24)

/* predict_quick's cap (about 1 ms a level): a caller that predicts many candidates (the
 * automatic scheduler: up to ~100 per kernel within its 2 s) keeps the exact count where
 * warping is cheap and takes the estimate (or the simulator) elsewhere. */
#define PREDICT_QUICK_WARP_BUDGET ((int64_t)1 << 18)

/* predict_quick's cap on the accesses of a kernel with affine bounds, which only the simulator
 * counts (about 900 instructions an access over three levels: a quarter of a second at the cap):
 * auto asks for the whole file's count for its comment, and PolyBench's atax at LARGE, its
 * passes jammed in blocks of rows (affine bounds), spent 7.1 G of its 7.9 G instructions
 * simulating 8 M accesses for it. */
#define PREDICT_QUICK_AFFINE_ACCESSES ((int64_t)1 << 20)

/* True when every set of level l can hold every line of every storage that maps to it (sim.h's
 * layout, buffers buf): then no line is ever evicted. */
static bool level_fits(const sim_level *l, const sim_buffer *buf, const int64_t *base, int nbuf)
{
	int64_t sets = sim_level_sets(l), per_set = 0;
	for (int a = 0; a < nbuf; a++) {
		int64_t span = buf[a].elem_size * buf[a].count;
		if (span <= 0)
			continue;
		int64_t lines = (base[a] + span - 1) / l->line - base[a] / l->line + 1;
		per_set += (lines + sets - 1) / sets;
	}
	return per_set <= l->ways;
}

/* How predict counts each level (way[l]), warp_count's counts in *w for the LW_WARP ones. */
static ct_status choose_ways(ct_looptree *t, const sim_spec *spec, int64_t warp_budget, level_way *way,
                             warp_result *w)
{
	ct_ctx *ctx = t->k->ctx;
	memset(w, 0, sizeof *w);
	sim_buffer *buf = NULL;
	int nbuf = t->narrays;
	int64_t *base = calloc((size_t)nbuf + 1, sizeof *base);
	ct_status st = base ? sim_tree_buffers(t, &buf) : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st && sim_layout(ctx, buf, nbuf, sim_spec_max_line(spec), base) < 0)
		st = ct_ctx_last_status(ctx);
	bool want[SIM_MAX_LEVELS], any = false;
	for (int l = 0; l < spec->nlevels && !st; l++) {
		const sim_level *sl = &spec->level[l];
		way[l] = !conflict_level(sl) ? LW_MODEL : level_fits(sl, buf, base, nbuf) ? LW_FITS : LW_CONFLICT;
		want[l] = way[l] == LW_CONFLICT;
		any = any || want[l];
	}
	if (!st && any)
		st = warp_count(t, spec, want, warp_budget, w);
	for (int l = 0; l < spec->nlevels && !st; l++) {
		if (want[l] && w->done[l])
			way[l] = LW_WARP;
		want[l] = want[l] && !w->done[l];
	}
	/* an LRU level warping could not count, proved to miss only first touches: the model's
	 * cold count (tried after warping, so that it only replaces the estimate or the
	 * simulator) */
	bool cold[SIM_MAX_LEVELS];
	if (!st && any)
		st = cold_certify(t, spec, want, cold);
	for (int l = 0; l < spec->nlevels && !st && any; l++)
		if (want[l] && cold[l])
			way[l] = LW_COLD;
	free(base);
	free(buf);
	return st;
}

/* A level that never evicts, where the model's count is not exact: warp_count instead (into
 * way and w, whose counts of the other levels stay). */
static ct_status retry_fits(ct_looptree *t, const sim_spec *spec, int64_t warp_budget,
                            const ct_predict_result *r, level_way *way, warp_result *w)
{
	bool want[SIM_MAX_LEVELS] = {false}, any = false;
	for (int l = 0; l < spec->nlevels; l++) {
		want[l] = way[l] == LW_FITS && !r->level[l].exact;
		any = any || want[l];
	}
	if (!any)
		return CT_OK;
	warp_result v;
	ct_status st = warp_count(t, spec, want, warp_budget, &v);
	if (st)
		return st;
	if (!w->array_misses) {
		/* w holds no level yet: take v whole */
		*w = v;
		memset(&v, 0, sizeof v);
	}
	for (int l = 0; l < spec->nlevels; l++) {
		if (!want[l] || !v.done[l])
			continue;
		w->done[l] = true;
		w->misses[l] = v.misses[l];
		for (int a = 0; a < v.narrays; a++)
			w->array_misses[l * v.narrays + a] = v.array_misses[l * v.narrays + a];
	}
	for (int l = 0; l < spec->nlevels; l++)
		if (want[l] && w->done[l])
			way[l] = LW_WARP;
	warp_result_free(&v);
	return CT_OK;
}

/* A level proved to miss only first touches whose cold count the model does not have exactly
 * (per storage too) is counted as a conflicting one instead (simulated when short, else the
 * estimate). */
static void settle_cold(const sim_spec *spec, const model_result *m, level_way *way)
{
	for (int l = 0; l < spec->nlevels; l++) {
		if (way[l] != LW_COLD)
			continue;
		const model_lines *ml = model_for_line(m, spec->level[l].line);
		bool exact = ml != NULL && !m->over_budget;
		model_misses(ml, INT64_MAX, -1, &exact);
		for (int a = 0; a < m->narrays && exact; a++) {
			if (!m->array_accesses[a])
				continue;
			exact = m->array_exact[a];
			model_misses(ml, INT64_MAX, a, &exact);
		}
		if (!exact)
			way[l] = LW_CONFLICT;
	}
}

/* Take the LW_WARP levels' counts (totals and per storage) from w. */
static void apply_warp(const model_result *m, const level_way *way, const warp_result *w, int nlevels,
                       ct_predict_result *r)
{
	for (int l = 0; l < nlevels; l++) {
		if (way[l] != LW_WARP)
			continue;
		r->level[l].misses = w->misses[l];
		r->level[l].exact = 1;
		r->source[l] = CT_SOURCE_MODEL;
		r->fallback[l] = CT_FALLBACK_NONE;
		/* the entries of r->arrays are the storages with accesses, in order */
		int e = 0;
		for (int a = 0; a < w->narrays && e < r->narrays; a++)
			if (m->array_accesses[a])
				r->arrays[e++].misses[l] = w->array_misses[l * w->narrays + a];
	}
}

/* An array's counts are exact when each level's is: simulated, warped, or decided exactly by
 * the model (never the fully associative estimate). */
static void arrays_exact(const sim_spec *spec, const model_result *m, const level_way *way,
                         ct_predict_result *r)
{
	int e = 0;
	for (int a = 0; a < m->narrays && e < r->narrays; a++) {
		if (!m->array_accesses[a])
			continue;
		bool exact = true;
		for (int l = 0; l < spec->nlevels && exact; l++) {
			const sim_level *sl = &spec->level[l];
			if (way[l] == LW_WARP || r->source[l] == CT_SOURCE_SIMULATOR)
				continue;
			if (r->source[l] == CT_SOURCE_FA_ESTIMATE) {
				exact = false;
				continue;
			}
			exact = m->array_exact[a];
			model_misses(model_for_line(m, sl->line), level_lines(sl, way[l]), a, &exact);
		}
		r->arrays[e++].exact = exact;
	}
}

/* The model's work budget for the estimate of an affine kernel (model_result.work, about 3 to 10
 * ns a unit: a few seconds): a kernel whose analysis passes it gets no estimate. */
#define PREDICT_AFFINE_WORK_BUDGET ((int64_t)1 << 31)

/* The model's estimate for tree t with affine loop bounds (model_tree.c, "affine loops"): every
 * level counted as fully associative from the model's partitions (kept in *m, which the caller
 * frees; --per-ref shares them out), not exact, source CT_SOURCE_AFFINE_ESTIMATE; CT_ERR_LIMIT
 * when the analysis passes PREDICT_AFFINE_WORK_BUDGET (*m then empty). */
static ct_status predict_affine_estimate(ct_looptree *t, const sim_spec *spec, int64_t accesses,
                                         model_result *mp, ct_predict_result *r)
{
	model_result m;
	double t0 = ct_now();
	ct_status st = model_analyse_budget(t, spec, MODEL_REFINE_FULL, PREDICT_AFFINE_WORK_BUDGET, &m);
	if (!st && m.over_budget)
		st = ct_error(t->k->ctx, CT_ERR_LIMIT,
		              "the trace has %lld accesses, too many to simulate within predict (more than %lld), "
		              "and the cache model's estimate for loops with affine bounds went over its work "
		              "budget: use `cachet simulate`, or smaller sizes",
		              (long long)accesses, (long long)AFFINE_SIM_MAX);
	level_way way[SIM_MAX_LEVELS];
	for (int l = 0; l < spec->nlevels; l++)
		way[l] = LW_MODEL;
	if (!st)
		st = fill_result(t, spec, &m, way, r);
	r->seconds = ct_now() - t0;
	for (int l = 0; !st && l < spec->nlevels; l++) {
		r->level[l].exact = 0;
		r->source[l] = CT_SOURCE_AFFINE_ESTIMATE;
	}
	for (int a = 0; !st && a < r->narrays; a++)
		r->arrays[a].exact = 0;
	if (st)
		model_result_free(&m);
	else
		*mp = m;
	return st;
}

/* predict_core for a kernel with affine loop bounds, which the model does not analyse exactly: the
 * simulator's counts when the trace has at most AFFINE_SIM_MAX accesses (*m left empty), else
 * (not `quick`: its callers take no estimate) the model's estimate (its partitions in *m); tree t
 * kept in *tp. The model's tree counts the accesses first, so a trace far past the limit is not
 * simulated in part for nothing. */
static ct_status predict_affine_done(ct_kernel *k, const sim_spec *spec, ct_looptree *t, bool quick,
                                     ct_looptree **tp, model_result *m, ct_predict_result *r)
{
	int64_t n = model_tree_accesses(t);
	ct_status st;
	if (quick && n > PREDICT_QUICK_AFFINE_ACCESSES)
		st = ct_error(k->ctx, CT_ERR_LIMIT,
		              "the trace has %lld accesses, more than a quick prediction simulates (%lld)", (long long)n,
		              (long long)PREDICT_QUICK_AFFINE_ACCESSES);
	else if (n > 2 * AFFINE_SIM_MAX)
		st = ct_error(k->ctx, CT_ERR_LIMIT,
		              "the cache model does not analyse loops with affine bounds exactly (issue #31), and "
		              "the trace has %lld accesses, too many to simulate within predict (more than %lld)",
		              (long long)n, (long long)AFFINE_SIM_MAX);
	else
		st = predict_affine(t, spec, r);
	if (st == CT_ERR_LIMIT && n >= 0 && !quick) {
		/* the estimate replaces the simulator's refusal */
		ct_predict_result_free(r);
		memset(r, 0, sizeof *r);
		ct_ctx_clear_error(k->ctx);
		st = predict_affine_estimate(t, spec, n, m, r);
	}
	if (st) {
		ct_predict_result_free(r);
		ct_looptree_free(t);
		return st;
	}
	*tp = t;
	return CT_OK;
}

/* predict_run's work; with `budget`, the model stops after PREDICT_WORK_BUDGET and a kernel short
 * enough is simulated instead (a longer one is analysed whole, however long that takes, or with
 * `quick` refused: CT_ERR_LIMIT; quick also caps warp_count at PREDICT_QUICK_WARP_BUDGET), and levels the simulator or warp_count will count anyway are not
 * analysed. */
static ct_status predict_core(ct_kernel *k, const char *spec_text, sim_spec *spec, ct_looptree **tp,
                              model_result *m, ct_predict_result *r, bool budget, bool quick)
{
	int64_t warp_budget = quick ? PREDICT_QUICK_WARP_BUDGET : PREDICT_WARP_BUDGET;
	ct_ctx *ctx = k->ctx;
	memset(r, 0, sizeof *r);
	memset(m, 0, sizeof *m);
	*tp = NULL;
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	if (ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
	ct_status st = spec_text ? sim_spec_parse(ctx, spec_text, spec) : sim_machine_spec(ctx, spec);
	if (st)
		return st;
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(ctx);
	if (k->affine_bounds) /* the simulator (predict_affine.c), or past its limit the estimate */
		return predict_affine_done(k, spec, t, quick, tp, m, r);
	double t0 = ct_now();
	level_way way[SIM_MAX_LEVELS];
	warp_result w;
	st = choose_ways(t, spec, warp_budget, way, &w);
	/* no level the model counts (set-associative levels that warp_count or the simulator count):
	 * the analysis would be unused */
	bool none_model = spec->nlevels > 0, all_warp = spec->nlevels > 0;
	for (int l = 0; l < spec->nlevels; l++) {
		none_model = none_model && (way[l] == LW_WARP || way[l] == LW_CONFLICT);
		all_warp = all_warp && way[l] == LW_WARP;
	}
	/* a budget of 1 stops the analysis at once (its partitions would be unused); 0 is no
	 * budget */
	int64_t work = budget ? (none_model ? 1 : PREDICT_WORK_BUDGET) : 0;
	if (!st)
		st = model_analyse_budget(t, spec, MODEL_REFINE_FULL, work, m);
	int64_t sim_max = none_model ? CT_PREDICT_SIM_MAX : CT_PREDICT_FA_SIM_MAX;
	if (!st && m->over_budget && m->accesses > sim_max && !all_warp) {
		/* too long to simulate: the whole analysis, however long it takes, unless the caller
		 * (predict_quick) asked for a bounded time */
		long long accesses = (long long)m->accesses;
		model_result_free(m);
		if (quick)
			st = ct_error(ctx, CT_ERR_LIMIT,
			              "the model went over its work budget and the trace (%lld accesses) is too long to "
			              "simulate",
			              accesses);
		else
			st = model_analyse(t, spec, m);
	}
	double secs = ct_now() - t0;
	if (!st)
		settle_cold(spec, m, way);
	if (!st)
		st = fill_result(t, spec, m, way, r);
	double t1 = ct_now();
	if (!st)
		st = retry_fits(t, spec, warp_budget, r, way, &w);
	r->seconds = secs + (ct_now() - t1);
	if (!st) {
		apply_warp(m, way, &w, spec->nlevels, r);
		st = sim_fallback(t, spec, m, way, r);
	}
	if (!st)
		arrays_exact(spec, m, way, r);
	warp_result_free(&w);
	if (st) {
		model_result_free(m);
		ct_predict_result_free(r);
		ct_looptree_free(t);
		return st;
	}
	*tp = t;
	return CT_OK;
}

ct_status predict_run(ct_kernel *k, const char *spec_text, sim_spec *spec, ct_looptree **tp,
                      model_result *m, ct_predict_result *r)
{
	return predict_core(k, spec_text, spec, tp, m, r, false, false);
}

/* ct_kernel_predict, or predict_quick's bounded form. */
static ct_status predict_budgeted(ct_kernel *k, const char *spec_text, bool quick, ct_predict_result *r)
{
	if (!k || !r)
		return CT_ERR_USAGE;
	sim_spec spec;
	ct_looptree *t;
	model_result m;
	ct_status st = predict_core(k, spec_text, &spec, &t, &m, r, true, quick);
	if (st)
		return st;
	model_result_free(&m);
	ct_looptree_free(t);
	return CT_OK;
}

ct_status predict_quick(ct_kernel *k, const char *spec_text, ct_predict_result *r)
{
	return predict_budgeted(k, spec_text, true, r);
}

ct_status ct_kernel_predict(ct_kernel *k, const char *spec_text, ct_predict_result *r)
{
	return predict_budgeted(k, spec_text, false, r);
}
