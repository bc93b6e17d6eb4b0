/* looptree.c: bound expressions and the loop tree (bands, split chains, tails) of a kernel. */
#include "ir/looptree.h"
#include "ir/layout.h"
#include "ir/order.h"
#include "ir/project.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tails copy whole subtrees; this keeps a schedule with many non-dividing
 * splits from exhausting memory. */
#define LT_MAX_NODES (1 << 22)

/* ------------------------------------------------------------ bound expressions */

static const bx *bx_new(ct_arena *a, bx_kind kind, int64_t v, int id, const bx *x, const bx *y)
{
	bx *r = ct_arena_alloc(a, sizeof *r);
	if (!r)
		return NULL;
	r->kind = kind;
	r->v = v;
	r->id = id;
	r->a = x;
	r->b = y;
	return r;
}

const bx *bx_const(ct_arena *a, int64_t v)
{
	return bx_new(a, BX_CONST, v, 0, NULL, NULL);
}

const bx *bx_param(ct_arena *a, int id)
{
	return bx_new(a, BX_PARAM, 0, id, NULL, NULL);
}

bool bx_is_const(const bx *x, int64_t *v)
{
	if (!x || x->kind != BX_CONST)
		return false;
	if (v)
		*v = x->v;
	return true;
}

bool bx_equal(const bx *x, const bx *y)
{
	if (x == y)
		return true;
	if (!x || !y || x->kind != y->kind)
		return false;
	switch (x->kind) {
	case BX_CONST:
		return x->v == y->v;
	case BX_PARAM:
		return x->id == y->id;
	default:
		return bx_equal(x->a, y->a) && bx_equal(x->b, y->b);
	}
}

/* Floor division and its modulo for any signs; false for b == 0 or overflow. */
static bool floordiv_ok(int64_t a, int64_t b, int64_t *q, int64_t *m)
{
	if (b == 0 || (a == INT64_MIN && b == -1))
		return false;
	int64_t d = a / b, r = a % b;
	if (r != 0 && ((r < 0) != (b < 0))) {
		d--;
		r += b;
	}
	*q = d;
	*m = r;
	return true;
}

/* x as base + c, where base is NULL for a constant; lets sums of
 * constants fold through `N - 1 - 1`. */
static const bx *bx_split_const(const bx *x, int64_t *c)
{
	if (x->kind == BX_CONST) {
		*c = x->v;
		return NULL;
	}
	if (x->kind == BX_ADD && x->b->kind == BX_CONST) {
		*c = x->b->v;
		return x->a;
	}
	if (x->kind == BX_SUB && x->b->kind == BX_CONST && x->b->v != INT64_MIN) {
		*c = -x->b->v;
		return x->a;
	}
	*c = 0;
	return x;
}

/* base + c, written `base - 5` rather than `base + -5`. */
static const bx *bx_offset(ct_arena *a, const bx *base, int64_t c)
{
	if (!base)
		return bx_const(a, c);
	if (c == 0)
		return base;
	if (c < 0 && c != INT64_MIN)
		return bx_new(a, BX_SUB, 0, 0, base, bx_const(a, -c));
	return bx_new(a, BX_ADD, 0, 0, base, bx_const(a, c));
}

static const bx *bx_fold_add(ct_arena *a, const bx *x, const bx *y, bool sub)
{
	int64_t cx, cy, c;
	const bx *bx_ = bx_split_const(x, &cx), *by = bx_split_const(y, &cy);
	bool ok = sub ? ct_sub_ok(cx, cy, &c) : ct_add_ok(cx, cy, &c);
	if (!ok)
		return bx_new(a, sub ? BX_SUB : BX_ADD, 0, 0, x, y);
	if (!by)
		return bx_offset(a, bx_, c);
	if (sub && bx_equal(bx_, by))
		return bx_const(a, c);
	if (!bx_) {
		if (sub)
			return bx_new(a, BX_SUB, 0, 0, bx_const(a, c), by);
		return bx_offset(a, by, c);
	}
	const bx *s = bx_new(a, sub ? BX_SUB : BX_ADD, 0, 0, bx_, by);
	return s ? bx_offset(a, s, c) : NULL;
}

const bx *bx_bin(ct_arena *a, bx_kind kind, const bx *x, const bx *y)
{
	if (!x || !y)
		return NULL;
	int64_t vx = 0, vy = 0, r, m;
	bool cx = bx_is_const(x, &vx), cy = bx_is_const(y, &vy);
	switch (kind) {
	case BX_ADD:
		return bx_fold_add(a, x, y, false);
	case BX_SUB:
		return bx_fold_add(a, x, y, true);
	case BX_MUL:
		if (cx && cy && ct_mul_ok(vx, vy, &r))
			return bx_const(a, r);
		if ((cx && vx == 0) || (cy && vy == 0))
			return bx_const(a, 0);
		if (cx && vx == 1)
			return y;
		if (cy && vy == 1)
			return x;
		break;
	case BX_FLOORDIV:
		if (cx && cy && vy > 0 && floordiv_ok(vx, vy, &r, &m))
			return bx_const(a, r);
		if (cy && vy == 1)
			return x;
		break;
	case BX_MOD:
		if (cx && cy && vy > 0 && floordiv_ok(vx, vy, &r, &m))
			return bx_const(a, m);
		if (cy && vy == 1)
			return bx_const(a, 0);
		break;
	case BX_MIN:
	case BX_MAX:
		if (cx && cy)
			return bx_const(a, (kind == BX_MIN) == (vx < vy) ? vx : vy);
		if (bx_equal(x, y))
			return x;
		break;
	case BX_CONST:
	case BX_PARAM:
		return NULL;
	}
	return bx_new(a, kind, 0, 0, x, y);
}

