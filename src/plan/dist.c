/* dist.c: the analysis behind distribute(): axes, each array's alignment, reductions and accesses per rank; the checks that refuse what cannot be distributed; the per-rank kernel. */
#include "plan/dist.h"
#include "plan/plan.h"

#include <cachet.h>

#include "ir/deps.h"
#include "ir/looptree.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ct_kernel_is_distributed(const ct_kernel *k)
{
	return k && dist_wanted(k);
}

bool dist_wanted(const ct_kernel *k)
{
	for (int i = 0; k->has_plan && i < k->nplan; i++)
		if (k->plan[i].kind == PL_DISTRIBUTE)
			return true;
	return false;
}

typedef struct da {
	ct_kernel *k;
	dist_plan *p;
	const ir_plan_item *it;
	ct_status st;
} da;

static bool da_err(da *a, ir_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool da_err(da *a, ir_pos pos, const char *fmt, ...)
{
	if (a->st != CT_OK)
		return false;
	if (pos.line == 0)
		pos = a->it->pos;
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	a->st = ct_error_at(a->k->ctx, CT_ERR_INPUT, a->k->file, pos.line, pos.col, "distribute: %s", msg);
	return false;
}

static const char *iname(const ct_kernel *k, int id)
{
	return id >= 0 && id < k->nindices ? k->indices[id].name : "?";
}

/* The axis of original index id, or -1. */
static int axis_of(const dist_plan *p, int id)
{
	for (int g = 0; g < p->naxes; g++)
		if (p->axis_index[g] == id)
			return g;
	return -1;
}

/* ------------------------------------------------------------ the item and its axes */

static bool find_item(da *a)
{
	const ct_kernel *k = a->k;
	int found = -1;
	for (int i = 0; i < k->nplan; i++) {
		if (k->plan[i].kind != PL_DISTRIBUTE)
			continue;
		a->it = &k->plan[i];
		if (found >= 0)
			return da_err(a, k->plan[i].pos, "a plan distributes one band (a second distribute item)");
		found = i;
	}
	a->p->item = found;
	a->it = &k->plan[found];
	return true;
}

static bool kernel_fits(da *a)
{
	const ct_kernel *k = a->k;
	if (k->target != TARGET_HOST)
		return da_err(a, a->it->pos, "only the host target is distributed (plan(target=...) runs on one device)");
	if (k->affine_bounds)
		return da_err(a, a->it->pos, "loops with affine bounds are not distributed yet");
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].runtime)
			return da_err(a, a->it->pos,
			              "param '%s' is runtime: a distributed kernel needs its sizes when it is generated",
			              k->params[i].name);
	if (k->narrays > 64)
		return da_err(a, a->it->pos, "at most 64 arrays");
	return true;
}

/* unroll() of a loop whose trip count differs per rank: a distributed loop or the panel loop,
 * unsplit (a split's inner loop keeps its constant trip count). */
static bool check_unrolls(da *a)
{
	const ct_kernel *k = a->k;
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *u = &k->plan[i];
		if (u->kind != PL_UNROLL || u->n < 1)
			continue;
		int x = u->idx[0];
		if (axis_of(a->p, x) >= 0 || x == a->p->panel_index)
			return da_err(a, u->pos, "unroll(%s): the trip count of a distributed loop differs from rank to rank "
			              "(split it and unroll the inner loop)", iname(k, x));
	}
	return true;
}

