/* store.c: the per-device tuning store: one SQLite file per device, safe for concurrent tuners. */
#include "core/json.h"
#include "jit/jit.h"
#include "target/target.h"
#include "tune/tune.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <xxhash.h>

/* Long enough for a tuner that holds the write lock for one record; short
 * enough that a wedged process shows up as an error, not a hang. */
#define BUSY_TIMEOUT_MS 20000

/* clang-format off */
/* The columns of the tune table, in order: the schema check compares them. */
#define TUNE_COLUMNS                                                                   \
	"family,dtype,size_class,params,seconds,gflops,verified,tuner_version,"       \
	"cachet_version,timestamp,stale,checksum"

/* Every point a tuner measured (not only winners): a rerun of the same
 * sizes resumes from them. Added after format 1 without a format change: a
 * store without it gets it on a writable open, and readers of format 1
 * ignore it. */
#define POINTS_SQL                                                                     \
	"CREATE TABLE IF NOT EXISTS points("                                           \
	" family TEXT NOT NULL, dtype TEXT NOT NULL, size_class TEXT NOT NULL,"        \
	" params TEXT NOT NULL, seconds REAL NOT NULL, gflops REAL NOT NULL,"          \
	" verified INTEGER NOT NULL, abandoned INTEGER NOT NULL,"                      \
	" tuner_version TEXT NOT NULL, cachet_version TEXT NOT NULL,"                  \
	" timestamp INTEGER NOT NULL,"                                                 \
	" PRIMARY KEY(family, dtype, size_class, params));"

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS tune("
	" family TEXT NOT NULL, dtype TEXT NOT NULL, size_class TEXT NOT NULL,"
	" params TEXT NOT NULL, seconds REAL NOT NULL, gflops REAL NOT NULL,"
	" verified INTEGER NOT NULL, tuner_version TEXT NOT NULL,"
	" cachet_version TEXT NOT NULL, timestamp INTEGER NOT NULL,"
	" stale INTEGER NOT NULL DEFAULT 0, checksum TEXT NOT NULL,"
	" PRIMARY KEY(family, dtype, size_class));"
	POINTS_SQL;

/* verified 1 beats -1 (not verified) beats 0 (mismatch); then the shorter
 * time, an unmeasured time (0) being the worst. A stale, other-version or
 * damaged (?12) old record is always replaced. */
#define RANK(t) "(CASE " t ".verified WHEN 1 THEN 2 WHEN -1 THEN 1 ELSE 0 END)"
#define TIME(t) "(CASE WHEN " t ".seconds > 0 THEN " t ".seconds ELSE 1e300 END)"
static const char upsert_sql[] =
	"INSERT INTO tune(" TUNE_COLUMNS ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?13,?11)"
	" ON CONFLICT(family, dtype, size_class) DO UPDATE SET"
	" params=excluded.params, seconds=excluded.seconds, gflops=excluded.gflops,"
	" verified=excluded.verified, tuner_version=excluded.tuner_version,"
	" cachet_version=excluded.cachet_version, timestamp=excluded.timestamp,"
	" stale=excluded.stale, checksum=excluded.checksum"
	" WHERE ?12 OR tune.stale != 0 OR tune.cachet_version != excluded.cachet_version"
	" OR " RANK("excluded") " > " RANK("tune")
	" OR (" RANK("excluded") " = " RANK("tune") " AND " TIME("excluded") " < " TIME("tune") ")";

#define SELECT_RECORD "SELECT " TUNE_COLUMNS " FROM tune"

/* clang-format on */

static const char *const dtype_names[] = {"f32", "f64", "i32", "i64"};
#define NDTYPES ((int)(sizeof dtype_names / sizeof dtype_names[0]))

struct ct_store {
	ct_ctx *ctx;
	sqlite3 *db; /* NULL: nothing readable (reads find nothing) */
	char *dir, *path;
	char *device_id, *identity, *version, *param_names;
	unsigned flags;
	bool writable;     /* puts can succeed */
	bool dir_writable; /* the folder accepts new files (-shm, set-aside) */
	bool all_stale;    /* read-only store of another identity: trust nothing */
	bool untrusted;    /* refused by the folder policy (warned once) */
	char why_ro[600];  /* why puts fail */
	ct_buf warnings;
	ct_arena arena;       /* strings of the last get/list */
	ct_tune_record *recs; /* records of the last list */
	int nrecs, cap_recs;
};

/* ------------------------------------------------------------ helpers */