const bx *bx_from_aff(ct_arena *a, const ct_kernel *k, aff x)
{
	int64_t c = x.c, p;
	const bx *sym = NULL;
	for (int i = 0; i < x.n; i++) {
		const aff_term *t = &x.t[i];
		if (t->kind != AFF_PARAM || t->id < 0 || t->id >= k->nparams)
			return NULL;
		const ir_param *pa = &k->params[t->id];
		if (!pa->runtime) {
			if (!ct_mul_ok(t->coef, pa->value, &p) || !ct_add_ok(c, p, &c))
				return NULL;
			continue;
		}
		int64_t mag = t->coef < 0 ? -t->coef : t->coef;
		if (t->coef == INT64_MIN)
			return NULL;
		const bx *term = bx_bin(a, BX_MUL, bx_param(a, t->id), bx_const(a, mag));
		if (!sym)
			sym = t->coef > 0 ? term : bx_bin(a, BX_SUB, bx_const(a, 0), term);
		else
			sym = bx_bin(a, t->coef > 0 ? BX_ADD : BX_SUB, sym, term);
		if (!sym)
			return NULL;
	}
	return sym ? bx_bin(a, BX_ADD, sym, bx_const(a, c)) : bx_const(a, c);
}

int64_t bx_eval(const bx *x, const int64_t *params, bool *ok)
{
	if (!x) {
		*ok = false;
		return 0;
	}
	if (x->kind == BX_CONST)
		return x->v;
	if (x->kind == BX_PARAM)
		return params[x->id];
	int64_t a = bx_eval(x->a, params, ok), b = bx_eval(x->b, params, ok), r = 0, m = 0;
	bool good = true;
	switch (x->kind) {
	case BX_ADD:
		good = ct_add_ok(a, b, &r);
		break;
	case BX_SUB:
		good = ct_sub_ok(a, b, &r);
		break;
	case BX_MUL:
		good = ct_mul_ok(a, b, &r);
		break;
	case BX_FLOORDIV:
		good = floordiv_ok(a, b, &r, &m);
		break;
	case BX_MOD:
		good = floordiv_ok(a, b, &m, &r);
		break;
	case BX_MIN:
		r = a < b ? a : b;
		break;
	case BX_MAX:
		r = a > b ? a : b;
		break;
	case BX_CONST:
	case BX_PARAM:
		break;
	}
	if (!good)
		*ok = false;
	return r;
}

/* Precedence: 1 additive, 2 multiplicative, 3 atoms and calls. */
static int bx_prec(const bx *x)
{
	switch (x->kind) {
	case BX_ADD:
	case BX_SUB:
		return 1;
	case BX_MUL:
	case BX_FLOORDIV:
	case BX_MOD:
		return 2;
	case BX_CONST:
		return x->v < 0 ? 1 : 3;
	default:
		return 3;
	}
}

static void bx_print_prec(ct_buf *b, const ct_kernel *k, const bx *x, int need)
{
	if (!x) {
		ct_buf_puts(b, "?");
		return;
	}
	bool paren = bx_prec(x) < need;
	if (paren)
		ct_buf_putc(b, '(');
	switch (x->kind) {
	case BX_CONST:
		ct_buf_printf(b, "%lld", (long long)x->v);
		break;
	case BX_PARAM:
		if (x->id >= 0 && x->id < k->nparams)
			ct_buf_puts(b, k->params[x->id].name);
		else
			ct_buf_printf(b, "p%d", x->id);
		break;
	case BX_MIN:
	case BX_MAX:
		ct_buf_puts(b, x->kind == BX_MIN ? "min(" : "max(");
		bx_print_prec(b, k, x->a, 0);
		ct_buf_puts(b, ", ");
		bx_print_prec(b, k, x->b, 0);
		ct_buf_putc(b, ')');
		break;
	default: {
		static const char *const ops[] = {[BX_ADD] = " + ",
		                                  [BX_SUB] = " - ",
		                                  [BX_MUL] = " * ",
		                                  [BX_FLOORDIV] = " / ",
		                                  [BX_MOD] = " % "};
		int p = bx_prec(x);
		bx_print_prec(b, k, x->a, p);
		ct_buf_puts(b, ops[x->kind]);
		bx_print_prec(b, k, x->b, p + 1);
		break;
	}
	}
	if (paren)
		ct_buf_putc(b, ')');
}

/* min/max print as calls and `/`, `%` as C's operators: the tree only
 * divides non-negative values by positive constants, where C's truncation
 * equals floor division. */
void bx_print(ct_buf *b, const ct_kernel *k, const bx *x)
{
	bx_print_prec(b, k, x, 0);
}

/* Whether x >= 0 for every valid param binding (runtime params are sizes,
 * which the interpreter checks to be >= 0; compile-time ones are folded). */
