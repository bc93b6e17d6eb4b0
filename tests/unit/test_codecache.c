/* test_codecache.c: compile-and-load and the code cache: hits, keys, corruption, concurrency,
 * permissions, size cap. */
#include "harness.h"
#include "jit/jit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Run without arguments, this is the test program. The tests start copies
 * of it with argv[1] = "--child" (load a source from a cache folder and say
 * how) or "--key" (print a key digest), to get fresh processes.
 */

typedef int (*fn_t)(int);

/* Source variant k: f(x) = k*x + k (k = 0 is the base source). */
static void source_for(int k, char *buf, size_t cap)
{
	snprintf(buf, cap, "int f(int x) { return %d * x + %d; }\n", k + 2, k + 1);
}

static int expected(int k, int x)
{
	return (k + 2) * x + k + 1;
}

/* ------------------------------------------------------------ helpers */

static void make_tmp(char *buf, size_t cap)
{
	snprintf(buf, cap, "/tmp/cachet-test-XXXXXX");
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		buf[0] = 0;
	}
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_rf(const char *path)
{
	if (path && path[0])
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

typedef struct warnings {
	int n;
	char last[1024];
} warnings;

static void on_warning(void *ud, const char *msg)
{
	warnings *w = ud;
	w->n++;
	snprintf(w->last, sizeof w->last, "%s", msg);
}

/* A ctx using cache folder dir, warnings counted in w (may be NULL: stderr). */
static ct_ctx *new_ctx(const char *dir, warnings *w)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return NULL;
	if (dir)
		ct_cache_set_dir(ctx, dir);
	if (w)
		ct_cache_set_warning_handler(ctx, on_warning, w);
	return ctx;
}

/* Load variant k in ctx and call f(10); returns f's value or INT32_MIN. */
static int load_call(ct_ctx *ctx, int k, const ct_compile_options *o, ct_load_info *info)
{
	char src[256];
	source_for(k, src, sizeof src);
	ct_module *m = NULL;
	ct_status s = ct_module_load(ctx, src, strlen(src), o, &m, info);
	if (s != CT_OK) {
		fprintf(stderr, "load of variant %d failed: %s\n", k, ct_ctx_last_message(ctx));
		return INT32_MIN;
	}
	fn_t f = (fn_t)ct_module_symbol(m, "f");
	return f ? f(10) : INT32_MIN;
}

/* The entry folder of key digest in cache folder dir. */
static void entry_dir(const char *dir, const char *key, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/code-v1/%.2s/%s", dir, key, key + 2);
}

static bool exists(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) == 0;
}

static int64_t disk_entries(ct_ctx *ctx)
{
	ct_cache_info ci;
	if (ct_cache_stats(ctx, &ci) != CT_OK)
		return -1;
	return ci.entries;
}

/* Count leftover temp folders (.tmp-*, .trash-*) under dir/code-v1. */
static int temp_count;
static int count_temp(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	const char *base = path + ftw->base;
	if (strncmp(base, ".tmp-", 5) == 0 || strncmp(base, ".trash-", 7) == 0)
		temp_count++;
	return 0;
}

static int temps_in(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/code-v1", dir);
	temp_count = 0;
	nftw(p, count_temp, 16, FTW_PHYS);
	return temp_count;
}

/* Write an executable shell script (a fake compiler) at path. */
static bool write_script(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	if (fclose(f) != 0)
		return false;
	return chmod(path, 0700) == 0;
}

/* ------------------------------------------------------------ child processes */

/* Start this program with args (NULL-terminated, after argv[0]); its stdout
 * goes to a pipe whose read end is *out; fd 3 is barrier_fd when >= 0. */
static pid_t spawn_self(const char *const *args, int barrier_fd, int *out)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	char *argv[16];
	int n = 0;
	static const char name[] = "test_codecache";
	argv[n++] = (char *)(uintptr_t)name;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)(uintptr_t)args[i];
	argv[n] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	if (barrier_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, barrier_fd, 3);
	pid_t pid;
	int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		return -1;
	}
	*out = p[0];
	return pid;
}

/* Read all of fd into buf, close it. */
static void read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n + 1 >= cap)
			break;
	}
	buf[n] = 0;
	close(fd);
}