static void store_warn(ct_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void store_warn(ct_store *s, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ct_buf_puts(&s->warnings, msg);
	ct_buf_putc(&s->warnings, '\n');
	/* a cache problem must be visible but never stop the work */
	if (!(s->flags & CT_STORE_QUIET))
		fprintf(stderr, "cachet: warning: %s\n", msg);
}

static void set_readonly(ct_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_readonly(ct_store *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->why_ro, sizeof s->why_ro, fmt, ap);
	va_end(ap);
	s->writable = false;
}

/* a + b + c in ctx memory. */
static char *join3(ct_ctx *ctx, const char *a, const char *b, const char *c)
{
	size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
	char *r = ct_alloc(ctx, na + nb + nc + 1);
	if (r) {
		memcpy(r, a, na);
		memcpy(r + na, b, nb);
		memcpy(r + na + nb, c, nc + 1);
	}
	return r;
}

char *tune_cache_dir(ct_ctx *ctx)
{
	/* the code cache's folder, found the one way (ct_cache_set_dir,
	 * CACHET_CACHE_DIR, an absolute XDG_CACHE_HOME or HOME, else the
	 * effective user's home from the password file) */
	const char *root = ct_cache_path(ctx);
	if (!*root) {
		ct_error(ctx, CT_ERR_IO, "no cache folder: set CACHET_CACHE_DIR or HOME");
		return NULL;
	}
	return ct_strdup(ctx, root);
}

/* The folder policy of the code cache (jit_path_safe) for the store's
 * folder and file: false with a warning when either may have been written
 * by someone else; then nothing is read from it and nothing written. */
static bool store_trusted(ct_store *s)
{
	char why[1100];
	struct stat sb;
	if (stat(s->dir, &sb) == 0 && !jit_stat_safe(&sb, true, s->dir, why, sizeof why)) {
		store_warn(s, "tuning store folder not used: %s; tuning results are neither read nor kept", why);
		set_readonly(s, "%s", why);
		s->untrusted = true;
		return false;
	}
	if (lstat(s->path, &sb) == 0 && !jit_stat_safe(&sb, false, s->path, why, sizeof why)) {
		store_warn(s, "tuning store not used: %s; tuning results are neither read nor kept", why);
		set_readonly(s, "%s", why);
		s->untrusted = true;
		return false;
	}
	return true;
}

/* mkdir -p with mode 0700 for every folder created; 0 or an errno. */
static int mkdir_p(ct_ctx *ctx, const char *dir)
{
	char *p = ct_strdup(ctx, dir);
	if (!p)
		return ENOMEM;
	int err = 0;
	for (char *q = p + 1;; q++) {
		if (*q != '/' && *q != 0)
			continue;
		char c = *q;
		*q = 0;
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			err = errno;
			break;
		}
		*q = c;
		if (!c)
			break;
	}
	struct stat st;
	if (!err && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		err = errno ? errno : ENOTDIR;
	if (!err && !S_ISDIR(st.st_mode))
		err = ENOTDIR;
	ct_free(ctx, p);
	return err;
}

static bool valid_device_id(const char *id)
{
	if (!*id)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-'))
			return false;
	return true;
}

/* ------------------------------------------------------------ checksums */

uint64_t tune_record_checksum(const ct_tune_record *r, const char *cachet_version)
{
	/* canonical bytes: length-prefixed strings, doubles by bit pattern, so
	 * that equal records hash equal on every machine and nothing is
	 * ambiguous */
	ct_buf b;
	ct_buf_init(&b);
	const char *strs[] = {r->family, r->size_class, r->params,
	                      r->tuner_version ? r->tuner_version : "", cachet_version};
	ct_buf_puts(&b, "cachet-tune-record-1");
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		ct_buf_printf(&b, "|%zu:%s", strlen(strs[i]), strs[i]);
	uint64_t sec, gf;
	memcpy(&sec, &r->seconds, sizeof sec);
	memcpy(&gf, &r->gflops, sizeof gf);
	ct_buf_printf(&b, "|%d|%016llx|%016llx|%d|%lld", (int)r->dtype, (unsigned long long)sec,
	              (unsigned long long)gf, r->verified, (long long)r->timestamp);
	/* on allocation failure hash a constant: the record then fails its
	 * check and is re-measured, which is safe */
	uint64_t h = b.failed || !b.s ? 0 : XXH3_64bits(b.s, b.len);
	ct_buf_free(&b);
	return h;
}

/* ------------------------------------------------------------ SQL helpers */

/* Run one statement without results; the SQLite code. */
static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* The text of the first column of the first row of sql (one text parameter
 * ?1 = arg if not NULL) into out; SQLITE_ROW, SQLITE_DONE (no row) or an error. */
static int query_text(sqlite3 *db, const char *sql, const char *arg, char *out, size_t n)
{
	sqlite3_stmt *st = NULL;
	out[0] = 0;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		snprintf(out, n, "%s", t ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	return rc;
}

static bool is_damage(int rc)
{
	int prim = rc & 0xff;
	return prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB || rc == SQLITE_IOERR_SHORT_READ;
}

/* ------------------------------------------------------------ opening */

typedef enum { V_OK, V_FRESH, V_BAD, V_FAIL } verdict;

/* Is the file a SQLite database at all? (cheap, before SQLite sees it) */
static verdict check_header(const char *path, char *why, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return V_FRESH;
		snprintf(why, n, "cannot read it: %s", strerror(errno));
		return V_FAIL;
	}
	char head[16];
	ssize_t got = read(fd, head, sizeof head);
	close(fd);
	if (got == 0)
		return V_FRESH; /* an empty file is an empty database to SQLite */
	if (got != (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16) != 0) {
		snprintf(why, n, "not a SQLite database");
		return V_BAD;
	}
	return V_OK;
}

/* Escape path for a file: URI (SQLite reads %XX). */
static char *uri_for(ct_ctx *ctx, const char *path, const char *query)
{
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_puts(&b, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
			ct_buf_putc(&b, (char)*p);
		else
			ct_buf_printf(&b, "%%%02X", *p);
	}
	ct_buf_puts(&b, query);
	char *s = ct_buf_take(&b);
	char *r = s ? ct_strdup(ctx, s) : NULL;
	free(s);
	return r;
}

static void db_close(ct_store *s)
{
	if (s->db)
		sqlite3_close_v2(s->db);
	s->db = NULL;
}

/* Open the existing or new file; SQLite code. */
static int db_open(ct_store *s)
{
	int rc;
	if (s->writable) {
		rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
		                     NULL);
	} else if (s->dir_writable) {
		rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READONLY, NULL);
	} else {
		/* a WAL database needs a -shm file, which a read-only folder
		 * cannot hold; nobody can write there either, so read it as an
		 * immutable file */
		char *uri = uri_for(s->ctx, s->path, "?immutable=1");
		if (!uri)
			return SQLITE_NOMEM;
		rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
		ct_free(s->ctx, uri);
	}
	if (rc != SQLITE_OK) {
		db_close(s);
		return rc;
	}
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(s->db, 1);
	if (s->writable) {
		/* WAL: readers never block writers; NORMAL: a commit is durable
		 * at the next checkpoint, enough for a cache */
		char mode[32];
		rc = query_text(s->db, "PRAGMA journal_mode=WAL", NULL, mode, sizeof mode);
		if (rc != SQLITE_ROW)
			return rc;
		rc = exec_sql(s->db, "PRAGMA synchronous=NORMAL");
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* Check the open database: damaged, foreign, fresh or ours. */
static verdict validate(ct_store *s, char *why, size_t n)
{
	char buf[1024];
	int rc = query_text(s->db, "PRAGMA quick_check", NULL, buf, sizeof buf);
	if (rc != SQLITE_ROW) {
		snprintf(why, n, "%s", sqlite3_errstr(rc));
		return is_damage(rc) ? V_BAD : V_FAIL;
	}
	if (strcmp(buf, "ok") != 0) {
		snprintf(why, n, "damaged (%s)", buf);
		return V_BAD;
	}
	rc = query_text(s->db, "SELECT count(*) FROM sqlite_master", NULL, buf, sizeof buf);
	if (rc != SQLITE_ROW) {
		snprintf(why, n, "%s", sqlite3_errstr(rc));
		return is_damage(rc) ? V_BAD : V_FAIL;
	}
	if (strcmp(buf, "0") == 0)
		return V_FRESH;
	/* the columns of tune, as a comma list */
	sqlite3_stmt *st = NULL;
	ct_buf cols;
	ct_buf_init(&cols);
	rc = sqlite3_prepare_v2(s->db, "SELECT name FROM pragma_table_info('tune') ORDER BY cid",
	                        -1, &st, NULL);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		ct_buf_printf(&cols, "%s%s", cols.len ? "," : "", t ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	bool cols_ok = cols.s && strcmp(cols.s, TUNE_COLUMNS) == 0;
	ct_buf_free(&cols);
	char magic[64], format[32], dev[128];
	rc = query_text(s->db, "SELECT value FROM meta WHERE key='magic'", NULL, magic,
	                sizeof magic);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE && !is_damage(rc) &&
	    (rc & 0xff) != SQLITE_ERROR) {
		snprintf(why, n, "%s", sqlite3_errstr(rc));
		return V_FAIL;
	}
	if (!cols_ok || rc != SQLITE_ROW || strcmp(magic, TUNE_STORE_MAGIC) != 0) {
		snprintf(why, n, "not a cachet tuning store (wrong schema)");
		return V_BAD;
	}
	query_text(s->db, "SELECT value FROM meta WHERE key='format_version'", NULL, format,
	           sizeof format);
	if (atoi(format) != TUNE_STORE_FORMAT) {
		snprintf(why, n, "format version %s, this cachet reads %d", format,
		         TUNE_STORE_FORMAT);
		return V_BAD;
	}
	query_text(s->db, "SELECT value FROM meta WHERE key='device_id'", NULL, dev, sizeof dev);
	if (strcmp(dev, s->device_id) != 0) {
		snprintf(why, n, "written for another device (%s)", dev);
		return V_BAD;
	}
	return V_OK;
}

static int set_meta(sqlite3 *db, const char *key, const char *value)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db,
	                            "INSERT INTO meta(key, value) VALUES(?1, ?2)"
	                            " ON CONFLICT(key) DO UPDATE SET value=excluded.value",
	                            -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Tables and meta rows of a new store, in one transaction. */
static int create_schema(ct_store *s)
{
	int rc = exec_sql(s->db, "BEGIN IMMEDIATE");
	if (rc != SQLITE_OK)
		return rc;
	rc = exec_sql(s->db, schema_sql);
	char fmt[16], now[32];
	snprintf(fmt, sizeof fmt, "%d", TUNE_STORE_FORMAT);
	snprintf(now, sizeof now, "%lld", (long long)time(NULL));
	const char *kv[][2] = {
	    {"magic", TUNE_STORE_MAGIC},     {"format_version", fmt},
	    {"device_id", s->device_id},     {"device_identity", s->identity},
	    {"cachet_version", s->version},  {"param_names", s->param_names ? s->param_names : ""},
	    {"record_fields", TUNE_COLUMNS}, {"created", now},
	};
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof kv / sizeof kv[0]; i++)
		rc = set_meta(s->db, kv[i][0], kv[i][1]);
	if (rc == SQLITE_OK)
		rc = exec_sql(s->db, "COMMIT");
	if (rc != SQLITE_OK)
		exec_sql(s->db, "ROLLBACK");
	return rc;
}