static bool bx_nonneg(const bx *x)
{
	switch (x->kind) {
	case BX_CONST:
		return x->v >= 0;
	case BX_PARAM:
		return true;
	case BX_ADD:
	case BX_MUL:
	case BX_MIN:
		return bx_nonneg(x->a) && bx_nonneg(x->b);
	case BX_MAX:
		return bx_nonneg(x->a) || bx_nonneg(x->b);
	case BX_FLOORDIV:
	case BX_MOD:
		return bx_nonneg(x->a) && x->b->kind == BX_CONST && x->b->v > 0;
	case BX_SUB:
		return false;
	}
	return false;
}

/* ------------------------------------------------------------ loop tree */

typedef struct nlist {
	lt_node **v;
	int n, cap;
} nlist;

typedef struct lb {
	ct_kernel *k;
	ct_looptree *t;
	ct_arena *a;
	bool sched;
	long nnodes;
	/* per index while its band is built: the window [off, off+win) of
	 * values it runs over, and end = off + win as printed (a root's own hi) */
	const bx **off, **win, **end;
	/* the bounds of the band being built when its order needs them projected
	 * (ir/project.h); NULL: every root keeps its own */
	const proj_band *pb;
	ct_status st;
} lb;

static bool lb_fail(lb *b, ct_status st)
{
	if (b->st == CT_OK)
		b->st = st;
	return false;
}

/* Whether root v's loop has affine bounds in the band being built (its own, or projected). */
static bool lb_affine(const lb *b, int v)
{
	return b->k->indices[v].kind == IX_LOOP && proj_root_affine(b->k, b->pb, v);
}

static lt_node *lb_node(lb *b, lt_kind kind, lt_node *parent)
{
	if (++b->nnodes > LT_MAX_NODES) {
		ct_error(b->k->ctx, CT_ERR_LIMIT,
		         "the loop tree needs more than %d nodes (too many tails from non-dividing "
		         "splits)",
		         LT_MAX_NODES);
		lb_fail(b, CT_ERR_LIMIT);
		return NULL;
	}
	lt_node *n = ct_arena_alloc(b->a, sizeof *n);
	if (!n) {
		lb_fail(b, CT_ERR_NOMEM);
		return NULL;
	}
	n->kind = kind;
	n->index = -1;
	n->step = 1;
	n->parent = parent;
	return n;
}

