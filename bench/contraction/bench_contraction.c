/* bench_contraction.c: cachet's two-index transform (examples/two_index_fast.cachet) vs two OpenBLAS dgemm calls. */
#include <cachet.h>
#include <cblas.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_kernel.h"
#include "../common/bench_util.h"

/*
 * Usage: bench_contraction [--threads LIST] [--sizes LIST] [--openblas-coretype NAME]
 *        (from the repository root)
 * B += C1^T A C2 with A: N x N, C1, C2: N x V, B: V x V, all f64 row-major,
 * for N = V in LIST (default 512,1024) and each thread count (default 1,2).
 * cachet: the example with V and N overridden, compiled with -fopenmp through
 * the code cache, its threads set with cachet_NAME_set_threads; the temp T
 * is the kernel's own (allocated in each call, as the kernel does). Peer:
 * T = C1^T A (cblas_dgemm, CblasTrans) into a buffer allocated once, then
 * B += T C2, OpenBLAS on the same thread count. Both start from the same B;
 * cachet's B is checked against OpenBLAS's (max relative error, tolerance
 * of f64) and a checksum (sum of B) of each is printed. Median of NMEAS
 * measurements of >= MIN_SECONDS each; GFLOP/s counts the two products'
 * 2 V N N + 2 V V N flops. Waiting OpenMP threads spin a bounded time, then sleep, unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set.
 * OpenBLAS runs with the kernel set that computes correctly and fastest here,
 * whatever the environment says (bench_openblas_at_best; the header says it;
 * --openblas-coretype NAME fixes it).
 */

#define NMEAS 5
#define MIN_SECONDS 0.2
#define EXAMPLE "examples/two_index_fast.cachet"

typedef bench_entry_fn entry_fn;
typedef bench_threads_fn threads_fn;

typedef struct problem {
	int64_t n, v;
	double *a, *c1, *c2, *t, *b;
	entry_fn entry;
	int64_t params[8];
} problem;

static void run_cachet(const problem *p)
{
	/* arguments in declaration order: A, C1, C2, T (temp: unused), B */
	void *const args[5] = {p->a, p->c1, p->c2, NULL, p->b};
	p->entry(args, p->params);
}

static void run_blas(const problem *p)
{
	int n = (int)p->n, v = (int)p->v;
	cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, v, n, n, 1.0, p->c1, v, p->a, n, 0.0,
	            p->t, n);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, v, v, n, 1.0, p->t, n, p->c2, v, 1.0,
	            p->b, v);
}

/* Median seconds of one call of fn (B keeps accumulating; inputs in [-1, 1]). */
static double time_it(void (*fn)(const problem *), const problem *p)
{
	double t0 = now();
	fn(p);
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
	qsort(v, NMEAS, sizeof *v, cmp_double);
	return v[NMEAS / 2];
}

static double *alloc_f64(int64_t count)
{
	size_t bytes = ((size_t)count * sizeof(double) + 63) / 64 * 64;
	return aligned_alloc(64, bytes ? bytes : 64);
}

static double checksum(const double *x, int64_t count)
{
	double s = 0;
	for (int64_t i = 0; i < count; i++)
		s += x[i];
	return s;
}

/* The example with V = v, N = n, compiled; NULL (a message printed) on error. */
static entry_fn load_kernel(ct_ctx *ctx, int64_t n, int64_t v, int64_t *params,
                            threads_fn *set_threads, double *compile_s)
{
	ct_kernel *k = ct_kernel_parse_file(ctx, EXAMPLE);
	if (!k) {
		fprintf(stderr, "bench: %s: %s (run from the repository root)\n", EXAMPLE,
		        ct_ctx_last_message(ctx));
		return NULL;
	}
	char *src = NULL;
	entry_fn fn = NULL;
	if (ct_kernel_set_param(k, "V", v) != CT_OK || ct_kernel_set_param(k, "N", n) != CT_OK ||
	    ct_kernel_recheck(k) != CT_OK || ct_kernel_param_count(k) > 8 ||
	    !(src = ct_kernel_emit(k, NULL, NULL))) {
		fprintf(stderr, "bench: %s: %s\n", EXAMPLE, ct_ctx_last_message(ctx));
		goto out;
	}
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		params[i] = ct_kernel_param_value(k, i, NULL);
	ct_load_info info;
	fn = bench_load_entry(ctx, k, src, EXAMPLE, set_threads, &info);
	if (fn && strcmp(info.how, "compiled") == 0)
		*compile_s += info.seconds;
out:
	free(src);
	ct_kernel_free(k);
	return fn;
}