/* Mark records stale that this process cannot trust: all of them when the
 * device identity or the parameter names changed, else those written by
 * another cachet version. Writes only when something changes. */
static void revalidate(ct_store *s)
{
	char ident[1024], names[1024], n_other[32];
	query_text(s->db, "SELECT value FROM meta WHERE key='device_identity'", NULL, ident,
	           sizeof ident);
	query_text(s->db, "SELECT value FROM meta WHERE key='param_names'", NULL, names,
	           sizeof names);
	bool all = strcmp(ident, s->identity) != 0 ||
	           (s->param_names && strcmp(names, s->param_names) != 0);
	int rc =
	    query_text(s->db, "SELECT count(*) FROM tune WHERE stale = 0 AND cachet_version != ?1",
	               s->version, n_other, sizeof n_other);
	bool others = rc == SQLITE_ROW && atoi(n_other) > 0;
	if (!all && !others)
		return;
	if (!s->writable) {
		/* cannot persist the marks; trust is also decided on read */
		s->all_stale = all;
		return;
	}
	rc = exec_sql(s->db, "BEGIN IMMEDIATE");
	if (rc != SQLITE_OK) {
		s->all_stale = all;
		return;
	}
	sqlite3_stmt *st = NULL;
	rc = sqlite3_prepare_v2(
	    s->db,
	    all ? "UPDATE tune SET stale = 1 WHERE stale = 0"
	        : "UPDATE tune SET stale = 1 WHERE stale = 0 AND cachet_version != ?1",
	    -1, &st, NULL);
	int changed = 0;
	if (rc == SQLITE_OK) {
		if (!all)
			sqlite3_bind_text(st, 1, s->version, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
		changed = sqlite3_changes(s->db);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK && all) /* facts measured on another device or configuration */
		rc = exec_sql(s->db, "DELETE FROM meta WHERE key LIKE 'fact.%'");
	if (rc == SQLITE_OK)
		rc = set_meta(s->db, "device_identity", s->identity);
	if (rc == SQLITE_OK)
		rc = set_meta(s->db, "cachet_version", s->version);
	if (rc == SQLITE_OK && s->param_names)
		rc = set_meta(s->db, "param_names", s->param_names);
	if (rc == SQLITE_OK)
		rc = exec_sql(s->db, "COMMIT");
	if (rc != SQLITE_OK) {
		exec_sql(s->db, "ROLLBACK");
		s->all_stale = all;
		return;
	}
	if (changed > 0)
		store_warn(s,
		           "tuning store %s: %d record%s marked stale (%s); they are re-measured "
		           "before use",
		           s->path, changed, changed == 1 ? "" : "s",
		           all ? "device identity or parameter names changed"
		               : "written by another cachet version");
}

/* Rename the file (and its -wal/-shm) to <file>.bad-<timestamp>. */
static bool set_aside(ct_store *s, const char *why)
{
	if (!s->writable) {
		store_warn(s, "tuning store %s: %s; it is ignored (read-only)", s->path, why);
		return false;
	}
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	char bad[4096];
	struct stat st;
	snprintf(bad, sizeof bad, "%s.bad-%s", s->path, stamp);
	for (int i = 2; lstat(bad, &st) == 0 && i < 1000; i++)
		snprintf(bad, sizeof bad, "%s.bad-%s-%d", s->path, stamp, i);
	if (rename(s->path, bad) != 0 && errno != ENOENT) {
		store_warn(s, "tuning store %s: %s; cannot set it aside: %s", s->path, why,
		           strerror(errno));
		return false;
	}
	/* a stale -wal would otherwise be replayed into the fresh database */
	static const char *const sides[] = {"-wal", "-shm", "-journal"};
	for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
		char from[4200], to[4200];
		snprintf(from, sizeof from, "%s%s", s->path, sides[i]);
		snprintf(to, sizeof to, "%s%s", bad, sides[i]);
		if (rename(from, to) != 0 && errno != ENOENT)
			unlink(from);
	}
	store_warn(s, "tuning store %s: %s; set aside as %s, starting a fresh store", s->path, why,
	           bad);
	return true;
}

/* Open, check, repair: after this s->db is a usable store or NULL. */
static void store_setup(ct_store *s)
{
	bool ro = s->flags & CT_STORE_READONLY;
	if (!ro) {
		int err = mkdir_p(s->ctx, s->dir);
		if (err)
			set_readonly(s, "cannot create folder %s: %s", s->dir, strerror(err));
	}
	if (!store_trusted(s))
		return;
	s->dir_writable = access(s->dir, W_OK | X_OK) == 0;
	if (!ro && !s->why_ro[0] && !s->dir_writable)
		set_readonly(s, "folder %s is not writable: %s", s->dir, strerror(errno));
	if (!ro && !s->why_ro[0])
		s->writable = true;
	if (ro)
		set_readonly(s, "opened read-only");

	/* one process at a time checks and repairs the file, so that nobody
	 * sets aside a store another has just created */
	int lockfd = -1;
	if (s->writable) {
		char *lock = join3(s->ctx, s->path, ".lock", "");
		if (lock)
			lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ct_free(s->ctx, lock);
		while (lockfd >= 0 && flock(lockfd, LOCK_EX) != 0 && errno == EINTR)
			;
	}
	char why[1200];
	for (int attempt = 0; attempt < 3; attempt++) {
		why[0] = 0;
		verdict v = check_header(s->path, why, sizeof why);
		if (v == V_FAIL) {
			store_warn(s, "tuning store %s: %s", s->path, why);
			break;
		}
		if (v == V_BAD) {
			if (set_aside(s, why))
				continue;
			break;
		}
		if (v == V_FRESH && !s->writable)
			break; /* nothing to read, nothing may be created */
		int rc = db_open(s);
		if (rc == SQLITE_OK)
			v = validate(s, why, sizeof why);
		else {
			snprintf(why, sizeof why, "%s", sqlite3_errstr(rc));
			v = is_damage(rc) ? V_BAD : V_FAIL;
		}
		if (v == V_FRESH && s->writable) {
			rc = create_schema(s);
			if (rc == SQLITE_OK)
				break;
			snprintf(why, sizeof why, "cannot create the tables: %s",
			         sqlite3_errstr(rc));
			v = is_damage(rc) ? V_BAD : V_FAIL;
		}
		if (v == V_OK) {
			if (s->writable)
				exec_sql(s->db, POINTS_SQL); /* a store from before the points table */
			revalidate(s);
			break;
		}
		db_close(s);
		if (v == V_FRESH)
			break;
		if (v == V_FAIL) {
			store_warn(s, "tuning store %s: %s; continuing without it", s->path, why);
			break;
		}
		if (!set_aside(s, why))
			break;
	}
	if (!s->db && s->writable)
		set_readonly(s, "the store could not be opened");
	if (lockfd >= 0)
		close(lockfd); /* releases the lock */
}

