/* plan.c: the plan pass: cache regions, buffers, copy loops and access rewriting (Accera's plan.cache). */
#include "ir/layout.h"
#include "ir/looptree.h"
#include "ir/order.h"

#include <stdio.h>
#include <string.h>

/*
 * How a cache becomes loops. For each `cache(...)` item, in plan order:
 *   1. resolve its position against the loop order around the deepest use
 *      of its source (index=, level=, or the max_elements= walk);
 *   2. the sites are the loop nodes at that position whose subtree uses the
 *      source (main and tail versions are separate sites);
 *   3. each site's active block is the box of every subscript of the source
 *      over the site's iterations: per dimension an affine part in the
 *      enclosing loop variables plus [lo, hi] over the loops inside;
 *   4. hoisting moves a site out over loops that leave the block unchanged;
 *   5. the accesses decide prologue and epilogue; the thrifty test may
 *      elide the copy; otherwise a buffer is made, accesses inside are
 *      rewritten to it and copy loops are placed around the site (at the
 *      trigger for multicaches; peeled around the enclosing loop for
 *      double buffering).
 * Everything it adds is ordinary loop-tree material (loops, statements,
 * guard ifs), so the interpreter, the trace, the simulator and the C
 * backend run caches without knowing about them.
 */

#define PP_MAX_WRITES 64

/* Where a cache buffer's elements lie in the root array: buffer element
 * (slots..., u) is root element off + u for the region at site node
 * (a cache of a cache guards its copies with the root array's extents). */
typedef struct bufsite {
	int storage, root, nslot;
	const struct lt_node *node;
	aff off[IR_MAX_RANK];
} bufsite;

/* A double buffer to apply once every cache is placed. */
typedef struct pending {
	int region, npro, item;
	struct lt_node *node;
} pending;

typedef struct pp {
	ct_looptree *t;
	ct_kernel *k;
	ct_arena *a;
	ct_ctx *ctx;
	bool ok;               /* false after an allocation failure or overflow */
	ct_status st;          /* first error */
	int copy_idx[IR_MAX_RANK];
	int ncopy;
	/* the item being applied */
	int item;
	const ir_plan_item *it;
	bool *is_src;          /* per storage: counts as the cache's source */
	int nis_src;
	int parent_item;       /* hierarchical: the source cache item, else -1 */
	int src_store;         /* a storage of the source (for types and rank) */
	pending *db;           /* double buffers to apply at the end */
	int ndb;
	bufsite *bs;           /* every buffer's sites, in the order made */
	int nbs;
	int order_len;         /* the loop order L around the deepest use */
	int order[IR_MAX_DEPTH * 4];
} pp;

/* ------------------------------------------------------------ errors and growth */

static bool pp_fail(pp *p, ct_status st)
{
	if (p->st == CT_OK)
		p->st = st;
	p->ok = false;
	return false;
}

static bool pp_nomem(pp *p)
{
	if (p->st == CT_OK)
		ct_error(p->ctx, CT_ERR_NOMEM, "out of memory applying the plan");
	return pp_fail(p, CT_ERR_NOMEM);
}

/* An error at the position of the item's argument pos. */
static bool pp_err(pp *p, ir_pos pos, const char *fmt, const char *a1, const char *a2)
{
	if (p->st == CT_OK) {
		char msg[512];
		snprintf(msg, sizeof msg, fmt, a1, a2);
		ct_error_at(p->ctx, CT_ERR_INPUT, p->k->file, pos.line, pos.col, "%s", msg);
	}
	return pp_fail(p, CT_ERR_INPUT);
}

