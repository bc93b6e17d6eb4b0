/* interp.c: reference interpreter and address-trace walker over a loop tree compiled to code. */
#include "interp/interp.h"
#include "run/views.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/*
 * How it runs fast: every array offset, index value and `if` difference is
 * an affine function of the loop variables on the path to its statement. It
 * lives in an "affine register" that the enclosing loops keep up to date:
 * a loop with variable v owns updates off[dst] = off[src] + coef * v, one
 * per distinct (src, coef) among the functions below it that depend on v.
 * Functions that differ by a constant share registers (the constant is the
 * access's displacement), so a 5-point stencil keeps one register per loop.
 * Statements compile to a small typed register bytecode; the trace walker
 * uses the same loops and registers and just lists each statement's
 * accesses. A static range analysis of each register over the loop box
 * proves most accesses in bounds and guarantees the register arithmetic
 * never overflows; the rest are checked when they run.
 */

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
	int nupd;
	ip_upd *upd;
	/* LT_LOOP: updates off[dst] = off[src] + coef * trip of the trip counter
	 * trip = floor(v / step) (AFF_TRIP terms), starting at trip0; kept apart
	 * so that loops without trip terms pay nothing for them */
	int ntupd;
	ip_upd *tupd;
	int64_t trip0;
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
 * innermost loop over x (see lin_coefs). */
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
	int64_t *coef; /* scratch: coefficient per symbol (2 * nindices, see cp_fact) */
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

/* ------------------------------------------------------------ compile: helpers */

static bool cp_fail(cp *c, ct_status st)
{
	if (c->st == CT_OK)
		c->st = st;
	return false;
}

static bool cp_err(cp *c, ct_status st, const char *msg, const char *name)
{
	if (c->st == CT_OK)
		ct_error(c->ctx, st, msg, name);
	return cp_fail(c, st);
}

static bool grow(cp *c, void **p, int *cap, int need, size_t elt)
{
	if (ct_vec_grow(c->ctx, p, cap, need, elt))
		return true;
	return cp_fail(c, ct_ctx_last_status(c->ctx) ? ct_ctx_last_status(c->ctx) : CT_ERR_NOMEM);
}

static int rep_of(ct_dtype t)
{
	return t == CT_F32 ? R_F : t == CT_F64 ? R_D : R_I;
}

/* Rank of a type in the widening order i32 < i64 < f32 < f64. */
static int type_rank(ct_dtype t)
{
	switch (t) {
	case CT_I32:
		return 0;
	case CT_I64:
		return 1;
	case CT_F32:
		return 2;
	case CT_F64:
		return 3;
	}
	return 3;
}

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

static int new_reg(cp *c)
{
	if (c->nregs >= (1 << 26)) {
		cp_err(c, CT_ERR_LIMIT, "kernel too large for the interpreter%s", "");
		return 0;
	}
	if (!grow(c, (void **)&c->regs, &c->cap_regs, c->nregs + 1, sizeof *c->regs))
		return 0;
	return c->nregs++;
}

static void emit(cp *c, int op, int dst, int a, int b, int cc, int64_t disp)
{
	if (!grow(c, (void **)&c->code, &c->cap_code, c->ncode + 1, sizeof *c->code))
		return;
	ip_insn *x = &c->code[c->ncode++];
	x->op = op;
	x->dst = dst;
	x->a = a;
	x->b = b;
	x->c = cc;
	x->disp = disp;
}

static int const_reg(cp *c, int rep, bool is_float, double num, int64_t inum)
{
	int r = new_reg(c);
	if (c->st)
		return 0;
	ip_val *v = &c->regs[r];
	if (rep == R_I)
		v->i = is_float ? f2i(num) : inum;
	else if (rep == R_F)
		v->f = is_float ? (float)num : (float)inum;
	else
		v->d = is_float ? num : (double)inum;
	return r;
}

static int conv(cp *c, int r, int from, int to)
{
	static const int ops[3][3] = {
	    [R_I] = {0, OP_I2F, OP_I2D}, [R_F] = {OP_F2I, 0, OP_F2D}, [R_D] = {OP_D2I, OP_D2F, 0}};
	if (from == to)
		return r;
	int d = new_reg(c);
	emit(c, ops[from][to], d, r, 0, 0, 0);
	return d;
}

static int truth(cp *c, int r, int rep)
{
	if (rep == R_I)
		return r;
	int d = new_reg(c);
	emit(c, AR(rep, A_NZ), d, r, 0, 0, 0);
	return d;
}

/* ------------------------------------------------------------ compile: affine registers */

static bool range_add(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int64_t *lo, int64_t *hi)
{
	return ct_add_ok(lo0, lo1, lo) && ct_add_ok(hi0, hi1, hi);
}

/* The register off[src] + coef * v for the loop at path level l, or, with
 * trip, off[src] + coef * floor(v / step) (the loop's trip counter). */
static int get_reg(cp *c, int l, int src, int64_t coef, bool trip)
{
	cp_open *o = &c->path[l];
	ip_upd **list = trip ? &o->tupd : &o->upd;
	int *n = trip ? &o->ntupd : &o->nupd, *cap = trip ? &o->tcap : &o->cap;
	for (int i = 0; i < *n; i++)
		if ((*list)[i].src == src && (*list)[i].coef == coef)
			return (*list)[i].dst;
	if (c->noffs >= (1 << 26)) {
		cp_err(c, CT_ERR_LIMIT, "kernel too large for the interpreter%s", "");
		return 0;
	}
	if (!grow(c, (void **)&c->range, &c->cap_offs, c->noffs + 1, sizeof *c->range) ||
	    !grow(c, (void **)list, cap, *n + 1, sizeof **list))
		return 0;
	int dst = c->noffs++;
	ip_upd *u = &(*list)[(*n)++];
	u->dst = dst;
	u->src = src;
	u->coef = coef;
	const cp_range *rs = &c->range[src];
	cp_range *rd = &c->range[dst];
	rd->empty = rs->empty || o->empty;
	if (!rd->empty) {
		int64_t a, b;
		if (!ct_mul_ok(coef, trip ? o->tlo : o->lo, &a) ||
		    !ct_mul_ok(coef, trip ? o->tlast : o->last, &b) ||
		    !range_add(rs->min, rs->max, a < b ? a : b, a < b ? b : a, &rd->min,
		               &rd->max)) {
			cp_err(c, CT_ERR_LIMIT, "array offsets of kernel '%s' overflow 64 bits",
			       c->k->name);
			return 0;
		}
	}
	return dst;
}

/* Register for sum(c->coef[s] * s) over the symbols of the path (see
 * cp_fact); clears c->coef. Fails if the function uses a loop variable or
 * trip counter not on the path. Per level the variable's register comes
 * before the trip counter's (exec_loop applies them in that order). */
static int aff_reg(cp *c)
{
	int r = 0, ni = c->t->nindices;
	for (int l = 0; l < c->depth && !c->st; l++) {
		int x = c->path[l].index;
		if (c->lvl[x] != l)
			continue; /* shadowed by an inner loop over the same index */
		int64_t cf = c->coef[x], tf = c->coef[ni + x];
		if (cf) {
			r = get_reg(c, l, r, cf, false);
			c->coef[x] = 0;
		}
		if (tf && !c->st) {
			r = get_reg(c, l, r, tf, true);
			c->coef[ni + x] = 0;
		}
	}
	for (int s = 0; s < 2 * ni; s++)
		if (c->coef[s]) {
			c->coef[s] = 0;
			cp_err(c, CT_ERR_INPUT, "index '%s' is used outside its loop",
			       c->t->indices[s < ni ? s : s - ni].name);
		}
	return r;
}

/* Why lin_coefs failed. */
enum { LC_OK, LC_OVERFLOW, LC_BAD_PARAM, LC_BAD_INDEX };

/* coef += scale * x over the symbols of the path, *cst += the constant and
 * param part (params and derived values folded): AFF_INDEX spreads over the
 * index's chain (an original index is the sum of its split loops), AFF_LOOP
 * is the loop variable itself, AFF_TRIP the loop's trip counter. */
static int lin_coefs(const cp *c, aff x, int64_t scale, int64_t *coef, int64_t *cst)
{
	const ct_looptree *t = c->t;
	int ni = t->nindices;
	int64_t v, p;
	if (!ct_mul_ok(x.c, scale, &v) || !ct_add_ok(*cst, v, cst))
		return LC_OVERFLOW;
	for (int i = 0; i < x.n; i++) {
		const aff_term *at = &x.t[i];
		if (!ct_mul_ok(at->coef, scale, &v))
			return LC_OVERFLOW;
		if (at->kind == AFF_PARAM) {
			if (at->id < 0 || at->id >= c->npv)
				return LC_BAD_PARAM;
			if (!ct_mul_ok(v, c->pv[at->id], &p) || !ct_add_ok(*cst, p, cst))
				return LC_OVERFLOW;
			continue;
		}
		if (at->id < 0 || at->id >= ni ||
		    (at->kind != AFF_INDEX && at->kind != AFF_LOOP && at->kind != AFF_TRIP))
			return LC_BAD_INDEX;
		int n = 1, s0 = at->kind == AFF_TRIP ? ni : 0;
		const int *ch = NULL;
		if (at->kind == AFF_INDEX && at->id < c->k->nindices && t->chain &&
		    t->chain[at->id]) {
			ch = t->chain[at->id];
			n = t->chain_len[at->id];
		}
		for (int j = 0; j < n; j++) {
			int m = ch ? ch[j] : at->id;
			if (m < 0 || m >= ni)
				return LC_BAD_INDEX;
			if (!ct_add_ok(coef[s0 + m], v, &coef[s0 + m]))
				return LC_OVERFLOW;
		}
	}
	return LC_OK;
}

/* c->coef += scale * x (see lin_coefs), with the error on failure. */
static bool expand_aff(cp *c, aff x, int64_t scale, int64_t *cst)
{
	switch (lin_coefs(c, x, scale, c->coef, cst)) {
	case LC_OK:
		return true;
	case LC_BAD_PARAM:
		return cp_err(c, CT_ERR_INPUT, "bad param in a subscript%s", "");
	case LC_BAD_INDEX:
		return cp_err(c, CT_ERR_INPUT, "bad index in a subscript%s", "");
	default:
		return cp_err(c, CT_ERR_LIMIT, "affine arithmetic of kernel '%s' overflows 64 bits",
		              c->k->name);
	}
}

/* Range of off[r] + disp; fails when it can overflow (the interpreter
 * never does unchecked arithmetic that could). */
static bool disp_range(cp *c, int r, int64_t disp, int64_t *lo, int64_t *hi)
{
	const cp_range *g = &c->range[r];
	*lo = *hi = 0;
	if (g->empty)
		return true;
	if (ct_add_ok(g->min, disp, lo) && ct_add_ok(g->max, disp, hi))
		return true;
	return cp_err(c, CT_ERR_LIMIT, "affine arithmetic of kernel '%s' overflows 64 bits",
	              c->k->name);
}

/* Range [*lo, *hi] of sum((a[s] + sign * b[s]) * s) over the symbols of
 * the path (b may be NULL). False when a symbol with a nonzero coefficient
 * has no (non-empty) loop on the path, or on overflow. */
static bool lin_range(const cp *c, const int64_t *a, const int64_t *b, int64_t sign, int64_t *lo,
                      int64_t *hi)
{
	int ni = c->t->nindices;
	*lo = *hi = 0;
	for (int s = 0; s < 2 * ni; s++) {
		int64_t cf = a[s], bs, pl, ph;
		if (b && (!ct_mul_ok(sign, b[s], &bs) || !ct_add_ok(cf, bs, &cf)))
			return false;
		if (!cf)
			continue;
		int l = c->lvl[s < ni ? s : s - ni];
		if (l < 0 || c->path[l].empty)
			return false;
		const cp_open *o = &c->path[l];
		int64_t xl = s < ni ? o->lo : o->tlo, xh = s < ni ? o->last : o->tlast;
		if (!ct_mul_ok(cf, xl, &pl) || !ct_mul_ok(cf, xh, &ph) ||
		    !ct_add_ok(*lo, pl < ph ? pl : ph, lo) ||
		    !ct_add_ok(*hi, pl < ph ? ph : pl, hi))
			return false;
	}
	return true;
}

/* Whether every subscript of e provably stays within its extent, from the
 * loop ranges and the facts of the enclosing `if`s: `if (0 < x) ... A[x-1]`.
 * A fact F + fc >= 0 bounds a subscript S + cst = F + R + cst below by
 * cst - fc + min(R), and S = -F + R' above by cst + fc + max(R'). */
static bool dims_in_bounds(cp *c, const ir_expr *e)
{
	const ir_array *a = &c->t->arrays[e->id];
	int ns = 2 * c->t->nindices;
	bool ok = true;
	for (int d = 0; d < a->rank && ok; d++) {
		int64_t cst = 0, lo = 0, hi = 0, rl, rh, b;
		memset(c->coef, 0, sizeof *c->coef * (size_t)ns);
		ok = lin_coefs(c, e->sub[d], 1, c->coef, &cst) == LC_OK &&
		     lin_range(c, c->coef, NULL, 0, &rl, &rh) && ct_add_ok(cst, rl, &lo) &&
		     ct_add_ok(cst, rh, &hi);
		for (int f = c->fact_base; f < c->nfacts && ok; f++) {
			const cp_fact *ft = &c->facts[f];
			if (lo < 0 && lin_range(c, c->coef, ft->coef, -1, &rl, &rh) &&
			    ct_sub_ok(cst, ft->cst, &b) && ct_add_ok(b, rl, &b) && b > lo)
				lo = b;
			if (hi >= c->ext[e->id * IR_MAX_RANK + d] &&
			    lin_range(c, c->coef, ft->coef, 1, &rl, &rh) &&
			    ct_add_ok(cst, ft->cst, &b) && ct_add_ok(b, rh, &b) && b < hi)
				hi = b;
		}
		ok = ok && lo >= 0 && hi < c->ext[e->id * IR_MAX_RANK + d];
	}
	memset(c->coef, 0, sizeof *c->coef * (size_t)ns);
	return ok;
}

/* Affine register and displacement of an element of storage e->id; records
 * a bounds check unless the static range proves the access in bounds. */
static bool comp_access(cp *c, const ir_expr *e, int *reg, int64_t *disp)
{
	const ct_looptree *t = c->t;
	if (!e || e->kind != EX_ACCESS || e->id < 0 || e->id >= t->narrays || !e->sub)
		return cp_err(c, CT_ERR_INPUT, "malformed array access%s", "");
	const ir_array *a = &t->arrays[e->id];
	int64_t cst = 0;
	for (int d = 0; d < a->rank; d++)
		if (!expand_aff(c, e->sub[d], c->stride[e->id * IR_MAX_RANK + d], &cst))
			return false;
	int r = aff_reg(c);
	if (c->st)
		return false;
	*reg = r;
	if (!ct_add_ok(cst, c->origin[e->id], &cst))
		return cp_err(c, CT_ERR_LIMIT, "an offset into '%s' overflows 64 bits", a->name);
	*disp = cst;
	int64_t lo, hi;
	if (!disp_range(c, r, cst, &lo, &hi))
		return false;
	if (!c->range[r].empty) {
		if ((lo < 0 || hi >= c->nelem[e->id]) && !dims_in_bounds(c, e)) {
			if (!grow(c, (void **)&c->chk, &c->cap_chk, c->nchk + 1, sizeof *c->chk))
				return false;
			c->chk[c->nchk].reg = r;
			c->chk[c->nchk].disp = cst;
			c->chk[c->nchk].array = e->id;
			c->nchk++;
		}
	}
	return true;
}

static bool add_trace(cp *c, int array, int reg, int64_t disp, bool is_write)
{
	if (!grow(c, (void **)&c->tr, &c->cap_tr, c->ntr + 1, sizeof *c->tr))
		return false;
	ip_tr *x = &c->tr[c->ntr++];
	x->reg = reg;
	x->disp = disp;
	x->buffer = array;
	x->ref = c->ref;
	if (c->ref >= 0) /* -1: a cache copy, which is no reference */
		c->ref++;
	x->is_write = is_write;
	return true;
}

/* ------------------------------------------------------------ compile: expressions */

/* An integer expression of indices, params and integer literals: one the
 * front end could reduce to an affine difference. */
static bool expr_is_index_only(const ir_expr *e)
{
	switch (e->kind) {
	case EX_NUM:
		return !e->is_float;
	case EX_INDEX:
	case EX_PARAM:
		return true;
	case EX_NEG:
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
		for (int i = 0; i < e->nargs; i++)
			if (!expr_is_index_only(e->args[i]))
				return false;
		return true;
	default:
		return false;
	}
}

static int let_reg(cp *c, int id)
{
	if (id < 0 || id >= c->k->nlets) {
		cp_err(c, CT_ERR_INPUT, "bad let%s", "");
		return 0;
	}
	if (c->let_reg[id] < 0)
		c->let_reg[id] = new_reg(c);
	return c->let_reg[id];
}

static int cx(cp *c, const ir_expr *e, int depth);

/* Compile e and convert its value to representation rep. */
static int cx_as(cp *c, const ir_expr *e, int rep, int depth)
{
	int r = cx(c, e, depth);
	return c->st ? 0 : conv(c, r, rep_of(e->type), rep);
}

static bool nargs_ok(cp *c, const ir_expr *e, int n)
{
	if (e->nargs == n && e->args)
		return true;
	return cp_err(c, CT_ERR_INPUT, "malformed expression%s", "");
}

/* Compile e into a register holding its value in rep_of(e->type). */
static int cx(cp *c, const ir_expr *e, int depth)
{
	if (c->st)
		return 0;
	if (!e || depth > IR_MAX_EXPR_DEPTH + 8) {
		cp_err(c, CT_ERR_LIMIT, "expression too deep%s", "");
		return 0;
	}
	int rep = rep_of(e->type), d, a, b, r;
	int64_t cst = 0;
	switch (e->kind) {
	case EX_NUM:
		return const_reg(c, rep, e->is_float, e->num, e->inum);
	case EX_PARAM:
		if (e->id < 0 || e->id >= c->npv) {
			cp_err(c, CT_ERR_INPUT, "bad param%s", "");
			return 0;
		}
		return const_reg(c, rep, false, 0, c->pv[e->id]);
	case EX_INDEX: {
		aff x = {0, 1, NULL};
		aff_term t = {AFF_INDEX, e->id, 1};
		x.t = &t;
		if (!expand_aff(c, x, 1, &cst))
			return 0;
		r = aff_reg(c);
		int64_t lo, hi;
		if (c->st || !disp_range(c, r, cst, &lo, &hi))
			return 0;
		d = new_reg(c);
		emit(c, OP_IX + rep, d, r, 0, 0, cst);
		return d;
	}
	case EX_LET:
		r = let_reg(c, e->id);
		return c->st ? 0 : conv(c, r, rep_of(c->k->lets[e->id].type), rep);
	case EX_ACCESS: {
		int64_t disp;
		if (!comp_access(c, e, &r, &disp))
			return 0;
		ct_dtype t = c->t->arrays[e->id].type;
		d = new_reg(c);
		emit(c, OP_LD + (int)t, d, e->id, r, 0, disp);
		add_trace(c, e->id, r, disp, false);
		return conv(c, d, rep_of(t), rep);
	}
	case EX_NEG:
		if (!nargs_ok(c, e, 1))
			return 0;
		a = cx_as(c, e->args[0], rep, depth + 1);
		d = new_reg(c);
		emit(c, AR(rep, A_NEG), d, a, 0, 0, 0);
		return d;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		static const int ops[] = {
		    [EX_ADD] = A_ADD, [EX_SUB] = A_SUB, [EX_MUL] = A_MUL, [EX_DIV] = A_DIV};
		if (!nargs_ok(c, e, 2))
			return 0;
		a = cx_as(c, e->args[0], rep, depth + 1);
		b = cx_as(c, e->args[1], rep, depth + 1);
		d = new_reg(c);
		emit(c, AR(rep, ops[e->kind]), d, a, b, 0, 0);
		return d;
	}
	case EX_CMP: {
		if (!nargs_ok(c, e, 2) || e->cmp < CMP_LT || e->cmp > CMP_NE)
			return 0;
		if (e->has_diff && expr_is_index_only(e->args[0]) &&
		    expr_is_index_only(e->args[1])) {
			if (!expand_aff(c, e->diff, 1, &cst))
				return 0;
			r = aff_reg(c);
			int64_t lo, hi;
			if (c->st || !disp_range(c, r, cst, &lo, &hi))
				return 0;
			d = new_reg(c);
			emit(c, OP_ACMP + (int)e->cmp, d, r, 0, 0, cst);
			return conv(c, d, R_I, rep);
		}
		ct_dtype t0 = e->args[0]->type, t1 = e->args[1]->type;
		int orep = rep_of(type_rank(t0) >= type_rank(t1) ? t0 : t1);
		a = cx_as(c, e->args[0], orep, depth + 1);
		b = cx_as(c, e->args[1], orep, depth + 1);
		d = new_reg(c);
		emit(c, AR(orep, A_LT + (int)e->cmp), d, a, b, 0, 0);
		return conv(c, d, R_I, rep);
	}
	case EX_AND:
	case EX_OR:
		if (!nargs_ok(c, e, 2))
			return 0;
		a = cx(c, e->args[0], depth + 1);
		a = truth(c, a, rep_of(e->args[0]->type));
		b = cx(c, e->args[1], depth + 1);
		b = truth(c, b, rep_of(e->args[1]->type));
		d = new_reg(c);
		emit(c, e->kind == EX_AND ? OP_AND : OP_OR, d, a, b, 0, 0);
		return conv(c, d, R_I, rep);
	case EX_NOT:
		if (!nargs_ok(c, e, 1))
			return 0;
		a = cx(c, e->args[0], depth + 1);
		a = truth(c, a, rep_of(e->args[0]->type));
		d = new_reg(c);
		emit(c, OP_NOT, d, a, 0, 0, 0);
		return conv(c, d, R_I, rep);
	case EX_CALL:
		switch (e->fn) {
		case FN_SELECT: {
			if (!nargs_ok(c, e, 3))
				return 0;
			int q = cx(c, e->args[0], depth + 1);
			q = truth(c, q, rep_of(e->args[0]->type));
			a = cx_as(c, e->args[1], rep, depth + 1);
			b = cx_as(c, e->args[2], rep, depth + 1);
			d = new_reg(c);
			emit(c, AR(rep, A_SEL), d, q, a, b, 0);
			return d;
		}
		case FN_FMA: {
			if (!nargs_ok(c, e, 3))
				return 0;
			a = cx_as(c, e->args[0], rep, depth + 1);
			b = cx_as(c, e->args[1], rep, depth + 1);
			int z = cx_as(c, e->args[2], rep, depth + 1);
			d = new_reg(c);
			emit(c, AR(rep, A_FMA), d, a, b, z, 0);
			return d;
		}
		case FN_MIN:
		case FN_MAX:
			if (!nargs_ok(c, e, 2))
				return 0;
			a = cx_as(c, e->args[0], rep, depth + 1);
			b = cx_as(c, e->args[1], rep, depth + 1);
			d = new_reg(c);
			emit(c, AR(rep, e->fn == FN_MIN ? A_MIN : A_MAX), d, a, b, 0, 0);
			return d;
		case FN_ABS:
		case FN_SQRT:
		case FN_EXP:
			if (!nargs_ok(c, e, 1))
				return 0;
			a = cx_as(c, e->args[0], rep, depth + 1);
			d = new_reg(c);
			emit(c,
			     AR(rep, e->fn == FN_ABS    ? A_ABS
			             : e->fn == FN_SQRT ? A_SQRT
			                                : A_EXP),
			     d, a, 0, 0, 0);
			return d;
		}
		break;
	}
	cp_err(c, CT_ERR_INPUT, "unknown expression kind%s", "");
	return 0;
}

