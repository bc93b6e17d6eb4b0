/* deps.c: the dependences of a kernel's statement instances (isl), and whether the order of a loop tree keeps them (docs/LANGUAGE.md, "Legality"). */
#include "ir/deps.h"
#include "ir/order.h"
#include "ir/project.h"

#include <isl/ctx.h>
#include <isl/flow.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The relations are written as isl text and parsed: every name is generic
 * (P<param id>, o<index id>, v<loop>, e<loop>, S<statement>, A<array>,
 * T[...] for time) so that no kernel name can clash with isl's words.
 *
 * An order is a map from instances to time vectors: for each node on the
 * path from a root of the tree to the statement, its position among its
 * siblings (an else branch counts after the then branch) and, for a loop,
 * the loop variable's value (0 for other nodes), padded with zeros to the
 * deepest path; instances run in the lexicographic order of their times.
 * The instance S<n>[o...] of a statement in a scheduled tree is found from
 * its loop variables: an original index is the sum of the variables of its
 * split chain, each loop's variable runs lo, lo + step, ... below hi, and
 * every version (main, tail, balanced blocks) is its own path, so the
 * tails and guards of the lowered tree are the ones analysed.
 */

/* isl's budget per analysis (its operation count; a few million is a
 * fraction of a second): beyond it the check refuses rather than hangs. */
#define DEP_MAX_OPS 20000000ul

typedef struct dstmt {
	const ir_node *node;   /* ND_STMT or ND_LET */
	int ndims;
	int *dims;             /* original index ids of the fors around it, outermost first */
	bool reduction;        /* `+=`, `-=` or `*=` */
	bool skip;             /* left out of this analysis (another band's, or another nest's) */
	int root;              /* the top-level node of the kernel's body it lies under */
	int band;              /* its outermost loop of a reordered band (an
	                          original index id), -1 when none */
} dstmt;

struct dep_info {
	ct_kernel *k;
	isl_ctx *ictx;
	int nst, cap;
	dstmt *st;
	isl_union_set *dom;    /* the instances that run */
	isl_union_map *dep;    /* dependences that keep their order: src -> dst */
	isl_union_map *red;    /* pairs of one reduction statement through its left-hand side
	                          (computed when first asked: reorders never need them) */
	isl_union_map *wr;     /* the reduction updates, and the written order, for red */
	isl_union_map *sched;
	int band;              /* >= 0: only the statements of this reordered band (the check) */
	bool *written;         /* per array: some statement of the analysis writes it */
	const bool *ignore;    /* per array, or NULL: its accesses are left out (dep_loop_carries_private) */
	const bool *roots;     /* per top-level node of the body, or NULL: the statements under the
	                          others are left out (dep_compute_roots) */
	/* the last order read (tree_order_under): its text and map. The
	 * questions about a nest's loops read the same order again and again
	 * (each loop of a one-statement nest, and the whole analysis, have
	 * one), and isl takes a millisecond to read one */
	char *order_text;
	isl_union_map *order;
};

/* ------------------------------------------------------------ text of relations */

/* What an original index is written as: o<id> in a statement's tuple, or
 * the sum of the loop variables of its chain on a path of the tree. */
typedef struct tx {
	const ct_kernel *k;
	ct_buf *b;
	const ct_looptree *t;  /* NULL: o<id> */
	const lt_node *const *path;
	int depth;
	bool ok;
} tx;

/* isl reads `3*(x)` and `(x)*3`, not `(-3)*x`: a negative number is
 * written (0 - 3) and a negative factor as a subtraction. */
static unsigned long long magnitude(int64_t v)
{
	return v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
}

static void put_num(ct_buf *b, int64_t v)
{
	if (v < 0)
		ct_buf_printf(b, "(0 - %llu)", magnitude(v));
	else
		ct_buf_printf(b, "%lld", (long long)v);
}

static void put_param(tx *c, int id)
{
	const ct_kernel *k = c->k;
	if (id < 0 || id >= k->nparams) {
		c->ok = false; /* a derived value: only planned trees have them */
		return;
	}
	if (k->params[id].runtime)
		ct_buf_printf(c->b, "P%d", id);
	else
		put_num(c->b, k->params[id].value);
}

static int index_root(const ct_looptree *t, int x)
{
	return x >= 0 && x < t->nindices ? t->indices[x].root : -1;
}

static void put_index(tx *c, int id)
{
	if (!c->t) {
		ct_buf_printf(c->b, "o%d", id);
		return;
	}
	bool any = false;
	ct_buf_putc(c->b, '(');
	for (int l = 0; l < c->depth; l++) {
		const lt_node *x = c->path[l];
		if (x->kind != LT_LOOP || index_root(c->t, x->index) != id)
			continue;
		ct_buf_printf(c->b, "%sv%d", any ? " + " : "", l);
		any = true;
	}
	ct_buf_putc(c->b, ')');
	if (!any)
		c->ok = false;
}

/* The variable of the innermost loop over tree index id on the path (the bounds of an index
 * split from an affine loop use its parent's variable). */
static void put_loop_var(tx *c, int id)
{
	for (int l = c->depth - 1; l >= 0; l--)
		if (c->path && c->path[l]->kind == LT_LOOP && c->path[l]->index == id) {
			ct_buf_printf(c->b, "v%d", l);
			return;
		}
	c->ok = false;
}

static void put_aff(tx *c, aff x)
{
	ct_buf_putc(c->b, '(');
	put_num(c->b, x.c);
	for (int i = 0; i < x.n; i++) {
		const aff_term *tm = &x.t[i];
		ct_buf_printf(c->b, " %c %llu*", tm->coef < 0 ? '-' : '+', magnitude(tm->coef));
		if (tm->kind == AFF_PARAM)
			put_param(c, tm->id);
		else if (tm->kind == AFF_INDEX)
			put_index(c, tm->id);
		else if (tm->kind == AFF_LOOP)
			put_loop_var(c, tm->id);
		else
			c->ok = false;
	}
	ct_buf_putc(c->b, ')');
}

static void put_bx(tx *c, const bx *x)
{
	int64_t v;
	if (!x) {
		c->ok = false;
		return;
	}
	switch (x->kind) {
	case BX_CONST: put_num(c->b, x->v); return;
	case BX_PARAM: put_param(c, x->id); return;
	case BX_ADD:
	case BX_SUB:
		ct_buf_putc(c->b, '(');
		put_bx(c, x->a);
		ct_buf_puts(c->b, x->kind == BX_ADD ? " + " : " - ");
		put_bx(c, x->b);
		ct_buf_putc(c->b, ')');
		return;
	case BX_MUL: {
		/* affine: one factor is a number */
		const bx *o = x->b;
		if (!bx_is_const(x->a, &v) && (o = x->a, !bx_is_const(x->b, &v))) {
			c->ok = false;
			return;
		}
		ct_buf_printf(c->b, "(0 %c %llu*(", v < 0 ? '-' : '+', magnitude(v));
		put_bx(c, o);
		ct_buf_puts(c->b, "))");
		return;
	}
	case BX_FLOORDIV:
	case BX_MOD:
		/* isl divides by positive integer literals only */
		if (!bx_is_const(x->b, &v) || v < 1) {
			c->ok = false;
			return;
		}
		ct_buf_puts(c->b, x->kind == BX_FLOORDIV ? "floor((" : "((");
		put_bx(c, x->a);
		ct_buf_printf(c->b, x->kind == BX_FLOORDIV ? ")/%lld)" : ") mod %lld)", (long long)v);
		return;
	case BX_MIN:
	case BX_MAX:
		ct_buf_puts(c->b, x->kind == BX_MIN ? "min(" : "max(");
		put_bx(c, x->a);
		ct_buf_puts(c->b, ", ");
		put_bx(c, x->b);
		ct_buf_putc(c->b, ')');
		return;
	}
	c->ok = false;
}

/* An if condition (negated for the else branch) as an isl formula. */
static void put_cond(tx *c, const ir_expr *e, bool neg)
{
	if (!e) {
		c->ok = false;
		return;
	}
	switch (e->kind) {
	case EX_AND:
	case EX_OR:
		if (e->nargs != 2) {
			c->ok = false;
			return;
		}
		ct_buf_putc(c->b, '(');
		put_cond(c, e->args[0], neg);
		ct_buf_puts(c->b, (e->kind == EX_AND) != neg ? " and " : " or ");
		put_cond(c, e->args[1], neg);
		ct_buf_putc(c->b, ')');
		return;
	case EX_NOT:
		if (e->nargs != 1) {
			c->ok = false;
			return;
		}
		put_cond(c, e->args[0], !neg);
		return;
	case EX_CMP: {
		if (!e->has_diff) {
			c->ok = false;
			return;
		}
		ir_cmp op = e->cmp;
		if (neg) {
			static const ir_cmp flip[] = {CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NE, CMP_EQ};
			op = flip[op];
		}
		static const char *const rel[] = {" < 0", " <= 0", " > 0", " >= 0", " = 0", ""};
		if (op == CMP_NE) {
			ct_buf_putc(c->b, '(');
			put_aff(c, e->diff);
			ct_buf_puts(c->b, " < 0 or ");
			put_aff(c, e->diff);
			ct_buf_puts(c->b, " > 0)");
			return;
		}
		put_aff(c, e->diff);
		ct_buf_puts(c->b, rel[op]);
		return;
	}
	default: c->ok = false; return;
	}
}

/* "[P0, P3] -> " of the kernel's runtime params. */
static void put_params(const ct_kernel *k, ct_buf *b)
{
	bool any = false;
	ct_buf_putc(b, '[');
	for (int p = 0; p < k->nparams; p++) {
		if (!k->params[p].runtime)
			continue;
		ct_buf_printf(b, "%sP%d", any ? ", " : "", p);
		any = true;
	}
	ct_buf_puts(b, "] -> { ");
}

/* Runtime params without a value are symbols; they are at least 0 (a
 * negative one is refused before anything runs). */
static isl_set *runtime_params(dep_info *d)
{
	ct_buf b;
	ct_buf_init(&b);
	put_params(d->k, &b);
	ct_buf_puts(&b, ": 0 = 0");
	for (int p = 0; p < d->k->nparams; p++)
		if (d->k->params[p].runtime)
			ct_buf_printf(&b, " and P%d >= 0", p);
	ct_buf_puts(&b, " }");
	char *s = ct_buf_take(&b);
	isl_set *r = s ? isl_set_read_from_str(d->ictx, s) : NULL;
	free(s);
	return r;
}

/* ------------------------------------------------------------ statements */

static int stmt_of(const dep_info *d, const ir_node *n)
{
	for (int i = 0; i < d->nst; i++)
		if (d->st[i].node == n)
			return i;
	/* a planned tree's copy of a statement (its accesses moved to a cache's
	 * buffer) keeps the statement's number */
	for (int i = 0; n && n->kind == ND_STMT && n->stmt_id > 0 && i < d->nst; i++)
		if (d->st[i].node->kind == ND_STMT && d->st[i].node->stmt_id == n->stmt_id)
			return i;
	return -1;
}

/* Whether plan(strict=true) keeps the order of statement x's updates: a
 * floating-point one (integer sums re-associate exactly). */
static bool strict_order(const ct_kernel *k, const ir_node *x)
{
	ct_dtype t = k->arrays[x->lhs->id].type;
	return k->has_plan && k->strict && (t == CT_F32 || t == CT_F64);
}

