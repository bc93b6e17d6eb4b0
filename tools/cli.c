/* cli.c: the helpers every command of the cachet tool uses: kernel text and errors with their source line, loading a kernel with -D, JSON output. */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

int usage_error(const char *fmt, const char *arg)
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

/* Whether a progress line is on stderr, not yet wiped (show_progress). */
int progress_drawn;

/* Kernel text read from stdin is refused beyond this (a file's limit is the library's). */
#define MAX_STDIN_BYTES ((size_t)16 << 20)

/* All of f (at most max bytes; NULL with errno set when more, or on a read error); *len (optional) its length. */
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
		if (len)
			*len = n;
	}
	return buf;
}

char *read_path(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *t = read_all(f, max, len);
	fclose(f);
	return t;
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
		size_t n = 0;
		char *t = strcmp(file, "<stdin>") != 0 ? read_path(file, MAX_STDIN_BYTES, &n) : NULL;
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
void print_error(ct_ctx *ctx)
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
int exit_code(ct_status st)
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

int finish_output(int rc)
{
	errno = 0;
	int flushed = fflush(stdout) == 0;
	int err = errno;
	if (flushed && !ferror(stdout) && !output_failed)
		return rc;
	/* a command that failed said why already (the library's "cannot print ...", print_json's) */
	if (!output_failed && rc == EXIT_OK)
		fprintf(stderr, "cachet: error: cannot write the output: %s\n",
		        err ? strerror(err) : "a write to stdout failed");
	return EXIT_FAILED; /* the input was good enough to print a result: the output failed */
}

int fail(ct_ctx *ctx, ct_status st)
{
	print_error(ctx);
	return exit_code(st);
}

int parse_int(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return 0;
	*v = x;
	return 1;
}

void show_progress(void *ud, const char *phase, int done, int total)
{
	(void)ud;
	int pct = total > 0 ? (int)((int64_t)done * 100 / total) : 100;
	if (!isatty(2)) {
		static int last_tenth = -1; /* one line per tenth, for a long simulation in a log */
		if (strcmp(phase, "simulate") == 0 && pct / 10 != last_tenth && done != total) {
			last_tenth = pct / 10;
			fprintf(stderr, "simulate: %d%% of the trace\n", pct);
		}
		return;
	}
	progress_drawn = done != total;
	int width = 30, fill = total > 0 ? (int)((int64_t)done * width / total) : width;
	fprintf(stderr, "\r%s [%.*s%*s] %d%%", phase, fill, "##############################", width - fill, "", pct);
	/* the finished line is wiped: the report follows on stdout */
	if (done == total)
		fprintf(stderr, "\r%*s\r", width + 20, "");
	fflush(stderr);
}

int parse_literal(const char *s, int64_t *v)
{
	const char *p = s + (s[0] == '-');
	int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	const char *d = hex ? p + 2 : p;
	if (!(hex ? isxdigit((unsigned char)d[0]) : isdigit((unsigned char)d[0])) ||
	    (!hex && d[0] == '0' && d[1] != 0))
		return 0;
	for (const char *q = d; *q; q++)
		if (!(hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q)))
			return 0;
	errno = 0;
	char *end;
	unsigned long long u = strtoull(d, &end, hex ? 16 : 10);
	if (errno || *end || u > (unsigned long long)INT64_MAX + (s[0] == '-'))
		return 0;
	*v = s[0] == '-' ? (int64_t)(0 - u) : (int64_t)u;
	return 1;
}

/* Parse the file and apply -D; NULL after printing the error. */
ct_kernel *load_kernel(ct_ctx *ctx, cli *c, int *rc)
{
	if (!c->file) {
		*rc = usage_error("%s needs a FILE", c->cmd);
		return NULL;
	}
	if ((c->cc && ct_ctx_set_compiler(ctx, c->cc) != CT_OK) ||
	    ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, c->vector_bytes) != CT_OK ||
	    ct_ctx_set_option(ctx, CT_OPT_BRANCHING, c->branching) != CT_OK ||
	    (c->max_accesses >= 0 && ct_ctx_set_option(ctx, CT_OPT_SIM_MAX_ACCESSES, c->max_accesses) != CT_OK)) {
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

int with_kernel(cli *c, kernel_cmd fn)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc;
	signal_ctx = ctx;
	ct_kernel *k = load_kernel(ctx, c, &rc);
	if (k && fn)
		rc = fn(ctx, k, c);
	ct_kernel_free(k);
	signal_ctx = NULL;
	ct_ctx_free(ctx);
	return rc;
}

