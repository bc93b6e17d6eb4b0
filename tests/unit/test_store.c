/* test_store.c: the per-device tuning store: round trips, better-record merges, concurrency,
 * damage. */
#include "harness.h"

#include "cachet.h"
#include "tune/tune.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp_root[] = "/tmp/ct_store_XXXXXX";
static int dir_seq;
static char device_id[128];

/* A fresh folder under the test root (not created when create is false). */
static void new_dir(char *out, size_t n, bool create)
{
	snprintf(out, n, "%s/d%d", tmp_root, ++dir_seq);
	if (create)
		mkdir(out, 0700);
}

static void store_file(const char *dir, char *out, size_t n)
{
	snprintf(out, n, "%s/%s.sqlite", dir, device_id);
}

static ct_tune_record rec(const char *family, ct_dtype t, const char *size_class,
                          const char *params, double seconds, int verified)
{
	ct_tune_record r;
	memset(&r, 0, sizeof r);
	r.family = family;
	r.dtype = t;
	r.size_class = size_class;
	r.params = params;
	r.seconds = seconds;
	r.gflops = seconds > 0 ? 1.0 / seconds : 0;
	r.verified = verified;
	r.tuner_version = "1";
	return r;
}

static ct_store *open_q(ct_ctx *ctx, const char *dir)
{
	ct_store *s = ct_store_open(ctx, dir, CT_STORE_QUIET);
	CHECKF(s != NULL, "open %s: %s", dir, ct_ctx_last_message(ctx));
	return s;
}

static ct_status put(ct_store *s, ct_tune_record r, int *stored)
{
	ct_status st = ct_store_put(s, &r, stored);
	return st;
}

/* Number of entries in dir whose name contains part. */
static int count_names(const char *dir, const char *part)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls -a '%s' 2>/dev/null | grep -c -- '%s'", dir, part);
	FILE *f = popen(cmd, "r");
	int n = 0;
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		pclose(f);
	}
	return n;
}

/* Run sql on the store file behind cachet's back. */
static bool raw_sql(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	bool ok = sqlite3_open(path, &db) == SQLITE_OK &&
	          sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
	if (!ok)
		fprintf(stderr, "raw_sql: %s\n", db ? sqlite3_errmsg(db) : "open failed");
	sqlite3_close(db);
	return ok;
}

static bool raw_text(const char *path, const char *sql, char *out, size_t n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	out[0] = 0;
	bool ok = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	          sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	          sqlite3_step(st) == SQLITE_ROW;
	if (ok)
		snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ok;
}

/* ------------------------------------------------------------ basics */

