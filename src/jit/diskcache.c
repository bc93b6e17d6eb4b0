/* diskcache.c: the code cache on disk: a private folder, entries verified before dlopen and
 * published by rename, an LRU size cap. */
#include "jit/jit.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

/*
 * Layout: ROOT/code-v1/ab/<30 more hex digits>/{key,kernel.so}, where the 32
 * digits are the key's digest. `key` is a short text header
 *     cachet-code-entry 1\n so-bytes N\n so-xxh128 HEX\n key-bytes M\n \n
 * followed by the M bytes of the full key. An entry is built in a
 * `.tmp-XXXXXX` folder next to it and renamed into place in one step, so
 * no process ever sees half an entry; it is removed by renaming it to
 * `.trash-...` first. Temp folders older than JIT_ORPHAN_AGE are swept.
 */

#define CODE_SUBDIR "code-v1"
#define KEY_FILE "key"
#define SO_FILE "kernel.so"
#define VERDICT_FILE "verdict" /* the check before first use (engine/selftest.c): "ok" or "bad" */
#define KEY_MAGIC "cachet-code-entry"
#define KEY_FILE_MAX ((size_t)1 << 30)
#define SCRATCH_BYTES ((size_t)64 * 1024)
#define NFS_MAGIC 0x6969

/* ------------------------------------------------------------ small helpers */

static void hex16(const XXH128_hash_t *h, char hex[JIT_DIGEST_HEX])
{
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, *h);
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		hex[2 * i] = digits[c.digest[i] >> 4];
		hex[2 * i + 1] = digits[c.digest[i] & 15];
	}
	hex[32] = 0;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[n] == 0;
}

static bool read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* Remove folder path and the files in it (entries hold no sub-folders). */
static bool rm_flat(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, e->d_name, 0) != 0 && errno == EISDIR)
			unlinkat(fd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
	return rmdir(path) == 0 || errno == ENOENT;
}

/* Remove the entry folder dir (in shard folder shard): rename it out of the
 * way first, so readers never open a half-removed entry. */
static void remove_entry(jit_state *st, const char *dir)
{
	const char *slash = strrchr(dir, '/');
	char trash[PATH_MAX];
	if (!slash || !jit_fmt(trash, sizeof trash, "%.*s/.trash-%ld-%u-%s", (int)(slash - dir),
	                       dir, (long)getpid(), st->trash_seq++, slash + 1))
		return;
	if (rename(dir, trash) != 0)
		return; /* gone already: another process removed it */
	if (!rm_flat(trash))
		jit_warn(st, "cannot remove %s: %s", trash, strerror(errno));
}

/* ------------------------------------------------------------ the folder */

/* Record why the folder is not used (long paths are cut, never overflow). */
static void set_why(jit_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(jit_state *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->disk_why, sizeof st->disk_why, fmt, ap);
	va_end(ap);
}

/* Set st->root from the override, CACHET_CACHE_DIR, XDG_CACHE_HOME or HOME. */
static bool resolve_root(jit_state *st)
{
	ct_ctx *ctx = st->ctx;
	char buf[PATH_MAX];
	const char *env = getenv("CACHET_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	bool ok;
	if (st->dir_override) {
		ok = jit_fmt(buf, sizeof buf, "%s", st->dir_override);
	} else if (env && *env) {
		ok = jit_fmt(buf, sizeof buf, "%s", env);
	} else if (xdg && xdg[0] == '/') {
		ok = jit_fmt(buf, sizeof buf, "%s/cachet", xdg);
	} else if (home && home[0] == '/') {
		ok = jit_fmt(buf, sizeof buf, "%s/.cache/cachet", home);
	} else {
		struct passwd pw, *res = NULL;
		char pwbuf[4096];
		if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) != 0 || !res ||
		    !pw.pw_dir || pw.pw_dir[0] != '/')
			return false;
		ok = jit_fmt(buf, sizeof buf, "%s/.cache/cachet", pw.pw_dir);
	}
	if (!ok)
		return false;
	if (buf[0] != '/') {
		/* keep it valid if the process changes folder later */
		char cwd[PATH_MAX], abs[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd) || !jit_fmt(abs, sizeof abs, "%s/%s", cwd, buf))
			return false;
		memcpy(buf, abs, strlen(abs) + 1);
	}
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	st->root = ct_strdup(ctx, buf);
	return st->root != NULL;
}

