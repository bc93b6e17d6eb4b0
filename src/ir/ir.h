/* ir.h: the kernel IR (checked AST) that the front end produces and every later stage reads. */
#ifndef CT_IR_H
#define CT_IR_H

#include "core/core.h"

/* Limits that keep absurd inputs from exhausting memory or the stack. */
#define IR_MAX_RANK 8          /* array dimensions */
#define IR_MAX_DEPTH 64        /* nesting of for/if blocks, and of expressions: 256 */
#define IR_MAX_EXPR_DEPTH 256
#define IR_MAX_NAMES 4096      /* params, arrays, indices, lets each */

typedef struct ir_pos {
	int line, col;         /* 1-based; 0 = unknown */
} ir_pos;

/* ------------------------------------------------------------ affine expressions */

/* A symbol of an affine expression. */
typedef enum aff_sym {
	AFF_PARAM = 0,         /* id = param number */
	AFF_INDEX = 1          /* id = index number (ir_index; original or split) */
} aff_sym;

typedef struct aff_term {
	int kind;              /* aff_sym */
	int id;
	int64_t coef;          /* never 0 */
} aff_term;

/* c + sum(t[i].coef * sym(t[i])), terms sorted by (kind, id), no duplicates.
 * Stored by value; the term array lives in an arena (or is NULL if n == 0). */
typedef struct aff {
	int64_t c;
	int n;
	aff_term *t;
} aff;

/* Constructors allocate term arrays from arena a; on overflow or allocation
 * failure they set *ok = false (and leave a usable, possibly wrong, value). */
aff aff_const(int64_t c);
aff aff_sym1(ct_arena *a, int kind, int id, int64_t coef, bool *ok);
aff aff_add(ct_arena *a, aff x, aff y, bool *ok);
aff aff_sub(ct_arena *a, aff x, aff y, bool *ok);
aff aff_scale(ct_arena *a, aff x, int64_t k, bool *ok);
/* Replace each AFF_INDEX term by subst[id] (when subst[id] is non-NULL). */
aff aff_subst_index(ct_arena *a, aff x, const aff *const *subst, bool *ok);
/* Value with params[id] and idx[id]; *ok = false on overflow. */
int64_t aff_eval(aff x, const int64_t *params, const int64_t *idx, bool *ok);
bool aff_is_const(aff x);
bool aff_equal(aff x, aff y);
/* Coefficient of a symbol (0 when absent). */
int64_t aff_coef(aff x, int kind, int id);
bool aff_uses_kind(aff x, int kind);

/* ------------------------------------------------------------ names */

typedef struct ir_param {
	const char *name;
	ir_pos pos;
	bool runtime;          /* `NAME : runtime` */
	bool has_value;        /* compile-time, or a runtime param given a value (-D) */
	int64_t value;
	bool overridden;       /* set by -D / ct_kernel_set_param */
	/* `param N2 = 2*N`: the value as written when it names other params
	 * (compile-time ones only); NULL for a plain integer. Re-evaluated by
	 * lang_recheck unless N2 itself is overridden. */
	struct ir_expr *def;
	/* `param T = 64 tune {16, 32, 64}` / `tune 16..256 step 16`: the values the
	 * tuner may give it (ntune of them, increasing, the default among them);
	 * 0 / NULL for a param that is not tunable. Arena memory of the kernel. */
	int ntune;
	int64_t *tune;
	ir_pos tune_pos;       /* the `tune` word */
} ir_param;

/* Roles match ct_role of cachet.h. */
typedef struct ir_array {
	const char *name;
	ir_pos pos;
	ct_dtype type;
	ct_role role;
	int rank;              /* 1..IR_MAX_RANK */
	aff ext[IR_MAX_RANK];  /* extents: affine in params */
	ir_pos ext_pos[IR_MAX_RANK];
	/* layout as a dimension order, most major first: row_major = 0,1,..;
	 * col_major = ..,1,0; layout=(1,0) as written */
	int order[IR_MAX_RANK];
	bool strided;          /* declared `strided` (views issue); parsed now */
	/* strided with its contiguous dimension (order[rank-1]) at stride 1, only its other
	 * strides and the base coming with the call: the per-rank kernel of distribute()
	 * (src/plan/dist.c), whose boxes are dense in the declared layout; vectorizable */
	bool unit_minor;
} ir_array;

/* The kernel only reads a (input or const): a `const` pointer in generated
 * code, a read-only device buffer, and the checker refuses writes to it. */