static bool add_stmts(dep_info *d, ir_node *const *nodes, int n, int *dims, int ndims)
{
	ct_ctx *ctx = d->k->ctx;
	for (int i = 0; i < n; i++) {
		const ir_node *x = nodes[i];
		switch (x->kind) {
		case ND_STMT:
		case ND_LET: {
			if (!ct_vec_grow(ctx, (void **)&d->st, &d->cap, d->nst + 1, sizeof *d->st))
				return false;
			dstmt *s = &d->st[d->nst];
			memset(s, 0, sizeof *s);
			s->node = x;
			s->ndims = ndims;
			s->reduction = x->kind == ND_STMT && x->op != AS_SET && !strict_order(d->k, x);
			if (ndims > 0) {
				s->dims = ct_alloc(ctx, sizeof *s->dims * (size_t)ndims);
				if (!s->dims)
					return false;
				memcpy(s->dims, dims, sizeof *dims * (size_t)ndims);
			}
			d->nst++;
			break;
		}
		case ND_FOR:
			if (ndims + x->nidx > d->k->nindices)
				return false;
			for (int j = 0; j < x->nidx; j++)
				dims[ndims + j] = x->idx[j];
			if (!add_stmts(d, x->body, x->nbody, dims, ndims + x->nidx))
				return false;
			break;
		case ND_IF:
			if (!add_stmts(d, x->body, x->nbody, dims, ndims) || !add_stmts(d, x->els, x->nels, dims, ndims))
				return false;
			break;
		}
	}
	return true;
}

static void put_tuple(ct_buf *b, const dep_info *d, int s)
{
	ct_buf_printf(b, "S%d[", s);
	for (int i = 0; i < d->st[s].ndims; i++)
		ct_buf_printf(b, "%so%d", i ? ", " : "", d->st[s].dims[i]);
	ct_buf_putc(b, ']');
}

/* ------------------------------------------------------------ orders */

typedef struct lw {
	dep_info *d;
	const ct_looptree *t;
	ct_buf *b;
	int tdims;
	int depth;
	const lt_node **path;
	int *pos;
	bool any, ok;
	const lt_node *only; /* when set: the leaves under this node only (and its ancestors' paths) */
} lw;

/* Whether node x lies on the way to y (x is y or an ancestor of it) or under y. */
static bool related(const lt_node *x, const lt_node *y)
{
	for (const lt_node *z = y; z; z = z->parent)
		if (z == x)
			return true;
	for (const lt_node *z = x; z; z = z->parent)
		if (z == y)
			return true;
	return false;
}

static int tree_depth(lt_node *const *v, int n)
{
	int m = 0;
	for (int i = 0; i < n; i++) {
		int a = tree_depth(v[i]->kids, v[i]->nkids), e = tree_depth(v[i]->els, v[i]->nels);
		int h = 1 + (a > e ? a : e);
		m = h > m ? h : m;
	}
	return m;
}

/* Whether path[l + 1] is in the else branch of path[l]. */
static bool in_else(const lw *w, int l)
{
	const lt_node *x = w->path[l];
	return w->pos[l + 1] >= x->nkids;
}

/* The first value of loop x, as the generated code starts it (cgen.c,
 * cg_range_open): its lo, or for an affine loop the max of its lower terms
 * (lo among them unless it is the sentinel LT_NO_LO). */
static void put_start(tx *c, const lt_node *x)
{
	int64_t v;
	bool none = bx_is_const(x->lo, &v) && v == LT_NO_LO;
	if (x->ndlo == 0 || (none && x->ndlo == 1)) {
		if (x->ndlo == 0)
			put_bx(c, x->lo);
		else
			put_aff(c, x->dlo[0]);
		return;
	}
	int n = x->ndlo + (none ? 0 : 1);
	for (int j = 1; j < n; j++)
		ct_buf_puts(c->b, "max(");
	if (!none)
		put_bx(c, x->lo);
	for (int j = 0; j < x->ndlo; j++) {
		if (j > 0 || !none)
			ct_buf_puts(c->b, ", ");
		put_aff(c, x->dlo[j]);
		if (j > 0 || !none)
			ct_buf_putc(c->b, ')');
	}
}

static void put_leaf(lw *w)
{
	const lt_node *leaf = w->path[w->depth - 1];
	int s = stmt_of(w->d, leaf->stmt);
	if (s < 0) {
		/* a cache's copy (a planned tree: stmt_id 0) is no instance of the kernel */
		w->ok = w->ok && leaf->stmt && leaf->stmt->kind == ND_STMT && leaf->stmt->stmt_id == 0;
		return;
	}
	if (w->d->st[s].skip)
		return;
	ct_buf *b = w->b;
	tx c = {w->d->k, b, w->t, w->path, w->depth, true};
	if (w->any)
		ct_buf_puts(b, "; ");
	w->any = true;
	put_tuple(b, w->d, s);
	ct_buf_puts(b, " -> T[");
	for (int i = 0; i < w->tdims; i++)
		ct_buf_printf(b, "%st%d", i ? ", " : "", i);
	ct_buf_puts(b, "] : exists (z");
	for (int l = 0; l < w->depth; l++)
		if (w->path[l]->kind == LT_LOOP)
			ct_buf_printf(b, ", v%d, e%d", l, l);
	ct_buf_puts(b, " : z = 0");
	for (int l = 0; l < w->depth; l++) {
		const lt_node *x = w->path[l];
		ct_buf_printf(b, " and t%d = %d", 2 * l, w->pos[l]);
		if (x->kind == LT_LOOP) {
			ct_buf_printf(b, " and t%d = v%d and v%d >= ", 2 * l + 1, l, l);
			put_bx(&c, x->lo);
			ct_buf_printf(b, " and v%d < ", l);
			put_bx(&c, x->hi);
			/* affine bounds (over the enclosing loops, so c's path so far) */
			c.depth = l;
			ct_buf_printf(b, " and v%d = ", l);
			put_start(&c, x);
			ct_buf_printf(b, " + %lld*e%d", (long long)x->step, l);
			if (x->step < 1)
				c.ok = false;
			for (int j = 0; j < x->ndlo; j++) {
				ct_buf_printf(b, " and v%d >= ", l);
				put_aff(&c, x->dlo[j]);
			}
			for (int j = 0; j < x->ndhi; j++) {
				ct_buf_printf(b, " and v%d < ", l);
				put_aff(&c, x->dhi[j]);
			}
			c.depth = w->depth;
		} else {
			ct_buf_printf(b, " and t%d = 0", 2 * l + 1);
		}
		if (x->kind == LT_IF && l + 1 < w->depth) {
			if (!x->stmt || x->stmt->kind != ND_IF) {
				c.ok = false; /* the guards of planned trees */
				continue;
			}
			ct_buf_puts(b, " and ");
			put_cond(&c, x->stmt->cond, in_else(w, l));
		}
		/* a cache region is a level of positions: its body runs between its copies */
	}
	for (int i = 2 * w->depth; i < w->tdims; i++)
		ct_buf_printf(b, " and t%d = 0", i);
	const dstmt *st = &w->d->st[s];
	for (int i = 0; i < st->ndims; i++) {
		ct_buf_printf(b, " and o%d = ", st->dims[i]);
		put_index(&c, st->dims[i]);
	}
	ct_buf_putc(b, ')');
	w->ok = w->ok && c.ok;
}

static void walk(lw *w, lt_node *const *v, int n, int first_pos)
{
	for (int i = 0; i < n && w->ok; i++) {
		const lt_node *x = v[i];
		if (w->only && !related(x, w->only))
			continue; /* its instances cannot meet the question's */
		w->path[w->depth] = x;
		w->pos[w->depth] = first_pos + i;
		w->depth++;
		if (x->kind == LT_STMT || x->kind == LT_LET)
			put_leaf(w);
		else {
			walk(w, x->kids, x->nkids, 0);
			walk(w, x->els, x->nels, x->nkids);
		}
		w->depth--;
	}
}

/* The order that text s (owned, taken) says, over d's runtime params;
 * read once per text in a row (d->order). NULL on error. */
static isl_union_map *order_read(dep_info *d, char *s)
{
	if (d->order && d->order_text && strcmp(d->order_text, s) == 0) {
		free(s);
		return isl_union_map_copy(d->order);
	}
	isl_union_map *m = isl_union_map_intersect_params(isl_union_map_read_from_str(d->ictx, s), runtime_params(d));
	isl_union_map_free(d->order);
	free(d->order_text);
	d->order = m ? isl_union_map_copy(m) : NULL;
	d->order_text = m ? s : NULL;
	if (!m)
		free(s);
	return m;
}

/* The order of tree t: instances -> time; *tdims its time dimensions. */
static isl_union_map *tree_order_under(dep_info *d, const ct_looptree *t, const lt_node *only, int *tdims)
{
	ct_ctx *ctx = d->k->ctx;
	int depth = tree_depth(t->roots, t->nroots);
	lw w = {d, t, NULL, 2 * depth + 2, 0, NULL, NULL, false, true, only};
	ct_buf b;
	ct_buf_init(&b);
	w.b = &b;
	w.path = ct_alloc(ctx, sizeof *w.path * (size_t)(depth + 1));
	w.pos = ct_alloc(ctx, sizeof *w.pos * (size_t)(depth + 1));
	isl_union_map *m = NULL;
	if (w.path && w.pos) {
		put_params(d->k, &b);
		walk(&w, t->roots, t->nroots, 0);
		ct_buf_puts(&b, " }");
		char *s = ct_buf_take(&b);
		if (s && w.ok)
			m = order_read(d, s);
		else
			free(s);
	} else {
		ct_buf_free(&b);
	}
	ct_free(ctx, w.path);
	ct_free(ctx, w.pos);
	*tdims = w.tdims;
	return m;
}

/* The order of the whole tree t. */
static isl_union_map *tree_order(dep_info *d, const ct_looptree *t, int *tdims)
{
	return tree_order_under(d, t, NULL, tdims);
}

/* The order of k's schedule (or its written order) as one quasi-affine
 * function per statement, defined on every integer point (the instances
 * that run come from the dependences): the tree's versions (main and tail
 * of each split) run in the order of their loop variables' values, so the
 * time is the path's positions and, at each band, the values w<x> of its
 * loops in the band's order. A split chain r -> c1 -> ... of original
 * index o_r has w_r = lo + step*e_r and w_c = step_c*e_c, each the largest
 * such value that the rest of o_r (o_r minus the chain's values before
 * it) reaches, and the last index takes the rest. Balanced splits use the
 * loop tree (tree_order) instead. */
typedef struct fw {
	dep_info *d;
	bool sched;
	ct_buf *b;
	int tdims;
	int ncomp;
	char **comp;           /* the time's components so far */
	ct_buf ex, cons;       /* existentials and constraints of the bands so far */
	int *order;            /* room for a band order */
	bool any, ok;
} fw;

/* The text of aff x over params (for a window's bounds). */
static char *aff_text(const ct_kernel *k, aff x)
{
	ct_buf b;
	ct_buf_init(&b);
	tx c = {k, &b, NULL, NULL, 0, true};
	put_aff(&c, x);
	char *s = ct_buf_take(&b);
	if (!c.ok) {
		free(s);
		return NULL;
	}
	return s;
}

/* max(T1, max(T2, ...)) (or min) of terms t[0..n) (isl reads max and min): the start of a root
 * over the original indices (the max of its lower terms) or its end. NULL when a term cannot be
 * written. */
static char *extreme_text(const ct_kernel *k, const aff *t, int n, const char *fn)
{
	ct_buf b;
	ct_buf_init(&b);
	bool ok = true;
	for (int j = 1; j < n; j++)
		ct_buf_printf(&b, "%s(", fn);
	for (int j = 0; j < n && ok; j++) {
		char *x = aff_text(k, t[j]);
		ok = x != NULL;
		if (x)
			ct_buf_printf(&b, "%s%s%s", j > 0 ? ", " : "", x, j > 0 ? ")" : "");
		free(x);
	}
	char *s = ct_buf_take(&b);
	if (!ok || !s) {
		free(s);
		return NULL;
	}
	return s;
}

/* Whether an index split off root r's chain (not r) is split with
 * balanced=true: its window is its parent's block, so the ends of the
 * blocks are tracked (f<x>). */
