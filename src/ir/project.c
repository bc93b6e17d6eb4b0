/* project.c: a band's bounds projected onto its scheduled loop order (isl's projection, pruned). */
#include "ir/project.h"

#include <isl/constraint.h>
#include <isl/ctx.h>
#include <isl/local_space.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <stdio.h>
#include <string.h>

/* Terms one bound may have; isl's work on one band (a bound on the time a
 * pathological band may take: each operation is a small step of isl's
 * simplex). */
enum { PROJ_MAX_TERMS = 16, PROJ_MAX_OPS = 2000000 };

/* One candidate bound of a loop: e >= 0 with coefficient +1 (a lower bound)
 * or -1 (an upper bound) on the loop's root; orig: a written bound. */
typedef struct pcons {
	aff e;
	bool lower, orig, kept;
} pcons;

typedef struct pj {
	const ct_kernel *k;
	ct_arena *a;
	proj_band *p;
	isl_ctx *ictx;
	isl_space *sp; /* the isl params (symbols) and one set dim per root, in loop order */
	int *roots;    /* the band's roots in the order of their loops */
	int m;
	int *rpos; /* [k->nindices]: position among roots, -1 outside the band */
	/* [k->nparams + k->nindices]: the isl param of kernel param id (at id) or of index id
	 * outside the band (at nparams + id), -1 when no bound uses it */
	int *slot;
	int nslots;
	pcons **cand; /* [position]: the candidate bounds of each loop */
	int *ncand;
	bool ok; /* no overflow, no allocation failure */
} pj;

static ct_status fail(pj *w, int r, const char *why)
{
	w->p->bad = r;
	snprintf(w->p->err, sizeof w->p->err, "%s", why);
	return CT_ERR_INPUT;
}

/* ------------------------------------------------------------ symbols */

static bool outside_loop(const pj *w, int id)
{
	return w->rpos[id] < 0 && w->k->indices[id].kind == IX_LOOP;
}

/* Written bound t of loop r (own: its written bounds) as e >= 0: r - L for
 * a lower term L, H - 1 - r for an upper term H. */
static aff bound_cons(pj *w, int r, proj_bounds own, int t)
{
	aff v = aff_sym1(w->a, AFF_INDEX, r, 1, &w->ok);
	if (t < own.nlo)
		return aff_sub(w->a, v, own.los[t], &w->ok);
	return aff_sub(w->a, aff_add(w->a, own.his[t - own.nlo], aff_const(-1), &w->ok), v, &w->ok);
}

/* Give every symbol of e an isl param: params, and indices outside the band
 * together with the symbols of their own bounds (the pruning context). */
static void mark(pj *w, aff e)
{
	for (int i = 0; i < e.n; i++) {
		const aff_term *t = &e.t[i];
		int key = t->kind == AFF_PARAM ? t->id : w->k->nparams + t->id;
		if ((t->kind == AFF_INDEX && w->rpos[t->id] >= 0) || w->slot[key] >= 0)
			continue;
		w->slot[key] = w->nslots++;
		if (t->kind == AFF_INDEX && outside_loop(w, t->id)) {
			proj_bounds own = proj_root(w->k, NULL, t->id);
			for (int s = 0; s < own.nlo + own.nhi; s++)
				mark(w, s < own.nlo ? own.los[s] : own.his[s - own.nlo]);
		}
	}
}

/* ------------------------------------------------------------ affine <-> isl */

/* The constraint e >= 0 (or e = 0) in the band's space; NULL on failure. */
static isl_constraint *to_isl(const pj *w, aff e, bool eq)
{
	isl_local_space *ls = isl_local_space_from_space(isl_space_copy(w->sp));
	isl_constraint *c =
	    eq ? isl_constraint_alloc_equality(ls) : isl_constraint_alloc_inequality(ls);
	c = isl_constraint_set_constant_val(c, isl_val_int_from_si(w->ictx, e.c));
	for (int i = 0; i < e.n && c; i++) {
		const aff_term *t = &e.t[i];
		isl_val *v = isl_val_int_from_si(w->ictx, t->coef);
		if (t->kind == AFF_INDEX && w->rpos[t->id] >= 0)
			c = isl_constraint_set_coefficient_val(c, isl_dim_set, w->rpos[t->id], v);
		else
			c = isl_constraint_set_coefficient_val(
			    c, isl_dim_param,
			    w->slot[t->kind == AFF_PARAM ? t->id : w->k->nparams + t->id], v);
	}
	return c;
}

