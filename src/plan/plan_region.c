/* plan_region.c: construction of one cache region: buffer shape and layout, copies around the trigger, double buffering. */
#include "plan/plan_internal.h"
#include "ir/targets.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ one region */

static void classify(const blk *b, lt_prologue *pro, lt_epilogue *epi)
{
	bool dense = false;
	for (int i = 0; i < b->nw && !b->too_many_writes; i++) {
		const wr *w = &b->w[i];
		bool all = w->dense;
		for (int d = 0; d < b->rank && all; d++)
			all = bx_equal(w->lo[d], b->lo[d]) && bx_equal(w->hi[d], b->hi[d]);
		dense = dense || all;
	}
	if (!b->setw && !b->accum) {
		*pro = LT_PRO_COPY_IN;
		*epi = LT_EPI_NONE;
	} else if (!b->read && b->accum && !b->setw) {
		*pro = LT_PRO_ZERO_FILL;
		*epi = LT_EPI_REDUCE;
	} else if (!b->read && b->setw && !b->accum && dense && !b->inner_if) {
		*pro = LT_PRO_ZERO_FILL;
		*epi = LT_EPI_COPY_OUT;
	} else {
		*pro = LT_PRO_COPY_IN;
		*epi = LT_EPI_COPY_OUT;
	}
}

/* Level of an index in the order (1 = innermost). */
static int level_of(const pp *p, int index)
{
	int pos = pl_order_pos(p, index);
	return pos < 0 ? 0 : p->order_len - pos;
}

/* Slot term of multicache loop l (all its versions under the trigger). */
typedef struct mcloop {
	int index;
	int64_t step;
	aff slot;        /* TRIP(index) - base */
	const bx *trips; /* upper bound of the slot count */
	const bx *base;  /* the slot of the index's first value */
	int64_t slot_step;/* source elements the block moves per slot (-1 unknown) */
	bool affine;      /* the loop has affine bounds: one slot per value of its span [slo, shi] */
	bool span;        /* its copies run over that span (its bounds use an index they do not know) */
	const bx *slo, *shi;
} mcloop;

/* The last value of loop x over every iteration around it: an affine loop's span's end. */
static const bx *mc_last(pp *p, const lt_node *x)
{
	const bx *a, *z;
	if (!lt_affine_loop(x))
		return pl_loop_last(p, x);
	return pl_affine_span(p, x, &a, &z) ? z : NULL;
}

/* Upper bound of the slot count of index's loops under x: over every
 * version (main, tail) of the loop, floor(last / step) - base + 1. */
static const bx *max_trips(pp *p, const lt_node *x, int index, const bx *base, const bx *acc)
{
	if (x->kind == LT_LOOP && x->index == index) {
		const bx *last = pl_bxb(p, BX_FLOORDIV, mc_last(p, x), pl_bxc(p, x->step));
		const bx *tr = pl_bx_ub(p, pl_bxb(p, BX_ADD, pl_bxb(p, BX_SUB, last, base), pl_bxc(p, 1)), true);
		return acc ? pl_bxb(p, BX_MAX, acc, tr) : tr;
	}
	for (int i = 0; i < x->nkids; i++)
		acc = max_trips(p, x->kids[i], index, base, acc);
	for (int i = 0; i < x->nels; i++)
		acc = max_trips(p, x->els[i], index, base, acc);
	return acc;
}

static void make_mcloop(pp *p, const lt_node *trigger, const lt_node *loop, mcloop *m)
{
	int index = loop->index;
	const ir_index *ix = &p->t->indices[index];
	m->index = index;
	m->step = loop->step;
	const bx *base;
	m->affine = lt_affine_loop(loop);
	if (m->affine && pl_affine_span(p, loop, &m->slo, &m->shi))
		base = pl_bxb(p, BX_FLOORDIV, m->slo, pl_bxc(p, m->step));
	else if (ix->kind == IX_SPLIT)
		base = pl_bxc(p, 0);
	else
		base = pl_bxb(p, BX_FLOORDIV, bx_from_aff(p->a, p->k, ix->lo), pl_bxc(p, m->step));
	m->base = base;
	m->slot = pl_aff_plus(p, pl_aff_var(p, AFF_TRIP, index, 1), pl_bx_aff(p, base), -1);
	const bx *trips = max_trips(p, trigger, index, base, NULL);
	m->trips = trips ? trips : pl_bxc(p, 1);
}

/* The node list that replaces site node x: prologue, x (or its kids when
 * body_only: an element-level cache, inside loop x), epilogue; wrapped in region node r. */
static bool wrap(pp *p, lt_node *r, lt_node *const *pro, int npro, lt_node *x, bool body_only, lt_node *const *epi,
                 int nepi)
{
	int nb = body_only ? x->nkids : 1;
	int n = npro + nb + nepi;
	lt_node **v = ct_arena_alloc(p->a, sizeof *v * (size_t)(n + 1));
	if (!v)
		return pp_nomem(p);
	int m = 0;
	for (int i = 0; i < npro; i++)
		v[m++] = pro[i];
	for (int i = 0; i < nb; i++)
		v[m++] = body_only ? x->kids[i] : x;
	for (int i = 0; i < nepi; i++)
		v[m++] = epi[i];
	return pl_set_kids(p, r, v, m);
}

static lt_node *clone_tree(pp *p, const lt_node *x, lt_node *parent)
{
	lt_node *c = pl_new_node(p, x->kind, parent);
	if (!c)
		return NULL;
	*c = *x;
	c->parent = parent;
	if (x->nkids) {
		c->kids = ct_arena_alloc(p->a, sizeof *c->kids * (size_t)x->nkids);
		if (!c->kids)
			return pp_nomem(p), NULL;
		for (int i = 0; i < x->nkids; i++)
			if (!(c->kids[i] = clone_tree(p, x->kids[i], c)))
				return NULL;
	}
	if (x->nels) {
		c->els = ct_arena_alloc(p->a, sizeof *c->els * (size_t)x->nels);
		if (!c->els)
			return pp_nomem(p), NULL;
		for (int i = 0; i < x->nels; i++)
			if (!(c->els[i] = clone_tree(p, x->els[i], c)))
				return NULL;
	}
	return c;
}

/* Whether loop index v is in original index id's chain (its value is a term of id's). */
static bool in_chain_of(const pp *p, int id, int v)
{
	const ct_looptree *t = p->t;
	if (id < 0 || id >= p->k->nindices || !t->chain || !t->chain[id])
		return id == v;
	for (int m = 0; m < t->chain_len[id]; m++)
		if (t->chain[id][m] == v)
			return true;
	return false;
}

/* Substitute loop variable v by v + step (and its trip by trip + 1) in
 * every access under x: the block of the next iteration. An original index
 * whose chain holds v (the bounds of an affine slot loop in the copies)
 * moves by step too. */
static aff shift_aff(pp *p, aff x, int v, int64_t step)
{
	int64_t c = 0;
	for (int i = 0; i < x.n; i++) {
		if (x.t[i].kind == AFF_INDEX && in_chain_of(p, x.t[i].id, v))
			c += x.t[i].coef * step;
		if (x.t[i].id != v)
			continue;
		if (x.t[i].kind == AFF_LOOP)
			c += x.t[i].coef * step;
		else if (x.t[i].kind == AFF_TRIP)
			c += x.t[i].coef;
	}
	return c ? pl_aff_plus(p, x, aff_const(c), 1) : x;
}