static void store_creates_missing_folder(void)
{
	char base[256], dir[300], file[640];
	new_dir(base, sizeof base, false);
	snprintf(dir, sizeof dir, "%s/a/b/cachet", base);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	struct stat st;
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	store_file(dir, file, sizeof file);
	CHECKF(strcmp(ct_store_path(s), file) == 0, "%s", ct_store_path(s));
	CHECK(stat(file, &st) == 0);
	CHECK(ct_store_writable(s) == 1);
	CHECK(strcmp(ct_store_warnings(s), "") == 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_roundtrip(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	int stored = -1;
	ct_tune_record a = rec("matmul|A:rm,B:rm", CT_F32, "M=1024:N=1024:K=1024",
	                       "{\"tiles\":[64,64,256],\"order\":\"ikj\"}", 0.0123, 1);
	a.timestamp = 1700000000;
	CHECK(put(s, a, &stored) == CT_OK && stored == 1);
	CHECK(put(s, rec("matmul|A:rm,B:rm", CT_F64, "M=1024:N=1024:K=1024", "p64", 0.02, 1),
	          NULL) == CT_OK);
	CHECK(put(s, rec("matmul|A:rm,B:rm", CT_F32, "M=64:N=64:K=64", "small", 0.0001, -1),
	          NULL) == CT_OK);
	CHECK(put(s, rec("stencil5", CT_F64, "large", "s", 1.5, 0), NULL) == CT_OK);

	ct_tune_record g;
	int found = 0;
	time_t before = time(NULL);
	CHECK(ct_store_get(s, "matmul|A:rm,B:rm", CT_F32, "M=1024:N=1024:K=1024", &g, &found) ==
	      CT_OK);
	CHECK(found == 1);
	if (found) {
		CHECK(strcmp(g.family, a.family) == 0 && g.dtype == CT_F32);
		CHECK(strcmp(g.size_class, a.size_class) == 0 && strcmp(g.params, a.params) == 0);
		CHECK(g.seconds == a.seconds && g.gflops == a.gflops && g.verified == 1);
		CHECK(strcmp(g.tuner_version, "1") == 0 && g.timestamp == 1700000000);
		CHECK(strcmp(g.cachet_version, CACHET_VERSION) == 0 && g.trusted == 1);
	}
	CHECK(ct_store_get(s, "stencil5", CT_F64, "large", &g, &found) == CT_OK && found);
	CHECK(found && g.verified == 0 && g.timestamp >= (int64_t)before - 5 &&
	      g.timestamp <= (int64_t)time(NULL));
	CHECK(ct_store_get(s, "stencil5", CT_F32, "large", &g, &found) == CT_OK && !found);
	CHECK(ct_store_get(s, "nothing", CT_F32, "x", &g, &found) == CT_OK && !found);

	const ct_tune_record *rs;
	int n;
	const ct_dtype f64 = CT_F64;
	CHECK(ct_store_list(s, "matmul|A:rm,B:rm", NULL, &rs, &n) == CT_OK && n == 3);
	CHECK(n == 3 && strcmp(rs[0].size_class, "M=1024:N=1024:K=1024") == 0 &&
	      rs[0].dtype == CT_F32);
	CHECK(ct_store_list(s, "matmul|A:rm,B:rm", &f64, &rs, &n) == CT_OK && n == 1);
	CHECK(ct_store_list(s, NULL, NULL, &rs, &n) == CT_OK && n == 4);
	ct_store_close(s);

	/* persisted */
	s = open_q(ctx, dir);
	CHECK(ct_store_list(s, NULL, NULL, &rs, &n) == CT_OK && n == 4);
	CHECK(ct_store_get(s, "matmul|A:rm,B:rm", CT_F32, "M=64:N=64:K=64", &g, &found) == CT_OK &&
	      found);
	CHECK(found && strcmp(g.params, "small") == 0 && g.verified == -1 && g.trusted);
	CHECK(strcmp(ct_store_warnings(s), "") == 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

/* One row per put: does the new record replace the old one? */
static void store_keeps_better_rows(void)
{
	static const struct {
		const char *name;
		double seconds;
		int verified;
		int want_stored;
		const char *want_params; /* after this put */
	} rows[] = {
	    {"first record", 1.0, 1, 1, "r0"},
	    {"slower verified kept out", 2.0, 1, 0, "r0"},
	    {"equal time keeps old", 1.0, 1, 0, "r0"},
	    {"faster verified replaces", 0.5, 1, 1, "r3"},
	    {"faster but not verified", 0.1, -1, 0, "r3"},
	    {"faster but mismatch", 0.01, 0, 0, "r3"},
	    {"unmeasured loses", 0.0, 1, 0, "r3"},
	    {"fastest verified", 0.25, 1, 1, "r7"},
	};
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = ct_store_open(ctx, dir, CT_STORE_QUIET);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char name[96], params[16];
		snprintf(name, sizeof name, "store_keeps_better[%s]", rows[i].name);
		snprintf(params, sizeof params, "r%zu", i);
		h_begin(name);
		int stored = -1, found = 0;
		CHECK(s &&
		      put(s, rec("k", CT_F32, "n=1", params, rows[i].seconds, rows[i].verified),
		          &stored) == CT_OK);
		CHECKF(stored == rows[i].want_stored, "stored %d", stored);
		ct_tune_record g;
		CHECK(s && ct_store_get(s, "k", CT_F32, "n=1", &g, &found) == CT_OK && found);
		CHECKF(found && strcmp(g.params, rows[i].want_params) == 0, "params %s",
		       found ? g.params : "-");
		h_end();
	}
	/* rank: not verified, then a verified one (even slower) wins; a
	 * mismatch never displaces a not-verified one */
	h_begin("store_keeps_better[verified beats unverified]");
	int stored = -1, found = 0;
	CHECK(put(s, rec("k", CT_F32, "n=2", "u", 0.1, -1), &stored) == CT_OK && stored == 1);
	CHECK(put(s, rec("k", CT_F32, "n=2", "m", 0.05, 0), &stored) == CT_OK && stored == 0);
	CHECK(put(s, rec("k", CT_F32, "n=2", "v", 9.0, 1), &stored) == CT_OK && stored == 1);
	ct_tune_record g;
	CHECK(ct_store_get(s, "k", CT_F32, "n=2", &g, &found) == CT_OK && found &&
	      strcmp(g.params, "v") == 0);
	h_end();
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_meta_and_wal(void)
{
	char dir[256], file[640], v[1024];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p;
	ct_probe_run(ctx, 0, &p);
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = CT_STORE_QUIET;
	cfg.param_names = "tiles,order,levels,vector,unroll,threads";
	ct_store *s = tune_store_open(ctx, &cfg);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 1, 1), NULL) == CT_OK);
	store_file(dir, file, sizeof file);
	CHECK(raw_text(file, "PRAGMA journal_mode", v, sizeof v) && strcmp(v, "wal") == 0);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='magic'", v, sizeof v) &&
	      strcmp(v, TUNE_STORE_MAGIC) == 0);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='format_version'", v, sizeof v) &&
	      atoi(v) == TUNE_STORE_FORMAT);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='device_id'", v, sizeof v) &&
	      strcmp(v, p.device_id) == 0);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='device_identity'", v, sizeof v) &&
	      strcmp(v, p.identity) == 0);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='cachet_version'", v, sizeof v) &&
	      strcmp(v, CACHET_VERSION) == 0);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='param_names'", v, sizeof v) &&
	      strcmp(v, cfg.param_names) == 0);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='record_fields'", v, sizeof v) &&
	      strstr(v, "checksum") != NULL);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ concurrency */

#define WRITERS 4
#define PER_WRITER 120
#define SHARED 40

/* One writer process: its own records, plus a share of common keys whose
 * best time is 1.0 only from some writers. Exit status = failures. */
