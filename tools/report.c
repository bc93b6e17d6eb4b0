/* report.c: `cachet report`: one self-contained HTML page showing where a kernel's cache misses come
 * from (per-reference table, misses against tile sizes, a heat map over two tiles, a roofline, the
 * tuner's points), its plots drawn by gnuplot's svg terminal and inlined; the same data as JSON and CSV. */
#include "report.h"

#include "cachet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Paths, captions and notes are cut to their buffers on purpose (a long
 * message is still a message); gcc's guesses at truncation are not errors here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

enum { RC_OK = 0, RC_FAILED = 1, RC_BAD = 2 };

#define MAX_DEFS 64
#define MAX_TILES 8          /* tile params swept (the first ones the tile search names) */
#define MAX_PTS 32           /* tile sizes per sweep */
#define HEAT_SIDE 10         /* heat map cells per side before the picks' values join */
#define MAX_PICKS 5          /* tile search picks marked */
#define MAX_TUNE_POINTS 512
#define MAX_PLOTS (MAX_TILES + 3)
#define MODEL_BUDGET_S 20.0  /* model time for sweeps and heat map; points beyond it are left out */
#define L CT_SIM_MAX_LEVELS

typedef struct opts {
	const char *file, *out, *csv_dir, *cache;
	int json, run, measure;
	int64_t sim_point_max, sim_total_max;
	const char *names[MAX_DEFS];
	int64_t values[MAX_DEFS];
	int ndefs;
} opts;

/* One tile size of a sweep: the model's count per level and, when the
 * trace was short enough, the simulator's. */
typedef struct point {
	int64_t tile;
	int ok, simulated;
	int64_t model[L], sim[L];
} point;

/* Misses against one tile param, the others as written. */
typedef struct phase {
	const char *param, *index;
	int64_t value, extent;
	int n;
	point pts[MAX_PTS];
} phase;

typedef struct heat {
	int on, px, py, level, nx, ny;
	int64_t xv[HEAT_SIDE + MAX_PICKS + 2], yv[HEAT_SIDE + MAX_PICKS + 2];
	int64_t *cell;               /* [ny][nx], -1 where the model gave no count */
	int npicks;
	int xi[MAX_PICKS], yi[MAX_PICKS], rank[MAX_PICKS]; /* the picks' cells and tile search ranks */
	char fixed[512];             /* the other tile params' values */
} heat;

typedef struct roof {
	int measured, have_flops, ran;
	const char *dtype;
	double peak_core, peak_all, bw_core, bw_all;
	int threads_all;
	double flops, bytes[L], oi[L];
	double seconds, gflops;
	char note[512];
} roof;

typedef struct tpoint {
	char params[256];
	double seconds, gflops;
	int verified, ok, rank;
	int64_t misses[L];
} tpoint;

typedef struct report {
	opts o;
	ct_ctx *ctx;
	ct_kernel *k;
	char *src, *tree, *tree_json;
	ct_predict_result pr;
	ct_ref_table rt;
	int have_tiles;
	ct_tiles_result tr;
	char tiles_note[512];
	int nphases;
	phase ph[MAX_TILES];
	heat hm;
	roof rf;
	int ntp;
	tpoint *tp;
	char tune_note[512], family[96], size_class[256];
	double tau;
	int64_t sim_used, sim_limit; /* simulated accesses so far; where the current sweep stops simulating */
	double t_model, t_sim, t_run, t_probe, t_plot, t_total;
	char plot_note[512];
	int nplots;
	char plot_id[MAX_PLOTS][64], plot_caption[MAX_PLOTS][256];
	char *svg[MAX_PLOTS];
} report;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ options */

static const char usage_text[] =
	"usage: cachet report FILE [-D NAME=VALUE]... [-o REPORT.html] [--json] [--csv DIR]\n"
	"       [--cache SPEC] [--no-run] [--no-measure] [--sim-max N] [--sim-total N]\n";

static const char help_text[] =
	"\nWrite an HTML report of where a kernel's cache misses come from: the kernel and its\n"
	"lowered loop tree, the per-reference miss table, misses per level against each tile\n"
	"param (the model's curve, exact simulations on top), a heat map over two tile params\n"
	"with the tile search's picks, a roofline (the probe's measured peak and copy\n"
	"bandwidth, the model's operational intensity, the measured speed of one run) and the\n"
	"tuner's measured points against the model's ranking when the tuning store has them.\n"
	"The page is self-contained (inline SVG drawn by gnuplot, no scripts, fonts or links).\n\n"
	"  -D NAME=VALUE   override a param, or give a runtime param its value\n"
	"  -o FILE         the HTML page to write\n"
	"  --json          the report's data as one JSON object on stdout\n"
	"  --csv DIR       the data as CSV files in DIR (created if missing): levels.csv,\n"
	"                  per_ref.csv, phases.csv, heatmap.csv, roofline.csv, tuning.csv\n"
	"  --cache SPEC    cache levels SIZE:LINE[:WAYS],... as for predict (default: this\n"
	"                  machine's caches)\n"
	"  --no-run        do not compile and run the kernel (the roofline shows its bound)\n"
	"  --no-measure    do not run the probe's microbenchmarks (no roofline ceilings)\n"
	"  --sim-max N     simulate a tile size only when its trace has at most N accesses\n"
	"                  (default 8M)\n"
	"  --sim-total N   simulate at most N accesses in all (default 64M)\n"
	"At least one of -o, --json, --csv. Exit codes: 0 written, 1 failed (gnuplot missing\n"
	"or failing, a file that cannot be written), 2 bad input or usage.\n";

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "cachet: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s(run 'cachet report --help' for more)\n", usage_text);
	return RC_BAD;
}

/* A count with an optional K/M/G suffix (powers of 1024). */
static int parse_count(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || x < 0)
		return 0;
	int64_t m = 1;
	if (*end == 'K' || *end == 'k')
		m = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		m = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		m = 1024 * 1024 * 1024, end++;
	if (*end || x > INT64_MAX / m)
		return 0;
	*v = x * m;
	return 1;
}

static int parse_define(opts *o, char *arg)
{
	char *eq = strchr(arg, '=');
	char *end;
	if (!eq || eq == arg)
		return usage("-D expects NAME=INTEGER, not '%s'", arg);
	errno = 0;
	long long v = strtoll(eq + 1, &end, 10);
	if (errno || end == eq + 1 || *end)
		return usage("-D expects NAME=INTEGER, not '%s'", arg);
	if (o->ndefs >= MAX_DEFS)
		return usage("too many -D options (%s)", arg);
	*eq = 0;
	o->names[o->ndefs] = arg;
	o->values[o->ndefs++] = v;
	return RC_OK;
}

enum { OPT_JSON = 256, OPT_CSV, OPT_CACHE, OPT_NO_RUN, OPT_NO_MEASURE, OPT_SIM_MAX, OPT_SIM_TOTAL };