static inline bool ir_array_readonly(const ir_array *a)
{
	return a->role == CT_INPUT || a->role == CT_CONST;
}

typedef enum ir_index_kind {
	IX_LOOP = 0,           /* declared by a `for` */
	IX_SPLIT = 1           /* created by split/tile in the schedule */
} ir_index_kind;

typedef struct ir_index {
	const char *name;
	ir_pos pos;
	ir_index_kind kind;
	/* IX_LOOP: iterates lo .. hi-1 (affine in params); for `for (x: E)` lo = 0. */
	aff lo, hi;
	struct ir_node *loop;  /* the FOR node that declares it (IX_LOOP) */
	/* Split chains: splitting x by s makes x step by s (x->step = s) and
	 * creates y (kind IX_SPLIT, parent = x, window = s, step 1). x->child = y.
	 * An index may be split at most once (split its inner index instead);
	 * root = the IX_LOOP index at the head of the chain. The value of the
	 * original (root) index is the sum of the values of every index of its
	 * chain. */
	int64_t step;          /* 1 unless split */
	int64_t window;        /* IX_SPLIT: extent of the split parent's step window */
	int parent;            /* IX_SPLIT: the index that was split; -1 otherwise */
	int child;             /* index created by splitting this one; -1 if none */
	int root;              /* IX_LOOP: itself */
	/* split with balanced=true: besides blocks of step, blocks of step - 1
	 * instead of a short tail where that covers the range (docs/LANGUAGE.md) */
	bool balanced;
	/* IX_LOOP with affine bounds (issue #31): the loop runs from
	 * max(los[0..nlo-1]) to min(his[0..nhi-1]) - 1, each term affine in
	 * params and enclosing indices (AFF_INDEX), and lo/hi are los[0]/his[0].
	 * nlo = nhi = 0 (los, his NULL) for a rectangular loop, whose bounds are
	 * the single terms lo and hi over params; see ir_index_affine. */
	int nlo, nhi;
	aff *los, *his;
	/* IX_LOOP written `for (x: lo .. hi step S)`: S as written (an integer
	 * expression of compile-time params, re-evaluated into step by
	 * lang_recheck); NULL for a unit step and for split-off indices. The loop
	 * runs lo, lo+S, ... below hi; such a loop is not split (check). */
	struct ir_expr *step_expr;
} ir_index;

/* Whether index x has bounds that use enclosing indices or min/max: a loop
 * of a non-rectangular (triangular, banded...) iteration space. */
static inline bool ir_index_affine(const ir_index *x)
{
	return x->nlo > 0;
}

/* The step of loop x as the source writes it: S for `for (x: lo .. hi step S)`, 1 otherwise
 * (a split makes x->step its size but leaves the values of the source loop alone). */
static inline int64_t ir_index_src_step(const ir_index *x)
{
	return x->step_expr ? x->step : 1;
}

/* A scalar `let`. Its type is the type of its expression. */
typedef struct ir_let {
	const char *name;
	ir_pos pos;
	ct_dtype type;
} ir_let;

/* ------------------------------------------------------------ expressions */

typedef enum ir_expr_kind {
	EX_NUM,        /* literal: num (as written: inum if !is_float) */
	EX_INDEX,      /* index variable: id (original IX_LOOP index) */
	EX_PARAM,      /* param: id */
	EX_LET,        /* let scalar: id */
	EX_ACCESS,     /* array element: id = array, sub[rank] */
	EX_NEG, EX_ADD, EX_SUB, EX_MUL, EX_DIV,
	EX_CALL,       /* fn, args[nargs] */
	EX_CMP,        /* cmp, args[0] op args[1] */
	EX_AND, EX_OR, EX_NOT
} ir_expr_kind;

typedef enum ir_fn {
	FN_MIN, FN_MAX, FN_ABS, FN_SQRT, FN_EXP, FN_FMA, FN_SELECT
} ir_fn;

typedef enum ir_cmp {
	CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE
} ir_cmp;

/* Value types: every expression has a type after checking. Index variables
 * and params are integers that take the type of their context; literals are
 * "untyped" and take the type of their context too (untyped = true). The
 * type of a binary operation is the wider of its operands by the order
 * i32 < i64 < f32 < f64; the right-hand side of a statement is converted to
 * the type of its left-hand side array. Conditions (CMP/AND/OR/NOT) have
 * type i32 (0 or 1). Integer division truncates toward zero and x/0 is 0. */