/* Grow an arena array from n to n + 1 elements (copying). */
static void *arena_grow(pp *p, void *old, int n, size_t elt)
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
static int new_storage(pp *p, const char *name, ct_dtype type, int rank, const bx *const *ext,
                       const int *order)
{
	ct_looptree *t = p->t;
	const char *nm = unique_name(p, name);
	ir_array *arr = arena_grow(p, t->arrays, t->narrays, sizeof *arr);
	const bx **ex = arena_grow(p, (void *)t->ext, t->narrays, sizeof *ex * IR_MAX_RANK);
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
static int copy_index(pp *p, int d)
{
	ct_looptree *t = p->t;
	while (p->ncopy <= d) {
		char base[16];
		snprintf(base, sizeof base, "c%d", p->ncopy);
		const char *nm = unique_name(p, base);
		ir_index *ix = arena_grow(p, t->indices, t->nindices, sizeof *ix);
		int **ch = arena_grow(p, t->chain, t->nindices, sizeof *ch);
		int *cl = arena_grow(p, t->chain_len, t->nindices, sizeof *cl);
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

static const bx *bxc(pp *p, int64_t v)
{
	const bx *r = bx_const(p->a, v);
	if (!r)
		pp_nomem(p);
	return r;
}

static const bx *bxb(pp *p, bx_kind kind, const bx *x, const bx *y)
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
static const bx *loop_last(pp *p, const lt_node *l)
{
	if (l->step == 1)
		return bxb(p, BX_SUB, l->hi, bxc(p, 1));
	/* a split index: its main version spans whole steps, its tail
	 * version runs at most once (both only matter when they run) */
	if (l->tail)
		return l->lo;
	return bxb(p, BX_SUB, l->hi, bxc(p, l->step));
	const bx *span = bxb(p, BX_SUB, bxb(p, BX_SUB, l->hi, l->lo), bxc(p, 1));
	const bx *n = bxb(p, BX_FLOORDIV, span, bxc(p, l->step));
	return bxb(p, BX_ADD, l->lo, bxb(p, BX_MUL, n, bxc(p, l->step)));
}

/* An upper bound of x without the floor divisions and remainders of
 * tails: x mod c <= c - 1, so a tail's extent is bounded by its tile. */
static const bx *bx_ub(pp *p, const bx *x, bool upper)
{
	if (!x)
		return NULL;
	switch (x->kind) {
	case BX_CONST:
	case BX_PARAM:
		return x;
	case BX_ADD:
		return bxb(p, BX_ADD, bx_ub(p, x->a, upper), bx_ub(p, x->b, upper));
	case BX_SUB:
		return bxb(p, BX_SUB, bx_ub(p, x->a, upper), bx_ub(p, x->b, !upper));
	case BX_MOD: {
		int64_t c;
		if (bx_is_const(x->b, &c) && c > 0)
			return bxc(p, upper ? c - 1 : 0);
		return x;
	}
	case BX_MIN:
	case BX_MAX: {
		int64_t v;
		const bx *ua = bx_ub(p, x->a, upper), *ub = bx_ub(p, x->b, upper);
		/* min(a, c) <= c: a constant bound is the useful one */
		if (upper && x->kind == BX_MIN && bx_is_const(ub, &v))
			return ub;
		if (upper && x->kind == BX_MIN && bx_is_const(ua, &v))
			return ua;
		return bxb(p, x->kind, ua, ub);
	}
	default:
		return x;
	}
}

/* An affine expression for a bound: sums, differences and constant
 * multiples of params stay affine; anything else becomes a derived value. */
static aff bx_aff(pp *p, const bx *x)
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
		r = x->kind == BX_ADD ? aff_add(p->a, bx_aff(p, x->a), bx_aff(p, x->b), &ok)
		                      : aff_sub(p->a, bx_aff(p, x->a), bx_aff(p, x->b), &ok);
	else if (x->kind == BX_MUL && bx_is_const(x->b, &c))
		r = aff_scale(p->a, bx_aff(p, x->a), c, &ok);
	else if (x->kind == BX_MUL && bx_is_const(x->a, &c))
		r = aff_scale(p->a, bx_aff(p, x->b), c, &ok);
	else {
		ct_looptree *t = p->t;
		int j = 0;
		while (j < t->nderived && !bx_equal(t->derived[j], x))
			j++;
		if (j == t->nderived) {
			const bx **d = arena_grow(p, (void *)t->derived, t->nderived, sizeof *d);
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
static aff to_loop(pp *p, aff x)
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

static aff aff_plus(pp *p, aff x, aff y, int64_t k)
{
	bool ok = true;
	aff r = aff_add(p->a, x, aff_scale(p->a, y, k, &ok), &ok);
	if (!ok)
		pp_fail(p, CT_ERR_LIMIT);
	return r;
}

static aff aff_var(pp *p, int kind, int id, int64_t coef)
{
	bool ok = true;
	aff r = aff_sym1(p->a, kind, id, coef, &ok);
	if (!ok)
		pp_nomem(p);
	return r;
}

/* ------------------------------------------------------------ tree walking */

static lt_node **kid_slot(ct_looptree *t, lt_node *x)
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

static lt_node *new_node(pp *p, lt_kind kind, lt_node *parent)
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

static bool set_kids(pp *p, lt_node *x, lt_node *const *v, int n)
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

static bool expr_uses(const pp *p, const ir_expr *e)
{
	if (!e)
		return false;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id])
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_uses(p, e->args[i]))
			return true;
	return false;
}

static bool is_copy(const lt_node *x)
{
	return x->stmt && x->stmt->kind == ND_STMT && x->stmt->stmt_id == 0;
}

/* Whether node x (not a cache copy) accesses the source itself. */
static bool node_uses(const pp *p, const lt_node *x)
{
	if (!x->stmt || is_copy(x))
		return false;
	const ir_node *s = x->stmt;
	switch (x->kind) {
	case LT_STMT:
		return expr_uses(p, s->rhs) || expr_uses(p, s->lhs);
	case LT_LET:
		return expr_uses(p, s->rhs);
	case LT_IF:
		return expr_uses(p, s->cond);
	default:
		return false;
	}
}

static bool subtree_uses(const pp *p, const lt_node *x)
{
	if (node_uses(p, x))
		return true;
	for (int i = 0; i < x->nkids; i++)
		if (subtree_uses(p, x->kids[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (subtree_uses(p, x->els[i]))
			return true;
	return false;
}

/* Whether a statement under x (copies aside) writes the cached array. */
static bool subtree_writes(const pp *p, const lt_node *x)
{
	if (x->kind == LT_STMT && x->stmt && !is_copy(x) && expr_uses(p, x->stmt->lhs))
		return true;
	for (int i = 0; i < x->nkids; i++)
		if (subtree_writes(p, x->kids[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (subtree_writes(p, x->els[i]))
			return true;
	return false;
}

/* Inside a region of the source cache (hierarchical caches only). */
static bool inside_parent(const pp *p, const lt_node *x)
{
	if (p->parent_item < 0)
		return true;
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_CACHE && y->cache >= 0 && y->cache < p->t->nregions &&
		    p->t->regions[y->cache].item == p->parent_item)
			return true;
	return false;
}

static int order_pos(const pp *p, int index)
{
	for (int i = 0; i < p->order_len; i++)
		if (p->order[i] == index)
			return i;
	return -1;
}

/* ------------------------------------------------------------ active blocks */

typedef struct wr {
	const bx *lo[IR_MAX_RANK], *hi[IR_MAX_RANK];
	bool dense;
} wr;

typedef struct blk {
	int rank;
	bool any, mismatch;
	aff outer[IR_MAX_RANK];
	const bx *lo[IR_MAX_RANK], *hi[IR_MAX_RANK];
	bool read, accum, setw, inner_if, guarded;
	int nw;
	wr w[PP_MAX_WRITES];
	bool too_many_writes;
} blk;

typedef struct walkst {
	const lt_node *in[IR_MAX_DEPTH * 4]; /* loops inside the site, outermost first */
	int nin;
	bool under_if;
} walkst;

static const lt_node *inner_loop(const walkst *w, int index)
{
	for (int i = w->nin - 1; i >= 0; i--)
		if (w->in[i]->index == index)
			return w->in[i];
	return NULL;
}

/* Whether the inner terms of one subscript dimension (var, coef > 0)
 * sweep a range without gaps: sorted by step, each step is at most the
 * span of the smaller ones plus one. */
static bool dense_terms(pp *p, const walkst *w, const aff *x, bool *used)
{
	int64_t span = 0;
	bool taken[64] = {false};
	int n = 0;
	for (int i = 0; i < x->n; i++)
		if ((x->t[i].kind == AFF_LOOP || x->t[i].kind == AFF_TRIP) && inner_loop(w, x->t[i].id))
			n++;
	if (x->n > 64) /* taken[] is per term */
		return false;
	for (int round = 0; round < n; round++) {
		int best = -1;
		int64_t best_step = 0, best_span = 0;
		for (int i = 0; i < x->n; i++) {
			const aff_term *tm = &x->t[i];
			const lt_node *l = (tm->kind == AFF_LOOP || tm->kind == AFF_TRIP) ? inner_loop(w, tm->id) : NULL;
			if (!l || taken[i])
				continue;
			int64_t lo, last, st, sp;
			if (tm->coef <= 0 || !bx_is_const(l->lo, &lo) || !bx_is_const(loop_last(p, l), &last))
				return false;
			st = tm->coef;
			if ((tm->kind != AFF_TRIP && !ct_mul_ok(tm->coef, l->step, &st)) || !ct_sub_ok(last, lo, &sp) ||
			    !ct_mul_ok(tm->coef, tm->kind == AFF_TRIP ? sp / l->step : sp, &sp))
				return false;
			if (best < 0 || st < best_step) {
				best = i;
				best_step = st;
				best_span = sp;
			}
		}
		if (best < 0 || best_step > span + 1)
			return false;
		taken[best] = true;
		if (!ct_add_ok(span, best_span, &span))
			return false;
		int v = x->t[best].id;
		for (int j = 0; j < w->nin; j++)
			if (w->in[j]->index == v) {
				if (used[j])
					return false;
				used[j] = true;
			}
	}
	return true;
}

/* Fold one access (subscripts sub[]) into the block. */
static void blk_access(pp *p, blk *b, const walkst *w, const aff *sub, int rank, bool is_write)
{
	if (!b->any) {
		b->rank = rank;
	} else if (b->rank != rank) {
		b->mismatch = true;
		return;
	}
	wr cur;
	memset(&cur, 0, sizeof cur);
	bool used[IR_MAX_DEPTH * 4] = {false};
	cur.dense = is_write && !w->under_if;
	for (int d = 0; d < rank && p->ok; d++) {
		aff x = to_loop(p, sub[d]);
		/* the constant joins the range: A[x-1] and A[x+1] move alike */
		aff outer = aff_const(0);
		const bx *lo = bxc(p, x.c), *hi = bxc(p, x.c);
		for (int i = 0; i < x.n; i++) {
			const aff_term *tm = &x.t[i];
			const lt_node *l = (tm->kind == AFF_LOOP || tm->kind == AFF_TRIP) ? inner_loop(w, tm->id) : NULL;
			if (!l) {
				outer = aff_plus(p, outer, aff_var(p, tm->kind, tm->id, 1), tm->coef);
				continue;
			}
			const bx *a = l->lo, *z = loop_last(p, l);
			if (tm->kind == AFF_TRIP) {
				a = bxb(p, BX_FLOORDIV, a, bxc(p, l->step));
				z = bxb(p, BX_FLOORDIV, z, bxc(p, l->step));
			}
			const bx *ca = bxb(p, BX_MUL, a, bxc(p, tm->coef)), *cz = bxb(p, BX_MUL, z, bxc(p, tm->coef));
			lo = bxb(p, BX_ADD, lo, tm->coef > 0 ? ca : cz);
			hi = bxb(p, BX_ADD, hi, tm->coef > 0 ? cz : ca);
		}
		if (cur.dense)
			cur.dense = dense_terms(p, w, &x, used);
		cur.lo[d] = lo;
		cur.hi[d] = hi;
		if (!b->any) {
			b->outer[d] = outer;
			b->lo[d] = lo;
			b->hi[d] = hi;
		} else {
			if (!aff_equal(b->outer[d], outer))
				b->mismatch = true;
			b->lo[d] = bxb(p, BX_MIN, b->lo[d], lo);
			b->hi[d] = bxb(p, BX_MAX, b->hi[d], hi);
		}
	}
	b->any = true;
	if (w->under_if)
		b->inner_if = true;
	if (is_write) {
		if (b->nw < PP_MAX_WRITES)
			b->w[b->nw++] = cur;
		else
			b->too_many_writes = true;
	}
}

static void blk_expr(pp *p, blk *b, const walkst *w, const ir_expr *e)
{
	if (!e || !p->ok)
		return;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id]) {
		b->read = true;
		blk_access(p, b, w, e->sub, p->t->arrays[e->id].rank, false);
	}
	for (int i = 0; i < e->nargs; i++)
		blk_expr(p, b, w, e->args[i]);
}

static void blk_walk(pp *p, blk *b, walkst *w, const lt_node *x)
{
	if (!p->ok)
		return;
	bool pushed = false, was_if = w->under_if;
	switch (x->kind) {
	case LT_LOOP:
		if (w->nin == (int)(sizeof w->in / sizeof w->in[0])) {
			pp_err(p, p->it->pos, "cache '%s': more than 256 loops nested inside it%s", p->it->name, "");
			return;
		}
		w->in[w->nin++] = x;
		pushed = true;
		break;
	case LT_STMT:
		if (!is_copy(x) && x->stmt) {
			const ir_node *s = x->stmt;
			blk_expr(p, b, w, s->rhs);
			const ir_expr *l = s->lhs;
			if (l && l->id >= 0 && l->id < p->nis_src && p->is_src[l->id]) {
				if (s->op == AS_ADD || s->op == AS_SUB)
					b->accum = true;
				else
					b->setw = true;
				if (s->op == AS_MUL)
					b->read = true;
				blk_access(p, b, w, l->sub, p->t->arrays[l->id].rank, true);
			}
		}
		break;
	case LT_LET:
		if (x->stmt)
			blk_expr(p, b, w, x->stmt->rhs);
		break;
	case LT_IF:
		if (x->stmt)
			blk_expr(p, b, w, x->stmt->cond);
		w->under_if = true;
		break;
	case LT_CACHE:
		break;
	}
	for (int i = 0; i < x->nkids; i++)
		blk_walk(p, b, w, x->kids[i]);
	for (int i = 0; i < x->nels; i++)
		blk_walk(p, b, w, x->els[i]);
	w->under_if = was_if;
	if (pushed)
		w->nin--;
}

/* The active block of the source over site x (x's own loop is inside). */
static void block_of(pp *p, const lt_node *x, blk *b)
{
	memset(b, 0, sizeof *b);
	walkst w;
	memset(&w, 0, sizeof w);
	blk_walk(p, b, &w, x);
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_IF)
			b->guarded = true;
	if (b->inner_if)
		b->guarded = true;
}

static const bx *blk_extent(pp *p, const blk *b, int d)
{
	return bxb(p, BX_ADD, bxb(p, BX_SUB, b->hi[d], b->lo[d]), bxc(p, 1));
}

static bool blk_equal(pp *p, const blk *x, const blk *y)
{
	if (!x->any || !y->any || x->mismatch || y->mismatch || x->rank != y->rank)
		return false;
	for (int d = 0; d < x->rank; d++)
		if (!aff_equal(x->outer[d], y->outer[d]) || !bx_equal(blk_extent(p, x, d), blk_extent(p, y, d)) ||
		    !bx_equal(x->lo[d], y->lo[d]))
			return false;
	return true;
}

/* Element count of a block when it is a constant; -1 otherwise. */
static int64_t blk_volume(pp *p, const blk *b)
{
	int64_t n = 1, e;
	for (int d = 0; d < b->rank; d++) {
		if (!bx_is_const(blk_extent(p, b, d), &e))
			return -1;
		if (e < 0)
			e = 0;
		if (!ct_mul_ok(n, e, &n))
			return -1;
	}
	return n;
}

/* Whether a loop variable (either term kind) occurs in x. */
static bool aff_uses_loop(aff x, int index)
{
	for (int i = 0; i < x.n; i++)
		if ((x.t[i].kind == AFF_LOOP || x.t[i].kind == AFF_TRIP) && x.t[i].id == index)
			return true;
	return false;
}

static bool blk_uses_loop(const blk *b, int index)
{
	for (int d = 0; d < b->rank; d++)
		if (aff_uses_loop(b->outer[d], index))
			return true;
	return false;
}

/* ------------------------------------------------------------ expressions */

static ir_expr *new_expr(pp *p, ir_expr_kind kind, ct_dtype type)
{
	ir_expr *e = ct_arena_alloc(p->a, sizeof *e);
	if (!e) {
		pp_nomem(p);
		return NULL;
	}
	e->kind = kind;
	e->type = type;
	e->height = 1;
	return e;
}

/* storage[sub[0..rank)] */
static ir_expr *access_expr(pp *p, int storage, const aff *sub, int rank)
{
	ir_expr *e = new_expr(p, EX_ACCESS, p->t->arrays[storage].type);
	aff *s = ct_arena_alloc(p->a, sizeof *s * (size_t)(rank + 1));
	if (!e || !s)
		return e ? (pp_nomem(p), NULL) : NULL;
	memcpy(s, sub, sizeof *s * (size_t)rank);
	e->id = storage;
	e->sub = s;
	return e;
}

/* What a rewritten access of the source becomes in one region. */
typedef struct rwmap {
	int buffer;
	int nslot;
	aff slot[IR_MAX_RANK];
	aff off[IR_MAX_RANK]; /* block start per source dimension */
} rwmap;

static ir_expr *rw_expr(pp *p, const rwmap *m, ir_expr *e);

static ir_expr *rw_access(pp *p, const rwmap *m, const ir_expr *e)
{
	int rank = p->t->arrays[e->id].rank;
	aff sub[IR_MAX_RANK];
	int n = 0;
	for (int j = 0; j < m->nslot; j++)
		sub[n++] = m->slot[j];
	for (int d = 0; d < rank && n < IR_MAX_RANK; d++)
		sub[n++] = aff_plus(p, to_loop(p, e->sub[d]), m->off[d], -1);
	ir_expr *r = access_expr(p, m->buffer, sub, n);
	if (r) {
		r->pos = e->pos;
		r->sub_expr = NULL;
	}
	return r;
}

static ir_expr *rw_expr(pp *p, const rwmap *m, ir_expr *e)
{
	if (!e || !p->ok || !expr_uses(p, e))
		return e;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id])
		return rw_access(p, m, e);
	ir_expr *c = new_expr(p, e->kind, e->type);
	ir_expr **args = ct_arena_alloc(p->a, sizeof *args * (size_t)(e->nargs + 1));
	if (!c || !args) {
		pp_nomem(p);
		return e;
	}
	*c = *e;
	for (int i = 0; i < e->nargs; i++)
		args[i] = rw_expr(p, m, e->args[i]);
	c->args = args;
	return c;
}

/* Rewrite every access of the source under x (copies of other caches
 * included: they only name the source when it is their own). */
static void rw_tree(pp *p, const rwmap *m, lt_node *x)
{
	if (!p->ok)
		return;
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET || x->kind == LT_IF) && !is_copy(x) &&
	    node_uses(p, x)) {
		ir_node *s = ct_arena_alloc(p->a, sizeof *s);
		if (!s) {
			pp_nomem(p);
			return;
		}
		*s = *x->stmt;
		if (x->kind == LT_IF) {
			s->cond = rw_expr(p, m, s->cond);
		} else {
			s->rhs = rw_expr(p, m, s->rhs);
			if (x->kind == LT_STMT && s->lhs && s->lhs->id >= 0 && s->lhs->id < p->nis_src &&
			    p->is_src[s->lhs->id])
				s->lhs = rw_access(p, m, s->lhs);
		}
		x->stmt = s;
	}
	for (int i = 0; i < x->nkids; i++)
		rw_tree(p, m, x->kids[i]);
	for (int i = 0; i < x->nels; i++)
		rw_tree(p, m, x->els[i]);
}

