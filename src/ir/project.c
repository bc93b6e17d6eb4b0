/* project.c: a band's bounds projected onto its scheduled loop order (Fourier-Motzkin over unit coefficients). */
#include "ir/project.h"

#include <stdio.h>
#include <string.h>

/* Constraints a projection may hold at once, terms one bound may have. */
enum { PROJ_MAX_CONS = 256, PROJ_MAX_TERMS = 16, PROJ_PROVE_DEPTH = 3 };

/* One constraint e >= 0; orig: written (a root's own bound), not derived. */
typedef struct pcons {
	aff e;
	bool orig;
} pcons;

typedef struct pj {
	const ct_kernel *k;
	ct_arena *a;
	proj_band *p;
	int *roots;            /* the band's roots in the order of their loops */
	int m;
	int *rpos;             /* [k->nindices]: position among roots, -1 outside the band */
	pcons *c;
	int n;
	aff **mlo, **mhi;      /* [position]: the term arrays stage() made, for prune() */
	bool ok;               /* no overflow, no allocation failure */
} pj;

static int64_t gcd64(int64_t x, int64_t y)
{
	while (y != 0) {
		int64_t t = x % y;
		x = y;
		y = t;
	}
	return x;
}

/* e with every coefficient divided by their gcd g and the constant by
 * floor(c / g): the same integer points. */
static aff tighten(pj *w, aff e)
{
	int64_t g = 0;
	for (int i = 0; i < e.n; i++) {
		if (e.t[i].coef == INT64_MIN) {
			w->ok = false;
			return e;
		}
		g = gcd64(g, e.t[i].coef < 0 ? -e.t[i].coef : e.t[i].coef);
	}
	if (g <= 1)
		return e;
	aff r = {e.c / g, e.n, ct_arena_alloc(w->a, sizeof *e.t * (size_t)e.n)};
	if (!r.t) {
		w->ok = false;
		return e;
	}
	if (e.c % g != 0 && e.c < 0)
		r.c--;
	for (int i = 0; i < e.n; i++) {
		r.t[i] = e.t[i];
		r.t[i].coef /= g;
	}
	return r;
}

static bool same_terms(aff x, aff y)
{
	if (x.n != y.n)
		return false;
	for (int i = 0; i < x.n; i++)
		if (x.t[i].kind != y.t[i].kind || x.t[i].id != y.t[i].id || x.t[i].coef != y.t[i].coef)
			return false;
	return true;
}

/* Whether e uses a root of the band at a position below lim. */
static bool uses_roots(const pj *w, aff e, int lim)
{
	for (int i = 0; i < e.n; i++)
		if (e.t[i].kind == AFF_INDEX && w->rpos[e.t[i].id] >= 0 && w->rpos[e.t[i].id] < lim)
			return true;
	return false;
}

/* Add e >= 0 (tightened), keeping the tighter of two with the same terms. */
static bool add_cons(pj *w, aff e, bool orig)
{
	e = tighten(w, e);
	for (int i = 0; i < w->n; i++)
		if (same_terms(w->c[i].e, e)) {
			if (e.c < w->c[i].e.c)
				w->c[i].e.c = e.c;
			w->c[i].orig = w->c[i].orig || orig;
			return true;
		}
	if (w->n >= PROJ_MAX_CONS)
		return false;
	w->c[w->n].e = e;
	w->c[w->n].orig = orig;
	w->n++;
	return true;
}

static ct_status fail(pj *w, int r, const char *why)
{
	w->p->bad = r;
	snprintf(w->p->err, sizeof w->p->err, "%s", why);
	return CT_ERR_INPUT;
}

/* The written bounds of every root as constraints: r - L >= 0, H - 1 - r >= 0. */
static bool written_cons(pj *w)
{
	for (int j = 0; j < w->m; j++) {
		int r = w->roots[j];
		proj_bounds own = proj_root(w->k, NULL, r);
		aff vr = aff_sym1(w->a, AFF_INDEX, r, 1, &w->ok);
		for (int s = 0; s < own.nlo + own.nhi && w->ok; s++) {
			aff e = s < own.nlo ? aff_sub(w->a, vr, own.los[s], &w->ok)
			                    : aff_sub(w->a, aff_add(w->a, own.his[s - own.nlo], aff_const(-1), &w->ok),
			                              vr, &w->ok);
			if (!add_cons(w, e, true))
				return false;
		}
	}
	return true;
}

