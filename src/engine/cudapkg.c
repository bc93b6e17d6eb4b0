/* cudapkg.c: `cachet build` for plan(target=cuda): a package embedding the CUDA C source, a cubin for sm_90a and a PTX, with a C host wrapper that loads the NVIDIA driver with dlopen. */
#include "engine/cudapkg.h"
#include "engine/pkgtext.h"
#include "jit/jit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The package of kernel NAME, in DIR:
 *   NAME.cu      the CUDA C source (to read; the wrapper embeds it);
 *   NAME.h       the wrapper's API: a handle (device, module, function),
 *                run on host arrays, launch on device pointers, status
 *                codes and the last error's message;
 *   NAME.c       the wrapper, with the source, a cubin for sm_90a (H100,
 *                H200) and a PTX for the lowest architecture nvcc takes:
 *                the wrapper loads the cubin on a device of compute
 *                capability 9.0 and the PTX (which the driver compiles for
 *                the device) on any other;
 *   libNAME.a, libNAME.so   the wrapper compiled; no CUDA library is
 *                linked (link with -ldl): the wrapper opens libcuda.so.1
 *                when a handle is made, so a program that links the
 *                package runs where there is no NVIDIA driver and gets
 *                CACHET_CU_NO_DRIVER with a message saying so.
 * Without nvcc the package is refused (CT_ERR_UNSUPPORTED): a package
 * without compiled code would need NVRTC on every machine that runs it.
 * The grid is computed in the wrapper from the index bounds, so runtime
 * sizes work as in `cachet run`.
 */

/* ------------------------------------------------------------ compiling with nvcc */

/* The nvcc to use into out, as the CUDA engine finds it: $CACHET_NVCC,
 * else /usr/local/cuda/bin/nvcc, else nvcc on $PATH. false when none is
 * executable. */
static bool find_nvcc(char *out, size_t cap)
{
	const char *env = getenv("CACHET_NVCC");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, X_OK) == 0;
	}
	snprintf(out, cap, "/usr/local/cuda/bin/nvcc");
	if (access(out, X_OK) == 0)
		return true;
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n > 0 && jit_fmt(out, cap, "%.*s/nvcc", (int)n, path) && access(out, X_OK) == 0)
			return true;
		path += n + (end ? 1 : 0);
	}
	return false;
}

/* ptxas next to nvcc (the toolkit's bin folder) into out; false when
 * there is none. */
static bool find_ptxas(const char *nvcc, char *out, size_t cap)
{
	const char *slash = strrchr(nvcc, '/');
	if (!slash || !jit_fmt(out, cap, "%.*s/ptxas", (int)(slash - nvcc), nvcc))
		return false;
	return access(out, X_OK) == 0;
}

/* Run nvcc (or ptxas) with argv; its output into *log (malloc'd) on failure. */
static ct_status run_nvcc(ct_ctx *ctx, const char *nvcc, char *const argv[], bool *ok, char **log)
{
	jit_proc res;
	memset(&res, 0, sizeof res);
	ct_status st = jit_run(ctx, nvcc, argv, NULL, JIT_DEFAULT_TIMEOUT, 16384, &res);
	*ok = st == CT_OK && res.exit_code == 0 && !res.timed_out;
	if (st == CT_OK && !*ok) {
		free(*log);
		*log = strdup(res.timed_out ? "(timed out)" : res.out ? res.out : "");
	}
	jit_proc_free(ctx, &res);
	return st;
}

/* What nvcc made of the source: the cubin and the PTX (malloc'd). */
typedef struct cuda_code {
	unsigned char *cubin;
	size_t cubin_n;
	char *ptx;
	size_t ptx_n;
	int ptx_arch;   /* compute_XX of the PTX, e.g. 75 */
	bool ptx_exact; /* compute_XXa: only for devices of that capability */
} cuda_code;

static void cuda_code_free(cuda_code *c)
{
	free(c->cubin);
	free(c->ptx);
	memset(c, 0, sizeof *c);
}

/* Read path (at most 256 MiB) into a malloc'd buffer (NUL-terminated). */
static ct_status read_whole(ct_ctx *ctx, const char *path, unsigned char **out, size_t *n)
{
	unsigned char *d = NULL;
	size_t len = 0;
	ct_status st = jit_read_file(ctx, path, (size_t)256 << 20, &d, &len);
	if (st)
		return st;
	*out = malloc(len + 1);
	if (*out) {
		memcpy(*out, d, len);
		(*out)[len] = 0;
		*n = len;
	}
	ct_free(ctx, d);
	return *out ? CT_OK : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
}

/* The cubin of source p_cu (for CUDAPKG_CUBIN_ARCH) into c, through p_cubin. */
static ct_status nvcc_cubin(ct_kernel *k, const char *nvcc, char *p_cu, char *p_cubin, cuda_code *c)
{
	/* argv[0] is nvcc's full path: nvcc finds its include/ from it, not PATH */
	char w_nvcc[4096], w_cubin[] = "--cubin", w_arch[] = "-arch=" CUDAPKG_CUBIN_ARCH, w_o[] = "-o";
	snprintf(w_nvcc, sizeof w_nvcc, "%s", nvcc);
	char *argv[] = {w_nvcc, w_cubin, w_arch, w_o, p_cubin, p_cu, NULL};
	char *log = NULL;
	bool ok = false;
	ct_status st = run_nvcc(k->ctx, nvcc, argv, &ok, &log);
	if (!st && !ok)
		st = ct_error(k->ctx, CT_ERR_COMPILE, "kernel '%s': nvcc --cubin -arch=%s failed on the generated CUDA C:\n%s",
		              k->name, CUDAPKG_CUBIN_ARCH, log ? log : "");
	if (!st)
		st = read_whole(k->ctx, p_cubin, &c->cubin, &c->cubin_n);
	free(log);
	unlink(p_cubin);
	return st;
}

/* The PTX of source p_cu into c, through p_ptx (and p_chk): for the lowest
 * architecture of CUDAPKG_PTX_ARCHS that nvcc writes PTX for and, when
 * ptxas is next to nvcc, that the kernel fits (a kernel may need more
 * shared memory than older GPUs have). */