static int writer_main(const char *dir, int c)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = ctx ? ct_store_open(ctx, dir, CT_STORE_QUIET) : NULL;
	if (!s || !ct_store_writable(s))
		return 99;
	int fail = 0;
	char fam[32], sc[32], params[64];
	snprintf(fam, sizeof fam, "own%d", c);
	for (int k = 0; k < PER_WRITER; k++) {
		snprintf(sc, sizeof sc, "n=%d", k);
		snprintf(params, sizeof params, "writer=%d;k=%d", c, k);
		if (put(s, rec(fam, CT_F32, sc, params, 0.5, 1), NULL) != CT_OK) {
			fprintf(stderr, "writer %d: %s\n", c, ct_ctx_last_message(ctx));
			fail++;
		}
		int j = k % SHARED;
		snprintf(sc, sizeof sc, "n=%d", j);
		snprintf(params, sizeof params, "from=%d", c);
		double secs = 1.0 + 0.1 * ((j + k / SHARED + c) % WRITERS);
		if (put(s, rec("shared", CT_F64, sc, params, secs, 1), NULL) != CT_OK) {
			fprintf(stderr, "writer %d shared: %s\n", c, ct_ctx_last_message(ctx));
			fail++;
		}
		/* read back what this writer wrote a little earlier */
		if (k > 0) {
			ct_tune_record g;
			int found = 0;
			snprintf(sc, sizeof sc, "n=%d", k - 1);
			snprintf(params, sizeof params, "writer=%d;k=%d", c, k - 1);
			if (ct_store_get(s, fam, CT_F32, sc, &g, &found) != CT_OK || !found ||
			    strcmp(g.params, params) != 0 || !g.trusted)
				fail++;
		}
	}
	if (strcmp(ct_store_warnings(s), "") != 0) {
		fprintf(stderr, "writer %d warnings: %s", c, ct_store_warnings(s));
		fail++;
	}
	ct_store_close(s);
	ct_ctx_free(ctx);
	return fail > 98 ? 98 : fail;
}

static void store_concurrent_writers(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, false); /* the writers race to create it too */
	fflush(NULL);
	pid_t pids[WRITERS];
	for (int c = 0; c < WRITERS; c++) {
		pids[c] = fork();
		if (pids[c] == 0)
			_exit(writer_main(dir, c));
		CHECK(pids[c] > 0);
	}
	for (int c = 0; c < WRITERS; c++) {
		int status = -1;
		if (pids[c] > 0)
			waitpid(pids[c], &status, 0);
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d: status %d", c,
		       status);
	}
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	const ct_tune_record *rs;
	int n = 0;
	const ct_dtype f64 = CT_F64;
	CHECK(ct_store_list(s, NULL, NULL, &rs, &n) == CT_OK);
	CHECKF(n == WRITERS * PER_WRITER + SHARED, "%d records", n);
	CHECK(ct_store_list(s, "shared", &f64, &rs, &n) == CT_OK && n == SHARED);
	for (int i = 0; i < n; i++)
		CHECKF(rs[i].seconds == 1.0 && rs[i].trusted, "%s: %g s", rs[i].size_class,
		       rs[i].seconds);
	for (int c = 0; c < WRITERS; c++) {
		char fam[32];
		snprintf(fam, sizeof fam, "own%d", c);
		CHECK(ct_store_list(s, fam, NULL, &rs, &n) == CT_OK && n == PER_WRITER);
	}
	CHECK(strcmp(ct_store_warnings(s), "") == 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
	char file[640], v[64];
	store_file(dir, file, sizeof file);
	CHECK(raw_text(file, "PRAGMA integrity_check", v, sizeof v) && strcmp(v, "ok") == 0);
	CHECK(count_names(dir, ".bad-") == 0);
}

/* ------------------------------------------------------------ damage */

