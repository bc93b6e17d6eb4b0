/* report_int.h: what the files of `cachet report` share: its limits, the report's data and the functions
 * one file calls in another (report.c, report_data.c, report_plot.c, report_html.c, report_out.c). */
#ifndef CACHET_TOOLS_REPORT_INT_H
#define CACHET_TOOLS_REPORT_INT_H

#include "report.h"

#include "cachet.h"
#include "cli.h"

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
	char *src, *tree;
	json_t *tree_doc; /* the lowered tree as JSON, parsed once: the sweeps read their extents from it */
	ct_predict_result pr;
	ct_ref_table rt;
	char refs_note[512]; /* why there is no per-reference table ("" when there is one) */
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

/* The kernel file the per-reference rows name (the table's, else the command line's). */
static inline const char *report_file(const report *r)
{
	return r->rt.file ? r->rt.file : r->o.file;
}

/* report.c */
/* Seconds on the monotonic clock (the report's timings). */
double now_s(void);

/* report_data.c: each fills its part of r; what it cannot get becomes a note, never an error. */
/* The lowered loop tree as text and as a JSON document (r->tree, r->tree_doc). */
void lower_tree(report *r);
/* The tile search (r->tr, r->have_tiles, r->tiles_note). */
void search_tiles(report *r);
/* Misses against each tile param, the others at the file's values (r->ph); model time until deadline. */
void sweep_phases(report *r, double deadline);
/* The heat map over the first two tile params (r->hm); model time until deadline. */
void heat_map(report *r, double deadline);
/* The probe's peaks and bandwidth, the model's intensity per level, one timed run (r->rf). */
void roofline(report *r);
/* The tuning store's measured points for this kernel, against the model's ranking (r->tp). */
void tuning_points(report *r);

/* report_plot.c */
/* Every plot drawn by one gnuplot run into r->svg; 0 (r->plot_note says why) when gnuplot failed. */
int make_plots(report *r);

/* report_html.c */
/* The HTML page r->o.out; 0 when it cannot be written. */
int write_html(const report *r);

/* report_out.c */
/* The report's data as one JSON object (one line) on f. */
int write_json(FILE *f, const report *r);
/* The CSV files of --csv DIR; 0 when one cannot be written. */
int write_csv(const report *r);

#endif
