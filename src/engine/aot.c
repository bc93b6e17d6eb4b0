/* aot.c: ahead-of-time packages: a header, a static and a shared library a C program links without cachet. */
#include "gen/gen.h"
#include "engine/engine.h"
#include "engine/targets.h"
#include "jit/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write data to path atomically: a temp file in the same folder, then rename,
 * so an existing package file is never left half written. */
ct_status aot_write_atomic(ct_ctx *ctx, const char *path, const char *data, size_t len)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return ct_error(ctx, CT_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
	bool ok = jit_write_all(fd, data, len);
	ok = (fsync(fd) == 0) && ok;
	ok = (close(fd) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return ct_error(ctx, CT_ERR_IO, "cannot write %s: %s", path, strerror(e));
	}
	return CT_OK;
}

/* Run the compiler (or ar) with argv; its output in the error on failure. */
static ct_status run_tool(ct_ctx *ctx, const char *exe, char *const argv[], const char *what)
{
	jit_proc res;
	memset(&res, 0, sizeof res);
	ct_status st = jit_run(ctx, exe, argv, NULL, JIT_DEFAULT_TIMEOUT, 16384, &res);
	if (st == CT_OK && (res.exit_code != 0 || res.timed_out))
		st = ct_error(ctx, CT_ERR_COMPILE, "%s failed (exit %d%s):\n%s", what, res.exit_code,
			      res.timed_out ? ", timed out" : "", res.out ? res.out : "");
	jit_proc_free(ctx, &res);
	return st;
}

ct_status aot_find_on_path(ct_ctx *ctx, const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n > 0 && n + strlen(name) + 2 < cap) {
			snprintf(out, cap, "%.*s/%s", (int)n, path, name);
			if (access(out, X_OK) == 0)
				return CT_OK;
		}
		path += n + (end ? 1 : 0);
	}
	return ct_error(ctx, CT_ERR_COMPILE, "program '%s' not found on PATH", name);
}

/* The package header: include guard, stdint, the documented prototype. */
static char *make_header(const ct_kernel *k)
{
	char *proto = gen_c_prototype(k);
	if (!proto)
		return NULL;
	/* C++ has no `restrict`: spell it through a macro the header defines */
	ct_buf p;
	ct_buf_init(&p);
	for (const char *q = proto; *q; q++) {
		if (strncmp(q, "*restrict ", 10) == 0) {
			ct_buf_puts(&p, "*CACHET_RESTRICT ");
			q += 9;
		} else {
			ct_buf_putc(&p, *q);
		}
	}
	free(proto);
	if (gen_c_openmp(k) == 2) {
		char name[300];
		gen_threads_symbol(k, name, sizeof name);
		ct_buf_printf(&p,
			      "/* Threads of the parallel loops of the next calls (n <= 0: one per\n"
			      " * processor); the default is OpenMP's (OMP_NUM_THREADS). */\n"
			      "void %s(int n);\n",
			      name);
	}
	char *body = ct_buf_take(&p);
	if (!body)
		return NULL;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b,
		      "/* %s.h: kernel '%s' built by cachet %s for this machine (-march=native).\n"
		      " * Link with -l%s (static: also -lm%s). Arrays are dense, in the layout given\n"
		      " * per argument; runtime sizes come last. */\n"
		      "#ifndef CACHET_%s_H\n#define CACHET_%s_H\n\n#include <stdint.h>\n\n"
		      "#ifndef CACHET_RESTRICT\n#ifdef __cplusplus\n#define CACHET_RESTRICT __restrict\n"
		      "#else\n#define CACHET_RESTRICT restrict\n#endif\n#endif\n\n"
		      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n%s\n"
		      "#ifdef __cplusplus\n}\n#endif\n#endif\n",
		      k->name, k->name, CACHET_VERSION, k->name, gen_c_openmp(k) == 2 ? " -fopenmp" : "", k->name,
		      k->name, body);
	free(body);
	return ct_buf_take(&b);
}

