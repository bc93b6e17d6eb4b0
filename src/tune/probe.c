/* probe.c: the hardware probe: cores, caches, vector ISA, device identity, and measured peaks. */
#include "tune/tune.h"
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define PROBE_X86 1
#else
#define PROBE_X86 0
#endif

#define KIB ((int64_t)1024)
#define MIB (KIB * 1024)

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

/* ------------------------------------------------------------ small helpers */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of the calling thread. The microbenchmarks time themselves with
 * it, so that other processes sharing the cores (a busy build machine) do not
 * lower the numbers: a preempted thread's clock stops too. */
static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Copy s into out (n bytes): blanks collapsed to one space, trimmed. */
static void collapse_blanks(const char *s, char *out, size_t n)
{
	size_t k = 0;
	bool blank = false;
	for (; *s && k + 1 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= ' ') {
			blank = k > 0;
			continue;
		}
		if (blank && k + 2 < n)
			out[k++] = ' ';
		blank = false;
		out[k++] = (char)c;
	}
	out[k] = 0;
}

void tune_sanitize(const char *s, char *out, size_t n)
{
	if (n == 0)
		return;
	size_t k = 0;
	bool sep = false;
	while (*s && k + 1 < n) {
		/* trademark marks are noise that differs between sources of the name */
		if (strncasecmp(s, "(r)", 3) == 0) {
			s += 3;
			continue;
		}
		if (strncasecmp(s, "(tm)", 4) == 0) {
			s += 4;
			continue;
		}
		char c = *s++;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (sep && k > 0 && k + 2 < n)
				out[k++] = '_';
			sep = false;
			out[k++] = c;
		} else {
			sep = true;
		}
	}
	out[k] = 0;
	if (k == 0)
		snprintf(out, n, "unknown");
}

static bool is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* ------------------------------------------------------------ x86: cpuid */

#if PROBE_X86
static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* Vendor, signature, brand string and the ISA bits the OS lets us use. */
static void detect_cpuid(ct_probe_info *p)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	unsigned maxleaf = a;
	char v[13];
	memcpy(v, &b, 4);
	memcpy(v + 4, &d, 4);
	memcpy(v + 8, &c, 4);
	v[12] = 0;
	collapse_blanks(v, p->vendor, sizeof p->vendor);
	p->vendor_source = CT_SRC_CPUID;
	uint32_t isa = 0;
	bool os_avx = false, os_avx512 = false;
	if (maxleaf >= 1) {
		__cpuid(1, a, b, c, d);
		unsigned base_family = (a >> 8) & 0xf, family = base_family;
		unsigned model = (a >> 4) & 0xf;
		if (base_family == 0xf)
			family += (a >> 20) & 0xff;
		if (base_family == 0x6 || base_family == 0xf)
			model += ((a >> 16) & 0xf) << 4;
		p->family = (int)family;
		p->model_number = (int)model;
		p->stepping = (int)(a & 0xf);
		if (d & (1u << 26))
			isa |= CT_ISA_SSE2;
		if (c & (1u << 0))
			isa |= CT_ISA_SSE3;
		if (c & (1u << 9))
			isa |= CT_ISA_SSSE3;
		if (c & (1u << 19))
			isa |= CT_ISA_SSE41;
		if (c & (1u << 20))
			isa |= CT_ISA_SSE42;
		/* AVX state must be enabled by the OS (XCR0 bits 1-2), AVX-512
		 * state too (bits 5-7); otherwise the instructions fault */
		if (c & (1u << 27)) {
			uint64_t xcr0 = xgetbv0();
			os_avx = (xcr0 & 0x6) == 0x6;
			os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
		}
		if (os_avx) {
			if (c & (1u << 28))
				isa |= CT_ISA_AVX;
			if (c & (1u << 12))
				isa |= CT_ISA_FMA;
			if (c & (1u << 29))
				isa |= CT_ISA_F16C;
		}
	}
	if (maxleaf >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		unsigned sub = a;
		if (os_avx && (b & (1u << 5)))
			isa |= CT_ISA_AVX2;
		if (os_avx512) {
			if (b & (1u << 16))
				isa |= CT_ISA_AVX512F;
			if (b & (1u << 17))
				isa |= CT_ISA_AVX512DQ;
			if (b & (1u << 28))
				isa |= CT_ISA_AVX512CD;
			if (b & (1u << 30))
				isa |= CT_ISA_AVX512BW;
			if (b & (1u << 31))
				isa |= CT_ISA_AVX512VL;
			if (c & (1u << 11))
				isa |= CT_ISA_AVX512VNNI;
			if (d & (1u << 23))
				isa |= CT_ISA_AVX512FP16;
		}
		if (sub >= 1) {
			__cpuid_count(7, 1, a, b, c, d);
			if (os_avx && (a & (1u << 4)))
				isa |= CT_ISA_AVXVNNI;
			if (os_avx512 && (a & (1u << 5)))
				isa |= CT_ISA_AVX512BF16;
		}
	}
	p->isa = isa;
	p->isa_source = CT_SRC_CPUID;
	if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
		unsigned r[12];
		for (unsigned i = 0; i < 3; i++)
			__cpuid(0x80000002u + i, r[4 * i], r[4 * i + 1], r[4 * i + 2],
			        r[4 * i + 3]);
		char brand[49];
		memcpy(brand, r, 48);
		brand[48] = 0;
		collapse_blanks(brand, p->model, sizeof p->model);
	}
}
#endif

