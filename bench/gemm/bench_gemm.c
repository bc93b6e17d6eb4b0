/* bench_gemm.c: cachet's generated sgemm/dgemm vs OpenBLAS on 1 and 2 threads, as a table. */
#include <cachet.h>
#include <cblas.h>
#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_kernel.h"
#include "../common/bench_util.h"

/*
 * Usage: bench_gemm [--big] [--threads LIST] [--shapes LIST] [--small-only]
 *                  [--pairs] [--openblas-coretype NAME]
 * (run from the repository root; --small-only: only the LIBXSMM table;
 * --pairs: the LIBXSMM table times cachet and LIBXSMM in 21 alternating
 * rounds of ~0.03 s, times and ratio the medians over the rounds, which a
 * change of the machine's load biases less)
 * --shapes replaces the default shapes by LIST: comma-separated N (N x N x N)
 * or MxNxK.
 * For each thread count of LIST (comma-separated, default 1,2), shape and
 * type: the example kernel with M, N, K overridden, its C compiled with
 * -fopenmp and loaded through the code cache (a compile on the first run,
 * a disk hit later), its parallel loops set to the thread count
 * (cachet_NAME_set_threads), then C += A * B timed for cachet and for
 * OpenBLAS (cblas_?gemm, row-major, openblas_set_num_threads) on the same
 * inputs, one after the other. A measurement is enough back-to-back runs to
 * last >= 0.2 s; the median of NMEAS is shown. cachet's result is checked
 * against OpenBLAS's from the same C, with the verification tolerance of
 * the type (ct_dtype_tolerance). % of peak is of the FMA peak that
 * ct_probe_run measures at the start: one core's for 1 thread, all
 * threads' together otherwise. Waiting OpenMP threads spin a bounded time, then sleep, unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set.
 * The LIBXSMM table (sizes <= 128) runs examples/sgemm_small.cachet and
 * dgemm_small.cachet, or the files that BENCH_SMALL_F32 and
 * BENCH_SMALL_F64 name (variants measured against LIBXSMM in one run).
 * The peers at their best, whatever the environment says: OpenBLAS with the
 * kernel set that computes correctly and fastest here (bench_openblas_at_best;
 * --openblas-coretype NAME fixes it), LIBXSMM with its own target pick
 * (every LIBXSMM_* variable removed); the header says both, and the
 * environment's values.
 */

#define NMEAS 5
#define MIN_SECONDS 0.2

typedef bench_entry_fn entry_fn;
typedef bench_threads_fn threads_fn;

typedef struct shape {
	int64_t m, n, k;
} shape;

/* One problem: the buffers both sides use, and what to call. */
typedef struct problem {
	ct_dtype t;
	shape s;
	void *a, *b, *c;
	entry_fn entry;     /* cachet's entry point */
	int64_t params[16]; /* the kernel's params in declaration order */
#ifdef HAVE_LIBXSMM
	libxsmm_smmfunction xs; /* LIBXSMM's kernel of the shape (f32 or f64) */
	libxsmm_dmmfunction xd;
#endif
} problem;

static void run_cachet(const problem *p)
{
	void *const args[3] = {p->a, p->b, p->c};
	p->entry(args, p->params);
}

static void run_blas(const problem *p)
{
	int m = (int)p->s.m, n = (int)p->s.n, k = (int)p->s.k;
	if (p->t == CT_F32)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, p->a, k, p->b,
		            n, 1.0f, p->c, n);
	else
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, p->a, k, p->b,
		            n, 1.0, p->c, n);
}

/* Median seconds of one call of fn, over NMEAS measurements of >= MIN_SECONDS
 * each (C keeps accumulating; inputs in [-1, 1] keep it finite). */
static double time_it(void (*fn)(const problem *), const problem *p)
{
	double t0 = now();
	fn(p); /* warm-up, and a first estimate */
	double one = now() - t0;
	long reps = one > 0 ? (long)ceil(MIN_SECONDS / one) : 1000;
	if (reps < 1)
		reps = 1;
	double v[NMEAS];
	for (int i = 0; i < NMEAS; i++) {
		t0 = now();
		for (long r = 0; r < reps; r++)
			fn(p);
		v[i] = (now() - t0) / (double)reps;
	}
	return median(v, NMEAS);
}

