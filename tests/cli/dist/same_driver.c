/* same_driver.c: whether a distributed kernel gives bit for bit the result of the same kernel
 * run in one process, on the same inputs; for tests/cli/distributed.sh.
 * Linked with two emits of one .cachet file: `cachet emit --target mpi` (the distributed
 * program, without -DCTD_MAIN) and `cachet emit` (the single-process kernel, its functions
 * renamed to ser_kernel and ser_entry with -D), both compiled with the flags `cachet run`
 * uses. Built with -DKNAME=<kernel name>, -DNARR=<arrays> and -DSIZES="{...}" (elements of
 * each array in declaration order, 0 for a temp); every array is f64.
 * Rank 0 fills every argument array (inputs and outputs alike: inout arrays accumulate),
 * runs the single-process kernel on one copy and cachet_KNAME_dist_global on another, and
 * compares the bytes. Prints "identical: N elements" or where they differ; exit 0 when
 * identical. */
#include <mpi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define DIST_GLOBAL CAT(cachet_, CAT(KNAME, _dist_global))
#define DIST_ERROR CAT(cachet_, CAT(KNAME, _dist_error))

int DIST_GLOBAL(MPI_Comm comm, int root, void *const *global);
const char *DIST_ERROR(void);
int ser_entry(void *const *args, const int64_t *params);

static const int64_t sizes[NARR] = SIZES;

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	void *one[NARR + 1], *dist[NARR + 1];
	for (int a = 0; a < NARR; a++) {
		one[a] = dist[a] = NULL;
		if (me != 0 || sizes[a] == 0)
			continue;
		double *x = malloc(sizeof *x * (size_t)sizes[a]),
		       *y = malloc(sizeof *y * (size_t)sizes[a]);
		if (!x || !y)
			MPI_Abort(MPI_COMM_WORLD, 2);
		/* values with full mantissas, so that any change of the order of a sum shows */
		for (int64_t i = 0; i < sizes[a]; i++)
			x[i] = y[i] = sin(0.37 * (double)i + 1.3 * a);
		one[a] = x;
		dist[a] = y;
	}
	int rc = 0;
	if (me == 0) {
		int64_t params[1] = {0};
		rc = ser_entry(one, params);
		if (rc)
			fprintf(stderr, "the single-process kernel returned %d\n", rc);
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rc)
		MPI_Abort(MPI_COMM_WORLD, 3);
	if (DIST_GLOBAL(MPI_COMM_WORLD, 0, dist) != 0) {
		fprintf(stderr, "rank %d: %s\n", me, DIST_ERROR());
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	int ok = 1;
	if (me == 0) {
		int64_t n = 0, differ = 0;
		double worst = 0;
		for (int a = 0; a < NARR; a++) {
			const double *x = one[a], *y = dist[a];
			for (int64_t i = 0; i < sizes[a]; i++) {
				n++;
				if (memcmp(&x[i], &y[i], sizeof x[i]) != 0) {
					double d = fabs(x[i] - y[i]);
					if (differ++ == 0)
						fprintf(stderr,
						        "array %d element %lld: one process %.17g, "
						        "distributed %.17g\n",
						        a, (long long)i, x[i], y[i]);
					worst = d > worst ? d : worst;
				}
			}
		}
		if (differ)
			printf("differ: %lld of %lld elements, max |difference| %g\n",
			       (long long)differ, (long long)n, worst);
		else
			printf("identical: %lld elements\n", (long long)n);
		ok = differ == 0;
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int a = 0; a < NARR; a++) {
		free(one[a]);
		free(dist[a]);
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
