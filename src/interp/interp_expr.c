/* interp_expr.c: the interpreter's compiler for statements: affine registers with their range proofs, and expressions to typed register bytecode. */
#include "interp/interp_internal.h"

#include <string.h>

/* ------------------------------------------------------------ ip_compile: helpers */

bool ip_cp_fail(cp *c, ct_status st)
{
	if (c->st == CT_OK)
		c->st = st;
	return false;
}

bool ip_cp_err(cp *c, ct_status st, const char *msg, const char *name)
{
	if (c->st == CT_OK)
		ct_error(c->ctx, st, msg, name);
	return ip_cp_fail(c, st);
}

bool ip_grow(cp *c, void **p, int *cap, int need, size_t elt)
{
	if (ct_vec_grow(c->ctx, p, cap, need, elt))
		return true;
	return ip_cp_fail(c, ct_ctx_last_status(c->ctx) ? ct_ctx_last_status(c->ctx) : CT_ERR_NOMEM);
}

int ip_rep_of(ct_dtype t)
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

int ip_new_reg(cp *c)
{
	if (c->nregs >= (1 << 26)) {
		ip_cp_err(c, CT_ERR_LIMIT, "kernel too large for the interpreter%s", "");
		return 0;
	}
	if (!ip_grow(c, (void **)&c->regs, &c->cap_regs, c->nregs + 1, sizeof *c->regs))
		return 0;
	return c->nregs++;
}