/* ------------------------------------------------------------ copy loops */

typedef enum copy_op { CP_IN, CP_ZERO, CP_OUT, CP_REDUCE } copy_op;

/* The bounds test of a copy: the copied element of dimension d >= nskip
 * of the array side is root element off[d - nskip] + base[d] + c_d, which
 * must lie in root's extents (halo elements outside it are skipped). */
typedef struct gspec {
	int root, nskip;
	const aff *off;
} gspec;

/* One side of a copy: storage[prefix..., base[d] + c_d] */
typedef struct side {
	int storage;
	int npre;
	const aff *pre;
	const aff *base; /* per copied dimension */
} side;

static aff side_sub(pp *p, const side *s, int d)
{
	return aff_plus(p, s->base[d], aff_var(p, AFF_LOOP, copy_index(p, d), 1), 1);
}

static ir_expr *side_expr(pp *p, const side *s, int rank)
{
	aff sub[IR_MAX_RANK];
	int n = 0;
	for (int j = 0; j < s->npre; j++)
		sub[n++] = s->pre[j];
	for (int d = 0; d < rank && n < IR_MAX_RANK; d++)
		sub[n++] = side_sub(p, s, d);
	return access_expr(p, s->storage, sub, n);
}

/*
 * The copy nest `buf (op) array` over ext[] (one per copied dimension),
 * loops in the order of ord[] (most major first: the buffer's layout for
 * fills, the array's for write-backs),
 * guarded by the root array's extents when g is set. Returns the outermost
 * node, parent set.
 */
static lt_node *copy_nest(pp *p, copy_op op, const side *buf, const side *arr, int rank, const bx *const *ext,
                          const int *ord, const gspec *g, lt_node *parent)
{
	ct_dtype ty = p->t->arrays[buf->storage].type;
	ir_node *s = ct_arena_alloc(p->a, sizeof *s);
	if (!s) {
		pp_nomem(p);
		return NULL;
	}
	s->kind = ND_STMT;
	s->stmt_id = 0;
	if (op == CP_IN || op == CP_ZERO) {
		s->lhs = side_expr(p, buf, rank);
		if (op == CP_IN) {
			s->rhs = side_expr(p, arr, rank);
		} else {
			s->rhs = new_expr(p, EX_NUM, ty);
			if (s->rhs)
				s->rhs->untyped = true;
		}
		s->op = AS_SET;
	} else {
		s->lhs = side_expr(p, arr, rank);
		s->rhs = side_expr(p, buf, rank);
		s->op = op == CP_REDUCE ? AS_ADD : AS_SET;
	}
	if (!s->lhs || !s->rhs)
		return NULL;
	s->lhs->height = s->rhs->height = 1;
	lt_node *top = NULL, *at = parent;
	lt_node **hole = &top;
	for (int j = 0; j < rank; j++) {
		int d = ord[j];
		lt_node *l = new_node(p, LT_LOOP, at);
		if (!l)
			return NULL;
		l->index = copy_index(p, d);
		l->lo = bxc(p, 0);
		l->hi = ext[d];
		*hole = l;
		l->kids = ct_arena_alloc(p->a, sizeof *l->kids);
		if (!l->kids) {
			pp_nomem(p);
			return NULL;
		}
		l->nkids = 1;
		hole = &l->kids[0];
		at = l;
	}
	if (g && g->nskip < rank) {
		lt_node *gn = new_node(p, LT_IF, at);
		aff *gv = ct_arena_alloc(p->a, sizeof *gv * (size_t)(2 * rank + 1));
		if (!gn || !gv) {
			pp_nomem(p);
			return NULL;
		}
		const ir_array *ar = &p->t->arrays[g->root];
		int ng = 0;
		for (int d = g->nskip; d < rank; d++) {
			aff v = aff_plus(p, g->off[d - g->nskip], side_sub(p, arr, d), 1);
			gv[ng++] = v;
			gv[ng++] = aff_plus(p, aff_plus(p, ar->ext[d - g->nskip], aff_const(-1), 1), v, -1);
		}
		gn->guard = gv;
		gn->nguard = ng;
		gn->kids = ct_arena_alloc(p->a, sizeof *gn->kids);
		if (!gn->kids) {
			pp_nomem(p);
			return NULL;
		}
		gn->nkids = 1;
		*hole = gn;
		hole = &gn->kids[0];
		at = gn;
	}
	lt_node *st = new_node(p, LT_STMT, at);
	if (!st)
		return NULL;
	st->stmt = s;
	*hole = st;
	return top;
}

/* ------------------------------------------------------------ layouts and thrifty */

/* Source strides as constants (-1 where one is not known when the code is
 * generated: runtime extents). */
static void source_strides(pp *p, int storage, int64_t *stride)
{
	const ir_array *ar = &p->t->arrays[storage];
	int64_t ext[IR_MAX_RANK];
	if (ar->strided) /* strides come with the call: never elided */
		return;
	for (int d = 0; d < ar->rank; d++)
		if (!bx_is_const(p->t->ext[storage * IR_MAX_RANK + d], &ext[d]))
			ext[d] = -1;
	/* on overflow the dimensions not reached keep the caller's -1 */
	(void)ir_layout_strides(ar->rank, ar->order, ext, stride, NULL, NULL);
}

/*
 * Thrifty: the buffer is the source itself when walking the buffer in its
 * layout order steps through the source one element at a time: the
 * minor-most dimension that moves has source stride 1, and each next one
 * moves the source by exactly the span of those below it.
 */