/* Open over a damaged file: set aside with a warning, a fresh store works. */
static void expect_set_aside(const char *dir, const char *why_part)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	if (!s) {
		ct_ctx_free(ctx);
		return;
	}
	CHECKF(strstr(ct_store_warnings(s), "set aside") != NULL, "warnings: %s",
	       ct_store_warnings(s));
	CHECKF(strstr(ct_store_warnings(s), why_part) != NULL, "warnings: %s",
	       ct_store_warnings(s));
	CHECK(count_names(dir, ".sqlite.bad-") >= 1);
	CHECK(ct_store_writable(s));
	const ct_tune_record *rs;
	int n = -1, found = 0;
	CHECK(ct_store_list(s, NULL, NULL, &rs, &n) == CT_OK && n == 0);
	CHECK(put(s, rec("f", CT_F32, "c", "fresh", 1, 1), NULL) == CT_OK);
	ct_tune_record g;
	CHECK(ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found &&
	      strcmp(g.params, "fresh") == 0);
	ct_store_close(s);
	/* and the next open is quiet */
	s = open_q(ctx, dir);
	CHECK(s && strcmp(ct_store_warnings(s), "") == 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_garbage_file(void)
{
	char dir[256], file[640], bad[600];
	new_dir(dir, sizeof dir, true);
	store_file(dir, file, sizeof file);
	FILE *f = fopen(file, "wb");
	uint64_t x = 88172645463325252ull;
	for (int i = 0; f && i < 1024; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		fwrite(&x, sizeof x, 1, f);
	}
	if (f)
		fclose(f);
	expect_set_aside(dir, "not a SQLite database");
	/* the garbage is kept for inspection, byte for byte */
	snprintf(bad, sizeof bad, "ls %s/*.bad-* 2>/dev/null | head -n 1", dir);
	FILE *p = popen(bad, "r");
	char name[600] = "";
	if (p) {
		if (!fgets(name, sizeof name, p))
			name[0] = 0;
		pclose(p);
	}
	name[strcspn(name, "\n")] = 0;
	struct stat st;
	CHECK(name[0] && stat(name, &st) == 0 && st.st_size == 8192);
}

/* Fill a store with enough records for many pages, then cut it. */
static void make_big_store(const char *dir)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	char sc[32], params[256];
	for (int i = 0; s && i < 400; i++) {
		snprintf(sc, sizeof sc, "n=%d", i);
		snprintf(params, sizeof params, "%0200d", i);
		put(s, rec("big", CT_F32, sc, params, 1, 1), NULL);
	}
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_truncated_file(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	make_big_store(dir);
	store_file(dir, file, sizeof file);
	struct stat st;
	CHECK(stat(file, &st) == 0 && st.st_size > 16 * 4096);
	CHECK(truncate(file, st.st_size / 3) == 0);
	expect_set_aside(dir, "tuning store");
}

static void store_truncated_header(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	make_big_store(dir);
	store_file(dir, file, sizeof file);
	CHECK(truncate(file, 60) == 0);
	expect_set_aside(dir, "tuning store");
}

static void store_foreign_device(void)
{
	char dir[256], file[640], other[640];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = CT_STORE_QUIET;
	cfg.device_id = "intel-other_cpu-8c";
	cfg.identity = "cachet=0.1.0;vendor=GenuineIntel;model=Other";
	ct_store *s = tune_store_open(ctx, &cfg);
	CHECK(s && put(s, rec("f", CT_F32, "c", "theirs", 1, 1), NULL) == CT_OK);
	ct_store_close(s);
	ct_ctx_free(ctx);
	snprintf(other, sizeof other, "%s/intel-other_cpu-8c.sqlite", dir);
	store_file(dir, file, sizeof file);
	CHECK(rename(other, file) == 0);
	expect_set_aside(dir, "another device");
}

static void store_wrong_schema(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	store_file(dir, file, sizeof file);
	CHECK(raw_sql(file, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('hello');"));
	expect_set_aside(dir, "wrong schema");
}

static void store_wrong_format_version(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	make_big_store(dir);
	store_file(dir, file, sizeof file);
	CHECK(raw_sql(file, "UPDATE meta SET value='99' WHERE key='format_version'"));
	expect_set_aside(dir, "format version 99");
}

static void store_empty_file_is_new(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	store_file(dir, file, sizeof file);
	int fd = open(file, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(s && ct_store_writable(s) && strcmp(ct_store_warnings(s), "") == 0);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 1, 1), NULL) == CT_OK);
	CHECK(count_names(dir, ".bad-") == 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_bad_checksum_skipped(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	for (int i = 0; s && i < 4; i++) {
		char sc[16];
		snprintf(sc, sizeof sc, "n=%d", i);
		CHECK(put(s, rec("f", CT_F32, sc, "good", 0.5, 1), NULL) == CT_OK);
	}
	ct_store_close(s);
	store_file(dir, file, sizeof file);
	/* a changed field under an old checksum, and a changed checksum */
	CHECK(raw_sql(file, "UPDATE tune SET params='tampered' WHERE size_class='n=1';"
	                    "UPDATE tune SET checksum='0123456789abcdef' WHERE size_class='n=2';"
	                    "UPDATE tune SET seconds=0.25 WHERE size_class='n=3';"));
	s = open_q(ctx, dir);
	ct_tune_record g;
	int found = 1;
	const ct_tune_record *rs;
	int n = -1;
	CHECK(ct_store_get(s, "f", CT_F32, "n=1", &g, &found) == CT_OK && !found);
	CHECK(strstr(ct_store_warnings(s), "bad checksum") != NULL);
	CHECK(ct_store_get(s, "f", CT_F32, "n=2", &g, &found) == CT_OK && !found);
	CHECK(ct_store_get(s, "f", CT_F32, "n=3", &g, &found) == CT_OK && !found);
	CHECK(ct_store_get(s, "f", CT_F32, "n=0", &g, &found) == CT_OK && found);
	CHECK(ct_store_list(s, "f", NULL, &rs, &n) == CT_OK && n == 1);
	/* a damaged record never wins: a slower new one replaces it */
	int stored = 0;
	CHECK(put(s, rec("f", CT_F32, "n=1", "remeasured", 3.0, 1), &stored) == CT_OK &&
	      stored == 1);
	CHECK(ct_store_get(s, "f", CT_F32, "n=1", &g, &found) == CT_OK && found &&
	      strcmp(g.params, "remeasured") == 0 && g.trusted);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ staleness */

static void store_other_version_stale(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = CT_STORE_QUIET;
	cfg.cachet_version = "0.0.9";
	ct_store *old = tune_store_open(ctx, &cfg);
	CHECK(old && put(old, rec("f", CT_F32, "c", "old", 0.5, 1), NULL) == CT_OK);
	CHECK(old && put(old, rec("f", CT_F32, "d", "old", 0.5, 1), NULL) == CT_OK);
	ct_tune_record g;
	int found = 0;
	CHECK(old && ct_store_get(old, "f", CT_F32, "c", &g, &found) == CT_OK && found &&
	      g.trusted);
	ct_store_close(old);

	ct_store *s = open_q(ctx, dir);
	CHECK(strstr(ct_store_warnings(s), "stale") != NULL);
	CHECK(ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found);
	CHECK(found && g.trusted == 0 && strcmp(g.cachet_version, "0.0.9") == 0);
	/* re-measured: a slower but current record replaces the stale one */
	int stored = 0;
	CHECK(put(s, rec("f", CT_F32, "c", "new", 1.0, 1), &stored) == CT_OK && stored == 1);
	CHECK(ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found && g.trusted &&
	      strcmp(g.params, "new") == 0);
	CHECK(ct_store_get(s, "f", CT_F32, "d", &g, &found) == CT_OK && found && !g.trusted);
	ct_store_close(s);
	/* and the old version in turn does not trust the new record */
	old = tune_store_open(ctx, &cfg);
	CHECK(old && ct_store_get(old, "f", CT_F32, "c", &g, &found) == CT_OK && found &&
	      !g.trusted);
	ct_store_close(old);
	ct_ctx_free(ctx);
}

static void store_identity_change_stale(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = CT_STORE_QUIET;
	cfg.device_id = device_id; /* same device, other microcode/OS/caches */
	cfg.identity = "same id, other identity";
	ct_store *s = tune_store_open(ctx, &cfg);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 0.5, 1), NULL) == CT_OK);
	ct_store_close(s);
	s = open_q(ctx, dir);
	ct_tune_record g;
	int found = 0;
	CHECK(ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found && !g.trusted);
	CHECK(count_names(dir, ".bad-") == 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_param_names_stale(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = CT_STORE_QUIET;
	cfg.param_names = "tiles,order";
	ct_store *s = tune_store_open(ctx, &cfg);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 0.5, 1), NULL) == CT_OK);
	ct_store_close(s);
	cfg.param_names = "tiles,order,unroll";
	s = tune_store_open(ctx, &cfg);
	ct_tune_record g;
	int found = 0;
	CHECK(s && ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found && !g.trusted);
	CHECK(s && put(s, rec("f", CT_F32, "e", "p", 0.5, 1), NULL) == CT_OK);
	ct_store_close(s);
	/* same names again: the new record stays trusted, the old one stale */
	s = tune_store_open(ctx, &cfg);
	CHECK(s && ct_store_get(s, "f", CT_F32, "e", &g, &found) == CT_OK && found && g.trusted);
	CHECK(s && ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found && !g.trusted);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

/* Machine facts (auto's measured last-level size) round-trip, refuse keys outside
 * "fact.", survive a reopen, and go when the device identity changes. */
static void store_machine_facts(void)
{
	char dir[256], v[64];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(tune_store_fact_get(s, "fact.llc_usable", v, sizeof v) == 0 && v[0] == 0);
	CHECK(tune_store_fact_put(s, "fact.llc_usable", "16777216 503316480 1") == CT_OK);
	CHECK(tune_store_fact_put(s, "magic", "overwritten?") == CT_OK); /* not a fact: ignored */
	ct_store_close(s);
	char file[512];
	store_file(dir, file, sizeof file);
	CHECK(raw_text(file, "SELECT value FROM meta WHERE key='magic'", v, sizeof v) &&
	      strcmp(v, "overwritten?") != 0);
	s = open_q(ctx, dir);
	CHECK(tune_store_fact_get(s, "fact.llc_usable", v, sizeof v) == 1 &&
	      strcmp(v, "16777216 503316480 1") == 0);
	CHECK(tune_store_fact_get(s, "magic", v, sizeof v) == 0);
	ct_store_close(s);
	/* read-only: read, never written */
	s = ct_store_open(ctx, dir, CT_STORE_READONLY | CT_STORE_QUIET);
	CHECK(s && tune_store_fact_get(s, "fact.llc_usable", v, sizeof v) == 1);
	CHECK(s && tune_store_fact_put(s, "fact.other", "1") == CT_OK);
	CHECK(s && tune_store_fact_get(s, "fact.other", v, sizeof v) == 0);
	ct_store_close(s);
	/* opened as another identity of the same device: the facts are forgotten */
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = CT_STORE_QUIET;
	cfg.device_id = device_id;
	cfg.identity = "same id, other caches";
	s = tune_store_open(ctx, &cfg);
	CHECK(s && tune_store_fact_get(s, "fact.llc_usable", v, sizeof v) == 0);
	ct_store_close(s);
	CHECK(tune_store_fact_get(NULL, "fact.llc_usable", v, sizeof v) == 0);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ read-only */

static void store_readonly_flag(void)
{
	char dir[256], empty[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 0.5, 1), NULL) == CT_OK);
	ct_store_close(s);
	s = ct_store_open(ctx, dir, CT_STORE_READONLY | CT_STORE_QUIET);
	ct_tune_record g;
	int found = 0;
	CHECK(s && !ct_store_writable(s));
	CHECK(s && ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && found);
	CHECK(s && put(s, rec("f", CT_F32, "x", "p", 0.5, 1), NULL) == CT_ERR_IO);
	CHECK(strstr(ct_ctx_last_message(ctx), "cannot be written") != NULL);
	ct_store_close(s);
	/* read-only and no file: empty, and nothing is created */
	new_dir(empty, sizeof empty, false);
	s = ct_store_open(ctx, empty, CT_STORE_READONLY | CT_STORE_QUIET);
	const ct_tune_record *rs;
	int n = -1;
	CHECK(s && ct_store_list(s, NULL, NULL, &rs, &n) == CT_OK && n == 0);
	struct stat st;
	CHECK(stat(empty, &st) != 0);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

/* A folder that cannot exist (under a regular file): reads find nothing,
 * writes fail with CT_ERR_IO, nothing crashes. Works as root too. */
static void store_unwritable_path(void)
{
	char file[256], dir[300];
	snprintf(file, sizeof file, "%s/plainfile", tmp_root);
	FILE *f = fopen(file, "w");
	if (f)
		fclose(f);
	snprintf(dir, sizeof dir, "%s/sub/cachet", file);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(s && !ct_store_writable(s));
	CHECK(s && strstr(ct_store_warnings(s), "cannot create folder") != NULL);
	ct_tune_record g;
	int found = 1;
	CHECK(s && ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && !found);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 0.5, 1), NULL) == CT_ERR_IO);
	CHECK(ct_ctx_last_status(ctx) == CT_ERR_IO &&
	      strstr(ct_ctx_last_message(ctx), "Not a directory"));
	FILE *null = fopen("/dev/null", "w");
	CHECK(s && null && ct_store_print(s, NULL, CT_FORMAT_TEXT, null) == CT_OK);
	if (null)
		fclose(null);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

