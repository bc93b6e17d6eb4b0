/* interp_internal.h: the interpreter's program (register bytecode, compiled nodes) and its compiler's
 * state, shared by interp_expr.c, interp_tree.c (compiling) and interp.c (running); private to interp/. */
#ifndef CT_INTERP_INTERNAL_H
#define CT_INTERP_INTERNAL_H

#include "interp/interp.h"

#include <limits.h>
#include <stdint.h>

typedef union ip_val {
	int64_t i;
	float f;
	double d;
} ip_val;

/* Value representations: i32 and i64 both compute in int64. */
enum { R_I = 0, R_F = 1, R_D = 2 };

/* Typed arithmetic, one op per representation: AR(rep, A_x). */
enum {
	A_ADD,
	A_SUB,
	A_MUL,
	A_DIV,
	A_NEG,
	A_MIN,
	A_MAX,
	A_ABS,
	A_SQRT,
	A_EXP,
	A_FMA,
	A_SEL,
	A_LT,
	A_LE,
	A_GT,
	A_GE,
	A_EQ,
	A_NE,
	A_NZ,
	A_N
};

enum {
	OP_END,
	OP_LD,               /* + dtype: dst <- array a at off[b] + disp */
	OP_ST = OP_LD + 4,   /* + 4 * dtype + assign: array a at off[b] + disp (op)= r[c] */
	OP_IX = OP_ST + 16,  /* + rep: dst <- off[a] + disp */
	OP_ACMP = OP_IX + 3, /* + ir_cmp: dst <- (off[a] + disp) cmp 0 */
	OP_MOV = OP_ACMP + 6,
	OP_I2F,
	OP_I2D,
	OP_F2D,
	OP_D2F,
	OP_F2I,
	OP_D2I,
	OP_AND,
	OP_OR,
	OP_NOT,     /* on int truth values */
	OP_MAC_F32, /* array a at off[b]+disp += r[c] * r[dst], f32: matmul's statement */
	OP_MAC_F64,
	OP_AR
};
#define AR(rep, a) (OP_AR + (rep)*A_N + (a))

typedef struct ip_insn {
	int32_t op, dst, a, b, c;
	int64_t disp;
} ip_insn;

typedef struct ip_upd {
	int32_t dst, src;
	int64_t coef;
} ip_upd;

typedef struct ip_tr {
	int64_t disp;
	int32_t reg, buffer, ref, is_write;
} ip_tr;

typedef struct ip_chk {
	int64_t disp;
	int32_t reg, array;
} ip_chk;

/* One comparison (off[reg] + disp) cmp 0 of an `if` that is a conjunction
 * of affine comparisons (the boundary tests of stencils). */
typedef struct ip_conj {
	int64_t disp;
	int32_t reg, cmp;
} ip_conj;

typedef struct ip_node {
	lt_kind kind;
	bool fast;       /* LT_LOOP without trip counters whose body is one unchecked LT_STMT */
	bool cond_reads; /* LT_IF whose condition reads arrays */
	bool is_conj;    /* LT_IF: the condition is conj[0] && ... (true when nconj = 0) */
	int64_t lo, hi, step;
	bool parallel;   /* LT_LOOP: parallelize (interp_trace_threads splits it) */
	int64_t par_max; /* parallel: the plan's max_threads (0: none) */
	/* LT_LOOP with affine bounds (lt_affine_loop): at each entry the loop
	 * runs from max(lo, off[dlo[i].reg] + dlo[i].disp ...) to min(hi,
	 * off[dhi[i].reg] + dhi[i].disp ...) (cmp unused) */
	int ndlo, ndhi;
	ip_conj *dlo, *dhi;
	int nupd;
	ip_upd *upd;
	/* LT_LOOP: updates off[dst] = off[src] + coef * trip of the trip counter
	 * trip = floor(v / step) (AFF_TRIP terms), starting at trip0; kept apart
	 * so that loops without trip terms pay nothing for them */
	int ntupd;
	ip_upd *tupd;
	int64_t trip0;
	/* LT_LOOP: updates off[dst] = off[src] + coef * v * (v + 1) / 2 (AFF_TRI terms: the row
	 * starts of packed caches), applied after the trip counter's */
	int nqupd;
	ip_upd *qupd;
	int nkids, nels;
	struct ip_node **kids, **els;
	ip_insn *code; /* STMT, LET: the whole statement; IF: the condition */
	int cond;      /* IF: register of the condition's truth value */
	int nconj;     /* IF with is_conj: the comparisons */
	ip_conj *conj;
	int ntr, nchk;
	ip_tr *tr;
	ip_chk *chk;
} ip_node;

