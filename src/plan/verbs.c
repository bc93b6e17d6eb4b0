/* verbs.c: the plan's loop verbs (unroll, vectorize, parallelize): checked on the planned loop tree and marked on its loops. */
#include "plan/plan.h"
#include "ir/deps.h"
#include "ir/targets.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The verbs run after the caches are placed, on the tree the backends read,
 * so that every check sees the accesses as they will run: a cache buffer's
 * layout decides contiguity, and a buffer whose region lies inside a
 * parallel loop belongs to each thread. Each check is sufficient, not
 * exact: a verb that cannot be proved safe is an error, never a wrong
 * kernel. plan(target=host) runs here; plan(target=opencl) too for unroll
 * and vectorize (its parallelize is the NDRange mapping of oclgen.c).
 *
 *   unroll(x)       every loop over x has a constant trip count of at most
 *                   PLAN_MAX_UNROLL, except loops in the tail version of a
 *                   runtime-sized split, which stay loops;
 *   unroll(x, by=n) nothing to check: every loop over x is marked for the C
 *                   compiler to unroll n times (the loop and its bounds stay);
 *   vectorize(x)    every loop over x holds only statements, lets and ifs
 *                   (and, on the host, loops that unroll(y) unrolls
 *                   completely: their copies jammed into x, each copy of a
 *                   reduction its own accumulators);
 *                   every access moves with x only in its contiguous
 *                   dimension, by 1; every storage written there is
 *                   accessed at one subscript that moves with x, or is a
 *                   reduction over x: `+=` / `-=` of an element that does
 *                   not move with x, its array accessed nowhere else under
 *                   x unless isl proves the accesses apart (not for float
 *                   reductions under plan(strict=true), nor on the GPU
 *                   targets);
 *   parallelize(x, y, ...)
 *                   the loops are consecutive (y's loops are the whole body
 *                   of x's); nested as single loops they are collapsed; the
 *                   iterations are independent: for each storage written
 *                   inside (other than the buffers of regions inside, which
 *                   become per-thread) and each parallel index p, one
 *                   dimension is subscripted alike by every access, moves
 *                   by a from one iteration of p to the next, and its other
 *                   moving terms span less than |a|; one parallel loop is
 *                   not inside another.
 */

typedef struct vb {
	ct_looptree *t;
	ct_kernel *k;
	ct_arena *a;
	int item;               /* the plan item being applied */
	const ir_plan_item *it;
	int *verb_of;           /* per kernel index: the item that names it, or -1 */
	bool *tpriv;            /* per storage: a kernel temp private to a parallel loop (one copy per thread) */
	const lt_node *preduce_top; /* the parallel loop whose sums preduce_mark marks (its lt_node.preduce) */
	bool *preduce_mark;
	ct_status st;
} vb;

/* An error about argument arg of the current item (its index). */
static bool vb_err(vb *v, int arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool vb_err(vb *v, int arg, const char *fmt, ...)
{
	if (v->st == CT_OK) {
		ir_pos pos = v->it->pos;
		if (arg >= 0 && arg < v->it->n && v->it->idx_pos)
			pos = v->it->idx_pos[arg];
		va_list ap;
		va_start(ap, fmt);
		ct_verror_at(v->k->ctx, CT_ERR_INPUT, v->k->file, pos.line, pos.col, fmt, ap);
		va_end(ap);
		v->st = CT_ERR_INPUT;
	}
	return false;
}

static bool vb_nomem(vb *v)
{
	if (v->st == CT_OK)
		v->st = ct_error(v->k->ctx, CT_ERR_NOMEM, "out of memory checking the plan's loop verbs");
	return false;
}

static const char *iname(const vb *v, int index)
{
	return index >= 0 && index < v->t->nindices ? v->t->indices[index].name : "?";
}

static const char *verb_name(ir_plan_kind kind)
{
	switch (kind) {
	case PL_UNROLL: return "unroll";
	case PL_VECTORIZE: return "vectorize";
	case PL_PARALLELIZE: return "parallelize";
	case PL_DISTRIBUTE: return "distribute";
	case PL_CACHE: break;
	}
	return "?";
}

/* "parallelize(i, j)" of the current item, for messages. */
static void item_text(const vb *v, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "%s(", verb_name(v->it->kind));
	for (int i = 0; i < v->it->n && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", iname(v, v->it->idx[i]));
	if (n < cap)
		snprintf(out + n, cap - n, ")");
}

/* ------------------------------------------------------------ tree helpers */

typedef bool (*loop_fn)(vb *v, lt_node *x);

/* Call fn on every loop over index under the nodes (outer loops first);
 * false as soon as fn fails. */
static bool each_loop(vb *v, lt_node *const *nodes, int n, int index, loop_fn fn)
{
	for (int i = 0; i < n; i++) {
		lt_node *x = nodes[i];
		if (x->kind == LT_LOOP && x->index == index && !fn(v, x))
			return false;
		if (!each_loop(v, x->kids, x->nkids, index, fn) || !each_loop(v, x->els, x->nels, index, fn))
			return false;
	}
	return true;
}

/* Constant trip count of loop x, or -1 when its bounds are not constants. */
static int64_t trip_count(const lt_node *x)
{
	int64_t lo, hi, w;
	if (!lt_const_range(x, &lo, &hi) || x->step < 1)
		return -1;
	if (hi <= lo)
		return 0;
	if (!ct_sub_ok(hi, lo, &w))
		return -1;
	return (w - 1) / x->step + 1; /* not (w + step - 1) / step: step may be near 2^63 */
}

/* Whether x is the tail version of a split or lies inside one. */
static bool in_tail(const lt_node *x)
{
	for (; x; x = x->parent)
		if (x->kind == LT_LOOP && x->tail)
			return true;
	return false;
}

/* The first loop or cache region under x (x itself excluded), or NULL. */
static const lt_node *inner_block(const lt_node *x)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_LOOP || y->kind == LT_CACHE)
			return y;
		const lt_node *z = inner_block(y);
		if (z)
			return z;
	}
	return NULL;
}

/* ------------------------------------------------------------ accesses */

typedef struct acc {
	const lt_node *node;  /* the statement */
	const ir_expr *e;     /* the EX_ACCESS */
	bool write;
} acc;

typedef struct acclist {
	acc *v;
	int n, cap;
} acclist;

static void add_acc(vb *v, acclist *l, const lt_node *node, const ir_expr *e, bool write)
{
	if (v->st != CT_OK)
		return;
	if (!ct_vec_grow(v->k->ctx, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
		vb_nomem(v);
		return;
	}
	l->v[l->n++] = (acc){node, e, write};
}

static void collect_expr(vb *v, acclist *l, const lt_node *node, const ir_expr *e)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS)
		add_acc(v, l, node, e, false);
	for (int i = 0; i < e->nargs; i++)
		collect_expr(v, l, node, e->args[i]);
}

/* Every array or buffer access under x (x included). */
static void collect(vb *v, acclist *l, const lt_node *x)
{
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET)) {
		collect_expr(v, l, x, x->stmt->rhs);
		if (x->kind == LT_STMT && x->stmt->lhs)
			add_acc(v, l, x, x->stmt->lhs, true);
	}
	for (int i = 0; i < x->nkids; i++)
		collect(v, l, x->kids[i]);
	for (int i = 0; i < x->nels; i++)
		collect(v, l, x->els[i]);
}

