/* cmd_tune.c: `cachet tune`: tuning size sets with progress, and the store's --show, --export and --import. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ tune */

/* Progress of a tuning run on stderr: on a terminal one line redrawn in
 * place, else one plain line per candidate measured; nothing with --quiet. */
typedef struct tune_view {
	int tty;
} tune_view;

/* The ranking phase, on a terminal only. */
static void tune_progress(void *ud, const char *phase, int done, int total)
{
	const tune_view *v = ud;
	if (!v->tty || strcmp(phase, "model") != 0)
		return;
	fprintf(stderr, "\rranking by the model %d/%d\033[K", done, total);
	progress_drawn = 1;
	fflush(stderr);
}

/* "0.59 ms" or "1.23 s". */
static void put_time_s(char *out, size_t n, double s)
{
	if (s < 1)
		snprintf(out, n, "%.3g ms", s * 1e3);
	else
		snprintf(out, n, "%.3g s", s);
}

static void put_point(char *out, size_t n, const ct_tune_result *r, const ct_tune_candidate *c)
{
	size_t len = 0;
	out[0] = 0;
	for (int i = 0; i < r->nparams && len < n; i++) {
		int w = snprintf(out + len, n - len, "%s%s=%lld", i ? " " : "", r->params[i], (long long)c->values[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

/* "[12/48] TI=32 TJ=64 TK=32  0.59 ms  best 0.55 ms (TI=64 ...)  18 s left" */
static void tune_measured(void *ud, const ct_tune_result *r, int i, double left)
{
	const tune_view *v = ud;
	const ct_tune_candidate *c = &r->candidates[i];
	char pt[256], t[32], bp[256] = "", bt[32] = "", what[64];
	put_point(pt, sizeof pt, r, c);
	put_time_s(t, sizeof t, c->seconds);
	if (c->verified == 0)
		snprintf(what, sizeof what, "WRONG (discarded)");
	else if (!(c->seconds > 0))
		snprintf(what, sizeof what, "did not run");
	else if (c->abandoned)
		snprintf(what, sizeof what, "%s abandoned", t);
	else
		snprintf(what, sizeof what, "%s", t);
	if (r->best >= 0) {
		put_point(bp, sizeof bp, r, &r->candidates[r->best]);
		put_time_s(bt, sizeof bt, r->candidates[r->best].seconds);
	}
	fprintf(stderr, "%s[%d/%d] %s  %s", v->tty ? "\r" : "", r->nmeasured, r->ncandidates, pt, what);
	if (r->best >= 0)
		fprintf(stderr, "  best %s (%s)", bt, bp);
	fprintf(stderr, "  %.0f s left%s", left > 0 ? left : 0, v->tty ? "\033[K" : "\n");
	progress_drawn = v->tty;
	fflush(stderr);
}

/* The size params' names of k ("M", "N", "K") and their values (vals may
 * be NULL), from its size class. */
static int size_names(ct_kernel *k, char names[][64], int64_t *vals, int most)
{
	char cls[512];
	if (ct_kernel_tune_key(k, NULL, 0, cls, sizeof cls, NULL))
		return -1;
	int n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(cls, ":", &save); tok && n < most; tok = strtok_r(NULL, ":", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq = 0;
		if (vals)
			vals[n] = eq ? strtoll(eq + 1, NULL, 10) : 0;
		snprintf(names[n++], 64, "%s", tok);
	}
	return n;
}

/* An error about --sizes (exit 2). */
static int sizes_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sizes_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "cachet: error: --sizes: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return EXIT_BAD_INPUT;
}

/* One size value of --sizes: 1 or more (exit code, after a message). */
static int size_value(const char *tok, size_t len, int64_t *v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), tok);
	if (!parse_literal(buf, v))
		return sizes_error("'%s' is not a number (decimal without a leading zero, or 0x hexadecimal)", buf);
	if (*v < 1)
		return sizes_error("%s is not a size (a size is 1 or more)", buf);
	return EXIT_OK;
}

/* Apply one --sizes set to k: "n" (every size param n), "M=64:N=128"
 * (those params; the others keep their values) or "64x48x32" (the size
 * params in order). base[] holds the values the others keep. Exit code. */
static int apply_sizes(ct_ctx *ctx, ct_kernel *k, const char *set, size_t len, const int64_t *base)
{
	char names[32][64];
	int n = size_names(k, names, NULL, 32);
	if (n < 0)
		return fail(ctx, ct_ctx_last_status(ctx));
	if (n == 0)
		return sizes_error("kernel '%s' has no size param (every param is tunable or derived)",
		                   ct_kernel_name(k));
	if (len == 0)
		return sizes_error("an empty size set (a ',' too many?)");
	char list[512] = "";
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
	int64_t v[32];
	memcpy(v, base, sizeof *v * (size_t)n);
	int rc;
	if (memchr(set, '=', len)) {
		int seen[32] = {0};
		for (const char *p = set, *end = set + len; p < end;) {
			const char *e = memchr(p, ':', (size_t)(end - p));
			size_t l = e ? (size_t)(e - p) : (size_t)(end - p);
			const char *eq = memchr(p, '=', l);
			int at = -1;
			for (int i = 0; eq && i < n; i++)
				if (strlen(names[i]) == (size_t)(eq - p) && strncmp(names[i], p, (size_t)(eq - p)) == 0)
					at = i;
			if (at < 0)
				return sizes_error("'%.*s' does not name a size param of '%s' (%s)", (int)l, p,
				                   ct_kernel_name(k), list);
			if (seen[at]++)
				return sizes_error("'%.*s' sets %s twice", (int)len, set, names[at]);
			if ((rc = size_value(eq + 1, l - (size_t)(eq + 1 - p), &v[at])))
				return rc;
			p += l + (e ? 1 : 0);
		}
	} else if (memchr(set, 'x', len)) {
		int got = 0;
		for (const char *p = set, *end = set + len; p <= end; got++) {
			const char *e = memchr(p, 'x', (size_t)(end - p));
			size_t l = e ? (size_t)(e - p) : (size_t)(end - p);
			if (got < n && (rc = size_value(p, l, &v[got])))
				return rc;
			p += l + 1;
		}
		if (got != n)
			return sizes_error("'%.*s' is not one value per size param (%d values for %s; "
			                   "e.g. %s)", (int)len, set, got, list, n == 3 ? "256x256x256" : "a plain 256");
	} else {
		if ((rc = size_value(set, len, &v[0])))
			return rc;
		for (int i = 1; i < n; i++)
			v[i] = v[0];
	}
	ct_status st = CT_OK;
	for (int i = 0; i < n && !st; i++)
		st = ct_kernel_set_param(k, names[i], v[i]);
	if (!st)
		st = ct_kernel_recheck(k);
	return st ? fail(ctx, st) : EXIT_OK;
}

/* A file without tunable params may have a tunable variant next to it
 * (examples/sgemm.cachet, examples/sgemm_tune.cachet): say so. */
static void tune_variant_note(ct_ctx *ctx, const cli *c)
{
	size_t n = c->file ? strlen(c->file) : 0;
	const char *msg = ct_ctx_last_message(ctx);
	if (n < 8 || strcmp(c->file + n - 7, ".cachet") != 0 || !msg || !strstr(msg, "has no tunable param"))
		return;
	char alt[4096];
	snprintf(alt, sizeof alt, "%.*s_tune.cachet", (int)(n - 7), c->file);
	if (access(alt, R_OK) == 0)
		fprintf(stderr, "cachet: note: %s is its variant with the blocking as tune params\n", alt);
}

static void tune_options(cli *c, ct_tune_options *o, double budget, tune_view *view)
{
	ct_tune_options_init(o);
	o->budget = budget;
	o->cache_spec = c->cache_spec;
	o->threads = c->run.threads;
	view->tty = isatty(2);
	o->progress_ud = view;
	if (!c->quiet) {
		o->progress = tune_progress;
		o->on_measure = tune_measured;
	}
}

static int tune_one(ct_ctx *ctx, ct_kernel *k, cli *c, double budget)
{
	ct_tune_options o;
	tune_view view;
	tune_options(c, &o, budget, &view);
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	if (progress_drawn) {
		fprintf(stderr, "\r\033[K"); /* the report follows on stdout */
		progress_drawn = 0;
	}
	if (st) {
		int rc = fail(ctx, st);
		tune_variant_note(ctx, c);
		return rc;
	}
	int rc = r.best >= 0 ? EXIT_OK : EXIT_FAILED;
	if ((st = ct_tune_print(&r, c->json ? CT_FORMAT_JSON : CT_FORMAT_TEXT, stdout)) != CT_OK) {
		print_error(ctx);
		rc = EXIT_FAILED; /* the result was not printed */
	}
	ct_tune_result_free(&r);
	return rc;
}

/* Every set is checked first (syntax, values, the kernel's checks, the
 * arrays' total), so that a bad one is refused before any is tuned. */
static int check_sets(ct_ctx *ctx, ct_kernel *k, cli *c, const int64_t *base, int *nsets)
{
	*nsets = 0;
	for (const char *p = c->sizes;; (*nsets)++) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int rc = apply_sizes(ctx, k, p, len, base);
		if (rc)
			return rc;
		ct_tune_options o;
		ct_tune_options_init(&o);
		o.check_only = 1;
		ct_tune_result r;
		ct_status st = ct_tune(k, &o, &r);
		ct_tune_result_free(&r);
		if (st) {
			if (ct_ctx_last_status(ctx) == CT_ERR_LIMIT)
				fprintf(stderr, "cachet: error: --sizes %.*s: %s\n", (int)len, p, ct_ctx_last_message(ctx));
			else
				print_error(ctx);
			return exit_code(st);
		}
		if (!e) {
			(*nsets)++;
			return EXIT_OK;
		}
		p = e + 1;
	}
}

