/* copies.c: stand-alone comparison of copy bounds with the stencil kernel: the bench's copy loop, a copy with streaming stores, and the emitted kernel with and without streaming stores. Not built by make. */
/*
 * Build (AVX-512 host: the streaming copy uses _mm512_stream_ps):
 *   cachet emit examples/stencil5_fast.cachet -D N=4096 -D M=4096 \
 *     | sed -n '/_entry(/,$!p' | sed 's/cachet_stencil5_fast/ka/g' > ka.c
 *   the same from a copy of the example with vectorize(y) (no
 *   nontemporal=true) into kb.c, with kb for ka
 *   cc -O3 -march=native -fopenmp -c ka.c kb.c
 *   cc -O3 -march=native -fopenmp bench/stencil/copies.c ka.o kb.o -o copies
 *   OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 ./copies 21
 * Each round: best of 4 calls of each; printed: median times, and the
 * median over the rounds of (that time / the example kernel's time).
 * bench/RESULTS.md, "5-point stencil on 2 threads: the bench and the
 * driver agree; the streaming-store path ... (issue #6)".
 */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define N 4096
#define M 4096
int ka(const float *restrict A, float *restrict B);
int kb(const float *restrict A, float *restrict B);
static void copy(const float *restrict a, float *restrict b)
{
	#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < (int64_t)N * M; i++)
		b[i] = a[i];
}
static void copynt(const float *restrict a, float *restrict b)
{
	#pragma omp parallel
	{
		#pragma omp for schedule(static) nowait
		for (int64_t i = 0; i < (int64_t)N * M; i += 16)
			_mm512_stream_ps(b + i, _mm512_load_ps(a + i));
		_mm_sfence();
	}
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + (double)t.tv_nsec * 1e-9; }
typedef void (*kf)(const float *, float *);
static double best4(kf f, const float *A, float *B)
{ double best = 1e9; for (int r = 0; r < 4; r++) { double t = now(); f(A, B); t = now() - t; best = t < best ? t : best; } return best; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 21;
	size_t n = (size_t)N * M;
	float *A = aligned_alloc(64, n * 4), *B = aligned_alloc(64, n * 4);
	for (size_t i = 0; i < n; i++) A[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
	memset(B, 0, n * 4);
	kf ks[4] = {copy, copynt, kb, ka};
	const char *nm[4] = {"copy loop (bench)", "copy, streaming stores", "kernel, regular stores", "kernel, streaming (ex.)"};
	double *t = malloc(sizeof(double) * 4 * rounds), *q = malloc(sizeof(double) * 4 * rounds);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 4; k++) t[k * rounds + r] = best4(ks[k], A, B);
		for (int k = 0; k < 4; k++) q[k * rounds + r] = t[k * rounds + r] / t[3 * rounds + r];
	}
	printf("%d threads, %d rounds\n", omp_get_max_threads(), rounds);
	for (int k = 0; k < 4; k++) {
		qsort(t + k * rounds, rounds, 8, cmpd); qsort(q + k * rounds, rounds, 8, cmpd);
		printf("%-24s %.3f ms   kernel at %5.1f%% of it\n", nm[k], 1e3 * t[k * rounds + rounds / 2], 100 * q[k * rounds + rounds / 2]);
	}
	return 0;
}
