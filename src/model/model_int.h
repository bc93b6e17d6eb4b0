/* model_int.h: the cache model's internals shared by model.c and its model_*.c parts. */
#ifndef CT_MODEL_MODEL_INT_H
#define CT_MODEL_MODEL_INT_H

#include "model/model.h"

#include <stdlib.h>
#include <string.h>

/*
 * How it works (docs/MODEL.md has the long version).
 *
 * 1. The loop tree becomes a model tree of loops with constant trip counts
 *    (every loop of a scheduled tree has bounds over params only) and
 *    statements whose accesses are affine in the trip counters t_j of the
 *    enclosing loops. `if`s and the guards of halo copies are removed by
 *    index-set splitting: a loop is cut into pieces in which every
 *    condition below it is decided.
 * 2. DL(window) is the number of distinct lines of one array that a window
 *    of the run touches: some subtrees, with ranges of their own counters.
 *    Each access covers a box (a progression per dimension) of index space;
 *    the union is counted row by row in address order. The sum of DL over
 *    all instances of a window (all values of the enclosing counters)
 *    depends only on the residue of each instance's address shift modulo
 *    the line size, so it is a weighted sum over at most `line` residues.
 * 3. In any window, accesses - DL = the accesses that find their line
 *    earlier in the same window. Differences of these counts over nested
 *    windows give exactly how many accesses find their line in the same
 *    statement instance, in an iteration delta back of a loop, or in an
 *    earlier sibling subtree; their stack distance is the footprint (all
 *    arrays) of the window between source and target.
 */


/* Deepest loop nest the model follows (the plan pass allows 256). */
#define MODEL_MAX_DEPTH 300
/* Instances of a window whose accesses shift differently are enumerated up to this many,
 * sampled beyond. */
#define MODEL_ENUM_LIMIT 16384
#define MODEL_SAMPLES 512
/* A mixed piece of a split loop is cut into single iterations up to this length. */
#define MODEL_CUT_LIMIT 64
/* Scratch of dl_boxes's periodic rows and planes: 129 increments of up to 256 shifts each. */
#define MODEL_INC_SCRATCH (2 * 129 * 256)
/* The work of one memo lookup of dl_stat in rows of boxes walked (model_result.work). */
#define MODEL_LOOKUP_WORK 128

/* ------------------------------------------------------------ model tree */

typedef struct mnode mnode;

/* One access of a statement: index d = c[d] + sum_j beta[d * depth + j] * t_j. */
typedef struct macc {
	int array;
	int depth;
	int64_t c[IR_MAX_RANK];
	int64_t *beta;
	bool inexact;              /* a subscript the model could not express */
} macc;

struct mnode {
	bool is_loop;
	const lt_node *lt;         /* the loop or statement of the tree it comes from (NULL: the run) */
	int64_t n;                 /* loop piece: trip count (>= 1) */
	int depth;                 /* loops enclosing this node; a loop's counter is t_depth */
	mnode *parent;
	int nkids, capkids;
	mnode **kids;
	mnode **anc;               /* statement: anc[j] = the loop of counter j (depth entries) */
	int nacc;
	macc *acc;
	int stmt_id;
	int64_t *per_iter;         /* [na]: accesses in one iteration (one execution) */
	int64_t inst;              /* executions of this node (product of enclosing trip counts) */
	/* statement: access i's byte address is aff[i * (depth + 1)] + sum_j aff[i * (depth + 1)
	 * + 1 + j] * t_j (its array's own region; model_enum.c walks accesses with it) */
	int64_t *aff;
	bool any_inexact;          /* some access at or below this node is inexact */
	int wid;                   /* warp.c: the loop's entry in its table (set by its pass) */
};

/* One loop piece on the builder's path: v = lo + step * (off + t), t in [0, n). */
typedef struct mpath {
	const lt_node *lt;
	int64_t lo, step, off, n;
	mnode *node;
} mpath;

#define MAX_PINS 6