static bool inner_balanced(const ct_kernel *k, int r)
{
	for (int x = k->indices[r].child; x >= 0; x = k->indices[x].child)
		if (k->indices[x].balanced && k->indices[x].step > 1 && k->indices[x].child >= 0)
			return true;
	return false;
}

/* The value w<x> of split index x (step s), relative to the start of its
 * window [S, E) (absolute texts; rest R = o_r - S): w = s*floor(R/s),
 * or with balanced=true (emit_balanced of looptree.c) the window's width
 * W = E - S = q*s + r runs as blocks of s up to B, then blocks of s - 1,
 * where B = (q + 1 - (s - r))*s when r > 0 and that is >= 0, else B = W
 * (the plain split, whose tail the first formula covers too). With ends,
 * f<x> = the end of x's block: min(S + w + its size, E). */
static void put_split(fw *w, int x, const char *S, const char *E, const char *R, bool ends)
{
	const ir_index *ix = &w->d->k->indices[x];
	ct_buf *b = &w->cons;
	long long s = (long long)ix->step;
	if (s < 1) {
		w->ok = false;
		return;
	}
	ct_buf_printf(&w->ex, ", e%d", x);
	if (ends)
		ct_buf_printf(&w->ex, ", f%d", x);
	ct_buf_printf(b, " and 0 <= %s - w%d", R, x);
	if (!ix->balanced || s < 2) {
		ct_buf_printf(b, " and %s - w%d <= %lld and w%d = %lld*e%d", R, x, s - 1, x, s, x);
		if (ends)
			ct_buf_printf(b, " and f%d = min(%s + w%d + %lld, %s)", x, S, x, s, E);
		return;
	}
	ct_buf_printf(&w->ex, ", B%d", x);
	size_t need = strlen(E) + strlen(S) + 8;
	char *Wd = malloc(need);
	if (!Wd) {
		w->ok = false;
		return;
	}
	snprintf(Wd, need, "(%s - %s)", E, S);
	ct_buf_printf(b, " and ((((%s) mod %lld = 0 or floor(%s/%lld) + 1 - %lld + ((%s) mod %lld) < 0) and B%d = %s)"
	                 " or ((%s) mod %lld > 0 and floor(%s/%lld) + 1 - %lld + ((%s) mod %lld) >= 0 and"
	                 " B%d = %lld*floor(%s/%lld) + %lld - %lld*%lld + %lld*((%s) mod %lld)))",
	              Wd, s, Wd, s, s, Wd, s, x, Wd, Wd, s, Wd, s, s, Wd, s, x, s, Wd, s, s, s, s, s, Wd, s);
	free(Wd);
	for (int region = 0; region < 2; region++) {
		long long size = region ? s - 1 : s;
		ct_buf_printf(b, region ? " or (" : " and ((");
		if (region)
			ct_buf_printf(b, "%s >= B%d and w%d = B%d + %lld*e%d", R, x, x, x, size, x);
		else
			ct_buf_printf(b, "%s < B%d and w%d = %lld*e%d", R, x, x, size, x);
		ct_buf_printf(b, " and %s - w%d <= %lld", R, x, size - 1);
		if (ends)
			ct_buf_printf(b, " and f%d = min(%s + w%d + %lld, %s)", x, S, x, size, E);
		ct_buf_putc(b, ')');
	}
	ct_buf_putc(b, ')');
}

/* The existentials and constraints of the split chain of root r: every
 * w<x> relative to the start of its window (the root's: lo; a split-off
 * index's: its parent's block), the last index taking the rest. */
static void put_chain(fw *w, int r, const proj_band *pb)
{
	const ct_kernel *k = w->d->k;
	bool ends = inner_balanced(k, r);
	/* a root starts at the max of its lower terms in the band's order (its own, or projected:
	 * its blocks, when split, count from there); an affine one is never split balanced, so its
	 * end is unused */
	aff zero = aff_const(0);
	proj_bounds bd = proj_root(k, pb, r);
	bool affine = proj_root_affine(k, pb, r);
	char *S = extreme_text(k, bd.los, bd.nlo, "max");
	char *E = affine ? aff_text(k, zero) : extreme_text(k, bd.his, bd.nhi, "min");
	for (int x = r; x >= 0 && S && E && w->ok; x = k->indices[x].child) {
		const ir_index *ix = &k->indices[x];
		size_t n = strlen(S) + 32;
		char *R = malloc(n);
		if (!R)
			break;
		snprintf(R, n, "(o%d - %s)", r, S);
		ct_buf_printf(&w->ex, ", w%d", x);
		if (ix->child < 0) {
			ct_buf_printf(&w->cons, " and w%d = %s", x, R);
			free(R);
			break;
		}
		put_split(w, x, S, E, R, ends);
		free(R);
		/* the next window: this block */
		size_t m = strlen(S) + 32;
		char *S2 = malloc(m), *E2 = malloc(32);
		if (S2)
			snprintf(S2, m, "(%s + w%d)", S, x);
		if (E2)
			snprintf(E2, 32, "f%d", x);
		free(S);
		free(E);
		S = S2;
		E = E2;
	}
	if (!S || !E)
		w->ok = false;
	free(S);
	free(E);
}

static bool push_comp(fw *w, ct_buf *b)
{
	char *s = ct_buf_take(b);
	if (!s)
		return w->ok = false;
	w->comp[w->ncomp++] = s;
	return true;
}

static void pop_comps(fw *w, int to)
{
	while (w->ncomp > to)
		free(w->comp[--w->ncomp]);
}

static void put_form_leaf(fw *w, const ir_node *x)
{
	int s = stmt_of(w->d, x);
	if (s < 0 || w->ncomp > w->tdims) {
		w->ok = false;
		return;
	}
	if (w->d->st[s].skip)
		return;
	ct_buf *b = w->b;
	if (w->any)
		ct_buf_puts(b, "; ");
	w->any = true;
	put_tuple(b, w->d, s);
	ct_buf_puts(b, " -> T[");
	for (int i = 0; i < w->tdims; i++)
		ct_buf_printf(b, "%st%d", i ? ", " : "", i);
	ct_buf_printf(b, "] : exists (z%s : z = 0", w->ex.s ? w->ex.s : "");
	for (int i = 0; i < w->tdims; i++)
		ct_buf_printf(b, " and t%d = %s", i, i < w->ncomp ? w->comp[i] : "0");
	ct_buf_printf(b, "%s)", w->cons.s ? w->cons.s : "");
}

/* Cut buffer b back to length n. */
static void buf_cut(ct_buf *b, size_t n)
{
	if (b->s && n <= b->len) {
		b->len = n;
		b->s[n] = 0;
	}
}

static void form_walk(fw *w, ir_node *const *v, int n, int first_pos)
{
	const ct_kernel *k = w->d->k;
	for (int i = 0; i < n && w->ok; i++) {
		const ir_node *x = v[i];
		int at = w->ncomp;
		size_t ex_at = w->ex.len, cons_at = w->cons.len;
		ct_buf b;
		ct_buf_init(&b);
		ct_buf_printf(&b, "%d", first_pos + i);
		if (!push_comp(w, &b))
			return;
		switch (x->kind) {
		case ND_STMT:
		case ND_LET: put_form_leaf(w, x); break;
		case ND_IF:
			form_walk(w, x->body, x->nbody, 0);
			form_walk(w, x->els, x->nels, x->nbody);
			break;
		case ND_FOR: {
			int m = 0;
			sched_band_order(k, x, w->sched, w->order, &m);
			/* the bounds of the band's roots in its order (the loop tree's) */
			ct_arena pa;
			ct_arena_init(&pa, k->ctx);
			proj_band pb = {false, NULL, -1, ""};
			if (w->sched && k->affine_bounds && proj_band_bounds(k, w->order, m, &pa, &pb) != CT_OK)
				w->ok = false;
			for (int j = 0; j < m && w->ok; j++) {
				int y = w->order[j];
				if (w->ncomp >= w->tdims || y < 0 || y >= k->nindices) {
					w->ok = false;
					break;
				}
				ct_buf_init(&b);
				ct_buf_printf(&b, w->sched ? "w%d" : "o%d", y);
				push_comp(w, &b);
				if (w->sched && k->indices[y].root == y)
					put_chain(w, y, &pb);
			}
			ct_arena_free(&pa);
			const ir_node *in = x;
			while (in->nbody == 1 && in->body[0]->kind == ND_FOR)
				in = in->body[0];
			form_walk(w, in->body, in->nbody, 0);
			break;
		}
		}
		pop_comps(w, at);
		buf_cut(&w->ex, ex_at);
		buf_cut(&w->cons, cons_at);
	}
}

/* Components a statement's time can have: positions and loops (order:
 * room for a band order). */
static int form_depth(const ct_kernel *k, ir_node *const *v, int n, bool sched, int *order)
{
	int m = 0;
	for (int i = 0; i < n; i++) {
		const ir_node *x = v[i];
		int h = 1;
		if (x->kind == ND_IF) {
			int a = form_depth(k, x->body, x->nbody, sched, order), e = form_depth(k, x->els, x->nels, sched, order);
			h += a > e ? a : e;
		} else if (x->kind == ND_FOR) {
			const ir_node *in = x;
			while (in->nbody == 1 && in->body[0]->kind == ND_FOR)
				in = in->body[0];
			int nb = 0;
			sched_band_order(k, x, sched, order, &nb);
			h += nb + form_depth(k, in->body, in->nbody, sched, order);
		}
		m = h > m ? h : m;
	}
	return m;
}

/* The order of k (scheduled or written) as functions; NULL on failure. */
static isl_union_map *form_order(dep_info *d, bool with_schedule)
{
	const ct_kernel *k = d->k;
	ct_ctx *ctx = k->ctx;
	int *room = ct_alloc(ctx, sizeof *room * (size_t)(k->nindices + 1));
	if (!room)
		return NULL;
	int depth = form_depth(k, k->body, k->nbody, with_schedule, room);
	ct_free(ctx, room);
	fw w = {d, with_schedule, NULL, depth, 0, NULL, {NULL, 0, 0, false}, {NULL, 0, 0, false}, NULL, false, true};
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_init(&w.ex);
	ct_buf_init(&w.cons);
	w.b = &b;
	w.comp = ct_alloc(ctx, sizeof *w.comp * (size_t)(depth + 1));
	w.order = ct_alloc(ctx, sizeof *w.order * (size_t)(k->nindices + 1));
	isl_union_map *m = NULL;
	if (w.comp && w.order) {
		put_params(k, &b);
		form_walk(&w, k->body, k->nbody, 0);
		pop_comps(&w, 0);
		ct_buf_puts(&b, " }");
		char *s = ct_buf_take(&b);
		if (s && w.ok)
			m = isl_union_map_read_from_str(d->ictx, s);
		free(s);
	} else {
		ct_buf_free(&b);
	}
	ct_buf_free(&w.ex);
	ct_buf_free(&w.cons);
	ct_free(ctx, w.comp);
	ct_free(ctx, w.order);
	return m;
}

/* ------------------------------------------------------------ accesses */

typedef struct acc_text {
	ct_buf *w_plain, *w_red, *r;
	bool any_wp, any_wr, any_r;
} acc_text;

static void put_access(tx *c, const dep_info *d, int s, const ir_expr *e, ct_buf *b, bool *any)
{
	if (*any)
		ct_buf_puts(b, "; ");
	*any = true;
	put_tuple(b, d, s);
	ct_buf_printf(b, " -> A%d[", e->id);
	c->b = b;
	for (int i = 0; i < d->k->arrays[e->id].rank; i++) {
		if (i)
			ct_buf_puts(b, ", ");
		put_aff(c, e->sub[i]);
	}
	ct_buf_putc(b, ']');
}

static void put_reads(tx *c, const dep_info *d, int s, const ir_expr *e, acc_text *a)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS) {
		/* a read of an array nothing writes meets no write */
		if (d->written[e->id] && !(d->ignore && d->ignore[e->id]))
			put_access(c, d, s, e, a->r, &a->any_r);
		return; /* subscripts are affine: no access inside */
	}
	for (int i = 0; i < e->nargs; i++)
		put_reads(c, d, s, e->args[i], a);
}

