/* cuda_kernels.h: the hand-written CUDA kernels that test_cuda (on a GPU) and test_cudart (on the made-up driver, tests/unit/fake_libcuda.c, whose C functions carry the same names) both run, and the runtime-param runner. */
#ifndef CT_TEST_CUDA_KERNELS_H
#define CT_TEST_CUDA_KERNELS_H

#include "cachet.h"
#include "engine/engine.h"
#include "gen/ocl.h"
#include "ir/ir.h"

#include <string.h>

/* The hand-written kernels: body is the statement for element i. */
#define SCALE_CU(name, cond, body)                                                                                     \
	"extern \"C\" __global__ void " name "(const float *X, float *Y)\n"                                            \
	"{\n"                                                                                                          \
	"  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"                                          \
	"  if (" cond ") " body ";\n"                                                                                  \
	"}\n"

static const char good_cu[] = SCALE_CU("scale_good", "i < 37", "Y[i] = 3.0f * X[i] + Y[i]");
static const char wrong_cu[] = SCALE_CU("scale_wrong", "i < 37", "Y[i] = 2.0f * X[i] + Y[i]");
static const char past_cu[] = SCALE_CU("scale_past", "i <= 37", "Y[i] = 3.0f * X[i] + Y[i]");
static const char fault_cu[] = SCALE_CU("scale_fault", "i < 37", "((float *)0x10)[i * 1000003] = X[i]");
static const char rt_cu[] = "extern \"C\" __global__ void scale_n(const float *X, float *Y, long long N)\n"
                            "{\n"
                            "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                            "  if (i < N) Y[i] = 3.0f * X[i] + Y[i];\n"
                            "}\n";
static const char rt_src[] = "kernel scale\nparam N : runtime\narray X : f32[N] input\narray Y : f32[N] inout\n"
                             "for (i: N) {\n  Y[i] = 3 * X[i] + Y[i]\n}\n";

/* The runtime-param kernel (N = n) on src under launch L. */
static ct_status run_rt(ct_ctx *ctx, int64_t n, const ocl_launch *L, ct_run_result *r)
{
	ct_kernel *k = ct_kernel_parse(ctx, rt_src, sizeof rt_src - 1, "rt.cachet");
	if (!k)
		return ct_ctx_last_status(ctx);
	k->has_plan = true;
	k->target = TARGET_CUDA;
	ct_status st = ct_kernel_set_param(k, "N", n);
	ct_run_options o;
	ct_run_options_init(&o);
	memset(r, 0, sizeof *r);
	r->engine = r->code_cache = r->mismatch_array = "";
	if (!st)
		st = run_cuda_source(k, &o, rt_cu, strlen(rt_cu), L, r);
	r->mismatch_array = "";
	ct_kernel_free(k);
	return st;
}

#endif