/* ------------------------------------------------------------ compile: nodes */

/* ref: the first reference id of the node's accesses; -1 for none. */
static void begin_code(cp *c, int ref)
{
	c->ncode = c->ntr = c->nchk = 0;
	c->ref = ref;
}

/* Copy the current code, trace and checks into n (arena). */
static void end_code(cp *c, ip_node *n, bool keep_trace)
{
	emit(c, OP_END, 0, 0, 0, 0, 0);
	if (c->st)
		return;
	n->code = ct_arena_alloc(c->arena, sizeof *n->code * (size_t)c->ncode);
	if (n->code)
		memcpy(n->code, c->code, sizeof *n->code * (size_t)c->ncode);
	if (keep_trace && c->ntr) {
		n->tr = ct_arena_alloc(c->arena, sizeof *n->tr * (size_t)c->ntr);
		if (n->tr)
			memcpy(n->tr, c->tr, sizeof *n->tr * (size_t)c->ntr);
		n->ntr = c->ntr;
	}
	if (c->nchk) {
		n->chk = ct_arena_alloc(c->arena, sizeof *n->chk * (size_t)c->nchk);
		if (n->chk)
			memcpy(n->chk, c->chk, sizeof *n->chk * (size_t)c->nchk);
		n->nchk = c->nchk;
	}
	if (c->arena->failed)
		cp_fail(c, CT_ERR_NOMEM);
}

