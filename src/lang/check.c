/* check.c: semantic checks that complete the IR: types, affine forms, roles, plan rules. */
#include "lang/lang.h"
#include "ir/order.h"
#include "ir/targets.h"
#include "ir/project.h"
#include "ir/deps.h"

#include <stdio.h>
#include <string.h>

static void cerr(ct_kernel *k, int *nerr, ir_pos at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cerr(ct_kernel *k, int *nerr, ir_pos at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_diag_vadd(k->ctx, at.line, at.col, fmt, ap);
	va_end(ap);
	(*nerr)++;
}

/* ------------------------------------------------------------ affine forms */

static bool to_aff_rec(ct_kernel *k, ct_arena *a, const ir_expr *e, bool allow_index,
                       const char *what, aff *out)
{
	int dummy = 0;
	bool ok = true;
	aff x, y;
	switch (e->kind) {
	case EX_NUM:
		if (e->is_float) {
			cerr(k, &dummy, e->pos, "non-affine %s: floating literal (use integers)",
			     what);
			return false;
		}
		*out = aff_const(e->inum);
		return true;
	case EX_INDEX:
		if (!allow_index) {
			cerr(k, &dummy, e->pos,
			     "%s must not use index '%s' (iteration spaces are rectangular)", what,
			     k->indices[e->id].name);
			return false;
		}
		*out = aff_sym1(a, AFF_INDEX, e->id, 1, &ok);
		break;
	case EX_PARAM: *out = aff_sym1(a, AFF_PARAM, e->id, 1, &ok); break;
	case EX_LET:
		cerr(k, &dummy, e->pos, "non-affine %s: let '%s' (use indices and params only)",
		     what, k->lets[e->id].name);
		return false;
	case EX_ACCESS:
		cerr(k, &dummy, e->pos,
		     "non-affine %s: array element '%s[...]' (use indices and params only)", what,
		     k->arrays[e->id].name);
		return false;
	case EX_NEG:
		if (!to_aff_rec(k, a, e->args[0], allow_index, what, &x))
			return false;
		*out = aff_scale(a, x, -1, &ok);
		break;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV:
		if (!to_aff_rec(k, a, e->args[0], allow_index, what, &x) ||
		    !to_aff_rec(k, a, e->args[1], allow_index, what, &y))
			return false;
		if (e->kind == EX_ADD) {
			*out = aff_add(a, x, y, &ok);
		} else if (e->kind == EX_SUB) {
			*out = aff_sub(a, x, y, &ok);
		} else if (e->kind == EX_MUL) {
			if (aff_is_const(x))
				*out = aff_scale(a, y, x.c, &ok);
			else if (aff_is_const(y))
				*out = aff_scale(a, x, y.c, &ok);
			else {
				cerr(k, &dummy, e->pos,
				     "non-affine %s: product of two non-constant terms", what);
				return false;
			}
		} else {
			if (!aff_is_const(y)) {
				cerr(k, &dummy, e->pos, "non-affine %s: division by a non-constant",
				     what);
				return false;
			}
			if (y.c == 0) {
				cerr(k, &dummy, e->pos, "division by zero in %s", what);
				return false;
			}
			/* exact division keeps the form affine: (2*i+4)/2 = i+2 */
			bool exact = x.c % y.c == 0;
			for (int i = 0; i < x.n; i++)
				exact &= x.t[i].coef % y.c == 0;
			if (!exact || (y.c == -1 && x.c == INT64_MIN)) {
				cerr(k, &dummy, e->pos, "non-affine %s: division that is not exact",
				     what);
				return false;
			}
			aff r = aff_const(x.c / y.c);
			for (int i = 0; i < x.n; i++)
				r = aff_add(
				    a, r,
				    aff_sym1(a, x.t[i].kind, x.t[i].id, x.t[i].coef / y.c, &ok),
				    &ok);
			*out = r;
		}
		break;
	case EX_CALL: cerr(k, &dummy, e->pos, "non-affine %s: function call", what); return false;
	case EX_CMP:
	case EX_AND:
	case EX_OR:
	case EX_NOT:
		cerr(k, &dummy, e->pos, "non-affine %s: a comparison is not a value", what);
		return false;
	}
	if (!ok) {
		cerr(k, &dummy, e->pos, "integer overflow in %s", what);
		return false;
	}
	return true;
}

bool lang_to_aff(ct_kernel *k, ct_arena *a, const ir_expr *e, bool allow_index, const char *what,
                 aff *out)
{
	*out = aff_const(0);
	return to_aff_rec(k, a, e, allow_index, what, out);
}

bool lang_eval_int(ct_kernel *k, const ir_expr *e, bool allow_params, const char *what,
                   int64_t *out)
{
	int dummy = 0;
	int64_t x, y;
	switch (e->kind) {
	case EX_NUM:
		if (e->is_float) {
			cerr(k, &dummy, e->pos, "%s must be an integer, not a floating literal",
			     what);
			return false;
		}
		*out = e->inum;
		return true;
	case EX_PARAM: {
		const ir_param *p = &k->params[e->id];
		if (!allow_params) {
			cerr(k, &dummy, e->pos,
			     "%s must be an integer constant (param '%s' is not allowed here)",
			     what, p->name);
			return false;
		}
		if (p->runtime) {
			cerr(k, &dummy, e->pos, "%s cannot depend on runtime param '%s'", what,
			     p->name);
			return false;
		}
		*out = p->value;
		return true;
	}
	case EX_NEG:
		if (!lang_eval_int(k, e->args[0], allow_params, what, &x))
			return false;
		if (!ct_sub_ok(0, x, out)) {
			cerr(k, &dummy, e->pos, "integer overflow in %s", what);
			return false;
		}
		return true;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		if (!lang_eval_int(k, e->args[0], allow_params, what, &x) ||
		    !lang_eval_int(k, e->args[1], allow_params, what, &y))
			return false;
		bool ok = true;
		if (e->kind == EX_ADD)
			ok = ct_add_ok(x, y, out);
		else if (e->kind == EX_SUB)
			ok = ct_sub_ok(x, y, out);
		else if (e->kind == EX_MUL)
			ok = ct_mul_ok(x, y, out);
		else if (y == 0) {
			cerr(k, &dummy, e->args[1]->pos, "division by zero in %s", what);
			return false;
		} else if (x == INT64_MIN && y == -1)
			ok = false;
		else
			*out = x / y;
		if (!ok) {
			cerr(k, &dummy, e->pos, "integer overflow in %s", what);
			return false;
		}
		return true;
	}
	default: break;
	}
	cerr(k, &dummy, e->pos, "%s must be an integer expression%s", what,
	     allow_params ? " of compile-time params" : "");
	return false;
}

void lang_aff_print(ct_buf *b, const ct_kernel *k, aff x)
{
	bool first = true;
	for (int pass = 0; pass < 2; pass++) {
		int kind = pass == 0 ? AFF_INDEX : AFF_PARAM;
		for (int i = 0; i < x.n; i++) {
			const aff_term *t = &x.t[i];
			if (t->kind != kind)
				continue;
			const char *name =
			    kind == AFF_INDEX ? k->indices[t->id].name : k->params[t->id].name;
			int64_t c = t->coef;
			if (c < 0)
				ct_buf_putc(b, '-');
			else if (!first)
				ct_buf_putc(b, '+');
			if (c != 1 && c != -1) {
				if (c == INT64_MIN)
					ct_buf_puts(b, "9223372036854775808");
				else
					ct_buf_printf(b, "%lld", (long long)(c < 0 ? -c : c));
				ct_buf_putc(b, '*');
			}
			ct_buf_puts(b, name);
			first = false;
		}
	}
	if (first)
		ct_buf_printf(b, "%lld", (long long)x.c);
	else if (x.c > 0)
		ct_buf_printf(b, "+%lld", (long long)x.c);
	else if (x.c < 0)
		ct_buf_printf(b, "%lld", (long long)x.c);
}

/* ------------------------------------------------------------ types */

typedef struct checker {
	ct_kernel *k;
	int nerr;
	ct_dtype let_default; /* type of a let with only literals, indices, params */
	bool *written;        /* per array: some earlier statement writes it */
	/* per index (check_affine_limits): a root whose loop has affine bounds in its band's
	 * scheduled order (its own, or projected there by a reorder: ir/project.h) */
	bool *paff;
	/* per index: a root of a band whose bounds a reorder projected */
	bool *pband;
} checker;

