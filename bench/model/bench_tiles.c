/* bench_tiles.c: the tile-size search of issue #5 against an exhaustively simulated grid,
 * its speed, and the Tensor Contraction Engine paper's two-index experiment (unknown, then
 * known bounds; unfused, then fused with loops written with a step, issue #31). Prints tables;
 * asserts nothing (benchmarks are not tests). */
#include "cachet.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TP 4   /* tile params of a case */
#define MAX_GRID 8 /* values per tile param in the exhaustive grid */

/* One search case: a file, its params, a cache, and the grid simulated exhaustively. */
typedef struct tcase {
	const char *label;
	const char *path;
	const char *settings; /* "NAME=V ..." */
	const char *spec;
	int64_t max_tile;
	int ngrid;
	int64_t grid[MAX_GRID]; /* the values every tile param takes in the grid */
} tcase;

static const tcase cases[] = {
    {"matmul 96^3 f64", "bench/model/tiles/matmul.cachet", "", "8K:64", 0, 6, {4, 8, 16, 24, 48, 96}},
    {"two-index V=N=64", "bench/model/tiles/two_index_runtime.cachet", "V=64 N=64", "8K:64", 0, 4,
     {8, 16, 32, 64}},
    {"two-index V=N=64", "bench/model/tiles/two_index_runtime.cachet", "V=64 N=64", "64K:64", 0, 4,
     {8, 16, 32, 64}},
};

/* Thread CPU time: the search is single-threaded, and the machine is shared. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Apply "NAME=V ..." to k (no recheck). */
static bool apply(ct_kernel *k, const char *settings)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", settings);
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return false;
		*eq = '\0';
		if (ct_kernel_set_param(k, tok, strtoll(eq + 1, NULL, 10)) != CT_OK)
			return false;
	}
	return true;
}

static ct_kernel *open_case(ct_ctx *ctx, const char *path, const char *settings)
{
	ct_kernel *k = ct_kernel_parse_file(ctx, path);
	if (!k || !apply(k, settings) || ct_kernel_recheck(k) != CT_OK) {
		fprintf(stderr, "%s: %s\n", path, ct_ctx_last_message(ctx));
		ct_kernel_free(k);
		return NULL;
	}
	return k;
}

/* Set the tile params names[0..n) to t and simulate: the first level's misses, or -1. */
static int64_t simulate_tiles(ct_kernel *k, const char *spec, const char *const *names, int n,
                              const int64_t *t)
{
	for (int i = 0; i < n; i++)
		if (ct_kernel_set_param(k, names[i], t[i]) != CT_OK)
			return -1;
	if (ct_kernel_recheck(k) != CT_OK)
		return -1;
	ct_sim_result sr;
	if (ct_kernel_simulate(k, spec, &sr) != CT_OK)
		return -1;
	int64_t m = sr.level[0].misses;
	ct_sim_result_free(&sr);
	return m;
}

/* The exhaustive grid's best: every combination of c->grid over the n tile params. */
static int64_t grid_best(ct_kernel *k, const tcase *c, const char *const *names, int n, int64_t *best,
                         int *count, double *secs)
{
	int idx[MAX_TP] = {0};
	int64_t t[MAX_TP], bm = -1;
	double t0 = now_s();
	*count = 0;
	for (;;) {
		for (int i = 0; i < n; i++)
			t[i] = c->grid[idx[i]];
		int64_t m = simulate_tiles(k, c->spec, names, n, t);
		(*count)++;
		if (m >= 0 && (bm < 0 || m < bm)) {
			bm = m;
			memcpy(best, t, sizeof *t * (size_t)n);
		}
		int i = 0;
		while (i < n && ++idx[i] == c->ngrid)
			idx[i++] = 0;
		if (i == n)
			break;
	}
	*secs = now_s() - t0;
	return bm;
}

static void tiles_str(char *out, size_t size, const int64_t *t, int n)
{
	size_t at = 0;
	out[0] = '\0';
	for (int i = 0; i < n && at < size; i++)
		at += (size_t)snprintf(out + at, size - at, "%s%lld", i ? "," : "(", (long long)t[i]);
	if (at < size)
		snprintf(out + at, size - at, ")");
}

