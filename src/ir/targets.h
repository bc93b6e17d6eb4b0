/* targets.h: the facts of each plan target (host C, OpenCL, CUDA): one row per target, read by every layer. */
#ifndef CT_IR_TARGETS_H
#define CT_IR_TARGETS_H

#include "ir/ir.h"

/* How parallelize(...) is carried out on a target. */
typedef enum ir_par_kind {
	IR_PAR_OPENMP, /* the plan's loop-verb pass marks OpenMP worksharing loops (plan_verbs) */
	IR_PAR_GRID    /* the GPU generator maps the indices to the grid of work-groups / blocks */
} ir_par_kind;

/* One `location=` word a target accepts and the memory it names there. */
typedef struct ir_space {
	const char *word;      /* as written: "local", "shared" */
	ir_location loc;       /* what the planner and the generators see */
	const char *qualifier; /* how the target's source spells it ("__local", "__shared__"; "" none) */
} ir_space;

/* A word a target refuses on purpose, with the hint its message gives. */
typedef struct ir_space_hint {
	const char *word;
	const char *hint;
} ir_space_hint;

/* The facts of one target. The functions that check, emit, run and
 * package its kernels are rows of the same order in the layers that own
 * them: gen_target_emitter (src/gen/targets.c) and eng_target_row
 * (src/engine/targets.c); docs/ARCHITECTURE.md, "Targets". */
typedef struct ir_target_info {
	ir_target id;
	const char *name;  /* as written in plan(target=NAME), --target NAME, lower --json's "target" */
	const char *title; /* in messages: "host C", "OpenCL", "CUDA" */
	bool gpu;          /* runs on a GPU; location= and strategy= apply */
	ir_par_kind parallel;
	int grid_dims;           /* IR_PAR_GRID: most indices parallelize may map; 0 none */
	const char *grid_unit;   /* IR_PAR_GRID: what one grid dimension counts ("work-group") */
	const ir_space *spaces;  /* the location= words it accepts (none on the host) */
	int nspaces;
	const ir_space_hint *refused; /* location= words refused with a hint */
	int nrefused;
	const char *barrier;     /* how its source spells a block-wide barrier ("" none) */
	bool checked;            /* --checked (bounds-tested code) covers it */
	bool native_entry;       /* its kernels run as a host C entry: ct_kernel_compile, views, the selector's pieces */
	const char *source_ext;  /* the source file `cachet build` writes: "c", "cl", "cu" */
} ir_target_info;

/* The number of targets; rows 0 .. ir_target_count() - 1 (row i has id i). */
int ir_target_count(void);
/* Row i, or NULL when i is out of range. */
const ir_target_info *ir_target_at(int i);
/* The row of target t (the host's for an unknown value, which a parsed
 * kernel never holds). */
const ir_target_info *ir_target_row(ir_target t);
/* The row named name ("host", "opencl", "cuda"), or NULL. */
const ir_target_info *ir_target_find(const char *name);
/* The row k runs on: its plan's target, the host's without a plan. */
const ir_target_info *ir_kernel_target(const ct_kernel *k);
/* The space of row r that location= word names, or NULL. */
const ir_space *ir_target_space(const ir_target_info *r, const char *word);
/* The word row r writes for location loc ("local" on OpenCL, "shared" on
 * CUDA), or NULL when r has no such space: for messages. */
const char *ir_target_space_word(const ir_target_info *r, ir_location loc);
/* The hint for a location= word row r refuses on purpose, or NULL. */
const char *ir_target_space_hint(const ir_target_info *r, const char *word);
/* "host, opencl or cuda" into buf (cap bytes): the names of the rows
 * (gpu_only: of the GPU rows only), each between pre and post
 * ("plan(target=" and ")"), joined with ", " and a last " or ". Returns buf. */
char *ir_target_list(char *buf, size_t cap, const char *pre, const char *post, bool gpu_only);

#endif