ct_status aot_compile_package(ct_kernel *k, const char *src, const char *obj, const char *lib_a, const char *lib_so,
                              const char *lib, bool openmp, const char *extra)
{
	ct_ctx *ctx = k->ctx;
	jit_state *js = jit_state_get(ctx);
	if (!js)
		return ct_ctx_last_status(ctx);
	/* the same compiler as native runs: ct_ctx_set_compiler, else $CC, else cc */
	const char *cmd = js->cc_override ? js->cc_override : js->env_cc ? js->env_cc : "cc";
	jit_compiler *cc = jit_compiler_get(js, cmd);
	if (!cc)
		return ct_ctx_last_status(ctx);
	/* compile once to an object, then archive it and link it; the words
	 * are writable copies because exec takes char *const[] */
	char fpic[] = "-fPIC", dc[] = "-c", dout[] = "-o";
	char shared[] = "-shared", lm[] = "-lm", arw[] = "ar", rcs[] = "rcs";
	char p_src[4096], p_obj[4096], p_a[4096], p_so[4096], p_lib[256];
	snprintf(p_src, sizeof p_src, "%s", src);
	snprintf(p_obj, sizeof p_obj, "%s", obj);
	snprintf(p_a, sizeof p_a, "%s", lib_a);
	snprintf(p_so, sizeof p_so, "%s", lib_so);
	snprintf(p_lib, sizeof p_lib, "%s", lib ? lib : "");
	char *argv[64];
	int n = 0;
	for (int i = 0; i < cc->nwords && n < 48; i++)
		argv[n++] = cc->words[i];
	/* the compile policy of native runs (jit_policy_flags), then extra */
	const char *policy[JIT_POLICY_MAX];
	int np = jit_policy_flags(cc, policy);
	char p_pol[JIT_POLICY_MAX][64], p_extra[64];
	for (int i = 0; i < np; i++) {
		snprintf(p_pol[i], sizeof p_pol[i], "%s", policy[i]);
		argv[n++] = p_pol[i];
	}
	if (extra) {
		snprintf(p_extra, sizeof p_extra, "%s", extra);
		argv[n++] = p_extra;
	}
	char *flags[] = {fpic, dc, dout, p_obj, p_src};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		argv[n++] = flags[i];
	/* OpenMP for parallel loops, its simd pragmas for vectorized ones */
	char omp[] = "-fopenmp", simd[] = "-fopenmp-simd";
	int need = openmp ? gen_c_openmp(k) : 0;
	if (need)
		argv[n++] = need == 2 ? omp : simd;
	argv[n] = NULL;
	ct_status st = run_tool(ctx, cc->exe, argv, "compiling the package");
	if (!st) {
		n = cc->nwords < 48 ? cc->nwords : 48;
		char *lflags[] = {shared, dout, p_so, p_obj, lm};
		for (size_t i = 0; i < sizeof lflags / sizeof lflags[0]; i++)
			argv[n++] = lflags[i];
		if (need == 2)
			argv[n++] = omp;
		if (lib)
			argv[n++] = p_lib;
		argv[n] = NULL;
		st = run_tool(ctx, cc->exe, argv, "linking the shared library");
	}
	if (!st) {
		unlink(lib_a);
		char ar[4096];
		char *aargv[] = {arw, rcs, p_a, p_obj, NULL};
		st = aot_find_on_path(ctx, "ar", ar, sizeof ar);
		if (!st)
			st = run_tool(ctx, ar, aargv, "archiving the static library");
	}
	unlink(obj);
	return st;
}

/* Check the package's shared library lib_so before it ships (selftest.c):
 * a private copy is loaded (a path dlopen has not seen: a rebuilt
 * library must not be answered by the earlier one) and its uniform entry
 * run on a test instance against the interpreter. */
