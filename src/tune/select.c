/* select.c: the run-time solution selector: store record, nearest size class or model, cut into main and tail pieces. */
#include "jit/jit.h"
#include "tune/tune.h"

#include "ir/ir.h"
#include "ir/targets.h"
#include "engine/engine.h"
#include "gen/gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#define MAX_P (CT_SELECT_MAX_PARAMS * 4) /* params of a kernel the selector handles */
#define MEMO_SLOTS 256                   /* answers kept in memory (direct-mapped) */

typedef int (*entry_fn)(void *const *, const int64_t *);

/* One store record of the kernel's family, parsed. */
typedef struct sel_rec {
	int64_t sizes[MAX_P];
	int64_t values[CT_SELECT_MAX_PARAMS];
	char size_class[256];
	bool exact_ok; /* verified and trusted */
} sel_rec;

/* One answer, with the entry points of its pieces once loaded. */
typedef struct memo {
	bool used;
	int64_t sizes[MAX_P];
	ct_solution sol;
	ct_select_piece *pieces;
	entry_fn *entries;
	char size_class[256];
} memo;

struct ct_selector {
	ct_kernel *k;
	ct_dtype dtype;
	int nsizes, size_ids[MAX_P];
	int nt, tids[CT_SELECT_MAX_PARAMS];
	int cut[CT_SELECT_MAX_PARAMS]; /* per tunable param: the size param it cuts, or -1 */
	int nrecs;
	sel_rec *recs;
	memo slots[MEMO_SLOTS];
	ct_select_source fallback; /* the answer without a record: CT_SELECT_MODEL or CT_SELECT_FILE */
	int load_rank;          /* since the last run: 0 every piece from memory, 1 one from disk, 2 one compiled */
	double compile_seconds; /* and the compile time of those compiled */
};

const char *ct_select_source_name(ct_select_source s)
{
	switch (s) {
	case CT_SELECT_EXACT: return "exact";
	case CT_SELECT_NEAREST: return "nearest";
	case CT_SELECT_MODEL: return "model";
	case CT_SELECT_FILE: return "file";
	}
	return "?";
}

/* ------------------------------------------------------------ which sizes can be cut */

static bool expr_uses_param(const ct_kernel *k, const ir_expr *e, int p)
{
	if (!e)
		return false;
	if (e->kind == EX_PARAM && e->id == p)
		return true;
	if (e->kind == EX_ACCESS && e->sub)
		for (int d = 0; d < k->arrays[e->id].rank; d++)
			if (aff_coef(e->sub[d], AFF_PARAM, p))
				return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_uses_param(k, e->args[i], p))
			return true;
	return false;
}

/* Every access to an array in the nodes: subscripts in dims of extent P must
 * be exactly x, x must appear nowhere else, P nowhere in values or
 * conditions, and every written array must be indexed by x. */
typedef struct cut_check {
	const ct_kernel *k;
	int x, p;
	bool ok;
} cut_check;

static bool dim_is_p(const ct_kernel *k, int a, int d, int p)
{
	aff e = k->arrays[a].ext[d];
	return e.c == 0 && e.n == 1 && e.t[0].kind == AFF_PARAM && e.t[0].id == p && e.t[0].coef == 1;
}

/* One access: returns whether it is indexed by x (in a P dim). */
static bool check_access(cut_check *c, const ir_expr *e)
{
	const ct_kernel *k = c->k;
	bool by_x = false;
	for (int d = 0; d < k->arrays[e->id].rank; d++) {
		aff s = e->sub[d];
		bool is_x = s.c == 0 && s.n == 1 && s.t[0].kind == AFF_INDEX && s.t[0].id == c->x &&
		            s.t[0].coef == 1;
		if (dim_is_p(k, e->id, d, c->p)) {
			if (!is_x)
				c->ok = false;
			by_x = true;
		} else if (aff_coef(s, AFF_INDEX, c->x) || aff_coef(s, AFF_PARAM, c->p)) {
			c->ok = false;
		}
	}
	return by_x;
}

static void check_expr(cut_check *c, const ir_expr *e)
{
	if (!e)
		return;
	if (e->kind == EX_PARAM && e->id == c->p)
		c->ok = false;
	if (e->kind == EX_INDEX && e->id == c->x)
		c->ok = false; /* x's value itself would shift in a piece */
	if (e->kind == EX_ACCESS)
		check_access(c, e);
	if (e->kind == EX_CMP && e->has_diff && (aff_coef(e->diff, AFF_INDEX, c->x) || aff_coef(e->diff, AFF_PARAM, c->p)))
		c->ok = false;
	for (int i = 0; i < e->nargs; i++)
		check_expr(c, e->args[i]);
}