static int tune_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	double budget = c->budget > 0 ? c->budget : 60;
	if (c->export_path || c->import_path)
		return usage_error("%s", "tune --export and --import take no kernel to tune (FILE names the family to export)");
	if (!c->sizes)
		return tune_one(ctx, k, c, budget);
	char names[32][64];
	int64_t base[32];
	if (size_names(k, names, base, 32) < 0)
		return fail(ctx, ct_ctx_last_status(ctx));
	int nsets = 0, rc = check_sets(ctx, k, c, base, &nsets);
	if (rc)
		return rc;
	const char *p = c->sizes;
	for (int i = 0; i < nsets; i++) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if ((rc = apply_sizes(ctx, k, p, len, base)))
			return rc;
		/* the budget is shared evenly by the size sets */
		int r1 = tune_one(ctx, k, c, budget / nsets);
		if (r1 > rc)
			rc = r1;
		p = e ? e + 1 : p + len;
	}
	return rc;
}

/* The family of FILE (for --show and --export), "" without one. */
static int file_family(ct_ctx *ctx, cli *c, char *family, size_t n)
{
	family[0] = 0;
	if (!c->file)
		return EXIT_OK;
	int rc;
	ct_kernel *k = load_kernel(ctx, c, &rc);
	if (!k)
		return rc;
	ct_status st = ct_kernel_tune_key(k, family, n, NULL, 0, NULL);
	ct_kernel_free(k);
	return st ? fail(ctx, st) : EXIT_OK;
}