static bool storage_ok(const vb *v, const ir_expr *e)
{
	return e->id >= 0 && e->id < v->t->narrays && e->sub;
}

/* ------------------------------------------------------------ unroll */

static bool unroll_loop(vb *v, lt_node *x)
{
	if (v->it->unroll_by > 0) {
		/* a hint to the C compiler: any loop, its bounds as they are */
		x->unroll_by = (int)v->it->unroll_by;
		return true;
	}
	int64_t n = trip_count(x);
	const char *name = iname(v, x->index);
	if (n < 0) {
		/* the partial block of a runtime-sized split stays a loop */
		if (in_tail(x))
			return true;
		return vb_err(v, 0,
		              "unroll(%s): the loop over '%s' has no compile-time trip count (its bounds "
		              "depend on runtime params)",
		              name, name);
	}
	if (n > PLAN_MAX_UNROLL)
		return vb_err(v, 0, "unroll(%s): the loop over '%s' has %lld iterations; unroll takes at most %d",
		              name, name, (long long)n, PLAN_MAX_UNROLL);
	x->unroll = true;
	return true;
}

/*
 * What unrolling asks of the C compiler. gcc 12 at -O3 takes minutes on
 * unrolled code far smaller than its text suggests: 93 unrolled copies of a
 * 29-trip loop (a 29x31x3 i32 matmul with unroll(j) and unroll(k) in the
 * order k, j, i) took over 300 s, because it unrolls the small inner loops
 * completely and its combiner then works on one huge block. So the size of
 * an unrolled nest counts what the compiler will see: each unrolled loop
 * (or unroll hint) multiplies its body by its trips (or its factor), and
 * each other loop inside by its constant trip count up to
 * PLAN_UNROLL_INNER_TRIPS (longer loops stay loops), except vectorized
 * loops, whose bodies become vector statements, and innermost loops whose
 * accesses are all contiguous in them, which the compiler vectorizes (a
 * quarter of those trips). Measured with gcc 12.2: 4 unrolled copies of
 * contiguous 8x16 nests compile in 0.3 s, 32 copies of strided 16-trip
 * loops in 60 s. At most
 * PLAN_MAX_UNROLLED statements per outermost unrolled loop: measured, the
 * worst nests at that size compile in about 10 s, at twice it in 60-90 s.
 */
static int64_t unrolled_size(vb *v, const lt_node *const *nodes, int n);
static bool strided_moves(vb *v, const ir_expr *e, int x);

/* Whether every access under innermost loop x is contiguous in it or does
 * not move with it: the C compiler vectorizes such a loop rather than
 * unrolling it completely. */
static bool contiguous_in(vb *v, const lt_node *x)
{
	if (inner_block(x))
		return false;
	acclist l = {NULL, 0, 0};
	collect(v, &l, x);
	bool ok = v->st == CT_OK;
	for (int i = 0; ok && i < l.n; i++) {
		const ir_expr *e = l.v[i].e;
		if (!storage_ok(v, e) || strided_moves(v, e, x->index)) {
			ok = false;
			break;
		}
		const ir_array *arr = &v->t->arrays[e->id];
		int inner = arr->order[arr->rank - 1];
		for (int d = 0; ok && d < arr->rank; d++) {
			bool bad = false;
			int64_t c = lt_var_coef(v->t, e->sub[d], x->index, &bad);
			ok = !bad && (d == inner ? c == 0 || c == 1 : c == 0);
		}
	}
	ct_free(v->k->ctx, l.v);
	return ok;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
	int64_t r;
	return ct_mul_ok(a, b, &r) ? r : INT64_MAX;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return ct_add_ok(a, b, &r) ? r : INT64_MAX;
}

static int64_t unrolled_node(vb *v, const lt_node *x)
{
	switch (x->kind) {
	case LT_STMT:
	case LT_LET:
		return 1;
	case LT_IF:
		return sat_add(unrolled_size(v, (const lt_node *const *)x->kids, x->nkids),
		               unrolled_size(v, (const lt_node *const *)x->els, x->nels));
	case LT_CACHE:
		return unrolled_size(v, (const lt_node *const *)x->kids, x->nkids);
	case LT_LOOP:
		break;
	}
	int64_t body = unrolled_size(v, (const lt_node *const *)x->kids, x->nkids), n = trip_count(x);
	if (x->unroll)
		return sat_mul(n > 0 ? n : 1, body);
	if (x->unroll_by > 0)
		return sat_mul(n >= 0 && n < x->unroll_by ? (n > 0 ? n : 1) : x->unroll_by, body);
	if (x->vector) /* vector statements (or a register tile's rows) */
		return body;
	if (n > PLAN_UNROLL_INNER_TRIPS || n < 1)
		n = n < 1 ? 1 : PLAN_UNROLL_INNER_TRIPS;
	if (contiguous_in(v, x)) /* vectors of about 4 elements */
		n = (n + 3) / 4;
	return sat_mul(n, body);
}

static int64_t unrolled_size(vb *v, const lt_node *const *nodes, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s = sat_add(s, unrolled_node(v, nodes[i]));
	return s;
}

/* The unroll item that marked loop x, for the message. */
static int unroll_item_of(const vb *v, const lt_node *x)
{
	for (int i = 0; i < v->k->nplan; i++) {
		const ir_plan_item *it = &v->k->plan[i];
		if (it->kind == PL_UNROLL && it->n >= 1 && it->idx[0] == x->index)
			return i;
	}
	return -1;
}

/* Refuse an unrolled nest of more than PLAN_MAX_UNROLLED statements under
 * the nodes; outermost unrolled loops only (the size counts the inner). */
static bool unroll_cap(vb *v, lt_node *const *nodes, int n)
{
	for (int i = 0; i < n && v->st == CT_OK; i++) {
		lt_node *x = nodes[i];
		if (x->kind == LT_LOOP && (x->unroll || x->unroll_by > 0)) {
			int64_t s = unrolled_node(v, x);
			if (s <= PLAN_MAX_UNROLLED)
				continue;
			int item = unroll_item_of(v, x);
			v->item = item >= 0 ? item : 0;
			v->it = &v->k->plan[v->item];
			const char *name = iname(v, x->index);
			char txt[160];
			item_text(v, txt, sizeof txt);
			return vb_err(v, 0,
			              "%s: the unrolled loop over '%s' would make %lld statements for the C compiler "
			              "(unrolled loops times their bodies, inner loops counted up to %d trips); at most "
			              "%d",
			              txt, name, (long long)s, PLAN_UNROLL_INNER_TRIPS, PLAN_MAX_UNROLLED);
		}
		if (!unroll_cap(v, x->kids, x->nkids) || !unroll_cap(v, x->els, x->nels))
			return false;
	}
	return v->st == CT_OK;
}

/* ------------------------------------------------------------ vectorize */

/* Whether access e is to a `strided` kernel array and moves with loop
 * index x: its layout is known only at run time (views issue). */
static bool strided_moves(vb *v, const ir_expr *e, int x)
{
	const ir_array *arr = &v->t->arrays[e->id];
	if (e->id >= v->t->k->narrays || !arr->strided)
		return false;
	for (int d = 0; d < arr->rank; d++) {
		bool bad = false;
		if (arr->unit_minor && d == arr->order[arr->rank - 1])
			continue; /* dense along it: vector_contiguous judges the move */
		if (lt_var_coef(v->t, e->sub[d], x, &bad) != 0 || bad)
			return true;
	}
	return false;
}

