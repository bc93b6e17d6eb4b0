/* codecache.c: the code cache of a ctx: keys, the module memo, jit_load and the public
 * ct_module / ct_cache API. */
#include "jit/jit.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack: no allocation per key */
#include <xxhash.h>

#ifndef CACHET_VERSION_STR
#define CACHET_VERSION_STR CACHET_VERSION
#endif

/* Environment variables that change what the compiler produces, so they are
 * part of the key (TMPDIR and the like are not). */
static const char *const key_env[] = {"CPATH", "C_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX",
                                      "COMPILER_PATH"};


void jit_warn(jit_state *st, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (st->warn)
		st->warn(st->warn_ud, msg);
	else
		fprintf(stderr, "cachet: warning: %s\n", msg);
}

void jit_warn_ctx(ct_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	jit_state *st = jit_state_get(ctx);
	if (st)
		jit_warn(st, "%s", msg);
	else
		fprintf(stderr, "cachet: warning: %s\n", msg);
}

/* ------------------------------------------------------------ state */

static void module_unload(ct_ctx *ctx, ct_module *m)
{
	if (m->handle)
		dlclose(m->handle);
	ct_free(ctx, m->src);
	ct_free(ctx, m);
}

void jit_forget_memo(ct_ctx *ctx)
{
	jit_state *st = ctx ? ctx->code_cache : NULL;
	if (!st)
		return;
	for (ct_module *m = st->modules, *next; m; m = next) {
		next = m->next;
		module_unload(ctx, m);
	}
	st->modules = NULL;
	memset(st->front, 0, sizeof st->front);
	ct_free(ctx, st->table);
	st->table = NULL;
	st->table_cap = st->table_used = 0;
}

static void config_free(ct_ctx *ctx, jit_config *cfg)
{
	if (cfg->extra)
		for (int i = 0; i < cfg->nextra; i++)
			ct_free(ctx, cfg->extra[i]);
	ct_free(ctx, cfg->extra);
	ct_free(ctx, cfg->text);
	ct_free(ctx, cfg);
}

/* Registered with ct_ctx_on_free: unload every module, free the state. */
static void jit_state_free(ct_ctx *ctx)
{
	jit_state *st = ctx->code_cache;
	if (!st)
		return;
	jit_forget_memo(ctx);
	for (jit_config *c = st->configs, *next; c; c = next) {
		next = c->next;
		config_free(ctx, c);
	}
	for (jit_compiler *c = st->compilers, *next; c; c = next) {
		next = c->next;
		jit_compiler_free(st, c);
	}
	ct_free(ctx, st->env_cc);
	ct_free(ctx, st->cc_override);
	ct_free(ctx, st->dir_override);
	ct_free(ctx, st->version_copy);
	ct_free(ctx, st->root);
	ct_free(ctx, st->code_dir);
	ct_free(ctx, st->tmp_dir);
	ct_free(ctx, st->scratch);
	ct_free(ctx, st);
	ctx->code_cache = NULL;
}

/* A byte count with an optional K/M/G suffix (powers of 1024); -1 if bad. */
static int64_t parse_bytes(const char *s)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	int shift = 0;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > (INT64_MAX >> shift))
		return -1;
	return (int64_t)v << shift;
}

