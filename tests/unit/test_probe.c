/* test_probe.c: the hardware probe: sane values, ISA as /proc/cpuinfo says, stable ids, fallbacks.
 */
#include "harness.h"

#include "cachet.h"
#include "target/target.h"

#include <ftw.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[] = "/tmp/ct_probe_XXXXXX";

static ct_probe_info probe_plain(ct_ctx *ctx)
{
	ct_probe_info p;
	memset(&p, 0, sizeof p);
	ct_status st = ct_probe_run(ctx, 0, &p);
	CHECKF(st == CT_OK, "ct_probe_run: %s", ct_ctx_last_message(ctx));
	return p;
}

static bool is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* The cache description every consumer relies on. */
static void check_caches(const ct_probe_info *p)
{
	CHECK(p->ncaches >= 1 && p->ncaches <= CT_PROBE_MAX_CACHES);
	for (int i = 0; i < p->ncaches; i++) {
		const ct_cache_level *l = &p->caches[i];
		CHECKF(i == 0 || l->level > p->caches[i - 1].level, "level %d at %d", l->level, i);
		CHECKF(is_pow2(l->line) && l->line >= 16 && l->line <= 512, "L%d line %d", l->level,
		       l->line);
		CHECKF(l->ways >= 0 && l->ways <= 256, "L%d ways %d", l->level, l->ways);
		CHECKF(l->size >= 4096 && l->size <= ((int64_t)1 << 36), "L%d size %lld", l->level,
		       (long long)l->size);
		if (i > 0)
			CHECKF(l->size > p->caches[i - 1].size, "L%d not larger than L%d", l->level,
			       p->caches[i - 1].level);
		CHECK(l->source == CT_SRC_HWLOC || l->source == CT_SRC_SYSFS ||
		      l->source == CT_SRC_DEFAULT);
	}
	CHECK(p->caches[0].level == 1);
	CHECKF(p->caches[0].size <= 1024 * 1024, "L1 of %lld bytes", (long long)p->caches[0].size);
}

static void probe_cores(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p = probe_plain(ctx);
	CHECK(p.cores >= 1);
	CHECK(p.hw_threads >= p.cores);
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		CHECKF(p.cpus_allowed == CPU_COUNT(&set), "%d vs %d", p.cpus_allowed,
		       CPU_COUNT(&set));
	CHECK(p.cpus_allowed >= 1);
	CHECK(p.cores_source == CT_SRC_HWLOC || p.cores_source == CT_SRC_OS);
	ct_ctx_free(ctx);
}

static void probe_caches(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p = probe_plain(ctx);
	check_caches(&p);
	ct_ctx_free(ctx);
}

/* Our ISA bits against the kernel's flags (which also reflect OS support). */
static void probe_isa_matches_cpuinfo(void)
{
#if defined(__x86_64__) || defined(__i386__)
	static const struct {
		uint32_t bit;
		const char *flag;
	} map[] = {
	    {CT_ISA_SSE2, "sse2"},
	    {CT_ISA_SSE3, "pni"},
	    {CT_ISA_SSSE3, "ssse3"},
	    {CT_ISA_SSE41, "sse4_1"},
	    {CT_ISA_SSE42, "sse4_2"},
	    {CT_ISA_AVX, "avx"},
	    {CT_ISA_AVX2, "avx2"},
	    {CT_ISA_FMA, "fma"},
	    {CT_ISA_F16C, "f16c"},
	    {CT_ISA_AVX512F, "avx512f"},
	    {CT_ISA_AVX512CD, "avx512cd"},
	    {CT_ISA_AVX512DQ, "avx512dq"},
	    {CT_ISA_AVX512BW, "avx512bw"},
	    {CT_ISA_AVX512VL, "avx512vl"},
	    {CT_ISA_AVX512VNNI, "avx512_vnni"},
	    {CT_ISA_AVX512BF16, "avx512_bf16"},
	    {CT_ISA_AVX512FP16, "avx512_fp16"},
	    {CT_ISA_AVXVNNI, "avx_vnni"},
	};
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f) {
		printf("skip: no /proc/cpuinfo\n");
		return;
	}
	static char line[8192];
	char flags[8192] = "";
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "flags", 5) == 0) {
			snprintf(flags, sizeof flags, " %s",
			         strchr(line, ':') ? strchr(line, ':') + 1 : "");
			flags[strcspn(flags, "\n")] = ' ';
			break;
		}
	fclose(f);
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p = probe_plain(ctx);
	CHECK(p.isa_source == CT_SRC_CPUID);
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		char word[64];
		snprintf(word, sizeof word, " %s ", map[i].flag);
		bool kernel = strstr(flags, word) != NULL;
		bool ours = (p.isa & map[i].bit) != 0;
		CHECKF(kernel == ours, "%s: kernel %d, probe %d", map[i].flag, kernel, ours);
	}
	ct_ctx_free(ctx);