/* The affine bound terms x[0..n) with v shifted by step (shift_aff), in the arena. */
static const aff *shift_terms(pp *p, const aff *x, int n, int v, int64_t step)
{
	if (n <= 0)
		return x;
	aff *r = ct_arena_alloc(p->a, sizeof *r * (size_t)n);
	if (!r)
		return pp_nomem(p), x;
	for (int i = 0; i < n; i++)
		r[i] = shift_aff(p, x[i], v, step);
	return r;
}

static void shift_tree(pp *p, lt_node *x, int v, int64_t step, int from, int to)
{
	if (x->kind == LT_STMT && x->stmt) {
		ir_node *s = ct_arena_alloc(p->a, sizeof *s);
		if (!s) {
			pp_nomem(p);
			return;
		}
		*s = *x->stmt;
		ir_expr *e[2] = {s->lhs, s->rhs};
		for (int j = 0; j < 2; j++) {
			if (!e[j] || e[j]->kind != EX_ACCESS)
				continue;
			int rank = p->t->arrays[e[j]->id].rank;
			aff sub[IR_MAX_RANK];
			for (int d = 0; d < rank; d++)
				sub[d] = shift_aff(p, e[j]->sub[d], v, step);
			ir_expr *n = pl_access_expr(p, e[j]->id == from ? to : e[j]->id, sub, rank);
			if (!n)
				return;
			e[j] = n;
		}
		s->lhs = e[0];
		s->rhs = e[1];
		x->stmt = s;
	}
	if (x->kind == LT_LOOP) { /* an affine slot loop of the copies (in_slot_loops) */
		x->dlo = shift_terms(p, x->dlo, x->ndlo, v, step);
		x->dhi = shift_terms(p, x->dhi, x->ndhi, v, step);
	}
	if (x->kind == LT_IF && x->guard) {
		aff *g = ct_arena_alloc(p->a, sizeof *g * (size_t)(x->nguard + 1));
		if (!g) {
			pp_nomem(p);
			return;
		}
		for (int i = 0; i < x->nguard; i++)
			g[i] = shift_aff(p, x->guard[i], v, step);
		x->guard = g;
	}
	for (int i = 0; i < x->nkids; i++)
		shift_tree(p, x->kids[i], v, step, from, to);
}

/* In a clone, region node `cache` with its prologue and body loses the
 * prologue (the peeled last iteration loads nothing). */
static bool drop_prologue(pp *p, lt_node *x, int cache, int npro, int nbody)
{
	if (x->kind == LT_CACHE && x->cache == cache && x->nkids == npro + nbody)
		return pl_set_kids(p, x, x->kids + npro, nbody);
	for (int i = 0; i < x->nkids; i++)
		if (!drop_prologue(p, x->kids[i], cache, npro, nbody))
			return false;
	for (int i = 0; i < x->nels; i++)
		if (!drop_prologue(p, x->els[i], cache, npro, nbody))
			return false;
	return true;
}

/* Whether x is a region node of a cache that this item copies from
 * (its source cache, that cache's source, ...). */
static bool in_source_chain(const pp *p, const lt_node *x)
{
	if (x->kind != LT_CACHE || x->cache < 0 || x->cache >= p->t->nregions)
		return false;
	int item = p->t->regions[x->cache].item;
	for (int c = p->it->src_cache; c >= 0; c = p->k->plan[c].src_cache)
		if (c == item)
			return true;
	return false;
}

/* The fills of affine loop P, one per lower term l of its range L = max(l, ...): each loop runs
 * P's range cut at l + 1, so it runs P's first value exactly where l is the largest term (L+1
 * itself, a max inside a min, is no bound); where several terms tie, the first block is loaded
 * once per tie. The first fill takes the prologue nodes pro[0..npro), the others copies.
 * Their count into *nf (fills has room for 1 + P->ndlo); false after an error. */
static bool affine_fills(pp *p, const lt_node *P, lt_node *const *pro, int npro, lt_node **fills, int *nf)
{
	int64_t c;
	bool lo_bx = !(bx_is_const(P->lo, &c) && c == LT_NO_LO), hi_bx = !(bx_is_const(P->hi, &c) && c == LT_NO_HI);
	*nf = 0;
	for (int t = lo_bx ? -1 : 0; t < P->ndlo; t++) {
		lt_node *f = pl_new_node(p, LT_LOOP, NULL);
		aff *v = ct_arena_alloc(p->a, sizeof *v * (size_t)(P->ndhi + 1));
		lt_node **kids = ct_arena_alloc(p->a, sizeof *kids * (size_t)(npro + 1));
		if (!f || !v || !kids)
			return pp_nomem(p);
		*f = *P;
		f->parent = NULL;
		f->tail = true; /* runs at most once */
		f->parallel = f->vector = f->unroll = false;
		f->unroll_by = 0;
		f->collapse = 0;
		f->nels = 0;
		f->els = NULL;
		for (int i = 0; i < P->ndhi; i++)
			v[i] = P->dhi[i];
		if (t < 0) {
			const bx *l1 = pl_bxb(p, BX_ADD, P->lo, pl_bxc(p, 1));
			f->hi = hi_bx ? pl_bxb(p, BX_MIN, P->hi, l1) : l1;
		} else {
			v[P->ndhi] = pl_aff_plus(p, P->dlo[t], aff_const(1), 1);
			f->dhi = v;
			f->ndhi = P->ndhi + 1;
		}
		for (int i = 0; i < npro; i++)
			if (!(kids[i] = *nf == 0 ? pro[i] : clone_tree(p, pro[i], NULL)))
				return false;
		if (!pl_set_kids(p, f, kids, npro))
			return false;
		fills[(*nf)++] = f;
	}
	return p->ok;
}

/* The terms of upper bound x over params: one per operand of its mins. */
static int min_terms(const bx *x)
{
	return x->kind == BX_MIN ? min_terms(x->a) + min_terms(x->b) : 1;
}

/* The guard u - P - step - 1 >= 0 (P + step < u: an iteration after this one). */
static aff next_guard(pp *p, const lt_node *P, aff u)
{
	aff g = pl_aff_plus(p, u, pl_aff_var(p, AFF_LOOP, P->index, 1), -1);
	return pl_aff_plus(p, g, aff_const(-P->step - 1), 1);
}

/* The guards of the terms of upper bound x over params into g from n; the count after them. */
static int next_guards_bx(pp *p, const lt_node *P, const bx *x, aff *g, int n)
{
	if (x->kind == BX_MIN)
		return next_guards_bx(p, P, x->b, g, next_guards_bx(p, P, x->a, g, n));
	g[n] = next_guard(p, P, pl_bx_aff(p, x));
	return n + 1;
}

/* Node c under an `if` that holds where affine loop P has an iteration after this one (P + step
 * below each upper term); NULL after an error. */
static lt_node *if_next(pp *p, const lt_node *P, lt_node *c)
{
	int64_t k;
	bool hi_bx = !(bx_is_const(P->hi, &k) && k == LT_NO_HI);
	int n = P->ndhi + (hi_bx ? min_terms(P->hi) : 0);
	aff *g = ct_arena_alloc(p->a, sizeof *g * (size_t)(n + 1));
	lt_node *gn = pl_new_node(p, LT_IF, NULL);
	if (!g || !gn)
		return g ? NULL : (pp_nomem(p), NULL);
	int m = hi_bx ? next_guards_bx(p, P, P->hi, g, 0) : 0;
	for (int i = 0; i < P->ndhi; i++)
		g[m++] = next_guard(p, P, P->dhi[i]);
	gn->guard = g;
	gn->nguard = m;
	return pl_set_kids(p, gn, &c, 1) && p->ok ? gn : NULL;
}