jit_state *jit_state_get(ct_ctx *ctx)
{
	if (ctx->code_cache)
		return ctx->code_cache;
	jit_state *st = ct_alloc(ctx, sizeof *st);
	if (!st)
		return NULL;
	st->ctx = ctx;
	st->version = CACHET_VERSION_STR;
	st->max_bytes = JIT_DEFAULT_MAX_BYTES;
	const char *cc = getenv("CC");
	const char *tmp = getenv("TMPDIR");
	if ((cc && *cc && !(st->env_cc = ct_strdup(ctx, cc))) ||
	    !(st->tmp_dir = ct_strdup(ctx, tmp && tmp[0] == '/' ? tmp : "/tmp"))) {
		ct_free(ctx, st->env_cc);
		ct_free(ctx, st);
		return NULL;
	}
	if (!ct_ctx_on_free(ctx, jit_state_free)) {
		ct_free(ctx, st->env_cc);
		ct_free(ctx, st->tmp_dir);
		ct_free(ctx, st);
		ct_error(ctx, CT_ERR_LIMIT, "too many ctx cleanup hooks");
		return NULL;
	}
	ctx->code_cache = st;
	const char *nc = getenv("CACHET_NO_CACHE");
	st->no_cache = nc && *nc && strcmp(nc, "0") != 0;
	const char *mb = getenv("CACHET_CACHE_MAX_BYTES");
	if (mb && *mb) {
		int64_t v = parse_bytes(mb);
		if (v > 0)
			st->max_bytes = v;
		else
			jit_warn(
			    st, "ignoring CACHET_CACHE_MAX_BYTES='%s' (want a positive byte count)",
			    mb);
	}
	return st;
}

/* ------------------------------------------------------------ keys */

/* Append "name <len> value\n" (length-prefixed, so the key text parses one
 * way only whatever the value holds). */
static void key_field(ct_buf *b, const char *name, const char *value)
{
	ct_buf_printf(b, "%s %zu ", name, strlen(value));
	ct_buf_puts(b, value);
	ct_buf_putc(b, '\n');
}

/* The canonical text of everything in the key but the source. */
static char *config_text(jit_state *st, const jit_config *cfg, size_t *len)
{
	const jit_compiler *cc = cfg->cc;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b, "cachet code key\nformat %d\n", JIT_FORMAT_VERSION);
	key_field(&b, "cachet-version", st->version);
	key_field(&b, "compiler", cc->real);
	key_field(&b, "compiler-file", cc->file);
	/* the name it is called by matters (clang vs clang++ are one binary) */
	const char *base = strrchr(cc->words[0], '/');
	key_field(&b, "compiler-name", base ? base + 1 : cc->words[0]);
	ct_buf_printf(&b, "compiler-version-exit %d\n", cc->version_exit);
	key_field(&b, "compiler-version", cc->version);
	/* the exact command, with placeholders for the paths that vary */
	const char *argv[256];
	int n = jit_command(cfg, "@OUT@", "@SRC@", argv, (int)(sizeof argv / sizeof *argv));
	if (n < 0) {
		ct_buf_free(&b);
		ct_error(st->ctx, CT_ERR_LIMIT, "too many compiler flags");
		return NULL;
	}
	ct_buf_printf(&b, "argv %d\n", n - 1);
	for (int i = 1; i < n; i++) {
		key_field(&b, "arg", argv[i]);
		if (strcmp(argv[i], "-march=native") == 0)
			key_field(&b, "march-native", cc->march);
	}
	for (size_t i = 0; i < sizeof key_env / sizeof *key_env; i++) {
		const char *v = getenv(key_env[i]);
		if (v)
			key_field(&b, key_env[i], v);
		else
			ct_buf_printf(&b, "%s unset\n", key_env[i]);
	}
	char *heap = ct_buf_take(&b);
	if (!heap) {
		ct_error(st->ctx, CT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	*len = strlen(heap);
	char *r = ct_alloc(st->ctx, *len + 1);
	if (r)
		memcpy(r, heap, *len + 1);
	free(heap);
	return r;
}

/* The header between the config text and the source bytes; returns its length. */
static int source_header(char buf[48], size_t len)
{
	return snprintf(buf, 48, "source %zu\n", len);
}

/* Hex digest of the full key (cfg->text, source header, source). */
static void key_digest(const jit_config *cfg, const char *src, size_t len, char hex[JIT_DIGEST_HEX])
{
	XXH3_state_t s;
	char hdr[48];
	int hn = source_header(hdr, len);
	XXH3_INITSTATE(&s);
	XXH3_128bits_reset(&s);
	XXH3_128bits_update(&s, cfg->text, cfg->text_len);
	XXH3_128bits_update(&s, hdr, (size_t)hn);
	XXH3_128bits_update(&s, src, len);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&s));
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		hex[2 * i] = digits[c.digest[i] >> 4];
		hex[2 * i + 1] = digits[c.digest[i] & 15];
	}
	hex[32] = 0;
}