/* Parse argv into o; returns -1 after --help, else an exit code (0 = go on). */
static int parse_opts(opts *o, int argc, char **argv)
{
	static const struct option longs[] = {
		{"json", no_argument, NULL, OPT_JSON},       {"csv", required_argument, NULL, OPT_CSV},
		{"cache", required_argument, NULL, OPT_CACHE}, {"no-run", no_argument, NULL, OPT_NO_RUN},
		{"no-measure", no_argument, NULL, OPT_NO_MEASURE},
		{"sim-max", required_argument, NULL, OPT_SIM_MAX},
		{"sim-total", required_argument, NULL, OPT_SIM_TOTAL},
		{"out", required_argument, NULL, 'o'},       {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	memset(o, 0, sizeof *o);
	o->run = o->measure = 1;
	o->sim_point_max = (int64_t)8 << 20;
	o->sim_total_max = (int64_t)64 << 20;
	opterr = 0;
	optind = 1;
	int c, rc;
	while ((c = getopt_long(argc, argv, ":D:o:h", longs, NULL)) != -1) {
		switch (c) {
		case 'D':
			if ((rc = parse_define(o, optarg)) != RC_OK)
				return rc;
			break;
		case 'o': o->out = optarg; break;
		case 'h': printf("%s%s", usage_text, help_text); return -1;
		case OPT_JSON: o->json = 1; break;
		case OPT_CSV: o->csv_dir = optarg; break;
		case OPT_CACHE: o->cache = optarg; break;
		case OPT_NO_RUN: o->run = 0; break;
		case OPT_NO_MEASURE: o->measure = 0; break;
		case OPT_SIM_MAX:
		case OPT_SIM_TOTAL:
			if (!parse_count(optarg, c == OPT_SIM_MAX ? &o->sim_point_max : &o->sim_total_max))
				return usage("expected a count (like 8M), not '%s'", optarg);
			break;
		case ':': return usage("option '%s' needs a value", argv[optind - 1]);
		default: return usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (o->file)
			return usage("unexpected argument '%s'", argv[optind]);
		o->file = argv[optind];
	}
	if (!o->file)
		return usage("%s needs a FILE", "report");
	if (!o->out && !o->json && !o->csv_dir)
		return usage("%s needs -o FILE, --json or --csv DIR", "report");
	return RC_OK;
}

/* ------------------------------------------------------------ errors */

/* The ctx's last error as the other commands print it: each parse
 * diagnostic, else FILE:LINE:COL: error: MSG. */
static void print_error(ct_ctx *ctx)
{
	int n = ct_ctx_diag_count(ctx);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s\n", ct_ctx_diag_render(ctx, i));
	if (n > 0)
		return;
	const char *file = ct_ctx_last_file(ctx);
	if (file[0] && ct_ctx_last_line(ctx) > 0)
		fprintf(stderr, "%s:%d:%d: error: %s\n", file, ct_ctx_last_line(ctx), ct_ctx_last_col(ctx),
		        ct_ctx_last_message(ctx));
	else if (file[0])
		fprintf(stderr, "%s: error: %s\n", file, ct_ctx_last_message(ctx));
	else
		fprintf(stderr, "cachet: error: %s\n", ct_ctx_last_message(ctx));
}

static int exit_code(ct_status st)
{
	return st == CT_OK ? RC_OK
	       : st == CT_ERR_RUNTIME || st == CT_ERR_COMPILE || st == CT_ERR_VERIFY || st == CT_ERR_NOMEM
	           ? RC_FAILED
	           : RC_BAD;
}

static int fail(ct_ctx *ctx, ct_status st)
{
	print_error(ctx);
	return exit_code(st);
}

/* ------------------------------------------------------------ small helpers */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 8192, n = 0;
	char *b = malloc(cap);
	for (size_t got; b && (got = fread(b + n, 1, cap - n - 1, f)) > 0;) {
		n += got;
		if (n + 1 == cap) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (b)
		b[n] = 0;
	return b;
}

static int param_index(const ct_kernel *k, const char *name)
{
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		if (strcmp(ct_kernel_param_name(k, i), name) == 0)
			return i;
	return -1;
}

/* Set param name to v and recheck; 0 (error cleared) when the kernel refuses it. */
static int set_param(report *r, const char *name, int64_t v)
{
	if (ct_kernel_set_param(r->k, name, v) == CT_OK && ct_kernel_recheck(r->k) == CT_OK)
		return 1;
	ct_ctx_clear_error(r->ctx);
	return 0;
}

/* The model's misses per level of r->k as it stands; 0 when it cannot count them. */
static int model_counts(report *r, int64_t *misses, int64_t *accesses)
{
	ct_predict_result p;
	memset(&p, 0, sizeof p);
	double t0 = now_s();
	ct_status st = ct_kernel_predict(r->k, r->o.cache, &p);
	r->t_model += now_s() - t0;
	if (st != CT_OK) {
		ct_ctx_clear_error(r->ctx);
		return 0;
	}
	for (int l = 0; l < p.nlevels; l++)
		misses[l] = p.level[l].misses;
	if (accesses)
		*accesses = p.accesses;
	ct_predict_result_free(&p);
	return 1;
}

/* The simulator's misses, when the trace fits the per-point and total limits. */
static int sim_counts(report *r, int64_t accesses, int64_t *misses)
{
	if (accesses > r->o.sim_point_max || r->sim_used + accesses > r->sim_limit)
		return 0;
	ct_sim_result s;
	memset(&s, 0, sizeof s);
	double t0 = now_s();
	ct_status st = ct_kernel_simulate(r->k, r->o.cache, &s);
	r->t_sim += now_s() - t0;
	if (st != CT_OK) {
		ct_ctx_clear_error(r->ctx);
		return 0;
	}
	r->sim_used += s.accesses;
	for (int l = 0; l < s.nlevels; l++)
		misses[l] = s.level[l].misses;
	ct_sim_result_free(&s);
	return 1;
}

/* ------------------------------------------------------------ gathering the data */

/* The extent of loop index `index` as the lowered tree prints its first loop
 * ("hi" of "lo": "0"); 1024 when it is not a number (a runtime bound). */
static int64_t index_extent(const report *r, const char *index)
{
	char key[160];
	snprintf(key, sizeof key, "\"loop\": \"%s\", \"lo\": \"0\", \"hi\": \"", index);
	const char *p = r->tree_json ? strstr(r->tree_json, key) : NULL;
	if (!p)
		return 1024;
	char *end;
	long long v = strtoll(p + strlen(key), &end, 10);
	return *end == '"' && v > 0 ? v : 1024;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorted distinct values of v[0..n); returns the new n. */
static int uniq(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

/* The tile sizes a sweep tries: 1, 2, 3, 4, 6, 8, 12, ... (powers of two and
 * their halfway points) up to the extent, the extent and the file's value. */
static int sweep_values(int64_t extent, int64_t value, int64_t *out, int cap)
{
	int n = 0;
	for (int64_t p = 1; p <= extent && n + 4 < cap; p *= 2) {
		out[n++] = p;
		if (p >= 2 && p + p / 2 <= extent)
			out[n++] = p + p / 2;
	}
	out[n++] = extent;
	if (value >= 1)
		out[n++] = value;
	return uniq(out, n);
}

static void lower_tree(report *r)
{
	ct_looptree *t = ct_kernel_lower(r->k, 1);
	if (!t) {
		ct_ctx_clear_error(r->ctx);
		return;
	}
	r->tree = ct_looptree_to_string(t, CT_FORMAT_TEXT);
	r->tree_json = ct_looptree_to_string(t, CT_FORMAT_JSON);
	ct_looptree_free(t);
}

static void search_tiles(report *r)
{
	memset(&r->tr, 0, sizeof r->tr);
	double t0 = now_s();
	ct_status st = ct_kernel_tiles(r->k, r->o.cache, NULL, &r->tr);
	r->t_model += now_s() - t0;
	if (st != CT_OK) {
		snprintf(r->tiles_note, sizeof r->tiles_note, "no tile search: %s", ct_ctx_last_message(r->ctx));
		ct_ctx_clear_error(r->ctx);
		memset(&r->tr, 0, sizeof r->tr);
		return;
	}
	r->have_tiles = r->tr.nindices > 0;
	if (!r->have_tiles)
		snprintf(r->tiles_note, sizeof r->tiles_note, "the kernel has no tile params");
}

/* One point of a sweep or the heat map: the model's counts, and the simulator's when it fits. */
static void count_point(report *r, point *p, double deadline, int try_sim)
{
	int64_t acc = 0;
	p->ok = now_s() < deadline && model_counts(r, p->model, &acc);
	p->simulated = p->ok && try_sim && sim_counts(r, acc, p->sim);
}

/* Misses against each tile param, the others at the file's values. */
static void sweep_phases(report *r, double deadline)
{
	for (int i = 0; i < r->tr.nindices && r->nphases < MAX_TILES; i++) {
		phase *ph = &r->ph[r->nphases++];
		ph->param = r->tr.params[i];
		ph->index = r->tr.indices[i];
		ph->value = ct_kernel_param_value(r->k, param_index(r->k, ph->param), NULL);
		ph->extent = index_extent(r, ph->index);
		int64_t v[MAX_PTS];
		ph->n = sweep_values(ph->extent, ph->value, v, MAX_PTS);
		/* each tile param gets an equal share of the simulation budget */
		int nt = r->tr.nindices < MAX_TILES ? r->tr.nindices : MAX_TILES;
		int64_t share = r->o.sim_total_max / nt;
		r->sim_limit = share * r->nphases;
		/* simulated points spread over the sweep: every stride-th, as many as the share holds */
		int64_t fit = r->pr.accesses > 0 ? share / r->pr.accesses : ph->n;
		int stride = fit >= ph->n ? 1 : fit < 1 ? ph->n + 1 : (int)((ph->n + fit - 1) / fit);
		for (int j = 0; j < ph->n; j++) {
			point *p = &ph->pts[j];
			p->tile = v[j];
			if (set_param(r, ph->param, v[j]))
				count_point(r, p, deadline, j % stride == 0);
		}
		set_param(r, ph->param, ph->value);
	}
}

/* At most side values of v[0..n), evenly spread, the first and last kept. */
static int thin(const int64_t *v, int n, int side, int64_t *out)
{
	if (n <= side) {
		memcpy(out, v, (size_t)n * sizeof *v);
		return n;
	}
	for (int i = 0; i < side; i++)
		out[i] = v[(int64_t)i * (n - 1) / (side - 1)];
	return side;
}

static int find_i64(const int64_t *v, int n, int64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

/* The model's misses at the tile search's ranking level over the first two
 * tile params, the other tile params at the best pick's values; the picks'
 * own values join the grid so that each pick is a cell. */
static void heat_map(report *r, double deadline)
{
	heat *h = &r->hm;
	if (r->nphases < 2 || r->tr.ncandidates < 1)
		return;
	h->on = 1;
	h->px = 0;
	h->py = 1;
	h->level = r->tr.rank_level;
	const ct_tiles_candidate *best = &r->tr.candidates[0];
	int64_t saved[MAX_TILES];
	size_t fl = 0;
	h->fixed[0] = 0;
	for (int i = 0; i < r->nphases; i++) {
		saved[i] = r->ph[i].value;
		if (i != h->px && i != h->py) {
			set_param(r, r->ph[i].param, best->tiles[i]);
			fl += (size_t)snprintf(h->fixed + fl, sizeof h->fixed - fl, "%s%s=%lld", fl ? ", " : "",
			                       r->ph[i].param, (long long)best->tiles[i]);
			fl = fl < sizeof h->fixed ? fl : sizeof h->fixed - 1;
		}
	}
	int64_t all[MAX_PTS];
	for (int a = 0; a < 2; a++) {
		const phase *ph = &r->ph[a == 0 ? h->px : h->py];
		int64_t *vals = a == 0 ? h->xv : h->yv;
		int n = 0;
		for (int j = 0; j < ph->n; j++)
			all[n++] = ph->pts[j].tile;
		n = thin(all, n, HEAT_SIDE, vals);
		h->npicks = r->tr.ncandidates < MAX_PICKS ? r->tr.ncandidates : MAX_PICKS;
		for (int c = 0; c < h->npicks; c++)
			vals[n++] = r->tr.candidates[c].tiles[a == 0 ? h->px : h->py];
		n = uniq(vals, n);
		if (a == 0)
			h->nx = n;
		else
			h->ny = n;
	}
	int kept = 0;
	for (int c = 0; c < h->npicks; c++) {
		int xi = find_i64(h->xv, h->nx, r->tr.candidates[c].tiles[h->px]);
		int yi = find_i64(h->yv, h->ny, r->tr.candidates[c].tiles[h->py]);
		int seen = 0;
		for (int e = 0; e < kept; e++)
			seen |= h->xi[e] == xi && h->yi[e] == yi;
		if (seen)
			continue; /* picks that differ only in other tiles share a cell: the best one's rank */
		h->xi[kept] = xi;
		h->yi[kept] = yi;
		h->rank[kept++] = c + 1;
	}
	h->npicks = kept;
	h->cell = malloc((size_t)(h->nx * h->ny) * sizeof *h->cell);
	for (int y = 0; h->cell && y < h->ny; y++)
		for (int x = 0; x < h->nx; x++) {
			int64_t m[L];
			int ok = now_s() < deadline && set_param(r, r->ph[h->px].param, h->xv[x]) &&
			         set_param(r, r->ph[h->py].param, h->yv[y]) && model_counts(r, m, NULL);
			h->cell[y * h->nx + x] = ok ? m[h->level] : -1;
		}
	for (int i = 0; i < r->nphases; i++)
		set_param(r, r->ph[i].param, saved[i]);
	if (!h->cell)
		h->on = 0;
}

/* The dtype the roofline's peak is of: the first output or inout array's. */
static ct_dtype output_dtype(const ct_kernel *k)
{
	for (int i = 0; i < ct_kernel_array_count(k); i++) {
		ct_role ro = ct_kernel_array_role(k, i);
		if (ro == CT_OUTPUT || ro == CT_INOUT)
			return ct_kernel_array_dtype(k, i);
	}
	return ct_kernel_array_count(k) > 0 ? ct_kernel_array_dtype(k, 0) : CT_F32;
}

/* The probe's peaks and bandwidth, the model's intensity per level, one timed run. */
static void roofline(report *r)
{
	roof *f = &r->rf;
	ct_dtype dt = output_dtype(r->k);
	f->dtype = ct_dtype_name(dt);
	ct_probe_info pi;
	memset(&pi, 0, sizeof pi);
	double t0 = now_s();
	unsigned flags = r->o.measure ? CT_PROBE_MEASURE_FLOPS | CT_PROBE_MEASURE_BANDWIDTH : 0;
	if (ct_probe_run(r->ctx, flags, &pi) != CT_OK)
		ct_ctx_clear_error(r->ctx);
	r->t_probe = now_s() - t0;
	int f64 = dt == CT_F64 || dt == CT_I64;
	f->peak_core = f64 ? pi.gflops_f64_core : pi.gflops_f32_core;
	f->peak_all = f64 ? pi.gflops_f64_all : pi.gflops_f32_all;
	f->bw_core = pi.copy_gbs_core;
	f->bw_all = pi.copy_gbs_all;
	f->threads_all = pi.threads_measured;
	f->measured = f->peak_core > 0 && f->bw_core > 0;
	f->flops = ct_kernel_flops(r->k);
	f->have_flops = f->flops > 0;
	for (int l = 0; l < r->pr.nlevels; l++) {
		f->bytes[l] = (double)r->pr.level[l].misses * (double)r->pr.level[l].line;
		f->oi[l] = f->have_flops && f->bytes[l] > 0 ? f->flops / f->bytes[l] : 0;
	}
	if (!r->o.run) {
		snprintf(f->note, sizeof f->note, "not run (--no-run): the point sits on the bound");
		return;
	}
	ct_run_options ro;
	ct_run_options_init(&ro);
	ro.verify = 0;
	ct_run_result rr;
	memset(&rr, 0, sizeof rr);
	t0 = now_s();
	ct_status st = ct_kernel_run(r->k, &ro, &rr);
	r->t_run = now_s() - t0;
	if (st != CT_OK) {
		snprintf(f->note, sizeof f->note, "the run failed: %s", ct_ctx_last_message(r->ctx));
		ct_ctx_clear_error(r->ctx);
		return;
	}
	f->ran = 1;
	f->seconds = rr.seconds;
	f->gflops = rr.gflops;
	snprintf(f->note, sizeof f->note, "one run, %s engine, %d thread%s, %.3g s", rr.engine, rr.threads,
	         rr.threads == 1 ? "" : "s", rr.seconds);
}

/* Apply a stored point's params ("T=32:U=64") to the kernel; 0 if refused. */
static int apply_point(report *r, const char *params)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", params);
	for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return 0;
		*eq = 0;
		if (param_index(r->k, tok) < 0 || ct_kernel_set_param(r->k, tok, strtoll(eq + 1, NULL, 10)) != CT_OK) {
			ct_ctx_clear_error(r->ctx);
			return 0;
		}
	}
	if (ct_kernel_recheck(r->k) != CT_OK) {
		ct_ctx_clear_error(r->ctx);
		return 0;
	}
	return 1;
}

static int nlevels_cmp;
/* The model's order: fewer misses of the smallest level first, then the next. */
static int cmp_model(const void *a, const void *b)
{
	const tpoint *x = *(tpoint *const *)a, *y = *(tpoint *const *)b;
	if (x->ok != y->ok)
		return y->ok - x->ok;
	for (int l = 0; l < nlevels_cmp; l++)
		if (x->misses[l] != y->misses[l])
			return x->misses[l] < y->misses[l] ? -1 : 1;
	return 0;
}

/* Kendall's tau of the model's rank and the measured time over the verified points. */
static double kendall(const tpoint *p, int n)
{
	double conc = 0, disc = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			if (!p[i].ok || !p[j].ok || p[i].verified == 0 || p[j].verified == 0)
				continue;
			double a = (double)(p[i].rank - p[j].rank), b = p[i].seconds - p[j].seconds;
			if (a * b > 0)
				conc++;
			else if (a * b < 0)
				disc++;
		}
	return conc + disc > 0 ? (conc - disc) / (conc + disc) : 0;
}

/* The points the tuner measured for this kernel's family, type and sizes
 * (the store's points table), each with the model's misses, ranked. */
static void tuning_points(report *r)
{
	int tunable = 0;
	for (int i = 0; i < ct_kernel_param_count(r->k); i++)
		tunable |= ct_kernel_param_candidates(r->k, i, NULL) > 0;
	if (!tunable) {
		snprintf(r->tune_note, sizeof r->tune_note, "the kernel has no tunable params");
		return;
	}
	ct_dtype dt;
	if (ct_kernel_tune_key(r->k, r->family, sizeof r->family, r->size_class, sizeof r->size_class, &dt) !=
	    CT_OK) {
		snprintf(r->tune_note, sizeof r->tune_note, "no tuning key: %s", ct_ctx_last_message(r->ctx));
		ct_ctx_clear_error(r->ctx);
		return;
	}
	ct_store *s = ct_store_open(r->ctx, NULL, CT_STORE_READONLY | CT_STORE_QUIET);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	if (s && sqlite3_open_v2(ct_store_path(s), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db,
	                       "SELECT params, seconds, gflops, verified FROM points WHERE family=?1 AND dtype=?2"
	                       " AND size_class=?3 AND abandoned=0 ORDER BY params",
	                       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, r->family, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, ct_dtype_name(dt), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, r->size_class, -1, SQLITE_STATIC);
		r->tp = calloc(MAX_TUNE_POINTS, sizeof *r->tp);
		while (r->tp && r->ntp < MAX_TUNE_POINTS && sqlite3_step(st) == SQLITE_ROW) {
			tpoint *p = &r->tp[r->ntp];
			const unsigned char *txt = sqlite3_column_text(st, 0);
			snprintf(p->params, sizeof p->params, "%s", txt ? (const char *)txt : "");
			p->seconds = sqlite3_column_double(st, 1);
			p->gflops = sqlite3_column_double(st, 2);
			p->verified = sqlite3_column_int(st, 3);
			r->ntp += p->seconds > 0;
		}
	}
	sqlite3_finalize(st);
	if (db)
		sqlite3_close(db);
	ct_store_close(s);
	if (r->ntp == 0) {
		snprintf(r->tune_note, sizeof r->tune_note,
		         "the tuning store has no measured points of %s (%s, %s): run `cachet tune` first", r->family,
		         ct_dtype_name(dt), r->size_class);
		return;
	}
	/* each point's model counts, then its rank in the model's order */
	int np = ct_kernel_param_count(r->k);
	int64_t *saved = malloc((size_t)np * sizeof *saved);
	tpoint **order = malloc((size_t)r->ntp * sizeof *order);
	if (!saved || !order) {
		free(saved);
		free(order);
		r->ntp = 0;
		return;
	}
	for (int i = 0; i < np; i++)
		saved[i] = ct_kernel_param_value(r->k, i, NULL);
	for (int i = 0; i < r->ntp; i++) {
		tpoint *p = &r->tp[i];
		p->ok = apply_point(r, p->params) && model_counts(r, p->misses, NULL);
		order[i] = p;
	}
	for (int i = 0; i < np; i++)
		if (ct_kernel_param_candidates(r->k, i, NULL) > 0)
			ct_kernel_set_param(r->k, ct_kernel_param_name(r->k, i), saved[i]);
	if (ct_kernel_recheck(r->k) != CT_OK)
		ct_ctx_clear_error(r->ctx);
	nlevels_cmp = r->pr.nlevels;
	qsort(order, (size_t)r->ntp, sizeof *order, cmp_model);
	for (int i = 0; i < r->ntp; i++)
		order[i]->rank = i + 1;
	r->tau = kendall(r->tp, r->ntp);
	free(order);
	free(saved);
}

/* ------------------------------------------------------------ JSON and CSV */

static const char *level_source(int s)
{
	return s == CT_SOURCE_SIMULATOR ? "simulator" : s == CT_SOURCE_FA_ESTIMATE ? "fully associative estimate"
	                                                                            : "model";
}

static const char *carrier_text(const ct_ref_misses *m, int l, char *buf, size_t cap)
{
	const char *name = m->carried_by[l];
	switch (m->carrier[l]) {
	case CT_CARRIER_LOOP: snprintf(buf, cap, "%s", name ? name : "?"); break;
	case CT_CARRIER_SIBLING: snprintf(buf, cap, "sibling in %s", name ? name : "run"); break;
	case CT_CARRIER_STMT: snprintf(buf, cap, "statement"); break;
	case CT_CARRIER_CONFLICT: snprintf(buf, cap, "conflicts"); break;
	default: snprintf(buf, cap, "-");
	}
	return buf;
}

static const char *ref_where(const report *r, const ct_ref_misses *m, char *buf, size_t cap)
{
	if (m->line > 0)
		snprintf(buf, cap, "%s:%d:%d", r->rt.file ? r->rt.file : r->o.file, m->line, m->col);
	else
		snprintf(buf, cap, "(copy loops)");
	return buf;
}

static const char *ref_access(const ct_ref_misses *m)
{
	return m->line <= 0 ? "copy" : m->is_write == 2 ? "update" : m->is_write ? "write" : "read";
}

/* A JSON string: s with quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 32)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_counts(FILE *f, const int64_t *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
	fputc(']', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void json_refs(FILE *f, const report *r)
{
	int nl = r->pr.nlevels;
	fputs(", \"per_ref\": [", f);
	for (int i = 0; i < r->rt.nrefs; i++) {
		const ct_ref_misses *m = &r->rt.refs[i];
		char where[512], carrier[128];
		fprintf(f, "%s{\"array\": ", i ? ", " : "");
		json_str(f, m->array);
		fprintf(f, ", \"stmt\": %d, \"where\": ", m->stmt);
		json_str(f, ref_where(r, m, where, sizeof where));
		fprintf(f, ", \"access\": \"%s\", \"accesses\": %lld, \"misses\": ", ref_access(m),
		        (long long)m->accesses);
		json_counts(f, m->misses, nl);
		fputs(", \"cold\": ", f);
		json_counts(f, m->cold, nl);
		fputs(", \"carried_by\": [", f);
		for (int l = 0; l < nl; l++) {
			fputs(l ? ", " : "", f);
			json_str(f, carrier_text(m, l, carrier, sizeof carrier));
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

static void json_phases(FILE *f, const report *r)
{
	int nl = r->pr.nlevels;
	fputs(", \"phases\": [", f);
	for (int i = 0; i < r->nphases; i++) {
		const phase *ph = &r->ph[i];
		fprintf(f, "%s{\"param\": \"%s\", \"index\": \"%s\", \"value\": %lld, \"extent\": %lld, \"points\": [",
		        i ? ", " : "", ph->param, ph->index, (long long)ph->value, (long long)ph->extent);
		for (int j = 0; j < ph->n; j++) {
			const point *p = &ph->pts[j];
			fprintf(f, "%s{\"tile\": %lld, \"model\": ", j ? ", " : "", (long long)p->tile);
			if (p->ok)
				json_counts(f, p->model, nl);
			else
				fputs("null", f);
			fputs(", \"simulated\": ", f);
			if (p->simulated)
				json_counts(f, p->sim, nl);
			else
				fputs("null", f);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

static void json_heat(FILE *f, const report *r)
{
	const heat *h = &r->hm;
	fputs(", \"heatmap\": ", f);
	if (!h->on) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"x_param\": \"%s\", \"y_param\": \"%s\", \"level\": %d, \"fixed\": ", r->ph[h->px].param,
	        r->ph[h->py].param, h->level + 1);
	json_str(f, h->fixed);
	fputs(", \"x\": ", f);
	json_counts(f, h->xv, h->nx);
	fputs(", \"y\": ", f);
	json_counts(f, h->yv, h->ny);
	fputs(", \"misses\": [", f);
	for (int y = 0; y < h->ny; y++) {
		fputs(y ? ", " : "", f);
		json_counts(f, h->cell + y * h->nx, h->nx);
	}
	fputs("], \"picks\": [", f);
	for (int c = 0; c < h->npicks; c++)
		fprintf(f, "%s[%lld, %lld]", c ? ", " : "", (long long)h->xv[h->xi[c]], (long long)h->yv[h->yi[c]]);
	fputs("]}", f);
}

static void json_tiles(FILE *f, const report *r)
{
	fputs(", \"tiles\": ", f);
	if (!r->have_tiles) {
		fputs("{\"note\": ", f);
		json_str(f, r->tiles_note);
		fputc('}', f);
		return;
	}
	fputs("{\"params\": [", f);
	for (int i = 0; i < r->tr.nindices; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", r->tr.params[i]);
	fprintf(f, "], \"rank_level\": %d, \"picks\": [", r->tr.rank_level + 1);
	for (int c = 0; c < r->tr.ncandidates; c++) {
		fprintf(f, "%s{\"tiles\": ", c ? ", " : "");
		json_counts(f, r->tr.candidates[c].tiles, r->tr.nindices);
		fputs(", \"misses\": ", f);
		json_counts(f, r->tr.candidates[c].misses, r->tr.nlevels);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void json_roof(FILE *f, const report *r)
{
	const roof *rf = &r->rf;
	fprintf(f, ", \"roofline\": {\"dtype\": \"%s\", \"measured\": %s, \"peak_gflops_core\": ", rf->dtype,
	        rf->measured ? "true" : "false");
	json_num(f, rf->peak_core);
	fputs(", \"peak_gflops_all\": ", f);
	json_num(f, rf->peak_all);
	fputs(", \"copy_gbs_core\": ", f);
	json_num(f, rf->bw_core);
	fputs(", \"copy_gbs_all\": ", f);
	json_num(f, rf->bw_all);
	fprintf(f, ", \"threads_all\": %d, \"flops\": ", rf->threads_all);
	json_num(f, rf->have_flops ? rf->flops : 0);
	fputs(", \"intensity\": [", f);
	for (int l = 0; l < r->pr.nlevels; l++) {
		fputs(l ? ", " : "", f);
		json_num(f, rf->oi[l]);
	}
	fprintf(f, "], \"ran\": %s, \"seconds\": ", rf->ran ? "true" : "false");
	json_num(f, rf->seconds);
	fputs(", \"gflops\": ", f);
	json_num(f, rf->gflops);
	fputs(", \"note\": ", f);
	json_str(f, rf->note);
	fputc('}', f);
}

static void json_tuning(FILE *f, const report *r)
{
	fputs(", \"tuning\": {\"family\": ", f);
	json_str(f, r->family);
	fputs(", \"size_class\": ", f);
	json_str(f, r->size_class);
	fputs(", \"note\": ", f);
	json_str(f, r->tune_note);
	fputs(", \"kendall_tau\": ", f);
	json_num(f, r->tau);
	fputs(", \"points\": [", f);
	for (int i = 0; i < r->ntp; i++) {
		const tpoint *p = &r->tp[i];
		fprintf(f, "%s{\"params\": ", i ? ", " : "");
		json_str(f, p->params);
		fprintf(f, ", \"seconds\": %.6g, \"gflops\": %.6g, \"verified\": %d, \"model_rank\": %d, \"misses\": ",
		        p->seconds, p->gflops, p->verified, p->rank);
		if (p->ok)
			json_counts(f, p->misses, r->pr.nlevels);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void write_json(FILE *f, const report *r)
{
	fputs("{\"kernel\": ", f);
	json_str(f, ct_kernel_name(r->k));
	fputs(", \"file\": ", f);
	json_str(f, r->o.file);
	fputs(", \"params\": {", f);
	for (int i = 0; i < ct_kernel_param_count(r->k); i++)
		fprintf(f, "%s\"%s\": %lld", i ? ", " : "", ct_kernel_param_name(r->k, i),
		        (long long)ct_kernel_param_value(r->k, i, NULL));
	fprintf(f, "}, \"accesses\": %lld, \"levels\": [", (long long)r->pr.accesses);
	for (int l = 0; l < r->pr.nlevels; l++)
		fprintf(f, "%s{\"size\": %lld, \"line\": %lld, \"ways\": %lld, \"misses\": %lld, \"exact\": %s, \"source\": \"%s\"}",
		        l ? ", " : "", (long long)r->pr.level[l].size, (long long)r->pr.level[l].line,
		        (long long)r->pr.level[l].ways, (long long)r->pr.level[l].misses,
		        r->pr.level[l].exact ? "true" : "false", level_source(r->pr.source[l]));
	fputc(']', f);
	json_refs(f, r);
	json_tiles(f, r);
	json_phases(f, r);
	json_heat(f, r);
	json_roof(f, r);
	json_tuning(f, r);
	fprintf(f, ", \"seconds\": {\"model\": %.4f, \"simulator\": %.4f, \"probe\": %.4f, \"run\": %.4f, \"plots\": %.4f, "
	           "\"total\": %.4f}, \"simulated_accesses\": %lld}\n",
	        r->t_model, r->t_sim, r->t_probe, r->t_run, r->t_plot, r->t_total, (long long)r->sim_used);
}

static FILE *csv_open(const report *r, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", r->o.csv_dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
	return f;
}

static int csv_close(FILE *f)
{
	return f && fclose(f) == 0;
}

/* The CSV files of --csv DIR; 0 when one cannot be written. */
static int write_csv(const report *r)
{
	int nl = r->pr.nlevels, ok = 1;
	if (mkdir(r->o.csv_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: error: cannot create the folder: %s\n", r->o.csv_dir, strerror(errno));
		return 0;
	}
	FILE *f = csv_open(r, "levels.csv");
	if (f) {
		fprintf(f, "level,size,line,ways,misses,exact,source\n");
		for (int l = 0; l < nl; l++)
			fprintf(f, "L%d,%lld,%lld,%lld,%lld,%d,%s\n", l + 1, (long long)r->pr.level[l].size,
			        (long long)r->pr.level[l].line, (long long)r->pr.level[l].ways,
			        (long long)r->pr.level[l].misses, r->pr.level[l].exact, level_source(r->pr.source[l]));
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "per_ref.csv")) != NULL) {
		fprintf(f, "where,array,stmt,access,accesses,level,misses,cold,capacity,carried_by\n");
		for (int i = 0; i < r->rt.nrefs; i++) {
			const ct_ref_misses *m = &r->rt.refs[i];
			char where[512], carrier[128];
			for (int l = 0; l < nl; l++)
				fprintf(f, "%s,%s,%d,%s,%lld,L%d,%lld,%lld,%lld,%s\n", ref_where(r, m, where, sizeof where),
				        m->array, m->stmt, ref_access(m), (long long)m->accesses, l + 1,
				        (long long)m->misses[l], (long long)m->cold[l], (long long)(m->misses[l] - m->cold[l]),
				        carrier_text(m, l, carrier, sizeof carrier));
		}
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "phases.csv")) != NULL) {
		fprintf(f, "param,tile,level,model,simulated\n");
		for (int i = 0; i < r->nphases; i++)
			for (int j = 0; j < r->ph[i].n; j++) {
				const point *p = &r->ph[i].pts[j];
				for (int l = 0; p->ok && l < nl; l++) {
					fprintf(f, "%s,%lld,L%d,%lld,", r->ph[i].param, (long long)p->tile, l + 1,
					        (long long)p->model[l]);
					if (p->simulated)
						fprintf(f, "%lld", (long long)p->sim[l]);
					fputc('\n', f);
				}
			}
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "heatmap.csv")) != NULL) {
		const heat *h = &r->hm;
		fprintf(f, "%s,%s,level,misses,pick\n", h->on ? r->ph[h->px].param : "x", h->on ? r->ph[h->py].param : "y");
		for (int y = 0; h->on && y < h->ny; y++)
			for (int x = 0; x < h->nx; x++) {
				int pick = 0;
				for (int c = 0; c < h->npicks; c++)
					if (h->xi[c] == x && h->yi[c] == y && !pick)
						pick = h->rank[c];
				if (h->cell[y * h->nx + x] >= 0)
					fprintf(f, "%lld,%lld,L%d,%lld,%d\n", (long long)h->xv[x], (long long)h->yv[y], h->level + 1,
					        (long long)h->cell[y * h->nx + x], pick);
			}
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "roofline.csv")) != NULL) {
		const roof *rf = &r->rf;
		fprintf(f, "what,level,intensity_flop_per_byte,gflops\n");
		fprintf(f, "peak_core,,,%.6g\npeak_all,,,%.6g\ncopy_gbs_core,,,%.6g\ncopy_gbs_all,,,%.6g\n", rf->peak_core,
		        rf->peak_all, rf->bw_core, rf->bw_all);
		for (int l = 0; l < nl; l++)
			fprintf(f, "kernel,L%d,%.6g,%.6g\n", l + 1, rf->oi[l], rf->ran ? rf->gflops : 0.0);
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "tuning.csv")) != NULL) {
		fprintf(f, "params,seconds,gflops,verified,model_rank");
		for (int l = 0; l < nl; l++)
			fprintf(f, ",L%d_misses", l + 1);
		fputc('\n', f);
		for (int i = 0; i < r->ntp; i++) {
			const tpoint *p = &r->tp[i];
			fprintf(f, "%s,%.6g,%.6g,%d,%d", p->params, p->seconds, p->gflops, p->verified, p->rank);
			for (int l = 0; l < nl; l++)
				fprintf(f, ",%lld", (long long)(p->ok ? p->misses[l] : -1));
			fputc('\n', f);
		}
	}
	ok &= csv_close(f);
	return ok;
}