/* --pairs: fa and fb timed in NPAIRS alternating rounds of about PAIR_SECONDS
 * each (fa then fb), so that a change of the machine's load hits both; the
 * medians of the per-round times into *ta, *tb and of the per-round ratios
 * tb / ta into *ratio. */
#define NPAIRS 21
#define PAIR_SECONDS 0.03
static int use_pairs;

#ifdef HAVE_LIBXSMM
static double time_reps(void (*fn)(const problem *), const problem *p, long reps)
{
	double t0 = now();
	for (long r = 0; r < reps; r++)
		fn(p);
	return (now() - t0) / (double)reps;
}

static void time_pair(void (*fa)(const problem *), const problem *pa, void (*fb)(const problem *),
                      const problem *pb, double *ta, double *tb, double *ratio)
{
	double one = time_reps(fa, pa, 1);
	time_reps(fb, pb, 1);
	long reps = one > 0 ? (long)ceil(PAIR_SECONDS / one) : 1000;
	if (reps < 1)
		reps = 1;
	double va[NPAIRS], vb[NPAIRS], vr[NPAIRS];
	for (int i = 0; i < NPAIRS; i++) {
		va[i] = time_reps(fa, pa, reps);
		vb[i] = time_reps(fb, pb, reps);
		vr[i] = vb[i] / va[i];
	}
	*ta = median(va, NPAIRS);
	*tb = median(vb, NPAIRS);
	*ratio = median(vr, NPAIRS);
}
#endif

static void *alloc_buf(size_t bytes)
{
	size_t rounded = (bytes + 63) / 64 * 64;
	return aligned_alloc(64, rounded ? rounded : 64);
}

/* Load the example of type t with sizes s; returns its entry point and fills
 * params, NULL (a message printed) on error. */
static entry_fn load_kernel_from(ct_ctx *ctx, const char *path, shape s, int64_t *params, int maxp,
                                 const char **how, double *load_s, threads_fn *set_threads);

static entry_fn load_kernel(ct_ctx *ctx, ct_dtype t, shape s, int64_t *params, int maxp,
                            const char **how, double *load_s, threads_fn *set_threads)
{
	const char *path = t == CT_F32 ? "examples/sgemm.cachet" : "examples/dgemm.cachet";
	return load_kernel_from(ctx, path, s, params, maxp, how, load_s, set_threads);
}

/* As load_kernel, from the example at path. */
static entry_fn load_kernel_from(ct_ctx *ctx, const char *path, shape s, int64_t *params, int maxp,
                                 const char **how, double *load_s, threads_fn *set_threads)
{
	ct_kernel *k = ct_kernel_parse_file(ctx, path);
	if (!k) {
		fprintf(stderr, "bench: %s: %s (run from the repository root)\n", path,
		        ct_ctx_last_message(ctx));
		return NULL;
	}
	char *src = NULL;
	entry_fn fn = NULL;
	if (ct_kernel_set_param(k, "M", s.m) != CT_OK ||
	    ct_kernel_set_param(k, "N", s.n) != CT_OK ||
	    ct_kernel_set_param(k, "K", s.k) != CT_OK || ct_kernel_recheck(k) != CT_OK ||
	    ct_kernel_param_count(k) > maxp || !(src = ct_kernel_emit(k, NULL, NULL))) {
		fprintf(stderr, "bench: %s: %s\n", path, ct_ctx_last_message(ctx));
		goto out;
	}
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		params[i] = ct_kernel_param_value(k, i, NULL);
	ct_load_info info;
	fn = bench_load_entry(ctx, k, src, path, set_threads, &info);
	if (fn) {
		*how = info.how;
		*load_s = info.seconds;
	}
out:
	free(src);
	ct_kernel_free(k);
	return fn;
}

/* Benchmark one shape and type; prints one row. Returns 0 ok, 1 mismatch,
 * -1 error. */