/* Fuse `X[p] += Y * Z` (f32/f64, all three of the same type) into one
 * instruction: the statement of every matmul-like kernel. */
static void fuse_mac(cp *c)
{
	if (c->ncode != 4)
		return;
	ip_insn *m = &c->code[2], *s = &c->code[3];
	for (int rep = R_F; rep <= R_D; rep++) {
		ct_dtype t = rep == R_F ? CT_F32 : CT_F64;
		if (c->code[0].op == OP_LD + (int)t && c->code[1].op == OP_LD + (int)t &&
		    m->op == AR(rep, A_MUL) && m->a == c->code[0].dst && m->b == c->code[1].dst &&
		    s->op == OP_ST + 4 * (int)t + AS_ADD && s->c == m->dst) {
			s->op = rep == R_F ? OP_MAC_F32 : OP_MAC_F64;
			s->c = m->a;
			s->dst = m->b;
			*m = *s;
			c->ncode = 3;
			return;
		}
	}
}

static bool comp_stmt(cp *c, ip_node *n, const ir_node *s)
{
	const ct_kernel *k = c->k;
	if (!s || !s->rhs)
		return cp_err(c, CT_ERR_INPUT, "malformed statement%s", "");
	if (s->kind == ND_LET) {
		begin_code(c, s->let_id >= 0 && s->let_id < k->nlets ? c->let_ref[s->let_id] : -1);
		int v = cx(c, s->rhs, 0);
		int lr = let_reg(c, s->let_id);
		if (c->st)
			return false;
		v = conv(c, v, rep_of(s->rhs->type), rep_of(k->lets[s->let_id].type));
		emit(c, OP_MOV, lr, v, 0, 0, 0);
		end_code(c, n, true);
		return !c->st;
	}
	if (!s->lhs || s->lhs->kind != EX_ACCESS || s->lhs->id < 0 || s->lhs->id >= c->t->narrays ||
	    s->op < AS_SET || s->op > AS_MUL)
		return cp_err(c, CT_ERR_INPUT, "malformed statement%s", "");
	/* statements cloned into cache regions keep their stmt_id and share the
	 * original's references; cache copies (stmt_id 0) have none */
	begin_code(c, s->stmt_id >= 1 && s->stmt_id <= k->nstmts ? c->stmt_ref[s->stmt_id] : -1);
	ct_dtype t = c->t->arrays[s->lhs->id].type;
	int v = cx_as(c, s->rhs, rep_of(t), 0);
	int reg;
	int64_t disp;
	if (!comp_access(c, s->lhs, &reg, &disp))
		return false;
	if (s->op != AS_SET)
		add_trace(c, s->lhs->id, reg, disp, false);
	add_trace(c, s->lhs->id, reg, disp, true);
	emit(c, OP_ST + 4 * (int)t + (int)s->op, 0, s->lhs->id, reg, v, disp);
	fuse_mac(c);
	end_code(c, n, true);
	return !c->st;
}

