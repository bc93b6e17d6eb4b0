/* openblas_pick.c: shows the OpenBLAS the benches compare with on this machine: the probe's choice as bench_openblas_at_best makes it, and the kernel set the library then runs.
 *
 * Usage: openblas_pick [--openblas-coretype NAME]   (make bench-openblas-pick; built beside
 * openblas_best, which it runs as the benches do). Prints the header line the benches print
 * ("peer: ..."), the kernel set the loaded library reports, and the two variables it loaded
 * with. tests/cli/openblas_probe.sh checks the benches' pick with it. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
	argc = bench_openblas_at_best(argc, argv);
	if (argc != 1) {
		fprintf(stderr, "usage: openblas_pick [--openblas-coretype NAME]\n");
		return 2;
	}
	const char *core = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
	printf("peer: %s\n", bench_peer_note());
	printf("loaded: %s\n", openblas_get_corename());
	printf("OPENBLAS_CORETYPE=%s\nOPENBLAS_L2_SIZE=%s\n", core ? core : "(unset)", l2 ? l2 : "(unset)");
	return 0;
}