/* ------------------------------------------------------------ plots (gnuplot's svg terminal) */

static const char *const level_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

static FILE *plot_data(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return fopen(path, "w");
}

/* Register plot id (its SVG file is DIR/ID.svg) with a caption; its index. */
static int add_plot(report *r, const char *id, const char *caption)
{
	if (r->nplots >= MAX_PLOTS)
		return -1;
	snprintf(r->plot_id[r->nplots], sizeof r->plot_id[0], "%s", id);
	snprintf(r->plot_caption[r->nplots], sizeof r->plot_caption[0], "%s", caption);
	return r->nplots++;
}

static void gp_level_name(const report *r, int l, char *buf, size_t cap)
{
	int64_t sz = r->pr.level[l].size;
	if (sz % (1024 * 1024) == 0)
		snprintf(buf, cap, "L%d (%lld MiB)", l + 1, (long long)(sz >> 20));
	else if (sz % 1024 == 0)
		snprintf(buf, cap, "L%d (%lld KiB)", l + 1, (long long)(sz >> 10));
	else
		snprintf(buf, cap, "L%d (%lld B)", l + 1, (long long)sz);
}

/* One tile param's sweep: data file and script lines. */
static void gp_phase(report *r, FILE *g, const char *dir, int i)
{
	const phase *ph = &r->ph[i];
	int nl = r->pr.nlevels, any_model = 0, any_sim = 0;
	char name[64], id[80], cap[256];
	snprintf(name, sizeof name, "phase%d.dat", i);
	FILE *d = plot_data(dir, name);
	if (!d)
		return;
	for (int j = 0; j < ph->n; j++) {
		const point *p = &ph->pts[j];
		if (!p->ok)
			continue;
		fprintf(d, "%lld", (long long)p->tile);
		for (int l = 0; l < nl; l++) {
			fprintf(d, " %lld", (long long)p->model[l]);
			any_model |= p->model[l] > 0;
		}
		for (int l = 0; l < nl; l++) {
			if (p->simulated)
				fprintf(d, " %lld", (long long)p->sim[l]);
			else
				fputs(" ?", d);
			any_sim |= p->simulated && p->sim[l] > 0;
		}
		fputc('\n', d);
	}
	fclose(d);
	if (!any_model)
		return;
	snprintf(id, sizeof id, "phase-%s", ph->param);
	snprintf(cap, sizeof cap,
	         "Misses per level against the tile size %s (index %s), the other tiles as written; lines: the model, "
	         "circles: the exact simulator; dashed: the file's value %lld",
	         ph->param, ph->index, (long long)ph->value);
	add_plot(r, id, cap);
	fprintf(g, "set output '%s/%s.svg'\n", dir, id);
	fprintf(g, "set title 'misses against tile size %s (index %s)'\nset xlabel '%s'\nset ylabel 'misses'\n",
	        ph->param, ph->index, ph->param);
	fprintf(g, "set logscale x 2\nset logscale y 10\nset xrange [0.8:%g]\nset key outside right top\n",
	        (double)ph->extent * 1.25);
	fprintf(g, "set arrow 1 from %lld, graph 0 to %lld, graph 1 nohead dt 2 lc rgb '#888888'\n",
	        (long long)ph->value, (long long)ph->value);
	fprintf(g, "plot ");
	int first = 1;
	for (int l = 0; l < nl; l++) {
		char lv[64];
		gp_level_name(r, l, lv, sizeof lv);
		fprintf(g, "%s'%s/%s' using 1:($%d>0?$%d:NaN) with linespoints lw 2 pt 7 ps 0.6 lc rgb '%s' title '%s model'",
		        first ? "" : ", ", dir, name, 2 + l, 2 + l, level_colors[l % 8], lv);
		first = 0;
		if (any_sim)
			fprintf(g, ", '%s/%s' using 1:($%d>0?$%d:NaN) with points pt 6 ps 1.6 lw 1.5 lc rgb '%s' title '%s simulated'",
			        dir, name, 2 + nl + l, 2 + nl + l, level_colors[l % 8], lv);
	}
	fprintf(g, "\nunset arrow 1\nunset logscale\nset autoscale\n");
}