/* ------------------------------------------------------------ hwloc */

/* Keep the prefix of c[0..n) whose levels and sizes strictly increase and
 * whose values are plausible; returns the new count. A source that gets L1
 * wrong is rejected entirely (0), so that the next source is tried. */
static int plausible_prefix(ct_cache_level *c, int n)
{
	for (int i = 0; i < n; i++) {
		bool ok = c[i].size >= 1 * KIB && c[i].size <= ((int64_t)1 << 40) &&
		          is_pow2(c[i].line) && c[i].line >= 8 && c[i].line <= 4096 &&
		          c[i].ways >= 0;
		if (i > 0)
			ok = ok && c[i].level > c[i - 1].level && c[i].size > c[i - 1].size;
		if (!ok)
			return i;
	}
	return n;
}

/* Cores, threads, caches, and (when cpuid gave none) vendor and model. */
static void detect_hwloc(ct_probe_info *p, bool want_caches)
{
#if HWLOC_API_VERSION >= 0x00020000
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) < 0)
		return;
	if (hwloc_topology_load(topo) < 0) {
		hwloc_topology_destroy(topo);
		return;
	}
	int ncore = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	if (npu > 0) {
		p->hw_threads = npu;
		p->cores = ncore > 0 ? ncore : npu;
		p->cores_source = CT_SRC_HWLOC;
	}
	if (want_caches) {
		static const hwloc_obj_type_t types[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,
		                                         HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
		                                         HWLOC_OBJ_L5CACHE};
		ct_cache_level c[CT_PROBE_MAX_CACHES];
		int n = 0;
		for (int i = 0; i < 5 && n < CT_PROBE_MAX_CACHES; i++) {
			hwloc_obj_t o = hwloc_get_obj_by_type(topo, types[i], 0);
			if (!o || !o->attr || o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
				continue;
			ct_cache_level *l = &c[n++];
			memset(l, 0, sizeof *l);
			l->level = (int)o->attr->cache.depth;
			l->size = (int64_t)o->attr->cache.size;
			l->line = (int)o->attr->cache.linesize;
			/* hwloc: -1 fully associative, 0 unknown; ours: 0 for both */
			l->ways =
			    o->attr->cache.associativity > 0 ? o->attr->cache.associativity : 0;
			l->shared_by = o->cpuset ? hwloc_bitmap_weight(o->cpuset) : 0;
			l->instances = hwloc_get_nbobjs_by_type(topo, types[i]);
			l->source = CT_SRC_HWLOC;
		}
		n = plausible_prefix(c, n);
		if (n > 0) {
			memcpy(p->caches, c, (size_t)n * sizeof c[0]);
			p->ncaches = n;
		}
	}
	if (!p->vendor[0] || !p->model[0]) {
		hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
		const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
		const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
		if (!p->vendor[0] && vendor) {
			collapse_blanks(vendor, p->vendor, sizeof p->vendor);
			p->vendor_source = CT_SRC_HWLOC;
		}
		if (!p->model[0] && model)
			collapse_blanks(model, p->model, sizeof p->model);
	}
	hwloc_topology_destroy(topo);
#else
	(void)p;
	(void)want_caches;
#endif
}

/* ------------------------------------------------------------ sysfs */

/* Read a small text file into buf (first line, no newline); false if absent. */
static bool read_line(const char *dir, const char *sub, const char *name, char *buf, size_t n)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\r\n")] = 0;
	return ok;
}

/* "48K", "1024K", "32M", "12345" -> bytes; -1 if malformed. */
static int64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	int64_t m = 1;
	if (*end == 'K' || *end == 'k')
		m = KIB, end++;
	else if (*end == 'M' || *end == 'm')
		m = MIB, end++;
	else if (*end == 'G' || *end == 'g')
		m = MIB * 1024, end++;
	if (*end)
		return -1;
	int64_t r;
	return ct_mul_ok((int64_t)v, m, &r) ? r : -1;
}

/* Number of CPUs in a list like "0-3,8,10-11" (0 if malformed). */
static int count_cpu_list(const char *s)
{
	int n = 0;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10);
		if (end == s)
			return 0;
		long b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return 0;
			s = end;
		}
		n += (int)(b - a + 1);
		if (*s == ',')
			s++;
		else if (*s)
			return 0;
	}
	return n;
}

