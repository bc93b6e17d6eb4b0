/* cachet.c: the command-line tool (argument parsing and library calls only). */
#include "cachet.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Exit codes of CLI.md. */
enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_BAD_INPUT = 2 };

#define MAX_DEFINES 64

typedef struct define {
	const char *name;
	int64_t value;
} define;

/* Everything a command line can say; each command uses what it needs. */
typedef struct cli {
	const char *cmd;
	const char *file;
	define defs[MAX_DEFINES];
	int ndefs;
	int json;
	ct_run_options run;
	const char *target;
	const char *out_dir;
	const char *cache_spec;
	int simulate;
	int per_ref;
	int64_t max_tile;
	const char *sizes;
	double budget;
	const char *sub;      /* cache subcommand */
	const char *cc;       /* --cc: compiler command for generated code */
	int64_t vector_bytes; /* --vector-bytes: widest register-tile vector (0 = the machine's) */
	int show;             /* tune --show */
	int quiet;            /* tune --quiet: no progress lines */
	int force;            /* tune --import --force: records of another device too */
	const char *export_path; /* tune --export FILE.json */
	const char *import_path; /* tune --import FILE.json */
	int branching;        /* --branching: CT_OPT_BRANCHING (tested copies and boundary ifs) */
	int help;
	unsigned accepts; /* the command's O_* and A_* bits */
} cli;

/* What a command accepts: one bit per option, and its positional words. */
enum {
	O_D = 1u << 0, O_BRANCHING = 1u << 1, O_JSON = 1u << 2, O_NO_VERIFY = 1u << 3,
	O_SIMULATE = 1u << 4, O_SHOW = 1u << 5, O_ENGINE = 1u << 6, O_REPEAT = 1u << 7,
	O_THREADS = 1u << 8, O_VECTOR_BYTES = 1u << 9, O_TARGET = 1u << 10, O_CACHE = 1u << 11,
	O_CC = 1u << 12, O_MAX = 1u << 13, O_SIZES = 1u << 14, O_BUDGET = 1u << 15, O_OUT = 1u << 16,
	O_QUIET = 1u << 17, O_FORCE = 1u << 18, O_EXPORT = 1u << 19, O_IMPORT = 1u << 22,
	O_PER_REF = 1u << 23,
	A_FILE = 1u << 20, /* one kernel FILE ('-' = stdin) */
	A_SUB = 1u << 21   /* one subcommand word (cache) */
};

/* Option spellings and their bits; -D is matched as a prefix (-DN=1). */
static const struct option_name {
	const char *name;
	unsigned bit;
} option_names[] = {
	{"--branching", O_BRANCHING}, {"--json", O_JSON}, {"--no-verify", O_NO_VERIFY},
	{"--simulate", O_SIMULATE}, {"--show", O_SHOW}, {"--engine", O_ENGINE}, {"--repeat", O_REPEAT},
	{"--threads", O_THREADS}, {"--vector-bytes", O_VECTOR_BYTES}, {"--target", O_TARGET},
	{"--cache", O_CACHE}, {"--cc", O_CC}, {"--max", O_MAX}, {"--sizes", O_SIZES},
	{"--budget", O_BUDGET}, {"-o", O_OUT}, {"--output", O_OUT}, {"--quiet", O_QUIET},
	{"--force", O_FORCE}, {"--export", O_EXPORT}, {"--import", O_IMPORT},
	{"--per-ref", O_PER_REF},
};

/* One command: name, one-line summary, usage, flags it accepts, handler. */
typedef struct command {
	const char *name;
	const char *summary;
	const char *usage;
	const char *details;
	int (*fn)(cli *c);
	unsigned accepts; /* O_* and A_* bits */
} command;

static const command *find_command(const char *name);
static void quiet(void *ud, const char *msg);
static void print_command_help(FILE *f, const command *cmd);

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "cachet: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(run 'cachet --help' for usage)\n");
	return EXIT_BAD_INPUT;
}

/* The text of the kernel the command works on, for the source line under
 * an error that is not a parse diagnostic (a plan verb's, tiles'): stdin's
 * text as read, a file's read back when such an error needs it. */
static struct {
	char *name;
	char *text;
	size_t len;
} source;

/* Whether a progress line is on stderr, not yet wiped (verify_progress). */
static int progress_drawn;

/* Kernel text read from stdin is refused beyond this (a file's limit is the library's). */
#define MAX_STDIN_BYTES ((size_t)16 << 20)

