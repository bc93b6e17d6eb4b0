/* ocl.c: the OpenCL engine: libOpenCL loaded at first use, one device, programs built (or loaded from cached binaries), kernels run and verified. */
#include "target/opencl.h"

#include "gen/ocl.h"
#include "jit/jit.h"
#include "engine/engine.h"
#include "engine/targets.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * libOpenCL.so.1 (the ICD loader) is opened with dlopen when a kernel
 * first needs it, so that libcachet loads and runs everything else on a
 * machine without OpenCL; there the OpenCL entry points report
 * CT_ERR_UNSUPPORTED with a message saying what is missing. The device is
 * the first one of the first platform that has one, or the one that
 * CACHET_OPENCL_DEVICE names (a substring of "platform device"). Nothing
 * is global: the device (its context and queue) and the programs a ctx
 * has loaded stay open in the ctx (ctx->opencl, released by ct_ctx_free),
 * so the next run of the same program in the same ctx needs no load at all
 * ("memory"); programs persist across processes in the code cache's folder
 * as binaries ("disk"; see load_program).
 */


/* One device with its context and in-order queue. */
typedef struct ocl_dev {
	ct_ctx *ctx;
	ocl_api cl;
	cl_platform_id plat;
	cl_device_id dev;
	cl_context cx;
	cl_command_queue q;
	char desc[1024];       /* "platform | version | device | driver | version": names it in messages and cache keys */
	size_t max_wg;         /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
	size_t max_items[3];   /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
	cl_ulong local_mem;    /* CL_DEVICE_LOCAL_MEM_SIZE */
} ocl_dev;

/* The name of an OpenCL error code. */
static const char *cl_err_name(cl_int e)
{
	switch (e) {
	case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
	case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
	case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
	case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
	case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
	case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
	case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
	case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
	case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
	case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
	case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
	case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
	case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
	case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
	case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
	case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
	case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
	case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
	case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
	case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
	case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
	case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
	case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
	case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform is installed)";
	default: return "an OpenCL error";
	}
}

static ct_status cl_fail(ocl_dev *d, ct_status st, const char *what, cl_int e)
{
	return ct_error(d->ctx, st, "OpenCL: %s failed: %s (%d)", what, cl_err_name(e), (int)e);
}

/* ------------------------------------------------------------ loading */

static void dev_close(ocl_dev *d)
{
	if (d->q)
		d->cl.ReleaseCommandQueue(d->q);
	if (d->cx)
		d->cl.ReleaseContext(d->cx);
	if (d->cl.lib)
		dlclose(d->cl.lib);
	memset(d, 0, sizeof *d);
}

static void info_str(ocl_dev *d, cl_device_info what, char *buf, size_t cap)
{
	buf[0] = 0;
	if (d->cl.GetDeviceInfo(d->dev, what, cap - 1, buf, NULL) != CL_SUCCESS)
		buf[0] = 0;
	buf[cap - 1] = 0;
}

/* Whether "platform device" matches CACHET_OPENCL_DEVICE (unset: any). */
static bool wanted(const char *plat, const char *dev)
{
	const char *w = getenv("CACHET_OPENCL_DEVICE");
	if (!w || !*w)
		return true;
	return strstr(plat, w) || strstr(dev, w);
}