/* A window part: the subtree of x, with x's own counter in [a, b) when x is a loop. */
typedef struct wpart {
	const mnode *x;
	int64_t a, b;
	int64_t xoff;              /* counter fix-1 of a sliding window: start + xoff (parts below it) */
	int alo, ahi;              /* a statement: only its accesses alo .. ahi-1 (ahi 0: all) */
	int npin;                  /* counters below fix held at one value: pin_depth[i] = pin_value[i] */
	int pin_depth[MAX_PINS];
	int64_t pin_value[MAX_PINS];
} wpart;

#define MAX_PARTS 32
#define MAX_FILTERS 6
/* Most residues of one filter (the bits of flt_mask). */
#define MAX_PERIOD 32

/* A window: instances are the values of counters 0 .. fix-1 of the parts' common path
 * (counter fix-1 ranges over [0, mlast) when mlast > 0); parts hang below. */
typedef struct wspec {
	int fix;
	int64_t mlast;
	/* instance classes: counter flt_j[i] (< fix) takes only the values in [flt_lo[i],
	 * flt_hi[i]) whose residue mod flt_per[i] is in the bit set flt_mask[i] (a reuse whose
	 * distance varies from instance to instance, split by the residues of its address
	 * shifts or by ranges) */
	int nflt;
	int flt_j[MAX_FILTERS];
	int64_t flt_per[MAX_FILTERS], flt_lo[MAX_FILTERS], flt_hi[MAX_FILTERS];
	uint32_t flt_mask[MAX_FILTERS];
	int np;
	wpart p[MAX_PARTS];
} wspec;

/* A memo entry of dl_sum. */
typedef struct memo {
	uint64_t hash;
	int n;
	int64_t *key;      /* spec_key, malloc'd; NULL: a free slot */
	int64_t sum;
	int64_t mn, mx;    /* the least and the most distinct lines of one instance */
	bool inexact;
} memo;

/* A residue-cache entry: the distinct lines of the union of one window's boxes (at instance 0)
 * with every address shifted by r bytes, for each r < line (-1: not yet counted), and whether
 * that count is inexact. Windows that differ only in their instances (the residue classes
 * and ranges of the splits) share it. */
typedef struct rmemo {
	uint64_t hash;
	int n;
	int64_t *key;      /* NULL: a free slot */
	int64_t *val;      /* [line] */
	uint8_t *ix;       /* [line] */
} rmemo;

/* model_tree.c's rounding of one affine loop's mean trip counts: the trips its instances were
 * given short of their means so far (negative: past them). */
#define MODEL_AFFINE_LOOPS 64
typedef struct affine_carry {
	const lt_node *lt;
	double carry;
} affine_carry;

typedef struct model {
	ct_looptree *t;
	ct_ctx *ctx;
	ct_arena arena;
	int64_t *pv;
	int na;
	int64_t *elem;             /* [na] bytes */
	int64_t *stride;           /* [na * IR_MAX_RANK] elements */
	int *order;                /* [na * IR_MAX_RANK] dims by decreasing stride */
	int *rank;                 /* [na] */
	mnode root;
	ct_status st;
	bool *inexact;             /* [na] */
	mpath path[MODEL_MAX_DEPTH];
	int depth;
	int64_t affine_pieces;     /* pieces of the path cut for affine loops below (0: 1) */
	int naffine;               /* affine loops built so far, with their rounding carries */
	affine_carry affine[MODEL_AFFINE_LOOPS];
	/* the analysis of one line size */
	int64_t line;
	int64_t caps[SIM_MAX_LEVELS]; /* capacities in lines of the levels with this line size */
	int refine;                /* how deep cells that straddle a capacity are split */
	int ncaps;
	model_lines *ml;
	int capparts;
	memo *memo;
	int nmemo, capmemo;
	rmemo *rmemo;
	int nrmemo, caprmemo;
	/* scratch of dl_sum_eval */
	int64_t *hist, *hist2, *nz;  /* [line] each */
	int64_t *incs;             /* MODEL_INC_SCRATCH: the periodic increments of dl_boxes */
	struct wlist_s {
		struct wacc *v;
		int n, cap;
	} scratch;
	struct box *boxes;
	int capboxes;
	struct wspec *ws;          /* 8 windows of scratch for the grid */
	int *cand;
	int capcand;
	/* the work done (rows of boxes walked, memo lookups) and the most allowed (0: no limit) */
	int64_t work, budget;
	bool over_budget;          /* the work went over budget: the analysis stopped (m->st set) */
	/* partial enumeration (model_enum.c): the work at which the innermost node being analysed
	 * is counted from its accesses instead (0: none), whether that stopped the analysis (m->st
	 * set until the node catches it), and the accesses whose reuse was counted so */
	model_enum_mode enumerate;
	int enum_depth;
	int64_t deadline, fired;   /* fired: the deadline that stopped it */
	bool bailing;
	int64_t enumerated;
} model;