static ct_status nvcc_ptx(ct_kernel *k, const char *nvcc, char *p_cu, char *p_ptx, char *p_chk, cuda_code *c)
{
	char w_nvcc[4096], w_ptx[] = "--ptx", w_o[] = "-o", w_arch[64] = "", w_sm[64];
	char ptxas[4096];
	snprintf(w_nvcc, sizeof w_nvcc, "%s", nvcc); /* full path, as in nvcc_cubin */
	bool check = find_ptxas(nvcc, ptxas, sizeof ptxas);
	static const char *const archs[] = CUDAPKG_PTX_ARCHS;
	char *log = NULL;
	bool ok = false;
	ct_status st = CT_OK;
	for (size_t i = 0; !st && !ok && i < sizeof archs / sizeof archs[0]; i++) {
		snprintf(w_arch, sizeof w_arch, "-arch=compute_%s", archs[i]);
		char *argv[] = {w_nvcc, w_ptx, w_arch, w_o, p_ptx, p_cu, NULL};
		st = run_nvcc(k->ctx, nvcc, argv, &ok, &log);
		if (!st && ok && check) {
			snprintf(w_sm, sizeof w_sm, "-arch=sm_%s", archs[i]);
			char *sargv[] = {ptxas, w_sm, p_ptx, w_o, p_chk, NULL};
			st = run_nvcc(k->ctx, ptxas, sargv, &ok, &log);
			unlink(p_chk);
		}
		c->ptx_arch = atoi(archs[i]);
		c->ptx_exact = strchr(archs[i], 'a') != NULL;
	}
	if (!st && !ok)
		st = ct_error(k->ctx, CT_ERR_COMPILE, "kernel '%s': no PTX for any architecture up to %s (nvcc --ptx, ptxas):\n%s",
		              k->name, w_arch + 6, log ? log : "");
	if (!st) {
		unsigned char *p = NULL;
		st = read_whole(k->ctx, p_ptx, &p, &c->ptx_n);
		c->ptx = (char *)p;
	}
	free(log);
	unlink(p_ptx);
	return st;
}

/* Compile cu in folder tmp: the cubin, then the PTX. */
static ct_status nvcc_compile(ct_kernel *k, const char *nvcc, const char *tmp, const char *cu, size_t len,
                              cuda_code *c)
{
	ct_ctx *ctx = k->ctx;
	char p_cu[4096], p_cubin[4096], p_ptx[4096], p_chk[4096];
	if (!jit_fmt(p_cu, sizeof p_cu, "%s/%s.cu", tmp, k->name) ||
	    !jit_fmt(p_cubin, sizeof p_cubin, "%s/%s.cubin", tmp, k->name) ||
	    !jit_fmt(p_ptx, sizeof p_ptx, "%s/%s.ptx", tmp, k->name) ||
	    !jit_fmt(p_chk, sizeof p_chk, "%s/check.cubin", tmp))
		return ct_error(ctx, CT_ERR_IO, "the temporary folder's path %s is too long", tmp);
	ct_status st = aot_write_atomic(ctx, p_cu, cu, len);
	if (!st)
		st = nvcc_cubin(k, nvcc, p_cu, p_cubin, c);
	if (!st)
		st = nvcc_ptx(k, nvcc, p_cu, p_ptx, p_chk, c);
	unlink(p_cu);
	return st;
}

/* The cubin and the PTX of cu, compiled in a private temporary folder. */
static ct_status cuda_compile(ct_kernel *k, const char *cu, size_t len, cuda_code *c)
{
	ct_ctx *ctx = k->ctx;
	char nvcc[4096];
	if (!find_nvcc(nvcc, sizeof nvcc))
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
		                "kernel '%s': a CUDA package needs nvcc to compile the kernel into a cubin and a PTX, "
		                "and none was found (not $CACHET_NVCC, nor /usr/local/cuda/bin/nvcc, nor nvcc on PATH); "
		                "install the CUDA toolkit or set CACHET_NVCC (docs/CUDA.md, \"Packages\")",
		                k->name);
	const char *t = getenv("TMPDIR");
	char tmp[4096];
	if (!jit_fmt(tmp, sizeof tmp, "%s/cachet-cudapkg-XXXXXX", t && *t ? t : "/tmp"))
		return ct_error(ctx, CT_ERR_IO, "$TMPDIR is too long");
	if (!mkdtemp(tmp))
		return ct_error(ctx, CT_ERR_IO, "cannot create a folder in %s: %s", t && *t ? t : "/tmp", strerror(errno));
	ct_status st = nvcc_compile(k, nvcc, tmp, cu, len, c);
	rmdir(tmp);
	if (st)
		cuda_code_free(c);
	return st;
}

/* ------------------------------------------------------------ the header */

/* The wrapper's arguments: arrays (temps excluded) as device pointers
 * (`unsigned long long NAME`, a CUdeviceptr) or as host pointers, then the
 * runtime params as int64_t. */
static void c_args(ct_buf *b, const ct_kernel *k, bool host)
{
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		if (host)
			ct_buf_printf(b, ", %s%s *%s", ir_array_readonly(ar) ? "const " : "", ir_dtype_c(ar->type),
			              ar->name);
		else
			ct_buf_printf(b, ", unsigned long long %s", ar->name);
	}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(b, ", int64_t %s", k->params[p].name);
}

/* Append tpl with every "@N@" replaced by the kernel's name. */
static void put_tpl(ct_buf *b, const char *tpl, const char *name)
{
	for (const char *p = tpl; *p;) {
		const char *at = strstr(p, "@N@");
		if (!at) {
			ct_buf_puts(b, p);
			return;
		}
		ct_buf_printf(b, "%.*s%s", (int)(at - p), p, name);
		p = at + 3;
	}
}