static int bench_one(ct_ctx *ctx, const ct_probe_info *pi, ct_dtype t, shape s, int threads,
                     double *compile_s)
{
	size_t es = ct_dtype_size(t);
	int64_t na = s.m * s.k, nb = s.k * s.n, nc = s.m * s.n;
	problem p = {.t = t, .s = s};
	const char *how = "";
	double load_s = 0;
	threads_fn set_threads = NULL;
	p.entry = load_kernel(ctx, t, s, p.params, 16, &how, &load_s, &set_threads);
	if (!p.entry)
		return -1;
	if (set_threads)
		set_threads(threads);
	openblas_set_num_threads(threads);
	if (strcmp(how, "compiled") == 0)
		*compile_s += load_s;
	void *c0 = alloc_buf((size_t)nc * es), *c_blas = alloc_buf((size_t)nc * es);
	p.a = alloc_buf((size_t)na * es);
	p.b = alloc_buf((size_t)nb * es);
	p.c = alloc_buf((size_t)nc * es);
	if (!c0 || !c_blas || !p.a || !p.b || !p.c) {
		fprintf(stderr, "bench: out of memory\n");
		return -1;
	}
	ct_fill_random(p.a, t, na, 1, 0);
	ct_fill_random(p.b, t, nb, 1, 1);
	ct_fill_random(c0, t, nc, 1, 2);

	/* correctness: one run of each from the same C */
	memcpy(p.c, c0, (size_t)nc * es);
	run_cachet(&p);
	void *c_cachet = p.c;
	p.c = c_blas;
	memcpy(p.c, c0, (size_t)nc * es);
	run_blas(&p);
	double err = ct_max_rel_error(c_cachet, c_blas, t, nc);
	int ok = err <= ct_dtype_tolerance(t);

	/* speed: each side on its own copy of C */
	double tb = time_it(run_blas, &p);
	p.c = c_cachet;
	double tc = time_it(run_cachet, &p);

	double flop = 2.0 * (double)s.m * (double)s.n * (double)s.k;
	double gc = flop / tc * 1e-9, gb = flop / tb * 1e-9;
	double peak = threads == 1 ? (t == CT_F32 ? pi->gflops_f32_core : pi->gflops_f64_core)
	                           : (t == CT_F32 ? pi->gflops_f32_all : pi->gflops_f64_all);
	char name[64];
	if (s.m == s.n && s.n == s.k)
		snprintf(name, sizeof name, "%lld", (long long)s.m);
	else
		snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)s.m, (long long)s.n,
		         (long long)s.k);
	printf("%-16s %-4s %3d %10.2f %10.2f %7.2f %9.1f%% %9.1f%% %10.2e  %s\n", name,
	       ct_dtype_name(t), threads, gc, gb, gc / gb, peak > 0 ? 100 * gc / peak : 0.0,
	       peak > 0 ? 100 * gb / peak : 0.0, err, ok ? "ok" : "MISMATCH");
	fflush(stdout);
	free(c0);
	free(c_blas);
	free(c_cachet);
	free(p.a);
	free(p.b);
	return ok ? 0 : 1;
}

#ifdef HAVE_LIBXSMM
/* LIBXSMM's kernel: row-major C += A B computed as the column-major
 * C^T += B^T A^T. */
static void run_xsmm(const problem *p)
{
	if (p->t == CT_F32)
		p->xs(p->b, p->a, p->c);
	else
		p->xd(p->b, p->a, p->c);
}

/* cachet on 1 thread vs LIBXSMM's JIT kernel for one small shape; one row.
 * 0 ok, 1 mismatch, -1 error. */