static bool same_options(const jit_config *cfg, const char *cmd, const ct_compile_options *o,
                         unsigned generation)
{
	if (cfg->generation != generation || cfg->openmp != (o->openmp != 0) ||
	    cfg->nextra != o->nflags || strcmp(cfg->cc->cmd, cmd) != 0)
		return false;
	for (int i = 0; i < o->nflags; i++)
		if (strcmp(cfg->extra[i], o->flags[i]) != 0)
			return false;
	return true;
}

void jit_compiler_line(ct_ctx *ctx, const ct_compile_options *o, char *buf, size_t cap)
{
	jit_state *st = jit_state_get(ctx);
	const char *cmd = o && o->cc         ? o->cc
	                  : !st              ? "cc"
	                  : st->cc_override  ? st->cc_override
	                  : st->env_cc       ? st->env_cc
	                                     : "cc";
	jit_compiler *cc = st ? jit_compiler_get(st, cmd) : NULL;
	const char *v = cc && cc->version ? cc->version : "";
	size_t n = strcspn(v, "\n");
	snprintf(buf, cap, "'%s' (%.*s)", cmd, (int)(n < 200 ? n : 200), n ? v : "version unknown");
}

/* The config for options o, built (and the compiler probed) on first use. */
static jit_config *config_get(jit_state *st, const ct_compile_options *o)
{
	ct_ctx *ctx = st->ctx;
	const char *cmd = o->cc             ? o->cc
	                  : st->cc_override ? st->cc_override
	                  : st->env_cc      ? st->env_cc
	                                    : "cc";
	for (jit_config *c = st->configs; c; c = c->next)
		if (same_options(c, cmd, o, st->generation))
			return c;
	for (int i = 0; i < o->nflags; i++)
		if (!o->flags[i]) {
			ct_error(ctx, CT_ERR_USAGE, "compile flag %d is NULL", i);
			return NULL;
		}
	jit_compiler *cc = jit_compiler_get(st, cmd);
	if (!cc)
		return NULL;
	jit_config *cfg = ct_alloc(ctx, sizeof *cfg);
	if (!cfg)
		return NULL;
	cfg->cc = cc;
	cfg->openmp = o->openmp != 0;
	cfg->generation = st->generation;
	cfg->extra = ct_alloc(ctx, (size_t)(o->nflags + 1) * sizeof *cfg->extra);
	if (!cfg->extra)
		goto fail;
	for (int i = 0; i < o->nflags; i++) {
		if (!(cfg->extra[i] = ct_strdup(ctx, o->flags[i])))
			goto fail;
		cfg->nextra = i + 1;
	}
	cfg->text = config_text(st, cfg, &cfg->text_len);
	if (!cfg->text)
		goto fail;
	cfg->seed = XXH3_64bits(cfg->text, cfg->text_len);
	cfg->next = st->configs;
	st->configs = cfg;
	return cfg;
fail:
	config_free(ctx, cfg);
	return NULL;
}

/* ------------------------------------------------------------ module memo (key -> loaded module, in memory) */

static bool same_key(const ct_module *m, const jit_config *cfg, uint64_t h, const char *src,
                     size_t len)
{
	if (m->hash != h || m->len != len)
		return false;
	/* two configs may spell the same key (commands "cc" and " cc") */
	if (m->cfg != cfg && (m->cfg->text_len != cfg->text_len ||
	                      memcmp(m->cfg->text, cfg->text, cfg->text_len) != 0))
		return false;
	return len == 0 || memcmp(m->src, src, len) == 0;
}

static ct_module *mem_find(jit_state *st, const jit_config *cfg, uint64_t h, const char *src,
                           size_t len)
{
	if (!st->table_cap)
		return NULL;
	size_t mask = st->table_cap - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		ct_module *m = st->table[i];
		if (!m)
			return NULL;
		if (same_key(m, cfg, h, src, len))
			return m;
	}
}

