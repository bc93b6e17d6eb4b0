/* cuda.h: the CUDA driver API and NVRTC entry points cachet uses, loaded with dlopen at first use (target/cuda.c) with our own prototypes, shared by the probe and the engine's runner. */
#ifndef CT_TARGET_CUDA_H
#define CT_TARGET_CUDA_H

#include "core/core.h"

#include <stddef.h>

/*
 * No CUDA header is included: libcachet builds and runs on machines without
 * CUDA. The types below are the driver API's (CUresult is an int enum,
 * handles are opaque pointers, CUdeviceptr is 64 bits on 64-bit hosts) and
 * the constants are the values of cuda.h (CUDA 12 and 13 agree on them).
 */
typedef int cu_result;
typedef int cu_device;
typedef void *cu_context;
typedef void *cu_module;
typedef void *cu_function;
typedef void *cu_event;
typedef void *cu_stream;
typedef unsigned long long cu_ptr;

#define CU_SUCCESS 0
#define CU_ERROR_OUT_OF_MEMORY 2
#define CU_ERROR_NO_DEVICE 100

/* CUdevice_attribute values */
enum {
	CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
	CU_ATTR_MAX_BLOCK_DIM_X = 2,
	CU_ATTR_MAX_GRID_DIM_X = 5,
	CU_ATTR_MAX_SHARED_PER_BLOCK = 8,
	CU_ATTR_WARP_SIZE = 10,
	CU_ATTR_MAX_REGS_PER_BLOCK = 12,
	CU_ATTR_CLOCK_RATE = 13,
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_MEMORY_CLOCK_RATE = 36,
	CU_ATTR_BUS_WIDTH = 37,
	CU_ATTR_L2_SIZE = 38,
	CU_ATTR_MAX_THREADS_PER_SM = 39,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_ATTR_MAX_SHARED_PER_SM = 81,
	CU_ATTR_MAX_REGS_PER_SM = 82,
	CU_ATTR_MAX_SHARED_PER_BLOCK_OPTIN = 97
};

/* CUfunction_attribute values */
enum {
	CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
	CU_FUNC_SHARED_SIZE_BYTES = 1,
	CU_FUNC_LOCAL_SIZE_BYTES = 3,
	CU_FUNC_NUM_REGS = 4
};

/* CUjit_option values (cuModuleLoadDataEx) */
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

/* The driver API entry points cachet uses (libcuda.so.1). */
typedef struct cuda_api {
	void *lib;
	cu_result (*Init)(unsigned);
	cu_result (*DriverGetVersion)(int *);
	cu_result (*DeviceGetCount)(int *);
	cu_result (*DeviceGet)(cu_device *, int);
	cu_result (*DeviceGetName)(char *, int, cu_device);
	cu_result (*DeviceGetAttribute)(int *, int, cu_device);
	cu_result (*DeviceTotalMem)(size_t *, cu_device);
	cu_result (*PrimaryCtxRetain)(cu_context *, cu_device);
	cu_result (*PrimaryCtxRelease)(cu_device);
	cu_result (*CtxSetCurrent)(cu_context);
	cu_result (*CtxSynchronize)(void);
	cu_result (*ModuleLoadData)(cu_module *, const void *);
	cu_result (*ModuleLoadDataEx)(cu_module *, const void *, unsigned, int *, void **);
	cu_result (*ModuleUnload)(cu_module);
	cu_result (*ModuleGetFunction)(cu_function *, cu_module, const char *);
	cu_result (*FuncGetAttribute)(int *, int, cu_function);
	cu_result (*FuncSetAttribute)(cu_function, int, int);
	cu_result (*MemAlloc)(cu_ptr *, size_t);
	cu_result (*MemFree)(cu_ptr);
	cu_result (*MemcpyHtoD)(cu_ptr, const void *, size_t);
	cu_result (*MemcpyDtoH)(void *, cu_ptr, size_t);
	cu_result (*MemsetD8)(cu_ptr, unsigned char, size_t);
	cu_result (*LaunchKernel)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                          cu_stream, void **, void **);
	cu_result (*EventCreate)(cu_event *, unsigned);
	cu_result (*EventRecord)(cu_event, cu_stream);
	cu_result (*EventSynchronize)(cu_event);
	cu_result (*EventElapsedTime)(float *, cu_event, cu_event);
	cu_result (*EventDestroy)(cu_event);
	cu_result (*GetErrorName)(cu_result, const char **);
	cu_result (*GetErrorString)(cu_result, const char **);
} cuda_api;