static const char header_head[] =
	"#ifndef CACHET_@N@_CU_H\n#define CACHET_@N@_CU_H\n\n"
	"#include <stddef.h>\n#include <stdint.h>\n\n"
	"#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
	"/* The status of every call (the same in every cachet CUDA package). */\n"
	"#ifndef CACHET_CU_STATUS\n#define CACHET_CU_STATUS\n"
	"enum {\n"
	"\tCACHET_CU_OK = 0,\n"
	"\tCACHET_CU_NO_DRIVER = 1, /* no NVIDIA driver: libcuda.so.1 cannot be loaded */\n"
	"\tCACHET_CU_NO_DEVICE = 2, /* the driver sees no CUDA device (or not the one asked for) */\n"
	"\tCACHET_CU_NO_CODE = 3,   /* neither the cubin nor the PTX loads on the device */\n"
	"\tCACHET_CU_ERROR = 4,     /* a CUDA call failed: the message names it and its error */\n"
	"\tCACHET_CU_NOMEM = 5,     /* host memory */\n"
	"\tCACHET_CU_USAGE = 6      /* a NULL handle, or sizes a launch cannot have */\n"
	"};\n#endif\n\n"
	"/* The kernel's CUDA C source (NUL-terminated), its PTX (NUL-terminated,\n"
	" * for compute_XX with XX = cachet_@N@_cu_ptx_arch) and its cubin (for\n"
	" * sm_YYa with YY = cachet_@N@_cu_cubin_arch, cachet_@N@_cu_cubin_size bytes). */\n"
	"extern const char cachet_@N@_cu_source[];\n"
	"extern const char cachet_@N@_cu_ptx[];\n"
	"extern const int cachet_@N@_cu_ptx_arch;\n"
	"extern const unsigned char cachet_@N@_cu_cubin[];\n"
	"extern const size_t cachet_@N@_cu_cubin_size;\n"
	"extern const int cachet_@N@_cu_cubin_arch;\n\n"
	"/* The kernel loaded on one device (in its primary context, the one the\n"
	" * CUDA runtime API, CuPy and PyTorch use). A handle is used by one thread\n"
	" * at a time. */\n"
	"typedef struct cachet_@N@_cu cachet_@N@_cu;\n\n"
	"/* Load the NVIDIA driver (libcuda.so.1, with dlopen) and the kernel on\n"
	" * CUDA device `device` (0: the first): the cubin when the device's compute\n"
	" * capability is the cubin's, else the PTX, which the driver compiles for\n"
	" * the device. Returns CACHET_CU_OK with *h set, or a status with *h NULL\n"
	" * and the reason in err (cap bytes; err may be NULL). */\n"
	"int cachet_@N@_cu_new(cachet_@N@_cu **h, int device, char *err, size_t cap);\n"
	"/* 1 when the kernel came from the embedded cubin, 0 from the PTX. */\n"
	"int cachet_@N@_cu_from_cubin(const cachet_@N@_cu *h);\n"
	"/* The device: its name and compute capability. */\n"
	"const char *cachet_@N@_cu_device(const cachet_@N@_cu *h);\n"
	"/* The message of the last call on h when it failed (\"\" when it did not). */\n"
	"const char *cachet_@N@_cu_error(const cachet_@N@_cu *h);\n\n";

static char *make_header(const ct_kernel *k, const cuda_code *c, const ocl_launch *L)
{
	const char *n = k->name;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b,
	              "/* %s.h: kernel '%s' (plan target=cuda) built by cachet %s: its CUDA C source,\n"
	              " * a cubin for %s (compute capability %d.%d), a PTX for compute_%d%s (%s:\n"
	              " * the driver compiles it), and a host wrapper that loads the NVIDIA driver at\n"
	              " * run time. Link with -l%s -ldl; no CUDA library is needed to link. */\n",
	              n, n, CACHET_VERSION, CUDAPKG_CUBIN_ARCH, 9, 0, c->ptx_arch, c->ptx_exact ? "a" : "",
	              c->ptx_exact ? "the same GPUs: the kernel fits no older one" : "other GPUs", n);
	put_tpl(&b, header_head, n);
	char blocks[128];
	if (L->explicit_local)
		snprintf(blocks, sizeof blocks, "blocks of %zu x %zu x %zu threads", L->local[0], L->ndims > 1 ? L->local[1] : 1,
		         L->ndims > 2 ? L->local[2] : 1);
	else
		snprintf(blocks, sizeof blocks, "blocks the wrapper picks as divisors of the threads");
	ct_buf_printf(&b,
	              "/* Launch the kernel (not blocking) on stream (a CUstream; NULL: the\n"
	              " * default stream), its grid computed from the sizes (%s).\n"
	              " * The arrays are device pointers (CUdeviceptr) of the device's primary\n"
	              " * context:\n",
	              blocks);
	pkg_array_docs(&b, k);
	ct_buf_printf(&b, " * A status; the launch's own errors only (a fault shows at the next\n"
	                  " * synchronization). */\nint cachet_%s_cu_launch(cachet_%s_cu *h", n, n);
	c_args(&b, k, false);
	ct_buf_printf(&b, ", void *stream);\n"
	                  "/* The same on host arrays: device arrays made, every array copied in,\n"
	                  " * the kernel run, the output and inout arrays copied back (blocking). */\n"
	                  "int cachet_%s_cu_run(cachet_%s_cu *h",
	              n, n);
	c_args(&b, k, true);
	ct_buf_printf(&b, ");\n/* Unload the kernel and release the device's primary context; NULL is a\n"
	                  " * no-op. */\nvoid cachet_%s_cu_free(cachet_%s_cu *h);\n\n"
	                  "#ifdef __cplusplus\n}\n#endif\n#endif\n",
	              n, n);
	return ct_buf_take(&b);
}

/* ------------------------------------------------------------ the wrapper */

/* The driver API the wrapper uses, its own prototypes (no cuda.h), the
 * handle, and the calls that do not depend on the kernel's arguments. */
