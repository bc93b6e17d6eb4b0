/* run.c: run a kernel on deterministic data, time it and verify it against the reference interpreter. */
#include "engine/engine.h"
#include "engine/targets.h"

#include "ir/looptree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ct_run_options_init(ct_run_options *o)
{
	memset(o, 0, sizeof *o);
	o->engine = CT_ENGINE_NATIVE;
	o->repeat = 1;
	o->verify = 1;
	o->checked = 0;
}

double ct_dtype_tolerance(ct_dtype t)
{
	switch (t) {
	case CT_F32: return 1e-3;
	case CT_F64: return 1e-10;
	case CT_I32:
	case CT_I64: return 0;
	}
	return 0;
}

void run_buffers_free(run_buffers *b)
{
	if (!b->data)
		return;
	for (int i = 0; i < b->n; i++)
		free(b->data[i]);
	free(b->data);
	free(b->bytes);
	b->data = NULL;
	b->bytes = NULL;
	b->n = 0;
}

ct_status run_check_size(ct_kernel *k)
{
	/* a run holds up to three copies of the arrays (inputs, result,
	 * reference): each copy may take a quarter of the memory */
	int64_t total = 0, max_bytes = ct_mem_quarter();
	for (int i = 0; i < k->narrays; i++) {
		int64_t n = ct_kernel_array_elements(k, i), bytes;
		if (n < 0)
			return ir_array_size_error(k, i);
		if (!ct_mul_ok(n, (int64_t)ct_dtype_size(k->arrays[i].type), &bytes) ||
		    !ct_add_ok(total, bytes, &total) || total > max_bytes)
			return ct_error(k->ctx, CT_ERR_LIMIT,
					"the arrays need more than %lld bytes (a quarter of this machine's memory)",
					(long long)max_bytes);
	}
	return CT_OK;
}

ct_status run_buffers_alloc(ct_kernel *k, run_buffers *b, bool fill)
{
	ct_ctx *ctx = k->ctx;
	memset(b, 0, sizeof *b);
	/* the whole size is checked before the first byte is allocated: a
	 * refusal is instant, not after gigabytes were filled */
	ct_status st = run_check_size(k);
	if (st)
		return st;
	b->n = k->narrays;
	b->data = calloc((size_t)b->n + 1, sizeof *b->data);
	b->bytes = calloc((size_t)b->n + 1, sizeof *b->bytes);
	if (!b->data || !b->bytes) {
		run_buffers_free(b);
		return ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < b->n; i++) {
		int64_t n = ct_kernel_array_elements(k, i);
		int64_t bytes = n * (int64_t)ct_dtype_size(k->arrays[i].type);
		b->bytes[i] = bytes;
		/* 64-byte alignment (a cache line, an AVX-512 vector); never size 0 */
		size_t sz = ((size_t)bytes + 63) & ~(size_t)63;
		b->data[i] = aligned_alloc(64, sz ? sz : 64);
		if (!b->data[i]) {
			run_buffers_free(b);
			return ct_error(ctx, CT_ERR_NOMEM, "cannot allocate %lld bytes for array '%s'",
					(long long)bytes, k->arrays[i].name);
		}
		/* a temp starts at zero, as the generated code's and the interpreter's own */
		if (fill && k->arrays[i].role != CT_TEMP)
			ct_fill_random(b->data[i], k->arrays[i].type, n, (uint64_t)ctx->seed, (uint64_t)i);
		else
			memset(b->data[i], 0, (size_t)bytes);
	}
	return CT_OK;
}