/* What an enclosing `if` guarantees: sum(coef[s] * s) + cst >= 0 over the
 * symbols s of the path (params folded): s < nindices is the variable of the
 * innermost loop over index s, s = nindices + x the trip counter of the
 * innermost loop over x, s = 2 * nindices + x its v * (v + 1) / 2 (see
 * lin_coefs; IP_NSYM symbols in all). */
#define IP_NSYM(ni) (3 * (ni))
typedef struct cp_fact {
	int64_t *coef;
	int64_t cst;
} cp_fact;

/* A loop on the path from the root to the node being compiled. */
typedef struct cp_open {
	int index;
	int64_t lo, last;
	int64_t tlo, tlast; /* range of the trip counter floor(v / step) */
	bool empty;
	ip_upd *upd;
	int nupd, cap;
	ip_upd *tupd;
	int ntupd, tcap;
	ip_upd *qupd; /* AFF_TRI registers */
	int nqupd, qcap;
	int prev_lvl;       /* lvl[index] outside this loop */
	int prev_fact_base; /* fact_base outside this loop */
} cp_open;

/* Values an affine register takes (none when a loop above it is empty). */
typedef struct cp_range {
	int64_t min, max;
	bool empty;
} cp_range;

typedef struct cp {
	ct_kernel *k;
	const ct_looptree *t;
	ct_ctx *ctx;
	ct_arena *arena;
	bool trace;
	ct_status st;
	int64_t *pv; /* param values, then derived values (lt_param_values) */
	int npv;
	int64_t *stride; /* [storage * IR_MAX_RANK + d] */
	int64_t *nelem;
	/* a run on views (interp_run_views): the layout values of the strided
	 * arrays (src/run/views.h) and each array's buffer size; NULL otherwise */
	const int64_t *view;
	const int64_t *view_nelem;
	int64_t *origin; /* per storage: element offset of logical (0, ...) */
	/* value registers (constants are written at compile time) */
	ip_val *regs;
	int nregs, cap_regs;
	int *let_reg;
	/* affine registers and their static ranges */
	cp_range *range;
	int noffs, cap_offs;
	cp_open *path;
	int depth, cap_path;
	int *lvl;      /* per loop-tree index: path level of its innermost loop, -1 */
	int64_t *coef; /* scratch: coefficient per symbol (IP_NSYM(nindices), see cp_fact) */
	int64_t *ext;  /* [storage * IR_MAX_RANK + d] */
	cp_fact *facts;
	int nfacts, cap_facts;
	int fact_base; /* facts below it speak of loops now shadowed: unused */
	/* the node being compiled */
	ip_insn *code;
	int ncode, cap_code;
	ip_tr *tr;
	int ntr, cap_tr;
	ip_chk *chk;
	int nchk, cap_chk;
	int ref; /* next reference id of the current IR node */
	int *stmt_ref, *let_ref;
	bool has_cache;
} cp;

typedef struct ip_prog {
	ct_arena arena;
	ip_node **roots;
	int nroots;
	ip_val *regs;
	int nregs;
	int noffs;
	int64_t *nelem;
	bool has_cache;
} ip_prog;

/* C's float-to-integer conversion is undefined out of range: saturate,
 * and map NaN to 0. */
static inline int64_t f2i(double x)
{
	if (x != x)
		return 0;
	if (x >= 9223372036854775808.0)
		return INT64_MAX;
	if (x <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)x;
}