/* Accesses under the loop x move with it only in their contiguous
 * dimension, by 1. */
static bool vector_contiguous(vb *v, const lt_node *x, const acclist *l)
{
	const char *name = iname(v, x->index);
	for (int i = 0; i < l->n; i++) {
		const ir_expr *e = l->v[i].e;
		if (!storage_ok(v, e))
			return vb_err(v, 0, "vectorize(%s): malformed access in the loop tree", name);
		const ir_array *arr = &v->t->arrays[e->id];
		int inner = arr->order[arr->rank - 1];
		if (strided_moves(v, e, x->index))
			return vb_err(v, 0,
			              "vectorize(%s): '%s' is strided (its strides come with the call), so it "
			              "is not known to be contiguous in '%s'",
			              name, arr->name, name);
		for (int d = 0; d < arr->rank; d++) {
			bool bad = false;
			int64_t c = lt_var_coef(v->t, e->sub[d], x->index, &bad);
			if (bad || (d == inner ? c != 0 && c != 1 : c != 0))
				return vb_err(v, 0,
				              "vectorize(%s): '%s' is not contiguous in '%s' (its dimension %d "
				              "moves with '%s' by %s%lld, its contiguous dimension is %d)",
				              name, arr->name, name, d + 1, name, bad ? "a non-affine step, not " : "",
				              (long long)c, inner + 1);
		}
	}
	return true;
}

static bool same_subscripts(const ir_expr *a, const ir_expr *b, int rank)
{
	for (int d = 0; d < rank; d++)
		if (!aff_equal(a->sub[d], b->sub[d]))
			return false;
	return true;
}

/* Whether the dependence test (isl, src/ir/deps.c) finds that loop x, with no cache inside it,
 * carries no dependence at all, reductions included: the accesses at different elements of a
 * written array never meet across its iterations (trsm's B[i, j] written and B[k, j] read with
 * k < i). Unknown (an error, a tree with caches) is false. */
static bool cache_inside(const lt_node *x)
{
	if (x->kind == LT_CACHE)
		return true;
	for (int i = 0; i < x->nkids + x->nels; i++)
		if (cache_inside(i < x->nkids ? x->kids[i] : x->els[i - x->nkids]))
			return true;
	return false;
}

/* The dependence test on loop x (no cache inside): 0 when it carries nothing (reduction pairs
 * counted when with_reductions), unknown (an error, a cache inside) is not 0. */
static bool carries_none(vb *v, const lt_node *x, bool with_reductions)
{
	if (cache_inside(x))
		return false;
	dep_info *d = dep_compute(v->k);
	int c = d ? dep_loop_carries(d, v->t, x, with_reductions) : -1;
	dep_free(d);
	ct_ctx_clear_error(v->k->ctx); /* a failed test leaves its message: the refusal says more */
	return c == 0;
}

static bool carries_nothing(vb *v, const lt_node *x)
{
	return carries_none(v, x, true);
}

/* Whether loop x carries nothing once the temps in priv[] (set here) are
 * private per thread, sums counting as carried when with_sums; a cached temp
 * (its buffer is not the temp's copy) carries. Unknown is false. */
static bool private_carries_none(vb *v, const lt_node *x, bool with_sums, bool *priv)
{
	dep_info *d = dep_compute(v->k);
	int c = d ? dep_loop_carries_private(d, v->t, x, with_sums, priv) : -1;
	dep_free(d);
	ct_ctx_clear_error(v->k->ctx);
	for (int r = 0; c == 0 && r < v->t->nregions; r++) {
		int src = v->t->regions[r].source;
		if (src >= 0 && src < v->k->narrays && priv[src])
			c = 1; /* a cached temp's buffer is not the temp's copy */
	}
	return c == 0;
}

/* Marks in w[] (per kernel array) the arrays a statement of the kernel
 * under x (not a cache's copy) writes, in place or through one of their
 * caches' buffers (the root array of the chain). */
static void mark_written(const vb *v, const lt_node *x, bool *w)
{
	if (x->kind == LT_STMT && x->stmt && x->stmt->stmt_id != 0 && x->stmt->lhs) {
		int s = x->stmt->lhs->id;
		int item = s >= v->k->narrays ? lt_storage_item(v->t, s) : -1;
		int a = item >= 0 ? v->k->plan[item].root_array : s;
		if (a >= 0 && a < v->k->narrays)
			w[a] = true;
	}
	for (int i = 0; i < x->nkids + x->nels; i++)
		mark_written(v, i < x->nkids ? x->kids[i] : x->els[i - x->nkids], w);
}

/* Whether some cache region under x copies from an array written[] marks
 * (one a statement under the loop asked about writes). */
static bool written_cache_under(const vb *v, const lt_node *x, const bool *written)
{
	if (x->kind == LT_CACHE) {
		/* a cache of a cache: the array at the bottom of the chain */
		int a = v->k->plan[v->t->regions[x->cache].item].root_array;
		if (a < 0 || a >= v->k->narrays || (v->k->arrays[a].role != CT_INPUT && written[a]))
			return true;
	}
	for (int i = 0; i < x->nkids + x->nels; i++)
		if (written_cache_under(v, i < x->nkids ? x->kids[i] : x->els[i - x->nkids], written))
			return true;
	return false;
}

/* Whether some cache region under loop x copies from an array that a
 * statement under x writes: the dependence test reads the kernel's
 * accesses, which such a cache's buffer stands in for, so it cannot speak
 * for x. A cache of an array nothing under x writes (an input, or a temp
 * an earlier nest fills: tests/plans/temp_cache_parallel.cachet) only ever
 * holds values no iteration changes: its buffer is filled per iteration
 * where the cache lies in x (one per thread), or before x where its copies
 * are triggered outside x, and read alike. Out of memory answers true. */
static bool written_cache_inside(const vb *v, const lt_node *x)
{
	bool *written = ct_alloc(v->k->ctx, sizeof *written * (size_t)(v->k->narrays + 1));
	if (!written)
		return true;
	memset(written, 0, sizeof *written * (size_t)(v->k->narrays + 1));
	mark_written(v, x, written);
	bool r = written_cache_under(v, x, written);
	ct_free(v->k->ctx, written);
	return r;
}

/* carries_nothing for a parallel loop x, except through kernel temps the
 * dependence test proves private to x's iterations (dep_temp_private: every
 * read follows a write of its element in its own iteration, every write
 * is under x): priv[] (per storage) gets those x needs private, none with a
 * cache of an array the kernel writes (caches of inputs do not matter:
 * syrk's packed strips under its parallel strip loop). Unknown is false. */
static bool carries_nothing_private(vb *v, const lt_node *x, bool *priv)
{
	return !written_cache_inside(v, x) && private_carries_none(v, x, true, priv);
}

/* carries_nothing_private without the pairs of one `+=` / `-=` statement
 * that meet at an element (a parallel reduction's sums): 0 carried else.
 * Unknown is false. */
static bool reduction_only_private(vb *v, const lt_node *x, bool *priv)
{
	return private_carries_none(v, x, false, priv);
}

/* Whether the dependence test finds that loop x (no cache inside) carries
 * no dependence other than reductions (pairs of updates that meet only
 * through their left-hand side): other accesses of a summed array never
 * meet the summed element across iterations (cholesky's A[j, j] -= A[j, k]
 * * A[j, k], k < j). Unknown is false. */
