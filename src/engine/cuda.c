/* cuda.c: the CUDA engine: the driver API and NVRTC loaded at first use, kernels compiled to cubins (NVRTC, else nvcc) and kept in the code cache, run on one device, timed with events and verified. */
#include "target/cuda.h"

#include "gen/ocl.h"
#include "jit/jit.h"
#include "engine/engine.h"
#include "engine/targets.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Nothing here links to CUDA: libcuda.so.1 and NVRTC are opened with
 * dlopen (target/cuda.c) when a plan(target=cuda) kernel first runs, so
 * that libcachet loads everywhere; without a driver or a device a run is
 * CT_ERR_UNSUPPORTED with a message saying what is missing. The device is
 * CACHET_CUDA_DEVICE's index, else 0. Nothing is global: the device (its
 * primary context), NVRTC and the modules a ctx has loaded stay open in
 * the ctx (ctx->cuda, released by ct_ctx_free), so the next run of the
 * same kernel in the same ctx loads nothing ("memory"); cubins persist
 * across processes in the code cache's blob cache ("disk"), under a key
 * of the compiler's identity, the architecture, the driver version, the
 * options and the source.
 */

/* ------------------------------------------------------------ the ctx's state */

#define CUDA_MEM_MODULES 64 /* modules a ctx keeps loaded; the oldest goes first */

/* A loaded module and its kernel, under the code cache's key. */
typedef struct cuda_mod {
	char *key;
	size_t klen;
	cu_module m;
	cu_function f;
	struct cuda_mod *next; /* most recently used first */
} cuda_mod;

/* What a ctx keeps open between runs (ctx->cuda). */
typedef struct cuda_state {
	cuda_dev d;
	bool open;
	char want[64];       /* CACHET_CUDA_DEVICE when d was opened */
	/* the compiler: NVRTC, else nvcc; chosen again when CACHET_NVRTC or
	 * CACHET_NVCC change */
	bool compiler_known;
	char compiler_env[1024];
	nvrtc_api nv;        /* nv.lib NULL: no NVRTC */
	char nvcc[1024];     /* nvcc's path ("" when none) */
	char id[512];        /* the compiler's identity, in the cache key */
	char why[768];       /* why there is no compiler */
	cuda_mod *mods;
	int nmods;
} cuda_state;

static void mod_free(cuda_state *s, cuda_mod *g)
{
	if (g->m && s->open)
		s->d.cu.ModuleUnload(g->m);
	free(g->key);
	free(g);
}

static void mods_clear(cuda_state *s)
{
	while (s->mods) {
		cuda_mod *g = s->mods;
		s->mods = g->next;
		mod_free(s, g);
	}
	s->nmods = 0;
}

static void state_close_device(cuda_state *s)
{
	mods_clear(s);
	if (s->open)
		target_cuda_close(&s->d);
	s->open = false;
}

static void state_release(ct_ctx *ctx)
{
	cuda_state *s = ctx->cuda;
	if (!s)
		return;
	state_close_device(s);
	target_nvrtc_close(&s->nv);
	ct_free(ctx, s);
	ctx->cuda = NULL;
}

/* The ctx's CUDA state, made on first use. */
static cuda_state *state_get(ct_ctx *ctx)
{
	cuda_state *s = ctx->cuda;
	if (s)
		return s;
	if (!(s = ct_alloc(ctx, sizeof *s)))
		return NULL;
	if (!ct_ctx_on_free(ctx, state_release)) {
		ct_free(ctx, s);
		ct_error(ctx, CT_ERR_NOMEM, "no room for another cleanup in the ctx");
		return NULL;
	}
	ctx->cuda = s;
	return s;
}

/* The ctx's open device, opened (again, if CACHET_CUDA_DEVICE changed). */
static ct_status state_device(ct_ctx *ctx, cuda_state **out)
{
	cuda_state *s = state_get(ctx);
	if (!s)
		return ct_ctx_last_status(ctx);
	const char *w = getenv("CACHET_CUDA_DEVICE");
	if (s->open && strcmp(s->want, w ? w : "") != 0)
		state_close_device(s);
	if (!s->open) {
		ct_status st = target_cuda_open(ctx, &s->d);
		if (st)
			return st;
		s->open = true;
		snprintf(s->want, sizeof s->want, "%s", w ? w : "");
	}
	s->d.ctx = ctx;
	/* another library (or a thread's earlier ctx) may have made its
	 * context current since */
	s->d.cu.CtxSetCurrent(s->d.cx);
	*out = s;
	return CT_OK;
}