static bool make_axes(da *a)
{
	const ct_kernel *k = a->k;
	dist_plan *p = a->p;
	p->naxes = a->it->n;
	for (int g = 0; g < p->naxes; g++) {
		int id = a->it->idx[g];
		ir_pos pos = a->it->idx_pos ? a->it->idx_pos[g] : a->it->pos;
		const ir_index *x = &k->indices[id];
		if (x->kind != IX_LOOP)
			return da_err(a, pos, "'%s' comes from a split; name its loop '%s' (the blocks follow its outermost split)",
			              x->name, iname(k, x->root));
		if (x->balanced || (x->child >= 0 && k->indices[x->child].balanced))
			return da_err(a, pos, "'%s' has a balanced split, whose blocks are not all of one size", x->name);
		bool ok = true;
		ctd_axis *ax = &p->axes[g];
		ax->lo = aff_eval(x->lo, p->params, NULL, &ok);
		ax->hi = aff_eval(x->hi, p->params, NULL, &ok);
		ax->step = x->step > 0 ? x->step : 1;
		ax->ranks = 0;
		p->axis_index[g] = id;
		p->grid[g] = a->it->grid[g];
		if (!ok)
			return da_err(a, pos, "the bounds of '%s' overflow", x->name);
	}
	return true;
}

/* ------------------------------------------------------------ statements and accesses */

/* Whether every statement below nodes lies inside loops over all axes (inside: the axes
 * whose loops enclose them, a bit each). */
static bool statements_inside(da *a, ir_node *const *nodes, int n, int inside)
{
	int all = (1 << a->p->naxes) - 1;
	for (int i = 0; i < n && a->st == CT_OK; i++) {
		const ir_node *x = nodes[i];
		int in = inside;
		if (x->kind == ND_FOR)
			for (int j = 0; j < x->nidx; j++) {
				int g = axis_of(a->p, x->idx[j]);
				if (g >= 0)
					in |= 1 << g;
			}
		if ((x->kind == ND_STMT || x->kind == ND_LET) && in != all) {
			for (int g = 0; g < a->p->naxes; g++)
				if (!(in >> g & 1))
					return da_err(a, x->pos, "this statement is not inside loop '%s': every rank would run it",
					              iname(a->k, a->p->axis_index[g]));
		}
		statements_inside(a, x->body, x->nbody, in);
		statements_inside(a, x->els, x->nels, in);
	}
	return a->st == CT_OK;
}

/* The range [*lo, *hi] of original index id's values. */
static void index_range(const da *a, int id, int64_t *lo, int64_t *hi)
{
	bool ok = true;
	*lo = aff_eval(a->k->indices[id].lo, a->p->params, NULL, &ok);
	*hi = aff_eval(a->k->indices[id].hi, a->p->params, NULL, &ok) - 1;
}

/* Access e (write or not) of array e->id as a ref of its ctd_array. */
static bool add_ref(da *a, const ir_expr *e, bool write)
{
	ctd_array *arr = &a->p->arrays[e->id];
	if (arr->nref >= CTD_MAX_REFS)
		return da_err(a, e->pos, "'%s' is accessed at more than %d places", a->k->arrays[e->id].name, CTD_MAX_REFS);
	ctd_ref *r = &arr->ref[arr->nref++];
	memset(r, 0, sizeof *r);
	r->write = write;
	for (int d = 0; d < arr->rank; d++) {
		aff s = e->sub[d];
		int64_t lo = s.c, hi = s.c;
		for (int t = 0; t < s.n; t++) {
			const aff_term *term = &s.t[t];
			int64_t vlo, vhi;
			if (term->kind == AFF_PARAM) {
				vlo = vhi = a->p->params[term->id];
			} else {
				int g = axis_of(a->p, term->id);
				if (g >= 0) {
					r->coef[d][g] = term->coef;
					continue;
				}
				index_range(a, term->id, &vlo, &vhi);
			}
			int64_t x = term->coef * vlo, y = term->coef * vhi;
			lo += x < y ? x : y;
			hi += x < y ? y : x;
		}
		r->rlo[d] = lo;
		r->rhi[d] = hi;
	}
	return true;
}

static bool refs_of_expr(da *a, const ir_expr *e)
{
	if (!e || a->st != CT_OK)
		return a->st == CT_OK;
	if (e->kind == EX_ACCESS && !add_ref(a, e, false))
		return false;
	for (int i = 0; i < e->nargs; i++)
		refs_of_expr(a, e->args[i]);
	return a->st == CT_OK;
}