ct_store *tune_store_open(ct_ctx *ctx, const tune_store_cfg *cfg)
{
	if (!ctx)
		return NULL;
	const ct_probe_info *t = NULL;
	if (!cfg->device_id || !cfg->identity) {
		t = target_get(ctx);
		if (!t)
			return NULL;
	}
	if (cfg->dir && !*cfg->dir) {
		ct_error(ctx, CT_ERR_USAGE, "empty folder name for the tuning store");
		return NULL;
	}
	const char *id = cfg->device_id ? cfg->device_id : t->device_id;
	if (!valid_device_id(id)) {
		ct_error(ctx, CT_ERR_USAGE, "bad device id '%s' (want [a-z0-9_-]+)", id);
		return NULL;
	}
	ct_store *s = ct_alloc(ctx, sizeof *s);
	if (!s)
		return NULL;
	s->ctx = ctx;
	s->flags = cfg->flags;
	ct_buf_init(&s->warnings);
	ct_arena_init(&s->arena, ctx);
	s->device_id = ct_strdup(ctx, id);
	s->identity = ct_strdup(ctx, cfg->identity ? cfg->identity : t->identity);
	s->version = ct_strdup(ctx, cfg->cachet_version ? cfg->cachet_version : CACHET_VERSION);
	s->param_names = cfg->param_names ? ct_strdup(ctx, cfg->param_names) : NULL;
	s->dir = cfg->dir ? ct_strdup(ctx, cfg->dir) : tune_cache_dir(ctx);
	if (!s->device_id || !s->identity || !s->version || (cfg->param_names && !s->param_names)) {
		ct_store_close(s);
		return NULL;
	}
	if (!s->dir) {
		if (ct_ctx_last_status(ctx) == CT_ERR_NOMEM) {
			ct_store_close(s);
			return NULL;
		}
		store_warn(s, "%s; tuning results are not kept", ct_ctx_last_message(ctx));
		set_readonly(s, "%s", ct_ctx_last_message(ctx));
		s->dir = ct_strdup(ctx, "");
		s->path = ct_strdup(ctx, "");
		if (!s->dir || !s->path) {
			ct_store_close(s);
			return NULL;
		}
		return s;
	}
	s->path = join3(ctx, s->dir, "/", id);
	char *full = s->path ? join3(ctx, s->path, ".sqlite", "") : NULL;
	ct_free(ctx, s->path);
	s->path = full;
	if (!full) {
		ct_store_close(s);
		return NULL;
	}
	store_setup(s);
	if (!s->writable && !(s->flags & CT_STORE_READONLY) && !s->untrusted)
		store_warn(s, "tuning store %s is read-only (%s); tuning results are not kept",
		           s->path, s->why_ro);
	return s;
}

ct_store *ct_store_open(ct_ctx *ctx, const char *dir, unsigned flags)
{
	tune_store_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.dir = dir;
	cfg.flags = flags;
	return tune_store_open(ctx, &cfg);
}

void ct_store_close(ct_store *s)
{
	if (!s)
		return;
	ct_ctx *ctx = s->ctx;
	db_close(s);
	ct_arena_free(&s->arena);
	ct_buf_free(&s->warnings);
	ct_free(ctx, s->recs);
	ct_free(ctx, s->dir);
	ct_free(ctx, s->path);
	ct_free(ctx, s->device_id);
	ct_free(ctx, s->identity);
	ct_free(ctx, s->version);
	ct_free(ctx, s->param_names);
	ct_free(ctx, s);
}

const char *ct_store_path(const ct_store *s)
{
	return s && s->path ? s->path : "";
}
int ct_store_writable(const ct_store *s)
{
	return s && s->writable && s->db ? 1 : 0;
}
const char *ct_store_warnings(const ct_store *s)
{
	return s && s->warnings.s && !s->warnings.failed ? s->warnings.s : "";
}

/* ------------------------------------------------------------ records */

static ct_status db_error(ct_store *s, const char *what)
{
	return ct_error(s->ctx, CT_ERR_IO, "tuning store %s: %s: %s", s->path, what,
	                sqlite3_errmsg(s->db));
}

static const char *text_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : NULL;
}

/* Decode the current row into *r (strings in the arena). 1 ok, 0 damaged
 * (warned, skip it), -1 out of memory. */
static int row_record(ct_store *s, ct_arena *a, sqlite3_stmt *st, ct_tune_record *r)
{
	const char *fam = text_col(st, 0), *dt = text_col(st, 1), *sc = text_col(st, 2);
	const char *params = text_col(st, 3), *tv = text_col(st, 7), *cv = text_col(st, 8);
	const char *sum = text_col(st, 11);
	int dtype = -1;
	for (int i = 0; dt && i < NDTYPES; i++)
		if (strcmp(dt, dtype_names[i]) == 0)
			dtype = i;
	memset(r, 0, sizeof *r);
	if (fam && dtype >= 0 && sc && params && tv && cv && sum) {
		r->family = ct_arena_strdup(a, fam);
		r->dtype = (ct_dtype)dtype;
		r->size_class = ct_arena_strdup(a, sc);
		r->params = ct_arena_strdup(a, params);
		r->seconds = sqlite3_column_double(st, 4);
		r->gflops = sqlite3_column_double(st, 5);
		r->verified = sqlite3_column_int(st, 6);
		r->tuner_version = ct_arena_strdup(a, tv);
		r->cachet_version = ct_arena_strdup(a, cv);
		r->timestamp = sqlite3_column_int64(st, 9);
		if (a->failed)
			return -1;
		char want[24];
		snprintf(want, sizeof want, "%016llx",
		         (unsigned long long)tune_record_checksum(r, cv));
		if (strcmp(want, sum) == 0) {
			r->trusted = sqlite3_column_int(st, 10) == 0 && !s->all_stale &&
			             strcmp(cv, s->version) == 0;
			return 1;
		}
	}
	store_warn(s, "tuning store %s: damaged record (%s, %s, %s) skipped (bad checksum)",
	           s->path, fam ? fam : "?", dt ? dt : "?", sc ? sc : "?");
	return 0;
}

static bool record_ok(ct_store *s, const ct_tune_record *r)
{
	if (!r->family || !r->size_class || !r->params) {
		ct_error(s->ctx, CT_ERR_USAGE, "tuning record needs family, size class and params");
		return false;
	}
	if ((int)r->dtype < 0 || (int)r->dtype >= NDTYPES) {
		ct_error(s->ctx, CT_ERR_USAGE, "tuning record: unknown element type %d",
		         (int)r->dtype);
		return false;
	}
	if (!isfinite(r->seconds) || r->seconds < 0 || !isfinite(r->gflops) || r->gflops < 0 ||
	    r->verified < -1 || r->verified > 1) {
		ct_error(s->ctx, CT_ERR_USAGE,
		         "tuning record: bad time, GFLOP/s or verified value");
		return false;
	}
	return true;
}

ct_status ct_store_put(ct_store *s, const ct_tune_record *r, int *stored)
{
	return tune_store_put_stale(s, r, 0, stored);
}

