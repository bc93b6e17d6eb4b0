/* kernel.c: the public kernel API on a parsed kernel: params, accessors, flop count, type and role names. */
#include "ir/looptree.h"

#include <string.h>

size_t ct_dtype_size(ct_dtype t)
{
	switch (t) {
	case CT_F32: return 4;
	case CT_F64: return 8;
	case CT_I32: return 4;
	case CT_I64: return 8;
	}
	return 0;
}

const char *ct_dtype_name(ct_dtype t)
{
	switch (t) {
	case CT_F32: return "f32";
	case CT_F64: return "f64";
	case CT_I32: return "i32";
	case CT_I64: return "i64";
	}
	return "?";
}

const char *ct_role_name(ct_role r)
{
	switch (r) {
	case CT_INPUT: return "input";
	case CT_OUTPUT: return "output";
	case CT_INOUT: return "inout";
	case CT_TEMP: return "temp";
	case CT_CONST: return "const";
	}
	return "?";
}

void ct_kernel_free(ct_kernel *k)
{
	if (!k)
		return;
	ct_ctx *ctx = k->ctx;
	ct_arena_free(&k->arena);
	ct_free(ctx, k);
}

/* Value of an integer expression of params without diagnostics (for
 * derived params right after an override); false when it cannot be had. */
static bool quiet_eval(const ct_kernel *k, const ir_expr *e, int64_t *out)
{
	int64_t x, y;
	switch (e->kind) {
	case EX_NUM: *out = e->inum; return !e->is_float;
	case EX_PARAM: *out = k->params[e->id].value; return k->params[e->id].has_value;
	case EX_NEG: return quiet_eval(k, e->args[0], &x) && ct_sub_ok(0, x, out);
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV:
		if (!quiet_eval(k, e->args[0], &x) || !quiet_eval(k, e->args[1], &y))
			return false;
		if (e->kind == EX_ADD)
			return ct_add_ok(x, y, out);
		if (e->kind == EX_SUB)
			return ct_sub_ok(x, y, out);
		if (e->kind == EX_MUL)
			return ct_mul_ok(x, y, out);
		if (y == 0 || (x == INT64_MIN && y == -1))
			return false;
		*out = x / y;
		return true;
	default: return false;
	}
}

ct_status ct_kernel_set_param(ct_kernel *k, const char *name, int64_t value)
{
	if (!k)
		return CT_ERR_USAGE;
	if (!name)
		return ct_error(k->ctx, CT_ERR_USAGE, "ct_kernel_set_param: name is NULL");
	for (int i = 0; i < k->nparams; i++) {
		ir_param *p = &k->params[i];
		if (strcmp(p->name, name) != 0)
			continue;
		/* a runtime param stays symbolic in the checks and the code: a new
		 * value needs no recheck; any other change does */
		if (!p->runtime && (!p->has_value || p->value != value))
			k->stale = true;
		p->value = value;
		p->has_value = true;
		p->overridden = true;
		for (int j = 0; j < k->nparams; j++) {
			ir_param *q = &k->params[j];
			int64_t v;
			if (q->def && !q->overridden && quiet_eval(k, q->def, &v) && v != q->value) {
				q->value = v;
				k->stale |= !q->runtime;
			}
		}
		return CT_OK;
	}
	return ct_error(k->ctx, CT_ERR_INPUT, "unknown param '%s' in kernel '%s'", name, k->name);
}

ct_status ir_kernel_ready(const ct_kernel *k)
{
	if (!k->stale)
		return CT_OK;
	return ct_error(k->ctx, CT_ERR_USAGE,
			"kernel '%s': params changed since the last successful check; call "
			"ct_kernel_recheck",
			k->name);
}

const char *ct_kernel_name(const ct_kernel *k) { return k ? k->name : NULL; }
int ct_kernel_param_count(const ct_kernel *k) { return k ? k->nparams : 0; }

const char *ct_kernel_param_name(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->nparams ? k->params[i].name : NULL;
}

int64_t ct_kernel_param_value(const ct_kernel *k, int i, int *is_set)
{
	bool ok = k && i >= 0 && i < k->nparams && k->params[i].has_value;
	if (is_set)
		*is_set = ok;
	return ok ? k->params[i].value : 0;
}

