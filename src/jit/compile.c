/* compile.c: run the system compiler without a shell (posix_spawn, timeout), probe its identity,
 * build one .so. */
#include "jit/jit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#define RUN_KEEP (64 * 1024) /* bytes of compiler output kept */
#define MSG_EXCERPT 700      /* bytes of compiler output put in an error message */

/* ------------------------------------------------------------ files */

bool jit_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap;
}

ct_status jit_read_file(ct_ctx *ctx, const char *path, size_t max, unsigned char **data,
                        size_t *len)
{
	*data = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ct_error(ctx, CT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0 ||
	    (uint64_t)sb.st_size > max) {
		close(fd);
		return ct_error(ctx, CT_ERR_IO, "%s is not a regular file of at most %zu bytes",
		                path, max);
	}
	size_t n = (size_t)sb.st_size;
	unsigned char *buf = ct_alloc(ctx, n + 1);
	if (!buf) {
		close(fd);
		return CT_ERR_NOMEM;
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != n) {
		ct_free(ctx, buf);
		return ct_error(ctx, CT_ERR_IO, "short read on %s", path);
	}
	*data = buf;
	*len = n;
	return CT_OK;
}

bool jit_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t)w;
	}
	return true;
}

/* ------------------------------------------------------------ what ct_ctx_cancel undoes */

/* The tracking of ctx (NULL before its code-cache state exists: then
 * nothing it runs is tracked, and nothing it made needs undoing). */
static jit_live *live_of(ct_ctx *ctx)
{
	jit_state *st = ctx->code_cache;
	return st ? &st->live : NULL;
}

static void live_add_pid(jit_live *lv, pid_t pid)
{
	for (int i = 0; lv && i < JIT_LIVE_SLOTS; i++)
		if (lv->pid[i] == 0) {
			lv->pid[i] = (sig_atomic_t)pid;
			return;
		}
}

static void live_drop_pid(jit_live *lv, pid_t pid)
{
	for (int i = 0; lv && i < JIT_LIVE_SLOTS; i++)
		if (lv->pid[i] == (sig_atomic_t)pid)
			lv->pid[i] = 0;
}

/* A free folder slot holding the mkdtemp template tmpl, then marked used
 * (the name is whole before a handler can see it; mkdtemp then changes
 * only its last six letters: a handler's rmdir of the unfinished name
 * fails harmlessly); NULL when all are taken or tmpl is too long. */
static char *live_take_dir(jit_live *lv, const char *tmpl)
{
	for (int i = 0; strlen(tmpl) < JIT_LIVE_PATH && i < JIT_LIVE_SLOTS; i++)
		if (!lv->dir_used[i]) {
			memcpy(lv->dir[i], tmpl, strlen(tmpl) + 1);
			atomic_signal_fence(memory_order_seq_cst);
			lv->dir_used[i] = 1;
			return lv->dir[i];
		}
	return NULL;
}

void jit_build_forget(jit_state *st, const char *dir)
{
	for (int i = 0; dir && i < JIT_LIVE_SLOTS; i++)
		if (st->live.dir_used[i] && strcmp(st->live.dir[i], dir) == 0)
			st->live.dir_used[i] = 0;
}

/* Remove folder dir and the files in it (the compiler's temporaries go
 * there too: its TMPDIR), with system calls only: async-signal-safe. */
static void remove_flat_dir(const char *dir)
{
	if (!dir[0])
		return;
	for (int pass = 0; pass < 2; pass++) { /* a dying compiler may still have made one */
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return;
		char buf[4096];
		ssize_t n;
		while ((n = getdents64(fd, buf, sizeof buf)) > 0)
			for (ssize_t off = 0; off < n;) {
				struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
				off += d->d_reclen;
				if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
					unlinkat(fd, d->d_name, 0);
			}
		close(fd);
		if (rmdir(dir) == 0)
			return;
	}
}

