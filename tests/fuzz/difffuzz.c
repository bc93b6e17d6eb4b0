/* difffuzz.c: the differential fuzzer of the schedule and plan space (docs/FUZZ.md). Each random
 * kernel (plangen.c) is checked in a child process: a refusal must carry file:line:col; an accepted
 * kernel must lower, emit and verify against the unplanned reference in the interpreter, natively
 * on 1 and 2 threads and on OpenCL. Failures are minimized and written as .cachet files. */
#include "plangen.h"

#include <cachet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum cls {
	C_PASS, C_REJECT, C_LIMIT, C_REJECT_NOLOC, C_CHECK_MISMATCH, C_WRONG, C_OOB, C_RUNERR, C_COMPILE,
	C_CRASH, C_HANG, C_NCLS
};
static const char *cls_name[C_NCLS] = {"pass", "rejected", "limit", "reject-noloc", "check-mismatch",
				       "wrong-result", "oob", "run-error", "compile-error", "crash", "hang"};

enum eng { E_INTERP, E_NATIVE1, E_NATIVE2, E_OPENCL, E_NENG };
static const char *eng_name[E_NENG] = {"interp", "native", "native-2t", "opencl"};

/* What a child reports about one kernel. */
typedef struct verdict {
	int cls;
	int accepted;
	int verified[E_NENG];
	char engine[16];
	char msg[600];
} verdict;

typedef struct config {
	uint64_t seed;
	long count;
	double seconds;
	int interp, native, opencl;
	int native_every;   /* run natively every Nth accepted kernel */
	int opencl_share;   /* percent of kernels with plan(target=opencl) */
	int minimize;
	int timeout;        /* seconds per kernel */
	int quiet;
	int verbose;      /* print every kernel's verdict */
	const char *out, *findings;
	const char *ccwrap;
	char cachedir[256];
	int checked;
	int jobs;         /* worker processes */
} config;

static config cfg;

/* ------------------------------------------------------------------ one kernel, in a child */

static void set_verdict(verdict *v, int cls, int eng, const char *fmt, ...)
{
	v->cls = cls;
	snprintf(v->engine, sizeof v->engine, "%s", eng >= 0 ? eng_name[eng] : "check");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof v->msg, fmt, ap);
	va_end(ap);
	for (char *p = v->msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '|')
			*p = ' ';
}

static void quiet_warning(void *ud, const char *msg)
{
	(void)ud, (void)msg;
}

/* Classify a failed status of lower/emit/run. */
static int classify(ct_status st, const char *msg)
{
	if (st == CT_ERR_VERIFY)
		return C_WRONG;
	if (strstr(msg, "out-of-bounds") || strstr(msg, "out of bounds"))
		return C_OOB;
	if (st == CT_ERR_LIMIT)
		return C_LIMIT;
	if (st == CT_ERR_INPUT || st == CT_ERR_UNSUPPORTED || st == CT_ERR_USAGE)
		return C_CHECK_MISMATCH;
	if (st == CT_ERR_COMPILE)
		return C_COMPILE;
	return C_RUNERR;
}

static int run_engine(ct_kernel *k, ct_ctx *ctx, int eng, verdict *v)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = eng == E_INTERP ? CT_ENGINE_INTERP : CT_ENGINE_NATIVE;
	o.threads = eng == E_NATIVE2 ? 2 : 1;
	o.verify = 1;
	o.repeat = 1;
#ifdef FUZZ_HAVE_CHECKED
	if (eng == E_NATIVE1 || eng == E_NATIVE2)
		o.checked = cfg.checked;
#endif
	ct_run_result r;
	memset(&r, 0, sizeof r);
	ct_status st = ct_kernel_run(k, &o, &r);
	if (st == CT_OK && r.verified == 1) {
		v->verified[eng] = 1;
		return 0;
	}
	if (st == CT_OK) {
		set_verdict(v, C_WRONG, eng, "not verified (verified=%d)", r.verified);
		return 1;
	}
	if (st == CT_ERR_VERIFY) {
		set_verdict(v, C_WRONG, eng, "max relative error %.3g in '%s'", r.max_rel_error,
			    r.mismatch_array ? r.mismatch_array : "?");
		return 1;
	}
	int c = classify(st, ct_ctx_last_message(ctx));
	set_verdict(v, c, eng, "%s", ct_ctx_last_message(ctx));
	return 1;
}