static bool nl_push(lb *b, nlist *l, lt_node *x)
{
	if (!ct_vec_grow(b->k->ctx, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return lb_fail(b, CT_ERR_NOMEM);
	l->v[l->n++] = x;
	return true;
}

/* Move the list into the arena (the heap vector is freed either way). */
static lt_node **nl_finish(lb *b, nlist *l, int *n)
{
	lt_node **r = NULL;
	*n = 0;
	if (l->n > 0 && b->st == CT_OK) {
		r = ct_arena_alloc(b->a, sizeof *r * (size_t)l->n);
		if (r) {
			memcpy(r, l->v, sizeof *r * (size_t)l->n);
			*n = l->n;
		} else {
			lb_fail(b, CT_ERR_NOMEM);
		}
	}
	ct_free(b->k->ctx, l->v);
	l->v = NULL;
	l->n = l->cap = 0;
	return r;
}

static bool build_nodes(lb *b, ir_node *const *body, int n, lt_node *parent, nlist *out);

/* Build kids (or els) of node x from IR nodes. */
static bool build_kids(lb *b, ir_node *const *body, int n, lt_node *x, bool els)
{
	nlist l = {NULL, 0, 0};
	bool ok = build_nodes(b, body, n, x, &l);
	if (els)
		x->els = nl_finish(b, &l, &x->nels);
	else
		x->kids = nl_finish(b, &l, &x->nkids);
	return ok && b->st == CT_OK;
}

typedef struct band {
	int n;
	int *order;           /* loop order, outermost first */
	ir_node *const *body; /* the innermost FOR's body */
	int nbody;
} band;

static bool emit_band(lb *b, const band *bd, int pos, lt_node *parent, nlist *out);

/* x with its compile-time params folded into the constant (as bx_from_aff folds them);
 * false on overflow. */
static bool fold_params(ct_arena *a, const ct_kernel *k, aff x, aff *out)
{
	bool ok = true;
	aff r = aff_const(x.c);
	for (int i = 0; i < x.n && ok; i++) {
		const aff_term *t = &x.t[i];
		int64_t p;
		if (t->kind == AFF_PARAM && t->id >= 0 && t->id < k->nparams && !k->params[t->id].runtime) {
			if (!ct_mul_ok(t->coef, k->params[t->id].value, &p) || !ct_add_ok(r.c, p, &r.c))
				ok = false;
			continue;
		}
		r = aff_add(a, r, aff_sym1(a, t->kind, t->id, t->coef, &ok), &ok);
	}
	*out = r;
	return ok;
}

/* The bounds of affine root v on loop x (its own, or projected in the band's order): the terms
 * over params only folded into lo and hi, the others kept as dlo and dhi. */
static bool affine_bounds(lb *b, lt_node *x, int v)
{
	const ir_index *ix = &b->k->indices[v];
	proj_bounds pbv = proj_root(b->k, b->pb, v);
	ct_arena *a = b->a;
	const bx *lo = NULL, *hi = NULL;
	aff *dl = ct_arena_alloc(a, sizeof *dl * (size_t)pbv.nlo);
	aff *dh = ct_arena_alloc(a, sizeof *dh * (size_t)pbv.nhi);
	if (!dl || !dh)
		return lb_fail(b, CT_ERR_NOMEM);
	for (int side = 0; side < 2; side++) {
		int n = side ? pbv.nhi : pbv.nlo;
		const aff *v2 = side ? pbv.his : pbv.los;
		for (int j = 0; j < n; j++) {
			if (aff_uses_kind(v2[j], AFF_INDEX)) {
				aff f;
				if (!fold_params(a, b->k, v2[j], &f)) {
					ct_error_at(b->k->ctx, CT_ERR_INPUT, b->k->file, ix->pos.line,
					            ix->pos.col, "bounds of '%s' must fit in 64 bits", ix->name);
					return lb_fail(b, CT_ERR_INPUT);
				}
				if (side)
					dh[x->ndhi++] = f;
				else
					dl[x->ndlo++] = f;
				continue;
			}
			const bx *t = bx_from_aff(a, b->k, v2[j]);
			if (!t) {
				ct_error_at(b->k->ctx, CT_ERR_INPUT, b->k->file, ix->pos.line,
				            ix->pos.col, "bounds of '%s' must fit in 64 bits", ix->name);
				return lb_fail(b, CT_ERR_INPUT);
			}
			if (side)
				hi = hi ? bx_bin(a, BX_MIN, hi, t) : t;
			else
				lo = lo ? bx_bin(a, BX_MAX, lo, t) : t;
		}
	}
	x->lo = lo ? lo : bx_const(a, LT_NO_LO);
	x->hi = hi ? hi : bx_const(a, LT_NO_HI);
	x->dlo = dl;
	x->dhi = dh;
	if (!x->lo || !x->hi)
		return lb_fail(b, CT_ERR_NOMEM);
	return true;
}

/* The bounds of y, split off the chain of affine root r (r by step s, then perhaps its split
 * indices): 0 .. min(window, H - (r + c1 + ... + y's parent)) for every upper term H of r (each
 * a loop variable, AFF_LOOP), so the blocks of every loop of the chain end at r's bound (no
 * tail versions of r: the ranges are per iteration). */
static bool split_inner_bounds(lb *b, lt_node *n, int y)
{
	const ct_kernel *k = b->k;
	int r = k->indices[y].root;
	const ir_index *ix = &k->indices[r];
	proj_bounds pbx = proj_root(k, b->pb, r);
	ct_arena *a = b->a;
	aff *dh = ct_arena_alloc(a, sizeof *dh * (size_t)pbx.nhi);
	if (!dh)
		return lb_fail(b, CT_ERR_NOMEM);
	bool ok = true;
	aff above = aff_const(0);
	for (int x = k->indices[y].parent; x >= 0 && ok; x = k->indices[x].parent)
		above = aff_add(a, above, aff_sym1(a, AFF_LOOP, x, 1, &ok), &ok);
	for (int j = 0; j < pbx.nhi && ok; j++) {
		aff f;
		ok = fold_params(a, k, pbx.his[j], &f);
		dh[j] = aff_sub(a, f, above, &ok);
	}
	if (!ok) {
		ct_error_at(k->ctx, CT_ERR_INPUT, k->file, ix->pos.line, ix->pos.col,
		            "bounds of '%s' must fit in 64 bits", ix->name);
		return lb_fail(b, CT_ERR_INPUT);
	}
	n->dhi = dh;
	n->ndhi = pbx.nhi;
	return true;
}

static bool emit_loop(lb *b, const band *bd, int pos, lt_node *parent, nlist *out, int v,
                      const bx *lo, const bx *hi, int64_t step, bool tail)
{
	const ir_index *iv = &b->k->indices[v];
	bool affine = lb_affine(b, v);
	/* an index split off the chain of an affine root (plain splits: check refuses balanced ones) */
	bool inner = iv->kind == IX_SPLIT && iv->root >= 0 && lb_affine(b, iv->root);
	if (!affine && (!lo || !hi))
		return lb_fail(b, CT_ERR_NOMEM);
	lt_node *x = lb_node(b, LT_LOOP, parent);
	if (!x)
		return false;
	x->index = v;
	x->lo = lo;
	x->hi = hi;
	x->step = step;
	x->tail = tail;
	if (affine && !affine_bounds(b, x, v))
		return false;
	if (inner && !split_inner_bounds(b, x, v))
		return false;
	nlist l = {NULL, 0, 0};
	bool ok = emit_band(b, bd, pos + 1, x, &l);
	x->kids = nl_finish(b, &l, &x->nkids);
	return ok && b->st == CT_OK && nl_push(b, out, x);
}

/* A balanced split of v by s (split(.., balanced=true)): the window w =
 * q*s + r is run as nb blocks of s, then ns blocks of s - 1, then a tail of
 * the rest, where ns = (s - r) mod s and nb = q + 1 - ns when r > 0 and ns
 * <= q + 1 (no tail then), else ns = 0 and nb = q (the tail is r, as a
 * plain split). As expressions: r1 = min(r, 1), ok = min(1, max(0, q + r1
 * - ns0 + 1)), ns = ns0 * ok, nb = q + r1 * ok - ns. Loops whose trip count
 * is a constant 0 are left out (the first stays when all are empty). */
static bool emit_balanced(lb *b, const band *bd, int pos, lt_node *parent, nlist *out, int v,
                          int child, int64_t s)
{
	ct_arena *a = b->a;
	const bx *w = b->win[v], *lo = b->off[v], *sb = bx_const(a, s), *s1 = bx_const(a, s - 1);
	const bx *one = bx_const(a, 1), *zero = bx_const(a, 0);
	const bx *q = bx_bin(a, BX_FLOORDIV, w, sb), *r = bx_bin(a, BX_MOD, w, sb);
	const bx *ns0 = bx_bin(a, BX_MOD, bx_bin(a, BX_SUB, sb, r), sb);
	const bx *r1 = bx_bin(a, BX_MIN, r, one);
	const bx *okb = bx_bin(a, BX_MIN, one,
	                       bx_bin(a, BX_MAX, zero,
	                              bx_bin(a, BX_ADD, bx_bin(a, BX_SUB, bx_bin(a, BX_ADD, q, r1), ns0), one)));
	const bx *ns = bx_bin(a, BX_MUL, ns0, okb);
	const bx *nb = bx_bin(a, BX_SUB, bx_bin(a, BX_ADD, q, bx_bin(a, BX_MUL, r1, okb)), ns);
	const bx *e1 = bx_bin(a, BX_ADD, lo, bx_bin(a, BX_MUL, nb, sb));
	const bx *e2 = bx_bin(a, BX_ADD, e1, bx_bin(a, BX_MUL, ns, s1));
	const bx *rest = bx_bin(a, BX_SUB, bx_bin(a, BX_SUB, w, bx_bin(a, BX_MUL, nb, sb)),
	                        bx_bin(a, BX_MUL, ns, s1));
	if (!e2 || !rest || !zero)
		return lb_fail(b, CT_ERR_NOMEM);
	int64_t cnb = 0, cns = 0, crest = 0;
	bool knb = bx_is_const(nb, &cnb), kns = bx_is_const(ns, &cns), krest = bx_is_const(rest, &crest);
	bool want_big = !knb || cnb > 0 || ((kns && cns == 0) && (krest && crest == 0));
	bool want_small = !kns || cns > 0;
	bool want_tail = !krest || crest != 0;
	if (want_big) {
		b->off[child] = zero;
		b->win[child] = b->end[child] = sb;
		if (!emit_loop(b, bd, pos, parent, out, v, lo, e1, s, false))
			return false;
	}
	if (want_small) {
		b->off[child] = zero;
		b->win[child] = b->end[child] = s1;
		if (!emit_loop(b, bd, pos, parent, out, v, e1, e2, s - 1, false))
			return false;
	}
	if (want_tail) {
		b->off[child] = zero;
		b->win[child] = b->end[child] = rest;
		if (!emit_loop(b, bd, pos, parent, out, v, e2, b->end[v], s, true))
			return false;
	}
	return true;
}

/* Emit the loop at band position pos and, inside it, the rest of the band.
 * A split index with a non-dividing step gets a main version (whole
 * windows) and a tail version (the partial window), each with its own copy
 * of everything inside. */
static bool emit_band(lb *b, const band *bd, int pos, lt_node *parent, nlist *out)
{
	if (pos == bd->n)
		return build_nodes(b, bd->body, bd->nbody, parent, out);
	int v = bd->order[pos];
	const ir_index *ix = &b->k->indices[v];
	int child = b->sched ? ix->child : -1;
	if (child < 0) /* a loop written with a step keeps it (check refuses splitting it) */
		return emit_loop(b, bd, pos, parent, out, v, b->off[v], b->end[v],
		                 ix->step_expr ? ix->step : 1, false);
	if (lb_affine(b, v)) {
		/* blocks of step from its lower bound while below its upper one; the inner index's
		 * range ends at the bound (split_inner_bounds) */
		b->off[child] = bx_const(b->a, 0);
		b->win[child] = b->end[child] = bx_const(b->a, ix->step);
		return emit_loop(b, bd, pos, parent, out, v, NULL, NULL, ix->step, false);
	}
	int64_t s = ix->step, wv = 0;
	if (s < 1) {
		ct_error(b->k->ctx, CT_ERR_INPUT, "split of '%s' has step %lld", ix->name,
		         (long long)s);
		return lb_fail(b, CT_ERR_INPUT);
	}
	ct_arena *a = b->a;
	const bx *w = b->win[v], *lo = b->off[v], *sb = bx_const(a, s);
	const bx *rest = bx_bin(a, BX_MOD, w, sb);
	const bx *mhi = bx_bin(a, BX_ADD, lo, bx_bin(a, BX_MUL, bx_bin(a, BX_FLOORDIV, w, sb), sb));
	if (!sb || !rest || !mhi)
		return lb_fail(b, CT_ERR_NOMEM);
	bool wc = bx_is_const(w, &wv);
	if (ix->balanced && s > 1)
		return emit_balanced(b, bd, pos, parent, out, v, child, s);
	/* an empty main loop stays when the whole range is empty, so that the
	 * tree keeps its shape */
	bool want_main = !wc || wv / s > 0 || wv <= 0;
	bool want_tail = !wc || wv % s != 0;
	if (want_main) {
		b->off[child] = bx_const(a, 0);
		b->win[child] = b->end[child] = sb;
		if (!emit_loop(b, bd, pos, parent, out, v, lo, mhi, s, false))
			return false;
	}
	if (want_tail) {
		b->off[child] = bx_const(a, 0);
		b->win[child] = b->end[child] = rest;
		if (!emit_loop(b, bd, pos, parent, out, v, mhi, b->end[v], s, true))
			return false;
	}
	return true;
}

/* Window of root index v: [lo, hi), its width clamped at 0 unless it is
 * provably non-negative (a negative width would make the tail run). */
static bool root_window(lb *b, int v)
{
	ct_kernel *k = b->k;
	const ir_index *ix = &k->indices[v];
	if (lb_affine(b, v))
		return true; /* affine_bounds gives its loop (and emit_band its plain split) */
	/* a rectangular root, or one whose terms are over params only (max of
	 * the lower ones, min of the upper ones) */
	proj_bounds pbv = proj_root(k, b->pb, v);
	const bx *lo = NULL, *hi = NULL;
	bool ok = true;
	for (int s = 0; s < pbv.nlo + pbv.nhi && ok; s++) {
		const bx *t = bx_from_aff(b->a, k, s < pbv.nlo ? pbv.los[s] : pbv.his[s - pbv.nlo]);
		ok = t != NULL;
		if (s < pbv.nlo)
			lo = lo && t ? bx_bin(b->a, BX_MAX, lo, t) : t;
		else
			hi = hi && t ? bx_bin(b->a, BX_MIN, hi, t) : t;
	}
	if (!ok || !lo || !hi) {
		ct_error_at(k->ctx, CT_ERR_INPUT, k->file, ix->pos.line, ix->pos.col,
		            "bounds of '%s' must be affine in params and fit in 64 bits", ix->name);
		return lb_fail(b, CT_ERR_INPUT);
	}
	const bx *w = bx_bin(b->a, BX_SUB, hi, lo);
	if (w && !bx_nonneg(w))
		w = bx_bin(b->a, BX_MAX, w, bx_const(b->a, 0));
	if (!w)
		return lb_fail(b, CT_ERR_NOMEM);
	b->off[v] = lo;
	b->end[v] = hi;
	b->win[v] = w;
	return true;
}

/* A band: the indices of one FOR plus those of directly nested single-child
 * FORs, with their split chains. */
static bool build_band(lb *b, const ir_node *f, lt_node *parent, nlist *out)
{
	ct_kernel *k = b->k;
	int *order = ct_alloc(k->ctx, sizeof *order * ((size_t)k->nindices + 1));
	if (!order)
		return lb_fail(b, CT_ERR_NOMEM);
	band bd = {0, order, NULL, 0};
	const ir_node *g = f;
	while (g->nbody == 1 && g->body[0]->kind == ND_FOR)
		g = g->body[0];
	bd.body = g->body;
	bd.nbody = g->nbody;
	sched_band_order(k, f, b->sched, order, &bd.n);
	bool ok = true;
	/* the band's bounds in its scheduled order (the check refused the orders they cannot
	 * follow); the bands inside it set their own */
	const proj_band *outer = b->pb;
	proj_band pb;
	b->pb = NULL;
	if (b->sched && k->affine_bounds) {
		ct_status st = proj_band_bounds(k, order, bd.n, b->a, &pb);
		if (st == CT_ERR_INPUT) {
			const ir_index *x = &k->indices[pb.bad];
			ct_error_at(k->ctx, st, k->file, x->pos.line, x->pos.col, "%s", pb.err);
		}
		ok = st == CT_OK || lb_fail(b, st);
		if (ok && pb.projected)
			b->pb = &pb;
	}
	for (int p = 0; ok && p < bd.n; p++)
		if (k->indices[order[p]].kind == IX_LOOP)
			ok = root_window(b, order[p]);
	if (ok)
		ok = emit_band(b, &bd, 0, parent, out);
	b->pb = outer;
	ct_free(k->ctx, order);
	return ok;
}

static bool build_nodes(lb *b, ir_node *const *body, int n, lt_node *parent, nlist *out)
{
	for (int i = 0; i < n; i++) {
		const ir_node *s = body[i];
		lt_node *x;
		switch (s->kind) {
		case ND_FOR:
			if (!build_band(b, s, parent, out))
				return false;
			continue;
		case ND_STMT:
		case ND_LET:
			x = lb_node(b, s->kind == ND_STMT ? LT_STMT : LT_LET, parent);
			if (!x)
				return false;
			x->stmt = s;
			break;
		case ND_IF:
			x = lb_node(b, LT_IF, parent);
			if (!x)
				return false;
			x->stmt = s;
			if (!build_kids(b, s->body, s->nbody, x, false) ||
			    !build_kids(b, s->els, s->nels, x, true))
				return false;
			break;
		default:
			ct_error(b->k->ctx, CT_ERR_INPUT, "unknown IR node kind %d", (int)s->kind);
			return lb_fail(b, CT_ERR_INPUT);
		}
		if (!nl_push(b, out, x))
			return false;
	}
	return true;
}

static bool build_chains(lb *b)
{
	ct_kernel *k = b->k;
	ct_looptree *t = b->t;
	int n = k->nindices;
	t->chain = ct_arena_alloc(b->a, sizeof *t->chain * (size_t)(n + 1));
	t->chain_len = ct_arena_alloc(b->a, sizeof *t->chain_len * (size_t)(n + 1));
	if (!t->chain || !t->chain_len)
		return lb_fail(b, CT_ERR_NOMEM);
	for (int i = 0; i < n; i++) {
		if (k->indices[i].kind != IX_LOOP)
			continue;
		int len = 1;
		if (b->sched)
			for (int c = k->indices[i].child; c >= 0 && len <= n;
			     c = k->indices[c].child)
				len++;
		if (len > n) {
			ct_error(k->ctx, CT_ERR_INPUT, "split chain of '%s' loops",
			         k->indices[i].name);
			return lb_fail(b, CT_ERR_INPUT);
		}
		int *c = ct_arena_alloc(b->a, sizeof *c * (size_t)len);
		if (!c)
			return lb_fail(b, CT_ERR_NOMEM);
		c[0] = i;
		for (int j = 1; j < len; j++)
			c[j] = k->indices[c[j - 1]].child;
		t->chain[i] = c;
		t->chain_len[i] = len;
	}
	return true;
}

/* Storage and index tables of a fresh tree: copies of the kernel's. */
static bool init_tables(lb *b)
{
	ct_kernel *k = b->k;
	ct_looptree *t = b->t;
	t->narrays = k->narrays;
	t->arrays = ct_arena_alloc(b->a, sizeof *t->arrays * (size_t)(k->narrays + 1));
	t->ext = ct_arena_alloc(b->a, sizeof *t->ext * (size_t)(k->narrays + 1) * IR_MAX_RANK);
	t->indices = ct_arena_alloc(b->a, sizeof *t->indices * (size_t)(k->nindices + 1));
	if (!t->arrays || !t->ext || !t->indices)
		return lb_fail(b, CT_ERR_NOMEM);
	if (k->narrays)
		memcpy(t->arrays, k->arrays, sizeof *t->arrays * (size_t)k->narrays);
	if (k->nindices)
		memcpy(t->indices, k->indices, sizeof *t->indices * (size_t)k->nindices);
	for (int a = 0; a < k->narrays; a++)
		for (int d = 0; d < k->arrays[a].rank && d < IR_MAX_RANK; d++) {
			t->ext[a * IR_MAX_RANK + d] = bx_from_aff(b->a, k, k->arrays[a].ext[d]);
			if (!t->ext[a * IR_MAX_RANK + d]) {
				ct_error_at(k->ctx, CT_ERR_INPUT, k->file, k->arrays[a].ext_pos[d].line,
				            k->arrays[a].ext_pos[d].col,
				            "extent of array '%s' must be affine in params and fit in 64 bits",
				            k->arrays[a].name);
				return lb_fail(b, CT_ERR_INPUT);
			}
		}
	return true;
}

const lt_node *lt_affine_below(const lt_node *x)
{
	if (lt_affine_loop(x))
		return x;
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = lt_affine_below(i < x->nkids ? x->kids[i] : x->els[i - x->nkids]);
		if (y)
			return y;
	}
	return NULL;
}

int64_t lt_var_coef(const ct_looptree *t, aff s, int x, bool *bad)
{
	int64_t c = 0;
	for (int i = 0; i < s.n; i++) {
		const aff_term *tm = &s.t[i];
		int64_t add = 0;
		if (tm->kind == AFF_LOOP && tm->id == x)
			add = tm->coef;
		else if ((tm->kind == AFF_TRIP || tm->kind == AFF_TRI) && tm->id == x)
			*bad = true;
		else if (tm->kind == AFF_INDEX && tm->id >= 0 && tm->id < t->k->nindices && t->chain &&
		         t->chain[tm->id])
			for (int m = 0; m < t->chain_len[tm->id]; m++)
				if (t->chain[tm->id][m] == x && !ct_add_ok(add, tm->coef, &add))
					*bad = true;
		if (!ct_add_ok(c, add, &c))
			*bad = true;
	}
	return c;
}

bool lt_param_values(const ct_looptree *t, int64_t *pv)
{
	const ct_kernel *k = t->k;
	ir_param_values(k, pv);
	bool ok = true;
	for (int i = 0; i < t->nderived; i++)
		pv[k->nparams + i] = bx_eval(t->derived[i], pv, &ok);
	return ok;
}

ct_status lt_array_layout(const ct_looptree *t, const int64_t *pv, int a, int64_t *stride,
                          int64_t *count)
{
	const ct_kernel *k = t->k;
	if (a < 0 || a >= t->narrays)
		return ct_error(k->ctx, CT_ERR_INPUT, "no storage %d", a);
	const ir_array *ar = &t->arrays[a];
	int64_t ext[IR_MAX_RANK];
	bool ok = true;
	if (ar->rank < 1 || ar->rank > IR_MAX_RANK)
		return ct_error(k->ctx, CT_ERR_INPUT, "array '%s' has rank %d", ar->name, ar->rank);
	for (int d = 0; d < ar->rank; d++) {
		const bx *e = t->ext[a * IR_MAX_RANK + d];
		if (!e)
			return ct_error(k->ctx, CT_ERR_INPUT, "array '%s' has no extent %d", ar->name, d);
		ext[d] = bx_eval(e, pv, &ok);
		if (!ok)
			return ct_error(k->ctx, CT_ERR_LIMIT, "extent of array '%s' overflows",
			                ar->name);
		if (ext[d] < 0)
			return ct_error(k->ctx, CT_ERR_INPUT,
			                "array '%s' has a negative extent (%lld)", ar->name,
			                (long long)ext[d]);
	}
	switch (ir_layout_strides(ar->rank, ar->order, ext, stride, NULL, count)) {
	case IR_LAYOUT_OK:
		return CT_OK;
	case IR_LAYOUT_MALFORMED:
		return ct_error(k->ctx, CT_ERR_INPUT, "array '%s' has a malformed layout", ar->name);
	case IR_LAYOUT_OVERFLOW:
		break;
	}
	return ct_error(k->ctx, CT_ERR_LIMIT, "array '%s' is too large", ar->name);
}

int lt_storage_item(const ct_looptree *t, int s)
{
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		if ((!rg->elided && rg->buffer == s) || rg->temp == s)
			return rg->item;
	}
	return -1;
}