/* Checks made by a process that cannot write dir (holding one record). */
static int readonly_reader(const char *dir)
{
	int fail = 0;
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = ct_store_open(ctx, dir, CT_STORE_QUIET);
	ct_tune_record g;
	int found = 0;
	if (!s || ct_store_writable(s))
		fail |= 1;
	if (!s || ct_store_get(s, "f", CT_F32, "c", &g, &found) != CT_OK || !found || !g.trusted)
		fail |= 2;
	if (!s || put(s, rec("f", CT_F32, "x", "p", 0.5, 1), NULL) != CT_ERR_IO)
		fail |= 4;
	if (!s || !strstr(ct_store_warnings(s), "read-only"))
		fail |= 8;
	ct_store_close(s);
	ct_ctx_free(ctx);
	return fail;
}

static void store_readonly_folder(void)
{
	char dir[256], file[640];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(s && put(s, rec("f", CT_F32, "c", "p", 0.5, 1), NULL) == CT_OK);
	ct_store_close(s);
	ct_ctx_free(ctx);
	store_file(dir, file, sizeof file);
	if (geteuid() != 0) {
		CHECK(chmod(dir, 0500) == 0);
		int fail = readonly_reader(dir);
		CHECKF(fail == 0, "failures %#x", fail);
		chmod(dir, 0700);
		return;
	}
	/* root ignores permission bits: check as "nobody" in a child */
	const uid_t nobody = 65534;
	char lock[700];
	snprintf(lock, sizeof lock, "%s.lock", file);
	if (chmod(tmp_root, 0711) != 0 || chown(dir, nobody, nobody) != 0 ||
	    chown(file, nobody, nobody) != 0 || chmod(dir, 0500) != 0) {
		printf("skip: store_readonly_folder: cannot hand the folder to uid %d: %s\n",
		       (int)nobody, strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(nobody) != 0 || setuid(nobody) != 0)
			_exit(77);
		_exit(readonly_reader(dir));
	}
	int status = -1;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		printf("skip: store_readonly_folder: running as root and cannot drop to uid %d\n",
		       (int)nobody);
	else
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "reader status %#x", status);
	chmod(dir, 0700);
	chmod(tmp_root, 0700);
}

