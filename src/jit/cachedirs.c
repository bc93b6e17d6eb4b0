/* cachedirs.c: every folder cachet writes in its cache folder, counted and cleared by name, never by guess. */
#include "jit/jit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * The cache folder ROOT holds, besides the compiled kernels of code-v1
 * (diskcache.c):
 *   blob-v1/HEX.bin        OpenCL program binaries (blobcache.c), HEX 32
 *                          hex digits; .HEX.PID.tmp while one is written;
 *   pocl-v1/...            PoCL's own kernel cache, when the cachet tool
 *                          points PoCL there (POCL_CACHE_DIR unset): device
 *                          folders and program folders named by PoCL's
 *                          hashes (letters A-P), and tempfile_* files
 *                          (removed once older than JIT_ORPHAN_AGE);
 *   NAME.sqlite            tuning stores (src/tune/store.c): records a
 *                          tune paid for, so counted but never cleared.
 * Only names of these shapes are counted or removed: a file a user put in
 * one of these folders (or any other file of ROOT) is left alone.
 */

static bool all_in(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

/* blob-v1: "HEX.bin" with 32 hex digits. */
static bool blob_name(const char *s)
{
	return strlen(s) == 36 && all_in(s, 32, "0123456789abcdef") && strcmp(s + 32, ".bin") == 0;
}

/* blob-v1: ".HEX.PID.tmp", a blob being written (or left by a crash). */
static bool blob_tmp_name(const char *s)
{
	size_t n = strlen(s);
	return n > 38 && s[0] == '.' && all_in(s + 1, 32, "0123456789abcdef") && s[33] == '.' &&
	       strcmp(s + n - 4, ".tmp") == 0;
}

/* pocl-v1: PoCL names its device and program folders with letters A-P. */
static bool pocl_dir_name(const char *s)
{
	size_t n = strlen(s);
	return n >= 2 && all_in(s, n, "ABCDEFGHIJKLMNOP");
}

static bool pocl_tmp_name(const char *s)
{
	return strncmp(s, "tempfile_", 9) == 0;
}

/* Add the size of every file under folder fd (not following links). */
static void tree_bytes(int fd, int64_t *bytes, int depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat sb;
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(sb.st_mode) && depth < 16) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				tree_bytes(sub, bytes, depth + 1);
		} else if (S_ISREG(sb.st_mode)) {
			*bytes += sb.st_size;
		}
	}
	closedir(d);
}

/* Remove everything under folder fd, then nothing else (links are removed,
 * never followed). false when something could not be removed. */
static bool tree_remove(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	bool ok = true;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			ok = ok && errno == ENOENT;
			continue;
		}
		int sub = depth < 16 ? openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (sub < 0 || !tree_remove(sub, depth + 1) || unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0)
			ok = ok && errno == ENOENT;
	}
	closedir(d);
	return ok;
}