static bool is_cond(const ir_expr *e)
{
	return e->kind == EX_CMP || e->kind == EX_AND || e->kind == EX_OR || e->kind == EX_NOT;
}

static int type_rank(ct_dtype t)
{
	switch (t) {
	case CT_I32: return 0;
	case CT_I64: return 1;
	case CT_F32: return 2;
	case CT_F64: return 3;
	}
	return 3;
}

static ct_dtype wider(ct_dtype a, ct_dtype b) { return type_rank(a) >= type_rank(b) ? a : b; }
static bool is_int_type(ct_dtype t) { return t == CT_I32 || t == CT_I64; }

/* Natural type of e: *typed is false when e holds only literals, indices
 * and params (it then takes the type of its context). */
static void natural(const ct_kernel *k, const ir_expr *e, bool *typed, ct_dtype *t)
{
	*typed = false;
	*t = CT_I64;
	switch (e->kind) {
	case EX_NUM:
	case EX_INDEX:
	case EX_PARAM: return;
	case EX_LET:
		*typed = true;
		*t = k->lets[e->id].type;
		return;
	case EX_ACCESS:
		*typed = true;
		*t = k->arrays[e->id].type;
		return;
	case EX_CMP:
	case EX_AND:
	case EX_OR:
	case EX_NOT:
		*typed = true;
		*t = CT_I32;
		return;
	default: break;
	}
	int first = e->kind == EX_CALL && e->fn == FN_SELECT ? 1 : 0;
	for (int i = first; i < e->nargs; i++) {
		bool ty;
		ct_dtype at;
		natural(k, e->args[i], &ty, &at);
		if (ty) {
			*t = *typed ? wider(*t, at) : at;
			*typed = true;
		}
	}
	if (*typed && e->kind == EX_CALL && (e->fn == FN_SQRT || e->fn == FN_EXP) &&
	    is_int_type(*t))
		*t = CT_F64;
}

/* Give e and its operands their types, with ctx the type of the context. */
static void settype(const ct_kernel *k, ir_expr *e, ct_dtype ctx)
{
	bool typed;
	ct_dtype nat;
	natural(k, e, &typed, &nat);
	ct_dtype t = typed ? nat : ctx;
	e->type = t;
	e->untyped = !typed;
	switch (e->kind) {
	case EX_ACCESS:
		for (int d = 0; d < k->arrays[e->id].rank; d++)
			settype(k, e->sub_expr[d], CT_I64);
		return;
	case EX_CMP: {
		bool t0, t1;
		ct_dtype a0, a1;
		natural(k, e->args[0], &t0, &a0);
		natural(k, e->args[1], &t1, &a1);
		ct_dtype ot = t0 && t1 ? wider(a0, a1) : t0 ? a0 : t1 ? a1 : CT_I64;
		settype(k, e->args[0], ot);
		settype(k, e->args[1], ot);
		e->type = CT_I32;
		return;
	}
	case EX_AND:
	case EX_OR:
	case EX_NOT:
		for (int i = 0; i < e->nargs; i++)
			settype(k, e->args[i], CT_I32);
		e->type = CT_I32;
		return;
	case EX_CALL:
		if (e->fn == FN_SELECT) {
			settype(k, e->args[0], CT_I32);
			settype(k, e->args[1], t);
			settype(k, e->args[2], t);
			return;
		}
		for (int i = 0; i < e->nargs; i++)
			settype(k, e->args[i], t);
		return;
	default:
		for (int i = 0; i < e->nargs; i++)
			settype(k, e->args[i], t);
		return;
	}
}

/* Check the shape of expression e (values vs conditions), fill affine
 * subscripts and apply the read rules of roles. */
static void check_expr(checker *c, ir_expr *e, bool want_cond)
{
	ct_kernel *k = c->k;
	if (want_cond && !is_cond(e)) {
		cerr(k, &c->nerr, e->pos, "expected a comparison (such as 'x < N') here");
		return;
	}
	if (!want_cond && is_cond(e)) {
		cerr(k, &c->nerr, e->pos, "a comparison is not a value (use select(cond, a, b))");
		return;
	}
	switch (e->kind) {
	case EX_ACCESS: {
		const ir_array *arr = &k->arrays[e->id];
		e->sub = ct_arena_alloc(&k->arena, sizeof *e->sub * (size_t)arr->rank);
		if (!e->sub)
			return;
		for (int d = 0; d < arr->rank; d++) {
			ir_expr *s = e->sub_expr[d];
			int before = c->nerr;
			check_expr(c, s, false);
			if (c->nerr == before &&
			    !lang_to_aff(k, &k->arena, s, true, "subscript", &e->sub[d]))
				c->nerr++;
		}
		return;
	}
	case EX_CALL:
		if (e->fn == FN_SELECT) {
			if (!is_cond(e->args[0])) {
				cerr(k, &c->nerr, e->args[0]->pos,
				     "the first argument of select must be a comparison");
				return;
			}
			check_expr(c, e->args[0], true);
			check_expr(c, e->args[1], false);
			check_expr(c, e->args[2], false);
			return;
		}
		for (int i = 0; i < e->nargs; i++)
			check_expr(c, e->args[i], false);
		return;
	case EX_AND:
	case EX_OR:
	case EX_NOT:
		for (int i = 0; i < e->nargs; i++)
			check_expr(c, e->args[i], true);
		return;
	default:
		for (int i = 0; i < e->nargs; i++)
			check_expr(c, e->args[i], false);
		return;
	}
}

/* Record the first read of output or temp array a with no textually earlier write (check_sizes
 * decides it: check_early_reads). */
static void note_early_read(ct_kernel *k, int a, ir_pos at, ir_assign op)
{
	ir_early_read *r = &k->early_reads[a];
	if (r->any)
		return;
	r->any = true;
	r->op = op;
	r->pos = at;
}