static bool collect_refs(da *a, ir_node *const *nodes, int n)
{
	for (int i = 0; i < n && a->st == CT_OK; i++) {
		const ir_node *x = nodes[i];
		if (x->kind == ND_STMT) {
			add_ref(a, x->lhs, true);
			/* += reads its element: the write's own ref covers it */
			refs_of_expr(a, x->rhs);
		} else if (x->kind == ND_LET) {
			refs_of_expr(a, x->rhs);
		}
		collect_refs(a, x->body, x->nbody);
		collect_refs(a, x->els, x->nels);
	}
	return a->st == CT_OK;
}

/* Whether dimension d of ref r is exactly the index of axis g. */
static bool exactly_axis(const da *a, const ctd_ref *r, int d, int g)
{
	for (int h = 0; h < a->p->naxes; h++)
		if (r->coef[d][h] != (h == g ? 1 : 0))
			return false;
	return r->rlo[d] == 0 && r->rhi[d] == 0;
}

/* Whether dimension d of ref r uses no axis index. */
static bool free_of_axes(const da *a, const ctd_ref *r, int d)
{
	for (int h = 0; h < a->p->naxes; h++)
		if (r->coef[d][h] != 0)
			return false;
	return true;
}

/* Align each dimension of array i with the first axis whose index it is (coefficient 1, no
 * other axis), writes first. */
static void align_array(da *a, int i)
{
	ctd_array *arr = &a->p->arrays[i];
	for (int d = 0; d < arr->rank; d++) {
		arr->align[d] = -1;
		for (int pass = 0; pass < 2 && arr->align[d] < 0; pass++)
			for (int j = 0; j < arr->nref && arr->align[d] < 0; j++) {
				const ctd_ref *r = &arr->ref[j];
				if (r->write != (pass == 0))
					continue;
				for (int g = 0; g < a->p->naxes; g++) {
					bool one = r->coef[d][g] == 1;
					for (int h = 0; h < a->p->naxes && one; h++)
						one = h == g || r->coef[d][h] == 0;
					if (one)
						arr->align[d] = g;
				}
			}
	}
	/* an axis taken by two dimensions stays with the first */
	for (int d = 0; d < arr->rank; d++)
		for (int e = 0; e < d; e++)
			if (arr->align[d] >= 0 && arr->align[d] == arr->align[e])
				arr->align[d] = -1;
}

/* The statement (ND_STMT) whose left-hand side is the n-th write of array i, for its
 * position and operator; NULL when not found. */
static const ir_node *nth_write(ir_node *const *nodes, int n, int i, int *count)
{
	for (int j = 0; j < n; j++) {
		const ir_node *x = nodes[j];
		if (x->kind == ND_STMT && x->lhs->id == i && (*count)-- == 0)
			return x;
		const ir_node *s = nth_write(x->body, x->nbody, i, count);
		if (!s)
			s = nth_write(x->els, x->nels, i, count);
		if (s)
			return s;
	}
	return NULL;
}

static bool check_writes(da *a, int i)
{
	const ct_kernel *k = a->k;
	ctd_array *arr = &a->p->arrays[i];
	int w = 0;
	for (int j = 0; j < arr->nref && a->st == CT_OK; j++) {
		const ctd_ref *r = &arr->ref[j];
		if (!r->write)
			continue;
		int count = w++;
		const ir_node *s = nth_write(k->body, k->nbody, i, &count);
		ir_pos pos = s ? s->pos : a->it->pos;
		for (int d = 0; d < arr->rank; d++) {
			int g = arr->align[d];
			if (g >= 0 ? !exactly_axis(a, r, d, g) : !free_of_axes(a, r, d))
				return da_err(a, pos,
				              "'%s' is written at a subscript in dimension %d other than a distributed index itself: a rank "
				              "writes only the elements of its own block",
				              k->arrays[i].name, d + 1);
		}
		for (int g = 0; g < a->p->naxes; g++) {
			bool used = false;
			for (int d = 0; d < arr->rank; d++)
				used = used || arr->align[d] == g;
			if (used)
				continue;
			if (!s || (s->op != AS_ADD && s->op != AS_SUB) || arr->role == 3)
				return da_err(a, pos,
				              "'%s' is written at elements that do not depend on '%s': every rank along it would write "
				              "them (only += and -= into an argument array are summed over ranks)",
				              k->arrays[i].name, iname(k, a->p->axis_index[g]));
			arr->reduce |= 1 << g;
		}
	}
	return a->st == CT_OK;
}

