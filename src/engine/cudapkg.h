/* cudapkg.h: the CUDA package's inner entry, the seam its tests use to package a hand-written kernel. */
#ifndef CT_CUDAPKG_H
#define CT_CUDAPKG_H

#include "engine/engine.h"
#include "gen/ocl.h"

/* The PTX virtual architectures the package tries, lowest first
 * (compute_XX): nvcc refuses the ones it no longer supports (CUDA 13:
 * below 75), ptxas the ones the kernel does not fit (static shared memory
 * past 48 KiB fits only sm_90a), and the package takes the next one. */
#define CUDAPKG_PTX_ARCHS {"70", "75", "80", "86", "90", "90a"}
/* The architecture of the package's cubin: Hopper (H100, H200). */
#define CUDAPKG_CUBIN_ARCH "sm_90a"

/* Write the package of kernel k into folder dir (which exists) from the
 * CUDA C source cu (len bytes, borrowed) and its launch L (borrowed):
 * compile cu with nvcc into a cubin and a PTX, then write NAME.cu, NAME.h,
 * NAME.c and compile libNAME.a and libNAME.so. gen_cuda_package calls it
 * with cuda_kernel_source's result; tests call it with a hand-written
 * kernel. CT_ERR_UNSUPPORTED when nvcc is not found, CT_ERR_COMPILE with
 * nvcc's output when the source does not compile. */
ct_status cudapkg_write(ct_kernel *k, const char *dir, const char *cu, size_t len, const ocl_launch *L);

#endif
