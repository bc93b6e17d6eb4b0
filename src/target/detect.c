/* detect.c: what the target is, detected without measuring: cores, caches (hwloc, sysfs, cpuid), vector ISA, the device identity. */
#include "target/target.h"
#include "target/target_int.h"

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

/* ------------------------------------------------------------ small helpers */

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

void target_sanitize(const char *s, char *out, size_t n)
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

int target_caches_sysfs(const char *dir, ct_cache_level *out, int max)
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
    {1, 32 * KIB, 64, 8, 1, 0, 0.0, CT_SRC_DEFAULT, 0},
    {2, 1 * MIB, 64, 16, 1, 0, 0.0, CT_SRC_DEFAULT, 0},
    {3, 16 * MIB, 64, 16, 0, 0, 0.0, CT_SRC_DEFAULT, 0},
};

/* CPUs this process may run on; fills cpus[0..max) with their numbers. */
int target_allowed_cpus(int *cpus, int max)
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
		target_sanitize(p->vendor, vendor, sizeof vendor);
	target_sanitize(p->model, model, sizeof model);
	snprintf(p->device_id, sizeof p->device_id, "%s-%s-%dc", vendor, model, p->cores);

	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(
	    &b, "cachet=%s;arch=%s;vendor=%s;model=%s;signature=%d.%d.%d;cores=%d;threads=%d;isa=",
	    CACHET_VERSION, p->arch, p->vendor, p->model, p->family, p->model_number, p->stepping,
	    p->cores, p->hw_threads);
	bool first = true;
	/* bits in ascending order: the order of the names' table (target.c) */
	for (int s = 0; s < 32; s++) {
		uint32_t bit = (uint32_t)1 << s;
		if ((p->isa & bit) && *ct_isa_name(bit)) {
			ct_buf_printf(&b, "%s%s", first ? "" : ",", ct_isa_name(bit));
			first = false;
		}
	}
	ct_buf_puts(&b, ";caches=");
	for (int i = 0; i < p->ncaches; i++)
		ct_buf_printf(&b, "%sL%d:%lld/%d/%d", i ? "," : "", p->caches[i].level,
		              (long long)p->caches[i].size, p->caches[i].line, p->caches[i].ways);
	snprintf(p->identity, sizeof p->identity, "%s", b.s && !b.failed ? b.s : "");
	ct_buf_free(&b);
}

/* Fill p with everything that costs no measurement. */
void target_detect(unsigned flags, ct_probe_info *p)
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
		p->ncaches = target_caches_sysfs("/sys/devices/system/cpu/cpu0/cache", p->caches,
		                               CT_PROBE_MAX_CACHES);
	if (p->hw_threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		p->hw_threads = n > 0 ? (int)n : 1;
		p->cores = p->hw_threads;
		p->cores_source = n > 0 ? CT_SRC_OS : CT_SRC_DEFAULT;
	}
	int allowed = target_allowed_cpus(NULL, 0);
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