int ct_kernel_param_is_runtime(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->nparams && k->params[i].runtime;
}

int ct_kernel_array_count(const ct_kernel *k) { return k ? k->narrays : 0; }

const char *ct_kernel_array_name(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->narrays ? k->arrays[i].name : NULL;
}

ct_dtype ct_kernel_array_dtype(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->narrays ? k->arrays[i].type : CT_F32;
}

ct_role ct_kernel_array_role(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->narrays ? k->arrays[i].role : CT_INPUT;
}

int ct_kernel_array_rank(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->narrays ? k->arrays[i].rank : 0;
}

int ct_kernel_array_order(const ct_kernel *k, int i, int *order)
{
	if (!k || i < 0 || i >= k->narrays)
		return 0;
	const ir_array *a = &k->arrays[i];
	for (int d = 0; order && d < a->rank; d++)
		order[d] = a->order[d];
	return a->rank;
}

int ct_kernel_array_is_strided(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->narrays && k->arrays[i].strided;
}

/* Value of an affine form of params; false if a runtime param has no value
 * or on overflow. */
static bool param_aff_value(const ct_kernel *k, aff x, int64_t *v)
{
	*v = x.c;
	for (int t = 0; t < x.n; t++) {
		if (x.t[t].kind != AFF_PARAM || !k->params[x.t[t].id].has_value)
			return false;
		int64_t p;
		if (!ct_mul_ok(x.t[t].coef, k->params[x.t[t].id].value, &p) || !ct_add_ok(*v, p, v))
			return false;
	}
	return true;
}

int64_t ct_kernel_array_extent(const ct_kernel *k, int i, int d)
{
	if (!k || i < 0 || i >= k->narrays || d < 0 || d >= k->arrays[i].rank)
		return -1;
	int64_t v;
	return param_aff_value(k, k->arrays[i].ext[d], &v) ? v : -1;
}

int64_t ct_kernel_array_elements(const ct_kernel *k, int i)
{
	if (!k || i < 0 || i >= k->narrays)
		return -1;
	int64_t n = 1;
	for (int d = 0; d < k->arrays[i].rank; d++) {
		int64_t e = ct_kernel_array_extent(k, i, d);
		if (e < 0 || !ct_mul_ok(n, e, &n))
			return -1;
	}
	return n;
}

ct_status ir_array_size_error(const ct_kernel *k, int i)
{
	const ir_array *a = &k->arrays[i];
	for (int d = 0; d < a->rank; d++) {
		aff x = a->ext[d];
		for (int t = 0; t < x.n; t++) {
			const ir_param *p = &k->params[x.t[t].id];
			if (x.t[t].kind == AFF_PARAM && !p->has_value)
				return ct_error(k->ctx, CT_ERR_USAGE,
						"array '%s' needs a value of runtime param '%s' (-D %s=VALUE)",
						a->name, p->name, p->name);
		}
		int64_t v;
		if (!param_aff_value(k, x, &v))
			return ct_error(k->ctx, CT_ERR_LIMIT, "extent of dimension %d of '%s' overflows",
					d + 1, a->name);
		if (v < 1)
			return ct_error(k->ctx, CT_ERR_USAGE,
					"extent of dimension %d of '%s' is %lld (it must be at least 1)",
					d + 1, a->name, (long long)v);
	}
	return ct_error(k->ctx, CT_ERR_LIMIT, "array '%s' has more than 2^63 elements", a->name);
}

int ct_kernel_index_count(const ct_kernel *k) { return k ? k->nindices : 0; }

const char *ct_kernel_index_name(const ct_kernel *k, int i)
{
	return k && i >= 0 && i < k->nindices ? k->indices[i].name : NULL;
}

/* ------------------------------------------------------------ flops */

/* Operations of one evaluation of e (subscripts are index arithmetic and
 * count nothing; comparisons and negation count nothing). */
bool ir_expr_reads(const ir_expr *e, int a)
{
	if (!e)
		return false;
	if (e->kind == EX_ACCESS && e->id == a)
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (ir_expr_reads(e->args[i], a))
			return true;
	return false;
}