static isl_union_map *parse_um(dep_info *d, ct_buf *b, bool ok)
{
	ct_buf_puts(b, " }");
	char *s = ct_buf_take(b);
	isl_union_map *m = s && ok ? isl_union_map_read_from_str(d->ictx, s) : NULL;
	free(s);
	return m;
}

/* ------------------------------------------------------------ dependences */

typedef struct before {
	isl_union_map *order;
	isl_union_map *out;
} before;

static isl_union_set *universe_of(isl_space *sp)
{
	return isl_union_set_from_set(isl_set_universe(sp));
}

/* The pairs of map m (instances of two statements) whose first runs
 * first in the order. */
static isl_stat keep_before(isl_map *m, void *user)
{
	before *b = user;
	isl_space *sp = isl_map_get_space(m);
	isl_union_map *os = isl_union_map_intersect_domain(isl_union_map_copy(b->order),
	                                                  universe_of(isl_space_domain(isl_space_copy(sp))));
	isl_union_map *od = isl_union_map_intersect_domain(isl_union_map_copy(b->order), universe_of(isl_space_range(sp)));
	isl_union_map *lt = isl_union_map_lex_lt_union_map(os, od);
	b->out = isl_union_map_union(b->out, isl_union_map_intersect(lt, isl_union_map_from_map(m)));
	return b->out ? isl_stat_ok : isl_stat_error;
}

/* Pairs x -> y of instances (of dom) where access a of x and access b of
 * y touch one element and x runs before y in order (a function per
 * statement); NULL on error. Takes a and b. */
static isl_union_map *meet_before(isl_union_map *a, isl_union_map *b, isl_union_map *order, isl_union_set *dom)
{
	isl_union_map *c = isl_union_map_apply_range(a, isl_union_map_reverse(b));
	c = isl_union_map_intersect_range(isl_union_map_intersect_domain(c, isl_union_set_copy(dom)),
	                                  isl_union_set_copy(dom));
	before bf = {order, c ? isl_union_map_empty(isl_union_map_get_space(c)) : NULL};
	if (!c || isl_union_map_foreach_map(c, keep_before, &bf) < 0) {
		isl_union_map_free(bf.out);
		bf.out = NULL;
	}
	isl_union_map_free(c);
	return bf.out;
}

/* Whether two reduction statements of the analysis update one array
 * (only then can updates of two statements meet). */
static bool two_reductions(const dep_info *d)
{
	for (int a = 0; a < d->nst; a++)
		for (int b = a + 1; b < d->nst; b++) {
			const dstmt *x = &d->st[a], *y = &d->st[b];
			if (x->reduction && y->reduction && !x->skip && !y->skip && x->node->lhs->id == y->node->lhs->id)
				return true;
		}
	return false;
}

typedef struct split_red {
	isl_union_map *same, *other;
} split_red;

/* Pairs of one statement to same, of two statements to other. */
static isl_stat split_pairs(isl_map *m, void *user)
{
	split_red *r = user;
	const char *a = isl_map_get_tuple_name(m, isl_dim_in), *b = isl_map_get_tuple_name(m, isl_dim_out);
	isl_union_map **to = a && b && strcmp(a, b) == 0 ? &r->same : &r->other;
	*to = isl_union_map_union(*to, isl_union_map_from_map(m));
	return isl_stat_ok;
}

/* The pairs of reduction updates wr of one element, in order sched, split
 * into those of one statement and those of two; false on error. */
static bool reduction_pairs(isl_union_map *wr, isl_union_map *sched, isl_union_set *dom, split_red *sr)
{
	isl_union_map *rr = meet_before(isl_union_map_copy(wr), isl_union_map_copy(wr), sched, dom);
	isl_space *sp = rr ? isl_union_map_get_space(rr) : NULL;
	sr->same = sp ? isl_union_map_empty(isl_space_copy(sp)) : NULL;
	sr->other = sp ? isl_union_map_empty(sp) : NULL;
	bool ok = rr && isl_union_map_foreach_map(rr, split_pairs, sr) >= 0 && sr->same && sr->other;
	isl_union_map_free(rr);
	return ok;
}

/* d->red: pairs of instances of one reduction statement that meet through
 * its left-hand side, in the written order. */
static bool reductions(dep_info *d)
{
	if (d->red)
		return true;
	split_red sr;
	bool ok = reduction_pairs(d->wr, d->sched, d->dom, &sr);
	isl_union_map_free(sr.other);
	d->red = ok ? sr.same : NULL;
	if (!ok)
		isl_union_map_free(sr.same);
	return d->red != NULL;
}

static ct_status isl_failed(dep_info *d, const char *what)
{
	ct_ctx *ctx = d->k->ctx;
	if (isl_ctx_last_error(d->ictx) == isl_error_quota)
		return ct_error(ctx, CT_ERR_LIMIT, "the dependences of kernel '%s' are too complex to analyse (%s)",
		                d->k->name, what);
	const char *msg = isl_ctx_last_error_msg(d->ictx);
	return ct_error(ctx, CT_ERR_UNSUPPORTED, "cannot analyse the dependences of kernel '%s' (%s%s%s)", d->k->name,
	                what, msg ? ": " : "", msg ? msg : "");
}

void dep_free(dep_info *d)
{
	if (!d)
		return;
	ct_ctx *ctx = d->k->ctx;
	for (int i = 0; i < d->nst; i++)
		ct_free(ctx, d->st[i].dims);
	ct_free(ctx, d->st);
	ct_free(ctx, d->written);
	isl_union_set_free(d->dom);
	isl_union_map_free(d->dep);
	isl_union_map_free(d->red);
	isl_union_map_free(d->wr);
	isl_union_map_free(d->sched);
	isl_union_map_free(d->order);
	free(d->order_text);
	if (d->ictx)
		isl_ctx_free(d->ictx);
	ct_free(ctx, d);
}

/* The accesses of every statement as three relations: plain writes,
 * reduction updates, reads. */
static bool build_accesses(dep_info *d, isl_union_map **wp, isl_union_map **wr, isl_union_map **r)
{
	ct_buf b1, b2, b3;
	ct_buf_init(&b1);
	ct_buf_init(&b2);
	ct_buf_init(&b3);
	put_params(d->k, &b1);
	put_params(d->k, &b2);
	put_params(d->k, &b3);
	acc_text a = {&b1, &b2, &b3, false, false, false};
	tx c = {d->k, NULL, NULL, NULL, 0, true};
	for (int s = 0; s < d->nst; s++) {
		const ir_node *n = d->st[s].node;
		if (d->st[s].skip)
			continue;
		if (n->kind == ND_STMT && !(d->ignore && d->ignore[n->lhs->id])) {
			if (d->st[s].reduction)
				put_access(&c, d, s, n->lhs, &b2, &a.any_wr);
			else
				put_access(&c, d, s, n->lhs, &b1, &a.any_wp);
		}
		put_reads(&c, d, s, n->rhs, &a);
	}
	*wp = parse_um(d, &b1, c.ok);
	*wr = parse_um(d, &b2, c.ok);
	*r = parse_um(d, &b3, c.ok);
	return *wp && *wr && *r;
}

/* The order of the band headed by head from its splits alone (the
 * written order, split), as sched_band_order replays them. */
static void split_order(const ct_kernel *k, const ir_node *head, int *order, int *n)
{
	sched_band_order(k, head, false, order, n);
	for (int s = 0; s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		for (int a = 0; sc->kind != SC_REORDER && a < sc->n; a++) {
			int at = -1;
			for (int i = 0; i < *n && at < 0; i++)
				at = order[i] == sc->idx[a] ? i : -1;
			if (at < 0 || sc->out[a] < 0)
				continue;
			memmove(order + at + 2, order + at + 1, sizeof *order * (size_t)(*n - at - 1));
			order[at + 1] = sc->out[a];
			(*n)++;
		}
	}
}

/* Whether original index id lies in a band whose reorders change its order
 * (a reorder that names the order the band already has changes nothing). */
static bool reordered_root(const ct_kernel *k, int id)
{
	if (id < 0 || id >= k->nindices || !k->indices[id].loop)
		return false;
	const ir_node *head = sched_band_head(k, id);
	bool named = false;
	for (int s = 0; s < k->nsched && !named; s++) {
		const ir_sched *sc = &k->sched[s];
		for (int i = 0; sc->kind == SC_REORDER && i < sc->n; i++)
			if (sc->idx[i] >= 0 && sc->idx[i] < k->nindices && k->indices[sc->idx[i]].root == id)
				named = true;
	}
	if (!named || !head)
		return false;
	ct_ctx *ctx = k->ctx;
	size_t ni = (size_t)k->nindices + 1;
	int *a = ct_alloc(ctx, sizeof *a * ni), *b = ct_alloc(ctx, sizeof *b * ni), na = 0, nb = 0;
	bool moved = true; /* when out of memory: analyse it */
	if (a && b) {
		sched_band_order(k, head, true, a, &na);
		split_order(k, head, b, &nb);
		moved = na != nb || memcmp(a, b, sizeof *a * (size_t)na) != 0;
	}
	ct_free(ctx, a);
	ct_free(ctx, b);
	return moved;
}

/* Whether statements a and b share a loop of a reordered band (only then
 * can a schedule change their relative order). */
static bool share_moved_loop(const ct_kernel *k, const dstmt *a, const dstmt *b)
{
	for (int i = 0; i < a->ndims && i < b->ndims && a->dims[i] == b->dims[i]; i++)
		if (reordered_root(k, a->dims[i]))
			return true;
	return false;
}

/* compute's band for the instances and their written order alone (dep_compute_order) */
#define DEP_ORDER_ONLY (-3)

static dep_info *compute(ct_kernel *k, int band, const bool *ignore, const bool *roots);

dep_info *dep_compute(ct_kernel *k)
{
	return compute(k, -1, NULL, NULL);
}

dep_info *dep_compute_roots(ct_kernel *k, const bool *roots)
{
	return compute(k, -1, NULL, roots);
}

dep_info *dep_compute_order(ct_kernel *k)
{
	return compute(k, DEP_ORDER_ONLY, NULL, NULL);
}

/* ignore: per array, or NULL: arrays whose accesses the analysis leaves out.
 * roots: per top-level node of k's body, or NULL: the nests analysed. */