/* Reads of output/temp arrays before any write (program order). */
static void check_reads(checker *c, const ir_expr *e)
{
	ct_kernel *k = c->k;
	if (e->kind == EX_ACCESS) {
		const ir_array *arr = &k->arrays[e->id];
		if ((arr->role == CT_OUTPUT || arr->role == CT_TEMP) && !c->written[e->id])
			note_early_read(k, e->id, e->pos, AS_SET);
		for (int d = 0; d < arr->rank; d++)
			check_reads(c, e->sub_expr[d]);
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		check_reads(c, e->args[i]);
}

/* Each CMP of an `if` condition gets diff = lhs - rhs as an affine form. */
static void check_if_cond(checker *c, ir_expr *e)
{
	ct_kernel *k = c->k;
	if (e->kind == EX_CMP) {
		aff x, y;
		if (!lang_to_aff(k, &k->arena, e->args[0], true, "if condition", &x) ||
		    !lang_to_aff(k, &k->arena, e->args[1], true, "if condition", &y)) {
			c->nerr++;
			return;
		}
		bool ok = true;
		e->diff = aff_sub(&k->arena, x, y, &ok);
		e->has_diff = ok;
		if (!ok)
			cerr(k, &c->nerr, e->pos, "integer overflow in if condition");
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		check_if_cond(c, e->args[i]);
}

static const char *op_name(ir_assign op)
{
	switch (op) {
	case AS_SET: return "=";
	case AS_ADD: return "+=";
	case AS_SUB: return "-=";
	case AS_MUL: return "*=";
	}
	return "=";
}

static void check_nodes(checker *c, ir_node **body, int n)
{
	ct_kernel *k = c->k;
	for (int i = 0; i < n; i++) {
		ir_node *s = body[i];
		switch (s->kind) {
		case ND_FOR: check_nodes(c, s->body, s->nbody); break;
		case ND_IF: {
			int before = c->nerr;
			check_expr(c, s->cond, true);
			if (c->nerr == before)
				settype(k, s->cond, CT_I32);
			if (c->nerr == before)
				check_if_cond(c, s->cond);
			check_nodes(c, s->body, s->nbody);
			check_nodes(c, s->els, s->nels);
			break;
		}
		case ND_LET: {
			int before = c->nerr;
			check_expr(c, s->rhs, false);
			if (c->nerr != before)
				break;
			bool typed;
			ct_dtype t;
			natural(k, s->rhs, &typed, &t);
			k->lets[s->let_id].type = typed ? t : c->let_default;
			settype(k, s->rhs, k->lets[s->let_id].type);
			check_reads(c, s->rhs);
			break;
		}
		case ND_STMT: {
			int before = c->nerr;
			check_expr(c, s->lhs, false);
			check_expr(c, s->rhs, false);
			const ir_array *arr = &k->arrays[s->lhs->id];
			if (c->nerr == before) {
				settype(k, s->lhs, arr->type);
				settype(k, s->rhs, arr->type);
			}
			check_reads(c, s->rhs);
			for (int d = 0; d < arr->rank; d++)
				check_reads(c, s->lhs->sub_expr[d]);
			if (ir_array_readonly(arr)) {
				cerr(k, &c->nerr, s->lhs->pos, "cannot write to %s array '%s'",
				     ct_role_name(arr->role), arr->name);
			} else if (s->op != AS_SET &&
			           (arr->role == CT_OUTPUT || arr->role == CT_TEMP) &&
			           !c->written[s->lhs->id]) {
				note_early_read(k, s->lhs->id, s->lhs->pos, s->op);
			}
			c->written[s->lhs->id] = true;
			break;
		}
		}
	}
}

static void check_plan(checker *c);

/* The position of the last reorder of the band headed by f (the one that gives its order), or
 * fallback when it has none. */
static ir_pos band_reorder_pos(const ct_kernel *k, const ir_node *f, ir_pos fallback)
{
	ir_pos at = fallback;
	for (int s = 0; s < k->nsched; s++)
		if (k->sched[s].kind == SC_REORDER && k->sched[s].n > 0 &&
		    sched_band_head(k, k->sched[s].idx[0]) == f)
			at = k->sched[s].pos;
	return at;
}

/* The schedule's order of the band headed by f: where it puts an affine loop outside a loop its
 * bounds use, the bounds of every loop of the band are projected onto the new order
 * (ir/project.h), refused when they cannot be written; then every loop must stay inside every
 * loop of the split chains its bounds use (the value of a split index is the sum of its chain).
 * Marks the band's roots whose loops are affine in c->paff. */
static void check_affine_order(checker *c, const ir_node *f, int *order)
{
	ct_kernel *k = c->k;
	int n = 0;
	sched_band_order(k, f, true, order, &n);
	proj_band pb;
	ct_arena a; /* the projection's terms, dropped once the flags are read */
	ct_arena_init(&a, k->ctx);
	ct_status st = proj_band_bounds(k, order, n, &a, &pb);
	int x, y, r;
	if (st == CT_ERR_NOMEM)
		c->nerr++;
	else if (st != CT_OK)
		cerr(k, &c->nerr, band_reorder_pos(k, f, f->pos), "%s", pb.err);
	else if (proj_chain_violation(k, &pb, order, n, &x, &y, &r))
		cerr(k, &c->nerr, band_reorder_pos(k, f, k->indices[x].pos),
		     "loop '%s' must stay inside loop '%s': its bounds use '%s', whose value is only known "
		     "inside the last loop of its split chain",
		     k->indices[x].name, k->indices[y].name, k->indices[r].name);
	for (int p = 0; st == CT_OK && p < n; p++)
		if (k->indices[order[p]].kind == IX_LOOP) {
			c->paff[order[p]] = proj_root_affine(k, &pb, order[p]);
			c->pband[order[p]] = pb.projected;
		}
	ct_arena_free(&a);
}

static void check_affine_bands(checker *c, ir_node *const *body, int n, int *order)
{
	for (int i = 0; i < n; i++) {
		const ir_node *s = body[i];
		if (s->kind == ND_FOR) {
			check_affine_order(c, s, order);
			const ir_node *in = s;
			while (in->nbody == 1 && in->body[0]->kind == ND_FOR)
				in = in->body[0];
			check_affine_bands(c, in->body, in->nbody, order);
		} else if (s->kind == ND_IF) {
			check_affine_bands(c, s->body, s->nbody, order);
			check_affine_bands(c, s->els, s->nels, order);
		}
	}
}

/* Index a plan item names whose loop has affine bounds in its band's order (an affine loop, or
 * one split from it; a rectangular loop made affine by a reorder's projection; not an affine
 * loop whose projected bounds are over params only), or NULL. */
static const ir_index *item_affine(const checker *c, const ir_plan_item *it)
{
	const ct_kernel *k = c->k;
	for (int j = 0; j < it->n; j++)
		if (c->paff[k->indices[it->idx[j]].root])
			return &k->indices[it->idx[j]];
	return NULL;
}

/* On a grid target (OpenCL, CUDA) the grid covers the box of each parallelized loop's ranges
 * and each work-item tests the loop's own bounds (src/gen/oclgen.c, gen_mapped): an affine loop
 * as written, unchanged by its band's order, maps to the grid. Reports the first parallelized
 * index of item it that lies in a band whose bounds a reorder projected (its loops' bounds are
 * no longer those the grid is sized from). */
static bool grid_affine(checker *c, const ir_plan_item *it)
{
	ct_kernel *k = c->k;
	const ir_target_info *tg = ir_kernel_target(k);
	if (it->kind != PL_PARALLELIZE || tg->parallel != IR_PAR_GRID)
		return false;
	for (int j = 0; j < it->n; j++) {
		int r = k->indices[it->idx[j]].root;
		const ir_index *x = &k->indices[r];
		if (!c->pband[r])
			continue;
		cerr(k, &c->nerr, it->idx_pos ? it->idx_pos[j] : it->pos,
		     "parallelize(%s): loop '%s' is in a band whose bounds a reorder projected: on "
		     "plan(target=%s) the loops mapped to the grid must keep the bounds they are written "
		     "with (the grid is sized from them: parallelize a loop of another band)",
		     k->indices[it->idx[j]].name, x->name, tg->name);
		return true;
	}
	return false;
}

/* What kernels with affine loop bounds cannot have yet (issue #31 adds them stage by stage):
 * balanced splits of affine loops and of their split indices, reorders whose projected bounds
 * cannot be written or use a split chain not wholly outside the loop,
 * unroll of an affine loop, parallel bands of several loops with one (on the host), SPMD grids,
 * and projected bands in a GPU grid (caches whose region holds an affine loop: the plan
 * pass, src/plan/lower.c). */
static void check_affine_limits(checker *c)
{
	ct_kernel *k = c->k;
	int *order = ct_arena_alloc(&k->arena, sizeof *order * ((size_t)k->nindices + 1));
	c->paff = ct_arena_alloc(&k->arena, (size_t)k->nindices + 1);
	c->pband = ct_arena_alloc(&k->arena, (size_t)k->nindices + 1);
	if (!order || !c->paff || !c->pband) {
		c->nerr++;
		return;
	}
	check_affine_bands(c, k->body, k->nbody, order);
	if (c->nerr > 0)
		return;
	/* a loop written with a step starts at its written lower bound: a projected one (a max over
	 * enclosing indices) would start its steps off the written lattice */
	for (int x = 0; x < k->nindices; x++)
		if (k->indices[x].step_expr && c->pband[x] && c->paff[x])
			cerr(k, &c->nerr, band_reorder_pos(k, sched_band_head(k, x), k->indices[x].pos),
			     "loop '%s' is written with a step: a reorder that gives it bounds over enclosing "
			     "indices (a loop whose bounds use it moved outside it) is not supported yet",
			     k->indices[x].name);
	for (int s = 0; s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		for (int a = 0; sc->kind != SC_REORDER && a < sc->n; a++) {
			const ir_index *x = &k->indices[sc->idx[a]];
			ir_pos at = sc->arg_pos ? sc->arg_pos[a] : sc->pos;
			/* a rectangular loop gets affine bounds when a reorder moves it inside a loop
			 * whose bounds used it; an affine one keeps them unless they were projected
			 * onto params only (its loop is then rectangular) */
			bool own = ir_index_affine(x);
			if (x->kind == IX_LOOP && c->paff[sc->idx[a]] && sc->balanced)
				cerr(k, &c->nerr, at,
				     own ? "loop '%s' has affine bounds (they use enclosing indices or min/max): a "
				           "balanced split of it is not supported yet"
				         : "loop '%s' has affine bounds in the reordered band (they use an "
				           "enclosing index): a balanced split of it is not supported yet",
				     x->name);
			else if (x->kind == IX_SPLIT && c->paff[x->root] && sc->balanced)
				cerr(k, &c->nerr, at,
				     "'%s' is split from loop '%s', whose bounds are affine: a balanced split of it "
				     "is not supported yet",
				     x->name, k->indices[x->root].name);
		}
	}
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *it = &k->plan[i];
		const ir_index *x = it->kind == PL_CACHE ? NULL : item_affine(c, it);
		if (grid_affine(c, it))
			continue;
		if (it->kind == PL_UNROLL && x)
			cerr(k, &c->nerr, it->pos, "unroll(%s): loop '%s' has affine bounds, so no constant trip count",
			     x->name, x->name);
		else if (it->kind == PL_PARALLELIZE && x && (it->n > 1 || it->spmd) &&
		         ir_kernel_target(k)->parallel != IR_PAR_GRID) /* a grid's dimensions are no collapse */
			cerr(k, &c->nerr, it->pos,
			     "parallelize: loop '%s' has affine bounds: it can only be parallelized alone (no "
			     "collapse, no spmd grid)",
			     x->name);
	}
}

/* First index of plan item it written with a step, or NULL. */
static const ir_index *item_stepped(const ct_kernel *k, const ir_plan_item *it)
{
	for (int j = 0; j < it->n; j++)
		if (k->indices[it->idx[j]].step_expr)
			return &k->indices[it->idx[j]];
	return NULL;
}

/* What loops written with a step (`for (t: 0 .. N step T)`) cannot have yet: affine bounds,
 * a split of their own (the split would replace the step), vectorize and unroll (both assume
 * unit steps of the loop variable), GPU targets and distribution. They take reorders,
 * parallelize and caches; the loop tree, every engine, the model and the dependence test run
 * them as they run a split's outer loop. */
static void check_step_limits(checker *c)
{
	ct_kernel *k = c->k;
	for (int x = 0; x < k->nindices; x++) {
		const ir_index *ix = &k->indices[x];
		if (ix->step_expr && ir_index_affine(ix))
			cerr(k, &c->nerr, ix->step_expr->pos,
			     "loop '%s' has a step and affine bounds (they use enclosing indices or min/max): "
			     "not supported yet; give the stepped loop bounds over params",
			     ix->name);
	}
	for (int s = 0; s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		for (int a = 0; sc->kind != SC_REORDER && a < sc->n; a++) {
			const ir_index *x = &k->indices[sc->idx[a]];
			if (x->step_expr)
				cerr(k, &c->nerr, sc->arg_pos ? sc->arg_pos[a] : sc->pos,
				     "loop '%s' is written with a step: it cannot be split (split the loops "
				     "inside it instead)",
				     x->name);
		}
	}
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *it = &k->plan[i];
		const ir_index *x = it->kind == PL_CACHE ? NULL : item_stepped(k, it);
		if (!x)
			continue;
		if (it->kind == PL_VECTORIZE || it->kind == PL_UNROLL)
			cerr(k, &c->nerr, it->pos, "%s(%s): loop '%s' is written with a step, so its variable "
			     "does not move by 1 (%s the loop inside it)",
			     it->kind == PL_VECTORIZE ? "vectorize" : "unroll", x->name, x->name,
			     it->kind == PL_VECTORIZE ? "vectorize" : "unroll");
		else if (it->kind == PL_DISTRIBUTE)
			cerr(k, &c->nerr, it->pos, "distribute: loop '%s' is written with a step: not "
			     "supported yet",
			     x->name);
	}
	if (k->has_plan && k->target != TARGET_HOST)
		cerr(k, &c->nerr, k->plan_pos,
		     "target %s on a kernel with loops written with a step is not supported yet (host is)",
		     k->target == TARGET_CUDA ? "cuda" : "opencl");
}