/* Open ROOT/name as a folder (no links followed); -1 when absent. */
static int open_sub(const jit_state *st, const char *name)
{
	char path[PATH_MAX];
	if (!st->root || !jit_fmt(path, sizeof path, "%s/%s", st->root, name))
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The folder name under the cache root, opened for a walk; NULL with
 * *absent set when it does not exist (or cannot be opened as a folder),
 * NULL with *absent clear when it could not be read. */
static DIR *open_dir_sub(const jit_state *st, const char *name, bool *absent)
{
	int fd = open_sub(st, name);
	*absent = fd < 0;
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

/* What a folder walk does with each name it owns. */
typedef enum dir_op { OP_COUNT, OP_CLEAR } dir_op;

/* blob-v1: count or remove the blobs (and temp files older than
 * JIT_ORPHAN_AGE: a young one is another process's write). */
static bool blob_walk(jit_state *st, dir_op op, int64_t *entries, int64_t *bytes)
{
	bool absent = false;
	DIR *d = open_dir_sub(st, "blob-v1", &absent);
	if (!d)
		return absent; /* a folder that is not there holds nothing to count or clear */
	bool ok = true;
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		bool blob = blob_name(e->d_name), tmp = !blob && blob_tmp_name(e->d_name);
		struct stat sb;
		if ((!blob && !tmp) || fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		if (op == OP_COUNT) {
			*entries += blob;
			*bytes += sb.st_size;
		} else if ((blob || now - sb.st_mtime >= JIT_ORPHAN_AGE) && unlinkat(dirfd(d), e->d_name, 0) != 0 &&
		           errno != ENOENT) {
			ok = false;
		}
	}
	closedir(d);
	return ok;
}

/* pocl-v1: count (program folders) or remove PoCL's folders and temp
 * files. */
static bool pocl_walk(jit_state *st, dir_op op, int64_t *entries, int64_t *bytes)
{
	bool absent = false;
	DIR *d = open_dir_sub(st, "pocl-v1", &absent);
	if (!d)
		return absent; /* a folder that is not there holds nothing to count or clear */
	bool ok = true;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat sb;
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(sb.st_mode) && pocl_tmp_name(e->d_name)) {
			if (op == OP_COUNT)
				*bytes += sb.st_size;
			else if (time(NULL) - sb.st_mtime >= JIT_ORPHAN_AGE && unlinkat(dirfd(d), e->d_name, 0) != 0 &&
			         errno != ENOENT) /* a young one may be another process's write */
				ok = false;
			continue;
		}
		if (!S_ISDIR(sb.st_mode) || !pocl_dir_name(e->d_name))
			continue;
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (op == OP_COUNT) {
			/* each folder in a device folder is one program */
			int cnt = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			DIR *pd = cnt >= 0 ? fdopendir(cnt) : NULL;
			struct dirent *p;
			while (pd && (p = readdir(pd)))
				*entries += pocl_dir_name(p->d_name);
			if (pd)
				closedir(pd);
			else if (cnt >= 0)
				close(cnt);
			tree_bytes(sub, bytes, 0);
		} else if (!tree_remove(sub, 0) || (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)) {
			ok = false;
		}
	}
	closedir(d);
	return ok;
}

/* Tuning stores ROOT/NAME.sqlite: counted, never removed here. */
static void tune_count(jit_state *st, int64_t *entries, int64_t *bytes)
{
	DIR *d = st->root ? opendir(st->root) : NULL;
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct stat sb;
		if (n > 7 && strcmp(e->d_name + n - 7, ".sqlite") == 0 &&
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode)) {
			(*entries)++;
			*bytes += sb.st_size;
		}
	}
	closedir(d);
}

int jit_cache_folders(jit_state *st, ct_cache_folder *out, int cap)
{
	static const struct {
		const char *name, *what;
	} rows[JIT_CACHE_FOLDERS] = {
		{"code-v1", "compiled kernels (shared objects)"},
		{"blob-v1", "OpenCL program binaries"},
		{"pocl-v1", "PoCL's kernel cache (set by the cachet tool when POCL_CACHE_DIR is unset)"},
		{"*.sqlite", "tuning stores (kept by clear)"},
	};
	for (int i = 0; i < JIT_CACHE_FOLDERS && i < cap; i++) {
		ct_cache_folder *f = &out[i];
		memset(f, 0, sizeof *f);
		f->name = rows[i].name;
		f->what = rows[i].what;
		switch (i) {
		case 0: jit_disk_totals(st, &f->entries, &f->bytes); break;
		case 1: blob_walk(st, OP_COUNT, &f->entries, &f->bytes); break;
		case 2: pocl_walk(st, OP_COUNT, &f->entries, &f->bytes); break;
		default: tune_count(st, &f->entries, &f->bytes); break;
		}
	}
	return JIT_CACHE_FOLDERS;
}

ct_status jit_cache_clear_others(jit_state *st)
{
	int64_t e = 0, b = 0;
	bool ok = blob_walk(st, OP_CLEAR, &e, &b);
	ok = pocl_walk(st, OP_CLEAR, &e, &b) && ok;
	if (!ok)
		return ct_error(st->ctx, CT_ERR_IO, "cannot remove everything in %s/blob-v1 and %s/pocl-v1: %s",
		                st->root, st->root, strerror(errno));
	return CT_OK;
}