int tune_caches_sysfs(const char *dir, ct_cache_level *out, int max)
{
	ct_cache_level c[16];
	int n = 0;
	for (int idx = 0; idx < 16; idx++) {
		char sub[32], buf[256];
		snprintf(sub, sizeof sub, "index%d", idx);
		if (!read_line(dir, sub, "level", buf, sizeof buf))
			break;
		int level = atoi(buf);
		char type[64] = "";
		read_line(dir, sub, "type", type, sizeof type);
		if (strcmp(type, "Instruction") == 0 || level < 1)
			continue;
		ct_cache_level l;
		memset(&l, 0, sizeof l);
		l.level = level;
		l.size = read_line(dir, sub, "size", buf, sizeof buf) ? parse_size(buf) : -1;
		l.line =
		    read_line(dir, sub, "coherency_line_size", buf, sizeof buf) ? atoi(buf) : 0;
		l.ways =
		    read_line(dir, sub, "ways_of_associativity", buf, sizeof buf) ? atoi(buf) : 0;
		if (l.ways < 0)
			l.ways = 0;
		l.shared_by = read_line(dir, sub, "shared_cpu_list", buf, sizeof buf)
		                  ? count_cpu_list(buf)
		                  : 0;
		l.source = CT_SRC_SYSFS;
		if (l.size <= 0)
			continue;
		c[n++] = l;
	}
	/* sort by level (insertion sort: a handful of entries), one per level */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && c[j].level < c[j - 1].level; j--) {
			ct_cache_level t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	int k = 0;
	for (int i = 0; i < n; i++)
		if (k == 0 || c[i].level != c[k - 1].level)
			c[k++] = c[i];
	k = plausible_prefix(c, k);
	if (k > max)
		k = max;
	if (k > 0)
		memcpy(out, c, (size_t)k * sizeof c[0]);
	return k;
}

/* ------------------------------------------------------------ detection */

/* Portable defaults: typical of current x86 and Arm server cores. */
static const ct_cache_level default_caches[] = {
    {1, 32 * KIB, 64, 8, 1, 0, 0.0, CT_SRC_DEFAULT},
    {2, 1 * MIB, 64, 16, 1, 0, 0.0, CT_SRC_DEFAULT},
    {3, 16 * MIB, 64, 16, 0, 0, 0.0, CT_SRC_DEFAULT},
};

/* CPUs this process may run on; fills cpus[0..max) with their numbers. */
static int allowed_cpus(int *cpus, int max)
{
	for (int ncpu = 1024; ncpu <= (1 << 16); ncpu *= 2) {
		cpu_set_t *set = CPU_ALLOC((size_t)ncpu);
		if (!set)
			return 0;
		size_t sz = CPU_ALLOC_SIZE((size_t)ncpu);
		CPU_ZERO_S(sz, set);
		if (sched_getaffinity(0, sz, set) == 0) {
			int n = 0;
			for (int i = 0; i < ncpu; i++)
				if (CPU_ISSET_S((size_t)i, sz, set)) {
					if (cpus && n < max)
						cpus[n] = i;
					n++;
				}
			CPU_FREE(set);
			return n;
		}
		CPU_FREE(set);
		if (errno != EINVAL)
			return 0;
	}
	return 0;
}

static const char *vendor_short(const char *v)
{
	if (strcmp(v, "GenuineIntel") == 0)
		return "intel";
	if (strcmp(v, "AuthenticAMD") == 0)
		return "amd";
	if (strcmp(v, "HygonGenuine") == 0)
		return "hygon";
	if (strcmp(v, "CentaurHauls") == 0 || strcmp(v, "Shanghai") == 0)
		return "zhaoxin";
	return NULL;
}

/* Device id and full identity from the detected fields. */
static void make_identity(ct_probe_info *p)
{
	/* sized so that vendor-model-<cores>c always fits device_id */
	char vendor[24], model[56];
	const char *vs = vendor_short(p->vendor);
	if (vs)
		snprintf(vendor, sizeof vendor, "%s", vs);
	else
		tune_sanitize(p->vendor, vendor, sizeof vendor);
	tune_sanitize(p->model, model, sizeof model);
	snprintf(p->device_id, sizeof p->device_id, "%s-%s-%dc", vendor, model, p->cores);

	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(
	    &b, "cachet=%s;arch=%s;vendor=%s;model=%s;signature=%d.%d.%d;cores=%d;threads=%d;isa=",
	    CACHET_VERSION, p->arch, p->vendor, p->model, p->family, p->model_number, p->stepping,
	    p->cores, p->hw_threads);
	bool first = true;
	for (size_t i = 0; i < sizeof isa_names / sizeof isa_names[0]; i++)
		if (p->isa & isa_names[i].bit) {
			ct_buf_printf(&b, "%s%s", first ? "" : ",", isa_names[i].name);
			first = false;
		}
	ct_buf_puts(&b, ";caches=");
	for (int i = 0; i < p->ncaches; i++)
		ct_buf_printf(&b, "%sL%d:%lld/%d/%d", i ? "," : "", p->caches[i].level,
		              (long long)p->caches[i].size, p->caches[i].line, p->caches[i].ways);
	snprintf(p->identity, sizeof p->identity, "%s", b.s && !b.failed ? b.s : "");
	ct_buf_free(&b);
}

