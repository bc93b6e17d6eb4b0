/* hang_rank.c: an MPI program whose rank 1 waits forever for a message nobody sends (and the
 * others in a barrier), for tests/cli/distributed.sh's timeout check; each rank writes its pid
 * to DIR/pid.RANK (argv[1] = DIR) so the test can tell whether any outlived the kill. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me = 0, x = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (argc > 1) {
		char path[4096];
		snprintf(path, sizeof path, "%s/pid.%d", argv[1], me);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%ld\n", (long)getpid());
			fclose(f);
		}
	}
	if (me == 1)
		MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return x;
}