static double expr_flops(const ir_expr *e)
{
	double n = 0;
	switch (e->kind) {
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: n = 1; break;
	case EX_CALL: n = e->fn == FN_FMA ? 2 : e->fn == FN_SELECT ? 0 : 1; break;
	default: break;
	}
	for (int i = 0; i < e->nargs; i++)
		n += expr_flops(e->args[i]);
	return n;
}

/* Truth of an `if` condition at one point (idx by original index id). */
static bool cond_value(const ir_expr *e, const int64_t *params, const int64_t *idx)
{
	bool ok = true;
	switch (e->kind) {
	case EX_CMP: {
		int64_t d = aff_eval(e->diff, params, idx, &ok);
		switch (e->cmp) {
		case CMP_LT: return d < 0;
		case CMP_LE: return d <= 0;
		case CMP_GT: return d > 0;
		case CMP_GE: return d >= 0;
		case CMP_EQ: return d == 0;
		case CMP_NE: return d != 0;
		}
		return true;
	}
	case EX_AND:
		return cond_value(e->args[0], params, idx) && cond_value(e->args[1], params, idx);
	case EX_OR:
		return cond_value(e->args[0], params, idx) || cond_value(e->args[1], params, idx);
	case EX_NOT: return !cond_value(e->args[0], params, idx);
	default: return true;
	}
}

