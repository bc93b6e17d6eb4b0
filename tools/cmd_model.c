/* cmd_model.c: the commands that count cache misses: simulate, predict (--per-ref) and tiles. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_sim_json(const ct_kernel *k, const ct_sim_result *r)
{
	bool ok = true;
	json_t *o = json_object(), *levels = json_array(), *refs = json_array();
	ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), &ok);
	ct_json_set(o, "accesses", json_integer((json_int_t)r->accesses), &ok);
	for (int l = 0; l < r->nlevels; l++) {
		json_t *lv = cache_level_json(r->level[l].size, r->level[l].line, r->level[l].ways, &ok);
		ct_json_set(lv, "simulated_misses", json_integer((json_int_t)r->level[l].misses), &ok);
		ct_json_push(levels, lv, &ok);
	}
	ct_json_set(o, "levels", levels, &ok);
	ct_json_set(o, "simulate_seconds", ct_json_real(r->seconds, 6), &ok);
	for (int i = 0; i < r->nrefs; i++) {
		json_t *ref = json_object();
		ct_json_set(ref, "array", json_string(r->refs[i].array), &ok);
		ct_json_set(ref, "stmt", json_integer(r->refs[i].stmt), &ok);
		ct_json_set(ref, "write", json_boolean(r->refs[i].is_write), &ok);
		ct_json_set(ref, "misses", ct_json_ints(r->refs[i].misses, r->nlevels), &ok);
		ct_json_push(refs, ref, &ok);
	}
	ct_json_set(o, "references", refs, &ok);
	print_json(o, ok);
}

void print_sim_text(const ct_kernel *k, const ct_sim_result *r)
{
	printf("kernel %s: %lld accesses, simulated in %.3f s\n", ct_kernel_name(k), (long long)r->accesses,
	       r->seconds);
	for (int l = 0; l < r->nlevels; l++)
		printf("  L%d %8lld bytes, line %lld, %s: %lld misses (%.2f%%)\n", l + 1,
		       (long long)r->level[l].size, (long long)r->level[l].line,
		       r->level[l].ways ? "set-associative" : "fully associative", (long long)r->level[l].misses,
		       r->accesses ? 100.0 * (double)r->level[l].misses / (double)r->accesses : 0.0);
}

static int simulate_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	ct_sim_result r;
	ct_ctx_set_progress(ctx, show_progress, NULL);
	ct_status st = ct_kernel_simulate(k, c->cache_spec, &r);
	int rc = EXIT_OK;
	if (st)
		rc = fail(ctx, st);
	else if (c->json)
		print_sim_json(k, &r);
	else
		print_sim_text(k, &r);
	ct_sim_result_free(&r);
	return rc;
}

int cmd_simulate(cli *c) { return with_kernel(c, simulate_kernel); }

/* Misses of the simulator's references to the array named `array`, per
 * level: what --simulate prints next to the model's per-array counts. */
static void sim_array_misses(const ct_sim_result *s, const char *array, int64_t *misses)
{
	for (int l = 0; l < CT_SIM_MAX_LEVELS; l++)
		misses[l] = 0;
	for (int i = 0; i < s->nrefs; i++)
		if (strcmp(s->refs[i].array, array) == 0)
			for (int l = 0; l < s->nlevels && l < CT_SIM_MAX_LEVELS; l++)
				misses[l] += s->refs[i].misses[l];
}

static json_t *threads_json(const ct_thread_result *t, bool *ok);

/* `predict --json`: CLI.md's object; s (may be NULL) adds the simulator's
 * counts per level and per array. */