/* All of f (at most max bytes; NULL with errno set when more, or on a read error). */
static char *read_all(FILE *f, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			char *nb = cap < max ? realloc(buf, cap * 2 + 1) : NULL;
			if (!nb) {
				free(buf);
				errno = cap < max ? ENOMEM : EFBIG;
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		int err = errno;
		free(buf);
		errno = err ? err : EIO;
		return NULL;
	}
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

/* Keep text (taken) as the source named name. */
static void keep_source(const char *name, char *text, size_t len)
{
	free(source.name);
	free(source.text);
	source.name = strdup(name);
	source.text = text;
	source.len = len;
}

/* The source text of file (read on first need); NULL if it cannot be had. */
static const char *source_of(const char *file, size_t *len)
{
	if (!source.name || strcmp(source.name, file) != 0) {
		FILE *f = strcmp(file, "<stdin>") != 0 ? fopen(file, "rb") : NULL;
		size_t n = 0;
		char *t = f ? read_all(f, MAX_STDIN_BYTES, &n) : NULL;
		if (f)
			fclose(f);
		if (!t)
			return NULL;
		keep_source(file, t, n);
	}
	*len = source.len;
	return source.text;
}

/* "FILE:LINE:COL: error: MSG", then the source line and a caret under
 * COL, as the library renders parse diagnostics (ct_ctx_diag_render). */
static void print_located(const char *file, int line, int col, const char *msg)
{
	fprintf(stderr, "%s:%d:%d: error: %s\n", file, line, col, msg);
	size_t len;
	const char *t = source_of(file, &len), *end = t ? t + len : NULL;
	for (int l = 1; t && l < line && t < end; t++)
		if (*t == '\n')
			l++;
	if (!t || (t >= end && line > 1))
		return;
	const char *e = t;
	while (e < end && *e != '\n')
		e++;
	if (e - t >= 400)
		return;
	fputs("  ", stderr);
	for (const char *q = t; q < e; q++)
		fputc(*q == '\t' || (*q >= 32 && *q < 127) ? *q : '?', stderr);
	fputs("\n  ", stderr);
	for (int k = 1; k < col && t + k - 1 < e; k++)
		fputc(t[k - 1] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

/* Print the last error of ctx: every diagnostic of a parse (with carets,
 * then how many more were found than kept), else the error alone, with
 * its source line when it has a position. */
static void print_error(ct_ctx *ctx)
{
	if (progress_drawn) { /* a run that failed half-way: the error gets a line of its own */
		fputc('\n', stderr);
		progress_drawn = 0;
	}
	int n = ct_ctx_diag_count(ctx), more = ct_ctx_diag_suppressed(ctx);
	if (n > 0) {
		for (int i = 0; i < n; i++)
			fprintf(stderr, "%s\n", ct_ctx_diag_render(ctx, i));
		if (more > 0)
			fprintf(stderr, "%d errors (the first %d shown, %d more suppressed)\n", n + more, n, more);
		else if (n > 1)
			fprintf(stderr, "%d errors\n", n);
		return;
	}
	const char *file = ct_ctx_last_file(ctx);
	if (file[0] && ct_ctx_last_line(ctx) > 0)
		print_located(file, ct_ctx_last_line(ctx), ct_ctx_last_col(ctx), ct_ctx_last_message(ctx));
	else if (file[0])
		fprintf(stderr, "%s: error: %s\n", file, ct_ctx_last_message(ctx));
	else
		fprintf(stderr, "cachet: error: %s\n", ct_ctx_last_message(ctx));
}

/* Map a library status to the exit codes of CLI.md. */
static int exit_code(ct_status st)
{
	switch (st) {
	case CT_OK: return EXIT_OK;
	case CT_ERR_RUNTIME:
	case CT_ERR_COMPILE:
	case CT_ERR_VERIFY:
	case CT_ERR_NOMEM: return EXIT_FAILED;
	default: return EXIT_BAD_INPUT;
	}
}

static int fail(ct_ctx *ctx, ct_status st)
{
	print_error(ctx);
	return exit_code(st);
}

static int parse_int(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return 0;
	*v = x;
	return 1;
}

static int parse_define(cli *c, char *arg)
{
	const char *eq = strchr(arg, '=');
	int64_t v;
	if (!eq || eq == arg || !parse_int(eq + 1, &v))
		return usage_error("-D expects NAME=INTEGER, not '%s'", arg);
	if (c->ndefs >= MAX_DEFINES)
		return usage_error("too many -D options (%s)", arg);
	/* the name is the text before '=': cut it in place (argv strings are writable) */
	arg[eq - arg] = 0;
	c->defs[c->ndefs].name = arg;
	c->defs[c->ndefs].value = v;
	c->ndefs++;
	return EXIT_OK;
}

/* Value of an option that takes one: "--opt VALUE" or "--opt=VALUE". */
static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);
	if (strncmp(argv[*i], opt, n) == 0 && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (strcmp(argv[*i], opt) == 0 && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static int is_opt(const char *arg, const char *opt)
{
	size_t n = strlen(opt);
	return strncmp(arg, opt, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

/* The bit of option a (0: no such option). */
static unsigned option_bit(const char *a)
{
	if (strncmp(a, "-D", 2) == 0)
		return O_D;
	for (size_t i = 0; i < sizeof option_names / sizeof option_names[0]; i++)
		if (is_opt(a, option_names[i].name))
			return option_names[i].bit;
	return 0;
}

/* An option the command does not take, or a word too many: exit 2. */
static int refuse_arg(const cli *c, const char *what, const char *a)
{
	fprintf(stderr, "cachet: error: 'cachet %s' takes no %s '%s'\n(run 'cachet %s --help' for usage)\n",
	        c->cmd, what, a, c->cmd);
	return EXIT_BAD_INPUT;
}

/* A word that is not an option: the cache subcommand, else the FILE. */
static int positional(cli *c, const char *a)
{
	if ((c->accepts & A_SUB) && !c->sub)
		c->sub = a;
	else if ((c->accepts & A_FILE) && !c->file)
		c->file = a;
	else
		return refuse_arg(c, c->accepts & (A_SUB | A_FILE) ? "further argument" : "argument", a);
	return EXIT_OK;
}

static int parse_args(cli *c, int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++) {
		char *a = argv[i];
		const char *v;
		int64_t n;
		unsigned bit = a[0] == '-' && a[1] ? option_bit(a) : 0;
		if (bit && !(c->accepts & bit))
			return refuse_arg(c, "option", a);
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			c->help = 1;
		} else if (strncmp(a, "-D", 2) == 0) {
			char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!d)
				return usage_error("%s expects NAME=VALUE", a);
			int rc = parse_define(c, d);
			if (rc)
				return rc;
		} else if (strcmp(a, "--branching") == 0) {
			c->branching = 1;
		} else if (strcmp(a, "--json") == 0) {
			c->json = 1;
		} else if (strcmp(a, "--no-verify") == 0) {
			c->run.verify = 0;
		} else if (strcmp(a, "--checked") == 0 && strcmp(c->cmd, "run") == 0) {
			c->run.checked = 1;
		} else if (strcmp(a, "--simulate") == 0) {
			c->simulate = 1;
		} else if (strcmp(a, "--per-ref") == 0) {
			c->per_ref = 1;
		} else if (strcmp(a, "--show") == 0) {
			c->show = 1;
		} else if (strcmp(a, "--quiet") == 0) {
			c->quiet = 1;
		} else if (strcmp(a, "--force") == 0) {
			c->force = 1;
		} else if (is_opt(a, "--export") || is_opt(a, "--import")) {
			int imp = strncmp(a, "--import", 8) == 0;
			if (!(v = opt_value(argc, argv, &i, imp ? "--import" : "--export")) || !*v)
				return usage_error("%s expects a FILE.json", a);
			*(imp ? &c->import_path : &c->export_path) = v;
		} else if (is_opt(a, "--engine")) {
			if (!(v = opt_value(argc, argv, &i, "--engine")))
				return usage_error("%s expects native or interp", a);
			if (strcmp(v, "native") == 0)
				c->run.engine = CT_ENGINE_NATIVE;
			else if (strcmp(v, "interp") == 0)
				c->run.engine = CT_ENGINE_INTERP;
			else
				return usage_error("unknown engine '%s' (native or interp)", v);
		} else if (is_opt(a, "--repeat")) {
			if (!(v = opt_value(argc, argv, &i, "--repeat")) || !parse_int(v, &n) || n < 1 || n > 1000000)
				return usage_error("%s expects an integer in 1..1000000", a);
			c->run.repeat = (int)n;
		} else if (is_opt(a, "--threads")) {
			if (!(v = opt_value(argc, argv, &i, "--threads")) || !parse_int(v, &n) || n < 0 || n > 4096)
				return usage_error("%s expects an integer in 0..4096", a);
			c->run.threads = (int)n;
		} else if (is_opt(a, "--vector-bytes")) {
			if (!(v = opt_value(argc, argv, &i, "--vector-bytes")) || !parse_int(v, &n) ||
			    (n != 0 && (n < 8 || n > 256 || (n & (n - 1)) != 0)))
				return usage_error("%s expects 0 or a power of two in 8..256", a);
			c->vector_bytes = n;
		} else if (is_opt(a, "--target")) {
			if (!(v = opt_value(argc, argv, &i, "--target")))
				return usage_error("%s expects host or opencl", a);
			if (strcmp(v, "host") != 0 && strcmp(v, "opencl") != 0)
				return usage_error("unknown target '%s' (host or opencl)", v);
			c->target = v;
		} else if (is_opt(a, "--cache")) {
			if (!(v = opt_value(argc, argv, &i, "--cache")))
				return usage_error("%s expects SIZE:LINE[:WAYS],...", a);
			c->cache_spec = v;
		} else if (is_opt(a, "--cc")) {
			if (!(v = opt_value(argc, argv, &i, "--cc")) || !*v)
				return usage_error("%s expects a compiler command", a);
			c->cc = v;
		} else if (is_opt(a, "--max")) {
			if (!(v = opt_value(argc, argv, &i, "--max")) || !parse_int(v, &n) || n < 1)
				return usage_error("%s expects a positive integer", a);
			c->max_tile = n;
		} else if (is_opt(a, "--sizes")) {
			if (!(v = opt_value(argc, argv, &i, "--sizes")))
				return usage_error("%s expects a list of sizes", a);
			c->sizes = v;
		} else if (is_opt(a, "--budget")) {
			if (!(v = opt_value(argc, argv, &i, "--budget")))
				return usage_error("%s expects seconds", a);
			char *end;
			c->budget = strtod(v, &end);
			if (*end || !(c->budget > 0))
				return usage_error("--budget expects positive seconds, not '%s'", v);
		} else if (strcmp(a, "-o") == 0 || is_opt(a, "--output")) {
			if (!(v = opt_value(argc, argv, &i, a[1] == 'o' ? "-o" : "--output")))
				return usage_error("%s expects a folder", a);
			c->out_dir = v;
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else {
			int rc = positional(c, a);
			if (rc)
				return rc;
		}
	}
	return EXIT_OK;
}

/* Parse the file and apply -D; NULL after printing the error. */
static ct_kernel *load_kernel(ct_ctx *ctx, cli *c, int *rc)
{
	if (!c->file) {
		*rc = usage_error("%s needs a FILE", c->cmd);
		return NULL;
	}
	if ((c->cc && ct_ctx_set_compiler(ctx, c->cc) != CT_OK) ||
	    ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, c->vector_bytes) != CT_OK ||
	    ct_ctx_set_option(ctx, CT_OPT_BRANCHING, c->branching) != CT_OK) {
		*rc = fail(ctx, ct_ctx_last_status(ctx));
		return NULL;
	}
	ct_kernel *k;
	if (strcmp(c->file, "-") == 0) {
		size_t len = 0;
		char *text = read_all(stdin, MAX_STDIN_BYTES, &len);
		if (!text) {
			fprintf(stderr, "<stdin>: error: cannot read the kernel: %s\n",
			        errno == EFBIG ? "more than 16 MiB" : strerror(errno));
			*rc = EXIT_BAD_INPUT;
			return NULL;
		}
		keep_source("<stdin>", text, len);
		k = ct_kernel_parse(ctx, text, len, "<stdin>");
	} else {
		k = ct_kernel_parse_file(ctx, c->file);
	}
	if (!k) {
		*rc = fail(ctx, ct_ctx_last_status(ctx));
		return NULL;
	}
	if (c->ndefs) {
		ct_status st = CT_OK;
		for (int i = 0; i < c->ndefs && !st; i++)
			st = ct_kernel_set_param(k, c->defs[i].name, c->defs[i].value);
		if (!st)
			st = ct_kernel_recheck(k);
		if (st) {
			*rc = fail(ctx, st);
			ct_kernel_free(k);
			return NULL;
		}
	}
	*rc = EXIT_OK;
	return k;
}

/* ------------------------------------------------------------ commands */

/* A command that works on one kernel file: the ctx and the kernel (with -D
 * applied) are made and freed around it. */
typedef int (*kernel_cmd)(ct_ctx *ctx, ct_kernel *k, cli *c);

static int with_kernel(cli *c, kernel_cmd fn)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc;
	ct_kernel *k = load_kernel(ctx, c, &rc);
	if (k && fn)
		rc = fn(ctx, k, c);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return rc;
}

static int cmd_check(cli *c) { return with_kernel(c, NULL); }

static int print_lowered(ct_ctx *ctx, ct_kernel *k, int json)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return fail(ctx, ct_ctx_last_status(ctx));
	char *s = ct_looptree_print(t, json);
	ct_looptree_free(t);
	if (!s) {
		fprintf(stderr, "cachet: error: out of memory\n");
		return EXIT_FAILED;
	}
	fputs(s, stdout);
	if (s[0] && s[strlen(s) - 1] != '\n')
		fputc('\n', stdout);
	free(s);
	return EXIT_OK;
}

static int lower_kernel(ct_ctx *ctx, ct_kernel *k, cli *c) { return print_lowered(ctx, k, c->json); }

static int cmd_lower(cli *c) { return with_kernel(c, lower_kernel); }

static void print_run_json(const ct_kernel *k, const ct_run_result *r, int checked)
{
	printf("{\"kernel\": \"%s\", \"target\": \"%s\", \"engine\": \"%s\", \"threads\": %d, "
	       "\"seconds\": %.9g, \"gflops\": %.6g, \"verified\": %s, \"max_rel_error\": %.6g, "
	       "\"code_cache\": \"%s\", \"compile_seconds\": %.6g, \"checked\": %s}\n",
	       ct_kernel_name(k), strcmp(r->engine, "opencl") == 0 ? "opencl" : "host", r->engine, r->threads,
	       r->seconds, r->gflops,
	       r->verified == 1 ? "true" : r->verified == 0 ? "false" : "null", r->max_rel_error,
	       r->code_cache, r->compile_seconds, checked ? "true" : "false");
}

static void print_run_text(const ct_kernel *k, const ct_run_result *r, int checked)
{
	printf("kernel %s: %s engine, %d thread%s%s\n", ct_kernel_name(k), r->engine, r->threads,
	       r->threads == 1 ? "" : "s", checked ? ", checked (every access bounds-tested)" : "");
	printf("  time     %.6f s (median)\n", r->seconds);
	printf("  speed    %.3f GFLOP/s\n", r->gflops);
	if (r->verified == 1)
		printf("  verified against the reference interpreter (max relative error %.3g)\n",
		       r->max_rel_error);
	else if (r->verified == 0)
		printf("  MISMATCH in array %s (max relative error %.3g)\n", r->mismatch_array,
		       r->max_rel_error);
	else
		printf("  not verified (--no-verify)\n");
	if (strcmp(r->code_cache, "none") != 0)
		printf("  code     %s (compile %.3f s)\n", r->code_cache, r->compile_seconds);
}

/* Whether `cachet run` asks the solution selector: the file has tunable
 * params, none is set with -D, and the engine is native. */
static int wants_selector(const ct_kernel *k, const cli *c)
{
	if (c->run.engine != CT_ENGINE_NATIVE || c->run.checked) /* checked: the file's own values */
		return 0;
	int tunable = 0;
	for (int i = 0; i < ct_kernel_param_count(k); i++) {
		if (!ct_kernel_param_candidates(k, i, NULL))
			continue;
		tunable = 1;
		for (int d = 0; d < c->ndefs; d++)
			if (strcmp(c->defs[d].name, ct_kernel_param_name(k, i)) == 0)
				return 0;
	}
	return tunable;
}

/* The selector's choice, for the run's report. */
static void print_solution(const ct_kernel *k, const ct_solution *sol, int json)
{
	if (json) {
		printf("{\"source\": \"%s\", \"size_class\": \"%s\", \"pieces\": %d, \"params\": {",
		       ct_select_source_name(sol->source), sol->size_class, sol->npieces);
		for (int i = 0; i < sol->ntuned; i++)
			printf("%s\"%s\": %lld", i ? ", " : "", ct_kernel_param_name(k, sol->tuned[i]),
			       (long long)sol->values[i]);
		printf("}}");
		return;
	}
	printf("  tuned    ");
	for (int i = 0; i < sol->ntuned; i++)
		printf("%s%s=%lld", i ? " " : "", ct_kernel_param_name(k, sol->tuned[i]),
		       (long long)sol->values[i]);
	printf(" (%s%s%s), %d piece%s\n", ct_select_source_name(sol->source),
	       sol->size_class[0] ? " " : "", sol->size_class, sol->npieces, sol->npieces == 1 ? "" : "s");
}

/* The reference run of a verification, on a terminal: "verify [####   ] 12%"
 * (the library calls only for a run past a second). */
static void verify_progress(void *ud, const char *phase, int done, int total)
{
	(void)ud;
	progress_drawn = done != total;
	int width = 30, fill = total > 0 ? (int)((int64_t)done * width / total) : width;
	fprintf(stderr, "\r%s [%.*s%*s] %d%%", phase, fill, "##############################", width - fill, "",
	        total > 0 ? (int)((int64_t)done * 100 / total) : 100);
	/* the finished line is wiped: the report follows on stdout */
	if (done == total)
		fprintf(stderr, "\r%*s\r", width + 20, "");
	fflush(stderr);
}

static int run_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	ct_run_result r;
	if (isatty(2))
		ct_ctx_set_progress(ctx, verify_progress, NULL);
	ct_solution sol;
	ct_selector *sel;
	ct_status st;
	if (wants_selector(k, c)) {
		if (!(sel = ct_selector_new(k, NULL)))
			return fail(ctx, ct_ctx_last_status(ctx));
		st = ct_kernel_run_selected(sel, &c->run, &r, &sol);
		if (st && st != CT_ERR_VERIFY) {
			ct_selector_free(sel);
			return fail(ctx, st);
		}
		if (c->json) {
			/* the run's object with one more field */
			printf("{\"kernel\": \"%s\", \"target\": \"host\", \"engine\": \"%s\", \"threads\": %d, "
			       "\"seconds\": %.9g, \"gflops\": %.6g, \"verified\": %s, \"max_rel_error\": %.6g, "
			       "\"code_cache\": \"%s\", \"compile_seconds\": %.6g, \"checked\": false, \"tuned\": ",
			       ct_kernel_name(k), r.engine, r.threads, r.seconds, r.gflops,
			       r.verified == 1 ? "true" : r.verified == 0 ? "false" : "null", r.max_rel_error,
			       r.code_cache, r.compile_seconds);
			print_solution(k, &sol, 1);
			printf("}\n");
		} else {
			print_run_text(k, &r, 0);
			print_solution(k, &sol, 0);
		}
		ct_selector_free(sel);
		if (st) {
			print_error(ctx);
			return EXIT_FAILED;
		}
		return EXIT_OK;
	}
	st = ct_kernel_run(k, &c->run, &r);
	if (st && st != CT_ERR_VERIFY)
		return fail(ctx, st);
	if (c->json)
		print_run_json(k, &r, c->run.checked);
	else
		print_run_text(k, &r, c->run.checked);
	if (st) {
		print_error(ctx);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

static int cmd_run(cli *c) { return with_kernel(c, run_kernel); }

static int emit_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	size_t len = 0;
	char *src = ct_kernel_emit(k, c->target, &len);
	if (!src)
		return fail(ctx, ct_ctx_last_status(ctx));
	fwrite(src, 1, len, stdout);
	free(src);
	return EXIT_OK;
}

static int cmd_emit(cli *c) { return with_kernel(c, emit_kernel); }

/* mkdir -p of dir's parents (the library makes dir itself); 0 after
 * printing why not. */
static int make_parents(const char *dir)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
		fprintf(stderr, "cachet: error: -o: the folder name is too long\n");
		return 0;
	}
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		struct stat sb;
		if (stat(path, &sb) != 0 && mkdir(path, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "cachet: error: cannot create folder '%s': %s\n", path, strerror(errno));
			return 0;
		}
		*p = '/';
	}
	return 1;
}