static bool elidable(pp *p, int src, int rank, int nslot, const int64_t *slot_step, const bx *const *ext,
                     const int *border)
{
	int64_t sst[IR_MAX_RANK];
	for (int d = 0; d < IR_MAX_RANK; d++)
		sst[d] = -1;
	source_strides(p, src, sst);
	int64_t expect = 1;
	for (int j = nslot + rank - 1; j >= 0; j--) {
		int d = border[j]; /* buffer dimension */
		int64_t e;
		if (!bx_is_const(ext[d], &e))
			return false;
		if (e <= 1)
			continue;
		int64_t st = d < nslot ? slot_step[d] : sst[d - nslot];
		if (st != expect)
			return false;
		if (!ct_mul_ok(e, st, &expect))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ one region */

typedef struct site {
	lt_node *node;      /* the cache position: a loop */
	lt_node *trigger;   /* where the copies go (== node unless multicache) */
	bool element;       /* element level: the region wraps node's body, not node */
	blk b;
	lt_node *version;   /* a later version (tail) of the trigger loop folded into
	                       an earlier version's region (trigger), or NULL */
} site;

static void classify(const blk *b, lt_prologue *pro, lt_epilogue *epi)
{
	bool dense = false;
	for (int i = 0; i < b->nw && !b->too_many_writes; i++) {
		const wr *w = &b->w[i];
		bool all = w->dense;
		for (int d = 0; d < b->rank && all; d++)
			all = bx_equal(w->lo[d], b->lo[d]) && bx_equal(w->hi[d], b->hi[d]);
		dense = dense || all;
	}
	if (!b->setw && !b->accum) {
		*pro = LT_PRO_COPY_IN;
		*epi = LT_EPI_NONE;
	} else if (!b->read && b->accum && !b->setw) {
		*pro = LT_PRO_ZERO_FILL;
		*epi = LT_EPI_REDUCE;
	} else if (!b->read && b->setw && !b->accum && dense && !b->inner_if) {
		*pro = LT_PRO_ZERO_FILL;
		*epi = LT_EPI_COPY_OUT;
	} else {
		*pro = LT_PRO_COPY_IN;
		*epi = LT_EPI_COPY_OUT;
	}
}

/* Level of an index in the order (1 = innermost). */
static int level_of(const pp *p, int index)
{
	int pos = order_pos(p, index);
	return pos < 0 ? 0 : p->order_len - pos;
}

/* Slot term of multicache loop l (all its versions under the trigger). */
typedef struct mcloop {
	int index;
	int64_t step;
	aff slot;        /* TRIP(index) - base */
	const bx *trips; /* upper bound of the slot count */
	int64_t slot_step;/* source elements the block moves per slot (-1 unknown) */
} mcloop;

/* Upper bound of the slot count of index's loops under x: over every
 * version (main, tail) of the loop, floor(last / step) - base + 1. */
static const bx *max_trips(pp *p, const lt_node *x, int index, const bx *base, const bx *acc)
{
	if (x->kind == LT_LOOP && x->index == index) {
		const bx *last = bxb(p, BX_FLOORDIV, loop_last(p, x), bxc(p, x->step));
		const bx *tr = bx_ub(p, bxb(p, BX_ADD, bxb(p, BX_SUB, last, base), bxc(p, 1)), true);
		return acc ? bxb(p, BX_MAX, acc, tr) : tr;
	}
	for (int i = 0; i < x->nkids; i++)
		acc = max_trips(p, x->kids[i], index, base, acc);
	for (int i = 0; i < x->nels; i++)
		acc = max_trips(p, x->els[i], index, base, acc);
	return acc;
}

static void make_mcloop(pp *p, const lt_node *trigger, const lt_node *loop, mcloop *m)
{
	int index = loop->index;
	const ir_index *ix = &p->t->indices[index];
	m->index = index;
	m->step = loop->step;
	const bx *base;
	if (ix->kind == IX_SPLIT)
		base = bxc(p, 0);
	else
		base = bxb(p, BX_FLOORDIV, bx_from_aff(p->a, p->k, ix->lo), bxc(p, m->step));
	m->slot = aff_plus(p, aff_var(p, AFF_TRIP, index, 1), bx_aff(p, base), -1);
	const bx *trips = max_trips(p, trigger, index, base, NULL);
	m->trips = trips ? trips : bxc(p, 1);
}

/* The node list that replaces site node x: prologue, x (or its kids when
 * body_only: an element-level cache, inside loop x), epilogue; wrapped in region node r. */
static bool wrap(pp *p, lt_node *r, lt_node *const *pro, int npro, lt_node *x, bool body_only, lt_node *const *epi,
                 int nepi)
{
	int nb = body_only ? x->nkids : 1;
	int n = npro + nb + nepi;
	lt_node **v = ct_arena_alloc(p->a, sizeof *v * (size_t)(n + 1));
	if (!v)
		return pp_nomem(p);
	int m = 0;
	for (int i = 0; i < npro; i++)
		v[m++] = pro[i];
	for (int i = 0; i < nb; i++)
		v[m++] = body_only ? x->kids[i] : x;
	for (int i = 0; i < nepi; i++)
		v[m++] = epi[i];
	return set_kids(p, r, v, m);
}

static lt_node *clone_tree(pp *p, const lt_node *x, lt_node *parent)
{
	lt_node *c = new_node(p, x->kind, parent);
	if (!c)
		return NULL;
	*c = *x;
	c->parent = parent;
	if (x->nkids) {
		c->kids = ct_arena_alloc(p->a, sizeof *c->kids * (size_t)x->nkids);
		if (!c->kids)
			return pp_nomem(p), NULL;
		for (int i = 0; i < x->nkids; i++)
			if (!(c->kids[i] = clone_tree(p, x->kids[i], c)))
				return NULL;
	}
	if (x->nels) {
		c->els = ct_arena_alloc(p->a, sizeof *c->els * (size_t)x->nels);
		if (!c->els)
			return pp_nomem(p), NULL;
		for (int i = 0; i < x->nels; i++)
			if (!(c->els[i] = clone_tree(p, x->els[i], c)))
				return NULL;
	}
	return c;
}

/* Substitute loop variable v by v + step (and its trip by trip + 1) in
 * every access under x: the block of the next iteration. */
static aff shift_aff(pp *p, aff x, int v, int64_t step)
{
	int64_t c = 0;
	for (int i = 0; i < x.n; i++) {
		if (x.t[i].id != v)
			continue;
		if (x.t[i].kind == AFF_LOOP)
			c += x.t[i].coef * step;
		else if (x.t[i].kind == AFF_TRIP)
			c += x.t[i].coef;
	}
	return c ? aff_plus(p, x, aff_const(c), 1) : x;
}

static void shift_tree(pp *p, lt_node *x, int v, int64_t step, int from, int to)
{
	if (x->kind == LT_STMT && x->stmt) {
		ir_node *s = ct_arena_alloc(p->a, sizeof *s);
		if (!s) {
			pp_nomem(p);
			return;
		}
		*s = *x->stmt;
		ir_expr *e[2] = {s->lhs, s->rhs};
		for (int j = 0; j < 2; j++) {
			if (!e[j] || e[j]->kind != EX_ACCESS)
				continue;
			int rank = p->t->arrays[e[j]->id].rank;
			aff sub[IR_MAX_RANK];
			for (int d = 0; d < rank; d++)
				sub[d] = shift_aff(p, e[j]->sub[d], v, step);
			ir_expr *n = access_expr(p, e[j]->id == from ? to : e[j]->id, sub, rank);
			if (!n)
				return;
			e[j] = n;
		}
		s->lhs = e[0];
		s->rhs = e[1];
		x->stmt = s;
	}
	if (x->kind == LT_IF && x->guard) {
		aff *g = ct_arena_alloc(p->a, sizeof *g * (size_t)(x->nguard + 1));
		if (!g) {
			pp_nomem(p);
			return;
		}
		for (int i = 0; i < x->nguard; i++)
			g[i] = shift_aff(p, x->guard[i], v, step);
		x->guard = g;
	}
	for (int i = 0; i < x->nkids; i++)
		shift_tree(p, x->kids[i], v, step, from, to);
}

/* In a clone, region node `cache` with its prologue and body loses the
 * prologue (the peeled last iteration loads nothing). */
static bool drop_prologue(pp *p, lt_node *x, int cache, int npro, int nbody)
{
	if (x->kind == LT_CACHE && x->cache == cache && x->nkids == npro + nbody)
		return set_kids(p, x, x->kids + npro, nbody);
	for (int i = 0; i < x->nkids; i++)
		if (!drop_prologue(p, x->kids[i], cache, npro, nbody))
			return false;
	for (int i = 0; i < x->nels; i++)
		if (!drop_prologue(p, x->els[i], cache, npro, nbody))
			return false;
	return true;
}

/* Whether x is a region node of a cache that this item copies from
 * (its source cache, that cache's source, ...). */
static bool in_source_chain(const pp *p, const lt_node *x)
{
	if (x->kind != LT_CACHE || x->cache < 0 || x->cache >= p->t->nregions)
		return false;
	int item = p->t->regions[x->cache].item;
	for (int c = p->it->src_cache; c >= 0; c = p->k->plan[c].src_cache)
		if (c == item)
			return true;
	return false;
}

/*
 * Double buffering around loop P (the nearest loop around region node r
 * inside the regions of its source caches: the next block of a cache of a
 * cache can only be fetched while its parent's buffer holds it, so a
 * parent region between r and the loop leaves nothing to double buffer):
 *   fill:   for P in [lo, min(hi, lo+1)): the prologue into buf
 *   main:   for P in [lo, last): prefetch block(P+step) into tmp; body; tmp -> buf
 *   last:   for P in [max(lo, last), hi): body
 */
static bool double_buffer(pp *p, lt_region *rg, lt_node *r, int npro)
{
	/* the prologue is still r's first npro kids; whatever follows (the
	 * trigger, maybe wrapped by later caches) is the body */
	lt_node *const *pro = r->kids;
	int nbody = r->nkids - npro;
	if (nbody < 1)
		return pp_err(p, p->it->pos, "internal error: double buffer of cache '%s'%s", p->it->name, "");
	lt_node *P = r->parent;
	while (P && P->kind != LT_LOOP && !in_source_chain(p, P))
		P = P->parent;
	if (!P || P->kind != LT_LOOP)
		return true; /* nothing encloses the trigger: a plain cache (as Accera) */
	ct_looptree *t = p->t;
	const ir_array *ba = &t->arrays[rg->buffer];
	const bx *ext[IR_MAX_RANK];
	for (int d = 0; d < ba->rank; d++)
		ext[d] = t->ext[rg->buffer * IR_MAX_RANK + d];
	char nm[300];
	snprintf(nm, sizeof nm, "%s_next", ba->name);
	int tmp = new_storage(p, nm, ba->type, ba->rank, ext, ba->order);
	if (tmp < 0)
		return false;
	ba = &t->arrays[rg->buffer];
	rg->temp = tmp;
	rg->double_buffer = true;

	/* the peeled last iteration: a clone of P without prefetch */
	const bx *last = loop_last(p, P);
	lt_node *Plast = clone_tree(p, P, NULL);
	lt_node *fill = new_node(p, LT_LOOP, NULL);
	if (!Plast || !fill || !last)
		return false;
	/* in the clone, find r's copy: same position; drop its prologue */
	fill->index = P->index;
	fill->lo = P->lo;
	fill->hi = bxb(p, BX_MIN, P->hi, bxb(p, BX_ADD, P->lo, bxc(p, 1)));
	fill->step = P->step;
	fill->tail = true; /* runs at most once */
	if (!set_kids(p, fill, pro, npro))
		return false;
	Plast->lo = bxb(p, BX_MAX, P->lo, last);
	P->hi = last;

	/* main: r's kids become prefetch, body, move */
	lt_node **kids = ct_arena_alloc(p->a, sizeof *kids * (size_t)(npro + nbody + 1));
	if (!kids)
		return pp_nomem(p);
	int n = 0;
	for (int i = 0; i < npro; i++) {
		lt_node *c = clone_tree(p, pro[i], NULL);
		if (!c)
			return false;
		shift_tree(p, c, P->index, P->step, rg->buffer, tmp);
		kids[n++] = c;
	}
	for (int i = npro; i < npro + nbody; i++)
		kids[n++] = r->kids[i];
	int ord[IR_MAX_RANK];
	aff zero[IR_MAX_RANK];
	for (int d = 0; d < ba->rank; d++) {
		ord[d] = ba->order[d];
		zero[d] = aff_const(0);
	}
	side sb = {rg->buffer, 0, NULL, zero}, st = {tmp, 0, NULL, zero};
	lt_node *mv = copy_nest(p, CP_IN, &sb, &st, ba->rank, ext, ord, NULL, NULL);
	if (!mv)
		return false;
	kids[n++] = mv;
	if (!set_kids(p, r, kids, n))
		return false;

	/* in the last-iteration clone, the matching region node keeps only the body */
	if (!drop_prologue(p, Plast, r->cache, npro, nbody))
		return false;

	/* P becomes [fill, P, Plast] inside a region node */
	lt_node *outer = new_node(p, LT_CACHE, P->parent);
	lt_node **slot = kid_slot(t, P);
	if (!outer || !slot)
		return outer ? pp_err(p, p->it->pos, "internal error: loop %s%s not in its parent", "", "") : false;
	outer->cache = r->cache;
	*slot = outer;
	lt_node *three[3] = {fill, P, Plast};
	return set_kids(p, outer, three, 3);
}

/* Whether dimension d of a guarded block is clamped to the array: it does
 * not move (the whole array of a boundary stencil) and every bound is a
 * constant. */
static bool box_clamps(pp *p, const blk *b, int src, int d)
{
	int64_t v;
	return b->guarded && src < p->k->narrays && b->outer[d].n == 0 && bx_is_const(b->lo[d], &v) &&
	       bx_is_const(blk_extent(p, b, d), &v) && bx_is_const(p->t->ext[src * IR_MAX_RANK + d], &v);
}

/* Start and extent of dimension d of a site's block. A guarded block
 * that does not move is clamped to the array where it can be
 * (box_clamps), so its halo never reaches outside it. */
static void site_box(pp *p, const blk *b, int src, int d, const bx **lo, const bx **ex)
{
	int64_t l0, e0, E;
	*lo = b->lo[d];
	*ex = blk_extent(p, b, d);
	if (box_clamps(p, b, src, d) && bx_is_const(*lo, &l0) && bx_is_const(*ex, &e0) &&
	    bx_is_const(p->t->ext[src * IR_MAX_RANK + d], &E)) {
		int64_t l1 = l0 + b->outer[d].c, h1 = l1 + e0 - 1;
		if (l1 < 0)
			l1 = 0;
		if (h1 > E - 1)
			h1 = E - 1;
		*lo = bxc(p, l1 - b->outer[d].c);
		*ex = bxc(p, h1 >= l1 ? h1 - l1 + 1 : 0);
	}
}

/* Whether the copies of a site need bounds tests: a guarded block may
 * reach past the array (its halo at the edges) unless it is clamped in
 * every dimension; a block of a parent cache's buffer is never clamped
 * (the parent's place in the array moves with the loops). */
static bool site_guard(pp *p, const blk *b, int src)
{
	if (!b->guarded)
		return false;
	for (int d = 0; d < b->rank; d++)
		if (!box_clamps(p, b, src, d))
			return true;
	return false;
}

/* The root-array place of a parent buffer's region around site node x. */
static const bufsite *parent_site(const pp *p, int storage, const lt_node *x)
{
	for (int i = p->nbs - 1; i >= 0; i--) {
		const bufsite *b = &p->bs[i];
		if (b->storage != storage)
			continue;
		for (const lt_node *y = x; y; y = y->parent)
			if (y == b->node)
				return b;
	}
	return NULL;
}

/* Record where buffer buf of a site at node x lies in the root array: the
 * block starts at off[] of its source src (slot dimensions of a multicache
 * parent first). False when the parent's place is unknown. */
static bool note_bufsite(pp *p, int buf, int nmc, const lt_node *x, int src, const aff *off, int rank, bufsite *out)
{
	memset(out, 0, sizeof *out);
	out->storage = buf;
	out->node = x;
	if (src < p->k->narrays) {
		out->root = src;
		out->nslot = nmc;
		for (int d = 0; d < rank; d++)
			out->off[d] = off[d];
		return true;
	}
	const bufsite *ps = parent_site(p, src, x);
	if (!ps)
		return false;
	out->root = ps->root;
	out->nslot = nmc + ps->nslot;
	for (int d = ps->nslot; d < rank; d++)
		out->off[d - ps->nslot] = aff_plus(p, ps->off[d - ps->nslot], off[d], 1);
	return true;
}

/* The loop over index around site x (a multicache loop's version there). */
static const lt_node *anc_loop(const lt_node *x, int index)
{
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_LOOP && y->index == index)
			return y;
	return NULL;
}

/* The storage the source is in under x: a cache of a cache copies from
 * the buffer of the parent region around it (main and tail regions of the
 * parent have different buffers). */
static int expr_source(const pp *p, const ir_expr *e)
{
	if (!e)
		return -1;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id])
		return e->id;
	for (int i = 0; i < e->nargs; i++) {
		int r = expr_source(p, e->args[i]);
		if (r >= 0)
			return r;
	}
	return -1;
}

