/* cmd_machine.c: the commands about this machine rather than a kernel: cache (stats, clear, verify, path) and probe. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cache_stats(ct_ctx *ctx)
{
	ct_cache_info info;
	ct_status st = ct_cache_stats(ctx, &info);
	if (st)
		return fail(ctx, st);
	printf("folder      %s%s\n", info.path, info.disk_enabled ? "" : " (not used)");
	ct_cache_folder f[8];
	int n = info.disk_enabled ? ct_cache_folders(ctx, f, 8) : 0;
	int64_t entries = 0, bytes = 0;
	for (int i = 0; i < n && i < 8; i++)
		if (strcmp(f[i].name, "*.sqlite") != 0) {
			entries += f[i].entries;
			bytes += f[i].bytes;
		}
	printf("entries     %lld\n", (long long)entries);
	printf("bytes       %lld (compiled kernels %lld of %lld)\n", (long long)bytes, (long long)info.bytes,
	       (long long)info.max_bytes);
	for (int i = 0; i < n && i < 8; i++)
		printf("  %-9s %6lld entries %10lld bytes  %s\n", f[i].name, (long long)f[i].entries,
		       (long long)f[i].bytes, f[i].what);
	return EXIT_OK;
}

/* `cache clear`: the library empties the folders; what is still there
 * afterwards (a read-only file system, another owner's files) is named,
 * folder by folder, and the exit code is 1. */
static int cache_clear(ct_ctx *ctx)
{
	ct_cache_set_warning_handler(ctx, quiet, NULL); /* the error below says it */
	ct_status st = ct_cache_clear(ctx);
	if (st)
		print_error(ctx);
	ct_cache_folder f[8];
	int n = ct_cache_folders(ctx, f, 8);
	int64_t left = 0;
	for (int i = 0; i < n && i < 8; i++)
		if (strcmp(f[i].name, "*.sqlite") != 0)
			left += f[i].entries;
	if (left > 0) {
		fprintf(stderr, "cachet: error: could not remove %lld entr%s of %s:", (long long)left,
		        left == 1 ? "y" : "ies", ct_cache_path(ctx));
		for (int i = 0; i < n && i < 8; i++)
			if (strcmp(f[i].name, "*.sqlite") != 0 && f[i].entries > 0)
				fprintf(stderr, " %s %lld (%lld bytes)", f[i].name, (long long)f[i].entries,
				        (long long)f[i].bytes);
		fputc('\n', stderr);
	}
	return st || left > 0 ? EXIT_FAILED : EXIT_OK;
}

int cmd_cache(cli *c)
{
	if (!c->sub)
		return usage_error("cache needs one of stats, clear, verify, path%s", "");
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc = EXIT_OK;
	ct_status st;
	if (strcmp(c->sub, "stats") == 0) {
		rc = cache_stats(ctx);
	} else if (strcmp(c->sub, "path") == 0) {
		printf("%s\n", ct_cache_path(ctx));
	} else if (strcmp(c->sub, "clear") == 0) {
		rc = cache_clear(ctx);
	} else if (strcmp(c->sub, "verify") == 0) {
		int64_t bad = 0;
		if ((st = ct_cache_verify(ctx, &bad)))
			rc = fail(ctx, st);
		else
			printf("%lld bad entr%s removed\n", (long long)bad, bad == 1 ? "y" : "ies");
	} else {
		rc = usage_error("unknown cache command '%s' (stats, clear, verify, path)", c->sub);
	}
	ct_ctx_free(ctx);
	return rc;
}

int cmd_probe(cli *c)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	int rc = EXIT_OK;
	ct_status st = ct_probe_run(ctx, CT_PROBE_MEASURE | CT_PROBE_OPENCL | CT_PROBE_CUDA, NULL);
	if (!st)
		st = ct_probe_print(ctx, c->json ? CT_FORMAT_JSON : CT_FORMAT_TEXT, stdout);
	if (st)
		rc = fail(ctx, st);
	ct_ctx_free(ctx);
	return rc;
}