static void gp_heat(report *r, FILE *g, const char *dir)
{
	const heat *h = &r->hm;
	if (!h->on)
		return;
	FILE *d = plot_data(dir, "heat.dat"), *pk = plot_data(dir, "picks.dat");
	int64_t lo = -1, hi = -1;
	for (int y = 0; d && y < h->ny; y++) {
		for (int x = 0; x < h->nx; x++) {
			int64_t v = h->cell[y * h->nx + x];
			if (v >= 0) {
				fprintf(d, "%d %d %lld\n", x, y, (long long)v);
				lo = lo < 0 || v < lo ? v : lo;
				hi = v > hi ? v : hi;
			} else {
				fprintf(d, "%d %d NaN\n", x, y);
			}
		}
		fputc('\n', d);
	}
	for (int c = 0; pk && c < h->npicks; c++)
		fprintf(pk, "%d %d %d\n", h->xi[c], h->yi[c], h->rank[c]);
	if (d)
		fclose(d);
	if (pk)
		fclose(pk);
	if (!d || !pk || hi < 0)
		return;
	char cap[256];
	snprintf(cap, sizeof cap,
	         "L%d misses (the tile search's ranking level) over %s x %s, %s; red dots: the tile search's picks, "
	         "numbered by rank",
	         h->level + 1, r->ph[h->px].param, r->ph[h->py].param, h->fixed[0] ? h->fixed : "no other tile params");
	add_plot(r, "heatmap", cap);
	fprintf(g, "set output '%s/heatmap.svg'\n", dir);
	fprintf(g, "set title 'L%d misses over %s x %s'\nset xlabel '%s'\nset ylabel '%s'\n", h->level + 1,
	        r->ph[h->px].param, r->ph[h->py].param, r->ph[h->px].param, r->ph[h->py].param);
	fprintf(g, "set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n", h->nx - 0.5, h->ny - 0.5);
	for (int a = 0; a < 2; a++) {
		fprintf(g, "set %ctics (", a ? 'y' : 'x');
		int n = a ? h->ny : h->nx;
		for (int i = 0; i < n; i++)
			fprintf(g, "%s'%lld' %d", i ? ", " : "", (long long)(a ? h->yv[i] : h->xv[i]), i);
		fprintf(g, ")\n");
	}
	fprintf(g, "set palette defined (0 '#30123b', 0.25 '#4686fb', 0.5 '#1ae4b6', 0.75 '#faba39', 1 '#7a0403')\n");
	fprintf(g, "set cblabel 'misses'\n%s\nset key outside right bottom\n", lo > 0 && hi > 4 * lo ? "set logscale cb" : "");
	fprintf(g, "plot '%s/heat.dat' using 1:2:3 with image pixels notitle, '%s/picks.dat' using 1:2 with points pt 7 "
	           "ps 1.8 lc rgb '#ff0000' title 'tiles picks', '' using 1:2:3 with labels offset 0.9,0.9 tc rgb '#ffffff' notitle\n",
	        dir, dir);
	fprintf(g, "unset logscale\nset xtics autofreq\nset ytics autofreq\nset autoscale\nset key default\n");
}