static void check_nodes(cut_check *c, ir_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const ir_node *nd = v[i];
		switch (nd->kind) {
		case ND_FOR:
			for (int j = 0; j < nd->nidx; j++) {
				const ir_index *ix = &c->k->indices[nd->idx[j]];
				if (nd->idx[j] != c->x && (aff_coef(ix->lo, AFF_PARAM, c->p) || aff_coef(ix->hi, AFF_PARAM, c->p)))
					c->ok = false;
				/* an affine bound (issue #31) that reads P or x: in a piece x runs from 0,
				 * so `k: 0 .. x+1` would be computed from the piece's x, not the problem's */
				for (int b = 0; b < ix->nlo + ix->nhi; b++) {
					aff f = b < ix->nlo ? ix->los[b] : ix->his[b - ix->nlo];
					if (aff_coef(f, AFF_PARAM, c->p) || aff_coef(f, AFF_INDEX, c->x))
						c->ok = false;
				}
			}
			check_nodes(c, nd->body, nd->nbody);
			break;
		case ND_STMT:
			if (!check_access(c, nd->lhs))
				c->ok = false; /* a write every piece would repeat */
			check_expr(c, nd->rhs);
			break;
		case ND_LET: check_expr(c, nd->rhs); break;
		case ND_IF:
			check_expr(c, nd->cond);
			check_nodes(c, nd->body, nd->nbody);
			check_nodes(c, nd->els, nd->nels);
			break;
		}
	}
}

/* The size param that tunable param t cuts (the extent of the index it
 * splits), or -1 when cutting that index into pieces is not provably safe. */
static int cut_param(const ct_kernel *k, int t)
{
	int x = -1;
	for (int s = 0; s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		if (sc->kind == SC_REORDER)
			continue;
		for (int i = 0; i < sc->n; i++) {
			const ir_expr *e = sc->size_expr ? sc->size_expr[i] : NULL;
			if (e && e->kind == EX_PARAM && e->id == t && k->indices[sc->idx[i]].kind == IX_LOOP)
				x = x < 0 ? sc->idx[i] : -2;
		}
	}
	if (x < 0)
		return -1;
	const ir_index *ix = &k->indices[x];
	if (ir_index_affine(ix)) /* its range is not 0 .. P */
		return -1;
	if (!(aff_is_const(ix->lo) && ix->lo.c == 0 && ix->hi.c == 0 && ix->hi.n == 1 &&
	      ix->hi.t[0].kind == AFF_PARAM && ix->hi.t[0].coef == 1))
		return -1;
	int p = ix->hi.t[0].id;
	if (!tune_is_size_param(k, p) || k->params[p].runtime)
		return -1;
	cut_check c = {k, x, p, true};
	check_nodes(&c, k->body, k->nbody);
	/* P in other params' definitions, split sizes or other extents */
	for (int i = 0; i < k->nparams && c.ok; i++)
		if (expr_uses_param(k, k->params[i].def, p))
			c.ok = false;
	for (int s = 0; s < k->nsched && c.ok; s++)
		for (int i = 0; i < k->sched[s].n && k->sched[s].size_expr; i++)
			if (expr_uses_param(k, k->sched[s].size_expr[i], p))
				c.ok = false;
	for (int a = 0; a < k->narrays && c.ok; a++)
		for (int d = 0; d < k->arrays[a].rank; d++)
			if (!dim_is_p(k, a, d, p) && aff_coef(k->arrays[a].ext[d], AFF_PARAM, p))
				c.ok = false;
	/* a cache's fixed size (max_elements) does not depend on P: pieces are fine */
	return c.ok ? p : -1;
}

/* ------------------------------------------------------------ records */

/* "M=256:N=96" -> out[i] = the value of param ids[i] (n of them, in that order); false if the
 * names differ or a value is below min. */
static bool parse_named(const ct_selector *s, const char *text, const int *ids, int n, int64_t min,
                        int64_t *out)
{
	const char *p = text;
	for (int i = 0; i < n; i++) {
		const char *name = s->k->params[ids[i]].name;
		size_t len = strlen(name);
		if (strncmp(p, name, len) != 0 || p[len] != '=')
			return false;
		char *end;
		out[i] = strtoll(p + len + 1, &end, 10);
		if (out[i] < min)
			return false;
		p = end;
		if (i + 1 < n && *p++ != ':')
			return false;
	}
	/* the tuner writes its decision after a ';' (tuner.c, store_best) */
	return *p == 0 || *p == ';';
}