void ct_ctx_cancel(ct_ctx *ctx)
{
	jit_live *lv = ctx ? live_of(ctx) : NULL;
	if (!lv)
		return;
	lv->cancelled = 1;
	for (int i = 0; i < JIT_LIVE_SLOTS; i++) {
		pid_t pid = (pid_t)lv->pid[i];
		if (pid > 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
	}
	for (int i = 0; i < JIT_LIVE_SLOTS; i++)
		if (lv->dir_used[i]) {
			remove_flat_dir(lv->dir[i]);
			lv->dir_used[i] = 0;
		}
}

/* ------------------------------------------------------------ running a program */

void jit_proc_free(ct_ctx *ctx, jit_proc *res)
{
	ct_free(ctx, res->out);
	res->out = NULL;
	res->out_len = 0;
}

/* Wait for pid until deadline; kill its process group when it passes.
 * Returns the raw wait status, or -1 when it cannot be known (ECHILD: the
 * host ignores SIGCHLD). */
static int wait_child(pid_t pid, double deadline, bool *timed_out)
{
	/* the child has usually exited by the time its output closes: poll
	 * with a short, growing sleep rather than block forever on a child
	 * that closed its output and hangs */
	long nap_ns = 20000;
	for (;;) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (ct_now() >= deadline) {
			*timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
				;
			return r == pid ? status : -1;
		}
		struct timespec ts = {0, nap_ns};
		nanosleep(&ts, NULL);
		if (nap_ns < 10000000)
			nap_ns *= 2;
	}
}