ct_status tune_store_put_stale(ct_store *s, const ct_tune_record *r, int stale, int *stored)
{
	if (stored)
		*stored = 0;
	if (!s || !r)
		return s ? ct_error(s->ctx, CT_ERR_USAGE, "ct_store_put: no record") : CT_ERR_USAGE;
	if (!record_ok(s, r))
		return CT_ERR_USAGE;
	if (!s->writable || !s->db)
		return ct_error(s->ctx, CT_ERR_IO, "tuning store %s cannot be written: %s",
		                s->path[0] ? s->path : "(none)", s->why_ro);
	ct_tune_record w = *r;
	if (!w.tuner_version)
		w.tuner_version = "";
	if (!w.timestamp)
		w.timestamp = (int64_t)time(NULL);
	char sum[24];
	snprintf(sum, sizeof sum, "%016llx",
	         (unsigned long long)tune_record_checksum(&w, s->version));

	/* IMMEDIATE: take the write lock now, so that the read below and the
	 * write cannot deadlock with another writer (SQLITE_BUSY upgrade) */
	int rc = exec_sql(s->db, "BEGIN IMMEDIATE");
	if (rc != SQLITE_OK)
		return db_error(s, "cannot start a write");
	ct_status status = CT_OK;
	/* a damaged old record must not win the comparison below */
	int force = 0;
	sqlite3_stmt *st = NULL;
	rc = sqlite3_prepare_v2(
	    s->db, SELECT_RECORD " WHERE family=?1 AND dtype=?2 AND size_class=?3", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, w.family, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, dtype_names[w.dtype], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, w.size_class, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			ct_tune_record old;
			/* own arena: the caller's last get/list results stay valid */
			ct_arena tmp;
			ct_arena_init(&tmp, s->ctx);
			int k = row_record(s, &tmp, st, &old);
			ct_arena_free(&tmp);
			if (k < 0)
				status = CT_ERR_NOMEM;
			force = k == 0;
			rc = SQLITE_DONE;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && status == CT_OK)
		status = db_error(s, "cannot read the old record");
	int changes = 0;
	if (status == CT_OK) {
		rc = sqlite3_prepare_v2(s->db, upsert_sql, -1, &st, NULL);
		if (rc == SQLITE_OK) {
			sqlite3_bind_text(st, 1, w.family, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, dtype_names[w.dtype], -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, w.size_class, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 4, w.params, -1, SQLITE_STATIC);
			sqlite3_bind_double(st, 5, w.seconds);
			sqlite3_bind_double(st, 6, w.gflops);
			sqlite3_bind_int(st, 7, w.verified);
			sqlite3_bind_text(st, 8, w.tuner_version, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 9, s->version, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 10, w.timestamp);
			sqlite3_bind_text(st, 11, sum, -1, SQLITE_STATIC);
			sqlite3_bind_int(st, 12, force);
			sqlite3_bind_int(st, 13, stale ? 1 : 0);
			rc = sqlite3_step(st);
			changes = sqlite3_changes(s->db);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			status = db_error(s, "cannot write the record");
	}
	if (status == CT_OK && exec_sql(s->db, "COMMIT") != SQLITE_OK)
		status = db_error(s, "cannot commit");
	if (status != CT_OK) {
		exec_sql(s->db, "ROLLBACK");
		return status;
	}
	if (stored)
		*stored = changes > 0;
	return CT_OK;
}

/* Run a SELECT_RECORD query and collect the good rows into s->recs. */
static ct_status collect(ct_store *s, sqlite3_stmt *st)
{
	s->nrecs = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!ct_vec_grow(s->ctx, (void **)&s->recs, &s->cap_recs, s->nrecs + 1,
		                 sizeof *s->recs))
			return CT_ERR_NOMEM;
		int k = row_record(s, &s->arena, st, &s->recs[s->nrecs]);
		if (k < 0)
			return ct_error(s->ctx, CT_ERR_NOMEM,
			                "out of memory reading the tuning store");
		if (k > 0)
			s->nrecs++;
	}
	return rc == SQLITE_DONE ? CT_OK : db_error(s, "cannot read");
}

ct_status ct_store_get(ct_store *s, const char *family, ct_dtype dtype, const char *size_class,
                       ct_tune_record *out, int *found)
{
	if (found)
		*found = 0;
	if (!s || !family || !size_class || !out || !found)
		return s ? ct_error(s->ctx, CT_ERR_USAGE, "ct_store_get: missing argument")
		         : CT_ERR_USAGE;
	memset(out, 0, sizeof *out);
	ct_arena_free(&s->arena);
	if (!s->db || (int)dtype < 0 || (int)dtype >= NDTYPES)
		return CT_OK;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db,
	                       SELECT_RECORD " WHERE family=?1 AND dtype=?2 AND size_class=?3", -1,
	                       &st, NULL) != SQLITE_OK)
		return db_error(s, "cannot read");
	sqlite3_bind_text(st, 1, family, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, dtype_names[dtype], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, size_class, -1, SQLITE_STATIC);
	ct_status status = collect(s, st);
	sqlite3_finalize(st);
	if (status == CT_OK && s->nrecs > 0) {
		*out = s->recs[0];
		*found = 1;
	}
	return status;
}

ct_status ct_store_list(ct_store *s, const char *family, const ct_dtype *dtype, const ct_tune_record **recs,
                        int *n)
{
	if (recs)
		*recs = NULL;
	if (n)
		*n = 0;
	if (!s || !recs || !n)
		return s ? ct_error(s->ctx, CT_ERR_USAGE, "ct_store_list: missing argument")
		         : CT_ERR_USAGE;
	ct_arena_free(&s->arena);
	s->nrecs = 0;
	if (!s->db || (dtype && ((int)*dtype < 0 || (int)*dtype >= NDTYPES)))
		return CT_OK;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db,
	                       SELECT_RECORD
	                       " WHERE (?1 IS NULL OR family=?1) AND"
	                       " (?2 IS NULL OR dtype=?2) ORDER BY family, dtype, size_class",
	                       -1, &st, NULL) != SQLITE_OK)
		return db_error(s, "cannot read");
	if (family)
		sqlite3_bind_text(st, 1, family, -1, SQLITE_STATIC);
	if (dtype)
		sqlite3_bind_text(st, 2, dtype_names[*dtype], -1, SQLITE_STATIC);
	ct_status status = collect(s, st);
	sqlite3_finalize(st);
	if (status == CT_OK) {
		*recs = s->recs;
		*n = s->nrecs;
	}
	return status;
}

/* ------------------------------------------------------------ printing */

static const char *verified_name(int v)
{
	return v == 1 ? "yes" : v == 0 ? "MISMATCH" : "no";
}

