/* target.c: the ctx's target (detected once, measured on demand), ct_probe_run, the device id, the target's vector width, and the probe's printers. */
#include "target/target.h"
#include "target/target_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the ctx's target */

static void probe_cleanup(ct_ctx *ctx)
{
	ct_free(ctx, ctx->target);
	ctx->target = NULL;
}

/* Detect afresh into the ctx's target. A re-probe overwrites the struct in
 * place, so that pointers other modules took from target_get stay valid. */
static ct_probe_info *probe_fresh(ct_ctx *ctx, unsigned flags)
{
	if (ctx->target) {
		target_detect(flags, ctx->target);
		return ctx->target;
	}
	ct_probe_info *p = ct_alloc(ctx, sizeof *p);
	if (!p)
		return NULL;
	target_detect(flags, p);
	if (!ct_ctx_on_free(ctx, probe_cleanup)) {
		ct_free(ctx, p);
		ct_error(ctx, CT_ERR_LIMIT, "too many context cleanups: cannot keep the probe");
		return NULL;
	}
	ctx->target = p;
	return p;
}

const ct_probe_info *target_get(ct_ctx *ctx)
{
	if (ctx->target)
		return ctx->target;
	return probe_fresh(ctx, 0);
}

ct_status ct_probe_run(ct_ctx *ctx, unsigned flags, ct_probe_info *out)
{
	if (!ctx)
		return CT_ERR_USAGE;
	ct_probe_info *p = ctx->target;
	if (!p || (flags & CT_PROBE_REFRESH))
		p = probe_fresh(ctx, flags);
	if (!p)
		return ct_ctx_last_status(ctx);
	unsigned missing = (flags & CT_PROBE_MEASURE) & ~p->measured;
	if (missing && target_measure(ctx, p, missing) != CT_OK)
		return ct_ctx_last_status(ctx);
	if ((flags & CT_PROBE_OPENCL) && !p->opencl_probed) {
		ct_status st = target_opencl_devices(ctx, p->opencl, CT_PROBE_MAX_OPENCL, &p->nopencl);
		if (st)
			return st;
		p->opencl_probed = 1;
	}
	/* listed once; again when rates are asked that a plain listing left out */
	bool cuda_rates = (flags & (CT_PROBE_MEASURE_BANDWIDTH | CT_PROBE_MEASURE_FLOPS)) && p->ncuda > 0 &&
	                  p->cuda[0].copy_gbs <= 0 && p->cuda[0].gflops_f32 <= 0 && !p->cuda[0].note[0];
	if ((flags & CT_PROBE_CUDA) && (!p->cuda_probed || cuda_rates)) {
		ct_status st = target_cuda_devices(ctx, p, flags & CT_PROBE_MEASURE);
		if (st)
			return st;
		p->cuda_probed = 1;
	}
	if (out)
		*out = *p;
	return CT_OK;
}

const char *ct_device_id(ct_ctx *ctx)
{
	if (!ctx)
		return NULL;
	const ct_probe_info *p = target_get(ctx);
	return p ? p->device_id : NULL;
}

int target_vector_bytes(ct_ctx *ctx)
{
	int64_t opt = ct_ctx_get_option(ctx, CT_OPT_VECTOR_BYTES);
	if (opt > 0)
		return (int)opt;
	const ct_probe_info *p = target_get(ctx);
	return p && p->vector_bytes > 0 ? p->vector_bytes : 16;
}

/* ------------------------------------------------------------ names */

const char *ct_probe_source_name(ct_probe_source s)
{
	switch (s) {
	case CT_SRC_DEFAULT:
		return "default";
	case CT_SRC_HWLOC:
		return "hwloc";
	case CT_SRC_SYSFS:
		return "sysfs";
	case CT_SRC_CPUID:
		return "cpuid";
	case CT_SRC_OS:
		return "os";
	case CT_SRC_MEASURED:
		return "measured";
	}
	return "unknown";
}