/* Reads of an array written in the kernel must stay on the rank's own elements: another
 * rank's elements change during the call. */
static bool check_reads_of_written(da *a, int i)
{
	const ct_kernel *k = a->k;
	ctd_array *arr = &a->p->arrays[i];
	bool written = false;
	for (int j = 0; j < arr->nref; j++)
		written = written || arr->ref[j].write;
	if (!written)
		return true;
	for (int j = 0; j < arr->nref; j++) {
		const ctd_ref *r = &arr->ref[j];
		if (r->write)
			continue;
		if (arr->reduce)
			return da_err(a, a->it->pos, "'%s' is summed over ranks and also read: each rank holds only a partial sum",
			              k->arrays[i].name);
		for (int d = 0; d < arr->rank; d++) {
			int g = arr->align[d];
			if (g >= 0 ? !exactly_axis(a, r, d, g) : !free_of_axes(a, r, d))
				return da_err(a, a->it->pos,
				              "'%s' is written in this kernel and read at elements another rank may write in the same "
				              "call (an exchange between statements is not supported)",
				              k->arrays[i].name);
		}
	}
	return true;
}

/* Whether array i is in replicate= (every rank holds it whole): only arrays the kernel does not
 * write; its dimensions are then aligned with no axis. */
static bool replicated(da *a, int i)
{
	bool listed = false;
	for (int j = 0; j < a->it->nrepl; j++)
		listed = listed || a->it->repl[j] == i;
	if (!listed)
		return false;
	ctd_array *arr = &a->p->arrays[i];
	for (int j = 0; j < arr->nref; j++)
		if (arr->ref[j].write)
			return !da_err(a, a->it->pos, "replicate: '%s' is written by the kernel: each rank writes its own block of it",
			               a->k->arrays[i].name);
	if (arr->role == 3)
		return !da_err(a, a->it->pos, "replicate: '%s' is a temp, which every rank holds whole already",
		               a->k->arrays[i].name);
	for (int d = 0; d < arr->rank; d++)
		arr->align[d] = -1;
	arr->replicated = 1;
	return true;
}

static bool make_arrays(da *a)
{
	const ct_kernel *k = a->k;
	dist_plan *p = a->p;
	p->narrays = k->narrays;
	p->arrays = ct_alloc(k->ctx, sizeof *p->arrays * (size_t)(k->narrays > 0 ? k->narrays : 1));
	if (!p->arrays)
		return (a->st = CT_ERR_NOMEM), false;
	for (int i = 0; i < k->narrays; i++) {
		const ir_array *src = &k->arrays[i];
		ctd_array *arr = &p->arrays[i];
		arr->rank = src->rank;
		arr->esize = (int)ct_dtype_size(src->type);
		arr->role = src->role == CT_TEMP ? 3 : ir_array_readonly(src) ? 0 : src->role == CT_OUTPUT ? 1 : 2;
		arr->panel_dim = arr->panel_axis = -1;
		for (int d = 0; d < src->rank; d++) {
			bool ok = true;
			arr->ext[d] = aff_eval(src->ext[d], p->params, NULL, &ok);
		}
	}
	if (!collect_refs(a, k->body, k->nbody))
		return false;
	for (int i = 0; i < k->narrays && a->st == CT_OK; i++) {
		align_array(a, i);
		if (replicated(a, i))
			continue;
		if (check_writes(a, i))
			check_reads_of_written(a, i);
	}
	return a->st == CT_OK;
}