#else
	printf("skip: ISA check is for x86\n");
#endif
}

static void probe_target_description(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p = probe_plain(ctx);
	if (p.isa & CT_ISA_AVX512F)
		CHECK(p.vector_bytes == 64 && p.vector_registers == 32);
	else if (p.isa & CT_ISA_AVX)
		CHECK(p.vector_bytes == 32 && p.vector_registers == 16);
	else
		CHECK(p.vector_bytes == 16 || p.vector_bytes == 8);
	CHECK(p.fma_units >= 1 && p.fma_latency >= 1);
	CHECK(p.measured == 0 && p.gflops_f32_core == 0);
	CHECK(strcmp(p.vendor, "") != 0 && strcmp(p.model, "") != 0 && strcmp(p.arch, "") != 0);
	ct_ctx_free(ctx);
}

static bool id_chars_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

static void probe_device_id_stable(void)
{
	ct_ctx *a = ct_ctx_new(), *b = ct_ctx_new();
	ct_probe_info pa = probe_plain(a), pb = probe_plain(b);
	CHECKF(id_chars_ok(pa.device_id), "'%s'", pa.device_id);
	CHECK(strcmp(pa.device_id, pb.device_id) == 0);
	CHECK(strcmp(pa.identity, pb.identity) == 0);
	char tail[32];
	snprintf(tail, sizeof tail, "-%dc", pa.cores);
	size_t n = strlen(pa.device_id), t = strlen(tail);
	CHECKF(n > t && strcmp(pa.device_id + n - t, tail) == 0, "'%s' ends with '%s'",
	       pa.device_id, tail);
	CHECK(ct_device_id(a) && strcmp(ct_device_id(a), pa.device_id) == 0);
	CHECK(strstr(pa.identity, "cachet=" CACHET_VERSION ";") != NULL);
	/* re-probing gives the same id */
	ct_probe_info pc;
	CHECK(ct_probe_run(a, CT_PROBE_REFRESH, &pc) == CT_OK);
	CHECK(strcmp(pc.device_id, pa.device_id) == 0);
	ct_ctx_free(a);
	ct_ctx_free(b);
}

/* The ctx keeps one probe: the second call must not probe again. */
static void probe_cached_on_ctx(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const ct_probe_info *t1 = target_get(ctx);
	const ct_probe_info *t2 = target_get(ctx);
	CHECK(t1 && t1 == t2);
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, 0, &p) == CT_OK);
	CHECK(target_get(ctx) == t1);
	CHECK(memcmp(&p, t1, sizeof p) == 0);
	CHECK(ct_probe_run(ctx, 0, NULL) == CT_OK);
	/* a re-probe updates the same struct: pointers stay valid */
	const char *id = ct_device_id(ctx);
	CHECK(ct_probe_run(ctx, CT_PROBE_REFRESH, NULL) == CT_OK);
	CHECK(target_get(ctx) == t1 && ct_device_id(ctx) == id);
	ct_ctx_free(ctx);
}