const char *ct_cache_path(ct_ctx *ctx)
{
	jit_state *st = ctx ? jit_state_get(ctx) : NULL;
	if (!st)
		return "";
	if (!st->root)
		resolve_root(st);
	return st->root ? st->root : "";
}

/* mkdir -p with mode 0700 for the folders it creates. */
static void make_dirs(const char *path)
{
	char buf[PATH_MAX];
	if (!jit_fmt(buf, sizeof buf, "%s", path))
		return;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(buf, 0700); /* existing parents are fine; the final check decides */
		*p = '/';
	}
	mkdir(buf, 0700);
}

bool jit_stat_safe(const struct stat *sb, bool dir, const char *path, char *why, size_t cap)
{
	if (dir ? !S_ISDIR(sb->st_mode) : !S_ISREG(sb->st_mode)) {
		snprintf(why, cap, "%s is not a %s", path, dir ? "folder" : "regular file");
		return false;
	}
	if (sb->st_uid != geteuid()) {
		snprintf(why, cap, "%s is owned by another user (uid %ld)", path, (long)sb->st_uid);
		return false;
	}
	if (sb->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, cap, "%s is writable by group or others (mode %04o; chmod %s it)", path,
		         (unsigned)(sb->st_mode & 07777), dir ? "700" : "600");
		return false;
	}
	return true;
}

bool jit_path_safe(const char *path, bool dir, bool follow, char *why, size_t cap)
{
	struct stat sb;
	if ((follow ? stat(path, &sb) : lstat(path, &sb)) != 0) {
		snprintf(why, cap, "cannot use %s: %s", path, strerror(errno));
		return false;
	}
	return jit_stat_safe(&sb, dir, path, why, cap);
}

/* Whether the folder at path may hold binaries this process loads (the
 * policy of jit_path_safe); why in st->disk_why. */
static bool safe_dir(jit_state *st, const char *path, bool follow)
{
	return jit_path_safe(path, true, follow, st->disk_why, sizeof st->disk_why);
}

bool jit_disk_ready(jit_state *st)
{
	if (st->disk_checked)
		return st->disk_ok;
	st->disk_checked = true;
	st->disk_ok = false;
	st->disk_why[0] = 0;
	if (!st->root && !resolve_root(st)) {
		snprintf(st->disk_why, sizeof st->disk_why,
		         "no cache folder (set CACHET_CACHE_DIR or HOME)");
		jit_warn(st, "no disk code cache: %s", st->disk_why);
		return false;
	}
	make_dirs(st->root);
	char *real = realpath(st->root, NULL);
	if (!real) {
		set_why(st, "cannot create %s: %s", st->root, strerror(errno));
	} else if (safe_dir(st, real, true)) {
		char code[PATH_MAX];
		if (!jit_fmt(code, sizeof code, "%s/" CODE_SUBDIR, real)) {
			set_why(st, "path too long");
		} else {
			if (mkdir(code, 0700) != 0 && errno != EEXIST)
				set_why(st, "cannot create %s: %s", code, strerror(errno));
			else if (safe_dir(st, code, false))
				st->code_dir = ct_strdup(st->ctx, code);
		}
	}
	free(real);
	if (!st->code_dir) {
		if (!st->disk_why[0])
			set_why(st, "out of memory");
		jit_warn(st,
		         "not using the code cache folder %s: %s; going on without the disk cache",
		         st->root, st->disk_why);
		return false;
	}
	struct statfs fs;
	if (statfs(st->code_dir, &fs) == 0 && fs.f_type == NFS_MAGIC)
		jit_warn(st,
		         "the code cache folder %s is on NFS: processes on other machines "
		         "sharing it must agree on rename semantics; set CACHET_CACHE_DIR "
		         "to a local folder if loads misbehave",
		         st->root);
	st->disk_ok = true;
	return true;
}