ct_status lt_check_buffers(const ct_looptree *t)
{
	const ct_kernel *k = t->k;
	if (t->narrays <= k->narrays)
		return CT_OK;
	int64_t *pv = ct_alloc(k->ctx, sizeof *pv * (size_t)(k->nparams + t->nderived + 1));
	if (!pv)
		return CT_ERR_NOMEM;
	(void)lt_param_values(t, pv); /* an overflowing derived value: the check refused it */
	int64_t limit = ct_mem_quarter(), total = 0, most = -1;
	int big = -1;
	bool over = false;
	for (int a = k->narrays; a < t->narrays; a++) {
		int64_t stride[IR_MAX_RANK], count = 0, bytes;
		ct_status st = lt_array_layout(t, pv, a, stride, &count);
		if (st == CT_ERR_NOMEM) {
			ct_free(k->ctx, pv);
			return st;
		}
		if (st != CT_OK || !ct_mul_ok(count, (int64_t)ct_dtype_size(t->arrays[a].type), &bytes))
			bytes = INT64_MAX;
		if (bytes > most) {
			most = bytes;
			big = a;
		}
		over = over || !ct_add_ok(total, bytes, &total) || total > limit;
	}
	ct_free(k->ctx, pv);
	if (!over)
		return CT_OK;
	int item = lt_storage_item(t, big);
	ir_pos at = item >= 0 && item < k->nplan ? k->plan[item].pos : k->plan_pos;
	char size[64] = "more than 2^63 bytes";
	if (most < INT64_MAX)
		snprintf(size, sizeof size, "%lld bytes", (long long)most);
	return ct_error_at(k->ctx, CT_ERR_LIMIT, k->file, at.line, at.col,
	                   "the plan's cache buffers need more than %lld bytes (a quarter of this "
	                   "machine's memory); the buffer of '%s' alone needs %s (a tile larger "
	                   "than the data sizes its buffer by the tile)",
	                   (long long)limit, t->arrays[big].name, size);
}