/* Whether some loop is written with a step. */
static bool any_stepped(const ct_kernel *k)
{
	for (int x = 0; x < k->nindices; x++)
		if (k->indices[x].step_expr)
			return true;
	return false;
}

int check_structure(ct_kernel *k)
{
	checker c;
	memset(&c, 0, sizeof c);
	c.k = k;
	c.let_default = CT_I32;
	for (int i = 0; i < k->narrays; i++)
		c.let_default =
		    i == 0 ? k->arrays[i].type : wider(c.let_default, k->arrays[i].type);
	if (k->narrays == 0)
		c.let_default = CT_F64;
	c.written = ct_arena_alloc(&k->arena, (size_t)k->narrays + 1);
	k->early_reads = ct_arena_alloc(&k->arena, sizeof *k->early_reads * ((size_t)k->narrays + 1));
	if (!c.written || !k->early_reads)
		return 1;
	memset(k->early_reads, 0, sizeof *k->early_reads * ((size_t)k->narrays + 1));
	check_nodes(&c, k->body, k->nbody);
	for (int i = 0; i < k->narrays; i++)
		if (k->arrays[i].role == CT_OUTPUT && !c.written[i])
			cerr(k, &c.nerr, k->arrays[i].pos, "output array '%s' is never written",
			     k->arrays[i].name);
	if (k->nstmts == 0)
		cerr(k, &c.nerr, k->name_pos,
		     "kernel '%s' has no statements (write at least one assignment)",
		     k->name ? k->name : "");
	if (c.nerr == 0)
		check_plan(&c);
	if (c.nerr == 0 && k->affine_bounds)
		check_affine_limits(&c);
	if (c.nerr == 0 && any_stepped(k))
		check_step_limits(&c);
	return c.nerr;
}

/* ------------------------------------------------------------ plan */

/* The place of each cache (its loop and level, its trigger) comes from
 * sched_place_cache (src/ir/order.c), the same function the plan pass
 * asks; here only the rules between options and between a cache and its
 * source are added. */

/* Level and trigger level of cache item i (0 when not level-based). */
typedef struct cache_lv {
	int64_t level, trigger;
	bool checked_ok;
} cache_lv;

/* The rules of packed= (src/plan/plan_pack.c): a read-only copy of one rank-2 block (on a GPU
 * target each work-item's own), with no option that moves, shares or re-lays out its buffer. */
static void check_packed(checker *c, const ir_plan_item *it)
{
	ct_kernel *k = c->k;
	const ir_array *arr = &k->arrays[it->root_array];
	ir_pos at = it->packed_opt.pos;
	const char *why = NULL;
	char msg[160];
	if (arr->rank != 2) {
		snprintf(msg, sizeof msg, "a rank-2 array ('%s' has rank %d)", arr->name, arr->rank);
		why = msg;
	} else if (!ir_array_readonly(arr)) {
		snprintf(msg, sizeof msg,
		         "an input or const array ('%s' is %s): the triangle is never copied back", arr->name,
		         ct_role_name(arr->role));
		why = msg;
	} else if (ir_target_row(k->target)->gpu && it->location != LOC_DEFAULT && it->location != LOC_PRIVATE) {
		/* a work-group's shared copies are flattened over a box (src/gen/oclgen.c,
		 * gen_shared_copy); a work-item's own copies run the triangle's loops as written */
		snprintf(msg, sizeof msg, "location=private on plan(target=%s) (the work-group's shared copies run over "
		         "a box, the triangle's rows do not)", ir_target_row(k->target)->name);
		why = msg;
	} else if (it->src_cache >= 0) {
		why = "a cache of an array, not of another cache";
	} else if (it->has_layout) {
		why = "the buffer's own layout (no layout=)";
	} else if (it->has_trigger) {
		why = "a cache without a trigger (no multicache slots)";
	} else if (it->double_buffer) {
		why = "a cache without double_buffer";
	}
	if (why) {
		cerr(k, &c->nerr, at, "cache '%s': packed= needs %s", it->name, why);
		return;
	}
	for (int j = 0; j < k->nplan; j++)
		if (k->plan[j].kind == PL_CACHE && k->plan[j].src_cache >= 0 &&
		    &k->plan[k->plan[j].src_cache] == it)
			cerr(k, &c->nerr, k->plan[j].src_pos,
			     "cache '%s': its source '%s' is packed (packed= caches have no caches of "
			     "their own)",
			     k->plan[j].name, it->name);
}