static int site_source(const pp *p, const lt_node *x)
{
	if (x->stmt && !is_copy(x)) {
		const ir_node *s = x->stmt;
		int r = expr_source(p, x->kind == LT_IF ? s->cond : s->rhs);
		if (r < 0 && x->kind == LT_STMT)
			r = expr_source(p, s->lhs);
		if (r >= 0)
			return r;
	}
	for (int i = 0; i < x->nkids; i++) {
		int r = site_source(p, x->kids[i]);
		if (r >= 0)
			return r;
	}
	for (int i = 0; i < x->nels; i++) {
		int r = site_source(p, x->els[i]);
		if (r >= 0)
			return r;
	}
	return -1;
}

/* Position of x among its parent's kids, -1 when it is not one. */
static int kid_pos(const lt_node *x)
{
	const lt_node *par = x->parent;
	if (!par)
		return -1;
	for (int i = 0; i < par->nkids; i++)
		if (par->kids[i] == x)
			return i;
	return -1;
}

/*
 * The region r (in the trigger loop's place, which is r's kid after npro
 * prologue nodes) also takes the later versions of that loop that sites
 * were folded from (fold_versions) and the versions between: they move
 * from r's parent into r, right after the loop.
 */
static bool take_versions(pp *p, lt_node *r, const site *s, int ns, int npro)
{
	lt_node *par = r->parent;
	if (!par)
		return true;
	int pr = kid_pos(r), last = -1;
	for (int i = 0; i < ns; i++)
		for (int q = pr + 1; pr >= 0 && q < par->nkids; q++)
			if (s[i].version && par->kids[q] == s[i].version && q > last)
				last = q;
	if (last < 0)
		return true;
	int nv = last - pr;
	lt_node **rk = ct_arena_alloc(p->a, sizeof *rk * (size_t)(r->nkids + nv));
	lt_node **pk = ct_arena_alloc(p->a, sizeof *pk * (size_t)(par->nkids - nv));
	if (!rk || !pk)
		return pp_nomem(p);
	int m = 0;
	for (int i = 0; i < r->nkids; i++) {
		rk[m++] = r->kids[i];
		if (i == npro)
			for (int q = pr + 1; q <= last; q++)
				rk[m++] = par->kids[q];
	}
	int pm = 0;
	for (int i = 0; i < par->nkids; i++)
		if (i <= pr || i > last)
			pk[pm++] = par->kids[i];
	return set_kids(p, r, rk, m) && set_kids(p, par, pk, pm);
}