/* jit_run with environment envp. */
static ct_status run_env(ct_ctx *ctx, const char *exe, char *const argv[], char *const envp[], const char *cwd,
                         double timeout, size_t keep, jit_proc *res)
{
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	jit_live *lv = live_of(ctx);
	if (lv && lv->cancelled)
		return ct_error(ctx, CT_ERR_RUNTIME, "cancelled (ct_ctx_cancel): %s not started", exe);
	res->out = ct_alloc(ctx, keep + 1);
	if (!res->out)
		return CT_ERR_NOMEM;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		jit_proc_free(ctx, res);
		return ct_error(ctx, CT_ERR_IO, "pipe: %s", strerror(errno));
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0) {
		rc = posix_spawnattr_init(&at);
		if (rc != 0)
			posix_spawn_file_actions_destroy(&fa);
	}
	if (rc != 0) {
		close(p[0]);
		close(p[1]);
		jit_proc_free(ctx, res);
		return ct_error(ctx, CT_ERR_IO, "posix_spawn setup: %s", strerror(rc));
	}
	/* the pipe ends are close-on-exec; the dup2'd copies on 1 and 2 are not */
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	if (!rc && cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, cwd);
	/* own process group, so a timeout kills cc1, as and ld too; default
	 * signal dispositions and an empty mask whatever the host set */
	sigset_t mask, dfl;
	sigemptyset(&mask);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGCHLD);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	sigaddset(&dfl, SIGQUIT);
	sigaddset(&dfl, SIGALRM);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
		                                       POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &mask);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&at, &dfl);
	/* a signal whose handler calls ct_ctx_cancel waits until the child is
	 * in the list (the child starts with the empty mask set above) */
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	pid_t pid = -1;
	if (!rc)
		rc = posix_spawn(&pid, exe, &fa, &at, argv, envp);
	if (!rc)
		live_add_pid(lv, pid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		jit_proc_free(ctx, res);
		return ct_error(ctx, CT_ERR_IO, "cannot run %s: %s", exe, strerror(rc));
	}

	double deadline = ct_now() + (timeout > 0 ? timeout : JIT_DEFAULT_TIMEOUT);
	char chunk[4096];
	for (;;) {
		double left = deadline - ct_now();
		if (left <= 0) {
			res->timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
		int pr = poll(&pf, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (pr == 0)
			continue;
		ssize_t r = read(p[0], chunk, sizeof chunk);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		/* keep the first bytes (the first errors), drain the rest so
		 * the child never blocks on a full pipe */
		size_t take = (size_t)r;
		if (take > keep - res->out_len)
			take = keep - res->out_len;
		memcpy(res->out + res->out_len, chunk, take);
		res->out_len += take;
	}
	close(p[0]);
	res->out[res->out_len] = 0;
	int status = wait_child(pid, res->timed_out ? 0 : deadline, &res->timed_out);
	live_drop_pid(lv, pid);
	if (status == -1)
		res->exit_code = -1;
	else if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->exit_code = 128 + WTERMSIG(status);
	return CT_OK;
}

ct_status jit_run(ct_ctx *ctx, const char *exe, char *const argv[], const char *cwd, double timeout,
                  size_t keep, jit_proc *res)
{
	return run_env(ctx, exe, argv, environ, cwd, timeout, keep, res);
}

/* ------------------------------------------------------------ compiler identity */

/* An absolute path for program name (searched on PATH when it has no '/'),
 * symlinks kept; NULL (no error recorded) when it is not found. */
static char *find_program(ct_ctx *ctx, const char *name)
{
	char cwd[PATH_MAX];
	char cand[PATH_MAX];
	if (strchr(name, '/')) {
		bool ok;
		if (name[0] == '/')
			ok = jit_fmt(cand, sizeof cand, "%s", name);
		else
			ok = getcwd(cwd, sizeof cwd) &&
			     jit_fmt(cand, sizeof cand, "%s/%s", cwd, name);
		if (!ok)
			return NULL;
		struct stat sb;
		if (stat(cand, &sb) != 0 || !S_ISREG(sb.st_mode) || access(cand, X_OK) != 0)
			return NULL;
		return ct_strdup(ctx, cand);
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		bool ok;
		if (n == 0 || path[0] != '/') {
			/* a relative PATH entry is relative to the current folder */
			ok = getcwd(cwd, sizeof cwd) &&
			     jit_fmt(cand, sizeof cand, "%s/%.*s/%s", cwd, (int)n, path, name);
		} else {
			ok = jit_fmt(cand, sizeof cand, "%.*s/%s", (int)n, path, name);
		}
		struct stat sb;
		if (ok && stat(cand, &sb) == 0 && S_ISREG(sb.st_mode) && access(cand, X_OK) == 0)
			return ct_strdup(ctx, cand);
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

/* Split cmd into blank-separated words (no quoting: the words never reach a
 * shell). */
static char **split_words(ct_ctx *ctx, const char *cmd, int *n)
{
	int cap = 1;
	for (const char *p = cmd; *p; p++)
		cap++;
	char **w = ct_alloc(ctx, (size_t)(cap + 1) * sizeof *w);
	if (!w)
		return NULL;
	int k = 0;
	const char *p = cmd;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		char *word = ct_alloc(ctx, (size_t)(p - s) + 1);
		if (!word) {
			for (int i = 0; i < k; i++)
				ct_free(ctx, w[i]);
			ct_free(ctx, w);
			return NULL;
		}
		memcpy(word, s, (size_t)(p - s));
		w[k++] = word;
	}
	w[k] = NULL;
	*n = k;
	return w;
}

/* argv for running c with the extra arguments tail (NULL-terminated). */
static char **probe_argv(ct_ctx *ctx, const jit_compiler *c, const char *const *tail)
{
	int nt = 0;
	while (tail[nt])
		nt++;
	char **argv = ct_alloc(ctx, (size_t)(c->nwords + nt + 1) * sizeof *argv);
	if (!argv)
		return NULL;
	int k = 0;
	for (int i = 0; i < c->nwords; i++)
		argv[k++] = c->words[i];
	for (int i = 0; i < nt; i++)
		argv[k++] = (char *)(uintptr_t)tail[i];
	argv[k] = NULL;
	return argv;
}

/* Append the target options of one line of `cc -### -march=native` output:
 * gcc's -m... words (-march=znver3 -mavx2 -mno-xop ...) and its cache
 * --params, clang's -target-cpu / -target-feature / -tune-cpu pairs. */
static void march_tokens(ct_buf *b, const char *line, size_t n, char *tok)
{
	enum { NONE, PARAM, PAIR } pending = NONE;
	size_t i = 0;
	while (i < n) {
		while (i < n && line[i] == ' ')
			i++;
		if (i >= n)
			break;
		size_t t = 0;
		if (line[i] == '"') {
			for (i++; i < n && line[i] != '"'; i++) {
				if (line[i] == '\\' && i + 1 < n)
					i++;
				tok[t++] = line[i];
			}
			i++;
		} else {
			while (i < n && line[i] != ' ')
				tok[t++] = line[i++];
		}
		tok[t] = 0;
		if (pending == PARAM) {
			if (strstr(tok, "cache"))
				ct_buf_printf(b, "--param %s\n", tok);
		} else if (pending == PAIR) {
			ct_buf_printf(b, "%s\n", tok);
		}
		if (pending != NONE) {
			pending = NONE;
			continue;
		}
		if (strncmp(tok, "-m", 2) == 0) {
			ct_buf_printf(b, "%s\n", tok);
		} else if (strcmp(tok, "--param") == 0) {
			pending = PARAM;
		} else if (strcmp(tok, "-target-cpu") == 0 || strcmp(tok, "-target-feature") == 0 ||
		           strcmp(tok, "-tune-cpu") == 0) {
			ct_buf_printf(b, "%s ", tok);
			pending = PAIR;
		}
	}
}

/* The CPU's model and feature flags from /proc/cpuinfo: the fallback key
 * material when the driver does not show what -march=native means. */
static void cpuinfo_tokens(ct_buf *b)
{
	/* /proc files report size 0: read them as a stream */
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f) {
		ct_buf_puts(b, "cpuinfo unavailable\n");
		return;
	}
	char line[8192];
	bool model = false, flags = false;
	while (fgets(line, sizeof line, f) && !(model && flags)) {
		if (!model && strncmp(line, "model name", 10) == 0) {
			ct_buf_puts(b, line);
			model = true;
		} else if (!flags &&
		           (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
			ct_buf_puts(b, line);
			flags = true;
		}
	}
	fclose(f);
}

/* What -march=native means for compiler c (see march_tokens). */
static char *probe_march(jit_state *st, jit_compiler *c)
{
	ct_ctx *ctx = st->ctx;
	static const char *const tail[] = {"-###", "-march=native", "-E", "-x",
	                                   "c",    "/dev/null",     NULL};
	char **argv = probe_argv(ctx, c, tail);
	if (!argv)
		return NULL;
	jit_proc pr;
	/* cwd "/" so that no folder-dependent option varies the output */
	ct_status s = jit_run(ctx, c->exe, argv, "/", JIT_PROBE_TIMEOUT, RUN_KEEP, &pr);
	ct_free(ctx, argv);
	if (s != CT_OK)
		return NULL;
	ct_buf b;
	ct_buf_init(&b);
	char *tok = ct_alloc(ctx, pr.out_len + 1);
	if (!tok) {
		jit_proc_free(ctx, &pr);
		return NULL;
	}
	if (pr.exit_code == 0) {
		for (const char *line = pr.out; *line;) {
			const char *nl = strchr(line, '\n');
			size_t n = nl ? (size_t)(nl - line) : strlen(line);
			/* the commands the driver would run are the indented lines */
			if (n && line[0] == ' ')
				march_tokens(&b, line, n, tok);
			line += n + (nl ? 1 : 0);
		}
	}
	ct_free(ctx, tok);
	jit_proc_free(ctx, &pr);
	if (b.len == 0)
		cpuinfo_tokens(&b);
	char *s_heap = ct_buf_take(&b);
	if (!s_heap) {
		ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	char *r = ct_strdup(ctx, s_heap);
	free(s_heap);
	return r;
}

void jit_compiler_free(jit_state *st, jit_compiler *c)
{
	ct_ctx *ctx = st->ctx;
	if (!c)
		return;
	if (c->words)
		for (int i = 0; i < c->nwords; i++)
			ct_free(ctx, c->words[i]);
	ct_free(ctx, c->words);
	ct_free(ctx, c->cmd);
	ct_free(ctx, c->exe);
	ct_free(ctx, c->real);
	ct_free(ctx, c->file);
	ct_free(ctx, c->version);
	ct_free(ctx, c->march);
	ct_free(ctx, c);
}

/* "size N mtime S.NS xxh3 H" of the executable at path: a wrapper script or a
 * compiler replaced in place (same name, same --version) changes the key.
 * Read once per compiler per ctx. NULL (with the ctx's error) when it cannot
 * be read. */
static char *file_identity(ct_ctx *ctx, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		ct_error(ctx, CT_ERR_COMPILE, "cannot read the compiler %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	XXH3_state_t s;
	XXH3_INITSTATE(&s);
	XXH3_64bits_reset(&s);
	unsigned char buf[64 * 1024];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ct_error(ctx, CT_ERR_COMPILE, "cannot read the compiler %s: %s", path, strerror(errno));
			close(fd);
			return NULL;
		}
		XXH3_64bits_update(&s, buf, (size_t)r);
	}
	close(fd);
	char text[160];
	snprintf(text, sizeof text, "size %lld mtime %lld.%09ld xxh3 %016llx", (long long)sb.st_size,
		 (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec,
		 (unsigned long long)XXH3_64bits_digest(&s));
	return ct_strdup(ctx, text);
}

jit_compiler *jit_compiler_get(jit_state *st, const char *cmd)
{
	ct_ctx *ctx = st->ctx;
	for (jit_compiler *c = st->compilers; c; c = c->next)
		if (strcmp(c->cmd, cmd) == 0)
			return c;
	jit_compiler *c = ct_alloc(ctx, sizeof *c);
	if (!c)
		return NULL;
	c->cmd = ct_strdup(ctx, cmd);
	if (c->cmd)
		c->words = split_words(ctx, cmd, &c->nwords);
	if (!c->words)
		goto fail;
	if (c->nwords == 0) {
		ct_error(ctx, CT_ERR_COMPILE, "empty compiler command");
		goto fail;
	}
	c->exe = find_program(ctx, c->words[0]);
	if (!c->exe) {
		if (ctx->status != CT_ERR_NOMEM)
			ct_error(ctx, CT_ERR_COMPILE,
			         "compiler '%s' not found (from the command '%s')", c->words[0],
			         cmd);
		goto fail;
	}
	char *real = realpath(c->exe, NULL);
	c->real = ct_strdup(ctx, real ? real : c->exe);
	free(real);
	if (!c->real || !(c->file = file_identity(ctx, c->real)))
		goto fail;

	static const char *const vtail[] = {"--version", NULL};
	char **argv = probe_argv(ctx, c, vtail);
	if (!argv)
		goto fail;
	jit_proc pr;
	ct_status s = jit_run(ctx, c->exe, argv, "/", JIT_PROBE_TIMEOUT, RUN_KEEP, &pr);
	ct_free(ctx, argv);
	if (s != CT_OK) {
		ct_error(ctx, CT_ERR_COMPILE, "cannot run the compiler '%s': %s", cmd, ctx->msg);
		goto fail;
	}
	if (pr.timed_out) {
		jit_proc_free(ctx, &pr);
		ct_error(ctx, CT_ERR_COMPILE, "'%s --version' timed out", cmd);
		goto fail;
	}
	c->version = pr.out;
	c->version_exit = pr.exit_code;
	c->march = probe_march(st, c);
	if (!c->march)
		goto fail;
	c->next = st->compilers;
	st->compilers = c;
	return c;
fail:
	jit_compiler_free(st, c);
	return NULL;
}

/* ------------------------------------------------------------ building */

bool jit_compiler_is_clang(const jit_compiler *cc)
{
	return cc->version && strstr(cc->version, "clang") != NULL;
}

int jit_policy_flags(const jit_compiler *cc, const char **out)
{
	int n = 0;
	out[n++] = "-O3";
	out[n++] = "-march=native";
	/* GCC 12.2's SLP vectorizer miscompiles valid kernels at -mavx512f
	 * (docs/LIBRARY.md, "The compile policy"); off, it cost nothing
	 * measurable on the examples: cachet emits the vector code of planned
	 * kernels itself and the loop vectorizer stays on */
	if (!jit_compiler_is_clang(cc))
		out[n++] = "-fno-tree-slp-vectorize";
	return n;
}

int jit_command(const jit_config *cfg, const char *so, const char *src, const char **argv, int cap)
{
	int need = cfg->cc->nwords + JIT_POLICY_MAX + 2 + 1 + 3 + cfg->nextra + 1 + 1;
	if (cap < need)
		return -1;
	int k = 0;
	for (int i = 0; i < cfg->cc->nwords; i++)
		argv[k++] = cfg->cc->words[i];
	k += jit_policy_flags(cfg->cc, argv + k);
	argv[k++] = "-fPIC";
	argv[k++] = "-shared";
	if (cfg->openmp)
		argv[k++] = "-fopenmp";
	argv[k++] = "-o";
	argv[k++] = so;
	argv[k++] = src;
	/* after the source, so that -l options in them link */
	for (int i = 0; i < cfg->nextra; i++)
		argv[k++] = cfg->extra[i];
	/* generated code may call libm; the host need not have loaded it */
	argv[k++] = "-lm";
	argv[k] = NULL;
	return k;
}

/* Report a failed build: what happened, where the source is kept, then an
 * excerpt of the compiler's output starting at its first error, with the
 * position of that error as the ctx error's line and column. */
static ct_status build_error(jit_state *st, const char *cpath, const char *what, const char *out)
{
	const char *start = out ? out : "";
	const char *err = strstr(start, "error:");
	if (!err)
		err = strstr(start, "error");
	if (err) {
		while (err > start && err[-1] != '\n')
			err--;
		start = err;
	}
	int line = 0, col = 0;
	const char *pos = strstr(start, cpath);
	if (pos) {
		const char *q = pos + strlen(cpath);
		if (sscanf(q, ":%d:%d", &line, &col) < 1)
			line = col = 0;
	}
	char excerpt[MSG_EXCERPT + 16];
	size_t n = strlen(start);
	if (n > MSG_EXCERPT) {
		n = MSG_EXCERPT;
		/* cut at a line end when one is near */
		for (size_t k = n; k > MSG_EXCERPT / 2; k--)
			if (start[k] == '\n') {
				n = k;
				break;
			}
		snprintf(excerpt, sizeof excerpt, "%.*s\n[...]", (int)n, start);
	} else {
		snprintf(excerpt, sizeof excerpt, "%s", start);
	}
	n = strlen(excerpt);
	while (n && (excerpt[n - 1] == '\n' || excerpt[n - 1] == ' '))
		excerpt[--n] = 0;
	return ct_error_at(st->ctx, CT_ERR_COMPILE, cpath, line, col > 0 ? col : 0,
	                   "%s; source kept at %s%s%s", what, cpath, n ? "\n" : "", excerpt);
}

/* The environment of a build: this process's, with TMPDIR=dir, so that the
 * compiler's temporary files go to the build folder (and ct_ctx_cancel
 * removes them with it). NULL when memory runs out. */
static char **build_env(ct_ctx *ctx, const char *dir)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = ct_alloc(ctx, (n + 2) * sizeof *env);
	size_t len = strlen(dir) + sizeof "TMPDIR=";
	char *tmp = ct_alloc(ctx, len);
	if (!env || !tmp) {
		ct_free(ctx, env);
		ct_free(ctx, tmp);
		return NULL;
	}
	snprintf(tmp, len, "TMPDIR=%s", dir);
	size_t k = 0;
	env[k++] = tmp;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "TMPDIR=", 7) != 0)
			env[k++] = environ[i];
	env[k] = NULL;
	return env;
}

