/* edges.c: the planned tree's arithmetic proven at check: loop bounds and steps, buffer sizes and nesting depth within what the generated code and the interpreter can run. */
#include "plan/plan.h"
#include "ir/targets.h"

#include <stdarg.h>

/*
 * The interpreter refuses a loop whose variable would pass 2^63 - 1 (the
 * `v += step` after its last iteration overflows) and a buffer it cannot
 * address; the generated C would overflow or wrap there instead. Both are
 * decided here, on the tree every engine runs, so that `check` refuses
 * what a run would: with every compile-time param known, each loop's
 * bounds are numbers. Bounds that name a runtime param without a value
 * are left to the generated code's entry checks (gen/cgen.c) and to the
 * interpreter, which see the values.
 */

typedef struct eg {
	ct_looptree *t;
	ct_kernel *k;
	int64_t *pv;
	ct_status st;
} eg;

static void eg_err(eg *e, ir_pos at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void eg_err(eg *e, ir_pos at, const char *fmt, ...)
{
	if (e->st != CT_OK)
		return;
	va_list ap;
	va_start(ap, fmt);
	ct_verror_at(e->k->ctx, CT_ERR_INPUT, e->k->file, at.line, at.col, fmt, ap);
	va_end(ap);
	e->st = CT_ERR_INPUT;
}

/* Whether x names a runtime param that has no value yet, itself or
 * through a derived value. */
static bool unknown_at(const eg *e, const bx *x)
{
	if (!x)
		return false;
	const ct_kernel *k = e->k;
	if (x->kind == BX_PARAM && x->id >= k->nparams) {
		int d = x->id - k->nparams;
		return d >= e->t->nderived || unknown_at(e, e->t->derived[d]);
	}
	if (x->kind == BX_PARAM)
		return x->id >= 0 && k->params[x->id].runtime && !k->params[x->id].has_value;
	return unknown_at(e, x->a) || unknown_at(e, x->b);
}

/* The plan item of the cache region that encloses node x (-1 if none). */
static int region_item(const eg *e, const lt_node *x)
{
	for (; x; x = x->parent)
		if (x->kind == LT_CACHE && x->cache >= 0 && x->cache < e->t->nregions)
			return e->t->regions[x->cache].item;
	return -1;
}

/* Where the loop x is written: the split that gave it its step, the loop
 * that declares its index, or the cache whose copy loop it is. */
static ir_pos loop_pos(const eg *e, const lt_node *x)
{
	const ct_kernel *k = e->k;
	if (x->index >= 0 && x->index < k->nindices) {
		for (int s = 0; x->step > 1 && s < k->nsched; s++) {
			const ir_sched *sc = &k->sched[s];
			for (int a = 0; sc->kind != SC_REORDER && a < sc->n; a++)
				if (sc->idx[a] == x->index)
					return sc->size_expr && sc->size_expr[a] ? sc->size_expr[a]->pos
					       : sc->arg_pos                    ? sc->arg_pos[a]
					                                        : sc->pos;
		}
		return k->indices[x->index].pos;
	}
	int item = region_item(e, x);
	if (item >= 0 && item < k->nplan)
		return k->plan[item].pos;
	return k->has_plan ? k->plan_pos : k->name_pos;
}

static const char *loop_name(const eg *e, const lt_node *x)
{
	return x->index >= 0 && x->index < e->t->nindices ? e->t->indices[x->index].name : "?";
}

/* Whether loop x is one of an OpenMP worksharing band's loops on the host
 * (a non-SPMD parallelize: the loop itself, or one of the collapse - 1
 * single loops nested in it): OpenMP computes their trip counts itself. */
static bool omp_band_loop(const eg *e, const lt_node *x)
{
	if (ir_kernel_target(e->k)->parallel != IR_PAR_OPENMP)
		return false;
	for (int d = 0; x && x->kind == LT_LOOP; d++, x = x->parent) {
		if (x->parallel) {
			const ir_plan_item *it = x->par_item >= 0 && x->par_item < e->k->nplan ? &e->k->plan[x->par_item] : NULL;
			return it && !it->spmd && d < (x->collapse > 0 ? x->collapse : 1);
		}
		if (x->parent && x->parent->nkids != 1)
			return false;
	}
	return false;
}

static void check_loop(eg *e, const lt_node *x, int depth)
{
	const char *name = loop_name(e, x);
	if (depth > PLAN_MAX_DEPTH) {
		eg_err(e, loop_pos(e, x),
		       "the loop over '%s' is nested %d deep in the generated code (loops, ifs and cache "
		       "regions); at most %d",
		       name, depth, PLAN_MAX_DEPTH);
		return;
	}
	/* an affine loop steps from a per-iteration start up to a bound that check proved to fit:
	 * a split one (step > 1, a plain split, or a loop made affine by a reorder's projected
	 * bounds) must not overflow after a value just below its bound over params, where it has
	 * one; without one, its step is kept below 2^32 */
	if (lt_affine_loop(x)) {
		bool ok = true;
		int64_t hi = unknown_at(e, x->hi) ? LT_NO_HI : bx_eval(x->hi, e->pv, &ok), last;
		if (x->step > 1 && ok &&
		    (hi == LT_NO_HI ? x->step > ((int64_t)1 << 32) : !ct_loop_last(hi - 1, hi, x->step, &last)))
			eg_err(e, loop_pos(e, x),
			       "loop '%s' has affine bounds and steps by %lld: its variable could pass 2^63 - 1 "
			       "after its last iteration (a smaller split)",
			       name, (long long)x->step);
		return;
	}
	if (unknown_at(e, x->lo) || unknown_at(e, x->hi))
		return;
	bool ok = true;
	int64_t lo = bx_eval(x->lo, e->pv, &ok), hi = bx_eval(x->hi, e->pv, &ok);
	if (!ok) {
		eg_err(e, loop_pos(e, x), "the bounds of loop '%s' overflow 64 bits", name);
		return;
	}
	int64_t last;
	if (!ct_loop_last(lo, hi, x->step, &last))
		eg_err(e, loop_pos(e, x),
		       "loop '%s' overflows 64 bits: from %lld to %lld by %lld, its variable would pass "
		       "2^63 - 1 after the last iteration",
		       name, (long long)lo, (long long)hi, (long long)x->step);
	/* OpenMP counts a worksharing loop's iterations as (hi - lo + step - 1) / step in
	 * the loop's type: with a step near 2^63 that sum overflows and the loop runs no
	 * iteration at all (tests/plans/errors/parallel_step_overflow) */
	int64_t span;
	if (e->st == CT_OK && hi > lo && omp_band_loop(e, x) &&
	    (!ct_sub_ok(hi, lo, &span) || !ct_add_ok(span, x->step - 1, &span)))
		eg_err(e, loop_pos(e, x),
		       "parallel loop '%s' from %lld to %lld by %lld: OpenMP's trip count (hi - lo + "
		       "step - 1) overflows 64 bits (a smaller split, or parallelize(..., spmd=true))",
		       name, (long long)lo, (long long)hi, (long long)x->step);
}

static void walk(eg *e, lt_node *const *nodes, int n, int depth)
{
	for (int i = 0; i < n && e->st == CT_OK; i++) {
		const lt_node *x = nodes[i];
		if (x->kind == LT_STMT || x->kind == LT_LET)
			continue;
		if (x->kind == LT_LOOP)
			check_loop(e, x, depth + 1);
		walk(e, x->kids, x->nkids, depth + 1);
		walk(e, x->els, x->nels, depth + 1);
	}
}

/* Cache buffers within 2^62 bytes, as the kernel's arrays (lang's check). */
static void check_buffers(eg *e)
{
	const ct_kernel *k = e->k;
	for (int a = k->narrays; a < e->t->narrays && e->st == CT_OK; a++) {
		const ir_array *ar = &e->t->arrays[a];
		bool skip = false;
		for (int d = 0; d < ar->rank; d++)
			skip = skip || unknown_at(e, e->t->ext[a * IR_MAX_RANK + d]);
		if (skip)
			continue;
		int64_t stride[IR_MAX_RANK], count = 0, bytes;
		int item = lt_storage_item(e->t, a);
		ir_pos at = item >= 0 && item < k->nplan ? k->plan[item].pos : k->plan_pos;
		ct_status st = lt_array_layout(e->t, e->pv, a, stride, &count);
		if (st == CT_OK && ct_mul_ok(count, (int64_t)ct_dtype_size(ar->type), &bytes) &&
		    bytes <= PLAN_MAX_BYTES)
			continue;
		if (st == CT_ERR_NOMEM) {
			e->st = st;
			return;
		}
		eg_err(e, at, "the buffer of cache '%s' is too large (more than 2^62 bytes)", ar->name);
	}
}

ct_status plan_check_edges(ct_looptree *t)
{
	eg e = {t, t->k, NULL, CT_OK};
	e.pv = ct_alloc(t->k->ctx, sizeof *e.pv * (size_t)(t->k->nparams + t->nderived + 1));
	if (!e.pv)
		return CT_ERR_NOMEM;
	bool ok = lt_param_values(t, e.pv);
	/* a derived value that overflows names no unknown param: refused */
	for (int i = 0; !ok && i < t->nderived; i++) {
		bool one = true;
		(void)bx_eval(t->derived[i], e.pv, &one);
		if (!one && !unknown_at(&e, t->derived[i]))
			eg_err(&e, t->k->has_plan ? t->k->plan_pos : t->k->name_pos,
			       "a bound of kernel '%s' overflows 64 bits", t->k->name);
	}
	walk(&e, t->roots, t->nroots, 0);
	if (e.st == CT_OK)
		check_buffers(&e);
	ct_free(t->k->ctx, e.pv);
	return e.st;
}