/* Whether every tuned value of a record is among its param's declared
 * candidates: a record is data from a file, and a value outside the space
 * (a planted TI = 2^63-1) was never checked or measured. */
static bool values_in_space(const ct_selector *s, const int64_t *values)
{
	for (int t = 0; t < s->nt; t++) {
		const ir_param *p = &s->k->params[s->tids[t]];
		bool found = false;
		for (int c = 0; c < p->ntune && !found; c++)
			found = p->tune[c] == values[t];
		if (!found)
			return false;
	}
	return true;
}

static void load_records(ct_selector *s, const char *dir)
{
	ct_ctx *ctx = s->k->ctx;
	char family[128];
	if (tune_family(s->k, family, sizeof family))
		return;
	ct_store *st = ct_store_open(ctx, dir, CT_STORE_READONLY | CT_STORE_QUIET);
	const ct_tune_record *recs = NULL;
	int n = 0;
	if (st && ct_store_list(st, family, &s->dtype, &recs, &n) == CT_OK && n > 0) {
		s->recs = calloc((size_t)n, sizeof *s->recs);
		for (int i = 0; s->recs && i < n; i++) {
			sel_rec *r = &s->recs[s->nrecs];
			/* a record that failed verification is never used */
			if (recs[i].verified == 0 || !parse_named(s, recs[i].size_class, s->size_ids, s->nsizes, INT64_MIN, r->sizes))
				continue;
			if (!parse_named(s, recs[i].params, s->tids, s->nt, 1, r->values)) {
				/* an imported record of this family that does not name
				 * this kernel's tunables: said, not silently skipped */
				jit_warn_ctx(ctx, "tuning store record %s of '%s' ignored: its values (%s) do not name "
						  "the kernel's tunable params, each once, in order, at least 1",
					     recs[i].size_class, s->k->name, recs[i].params);
				continue;
			}
			if (!values_in_space(s, r->values)) {
				jit_warn_ctx(ctx, "tuning store record %s of '%s' ignored: its values (%s) are not "
						  "among the params' tune values",
					     recs[i].size_class, s->k->name, recs[i].params);
				continue;
			}
			snprintf(r->size_class, sizeof r->size_class, "%s", recs[i].size_class);
			r->exact_ok = recs[i].trusted != 0;
			s->nrecs++;
		}
	}
	ct_store_close(st);
	ct_ctx_clear_error(ctx);
}

