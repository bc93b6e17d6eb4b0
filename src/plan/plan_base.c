/* plan_base.c: the plan pass's shared pieces: errors, arena growth, new storages, bound expressions, affine parts, tree walking. */
#include "plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ errors and growth */

static bool pp_fail(pp *p, ct_status st)
{
	if (p->st == CT_OK)
		p->st = st;
	p->ok = false;
	return false;
}

bool pp_nomem(pp *p)
{
	if (p->st == CT_OK)
		ct_error(p->ctx, CT_ERR_NOMEM, "out of memory applying the plan");
	return pp_fail(p, CT_ERR_NOMEM);
}

/* An error at the position of the item's argument pos. */
bool pp_err(pp *p, ir_pos pos, const char *fmt, const char *a1, const char *a2)
{
	if (p->st == CT_OK) {
		char msg[512];
		snprintf(msg, sizeof msg, fmt, a1, a2);
		ct_error_at(p->ctx, CT_ERR_INPUT, p->k->file, pos.line, pos.col, "%s", msg);
	}
	return pp_fail(p, CT_ERR_INPUT);
}

/* Grow an arena array from n to n + 1 elements (copying). */
void *pl_arena_grow(pp *p, void *old, int n, size_t elt)
{
	void *v = ct_arena_alloc(p->a, elt * (size_t)(n + 1));
	if (!v) {
		pp_nomem(p);
		return NULL;
	}
	if (n > 0 && old)
		memcpy(v, old, elt * (size_t)n);
	return v;
}

static bool name_taken(const pp *p, const char *s)
{
	const ct_looptree *t = p->t;
	const ct_kernel *k = p->k;
	for (int i = 0; i < t->narrays; i++)
		if (strcmp(t->arrays[i].name, s) == 0)
			return true;
	for (int i = 0; i < t->nindices; i++)
		if (strcmp(t->indices[i].name, s) == 0)
			return true;
	for (int i = 0; i < k->nparams; i++)
		if (strcmp(k->params[i].name, s) == 0)
			return true;
	for (int i = 0; i < k->nlets; i++)
		if (strcmp(k->lets[i].name, s) == 0)
			return true;
	for (int i = 0; i < k->nplan; i++)
		if (k->plan[i].kind == PL_CACHE && k->plan[i].name && strcmp(k->plan[i].name, s) == 0 &&
		    strcmp(s, p->it ? p->it->name : "") != 0)
			return true;
	return false;
}

/* base, or base_2, base_3, ... : a name no storage, index, param or let has. */
static const char *unique_name(pp *p, const char *base)
{
	char buf[300];
	snprintf(buf, sizeof buf, "%s", base);
	for (int n = 2; name_taken(p, buf) && n < 100000; n++)
		snprintf(buf, sizeof buf, "%s_%d", base, n);
	const char *s = ct_arena_strdup(p->a, buf);
	if (!s)
		pp_nomem(p);
	return s;
}

/* A new storage (a buffer) of the given rank and type; its id. */
int pl_new_storage(pp *p, const char *name, ct_dtype type, int rank, const bx *const *ext,
                       const int *order)
{
	ct_looptree *t = p->t;
	const char *nm = unique_name(p, name);
	ir_array *arr = pl_arena_grow(p, t->arrays, t->narrays, sizeof *arr);
	const bx **ex = pl_arena_grow(p, (void *)t->ext, t->narrays, sizeof *ex * IR_MAX_RANK);
	if (!nm || !arr || !ex)
		return -1;
	int id = t->narrays;
	ir_array *b = &arr[id];
	memset(b, 0, sizeof *b);
	b->name = nm;
	b->type = type;
	b->role = CT_TEMP;
	b->rank = rank;
	for (int d = 0; d < rank; d++) {
		b->order[d] = order[d];
		ex[id * IR_MAX_RANK + d] = ext[d];
		b->ext[d] = aff_const(0);
	}
	t->arrays = arr;
	t->ext = ex;
	t->narrays++;
	return id;
}