static ip_node **comp_list(cp *c, lt_node *const *v, int n);

/* A condition made of affine comparisons joined by && only. */
static bool cond_is_conj(const ir_expr *e, int depth)
{
	if (!e || depth > IR_MAX_EXPR_DEPTH)
		return false;
	if (e->kind == EX_AND && e->nargs == 2)
		return cond_is_conj(e->args[0], depth + 1) && cond_is_conj(e->args[1], depth + 1);
	return e->kind == EX_CMP && e->nargs == 2 && e->has_diff && e->cmp >= CMP_LT &&
	       e->cmp <= CMP_NE && expr_is_index_only(e->args[0]) && expr_is_index_only(e->args[1]);
}

static int count_conj(const ir_expr *e)
{
	return e->kind == EX_AND ? count_conj(e->args[0]) + count_conj(e->args[1]) : 1;
}

/* Compile the comparisons of a conjunction into out[*n...]. */
static void comp_conj(cp *c, const ir_expr *e, ip_conj *out, int *n)
{
	if (c->st)
		return;
	if (e->kind == EX_AND) {
		comp_conj(c, e->args[0], out, n);
		comp_conj(c, e->args[1], out, n);
		return;
	}
	int64_t cst = 0, lo, hi;
	if (!expand_aff(c, e->diff, 1, &cst))
		return;
	int r = aff_reg(c);
	if (c->st || !disp_range(c, r, cst, &lo, &hi))
		return;
	out[*n].reg = r;
	out[*n].disp = cst;
	out[*n].cmp = (int32_t)e->cmp;
	(*n)++;
}

/* Push the fact scale * x + off >= 0 (over the symbols of the path); a
 * fact that overflows or names a malformed term is simply not used. */
static void push_fact(cp *c, aff x, int64_t scale, int64_t off)
{
	int ns = 2 * c->t->nindices;
	if (!grow(c, (void **)&c->facts, &c->cap_facts, c->nfacts + 1, sizeof *c->facts))
		return;
	cp_fact *f = &c->facts[c->nfacts];
	f->coef = ct_arena_alloc(c->arena, sizeof *f->coef * (size_t)(ns + 1));
	f->cst = off;
	if (!f->coef) {
		cp_fail(c, CT_ERR_NOMEM);
		return;
	}
	if (lin_coefs(c, x, scale, f->coef, &f->cst) == LC_OK)
		c->nfacts++;
}

/* Push the facts "g >= 0" that comparison e (negated when neg) gives:
 * diff < 0 is -diff - 1 >= 0, and so on. */
static void push_cmp_facts(cp *c, const ir_expr *e, bool neg)
{
	ir_cmp cmp = e->cmp;
	if (neg) {
		static const ir_cmp inv[] = {
		    [CMP_LT] = CMP_GE, [CMP_LE] = CMP_GT, [CMP_GT] = CMP_LE,
		    [CMP_GE] = CMP_LT, [CMP_EQ] = CMP_NE, [CMP_NE] = CMP_EQ};
		cmp = inv[cmp];
	}
	switch (cmp) {
	case CMP_LT:
		push_fact(c, e->diff, -1, -1);
		break;
	case CMP_LE:
		push_fact(c, e->diff, -1, 0);
		break;
	case CMP_GT:
		push_fact(c, e->diff, 1, -1);
		break;
	case CMP_GE:
		push_fact(c, e->diff, 1, 0);
		break;
	case CMP_EQ:
		push_fact(c, e->diff, 1, 0);
		push_fact(c, e->diff, -1, 0);
		break;
	case CMP_NE:
		break;
	}
}

static void push_facts(cp *c, const ir_expr *e, bool neg)
{
	if (e->kind == EX_AND) {
		if (neg)
			return; /* !(a && b) says nothing about a or b alone */
		push_facts(c, e->args[0], false);
		push_facts(c, e->args[1], false);
		return;
	}
	push_cmp_facts(c, e, neg);
}

/* floor(a / b) for b >= 1. */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return a % b != 0 && a < 0 ? q - 1 : q;
}

/* Copy an update list into the arena (NULL when empty). */
static ip_upd *keep_upd(cp *c, const ip_upd *u, int n)
{
	if (c->st || n == 0)
		return NULL;
	ip_upd *r = ct_arena_alloc(c->arena, sizeof *r * (size_t)n);
	if (r)
		memcpy(r, u, sizeof *r * (size_t)n);
	else
		cp_fail(c, CT_ERR_NOMEM);
	return r;
}

static bool comp_loop(cp *c, ip_node *n, const lt_node *x)
{
	if (x->step < 1 || x->index < 0 || x->index >= c->t->nindices)
		return cp_err(c, CT_ERR_INPUT, "malformed loop%s", "");
	const char *name = c->t->indices[x->index].name;
	bool ok = true;
	n->lo = bx_eval(x->lo, c->pv, &ok);
	n->hi = bx_eval(x->hi, c->pv, &ok);
	n->step = x->step;
	if (!ok)
		return cp_err(c, CT_ERR_LIMIT, "bounds of loop '%s' overflow 64 bits", name);
	cp_open o;
	memset(&o, 0, sizeof o);
	o.index = x->index;
	o.lo = o.last = n->lo;
	o.empty = n->hi <= n->lo;
	if (!o.empty) {
		int64_t span = 0, probe;
		ok = ct_sub_ok(n->hi, n->lo, &span);
		o.last = n->lo + (span - 1) / n->step * n->step;
		/* v += step after the last iteration must not overflow */
		if (!ok || !ct_add_ok(o.last, n->step, &probe))
			return cp_err(c, CT_ERR_LIMIT, "loop '%s' overflows 64 bits", name);
	}
	/* the trip counter: floor(v / step), one more per iteration */
	n->trip0 = o.tlo = floor_div(n->lo, n->step);
	o.tlast = floor_div(o.last, n->step);
	o.prev_lvl = c->lvl[x->index];
	o.prev_fact_base = c->fact_base;
	if (!grow(c, (void **)&c->path, &c->cap_path, c->depth + 1, sizeof *c->path))
		return false;
	/* a loop that shadows one over the same index makes the facts about
	 * the outer one meaningless inside it */
	if (o.prev_lvl >= 0)
		c->fact_base = c->nfacts;
	c->lvl[x->index] = c->depth;
	c->path[c->depth++] = o;
	n->kids = comp_list(c, x->kids, x->nkids);
	n->nkids = c->st ? 0 : x->nkids;
	cp_open *top = &c->path[--c->depth];
	c->lvl[x->index] = top->prev_lvl;
	c->fact_base = top->prev_fact_base;
	n->upd = keep_upd(c, top->upd, top->nupd);
	n->nupd = n->upd ? top->nupd : 0;
	n->tupd = keep_upd(c, top->tupd, top->ntupd);
	n->ntupd = n->tupd ? top->ntupd : 0;
	ct_free(c->ctx, top->upd);
	ct_free(c->ctx, top->tupd);
	top->upd = top->tupd = NULL;
	/* the fast paths of exec_loop know no trip counters */
	n->fast =
	    n->nkids == 1 && n->kids[0]->kind == LT_STMT && n->kids[0]->nchk == 0 && n->ntupd == 0;
	return !c->st;
}

/* An `if` of the plan: guard[0] >= 0 && ... (no else). */
static void comp_guard_if(cp *c, ip_node *n, const lt_node *x)
{
	if (x->nguard < 0 || (x->nguard > 0 && !x->guard)) {
		cp_err(c, CT_ERR_INPUT, "malformed if%s", "");
		return;
	}
	n->is_conj = true;
	if (x->nguard > 0) {
		n->conj = ct_arena_alloc(c->arena, sizeof *n->conj * (size_t)x->nguard);
		if (!n->conj) {
			cp_fail(c, CT_ERR_NOMEM);
			return;
		}
	}
	for (int i = 0; i < x->nguard && !c->st; i++) {
		int64_t cst = 0, lo, hi;
		if (!expand_aff(c, x->guard[i], 1, &cst))
			return;
		int r = aff_reg(c);
		if (c->st || !disp_range(c, r, cst, &lo, &hi))
			return;
		n->conj[n->nconj].reg = r;
		n->conj[n->nconj].disp = cst;
		n->conj[n->nconj].cmp = CMP_GE;
		n->nconj++;
	}
	int nf = c->nfacts;
	for (int i = 0; i < x->nguard && !c->st; i++)
		push_fact(c, x->guard[i], 1, 0);
	n->kids = comp_list(c, x->kids, x->nkids);
	n->nkids = x->nkids;
	c->nfacts = nf;
	n->els = comp_list(c, x->els, x->nels);
	n->nels = x->nels;
}