/* ------------------------------------------------------------ SUMMA panels */

/* Whether every statement below nodes is `+=` / `-=` inside a loop over k (inside: a loop over
 * k encloses nodes) into an array that k does not index. */
static bool reductions_over(const da *a, ir_node *const *nodes, int n, int k, bool inside)
{
	for (int i = 0; i < n; i++) {
		const ir_node *x = nodes[i];
		bool in = inside;
		for (int j = 0; x->kind == ND_FOR && j < x->nidx; j++)
			in = in || x->idx[j] == k;
		if (x->kind == ND_LET)
			return false;
		if (x->kind == ND_STMT) {
			if (!in || (x->op != AS_ADD && x->op != AS_SUB))
				return false;
			for (int d = 0; d < a->k->arrays[x->lhs->id].rank; d++)
				if (aff_coef(x->lhs->sub[d], AFF_INDEX, k) != 0)
					return false;
		}
		if (!reductions_over(a, x->body, x->nbody, k, in) || !reductions_over(a, x->els, x->nels, k, in))
			return false;
	}
	return true;
}

/* Whether every access of array i in e has subscript exactly k in dimension d. */
static bool expr_exactly(const ir_expr *e, int i, int d, int k)
{
	if (!e)
		return true;
	if (e->kind == EX_ACCESS && e->id == i) {
		aff s = e->sub[d];
		if (s.c != 0 || s.n != 1 || s.t[0].kind != AFF_INDEX || s.t[0].id != k || s.t[0].coef != 1)
			return false;
	}
	for (int j = 0; j < e->nargs; j++)
		if (!expr_exactly(e->args[j], i, d, k))
			return false;
	return true;
}

static bool nodes_exactly(ir_node *const *nodes, int n, int i, int d, int k)
{
	for (int j = 0; j < n; j++) {
		const ir_node *x = nodes[j];
		if ((x->kind == ND_STMT && !expr_exactly(x->lhs, i, d, k)) || !expr_exactly(x->rhs, i, d, k) ||
		    !nodes_exactly(x->body, x->nbody, i, d, k) || !nodes_exactly(x->els, x->nels, i, d, k))
			return false;
	}
	return true;
}

/* The dimension of input array i that every access indexes by exactly loop k, or -1. */
static int panel_dim_of(const da *a, int i, int k)
{
	const ir_array *src = &a->k->arrays[i];
	if ((src->role != CT_INPUT && src->role != CT_CONST) || a->p->arrays[i].nref == 0)
		return -1;
	for (int d = 0; d < src->rank; d++)
		if (a->p->arrays[i].align[d] < 0 && nodes_exactly(a->k->body, a->k->nbody, i, d, k))
			return d;
	return -1;
}

/* SUMMA (gemm on a grid): when every statement sums over a loop k that is not distributed, an
 * input indexed by k and not aligned with some axis is split along k over that axis's ranks
 * and broadcast panel by panel, instead of every rank holding all of its k extent. */
static void find_panels(da *a)
{
	const ct_kernel *k = a->k;
	dist_plan *p = a->p;
	p->panel_index = -1;
	for (int kx = 0; kx < k->nindices && p->panel_index < 0; kx++) {
		const ir_index *x = &k->indices[kx];
		if (x->kind != IX_LOOP || axis_of(p, kx) >= 0 || x->balanced ||
		    (x->child >= 0 && k->indices[x->child].balanced) || !reductions_over(a, k->body, k->nbody, kx, false))
			continue;
		/* the panel loop's values, the same for every array it splits */
		bool ok = true;
		ctd_axis pan = {aff_eval(x->lo, p->params, NULL, &ok), aff_eval(x->hi, p->params, NULL, &ok),
		                x->step > 0 ? x->step : 1, 0};
		int panels = 0;
		for (int i = 0; i < p->narrays; i++) {
			ctd_array *arr = &p->arrays[i];
			int d = arr->replicated ? -1 : panel_dim_of(a, i, kx), g = -1;
			for (int h = 0; h < p->naxes && g < 0 && d >= 0; h++) {
				bool aligned = false;
				for (int e = 0; e < arr->rank; e++)
					aligned = aligned || arr->align[e] == h;
				if (!aligned)
					g = h;
			}
			for (int j = 0; j < arr->nref && d >= 0; j++)
				for (int e = 0; e < arr->rank; e++)
					if (arr->align[e] >= 0 && !exactly_axis(a, &arr->ref[j], e, arr->align[e]))
						d = -1; /* a halo too: it keeps the exchange */
			if (d < 0 || g < 0)
				continue;
			arr->panel_dim = d;
			arr->panel_axis = g;
			arr->plo = pan.lo;
			arr->phi = pan.hi;
			arr->pstep = pan.step;
			panels++;
		}
		if (panels > 0) {
			p->panel_index = kx;
			p->panel = pan;
		}
	}
}

