/* model.h: the analytical stack-distance cache model (reuse partitions of a loop tree). */
#ifndef CT_MODEL_MODEL_H
#define CT_MODEL_MODEL_H

#include "ir/looptree.h"
#include "model/sim.h"

/* Where a partition's accesses find their line again (docs/MODEL.md). */
typedef enum model_reuse {
	MR_COLD,      /* first touch of the line in the whole run */
	MR_STMT,      /* earlier in the same statement instance */
	MR_CARRIED,   /* an earlier iteration (delta back) of the same loop instance */
	MR_FAR,       /* an earlier iteration of the same loop instance, a range of iterations back */
	MR_SIBLING    /* an earlier child of the same iteration of the parent (or of the run) */
} model_reuse;

/* Carried reuse from up to this many iterations back is split one distance at a time; farther
 * sources by ranges of iterations back, halved only while a range straddles a capacity. */
#define MODEL_MAX_DELTA 1

/* One reuse partition: `count` accesses to storage `array` that all have (about) stack
 * distance `distance` lines; distance_lo .. distance_hi bound it over the partition. An
 * access misses a fully associative level of C lines when its distance is >= C. */
typedef struct model_part {
	int array;              /* storage of the tree */
	model_reuse kind;
	int delta;              /* MR_CARRIED: iterations back */
	const lt_node *node;    /* the loop (MR_CARRIED, MR_FAR), the parent (MR_SIBLING: NULL = the run), the statement (MR_STMT) */
	int64_t count;
	int64_t distance, distance_lo, distance_hi; /* -1 for MR_COLD (infinite) */
	bool exact;             /* count and distance exactly known */
} model_part;

/* The partitions of one line size. */
typedef struct model_lines {
	int64_t line;
	int nparts;
	model_part *parts;      /* malloc'd */
} model_lines;

/* One statement or let of the tree: its executions and the storage of each of its accesses (the
 * reads in textual order, then for op= the left-hand side read, then the write; a plan's cache
 * buffer where the plan made the statement read one). */
typedef struct model_exec {
	int stmt_id;                       /* 1..; 0 for a let */
	const ir_node *node;               /* the IR node of the first copy met */
	int64_t count;                     /* executions, all copies together */
	int nacc;
	int acc_array[16];                 /* the storage of the first 16 accesses (-1 unknown) */
} model_exec;

typedef struct model_result {
	int64_t accesses;
	int nlines;
	model_lines lines[SIM_MAX_LEVELS]; /* one per distinct line size of the spec */
	int narrays;
	int64_t *array_accesses;           /* [t->narrays], malloc'd */
	bool *array_exact;                 /* [t->narrays]: false if some partition of it is inexact */
	/* The statements and lets of the tree, one entry per statement number (a let: per IR node)
	 * and storages accessed: the copies a tail makes of a statement are one entry, unless a
	 * plan gave them other buffers. */
	int nexec;
	model_exec *exec;                  /* [nexec], malloc'd */
	int64_t work;                      /* the analysis's work (rows of boxes walked, lookups) */
	bool over_budget;                  /* model_analyse_budget stopped: no partitions */
	int64_t enumerated;                /* accesses whose reuse was counted by partial
	                                    * enumeration (model_enum.c), all line sizes */
} model_result;

/* Analyse tree t (params as lt_param_values gives them; runtime params must have values) for
 * every line size of spec. On error: a status with the message on t's ctx, *r empty. */
ct_status model_analyse(ct_looptree *t, const sim_spec *spec, model_result *r);
void model_result_free(model_result *r);

/* How deep model_analyse splits a reuse whose distance range straddles a capacity (each split
 * halves the positions of source or target). model_analyse_depth with a small depth is
 * cheaper and less exact: the tile search screens candidates with it. */
#define MODEL_REFINE_FULL 200
ct_status model_analyse_depth(ct_looptree *t, const sim_spec *spec, int refine, model_result *r);

/* model_analyse_depth that stops once its work (model_result.work, about 10 ns a unit) passes
 * budget (0: no limit): then it returns CT_OK with r->over_budget set, the accesses and
 * executions filled and no partitions (ct_kernel_predict simulates such kernels instead). */
ct_status model_analyse_budget(ct_looptree *t, const sim_spec *spec, int refine, int64_t budget,
                               model_result *r);

/* Partial enumeration (model_enum.c): a node whose analysis passes its share of work has its
 * reuse counted from its accesses instead (AUTO, with full refinement), never (the analysis
 * alone: the bench's --no-enumerate, the tests), or every node that can be at enum_depth or
 * deeper loops, the nodes above analysed (the tests compare the two). */
typedef enum model_enum_mode { MODEL_ENUM_AUTO, MODEL_ENUM_NEVER, MODEL_ENUM_ALWAYS } model_enum_mode;

typedef struct model_options {
	int refine;                /* MODEL_REFINE_FULL, or less (model_analyse_depth) */
	int64_t budget;            /* as model_analyse_budget (0: no limit) */
	model_enum_mode enumerate;
	int enum_depth;            /* ALWAYS: nodes inside at least this many loops (0: the run's
	                            * children) */
} model_options;

/* model_analyse with options o (model_analyse_budget is o = {refine, budget, AUTO}). */
ct_status model_analyse_opts(ct_looptree *t, const sim_spec *spec, const model_options *o, model_result *r);

/* The partitions of line size `line` in r (NULL if r has none). */
const model_lines *model_for_line(const model_result *r, int64_t line);

/* Misses of a fully associative LRU of `lines` lines from the partitions of one line size
 * (per storage when array >= 0, all of them when array < 0); *exact (may be NULL) is set false
 * when an inexact partition's distance range straddles the capacity. */
