/* blobcache.c: byte blobs (OpenCL program binaries, CUDA cubins) kept in the code cache's folder, looked up by their whole key. */
#include "jit/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/*
 * An entry is the file ROOT/blob-v1/DIGEST.bin (DIGEST: hex XXH3-128 of
 * the key) holding "ctblob2\n", the key's length and bytes, the blob's
 * length and bytes, and the XXH3-128 of the blob (lengths as 8
 * little-endian bytes; the checksum in canonical byte order). A hit
 * compares the whole key, so a digest collision is a miss. A file whose
 * header, length or checksum is wrong (a torn disk write, an older format,
 * an edit) is reported as a warning, counted as corrupt and removed: the
 * caller rebuilds. Entries are written to a temporary file and renamed into
 * place: readers never see half a file. The code cache's folder checks
 * (owner, mode) and CACHET_NO_CACHE apply.
 */

#define BLOB_MAGIC "ctblob2\n"
#define BLOB_MAX ((size_t)256 << 20)

static void blob_digest(const char *key, size_t klen, char hex[JIT_DIGEST_HEX])
{
	XXH128_hash_t h = XXH3_128bits(key, klen);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, h);
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		hex[2 * i] = digits[c.digest[i] >> 4];
		hex[2 * i + 1] = digits[c.digest[i] & 15];
	}
	hex[32] = 0;
}

/* The folder of the blobs (created), or false when the cache is off or the
 * folder fails the folder policy (a warning: its files are not read). */
static bool blob_dir(ct_ctx *ctx, char *dir, size_t cap)
{
	jit_state *st = jit_state_get(ctx);
	if (!st || st->no_cache || !jit_disk_ready(st) || !st->root)
		return false;
	if (!jit_fmt(dir, cap, "%s/blob-v1", st->root))
		return false;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	char why[4200];
	if (jit_path_safe(dir, true, false, why, sizeof why))
		return true;
	jit_warn(st, "OpenCL binary cache not used: %s", why);
	return false;
}

/* The canonical XXH3-128 of n bytes. */
static void blob_sum(const void *data, size_t n, unsigned char out[16])
{
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits(data, n));
	memcpy(out, c.digest, 16);
}

static void put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The path of key's entry (false: cache off or path too long). */
static bool blob_path(ct_ctx *ctx, const char *key, size_t klen, char *path, size_t cap)
{
	char dir[4096], hex[JIT_DIGEST_HEX];
	if (!blob_dir(ctx, dir, sizeof dir))
		return false;
	blob_digest(key, klen, hex);
	return jit_fmt(path, cap, "%s/%s.bin", dir, hex);
}

/* Report the entry at path as bad, count it, remove it. */
static void blob_bad(ct_ctx *ctx, const char *path, const char *why)
{
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return;
	st->n.corrupt++;
	jit_warn(st, "GPU binary cache entry %s is bad (%s): removed, rebuilding", path, why);
	unlink(path);
}

ct_status jit_blob_get(ct_ctx *ctx, const char *key, size_t klen, void **data, size_t *n)
{
	*data = NULL;
	*n = 0;
	char path[4200];
	if (!blob_path(ctx, key, klen, path, sizeof path))
		return CT_OK;
	unsigned char *f = NULL;
	size_t flen = 0;
	struct stat sb;
	char why_unsafe[4400];
	if (lstat(path, &sb) == 0 && !jit_stat_safe(&sb, false, path, why_unsafe, sizeof why_unsafe)) {
		blob_bad(ctx, path, why_unsafe);
		return CT_OK;
	}
	if (access(path, R_OK) != 0 || jit_read_file(ctx, path, BLOB_MAX, &f, &flen) != CT_OK) {
		ct_ctx_clear_error(ctx); /* a miss is no error */
		return CT_OK;
	}
	size_t m = sizeof BLOB_MAGIC - 1;
	const char *why = NULL;
	uint64_t bn = 0;
	if (flen < m + 16 || memcmp(f, BLOB_MAGIC, m) != 0) {
		why = "not a cachet blob of this format";
	} else if (get_u64(f + m) != klen || flen < m + 16 + klen) {
		why = get_u64(f + m) > flen ? "truncated" : NULL; /* another key: a digest collision, a miss */
	} else if (memcmp(f + m + 8, key, klen) != 0) {
		why = NULL;
	} else if (flen < m + 32 + klen || (bn = get_u64(f + m + 8 + klen)) != flen - m - 32 - klen) {
		why = "its length does not match the file's";
	} else {
		unsigned char sum[16];
		blob_sum(f + m + 16 + klen, bn, sum);
		if (memcmp(sum, f + m + 16 + klen + bn, 16) != 0)
			why = "checksum mismatch";
		else if ((*data = malloc(bn ? bn : 1)) != NULL) {
			memcpy(*data, f + m + 16 + klen, bn);
			*n = bn;
		}
	}
	ct_free(ctx, f);
	if (why)
		blob_bad(ctx, path, why);
	return CT_OK;
}

void jit_blob_drop(ct_ctx *ctx, const char *key, size_t klen, const char *why)
{
	char path[4200];
	if (blob_path(ctx, key, klen, path, sizeof path) && access(path, F_OK) == 0)
		blob_bad(ctx, path, why);
}

void jit_blob_put(ct_ctx *ctx, const char *key, size_t klen, const void *data, size_t n)
{
	char dir[4096], path[4200], tmp[4300], hex[JIT_DIGEST_HEX];
	if (!blob_dir(ctx, dir, sizeof dir))
		return;
	blob_digest(key, klen, hex);
	if (!jit_fmt(path, sizeof path, "%s/%s.bin", dir, hex) ||
	    !jit_fmt(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, hex, (long)getpid()))
		return;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	unsigned char len8[8];
	bool ok = jit_write_all(fd, BLOB_MAGIC, sizeof BLOB_MAGIC - 1);
	put_u64(len8, klen);
	ok = ok && jit_write_all(fd, len8, 8) && jit_write_all(fd, key, klen);
	put_u64(len8, n);
	unsigned char sum[16];
	blob_sum(data, n, sum);
	ok = ok && jit_write_all(fd, len8, 8) && jit_write_all(fd, data, n) && jit_write_all(fd, sum, 16);
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}