static isl_basic_set *add_aff(const pj *w, isl_basic_set *s, aff e, bool eq)
{
	return s ? isl_basic_set_add_constraint(s, to_isl(w, e, eq)) : NULL;
}

/* v as an int64 (w->ok = false when it does not fit); frees v. */
static int64_t from_val(pj *w, isl_val *v)
{
	long x = v ? isl_val_get_num_si(v) : 0;
	if (!v || isl_val_eq_si(v, x) != isl_bool_true)
		w->ok = false;
	isl_val_free(v);
	return x;
}

/* The affine expression of isl constraint c (sum + constant, in the band's
 * space with its first n set dims). */
static aff from_isl(pj *w, isl_constraint *c, int n)
{
	aff e = aff_const(from_val(w, isl_constraint_get_constant_val(c)));
	for (int key = 0; key < w->k->nparams + w->k->nindices; key++) {
		if (w->slot[key] < 0)
			continue;
		int64_t cf =
		    from_val(w, isl_constraint_get_coefficient_val(c, isl_dim_param, w->slot[key]));
		bool par = key < w->k->nparams;
		e = aff_add(w->a, e,
		            aff_sym1(w->a, par ? AFF_PARAM : AFF_INDEX,
		                     par ? key : key - w->k->nparams, cf, &w->ok),
		            &w->ok);
	}
	for (int j = 0; j < n; j++) {
		int64_t cf = from_val(w, isl_constraint_get_coefficient_val(c, isl_dim_set, j));
		e = aff_add(w->a, e, aff_sym1(w->a, AFF_INDEX, w->roots[j], cf, &w->ok), &w->ok);
	}
	return e;
}

/* ------------------------------------------------------------ candidates */

static bool add_cand(pj *w, int j, aff e, bool lower, bool orig)
{
	for (int i = 0; i < w->ncand[j]; i++)
		if (w->cand[j][i].lower == lower && aff_equal(w->cand[j][i].e, e))
			return true;
	pcons *n = ct_arena_alloc(w->a, sizeof *n * ((size_t)w->ncand[j] + 1));
	if (!n)
		return false;
	if (w->ncand[j] > 0)
		memcpy(n, w->cand[j], sizeof *n * (size_t)w->ncand[j]);
	n[w->ncand[j]++] = (pcons){e, lower, orig, true};
	w->cand[j] = n;
	return true;
}

/* The written bound e >= 0 belongs to the innermost loop it uses, whose
 * coefficient must be 1 or -1 (the range would need a division otherwise). */
static ct_status written_cand(pj *w, aff e)
{
	int j = -1;
	for (int i = 0; i < e.n; i++)
		if (e.t[i].kind == AFF_INDEX && w->rpos[e.t[i].id] > j)
			j = w->rpos[e.t[i].id];
	int64_t c = aff_coef(e, AFF_INDEX, w->roots[j]);
	if (c != 1 && c != -1) {
		char why[240];
		snprintf(
		    why, sizeof why,
		    "in this order the range of loop '%s' would need a division (a bound gives it "
		    "coefficient %lld): not supported",
		    w->k->indices[w->roots[j]].name, (long long)c);
		return fail(w, w->roots[j], why);
	}
	return add_cand(w, j, e, c > 0, true) ? CT_OK : CT_ERR_NOMEM;
}

/* The written bounds of every root as constraints r - L >= 0, H - 1 - r >= 0:
 * set s (NULL when only the candidates are wanted). */