/*
 * Double buffering around loop P (the nearest loop around region node r
 * inside the regions of its source caches: the next block of a cache of a
 * cache can only be fetched while its parent's buffer holds it, so a
 * parent region between r and the loop leaves nothing to double buffer):
 *   fill:   for P in [lo, min(hi, lo+1)): the prologue into buf
 *   main:   for P in [lo, last): prefetch block(P+step) into tmp; body; tmp -> buf
 *   last:   for P in [max(lo, last), hi): body
 * An affine P (lower terms l.., L their max, upper terms H, any step) has no last value over
 * affine terms: one fill per lower term l, [L, min(H, l+1)) (affine_fills), and P keeps its
 * range, its prefetch and move under an `if` that holds where P + step < H (no last-iteration
 * clone).
 */
bool pl_double_buffer(pp *p, lt_region *rg, lt_node *r, int npro)
{
	/* the prologue is still r's first npro kids; whatever follows (the
	 * trigger, maybe wrapped by later caches) is the body */
	lt_node *const *pro = r->kids;
	int nbody = r->nkids - npro;
	if (nbody < 1)
		return pp_err(p, p->it->pos, "internal error: double buffer of cache '%s'%s", p->it->name, "");
	lt_node *P = r->parent;
	while (P && P->kind != LT_LOOP && !in_source_chain(p, P))
		P = P->parent;
	if (!P || P->kind != LT_LOOP)
		return true; /* nothing encloses the trigger: a plain cache (as Accera) */
	bool affine = lt_affine_loop(P); /* any target: its fills, prefetch and move are plain loops and ifs */
	ct_looptree *t = p->t;
	const ir_array *ba = &t->arrays[rg->buffer];
	const bx *ext[IR_MAX_RANK];
	for (int d = 0; d < ba->rank; d++)
		ext[d] = t->ext[rg->buffer * IR_MAX_RANK + d];
	char nm[300];
	snprintf(nm, sizeof nm, "%s_next", ba->name);
	int tmp = pl_new_storage(p, nm, ba->type, ba->rank, ext, ba->order);
	if (tmp < 0)
		return false;
	ba = &t->arrays[rg->buffer];
	rg->temp = tmp;
	rg->double_buffer = true;

	/* the peeled last iteration: a clone of P without prefetch (an affine P, whose last
	 * iteration is no range over affine terms, keeps it and tests for a next iteration) */
	lt_node *Plast = affine ? NULL : clone_tree(p, P, NULL);
	lt_node **seq = ct_arena_alloc(p->a, sizeof *seq * (size_t)(P->ndlo + 3));
	int nseq = 0;
	if ((!Plast && !affine) || !seq)
		return seq ? false : pp_nomem(p);
	if (affine) {
		if (!affine_fills(p, P, pro, npro, seq, &nseq))
			return false;
	} else {
		lt_node *fill = pl_new_node(p, LT_LOOP, NULL);
		const bx *last = pl_loop_last(p, P);
		if (!fill || !last)
			return false;
		fill->index = P->index;
		fill->step = P->step;
		fill->tail = true; /* runs at most once */
		if (!pl_set_kids(p, fill, pro, npro))
			return false;
		fill->lo = P->lo;
		fill->hi = pl_bxb(p, BX_MIN, P->hi, pl_bxb(p, BX_ADD, P->lo, pl_bxc(p, 1)));
		Plast->lo = pl_bxb(p, BX_MAX, P->lo, last);
		P->hi = last;
		seq[nseq++] = fill;
	}

	/* main: r's kids become prefetch, body, move */
	lt_node **kids = ct_arena_alloc(p->a, sizeof *kids * (size_t)(npro + nbody + 1));
	if (!kids)
		return pp_nomem(p);
	int n = 0;
	for (int i = 0; i < npro; i++) {
		lt_node *c = clone_tree(p, pro[i], NULL);
		if (!c)
			return false;
		shift_tree(p, c, P->index, P->step, rg->buffer, tmp);
		if (affine && !(c = if_next(p, P, c)))
			return false;
		kids[n++] = c;
	}
	for (int i = npro; i < npro + nbody; i++)
		kids[n++] = r->kids[i];
	int ord[IR_MAX_RANK];
	aff zero[IR_MAX_RANK];
	for (int d = 0; d < ba->rank; d++) {
		ord[d] = ba->order[d];
		zero[d] = aff_const(0);
	}
	side sb = {rg->buffer, 0, NULL, zero}, st = {tmp, 0, NULL, zero};
	lt_node *mv = pl_copy_nest(p, CP_IN, &sb, &st, ba->rank, ext, ord, NULL, NULL);
	if (!mv || (affine && !(mv = if_next(p, P, mv))))
		return false;
	kids[n++] = mv;
	if (!pl_set_kids(p, r, kids, n))
		return false;

	/* in the last-iteration clone, the matching region node keeps only the body */
	if (Plast && !drop_prologue(p, Plast, r->cache, npro, nbody))
		return false;

	/* P becomes [fill, P, Plast] inside a region node */
	lt_node *outer = pl_new_node(p, LT_CACHE, P->parent);
	lt_node **slot = pl_kid_slot(t, P);
	if (!outer || !slot)
		return outer ? pp_err(p, p->it->pos, "internal error: loop %s%s not in its parent", "", "") : false;
	outer->cache = r->cache;
	*slot = outer;
	seq[nseq++] = P;
	if (Plast)
		seq[nseq++] = Plast;
	return pl_set_kids(p, outer, seq, nseq);
}

/* Whether dimension d of a guarded block is clamped to the array: it does
 * not move (the whole array of a boundary stencil) and every bound is a
 * constant. */
static bool box_clamps(pp *p, const blk *b, int src, int d)
{
	int64_t v;
	return b->guarded && src < p->k->narrays && b->outer[d].n == 0 && bx_is_const(b->lo[d], &v) &&
	       bx_is_const(pl_blk_extent(p, b, d), &v) && bx_is_const(p->t->ext[src * IR_MAX_RANK + d], &v);
}

/* Start and extent of dimension d of a site's block. A guarded block
 * that does not move is clamped to the array where it can be
 * (box_clamps), so its halo never reaches outside it. */
static void site_box(pp *p, const blk *b, int src, int d, const bx **lo, const bx **ex)
{
	int64_t l0, e0, E;
	*lo = b->lo[d];
	*ex = pl_blk_extent(p, b, d);
	if (box_clamps(p, b, src, d) && bx_is_const(*lo, &l0) && bx_is_const(*ex, &e0) &&
	    bx_is_const(p->t->ext[src * IR_MAX_RANK + d], &E)) {
		int64_t l1 = l0 + b->outer[d].c, h1 = l1 + e0 - 1;
		if (l1 < 0)
			l1 = 0;
		if (h1 > E - 1)
			h1 = E - 1;
		*lo = pl_bxc(p, l1 - b->outer[d].c);
		*ex = pl_bxc(p, h1 >= l1 ? h1 - l1 + 1 : 0);
	}
}

/* Whether the copies of a site need bounds tests: a guarded block may
 * reach past the array (its halo at the edges) unless it is clamped in
 * every dimension; a block of a parent cache's buffer is never clamped
 * (the parent's place in the array moves with the loops). */
static bool site_guard(pp *p, const blk *b, int src)
{
	if (!b->guarded)
		return false;
	for (int d = 0; d < b->rank; d++)
		if (!box_clamps(p, b, src, d))
			return true;
	return false;
}

