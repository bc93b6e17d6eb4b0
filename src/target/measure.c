/* measure.c: the target's measured microbenchmarks: FMA throughput and latency per core and machine, memory bandwidth, cache and memory latency. */
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

/* ------------------------------------------------------------ timers */

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

/* A buffer for pointer chases over up to bytes, its lines line bytes (a
 * power of two, at least a pointer; 64 otherwise), line-aligned, with the
 * index array chase_ns shuffles; huge pages asked for both. */
typedef struct chase_buf {
	char *raw, *buf;
	uint32_t *perm;
	size_t line;
} chase_buf;

static bool chase_buf_alloc(ct_ctx *ctx, chase_buf *c, int64_t bytes, int line)
{
	c->line = (size_t)line;
	if (c->line < sizeof(void *) || (c->line & (c->line - 1)))
		c->line = 64;
	c->raw = try_alloc(ctx, (size_t)bytes + c->line);
	c->perm = c->raw ? try_alloc(ctx, (size_t)bytes / c->line * sizeof *c->perm) : NULL;
	if (!c->raw || !c->perm) {
		ct_free(ctx, c->raw);
		return false;
	}
	advise_huge(c->raw, (size_t)bytes + c->line);
	advise_huge(c->perm, (size_t)bytes / c->line * sizeof *c->perm);
	c->buf = (char *)(((uintptr_t)c->raw + c->line - 1) & ~(uintptr_t)(c->line - 1));
	return true;
}

static void chase_buf_free(ct_ctx *ctx, chase_buf *c)
{
	ct_free(ctx, c->perm);
	ct_free(ctx, c->raw);
}

/* Levels are measured over half their size (fits the level, mostly misses
 * the one above), at most 32 MiB; memory over twice the last-level cache,
 * between 64 and 128 MiB. */
static void measure_latency(ct_ctx *ctx, ct_probe_info *p, volatile double *sink)
{
	int64_t mem = 2 * llc_bytes(p);
	if (mem < 64 * MIB)
		mem = 64 * MIB;
	if (mem > 128 * MIB)
		mem = 128 * MIB;
	chase_buf c;
	if (!chase_buf_alloc(ctx, &c, mem, p->caches[0].line))
		return;
	for (int i = 0; i < p->ncaches; i++) {
		int64_t sz = p->caches[i].size / 2;
		if (sz > 32 * MIB)
			sz = 32 * MIB;
		p->caches[i].latency_ns = chase_ns(c.buf, (size_t)sz, c.line, c.perm, 0.005, true, sink);
	}
	p->mem_latency_ns = chase_ns(c.buf, (size_t)mem, c.line, c.perm, 0.015, false, sink);
	chase_buf_free(ctx, &c);
}

/* The last level's usable size. A virtual machine may pass on sizes no core
 * can use: a KVM guest of a Zen 5 host reports 508 MiB of L3 private to
 * each core, where a chase over 32 MiB already runs at memory latency, and
 * a Zen 4 guest reports 32 MiB where 8 MiB does (bench/RESULTS.md,
 * 2026-12-01). So chase once over a size surely beyond the level (twice the
 * reported size, 128 MiB at most: beyond that no cache of today's CPUs
 * reaches) for the memory latency, then over sizes doubling from twice the
 * level below, up to half the reported size, and stop at the first one
 * whose latency is past the middle of the level's (the first chase's) and
 * memory's: a level that holds the chase rises only slowly with its size
 * (TLB misses), a miss to memory costs several times a hit. The usable
 * size is the last size that stayed below the middle (so at most a factor
 * 2 under the true one), kept only when it is under half the reported one
 * (a level that works as reported keeps the reported figure exactly), and
 * only when memory is clearly slower than the level (CAPACITY_STEP). Each
 * size takes the least of CAPACITY_TRIES chases: another guest sharing the
 * level only adds misses, and at a size near the level's the single chases
 * of that Zen 4 guest over 8 MiB took 22 to 117 ns (the least of three gave
 * 8 MiB in 6 runs of 6 there, a single chase 4 or 8). */
#define CAPACITY_STEP 2.0
#define CAPACITY_MAX (128 * MIB)
#define CAPACITY_TRIES 3

/* The least of CAPACITY_TRIES warm chases over bytes of c. */
static double chase_least_ns(const chase_buf *c, int64_t bytes, volatile double *sink)
{
	double least = 0;
	for (int t = 0; t < CAPACITY_TRIES; t++) {
		double ns = chase_ns(c->buf, (size_t)bytes, c->line, c->perm, 0.005, true, sink);
		if (t == 0 || ns < least)
			least = ns;
	}
	return least;
}

static void measure_capacity(ct_ctx *ctx, ct_probe_info *p, volatile double *sink)
{
	if (p->ncaches < 2)
		return;
	ct_cache_level *last = &p->caches[p->ncaches - 1];
	int64_t first = 2 * p->caches[p->ncaches - 2].size, top = last->size / 2;
	int64_t beyond = last->size < CAPACITY_MAX / 2 ? 2 * last->size : CAPACITY_MAX;
	if (top > CAPACITY_MAX)
		top = CAPACITY_MAX;
	if (first <= 0 || 2 * first > top)
		return;
	chase_buf c;
	if (!chase_buf_alloc(ctx, &c, beyond, last->line))
		return;
	/* memory: no warm-up pass (a pass over 128 MiB at memory latency takes 0.3 s) */
	double mem = chase_ns(c.buf, (size_t)beyond, c.line, c.perm, 0.005, false, sink);
	double base = chase_least_ns(&c, first, sink);
	int64_t held = 0;
	if (base > 0 && mem > CAPACITY_STEP * base) {
		double mid = (base + mem) / 2;
		held = first;
		for (int64_t sz = 2 * first; sz <= top; sz *= 2) {
			if (chase_least_ns(&c, sz, sink) > mid)
				break;
			held = sz;
		}
	}
	chase_buf_free(ctx, &c);
	if (held > 0 && held < last->size / 2) {
		last->reported_size = last->size;
		last->size = held;
		last->source = CT_SRC_MEASURED;
	}
}

/* Run the microbenchmarks in what; CT_ERR_NOMEM if even the small
 * bookkeeping cannot be allocated (big buffers retry smaller, or skip). */
ct_status target_measure(ct_ctx *ctx, ct_probe_info *p, unsigned what)
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
	int got = target_allowed_cpus(cpus, ncpus);
	if (got < ncpus)
		ncpus = got > 0 ? got : 0;
	if (what & CT_PROBE_MEASURE_FLOPS)
		measure_flops(ctx, p, cpus, ncpus, &sink);
	/* before the others that size their arrays by the last level */
	if (what & CT_PROBE_MEASURE_CAPACITY)
		measure_capacity(ctx, p, &sink);
	if (what & CT_PROBE_MEASURE_BANDWIDTH)
		measure_bandwidth(ctx, p, cpus, ncpus, &sink);
	if (what & CT_PROBE_MEASURE_LATENCY)
		measure_latency(ctx, p, &sink);
	ct_free(ctx, cpus);
	p->measured |= what;
	p->measure_seconds += now_s() - t0;
	return CT_OK;
}