static void gp_roofline(report *r, FILE *g, const char *dir)
{
	const roof *f = &r->rf;
	int nl = r->pr.nlevels, any = 0;
	FILE *d = plot_data(dir, "roof.dat");
	if (!d)
		return;
	double bw = f->bw_all > 0 ? f->bw_all : f->bw_core, peak = f->peak_all > 0 ? f->peak_all : f->peak_core;
	double lo_x = 1e300, hi_x = 0;
	for (int l = 0; l < nl; l++) {
		if (f->oi[l] <= 0 || (l > 0 && f->oi[l] == f->oi[l - 1]))
			continue; /* levels with the same traffic share a point, labelled L2-L3 */
		double y = f->ran ? f->gflops : (f->measured ? fmin(peak, bw * f->oi[l]) : 0);
		if (y <= 0)
			continue;
		int last = l;
		while (last + 1 < nl && f->oi[last + 1] == f->oi[l])
			last++;
		if (last > l)
			fprintf(d, "%.6g %.6g L%d-L%d\n", f->oi[l], y, l + 1, last + 1);
		else
			fprintf(d, "%.6g %.6g L%d\n", f->oi[l], y, l + 1);
		lo_x = fmin(lo_x, f->oi[l]);
		hi_x = fmax(hi_x, f->oi[l]);
		any = 1;
	}
	fclose(d);
	if (!f->measured && !any)
		return;
	char cap[512];
	snprintf(cap, sizeof cap,
	         "Roofline (%s): the probe's measured FMA peak and copy bandwidth; points: the kernel's flops per byte "
	         "moved out of each level (the model's misses x line), at %s",
	         f->dtype, f->ran ? "its measured speed" : "the bound (not run)");
	add_plot(r, "roofline", cap);
	double xmin = fmin(lo_x / 4, 1.0 / 16), xmax = fmax(hi_x * 4, 256);
	fprintf(g, "set output '%s/roofline.svg'\nset title 'roofline (%s)'\n", dir, f->dtype);
	fprintf(g, "set xlabel 'operational intensity (flop/byte)'\nset ylabel 'GFLOP/s'\nset logscale xy\n");
	fprintf(g, "set xrange [%g:%g]\nset key outside right top\nset samples 400\n", xmin, xmax);
	if (f->measured)
		fprintf(g, "set yrange [%g:%g]\n", fmin(0.05, f->bw_core * xmin / 2), peak * 2.5);
	fprintf(g, "roof(x,p,b) = (b*x < p ? b*x : p)\nplot ");
	const char *sep = "";
	if (f->measured) {
		fprintf(g, "roof(x,%g,%g) lw 2 lc rgb '#1f77b4' title '1 core: %.1f GFLOP/s, %.1f GB/s'", f->peak_core,
		        f->bw_core, f->peak_core, f->bw_core);
		sep = ", ";
		if (f->peak_all > 0 && f->bw_all > 0 && f->threads_all > 1)
			fprintf(g, ", roof(x,%g,%g) lw 2 dt 2 lc rgb '#2ca02c' title '%d threads: %.1f GFLOP/s, %.1f GB/s'",
			        f->peak_all, f->bw_all, f->threads_all, f->peak_all, f->bw_all);
	}
	if (any)
		fprintf(g, "%s'%s/roof.dat' using 1:2 with points pt %d ps 1.6 lc rgb '#d62728' title 'kernel %s', "
		           "'' using 1:2:3 with labels offset 1.5,0.8 notitle",
		        sep, dir, f->ran ? 7 : 6, f->ran ? "(measured)" : "(bound, not run)");
	fprintf(g, "\nunset logscale\nset autoscale\n");
}

