/* views.c: kernels run on ct_tensor views: strided arrays' run-time layouts, index casting to the top-level tensor, and the window check. */
#include "gen/gen.h"
#include "ir/slots.h"

#include "interp/interp.h"
#include "ir/looptree.h"
#include "engine/engine.h"
#include "engine/targets.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the accessed box */

/*
 * Which elements a run may touch, per array and dimension: the interval of
 * each subscript over the loop ranges, narrowed by the one-index atoms of
 * the enclosing ifs' conjunctions, and clipped to the declared extent (the
 * checker proved that every executed access lies inside it). It may be
 * wider than the elements really touched, never narrower.
 */
typedef struct vbox {
	const ct_kernel *k;
	const int64_t *pv;
	int64_t *lo, *hi;       /* per original index: its range (inclusive) */
	int64_t *blo, *bhi;     /* per array * IR_MAX_RANK + d: the box so far */
	bool *touched;          /* per array */
	bool overflow;
} vbox;

static int64_t floordiv_s(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t ceildiv_s(int64_t a, int64_t b)
{
	return -floordiv_s(-a, b);
}

/* The interval of x over the current index ranges; false on overflow. */
static bool aff_interval(vbox *v, aff x, int64_t *lo, int64_t *hi)
{
	int64_t l = x.c, h = x.c, p, q;
	for (int i = 0; i < x.n; i++) {
		const aff_term *t = &x.t[i];
		int64_t a, b;
		if (t->kind == AFF_PARAM) {
			a = b = v->pv[t->id];
		} else {
			a = v->lo[t->id];
			b = v->hi[t->id];
		}
		if (!ct_mul_ok(t->coef, a, &p) || !ct_mul_ok(t->coef, b, &q))
			return false;
		if (p > q) {
			int64_t s = p;
			p = q;
			q = s;
		}
		if (!ct_add_ok(l, p, &l) || !ct_add_ok(h, q, &h))
			return false;
	}
	*lo = l;
	*hi = h;
	return true;
}

/* Narrow the range of the only index of atom `diff cmp 0` (no-op for atoms
 * over several indices). */
static void narrow_atom(vbox *v, aff diff, ir_cmp cmp)
{
	int id = -1, n = 0;
	int64_t c = 0, rest = diff.c, p;
	for (int i = 0; i < diff.n; i++) {
		const aff_term *t = &diff.t[i];
		if (t->kind == AFF_PARAM) {
			if (!ct_mul_ok(t->coef, v->pv[t->id], &p) || !ct_add_ok(rest, p, &rest))
				return;
		} else {
			id = t->id;
			c = t->coef;
			n++;
		}
	}
	if (n != 1)
		return;
	/* c*i + rest  <= up  and / or  >= down */
	bool has_up = cmp == CMP_LT || cmp == CMP_LE || cmp == CMP_EQ;
	bool has_down = cmp == CMP_GT || cmp == CMP_GE || cmp == CMP_EQ;
	int64_t up = cmp == CMP_LT ? -1 : 0, down = cmp == CMP_GT ? 1 : 0, r;
	if (has_up && ct_sub_ok(up, rest, &r)) {
		if (c > 0 && floordiv_s(r, c) < v->hi[id])
			v->hi[id] = floordiv_s(r, c);
		if (c < 0 && ceildiv_s(r, c) > v->lo[id])
			v->lo[id] = ceildiv_s(r, c);
	}
	if (has_down && ct_sub_ok(down, rest, &r)) {
		if (c > 0 && ceildiv_s(r, c) > v->lo[id])
			v->lo[id] = ceildiv_s(r, c);
		if (c < 0 && floordiv_s(r, c) < v->hi[id])
			v->hi[id] = floordiv_s(r, c);
	}
}

/* Narrow by every atom of a conjunction (an `||` or `!` narrows nothing). */
static void narrow_cond(vbox *v, const ir_expr *e)
{
	if (e->kind == EX_AND) {
		for (int i = 0; i < e->nargs; i++)
			narrow_cond(v, e->args[i]);
	} else if (e->kind == EX_CMP && e->has_diff) {
		narrow_atom(v, e->diff, e->cmp);
	}
}

static void box_access(vbox *v, const ir_expr *e)
{
	const ir_array *arr = &v->k->arrays[e->id];
	int64_t lo[IR_MAX_RANK], hi[IR_MAX_RANK];
	for (int d = 0; d < arr->rank; d++) {
		bool ok = true;
		int64_t ext = aff_eval(arr->ext[d], v->pv, NULL, &ok);
		if (!ok || !aff_interval(v, e->sub[d], &lo[d], &hi[d])) {
			v->overflow = true;
			lo[d] = 0;
			hi[d] = ext - 1;
		}
		lo[d] = lo[d] < 0 ? 0 : lo[d];
		hi[d] = hi[d] > ext - 1 ? ext - 1 : hi[d];
		if (lo[d] > hi[d])
			return; /* never executed */
	}
	for (int d = 0; d < arr->rank; d++) {
		int64_t *blo = &v->blo[e->id * IR_MAX_RANK + d], *bhi = &v->bhi[e->id * IR_MAX_RANK + d];
		if (!v->touched[e->id] || lo[d] < *blo)
			*blo = lo[d];
		if (!v->touched[e->id] || hi[d] > *bhi)
			*bhi = hi[d];
	}
	v->touched[e->id] = true;
}

static void box_expr(vbox *v, const ir_expr *e)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS) {
		box_access(v, e);
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		box_expr(v, e->args[i]);
}

