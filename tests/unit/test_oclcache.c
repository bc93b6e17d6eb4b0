/* test_oclcache.c: OpenCL programs cached in the ctx ("memory") and as binaries on disk ("disk"): keys that change with the device and options, corrupt entries reported and rebuilt. */
#include "cachet.h"
#include "harness.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * One small kernel with work-groups (a split index): every run is verified
 * against the interpreter by ct_kernel_run. Each case uses its own cache
 * folder, so "compiled" / "disk" / "memory" are what this test made.
 */

static const char kernel_src[] = "kernel scale\n"
                                 "param N = 37\n"
                                 "array X : f32[N] input\n"
                                 "array Y : f32[N] inout\n"
                                 "for (i: N) {\n"
                                 "  Y[i] = 3 * X[i] + Y[i]\n"
                                 "}\n"
                                 "schedule {\n  ii = split(i, 8)\n}\n"
                                 "plan(target=opencl) {\n  parallelize(i)\n}\n";

static char warned[2048];

static void on_warn(void *ud, const char *msg)
{
	(void)ud;
	snprintf(warned, sizeof warned, "%s", msg);
}

/* A fresh cache folder for one case. */
static void fresh_dir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "%s/cachet-oclcache-%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(),
	         name);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot empty %s\n", dir);
}

/* A ctx on cache folder dir, with warnings captured. */
static ct_ctx *ctx_on(const char *dir)
{
	ct_ctx *ctx = ct_ctx_new();
	if (ctx) {
		ct_cache_set_dir(ctx, dir);
		ct_cache_set_warning_handler(ctx, on_warn, NULL);
	}
	return ctx;
}

/* Run the kernel on ctx: how the program was found ("" on failure). */
static const char *run_how(ct_ctx *ctx)
{
	ct_kernel *k = ct_kernel_parse(ctx, kernel_src, sizeof kernel_src - 1, "scale.cachet");
	if (!k) {
		fprintf(stderr, "parse: %s\n", ct_ctx_last_message(ctx));
		return "";
	}
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	memset(&r, 0, sizeof r);
	ct_status st = ct_kernel_run(k, &o, &r);
	const char *how = st == CT_OK && r.verified == 1 && strcmp(r.engine, "opencl") == 0 ? r.code_cache : "";
	if (!*how)
		fprintf(stderr, "run: %s\n", ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	return how;
}

/* Room for a blob's path: the folder (at most 4199 bytes) and a name. */
#define BLOB_PATH (4200 + 260)

static unsigned char *slurp(const char *path, size_t *n);
static bool has(const unsigned char *b, size_t n, const char *s);

/* Whether the blob at path is the device's warm-up record (its key names
 * it), which holds the key of the binary kept last. */
static bool is_record(const char *path)
{
	size_t n = 0;
	unsigned char *b = slurp(path, &n);
	bool r = b && has(b, n, "opencl-warmup\n");
	free(b);
	return r;
}

/* The path of the only program binary in dir/blob-v1, the warm-up record
 * aside (false when not exactly one). */
static bool the_blob(const char *dir, char *path, size_t cap)
{
	char sub[4200], p[BLOB_PATH];
	snprintf(sub, sizeof sub, "%s/blob-v1", dir);
	DIR *d = opendir(sub);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strlen(e->d_name) == 36 && strcmp(e->d_name + 32, ".bin") == 0) {
			snprintf(p, sizeof p, "%s/%s", sub, e->d_name);
			if (!is_record(p)) {
				snprintf(path, cap, "%s", p);
				n++;
			}
		}
	if (d)
		closedir(d);
	return n == 1;
}

/* The number of blobs in dir/blob-v1. */
static int blob_count(const char *dir)
{
	char sub[4200];
	snprintf(sub, sizeof sub, "%s/blob-v1", dir);
	DIR *d = opendir(sub);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strlen(e->d_name) == 36 && strcmp(e->d_name + 32, ".bin") == 0;
	if (d)
		closedir(d);
	return n;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = len > 0 ? malloc((size_t)len) : NULL;
	*n = b && fread(b, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
	fclose(f);
	return b;
}

static bool has(const unsigned char *b, size_t n, const char *s)
{
	size_t m = strlen(s);
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(b + i, s, m) == 0)
			return true;
	return false;
}

/* compiled, then memory in the same ctx, then disk in a new ctx. */
static void test_memory_then_disk(void)
{
	char dir[4096];
	fresh_dir(dir, sizeof dir, "md");
	ct_ctx *a = ctx_on(dir);
	const char *h = run_how(a);
	CHECKF(strcmp(h, "compiled") == 0, "first run: '%s'", h);
	h = run_how(a);
	CHECKF(strcmp(h, "memory") == 0, "same ctx again: '%s'", h);
	ct_ctx *b = ctx_on(dir);
	h = run_how(b);
	CHECKF(strcmp(h, "disk") == 0, "new ctx: '%s'", h);
	h = run_how(b);
	CHECKF(strcmp(h, "memory") == 0, "new ctx again: '%s'", h);
	ct_ctx_free(a);
	ct_ctx_free(b);
}

/* The key holds platform, device, driver versions and build options: the
 * kept file names them, and other options never load that binary. */