static void free_env(ct_ctx *ctx, char **env)
{
	if (env)
		ct_free(ctx, env[0]);
	ct_free(ctx, env);
}

void jit_build_remove(jit_state *st, char *dir, char *so)
{
	ct_ctx *ctx = st->ctx;
	jit_build_forget(st, dir);
	if (st->live.cancelled) { /* ct_ctx_cancel removed them */
		ct_free(ctx, so);
		ct_free(ctx, dir);
		return;
	}
	if (so) {
		if (unlink(so) != 0 && errno != ENOENT)
			jit_warn(st, "cannot remove %s: %s", so, strerror(errno));
		/* and the source next to it: k<digest>.so -> k<digest>.c */
		size_t n = strlen(so);
		so[n - 2] = 'c';
		so[n - 1] = 0;
		if (unlink(so) != 0 && errno != ENOENT)
			jit_warn(st, "cannot remove %s: %s", so, strerror(errno));
	}
	if (dir && rmdir(dir) != 0)
		jit_warn(st, "cannot remove the build folder %s: %s", dir, strerror(errno));
	ct_free(ctx, so);
	ct_free(ctx, dir);
}

ct_status jit_compile(jit_state *st, const jit_config *cfg, const char *src, size_t len,
                      const char *digest, double timeout, char **dir_out, char **so_out)
{
	ct_ctx *ctx = st->ctx;
	*dir_out = *so_out = NULL;
	size_t dn = strlen(st->tmp_dir) + 64;
	char *dir = ct_alloc(ctx, dn);
	char *so = ct_alloc(ctx, dn + JIT_DIGEST_HEX);
	char *cpath = ct_alloc(ctx, dn + JIT_DIGEST_HEX);
	const char **argv = NULL;
	char **envp = NULL;
	ct_status s = CT_OK;
	if (!dir || !so || !cpath) {
		s = CT_ERR_NOMEM;
		goto out;
	}
	snprintf(dir, dn, "%s/cachet-build-XXXXXX", st->tmp_dir);
	/* made in a slot ct_ctx_cancel sees (a signal then removes it), else untracked */
	char *slot = live_take_dir(&st->live, dir);
	if (!mkdtemp(slot ? slot : dir)) {
		s = ct_error(ctx, CT_ERR_IO, "cannot create a build folder in %s: %s", st->tmp_dir,
		             strerror(errno));
		if (slot)
			jit_build_forget(st, slot);
		ct_free(ctx, dir);
		dir = NULL;
		goto out;
	}
	if (slot)
		memcpy(dir, slot, strlen(slot) + 1);
	/* the digest in the file names keeps dlopen from confusing two builds
	 * whose temp folders happen to get the same name */
	snprintf(cpath, dn + JIT_DIGEST_HEX, "%s/k%s.c", dir, digest);
	snprintf(so, dn + JIT_DIGEST_HEX, "%s/k%s.so", dir, digest);
	int fd = open(cpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		s = ct_error(ctx, CT_ERR_IO, "cannot create %s: %s", cpath, strerror(errno));
		rmdir(dir);
		goto out;
	}
	bool ok = jit_write_all(fd, src, len);
	int e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		s = ct_error(ctx, CT_ERR_IO, "cannot write %s: %s", cpath, strerror(e));
		unlink(cpath);
		rmdir(dir);
		goto out;
	}
	int cap = cfg->cc->nwords + cfg->nextra + 16;
	argv = ct_alloc(ctx, (size_t)cap * sizeof *argv);
	if (!argv) {
		s = CT_ERR_NOMEM;
		goto out;
	}
	jit_command(cfg, so, cpath, argv, cap);
	envp = build_env(ctx, dir);
	if (!envp) {
		s = CT_ERR_NOMEM;
		goto out;
	}
	jit_proc pr;
	s = run_env(ctx, cfg->cc->exe, (char *const *)(uintptr_t)argv, envp, dir, timeout, RUN_KEEP, &pr);
	if (s != CT_OK) {
		char why[600];
		snprintf(why, sizeof why, "%.500s", ctx->msg);
		s = build_error(st, cpath, why, NULL);
		goto out;
	}
	/* exit_code -1: the status is unknown (the host reaps children by
	 * ignoring SIGCHLD); the object's presence decides, dlopen checks it */
	struct stat sb;
	if (pr.timed_out || (pr.exit_code != 0 && pr.exit_code != -1) || stat(so, &sb) != 0) {
		char what[600];
		if (pr.timed_out)
			snprintf(what, sizeof what, "the compiler '%s' timed out after %.3g s",
			         cfg->cc->cmd, timeout > 0 ? timeout : JIT_DEFAULT_TIMEOUT);
		else if (pr.exit_code != 0)
			snprintf(what, sizeof what, "the compiler '%s' failed (exit %d)",
			         cfg->cc->cmd, pr.exit_code);
		else
			snprintf(what, sizeof what, "the compiler '%s' wrote no output",
			         cfg->cc->cmd);
		unlink(so);
		s = build_error(st, cpath, what, pr.out);
		jit_proc_free(ctx, &pr);
		goto out;
	}
	jit_proc_free(ctx, &pr);
	free_env(ctx, envp);
	ct_free(ctx, cpath);
	ct_free(ctx, argv);
	*dir_out = dir;
	*so_out = so;
	return CT_OK;
out:
	/* the source (if written) and its folder are kept for the user */
	jit_build_forget(st, dir);
	free_env(ctx, envp);
	ct_free(ctx, argv);
	ct_free(ctx, cpath);
	ct_free(ctx, so);
	ct_free(ctx, dir);
	return s;
}