/* Search, simulate the choice, simulate the grid: one row. False on error. */
static bool run_case(ct_ctx *ctx, const tcase *c, bool *within, double *rate)
{
	ct_kernel *k = open_case(ctx, c->path, c->settings);
	if (!k)
		return false;
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_tile = c->max_tile;
	ct_tiles_result r;
	double c0 = cpu_s();
	ct_status st = ct_kernel_tiles(k, c->spec, &o, &r);
	double cpu = cpu_s() - c0;
	if (st != CT_OK || r.ncandidates == 0) {
		fprintf(stderr, "%s: %s\n", c->label, ct_ctx_last_message(ctx));
		ct_kernel_free(k);
		return false;
	}
	int n = r.nindices < MAX_TP ? r.nindices : MAX_TP;
	const char *names[MAX_TP];
	for (int i = 0; i < n; i++)
		names[i] = r.params[i];
	int64_t chosen[MAX_TP], gb[MAX_TP] = {0};
	memcpy(chosen, r.candidates[0].tiles, sizeof *chosen * (size_t)n);
	int64_t sim_chosen = simulate_tiles(k, c->spec, names, n, chosen);
	int count = 0;
	double gsecs = 0;
	int64_t sim_grid = grid_best(k, c, names, n, gb, &count, &gsecs);
	char a[64], b[64];
	tiles_str(a, sizeof a, chosen, n);
	tiles_str(b, sizeof b, gb, n);
	double ratio = sim_grid > 0 ? (double)sim_chosen / (double)sim_grid : 0;
	*rate = (double)r.evaluated / cpu;
	*within = sim_chosen >= 0 && sim_grid >= 0 && ratio <= 1.05;
	printf("%-18s %-7s %6lld %7.3f %7.3f %7.0f  %-18s %10lld  %5d %7.1f  %-18s %10lld  %6.3f  %s\n",
	       c->label, c->spec, (long long)r.evaluated, r.seconds, cpu, *rate, a, (long long)sim_chosen, count, gsecs, b,
	       (long long)sim_grid, ratio, *within ? "yes" : "NO");
	ct_tiles_result_free(&r);
	ct_kernel_free(k);
	return sim_chosen >= 0 && sim_grid >= 0;
}

/* The kernel of path with the params "NAME=V ..." set, searched with tiles up to 512 in spec
 * (*r, and its thread CPU seconds *cpu); NULL (the message printed) when it fails. */
static ct_kernel *search512(ct_ctx *ctx, const char *path, const char *set, const char *spec, ct_tiles_result *r,
                            double *cpu)
{
	ct_kernel *k = open_case(ctx, path, set);
	if (!k)
		return NULL;
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_tile = 512;
	double c0 = cpu_s();
	ct_status st = ct_kernel_tiles(k, spec, &o, r);
	*cpu = cpu_s() - c0;
	if (st != CT_OK || r->ncandidates == 0 || r->nindices > MAX_TP) {
		fprintf(stderr, "%s: %s\n", path, ct_ctx_last_message(ctx));
		if (st == CT_OK)
			ct_tiles_result_free(r);
		ct_kernel_free(k);
		return NULL;
	}
	return k;
}

/* The paper's experiment: 64 KB fully associative, tiles up to 512; unknown bounds, then
 * several known ones (the model's misses of the unknown-bounds choice beside each). */
static bool paper(ct_ctx *ctx, bool quick, double *min_rate, int64_t *unfused)
{
	const char *path = "bench/model/tiles/two_index_runtime.cachet", *spec = "64K:64";
	printf("\nTCE paper experiment: two-index transform, %s fully associative, tiles up to 512\n", spec);
	printf("%-16s %6s %7s %7s %7s  %-22s %14s  %14s\n", "bounds", "tiles", "wall s", "cpu s", "per s",
	       "chosen (TA,TQ,TP,TB)", "predicted", "unknown's pick");
	static const int64_t sizes[] = {0, 128, 256, 512, 1024};
	int nsizes = quick ? 3 : 5;
	int64_t pick[MAX_TP] = {0};
	for (int s = 0; s < nsizes; s++) {
		char set[64] = "";
		if (sizes[s])
			snprintf(set, sizeof set, "V=%lld N=%lld", (long long)sizes[s], (long long)sizes[s]);
		ct_tiles_result r;
		double cpu;
		ct_kernel *k = search512(ctx, path, set, spec, &r, &cpu);
		if (!k)
			return false;
		char t[64], b[32], u[32] = "";
		tiles_str(t, sizeof t, r.candidates[0].tiles, r.nindices);
		if (!sizes[s]) {
			memcpy(pick, r.candidates[0].tiles, sizeof *pick * (size_t)r.nindices);
			snprintf(b, sizeof b, "unknown");
			snprintf(u, sizeof u, "-");
		} else {
			snprintf(b, sizeof b, "V=N=%lld", (long long)sizes[s]);
			/* the unknown-bounds pick at these bounds (tiles clipped by the schedule) */
			ct_predict_result pr;
			for (int i = 0; i < r.nindices; i++)
				ct_kernel_set_param(k, r.params[i], pick[i]);
			if (ct_kernel_recheck(k) == CT_OK && ct_kernel_predict(k, spec, &pr) == CT_OK) {
				snprintf(u, sizeof u, "%lld", (long long)pr.level[0].misses);
				ct_predict_result_free(&pr);
			}
		}
		double rate = (double)r.evaluated / cpu;
		*min_rate = rate < *min_rate ? rate : *min_rate;
		printf("%-16s %6lld %7.3f %7.3f %7.0f  %-22s %14lld  %14s\n", b, (long long)r.evaluated,
		       r.seconds, cpu, rate, t, (long long)r.candidates[0].misses_max[0], u);
		unfused[s] = r.candidates[0].misses_max[0];
		ct_tiles_result_free(&r);
		ct_kernel_free(k);
	}
	printf("(the paper reports (64,16,16,128) for its fused loop structure; these nests are unfused)\n");
	return true;
}