static dep_info *compute(ct_kernel *k, int band, const bool *ignore, const bool *roots)
{
	ct_ctx *ctx = k->ctx;
	dep_info *d = ct_alloc(ctx, sizeof *d);
	if (!d)
		return NULL;
	d->k = k;
	d->band = band;
	d->ignore = ignore;
	d->roots = roots;
	int *dims = ct_alloc(ctx, sizeof *dims * (size_t)(k->nindices + 1));
	bool added = dims != NULL;
	for (int r = 0; added && r < k->nbody; r++) {
		int first = d->nst;
		added = add_stmts(d, k->body + r, 1, dims, 0);
		for (int s = first; added && s < d->nst; s++)
			d->st[s].root = r;
	}
	if (!added) {
		ct_free(ctx, dims);
		dep_free(d);
		ct_error(ctx, CT_ERR_NOMEM, "out of memory analysing the dependences of kernel '%s'", k->name);
		return NULL;
	}
	ct_free(ctx, dims);
	for (int s = 0; s < d->nst; s++) {
		dstmt *st = &d->st[s];
		st->band = -1;
		for (int i = 0; i < st->ndims && st->band < 0; i++)
			if (reordered_root(k, st->dims[i]))
				st->band = st->dims[i];
		st->skip = (band >= 0 && st->band != band) || (roots && !roots[st->root]);
	}
	if (band == -2)
		return d; /* the table only */
	d->ictx = isl_ctx_alloc();
	d->written = ct_alloc(ctx, sizeof *d->written * (size_t)(k->narrays + 1));
	if (!d->ictx || !d->written) {
		dep_free(d);
		return NULL;
	}
	for (int s = 0; s < d->nst; s++)
		if (!d->st[s].skip && d->st[s].node->kind == ND_STMT)
			d->written[d->st[s].node->lhs->id] = true;
	isl_options_set_on_error(d->ictx, ISL_ON_ERROR_CONTINUE);
	isl_ctx_set_max_operations(d->ictx, DEP_MAX_OPS);
	ct_looptree *t = lt_build_loops(k, false);
	if (!t) {
		dep_free(d);
		return NULL;
	}
	int tdims;
	isl_union_map *inst = tree_order(d, t, &tdims);
	ct_looptree_free(t);
	/* the instances from the tree (bounds, ifs), the order as functions */
	isl_union_map *sched = inst ? form_order(d, false) : NULL;
	if (band == DEP_ORDER_ONLY) {
		/* the instances and their order, no dependences (dep_compute_order) */
		d->dom = sched ? isl_union_map_domain(inst) : NULL;
		if (!sched)
			isl_union_map_free(inst);
		d->sched = sched;
		if (!d->dom) {
			isl_failed(d, "the written order");
			dep_free(d);
			return NULL;
		}
		return d;
	}
	isl_union_map *wp = NULL, *wr = NULL, *r = NULL;
	bool ok = sched && build_accesses(d, &wp, &wr, &r);
	if (ok) {
		d->dom = isl_union_map_domain(isl_union_map_copy(inst));
		isl_union_map *w = isl_union_map_union(isl_union_map_copy(wp), isl_union_map_copy(wr));
		isl_union_map *dep = meet_before(isl_union_map_copy(w), isl_union_map_copy(r), sched, d->dom);
		dep = isl_union_map_union(dep, meet_before(isl_union_map_copy(r), isl_union_map_copy(w), sched, d->dom));
		dep = isl_union_map_union(dep, meet_before(isl_union_map_copy(wp), isl_union_map_copy(w), sched, d->dom));
		dep = isl_union_map_union(dep, meet_before(isl_union_map_copy(wr), isl_union_map_copy(wp), sched, d->dom));
		/* updates of one element by two reduction statements keep their
		 * order; those of one statement are the reduction (red) */
		if (two_reductions(d)) {
			split_red sr;
			ok = reduction_pairs(wr, sched, d->dom, &sr);
			dep = isl_union_map_union(dep, sr.other);
			if (ok)
				d->red = sr.same;
			else
				isl_union_map_free(sr.same);
		}
		d->dep = isl_union_map_coalesce(dep);
		isl_union_map_free(w);
		ok = ok && d->dom && d->dep;
	}
	isl_union_map_free(inst);
	d->sched = sched;
	d->wr = wr;
	isl_union_map_free(wp);
	isl_union_map_free(r);
	if (!ok) {
		isl_failed(d, "dependences");
		dep_free(d);
		return NULL;
	}
	return d;
}

/* ------------------------------------------------------------ questions */

void dep_violation_free(ct_ctx *ctx, dep_violation *v)
{
	if (!v)
		return;
	ct_free(ctx, v->src_idx);
	ct_free(ctx, v->dst_idx);
	ct_free(ctx, v->src_at);
	ct_free(ctx, v->dst_at);
	ct_free(ctx, v->params);
	ct_free(ctx, v->param_used);
	memset(v, 0, sizeof *v);
}

/* Statement number of tuple name "S<n>", or -1. */
static int tuple_stmt(const dep_info *d, const char *name)
{
	if (!name || name[0] != 'S')
		return -1;
	char *end;
	long n = strtol(name + 1, &end, 10);
	return *end || n < 0 || n >= d->nst ? -1 : (int)n;
}

typedef struct vsearch {
	dep_info *d;
	isl_union_map *order;
	isl_map *best;        /* broken pairs of the first statement pair */
	int best_dst, best_src;
	bool failed;
} vsearch;

/* The pairs of dependence map m that order does not keep. */
static isl_stat find_broken(isl_map *m, void *user)
{
	vsearch *s = user;
	int src = tuple_stmt(s->d, isl_map_get_tuple_name(m, isl_dim_in));
	int dst = tuple_stmt(s->d, isl_map_get_tuple_name(m, isl_dim_out));
	if (s->d->band >= 0 && src >= 0 && dst >= 0 && !share_moved_loop(s->d->k, &s->d->st[src], &s->d->st[dst])) {
		isl_map_free(m); /* ordered outside every reordered band */
		return isl_stat_ok;
	}
	/* in time: the pairs (time of src, time of dst) against lex >= */
	isl_union_map *tt = isl_union_map_apply_range(
	    isl_union_map_apply_domain(isl_union_map_from_map(isl_map_copy(m)), isl_union_map_copy(s->order)),
	    isl_union_map_copy(s->order));
	isl_map *tm = isl_union_map_n_map(tt) == 1 ? isl_map_from_union_map(isl_union_map_copy(tt)) : NULL;
	isl_union_map_free(tt);
	if (tm) {
		tm = isl_map_intersect(tm, isl_map_lex_ge(isl_space_domain(isl_map_get_space(tm))));
		isl_bool none = tm ? isl_map_is_empty(tm) : isl_bool_error;
		isl_map_free(tm);
		if (none == isl_bool_true) {
			isl_map_free(m);
			return isl_stat_ok;
		}
	}
	isl_union_map *os = isl_union_map_intersect_domain(isl_union_map_copy(s->order),
	                                                  isl_union_set_from_set(isl_map_domain(isl_map_copy(m))));
	isl_union_map *od = isl_union_map_intersect_domain(isl_union_map_copy(s->order),
	                                                  isl_union_set_from_set(isl_map_range(isl_map_copy(m))));
	isl_union_map *ge = isl_union_map_lex_ge_union_map(os, od);
	isl_union_map *bad = isl_union_map_intersect(ge, isl_union_map_from_map(m));
	isl_bool empty = bad ? isl_union_map_is_empty(bad) : isl_bool_error;
	if (empty < 0 || src < 0 || dst < 0) {
		s->failed = true;
	} else if (!empty && (!s->best || dst < s->best_dst || (dst == s->best_dst && src < s->best_src))) {
		isl_map_free(s->best);
		s->best = isl_map_from_union_map(isl_union_map_copy(bad));
		s->best_dst = dst;
		s->best_src = src;
	}
	isl_union_map_free(bad);
	return s->failed ? isl_stat_error : isl_stat_ok;
}

/* Value of coordinate (type, i) of point p, clamped into int64. */
static int64_t point_coord(isl_point *p, enum isl_dim_type type, int i)
{
	isl_val *v = isl_point_get_coordinate_val(p, type, i);
	int64_t r = v && isl_val_is_int(v) ? (int64_t)isl_val_get_num_si(v) : 0;
	isl_val_free(v);
	return r;
}

/* The accesses of statement s (its left-hand side first) into out[]
 * (room for cap), with which of them write; their count. */
static int stmt_accesses(const ir_node *n, const ir_expr **out, bool *write, int cap);

static void collect_reads(const ir_expr *e, const ir_expr **out, bool *write, int cap, int *n)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS) {
		if (*n < cap) {
			out[*n] = e;
			write[*n] = false;
			(*n)++;
		}
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		collect_reads(e->args[i], out, write, cap, n);
}

static int stmt_accesses(const ir_node *n, const ir_expr **out, bool *write, int cap)
{
	int m = 0;
	if (n->kind == ND_STMT && cap > 0) {
		out[m] = n->lhs;
		write[m] = true;
		m++;
	}
	collect_reads(n->rhs, out, write, cap, &m);
	return m;
}

/* Whether access a at index values ia and b at ib touch one element. */
static bool same_element(const ct_kernel *k, const ir_expr *a, const int64_t *ia, const ir_expr *b, const int64_t *ib,
                         const int64_t *params)
{
	if (a->id != b->id)
		return false;
	int rank = k->arrays[a->id].rank;
	for (int dd = 0; dd < rank; dd++) {
		bool ok = true;
		if (aff_eval(a->sub[dd], params, ia, &ok) != aff_eval(b->sub[dd], params, ib, &ok) || !ok)
			return false;
	}
	return true;
}

static void mark_aff(const ct_kernel *k, aff x, bool *used)
{
	for (int i = 0; i < x.n; i++)
		if (x.t[i].kind == AFF_PARAM && x.t[i].id >= 0 && x.t[i].id < k->nparams)
			used[x.t[i].id] = true;
}

/* The params the example depends on: in the bounds of the two
 * statements' loops or the subscripts that meet (the message names
 * those values only). */
static void mark_params(const ct_kernel *k, dep_violation *v)
{
	for (int pass = 0; pass < 2; pass++) {
		const int *idx = pass ? v->src_idx : v->dst_idx;
		int n = pass ? v->nsrc : v->ndst;
		for (int i = 0; i < n; i++) {
			mark_aff(k, k->indices[idx[i]].lo, v->param_used);
			mark_aff(k, k->indices[idx[i]].hi, v->param_used);
		}
		const ir_expr *e = pass ? v->src_acc : v->dst_acc;
		for (int d = 0; e && d < k->arrays[e->id].rank; d++)
			mark_aff(k, e->sub[d], v->param_used);
	}
}

/* Fill v from one pair of broken map m (fixing runtime params first). */
static bool fill_violation(dep_info *d, isl_map *m, dep_violation *v)
{
	const ct_kernel *k = d->k;
	ct_ctx *ctx = k->ctx;
	isl_set *w = isl_map_wrap(m);
	isl_point *pp = isl_set_sample_point(isl_set_params(isl_set_copy(w)));
	v->params = ct_alloc(ctx, sizeof *v->params * (size_t)(k->nparams + 1));
	v->param_used = ct_alloc(ctx, sizeof *v->param_used * (size_t)(k->nparams + 1));
	if (!pp || !v->params || !v->param_used) {
		isl_point_free(pp);
		isl_set_free(w);
		return false;
	}
	ir_param_values(k, v->params);
	isl_size np = isl_set_dim(w, isl_dim_param);
	for (int i = 0; i < np; i++) {
		const char *name = isl_set_get_dim_name(w, isl_dim_param, (unsigned)i);
		int id = name && name[0] == 'P' ? atoi(name + 1) : -1;
		int64_t val = point_coord(pp, isl_dim_param, i);
		if (id >= 0 && id < k->nparams)
			v->params[id] = val;
		w = isl_set_fix_si(w, isl_dim_param, (unsigned)i, (int)val);
	}
	isl_point_free(pp);
	isl_point *p = isl_set_sample_point(isl_set_lexmin(w));
	bool ok = p && !isl_point_is_void(p);
	if (ok) {
		isl_space *sp = isl_point_get_space(p);
		isl_space *un = isl_space_unwrap(sp);
		int src = tuple_stmt(d, isl_space_get_tuple_name(un, isl_dim_in));
		int dst = tuple_stmt(d, isl_space_get_tuple_name(un, isl_dim_out));
		isl_space_free(un);
		ok = src >= 0 && dst >= 0;
		if (ok) {
			const dstmt *a = &d->st[src], *b = &d->st[dst];
			v->src = a->node;
			v->dst = b->node;
			v->nsrc = a->ndims;
			v->ndst = b->ndims;
			size_t ni = (size_t)k->nindices + 1;
			v->src_idx = ct_alloc(ctx, sizeof *v->src_idx * (size_t)(a->ndims + 1));
			v->dst_idx = ct_alloc(ctx, sizeof *v->dst_idx * (size_t)(b->ndims + 1));
			v->src_at = ct_alloc(ctx, sizeof *v->src_at * ni);
			v->dst_at = ct_alloc(ctx, sizeof *v->dst_at * ni);
			ok = v->src_idx && v->dst_idx && v->src_at && v->dst_at;
			for (int i = 0; ok && i < a->ndims; i++) {
				v->src_idx[i] = a->dims[i];
				v->src_at[a->dims[i]] = point_coord(p, isl_dim_set, i);
			}
			for (int i = 0; ok && i < b->ndims; i++) {
				v->dst_idx[i] = b->dims[i];
				v->dst_at[b->dims[i]] = point_coord(p, isl_dim_set, a->ndims + i);
			}
		}
	}
	isl_point_free(p);
	if (!ok)
		return false;
	/* the accesses that meet: one writes, not both the left-hand side of
	 * one reduction statement */
	const ir_expr *sa[64], *sb[64];
	bool wa[64], wb[64];
	int na = stmt_accesses(v->src, sa, wa, 64), nb = stmt_accesses(v->dst, sb, wb, 64);
	int si = stmt_of(d, v->src);
	bool red = v->src == v->dst && si >= 0 && d->st[si].reduction;
	for (int j = 0; j < nb && !v->dst_acc; j++)
		for (int i = 0; i < na && !v->dst_acc; i++) {
			if (!(wa[i] || wb[j]) || (red && i == 0 && j == 0))
				continue;
			if (same_element(k, sa[i], v->src_at, sb[j], v->dst_at, v->params)) {
				v->src_acc = sa[i];
				v->dst_acc = sb[j];
			}
		}
	mark_params(k, v);
	return true;
}