static void gp_tuning(report *r, FILE *g, const char *dir)
{
	if (r->ntp == 0)
		return;
	FILE *d = plot_data(dir, "tune.dat");
	if (!d)
		return;
	int any = 0;
	double top = 0;
	for (int i = 0; i < r->ntp; i++)
		if (r->tp[i].ok && r->tp[i].gflops > 0) {
			fprintf(d, "%d %.6g\n", r->tp[i].rank, r->tp[i].gflops);
			top = fmax(top, r->tp[i].gflops);
			any = 1;
		}
	fclose(d);
	if (!any)
		return;
	char cap[256];
	snprintf(cap, sizeof cap,
	         "The tuner's measured points (the tuning store) against the model's ranking (fewest predicted misses "
	         "first); Kendall's tau of rank and time: %.2f",
	         r->tau);
	add_plot(r, "tuning", cap);
	fprintf(g, "set output '%s/tuning.svg'\nset title 'tuner: measured speed against model rank'\n", dir);
	fprintf(g, "set xlabel 'model rank (1 = fewest predicted misses)'\nset ylabel 'measured GFLOP/s'\n");
	fprintf(g, "set key outside right top\nset xrange [0:%d]\nset yrange [0:%g]\n", r->ntp + 1, top * 1.15);
	fprintf(g, "plot '%s/tune.dat' using 1:2 with points pt 7 ps 1.2 lc rgb '#1f77b4' title 'measured points'\n", dir);
	fprintf(g, "set autoscale\n");
}

