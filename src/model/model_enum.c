/* model_enum.c: the cache model's partial enumeration: the reuse inside every instance of one
 * node counted from that instance's accesses, for nodes whose analysis costs more than that. */
#include "model/model_int.h"

/*
 * The analysis of a node (node_parts) splits its reuse until each piece's stack distance is on
 * one side of every capacity. Where distances of one reuse vary across a capacity at a fine
 * grain (small, odd extents: rows that start at every residue of the line, tiles that leave
 * tails), that splitting goes down to single iterations and costs far more than the node's
 * accesses. Such a node is counted instead the way HayStack handles what it cannot express
 * (partial enumeration): each instance of the node (each value of the enclosing counters) has
 * its accesses walked in order, in the model's own terms (the model tree's affine accesses),
 * and each access that finds its line earlier in the same instance gets its exact stack
 * distance (the distinct lines since: marks after its previous access, see enumr) and
 * the kind of its reuse (the same statement instance, an earlier sibling, or carried by a loop
 * d iterations back): exactly the reuse the node's analysis would have partitioned. Reuse
 * whose source lies outside the instance is the enclosing nodes' and stays analytic.
 */

/* Most accesses of one instance walked (its line table lives in memory: up to 48 MiB), and
 * most instances of a node (the table's generations count them). */
#define ENUM_MAX_TRACE (1 << 20)
#define ENUM_MAX_INSTANCES ((int64_t)1 << 31)

/* One group of enumerated reuses: the same array, kind, node and delta, with distances between
 * the same two capacities. */
typedef struct egroup {
	int array;
	model_reuse kind;
	const mnode *node;
	int64_t delta;     /* MR_CARRIED: iterations back; MR_FAR: the most */
	int bucket;        /* capacities at or below the distances */
	int64_t count, sum, lo, hi;
} egroup;

/* A loop on the path from the node down to the current access. */
typedef struct eframe {
	const mnode *y;
	int64_t exec_start; /* time of this execution's first access */
	int64_t *iter_first; /* time of each iteration's first access (so far) */
	int64_t cap;         /* of iter_first, kept from one execution to the next */
} eframe;

/* A line of the table: its key, and the time and the slot of its last access; valid where gen
 * is the current instance's. */
typedef struct eline {
	uint64_t key;
	int64_t last;
	int32_t slot;
	uint32_t gen;
} eline;

typedef struct enumr {
	model *m;
	int64_t t[MODEL_MAX_DEPTH];
	int64_t time;
	eline *tab;
	int64_t capt;
	uint32_t cur;
	int32_t *live;     /* the table entries of the instance's lines (nlive) */
	int64_t nlive, caplive;
	/* The marks: one at the slot of each live line's last access, slots handed out in time
	 * order (next) and renumbered when they run out (so there are about twice as many as live
	 * lines, not the instance's length, and they stay in the L1 cache). A bit per slot, and a
	 * Fenwick tree over the bit counts of the 64-slot words: the lines touched after a slot
	 * are the marks after it. owner[slot]: the table entry that took it. */
	uint64_t *bits;
	int32_t *wfen;
	int32_t *owner;
	int64_t nslot, nword, next;
	/* the group an access site found last (most accesses find the same one again) */
	int hint[1024];
	eframe fr[MODEL_MAX_DEPTH];
	int nf;
	egroup *g;
	int ng, capg;
	int *gidx;         /* hash index of the groups: -1 empty (2 capg entries) */
	int lshift;        /* log2 of the line */
	int64_t *caps;     /* sorted capacities of the line size */
	int ncaps;
	int64_t weight;    /* instances the walked one stands for */
} enumr;

static void word_add(enumr *e, int64_t w, int32_t v)
{
	for (w++; w <= e->nword; w += w & -w)
		e->wfen[w - 1] += v;
}

/* Marks in the words [0, w). */
static int64_t word_prefix(const enumr *e, int64_t w)
{
	int64_t s = 0;
	for (; w > 0; w -= w & -w)
		s += e->wfen[w - 1];
	return s;
}

static void mark(enumr *e, int64_t i, int32_t owner)
{
	e->bits[i >> 6] |= 1ULL << (i & 63);
	e->owner[i] = owner;
	word_add(e, i >> 6, 1);
}

