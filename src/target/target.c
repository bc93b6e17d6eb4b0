/* target.c: the ctx's target (detected once, measured on demand), ct_probe_run, the device id, the target's vector width, and the probe's printers. */
#include "target/target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB ((int64_t)1024)
#define MIB (KIB * 1024)

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
		ct_buf_printf(b, ", line %d, ", l->line);
		if (l->ways > 0)
			ct_buf_printf(b, "%d-way", l->ways);
		else
			ct_buf_puts(b, "ways unknown");
		if (l->shared_by > 0)
			ct_buf_printf(b, ", shared by %d", l->shared_by);
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
	if (!p->measured)
		ct_buf_puts(b, "peak        not measured\n");
	else
		ct_buf_printf(b, "measured in %.2f s\n", p->measure_seconds);
}

static void json_num(ct_buf *b, const char *key, double v, bool comma)
{
	ct_buf_printf(b, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
}

/* ", "opencl": [...]" when the devices were listed. */
static void print_opencl_json(ct_buf *b, const ct_probe_info *p)
{
	if (!p->opencl_probed)
		return;
	ct_buf_puts(b, ", \"opencl\": [");
	for (int i = 0; i < p->nopencl; i++) {
		const ct_opencl_devinfo *o = &p->opencl[i];
		ct_buf_puts(b, i ? ", {\"platform\": " : "{\"platform\": ");
		ct_buf_json_str(b, o->platform);
		ct_buf_puts(b, ", \"name\": ");
		ct_buf_json_str(b, o->name);
		ct_buf_printf(b, ", \"type\": \"%s\", \"version\": ", o->type);
		ct_buf_json_str(b, o->version);
		ct_buf_puts(b, ", \"driver\": ");
		ct_buf_json_str(b, o->driver);
		ct_buf_printf(b,
		              ", \"compute_units\": %d, \"max_work_group\": %lld, \"local_mem\": %lld, "
		              "\"global_mem\": %lld}",
		              o->compute_units, (long long)o->max_work_group, (long long)o->local_mem,
		              (long long)o->global_mem);
	}
	ct_buf_puts(b, "]");
}

static void print_json(ct_buf *b, const ct_probe_info *p)
{
	ct_buf_puts(b, "{\"device_id\": ");
	ct_buf_json_str(b, p->device_id);
	ct_buf_puts(b, ", \"identity\": ");
	ct_buf_json_str(b, p->identity);
	ct_buf_puts(b, ", \"vendor\": ");
	ct_buf_json_str(b, p->vendor);
	ct_buf_puts(b, ", \"model\": ");
	ct_buf_json_str(b, p->model);
	ct_buf_puts(b, ", \"arch\": ");
	ct_buf_json_str(b, p->arch);
	ct_buf_printf(b, ", \"family\": %d, \"model_number\": %d, \"stepping\": %d", p->family,
	              p->model_number, p->stepping);
	ct_buf_printf(b, ", \"vendor_source\": \"%s\"", ct_probe_source_name(p->vendor_source));
	ct_buf_printf(
	    b,
	    ", \"cores\": %d, \"hw_threads\": %d, \"cpus_allowed\": %d, \"cores_source\": \"%s\"",
	    p->cores, p->hw_threads, p->cpus_allowed, ct_probe_source_name(p->cores_source));
	ct_buf_puts(b, ", \"isa\": [");
	bool first = true;
	for (size_t i = 0; i < sizeof isa_names / sizeof isa_names[0]; i++)
		if (p->isa & isa_names[i].bit) {
			ct_buf_printf(b, "%s\"%s\"", first ? "" : ", ", isa_names[i].name);
			first = false;
		}
	ct_buf_printf(b, "], \"isa_source\": \"%s\"", ct_probe_source_name(p->isa_source));
	ct_buf_printf(b,
	              ", \"vector_bytes\": %d, \"vector_registers\": %d, \"fma_units\": %d, "
	              "\"fma_latency\": %d, \"fma_source\": \"%s\"",
	              p->vector_bytes, p->vector_registers, p->fma_units, p->fma_latency,
	              ct_probe_source_name(p->fma_source));
	ct_buf_puts(b, ", \"caches\": [");
	for (int i = 0; i < p->ncaches; i++) {
		const ct_cache_level *l = &p->caches[i];
		ct_buf_printf(b,
		              "%s{\"level\": %d, \"size\": %lld, \"line\": %d, \"ways\": %d, "
		              "\"shared_by\": %d, \"instances\": %d, ",
		              i ? ", " : "", l->level, (long long)l->size, l->line, l->ways,
		              l->shared_by, l->instances);
		if (l->latency_ns > 0)
			json_num(b, "latency_ns", l->latency_ns, true);
		ct_buf_printf(b, "\"source\": \"%s\"}", ct_probe_source_name(l->source));
	}
	ct_buf_puts(b, "]");
	print_opencl_json(b, p);
	ct_buf_puts(b, ", \"measured\": ");
	if (!p->measured) {
		ct_buf_puts(b, "null}");
		return;
	}
	ct_buf_puts(b, "{");
	bool any = false;
	if (p->measured & CT_PROBE_MEASURE_FLOPS) {
		json_num(b, "ghz", p->ghz, true);
		json_num(b, "gflops_f32_core", p->gflops_f32_core, true);
		json_num(b, "gflops_f64_core", p->gflops_f64_core, true);
		json_num(b, "gflops_f32_all", p->gflops_f32_all, true);
		json_num(b, "gflops_f64_all", p->gflops_f64_all, true);
		ct_buf_printf(b, "\"threads\": %d", p->threads_measured);
		any = true;
	}
	if (p->measured & CT_PROBE_MEASURE_BANDWIDTH) {
		ct_buf_puts(b, any ? ", " : "");
		json_num(b, "copy_gbs_core", p->copy_gbs_core, true);
		json_num(b, "copy_gbs_all", p->copy_gbs_all, true);
		ct_buf_printf(b, "\"copy_bytes\": %lld", (long long)p->copy_bytes);
		any = true;
	}
	if (p->measured & CT_PROBE_MEASURE_LATENCY) {
		ct_buf_puts(b, any ? ", " : "");
		json_num(b, "memory_latency_ns", p->mem_latency_ns, false);
		any = true;
	}
	ct_buf_puts(b, any ? ", " : "");
	json_num(b, "seconds", p->measure_seconds, false);
	ct_buf_puts(b, "}}");
}

ct_status ct_probe_print(ct_ctx *ctx, int json, FILE *out)
{
	if (!ctx || !out)
		return ctx ? ct_error(ctx, CT_ERR_USAGE, "ct_probe_print: no output stream")
		           : CT_ERR_USAGE;
	const ct_probe_info *p = target_get(ctx);
	if (!p)
		return ct_ctx_last_status(ctx);
	ct_buf b;
	ct_buf_init(&b);
	if (json) {
		print_json(&b, p);
		ct_buf_putc(&b, '\n');
	} else {
		print_text(&b, p);
	}
	char *s = ct_buf_take(&b);
	if (!s)
		return ct_error(ctx, CT_ERR_NOMEM, "out of memory printing the probe");
	bool ok = fputs(s, out) >= 0 && fflush(out) == 0;
	free(s);
	return ok ? CT_OK : ct_error(ctx, CT_ERR_IO, "cannot write the probe: %s", strerror(errno));
}
