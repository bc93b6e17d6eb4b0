/* perref.c: cachet predict --per-ref: the model's misses per source reference, with their cause. */
#include "interp/interp.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

/* Default trace length up to which an array's counts are shared out by simulation. */
#define PERREF_SIM_MAX ((int64_t)1 << 24)

/* One row under construction: a source reference (or the copy loops of an array, or a cache
 * buffer: stmt 0, no position) and the reference ids of the trace it stands for. */
typedef struct uref {
	int array;
	const ir_node *node;     /* NULL for copies and buffers */
	int line, col, stmt, is_write;
	int ids[2], nids;
	int64_t accesses;
	double wmiss[SIM_MAX_LEVELS], wcold[SIM_MAX_LEVELS]; /* weights of the split */
} uref;

typedef struct pr {
	ct_ctx *ctx;
	const ct_kernel *k;
	ct_looptree *t;
	const sim_spec *spec;
	const model_result *m;
	const ct_predict_result *r;
	uref *u;
	int nu, capu;
	interp_ref *refs;
	int nrefs;
	int id;                  /* next reference id of the walk */
	int pos;                 /* access number within the statement of the walk */
} pr;

static bool push(pr *p, uref x)
{
	if (p->nu == p->capu) {
		int nc = p->capu ? 2 * p->capu : 32;
		uref *n = realloc(p->u, sizeof *n * (size_t)nc);
		if (!n)
			return false;
		p->u = n;
		p->capu = nc;
	}
	p->u[p->nu++] = x;
	return true;
}

/* True when tree entry e is an execution of statement or let s. */
static bool is_exec_of(const model_exec *e, const ir_node *s)
{
	return s->kind == ND_STMT ? e->stmt_id == s->stmt_id : e->node == s;
}

/* Push the rows of reference x, access number pos of its statement: one per storage the tree
 * gives that access (a plan's buffers where it redirected it, which may differ between a loop
 * and its tail), with the executions of each; times = accesses per execution. A reference
 * that never executes gets one row with no accesses. */
static bool push_ref(pr *p, uref x, int pos, int64_t times)
{
	int first = p->nu;
	for (int i = 0; i < p->m->nexec; i++) {
		const model_exec *e = &p->m->exec[i];
		if (!is_exec_of(e, x.node))
			continue;
		uref y = x;
		if (pos < e->nacc && pos < 16 && e->acc_array[pos] >= 0)
			y.array = e->acc_array[pos];
		y.accesses = times * e->count;
		int j = first;
		while (j < p->nu && p->u[j].array != y.array)
			j++;
		if (j < p->nu)
			p->u[j].accesses += y.accesses;
		else if (!push(p, y))
			return false;
	}
	return p->nu > first || push(p, x);
}

/* The reads of e in trace order (interp's numbering: the node, then its arguments). */
static bool walk_reads(pr *p, const ir_expr *e, const ir_node *s)
{
	if (!e)
		return true;
	if (e->kind == EX_ACCESS) {
		uref x = {.array = e->id, .node = s, .line = e->pos.line, .col = e->pos.col,
		          .stmt = s->kind == ND_STMT ? s->stmt_id : 0, .ids = {p->id++}, .nids = 1};
		if (!push_ref(p, x, p->pos++, 1))
			return false;
	}
	for (int i = 0; i < e->nargs; i++)
		if (!walk_reads(p, e->args[i], s))
			return false;
	return true;
}