/* Parse, check, lower, emit and run text; fill v. */
static void check_kernel(const char *text, size_t len, const pg_kernel *pk, int native, verdict *v)
{
	memset(v, 0, sizeof *v);
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx) {
		set_verdict(v, C_RUNERR, -1, "ct_ctx_new failed");
		return;
	}
	ct_cache_set_warning_handler(ctx, quiet_warning, NULL);
	if (cfg.cachedir[0])
		ct_cache_set_dir(ctx, cfg.cachedir);
	if (cfg.ccwrap)
		ct_ctx_set_compiler(ctx, cfg.ccwrap);
	ct_kernel *k = ct_kernel_parse(ctx, text, len, "fuzz.cachet");
	for (int i = 0; k && pk && i < pk->np; i++) {
		if (!pk->p[i].runtime)
			continue;
		if (ct_kernel_set_param(k, pk->p[i].name, pk->p[i].value) != CT_OK || ct_kernel_recheck(k) != CT_OK) {
			ct_kernel_free(k);
			k = NULL;
		}
	}
	/* a file: the -D NAME=VALUE of its "# run-with:" line */
	const char *rw = k && !pk ? strstr(text, "# run-with:") : NULL;
	while (k && rw && (rw = strstr(rw, "-D ")) != NULL && rw < text + len) {
		char name[64];
		long long val;
		rw += 3;
		if (sscanf(rw, "%63[A-Za-z0-9_]=%lld", name, &val) == 2 &&
		    (ct_kernel_set_param(k, name, val) != CT_OK || ct_kernel_recheck(k) != CT_OK)) {
			ct_kernel_free(k);
			k = NULL;
		}
	}
	if (!k) {
		int line = ct_ctx_last_line(ctx), col = ct_ctx_last_col(ctx);
		const char *file = ct_ctx_last_file(ctx);
		int located = line > 0 && col > 0 && file && strcmp(file, "fuzz.cachet") == 0;
		set_verdict(v, located ? C_REJECT : C_REJECT_NOLOC, -1, "%s:%d:%d: %s", file ? file : "(null)", line,
			    col, ct_ctx_last_message(ctx));
		ct_ctx_free(ctx);
		return;
	}
	v->accepted = 1;
	int opencl = pk ? pk->opencl : strstr(text, "target=opencl") != NULL;
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t) {
		set_verdict(v, classify(ct_ctx_last_status(ctx), ct_ctx_last_message(ctx)), -1, "lower: %s",
			    ct_ctx_last_message(ctx));
		snprintf(v->engine, sizeof v->engine, "lower");
		goto done;
	}
	free(ct_looptree_to_string(t, CT_FORMAT_TEXT));
	free(ct_looptree_to_string(t, CT_FORMAT_JSON));
	ct_looptree_free(t);
	size_t n = 0;
	char *src = ct_kernel_emit(k, opencl ? "opencl" : "host", &n);
	if (!src) {
		set_verdict(v, classify(ct_ctx_last_status(ctx), ct_ctx_last_message(ctx)), -1, "emit: %s",
			    ct_ctx_last_message(ctx));
		snprintf(v->engine, sizeof v->engine, "emit");
		goto done;
	}
	free(src);
	if (cfg.interp && run_engine(k, ctx, E_INTERP, v))
		goto done;
	if (opencl) {
		if (cfg.opencl && native && run_engine(k, ctx, E_OPENCL, v))
			goto done;
	} else if (cfg.native && native) {
		if (run_engine(k, ctx, E_NATIVE1, v) || run_engine(k, ctx, E_NATIVE2, v))
			goto done;
	}
	v->cls = C_PASS;