static void check_cache(checker *c, int ci, cache_lv *lv, int *room)
{
	ct_kernel *k = c->k;
	const ir_plan_item *it = &k->plan[ci];
	const ir_array *arr = &k->arrays[it->root_array];
	lv->level = lv->trigger = 0;
	lv->checked_ok = false;
	int before = c->nerr;
	sched_place pl;
	pl.order = room;
	bool placed = sched_place_cache(k, ci, &pl);
	if (pl.uses == 0) {
		cerr(k, &c->nerr, pl.err_pos, "%s", pl.err);
		return;
	}
	bool input = ir_array_readonly(arr);
	/* a temp may be multicached where it is only read (checked when the
	 * plan is applied): a later nest reading what an earlier one wrote */
	if (it->has_trigger && !input && arr->role != CT_TEMP)
		cerr(k, &c->nerr, it->trigger_opt.pos,
		     "%s applies only to input, const and temp arrays ('%s' is %s)",
		     it->trigger_is_index ? "trigger_index" : "trigger_level", arr->name,
		     ct_role_name(arr->role));
	if (it->double_buffer && !input)
		cerr(k, &c->nerr, it->double_buffer_opt.pos,
		     "double_buffer applies only to input and const arrays ('%s' is %s)", arr->name,
		     ct_role_name(arr->role));
	if (it->packed != PACK_NONE)
		check_packed(c, it);
	if (!placed) {
		cerr(k, &c->nerr, pl.err_pos, "%s", pl.err);
		return;
	}
	lv->level = pl.level;
	lv->trigger = pl.trigger_level;
	if (it->src_cache >= 0 && c->nerr == before) {
		const ir_plan_item *src = &k->plan[it->src_cache];
		const cache_lv *sl = &lv[it->src_cache - ci];
		if ((it->where == CP_BUDGET) != (src->where == CP_BUDGET)) {
			cerr(k, &c->nerr, it->where_opt.pos,
			     "a max_elements= cache nests only with max_elements= caches ('%s' and "
			     "its "
			     "source '%s')",
			     it->name, src->name);
		} else if (it->where == CP_BUDGET) {
			if (it->value >= src->value)
				cerr(k, &c->nerr, it->where_opt.pos,
				     "max_elements %lld of cache '%s' must be below the %lld of "
				     "its source '%s'",
				     (long long)it->value, it->name, (long long)src->value,
				     src->name);
		} else if (sl->checked_ok) {
			if (lv->level >= sl->level)
				cerr(k, &c->nerr, it->where_opt.pos,
				     "level %lld of cache '%s' must be below level %lld of its "
				     "source '%s'",
				     (long long)lv->level, it->name, (long long)sl->level,
				     src->name);
			else if (lv->trigger > sl->level)
				cerr(k, &c->nerr, it->trigger_opt.pos,
				     "trigger level %lld of cache '%s' must not be above level "
				     "%lld of its "
				     "source '%s'",
				     (long long)lv->trigger, it->name, (long long)sl->level,
				     src->name);
		}
	}
	lv->checked_ok = c->nerr == before;
}

static void check_plan(checker *c)
{
	ct_kernel *k = c->k;
	if (k->nplan == 0)
		return;
	cache_lv *lv = ct_arena_alloc(&k->arena, sizeof *lv * ((size_t)k->nplan + 1));
	int *room = ct_arena_alloc(&k->arena, sizeof *room * ((size_t)k->nindices + 1));
	if (!lv || !room)
		return;
	for (int i = 0; i < k->nplan; i++)
		if (k->plan[i].kind == PL_CACHE)
			check_cache(c, i, &lv[i], room);
}

/* ------------------------------------------------------------ bounds */

/* Subscripts are proved inside their extents for every iteration. Params
 * with a value are numbers; runtime params without one stay symbols, each
 * assumed >= 1. A symbolic d is proved <= 0 when every symbol's coefficient
 * is <= 0 and d <= 0 with every symbol at 1. The iterations of a statement
 * are its loops' box cut by the enclosing `if` conditions: the condition
 * (negated for `else`) is put in disjunctive normal form; each conjunct of
 * atoms `e <= 0` tightens the box (single-index atoms directly, multi-index
 * atoms box-wise, to a fixpoint) and a subscript is then bounded by the
 * box, or by an atom plus the box when it equals that atom's expression up
 * to terms the box bounds. Whatever is too complex is dropped, which only
 * widens the set of iterations: the check may reject, never wrongly accept. */

#define BC_MAX_CONJ 64
#define BC_MAX_ATOMS 64
#define BC_ROUNDS 16

typedef struct conj {
	int n;
	aff *e; /* e[i] <= 0 */
} conj;

typedef struct dnf {
	int n; /* 0 = false */
	conj *c;
} dnf;

typedef struct bcheck {
	ct_kernel *k;
	ct_arena *a; /* scratch */
	int nerr;
	aff *lo, *hi; /* per index: the box (inclusive), params folded */
	int *encl;    /* enclosing original indices */
	int nencl;
	bool failed; /* scratch allocation failed */
} bcheck;

static dnf dnf_true(bcheck *b)
{
	dnf r = {1, ct_arena_alloc(b->a, sizeof(conj))};
	if (!r.c) {
		b->failed = true;
		r.n = 0;
	}
	return r;
}

/* Substitute the params that have values; false on overflow. */
static bool fold(bcheck *b, aff x, aff *out)
{
	bool ok = true;
	aff r = aff_const(x.c);
	for (int i = 0; i < x.n; i++) {
		const aff_term *t = &x.t[i];
		if (t->kind == AFF_PARAM && b->k->params[t->id].has_value) {
			int64_t p;
			if (!ct_mul_ok(t->coef, b->k->params[t->id].value, &p) ||
			    !ct_add_ok(r.c, p, &r.c))
				ok = false;
		} else {
			r = aff_add(b->a, r, aff_sym1(b->a, t->kind, t->id, t->coef, &ok), &ok);
		}
	}
	*out = r;
	return ok;
}

/* d <= 0 for every value (>= 1) of the symbols left in d (params only). */
static bool prove_le0(aff d)
{
	int64_t v = d.c;
	for (int i = 0; i < d.n; i++) {
		if (d.t[i].kind != AFF_PARAM || d.t[i].coef > 0)
			return false;
		if (!ct_add_ok(v, d.t[i].coef, &v))
			return false;
	}
	return v <= 0;
}

/* Largest value of x over the box (an affine form of symbolic params). */
static bool box_max(bcheck *b, aff x, aff *out)
{
	bool ok = true;
	aff r = aff_const(x.c);
	for (int i = 0; i < x.n; i++) {
		const aff_term *t = &x.t[i];
		if (t->kind == AFF_INDEX)
			r = aff_add(b->a, r,
			            aff_scale(b->a, t->coef > 0 ? b->hi[t->id] : b->lo[t->id],
			                      t->coef, &ok),
			            &ok);
		else
			r = aff_add(b->a, r, aff_sym1(b->a, t->kind, t->id, t->coef, &ok), &ok);
	}
	*out = r;
	return ok;
}

/* floor(x / d) (ceil when up) for d > 0, when the symbolic part divides. */
static bool aff_div(bcheck *b, aff x, int64_t d, bool up, aff *out)
{
	bool ok = true;
	for (int i = 0; i < x.n; i++)
		if (x.t[i].coef % d != 0)
			return false;
	if (x.c == INT64_MIN)
		return false;
	int64_t c = up ? -ct_floordiv(-x.c, d) : ct_floordiv(x.c, d);
	aff r = aff_const(c);
	for (int i = 0; i < x.n; i++)
		r = aff_add(b->a, r, aff_sym1(b->a, x.t[i].kind, x.t[i].id, x.t[i].coef / d, &ok),
		            &ok);
	*out = r;
	return ok;
}

/* Atoms of one comparison (negated when neg) as a DNF. */
static dnf dnf_cmp(bcheck *b, const ir_expr *e, bool neg)
{
	dnf r = {0, NULL};
	aff d;
	if (!e->has_diff || !fold(b, e->diff, &d))
		return dnf_true(b);
	ir_cmp c = e->cmp;
	if (neg) {
		static const ir_cmp flip[] = {CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NE, CMP_EQ};
		c = flip[c];
	}
	bool ok = true;
	aff nd = aff_scale(b->a, d, -1, &ok);
	aff one = aff_const(1);
	r.n = c == CMP_NE ? 2 : 1;
	r.c = ct_arena_alloc(b->a, sizeof(conj) * 2);
	aff *atoms = ct_arena_alloc(b->a, sizeof(aff) * 2);
	if (!r.c || !atoms) {
		b->failed = true;
		return (dnf){0, NULL};
	}
	switch (c) {
	case CMP_LT: atoms[0] = aff_add(b->a, d, one, &ok); break; /* d + 1 <= 0 */
	case CMP_LE: atoms[0] = d; break;
	case CMP_GT: atoms[0] = aff_add(b->a, nd, one, &ok); break; /* -d + 1 <= 0 */
	case CMP_GE: atoms[0] = nd; break;
	case CMP_EQ:
		atoms[0] = d;
		atoms[1] = nd;
		r.c[0].n = 2;
		r.c[0].e = atoms;
		return ok ? r : dnf_true(b);
	case CMP_NE:
		atoms[0] = aff_add(b->a, d, one, &ok);
		atoms[1] = aff_add(b->a, nd, one, &ok);
		r.c[0].n = 1;
		r.c[0].e = &atoms[0];
		r.c[1].n = 1;
		r.c[1].e = &atoms[1];
		return ok ? r : dnf_true(b);
	}
	r.c[0].n = 1;
	r.c[0].e = atoms;
	return ok ? r : dnf_true(b);
}