static ct_status package_selftest(ct_kernel *k, const char *lib_so, selftest_result *res)
{
	ct_ctx *ctx = k->ctx;
	const char *tmpdir = getenv("TMPDIR");
	char dir[4096], copy[4200];
	snprintf(dir, sizeof dir, "%s/cachet-pkgcheck-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir))
		return ct_error(ctx, CT_ERR_IO, "cannot create a folder in %s: %s", dir, strerror(errno));
	snprintf(copy, sizeof copy, "%s/lib%s.so", dir, k->name);
	unsigned char *data = NULL;
	size_t len = 0;
	ct_status st = jit_read_file(ctx, lib_so, (size_t)1 << 30, &data, &len);
	if (!st)
		st = aot_write_atomic(ctx, copy, (const char *)data, len);
	ct_free(ctx, data);
	void *h = st ? NULL : dlopen(copy, RTLD_NOW | RTLD_LOCAL | (gen_c_openmp(k) == 2 ? RTLD_NODELETE : 0));
	if (!st && !h) {
		const char *e = dlerror();
		st = ct_error(ctx, CT_ERR_COMPILE, "cannot load the package's library %s: %s", lib_so, e ? e : "?");
	}
	char fn[300], ename[300];
	gen_symbol_names(k, fn, ename, sizeof fn);
	void *sym = h ? dlsym(h, ename) : NULL;
	if (!st && !sym)
		st = ct_error(ctx, CT_ERR_COMPILE, "the package's library %s lacks symbol %s", lib_so, ename);
	if (!st) {
		selftest_fns f = {NULL, NULL};
		memcpy(&f.entry, &sym, sizeof sym);
		st = selftest_run(k, &f, res);
	}
	if (h)
		dlclose(h);
	unlink(copy);
	rmdir(dir);
	return st;
}

/* The package, checked before it ships: wrong under the compile policy,
 * it is compiled again with JIT_FALLBACK_FLAG (a warning) and checked
 * again; wrong again, its libraries are removed and the build fails. */
static ct_status package_checked(ct_kernel *k, const char *path, const char *obj, const char *lib_a,
                                 const char *lib_so)
{
	ct_ctx *ctx = k->ctx;
	selftest_result res, first;
	ct_status st = package_selftest(k, lib_so, &res);
	if (st || res.verdict != SELFTEST_BAD)
		return st;
	first = res;
	st = aot_compile_package(k, path, obj, lib_a, lib_so, NULL, true, JIT_FALLBACK_FLAG);
	if (!st)
		st = package_selftest(k, lib_so, &res);
	char cc[300];
	jit_compiler_line(ctx, NULL, cc, sizeof cc);
	if (!st && res.verdict != SELFTEST_BAD) {
		jit_warn_ctx(ctx,
			     "kernel '%s': the package compiled by %s gave wrong results (test instance %s: array "
			     "'%s', max relative error %.3g), a suspected compiler bug; it is built with %s, which "
			     "is right (docs/LIBRARY.md, \"The compile policy\")",
			     k->name, cc, first.instance, first.array, first.max_rel_error, JIT_FALLBACK_FLAG);
		return CT_OK;
	}
	unlink(lib_a);
	unlink(lib_so);
	if (st)
		return st;
	return ct_error(ctx, CT_ERR_VERIFY,
			"kernel '%s': the package's compiled code gives wrong results where the reference "
			"interpreter is right (test instance %s: array '%s', max relative error %.3g), also "
			"compiled with %s: a miscompile by the C compiler %s or a code generation bug of cachet is "
			"suspected (please report it with the file), and no library was "
			"shipped. Workaround: another compiler ($CC, --cc clang-14) or another schedule or plan; "
			"see docs/LIBRARY.md, \"The compile policy\"",
			k->name, res.instance, res.array, res.max_rel_error, JIT_FALLBACK_FLAG, cc);
}

ct_status ct_kernel_build(ct_kernel *k, const char *dir)
{
	if (!k || !dir)
		return CT_ERR_USAGE;
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	ct_ctx *ctx = k->ctx;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return ct_error(ctx, CT_ERR_IO, "cannot create folder %s: %s", dir, strerror(errno));
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return ct_error(ctx, CT_ERR_IO, "%s is not a folder", dir);
	ct_status st = eng_kernel_target(k)->package(k, dir);
	if (!st && ct_kernel_is_distributed(k))
		st = dist_package(k, dir);
	return st;
}

ct_status aot_host_package(ct_kernel *k, const char *dir)
{
	ct_ctx *ctx = k->ctx;
	size_t len = 0;
	char *src = ct_kernel_emit(k, "host", &len);
	if (!src)
		return ct_ctx_last_status(ctx);
	char *hdr = make_header(k);
	char path[4096], obj[4096], lib_a[4096], lib_so[4096], hpath[4096];
	snprintf(path, sizeof path, "%s/%s.c", dir, k->name);
	snprintf(hpath, sizeof hpath, "%s/%s.h", dir, k->name);
	snprintf(obj, sizeof obj, "%s/%s.o", dir, k->name);
	snprintf(lib_a, sizeof lib_a, "%s/lib%s.a", dir, k->name);
	snprintf(lib_so, sizeof lib_so, "%s/lib%s.so", dir, k->name);
	ct_status st = hdr ? CT_OK : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st)
		st = aot_write_atomic(ctx, path, src, len);
	if (!st)
		st = aot_write_atomic(ctx, hpath, hdr, strlen(hdr));
	if (!st)
		st = aot_compile_package(k, path, obj, lib_a, lib_so, NULL, true, NULL);
	if (!st)
		st = package_checked(k, path, obj, lib_a, lib_so);
	free(src);
	free(hdr);
	return st;
}