ct_selector *ct_selector_new(ct_kernel *k, const char *store_dir)
{
	if (!k || ir_kernel_ready(k) != CT_OK)
		return NULL;
	ct_selector *s = calloc(1, sizeof *s);
	if (!s) {
		ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	s->k = k;
	s->fallback = CT_SELECT_MODEL;
	s->dtype = tune_kernel_dtype(k);
	for (int i = 0; i < k->nparams; i++) {
		if (k->params[i].ntune > 0) {
			if (s->nt == CT_SELECT_MAX_PARAMS)
				goto too_many;
			s->tids[s->nt++] = i;
		} else if (tune_is_size_param(k, i)) {
			if (s->nsizes == MAX_P)
				goto too_many;
			s->size_ids[s->nsizes++] = i;
		}
	}
	if (k->nparams > MAX_P)
		goto too_many;
	if (s->nt == 0) {
		ct_error(k->ctx, CT_ERR_INPUT, "kernel '%s' has no tunable param", k->name);
		free(s);
		return NULL;
	}
	for (int t = 0; t < s->nt; t++) {
		s->cut[t] = cut_param(k, s->tids[t]);
		/* one size cut by two tiles: cut by neither */
		for (int u = 0; u < t; u++)
			if (s->cut[t] >= 0 && s->cut[u] == s->cut[t])
				s->cut[t] = s->cut[u] = -1;
	}
	load_records(s, store_dir);
	return s;
too_many:
	ct_error(k->ctx, CT_ERR_LIMIT,
	         "kernel '%s' has too many params for the selector (it takes %d tunable ones and %d in all)", k->name,
	         CT_SELECT_MAX_PARAMS, MAX_P);
	free(s);
	return NULL;
}

static void memo_clear(memo *m)
{
	free(m->pieces);
	free(m->entries);
	memset(m, 0, sizeof *m);
}

ct_status ct_selector_fallback(ct_selector *s, ct_select_source fallback)
{
	if (!s)
		return CT_ERR_USAGE;
	if (fallback != CT_SELECT_MODEL && fallback != CT_SELECT_FILE)
		return ct_error(s->k->ctx, CT_ERR_USAGE, "a selector falls back on the model or the file's values");
	for (int i = 0; i < MEMO_SLOTS; i++)
		memo_clear(&s->slots[i]);
	s->fallback = fallback;
	return CT_OK;
}

void ct_selector_free(ct_selector *s)
{
	if (!s)
		return;
	for (int i = 0; i < MEMO_SLOTS; i++)
		memo_clear(&s->slots[i]);
	free(s->recs);
	free(s);
}

/* Param values and override flags, to put k back as it was. */
typedef struct kept {
	int64_t value[MAX_P];
	bool overridden[MAX_P];
} kept;

static void keep_params(const ct_kernel *k, kept *kp)
{
	for (int i = 0; i < k->nparams; i++) {
		kp->value[i] = k->params[i].value;
		kp->overridden[i] = k->params[i].overridden;
	}
}

static void put_back(ct_kernel *k, const kept *kp)
{
	for (int i = 0; i < k->nparams; i++) {
		k->params[i].value = kp->value[i];
		k->params[i].overridden = kp->overridden[i];
	}
	(void)ct_kernel_recheck(k);
}

/* put_back after a failure: the failure's error stays the ctx's (the
 * recheck would replace it). */
static void put_back_keep_error(ct_kernel *k, const kept *kp)
{
	ct_ctx *ctx = k->ctx;
	char msg[sizeof ctx->msg], file[sizeof ctx->file];
	memcpy(msg, ctx->msg, sizeof msg);
	memcpy(file, ctx->file, sizeof file);
	ct_status saved = ctx->status;
	int line = ctx->line, col = ctx->col;
	put_back(k, kp);
	ctx->status = saved;
	memcpy(ctx->msg, msg, sizeof msg);
	memcpy(ctx->file, file, sizeof file);
	ctx->line = line;
	ctx->col = col;
}

/* ------------------------------------------------------------ selecting */

static double class_distance(const ct_selector *s, const int64_t *a, const int64_t *b)
{
	double d = 0;
	for (int i = 0; i < s->nsizes; i++)
		d += fabs(log2((double)(a[i] > 0 ? a[i] : 1) / (double)(b[i] > 0 ? b[i] : 1)));
	return d;
}

/* Fill m->sol's values and source for sizes. */
static ct_status choose(ct_selector *s, const int64_t *sizes, memo *m)
{
	int best = -1;
	double bd = 0;
	for (int i = 0; i < s->nrecs; i++) {
		double d = class_distance(s, sizes, s->recs[i].sizes);
		if (d == 0 && s->recs[i].exact_ok) {
			best = i;
			bd = 0;
			break;
		}
		if (best < 0 || d < bd) {
			best = i;
			bd = d;
		}
	}
	if (best >= 0) {
		m->sol.source = bd == 0 && s->recs[best].exact_ok ? CT_SELECT_EXACT : CT_SELECT_NEAREST;
		memcpy(m->sol.values, s->recs[best].values, sizeof *m->sol.values * (size_t)s->nt);
		snprintf(m->size_class, sizeof m->size_class, "%s", s->recs[best].size_class);
		return CT_OK;
	}
	ct_kernel *k = s->k;
	m->size_class[0] = 0;
	if (s->fallback == CT_SELECT_FILE) { /* no record: the kernel's own values */
		for (int t = 0; t < s->nt; t++)
			m->sol.values[t] = k->params[s->tids[t]].value;
		m->sol.source = CT_SELECT_FILE;
		return CT_OK;
	}
	/* no record: the model ranks the space at these sizes */
	kept kp;
	keep_params(k, &kp);
	ct_status st = CT_OK;
	for (int i = 0; i < s->nsizes && !st; i++)
		st = ct_kernel_set_param(k, k->params[s->size_ids[i]].name, sizes[i]);
	if (!st)
		st = tune_model_best(k, s->tids, s->nt, 256, m->sol.values);
	put_back(k, &kp);
	m->sol.source = CT_SELECT_MODEL;
	return st;
}

static int64_t contiguous_at(const ir_array *a, const int64_t *full, const int64_t *off,
                             const int64_t *ext);
static void extents(const ir_array *a, const int64_t *vals, int64_t *out);

/* Elements that cutting size param p at main copies (gather, and scatter for
 * outputs): the arrays whose main block is not contiguous. */
static double cut_copies(const ct_kernel *k, const int64_t *full, int p, int64_t main)
{
	int64_t part[MAX_P], off[IR_MAX_RANK] = {0};
	memcpy(part, full, sizeof part);
	part[p] = main;
	double n = 0;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		int64_t fe[IR_MAX_RANK], pe[IR_MAX_RANK];
		extents(ar, full, fe);
		extents(ar, part, pe);
		if (contiguous_at(ar, fe, off, pe) >= 0)
			continue;
		double e = 1;
		for (int d = 0; d < ar->rank; d++)
			e *= (double)fe[d];
		n += e * (ar->role == CT_OUTPUT || ar->role == CT_INOUT ? 2 : 1);
	}
	return n;
}

