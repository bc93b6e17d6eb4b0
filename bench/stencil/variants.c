/* variants.c: stand-alone profile driver of the 5-point stencil (4096 x 4096 f32): two emitted kernels against hand-written variants (one row, two rows jammed), each round's time against the bench's copy. Not built by make. */
/*
 * Build (AVX-512 host; the hand variants use _mm512_stream_ps):
 *   cachet emit examples/stencil5_fast.cachet -D N=4096 -D M=4096 \
 *     | sed -n '/_entry(/,$!p' | sed 's/cachet_stencil5_fast/ka/g' > ka.c
 *   (the same from another build or plan into kb.c, with kb for ka)
 *   cc -O3 -march=native -fopenmp -c ka.c kb.c
 *   cc -O3 -march=native -fopenmp bench/stencil/variants.c ka.o kb.o -o variants
 *   OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./variants 41
 * Each round times the copy (the loop bench_stencil.c uses: b[i] = a[i],
 * omp parallel for), then every kernel (best of 4 calls each); printed:
 * median times, and the median over the rounds of copy time / kernel time
 * with the quartiles. Every kernel's B is compared with ka's bit for bit.
 * OMP_WAIT_POLICY=passive as in bench_stencil (with the default, active,
 * the 2-thread copy ran 30% slower and the ratios moved by 20 points).
 * bench/RESULTS.md, "5-point stencil: one loop limit ... (issue #6)".
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

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t m16 __attribute__((vector_size(64)));

static inline v16 ld(const float *p) { v16 r; memcpy(&r, p, 64); return r; }
static inline v16 sh(v16 lo, v16 hi, int s)
{
	const m16 id = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	return __builtin_shuffle(lo, hi, id + s);
}
static inline void st(float *p, v16 v) { _mm512_stream_ps(p, (__m512)v); }

/* The stencil's statement, scalar, for y in [lo, hi) of row x. */
static void scal_row(const float *A, float *B, int64_t x, int64_t lo, int64_t hi)
{
	for (int64_t y = lo; y < hi; y++) {
		if (0 < x && x < N - 1 && 0 < y && y < M - 1)
			B[x * M + y] = (((((A[(x - 1) * M + y] + A[(x + 1) * M + y]) + A[x * M + y - 1]) + A[x * M + y + 1]) + A[x * M + y]) / 5.0f);
		else
			B[x * M + y] = A[x * M + y];
	}
}

/* One interior row: lines 16 .. M-16 with lane shifts, the centre from the register. */
static inline void row1(const float *A, float *B, int64_t x)
{
	scal_row(A, B, x, 0, 16);
	const float *a = A + (x - 1) * M, *b = A + x * M, *c = A + (x + 1) * M;
	v16 bp = ld(b), bq = ld(b + 16);
	for (int64_t y = 16; y < M - 16; y += 16) {
		v16 br = ld(b + y + 16);
		v16 o = ((((ld(a + y) + ld(c + y)) + sh(bp, bq, 15)) + sh(bq, br, 1)) + bq) / 5.0f;
		st(B + x * M + y, o);
		bp = bq;
		bq = br;
	}
	scal_row(A, B, x, M - 16, M);
}

/* Rows x and x+1 jammed: four input rows per line step, rows x and x+1 loaded once for both. */
static inline void row2(const float *A, float *B, int64_t x)
{
	scal_row(A, B, x, 0, 16);
	scal_row(A, B, x + 1, 0, 16);
	const float *a = A + (x - 1) * M, *b = A + x * M, *c = A + (x + 1) * M, *d = A + (x + 2) * M;
	v16 bp = ld(b), bq = ld(b + 16), cp = ld(c), cq = ld(c + 16);
	for (int64_t y = 16; y < M - 16; y += 16) {
		v16 br = ld(b + y + 16), cr = ld(c + y + 16);
		v16 av = ld(a + y), dv = ld(d + y);
		v16 o0 = ((((av + cq) + sh(bp, bq, 15)) + sh(bq, br, 1)) + bq) / 5.0f;
		v16 o1 = ((((bq + dv) + sh(cp, cq, 15)) + sh(cq, cr, 1)) + cq) / 5.0f;
		st(B + x * M + y, o0);
		st(B + (x + 1) * M + y, o1);
		bp = bq;
		bq = br;
		cp = cq;
		cq = cr;
	}
	scal_row(A, B, x, M - 16, M);
	scal_row(A, B, x + 1, M - 16, M);
}

