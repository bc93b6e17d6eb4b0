/* peer_stencil.c: the hand-written MPI 5-point stencil (examples/stencil5.cachet's logic) that cachet's distributed stencil is compared with. */
#include "dist_common.h"

/*
 * Usage: mpirun -np R peer_stencil N REPS
 *
 * B[x,y] = (A[x-1,y] + A[x+1,y] + A[x,y-1] + A[x,y+1] + A[x,y]) / 5 inside, B = A on the
 * boundary rows and columns of the N x N array. Ranks on a 2-D Cartesian grid
 * (MPI_Dims_create), balanced blocks; each rank holds its block plus a 1-wide halo. One call:
 * post the star halo exchange (Irecv/Isend, rows contiguous, columns as an MPI_Type_vector, no
 * corners), compute the cells that need no halo, wait, compute the block's boundary ring.
 * REPS calls as a Jacobi iteration (A and B swapped after each), one untimed call first.
 * Exchange time = post + wait, compute time = interior + ring, per call, max over ranks.
 * Verified against the serial stencil (same operation order: bit-exact expected).
 */

typedef struct {
	MPI_Comm cart;
	int dims[2], coords[2];
	int up, down, left, right; /* neighbours along x (rows) and y (columns); MPI_PROC_NULL at edges */
	int64_t n, x0, y0, lx, ly;  /* global size, first owned global row/column, block size */
	int64_t ld;                 /* row stride of the local arrays: ly + 2 */
	MPI_Datatype column;        /* lx elements with stride ld */
} grid;

static void grid_init(grid *g, int64_t n)
{
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	g->dims[0] = g->dims[1] = 0;
	MPI_Dims_create(size, 2, g->dims);
	int periods[2] = {0, 0};
	MPI_Cart_create(MPI_COMM_WORLD, 2, g->dims, periods, 0, &g->cart);
	int rank;
	MPI_Comm_rank(g->cart, &rank);
	MPI_Cart_coords(g->cart, rank, 2, g->coords);
	MPI_Cart_shift(g->cart, 0, 1, &g->up, &g->down);
	MPI_Cart_shift(g->cart, 1, 1, &g->left, &g->right);
	g->n = n;
	g->x0 = blk_lo(n, g->dims[0], g->coords[0]);
	g->lx = blk_len(n, g->dims[0], g->coords[0]);
	g->y0 = blk_lo(n, g->dims[1], g->coords[1]);
	g->ly = blk_len(n, g->dims[1], g->coords[1]);
	g->ld = g->ly + 2;
	MPI_Type_vector((int)g->lx, 1, (int)g->ld, MPI_REAL_T, &g->column);
	MPI_Type_commit(&g->column);
}

/* Local (1-based, halo at 0 and l+1) element (i, j). */
#define AT(p, g, i, j) ((p)[(i) * (g)->ld + (j)])

/* Posts the star exchange of a's halo: 4 receives then 4 sends into req[8]. */
static void halo_post(const grid *g, real *a, MPI_Request *req)
{
	int64_t lx = g->lx, ly = g->ly;
	MPI_Irecv(&AT(a, g, 0, 1), (int)ly, MPI_REAL_T, g->up, 0, g->cart, &req[0]);
	MPI_Irecv(&AT(a, g, lx + 1, 1), (int)ly, MPI_REAL_T, g->down, 1, g->cart, &req[1]);
	MPI_Irecv(&AT(a, g, 1, 0), 1, g->column, g->left, 2, g->cart, &req[2]);
	MPI_Irecv(&AT(a, g, 1, ly + 1), 1, g->column, g->right, 3, g->cart, &req[3]);
	MPI_Isend(&AT(a, g, 1, 1), (int)ly, MPI_REAL_T, g->up, 1, g->cart, &req[4]);
	MPI_Isend(&AT(a, g, lx, 1), (int)ly, MPI_REAL_T, g->down, 0, g->cart, &req[5]);
	MPI_Isend(&AT(a, g, 1, 1), 1, g->column, g->left, 3, g->cart, &req[6]);
	MPI_Isend(&AT(a, g, 1, ly), 1, g->column, g->right, 2, g->cart, &req[7]);
}

/* b = stencil(a) on local rows i0..i1, columns j0..j1 (inclusive, 1-based); cells on the global
 * boundary copy a. */
static void update_rect(const grid *g, const real *restrict a, real *restrict b, int64_t i0, int64_t i1, int64_t j0,
                        int64_t j1)
{
	int64_t ld = g->ld, last = g->n - 1;
	for (int64_t i = i0; i <= i1; i++) {
		int64_t gi = g->x0 + i - 1;
		const real *r = a + i * ld;
		real *o = b + i * ld;
		if (gi == 0 || gi == last) {
			for (int64_t j = j0; j <= j1; j++)
				o[j] = r[j];
			continue;
		}
		for (int64_t j = j0; j <= j1; j++)
			o[j] = (r[j - ld] + r[j + ld] + r[j - 1] + r[j + 1] + r[j]) / 5;
		if (g->y0 + j0 - 1 == 0)
			o[j0] = r[j0];
		if (g->y0 + j1 - 1 == last)
			o[j1] = r[j1];
	}
}