static bool mem_insert(jit_state *st, ct_module *m)
{
	if ((st->table_used + 1) * 2 > st->table_cap) {
		size_t cap = st->table_cap ? st->table_cap * 2 : 64;
		ct_module **t = ct_alloc(st->ctx, cap * sizeof *t);
		if (!t)
			return false;
		for (size_t i = 0; i < st->table_cap; i++) {
			ct_module *x = st->table[i];
			if (!x)
				continue;
			size_t j = (size_t)x->hash & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = x;
		}
		ct_free(st->ctx, st->table);
		st->table = t;
		st->table_cap = cap;
	}
	size_t j = (size_t)m->hash & (st->table_cap - 1);
	while (st->table[j])
		j = (j + 1) & (st->table_cap - 1);
	st->table[j] = m;
	st->table_used++;
	m->cached = true;
	return true;
}

/* Take m out of the table (linear probing: the entries after it in its
 * cluster move up) and out of the front table; it stays loaded. */
static void mem_remove(jit_state *st, ct_module *m)
{
	for (int i = 0; i < JIT_FRONT_SLOTS; i++)
		if (st->front[i] == m)
			st->front[i] = NULL;
	if (!st->table_cap)
		return;
	size_t mask = st->table_cap - 1, i = (size_t)m->hash & mask;
	while (st->table[i] && st->table[i] != m)
		i = (i + 1) & mask;
	if (!st->table[i])
		return;
	st->table[i] = NULL;
	st->table_used--;
	m->cached = false;
	for (size_t j = (i + 1) & mask; st->table[j]; j = (j + 1) & mask) {
		ct_module *x = st->table[j];
		st->table[j] = NULL;
		size_t k = (size_t)x->hash & mask;
		while (st->table[k])
			k = (k + 1) & mask;
		st->table[k] = x;
	}
}

/* Front-table slot of a lookup: mixes the length and the config. */
static size_t front_slot(const jit_config *cfg, size_t len)
{
	return (len ^ (size_t)(cfg->seed >> 7)) & (JIT_FRONT_SLOTS - 1);
}

/* ------------------------------------------------------------ loading */

/* Compile src, load it from the private build folder, publish it to the
 * disk cache (unless bypassed), remove the build folder. */
static ct_status build_and_load(jit_state *st, jit_config *cfg, const char *src, size_t len,
                                const char *digest, const ct_compile_options *o, bool use_disk,
                                void **handle)
{
	ct_ctx *ctx = st->ctx;
	char *dir, *so;
	ct_status s = jit_compile(st, cfg, src, len, digest, o->timeout, &dir, &so);
	if (s != CT_OK)
		return s;
	st->n.compiles++;
	/* load our own bytes from our own 0700 folder: what ends up in the
	 * shared cache cannot change what this process runs */
	void *h = dlopen(so, jit_dlopen_flags(cfg));
	if (!h) {
		const char *e = dlerror();
		/* keep the build for inspection, as for a compile error; the
		 * source sits next to the object as k<digest>.c */
		size_t n = strlen(so);
		so[n - 2] = 'c';
		so[n - 1] = 0;
		s = ct_error_at(ctx, CT_ERR_COMPILE, so, 0, 0,
		                "cannot load the compiled code; source kept at %s\n%s", so,
		                e ? e : "unknown dlopen error");
		jit_build_forget(st, dir);
		ct_free(ctx, so);
		ct_free(ctx, dir);
		return s;
	}
	if (use_disk) {
		unsigned char *bytes;
		size_t n;
		ct_status saved = ctx->status;
		char saved_msg[sizeof ctx->msg];
		memcpy(saved_msg, ctx->msg, sizeof saved_msg);
		if (jit_read_file(ctx, so, (size_t)1 << 31, &bytes, &n) == CT_OK) {
			jit_disk_publish(st, cfg, src, len, digest, bytes, n);
			ct_free(ctx, bytes);
			jit_disk_prune(st, false);
		} else {
			jit_warn(st, "not caching %s: %s", so, ctx->msg);
			/* the load succeeded: the failed cache write is no error */
			ctx->status = saved;
			memcpy(ctx->msg, saved_msg, sizeof saved_msg);
		}
	}
	jit_build_remove(st, dir, so);
	*handle = h;
	return CT_OK;
}