/* ------------------------------------------------------------ printing, API edges */

static void store_show_formats(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(put(s, rec("matmul|rm", CT_F32, "M=64:N=64:K=64", "{\"tiles\":[8,8,8]}", 0.001, 1),
	          NULL) == CT_OK);
	CHECK(put(s, rec("axpy", CT_F64, "n=1000000", "vec=8", 0.002, -1), NULL) == CT_OK);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(ct_store_print(s, NULL, CT_FORMAT_TEXT, f) == CT_OK);
	fclose(f);
	/* one heading per family and type, then its size classes with what the selector picks */
	CHECK(buf && strstr(buf, "\nmatmul|rm (f32)\n") && strstr(buf, "SIZE CLASS") &&
	      strstr(buf, "M=64:N=64:K=64  {\"tiles\":[8,8,8]}"));
	CHECK(buf && strstr(buf, "2 records") && strstr(buf, "vec=8"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK(ct_store_print(s, "axpy", CT_FORMAT_JSON, f) == CT_OK);
	fclose(f);
	CHECK(buf && strncmp(buf, "{\"path\": ", 9) == 0 && strstr(buf, "\"family\": \"axpy\""));
	CHECK(buf && strstr(buf, "\"selector\": \"exact\""));
	CHECK(buf && !strstr(buf, "matmul") && strstr(buf, "\"trusted\": true"));
	free(buf);
	buf = NULL;
	/* opened read-only (as tune --show does), a store a tuner can write says so */
	ct_store *ro = ct_store_open(ctx, dir, CT_STORE_READONLY | CT_STORE_QUIET);
	f = open_memstream(&buf, &len);
	CHECK(ro && ct_store_print(ro, NULL, CT_FORMAT_JSON, f) == CT_OK);
	fclose(f);
	CHECKF(buf && strstr(buf, "\"writable\": true"), "%s", buf ? buf : "");
	ct_store_close(ro);
	free(buf);
	ct_store_close(s);
	ct_ctx_free(ctx);
}

static void store_bad_arguments(void)
{
	char dir[256];
	new_dir(dir, sizeof dir, true);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = open_q(ctx, dir);
	CHECK(ct_store_put(s, NULL, NULL) == CT_ERR_USAGE);
	CHECK(put(s, rec(NULL, CT_F32, "c", "p", 1, 1), NULL) == CT_ERR_USAGE);
	CHECK(put(s, rec("f", (ct_dtype)17, "c", "p", 1, 1), NULL) == CT_ERR_USAGE);
	CHECK(put(s, rec("f", CT_F32, "c", "p", NAN, 1), NULL) == CT_ERR_USAGE);
	CHECK(put(s, rec("f", CT_F32, "c", "p", -1, 1), NULL) == CT_ERR_USAGE);
	CHECK(put(s, rec("f", CT_F32, "c", "p", 1, 2), NULL) == CT_ERR_USAGE);
	ct_tune_record g;
	int found;
	CHECK(ct_store_get(s, NULL, CT_F32, "c", &g, &found) == CT_ERR_USAGE);
	CHECK(ct_store_get(s, "f", CT_F32, "c", &g, NULL) == CT_ERR_USAGE);
	CHECK(ct_store_list(s, NULL, NULL, NULL, NULL) == CT_ERR_USAGE);
	CHECK(ct_store_print(s, NULL, CT_FORMAT_TEXT, NULL) == CT_ERR_USAGE);
	ct_store_close(s);
	ct_store_close(NULL);
	CHECK(ct_store_open(NULL, dir, 0) == NULL);
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.device_id = "../escape";
	cfg.identity = "x";
	CHECK(tune_store_open(ctx, &cfg) == NULL && ct_ctx_last_status(ctx) == CT_ERR_USAGE);
	CHECK(ct_store_open(ctx, "", 0) == NULL && ct_ctx_last_status(ctx) == CT_ERR_USAGE);
	CHECK(strcmp(ct_store_path(NULL), "") == 0 && ct_store_writable(NULL) == 0);
	ct_ctx_free(ctx);
}

/* $CACHET_CACHE_DIR, then $XDG_CACHE_HOME/cachet, then ~/.cache/cachet. */
static void store_default_folder(void)
{
	char dir[256], xdg[256], want[640];
	char *saved[3];
	const char *names[3] = {"CACHET_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
	for (int i = 0; i < 3; i++)
		saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
	new_dir(dir, sizeof dir, false);
	setenv("CACHET_CACHE_DIR", dir, 1);
	ct_ctx *ctx = ct_ctx_new();
	ct_store *s = ct_store_open(ctx, NULL, CT_STORE_QUIET);
	store_file(dir, want, sizeof want);
	CHECKF(s && strcmp(ct_store_path(s), want) == 0, "%s", ct_store_path(s));
	CHECK(ct_store_writable(s));
	ct_store_close(s);
	ct_ctx_free(ctx);
	/* the environment is read once per ctx, as by the code cache: a fresh ctx each */
	unsetenv("CACHET_CACHE_DIR");
	new_dir(xdg, sizeof xdg, false);
	setenv("XDG_CACHE_HOME", xdg, 1);
	ctx = ct_ctx_new();
	char *d = tune_cache_dir(ctx);
	snprintf(want, sizeof want, "%s/cachet", xdg);
	CHECK(d && strcmp(d, want) == 0);
	ct_free(ctx, d);
	ct_ctx_free(ctx);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/someone", 1);
	ctx = ct_ctx_new();
	d = tune_cache_dir(ctx);
	CHECK(d && strcmp(d, "/home/someone/.cache/cachet") == 0);
	ct_free(ctx, d);
	ct_ctx_free(ctx);
	/* a relative HOME is not a folder to trust: the password file's home of
	 * the effective user is used, as by the code cache (issue 22, row 9) */
	setenv("HOME", "relative/home", 1);
	ctx = ct_ctx_new();
	d = tune_cache_dir(ctx);
	CHECKF(d && d[0] == '/' && !strstr(d, "relative/home"), "%s", d ? d : "(null)");
	CHECK(d && strcmp(d, ct_cache_path(ctx)) == 0);
	ct_free(ctx, d);
	ct_ctx_free(ctx);
	/* ct_cache_set_dir moves the store with the code cache */
	setenv("CACHET_CACHE_DIR", "/nonexistent/elsewhere", 1);
	new_dir(dir, sizeof dir, false);
	ctx = ct_ctx_new();
	CHECK(ct_cache_set_dir(ctx, dir) == CT_OK);
	s = ct_store_open(ctx, NULL, CT_STORE_QUIET);
	store_file(dir, want, sizeof want);
	CHECKF(s && strcmp(ct_store_path(s), want) == 0, "%s", s ? ct_store_path(s) : "");
	CHECK(s && ct_store_writable(s));
	ct_store_close(s);
	/* and `cache stats` counts it where it is */
	ct_cache_folder rows[8];
	int nrows = ct_cache_folders(ctx, rows, 8);
	bool counted = false;
	for (int i = 0; i < nrows && i < 8; i++)
		if (strcmp(rows[i].name, "*.sqlite") == 0)
			counted = rows[i].entries == 1 && rows[i].bytes > 0;
	CHECK(counted);
	ct_ctx_free(ctx);
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(names[i], saved[i], 1);
		else
			unsetenv(names[i]);
		free(saved[i]);
	}
}

/* The folder policy of the code cache applies to the store (issue 22, row
 * 9): a folder or file that others may write, or that another user owns,
 * is neither read nor written, with a warning. */
typedef struct unsafe_store_row {
	const char *name;
	int dir_mode;      /* the folder's mode */
	int file_mode;     /* the store file's mode, or -1: no file */
	int file_nobody;   /* the store file belongs to uid 65534 (as root only) */
	const char *warning;
} unsafe_store_row;

static const unsafe_store_row unsafe_store_rows[] = {
	{"store: folder 0777", 0777, -1, 0, "writable by group or others (mode 0777"},
	{"store: folder 0770 with a record", 0770, 0644, 0, "writable by group or others (mode 0770"},
	{"store: file 0666", 0700, 0666, 0, "writable by group or others (mode 0666"},
	{"store: file 0620", 0700, 0620, 0, "writable by group or others (mode 0620"},
	{"store: file of another user", 0700, 0644, 1, "owned by another user (uid 65534)"},
};

static void store_unsafe_rows(void)
{
	for (size_t i = 0; i < sizeof unsafe_store_rows / sizeof *unsafe_store_rows; i++) {
		const unsafe_store_row *r = &unsafe_store_rows[i];
		h_begin(r->name);
		if (r->file_nobody && geteuid() != 0) {
			printf("skip: %s (needs root)\n", r->name);
			h_end();
			continue;
		}
		char dir[256], file[640];
		new_dir(dir, sizeof dir, true);
		store_file(dir, file, sizeof file);
		ct_ctx *ctx = ct_ctx_new();
		if (r->file_mode >= 0) {
			ct_store *s = open_q(ctx, dir);
			CHECK(s && put(s, rec("f", CT_F32, "c", "p", 0.5, 1), NULL) == CT_OK);
			ct_store_close(s);
			CHECK(chmod(file, (mode_t)r->file_mode) == 0);
			if (r->file_nobody)
				CHECK(chown(file, 65534, 65534) == 0);
		}
		CHECK(chmod(dir, (mode_t)r->dir_mode) == 0);
		ct_store *s = open_q(ctx, dir);
		CHECK(s && !ct_store_writable(s));
		CHECKF(s && strstr(ct_store_warnings(s), r->warning), "%s", s ? ct_store_warnings(s) : "");
		/* one warning, not a second one about read-only */
		CHECKF(s && !strstr(ct_store_warnings(s), "read-only"), "%s", s ? ct_store_warnings(s) : "");
		ct_tune_record g;
		int found = 1;
		CHECK(s && ct_store_get(s, "f", CT_F32, "c", &g, &found) == CT_OK && !found);
		CHECK(s && put(s, rec("f", CT_F32, "d", "p", 0.5, 1), NULL) == CT_ERR_IO);
		ct_store_close(s);
		ct_ctx_free(ctx);
		struct stat sb;
		if (r->file_mode < 0)
			CHECKF(stat(file, &sb) != 0, "a store was written into an unsafe folder");
		chmod(dir, 0700);
		h_end();
	}
}

/* The checksum covers every stored field: one row per field changed. */
static void store_checksum_rows(void)
{
	ct_tune_record base = rec("fam", CT_F32, "n=1", "p", 0.5, 1);
	base.timestamp = 1234;
	uint64_t h0 = tune_record_checksum(&base, "0.1.0");
	h_begin("store_checksum[stable]");
	ct_tune_record same = base;
	CHECK(tune_record_checksum(&same, "0.1.0") == h0);
	h_end();
	for (int field = 0; field < 10; field++) {
		static const char *const names[] = {
		    "family", "dtype",    "size_class",    "params",    "seconds",
		    "gflops", "verified", "tuner_version", "timestamp", "cachet_version"};
		char name[64];
		snprintf(name, sizeof name, "store_checksum[%s]", names[field]);
		h_begin(name);
		ct_tune_record r = base;
		const char *version = "0.1.0";
		switch (field) {
		case 0:
			r.family = "fan";
			break;
		case 1:
			r.dtype = CT_F64;
			break;
		case 2:
			r.size_class = "n=2";
			break;
		case 3:
			r.params = "q";
			break;
		case 4:
			r.seconds = nextafter(0.5, 1.0);
			break;
		case 5:
			r.gflops = 2.5;
			break;
		case 6:
			r.verified = -1;
			break;
		case 7:
			r.tuner_version = "2";
			break;
		case 8:
			r.timestamp = 1235;
			break;
		default:
			version = "0.1.1";
			break;
		}
		CHECK(tune_record_checksum(&r, version) != h0);
		h_end();
	}
	/* field boundaries are unambiguous */
	h_begin("store_checksum[boundaries]");
	ct_tune_record a = base, b = base;
	a.family = "ab";
	a.size_class = "c";
	b.family = "a";
	b.size_class = "bc";
	CHECK(tune_record_checksum(&a, "v") != tune_record_checksum(&b, "v"));
	h_end();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0700);
	remove(path);
	return 0;
}

int main(void)
{
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	ct_ctx *ctx = ct_ctx_new();
	snprintf(device_id, sizeof device_id, "%s", ct_device_id(ctx));
	ct_ctx_free(ctx);
	RUN(store_creates_missing_folder);
	RUN(store_roundtrip);
	store_keeps_better_rows();
	RUN(store_meta_and_wal);
	RUN(store_concurrent_writers);
	RUN(store_garbage_file);
	RUN(store_truncated_file);
	RUN(store_truncated_header);
	RUN(store_foreign_device);
	RUN(store_wrong_schema);
	RUN(store_wrong_format_version);
	RUN(store_empty_file_is_new);
	RUN(store_bad_checksum_skipped);
	RUN(store_other_version_stale);
	RUN(store_identity_change_stale);
	RUN(store_param_names_stale);
	RUN(store_machine_facts);
	RUN(store_readonly_flag);
	RUN(store_unwritable_path);
	RUN(store_readonly_folder);
	RUN(store_show_formats);
	RUN(store_bad_arguments);
	RUN(store_default_folder);
	store_unsafe_rows();
	store_checksum_rows();
	nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return h_report();
}