/* One call: b = stencil(a), overlapping the interior with the exchange; adds its times to t. */
static void call(const grid *g, real *a, real *b, dist_times *t)
{
	MPI_Request req[8];
	int64_t lx = g->lx, ly = g->ly;
	double t0 = MPI_Wtime();
	halo_post(g, a, req);
	double t1 = MPI_Wtime();
	if (lx > 2 && ly > 2)
		update_rect(g, a, b, 2, lx - 1, 2, ly - 1);
	double t2 = MPI_Wtime();
	MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
	double t3 = MPI_Wtime();
	update_rect(g, a, b, 1, 1, 1, ly);
	update_rect(g, a, b, lx, lx, 1, ly);
	update_rect(g, a, b, 1, lx, 1, 1);
	update_rect(g, a, b, 1, lx, ly, ly);
	double t4 = MPI_Wtime();
	t->recv += (double)(sizeof(real) * (size_t)((g->up != MPI_PROC_NULL) * ly + (g->down != MPI_PROC_NULL) * ly +
	                                            (g->left != MPI_PROC_NULL) * lx + (g->right != MPI_PROC_NULL) * lx));
	t->exch += (t1 - t0) + (t3 - t2);
	t->comp += (t2 - t1) + (t4 - t3);
	t->total += t4 - t0;
}

/* Gathers the owned blocks of a into the whole array on rank 0 (malloc'd there, NULL elsewhere). */
static real *gather(const grid *g, const real *a)
{
	int rank, size;
	MPI_Comm_rank(g->cart, &rank);
	MPI_Comm_size(g->cart, &size);
	real *mine = malloc(sizeof(real) * (size_t)(g->lx * g->ly + 1));
	for (int64_t i = 0; i < g->lx; i++)
		memcpy(mine + i * g->ly, &AT(a, g, i + 1, 1), sizeof(real) * (size_t)g->ly);
	int count = (int)(g->lx * g->ly), *counts = NULL, *displs = NULL;
	real *all = NULL, *whole = NULL;
	if (rank == 0) {
		counts = malloc(sizeof(int) * (size_t)size);
		displs = malloc(sizeof(int) * (size_t)size);
		all = malloc(sizeof(real) * (size_t)(g->n * g->n));
		whole = malloc(sizeof(real) * (size_t)(g->n * g->n));
	}
	MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, g->cart);
	if (rank == 0)
		for (int r = 0, off = 0; r < size; off += counts[r], r++)
			displs[r] = off;
	MPI_Gatherv(mine, count, MPI_REAL_T, all, counts, displs, MPI_REAL_T, 0, g->cart);
	if (rank == 0)
		for (int r = 0; r < size; r++) {
			int c[2];
			MPI_Cart_coords(g->cart, r, 2, c);
			int64_t x0 = blk_lo(g->n, g->dims[0], c[0]), lx = blk_len(g->n, g->dims[0], c[0]);
			int64_t y0 = blk_lo(g->n, g->dims[1], c[1]), ly = blk_len(g->n, g->dims[1], c[1]);
			for (int64_t i = 0; i < lx; i++)
				memcpy(whole + (x0 + i) * g->n + y0, all + displs[r] + i * ly, sizeof(real) * (size_t)ly);
		}
	free(mine);
	free(counts);
	free(displs);
	free(all);
	return whole;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc != 3) {
		fprintf(stderr, "usage: peer_stencil N REPS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int64_t n = atoll(argv[1]);
	int reps = atoi(argv[2]);
	grid g;
	grid_init(&g, n);
	size_t cells = (size_t)((g.lx + 2) * g.ld);
	real *a = calloc(cells, sizeof(real)), *b = calloc(cells, sizeof(real));
	if (!a || !b)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int64_t i = 1; i <= g.lx; i++)
		for (int64_t j = 1; j <= g.ly; j++)
			AT(a, &g, i, j) = (real)stencil_input(g.x0 + i - 1, g.y0 + j - 1);
	dist_times warm = {0, 0, 0, 0}, *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	call(&g, a, b, &warm); /* untimed: first touch, MPI's connection setup */
	real *s = a;
	a = b;
	b = s;
	MPI_Barrier(g.cart);
	for (int r = 0; r < reps; r++) {
		call(&g, a, b, &t[r]);
		s = a;
		a = b;
		b = s;
	}
	real *whole = gather(&g, a);
	double err = 0;
	int rank;
	MPI_Comm_rank(g.cart, &rank);
	if (rank == 0) {
		real *ref = stencil_reference(n, reps + 1);
		err = whole && ref ? rel_err_real(whole, ref, n * n) : INFINITY;
		free(ref);
	}
	char size[32];
	snprintf(size, sizeof size, "%lldx%lld", (long long)n, (long long)n);
	dist_report(g.cart, "peer-" REAL_NAME, "stencil5", g.dims, 2, size, t, reps, err, DIST_TOL_F32);
	free(t);
	free(whole);
	free(a);
	free(b);
	MPI_Type_free(&g.column);
	MPI_Comm_free(&g.cart);
	MPI_Finalize();
	return 0;
}