static ip_node *comp_node(cp *c, const lt_node *x)
{
	ip_node *n = ct_arena_alloc(c->arena, sizeof *n);
	if (!n) {
		cp_fail(c, CT_ERR_NOMEM);
		return NULL;
	}
	n->kind = x->kind;
	switch (x->kind) {
	case LT_LOOP:
		comp_loop(c, n, x);
		break;
	case LT_STMT:
	case LT_LET:
		comp_stmt(c, n, x->stmt);
		break;
	case LT_IF: {
		if (!x->stmt) {
			comp_guard_if(c, n, x);
			break;
		}
		if (!x->stmt->cond) {
			cp_err(c, CT_ERR_INPUT, "malformed if%s", "");
			break;
		}
		const ir_expr *cond = x->stmt->cond;
		bool conj = cond_is_conj(cond, 0);
		if (conj) {
			n->is_conj = true;
			n->conj =
			    ct_arena_alloc(c->arena, sizeof *n->conj * (size_t)count_conj(cond));
			if (!n->conj) {
				cp_fail(c, CT_ERR_NOMEM);
				break;
			}
			comp_conj(c, cond, n->conj, &n->nconj);
		} else {
			begin_code(c, -1);
			int r = cx(c, cond, 0);
			n->cond = truth(c, r, rep_of(cond->type));
			n->cond_reads = c->ntr > 0;
			if (n->cond_reads && c->trace) {
				cp_err(
				    c, CT_ERR_UNSUPPORTED,
				    "the trace cannot follow an if that reads arrays (kernel '%s')",
				    c->k->name);
				break;
			}
			end_code(c, n, false);
		}
		int nf = c->nfacts;
		if (conj)
			push_facts(c, cond, false);
		n->kids = comp_list(c, x->kids, x->nkids);
		n->nkids = x->nkids;
		c->nfacts = nf;
		if (conj)
			push_facts(c, cond, true);
		n->els = comp_list(c, x->els, x->nels);
		n->nels = x->nels;
		c->nfacts = nf;
		break;
	}
	case LT_CACHE:
		/* a cache region: its copies and body run in order, in the
		 * run as in the trace */
		c->has_cache = true;
		n->kids = comp_list(c, x->kids, x->nkids);
		n->nkids = x->nkids;
		break;
	}
	return c->st ? NULL : n;
}

static ip_node **comp_list(cp *c, lt_node *const *v, int n)
{
	if (n <= 0 || c->st)
		return NULL;
	ip_node **r = ct_arena_alloc(c->arena, sizeof *r * (size_t)n);
	if (!r) {
		cp_fail(c, CT_ERR_NOMEM);
		return NULL;
	}
	for (int i = 0; i < n && !c->st; i++)
		r[i] = comp_node(c, v[i]);
	return c->st ? NULL : r;
}

/* ------------------------------------------------------------ references */

static int count_reads(const ir_expr *e)
{
	if (!e)
		return 0;
	int n = e->kind == EX_ACCESS ? 1 : 0;
	for (int i = 0; i < e->nargs; i++)
		n += count_reads(e->args[i]);
	return n;
}

static void list_reads(const ir_expr *e, interp_ref *out, int *n, const ir_node *s)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS) {
		interp_ref *r = &out[*n];
		r->array = e->id;
		r->node = s;
		r->stmt = s->kind == ND_STMT ? s->stmt_id : 0;
		r->pos = 0;
		r->is_write = false;
		(*n)++;
	}
	for (int i = 0; i < e->nargs; i++)
		list_reads(e->args[i], out, n, s);
}

/* Number the references of the IR in textual order; fills stmt_ref and
 * let_ref (base id of each statement and let) and, when out is non-NULL,
 * the table. Returns the count. */
static int ref_walk(const ct_kernel *k, ir_node *const *body, int nbody, int n, int *stmt_ref,
                    int *let_ref, interp_ref *out)
{
	for (int i = 0; i < nbody; i++) {
		const ir_node *s = body[i];
		switch (s->kind) {
		case ND_FOR:
			n = ref_walk(k, s->body, s->nbody, n, stmt_ref, let_ref, out);
			break;
		case ND_IF:
			n = ref_walk(k, s->body, s->nbody, n, stmt_ref, let_ref, out);
			n = ref_walk(k, s->els, s->nels, n, stmt_ref, let_ref, out);
			break;
		case ND_STMT:
		case ND_LET: {
			int base = n;
			if (s->kind == ND_STMT && s->stmt_id >= 1 && s->stmt_id <= k->nstmts &&
			    stmt_ref)
				stmt_ref[s->stmt_id] = base;
			if (s->kind == ND_LET && s->let_id >= 0 && s->let_id < k->nlets && let_ref)
				let_ref[s->let_id] = base;
			if (out) {
				int m = n;
				list_reads(s->rhs, out, &m, s);
				if (s->kind == ND_STMT && s->lhs) {
					for (int w = s->op == AS_SET ? 1 : 0; w < 2; w++) {
						interp_ref *r = &out[m++];
						r->array = s->lhs->id;
						r->node = s;
						r->stmt = s->stmt_id;
						r->is_write = w == 1;
					}
				}
				for (int j = n; j < m; j++)
					out[j].pos = j - n;
			}
			n += count_reads(s->rhs);
			if (s->kind == ND_STMT)
				n += s->op == AS_SET ? 1 : 2;
			break;
		}
		}
	}
	return n;
}

ct_status interp_refs(const ct_looptree *t, interp_ref **refs, int *n)
{
	const ct_kernel *k = t->k;
	*refs = NULL;
	*n = 0;
	int cnt = ref_walk(k, k->body, k->nbody, 0, NULL, NULL, NULL);
	interp_ref *r = ct_alloc(k->ctx, sizeof *r * (size_t)(cnt + 1));
	if (!r)
		return CT_ERR_NOMEM;
	ref_walk(k, k->body, k->nbody, 0, NULL, NULL, r);
	*refs = r;
	*n = cnt;
	return CT_OK;
}

/* ------------------------------------------------------------ compile: program */

static void prog_free(ct_ctx *ctx, ip_prog *p)
{
	if (!p)
		return;
	ct_free(ctx, p->regs);
	ct_arena_free(&p->arena);
	ct_free(ctx, p);
}

static void cp_release(cp *c)
{
	ct_ctx *ctx = c->ctx;
	for (int l = 0; l < c->depth; l++) {
		ct_free(ctx, c->path[l].upd);
		ct_free(ctx, c->path[l].tupd);
	}
	ct_free(ctx, c->path);
	ct_free(ctx, c->lvl);
	ct_free(ctx, c->pv);
	ct_free(ctx, c->stride);
	ct_free(ctx, c->origin);
	ct_free(ctx, c->let_reg);
	ct_free(ctx, c->range);
	ct_free(ctx, c->coef);
	ct_free(ctx, c->ext);
	ct_free(ctx, c->facts);
	ct_free(ctx, c->code);
	ct_free(ctx, c->tr);
	ct_free(ctx, c->chk);
	ct_free(ctx, c->stmt_ref);
	ct_free(ctx, c->let_ref);
	ct_free(ctx, c->regs);
}

static ip_prog *compile_views(ct_looptree *t, bool trace, const int64_t *view,
                              const int64_t *view_nelem);

/* Compile t for a run (trace = false) or for the trace. NULL with the error
 * on the kernel's ctx. */
static ip_prog *compile(ct_looptree *t, bool trace)
{
	return compile_views(t, trace, NULL, NULL);
}

/* The layout of strided array a from the view values: its strides replace
 * the declared layout's, its base becomes the origin of every access, and
 * its buffer size bounds the run-time checks. */
static void apply_view(cp *c, int a)
{
	int slot = view_slot(c->k, a);
	if (!c->view || slot < 0)
		return;
	const int64_t *v = c->view + c->k->nparams + slot;
	c->origin[a] = v[0];
	for (int d = 0; d < c->t->arrays[a].rank; d++)
		c->stride[a * IR_MAX_RANK + d] = v[1 + d];
	c->nelem[a] = c->view_nelem[a];
}

