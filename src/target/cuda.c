/* cuda.c: CUDA on this machine: the driver API and NVRTC loaded with dlopen (for the engine's runner too), the device opened, and NVRTC's compile. */
#include "target/cuda.h"
#include "target/target.h"

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the driver */

/* The symbol name (or, when missing, alt: a driver older than the _v2
 * entry point) into slot; false when neither exists. */
static bool sym2(void *lib, void *slot, const char *name, const char *alt)
{
	void *p = dlsym(lib, name);
	if (!p && alt)
		p = dlsym(lib, alt);
	if (!p)
		return false;
	memcpy(slot, &p, sizeof p); /* POSIX: a dlsym pointer converts to a function pointer */
	return true;
}

ct_status target_cuda_load(ct_ctx *ctx, cuda_api *a)
{
	memset(a, 0, sizeof *a);
	const char *file = getenv("CACHET_LIBCUDA");
	if (!file || !*file)
		file = "libcuda.so.1";
	a->lib = dlopen(file, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!a->lib)
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
		                "CUDA: no NVIDIA driver: %s not found (plan(target=cuda) needs an NVIDIA GPU)", file);
	static const struct {
		const char *name, *alt;
	} names[] = {
		{"cuInit", NULL}, {"cuDriverGetVersion", NULL}, {"cuDeviceGetCount", NULL}, {"cuDeviceGet", NULL},
		{"cuDeviceGetName", NULL}, {"cuDeviceGetAttribute", NULL}, {"cuDeviceTotalMem_v2", NULL},
		{"cuDevicePrimaryCtxRetain", NULL}, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
		{"cuCtxSetCurrent", NULL}, {"cuCtxSynchronize", NULL}, {"cuModuleLoadData", NULL},
		{"cuModuleLoadDataEx", NULL}, {"cuModuleUnload", NULL}, {"cuModuleGetFunction", NULL},
		{"cuFuncGetAttribute", NULL}, {"cuFuncSetAttribute", NULL}, {"cuMemAlloc_v2", NULL},
		{"cuMemFree_v2", NULL}, {"cuMemcpyHtoD_v2", NULL}, {"cuMemcpyDtoH_v2", NULL}, {"cuMemsetD8_v2", NULL},
		{"cuLaunchKernel", NULL}, {"cuEventCreate", NULL}, {"cuEventRecord", NULL},
		{"cuEventSynchronize", NULL}, {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
		{"cuEventDestroy_v2", "cuEventDestroy"}, {"cuGetErrorName", NULL}, {"cuGetErrorString", NULL}};
	void *slots[] = {&a->Init, &a->DriverGetVersion, &a->DeviceGetCount, &a->DeviceGet, &a->DeviceGetName,
	                 &a->DeviceGetAttribute, &a->DeviceTotalMem, &a->PrimaryCtxRetain, &a->PrimaryCtxRelease,
	                 &a->CtxSetCurrent, &a->CtxSynchronize, &a->ModuleLoadData, &a->ModuleLoadDataEx,
	                 &a->ModuleUnload, &a->ModuleGetFunction, &a->FuncGetAttribute, &a->FuncSetAttribute,
	                 &a->MemAlloc, &a->MemFree, &a->MemcpyHtoD, &a->MemcpyDtoH, &a->MemsetD8, &a->LaunchKernel,
	                 &a->EventCreate, &a->EventRecord, &a->EventSynchronize, &a->EventElapsedTime,
	                 &a->EventDestroy, &a->GetErrorName, &a->GetErrorString};
	_Static_assert(sizeof names / sizeof names[0] == sizeof slots / sizeof slots[0], "one slot per name");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!sym2(a->lib, slots[i], names[i].name, names[i].alt)) {
			dlclose(a->lib);
			a->lib = NULL;
			return ct_error(ctx, CT_ERR_UNSUPPORTED, "CUDA: the NVIDIA driver (%s) lacks %s: it is too old",
			                file, names[i].name);
		}
	return CT_OK;
}