static int order_keeps(dep_info *d, bool sched, dep_violation *v);

int dep_order_keeps(dep_info *d, const ct_looptree *t, dep_violation *v)
{
	return order_keeps(d, t->scheduled, v);
}

/* As dep_order_keeps for k's order with or without the schedule: the
 * closed form of the tree's order (form_order; dep_same_instances tests
 * that the tree runs in it). */
static int order_keeps(dep_info *d, bool sched, dep_violation *v)
{
	isl_bool none = isl_union_map_is_empty(d->dep);
	if (none < 0) {
		isl_failed(d, "the dependences");
		return -1;
	}
	if (none)
		return 1; /* any order will do */
	isl_union_map *order = form_order(d, sched);
	if (!order) {
		isl_failed(d, "the order of the loop tree");
		return -1;
	}
	vsearch s = {d, order, NULL, 0, 0, false};
	if (isl_union_map_foreach_map(d->dep, find_broken, &s) < 0 || s.failed) {
		isl_map_free(s.best);
		isl_union_map_free(order);
		isl_failed(d, "the order of the loop tree");
		return -1;
	}
	isl_union_map_free(order);
	if (!s.best)
		return 1;
	if (v && !fill_violation(d, s.best, v)) {
		dep_violation_free(d->k->ctx, v);
		isl_failed(d, "an example of a broken dependence");
		return -1;
	}
	if (!v)
		isl_map_free(s.best);
	return 0;
}

int dep_same_instances(dep_info *d, const ct_looptree *t)
{
	int tdims;
	isl_union_map *tree = tree_order(d, t, &tdims);
	isl_union_set *dom = tree ? isl_union_map_domain(isl_union_map_copy(tree)) : NULL;
	isl_bool same = dom ? isl_union_set_is_equal(dom, d->dom) : isl_bool_error;
	/* the functions order the instances as the tree does */
	if (same == isl_bool_true) {
		isl_union_map *form = form_order(d, t->scheduled);
		form = isl_union_map_intersect_domain(form, isl_union_set_copy(dom));
		isl_union_map *a = isl_union_map_lex_lt_union_map(isl_union_map_copy(tree), isl_union_map_copy(tree));
		isl_union_map *b = isl_union_map_lex_lt_union_map(isl_union_map_copy(form), form);
		same = a && b ? isl_union_map_is_equal(a, b) : isl_bool_error;
		isl_union_map_free(a);
		isl_union_map_free(b);
	}
	isl_union_set_free(dom);
	isl_union_map_free(tree);
	if (same < 0) {
		isl_failed(d, "the instances of the loop tree");
		return -1;
	}
	return same ? 1 : 0;
}

/* Position of x among its parent's children (else after then). */
static int node_pos(const ct_looptree *t, const lt_node *x)
{
	const lt_node *p = x->parent;
	lt_node *const *v = p ? p->kids : t->roots;
	int n = p ? p->nkids : t->nroots;
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	for (int i = 0; p && i < p->nels; i++)
		if (p->els[i] == x)
			return p->nkids + i;
	return -1;
}

/* The pairs of times T[t0, ..] -> T[u0, ..] (tdims each, over d's runtime
 * params as put_params names them) that both follow the path of positions
 * down to node v (at depth l) and are equal in their first neq dims; NULL
 * on error. Built with isl's calls, not read from a text: a loop question
 * asks for one, and reading it cost as much as the rest of the question. */
static isl_map *path_pairs(dep_info *d, const ct_looptree *t, const lt_node *v, int l, int tdims, int neq)
{
	const ct_kernel *k = d->k;
	int np = 0;
	for (int p = 0; p < k->nparams; p++)
		np += k->params[p].runtime;
	isl_space *sp = isl_space_alloc(d->ictx, (unsigned)np, (unsigned)tdims, (unsigned)tdims);
	for (int p = 0, i = 0; sp && p < k->nparams; p++) {
		if (!k->params[p].runtime)
			continue;
		char nm[24];
		snprintf(nm, sizeof nm, "P%d", p);
		sp = isl_space_set_dim_id(sp, isl_dim_param, (unsigned)i++, isl_id_alloc(d->ictx, nm, NULL));
	}
	sp = isl_space_set_tuple_name(sp, isl_dim_in, "T");
	sp = isl_space_set_tuple_name(sp, isl_dim_out, "T");
	isl_map *m = isl_map_universe(sp);
	int lev = l;
	for (const lt_node *y = v; y && m; y = y->parent, lev--) {
		if (2 * lev >= tdims) {
			isl_map_free(m);
			return NULL;
		}
		m = isl_map_fix_si(m, isl_dim_in, (unsigned)(2 * lev), node_pos(t, y));
		m = isl_map_fix_si(m, isl_dim_out, (unsigned)(2 * lev), node_pos(t, y));
	}
	for (int i = 0; i < neq && i < tdims && m; i++)
		m = isl_map_equate(m, isl_dim_in, i, isl_dim_out, i);
	return m;
}

int dep_loop_carries(dep_info *d, const ct_looptree *t, const lt_node *x, bool with_reductions)
{
	if (!x || x->kind != LT_LOOP)
		return -1;
	int tdims;
	/* only the instances under x: the pairs asked about are there */
	isl_union_map *order = tree_order_under(d, t, x, &tdims);
	if (!order) {
		isl_failed(d, "the order of the loop tree");
		return -1;
	}
	int l = 0;
	for (const lt_node *y = x->parent; y; y = y->parent)
		l++;
	/* pairs of times in one iteration of the loops around x (the same
	 * path of positions down to x) and different iterations of x */
	isl_map *eq = path_pairs(d, t, x, l, tdims, 2 * l + 1);
	isl_map *lt = eq ? isl_map_order_lt(isl_map_copy(eq), isl_dim_in, 2 * l + 1, isl_dim_out, 2 * l + 1) : NULL;
	isl_map *gt = eq ? isl_map_order_gt(eq, isl_dim_in, 2 * l + 1, isl_dim_out, 2 * l + 1) : NULL;
	isl_union_map *same = NULL;
	if (lt && gt) {
		same = isl_union_map_from_map(isl_map_union(lt, gt)); /* takes both */
	} else {
		isl_map_free(lt);
		isl_map_free(gt);
	}
	if (with_reductions && !reductions(d)) {
		isl_union_map_free(same);
		isl_union_map_free(order);
		isl_failed(d, "the reductions");
		return -1;
	}
	isl_union_map *dd = isl_union_map_copy(d->dep);
	if (with_reductions)
		dd = isl_union_map_union(dd, isl_union_map_copy(d->red));
	isl_union_map *tt = isl_union_map_apply_range(isl_union_map_apply_domain(dd, isl_union_map_copy(order)), order);
	tt = isl_union_map_intersect(tt, same);
	isl_bool empty = tt ? isl_union_map_is_empty(tt) : isl_bool_error;
	isl_union_map_free(tt);
	if (empty < 0) {
		isl_failed(d, "the dependences of a loop");
		return -1;
	}
	return empty ? 0 : 1;
}

/* ------------------------------------------------------------ temps private to a loop's iterations */

/* Pairs of times T -> T in one iteration of loop x or of a version of it
 * (a sibling over the same index: a split's main and tail), the loops
 * around it at one iteration too; NULL on error. */
static isl_union_map *same_iteration(dep_info *d, const ct_looptree *t, const lt_node *x, int tdims)
{
	int l = 0;
	for (const lt_node *y = x->parent; y; y = y->parent)
		l++;
	lt_node *const *sib = x->parent ? x->parent->kids : t->roots;
	int nsib = x->parent ? x->parent->nkids : t->nroots;
	isl_map *m = NULL;
	for (int j = 0; j < nsib; j++) {
		const lt_node *v = sib[j];
		if (v != x && (v->kind != LT_LOOP || v->index != x->index))
			continue;
		isl_map *one = path_pairs(d, t, v, l, tdims, 2 * l + 2);
		if (!one) {
			isl_map_free(m);
			return NULL;
		}
		m = m ? isl_map_union(m, one) : one;
	}
	return m ? isl_union_map_from_map(m) : NULL;
}

#define DEP_MAX_PRIVATE_READS 64

/* The reads of array a in expression e, in the order they are written (their access nodes, up to
 * cap; -1 past it). */
static int read_nodes(const ir_expr *e, int a, const ir_expr **list, int n, int cap)
{
	if (!e || n < 0)
		return n;
	if (e->kind == EX_ACCESS) {
		if (e->id != a)
			return n;
		if (n >= cap)
			return -1;
		list[n] = e;
		return n + 1;
	}
	for (int i = 0; i < e->nargs && n >= 0; i++)
		n = read_nodes(e->args[i], a, list, n, cap);
	return n;
}

/* The relation of access e of statement s (instance -> element) as isl text; NULL when out of
 * memory. */
static char *access_text(tx *c, const dep_info *d, int s, const ir_expr *e)
{
	ct_buf b;
	ct_buf_init(&b);
	put_params(d->k, &b);
	bool any = false;
	put_access(c, d, s, e, &b, &any);
	ct_buf_puts(&b, " }");
	return ct_buf_take(&b);
}

/* The reads of array a in expression e of statement s into list (one
 * relation each, instance -> element), at n < cap; -1 past cap or out of memory. */
static int array_reads(tx *c, const dep_info *d, int s, const ir_expr *e, int a, char **list, int n, int cap)
{
	const ir_expr *nodes[DEP_MAX_PRIVATE_READS];
	int room = cap - n < DEP_MAX_PRIVATE_READS ? cap - n : DEP_MAX_PRIVATE_READS;
	int m = n >= 0 && room >= 0 ? read_nodes(e, a, nodes, 0, room) : -1;
	for (int i = 0; i < m; i++) {
		list[n] = access_text(c, d, s, nodes[i]);
		if (!list[n])
			return -1;
		n++;
	}
	return m < 0 ? -1 : n;
}

/* Map m : T -> X with its domain's times only (tuple T). */
static isl_union_map *in_time(isl_union_map *m, isl_union_map *order)
{
	return isl_union_map_apply_domain(m, isl_union_map_copy(order));
}

/* The writes of array a over the whole kernel (instance -> element), read with c; *any says
 * whether there is one; NULL when c failed or isl did. */
static isl_union_map *array_writes(dep_info *d, tx *c, int a, bool *any)
{
	ct_buf wb;
	ct_buf_init(&wb);
	put_params(d->k, &wb);
	*any = false;
	for (int s = 0; s < d->nst; s++) {
		const ir_node *n = d->st[s].node;
		if (n->kind == ND_STMT && n->lhs->id == a)
			put_access(c, d, s, n->lhs, &wb, any);
	}
	return parse_um(d, &wb, c->ok);
}