static const char wrapper_runtime[] =
	"/* The driver API, as libcuda.so.1 exports it (the _v2 names are those\n"
	" * cuda.h maps the calls to): own declarations, so that neither cuda.h nor\n"
	" * a CUDA library is needed to build or link. */\n"
	"typedef int ct_CUresult;\n"
	"typedef int ct_CUdevice;\n"
	"typedef struct ct_CUctx_st *ct_CUcontext;\n"
	"typedef struct ct_CUmod_st *ct_CUmodule;\n"
	"typedef struct ct_CUfunc_st *ct_CUfunction;\n"
	"typedef struct ct_CUstream_st *ct_CUstream;\n"
	"typedef unsigned long long ct_CUdeviceptr;\n"
	"enum {\n"
	"\tCT_CUDA_ERROR_NO_DEVICE = 100,\n"
	"\tCT_ATTR_MAX_GRID_X = 5, CT_ATTR_MAX_GRID_Y = 6, CT_ATTR_MAX_GRID_Z = 7,\n"
	"\tCT_ATTR_CC_MAJOR = 75, CT_ATTR_CC_MINOR = 76,\n"
	"\tCT_FUNC_MAX_THREADS = 0,\n"
	"\tCT_JIT_ERROR_LOG_BUFFER = 5, CT_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6\n"
	"};\n\n"
	"typedef struct ct_cuda_api {\n"
	"\tct_CUresult (*Init)(unsigned);\n"
	"\tct_CUresult (*DeviceGetCount)(int *);\n"
	"\tct_CUresult (*DeviceGet)(ct_CUdevice *, int);\n"
	"\tct_CUresult (*DeviceGetAttribute)(int *, int, ct_CUdevice);\n"
	"\tct_CUresult (*DeviceGetName)(char *, int, ct_CUdevice);\n"
	"\tct_CUresult (*DevicePrimaryCtxRetain)(ct_CUcontext *, ct_CUdevice);\n"
	"\tct_CUresult (*DevicePrimaryCtxRelease)(ct_CUdevice);\n"
	"\tct_CUresult (*CtxPushCurrent)(ct_CUcontext);\n"
	"\tct_CUresult (*CtxPopCurrent)(ct_CUcontext *);\n"
	"\tct_CUresult (*ModuleLoadDataEx)(ct_CUmodule *, const void *, unsigned, int *, void **);\n"
	"\tct_CUresult (*ModuleUnload)(ct_CUmodule);\n"
	"\tct_CUresult (*ModuleGetFunction)(ct_CUfunction *, ct_CUmodule, const char *);\n"
	"\tct_CUresult (*FuncGetAttribute)(int *, int, ct_CUfunction);\n"
	"\tct_CUresult (*MemAlloc)(ct_CUdeviceptr *, size_t);\n"
	"\tct_CUresult (*MemFree)(ct_CUdeviceptr);\n"
	"\tct_CUresult (*MemcpyHtoD)(ct_CUdeviceptr, const void *, size_t);\n"
	"\tct_CUresult (*MemcpyDtoH)(void *, ct_CUdeviceptr, size_t);\n"
	"\tct_CUresult (*LaunchKernel)(ct_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,\n"
	"\t                            unsigned, ct_CUstream, void **, void **);\n"
	"\tct_CUresult (*StreamSynchronize)(ct_CUstream);\n"
	"\tct_CUresult (*GetErrorName)(ct_CUresult, const char **);\n"
	"\tct_CUresult (*GetErrorString)(ct_CUresult, const char **);\n"
	"} ct_cuda_api;\n\n"
	"static const struct {\n\tconst char *name;\n\tsize_t at;\n} ct_cuda_syms[] = {\n"
	"\t{\"cuInit\", offsetof(ct_cuda_api, Init)},\n"
	"\t{\"cuDeviceGetCount\", offsetof(ct_cuda_api, DeviceGetCount)},\n"
	"\t{\"cuDeviceGet\", offsetof(ct_cuda_api, DeviceGet)},\n"
	"\t{\"cuDeviceGetAttribute\", offsetof(ct_cuda_api, DeviceGetAttribute)},\n"
	"\t{\"cuDeviceGetName\", offsetof(ct_cuda_api, DeviceGetName)},\n"
	"\t{\"cuDevicePrimaryCtxRetain\", offsetof(ct_cuda_api, DevicePrimaryCtxRetain)},\n"
	"\t{\"cuDevicePrimaryCtxRelease_v2\", offsetof(ct_cuda_api, DevicePrimaryCtxRelease)},\n"
	"\t{\"cuCtxPushCurrent_v2\", offsetof(ct_cuda_api, CtxPushCurrent)},\n"
	"\t{\"cuCtxPopCurrent_v2\", offsetof(ct_cuda_api, CtxPopCurrent)},\n"
	"\t{\"cuModuleLoadDataEx\", offsetof(ct_cuda_api, ModuleLoadDataEx)},\n"
	"\t{\"cuModuleUnload\", offsetof(ct_cuda_api, ModuleUnload)},\n"
	"\t{\"cuModuleGetFunction\", offsetof(ct_cuda_api, ModuleGetFunction)},\n"
	"\t{\"cuFuncGetAttribute\", offsetof(ct_cuda_api, FuncGetAttribute)},\n"
	"\t{\"cuMemAlloc_v2\", offsetof(ct_cuda_api, MemAlloc)},\n"
	"\t{\"cuMemFree_v2\", offsetof(ct_cuda_api, MemFree)},\n"
	"\t{\"cuMemcpyHtoD_v2\", offsetof(ct_cuda_api, MemcpyHtoD)},\n"
	"\t{\"cuMemcpyDtoH_v2\", offsetof(ct_cuda_api, MemcpyDtoH)},\n"
	"\t{\"cuLaunchKernel\", offsetof(ct_cuda_api, LaunchKernel)},\n"
	"\t{\"cuStreamSynchronize\", offsetof(ct_cuda_api, StreamSynchronize)},\n"
	"\t{\"cuGetErrorName\", offsetof(ct_cuda_api, GetErrorName)},\n"
	"\t{\"cuGetErrorString\", offsetof(ct_cuda_api, GetErrorString)},\n"
	"};\n\n"
	"struct cachet_@N@_cu {\n"
	"\tvoid *lib; /* libcuda.so.1 */\n"
	"\tct_cuda_api api;\n"
	"\tct_CUdevice dev;\n"
	"\tint has_ctx;\n"
	"\tct_CUcontext cx;\n"
	"\tct_CUmodule mod;\n"
	"\tct_CUfunction fn;\n"
	"\tint from_cubin;\n"
	"\tint max_threads; /* per block, for this kernel on this device */\n"
	"\tint max_grid[3];\n"
	"\tchar device[300];\n"
	"\tchar msg[2048];\n"
	"};\n\n"
	"/* Record the message of a failure on h; returns status. */\n"
	"static int ct_fail(cachet_@N@_cu *h, int status, const char *fmt, ...)\n"
	"\t__attribute__((format(printf, 3, 4)));\n"
	"static int ct_fail(cachet_@N@_cu *h, int status, const char *fmt, ...)\n{\n"
	"\tva_list ap;\n\tva_start(ap, fmt);\n\tvsnprintf(h->msg, sizeof h->msg, fmt, ap);\n\tva_end(ap);\n"
	"\treturn status;\n}\n\n"
	"/* CACHET_CU_OK when r is CUDA_SUCCESS, else CACHET_CU_ERROR with what\n"
	" * failed and the driver's name and text of the error. */\n"
	"static int ct_check(cachet_@N@_cu *h, ct_CUresult r, const char *what)\n{\n"
	"\tif (r == 0)\n\t\treturn CACHET_CU_OK;\n"
	"\tconst char *name = NULL, *text = NULL;\n"
	"\tif (h->api.GetErrorName(r, &name) != 0 || !name)\n\t\tname = \"unknown CUDA error\";\n"
	"\tif (h->api.GetErrorString(r, &text) != 0 || !text)\n\t\ttext = \"\";\n"
	"\treturn ct_fail(h, CACHET_CU_ERROR, \"kernel '@N@': %s failed: %s (%d): %s\", what, name, (int)r, text);\n}\n\n"
	"static int ct_open_driver(cachet_@N@_cu *h)\n{\n"
	"\th->lib = dlopen(\"libcuda.so.1\", RTLD_NOW | RTLD_LOCAL);\n"
	"\tif (!h->lib) {\n"
	"\t\tconst char *why = dlerror();\n"
	"\t\treturn ct_fail(h, CACHET_CU_NO_DRIVER,\n"
	"\t\t               \"kernel '@N@': no NVIDIA driver: libcuda.so.1 cannot be loaded (%s); this CUDA kernel \"\n"
	"\t\t               \"needs an NVIDIA GPU and its driver\", why ? why : \"not found\");\n\t}\n"
	"\tfor (size_t i = 0; i < sizeof ct_cuda_syms / sizeof ct_cuda_syms[0]; i++) {\n"
	"\t\tvoid *p = dlsym(h->lib, ct_cuda_syms[i].name);\n"
	"\t\tif (!p)\n"
	"\t\t\treturn ct_fail(h, CACHET_CU_NO_DRIVER,\n"
	"\t\t\t               \"kernel '@N@': the NVIDIA driver's libcuda.so.1 has no %s (a driver too old)\",\n"
	"\t\t\t               ct_cuda_syms[i].name);\n"
	"\t\tmemcpy((char *)&h->api + ct_cuda_syms[i].at, &p, sizeof p);\n\t}\n"
	"\treturn CACHET_CU_OK;\n}\n\n"
	"/* Open device number device: its limits, its name, its primary context;\n"
	" * its compute capability in *cc (e.g. 90). */\n"
	"static int ct_open_device(cachet_@N@_cu *h, int device, int *cc)\n{\n"
	"\tct_CUresult r = h->api.Init(0);\n"
	"\tif (r == CT_CUDA_ERROR_NO_DEVICE)\n"
	"\t\treturn ct_fail(h, CACHET_CU_NO_DEVICE, \"kernel '@N@': the NVIDIA driver sees no CUDA device\");\n"
	"\tint count = 0, st = ct_check(h, r, \"cuInit\");\n"
	"\tif (!st)\n\t\tst = ct_check(h, h->api.DeviceGetCount(&count), \"cuDeviceGetCount\");\n"
	"\tif (!st && (device < 0 || device >= count))\n"
	"\t\treturn ct_fail(h, CACHET_CU_NO_DEVICE, \"kernel '@N@': no CUDA device %d (the driver sees %d)\", device,\n"
	"\t\t               count);\n"
	"\tint major = 0, minor = 0;\n"
	"\tchar name[256] = \"\";\n"
	"\tif (!st)\n\t\tst = ct_check(h, h->api.DeviceGet(&h->dev, device), \"cuDeviceGet\");\n"
	"\tif (!st)\n\t\tst = ct_check(h, h->api.DeviceGetAttribute(&major, CT_ATTR_CC_MAJOR, h->dev), \"cuDeviceGetAttribute\");\n"
	"\tif (!st)\n\t\tst = ct_check(h, h->api.DeviceGetAttribute(&minor, CT_ATTR_CC_MINOR, h->dev), \"cuDeviceGetAttribute\");\n"
	"\tfor (int d = 0; d < 3 && !st; d++)\n"
	"\t\tst = ct_check(h, h->api.DeviceGetAttribute(&h->max_grid[d], CT_ATTR_MAX_GRID_X + d, h->dev),\n"
	"\t\t              \"cuDeviceGetAttribute\");\n"
	"\tif (!st)\n\t\tst = ct_check(h, h->api.DeviceGetName(name, (int)sizeof name - 1, h->dev), \"cuDeviceGetName\");\n"
	"\tif (st)\n\t\treturn st;\n"
	"\tname[sizeof name - 1] = 0;\n"
	"\tsnprintf(h->device, sizeof h->device, \"%s (compute capability %d.%d)\", name, major, minor);\n"
	"\tst = ct_check(h, h->api.DevicePrimaryCtxRetain(&h->cx, h->dev), \"cuDevicePrimaryCtxRetain\");\n"
	"\th->has_ctx = !st;\n"
	"\t*cc = major * 10 + minor;\n"
	"\treturn st;\n}\n\n"
	"/* Load the cubin on the device it is for (falling back to the PTX if the\n"
	" * driver refuses it), the PTX on any other; the context is current. */\n"
	"static int ct_load(cachet_@N@_cu *h, int cc)\n{\n"
	"\tchar cubin_why[512] = \"\";\n"
	"\tif (cc == cachet_@N@_cu_cubin_arch && cachet_@N@_cu_cubin_size > 0) {\n"
	"\t\tct_CUresult r = h->api.ModuleLoadDataEx(&h->mod, cachet_@N@_cu_cubin, 0, NULL, NULL);\n"
	"\t\tif (r == 0)\n\t\t\th->from_cubin = 1;\n"
	"\t\telse {\n\t\t\tct_check(h, r, \"loading the cubin\");\n"
	"\t\t\tsnprintf(cubin_why, sizeof cubin_why, \" (the cubin was refused: %.400s)\", h->msg);\n\t\t}\n\t}\n"
	"\tif (!h->mod) {\n"
	"\t\tif (cc < cachet_@N@_cu_ptx_arch || (ct_ptx_exact && cc != cachet_@N@_cu_ptx_arch))\n"
	"\t\t\treturn ct_fail(h, CACHET_CU_NO_CODE,\n"
	"\t\t\t               \"kernel '@N@': its PTX needs compute capability %d.%d%s; the device is %s\",\n"
	"\t\t\t               cachet_@N@_cu_ptx_arch / 10, cachet_@N@_cu_ptx_arch % 10,\n"
	"\t\t\t               ct_ptx_exact ? \" exactly (compute_90a: the kernel fits no generic architecture)\" : \" or newer\",\n"
	"\t\t\t               h->device);\n"
	"\t\tchar jit_log[4096] = \"\";\n"
	"\t\tint opts[] = {CT_JIT_ERROR_LOG_BUFFER, CT_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};\n"
	"\t\tvoid *vals[] = {jit_log, (void *)(uintptr_t)sizeof jit_log};\n"
	"\t\tct_CUresult r = h->api.ModuleLoadDataEx(&h->mod, cachet_@N@_cu_ptx, 2, opts, vals);\n"
	"\t\tif (r != 0) {\n"
	"\t\t\tct_check(h, r, \"compiling the PTX for the device (cuModuleLoadDataEx)\");\n"
	"\t\t\tchar why[sizeof h->msg];\n\t\t\tsnprintf(why, sizeof why, \"%s\", h->msg);\n"
	"\t\t\tjit_log[sizeof jit_log - 1] = 0;\n"
	"\t\t\treturn ct_fail(h, CACHET_CU_NO_CODE, \"%s%s%s%s (a PTX newer than the driver needs a newer driver)\",\n"
	"\t\t\t               why, cubin_why, jit_log[0] ? \"; log: \" : \"\", jit_log);\n\t\t}\n\t}\n"
	"\tint st = ct_check(h, h->api.ModuleGetFunction(&h->fn, h->mod, ct_kernel_fn), \"cuModuleGetFunction\");\n"
	"\tif (!st)\n"
	"\t\tst = ct_check(h, h->api.FuncGetAttribute(&h->max_threads, CT_FUNC_MAX_THREADS, h->fn), \"cuFuncGetAttribute\");\n"
	"\treturn st;\n}\n\n"
	"int cachet_@N@_cu_new(cachet_@N@_cu **out, int device, char *err, size_t cap)\n{\n"
	"\tif (err && cap)\n\t\terr[0] = 0;\n"
	"\tif (!out) {\n\t\tif (err && cap)\n\t\t\tsnprintf(err, cap, \"kernel '@N@': no place for the handle (h is NULL)\");\n"
	"\t\treturn CACHET_CU_USAGE;\n\t}\n"
	"\t*out = NULL;\n"
	"\tcachet_@N@_cu *h = calloc(1, sizeof *h);\n"
	"\tif (!h) {\n\t\tif (err && cap)\n\t\t\tsnprintf(err, cap, \"kernel '@N@': out of memory\");\n"
	"\t\treturn CACHET_CU_NOMEM;\n\t}\n"
	"\tint st = ct_open_driver(h), cc = 0;\n"
	"\tif (!st)\n\t\tst = ct_open_device(h, device, &cc);\n"
	"\tint pushed = 0;\n"
	"\tif (!st) {\n\t\tst = ct_check(h, h->api.CtxPushCurrent(h->cx), \"cuCtxPushCurrent\");\n\t\tpushed = !st;\n\t}\n"
	"\tif (!st)\n\t\tst = ct_load(h, cc);\n"
	"\tif (pushed) {\n\t\tct_CUcontext prev;\n\t\th->api.CtxPopCurrent(&prev);\n\t}\n"
	"\tif (st) {\n\t\tif (err && cap)\n\t\t\tsnprintf(err, cap, \"%s\", h->msg);\n"
	"\t\tcachet_@N@_cu_free(h);\n\t\treturn st;\n\t}\n"
	"\th->msg[0] = 0;\n\t*out = h;\n\treturn CACHET_CU_OK;\n}\n\n"
	"int cachet_@N@_cu_from_cubin(const cachet_@N@_cu *h) { return h ? h->from_cubin : 0; }\n"
	"const char *cachet_@N@_cu_device(const cachet_@N@_cu *h) { return h ? h->device : \"\"; }\n"
	"const char *cachet_@N@_cu_error(const cachet_@N@_cu *h) { return h ? h->msg : \"no handle\"; }\n\n"
	"void cachet_@N@_cu_free(cachet_@N@_cu *h)\n{\n"
	"\tif (!h)\n\t\treturn;\n"
	"\tif (h->mod && h->api.CtxPushCurrent(h->cx) == 0) {\n"
	"\t\th->api.ModuleUnload(h->mod);\n\t\tct_CUcontext prev;\n\t\th->api.CtxPopCurrent(&prev);\n\t}\n"
	"\tif (h->has_ctx)\n\t\th->api.DevicePrimaryCtxRelease(h->dev);\n"
	"\tif (h->lib)\n\t\tdlclose(h->lib);\n"
	"\tfree(h);\n}\n\n"
	"/* The launch's grid and blocks from its threads g and blocks l: given\n"
	" * (fixed), or picked as `cachet run` does: on x the largest divisor of the\n"
	" * threads up to 256 (and the kernel's limit), so that the grid covers\n"
	" * exactly the threads the kernel was generated for, 1 on y and z; then\n"
	" * checked against the device's limits. */\n"
	"static int ct_shape(cachet_@N@_cu *h, const size_t g[3], size_t l[3], int fixed, unsigned grid[3],\n"
	"                    unsigned block[3])\n{\n"
	"\tif (!fixed) {\n"
	"\t\tsize_t b = h->max_threads < 256 ? (size_t)h->max_threads : 256;\n"
	"\t\tb = g[0] < b ? g[0] : b;\n"
	"\t\twhile (b > 1 && g[0] % b)\n\t\t\tb--;\n"
	"\t\tl[0] = b ? b : 1;\n\t\tl[1] = l[2] = 1;\n\t}\n"
	"\tsize_t threads = l[0] * l[1] * l[2];\n"
	"\tif (threads > (size_t)h->max_threads)\n"
	"\t\treturn ct_fail(h, CACHET_CU_USAGE,\n"
	"\t\t               \"kernel '@N@': blocks of %zu x %zu x %zu threads; %s allows %d for this kernel\", l[0], l[1],\n"
	"\t\t               l[2], h->device, h->max_threads);\n"
	"\tfor (int d = 0; d < 3; d++) {\n"
	"\t\tsize_t n = l[d] ? g[d] / l[d] : 0;\n"
	"\t\tif (n < 1 || n > (size_t)h->max_grid[d])\n"
	"\t\t\treturn ct_fail(h, CACHET_CU_USAGE, \"kernel '@N@': a grid of %zu blocks in dimension %d (the device allows 1 to %d)\",\n"
	"\t\t\t               n, d, h->max_grid[d]);\n"
	"\t\tgrid[d] = (unsigned)n;\n\t\tblock[d] = (unsigned)l[d];\n\t}\n"
	"\treturn CACHET_CU_OK;\n}\n\n"
	"static int ct_push(cachet_@N@_cu *h)\n{\n"
	"\th->msg[0] = 0;\n"
	"\treturn ct_check(h, h->api.CtxPushCurrent(h->cx), \"cuCtxPushCurrent\");\n}\n\n"
	"static void ct_pop(cachet_@N@_cu *h)\n{\n\tct_CUcontext prev;\n\th->api.CtxPopCurrent(&prev);\n}\n\n"
	"/* A device array of n bytes (at least 1: the driver refuses 0) holding src. */\n"
	"static int ct_alloc_in(cachet_@N@_cu *h, ct_CUdeviceptr *d, const void *src, size_t n, const char *name)\n{\n"
	"\tchar what[300];\n"
	"\tsnprintf(what, sizeof what, \"cuMemAlloc of %zu bytes for array %s\", n, name);\n"
	"\tint st = ct_check(h, h->api.MemAlloc(d, n ? n : 1), what);\n"
	"\tif (!st && n) {\n"
	"\t\tsnprintf(what, sizeof what, \"cuMemcpyHtoD of array %s\", name);\n"
	"\t\tst = ct_check(h, h->api.MemcpyHtoD(*d, src, n), what);\n\t}\n"
	"\treturn st;\n}\n\n"
	"/* The bytes of a dense array of elt-byte elements with extents ext[0..rank). */\n"
	"static size_t ct_bytes(int rank, const int64_t *ext, size_t elt)\n{\n"
	"\tsize_t n = elt;\n"
	"\tfor (int d = 0; d < rank; d++)\n\t\tn *= ext[d] > 0 ? (size_t)ext[d] : 0;\n"
	"\treturn n;\n}\n\n";