ct_status jit_load(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o,
                   ct_module **out, const char **how, double *seconds)
{
	double t0 = ct_now();
	if (!ctx)
		return CT_ERR_USAGE;
	if (!out || (!src && len))
		return ct_error(ctx, CT_ERR_USAGE, "jit_load: NULL source or result pointer");
	*out = NULL;
	if (!src)
		src = "";
	ct_compile_options defaults;
	if (!o) {
		ct_compile_options_init(&defaults);
		o = &defaults;
	}
	if (o->nflags < 0 || (o->nflags > 0 && !o->flags) || o->timeout < 0)
		return ct_error(ctx, CT_ERR_USAGE, "bad compile options (nflags %d, timeout %g)",
		                o->nflags, o->timeout);
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return ctx->status ? ctx->status : CT_ERR_NOMEM;
	jit_config *cfg = config_get(st, o);
	if (!cfg)
		return ctx->status ? ctx->status : CT_ERR_NOMEM;
	bool bypass = st->no_cache || o->no_cache;
	size_t slot = front_slot(cfg, len);
	if (!bypass) {
		/* the full key is compared here too (config and every source
		 * byte); only the hash is skipped */
		ct_module *m = st->front[slot];
		if (m && m->cfg == cfg && m->len == len &&
		    (len == 0 || memcmp(m->src, src, len) == 0)) {
			st->n.memo_hits++;
			*out = m;
			if (how)
				*how = "memory";
			if (seconds)
				*seconds = ct_now() - t0;
			return CT_OK;
		}
	}
	uint64_t h = XXH3_64bits_withSeed(src, len, cfg->seed);
	if (!bypass) {
		ct_module *m = mem_find(st, cfg, h, src, len);
		if (m) {
			st->front[slot] = m;
			st->n.memo_hits++;
			*out = m;
			if (how)
				*how = "memory";
			if (seconds)
				*seconds = ct_now() - t0;
			return CT_OK;
		}
	}
	ct_module *m = ct_alloc(ctx, sizeof *m);
	if (!m)
		return CT_ERR_NOMEM;
	m->src = ct_alloc(ctx, len + 1);
	if (!m->src) {
		ct_free(ctx, m);
		return CT_ERR_NOMEM;
	}
	memcpy(m->src, src, len);
	m->len = len;
	m->cfg = cfg;
	m->hash = h;
	key_digest(cfg, src, len, m->digest);

	const char *how_s = "compiled";
	bool use_disk = !bypass && jit_disk_ready(st);
	if (use_disk && jit_disk_lookup(st, cfg, src, len, m->digest, &m->handle)) {
		how_s = "disk";
		st->n.disk_hits++;
	} else {
		ct_status s = build_and_load(st, cfg, src, len, m->digest, o, use_disk, &m->handle);
		if (s != CT_OK) {
			module_unload(ctx, m);
			return s;
		}
	}
	if (!bypass) {
		if (!mem_insert(st, m)) {
			module_unload(ctx, m);
			return CT_ERR_NOMEM;
		}
		st->front[slot] = m;
	}
	m->next = st->modules;
	st->modules = m;
	*out = m;
	if (how)
		*how = how_s;
	if (seconds)
		*seconds = ct_now() - t0;
	return CT_OK;
}

/* The ctx's jit state and the configuration of options *o (the defaults,
 * written into *defaults, when *o is NULL): the shared start of evict and key. */
static ct_status state_and_config(ct_ctx *ctx, const ct_compile_options **o, ct_compile_options *defaults,
                                  jit_state **st, jit_config **cfg)
{
	if (!*o) {
		ct_compile_options_init(defaults);
		*o = defaults;
	}
	*st = jit_state_get(ctx);
	if (!*st)
		return CT_ERR_NOMEM;
	*cfg = config_get(*st, *o);
	if (!*cfg)
		return ctx->status ? ctx->status : CT_ERR_NOMEM;
	return CT_OK;
}

