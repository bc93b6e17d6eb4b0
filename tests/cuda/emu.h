/* emu.h: just enough of CUDA to run a generated kernel on the CPU (tests/cli/cuda.sh): one std::thread per CUDA thread of a block, __syncthreads a barrier among them, __shared__ a static (one block runs at a time). It checks the generator's logic (mapping, guards, shares, barriers), not nvcc. */
#ifndef CT_CUDA_EMU_H
#define CT_CUDA_EMU_H

#include <barrier>
#include <cmath>
#include <math.h>
#include <cstdint>

struct ct_dim3 {
	unsigned x, y, z;
};
struct __attribute__((aligned(16))) float4 {
	float x, y, z, w;
};
struct __attribute__((aligned(16))) double2 {
	double x, y;
};
struct __attribute__((aligned(16))) int4 {
	int x, y, z, w;
};
struct __attribute__((aligned(16))) longlong2 {
	long long x, y;
};
extern thread_local ct_dim3 threadIdx, blockIdx;
extern ct_dim3 blockDim, gridDim;
extern std::barrier<> *ct_emu_barrier;

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __syncthreads() ct_emu_barrier->arrive_and_wait()

using std::exp;
using std::fabs;
using std::fma;
using std::sqrt;

#endif