static ct_status written(pj *w, isl_basic_set **s)
{
	for (int j = 0; j < w->m; j++) {
		int r = w->roots[j];
		proj_bounds own = proj_root(w->k, NULL, r);
		for (int t = 0; t < own.nlo + own.nhi && w->ok; t++) {
			aff e = bound_cons(w, r, own, t);
			ct_status st = written_cand(w, e);
			if (st != CT_OK)
				return st;
			*s = add_aff(w, *s, e, false);
		}
	}
	return CT_OK;
}

typedef struct take {
	pj *w;
	int j;
	bool ok;
} take;

/* A constraint of the projection onto the loops 0..j that bounds loop j
 * with coefficient 1 or -1 becomes a candidate; the others only narrow what
 * the candidates allow (dropping them widens the range, the written bounds
 * keep the instances). */
static isl_stat take_cons(isl_constraint *c, void *user)
{
	take *t = user;
	pj *w = t->w;
	int64_t cf = from_val(w, isl_constraint_get_coefficient_val(c, isl_dim_set, t->j));
	if (w->ok && (cf == 1 || cf == -1)) {
		aff e = from_isl(w, c, t->j + 1);
		if (w->ok && !add_cand(w, t->j, e, cf > 0, false))
			t->ok = false;
		if (isl_constraint_is_equality(c) == isl_bool_true && w->ok && t->ok &&
		    !add_cand(w, t->j, aff_scale(w->a, e, -1, &w->ok), cf < 0, false))
			t->ok = false;
	}
	isl_constraint_free(c);
	return t->ok && w->ok ? isl_stat_ok : isl_stat_error;
}

/* ------------------------------------------------------------ pruning */

/* What holds wherever the band runs, besides its loops' bounds: runtime
 * params >= 0, compile-time params their values, the indices outside the
 * band within their own bounds. */
static isl_basic_set *context(pj *w)
{
	isl_basic_set *s = isl_basic_set_universe(isl_space_copy(w->sp));
	const ct_kernel *k = w->k;
	for (int key = 0; key < k->nparams + k->nindices && s; key++) {
		if (w->slot[key] < 0)
			continue;
		if (key < k->nparams) {
			if (k->params[key].runtime)
				s = add_aff(w, s, aff_sym1(w->a, AFF_PARAM, key, 1, &w->ok), false);
			else
				s = isl_basic_set_fix_val(
				    s, isl_dim_param, (unsigned)w->slot[key],
				    isl_val_int_from_si(w->ictx, k->params[key].value));
			continue;
		}
		int id = key - k->nparams;
		if (!outside_loop(w, id))
			continue;
		proj_bounds own = proj_root(k, NULL, id);
		for (int t = 0; t < own.nlo + own.nhi && w->ok; t++)
			s = add_aff(w, s, bound_cons(w, id, own, t), false);
	}
	return s;
}

/* Whether candidate i of loop j follows from the context and outer loops
 * (base) and the other kept candidates of loop j; -1 when isl failed. */
static int implied(pj *w, isl_basic_set *base, int j, int i)
{
	isl_basic_set *s = isl_basic_set_copy(base);
	for (int q = 0; q < w->ncand[j]; q++)
		if (q != i && w->cand[j][q].kept)
			s = add_aff(w, s, w->cand[j][q].e, false);
	/* e <= -1: the integer points the candidate cuts off */
	s = add_aff(
	    w, s,
	    aff_add(w->a, aff_scale(w->a, w->cand[j][i].e, -1, &w->ok), aff_const(-1), &w->ok),
	    false);
	isl_bool e = s ? isl_basic_set_is_empty(s) : isl_bool_error;
	isl_basic_set_free(s);
	return e == isl_bool_error ? -1 : e == isl_bool_true;
}

/* How much candidate c of loop j should go before the others when two
 * imply each other: one over other loops of the band before one over
 * params and outer indices only (a loop may stay rectangular), a derived
 * one before a written one. */
static int drop_rank(const pj *w, const pcons *c, int j)
{
	bool loops = false;
	for (int i = 0; i < c->e.n; i++)
		if (c->e.t[i].kind == AFF_INDEX && w->rpos[c->e.t[i].id] >= 0 &&
		    w->rpos[c->e.t[i].id] != j)
			loops = true;
	return (loops ? 2 : 0) + (c->orig ? 0 : 1);
}

