/* model.c: the stack-distance cache model's entry points (docs/MODEL.md; the parts: model_*.c). */
#include "model/model_int.h"

/* ------------------------------------------------------------ entry points */

void model_result_free(model_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nlines; i++)
		free(r->lines[i].parts);
	free(r->array_accesses);
	free(r->array_exact);
	free(r->exec);
	memset(r, 0, sizeof *r);
}

const model_lines *model_for_line(const model_result *r, int64_t line)
{
	for (int i = 0; i < r->nlines; i++)
		if (r->lines[i].line == line)
			return &r->lines[i];
	return NULL;
}

int64_t model_misses(const model_lines *ml, int64_t lines, int array, bool *exact)
{
	int64_t n = 0;
	for (int i = 0; ml && i < ml->nparts; i++) {
		const model_part *p = &ml->parts[i];
		if (array >= 0 && p->array != array)
			continue;
		if (p->kind == MR_COLD || p->distance >= lines)
			n += p->count;
		if (exact && (!p->exact || (p->kind != MR_COLD && p->distance_lo < lines &&
		                            p->distance_hi >= lines)))
			*exact = false;
	}
	return n;
}

static bool setup(model *m, ct_looptree *t)
{
	m->t = t;
	m->ctx = t->k->ctx;
	ct_arena_init(&m->arena, m->ctx);
	m->na = t->narrays;
	int npv = t->k->nparams + t->nderived;
	m->pv = mdl_alloc(m, sizeof *m->pv * (size_t)(npv + 1));
	m->elem = mdl_alloc(m, sizeof *m->elem * (size_t)m->na);
	m->stride = mdl_alloc(m, sizeof *m->stride * (size_t)m->na * IR_MAX_RANK);
	m->order = mdl_alloc(m, sizeof *m->order * (size_t)m->na * IR_MAX_RANK);
	m->rank = mdl_alloc(m, sizeof *m->rank * (size_t)m->na);
	m->inexact = mdl_alloc(m, sizeof *m->inexact * (size_t)m->na);
	if (m->st)
		return false;
	if (!lt_param_values(t, m->pv))
		return mdl_fail(m, CT_ERR_LIMIT, "a derived value overflows 64 bits");
	for (int a = 0; a < m->na; a++) {
		int64_t count;
		ct_status st = lt_array_layout(t, m->pv, a, m->stride + a * IR_MAX_RANK, &count);
		if (st) {
			m->st = st;
			return false;
		}
		m->elem[a] = (int64_t)ct_dtype_size(t->arrays[a].type);
		m->rank[a] = t->arrays[a].rank;
		int *o = m->order + a * IR_MAX_RANK;
		const int64_t *s = m->stride + a * IR_MAX_RANK;
		for (int d = 0; d < m->rank[a]; d++)
			o[d] = d;
		/* most major first: decreasing stride (stable for equal strides of extent-1 dims) */
		for (int i = 1; i < m->rank[a]; i++)
			for (int j = i; j > 0 && s[o[j]] > s[o[j - 1]]; j--) {
				int tmp = o[j];
				o[j] = o[j - 1];
				o[j - 1] = tmp;
			}
	}
	return true;
}

