/* cudaprobe.c: the CUDA devices for the probe: the driver's attributes, and measured copy bandwidth and fp32 peak (two kernels compiled with NVRTC, timed with events). */
#include "target/cuda.h"
#include "target/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The copy kernel streams float4s from one buffer to another (grid-stride,
 * every SM busy); its rate counts the bytes read and written, as the host
 * probe's copy does. The peak kernel runs PROBE_CHAINS independent FMA
 * chains per thread (enough to hide the FMA latency of 4 cycles on every
 * scheduler) on a grid that fills every SM; 2 flops per FMA. Each is run
 * a few times after a warm-up; the best run counts.
 */

#define PROBE_CHAINS 16
#define PROBE_ITERS 4096
#define PROBE_REPS 5

static const char probe_src[] =
	"extern \"C\" __global__ void ct_probe_copy(const float4 *__restrict__ a, float4 *__restrict__ b, long long n)\n"
	"{\n"
	"  long long stride = (long long)gridDim.x * blockDim.x;\n"
	"  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)\n"
	"    b[i] = a[i];\n"
	"}\n"
	"extern \"C\" __global__ void ct_probe_fma(float *out, int iters, float s)\n"
	"{\n"
	"  float a[16];\n"
	"#pragma unroll\n"
	"  for (int c = 0; c < 16; c++) a[c] = (float)(threadIdx.x + c);\n"
	"  for (int i = 0; i < iters; i++) {\n"
	"#pragma unroll\n"
	"    for (int c = 0; c < 16; c++) a[c] = fmaf(a[c], s, 0.5f);\n"
	"  }\n"
	"  float t = 0.0f;\n"
	"#pragma unroll\n"
	"  for (int c = 0; c < 16; c++) t += a[c];\n"
	"  if (t == 12345.678f) out[blockIdx.x] = t; /* never true: keeps the chains live */\n"
	"}\n";

/* The device's attributes into o. */
static void describe(const cuda_dev *d, ct_cuda_devinfo *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->name, sizeof o->name, "%s", d->name);
	snprintf(o->arch, sizeof o->arch, "%s", d->arch);
	o->index = d->index;
	o->cc_major = d->cc_major;
	o->cc_minor = d->cc_minor;
	o->driver_version = d->driver_version;
	o->sms = d->sms;
	o->warp = d->warp;
	o->max_threads_block = d->max_threads_block;
	o->max_threads_sm = d->max_threads_sm;
	o->shared_block = d->shared_block;
	o->shared_block_optin = d->shared_block_optin;
	o->shared_sm = d->shared_sm;
	o->regs_block = d->regs_block;
	o->regs_sm = d->regs_sm;
	o->l2 = d->l2;
	o->global_mem = (int64_t)d->total_mem;
	o->clock_mhz = d->clock_khz / 1000;
	o->mem_clock_mhz = d->mem_clock_khz / 1000;
	o->bus_width = d->bus_width;
}

/* Seconds of the fastest of PROBE_REPS launches of f (after one warm-up);
 * negative on a CUDA error. */
static double time_launch(cuda_dev *d, cu_function f, unsigned grid, unsigned block, void **args)
{
	cu_event ev[2] = {NULL, NULL};
	double best = -1;
	if (d->cu.EventCreate(&ev[0], 0) != CU_SUCCESS || d->cu.EventCreate(&ev[1], 0) != CU_SUCCESS)
		goto out;
	for (int r = 0; r <= PROBE_REPS; r++) {
		float ms = 0;
		if (d->cu.EventRecord(ev[0], NULL) != CU_SUCCESS ||
		    d->cu.LaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL) != CU_SUCCESS ||
		    d->cu.EventRecord(ev[1], NULL) != CU_SUCCESS || d->cu.EventSynchronize(ev[1]) != CU_SUCCESS ||
		    d->cu.EventElapsedTime(&ms, ev[0], ev[1]) != CU_SUCCESS) {
			best = -1;
			goto out;
		}
		if (r > 0 && ms > 0 && (best < 0 || ms * 1e-3 < best))
			best = ms * 1e-3;
	}
out:
	for (int i = 0; i < 2; i++)
		if (ev[i])
			d->cu.EventDestroy(ev[i]);
	return best;
}

