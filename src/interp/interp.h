/* interp.h: internal entry points of the interpreter: batched trace, references, layouts. */
#ifndef CT_INTERP_H
#define CT_INTERP_H

#include "ir/looptree.h"

/* Accesses handed over per batch by interp_trace_batch. */
#define INTERP_BATCH 4096

/* One access of the address trace. */
typedef struct interp_access {
	int64_t offset; /* element offset in the buffer */
	int32_t buffer; /* storage of the tree: t->arrays index (cache buffers after the arrays) */
	int32_t ref;    /* reference id: see interp_refs; -1 for cache copies */
	int32_t is_write;
	int32_t thread; /* interp_trace_threads: the thread that runs it (0 otherwise) */
} interp_access;

/* interp_trace_threads: a record with this buffer marks the entry of a parallel loop, where
 * the threads start together; its ref is the loop's team (offset and thread unused). */
#define INTERP_BARRIER (-2)

/* Receives n (1..INTERP_BATCH) accesses in trace order; anything but CT_OK
 * stops the walk, and interp_trace_batch returns it. */
typedef ct_status (*interp_batch_fn)(void *ud, const interp_access *acc, int n);

/* The trace of ct_interp_trace, in batches: cheaper than one call per
 * access for consumers that loop over many (the simulator). Same order,
 * same errors. */
ct_status interp_trace_batch(ct_looptree *t, interp_batch_fn fn, void *ud);

/* The trace of interp_trace_batch, in the same order, with each access tagged by the thread
 * of `nthreads` (>= 1) that runs it: every parallel loop the walk meets outside another one
 * is split as the generated code's `omp for schedule(static)` splits it (libgomp: of n
 * iterations over a team of min(nthreads, the plan's max_threads, n), the first n % team
 * threads run n / team + 1 in a row, the others n / team), policy=dynamic included (an
 * assumption: its split is the run's); everything else runs on thread 0. An INTERP_BARRIER
 * record precedes each such loop. The caller refuses bands of other shapes (collapse,
 * grids, merged tails: model/threads_affine.c). */
ct_status interp_trace_threads(ct_looptree *t, int nthreads, interp_batch_fn fn, void *ud);

/* A reference: one array access of one statement or let of the IR. Ids
 * number the accesses of the kernel in textual order of the statements and,
 * within one, in trace order (CLI.md): right-hand side reads left to right,
 * then for op= the left-hand side read, then the left-hand side write. The
 * copies that tails and cache regions make of a statement share its ids
 * (array is the kernel array of the original statement, whatever storage a
 * copy reads); the copy statements of cache regions have no reference. */
typedef struct interp_ref {
	int array;
	const ir_node *node; /* ND_STMT or ND_LET */
	int stmt;            /* node->stmt_id; 0 for a let */
	int pos;             /* 0-based position within the node's accesses */
	bool is_write;
} interp_ref;

/* Table of every reference of t's kernel: *refs (ct_free on the kernel's
 * ctx) with *n entries, indexed by reference id. */
ct_status interp_refs(const ct_looptree *t, interp_ref **refs, int *n);

/* Number of accesses of t that the interpreter checks at run time (those
 * that loop ranges and the facts of enclosing ifs do not prove in bounds):
 * what the tests of the bounds proofs look at. */
ct_status interp_unproven(ct_looptree *t, int *n);

/* ct_interp_run with the strided arrays laid out by view (the values of
 * src/ir/slots.h after k->nparams params; NULL: densely) and
 * view_nelem[a] the element count of array a's buffer (the run-time bounds
 * checks of a strided array use it). */
ct_status interp_run_views(ct_looptree *t, void *const *buffers, const int64_t *view,
                           const int64_t *view_nelem);

#endif