int output_failed;

ct_ctx *volatile signal_ctx;

/* Print v (taken) as one line on stdout: the layout of every --json object. */
void print_json(json_t *v, bool ok)
{
	char *s = ok ? ct_json_line(v) : (json_decref(v), NULL);
	if (!s) {
		fprintf(stderr, "cachet: error: out of memory\n");
		output_failed = 1;
		return;
	}
	fputs(s, stdout);
	free(s);
}

void quiet(void *ud, const char *msg)
{
	(void)ud;
	(void)msg; /* the command itself reports an unusable cache folder */
}

/* ------------------------------------------------------------ per-reference rows (predict --per-ref, report) */

const char *count_source_name(int s)
{
	return s == CT_SOURCE_SIMULATOR         ? "simulator"
	       : s == CT_SOURCE_FA_ESTIMATE     ? "fully associative estimate"
	       : s == CT_SOURCE_AFFINE_ESTIMATE ? "affine estimate"
	                                         : "model";
}

const char *carrier_text(const ct_ref_misses *m, int l, char *buf, size_t cap)
{
	const char *name = m->carried_by[l];
	switch (m->carrier[l]) {
	case CT_CARRIER_LOOP: snprintf(buf, cap, "%s", name ? name : "?"); break;
	case CT_CARRIER_SIBLING: snprintf(buf, cap, "sibling in %s", name ? name : "run"); break;
	case CT_CARRIER_STMT: snprintf(buf, cap, "statement"); break;
	case CT_CARRIER_CONFLICT: snprintf(buf, cap, "conflicts"); break;
	case CT_CARRIER_UNKNOWN: snprintf(buf, cap, "?"); break;
	default: snprintf(buf, cap, "-");
	}
	return buf;
}

const char *ref_where(const char *file, const ct_ref_misses *m, char *buf, size_t cap)
{
	if (m->line > 0)
		snprintf(buf, cap, "%s:%d:%d", file, m->line, m->col);
	else
		snprintf(buf, cap, "(copy loops)");
	return buf;
}

const char *ref_access(const ct_ref_misses *m)
{
	return m->line <= 0 ? "copy" : m->is_write == 2 ? "update" : m->is_write ? "write" : "read";
}

static const char *const split_names[] = {"model", "simulation", "accesses", "simulated"};

json_t *ref_table_json(const ct_ref_table *t, const char *file, int nlevels, bool *ok)
{
	json_t *a = json_array();
	for (int i = 0; i < t->nrefs; i++) {
		const ct_ref_misses *m = &t->refs[i];
		char where[512], carrier[128];
		json_t *o = json_object(), *carried = json_array();
		ct_json_set(o, "array", json_string(m->array), ok);
		ct_json_set(o, "stmt", json_integer(m->stmt), ok);
		ct_json_set(o, "where", ct_json_text(ref_where(file, m, where, sizeof where)), ok);
		ct_json_set(o, "line", json_integer(m->line), ok);
		ct_json_set(o, "col", json_integer(m->col), ok);
		ct_json_set(o, "access", json_string(ref_access(m)), ok);
		ct_json_set(o, "split", json_string(split_names[m->split]), ok);
		ct_json_set(o, "accesses", json_integer((json_int_t)m->accesses), ok);
		ct_json_set(o, "misses", ct_json_ints(m->misses, nlevels), ok);
		ct_json_set(o, "cold", ct_json_ints(m->cold, nlevels), ok);
		for (int l = 0; l < nlevels; l++)
			ct_json_push(carried, json_string(carrier_text(m, l, carrier, sizeof carrier)), ok);
		ct_json_set(o, "carried_by", carried, ok);
		ct_json_push(a, o, ok);
	}
	return a;
}

json_t *cache_level_json(int64_t size, int64_t line, int64_t ways, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "size", json_integer((json_int_t)size), ok);
	ct_json_set(o, "line", json_integer((json_int_t)line), ok);
	ct_json_set(o, "ways", json_integer((json_int_t)ways), ok);
	return o;
}

/* ct_fallback_reason as JSON says it: why a level was simulated. */
static const char *const fallback_names[] = {"", "set-associative", "model not exact",
                                             "model over its work budget", "affine loop bounds"};