/* code_dir/ab/<rest>[/file] of entry digest into buf. */
static bool entry_path(const jit_state *st, const char *digest, const char *file, char *buf,
                       size_t cap)
{
	if (file)
		return jit_fmt(buf, cap, "%s/%.2s/%s/%s", st->code_dir, digest, digest + 2, file);
	return jit_fmt(buf, cap, "%s/%.2s/%s", st->code_dir, digest, digest + 2);
}

/* ------------------------------------------------------------ checking one entry */

/* Parse "<word> <unsigned>\n" at *p (within end); false if it is not there. */
static bool parse_num(const char **p, const char *end, const char *word, uint64_t *v)
{
	size_t wn = strlen(word);
	const char *q = *p;
	if ((size_t)(end - q) < wn + 2 || memcmp(q, word, wn) != 0 || q[wn] != ' ')
		return false;
	q += wn + 1;
	uint64_t x = 0;
	int digits = 0;
	while (q < end && *q >= '0' && *q <= '9' && digits < 19) {
		x = x * 10 + (uint64_t)(*q++ - '0');
		digits++;
	}
	if (!digits || q >= end || *q != '\n')
		return false;
	*v = x;
	*p = q + 1;
	return true;
}

static bool parse_hex(const char **p, const char *end, const char *word, char hex[JIT_DIGEST_HEX])
{
	size_t wn = strlen(word);
	const char *q = *p;
	if ((size_t)(end - q) < wn + 34 || memcmp(q, word, wn) != 0 || q[wn] != ' ' ||
	    q[wn + 33] != '\n')
		return false;
	memcpy(hex, q + wn + 1, 32);
	hex[32] = 0;
	if (!is_hex(hex, 32))
		return false;
	*p = q + wn + 34;
	return true;
}

/* The checksum of the first want bytes of file fd (its size, checked
 * before); false on a read error. *got is the number of bytes read. */