model *mdl_tree_new(ct_looptree *t)
{
	model *m = calloc(1, sizeof *m);
	if (!m) {
		ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	if (setup(m, t) && mdl_build_list(m, t->roots, t->nroots, &m->root))
		mdl_count_accesses(m, &m->root, 1);
	return m;
}

void mdl_tree_free(model *m)
{
	if (!m)
		return;
	ct_arena_free(&m->arena);
	free(m);
}

int64_t model_tree_accesses(ct_looptree *t)
{
	model *m = mdl_tree_new(t);
	int64_t n = m && !m->st ? 0 : -1;
	for (int a = 0; n >= 0 && a < m->na; a++)
		n += m->root.per_iter[a];
	if (m && m->st)
		ct_ctx_clear_error(t->k->ctx);
	mdl_tree_free(m);
	return n;
}

/* True when statement x accesses the storages of entry e (a tail of a planned loop may read
 * another buffer than the main part). */
static bool same_storage(const model_exec *e, const mnode *x)
{
	if (e->nacc != x->nacc)
		return false;
	for (int i = 0; i < x->nacc && i < 16; i++)
		if (e->acc_array[i] != x->acc[i].array)
			return false;
	return true;
}

/* Add the executions of every statement and let below x to r (one entry per statement number
 * and storages: the pieces and tails of a statement are one unless a plan gave them different
 * buffers); false when out of memory. */
static bool add_execs(const mnode *x, model_result *r, int *cap)
{
	if (!x->is_loop && x->nkids == 0 && x->lt && x->lt->stmt) {
		const ir_node *s = x->lt->stmt;
		for (int i = 0; i < r->nexec; i++)
			if ((x->stmt_id > 0 ? r->exec[i].stmt_id == x->stmt_id : r->exec[i].node == s) &&
			    same_storage(&r->exec[i], x)) {
				r->exec[i].count += x->inst;
				return true;
			}
		if (r->nexec == *cap) {
			int nc = *cap ? 2 * *cap : 16;
			model_exec *ne = realloc(r->exec, sizeof *ne * (size_t)nc);
			if (!ne)
				return false;
			r->exec = ne;
			*cap = nc;
		}
		model_exec *e = &r->exec[r->nexec++];
		memset(e, 0, sizeof *e);
		e->stmt_id = x->stmt_id;
		e->node = s;
		e->count = x->inst;
		e->nacc = x->nacc;
		for (int i = 0; i < 16; i++)
			e->acc_array[i] = i < x->nacc ? x->acc[i].array : -1;
		return true;
	}
	for (int i = 0; i < x->nkids; i++)
		if (!add_execs(x->kids[i], r, cap))
			return false;
	return true;
}

ct_status model_analyse(ct_looptree *t, const sim_spec *spec, model_result *r)
{
	return model_analyse_depth(t, spec, MODEL_REFINE_FULL, r);
}

ct_status model_analyse_depth(ct_looptree *t, const sim_spec *spec, int refine, model_result *r)
{
	return model_analyse_budget(t, spec, refine, 0, r);
}

ct_status model_analyse_budget(ct_looptree *t, const sim_spec *spec, int refine, int64_t budget,
                               model_result *r)
{
	model_options o = {refine, budget, MODEL_ENUM_AUTO, 0};
	return model_analyse_opts(t, spec, &o, r);
}

ct_status model_analyse_opts(ct_looptree *t, const sim_spec *spec, const model_options *o, model_result *r)
{
	memset(r, 0, sizeof *r);
	model *m = calloc(1, sizeof *m);
	if (!m)
		return ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory");
	m->refine = o->refine < 0 ? 0 : o->refine;
	m->budget = o->budget > 0 ? o->budget : 0;
	/* partial enumeration stands in for full refinement only (the tile search's shallow
	 * screens stay cheap by their depth) */
	m->enumerate = m->refine >= MODEL_REFINE_FULL ? o->enumerate : MODEL_ENUM_NEVER;
	m->enum_depth = o->enum_depth;
	m->ws = malloc(sizeof *m->ws * 8);
	if (!m->ws) {
		free(m);
		return ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory");
	}
	ct_status st = CT_OK;
	if (!setup(m, t) || !mdl_build_list(m, t->roots, t->nroots, &m->root) ||
	    !mdl_count_accesses(m, &m->root, 1))
		goto out;
	r->narrays = m->na;
	r->array_accesses = calloc((size_t)m->na + 1, sizeof *r->array_accesses);
	r->array_exact = calloc((size_t)m->na + 1, sizeof *r->array_exact);
	if (!r->array_accesses || !r->array_exact) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int a = 0; a < m->na; a++) {
		r->array_accesses[a] = m->root.per_iter[a];
		r->accesses += m->root.per_iter[a];
	}
	int ecap = 0;
	if (!add_execs(&m->root, r, &ecap)) {
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int l = 0; l < spec->nlevels; l++) {
		int64_t line = spec->level[l].line;
		if (model_for_line(r, line))
			continue;
		model_lines *ml = &r->lines[r->nlines++];
		if (!mdl_analyse_line(m, spec, line, ml))
			goto out;
	}
	for (int a = 0; a < m->na; a++)
		r->array_exact[a] = !m->inexact[a];
out:
	r->work = m->work;
	r->enumerated = m->enumerated;
	st = m->st;
	if (m->over_budget) {
		/* keep what the tree gave (accesses, executions); drop the partial partitions */
		for (int i = 0; i < r->nlines; i++)
			free(r->lines[i].parts);
		memset(r->lines, 0, sizeof r->lines);
		r->nlines = 0;
		r->over_budget = true;
		st = CT_OK;
	}
	mdl_memo_clear(m);
	free(m->scratch.v);
	free(m->boxes);
	free(m->cand);
	free(m->ws);
	free(m->hist);
	free(m->hist2);
	free(m->nz);
	free(m->incs);
	ct_arena_free(&m->arena);
	free(m);
	if (st)
		model_result_free(r);
	return st;
}