const char *target_cuda_error(const cuda_api *a, cu_result e, char *buf, size_t cap)
{
	const char *name = NULL, *text = NULL;
	if (a->GetErrorName && a->GetErrorName(e, &name) != CU_SUCCESS)
		name = NULL;
	if (a->GetErrorString && a->GetErrorString(e, &text) != CU_SUCCESS)
		text = NULL;
	snprintf(buf, cap, "%s (%d)%s%s", name ? name : "CUDA error", (int)e, text ? ": " : "", text ? text : "");
	return buf;
}

void target_cuda_arch(int major, int minor, char *buf, size_t cap)
{
	/* the "a" targets (arch-specific features: wgmma, setmaxnreg) exist
	 * for 9.0 and the 10.x/12.x families; a cubin built for them runs on
	 * that exact capability only, which is the device's */
	bool a = (major == 9 && minor == 0) || major == 10 || major == 12;
	snprintf(buf, cap, "sm_%d%d%s", major, minor, a ? "a" : "");
}

/* Read attribute what of d's device (0 when the driver refuses). */
static int attr(cuda_dev *d, int what)
{
	int v = 0;
	if (d->cu.DeviceGetAttribute(&v, what, d->dev) != CU_SUCCESS)
		v = 0;
	return v;
}

static void read_attributes(cuda_dev *d)
{
	d->cc_major = attr(d, CU_ATTR_CC_MAJOR);
	d->cc_minor = attr(d, CU_ATTR_CC_MINOR);
	target_cuda_arch(d->cc_major, d->cc_minor, d->arch, sizeof d->arch);
	d->sms = attr(d, CU_ATTR_SM_COUNT);
	d->warp = attr(d, CU_ATTR_WARP_SIZE);
	d->max_threads_block = attr(d, CU_ATTR_MAX_THREADS_PER_BLOCK);
	d->max_threads_sm = attr(d, CU_ATTR_MAX_THREADS_PER_SM);
	for (int i = 0; i < 3; i++) {
		d->max_block[i] = attr(d, CU_ATTR_MAX_BLOCK_DIM_X + i);
		d->max_grid[i] = attr(d, CU_ATTR_MAX_GRID_DIM_X + i);
	}
	d->shared_block = attr(d, CU_ATTR_MAX_SHARED_PER_BLOCK);
	d->shared_block_optin = attr(d, CU_ATTR_MAX_SHARED_PER_BLOCK_OPTIN);
	d->shared_sm = attr(d, CU_ATTR_MAX_SHARED_PER_SM);
	d->regs_block = attr(d, CU_ATTR_MAX_REGS_PER_BLOCK);
	d->regs_sm = attr(d, CU_ATTR_MAX_REGS_PER_SM);
	d->l2 = attr(d, CU_ATTR_L2_SIZE);
	d->clock_khz = attr(d, CU_ATTR_CLOCK_RATE);
	d->mem_clock_khz = attr(d, CU_ATTR_MEMORY_CLOCK_RATE);
	d->bus_width = attr(d, CU_ATTR_BUS_WIDTH);
	if (d->cu.DeviceTotalMem(&d->total_mem, d->dev) != CU_SUCCESS)
		d->total_mem = 0;
	d->name[0] = 0;
	if (d->cu.DeviceGetName(d->name, (int)sizeof d->name - 1, d->dev) != CU_SUCCESS)
		snprintf(d->name, sizeof d->name, "CUDA device %d", d->index);
	d->name[sizeof d->name - 1] = 0;
	snprintf(d->desc, sizeof d->desc, "%s | %s | driver %d", d->name, d->arch, d->driver_version);
}

/* The device index CACHET_CUDA_DEVICE asks for (0 when unset); -1 when
 * it is not a number. */