static bool hash_fd(jit_state *st, int fd, uint64_t want, char hex[JIT_DIGEST_HEX], uint64_t *got)
{
	if (!st->scratch) {
		st->scratch = ct_alloc(st->ctx, SCRATCH_BYTES);
		if (!st->scratch)
			return false;
		st->scratch_cap = SCRATCH_BYTES;
	}
	XXH3_state_t s;
	XXH3_INITSTATE(&s);
	XXH3_128bits_reset(&s);
	*got = 0;
	while (*got < want) {
		uint64_t left = want - *got;
		size_t chunk = left < st->scratch_cap ? (size_t)left : st->scratch_cap;
		ssize_t r = read(fd, st->scratch, chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		if (r == 0)
			break;
		XXH3_128bits_update(&s, st->scratch, (size_t)r);
		*got += (uint64_t)r;
	}
	XXH128_hash_t h = XXH3_128bits_digest(&s);
	hex16(&h, hex);
	return true;
}

enum { CHECK_GOOD = 0, CHECK_BAD = 1, CHECK_UNKNOWN = -1 };

/* Check the entry named digest whose files are open as kfd (key) and sfd
 * (shared object). With cfg, its stored key must equal cfg->text + source
 * header + src; without, the stored key's digest must equal the name. The
 * shared object must have the stored size and checksum. CHECK_BAD with why
 * filled for a damaged or foreign entry; CHECK_UNKNOWN when it could not be
 * checked (out of memory). When good, *kst and *sst (if not NULL) are the
 * files' stat data, saving the caller system calls. */
static int entry_check(jit_state *st, int kfd, int sfd, const char *digest, const jit_config *cfg,
                       const char *src, size_t len, char *why, size_t cap, struct stat *kst,
                       struct stat *sst)
{
	ct_ctx *ctx = st->ctx;
	struct stat ks, ss;
	uid_t me = geteuid();
	if (fstat(kfd, &ks) != 0 || !S_ISREG(ks.st_mode) || ks.st_uid != me) {
		snprintf(why, cap, "key file is not a regular file of ours");
		return CHECK_BAD;
	}
	if (!jit_stat_safe(&ks, false, KEY_FILE, why, cap))
		return CHECK_BAD;
	if (ks.st_size < 16 || (uint64_t)ks.st_size > KEY_FILE_MAX) {
		snprintf(why, cap, "key file has %lld bytes", (long long)ks.st_size);
		return CHECK_BAD;
	}
	size_t kn = (size_t)ks.st_size;
	/* the wanted key bounds the file (its header is under 256 bytes):
	 * never read a huge foreign file whole */
	if (cfg && kn > cfg->text_len + len + 512) {
		snprintf(why, cap, "key file has %zu bytes, too many for the wanted key", kn);
		return CHECK_BAD;
	}
	char *kb = ct_alloc(ctx, kn + 1);
	if (!kb)
		return CHECK_UNKNOWN;
	int result = CHECK_BAD;
	const char *p = kb, *end = kb + kn;
	uint64_t version, so_bytes, key_bytes, got;
	char so_hex[JIT_DIGEST_HEX], hex[JIT_DIGEST_HEX];
	if (!read_full(kfd, kb, kn)) {
		snprintf(why, cap, "key file cannot be read in full");
		goto out;
	}
	if (!parse_num(&p, end, KEY_MAGIC, &version) ||
	    !parse_num(&p, end, "so-bytes", &so_bytes) ||
	    !parse_hex(&p, end, "so-xxh128", so_hex) ||
	    !parse_num(&p, end, "key-bytes", &key_bytes) || p >= end || *p++ != '\n') {
		snprintf(why, cap, "key file header is damaged");
		goto out;
	}
	if (version != JIT_FORMAT_VERSION) {
		snprintf(why, cap, "entry format %llu, want %d", (unsigned long long)version,
		         JIT_FORMAT_VERSION);
		goto out;
	}
	if ((uint64_t)(end - p) != key_bytes) {
		snprintf(why, cap, "key has %zu bytes, header says %llu", (size_t)(end - p),
		         (unsigned long long)key_bytes);
		goto out;
	}
	if (cfg) {
		char hdr[48];
		int hn = snprintf(hdr, sizeof hdr, "source %zu\n", len);
		if (key_bytes != cfg->text_len + (uint64_t)hn + len ||
		    memcmp(p, cfg->text, cfg->text_len) != 0 ||
		    memcmp(p + cfg->text_len, hdr, (size_t)hn) != 0 ||
		    (len && memcmp(p + cfg->text_len + hn, src, len) != 0)) {
			snprintf(why, cap, "stored key differs from the wanted key");
			goto out;
		}
	} else {
		XXH128_hash_t h = XXH3_128bits(p, (size_t)key_bytes);
		hex16(&h, hex);
		if (strcmp(hex, digest) != 0) {
			snprintf(why, cap, "stored key's digest %s differs from the entry's name",
			         hex);
			goto out;
		}
	}
	if (fstat(sfd, &ss) != 0 || !S_ISREG(ss.st_mode) || ss.st_uid != me) {
		snprintf(why, cap, "shared object is not a regular file of ours");
		goto out;
	}
	if (!jit_stat_safe(&ss, false, SO_FILE, why, cap))
		goto out;
	if ((uint64_t)ss.st_size != so_bytes) {
		snprintf(why, cap, "shared object has %lld bytes, want %llu", (long long)ss.st_size,
		         (unsigned long long)so_bytes);
		goto out;
	}
	if (!hash_fd(st, sfd, so_bytes, hex, &got)) {
		if (!st->scratch) {
			result = CHECK_UNKNOWN;
			goto out;
		}
		snprintf(why, cap, "shared object cannot be read: %s", strerror(errno));
		goto out;
	}
	if (got != so_bytes || strcmp(hex, so_hex) != 0) {
		snprintf(why, cap, "shared object checksum mismatch");
		goto out;
	}
	result = CHECK_GOOD;
	if (kst)
		*kst = ks;
	if (sst)
		*sst = ss;
out:
	ct_free(ctx, kb);
	return result;
}

/* ------------------------------------------------------------ lookup and publish */

/* Whether digest's shard folder (code-v1/ab), if it exists, passes the
 * folder policy; a warning when not (its entries are neither loaded nor
 * added: anyone may have written them). */
static bool shard_safe(jit_state *st, const char *digest)
{
	char shard[PATH_MAX], why[PATH_MAX + 128];
	struct stat sb;
	if (!jit_fmt(shard, sizeof shard, "%s/%.2s", st->code_dir, digest))
		return false;
	if (lstat(shard, &sb) != 0)
		return true; /* missing: created private by publish */
	if (jit_stat_safe(&sb, true, shard, why, sizeof why))
		return true;
	jit_warn(st, "code cache shard not used: %s; compiling without it", why);
	return false;
}

void jit_disk_remove(jit_state *st, const char *digest)
{
	char dir[PATH_MAX];
	struct stat sb;
	if (jit_disk_ready(st) && entry_path(st, digest, NULL, dir, sizeof dir) && lstat(dir, &sb) == 0)
		remove_entry(st, dir);
}

bool jit_disk_verdict_get(jit_state *st, const char *digest, char *buf, size_t cap)
{
	char path[PATH_MAX], why[256];
	buf[0] = 0;
	if (!jit_disk_ready(st) || !entry_path(st, digest, VERDICT_FILE, path, sizeof path) ||
	    !jit_path_safe(path, false, false, why, sizeof why))
		return false;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0;
}

void jit_disk_verdict_put(jit_state *st, const char *digest, const char *text)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX];
	struct stat sb;
	if (!jit_disk_ready(st) || !entry_path(st, digest, NULL, dir, sizeof dir) ||
	    !entry_path(st, digest, VERDICT_FILE, path, sizeof path) ||
	    !jit_fmt(tmp, sizeof tmp, "%s/.tmp-verdict-%ld", dir, (long)getpid()) || lstat(dir, &sb) != 0)
		return; /* no entry (the cache is off or the publish failed): nothing to keep it with */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	bool ok = jit_write_all(fd, text, strlen(text));
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

