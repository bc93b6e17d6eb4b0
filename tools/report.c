/* report.c: `cachet report`'s front: its options, loading the kernel, and the order in which the
 * data is gathered (report_data.c), drawn (report_plot.c) and written (report_html.c, report_out.c). */
#include "report_int.h"

double now_s(void)
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
	return EXIT_BAD_INPUT;
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
	if (!eq || eq == arg)
		return usage("-D expects NAME=INTEGER, not '%s'", arg);
	int64_t v;
	if (!parse_literal(eq + 1, &v))
		return usage("-D expects NAME=INTEGER (decimal without a leading zero, or 0x hexadecimal, as in "
		             "the kernel language), not '%s'", arg);
	if (o->ndefs >= MAX_DEFS)
		return usage("too many -D options (%s)", arg);
	*eq = 0;
	o->names[o->ndefs] = arg;
	o->values[o->ndefs++] = v;
	return EXIT_OK;
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
			if ((rc = parse_define(o, optarg)) != EXIT_OK)
				return rc;
			break;
		case 'o':
			if (!*optarg)
				return usage("%s expects a file name", "-o");
			o->out = optarg;
			break;
		case 'h': printf("%s%s", usage_text, help_text); return -1;
		case OPT_JSON: o->json = 1; break;
		case OPT_CSV: /* "" would put the files in / */
			if (!*optarg)
				return usage("%s expects a folder", "--csv");
			o->csv_dir = optarg;
			break;
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
	return EXIT_OK;
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
	json_decref(r->tree_doc);
	ct_kernel_free(r->k);
	signal_ctx = NULL;
	ct_ctx_free(r->ctx);
}

static int load(report *r)
{
	r->ctx = ct_ctx_new();
	if (!r->ctx)
		return EXIT_FAILED;
	signal_ctx = r->ctx;
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
	r->src = read_path(r->o.file, SIZE_MAX, NULL);
	return EXIT_OK;
}

static const char *const csv_names[] = {"levels.csv", "per_ref.csv", "phases.csv",
                                        "heatmap.csv", "roofline.csv", "tuning.csv"};

/* Whether path can take the output: not the kernel file itself (exit 2), its
 * folder made and writable (a probe file, removed; exit 1) — checked before
 * minutes of work, not after. */
static int check_output(const opts *o, const char *path)
{
	struct stat sb;
	if (same_file(path, o->file)) {
		fprintf(stderr, "cachet: error: the output %s is the kernel file itself\n", path);
		return EXIT_BAD_INPUT;
	}
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "cachet: error: the output %s is a folder\n", path);
		return EXIT_BAD_INPUT;
	}
	if (!make_parents(path, 0))
		return EXIT_FAILED;
	if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return EXIT_OK; /* a device or a link (/dev/stdout): written in place, not probed */
	atomic_file probe;
	if (!atomic_open(&probe, path))
		return EXIT_FAILED;
	atomic_abort(&probe);
	return EXIT_OK;
}

static int check_outputs(const opts *o)
{
	int rc = o->out ? check_output(o, o->out) : EXIT_OK;
	for (size_t i = 0; !rc && o->csv_dir && i < sizeof csv_names / sizeof csv_names[0]; i++) {
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", o->csv_dir, csv_names[i]) >= (int)sizeof path) {
			fprintf(stderr, "cachet: error: --csv: the folder name is too long\n");
			return EXIT_BAD_INPUT;
		}
		rc = check_output(o, path);
	}
	return rc;
}

int cachet_report_main(int argc, char **argv)
{
	report *r = calloc(1, sizeof *r);
	if (!r)
		return EXIT_FAILED;
	double t0 = now_s();
	int rc = parse_opts(&r->o, argc, argv);
	if (rc < 0) {
		free(r);
		return EXIT_OK;
	}
	if (rc == EXIT_OK)
		rc = load(r);
	if (rc == EXIT_OK)
		rc = check_outputs(&r->o);
	if (rc == EXIT_OK) {
		ct_status st = ct_kernel_predict_refs(r->k, r->o.cache, -1, &r->pr, &r->rt);
		if (st == CT_ERR_USAGE) {
			/* no per-reference table for this kernel (affine loop bounds): the totals alone */
			snprintf(r->refs_note, sizeof r->refs_note, "no per-reference table: %s",
			         ct_ctx_last_message(r->ctx));
			ct_ctx_clear_error(r->ctx);
			st = ct_kernel_predict(r->k, r->o.cache, &r->pr);
		}
		if (st != CT_OK)
			rc = fail(r->ctx, st);
	}
	if (rc == EXIT_OK) {
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
			rc = EXIT_FAILED;
		}
		r->t_total = now_s() - t0;
		if (rc == EXIT_OK && r->o.out && !write_html(r))
			rc = EXIT_FAILED;
		if (rc == EXIT_OK && r->o.csv_dir && !write_csv(r))
			rc = EXIT_FAILED;
		if (rc == EXIT_OK && r->o.json && !write_json(stdout, r)) {
			fprintf(stderr, "cachet: error: out of memory\n");
			rc = EXIT_FAILED;
		}
	}
	report_free(r);
	free(r);
	return rc;
}