/* Fill p with everything that costs no measurement. */
static void probe_detect(unsigned flags, ct_probe_info *p)
{
	memset(p, 0, sizeof *p);
	struct utsname u;
	if (uname(&u) == 0)
		collapse_blanks(u.machine, p->arch, sizeof p->arch);
	else
		snprintf(p->arch, sizeof p->arch, "unknown");
#if PROBE_X86
	detect_cpuid(p);
#elif defined(__aarch64__)
	p->isa = CT_ISA_NEON;
	p->isa_source = CT_SRC_DEFAULT;
#endif
	if (!(flags & CT_PROBE_NO_HWLOC))
		detect_hwloc(p, true);
	if (p->ncaches == 0 && !(flags & CT_PROBE_NO_SYSFS))
		p->ncaches = tune_caches_sysfs("/sys/devices/system/cpu/cpu0/cache", p->caches,
		                               CT_PROBE_MAX_CACHES);
	if (p->hw_threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		p->hw_threads = n > 0 ? (int)n : 1;
		p->cores = p->hw_threads;
		p->cores_source = n > 0 ? CT_SRC_OS : CT_SRC_DEFAULT;
	}
	int allowed = allowed_cpus(NULL, 0);
	p->cpus_allowed = allowed > 0 ? allowed : p->hw_threads;
	if (p->ncaches == 0) {
		int n = (int)(sizeof default_caches / sizeof default_caches[0]);
		memcpy(p->caches, default_caches, sizeof default_caches);
		p->ncaches = n;
		p->caches[n - 1].shared_by = p->hw_threads;
	}
	for (int i = 0; i < p->ncaches; i++) {
		ct_cache_level *l = &p->caches[i];
		if (l->instances <= 0 && l->shared_by > 0)
			l->instances = (p->hw_threads + l->shared_by - 1) / l->shared_by;
	}
	if (!p->vendor[0])
		snprintf(p->vendor, sizeof p->vendor, "unknown");
	if (!p->model[0])
		snprintf(p->model, sizeof p->model, "unknown");

	/* target description as data: vector width, registers, FMA estimate */
	if (p->isa & CT_ISA_AVX512F) {
		p->vector_bytes = 64;
		p->vector_registers = 32;
	} else if (p->isa & CT_ISA_AVX) {
		p->vector_bytes = 32;
		p->vector_registers = 16;
	} else if (p->isa & (CT_ISA_SSE2 | CT_ISA_NEON)) {
		p->vector_bytes = 16;
		p->vector_registers = (p->isa & CT_ISA_NEON) ? 32 : (sizeof(void *) == 8 ? 16 : 8);
	} else {
		p->vector_bytes = 8;
		p->vector_registers = 16;
	}
	/* most cores with FMA issue two per cycle at 4 cycles latency; the
	 * microbenchmark replaces this estimate */
	p->fma_units = (p->isa & (CT_ISA_FMA | CT_ISA_NEON)) ? 2 : 1;
	p->fma_latency = 4;
	p->fma_source = CT_SRC_DEFAULT;
	make_identity(p);
}

/* ------------------------------------------------------------ FMA microbenchmark */

/* One FMA kernel: iters iterations of nacc independent vector FMA chains (or
 * one dependent chain of 8 FMAs per iteration); returns a value that depends
 * on every result so that nothing is optimised away. */
typedef double (*fma_fn)(uint64_t iters, int one_chain);

typedef struct fma_kernel {
	fma_fn fn;
	int lanes; /* elements per vector */
	int nacc;  /* independent chains in the throughput loop */
	int fma;   /* 1: fused multiply-add; 0: multiply then add */
} fma_kernel;

/* clang-format off */
#define REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define REP16(X) REP12(X) X(12) X(13) X(14) X(15)
#define ACC_DECL(i) V a##i = SET1((E)(1.0 + 0.001 * (i)));
#define ACC_STEP(i) a##i = FMA(a##i, b, c);
#define ACC_SUM(i) s = ADD(s, a##i);
/* b < 1 and small c keep every chain near c / (1 - b): no overflow, no
 * denormals, so the timing is that of the FMA pipes alone */
#define FMA_BODY(REP)                                                                  \
	V b = SET1((E)0.999999), c = SET1((E)1e-6), s = SET1((E)0);                    \
	if (one_chain) {                                                               \
		V x = SET1((E)1);                                                      \
		for (uint64_t i = 0; i < iters; i++) {                                 \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
			x = FMA(x, b, c);                                              \
		}                                                                      \
		s = x;                                                                 \
	} else {                                                                       \
		REP(ACC_DECL)                                                          \
		for (uint64_t i = 0; i < iters; i++) {                                 \
			REP(ACC_STEP)                                                  \
		}                                                                      \
		REP(ACC_SUM)                                                           \
	}                                                                              \
	E lanes[sizeof(V) / sizeof(E)];                                                \
	memcpy(lanes, &s, sizeof lanes);                                               \
	double t = 0;                                                                  \
	for (size_t k = 0; k < sizeof(V) / sizeof(E); k++)                             \
		t += (double)lanes[k];                                                 \
	return t;

#if PROBE_X86
/* The target attributes let the library use AVX-512 and AVX2 where the probe
 * found them without building everything with -march=native. */
#define V __m512
#define E float
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
__attribute__((target("avx512f"))) static double fma_avx512_f32(uint64_t iters, int one_chain)
{
	FMA_BODY(REP16)
}
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#define V __m512d
#define E double
#define SET1 _mm512_set1_pd
#define FMA _mm512_fmadd_pd
#define ADD _mm512_add_pd
__attribute__((target("avx512f"))) static double fma_avx512_f64(uint64_t iters, int one_chain)
{
	FMA_BODY(REP16)
}
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#define V __m256
#define E float
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
__attribute__((target("avx,fma"))) static double fma_avx2_f32(uint64_t iters, int one_chain)
{
	FMA_BODY(REP12)
}
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#define V __m256d
#define E double
#define SET1 _mm256_set1_pd
#define FMA _mm256_fmadd_pd
#define ADD _mm256_add_pd
__attribute__((target("avx,fma"))) static double fma_avx2_f64(uint64_t iters, int one_chain)
{
	FMA_BODY(REP12)
}
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#define V __m128
#define E float
#define SET1 _mm_set1_ps
#define FMA(a, b, c) _mm_add_ps(_mm_mul_ps(a, b), c)
#define ADD _mm_add_ps
__attribute__((target("sse2"))) static double fma_sse2_f32(uint64_t iters, int one_chain)
{
	FMA_BODY(REP12)
}
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#define V __m128d
#define E double
#define SET1 _mm_set1_pd
#define FMA(a, b, c) _mm_add_pd(_mm_mul_pd(a, b), c)
#define ADD _mm_add_pd
__attribute__((target("sse2"))) static double fma_sse2_f64(uint64_t iters, int one_chain)
{
	FMA_BODY(REP12)
}
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#endif