/* ------------------------------------------------------------ loops and caches */

/* Whether a loop over an axis's index carries a dependence (reductions aside: they become
 * partial sums). */
static bool check_carried(da *a, lt_node *const *nodes, int n, dep_info *d, const ct_looptree *t)
{
	for (int i = 0; i < n && a->st == CT_OK; i++) {
		const lt_node *x = nodes[i];
		if (x->kind == LT_LOOP && axis_of(a->p, x->index) >= 0) {
			int c = dep_loop_carries(d, t, x, false);
			if (c != 0) {
				ct_ctx_clear_error(a->k->ctx);
				return da_err(a, a->it->pos,
				              c < 0 ? "the dependence test failed on loop '%s'"
				                    : "loop '%s' carries a dependence: its blocks would need each other's results "
				                      "within one call",
				              iname(a->k, x->index));
			}
		}
		check_carried(a, x->kids, x->nkids, d, t);
		check_carried(a, x->els, x->nels, d, t);
	}
	return a->st == CT_OK;
}

static bool check_dependences(da *a)
{
	ct_looptree *t = lt_build_loops(a->k, true);
	if (!t)
		return (a->st = ct_ctx_last_status(a->k->ctx)), false;
	dep_info *d = dep_compute(a->k);
	if (!d) {
		ct_looptree_free(t);
		ct_ctx_clear_error(a->k->ctx);
		return da_err(a, a->it->pos, "the dependence test is not available for this kernel");
	}
	check_carried(a, t->roots, t->nroots, d, t);
	dep_free(d);
	ct_looptree_free(t);
	return a->st == CT_OK;
}

/* Every cache region lies inside loops over all axes (inside: the axes of the loops above). */
static bool caches_inside(da *a, const ct_looptree *t, lt_node *const *nodes, int n, int inside)
{
	int all = (1 << a->p->naxes) - 1;
	for (int i = 0; i < n && a->st == CT_OK; i++) {
		const lt_node *x = nodes[i];
		int in = inside;
		if (x->kind == LT_LOOP && x->index < a->k->nindices) {
			int root = a->k->indices[x->index].root;
			int g = axis_of(a->p, root);
			if (g >= 0)
				in |= 1 << g;
		}
		if (x->kind == LT_CACHE && in != all) {
			const lt_region *r = &t->regions[x->cache];
			const ir_plan_item *c = &a->k->plan[r->item];
			return da_err(a, c->pos, "cache '%s' lies outside the distributed loops: a rank holds only its block",
			              c->name ? c->name : "?");
		}
		caches_inside(a, t, x->kids, x->nkids, in);
		caches_inside(a, t, x->els, x->nels, in);
	}
	return a->st == CT_OK;
}

static bool check_caches(da *a)
{
	ct_looptree *t = ct_kernel_lower(a->k, 1);
	if (!t)
		return (a->st = ct_ctx_last_status(a->k->ctx)), false;
	caches_inside(a, t, t->roots, t->nroots, 0);
	ct_looptree_free(t);
	return a->st == CT_OK;
}

/* ------------------------------------------------------------ entry points */

