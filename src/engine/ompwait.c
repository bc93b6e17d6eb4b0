/* ompwait.c: how long the threads of generated parallel loops spin at a barrier before they sleep (the front ends' default). */
#include "core/core.h"

#include <stdlib.h>

/* Spins of libgomp's wait loop (GOMP_SPINCOUNT) before a waiting thread sleeps. A sleeping
 * thread's wake-up cost 30-80 us on the 2-core VMs of bench/RESULTS.md ("A bounded spin"),
 * so a kernel call of a fraction of a millisecond, or a call with several parallel loops,
 * lost up to half its time waking the second thread; spinning without end (libgomp's
 * OMP_WAIT_POLICY=active) took a core from other work on a shared machine. 10000 spins last
 * 0.2-0.4 ms there (libgomp assumes 0.1 ms): back-to-back loops and calls find the team
 * awake, and a thread waiting longer sleeps. A count, not a time, because that is what
 * libgomp reads; other OpenMP runtimes ignore it. */
#define CT_OMP_SPINCOUNT "10000"

int ct_threads_wait_default(void)
{
	if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
		return 0;
	return setenv("GOMP_SPINCOUNT", CT_OMP_SPINCOUNT, 0) == 0;
}