bool jit_disk_lookup(jit_state *st, const jit_config *cfg, const char *src, size_t len,
                     const char *digest, void **handle)
{
	*handle = NULL;
	char dir[PATH_MAX], kpath[PATH_MAX], spath[PATH_MAX];
	if (!entry_path(st, digest, NULL, dir, sizeof dir) ||
	    !entry_path(st, digest, KEY_FILE, kpath, sizeof kpath) ||
	    !entry_path(st, digest, SO_FILE, spath, sizeof spath))
		return false;
	char why[PATH_MAX + 128];
	int r;
	struct stat ks, ss;
	if (!shard_safe(st, digest))
		return false;
	struct stat ds;
	if (lstat(dir, &ds) == 0 && !jit_stat_safe(&ds, true, dir, why, sizeof why)) {
		st->n.corrupt++;
		jit_warn(st, "code cache entry not loaded: %s; removed, rebuilding", why);
		remove_entry(st, dir);
		return false;
	}
	int kfd = open(kpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int sfd = -1;
	if (kfd < 0) {
		struct stat sb;
		/* published entries always have their key: a folder without
		 * one was damaged after publishing */
		if (errno != ENOENT || lstat(dir, &sb) != 0)
			return false;
		snprintf(why, sizeof why, "key file missing");
		r = CHECK_BAD;
	} else if ((sfd = open(spath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		snprintf(why, sizeof why, "shared object: %s", strerror(errno));
		r = CHECK_BAD;
	} else {
		r = entry_check(st, kfd, sfd, digest, cfg, src, len, why, sizeof why, &ks, &ss);
	}
	if (r == CHECK_GOOD) {
		void *h = dlopen(spath, jit_dlopen_flags(cfg));
		/* entries are immutable, but another process may remove one
		 * and publish it again between the check and dlopen: the path
		 * must still name the file that was checked */
		struct stat now;
		bool same =
		    stat(spath, &now) == 0 && now.st_ino == ss.st_ino && now.st_dev == ss.st_dev;
		if (h && same) {
			/* LRU time, refreshed at most once a minute per entry */
			if (time(NULL) - ks.st_mtime > JIT_TOUCH_INTERVAL)
				futimens(kfd, NULL);
			close(kfd);
			close(sfd);
			*handle = h;
			return true;
		}
		const char *e = h ? NULL : dlerror();
		if (h)
			dlclose(h);
		if (!same) {
			close(kfd);
			close(sfd);
			return false;
		}
		snprintf(why, sizeof why, "dlopen: %s", e ? e : "failed");
		r = CHECK_BAD;
	}
	if (kfd >= 0)
		close(kfd);
	if (sfd >= 0)
		close(sfd);
	if (r == CHECK_BAD) {
		st->n.corrupt++;
		jit_warn(st, "code cache entry %s is bad (%s): removed, rebuilding", dir, why);
		remove_entry(st, dir);
	}
	return false;
}

/* Create file name in folder dir and write the pieces into it. */
static bool write_file(const char *dir, const char *name, const void *a, size_t an, const void *b,
                       size_t bn, const void *c, size_t cn, const void *d, size_t dn)
{
	char path[PATH_MAX];
	if (!jit_fmt(path, sizeof path, "%s/%s", dir, name))
		return false;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return false;
	bool ok = jit_write_all(fd, a, an) && jit_write_all(fd, b, bn) &&
	          jit_write_all(fd, c, cn) && jit_write_all(fd, d, dn);
	int e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	errno = e;
	return ok;
}

void jit_disk_publish(jit_state *st, const jit_config *cfg, const char *src, size_t len,
                      const char *digest, const unsigned char *so, size_t so_len)
{
	if (!st->code_dir)
		return;
	char shard[PATH_MAX], tmp[PATH_MAX], final[PATH_MAX];
	if (!jit_fmt(shard, sizeof shard, "%s/%.2s", st->code_dir, digest) ||
	    !jit_fmt(tmp, sizeof tmp, "%s/.tmp-XXXXXX", shard) ||
	    !entry_path(st, digest, NULL, final, sizeof final))
		return;
	int r = mkdir(shard, 0700);
	if (r != 0 && errno == ENOENT) {
		/* the folder was removed under us (rm -rf of the cache):
		 * make it again, ours and private */
		make_dirs(st->code_dir);
		r = mkdir(shard, 0700);
	}
	if (r != 0 && errno != EEXIST) {
		st->n.publish_failed++;
		jit_warn(st, "cannot create %s: %s; the code is not cached", shard,
		         strerror(errno));
		return;
	}
	char why[PATH_MAX + 128];
	if (!jit_path_safe(shard, true, false, why, sizeof why)) {
		st->n.publish_failed++;
		return; /* the lookup warned about it */
	}
	if (!mkdtemp(tmp)) {
		st->n.publish_failed++;
		jit_warn(st, "cannot create a folder in %s: %s; the code is not cached", shard,
		         strerror(errno));
		return;
	}
	XXH128_hash_t h = XXH3_128bits(so, so_len);
	char so_hex[JIT_DIGEST_HEX];
	hex16(&h, so_hex);
	char srchdr[48];
	int sn = snprintf(srchdr, sizeof srchdr, "source %zu\n", len);
	char hdr[256];
	int hn = snprintf(hdr, sizeof hdr,
	                  KEY_MAGIC " %d\nso-bytes %zu\nso-xxh128 %s\nkey-bytes %zu\n\n",
	                  JIT_FORMAT_VERSION, so_len, so_hex, cfg->text_len + (size_t)sn + len);
	if (!write_file(tmp, SO_FILE, so, so_len, "", 0, "", 0, "", 0) ||
	    !write_file(tmp, KEY_FILE, hdr, (size_t)hn, cfg->text, cfg->text_len, srchdr,
	                (size_t)sn, src, len)) {
		st->n.publish_failed++;
		jit_warn(st, "cannot write the code cache entry %s: %s; the code is not cached",
		         tmp, strerror(errno));
		rm_flat(tmp);
		return;
	}
	if (rename(tmp, final) != 0) {
		/* EEXIST/ENOTEMPTY: another process published the same key
		 * first; its entry is as good as ours */
		if (errno != EEXIST && errno != ENOTEMPTY) {
			st->n.publish_failed++;
			jit_warn(st, "cannot publish the code cache entry %s: %s", final,
			         strerror(errno));
		}
		rm_flat(tmp);
	}
}

/* ------------------------------------------------------------ walking the folder */

typedef enum walk_kind { WALK_ENTRY, WALK_TEMP } walk_kind;
/* Called for each entry or temp folder: its shard folder (open as sfd),
 * its name in it and its full path. */
typedef void (*walk_fn)(jit_state *st, int sfd, const char *shard, const char *name,
                        const char *path, walk_kind kind, void *ud);

static void walk(jit_state *st, walk_fn fn, void *ud)
{
	DIR *top = opendir(st->code_dir);
	if (!top) {
		jit_warn(st, "cannot read %s: %s", st->code_dir, strerror(errno));
		return;
	}
	struct dirent *e;
	while ((e = readdir(top))) {
		if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2))
			continue;
		int sfd =
		    openat(dirfd(top), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0)
			continue;
		DIR *sd = fdopendir(sfd);
		if (!sd) {
			close(sfd);
			continue;
		}
		struct dirent *f;
		while ((f = readdir(sd))) {
			walk_kind kind;
			if (strlen(f->d_name) == 30 && is_hex(f->d_name, 30))
				kind = WALK_ENTRY;
			else if (strncmp(f->d_name, ".tmp-", 5) == 0 ||
			         strncmp(f->d_name, ".trash-", 7) == 0)
				kind = WALK_TEMP;
			else
				continue;
			char path[PATH_MAX];
			if (jit_fmt(path, sizeof path, "%s/%s/%s", st->code_dir, e->d_name,
			            f->d_name))
				fn(st, sfd, e->d_name, f->d_name, path, kind, ud);
		}
		closedir(sd);
	}
	closedir(top);
}

/* Sweep a temp folder left by a crashed process (older than JIT_ORPHAN_AGE). */
static void sweep_temp(jit_state *st, int sfd, const char *name, const char *path)
{
	struct stat sb;
	if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (time(NULL) - sb.st_mtime < JIT_ORPHAN_AGE)
		return;
	if (rm_flat(path))
		st->n.swept++;
}

/* Size and LRU time of the entry name in shard folder sfd. */
static void entry_size(int sfd, const char *name, int64_t *bytes, struct timespec *mtime)
{
	char p[64];
	struct stat sb;
	*bytes = 0;
	mtime->tv_sec = 0;
	mtime->tv_nsec = 0;
	if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
		*mtime = sb.st_mtim;
	snprintf(p, sizeof p, "%s/" KEY_FILE, name);
	if (fstatat(sfd, p, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		*bytes += sb.st_size;
		*mtime = sb.st_mtim;
	}
	snprintf(p, sizeof p, "%s/" SO_FILE, name);
	if (fstatat(sfd, p, &sb, AT_SYMLINK_NOFOLLOW) == 0)
		*bytes += sb.st_size;
}

typedef struct totals {
	int64_t entries, bytes;
} totals;

static void totals_fn(jit_state *st, int sfd, const char *shard, const char *name, const char *path,
                      walk_kind kind, void *ud)
{
	(void)st;
	(void)shard;
	(void)path;
	if (kind != WALK_ENTRY)
		return;
	totals *t = ud;
	int64_t b;
	struct timespec m;
	entry_size(sfd, name, &b, &m);
	t->entries++;
	t->bytes += b;
}

void jit_disk_totals(jit_state *st, int64_t *entries, int64_t *bytes)
{
	totals t = {0, 0};
	if (st->code_dir)
		walk(st, totals_fn, &t);
	*entries = t.entries;
	*bytes = t.bytes;
}

/* ------------------------------------------------------------ prune */

typedef struct prune_entry {
	struct timespec mtime;
	int64_t bytes;
	char digest[JIT_DIGEST_HEX]; /* names the entry: no path kept per entry */
} prune_entry;

typedef struct prune_list {
	prune_entry *v;
	int n, cap;
	int64_t total;
	bool failed;
} prune_list;

static void prune_fn(jit_state *st, int sfd, const char *shard, const char *name, const char *path,
                     walk_kind kind, void *ud)
{
	prune_list *l = ud;
	if (kind == WALK_TEMP) {
		sweep_temp(st, sfd, name, path);
		return;
	}
	if (l->failed || !ct_vec_grow(st->ctx, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
		l->failed = true;
		return;
	}
	prune_entry *e = &l->v[l->n++];
	entry_size(sfd, name, &e->bytes, &e->mtime);
	snprintf(e->digest, sizeof e->digest, "%s%s", shard, name);
	l->total += e->bytes;
}

static int by_age(const void *a, const void *b)
{
	const prune_entry *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->digest, y->digest);
}

void jit_disk_prune(jit_state *st, bool force)
{
	if (!jit_disk_ready(st))
		return;
	char stamp[PATH_MAX];
	if (!jit_fmt(stamp, sizeof stamp, "%s/.prune-stamp", st->code_dir))
		return;
	/* debounced across processes by the stamp's time: scanning a big
	 * cache after every compile would cost more than the compile */
	struct stat sb;
	time_t now = time(NULL);
	if (!force && stat(stamp, &sb) == 0 && sb.st_mtime <= now &&
	    now - sb.st_mtime < JIT_PRUNE_INTERVAL)
		return;
	int fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	prune_list l = {0};
	walk(st, prune_fn, &l);
	if (!l.failed && l.total > st->max_bytes) {
		qsort(l.v, (size_t)l.n, sizeof *l.v, by_age);
		/* down to 90% of the cap, so the next compiles do not prune again */
		int64_t target = st->max_bytes - st->max_bytes / 10;
		for (int i = 0; i < l.n && l.total > target; i++) {
			char path[PATH_MAX];
			if (entry_path(st, l.v[i].digest, NULL, path, sizeof path))
				remove_entry(st, path);
			l.total -= l.v[i].bytes;
			st->n.evicted++;
		}
	}
	ct_free(st->ctx, l.v);
}

/* ------------------------------------------------------------ verify and clear */

static void verify_fn(jit_state *st, int sfd, const char *shard, const char *name, const char *path,
                      walk_kind kind, void *ud)
{
	if (kind == WALK_TEMP) {
		sweep_temp(st, sfd, name, path);
		return;
	}
	int64_t *bad = ud;
	char digest[JIT_DIGEST_HEX], p[64], why[256];
	snprintf(digest, sizeof digest, "%s%s", shard, name);
	snprintf(p, sizeof p, "%s/" KEY_FILE, name);
	int kfd = openat(sfd, p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	snprintf(p, sizeof p, "%s/" SO_FILE, name);
	int ofd = openat(sfd, p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int r;
	if (kfd < 0 || ofd < 0) {
		snprintf(why, sizeof why, "%s missing", kfd < 0 ? "key file" : "shared object");
		r = CHECK_BAD;
	} else {
		r = entry_check(st, kfd, ofd, digest, NULL, NULL, 0, why, sizeof why, NULL, NULL);
	}
	if (kfd >= 0)
		close(kfd);
	if (ofd >= 0)
		close(ofd);
	if (r == CHECK_BAD) {
		(*bad)++;
		st->n.corrupt++;
		jit_warn(st, "code cache entry %s is bad (%s): removed", path, why);
		remove_entry(st, path);
	}
}

ct_status jit_disk_verify(jit_state *st, int64_t *bad)
{
	*bad = 0;
	walk(st, verify_fn, bad);
	return CT_OK;
}

static void clear_fn(jit_state *st, int sfd, const char *shard, const char *name, const char *path,
                     walk_kind kind, void *ud)
{
	(void)shard;
	(void)ud;
	if (kind == WALK_TEMP)
		sweep_temp(st, sfd, name, path); /* young ones may be another process's publish */
	else
		remove_entry(st, path);
}

ct_status jit_disk_clear(jit_state *st)
{
	walk(st, clear_fn, NULL);
	return CT_OK;
}