/* The root-array place of a parent buffer's region around site node x. */
static const bufsite *parent_site(const pp *p, int storage, const lt_node *x)
{
	for (int i = p->nbs - 1; i >= 0; i--) {
		const bufsite *b = &p->bs[i];
		if (b->storage != storage)
			continue;
		for (const lt_node *y = x; y; y = y->parent)
			if (y == b->node)
				return b;
	}
	return NULL;
}

/* Record where buffer buf of a site at node x lies in the root array: the
 * block starts at off[] of its source src (slot dimensions of a multicache
 * parent first). False when the parent's place is unknown. */
static bool note_bufsite(pp *p, int buf, int nmc, const lt_node *x, int src, const aff *off, int rank, bufsite *out)
{
	memset(out, 0, sizeof *out);
	out->storage = buf;
	out->node = x;
	if (src < p->k->narrays) {
		out->root = src;
		out->nslot = nmc;
		for (int d = 0; d < rank; d++)
			out->off[d] = off[d];
		return true;
	}
	const bufsite *ps = parent_site(p, src, x);
	if (!ps)
		return false;
	out->root = ps->root;
	out->nslot = nmc + ps->nslot;
	for (int d = ps->nslot; d < rank; d++)
		out->off[d - ps->nslot] = pl_aff_plus(p, ps->off[d - ps->nslot], off[d], 1);
	return true;
}

/* The loop over index around site x (a multicache loop's version there). */
const lt_node *pl_anc_loop(const lt_node *x, int index)
{
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_LOOP && y->index == index)
			return y;
	return NULL;
}

/* The storage the source is in under x: a cache of a cache copies from
 * the buffer of the parent region around it (main and tail regions of the
 * parent have different buffers). */
static int expr_source(const pp *p, const ir_expr *e)
{
	if (!e)
		return -1;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < p->nis_src && p->is_src[e->id])
		return e->id;
	for (int i = 0; i < e->nargs; i++) {
		int r = expr_source(p, e->args[i]);
		if (r >= 0)
			return r;
	}
	return -1;
}

static int site_source(const pp *p, const lt_node *x)
{
	if (x->stmt && !pl_is_copy(x)) {
		const ir_node *s = x->stmt;
		int r = expr_source(p, x->kind == LT_IF ? s->cond : s->rhs);
		if (r < 0 && x->kind == LT_STMT)
			r = expr_source(p, s->lhs);
		if (r >= 0)
			return r;
	}
	for (int i = 0; i < x->nkids; i++) {
		int r = site_source(p, x->kids[i]);
		if (r >= 0)
			return r;
	}
	for (int i = 0; i < x->nels; i++) {
		int r = site_source(p, x->els[i]);
		if (r >= 0)
			return r;
	}
	return -1;
}

/* Position of x among its parent's kids, -1 when it is not one. */
int pl_kid_pos(const lt_node *x)
{
	const lt_node *par = x->parent;
	if (!par)
		return -1;
	for (int i = 0; i < par->nkids; i++)
		if (par->kids[i] == x)
			return i;
	return -1;
}

/*
 * The region r (in the trigger loop's place, which is r's kid after npro
 * prologue nodes) also takes the later versions of that loop that sites
 * were folded from (fold_versions, plan_place.c) and the versions between: they move
 * from r's parent into r, right after the loop.
 */
static bool take_versions(pp *p, lt_node *r, const site *s, int ns, int npro)
{
	lt_node *par = r->parent;
	if (!par)
		return true;
	int pr = pl_kid_pos(r), last = -1;
	for (int i = 0; i < ns; i++)
		for (int q = pr + 1; pr >= 0 && q < par->nkids; q++)
			if (s[i].version && par->kids[q] == s[i].version && q > last)
				last = q;
	if (last < 0)
		return true;
	int nv = last - pr;
	lt_node **rk = ct_arena_alloc(p->a, sizeof *rk * (size_t)(r->nkids + nv));
	lt_node **pk = ct_arena_alloc(p->a, sizeof *pk * (size_t)(par->nkids - nv));
	if (!rk || !pk)
		return pp_nomem(p);
	int m = 0;
	for (int i = 0; i < r->nkids; i++) {
		rk[m++] = r->kids[i];
		if (i == npro)
			for (int q = pr + 1; q <= last; q++)
				rk[m++] = par->kids[q];
	}
	int pm = 0;
	for (int i = 0; i < par->nkids; i++)
		if (i <= pr || i > last)
			pk[pm++] = par->kids[i];
	return pl_set_kids(p, r, rk, m) && pl_set_kids(p, par, pk, pm);
}

/* What the steps of making one region share (pl_make_region). */
typedef struct rbuild {
	site *s; /* the sites sharing trigger s[0].trigger */
	int ns;
	lt_node *T;                   /* the trigger: the copies go around it */
	int src, rank;                /* the storage copied from, and its rank */
	mcloop mc[IR_MAX_RANK];       /* the multicache loops, outermost first */
	int nmc;
	const bx *shape[IR_MAX_RANK]; /* buffer extents: the slots, then the block */
	int border[IR_MAX_RANK];      /* buffer layout, most major first */
	lt_region rg;
	lt_node *r;    /* the region node */
	lt_node **slot;/* where r takes the trigger's place (NULL at element level) */
	int rid;       /* r's region */
	int buf;       /* the buffer storage */
	lt_node **pro, **epi; /* at most one prologue and one epilogue nest per site */
	int npro, nepi;
} rbuild;

/* The checker lets a temp be multicached (read by a later nest); its blocks
 * are copied ahead only if nothing under the trigger writes it. */
static bool check_multicached_temp(pp *p, const rbuild *b)
{
	const ir_plan_item *it = p->it;
	if (it->has_trigger && !ir_array_readonly(&p->t->arrays[it->root_array]) && b->T != b->s[0].node &&
	    pl_subtree_writes(p, b->T))
		return pp_err(p, it->trigger_opt.pos,
		              "multicache '%s': '%s' is written inside its trigger loop (a temp is "
		              "multicached only where it is only read)",
		              it->name, p->t->arrays[it->root_array].name);
	return true;
}

/* Multicache loops: on the path from the trigger down to the site (trigger
 * included), those that move the block. */
/* Whether index v is known where b's copies run (before the trigger): a loop outside the
 * trigger, or one of the multicache loops mc[0..j) (the copies' own loops outside loop j). */
static bool known_at_copies(const pp *p, const rbuild *b, int j, int v)
{
	for (int i = 0; i < j; i++)
		if (b->mc[i].index == v)
			return true;
	for (const lt_node *y = b->T->parent; y; y = y->parent)
		if (y->kind == LT_LOOP && y->index == v)
			return true;
	(void)p;
	return false;
}

/* Whether every index that the affine terms x[0..n) use is known where the copies run. */
static bool terms_known(const pp *p, const rbuild *b, int j, const aff *x, int n)
{
	const ct_looptree *t = p->t;
	for (int i = 0; i < n; i++)
		for (int q = 0; q < x[i].n; q++) {
			const aff_term *tm = &x[i].t[q];
			if (tm->kind == AFF_LOOP || tm->kind == AFF_TRIP) {
				if (!known_at_copies(p, b, j, tm->id))
					return false;
			} else if (tm->kind == AFF_INDEX) {
				if (tm->id < 0 || tm->id >= t->k->nindices || !t->chain || !t->chain[tm->id])
					return false;
				for (int m = 0; m < t->chain_len[tm->id]; m++)
					if (!known_at_copies(p, b, j, t->chain[tm->id][m]))
						return false;
			}
		}
	return true;
}

/* Whether loops x and y (two versions of one index's loop) run the same values: the same step
 * and the same bounds, over params and over enclosing indices. */
