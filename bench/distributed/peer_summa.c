/* peer_summa.c: the hand-written MPI SUMMA f32 gemm that cachet's distributed gemm is compared with. */
#include "dist_common.h"

#ifdef PEER_BLAS
#include <cblas.h>
#define PEER_NAME "peer-openblas"
#else
#define PEER_NAME "peer-ikj"
#endif

/*
 * Usage: mpirun -np R peer_summa M N K REPS [PANEL]
 *
 * C[M,N] += A[M,K] * B[K,N], f32, row-major, on a P x Q grid (MPI_Dims_create, MPI_Cart_create;
 * row and column communicators by MPI_Cart_sub). Rank (p, q) owns balanced blocks: A rows
 * blk(M, P, p) x columns blk(K, Q, q), B rows blk(K, P, p) x columns blk(N, Q, q), C rows
 * blk(M, P, p) x columns blk(N, Q, q). The k loop runs over panels of at most PANEL (default 128)
 * indices that lie in one A block column and one B block row: the A panel is broadcast along
 * the grid row from its owner, the B panel along the grid column, then the local update
 * C += Apanel * Bpanel: a plain i-k-j loop (-O3 vectorizes the j loop), or with -DPEER_BLAS
 * cblas_sgemm (OpenBLAS, 1 thread per rank). REPS calls after one untimed call; broadcast time
 * and compute time per call, max over ranks. Inputs are multiples of 1/8 with small
 * numerators, so every sum is exact in f32: the result is compared with an f64 reference.
 */

typedef struct {
	MPI_Comm cart, row, col; /* row: the ranks of my grid row (rank = q); col: of my column (rank = p) */
	int dims[2], p, q;
	int64_t m, n, k;
	int64_t mi0, ml, nj0, nl;  /* my C block: rows mi0.., ml of them; columns nj0.., nl */
	int64_t ak0, akl, bk0, bkl; /* my A block's k columns and my B block's k rows */
} grid;

static void grid_init(grid *g, int64_t m, int64_t n, int64_t k)
{
	int size, rank, coords[2], periods[2] = {0, 0};
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	g->dims[0] = g->dims[1] = 0;
	MPI_Dims_create(size, 2, g->dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, g->dims, periods, 0, &g->cart);
	MPI_Comm_rank(g->cart, &rank);
	MPI_Cart_coords(g->cart, rank, 2, coords);
	g->p = coords[0];
	g->q = coords[1];
	int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
	MPI_Cart_sub(g->cart, keep_row, &g->row);
	MPI_Cart_sub(g->cart, keep_col, &g->col);
	int P = g->dims[0], Q = g->dims[1];
	g->m = m;
	g->n = n;
	g->k = k;
	g->mi0 = blk_lo(m, P, g->p);
	g->ml = blk_len(m, P, g->p);
	g->nj0 = blk_lo(n, Q, g->q);
	g->nl = blk_len(n, Q, g->q);
	g->ak0 = blk_lo(k, Q, g->q);
	g->akl = blk_len(k, Q, g->q);
	g->bk0 = blk_lo(k, P, g->p);
	g->bkl = blk_len(k, P, g->p);
}

/* The block (of g blocks over n) that holds index i. */
static int owner(int64_t n, int g, int64_t i)
{
	int c = 0;
	while (c + 1 < g && blk_lo(n, g, c + 1) <= i)
		c++;
	return c;
}

/* c[ml x nl] += a[ml x kb] * b[kb x nl], all row-major and dense. */
static void local_update(const float *restrict a, const float *restrict b, float *restrict c, int64_t ml,
                         int64_t nl, int64_t kb)
{
#ifdef PEER_BLAS
	if (ml > 0 && nl > 0 && kb > 0)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ml, (int)nl, (int)kb, 1.0f, a, (int)kb, b,
		            (int)nl, 1.0f, c, (int)nl);
#else
	for (int64_t i = 0; i < ml; i++) {
		float *ci = c + i * nl;
		for (int64_t p = 0; p < kb; p++) {
			float av = a[i * kb + p];
			const float *bp = b + p * nl;
			for (int64_t j = 0; j < nl; j++)
				ci[j] += av * bp[j];
		}
	}
#endif
}

/* One call: C += A * B; adds broadcast and compute time to t. apan / bpan: panel buffers. */
static void call(const grid *g, const float *a, const float *b, float *c, float *apan, float *bpan, int64_t panel,
                 dist_times *t)
{
	int P = g->dims[0], Q = g->dims[1];
	double start = MPI_Wtime();
	for (int64_t k0 = 0; k0 < g->k;) {
		int qa = owner(g->k, Q, k0), pb = owner(g->k, P, k0);
		int64_t end = blk_lo(g->k, Q, qa) + blk_len(g->k, Q, qa);
		int64_t endb = blk_lo(g->k, P, pb) + blk_len(g->k, P, pb);
		end = endb < end ? endb : end;
		end = k0 + panel < end ? k0 + panel : end;
		int64_t kb = end - k0;
		double t0 = MPI_Wtime();
		if (g->q == qa) /* my A block holds the panel: its columns k0 - ak0 .. */
			for (int64_t i = 0; i < g->ml; i++)
				memcpy(apan + i * kb, a + i * g->akl + (k0 - g->ak0), sizeof(float) * (size_t)kb);
		if (g->p == pb) /* my B block holds the panel's rows: contiguous */
			memcpy(bpan, b + (k0 - g->bk0) * g->nl, sizeof(float) * (size_t)(kb * g->nl));
		MPI_Bcast(apan, (int)(g->ml * kb), MPI_FLOAT, qa, g->row);
		MPI_Bcast(bpan, (int)(kb * g->nl), MPI_FLOAT, pb, g->col);
		double t1 = MPI_Wtime();
		local_update(apan, bpan, c, g->ml, g->nl, kb);
		double t2 = MPI_Wtime();
		t->recv += (double)(sizeof(float) * (size_t)((g->q != qa) * g->ml * kb + (g->p != pb) * kb * g->nl));
		t->exch += t1 - t0;
		t->comp += t2 - t1;
		k0 = end;
	}
	t->total += MPI_Wtime() - start;
}