static void probe_sanitize_rows(void)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
	    {"Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", "intel_xeon_gold_6230_cpu_2_10ghz"},
	    {"  AMD EPYC 7763 64-Core Processor  ", "amd_epyc_7763_64_core_processor"},
	    {"Apple M2(TM)", "apple_m2"},
	    {"", "unknown"},
	    {"---(tm)---", "unknown"},
	    {"ABC__def..9", "abc_def_9"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char name[96];
		snprintf(name, sizeof name, "probe_sanitize[%s]", rows[i].in);
		h_begin(name);
		char out[64];
		target_sanitize(rows[i].in, out, sizeof out);
		CHECKF(strcmp(out, rows[i].want) == 0, "got '%s'", out);
		h_end();
	}
	h_begin("probe_sanitize[truncated]");
	char small[8];
	target_sanitize("abcdefghijklmnop", small, sizeof small);
	CHECK(strlen(small) == 7 && id_chars_ok(small));
	h_end();
}

static void write_file(const char *dir, const char *sub, const char *name, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, sub);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A fake sysfs cache folder, as Linux lays it out. */
static void probe_sysfs_parser(void)
{
	char dir[256];
	snprintf(dir, sizeof dir, "%s/cache", tmp_root);
	mkdir(dir, 0755);
	static const char *const idx[][6] = {
	    /* sub, level, type, size, line, ways */
	    {"index0", "1\n", "Data\n", "48K\n", "64\n", "12\n"},
	    {"index1", "1\n", "Instruction\n", "32K\n", "64\n", "8\n"},
	    {"index2", "2\n", "Unified\n", "2048K\n", "64\n", "16\n"},
	    {"index3", "3\n", "Unified\n", "32M\n", "64\n", "0\n"},
	};
	for (int i = 0; i < 4; i++) {
		write_file(dir, idx[i][0], "level", idx[i][1]);
		write_file(dir, idx[i][0], "type", idx[i][2]);
		write_file(dir, idx[i][0], "size", idx[i][3]);
		write_file(dir, idx[i][0], "coherency_line_size", idx[i][4]);
		write_file(dir, idx[i][0], "ways_of_associativity", idx[i][5]);
		write_file(dir, idx[i][0], "shared_cpu_list", i == 3 ? "0-7,16-23\n" : "0,16\n");
	}
	ct_cache_level c[CT_PROBE_MAX_CACHES];
	int n = target_caches_sysfs(dir, c, CT_PROBE_MAX_CACHES);
	CHECKF(n == 3, "n = %d", n);
	if (n == 3) {
		CHECK(c[0].level == 1 && c[0].size == 48 * 1024 && c[0].line == 64 &&
		      c[0].ways == 12);
		CHECK(c[1].level == 2 && c[1].size == 2048 * 1024 && c[1].ways == 16);
		CHECK(c[2].level == 3 && c[2].size == 32 * 1024 * 1024 && c[2].ways == 0);
		CHECK(c[0].shared_by == 2 && c[2].shared_by == 16);
		CHECK(c[0].source == CT_SRC_SYSFS);
	}
	/* only two fit */
	CHECK(target_caches_sysfs(dir, c, 2) == 2);
	/* a missing folder and a malformed size */
	char none[300];
	snprintf(none, sizeof none, "%s/nothing", tmp_root);
	CHECK(target_caches_sysfs(none, c, CT_PROBE_MAX_CACHES) == 0);
	write_file(dir, "index2", "size", "lots\n");
	n = target_caches_sysfs(dir, c, CT_PROBE_MAX_CACHES);
	CHECKF(n == 2 && c[1].level == 3, "n = %d", n);
}

/* Without hwloc and sysfs the probe still gives a usable, marked description. */
static void probe_fallbacks(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info full = probe_plain(ctx), p;
	CHECK(ct_probe_run(ctx, CT_PROBE_REFRESH | CT_PROBE_NO_HWLOC | CT_PROBE_NO_SYSFS, &p) ==
	      CT_OK);
	check_caches(&p);
	for (int i = 0; i < p.ncaches; i++)
		CHECK(p.caches[i].source == CT_SRC_DEFAULT);
	CHECK(p.cores_source == CT_SRC_OS);
	CHECK(p.hw_threads == full.hw_threads);
	CHECK(strcmp(p.device_id, full.device_id) == 0 || full.cores != full.hw_threads);
	/* sysfs alone: whatever the machine has there, or the defaults */
	CHECK(ct_probe_run(ctx, CT_PROBE_REFRESH | CT_PROBE_NO_HWLOC, &p) == CT_OK);
	check_caches(&p);
	ct_cache_level c[CT_PROBE_MAX_CACHES];
	int n = target_caches_sysfs("/sys/devices/system/cpu/cpu0/cache", c, CT_PROBE_MAX_CACHES);
	CHECK(p.caches[0].source == (n > 0 ? CT_SRC_SYSFS : CT_SRC_DEFAULT));
	printf("hwloc caches from %s; sysfs has %d levels\n",
	       ct_probe_source_name(full.caches[0].source), n);
	ct_ctx_free(ctx);
}