void dist_plan_free(ct_ctx *ctx, dist_plan *p)
{
	if (!p)
		return;
	ct_free(ctx, p->arrays);
	ct_free(ctx, p->params);
	ct_free(ctx, p);
}

ct_status dist_analyse(ct_kernel *k, dist_plan **out)
{
	*out = NULL;
	if (!dist_wanted(k))
		return CT_OK;
	ct_status st = ir_kernel_ready(k);
	if (st)
		return st;
	da a;
	memset(&a, 0, sizeof a);
	a.k = k;
	a.p = ct_alloc(k->ctx, sizeof *a.p);
	if (!a.p)
		return CT_ERR_NOMEM;
	a.p->params = ct_alloc(k->ctx, sizeof *a.p->params * (size_t)(k->nparams + 1));
	if (!a.p->params) {
		dist_plan_free(k->ctx, a.p);
		return CT_ERR_NOMEM;
	}
	ir_param_values(k, a.p->params);
	if (find_item(&a) && kernel_fits(&a) && make_axes(&a) && statements_inside(&a, k->body, k->nbody, 0) &&
	    make_arrays(&a) && check_dependences(&a) && check_caches(&a)) {
		find_panels(&a);
		check_unrolls(&a);
	}
	if (a.st != CT_OK) {
		dist_plan_free(k->ctx, a.p);
		return a.st;
	}
	*out = a.p;
	return CT_OK;
}

ct_status dist_set_grid(ct_ctx *ctx, dist_plan *p, int64_t nranks, const int64_t *want)
{
	int64_t dims[CTD_MAX_AXES] = {0, 0, 0};
	bool given = want != NULL || p->grid[0] > 0;
	for (int g = 0; g < p->naxes; g++)
		dims[g] = want ? want[g] : p->grid[g];
	if (given) {
		int64_t n = 1;
		for (int g = 0; g < p->naxes; g++)
			n *= dims[g];
		if (n != nranks)
			return ct_error(ctx, CT_ERR_USAGE, "the grid (%s) has %lld ranks, not the %lld of the run",
			                want ? "--grid" : "grid= of the plan", (long long)n, (long long)nranks);
	} else {
		ctd_dims_create(nranks, p->naxes, dims);
	}
	for (int g = 0; g < p->naxes; g++)
		p->axes[g].ranks = dims[g];
	return CT_OK;
}

ct_status dist_localize(ct_kernel *k, const dist_plan *p, dist_saved *s)
{
	memset(s, 0, sizeof *s);
	s->nparams = k->nparams;
	s->params = k->params;
	s->narrays = k->narrays;
	int nloops = p->naxes + (p->panel_index >= 0);
	int loops[CTD_MAX_AXES + 1];
	for (int g = 0; g < p->naxes; g++)
		loops[g] = p->axis_index[g];
	if (p->panel_index >= 0)
		loops[p->naxes] = p->panel_index;
	ir_param *np = ct_arena_alloc(&k->arena, sizeof *np * (size_t)(k->nparams + 2 * nloops));
	if (!np)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory making the per-rank kernel");
	memcpy(np, k->params, sizeof *np * (size_t)k->nparams);
	for (int g = 0; g < nloops; g++) {
		ir_index *x = &k->indices[loops[g]];
		s->axis_index[g] = loops[g];
		s->naxes = g + 1;
		s->lo[g] = x->lo;
		s->hi[g] = x->hi;
		for (int side = 0; side < 2; side++) {
			ir_param *q = &np[k->nparams + 2 * g + side];
			memset(q, 0, sizeof *q);
			char name[300];
			snprintf(name, sizeof name, "ct_%s_%s", side ? "hi" : "lo", x->name);
			q->name = ct_arena_strdup(&k->arena, name);
			q->runtime = true;
			q->pos = x->pos;
		}
	}
	bool ok = true;
	for (int g = 0; g < nloops; g++) {
		ir_index *x = &k->indices[loops[g]];
		x->lo = aff_sym1(&k->arena, AFF_PARAM, k->nparams + 2 * g, 1, &ok);
		x->hi = aff_sym1(&k->arena, AFF_PARAM, k->nparams + 2 * g + 1, 1, &ok);
	}
	for (int a = 0; a < k->narrays; a++) {
		s->strided[a] = k->arrays[a].strided;
		s->unit_minor[a] = k->arrays[a].unit_minor;
		if (k->arrays[a].role != CT_TEMP) {
			k->arrays[a].strided = true;
			/* the driver's boxes are dense in the declared layout */
			k->arrays[a].unit_minor = true;
		}
	}
	k->params = np;
	k->nparams += 2 * nloops;
	s->dist_rank = k->dist_rank;
	k->dist_rank = true;
	if (!ok || k->arena.failed) {
		dist_restore(k, s);
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory making the per-rank kernel");
	}
	return CT_OK;
}