static int bench_xsmm(ct_ctx *ctx, const ct_probe_info *pi, ct_dtype t, shape s)
{
	size_t es = ct_dtype_size(t);
	int64_t na = s.m * s.k, nb = s.k * s.n, nc = s.m * s.n;
	problem p = {.t = t, .s = s};
	const char *how = "";
	double load_s = 0;
	threads_fn set_threads = NULL;
	/* BENCH_SMALL_F32 / BENCH_SMALL_F64 name another kernel file (A/B runs of variants) */
	const char *path = getenv(t == CT_F32 ? "BENCH_SMALL_F32" : "BENCH_SMALL_F64");
	if (!path || !*path)
		path = t == CT_F32 ? "examples/sgemm_small.cachet" : "examples/dgemm_small.cachet";
	p.entry = load_kernel_from(ctx, path, s, p.params, 16, &how, &load_s, &set_threads);
	if (!p.entry)
		return -1;
	if (set_threads)
		set_threads(1);
	openblas_set_num_threads(1);
	libxsmm_blasint m = (libxsmm_blasint)s.n, n = (libxsmm_blasint)s.m, k = (libxsmm_blasint)s.k;
	libxsmm_blasint lda = m, ldb = k, ldc = m;
	int flags = LIBXSMM_GEMM_FLAG_NONE;
	if (t == CT_F32) {
		float alpha = 1, beta = 1;
		p.xs = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
	} else {
		double alpha = 1, beta = 1;
		p.xd = libxsmm_dmmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
	}
	if (!p.xs && !p.xd) {
		fprintf(stderr, "bench: libxsmm has no kernel for %lldx%lldx%lld\n", (long long)s.m,
		        (long long)s.n, (long long)s.k);
		return -1;
	}
	void *c0 = alloc_buf((size_t)nc * es), *c_blas = alloc_buf((size_t)nc * es),
	     *c_x = alloc_buf((size_t)nc * es);
	p.a = alloc_buf((size_t)na * es);
	p.b = alloc_buf((size_t)nb * es);
	p.c = alloc_buf((size_t)nc * es);
	if (!c0 || !c_blas || !c_x || !p.a || !p.b || !p.c) {
		fprintf(stderr, "bench: out of memory\n");
		return -1;
	}
	ct_fill_random(p.a, t, na, 1, 0);
	ct_fill_random(p.b, t, nb, 1, 1);
	ct_fill_random(c0, t, nc, 1, 2);
	/* correctness: cachet and LIBXSMM each against OpenBLAS from the same C */
	void *c_cachet = p.c;
	memcpy(c_cachet, c0, (size_t)nc * es);
	run_cachet(&p);
	p.c = c_blas;
	memcpy(c_blas, c0, (size_t)nc * es);
	run_blas(&p);
	p.c = c_x;
	memcpy(c_x, c0, (size_t)nc * es);
	run_xsmm(&p);
	double err = ct_max_rel_error(c_cachet, c_blas, t, nc), errx = ct_max_rel_error(c_x, c_blas, t, nc);
	int ok = err <= ct_dtype_tolerance(t) && errx <= ct_dtype_tolerance(t);
	double tx, tc, ratio;
	if (use_pairs) {
		problem px = p;
		p.c = c_cachet;
		time_pair(run_xsmm, &px, run_cachet, &p, &tx, &tc, &ratio);
		ratio = 1 / ratio;
	} else {
		tx = time_it(run_xsmm, &p);
		p.c = c_cachet;
		tc = time_it(run_cachet, &p);
		ratio = tx / tc;
	}
	double flop = 2.0 * (double)s.m * (double)s.n * (double)s.k;
	double gc = flop / tc * 1e-9, gx = flop / tx * 1e-9;
	double peak = t == CT_F32 ? pi->gflops_f32_core : pi->gflops_f64_core;
	printf("%-16lld %-4s %3d %10.2f %10.2f %7.3f %9.1f%% %9.1f%% %10.2e %10.2e  %s\n", (long long)s.m,
	       ct_dtype_name(t), 1, gc, gx, ratio, peak > 0 ? 100 * gc / peak : 0.0,
	       peak > 0 ? 100 * gx / peak : 0.0, err, errx, ok ? "ok" : "MISMATCH");
	fflush(stdout);
	free(c0);
	free(c_blas);
	free(c_x);
	free(c_cachet);
	free(p.a);
	free(p.b);
	return ok ? 0 : 1;
}

/* The LIBXSMM table: square sizes <= 128 of the run, f32 and f64, 1 thread.
 * Returns the number of mismatches, -1 on error; *rows counts the rows. */