static bool reduction_only(vb *v, const lt_node *x)
{
	return carries_none(v, x, false);
}

/* A write under x at an element that does not move with x (vector_contiguous
 * has checked that it moves in no other dimension): a reduction over x, which
 * the C backend accumulates privately and adds to the element after the loop
 * (src/gen/vreduce.c). It must be an update `+=` / `-=` (sums re-associate;
 * `*=` would need a product accumulator and is rare; `=` is a recurrence),
 * its storage accessed nowhere else under x (conditions are affine: they
 * read no array) unless the dependence test proves the accesses apart (`S[j] += S[j] * a`
 * reads what it sums), a float reduction only where the plan is not
 * strict=true (integers re-associate exactly), and the target the host's C. */
static bool vector_reduction(vb *v, const lt_node *x, const acclist *l, int i)
{
	const char *name = iname(v, x->index);
	const acc *w = &l->v[i];
	const ir_node *s = w->node->stmt;
	const ir_array *arr = &v->t->arrays[w->e->id];
	if (!s || w->node->kind != LT_STMT || (s->op != AS_ADD && s->op != AS_SUB))
		return vb_err(v, 0,
		              "vectorize(%s): every iteration of '%s' %s the same element of '%s' (only `+=` and "
		              "`-=` updates may be summed as a vector reduction over '%s')",
		              name, name, s && s->op == AS_SET ? "assigns" : "updates", arr->name, name);
	if (ir_target_row(v->k->target)->parallel == IR_PAR_GRID)
		return vb_err(v, 0,
		              "vectorize(%s): '%s' carries a reduction over '%s' (vector reductions are on the "
		              "host target only)",
		              name, name, arr->name);
	if (v->k->strict && (arr->type == CT_F32 || arr->type == CT_F64))
		return vb_err(v, 0,
		              "vectorize(%s): '%s' carries a reduction over '%s', which a vector loop "
		              "re-associates; the plan is strict=true (%d:%d), which keeps the order of float "
		              "reductions",
		              name, name, arr->name, v->k->strict_pos.line, v->k->strict_pos.col);
	int other = -1;
	for (int j = 0; j < l->n && other < 0; j++)
		if (j != i && l->v[j].e->id == w->e->id)
			other = j;
	if (other >= 0 && !reduction_only(v, x))
		return vb_err(v, 0,
		              "vectorize(%s): the reduction over '%s' into '%s' cannot be vectorized: '%s' is "
		              "also %s in the loop, and the dependence test does not prove that no other "
		              "access meets the summed element",
		              name, name, arr->name, arr->name, l->v[other].write ? "written" : "read");
	return true;
}

/* Mark the reduction statements under vector loop x (their left-hand side
 * does not move with x) for the C backend. */
static void mark_reductions(vb *v, lt_node *x, int index)
{
	if (x->kind == LT_STMT && x->stmt && x->stmt->lhs && storage_ok(v, x->stmt->lhs)) {
		const ir_expr *e = x->stmt->lhs;
		const ir_array *arr = &v->t->arrays[e->id];
		bool bad = false;
		x->reduce = lt_var_coef(v->t, e->sub[arr->order[arr->rank - 1]], index, &bad) == 0 && !bad;
	}
	for (int i = 0; i < x->nkids; i++)
		mark_reductions(v, x->kids[i], index);
	for (int i = 0; i < x->nels; i++)
		mark_reductions(v, x->els[i], index);
}

/* Every storage written under x is accessed there at one subscript, which
 * moves with x, or the dependence test finds none carried: iterations touch
 * different elements; or it is a reduction over x (vector_reduction). */
static bool vector_independent(vb *v, const lt_node *x, const acclist *l)
{
	const char *name = iname(v, x->index);
	for (int i = 0; i < l->n; i++) {
		if (!l->v[i].write)
			continue;
		const ir_expr *w = l->v[i].e;
		const ir_array *arr = &v->t->arrays[w->id];
		bool bad = false;
		int64_t c = lt_var_coef(v->t, w->sub[arr->order[arr->rank - 1]], x->index, &bad);
		if (c == 0 && !bad) {
			if (!vector_reduction(v, x, l, i))
				return false;
			continue;
		}
		if (c != 1 || bad)
			return vb_err(v, 0, "vectorize(%s): '%s' is written at an element that moves with '%s' by %lld",
			              name, arr->name, name, (long long)c);
		for (int j = 0; j < l->n; j++)
			if (l->v[j].e->id == w->id && !same_subscripts(w, l->v[j].e, arr->rank) &&
			    !carries_nothing(v, x))
				return vb_err(v, 0,
				              "vectorize(%s): iterations of '%s' are not independent: '%s' is "
				              "written and accessed at different elements",
				              name, name, arr->name);
	}
	return true;
}

/* Whether some node under the nodes reads storage a (a right-hand side, a
 * condition, or an update `a op= ..` other than `=`). */
static bool tree_reads(lt_node *const *nodes, int n, int a)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = nodes[i];
		const ir_node *s = x->stmt;
		if (s && (ir_expr_reads(s->rhs, a) || ir_expr_reads(s->cond, a)))
			return true;
		if (s && x->kind == LT_STMT && s->lhs && s->lhs->id == a && s->op != AS_SET)
			return true;
		if (tree_reads(x->kids, x->nkids, a) || tree_reads(x->els, x->nels, a))
			return true;
	}
	return false;
}

/* vectorize(x, nontemporal=true): every array written under x is an output
 * array that the kernel only assigns (never reads, never updates), so that
 * stores that bypass the caches cost nothing later: no load misses on what
 * was just written. */
static bool vector_nontemporal(vb *v, const lt_node *x, const acclist *l)
{
	const char *name = iname(v, x->index);
	for (int i = 0; i < l->n; i++) {
		if (!l->v[i].write)
			continue;
		int a = l->v[i].e->id;
		const ir_array *arr = &v->t->arrays[a];
		if (a >= v->k->narrays || arr->role != CT_OUTPUT)
			return vb_err(v, 0,
			              "vectorize(%s, nontemporal=true): '%s' is written in the loop but is not an "
			              "output array (streaming stores are for arrays the kernel only writes)",
			              name, arr->name);
		for (int r = 0; r < v->t->nregions; r++)
			if (v->t->regions[r].source == a)
				return vb_err(v, 0,
				              "vectorize(%s, nontemporal=true): '%s' has a cache (streaming stores "
				              "are for arrays written straight to memory)",
				              name, arr->name);
		if (tree_reads(v->t->roots, v->t->nroots, a))
			return vb_err(v, 0,
			              "vectorize(%s, nontemporal=true): the kernel reads '%s' (streaming stores are "
			              "for arrays the kernel only writes)",
			              name, arr->name);
	}
	return true;
}

/* Whether the plan has an item unroll(y) (complete, not by=n) naming index y. */
static bool unrolled_by_plan(const vb *v, int y)
{
	for (int i = 0; i < v->k->nplan; i++) {
		const ir_plan_item *it = &v->k->plan[i];
		if (it->kind != PL_UNROLL || it->unroll_by > 0)
			continue;
		for (int j = 0; j < it->n; j++)
			if (it->idx[j] == y)
				return true;
	}
	return false;
}

/* The first loop under x that is not completely unrolled by the plan, or a
 * cache region under x; NULL when every loop under x is unrolled. */