/* Portable fallback: GCC vector extensions, 16 bytes, multiply then add
 * (the compiler may fuse them where the target has FMA). */
typedef float vf32x4 __attribute__((vector_size(16)));
typedef double vf64x2 __attribute__((vector_size(16)));
#define V vf32x4
#define E float
#define SET1(x) ((V){0, 0, 0, 0} + (x))
#define FMA(a, b, c) ((a) * (b) + (c))
#define ADD(a, b) ((a) + (b))
static double fma_generic_f32(uint64_t iters, int one_chain) { FMA_BODY(REP12) }
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD
#define V vf64x2
#define E double
#define SET1(x) ((V){0, 0} + (x))
#define FMA(a, b, c) ((a) * (b) + (c))
#define ADD(a, b) ((a) + (b))
static double fma_generic_f64(uint64_t iters, int one_chain) { FMA_BODY(REP12) }
#undef V
#undef E
#undef SET1
#undef FMA
#undef ADD

/* clang-format on */

/* The widest kernel the detected ISA can run, for f32 (f64 = 0) or f64. */
static fma_kernel pick_kernel(uint32_t isa, bool f64)
{
	fma_kernel k;
	memset(&k, 0, sizeof k);
#if PROBE_X86
	if (isa & CT_ISA_AVX512F) {
		k.fn = f64 ? fma_avx512_f64 : fma_avx512_f32;
		k.lanes = f64 ? 8 : 16;
		k.nacc = 16;
		k.fma = 1;
		return k;
	}
	if ((isa & CT_ISA_AVX) && (isa & CT_ISA_FMA)) {
		k.fn = f64 ? fma_avx2_f64 : fma_avx2_f32;
		k.lanes = f64 ? 4 : 8;
		k.nacc = 12;
		k.fma = 1;
		return k;
	}
	if (isa & CT_ISA_SSE2) {
		k.fn = f64 ? fma_sse2_f64 : fma_sse2_f32;
		k.lanes = f64 ? 2 : 4;
		k.nacc = 12;
		return k;
	}
#else
	(void)isa;
#endif
	k.fn = f64 ? fma_generic_f64 : fma_generic_f32;
	k.lanes = f64 ? 2 : 4;
	k.nacc = 12;
	return k;
}

/* Iterations of k that take about window seconds (at least 1). */
static uint64_t calibrate(const fma_kernel *k, int one_chain, double window, volatile double *sink)
{
	uint64_t iters = 256;
	for (;;) {
		double t0 = cpu_s();
		*sink += k->fn(iters, one_chain);
		double dt = cpu_s() - t0;
		if (dt >= window / 8 || iters >= ((uint64_t)1 << 40)) {
			double want = (double)iters * window / (dt > 1e-9 ? dt : 1e-9);
			return want < 1 ? 1 : (uint64_t)want;
		}
		iters *= 4;
	}
}

/* Best rate (iterations per second) of k over a few windows: the best one
 * is the one least disturbed by other processes on the machine. */
static double best_rate(const fma_kernel *k, int one_chain, uint64_t iters, int windows,
                        volatile double *sink)
{
	double best = 0;
	for (int w = 0; w < windows; w++) {
		double t0 = cpu_s();
		*sink += k->fn(iters, one_chain);
		double dt = cpu_s() - t0;
		if (dt > 0 && (double)iters / dt > best)
			best = (double)iters / dt;
	}
	return best;
}

#if PROBE_X86 && defined(__x86_64__)
/* Core clock: a chain of dependent register adds runs one per cycle on every
 * x86 core of the last 20 years (register-register, so no core can fold it
 * away at rename). */
static double measure_ghz(volatile double *sink)
{
	uint64_t iters = 1 << 14;
	double best = 0;
	for (int w = 0; w < 6; w++) {
		uint64_t x = (uint64_t)w, one = 1;
		double t0 = cpu_s();
		for (uint64_t i = 0; i < iters; i++)
			__asm__ volatile(".rept 100\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(one));
		double dt = cpu_s() - t0;
		*sink += (double)x;
		if (dt < 0.002) {
			iters *= 4;
			w--;
			continue;
		}
		double ghz = (double)iters * 100.0 / dt / 1e9;
		if (ghz > best)
			best = ghz;
	}
	return best > 0.2 && best < 10.0 ? best : 0.0;
}
#else
static double measure_ghz(volatile double *sink)
{
	(void)sink;
	return 0.0;
}
#endif

/* ------------------------------------------------------------ threads */

/* Threads start only when all exist (or none runs if one cannot be created:
 * a barrier alone would then wait forever). */
typedef struct bench_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state;                 /* 0 wait, 1 go, -1 give up */
	pthread_barrier_t barrier; /* the n workers, between timed passes */
} bench_gate;