/* Whether the ctx bypasses its caches (CACHET_NO_CACHE=1). */
static bool no_cache(ct_ctx *ctx)
{
	jit_state *js = jit_state_get(ctx);
	return !js || js->no_cache;
}

/* ------------------------------------------------------------ the compiler */

/* The file of nvcc: $CACHET_NVCC, /usr/local/cuda/bin/nvcc, then PATH's;
 * false when none is executable. */
static bool find_nvcc(char *buf, size_t cap)
{
	const char *env = getenv("CACHET_NVCC");
	if (env && *env) {
		snprintf(buf, cap, "%s", env);
		return access(buf, X_OK) == 0;
	}
	snprintf(buf, cap, "/usr/local/cuda/bin/nvcc");
	if (access(buf, X_OK) == 0)
		return true;
	const char *path = getenv("PATH");
	char dirs[4096];
	snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
	char *save = NULL;
	for (char *t = strtok_r(dirs, ":", &save); t; t = strtok_r(NULL, ":", &save))
		if (jit_fmt(buf, cap, "%s/nvcc", *t ? t : ".") && access(buf, X_OK) == 0)
			return true;
	buf[0] = 0;
	return false;
}

/* nvcc's identity: the lines of `nvcc --version` that name the release
 * and the build, joined (empty when it does not run). */
static void nvcc_identity(ct_ctx *ctx, const char *nvcc, char *id, size_t cap)
{
	id[0] = 0;
	/* argv[0] is the full path: nvcc finds its include/ and nvcc.profile from it */
	char a0[4096], a1[] = "--version";
	snprintf(a0, sizeof a0, "%s", nvcc);
	char *argv[] = {a0, a1, NULL};
	jit_proc pr;
	memset(&pr, 0, sizeof pr);
	if (jit_run(ctx, nvcc, argv, NULL, 60, 8192, &pr) != CT_OK) {
		ct_ctx_clear_error(ctx);
		return;
	}
	if (pr.exit_code == 0 && pr.out) {
		size_t at = (size_t)snprintf(id, cap, "nvcc %s", nvcc);
		char *save = NULL;
		for (char *l = strtok_r(pr.out, "\n", &save); l && at < cap; l = strtok_r(NULL, "\n", &save))
			if (strstr(l, "release") || strstr(l, "Build"))
				at += (size_t)snprintf(id + at, cap - at, " | %s", l);
	}
	jit_proc_free(ctx, &pr);
}

/* The compiler's environment now: when it changes, the choice is made again. */
static void compiler_env(char *buf, size_t cap)
{
	const char *a = getenv("CACHET_NVRTC"), *b = getenv("CACHET_NVCC");
	snprintf(buf, cap, "%d%s|%d%s", a != NULL, a ? a : "", b != NULL, b ? b : "");
}

/* Choose the compiler once per ctx: NVRTC, else nvcc; CT_ERR_UNSUPPORTED
 * saying where both were looked for when there is neither. */
static ct_status compiler_pick(ct_ctx *ctx, cuda_state *s)
{
	char env[sizeof s->compiler_env];
	compiler_env(env, sizeof env);
	if (s->compiler_known && strcmp(env, s->compiler_env) != 0) {
		target_nvrtc_close(&s->nv);
		s->compiler_known = false;
	}
	if (!s->compiler_known) {
		snprintf(s->compiler_env, sizeof s->compiler_env, "%s", env);
		s->id[0] = s->nvcc[0] = s->why[0] = 0;
		if (target_nvrtc_load(ctx, &s->nv) == CT_OK) {
			snprintf(s->id, sizeof s->id, "nvrtc %d.%d %.480s", s->nv.major, s->nv.minor, s->nv.path);
		} else {
			snprintf(s->why, sizeof s->why, "%s", ct_ctx_last_message(ctx));
			ct_ctx_clear_error(ctx);
			if (find_nvcc(s->nvcc, sizeof s->nvcc))
				nvcc_identity(ctx, s->nvcc, s->id, sizeof s->id);
			if (!s->id[0])
				s->nvcc[0] = 0;
		}
		s->compiler_known = true;
	}
	if (!s->id[0])
		return ct_error(ctx, CT_ERR_UNSUPPORTED, "%s; and no nvcc (CACHET_NVCC, /usr/local/cuda/bin/nvcc, PATH)",
		                s->why);
	return CT_OK;
}

/* The options of a compile for arch, as the cache key lists them. */
static void compile_options(const cuda_state *s, const char *arch, char *buf, size_t cap)
{
	if (s->nv.lib)
		snprintf(buf, cap, "--gpu-architecture=%s", arch);
	else
		snprintf(buf, cap, "--cubin -arch=%s", arch);
}

