/* tiles.c: the Tensor Contraction Engine's tile-size search over the params that size a schedule's
 * splits. */
#include "model/model.h"
#include "model/symbolic.h"
#include "lang/lang.h"
#include "plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * How it works (docs/MODEL.md, "Tile search").
 *
 * The tiles are the compile-time params written as split/tile sizes. Each
 * evaluation of a tiling sets them, re-checks the kernel (which recomputes
 * the steps of the split indices), builds the loop tree and runs the model;
 * results are memoised by tiling. The search:
 *   1. a coarse grid (powers of 2^s up to each tile's bound, plus the bound)
 *      small enough for half the evaluation budget, evaluated in full;
 *   2. keeps the maximal tilings: those where growing any one tile to its
 *      next coarse value adds a reuse partition whose stack distance reaches
 *      some level's capacity (inside one such region larger tiles only
 *      remove misses, so the region's best tiling is on its upper border);
 *   3. refines the best of them by hill climbing, first over the powers of
 *      two and their 1.5x, then in steps of an eighth of the tile;
 *   4. re-analyses the best screened tilings with the full model (the search
 *      screens with a shallow refinement depth, model_analyse_depth), drops
 *      every tiling that a componentwise larger one predicts no worse, and
 *      ranks the rest (misses of the smallest level first, then of the next
 *      ones; ties: larger tiles first).
 * With unknown loop bounds (runtime params without a value) the model runs
 * twice, with those params at two large values; a partition whose distance
 * differs between the runs depends on the bounds and counts as a miss.
 *
 * A kernel with affine loop bounds (issue #31), which the model does not
 * analyse yet, has each tiling counted by the exact simulator instead (as
 * predict does): the counts are exact, there are no partitions, so a tiling
 * is maximal where growing a tile adds misses at some level, and the final
 * re-analysis is skipped (the screening was already exact). Every runtime
 * param needs a value then, and a tiling whose trace passes AFFINE_SIM_MAX
 * accesses stops the search with that message.
 */

#define TL_DEFAULT_EVALS 4096
#define TL_MAX_EVALS (1 << 20)
#define TL_DEFAULT_KEEP 10
#define TL_DEFAULT_BOUND 1024 /* largest tile of an index whose extent is a runtime param */
#define TL_SEEDS 16           /* maximal tilings refined */
#define TL_CLIMB_ROUNDS 64
#define TL_SCREEN_DEPTH 3 /* model refinement depth while searching (model.h) */
#define TL_FINAL_MIN 16   /* best screened tilings re-analysed at full depth: at least */
/* Affine loop bounds (every tiling simulated) without max_evals from the caller: the tilings
 * evaluated are at most what this many seconds of simulation allow, by the time of the
 * kernel's own tiling, and at least TL_SIM_MIN_EVALS. */
#define TL_SIM_SECONDS 20.0
#define TL_SIM_MIN_EVALS 16

/* One searched param. */
typedef struct tl_param {
	int param;     /* k->params id */
	int index;     /* the first index it splits */
	int parent;    /* the tl_param whose tile is this one's window (a split of a split), -1 */
	int64_t bound; /* largest tile tried */
	int nfine;     /* fine grid: powers of two and their 1.5x up to bound, and bound */
	int64_t *fine;
	int ncoarse; /* coarse grid: powers of 2^step up to bound, and bound */
	int64_t *coarse;
} tl_param;

/* What one analysed tiling predicts. */
typedef struct tl_entry {
	bool valid; /* the tiling was analysed (no error) */
	bool exact;
	int64_t misses[SIM_MAX_LEVELS];     /* the model's count (as cachet predict's) */
	int64_t misses_max[SIM_MAX_LEVELS]; /* with every inexact partition whose distance may
	                                    reach the capacity counted as missing: what ranks */
	int64_t over[SIM_MAX_LEVELS];       /* partitions at or beyond the level's capacity */
} tl_entry;

/* A param's state, to restore the kernel afterwards. */
typedef struct tl_saved {
	int64_t value;
	bool has_value, overridden;
} tl_saved;

typedef struct tl_search {
	ct_kernel *k;
	ct_ctx *ctx;
	sim_spec spec;
	int order[SIM_MAX_LEVELS]; /* levels by size, the ranking order */
	int n;                     /* tile params */
	tl_param *p;
	int nrt; /* runtime params without a value */
	int *rt;
	int64_t probe[2];
	int coarse_step; /* the coarse grid's ratio is 2^coarse_step */
	tl_saved *saved; /* [k->nparams] */
	/* memo of analysed tilings */
	int max_evals;
	int nent;
	int64_t *tiles; /* [max_evals * n] */
	tl_entry *ent;  /* [max_evals] */
	int hcap;       /* power of two */
	int *hash;      /* entry number, -1 empty */
	int64_t evaluated;
	ct_status fatal;     /* out of memory and the like: stop */
	ct_status first_err; /* first failed tiling, reported if none works */
	char first_msg[1024];
	int64_t *work; /* [3 * n] scratch tilings */
	bool simulate;       /* affine loop bounds: the exact simulator counts each tiling */
	bool evals_given;    /* the caller set max_evals (else simulate sizes it) */
	char fatal_msg[1024]; /* the message of s->fatal (restore_kernel's re-check clears the ctx's) */
	double sim_seconds;  /* time of those simulations */
	int64_t accesses;    /* the last simulated tiling's trace length */
} tl_search;

/* ------------------------------------------------------------ finding the tiles */

/* True when expression e names param p anywhere (subscripts as written included). */
static bool expr_uses_param(const ct_kernel *k, const ir_expr *e, int p)
{
	if (!e)
		return false;
	if (e->kind == EX_PARAM && e->id == p)
		return true;
	if (e->kind == EX_ACCESS && e->sub_expr && e->id >= 0 && e->id < k->narrays)
		for (int d = 0; d < k->arrays[e->id].rank; d++)
			if (expr_uses_param(k, e->sub_expr[d], p))
				return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_uses_param(k, e->args[i], p))
			return true;
	return false;
}

/* True when a statement, let or condition under body[0..n-1] names param p. */
static bool body_uses_param(const ct_kernel *k, ir_node *const *body, int n, int p)
{
	for (int i = 0; i < n; i++) {
		const ir_node *s = body[i];
		if (expr_uses_param(k, s->lhs, p) || expr_uses_param(k, s->rhs, p) ||
		    expr_uses_param(k, s->cond, p))
			return true;
		if (body_uses_param(k, s->body, s->nbody, p) ||
		    body_uses_param(k, s->els, s->nels, p))
			return true;
	}
	return false;
}

/* Whether a bound of loop x names param p (an affine loop's every min/max term included). */
static bool loop_names_param(const ir_index *ix, int p)
{
	if (aff_coef(ix->lo, AFF_PARAM, p) != 0 || aff_coef(ix->hi, AFF_PARAM, p) != 0)
		return true;
	for (int j = 0; j < ix->nlo + ix->nhi; j++)
		if (aff_coef(j < ix->nlo ? ix->los[j] : ix->his[j - ix->nlo], AFF_PARAM, p) != 0)
			return true;
	return false;
}

/* True when param p sizes something besides splits (an extent, a loop bound, a value or
 * subscript of the logic): changing it would change what the kernel computes. */
static bool param_sizes_problem(const ct_kernel *k, int p)
{
	for (int a = 0; a < k->narrays; a++)
		for (int d = 0; d < k->arrays[a].rank; d++)
			if (aff_coef(k->arrays[a].ext[d], AFF_PARAM, p) != 0)
				return true;
	for (int x = 0; x < k->nindices; x++) {
		const ir_index *ix = &k->indices[x];
		if (ix->kind == IX_LOOP && loop_names_param(ix, p))
			return true;
	}
	return body_uses_param(k, k->body, k->nbody, p);
}

/* The param that is the step of loop x as written (`for (t: 0 .. N step TA)`), or -1 when the
 * step is not one compile-time param on its own. */
static int step_param(const ct_kernel *k, int x)
{
	const ir_expr *e = k->indices[x].step_expr;
	if (!e || e->kind != EX_PARAM || e->id < 0 || e->id >= k->nparams || k->params[e->id].runtime)
		return -1;
	return e->id;
}

/* Whether bound b is param p alone (`for (a0: TA)`). */
static bool is_param(aff b, int p)
{
	return b.c == 0 && b.n == 1 && b.t[0].kind == AFF_PARAM && b.t[0].id == p && b.t[0].coef == 1;
}

/* Whether loop x is an intra-tile loop of step param p: it starts at 0 and ends at p, or at
 * the min of p and terms that do not name p (`for (a0: 0 .. min(TA, V - at))`). */
static bool intra_tile_loop(const ir_index *x, int p)
{
	if (!ir_index_affine(x))
		return aff_coef(x->lo, AFF_PARAM, p) == 0 && x->lo.n == 0 && x->lo.c == 0 && is_param(x->hi, p);
	int own = 0;
	for (int j = 0; j < x->nlo; j++)
		if (aff_coef(x->los[j], AFF_PARAM, p) != 0)
			return false;
	if (x->nlo != 1 || x->los[0].n != 0 || x->los[0].c != 0)
		return false;
	for (int j = 0; j < x->nhi; j++) {
		if (is_param(x->his[j], p))
			own++;
		else if (aff_coef(x->his[j], AFF_PARAM, p) != 0)
			return false;
	}
	return own == 1;
}

/* Whether the loops that name step param p are the stepped loops' inner tiles only (and temp
 * arrays, which may be one tile): a tiling of a nest written with `step` (the Tensor
 * Contraction Engine's fused tiles), where p is the width of a tile and every value of p
 * computes the same (the search still checks each
 * tiling: a width that does not divide a range without `min` fails the bounds proof and is
 * skipped). */
static bool step_param_tiles(const ct_kernel *k, int p)
{
	for (int a = 0; a < k->narrays; a++) /* a temp may be one tile (the fused intermediate) */
		for (int d = 0; d < k->arrays[a].rank; d++)
			if (aff_coef(k->arrays[a].ext[d], AFF_PARAM, p) != 0 && k->arrays[a].role != CT_TEMP)
				return false;
	for (int x = 0; x < k->nindices; x++) {
		const ir_index *ix = &k->indices[x];
		if (ix->kind == IX_LOOP && loop_names_param(ix, p) && !intra_tile_loop(ix, p))
			return false;
	}
	return !body_uses_param(k, k->body, k->nbody, p);
}

/* The param that sizes split (a of sched s) as written, or -1 when the size is not one
 * compile-time param on its own. */
static int split_size_param(const ct_kernel *k, const ir_sched *sc, int a)
{
	const ir_expr *e = sc->size_expr ? sc->size_expr[a] : NULL;
	if (!e || e->kind != EX_PARAM || e->id < 0 || e->id >= k->nparams ||
	    k->params[e->id].runtime)
		return -1;
	return e->id;
}

/* Position of param p in s->p, or -1. */
static int tl_find(const tl_search *s, int p)
{
	for (int i = 0; i < s->n; i++)
		if (s->p[i].param == p)
			return i;
	return -1;
}

/* Collect the tile params in order of first appearance in the schedule (each param once),
 * then the steps of loops written with one, in source order. */
static ct_status find_tile_params(tl_search *s)
{
	const ct_kernel *k = s->k;
	int cap = k->nindices;
	for (int i = 0; i < k->nsched; i++)
		if (k->sched[i].kind != SC_REORDER)
			cap += k->sched[i].n;
	s->p = ct_alloc(s->ctx, sizeof *s->p * (size_t)(cap + 1));
	if (!s->p)
		return CT_ERR_NOMEM;
	for (int i = 0; i < k->nsched; i++) {
		const ir_sched *sc = &k->sched[i];
		if (sc->kind == SC_REORDER)
			continue;
		for (int a = 0; a < sc->n; a++) {
			int p = split_size_param(k, sc, a);
			if (p < 0 || tl_find(s, p) >= 0 || param_sizes_problem(k, p))
				continue;
			tl_param *t = &s->p[s->n++];
			t->param = p;
			t->index = sc->idx[a];
			t->parent = -1;
		}
	}
	for (int x = 0; x < k->nindices; x++) {
		int p = step_param(k, x);
		if (p < 0 || tl_find(s, p) >= 0 || !step_param_tiles(k, p))
			continue;
		tl_param *t = &s->p[s->n++];
		t->param = p;
		t->index = x;
		t->parent = -1;
	}
	return CT_OK;
}

/* Extent of index x if known now (compile-time, or runtime params given a value), else -1;
 * for an affine loop, the extent of its box (its longest range). */
static int64_t index_extent(const ct_kernel *k, int x)
{
	const ir_index *ix = &k->indices[x];
	if (ix->kind == IX_SPLIT)
		return ix->window;
	ir_box *b = ct_alloc(k->ctx, sizeof *b * ((size_t)k->nindices + 1));
	if (!b)
		return -1;
	int64_t ext = -1;
	if (ir_index_boxes(k, b) < 0 && b[x].known)
		ext = b[x].hi > b[x].lo ? b[x].hi - b[x].lo : 1;
	ct_free(k->ctx, b);
	return ext;
}

/* The tile param whose split made index x (x is the inner index of that split), or -1. */
static int window_param(const tl_search *s, int x)
{
	const ct_kernel *k = s->k;
	for (int i = 0; i < k->nsched; i++) {
		const ir_sched *sc = &k->sched[i];
		if (sc->kind == SC_REORDER)
			continue;
		for (int a = 0; a < sc->n; a++)
			if (sc->out[a] == x) {
				int p = split_size_param(k, sc, a);
				return p < 0 ? -1 : tl_find(s, p);
			}
	}
	return -1;
}

/* Bound and parent of every tile param: the smallest extent of the indices it splits (a split
 * of a split index is bounded by the outer tile instead), capped by max_tile. */
static void set_bounds(tl_search *s, int64_t max_tile)
{
	const ct_kernel *k = s->k;
	for (int i = 0; i < s->n; i++) {
		tl_param *t = &s->p[i];
		int64_t bound = -1;
		for (int j = 0; j < k->nsched; j++) {
			const ir_sched *sc = &k->sched[j];
			for (int a = 0; sc->kind != SC_REORDER && a < sc->n; a++) {
				if (split_size_param(k, sc, a) != t->param)
					continue;
				int x = sc->idx[a], q = -1;
				if (k->indices[x].kind == IX_SPLIT)
					q = window_param(s, x);
				if (q >= 0 && q != i) {
					t->parent = q;
					continue;
				}
				int64_t e = index_extent(k, x);
				if (e > 0 && (bound < 0 || e < bound))
					bound = e;
			}
		}
		for (int x = 0; x < k->nindices; x++) { /* loops it steps: their ranges */
			int64_t e = step_param(k, x) == t->param ? index_extent(k, x) : -1;
			if (e > 0 && (bound < 0 || e < bound))
				bound = e;
		}
		if (bound < 0)
			bound = max_tile > 0 ? max_tile : TL_DEFAULT_BOUND;
		else if (max_tile > 0 && max_tile < bound)
			bound = max_tile;
		t->bound = bound;
	}
	/* a nested tile never needs to exceed its outer tile's bound */
	for (int i = 0; i < s->n; i++)
		if (s->p[i].parent >= 0 && s->p[s->p[i].parent].bound < s->p[i].bound)
			s->p[i].bound = s->p[s->p[i].parent].bound;
}

/* ------------------------------------------------------------ grids */

/* Values v with v = 2^e (e a multiple of step) or, when fine, also 1.5 * 2^e, below bound;
 * then bound. Writes at most 130 values into out; returns the count. */
static int grid_values(int64_t bound, int step, bool fine, int64_t *out)
{
	int n = 0;
	for (int e = 0; e < 62; e += step) {
		int64_t v = (int64_t)1 << e;
		if (v >= bound)
			break;
		out[n++] = v;
		if (fine && e >= 1 && v + v / 2 < bound)
			out[n++] = v + v / 2;
	}
	out[n++] = bound;
	return n;
}

/* Fill each param's fine grid and the coarsest-needed coarse grid: the smallest step s with
 * a coarse product within half the evaluation budget (at worst the bounds alone). */
static ct_status make_grids(tl_search *s)
{
	for (int i = 0; i < s->n; i++) {
		tl_param *t = &s->p[i];
		t->fine = ct_alloc(s->ctx, sizeof *t->fine * 132);
		t->coarse = ct_alloc(s->ctx, sizeof *t->coarse * 132);
		if (!t->fine || !t->coarse)
			return CT_ERR_NOMEM;
		t->nfine = grid_values(t->bound, 1, true, t->fine);
	}
	for (int step = 1; step <= 63; step++) {
		double product = 1;
		for (int i = 0; i < s->n; i++) {
			tl_param *t = &s->p[i];
			t->ncoarse = step < 63 ? grid_values(t->bound, step, false, t->coarse) : 1;
			if (step == 63)
				t->coarse[0] = t->bound;
			product *= t->ncoarse;
		}
		s->coarse_step = step;
		if (product <= s->max_evals / 2)
			break;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ evaluating one tiling */

static uint64_t tiles_hash(const int64_t *t, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)t[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

/* Slot of tiling t in the memo's hash (its entry or an empty slot). */
static int memo_slot(const tl_search *s, const int64_t *t)
{
	uint64_t mask = (uint64_t)s->hcap - 1;
	uint64_t h = tiles_hash(t, s->n) & mask;
	while (s->hash[h] >= 0 && memcmp(&s->tiles[(size_t)s->hash[h] * (size_t)s->n], t,
	                                 sizeof *t * (size_t)s->n) != 0)
		h = (h + 1) & mask;
	return (int)h;
}

/* Set the tiles (and re-check, which recomputes the split steps). */
static ct_status apply_tiles(tl_search *s, const int64_t *t)
{
	for (int i = 0; i < s->n; i++) {
		ir_param *q = &s->k->params[s->p[i].param];
		q->value = t[i];
		q->has_value = true;
		q->overridden = true;
	}
	return lang_recheck(s->k);
}

/* Give every unknown runtime param the value v. */
static void set_runtime(tl_search *s, int64_t v)
{
	for (int i = 0; i < s->nrt; i++) {
		s->k->params[s->rt[i]].value = v;
		s->k->params[s->rt[i]].has_value = true;
	}
}

static bool same_key(const model_part *a, const model_part *b)
{
	return a->array == b->array && a->kind == b->kind && a->delta == b->delta &&
	       a->node == b->node;
}

/* dep[i] = partition i of a has no partner of the same distance in b (the same key
 * (array, kind, delta, node), in the same order among the partitions of that key): its
 * distance depends on the unknown bounds. */
static void mark_dependent(const model_lines *a, const model_lines *b, bool *dep)
{
	bool aligned = b && a->nparts == b->nparts;
	for (int i = 0; aligned && i < a->nparts; i++)
		aligned = same_key(&a->parts[i], &b->parts[i]);
	for (int i = 0; i < a->nparts; i++) {
		const model_part *pa = &a->parts[i];
		const model_part *pb = NULL;
		if (aligned) {
			pb = &b->parts[i];
		} else if (b) {
			int occ = 0;
			for (int j = 0; j < i; j++)
				occ += same_key(&a->parts[j], pa);
			for (int j = 0; j < b->nparts && !pb; j++)
				if (same_key(&b->parts[j], pa) && occ-- == 0)
					pb = &b->parts[j];
		}
		dep[i] = pa->kind != MR_COLD && (!pb || pb->distance != pa->distance);
	}
}

/* Misses (the model's count and its upper bound) and partitions over capacity of each level
 * from analysis a (and, with unknown bounds, b: partitions whose distance differs count as
 * misses and as over capacity). */
static ct_status count_levels(tl_search *s, const model_result *a, const model_result *b,
                              tl_entry *e)
{
	e->exact = true;
	for (int l = 0; l < s->spec.nlevels; l++) {
		const sim_level *lv = &s->spec.level[l];
		const model_lines *ml = model_for_line(a, lv->line);
		if (!ml)
			return ct_error(s->ctx, CT_ERR_USAGE,
			                "the model gave no partitions for line size %lld",
			                (long long)lv->line);
		int64_t lines = lv->size / lv->line;
		bool ex = true;
		e->misses[l] = model_misses(ml, lines, -1, &ex);
		e->exact = e->exact && ex;
		bool *dep = NULL;
		if (b && ml->nparts > 0) {
			dep = ct_alloc(s->ctx, sizeof *dep * (size_t)ml->nparts);
			if (!dep)
				return CT_ERR_NOMEM;
			mark_dependent(ml, model_for_line(b, lv->line), dep);
		}
		e->over[l] = 0;
		for (int i = 0; i < ml->nparts; i++) {
			const model_part *p = &ml->parts[i];
			if (p->kind == MR_COLD || p->count <= 0)
				continue;
			bool forced = dep && dep[i];
			if (forced && p->distance < lines)
				e->misses[l] += p->count;
			else if (p->distance < lines && p->distance_hi >= lines)
				e->misses_max[l] += p->count;
			if (forced || p->distance >= lines)
				e->over[l]++;
		}
		e->misses_max[l] += e->misses[l];
		ct_free(s->ctx, dep);
	}
	return CT_OK;
}

/* A polynomial of the formulas that names a runtime param. */
static bool names_params(const sym_poly *p)
{
	for (int i = 0; i < p->n; i++)
		for (int v = 0; v < SYM_MAXV; v++)
			if (p->t[i].e[v])
				return true;
	return false;
}

/* With unknown bounds, the papers' rule read off the formulas (symbolic.c) where the tiling's
 * nest is in their class: a reuse class whose stack distance depends on the runtime params
 * counts as missing and over the capacity, a bound-free one as its distance says (one that
 * straddles the capacity only in misses_max). The counts are the polynomials' values at the
 * probe (rounded: off the formulas' lattice they rank, they do not predict). False (e
 * untouched) where some level has no formula: the probes decide then. */
static bool count_symbolic(tl_search *s, ct_looptree *tree, tl_entry *e)
{
	sym_result r;
	if (sym_analyse(tree, &s->spec, &r) != CT_OK) {
		ct_ctx_clear_error(s->ctx);
		return false;
	}
	bool ok = !r.why;
	int64_t vals[SYM_MAXV];
	for (int v = 0; v < r.nvars; v++)
		vals[v] = s->probe[0];
	for (int l = 0; ok && l < s->spec.nlevels; l++)
		ok = !sym_level_why(&r, l) && !sym_level_setassoc(&r, l);
	for (int l = 0; ok && l < r.nloops; l++)
		ok = sym_poly_value(&r.trip[l], vals) >= 1;
	tl_entry x;
	memset(&x, 0, sizeof x);
	x.exact = true;
	for (int l = 0; ok && l < s->spec.nlevels; l++) {
		const sim_level *lv = &s->spec.level[l];
		double C = (double)(lv->size / lv->line);
		const sym_lines *L = NULL;
		for (int i = 0; i < r.nlines; i++)
			if (r.lines[i].line == lv->line)
				L = &r.lines[i];
		for (int i = 0; L && i < L->n; i++) {
			const sym_reuse *c = &L->r[i];
			int64_t n = llround(sym_poly_value(&c->count, vals));
			if (n <= 0)
				continue;
			if (c->kind == SYM_COLD) {
				x.misses[l] += n;
				continue;
			}
			if (names_params(&c->dlo) || names_params(&c->dhi) ||
			    sym_poly_value(&c->dlo, vals) >= C) {
				x.misses[l] += n;
				x.over[l]++;
			} else if (sym_poly_value(&c->dhi, vals) >= C) {
				x.misses_max[l] += n;
				x.exact = false;
			}
		}
		x.misses_max[l] += x.misses[l];
	}
	sym_result_free(&r);
	if (ok)
		*e = x;
	return ok;
}

/* The exact simulator's counts of tree (affine loop bounds) into e: exact, and each level's
 * misses stand for its partitions over capacity (is_maximal: growing a tile that adds misses). */
static ct_status simulate_tiling(tl_search *s, ct_looptree *tree, tl_entry *e)
{
	affine_sim a;
	ct_status st = affine_simulate(tree, &s->spec, AFFINE_SIM_MAX, "the tile search (per tiling)", 0, &a);
	if (!st) {
		e->exact = true;
		for (int l = 0; l < s->spec.nlevels; l++)
			e->misses[l] = e->misses_max[l] = e->over[l] = a.misses[l];
		s->sim_seconds += a.seconds;
		s->accesses = a.accesses;
	}
	affine_sim_free(&a);
	return st;
}

/* Build tiling t's loop tree and run the model at refinement depth `depth` (twice with unknown
 * bounds), or with affine loop bounds the simulator, into e. A failure is the tiling's own
 * (status returned, e invalid). */
static ct_status analyse_tiling(tl_search *s, const int64_t *t, int depth, tl_entry *e)
{
	memset(e, 0, sizeof *e);
	ct_status st = apply_tiles(s, t);
	if (st)
		return st;
	ct_looptree *tree = plan_lower(s->k, true);
	if (!tree)
		return ct_ctx_last_status(s->ctx) ? ct_ctx_last_status(s->ctx) : CT_ERR_NOMEM;
	if (s->simulate) {
		st = simulate_tiling(s, tree, e);
		e->valid = st == CT_OK;
		ct_looptree_free(tree);
		return st;
	}
	if (s->nrt > 0 && count_symbolic(s, tree, e)) {
		e->valid = true;
		ct_looptree_free(tree);
		return CT_OK;
	}
	model_result a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	st = model_analyse_depth(tree, &s->spec, depth, &a);
	if (!st && s->nrt > 0) {
		set_runtime(s, s->probe[1]);
		st = model_analyse_depth(tree, &s->spec, depth, &b);
		set_runtime(s, s->probe[0]);
	}
	if (!st)
		st = count_levels(s, &a, s->nrt > 0 ? &b : NULL, e);
	e->valid = st == CT_OK;
	model_result_free(&a);
	model_result_free(&b);
	ct_looptree_free(tree);
	return st;
}

/* Remember the first failure of a tiling (its message), then forget it on the ctx. A trace
 * too long to simulate (affine bounds) stops the search: the next tilings' are as long, and
 * each would take the simulator's whole limit to find out. */
static void note_failure(tl_search *s, ct_status st, const int64_t *t)
{
	if (st == CT_ERR_NOMEM) {
		s->fatal = st;
		return;
	}
	if (st == CT_ERR_LIMIT && s->simulate) {
		char msg[900];
		snprintf(msg, sizeof msg, "%s", ct_ctx_last_message(s->ctx));
		char tiling[120] = "";
		size_t len = 0;
		for (int i = 0; i < s->n && len < sizeof tiling; i++) {
			int w = snprintf(tiling + len, sizeof tiling - len, "%s%s=%lld", i ? ", " : "",
			                 s->k->params[s->p[i].param].name, (long long)t[i]);
			if (w < 0)
				break;
			len += (size_t)w;
		}
		s->fatal = ct_error(s->ctx, CT_ERR_LIMIT, "the tile search stopped at the tiling %s: %s", tiling,
		                    msg);
		snprintf(s->fatal_msg, sizeof s->fatal_msg, "%s", ct_ctx_last_message(s->ctx));
		return;
	}
	if (!s->first_err) {
		s->first_err = st;
		const char *m = ct_ctx_diag_count(s->ctx) > 0 ? ct_ctx_diag_render(s->ctx, 0)
		                                              : ct_ctx_last_message(s->ctx);
		snprintf(s->first_msg, sizeof s->first_msg, "%s", m ? m : "");
	}
	ct_ctx_clear_error(s->ctx);
}

/* True when tiling t respects the nesting of split chains (an inner tile is at most its
 * outer tile). */
static bool nesting_ok(const tl_search *s, const int64_t *t)
{
	for (int i = 0; i < s->n; i++)
		if (s->p[i].parent >= 0 && t[i] > t[s->p[i].parent])
			return false;
	return true;
}

/* The memo entry of tiling t, analysing it first if new. NULL when t breaks the nesting, the
 * budget is spent or the search stopped (s->fatal). */
static const tl_entry *evaluate(tl_search *s, const int64_t *t)
{
	if (s->fatal || !nesting_ok(s, t))
		return NULL;
	int slot = memo_slot(s, t);
	if (s->hash[slot] >= 0)
		return &s->ent[s->hash[slot]];
	if (s->nent >= s->max_evals)
		return NULL;
	int id = s->nent++;
	memcpy(&s->tiles[(size_t)id * (size_t)s->n], t, sizeof *t * (size_t)s->n);
	s->hash[slot] = id;
	s->evaluated++;
	ct_status st = analyse_tiling(s, t, TL_SCREEN_DEPTH, &s->ent[id]);
	if (st)
		note_failure(s, st, t);
	return s->fatal ? NULL : &s->ent[id];
}

/* ------------------------------------------------------------ ranking */

static double tiles_product(const int64_t *t, int n)
{
	double p = 1;
	for (int i = 0; i < n; i++)
		p *= (double)t[i];
	return p;
}

/* < 0 when tiling x (entry ex) ranks before y: fewer misses level by level in ranking order
 * (the upper bound, then the model's count: an uncertain count does not win on its optimistic
 * side), then the larger tiles (product, then lexicographically). */
static int rank_cmp(const tl_search *s, const tl_entry *ex, const int64_t *x, const tl_entry *ey,
                    const int64_t *y)
{
	for (int i = 0; i < s->spec.nlevels; i++) {
		int l = s->order[i];
		if (ex->misses_max[l] != ey->misses_max[l])
			return ex->misses_max[l] < ey->misses_max[l] ? -1 : 1;
		if (ex->misses[l] != ey->misses[l])
			return ex->misses[l] < ey->misses[l] ? -1 : 1;
	}
	double px = tiles_product(x, s->n), py = tiles_product(y, s->n);
	if (px != py)
		return px > py ? -1 : 1;
	for (int i = 0; i < s->n; i++)
		if (x[i] != y[i])
			return x[i] > y[i] ? -1 : 1;
	return 0;
}

static int entry_cmp(const tl_search *s, int a, int b)
{
	return rank_cmp(s, &s->ent[a], &s->tiles[(size_t)a * (size_t)s->n], &s->ent[b],
	                &s->tiles[(size_t)b * (size_t)s->n]);
}

/* Sort entry numbers ids[0..n-1] best first (insertion into halves: a merge sort). */
static void sort_entries(const tl_search *s, int *ids, int *tmp, int n)
{
	if (n < 2)
		return;
	int h = n / 2;
	sort_entries(s, ids, tmp, h);
	sort_entries(s, ids + h, tmp, n - h);
	int i = 0, j = h, o = 0;
	while (i < h && j < n)
		tmp[o++] = entry_cmp(s, ids[j], ids[i]) < 0 ? ids[j++] : ids[i++];
	while (i < h)
		tmp[o++] = ids[i++];
	while (j < n)
		tmp[o++] = ids[j++];
	memcpy(ids, tmp, sizeof *ids * (size_t)n);
}

/* True when entry u dominates entry v: every tile at least as large, no level worse (by the
 * upper bound of its misses). */
static bool dominates(const tl_search *s, int u, int v)
{
	const int64_t *tu = &s->tiles[(size_t)u * (size_t)s->n],
	              *tv = &s->tiles[(size_t)v * (size_t)s->n];
	for (int i = 0; i < s->n; i++)
		if (tu[i] < tv[i])
			return false;
	for (int l = 0; l < s->spec.nlevels; l++)
		if (s->ent[u].misses_max[l] > s->ent[v].misses_max[l])
			return false;
	return true;
}

/* ------------------------------------------------------------ the search */

/* Evaluate the whole coarse grid (an odometer over the coarse values). */
static void coarse_phase(tl_search *s)
{
	int *pos = ct_alloc(s->ctx, sizeof *pos * (size_t)s->n);
	if (!pos) {
		s->fatal = CT_ERR_NOMEM;
		return;
	}
	int64_t *t = s->work;
	for (;;) {
		for (int i = 0; i < s->n; i++)
			t[i] = s->p[i].coarse[pos[i]];
		evaluate(s, t);
		int i = s->n - 1;
		while (i >= 0 && ++pos[i] == s->p[i].ncoarse)
			pos[i--] = 0;
		if (i < 0 || s->fatal || s->nent >= s->max_evals)
			break;
	}
	ct_free(s->ctx, pos);
}

/* True when coarse tiling t (entry e) is maximal for some level: growing any tile to its next
 * coarse value puts one more partition over that level's capacity (or cannot be done). */
static bool is_maximal(tl_search *s, const int64_t *t, const tl_entry *e)
{
	int64_t *u = s->work + s->n;
	for (int l = 0; l < s->spec.nlevels; l++) {
		bool maximal = true;
		for (int i = 0; i < s->n && maximal; i++) {
			const tl_param *p = &s->p[i];
			int c = 0;
			while (c < p->ncoarse && p->coarse[c] != t[i])
				c++;
			if (c + 1 >= p->ncoarse)
				continue;
			memcpy(u, t, sizeof *t * (size_t)s->n);
			u[i] = p->coarse[c + 1];
			const tl_entry *g = evaluate(s, u);
			if (g && g->valid && g->over[l] <= e->over[l])
				maximal = false;
		}
		if (maximal)
			return true;
	}
	return false;
}

/* The values next to v in param i's refinement: in the fine grid (level 0) those within the
 * coarse step of v, or (level 1) v +- 1..3 steps of an eighth of v's power of two. */
static int neighbours(const tl_search *s, int i, int64_t v, int level, int64_t *out)
{
	const tl_param *p = &s->p[i];
	int n = 0;
	if (level == 0) {
		double span = ldexp(1.0, s->coarse_step), fv = (double)v;
		for (int f = 0; f < p->nfine; f++)
			if (p->fine[f] != v && (double)p->fine[f] * span > fv &&
			    (double)p->fine[f] < fv * span)
				out[n++] = p->fine[f];
		return n;
	}
	int64_t g = 1;
	while (g * 16 <= v)
		g *= 2;
	for (int d = -3; d <= 3; d++) {
		int64_t w = v + d * g;
		if (d != 0 && w >= 1 && w <= p->bound)
			out[n++] = w;
	}
	return n;
}

/* Hill-climb from tiling t (in place): move to the best neighbour (one tile changed) while
 * that ranks better. */
static void climb(tl_search *s, int64_t *t, int level)
{
	int64_t *u = s->work + s->n, *best = s->work + 2 * s->n, vals[140];
	const tl_entry *cur = evaluate(s, t);
	if (!cur || !cur->valid)
		return;
	for (int round = 0; round < TL_CLIMB_ROUNDS; round++) {
		const tl_entry *be = cur;
		memcpy(best, t, sizeof *t * (size_t)s->n);
		for (int i = 0; i < s->n; i++) {
			int nv = neighbours(s, i, t[i], level, vals);
			for (int j = 0; j < nv; j++) {
				memcpy(u, t, sizeof *t * (size_t)s->n);
				u[i] = vals[j];
				const tl_entry *g = evaluate(s, u);
				if (g && g->valid && rank_cmp(s, g, u, be, best) < 0) {
					be = g;
					memcpy(best, u, sizeof *u * (size_t)s->n);
				}
			}
		}
		if (be == cur)
			return;
		cur = be;
		memcpy(t, best, sizeof *t * (size_t)s->n);
	}
}

/* Refine the best maximal coarse tilings (all of them ranked, the first TL_SEEDS climbed). */
static void refine_phase(tl_search *s, int *ids, int *tmp)
{
	int ncoarse = s->nent, nseed = 0;
	int64_t *t = ct_alloc(s->ctx, sizeof *t * (size_t)s->n);
	if (!t) {
		s->fatal = CT_ERR_NOMEM;
		return;
	}
	for (int id = 0; id < ncoarse; id++)
		if (s->ent[id].valid &&
		    is_maximal(s, &s->tiles[(size_t)id * (size_t)s->n], &s->ent[id]))
			ids[nseed++] = id;
	sort_entries(s, ids, tmp, nseed);
	if (nseed > TL_SEEDS)
		nseed = TL_SEEDS;
	for (int level = 0; level < 2; level++)
		for (int j = 0; j < nseed && !s->fatal && s->nent < s->max_evals; j++) {
			memcpy(t, &s->tiles[(size_t)ids[j] * (size_t)s->n],
			       sizeof *t * (size_t)s->n);
			climb(s, t, level);
			if (level == 0) {
				int slot = memo_slot(s, t);
				if (s->hash[slot] >= 0)
					ids[j] = s->hash[slot]; /* the finest stage starts where
					                           this one ended */
			}
		}
	ct_free(s->ctx, t);
}

/* Re-analyse the best screened tilings at full depth: the first max(TL_FINAL_MIN, 2 * keep) by
 * the screening's ranking. Their entries get the full counts; ids[0..*n-1] lists those that
 * are still valid. */
static void final_phase(tl_search *s, int *ids, int *tmp, int keep, int *n)
{
	int nvalid = 0, nfinal = keep * 2 > TL_FINAL_MIN ? keep * 2 : TL_FINAL_MIN;
	for (int id = 0; id < s->nent; id++)
		if (s->ent[id].valid)
			ids[nvalid++] = id;
	sort_entries(s, ids, tmp, nvalid);
	if (nfinal > nvalid)
		nfinal = nvalid;
	*n = 0;
	if (s->simulate) { /* the simulator's counts are exact already */
		*n = nfinal;
		return;
	}
	for (int i = 0; i < nfinal && !s->fatal; i++) {
		int id = ids[i];
		const int64_t *t = &s->tiles[(size_t)id * (size_t)s->n];
		ct_status st = analyse_tiling(s, t, MODEL_REFINE_FULL, &s->ent[id]);
		if (st)
			note_failure(s, st, t);
		else
			ids[(*n)++] = id;
	}
}

/* ------------------------------------------------------------ setup, result, cleanup */

/* Levels in ranking order: by size, then as given. */
static void rank_levels(tl_search *s)
{
	for (int l = 0; l < s->spec.nlevels; l++)
		s->order[l] = l;
	for (int i = 1; i < s->spec.nlevels; i++)
		for (int j = i;
		     j > 0 && s->spec.level[s->order[j]].size < s->spec.level[s->order[j - 1]].size;
		     j--) {
			int x = s->order[j];
			s->order[j] = s->order[j - 1];
			s->order[j - 1] = x;
		}
}

/* Save every param (restored by restore_kernel) and list the runtime params without a
 * value, giving them the first probe value. */
static ct_status save_kernel(tl_search *s)
{
	ct_kernel *k = s->k;
	s->saved = ct_alloc(s->ctx, sizeof *s->saved * (size_t)(k->nparams + 1));
	s->rt = ct_alloc(s->ctx, sizeof *s->rt * (size_t)(k->nparams + 1));
	if (!s->saved || !s->rt)
		return CT_ERR_NOMEM;
	for (int i = 0; i < k->nparams; i++) {
		s->saved[i].value = k->params[i].value;
		s->saved[i].has_value = k->params[i].has_value;
		s->saved[i].overridden = k->params[i].overridden;
		if (k->params[i].runtime && !k->params[i].has_value)
			s->rt[s->nrt++] = i;
	}
	set_runtime(s, s->probe[0]);
	return CT_OK;
}

/* Put every param back and re-check (so the split steps are the kernel's own again). */
static void restore_kernel(tl_search *s)
{
	if (!s->saved)
		return;
	ct_kernel *k = s->k;
	for (int i = 0; i < k->nparams; i++) {
		k->params[i].value = s->saved[i].value;
		k->params[i].has_value = s->saved[i].has_value;
		k->params[i].overridden = s->saved[i].overridden;
	}
	if (lang_recheck(k) != CT_OK)
		ct_ctx_clear_error(s->ctx); /* it was valid before the search */
}

static ct_status alloc_memo(tl_search *s)
{
	s->hcap = 2;
	while (s->hcap < 2 * s->max_evals)
		s->hcap *= 2;
	s->tiles = ct_alloc(s->ctx, sizeof *s->tiles * (size_t)s->max_evals * (size_t)s->n);
	s->ent = ct_alloc(s->ctx, sizeof *s->ent * (size_t)s->max_evals);
	s->hash = ct_alloc(s->ctx, sizeof *s->hash * (size_t)s->hcap);
	s->work = ct_alloc(s->ctx, sizeof *s->work * 3 * (size_t)s->n);
	if (!s->tiles || !s->ent || !s->hash || !s->work)
		return CT_ERR_NOMEM;
	for (int i = 0; i < s->hcap; i++)
		s->hash[i] = -1;
	return CT_OK;
}

static void free_search(tl_search *s)
{
	for (int i = 0; s->p && i < s->n; i++) {
		ct_free(s->ctx, s->p[i].fine);
		ct_free(s->ctx, s->p[i].coarse);
	}
	ct_free(s->ctx, s->p);
	ct_free(s->ctx, s->rt);
	ct_free(s->ctx, s->saved);
	ct_free(s->ctx, s->tiles);
	ct_free(s->ctx, s->ent);
	ct_free(s->ctx, s->hash);
	ct_free(s->ctx, s->work);
}

/* Fill r's header: names, levels and flags. */
static ct_status result_header(const tl_search *s, ct_tiles_result *r)
{
	r->params = calloc((size_t)s->n + 1, sizeof *r->params);
	r->indices = calloc((size_t)s->n + 1, sizeof *r->indices);
	if (!r->params || !r->indices)
		return ct_error(s->ctx, CT_ERR_NOMEM, "out of memory");
	r->nindices = s->n;
	for (int i = 0; i < s->n; i++) {
		r->params[i] = s->k->params[s->p[i].param].name;
		r->indices[i] = s->k->indices[s->p[i].index].name;
	}
	r->nlevels = s->spec.nlevels;
	for (int l = 0; l < s->spec.nlevels; l++) {
		r->level[l].size = s->spec.level[l].size;
		r->level[l].line = s->spec.level[l].line;
		r->level[l].ways = s->spec.level[l].ways;
	}
	r->rank_level = s->order[0];
	r->runtime_bounds = s->nrt > 0;
	r->evaluated = s->evaluated;
	r->simulated = s->simulate;
	r->simulate_seconds = s->sim_seconds;
	r->accesses = s->accesses;
	return CT_OK;
}

/* The tilings ids[0..n-1], ranked, without dominated ones, the first `keep` of them into r. */
static ct_status result_candidates(tl_search *s, int *ids, int n, int *tmp, int keep,
                                   ct_tiles_result *r)
{
	sort_entries(s, ids, tmp, n);
	int kept = 0;
	for (int i = 0; i < n && kept < keep; i++) {
		bool dominated = false;
		for (int j = 0; j < i && !dominated; j++)
			dominated = dominates(s, ids[j], ids[i]);
		if (!dominated)
			tmp[kept++] = ids[i];
	}
	r->candidates = calloc((size_t)kept + 1, sizeof *r->candidates);
	int64_t *block = calloc((size_t)kept * (size_t)s->n + 1, sizeof *block);
	if (!r->candidates || !block || kept == 0) {
		free(block);
		return r->candidates ? CT_OK : ct_error(s->ctx, CT_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < kept; i++) {
		ct_tiles_candidate *c = &r->candidates[i];
		c->tiles = block + (size_t)i * (size_t)s->n;
		memcpy(c->tiles, &s->tiles[(size_t)tmp[i] * (size_t)s->n],
		       sizeof *c->tiles * (size_t)s->n);
		for (int l = 0; l < s->spec.nlevels; l++) {
			c->misses[l] = s->ent[tmp[i]].misses[l];
			c->misses_max[l] = s->ent[tmp[i]].misses_max[l];
		}
		c->exact = s->ent[tmp[i]].exact;
	}
	r->ncandidates = kept;
	return CT_OK;
}

/* Options with their defaults filled in. */
static ct_tiles_options effective_opts(const ct_tiles_options *opts)
{
	ct_tiles_options o;
	if (opts)
		o = *opts;
	else
		ct_tiles_options_init(&o);
	if (o.max_evals <= 0)
		o.max_evals = TL_DEFAULT_EVALS;
	if (o.max_evals > TL_MAX_EVALS)
		o.max_evals = TL_MAX_EVALS;
	if (o.keep <= 0)
		o.keep = TL_DEFAULT_KEEP;
	if (o.probe[0] <= 0)
		o.probe[0] = 4096;
	if (o.probe[1] <= 0)
		o.probe[1] = 8192;
	return o;
}

/* Affine loop bounds, max_evals not given: simulate the kernel's own tiling once and keep
 * s->max_evals to what TL_SIM_SECONDS of such simulations allow. A trace too long stops the
 * search here (s->fatal); another failure is the tiling's own (noted, no sizing). */
static void size_sim_budget(tl_search *s)
{
	int64_t *t = ct_alloc(s->ctx, sizeof *t * (size_t)(s->n + 1));
	if (!t) {
		s->fatal = CT_ERR_NOMEM;
		return;
	}
	for (int i = 0; i < s->n; i++)
		t[i] = s->saved[s->p[i].param].value;
	tl_entry e;
	double t0 = ct_now();
	ct_status st = analyse_tiling(s, t, TL_SCREEN_DEPTH, &e);
	double dt = ct_now() - t0;
	if (st) {
		note_failure(s, st, t);
	} else {
		double most = dt > 0 ? TL_SIM_SECONDS / dt : (double)s->max_evals;
		int cap = most < TL_SIM_MIN_EVALS ? TL_SIM_MIN_EVALS : most < (double)s->max_evals ? (int)most : s->max_evals;
		s->max_evals = cap;
	}
	ct_free(s->ctx, t);
}

/* The search itself on a prepared s; fills r. */
static ct_status run_search(tl_search *s, const ct_tiles_options *o, ct_tiles_result *r)
{
	set_bounds(s, o->max_tile);
	if (s->simulate && !s->evals_given)
		size_sim_budget(s);
	ct_status st = s->fatal ? s->fatal : make_grids(s);
	if (!st)
		st = alloc_memo(s);
	int *ids = NULL, *tmp = NULL;
	if (!st) {
		ids = ct_alloc(s->ctx, sizeof *ids * (size_t)s->max_evals);
		tmp = ct_alloc(s->ctx, sizeof *tmp * (size_t)s->max_evals);
		if (!ids || !tmp)
			st = CT_ERR_NOMEM;
	}
	int nfinal = 0;
	if (!st) {
		coarse_phase(s);
		refine_phase(s, ids, tmp);
		final_phase(s, ids, tmp, o->keep, &nfinal);
		st = s->fatal;
	}
	restore_kernel(s);
	if (st && s->fatal_msg[0])
		ct_error(s->ctx, st, "%s", s->fatal_msg);
	if (!st) {
		if (nfinal == 0)
			st = ct_error(s->ctx, s->first_err ? s->first_err : CT_ERR_INPUT,
			              "no tiling of kernel '%s' could be analysed: %s", s->k->name,
			              s->first_msg[0] ? s->first_msg : "no tile fits");
	}
	if (!st)
		st = result_header(s, r);
	if (!st)
		st = result_candidates(s, ids, nfinal, tmp, o->keep, r);
	ct_free(s->ctx, ids);
	ct_free(s->ctx, tmp);
	return st == CT_ERR_NOMEM && ct_ctx_last_status(s->ctx) != CT_ERR_NOMEM
	           ? ct_error(s->ctx, CT_ERR_NOMEM, "out of memory in the tile search")
	           : st;
}

void ct_tiles_options_init(ct_tiles_options *o)
{
	if (o)
		memset(o, 0, sizeof *o);
}

ct_status ct_kernel_tiles(ct_kernel *k, const char *spec_text, const ct_tiles_options *opts,
                          ct_tiles_result *r)
{
	if (!k || !r)
		return CT_ERR_USAGE;
	memset(r, 0, sizeof *r);
	if (ir_kernel_ready(k) != CT_OK)
		return CT_ERR_USAGE;
	double t0 = ct_now();
	ct_tiles_options o = effective_opts(opts);
	tl_search s;
	memset(&s, 0, sizeof s);
	s.k = k;
	s.ctx = k->ctx;
	s.max_evals = o.max_evals;
	s.probe[0] = o.probe[0];
	s.probe[1] = o.probe[1];
	ct_status st = spec_text ? sim_spec_parse(s.ctx, spec_text, &s.spec)
	                         : sim_machine_spec(s.ctx, &s.spec);
	if (!st && (st = find_tile_params(&s)) == CT_OK && s.n == 0)
		st = ct_error_at(
		    s.ctx, CT_ERR_INPUT, k->file, k->name_pos.line, k->name_pos.col,
		    "kernel '%s' has no tile params: the search needs compile-time params "
		    "as split/tile sizes (param TA = 16 ... tile(a=TA))",
		    k->name);
	s.simulate = k->affine_bounds;
	s.evals_given = opts && opts->max_evals > 0;
	for (int i = 0; !st && s.simulate && i < k->nparams; i++)
		if (k->params[i].runtime && !k->params[i].has_value)
			st = ct_error_at(s.ctx, CT_ERR_USAGE, k->file, k->name_pos.line, k->name_pos.col,
			                 "kernel '%s' has loops with affine bounds, which the tile search counts "
			                 "with the exact simulator (the model does not analyse them yet): give "
			                 "runtime param '%s' a value (-D %s=...)",
			                 k->name, k->params[i].name, k->params[i].name);
	if (!st) {
		rank_levels(&s);
		st = save_kernel(&s);
	}
	if (!st)
		st = run_search(&s, &o, r);
	else
		restore_kernel(&s);
	free_search(&s);
	if (st == CT_ERR_NOMEM && ct_ctx_last_status(s.ctx) != CT_ERR_NOMEM)
		ct_error(s.ctx, CT_ERR_NOMEM, "out of memory in the tile search");
	if (st)
		ct_tiles_result_free(r);
	r->seconds = ct_now() - t0;
	return st;
}

void ct_tiles_result_free(ct_tiles_result *r)
{
	if (!r)
		return;
	if (r->candidates && r->ncandidates > 0)
		free(r->candidates[0].tiles);
	free(r->candidates);
	free(r->params);
	free(r->indices);
	r->candidates = NULL;
	r->params = r->indices = NULL;
	r->ncandidates = r->nindices = 0;
}