/* compile(), with the strided arrays laid out by view (NULL: densely). */
static ip_prog *compile_views(ct_looptree *t, bool trace, const int64_t *view,
                              const int64_t *view_nelem)
{
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	if (ir_params_need_values(k) != CT_OK)
		return NULL;
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *p = &k->params[i];
		if (p->runtime && p->value < 0) {
			ct_error(ctx, CT_ERR_USAGE,
			         "runtime param '%s' must not be negative (it is %lld)", p->name,
			         (long long)p->value);
			return NULL;
		}
	}
	ip_prog *p = ct_alloc(ctx, sizeof *p);
	if (!p)
		return NULL;
	ct_arena_init(&p->arena, ctx);
	cp c;
	memset(&c, 0, sizeof c);
	c.k = k;
	c.t = t;
	c.ctx = ctx;
	c.arena = &p->arena;
	c.trace = trace;
	int na = t->narrays, ni = t->nindices;
	if (na < k->narrays || ni < k->nindices || t->nderived < 0 || !t->arrays || !t->ext ||
	    !t->indices) {
		ct_error(ctx, CT_ERR_INPUT, "malformed loop tree of kernel '%s'", k->name);
		prog_free(ctx, p);
		return NULL;
	}
	c.npv = k->nparams + t->nderived;
	c.pv = ct_alloc(ctx, sizeof *c.pv * (size_t)(c.npv + 1));
	c.stride = ct_alloc(ctx, sizeof *c.stride * (size_t)(na + 1) * IR_MAX_RANK);
	c.origin = ct_alloc(ctx, sizeof *c.origin * (size_t)(na + 1));
	c.view = view;
	c.view_nelem = view_nelem;
	p->nelem = ct_arena_alloc(&p->arena, sizeof *p->nelem * (size_t)(na + 1));
	c.let_reg = ct_alloc(ctx, sizeof *c.let_reg * (size_t)(k->nlets + 1));
	c.coef = ct_alloc(ctx, sizeof *c.coef * (size_t)(2 * ni + 1));
	c.lvl = ct_alloc(ctx, sizeof *c.lvl * (size_t)(ni + 1));
	c.ext = ct_alloc(ctx, sizeof *c.ext * (size_t)(na + 1) * IR_MAX_RANK);
	c.stmt_ref = ct_alloc(ctx, sizeof *c.stmt_ref * (size_t)(k->nstmts + 2));
	c.let_ref = ct_alloc(ctx, sizeof *c.let_ref * (size_t)(k->nlets + 1));
	c.nelem = p->nelem;
	if (!c.pv || !c.stride || !c.origin || !p->nelem || !c.let_reg || !c.coef || !c.lvl || !c.ext ||
	    !c.stmt_ref || !c.let_ref)
		c.st = CT_ERR_NOMEM;
	if (!c.st && !lt_param_values(t, c.pv))
		c.st = ct_error(ctx, CT_ERR_LIMIT,
		                "a derived value of kernel '%s' overflows 64 bits", k->name);
	if (!c.st) {
		for (int a = 0; a < na && !c.st; a++) {
			c.st =
			    lt_array_layout(t, c.pv, a, &c.stride[a * IR_MAX_RANK], &p->nelem[a]);
			c.origin[a] = 0;
			if (!c.st && a < k->narrays)
				apply_view(&c, a);
			for (int d = 0; d < t->arrays[a].rank && !c.st; d++) {
				bool ok = true;
				c.ext[a * IR_MAX_RANK + d] =
				    bx_eval(t->ext[a * IR_MAX_RANK + d], c.pv, &ok);
			}
		}
		for (int i = 0; i < ni; i++)
			c.lvl[i] = -1;
		for (int i = 0; i < k->nlets; i++)
			c.let_reg[i] = -1;
		ref_walk(k, k->body, k->nbody, 0, c.stmt_ref, c.let_ref, NULL);
	}
	/* value register 0 is scratch; affine register 0 is the constant 0 */
	if (!c.st)
		new_reg(&c);
	if (!c.st && grow(&c, (void **)&c.range, &c.cap_offs, 1, sizeof *c.range))
		c.noffs = 1;
	if (!c.st) {
		p->roots = comp_list(&c, t->roots, t->nroots);
		p->nroots = c.st ? 0 : t->nroots;
	}
	if (!c.st && p->arena.failed)
		c.st = CT_ERR_NOMEM;
	if (c.st) {
		if (ct_ctx_last_status(ctx) == CT_OK)
			ct_error(ctx, c.st, "cannot compile the loop tree for the interpreter");
		cp_release(&c);
		prog_free(ctx, p);
		return NULL;
	}
	p->regs = c.regs;
	p->nregs = c.nregs;
	p->noffs = c.noffs;
	p->has_cache = c.has_cache;
	c.regs = NULL;
	cp_release(&c);
	return p;
}

/* ------------------------------------------------------------ execution */

typedef struct ip_state {
	ip_val *r;
	int64_t *o;
	void **base;
	const int64_t *nelem;
	const ct_kernel *k;
	const ir_array *arrays; /* the tree's storage, for messages */
	bool trace;
	interp_access *acc;
	int nacc;
	interp_batch_fn fn;
	void *ud;
	ct_status st;
	ct_ctx *report; /* the ctx whose progress callback hears of the roots' loops (NULL: none) */
} ip_state;

static inline int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t wsub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t wmul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}
static inline int64_t wneg(int64_t a)
{
	return (int64_t)((uint64_t)0 - (uint64_t)a);
}

/* Integer division truncates; x/0 is 0 and INT64_MIN/-1 wraps. */
static inline int64_t idiv(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	if (b == -1)
		return wneg(a);
	return a / b;
}

#define ELT(T, arr, off) (((T *)base[(arr)])[(off)])

/* Run one statement's (or condition's) code. */
static inline void run_code(ip_val *restrict r, const int64_t *restrict o, void *const *base,
                            const ip_insn *ip)
{
	for (;; ip++) {
		switch (ip->op) {
		case OP_END:
			return;
		case OP_LD + CT_F32:
			r[ip->dst].f = ELT(float, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_LD + CT_F64:
			r[ip->dst].d = ELT(double, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_LD + CT_I32:
			r[ip->dst].i = ELT(int32_t, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_LD + CT_I64:
			r[ip->dst].i = ELT(int64_t, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_MAC_F32: {
			float *p = &ELT(float, ip->a, o[ip->b] + ip->disp);
			*p = *p + r[ip->c].f * r[ip->dst].f;
			return;
		}
		case OP_MAC_F64: {
			double *p = &ELT(double, ip->a, o[ip->b] + ip->disp);
			*p = *p + r[ip->c].d * r[ip->dst].d;
			return;
		}
#define ST_F(T, t, fld)                                                                            \
	case OP_ST + 4 * t + AS_SET:                                                               \
		ELT(T, ip->a, o[ip->b] + ip->disp) = r[ip->c].fld;                                 \
		break;                                                                             \
	case OP_ST + 4 * t + AS_ADD: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = *p + r[ip->c].fld;                                                            \
		break;                                                                             \
	}                                                                                          \
	case OP_ST + 4 * t + AS_SUB: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = *p - r[ip->c].fld;                                                            \
		break;                                                                             \
	}                                                                                          \
	case OP_ST + 4 * t + AS_MUL: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = *p * r[ip->c].fld;                                                            \
		break;                                                                             \
	}
			ST_F(float, CT_F32, f)
			ST_F(double, CT_F64, d)
#undef ST_F
#define ST_I(T, t)                                                                                 \
	case OP_ST + 4 * t + AS_SET:                                                               \
		ELT(T, ip->a, o[ip->b] + ip->disp) = (T)r[ip->c].i;                                \
		break;                                                                             \
	case OP_ST + 4 * t + AS_ADD: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = (T)wadd(*p, r[ip->c].i);                                                      \
		break;                                                                             \
	}                                                                                          \
	case OP_ST + 4 * t + AS_SUB: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = (T)wsub(*p, r[ip->c].i);                                                      \
		break;                                                                             \
	}                                                                                          \
	case OP_ST + 4 * t + AS_MUL: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = (T)wmul(*p, r[ip->c].i);                                                      \
		break;                                                                             \
	}
			ST_I(int32_t, CT_I32)
			ST_I(int64_t, CT_I64)
#undef ST_I
		case OP_IX + R_I:
			r[ip->dst].i = o[ip->a] + ip->disp;
			break;
		case OP_IX + R_F:
			r[ip->dst].f = (float)(o[ip->a] + ip->disp);
			break;
		case OP_IX + R_D:
			r[ip->dst].d = (double)(o[ip->a] + ip->disp);
			break;
		case OP_ACMP + CMP_LT:
			r[ip->dst].i = o[ip->a] + ip->disp < 0;
			break;
		case OP_ACMP + CMP_LE:
			r[ip->dst].i = o[ip->a] + ip->disp <= 0;
			break;
		case OP_ACMP + CMP_GT:
			r[ip->dst].i = o[ip->a] + ip->disp > 0;
			break;
		case OP_ACMP + CMP_GE:
			r[ip->dst].i = o[ip->a] + ip->disp >= 0;
			break;
		case OP_ACMP + CMP_EQ:
			r[ip->dst].i = o[ip->a] + ip->disp == 0;
			break;
		case OP_ACMP + CMP_NE:
			r[ip->dst].i = o[ip->a] + ip->disp != 0;
			break;
		case OP_MOV:
			r[ip->dst] = r[ip->a];
			break;
		case OP_I2F:
			r[ip->dst].f = (float)r[ip->a].i;
			break;
		case OP_I2D:
			r[ip->dst].d = (double)r[ip->a].i;
			break;
		case OP_F2D:
			r[ip->dst].d = (double)r[ip->a].f;
			break;
		case OP_D2F:
			r[ip->dst].f = (float)r[ip->a].d;
			break;
		case OP_F2I:
			r[ip->dst].i = f2i((double)r[ip->a].f);
			break;
		case OP_D2I:
			r[ip->dst].i = f2i(r[ip->a].d);
			break;
		case OP_AND:
			r[ip->dst].i = (r[ip->a].i != 0) & (r[ip->b].i != 0);
			break;
		case OP_OR:
			r[ip->dst].i = (r[ip->a].i != 0) | (r[ip->b].i != 0);
			break;
		case OP_NOT:
			r[ip->dst].i = r[ip->a].i == 0;
			break;
		/* integers: wrapping int64 arithmetic */
		case AR(R_I, A_ADD):
			r[ip->dst].i = wadd(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_SUB):
			r[ip->dst].i = wsub(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_MUL):
			r[ip->dst].i = wmul(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_DIV):
			r[ip->dst].i = idiv(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_NEG):
			r[ip->dst].i = wneg(r[ip->a].i);
			break;
		case AR(R_I, A_MIN):
			r[ip->dst].i = r[ip->a].i < r[ip->b].i ? r[ip->a].i : r[ip->b].i;
			break;
		case AR(R_I, A_MAX):
			r[ip->dst].i = r[ip->a].i > r[ip->b].i ? r[ip->a].i : r[ip->b].i;
			break;
		case AR(R_I, A_ABS):
			r[ip->dst].i = r[ip->a].i < 0 ? wneg(r[ip->a].i) : r[ip->a].i;
			break;
		case AR(R_I, A_SQRT):
			r[ip->dst].i = f2i(sqrt((double)r[ip->a].i));
			break;
		case AR(R_I, A_EXP):
			r[ip->dst].i = f2i(exp((double)r[ip->a].i));
			break;
		case AR(R_I, A_FMA):
			r[ip->dst].i = wadd(wmul(r[ip->a].i, r[ip->b].i), r[ip->c].i);
			break;
		case AR(R_I, A_SEL):
			r[ip->dst].i = r[ip->a].i ? r[ip->b].i : r[ip->c].i;
			break;
		case AR(R_I, A_LT):
			r[ip->dst].i = r[ip->a].i < r[ip->b].i;
			break;
		case AR(R_I, A_LE):
			r[ip->dst].i = r[ip->a].i <= r[ip->b].i;
			break;
		case AR(R_I, A_GT):
			r[ip->dst].i = r[ip->a].i > r[ip->b].i;
			break;
		case AR(R_I, A_GE):
			r[ip->dst].i = r[ip->a].i >= r[ip->b].i;
			break;
		case AR(R_I, A_EQ):
			r[ip->dst].i = r[ip->a].i == r[ip->b].i;
			break;
		case AR(R_I, A_NE):
			r[ip->dst].i = r[ip->a].i != r[ip->b].i;
			break;
		case AR(R_I, A_NZ):
			r[ip->dst].i = r[ip->a].i != 0;
			break;
#define AR_FLOAT(R, fld, SQRT, EXP, ABS, FMA)                                                      \
	case AR(R, A_ADD):                                                                         \
		r[ip->dst].fld = r[ip->a].fld + r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_SUB):                                                                         \
		r[ip->dst].fld = r[ip->a].fld - r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_MUL):                                                                         \
		r[ip->dst].fld = r[ip->a].fld * r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_DIV):                                                                         \
		r[ip->dst].fld = r[ip->a].fld / r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_NEG):                                                                         \
		r[ip->dst].fld = -r[ip->a].fld;                                                    \
		break;                                                                             \
	case AR(R, A_MIN):                                                                         \
		r[ip->dst].fld = r[ip->a].fld < r[ip->b].fld ? r[ip->a].fld : r[ip->b].fld;        \
		break;                                                                             \
	case AR(R, A_MAX):                                                                         \
		r[ip->dst].fld = r[ip->a].fld > r[ip->b].fld ? r[ip->a].fld : r[ip->b].fld;        \
		break;                                                                             \
	case AR(R, A_ABS):                                                                         \
		r[ip->dst].fld = ABS(r[ip->a].fld);                                                \
		break;                                                                             \
	case AR(R, A_SQRT):                                                                        \
		r[ip->dst].fld = SQRT(r[ip->a].fld);                                               \
		break;                                                                             \
	case AR(R, A_EXP):                                                                         \
		r[ip->dst].fld = EXP(r[ip->a].fld);                                                \
		break;                                                                             \
	case AR(R, A_FMA):                                                                         \
		r[ip->dst].fld = FMA(r[ip->a].fld, r[ip->b].fld, r[ip->c].fld);                    \
		break;                                                                             \
	case AR(R, A_SEL):                                                                         \
		r[ip->dst].fld = r[ip->a].i ? r[ip->b].fld : r[ip->c].fld;                         \
		break;                                                                             \
	case AR(R, A_LT):                                                                          \
		r[ip->dst].i = r[ip->a].fld < r[ip->b].fld;                                        \
		break;                                                                             \
	case AR(R, A_LE):                                                                          \
		r[ip->dst].i = r[ip->a].fld <= r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_GT):                                                                          \
		r[ip->dst].i = r[ip->a].fld > r[ip->b].fld;                                        \
		break;                                                                             \
	case AR(R, A_GE):                                                                          \
		r[ip->dst].i = r[ip->a].fld >= r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_EQ):                                                                          \
		r[ip->dst].i = r[ip->a].fld == r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_NE):                                                                          \
		r[ip->dst].i = r[ip->a].fld != r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_NZ):                                                                          \
		r[ip->dst].i = r[ip->a].fld != 0;                                                  \
		break;
			AR_FLOAT(R_F, f, sqrtf, expf, fabsf, fmaf)
			AR_FLOAT(R_D, d, sqrt, exp, fabs, fma)