/* A sum over the instances of a window, with the least and the most of one instance. */
typedef struct dlstat {
	int64_t sum, mn, mx;
} dlstat;

/* model_tree.c */
/* Record status st with `what` on the ctx (the first failure wins); false. */
bool mdl_fail(model *m, ct_status st, const char *what);
/* Zeroed memory from the model's arena (NULL and a failure when out of memory). */
void *mdl_alloc(model *m, size_t n);
/* Build the model nodes of the tree nodes kids[0..nkids) under parent. */
bool mdl_build_list(model *m, lt_node *const *kids, int nkids, mnode *parent);
/* per_iter and inst of every node below x. */
bool mdl_count_accesses(model *m, mnode *x, int64_t inst);

/* model.c */
/* The model tree of t alone (setup, build, counts; no analysis): a model that mdl_tree_free
 * frees; NULL when out of memory. m->st says whether the tree was built (the status and message
 * are on t's ctx). */
model *mdl_tree_new(ct_looptree *t);
void mdl_tree_free(model *m);

/* model_fp.c */
/* Greatest common divisor (Euclid; the callers pass values >= 0). */
int64_t mdl_gcd64(int64_t a, int64_t b);
/* The filter of counter j in w, or -1. */
int mdl_filter_of(const wspec *w, int j);
/* The values counter j (< fix) of window w takes when its loop runs n times: how many, and
 * the k-th of them (in increasing order). */
int64_t mdl_inst_count(const wspec *w, int j, int64_t n);
/* Address shift coefficient (bytes per step) of counter j for access wa. */
int64_t mdl_gamma_of(const model *m, const macc *ac, int j);
/* Sum over the instances of window w of the distinct lines of array it touches (memoized
 * per line size; array -1: all arrays). */
int64_t mdl_dl_sum(model *m, int array, const wspec *w, bool *inexact);
/* Forget the memo of dl_sum (a new line size). */
void mdl_memo_clear(model *m);
/* Average footprint in lines (all arrays) of one instance of window w. */
double mdl_footprint(model *m, const wspec *w);
/* Both: the average footprint of one instance of window w, *lo and *hi the least and the most
 * (one memo lookup). */
double mdl_footprint_stat(model *m, const wspec *w, double *lo, double *hi);

/* model_enum.c */
/* Accesses of every instance of x together; -1 when x cannot be enumerated (an instance too
 * long to walk, or an access below it inexact). */
int64_t mdl_enum_cost(const model *m, const mnode *x);
/* The partitions of the reuse inside every instance of x, counted from its accesses: what
 * the analysis of x (node_parts) gives, with exact distances. Adds the accesses walked (one
 * instance of each class stands for all of them) to m->work. */
bool mdl_enum_node(model *m, const mnode *x);

/* Work units of one access walked by mdl_enum_node (about the time of one row of boxes). */
#define MODEL_ENUM_WORK 8

/* model_parts.c */
/* A new partition at the end of m->ml's (NULL and a failure when out of memory). */
model_part *mdl_new_part(model *m);
/* The reuse partitions of line size `line` into *ml; false on failure (status on m). */
bool mdl_analyse_line(model *m, const sim_spec *spec, int64_t line, model_lines *ml);

/* ------------------------------------------------------------ threads (share.c) */

/* Loops of a collapsed parallel band followed at most. */
#define SHARE_MAX_BAND 8