static void box_nodes(vbox *v, ir_node *const *n, int count);

/* The range [*lo, *hi] of an affine loop's variable over the ranges of the
 * enclosing indices its bounds use: the box of the triangle (or band). */
static void affine_interval(vbox *v, const ir_index *x, int64_t *lo, int64_t *hi, bool *ok)
{
	for (int j = 0; j < x->nlo; j++) {
		int64_t a, b;
		if (!aff_interval(v, x->los[j], &a, &b))
			*ok = false;
		*lo = j == 0 || a > *lo ? a : *lo;
	}
	for (int j = 0; j < x->nhi; j++) {
		int64_t a, b;
		if (!aff_interval(v, x->his[j], &a, &b))
			*ok = false;
		*hi = j == 0 || b - 1 < *hi ? b - 1 : *hi;
	}
}

/* A loop's ranges, its body, then the ranges restored. */
static void box_for(vbox *v, const ir_node *n)
{
	int64_t save_lo[IR_MAX_DEPTH], save_hi[IR_MAX_DEPTH];
	int m = n->nidx < IR_MAX_DEPTH ? n->nidx : IR_MAX_DEPTH;
	bool empty = false;
	for (int i = 0; i < m; i++) {
		const ir_index *x = &v->k->indices[n->idx[i]];
		bool ok = true;
		save_lo[i] = v->lo[n->idx[i]];
		save_hi[i] = v->hi[n->idx[i]];
		if (ir_index_affine(x)) {
			affine_interval(v, x, &v->lo[n->idx[i]], &v->hi[n->idx[i]], &ok);
		} else {
			int64_t a = aff_eval(x->lo, v->pv, NULL, &ok), z = aff_eval(x->hi, v->pv, NULL, &ok) - 1;
			int64_t s = ir_index_src_step(x); /* a stepped loop's last value */
			v->lo[n->idx[i]] = a;
			v->hi[n->idx[i]] = z >= a && s > 1 ? a + (z - a) / s * s : z;
		}
		empty = empty || v->hi[n->idx[i]] < v->lo[n->idx[i]];
		v->overflow = v->overflow || !ok;
	}
	if (!empty)
		box_nodes(v, n->body, n->nbody);
	for (int i = 0; i < m; i++) {
		v->lo[n->idx[i]] = save_lo[i];
		v->hi[n->idx[i]] = save_hi[i];
	}
}

static void box_if(vbox *v, const ir_node *n)
{
	int ni = v->k->nindices;
	int64_t *save = malloc(sizeof *save * 2 * (size_t)(ni + 1));
	if (!save) { /* no narrowing: a wider box, still safe */
		box_nodes(v, n->body, n->nbody);
		box_nodes(v, n->els, n->nels);
		return;
	}
	memcpy(save, v->lo, sizeof *save * (size_t)ni);
	memcpy(save + ni, v->hi, sizeof *save * (size_t)ni);
	narrow_cond(v, n->cond);
	bool empty = false;
	for (int i = 0; i < ni; i++)
		empty = empty || v->hi[i] < v->lo[i];
	if (!empty)
		box_nodes(v, n->body, n->nbody);
	memcpy(v->lo, save, sizeof *save * (size_t)ni);
	memcpy(v->hi, save + ni, sizeof *save * (size_t)ni);
	free(save);
	box_nodes(v, n->els, n->nels);
}

static void box_nodes(vbox *v, ir_node *const *n, int count)
{
	for (int i = 0; i < count; i++) {
		switch (n[i]->kind) {
		case ND_FOR:
			box_for(v, n[i]);
			break;
		case ND_IF:
			box_if(v, n[i]);
			break;
		case ND_STMT:
			box_expr(v, n[i]->lhs);
			box_expr(v, n[i]->rhs);
			break;
		case ND_LET:
			box_expr(v, n[i]->rhs);
			break;
		}
	}
}