static void put_time(ct_buf *b, int64_t t)
{
	char when[32];
	time_t tt = (time_t)t;
	struct tm tm;
	if (gmtime_r(&tt, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
		ct_buf_puts(b, when);
	else
		ct_buf_printf(b, "%lld", (long long)t);
}

/* Whether a tuner could write this store: a store opened read-only (as
 * --show opens it) says what a writable open would find, not "read-only". */
static bool could_write(const ct_store *s)
{
	if (ct_store_writable(s))
		return true;
	if (!(s->flags & CT_STORE_READONLY) || s->untrusted || !s->dir[0] || !s->path[0])
		return false;
	if (access(s->path, W_OK) == 0)
		return access(s->dir, W_OK | X_OK) == 0; /* WAL files are made next to it */
	return errno == ENOENT && (access(s->dir, W_OK | X_OK) == 0 || errno == ENOENT);
}

/* What the selector makes of record r (docs/TUNE.md, section 3). */
static const char *selector_use(const ct_tune_record *r)
{
	if (r->verified == 0)
		return "never";
	return r->trusted ? "exact" : "nearest";
}

/* The product of the numbers in a size class ("M=64:N=128" -> 8192): the
 * rows of a family go from small to large problems. */
static double class_volume(const char *sc)
{
	double v = 1;
	for (const char *p = sc; (p = strchr(p, '=')); p++)
		v *= strtod(p + 1, NULL);
	return v;
}

static int cmp_show(const void *a, const void *b)
{
	const ct_tune_record *x = a, *y = b;
	int c = strcmp(x->family, y->family);
	if (c)
		return c;
	if (x->dtype != y->dtype)
		return x->dtype < y->dtype ? -1 : 1;
	double vx = class_volume(x->size_class), vy = class_volume(y->size_class);
	if (vx != vy)
		return vx < vy ? -1 : 1;
	return strcmp(x->size_class, y->size_class);
}

/* One record as JSON: for --show with what the selector makes of it, for
 * an export with the machine it was measured on. */
static json_t *record_json(const ct_store *s, const ct_tune_record *r, bool show, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "family", json_string(r->family), ok);
	ct_json_set(o, "dtype", json_string(dtype_names[r->dtype]), ok);
	ct_json_set(o, "size_class", json_string(r->size_class), ok);
	ct_json_set(o, "params", json_string(r->params), ok);
	ct_json_set(o, "seconds", ct_json_real(r->seconds, 9), ok);
	ct_json_set(o, "gflops", ct_json_real(r->gflops, 6), ok);
	ct_json_set(o, "verified", json_integer(r->verified), ok);
	ct_json_set(o, "trusted", json_boolean(r->trusted), ok);
	if (show)
		ct_json_set(o, "selector", json_string(selector_use(r)), ok);
	ct_json_set(o, "tuner_version", json_string(r->tuner_version), ok);
	ct_json_set(o, "cachet_version", json_string(r->cachet_version), ok);
	if (!show) {
		/* each exported record names the machine it was measured on */
		ct_json_set(o, "device_id", json_string(s->device_id), ok);
		ct_json_set(o, "device", json_string(s->identity), ok);
	}
	ct_json_set(o, "timestamp", json_integer((json_int_t)r->timestamp), ok);
	return o;
}

/* `tune --show --json`: the store and its records, one line (NULL: out of memory). */
static char *show_json(ct_store *s, const ct_tune_record *r, int n)
{
	bool ok = true;
	json_t *o = json_object(), *records = json_array();
	ct_json_set(o, "path", ct_json_text(s->path), &ok);
	ct_json_set(o, "device_id", json_string(s->device_id), &ok);
	ct_json_set(o, "writable", json_boolean(could_write(s)), &ok);
	for (int i = 0; i < n; i++)
		ct_json_push(records, record_json(s, &r[i], true, &ok), &ok);
	ct_json_set(o, "records", records, &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return ct_json_line(o);
}

/* One block per kernel family and type, its size classes from small to
 * large, each with the values the selector runs for exactly those sizes
 * (and whether it would use the record at all). */
static void show_text(ct_store *s, ct_buf *b, const ct_tune_record *r, int n)
{
	ct_buf_printf(b, "tuning store %s (device %s, %d record%s%s)\n", s->path, s->device_id, n,
	              n == 1 ? "" : "s", could_write(s) ? "" : ", read-only");
	if (n == 0)
		return;
	int ws = 10;
	for (int i = 0; i < n; i++) {
		int ls = (int)strlen(r[i].size_class);
		ws = ls > ws ? ls : ws;
	}
	for (int i = 0; i < n; i++) {
		if (i == 0 || strcmp(r[i].family, r[i - 1].family) != 0 || r[i].dtype != r[i - 1].dtype) {
			ct_buf_printf(b, "\n%s (%s)\n", r[i].family, dtype_names[r[i].dtype]);
			ct_buf_printf(b, "  %-*s  %-24s  %9s  %11s  %-8s  %-7s  %-5s  %-20s  %s\n", ws, "SIZE CLASS",
			              "SELECTOR PICKS", "GFLOP/S", "SECONDS", "VERIFIED", "TRUSTED", "TUNER", "MEASURED",
			              "HOW");
		}
		const char *semi = strchr(r[i].params, ';');
		int plen = semi ? (int)(semi - r[i].params) : (int)strlen(r[i].params);
		char picks[160];
		const char *use = selector_use(&r[i]);
		if (strcmp(use, "never") == 0)
			snprintf(picks, sizeof picks, "nothing (mismatch)");
		else
			snprintf(picks, sizeof picks, "%.*s%s", plen, r[i].params,
			         strcmp(use, "exact") == 0 ? "" : " (nearest only)");
		ct_buf_printf(b, "  %-*s  %-24s  %9.2f  %11.6g  %-8s  %-7s  %-5s  ", ws, r[i].size_class, picks,
		              r[i].gflops, r[i].seconds, verified_name(r[i].verified),
		              r[i].trusted ? "yes" : "stale", r[i].tuner_version);
		put_time(b, r[i].timestamp);
		ct_buf_printf(b, "  %s\n", semi ? semi + 1 : "");
	}
	ct_buf_puts(b, "\nother sizes: the nearest trusted size class of the family (sum of |log2| size ratios),\n"
	               "else the cache model's best point (docs/TUNE.md, section 3)\n");
}

ct_status ct_store_print(ct_store *s, const char *family, ct_format format, FILE *out)
{
	if (!s || !out)
		return s ? ct_error(s->ctx, CT_ERR_USAGE, "ct_store_print: no output stream")
		         : CT_ERR_USAGE;
	const ct_tune_record *r;
	int n;
	ct_status st = ct_store_list(s, family, NULL, &r, &n);
	if (st != CT_OK)
		return st;
	/* a copy: the rows are sorted for the table */
	ct_tune_record *rows = n ? malloc(sizeof *rows * (size_t)n) : NULL;
	if (n && !rows)
		return ct_error(s->ctx, CT_ERR_NOMEM, "out of memory printing the tuning store");
	if (n) {
		memcpy(rows, r, sizeof *rows * (size_t)n);
		qsort(rows, (size_t)n, sizeof *rows, cmp_show);
	}
	r = rows;
	char *text;
	if (format == CT_FORMAT_JSON) {
		text = show_json(s, r, n);
	} else {
		ct_buf b;
		ct_buf_init(&b);
		show_text(s, &b, r, n);
		text = ct_buf_take(&b);
	}
	free(rows);
	if (!text)
		return ct_error(s->ctx, CT_ERR_NOMEM, "out of memory printing the tuning store");
	bool ok = fputs(text, out) >= 0 && fflush(out) == 0;
	free(text);
	return ok ? CT_OK
	          : ct_error(s->ctx, CT_ERR_IO, "cannot print the tuning store: %s",
	                     strerror(errno));
}

/* ------------------------------------------------------------ measured points (resume) */

ct_status tune_points_put(ct_store *s, const char *family, ct_dtype dtype, const char *size_class,
                          const char *tuner_version, const tune_point *p)
{
	if (!s || !s->writable || !s->db || (int)dtype < 0 || (int)dtype >= NDTYPES)
		return CT_OK; /* nothing to keep it in: the run goes on without */
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db,
	                            "INSERT OR REPLACE INTO points(family, dtype, size_class, params, seconds,"
	                            " gflops, verified, abandoned, tuner_version, cachet_version, timestamp)"
	                            " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
	                            -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, family, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, dtype_names[dtype], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, size_class, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, p->params, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 5, p->seconds);
		sqlite3_bind_double(st, 6, p->gflops);
		sqlite3_bind_int(st, 7, p->verified);
		sqlite3_bind_int(st, 8, p->abandoned);
		sqlite3_bind_text(st, 9, tuner_version, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 10, s->version, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 11, (sqlite3_int64)time(NULL));
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? CT_OK : db_error(s, "cannot write a measured point");
}

int tune_points_each(ct_store *s, const char *family, ct_dtype dtype, const char *size_class,
                     const char *tuner_version, void (*fn)(void *ud, const tune_point *p), void *ud)
{
	/* points of another device identity or cachet version are not resumed */
	if (!s || !s->db || s->all_stale || (int)dtype < 0 || (int)dtype >= NDTYPES)
		return 0;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT params, seconds, gflops, verified, abandoned FROM points"
	                       " WHERE family=?1 AND dtype=?2 AND size_class=?3 AND tuner_version=?4"
	                       " AND cachet_version=?5",
	                       -1, &st, NULL) != SQLITE_OK)
		return 0; /* a read-only store from before the points table */
	sqlite3_bind_text(st, 1, family, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, dtype_names[dtype], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, size_class, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, tuner_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, s->version, -1, SQLITE_STATIC);
	int n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		tune_point p;
		p.params = text_col(st, 0);
		p.seconds = sqlite3_column_double(st, 1);
		p.gflops = sqlite3_column_double(st, 2);
		p.verified = sqlite3_column_int(st, 3);
		p.abandoned = sqlite3_column_int(st, 4);
		if (!p.params || !isfinite(p.seconds) || p.seconds < 0 || p.verified < -1 || p.verified > 1)
			continue;
		fn(ud, &p);
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

/* ------------------------------------------------------------ export and import */

