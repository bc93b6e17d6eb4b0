/* paths.c: stand-alone check that the bench's way of building and timing the stencil gives the driver's ratios: copy and kernel static or from a .so, best of 4 calls or the mean of 40, all in one process under one load. Not built by make. */
/*
 * Build (from the repository root, AVX-512 or not):
 *   cachet emit examples/stencil5_fast.cachet -D N=4096 -D M=4096 \
 *     | sed -n '/_entry(/,$!p' | sed 's/cachet_stencil5_fast/ka/g' > ka.c
 *   cc -O3 -march=native -fopenmp -c ka.c                     (the driver's way)
 *   cc -O3 -march=native -fPIC -shared -fopenmp ka.c -o ka.so (ct_module_load's flags)
 *   peer.c: bench_copy from the peer source in bench/stencil/bench_stencil.c
 *   cc -O3 -march=native -fPIC -shared -fopenmp peer.c -o peer.so
 *   cc -O3 -march=native -fopenmp bench/stencil/paths.c ka.o -o paths -ldl
 *   OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 ./paths 11
 * Each round times the four (copy static = variants.c's loop with the
 * threads from the environment; copy .so = the bench's peer with
 * num_threads(nt); the kernel linked in; the kernel from ka.so) with best
 * of 4 calls (variants.c) and with the mean of 40 back-to-back calls (the
 * bench's >= 0.1 s), order reversed every other round; printed: median
 * times and the median per-round ratios copy / kernel for the four pairs.
 * bench/RESULTS.md, "5-point stencil on 2 threads: the bench and the
 * driver agree; the streaming-store path ... (issue #6)".
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define N 4096
#define M 4096
int ka(const float *restrict A, float *restrict B);
static void copy(const float *restrict a, float *restrict b)
{
	#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < (int64_t)N * M; i++)
		b[i] = a[i];
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + (double)t.tv_nsec * 1e-9; }
typedef void (*kf)(const float *, float *);
typedef void (*pf)(const float *, float *, int64_t, int);
static pf so_copy; static kf so_ka; static int NT;
static void copy_so(const float *a, float *b) { so_copy(a, b, N, NT); }
static void ka_so(const float *a, float *b) { so_ka(a, b); }
static void ka_st(const float *a, float *b) { ka(a, b); }
static void copy_st(const float *a, float *b) { copy(a, b); }
static double best4(kf f, const float *A, float *B)
{ double best = 1e9; for (int r = 0; r < 4; r++) { double t = now(); f(A, B); t = now() - t; best = t < best ? t : best; } return best; }
static double mean01(kf f, const float *A, float *B)
{ long reps = 40; double t = now(); for (long r = 0; r < reps; r++) f(A, B); return (now() - t) / reps; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 11;
	NT = omp_get_max_threads();
	void *h1 = dlopen("./peer.so", RTLD_NOW), *h2 = dlopen("./ka.so", RTLD_NOW);
	if (!h1 || !h2) { printf("dlopen %s\n", dlerror()); return 1; }
	*(void **)&so_copy = dlsym(h1, "bench_copy"); *(void **)&so_ka = dlsym(h2, "ka");
	size_t n = (size_t)N * M;
	float *A = aligned_alloc(64, n * 4), *B = aligned_alloc(64, n * 4);
	for (size_t i = 0; i < n; i++) A[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
	memset(B, 0, n * 4);
	kf ks[4] = {copy_st, copy_so, ka_st, ka_so};
	const char *nm[4] = {"copy static", "copy .so", "ka static", "ka .so"};
	double (*tm[2])(kf, const float *, float *) = {best4, mean01};
	const char *tn[2] = {"best of 4", "mean of 40"};
	double *t = malloc(sizeof(double) * 2 * 4 * rounds), *q = malloc(sizeof(double) * 2 * 4 * rounds);
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < 2; m++) {
			for (int k0 = 0; k0 < 4; k0++) { int k = r % 2 ? 3 - k0 : k0; t[(m * 4 + k) * rounds + r] = tm[m](ks[k], A, B); }
			/* ratios: copy static / ka static, copy .so / ka .so, copy .so / ka static, copy static / ka .so */
			q[(m * 4 + 0) * rounds + r] = t[(m * 4 + 0) * rounds + r] / t[(m * 4 + 2) * rounds + r];
			q[(m * 4 + 1) * rounds + r] = t[(m * 4 + 1) * rounds + r] / t[(m * 4 + 3) * rounds + r];
			q[(m * 4 + 2) * rounds + r] = t[(m * 4 + 1) * rounds + r] / t[(m * 4 + 2) * rounds + r];
			q[(m * 4 + 3) * rounds + r] = t[(m * 4 + 0) * rounds + r] / t[(m * 4 + 3) * rounds + r];
		}
	const char *qn[4] = {"cst/kst", "cso/kso", "cso/kst", "cst/kso"};
	printf("%d threads, %d rounds\n", NT, rounds);
	for (int m = 0; m < 2; m++) {
		printf("%-11s", tn[m]);
		for (int k = 0; k < 4; k++) { qsort(t + (m * 4 + k) * rounds, rounds, 8, cmpd); printf("  %s %.3f ms", nm[k], 1e3 * t[(m * 4 + k) * rounds + rounds / 2]); }
		printf("\n%-11s", "");
		for (int k = 0; k < 4; k++) { qsort(q + (m * 4 + k) * rounds, rounds, 8, cmpd); printf("  %s %5.1f%%", qn[k], 100 * q[(m * 4 + k) * rounds + rounds / 2]); }
		printf("\n");
	}
	return 0;
}