static int build_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if (!make_parents(c->out_dir))
		return EXIT_FAILED;
	ct_status st = ct_kernel_build(k, c->out_dir);
	if (st)
		return fail(ctx, st);
	const char *n = ct_kernel_name(k);
	printf("wrote %s/%s.h, %s/lib%s.a and %s/lib%s.so\n", c->out_dir, n, c->out_dir, n, c->out_dir, n);
	return EXIT_OK;
}

static int cmd_build(cli *c)
{
	if (!c->out_dir)
		return usage_error("%s needs -o DIR", "build");
	return with_kernel(c, build_kernel);
}

static int cache_stats(ct_ctx *ctx)
{
	ct_cache_info info;
	ct_status st = ct_cache_stats(ctx, &info);
	if (st)
		return fail(ctx, st);
	printf("folder      %s%s\n", info.path, info.disk_enabled ? "" : " (not used)");
	ct_cache_folder f[8];
	int n = info.disk_enabled ? ct_cache_folders(ctx, f, 8) : 0;
	int64_t entries = 0, bytes = 0;
	for (int i = 0; i < n && i < 8; i++)
		if (strcmp(f[i].name, "*.sqlite") != 0) {
			entries += f[i].entries;
			bytes += f[i].bytes;
		}
	printf("entries     %lld\n", (long long)entries);
	printf("bytes       %lld (compiled kernels %lld of %lld)\n", (long long)bytes, (long long)info.bytes,
	       (long long)info.max_bytes);
	for (int i = 0; i < n && i < 8; i++)
		printf("  %-9s %6lld entries %10lld bytes  %s\n", f[i].name, (long long)f[i].entries,
		       (long long)f[i].bytes, f[i].what);
	return EXIT_OK;
}