/* The embedded code: source, PTX, cubin. */
static void c_code(ct_buf *b, const ct_kernel *k, const char *cu, size_t len, const cuda_code *c, const ocl_launch *L)
{
	const char *n = k->name;
	ct_buf_printf(b, "const char cachet_%s_cu_source[] =\n", n);
	pkg_c_string(b, cu, len);
	ct_buf_printf(b, ";\n\n/* PTX for compute_%d%s: the driver compiles it for the device */\n"
	                 "const int cachet_%s_cu_ptx_arch = %d;\n"
	                 "static const int ct_ptx_exact = %d; /* 1: for that capability only (compute_XXa) */\n"
	                 "const char cachet_%s_cu_ptx[] =\n",
	              c->ptx_arch, c->ptx_exact ? "a (that capability only)" : " and newer", n, c->ptx_arch,
	              c->ptx_exact ? 1 : 0, n);
	pkg_c_string(b, c->ptx, c->ptx_n);
	ct_buf_printf(b, ";\n\n/* the cubin for %s (compute capability 9.0), an ELF image */\n"
	                 "const int cachet_%s_cu_cubin_arch = 90;\nconst size_t cachet_%s_cu_cubin_size = %zu;\n"
	                 "_Alignas(16) const unsigned char cachet_%s_cu_cubin[] = {",
	              CUDAPKG_CUBIN_ARCH, n, n, c->cubin_n, n);
	for (size_t i = 0; i < c->cubin_n; i++)
		ct_buf_printf(b, "%s%u,", i % 24 ? "" : "\n\t", c->cubin[i]);
	if (!c->cubin_n)
		ct_buf_puts(b, "0");
	ct_buf_printf(b, "\n};\n\n/* the __global__ function */\nstatic const char ct_kernel_fn[] = ");
	pkg_c_string(b, L->fn, strlen(L->fn));
	ct_buf_puts(b, ";\n\n");
}