/* Measure o's copy bandwidth and fp32 peak on d with module m. */
static void measure_rates(cuda_dev *d, cu_module m, unsigned what, ct_cuda_devinfo *o)
{
	cu_function copy = NULL, fma = NULL;
	if (d->cu.ModuleGetFunction(&copy, m, "ct_probe_copy") != CU_SUCCESS ||
	    d->cu.ModuleGetFunction(&fma, m, "ct_probe_fma") != CU_SUCCESS) {
		snprintf(o->note, sizeof o->note, "rates not measured: the probe's kernels are missing from the cubin");
		return;
	}
	unsigned blocks = (unsigned)(d->sms > 0 ? d->sms : 1) *
	                  (unsigned)(d->max_threads_sm >= 256 ? d->max_threads_sm / 256 : 1);
	if (what & CT_PROBE_MEASURE_BANDWIDTH) {
		/* arrays far beyond the L2 (at most an eighth of the memory each) */
		size_t bytes = (size_t)256 << 20;
		while (d->total_mem && bytes > d->total_mem / 8 && bytes > ((size_t)1 << 20))
			bytes /= 2;
		cu_ptr a = 0, b = 0;
		if (d->cu.MemAlloc(&a, bytes) == CU_SUCCESS && d->cu.MemAlloc(&b, bytes) == CU_SUCCESS &&
		    d->cu.MemsetD8(a, 1, bytes) == CU_SUCCESS) {
			long long n = (long long)(bytes / 16);
			void *args[] = {&a, &b, &n};
			double s = time_launch(d, copy, blocks, 256, args);
			if (s > 0)
				o->copy_gbs = 2.0 * (double)bytes / s * 1e-9;
		}
		if (a)
			d->cu.MemFree(a);
		if (b)
			d->cu.MemFree(b);
		if (o->copy_gbs <= 0)
			snprintf(o->note, sizeof o->note, "copy bandwidth not measured: a CUDA call failed");
	}
	if (what & CT_PROBE_MEASURE_FLOPS) {
		cu_ptr out = 0;
		if (d->cu.MemAlloc(&out, (size_t)blocks * 4) == CU_SUCCESS) {
			int iters = PROBE_ITERS;
			float sc = 0.999f;
			void *args[] = {&out, &iters, &sc};
			double s = time_launch(d, fma, blocks, 256, args);
			if (s > 0)
				o->gflops_f32 = 2.0 * PROBE_CHAINS * (double)PROBE_ITERS * blocks * 256.0 / s * 1e-9;
			d->cu.MemFree(out);
		}
		if (o->gflops_f32 <= 0)
			snprintf(o->note, sizeof o->note, "fp32 peak not measured: a CUDA call failed");
	}
}

/* Compile the probe's kernels for d with NVRTC and measure. */
static void measure(ct_ctx *ctx, cuda_dev *d, unsigned what, ct_cuda_devinfo *o)
{
	nvrtc_api nv;
	if (target_nvrtc_load(ctx, &nv) != CT_OK) {
		snprintf(o->note, sizeof o->note, "rates not measured: %.130s", ct_ctx_last_message(ctx));
		ct_ctx_clear_error(ctx);
		return;
	}
	char opt[64];
	snprintf(opt, sizeof opt, "--gpu-architecture=%s", d->arch);
	const char *opts[] = {opt};
	unsigned char *bin = NULL;
	size_t n = 0;
	if (target_nvrtc_compile(ctx, &nv, probe_src, "probe.cu", opts, 1, false, &bin, &n) != CT_OK) {
		snprintf(o->note, sizeof o->note, "rates not measured: %.130s", ct_ctx_last_message(ctx));
		ct_ctx_clear_error(ctx);
		target_nvrtc_close(&nv);
		return;
	}
	target_nvrtc_close(&nv);
	cu_module m = NULL;
	if (d->cu.ModuleLoadData(&m, bin) == CU_SUCCESS) {
		measure_rates(d, m, what, o);
		d->cu.ModuleUnload(m);
	} else {
		snprintf(o->note, sizeof o->note, "rates not measured: the driver refused NVRTC's cubin for %s", d->arch);
	}
	free(bin);
}

ct_status target_cuda_devices(ct_ctx *ctx, ct_probe_info *p, unsigned what)
{
	p->ncuda = 0;
	p->cuda_reason[0] = 0;
	int count = 0;
	for (int i = 0; i < CT_PROBE_MAX_CUDA; i++) {
		cuda_dev d;
		ct_status st = target_cuda_open_at(ctx, &d, i, &count);
		if (st) {
			if (i == 0 || count == 0)
				snprintf(p->cuda_reason, sizeof p->cuda_reason, "%s", ct_ctx_last_message(ctx));
			ct_ctx_clear_error(ctx); /* no CUDA is an answer here, not an error */
			if (count == 0 || i + 1 >= count)
				break;
			continue;
		}
		ct_cuda_devinfo *o = &p->cuda[p->ncuda++];
		describe(&d, o);
		if (what & (CT_PROBE_MEASURE_BANDWIDTH | CT_PROBE_MEASURE_FLOPS))
			measure(ctx, &d, what, o);
		target_cuda_close(&d);
		if (i + 1 >= count)
			break;
	}
	return CT_OK;
}