/* clang-format off */
static const struct {
	uint32_t bit;
	const char *name;
} isa_names[] = {
	{CT_ISA_SSE2, "sse2"},          {CT_ISA_SSE3, "sse3"},
	{CT_ISA_SSSE3, "ssse3"},        {CT_ISA_SSE41, "sse4.1"},
	{CT_ISA_SSE42, "sse4.2"},       {CT_ISA_AVX, "avx"},
	{CT_ISA_AVX2, "avx2"},          {CT_ISA_FMA, "fma"},
	{CT_ISA_F16C, "f16c"},          {CT_ISA_AVX512F, "avx512f"},
	{CT_ISA_AVX512CD, "avx512cd"},  {CT_ISA_AVX512DQ, "avx512dq"},
	{CT_ISA_AVX512BW, "avx512bw"},  {CT_ISA_AVX512VL, "avx512vl"},
	{CT_ISA_AVX512VNNI, "avx512vnni"}, {CT_ISA_AVX512BF16, "avx512bf16"},
	{CT_ISA_AVX512FP16, "avx512fp16"}, {CT_ISA_AVXVNNI, "avxvnni"},
	{CT_ISA_NEON, "neon"},
};

/* clang-format on */

const char *ct_isa_name(uint32_t bit)
{
	for (size_t i = 0; i < sizeof isa_names / sizeof isa_names[0]; i++)
		if (isa_names[i].bit == bit)
			return isa_names[i].name;
	return "";
}

/* ------------------------------------------------------------ printing */

static void put_bytes(ct_buf *b, int64_t v)
{
	if (v >= MIB && v % MIB == 0)
		ct_buf_printf(b, "%lld MiB", (long long)(v / MIB));
	else if (v >= MIB)
		ct_buf_printf(b, "%.1f MiB", (double)v / (double)MIB);
	else if (v >= KIB && v % KIB == 0)
		ct_buf_printf(b, "%lld KiB", (long long)(v / KIB));
	else
		ct_buf_printf(b, "%lld B", (long long)v);
}

/* One line per OpenCL device, when they were listed. */
static void print_opencl_text(ct_buf *b, const ct_probe_info *p)
{
	if (!p->opencl_probed)
		return;
	if (p->nopencl == 0)
		ct_buf_puts(b, "opencl      none (no OpenCL loader, platform or device)\n");
	for (int i = 0; i < p->nopencl; i++) {
		const ct_opencl_devinfo *o = &p->opencl[i];
		ct_buf_printf(b, "%s %s | %s | %s | %s | %d compute units, work-groups up to %lld, local ",
		              i == 0 ? "opencl     " : "           ", o->platform, o->name, o->type, o->version,
		              o->compute_units, (long long)o->max_work_group);
		put_bytes(b, o->local_mem);
		ct_buf_puts(b, ", global ");
		put_bytes(b, o->global_mem);
		ct_buf_puts(b, "\n");
	}
}

/* Lines per CUDA device, when they were listed. */
static void print_cuda_text(ct_buf *b, const ct_probe_info *p)
{
	if (!p->cuda_probed)
		return;
	if (p->ncuda == 0)
		ct_buf_printf(b, "cuda        none (%s)\n", p->cuda_reason[0] ? p->cuda_reason : "no device");
	for (int i = 0; i < p->ncuda; i++) {
		const ct_cuda_devinfo *c = &p->cuda[i];
		ct_buf_printf(b, "%s %d: %s, compute capability %d.%d (%s), %d SMs, driver %d.%d\n",
		              i == 0 ? "cuda       " : "           ", c->index, c->name, c->cc_major, c->cc_minor, c->arch,
		              c->sms, c->driver_version / 1000, c->driver_version % 1000 / 10);
		ct_buf_puts(b, "              shared ");
		put_bytes(b, c->shared_block);
		ct_buf_puts(b, " per block (");
		put_bytes(b, c->shared_block_optin);
		ct_buf_puts(b, " opt-in), ");
		put_bytes(b, c->shared_sm);
		ct_buf_printf(b, " per SM; registers %d per block, %d per SM; L2 ", c->regs_block, c->regs_sm);
		put_bytes(b, c->l2);
		ct_buf_puts(b, "; memory ");
		put_bytes(b, c->global_mem);
		ct_buf_printf(b, "; clocks %d MHz SM, %d MHz memory, %d-bit bus\n", c->clock_mhz, c->mem_clock_mhz,
		              c->bus_width);
		if (c->copy_gbs > 0 || c->gflops_f32 > 0)
			ct_buf_printf(b, "              copy %.1f GB/s, peak f32 %.1f GFLOP/s  [measured]\n", c->copy_gbs,
			              c->gflops_f32);
		if (c->note[0])
			ct_buf_printf(b, "              %s\n", c->note);
	}
}