/* Every reference of the body in interp_refs' order; an op= element's read and write are one. */
static bool walk(pr *p, ir_node *const *body, int n)
{
	for (int i = 0; i < n; i++) {
		const ir_node *s = body[i];
		if (s->kind == ND_FOR && !walk(p, s->body, s->nbody))
			return false;
		if (s->kind == ND_IF && (!walk(p, s->body, s->nbody) || !walk(p, s->els, s->nels)))
			return false;
		if (s->kind != ND_STMT && s->kind != ND_LET)
			continue;
		p->pos = 0;
		if (!walk_reads(p, s->rhs, s))
			return false;
		if (s->kind != ND_STMT || !s->lhs)
			continue;
		uref x = {.array = s->lhs->id, .node = s, .line = s->lhs->pos.line, .col = s->lhs->pos.col,
		          .stmt = s->stmt_id, .is_write = s->op == AS_SET ? 1 : 2, .ids = {p->id, p->id + 1},
		          .nids = s->op == AS_SET ? 1 : 2};
		p->id += x.nids;
		if (!push_ref(p, x, p->pos, x.nids))
			return false;
	}
	return true;
}

/* A row for the accesses of each storage that no source reference makes: the copy loops of a
 * plan's caches (to the array and to the buffer). */
static bool add_copies(pr *p)
{
	for (int a = 0; a < p->t->narrays; a++) {
		int64_t own = 0;
		for (int i = 0; i < p->nu; i++)
			if (p->u[i].array == a)
				own += p->u[i].accesses;
		int64_t rest = a < p->m->narrays ? p->m->array_accesses[a] - own : 0;
		if (rest > 0 && !push(p, (uref){.array = a, .ids = {-1}, .nids = 1, .accesses = rest}))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ the split by simulation */

typedef struct two_sims {
	sim *miss, *cold;
} two_sims;

static ct_status feed2(void *ud, const interp_access *acc, int n)
{
	two_sims *s = ud;
	for (int i = 0; i < n; i++) {
		sim_access_ref(s->miss, acc[i].ref, acc[i].buffer, acc[i].offset, acc[i].is_write);
		sim_access_ref(s->cold, acc[i].ref, acc[i].buffer, acc[i].offset, acc[i].is_write);
	}
	return CT_OK;
}

/* The spec's line sizes as levels too large to evict anything: their misses are the cold ones. */
static int cold_spec(const sim_spec *spec, sim_spec *c, int *of_level)
{
	memset(c, 0, sizeof *c);
	for (int l = 0; l < spec->nlevels; l++) {
		int j = 0;
		while (j < c->nlevels && c->level[j].line != spec->level[l].line)
			j++;
		if (j == c->nlevels) {
			c->level[j].line = spec->level[l].line;
			c->level[j].size = spec->level[l].line << 36;
			c->nlevels++;
		}
		of_level[l] = j;
	}
	return c->nlevels;
}

/* Misses at level l of row x in simulator s (copies: the storage's misses less its references'). */
static double row_misses(const pr *p, sim *s, int l, const uref *x)
{
	if (x->node) {
		uint64_t n = 0;
		for (int i = 0; i < x->nids; i++)
			n += sim_ref_misses(s, l, x->ids[i]);
		return (double)n;
	}
	double n = (double)sim_buffer_misses(s, l, x->array);
	for (int i = 0; i < p->nu; i++)
		if (p->u[i].node && p->u[i].array == x->array)
			n -= row_misses(p, s, l, &p->u[i]);
	return n > 0 ? n : 0;
}

/* Simulate the trace once and take each row's per-level misses and cold misses as weights. */
static ct_status sim_weights(pr *p)
{
	ct_ctx *ctx = p->ctx;
	ct_looptree *t = p->t;
	int nbuf = t->narrays;
	sim_buffer *buf = NULL;
	two_sims s = {0};
	ct_status st = sim_tree_buffers(t, &buf);
	if (st)
		goto out;
	sim_spec cs;
	int of_level[SIM_MAX_LEVELS];
	cold_spec(p->spec, &cs, of_level);
	s.miss = sim_new(ctx, p->spec, buf, nbuf, p->nrefs);
	s.cold = s.miss ? sim_new(ctx, &cs, buf, nbuf, p->nrefs) : NULL;
	if (!s.cold) {
		st = ct_ctx_last_status(ctx);
		goto out;
	}
	st = interp_trace_batch(t, feed2, &s);
	if (!st)
		st = sim_result(s.miss, NULL, NULL, NULL);
	if (!st)
		st = sim_result(s.cold, NULL, NULL, NULL);
	for (int i = 0; i < p->nu && !st; i++)
		for (int l = 0; l < p->spec->nlevels; l++) {
			p->u[i].wmiss[l] = row_misses(p, s.miss, l, &p->u[i]);
			p->u[i].wcold[l] = row_misses(p, s.cold, of_level[l], &p->u[i]);
		}
out:
	sim_free(s.miss);
	sim_free(s.cold);
	free(buf);
	return st;
}

/* ------------------------------------------------------------ the table */

/* Share total out over the rows of array a in proportion to their weights (by accesses where
 * every weight is 0), largest remainders first, so that the shares add up to total. */
static void apportion(const pr *p, int a, int64_t total, const double *w, int64_t *out)
{
	double sum = 0;
	for (int i = 0; i < p->nu; i++)
		if (p->u[i].array == a)
			sum += w[i];
	bool by_acc = sum <= 0;
	if (by_acc)
		for (int i = 0; i < p->nu; i++)
			if (p->u[i].array == a)
				sum += (double)p->u[i].accesses;
	int64_t given = 0;
	double *rem = calloc((size_t)p->nu + 1, sizeof *rem);
	for (int i = 0; i < p->nu; i++) {
		if (p->u[i].array != a)
			continue;
		double q = sum > 0 ? (double)total * (by_acc ? (double)p->u[i].accesses : w[i]) / sum : 0;
		out[i] = (int64_t)q;
		given += out[i];
		if (rem)
			rem[i] = q - (double)out[i];
	}
	while (given < total) {
		int best = -1;
		for (int i = 0; i < p->nu; i++)
			if (p->u[i].array == a && (best < 0 || (rem && rem[i] > rem[best])))
				best = i;
		if (best < 0)
			break;
		out[best]++;
		if (rem)
			rem[best] = -1;
		given++;
	}
	free(rem);
}

/* Whether partition q's reuse misses a level of `lines` lines: surely (its distance), or with
 * `maybe` possibly (its distance range reaches the capacity). */
static bool part_misses(const model_part *q, int64_t lines, bool maybe)
{
	return (maybe ? q->distance_hi : q->distance) >= lines;
}

/* The partition kind and loop with the most misses of array a at a level of `lines` lines
 * (maybe: of the partitions whose distance range reaches the capacity). */
static void carrier_of(const pr *p, const model_lines *ml, int64_t lines, int a, bool maybe, int *kind,
                       const char **name)
{
	*kind = CT_CARRIER_NONE;
	*name = NULL;
	int64_t best = 0;
	for (int i = 0; ml && i < ml->nparts; i++) {
		const model_part *q = &ml->parts[i];
		if (q->array != a || q->kind == MR_COLD || !part_misses(q, lines, maybe))
			continue;
		/* the partitions of one (kind, node) together */
		int64_t n = 0;
		bool first = true;
		for (int j = 0; j < ml->nparts; j++) {
			const model_part *r = &ml->parts[j];
			bool same = r->array == a && r->node == q->node && r->kind != MR_COLD && part_misses(r, lines, maybe) &&
			            (r->kind == q->kind || ((r->kind == MR_CARRIED || r->kind == MR_FAR) &&
			                                    (q->kind == MR_CARRIED || q->kind == MR_FAR)));
			if (!same)
				continue;
			if (j < i)
				first = false;
			n += r->count;
		}
		if (!first || n <= best)
			continue;
		best = n;
		const lt_node *node = q->node;
		*kind = q->kind == MR_STMT ? CT_CARRIER_STMT : q->kind == MR_SIBLING ? CT_CARRIER_SIBLING
		                                                                      : CT_CARRIER_LOOP;
		*name = node && q->kind != MR_STMT && node->kind == LT_LOOP && node->index >= 0 &&
		                node->index < p->k->nindices
		            ? p->k->indices[node->index].name
		            : NULL;
	}
}

/* The misses of storage a at level l: the model's partitions', or predict's own count for a
 * simulated level or a set-associative one (ct_predict_result lists the storages with accesses,
 * in order). */
static int64_t level_misses(const pr *p, const model_lines *ml, int64_t lines, int l, int a)
{
	const sim_level *sl = &p->spec->level[l];
	bool set_assoc = sim_level_conflicts(sl);
	if (p->r->source[l] == CT_SOURCE_FA_ESTIMATE || (p->r->source[l] == CT_SOURCE_MODEL && !set_assoc))
		return model_misses(ml, lines, a, NULL);
	int e = 0;
	for (int b = 0; b < a; b++)
		e += p->m->array_accesses[b] != 0;
	return p->m->array_accesses[a] && e < p->r->narrays ? p->r->arrays[e].misses[l] : 0;
}

static int cmp_rows(const void *x, const void *y)
{
	const ct_ref_misses *a = x, *b = y;
	for (int l = 0; l < CT_SIM_MAX_LEVELS; l++)
		if (a->misses[l] != b->misses[l])
			return a->misses[l] > b->misses[l] ? -1 : 1;
	/* positionless rows (copies, buffers) after the source's */
	int la = a->line ? a->line : 1 << 30, lb = b->line ? b->line : 1 << 30;
	if (la != lb)
		return la < lb ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return strcmp(a->array, b->array);
}

/* Fill the table from the rows: per array, the model's misses and cold misses per level shared
 * out over its rows. */
static ct_status fill_table(pr *p, int split, ct_ref_table *tab)
{
	int L = p->spec->nlevels, nu = p->nu;
	size_t names = 0;
	for (int a = 0; a < p->t->narrays; a++)
		names += strlen(p->t->arrays[a].name) + 1;
	tab->refs = calloc(1, sizeof *tab->refs * (size_t)(nu + 1) + names);
	int64_t *share = calloc((size_t)nu + 1, sizeof *share);
	double *w = calloc((size_t)nu + 1, sizeof *w);
	const char **name = calloc((size_t)p->t->narrays + 1, sizeof *name);
	ct_status st = CT_OK;
	if (!tab->refs || !share || !w || !name) {
		st = ct_error(p->ctx, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	char *nm = (char *)(tab->refs + nu + 1);
	for (int a = 0; a < p->t->narrays; a++) {
		size_t len = strlen(p->t->arrays[a].name) + 1;
		memcpy(nm, p->t->arrays[a].name, len);
		name[a] = nm;
		nm += len;
	}
	tab->nrefs = nu;
	tab->file = p->k->file;
	for (int i = 0; i < nu; i++) {
		const uref *x = &p->u[i];
		ct_ref_misses *r = &tab->refs[i];
		r->array = x->array >= 0 && x->array < p->t->narrays ? name[x->array] : "?";
		r->stmt = x->stmt;
		r->line = x->line;
		r->col = x->col;
		r->is_write = x->is_write;
		r->accesses = x->accesses;
		int rows = 0;
		for (int j = 0; j < nu; j++)
			rows += p->u[j].array == x->array;
		r->split = rows == 1 ? CT_SPLIT_MODEL : split;
	}
	for (int l = 0; l < L; l++) {
		const sim_level *sl = &p->spec->level[l];
		const model_lines *ml = model_for_line(p->m, sl->line);
		int64_t lines = sl->size / sl->line;
		for (int a = 0; a < p->t->narrays; a++) {
			int64_t miss = level_misses(p, ml, lines, l, a), cold = 0;
			for (int i = 0; ml && i < ml->nparts; i++)
				if (ml->parts[i].array == a && ml->parts[i].kind == MR_COLD)
					cold += ml->parts[i].count;
			if (cold > miss)
				cold = miss;
			int kind;
			const char *carrier;
			carrier_of(p, ml, lines, a, false, &kind, &carrier);
			/* a simulated fully associative level (the model not exact there): its capacity
			 * misses come from the reuse whose distance range reaches the capacity, and only
			 * a set-associative level has conflicts */
			bool set_assoc = sim_level_conflicts(sl);
			if (kind == CT_CARRIER_NONE && p->r->source[l] == CT_SOURCE_SIMULATOR && !set_assoc)
				carrier_of(p, ml, lines, a, true, &kind, &carrier);
			for (int i = 0; i < nu; i++)
				w[i] = p->u[i].wmiss[l];
			apportion(p, a, miss, w, share);
			for (int i = 0; i < nu; i++)
				if (p->u[i].array == a) {
					tab->refs[i].misses[l] = share[i];
					tab->refs[i].carrier[l] = kind;
					tab->refs[i].carried_by[l] = carrier;
				}
			for (int i = 0; i < nu; i++)
				w[i] = p->u[i].wcold[l];
			apportion(p, a, cold, w, share);
			for (int i = 0; i < nu; i++)
				if (p->u[i].array == a) {
					/* a share of cold misses never above the row's misses */
					int64_t c = share[i] < tab->refs[i].misses[l] ? share[i] : tab->refs[i].misses[l];
					tab->refs[i].cold[l] = c;
					if (c == tab->refs[i].misses[l]) {
						tab->refs[i].carrier[l] = CT_CARRIER_NONE;
						tab->refs[i].carried_by[l] = NULL;
					} else if (kind == CT_CARRIER_NONE && p->r->source[l] != CT_SOURCE_FA_ESTIMATE &&
					           set_assoc) {
						tab->refs[i].carrier[l] = CT_CARRIER_CONFLICT;
					}
				}
		}
	}
	qsort(tab->refs, (size_t)nu, sizeof *tab->refs, cmp_rows);
out:
	free(share);
	free(w);
	free(name);
	return st;
}

/* ------------------------------------------------------------ affine loop bounds: the simulator's own counts */

/* The trace of a tree with affine loop bounds (which the model does not analyse): both
 * simulators of sim_weights, given id ref * nbuf + storage for each access of a reference (so
 * that a reference a plan sends to several storages has a count in each), the accesses per
 * such id and per storage, at most AFFINE_SIM_MAX accesses. */
typedef struct aff_feed {
	two_sims s;
	int64_t *id_acc;  /* [nrefs * nbuf] */
	int64_t *buf_acc; /* [nbuf] */
	int nrefs, nbuf;
	int64_t total;
	ct_ctx *ctx;
} aff_feed;

static ct_status aff_feed_fn(void *ud, const interp_access *acc, int n)
{
	aff_feed *f = ud;
	f->total += n;
	if (f->total > AFFINE_SIM_MAX)
		return ct_error(f->ctx, CT_ERR_LIMIT,
		                "the cache model does not analyse loops with affine bounds yet (issue #31), and the "
		                "trace has more than %lld accesses, too many to simulate for predict --per-ref: use "
		                "`cachet simulate` (its per-reference counts), or smaller sizes",
		                (long long)AFFINE_SIM_MAX);
	for (int i = 0; i < n; i++) {
		const interp_access *a = &acc[i];
		bool in = a->buffer >= 0 && a->buffer < f->nbuf;
		int id = a->ref >= 0 && a->ref < f->nrefs && in ? a->ref * f->nbuf + a->buffer : -1;
		sim_access_ref(f->s.miss, id, a->buffer, a->offset, a->is_write);
		sim_access_ref(f->s.cold, id, a->buffer, a->offset, a->is_write);
		if (id >= 0)
			f->id_acc[id]++;
		if (in)
			f->buf_acc[a->buffer]++;
	}
	return CT_OK;
}

/* Walk the trace once through the two simulators (f->s, the spec's levels and cs's). */
static ct_status aff_simulate(pr *p, const sim_spec *cs, aff_feed *f)
{
	ct_ctx *ctx = p->ctx;
	ct_looptree *t = p->t;
	int nid = p->nrefs * t->narrays;
	sim_buffer *buf = NULL;
	f->nrefs = p->nrefs;
	f->nbuf = t->narrays;
	f->ctx = ctx;
	f->id_acc = calloc((size_t)nid + 1, sizeof *f->id_acc);
	f->buf_acc = calloc((size_t)t->narrays + 1, sizeof *f->buf_acc);
	ct_status st = f->id_acc && f->buf_acc ? sim_tree_buffers(t, &buf) : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st && (!(f->s.miss = sim_new(ctx, p->spec, buf, t->narrays, nid)) ||
	            !(f->s.cold = sim_new(ctx, cs, buf, t->narrays, nid))))
		st = ct_ctx_last_status(ctx);
	if (!st)
		st = interp_trace_batch(t, aff_feed_fn, f);
	if (!st)
		st = sim_result(f->s.miss, NULL, NULL, NULL);
	if (!st)
		st = sim_result(f->s.cold, NULL, NULL, NULL);
	free(buf);
	return st;
}

/* Replace walk's rows (one per source reference, ids = reference ids) by one per source
 * reference and storage its accesses went to (ids = the simulator's ids of that pair; a
 * reference that never runs keeps one empty row), then add a `(copy loops)` row per storage
 * for the accesses no reference makes. */
static bool aff_split_rows(pr *p, const aff_feed *f)
{
	int nsrc = p->nu, nbuf = f->nbuf;
	uref *src = p->u;
	p->u = NULL;
	p->nu = p->capu = 0;
	bool ok = true;
	for (int i = 0; i < nsrc && ok; i++) {
		const uref *x = &src[i];
		int first = p->nu;
		for (int a = 0; a < nbuf && ok; a++) {
			uref y = *x;
			y.array = a;
			y.accesses = 0;
			for (int j = 0; j < x->nids; j++) {
				int id = x->ids[j] >= 0 && x->ids[j] < f->nrefs ? x->ids[j] * nbuf + a : -1;
				y.ids[j] = id;
				y.accesses += id >= 0 ? f->id_acc[id] : 0;
			}
			if (y.accesses > 0)
				ok = push(p, y);
		}
		if (ok && p->nu == first) {
			uref y = *x;
			y.nids = 0;
			ok = push(p, y);
		}
	}
	free(src);
	for (int a = 0; a < nbuf && ok; a++) {
		int64_t own = 0;
		for (int i = 0; i < p->nu; i++)
			if (p->u[i].array == a)
				own += p->u[i].accesses;
		if (f->buf_acc[a] > own)
			ok = push(p, (uref){.array = a, .ids = {-1}, .nids = 1, .accesses = f->buf_acc[a] - own});
	}
	return ok;
}

/* The rows of an affine tree from one walk of its trace through two simulators: each row's
 * accesses, misses and cold misses (levels of 2^36 lines), split CT_SPLIT_SIMULATED, and the
 * carrier of its capacity or conflict misses unknown (CT_CARRIER_UNKNOWN: no partitions
 * without the model). */
static ct_status affine_rows(pr *p, ct_ref_table *tab)
{
	ct_ctx *ctx = p->ctx;
	ct_looptree *t = p->t;
	int nbuf = t->narrays, L = p->spec->nlevels;
	sim_spec cs;
	int of_level[SIM_MAX_LEVELS];
	cold_spec(p->spec, &cs, of_level);
	aff_feed f;
	memset(&f, 0, sizeof f);
	ct_status st = aff_simulate(p, &cs, &f);
	if (!st && !aff_split_rows(p, &f))
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	size_t names = 0;
	for (int a = 0; a < nbuf; a++)
		names += strlen(t->arrays[a].name) + 1;
	if (!st && !(tab->refs = calloc(1, sizeof *tab->refs * (size_t)(p->nu + 1) + names)))
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	const char **name = st ? NULL : calloc((size_t)nbuf + 1, sizeof *name);
	if (!st && !name)
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	if (!st) {
		char *nm = (char *)(tab->refs + p->nu + 1);
		for (int a = 0; a < nbuf; a++) {
			size_t len = strlen(t->arrays[a].name) + 1;
			memcpy(nm, t->arrays[a].name, len);
			name[a] = nm;
			nm += len;
		}
		tab->nrefs = p->nu;
		tab->file = p->k->file;
		for (int i = 0; i < p->nu; i++) {
			const uref *x = &p->u[i];
			ct_ref_misses *r = &tab->refs[i];
			r->array = x->array >= 0 && x->array < nbuf ? name[x->array] : "?";
			r->stmt = x->stmt;
			r->line = x->line;
			r->col = x->col;
			r->is_write = x->is_write;
			r->accesses = x->accesses;
			r->split = CT_SPLIT_SIMULATED;
			for (int l = 0; l < L; l++) {
				r->misses[l] = (int64_t)row_misses(p, f.s.miss, l, x);
				int64_t c = (int64_t)row_misses(p, f.s.cold, of_level[l], x);
				r->cold[l] = c < r->misses[l] ? c : r->misses[l];
				r->carrier[l] = r->cold[l] == r->misses[l] ? CT_CARRIER_NONE : CT_CARRIER_UNKNOWN;
			}
		}
		qsort(tab->refs, (size_t)p->nu, sizeof *tab->refs, cmp_rows);
	}
	free(name);
	sim_free(f.s.miss);
	sim_free(f.s.cold);
	free(f.id_acc);
	free(f.buf_acc);
	return st;
}

void ct_ref_table_free(ct_ref_table *t)
{
	if (!t)
		return;
	free(t->refs);
	memset(t, 0, sizeof *t);
}

ct_status ct_kernel_predict_refs(ct_kernel *k, const char *spec_text, int64_t sim_max,
                                 ct_predict_result *r, ct_ref_table *tab)
{
	if (!k || !r || !tab)
		return CT_ERR_USAGE;
	memset(tab, 0, sizeof *tab);
	sim_spec spec;
	model_result m;
	pr p = {.ctx = k->ctx, .k = k, .spec = &spec, .m = &m, .r = r};
	ct_status st = predict_run(k, spec_text, &spec, &p.t, &m, r);
	if (st)
		return st;
	st = interp_refs(p.t, &p.refs, &p.nrefs);
	if (!st && (!walk(&p, k->body, k->nbody) || !add_copies(&p)))
		st = ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	if (!st && p.id != p.nrefs)
		st = ct_error(k->ctx, CT_ERR_USAGE, "per-ref: %d references, the trace has %d", p.id,
		              p.nrefs);
	/* affine bounds: the simulator's rows, unless the trace was too long and predict estimated
	 * (the model's partitions then, shared out by accesses as any trace too long to simulate) */
	bool estimated = k->affine_bounds && r->nlevels > 0 && r->source[0] == CT_SOURCE_AFFINE_ESTIMATE;
	if (k->affine_bounds && !estimated) {
		if (!st)
			st = affine_rows(&p, tab);
		goto done;
	}
	bool shared = false;
	for (int i = 0; i < p.nu && !shared; i++)
		for (int j = 0; j < i; j++)
			if (p.u[j].array == p.u[i].array)
				shared = true;
	int split = CT_SPLIT_ACCESSES;
	if (sim_max < 0)
		sim_max = PERREF_SIM_MAX;
	if (!st && shared && m.accesses <= sim_max && !estimated) {
		st = sim_weights(&p);
		split = CT_SPLIT_SIM;
	}
	if (!st)
		st = fill_table(&p, split, tab);
done:
	ct_free(k->ctx, p.refs);
	free(p.u);
	model_result_free(&m);
	ct_looptree_free(p.t);
	if (st) {
		ct_ref_table_free(tab);
		ct_predict_result_free(r);
	}
	return st;
}