int64_t model_misses(const model_lines *ml, int64_t lines, int array, bool *exact);

/* warp.c: exact misses of set-associative LRU levels without the interpreter's trace: the model
 * tree's own affine accesses simulated per set, with warping (docs/MODEL.md, "Set-associative
 * levels"): where the cache state at an iteration of a loop is a translation of its state some
 * iterations earlier, the iterations in between repeat, translated, until the loop ends, and
 * are skipped. */
typedef struct warp_result {
	bool done[SIM_MAX_LEVELS];       /* the level was counted (exactly) */
	int64_t misses[SIM_MAX_LEVELS];
	int narrays;
	int64_t *array_misses;           /* [level * narrays + array], malloc'd */
	int64_t simulated;               /* accesses simulated, all levels */
	int64_t skipped;                 /* loop iterations skipped by warping, all levels */
	int64_t warps;                   /* warps taken, all levels */
	int64_t accesses;                /* accesses counted (of one thread's share, with one) */
	const char *why;                 /* a level not done: why (static text) */
} warp_result;

/* Count the levels l of spec with want[l] (set-associative or not; a fully associative level is
 * one set) on tree t (params as lt_param_values gives them). A level is left undone, with
 * r->why, when the tree is not exactly affine (inexact subscripts, undecided conditions), an
 * access lies outside its storage, or its work (accesses simulated plus state compared, about
 * 5 ns a unit) would pass budget (0: no limit). CT_OK then too; an error status only when out
 * of memory or the tree cannot be built (message on t's ctx). Free r with warp_result_free. */
ct_status warp_count(ct_looptree *t, const sim_spec *spec, const bool *want, int64_t budget,
                     warp_result *r);
void warp_result_free(warp_result *r);

/* coldcert.c: ok[l] (l with want[l], LRU levels with ways) when level l of spec provably
 * misses only the first touch of each line on tree t: every reuse window (docs/MODEL.md,
 * "Levels that only miss first touches") holds at most `ways` lines of any one set. Its count
 * is then the fully associative model's cold misses. ok[l] false where the proof does not go
 * through (inexact or out-of-range accesses, windows too wide). An error status only when out
 * of memory or the tree cannot be built. */
ct_status cold_certify(ct_looptree *t, const sim_spec *spec, const bool *want, bool *ok);

/* The references per storage (a read and the write of one `op=` element count once) and each
 * storage's first statement (1-based; 0 when none), as predict's table gives them. */
ct_status predict_ref_counts(ct_looptree *t, int *nrefs, int *first);

/* The longest trace predict, the tile search (per tiling), the tuner (per point) and --per-ref
 * simulate for a kernel with affine loop bounds: about 1.5 s at 20 ns an access (the examples'
 * 256-sized triangular kernels, 34M accesses, take 0.7 s); longer is CT_ERR_LIMIT. */
#define AFFINE_SIM_MAX CT_PREDICT_AFFINE_SIM_MAX

/* The accesses of tree t as the model's tree counts them (a loop with affine bounds at its mean
 * trip counts: model_tree.c, "affine loops"), or -1 when the model cannot build the tree (its
 * message cleared from the context). */
int64_t model_tree_accesses(ct_looptree *t);

/* What one exact simulation of a tree with affine loop bounds counted. */
typedef struct affine_sim {
	sim *s;                   /* the simulator, for per-buffer or per-reference counts */
	int64_t *buffer_accesses; /* [t->narrays] accesses per storage */
	int64_t accesses;
	int64_t misses[SIM_MAX_LEVELS];
	double seconds;
} affine_sim;

/* Simulate tree t (a kernel with affine loop bounds, which the model does not analyse) on the
 * levels of spec, filling *out (free with affine_sim_free; empty on error). With nrefs > 0 the
 * simulator counts per reference too (interp_refs' ids, nrefs of them). More than cap accesses
 * (<= 0: AFFINE_SIM_MAX) is CT_ERR_LIMIT, with a message naming `what` (the stage). */
ct_status affine_simulate(ct_looptree *t, const sim_spec *spec, int64_t cap, const char *what, int nrefs,
                          affine_sim *out);
void affine_sim_free(affine_sim *a);

/* predict for a tree with affine loop bounds (the analysis does not take them yet): every
 * level of spec from the exact simulator (source simulator, fallback CT_FALLBACK_AFFINE),
 * CT_ERR_LIMIT with a message when the trace passes AFFINE_SIM_MAX accesses. */
ct_status predict_affine(ct_looptree *t, const sim_spec *spec, ct_predict_result *r);

/* The simulator's buffers of tree t (every storage: the kernel's arrays, then cache buffers),
 * with their element sizes and counts at the tree's param values, in *out (malloc'd; the
 * caller frees it). */
ct_status sim_tree_buffers(ct_looptree *t, sim_buffer **out);

/* ct_kernel_predict's work, keeping what the per-reference table needs: the spec, the lowered
 * tree *tp (ct_looptree_free) and the model's partitions m (model_result_free), as well as r.
 * On error everything is freed and empty. */
ct_status predict_run(ct_kernel *k, const char *spec_text, sim_spec *spec, ct_looptree **tp,
                      model_result *m, ct_predict_result *r);

/* ct_kernel_predict for callers that predict many candidates in bounded time: warping a
 * set-associative level stops early (about 1 ms), and such a level then has the fully
 * associative estimate (or the simulator's count for a short trace), marked as such in r; a
 * kernel whose analysis goes over the model's work budget and whose trace is too long to
 * simulate is CT_ERR_LIMIT (ct_kernel_predict would analyse it whole, for minutes). */
ct_status predict_quick(ct_kernel *k, const char *spec_text, ct_predict_result *r);

#endif