static void print_predict_json(const ct_kernel *k, const ct_predict_result *r, const ct_sim_result *s,
                               const ct_ref_table *t, const ct_thread_result *th)
{
	bool ok = true;
	json_t *o = json_object(), *levels = json_array(), *refs = json_array();
	ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), &ok);
	ct_json_set(o, "accesses", json_integer((json_int_t)r->accesses), &ok);
	for (int l = 0; l < r->nlevels; l++) {
		json_t *lv = predict_level_json(r, l, &ok);
		if (s)
			ct_json_set(lv, "simulated_misses", json_integer((json_int_t)s->level[l].misses), &ok);
		ct_json_push(levels, lv, &ok);
	}
	ct_json_set(o, "levels", levels, &ok);
	ct_json_set(o, "model_seconds", ct_json_real(r->seconds, 6), &ok);
	if (s)
		ct_json_set(o, "simulate_seconds", ct_json_real(s->seconds, 6), &ok);
	for (int a = 0; a < r->narrays; a++) {
		const ct_model_ref *m = &r->arrays[a];
		json_t *ref = json_object();
		ct_json_set(ref, "array", json_string(m->array), &ok);
		ct_json_set(ref, "stmt", json_integer(m->stmt), &ok);
		ct_json_set(ref, "nrefs", json_integer(m->nrefs), &ok);
		ct_json_set(ref, "exact", json_boolean(m->exact), &ok);
		ct_json_set(ref, "accesses", json_integer((json_int_t)m->accesses), &ok);
		ct_json_set(ref, "misses", ct_json_ints(m->misses, r->nlevels), &ok);
		if (s) {
			int64_t sm[CT_SIM_MAX_LEVELS];
			sim_array_misses(s, m->array, sm);
			ct_json_set(ref, "simulated_misses", ct_json_ints(sm, r->nlevels), &ok);
		}
		ct_json_push(refs, ref, &ok);
	}
	ct_json_set(o, "references", refs, &ok);
	if (t)
		ct_json_set(o, "per_ref", ref_table_json(t, t->file ? t->file : "-", r->nlevels, &ok), &ok);
	if (th)
		ct_json_set(o, "threads", threads_json(th, &ok), &ok);
	print_json(o, ok);
}

/* `predict` as text: one row per level, then one per array. */
static void print_predict_text(const ct_kernel *k, const ct_predict_result *r, const ct_sim_result *s)
{
	printf("kernel %s: %lld accesses, model %.3f ms", ct_kernel_name(k), (long long)r->accesses,
	       r->seconds * 1e3);
	if (s)
		printf(", simulated in %.3f s", s->seconds);
	printf("\n  level  %10s %5s %4s %14s %8s %6s %-*s%s\n", "bytes", "line", "ways", "misses", "(%)",
	       "exact", s ? 10 : 0, "source", s ? "      simulated" : "");
	for (int l = 0; l < r->nlevels; l++) {
		printf("  L%-5d %10lld %5lld %4lld %14lld %7.2f%% %6s", l + 1, (long long)r->level[l].size,
		       (long long)r->level[l].line, (long long)r->level[l].ways,
		       (long long)r->level[l].misses,
		       r->accesses ? 100.0 * (double)r->level[l].misses / (double)r->accesses : 0.0,
		       r->level[l].exact ? "yes" : "no");
		printf(" %-*s", s ? 10 : 0, r->source[l] == CT_SOURCE_SIMULATOR ? "simulator"
		                 : r->source[l] == CT_SOURCE_FA_ESTIMATE ? "FA-model"
		                 : r->source[l] == CT_SOURCE_AFFINE_ESTIMATE ? "estimate" : "model");
		if (s)
			printf(" %14lld", (long long)s->level[l].misses);
		printf("\n");
	}
	for (int l = 0; l < r->nlevels; l++)
		if (r->fallback[l] == CT_FALLBACK_SET_ASSOC) {
			printf("  (set-associative levels: the model could not count them exactly (accesses not "
			       "all affine, or past its work budget), so they were simulated exactly, in %.3f ms)\n",
			       r->simulate_seconds * 1e3);
			break;
		}
	for (int l = 0; l < r->nlevels; l++)
		if (r->fallback[l] == CT_FALLBACK_INEXACT || r->fallback[l] == CT_FALLBACK_BUDGET) {
			int inexact = r->fallback[l] == CT_FALLBACK_INEXACT;
			printf("  (fully associative levels: %s, so they were simulated exactly, in "
			       "%.3f ms)\n",
			       inexact ? "the model could not decide their counts exactly and the trace is "
			                 "short"
			               : "the model's analysis would take longer than simulating this short "
			                 "trace",
			       r->simulate_seconds * 1e3);
			break;
		}
	for (int l = 0; l < r->nlevels; l++)
		if (r->fallback[l] == CT_FALLBACK_AFFINE) {
			printf("  (loops with affine bounds: the model does not analyse them yet, so every level "
			       "was simulated exactly, in %.3f ms)\n",
			       r->simulate_seconds * 1e3);
			break;
		}
	for (int l = 0; l < r->nlevels; l++)
		if (r->source[l] == CT_SOURCE_AFFINE_ESTIMATE) {
			printf("  (loops with affine bounds and a trace too long to simulate (over %lld "
			       "accesses): the model's estimate, each affine loop at its mean trip count over "
			       "pieces of the loops its bounds use, every level as if fully associative)\n",
			       (long long)CT_PREDICT_AFFINE_SIM_MAX);
			break;
		}
	for (int l = 0; l < r->nlevels; l++)
		if (r->source[l] == CT_SOURCE_FA_ESTIMATE) {
			printf("  (set-associative levels: the model could not count them exactly (accesses not "
			       "all affine, or past its work budget) and the trace is too long to simulate (over "
			       "%lld accesses): predicted as fully associative, conflict misses not counted)\n",
			       (long long)CT_PREDICT_SIM_MAX);
			break;
		}
	printf("  array      stmt refs       accesses  exact  misses per level%s\n",
	       s ? " (simulated)" : "");
	for (int a = 0; a < r->narrays; a++) {
		const ct_model_ref *m = &r->arrays[a];
		int64_t sm[CT_SIM_MAX_LEVELS];
		if (s)
			sim_array_misses(s, m->array, sm);
		printf("  %-10s %4d %4d %14lld  %-5s", m->array, m->stmt, m->nrefs, (long long)m->accesses,
		       m->exact ? "yes" : "no");
		for (int l = 0; l < r->nlevels; l++) {
			printf(" %lld", (long long)m->misses[l]);
			if (s)
				printf(" (%lld)", (long long)sm[l]);
		}
		printf("\n");
	}
}


