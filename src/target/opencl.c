/* opencl.c: OpenCL on this machine: libOpenCL loaded with dlopen (for the engine's runner too) and the devices listed for the probe. */
#include "target/opencl.h"
#include "target/target.h"

#include <dlfcn.h>
#include <string.h>

/* ------------------------------------------------------------ loading */

static bool sym(ocl_api *a, void *slot, const char *name)
{
	void *p = dlsym(a->lib, name);
	if (!p)
		return false;
	memcpy(slot, &p, sizeof p); /* POSIX: a dlsym pointer converts to a function pointer */
	return true;
}

ct_status target_opencl_load(ct_ctx *ctx, ocl_api *a)
{
	memset(a, 0, sizeof *a);
	/* RTLD_NODELETE: the ICD loader and its drivers keep process-wide
	 * state (platform lists, PoCL's worker threads) that unloading would
	 * pull from under them; a later dlopen finds the same copy */
	a->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!a->lib)
		a->lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!a->lib)
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
		                "OpenCL is not available: libOpenCL.so.1 cannot be loaded (install an OpenCL ICD "
		                "loader and a driver, e.g. Debian's ocl-icd-libopencl1 and pocl-opencl-icd)");
	static const char *const names[] = {
		"clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo", "clCreateContext",
		"clCreateCommandQueue", "clCreateProgramWithSource", "clCreateProgramWithBinary", "clBuildProgram",
		"clGetProgramBuildInfo", "clGetProgramInfo", "clCreateKernel", "clGetKernelWorkGroupInfo",
		"clSetKernelArg", "clCreateBuffer", "clEnqueueWriteBuffer", "clEnqueueReadBuffer",
		"clEnqueueNDRangeKernel", "clFinish", "clReleaseMemObject", "clReleaseKernel", "clReleaseProgram",
		"clReleaseCommandQueue", "clReleaseContext"};
	void *slots[] = {
		&a->GetPlatformIDs, &a->GetPlatformInfo, &a->GetDeviceIDs, &a->GetDeviceInfo, &a->CreateContext,
		&a->CreateCommandQueue, &a->CreateProgramWithSource, &a->CreateProgramWithBinary, &a->BuildProgram,
		&a->GetProgramBuildInfo, &a->GetProgramInfo, &a->CreateKernel, &a->GetKernelWorkGroupInfo,
		&a->SetKernelArg, &a->CreateBuffer, &a->EnqueueWriteBuffer, &a->EnqueueReadBuffer,
		&a->EnqueueNDRangeKernel, &a->Finish, &a->ReleaseMemObject, &a->ReleaseKernel, &a->ReleaseProgram,
		&a->ReleaseCommandQueue, &a->ReleaseContext};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!sym(a, slots[i], names[i])) {
			dlclose(a->lib);
			a->lib = NULL;
			return ct_error(ctx, CT_ERR_UNSUPPORTED, "OpenCL is not available: libOpenCL lacks %s", names[i]);
		}
	return CT_OK;
}

/* ------------------------------------------------------------ listing devices (the probe) */

/* Device string what of dev into buf (cap bytes; empty when the driver refuses). */
static void info_str(const ocl_api *cl, cl_device_id dev, cl_device_info what, char *buf, size_t cap)
{
	buf[0] = 0;
	if (cl->GetDeviceInfo(dev, what, cap - 1, buf, NULL) != CL_SUCCESS)
		buf[0] = 0;
	buf[cap - 1] = 0;
}

/* The device type as the probe prints it. */
static const char *dev_type_name(cl_device_type t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "gpu";
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	if (t & CL_DEVICE_TYPE_CPU)
		return "cpu";
	return "other";
}

/* src into dst (cap bytes), cut to fit: the probe's fields are short,
 * drivers' strings can be long. */
static void cut_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* Fill one entry of the probe's list from device dev of platform pname. */
static void describe_device(const ocl_api *cl, cl_device_id dev, const char *pname, ct_opencl_devinfo *o)
{
	memset(o, 0, sizeof *o);
	/* read into a roomy buffer and cut: a driver refuses (CL_INVALID_VALUE)
	 * to write a string into a buffer shorter than it */
	char buf[1024];
	cut_copy(o->platform, sizeof o->platform, pname);
	info_str(cl, dev, CL_DEVICE_NAME, buf, sizeof buf);
	cut_copy(o->name, sizeof o->name, buf);
	info_str(cl, dev, CL_DEVICE_VERSION, buf, sizeof buf);
	cut_copy(o->version, sizeof o->version, buf);
	info_str(cl, dev, CL_DRIVER_VERSION, buf, sizeof buf);
	cut_copy(o->driver, sizeof o->driver, buf);
	cl_device_type t = 0;
	cl_uint cu = 0;
	size_t wg = 0;
	cl_ulong lm = 0, gm = 0;
	cl->GetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL);
	cl->GetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
	cl->GetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
	cl->GetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL);
	cl->GetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gm, &gm, NULL);
	cut_copy(o->type, sizeof o->type, dev_type_name(t));
	o->compute_units = (int)cu;
	o->max_work_group = (int64_t)wg;
	o->local_mem = (int64_t)lm;
	o->global_mem = (int64_t)gm;
}

ct_status target_opencl_devices(ct_ctx *ctx, ct_opencl_devinfo *out, int cap, int *n)
{
	*n = 0;
	ocl_api cl;
	if (target_opencl_load(ctx, &cl) != CT_OK) {
		ct_ctx_clear_error(ctx); /* no OpenCL is an answer here, not an error */
		return CT_OK;
	}
	cl_platform_id plats[16];
	cl_uint np = 0;
	if (cl.GetPlatformIDs(16, plats, &np) != CL_SUCCESS)
		np = 0;
	for (cl_uint p = 0; p < np && p < 16 && *n < cap; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;
		if (cl.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		char pname[256] = "";
		cl.GetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
		pname[sizeof pname - 1] = 0;
		for (cl_uint i = 0; i < nd && i < 16 && *n < cap; i++) {
			describe_device(&cl, devs[i], pname, &out[(*n)++]);
		}
	}
	dlclose(cl.lib);
	return CT_OK;
}