static void hand_row1(const float *restrict A, float *restrict B)
{
	#pragma omp parallel
	{
		#pragma omp for schedule(static) nowait
		for (int64_t x = 0; x < N; x++) {
			if (x == 0 || x == N - 1)
				scal_row(A, B, x, 0, M);
			else
				row1(A, B, x);
		}
		_mm_sfence();
	}
}

/* Pairs of rows: the parallel loop over pairs. */
static void hand_jam2(const float *restrict A, float *restrict B)
{
	#pragma omp parallel
	{
		#pragma omp for schedule(static) nowait
		for (int64_t xx = 0; xx < N / 2; xx++) {
			int64_t x = 2 * xx;
			if (x == 0 || x + 1 == N - 1) {
				scal_row(A, B, x, 0, M);
				if (x + 1 == N - 1)
					scal_row(A, B, x + 1, 0, M);
				else
					row1(A, B, x + 1);
			} else {
				row2(A, B, x);
			}
		}
		_mm_sfence();
	}
}

/* Blocks of four rows on the threads, pairs jammed inside a block. */
static void hand_jam2_blocks4(const float *restrict A, float *restrict B)
{
	#pragma omp parallel
	{
		#pragma omp for schedule(static) nowait
		for (int64_t xx = 0; xx < N / 4; xx++) {
			for (int64_t x = 4 * xx; x < 4 * xx + 4;) {
				if (x == 0 || x == N - 1) {
					scal_row(A, B, x, 0, M);
					x++;
				} else if (x + 1 < 4 * xx + 4 && x + 1 < N - 1) {
					row2(A, B, x);
					x += 2;
				} else {
					row1(A, B, x);
					x++;
				}
			}
		}
		_mm_sfence();
	}
}

static void copy(const float *restrict a, float *restrict b)
{
	#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < (int64_t)N * M; i++)
		b[i] = a[i];
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef void (*kf)(const float *restrict, float *restrict);

static double best_of(kf f, const float *A, float *B)
{
	double best = 1e9;
	for (int r = 0; r < 4; r++) {
		double t = now();
		f(A, B);
		t = now() - t;
		best = t < best ? t : best;
	}
	return best;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 31;
	if (rounds < 1)
		rounds = 1;
	size_t n = (size_t)N * M;
	float *A = aligned_alloc(64, n * 4), *B = aligned_alloc(64, n * 4), *R = aligned_alloc(64, n * 4);
	if (!A || !B || !R)
		return 1;
	for (size_t i = 0; i < n; i++)
		A[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
	ka(A, R);
	kf ks[] = {ka, kb, hand_row1, hand_jam2, hand_jam2_blocks4};
	const char *nm[] = {"emitted ka", "emitted kb", "row1 (hand)", "jam2 (hand)", "jam2, blocks of 4 rows"};
	enum { NK = 5 };
	for (int k = 1; k < NK; k++) {
		memset(B, 0, n * 4);
		ks[k](A, B);
		if (memcmp(B, R, n * 4) != 0)
			printf("%s: B differs from ka's\n", nm[k]);
	}
	double *rat = malloc(sizeof(double) * (size_t)rounds * NK), *tt = malloc(sizeof(double) * (size_t)rounds * (NK + 1));
	if (!rat || !tt)
		return 1;
	for (int r = 0; r < rounds; r++) {
		double c = best_of(copy, A, B);
		tt[NK * rounds + r] = c;
		for (int k = 0; k < NK; k++) {
			double v = best_of(ks[k], A, B);
			tt[k * rounds + r] = v;
			rat[k * rounds + r] = c / v;
		}
	}
	for (int k = 0; k <= NK; k++)
		qsort(tt + k * rounds, (size_t)rounds, sizeof(double), cmpd);
	printf("%d threads, %d rounds; copy median %.3f ms\n", omp_get_max_threads(), rounds, 1e3 * tt[NK * rounds + rounds / 2]);
	for (int k = 0; k < NK; k++) {
		qsort(rat + k * rounds, (size_t)rounds, sizeof(double), cmpd);
		printf("%-24s %.3f ms  %6.1f%% of the copy (q1 %5.1f, q3 %5.1f)\n", nm[k], 1e3 * tt[k * rounds + rounds / 2],
		       100 * rat[k * rounds + rounds / 2], 100 * rat[k * rounds + rounds / 4], 100 * rat[k * rounds + 3 * rounds / 4]);
	}
	free(rat);
	free(tt);
	free(A);
	free(B);
	free(R);
	return 0;
}