/* `predict --per-ref` as text: one row per reference, most misses first. */
static void print_refs_text(const ct_ref_table *t, int nlevels)
{
	int width = 12;
	for (int i = 0; i < t->nrefs; i++) {
		char where[512];
		int n = (int)strlen(ref_where(t->file ? t->file : "-", &t->refs[i], where, sizeof where));
		width = n > width ? n : width;
	}
	printf("  %-*s %-8s %4s %-6s %12s", width, "reference", "array", "stmt", "access", "accesses");
	for (int l = 0; l < nlevels; l++)
		printf("  L%d misses (cold) carried by", l + 1);
	printf("\n");
	int shared = 0, simulated = 0;
	for (int i = 0; i < t->nrefs; i++) {
		const ct_ref_misses *m = &t->refs[i];
		char where[512], carrier[128];
		shared |= m->split != CT_SPLIT_MODEL && m->split != CT_SPLIT_SIMULATED;
		simulated |= m->split == CT_SPLIT_SIMULATED;
		printf("  %-*s %-8s %4d %-6s %12lld", width, ref_where(t->file ? t->file : "-", m, where, sizeof where), m->array,
		       m->stmt, ref_access(m), (long long)m->accesses);
		for (int l = 0; l < nlevels; l++)
			printf("  %9lld (%lld) %s", (long long)m->misses[l], (long long)m->cold[l],
			       carrier_text(m, l, carrier, sizeof carrier));
		printf("%s\n", m->split == CT_SPLIT_SIM ? "  [split by simulation]"
		               : m->split == CT_SPLIT_ACCESSES ? "  [split by accesses]" : "");
	}
	if (shared)
		printf("  (the model counts per array; an array's counts are shared out over its references)\n");
	if (simulated)
		printf("  (loops with affine bounds: every reference counted by the exact simulator, not the model, "
		       "so what carries its capacity or conflict misses is not known: ?)\n");
}

/* ------------------------------------------------------------ predict --threads */

/* `predict --threads --json`: the object's "threads" member. */
static json_t *threads_json(const ct_thread_result *t, bool *ok)
{
	json_t *o = json_object(), *levels = json_array();
	ct_json_set(o, "threads", json_integer(t->nthreads), ok);
	ct_json_set(o, "team", json_integer(t->team), ok);
	ct_json_set(o, "parallel", json_boolean(t->parallel), ok);
	ct_json_set(o, "assumed_static", json_boolean(t->assumed), ok);
	ct_json_set(o, "accesses", json_integer((json_int_t)t->accesses), ok);
	ct_json_set(o, "thread_accesses", ct_json_ints(t->thread_accesses, t->nthreads), ok);
	for (int l = 0; l < t->nlevels; l++) {
		json_t *lv = cache_level_json(t->level[l].size, t->level[l].line, t->level[l].ways, ok);
		ct_json_set(lv, "policy", json_string(t->level[l].plru ? "plru" : "lru"), ok);
		ct_json_set(lv, "private", json_boolean(t->level[l].private_level), ok);
		ct_json_set(lv, "misses", json_integer((json_int_t)t->level[l].misses), ok);
		ct_json_set(lv, "exact", json_boolean(t->level[l].exact), ok);
		if (t->level[l].why)
			ct_json_set(lv, "why", json_string(t->level[l].why), ok);
		if (t->level[l].thread_misses)
			ct_json_set(lv, "thread_misses", ct_json_ints(t->level[l].thread_misses, t->nthreads), ok);
		ct_json_push(levels, lv, ok);
	}
	ct_json_set(o, "levels", levels, ok);
	ct_json_set(o, "seconds", ct_json_real(t->seconds, 6), ok);
	return o;
}