#define EXPORT_FORMAT "cachet-tune-export"
#define EXPORT_VERSION 1

/* Write text to path. A regular file (or a new one) is replaced
 * atomically: a temp file in the same folder, fsync'd, renamed over it, so
 * a full disk never leaves half an export where a whole one was. Anything
 * else is written in place: a device or a pipe, and a symbolic link
 * (/dev/stdout is one: a rename would replace the link, not what it names). */
static bool write_replace(const char *path, const char *text, int *err)
{
	struct stat sb;
	size_t len = strlen(text);
	if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		FILE *f = fopen(path, "w");
		bool ok = f && fwrite(text, 1, len, f) == len;
		*err = errno;
		if (f && fclose(f) != 0 && ok)
			ok = false, *err = errno;
		return ok;
	}
	char tmp[4200];
	const char *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path + 1) : 0;
	if (snprintf(tmp, sizeof tmp, "%.*s.%s.XXXXXX", dl, path, slash ? slash + 1 : path) >= (int)sizeof tmp) {
		*err = ENAMETOOLONG;
		return false;
	}
	int fd = mkstemp(tmp);
	if (fd < 0) {
		*err = errno;
		return false;
	}
	mode_t mask = umask(0);
	umask(mask);
	bool ok = fchmod(fd, 0666 & ~mask) == 0 && jit_write_all(fd, text, len) && fsync(fd) == 0;
	*err = errno;
	if (close(fd) != 0 && ok)
		ok = false, *err = errno;
	if (ok && rename(tmp, path) != 0)
		ok = false, *err = errno;
	if (!ok)
		unlink(tmp);
	return ok;
}