static bool same_loop_range(const lt_node *x, const lt_node *y)
{
	if (x->step != y->step || !bx_equal(x->lo, y->lo) || !bx_equal(x->hi, y->hi) ||
	    x->ndlo != y->ndlo || x->ndhi != y->ndhi)
		return false;
	for (int i = 0; i < x->ndlo; i++)
		if (!aff_equal(x->dlo[i], y->dlo[i]))
			return false;
	for (int i = 0; i < x->ndhi; i++)
		if (!aff_equal(x->dhi[i], y->dhi[i]))
			return false;
	return true;
}

/* Multicache loops with affine bounds (issue #31): one slot per value of the span; the copies
 * run the loop's own range where its bounds use only indices known there, else its span
 * (bounds-tested: the span may reach values no iteration takes), which is a lattice of the
 * loop's values only where it steps by 1 or starts at a bound over params. */
static bool affine_mcloops(pp *p, rbuild *b)
{
	bool any_span = false;
	for (int j = 0; j < b->nmc; j++) {
		mcloop *m = &b->mc[j];
		if (!m->affine)
			continue;
		const lt_node *l = pl_anc_loop(b->s[0].node, m->index);
		const char *name = p->t->indices[m->index].name;
		if (!l || !m->slo || !m->shi)
			return pp_err(p, p->it->pos,
			              "multicache '%s': the range of loop '%s' (affine bounds) over the loops around "
			              "it is not known, so its slots cannot be counted",
			              p->it->name, name);
		int64_t c;
		bool lo_params = !(bx_is_const(l->lo, &c) && c == LT_NO_LO) && l->ndlo == 0;
		if (terms_known(p, b, j, l->dlo, l->ndlo) && terms_known(p, b, j, l->dhi, l->ndhi))
			continue;
		if (l->step != 1 && !lo_params)
			return pp_err(p, p->it->pos,
			              "multicache '%s': loop '%s' has affine bounds that use an index the copies "
			              "before the trigger do not know, and steps from a bound over enclosing indices: "
			              "its slots cannot be copied over its span (place the trigger inside the loops its "
			              "bounds use)",
			              p->it->name, name);
		/* the copies over the span start from the first site's version of the loop; a
		 * main and a tail version of an outer split (a step that does not divide) share
		 * them only where this loop has the same range in both */
		for (int i = 1; i < b->ns; i++) {
			const lt_node *li = pl_anc_loop(b->s[i].node, m->index);
			if (li && li != l && !same_loop_range(li, l))
				return pp_err(p, p->it->pos,
				              "multicache '%s': loop '%s' has affine bounds that use an index the "
				              "copies before the trigger do not know, and runs as a main and a tail "
				              "version: its slots cannot be copied over its span (place the trigger "
				              "inside the loops its bounds use)",
				              p->it->name, name);
		}
		m->span = true;
		any_span = true;
	}
	for (int i = 0; any_span && i < b->ns; i++)
		b->s[i].b.guarded = true;
	return true;
}

static bool find_mcloops(pp *p, rbuild *b)
{
	const site *s0 = &b->s[0];
	b->nmc = 0;
	if (b->T == s0->node)
		return true;
	const lt_node *path[IR_MAX_DEPTH * 4];
	int np = 0;
	/* a site folded from a later version of the trigger loop lies
	 * under that version (s[0].version), not under T */
	for (const lt_node *y = s0->node->parent; y && np < IR_MAX_DEPTH * 4; y = y->parent) {
		if (y->kind == LT_LOOP)
			path[np++] = y;
		if (y == b->T || y == s0->version)
			break;
	}
	for (int i = np - 1; i >= 0; i--) {
		if (!pl_blk_uses_loop(&s0->b, path[i]->index))
			continue;
		if (b->nmc + b->rank >= IR_MAX_RANK)
			return pp_err(p, p->it->trigger_opt.pos,
			              "multicache '%s' would need more than 8 buffer dimensions%s", p->it->name, "");
		make_mcloop(p, b->T, path[i], &b->mc[b->nmc++]);
	}
	return affine_mcloops(p, b);
}

/* A buffer of more bytes than this lives on the heap in any case (the C
 * backend keeps temps up to 64 KiB on the stack), so sizing it at run time
 * costs nothing. */
#define PL_HEAP_BUFFER_BYTES 65536

/* Whether any site's block of b is guarded (may reach past its array). */
static bool any_guarded(const rbuild *b)
{
	for (int i = 0; i < b->ns; i++)
		if (b->s[i].b.guarded)
			return true;
	return false;
}

/* The value of dimension x with every runtime param at 0: what the split
 * sizes alone give it (INT64_MAX when it does not evaluate). */
static int64_t size_at_zero(pp *p, const bx *x)
{
	int64_t v;
	if (bx_is_const(x, &v))
		return v;
	int64_t *zero = ct_arena_alloc(p->a, sizeof *zero * (size_t)(p->k->nparams + 1));
	if (!zero)
		return INT64_MAX;
	memset(zero, 0, sizeof *zero * (size_t)(p->k->nparams + 1));
	bool ok = true;
	v = bx_eval(x, zero, &ok);
	return ok ? v : INT64_MAX;
}

/* 1 when loop y runs at least once, else 0 (over params); NULL when its
 * trip count is a constant. */
static const bx *loop_runs(pp *p, const lt_node *y)
{
	int64_t v;
	if (y && lt_affine_loop(y)) /* its range is per iteration: counted as running */
		return NULL;
	const bx *span = y ? pl_bxb(p, BX_SUB, y->hi, y->lo) : NULL;
	if (!span || bx_is_const(span, &v))
		return NULL;
	return pl_bxb(p, BX_MIN, pl_bxb(p, BX_MAX, span, pl_bxc(p, 0)), pl_bxc(p, 1));
}

/* The product of two 0-or-1 factors, NULL standing for 1. */
static const bx *and_runs(pp *p, const bx *x, const bx *y)
{
	return !x ? y : !y ? x : pl_bxb(p, BX_MIN, x, y);
}

/* Whether index is one of b's multicache loops. */
static bool is_mcloop(const rbuild *b, int index)
{
	for (int j = 0; j < b->nmc; j++)
		if (b->mc[j].index == index)
			return true;
	return false;
}

/* The slot count of multicache loop j as it is (over params, so evaluable
 * at run; the tail of a split over a runtime param stays symbolic where
 * max_trips takes its constant bound): over every version of its loop
 * under x, floor(last / step) - base + 1, times 0 where a version of a
 * multicache loop around it runs no iteration (the copies of its slots are
 * inside those loops: in_slot_loops). */
static const bx *exact_slots(pp *p, const rbuild *b, const lt_node *x, int j, const bx *acc)
{
	const mcloop *m = &b->mc[j];
	if (x->kind == LT_LOOP && x->index == m->index) {
		const bx *last = pl_bxb(p, BX_FLOORDIV, mc_last(p, x), pl_bxc(p, x->step));
		const bx *tr = pl_bxb(p, BX_ADD, pl_bxb(p, BX_SUB, last, m->base), pl_bxc(p, 1)), *g = NULL;
		for (const lt_node *y = x->parent; y && y != b->T->parent; y = y->parent)
			if (y->kind == LT_LOOP && is_mcloop(b, y->index))
				g = and_runs(p, g, loop_runs(p, y));
		if (g)
			tr = pl_bxb(p, BX_MUL, tr, g);
		return acc ? pl_bxb(p, BX_MAX, acc, tr) : tr;
	}
	for (int i = 0; i < x->nkids; i++)
		acc = exact_slots(p, b, x->kids[i], j, acc);
	for (int i = 0; i < x->nels; i++)
		acc = exact_slots(p, b, x->els[i], j, acc);
	return acc;
}