/* `predict --threads` as text, after the usual table. */
static void print_threads_text(const ct_thread_result *t)
{
	printf("threads %d: %s, %.3f ms\n", t->nthreads,
	       !t->parallel       ? "the plan parallelizes no loop: all work on thread 0"
	       : t->nthreads == 1 ? "one thread: all work on thread 0"
	       : t->team <= 1     ? "every parallel loop runs once: all work on thread 0"
	                      : "each parallel band split in static chunks",
	       t->seconds * 1e3);
	if (t->assumed)
		printf("  (a parallel band is dynamic or spmd: split as a static omp for, an assumption)\n");
	printf("  level  %10s %5s %4s %-6s %-8s %14s %6s  per thread\n", "bytes", "line", "ways", "policy", "sharing",
	       "misses", "exact");
	for (int l = 0; l < t->nlevels; l++) {
		printf("  L%-5d %10lld %5lld %4lld %-6s %-8s %14lld %6s ", l + 1, (long long)t->level[l].size,
		       (long long)t->level[l].line, (long long)t->level[l].ways, t->level[l].plru ? "plru" : "lru",
		       t->level[l].private_level ? "private" : "shared", (long long)t->level[l].misses,
		       t->level[l].exact ? "yes" : "no");
		if (t->level[l].thread_misses)
			for (int i = 0; i < t->nthreads; i++)
				printf(" %lld", (long long)t->level[l].thread_misses[i]);
		else
			printf(" (all threads together)");
		if (t->level[l].why)
			printf("  [%s]", t->level[l].why);
		printf("\n");
	}
	printf("  accesses per thread:");
	for (int i = 0; i < t->nthreads; i++)
		printf(" %lld", (long long)t->thread_accesses[i]);
	printf("\n  (shared levels: the threads' accesses taken one from each in turn between the parallel "
	       "loops' barriers, an assumption)\n");
}

static int predict_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if ((c->given & O_THREADS) && c->run.threads < 1)
		return usage_error("predict --threads needs 1 to 4096 threads, not '%s'", "0");
	ct_predict_result r;
	ct_sim_result s;
	ct_ref_table t;
	memset(&r, 0, sizeof r);
	memset(&s, 0, sizeof s);
	memset(&t, 0, sizeof t);
	int rc = EXIT_OK;
	ct_status st = c->per_ref ? ct_kernel_predict_refs(k, c->cache_spec, -1, &r, &t)
	                          : ct_kernel_predict(k, c->cache_spec, &r);
	if (!st && c->simulate) {
		ct_ctx_set_progress(ctx, show_progress, NULL);
		st = ct_kernel_simulate(k, c->cache_spec, &s);
	}
	ct_thread_result th;
	memset(&th, 0, sizeof th);
	bool threads = (c->given & O_THREADS) != 0;
	if (!st && threads)
		st = ct_kernel_predict_threads(k, c->cache_spec, c->run.threads, &th);
	if (st) {
		rc = fail(ctx, st);
	} else if (c->json) {
		print_predict_json(k, &r, c->simulate ? &s : NULL, c->per_ref ? &t : NULL, threads ? &th : NULL);
	} else {
		print_predict_text(k, &r, c->simulate ? &s : NULL);
		if (c->per_ref)
			print_refs_text(&t, r.nlevels);
		if (threads)
			print_threads_text(&th);
	}
	ct_thread_result_free(&th);
	ct_ref_table_free(&t);
	ct_sim_result_free(&s);
	ct_predict_result_free(&r);
	return rc;
}