/* ------------------------------------------------------------ interp_expr.c: compiling statements */

/* Why ip_lin_coefs failed. */
enum { LC_OK, LC_OVERFLOW, LC_BAD_PARAM, LC_BAD_INDEX };

/* Record the first error st; false. */
bool ip_cp_fail(cp *c, ct_status st);
/* Record error st (msg, formatted with name; only the first error is reported); false. */
bool ip_cp_err(cp *c, ct_status st, const char *msg, const char *name);
/* Grow vector *p (*cap elements of elt bytes) to hold need; false when memory runs out. */
bool ip_grow(cp *c, void **p, int *cap, int need, size_t elt);
/* The register representation (R_I, R_F, R_D) of values of type t. */
int ip_rep_of(ct_dtype t);
/* A fresh value register. */
int ip_new_reg(cp *c);
/* Append one instruction to the code being compiled. */
void ip_emit(cp *c, int op, int dst, int a, int b, int cc, int64_t disp);
/* Register r (representation from) converted to representation to. */
int ip_conv(cp *c, int r, int from, int to);
/* Register r as an integer truth value (0 or 1). */
int ip_truth(cp *c, int r, int rep);
/* Register for sum(c->coef[s] * s) over the symbols of the path (see
 * cp_fact); clears c->coef. Fails if the function uses a loop variable or
 * trip counter not on the path. Per level the variable's register comes
 * before the trip counter's (exec_loop applies them in that order). */
int ip_aff_reg(cp *c);
/* coef += scale * x over the symbols of the path, *cst += the constant and
 * param part (params and derived values folded): AFF_INDEX spreads over the
 * index's chain (an original index is the sum of its split loops), AFF_LOOP
 * is the loop variable itself, AFF_TRIP the loop's trip counter. */
int ip_lin_coefs(const cp *c, aff x, int64_t scale, int64_t *coef, int64_t *cst);
/* c->coef += scale * x (see ip_lin_coefs), with the error on failure. */
bool ip_expand_aff(cp *c, aff x, int64_t scale, int64_t *cst);
/* Range of off[r] + disp; fails when it can overflow (the interpreter
 * never does unchecked arithmetic that could). */
bool ip_disp_range(cp *c, int r, int64_t disp, int64_t *lo, int64_t *hi);
/* The affine x as a register and a displacement whose range cannot overflow (expand, register,
 * range check); false on failure, with the error in c->st. */
bool ip_aff_operand(cp *c, aff x, int *reg, int64_t *disp);
/* Affine register and displacement of an element of storage e->id; records
 * a bounds check unless the static range proves the access in bounds. */
bool ip_comp_access(cp *c, const ir_expr *e, int *reg, int64_t *disp);
/* List an access of array (register reg + disp) in the trace of the statement. */
bool ip_add_trace(cp *c, int array, int reg, int64_t disp, bool is_write);
/* An integer expression of indices, params and integer literals: one the
 * front end could reduce to an affine difference. */
bool ip_expr_is_index_only(const ir_expr *e);
/* The register of let id (its value once computed). */
int ip_let_reg(cp *c, int id);
/* Compile e and convert its value to representation rep. */
int ip_cx_as(cp *c, const ir_expr *e, int rep, int depth);
/* Compile e into a register holding its value in ip_rep_of(e->type). */
int ip_cx(cp *c, const ir_expr *e, int depth);

/* ------------------------------------------------------------ interp_tree.c: compiling the loop tree */

/* Free a compiled program. */
void ip_prog_free(ct_ctx *ctx, ip_prog *p);
/* Compile t for a run (trace = false) or for the trace. NULL with the error
 * on the kernel's ctx. */
ip_prog *ip_compile(ct_looptree *t, bool trace);
/* ip_compile(), with the strided arrays laid out by view (NULL: densely). */
ip_prog *ip_compile_views(ct_looptree *t, bool trace, const int64_t *view,
                          const int64_t *view_nelem);

#endif