typedef struct ir_expr {
	ir_expr_kind kind;
	ir_pos pos;
	ct_dtype type;
	bool untyped;          /* a literal or an index/param-only expression */
	/* EX_NUM */
	double num;
	int64_t inum;
	bool is_float;         /* literal written with '.' or exponent */
	/* EX_INDEX, EX_PARAM, EX_LET, EX_ACCESS */
	int id;
	/* EX_ACCESS: subscripts as affine expressions over params and original
	 * indices (sub[d]) and as written (sub_expr[d], for positions) */
	aff *sub;
	struct ir_expr **sub_expr;
	/* EX_CALL */
	ir_fn fn;
	/* EX_CMP */
	ir_cmp cmp;
	/* EX_CMP in an `if` condition: args[0] - args[1] as an affine
	 * expression (an `if` only compares affine index expressions) */
	aff diff;
	bool has_diff;
	/* operands */
	int nargs;
	struct ir_expr **args;
	/* height of the tree below (1 for a leaf); at most IR_MAX_EXPR_DEPTH,
	 * so recursive walkers stay within a bounded stack */
	int height;
} ir_expr;

/* ------------------------------------------------------------ statements */

typedef enum ir_node_kind {
	ND_FOR,        /* idx[nidx], body */
	ND_STMT,       /* array[sub] op= rhs */
	ND_LET,        /* let id = rhs */
	ND_IF          /* if (cond) body else els */
} ir_node_kind;

typedef enum ir_assign {
	AS_SET, AS_ADD, AS_SUB, AS_MUL
} ir_assign;

typedef struct ir_node {
	ir_node_kind kind;
	ir_pos pos;
	/* ND_FOR: the indices it declares, outermost first */
	int nidx;
	int *idx;
	/* ND_STMT: the left-hand side is lhs (an EX_ACCESS); stmt_id numbers
	 * statements 1.. in textual order (JSON "stmt" field) */
	ir_expr *lhs;
	ir_assign op;
	int stmt_id;
	/* ND_LET */
	int let_id;
	/* ND_STMT and ND_LET */
	ir_expr *rhs;
	/* ND_IF */
	ir_expr *cond;
	/* children: ND_FOR and ND_IF (then-branch) use body, ND_IF else uses els */
	int nbody;
	struct ir_node **body;
	int nels;
	struct ir_node **els;
	struct ir_node *parent;  /* enclosing FOR/IF; NULL at top level */
} ir_node;

/* ------------------------------------------------------------ schedule */

typedef enum ir_sched_kind {
	SC_SPLIT,      /* split one index: idx[0] by size[0] -> out[0] */
	SC_TILE,       /* split n indices: idx[i] by size[i] -> out[i] */
	SC_REORDER     /* new order of one band: idx[0..n-1] */
} ir_sched_kind;

typedef struct ir_sched {
	ir_sched_kind kind;
	ir_pos pos;
	int n;
	int *idx;
	int64_t *size;
	int *out;
	ir_pos *arg_pos;       /* position of each argument */
	/* SC_SPLIT/SC_TILE: each size as written (an integer expression of
	 * compile-time params); lang_recheck re-evaluates it into size[] and
	 * into the step/window fields of the indices after param overrides */
	struct ir_expr **size_expr;
	/* SC_SPLIT/SC_TILE: balanced=true (every index split by this item) */
	bool balanced;
	ir_pos balanced_pos;
} ir_sched;

/* ------------------------------------------------------------ plan */

typedef enum ir_target {
	TARGET_HOST = 0,
	TARGET_OPENCL = 1,
	TARGET_CUDA = 2 /* NVIDIA GPUs: CUDA C (docs/CUDA.md) */
} ir_target;

typedef enum ir_plan_kind {
	PL_CACHE,
	PL_VECTORIZE,  /* idx[0] */
	PL_UNROLL,     /* idx[0] */
	PL_PARALLELIZE,/* idx[0..n-1], policy, max_threads, spmd */
	PL_DISTRIBUTE  /* idx[0..n-1] over a grid of MPI ranks, grid[] (docs/DISTRIBUTED.md);
	                  the loop passes skip it: one process runs the whole kernel */
} ir_plan_kind;

/* Most dimensions of distribute()'s grid of ranks. */
#define IR_MAX_GRID 3

typedef enum ir_cache_pos {
	CP_LEVEL,      /* level = value */
	CP_INDEX,      /* index = index_id */
	CP_BUDGET      /* max_elements = value */
} ir_cache_pos;