/* Whether k runs whole on a device (its target is not a host C entry:
 * plan(target=opencl), plan(target=cuda)): the selector chooses its values,
 * the target's engine runs it (ct_kernel_run), never the host pieces. */
static bool runs_whole(const ct_kernel *k)
{
	return !ir_kernel_target(k)->native_entry;
}

/* Cut the problem: along every cut size whose tile does not divide it, a
 * main part (the multiples) and a tail; the pieces are the products. */
static ct_status make_pieces(ct_selector *s, const int64_t *sizes, double flops, memo *m)
{
	const ct_kernel *k = s->k;
	int64_t full[MAX_P] = {0};
	for (int i = 0; i < k->nparams; i++)
		full[i] = k->params[i].value;
	for (int i = 0; i < s->nsizes; i++)
		full[s->size_ids[i]] = sizes[i];
	for (int t = 0; t < s->nt; t++)
		full[s->tids[t]] = m->sol.values[t];
	int cuts[CT_SELECT_MAX_PARAMS], ncuts = 0;
	/* a device's kernel runs whole on its device (ct_kernel_run_selected); the
	 * file's values run whole, as with every value set */
	for (int t = 0; t < s->nt && !runs_whole(k) && m->sol.source != CT_SELECT_FILE; t++) {
		int p = s->cut[t];
		if (p < 0 || full[p] <= m->sol.values[t] || full[p] % m->sol.values[t] == 0 || ncuts == 6)
			continue;
		/* a cut whose blocks must be copied pays only when the copies are
		 * small next to the work (docs/TUNE.md); else the kernel's own tail
		 * loops do the rest */
		int64_t main = full[p] / m->sol.values[t] * m->sol.values[t];
		if (cut_copies(k, full, p, main) * 100 > flops)
			continue;
		cuts[ncuts++] = t;
	}
	int n = 1 << ncuts;
	m->pieces = calloc((size_t)n, sizeof *m->pieces);
	m->entries = calloc((size_t)n, sizeof *m->entries);
	if (!m->pieces || !m->entries)
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	/* piece b: bit c set = the tail along cut c; 0 (all main) first */
	for (int b = 0; b < n; b++) {
		ct_select_piece *pc = &m->pieces[b];
		memcpy(pc->value, full, sizeof full);
		for (int c = 0; c < ncuts; c++) {
			int t = cuts[c], p = s->cut[t];
			int64_t main = full[p] / m->sol.values[t] * m->sol.values[t];
			if (b >> c & 1) {
				pc->offset[p] = main;
				pc->value[p] = full[p] - main;
			} else {
				pc->value[p] = main;
			}
		}
	}
	m->sol.npieces = n;
	m->sol.pieces = m->pieces;
	return CT_OK;
}

static uint64_t sizes_hash(const int64_t *sizes, int n)
{
	return XXH3_64bits(sizes, sizeof *sizes * (size_t)n);
}