void run_buffers_copy(run_buffers *dst, const run_buffers *src)
{
	for (int i = 0; i < src->n; i++)
		memcpy(dst->data[i], src->data[i], (size_t)src->bytes[i]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double run_median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* The tolerance of floating-point array a of k: its type's, or f32's when
 * the kernel holds any f32 array (an f64 output computed through f32
 * values, a temp say, only carries f32's accuracy: the compiled code may
 * round those values differently, contracting a multiply-add into an
 * fma). Integer arrays stay exact. */
static double array_tolerance(const ct_kernel *k, int a)
{
	double tol = ct_dtype_tolerance(k->arrays[a].type);
	if (k->arrays[a].type != CT_F64)
		return tol;
	for (int i = 0; i < k->narrays; i++)
		if (k->arrays[i].type == CT_F32 && ct_dtype_tolerance(CT_F32) > tol)
			tol = ct_dtype_tolerance(CT_F32);
	return tol;
}

ct_status run_verify(ct_kernel *k, const run_buffers *got, const run_buffers *want, ct_run_result *r)
{
	r->verified = 1;
	r->max_rel_error = 0;
	r->mismatch_array = "";
	for (int i = 0; i < k->narrays; i++) {
		ct_role role = k->arrays[i].role;
		if (role != CT_OUTPUT && role != CT_INOUT)
			continue;
		int64_t n = ct_kernel_array_elements(k, i);
		double e = ct_max_rel_error(got->data[i], want->data[i], k->arrays[i].type, n);
		if (e > r->max_rel_error || isnan(e))
			r->max_rel_error = e;
		if (!(e <= array_tolerance(k, i)) && r->verified) {
			r->verified = 0;
			r->mismatch_array = k->arrays[i].name;
		}
	}
	if (!r->verified)
		return ct_error(k->ctx, CT_ERR_VERIFY,
				"verification failed: array '%s' differs from the reference (max relative error %.3g)",
				r->mismatch_array, r->max_rel_error);
	return CT_OK;
}

/* Whether kernel ref (ct_run_options.reference) has k's arrays, in order: the same
 * names, types and elements at the current params (a temp's elements may differ: the
 * reference allocates its own, run_reference), so that its interpreter run on k's
 * buffers computes what k must; k may have more arrays after them, temps only (the
 * copies auto reads a matrix through, a temp auto expanded). CT_ERR_USAGE (with the
 * first difference) if not. */
static ct_status same_arrays(ct_kernel *k, ct_kernel *ref)
{
	bool extra_temps = ref->narrays < k->narrays;
	for (int i = ref->narrays; i < k->narrays; i++)
		extra_temps = extra_temps && k->arrays[i].role == CT_TEMP;
	if (ref->narrays != k->narrays && !extra_temps)
		return ct_error(k->ctx, CT_ERR_USAGE,
		                "the reference kernel '%s' has %d arrays, the run kernel '%s' %d (more only by temps after them)",
		                ref->name, ref->narrays, k->name, k->narrays);
	for (int i = 0; i < ref->narrays; i++) {
		const ir_array *a = &k->arrays[i], *b = &ref->arrays[i];
		bool temps = a->role == CT_TEMP && b->role == CT_TEMP;
		if (strcmp(a->name, b->name) != 0 || a->type != b->type ||
		    (!temps && ct_kernel_array_elements(k, i) != ct_kernel_array_elements(ref, i)))
			return ct_error(k->ctx, CT_ERR_USAGE,
			                "the reference kernel's array %d ('%s') is not the run kernel's ('%s'): name, "
			                "type or elements differ",
			                i + 1, b->name, a->name);
	}
	return CT_OK;
}

/* run_measure and run_measure_timed: exactly one of once and timed. */
static ct_status measure(ct_kernel *k, const ct_run_options *o, run_once_fn once, run_timed_fn timed, void *ud,
                         ct_run_result *r)
{
	ct_ctx *ctx = k->ctx;
	run_buffers init, work, want;
	memset(&init, 0, sizeof init);
	memset(&work, 0, sizeof work);
	memset(&want, 0, sizeof want);
	double *times = calloc((size_t)o->repeat, sizeof *times);
	ct_status st = times ? run_buffers_alloc(k, &init, true) : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st)
		st = run_buffers_alloc(k, &work, false);
	/* every timed run starts from the same inputs; the copy is not timed */
	for (int i = 0; i < o->repeat && !st; i++) {
		run_buffers_copy(&work, &init);
		double t0 = ct_now();
		if (timed) {
			st = timed(ud, (void *const *)work.data, &times[i]);
		} else {
			st = once(ud, (void *const *)work.data);
			times[i] = ct_now() - t0;
		}
	}
	if (!st) {
		r->seconds = run_median(times, o->repeat);
		double fl = ct_kernel_flops(k);
		r->gflops = r->seconds > 0 && fl > 0 ? fl / r->seconds * 1e-9 : 0;
	}
	if (!st && o->verify) {
		ct_kernel *ref = o->reference ? o->reference : k;
		st = ref == k ? CT_OK : same_arrays(k, ref);
		if (!st)
			st = run_buffers_alloc(k, &want, false);
		if (!st)
			st = run_reference(ref, &init, &want);
		if (!st)
			st = run_verify(k, &work, &want, r);
	}
	run_buffers_free(&init);
	run_buffers_free(&work);
	run_buffers_free(&want);
	free(times);
	return st;
}

ct_status run_measure(ct_kernel *k, const ct_run_options *o, run_once_fn once, void *ud, ct_run_result *r)
{
	return measure(k, o, once, NULL, ud, r);
}

ct_status run_measure_timed(ct_kernel *k, const ct_run_options *o, run_timed_fn once, void *ud, ct_run_result *r)
{
	return measure(k, o, NULL, once, ud, r);
}

/* One interpreter run of a scheduled tree (run_once_fn). */
static ct_status interp_once(void *ud, void *const *buffers)
{
	return ct_interp_run(ud, buffers);
}

ct_status run_reference(ct_kernel *k, const run_buffers *init, run_buffers *want)
{
	ct_looptree *ref = ct_kernel_lower(k, 0);
	if (!ref)
		return ct_ctx_last_status(k->ctx);
	run_buffers_copy(want, init);
	/* the temps: the interpreter's own, zeroed, of k's shape (the run kernel's
	 * buffer of a temp may have another: auto expands temps) */
	void **data = calloc((size_t)want->n + 1, sizeof *data);
	if (!data) {
		ct_looptree_free(ref);
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < want->n; i++)
		data[i] = i < k->narrays && k->arrays[i].role == CT_TEMP ? NULL : want->data[i];
	k->ctx->progress_phase = "verify"; /* the interpreter reports a long run */
	ct_status st = ct_interp_run(ref, (void *const *)data);
	free(data);
	k->ctx->progress_phase = NULL;
	ct_looptree_free(ref);
	return st;
}

ct_status ct_kernel_run(ct_kernel *k, const ct_run_options *o, ct_run_result *r)
{
	if (!k || !o || !r)
		return CT_ERR_USAGE;
	ct_ctx *ctx = k->ctx;
	memset(r, 0, sizeof *r);
	/* the engine the run goes to, also when it fails before starting: a
	 * device target's engine is named after the target ("opencl", "cuda") */
	const ir_target_info *row = ir_kernel_target(k);
	r->engine = o->engine == CT_ENGINE_INTERP ? "interp" : row->native_entry ? "native" : row->name;
	r->code_cache = "none";
	r->verified = -1;
	r->mismatch_array = "";
	r->threads = o->threads > 0 ? o->threads : (int)ctx->threads;
	if (o->repeat < 1 || o->repeat > 1000000)
		return ct_error(ctx, CT_ERR_USAGE, "repeat must be in 1..1000000");
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	if (ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
	if (o->engine == CT_ENGINE_NATIVE && !row->checked && o->checked)
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
				"checked runs (--checked) cover host kernels only, not plan(target=%s)", row->name);
	/* refused before any compile or allocation */
	ct_status sz = run_check_size(k);
	if (sz)
		return sz;
	if (o->engine == CT_ENGINE_NATIVE) /* the target's engine: run_native, run_opencl, run_cuda */
		return eng_target_row(row->id)->run(k, o, r);

	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(ctx);
	r->threads = 1;
	ct_status st = run_measure(k, o, interp_once, t, r);
	ct_looptree_free(t);
	return st;
}