/* `cache clear`: the library empties the folders; what is still there
 * afterwards (a read-only file system, another owner's files) is named,
 * folder by folder, and the exit code is 1. */
static int cache_clear(ct_ctx *ctx)
{
	ct_cache_set_warning_handler(ctx, quiet, NULL); /* the error below says it */
	ct_status st = ct_cache_clear(ctx);
	if (st)
		print_error(ctx);
	ct_cache_folder f[8];
	int n = ct_cache_folders(ctx, f, 8);
	int64_t left = 0;
	for (int i = 0; i < n && i < 8; i++)
		if (strcmp(f[i].name, "*.sqlite") != 0)
			left += f[i].entries;
	if (left > 0) {
		fprintf(stderr, "cachet: error: could not remove %lld entr%s of %s:", (long long)left,
		        left == 1 ? "y" : "ies", ct_cache_path(ctx));
		for (int i = 0; i < n && i < 8; i++)
			if (strcmp(f[i].name, "*.sqlite") != 0 && f[i].entries > 0)
				fprintf(stderr, " %s %lld (%lld bytes)", f[i].name, (long long)f[i].entries,
				        (long long)f[i].bytes);
		fputc('\n', stderr);
	}
	return st || left > 0 ? EXIT_FAILED : EXIT_OK;
}

static int cmd_cache(cli *c)
{
	if (!c->sub)
		return usage_error("cache needs one of stats, clear, verify, path%s", "");
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc = EXIT_OK;
	ct_status st;
	if (strcmp(c->sub, "stats") == 0) {
		rc = cache_stats(ctx);
	} else if (strcmp(c->sub, "path") == 0) {
		printf("%s\n", ct_cache_path(ctx));
	} else if (strcmp(c->sub, "clear") == 0) {
		rc = cache_clear(ctx);
	} else if (strcmp(c->sub, "verify") == 0) {
		int64_t bad = 0;
		if ((st = ct_cache_verify(ctx, &bad)))
			rc = fail(ctx, st);
		else
			printf("%lld bad entr%s removed\n", (long long)bad, bad == 1 ? "y" : "ies");
	} else {
		rc = usage_error("unknown cache command '%s' (stats, clear, verify, path)", c->sub);
	}
	ct_ctx_free(ctx);
	return rc;
}

static void print_sim_json(const ct_kernel *k, const ct_sim_result *r)
{
	printf("{\"kernel\": \"%s\", \"accesses\": %lld, \"levels\": [", ct_kernel_name(k),
	       (long long)r->accesses);
	for (int l = 0; l < r->nlevels; l++)
		printf("%s{\"size\": %lld, \"line\": %lld, \"ways\": %lld, \"simulated_misses\": %lld}",
		       l ? ", " : "", (long long)r->level[l].size, (long long)r->level[l].line,
		       (long long)r->level[l].ways, (long long)r->level[l].misses);
	printf("], \"simulate_seconds\": %.6g, \"references\": [", r->seconds);
	for (int i = 0; i < r->nrefs; i++) {
		printf("%s{\"array\": \"%s\", \"stmt\": %d, \"write\": %s, \"misses\": [", i ? ", " : "",
		       r->refs[i].array, r->refs[i].stmt, r->refs[i].is_write ? "true" : "false");
		for (int l = 0; l < r->nlevels; l++)
			printf("%s%lld", l ? ", " : "", (long long)r->refs[i].misses[l]);
		printf("]}");
	}
	printf("]}\n");
}