static int wait_exit(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --child DIR K: wait for EOF on fd 3 (if open), load variant K from cache
 * folder DIR, print "how=... f=... key=..." and exit 0 when f is right. */
static int child_main(const char *dir, int k)
{
	char c;
	if (fcntl(3, F_GETFD) != -1) {
		while (read(3, &c, 1) > 0)
			;
		close(3);
	}
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	ct_load_info info;
	int v = load_call(ctx, k, NULL, &info);
	printf("how=%s f=%d key=%s warnings=%d\n", v == INT32_MIN ? "error" : info.how, v, info.key,
	       w.n);
	if (w.n)
		fprintf(stderr, "child warning: %s\n", w.last);
	ct_ctx_free(ctx);
	return v == expected(k, 10) ? 0 : 1;
}

/* --key K: print the key digest of variant K under the default options. */
static int key_main(int k)
{
	char src[256], hex[JIT_DIGEST_HEX];
	source_for(k, src, sizeof src);
	ct_ctx *ctx = ct_ctx_new();
	ct_status s = jit_key(ctx, src, strlen(src), NULL, hex, NULL);
	printf("%s\n", s == CT_OK ? hex : "error");
	ct_ctx_free(ctx);
	return s == CT_OK ? 0 : 1;
}

/* ------------------------------------------------------------ tests */

static void test_compile_and_call(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	ct_load_info info;
	CHECK(load_call(ctx, 0, NULL, &info) == expected(0, 10));
	CHECK(strcmp(info.how, "compiled") == 0);
	CHECK(info.seconds > 0);
	CHECK(strlen(info.key) == 32);
	CHECK(w.n == 0);
	char e[PATH_MAX];
	entry_dir(dir, info.key, e, sizeof e);
	CHECKF(exists(e), "no entry folder %s", e);
	struct stat sb;
	char code[PATH_MAX];
	snprintf(code, sizeof code, "%s/code-v1", dir);
	CHECK(stat(code, &sb) == 0 && (sb.st_mode & 0777) == 0700);
	CHECK(temps_in(dir) == 0);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

/* Remove the build folder kept by the last failed load on ctx. */
static void remove_kept(ct_ctx *ctx)
{
	char kept[PATH_MAX];
	snprintf(kept, sizeof kept, "%s", ct_ctx_last_file(ctx));
	char *slash = strrchr(kept, '/');
	if (slash && strstr(kept, "/cachet-build-")) {
		*slash = 0;
		rm_rf(kept);
	}
}

static void test_compile_error(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	static const char bad[] = "int f(int x)\n{\n\treturn x + ;\n}\n";
	ct_module *m = NULL;
	ct_status s = ct_module_load(ctx, bad, strlen(bad), NULL, &m, NULL);
	CHECK(s == CT_ERR_COMPILE);
	CHECK(m == NULL);
	const char *msg = ct_ctx_last_message(ctx);
	const char *file = ct_ctx_last_file(ctx);
	CHECKF(strstr(msg, "error") != NULL, "message: %s", msg);
	CHECKF(strstr(msg, "source kept at") && strstr(msg, file), "message: %s", msg);
	CHECKF(strlen(file) > 2 && strcmp(file + strlen(file) - 2, ".c") == 0, "file: %s", file);
	CHECKF(ct_ctx_last_line(ctx) == 3, "line %d", ct_ctx_last_line(ctx));
	/* the kept source is the source */
	char got[256] = {0};
	FILE *f = fopen(file, "r");
	CHECK(f != NULL);
	if (f) {
		size_t n = fread(got, 1, sizeof got - 1, f);
		got[n] = 0;
		fclose(f);
	}
	CHECK(strcmp(got, bad) == 0);
	/* nothing was cached */
	CHECK(disk_entries(ctx) == 0);
	CHECK(temps_in(dir) == 0);
	remove_kept(ctx);

	/* compiles, but does not load: the source is kept too */
	static const char unresolved[] =
	    "int nope_missing(int);\nint f(int x) { return nope_missing(x); }\n";
	s = ct_module_load(ctx, unresolved, strlen(unresolved), NULL, &m, NULL);
	CHECK(s == CT_ERR_COMPILE);
	msg = ct_ctx_last_message(ctx);
	file = ct_ctx_last_file(ctx);
	CHECKF(strstr(msg, "nope_missing") && strstr(msg, "source kept at"), "message: %s", msg);
	CHECKF(exists(file) && strstr(file, ".c"), "file %s", file);
	CHECK(disk_entries(ctx) == 0);
	remove_kept(ctx);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_folder_removed_under_us(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	CHECK(load_call(ctx, 0, NULL, NULL) == expected(0, 10));
	rm_rf(dir);
	ct_load_info r;
	CHECK(load_call(ctx, 1, NULL, &r) == expected(1, 10));
	char e[PATH_MAX];
	entry_dir(dir, r.key, e, sizeof e);
	CHECK(exists(e));
	struct stat sb;
	CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700);
	CHECKF(w.n == 0, "%s", w.last);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_memo_hit(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	ct_load_info a, b;
	char src[256];
	source_for(0, src, sizeof src);
	ct_module *m1 = NULL, *m2 = NULL;
	CHECK(ct_module_load(ctx, src, strlen(src), NULL, &m1, &a) == CT_OK);
	/* same text at another address: the key is the content */
	char copy[256];
	memcpy(copy, src, sizeof copy);
	CHECK(ct_module_load(ctx, copy, strlen(copy), NULL, &m2, &b) == CT_OK);
	CHECK(m1 == m2);
	CHECK(strcmp(a.how, "compiled") == 0 && strcmp(b.how, "memory") == 0);
	/* another spelling of the same compiler command: a second config
	 * whose key text is equal, so still the same module */
	ct_compile_options o;
	ct_compile_options_init(&o);
	o.cc = " cc\t";
	CHECK(ct_module_load(ctx, src, strlen(src), &o, &m2, &b) == CT_OK);
	CHECK(m1 == m2 && strcmp(b.how, "memory") == 0);
	/* cost of a memory hit */
	enum { N = 200000 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int ok = 0;
	for (int i = 0; i < N; i++) {
		ct_module *m;
		ok += jit_load(ctx, src, strlen(src), NULL, &m, NULL, NULL) == CT_OK && m == m1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / N;
	printf("memory hit: %.0f ns per lookup\n", ns);
	CHECK(ok == N);
	CHECKF(ns < 5000, "%.0f ns", ns);
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK);
	CHECK(ci.compiles == 1 && ci.memo_hits == N + 2 && ci.disk_hits == 0);
	CHECK(ci.memo_entries == 1 && ci.entries == 1);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_counting(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	/* N identical loads: one compile; K distinct: K entries */
	for (int i = 0; i < 5; i++)
		CHECK(load_call(ctx, 0, NULL, NULL) == expected(0, 10));
	for (int k = 1; k <= 3; k++)
		CHECK(load_call(ctx, k, NULL, NULL) == expected(k, 10));
	/* the variants have one length, so they share a front-table slot:
	 * these hits go through the hash table */
	for (int k = 0; k <= 3; k++) {
		ct_load_info r;
		CHECK(load_call(ctx, k, NULL, &r) == expected(k, 10) &&
		      strcmp(r.how, "memory") == 0);
	}
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK);
	CHECKF(ci.compiles == 4 && ci.memo_hits == 8, "compiles %lld hits %lld",
	       (long long)ci.compiles, (long long)ci.memo_hits);
	CHECK(ci.entries == 4 && ci.memo_entries == 4);
	CHECK(ci.bytes > 4 * 1000);
	CHECK(strcmp(ci.path, dir) == 0 && strcmp(ct_cache_path(ctx), dir) == 0);
	CHECK(ci.disk_enabled == 1 && ci.max_bytes == ((int64_t)1 << 30));
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_disk_hit_new_ctx(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	ct_load_info a, b, c;
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	ct_ctx_free(ctx);
	ctx = new_ctx(dir, NULL);
	CHECK(load_call(ctx, 0, NULL, &b) == expected(0, 10));
	CHECK(load_call(ctx, 0, NULL, &c) == expected(0, 10));
	CHECK(strcmp(a.how, "compiled") == 0 && strcmp(b.how, "disk") == 0 &&
	      strcmp(c.how, "memory") == 0);
	CHECK(strcmp(a.key, b.key) == 0);
	/* after jit_forget_memo the same ctx goes to the disk again */
	jit_forget_memo(ctx);
	CHECK(load_call(ctx, 0, NULL, &b) == expected(0, 10) && strcmp(b.how, "disk") == 0);
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.compiles == 0 && ci.disk_hits == 2);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_disk_hit_fresh_process(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	ct_load_info a;
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	const char *args[] = {"--child", dir, "0", NULL};
	int out;
	pid_t pid = spawn_self(args, -1, &out);
	CHECK(pid > 0);
	if (pid > 0) {
		char buf[512];
		read_all(out, buf, sizeof buf);
		CHECK(wait_exit(pid) == 0);
		CHECKF(strncmp(buf, "how=disk ", 9) == 0, "child said: %s", buf);
		CHECKF(strstr(buf, a.key) != NULL, "child said: %s", buf);
	}
	ct_ctx_free(ctx);
	rm_rf(dir);
}

/* n children started at once on cache folder dir, child i loading variant
 * ks[i % nk]; each must load and compute right, without a warning. Returns
 * how many compiled (the others were disk hits). */
static int race(const char *dir, int n, const int *ks, int nk)
{
	int barrier[2];
	if (pipe2(barrier, O_CLOEXEC) != 0)
		return -1;
	pid_t pid[16];
	int out[16];
	char karg[16][16];
	for (int i = 0; i < n; i++) {
		snprintf(karg[i], sizeof karg[i], "%d", ks[i % nk]);
		const char *args[] = {"--child", dir, karg[i], NULL};
		pid[i] = spawn_self(args, barrier[0], &out[i]);
		CHECK(pid[i] > 0);
	}
	close(barrier[0]);
	/* every child is waiting on the barrier: release them together */
	close(barrier[1]);
	int compiled = 0;
	for (int i = 0; i < n; i++) {
		if (pid[i] <= 0)
			continue;
		char buf[512];
		read_all(out[i], buf, sizeof buf);
		int rc = wait_exit(pid[i]);
		CHECKF(rc == 0, "child %d exit %d: %s", i, rc, buf);
		CHECKF(strncmp(buf, "how=compiled ", 13) == 0 || strncmp(buf, "how=disk ", 9) == 0,
		       "child %d: %s", i, buf);
		CHECKF(strstr(buf, " warnings=0") != NULL, "child %d: %s", i, buf);
		compiled += strncmp(buf, "how=compiled ", 13) == 0;
	}
	return compiled;
}

static void test_concurrent_processes(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	/* 8 at once on an empty folder: 4 on one source, 4 on another */
	static const int round1[] = {0, 1};
	int c1 = race(dir, 8, round1, 2);
	/* 8 at once again: 4 on the cached sources, 4 on two new ones */
	static const int round2[] = {0, 10, 1, 11};
	int c2 = race(dir, 8, round2, 4);
	printf("concurrent: %d of 8 compiled, then %d of 8\n", c1, c2);
	CHECK(c1 >= 2 && c2 >= 2 && c2 <= 4);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	int64_t bad = -1;
	CHECK(ct_cache_verify(ctx, &bad) == CT_OK && bad == 0);
	CHECK(disk_entries(ctx) == 4);
	CHECK(temps_in(dir) == 0);
	CHECK(w.n == 0);
	/* and every entry is a disk hit now */
	for (int i = 0; i < 4; i++) {
		ct_load_info info;
		CHECK(load_call(ctx, round2[i], NULL, &info) == expected(round2[i], 10));
		CHECK(strcmp(info.how, "disk") == 0);
	}
	ct_ctx_free(ctx);
	rm_rf(dir);
}

/* Ways to damage entry A (B is another entry of the same folder). */
typedef enum damage {
	TRUNCATE_SO,
	ZERO_SO,
	SWAP_SO,
	FLIP_SO_BYTE,
	EMPTY_SO,
	REMOVE_SO,
	KEY_BYTE,
	KEY_TRUNCATED,
	KEY_EMPTY,
	KEY_REMOVED,
	KEY_FORMAT,
	FOREIGN_ENTRY,
	SO_SYMLINK
} damage;

static const struct {
	damage d;
	const char *name;
} damages[] = {
    {TRUNCATE_SO, "corrupt: truncated .so"},
    {ZERO_SO, "corrupt: zeroed .so"},
    {SWAP_SO, "corrupt: .so swapped with another entry's"},
    {FLIP_SO_BYTE, "corrupt: one .so byte flipped"},
    {EMPTY_SO, "corrupt: 0-byte .so"},
    {REMOVE_SO, "corrupt: .so missing"},
    {KEY_BYTE, "corrupt: one key byte changed"},
    {KEY_TRUNCATED, "corrupt: truncated key file"},
    {KEY_EMPTY, "corrupt: 0-byte key file"},
    {KEY_REMOVED, "corrupt: key file missing"},
    {KEY_FORMAT, "corrupt: wrong format version"},
    {FOREIGN_ENTRY, "corrupt: another entry under this name"},
    {SO_SYMLINK, "corrupt: .so replaced by a symlink"},
};

static bool copy_file(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	bool ok = a && b;
	char buf[8192];
	size_t n;
	while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
		ok = fwrite(buf, 1, n, b) == n;
	if (a)
		fclose(a);
	if (b && fclose(b) != 0)
		ok = false;
	return ok;
}

static void apply_damage(damage d, const char *ea, const char *eb)
{
	char so[PATH_MAX + 16], key[PATH_MAX + 16], other[PATH_MAX + 16];
	snprintf(so, sizeof so, "%s/kernel.so", ea);
	snprintf(key, sizeof key, "%s/key", ea);
	struct stat sb;
	stat(so, &sb);
	switch (d) {
	case TRUNCATE_SO:
		CHECK(truncate(so, sb.st_size / 2) == 0);
		break;
	case ZERO_SO: {
		int fd = open(so, O_WRONLY);
		char *z = calloc(1, (size_t)sb.st_size);
		CHECK(fd >= 0 && z && write(fd, z, (size_t)sb.st_size) == sb.st_size);
		free(z);
		if (fd >= 0)
			close(fd);
		break;
	}
	case SWAP_SO:
		snprintf(other, sizeof other, "%s/kernel.so", eb);
		CHECK(copy_file(other, so));
		break;
	case FLIP_SO_BYTE: {
		int fd = open(so, O_RDWR);
		unsigned char c = 0;
		CHECK(fd >= 0 && pread(fd, &c, 1, sb.st_size / 2) == 1);
		c ^= 0x40;
		CHECK(fd >= 0 && pwrite(fd, &c, 1, sb.st_size / 2) == 1);
		if (fd >= 0)
			close(fd);
		break;
	}
	case EMPTY_SO:
		CHECK(truncate(so, 0) == 0);
		break;
	case REMOVE_SO:
		CHECK(unlink(so) == 0);
		break;
	case KEY_BYTE: {
		/* the last byte is in the source part of the key */
		struct stat ks;
		stat(key, &ks);
		int fd = open(key, O_RDWR);
		CHECK(fd >= 0 && pwrite(fd, "#", 1, ks.st_size - 1) == 1);
		if (fd >= 0)
			close(fd);
		break;
	}
	case KEY_TRUNCATED: {
		struct stat ks;
		stat(key, &ks);
		CHECK(truncate(key, ks.st_size - 10) == 0);
		break;
	}
	case KEY_EMPTY:
		CHECK(truncate(key, 0) == 0);
		break;
	case KEY_REMOVED:
		CHECK(unlink(key) == 0);
		break;
	case KEY_FORMAT: {
		int fd = open(key, O_RDWR);
		/* "cachet-code-entry 1" -> "... 7" */
		CHECK(fd >= 0 && pwrite(fd, "7", 1, 18) == 1);
		if (fd >= 0)
			close(fd);
		break;
	}
	case FOREIGN_ENTRY:
		snprintf(other, sizeof other, "%s/key", eb);
		CHECK(copy_file(other, key));
		snprintf(other, sizeof other, "%s/kernel.so", eb);
		CHECK(copy_file(other, so));
		break;
	case SO_SYMLINK:
		snprintf(other, sizeof other, "%s/kernel.so", eb);
		CHECK(unlink(so) == 0 && symlink(other, so) == 0);
		break;
	}
}

/* Copy folder tree from into to (folders and regular files only). */
static bool copy_tree(const char *from, const char *to)
{
	struct stat sb;
	if (lstat(from, &sb) != 0)
		return false;
	if (S_ISREG(sb.st_mode))
		return copy_file(from, to) && chmod(to, sb.st_mode & 0777) == 0;
	if (!S_ISDIR(sb.st_mode))
		return false;
	if (mkdir(to, sb.st_mode & 0777) != 0 && errno != EEXIST)
		return false;
	DIR *d = opendir(from);
	if (!d)
		return false;
	bool ok = true;
	struct dirent *e;
	while (ok && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char a[PATH_MAX], b[PATH_MAX];
		snprintf(a, sizeof a, "%.3000s/%s", from, e->d_name);
		snprintf(b, sizeof b, "%.3000s/%s", to, e->d_name);
		ok = copy_tree(a, b);
	}
	closedir(d);
	return ok;
}

/* A cache folder holding entries for variants 0 (A) and 1 (B), built once
 * and copied for each damage case (saves two compiles a case). */
typedef struct corrupt_template {
	char dir[64];
	ct_load_info a, b;
} corrupt_template;

static void template_build(corrupt_template *t)
{
	make_tmp(t->dir, sizeof t->dir);
	ct_ctx *ctx = new_ctx(t->dir, NULL);
	CHECK(load_call(ctx, 0, NULL, &t->a) == expected(0, 10));
	CHECK(load_call(ctx, 1, NULL, &t->b) == expected(1, 10));
	ct_ctx_free(ctx);
}

static void test_corruption(const corrupt_template *t, damage d)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	CHECK(copy_tree(t->dir, dir));
	char ea[PATH_MAX], eb[PATH_MAX];
	entry_dir(dir, t->a.key, ea, sizeof ea);
	entry_dir(dir, t->b.key, eb, sizeof eb);
	apply_damage(d, ea, eb);

	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	ct_load_info r;
	CHECK(load_call(ctx, 0, NULL, &r) == expected(0, 10));
	CHECKF(strcmp(r.how, "compiled") == 0, "how %s", r.how);
	CHECK(strcmp(r.key, t->a.key) == 0);
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.corrupt == 1);
	CHECKF(w.n == 1 && strstr(w.last, "bad"), "%d warnings, last: %s", w.n, w.last);
	ct_ctx_free(ctx);
	/* rebuilt: a disk hit now, and the folder checks clean */
	w.n = 0;
	ctx = new_ctx(dir, &w);
	CHECK(load_call(ctx, 0, NULL, &r) == expected(0, 10));
	CHECK(strcmp(r.how, "disk") == 0);
	int64_t bad = -1;
	CHECK(ct_cache_verify(ctx, &bad) == CT_OK && bad == 0);
	CHECK(disk_entries(ctx) == 2);
	CHECK(temps_in(dir) == 0);
	CHECK(w.n == 0);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_verify_finds_damage(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	ct_load_info a, b;
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	CHECK(load_call(ctx, 1, NULL, &b) == expected(1, 10));
	CHECK(load_call(ctx, 2, NULL, NULL) == expected(2, 10));
	char ea[PATH_MAX], eb[PATH_MAX];
	entry_dir(dir, a.key, ea, sizeof ea);
	entry_dir(dir, b.key, eb, sizeof eb);
	ct_ctx_free(ctx);
	apply_damage(ZERO_SO, ea, eb);
	apply_damage(KEY_BYTE, eb, ea);
	ctx = new_ctx(dir, &w);
	int64_t bad = -1;
	CHECK(ct_cache_verify(ctx, &bad) == CT_OK && bad == 2);
	CHECK(!exists(ea) && !exists(eb));
	CHECK(disk_entries(ctx) == 1);
	CHECK(w.n == 2);
	CHECK(ct_cache_verify(ctx, &bad) == CT_OK && bad == 0);
	CHECK(ct_cache_clear(ctx) == CT_OK && disk_entries(ctx) == 0);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_sweep_orphans(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	CHECK(load_call(ctx, 0, NULL, NULL) == expected(0, 10));
	/* a crashed publish (old) and one in progress (young) */
	char old[PATH_MAX], young[PATH_MAX], f[PATH_MAX + 16];
	snprintf(old, sizeof old, "%s/code-v1/ab/.tmp-crashed", dir);
	snprintf(young, sizeof young, "%s/code-v1/ab/.tmp-working", dir);
	char shard[PATH_MAX];
	snprintf(shard, sizeof shard, "%s/code-v1/ab", dir);
	mkdir(shard, 0700);
	CHECK(mkdir(old, 0700) == 0 && mkdir(young, 0700) == 0);
	snprintf(f, sizeof f, "%s/kernel.so", old);
	CHECK(write_script(f, "partial"));
	struct timespec ts[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
	CHECK(utimensat(AT_FDCWD, old, ts, 0) == 0);
	CHECK(ct_cache_prune(ctx) == CT_OK);
	CHECK(!exists(old) && exists(young));
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.swept == 1 && ci.entries == 1);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_unsafe_folder(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	CHECK(chmod(dir, 0770) == 0);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	ct_load_info a, b;
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	CHECK(strcmp(a.how, "compiled") == 0);
	CHECKF(w.n == 1 && strstr(w.last, "writable by group or others"), "%d: %s", w.n, w.last);
	CHECK(load_call(ctx, 0, NULL, &b) == expected(0, 10) && strcmp(b.how, "memory") == 0);
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.disk_enabled == 0 && ci.entries == 0);
	CHECK(ct_cache_verify(ctx, NULL) == CT_ERR_IO);
	CHECK(ct_cache_clear(ctx) == CT_ERR_IO);
	char code[PATH_MAX];
	snprintf(code, sizeof code, "%s/code-v1", dir);
	CHECK(!exists(code));
	ct_ctx_free(ctx);

	/* a sub-folder made group-writable is refused too */
	CHECK(chmod(dir, 0700) == 0);
	CHECK(mkdir(code, 0700) == 0 && chmod(code, 0777) == 0);
	w.n = 0;
	ctx = new_ctx(dir, &w);
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10) && strcmp(a.how, "compiled") == 0);
	CHECK(w.n == 1);
	ct_ctx_free(ctx);
	CHECK(chmod(code, 0700) == 0);

	/* a folder owned by another user (testable as root only) */
	if (geteuid() == 0) {
		CHECK(chown(dir, 65534, 65534) == 0);
		w.n = 0;
		ctx = new_ctx(dir, &w);
		CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10) &&
		      strcmp(a.how, "compiled") == 0);
		CHECKF(w.n == 1 && strstr(w.last, "owned by another user"), "%d: %s", w.n, w.last);
		ct_ctx_free(ctx);
	}
	rm_rf(dir);
}

/* Below code-v1, every level passes the folder policy or is not loaded
 * (issue 22, row 9): a shard folder, an entry folder or a file that others
 * may write (or that another user owns) gives a warning and a compile. */
typedef struct unsafe_row {
	const char *name;
	const char *what;   /* "shard", "entry", "kernel.so", "key" */
	int mode;           /* chmod to this, or -1 */
	int chown_nobody;   /* chown to 65534 (as root only) */
	const char *warning;
	int republished;    /* the rebuilt entry is on disk again (a safe shard) */
} unsafe_row;

static const unsafe_row unsafe_rows[] = {
	{"unsafe: shard folder 0777", "shard", 0777, 0, "writable by group or others", 0},
	{"unsafe: shard folder 0770", "shard", 0770, 0, "writable by group or others", 0},
	{"unsafe: entry folder 0777", "entry", 0777, 0, "writable by group or others", 1},
	{"unsafe: kernel.so 0666", "kernel.so", 0666, 0, "writable by group or others", 1},
	{"unsafe: key 0622", "key", 0622, 0, "writable by group or others", 1},
	{"unsafe: kernel.so of another user", "kernel.so", -1, 1, "not a regular file of ours", 1},
	{"unsafe: shard of another user", "shard", -1, 1, "owned by another user", 0},
};

static void unsafe_path(const char *dir, const char *key, const char *what, char *buf, size_t cap)
{
	char e[PATH_MAX];
	entry_dir(dir, key, e, sizeof e);
	if (strcmp(what, "shard") == 0)
		snprintf(buf, cap, "%s/code-v1/%.2s", dir, key);
	else if (strcmp(what, "entry") == 0)
		snprintf(buf, cap, "%s", e);
	else
		snprintf(buf, cap, "%s/%s", e, what);
}

static void test_unsafe_below(const unsafe_row *r)
{
	if (r->chown_nobody && geteuid() != 0) {
		fprintf(stderr, "skip: %s (needs root)\n", r->name);
		return;
	}
	char dir[64], path[PATH_MAX + 64];
	make_tmp(dir, sizeof dir);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	ct_load_info a;
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10) && strcmp(a.how, "compiled") == 0);
	ct_ctx_free(ctx);
	unsafe_path(dir, a.key, r->what, path, sizeof path);
	if (r->mode >= 0)
		CHECK(chmod(path, (mode_t)r->mode) == 0);
	if (r->chown_nobody)
		CHECK(chown(path, 65534, 65534) == 0);
	ctx = new_ctx(dir, &w);
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	CHECKF(strcmp(a.how, "compiled") == 0, "loaded from %s", a.how);
	CHECKF(w.n >= 1 && strstr(w.last, r->warning), "%d: %s", w.n, w.last);
	ct_ctx_free(ctx);
	/* a fresh ctx: from disk again where the entry could be rebuilt in a safe
	 * shard; never from an unsafe shard */
	w.n = 0;
	ctx = new_ctx(dir, &w);
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	CHECKF(strcmp(a.how, r->republished ? "disk" : "compiled") == 0, "loaded from %s", a.how);
	CHECK(r->republished ? w.n == 0 : w.n >= 1);
	ct_ctx_free(ctx);
	if (!r->republished && r->chown_nobody)
		CHECK(chown(path, 0, 0) == 0);
	rm_rf(dir);
}

