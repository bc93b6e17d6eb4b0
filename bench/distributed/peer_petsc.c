/* peer_petsc.c: the 5-point stencil on a PETSc DMDA (Debian's libpetsc-real: f64 only), the library peer of cachet's distributed stencil. */
#define DIST_REAL_F64 1
#include "dist_common.h"

#include <petscdmda.h>

/*
 * Usage: mpirun -np R peer_petsc N REPS
 *
 * The stencil of peer_stencil.c written the way a PETSc user writes it: a 2-D DMDA of N x N,
 * one degree of freedom, stencil width 1, DMDA_STENCIL_STAR, no ghosted boundary, the process
 * grid MPI_Dims_create's (as the other peers: dims[0] ranks along the rows, PETSc's n; dims[1]
 * along the columns, PETSc's m); PETSc's ownership ranges are the same balanced blocks. One
 * call: DMGlobalToLocalBegin/End (the halo exchange, which also copies the owned block into the
 * local vector), then the update of the owned block from the local vector into the other
 * global vector (DMDAVecGetArray). REPS Jacobi calls after one untimed call. Verified against
 * the serial f64 stencil (bit-exact expected).
 */

#define CHK(call)                                                                                                  \
	do {                                                                                                       \
		PetscErrorCode e_ = (call);                                                                        \
		if (e_) {                                                                                          \
			fprintf(stderr, "peer_petsc: %s failed (%d)\n", #call, (int)e_);                           \
			MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
		}                                                                                                  \
	} while (0)

/* One call: y = stencil(x) through the local (ghosted) vector xl; adds its times to t. */
static void call(DM da, Vec x, Vec xl, Vec y, PetscInt n, dist_times *t)
{
	double t0 = MPI_Wtime();
	CHK(DMGlobalToLocalBegin(da, x, INSERT_VALUES, xl));
	CHK(DMGlobalToLocalEnd(da, x, INSERT_VALUES, xl));
	double t1 = MPI_Wtime();
	const PetscScalar **a;
	PetscScalar **b;
	PetscInt i0, j0, li, lj;
	CHK(DMDAGetCorners(da, &i0, &j0, NULL, &li, &lj, NULL));
	CHK(DMDAVecGetArrayRead(da, xl, &a));
	CHK(DMDAVecGetArray(da, y, &b));
	for (PetscInt j = j0; j < j0 + lj; j++) { /* j: the row (the kernel's x), i: the column (y) */
		if (j == 0 || j == n - 1) {
			for (PetscInt i = i0; i < i0 + li; i++)
				b[j][i] = a[j][i];
			continue;
		}
		const PetscScalar *up = a[j - 1], *row = a[j], *down = a[j + 1];
		PetscScalar *out = b[j];
		for (PetscInt i = i0; i < i0 + li; i++) /* the same loop as peer_stencil.c's: it vectorizes */
			out[i] = (up[i] + down[i] + row[i - 1] + row[i + 1] + row[i]) / 5;
		if (i0 == 0)
			out[0] = row[0];
		if (i0 + li == n)
			out[n - 1] = row[n - 1];
	}
	CHK(DMDAVecRestoreArrayRead(da, xl, &a));
	CHK(DMDAVecRestoreArray(da, y, &b));
	double t2 = MPI_Wtime();
	PetscInt gi0, gj0, gli, glj; /* the ghosted box: a side with a ghost strip has a neighbour (star: no corners) */
	CHK(DMDAGetGhostCorners(da, &gi0, &gj0, NULL, &gli, &glj, NULL));
	t->recv += (double)(sizeof(PetscScalar) *
	                    (size_t)(((gi0 < i0) + (gi0 + gli > i0 + li)) * lj + ((gj0 < j0) + (gj0 + glj > j0 + lj)) * li));
	t->exch += t1 - t0;
	t->comp += t2 - t1;
	t->total += t2 - t0;
}

/* max relative error of global vector x against the serial stencil after `calls` calls
 * (collective; the value on rank 0). */
static double verify(DM da, Vec x, PetscInt n, int calls)
{
	Vec nat, all;
	VecScatter sc;
	CHK(DMDACreateNaturalVector(da, &nat));
	CHK(DMDAGlobalToNaturalBegin(da, x, INSERT_VALUES, nat));
	CHK(DMDAGlobalToNaturalEnd(da, x, INSERT_VALUES, nat));
	CHK(VecScatterCreateToZero(nat, &sc, &all));
	CHK(VecScatterBegin(sc, nat, all, INSERT_VALUES, SCATTER_FORWARD));
	CHK(VecScatterEnd(sc, nat, all, INSERT_VALUES, SCATTER_FORWARD));
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double err = 0;
	if (rank == 0) {
		const PetscScalar *v;
		CHK(VecGetArrayRead(all, &v));
		real *ref = stencil_reference(n, calls);
		err = ref ? rel_err_real(v, ref, (int64_t)n * n) : INFINITY; /* natural order: row-major, row = j */
		free(ref);
		CHK(VecRestoreArrayRead(all, &v));
	}
	CHK(VecScatterDestroy(&sc));
	CHK(VecDestroy(&all));
	CHK(VecDestroy(&nat));
	return err;
}

int main(int argc, char **argv)
{
	CHK(PetscInitialize(&argc, &argv, NULL, NULL));
	if (argc < 3) {
		fprintf(stderr, "usage: peer_petsc N REPS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	PetscInt n = (PetscInt)atoll(argv[1]);
	int reps = atoi(argv[2]), ranks;
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	int dims[2] = {0, 0};
	MPI_Dims_create(ranks, 2, dims);
	DM da;
	CHK(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, dims[1], dims[0],
	                 1, 1, NULL, NULL, &da));
	CHK(DMSetUp(da));
	Vec x, y, xl;
	CHK(DMCreateGlobalVector(da, &x));
	CHK(DMCreateGlobalVector(da, &y));
	CHK(DMCreateLocalVector(da, &xl));
	PetscScalar **v;
	PetscInt i0, j0, li, lj;
	CHK(DMDAGetCorners(da, &i0, &j0, NULL, &li, &lj, NULL));
	CHK(DMDAVecGetArray(da, x, &v));
	for (PetscInt j = j0; j < j0 + lj; j++)
		for (PetscInt i = i0; i < i0 + li; i++)
			v[j][i] = stencil_input(j, i);
	CHK(DMDAVecRestoreArray(da, x, &v));
	dist_times warm = {0, 0, 0, 0}, *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	call(da, x, xl, y, n, &warm); /* untimed */
	Vec s = x;
	x = y;
	y = s;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < reps; r++) {
		call(da, x, xl, y, n, &t[r]);
		s = x;
		x = y;
		y = s;
	}
	double err = verify(da, x, n, reps + 1);
	char size[32];
	snprintf(size, sizeof size, "%lldx%lld", (long long)n, (long long)n);
	dist_report(MPI_COMM_WORLD, "petsc-dmda-f64", "stencil5", dims, 2, size, t, reps, err, DIST_TOL_F32);
	free(t);
	CHK(VecDestroy(&x));
	CHK(VecDestroy(&y));
	CHK(VecDestroy(&xl));
	CHK(DMDestroy(&da));
	CHK(PetscFinalize());
	return 0;
}