static void unmark(enumr *e, int64_t i)
{
	e->bits[i >> 6] &= ~(1ULL << (i & 63));
	word_add(e, i >> 6, -1);
}

/* Bits set in x (the builtin is a library call without -mpopcnt). */
static int64_t bit_count(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
	return (int64_t)((x * 0x0101010101010101ULL) >> 56);
}

/* Marks after slot i (of `total`). */
static int64_t marks_after(const enumr *e, int64_t i, int64_t total)
{
	int64_t w = i >> 6;
	uint64_t rest = (i & 63) == 63 ? 0 : e->bits[w] >> ((i & 63) + 1);
	return bit_count(rest) + total - word_prefix(e, w + 1);
}

static uint64_t line_hash(uint64_t k)
{
	k ^= k >> 31;
	k *= 0x9E3779B97F4A7C15ULL;
	return k ^ (k >> 29);
}

/* Twice the table (the live list follows the entries to their new places). */
static bool table_grow(enumr *e)
{
	int64_t cap = e->capt ? 2 * e->capt : 4096;
	eline *tab = calloc((size_t)cap, sizeof *tab);
	if (!tab)
		return mdl_fail(e->m, CT_ERR_NOMEM, "out of memory");
	for (int64_t k = 0; k < e->nlive; k++) {
		const eline *l = &e->tab[e->live[k]];
		int64_t j = (int64_t)(line_hash(l->key) & (uint64_t)(cap - 1));
		while (tab[j].gen == e->cur)
			j = (j + 1) & (cap - 1);
		tab[j] = *l;
		e->live[k] = (int32_t)j;
		/* a line with an access owns the slot of its mark */
		if (l->last >= 0)
			e->owner[l->slot] = (int32_t)j;
	}
	free(e->tab);
	e->tab = tab;
	e->capt = cap;
	return true;
}

/* The entry of line k: found, or new (and live) with gen current and no access yet (last -1). */
static eline *table_get(enumr *e, uint64_t k)
{
	if (e->nlive == e->caplive) {
		int64_t cap = e->caplive ? 2 * e->caplive : 1024;
		int32_t *v = realloc(e->live, sizeof *v * (size_t)cap);
		if (!v) {
			mdl_fail(e->m, CT_ERR_NOMEM, "out of memory");
			return NULL;
		}
		e->live = v;
		e->caplive = cap;
	}
	if (2 * (e->nlive + 1) > e->capt && !table_grow(e))
		return NULL;
	int64_t j = (int64_t)(line_hash(k) & (uint64_t)(e->capt - 1));
	for (; e->tab[j].gen == e->cur; j = (j + 1) & (e->capt - 1))
		if (e->tab[j].key == k)
			return &e->tab[j];
	e->tab[j] = (eline){k, -1, 0, e->cur};
	e->live[e->nlive++] = (int32_t)j;
	return &e->tab[j];
}

static int bucket_of(const enumr *e, int64_t dist)
{
	int b = 0;
	while (b < e->ncaps && e->caps[b] <= dist)
		b++;
	return b;
}

static bool group_is(const egroup *h, int array, model_reuse kind, const mnode *node, int64_t kd, int b)
{
	return h->array == array && h->kind == kind && h->node == node && h->bucket == b &&
	       (h->kind == MR_FAR ? 0 : h->delta) == kd;
}

static uint64_t group_hash(int array, model_reuse kind, const mnode *node, int64_t kd, int b)
{
	uint64_t h = (uint64_t)(uintptr_t)node * 0x9E3779B97F4A7C15ULL;
	h ^= ((uint64_t)array << 40 ^ (uint64_t)kind << 32 ^ (uint64_t)b << 24 ^ (uint64_t)kd) * 0xBF58476D1CE4E5B9ULL;
	return h ^ (h >> 31);
}