static void print_sim_text(const ct_kernel *k, const ct_sim_result *r)
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

static int cmd_simulate(cli *c) { return with_kernel(c, simulate_kernel); }

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

/* Print n counts as a JSON array. */
static void print_json_counts(const int64_t *v, int n)
{
	printf("[");
	for (int l = 0; l < n; l++)
		printf("%s%lld", l ? ", " : "", (long long)v[l]);
	printf("]");
}

/* `predict --json`: CLI.md's object; s (may be NULL) adds the simulator's
 * counts per level and per array. */
static void print_refs_json(const ct_ref_table *t, int nlevels);
/* ct_count_source as JSON and text say it. */
static const char *const source_names[] = {"model", "simulator", "fully associative estimate"};
/* ct_fallback_reason as JSON says it: why a level was simulated. */
static const char *const fallback_names[] = {"", "set-associative", "model not exact",
                                             "model over its work budget"};
static void print_predict_json(const ct_kernel *k, const ct_predict_result *r, const ct_sim_result *s,
                               const ct_ref_table *t)
{
	printf("{\"kernel\": \"%s\", \"accesses\": %lld, \"levels\": [", ct_kernel_name(k),
	       (long long)r->accesses);
	for (int l = 0; l < r->nlevels; l++) {
		printf("%s{\"size\": %lld, \"line\": %lld, \"ways\": %lld, \"misses\": %lld, \"exact\": %s",
		       l ? ", " : "", (long long)r->level[l].size, (long long)r->level[l].line,
		       (long long)r->level[l].ways, (long long)r->level[l].misses,
		       r->level[l].exact ? "true" : "false");
		printf(", \"source\": \"%s\"", source_names[r->source[l]]);
		if (r->fallback[l] > CT_FALLBACK_NONE && r->fallback[l] <= CT_FALLBACK_BUDGET)
			printf(", \"fallback\": \"%s\"", fallback_names[r->fallback[l]]);
		if (s)
			printf(", \"simulated_misses\": %lld", (long long)s->level[l].misses);
		printf("}");
	}
	printf("], \"model_seconds\": %.6g", r->seconds);
	if (s)
		printf(", \"simulate_seconds\": %.6g", s->seconds);
	printf(", \"references\": [");
	for (int a = 0; a < r->narrays; a++) {
		const ct_model_ref *m = &r->arrays[a];
		printf("%s{\"array\": \"%s\", \"stmt\": %d, \"nrefs\": %d, \"exact\": %s, \"accesses\": %lld, "
		       "\"misses\": ",
		       a ? ", " : "", m->array, m->stmt, m->nrefs, m->exact ? "true" : "false",
		       (long long)m->accesses);
		print_json_counts(m->misses, r->nlevels);
		if (s) {
			int64_t sm[CT_SIM_MAX_LEVELS];
			sim_array_misses(s, m->array, sm);
			printf(", \"simulated_misses\": ");
			print_json_counts(sm, r->nlevels);
		}
		printf("}");
	}
	printf("]");
	if (t)
		print_refs_json(t, r->nlevels);
	printf("}\n");
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
		                 : r->source[l] == CT_SOURCE_FA_ESTIMATE ? "FA-model" : "model");
		if (s)
			printf(" %14lld", (long long)s->level[l].misses);
		printf("\n");
	}
	for (int l = 0; l < r->nlevels; l++)
		if (r->fallback[l] == CT_FALLBACK_SET_ASSOC) {
			printf("  (set-associative levels: the model predicts fully associative caches only, so "
			       "they were simulated exactly, in %.3f ms)\n", r->simulate_seconds * 1e3);
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
		if (r->source[l] == CT_SOURCE_FA_ESTIMATE) {
			printf("  (set-associative levels: the model predicts fully associative caches only and "
			       "the trace is too long to simulate (over %lld accesses): predicted as fully "
			       "associative, conflict misses not counted)\n", (long long)CT_PREDICT_SIM_MAX);
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

/* What carries a per-ref row's capacity misses at level l, as text ("-" when none). */
static const char *carrier_text(const ct_ref_misses *m, int l, char *buf, size_t cap)
{
	const char *name = m->carried_by[l];
	switch (m->carrier[l]) {
	case CT_CARRIER_LOOP:
		snprintf(buf, cap, "%s", name ? name : "?");
		break;
	case CT_CARRIER_SIBLING:
		snprintf(buf, cap, "sibling in %s", name ? name : "run");
		break;
	case CT_CARRIER_STMT:
		snprintf(buf, cap, "statement");
		break;
	case CT_CARRIER_CONFLICT:
		snprintf(buf, cap, "conflicts");
		break;
	default:
		snprintf(buf, cap, "-");
	}
	return buf;
}

static const char *const split_names[] = {"model", "simulation", "accesses"};

/* A per-ref row's place in the source: FILE:LINE:COL, or what it stands for. */
static const char *ref_where(const ct_ref_table *t, const ct_ref_misses *m, char *buf, size_t cap)
{
	if (m->line > 0)
		snprintf(buf, cap, "%s:%d:%d", t->file ? t->file : "-", m->line, m->col);
	else
		snprintf(buf, cap, "(copy loops)");
	return buf;
}

/* What a per-ref row does: a source read, write or op= update, or a plan's copy loops. */
static const char *ref_access(const ct_ref_misses *m)
{
	return m->line <= 0 ? "copy" : m->is_write == 2 ? "update" : m->is_write ? "write" : "read";
}

/* The `per_ref` member of `predict --per-ref --json`. */
static void print_refs_json(const ct_ref_table *t, int nlevels)
{
	printf(", \"per_ref\": [");
	for (int i = 0; i < t->nrefs; i++) {
		const ct_ref_misses *m = &t->refs[i];
		char where[512], carrier[128];
		printf("%s{\"array\": \"%s\", \"stmt\": %d, \"where\": \"%s\", \"line\": %d, \"col\": %d, "
		       "\"access\": \"%s\", \"split\": \"%s\", \"accesses\": %lld, \"misses\": ",
		       i ? ", " : "", m->array, m->stmt, ref_where(t, m, where, sizeof where), m->line, m->col,
		       ref_access(m), split_names[m->split],
		       (long long)m->accesses);
		print_json_counts(m->misses, nlevels);
		printf(", \"cold\": ");
		print_json_counts(m->cold, nlevels);
		printf(", \"carried_by\": [");
		for (int l = 0; l < nlevels; l++)
			printf("%s\"%s\"", l ? ", " : "", carrier_text(m, l, carrier, sizeof carrier));
		printf("]}");
	}
	printf("]");
}

/* `predict --per-ref` as text: one row per reference, most misses first. */
static void print_refs_text(const ct_ref_table *t, int nlevels)
{
	int width = 12;
	for (int i = 0; i < t->nrefs; i++) {
		char where[512];
		int n = (int)strlen(ref_where(t, &t->refs[i], where, sizeof where));
		width = n > width ? n : width;
	}
	printf("  %-*s %-8s %4s %-6s %12s", width, "reference", "array", "stmt", "access", "accesses");
	for (int l = 0; l < nlevels; l++)
		printf("  L%d misses (cold) carried by", l + 1);
	printf("\n");
	int shared = 0;
	for (int i = 0; i < t->nrefs; i++) {
		const ct_ref_misses *m = &t->refs[i];
		char where[512], carrier[128];
		shared |= m->split != CT_SPLIT_MODEL;
		printf("  %-*s %-8s %4d %-6s %12lld", width, ref_where(t, m, where, sizeof where), m->array,
		       m->stmt, ref_access(m), (long long)m->accesses);
		for (int l = 0; l < nlevels; l++)
			printf("  %9lld (%lld) %s", (long long)m->misses[l], (long long)m->cold[l],
			       carrier_text(m, l, carrier, sizeof carrier));
		printf("%s\n", m->split == CT_SPLIT_SIM ? "  [split by simulation]"
		               : m->split == CT_SPLIT_ACCESSES ? "  [split by accesses]" : "");
	}
	if (shared)
		printf("  (the model counts per array; an array's counts are shared out over its references)\n");
}

static int predict_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	ct_predict_result r;
	ct_sim_result s;
	ct_ref_table t;
	memset(&r, 0, sizeof r);
	memset(&s, 0, sizeof s);
	memset(&t, 0, sizeof t);
	int rc = EXIT_OK;
	ct_status st = c->per_ref ? ct_kernel_predict_refs(k, c->cache_spec, -1, &r, &t)
	                          : ct_kernel_predict(k, c->cache_spec, &r);
	if (!st && c->simulate)
		st = ct_kernel_simulate(k, c->cache_spec, &s);
	if (st) {
		rc = fail(ctx, st);
	} else if (c->json) {
		print_predict_json(k, &r, c->simulate ? &s : NULL, c->per_ref ? &t : NULL);
	} else {
		print_predict_text(k, &r, c->simulate ? &s : NULL);
		if (c->per_ref)
			print_refs_text(&t, r.nlevels);
	}
	ct_ref_table_free(&t);
	ct_sim_result_free(&s);
	ct_predict_result_free(&r);
	return rc;
}

static int cmd_predict(cli *c) { return with_kernel(c, predict_kernel); }

/* `tiles --json`: CLI.md's object plus the params, levels and search facts. */
static void print_tiles_json(const ct_kernel *k, const ct_tiles_result *r)
{
	printf("{\"kernel\": \"%s\", \"indices\": [", ct_kernel_name(k));
	for (int i = 0; i < r->nindices; i++)
		printf("%s\"%s\"", i ? ", " : "", r->indices[i]);
	printf("], \"params\": [");
	for (int i = 0; i < r->nindices; i++)
		printf("%s\"%s\"", i ? ", " : "", r->params[i]);
	printf("], \"levels\": [");
	for (int l = 0; l < r->nlevels; l++)
		printf("%s{\"size\": %lld, \"line\": %lld, \"ways\": %lld}", l ? ", " : "",
		       (long long)r->level[l].size, (long long)r->level[l].line, (long long)r->level[l].ways);
	printf("], \"rank_level\": %d, \"runtime_bounds\": %s, \"evaluated\": %lld, \"candidates\": [",
	       r->rank_level, r->runtime_bounds ? "true" : "false", (long long)r->evaluated);
	for (int c = 0; c < r->ncandidates; c++) {
		const ct_tiles_candidate *t = &r->candidates[c];
		printf("%s{\"tiles\": ", c ? ", " : "");
		print_json_counts(t->tiles, r->nindices);
		printf(", \"misses\": %lld, \"level_misses\": ", (long long)t->misses[r->rank_level]);
		print_json_counts(t->misses, r->nlevels);
		printf(", \"level_misses_max\": ");
		print_json_counts(t->misses_max, r->nlevels);
		printf(", \"exact\": %s}", t->exact ? "true" : "false");
	}
	printf("], \"seconds\": %.6g}\n", r->seconds);
}

/* `tiles` as text: the searched params, then the candidates best first. */
static void print_tiles_text(const ct_kernel *k, const ct_tiles_result *r)
{
	printf("kernel %s: %d tile param%s, %lld tilings analysed in %.3f s\n", ct_kernel_name(k),
	       r->nindices, r->nindices == 1 ? "" : "s", (long long)r->evaluated, r->seconds);
	if (r->runtime_bounds)
		printf("unknown loop bounds: partitions whose stack distance depends on them count as misses\n");
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
	ct_tiles_opts o;
	ct_tiles_opts_init(&o);
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

static int cmd_tiles(cli *c) { return with_kernel(c, tiles_kernel); }

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
	if (!parse_int(buf, v))
		return sizes_error("'%s' is not a number", buf);
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

static void tune_options(cli *c, ct_tune_opts *o, double budget, tune_view *view)
{
	ct_tune_opts_init(o);
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
	ct_tune_opts o;
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
	ct_tune_print(&r, c->json, stdout);
	int rc = r.best >= 0 ? EXIT_OK : EXIT_FAILED;
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
		ct_tune_opts o;
		ct_tune_opts_init(&o);
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
	} else {
		st = ct_store_show(s, family[0] ? family : NULL, c->json, stdout);
	}
	ct_store_close(s);
	return st ? fail(ctx, st) : EXIT_OK;
}

static int cmd_tune(cli *c)
{
	if (c->force && !c->import_path)
		return usage_error("%s", "tune --force goes with --import");
	if (!c->show && !c->export_path && !c->import_path)
		return with_kernel(c, tune_kernel);
	if (c->show + !!c->export_path + !!c->import_path > 1)
		return usage_error("%s", "tune: one of --show, --export, --import at a time");
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc = store_command(ctx, c);
	ct_ctx_free(ctx);
	return rc;
}

static int cmd_probe(cli *c)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc = EXIT_OK;
	ct_status st = ct_probe_run(ctx, CT_PROBE_MEASURE | CT_PROBE_OPENCL, NULL);
	if (!st)
		st = ct_probe_print(ctx, c->json, stdout);
	if (st)
		rc = fail(ctx, st);
	ct_ctx_free(ctx);
	return rc;
}