/* The OpenCL binary cache keeps the same policy: a blob-v1 folder or a blob
 * that others may write is not read. */
static void test_unsafe_blobs(void)
{
	char dir[64], blobs[PATH_MAX];
	make_tmp(dir, sizeof dir);
	warnings w = {0};
	ct_ctx *ctx = new_ctx(dir, &w);
	static const char key[] = "a key", blob[] = "the bytes";
	jit_blob_put(ctx, key, sizeof key, blob, sizeof blob);
	void *data = NULL;
	size_t n = 0;
	CHECK(jit_blob_get(ctx, key, sizeof key, &data, &n) == CT_OK && n == sizeof blob);
	free(data);
	snprintf(blobs, sizeof blobs, "%s/blob-v1", dir);
	/* a blob file others may write */
	DIR *d = opendir(blobs);
	struct dirent *de;
	char file[PATH_MAX * 2] = "";
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".bin"))
			snprintf(file, sizeof file, "%s/%s", blobs, de->d_name);
	if (d)
		closedir(d);
	CHECK(file[0] && chmod(file, 0666) == 0);
	data = NULL;
	n = 0;
	CHECK(jit_blob_get(ctx, key, sizeof key, &data, &n) == CT_OK && data == NULL);
	CHECKF(w.n == 1 && strstr(w.last, "writable by group or others"), "%d: %s", w.n, w.last);
	/* the folder itself */
	jit_blob_put(ctx, key, sizeof key, blob, sizeof blob);
	CHECK(chmod(blobs, 0777) == 0);
	CHECK(jit_blob_get(ctx, key, sizeof key, &data, &n) == CT_OK && data == NULL);
	CHECKF(w.n == 2 && strstr(w.last, "OpenCL binary cache not used"), "%d: %s", w.n, w.last);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