typedef struct bench_thread {
	bench_gate *gate;
	int cpu;                  /* pin to this CPU; -1 = leave as is */
	const fma_kernel *kernel; /* FMA run, or NULL for a copy */
	uint64_t iters;
	const char *src; /* copy run */
	char *dst;
	size_t bytes;
	int passes;
	double seconds; /* best pass (copy) or the whole run (FMA) */
	double sink;
} bench_thread;

static void pin_self(int cpu)
{
	if (cpu < 0)
		return;
	size_t ncpu = (size_t)cpu + 1;
	cpu_set_t *set = CPU_ALLOC(ncpu);
	if (!set)
		return;
	size_t sz = CPU_ALLOC_SIZE(ncpu);
	CPU_ZERO_S(sz, set);
	CPU_SET_S((size_t)cpu, sz, set);
	/* failure only costs accuracy */
	(void)pthread_setaffinity_np(pthread_self(), sz, set);
	CPU_FREE(set);
}

static void *bench_main(void *arg)
{
	bench_thread *t = arg;
	bench_gate *g = t->gate;
	pin_self(t->cpu);
	pthread_mutex_lock(&g->mu);
	while (g->state == 0)
		pthread_cond_wait(&g->cv, &g->mu);
	int state = g->state;
	pthread_mutex_unlock(&g->mu);
	if (state < 0)
		return NULL;
	if (t->kernel) {
		pthread_barrier_wait(&g->barrier);
		double t0 = cpu_s();
		t->sink += t->kernel->fn(t->iters, 0);
		t->seconds = cpu_s() - t0;
	} else {
		double best = 0;
		for (int i = 0; i < t->passes; i++) {
			/* each pass starts together so that the passes overlap */
			pthread_barrier_wait(&g->barrier);
			double t0 = cpu_s();
			memcpy(t->dst, t->src, t->bytes);
			double dt = cpu_s() - t0;
			if (best == 0 || dt < best)
				best = dt;
			t->sink += (double)t->dst[t->bytes / 2];
		}
		t->seconds = best;
	}
	return NULL;
}

/* Run the workers th[0..n) together; false if they could not all start. */
static bool run_threads(ct_ctx *ctx, bench_thread *th, int n)
{
	bench_gate g;
	g.state = 0;
	if (pthread_barrier_init(&g.barrier, NULL, (unsigned)n) != 0)
		return false;
	pthread_mutex_init(&g.mu, NULL);
	pthread_cond_init(&g.cv, NULL);
	pthread_t *ids = ct_alloc(ctx, (size_t)n * sizeof *ids);
	int started = 0;
	for (int i = 0; ids && i < n; i++) {
		th[i].gate = &g;
		if (pthread_create(&ids[i], NULL, bench_main, &th[i]) != 0)
			break;
		started++;
	}
	pthread_mutex_lock(&g.mu);
	g.state = started == n ? 1 : -1;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	for (int i = 0; i < started; i++)
		pthread_join(ids[i], NULL);
	ct_free(ctx, ids);
	pthread_cond_destroy(&g.cv);
	pthread_mutex_destroy(&g.mu);
	pthread_barrier_destroy(&g.barrier);
	return started == n;
}

/* ------------------------------------------------------------ measurements */

#define FMA_WINDOW 0.010 /* seconds per timing window: 5 windows ~ 50 ms per number */

static void measure_flops(ct_ctx *ctx, ct_probe_info *p, const int *cpus, int ncpus,
                          volatile double *sink)
{
	p->ghz = measure_ghz(sink);
	for (int f64 = 0; f64 <= 1; f64++) {
		fma_kernel k = pick_kernel(p->isa, f64);
		uint64_t iters = calibrate(&k, 0, FMA_WINDOW, sink);
		double rate = best_rate(&k, 0, iters, 5, sink);
		double flops_per_iter = 2.0 * k.lanes * k.nacc;
		double core = rate * flops_per_iter / 1e9;
		if (f64)
			p->gflops_f64_core = core;
		else
			p->gflops_f32_core = core;
		if (!f64 && k.fma && p->ghz > 0 && rate > 0) {
			/* vector FMAs per cycle, and cycles per dependent FMA */
			double units = rate * k.nacc / (p->ghz * 1e9);
			uint64_t liters = calibrate(&k, 1, FMA_WINDOW / 2, sink);
			double lrate = best_rate(&k, 1, liters, 2, sink) * 8.0;
			if (units >= 0.5 && lrate > 0) {
				p->fma_units = (int)(units + 0.5);
				p->fma_latency = (int)(p->ghz * 1e9 / lrate + 0.5);
				if (p->fma_latency < 1)
					p->fma_latency = 1;
				p->fma_source = CT_SRC_MEASURED;
			}
		}
		/* all CPUs we may use, each pinned, about 3 windows long */
		int n = ncpus > 0 ? ncpus : 1;
		bench_thread *th = ct_alloc(ctx, (size_t)n * sizeof *th);
		if (!th)
			return;
		double best = 0;
		for (int w = 0; w < 3; w++) {
			for (int i = 0; i < n; i++) {
				memset(&th[i], 0, sizeof th[i]);
				th[i].cpu = ncpus > 0 ? cpus[i] : -1;
				th[i].kernel = &k;
				th[i].iters = iters;
			}
			if (!run_threads(ctx, th, n))
				break;
			double slowest = 0;
			for (int i = 0; i < n; i++) {
				*sink += th[i].sink;
				if (th[i].seconds > slowest)
					slowest = th[i].seconds;
			}
			double all =
			    slowest > 0 ? (double)n * (double)iters * flops_per_iter / slowest / 1e9
			                : 0;
			if (all > best)
				best = all;
		}
		ct_free(ctx, th);
		p->threads_measured = n;
		if (f64)
			p->gflops_f64_all = best;
		else
			p->gflops_f32_all = best;
	}
}