/* The demo kernel: a tiled matmul with a non-dividing split, small enough
 * for the interpreter to verify in a blink. */
static const char demo_text[] =
	"# demo.cachet: C += A * B, tiled for the cache\n"
	"kernel matmul\n"
	"param M = 256, N = 256, K = 256\n"
	"array A : f32[M, K] input\n"
	"array B : f32[K, N] input\n"
	"array C : f32[M, N] inout\n"
	"for (i: M, j: N, k: K) {\n"
	"  C[i, j] += A[i, k] * B[k, j]\n"
	"}\n"
	"schedule {\n"
	"  ii, jj, kk = tile(i=32, j=64, k=48)   # 48 does not divide 256: a tail\n"
	"  reorder(i, j, k, ii, kk, jj)\n"
	"}\n";

static int cmd_demo(cli *c)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	printf("== The kernel (embedded demo.cachet) ==\n%s\n", demo_text);
	ct_kernel *k = ct_kernel_parse(ctx, demo_text, sizeof demo_text - 1, "demo.cachet");
	if (!k) {
		int rc = fail(ctx, ct_ctx_last_status(ctx));
		ct_ctx_free(ctx);
		return rc;
	}
	printf("== The scheduled loop tree (cachet lower) ==\n");
	int rc = print_lowered(ctx, k, 0);
	if (!rc) {
		printf("\n== Run and verify (cachet run) ==\n");
		c->json = 0;
		rc = run_kernel(ctx, k, c);
	}
	if (!rc) {
		printf("\n== Its cache behaviour on this machine's caches (cachet simulate) ==\n");
		ct_sim_result r;
		ct_status st = ct_kernel_simulate(k, NULL, &r);
		if (st)
			rc = fail(ctx, st);
		else
			print_sim_text(k, &r);
		ct_sim_result_free(&r);
	}
	if (!rc)
		printf("\nThe schedule changed only the order of the iterations: the result equals the\n"
		       "unscheduled reference. Try: cachet lower examples/matmul.cachet --json\n");
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return rc;
}