json_t *predict_level_json(const ct_predict_result *r, int l, bool *ok)
{
	json_t *lv = cache_level_json(r->level[l].size, r->level[l].line, r->level[l].ways, ok);
	ct_json_set(lv, "misses", json_integer((json_int_t)r->level[l].misses), ok);
	ct_json_set(lv, "exact", json_boolean(r->level[l].exact), ok);
	ct_json_set(lv, "source", json_string(count_source_name(r->source[l])), ok);
	if (r->fallback[l] > CT_FALLBACK_NONE && r->fallback[l] <= CT_FALLBACK_AFFINE)
		ct_json_set(lv, "fallback", json_string(fallback_names[r->fallback[l]]), ok);
	return lv;
}

/* ------------------------------------------------------------ output files */

int make_parents(const char *path, int self)
{
	char p[4096];
	if (snprintf(p, sizeof p, "%s%s", path, self ? "/" : "") >= (int)sizeof p) {
		fprintf(stderr, "cachet: error: the name '%.200s...' is too long\n", path);
		return 0;
	}
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		struct stat sb;
		if (stat(p, &sb) != 0 && mkdir(p, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "cachet: error: cannot create folder '%s': %s\n", p, strerror(errno));
			return 0;
		}
		*q = '/';
	}
	return 1;
}

int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

FILE *atomic_open(atomic_file *o, const char *path)
{
	o->path = path;
	o->f = NULL;
	struct stat sb;
	o->in_place = lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
	if (o->in_place) {
		if (!(o->f = fopen(path, "w")))
			fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
		return o->f;
	}
	const char *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path + 1) : 0;
	if (snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dl, path, slash ? slash + 1 : path) >=
	    (int)sizeof o->tmp) {
		fprintf(stderr, "%s: error: cannot write: the name is too long\n", path);
		return NULL;
	}
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
		return NULL;
	}
	/* mkstemp makes 0600; the file gets the mode a plain fopen would give it */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		return NULL;
	}
	return o->f;
}

int atomic_commit(atomic_file *o)
{
	if (!o->f)
		return 0;
	errno = 0;
	int ok = fflush(o->f) == 0 && !ferror(o->f);
	int err = errno;
	if (ok && !o->in_place && fsync(fileno(o->f)) != 0)
		ok = 0, err = errno;
	if (fclose(o->f) != 0 && ok)
		ok = 0, err = errno;
	o->f = NULL;
	if (o->in_place) {
		if (!ok)
			fprintf(stderr, "%s: error: cannot write: %s\n", o->path, err ? strerror(err) : "a write failed");
		return ok;
	}
	if (ok && rename(o->tmp, o->path) != 0)
		ok = 0, err = errno;
	if (!ok) {
		unlink(o->tmp);
		fprintf(stderr, "%s: error: cannot write: %s (nothing replaced)\n", o->path,
		        err ? strerror(err) : "a write failed");
	}
	return ok;
}

void atomic_abort(atomic_file *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		if (!o->in_place)
			unlink(o->tmp);
	}
}

/* ------------------------------------------------------------ what a signal undoes */

/* Remove name (under folder fd) and, for a folder, everything in it, with
 * system calls only: async-signal-safe, for the signal handler below. */
void remove_tree_at(int fd, const char *name, int depth)
{
	if (unlinkat(fd, name, 0) == 0 || depth > 16)
		return;
	int d = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return;
	char buf[4096];
	ssize_t n;
	while ((n = getdents64(d, buf, sizeof buf)) > 0)
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);
			off += e->d_reclen;
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				remove_tree_at(d, e->d_name, depth + 1);
		}
	close(d);
	unlinkat(fd, name, AT_REMOVEDIR);
}

#define TEMP_SLOTS 2

/* The tool's own temp folders (report's plot folder) and child (gnuplot),
 * as the signal handler reads them: a slot's name is whole before it is
 * marked used. */
static char temp_dir[TEMP_SLOTS][4096];
static volatile sig_atomic_t temp_used[TEMP_SLOTS];
volatile sig_atomic_t tool_child;

int temp_track(const char *dir)
{
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (!temp_used[i] && strlen(dir) < sizeof temp_dir[i]) {
			memcpy(temp_dir[i], dir, strlen(dir) + 1);
			atomic_signal_fence(memory_order_seq_cst);
			temp_used[i] = 1;
			return i;
		}
	return -1;
}

void temp_untrack(int slot)
{
	if (slot >= 0 && slot < TEMP_SLOTS)
		temp_used[slot] = 0;
}

void undo_for_signal(void)
{
	pid_t pid = (pid_t)tool_child;
	if (pid > 0) {
		kill(-pid, SIGKILL); /* its process group */
		kill(pid, SIGKILL);
	}
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (temp_used[i])
			remove_tree_at(AT_FDCWD, temp_dir[i], 0);
}