/* The largest extent of dimension d of any site's block as it is (over
 * params, so evaluable at run): what the copies and the accesses of the
 * buffer span, where the shape takes its constant bound. A site whose own
 * version of a multicache loop runs no iteration counts 0: its copies are
 * inside that loop (in_slot_loops), so it needs no room. */
static const bx *exact_extent(pp *p, const rbuild *b, int d)
{
	const bx *e = NULL;
	for (int i = 0; i < b->ns; i++) {
		const bx *lo0, *ex0, *g = NULL;
		site_box(p, &b->s[i].b, b->src, d, &lo0, &ex0);
		for (int j = 0; j < b->nmc; j++)
			g = and_runs(p, g, loop_runs(p, pl_anc_loop(b->s[i].node, b->mc[j].index)));
		if (g)
			ex0 = pl_bxb(p, BX_MUL, ex0, g);
		e = e ? pl_bxb(p, BX_MAX, e, ex0) : ex0;
	}
	return e;
}

/* 1 when every loop around the region runs at least once, else 0 (over
 * params); NULL when every one of them has a constant trip count. */
static const bx *runs_at_all(pp *p, const rbuild *b)
{
	const bx *r = NULL;
	for (const lt_node *y = b->s[0].element ? b->T : b->T->parent; y; y = y->parent)
		if (y->kind == LT_LOOP)
			r = and_runs(p, r, loop_runs(p, y));
	return r;
}

/* A buffer still over 64 KiB with the runtime params at 0 has its first
 * dimension multiplied by runs_at_all: 0 where a loop around the region
 * runs no iteration (the main version of a split wider than a runtime
 * extent), so the engines allocate nothing for a region that never runs. */
static void gate_by_runs(pp *p, rbuild *b, int64_t esz)
{
	int64_t n = esz;
	for (int j = 0; j < b->nmc + b->rank; j++) {
		int64_t v = size_at_zero(p, b->shape[j]);
		if (!ct_mul_ok(n, v < 1 ? 1 : v, &n))
			n = INT64_MAX;
	}
	const bx *r = n > PL_HEAP_BUFFER_BYTES ? runs_at_all(p, b) : NULL;
	if (r)
		b->shape[0] = pl_bxb(p, BX_MUL, b->shape[0], r);
}

/*
 * A large buffer's dimensions capped by what the run needs, where a split
 * far wider than a runtime extent would otherwise size it (a split of 2^32
 * over a runtime N sized a buffer for 2^32 columns whatever N is: out of
 * memory in both engines although check accepted it):
 * - a multicache slot dimension by the slot count itself (exact_slots: the
 *   tail of a split over a runtime param has a symbolic trip count whose
 *   constant bound is the split size);
 * - a block dimension by the source's extent where that is an expression
 *   (a runtime extent of the array, or of a parent cache's buffer), when
 *   every block is unguarded: it then lies inside its source (check proved
 *   every subscript in bounds, and a parent's buffer holds every element
 *   its region reads), so it is never wider than the source; else (a halo
 *   past the edges) by the block's extent itself, where it is an expression.
 * A dimension that is not a constant is capped only when the split sizes
 * alone make it a heap buffer (its value with the runtime params at 0).
 * A buffer that the split sizes alone still make large (a guarded block of
 * the main version of a split wider than the runtime extent: that version
 * does not run) is sized only where the loops around it run (gate_by_runs).
 * Small buffers keep their constant size (on the stack).
 */
static void cap_by_runtime_extents(pp *p, rbuild *b)
{
	int64_t esz = (int64_t)ct_dtype_size(p->t->arrays[b->src].type), n = esz, v;
	for (int j = 0; j < b->nmc + b->rank; j++)
		if (!bx_is_const(b->shape[j], &v) || !ct_mul_ok(n, v, &n))
			n = INT64_MAX;
	if (n <= PL_HEAP_BUFFER_BYTES)
		return;
	bool inside = !any_guarded(b);
	for (int j = 0; j < b->nmc + b->rank; j++) {
		const bx **s = &b->shape[j], *cap;
		bool cs = bx_is_const(*s, &v);
		if (!cs && size_at_zero(p, *s) <= PL_HEAP_BUFFER_BYTES / esz)
			continue;
		if (j < b->nmc)
			cap = exact_slots(p, b, b->T, j, NULL);
		else if (inside && !bx_is_const(p->t->ext[b->src * IR_MAX_RANK + j - b->nmc], &v))
			cap = p->t->ext[b->src * IR_MAX_RANK + j - b->nmc];
		else
			cap = exact_extent(p, b, j - b->nmc);
		if (!cap || bx_is_const(cap, &v) || bx_equal(cap, *s))
			continue;
		*s = cs ? pl_bxb(p, BX_MAX, pl_bxb(p, BX_MIN, *s, cap), pl_bxc(p, 1)) : pl_bxb(p, BX_MIN, *s, cap);
	}
	gate_by_runs(p, b, esz);
}

/* Buffer shape: the slots, then the largest block of any site. */
static void buffer_shape(pp *p, rbuild *b)
{
	for (int j = 0; j < b->nmc; j++)
		b->shape[j] = b->mc[j].trips;
	for (int d = 0; d < b->rank; d++) {
		const bx *e = NULL;
		for (int i = 0; i < b->ns; i++) {
			const bx *lo0, *ex0;
			site_box(p, &b->s[i].b, b->src, d, &lo0, &ex0);
			const bx *u = pl_bx_ub(p, ex0, true);
			e = e ? pl_bxb(p, BX_MAX, e, u) : u;
		}
		int64_t v;
		if (bx_is_const(e, &v) && v < 1)
			e = pl_bxc(p, 1);
		else if (!bx_is_const(e, &v))
			e = pl_bxb(p, BX_MAX, e, pl_bxc(p, 0));
		b->shape[b->nmc + d] = e;
	}
	cap_by_runtime_extents(p, b);
}

/* Buffer layout: the slot dimensions most major, then the requested order
 * or the source's (a layout of the root array given to a cache of a
 * multicache keeps the parent's slot dimensions in front). */
static void buffer_layout(pp *p, rbuild *b)
{
	const ir_plan_item *it = p->it;
	const ir_array *sa = &p->t->arrays[b->src];
	int nmc = b->nmc, rank = b->rank;
	for (int j = 0; j < nmc; j++)
		b->border[j] = j;
	const int *ord = it->has_layout ? it->order : sa->order;
	int extra = it->has_layout ? rank - p->t->arrays[it->root_array].rank : 0;
	for (int j = 0; j < rank; j++) {
		if (it->has_layout && extra > 0)
			b->border[nmc + j] = nmc + (j < extra ? sa->order[j] : it->order[j - extra] + extra);
		else
			b->border[nmc + j] = nmc + ord[j];
	}
}

/* Whether the region of b holds an affine loop: its trigger loop, or one below it (an
 * element-level region wraps only the trigger's body). */
static bool affine_in_region(const rbuild *b)
{
	for (int i = 0; i < b->ns; i++)
		if (b->s[i].version && lt_affine_below(b->s[i].version))
			return true;
	if (!b->s[0].element)
		return lt_affine_below(b->T) != NULL;
	for (int i = 0; i < b->T->nkids + b->T->nels; i++)
		if (lt_affine_below(i < b->T->nkids ? b->T->kids[i] : b->T->els[i - b->T->nkids]))
			return true;
	return false;
}

/* The region's record: where it sits, its buffer's shape and layout, and
 * what its copies do (sites that disagree get a copy-in and a copy-out). */