/* Make one region for the sites sharing trigger s[0].trigger. */
static bool make_region(pp *p, site *s, int ns)
{
	ct_looptree *t = p->t;
	const ir_plan_item *it = p->it;
	lt_node *T = s[0].trigger;
	const blk *b0 = &s[0].b;
	int rank = b0->rank, src = site_source(p, s[0].node);
	if (src < 0)
		src = p->src_store;
	const ir_array *sa = &t->arrays[src];
	/* the checker lets a temp be multicached (read by a later nest); its
	 * blocks are copied ahead only if nothing under the trigger writes it */
	ct_role role = t->arrays[it->root_array].role;
	if (it->has_trigger && role != CT_INPUT && role != CT_CONST && T != s[0].node &&
	    subtree_writes(p, T))
		return pp_err(p, it->trigger_opt.pos,
		              "multicache '%s': '%s' is written inside its trigger loop (a temp is "
		              "multicached only where it is only read)",
		              it->name, t->arrays[it->root_array].name);
	/* multicache loops: on the path from the trigger down to the site
	 * (trigger included), those that move the block */
	mcloop mc[IR_MAX_RANK];
	int nmc = 0;
	if (T != s[0].node) {
		const lt_node *path[IR_MAX_DEPTH * 4];
		int np = 0;
		/* a site folded from a later version of the trigger loop lies
		 * under that version (s[0].version), not under T */
		for (const lt_node *y = s[0].node->parent; y && np < IR_MAX_DEPTH * 4; y = y->parent) {
			if (y->kind == LT_LOOP)
				path[np++] = y;
			if (y == T || y == s[0].version)
				break;
		}
		for (int i = np - 1; i >= 0; i--) {
			if (!blk_uses_loop(b0, path[i]->index))
				continue;
			if (nmc + rank >= IR_MAX_RANK)
				return pp_err(p, it->trigger_opt.pos,
				              "multicache '%s' would need more than 8 buffer dimensions%s", it->name, "");
			make_mcloop(p, T, path[i], &mc[nmc++]);
		}
	}
	/* buffer shape: slots, then the largest block of any site */
	const bx *shape[IR_MAX_RANK];
	for (int j = 0; j < nmc; j++)
		shape[j] = mc[j].trips;
	for (int d = 0; d < rank; d++) {
		const bx *e = NULL;
		for (int i = 0; i < ns; i++) {
			const bx *lo0, *ex0;
			site_box(p, &s[i].b, src, d, &lo0, &ex0);
			const bx *u = bx_ub(p, ex0, true);
			e = e ? bxb(p, BX_MAX, e, u) : u;
		}
		int64_t v;
		if (bx_is_const(e, &v) && v < 1)
			e = bxc(p, 1);
		else if (!bx_is_const(e, &v))
			e = bxb(p, BX_MAX, e, bxc(p, 0));
		shape[nmc + d] = e;
	}
	/* layout: slot dims most major, then the requested or the source's order */
	int border[IR_MAX_RANK];
	for (int j = 0; j < nmc; j++)
		border[j] = j;
	const int *ord = it->has_layout ? it->order : sa->order;
	int extra = it->has_layout ? rank - t->arrays[it->root_array].rank : 0;
	for (int j = 0; j < rank; j++) {
		if (it->has_layout && extra > 0)
			border[nmc + j] = nmc + (j < extra ? sa->order[j] : it->order[j - extra] + extra);
		else
			border[nmc + j] = nmc + ord[j];
	}

	lt_region rg;
	memset(&rg, 0, sizeof rg);
	rg.item = p->item;
	rg.source = src;
	rg.buffer = src;
	rg.temp = -1;
	rg.index = s[0].element ? -1 : s[0].node->index;
	rg.level = s[0].element ? 0 : level_of(p, s[0].node->index);
	rg.trigger_index = s[0].element ? -1 : T->index;
	rg.trigger_level = s[0].element ? 0 : level_of(p, T->index);
	rg.rank = nmc + rank;
	rg.nmulti = nmc;
	bool id = true, rev = true;
	for (int j = 0; j < rank; j++) {
		id = id && border[nmc + j] == nmc + j;
		rev = rev && border[nmc + j] == nmc + rank - 1 - j;
	}
	for (int j = 0; j < nmc + rank; j++) {
		rg.shape[j] = shape[j];
		rg.order[j] = border[j];
	}
	rg.first_major = id;
	rg.last_major = rev && !id;
	classify(b0, &rg.prologue, &rg.epilogue);
	for (int i = 1; i < ns; i++) {
		lt_prologue pr;
		lt_epilogue ep;
		classify(&s[i].b, &pr, &ep);
		if (pr != rg.prologue || ep != rg.epilogue) {
			rg.prologue = LT_PRO_COPY_IN;
			rg.epilogue = rg.epilogue == LT_EPI_NONE && ep == LT_EPI_NONE ? LT_EPI_NONE : LT_EPI_COPY_OUT;
		}
	}

	/* thrifty: elide when the copy would be the source itself */
	bool one = true; /* one site, or one and its copies in later versions */
	for (int i = 1; i < ns; i++)
		one = one && s[i].version;
	if (it->thrifty && one) {
		int64_t slot_step[IR_MAX_RANK];
		int64_t sst[IR_MAX_RANK];
		for (int d = 0; d < IR_MAX_RANK; d++)
			sst[d] = -1;
		source_strides(p, src, sst);
		for (int j = 0; j < nmc; j++) {
			int64_t tot = 0;
			bool known = true;
			for (int d = 0; d < rank && known; d++) {
				int64_t c = 0;
				const aff *o = &b0->outer[d];
				for (int i = 0; i < o->n; i++)
					if (o->t[i].id == mc[j].index)
						c += o->t[i].kind == AFF_LOOP ? o->t[i].coef * mc[j].step : o->t[i].coef;
				if (c)
					known = sst[d] >= 0 && ct_mul_ok(c, sst[d], &c) && ct_add_ok(tot, c, &tot);
			}
			slot_step[j] = known ? tot : -1;
		}
		const bx *bext[IR_MAX_RANK];
		for (int j = 0; j < nmc; j++)
			bext[j] = shape[j];
		for (int d = 0; d < rank; d++) {
			const bx *lo0;
			site_box(p, b0, src, d, &lo0, &bext[nmc + d]);
		}
		rg.elided = elidable(p, src, rank, nmc, slot_step, bext, border);
	}

	/* the region node around the trigger (element level: inside the loop) */
	bool elem = s[0].element;
	lt_node *r = new_node(p, LT_CACHE, elem ? T : T->parent);
	lt_node **slot = elem ? NULL : kid_slot(t, T);
	if (!r || (!slot && !elem))
		return r ? pp_err(p, it->pos, "internal error: cache '%s'%s has no place in the tree", it->name, "")
		         : false;
	lt_region *v = arena_grow(p, t->regions, t->nregions, sizeof *v);
	if (!v)
		return false;
	int rid = t->nregions;
	r->cache = rid;
	rg.node = r;
	v[rid] = rg;
	t->regions = v;
	t->nregions++;
	if (rg.elided) {
		if (elem)
			return wrap(p, r, NULL, 0, T, true, NULL, 0) && set_kids(p, T, &r, 1);
		*slot = r;
		return wrap(p, r, NULL, 0, T, false, NULL, 0) && take_versions(p, r, s, ns, 0);
	}

	/* a buffer, and every access inside rewritten to it */
	char nm[300];
	snprintf(nm, sizeof nm, "%s", it->name);
	int buf = new_storage(p, nm, sa->type, nmc + rank, shape, border);
	if (buf < 0)
		return false;
	sa = &t->arrays[src];
	t->regions[rid].buffer = buf;
	aff slots[IR_MAX_RANK];
	for (int j = 0; j < nmc; j++)
		slots[j] = mc[j].slot;
	/* at most one prologue and one epilogue nest per site */
	lt_node **pro = ct_arena_alloc(p->a, sizeof *pro * (size_t)(ns + 1));
	lt_node **epi = ct_arena_alloc(p->a, sizeof *epi * (size_t)(ns + 1));
	if (!pro || !epi)
		return pp_nomem(p);
	int npro = 0, nepi = 0;
	for (int i = 0; i < ns && p->ok; i++) {
		rwmap m;
		memset(&m, 0, sizeof m);
		m.buffer = buf;
		m.nslot = nmc;
		for (int j = 0; j < nmc; j++)
			m.slot[j] = slots[j];
		const blk *bi = &s[i].b;
		aff base[IR_MAX_RANK], zero[IR_MAX_RANK];
		const bx *cext[IR_MAX_RANK];
		for (int d = 0; d < rank; d++) {
			const bx *lo, *ex;
			site_box(p, bi, src, d, &lo, &ex);
			m.off[d] = aff_plus(p, bi->outer[d], bx_aff(p, lo), 1);
			base[d] = m.off[d];
			zero[d] = aff_const(0);
			cext[d] = ex;
		}
		/* where the block lies in the root array: for the bounds tests of
		 * guarded copies, here and in caches of this cache */
		bufsite here;
		bool placed = note_bufsite(p, buf, nmc, s[i].node, src, m.off, rank, &here);
		if (placed) {
			bufsite *bv = arena_grow(p, p->bs, p->nbs, sizeof *bv);
			if (!bv)
				return false;
			bv[p->nbs] = here;
			p->bs = bv;
			p->nbs++;
		}
		aff groot[IR_MAX_RANK];
		gspec gs = {here.root, 0, groot};
		const gspec *guard = NULL;
		if (site_guard(p, bi, src) && placed) {
			/* the copied element d is root element (root offset of the
			 * source) + base[d] + c_d: the source's own root offset */
			gs.nskip = src < p->k->narrays ? 0 : here.nslot - nmc;
			for (int d = gs.nskip; d < rank; d++)
				groot[d - gs.nskip] = aff_plus(p, here.off[d - gs.nskip], m.off[d], -1);
			guard = &gs;
		}
		rw_tree(p, &m, s[i].node);
		/* copies: one per distinct site below the trigger (sites under
		 * versions of a loop that does not move the block repeat them) */
		bool dup = false;
		for (int j = 0; j < i && !dup; j++) {
			bool same = true;
			for (int d = 0; d < rank && same; d++)
				same = bx_equal(blk_extent(p, &s[j].b, d), blk_extent(p, bi, d)) &&
				       bx_equal(s[j].b.lo[d], bi->lo[d]) && aff_equal(s[j].b.outer[d], bi->outer[d]);
			for (int q = 0; q < nmc && same; q++) {
				const lt_node *x = anc_loop(s[j].node, mc[q].index), *y = anc_loop(s[i].node, mc[q].index);
				same = x && y && bx_equal(x->lo, y->lo) && bx_equal(x->hi, y->hi);
			}
			dup = same;
		}
		if (dup && (nmc > 0 || s[i].version))
			continue;
		side bs = {buf, nmc, m.slot, zero}, as = {src, 0, NULL, base};
		int sord[IR_MAX_RANK], bord[IR_MAX_RANK];
		for (int j = 0; j < rank; j++) {
			sord[j] = sa->order[j];
			bord[j] = border[nmc + j] - nmc;
		}
		if (rg.prologue != LT_PRO_NONE) {
			/* fills walk the buffer in its layout (stores in sequence, the
			 * loads strided where the layout transposes: BLIS's packing
			 * order); write-backs walk the array in its own */
			lt_node *c = copy_nest(p, rg.prologue == LT_PRO_COPY_IN ? CP_IN : CP_ZERO, &bs, &as, rank, cext, bord,
			                       guard, NULL);
			/* multicache: the slot loops around the copy */
			for (int j = nmc - 1; j >= 0 && c; j--) {
				const lt_node *l = anc_loop(s[i].node, mc[j].index);
				lt_node *w = new_node(p, LT_LOOP, NULL);
				if (!w || !l)
					return pp_nomem(p);
				w->index = l->index;
				w->lo = l->lo;
				w->hi = l->hi;
				w->step = l->step;
				w->tail = l->tail;
				if (!set_kids(p, w, &c, 1))
					return false;
				c = w;
			}
			if (!c)
				return false;
			pro[npro++] = c;
		}
		if (rg.epilogue != LT_EPI_NONE) {
			lt_node *c = copy_nest(p, rg.epilogue == LT_EPI_REDUCE ? CP_REDUCE : CP_OUT, &bs, &as, rank, cext,
			                       sord, guard, NULL);
			if (!c)
				return false;
			epi[nepi++] = c;
		}
	}
	if (!p->ok)
		return false;
	if (elem)
		return wrap(p, r, pro, npro, T, true, epi, nepi) && set_kids(p, T, &r, 1);
	*slot = r;
	if (!wrap(p, r, pro, npro, T, false, epi, nepi) || !take_versions(p, r, s, ns, npro))
		return false;
	if (it->double_buffer && npro > 0) {
		/* applied when every cache is placed, so that peeling the loop
		 * around the trigger does not split other caches' regions */
		pending *d = arena_grow(p, p->db, p->ndb, sizeof *d);
		if (!d)
			return false;
		d[p->ndb].region = rid;
		d[p->ndb].node = r;
		d[p->ndb].npro = npro;
		d[p->ndb].item = p->item;
		p->db = d;
		p->ndb++;
	}
	return true;
}