/* Remove folder dir and the files in it (one level: what nvcc left). */
static void remove_folder(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char p[4096];
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && jit_fmt(p, sizeof p, "%s/%s", dir, e->d_name))
				unlink(p);
		closedir(d);
	}
	rmdir(dir);
}

/* Compile src with nvcc --cubin in a private temporary folder. */
static ct_status nvcc_compile(ct_ctx *ctx, const cuda_state *s, const char *src, size_t len, const char *arch,
                              unsigned char **out, size_t *n)
{
	const char *tmp = getenv("TMPDIR");
	char dir[1024], cu[1100], bin[1100], archf[64];
	if (!jit_fmt(dir, sizeof dir, "%s/cachet-cuda-XXXXXX", tmp && *tmp ? tmp : "/tmp") || !mkdtemp(dir))
		return ct_error(ctx, CT_ERR_IO, "CUDA: cannot make a folder for nvcc under %s", tmp && *tmp ? tmp : "/tmp");
	snprintf(cu, sizeof cu, "%s/kernel.cu", dir);
	snprintf(bin, sizeof bin, "%s/kernel.cubin", dir);
	snprintf(archf, sizeof archf, "-arch=%s", arch);
	FILE *f = fopen(cu, "w");
	bool ok = f && fwrite(src, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		remove_folder(dir);
		return ct_error(ctx, CT_ERR_IO, "CUDA: cannot write %s", cu);
	}
	/* argv[0] is the full path: nvcc finds its include/ and nvcc.profile from
	 * it, not from PATH (a bare "nvcc" fails where PATH lacks its folder) */
	char a0[4096], a1[] = "--cubin", a3[] = "-o";
	snprintf(a0, sizeof a0, "%s", s->nvcc);
	char *argv[] = {a0, a1, archf, a3, bin, cu, NULL};
	jit_proc pr;
	memset(&pr, 0, sizeof pr);
	ct_status st = jit_run(ctx, s->nvcc, argv, dir, 300, 64 * 1024, &pr);
	if (!st && (pr.exit_code != 0 || pr.timed_out))
		st = ct_error(ctx, CT_ERR_COMPILE, "CUDA: nvcc --cubin -arch=%s %s (%s); its output:\n%s", arch,
		              pr.timed_out ? "timed out" : "failed", s->nvcc, pr.out ? pr.out : "");
	jit_proc_free(ctx, &pr);
	unsigned char *data = NULL;
	size_t dn = 0;
	if (!st)
		st = jit_read_file(ctx, bin, (size_t)256 << 20, &data, &dn);
	if (!st) {
		/* jit_read_file allocates with the ctx; the caller frees with free() */
		*out = malloc(dn ? dn : 1);
		if (*out) {
			memcpy(*out, data, dn);
			*n = dn;
		} else {
			st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		}
		ct_free(ctx, data);
	}
	remove_folder(dir);
	return st;
}

/* Compile src for arch with the picked compiler. */
static ct_status compile_cubin(ct_ctx *ctx, const cuda_state *s, const char *src, size_t len, const char *arch,
                               const char *name, unsigned char **out, size_t *n)
{
	if (!s->nv.lib)
		return nvcc_compile(ctx, s, src, len, arch, out, n);
	char opt[64];
	snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
	/* NVRTC takes a NUL-terminated source */
	char *z = malloc(len + 1);
	if (!z)
		return ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	memcpy(z, src, len);
	z[len] = 0;
	const char *opts[] = {opt};
	ct_status st = target_nvrtc_compile(ctx, &s->nv, z, name, opts, 1, false, out, n);
	free(z);
	return st;
}

char *cuda_cubin_key(const char *compiler, const char *arch, int driver, const char *opts, const char *src,
                     size_t len, size_t *klen)
{
	size_t n = len + strlen(compiler) + strlen(arch) + strlen(opts) + 96;
	char *key = malloc(n);
	if (!key)
		return NULL;
	int h = snprintf(key, n, "cuda-cubin\n%s\n%s\ndriver %d\n%s\n", compiler, arch, driver, opts);
	if (h < 0) {
		free(key);
		return NULL;
	}
	memcpy(key + h, src, len);
	*klen = (size_t)h + len;
	return key;
}

ct_status cuda_compiler(ct_ctx *ctx, char *id, size_t cap)
{
	cuda_state *s = state_get(ctx);
	if (!s)
		return ct_ctx_last_status(ctx);
	ct_status st = compiler_pick(ctx, s);
	snprintf(id, cap, "%s", st ? "" : s->id);
	return st;
}