static const lt_node *not_jammed(const vb *v, const lt_node *x)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_CACHE || (y->kind == LT_LOOP && !y->unroll && !unrolled_by_plan(v, y->index)))
			return y;
		const lt_node *z = not_jammed(v, y);
		if (z)
			return z;
	}
	return NULL;
}

static bool vector_loop(vb *v, lt_node *x)
{
	const char *name = iname(v, x->index);
	const lt_node *in = inner_block(x);
	/* unroll and jam (src/gen/vreduce.c): loops inside x that the plan
	 * unrolls completely, their copies in each vector step; on the host
	 * (the GPU generators map loops of their own) */
	bool host = ir_target_row(v->k->target)->parallel != IR_PAR_GRID;
	const lt_node *bad = in && in->kind == LT_LOOP && host ? not_jammed(v, x) : NULL;
	if (bad && bad->kind == LT_LOOP)
		in = bad;
	else if (bad)
		return vb_err(v, 0, "vectorize(%s): '%s' is not the innermost loop (a cache region is inside it)",
		              name, name);
	else if (in && in->kind == LT_LOOP && host)
		in = NULL;
	if (in && in->kind == LT_LOOP)
		return vb_err(v, 0, "vectorize(%s): '%s' is not the innermost loop (the loop over '%s' is inside it)",
		              name, name, iname(v, in->index));
	if (in)
		return vb_err(v, 0, "vectorize(%s): '%s' is not the innermost loop (a cache region is inside it)",
		              name, name);
	acclist l = {NULL, 0, 0};
	collect(v, &l, x);
	bool ok = v->st == CT_OK && vector_contiguous(v, x, &l) && vector_independent(v, x, &l) &&
	          (!v->it->nontemporal || vector_nontemporal(v, x, &l));
	ct_free(v->k->ctx, l.v);
	if (ok) {
		x->vector = true;
		mark_reductions(v, x, x->index);
	}
	v->t->has_vector = v->t->has_vector || ok;
	return ok;
}

/* ------------------------------------------------------------ parallelize: shape */

/* The loops over the item's indices k.. are the whole body of y, nested in
 * the item's order. */