/* Room for one more group, the hash index rebuilt twice as large. */
static bool groups_grow(enumr *e)
{
	int cap = e->capg ? 2 * e->capg : 64;
	egroup *v = realloc(e->g, sizeof *v * (size_t)cap);
	int *idx = malloc(sizeof *idx * (size_t)(2 * cap));
	if (v)
		e->g = v;
	if (!v || !idx) {
		free(idx);
		return mdl_fail(e->m, CT_ERR_NOMEM, "out of memory");
	}
	free(e->gidx);
	e->gidx = idx;
	e->capg = cap;
	for (int i = 0; i < 2 * cap; i++)
		idx[i] = -1;
	for (int i = 0; i < e->ng; i++) {
		const egroup *h = &e->g[i];
		uint64_t j = group_hash(h->array, h->kind, h->node, h->kind == MR_FAR ? 0 : h->delta, h->bucket);
		for (j &= (uint64_t)(2 * cap - 1); idx[j] >= 0; j = (j + 1) & (uint64_t)(2 * cap - 1))
			;
		idx[j] = i;
	}
	return true;
}

static bool add_reuse(enumr *e, const macc *site, int array, model_reuse kind, const mnode *node,
                      int64_t delta, int64_t dist)
{
	int64_t kd = kind == MR_FAR ? 0 : delta;
	int b = bucket_of(e, dist);
	egroup *g = NULL;
	int *hint = &e->hint[((uintptr_t)site >> 4) & 1023];
	if (*hint < e->ng && group_is(&e->g[*hint], array, kind, node, kd, b))
		g = &e->g[*hint];
	if (!g && e->capg) {
		uint64_t mask = (uint64_t)(2 * e->capg - 1), j = group_hash(array, kind, node, kd, b) & mask;
		for (; e->gidx[j] >= 0 && !g; j = (j + 1) & mask)
			if (group_is(&e->g[e->gidx[j]], array, kind, node, kd, b))
				g = &e->g[e->gidx[j]];
	}
	if (!g) {
		if (e->ng == e->capg && !groups_grow(e))
			return false;
		uint64_t mask = (uint64_t)(2 * e->capg - 1), j = group_hash(array, kind, node, kd, b) & mask;
		while (e->gidx[j] >= 0)
			j = (j + 1) & mask;
		e->gidx[j] = e->ng;
		g = &e->g[e->ng++];
		*g = (egroup){array, kind, node, delta, b, 0, 0, dist, dist};
	}
	*hint = (int)(g - e->g);
	g->count += e->weight;
	g->sum += dist * e->weight;
	g->lo = dist < g->lo ? dist : g->lo;
	g->hi = dist > g->hi ? dist : g->hi;
	if (kind == MR_FAR && delta > g->delta)
		g->delta = delta;
	return true;
}