static const command commands[] = {
	{"check", "parse and validate a kernel file; prints nothing on success",
	 "cachet check FILE [-D NAME=VALUE]...",
	 "  -D NAME=VALUE   override a param, or give a runtime param its value\n", cmd_check, A_FILE | O_D},
	{"lower", "print the scheduled, planned loop tree as pseudo-code",
	 "cachet lower FILE [-D NAME=VALUE]... [--json]",
	 "  -D NAME=VALUE   override a param\n  --json          print the loop tree as one JSON object\n",
	 cmd_lower, A_FILE | O_D | O_JSON},
	{"run", "run a kernel on deterministic inputs, time it and verify it",
	 "cachet run FILE [-D ...] [--engine native|interp] [--repeat N] [--threads T] [--no-verify] [--checked] "
	 "[--cc CC] [--vector-bytes B] [--branching] [--json]",
	 "  --engine E      native (compiled, default) or interp (the reference interpreter)\n"
	 "  --cc CC         compiler command for the generated C (default $CC, else cc)\n"
	 "  --repeat N      timed runs; the median is reported\n"
	 "  --threads T     threads of the plan's parallel loops (0 = all cores)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --branching     per-element tests in halo copies and boundary ifs (default: branch-free)\n"
	 "  --no-verify     skip the comparison with the unscheduled reference\n"
	 "  --checked       compile with a bounds test on every array and cache access; the\n"
	 "                  first access outside its storage fails the run (host kernels;\n"
	 "                  tunable params keep the file's values)\n"
	 "  --json          one JSON object on stdout\n"
	 "exit codes: 0 verified, 1 the kernel ran but failed, 2 bad input\n",
	 cmd_run, A_FILE | O_D | O_ENGINE | O_REPEAT | O_THREADS | O_NO_VERIFY | O_CC | O_VECTOR_BYTES | O_BRANCHING | O_JSON},
	{"emit", "print the generated source",
	 "cachet emit FILE [-D ...] [--target host|opencl] [--vector-bytes B] [--branching]",
	 "  --target T      host (C99, the default) or opencl (OpenCL C,\n"
	 "                  docs/OPENCL.md)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --branching     per-element tests in halo copies and boundary ifs (default: branch-free)\n",
	 cmd_emit, A_FILE | O_D | O_TARGET | O_VECTOR_BYTES | O_BRANCHING},
	{"build", "write an ahead-of-time package: NAME.h, libNAME.a, libNAME.so",
	 "cachet build FILE [-D ...] -o DIR [--cc CC] [--vector-bytes B] [--branching]",
	 "  -o DIR          the package folder (created if missing)\n"
	 "  --cc CC         compiler command (default $CC, else cc)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --branching     per-element tests in halo copies and boundary ifs (default: branch-free)\n"
	 "The package needs no cachet at run time; it is compiled with -O3\n"
	 "-march=native for this machine. For plan(target=opencl): NAME.cl and a C\n"
	 "wrapper (link with -lOpenCL) embedding the source and this device's binary.\n",
	 cmd_build, A_FILE | O_D | O_OUT | O_CC | O_VECTOR_BYTES | O_BRANCHING},
	{"cache", "inspect or clean the code cache", "cachet cache stats|clear|verify|path",
	 "  stats           the folder, its entries and bytes, per folder (compiled\n"
	 "                  kernels, OpenCL binaries, PoCL's cache, tuning stores)\n"
	 "  clear           remove every entry (tuning stores are kept)\n"
	 "  verify          check every entry's key and checksum, remove bad ones\n"
	 "  path            print the folder\n"
	 "CACHET_CACHE_DIR sets the folder (default ${XDG_CACHE_HOME:-~/.cache}/cachet);\n"
	 "CACHET_NO_CACHE=1 bypasses it.\n",
	 cmd_cache, A_SUB},
	{"simulate", "count the cache misses of a kernel's exact address trace",
	 "cachet simulate FILE [-D ...] [--cache SPEC] [--json]",
	 "  --cache SPEC    cache levels SIZE:LINE[:WAYS],... (sizes in bytes or with K/M/G\n"
	 "                  suffixes; WAYS 0 or absent = fully associative), e.g. 32K:64,1M:64;\n"
	 "                  default: this machine's caches\n"
	 "  --json          one JSON object on stdout\n"
	 "Every level is an LRU, write-allocate cache seeing the whole access stream.\n",
	 cmd_simulate, A_FILE | O_D | O_CACHE | O_JSON},
	{"predict", "predict a kernel's cache misses with the stack-distance model (no trace)",
	 "cachet predict FILE [-D ...] [--cache SPEC] [--simulate] [--per-ref] [--json]",
	 "  --cache SPEC    cache levels SIZE:LINE[:WAYS],... as for simulate; default: this\n"
	 "                  machine's caches (set-associative levels are simulated exactly up\n"
	 "                  to 2M accesses, else predicted as fully associative; `source` says)\n"
	 "  --simulate      also run the exact simulator and print its counts side by side\n"
	 "  --per-ref       also one row per source reference (FILE:LINE:COL), most misses\n"
	 "                  first: accesses, misses and cold misses per level, and the loop\n"
	 "                  carrying the reuse that misses\n"
	 "  --json          one JSON object on stdout\n"
	 "Misses are attributed per array (all references of an array together); --per-ref\n"
	 "shares an array's counts out over its references (by an exact simulation of up to\n"
	 "16M accesses, else by accesses) and says so.\n",
	 cmd_predict, A_FILE | O_D | O_CACHE | O_SIMULATE | O_PER_REF | O_JSON},
	{"tiles", "search tile sizes with the cache model (the Tensor Contraction Engine's search)",
	 "cachet tiles FILE [-D ...] [--cache SPEC] [--max T] [--json]",
	 "  --cache SPEC    cache levels as for simulate; default: this machine's caches\n"
	 "  --max T         largest tile tried (default: each index's extent, 1024 if unknown)\n"
	 "  --json          one JSON object on stdout\n"
	 "The tiles are the compile-time params written as split/tile sizes\n"
	 "(param TA = 16 ... tile(a=TA)). Runtime params left without -D are unknown\n"
	 "bounds. Ranked by the misses of the smallest level, then the next; ties:\n"
	 "larger tiles first. The 10 best are shown.\n",
	 cmd_tiles, A_FILE | O_D | O_CACHE | O_MAX | O_JSON},
	{"tune", "tune a kernel's tunable params: rank by the cache model, measure the best few, store the winner",
	 "cachet tune FILE [-D ...] [--sizes SETS] [--budget SECONDS] [--cache SPEC] [--threads T] [--cc CC]\n"
	 "       [--vector-bytes B] [--quiet] [--json]\n"
	 "       cachet tune --show [FILE] [--json]\n"
	 "       cachet tune --export FILE.json [FILE] | --import FILE.json [--force]",
	 "  --sizes SETS    size sets to tune, comma-separated; each is a plain n (every\n"
	 "                  size param n), NAME=V:NAME=V (M=64:N=128:K=32; the others keep\n"
	 "                  their values) or the size params' values joined by x in\n"
	 "                  declaration order (64x64x64); default: the file's sizes (with -D)\n"
	 "  --budget S      wall seconds for the whole run (default 60), shared by the sets;\n"
	 "                  measuring goes on until it is used (or the space is)\n"
	 "  --quiet         no progress lines on stderr\n"
	 "  --export F.json write the store's records (of FILE's family when given) to F.json\n"
	 "  --import F.json read records exported on a machine of the same device id\n"
	 "  --force         with --import: take records of another device id too (as stale)\n"
	 "  --cache SPEC    cache levels for the model (default: this machine's)\n"
	 "  --threads T     threads of the measured runs (0 = all cores)\n"
	 "  --cc CC         compiler command for the measured candidates (default $CC, else cc)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --show          print the store's records (of FILE's family when given), by\n"
	 "                  kernel family and size class, with what the selector picks\n"
	 "  --json          one JSON object on stdout (per size set)\n"
	 "Tunable params are written `param T = 64 tune {16, 32, 64}` or\n"
	 "`tune 16..256 step 16`; see docs/TUNE.md. CACHET_CACHE_DIR sets the store's folder.\n",
	 cmd_tune, A_FILE | O_D | O_SIZES | O_BUDGET | O_CACHE | O_THREADS | O_SHOW | O_CC | O_VECTOR_BYTES | O_JSON |
	 O_QUIET | O_FORCE | O_EXPORT | O_IMPORT},
	{"probe", "describe this machine: cores, caches, vector ISA, measured peak and bandwidth",
	 "cachet probe [--json]", "  --json          one JSON object on stdout\n", cmd_probe, O_JSON},
	{"demo", "the default job: an embedded matmul, run and explained", "cachet demo", "", cmd_demo, 0},
};