/* Pick the device and open its context and queue. */
static ct_status dev_open(ct_ctx *ctx, ocl_dev *d)
{
	memset(d, 0, sizeof *d);
	d->ctx = ctx;
	ct_status st = target_opencl_load(ctx, &d->cl);
	if (st)
		return st;
	cl_platform_id plats[16];
	cl_uint np = 0;
	cl_int e = d->cl.GetPlatformIDs(16, plats, &np);
	if (e != CL_SUCCESS || np == 0) {
		dev_close(d);
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
		                "OpenCL is not available: no OpenCL platform is installed (e.g. Debian's pocl-opencl-icd)");
	}
	char pname[256], dname[256];
	for (cl_uint p = 0; p < np && np <= 16 && !d->dev; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;
		if (d->cl.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		pname[0] = 0;
		d->cl.GetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
		pname[sizeof pname - 1] = 0;
		for (cl_uint i = 0; i < nd && i < 16 && !d->dev; i++) {
			d->dev = devs[i];
			info_str(d, CL_DEVICE_NAME, dname, sizeof dname);
			if (!wanted(pname, dname))
				d->dev = NULL;
			else
				d->plat = plats[p];
		}
	}
	if (!d->dev) {
		dev_close(d);
		return ct_error(ctx, CT_ERR_UNSUPPORTED, "OpenCL is not available: no OpenCL device%s%s",
		                getenv("CACHET_OPENCL_DEVICE") ? " matches CACHET_OPENCL_DEVICE=" : " was found",
		                getenv("CACHET_OPENCL_DEVICE") ? getenv("CACHET_OPENCL_DEVICE") : "");
	}
	char drv[128], ver[128], pver[128];
	info_str(d, CL_DRIVER_VERSION, drv, sizeof drv);
	info_str(d, CL_DEVICE_VERSION, ver, sizeof ver);
	pver[0] = 0;
	d->cl.GetPlatformInfo(d->plat, CL_PLATFORM_VERSION, sizeof pver - 1, pver, NULL);
	pver[sizeof pver - 1] = 0;
	snprintf(d->desc, sizeof d->desc, "%s | %s | %s | driver %s | %s", pname, pver, dname, drv, ver);
	d->cl.GetDeviceInfo(d->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg, &d->max_wg, NULL);
	d->cl.GetDeviceInfo(d->dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof d->max_items, d->max_items, NULL);
	d->cl.GetDeviceInfo(d->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem, &d->local_mem, NULL);
	d->cx = d->cl.CreateContext(NULL, 1, &d->dev, NULL, NULL, &e);
	if (!d->cx) {
		st = cl_fail(d, CT_ERR_RUNTIME, "clCreateContext", e);
		dev_close(d);
		return st;
	}
	d->q = d->cl.CreateCommandQueue(d->cx, d->dev, 0, &e); /* in order */
	if (!d->q) {
		st = cl_fail(d, CT_ERR_RUNTIME, "clCreateCommandQueue", e);
		dev_close(d);
		return st;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ programs */

const char *ocl_build_options(const char *platform, bool barriers)
{
	const char *o = getenv("CACHET_OPENCL_OPTIONS");
	if (o)
		return o;
	return barriers && platform && strncmp(platform, OCL_POCL_PLATFORM, strlen(OCL_POCL_PLATFORM)) == 0 ? "-cl-opt-disable"
	                                                                                          : "";
}

/* Build options of a kernel with launch L on device d (its desc starts
 * with the platform's name). */
static const char *build_options(const ocl_dev *d, const ocl_launch *L)
{
	return ocl_build_options(d->desc, L->barriers);
}

/* The build log of program p (malloc'd; "" when none). */
static char *build_log(ocl_dev *d, cl_program p)
{
	size_t n = 0;
	d->cl.GetProgramBuildInfo(p, d->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
	char *log = malloc(n + 1);
	if (!log)
		return NULL;
	log[0] = 0;
	if (n && d->cl.GetProgramBuildInfo(p, d->dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS)
		log[0] = 0;
	log[n] = 0;
	return log;
}

/* Compile src: CT_ERR_COMPILE with the build log in the message on failure. */
static ct_status build_source(ocl_dev *d, const char *src, size_t len, const char *opts, cl_program *out)
{
	*out = NULL;
	cl_int e;
	cl_program p = d->cl.CreateProgramWithSource(d->cx, 1, &src, &len, &e);
	if (!p)
		return cl_fail(d, CT_ERR_COMPILE, "clCreateProgramWithSource", e);
	e = d->cl.BuildProgram(p, 1, &d->dev, opts, NULL, NULL);
	if (e != CL_SUCCESS) {
		char *log = build_log(d, p);
		d->cl.ReleaseProgram(p);
		ct_status st = ct_error(d->ctx, CT_ERR_COMPILE, "OpenCL program failed to build (%s) on %s; build log:\n%s",
		                        cl_err_name(e), d->desc, log && *log ? log : "(empty)");
		free(log);
		return st;
	}
	*out = p;
	return CT_OK;
}

/* The program's binary for the device (malloc'd), or NULL. PoCL wrote
 * more bytes for CL_PROGRAM_BINARIES than CL_PROGRAM_BINARY_SIZES had
 * announced (its kernel cache folder grows between the two calls), which
 * overran the buffer; so the buffer has room to spare, the size is asked
 * again afterwards, and a binary that would not have fitted is dropped. */
static unsigned char *program_binary(ocl_dev *d, cl_program p, size_t *n)
{
	*n = 0;
	size_t n1 = 0, n2 = 0;
	if (d->cl.GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n1, &n1, NULL) != CL_SUCCESS || n1 == 0 ||
	    n1 > ((size_t)64 << 20))
		return NULL;
	size_t cap = 2 * n1 + ((size_t)1 << 20);
	unsigned char *bin = calloc(cap, 1);
	if (!bin)
		return NULL;
	if (d->cl.GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS ||
	    d->cl.GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n2, &n2, NULL) != CL_SUCCESS || n2 == 0 ||
	    n2 > cap) {
		free(bin);
		return NULL;
	}
	*n = n2;
	return bin;
}

/* The code cache's key of a program: the source plus everything that
 * changes the binary (device, driver, platform versions, options). */
static char *binary_key(ocl_dev *d, const char *src, size_t len, const char *opts, size_t *klen)
{
	size_t n = len + strlen(d->desc) + strlen(opts) + 64;
	char *key = malloc(n);
	if (!key)
		return NULL;
	int h = snprintf(key, n, "opencl-binary\n%s\n%s\n", d->desc, opts);
	if (h < 0) {
		free(key);
		return NULL;
	}
	memcpy(key + h, src, len);
	*klen = (size_t)h + len;
	return key;
}

/* The program built from the binary kept under key, or NULL: *found says
 * whether a binary was kept, and when the device refused it, *step names
 * the call that failed with its code in *e. */
static cl_program blob_program(ocl_dev *d, const char *key, size_t klen, const char *opts, bool *found,
                               const char **step, cl_int *e)
{
	void *bin = NULL;
	size_t bn = 0;
	*found = jit_blob_get(d->ctx, key, klen, &bin, &bn) == CT_OK && bin;
	if (!*found)
		return NULL;
	const unsigned char *b = bin;
	cl_int bst = CL_SUCCESS;
	*step = "clCreateProgramWithBinary";
	cl_program p = d->cl.CreateProgramWithBinary(d->cx, 1, &d->dev, &bn, &b, &bst, e);
	if (p && (*step = "clBuildProgram", *e = d->cl.BuildProgram(p, 1, &d->dev, opts, NULL, NULL)) != CL_SUCCESS) {
		d->cl.ReleaseProgram(p);
		p = NULL;
	}
	free(bin);
	return p;
}

/* The kernel fn of src: from a binary in the code cache's folder when one
 * was kept for key (how = "disk"), else built from source (how =
 * "compiled"; the caller keeps the binary once the kernel has run: PoCL
 * compiles a kernel's work-group function for the launch's sizes at its
 * first launch, and a binary taken before would not hold it). A kept binary
 * the device refuses is reported, removed and rebuilt from source. */
static ct_status load_program(ocl_dev *d, const char *key, size_t klen, const char *src, size_t len,
                              const char *opts, const char *fn, cl_program *pp, cl_kernel *kp, const char **how)
{
	cl_int e = CL_SUCCESS;
	bool found = false;
	const char *step = "";
	*pp = NULL;
	*kp = NULL;
	cl_program p = blob_program(d, key, klen, opts, &found, &step, &e);
	if (p && (step = "clCreateKernel", *kp = d->cl.CreateKernel(p, fn, &e)) != NULL) {
		*pp = p;
		*how = "disk";
	} else if (found) {
		if (p)
			d->cl.ReleaseProgram(p);
		char why[160];
		snprintf(why, sizeof why, "%s refused it: %s (%d)", step, cl_err_name(e), (int)e);
		jit_blob_drop(d->ctx, key, klen, why);
	}
	if (*pp)
		return CT_OK;
	ct_status st = build_source(d, src, len, opts, pp);
	if (st)
		return st;
	*kp = d->cl.CreateKernel(*pp, fn, &e);
	if (!*kp) {
		d->cl.ReleaseProgram(*pp);
		*pp = NULL;
		return cl_fail(d, CT_ERR_COMPILE, "clCreateKernel", e);
	}
	*how = "compiled";
	return CT_OK;
}

/* The key of the device's warm-up record: a small blob that holds the key
 * of the binary kept last for this device (see warm_up). */
static int warm_key(ocl_dev *d, char *buf, size_t cap)
{
	return snprintf(buf, cap, "opencl-warmup\n%s\n", d->desc);
}

/* Keep the binary of program p under key (best effort), and name it in
 * the device's warm-up record. */
static void keep_binary(ocl_dev *d, cl_program p, const char *key, size_t klen)
{
	size_t n = 0;
	unsigned char *b = program_binary(d, p, &n);
	if (b) {
		jit_blob_put(d->ctx, key, klen, b, n); /* a cache that cannot write is no error */
		char wk[sizeof d->desc + 32];
		int wn = warm_key(d, wk, sizeof wk);
		if (wn > 0 && (size_t)wn < sizeof wk)
			jit_blob_put(d->ctx, wk, (size_t)wn, key, klen);
	}
	free(b);
}

/* PoCL's first program in a process costs about 2 ms more than any later
 * one, whatever its origin (source or binary): its LLVM context uniques
 * the builtin library's constant tables (30 of the 36 KB of every
 * program.bc) and LLVM's bitcode reader runs for the first time
 * (bench/RESULTS.md, "OpenCL binary loads"). So when the disk cache is on,
 * opening the device loads the binary kept last for it (named by the
 * warm-up record) and drops it, and the user's first binary load is a
 * "later" one. A missing or refused binary only skips this. */
static void warm_up(ocl_dev *d)
{
	char wk[sizeof d->desc + 32];
	int wn = warm_key(d, wk, sizeof wk);
	void *key = NULL;
	size_t klen = 0;
	if (wn <= 0 || (size_t)wn >= sizeof wk || jit_blob_get(d->ctx, wk, (size_t)wn, &key, &klen) != CT_OK || !key)
		return;
	bool found = false;
	const char *step = "";
	cl_int e = CL_SUCCESS;
	cl_program p = blob_program(d, key, klen, ocl_build_options(d->desc, false), &found, &step, &e); /* refused: its own load reports it */
	if (p)
		d->cl.ReleaseProgram(p);
	free(key);
}

/* ------------------------------------------------------------ running */

#define OCL_GUARD 256 /* bytes checked after each array */

typedef struct ocl_run {
	ocl_dev *d;
	ct_kernel *k;
	cl_kernel kern;
	const ocl_launch *L;
	unsigned char guard[3][OCL_GUARD]; /* the pattern written after each array: [1] f32, [2] f64 */
} ocl_run;

/* The guard patterns. Floating-point arrays get signalling NaNs: a kernel
 * that updates an element past the end (`C[x] += 0.0f`) stores a quiet
 * NaN, so even an update that adds zero changes the bytes. */
static void guard_patterns(ocl_run *R)
{
	for (int i = 0; i < OCL_GUARD; i++)
		R->guard[0][i] = (unsigned char)(0xa5 ^ i);
	static const unsigned char snan32[4] = {0x5a, 0x5a, 0x8a, 0x7f}; /* 0x7f8a5a5a, little-endian */
	static const unsigned char snan64[8] = {0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xf4, 0x7f}; /* 0x7ff4a5a5a5a5a5a5 */
	for (int i = 0; i < OCL_GUARD; i++) {
		R->guard[1][i] = snan32[i % 4];
		R->guard[2][i] = snan64[i % 8];
	}
}

static const unsigned char *guard_of(const ocl_run *R, ct_dtype t)
{
	return R->guard[t == CT_F32 ? 1 : t == CT_F64 ? 2 : 0];
}

/* The device limits the launch must respect (CT_ERR_LIMIT naming them). */
static ct_status check_limits(ocl_dev *d, const ocl_launch *L, cl_kernel kern)
{
	if (!L->explicit_local)
		return CT_OK;
	size_t total = 1;
	for (int i = 0; i < L->ndims; i++) {
		total *= L->local[i];
		if (d->max_items[i] && L->local[i] > d->max_items[i])
			return ct_error(d->ctx, CT_ERR_LIMIT,
			                "work-groups of %zu work-items in dimension %d (%s) exceed the device's limit of %zu "
			                "(%s): use a smaller split", L->local[i], i, L->dim_name[i], d->max_items[i], d->desc);
	}
	size_t kmax = 0;
	if (d->cl.GetKernelWorkGroupInfo(kern, d->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) != CL_SUCCESS)
		kmax = 0;
	size_t lim = kmax && kmax < d->max_wg ? kmax : d->max_wg;
	if (lim && total > lim) {
		char shape[128] = "";
		size_t at = 0;
		for (int i = 0; i < L->ndims && at < sizeof shape; i++)
			at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%zu", i ? " x " : "", L->local[i]);
		return ct_error(d->ctx, CT_ERR_LIMIT,
		                "a work-group of %s = %zu work-items exceeds the device's limit of %zu for this kernel "
		                "(%s): use smaller splits of the parallelized indices", shape, total, lim, d->desc);
	}
	if (d->local_mem && (cl_ulong)L->local_bytes > d->local_mem)
		return ct_error(d->ctx, CT_ERR_LIMIT,
		                "the location=local caches need %lld bytes of local memory; the device has %llu (%s)",
		                (long long)L->local_bytes, (unsigned long long)d->local_mem, d->desc);
	return CT_OK;
}

/* The guard bytes after each array's device buffer still hold their
 * pattern: a kernel that wrote past an array's end (a wrong bound, or a
 * miscompile) is an error rather than silent corruption. */
static ct_status check_guard(ocl_run *R, cl_mem m, size_t bytes, ct_dtype t, const char *name)
{
	ocl_dev *d = R->d;
	unsigned char back[OCL_GUARD];
	cl_int e = d->cl.EnqueueReadBuffer(d->q, m, CL_TRUE, bytes, OCL_GUARD, back, 0, NULL, NULL);
	if (e != CL_SUCCESS)
		return cl_fail(d, CT_ERR_RUNTIME, "clEnqueueReadBuffer", e);
	if (memcmp(back, guard_of(R, t), OCL_GUARD) != 0)
		return ct_error(d->ctx, CT_ERR_RUNTIME, "OpenCL: the kernel wrote past the end of array '%s' (%s)", name,
		                d->desc);
	return CT_OK;
}

/* One run: buffers in, the NDRange, outputs back. */
static ct_status ocl_once(void *ud, void *const *buffers)
{
	ocl_run *R = ud;
	ocl_dev *d = R->d;
	ct_kernel *k = R->k;
	cl_mem *mem = calloc((size_t)k->narrays + 1, sizeof *mem);
	if (!mem)
		return ct_error(d->ctx, CT_ERR_NOMEM, "out of memory");
	ct_status st = CT_OK;
	cl_uint arg = 0;
	cl_int e = CL_SUCCESS;
	for (int a = 0; a < k->narrays && !st; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		size_t bytes = (size_t)ct_kernel_array_elements(k, a) * ct_dtype_size(ar->type);
		cl_mem_flags fl = ir_array_readonly(ar) ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
		mem[a] = d->cl.CreateBuffer(d->cx, fl, bytes + OCL_GUARD, NULL, &e);
		if (!mem[a])
			st = cl_fail(d, CT_ERR_RUNTIME, "clCreateBuffer", e);
		else if (bytes && (e = d->cl.EnqueueWriteBuffer(d->q, mem[a], CL_FALSE, 0, bytes, buffers[a], 0, NULL,
		                                                NULL)) != CL_SUCCESS)
			st = cl_fail(d, CT_ERR_RUNTIME, "clEnqueueWriteBuffer", e);
		else if ((e = d->cl.EnqueueWriteBuffer(d->q, mem[a], CL_TRUE, bytes, OCL_GUARD, guard_of(R, ar->type), 0, NULL,
		                                       NULL)) != CL_SUCCESS)
			st = cl_fail(d, CT_ERR_RUNTIME, "clEnqueueWriteBuffer", e);
		else if ((e = d->cl.SetKernelArg(R->kern, arg++, sizeof mem[a], &mem[a])) != CL_SUCCESS)
			st = cl_fail(d, CT_ERR_RUNTIME, "clSetKernelArg", e);
	}
	for (int p = 0; p < k->nparams && !st; p++) {
		if (!k->params[p].runtime)
			continue;
		cl_long v = (cl_long)k->params[p].value;
		if ((e = d->cl.SetKernelArg(R->kern, arg++, sizeof v, &v)) != CL_SUCCESS)
			st = cl_fail(d, CT_ERR_RUNTIME, "clSetKernelArg", e);
	}
	const ocl_launch *L = R->L;
	if (!st && (e = d->cl.EnqueueNDRangeKernel(d->q, R->kern, (cl_uint)L->ndims, NULL, L->global,
	                                           L->explicit_local ? L->local : NULL, 0, NULL, NULL)) != CL_SUCCESS)
		st = cl_fail(d, CT_ERR_RUNTIME, "clEnqueueNDRangeKernel", e);
	for (int a = 0; a < k->narrays && !st; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role != CT_OUTPUT && ar->role != CT_INOUT)
			continue;
		size_t bytes = (size_t)ct_kernel_array_elements(k, a) * ct_dtype_size(ar->type);
		if (bytes && (e = d->cl.EnqueueReadBuffer(d->q, mem[a], CL_TRUE, 0, bytes, buffers[a], 0, NULL, NULL)) !=
		                 CL_SUCCESS)
			st = cl_fail(d, CT_ERR_RUNTIME, "clEnqueueReadBuffer", e);
	}
	if (!st && (e = d->cl.Finish(d->q)) != CL_SUCCESS)
		st = cl_fail(d, CT_ERR_RUNTIME, "clFinish", e);
	for (int a = 0; a < k->narrays && !st; a++)
		if (mem[a])
			st = check_guard(R, mem[a], (size_t)ct_kernel_array_elements(k, a) * ct_dtype_size(k->arrays[a].type),
			                 k->arrays[a].type, k->arrays[a].name);
	for (int a = 0; a < k->narrays; a++)
		if (mem[a])
			d->cl.ReleaseMemObject(mem[a]);
	free(mem);
	return st;
}

/* ------------------------------------------------------------ the ctx's programs */

#define OCL_MEM_PROGRAMS 64 /* programs a ctx keeps loaded; the oldest goes first */

/* A loaded program and its kernel, under the code cache's key. */
typedef struct ocl_prog {
	char *key;
	size_t klen;
	cl_program p;
	cl_kernel k;
	struct ocl_prog *next; /* most recently used first */
} ocl_prog;

/* What a ctx keeps open between runs (ctx->opencl). */
typedef struct ocl_state {
	ocl_dev d;
	bool open;
	char want[256]; /* CACHET_OPENCL_DEVICE when d was picked */
	ocl_prog *progs;
	int nprogs;
} ocl_state;

static void prog_free(ocl_state *s, ocl_prog *g)
{
	if (g->k)
		s->d.cl.ReleaseKernel(g->k);
	if (g->p)
		s->d.cl.ReleaseProgram(g->p);
	free(g->key);
	free(g);
}

static void state_close(ocl_state *s)
{
	while (s->progs) {
		ocl_prog *g = s->progs;
		s->progs = g->next;
		prog_free(s, g);
	}
	s->nprogs = 0;
	if (s->open)
		dev_close(&s->d);
	s->open = false;
}

static void state_release(ct_ctx *ctx)
{
	ocl_state *s = ctx->opencl;
	if (!s)
		return;
	state_close(s);
	ct_free(ctx, s);
	ctx->opencl = NULL;
}

/* Whether the ctx bypasses its caches (CACHET_NO_CACHE=1). */
static bool no_cache(ct_ctx *ctx)
{
	jit_state *js = jit_state_get(ctx);
	return !js || js->no_cache;
}

/* The ctx's open device, opened (again, if CACHET_OPENCL_DEVICE changed). */
static ct_status state_device(ct_ctx *ctx, ocl_state **out)
{
	ocl_state *s = ctx->opencl;
	if (!s) {
		if (!(s = ct_alloc(ctx, sizeof *s)))
			return CT_ERR_NOMEM;
		if (!ct_ctx_on_free(ctx, state_release)) {
			ct_free(ctx, s);
			return ct_error(ctx, CT_ERR_NOMEM, "no room for another cleanup in the ctx");
		}
		ctx->opencl = s;
	}
	const char *w = getenv("CACHET_OPENCL_DEVICE");
	if (s->open && strcmp(s->want, w ? w : "") != 0)
		state_close(s);
	if (!s->open) {
		ct_status st = dev_open(ctx, &s->d);
		if (st)
			return st;
		s->open = true;
		snprintf(s->want, sizeof s->want, "%s", w ? w : "");
		s->d.ctx = ctx;
		if (!no_cache(ctx))
			warm_up(&s->d);
	}
	s->d.ctx = ctx;
	*out = s;
	return CT_OK;
}

/* The program kept under key (moved to the front), or NULL. */
static ocl_prog *mem_find(ocl_state *s, const char *key, size_t klen)
{
	for (ocl_prog **at = &s->progs; *at; at = &(*at)->next) {
		ocl_prog *g = *at;
		if (g->klen == klen && memcmp(g->key, key, klen) == 0) {
			*at = g->next;
			g->next = s->progs;
			s->progs = g;
			return g;
		}
	}
	return NULL;
}

/* Keep p and k under key (taking all three); false (nothing taken) on
 * out-of-memory. */
static bool mem_put(ocl_state *s, char *key, size_t klen, cl_program p, cl_kernel k)
{
	ocl_prog *g = calloc(1, sizeof *g);
	if (!g)
		return false;
	*g = (ocl_prog){key, klen, p, k, s->progs};
	s->progs = g;
	if (++s->nprogs > OCL_MEM_PROGRAMS) {
		ocl_prog **at = &s->progs;
		while ((*at)->next)
			at = &(*at)->next;
		prog_free(s, *at);
		*at = NULL;
		s->nprogs--;
	}
	return true;
}

/* ------------------------------------------------------------ run */

char *ocl_kernel_source(ct_kernel *k, size_t *len, ocl_launch *L)
{
	return eng_lowered_source(k, TARGET_OPENCL, len, L);
}

ct_status run_opencl(ct_kernel *k, const ct_run_options *o, ct_run_result *r)
{
	ct_ctx *ctx = k->ctx;
	r->engine = "opencl";
	r->threads = 1;
	ocl_launch L;
	size_t len = 0;
	char *src = ocl_kernel_source(k, &len, &L);
	if (!src)
		return ct_ctx_last_status(ctx);
	ocl_state *s = NULL;
	ct_status st = state_device(ctx, &s);
	if (st) {
		free(src);
		return st;
	}
	ocl_dev *d = &s->d;
	const char *opts = build_options(d, &L);
	size_t klen = 0;
	char *key = binary_key(d, src, len, opts, &klen);
	if (!key) {
		free(src);
		return ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	}
	bool keep = !no_cache(ctx);
	cl_program prog = NULL;
	cl_kernel kern = NULL;
	const char *how = "memory";
	double t0 = ct_now();
	ocl_prog *hit = keep ? mem_find(s, key, klen) : NULL;
	if (hit) {
		prog = hit->p;
		kern = hit->k;
	} else {
		st = load_program(d, key, klen, src, len, opts, L.fn, &prog, &kern, &how);
	}
	free(src);
	if (!st)
		st = check_limits(d, &L, kern);
	ocl_run R = {d, k, kern, &L, {{0}}};
	guard_patterns(&R);
	if (!st && !hit) {
		/* warm: the first launch, with the sizes of the timed runs,
		 * finishes the driver's compile (PoCL's work-group function);
		 * counted as compile time, and only then is the binary taken */
		run_buffers wb;
		st = run_buffers_alloc(k, &wb, false);
		if (!st) {
			st = ocl_once(&R, wb.data);
			run_buffers_free(&wb);
		}
		if (!st && strcmp(how, "compiled") == 0)
			keep_binary(d, prog, key, klen);
	}
	r->compile_seconds = ct_now() - t0;
	r->code_cache = how;
	if (!st)
		st = run_measure(k, o, ocl_once, &R, r);
	if (!hit && prog && (st || !keep || !mem_put(s, key, klen, prog, kern))) {
		if (kern)
			d->cl.ReleaseKernel(kern);
		d->cl.ReleaseProgram(prog);
		free(key);
	} else if (hit || !prog) {
		free(key);
	}
	return st;
}

/* ------------------------------------------------------------ packages */

ct_status run_opencl_binary(ct_kernel *k, unsigned char **bin, size_t *n, char *desc, size_t cap)
{
	ct_ctx *ctx = k->ctx;
	*bin = NULL;
	*n = 0;
	if (cap)
		desc[0] = 0;
	ocl_launch L;
	size_t len = 0;
	char *src = ocl_kernel_source(k, &len, &L);
	if (!src)
		return ct_ctx_last_status(ctx);
	ocl_state *s = NULL;
	ct_status st = L.sizes_known ? state_device(ctx, &s) : CT_OK;
	if (!L.sizes_known || st == CT_ERR_UNSUPPORTED) {
		/* runtime sizes (no launch to warm it with) or no OpenCL here:
		 * the package builds from source on its device */
		free(src);
		ct_ctx_clear_error(ctx);
		return CT_OK;
	}
	if (st) {
		free(src);
		return st;
	}
	ocl_dev *d = &s->d;
	size_t klen = 0;
	const char *opts = build_options(d, &L);
	char *key = binary_key(d, src, len, opts, &klen);
	cl_program prog = NULL;
	cl_kernel kern = NULL;
	const char *how = "compiled";
	st = key ? load_program(d, key, klen, src, len, opts, L.fn, &prog, &kern, &how)
	         : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	free(src);
	if (!st)
		st = check_limits(d, &L, kern);
	if (!st) {
		/* run once with the launch the package uses, so the binary holds
		 * the work-group function compiled for it */
		ocl_run R = {d, k, kern, &L, {{0}}};
		guard_patterns(&R);
		run_buffers wb;
		st = run_buffers_alloc(k, &wb, false);
		if (!st) {
			st = ocl_once(&R, wb.data);
			run_buffers_free(&wb);
		}
	}
	if (!st) {
		*bin = program_binary(d, prog, n);
		snprintf(desc, cap, "%s", d->desc);
	}
	if (kern)
		d->cl.ReleaseKernel(kern);
	if (prog)
		d->cl.ReleaseProgram(prog);
	free(key);
	return st;
}

/* ------------------------------------------------------------ public */

ct_status ct_opencl_build(ct_ctx *ctx, const char *source, const char *options)
{
	if (!ctx || !source)
		return CT_ERR_USAGE;
	ocl_dev d;
	ct_status st = dev_open(ctx, &d);
	if (st)
		return st;
	cl_program p = NULL;
	st = build_source(&d, source, strlen(source), options ? options : "", &p);
	if (p)
		d.cl.ReleaseProgram(p);
	dev_close(&d);
	return st;
}

ct_status ct_opencl_device(ct_ctx *ctx, char *buf, size_t cap)
{
	if (!ctx || !buf || cap == 0)
		return CT_ERR_USAGE;
	buf[0] = 0;
	ocl_dev d;
	ct_status st = dev_open(ctx, &d);
	if (st)
		return st;
	snprintf(buf, cap, "%s", d.desc);
	dev_close(&d);
	return CT_OK;
}