/* Run gnuplot on script; 0 on success, else a note in r->plot_note. */
static int run_gnuplot(report *r, const char *dir, const char *script)
{
	char log[4096];
	snprintf(log, sizeof log, "%s/gnuplot.log", dir);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(r->plot_note, sizeof r->plot_note, "cannot start gnuplot: %s", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(r->plot_note, sizeof r->plot_note, "gnuplot is not installed (Debian package gnuplot-nox; make deps)");
		return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *msg = read_file(log);
		snprintf(r->plot_note, sizeof r->plot_note, "gnuplot failed: %.400s", msg ? msg : "");
		free(msg);
		return 0;
	}
	return 1;
}

/* gnuplot's SVG made to sit inside the page: from <svg on, its ids prefixed
 * with the plot's number so that the page's ids stay unique. */
static char *inline_svg(const char *text, int n)
{
	const char *s = strstr(text, "<svg");
	if (!s)
		return NULL;
	static const char *const ids[] = {"gpPt", "gpDot", "gnuplot_", "gpImage", "greybox", "textbox"};
	size_t cap = strlen(s) * 2 + 64, len = 0;
	char *out = malloc(cap), prefix[16];
	snprintf(prefix, sizeof prefix, "p%d", n);
	while (out && *s) {
		size_t k, hit = 0;
		for (k = 0; k < sizeof ids / sizeof ids[0]; k++)
			if (strncmp(s, ids[k], strlen(ids[k])) == 0)
				hit = 1;
		if (hit && len + strlen(prefix) + 1 < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s", prefix);
		if (len + 2 >= cap)
			break;
		out[len++] = *s++;
	}
	if (out)
		out[len] = 0;
	return out;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Every plot: data files and one gnuplot script in a private temp folder,
 * one gnuplot run, the SVGs read back; 0 when gnuplot failed. */
static int make_plots(report *r)
{
	double t0 = now_s();
	const char *tmp = getenv("TMPDIR");
	char dir[4096], script[4200];
	snprintf(dir, sizeof dir, "%s/cachet-report-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(r->plot_note, sizeof r->plot_note, "cannot make a temporary folder: %s", strerror(errno));
		return 0;
	}
	snprintf(script, sizeof script, "%s/plots.gp", dir);
	FILE *g = fopen(script, "w");
	if (!g) {
		remove_dir(dir);
		return 0;
	}
	fprintf(g, "set terminal svg size 760,420 noenhanced font 'sans,12' background '#ffffff'\n");
	fprintf(g, "set datafile missing '?'\nset grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n");
	for (int i = 0; i < r->nphases; i++)
		gp_phase(r, g, dir, i);
	gp_heat(r, g, dir);
	gp_roofline(r, g, dir);
	gp_tuning(r, g, dir);
	fclose(g);
	int ok = r->nplots == 0 || run_gnuplot(r, dir, script);
	for (int i = 0; ok && i < r->nplots; i++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%s.svg", dir, r->plot_id[i]);
		char *text = read_file(path);
		r->svg[i] = text ? inline_svg(text, i) : NULL;
		free(text);
	}
	remove_dir(dir);
	r->t_plot = now_s() - t0;
	return ok;
}

/* ------------------------------------------------------------ the HTML page */

static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if ((unsigned char)*s >= 32 || *s == '\n' || *s == '\t')
			fputc(*s, f);
	}
}

static const char page_style[] =
	"body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}"
	"h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:28px}"
	"pre{background:#f6f6f6;padding:8px;border:1px solid #ddd;overflow:auto;font-size:12px}"
	"table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
	"th{background:#eee}td.l{text-align:left}.note{color:#555;font-size:13px}"
	"figure{margin:12px 0}figure svg{width:760px;height:420px;display:block}"
	"figcaption{font-size:13px;color:#444;max-width:760px}.cols{display:flex;gap:16px;flex-wrap:wrap}"
	".cols>div{flex:1;min-width:420px}";

static void html_levels(FILE *f, const report *r)
{
	fputs("<table><tr><th>level</th><th>bytes</th><th>line</th><th>ways</th><th>misses</th><th>% of accesses</th>"
	      "<th>exact</th><th>source</th></tr>\n",
	      f);
	for (int l = 0; l < r->pr.nlevels; l++)
		fprintf(f,
		        "<tr><td class=\"l\">L%d</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.2f%%</td>"
		        "<td>%s</td><td class=\"l\">%s</td></tr>\n",
		        l + 1, (long long)r->pr.level[l].size, (long long)r->pr.level[l].line, (long long)r->pr.level[l].ways,
		        (long long)r->pr.level[l].misses,
		        r->pr.accesses ? 100.0 * (double)r->pr.level[l].misses / (double)r->pr.accesses : 0.0,
		        r->pr.level[l].exact ? "yes" : "no", level_source(r->pr.source[l]));
	fprintf(f, "</table>\n<p class=\"note\">%lld accesses; model %.3f ms.</p>\n", (long long)r->pr.accesses,
	        r->pr.seconds * 1e3);
}

