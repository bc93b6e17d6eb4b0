/* jacobi_driver.c: calls the distributed Jacobi step of examples/dist_jacobi.cachet R times
 * on each rank's own blocks (the calling convention of `cachet emit --target mpi` without
 * -DCTD_MAIN) and compares every rank's result with a serial loop computed the same way; for
 * tests/cli/distributed.sh. Built with -DJN=rows -DJM=columns (the kernel's N and M).
 *
 * One kernel, B from A: after each call the rank copies its box of B (B is written only at
 * (x, y), so its local box is exactly the block it owns) into the same elements of its A
 * buffer. The rest of A's buffer is the halo, stale now; the next call's exchange refreshes
 * it from the neighbours, so every call exchanges halos, as a time loop on a cluster does.
 * Each step sums four values in the order the kernel does and divides by 4 (exact), so the
 * result must equal the serial one bit for bit: max |error| == 0.
 * Prints "checked E elements, max error X, exchanges C" on rank 0; exit 0 when E == JN*JM,
 * X == 0 and every call on more than one rank moved bytes. */
#include <mpi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cachet_dist_jacobi_dist(MPI_Comm comm, void *const *local);
int cachet_dist_jacobi_dist_local_box(MPI_Comm comm, int array, int64_t *lo, int64_t *hi);
void cachet_dist_jacobi_dist_stats(double *exchange_s, double *compute_s, int64_t *sent,
                                   int64_t *received);
const char *cachet_dist_jacobi_dist_error(void);

/* The starting grid: small multiples of 1/8, so that no step rounds differently by chance. */
static double start_value(int64_t x, int64_t y)
{
	return (double)((x * 131 + y * 71) % 97) / 8.0 - 6.0;
}

/* R serial Jacobi steps on a JN x JM grid; the result in a (b is scratch). */
static void serial(double *a, double *b, int steps)
{
	for (int s = 0; s < steps; s++) {
		for (int64_t x = 0; x < JN; x++)
			for (int64_t y = 0; y < JM; y++) {
				if (0 < x && x < JN - 1 && 0 < y && y < JM - 1)
					b[x * JM + y] = (a[(x - 1) * JM + y] + a[(x + 1) * JM + y] +
					                 a[x * JM + y - 1] + a[x * JM + y + 1]) /
					                4;
				else
					b[x * JM + y] = a[x * JM + y];
			}
		memcpy(a, b, sizeof(double) * JN * JM);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	int64_t alo[2], ahi[2], blo[2], bhi[2];
	if (cachet_dist_jacobi_dist_local_box(MPI_COMM_WORLD, 0, alo, ahi) ||
	    cachet_dist_jacobi_dist_local_box(MPI_COMM_WORLD, 1, blo, bhi)) {
		fprintf(stderr, "rank %d: local_box failed: %s\n", me,
		        cachet_dist_jacobi_dist_error());
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int64_t an = ahi[1] - alo[1], bn = bhi[1] - blo[1];
	int64_t acount = (ahi[0] - alo[0]) * an, bcount = (bhi[0] - blo[0]) * bn;
	double *a = calloc((size_t)(acount > 0 ? acount : 1), sizeof *a);
	double *b = calloc((size_t)(bcount > 0 ? bcount : 1), sizeof *b);
	double *ra = malloc(sizeof *ra * JN * JM), *rb = malloc(sizeof *rb * JN * JM);
	if (!a || !b || !ra || !rb)
		MPI_Abort(MPI_COMM_WORLD, 2);
	/* every rank fills its whole local box of A, halo included: the first call's exchange
	 * overwrites the halo with the same values */
	for (int64_t x = alo[0]; x < ahi[0]; x++)
		for (int64_t y = alo[1]; y < ahi[1]; y++)
			a[(x - alo[0]) * an + (y - alo[1])] = start_value(x, y);
	int64_t quiet_calls = 0;
	for (int s = 0; s < steps; s++) {
		void *local[2] = {a, b};
		if (cachet_dist_jacobi_dist(MPI_COMM_WORLD, local) != 0) {
			fprintf(stderr, "rank %d: call %d failed: %s\n", me, s,
			        cachet_dist_jacobi_dist_error());
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		double te, tc;
		int64_t sent, received, all = 0;
		cachet_dist_jacobi_dist_stats(&te, &tc, &sent, &received);
		MPI_Allreduce(&received, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		quiet_calls += all == 0;
		for (int64_t x = blo[0]; x < bhi[0]; x++)
			for (int64_t y = blo[1]; y < bhi[1]; y++)
				a[(x - alo[0]) * an + (y - alo[1])] =
				    b[(x - blo[0]) * bn + (y - blo[1])];
	}
	for (int64_t x = 0; x < JN; x++)
		for (int64_t y = 0; y < JM; y++)
			ra[x * JM + y] = start_value(x, y);
	serial(ra, rb, steps);
	double err = 0, maxerr = 0;
	int64_t n = 0, total = 0;
	for (int64_t x = blo[0]; x < bhi[0]; x++)
		for (int64_t y = blo[1]; y < bhi[1]; y++) {
			double e = fabs(b[(x - blo[0]) * bn + (y - blo[1])] - ra[x * JM + y]);
			err = e > err ? e : err;
			n++;
		}
	MPI_Reduce(&err, &maxerr, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	int ok = 1;
	if (me == 0) {
		printf("%d ranks, %d calls: checked %lld elements, max error %g, calls without an "
		       "exchange %lld\n",
		       size, steps, (long long)total, maxerr, (long long)quiet_calls);
		ok = total == (int64_t)JN * JM && maxerr == 0 && (size == 1 || quiet_calls == 0);
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(a);
	free(b);
	free(ra);
	free(rb);
	MPI_Finalize();
	return ok ? 0 : 1;
}