/* The kernel's launch on device pointers: ct_launch (context current),
 * then the public _launch around it. */
static void c_launch(ct_buf *b, const ct_kernel *k, const ocl_launch *L)
{
	const char *n = k->name;
	ct_buf_printf(b, "static int ct_launch(cachet_%s_cu *h", n);
	c_args(b, k, false);
	ct_buf_puts(b, ", ct_CUstream ct_stream)\n{\n");
	pkg_ndrange(b, k, L);
	ct_buf_printf(b, "\tunsigned ct_grid[3], ct_block[3];\n\tint st = ct_shape(h, ct_g, ct_l, %d, ct_grid, ct_block);\n"
	                 "\tif (st)\n\t\treturn st;\n",
	              L->explicit_local ? 1 : 0);
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(b, "\tlong long ct_p_%s = (long long)%s;\n", k->params[p].name, k->params[p].name);
	ct_buf_puts(b, "\tvoid *ct_argv[] = {");
	bool first = true;
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP) {
			ct_buf_printf(b, "%s&%s", first ? "" : ", ", k->arrays[a].name);
			first = false;
		}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime) {
			ct_buf_printf(b, "%s&ct_p_%s", first ? "" : ", ", k->params[p].name);
			first = false;
		}
	if (first)
		ct_buf_puts(b, "NULL");
	ct_buf_puts(b, "};\n"
	               "\treturn ct_check(h, h->api.LaunchKernel(h->fn, ct_grid[0], ct_grid[1], ct_grid[2], ct_block[0],\n"
	               "\t                                       ct_block[1], ct_block[2], 0, ct_stream, ct_argv, NULL),\n"
	               "\t                \"cuLaunchKernel\");\n}\n\n");
	ct_buf_printf(b, "int cachet_%s_cu_launch(cachet_%s_cu *h", n, n);
	c_args(b, k, false);
	ct_buf_puts(b, ", void *stream)\n{\n\tif (!h)\n\t\treturn CACHET_CU_USAGE;\n\tint st = ct_push(h);\n"
	               "\tif (st)\n\t\treturn st;\n\tst = ct_launch(h");
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP)
			ct_buf_printf(b, ", %s", k->arrays[a].name);
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(b, ", %s", k->params[p].name);
	ct_buf_puts(b, ", (ct_CUstream)stream);\n\tct_pop(h);\n\treturn st;\n}\n\n");
}