#undef AR_FLOAT
		default:
			return;
		}
	}
}

static bool exec_chk(ip_state *s, const ip_node *x)
{
	for (int i = 0; i < x->nchk; i++) {
		const ip_chk *c = &x->chk[i];
		int64_t off = s->o[c->reg] + c->disp;
		if (off < 0 || off >= s->nelem[c->array]) {
			s->st =
			    ct_error(s->k->ctx, CT_ERR_RUNTIME,
			             "out-of-bounds access to array '%s' (element %lld of %lld)",
			             s->arrays[c->array].name, (long long)off,
			             (long long)s->nelem[c->array]);
			return false;
		}
	}
	return true;
}

static bool flush(ip_state *s)
{
	if (s->nacc == 0)
		return true;
	ct_status st = s->fn(s->ud, s->acc, s->nacc);
	s->nacc = 0;
	if (st != CT_OK) {
		s->st = st;
		return false;
	}
	return true;
}

static inline bool emit_trace(ip_state *s, const ip_node *x)
{
	const ip_tr *tr = x->tr;
	int n = x->ntr;
	if (s->nacc + n > INTERP_BATCH) {
		if (!flush(s))
			return false;
		/* a statement with more accesses than a batch goes in pieces */
		while (n > INTERP_BATCH) {
			for (int i = 0; i < INTERP_BATCH; i++, tr++) {
				interp_access *a = &s->acc[i];
				a->offset = s->o[tr->reg] + tr->disp;
				a->buffer = tr->buffer;
				a->ref = tr->ref;
				a->is_write = tr->is_write;
			}
			s->nacc = INTERP_BATCH;
			n -= INTERP_BATCH;
			if (!flush(s))
				return false;
		}
	}
	interp_access *a = s->acc + s->nacc;
	const int64_t *o = s->o;
	for (int i = 0; i < n; i++) {
		a[i].offset = o[tr[i].reg] + tr[i].disp;
		a[i].buffer = tr[i].buffer;
		a[i].ref = tr[i].ref;
		a[i].is_write = tr[i].is_write;
	}
	s->nacc += n;
	return true;
}

static bool exec_nodes(ip_state *s, ip_node *const *v, int n);

/* A loop with trip counter updates (cache regions of the plan). */
static bool exec_loop_trip(ip_state *s, const ip_node *x)
{
	int64_t *o = s->o;
	const ip_upd *u = x->upd, *ue = x->upd + x->nupd;
	const ip_upd *tu = x->tupd, *tue = x->tupd + x->ntupd;
	int64_t lo = x->lo, hi = x->hi, step = x->step, trip = x->trip0;
	for (int64_t v = lo; v < hi; v += step, trip++) {
		for (const ip_upd *p = u; p < ue; p++)
			o[p->dst] = o[p->src] + p->coef * v;
		for (const ip_upd *p = tu; p < tue; p++)
			o[p->dst] = o[p->src] + p->coef * trip;
		if (!exec_nodes(s, x->kids, x->nkids))
			return false;
	}
	return true;
}

static bool exec_loop(ip_state *s, const ip_node *x)
{
	int64_t *o = s->o;
	const ip_upd *u = x->upd, *ue = x->upd + x->nupd;
	int64_t lo = x->lo, hi = x->hi, step = x->step;
	if (x->fast && !s->trace) {
		ip_val *r = s->r;
		void *const *base = s->base;
		const ip_insn *code = x->kids[0]->code;
		for (int64_t v = lo; v < hi; v += step) {
			for (const ip_upd *p = u; p < ue; p++)
				o[p->dst] = o[p->src] + p->coef * v;
			run_code(r, o, base, code);
		}
		return true;
	}
	if (x->fast) {
		const ip_node *k = x->kids[0];
		for (int64_t v = lo; v < hi; v += step) {
			for (const ip_upd *p = u; p < ue; p++)
				o[p->dst] = o[p->src] + p->coef * v;
			if (!emit_trace(s, k))
				return false;
		}
		return true;
	}
	if (x->ntupd)
		return exec_loop_trip(s, x);
	for (int64_t v = lo; v < hi; v += step) {
		for (const ip_upd *p = u; p < ue; p++)
			o[p->dst] = o[p->src] + p->coef * v;
		if (!exec_nodes(s, x->kids, x->nkids))
			return false;
	}
	return true;
}