/* --export, --import and --show: the store without tuning. */
static int store_command(ct_ctx *ctx, cli *c)
{
	char family[128];
	int rc = file_family(ctx, c, family, sizeof family);
	if (rc)
		return rc;
	if (c->import_path && c->file)
		return usage_error("%s", "tune --import takes no FILE (the records name their families)");
	ct_store *s = ct_store_open(ctx, NULL, c->import_path ? 0 : CT_STORE_READONLY);
	if (!s)
		return fail(ctx, ct_ctx_last_status(ctx));
	ct_status st = CT_OK;
	if (c->import_path) {
		int kept = 0, total = 0;
		st = ct_store_import(s, c->import_path, c->force, &kept, &total);
		if (!st)
			printf("imported %d of %d record%s from %s into %s\n", kept, total, total == 1 ? "" : "s",
			       c->import_path, ct_store_path(s));
	} else if (c->export_path) {
		st = ct_store_export(s, family[0] ? family : NULL, c->export_path);
		if (!st)
			printf("exported the records of %s to %s\n", ct_store_path(s), c->export_path);
		if (st == CT_ERR_IO) { /* an output that cannot be written: 1, as report's and build's */
			print_error(ctx);
			ct_store_close(s);
			return EXIT_FAILED;
		}
	} else {
		st = ct_store_print(s, family[0] ? family : NULL, c->json ? CT_FORMAT_JSON : CT_FORMAT_TEXT, stdout);
	}
	ct_store_close(s);
	return st ? fail(ctx, st) : EXIT_OK;
}

/* The options of a tuning run that --show, --export and --import cannot
 * honour, with their names: refused rather than ignored. */
static const struct {
	unsigned bit;
	const char *name;
} tuning_only[] = {
	{O_SIZES, "--sizes"}, {O_BUDGET, "--budget"}, {O_CACHE, "--cache"}, {O_THREADS, "--threads"},
	{O_CC, "--cc"}, {O_VECTOR_BYTES, "--vector-bytes"}, {O_QUIET, "--quiet"},
};

int cmd_tune(cli *c)
{
	if (c->force && !c->import_path)
		return usage_error("%s", "tune --force goes with --import");
	if (!c->show && !c->export_path && !c->import_path)
		return with_kernel(c, tune_kernel);
	if (c->show + !!c->export_path + !!c->import_path > 1)
		return usage_error("%s", "tune: one of --show, --export, --import at a time");
	const char *what = c->show ? "--show" : c->export_path ? "--export" : "--import";
	for (size_t i = 0; i < sizeof tuning_only / sizeof tuning_only[0]; i++)
		if (c->given & tuning_only[i].bit) {
			fprintf(stderr, "cachet: error: 'cachet tune %s' tunes nothing: %s does not apply to it\n"
			        "(run 'cachet tune --help' for usage)\n", what, tuning_only[i].name);
			return EXIT_BAD_INPUT;
		}
	if (c->json && !c->show) /* the export is JSON already; an import prints one line */
		return usage_error("'cachet tune %s' takes no --json (--show --json prints the store as JSON)", what);
	if ((c->given & O_D) && !c->file)
		return usage_error("'cachet tune %s' takes -D only with a FILE (its family)", what);
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc = store_command(ctx, c);
	ct_ctx_free(ctx);
	return rc;
}