static void describe_region(pp *p, rbuild *b)
{
	const site *s = b->s;
	int nmc = b->nmc, rank = b->rank;
	lt_region *rg = &b->rg;
	memset(rg, 0, sizeof *rg);
	rg->item = p->item;
	rg->source = b->src;
	rg->buffer = b->src;
	rg->temp = -1;
	rg->index = s[0].element ? -1 : s[0].node->index;
	rg->level = s[0].element ? 0 : level_of(p, s[0].node->index);
	rg->trigger_index = s[0].element ? -1 : b->T->index;
	rg->trigger_level = s[0].element ? 0 : level_of(p, b->T->index);
	rg->rank = nmc + rank;
	rg->nmulti = nmc;
	bool id = true, rev = true;
	for (int j = 0; j < rank; j++) {
		id = id && b->border[nmc + j] == nmc + j;
		rev = rev && b->border[nmc + j] == nmc + rank - 1 - j;
	}
	for (int j = 0; j < nmc + rank; j++) {
		rg->shape[j] = b->shape[j];
		rg->order[j] = b->border[j];
	}
	rg->first_major = id;
	rg->last_major = rev && !id;
	classify(&s[0].b, &rg->prologue, &rg->epilogue);
	for (int i = 1; i < b->ns; i++) {
		lt_prologue pr;
		lt_epilogue ep;
		classify(&s[i].b, &pr, &ep);
		if (pr != rg->prologue || ep != rg->epilogue) {
			rg->prologue = LT_PRO_COPY_IN;
			rg->epilogue = rg->epilogue == LT_EPI_NONE && ep == LT_EPI_NONE ? LT_EPI_NONE : LT_EPI_COPY_OUT;
		}
	}
	/* strict=true keeps the order of the updates: the buffer starts from
	 * the array's values, which the updates then change one by one, as
	 * without the cache (zero_fill / reduce adds their sum at the end: a
	 * reassociation, docs/PLANS.md, section 4) */
	if ((p->it->strict || p->k->strict) && rg->epilogue == LT_EPI_REDUCE) {
		rg->prologue = LT_PRO_COPY_IN;
		rg->epilogue = LT_EPI_COPY_OUT;
	}
	/* a zero-filled block is written back whole: every element must be set in the region, and
	 * a set under an affine loop may run no iteration (k: 0 .. i at i = 0), or cover only the
	 * triangle of the block's box: copy the block in (issue #31) */
	if (rg->prologue == LT_PRO_ZERO_FILL && rg->epilogue == LT_EPI_COPY_OUT && affine_in_region(b))
		rg->prologue = LT_PRO_COPY_IN;
}

/* Source elements the block moves per slot of each multicache loop (-1 when
 * a stride is not a constant): the thrifty test needs them. */
static void slot_steps(pp *p, const rbuild *b, int64_t *slot_step)
{
	int64_t sst[IR_MAX_RANK];
	for (int d = 0; d < IR_MAX_RANK; d++)
		sst[d] = -1;
	pl_source_strides(p, b->src, sst);
	const blk *b0 = &b->s[0].b;
	for (int j = 0; j < b->nmc; j++) {
		int64_t tot = 0;
		bool known = true;
		for (int d = 0; d < b->rank && known; d++) {
			int64_t c = 0;
			const aff *o = &b0->outer[d];
			for (int i = 0; i < o->n; i++)
				if (o->t[i].id == b->mc[j].index)
					c += o->t[i].kind == AFF_LOOP ? o->t[i].coef * b->mc[j].step : o->t[i].coef;
			if (c)
				known = sst[d] >= 0 && ct_mul_ok(c, sst[d], &c) && ct_add_ok(tot, c, &tot);
		}
		slot_step[j] = known ? tot : -1;
	}
}

/* Thrifty: whether the copy would be the source itself (then elided). Only
 * for one site, or one and its copies in later versions. */
static bool thrifty_elides(pp *p, const rbuild *b)
{
	bool one = true;
	for (int i = 1; i < b->ns; i++)
		one = one && b->s[i].version;
	if (!p->it->thrifty || !one)
		return false;
	int64_t slot_step[IR_MAX_RANK];
	slot_steps(p, b, slot_step);
	const bx *bext[IR_MAX_RANK];
	/* the slot counts as the loops bound them, before any cap of the
	 * buffer (cap_by_runtime_extents) */
	for (int j = 0; j < b->nmc; j++)
		bext[j] = b->mc[j].trips;
	for (int d = 0; d < b->rank; d++) {
		const bx *lo0;
		site_box(p, &b->s[0].b, b->src, d, &lo0, &bext[b->nmc + d]);
	}
	return pl_elidable(p, b->src, b->rank, b->nmc, slot_step, bext, b->border);
}

/* The region node around the trigger (element level: inside the loop), and
 * its record in the tree's regions; r is not linked in yet. */
static bool add_region_node(pp *p, rbuild *b)
{
	ct_looptree *t = p->t;
	bool elem = b->s[0].element;
	b->r = pl_new_node(p, LT_CACHE, elem ? b->T : b->T->parent);
	b->slot = elem ? NULL : pl_kid_slot(t, b->T);
	if (!b->r || (!b->slot && !elem))
		return b->r ? pp_err(p, p->it->pos, "internal error: cache '%s'%s has no place in the tree", p->it->name, "")
		            : false;
	lt_region *v = pl_arena_grow(p, t->regions, t->nregions, sizeof *v);
	if (!v)
		return false;
	b->rid = t->nregions;
	b->r->cache = b->rid;
	b->rg.node = b->r;
	v[b->rid] = b->rg;
	t->regions = v;
	t->nregions++;
	return true;
}

/* The buffer, and room for the copy nests. */
static bool make_buffer(pp *p, rbuild *b)
{
	char nm[300];
	snprintf(nm, sizeof nm, "%s", p->it->name);
	b->buf = pl_new_storage(p, nm, p->t->arrays[b->src].type, b->nmc + b->rank, b->shape, b->border);
	if (b->buf < 0)
		return false;
	p->t->regions[b->rid].buffer = b->buf;
	b->pro = ct_arena_alloc(p->a, sizeof *b->pro * (size_t)(b->ns + 1));
	b->epi = ct_arena_alloc(p->a, sizeof *b->epi * (size_t)(b->ns + 1));
	if (!b->pro || !b->epi)
		return pp_nomem(p);
	b->npro = b->nepi = 0;
	return true;
}

/* Whether site i's copies repeat site j's: the same block at the same place
 * in every multicache loop (sites under versions of a loop that does not
 * move the block). */
static bool same_copies(pp *p, const rbuild *b, int j, int i)
{
	const blk *bi = &b->s[i].b, *bj = &b->s[j].b;
	for (int d = 0; d < b->rank; d++)
		if (!bx_equal(pl_blk_extent(p, bj, d), pl_blk_extent(p, bi, d)) || !bx_equal(bj->lo[d], bi->lo[d]) ||
		    !aff_equal(bj->outer[d], bi->outer[d]))
			return false;
	for (int q = 0; q < b->nmc; q++) {
		const lt_node *x = pl_anc_loop(b->s[j].node, b->mc[q].index);
		const lt_node *y = pl_anc_loop(b->s[i].node, b->mc[q].index);
		if (!x || !y || !bx_equal(x->lo, y->lo) || !bx_equal(x->hi, y->hi))
			return false;
	}
	return true;
}

/* The fill c of site i inside the multicache slot loops (copies of the
 * site's own versions of those loops); NULL after an error. */