static dnf dnf_and(bcheck *b, dnf x, dnf y)
{
	if ((int64_t)x.n * y.n > BC_MAX_CONJ)
		return x; /* dropping y only widens the set */
	dnf r = {0, ct_arena_alloc(b->a, sizeof(conj) * (size_t)(x.n * y.n + 1))};
	if (!r.c) {
		b->failed = true;
		return x;
	}
	for (int i = 0; i < x.n; i++)
		for (int j = 0; j < y.n; j++) {
			int n = x.c[i].n + y.c[j].n;
			if (n > BC_MAX_ATOMS)
				n = BC_MAX_ATOMS;
			conj *c = &r.c[r.n++];
			c->e = ct_arena_alloc(b->a, sizeof(aff) * (size_t)(n + 1));
			if (!c->e) {
				b->failed = true;
				return x;
			}
			int m = 0;
			for (int t = 0; t < x.c[i].n && m < n; t++)
				c->e[m++] = x.c[i].e[t];
			for (int t = 0; t < y.c[j].n && m < n; t++)
				c->e[m++] = y.c[j].e[t];
			c->n = m;
		}
	return r;
}

static dnf dnf_or(bcheck *b, dnf x, dnf y)
{
	if (x.n + y.n > BC_MAX_CONJ)
		return dnf_true(b);
	dnf r = {0, ct_arena_alloc(b->a, sizeof(conj) * (size_t)(x.n + y.n + 1))};
	if (!r.c) {
		b->failed = true;
		return dnf_true(b);
	}
	for (int i = 0; i < x.n; i++)
		r.c[r.n++] = x.c[i];
	for (int j = 0; j < y.n; j++)
		r.c[r.n++] = y.c[j];
	return r;
}

/* DNF of condition e (of its negation when neg). */
static dnf dnf_of(bcheck *b, const ir_expr *e, bool neg)
{
	switch (e->kind) {
	case EX_CMP: return dnf_cmp(b, e, neg);
	case EX_NOT: return dnf_of(b, e->args[0], !neg);
	case EX_AND:
	case EX_OR: {
		dnf x = dnf_of(b, e->args[0], neg), y = dnf_of(b, e->args[1], neg);
		bool and = (e->kind == EX_AND) != neg;
		return and? dnf_and(b, x, y) : dnf_or(b, x, y);
	}
	default: return dnf_true(b);
	}
}

/* Smallest value of x over the box. */
static bool box_min(bcheck *b, aff x, aff *out)
{
	bool ok = true;
	aff m;
	if (!box_max(b, aff_scale(b->a, x, -1, &ok), &m) || !ok)
		return false;
	*out = aff_scale(b->a, m, -1, &ok);
	return ok;
}

/* The box [lo, hi) of an affine loop over the boxes of the indices its
 * bounds use (set before it: they enclose it): the largest least value of
 * its lower terms, the smallest greatest value of its upper terms, where
 * one provably dominates; the first term otherwise (any term is a valid
 * bound: the box may only be wider than the loop). */
static bool affine_box(bcheck *b, const ir_index *ix, aff *lo, aff *hi)
{
	bool ok = true;
	for (int side = 0; side < 2; side++) {
		int n = side ? ix->nhi : ix->nlo;
		const aff *v = side ? ix->his : ix->los;
		aff best = {0, 0, NULL};
		for (int j = 0; j < n; j++) {
			aff f, m;
			if (!fold(b, v[j], &f) || !(side ? box_max(b, f, &m) : box_min(b, f, &m)))
				return false;
			/* tighter: a larger lower bound, a smaller upper one */
			aff d = side ? aff_sub(b->a, m, best, &ok) : aff_sub(b->a, best, m, &ok);
			if (j == 0 || (ok && prove_le0(d)))
				best = m;
		}
		*(side ? hi : lo) = best;
	}
	return ok;
}

/* The atoms an affine loop's bounds give its body: L - x <= 0 for each
 * lower term L, x - H + 1 <= 0 for each upper term H. */
static dnf affine_atoms(bcheck *b, int x)
{
	const ir_index *ix = &b->k->indices[x];
	dnf r = dnf_true(b);
	aff *e = ct_arena_alloc(b->a, sizeof *e * (size_t)(ix->nlo + ix->nhi));
	if (!r.n || !e) {
		b->failed = true;
		return r;
	}
	bool ok = true;
	aff vx = aff_sym1(b->a, AFF_INDEX, x, 1, &ok);
	int n = 0;
	for (int j = 0; j < ix->nlo; j++)
		e[n++] = aff_sub(b->a, ix->los[j], vx, &ok);
	for (int j = 0; j < ix->nhi; j++)
		e[n++] = aff_add(b->a, aff_sub(b->a, vx, ix->his[j], &ok), aff_const(1), &ok);
	for (int j = 0; j < n && ok; j++) /* params with values as numbers, as the box has them */
		ok = fold(b, e[j], &e[j]);
	if (!ok)
		return r; /* no atoms: only a wider set */
	r.c[0].n = n;
	r.c[0].e = e;
	return r;
}

/* The end of a loop written with a step (`for (t: lo .. hi step S)`), for the box: one past
 * its last value lo + S*floor((hi-1-lo)/S) when lo and hi are numbers, so `A[t + i]` with
 * `i: S` is proved when S divides the range; hi otherwise (a wider box is still sound). */
static aff stepped_end(const ir_index *ix, aff lo, aff hi)
{
	if (!ix->step_expr || ix->step < 2 || lo.n || hi.n || hi.c <= lo.c)
		return hi;
	return aff_const(lo.c + ix->step * ((hi.c - 1 - lo.c) / ix->step) + 1);
}

/* Set the box of the enclosing loops and tighten it with the atoms of c;
 * false when the conjunct provably admits no iteration. */
static bool box_build(bcheck *b, const conj *c)
{
	ct_kernel *k = b->k;
	bool ok = true;
	for (int i = 0; i < b->nencl; i++) {
		int x = b->encl[i];
		aff lo, hi;
		if (ir_index_affine(&k->indices[x])) {
			ok = ok && affine_box(b, &k->indices[x], &lo, &hi);
		} else if (!fold(b, k->indices[x].lo, &lo) || !fold(b, k->indices[x].hi, &hi)) {
			ok = false;
		} else {
			hi = stepped_end(&k->indices[x], lo, hi);
		}
		b->lo[x] = lo;
		b->hi[x] = aff_add(b->a, hi, aff_const(-1), &ok);
	}
	if (!ok)
		return true; /* unusable bounds: let the subscript checks fail */
	for (int round = 0; round < BC_ROUNDS; round++) {
		bool changed = false;
		for (int a = 0; a < c->n; a++) {
			aff e = c->e[a];
			for (int t = 0; t < e.n; t++) {
				if (e.t[t].kind != AFF_INDEX)
					continue;
				int x = e.t[t].id;
				int64_t co = e.t[t].coef;
				bool okx = true;
				/* co*x + rest <= 0, so co*x <= -min(rest) = max(-rest) */
				aff rest =
				    aff_sub(b->a, e, aff_sym1(b->a, AFF_INDEX, x, co, &okx), &okx);
				aff m;
				if (!okx || !box_max(b, aff_scale(b->a, rest, -1, &okx), &m) ||
				    !okx)
					continue;
				aff nb;
				if (co > 0) {
					if (!aff_div(b, m, co, false, &nb))
						continue;
					aff d = aff_sub(b->a, nb, b->hi[x], &okx);
					if (okx && prove_le0(d) && !aff_equal(nb, b->hi[x])) {
						b->hi[x] = nb;
						changed = true;
					}
				} else {
					if (co == INT64_MIN)
						continue;
					/* -|co|*x <= m, so x >= ceil(-m / |co|) */
					aff nm = aff_scale(b->a, m, -1, &okx);
					if (!okx || !aff_div(b, nm, -co, true, &nb))
						continue;
					aff d = aff_sub(b->a, b->lo[x], nb, &okx);
					if (okx && prove_le0(d) && !aff_equal(nb, b->lo[x])) {
						b->lo[x] = nb;
						changed = true;
					}
				}
			}
		}
		if (!changed)
			break;
	}
	for (int i = 0; i < b->nencl; i++) {
		int x = b->encl[i];
		bool okx = true;
		/* empty when hi - lo + 1 <= 0 */
		aff w = aff_add(b->a, aff_sub(b->a, b->hi[x], b->lo[x], &okx), aff_const(1), &okx);
		if (okx && prove_le0(w))
			return false;
	}
	for (int a = 0; a < c->n; a++) {
		bool okx = true;
		/* an atom without indices that is provably positive: infeasible */
		if (aff_uses_kind(c->e[a], AFF_INDEX))
			continue;
		aff w = aff_sub(b->a, aff_const(1), c->e[a], &okx);
		if (okx && prove_le0(w))
			return false;
	}
	return true;
}