static void test_key(void)
{
	char dir[4096], path[BLOB_PATH], desc[1024];
	fresh_dir(dir, sizeof dir, "key");
	ct_ctx *a = ctx_on(dir);
	CHECK(ct_opencl_device(a, desc, sizeof desc) == CT_OK);
	CHECK(strcmp(run_how(a), "compiled") == 0);
	CHECK(the_blob(dir, path, sizeof path));
	size_t n = 0;
	unsigned char *b = slurp(path, &n);
	CHECKF(b && has(b, n, desc), "the key lacks the device description '%s'", desc);
	CHECK(b && has(b, n, " | driver ")); /* the driver version, named */
	free(b);
	ct_ctx_free(a);
	setenv("CACHET_OPENCL_OPTIONS", "-DCT_TEST_OPTION=1", 1);
	a = ctx_on(dir);
	const char *h = run_how(a);
	CHECKF(strcmp(h, "compiled") == 0, "other build options loaded the binary: '%s'", h);
	ct_ctx_free(a);
	unsetenv("CACHET_OPENCL_OPTIONS");
	a = ctx_on(dir);
	h = run_how(a);
	CHECKF(strcmp(h, "disk") == 0, "the first options again: '%s'", h);
	ct_ctx_free(a);
}

/* A blob whose bytes changed is reported, removed and rebuilt (and the
 * rebuilt one loads). */
static void test_corrupt(void)
{
	char dir[4096], path[BLOB_PATH];
	fresh_dir(dir, sizeof dir, "bad");
	ct_ctx *a = ctx_on(dir);
	CHECK(strcmp(run_how(a), "compiled") == 0);
	ct_ctx_free(a);
	CHECK(the_blob(dir, path, sizeof path));
	size_t n = 0;
	unsigned char *b = slurp(path, &n);
	CHECK(b && n > 1000);
	if (b && n > 1000) {
		b[n - 100] ^= 0x5a; /* inside the binary */
		FILE *f = fopen(path, "wb");
		CHECK(f && fwrite(b, 1, n, f) == n);
		if (f)
			fclose(f);
	}
	free(b);
	warned[0] = 0;
	a = ctx_on(dir);
	const char *h = run_how(a);
	CHECKF(strcmp(h, "compiled") == 0, "a corrupt binary: '%s'", h);
	CHECKF(strstr(warned, "is bad (checksum mismatch)") != NULL, "warning '%s'", warned);
	ct_cache_info ci;
	CHECK(ct_cache_stats(a, &ci) == CT_OK && ci.corrupt == 1);
	ct_ctx_free(a);
	a = ctx_on(dir);
	h = run_how(a);
	CHECKF(strcmp(h, "disk") == 0, "the rebuilt binary: '%s'", h);
	ct_ctx_free(a);
	/* a truncated file too */
	CHECK(the_blob(dir, path, sizeof path));
	CHECK(truncate(path, 20) == 0);
	warned[0] = 0;
	a = ctx_on(dir);
	h = run_how(a);
	CHECKF(strcmp(h, "compiled") == 0 && strstr(warned, "is bad"), "truncated: '%s', warning '%s'", h, warned);
	ct_ctx_free(a);
}

/* Keeping a binary also writes the device's warm-up record (the key of
 * the binary kept last), which the next ctx's device open loads; a record
 * whose binary is gone is skipped without a warning, and a record whose
 * bytes changed is reported and removed like any bad entry. */
static void test_warm_up(void)
{
	char dir[4096], path[BLOB_PATH];
	fresh_dir(dir, sizeof dir, "warm");
	ct_ctx *a = ctx_on(dir);
	CHECK(strcmp(run_how(a), "compiled") == 0);
	ct_ctx_free(a);
	CHECKF(blob_count(dir) == 2, "blobs after one kept binary: %d", blob_count(dir));
	CHECK(the_blob(dir, path, sizeof path));
	CHECK(unlink(path) == 0); /* the record now names a missing binary */
	warned[0] = 0;
	a = ctx_on(dir);
	const char *h = run_how(a);
	CHECKF(strcmp(h, "compiled") == 0 && warned[0] == 0, "record of a missing binary: '%s', warning '%s'", h,
	       warned);
	ct_ctx_free(a);
	CHECK(blob_count(dir) == 2);
	a = ctx_on(dir);
	CHECK(strcmp(run_how(a), "disk") == 0);
	ct_ctx_free(a);
}

/* CACHET_NO_CACHE=1: neither the ctx's programs nor the disk. */
static void test_no_cache(void)
{
	char dir[4096];
	fresh_dir(dir, sizeof dir, "nc");
	setenv("CACHET_NO_CACHE", "1", 1);
	ct_ctx *a = ctx_on(dir);
	CHECK(strcmp(run_how(a), "compiled") == 0);
	CHECK(strcmp(run_how(a), "compiled") == 0);
	ct_ctx_free(a);
	unsetenv("CACHET_NO_CACHE");
}

int main(void)
{
	RUN(test_memory_then_disk);
	RUN(test_key);
	RUN(test_corrupt);
	RUN(test_warm_up);
	RUN(test_no_cache);
	char dir[4096];
	const char *names[] = {"md", "key", "bad", "warm", "nc"};
	for (int i = 0; i < 5; i++)
		fresh_dir(dir, sizeof dir, names[i]); /* removes it */
	return h_report();
}