/* Set the LRU time of the entry with key digest to now - age seconds. */
static void set_age(const char *dir, const char *key, int age)
{
	char p[PATH_MAX + 16], e[PATH_MAX];
	entry_dir(dir, key, e, sizeof e);
	snprintf(p, sizeof p, "%s/key", e);
	struct timespec ts[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
	CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
}

static void test_size_cap_lru(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	ct_load_info info[4];
	for (int k = 0; k < 4; k++)
		CHECK(load_call(ctx, k, NULL, &info[k]) == expected(k, 10));
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.entries == 4);
	int64_t each = ci.bytes / 4;
	ct_ctx_free(ctx);
	/* ages: 0 oldest ... 3 newest; then a disk hit makes 0 the newest */
	for (int k = 0; k < 4; k++)
		set_age(dir, info[k].key, 1000 - 100 * k);
	ctx = new_ctx(dir, NULL);
	ct_load_info r;
	CHECK(load_call(ctx, 0, NULL, &r) == expected(0, 10) && strcmp(r.how, "disk") == 0);
	/* room for 2.5 entries: pruning down to 90% keeps the 2 newest */
	CHECK(ct_cache_set_max_bytes(ctx, each * 5 / 2) == CT_OK);
	CHECK(ct_cache_prune(ctx) == CT_OK);
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK);
	CHECKF(ci.entries == 2 && ci.evicted == 2, "entries %lld evicted %lld",
	       (long long)ci.entries, (long long)ci.evicted);
	char e[PATH_MAX];
	bool keep[4] = {true, false, false, true};
	for (int k = 0; k < 4; k++) {
		entry_dir(dir, info[k].key, e, sizeof e);
		CHECKF(exists(e) == keep[k], "entry %d", k);
	}
	/* the module whose entry may be evicted stays usable */
	CHECK(load_call(ctx, 0, NULL, &r) == expected(0, 10) && strcmp(r.how, "memory") == 0);
	CHECK(ct_cache_set_max_bytes(ctx, -1) == CT_ERR_USAGE);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_prune_after_compile(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	/* the first publish in a folder prunes (no stamp yet): with a tiny
	 * cap, the new entry goes at once, and the loaded module still works */
	setenv("CACHET_CACHE_MAX_BYTES", "1K", 1);
	ct_ctx *ctx = new_ctx(dir, NULL);
	unsetenv("CACHET_CACHE_MAX_BYTES");
	ct_load_info r;
	CHECK(load_call(ctx, 0, NULL, &r) == expected(0, 10));
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK);
	CHECK(ci.max_bytes == 1024 && ci.entries == 0 && ci.evicted == 1);
	/* the next compile within the minute does not scan again */
	CHECK(load_call(ctx, 1, NULL, &r) == expected(1, 10));
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.entries == 1 && ci.evicted == 1);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_no_cache(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	setenv("CACHET_NO_CACHE", "1", 1);
	ct_ctx *ctx = new_ctx(dir, NULL);
	unsetenv("CACHET_NO_CACHE");
	ct_load_info a, b;
	CHECK(load_call(ctx, 0, NULL, &a) == expected(0, 10));
	CHECK(load_call(ctx, 0, NULL, &b) == expected(0, 10));
	CHECK(strcmp(a.how, "compiled") == 0 && strcmp(b.how, "compiled") == 0);
	ct_cache_info ci;
	CHECK(ct_cache_stats(ctx, &ci) == CT_OK && ci.disk_enabled == 0 && ci.compiles == 2);
	CHECK(ci.entries == 0 && ci.memo_entries == 0);
	ct_ctx_free(ctx);
	/* per load, too */
	ctx = new_ctx(dir, NULL);
	ct_compile_options o;
	ct_compile_options_init(&o);
	o.no_cache = 1;
	CHECK(load_call(ctx, 0, &o, &a) == expected(0, 10) && strcmp(a.how, "compiled") == 0);
	CHECK(load_call(ctx, 0, &o, &a) == expected(0, 10) && strcmp(a.how, "compiled") == 0);
	CHECK(disk_entries(ctx) == 0);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

/* Key of variant k under o in a fresh ctx, version v (NULL = current). */
static void key_of(int k, const char *src_override, const ct_compile_options *o, const char *v,
                   char hex[JIT_DIGEST_HEX])
{
	char src[256];
	source_for(k, src, sizeof src);
	if (src_override)
		snprintf(src, sizeof src, "%s", src_override);
	ct_ctx *ctx = ct_ctx_new();
	if (v)
		jit_set_version(ctx, v);
	if (jit_key(ctx, src, strlen(src), o, hex, NULL) != CT_OK) {
		fprintf(stderr, "jit_key: %s\n", ct_ctx_last_message(ctx));
		snprintf(hex, JIT_DIGEST_HEX, "error");
	}
	ct_ctx_free(ctx);
}

static void test_key_sensitivity(void)
{
	char tmp[64];
	make_tmp(tmp, sizeof tmp);
	char base[JIT_DIGEST_HEX], hex[JIT_DIGEST_HEX], src0[256];
	source_for(0, src0, sizeof src0);
	key_of(0, NULL, NULL, NULL, base);
	CHECK(strlen(base) == 32);

	ct_compile_options o;
	static const char *const define[] = {"-DFOO=1"};
	static const char *const o2[] = {"-O2"};
	char changed_src[256];
	snprintf(changed_src, sizeof changed_src, "%s", src0);
	changed_src[strlen(changed_src) - 5] = '9'; /* "+ 1; }" -> "+ 9; }" */

	/* each of these must change the key */
	key_of(1, NULL, NULL, NULL, hex);
	CHECKF(strcmp(hex, base) != 0, "other source");
	key_of(0, changed_src, NULL, NULL, hex);
	CHECKF(strcmp(hex, base) != 0, "one byte of source");
	ct_compile_options_init(&o);
	o.flags = define;
	o.nflags = 1;
	key_of(0, NULL, &o, NULL, hex);
	CHECKF(strcmp(hex, base) != 0, "extra flag");
	o.flags = o2;
	key_of(0, NULL, &o, NULL, hex);
	CHECKF(strcmp(hex, base) != 0, "-O2");
	ct_compile_options_init(&o);
	o.openmp = 1;
	key_of(0, NULL, &o, NULL, hex);
	CHECKF(strcmp(hex, base) != 0, "openmp");
	key_of(0, NULL, NULL, "0.0.0-test", hex);
	CHECKF(strcmp(hex, base) != 0, "cachet version");
	setenv("CPATH", "/nonexistent", 1);
	key_of(0, NULL, NULL, NULL, hex);
	unsetenv("CPATH");
	CHECKF(strcmp(hex, base) != 0, "CPATH");
	/* another compiler; and the same path answering another --version */
	char fake[PATH_MAX];
	snprintf(fake, sizeof fake, "%s/fakecc", tmp);
	CHECK(write_script(fake,
	                   "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'fakecc 1.0'; exit 0; }\n"
	                   "exec cc \"$@\"\n"));
	ct_compile_options_init(&o);
	o.cc = fake;
	char fake1[JIT_DIGEST_HEX];
	key_of(0, NULL, &o, NULL, fake1);
	CHECKF(strcmp(fake1, base) != 0, "compiler");
	CHECK(write_script(fake,
	                   "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'fakecc 1.1'; exit 0; }\n"
	                   "exec cc \"$@\"\n"));
	key_of(0, NULL, &o, NULL, hex);
	CHECKF(strcmp(hex, fake1) != 0 && strcmp(hex, "error") != 0, "compiler version");
	/* the same path, size, mtime and --version, another content (a wrapper
	 * fixed in place): the file's hash is in the key (issue 22, row 4) */
	char fake_v[JIT_DIGEST_HEX], fake_w[JIT_DIGEST_HEX];
	key_of(0, NULL, &o, NULL, fake_v);
	struct stat before;
	CHECK(stat(fake, &before) == 0);
	CHECK(write_script(fake,
	                   "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'fakecc 1.1'; exit 0; }\n"
	                   "exec\tcc \"$@\"\n"));
	struct timespec times[2] = {before.st_atim, before.st_mtim};
	CHECK(utimensat(AT_FDCWD, fake, times, 0) == 0);
	struct stat after;
	CHECK(stat(fake, &after) == 0 && after.st_size == before.st_size &&
	      after.st_mtim.tv_sec == before.st_mtim.tv_sec);
	key_of(0, NULL, &o, NULL, fake_w);
	CHECKF(strcmp(fake_w, fake_v) != 0 && strcmp(fake_w, "error") != 0, "compiler content");
	/* and its mtime alone */
	times[1].tv_sec -= 100;
	CHECK(utimensat(AT_FDCWD, fake, times, 0) == 0);
	key_of(0, NULL, &o, NULL, hex);
	CHECKF(strcmp(hex, fake_w) != 0 && strcmp(hex, "error") != 0, "compiler mtime");
	if (access("/usr/bin/clang", X_OK) == 0) {
		o.cc = "clang";
		key_of(0, NULL, &o, NULL, hex);
		CHECKF(strcmp(hex, base) != 0 && strcmp(hex, "error") != 0, "clang");
	}

	/* and these must not */
	char copy[256];
	memcpy(copy, src0, sizeof copy);
	key_of(0, copy, NULL, NULL, hex);
	CHECKF(strcmp(hex, base) == 0, "same source elsewhere");
	ct_compile_options_init(&o);
	o.cc = "  cc  ";
	o.flags = define; /* nflags = 0: not used */
	o.timeout = 12;
	o.no_cache = 1;
	key_of(0, NULL, &o, NULL, hex);
	CHECKF(strcmp(hex, base) == 0, "options that do not change the code");
	setenv("CC", "cc", 1);
	key_of(0, NULL, NULL, NULL, hex);
	unsetenv("CC");
	CHECKF(strcmp(hex, base) == 0, "CC=cc");

	/* -march=native is in the key as what it means on this CPU */
	ct_ctx *ctx = ct_ctx_new();
	char *text = NULL;
	CHECK(jit_key(ctx, src0, strlen(src0), NULL, hex, &text) == CT_OK);
	const char *mn = text ? strstr(text, "march-native ") : NULL;
	CHECK(mn != NULL);
	if (mn)
		CHECKF(strstr(mn, "-march=") || strstr(mn, "-target-cpu") || strstr(mn, "flags"),
		       "%.200s", mn);
	CHECK(text && strstr(text, "cachet-version 5 " CACHET_VERSION "\n"));
	CHECK(text && strstr(text, src0));
	free(text);
	ct_ctx_free(ctx);

	/* another process computes the same key, byte for byte */
	const char *args[] = {"--key", "0", NULL};
	int out;
	pid_t pid = spawn_self(args, -1, &out);
	CHECK(pid > 0);
	if (pid > 0) {
		char buf[128];
		read_all(out, buf, sizeof buf);
		CHECK(wait_exit(pid) == 0);
		CHECKF(strncmp(buf, base, 32) == 0, "child key %s, parent %s", buf, base);
	}
	rm_rf(tmp);
}

static void test_bad_compilers(void)
{
	char tmp[64];
	make_tmp(tmp, sizeof tmp);
	ct_ctx *ctx = new_ctx(tmp, NULL);
	ct_compile_options o;
	ct_compile_options_init(&o);
	/* no shell: the words are a program name and its arguments */
	char cmd[256], pwned[128];
	snprintf(pwned, sizeof pwned, "%s/pwned", tmp);
	snprintf(cmd, sizeof cmd, "cc;touch %s", pwned);
	o.cc = cmd;
	ct_module *m = NULL;
	char src[256];
	source_for(0, src, sizeof src);
	CHECK(ct_module_load(ctx, src, strlen(src), &o, &m, NULL) == CT_ERR_COMPILE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "not found"), "%s", ct_ctx_last_message(ctx));
	CHECK(!exists(pwned));
	snprintf(cmd, sizeof cmd, "$(touch %s)", pwned);
	CHECK(ct_module_load(ctx, src, strlen(src), &o, &m, NULL) == CT_ERR_COMPILE);
	CHECK(!exists(pwned));
	o.cc = "/nonexistent/cc";
	CHECK(ct_module_load(ctx, src, strlen(src), &o, &m, NULL) == CT_ERR_COMPILE);
	CHECK(ct_ctx_set_compiler(ctx, "") == CT_ERR_USAGE);

	/* a compiler that hangs is killed at the timeout */
	char slow[PATH_MAX];
	snprintf(slow, sizeof slow, "%s/slowcc", tmp);
	CHECK(write_script(slow, "#!/bin/sh\ncase \"$1\" in --version) echo slowcc; exit 0;; esac\n"
	                         "for a in \"$@\"; do [ \"$a\" = '-###' ] && exit 0; done\n"
	                         "exec sleep 30\n"));
	CHECK(ct_ctx_set_compiler(ctx, slow) == CT_OK);
	o.cc = NULL;
	o.timeout = 0.5;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ct_status s = ct_module_load(ctx, src, strlen(src), &o, &m, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	CHECK(s == CT_ERR_COMPILE);
	CHECKF(strstr(ct_ctx_last_message(ctx), "timed out"), "%s", ct_ctx_last_message(ctx));
	CHECKF(secs < 5, "%.2f s", secs);
	remove_kept(ctx);
	/* back to the default compiler */
	CHECK(ct_ctx_set_compiler(ctx, NULL) == CT_OK);
	CHECK(load_call(ctx, 0, NULL, NULL) == expected(0, 10));
	ct_ctx_free(ctx);
	rm_rf(tmp);
}

static void test_openmp_and_flags(void)
{
	char dir[64];
	make_tmp(dir, sizeof dir);
	ct_ctx *ctx = new_ctx(dir, NULL);
	static const char src[] = "#include <math.h>\n"
	                          "double g(int n) {\n"
	                          "\tdouble s = 0;\n"
	                          "#pragma omp parallel for reduction(+ : s)\n"
	                          "\tfor (int i = 1; i <= n; i++)\n"
	                          "\t\ts += sqrt((double)i * i) * SCALE;\n"
	                          "\treturn s;\n"
	                          "}\n";
	ct_compile_options o;
	ct_compile_options_init(&o);
	static const char *const flags[] = {"-DSCALE=2.0"};
	o.openmp = 1;
	o.flags = flags;
	o.nflags = 1;
	ct_module *m = NULL;
	ct_load_info info;
	CHECK(ct_module_load(ctx, src, strlen(src), &o, &m, &info) == CT_OK);
	double (*g)(int) = m ? (double (*)(int))ct_module_symbol(m, "g") : NULL;
	CHECK(g != NULL);
	if (g)
		CHECK(g(100) == 10100.0);
	CHECK(ct_module_symbol(m, "no_such_symbol") == NULL);
	ct_ctx_free(ctx);
	/* from the disk */
	ctx = new_ctx(dir, NULL);
	CHECK(ct_module_load(ctx, src, strlen(src), &o, &m, &info) == CT_OK);
	CHECK(strcmp(info.how, "disk") == 0);
	g = m ? (double (*)(int))ct_module_symbol(m, "g") : NULL;
	if (g)
		CHECK(g(10) == 110.0);
	ct_ctx_free(ctx);
	rm_rf(dir);
}

static void test_api_misuse(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_module *m = (ct_module *)1;
	CHECK(ct_module_load(ctx, NULL, 3, NULL, &m, NULL) == CT_ERR_USAGE);
	CHECK(ct_module_load(ctx, "x", 1, NULL, NULL, NULL) == CT_ERR_USAGE);
	ct_compile_options o;
	ct_compile_options_init(&o);
	o.nflags = 2;
	CHECK(ct_module_load(ctx, "x", 1, &o, &m, NULL) == CT_ERR_USAGE);
	CHECK(ct_module_symbol(NULL, "f") == NULL);
	CHECK(ct_cache_set_dir(ctx, "") == CT_ERR_USAGE);
	CHECK(ct_cache_stats(ctx, NULL) == CT_ERR_USAGE);
	CHECK(ct_module_load(NULL, "x", 1, NULL, &m, NULL) == CT_ERR_USAGE);
	ct_ctx_free(ctx);
	/* a ctx that never used the cache frees cleanly */
	ct_ctx_free(ct_ctx_new());
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* RUN, printing each case's wall time when CACHET_TEST_TIMES is set. */
#define TRUN(fn)                                                                                   \
	do {                                                                                       \
		double t_ = now_s();                                                               \
		RUN(fn);                                                                           \
		if (getenv("CACHET_TEST_TIMES"))                                                   \
			printf("%-32s %.2f s\n", #fn, now_s() - t_);                               \
	} while (0)

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "--child") == 0)
		return child_main(argv[2], atoi(argv[3]));
	if (argc >= 3 && strcmp(argv[1], "--key") == 0)
		return key_main(atoi(argv[2]));
	/* the tests choose their folders and compilers themselves */
	unsetenv("CACHET_NO_CACHE");
	unsetenv("CACHET_CACHE_MAX_BYTES");
	unsetenv("CC");
	signal(SIGPIPE, SIG_IGN);

	TRUN(test_compile_and_call);
	TRUN(test_compile_error);
	TRUN(test_memo_hit);
	TRUN(test_counting);
	TRUN(test_folder_removed_under_us);
	TRUN(test_disk_hit_new_ctx);
	TRUN(test_disk_hit_fresh_process);
	TRUN(test_concurrent_processes);
	corrupt_template t;
	h_begin("corrupt: template entries");
	template_build(&t);
	h_end();
	for (size_t i = 0; i < sizeof damages / sizeof *damages; i++) {
		h_begin(damages[i].name);
		test_corruption(&t, damages[i].d);
		h_end();
	}
	rm_rf(t.dir);
	TRUN(test_verify_finds_damage);
	TRUN(test_sweep_orphans);
	TRUN(test_unsafe_folder);
	for (size_t i = 0; i < sizeof unsafe_rows / sizeof *unsafe_rows; i++) {
		h_begin(unsafe_rows[i].name);
		test_unsafe_below(&unsafe_rows[i]);
		h_end();
	}
	TRUN(test_unsafe_blobs);
	TRUN(test_size_cap_lru);
	TRUN(test_prune_after_compile);
	TRUN(test_no_cache);
	TRUN(test_key_sensitivity);
	TRUN(test_bad_compilers);
	TRUN(test_openmp_and_flags);
	TRUN(test_api_misuse);
	return h_report();
}
