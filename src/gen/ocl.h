/* ocl.h: the GPU backend (oclgen.c: OpenCL C and CUDA C) and the runtimes share this launch description. */
#ifndef CT_OCL_H
#define CT_OCL_H

#include "ir/looptree.h"

#include <stddef.h>

/* How a generated OpenCL kernel is launched: its NDRange. Each
 * parallelized index is one dimension: a split index gives work-groups
 * (its outer loop, one group per tile) of work-items (its inner loop, one
 * per iteration of the inner index); an unsplit one gives work-items only
 * (the runtime picks the group size, or 1 when another dimension is
 * split). A kernel without parallelize runs as one work-item. */
typedef struct ocl_launch {
	int ndims;               /* 1..3 */
	bool sizes_known;        /* global/local evaluated (every param has a value) */
	bool explicit_local;     /* local[] is given to clEnqueueNDRangeKernel */
	size_t global[3], local[3];
	int64_t local_bytes;     /* __local / __shared__ memory the kernel declares (CUDA: padding
	                            included; a next block kept in registers excluded) */
	char dim_name[3][64];    /* per dimension, for messages: "i" or "i/ii" */
	char fn[300];            /* the kernel's name */
	bool barriers;           /* the kernel has barriers (a location=local|shared cache) */
} ocl_launch;

/* The build options of a kernel for the OpenCL platform named platform
 * ("Portable Computing Language" is PoCL): CACHET_OPENCL_OPTIONS when set;
 * else "-cl-opt-disable" for a kernel with barriers on PoCL, whose
 * optimizing build (3.1, LLVM 15) miscompiled some of them
 * (docs/OPENCL.md, section 5); else none. */
const char *ocl_build_options(const char *platform, bool barriers);

/* The platform name PoCL reports (CL_PLATFORM_NAME); a device description
 * ("platform | version | ...") of PoCL starts with it. */
#define OCL_POCL_PLATFORM "Portable Computing Language"

/* The OpenCL C source of loop tree t (scheduled and planned for
 * plan(target=opencl)) and, when L is not NULL, its launch. The kernel
 * takes the kernel's arrays (temps excluded) as __global pointers in
 * declaration order, then the runtime params as long. Returns a malloc'd
 * string; NULL with CT_ERR_INPUT (a plan the target cannot honour: the
 * message names the cache or index) or another error on the kernel's ctx. */
char *gen_opencl(ct_looptree *t, size_t *len, ocl_launch *L);

/* The CUDA C source of loop tree t (plan(target=cuda)): the same GPU
 * generator as gen_opencl in CUDA's spelling (blocks of threads for
 * work-groups of work-items, __shared__ for location=local|shared; see
 * docs/CUDA.md). The kernel is `extern "C" __global__`, named L->fn, and
 * takes the kernel's arrays (temps excluded) as pointers in declaration
 * order (each 16-byte aligned, as cudaMalloc's are: copies may load 16
 * bytes at once), then the runtime params as long long; it needs no
 * header (NVRTC or nvcc). L->global / L->local are in threads; the runtime launches
 * grid = ceil(global / local) blocks per dimension (dimension 0 = x).
 * With L->explicit_local the block must be exactly local (the code
 * assumes that many threads: its copies, __launch_bounds__); without it
 * the runtime may pick any block size and round the grid up: every
 * thread past the iteration space does nothing (each mapped loop keeps
 * its bounds as a guard, and a thread with a nonzero index in a
 * dimension past L->ndims returns at once). Returns a malloc'd string;
 * NULL with CT_ERR_INPUT or another error on the kernel's ctx. */
char *gen_cuda(ct_looptree *t, size_t *len, ocl_launch *L);

#endif
