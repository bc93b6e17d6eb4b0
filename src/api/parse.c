/* parse.c: the front door from text to a checked kernel: parse and check (lang), then lower, plan and emit once (gen_validate). */
#include "lang/lang.h"
#include "gen/gen.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Lower, plan and emit once (gen_validate), so that what lower, emit,
 * build and run would refuse is reported when the file is checked. */
static ct_status validate_plan(ct_kernel *k) { return gen_validate(k); }

static ct_kernel *validated(ct_kernel *k)
{
	if (k && validate_plan(k) != CT_OK) {
		ct_kernel_free(k);
		return NULL;
	}
	return k;
}

ct_kernel *ct_kernel_parse(ct_ctx *ctx, const char *text, size_t len, const char *file)
{
	if (!ctx)
		return NULL;
	if (!text && len) {
		ct_error(ctx, CT_ERR_USAGE, "ct_kernel_parse: text is NULL");
		return NULL;
	}
	return validated(lang_parse(ctx, text, len, file));
}

ct_kernel *ct_kernel_parse_file(ct_ctx *ctx, const char *path)
{
	if (!ctx)
		return NULL;
	if (!path) {
		ct_error(ctx, CT_ERR_USAGE, "ct_kernel_parse_file: path is NULL");
		return NULL;
	}
	ct_ctx_clear_error(ctx);
	FILE *f = fopen(path, "rb");
	if (!f) {
		ct_error_at(ctx, CT_ERR_IO, path, 0, 0, "cannot open '%s': %s", path,
		            strerror(errno));
		return NULL;
	}
	size_t cap = 4096, len = 0;
	char *buf = ct_alloc(ctx, cap);
	while (buf) {
		if (len == cap) {
			if (cap > LANG_MAX_TEXT) {
				ct_error_at(ctx, CT_ERR_LIMIT, path, 0, 0,
				            "'%s' is too large (at most %zu bytes)", path,
				            LANG_MAX_TEXT);
				ct_free(ctx, buf);
				fclose(f);
				return NULL;
			}
			char *nb = ct_realloc(ctx, buf, cap * 2);
			if (!nb) {
				ct_free(ctx, buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	bool bad = !buf || ferror(f);
	int err = errno;
	fclose(f);
	if (bad) {
		if (buf)
			ct_error_at(ctx, CT_ERR_IO, path, 0, 0, "cannot read '%s': %s", path,
			            strerror(err ? err : EIO));
		ct_free(ctx, buf);
		return NULL;
	}
	ct_kernel *k = lang_parse(ctx, buf, len, path);
	ct_free(ctx, buf);
	return validated(k);
}

ct_status ct_kernel_recheck(ct_kernel *k)
{
	if (!k)
		return CT_ERR_USAGE;
	ct_status st = lang_recheck(k);
	if (st == CT_OK)
		st = validate_plan(k);
	k->stale = st != CT_OK;
	return st;
}