void dist_restore(ct_kernel *k, dist_saved *s)
{
	if (!s->params)
		return;
	k->nparams = s->nparams;
	k->params = s->params;
	k->dist_rank = s->dist_rank;
	for (int g = 0; g < s->naxes; g++) {
		k->indices[s->axis_index[g]].lo = s->lo[g];
		k->indices[s->axis_index[g]].hi = s->hi[g];
	}
	for (int a = 0; a < s->narrays; a++) {
		k->arrays[a].strided = s->strided[a];
		k->arrays[a].unit_minor = s->unit_minor[a];
	}
	s->params = NULL;
}

/* A panel array's broadcasts in one call, as the generated program counts them: the owner
 * of each panel sends it once per other rank along the panel axis, each of those receives it. */
static void panel_bytes(const dist_plan *p, const ctd_array *a, const int64_t *me, int64_t *sent, int64_t *received)
{
	int64_t group = p->axes[a->panel_axis].ranks;
	for (int64_t k0 = p->panel.lo; k0 < p->panel.hi;) {
		int64_t k1 = ctd_panel_next(p->arrays, p->narrays, p->axes, k0);
		if (k1 <= k0)
			break;
		ctd_box b;
		ctd_panel_box(a, p->axes, p->naxes, me, k0, k1, &b);
		int64_t bytes = ctd_box_count(&b, a->rank) * a->esize;
		if (ctd_panel_owner(a, p->axes, k0) == me[a->panel_axis])
			*sent += (group - 1) * bytes;
		else
			*received += bytes;
		k0 = k1;
	}
}

void dist_rank_bytes(const dist_plan *p, int64_t r, int64_t *sent, int64_t *received)
{
	int64_t me[CTD_MAX_AXES], other[CTD_MAX_AXES];
	int64_t n = ctd_nranks(p->axes, p->naxes);
	*sent = *received = 0;
	ctd_coords(p->axes, p->naxes, r, me);
	for (int i = 0; i < p->narrays; i++) {
		const ctd_array *a = &p->arrays[i];
		for (int64_t s = 0; s < n; s++) {
			if (s == r)
				continue;
			ctd_coords(p->axes, p->naxes, s, other);
			ctd_box b;
			ctd_message(a, p->axes, p->naxes, me, other, &b);
			*sent += ctd_box_count(&b, a->rank) * a->esize;
			ctd_message(a, p->axes, p->naxes, other, me, &b);
			*received += ctd_box_count(&b, a->rank) * a->esize;
		}
		if (a->panel_dim >= 0)
			panel_bytes(p, a, me, sent, received);
		if (a->reduce) {
			ctd_box own;
			ctd_owned(a, p->axes, p->naxes, me, &own);
			int64_t bytes = ctd_box_count(&own, a->rank) * a->esize, group = 1;
			bool root = true;
			for (int g = 0; g < p->naxes; g++)
				if (a->reduce >> g & 1) {
					group *= p->axes[g].ranks;
					root = root && me[g] == 0;
				}
			if (root)
				*received += (group - 1) * bytes;
			else
				*sent += bytes;
		}
	}
}