void ip_emit(cp *c, int op, int dst, int a, int b, int cc, int64_t disp)
{
	if (!ip_grow(c, (void **)&c->code, &c->cap_code, c->ncode + 1, sizeof *c->code))
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
	int r = ip_new_reg(c);
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

int ip_conv(cp *c, int r, int from, int to)
{
	static const int ops[3][3] = {
	    [R_I] = {0, OP_I2F, OP_I2D}, [R_F] = {OP_F2I, 0, OP_F2D}, [R_D] = {OP_D2I, OP_D2F, 0}};
	if (from == to)
		return r;
	int d = ip_new_reg(c);
	ip_emit(c, ops[from][to], d, r, 0, 0, 0);
	return d;
}

int ip_truth(cp *c, int r, int rep)
{
	if (rep == R_I)
		return r;
	int d = ip_new_reg(c);
	ip_emit(c, AR(rep, A_NZ), d, r, 0, 0, 0);
	return d;
}

/* ------------------------------------------------------------ ip_compile: affine registers */

static bool range_add(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int64_t *lo, int64_t *hi)
{
	return ct_add_ok(lo0, lo1, lo) && ct_add_ok(hi0, hi1, hi);
}

/* v * (v + 1) / 2 into *r (exact: one of v, v + 1 is even); false on overflow. */
static bool tri_ok(int64_t v, int64_t *r)
{
	int64_t w;
	if (v == INT64_MAX || !ct_mul_ok(v, v + 1, &w))
		return false;
	*r = w / 2;
	return true;
}

/* The range [*lo, *hi] of v * (v + 1) / 2 over v in [a, b] (a <= b): the parabola is least at
 * v = 0 and v = -1 and grows away from them. False on overflow. */
static bool tri_range(int64_t a, int64_t b, int64_t *lo, int64_t *hi)
{
	int64_t ta, tb;
	if (!tri_ok(a, &ta) || !tri_ok(b, &tb))
		return false;
	*lo = a <= 0 && b >= -1 ? 0 : (ta < tb ? ta : tb);
	*hi = ta > tb ? ta : tb;
	return true;
}

/* What a register adds per iteration of its loop (get_reg). */
enum { REG_VAR, REG_TRIP, REG_TRI };

/* The register off[src] + coef * v for the loop at path level l, or, with
 * REG_TRIP, off[src] + coef * floor(v / step) (the loop's trip counter), or,
 * with REG_TRI, off[src] + coef * v * (v + 1) / 2 (a packed cache's row start). */
static int get_reg(cp *c, int l, int src, int64_t coef, int which)
{
	cp_open *o = &c->path[l];
	ip_upd **list = which == REG_TRIP ? &o->tupd : which == REG_TRI ? &o->qupd : &o->upd;
	int *n = which == REG_TRIP ? &o->ntupd : which == REG_TRI ? &o->nqupd : &o->nupd;
	int *cap = which == REG_TRIP ? &o->tcap : which == REG_TRI ? &o->qcap : &o->cap;
	for (int i = 0; i < *n; i++)
		if ((*list)[i].src == src && (*list)[i].coef == coef)
			return (*list)[i].dst;
	if (c->noffs >= (1 << 26)) {
		ip_cp_err(c, CT_ERR_LIMIT, "kernel too large for the interpreter%s", "");
		return 0;
	}
	if (!ip_grow(c, (void **)&c->range, &c->cap_offs, c->noffs + 1, sizeof *c->range) ||
	    !ip_grow(c, (void **)list, cap, *n + 1, sizeof **list))
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
		int64_t xl = which == REG_TRIP ? o->tlo : o->lo, xh = which == REG_TRIP ? o->tlast : o->last;
		int64_t a, b;
		if ((which == REG_TRI && !tri_range(xl, xh, &xl, &xh)) || !ct_mul_ok(coef, xl, &a) ||
		    !ct_mul_ok(coef, xh, &b) ||
		    !range_add(rs->min, rs->max, a < b ? a : b, a < b ? b : a, &rd->min, &rd->max)) {
			ip_cp_err(c, CT_ERR_LIMIT, "array offsets of kernel '%s' overflow 64 bits",
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
int ip_aff_reg(cp *c)
{
	int r = 0, ni = c->t->nindices;
	for (int l = 0; l < c->depth && !c->st; l++) {
		int x = c->path[l].index;
		if (c->lvl[x] != l)
			continue; /* shadowed by an inner loop over the same index */
		int64_t cf = c->coef[x], tf = c->coef[ni + x], qf = c->coef[2 * ni + x];
		if (cf) {
			r = get_reg(c, l, r, cf, REG_VAR);
			c->coef[x] = 0;
		}
		if (tf && !c->st) {
			r = get_reg(c, l, r, tf, REG_TRIP);
			c->coef[ni + x] = 0;
		}
		if (qf && !c->st) {
			r = get_reg(c, l, r, qf, REG_TRI);
			c->coef[2 * ni + x] = 0;
		}
	}
	for (int s = 0; s < IP_NSYM(ni); s++)
		if (c->coef[s]) {
			c->coef[s] = 0;
			ip_cp_err(c, CT_ERR_INPUT, "index '%s' is used outside its loop",
			       c->t->indices[s % ni].name);
		}
	return r;
}

/* coef += scale * x over the symbols of the path, *cst += the constant and
 * param part (params and derived values folded): AFF_INDEX spreads over the
 * index's chain (an original index is the sum of its split loops), AFF_LOOP
 * is the loop variable itself, AFF_TRIP the loop's trip counter, AFF_TRI its v * (v + 1) / 2. */
int ip_lin_coefs(const cp *c, aff x, int64_t scale, int64_t *coef, int64_t *cst)
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
		    (at->kind != AFF_INDEX && at->kind != AFF_LOOP && at->kind != AFF_TRIP && at->kind != AFF_TRI))
			return LC_BAD_INDEX;
		int n = 1, s0 = at->kind == AFF_TRIP ? ni : at->kind == AFF_TRI ? 2 * ni : 0;
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

/* c->coef += scale * x (see ip_lin_coefs), with the error on failure. */
bool ip_expand_aff(cp *c, aff x, int64_t scale, int64_t *cst)
{
	switch (ip_lin_coefs(c, x, scale, c->coef, cst)) {
	case LC_OK:
		return true;
	case LC_BAD_PARAM:
		return ip_cp_err(c, CT_ERR_INPUT, "bad param in a subscript%s", "");
	case LC_BAD_INDEX:
		return ip_cp_err(c, CT_ERR_INPUT, "bad index in a subscript%s", "");
	default:
		return ip_cp_err(c, CT_ERR_LIMIT, "affine arithmetic of kernel '%s' overflows 64 bits",
		              c->k->name);
	}
}

/* Range of off[r] + disp; fails when it can overflow (the interpreter
 * never does unchecked arithmetic that could). */
bool ip_disp_range(cp *c, int r, int64_t disp, int64_t *lo, int64_t *hi)
{
	const cp_range *g = &c->range[r];
	*lo = *hi = 0;
	if (g->empty)
		return true;
	if (ct_add_ok(g->min, disp, lo) && ct_add_ok(g->max, disp, hi))
		return true;
	return ip_cp_err(c, CT_ERR_LIMIT, "affine arithmetic of kernel '%s' overflows 64 bits",
	              c->k->name);
}

/* The affine x as a register and a displacement (off[*reg] + *disp) whose range cannot
 * overflow: how index values, guards and index comparisons enter the program. False on
 * failure, with the error in c->st. */
bool ip_aff_operand(cp *c, aff x, int *reg, int64_t *disp)
{
	int64_t cst = 0, lo, hi;
	if (!ip_expand_aff(c, x, 1, &cst))
		return false;
	int r = ip_aff_reg(c);
	if (c->st || !ip_disp_range(c, r, cst, &lo, &hi))
		return false;
	*reg = r;
	*disp = cst;
	return true;
}

/* Range [*lo, *hi] of sum((a[s] + sign * b[s]) * s) over the symbols of
 * the path (b may be NULL). False when a symbol with a nonzero coefficient
 * has no (non-empty) loop on the path, or on overflow. */
static bool lin_range(const cp *c, const int64_t *a, const int64_t *b, int64_t sign, int64_t *lo,
                      int64_t *hi)
{
	int ni = c->t->nindices;
	*lo = *hi = 0;
	for (int s = 0; s < IP_NSYM(ni); s++) {
		int64_t cf = a[s], bs, pl, ph;
		if (b && (!ct_mul_ok(sign, b[s], &bs) || !ct_add_ok(cf, bs, &cf)))
			return false;
		if (!cf)
			continue;
		int l = c->lvl[s % ni];
		if (l < 0 || c->path[l].empty)
			return false;
		const cp_open *o = &c->path[l];
		int64_t xl = s < ni ? o->lo : o->tlo, xh = s < ni ? o->last : o->tlast;
		if (s >= 2 * ni && !tri_range(o->lo, o->last, &xl, &xh))
			return false;
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
	int ns = IP_NSYM(c->t->nindices);
	bool ok = true;
	for (int d = 0; d < a->rank && ok; d++) {
		int64_t cst = 0, lo = 0, hi = 0, rl, rh, b;
		memset(c->coef, 0, sizeof *c->coef * (size_t)ns);
		ok = ip_lin_coefs(c, e->sub[d], 1, c->coef, &cst) == LC_OK &&
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
bool ip_comp_access(cp *c, const ir_expr *e, int *reg, int64_t *disp)
{
	const ct_looptree *t = c->t;
	if (!e || e->kind != EX_ACCESS || e->id < 0 || e->id >= t->narrays || !e->sub)
		return ip_cp_err(c, CT_ERR_INPUT, "malformed array access%s", "");
	const ir_array *a = &t->arrays[e->id];
	int64_t cst = 0;
	for (int d = 0; d < a->rank; d++)
		if (!ip_expand_aff(c, e->sub[d], c->stride[e->id * IR_MAX_RANK + d], &cst))
			return false;
	int r = ip_aff_reg(c);
	if (c->st)
		return false;
	*reg = r;
	if (!ct_add_ok(cst, c->origin[e->id], &cst))
		return ip_cp_err(c, CT_ERR_LIMIT, "an offset into '%s' overflows 64 bits", a->name);
	*disp = cst;
	int64_t lo, hi;
	if (!ip_disp_range(c, r, cst, &lo, &hi))
		return false;
	if (!c->range[r].empty) {
		if ((lo < 0 || hi >= c->nelem[e->id]) && !dims_in_bounds(c, e)) {
			if (!ip_grow(c, (void **)&c->chk, &c->cap_chk, c->nchk + 1, sizeof *c->chk))
				return false;
			c->chk[c->nchk].reg = r;
			c->chk[c->nchk].disp = cst;
			c->chk[c->nchk].array = e->id;
			c->nchk++;
		}
	}
	return true;
}

bool ip_add_trace(cp *c, int array, int reg, int64_t disp, bool is_write)
{
	if (!ip_grow(c, (void **)&c->tr, &c->cap_tr, c->ntr + 1, sizeof *c->tr))
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

/* ------------------------------------------------------------ ip_compile: expressions */

/* An integer expression of indices, params and integer literals: one the
 * front end could reduce to an affine difference. */
bool ip_expr_is_index_only(const ir_expr *e)
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
			if (!ip_expr_is_index_only(e->args[i]))
				return false;
		return true;
	default:
		return false;
	}
}

int ip_let_reg(cp *c, int id)
{
	if (id < 0 || id >= c->k->nlets) {
		ip_cp_err(c, CT_ERR_INPUT, "bad let%s", "");
		return 0;
	}
	if (c->let_reg[id] < 0)
		c->let_reg[id] = ip_new_reg(c);
	return c->let_reg[id];
}

int ip_cx(cp *c, const ir_expr *e, int depth);

/* Compile e and convert its value to representation rep. */
int ip_cx_as(cp *c, const ir_expr *e, int rep, int depth)
{
	int r = ip_cx(c, e, depth);
	return c->st ? 0 : ip_conv(c, r, ip_rep_of(e->type), rep);
}

static bool nargs_ok(cp *c, const ir_expr *e, int n)
{
	if (e->nargs == n && e->args)
		return true;
	return ip_cp_err(c, CT_ERR_INPUT, "malformed expression%s", "");
}

/* Compile e into a register holding its value in ip_rep_of(e->type). */
int ip_cx(cp *c, const ir_expr *e, int depth)
{
	if (c->st)
		return 0;
	if (!e || depth > IR_MAX_EXPR_DEPTH + 8) {
		ip_cp_err(c, CT_ERR_LIMIT, "expression too deep%s", "");
		return 0;
	}
	int rep = ip_rep_of(e->type), d, a, b, r;
	int64_t cst = 0;
	switch (e->kind) {
	case EX_NUM:
		return const_reg(c, rep, e->is_float, e->num, e->inum);
	case EX_PARAM:
		if (e->id < 0 || e->id >= c->npv) {
			ip_cp_err(c, CT_ERR_INPUT, "bad param%s", "");
			return 0;
		}
		return const_reg(c, rep, false, 0, c->pv[e->id]);
	case EX_INDEX: {
		aff x = {0, 1, NULL};
		aff_term t = {AFF_INDEX, e->id, 1};
		x.t = &t;
		if (!ip_aff_operand(c, x, &r, &cst))
			return 0;
		d = ip_new_reg(c);
		ip_emit(c, OP_IX + rep, d, r, 0, 0, cst);
		return d;
	}
	case EX_LET:
		r = ip_let_reg(c, e->id);
		return c->st ? 0 : ip_conv(c, r, ip_rep_of(c->k->lets[e->id].type), rep);
	case EX_ACCESS: {
		int64_t disp;
		if (!ip_comp_access(c, e, &r, &disp))
			return 0;
		ct_dtype t = c->t->arrays[e->id].type;
		d = ip_new_reg(c);
		ip_emit(c, OP_LD + (int)t, d, e->id, r, 0, disp);
		ip_add_trace(c, e->id, r, disp, false);
		return ip_conv(c, d, ip_rep_of(t), rep);
	}
	case EX_NEG:
		if (!nargs_ok(c, e, 1))
			return 0;
		a = ip_cx_as(c, e->args[0], rep, depth + 1);
		d = ip_new_reg(c);
		ip_emit(c, AR(rep, A_NEG), d, a, 0, 0, 0);
		return d;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		static const int ops[] = {
		    [EX_ADD] = A_ADD, [EX_SUB] = A_SUB, [EX_MUL] = A_MUL, [EX_DIV] = A_DIV};
		if (!nargs_ok(c, e, 2))
			return 0;
		a = ip_cx_as(c, e->args[0], rep, depth + 1);
		b = ip_cx_as(c, e->args[1], rep, depth + 1);
		d = ip_new_reg(c);
		ip_emit(c, AR(rep, ops[e->kind]), d, a, b, 0, 0);
		return d;
	}
	case EX_CMP: {
		if (!nargs_ok(c, e, 2) || e->cmp < CMP_LT || e->cmp > CMP_NE)
			return 0;
		if (e->has_diff && ip_expr_is_index_only(e->args[0]) &&
		    ip_expr_is_index_only(e->args[1])) {
			if (!ip_aff_operand(c, e->diff, &r, &cst))
				return 0;
			d = ip_new_reg(c);
			ip_emit(c, OP_ACMP + (int)e->cmp, d, r, 0, 0, cst);
			return ip_conv(c, d, R_I, rep);
		}
		ct_dtype t0 = e->args[0]->type, t1 = e->args[1]->type;
		int orep = ip_rep_of(type_rank(t0) >= type_rank(t1) ? t0 : t1);
		a = ip_cx_as(c, e->args[0], orep, depth + 1);
		b = ip_cx_as(c, e->args[1], orep, depth + 1);
		d = ip_new_reg(c);
		ip_emit(c, AR(orep, A_LT + (int)e->cmp), d, a, b, 0, 0);
		return ip_conv(c, d, R_I, rep);
	}
	case EX_AND:
	case EX_OR:
		if (!nargs_ok(c, e, 2))
			return 0;
		a = ip_cx(c, e->args[0], depth + 1);
		a = ip_truth(c, a, ip_rep_of(e->args[0]->type));
		b = ip_cx(c, e->args[1], depth + 1);
		b = ip_truth(c, b, ip_rep_of(e->args[1]->type));
		d = ip_new_reg(c);
		ip_emit(c, e->kind == EX_AND ? OP_AND : OP_OR, d, a, b, 0, 0);
		return ip_conv(c, d, R_I, rep);
	case EX_NOT:
		if (!nargs_ok(c, e, 1))
			return 0;
		a = ip_cx(c, e->args[0], depth + 1);
		a = ip_truth(c, a, ip_rep_of(e->args[0]->type));
		d = ip_new_reg(c);
		ip_emit(c, OP_NOT, d, a, 0, 0, 0);
		return ip_conv(c, d, R_I, rep);
	case EX_CALL:
		switch (e->fn) {
		case FN_SELECT: {
			if (!nargs_ok(c, e, 3))
				return 0;
			int q = ip_cx(c, e->args[0], depth + 1);
			q = ip_truth(c, q, ip_rep_of(e->args[0]->type));
			a = ip_cx_as(c, e->args[1], rep, depth + 1);
			b = ip_cx_as(c, e->args[2], rep, depth + 1);
			d = ip_new_reg(c);
			ip_emit(c, AR(rep, A_SEL), d, q, a, b, 0);
			return d;
		}
		case FN_FMA: {
			if (!nargs_ok(c, e, 3))
				return 0;
			a = ip_cx_as(c, e->args[0], rep, depth + 1);
			b = ip_cx_as(c, e->args[1], rep, depth + 1);
			int z = ip_cx_as(c, e->args[2], rep, depth + 1);
			d = ip_new_reg(c);
			ip_emit(c, AR(rep, A_FMA), d, a, b, z, 0);
			return d;
		}
		case FN_MIN:
		case FN_MAX:
			if (!nargs_ok(c, e, 2))
				return 0;
			a = ip_cx_as(c, e->args[0], rep, depth + 1);
			b = ip_cx_as(c, e->args[1], rep, depth + 1);
			d = ip_new_reg(c);
			ip_emit(c, AR(rep, e->fn == FN_MIN ? A_MIN : A_MAX), d, a, b, 0, 0);
			return d;
		case FN_ABS:
		case FN_SQRT:
		case FN_EXP:
			if (!nargs_ok(c, e, 1))
				return 0;
			a = ip_cx_as(c, e->args[0], rep, depth + 1);
			d = ip_new_reg(c);
			ip_emit(c,
			     AR(rep, e->fn == FN_ABS    ? A_ABS
			             : e->fn == FN_SQRT ? A_SQRT
			                                : A_EXP),
			     d, a, 0, 0, 0);
			return d;
		}
		break;
	}
	ip_cp_err(c, CT_ERR_INPUT, "unknown expression kind%s", "");
	return 0;
}