static const command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_command_help(FILE *f, const command *cmd)
{
	fprintf(f, "usage: %s\n\n%s.\n\n%s", cmd->usage, cmd->summary, cmd->details);
}

static void print_help(FILE *f)
{
	fprintf(f, "cachet %s: loop nests to fast, cache-aware kernels\n\nusage: cachet COMMAND [ARGS]\n\n",
		CACHET_VERSION);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'cachet COMMAND --help' describes a command. Exit codes: 0 success, 1 the kernel\n"
		   "ran but failed, 2 bad input or usage.\n");
}

/* PoCL keeps its own kernel cache (compiled work-group functions), by
 * default in ~/.cache/pocl. For the commands that may run OpenCL, the tool
 * points it at CACHE/pocl-v1 when the user has not set POCL_CACHE_DIR, so
 * that `cachet cache stats|clear` see and empty it. The library never sets
 * it: an environment variable is the process's, and PoCL reads it once, at
 * its first call; a program is the one to decide, as this one does here
 * before any OpenCL call.
 *
 * PoCL does not survive a cache folder it cannot write: on a full disk
 * LLVM aborts the process ("IO failure on output stream"), on a read-only
 * one the build fails. So the folder is handed over only after a probe
 * write and with POCL_MIN_FREE bytes free; otherwise PoCL gets a private
 * temporary folder, removed at exit, and the run goes on without a kept
 * PoCL cache, as host kernels go on without the code cache. */
#define POCL_MIN_FREE ((int64_t)64 << 20)

static void quiet(void *ud, const char *msg)
{
	(void)ud;
	(void)msg; /* the command itself reports an unusable cache folder */
}

/* Whether PoCL may write in dir: NULL if so, else why not (written in why). */
static const char *pocl_folder_problem(const char *dir, char *why, size_t cap)
{
	struct statvfs fs;
	if (statvfs(dir, &fs) == 0 && (int64_t)fs.f_bavail * (int64_t)fs.f_frsize < POCL_MIN_FREE) {
		snprintf(why, cap, "only %lld KiB free (PoCL needs %lld MiB)",
		         (long long)((int64_t)fs.f_bavail * (int64_t)fs.f_frsize >> 10),
		         (long long)(POCL_MIN_FREE >> 20));
		return why;
	}
	char probe[4200];
	if (snprintf(probe, sizeof probe, "%s/.cachet-probe.%ld", dir, (long)getpid()) >= (int)sizeof probe) {
		snprintf(why, cap, "its name is too long");
		return why;
	}
	static const char block[4096];
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int ok = fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block;
	int err = errno;
	if (fd >= 0) {
		ok = close(fd) == 0 && ok;
		unlink(probe);
	}
	if (!ok) {
		snprintf(why, cap, "cannot write in it: %s", strerror(err));
		return why;
	}
	return NULL;
}

static char pocl_tmp[4096]; /* the private folder to remove at exit ("" = none) */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_pocl_tmp(void)
{
	if (pocl_tmp[0])
		nftw(pocl_tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A private folder for PoCL's cache, removed at exit; 0 if none can be made. */
static int pocl_private_folder(void)
{
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = "/tmp";
	if (snprintf(pocl_tmp, sizeof pocl_tmp, "%s/cachet-pocl.XXXXXX", t) >= (int)sizeof pocl_tmp ||
	    !mkdtemp(pocl_tmp)) {
		pocl_tmp[0] = 0;
		return 0;
	}
	atexit(remove_pocl_tmp);
	setenv("POCL_CACHE_DIR", pocl_tmp, 1);
	return 1;
}

static void point_pocl_cache(const char *cmd)
{
	const char *e = getenv("POCL_CACHE_DIR"), *nc = getenv("CACHET_NO_CACHE");
	if ((e && *e) || (nc && strcmp(nc, "1") == 0) ||
	    (strcmp(cmd, "run") != 0 && strcmp(cmd, "build") != 0 && strcmp(cmd, "tune") != 0))
		return;
	ct_ctx *ctx = ct_ctx_new();
	if (ctx)
		ct_cache_set_warning_handler(ctx, quiet, NULL);
	char dir[4096], why[160];
	const char *problem = NULL;
	if (ctx && ct_cache_folders(ctx, NULL, 0) >= 0 &&
	    snprintf(dir, sizeof dir, "%s/pocl-v1", ct_cache_path(ctx)) < (int)sizeof dir &&
	    (mkdir(dir, 0700) == 0 || errno == EEXIST)) {
		if (!(problem = pocl_folder_problem(dir, why, sizeof why))) {
			setenv("POCL_CACHE_DIR", dir, 1);
			ct_ctx_free(ctx);
			return;
		}
		fprintf(stderr, "cachet: warning: not giving PoCL the cache folder %s: %s; "
		        "OpenCL kernels run without a kept PoCL cache\n", dir, problem);
	}
	/* the cache folder is not usable (the library says why when it is
	 * used): PoCL's cache goes to a private folder too */
	ct_ctx_free(ctx);
	pocl_private_folder();
}

int main(int argc, char **argv)
{
	/* Threads of parallel loops that wait at a barrier sleep rather than
	 * spin (unless the user says otherwise): on a machine shared with
	 * other work a spinning thread takes a core from one that computes
	 * (a 2048x2048x32 sgemm ran 3x slower on 2 threads). Set before any
	 * generated code loads the OpenMP runtime, which reads it once. */
	setenv("OMP_WAIT_POLICY", "passive", 0);
	if (argc < 2) {
		print_help(stderr);
		return EXIT_BAD_INPUT;
	}
	int top = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0 ||
	          strcmp(argv[1], "--version") == 0;
	if (top && argc > 2)
		return usage_error("unexpected argument '%s'", argv[2]);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cachet %s\n", CACHET_VERSION);
		return EXIT_OK;
	}
	const command *cmd = find_command(argv[1]);
	if (!cmd)
		return usage_error("unknown command '%s'", argv[1]);
	cli c;
	memset(&c, 0, sizeof c);
	c.cmd = cmd->name;
	c.accepts = cmd->accepts;
	ct_run_options_init(&c.run);
	int rc = parse_args(&c, argc, argv, 2);
	if (rc)
		return rc;
	if (c.help) {
		print_command_help(stdout, cmd);
		return EXIT_OK;
	}
	point_pocl_cache(cmd->name);
	return cmd->fn(&c);
}