/* ------------------------------------------------------------ sites */

typedef struct sitelist {
	site *v;
	int n, cap;
} sitelist;

static bool add_site(pp *p, sitelist *l, lt_node *x, bool element)
{
	if (!ct_vec_grow(p->ctx, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return pp_nomem(p);
	site *s = &l->v[l->n++];
	memset(s, 0, sizeof *s);
	s->node = x;
	s->trigger = x;
	s->element = element;
	return true;
}

/* Loops over index x whose subtree uses the source (not inside another such loop). */
static void find_index_sites(pp *p, lt_node *x, int index, sitelist *l)
{
	if (!p->ok)
		return;
	if (x->kind == LT_LOOP && x->index == index) {
		if (subtree_uses(p, x) && inside_parent(p, x))
			add_site(p, l, x, false);
		return;
	}
	for (int i = 0; i < x->nkids; i++)
		find_index_sites(p, x->kids[i], index, l);
	for (int i = 0; i < x->nels; i++)
		find_index_sites(p, x->els[i], index, l);
}

/* Whether x's body uses the source outside any loop nested in it. */
static bool direct_use(const pp *p, const lt_node *x)
{
	for (int i = 0; i < x->nkids; i++) {
		const lt_node *y = x->kids[i];
		if (y->kind == LT_LOOP)
			continue;
		if (node_uses(p, y) || ((y->kind == LT_IF || y->kind == LT_CACHE) && direct_use(p, y)))
			return true;
	}
	for (int i = 0; i < x->nels; i++) {
		const lt_node *y = x->els[i];
		if (y->kind != LT_LOOP && (node_uses(p, y) || direct_use(p, y)))
			return true;
	}
	return false;
}

/* Innermost loops around uses (budget caches start there). */
static void find_innermost(pp *p, lt_node *x, sitelist *l)
{
	if (!p->ok)
		return;
	if (x->kind == LT_LOOP && direct_use(p, x) && inside_parent(p, x))
		add_site(p, l, x, false);
	for (int i = 0; i < x->nkids; i++)
		find_innermost(p, x->kids[i], l);
	for (int i = 0; i < x->nels; i++)
		find_innermost(p, x->els[i], l);
}

static bool is_ancestor(const lt_node *a, const lt_node *x)
{
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y == a)
			return true;
	return false;
}

/* A site inside another site (or at the same node as an earlier one)
 * belongs to it: that site's block covers its uses, and a second region
 * there would copy the block twice (a reduce would add it twice). */
static void drop_nested_sites(sitelist *l)
{
	for (int i = 0; i < l->n; i++)
		for (int j = 0; j < l->n; j++)
			if (i != j && l->v[i].node && l->v[j].node &&
			    (is_ancestor(l->v[j].node, l->v[i].node) || (j < i && l->v[j].node == l->v[i].node)))
				l->v[i].node = NULL;
	int m = 0;
	for (int i = 0; i < l->n; i++)
		if (l->v[i].node)
			l->v[m++] = l->v[i];
	l->n = m;
}

/* The loop directly around x, looking through the region nodes of other
 * caches (never through one of the source cache: a cache of a cache stays
 * inside it); NULL at an `if` or the top. */
static lt_node *loop_above(const pp *p, const lt_node *x)
{
	lt_node *y = x->parent;
	while (y && y->kind == LT_CACHE && y->cache >= 0 && y->cache < p->t->nregions &&
	       p->t->regions[y->cache].item != p->parent_item)
		y = y->parent;
	return y && y->kind == LT_LOOP ? y : NULL;
}

/* The block of the body of loop x for one iteration (element level). */
static void block_of_body(pp *p, const lt_node *x, blk *b)
{
	memset(b, 0, sizeof *b);
	walkst w;
	memset(&w, 0, sizeof w);
	for (int i = 0; i < x->nkids; i++)
		blk_walk(p, b, &w, x->kids[i]);
	for (const lt_node *y = x; y; y = y->parent)
		if (y->kind == LT_IF)
			b->guarded = true;
	if (b->inner_if)
		b->guarded = true;
}

/* The max_elements walk from an innermost loop. */
static bool budget_site(pp *p, site *s)
{
	lt_node *x = s->node;
	blk b;
	block_of(p, x, &b);
	int64_t n = blk_volume(p, &b);
	if (n < 0 || n > p->it->value) {
		s->element = true;
		block_of_body(p, x, &s->b);
		return p->ok;
	}
	s->b = b;
	for (lt_node *y = loop_above(p, x); y; y = loop_above(p, x)) {
		blk up;
		block_of(p, y, &up);
		int64_t m = blk_volume(p, &up);
		if (m < 0 || m > p->it->value || up.mismatch)
			break;
		x = y;
		s->b = up;
	}
	s->node = s->trigger = x;
	return true;
}

/* Hoisting: out over loops that do not move or widen the block (never
 * above limit, the trigger of a multicache). */
static void hoist(pp *p, site *s, const lt_node *limit)
{
	while (s->node != limit) {
		lt_node *y = loop_above(p, s->node);
		if (!y)
			break;
		blk up;
		block_of(p, y, &up);
		if (!blk_equal(p, &up, &s->b))
			break;
		bool trig = s->trigger == s->node;
		s->node = y;
		if (trig)
			s->trigger = y;
		s->b = up;
	}
}

/*
 * Versions of a cache's trigger loop share one buffer (a cache with a
 * trigger; one without is hoisted over the loops that do not move it): a
 * site whose trigger is a later version (the tail) of the loop that
 * triggers an earlier site, with the same block, and a block that the loop
 * does not move, is grouped with that site; its region then spans the
 * versions (one copy, filled once, instead of one per version: B packed
 * again for a tail of rows). The versions must follow each other among
 * their parent's kids.
 */
static void fold_versions(pp *p, site *v, int n)
{
	for (int i = 0; i < n; i++) {
		site *s = &v[i];
		lt_node *T = s->trigger;
		if (!s->b.any || s->b.mismatch || s->element || T->kind != LT_LOOP ||
		    blk_uses_loop(&s->b, T->index))
			continue;
		int pt = kid_pos(T);
		if (pt < 0)
			continue;
		for (int j = 0; j < i; j++) {
			const site *o = &v[j];
			lt_node *U = o->trigger;
			if (U == T || o->element || U->parent != T->parent || U->kind != LT_LOOP ||
			    U->index != T->index || !blk_equal(p, &s->b, &o->b))
				continue;
			int pu = kid_pos(U);
			bool between = pu >= 0 && pu < pt;
			for (int q = pu + 1; q < pt && between; q++) {
				const lt_node *w = T->parent->kids[q];
				between = w->kind == LT_LOOP && w->index == T->index;
			}
			if (!between)
				continue;
			s->version = T;
			s->trigger = U;
			break;
		}
	}
}

/* Whether two versions x, y of one loop run disjoint trip numbers
 * floor(v / step): constant ranges that do not meet, or a main version
 * ending where the other (its tail) starts. */
static bool trips_disjoint(const lt_node *x, const lt_node *y)
{
	int64_t xl, xh, yl, yh;
	if (bx_is_const(x->lo, &xl) && bx_is_const(x->hi, &xh) && bx_is_const(y->lo, &yl) && bx_is_const(y->hi, &yh)) {
		if (xh <= xl || yh <= yl)
			return true; /* an empty version fills nothing */
		int64_t s = x->step;
		int64_t x0 = ct_floordiv(xl, s), x1 = ct_floordiv(xh - 1, s);
		int64_t y0 = ct_floordiv(yl, s), y1 = ct_floordiv(yh - 1, s);
		return x1 < y0 || y1 < x0;
	}
	return bx_equal(x->hi, y->lo) || bx_equal(y->hi, x->lo);
}

/*
 * Whether two sites under one trigger can share a buffer. The buffer has
 * one slot per iteration of the loops between the trigger and the sites
 * that move the block, and each site's copy fills the slots of its own
 * iterations. Two sites under versions (main, tail) of such a loop with
 * disjoint trips fill different slots; two with the same block fill the
 * same slots with the same elements. Any other pair would fill one slot
 * with two different blocks (the main and the tail version of the cache
 * loop itself under one trigger iteration): those get a region each.
 */
static bool share_slots(pp *p, const site *a, const site *b)
{
	if (blk_equal(p, &a->b, &b->b))
		return true;
	for (const lt_node *y = a->node->parent; y; y = y->parent) {
		if (y->kind == LT_LOOP && blk_uses_loop(&a->b, y->index)) {
			const lt_node *z = anc_loop(b->node, y->index);
			if (z && z != y && z->step == y->step && trips_disjoint(y, z))
				return true;
		}
		if (y == a->trigger || y == a->version)
			break;
	}
	return false;
}

/* The loop over tindex around site x (*trig; left alone when there is
 * none). False when a cache of a cache would find it only outside its
 * source cache's region: the copies would read a buffer that does not
 * hold the block yet (levels that check and the loop tree count alike
 * never place it so; this keeps the tree sound if they ever differ). */
static bool find_trigger(const pp *p, lt_node *x, int tindex, lt_node **trig)
{
	for (lt_node *y = x->parent; y; y = y->parent) {
		if (y->kind == LT_LOOP && y->index == tindex) {
			*trig = y;
			return true;
		}
		if (p->parent_item >= 0 && y->kind == LT_CACHE && y->cache >= 0 && y->cache < p->t->nregions &&
		    p->t->regions[y->cache].item == p->parent_item) {
			for (const lt_node *z = y->parent; z; z = z->parent)
				if (z->kind == LT_LOOP && z->index == tindex)
					return false;
			return true;
		}
	}
	return true;
}

/* The storages that count as the item's source. */
static bool set_sources(pp *p)
{
	ct_looptree *t = p->t;
	const ir_plan_item *it = p->it;
	p->nis_src = t->narrays;
	p->is_src = ct_arena_alloc(p->a, sizeof *p->is_src * (size_t)(t->narrays + 1));
	if (!p->is_src)
		return pp_nomem(p);
	p->parent_item = it->src_cache;
	if (it->src_cache < 0) {
		p->is_src[it->src_array] = true;
		p->src_store = it->src_array;
		return true;
	}
	p->src_store = -1;
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *g = &t->regions[r];
		if (g->item != it->src_cache)
			continue;
		p->is_src[g->buffer] = true;
		if (p->src_store < 0 || g->buffer != g->source)
			p->src_store = g->buffer;
	}
	return p->src_store >= 0;
}