ct_status ct_select(ct_selector *s, const int64_t *sizes, int nsizes, ct_solution *sol)
{
	if (!s || !sol || (nsizes && !sizes))
		return CT_ERR_USAGE;
	if (nsizes != s->nsizes)
		return ct_error(s->k->ctx, CT_ERR_USAGE, "kernel '%s' has %d size params, not %d",
		                s->k->name, s->nsizes, nsizes);
	memo *m = &s->slots[sizes_hash(sizes, nsizes) % MEMO_SLOTS];
	/* the warm path: one hash and one compare */
	if (m->used && memcmp(m->sizes, sizes, sizeof *sizes * (size_t)nsizes) == 0) {
		*sol = m->sol;
		return CT_OK;
	}
	memo_clear(m);
	memcpy(m->sizes, sizes, sizeof *sizes * (size_t)nsizes);
	m->sol.ntuned = s->nt;
	memcpy(m->sol.tuned, s->tids, sizeof s->tids);
	ct_status st = choose(s, sizes, m);
	double flops = 0;
	if (!st) {
		/* the work at these sizes, to weigh the copies of a cut against */
		kept kp;
		keep_params(s->k, &kp);
		for (int i = 0; i < s->nsizes && !st; i++)
			st = ct_kernel_set_param(s->k, s->k->params[s->size_ids[i]].name, sizes[i]);
		if (!st && (st = ct_kernel_recheck(s->k)) == CT_OK)
			flops = ct_kernel_flops(s->k);
		put_back(s->k, &kp);
	}
	if (!st)
		st = make_pieces(s, sizes, flops, m);
	if (st) {
		memo_clear(m);
		return st;
	}
	m->sol.size_class = m->size_class;
	m->used = true;
	*sol = m->sol;
	return CT_OK;
}

/* ------------------------------------------------------------ running */

/* Copy the block (off, ext) of array a (full extents full[]) between the
 * array's buffer and a dense buffer of the block, in the array's layout. */
static void copy_block(const ir_array *a, size_t es, char *arr, char *blk, const int64_t *full,
                       const int64_t *off, const int64_t *ext, bool to_block)
{
	int r = a->rank;
	int64_t idx[IR_MAX_RANK] = {0};
	int inner = a->order[r - 1];
	size_t run = (size_t)ext[inner] * es;
	int64_t nblk = 1;
	for (int d = 0; d < r; d++)
		nblk *= ext[d];
	if (nblk == 0)
		return;
	for (int64_t done = 0; done < nblk; done += ext[inner]) {
		/* linear offsets in layout order */
		int64_t ao = 0, bo = 0;
		for (int q = 0; q < r; q++) {
			int d = a->order[q];
			ao = ao * full[d] + off[d] + idx[d];
			bo = bo * ext[d] + idx[d];
		}
		if (to_block)
			memcpy(blk + (size_t)bo * es, arr + (size_t)ao * es, run);
		else
			memcpy(arr + (size_t)ao * es, blk + (size_t)bo * es, run);
		for (int q = r - 2; q >= 0; q--) {
			int d = a->order[q];
			if (++idx[d] < ext[d])
				break;
			idx[d] = 0;
		}
	}
}

/* Where array a's block starts when it is contiguous (the first cut dim in
 * layout order is preceded by dims of extent 1 and followed by full ones),
 * else -1. */
static int64_t contiguous_at(const ir_array *a, const int64_t *full, const int64_t *off,
                             const int64_t *ext)
{
	int q0 = -1;
	for (int q = 0; q < a->rank; q++) {
		int d = a->order[q];
		if (ext[d] != full[d] || off[d] != 0) {
			if (q0 >= 0)
				return -1;
			q0 = q;
		}
	}
	for (int q = 0; q < q0; q++)
		if (full[a->order[q]] != 1)
			return -1;
	int64_t o = 0;
	for (int q = 0; q < a->rank; q++) {
		int d = a->order[q];
		o = o * full[d] + off[d];
	}
	return o;
}

/* Extents of array a with params vals[] (its extents are affine in params). */
static void extents(const ir_array *a, const int64_t *vals, int64_t *out)
{
	bool ok = true;
	for (int d = 0; d < a->rank; d++)
		out[d] = aff_eval(a->ext[d], vals, NULL, &ok);
}

/* Offsets of array a's block in a piece: a P dim starts at the piece's offset of P. */
static void offsets(const ir_array *a, const ct_select_piece *pc, int64_t *out)
{
	for (int d = 0; d < a->rank; d++) {
		aff e = a->ext[d];
		out[d] = e.c == 0 && e.n == 1 && e.t[0].kind == AFF_PARAM && e.t[0].coef == 1 ? pc->offset[e.t[0].id] : 0;
	}
}