/* One device, its primary context current on the calling thread. */
typedef struct cuda_dev {
	ct_ctx *ctx;
	cuda_api cu;
	cu_device dev;
	cu_context cx;
	int index;             /* the driver's ordinal */
	int driver_version;    /* cuDriverGetVersion: 13000 = 13.0 */
	int cc_major, cc_minor;
	char arch[16];         /* "sm_90a" on Hopper 9.0, else "sm_XY" */
	char name[128];
	char desc[320];        /* "NAME | sm_XY | driver N": names it in messages and cache keys */
	int sms, warp, max_threads_block, max_threads_sm;
	int max_block[3], max_grid[3];
	int shared_block, shared_block_optin, shared_sm; /* bytes */
	int regs_block, regs_sm;
	int l2, clock_khz, mem_clock_khz, bus_width;
	size_t total_mem;
} cuda_dev;

/* Open libcuda.so.1 (RTLD_NODELETE: the driver keeps threads and state
 * that unloading would pull from under them) and fill a; CT_ERR_UNSUPPORTED
 * naming what is missing ("CUDA: no NVIDIA driver: ..."). CACHET_LIBCUDA
 * names another file to open (tests). The caller dlcloses a->lib. */
CT_INTERN ct_status target_cuda_load(ct_ctx *ctx, cuda_api *a);
/* Load the driver, cuInit, pick the device (CACHET_CUDA_DEVICE: its index,
 * else 0), read its attributes and make its primary context current.
 * CT_ERR_UNSUPPORTED without a driver or a device; CT_ERR_USAGE for a bad
 * CACHET_CUDA_DEVICE. */
CT_INTERN ct_status target_cuda_open(ct_ctx *ctx, cuda_dev *d);
/* target_cuda_open of device index (not CACHET_CUDA_DEVICE's); *count:
 * the devices the driver found (set also when this one fails). */
CT_INTERN ct_status target_cuda_open_at(ct_ctx *ctx, cuda_dev *d, int index, int *count);
/* Release the primary context and the library; d is zeroed. */
CT_INTERN void target_cuda_close(cuda_dev *d);
/* "CUDA_ERROR_X (N): the driver's text" for e into buf (cap bytes). */
CT_INTERN const char *target_cuda_error(const cuda_api *a, cu_result e, char *buf, size_t cap);
/* The code architecture of compute capability major.minor: "sm_90a" for
 * 9.0 (Hopper's arch-specific features), "sm_100a" for 10.0, else "sm_XY". */
CT_INTERN void target_cuda_arch(int major, int minor, char *buf, size_t cap);

/* ------------------------------------------------------------ NVRTC */

typedef void *nvrtc_prog;

/* The NVRTC entry points cachet uses. */
typedef struct nvrtc_api {
	void *lib;
	char path[512];     /* the file that was opened */
	int major, minor;   /* nvrtcVersion */
	int (*Version)(int *, int *);
	int (*CreateProgram)(nvrtc_prog *, const char *, const char *, int, const char *const *, const char *const *);
	int (*CompileProgram)(nvrtc_prog, int, const char *const *);
	int (*GetProgramLogSize)(nvrtc_prog, size_t *);
	int (*GetProgramLog)(nvrtc_prog, char *);
	int (*GetCUBINSize)(nvrtc_prog, size_t *);
	int (*GetCUBIN)(nvrtc_prog, char *);
	int (*GetPTXSize)(nvrtc_prog, size_t *);
	int (*GetPTX)(nvrtc_prog, char *);
	int (*DestroyProgram)(nvrtc_prog *);
	const char *(*GetErrorString)(int);
} nvrtc_api;

/* The files NVRTC is looked for in, in order, into out (cap entries, each a
 * static string or a pointer into getenv's value); returns the count.
 * CACHET_NVRTC set: only its ':'-separated entries (a name or a path;
 * "none" or "" hides NVRTC). Else libnvrtc.so.13, .so.12, .so by the
 * loader's search, then the same names under $CUDA_HOME/lib64,
 * $CUDA_PATH/lib64, /usr/local/cuda/lib64 and the pip packages' folders
 * (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib) of /opt/torch/.venv and
 * /usr/local/lib/python3*. paths: room for the built paths. */
#define NVRTC_MAX_PATHS 48
CT_INTERN int target_nvrtc_paths(char (*paths)[512], int cap);
/* Open the first NVRTC of the search list; CT_ERR_UNSUPPORTED saying
 * where it was looked for. The caller calls target_nvrtc_close. */
CT_INTERN ct_status target_nvrtc_load(ct_ctx *ctx, nvrtc_api *a);
CT_INTERN void target_nvrtc_close(nvrtc_api *a);
/* Compile CUDA C src (name: for messages) with options opts[0..nopts-1]
 * into a cubin (malloc'd, *n bytes); ptx instead of a cubin when want_ptx.
 * CT_ERR_COMPILE with NVRTC's log on failure. */
CT_INTERN ct_status target_nvrtc_compile(ct_ctx *ctx, const nvrtc_api *a, const char *src, const char *name,
                                         const char *const *opts, int nopts, bool want_ptx, unsigned char **out,
                                         size_t *n);

#endif