static int wanted_index(void)
{
	const char *w = getenv("CACHET_CUDA_DEVICE");
	if (!w || !*w)
		return 0;
	char *end = NULL;
	errno = 0;
	long v = strtol(w, &end, 10);
	if (errno || *end || v < 0 || v > 1024)
		return -1;
	return (int)v;
}

void target_cuda_close(cuda_dev *d)
{
	if (d->cx)
		d->cu.PrimaryCtxRelease(d->dev);
	if (d->cu.lib)
		dlclose(d->cu.lib);
	memset(d, 0, sizeof *d);
}

/* Close d and return st (the error already on the ctx). */
static ct_status open_fail(cuda_dev *d, ct_status st)
{
	target_cuda_close(d);
	return st;
}

/* Load the driver and start it: *n devices. */
static ct_status start(ct_ctx *ctx, cuda_dev *d, int *n)
{
	memset(d, 0, sizeof *d);
	d->ctx = ctx;
	*n = 0;
	ct_status st = target_cuda_load(ctx, &d->cu);
	if (st)
		return st;
	char eb[256];
	cu_result e = d->cu.Init(0);
	if (e == CU_ERROR_NO_DEVICE)
		return open_fail(d, ct_error(ctx, CT_ERR_UNSUPPORTED, "CUDA: the driver found no device"));
	if (e != CU_SUCCESS)
		return open_fail(d, ct_error(ctx, CT_ERR_UNSUPPORTED, "CUDA: the driver failed to start: cuInit: %s",
		                             target_cuda_error(&d->cu, e, eb, sizeof eb)));
	if (d->cu.DriverGetVersion(&d->driver_version) != CU_SUCCESS)
		d->driver_version = 0;
	if (d->cu.DeviceGetCount(n) != CU_SUCCESS || *n <= 0)
		return open_fail(d, ct_error(ctx, CT_ERR_UNSUPPORTED, "CUDA: the driver found no device"));
	return CT_OK;
}

/* Open device index of the started driver d. */
static ct_status open_index(cuda_dev *d, int index)
{
	ct_ctx *ctx = d->ctx;
	char eb[256];
	cu_result e;
	d->index = index;
	if ((e = d->cu.DeviceGet(&d->dev, index)) != CU_SUCCESS)
		return open_fail(d, ct_error(ctx, CT_ERR_UNSUPPORTED, "CUDA: cuDeviceGet(%d): %s", index,
		                             target_cuda_error(&d->cu, e, eb, sizeof eb)));
	read_attributes(d);
	if ((e = d->cu.PrimaryCtxRetain(&d->cx, d->dev)) != CU_SUCCESS) {
		d->cx = NULL;
		return open_fail(d, ct_error(ctx, CT_ERR_RUNTIME, "CUDA: cuDevicePrimaryCtxRetain on %s: %s", d->desc,
		                             target_cuda_error(&d->cu, e, eb, sizeof eb)));
	}
	if ((e = d->cu.CtxSetCurrent(d->cx)) != CU_SUCCESS)
		return open_fail(d, ct_error(ctx, CT_ERR_RUNTIME, "CUDA: cuCtxSetCurrent on %s: %s", d->desc,
		                             target_cuda_error(&d->cu, e, eb, sizeof eb)));
	return CT_OK;
}

ct_status target_cuda_open(ct_ctx *ctx, cuda_dev *d)
{
	int n = 0;
	ct_status st = start(ctx, d, &n);
	if (st)
		return st;
	int want = wanted_index();
	if (want < 0 || want >= n)
		return open_fail(d, ct_error(ctx, CT_ERR_USAGE,
		                             "CACHET_CUDA_DEVICE=%s: the driver found %d device%s (indexes 0..%d)",
		                             getenv("CACHET_CUDA_DEVICE"), n, n == 1 ? "" : "s", n - 1));
	return open_index(d, want);
}