static void html_refs(FILE *f, const report *r)
{
	int nl = r->pr.nlevels, shared = 0;
	fputs("<table id=\"per-ref\"><tr><th>reference</th><th>array</th><th>stmt</th><th>access</th><th>accesses</th>", f);
	for (int l = 0; l < nl; l++)
		fprintf(f, "<th>L%d misses</th><th>cold</th><th>capacity</th><th>reuse carried by</th>", l + 1);
	fputs("</tr>\n", f);
	for (int i = 0; i < r->rt.nrefs; i++) {
		const ct_ref_misses *m = &r->rt.refs[i];
		char where[512], carrier[128];
		shared |= m->split != CT_SPLIT_MODEL;
		fputs("<tr><td class=\"l\">", f);
		html_text(f, ref_where(r, m, where, sizeof where));
		fputs("</td><td class=\"l\">", f);
		html_text(f, m->array);
		fprintf(f, "</td><td>%d</td><td class=\"l\">%s%s</td><td>%lld</td>", m->stmt, ref_access(m),
		        m->split == CT_SPLIT_SIM ? " *" : m->split == CT_SPLIT_ACCESSES ? " **" : "", (long long)m->accesses);
		for (int l = 0; l < nl; l++) {
			fprintf(f, "<td>%lld</td><td>%lld</td><td>%lld</td><td class=\"l\">", (long long)m->misses[l],
			        (long long)m->cold[l], (long long)(m->misses[l] - m->cold[l]));
			html_text(f, carrier_text(m, l, carrier, sizeof carrier));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (shared)
		fputs("<p class=\"note\">The model counts per array; an array's counts are shared out over its references "
		      "by an exact simulation (*) or by accesses (**).</p>\n",
		      f);
}

static void html_plot(FILE *f, const report *r, const char *id_prefix)
{
	for (int i = 0; i < r->nplots; i++) {
		if (strncmp(r->plot_id[i], id_prefix, strlen(id_prefix)) != 0)
			continue;
		fprintf(f, "<figure class=\"plot\" id=\"plot-%s\">\n", r->plot_id[i]);
		if (r->svg[i])
			fputs(r->svg[i], f);
		else
			fputs("<p class=\"note\">(no plot)</p>", f);
		fputs("\n<figcaption>", f);
		html_text(f, r->plot_caption[i]);
		fputs("</figcaption></figure>\n", f);
	}
}

static int has_plot(const report *r, const char *id_prefix)
{
	for (int i = 0; i < r->nplots; i++)
		if (strncmp(r->plot_id[i], id_prefix, strlen(id_prefix)) == 0)
			return 1;
	return 0;
}

static void html_note(FILE *f, const char *note)
{
	fputs("<p class=\"note\">", f);
	html_text(f, note);
	fputs("</p>\n", f);
}

static void html_tuning(FILE *f, const report *r)
{
	fputs("<h2 id=\"tuning\">Tuner's measured points</h2>\n", f);
	if (r->ntp == 0) {
		html_note(f, r->tune_note);
		return;
	}
	html_plot(f, r, "tuning");
	fputs("<table><tr><th>params</th><th>model rank</th><th>measured s</th><th>GFLOP/s</th><th>verified</th></tr>\n", f);
	for (int i = 0; i < r->ntp; i++) {
		const tpoint *p = &r->tp[i];
		fputs("<tr><td class=\"l\">", f);
		html_text(f, p->params);
		fprintf(f, "</td><td>%d</td><td>%.4g</td><td>%.3g</td><td>%d</td></tr>\n", p->rank, p->seconds, p->gflops,
		        p->verified);
	}
	fputs("</table>\n", f);
}

static int write_html(const report *r)
{
	FILE *f = fopen(r->o.out, "w");
	if (!f) {
		fprintf(stderr, "%s: error: cannot write the report: %s\n", r->o.out, strerror(errno));
		return 0;
	}
	const char *name = ct_kernel_name(r->k);
	fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<title>cachet report: ",
	      f);
	html_text(f, name);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>cachet report: ", page_style);
	html_text(f, name);
	fputs("</h1>\n<p class=\"note\">", f);
	html_text(f, r->o.file);
	fputs(" &#8212; params:", f);
	for (int i = 0; i < ct_kernel_param_count(r->k); i++) {
		fputc(' ', f);
		html_text(f, ct_kernel_param_name(r->k, i));
		fprintf(f, "=%lld", (long long)ct_kernel_param_value(r->k, i, NULL));
	}
	fprintf(f, ". Made in %.2f s (model %.2f s, simulator %.2f s, probe %.2f s, run %.2f s, plots %.2f s).</p>\n",
	        r->t_total, r->t_model, r->t_sim, r->t_probe, r->t_run, r->t_plot);
	fputs("<h2 id=\"kernel\">Kernel and its lowered loop tree</h2>\n<div class=\"cols\"><div><pre id=\"source\">", f);
	html_text(f, r->src);
	fputs("</pre></div><div><pre id=\"looptree\">", f);
	html_text(f, r->tree ? r->tree : "(the kernel could not be lowered)");
	fputs("</pre></div></div>\n<h2 id=\"levels\">Misses per level</h2>\n", f);
	html_levels(f, r);
	fputs("<h2 id=\"references\">Misses per reference</h2>\n", f);
	html_refs(f, r);
	fputs("<h2 id=\"phases\">Misses against tile sizes</h2>\n", f);
	if (r->plot_note[0])
		html_note(f, r->plot_note);
	if (has_plot(r, "phase-"))
		html_plot(f, r, "phase-");
	else
		html_note(f, r->have_tiles ? "no tile size could be counted" : r->tiles_note);
	fputs("<h2 id=\"heat\">Misses over two tile sizes</h2>\n", f);
	if (has_plot(r, "heatmap"))
		html_plot(f, r, "heatmap");
	else
		html_note(f, r->have_tiles ? "fewer than two tile params: no heat map" : r->tiles_note);
	fputs("<h2 id=\"roof\">Roofline</h2>\n", f);
	if (has_plot(r, "roofline"))
		html_plot(f, r, "roofline");
	else
		html_note(f, "no roofline: the probe measured no peak and the kernel's flops are unknown");
	html_note(f, r->rf.note);
	html_tuning(f, r);
	fputs("</body>\n</html>\n", f);
	int ok = !ferror(f);
	return fclose(f) == 0 && ok;
}

/* ------------------------------------------------------------ the command */

static void report_free(report *r)
{
	for (int i = 0; i < r->nplots; i++)
		free(r->svg[i]);
	free(r->tp);
	free(r->hm.cell);
	ct_tiles_result_free(&r->tr);
	ct_ref_table_free(&r->rt);
	ct_predict_result_free(&r->pr);
	free(r->src);
	free(r->tree);
	free(r->tree_json);
	ct_kernel_free(r->k);
	ct_ctx_free(r->ctx);
}

static int load(report *r)
{
	r->ctx = ct_ctx_new();
	if (!r->ctx)
		return RC_FAILED;
	r->k = ct_kernel_parse_file(r->ctx, r->o.file);
	if (!r->k)
		return fail(r->ctx, ct_ctx_last_status(r->ctx));
	ct_status st = CT_OK;
	for (int i = 0; i < r->o.ndefs && !st; i++)
		st = ct_kernel_set_param(r->k, r->o.names[i], r->o.values[i]);
	if (!st && r->o.ndefs)
		st = ct_kernel_recheck(r->k);
	if (st)
		return fail(r->ctx, st);
	r->src = read_file(r->o.file);
	return RC_OK;
}

int cachet_report_main(int argc, char **argv)
{
	report *r = calloc(1, sizeof *r);
	if (!r)
		return RC_FAILED;
	double t0 = now_s();
	int rc = parse_opts(&r->o, argc, argv);
	if (rc < 0) {
		free(r);
		return RC_OK;
	}
	if (rc == RC_OK)
		rc = load(r);
	if (rc == RC_OK) {
		ct_status st = ct_kernel_predict_refs(r->k, r->o.cache, -1, &r->pr, &r->rt);
		if (st != CT_OK)
			rc = fail(r->ctx, st);
	}
	if (rc == RC_OK) {
		lower_tree(r);
		search_tiles(r);
		double deadline = now_s() + MODEL_BUDGET_S;
		if (r->have_tiles) {
			sweep_phases(r, deadline);
			heat_map(r, deadline);
		}
		roofline(r);
		tuning_points(r);
		if (r->o.out && !make_plots(r)) {
			fprintf(stderr, "cachet: error: %s\n", r->plot_note);
			rc = RC_FAILED;
		}
		r->t_total = now_s() - t0;
		if (rc == RC_OK && r->o.out && !write_html(r))
			rc = RC_FAILED;
		if (rc == RC_OK && r->o.csv_dir && !write_csv(r))
			rc = RC_FAILED;
		if (rc == RC_OK && r->o.json)
			write_json(stdout, r);
	}
	report_free(r);
	free(r);
	return rc;
}
