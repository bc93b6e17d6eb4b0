/* corecost.h: the tuner's core cost (register tiles, vector loads, FMAs) of a planned loop tree. */
#ifndef CT_TUNE_CORECOST_H
#define CT_TUNE_CORECOST_H

#include "ir/looptree.h"

/* What the core cost reads of the target (tune_machine_init fills it). */
typedef struct tune_machine {
	double ghz;            /* clock: cycles to ns */
	int fma_units;         /* vector FMAs issued per cycle */
	int fma_latency;       /* cycles from one dependent FMA to the next */
	int vector_bytes;      /* widest vector */
	int vector_registers;
	int load_ports;        /* vector loads issued per cycle */
	int threads;           /* threads the parallel loops run on (>= 1) */
} tune_machine;

/* The core cost of one run of t, in issue cycles and in ns. */
typedef struct tune_core_cost {
	double cycles, ns;
	int tiles;             /* register-tile loops of the tree (a main and a tail version are two) */
	double tile_flops;     /* flops of the whole run done inside register tiles (a*b+c: 2) */
	/* cycles and ns are the slowest thread's: a parallel band of P iterations on T
	 * threads costs ceil(P / T) of its iterations, not P. share = those cycles over the
	 * cycles of one thread doing everything (1 without parallel loops, about 1 / T
	 * with enough iterations): the tuner scales the misses' time by it. */
	double share;
} tune_core_cost;

/* From ctx's target (measures the FMA peak and clock once per ctx; defaults
 * where a field is unknown: 3 GHz, 1 FMA unit, latency 4, 16-byte vectors);
 * threads: ctx's CT_OPT_THREADS, else one per processor online (as a run). */
CT_INTERN void tune_machine_init(ct_ctx *ctx, tune_machine *m);

/* Issue cycles of t's statements on m (docs/TUNE.md, "The cost"): a
 * register tile (rtile.c's pattern) per iteration of its loop the larger of
 * its vector FMAs / fma_units, its operand loads / load_ports and the FMA
 * latency, plus its load, store and drain once per execution of the loop;
 * any other statement the larger of its accesses / load_ports and its
 * operations / fma_units, divided by the lanes of its type that an
 * enclosing vectorized loop fills. CT_ERR_LIMIT (on t's ctx) when the sizes overflow. */
CT_INTERN ct_status tune_core_cycles(const ct_looptree *t, const tune_machine *m, tune_core_cost *out);

#endif