static void print_text(ct_buf *b, const ct_probe_info *p)
{
	ct_buf_printf(b, "device      %s\n", p->device_id);
	ct_buf_printf(b, "cpu         %s, %s", p->vendor, p->model);
	if (p->family)
		ct_buf_printf(b, " (family %d, model %d, stepping %d)", p->family, p->model_number,
		              p->stepping);
	ct_buf_printf(b, "  [%s]\n", ct_probe_source_name(p->vendor_source));
	ct_buf_printf(b, "arch        %s\n", p->arch);
	ct_buf_printf(
	    b, "cores       %d physical, %d hardware threads, %d usable by this process  [%s]\n",
	    p->cores, p->hw_threads, p->cpus_allowed, ct_probe_source_name(p->cores_source));
	ct_buf_puts(b, "isa        ");
	for (size_t i = 0; i < sizeof isa_names / sizeof isa_names[0]; i++)
		if (p->isa & isa_names[i].bit)
			ct_buf_printf(b, " %s", isa_names[i].name);
	if (!p->isa)
		ct_buf_puts(b, " (scalar)");
	ct_buf_printf(b, "  [%s]\n", ct_probe_source_name(p->isa_source));
	ct_buf_printf(
	    b, "vector      %d bytes, %d registers, %d FMA/cycle, FMA latency %d cycles  [%s]\n",
	    p->vector_bytes, p->vector_registers, p->fma_units, p->fma_latency,
	    ct_probe_source_name(p->fma_source));
	for (int i = 0; i < p->ncaches; i++) {
		const ct_cache_level *l = &p->caches[i];
		ct_buf_printf(b, "%s L%d ", i == 0 ? "caches     " : "           ", l->level);
		put_bytes(b, l->size);
		if (l->reported_size > 0) {
			ct_buf_puts(b, " usable (");
			put_bytes(b, l->reported_size);
			ct_buf_puts(b, " reported)");
		}
		ct_buf_printf(b, ", line %d, ", l->line);
		if (l->ways > 0)
			ct_buf_printf(b, "%d-way", l->ways);
		else
			ct_buf_puts(b, "ways unknown");
		if (l->shared_by > 0)
			ct_buf_printf(b, ", shared by %d (%s)", l->shared_by,
			              target_level_private(p, i) ? "private to a core" : "shared by cores");
		if (l->instances > 0)
			ct_buf_printf(b, ", %d in all", l->instances);
		if (l->latency_ns > 0)
			ct_buf_printf(b, ", %.1f ns", l->latency_ns);
		ct_buf_printf(b, "  [%s]\n", ct_probe_source_name(l->source));
	}
	if (p->measured & CT_PROBE_MEASURE_FLOPS) {
		ct_buf_printf(
		    b,
		    "peak f32    %.1f GFLOP/s per core, %.1f GFLOP/s on %d threads  [measured]\n",
		    p->gflops_f32_core, p->gflops_f32_all, p->threads_measured);
		ct_buf_printf(
		    b,
		    "peak f64    %.1f GFLOP/s per core, %.1f GFLOP/s on %d threads  [measured]\n",
		    p->gflops_f64_core, p->gflops_f64_all, p->threads_measured);
		if (p->ghz > 0)
			ct_buf_printf(b, "clock       %.2f GHz  [measured]\n", p->ghz);
	}
	if (p->measured & CT_PROBE_MEASURE_BANDWIDTH) {
		ct_buf_printf(b, "copy        %.1f GB/s on 1 thread, %.1f GB/s on %d threads (",
		              p->copy_gbs_core, p->copy_gbs_all,
		              p->threads_measured > 0 ? p->threads_measured : p->cpus_allowed);
		put_bytes(b, p->copy_bytes);
		ct_buf_puts(b, " arrays)  [measured]\n");
	}
	if (p->measured & CT_PROBE_MEASURE_LATENCY)
		ct_buf_printf(b, "memory      %.1f ns latency  [measured]\n", p->mem_latency_ns);
	print_opencl_text(b, p);
	print_cuda_text(b, p);
	if (!p->measured)
		ct_buf_puts(b, "peak        not measured\n");
	else
		ct_buf_printf(b, "measured in %.2f s\n", p->measure_seconds);
}