/* One size and thread count: one row. 0 ok, 1 mismatch, -1 error. */
static int bench_one(ct_ctx *ctx, int64_t n, int threads, double *compile_s)
{
	problem p = {.n = n, .v = n};
	threads_fn set_threads = NULL;
	p.entry = load_kernel(ctx, n, n, p.params, &set_threads, compile_s);
	if (!p.entry)
		return -1;
	if (set_threads)
		set_threads(threads);
	openblas_set_num_threads(threads);
	int64_t nn = n * n, nv = n * p.v, vv = p.v * p.v;
	p.a = alloc_f64(nn);
	p.c1 = alloc_f64(nv);
	p.c2 = alloc_f64(nv);
	p.t = alloc_f64(nv);
	p.b = alloc_f64(vv);
	double *b0 = alloc_f64(vv), *b_blas = alloc_f64(vv);
	if (!p.a || !p.c1 || !p.c2 || !p.t || !p.b || !b0 || !b_blas) {
		fprintf(stderr, "bench: out of memory\n");
		return -1;
	}
	ct_fill_random(p.a, CT_F64, nn, 1, 0);
	ct_fill_random(p.c1, CT_F64, nv, 1, 1);
	ct_fill_random(p.c2, CT_F64, nv, 1, 2);
	ct_fill_random(b0, CT_F64, vv, 1, 3);

	/* correctness: one call of each from the same B */
	double *b_cachet = p.b;
	memcpy(b_cachet, b0, (size_t)vv * sizeof(double));
	run_cachet(&p);
	p.b = b_blas;
	memcpy(b_blas, b0, (size_t)vv * sizeof(double));
	run_blas(&p);
	double err = ct_max_rel_error(b_cachet, b_blas, CT_F64, vv);
	double sum_c = checksum(b_cachet, vv), sum_b = checksum(b_blas, vv);
	int ok = err <= ct_dtype_tolerance(CT_F64);

	double tb = time_it(run_blas, &p);
	p.b = b_cachet;
	double tc = time_it(run_cachet, &p);
	double flop = 2.0 * (double)p.v * (double)n * (double)n + 2.0 * (double)p.v * (double)p.v * (double)n;
	double gc = flop / tc * 1e-9, gb = flop / tb * 1e-9;
	printf("%-6lld %-6lld %3d %10.3f %10.3f %10.2f %10.2f %7.2f %16.9e %16.9e %10.2e  %s\n",
	       (long long)n, (long long)p.v, threads, tc * 1e3, tb * 1e3, gc, gb, gc / gb, sum_c,
	       sum_b, err, ok ? "ok" : "MISMATCH");
	fflush(stdout);
	free(p.a);
	free(p.c1);
	free(p.c2);
	free(p.t);
	free(b_cachet);
	free(b0);
	free(b_blas);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	ct_threads_wait_default(); /* as the cachet CLI */
	argc = bench_openblas_at_best(argc, argv); /* the peer at its best, whatever the environment says */
	long threads[8] = {1, 2}, sizes[8] = {512, 1024};
	int nthreads = 2, nsizes = 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			nthreads = bench_parse_list(argv[++i], threads, 8, 1, 4096);
		} else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			nsizes = bench_parse_list(argv[++i], sizes, 8, 1, 8192);
		} else {
			nthreads = 0;
		}
		if (nthreads == 0 || nsizes == 0) {
			fprintf(stderr, "usage: bench_contraction [--threads 1,2] [--sizes 512,1024] [--openblas-coretype NAME]\n");
			return 2;
		}
	}
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	printf("two-index transform B += C1^T A C2 (f64, N = V): cachet (%s, cc -O3 -march=native "
	       "-fopenmp) vs two OpenBLAS dgemm calls (T = C1^T A; B += T C2), %s\n",
	       EXAMPLE, openblas_get_config());
	printf("peer: OpenBLAS, %s [loaded: %s]\n", bench_peer_note(), openblas_get_corename());
	printf("median of %d measurements of >= %.1f s each; tolerance %.0e (max relative error of "
	       "B vs OpenBLAS); checksum = sum of B after one call\n\n",
	       NMEAS, MIN_SECONDS, ct_dtype_tolerance(CT_F64));
	printf("%-6s %-6s %3s %10s %10s %10s %10s %7s %16s %16s %10s\n", "N", "V", "thr", "cachet",
	       "openblas", "cachet", "openblas", "ratio", "checksum", "checksum", "max err");
	printf("%-6s %-6s %3s %10s %10s %10s %10s %7s %16s %16s\n", "", "", "", "ms", "ms",
	       "GFLOP/s", "GFLOP/s", "", "cachet", "openblas");
	double t0 = now(), compile_s = 0;
	int bad = 0, rows = 0;
	for (int h = 0; h < nthreads; h++)
		for (int i = 0; i < nsizes; i++) {
			int r = bench_one(ctx, sizes[i], (int)threads[h], &compile_s);
			if (r < 0)
				return 1;
			bad += r;
			rows++;
		}
	printf("\n%d of %d results within tolerance; total %.1f s (compiles %.1f s)\n", rows - bad,
	       rows, now() - t0, compile_s);
	ct_ctx_free(ctx);
	return bad ? 1 : 0;
}