/* Allocate bytes through the ctx hook without recording an error: the
 * measurements retry smaller when memory is short. */
static void *try_alloc(ct_ctx *ctx, size_t bytes)
{
	return ctx->alloc(ctx->alloc_ud, NULL, bytes);
}

/* Ask for transparent huge pages on buf[0..bytes): a few hundred page faults
 * instead of a hundred thousand to set up the arrays (in a VM the 4 KiB
 * faults cost more than the measurement), and the latencies are those of the
 * caches and memory, not of TLB misses. Only advice: failure changes nothing. */
static void advise_huge(void *buf, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t a = ((uintptr_t)buf + huge - 1) & ~(huge - 1);
	uintptr_t e = ((uintptr_t)buf + bytes) & ~(huge - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
	(void)buf;
	(void)bytes;
#endif
}

/* The last-level cache size used to size the arrays. No cache instance of
 * today's CPUs exceeds 128 MiB; a larger one is a virtual machine's invention
 * and would make the measurement needlessly slow. */
static int64_t llc_bytes(const ct_probe_info *p)
{
	int64_t sz = p->caches[p->ncaches - 1].size;
	return sz < 128 * MIB ? sz : 128 * MIB;
}

/* Size of each copied array: four times the last-level cache, between 32 and
 * 128 MiB, at most 1/16 of RAM. */
static size_t copy_array_bytes(const ct_probe_info *p)
{
	int64_t want = 4 * llc_bytes(p);
	if (want < 32 * MIB)
		want = 32 * MIB;
	if (want > 128 * MIB)
		want = 128 * MIB;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0 && want > (int64_t)pages * psize / 16)
		want = (int64_t)pages * psize / 16;
	return (size_t)(want & ~(4 * KIB - 1));
}