ct_status ct_store_export(ct_store *s, const char *family, const char *path)
{
	if (!s || !path)
		return s ? ct_error(s->ctx, CT_ERR_USAGE, "ct_store_export: no file") : CT_ERR_USAGE;
	const ct_tune_record *r;
	int n;
	ct_status st = ct_store_list(s, family, NULL, &r, &n);
	if (st)
		return st;
	bool built = true;
	json_t *o = json_object(), *records = json_array();
	ct_json_set(o, "format", json_string(EXPORT_FORMAT), &built);
	ct_json_set(o, "version", json_integer(EXPORT_VERSION), &built);
	ct_json_set(o, "device_id", json_string(s->device_id), &built);
	ct_json_set(o, "device", json_string(s->identity), &built);
	for (int i = 0; i < n; i++)
		ct_json_push(records, record_json(s, &r[i], false, &built), &built);
	ct_json_set(o, "records", records, &built);
	if (!built)
		json_decref(o);
	char *text = built ? ct_json_line(o) : NULL;
	if (!text)
		return ct_error(s->ctx, CT_ERR_NOMEM, "out of memory writing %s", path);
	struct stat a, b;
	if (s->path && stat(path, &a) == 0 && stat(s->path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		free(text);
		return ct_error(s->ctx, CT_ERR_USAGE, "cannot export to %s: it is the store itself", path);
	}
	int err = 0;
	bool ok = write_replace(path, text, &err);
	free(text);
	return ok ? CT_OK : ct_error(s->ctx, CT_ERR_IO, "cannot write %s: %s", path, strerror(err));
}

/* The file's text, NUL-terminated (NULL with an error on s's ctx). */
static char *read_text(ct_store *s, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		ct_error(s->ctx, CT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	ct_buf b;
	ct_buf_init(&b);
	char chunk[8192];
	size_t got;
	bool nul = false, big = false;
	/* byte by byte into the buffer: a NUL (a binary file, /dev/zero) is no JSON text and ends
	 * the read, and so do 64 MiB (an export of a million records is far less) */
	while (!nul && !big && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
		for (size_t i = 0; i < got && !nul; i++)
			if (chunk[i])
				ct_buf_putc(&b, chunk[i]);
			else
				nul = true;
		big = b.len > (64u << 20);
	}
	bool failed = ferror(f);
	fclose(f);
	if (nul || big || failed) {
		ct_buf_free(&b);
		ct_error(s->ctx, CT_ERR_INPUT, "%s: %s", path,
		         nul ? "not JSON (a NUL byte)" : big ? "larger than 64 MiB: not an export" : "read error");
		return NULL;
	}
	char *text = ct_buf_take(&b);
	if (!text)
		ct_error(s->ctx, CT_ERR_NOMEM, "out of memory reading %s", path);
	return text;
}

/* One record of an export file, through SQLite's JSON functions. */
static const char import_sql[] =
	"SELECT json_extract(value, '$.family'), json_extract(value, '$.dtype'),"
	" json_extract(value, '$.size_class'), json_extract(value, '$.params'),"
	" json_extract(value, '$.seconds'), json_extract(value, '$.gflops'),"
	" json_extract(value, '$.verified'), json_extract(value, '$.tuner_version'),"
	" json_extract(value, '$.cachet_version'), json_extract(value, '$.timestamp'),"
	" json_extract(?1, '$.format'), json_extract(?1, '$.version'), json_extract(?1, '$.device_id'),"
	" json_extract(value, '$.device_id')"
	" FROM json_each(?1, '$.records')";

/* Import one row of import_sql into s: 1 stored, 0 not (older or worse than
 * what is there), -1 a bad record (error on ctx). */
/* Whether family can name a kernel family: letters, digits, '_' and '-',
 * starting with a letter or '_', shorter than ct_tune_result.family
 * (ct_kernel_tune_key makes NAME-<16 hex digits>). A path ("../../etc/x"),
 * spaces or control characters name none and are refused. */
static bool family_ok(const char *f)
{
	if (!f || !(isalpha((unsigned char)f[0]) || f[0] == '_'))
		return false;
	size_t n = 0;
	while (isalnum((unsigned char)f[n]) || f[n] == '_' || f[n] == '-')
		n++;
	return f[n] == 0 && n < 96;
}

/* Whether text (up to its end or a ';') is NAME=VALUE[:NAME=VALUE]...:
 * identifiers, each once, whole decimal values of at least min; why says
 * what is wrong when not. A size class and a record's tunable values have
 * this form (the selector reads them so). */
static bool assignments_ok(const char *text, int64_t min, char *why, size_t cap)
{
	const char *end = text ? text + strcspn(text, ";") : NULL;
	if (!text || end == text) {
		snprintf(why, cap, "empty");
		return false;
	}
	const char *names[64];
	size_t lens[64];
	int n = 0;
	for (const char *p = text; p < end;) {
		const char *q = p;
		if (!(isalpha((unsigned char)*q) || *q == '_')) {
			snprintf(why, cap, "'%.*s' does not start with a name", (int)(end - p), p);
			return false;
		}
		while (q < end && (isalnum((unsigned char)*q) || *q == '_'))
			q++;
		if (q >= end || *q != '=') {
			snprintf(why, cap, "'%.*s' is not NAME=VALUE", (int)(end - p), p);
			return false;
		}
		for (int i = 0; i < n; i++)
			if (lens[i] == (size_t)(q - p) && strncmp(names[i], p, lens[i]) == 0) {
				snprintf(why, cap, "'%.*s' is given twice", (int)(q - p), p);
				return false;
			}
		if (n == 64) {
			snprintf(why, cap, "more than 64 values");
			return false;
		}
		names[n] = p;
		lens[n++] = (size_t)(q - p);
		const char *v = ++q;
		while (q < end && *q != ':')
			q++;
		char num[32];
		snprintf(num, sizeof num, "%.*s", (int)(q - v < 31 ? q - v : 31), v);
		char *e;
		errno = 0;
		long long x = strtoll(num, &e, 10);
		if (q == v || q - v > 20 || *e || errno || !isdigit((unsigned char)num[0]) || x < min) {
			snprintf(why, cap, "'%.*s' is not a whole number of at least %lld", (int)(q - p), p,
			         (long long)min);
			return false;
		}
		p = q < end ? q + 1 : q;
		if (q < end && p == end) {
			snprintf(why, cap, "ends with ':'");
			return false;
		}
	}
	return true;
}

/* Check record number row of an export before anything is imported: a
 * family a kernel can have, a size class and tunable values of the form
 * the selector reads, sizes and values of at least 1 (a tile of 0 or -5, a
 * value "abc", an empty pick are no tuning result). false after an error
 * naming the record and the reason. */
static bool import_row_ok(ct_store *s, sqlite3_stmt *st, const char *path, int row)
{
	const char *family = text_col(st, 0), *sc = text_col(st, 2), *params = text_col(st, 3);
	char why[256];
	if (!family_ok(family)) {
		ct_error(s->ctx, CT_ERR_INPUT, "%s: record %d: family '%.100s' names no kernel family (letters, digits, '_' and '-', "
		         "starting with a letter, as NAME-<16 hex digits>); nothing imported",
		         path, row, family ? family : "");
		return false;
	}
	if (!assignments_ok(sc, 1, why, sizeof why)) {
		ct_error(s->ctx, CT_ERR_INPUT, "%s: record %d (%s): size_class: %s; nothing imported", path, row, family, why);
		return false;
	}
	if (!assignments_ok(params, 1, why, sizeof why)) {
		ct_error(s->ctx, CT_ERR_INPUT, "%s: record %d (%s %s): params: %s; nothing imported", path, row, family, sc,
		         why);
		return false;
	}
	return true;
}

static int import_row(ct_store *s, sqlite3_stmt *st, const char *path, int force)
{
	ct_tune_record r;
	memset(&r, 0, sizeof r);
	const char *dt = text_col(st, 1), *dev = text_col(st, 13) ? text_col(st, 13) : text_col(st, 12);
	r.family = text_col(st, 0);
	r.size_class = text_col(st, 2);
	const char *params = text_col(st, 3);
	r.seconds = sqlite3_column_double(st, 4);
	r.gflops = sqlite3_column_double(st, 5);
	r.verified = sqlite3_column_int(st, 6);
	r.tuner_version = text_col(st, 7);
	const char *cv = text_col(st, 8);
	r.timestamp = sqlite3_column_int64(st, 9);
	r.dtype = (ct_dtype)-1;
	for (int i = 0; dt && i < NDTYPES; i++)
		if (strcmp(dt, dtype_names[i]) == 0)
			r.dtype = (ct_dtype)i;
	if (!r.family || !r.size_class || !params || !dev || (int)r.dtype < 0) {
		ct_error(s->ctx, CT_ERR_INPUT, "%s: a record lacks family, dtype, size_class, params or device_id", path);
		return -1;
	}
	bool foreign = strcmp(dev, s->device_id) != 0;
	if (foreign && !force) {
		ct_error(s->ctx, CT_ERR_INPUT,
		         "%s: records of device '%s', this is '%s' (--force imports them as stale: the selector uses "
		         "them only as nearest, never as exact)", path, dev, s->device_id);
		return -1;
	}
	/* a foreign record keeps the machine it came from after the ';' (the selector reads up to it) */
	char p2[2048];
	snprintf(p2, sizeof p2, "%s%s%s%s", params, foreign ? (strchr(params, ';') ? "," : ";") : "",
	         foreign ? "from=" : "", foreign ? dev : "");
	r.params = p2;
	int stale = foreign || !cv || strcmp(cv, s->version) != 0;
	if (stale) {
		/* never over a trusted record of this machine */
		ct_tune_record old;
		int found = 0;
		ct_status g = ct_store_get(s, r.family, r.dtype, r.size_class, &old, &found);
		if (g)
			return -1;
		if (found && old.trusted)
			return 0;
	}
	int stored = 0;
	if (tune_store_put_stale(s, &r, stale, &stored) != CT_OK)
		return -1;
	return stored;
}

ct_status ct_store_import(ct_store *s, const char *path, int force, int *imported, int *total)
{
	if (imported)
		*imported = 0;
	if (total)
		*total = 0;
	if (!s || !path)
		return s ? ct_error(s->ctx, CT_ERR_USAGE, "ct_store_import: no file") : CT_ERR_USAGE;
	if (!s->writable || !s->db)
		return ct_error(s->ctx, CT_ERR_IO, "tuning store %s cannot be written: %s",
		                s->path[0] ? s->path : "(none)", s->why_ro);
	char *text = read_text(s, path);
	if (!text)
		return ct_ctx_last_status(s->ctx);
	ct_status status = CT_OK;
	sqlite3_stmt *st = NULL;
	/* the file is read through its own in-memory connection: the puts
	 * below write s->db while its rows are stepped */
	sqlite3 *mem = NULL;
	char ok[8] = "", fmt[64] = "";
	if (sqlite3_open(":memory:", &mem) != SQLITE_OK)
		status = ct_error(s->ctx, CT_ERR_NOMEM, "cannot open an in-memory database");
	/* json_valid first: json_each of a broken text is an SQL error without a place */
	else if (query_text(mem, "SELECT json_valid(?1)", text, ok, sizeof ok) != SQLITE_ROW || strcmp(ok, "1") != 0)
		status = ct_error(s->ctx, CT_ERR_INPUT, "%s: not JSON", path);
	else if (query_text(mem, "SELECT json_extract(?1, '$.format') || '/' || json_extract(?1, '$.version')", text,
	                    fmt, sizeof fmt) != SQLITE_ROW || strcmp(fmt, EXPORT_FORMAT "/1") != 0)
		status = ct_error(s->ctx, CT_ERR_INPUT, "%s: not a cachet tuning export (format %s version %d)",
		                  path, EXPORT_FORMAT, EXPORT_VERSION);
	else if (sqlite3_prepare_v2(mem, import_sql, -1, &st, NULL) != SQLITE_OK)
		status = ct_error(s->ctx, CT_ERR_INPUT, "%s: cannot read it: %s", path, sqlite3_errmsg(mem));
	int rows = 0, kept = 0;
	if (!status) {
		/* every record is checked before any is written */
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
		int row = 0;
		while (!status && sqlite3_step(st) == SQLITE_ROW)
			if (!import_row_ok(s, st, path, ++row))
				status = ct_ctx_last_status(s->ctx);
		sqlite3_reset(st);
	}
	if (!status) {
		int rc;
		while (!status && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *rfmt = text_col(st, 10);
			if (!rfmt || strcmp(rfmt, EXPORT_FORMAT) != 0 || sqlite3_column_int(st, 11) != EXPORT_VERSION) {
				status = ct_error(s->ctx, CT_ERR_INPUT, "%s: not a cachet tuning export (format %s version %d)",
				                  path, EXPORT_FORMAT, EXPORT_VERSION);
				break;
			}
			rows++;
			int k = import_row(s, st, path, force);
			if (k < 0)
				status = ct_ctx_last_status(s->ctx);
			kept += k > 0;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(mem);
	free(text);
	if (imported)
		*imported = kept;
	if (total)
		*total = rows;
	return status;
}

/* ------------------------------------------------------------ machine facts */

int tune_store_fact_get(ct_store *s, const char *key, char *out, size_t n)
{
	out[0] = 0;
	if (!s || !s->db || s->all_stale || strncmp(key, "fact.", 5) != 0)
		return 0;
	return query_text(s->db, "SELECT value FROM meta WHERE key=?1", key, out, n) == SQLITE_ROW;
}

ct_status tune_store_fact_put(ct_store *s, const char *key, const char *value)
{
	if (!s || !s->db || !s->writable || strncmp(key, "fact.", 5) != 0)
		return CT_OK;
	if (set_meta(s->db, key, value) != SQLITE_OK)
		return db_error(s, "cannot keep a machine fact");
	return CT_OK;
}
