/* targets.h: the engine column of the targets' table: how a target's kernels get their source, run and package. */
#ifndef CT_ENGINE_TARGETS_H
#define CT_ENGINE_TARGETS_H

#include "engine/engine.h"
#include "ir/targets.h"

struct ocl_launch;

/* The engine's part of a target's row (the facts are ir_target_info, the
 * emitter gen_target). The signatures are the engines' own entry points. */
typedef struct eng_target {
	ir_target id;
	/* k lowered and written in the target's language, its launch in *L
	 * (GPU targets; L may be NULL): host_kernel_source, ocl_kernel_source,
	 * cuda_kernel_source */
	char *(*source)(ct_kernel *k, size_t *len, struct ocl_launch *L);
	/* compile (or fetch), load, run, time and verify (ct_kernel_run with
	 * the native engine): run_native, run_opencl, run_cuda */
	ct_status (*run)(ct_kernel *k, const ct_run_options *o, ct_run_result *r);
	/* `cachet build`'s package in folder dir (made and checked by
	 * ct_kernel_build): aot_host_package, gen_opencl_package, gen_cuda_package */
	ct_status (*package)(ct_kernel *k, const char *dir);
	/* CT_OK when this process can run the target's kernels now (the
	 * tuner asks before its first candidate, so that a missing device is
	 * one clear error, not one per candidate); NULL: nothing to ask
	 * (the host; OpenCL reports a missing device on the first run) */
	ct_status (*ready)(ct_ctx *ctx);
} eng_target;

/* The engine row of target t (the host's for a value no row has). */
const eng_target *eng_target_row(ir_target t);
/* The engine row of the target k runs on (the host's without a plan). */
const eng_target *eng_kernel_target(const ct_kernel *k);

/* k lowered and written by target's generator (gen_target_row: gen_c,
 * gen_opencl, gen_cuda), its launch in *L for GPU targets (L may be NULL);
 * malloc'd, NULL with the ctx's error: the one body of the three source
 * functions below and in ocl.c, cuda.c. */
char *eng_lowered_source(ct_kernel *k, ir_target target, size_t *len, struct ocl_launch *L);
/* Host C of k (ct_kernel_emit(k, "host")): lowered and printed by gen_c; L is not used. */
char *host_kernel_source(ct_kernel *k, size_t *len, struct ocl_launch *L);
/* The package of a host kernel (aot.c): DIR/NAME.c, NAME.h, libNAME.a, libNAME.so. */
ct_status aot_host_package(ct_kernel *k, const char *dir);

/* CT_OK when k's target runs as a host C entry (ir_target_info.native_entry);
 * else CT_ERR_UNSUPPORTED with "kernel 'K' targets T: WHAT gives host code only
 * (use ct_kernel_run or cachet build)" on k's ctx: a GPU kernel's host C is
 * never run in its place. */
ct_status eng_native_only(ct_kernel *k, const char *what);

#endif