ct_status target_cuda_open_at(ct_ctx *ctx, cuda_dev *d, int index, int *count)
{
	ct_status st = start(ctx, d, count);
	if (st)
		return st;
	if (index < 0 || index >= *count)
		return open_fail(d, ct_error(ctx, CT_ERR_USAGE, "CUDA: no device %d", index));
	return open_index(d, index);
}

/* ------------------------------------------------------------ NVRTC */

/* Add p to the list when there is room. */
static void add_path(char (*paths)[512], int cap, int *n, const char *p)
{
	if (*n < cap && strlen(p) < 512)
		snprintf(paths[(*n)++], 512, "%s", p);
}

/* The three library names under folder dir. */
static void add_folder(char (*paths)[512], int cap, int *n, const char *dir)
{
	static const char *const libs[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
	char p[512];
	for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
		if (snprintf(p, sizeof p, "%s/%s", dir, libs[i]) < (int)sizeof p)
			add_path(paths, cap, n, p);
}

int target_nvrtc_paths(char (*paths)[512], int cap)
{
	int n = 0;
	const char *env = getenv("CACHET_NVRTC");
	if (env) {
		/* only what the user names: "none" (or nothing) hides NVRTC */
		char buf[4096];
		snprintf(buf, sizeof buf, "%s", env);
		char *save = NULL;
		for (char *t = strtok_r(buf, ":", &save); t; t = strtok_r(NULL, ":", &save))
			if (strcmp(t, "none") != 0)
				add_path(paths, cap, &n, t);
		return n;
	}
	add_path(paths, cap, &n, "libnvrtc.so.13"); /* the loader's search: LD_LIBRARY_PATH, ld.so.cache */
	add_path(paths, cap, &n, "libnvrtc.so.12");
	add_path(paths, cap, &n, "libnvrtc.so");
	char dir[512];
	static const char *const homes[] = {"CUDA_HOME", "CUDA_PATH"};
	for (size_t i = 0; i < 2; i++) {
		const char *h = getenv(homes[i]);
		if (h && *h && snprintf(dir, sizeof dir, "%s/lib64", h) < (int)sizeof dir)
			add_folder(paths, cap, &n, dir);
	}
	add_folder(paths, cap, &n, "/usr/local/cuda/lib64");
	/* the pip wheels (PyTorch's, CuPy's): nvidia/cu13/lib for CUDA 13,
	 * nvidia/cuda_nvrtc/lib for CUDA 12 */
	static const char *const pips[] = {
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib",
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib",
		"/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib",
		"/usr/local/lib/python3*/dist-packages/nvidia/cuda_nvrtc/lib",
		"/usr/lib/python3/dist-packages/nvidia/cu13/lib",
		"/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib"};
	for (size_t i = 0; i < sizeof pips / sizeof pips[0]; i++) {
		glob_t g;
		if (glob(pips[i], GLOB_ONLYDIR, NULL, &g) == 0)
			for (size_t j = 0; j < g.gl_pathc; j++)
				add_folder(paths, cap, &n, g.gl_pathv[j]);
		globfree(&g);
	}
	return n;
}

void target_nvrtc_close(nvrtc_api *a)
{
	if (a->lib)
		dlclose(a->lib);
	memset(a, 0, sizeof *a);
}

/* Fill a's entry points from a->lib; false naming the missing one. */
static bool nvrtc_syms(nvrtc_api *a, const char **missing)
{
	static const char *const names[] = {"nvrtcVersion", "nvrtcCreateProgram", "nvrtcCompileProgram",
	                                    "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", "nvrtcGetCUBINSize",
	                                    "nvrtcGetCUBIN", "nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcDestroyProgram",
	                                    "nvrtcGetErrorString"};
	void *slots[] = {&a->Version, &a->CreateProgram, &a->CompileProgram, &a->GetProgramLogSize,
	                 &a->GetProgramLog, &a->GetCUBINSize, &a->GetCUBIN, &a->GetPTXSize, &a->GetPTX,
	                 &a->DestroyProgram, &a->GetErrorString};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!sym2(a->lib, slots[i], names[i], NULL)) {
			*missing = names[i];
			return false;
		}
	return true;
}