static bool consecutive(vb *v, const lt_node *y, int k)
{
	if (k == v->it->n)
		return true;
	const char *outer = iname(v, v->it->idx[k - 1]), *inner = iname(v, v->it->idx[k]);
	char what[256];
	item_text(v, what, sizeof what);
	if (y->nkids == 0)
		return vb_err(v, k, "%s: '%s' must be the loop right inside '%s'", what, inner, outer);
	for (int i = 0; i < y->nkids; i++) {
		const lt_node *z = y->kids[i];
		if (z->kind != LT_LOOP || z->index != v->it->idx[k])
			return vb_err(v, k, "%s: '%s' must be the loop right inside '%s'%s", what, inner, outer,
			              z->kind == LT_CACHE ? " (a cache region is between them)" : "");
		if (!consecutive(v, z, k + 1))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ parallelize: independence */

/*
 * Iterations of the parallel band (x1, ..., xn) are independent when, for
 * each loop over each xk inside the outermost one, two of its iterations
 * never touch a common element of a storage the loop writes: taking the
 * iterations in lexicographic order, two that differ first in xk have the
 * same x1 .. x(k-1) (fixed) and any values of the loops inside xk (ranged).
 * For one loop P and storage s that suffices when some dimension of s is
 * subscripted by every access with the same fixed terms, grows by the same
 * a != 0 from one iteration of P to the next, and spans less than |a| with
 * its other terms (constants and the variables of loops inside P).
 */

/* A subscript split for the test of one loop P. */
typedef struct pform {
	int64_t a;      /* growth from one iteration of P to the next */
	aff fixed;      /* terms equal in every iteration of P */
	int64_t lo, hi; /* range of the constant plus the inner loops' terms */
	bool ok;
} pform;

/* Range of the value of term kind (loop variable or trip count) of the
 * inner loop x: from its constant bounds, or for the inner index of a split
 * from its window (a runtime tail runs part of it). */
static bool term_range(const vb *v, const lt_node *x, int kind, int64_t *lo, int64_t *hi)
{
	int64_t l, h;
	const ir_index *ix = x->index >= 0 && x->index < v->k->nindices ? &v->k->indices[x->index] : NULL;
	/* an affine loop's lo and hi are its bounds over params only, or none (LT_NO_LO / LT_NO_HI):
	 * not its range; the inner index of its split keeps its window (a superset) */
	if (lt_affine_loop(x) && !(ix && ix->kind == IX_SPLIT))
		return false;
	if (!bx_is_const(x->lo, &l) || !bx_is_const(x->hi, &h)) {
		if (!ix || ix->kind != IX_SPLIT || ix->window < 1)
			return false;
		l = 0;
		h = ix->window;
	}
	if (h <= l)
		h = l + 1; /* never runs: any point will do */
	/* the last value the loop takes: lo + a whole number of steps */
	int64_t last = l + (h - 1 - l) / x->step * x->step;
	*lo = l;
	*hi = last;
	if (kind == AFF_TRIP) {
		*lo = ct_floordiv(l, x->step);
		*hi = ct_floordiv(last, x->step);
	}
	return true;
}

/* Add coef * [lo, hi] to f's range. */
static bool add_range(pform *f, int64_t coef, int64_t lo, int64_t hi)
{
	int64_t a, b;
	if (!ct_mul_ok(coef, lo, &a) || !ct_mul_ok(coef, hi, &b))
		return false;
	if (a > b) {
		int64_t t = a;
		a = b;
		b = t;
	}
	return ct_add_ok(f->lo, a, &f->lo) && ct_add_ok(f->hi, b, &f->hi);
}

/* The loop over index id between statement s and loop P, or NULL (then
 * the variable is fixed while P runs). */
static const lt_node *inner_loop_of(const lt_node *P, const lt_node *s, int id)
{
	for (const lt_node *x = s->parent; x && x != P; x = x->parent)
		if (x->kind == LT_LOOP && x->index == id)
			return x;
	return NULL;
}

static void put_term(vb *v, pform *f, int kind, int id, int64_t coef)
{
	bool ok = true;
	f->fixed = aff_add(v->a, f->fixed, aff_sym1(v->a, kind, id, coef, &ok), &ok);
	f->ok = f->ok && ok;
}

/* One loop-variable term of a subscript of access x. */
static void form_term(vb *v, const lt_node *P, const acc *x, pform *f, int kind, int id, int64_t coef)
{
	if (P->index == id) {
		/* from one iteration to the next the variable grows by its step
		 * and its trip count by 1 */
		int64_t d = coef;
		f->ok = f->ok && (kind == AFF_TRIP || ct_mul_ok(coef, P->step, &d)) && ct_add_ok(f->a, d, &f->a);
		return;
	}
	const lt_node *in = inner_loop_of(P, x->node, id);
	int64_t lo, hi;
	if (!in)
		put_term(v, f, kind, id, coef);
	else if (!term_range(v, in, kind, &lo, &hi) || !add_range(f, coef, lo, hi))
		f->ok = false;
}

/* Split subscript dimension d of access x for loop P. */
static void make_form(vb *v, const lt_node *P, const acc *x, int d, pform *f)
{
	const ct_looptree *t = v->t;
	aff s = x->e->sub[d];
	f->a = 0;
	f->fixed = aff_const(0);
	f->lo = f->hi = s.c;
	f->ok = true;
	for (int i = 0; i < s.n && f->ok; i++) {
		const aff_term *tm = &s.t[i];
		switch (tm->kind) {
		case AFF_LOOP:
		case AFF_TRIP: form_term(v, P, x, f, tm->kind, tm->id, tm->coef); break;
		case AFF_TRI: /* not linear in its variable: only where that one is fixed */
			if (P->index == tm->id || inner_loop_of(P, x->node, tm->id))
				f->ok = false;
			else
				put_term(v, f, tm->kind, tm->id, tm->coef);
			break;
		case AFF_INDEX:
			if (tm->id < 0 || tm->id >= t->k->nindices || !t->chain || !t->chain[tm->id]) {
				f->ok = false;
				break;
			}
			for (int m = 0; m < t->chain_len[tm->id]; m++)
				form_term(v, P, x, f, AFF_LOOP, t->chain[tm->id][m], tm->coef);
			break;
		default: put_term(v, f, tm->kind, tm->id, tm->coef); break;
		}
	}
}

/* Whether dimension d of storage s separates the iterations of loop P
 * (accesses l are those under P). */
static bool separates(vb *v, const lt_node *P, const acclist *l, int s, int d)
{
	bool first = true;
	int64_t a = 0, lo = 0, hi = 0, span;
	aff fixed = aff_const(0);
	pform f;
	for (int i = 0; i < l->n; i++) {
		if (l->v[i].e->id != s)
			continue;
		make_form(v, P, &l->v[i], d, &f);
		if (!f.ok || f.a == 0)
			return false;
		if (first) {
			a = f.a;
			fixed = f.fixed;
			lo = f.lo;
			hi = f.hi;
			first = false;
		} else if (f.a != a || !aff_equal(f.fixed, fixed)) {
			return false;
		}
		lo = f.lo < lo ? f.lo : lo;
		hi = f.hi > hi ? f.hi : hi;
	}
	return !first && a != INT64_MIN && ct_sub_ok(hi, lo, &span) && span < (a < 0 ? -a : a);
}

/* Whether storage s is the buffer (or double-buffer temp) of a region
 * inside the loop x. */
static bool private_to(const vb *v, int s, const lt_node *x)
{
	const ct_looptree *t = v->t;
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		if ((rg->elided || rg->buffer != s) && rg->temp != s)
			continue;
		for (const lt_node *y = rg->node; y; y = y->parent)
			if (y == x)
				return true;
	}
	return false;
}

/* Whether loop x has a sibling loop over the same index (the main and tail
 * versions of a split). */
static bool versioned(const ct_looptree *t, const lt_node *x)
{
	lt_node *const *sib = x->parent ? x->parent->kids : t->roots;
	int n = x->parent ? x->parent->nkids : t->nroots;
	for (int i = 0; i < n; i++)
		if (sib[i] != x && sib[i]->kind == LT_LOOP && sib[i]->index == x->index)
			return true;
	return false;
}

/* ------------------------------------------------------------ parallelize: reductions */

/* The largest copy of a summed array each thread of a parallel reduction
 * gets (bytes): above it the copies would cost more memory and zeroing
 * than the loop's parallelism is likely to win back. */
#define PLAN_MAX_PREDUCE_BYTES ((int64_t)16 << 20)

/* Whether every access of storage s under the parallel loop (accesses l)
 * is the left-hand side of a `+=` / `-=` whose right-hand side does not
 * read s: a sum that re-associates, nothing else seeing a partial value. */
static bool sum_only(const acclist *l, int s)
{
	for (int i = 0; i < l->n; i++) {
		if (l->v[i].e->id != s)
			continue;
		const ir_node *st = l->v[i].node->stmt;
		if (!l->v[i].write || !st || l->v[i].node->kind != LT_STMT ||
		    (st->op != AS_ADD && st->op != AS_SUB) || ir_expr_reads(st->rhs, s) ||
		    ir_expr_reads(st->cond, s))
			return false;
	}
	return true;
}

/* Elements of kernel array a when its extents use compile-time params
 * only, else -1 (checked when the kernel runs: the allocation). */
static int64_t const_elements(const vb *v, const ir_array *arr)
{
	int64_t *pv = ct_alloc(v->k->ctx, sizeof *pv * (size_t)(v->k->nparams + 1));
	if (!pv)
		return -1;
	ir_param_values(v->k, pv);
	int64_t n = 1;
	bool ok = true;
	for (int d = 0; d < arr->rank && ok; d++) {
		const aff *x = &arr->ext[d];
		for (int i = 0; i < x->n && ok; i++)
			ok = x->t[i].kind == AFF_PARAM && x->t[i].id >= 0 && x->t[i].id < v->k->nparams &&
			     !v->k->params[x->t[i].id].runtime;
		int64_t e = ok ? aff_eval(*x, pv, NULL, &ok) : 0;
		ok = ok && ct_mul_ok(n, e < 0 ? 0 : e, &n);
	}
	ct_free(v->k->ctx, pv);
	return ok ? n : -1;
}

/* Whether loop x, argument k of the item, or a loop of the band under it
 * has main and tail versions: the band then runs as one parallel loop over
 * the versions (gen_parallel_versions, pgrid.c), not as the OpenMP loop
 * whose start and end take a reduction's copies. */
static bool band_versioned(const vb *v, const lt_node *x, int k)
{
	if (versioned(v->t, x))
		return true;
	for (int i = 0; k + 1 < v->it->n && i < x->nkids; i++) {
		const lt_node *y = x->kids[i];
		if (y->kind == LT_LOOP && y->index == v->it->idx[k + 1] && band_versioned(v, y, k + 1))
			return true;
	}
	return false;
}

/*
 * A parallel reduction (the OpenMP reduction clause's use): storage s,
 * written under parallel loop P (argument k of the item, band top), that
 * no dimension separates and whose iterations the full dependence test
 * does not prove apart, is accepted when the loop carries nothing but the
 * pairs of one `+=` / `-=` statement meeting at an element (rexact: the
 * test without them, asked once per loop, 1 when it passed) and s is a
 * kernel array only summed there (sum_only). The C backend gives each
 * thread a zeroed copy of s, and adds the copies to s in thread order
 * after the loop: a float sum re-associates, so not under
 * plan(strict=true); deterministic for a thread count with the static
 * schedule. Not where the loop runs other than as one OpenMP loop (main
 * and tail versions together, SPMD blocks), not into a `strided` array
 * (its copy is not dense), nor into a copy larger than
 * PLAN_MAX_PREDUCE_BYTES. 1: accepted (top->preduce[s] set); 0: not a
 * reduction (the caller's message); -1: refused with a message.
 */
static int par_reduction(vb *v, lt_node *top, const lt_node *P, int k, const acclist *l, int s, int rexact)
{
	if (s < 0 || s >= v->k->narrays || !sum_only(l, s))
		return 0;
	const ir_array *arr = &v->t->arrays[s];
	const char *name = iname(v, P->index);
	char what[256];
	item_text(v, what, sizeof what);
	/* first: the dependence test keeps a strict plan's float sums in order */
	if (v->k->strict && (arr->type == CT_F32 || arr->type == CT_F64)) {
		vb_err(v, k,
		       "%s: '%s' carries a sum into '%s', which parallel threads re-associate; the plan is "
		       "strict=true (%d:%d), which keeps the order of float reductions",
		       what, name, arr->name, v->k->strict_pos.line, v->k->strict_pos.col);
		return -1;
	}
	if (rexact != 1)
		return 0;
	const char *why = NULL;
	if (v->it->spmd)
		why = "SPMD blocks (spmd=true) take no reductions";
	else if (versioned(v->t, P) || band_versioned(v, top, 0))
		why = "the band has a loop with main and tail versions (they run as one parallel loop)";
	else if (arr->strided)
		why = "the array is `strided`";
	if (why) {
		vb_err(v, k, "%s: '%s' carries a sum into '%s', which a parallel reduction would take, but %s",
		       what, name, arr->name, why);
		return -1;
	}
	int64_t n = const_elements(v, arr), bytes;
	if (n >= 0 && (!ct_mul_ok(n, (int64_t)ct_dtype_size(arr->type), &bytes) || bytes > PLAN_MAX_PREDUCE_BYTES)) {
		vb_err(v, k,
		       "%s: '%s' carries a sum into '%s'; a parallel reduction gives each thread a copy of "
		       "'%s' (%lld elements), more than the %lld bytes a copy may take",
		       what, name, arr->name, arr->name, (long long)n, (long long)PLAN_MAX_PREDUCE_BYTES);
		return -1;
	}
	bool *mark = v->preduce_top == top ? v->preduce_mark : NULL;
	if (!mark) {
		mark = ct_arena_alloc(v->a, sizeof *mark * (size_t)(v->k->narrays + 1));
		if (!mark) {
			vb_nomem(v);
			return -1;
		}
		v->preduce_top = top;
		v->preduce_mark = mark;
		top->preduce = mark;
	}
	if (!v->t->pred) {
		v->t->pred = ct_arena_alloc(v->a, sizeof *v->t->pred * (size_t)(v->t->narrays + 1));
		if (!v->t->pred) {
			vb_nomem(v);
			return -1;
		}
	}
	mark[s] = true;
	v->t->pred[s] = true;
	return 1;
}

/* The iterations of loop P (argument k of the item) are independent, the
 * buffers of regions inside the parallel loop top being per thread. */
static bool loop_independent(vb *v, lt_node *top, const lt_node *P, int k)
{
	if (v->k->dist_rank)
		return true; /* proven on the whole kernel (ct_kernel.dist_rank) */
	acclist l = {NULL, 0, 0};
	collect(v, &l, P);
	bool ok = v->st == CT_OK;
	int exact = 0; /* the dependence test's answer: 0 not asked, 1 independent, -1 not proved */
	int rexact = 0; /* the same, reduction pairs left out (par_reduction) */
	bool *priv = ct_alloc(v->k->ctx, sizeof *priv * (size_t)(v->k->narrays + 1));
	bool *rpriv = ct_alloc(v->k->ctx, sizeof *rpriv * (size_t)(v->k->narrays + 1));
	if (!priv || !rpriv)
		ok = false;
	/* the storages a sum writes last: a refusal names another first */
	for (int n = 0; n < 2 * l.n && ok; n++) {
		int i = n < l.n ? n : n - l.n;
		int s = l.v[i].e->id;
		if (!l.v[i].write || private_to(v, s, top) || sum_only(&l, s) != (n >= l.n))
			continue;
		bool seen = false; /* test each storage once: at its first write */
		for (int j = 0; j < i && !seen; j++)
			seen = l.v[j].write && l.v[j].e->id == s;
		if (seen)
			continue;
		const ir_array *arr = &v->t->arrays[s];
		bool sep = false;
		for (int d = 0; d < arr->rank && !sep; d++)
			sep = separates(v, P, &l, s, d);
		/* the exact test where the quick one cannot tell (affine loops inside
		 * P, whose ranges it does not know: syrk's diagonal blocks); not for a
		 * loop with main and tail versions, which run as one parallel loop
		 * while the test sees each version's iterations alone */
		if (!sep && exact == 0)
			exact = !versioned(v->t, P) && carries_nothing_private(v, P, priv) ? 1 : -1;
		sep = sep || exact == 1;
		/* a temp whose values stay in one iteration: one copy per thread */
		if (sep && exact == 1 && s < v->k->narrays && priv[s] && v->tpriv)
			v->tpriv[s] = true;
		/* a sum: the test again without the pairs of one update statement */
		if (!sep && rexact == 0)
			rexact = !versioned(v->t, P) && !cache_inside(P) && reduction_only_private(v, P, rpriv) ? 1 : -1;
		if (!sep && rexact == 1 && s < v->k->narrays && rpriv[s] && v->tpriv)
			v->tpriv[s] = sep = true;
		if (!sep) {
			int r = par_reduction(v, top, P, k, &l, s, rexact);
			if (r < 0) {
				ok = false;
				break;
			}
			sep = r == 1;
		}
		if (!sep) {
			char what[256];
			item_text(v, what, sizeof what);
			bool temp = s < v->k->narrays && arr->role == CT_TEMP;
			ok = vb_err(v, k,
			            "%s: the iterations of '%s' are not independent: they may access the "
			            "same elements of '%s', which the loop writes%s",
			            what, iname(v, P->index), arr->name,
			            temp ? " (a temp gets one copy per thread only where the dependence test proves "
			                   "that every read of it follows a write of its element in the same "
			                   "iteration and that nothing outside the loop writes it)"
			                 : "");
		}
	}
	ct_free(v->k->ctx, l.v);
	ct_free(v->k->ctx, priv);
	ct_free(v->k->ctx, rpriv);
	return ok && v->st == CT_OK;
}

/* Every loop over argument k.. of the item under y (a loop over argument
 * k - 1) has independent iterations. */
static bool band_independent(vb *v, lt_node *top, const lt_node *y, int k)
{
	if (!loop_independent(v, top, y, k - 1))
		return false;
	for (int i = 0; k < v->it->n && i < y->nkids; i++)
		if (!band_independent(v, top, y->kids[i], k + 1))
			return false;
	return true;
}

/* The cache node of a double-buffered region directly in the body of a
 * loop of the collapsed band b[0..n) (through ifs and other regions), or
 * NULL: its blocks flow from one iteration of that loop to the next. */
static const lt_node *carried(const lt_node *x, lt_node *const *b, int n, const ct_looptree *t)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_CACHE && y->cache >= 0 && y->cache < t->nregions &&
		    t->regions[y->cache].double_buffer) {
			const lt_node *p = y->parent;
			while (p && p->kind != LT_LOOP)
				p = p->parent;
			for (int k = 0; k < n; k++)
				if (p == b[k])
					return y;
		}
		const lt_node *z = carried(y, b, n, t);
		if (z)
			return z;
	}
	return NULL;
}