static lt_node *in_slot_loops(pp *p, const rbuild *b, int i, lt_node *c)
{
	for (int j = b->nmc - 1; j >= 0 && c; j--) {
		const lt_node *l = pl_anc_loop(b->s[i].node, b->mc[j].index);
		lt_node *w = pl_new_node(p, LT_LOOP, NULL);
		if (!w || !l) {
			pp_nomem(p);
			return NULL;
		}
		w->index = l->index;
		w->lo = l->lo;
		w->hi = l->hi;
		w->step = l->step;
		w->tail = l->tail;
		if (b->mc[j].span) { /* the span, from its first value (affine_mcloops) */
			w->lo = b->mc[j].slo;
			w->hi = pl_bxb(p, BX_ADD, b->mc[j].shi, pl_bxc(p, 1));
		} else if (b->mc[j].affine) {
			w->ndlo = l->ndlo;
			w->dlo = l->dlo;
			w->ndhi = l->ndhi;
			w->dhi = l->dhi;
		}
		if (!pl_set_kids(p, w, &c, 1))
			return NULL;
		c = w;
	}
	return c;
}

/* Where site i's block lies in the root array, recorded for the bounds
 * tests of guarded copies, here and in caches of this cache; *placed false
 * when the parent's place is unknown. */
static bool note_site(pp *p, const rbuild *b, int i, const aff *off, bufsite *here, bool *placed)
{
	*placed = note_bufsite(p, b->buf, b->nmc, b->s[i].node, b->src, off, b->rank, here);
	if (!*placed)
		return true;
	bufsite *bv = pl_arena_grow(p, p->bs, p->nbs, sizeof *bv);
	if (!bv)
		return false;
	bv[p->nbs] = *here;
	p->bs = bv;
	p->nbs++;
	return true;
}

/* Site i: its accesses rewritten to the buffer, and its prologue and
 * epilogue nests (once per distinct site under a multicache or versions). */
static bool site_copies(pp *p, rbuild *b, int i)
{
	int nmc = b->nmc, rank = b->rank, src = b->src;
	rwmap m;
	memset(&m, 0, sizeof m);
	m.buffer = b->buf;
	m.nslot = nmc;
	for (int j = 0; j < nmc; j++)
		m.slot[j] = b->mc[j].slot;
	const blk *bi = &b->s[i].b;
	aff base[IR_MAX_RANK], zero[IR_MAX_RANK];
	const bx *cext[IR_MAX_RANK];
	for (int d = 0; d < rank; d++) {
		const bx *lo, *ex;
		site_box(p, bi, src, d, &lo, &ex);
		m.off[d] = pl_aff_plus(p, bi->outer[d], pl_bx_aff(p, lo), 1);
		base[d] = m.off[d];
		zero[d] = aff_const(0);
		cext[d] = ex;
	}
	bufsite here;
	bool placed;
	if (!note_site(p, b, i, m.off, &here, &placed))
		return false;
	aff groot[IR_MAX_RANK];
	gspec gs = {here.root, 0, groot};
	const gspec *guard = NULL;
	if (site_guard(p, bi, src) && placed) {
		/* the copied element d is root element (root offset of the
		 * source) + base[d] + c_d: the source's own root offset */
		gs.nskip = src < p->k->narrays ? 0 : here.nslot - nmc;
		for (int d = gs.nskip; d < rank; d++)
			groot[d - gs.nskip] = pl_aff_plus(p, here.off[d - gs.nskip], m.off[d], -1);
		guard = &gs;
	}
	pl_rw_tree(p, &m, b->s[i].node);
	bool dup = false;
	for (int j = 0; j < i && !dup; j++)
		dup = same_copies(p, b, j, i);
	if (dup && (nmc > 0 || b->s[i].version))
		return true;
	side bs = {b->buf, nmc, m.slot, zero}, as = {src, 0, NULL, base};
	int sord[IR_MAX_RANK], bord[IR_MAX_RANK];
	for (int j = 0; j < rank; j++) {
		sord[j] = p->t->arrays[src].order[j];
		bord[j] = b->border[nmc + j] - nmc;
	}
	if (b->rg.prologue != LT_PRO_NONE) {
		/* fills walk the buffer in its layout (stores in sequence, the
		 * loads strided where the layout transposes: BLIS's packing
		 * order); write-backs walk the array in its own */
		lt_node *c = pl_copy_nest(p, b->rg.prologue == LT_PRO_COPY_IN ? CP_IN : CP_ZERO, &bs, &as, rank, cext,
		                          bord, guard, NULL);
		c = in_slot_loops(p, b, i, c);
		if (!c)
			return false;
		b->pro[b->npro++] = c;
	}
	if (b->rg.epilogue != LT_EPI_NONE) {
		lt_node *c = pl_copy_nest(p, b->rg.epilogue == LT_EPI_REDUCE ? CP_REDUCE : CP_OUT, &bs, &as, rank, cext,
		                          sord, guard, NULL);
		if (!c)
			return false;
		b->epi[b->nepi++] = c;
	}
	return true;
}

/* Double buffering is applied when every cache is placed, so that peeling
 * the loop around the trigger does not split other caches' regions. */
static bool queue_double_buffer(pp *p, const rbuild *b)
{
	pending *d = pl_arena_grow(p, p->db, p->ndb, sizeof *d);
	if (!d)
		return false;
	d[p->ndb].region = b->rid;
	d[p->ndb].node = b->r;
	d[p->ndb].npro = b->npro;
	d[p->ndb].item = p->item;
	p->db = d;
	p->ndb++;
	return true;
}

/* Link region node r in: around the trigger's body (element level) or in the
 * trigger's place, with the prologue and epilogue nests around it. */
static bool link_region(pp *p, rbuild *b)
{
	if (b->s[0].element)
		return wrap(p, b->r, b->pro, b->npro, b->T, true, b->epi, b->nepi) && pl_set_kids(p, b->T, &b->r, 1);
	*b->slot = b->r;
	return wrap(p, b->r, b->pro, b->npro, b->T, false, b->epi, b->nepi) &&
	       take_versions(p, b->r, b->s, b->ns, b->npro);
}

/* Make one region for the sites sharing trigger s[0].trigger: find its
 * multicache loops, size and lay out the buffer, describe the region, test
 * thrifty elision, then rewrite each site and place its copies. */
bool pl_make_region(pp *p, site *s, int ns)
{
	rbuild b;
	memset(&b, 0, sizeof b);
	b.s = s;
	b.ns = ns;
	b.T = s[0].trigger;
	b.rank = s[0].b.rank;
	b.src = site_source(p, s[0].node);
	if (b.src < 0)
		b.src = p->src_store;
	if (!check_multicached_temp(p, &b) || !find_mcloops(p, &b))
		return false;
	buffer_shape(p, &b);
	buffer_layout(p, &b);
	describe_region(p, &b);
	b.rg.elided = p->it->packed == PACK_NONE && thrifty_elides(p, &b); /* a packed copy is never the source */
	if (!add_region_node(p, &b))
		return false;
	if (b.rg.elided)
		return link_region(p, &b); /* no buffer, no copies: the region only marks the place */
	if (!make_buffer(p, &b))
		return false;
	for (int i = 0; i < ns && p->ok; i++)
		if (!site_copies(p, &b, i))
			return false;
	if (!p->ok || (p->it->packed != PACK_NONE && !pl_pack_region(p, b.rid, s, ns, b.pro, b.npro)))
		return false;
	if (!link_region(p, &b))
		return false;
	/* element level: the region is inside the loop, there is no loop around it to peel */
	if (p->it->double_buffer && b.npro > 0 && !s[0].element)
		return queue_double_buffer(p, &b);
	return true;
}