ct_status target_nvrtc_load(ct_ctx *ctx, nvrtc_api *a)
{
	memset(a, 0, sizeof *a);
	char(*paths)[512] = calloc(NVRTC_MAX_PATHS, 512);
	if (!paths)
		return ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	int n = target_nvrtc_paths(paths, NVRTC_MAX_PATHS);
	for (int i = 0; i < n && !a->lib; i++) {
		/* NVRTC finds its builtins library next to itself; RTLD_NODELETE
		 * as for the driver: it keeps process-wide state */
		a->lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (!a->lib)
			continue;
		const char *missing = NULL;
		if (!nvrtc_syms(a, &missing) || a->Version(&a->major, &a->minor) != 0) {
			dlclose(a->lib);
			a->lib = NULL;
			continue;
		}
		snprintf(a->path, sizeof a->path, "%s", paths[i]);
	}
	free(paths);
	if (a->lib)
		return CT_OK;
	const char *env = getenv("CACHET_NVRTC");
	return ct_error(ctx, CT_ERR_UNSUPPORTED, "CUDA: NVRTC not found (%s%s%s)",
	                env ? "CACHET_NVRTC=" : "looked for libnvrtc.so.13, .so.12, .so by the loader's search, under "
	                                        "$CUDA_HOME/lib64, /usr/local/cuda/lib64 and the pip packages' "
	                                        "nvidia/cu13/lib and nvidia/cuda_nvrtc/lib; CACHET_NVRTC names it",
	                env ? env : "", env && (!*env || strcmp(env, "none") == 0) ? ": hidden" : "");
}

/* NVRTC's log of p (malloc'd; "" when none). */
static char *nvrtc_log(const nvrtc_api *a, nvrtc_prog p)
{
	size_t n = 0;
	if (a->GetProgramLogSize(p, &n) != 0)
		n = 0;
	char *log = malloc(n + 1);
	if (!log)
		return NULL;
	log[0] = 0;
	if (n && a->GetProgramLog(p, log) != 0)
		log[0] = 0;
	log[n] = 0;
	return log;
}

ct_status target_nvrtc_compile(ct_ctx *ctx, const nvrtc_api *a, const char *src, const char *name,
                               const char *const *opts, int nopts, bool want_ptx, unsigned char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	nvrtc_prog p = NULL;
	int e = a->CreateProgram(&p, src, name, 0, NULL, NULL);
	if (e != 0)
		return ct_error(ctx, CT_ERR_COMPILE, "CUDA: nvrtcCreateProgram: %s", a->GetErrorString(e));
	e = a->CompileProgram(p, nopts, opts);
	if (e != 0) {
		char *log = nvrtc_log(a, p);
		a->DestroyProgram(&p);
		ct_status st = ct_error(ctx, CT_ERR_COMPILE, "CUDA: NVRTC %d.%d failed to compile %s (%s); log:\n%s",
		                        a->major, a->minor, name, a->GetErrorString(e), log && *log ? log : "(empty)");
		free(log);
		return st;
	}
	size_t sz = 0;
	e = want_ptx ? a->GetPTXSize(p, &sz) : a->GetCUBINSize(p, &sz);
	char *bin = e == 0 && sz ? malloc(sz) : NULL;
	if (bin)
		e = want_ptx ? a->GetPTX(p, bin) : a->GetCUBIN(p, bin);
	a->DestroyProgram(&p);
	if (!bin || e != 0) {
		free(bin);
		return ct_error(ctx, CT_ERR_COMPILE, "CUDA: NVRTC gave no %s for %s%s%s", want_ptx ? "PTX" : "cubin", name,
		                e ? ": " : "", e ? a->GetErrorString(e) : "");
	}
	*out = (unsigned char *)bin;
	*n = sz;
	return CT_OK;
}