/* The run on host arrays: allocate and copy in, launch, synchronize, copy
 * the outputs back, free. */
static void c_run(ct_buf *b, const ct_kernel *k)
{
	const char *n = k->name;
	ct_buf_printf(b, "int cachet_%s_cu_run(cachet_%s_cu *h", n, n);
	c_args(b, k, true);
	ct_buf_puts(b, ")\n{\n\tif (!h)\n\t\treturn CACHET_CU_USAGE;\n\tint st = ct_push(h);\n\tif (st)\n\t\treturn st;\n");
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		ct_buf_printf(b, "\tconst int64_t ct_e_%s[] = {", ar->name);
		for (int d = 0; d < ar->rank; d++) {
			ct_buf_puts(b, d ? ", " : "");
			pkg_aff(b, k, ar->ext[d]);
		}
		if (!ar->rank)
			ct_buf_puts(b, "1");
		ct_buf_printf(b, "};\n\tsize_t ct_n_%s = ct_bytes(%d, ct_e_%s, sizeof(%s));\n\tct_CUdeviceptr ct_d_%s = 0;\n",
		              ar->name, ar->rank, ar->name, ir_dtype_c(ar->type), ar->name);
	}
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role != CT_TEMP)
			ct_buf_printf(b, "\tif (!st)\n\t\tst = ct_alloc_in(h, &ct_d_%s, %s, ct_n_%s, \"%s\");\n", ar->name,
			              ar->name, ar->name, ar->name);
	}
	ct_buf_puts(b, "\tif (!st)\n\t\tst = ct_launch(h");
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP)
			ct_buf_printf(b, ", ct_d_%s", k->arrays[a].name);
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(b, ", %s", k->params[p].name);
	ct_buf_puts(b, ", NULL);\n\tif (!st)\n\t\tst = ct_check(h, h->api.StreamSynchronize(NULL), \"the kernel (cuStreamSynchronize)\");\n");
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_OUTPUT || ar->role == CT_INOUT)
			ct_buf_printf(b, "\tif (!st && ct_n_%s)\n\t\tst = ct_check(h, h->api.MemcpyDtoH(%s, ct_d_%s, ct_n_%s), "
			                 "\"cuMemcpyDtoH of array %s\");\n",
			              ar->name, ar->name, ar->name, ar->name, ar->name);
	}
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP)
			ct_buf_printf(b, "\tif (ct_d_%s)\n\t\th->api.MemFree(ct_d_%s);\n", k->arrays[a].name, k->arrays[a].name);
	ct_buf_puts(b, "\tct_pop(h);\n\treturn st;\n}\n");
}