/* Drop the candidates of loop j that the rest implies (in drop_rank's
 * order, then the last first), never the last bound on one side. */
static bool prune(pj *w, isl_basic_set *base, int j)
{
	for (int rank = 3; rank >= 0; rank--)
		for (int i = w->ncand[j] - 1; i >= 0; i--) {
			if (drop_rank(w, &w->cand[j][i], j) != rank)
				continue;
			int same = 0;
			for (int q = 0; q < w->ncand[j]; q++)
				same += w->cand[j][q].kept &&
				        w->cand[j][q].lower == w->cand[j][i].lower;
			if (same < 2)
				continue;
			int r = implied(w, base, j, i);
			if (r < 0)
				return false;
			if (r)
				w->cand[j][i].kept = false;
		}
	return true;
}

/* Loop j's bounds from its kept candidates: max(v - e) .. min(e + v + 1). */
static ct_status set_bounds(pj *w, int j)
{
	int v = w->roots[j];
	const char *name = w->k->indices[v].name;
	aff *lo = ct_arena_alloc(w->a, sizeof *lo * ((size_t)w->ncand[j] + 1));
	aff *hi = ct_arena_alloc(w->a, sizeof *hi * ((size_t)w->ncand[j] + 1));
	if (!lo || !hi)
		return CT_ERR_NOMEM;
	int nlo = 0, nhi = 0;
	aff vv = aff_sym1(w->a, AFF_INDEX, v, 1, &w->ok);
	for (int i = 0; i < w->ncand[j]; i++) {
		const pcons *c = &w->cand[j][i];
		if (!c->kept)
			continue;
		if (c->lower)
			lo[nlo++] = aff_sub(w->a, vv, c->e, &w->ok);
		else
			hi[nhi++] =
			    aff_add(w->a, aff_add(w->a, c->e, vv, &w->ok), aff_const(1), &w->ok);
	}
	char why[240];
	if (nlo == 0 || nhi == 0) {
		snprintf(why, sizeof why, "in this order loop '%s' would have no %s bound", name,
		         nlo == 0 ? "lower" : "upper");
		return fail(w, v, why);
	}
	if (nlo > PROJ_MAX_TERMS || nhi > PROJ_MAX_TERMS) {
		snprintf(why, sizeof why,
		         "in this order loop '%s' would have more than %d bound terms", name,
		         PROJ_MAX_TERMS);
		return fail(w, v, why);
	}
	w->p->b[v] = (proj_bounds){nlo, nhi, lo, hi};
	return CT_OK;
}

/* ------------------------------------------------------------ the projection */

/* Every loop of a band without instances (its written bounds contradict
 * each other) runs 0 .. 0. */
static ct_status empty_band(pj *w)
{
	aff *zero = ct_arena_alloc(w->a, sizeof *zero);
	if (!zero)
		return CT_ERR_NOMEM;
	*zero = aff_const(0);
	for (int j = 0; j < w->m; j++)
		w->p->b[w->roots[j]] = (proj_bounds){1, 1, zero, zero};
	return CT_OK;
}

/* Whether some loop has no candidate bound on one side. */
static bool side_missing(const pj *w)
{
	for (int j = 0; j < w->m; j++) {
		int lo = 0, hi = 0;
		for (int i = 0; i < w->ncand[j]; i++)
			*(w->cand[j][i].lower ? &lo : &hi) += 1;
		if (lo == 0 || hi == 0)
			return true;
	}
	return false;
}

/* Every loop's candidates: its written bounds and the constraints on it of
 * the band's set projected onto it and the loops outside it (isl's integer
 * projection; existential variables it needs are eliminated as rationals:
 * a superset, whose constraints still hold on every instance). *empty: the
 * band has no instance (isl writes the projection of an empty set without
 * constraints, so a loop left without a bound asks whether the band is
 * empty; an empty band whose projection isl does not empty runs nothing
 * with the derived bounds all the same). */