typedef enum ir_location { LOC_DEFAULT, LOC_GLOBAL, LOC_LOCAL, LOC_PRIVATE } ir_location;
typedef enum ir_strategy { STRAT_DEFAULT, STRAT_BLOCKED, STRAT_STRIPED } ir_strategy;
typedef enum ir_policy { POLICY_STATIC, POLICY_DYNAMIC } ir_policy;
/* cache(..., packed=lower|upper): the buffer holds only a triangle of the block (rows r, columns c
 * relative to the block: lower c <= r at r*(r+1)/2 + c, upper r <= c at c*(c+1)/2 + r) */
typedef enum ir_packed { PACK_NONE, PACK_LOWER, PACK_UPPER } ir_packed;

/* An option as written, for diagnostics: present or not, and where. */
typedef struct ir_opt_pos {
	bool given;
	ir_pos pos;
} ir_opt_pos;

typedef struct ir_plan_item {
	ir_plan_kind kind;
	ir_pos pos;
	/* PL_CACHE: NAME = cache(SOURCE, ...) */
	const char *name;
	ir_pos name_pos;
	int src_array;         /* array id, or -1 when the source is a cache */
	int src_cache;         /* index of the source PL_CACHE item in plan, or -1 */
	int root_array;        /* the array at the bottom of a chain of caches */
	ir_pos src_pos;
	ir_cache_pos where;
	int64_t value;         /* level or max_elements */
	int index_id;          /* CP_INDEX */
	ir_opt_pos where_opt;
	bool has_layout;
	int order[IR_MAX_RANK];/* buffer layout, most major first */
	ir_opt_pos layout_opt;
	bool thrifty;          /* default true */
	ir_opt_pos thrifty_opt;
	bool strict;           /* strict=true: updates keep their order (copy_in / copy_out, never
	                          zero_fill / reduce); default false */
	ir_opt_pos strict_opt;
	bool has_trigger;
	bool trigger_is_index; /* trigger_index=x (extension) vs trigger_level=t */
	int64_t trigger_level;
	int trigger_index;
	ir_opt_pos trigger_opt;
	bool double_buffer;
	ir_opt_pos double_buffer_opt;
	ir_location location;
	ir_opt_pos location_opt;
	ir_strategy strategy;
	ir_opt_pos strategy_opt;
	ir_packed packed;      /* packed=lower|upper (src/plan/plan_pack.c); PACK_NONE by default */
	ir_opt_pos packed_opt;
	/* PL_VECTORIZE, PL_UNROLL, PL_PARALLELIZE */
	int n;
	int *idx;
	ir_pos *idx_pos;
	ir_policy policy;
	int64_t max_threads;   /* 0 = no limit */
	bool spmd;
	bool nontemporal;      /* PL_VECTORIZE: nontemporal=true (streaming stores) */
	/* PL_DISTRIBUTE: grid=PxQ (grid[d] ranks along index idx[d]); all 0 for grid=auto (MPI_Dims_create) */
	int64_t grid[IR_MAX_GRID];
	/* PL_DISTRIBUTE: replicate=A or replicate=(A, B): arrays every rank holds whole (nrepl ids) */
	int nrepl;
	int *repl;
	int64_t unroll_by;     /* PL_UNROLL: by=n (2 .. IR_MAX_UNROLL_BY; an unroll hint to the C
	                          compiler, the loop kept), 0 = unrolled fully */
} ir_plan_item;

/* Largest n of `unroll(x, by=n)` (as PLAN_MAX_UNROLL for full unrolls). */
#define IR_MAX_UNROLL_BY 64

/* ------------------------------------------------------------ kernel */

/* The first read of an output or temp array that no textually earlier
 * statement writes (check_structure); check_sizes accepts it only when the
 * dependence analysis proves a write of every element read runs before the
 * read (docs/LANGUAGE.md, "Output rule"). */
typedef struct ir_early_read {
	bool any;
	ir_assign op;          /* AS_SET: an expression's read; else the `op=` whose old value is read */
	ir_pos pos;
} ir_early_read;