/* `predict --symbolic`: the library's formulas, text or JSON, as they come. */
static int predict_symbolic(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if (c->simulate || c->per_ref) {
		fprintf(stderr, "cachet: error: --symbolic takes neither --simulate nor --per-ref\n");
		return EXIT_BAD_INPUT;
	}
	char *s = ct_kernel_predict_symbolic(k, c->cache_spec, c->json ? CT_FORMAT_JSON : CT_FORMAT_TEXT);
	if (!s)
		return fail(ctx, ct_ctx_last_status(ctx));
	fputs(s, stdout);
	free(s);
	return EXIT_OK;
}

/* `predict --ranks N`: each rank's bytes out and in per call of a distributed kernel. */
static int predict_ranks(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if (c->simulate || c->per_ref || c->symbolic)
		return usage_error("%s", "predict --ranks takes neither --simulate, --per-ref nor --symbolic");
	int64_t *sent = calloc((size_t)c->ranks, sizeof *sent), *recv = calloc((size_t)c->ranks, sizeof *recv), dims[3];
	if (!sent || !recv) {
		free(sent);
		free(recv);
		return fail(ctx, CT_ERR_NOMEM);
	}
	ct_status st = ct_kernel_predict_ranks(k, c->ranks, c->ngrid ? c->grid : NULL, c->ngrid, sent, recv, dims);
	if (st) {
		free(sent);
		free(recv);
		return fail(ctx, st);
	}
	int64_t total = 0, most = 0;
	for (int r = 0; r < c->ranks; r++) {
		total += sent[r];
		most = sent[r] + recv[r] > most ? sent[r] + recv[r] : most;
	}
	if (c->json) {
		bool ok = true;
		json_t *o = json_object(), *ranks = json_array(), *grid = json_array();
		ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), &ok);
		for (int g = 0; g < 3 && dims[g] > 0; g++)
			ct_json_push(grid, json_integer(dims[g]), &ok);
		ct_json_set(o, "grid", grid, &ok);
		for (int r = 0; r < c->ranks; r++) {
			json_t *x = json_object();
			ct_json_set(x, "rank", json_integer(r), &ok);
			ct_json_set(x, "bytes_sent", json_integer(sent[r]), &ok);
			ct_json_set(x, "bytes_received", json_integer(recv[r]), &ok);
			ct_json_push(ranks, x, &ok);
		}
		ct_json_set(o, "ranks", ranks, &ok);
		ct_json_set(o, "bytes_total", json_integer(total), &ok);
		print_json(o, ok);
	} else {
		printf("kernel %s: %d ranks, grid", ct_kernel_name(k), c->ranks);
		for (int g = 0; g < 3 && dims[g] > 0; g++)
			printf("%s%lld", g ? "x" : " ", (long long)dims[g]);
		printf("; bytes per call (halo messages, partial sums)\n");
		for (int r = 0; r < c->ranks && r < 64; r++)
			printf("  rank %d: sent %lld, received %lld\n", r, (long long)sent[r], (long long)recv[r]);
		if (c->ranks > 64)
			printf("  ... %d more ranks\n", c->ranks - 64);
		printf("  total %lld bytes moved; the busiest rank %lld bytes (sent + received)\n", (long long)total,
		       (long long)most);
	}
	free(sent);
	free(recv);
	return EXIT_OK;
}

static int predict_any(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if (c->ranks > 0)
		return predict_ranks(ctx, k, c);
	if ((c->given & O_GRID))
		return usage_error("%s", "--grid goes with --ranks");
	return c->symbolic ? predict_symbolic(ctx, k, c) : predict_kernel(ctx, k, c);
}

int cmd_predict(cli *c) { return with_kernel(c, predict_any); }