/* The loop variable of copy dimension d (made on first use; copy nests never nest). */
int pl_copy_index(pp *p, int d)
{
	ct_looptree *t = p->t;
	while (p->ncopy <= d) {
		char base[16];
		snprintf(base, sizeof base, "c%d", p->ncopy);
		const char *nm = unique_name(p, base);
		ir_index *ix = pl_arena_grow(p, t->indices, t->nindices, sizeof *ix);
		int **ch = pl_arena_grow(p, t->chain, t->nindices, sizeof *ch);
		int *cl = pl_arena_grow(p, t->chain_len, t->nindices, sizeof *cl);
		if (!nm || !ix || !ch || !cl)
			return 0;
		ir_index *x = &ix[t->nindices];
		memset(x, 0, sizeof *x);
		x->name = nm;
		x->kind = IX_LOOP;
		x->step = 1;
		x->parent = x->child = -1;
		x->root = t->nindices;
		ch[t->nindices] = NULL;
		cl[t->nindices] = 0;
		t->indices = ix;
		t->chain = ch;
		t->chain_len = cl;
		p->copy_idx[p->ncopy++] = t->nindices++;
	}
	return p->copy_idx[d];
}

/* ------------------------------------------------------------ bounds and affine parts */

const bx *pl_bxc(pp *p, int64_t v)
{
	const bx *r = bx_const(p->a, v);
	if (!r)
		pp_nomem(p);
	return r;
}

const bx *pl_bxb(pp *p, bx_kind kind, const bx *x, const bx *y)
{
	if (!x || !y)
		return NULL;
	if ((kind == BX_MIN || kind == BX_MAX) && bx_equal(x, y))
		return x;
	const bx *r = bx_bin(p->a, kind, x, y);
	if (!r)
		pp_nomem(p);
	return r;
}

/* Last value a loop takes: lo + (hi - lo - 1) / step * step. */
const bx *pl_loop_last(pp *p, const lt_node *l)
{
	if (l->step == 1)
		return pl_bxb(p, BX_SUB, l->hi, pl_bxc(p, 1));
	/* a loop written with a step (`for (t: 0 .. M step Q)`): its range need not be whole
	 * steps, so the last value is lo + floor((hi - lo - 1) / step) * step */
	if (l->index >= 0 && l->index < p->k->nindices && p->k->indices[l->index].step_expr) {
		const bx *span = pl_bxb(p, BX_SUB, pl_bxb(p, BX_SUB, l->hi, l->lo), pl_bxc(p, 1));
		const bx *n = pl_bxb(p, BX_FLOORDIV, span, pl_bxc(p, l->step));
		return pl_bxb(p, BX_ADD, l->lo, pl_bxb(p, BX_MUL, n, pl_bxc(p, l->step)));
	}
	/* a split index: its main version spans whole steps, its tail
	 * version runs at most once (both only matter when they run) */
	if (l->tail)
		return l->lo;
	return pl_bxb(p, BX_SUB, l->hi, pl_bxc(p, l->step));
}

/* An upper bound of x without the floor divisions and remainders of
 * tails: x mod c <= c - 1, so a tail's extent is bounded by its tile. */
const bx *pl_bx_ub(pp *p, const bx *x, bool upper)
{
	if (!x)
		return NULL;
	switch (x->kind) {
	case BX_CONST:
	case BX_PARAM:
		return x;
	case BX_ADD:
		return pl_bxb(p, BX_ADD, pl_bx_ub(p, x->a, upper), pl_bx_ub(p, x->b, upper));
	case BX_SUB:
		return pl_bxb(p, BX_SUB, pl_bx_ub(p, x->a, upper), pl_bx_ub(p, x->b, !upper));
	case BX_MOD: {
		int64_t c;
		if (bx_is_const(x->b, &c) && c > 0)
			return pl_bxc(p, upper ? c - 1 : 0);
		return x;
	}
	case BX_MIN:
	case BX_MAX: {
		int64_t v;
		const bx *ua = pl_bx_ub(p, x->a, upper), *ub = pl_bx_ub(p, x->b, upper);
		/* min(a, c) <= c: a constant bound is the useful one */
		if (upper && x->kind == BX_MIN && bx_is_const(ub, &v))
			return ub;
		if (upper && x->kind == BX_MIN && bx_is_const(ua, &v))
			return ua;
		return pl_bxb(p, x->kind, ua, ub);
	}
	default:
		return x;
	}
}