static bool exec_nodes(ip_state *s, ip_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const ip_node *x = v[i];
		switch (x->kind) {
		case LT_LOOP:
			if (!exec_loop(s, x))
				return false;
			break;
		case LT_STMT:
		case LT_LET:
			if (x->nchk && !exec_chk(s, x))
				return false;
			if (s->trace) {
				if (!emit_trace(s, x))
					return false;
			} else {
				run_code(s->r, s->o, s->base, x->code);
			}
			break;
		case LT_IF: {
			bool yes = true;
			if (x->is_conj) {
				const int64_t *o = s->o;
				for (const ip_conj *q = x->conj, *qe = q + x->nconj; q < qe && yes;
				     q++) {
					int64_t a = o[q->reg] + q->disp;
					switch (q->cmp) {
					case CMP_LT:
						yes = a < 0;
						break;
					case CMP_LE:
						yes = a <= 0;
						break;
					case CMP_GT:
						yes = a > 0;
						break;
					case CMP_GE:
						yes = a >= 0;
						break;
					case CMP_EQ:
						yes = a == 0;
						break;
					default:
						yes = a != 0;
						break;
					}
				}
			} else {
				if (x->nchk && !exec_chk(s, x))
					return false;
				run_code(s->r, s->o, s->base, x->code);
				yes = s->r[x->cond].i != 0;
			}
			if (yes) {
				if (!exec_nodes(s, x->kids, x->nkids))
					return false;
			} else if (!exec_nodes(s, x->els, x->nels)) {
				return false;
			}
			break;
		}
		case LT_CACHE:
			if (!exec_nodes(s, x->kids, x->nkids))
				return false;
			break;
		}
	}
	return true;
}

/* Progress of a long run (ct_ctx_set_progress): the iterations of the
 * outermost loops, counted as they end. */
typedef struct ip_progress {
	ct_ctx *ctx;
	double start, next; /* when the run began; no report before next */
	int64_t done, total;
	bool said;          /* a report was made: the last one is owed */
} ip_progress;

static void progress_tick(ip_progress *g, int64_t n)
{
	g->done += n;
	double now = ct_now();
	if (now < g->next && g->done < g->total)
		return;
	if (!g->said && g->done >= g->total)
		return; /* a run that ends within the first second says nothing */
	g->next = now + 0.1;
	g->said = true;
	/* scaled into an int when the counts do not fit one */
	int64_t scale = g->total / INT_MAX + 1;
	g->ctx->progress(g->ctx->progress_ud, g->ctx->progress_phase, (int)(g->done / scale),
	                 (int)(g->total / scale));
}

/* A root loop run one iteration at a time here: no fused body, no trip counters. */
static bool plain_loop(const ip_node *x)
{
	return x->kind == LT_LOOP && !x->fast && !x->ntupd && x->step > 0;
}

/* Progress units of a root: a plain loop's iterations, else 1. */
static int64_t root_trips(const ip_node *x)
{
	if (!plain_loop(x))
		return 1;
	return x->hi <= x->lo ? 0 : (x->hi - x->lo + x->step - 1) / x->step;
}

/* exec_nodes over the roots, the plain outermost loops one iteration at a
 * time so that their progress can be told. */
static bool exec_roots_progress(ip_state *s, ip_node *const *v, int n)
{
	ip_progress g = {s->report, ct_now(), 0, 0, 0, false};
	g.next = g.start + 1.0;
	for (int i = 0; i < n; i++)
		g.total += root_trips(v[i]);
	for (int i = 0; i < n; i++) {
		const ip_node *x = v[i];
		if (!plain_loop(x)) {
			if (!exec_nodes(s, &v[i], 1))
				return false;
			progress_tick(&g, 1);
			continue;
		}
		const ip_upd *u = x->upd, *ue = x->upd + x->nupd;
		for (int64_t it = x->lo; it < x->hi; it += x->step) {
			for (const ip_upd *p = u; p < ue; p++)
				s->o[p->dst] = s->o[p->src] + p->coef * it;
			if (!exec_nodes(s, x->kids, x->nkids))
				return false;
			progress_tick(&g, 1);
		}
	}
	return true;
}

/* Run program p with the state's buffers (run) or batch consumer (trace). */
static ct_status exec_prog(ip_prog *p, ip_state *s, ct_ctx *ctx)
{
	s->r = p->regs;
	s->o = ct_alloc(ctx, sizeof *s->o * (size_t)(p->noffs + 1));
	if (!s->o)
		return CT_ERR_NOMEM;
	s->nelem = p->nelem;
	s->st = CT_OK;
	bool ok = s->report && !s->trace ? exec_roots_progress(s, p->roots, p->nroots)
	                                 : exec_nodes(s, p->roots, p->nroots);
	if (ok && s->trace)
		flush(s);
	ct_free(ctx, s->o);
	return s->st;
}

static int64_t dtype_bytes(ct_dtype t)
{
	return t == CT_F32 || t == CT_I32 ? 4 : 8;
}

ct_status ct_interp_run(ct_looptree *t, void *const *buffers)
{
	/* a tree lowered before its kernel's params changed runs no more */
	if (t && ir_kernel_ready(t->k) != CT_OK)
		return CT_ERR_USAGE;
	return interp_run_views(t, buffers, NULL, NULL);
}

ct_status interp_run_views(ct_looptree *t, void *const *buffers, const int64_t *view,
                           const int64_t *view_nelem)
{
	if (!t || (view && !view_nelem))
		return CT_ERR_USAGE;
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	if (!buffers && k->narrays > 0)
		return ct_error(ctx, CT_ERR_USAGE, "ct_interp_run needs one buffer per array");
	ip_prog *p = compile_views(t, false, view, view_nelem);
	if (!p)
		return ct_ctx_last_status(ctx);
	ct_status st = CT_OK;
	int na = t->narrays;
	void **base = ct_alloc(ctx, sizeof *base * (size_t)(na + 1));
	bool *owned = ct_alloc(ctx, sizeof *owned * (size_t)(na + 1));
	if (!base || !owned)
		st = CT_ERR_NOMEM;
	/* the kernel's arrays come from the caller (temps may be NULL); cache
	 * buffers (ids >= k->narrays) are internal: allocated here, zeroed */
	for (int a = 0; a < na && !st; a++) {
		const ir_array *ar = &t->arrays[a];
		if (a < k->narrays) {
			base[a] = buffers[a];
			if (base[a])
				continue;
			if (ar->role != CT_TEMP) {
				st = ct_error(ctx, CT_ERR_USAGE, "no buffer for array '%s'",
				              ar->name);
				break;
			}
		}
		int64_t bytes;
		if (!ct_mul_ok(p->nelem[a], dtype_bytes(ar->type), &bytes) ||
		    (uint64_t)bytes > SIZE_MAX / 2) {
			st = ct_error(ctx, CT_ERR_LIMIT, "temp array '%s' is too large", ar->name);
			break;
		}
		base[a] = ct_alloc(ctx, (size_t)bytes);
		if (!base[a]) {
			st = CT_ERR_NOMEM;
			break;
		}
		owned[a] = true;
	}
	if (!st) {
		ip_state s;
		memset(&s, 0, sizeof s);
		s.base = base;
		s.k = k;
		s.arrays = t->arrays;
		s.report = ctx->progress && ctx->progress_phase ? ctx : NULL;
		st = exec_prog(p, &s, ctx);
	}
	for (int a = 0; base && owned && a < na; a++)
		if (owned[a])
			ct_free(ctx, base[a]);
	ct_free(ctx, base);
	ct_free(ctx, owned);
	prog_free(ctx, p);
	return st;
}

ct_status interp_trace_batch(ct_looptree *t, interp_batch_fn fn, void *ud)
{
	if (!t || !fn)
		return CT_ERR_USAGE;
	ct_ctx *ctx = t->k->ctx;
	ip_prog *p = compile(t, true);
	if (!p)
		return ct_ctx_last_status(ctx);
	ip_state s;
	memset(&s, 0, sizeof s);
	s.k = t->k;
	s.arrays = t->arrays;
	s.trace = true;
	s.fn = fn;
	s.ud = ud;
	s.acc = ct_alloc(ctx, sizeof *s.acc * INTERP_BATCH);
	ct_status st = s.acc ? exec_prog(p, &s, ctx) : CT_ERR_NOMEM;
	ct_free(ctx, s.acc);
	prog_free(ctx, p);
	return st;
}

static int count_checks(ip_node *const *v, int n)
{
	int r = 0;
	for (int i = 0; i < n; i++) {
		const ip_node *x = v[i];
		r += x->nchk + count_checks(x->kids, x->nkids) + count_checks(x->els, x->nels);
	}
	return r;
}

ct_status interp_unproven(ct_looptree *t, int *n)
{
	*n = 0;
	if (!t)
		return CT_ERR_USAGE;
	ip_prog *p = compile(t, false);
	if (!p)
		return ct_ctx_last_status(t->k->ctx);
	*n = count_checks(p->roots, p->nroots);
	prog_free(t->k->ctx, p);
	return CT_OK;
}

typedef struct trace_cb {
	ct_trace_fn fn;
	void *ud;
} trace_cb;

static ct_status trace_each(void *ud, const interp_access *acc, int n)
{
	const trace_cb *cb = ud;
	for (int i = 0; i < n; i++)
		cb->fn(cb->ud, acc[i].buffer, acc[i].offset, acc[i].is_write);
	return CT_OK;
}

ct_status ct_interp_trace(ct_looptree *t, ct_trace_fn fn, void *ud)
{
	if (!t || !fn)
		return CT_ERR_USAGE;
	if (ir_kernel_ready(t->k) != CT_OK)
		return CT_ERR_USAGE;
	trace_cb cb = {fn, ud};
	return interp_trace_batch(t, trace_each, &cb);
}