ct_looptree *lt_build_loops(ct_kernel *k, bool with_schedule)
{
	ct_ctx *ctx = k->ctx;
	ct_looptree *t = ct_alloc(ctx, sizeof *t);
	if (!t)
		return NULL;
	ct_arena_init(&t->arena, ctx);
	t->k = k;
	t->scheduled = with_schedule;
	t->nindices = k->nindices;
	lb b = {k, t, &t->arena, with_schedule, 0, NULL, NULL, NULL, NULL, CT_OK};
	size_t ni = (size_t)k->nindices + 1;
	b.off = ct_alloc(ctx, sizeof *b.off * ni);
	b.win = ct_alloc(ctx, sizeof *b.win * ni);
	b.end = ct_alloc(ctx, sizeof *b.end * ni);
	bool ok = b.off && b.win && b.end;
	if (!ok)
		b.st = CT_ERR_NOMEM;
	if (ok)
		ok = init_tables(&b) && build_chains(&b);
	if (ok) {
		nlist l = {NULL, 0, 0};
		ok = build_nodes(&b, k->body, k->nbody, NULL, &l);
		t->roots = nl_finish(&b, &l, &t->nroots);
	}
	ct_free(ctx, b.off);
	ct_free(ctx, b.win);
	ct_free(ctx, b.end);
	if (!ok || b.st != CT_OK || t->arena.failed) {
		if (b.st == CT_OK)
			ct_error(ctx, CT_ERR_NOMEM, "cannot build the loop tree");
		ct_looptree_free(t);
		return NULL;
	}
	return t;
}

void ct_looptree_free(ct_looptree *t)
{
	if (!t)
		return;
	ct_ctx *ctx = t->k->ctx;
	ct_arena_free(&t->arena);
	ct_free(ctx, t);
}