int dep_temp_private(dep_info *d, const ct_looptree *t, const lt_node *x, int a)
{
	const ct_kernel *k = d->k;
	if (!x || x->kind != LT_LOOP || a < 0 || a >= k->narrays || k->arrays[a].role != CT_TEMP)
		return -1;
	char *reads[DEP_MAX_PRIVATE_READS];
	int nr = 0;
	bool anyw = false;
	tx c = {k, NULL, NULL, NULL, 0, true};
	isl_union_map *w = array_writes(d, &c, a, &anyw);
	if (w && !anyw) /* never written: nothing to keep private */
		w = isl_union_map_free(w);
	for (int s = 0; s < d->nst && nr >= 0; s++) {
		const ir_node *n = d->st[s].node;
		if (n->kind == ND_STMT && n->lhs->id == a && n->op != AS_SET) /* an update reads the old value */
			nr = array_reads(&c, d, s, n->lhs, a, reads, nr, DEP_MAX_PRIVATE_READS);
		nr = array_reads(&c, d, s, n->rhs, a, reads, nr, DEP_MAX_PRIVATE_READS);
	}
	if (w && !c.ok) /* a read the relations cannot state */
		w = isl_union_map_free(w);
	int tdims = 0;
	isl_union_map *order = w && nr >= 0 ? tree_order(d, t, &tdims) : NULL;
	isl_union_map *same = order ? same_iteration(d, t, x, tdims) : NULL;
	int r = same ? 1 : -1;
	isl_union_map *wt = same ? in_time(isl_union_map_copy(w), order) : NULL;
	isl_union_set *under = same ? isl_union_map_domain(isl_union_map_copy(same)) : NULL;
	/* every write of a in the kernel lies under x (outside x there is only the shared copy) */
	if (r == 1) {
		isl_union_set *wd = wt ? isl_union_map_domain(isl_union_map_copy(wt)) : NULL;
		isl_bool in = wd && under ? isl_union_set_is_subset(wd, under) : isl_bool_error;
		isl_union_set_free(wd); /* is_subset keeps its arguments */
		r = in < 0 ? -1 : in ? 1 : 0;
	}
	isl_union_map *lt = NULL;
	if (r == 1) {
		isl_space *sp = isl_space_set_tuple_name(isl_space_set_alloc(d->ictx, 0, (unsigned)tdims), isl_dim_set, "T");
		lt = isl_union_map_intersect(isl_union_map_from_map(isl_map_lex_lt(sp)), isl_union_map_copy(same));
		r = lt ? 1 : -1;
	}
	/* every read has a write of its element earlier in its own iteration of x */
	for (int i = 0; i < nr && r == 1; i++) {
		isl_union_map *rd = isl_union_map_read_from_str(d->ictx, reads[i]);
		isl_union_map *rt = rd ? in_time(rd, order) : NULL;
		isl_union_set *need = rt ? isl_union_map_domain(isl_union_map_copy(rt)) : NULL;
		isl_union_map *pairs = rt ? isl_union_map_apply_range(isl_union_map_copy(wt), isl_union_map_reverse(rt)) : NULL;
		pairs = pairs ? isl_union_map_intersect(pairs, isl_union_map_copy(lt)) : NULL;
		isl_union_set *covered = pairs ? isl_union_map_range(pairs) : NULL;
		isl_bool in = need && covered ? isl_union_set_is_subset(need, covered) : isl_bool_error;
		isl_union_set_free(need);
		isl_union_set_free(covered);
		r = in < 0 ? -1 : in ? 1 : 0;
	}
	for (int i = 0; i < nr; i++)
		free(reads[i]);
	isl_union_map_free(lt);
	isl_union_set_free(under);
	isl_union_map_free(wt);
	isl_union_map_free(same);
	isl_union_map_free(order);
	isl_union_map_free(w);
	if (r < 0)
		isl_failed(d, "a temp's accesses");
	return r;
}

/* Whether every instance of read rd (a map instance -> element) meets a write of w by an earlier
 * instance in d's written order: 1, 0, -1 on error. Takes rd. */
static int read_covered(dep_info *d, isl_union_map *w, isl_union_map *rd)
{
	isl_union_set *need = rd ? isl_union_map_domain(isl_union_map_intersect_domain(
	                               isl_union_map_copy(rd), isl_union_set_copy(d->dom)))
	                         : NULL;
	isl_union_map *pairs = rd ? meet_before(isl_union_map_copy(w), rd, d->sched, d->dom) : NULL;
	isl_union_set *covered = pairs ? isl_union_map_range(pairs) : NULL;
	isl_bool in = need && covered ? isl_union_set_is_subset(need, covered) : isl_bool_error;
	isl_union_set_free(need);
	isl_union_set_free(covered);
	return in < 0 ? -1 : in ? 1 : 0;
}

int dep_reads_written(dep_info *d, int a)
{
	const ct_kernel *k = d ? d->k : NULL;
	if (!k || a < 0 || a >= k->narrays || !d->dom || !d->sched)
		return -1;
	bool anyw = false;
	tx c = {k, NULL, NULL, NULL, 0, true};
	isl_union_map *w = array_writes(d, &c, a, &anyw);
	if (!w) {
		isl_failed(d, "an array's first reads");
		return -1;
	}
	int r = 1;
	for (int s = 0; s < d->nst && r == 1; s++) {
		const ir_node *n = d->st[s].node;
		const ir_expr *reads[DEP_MAX_PRIVATE_READS + 1];
		int nr = 0;
		if (n->kind == ND_STMT && n->lhs->id == a && n->op != AS_SET)
			reads[nr++] = n->lhs; /* an update reads the old value */
		nr = read_nodes(n->rhs, a, reads, nr, DEP_MAX_PRIVATE_READS + 1);
		for (int i = 0; i < nr && r == 1; i++) {
			char *txt = access_text(&c, d, s, reads[i]);
			isl_union_map *rd = txt && c.ok ? isl_union_map_read_from_str(d->ictx, txt) : NULL;
			free(txt);
			r = rd ? read_covered(d, w, rd) : -1;
		}
		if (nr < 0)
			r = -1;
	}
	isl_union_map_free(w);
	if (r < 0)
		isl_failed(d, "an array's first reads");
	return r;
}

int dep_loop_carries_private(dep_info *d, const ct_looptree *t, const lt_node *x, bool with_reductions, bool *priv)
{
	ct_kernel *k = d ? d->k : NULL;
	if (!k)
		return -1;
	for (int a = 0; priv && a < k->narrays; a++)
		priv[a] = false;
	int c = dep_loop_carries(d, t, x, with_reductions);
	if (c != 1)
		return c;
	bool *ign = ct_alloc(k->ctx, sizeof *ign * (size_t)(k->narrays + 1));
	if (!ign)
		return -1;
	bool any = false;
	for (int a = 0; a < k->narrays; a++) {
		ign[a] = k->arrays[a].role == CT_TEMP && d->written[a] && dep_temp_private(d, t, x, a) == 1;
		any = any || ign[a];
	}
	ct_ctx_clear_error(k->ctx); /* an unproved temp is shared; the refusal says more */
	if (any) {
		dep_info *e = compute(k, -1, ign, d->roots);
		c = e ? dep_loop_carries(e, t, x, with_reductions) : -1;
		dep_free(e);
		for (int a = 0; priv && c == 0 && a < k->narrays; a++)
			priv[a] = ign[a];
	}
	ct_free(k->ctx, ign);
	return c;
}

/* Whether node x is y or lies under it. */
static bool node_under(const ir_node *y, const ir_node *x)
{
	if (x == y)
		return true;
	for (int i = 0; i < y->nbody; i++)
		if (node_under(y->body[i], x))
			return true;
	for (int i = 0; i < y->nels; i++)
		if (node_under(y->els[i], x))
			return true;
	return false;
}

typedef struct parts_walk {
	dep_info *d;
	int *part;     /* per statement: the part it lies under, -1: none */
	int keep;
	bool broken, failed;
} parts_walk;

/* A dependence map of one statement pair that runs from a later part to
 * an earlier one (with the kept indices equal) breaks the distribution. */
static isl_stat parts_pair(isl_map *m, void *user)
{
	parts_walk *w = user;
	int a = tuple_stmt(w->d, isl_map_get_tuple_name(m, isl_dim_in));
	int b = tuple_stmt(w->d, isl_map_get_tuple_name(m, isl_dim_out));
	if (a < 0 || b < 0) {
		w->failed = true;
		isl_map_free(m);
		return isl_stat_error;
	}
	int pa = w->part[a], pb = w->part[b];
	if (pa < 0 || pb < 0 || pa <= pb || w->broken) {
		isl_map_free(m);
		return isl_stat_ok;
	}
	for (int i = 0; i < w->keep && i < w->d->st[a].ndims && i < w->d->st[b].ndims; i++)
		m = isl_map_equate(m, isl_dim_in, i, isl_dim_out, i);
	isl_bool empty = m ? isl_map_is_empty(m) : isl_bool_error;
	isl_map_free(m);
	if (empty < 0) {
		w->failed = true;
		return isl_stat_error;
	}
	w->broken = w->broken || !empty;
	return isl_stat_ok;
}

int dep_parts_ordered(dep_info *d, ir_node *const *parts, int nparts, int keep)
{
	if (!d || !parts || nparts < 1)
		return -1;
	ct_ctx *ctx = d->k->ctx;
	parts_walk w = {d, ct_alloc(ctx, sizeof(int) * (size_t)(d->nst + 1)), keep, false, false};
	if (!w.part)
		return -1;
	for (int s = 0; s < d->nst; s++) {
		w.part[s] = -1;
		for (int p = 0; p < nparts && w.part[s] < 0; p++)
			if (node_under(parts[p], d->st[s].node))
				w.part[s] = p;
	}
	isl_stat r = isl_union_map_foreach_map(d->dep, parts_pair, &w);
	ct_free(ctx, w.part);
	if (r < 0 || w.failed) {
		isl_failed(d, "the dependences of a distribution");
		return -1;
	}
	return w.broken ? 0 : 1;
}

/* ------------------------------------------------------------ messages */

static const char *index_name(const ct_kernel *k, int id)
{
	return id >= 0 && id < k->nindices ? k->indices[id].name : "?";
}

static void put_named_aff(const ct_kernel *k, ct_buf *b, aff x)
{
	bool first = true;
	for (int i = 0; i < x.n; i++) {
		const aff_term *tm = &x.t[i];
		const char *name = tm->kind == AFF_INDEX ? index_name(k, tm->id)
		                   : tm->id >= 0 && tm->id < k->nparams ? k->params[tm->id].name
		                                                        : "?";
		int64_t c = tm->coef;
		if (!first)
			ct_buf_puts(b, c < 0 ? "-" : "+");
		else if (c < 0)
			ct_buf_putc(b, '-');
		if (c != 1 && c != -1)
			ct_buf_printf(b, "%lld*", (long long)(c < 0 ? -(c + 1) + 1 : c));
		ct_buf_puts(b, name);
		first = false;
	}
	if (first)
		ct_buf_printf(b, "%lld", (long long)x.c);
	else if (x.c)
		ct_buf_printf(b, "%s%lld", x.c < 0 ? "-" : "+", (long long)(x.c < 0 ? -(x.c + 1) + 1 : x.c));
}

static void put_element(const ct_kernel *k, ct_buf *b, const ir_expr *e)
{
	const ir_array *a = &k->arrays[e->id];
	ct_buf_printf(b, "%s[", a->name);
	for (int i = 0; i < a->rank; i++) {
		if (i)
			ct_buf_puts(b, ", ");
		put_named_aff(k, b, e->sub[i]);
	}
	ct_buf_putc(b, ']');
}