static ct_status project(pj *w, bool *empty)
{
	isl_basic_set *s = isl_basic_set_universe(isl_space_copy(w->sp));
	ct_status st = written(w, &s);
	for (int key = 0; key < w->k->nparams && st == CT_OK; key++)
		if (w->slot[key] >= 0 && w->k->params[key].runtime)
			s = add_aff(w, s, aff_sym1(w->a, AFF_PARAM, key, 1, &w->ok), false);
	if (st != CT_OK) {
		isl_basic_set_free(s);
		return st;
	}
	isl_basic_set *all = isl_basic_set_copy(s);
	bool failed = !s;
	for (int j = w->m - 1; j >= 0 && !failed && w->ok && st == CT_OK; j--) {
		if (j < w->m - 1)
			s = isl_basic_set_remove_divs(
			    isl_basic_set_project_out(s, isl_dim_set, (unsigned)j + 1, 1));
		take t = {w, j, true};
		if (!s || isl_basic_set_foreach_constraint(s, take_cons, &t) < 0) {
			if (!t.ok)
				st = CT_ERR_NOMEM;
			failed = w->ok;
		}
	}
	isl_basic_set_free(s);
	isl_bool e = isl_bool_false;
	if (st == CT_OK && w->ok && !failed && side_missing(w))
		e = isl_basic_set_is_empty(all);
	isl_basic_set_free(all);
	*empty = e == isl_bool_true;
	if (st != CT_OK)
		return st;
	if (!w->ok)
		return fail(w, w->roots[0],
		            "the projected bounds of the band do not fit in 64 bits");
	if (failed || e == isl_bool_error)
		return fail(w, w->roots[0],
		            "in this order the bounds of the band are too complex to project");
	return *empty ? empty_band(w) : CT_OK;
}

/* Keep the candidates that the outer loops and the others do not imply,
 * outermost loop first (each loop's bounds then hold for the next). */
static ct_status prune_all(pj *w)
{
	isl_basic_set *base = context(w);
	ct_status st = CT_OK;
	for (int j = 0; j < w->m && st == CT_OK; j++) {
		if (!base || !prune(w, base, j)) {
			st =
			    fail(w, w->roots[j],
			         "in this order the bounds of the band are too complex to project");
			break;
		}
		st = set_bounds(w, j);
		for (int i = 0; i < w->ncand[j] && st == CT_OK; i++)
			if (w->cand[j][i].kept)
				base = add_aff(w, base, w->cand[j][i].e, false);
	}
	isl_basic_set_free(base);
	if (st == CT_OK && !w->ok)
		return fail(w, w->roots[0],
		            "the projected bounds of the band do not fit in 64 bits");
	return st;
}

/* Whether the order puts some affine root before a root of the band its
 * bounds use. */
static bool needs_projection(const pj *w)
{
	for (int j = 0; j < w->m; j++) {
		int r = w->roots[j];
		proj_bounds own = proj_root(w->k, NULL, r);
		for (int s = 0; s < own.nlo + own.nhi; s++) {
			aff e = s < own.nlo ? own.los[s] : own.his[s - own.nlo];
			for (int i = 0; i < e.n; i++)
				if (e.t[i].kind == AFF_INDEX && w->rpos[e.t[i].id] > j)
					return true;
		}
	}
	return false;
}