static void measure_bandwidth(ct_ctx *ctx, ct_probe_info *p, const int *cpus, int ncpus,
                              volatile double *sink)
{
	size_t bytes = copy_array_bytes(p);
	char *a = NULL, *b = NULL;
	while (bytes >= 4 * (size_t)MIB) {
		a = try_alloc(ctx, bytes);
		b = a ? try_alloc(ctx, bytes) : NULL;
		if (a && b)
			break;
		ct_free(ctx, a);
		a = NULL;
		bytes /= 2;
	}
	if (!a || !b) {
		ct_free(ctx, a);
		return;
	}
	advise_huge(a, bytes);
	advise_huge(b, bytes);
	/* the source must hold real pages (untouched ones all map the zero
	 * page, which stays in cache); the destination's page faults fall in
	 * the first pass, which the best-of-passes drops */
	memset(a, 1, bytes);
	p->copy_bytes = (int64_t)bytes;

	bench_thread one;
	memset(&one, 0, sizeof one);
	one.cpu = -1;
	one.src = a;
	one.dst = b;
	one.bytes = bytes;
	one.passes = 3;
	if (run_threads(ctx, &one, 1) && one.seconds > 0)
		p->copy_gbs_core = 2.0 * (double)bytes / one.seconds / 1e9;
	*sink += one.sink;

	int n = ncpus > 0 ? ncpus : 1;
	bench_thread *th = ct_alloc(ctx, (size_t)n * sizeof *th);
	if (th) {
		size_t slice = (bytes / (size_t)n) & ~(size_t)63;
		for (int i = 0; i < n; i++) {
			th[i].cpu = ncpus > 0 ? cpus[i] : -1;
			th[i].src = a + (size_t)i * slice;
			th[i].dst = b + (size_t)i * slice;
			th[i].bytes = slice;
			th[i].passes = 2;
		}
		if (slice > 0 && run_threads(ctx, th, n)) {
			double slowest = 0;
			for (int i = 0; i < n; i++) {
				*sink += th[i].sink;
				if (th[i].seconds > slowest)
					slowest = th[i].seconds;
			}
			if (slowest > 0)
				p->copy_gbs_all = 2.0 * (double)slice * n / slowest / 1e9;
		}
		ct_free(ctx, th);
	}
	ct_free(ctx, b);
	ct_free(ctx, a);
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Nanoseconds per load of a pointer chase through one random cycle over the
 * lines of buf[0..bytes): every load depends on the previous one and the
 * order defeats the prefetchers, so this is the load-to-use latency of
 * whichever level holds bytes. perm has room for bytes / line entries. */
static double chase_ns(char *buf, size_t bytes, size_t line, uint32_t *perm, double budget,
                       bool warm, volatile double *sink)
{
	size_t n = bytes / line;
	if (n < 4)
		return 0;
	/* a random order of the lines (Fisher-Yates on a compact index array,
	 * cheap where shuffling the lines themselves costs a miss per swap),
	 * then each line points to the next one in that order */
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	uint64_t rng = 0x6361636865740001ull;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(splitmix64(&rng) % (i + 1));
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*(char **)(buf + (size_t)perm[i] * line) = buf + (size_t)perm[(i + 1) % n] * line;
	void *const *q = (void *const *)(buf + (size_t)perm[0] * line);
	if (warm)
		for (size_t i = 0; i < n; i++)
			q = (void *const *)*q;
	uint64_t steps = 0;
	double t0 = cpu_s(), dt;
	do {
		for (int k = 0; k < 1024; k++)
			q = (void *const *)*q;
		steps += 1024;
		dt = cpu_s() - t0;
	} while (dt < budget);
	*sink += (double)(uintptr_t)q;
	return dt / (double)steps * 1e9;
}

/* Levels are measured over half their size (fits the level, mostly misses
 * the one above), at most 32 MiB; memory over twice the last-level cache,
 * between 64 and 128 MiB. */
static void measure_latency(ct_ctx *ctx, ct_probe_info *p, volatile double *sink)
{
	size_t line = (size_t)p->caches[0].line;
	if (line < sizeof(void *) || (line & (line - 1)))
		line = 64;
	int64_t mem = 2 * llc_bytes(p);
	if (mem < 64 * MIB)
		mem = 64 * MIB;
	if (mem > 128 * MIB)
		mem = 128 * MIB;
	char *raw = try_alloc(ctx, (size_t)mem + line);
	uint32_t *perm = raw ? try_alloc(ctx, (size_t)mem / line * sizeof *perm) : NULL;
	if (!raw || !perm) {
		ct_free(ctx, raw);
		return;
	}
	advise_huge(raw, (size_t)mem + line);
	advise_huge(perm, (size_t)mem / line * sizeof *perm);
	char *buf = (char *)(((uintptr_t)raw + line - 1) & ~(uintptr_t)(line - 1));
	for (int i = 0; i < p->ncaches; i++) {
		int64_t sz = p->caches[i].size / 2;
		if (sz > 32 * MIB)
			sz = 32 * MIB;
		p->caches[i].latency_ns = chase_ns(buf, (size_t)sz, line, perm, 0.005, true, sink);
	}
	p->mem_latency_ns = chase_ns(buf, (size_t)mem, line, perm, 0.015, false, sink);
	ct_free(ctx, perm);
	ct_free(ctx, raw);
}

/* Run the microbenchmarks in what; CT_ERR_NOMEM if even the small
 * bookkeeping cannot be allocated (big buffers retry smaller, or skip). */
static ct_status probe_measure(ct_ctx *ctx, ct_probe_info *p, unsigned what)
{
	double t0 = now_s();
	/* volatile: every benchmark result flows here, so none is optimised away */
	volatile double sink = 0;
	int ncpus = p->cpus_allowed > 0 ? p->cpus_allowed : 1;
	if (ncpus > 1024)
		ncpus = 1024;
	int *cpus = ct_alloc(ctx, (size_t)ncpus * sizeof *cpus);
	if (!cpus)
		return CT_ERR_NOMEM;
	int got = allowed_cpus(cpus, ncpus);
	if (got < ncpus)
		ncpus = got > 0 ? got : 0;
	if (what & CT_PROBE_MEASURE_FLOPS)
		measure_flops(ctx, p, cpus, ncpus, &sink);
	if (what & CT_PROBE_MEASURE_BANDWIDTH)
		measure_bandwidth(ctx, p, cpus, ncpus, &sink);
	if (what & CT_PROBE_MEASURE_LATENCY)
		measure_latency(ctx, p, &sink);
	ct_free(ctx, cpus);
	p->measured |= what;
	p->measure_seconds += now_s() - t0;
	return CT_OK;
}

/* ------------------------------------------------------------ the ctx's target */

static void probe_cleanup(ct_ctx *ctx)
{
	ct_free(ctx, ctx->target);
	ctx->target = NULL;
}

/* Detect afresh into the ctx's target. A re-probe overwrites the struct in
 * place, so that pointers other modules took from tune_target stay valid. */
static ct_probe_info *probe_fresh(ct_ctx *ctx, unsigned flags)
{
	if (ctx->target) {
		probe_detect(flags, ctx->target);
		return ctx->target;
	}
	ct_probe_info *p = ct_alloc(ctx, sizeof *p);
	if (!p)
		return NULL;
	probe_detect(flags, p);
	if (!ct_ctx_on_free(ctx, probe_cleanup)) {
		ct_free(ctx, p);
		ct_error(ctx, CT_ERR_LIMIT, "too many context cleanups: cannot keep the probe");
		return NULL;
	}
	ctx->target = p;
	return p;
}

const ct_probe_info *tune_target(ct_ctx *ctx)
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
	if (missing && probe_measure(ctx, p, missing) != CT_OK)
		return ct_ctx_last_status(ctx);
	if ((flags & CT_PROBE_OPENCL) && !p->opencl_probed) {
		ct_status st = ocl_list_devices(ctx, p->opencl, CT_PROBE_MAX_OPENCL, &p->nopencl);
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
	const ct_probe_info *p = tune_target(ctx);
	return p ? p->device_id : NULL;
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
	const ct_probe_info *p = tune_target(ctx);
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