/* Braces and brackets balance outside strings, and one object fills the text. */
static bool json_balanced(const char *s)
{
	int depth = 0;
	bool str = false;
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '\n')
		n--;
	if (n == 0 || s[0] != '{' || s[n - 1] != '}')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				str = false;
			continue;
		}
		if (c == '"')
			str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (--depth < 0)
				return false;
			if (depth == 0 && i != n - 1)
				return false;
		}
	}
	return depth == 0 && !str;
}

/* What ct_probe_print writes for ctx in format fmt, malloc'd (NULL if the
 * stream could not be opened); the print's status is checked. */
static char *probe_printed(ct_ctx *ctx, ct_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	CHECK(ct_probe_print(ctx, fmt, f) == CT_OK);
	fclose(f);
	return buf;
}

static void probe_measure(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, CT_PROBE_MEASURE, &p) == CT_OK);
	CHECK(p.measured == CT_PROBE_MEASURE);
	CHECK(p.gflops_f32_core > 0 && p.gflops_f64_core > 0);
	CHECK(p.gflops_f32_all > 0 && p.gflops_f64_all > 0);
	CHECK(p.threads_measured >= 1);
	CHECK(p.copy_gbs_core > 0 && p.copy_gbs_all > 0 && p.copy_bytes > 0);
	CHECK(p.mem_latency_ns > 0);
	for (int i = 0; i < p.ncaches; i++)
		CHECKF(p.caches[i].latency_ns > 0, "L%d", p.caches[i].level);
	CHECK(p.fma_units >= 1 && p.fma_latency >= 1);
	CHECK(p.measure_seconds > 0);
	printf("f32 %.1f GFLOP/s/core (%.1f all), f64 %.1f (%.1f), copy %.1f GB/s (%.1f), mem %.1f "
	       "ns, %.2f GHz, %d FMA/cycle x %d cycles, %.2f s\n",
	       p.gflops_f32_core, p.gflops_f32_all, p.gflops_f64_core, p.gflops_f64_all,
	       p.copy_gbs_core, p.copy_gbs_all, p.mem_latency_ns, p.ghz, p.fma_units, p.fma_latency,
	       p.measure_seconds);
	/* kept on the ctx: asking again measures nothing */
	ct_probe_info q;
	CHECK(ct_probe_run(ctx, CT_PROBE_MEASURE, &q) == CT_OK);
	CHECK(q.measure_seconds == p.measure_seconds && q.gflops_f32_core == p.gflops_f32_core);

	/* printers, after the measurement */
	char *buf = probe_printed(ctx, CT_FORMAT_JSON);
	CHECK(buf && strstr(buf, "\"gflops_f32_core\"") && strstr(buf, "\"memory_latency_ns\""));
	CHECKF(buf && json_balanced(buf), "%s", buf ? buf : "(null)");
	free(buf);
	buf = probe_printed(ctx, CT_FORMAT_TEXT);
	CHECK(buf && strstr(buf, "peak f32") && strstr(buf, "GB/s"));
	if (buf)
		fputs(buf, stdout);
	free(buf);
	ct_ctx_free(ctx);
}