/* An affine expression for a bound: sums, differences and constant
 * multiples of params stay affine; anything else becomes a derived value. */
aff pl_bx_aff(pp *p, const bx *x)
{
	bool ok = true;
	aff r = aff_const(0);
	int64_t c;
	if (!x) {
		p->ok = false;
		return r;
	}
	if (bx_is_const(x, &c))
		return aff_const(c);
	if (x->kind == BX_PARAM)
		r = aff_sym1(p->a, AFF_PARAM, x->id, 1, &ok);
	else if (x->kind == BX_ADD || x->kind == BX_SUB)
		r = x->kind == BX_ADD ? aff_add(p->a, pl_bx_aff(p, x->a), pl_bx_aff(p, x->b), &ok)
		                      : aff_sub(p->a, pl_bx_aff(p, x->a), pl_bx_aff(p, x->b), &ok);
	else if (x->kind == BX_MUL && bx_is_const(x->b, &c))
		r = aff_scale(p->a, pl_bx_aff(p, x->a), c, &ok);
	else if (x->kind == BX_MUL && bx_is_const(x->a, &c))
		r = aff_scale(p->a, pl_bx_aff(p, x->b), c, &ok);
	else {
		ct_looptree *t = p->t;
		int j = 0;
		while (j < t->nderived && !bx_equal(t->derived[j], x))
			j++;
		if (j == t->nderived) {
			const bx **d = pl_arena_grow(p, (void *)t->derived, t->nderived, sizeof *d);
			if (!d)
				return r;
			d[t->nderived] = x;
			t->derived = d;
			t->nderived++;
		}
		r = aff_sym1(p->a, AFF_PARAM, p->k->nparams + j, 1, &ok);
	}
	if (!ok)
		pp_fail(p, CT_ERR_LIMIT);
	return r;
}

/* x over loop variables: each original index becomes the sum of its chain. */
aff pl_to_loop(pp *p, aff x)
{
	const ct_looptree *t = p->t;
	bool ok = true;
	aff r = aff_const(x.c);
	for (int i = 0; i < x.n; i++) {
		const aff_term *tm = &x.t[i];
		if (tm->kind == AFF_INDEX && tm->id >= 0 && tm->id < t->nindices && t->chain &&
		    t->chain[tm->id]) {
			for (int j = 0; j < t->chain_len[tm->id]; j++)
				r = aff_add(p->a, r, aff_sym1(p->a, AFF_LOOP, t->chain[tm->id][j], tm->coef, &ok),
				            &ok);
		} else if (tm->kind == AFF_PARAM && tm->id >= 0 && tm->id < p->k->nparams &&
		           !p->k->params[tm->id].runtime) {
			int64_t v;
			ok = ok && ct_mul_ok(tm->coef, p->k->params[tm->id].value, &v) && ct_add_ok(r.c, v, &r.c);
		} else {
			int kind = tm->kind == AFF_INDEX ? AFF_LOOP : tm->kind;
			r = aff_add(p->a, r, aff_sym1(p->a, kind, tm->id, tm->coef, &ok), &ok);
		}
	}
	if (!ok)
		pp_fail(p, CT_ERR_LIMIT);
	return r;
}

aff pl_aff_plus(pp *p, aff x, aff y, int64_t k)
{
	bool ok = true;
	aff r = aff_add(p->a, x, aff_scale(p->a, y, k, &ok), &ok);
	if (!ok)
		pp_fail(p, CT_ERR_LIMIT);
	return r;
}