/* No double-buffered region carries blocks between iterations of the
 * collapsed band b[0..n). */
static bool band_no_carry(vb *v, lt_node *const *b, int n)
{
	const ct_looptree *t = v->t;
	const lt_node *y = carried(b[0], b, n, t);
	if (!y)
		return true;
	const lt_region *rg = &t->regions[y->cache];
	const ir_plan_item *ci = rg->item >= 0 && rg->item < v->k->nplan ? &v->k->plan[rg->item] : NULL;
	const lt_node *p = y->parent;
	while (p && p->kind != LT_LOOP)
		p = p->parent;
	int k = 0;
	while (k < n - 1 && b[k] != p)
		k++;
	char what[256];
	item_text(v, what, sizeof what);
	return vb_err(v, k, "%s: the double-buffered cache '%s' carries blocks from one iteration of '%s' to the next",
	              what, ci && ci->name ? ci->name : "?", iname(v, b[k]->index));
}

/* The loops collapsed with x into band[] (at most 64), their count: the
 * single nested loops of the item's next indices; a loop holding main and
 * tail versions of the next index ends the band there. */
static int collapsed_band(const vb *v, lt_node *x, lt_node **band)
{
	int n = 1;
	band[0] = x;
	while (n < v->it->n && n < 64 && band[n - 1]->nkids == 1 && band[n - 1]->kids[0]->kind == LT_LOOP &&
	       band[n - 1]->kids[0]->index == v->it->idx[n]) {
		band[n] = band[n - 1]->kids[0];
		n++;
	}
	return n;
}