/* One thread's share of the run as the generated code splits it (predict --threads,
 * docs/MODEL.md "Threads"): the iterations of each parallel band are flattened and cut into
 * contiguous chunks as OpenMP's schedule(static) does over a team of
 * ct_team(T, max_threads, iterations) threads; everything outside the bands runs on thread 0.
 * A band is what src/gen/cgen.c runs as one omp for: the loop parallelize marks and the
 * collapse - 1 single loops in it; or that loop's main and tail versions together
 * (gen_parallel_versions); or, for parallelize(i, j) over versions, every pair of an i and a j
 * block (pgrid.c). Level c of the band is the loops over index bidx[c] (level 0: the loops
 * top[], both versions). The walkers (warp.c, threads.c) ask it which iterations of a loop
 * piece to run. */
typedef struct mshare {
	int thread, nthreads;          /* this thread of nthreads (>= 1) */
	const ct_kernel *k;
	bool active;                   /* inside a band now */
	int ncol;                      /* loop levels of the band */
	int bidx[SHARE_MAX_BAND];      /* the index of each level's loops */
	const lt_node *top[2];         /* level 0's loops: the parallel loop (and its tail version) */
	int ntop;
	int64_t trips[SHARE_MAX_BAND]; /* iterations of each band level (all its pieces, versions) */
	int64_t below[SHARE_MAX_BAND]; /* product of the trips of the band loops inside it */
	int64_t lo, hi;                /* this thread's flattened iterations of the band */
	int64_t pre[SHARE_MAX_BAND + 1]; /* flattened index of the band loops outside level c */
	int team;                      /* threads of the current band (0 before any band) */
	int bands;                     /* band instances entered so far */
	bool assumed;                  /* a band whose code is not one static omp for (dynamic,
	                                * spmd): split as if it were */
} mshare;

/* The band level of loop piece x (0 for the parallel loop itself), or -1 when x is in no band. */
int share_level(const mshare *s, const mnode *x);
/* True when lt may be a loop of a parallel band (the parallel loop, or a loop inside it over
 * an index of its parallelize). */
bool share_is_band(const lt_node *lt);
/* Enter piece x of band level c: the iterations [*a, *b) of it that the thread runs and the
 * piece's offset in its loop (*off, for share_iter). Level 0 starts the band. */
void share_enter(mshare *s, const mnode *x, int c, int64_t *a, int64_t *b, int64_t *off);
/* Iteration it of the level-c piece entered with offset off is running. */
void share_iter(mshare *s, int c, int64_t off, int64_t it);
/* Leave a level-c piece (level 0: the band ends when it was its loop's last piece). */
void share_leave(mshare *s, const mnode *x, int c);
/* True when statements outside any band run here (thread 0, or no split). */
bool share_runs_serial(const mshare *s);
/* True when parallel loop piece x is the first (last) piece of its band's level 0 among its
 * parent's children (the band's barriers: before the first, after the last). */
bool share_first_piece(const mshare *s, const mnode *x);
bool share_last_piece(const mshare *s, const mnode *x);

/* ct_kernel_predict_threads, with warp false: every private level walked, none warped (the
 * tests compare the two). */
ct_status threads_predict(ct_kernel *k, const char *spec_text, int threads, bool warp, ct_thread_result *r);

/* predict --threads of a kernel with affine loop bounds (t lowered from it, r's levels and
 * per-thread arrays set up by threads_predict): the interpreter's trace split over nt threads
 * as the generated code splits its single parallel loops (interp_trace_threads), each
 * thread's accesses simulated on its private levels, all threads' interleaved one at a time
 * between barriers on the shared ones. CT_ERR_USAGE naming the loop for a parallel loop that
 * is collapsed, a grid or merged with its tail; CT_ERR_LIMIT past AFFINE_SIM_MAX accesses. */
ct_status threads_affine(ct_looptree *t, const sim_spec *spec, int nt, ct_thread_result *r);

/* warp_count for one thread's share (s, NULL: the whole run): the levels' misses of the
 * accesses that thread makes, in its order. */
ct_status warp_count_share(ct_looptree *t, const sim_spec *spec, const bool *want, int64_t budget,
                           mshare *s, warp_result *r);

#endif