done:
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Run check_kernel in a child (crashes and hangs become verdicts). */
static void test_in_child(const char *text, size_t len, const pg_kernel *pk, int native, verdict *v)
{
	int fd[2];
	memset(v, 0, sizeof *v);
	if (pipe(fd) != 0) {
		set_verdict(v, C_RUNERR, -1, "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		alarm((unsigned)cfg.timeout);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0 && !getenv("FUZZ_CHILD_STDERR"))
			dup2(devnull, 2);
		verdict cv;
		check_kernel(text, len, pk, native, &cv);
		size_t off = 0;
		while (off < sizeof cv) {
			ssize_t w = write(fd[1], (char *)&cv + off, sizeof cv - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fd[1]);
	size_t off = 0;
	while (pid > 0 && off < sizeof *v) {
		ssize_t r = read(fd[0], (char *)v + off, sizeof *v - off);
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (pid < 0)
		set_verdict(v, C_RUNERR, -1, "fork: %s", strerror(errno));
	else if (off < sizeof *v) {
		int accepted = v->accepted;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			set_verdict(v, C_HANG, -1, "no answer in %d s", cfg.timeout);
		else if (WIFSIGNALED(status))
			set_verdict(v, C_CRASH, -1, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			set_verdict(v, C_CRASH, -1, "child exited %d without a verdict", WEXITSTATUS(status));
		v->accepted = accepted;
	}
}

static int is_failure(int c)
{
	return c >= C_REJECT_NOLOC;
}

static void test_kernel(const pg_kernel *k, int native, verdict *v)
{
	static char text[65536];
	size_t n = pg_print(k, text, sizeof text);
	test_in_child(text, n, k, native, v);
}

/* ------------------------------------------------------------------ findings */

static int ends_with(const char *s, size_t n, const char *w)
{
	size_t m = strlen(w);
	return n >= m && memcmp(s + n - m, w, m) == 0;
}

/* The message with numbers and quoted names blanked (the dedupe key). */
static void normalize(const char *m, char *out, size_t cap)
{
	size_t n = 0;
	/* an OpenCL build log: its first error, without the device and the temp file's name */
	const char *log = strstr(m, "build log:"), *cl = log ? strstr(log, ".cl:") : NULL;
	char first[300];
	if (cl) {
		cl += 4;
		while ((*cl >= '0' && *cl <= '9') || *cl == ':')
			cl++;
		snprintf(first, sizeof first, "opencl build: %s", cl);
		char *cut = strstr(first, " error:");
		if (cut)
			*cut = 0;
		m = first;
	}
	for (const char *p = m; *p && n + 4 < cap; p++) {
		if (*p >= '0' && *p <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			if (n && out[n - 1] == '-')
				n--;
			out[n++] = '#';
		} else if (*p == '(' && (ends_with(out, n, "unroll") || ends_with(out, n, "vectorize") ||
					 ends_with(out, n, "parallelize")) && strchr(p, ')')) {
			p = strchr(p, ')'); /* the indices of a verb: unroll(?) */
			out[n++] = '(', out[n++] = '?', out[n++] = ')';
		} else if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');
			if (q && q - p < 40) {
				out[n++] = '?';
				p = q;
			}
		} else if (*p == '.' && n && out[n - 1] == '#') {
			/* 2.2 -> # */
		} else if (*p == 'e' && n && out[n - 1] == '#' && (p[1] == '-' || p[1] == '+')) {
			p++;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = 0;
}

static int same_failure(const verdict *a, const verdict *b)
{
	if (a->cls != b->cls)
		return 0;
	if (a->cls == C_WRONG || a->cls == C_OOB || a->cls == C_CRASH || a->cls == C_HANG)
		return 1;
	char na[600], nb[600];
	normalize(a->msg, na, sizeof na);
	normalize(b->msg, nb, sizeof nb);
	return strcmp(na, nb) == 0;
}

/* Plan features of k, for the index (what the minimized kernel still needs). */
static void features(const pg_kernel *k, char *buf, size_t cap)
{
	buf[0] = 0;
#define FEAT(cond, s) \
	do { \
		if ((cond) && !strstr(buf, s " ")) \
			snprintf(buf + strlen(buf), cap - strlen(buf), "%s ", s); \
	} while (0)
	for (int c = 0; c < k->nc; c++) {
		const pg_cache *cc = &k->c[c];
		if (!cc->alive)
			continue;
		FEAT(1, "cache");
		FEAT(cc->parent >= 0, "hierarchy");
		FEAT(cc->trig, "trigger");
		FEAT(cc->dbuf, "double_buffer");
		FEAT(cc->place == PG_MAXEL, "max_elements");
		FEAT(cc->layout, "layout");
		FEAT(cc->thrifty == 0, "thrifty=false");
		FEAT(cc->loc == 1, "local");
		FEAT(cc->loc == 2, "private");
	}
	for (int s = 0; s < k->ns; s++) {
		if (!k->s[s].alive)
			continue;
		FEAT(1, "split");
		FEAT(k->s[s].balanced, "balanced");
	}
	for (int b = 0; b < k->nb; b++)
		FEAT(k->b[b].reorder, "reorder");
	for (int v = 0; v < k->nv; v++) {
		const pg_verbi *vv = &k->v[v];
		if (!vv->alive)
			continue;
		FEAT(vv->kind == PG_VECTORIZE, "vectorize");
		FEAT(vv->nontemporal, "nontemporal");
		FEAT(vv->kind == PG_UNROLL, "unroll");
		FEAT(vv->kind == PG_PARALLELIZE, "parallelize");
		FEAT(vv->spmd, "spmd");
	}
	for (int p = 0; p < k->np; p++)
		FEAT(k->p[p].runtime, "runtime");
	for (int a = 0; a < k->na; a++)
		FEAT(k->a[a].strided, "strided");
	FEAT(k->opencl, "opencl");
	static const char *const kinds[] = {"matmul", "matmul_imperfect", "matvec", "transpose", "stencil1d",
					    "stencil2d", "stencil3d", "two_index", "reduce_temp"};
	snprintf(buf + strlen(buf), cap - strlen(buf), "kernel=%s ", kinds[k->kind % PG_NKINDS]);
#undef FEAT
	size_t n = strlen(buf);
	if (n)
		buf[n - 1] = 0;
}

/* Shrink k while it fails as v does; returns the number of tests made. */
static int minimize(pg_kernel *k, int native, verdict *v)
{
	int tests = 0, e = 0;
	/* a failure before any run needs no compiled runs to reproduce */
	if (strcmp(v->engine, "lower") == 0 || strcmp(v->engine, "emit") == 0 || strcmp(v->engine, "check") == 0)
		native = 0;
	time_t start = time(NULL);
	pg_kernel cand;
	while (tests < 400 && time(NULL) - start < 120 && pg_edit(k, e, &cand)) {
		verdict cv;
		test_kernel(&cand, native, &cv);
		tests++;
		if (same_failure(&cv, v)) {
			*k = cand;
			*v = cv;
		} else {
			e++;
		}
	}
	return tests;
}

/* Whether sig is already listed in dir/.sigs; if not, add it (under a lock: two campaigns share it). */
static int seen_before(const char *dir, const char *sig, const char *file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/.sigs", dir);
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return 0;
	flock(fd, LOCK_EX);
	FILE *f = fdopen(fd, "r+");
	char line[1024];
	int seen = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t');
		if (tab)
			*tab = 0;
		if (strcmp(line, sig) == 0)
			seen = 1;
	}
	if (f && !seen) {
		fseek(f, 0, SEEK_END);
		fprintf(f, "%s\t%s\n", sig, file);
		fflush(f);
	}
	flock(fd, LOCK_UN);
	if (f)
		fclose(f);
	else
		close(fd);
	return seen;
}

static void append_index(const char *dir, const char *fname, const verdict *v, const char *feat);

static void write_finding(const char *dir, const char *fname, const char *text, const pg_kernel *k,
			  const verdict *v, const char *feat, int index)
{
	char path[512];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/%s", dir, fname);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	char rw[256];
	pg_run_with(k, rw, sizeof rw);
	fprintf(f, "# fuzz finding (tests/fuzz/difffuzz): seed %llu, class %s, engine %s\n",
		(unsigned long long)k->seed, cls_name[v->cls], v->engine);
	fprintf(f, "# message: %s\n# features: %s\n", v->msg, feat);
	if (rw[0])
		fprintf(f, "# run-with: %s\n", rw);
	fputs(text, f);
	fclose(f);
	if (index)
		append_index(dir, fname, v, feat);
}

/* One line of dir/INDEX.md (the table's head first when the file is new). */
static void append_index(const char *dir, const char *fname, const verdict *v, const char *feat)
{
	char path[512];
	snprintf(path, sizeof path, "%s/INDEX.md", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	flock(fd, LOCK_EX);
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size == 0)
		dprintf(fd, "# Differential fuzzer findings (tests/fuzz/difffuzz, docs/FUZZ.md)\n\n"
			    "| file | class | engine | message | features |\n|---|---|---|---|---|\n");
	const char *m = v->msg, *log = strstr(m, "build log:"), *cl = log ? strstr(log, ".cl:") : NULL;
	char first[300];
	if (cl) {
		snprintf(first, sizeof first, "OpenCL build: %s", cl + 4);
		char *cut = strstr(first, " error:");
		if (cut)
			*cut = 0;
		m = first;
	}
	dprintf(fd, "| %s | %s | %s | %.200s | %s |\n", fname, cls_name[v->cls], v->engine, m, feat);
	flock(fd, LOCK_UN);
	close(fd);
}

/* The dedupe key of a finding: class, engine, blanked message; for wrong results and oob also the
 * features that change what the plan pass builds (not layouts, orders or the kernel). */
static void sig_of(int cls, const char *engine, const char *msg, const char *feat, char *sig, size_t cap)
{
	char norm[600], cf[256] = "";
	normalize(msg, norm, sizeof norm);
	if (cls == C_WRONG || cls == C_OOB) {
		static const char *const core[] = {"hierarchy", "trigger", "double_buffer", "max_elements",
						   "runtime", "local", "private", "parallelize", "spmd",
						   "balanced", "nontemporal", "unroll", "vectorize", "cache", "split"};
		for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
			size_t n = strlen(core[i]);
			for (const char *f = strstr(feat, core[i]); f; f = strstr(f + 1, core[i]))
				if ((f[n] == ' ' || f[n] == 0) && (f == feat || f[-1] == ' ')) {
					snprintf(cf + strlen(cf), sizeof cf - strlen(cf), "%s ", core[i]);
					break;
				}
		}
	}
	snprintf(sig, cap, "%s|%s|%s|%s", cls_name[cls], engine, norm, cf);
}

/* Rebuild dir/INDEX.md and dir/.sigs from the findings' headers, moving duplicates (by sig_of)
 * to dir/dups/. */
static int reindex(const char *dir)
{
	char cmd[1200], path[1024];
	snprintf(cmd, sizeof cmd, "ls '%s' | grep '\\.cachet$' | sort -t- -k2 -n", dir);
	FILE *ls = popen(cmd, "r");
	if (!ls)
		return 2;
	snprintf(path, sizeof path, "%s/.sigs", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/INDEX.md", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/dups", dir);
	mkdir(path, 0755);
	char name[256];
	int kept = 0, moved = 0;
	while (fgets(name, sizeof name, ls)) {
		name[strcspn(name, "\n")] = 0;
		snprintf(path, sizeof path, "%s/%s", dir, name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		char line[2048], clsn[64] = "", eng[16] = "", feat[256] = "";
		verdict v;
		memset(&v, 0, sizeof v);
		unsigned long long seed = 0;
		while (fgets(line, sizeof line, f) && line[0] == '#') {
			line[strcspn(line, "\n")] = 0;
			sscanf(line, "# fuzz finding (tests/fuzz/difffuzz): seed %llu, class %63[^,], engine %15s", &seed, clsn, eng);
			if (strncmp(line, "# message: ", 11) == 0)
				snprintf(v.msg, sizeof v.msg, "%.590s", line + 11);
			if (strncmp(line, "# features: ", 12) == 0)
				snprintf(feat, sizeof feat, "%.250s", line + 12);
		}
		fclose(f);
		for (int c = 0; c < C_NCLS; c++)
			if (strcmp(clsn, cls_name[c]) == 0)
				v.cls = c;
		snprintf(v.engine, sizeof v.engine, "%s", eng);
		char sig[1024];
		sig_of(v.cls, v.engine, v.msg, feat, sig, sizeof sig);
		if (seen_before(dir, sig, name)) {
			char to[1024];
			snprintf(to, sizeof to, "%s/dups/%s", dir, name);
			rename(path, to);
			moved++;
			continue;
		}
		kept++;
		append_index(dir, name, &v, feat);
	}
	pclose(ls);
	printf("%d findings kept, %d duplicates moved to %s/dups\n", kept, moved, dir);
	return 0;
}

/* A failure: minimize it, dedupe it, write it. Returns 1 when it is new. */
static int report_failure(pg_kernel *k, int native, verdict *v)
{
	if (cfg.minimize)
		minimize(k, native, v);
	static char text[65536];
	pg_print(k, text, sizeof text);
	char feat[256], sig[1024];
	features(k, feat, sizeof feat);
	sig_of(v->cls, v->engine, v->msg, feat, sig, sizeof sig);
	char fname[128];
	snprintf(fname, sizeof fname, "%s-%llu.cachet", cls_name[v->cls], (unsigned long long)k->seed);
	int fresh = 1;
	if (cfg.out) {
		fresh = !seen_before(cfg.out, sig, fname);
		if (fresh)
			write_finding(cfg.out, fname, text, k, v, feat, 1);
	}
	if (cfg.findings && !seen_before(cfg.findings, sig, fname))
		write_finding(cfg.findings, fname, text, k, v, feat, 1);
	if (!cfg.quiet)
		printf("FAIL seed %llu: %s (%s): %s%s\n", (unsigned long long)k->seed, cls_name[v->cls], v->engine,
		       v->msg, fresh ? "" : " [seen]");
	return fresh;
}

/* ------------------------------------------------------------------ the campaign */

typedef struct tally {
	long tried, rejected, accepted, limit, failed, newfail;
	long verified[E_NENG];
	long bycls[C_NCLS];
} tally;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void summary(const tally *t, double secs)
{
	printf("kernels: %ld tried, %ld rejected by check, %ld accepted, %ld hit a run-time limit, %.1f s (%.1f kernels/s)\n",
	       t->tried, t->rejected, t->accepted, t->limit, secs, secs > 0 ? (double)t->tried / secs : 0);
	printf("verified: interp %ld, native %ld, native-2t %ld, opencl %ld\n", t->verified[E_INTERP],
	       t->verified[E_NATIVE1], t->verified[E_NATIVE2], t->verified[E_OPENCL]);
	printf("failures:");
	int any = 0;
	for (int c = C_REJECT_NOLOC; c < C_NCLS; c++)
		if (t->bycls[c])
			printf(" %s %ld", cls_name[c], t->bycls[c]), any = 1;
	printf("%s\n", any ? "" : " none");
}

/* Worker w of jobs: kernels seed + w, seed + w + jobs, ... into t. */
static void run_share(int w, int jobs, tally *t)
{
	memset(t, 0, sizeof *t);
	double t0 = now(), last = t0;
	long accepted_seen = 0;
	for (long i = w; cfg.count <= 0 || i < cfg.count; i += jobs) {
		if (cfg.seconds > 0 && now() - t0 >= cfg.seconds)
			break;
		pg_kernel k;
		pg_generate(&k, cfg.seed + (uint64_t)i, cfg.opencl_share);
		int native = (cfg.native || cfg.opencl) && cfg.native_every > 0 &&
			     (accepted_seen % cfg.native_every) == 0;
		verdict v;
		test_kernel(&k, native, &v);
		t->tried++;
		if (v.accepted)
			accepted_seen++;
		for (int e = 0; e < E_NENG; e++)
			t->verified[e] += v.verified[e];
		if (cfg.verbose)
			printf("seed %llu: %s (%s) %s\n", (unsigned long long)k.seed, cls_name[v.cls], v.engine, v.msg);
		if (v.cls == C_REJECT)
			t->rejected++;
		else if (v.accepted)
			t->accepted++;
		if (v.cls == C_LIMIT)
			t->limit++;
		if (is_failure(v.cls)) {
			t->failed++;
			t->bycls[v.cls]++;
			t->newfail += report_failure(&k, native, &v);
		}
		if (!cfg.quiet && now() - last >= 10) {
			last = now();
			char who[32] = "";
			if (jobs > 1)
				snprintf(who, sizeof who, ", worker %d", w);
			printf("[%.0f s%s] %ld kernels, %ld accepted, %ld failed (%ld new)\n", last - t0, who, t->tried,
			       t->accepted, t->failed, t->newfail);
			fflush(stdout);
		}
	}
}

/* The campaign, on cfg.jobs worker processes; one summary. */
static int campaign(void)
{
	tally t, part;
	double t0 = now();
	if (cfg.jobs <= 1) {
		run_share(0, 1, &t);
	} else {
		memset(&t, 0, sizeof t);
		int fds[64];
		pid_t pids[64];
		for (int w = 0; w < cfg.jobs; w++) {
			int fd[2];
			if (pipe(fd) != 0)
				return 2;
			fflush(stdout);
			pids[w] = fork();
			if (pids[w] == 0) {
				close(fd[0]);
				run_share(w, cfg.jobs, &part);
				ssize_t wr = write(fd[1], &part, sizeof part);
				_exit(wr == (ssize_t)sizeof part ? 0 : 1);
			}
			close(fd[1]);
			fds[w] = fd[0];
		}
		for (int w = 0; w < cfg.jobs; w++) {
			memset(&part, 0, sizeof part);
			if (read(fds[w], &part, sizeof part) != (ssize_t)sizeof part)
				part.failed++, part.bycls[C_CRASH]++; /* a worker lost: count it */
			close(fds[w]);
			if (pids[w] > 0)
				waitpid(pids[w], NULL, 0);
			t.tried += part.tried, t.rejected += part.rejected, t.accepted += part.accepted;
			t.limit += part.limit, t.failed += part.failed, t.newfail += part.newfail;
			for (int e = 0; e < E_NENG; e++)
				t.verified[e] += part.verified[e];
			for (int c = 0; c < C_NCLS; c++)
				t.bycls[c] += part.bycls[c];
		}
	}
	summary(&t, now() - t0);
	printf("%ld passed, %ld failed\n", t.tried - t.failed, t.failed);
	return t.failed ? 1 : 0;
}

/* Test one .cachet file (a finding or a regression) the same way. */
static int test_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "difffuzz: cannot read %s\n", path);
		return 2;
	}
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	verdict v;
	test_in_child(text, n, NULL, 1, &v);
	printf("%s: %s (%s) %s\n", path, cls_name[v.cls], v.engine, v.msg);
	return is_failure(v.cls) ? 1 : 0;
}

static void rm_tree(const char *dir)
{
	if (!dir[0])
		return;
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: difffuzz [--seed S] [--count N] [--seconds T] [--engines interp,native,opencl]\n"
		"                [--native-every N] [--opencl-share P] [--out DIR] [--findings DIR]\n"
		"                [--no-minimize] [--timeout S] [--cc CMD] [--checked 0|1] [--jobs J] [--verbose] [--quiet]\n"
		"       difffuzz --print SEED [--opencl-share P]     print the kernel of one seed\n"
		"       difffuzz --file F.cachet [--engines ...]     check one file\n"
		"       difffuzz --reindex DIR                       rebuild DIR/INDEX.md, duplicates to DIR/dups\n");
}

int main(int argc, char **argv)
{
	cfg.seed = 1;
	cfg.count = 1000;
	cfg.interp = 1;
	cfg.native_every = 1;
	cfg.opencl_share = -1;
	cfg.minimize = 1;
	cfg.timeout = 60;
	cfg.checked = 1;
	const char *file = NULL;
	long print_seed = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && val && ++i)
		if (ARG("--seed"))
			cfg.seed = strtoull(val, NULL, 10);
		else if (ARG("--count"))
			cfg.count = atol(val);
		else if (ARG("--seconds"))
			cfg.seconds = atof(val), cfg.count = cfg.count == 1000 ? 0 : cfg.count;
		else if (ARG("--engines")) {
			cfg.interp = strstr(val, "interp") != NULL;
			cfg.native = strstr(val, "native") != NULL;
			cfg.opencl = strstr(val, "opencl") != NULL;
		} else if (ARG("--native-every"))
			cfg.native_every = atoi(val);
		else if (ARG("--opencl-share"))
			cfg.opencl_share = atoi(val);
		else if (ARG("--out"))
			cfg.out = val;
		else if (ARG("--findings"))
			cfg.findings = val;
		else if (ARG("--jobs"))
			cfg.jobs = atoi(val) < 1 ? 1 : atoi(val) > 64 ? 64 : atoi(val);
		else if (ARG("--timeout"))
			cfg.timeout = atoi(val);
		else if (ARG("--cc"))
			cfg.ccwrap = val;
		else if (ARG("--checked"))
			cfg.checked = atoi(val);
		else if (ARG("--print"))
			print_seed = atol(val);
		else if (ARG("--file"))
			file = val;
		else if (ARG("--reindex"))
			return reindex(val);
		else if (strcmp(a, "--no-minimize") == 0)
			cfg.minimize = 0;
		else if (strcmp(a, "--verbose") == 0)
			cfg.verbose = 1;
		else if (strcmp(a, "--quiet") == 0)
			cfg.quiet = 1;
		else {
			usage();
			return 2;
		}
#undef ARG
	}
	if (cfg.opencl_share < 0)
		cfg.opencl_share = cfg.opencl ? 15 : 0;
	if (print_seed >= 0) {
		pg_kernel k;
		static char text[65536];
		pg_generate(&k, (uint64_t)print_seed, cfg.opencl_share);
		pg_print(&k, text, sizeof text);
		char rw[256];
		pg_run_with(&k, rw, sizeof rw);
		if (rw[0])
			printf("# run-with: %s\n", rw);
		fputs(text, stdout);
		return 0;
	}
	/* a private code cache for this run (removed at the end), PoCL without optimization */
	char tmpl[] = "/tmp/difffuzz-cache-XXXXXX";
	if (mkdtemp(tmpl))
		snprintf(cfg.cachedir, sizeof cfg.cachedir, "%s", tmpl);
	char pocl[300];
	snprintf(pocl, sizeof pocl, "%s/pocl", cfg.cachedir);
	if (cfg.cachedir[0] && !getenv("POCL_CACHE_DIR"))
		setenv("POCL_CACHE_DIR", pocl, 1);
	/* OpenCL programs build with the engine's own options (ocl_build_options),
	 * as a user's do, unless CACHET_OPENCL_OPTIONS says otherwise */
	static char wrap[600];
	char *abs = realpath("tests/fuzz/cc-fast.sh", NULL);
	if (!cfg.ccwrap && getenv("FUZZ_CC_WRAP"))
		cfg.ccwrap = getenv("FUZZ_CC_WRAP");
	else if (!cfg.ccwrap && abs && getenv("FUZZ_OPT")) {
		/* FUZZ_OPT's flags after cachet's -O3 (see cc-fast.sh) */
		snprintf(wrap, sizeof wrap, "sh %s", abs);
		cfg.ccwrap = wrap;
	}
	free(abs);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int rc = file ? test_file(file) : campaign();
	rm_tree(cfg.cachedir);
	return rc;
}