/* Root v (position j) takes the constraints that hold it (coefficient 1 or -1) as its bounds,
 * into w->p->b[v]; a written one with another coefficient is refused, a derived one dropped
 * (the range only widens). */
static ct_status take_bounds(pj *w, int j)
{
	int v = w->roots[j];
	const char *name = w->k->indices[v].name;
	aff *lo = ct_arena_alloc(w->a, sizeof *lo * ((size_t)w->n + 1));
	aff *hi = ct_arena_alloc(w->a, sizeof *hi * ((size_t)w->n + 1));
	if (!lo || !hi)
		return CT_ERR_NOMEM;
	int nlo = 0, nhi = 0;
	aff vv = aff_sym1(w->a, AFF_INDEX, v, 1, &w->ok);
	char why[240];
	for (int i = 0; i < w->n; i++) {
		int64_t c = aff_coef(w->c[i].e, AFF_INDEX, v);
		if (c == 0 || ((c != 1 && c != -1) && !w->c[i].orig))
			continue;
		if (c != 1 && c != -1) {
			snprintf(why, sizeof why,
			         "in this order the range of loop '%s' would need a division (a bound "
			         "gives it coefficient %lld): not supported",
			         name, (long long)c);
			return fail(w, v, why);
		}
		if (c > 0)
			lo[nlo++] = aff_sub(w->a, vv, w->c[i].e, &w->ok);
		else
			hi[nhi++] = aff_add(w->a, aff_add(w->a, w->c[i].e, vv, &w->ok), aff_const(1), &w->ok);
	}
	if (nlo == 0 || nhi == 0) {
		snprintf(why, sizeof why, "in this order loop '%s' would have no %s bound", name,
		         nlo == 0 ? "lower" : "upper");
		return fail(w, v, why);
	}
	proj_bounds *b = &w->p->b[v];
	b->nlo = nlo;
	b->nhi = nhi;
	b->los = w->mlo[j] = lo;
	b->his = w->mhi[j] = hi;
	return CT_OK;
}

/* Eliminate root v (position j): each pair of a lower and an upper
 * constraint on it gives one without it (dropped when it uses no root left:
 * it only restates the params'). */
static ct_status eliminate(pj *w, int j)
{
	int v = w->roots[j];
	pcons *rest = ct_arena_alloc(w->a, sizeof *rest * PROJ_MAX_CONS);
	if (!rest)
		return CT_ERR_NOMEM;
	pcons *all = w->c;
	int nall = w->n;
	w->c = rest;
	w->n = 0;
	for (int i = 0; i < nall; i++)
		if (aff_coef(all[i].e, AFF_INDEX, v) == 0)
			rest[w->n++] = all[i];
	for (int i = 0; i < nall && w->ok; i++) {
		int64_t ci = aff_coef(all[i].e, AFF_INDEX, v);
		for (int q = 0; ci > 0 && q < nall && w->ok; q++) {
			int64_t cq = aff_coef(all[q].e, AFF_INDEX, v);
			if (cq >= 0)
				continue;
			aff e = aff_add(w->a, aff_scale(w->a, all[i].e, -cq, &w->ok),
			                aff_scale(w->a, all[q].e, ci, &w->ok), &w->ok);
			if (uses_roots(w, e, j) && !add_cons(w, e, false)) {
				char why[240];
				snprintf(why, sizeof why,
				         "in this order the bounds of the loops outside '%s' would need more "
				         "than %d constraints",
				         w->k->indices[v].name, PROJ_MAX_CONS);
				return fail(w, v, why);
			}
		}
	}
	return CT_OK;
}

/* Whether d >= 0 follows from the bounds of the indices it uses (each
 * index term replaced by the bound that makes it smallest, up to a depth),
 * runtime params being >= 0 and compile-time ones their values. */