/* The iteration of frame f that time p lies in (p within its current execution). */
static int64_t iter_of(const eframe *f, int64_t cur, int64_t p)
{
	int64_t lo = 0, hi = cur;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (f->iter_first[mid] <= p)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Record the reuse of an access of statement s (execution from time s0) whose line was last
 * touched at time p, at stack distance dist: its kind from where p lies on the path. */
static bool classify(enumr *e, const mnode *s, const macc *ac, int64_t s0, int64_t p, int64_t dist)
{
	int array = ac->array;
	if (p >= s0)
		return add_reuse(e, ac, array, MR_STMT, s, 0, dist);
	for (int f = e->nf - 1; f >= 0; f--) {
		const eframe *fr = &e->fr[f];
		if (p < fr->exec_start)
			continue;
		int64_t cur = e->t[fr->y->depth];
		if (p >= fr->iter_first[cur])
			return add_reuse(e, ac, array, MR_SIBLING, fr->y, 0, dist);
		int64_t d = cur - iter_of(fr, cur, p);
		return add_reuse(e, ac, array, d <= MODEL_MAX_DELTA ? MR_CARRIED : MR_FAR, fr->y, d, dist);
	}
	/* before every loop on the path: an earlier kid of the run */
	return add_reuse(e, ac, array, MR_SIBLING, &e->m->root, 0, dist);
}

/* Give the marked slots the slots 0 .. k-1 in their order, with twice as many slots as that
 * (at least 1024). */
static bool renumber(enumr *e)
{
	int64_t cap = 2 * e->nlive + 1024;
	if (cap > e->nslot) {
		cap = (cap + 63) & ~(int64_t)63;
		uint64_t *bits = realloc(e->bits, sizeof *bits * (size_t)(cap / 64));
		int32_t *wfen = realloc(e->wfen, sizeof *wfen * (size_t)(cap / 64));
		int32_t *owner = realloc(e->owner, sizeof *owner * (size_t)cap);
		if (bits)
			e->bits = bits;
		if (wfen)
			e->wfen = wfen;
		if (owner)
			e->owner = owner;
		if (!bits || !wfen || !owner)
			return mdl_fail(e->m, CT_ERR_NOMEM, "out of memory");
		/* the new words hold no marks */
		memset(e->bits + e->nword, 0, sizeof *bits * (size_t)(cap / 64 - e->nword));
		e->nslot = cap;
		e->nword = cap / 64;
	}
	/* the marks in slot order move down to 0 .. k-1 (k <= a mark's old slot: in place) */
	int64_t k = 0;
	for (int64_t w = 0; w < e->nword; w++) {
		uint64_t b = e->bits[w];
		e->bits[w] = 0;
		for (; b; b &= b - 1) {
			int64_t i = w * 64 + __builtin_ctzll(b);
			int32_t o = e->owner[i];
			e->owner[k] = o;
			e->tab[o].slot = (int32_t)k++;
		}
	}
	for (int64_t i = 0; i < k; i++)
		e->bits[i >> 6] |= 1ULL << (i & 63);
	/* the word counts' tree: node w covers words (w - lowbit(w), w] */
	for (int64_t w = 1; w <= e->nword; w++) {
		int64_t lo = (w - (w & -w)) * 64, hi = w * 64 < k ? w * 64 : k;
		e->wfen[w - 1] = (int32_t)(hi > lo ? hi - lo : 0);
	}
	e->next = k;
	return true;
}

/* Forget the instance's lines: no marks, a new generation for the table. */
static void instance_end(enumr *e)
{
	memset(e->bits, 0, sizeof *e->bits * (size_t)e->nword);
	memset(e->wfen, 0, sizeof *e->wfen * (size_t)e->nword);
	e->nlive = 0;
	e->next = 0;
	e->cur++;
}

static bool walk_stmt(enumr *e, const mnode *s)
{
	int64_t s0 = e->time;
	for (int i = 0; i < s->nacc; i++) {
		const macc *ac = &s->acc[i];
		int a = ac->array;
		const int64_t *af = s->aff + i * (s->depth + 1);
		int64_t addr = af[0];
		for (int j = 0; j < s->depth; j++)
			addr += af[1 + j] * e->t[j];
		/* the line is a power of two: an arithmetic shift floors */
		int64_t line = addr >> e->lshift;
		uint64_t k = (uint64_t)a << 56 ^ ((uint64_t)line & ((1ULL << 56) - 1));
		eline *l = table_get(e, k);
		if (!l || (e->next == e->nslot && !renumber(e)))
			return false;
		int64_t now = e->time++;
		if (l->last >= 0) {
			/* the live lines whose last access is after this line's */
			int64_t dist = marks_after(e, l->slot, e->nlive);
			if (!classify(e, s, ac, s0, l->last, dist))
				return false;
			unmark(e, l->slot);
		}
		l->last = now;
		l->slot = (int32_t)e->next;
		mark(e, e->next++, (int32_t)(l - e->tab));
	}
	return true;
}

static bool walk(enumr *e, const mnode *x)
{
	if (!x->is_loop && x->nkids == 0)
		return walk_stmt(e, x);
	if (!x->is_loop) {
		for (int i = 0; i < x->nkids; i++)
			if (!walk(e, x->kids[i]))
				return false;
		return true;
	}
	eframe *f = &e->fr[e->nf];
	f->y = x;
	f->exec_start = e->time;
	if (f->cap < x->n) {
		int64_t *v = realloc(f->iter_first, sizeof *v * (size_t)x->n);
		if (!v)
			return mdl_fail(e->m, CT_ERR_NOMEM, "out of memory");
		f->iter_first = v;
		f->cap = x->n;
	}
	e->nf++;
	bool ok = true;
	for (int64_t it = 0; it < x->n && ok; it++) {
		e->t[x->depth] = it;
		f->iter_first[it] = e->time;
		for (int i = 0; i < x->nkids && ok; i++)
			ok = walk(e, x->kids[i]);
	}
	e->nf--;
	return ok;
}

/* Accesses of one instance of x (its whole loop, or one execution), and of all of them. */
static int64_t accesses_per_instance(const model *m, const mnode *x)
{
	int64_t per = 0;
	for (int a = 0; a < m->na; a++)
		per += x->per_iter[a];
	return x == &m->root ? per : per * (x->is_loop ? x->n : 1);
}

int64_t mdl_enum_cost(const model *m, const mnode *x)
{
	int64_t per = accesses_per_instance(m, x), inst = x == &m->root ? 1 : x->inst;
	if (x->any_inexact || per > ENUM_MAX_TRACE || inst > ENUM_MAX_INSTANCES)
		return -1;
	return inst > INT64_MAX / (per ? per : 1) ? -1 : inst * per;
}

/* The loops enclosing x, outermost first; returns how many. */
static int enclosing(const mnode *x, const mnode **out)
{
	int n = 0;
	for (const mnode *y = x->parent; y; y = y->parent)
		if (y->is_loop)
			out[n++] = y;
	for (int i = 0; i < n / 2; i++) {
		const mnode *t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}

/* One partition per group. */
static bool emit_groups(enumr *e)
{
	for (int i = 0; i < e->ng; i++) {
		const egroup *g = &e->g[i];
		model_part *p = mdl_new_part(e->m);
		if (!p)
			return false;
		p->array = g->array;
		p->kind = g->kind;
		p->delta = g->delta > INT32_MAX ? INT32_MAX : (int)g->delta;
		p->node = g->node->lt;
		p->count = g->count;
		p->distance = (g->sum + g->count / 2) / g->count;
		p->distance_lo = g->lo;
		p->distance_hi = g->hi;
		/* the distances of a group lie between two capacities: exact at every one */
		p->exact = true;
	}
	return true;
}

static void enum_free(enumr *e)
{
	free(e->tab);
	free(e->live);
	free(e->bits);
	free(e->wfen);
	free(e->owner);
	free(e->g);
	free(e->gidx);
	free(e->caps);
	for (int i = 0; i < MODEL_MAX_DEPTH; i++)
		free(e->fr[i].iter_first);
}

/* gam[a * no + j]: the address shift (bytes per step) of enclosing counter j (< no) of every
 * access of array a below x, seen[a] whether there is one; false when two accesses of an array
 * shift apart. */
static bool uniform_shifts(const model *m, const mnode *x, int no, int64_t *gam, bool *seen)
{
	for (int i = 0; i < x->nacc; i++) {
		int a = x->acc[i].array;
		const int64_t *af = x->aff + i * (x->depth + 1) + 1;
		for (int j = 0; j < no; j++) {
			if (seen[a] && gam[a * no + j] != af[j])
				return false;
			gam[a * no + j] = af[j];
		}
		seen[a] = true;
	}
	for (int i = 0; i < x->nkids; i++)
		if (!uniform_shifts(m, x->kids[i], no, gam, seen))
			return false;
	return true;
}

/* Instance classes: the instances whose accesses' addresses all lie at the same residues
 * modulo the line touch the same pattern of lines (each array on its own lines, moved by whole
 * lines), so one of them walked stands for all. key: the residue of each array's shift. */
typedef struct iclass {
	uint64_t hash;
	int64_t count;
	int64_t *key;      /* [na] residues, then [no] counter values of the first instance */
} iclass;

typedef struct iclasses {
	iclass *v;
	int64_t n, cap;
	int na, no;
} iclasses;

static bool classes_add(model *m, iclasses *c, const int64_t *key, const int64_t *t)
{
	uint64_t h = 1469598103934665603ULL;
	for (int a = 0; a < c->na; a++)
		h = (h ^ (uint64_t)key[a]) * 1099511628211ULL;
	if (2 * (c->n + 1) > c->cap) {
		int64_t cap = c->cap ? 2 * c->cap : 256;
		iclass *v = calloc((size_t)cap, sizeof *v);
		if (!v)
			return mdl_fail(m, CT_ERR_NOMEM, "out of memory");
		for (int64_t i = 0; i < c->cap; i++) {
			if (!c->v[i].key)
				continue;
			int64_t j = (int64_t)(c->v[i].hash & (uint64_t)(cap - 1));
			while (v[j].key)
				j = (j + 1) & (cap - 1);
			v[j] = c->v[i];
		}
		free(c->v);
		c->v = v;
		c->cap = cap;
	}
	int64_t j = (int64_t)(h & (uint64_t)(c->cap - 1));
	for (; c->v[j].key; j = (j + 1) & (c->cap - 1))
		if (c->v[j].hash == h && memcmp(c->v[j].key, key, sizeof *key * (size_t)c->na) == 0) {
			c->v[j].count++;
			return true;
		}
	int64_t *k = mdl_alloc(m, sizeof *k * (size_t)(c->na + c->no + 1));
	if (!k)
		return false;
	memcpy(k, key, sizeof *k * (size_t)c->na);
	memcpy(k + c->na, t, sizeof *t * (size_t)c->no);
	c->v[j] = (iclass){h, 1, k};
	c->n++;
	return true;
}

/* Walk one instance of x (the enclosing counters set in e->t) standing for `weight`. */
static bool walk_instance(enumr *e, const mnode *x, int64_t weight)
{
	e->time = 0;
	e->weight = weight;
	bool ok = walk(e, x);
	e->m->work += e->time * MODEL_ENUM_WORK;
	instance_end(e);
	return ok;
}

/* Walk every instance of x, or one of each class when the shifts are uniform. */
static bool walk_instances(enumr *e, const mnode *x, const mnode *const *outer, int no)
{
	model *m = e->m;
	int64_t *gam = calloc((size_t)(m->na * (no ? no : 1)) + 1, sizeof *gam);
	bool *seen = calloc((size_t)m->na + 1, sizeof *seen);
	int64_t key[64], t[MODEL_MAX_DEPTH]; /* key: one residue per array (na <= 64) */
	iclasses c = {NULL, 0, 0, m->na, no};
	bool ok = gam && seen;
	if (!ok)
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	bool uniform = ok && no > 0 && m->na <= 64 && uniform_shifts(m, x, no, gam, seen);
	for (int j = 0; j < no; j++)
		e->t[outer[j]->depth] = 0;
	/* every value of the enclosing counters, odometer order */
	while (ok) {
		if (uniform) {
			for (int a = 0; a < m->na; a++) {
				int64_t sh = 0;
				for (int j = 0; j < no; j++)
					sh += gam[a * no + j] * e->t[outer[j]->depth];
				key[a] = seen[a] ? ct_mod(sh, m->line) : 0;
			}
			for (int j = 0; j < no; j++)
				t[j] = e->t[outer[j]->depth];
			ok = classes_add(m, &c, key, t);
		} else {
			ok = walk_instance(e, x, 1);
		}
		int j = no - 1;
		while (j >= 0 && ++e->t[outer[j]->depth] == outer[j]->n)
			e->t[outer[j--]->depth] = 0;
		if (j < 0)
			break;
	}
	for (int64_t i = 0; ok && uniform && i < c.cap; i++) {
		if (!c.v[i].key)
			continue;
		for (int j = 0; j < no; j++)
			e->t[outer[j]->depth] = c.v[i].key[m->na + j];
		ok = walk_instance(e, x, c.v[i].count);
	}
	free(c.v);
	free(gam);
	free(seen);
	return ok;
}

bool mdl_enum_node(model *m, const mnode *x)
{
	enumr e;
	memset(&e, 0, sizeof e);
	e.m = m;
	e.caps = malloc(sizeof *e.caps * (size_t)(m->ncaps ? m->ncaps : 1));
	bool ok = e.caps != NULL;
	if (!ok)
		mdl_fail(m, CT_ERR_NOMEM, "out of memory");
	for (int i = 0; ok && i < m->ncaps; i++) {
		int j = i;
		for (; j > 0 && e.caps[j - 1] > m->caps[i]; j--)
			e.caps[j] = e.caps[j - 1];
		e.caps[j] = m->caps[i];
	}
	e.ncaps = m->ncaps;
	while ((int64_t)1 << e.lshift < m->line)
		e.lshift++;
	const mnode *outer[MODEL_MAX_DEPTH];
	int no = x == &m->root ? 0 : enclosing(x, outer);
	e.cur = 1;
	ok = ok && renumber(&e) && walk_instances(&e, x, outer, no);
	ok = ok && emit_groups(&e);
	enum_free(&e);
	return ok;
}