/* The isl side of proj_band_bounds: symbols, space, projection, pruning. */
static ct_status project_isl(pj *w)
{
	const ct_kernel *k = w->k;
	w->nslots = 0;
	w->slot = ct_arena_alloc(w->a, sizeof *w->slot * ((size_t)(k->nparams + k->nindices) + 1));
	w->cand = ct_arena_alloc(w->a, sizeof *w->cand * ((size_t)w->m + 1));
	w->ncand = ct_arena_alloc(w->a, sizeof *w->ncand * ((size_t)w->m + 1));
	if (!w->slot || !w->cand || !w->ncand)
		return CT_ERR_NOMEM;
	for (int i = 0; i < k->nparams + k->nindices; i++)
		w->slot[i] = -1;
	for (int j = 0; j < w->m; j++) {
		w->cand[j] = NULL;
		w->ncand[j] = 0;
		proj_bounds own = proj_root(k, NULL, w->roots[j]);
		for (int s = 0; s < own.nlo + own.nhi; s++)
			mark(w, s < own.nlo ? own.los[s] : own.his[s - own.nlo]);
	}
	w->ictx = isl_ctx_alloc();
	if (!w->ictx)
		return CT_ERR_NOMEM;
	isl_options_set_on_error(w->ictx, ISL_ON_ERROR_CONTINUE);
	isl_ctx_set_max_operations(w->ictx, PROJ_MAX_OPS);
	w->sp = isl_space_set_alloc(w->ictx, (unsigned)w->nslots, (unsigned)w->m);
	bool empty = false;
	ct_status st = w->sp ? project(w, &empty) : CT_ERR_NOMEM;
	if (st == CT_OK && !empty)
		st = prune_all(w);
	isl_space_free(w->sp);
	isl_ctx_free(w->ictx);
	return st;
}

ct_status proj_band_bounds(const ct_kernel *k, const int *order, int n, ct_arena *a, proj_band *p)
{
	memset(p, 0, sizeof *p);
	p->bad = -1;
	pj w = {.k = k, .a = a, .p = p, .ok = true};
	w.roots = ct_arena_alloc(a, sizeof *w.roots * ((size_t)n + 1));
	w.rpos = ct_arena_alloc(a, sizeof *w.rpos * ((size_t)k->nindices + 1));
	if (!w.roots || !w.rpos)
		return CT_ERR_NOMEM;
	for (int i = 0; i < k->nindices; i++)
		w.rpos[i] = -1;
	for (int i = 0; i < n; i++)
		if (k->indices[order[i]].kind == IX_LOOP) {
			w.rpos[order[i]] = w.m;
			w.roots[w.m++] = order[i];
		}
	/* the fast path: a rectangular band, or one whose order keeps every bound's loops outside
	 * its loop, keeps its own bounds and never meets isl */
	if (!needs_projection(&w))
		return CT_OK;
	p->projected = true;
	p->b = ct_arena_alloc(a, sizeof *p->b * ((size_t)k->nindices + 1));
	if (!p->b)
		return CT_ERR_NOMEM;
	memset(p->b, 0, sizeof *p->b * ((size_t)k->nindices + 1));
	return project_isl(&w);
}

proj_bounds proj_root(const ct_kernel *k, const proj_band *p, int r)
{
	if (p && p->projected && p->b)
		return p->b[r];
	const ir_index *x = &k->indices[r];
	proj_bounds b;
	if (ir_index_affine(x)) {
		b.nlo = x->nlo;
		b.nhi = x->nhi;
		b.los = x->los;
		b.his = x->his;
	} else {
		b.nlo = b.nhi = 1;
		b.los = &x->lo;
		b.his = &x->hi;
	}
	return b;
}

bool proj_root_affine(const ct_kernel *k, const proj_band *p, int r)
{
	if (!p || !p->projected)
		return ir_index_affine(&k->indices[r]);
	proj_bounds b = proj_root(k, p, r);
	for (int s = 0; s < b.nlo + b.nhi; s++)
		if (aff_uses_kind(s < b.nlo ? b.los[s] : b.his[s - b.nlo], AFF_INDEX))
			return true;
	return false;
}

bool proj_chain_violation(const ct_kernel *k, const proj_band *p, const int *order, int n, int *x,
                          int *y, int *r)
{
	for (int i = 0; i < n; i++) {
		int v = order[i];
		if (k->indices[v].kind != IX_LOOP)
			continue;
		proj_bounds b = proj_root(k, p, v);
		for (int q = i + 1; q < n; q++) {
			int u = k->indices[order[q]].root;
			if (u == v)
				continue;
			for (int s = 0; s < b.nlo + b.nhi; s++)
				if (aff_coef(s < b.nlo ? b.los[s] : b.his[s - b.nlo], AFF_INDEX,
				             u) != 0) {
					*x = v;
					*y = order[q];
					*r = u;
					return true;
				}
		}
	}
	return false;
}