/* Checked first on every loop of the item, for the clearer message. */
static bool carry_loop(vb *v, lt_node *x)
{
	lt_node *band[64];
	int n = collapsed_band(v, x, band);
	return band_no_carry(v, band, n);
}

/* A parallel loop under x, or NULL. */
static const lt_node *parallel_inside(const lt_node *x)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_LOOP && y->parallel)
			return y;
		const lt_node *z = parallel_inside(y);
		if (z)
			return z;
	}
	return NULL;
}

static bool parallel_loop(vb *v, lt_node *x)
{
	char what[256];
	item_text(v, what, sizeof what);
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_LOOP && y->parallel)
			return vb_err(v, 0, "%s: the loop over '%s' is inside the parallel loop over '%s' (one level of parallelism)",
			              what, iname(v, x->index), iname(v, y->index));
	const lt_node *in = parallel_inside(x);
	if (in)
		return vb_err(v, 0, "%s: the parallel loop over '%s' is inside the loop over '%s' (one level of parallelism)",
		              what, iname(v, in->index), iname(v, x->index));
	if (!consecutive(v, x, 1))
		return false;
	lt_node *band[64];
	int n = collapsed_band(v, x, band);
	if (!band_independent(v, x, x, 1))
		return false;
	x->parallel = true;
	x->par_item = v->item;
	x->collapse = n;
	v->t->has_parallel = true;
	return true;
}

/* Per-storage privacy: the buffers of regions inside parallel loops. */
static bool mark_private(vb *v)
{
	ct_looptree *t = v->t;
	t->priv = ct_arena_alloc(v->a, sizeof *t->priv * (size_t)(t->narrays + 1));
	if (!t->priv)
		return vb_nomem(v);
	/* the kernel temps parallel loops proved private (loop_independent) */
	for (int a = 0; v->tpriv && a < t->narrays && a < v->k->narrays; a++)
		t->priv[a] = v->tpriv[a];
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		bool inside = false;
		for (const lt_node *y = rg->node; y && !inside; y = y->parent)
			inside = y->kind == LT_LOOP && y->parallel;
		if (!inside)
			continue;
		if (!rg->elided && rg->buffer >= 0 && rg->buffer < t->narrays)
			t->priv[rg->buffer] = true;
		if (rg->temp >= 0 && rg->temp < t->narrays)
			t->priv[rg->temp] = true;
	}
	/* a buffer also used by a region outside every parallel loop would be
	 * shared by that region's code: refuse rather than guess */
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		bool inside = false;
		for (const lt_node *y = rg->node; y && !inside; y = y->parent)
			inside = y->kind == LT_LOOP && y->parallel;
		bool uses = (!rg->elided && rg->buffer >= 0 && rg->buffer < t->narrays && t->priv[rg->buffer]) ||
		            (rg->temp >= 0 && rg->temp < t->narrays && t->priv[rg->temp]);
		if (uses && !inside) {
			v->st = ct_error(v->k->ctx, CT_ERR_INPUT,
			                 "a cache buffer is used both inside and outside parallel loops");
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------ items */

/* Each index takes one loop verb. */
static bool one_verb(vb *v)
{
	for (int i = 0; i < v->it->n; i++) {
		int x = v->it->idx[i];
		if (x < 0 || x >= v->k->nindices)
			return vb_err(v, i, "%s: unknown index", verb_name(v->it->kind));
		int prev = v->verb_of[x];
		if (prev >= 0) {
			const ir_plan_item *p = &v->k->plan[prev];
			return vb_err(v, i, "'%s' already takes %s at %d:%d (one loop verb per index)", iname(v, x),
			              verb_name(p->kind), p->pos.line, p->pos.col);
		}
		v->verb_of[x] = v->item;
	}
	return true;
}

static bool apply_verb(vb *v)
{
	const ir_plan_item *it = v->it;
	if (!one_verb(v))
		return false;
	if (it->kind == PL_PARALLELIZE && it->spmd && it->n > 2)
		return vb_err(v, -1,
		              "parallelize(..., spmd=true) takes one or two indices (the dimensions of the thread grid)");
	if (it->kind == PL_PARALLELIZE && !each_loop(v, v->t->roots, v->t->nroots, it->idx[0], carry_loop))
		return false;
	loop_fn fn = it->kind == PL_UNROLL ? unroll_loop : it->kind == PL_VECTORIZE ? vector_loop : parallel_loop;
	return each_loop(v, v->t->roots, v->t->nroots, it->idx[0], fn);
}

/* Whether this pass applies plan item it of k: every loop verb where
 * parallelize is OpenMP's (the host), unroll and vectorize where the GPU
 * generator maps parallelize to its grid (OpenCL, CUDA). */
static bool verb_here(const ct_kernel *k, const ir_plan_item *it)
{
	if (it->kind == PL_CACHE || it->kind == PL_DISTRIBUTE)
		return false; /* distribute: over ranks, by src/dist, never in one process's loops */
	if (ir_target_row(k->target)->parallel == IR_PAR_GRID)
		return it->kind == PL_UNROLL || it->kind == PL_VECTORIZE;
	return true;
}

bool plan_has_verbs(const ct_kernel *k)
{
	if (!k->has_plan)
		return false;
	for (int i = 0; i < k->nplan; i++)
		if (verb_here(k, &k->plan[i]))
			return true;
	return false;
}

ct_status plan_verbs(ct_looptree *t)
{
	vb v;
	memset(&v, 0, sizeof v);
	v.t = t;
	v.k = t->k;
	v.a = &t->arena;
	v.verb_of = ct_alloc(v.k->ctx, sizeof *v.verb_of * (size_t)(v.k->nindices + 1));
	if (!v.verb_of)
		return CT_ERR_NOMEM;
	for (int i = 0; i < v.k->nindices; i++)
		v.verb_of[i] = -1;
	v.tpriv = ct_arena_alloc(v.a, sizeof *v.tpriv * (size_t)(v.k->narrays + 1));
	if (!v.tpriv) {
		vb_nomem(&v);
		ct_free(v.k->ctx, v.verb_of);
		return v.st;
	}
	for (int i = 0; i < v.k->nplan && v.st == CT_OK; i++) {
		if (!verb_here(v.k, &v.k->plan[i]) || v.k->plan[i].n < 1)
			continue;
		v.item = i;
		v.it = &v.k->plan[i];
		apply_verb(&v);
	}
	if (v.st == CT_OK)
		unroll_cap(&v, t->roots, t->nroots);
	if (v.st == CT_OK && t->has_parallel)
		mark_private(&v);
	if (v.st == CT_OK && t->arena.failed)
		vb_nomem(&v);
	ct_free(v.k->ctx, v.verb_of);
	return v.st;
}
