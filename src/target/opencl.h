/* opencl.h: the OpenCL entry points cachet uses, loaded with dlopen at first use (target/opencl.c), shared by the probe and the engine's runner. */
#ifndef CT_TARGET_OPENCL_H
#define CT_TARGET_OPENCL_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "core/core.h"

/* The entry points cachet uses. */
typedef struct ocl_api {
	void *lib;
	cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
	cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
	cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
	                            void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *);
	cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
	cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
	cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *, const size_t *,
	                                      const unsigned char **, cl_int *, cl_int *);
	cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
	                       void(CL_CALLBACK *)(cl_program, void *), void *);
	cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *);
	cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
	cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
	cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *);
	cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
	cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
	cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
	                             const cl_event *, cl_event *);
	cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
	                            const cl_event *, cl_event *);
	cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
	                               const size_t *, cl_uint, const cl_event *, cl_event *);
	cl_int (*Finish)(cl_command_queue);
	cl_int (*ReleaseMemObject)(cl_mem);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*ReleaseProgram)(cl_program);
	cl_int (*ReleaseCommandQueue)(cl_command_queue);
	cl_int (*ReleaseContext)(cl_context);
} ocl_api;

/* Open libOpenCL.so.1 (RTLD_NODELETE) and fill a with its entry points;
 * CT_ERR_UNSUPPORTED, saying what is missing, where OpenCL is not
 * installed. The caller dlcloses a->lib. */
CT_INTERN ct_status target_opencl_load(ct_ctx *ctx, ocl_api *a);

#endif