/* The model's misses of kernel k at level 0 of spec with the params "NAME=V ..." set; -1 when
 * the tiling does not check (a tile past the extent). */
static int64_t predict_at(ct_kernel *k, const char *spec, const char *settings)
{
	ct_predict_result pr;
	if (!apply(k, settings) || ct_kernel_recheck(k) != CT_OK || ct_kernel_predict(k, spec, &pr) != CT_OK)
		return -1;
	int64_t m = pr.level[0].misses;
	ct_predict_result_free(&pr);
	return m;
}

/* The paper's experiment on its fused loop structure (examples/two_index_fused.cachet: the
 * tile loops of a and j shared by both contractions, T one tile): the search's pick at known
 * bounds, the paper's (64,16,16,128) in the same model, and the unfused nests' best (paper()). */
static bool fused(ct_ctx *ctx, bool quick, double *min_rate, const int64_t *unfused)
{
	const char *path = "examples/two_index_fused.cachet", *spec = "64K:64";
	printf("\nTCE paper experiment, fused: two-index transform with shared tile loops of a and j, "
	       "%s fully associative, tiles up to 512\n", spec);
	printf("%-16s %6s %7s %7s %7s  %-22s %12s %6s  %14s  %14s\n", "bounds", "tiles", "wall s", "cpu s",
	       "per s", "chosen (TA,TJ,TI,TB)", "predicted", "exact", "paper's tiles", "unfused best");
	static const int64_t sizes[] = {128, 256, 512, 1024};
	int nsizes = quick ? 2 : 4;
	for (int s = 0; s < nsizes; s++) {
		char set[128];
		snprintf(set, sizeof set, "V=%lld N=%lld TA=16 TJ=16 TI=16 TB=16", (long long)sizes[s],
		         (long long)sizes[s]);
		ct_tiles_result r;
		double cpu;
		ct_kernel *k = search512(ctx, path, set, spec, &r, &cpu);
		if (!k)
			return false;
		char t[64], b[32], pp[32] = "-";
		tiles_str(t, sizeof t, r.candidates[0].tiles, r.nindices);
		snprintf(b, sizeof b, "V=N=%lld", (long long)sizes[s]);
		int64_t paper_m = predict_at(k, spec, "TA=64 TJ=16 TI=16 TB=128");
		if (paper_m >= 0)
			snprintf(pp, sizeof pp, "%lld", (long long)paper_m);
		double rate = (double)r.evaluated / cpu;
		*min_rate = rate < *min_rate ? rate : *min_rate;
		printf("%-16s %6lld %7.3f %7.3f %7.0f  %-22s %12lld %6s  %14s  %14lld\n", b, (long long)r.evaluated,
		       r.seconds, cpu, rate, t, (long long)r.candidates[0].misses_max[0],
		       r.candidates[0].exact ? "yes" : "no", pp, (long long)unfused[s + 1]);
		ct_tiles_result_free(&r);
		ct_kernel_free(k);
	}
	printf("(paper's tiles: (64,16,16,128) read as (TA,TJ,TI,TB), the model's misses for them; "
	       "unfused best: the pick of the table above at the same bounds)\n");
	return true;
}

int main(int argc, char **argv)
{
	bool quick = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else {
			fprintf(stderr, "usage: bench_tiles [--quick]\n");
			return 2;
		}
	}
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	printf("tile search vs an exhaustively simulated grid (misses of the first level)\n");
	printf("%-18s %-7s %6s %7s %7s %7s  %-18s %10s  %5s %7s  %-18s %10s  %6s  %s\n", "case", "cache",
	       "tiles", "wall s", "cpu s", "per s", "chosen", "simulated", "grid", "grid s", "grid best",
	       "simulated", "ratio", "<=1.05");
	bool ok = true, all_within = true;
	double min_rate = 0;
	int ncases = quick ? 1 : (int)(sizeof cases / sizeof cases[0]);
	for (int c = 0; c < ncases; c++) {
		bool within = false;
		double rate = 0;
		ok = run_case(ctx, &cases[c], &within, &rate) && ok;
		all_within = all_within && within;
		min_rate = c == 0 || rate < min_rate ? rate : min_rate;
	}
	int64_t unfused[5] = {0};
	ok = paper(ctx, quick, &min_rate, unfused) && ok;
	ok = fused(ctx, quick, &min_rate, unfused) && ok;
	printf("\ntargets of issue #5 (tile search)\n");
	printf("  >= 1000 tilings per CPU second             %.0f/s (slowest search)  %s\n", min_rate,
	       min_rate >= 1000 ? "met" : "NOT met");
	printf("  best tiling within 5%% of the grid's best   %s\n", all_within ? "met" : "NOT met");
	ct_ctx_free(ctx);
	return ok ? 0 : 1;
}