/*
 * The JSON form is built with jansson and dumped on one line with ASCII
 * escapes, keys in insertion order. Reals keep the form the probe has always
 * printed (%.6g: "3.65219", "3" for a whole number), which jansson's own
 * real printer would write as "3.0".
 */

/* v as %.6g: an integer when that form is a whole number, else a real of
 * 6 significant digits. */
static json_t *jnum(double v)
{
	char t[64];
	snprintf(t, sizeof t, "%.6g", v);
	if (!strpbrk(t, ".eEni"))
		return json_integer(strtoll(t, NULL, 10));
	return json_real(strtod(t, NULL));
}

/* s as a JSON string; bytes that are not UTF-8 (a driver's Latin-1 name)
 * are taken as U+0080..U+00FF, as the probe's JSON has always read them. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	size_t n = strlen(s);
	char *u = malloc(2 * n + 1), *w = u;
	if (!u)
		return NULL;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x80) {
			*w++ = (char)*c;
		} else {
			*w++ = (char)(0xc0 | (*c >> 6));
			*w++ = (char)(0x80 | (*c & 0x3f));
		}
	*w = 0;
	j = json_string(u);
	free(u);
	return j;
}

/* Set key of o to v (taken); false when v or the set failed (out of memory). */
static bool jset(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

/* The OpenCL devices as an array of objects; NULL when out of memory. */
static json_t *opencl_json(const ct_probe_info *p)
{
	json_t *a = json_array();
	for (int i = 0; a && i < p->nopencl; i++) {
		const ct_opencl_devinfo *o = &p->opencl[i];
		json_t *d = json_object();
		bool ok = d && jset(d, "platform", jstr(o->platform)) && jset(d, "name", jstr(o->name)) &&
		          jset(d, "type", jstr(o->type)) && jset(d, "version", jstr(o->version)) &&
		          jset(d, "driver", jstr(o->driver)) &&
		          jset(d, "compute_units", json_integer(o->compute_units)) &&
		          jset(d, "max_work_group", json_integer(o->max_work_group)) &&
		          jset(d, "local_mem", json_integer(o->local_mem)) &&
		          jset(d, "global_mem", json_integer(o->global_mem));
		if (!ok || json_array_append_new(a, d) != 0) {
			json_decref(ok ? NULL : d);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The CUDA devices: {"devices": [...]} or {"devices": [], "reason": ...};
 * NULL when out of memory. */
static json_t *cuda_json(const ct_probe_info *p)
{
	json_t *o = json_object(), *a = json_array();
	bool ok = o && a;
	for (int i = 0; ok && i < p->ncuda; i++) {
		const ct_cuda_devinfo *c = &p->cuda[i];
		json_t *d = json_object();
		ok = d && jset(d, "index", json_integer(c->index)) && jset(d, "name", jstr(c->name)) &&
		     jset(d, "compute_capability", json_sprintf("%d.%d", c->cc_major, c->cc_minor)) &&
		     jset(d, "arch", jstr(c->arch)) && jset(d, "driver_version", json_integer(c->driver_version)) &&
		     jset(d, "sms", json_integer(c->sms)) && jset(d, "warp", json_integer(c->warp)) &&
		     jset(d, "max_threads_block", json_integer(c->max_threads_block)) &&
		     jset(d, "max_threads_sm", json_integer(c->max_threads_sm)) &&
		     jset(d, "shared_block", json_integer(c->shared_block)) &&
		     jset(d, "shared_block_optin", json_integer(c->shared_block_optin)) &&
		     jset(d, "shared_sm", json_integer(c->shared_sm)) && jset(d, "regs_block", json_integer(c->regs_block)) &&
		     jset(d, "regs_sm", json_integer(c->regs_sm)) && jset(d, "l2", json_integer(c->l2)) &&
		     jset(d, "global_mem", json_integer(c->global_mem)) && jset(d, "clock_mhz", json_integer(c->clock_mhz)) &&
		     jset(d, "mem_clock_mhz", json_integer(c->mem_clock_mhz)) &&
		     jset(d, "bus_width", json_integer(c->bus_width)) &&
		     (c->copy_gbs <= 0 || jset(d, "copy_gbs", jnum(c->copy_gbs))) &&
		     (c->gflops_f32 <= 0 || jset(d, "gflops_f32", jnum(c->gflops_f32))) &&
		     (!c->note[0] || jset(d, "note", jstr(c->note)));
		if (!ok || json_array_append_new(a, d) != 0) {
			json_decref(ok ? NULL : d);
			ok = false;
		}
	}
	if (ok) {
		ok = jset(o, "devices", a);
		a = NULL;
	}
	ok = ok && (p->ncuda > 0 || jset(o, "reason", jstr(p->cuda_reason)));
	json_decref(a);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int target_level_private(const ct_probe_info *p, int i)
{
	const ct_cache_level *l = &p->caches[i];
	if (l->shared_by <= 0)
		return -1;
	int per_core = p->cores > 0 && p->hw_threads >= p->cores ? p->hw_threads / p->cores : 1;
	return l->shared_by <= per_core;
}

/* The cache levels as an array of objects; NULL when out of memory. */
static json_t *caches_json(const ct_probe_info *p)
{
	json_t *a = json_array();
	for (int i = 0; a && i < p->ncaches; i++) {
		const ct_cache_level *l = &p->caches[i];
		json_t *c = json_object();
		bool ok = c && jset(c, "level", json_integer(l->level)) && jset(c, "size", json_integer(l->size)) &&
		          jset(c, "line", json_integer(l->line)) && jset(c, "ways", json_integer(l->ways)) &&
		          jset(c, "shared_by", json_integer(l->shared_by)) &&
		          (target_level_private(p, i) < 0 ||
		           jset(c, "private", json_boolean(target_level_private(p, i) > 0))) &&
		          jset(c, "instances", json_integer(l->instances)) &&
		          (l->latency_ns <= 0 || jset(c, "latency_ns", jnum(l->latency_ns))) &&
		          (l->reported_size <= 0 || jset(c, "reported_size", json_integer(l->reported_size))) &&
		          jset(c, "source", jstr(ct_probe_source_name(l->source)));
		if (!ok || json_array_append_new(a, c) != 0) {
			json_decref(ok ? NULL : c);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The measured part: null when nothing was measured; NULL when out of memory. */
static json_t *measured_json(const ct_probe_info *p)
{
	if (!p->measured)
		return json_null();
	json_t *m = json_object();
	bool ok = m != NULL;
	if (ok && (p->measured & CT_PROBE_MEASURE_FLOPS))
		ok = jset(m, "ghz", jnum(p->ghz)) && jset(m, "gflops_f32_core", jnum(p->gflops_f32_core)) &&
		     jset(m, "gflops_f64_core", jnum(p->gflops_f64_core)) &&
		     jset(m, "gflops_f32_all", jnum(p->gflops_f32_all)) &&
		     jset(m, "gflops_f64_all", jnum(p->gflops_f64_all)) &&
		     jset(m, "threads", json_integer(p->threads_measured));
	if (ok && (p->measured & CT_PROBE_MEASURE_BANDWIDTH))
		ok = jset(m, "copy_gbs_core", jnum(p->copy_gbs_core)) && jset(m, "copy_gbs_all", jnum(p->copy_gbs_all)) &&
		     jset(m, "copy_bytes", json_integer(p->copy_bytes));
	if (ok && (p->measured & CT_PROBE_MEASURE_LATENCY))
		ok = jset(m, "memory_latency_ns", jnum(p->mem_latency_ns));
	ok = ok && jset(m, "seconds", jnum(p->measure_seconds));
	if (!ok) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/* The probe as one JSON object; NULL when out of memory. */
static json_t *probe_json(const ct_probe_info *p)
{
	json_t *o = json_object(), *isa = json_array();
	bool ok = o && isa;
	for (size_t i = 0; ok && i < sizeof isa_names / sizeof isa_names[0]; i++)
		if (p->isa & isa_names[i].bit)
			ok = json_array_append_new(isa, json_string(isa_names[i].name)) == 0;
	ok = ok && jset(o, "device_id", jstr(p->device_id)) && jset(o, "identity", jstr(p->identity)) &&
	     jset(o, "vendor", jstr(p->vendor)) && jset(o, "model", jstr(p->model)) && jset(o, "arch", jstr(p->arch)) &&
	     jset(o, "family", json_integer(p->family)) && jset(o, "model_number", json_integer(p->model_number)) &&
	     jset(o, "stepping", json_integer(p->stepping)) &&
	     jset(o, "vendor_source", jstr(ct_probe_source_name(p->vendor_source))) &&
	     jset(o, "cores", json_integer(p->cores)) && jset(o, "hw_threads", json_integer(p->hw_threads)) &&
	     jset(o, "cpus_allowed", json_integer(p->cpus_allowed)) &&
	     jset(o, "cores_source", jstr(ct_probe_source_name(p->cores_source)));
	if (ok) {
		ok = jset(o, "isa", isa);
		isa = NULL;
	}
	ok = ok && jset(o, "isa_source", jstr(ct_probe_source_name(p->isa_source))) &&
	     jset(o, "vector_bytes", json_integer(p->vector_bytes)) &&
	     jset(o, "vector_registers", json_integer(p->vector_registers)) &&
	     jset(o, "fma_units", json_integer(p->fma_units)) && jset(o, "fma_latency", json_integer(p->fma_latency)) &&
	     jset(o, "fma_source", jstr(ct_probe_source_name(p->fma_source))) && jset(o, "caches", caches_json(p)) &&
	     (!p->opencl_probed || jset(o, "opencl", opencl_json(p))) &&
	     (!p->cuda_probed || jset(o, "cuda", cuda_json(p))) && jset(o, "measured", measured_json(p));
	json_decref(isa);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

ct_status ct_probe_print(ct_ctx *ctx, ct_format format, FILE *out)
{
	if (!ctx || !out)
		return ctx ? ct_error(ctx, CT_ERR_USAGE, "ct_probe_print: no output stream")
		           : CT_ERR_USAGE;
	const ct_probe_info *p = target_get(ctx);
	if (!p)
		return ct_ctx_last_status(ctx);
	char *s = NULL;
	if (format == CT_FORMAT_JSON) {
		json_t *j = probe_json(p);
		char *d = j ? json_dumps(j, JSON_ENSURE_ASCII | JSON_REAL_PRECISION(6)) : NULL;
		json_decref(j);
		s = d ? malloc(strlen(d) + 2) : NULL;
		if (s)
			snprintf(s, strlen(d) + 2, "%s\n", d);
		free(d);
	} else {
		ct_buf b;
		ct_buf_init(&b);
		print_text(&b, p);
		s = ct_buf_take(&b);
	}
	if (!s)
		return ct_error(ctx, CT_ERR_NOMEM, "out of memory printing the probe");
	bool ok = fputs(s, out) >= 0 && fflush(out) == 0;
	free(s);
	return ok ? CT_OK : ct_error(ctx, CT_ERR_IO, "cannot write the probe: %s", strerror(errno));
}
