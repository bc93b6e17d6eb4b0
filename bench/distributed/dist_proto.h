/* dist_proto.h: the prototypes of a distributed kernel's exports (cachet emit --target mpi) that bench_distributed.c calls; KNAME is the kernel's name. */
#ifndef CT_DIST_PROTO_H
#define CT_DIST_PROTO_H

#include <stdint.h>

#include <mpi.h>

/* run.sh compiles the emitted C with this header forced in (-include), so a generated entry
 * whose signature differs from these is a compile error, never a crash at run time. */
#define DIST_CAT3(a, b, c) a##b##c
#define DIST_SYM(k, s) DIST_CAT3(cachet_, k, s)
#define DIST_GLOBAL DIST_SYM(KNAME, _dist_global)
#define DIST_STATS DIST_SYM(KNAME, _dist_stats)
#define DIST_CALL DIST_SYM(KNAME, _dist)
#define DIST_LOCAL_BOX DIST_SYM(KNAME, _dist_local_box)

#ifdef DIST_GLOBAL_NO_PARAMS
/* The form without runtime params (their values fixed when the kernel was emitted, -D). */
int DIST_GLOBAL(MPI_Comm comm, int root, void *const *global);
#else
/* Issue #32's calling convention: root holds the whole arrays in declaration order (temps NULL),
 * the other ranks NULLs; params: the runtime params in declaration order. Scatters, runs,
 * gathers; 0 on success. */
int DIST_GLOBAL(MPI_Comm comm, int root, const int64_t *params, void *const *global);
#endif
/* Callers whose data is distributed already: one call on this rank's local boxes, and the box
 * of array a the rank holds (lo .. hi-1 in global indices; dense, declared layout). */
int DIST_CALL(MPI_Comm comm, void *const *local);
int DIST_LOCAL_BOX(MPI_Comm comm, int a, int64_t *lo, int64_t *hi);
/* This rank's figures for the last call. */
void DIST_STATS(double *exchange_s, double *compute_s, int64_t *bytes_sent, int64_t *bytes_received);

#endif