static ct_status run_piece(ct_selector *s, const ct_solution *sol, int i, void *const *buffers,
                           const int64_t *full_vals, memo *m)
{
	ct_kernel *k = s->k;
	const ct_select_piece *pc = &sol->pieces[i];
	entry_fn fn = m ? m->entries[i] : NULL;
	ct_status st = CT_OK;
	if (!fn) {
		const char *how = "memory";
		double secs = 0;
		kept kp;
		keep_params(k, &kp);
		for (int i2 = 0; i2 < s->nsizes && !st; i2++)
			st = ct_kernel_set_param(k, k->params[s->size_ids[i2]].name, pc->value[s->size_ids[i2]]);
		for (int t = 0; t < s->nt && !st; t++)
			st = ct_kernel_set_param(k, k->params[s->tids[t]].name, pc->value[s->tids[t]]);
		if (!st)
			st = ct_kernel_recheck(k);
		void (*set_threads)(int) = NULL;
		if (!st)
			st = native_entry_load(k, &fn, &set_threads, &how, &secs);
		if (st) {
			put_back_keep_error(k, &kp);
			return st;
		}
		put_back(k, &kp);
		if (set_threads && k->ctx->threads > 0)
			set_threads((int)k->ctx->threads);
		if (m)
			m->entries[i] = fn;
		/* the run reports the slowest way any piece was loaded */
		static const char *const ways[] = {"memory", "disk", "compiled"};
		for (int w = 0; w < 3; w++)
			if (strcmp(how, ways[w]) == 0 && w > s->load_rank)
				s->load_rank = w;
		s->compile_seconds += secs;
	}
	void *args[256];
	void *owned[256] = {0};
	if (k->narrays > 256)
		return ct_error(k->ctx, CT_ERR_LIMIT, "too many arrays for the selector");
	for (int a = 0; a < k->narrays && !st; a++) {
		const ir_array *ar = &k->arrays[a];
		int64_t full[IR_MAX_RANK], ext[IR_MAX_RANK], off[IR_MAX_RANK];
		extents(ar, full_vals, full);
		extents(ar, pc->value, ext);
		offsets(ar, pc, off);
		size_t es = ct_dtype_size(ar->type);
		if (ar->role == CT_TEMP || !buffers[a]) {
			args[a] = NULL;
			continue;
		}
		int64_t at = contiguous_at(ar, full, off, ext);
		if (at >= 0) {
			args[a] = (char *)buffers[a] + (size_t)at * es;
			continue;
		}
		int64_t n = 1;
		for (int d = 0; d < ar->rank; d++)
			n *= ext[d];
		owned[a] = malloc((size_t)(n > 0 ? n : 1) * es);
		if (!owned[a]) {
			st = ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
			break;
		}
		copy_block(ar, es, buffers[a], owned[a], full, off, ext, true);
		args[a] = owned[a];
	}
	/* the piece's param values and, for strided arrays, the layout of the
	 * block each gets (dense in the piece's extents: a contiguous block of
	 * the caller's dense array, or the copy), in the entry's one layout */
	int64_t pv_s[512];
	int np = entry_param_count(k);
	int64_t *pv = np <= 512 ? pv_s : malloc(sizeof *pv * (size_t)np);
	if (!st && !pv)
		st = ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	if (!st) {
		entry_args_fill(k, (void *const *)args, pc->value, NULL, args, pv);
		int rc = fn((void *const *)args, pv);
		if (rc != 0)
			st = gen_status_error(k, rc);
	}
	if (pv != pv_s)
		free(pv);
	for (int a = 0; a < k->narrays; a++) {
		if (!owned[a])
			continue;
		const ir_array *ar = &k->arrays[a];
		if (!st && (ar->role == CT_OUTPUT || ar->role == CT_INOUT)) {
			int64_t full[IR_MAX_RANK], ext[IR_MAX_RANK], off[IR_MAX_RANK];
			extents(ar, full_vals, full);
			extents(ar, pc->value, ext);
			offsets(ar, pc, off);
			copy_block(ar, ct_dtype_size(ar->type), buffers[a], owned[a], full, off, ext, false);
		}
		free(owned[a]);
	}
	return st;
}