static int xsmm_table(ct_ctx *ctx, const ct_probe_info *pi, const shape *shapes, int nshapes,
                      int *rows)
{
	libxsmm_init();
	printf("\nsmall gemm: cachet (examples/sgemm_small|dgemm_small.cachet: register tiles, no "
	       "packing) vs LIBXSMM %s (JIT kernel from libxsmm_?mmdispatch, C^T += B^T A^T "
	       "column-major = row-major C += A B), 1 thread, square sizes <= 128; err = max "
	       "relative error vs OpenBLAS\n",
	       LIBXSMM_VERSION);
	const char *had = getenv("CACHET_BENCH_ENV_LIBXSMM");
	printf("peer: LIBXSMM %s, JIT target %s (its own pick from CPUID, default prefetch: the "
	       "LIBXSMM_* variables removed; environment had %s)\n\n",
	       LIBXSMM_VERSION, libxsmm_get_target_arch(), had ? had : "none");
	printf("%-16s %-4s %3s %10s %10s %7s %10s %10s %10s %10s\n", "size (MxNxK)", "type", "thr",
	       "cachet", "libxsmm", "ratio", "cachet", "libxsmm", "err", "err");
	printf("%-16s %-4s %3s %10s %10s %7s %10s %10s %10s %10s\n", "", "", "", "GFLOP/s",
	       "GFLOP/s", "", "% peak", "% peak", "cachet", "libxsmm");
	int bad = 0;
	for (int i = 0; i < nshapes; i++) {
		shape s = shapes[i];
		if (s.m != s.n || s.n != s.k || s.m > 128)
			continue;
		for (int ti = 0; ti < 2; ti++) {
			int r = bench_xsmm(ctx, pi, ti == 0 ? CT_F32 : CT_F64, s);
			if (r < 0)
				return -1;
			bad += r;
			(*rows)++;
		}
	}
	libxsmm_finalize();
	return bad;
}
#endif

/* LIBXSMM at its own defaults, whatever the environment says: LIBXSMM_TARGET would override its
 * target pick (the newest instruction set it knows that the CPU has), LIBXSMM_GEMM_PREFETCH its
 * prefetch strategy, and the other LIBXSMM_* variables its allocator and diagnostics; every one
 * is removed, "NAME=VALUE ..." kept in CACHET_BENCH_ENV_LIBXSMM for the table's header. Once,
 * before the re-execution (LIBXSMM may read them when it loads). */
static void xsmm_env_off(void)
{
	extern char **environ;
	if (getenv("CACHET_BENCH_OPENBLAS_PICKED"))
		return;
	char had[1024] = "", name[128];
	size_t len = 0;
	for (int again = 1; again;) {
		again = 0;
		for (char **e = environ; *e; e++) {
			const char *eq = strchr(*e, '=');
			if (strncmp(*e, "LIBXSMM_", 8) != 0 || !eq || (size_t)(eq - *e) >= sizeof name)
				continue;
			int w = snprintf(had + len, sizeof had - len, "%s%s", len ? " " : "", *e);
			if (w > 0 && len + (size_t)w < sizeof had)
				len += (size_t)w;
			snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
			unsetenv(name); /* environ changes: scan it again */
			again = 1;
			break;
		}
	}
	setenv("CACHET_BENCH_ENV_LIBXSMM", len ? had : "none", 1);
}

/* "N" or "MxNxK" items, comma-separated, into out (at most max); the count, 0 on error. */
static int parse_shapes(const char *s, shape *out, int max)
{
	int n = 0;
	while (*s && n < max) {
		long long v[3];
		int got = 0;
		char *end = NULL;
		while (got < 3) {
			v[got] = strtoll(s, &end, 10);
			if (end == s || v[got] < 1 || v[got] > 65536)
				return 0;
			got++;
			s = end;
			if (*s != 'x')
				break;
			s++;
		}
		if (got == 2 || (*s && *s != ','))
			return 0;
		out[n++] = got == 1 ? (shape){v[0], v[0], v[0]} : (shape){v[0], v[1], v[2]};
		if (*s)
			s++;
	}
	return *s ? 0 : n;
}