aff pl_aff_var(pp *p, int kind, int id, int64_t coef)
{
	bool ok = true;
	aff r = aff_sym1(p->a, kind, id, coef, &ok);
	if (!ok)
		pp_nomem(p);
	return r;
}

/* ------------------------------------------------------------ tree walking */

lt_node **pl_kid_slot(ct_looptree *t, lt_node *x)
{
	lt_node *par = x->parent;
	lt_node **v = par ? par->kids : t->roots;
	int n = par ? par->nkids : t->nroots;
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return &v[i];
	if (par)
		for (int i = 0; i < par->nels; i++)
			if (par->els[i] == x)
				return &par->els[i];
	return NULL;
}

lt_node *pl_new_node(pp *p, lt_kind kind, lt_node *parent)
{
	lt_node *n = ct_arena_alloc(p->a, sizeof *n);
	if (!n) {
		pp_nomem(p);
		return NULL;
	}
	n->kind = kind;
	n->index = -1;
	n->step = 1;
	n->cache = -1;
	n->parent = parent;
	return n;
}

bool pl_set_kids(pp *p, lt_node *x, lt_node *const *v, int n)
{
	x->kids = NULL;
	x->nkids = 0;
	if (n <= 0)
		return true;
	x->kids = ct_arena_alloc(p->a, sizeof *x->kids * (size_t)n);
	if (!x->kids)
		return pp_nomem(p);
	for (int i = 0; i < n; i++) {
		x->kids[i] = v[i];
		v[i]->parent = x;
	}
	x->nkids = n;
	return true;
}

bool pl_expr_uses(const pp *p, const ir_expr *e)
{
	if (!e)
		return false;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id])
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (pl_expr_uses(p, e->args[i]))
			return true;
	return false;
}

bool pl_is_copy(const lt_node *x)
{
	return x->stmt && x->stmt->kind == ND_STMT && x->stmt->stmt_id == 0;
}

/* Whether node x (not a cache copy) accesses the source itself. */
bool pl_node_uses(const pp *p, const lt_node *x)
{
	if (!x->stmt || pl_is_copy(x))
		return false;
	const ir_node *s = x->stmt;
	switch (x->kind) {
	case LT_STMT:
		return pl_expr_uses(p, s->rhs) || pl_expr_uses(p, s->lhs);
	case LT_LET:
		return pl_expr_uses(p, s->rhs);
	case LT_IF:
		return pl_expr_uses(p, s->cond);
	default:
		return false;
	}
}

bool pl_subtree_uses(const pp *p, const lt_node *x)
{
	if (pl_node_uses(p, x))
		return true;
	for (int i = 0; i < x->nkids; i++)
		if (pl_subtree_uses(p, x->kids[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (pl_subtree_uses(p, x->els[i]))
			return true;
	return false;
}

/* Whether a statement under x (copies aside) writes the cached array. */
bool pl_subtree_writes(const pp *p, const lt_node *x)
{
	if (x->kind == LT_STMT && x->stmt && !pl_is_copy(x) && pl_expr_uses(p, x->stmt->lhs))
		return true;
	for (int i = 0; i < x->nkids; i++)
		if (pl_subtree_writes(p, x->kids[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (pl_subtree_writes(p, x->els[i]))
			return true;
	return false;
}

/* Inside a region of the source cache (hierarchical caches only). */
bool pl_inside_parent(const pp *p, const lt_node *x)
{
	if (p->parent_item < 0)
		return true;
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_CACHE && y->cache >= 0 && y->cache < p->t->nregions &&
		    p->t->regions[y->cache].item == p->parent_item)
			return true;
	return false;
}

int pl_order_pos(const pp *p, int index)
{
	for (int i = 0; i < p->order_len; i++)
		if (p->order[i] == index)
			return i;
	return -1;
}