ct_status ct_solution_run(ct_selector *s, const ct_solution *sol, void *const *buffers)
{
	if (!s || !sol || !buffers)
		return CT_ERR_USAGE;
	if (runs_whole(s->k)) /* the pieces are host code: never run them in the device's place */
		return ct_error(s->k->ctx, CT_ERR_UNSUPPORTED,
				"kernel '%s' targets %s: ct_solution_run runs host code only "
				"(ct_kernel_run_selected runs it on the device)",
				s->k->name, ir_kernel_target(s->k)->title);
	/* the full problem's values: piece 0 spans it where nothing is cut */
	int64_t full[MAX_P];
	const ct_select_piece *p0 = &sol->pieces[0];
	memcpy(full, p0->value, sizeof full);
	for (int i = 0; i < s->k->nparams; i++)
		for (int j = 0; j < sol->npieces; j++)
			if (sol->pieces[j].offset[i] + sol->pieces[j].value[i] > full[i])
				full[i] = sol->pieces[j].offset[i] + sol->pieces[j].value[i];
	/* the memo entry holding sol keeps the loaded pieces */
	memo *m = NULL;
	for (int i = 0; i < MEMO_SLOTS && !m; i++)
		if (s->slots[i].used && s->slots[i].pieces == sol->pieces)
			m = &s->slots[i];
	for (int i = 0; i < sol->npieces; i++) {
		ct_status st = run_piece(s, sol, i, buffers, full, m);
		if (st)
			return st;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ cachet run */

typedef struct sel_call {
	ct_selector *s;
	const ct_solution *sol;
} sel_call;

static ct_status selected_once(void *ud, void *const *buffers)
{
	const sel_call *c = ud;
	return ct_solution_run(c->s, c->sol, buffers);
}

/* A device's kernel at the selected values: one run of its target's engine
 * (ct_kernel_run) with the tuned params set, k's params put back after. */
static ct_status run_selected_whole(ct_selector *s, const ct_run_options *o, ct_run_result *r,
                                     const ct_solution *sol)
{
	ct_kernel *k = s->k;
	kept kp;
	keep_params(k, &kp);
	ct_status st = CT_OK;
	for (int t = 0; t < s->nt && !st; t++)
		st = ct_kernel_set_param(k, k->params[s->tids[t]].name, sol->values[t]);
	if (!st)
		st = ct_kernel_recheck(k);
	if (!st)
		st = ct_kernel_run(k, o, r);
	if (st)
		put_back_keep_error(k, &kp);
	else
		put_back(k, &kp);
	return st;
}

ct_status ct_kernel_run_selected(ct_selector *s, const ct_run_options *o, ct_run_result *r,
                                 ct_solution *sol)
{
	if (!s || !o || !r || !sol)
		return CT_ERR_USAGE;
	ct_kernel *k = s->k;
	memset(r, 0, sizeof *r);
	/* a device's kernel goes whole to its target's engine ("opencl", "cuda") */
	r->engine = runs_whole(k) ? ir_kernel_target(k)->name : "native";
	r->code_cache = "memory";
	s->load_rank = 0;
	s->compile_seconds = 0;
	r->verified = -1;
	r->mismatch_array = "";
	r->threads = o->threads > 0 ? o->threads : (int)k->ctx->threads;
	if (o->repeat < 1 || o->repeat > 1000000)
		return ct_error(k->ctx, CT_ERR_USAGE, "repeat must be in 1..1000000");
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	if (o->checked) /* its pieces are unchecked code: never pass them off as checked */
		return ct_error(k->ctx, CT_ERR_UNSUPPORTED,
				"checked runs go through ct_kernel_run, not the solution selector");
	if (ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
	ct_status st = run_check_size(k); /* refused before any piece is compiled */
	if (st)
		return st;
	int64_t sizes[MAX_P];
	for (int i = 0; i < s->nsizes; i++)
		sizes[i] = k->params[s->size_ids[i]].value;
	st = ct_select(s, sizes, s->nsizes, sol);
	if (st)
		return st;
	if (runs_whole(k))
		return run_selected_whole(s, o, r, sol);
	int64_t threads = k->ctx->threads;
	if (o->threads > 0)
		k->ctx->threads = o->threads;
	sel_call c = {s, sol};
	/* the first call loads the pieces, untimed: the timed runs are warm */
	double t0 = ct_now();
	run_buffers b;
	st = run_buffers_alloc(k, &b, true);
	if (!st) {
		st = ct_solution_run(s, sol, (void *const *)b.data);
		run_buffers_free(&b);
	}
	(void)t0;
	/* what the first call did: every piece from memory, one from disk, or compiled */
	static const char *const ways[] = {"memory", "disk", "compiled"};
	r->code_cache = ways[s->load_rank];
	r->compile_seconds = s->compile_seconds;
	if (!st)
		st = run_measure(k, o, selected_once, &c, r);
	k->ctx->threads = threads;
	r->threads = r->threads > 0 ? r->threads : 1;
	return st;
}