static void probe_print_formats(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char *buf = probe_printed(ctx, CT_FORMAT_JSON);
	CHECKF(buf && json_balanced(buf), "%s", buf ? buf : "(null)");
	CHECK(buf && strstr(buf, ct_device_id(ctx)) && strstr(buf, "\"measured\": null"));
	CHECK(buf && strstr(buf, "\"caches\": [{\"level\": 1"));
	free(buf);
	buf = probe_printed(ctx, CT_FORMAT_TEXT);
	CHECK(buf && strstr(buf, "device") && strstr(buf, ct_device_id(ctx)) &&
	      strstr(buf, " L1 "));
	free(buf);
	ct_ctx_free(ctx);
}

/* The JSON form reads back as JSON with the probe's values (jansson writes it). */
static void probe_json_reads_back(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, 0, &p) == CT_OK);
	char *buf = probe_printed(ctx, CT_FORMAT_JSON);
	size_t len = buf ? strlen(buf) : 0;
	json_error_t err;
	json_t *j = buf ? json_loads(buf, 0, &err) : NULL;
	CHECKF(j && json_is_object(j), "%s", buf ? err.text : "(no output)");
	CHECK(buf && len > 0 && strchr(buf, '\n') == buf + len - 1); /* one line */
	CHECK(json_is_string(json_object_get(j, "device_id")) &&
	      strcmp(json_string_value(json_object_get(j, "device_id")), p.device_id) == 0);
	CHECK(json_integer_value(json_object_get(j, "cores")) == p.cores);
	CHECK(json_integer_value(json_object_get(j, "vector_bytes")) == p.vector_bytes);
	CHECK(json_array_size(json_object_get(j, "caches")) == (size_t)p.ncaches);
	CHECK(json_is_null(json_object_get(j, "measured")));
	CHECK(!json_object_get(j, "opencl")); /* not listed: not asked for */
	json_decref(j);
	free(buf);
	ct_ctx_free(ctx);
}

static void probe_bad_arguments(void)
{
	CHECK(ct_probe_run(NULL, 0, NULL) == CT_ERR_USAGE);
	CHECK(ct_device_id(NULL) == NULL);
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_probe_print(ctx, CT_FORMAT_TEXT, NULL) == CT_ERR_USAGE);
	CHECK(ct_probe_print(NULL, CT_FORMAT_TEXT, stdout) == CT_ERR_USAGE);
	CHECK(strcmp(ct_isa_name(CT_ISA_AVX512F), "avx512f") == 0);
	CHECK(strcmp(ct_isa_name(0), "") == 0 && strcmp(ct_isa_name(3), "") == 0);
	CHECK(strcmp(ct_probe_source_name(CT_SRC_HWLOC), "hwloc") == 0);
	CHECK(strcmp(ct_probe_source_name((ct_probe_source)99), "unknown") == 0);
	ct_ctx_free(ctx);
}

/* Everything the probe allocates goes through the ctx and is freed with it. */
static long live_allocs;
static void *counting_alloc(void *ud, void *ptr, size_t size)
{
	(void)ud;
	if (size == 0) {
		if (ptr)
			live_allocs--;
		free(ptr);
		return NULL;
	}
	if (!ptr)
		live_allocs++;
	return realloc(ptr, size);
}

static void probe_uses_ctx_allocator(void)
{
	live_allocs = 0;
	ct_ctx *ctx = ct_ctx_new_with_alloc(counting_alloc, NULL);
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, CT_PROBE_MEASURE_LATENCY, &p) == CT_OK);
	CHECK(live_allocs >= 2); /* the ctx and its probe */
	CHECK(p.mem_latency_ns > 0);
	ct_ctx_free(ctx);
	CHECKF(live_allocs == 0, "%ld allocations left", live_allocs);
}

/* OpenCL devices are listed on request only; make deps installs PoCL, so
 * the suite expects its CPU device. */