static bool apply_item(pp *p, int item)
{
	ct_looptree *t = p->t;
	const ir_plan_item *it = &p->k->plan[item];
	p->item = item;
	p->it = it;
	if (!set_sources(p))
		return p->ok; /* the source cache made no region: nothing to cache */
	/* the loop order and the cache's place in it: asked of the one
	 * authority the checks use too (src/ir/order.c) */
	sched_place pl;
	pl.order = ct_arena_alloc(p->a, sizeof *pl.order * ((size_t)p->k->nindices + 1));
	if (!pl.order)
		return pp_nomem(p);
	bool placed = sched_place_cache(p->k, item, &pl);
	if (pl.uses == 0)
		return true; /* no use: nothing to cache */
	if (!placed)
		return pp_err(p, pl.err_pos, "%s%s", pl.err, "");
	p->order_len = pl.depth < (int)(sizeof p->order / sizeof p->order[0]) ? pl.depth : 0;
	memcpy(p->order, pl.order, sizeof *p->order * (size_t)p->order_len);
	if (p->order_len == 0)
		return true; /* no loop around any use: nothing to cache */
	sitelist l = {NULL, 0, 0};
	if (it->where == CP_BUDGET) {
		for (int i = 0; i < t->nroots; i++)
			find_innermost(p, t->roots[i], &l);
		for (int i = 0; i < l.n && p->ok; i++)
			budget_site(p, &l.v[i]);
		drop_nested_sites(&l);
	} else {
		int index = pl.index, tindex = pl.trigger_index;
		for (int i = 0; i < t->nroots; i++)
			find_index_sites(p, t->roots[i], index, &l);
		for (int i = 0; i < l.n && p->ok; i++) {
			site *s = &l.v[i];
			block_of(p, s->node, &s->b);
			lt_node *trig = s->node;
			if (tindex != index && !find_trigger(p, s->node, tindex, &trig)) {
				ct_free(p->ctx, l.v);
				return pp_err(p, it->trigger_opt.pos,
				              "the trigger of cache '%s' lies outside the region of its source cache '%s'",
				              it->name, p->k->plan[p->parent_item].name);
			}
			s->trigger = trig;
			hoist(p, s, trig != s->node ? trig : NULL);
			if (s->node == trig)
				s->trigger = s->node;
		}
		/* versions of a loop inside one that does not move the block (the
		 * main and tail k2 inside a tail k) hoist to the same loop: one site */
		drop_nested_sites(&l);
		if (!it->double_buffer && it->has_trigger)
			fold_versions(p, l.v, l.n);
	}
	for (int i = 0; i < l.n && p->ok; i++) {
		site *s = &l.v[i];
		if (!s->b.any)
			continue;
		if (s->b.mismatch) {
			ct_free(p->ctx, l.v);
			return pp_err(p, it->pos,
			              "cache '%s': the uses of '%s' move differently with the loops around the cache "
			              "(e.g. A[i, j] and A[j, i]), so no single block follows them",
			              it->name, t->arrays[p->src_store].name);
		}
	}
	/* one region per trigger: sites sharing a trigger are multicached
	 * together, as long as their blocks can share the buffer's slots */
	site *group = l.n ? ct_alloc(p->ctx, sizeof *group * (size_t)l.n) : NULL;
	if (l.n && !group)
		pp_nomem(p);
	for (int i = 0; i < l.n && p->ok; i++) {
		if (!l.v[i].node || !l.v[i].b.any)
			continue;
		int ng = 0;
		for (int j = i; j < l.n; j++) {
			if (!l.v[j].node || l.v[j].trigger != l.v[i].trigger || !l.v[j].b.any)
				continue;
			bool fits = true;
			for (int q = 0; q < ng && fits; q++)
				fits = share_slots(p, &group[q], &l.v[j]);
			if (fits) {
				group[ng++] = l.v[j];
				l.v[j].node = NULL;
			}
		}
		make_region(p, group, ng);
	}
	ct_free(p->ctx, group);
	ct_free(p->ctx, l.v);
	return p->ok;
}

/* Two caches of one array must form a chain (a cache of a cache). */
static bool check_items(pp *p)
{
	const ct_kernel *k = p->k;
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *a = &k->plan[i];
		if (a->kind != PL_CACHE || a->src_array < 0)
			continue;
		for (int j = 0; j < i; j++) {
			const ir_plan_item *b = &k->plan[j];
			if (b->kind == PL_CACHE && b->src_array == a->src_array) {
				p->it = a;
				return pp_err(p, a->src_pos,
				              "'%s' already has cache '%s'; a second cache of it must be a cache of that cache",
				              k->arrays[a->src_array].name, b->name);
			}
		}
	}
	return true;
}

ct_status plan_apply(ct_looptree *t)
{
	pp p;
	memset(&p, 0, sizeof p);
	p.t = t;
	p.k = t->k;
	p.a = &t->arena;
	p.ctx = t->k->ctx;
	p.ok = true;
	p.parent_item = -1;
	if (!check_items(&p))
		return p.st;
	for (int i = 0; i < p.k->nplan && p.ok; i++)
		if (p.k->plan[i].kind == PL_CACHE)
			apply_item(&p, i);
	for (int i = 0; i < p.ndb && p.ok; i++) {
		p.item = p.db[i].item;
		p.it = &p.k->plan[p.item];
		double_buffer(&p, &t->regions[p.db[i].region], p.db[i].node, p.db[i].npro);
	}
	if (p.ok && t->arena.failed)
		pp_nomem(&p);
	if (!p.ok && p.st == CT_OK) {
		ct_error(p.ctx, CT_ERR_LIMIT, "the plan of kernel '%s' overflows 64-bit arithmetic", p.k->name);
		p.st = CT_ERR_LIMIT;
	}
	return p.st;
}