/* Gathers C's blocks into the whole M x N array on rank 0 (malloc'd there, NULL elsewhere). */
static float *gather(const grid *g, const float *c)
{
	int rank, size;
	MPI_Comm_rank(g->cart, &rank);
	MPI_Comm_size(g->cart, &size);
	int count = (int)(g->ml * g->nl), *counts = NULL, *displs = NULL;
	float *all = NULL, *whole = NULL;
	if (rank == 0) {
		counts = malloc(sizeof(int) * (size_t)size);
		displs = malloc(sizeof(int) * (size_t)size);
		all = malloc(sizeof(float) * (size_t)(g->m * g->n));
		whole = malloc(sizeof(float) * (size_t)(g->m * g->n));
	}
	MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, g->cart);
	if (rank == 0)
		for (int r = 0, off = 0; r < size; off += counts[r], r++)
			displs[r] = off;
	MPI_Gatherv(c, count, MPI_FLOAT, all, counts, displs, MPI_FLOAT, 0, g->cart);
	if (rank == 0)
		for (int r = 0; r < size; r++) {
			int cc[2];
			MPI_Cart_coords(g->cart, r, 2, cc);
			int64_t i0 = blk_lo(g->m, g->dims[0], cc[0]), ml = blk_len(g->m, g->dims[0], cc[0]);
			int64_t j0 = blk_lo(g->n, g->dims[1], cc[1]), nl = blk_len(g->n, g->dims[1], cc[1]);
			for (int64_t i = 0; i < ml; i++)
				memcpy(whole + (i0 + i) * g->n + j0, all + displs[r] + i * nl, sizeof(float) * (size_t)nl);
		}
	free(counts);
	free(displs);
	free(all);
	return whole;
}

/* max relative error of the gathered C after `calls` calls against C0 + calls * A * B. */
static double verify(const float *whole, int64_t m, int64_t n, int64_t k, int calls)
{
	double *ref = gemm_reference(m, n, k);
	if (!ref || !whole) {
		free(ref);
		return INFINITY;
	}
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double c0 = gemm_c0(i, j);
			ref[i * n + j] = c0 + calls * (ref[i * n + j] - c0);
		}
	double err = rel_err_f32(whole, ref, m * n);
	free(ref);
	return err;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: peer_summa M N K REPS [PANEL]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int64_t m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
	int reps = atoi(argv[4]);
	int64_t panel = argc == 6 ? atoll(argv[5]) : 128;
	grid g;
	grid_init(&g, m, n, k);
	float *a = malloc(sizeof(float) * (size_t)(g.ml * g.akl + 1));
	float *b = malloc(sizeof(float) * (size_t)(g.bkl * g.nl + 1));
	float *c = malloc(sizeof(float) * (size_t)(g.ml * g.nl + 1));
	float *apan = malloc(sizeof(float) * (size_t)(g.ml * panel + 1));
	float *bpan = malloc(sizeof(float) * (size_t)(panel * g.nl + 1));
	if (!a || !b || !c || !apan || !bpan)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int64_t i = 0; i < g.ml; i++)
		for (int64_t p = 0; p < g.akl; p++)
			a[i * g.akl + p] = (float)gemm_a(g.mi0 + i, g.ak0 + p);
	for (int64_t p = 0; p < g.bkl; p++)
		for (int64_t j = 0; j < g.nl; j++)
			b[p * g.nl + j] = (float)gemm_b(g.bk0 + p, g.nj0 + j);
	for (int64_t i = 0; i < g.ml; i++)
		for (int64_t j = 0; j < g.nl; j++)
			c[i * g.nl + j] = (float)gemm_c0(g.mi0 + i, g.nj0 + j);
	dist_times warm = {0, 0, 0, 0}, *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	call(&g, a, b, c, apan, bpan, panel, &warm); /* untimed */
	MPI_Barrier(g.cart);
	for (int r = 0; r < reps; r++)
		call(&g, a, b, c, apan, bpan, panel, &t[r]);
	float *whole = gather(&g, c);
	int rank;
	MPI_Comm_rank(g.cart, &rank);
	double err = rank == 0 ? verify(whole, m, n, k, reps + 1) : 0;
	char size[64];
	snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
	dist_report(g.cart, PEER_NAME, "summa", g.dims, 2, size, t, reps, err, DIST_TOL_F32);
	free(t);
	free(whole);
	free(a);
	free(b);
	free(c);
	free(apan);
	free(bpan);
	MPI_Comm_free(&g.row);
	MPI_Comm_free(&g.col);
	MPI_Comm_free(&g.cart);
	MPI_Finalize();
	return 0;
}