static bool has_idx(const int *v, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

void dep_violation_text(const ct_kernel *k, const dep_violation *v, ct_buf *b)
{
	ct_buf_puts(b, "iteration (");
	for (int i = 0; i < v->ndst; i++)
		ct_buf_printf(b, "%s%s", i ? ", " : "", index_name(k, v->dst_idx[i]));
	ct_buf_puts(b, ") of ");
	if (v->dst_acc)
		put_element(k, b, v->dst_acc);
	else
		ct_buf_printf(b, "the statement at %d:%d", v->dst->pos.line, v->dst->pos.col);
	ct_buf_puts(b, " must run after (");
	for (int i = 0; i < v->nsrc; i++) {
		int id = v->src_idx[i];
		const char *name = index_name(k, id);
		ct_buf_puts(b, i ? ", " : "");
		if (has_idx(v->dst_idx, v->ndst, id)) {
			int64_t off = v->src_at[id] - v->dst_at[id];
			if (off)
				ct_buf_printf(b, "%s%s%lld", name, off < 0 ? "-" : "+", (long long)(off < 0 ? -off : off));
			else
				ct_buf_puts(b, name);
		} else {
			ct_buf_printf(b, "%s=%lld", name, (long long)v->src_at[id]);
		}
	}
	ct_buf_putc(b, ')');
	if (v->src != v->dst && v->src_acc) {
		ct_buf_puts(b, " of ");
		put_element(k, b, v->src_acc);
	}
	ct_buf_puts(b, ", e.g. ");
	for (int pass = 0; pass < 2; pass++) {
		const int *idx = pass ? v->src_idx : v->dst_idx;
		const int64_t *at = pass ? v->src_at : v->dst_at;
		int n = pass ? v->nsrc : v->ndst;
		if (pass)
			ct_buf_puts(b, " after ");
		ct_buf_putc(b, '(');
		for (int i = 0; i < n; i++)
			ct_buf_printf(b, "%s%s=%lld", i ? ", " : "", index_name(k, idx[i]), (long long)at[idx[i]]);
		ct_buf_putc(b, ')');
	}
	bool any = false;
	for (int p = 0; p < k->nparams; p++) {
		if (!k->params[p].runtime || !v->param_used || !v->param_used[p])
			continue;
		ct_buf_printf(b, "%s%s=%lld", any ? ", " : " with ", k->params[p].name, (long long)v->params[p]);
		any = true;
	}
}

/* ------------------------------------------------------------ the check */

static bool sched_names_root(const ct_kernel *k, const ir_sched *sc, const int *roots, int n)
{
	for (int i = 0; i < sc->n; i++) {
		int x = sc->idx[i];
		if (x >= 0 && x < k->nindices && has_idx(roots, n, k->indices[x].root))
			return true;
	}
	return false;
}

/* The reorder to blame for a broken dependence: the last one of the band
 * of the later statement (else of the earlier one, else the last one). */
static const ir_sched *blame(const ct_kernel *k, const dep_violation *v)
{
	const ir_sched *last = NULL, *dst = NULL, *src = NULL;
	for (int s = 0; s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		if (sc->kind != SC_REORDER)
			continue;
		last = sc;
		if (v && sched_names_root(k, sc, v->dst_idx, v->ndst))
			dst = sc;
		if (v && sched_names_root(k, sc, v->src_idx, v->nsrc))
			src = sc;
	}
	return dst ? dst : src ? src : last;
}

static void put_sched(const ct_kernel *k, const ir_sched *sc, ct_buf *b)
{
	ct_buf_puts(b, "reorder(");
	for (int i = 0; i < sc->n; i++)
		ct_buf_printf(b, "%s%s", i ? ", " : "", index_name(k, sc->idx[i]));
	ct_buf_putc(b, ')');
}

/* Whether band id (a statement's band) is already among those of
 * statements before s. */
static bool band_seen(const dep_info *all, int s)
{
	for (int i = 0; i < s; i++)
		if (all->st[i].band == all->st[s].band)
			return true;
	return false;
}

/* Check each reordered band on its own (a schedule orders two statements
 * differently only when they share a loop of a reordered band): 1 kept,
 * 0 broken (v filled), -1 error. */
static int check_bands(ct_kernel *k, dep_violation *v)
{
	dep_info *all = compute(k, -2, NULL, NULL); /* -2: no statement analysed, only the table */
	if (!all)
		return -1;
	int r = 1;
	for (int s = 0; s < all->nst && r == 1; s++) {
		if (all->st[s].band < 0 || band_seen(all, s))
			continue;
		dep_info *d = compute(k, all->st[s].band, NULL, NULL);
		r = d ? order_keeps(d, true, v) : -1;
		dep_free(d);
	}
	dep_free(all);
	return r;
}

ct_status dep_check_schedule(ct_kernel *k)
{
	const ir_sched *any = blame(k, NULL);
	if (!any)
		return CT_OK; /* splits alone keep the order */
	ct_ctx *ctx = k->ctx;
	dep_violation v;
	memset(&v, 0, sizeof v);
	int r = check_bands(k, &v);
	if (r == 1)
		return CT_OK;
	ct_buf b;
	ct_buf_init(&b);
	const ir_sched *sc = r == 0 ? blame(k, &v) : any;
	put_sched(k, sc, &b);
	if (r == 0) {
		ct_buf_puts(&b, ": ");
		dep_violation_text(k, &v, &b);
	} else {
		ct_buf_printf(&b, ": cannot prove that the new order keeps the dependences (%s)",
		              ct_ctx_last_message(ctx));
	}
	dep_violation_free(ctx, &v);
	char *msg = ct_buf_take(&b);
	ct_status st = ct_error_at(ctx, r != 0 && ct_ctx_last_status(ctx) == CT_ERR_NOMEM ? CT_ERR_NOMEM : CT_ERR_INPUT,
	                           k->file, sc->pos.line, sc->pos.col, "%s", msg ? msg : "out of memory");
	free(msg);
	return st;
}

/* ------------------------------------------------------------ rewrites */

/* The text "S<s'>[x0, ..] -> S<old>[..]; .." of the correspondence of a
 * rewrite's statements (dep_rewrite_keeps) into b; false when a map is
 * not a permutation of the dims. */
static bool put_correspondence(const dep_info *d, const dep_info *n, const int *old_stmt,
                               int *const *old_dim, ct_buf *b)
{
	for (int s = 0; s < n->nst; s++) {
		int o = old_stmt[s];
		if (o < 0 || o >= d->nst || d->st[o].ndims != n->st[s].ndims)
			return false;
		ct_buf_printf(b, "%sS%d[", s ? "; " : "", s);
		for (int p = 0; p < n->st[s].ndims; p++)
			ct_buf_printf(b, "%sx%d", p ? ", " : "", p);
		ct_buf_printf(b, "] -> S%d[", o);
		for (int q = 0; q < d->st[o].ndims; q++) {
			int p = 0;
			while (p < n->st[s].ndims && old_dim[s][p] != q)
				p++;
			if (p == n->st[s].ndims)
				return false;
			ct_buf_printf(b, "%sx%d", q ? ", " : "", p);
		}
		ct_buf_putc(b, ']');
	}
	return true;
}

/* Access relation m of the rewrite (another isl context) as the original's statements see it:
 * read again in d's context, through the correspondence map. NULL on error. */
static isl_union_map *carried(dep_info *d, isl_union_map *m, isl_union_map *map)
{
	char *text = m ? isl_union_map_to_str(m) : NULL;
	isl_union_map *r = text ? isl_union_map_read_from_str(d->ictx, text) : NULL;
	free(text);
	return r ? isl_union_map_apply_domain(r, isl_union_map_copy(map)) : NULL;
}

/* Whether each instance of rewrite n accesses what its original instance does (writes, updates
 * and reads alike): 1, 0, -1 on error. */
static int same_accesses(dep_info *d, dep_info *n, isl_union_map *map)
{
	isl_union_map *a[3] = {NULL, NULL, NULL}, *b[3] = {NULL, NULL, NULL};
	bool built = build_accesses(d, &a[0], &a[1], &a[2]) && build_accesses(n, &b[0], &b[1], &b[2]);
	int r = built ? 1 : -1;
	for (int i = 0; i < 3; i++) {
		isl_union_map *c = built ? carried(d, b[i], map) : NULL;
		isl_bool eq = c ? isl_union_map_is_equal(a[i], c) : isl_bool_error;
		if (r == 1)
			r = eq == isl_bool_true ? 1 : eq == isl_bool_false ? 0 : -1;
		isl_union_map_free(c);
		isl_union_map_free(a[i]);
		isl_union_map_free(b[i]);
	}
	return r;
}

int dep_stmt_count(const dep_info *d)
{
	return d ? d->nst : 0;
}

int dep_stmt_number(const dep_info *d, const ir_node *n, int *ndims)
{
	int s = d ? stmt_of(d, n) : -1;
	if (ndims)
		*ndims = s >= 0 ? d->st[s].ndims : 0;
	return s;
}

int dep_rewrite_keeps(dep_info *d, ct_kernel *nk, const int *old_stmt, int *const *old_dim)
{
	if (!d->dep || !reductions(d)) {
		isl_failed(d, "the dependences");
		return -1;
	}
	dep_info *n = dep_compute_order(nk);
	if (!n)
		return -1;
	int r = -1;
	char *order_text = NULL, *dom_text = NULL, *map_text = NULL;
	isl_union_map *map = NULL, *order = NULL, *deps = NULL;
	isl_union_set *dom = NULL;
	/* every statement exactly once */
	bool *seen = ct_alloc(d->k->ctx, sizeof *seen * (size_t)(d->nst + 1));
	bool ok = seen && n->nst == d->nst;
	for (int s = 0; ok && s < n->nst; s++) {
		ok = old_stmt[s] >= 0 && old_stmt[s] < d->nst && !seen[old_stmt[s]];
		if (ok)
			seen[old_stmt[s]] = true;
	}
	ct_free(d->k->ctx, seen);
	ct_buf b;
	ct_buf_init(&b);
	put_params(d->k, &b);
	if (!ok || !put_correspondence(d, n, old_stmt, old_dim, &b)) {
		ct_buf_free(&b);
		dep_free(n);
		return 0;
	}
	ct_buf_puts(&b, " }");
	map_text = ct_buf_take(&b);
	/* the rewrite's order and instances, read again in d's isl context */
	order_text = isl_union_map_to_str(n->sched);
	dom_text = isl_union_set_to_str(n->dom);
	if (map_text && order_text && dom_text) {
		map = isl_union_map_read_from_str(d->ictx, map_text);
		order = isl_union_map_read_from_str(d->ictx, order_text);
		dom = isl_union_set_read_from_str(d->ictx, dom_text);
	}
	int acc = map ? same_accesses(d, n, map) : -1;
	dep_free(n);
	if (acc == 0)
		r = 0;
	else if (acc == 1 && map && order && dom) {
		order = isl_union_map_apply_domain(order, isl_union_map_copy(map));
		dom = isl_union_set_apply(dom, isl_union_map_copy(map));
		isl_bool same = dom ? isl_union_set_is_equal(dom, d->dom) : isl_bool_error;
		if (same == isl_bool_false) {
			r = 0;
		} else if (same == isl_bool_true && order) {
			/* every dependence, and every pair of one reduction's updates, in order */
			deps = isl_union_map_union(isl_union_map_copy(d->dep), isl_union_map_copy(d->red));
			vsearch s = {d, order, NULL, 0, 0, false};
			if (deps && isl_union_map_foreach_map(deps, find_broken, &s) >= 0 && !s.failed)
				r = s.best ? 0 : 1;
			isl_map_free(s.best);
		}
	}
	free(map_text);
	free(order_text);
	free(dom_text);
	isl_union_map_free(map);
	isl_union_map_free(order);
	isl_union_map_free(deps);
	isl_union_set_free(dom);
	if (r < 0)
		isl_failed(d, "a rewrite's order");
	return r;
}