/* u <= 0 over the box of conjunct c. */
static bool prove_in(bcheck *b, const conj *c, aff u)
{
	aff m;
	if (box_max(b, u, &m) && prove_le0(m))
		return true;
	for (int a = 0; a < c->n; a++) {
		aff e = c->e[a];
		for (int t = 0; t < u.n; t++) {
			if (u.t[t].kind != AFF_INDEX)
				continue;
			int64_t ce = aff_coef(e, AFF_INDEX, u.t[t].id), cu = u.t[t].coef;
			if (ce == 0 || (ce > 0) != (cu > 0) || cu % ce != 0)
				continue;
			/* u = kk*e + v with e <= 0 and kk > 0, so u <= v */
			bool ok = true;
			aff v = aff_sub(b->a, u, aff_scale(b->a, e, cu / ce, &ok), &ok);
			if (ok && box_max(b, v, &m) && prove_le0(m))
				return true;
		}
	}
	return false;
}

/* One access to check: the expression and, per dimension and side, whether
 * some conjunct failed. */
typedef struct acc {
	const ir_expr *e;
	unsigned char bad[IR_MAX_RANK]; /* bit 0: may be negative, bit 1: may exceed */
} acc;

static void collect_acc(bcheck *b, const ir_expr *e, acc *v, int *n, int cap)
{
	if (e->kind == EX_ACCESS) {
		if (*n < cap) {
			v[*n].e = e;
			memset(v[*n].bad, 0, sizeof v[*n].bad);
			(*n)++;
		}
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		collect_acc(b, e->args[i], v, n, cap);
}

static int count_acc(const ir_expr *e)
{
	if (e->kind == EX_ACCESS)
		return 1;
	int n = 0;
	for (int i = 0; i < e->nargs; i++)
		n += count_acc(e->args[i]);
	return n;
}

static void check_stmt_bounds_in(bcheck *b, const ir_node *s, dnf ctx);

/* Check the accesses of statement s under ctx with a scratch arena of its
 * own, so that memory stays bounded by the largest statement. */
static void check_stmt_bounds(bcheck *b, const ir_node *s, dnf ctx)
{
	ct_arena *keep = b->a, tmp;
	ct_arena_init(&tmp, b->k->ctx);
	b->a = &tmp;
	check_stmt_bounds_in(b, s, ctx);
	if (tmp.failed)
		b->failed = true;
	b->a = keep;
	ct_arena_free(&tmp);
}

static void check_stmt_bounds_in(bcheck *b, const ir_node *s, dnf ctx)
{
	ct_kernel *k = b->k;
	int cap = count_acc(s->rhs) + 1;
	acc *v = ct_arena_alloc(b->a, sizeof *v * (size_t)cap);
	if (!v) {
		b->failed = true;
		return;
	}
	int n = 0;
	if (s->kind == ND_STMT)
		collect_acc(b, s->lhs, v, &n, cap);
	collect_acc(b, s->rhs, v, &n, cap);
	for (int ci = 0; ci < ctx.n; ci++) {
		const conj *c = &ctx.c[ci];
		if (!box_build(b, c))
			continue;
		for (int i = 0; i < n; i++) {
			const ir_array *arr = &k->arrays[v[i].e->id];
			for (int d = 0; d < arr->rank; d++) {
				aff sub, ext;
				bool ok =
				    fold(b, v[i].e->sub[d], &sub) && fold(b, arr->ext[d], &ext);
				if (!ok) {
					v[i].bad[d] |= 3;
					continue;
				}
				if (!(v[i].bad[d] & 1)) {
					aff u = aff_scale(b->a, sub, -1, &ok);
					if (!ok || !prove_in(b, c, u))
						v[i].bad[d] |= 1;
				}
				if (!(v[i].bad[d] & 2)) {
					/* sub - ext + 1 <= 0 */
					aff u = aff_add(b->a, aff_sub(b->a, sub, ext, &ok),
					                aff_const(1), &ok);
					if (!ok || !prove_in(b, c, u))
						v[i].bad[d] |= 2;
				}
			}
		}
	}
	for (int i = 0; i < n; i++) {
		const ir_array *arr = &k->arrays[v[i].e->id];
		for (int d = 0; d < arr->rank; d++) {
			if (!v[i].bad[d])
				continue;
			ct_buf sb, eb;
			ct_buf_init(&sb);
			ct_buf_init(&eb);
			lang_aff_print(&sb, k, v[i].e->sub[d]);
			lang_aff_print(&eb, k, arr->ext[d]);
			const char *ss = sb.s ? sb.s : "?", *es = eb.s ? eb.s : "?";
			ir_pos at = v[i].e->sub_expr[d]->pos;
			if (v[i].bad[d] & 1)
				cerr(k, &b->nerr, at,
				     "subscript '%s' of '%s' may be negative (dimension %d)", ss,
				     arr->name, d + 1);
			if (v[i].bad[d] & 2)
				cerr(k, &b->nerr, at,
				     "subscript '%s' of '%s' may exceed the extent %s of dimension "
				     "%d",
				     ss, arr->name, es, d + 1);
			ct_buf_free(&sb);
			ct_buf_free(&eb);
		}
	}
}

static void check_bounds_nodes(bcheck *b, ir_node *const *body, int n, dnf ctx)
{
	for (int i = 0; i < n && !b->failed; i++) {
		const ir_node *s = body[i];
		switch (s->kind) {
		case ND_FOR: {
			int save = b->nencl;
			dnf in = ctx;
			for (int j = 0; j < s->nidx; j++) {
				b->encl[b->nencl++] = s->idx[j];
				if (ir_index_affine(&b->k->indices[s->idx[j]]))
					in = dnf_and(b, in, affine_atoms(b, s->idx[j]));
			}
			check_bounds_nodes(b, s->body, s->nbody, in);
			b->nencl = save;
			break;
		}
		case ND_IF:
			check_bounds_nodes(b, s->body, s->nbody,
			                   dnf_and(b, ctx, dnf_of(b, s->cond, false)));
			check_bounds_nodes(b, s->els, s->nels,
			                   dnf_and(b, ctx, dnf_of(b, s->cond, true)));
			break;
		case ND_LET:
		case ND_STMT: check_stmt_bounds(b, s, ctx); break;
		}
	}
}

static int check_bounds(ct_kernel *k)
{
	ct_arena scratch;
	ct_arena_init(&scratch, k->ctx);
	bcheck b;
	memset(&b, 0, sizeof b);
	b.k = k;
	b.a = &scratch;
	size_t ni = (size_t)k->nindices + 1;
	b.lo = ct_arena_alloc(&scratch, sizeof *b.lo * ni);
	b.hi = ct_arena_alloc(&scratch, sizeof *b.hi * ni);
	b.encl = ct_arena_alloc(&scratch, sizeof *b.encl * ni);
	if (b.lo && b.hi && b.encl)
		check_bounds_nodes(&b, k->body, k->nbody, dnf_true(&b));
	if (b.failed || scratch.failed || !b.lo || !b.hi || !b.encl)
		k->arena.failed = true; /* reported as out of memory by the caller */
	ct_arena_free(&scratch);
	return b.nerr;
}

/* ------------------------------------------------------------ sizes */

enum { PV_OK, PV_UNKNOWN, PV_OVERFLOW };

/* Value of an affine form of params under the current values. */
static int param_value(const ct_kernel *k, aff x, int64_t *v)
{
	*v = x.c;
	bool unknown = false;
	for (int t = 0; t < x.n; t++) {
		if (x.t[t].kind != AFF_PARAM || !k->params[x.t[t].id].has_value) {
			unknown = true;
			continue;
		}
		const ir_param *p = &k->params[x.t[t].id];
		int64_t q;
		if (!ct_mul_ok(x.t[t].coef, p->value, &q) || !ct_add_ok(*v, q, v))
			return PV_OVERFLOW;
	}
	return unknown ? PV_UNKNOWN : PV_OK;
}

/* The loops with affine bounds (outer indices are declared first): every
 * term's value must fit 64 bits over the range of the indices it uses, the
 * range of an index being that of its bounds (ir_index_boxes). Reports
 * overflows on k. */
static bool affine_ranges_ok(ct_kernel *k, int *nerr)
{
	ir_box *b = ct_alloc(k->ctx, sizeof *b * ((size_t)k->nindices + 1));
	if (!b) {
		k->arena.failed = true;
		return false;
	}
	int x = ir_index_boxes(k, b);
	ct_free(k->ctx, b);
	if (x < 0)
		return true;
	cerr(k, nerr, k->indices[x].pos, "the bounds of loop '%s' overflow", k->indices[x].name);
	return false;
}

/* Param i's value for early_proved (INT64_MIN: none). */
static int64_t proved_value(const ct_kernel *k, int i)
{
	return k->params[i].has_value ? k->params[i].value : INT64_MIN;
}

/* Whether the last proof of the early reads was at the params' present values. */
static bool early_proved_now(const ct_kernel *k)
{
	if (!k->early_proved)
		return false;
	for (int i = 0; i < k->nparams; i++)
		if (k->early_proved[i] != proved_value(k, i))
			return false;
	return true;
}

/* Remember that the early reads are proved at the params' present values. */
static void early_proved_set(ct_kernel *k)
{
	if (!k->early_proved)
		k->early_proved = ct_arena_alloc(&k->arena, sizeof *k->early_proved * ((size_t)k->nparams + 1));
	for (int i = 0; k->early_proved && i < k->nparams; i++)
		k->early_proved[i] = proved_value(k, i);
}

/* The output rule (docs/LANGUAGE.md): a read of an output or temp array that no textually earlier
 * statement writes is still fine when every element it reads was written by an earlier instance
 * in the written order (a write later in a loop's body, in an earlier iteration: dep_reads_written,
 * isl). Asked only of such arrays, at the values of the params (a -D override asks again). */
static int check_early_reads(ct_kernel *k)
{
	int nerr = 0;
	dep_info *d = NULL;
	if (early_proved_now(k))
		return 0;
	for (int a = 0; a < k->narrays && k->early_reads; a++) {
		const ir_early_read *er = &k->early_reads[a];
		if (!er->any)
			continue;
		if (!d)
			d = dep_compute_order(k);
		int r = d ? dep_reads_written(d, a) : -1;
		if (r == 1)
			continue;
		ct_ctx_clear_error(k->ctx);
		const ir_array *arr = &k->arrays[a];
		bool out = arr->role == CT_OUTPUT;
		if (er->op != AS_SET)
			cerr(k, &nerr, er->pos, "'%s' reads %s array '%s' before it is written%s",
			     op_name(er->op), out ? "output" : "temp", arr->name,
			     out ? " (declare it inout)" : "");
		else
			cerr(k, &nerr, er->pos, "%s array '%s' is read before it is written%s",
			     out ? "output" : "temp", arr->name, out ? " (declare it inout)" : "");
	}
	bool asked = d != NULL;
	dep_free(d);
	if (asked && nerr == 0)
		early_proved_set(k);
	return nerr;
}

int check_sizes(ct_kernel *k)
{
	int nerr = 0;
	/* derived params follow the params they name, unless overridden */
	for (int i = 0; i < k->nparams; i++) {
		ir_param *p = &k->params[i];
		if (p->def && !p->overridden) {
			int64_t v;
			if (lang_eval_int(k, p->def, true, "a param value", &v))
				p->value = v;
			else
				nerr++;
		}
	}
	/* a runtime param given a value (-D) is a size: the engines refuse a
	 * negative one, so check does too */
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *p = &k->params[i];
		if (p->runtime && p->has_value && p->value < 0)
			cerr(k, &nerr, p->pos, "runtime param '%s' must not be negative (it is %lld)", p->name,
			     (long long)p->value);
	}
	/* loop steps may name params */
	for (int x = 0; x < k->nindices; x++) {
		ir_index *ix = &k->indices[x];
		int64_t v;
		if (!ix->step_expr)
			continue;
		if (!lang_eval_int(k, ix->step_expr, true, "a loop step", &v)) {
			nerr++;
			continue;
		}
		if (v < 1) {
			cerr(k, &nerr, ix->step_expr->pos, "the step of loop '%s' must be at least 1, not %lld",
			     ix->name, (long long)v);
			continue;
		}
		ix->step = v;
	}
	/* split sizes may name params */
	for (int s = 0; s < k->nsched; s++) {
		ir_sched *sc = &k->sched[s];
		if (sc->kind == SC_REORDER)
			continue;
		for (int a = 0; a < sc->n; a++) {
			int64_t v = sc->size[a];
			if (sc->size_expr[a] &&
			    !lang_eval_int(k, sc->size_expr[a], true, "a split size", &v)) {
				nerr++;
				continue;
			}
			if (v < 1) {
				cerr(k, &nerr, sc->size_expr[a] ? sc->size_expr[a]->pos : sc->pos,
				     "split size must be at least 1, not %lld", (long long)v);
				continue;
			}
			sc->size[a] = v;
			k->indices[sc->idx[a]].step = v;
			k->indices[sc->out[a]].window = v;
			k->indices[sc->out[a]].hi = aff_const(v);
		}
	}
	/* extents must be at least 1 and arrays addressable, once sizes are known */
	bool sizes_ok = true;
	for (int i = 0; i < k->narrays; i++) {
		const ir_array *arr = &k->arrays[i];
		int64_t elems = 1, bytes;
		bool known = true, over = false;
		for (int d = 0; d < arr->rank; d++) {
			int64_t v;
			int r = param_value(k, arr->ext[d], &v);
			if (r == PV_UNKNOWN) {
				known = false;
			} else if (r == PV_OVERFLOW) {
				cerr(k, &nerr, arr->ext_pos[d],
				     "extent of dimension %d of '%s' overflows", d + 1, arr->name);
				sizes_ok = known = false;
			} else if (v < 1) {
				cerr(k, &nerr, arr->ext_pos[d],
				     "extent of dimension %d of '%s' is %lld (it must be at least "
				     "1)",
				     d + 1, arr->name, (long long)v);
				sizes_ok = known = false;
			} else if (!ct_mul_ok(elems, v, &elems)) {
				over = true;
			}
		}
		if (known &&
		    (over || !ct_mul_ok(elems, (int64_t)ct_dtype_size(arr->type), &bytes) ||
		     bytes > ((int64_t)1 << 62))) {
			cerr(k, &nerr, arr->pos, "array '%s' is too large (more than 2^62 bytes)",
			     arr->name);
			sizes_ok = false;
		}
	}
	/* loop bounds must be computable */
	if (k->affine_bounds && !affine_ranges_ok(k, &nerr))
		sizes_ok = false;
	for (int x = 0; x < k->nindices; x++) {
		const ir_index *ix = &k->indices[x];
		int64_t lo, hi, n;
		if (ix->kind != IX_LOOP || ir_index_affine(ix))
			continue;
		int rl = param_value(k, ix->lo, &lo), rh = param_value(k, ix->hi, &hi);
		if (rl == PV_OVERFLOW || rh == PV_OVERFLOW ||
		    (rl == PV_OK && rh == PV_OK && !ct_sub_ok(hi, lo, &n))) {
			cerr(k, &nerr, ix->pos, "the bounds of loop '%s' overflow", ix->name);
			sizes_ok = false;
		}
	}
	if (nerr == 0 && sizes_ok)
		nerr += check_bounds(k);
	if (nerr == 0 && sizes_ok)
		nerr += check_early_reads(k);
	return nerr;
}

ct_status lang_recheck(ct_kernel *k)
{
	ct_diag_begin(k->ctx, k->file, k->text, k->text_len);
	int nerr = check_sizes(k);
	k->stale = nerr != 0 || k->arena.failed;
	if (k->arena.failed)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory while checking");
	return nerr ? CT_ERR_INPUT : CT_OK;
}