int main(int argc, char **argv)
{
	/* as the cachet CLI: waiting OpenMP threads spin a bounded time, then
	 * sleep (ct_threads_wait_default); set before the first kernel loads libgomp */
	ct_threads_wait_default();
	xsmm_env_off();                      /* before the re-execution: LIBXSMM reads it at load */
	argc = bench_openblas_at_best(argc, argv); /* the peer at its best, whatever the environment says */
	int big = 0, small_only = 0, threads[8] = {1, 2}, nthreads = 2, nuser = 0;
	shape user[16];
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--big") == 0) {
			big = 1;
		} else if (strcmp(argv[i], "--small-only") == 0) {
			small_only = 1;
		} else if (strcmp(argv[i], "--pairs") == 0) {
			use_pairs = 1;
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			nthreads = 0;
			for (char *q = argv[++i]; *q && nthreads < 8;) {
				char *end;
				long v = strtol(q, &end, 10);
				if (end == q || v < 1 || v > 4096 || (*end && *end != ',')) {
					nthreads = 0;
					break;
				}
				threads[nthreads++] = (int)v;
				q = *end ? end + 1 : end;
			}
			if (nthreads == 0) {
				fprintf(stderr, "usage: bench_gemm [--big] [--threads 1,2]\n");
				return 2;
			}
		} else if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
			nuser = parse_shapes(argv[++i], user, 16);
			if (nuser == 0) {
				fprintf(stderr, "usage: bench_gemm [--shapes 1000,2048x32x2048]\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bench_gemm [--big] [--threads 1,2] [--shapes LIST] [--small-only] [--pairs] [--openblas-coretype NAME]\n");
			return 2;
		}
	}
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	ct_probe_info pi;
	if (ct_probe_run(ctx, CT_PROBE_MEASURE_FLOPS, &pi) != CT_OK) {
		fprintf(stderr, "bench: probe: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	static const int64_t sizes[] = {32, 64, 100, 127, 256, 257, 512, 1000, 1024, 2048, 4096};
	int nsizes = (int)(sizeof sizes / sizeof *sizes) - (big ? 0 : 1);
	static const shape rect[] = {{2048, 32, 2048}, {32, 2048, 2048}, {2048, 2048, 32}};
	shape shapes[16];
	int nshapes = 0;
	for (int i = 0; i < nsizes; i++)
		shapes[nshapes++] = (shape){sizes[i], sizes[i], sizes[i]};
	for (size_t i = 0; i < sizeof rect / sizeof *rect; i++)
		shapes[nshapes++] = rect[i];
	if (nuser > 0) {
		memcpy(shapes, user, sizeof *user * (size_t)nuser);
		nshapes = nuser;
	}

	printf("gemm C += A * B, row-major: cachet (examples/sgemm|dgemm.cachet, "
	       "cc -O3 -march=native -fopenmp) vs OpenBLAS %s\n",
	       openblas_get_config());
	printf("peer: OpenBLAS, %s [loaded: %s]\n", bench_peer_note(), openblas_get_corename());
	printf("cpu: %s; measured FMA peak of one core: f32 %.1f GFLOP/s, f64 %.1f GFLOP/s "
	       "(%.2f GHz); of %d threads: f32 %.1f, f64 %.1f\n",
	       pi.model, pi.gflops_f32_core, pi.gflops_f64_core, pi.ghz, pi.threads_measured,
	       pi.gflops_f32_all, pi.gflops_f64_all);
	printf("median of %d measurements of >= %.1f s each; tolerance f32 %.0e, f64 %.0e "
	       "(max relative error vs OpenBLAS)\n\n",
	       NMEAS, MIN_SECONDS, ct_dtype_tolerance(CT_F32), ct_dtype_tolerance(CT_F64));
	printf("%-16s %-4s %3s %10s %10s %7s %10s %10s %10s\n", "size (MxNxK)", "type", "thr",
	       "cachet", "openblas", "ratio", "cachet", "openblas", "max err");
	printf("%-16s %-4s %3s %10s %10s %7s %10s %10s\n", "", "", "", "GFLOP/s", "GFLOP/s", "",
	       "% peak", "% peak");
	double t0 = now(), compile_s = 0;
	int bad = 0;
	for (int h = 0; h < nthreads && !small_only; h++)
		for (int i = 0; i < nshapes; i++)
			for (int ti = 0; ti < 2; ti++) {
				int r = bench_one(ctx, &pi, ti == 0 ? CT_F32 : CT_F64, shapes[i],
				                  threads[h], &compile_s);
				if (r < 0)
					return 1;
				bad += r;
			}
	int rows = small_only ? 0 : 2 * nshapes * nthreads;
#ifdef HAVE_LIBXSMM
	int xrows = 0, xbad = xsmm_table(ctx, &pi, shapes, nshapes, &xrows);
	if (xbad < 0)
		return 1;
	bad += xbad;
	rows += xrows;
#else
	printf("\n(no LIBXSMM comparison: built without libxsmm; make bench-deps installs it)\n");
#endif
	printf("\n%d of %d results within tolerance; total %.1f s (compiles %.1f s)\n", rows - bad,
	       rows, now() - t0, compile_s);
	ct_ctx_free(ctx);
	return bad ? 1 : 0;
}