/* `tiles --json`: CLI.md's object plus the params, levels and search facts. */
static void print_tiles_json(const ct_kernel *k, const ct_tiles_result *r)
{
	bool ok = true;
	json_t *o = json_object(), *indices = json_array(), *params = json_array(), *levels = json_array(),
	       *cands = json_array();
	ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), &ok);
	for (int i = 0; i < r->nindices; i++) {
		ct_json_push(indices, json_string(r->indices[i]), &ok);
		ct_json_push(params, json_string(r->params[i]), &ok);
	}
	ct_json_set(o, "indices", indices, &ok);
	ct_json_set(o, "params", params, &ok);
	for (int l = 0; l < r->nlevels; l++)
		ct_json_push(levels, cache_level_json(r->level[l].size, r->level[l].line, r->level[l].ways, &ok), &ok);
	ct_json_set(o, "levels", levels, &ok);
	ct_json_set(o, "rank_level", json_integer(r->rank_level), &ok);
	ct_json_set(o, "runtime_bounds", json_boolean(r->runtime_bounds), &ok);
	ct_json_set(o, "evaluated", json_integer((json_int_t)r->evaluated), &ok);
	/* affine loop bounds: counted by the exact simulator, as predict's fallback */
	ct_json_set(o, "source", json_string(r->simulated ? "simulator" : "model"), &ok);
	ct_json_set(o, "fallback", r->simulated ? json_string("affine loop bounds") : json_null(), &ok);
	if (r->simulated) {
		ct_json_set(o, "accesses", json_integer((json_int_t)r->accesses), &ok);
		ct_json_set(o, "simulate_seconds", ct_json_real(r->simulate_seconds, 6), &ok);
		ct_json_set(o, "seconds_per_tiling",
		            ct_json_real(r->evaluated > 0 ? r->simulate_seconds / (double)r->evaluated : 0.0, 6), &ok);
	}
	for (int c = 0; c < r->ncandidates; c++) {
		const ct_tiles_candidate *t = &r->candidates[c];
		json_t *cand = json_object();
		ct_json_set(cand, "tiles", ct_json_ints(t->tiles, r->nindices), &ok);
		ct_json_set(cand, "misses", json_integer((json_int_t)t->misses[r->rank_level]), &ok);
		ct_json_set(cand, "level_misses", ct_json_ints(t->misses, r->nlevels), &ok);
		ct_json_set(cand, "level_misses_max", ct_json_ints(t->misses_max, r->nlevels), &ok);
		ct_json_set(cand, "exact", json_boolean(t->exact), &ok);
		ct_json_push(cands, cand, &ok);
	}
	ct_json_set(o, "candidates", cands, &ok);
	ct_json_set(o, "seconds", ct_json_real(r->seconds, 6), &ok);
	print_json(o, ok);
}

/* `tiles` as text: the searched params, then the candidates best first. */
static void print_tiles_text(const ct_kernel *k, const ct_tiles_result *r)
{
	printf("kernel %s: %d tile param%s, %lld tilings analysed in %.3f s\n", ct_kernel_name(k),
	       r->nindices, r->nindices == 1 ? "" : "s", (long long)r->evaluated, r->seconds);
	if (r->runtime_bounds)
		printf("unknown loop bounds: partitions whose stack distance depends on them count as misses\n");
	if (r->simulated)
		printf("fallback: affine loop bounds, which the model does not analyse yet: each tiling counted "
		       "by the exact simulator (%lld accesses, %.3f s a tiling)\n",
		       (long long)r->accesses, r->evaluated > 0 ? r->simulate_seconds / (double)r->evaluated : 0.0);
	printf("  rank");
	for (int i = 0; i < r->nindices; i++)
		printf(" %8s", r->indices[i]);
	for (int l = 0; l < r->nlevels; l++)
		printf("  %9s L%d%s", "misses", l + 1, l == r->rank_level ? "*" : " ");
	printf("\n  %4s", "");
	for (int i = 0; i < r->nindices; i++)
		printf(" %8s", r->params[i]);
	printf("\n");
	for (int c = 0; c < r->ncandidates; c++) {
		printf("  %4d", c + 1);
		for (int i = 0; i < r->nindices; i++)
			printf(" %8lld", (long long)r->candidates[c].tiles[i]);
		for (int l = 0; l < r->nlevels; l++)
			printf("  %13lld", (long long)r->candidates[c].misses[l]);
		if (!r->candidates[c].exact) {
			printf("  (not exact; at most");
			for (int l = 0; l < r->nlevels; l++)
				printf(" %lld", (long long)r->candidates[c].misses_max[l]);
			printf(")");
		}
		printf("\n");
	}
	printf("(* ranks first; the %d best shown)\n", r->ncandidates);
}

static int tiles_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_tile = c->max_tile;
	ct_tiles_result r;
	memset(&r, 0, sizeof r);
	int rc = EXIT_OK;
	ct_status st = ct_kernel_tiles(k, c->cache_spec, &o, &r);
	if (st)
		rc = fail(ctx, st);
	else if (c->json)
		print_tiles_json(k, &r);
	else
		print_tiles_text(k, &r);
	ct_tiles_result_free(&r);
	return rc;
}

int cmd_tiles(cli *c) { return with_kernel(c, tiles_kernel); }