/* The cache key of src for arch under the picked compiler (malloc'd). */
static ct_status cubin_key(ct_ctx *ctx, cuda_state *s, const char *src, size_t len, const char *arch, int driver,
                           char **key, size_t *klen)
{
	*key = NULL;
	ct_status st = compiler_pick(ctx, s);
	if (st)
		return st;
	char opts[128];
	compile_options(s, arch, opts, sizeof opts);
	*key = cuda_cubin_key(s->id, arch, driver, opts, src, len, klen);
	return *key ? CT_OK : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
}

/* The cubin of src under key (malloc'd): kept in the blob cache (how
 * "disk"), else compiled and kept (how "compiled"). */
static ct_status cubin_fetch(ct_ctx *ctx, cuda_state *s, const char *src, size_t len, const char *arch,
                             const char *name, const char *key, size_t klen, unsigned char **bin, size_t *n,
                             const char **how)
{
	*bin = NULL;
	void *kept = NULL;
	if (!no_cache(ctx) && jit_blob_get(ctx, key, klen, &kept, n) == CT_OK && kept) {
		*bin = kept;
		*how = "disk";
		return CT_OK;
	}
	ct_ctx_clear_error(ctx);
	ct_status st = compile_cubin(ctx, s, src, len, arch, name, bin, n);
	if (st)
		return st;
	*how = "compiled";
	if (!no_cache(ctx))
		jit_blob_put(ctx, key, klen, *bin, *n); /* a cache that cannot write is no error */
	return CT_OK;
}

ct_status cuda_cubin(ct_ctx *ctx, const char *src, size_t len, const char *arch, int driver, unsigned char **bin,
                     size_t *n, const char **how)
{
	cuda_state *s = state_get(ctx);
	if (!s)
		return ct_ctx_last_status(ctx);
	char *key = NULL;
	size_t klen = 0;
	*bin = NULL;
	ct_status st = cubin_key(ctx, s, src, len, arch, driver, &key, &klen);
	if (!st)
		st = cubin_fetch(ctx, s, src, len, arch, "kernel.cu", key, klen, bin, n, how);
	free(key);
	return st;
}

/* ------------------------------------------------------------ modules */

static ct_status cu_fail(cuda_dev *d, ct_status st, const char *what, const char *fn, cu_result e)
{
	char eb[256];
	return ct_error(d->ctx, st, "CUDA: %s%s%s%s failed on %s: %s", what, fn ? " of kernel '" : "", fn ? fn : "",
	                fn ? "'" : "", d->desc, target_cuda_error(&d->cu, e, eb, sizeof eb));
}

/* Load cubin bin and find fn in it; *log gets the driver's message. */
static cu_result module_load(cuda_dev *d, const void *bin, const char *fn, cu_module *m, cu_function *f, char *log,
                             size_t cap)
{
	*m = NULL;
	*f = NULL;
	log[0] = 0;
	int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[] = {log, (void *)(uintptr_t)cap};
	cu_result e = d->cu.ModuleLoadDataEx(m, bin, 2, opts, vals);
	if (e != CU_SUCCESS) {
		*m = NULL;
		return e;
	}
	e = d->cu.ModuleGetFunction(f, *m, fn);
	if (e != CU_SUCCESS) {
		d->cu.ModuleUnload(*m);
		*m = NULL;
	}
	return e;
}

/* The module of src with kernel fn: kept in the ctx (how "memory"), from
 * the blob cache ("disk"; a cubin the driver refuses is dropped and
 * compiled again) or compiled ("compiled"). *mod is the ctx's entry (NULL
 * when the ctx keeps nothing: the caller unloads *m then). */