ct_status jit_evict(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o)
{
	ct_compile_options defaults;
	jit_state *st;
	jit_config *cfg;
	ct_status rc = state_and_config(ctx, &o, &defaults, &st, &cfg);
	if (rc)
		return rc;
	ct_module *m;
	while ((m = mem_find(st, cfg, XXH3_64bits_withSeed(src, len, cfg->seed), src, len)))
		mem_remove(st, m);
	char hex[JIT_DIGEST_HEX];
	key_digest(cfg, src, len, hex);
	if (!st->no_cache && !o->no_cache)
		jit_disk_remove(st, hex);
	return CT_OK;
}

bool jit_verdict_get(ct_ctx *ctx, const char *digest, char *buf, size_t cap)
{
	jit_state *st = jit_state_get(ctx);
	buf[0] = 0;
	return st && !st->no_cache && jit_disk_verdict_get(st, digest, buf, cap);
}

void jit_verdict_put(ct_ctx *ctx, const char *digest, const char *text)
{
	jit_state *st = jit_state_get(ctx);
	if (st && !st->no_cache)
		jit_disk_verdict_put(st, digest, text);
}

ct_status jit_key(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o,
                  char hex[JIT_DIGEST_HEX], char **text)
{
	if (!ctx)
		return CT_ERR_USAGE;
	ct_compile_options defaults;
	jit_state *st;
	jit_config *cfg;
	ct_status rc = state_and_config(ctx, &o, &defaults, &st, &cfg);
	if (rc)
		return rc;
	key_digest(cfg, src, len, hex);
	if (text) {
		char hdr[48];
		int hn = source_header(hdr, len);
		*text = malloc(cfg->text_len + (size_t)hn + len + 1);
		if (!*text)
			return ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		memcpy(*text, cfg->text, cfg->text_len);
		memcpy(*text + cfg->text_len, hdr, (size_t)hn);
		memcpy(*text + cfg->text_len + hn, src, len);
		(*text)[cfg->text_len + (size_t)hn + len] = 0;
	}
	return CT_OK;
}

ct_status jit_set_version(ct_ctx *ctx, const char *v)
{
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	char *copy = ct_strdup(ctx, v ? v : CACHET_VERSION_STR);
	if (!copy)
		return CT_ERR_NOMEM;
	/* configs of the old recipe stay alive (modules point at them) but
	 * never match again */
	ct_free(ctx, st->version_copy);
	st->version_copy = copy;
	st->version = copy;
	st->generation++;
	return CT_OK;
}

/* ------------------------------------------------------------ public API */

void ct_compile_options_init(ct_compile_options *o)
{
	if (o)
		memset(o, 0, sizeof *o);
}

ct_status ct_module_load(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o,
                         ct_module **out, ct_load_info *info)
{
	const char *how = NULL;
	double secs = 0;
	ct_status s = jit_load(ctx, src, len, o, out, &how, &secs);
	if (info) {
		memset(info, 0, sizeof *info);
		if (s == CT_OK) {
			info->how = how;
			info->seconds = secs;
			memcpy(info->key, (*out)->digest, sizeof info->key);
		} else {
			info->how = "";
		}
	}
	return s;
}

void *ct_module_symbol(ct_module *m, const char *name)
{
	if (!m || !m->handle || !name)
		return NULL;
	return dlsym(m->handle, name);
}

/* Replace the string *slot with a ctx copy of s (NULL clears it). */
static ct_status set_string(ct_ctx *ctx, char **slot, const char *s)
{
	char *copy = NULL;
	if (s && !(copy = ct_strdup(ctx, s)))
		return CT_ERR_NOMEM;
	ct_free(ctx, *slot);
	*slot = copy;
	return CT_OK;
}

ct_status ct_ctx_set_compiler(ct_ctx *ctx, const char *cc)
{
	if (!ctx)
		return CT_ERR_USAGE;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	if (cc && !*cc)
		return ct_error(ctx, CT_ERR_USAGE, "empty compiler command");
	return set_string(ctx, &st->cc_override, cc);
}