static bool prove_nonneg(const pj *w, aff d, int depth, ct_arena *a)
{
	bool ok = true;
	for (int i = 0; i < d.n; i++) {
		const aff_term *t = &d.t[i];
		aff rest = aff_sub(a, d, aff_sym1(a, t->kind, t->id, t->coef, &ok), &ok);
		if (!ok)
			return false;
		if (t->kind == AFF_PARAM) {
			const ir_param *pa = &w->k->params[t->id];
			if (pa->runtime)
				return t->coef > 0 && prove_nonneg(w, rest, depth, a);
			int64_t pv;
			if (!ct_mul_ok(t->coef, pa->value, &pv))
				return false;
			return prove_nonneg(w, aff_add(a, rest, aff_const(pv), &ok), depth, a) && ok;
		}
		if (t->kind != AFF_INDEX || depth == 0)
			return false;
		proj_bounds bx = proj_root(w->k, w->rpos[t->id] >= 0 ? w->p : NULL, t->id);
		if (w->k->indices[t->id].kind != IX_LOOP)
			return false;
		int n = t->coef > 0 ? bx.nlo : bx.nhi;
		for (int s = 0; s < n; s++) {
			/* c*x >= c*L (c > 0), or c*x >= c*(H - 1) (c < 0) */
			aff bound = t->coef > 0 ? bx.los[s] : aff_add(a, bx.his[s], aff_const(-1), &ok);
			aff e = aff_add(a, rest, aff_scale(a, bound, t->coef, &ok), &ok);
			if (ok && prove_nonneg(w, e, depth - 1, a))
				return true;
		}
		return false;
	}
	return d.c >= 0;
}

/* Drop the terms of a max (lower) or min (upper) that another term of it
 * provably dominates. */
static int prune(const pj *w, aff *t, int n, bool lower)
{
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (j == i)
				continue;
			bool ok = true;
			aff d = lower ? aff_sub(w->a, t[j], t[i], &ok) : aff_sub(w->a, t[i], t[j], &ok);
			if (ok && prove_nonneg(w, d, PROJ_PROVE_DEPTH, w->a)) {
				t[i] = t[--n];
				i--;
				break;
			}
		}
	}
	return n;
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

ct_status proj_band_bounds(const ct_kernel *k, const int *order, int n, ct_arena *a,
                           proj_band *p)
{
	memset(p, 0, sizeof *p);
	p->bad = -1;
	pj w = {k, a, p, NULL, 0, NULL, NULL, 0, NULL, NULL, true};
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
	if (!needs_projection(&w))
		return CT_OK;
	p->projected = true;
	p->b = ct_arena_alloc(a, sizeof *p->b * ((size_t)k->nindices + 1));
	w.c = ct_arena_alloc(a, sizeof *w.c * PROJ_MAX_CONS);
	w.mlo = ct_arena_alloc(a, sizeof *w.mlo * ((size_t)w.m + 1));
	w.mhi = ct_arena_alloc(a, sizeof *w.mhi * ((size_t)w.m + 1));
	if (!p->b || !w.c || !w.mlo || !w.mhi)
		return CT_ERR_NOMEM;
	if (!written_cons(&w))
		return w.ok ? fail(&w, w.roots[0], "the band has too many bound terms to project")
		            : CT_ERR_NOMEM;
	for (int j = w.m - 1; j >= 0 && w.ok; j--) {
		ct_status st = take_bounds(&w, j);
		if (st == CT_OK)
			st = eliminate(&w, j);
		if (st != CT_OK)
			return st;
	}
	for (int j = 0; j < w.m && w.ok; j++) {
		proj_bounds *b = &p->b[w.roots[j]];
		b->nlo = prune(&w, w.mlo[j], b->nlo, true);
		b->nhi = prune(&w, w.mhi[j], b->nhi, false);
		if (b->nlo > PROJ_MAX_TERMS || b->nhi > PROJ_MAX_TERMS) {
			char why[240];
			snprintf(why, sizeof why, "in this order loop '%s' would have more than %d bound terms",
			         k->indices[w.roots[j]].name, PROJ_MAX_TERMS);
			return fail(&w, w.roots[j], why);
		}
	}
	if (!w.ok)
		return fail(&w, w.roots[0], "the projected bounds of the band do not fit in 64 bits");
	return CT_OK;
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

bool proj_chain_violation(const ct_kernel *k, const proj_band *p, const int *order, int n,
                          int *x, int *y, int *r)
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
				if (aff_coef(s < b.nlo ? b.los[s] : b.his[s - b.nlo], AFF_INDEX, u) != 0) {
					*x = v;
					*y = order[q];
					*r = u;
					return true;
				}
		}
	}
	return false;
}