/* ------------------------------------------------------------ checking the views */

/* Everything a run on views needs: per array its data pointer, per
 * strided array its layout values, per array its buffer size. */
typedef struct vrun {
	void **args;
	int64_t *params;  /* k->nparams values, then the view slots */
	int64_t *nelem;
} vrun;

/* Check that view v fits array a (type, rank, the top-level tensor's
 * extents) and compute base (the physical offset of the top-level logical
 * origin) and off[] (the view's origin in the top-level tensor). */
static ct_status view_fits(ct_kernel *k, int a, const ct_tensor *v, const int64_t *pv, int64_t *base,
                           int64_t *off, int64_t *nelem)
{
	const ir_array *arr = &k->arrays[a];
	ct_ctx *ctx = k->ctx;
	if (!v)
		return ct_error(ctx, CT_ERR_USAGE, "no view for array '%s'", arr->name);
	if (ct_tensor_dtype(v) != arr->type || ct_tensor_rank(v) != arr->rank)
		return ct_error(ctx, CT_ERR_USAGE, "the view of '%s' is a %s tensor of rank %d, not %s of rank %d",
		                arr->name, ct_dtype_name(ct_tensor_dtype(v)), ct_tensor_rank(v),
		                ct_dtype_name(arr->type), arr->rank);
	const ct_tensor *root = ct_tensor_root(v);
	int64_t zero[IR_MAX_RANK] = {0};
	ct_status st = ct_tensor_cast(v, NULL, zero, off);
	if (st)
		return st;
	int64_t b = ct_tensor_origin(v), top = ct_tensor_origin(v), p;
	for (int d = 0; d < arr->rank; d++) {
		bool ok = true;
		int64_t ext = aff_eval(arr->ext[d], pv, NULL, &ok), wlo, whi;
		if (ct_tensor_extent(root, d) != ext)
			return ct_error(ctx, CT_ERR_USAGE,
			                "the top-level tensor of the view of '%s' has extent %lld in dimension %d, "
			                "the kernel declares %lld",
			                arr->name, (long long)ct_tensor_extent(root, d), d + 1, (long long)ext);
		int64_t s = ct_tensor_stride(v, d);
		ct_tensor_window(v, d, &wlo, &whi);
		if (!ct_mul_ok(off[d], s, &p) || !ct_sub_ok(b, p, &b) ||
		    !ct_mul_ok(whi - 1, s, &p) || !ct_add_ok(top, p, &top))
			return ct_error(ctx, CT_ERR_LIMIT, "the view of '%s' overflows 64-bit offsets", arr->name);
	}
	*base = b;
	*nelem = top + 1;
	return CT_OK;
}

/* A non-strided array's view must be laid out as declared, from element
 * (0, ...) of its buffer: the code has its strides built in. */
static ct_status dense_as_declared(ct_kernel *k, int a, const ct_tensor *v, const int64_t *pv, int64_t base)
{
	int64_t want[IR_MAX_RANK];
	const ir_array *arr = &k->arrays[a];
	bool ok = view_dense_strides(k, a, pv, want) && base == 0;
	for (int d = 0; ok && d < arr->rank; d++)
		ok = ct_tensor_stride(v, d) == want[d] || ct_tensor_extent(ct_tensor_root(v), d) == 1;
	if (!ok)
		return ct_error(k->ctx, CT_ERR_USAGE,
		                "array '%s' is not declared strided, so its view must be its top-level tensor's "
		                "dense buffer in the declared layout (declare it `strided` for other layouts)",
		                arr->name);
	return CT_OK;
}

/* The box of array a must lie in the window of its view. */
static ct_status box_in_window(ct_kernel *k, int a, const vbox *vb, const ct_tensor *v, const int64_t *off)
{
	const ir_array *arr = &k->arrays[a];
	if (!vb->touched[a])
		return CT_OK;
	for (int d = 0; d < arr->rank; d++) {
		int64_t wlo, whi;
		ct_tensor_window(v, d, &wlo, &whi);
		int64_t lo = vb->blo[a * IR_MAX_RANK + d], hi = vb->bhi[a * IR_MAX_RANK + d];
		if (lo < wlo + off[d] || hi >= whi + off[d])
			return ct_error(k->ctx, CT_ERR_USAGE,
			                "the kernel may access '%s' at %lld..%lld in dimension %d (top-level "
			                "indices), outside its view's window %lld..%lld",
			                arr->name, (long long)lo, (long long)hi, d + 1, (long long)(wlo + off[d]),
			                (long long)(whi - 1 + off[d]));
	}
	return CT_OK;
}