void ct_cache_set_warning_handler(ct_ctx *ctx, ct_warn_fn fn, void *ud)
{
	jit_state *st = ctx ? jit_state_get(ctx) : NULL;
	if (!st)
		return;
	st->warn = fn;
	st->warn_ud = ud;
}

ct_status ct_cache_set_dir(ct_ctx *ctx, const char *dir)
{
	if (!ctx)
		return CT_ERR_USAGE;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	if (dir && !*dir)
		return ct_error(ctx, CT_ERR_USAGE, "empty cache folder name");
	ct_status s = set_string(ctx, &st->dir_override, dir);
	if (s != CT_OK)
		return s;
	/* checked again, with the new folder, on next use */
	ct_free(ctx, st->root);
	ct_free(ctx, st->code_dir);
	st->root = st->code_dir = NULL;
	st->disk_checked = st->disk_ok = false;
	return CT_OK;
}

ct_status ct_cache_set_max_bytes(ct_ctx *ctx, int64_t bytes)
{
	if (!ctx)
		return CT_ERR_USAGE;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	if (bytes < 0)
		return ct_error(ctx, CT_ERR_USAGE, "cache size cap must be >= 0");
	st->max_bytes = bytes ? bytes : JIT_DEFAULT_MAX_BYTES;
	return CT_OK;
}

ct_status ct_cache_stats(ct_ctx *ctx, ct_cache_info *info)
{
	if (!ctx || !info)
		return ctx ? ct_error(ctx, CT_ERR_USAGE, "NULL cache info") : CT_ERR_USAGE;
	memset(info, 0, sizeof *info);
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	bool ok = jit_disk_ready(st);
	info->path = ct_cache_path(ctx);
	info->disk_enabled = ok && !st->no_cache;
	if (ok)
		jit_disk_totals(st, &info->entries, &info->bytes);
	info->max_bytes = st->max_bytes;
	info->memo_entries = (int64_t)st->table_used;
	info->memo_hits = st->n.memo_hits;
	info->disk_hits = st->n.disk_hits;
	info->compiles = st->n.compiles;
	info->corrupt = st->n.corrupt;
	info->evicted = st->n.evicted;
	info->swept = st->n.swept;
	return CT_OK;
}

/* The ctx error for an operation on a folder that is not usable. */
static ct_status not_usable(jit_state *st)
{
	return ct_error(st->ctx, CT_ERR_IO, "the code cache folder '%s' is not usable: %s",
	                st->root ? st->root : "", st->disk_why);
}

ct_status ct_cache_clear(ct_ctx *ctx)
{
	if (!ctx)
		return CT_ERR_USAGE;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	if (!jit_disk_ready(st))
		return not_usable(st);
	ct_status s = jit_disk_clear(st);
	ct_status o = jit_cache_clear_others(st);
	return s ? s : o;
}

int ct_cache_folders(ct_ctx *ctx, ct_cache_folder *out, int cap)
{
	if (!ctx || (!out && cap > 0))
		return -1;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return -1;
	if (!jit_disk_ready(st)) {
		not_usable(st);
		return -1;
	}
	return jit_cache_folders(st, out, cap);
}

ct_status ct_cache_verify(ct_ctx *ctx, int64_t *bad)
{
	if (bad)
		*bad = 0;
	if (!ctx)
		return CT_ERR_USAGE;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	if (!jit_disk_ready(st))
		return not_usable(st);
	int64_t n = 0;
	ct_status s = jit_disk_verify(st, &n);
	if (bad)
		*bad = n;
	return s;
}

ct_status ct_cache_prune(ct_ctx *ctx)
{
	if (!ctx)
		return CT_ERR_USAGE;
	jit_state *st = jit_state_get(ctx);
	if (!st)
		return CT_ERR_NOMEM;
	if (!jit_disk_ready(st))
		return not_usable(st);
	jit_disk_prune(st, true);
	return CT_OK;
}