static void probe_opencl_devices(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p = probe_plain(ctx);
	CHECK(!p.opencl_probed && p.nopencl == 0);
	CHECKF(ct_probe_run(ctx, CT_PROBE_OPENCL, &p) == CT_OK, "%s", ct_ctx_last_message(ctx));
	CHECK(p.opencl_probed == 1);
	CHECKF(p.nopencl >= 1, "no OpenCL device listed (is PoCL installed? make deps)");
	bool cpu = false;
	for (int i = 0; i < p.nopencl; i++) {
		const ct_opencl_devinfo *o = &p.opencl[i];
		CHECKF(o->name[0] && o->platform[0], "device %d has no name", i);
		CHECK(strncmp(o->version, "OpenCL ", 7) == 0);
		CHECK(o->compute_units >= 1 && o->max_work_group >= 1);
		CHECK(o->local_mem > 0 && o->global_mem > o->local_mem);
		cpu |= strcmp(o->type, "cpu") == 0;
	}
	CHECKF(cpu, "PoCL's CPU device is not among the %d listed", p.nopencl);
	CHECK(ct_ctx_last_status(ctx) == CT_OK);
	/* printed in both forms */
	char *text = probe_printed(ctx, CT_FORMAT_TEXT), *json = probe_printed(ctx, CT_FORMAT_JSON);
	CHECK(text && strstr(text, "\nopencl      ") && strstr(text, p.opencl[0].name));
	CHECK(json && strstr(json, "\"opencl\": [{\"platform\": "));
	free(text);
	free(json);
	ct_ctx_free(ctx);
}

/* The last level's usable size: either the reported one, untouched, or a
 * measured size under half of it, at least the chase's first size (twice
 * the level below) and a power-of-two multiple of it; the levels below stay
 * as reported, and the printers give both sizes. */
static void probe_capacity(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_probe_info p0 = probe_plain(ctx);
	ct_probe_info p;
	CHECK(ct_probe_run(ctx, CT_PROBE_MEASURE_CAPACITY, &p) == CT_OK);
	CHECK(p.measured & CT_PROBE_MEASURE_CAPACITY);
	CHECK(p.ncaches == p0.ncaches);
	for (int i = 0; i + 1 < p.ncaches; i++)
		CHECKF(p.caches[i].size == p0.caches[i].size && p.caches[i].reported_size == 0, "L%d", i + 1);
	if (p.ncaches < 2) {
		ct_ctx_free(ctx);
		return;
	}
	const ct_cache_level *l = &p.caches[p.ncaches - 1], *l0 = &p0.caches[p.ncaches - 1];
	int64_t first = 2 * p.caches[p.ncaches - 2].size;
	if (l->reported_size == 0) {
		CHECK(l->size == l0->size && l->source == l0->source);
	} else {
		CHECK(l->reported_size == l0->size && l->source == CT_SRC_MEASURED);
		CHECKF(l->size >= first && l->size < l->reported_size / 2, "usable %lld of %lld", (long long)l->size,
		       (long long)l->reported_size);
		int64_t s = first;
		while (s < l->size)
			s *= 2;
		CHECKF(s == l->size, "usable %lld is not a power-of-two multiple of %lld", (long long)l->size,
		       (long long)first);
	}
	printf("L%d %lld KiB usable, %lld KiB reported\n", p.ncaches, (long long)(l->size >> 10),
	       (long long)((l->reported_size ? l->reported_size : l->size) >> 10));
	char *text = probe_printed(ctx, CT_FORMAT_TEXT), *json = probe_printed(ctx, CT_FORMAT_JSON);
	CHECK(text && json);
	if (text && json) {
		CHECK((strstr(text, " usable (") != NULL) == (l->reported_size > 0));
		CHECK((strstr(json, "\"reported_size\": ") != NULL) == (l->reported_size > 0));
	}
	free(text);
	free(json);
	ct_ctx_free(ctx);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int main(void)
{
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(probe_cores);
	RUN(probe_caches);
	RUN(probe_isa_matches_cpuinfo);
	RUN(probe_target_description);
	RUN(probe_device_id_stable);
	RUN(probe_cached_on_ctx);
	probe_sanitize_rows();
	RUN(probe_sysfs_parser);
	RUN(probe_fallbacks);
	RUN(probe_print_formats);
	RUN(probe_json_reads_back);
	RUN(probe_bad_arguments);
	RUN(probe_uses_ctx_allocator);
	RUN(probe_measure);
	RUN(probe_capacity);
	RUN(probe_opencl_devices);
	nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return h_report();
}