/* Fill run from the views after checking each against its array. */
static ct_status prepare(ct_kernel *k, ct_tensor *const *views, vrun *run)
{
	ct_ctx *ctx = k->ctx;
	int ni = k->nindices, na = k->narrays;
	vbox vb;
	memset(&vb, 0, sizeof vb);
	vb.k = k;
	vb.pv = run->params;
	vb.lo = calloc((size_t)ni + 1, sizeof *vb.lo);
	vb.hi = calloc((size_t)ni + 1, sizeof *vb.hi);
	vb.blo = calloc((size_t)na * IR_MAX_RANK + 1, sizeof *vb.blo);
	vb.bhi = calloc((size_t)na * IR_MAX_RANK + 1, sizeof *vb.bhi);
	vb.touched = calloc((size_t)na + 1, sizeof *vb.touched);
	ct_status st = CT_OK;
	if (!vb.lo || !vb.hi || !vb.blo || !vb.bhi || !vb.touched)
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st)
		box_nodes(&vb, k->body, k->nbody);
	for (int a = 0; a < na && !st; a++) {
		const ir_array *arr = &k->arrays[a];
		if (arr->role == CT_TEMP)
			continue;
		int64_t base = 0, off[IR_MAX_RANK];
		st = view_fits(k, a, views[a], run->params, &base, off, &run->nelem[a]);
		int slot = view_slot(k, a);
		if (!st && slot < 0)
			st = dense_as_declared(k, a, views[a], run->params, base);
		if (!st)
			st = box_in_window(k, a, &vb, views[a], off);
		if (st)
			break;
		run->args[a] = ct_tensor_data(views[a]);
		if (slot >= 0) {
			int64_t *s = run->params + k->nparams + slot;
			s[0] = base;
			for (int d = 0; d < arr->rank; d++)
				s[1 + d] = ct_tensor_stride(views[a], d);
		}
	}
	free(vb.lo);
	free(vb.hi);
	free(vb.blo);
	free(vb.bhi);
	free(vb.touched);
	return st;
}

/* One run of the scheduled, planned kernel in the interpreter. */
static ct_status run_interp_views(ct_kernel *k, const vrun *run)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(k->ctx);
	ct_status st = interp_run_views(t, run->args, run->params, run->nelem);
	ct_looptree_free(t);
	return st;
}

/* One run of the compiled kernel. */
static ct_status run_native_views(ct_kernel *k, const vrun *run, int threads)
{
	int (*entry)(void *const *, const int64_t *) = NULL;
	int used = 1;
	ct_status st = native_entry(k, threads, &entry, &used);
	if (st)
		return st;
	(void)used;
	/* the slots prepare() filled from the views, in the one layout */
	entry_args_fill(k, run->args, run->params, run->params + k->nparams, run->args, run->params);
	int rc = entry(run->args, run->params);
	if (rc != 0)
		return gen_status_error(k, rc);
	return CT_OK;
}

ct_status ct_kernel_run_views(ct_kernel *k, ct_tensor *const *views, const ct_run_options *opts)
{
	if (!k)
		return CT_ERR_USAGE;
	ct_ctx *ctx = k->ctx;
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	if (!views)
		return ct_error(ctx, CT_ERR_USAGE, "ct_kernel_run_views needs one view per array");
	ct_run_options dflt;
	ct_run_options_init(&dflt);
	const ct_run_options *o = opts ? opts : &dflt;
	ct_engine engine = o->engine;
	if (engine != CT_ENGINE_NATIVE && engine != CT_ENGINE_INTERP)
		return ct_error(ctx, CT_ERR_USAGE, "unknown engine %d", (int)engine);
	/* the checked entry reports through the run's own path; views run the plain one */
	if (engine == CT_ENGINE_NATIVE && o->checked)
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
				"checked runs cover ct_kernel_run only, not kernels on views (the interpreter engine always tests)");
	/* a GPU kernel's host C never runs in its place (the interpreter is the reference) */
	if (engine == CT_ENGINE_NATIVE) {
		ct_status own = eng_native_only(k, "ct_kernel_run_views");
		if (own)
			return own;
	}
	if (ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
	vrun run;
	run.args = calloc((size_t)k->narrays + 1, sizeof *run.args);
	run.params = calloc((size_t)entry_param_count(k) + 1, sizeof *run.params);
	run.nelem = calloc((size_t)k->narrays + 1, sizeof *run.nelem);
	ct_status st = CT_OK;
	if (!run.args || !run.params || !run.nelem)
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st) {
		ir_param_values(k, run.params);
		st = prepare(k, views, &run);
	}
	if (!st)
		st = engine == CT_ENGINE_INTERP ? run_interp_views(k, &run) : run_native_views(k, &run, o->threads);
	free(run.args);
	free(run.params);
	free(run.nelem);
	return st;
}
