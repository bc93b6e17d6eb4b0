/* dist_common.h: what the distributed bench's MPI programs share: balanced blocks, deterministic inputs, serial references, the result row. */
#ifndef CT_DIST_COMMON_H
#define CT_DIST_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "../common/bench_util.h"

/* The stencil's element type: f32 (the kernel's); -DDIST_REAL_F64 builds the f64 twin that is
 * compared with PETSc (Debian's PETSc is double only). */
#ifdef DIST_REAL_F64
typedef double real;
#define MPI_REAL_T MPI_DOUBLE
#define REAL_NAME "f64"
#else
typedef float real;
#define MPI_REAL_T MPI_FLOAT
#define REAL_NAME "f32"
#endif

/* The tolerance of a verified f32 result: ct_dtype_tolerance(CT_F32) (src/engine/run.c). */
#define DIST_TOL_F32 1e-3

/* First index of block c of n indices cut into g balanced blocks: n/g each, the remainder
 * one by one to the first blocks (the layout of distribute()). */
static inline int64_t blk_lo(int64_t n, int g, int c)
{
	return (int64_t)c * (n / g) + (c < n % g ? c : n % g);
}

/* Length of block c (above). */
static inline int64_t blk_len(int64_t n, int g, int c)
{
	return n / g + (c < n % g ? 1 : 0);
}

/* The stencil's input at global (i, j) of an n x n array: in [0, 1), deterministic. */
static inline double stencil_input(int64_t i, int64_t j)
{
	return (double)((i * 7919 + j * 104729) % 1009) / 1009.0;
}

/* gemm inputs (small integers / 8, so products are exact) and C's initial value. */
static inline double gemm_a(int64_t i, int64_t k) { return (double)((i * 3 + k * 5) % 17 - 8) / 8.0; }
static inline double gemm_b(int64_t k, int64_t j) { return (double)((k * 7 + j * 2) % 13 - 6) / 8.0; }
static inline double gemm_c0(int64_t i, int64_t j) { return (double)((i + j) % 5) / 4.0; }

/* One call of the 5-point stencil on whole n x n arrays (serial reference; the same operation
 * order as the kernel, so the distributed result can be bit-exact). */
static inline void stencil_serial(const real *a, real *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			int64_t p = i * n + j;
			if (0 < i && i < n - 1 && 0 < j && j < n - 1)
				b[p] = (a[p - n] + a[p + n] + a[p - 1] + a[p + 1] + a[p]) / 5;
			else
				b[p] = a[p];
		}
}

/* The global array after `reps` Jacobi calls of the serial stencil from stencil_input;
 * malloc'd (caller frees), NULL when out of memory. */
static inline real *stencil_reference(int64_t n, int reps)
{
	real *a = malloc(sizeof(real) * (size_t)(n * n)), *b = malloc(sizeof(real) * (size_t)(n * n));
	if (!a || !b) {
		free(a);
		free(b);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			a[i * n + j] = (real)stencil_input(i, j);
	for (int r = 0; r < reps; r++) {
		stencil_serial(a, b, n);
		real *t = a;
		a = b;
		b = t;
	}
	free(b);
	return a;
}

/* max |got - ref| / max |ref| over n values (0 when both are 0). */
static inline double rel_err_f32(const float *got, const double *ref, int64_t n)
{
	double d = 0, m = 0;
	for (int64_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - ref[i]);
		d = e > d ? e : d;
		m = fabs(ref[i]) > m ? fabs(ref[i]) : m;
	}
	return m > 0 ? d / m : d;
}

/* The same for a result of the stencil's element type against its reference. */
static inline double rel_err_real(const real *got, const real *ref, int64_t n)
{
	double d = 0, m = 0;
	for (int64_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - (double)ref[i]);
		d = e > d ? e : d;
		m = fabs((double)ref[i]) > m ? fabs((double)ref[i]) : m;
	}
	return m > 0 ? d / m : d;
}

/* C = C0 + A * B in f64 on whole arrays (the reference of the distributed gemm, after one
 * call); malloc'd (caller frees), NULL when out of memory. */
static inline double *gemm_reference(int64_t m, int64_t n, int64_t k)
{
	double *c = malloc(sizeof(double) * (size_t)(m * n)), *bt = malloc(sizeof(double) * (size_t)(k * n));
	if (!c || !bt) {
		free(c);
		free(bt);
		return NULL;
	}
	for (int64_t p = 0; p < k; p++)
		for (int64_t j = 0; j < n; j++)
			bt[p * n + j] = gemm_b(p, j);
	for (int64_t i = 0; i < m; i++) {
		double *ci = c + i * n;
		for (int64_t j = 0; j < n; j++)
			ci[j] = gemm_c0(i, j);
		for (int64_t p = 0; p < k; p++) {
			double a = gemm_a(i, p);
			const double *bp = bt + p * n;
			for (int64_t j = 0; j < n; j++)
				ci[j] += a * bp[j];
		}
	}
	free(bt);
	return c;
}

/* One call's seconds on one rank and the bytes it received (the payload of its halo or panel
 * messages, as the program counts them); a call's functions add into a zeroed one. */
typedef struct {
	double exch, comp, total, recv;
} dist_times;


/* Prints, on rank 0 of comm, the row the harness collects: of each per-call figure (exchange,
 * compute and total ms, bytes received) the median over this rank's calls[0..n) (robust to the
 * other jobs of a shared machine), then the maximum over ranks; the verification error and
 * whether it is within tol. Collective. */
static inline void dist_report(MPI_Comm comm, const char *impl, const char *kernel, const int *dims, int ndims,
                               const char *size, const dist_times *calls, int n, double err, double tol)
{
	double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), mine[4] = {0, 0, 0, 0}, mx[4];
	for (int f = 0; v && n > 0 && f < 4; f++) {
		for (int c = 0; c < n; c++)
			v[c] = f == 0 ? calls[c].exch : f == 1 ? calls[c].comp : f == 2 ? calls[c].total : calls[c].recv;
		mine[f] = median(v, n);
	}
	free(v);
	MPI_Reduce(mine, mx, 4, MPI_DOUBLE, MPI_MAX, 0, comm);
	int rank, size_ranks;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size_ranks);
	if (rank != 0)
		return;
	char grid[64] = "";
	for (int d = 0; d < ndims; d++)
		snprintf(grid + strlen(grid), sizeof grid - strlen(grid), "%s%d", d ? "x" : "", dims[d]);
	printf("ROW %s %s %d %s %s %.4f %.4f %.4f %.0f %.2e %s\n", impl, kernel, size_ranks, grid, size, mx[0] * 1e3,
	       mx[1] * 1e3, mx[2] * 1e3, mx[3], err, err <= tol ? "ok" : "FAIL");
	fflush(stdout);
}

#endif