struct ct_kernel {
	ct_ctx *ctx;
	ct_arena arena;        /* owns everything below */
	const char *name;
	ir_pos name_pos;
	const char *file;
	int nparams;
	ir_param *params;
	int narrays;
	ir_array *arrays;
	int nindices;          /* original (IX_LOOP) indices first, then split ones */
	ir_index *indices;
	int nlets;
	ir_let *lets;
	int nstmts;
	int nbody;             /* top-level nodes */
	ir_node **body;
	int nsched;
	ir_sched *sched;
	bool has_plan;
	ir_target target;
	/* plan(strict=true): no re-association of floating-point reductions:
	 * every cache keeps the order of updates (as cache strict=true) and a
	 * reorder keeps the order of each float `+=` (docs/LANGUAGE.md, section
	 * 7, "Legality") */
	bool strict;
	ir_pos strict_pos;
	ir_pos plan_pos;
	int nplan;
	ir_plan_item *plan;
	/* set by the front end: text of the file for re-checks */
	const char *text;
	size_t text_len;
	/* a compile-time param changed since the last successful check (or that
	 * check failed): the sizes and split steps may not match the values, so
	 * nothing may lower, emit or run the kernel until a recheck succeeds */
	bool stale;
	/* some loop has affine bounds (ir_index_affine): the model's analysis hands such a kernel
	 * to the exact simulator (src/model/predict_affine.c) */
	bool affine_bounds;
	/* the per-rank kernel of distribute() (dist_localize, src/plan/dist.c): its loops run over
	 * a sub-range of the whole kernel's tiles, so a loop verb's independence, proven when the
	 * whole kernel was checked, holds for it too, though its bounds are runtime params now */
	bool dist_rank;
	/* per array (narrays entries; NULL before the check): see ir_early_read */
	ir_early_read *early_reads;
	/* the params' values (nparams, a value of INT64_MIN for a param without one) at the last
	 * check that proved every early read, or NULL: a recheck at the same values (a tile
	 * search's, auto's) does not ask isl again */
	int64_t *early_proved;
};

/* CT_OK, or CT_ERR_USAGE with a message naming k when its params changed
 * since the last successful check (every entry point that lowers, emits,
 * runs or models k calls it first). */
ct_status ir_kernel_ready(const ct_kernel *k);

/* Record why ct_kernel_array_elements(k, i) is negative (a runtime param
 * without a value, an extent below 1, an overflow) and return its status. */
ct_status ir_array_size_error(const ct_kernel *k, int i);
/* A box around the values of a loop index: every value lies in [lo, hi) when known. */
typedef struct ir_box {
	int64_t lo, hi;
	bool known;
} ir_box;

/* b[nindices]: a box around each loop index's values, by interval arithmetic over the params'
 * values and the boxes of the indices its bounds use (declared before it): the largest of
 * the lower terms' least values, the smallest of the upper terms' greatest. Unknown (a param
 * without a value, an unknown index) where not known. Returns -1, or the first index whose
 * bound terms overflow 64 bits over those boxes. */
int ir_index_boxes(const ct_kernel *k, ir_box *b);
/* The greatest trip span (hi - lo, before any step) of IX_LOOP index x where the params have
 * the values pv[nparams]: hi - lo for a rectangular loop; for an affine one the least, over
 * pairs of an upper and a lower term, of the greatest difference of the two over the boxes of
 * the loops declared before it (as ir_index_boxes makes them), so a GPU grid sized by it
 * covers every range x takes (docs/OPENCL.md, section 1). 0 where that is negative or a loop
 * its bounds use never runs. false on overflow, out of memory or a term it cannot bound. */
bool ir_index_span(const ct_kernel *k, const int64_t *pv, int x, int64_t *span);
/* Trip count of IX_LOOP index id with every loop declared before it at the middle of its
 * range: a rectangular loop's trip count; an affine loop's mean trip count where its bounds
 * depend linearly on the enclosing indices (no min/max in play). 0 when empty, -1 when out of
 * memory or on overflow. */
int64_t ir_index_mid_trip(const ct_kernel *k, const int64_t *params, int id);
/* Value of each param (runtime params without a value are 0): params[nparams]. */
void ir_param_values(const ct_kernel *k, int64_t *params);
/* True when every runtime param has a value. */
bool ir_params_complete(const ct_kernel *k);
/* Whether expression e (NULL: no) reads storage a (an access of it anywhere in e). */
bool ir_expr_reads(const ir_expr *e, int a);
/* CT_OK when every runtime param has a value, else CT_ERR_USAGE with the one
 * message every entry point gives: "runtime param 'N' needs a value (-D N=VALUE)". */
ct_status ir_params_need_values(const ct_kernel *k);
/* Name helpers for printers. */
const char *ir_dtype_c(ct_dtype t);   /* "float", "double", "int32_t", "int64_t" */

#endif