static void cond_indices(const ir_expr *e, bool *used)
{
	if (e->kind == EX_CMP) {
		for (int t = 0; t < e->diff.n; t++)
			if (e->diff.t[t].kind == AFF_INDEX)
				used[e->diff.t[t].id] = true;
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		cond_indices(e->args[i], used);
}

#define FLOPS_ENUM_LIMIT ((int64_t)1 << 20)  /* budget a statement over it costs */
#define FLOPS_ENUM_BUDGET ((int64_t)1 << 24) /* points of all enumerations of a kernel */

/* Scratch of a flop count. */
typedef struct fcount {
	const ct_kernel *k;
	const int64_t *params;
	int64_t *idx;
	bool *used;
	int64_t budget; /* enumeration points left */
	/* the statement being counted: its enclosing loops, outermost first,
	 * whether each is enumerated, and its node */
	int n;
	int ids[IR_MAX_DEPTH * 8];
	bool en[IR_MAX_DEPTH * 8];
	const ir_node *s;
} fcount;

/* Bounds [*lo, *hi) of index x at the point idx (affine bounds: the max of
 * the lower terms, the min of the upper ones). */
static void index_bounds(const ct_kernel *k, const int64_t *params, const int64_t *idx, int x,
                         int64_t *lo, int64_t *hi, bool *ok)
{
	const ir_index *ix = &k->indices[x];
	if (!ir_index_affine(ix)) {
		*lo = aff_eval(ix->lo, params, idx, ok);
		*hi = aff_eval(ix->hi, params, idx, ok);
		return;
	}
	for (int j = 0; j < ix->nlo; j++) {
		int64_t v = aff_eval(ix->los[j], params, idx, ok);
		*lo = j == 0 || v > *lo ? v : *lo;
	}
	for (int j = 0; j < ix->nhi; j++) {
		int64_t v = aff_eval(ix->his[j], params, idx, ok);
		*hi = j == 0 || v < *hi ? v : *hi;
	}
}

/* The least and greatest values of affine f over the boxes known so far (params with
 * values: pv[id] where pv is not NULL, else the params' own values); false when a term is
 * unknown, or on overflow (*over set). */
static bool aff_box_pv(const ct_kernel *k, const int64_t *pv, aff f, const ir_box *b, int64_t *min, int64_t *max,
                       bool *over)
{
	*min = *max = f.c;
	for (int t = 0; t < f.n; t++) {
		const aff_term *tm = &f.t[t];
		int64_t a, z;
		if (tm->kind == AFF_PARAM && pv && tm->id >= 0 && tm->id < k->nparams) {
			a = z = pv[tm->id];
		} else if (tm->kind == AFF_PARAM && !pv && k->params[tm->id].has_value) {
			a = z = k->params[tm->id].value;
		} else if (tm->kind == AFF_INDEX && b[tm->id].known) {
			a = b[tm->id].lo;
			z = b[tm->id].hi - 1;
		} else {
			return false;
		}
		int64_t qa, qz;
		if (!ct_mul_ok(tm->coef, a, &qa) || !ct_mul_ok(tm->coef, z, &qz) ||
		    !ct_add_ok(*min, qa < qz ? qa : qz, min) || !ct_add_ok(*max, qa < qz ? qz : qa, max)) {
			*over = true;
			return false;
		}
	}
	return true;
}

static bool aff_box(const ct_kernel *k, aff f, const ir_box *b, int64_t *min, int64_t *max, bool *over)
{
	return aff_box_pv(k, NULL, f, b, min, max, over);
}

/* The greatest value of hi - lo (two affine terms) over params pv and boxes b, taken over
 * their difference (aff_sub: an index in both counts once, x+4 - x is 4 over any box); false
 * when a term is unknown, out of memory or on overflow. */
static bool diff_max(const ct_kernel *k, const int64_t *pv, aff hi, aff lo, const ir_box *b, int64_t *max)
{
	ct_arena a;
	ct_arena_init(&a, k->ctx);
	bool ok = true, over = false;
	aff d = aff_sub(&a, hi, lo, &ok);
	int64_t mn;
	ok = ok && aff_box_pv(k, pv, d, b, &mn, max, &over);
	ct_arena_free(&a);
	return ok;
}

bool ir_index_span(const ct_kernel *k, const int64_t *pv, int x, int64_t *span)
{
	*span = 0;
	if (x < 0 || x >= k->nindices || k->indices[x].kind != IX_LOOP)
		return false;
	ir_box *b = ct_alloc(k->ctx, sizeof *b * ((size_t)k->nindices + 1));
	bool *empty = ct_alloc(k->ctx, (size_t)k->nindices + 1);
	bool ok = b && empty;
	/* the boxes of the loops declared before x (its bounds use some of them), an empty one
	 * emptying every box whose bounds use it */
	for (int y = 0; ok && y <= x; y++) {
		const ir_index *iy = &k->indices[y];
		b[y].known = false;
		empty[y] = false;
		if (iy->kind != IX_LOOP)
			continue;
		bool af = ir_index_affine(iy), over = false;
		int nlo = af ? iy->nlo : 1, nhi = af ? iy->nhi : 1;
		const aff *los = af ? iy->los : &iy->lo, *his = af ? iy->his : &iy->hi;
		int64_t lo = INT64_MIN, hi = INT64_MAX, a, z;
		bool all = true;
		for (int j = 0; j < nlo + nhi; j++) {
			aff f = j < nlo ? los[j] : his[j - nlo];
			for (int t = 0; t < f.n; t++)
				if (f.t[t].kind == AFF_INDEX && f.t[t].id >= 0 && f.t[t].id < y && empty[f.t[t].id])
					empty[y] = true;
			if (!aff_box_pv(k, pv, f, b, &a, &z, &over))
				all = false;
			else if (j < nlo)
				lo = a > lo ? a : lo;
			else
				hi = z < hi ? z : hi;
		}
		if (all && lo > INT64_MIN && hi < INT64_MAX) {
			b[y].lo = lo;
			b[y].hi = hi;
			b[y].known = true;
			empty[y] = empty[y] || hi <= lo;
		}
		if (y < x || empty[y])
			continue;
		/* x < every upper term and x >= every lower one: its trip span is at most the least,
		 * over pairs, of the greatest difference */
		int64_t best = INT64_MAX;
		for (int u = 0; ok && u < nhi; u++)
			for (int l = 0; ok && l < nlo; l++) {
				int64_t m;
				if (!diff_max(k, pv, his[u], los[l], b, &m))
					ok = false;
				else if (m < best)
					best = m;
			}
		if (ok)
			*span = best > 0 ? best : 0;
	}
	ct_free(k->ctx, b);
	ct_free(k->ctx, empty);
	return ok;
}

int ir_index_boxes(const ct_kernel *k, ir_box *b)
{
	for (int x = 0; x < k->nindices; x++) {
		const ir_index *ix = &k->indices[x];
		b[x].known = false;
		if (ix->kind != IX_LOOP)
			continue;
		bool af = ir_index_affine(ix), all = true, over = false;
		int nlo = af ? ix->nlo : 1, nhi = af ? ix->nhi : 1;
		const aff *los = af ? ix->los : &ix->lo, *his = af ? ix->his : &ix->hi;
		int64_t lo = INT64_MIN, hi = INT64_MAX, a, z;
		for (int j = 0; j < nlo + nhi; j++) {
			if (!aff_box(k, j < nlo ? los[j] : his[j - nlo], b, &a, &z, &over))
				all = false;
			else if (j < nlo)
				lo = a > lo ? a : lo; /* x >= every lower term >= its least value */
			else
				hi = z < hi ? z : hi; /* x < every upper term <= its greatest */
		}
		if (over)
			return x;
		if (all && lo > INT64_MIN && hi < INT64_MAX) {
			b[x].lo = lo;
			b[x].hi = hi;
			b[x].known = true;
		}
	}
	return -1;
}

int64_t ir_index_mid_trip(const ct_kernel *k, const int64_t *params, int id)
{
	if (id < 0 || id >= k->nindices || k->indices[id].kind != IX_LOOP)
		return -1;
	int64_t *idx = ct_alloc(k->ctx, sizeof *idx * ((size_t)k->nindices + 1));
	if (!idx)
		return -1;
	int64_t lo = 0, hi = 0;
	bool ok = true;
	for (int x = 0; x <= id && ok; x++) {
		if (k->indices[x].kind != IX_LOOP)
			continue;
		index_bounds(k, params, idx, x, &lo, &hi, &ok);
		int64_t s = ir_index_src_step(&k->indices[x]);
		idx[x] = hi > lo ? lo + (ct_trip_count(lo, hi, s) - 1) / 2 * s : lo;
	}
	ct_free(k->ctx, idx);
	int64_t n;
	if (!ok || !ct_sub_ok(hi, lo, &n))
		return -1;
	return n > 0 ? ct_trip_count(lo, hi, ir_index_src_step(&k->indices[id])) : 0;
}

/* Whether the `if`s enclosing the statement hold at idx. */
static bool conds_hold(const fcount *fc)
{
	for (const ir_node *q = fc->s->parent, *c = fc->s; q; c = q, q = q->parent) {
		if (q->kind != ND_IF || !q->cond)
			continue;
		bool then = false;
		for (int b = 0; b < q->nbody; b++)
			then |= q->body[b] == c;
		if (cond_value(q->cond, fc->params, fc->idx) != then)
			return false;
	}
	return true;
}

/* Instances of the statement inside loops pos.. of its chain at the point
 * idx of the outer ones: enumerated loops one value at a time, the others
 * (no `if` and no inner bound uses them) by their trip counts. Negative when
 * the enumeration budget is spent. */
static double count_from(fcount *fc, int pos, bool any_if)
{
	if (pos == fc->n)
		return !any_if || conds_hold(fc) ? 1 : 0;
	int x = fc->ids[pos];
	bool ok = true;
	int64_t lo = 0, hi = 0;
	index_bounds(fc->k, fc->params, fc->idx, x, &lo, &hi, &ok);
	if (!ok || hi <= lo)
		return 0;
	int64_t step = ir_index_src_step(&fc->k->indices[x]);
	if (!fc->en[pos]) {
		/* unused inside unless over budget; then the middle value gives an
		 * inner affine bound its mean over this loop (exact for one level
		 * of linear dependence without min/max) */
		int64_t trips = ct_trip_count(lo, hi, step);
		fc->idx[x] = lo + (trips - 1) / 2 * step;
		double in = count_from(fc, pos + 1, any_if);
		return in < 0 ? in : in * (double)trips;
	}
	double total = 0;
	for (int64_t v = lo; v < hi; v += step) {
		if (--fc->budget < 0)
			return -1;
		fc->idx[x] = v;
		double in = count_from(fc, pos + 1, any_if);
		if (in < 0)
			return in;
		total += in;
	}
	return total;
}

/* Instances of a statement whose first node in its body is s: iterations
 * of its loops, enumerating the indices that its `if`s or the affine bounds
 * of its loops use, in at most 2^20 points a statement and 2^24 a kernel;
 * past them, the product of the loops' ranges, each at the middle values
 * of the loops outside it (the conditions taken as true). */
static double stmt_instances(fcount *fc, const ir_node *s)
{
	const ct_kernel *k = fc->k;
	memset(fc->used, 0, sizeof *fc->used * (size_t)(k->nindices + 1));
	bool any_if = false;
	for (const ir_node *q = s->parent; q; q = q->parent)
		if (q->kind == ND_IF && q->cond) {
			cond_indices(q->cond, fc->used);
			any_if = true;
		}
	/* the loops outermost first */
	int n = 0;
	for (const ir_node *q = s->parent; q; q = q->parent)
		if (q->kind == ND_FOR)
			n += q->nidx;
	if (n > (int)(sizeof fc->ids / sizeof fc->ids[0]))
		return 0;
	fc->n = n;
	fc->s = s;
	for (const ir_node *q = s->parent; q; q = q->parent)
		if (q->kind == ND_FOR)
			for (int i = q->nidx - 1; i >= 0; i--) {
				int x = q->idx[i];
				fc->ids[--n] = x;
				const ir_index *ix = &k->indices[x];
				for (int j = 0; j < ix->nlo + ix->nhi; j++) {
					aff b = j < ix->nlo ? ix->los[j] : ix->his[j - ix->nlo];
					for (int t = 0; t < b.n; t++)
						if (b.t[t].kind == AFF_INDEX)
							fc->used[b.t[t].id] = true;
				}
			}
	for (int i = 0; i < fc->n; i++)
		fc->en[i] = fc->used[fc->ids[i]];
	int64_t keep = fc->budget, allow = keep < FLOPS_ENUM_LIMIT ? keep : FLOPS_ENUM_LIMIT;
	fc->budget = allow;
	double r = count_from(fc, 0, any_if);
	fc->budget = keep - (allow - (fc->budget > 0 ? fc->budget : 0));
	if (r >= 0)
		return r;
	/* over budget: nothing enumerated, conditions taken as true */
	for (int i = 0; i < fc->n; i++)
		fc->en[i] = false;
	return count_from(fc, 0, false);
}

static double nodes_flops(fcount *fc, ir_node *const *body, int n)
{
	double total = 0, inst = -1; /* every node of one body has the same instances */
	for (int i = 0; i < n; i++) {
		const ir_node *s = body[i];
		switch (s->kind) {
		case ND_FOR: total += nodes_flops(fc, s->body, s->nbody); break;
		case ND_IF:
			total += nodes_flops(fc, s->body, s->nbody);
			total += nodes_flops(fc, s->els, s->nels);
			break;
		case ND_LET:
		case ND_STMT: {
			double f =
			    expr_flops(s->rhs) + (s->kind == ND_STMT && s->op != AS_SET ? 1 : 0);
			if (f > 0 && inst < 0)
				inst = stmt_instances(fc, s);
			if (f > 0)
				total += f * inst;
			break;
		}
		}
	}
	return total;
}

double ct_kernel_flops(const ct_kernel *k)
{
	if (!k || !ir_params_complete(k))
		return -1;
	ct_ctx *ctx = k->ctx;
	size_t np = (size_t)k->nparams + 1, ni = (size_t)k->nindices + 1;
	int64_t *params = ct_alloc(ctx, sizeof *params * np);
	int64_t *idx = ct_alloc(ctx, sizeof *idx * ni);
	bool *used = ct_alloc(ctx, sizeof *used * ni);
	fcount *fc = ct_alloc(ctx, sizeof *fc);
	double r = -1;
	if (params && idx && used && fc) {
		ir_param_values(k, params);
		memset(fc, 0, sizeof *fc);
		fc->k = k;
		fc->params = params;
		fc->idx = idx;
		fc->used = used;
		fc->budget = FLOPS_ENUM_BUDGET;
		r = nodes_flops(fc, k->body, k->nbody);
	}
	ct_free(ctx, params);
	ct_free(ctx, idx);
	ct_free(ctx, used);
	ct_free(ctx, fc);
	return r;
}

int ct_kernel_param_candidates(const ct_kernel *k, int i, const int64_t **values)
{
	bool ok = k && i >= 0 && i < k->nparams && k->params[i].ntune > 0;
	if (values)
		*values = ok ? k->params[i].tune : NULL;
	return ok ? k->params[i].ntune : 0;
}