static ct_status module_get(cuda_state *s, const char *src, size_t len, const char *fn, cu_module *m,
                            cu_function *f, cuda_mod **mod, const char **how)
{
	cuda_dev *d = &s->d;
	ct_ctx *ctx = d->ctx;
	*mod = NULL;
	unsigned char *bin = NULL;
	size_t n = 0, klen = 0;
	char *key = NULL;
	ct_status st = cubin_key(ctx, s, src, len, d->arch, d->driver_version, &key, &klen);
	if (st)
		return st;
	bool keep = !no_cache(ctx);
	for (cuda_mod **at = &s->mods; keep && *at; at = &(*at)->next) {
		cuda_mod *g = *at;
		if (g->klen == klen && memcmp(g->key, key, klen) == 0) {
			*at = g->next;
			g->next = s->mods;
			s->mods = g;
			*m = g->m;
			*f = g->f;
			*mod = g;
			*how = "memory";
			free(key);
			return CT_OK;
		}
	}
	st = cubin_fetch(ctx, s, src, len, d->arch, fn, key, klen, &bin, &n, how);
	if (st) {
		free(key);
		return st;
	}
	char log[2048];
	cu_result e = module_load(d, bin, fn, m, f, log, sizeof log);
	if (e != CU_SUCCESS && strcmp(*how, "disk") == 0) {
		char why[300], eb[200];
		snprintf(why, sizeof why, "cuModuleLoadDataEx refused it: %s", target_cuda_error(&d->cu, e, eb, sizeof eb));
		jit_blob_drop(ctx, key, klen, why);
		free(bin);
		bin = NULL;
		st = compile_cubin(ctx, s, src, len, d->arch, fn, &bin, &n);
		if (!st) {
			*how = "compiled";
			jit_blob_put(ctx, key, klen, bin, n);
			e = module_load(d, bin, fn, m, f, log, sizeof log);
		}
	}
	free(bin);
	if (!st && e != CU_SUCCESS) {
		char eb[256];
		st = ct_error(ctx, CT_ERR_COMPILE, "CUDA: the driver refused the cubin of kernel '%s' on %s: %s%s%s", fn,
		              d->desc, target_cuda_error(&d->cu, e, eb, sizeof eb), log[0] ? "; " : "", log);
	}
	if (st || !keep) {
		free(key);
		return st;
	}
	cuda_mod *g = calloc(1, sizeof *g);
	if (!g) {
		free(key);
		return CT_OK; /* runs, unkept: the caller unloads */
	}
	*g = (cuda_mod){key, klen, *m, *f, s->mods};
	s->mods = g;
	*mod = g;
	if (++s->nmods > CUDA_MEM_MODULES) {
		cuda_mod **at = &s->mods;
		while ((*at)->next)
			at = &(*at)->next;
		mod_free(s, *at);
		*at = NULL;
		s->nmods--;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ the launch */

/* The grid and block of launch L: block = L's local sizes when explicit;
 * else 256 threads on dimension 0 (fewer when the global size is
 * smaller), 1 on the others; grid = ceil(global / block). gen_cuda's
 * kernels return early on a thread past the global size ("blocks of any
 * size"), so the last block may be partial. */
void cuda_launch_shape(const ocl_launch *L, unsigned grid[3], unsigned block[3])
{
	for (int i = 0; i < 3; i++) {
		size_t g = i < L->ndims ? L->global[i] : 1, b = 1;
		if (i < L->ndims && L->explicit_local)
			b = L->local[i] ? L->local[i] : 1;
		else if (i == 0)
			b = g < 256 ? (g ? g : 1) : 256;
		block[i] = (unsigned)b;
		grid[i] = (unsigned)((g + b - 1) / b);
	}
}

/* The device limits the launch must respect (CT_ERR_LIMIT naming them). */
static ct_status check_limits(cuda_dev *d, const ocl_launch *L, cu_function f, const unsigned grid[3],
                              const unsigned block[3])
{
	static const char *const axis = "xyz";
	size_t total = (size_t)block[0] * block[1] * block[2];
	for (int i = 0; i < 3; i++) {
		if (d->max_block[i] && block[i] > (unsigned)d->max_block[i])
			return ct_error(d->ctx, CT_ERR_LIMIT,
			                "kernel '%s': blocks of %u threads in dimension %c (%s) exceed the device's limit of %d "
			                "(%s): use a smaller split", L->fn, block[i], axis[i], i < L->ndims ? L->dim_name[i] : "-",
			                d->max_block[i], d->desc);
		if (d->max_grid[i] && grid[i] > (unsigned)d->max_grid[i])
			return ct_error(d->ctx, CT_ERR_LIMIT,
			                "kernel '%s': a grid of %u blocks in dimension %c (%s) exceeds the device's limit of %d "
			                "(%s): use a larger split", L->fn, grid[i], axis[i], i < L->ndims ? L->dim_name[i] : "-",
			                d->max_grid[i], d->desc);
	}
	int kmax = 0, shared = 0;
	if (d->cu.FuncGetAttribute(&kmax, CU_FUNC_MAX_THREADS_PER_BLOCK, f) != CU_SUCCESS)
		kmax = 0;
	int lim = kmax > 0 && kmax < d->max_threads_block ? kmax : d->max_threads_block;
	if (lim > 0 && total > (size_t)lim)
		return ct_error(d->ctx, CT_ERR_LIMIT,
		                "kernel '%s': a block of %u x %u x %u = %zu threads exceeds the limit of %d for this kernel "
		                "(%s%s): use smaller splits of the parallelized indices", L->fn, block[0], block[1], block[2],
		                total, lim, d->desc, kmax > 0 && kmax < d->max_threads_block ? ", its registers" : "");
	if (d->cu.FuncGetAttribute(&shared, CU_FUNC_SHARED_SIZE_BYTES, f) != CU_SUCCESS)
		shared = 0;
	if (d->shared_block > 0 && shared > d->shared_block)
		return ct_error(d->ctx, CT_ERR_LIMIT,
		                "kernel '%s': its __shared__ caches need %d bytes; a block may have %d (%s)", L->fn, shared,
		                d->shared_block, d->desc);
	return CT_OK;
}

/* Refused before compiling: caches the device cannot hold at all (nvcc
 * and NVRTC refuse static __shared__ over 48 KiB with a cryptic ptxas
 * message; cachet says which limit). */
static ct_status check_shared(cuda_dev *d, const ocl_launch *L)
{
	if (d->shared_block > 0 && L->local_bytes > d->shared_block)
		return ct_error(d->ctx, CT_ERR_LIMIT,
		                "kernel '%s': the location=shared caches need %lld bytes of shared memory; a block may have "
		                "%d of static shared memory (%s): use smaller cache blocks", L->fn, (long long)L->local_bytes,
		                d->shared_block, d->desc);
	return CT_OK;
}

#define CUDA_GUARD 256 /* bytes checked after each array */

typedef struct cuda_run {
	cuda_state *s;
	ct_kernel *k;
	cu_function f;
	const ocl_launch *L;
	unsigned grid[3], block[3];
	cu_ptr *mem;        /* one device buffer per array (0 for temps), each CUDA_GUARD bytes longer */
	size_t *bytes;
	void **args;        /* cuLaunchKernel's argument pointers */
	cu_ptr *argp;       /* the pointers' values */
	long long *argv;    /* the runtime params' values */
	cu_event ev[2];
	bool inputs_loaded; /* the input-only arrays are on the device (see cuda_once) */
	unsigned char guard[3][CUDA_GUARD]; /* [0] integers, [1] f32, [2] f64 */
} cuda_run;

/* The guard patterns, as ocl.c's: floating-point arrays get signalling
 * NaNs, so that even an update that adds zero past the end changes bytes. */
static void guard_patterns(cuda_run *R)
{
	static const unsigned char snan32[4] = {0x5a, 0x5a, 0x8a, 0x7f};
	static const unsigned char snan64[8] = {0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xf4, 0x7f};
	for (int i = 0; i < CUDA_GUARD; i++) {
		R->guard[0][i] = (unsigned char)(0xa5 ^ i);
		R->guard[1][i] = snan32[i % 4];
		R->guard[2][i] = snan64[i % 8];
	}
}

static const unsigned char *guard_of(const cuda_run *R, ct_dtype t)
{
	return R->guard[t == CT_F32 ? 1 : t == CT_F64 ? 2 : 0];
}

static void run_free(cuda_run *R)
{
	cuda_dev *d = &R->s->d;
	for (int a = 0; R->mem && a < R->k->narrays; a++)
		if (R->mem[a])
			d->cu.MemFree(R->mem[a]);
	for (int i = 0; i < 2; i++)
		if (R->ev[i])
			d->cu.EventDestroy(R->ev[i]);
	free(R->mem);
	free(R->bytes);
	free(R->args);
	free(R->argp);
	free(R->argv);
}

/* Device buffers, events and the argument list of one run_cuda. */
static ct_status run_alloc(cuda_run *R)
{
	cuda_dev *d = &R->s->d;
	ct_kernel *k = R->k;
	size_t n = (size_t)k->narrays + (size_t)k->nparams + 1;
	R->mem = calloc(n, sizeof *R->mem);
	R->bytes = calloc(n, sizeof *R->bytes);
	R->args = calloc(n, sizeof *R->args);
	R->argp = calloc(n, sizeof *R->argp);
	R->argv = calloc(n, sizeof *R->argv);
	if (!R->mem || !R->bytes || !R->args || !R->argp || !R->argv)
		return ct_error(d->ctx, CT_ERR_NOMEM, "out of memory");
	int arg = 0;
	cu_result e;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		R->bytes[a] = (size_t)ct_kernel_array_elements(k, a) * ct_dtype_size(ar->type);
		if ((e = d->cu.MemAlloc(&R->mem[a], R->bytes[a] + CUDA_GUARD)) != CU_SUCCESS) {
			R->mem[a] = 0;
			if (e == CU_ERROR_OUT_OF_MEMORY)
				return ct_error(d->ctx, CT_ERR_LIMIT,
				                "CUDA: no room on the device for array '%s' (%zu bytes) of kernel '%s': the "
				                "device has %zu bytes (%s)", ar->name, R->bytes[a], R->L->fn, d->total_mem, d->desc);
			return cu_fail(d, CT_ERR_RUNTIME, "cuMemAlloc", R->L->fn, e);
		}
		R->argp[arg] = R->mem[a];
		R->args[arg] = &R->argp[arg];
		arg++;
	}
	int np = 0;
	for (int p = 0; p < k->nparams; p++) {
		if (!k->params[p].runtime)
			continue;
		R->argv[np] = (long long)k->params[p].value;
		R->args[arg++] = &R->argv[np++];
	}
	for (int i = 0; i < 2; i++)
		if ((e = d->cu.EventCreate(&R->ev[i], 0)) != CU_SUCCESS) {
			R->ev[i] = NULL;
			return cu_fail(d, CT_ERR_RUNTIME, "cuEventCreate", NULL, e);
		}
	return CT_OK;
}

/* The guard bytes after each array still hold their pattern. */
static ct_status check_guards(cuda_run *R)
{
	cuda_dev *d = &R->s->d;
	ct_kernel *k = R->k;
	unsigned char back[CUDA_GUARD];
	for (int a = 0; a < k->narrays; a++) {
		if (!R->mem[a])
			continue;
		cu_result e = d->cu.MemcpyDtoH(back, R->mem[a] + R->bytes[a], CUDA_GUARD);
		if (e != CU_SUCCESS)
			return cu_fail(d, CT_ERR_RUNTIME, "cuMemcpyDtoH", R->L->fn, e);
		if (memcmp(back, guard_of(R, k->arrays[a].type), CUDA_GUARD) != 0)
			return ct_error(d->ctx, CT_ERR_RUNTIME, "CUDA: kernel '%s' wrote past the end of array '%s' (%s)",
			                R->L->fn, k->arrays[a].name, d->desc);
	}
	return CT_OK;
}

/* A launch refused or a kernel that faulted (an illegal address, a trap):
 * CT_ERR_RUNTIME naming the kernel; run_cuda_source then drops the device. */
static ct_status kernel_fault(cuda_run *R, const char *what, cu_result e)
{
	return cu_fail(&R->s->d, CT_ERR_RUNTIME, what, R->L->fn, e);
}

/* One run (run_timed_fn): inputs and guards in, the launch between two
 * events, outputs back, guards checked; *seconds is the events' time. */
static ct_status cuda_once(void *ud, void *const *buffers, double *seconds)
{
	cuda_run *R = ud;
	cuda_dev *d = &R->s->d;
	ct_kernel *k = R->k;
	cu_result e;
	for (int a = 0; a < k->narrays; a++) {
		if (!R->mem[a])
			continue;
		/* input-only arrays are the same in every timed run (run_measure
		 * starts each from the same inputs) and the kernel never writes
		 * them: copied once; the others every time */
		bool input = ir_array_readonly(&k->arrays[a]);
		if (R->bytes[a] && (!input || !R->inputs_loaded) &&
		    (e = d->cu.MemcpyHtoD(R->mem[a], buffers[a], R->bytes[a])) != CU_SUCCESS)
			return cu_fail(d, CT_ERR_RUNTIME, "cuMemcpyHtoD", R->L->fn, e);
		if ((e = d->cu.MemcpyHtoD(R->mem[a] + R->bytes[a], guard_of(R, k->arrays[a].type), CUDA_GUARD)) !=
		    CU_SUCCESS)
			return cu_fail(d, CT_ERR_RUNTIME, "cuMemcpyHtoD", R->L->fn, e);
	}
	R->inputs_loaded = true;
	if ((e = d->cu.EventRecord(R->ev[0], NULL)) != CU_SUCCESS)
		return cu_fail(d, CT_ERR_RUNTIME, "cuEventRecord", R->L->fn, e);
	e = d->cu.LaunchKernel(R->f, R->grid[0], R->grid[1], R->grid[2], R->block[0], R->block[1], R->block[2], 0, NULL,
	                       R->args, NULL);
	if (e != CU_SUCCESS)
		return kernel_fault(R, "the launch", e);
	if ((e = d->cu.EventRecord(R->ev[1], NULL)) != CU_SUCCESS)
		return cu_fail(d, CT_ERR_RUNTIME, "cuEventRecord", R->L->fn, e);
	if ((e = d->cu.EventSynchronize(R->ev[1])) != CU_SUCCESS || (e = d->cu.CtxSynchronize()) != CU_SUCCESS)
		return kernel_fault(R, "the run", e);
	float ms = 0;
	if ((e = d->cu.EventElapsedTime(&ms, R->ev[0], R->ev[1])) != CU_SUCCESS)
		return cu_fail(d, CT_ERR_RUNTIME, "cuEventElapsedTime", R->L->fn, e);
	*seconds = (double)ms * 1e-3;
	for (int a = 0; a < k->narrays; a++) {
		ct_role role = k->arrays[a].role;
		if (!R->mem[a] || (role != CT_OUTPUT && role != CT_INOUT) || !R->bytes[a])
			continue;
		if ((e = d->cu.MemcpyDtoH(buffers[a], R->mem[a], R->bytes[a])) != CU_SUCCESS)
			return cu_fail(d, CT_ERR_RUNTIME, "cuMemcpyDtoH", R->L->fn, e);
	}
	return check_guards(R);
}

/* ------------------------------------------------------------ run */

char *cuda_kernel_source(ct_kernel *k, size_t *len, ocl_launch *L)
{
	return eng_lowered_source(k, TARGET_CUDA, len, L);
}

/* Run the module's kernel f under launch L: warm (untimed), then measured
 * and verified by run_measure_timed. */
static ct_status run_module(cuda_state *s, ct_kernel *k, const ct_run_options *o, const ocl_launch *L, cu_function f,
                            ct_run_result *r)
{
	cuda_run R;
	memset(&R, 0, sizeof R);
	R.s = s;
	R.k = k;
	R.f = f;
	R.L = L;
	cuda_launch_shape(L, R.grid, R.block);
	guard_patterns(&R);
	ct_status st = check_limits(&s->d, L, f, R.grid, R.block);
	if (!st)
		st = run_alloc(&R);
	if (!st) {
		/* the first launch loads the module onto the device: warm, untimed */
		run_buffers wb;
		double sec = 0;
		st = run_buffers_alloc(k, &wb, false);
		if (!st) {
			st = cuda_once(&R, wb.data, &sec);
			run_buffers_free(&wb);
		}
		R.inputs_loaded = false; /* the timed runs' inputs are others */
	}
	if (!st)
		st = run_measure_timed(k, o, cuda_once, &R, r);
	run_free(&R);
	return st;
}

ct_status run_cuda_source(ct_kernel *k, const ct_run_options *o, const char *src, size_t len, const ocl_launch *L,
                          ct_run_result *r)
{
	ct_ctx *ctx = k->ctx;
	r->engine = "cuda";
	r->threads = 1;
	cuda_state *s = NULL;
	ct_status st = state_device(ctx, &s);
	if (st)
		return st;
	st = check_shared(&s->d, L);
	cu_module m = NULL;
	cu_function f = NULL;
	cuda_mod *mod = NULL;
	const char *how = "compiled";
	double t0 = ct_now();
	if (!st)
		st = module_get(s, src, len, L->fn, &m, &f, &mod, &how);
	r->compile_seconds = ct_now() - t0;
	r->code_cache = how;
	if (!st)
		st = run_module(s, k, o, L, f, r);
	if (m && !mod)
		s->d.cu.ModuleUnload(m);
	if (st == CT_ERR_RUNTIME) {
		/* a fault leaves the primary context unusable: the next run
		 * opens the device afresh (its last release destroys it) */
		state_close_device(s);
	}
	return st;
}

ct_status cuda_device_ready(ct_ctx *ctx)
{
	cuda_state *s = NULL;
	return state_device(ctx, &s);
}

ct_status run_cuda(ct_kernel *k, const ct_run_options *o, ct_run_result *r)
{
	ct_ctx *ctx = k->ctx;
	r->engine = "cuda";
	r->threads = 1;
	/* the device first: on a machine without one that is the answer,
	 * whatever the kernel */
	cuda_state *s = NULL;
	ct_status st = state_device(ctx, &s);
	if (st)
		return st;
	ocl_launch L;
	size_t len = 0;
	char *src = cuda_kernel_source(k, &len, &L);
	if (!src)
		return ct_ctx_last_status(ctx);
	st = run_cuda_source(k, o, src, len, &L, r);
	free(src);
	return st;
}