static char *make_source(const ct_kernel *k, const char *cu, size_t len, const cuda_code *c, const ocl_launch *L)
{
	const char *n = k->name;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b,
	              "/* %s.c: host wrapper of the CUDA kernel '%s', generated by cachet %s. It opens the NVIDIA\n"
	              " * driver (libcuda.so.1) when a handle is made: no CUDA header or library is needed to build it. */\n"
	              "#include \"%s.h\"\n\n#include <dlfcn.h>\n#include <stdarg.h>\n#include <stddef.h>\n#include <stdio.h>\n"
	              "#include <stdlib.h>\n#include <string.h>\n\n",
	              n, n, CACHET_VERSION, n);
	c_code(&b, k, cu, len, c, L);
	put_tpl(&b, wrapper_runtime, n);
	c_launch(&b, k, L);
	c_run(&b, k);
	return ct_buf_take(&b);
}

/* ------------------------------------------------------------ the package */

ct_status cudapkg_write(ct_kernel *k, const char *dir, const char *cu, size_t len, const ocl_launch *L)
{
	ct_ctx *ctx = k->ctx;
	cuda_code code;
	memset(&code, 0, sizeof code);
	ct_status st = cuda_compile(k, cu, len, &code);
	char *hdr = st ? NULL : make_header(k, &code, L);
	char *src = st ? NULL : make_source(k, cu, len, &code, L);
	if (!st && (!hdr || !src))
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	char p_cu[4096], p_h[4096], p_c[4096], obj[4096], lib_a[4096], lib_so[4096];
	bool fits = jit_fmt(p_cu, sizeof p_cu, "%s/%s.cu", dir, k->name) &&
	            jit_fmt(p_h, sizeof p_h, "%s/%s.h", dir, k->name) && jit_fmt(p_c, sizeof p_c, "%s/%s.c", dir, k->name) &&
	            jit_fmt(obj, sizeof obj, "%s/%s.o", dir, k->name) &&
	            jit_fmt(lib_a, sizeof lib_a, "%s/lib%s.a", dir, k->name) &&
	            jit_fmt(lib_so, sizeof lib_so, "%s/lib%s.so", dir, k->name);
	if (!st && !fits)
		st = ct_error(ctx, CT_ERR_IO, "the folder's path %s is too long", dir);
	if (!st)
		st = aot_write_atomic(ctx, p_cu, cu, len);
	if (!st)
		st = aot_write_atomic(ctx, p_h, hdr, strlen(hdr));
	if (!st)
		st = aot_write_atomic(ctx, p_c, src, strlen(src));
	if (!st)
		st = aot_compile_package(k, p_c, obj, lib_a, lib_so, "-ldl", false, NULL);
	cuda_code_free(&code);
	free(hdr);
	free(src);
	return st;
}

ct_status gen_cuda_package(ct_kernel *k, const char *dir)
{
	ocl_launch L;
	memset(&L, 0, sizeof L);
	size_t len = 0;
	char *cu = cuda_kernel_source(k, &len, &L);
	if (!cu)
		return ct_ctx_last_status(k->ctx);
	ct_status st = cudapkg_write(k, dir, cu, len, &L);
	free(cu);
	return st;
}
