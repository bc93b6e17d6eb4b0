/* warp.c: exact set-associative LRU and tree-PLRU misses from the model tree's accesses, with
 * warping. */
#include "model/model_int.h"

/*
 * Warping (Morelli and Reineke, PLDI 2022), for modulo-placed LRU and tree-PLRU levels.
 *
 * The model tree (model_tree.c) gives every access as an affine byte address in the counters of
 * its loops, every loop piece a constant trip count and the same body at every iteration. So
 * iteration i + p of a loop x makes the accesses of iteration i with each storage a's
 * addresses moved by p * g_a bytes (g_a: x's coefficient, the same for every access of a below
 * x, else x does not warp). When p * g_a is a whole number d_a of lines for every a, and the d_a
 * are congruent modulo the sets (a rotation D of the sets), the map phi: line L of storage a ->
 * L + d_a commutes with per-set LRU. If the state at iteration i equals phi(state at i - p)
 * position by position (set s's row at set s + D, the same recency order), then by induction
 * the state at i + k p is phi^k(state at i) and every period of p iterations misses as the one
 * before did, as long as phi keeps every line it moves inside its own storage (so that it stays
 * one-to-one): checked at both ends of the jump, which is enough since the moves are linear. The
 * loop then jumps over q whole periods: misses += q * (the period's), state = phi^q(state).
 * The accesses themselves are checked to stay inside their storages once, over the whole
 * tree, before anything runs.
 *
 * Tree-PLRU (sim.c's plru_access) is as deterministic and as blind to line numbers: what an
 * access does depends only on the way that holds its line (or none), the empty ways and the
 * set's tree bits. So phi commutes with it too when the state compared and moved is each
 * line in its own way and the bits of its set: a PLRU row is its ways' lines followed by the
 * set's bit words (LRU rows have none), the lines moved by phi, the bits moved unchanged.
 *
 * States are kept at iterations that are multiples of p0 (the least period whose moves are
 * whole lines and agree on the rotation), the last WARP_HISTORY of them per loop; a loop warps
 * only where a snapshot costs less than the accesses between two of them.
 */

#define WARP_HISTORY 4
#define EMPTY_TAG UINT64_MAX
/* Largest state (ways * sets) kept in snapshots; larger levels are simulated without warping. */
#define WARP_MAX_SNAP_TAGS ((int64_t)1 << 18)
/* Largest set-associative level (lines) simulated at all (the simulator's own limit). */
#define WARP_MAX_TAGS ((int64_t)1 << 27)

/* What a loop node needs to warp. */
typedef struct wloop {
	int64_t p0;      /* iterations between snapshots: the least period whose moves are whole
	                  * lines and one rotation of the sets (0: the loop does not warp) */
	int64_t *gam;    /* [na] bytes per iteration of each storage below the loop */
	bool *touch;     /* [na] storages accessed below the loop */
	bool flat;       /* no loop below warps and an iteration is at most TEMPLATE_MAX
	                  * accesses: walked from its template (built at the first visit) */
	bool band;       /* a loop of a parallel band is at or below it (threads: no template) */
	struct wtmpl *tmpl;
} wloop;

/* The accesses of one iteration of a loop, in order, each as its site's address at the
 * iteration (the loop's and the enclosing counters' part) plus a fixed offset (the counters
 * below): one add an access instead of an affine form. */
#define TEMPLATE_MAX ((int64_t)1 << 15)

typedef struct wsite {
	const mnode *s;   /* statement */
	int acc;          /* its access */
} wsite;

typedef struct wtmpl {
	int nsite, capsite;
	wsite *site;
	int64_t n;
	int32_t *esite;   /* [n] */
	int64_t *rel;     /* [n] */
	int64_t *addr;    /* [capsite] scratch: each site's address at the current iteration */
} wtmpl;

/* The snapshots of the loop running at one depth: states and miss counters. */
typedef struct wframe {
	uint64_t *tags;                /* [WARP_HISTORY * ntags] */
	int64_t *miss;                 /* [WARP_HISTORY * (na + 2)] */
	int64_t it[WARP_HISTORY];
	int n, next;
} wframe;

typedef struct wsim {
	model *m;
	int na;
	const int64_t *base;  /* [na] byte address of each storage */
	int64_t *rlo, *rhi;   /* [na] first and last line of each storage (rlo > rhi: empty) */
	/* the level */
	uint64_t *tags;       /* sets rows of rw words: ways lines (LRU: most recent first; PLRU:
	                       * each in its way), then PLRU's nbw words of tree bits */
	int64_t sets, ntags;  /* ntags = sets * rw */
	int ways, lshift, rw, nbw;
	bool pow2, plru;
	int64_t *miss;        /* [na + 2]: per storage, the total, then the accesses */
	int64_t t[MODEL_MAX_DEPTH];
	int tdepth;           /* sim_template: the depth of its loop's counter */
	wloop *loops;
	int nloops, caploops;
	wframe fr[MODEL_MAX_DEPTH];
	int64_t *delta;       /* [na] scratch: lines moved per period */
	uint64_t *scratch;    /* [ntags] the state being built by a jump */
	int64_t work, budget;
	int64_t simulated, skipped, warps;
	bool stop;            /* over budget, or out of memory (m->st) */
	mshare *share;        /* one thread's share of the run (NULL: all of it) */
} wsim;

/* ------------------------------------------------------------ the loops' shifts */

/* gam[a]: x's coefficient (counter j) of every access of storage a below y; false when two
 * accesses of one storage move apart. */
static bool shifts_below(const mnode *y, int j, int64_t *gam, bool *seen)
{
	for (int i = 0; i < y->nacc; i++) {
		int a = y->acc[i].array;
		int64_t g = y->aff[i * (y->depth + 1) + 1 + j];
		if (seen[a] && gam[a] != g)
			return false;
		gam[a] = g;
		seen[a] = true;
	}
	for (int i = 0; i < y->nkids; i++)
		if (!shifts_below(y->kids[i], j, gam, seen))
			return false;
	return true;
}

static int64_t accesses_per_iteration(const wsim *w, const mnode *x)
{
	int64_t n = 0;
	for (int a = 0; a < w->na; a++)
		n += x->per_iter[a];
	return n;
}

/* The warping plan of loop x (its entry x->wid). */
static bool plan_loop(wsim *w, mnode *x, int64_t line)
{
	if (w->nloops == w->caploops) {
		int cap = w->caploops ? 2 * w->caploops : 64;
		wloop *v = realloc(w->loops, sizeof *v * (size_t)cap);
		if (!v)
			return mdl_fail(w->m, CT_ERR_NOMEM, "out of memory");
		w->loops = v;
		w->caploops = cap;
	}
	x->wid = w->nloops;
	wloop *L = &w->loops[w->nloops++];
	memset(L, 0, sizeof *L);
	L->gam = mdl_alloc(w->m, sizeof *L->gam * (size_t)w->na + 1);
	L->touch = mdl_alloc(w->m, sizeof *L->touch * (size_t)w->na + 1);
	if (!L->gam || !L->touch)
		return false;
	if (!shifts_below(x, x->depth, L->gam, L->touch))
		return true;
	/* the least p with p * g_a a whole number of lines for every a: the line is a power of two,
	 * so each storage asks for a power of two and the largest serves all */
	int64_t p0 = 1;
	for (int a = 0; a < w->na; a++) {
		if (!L->touch[a])
			continue;
		int64_t g = L->gam[a] < 0 ? -L->gam[a] : L->gam[a];
		int64_t need = line / mdl_gcd64(g % line, line);
		if (need > p0)
			p0 = need;
	}
	/* and the least multiple of that with every storage's move the same rotation of the
	 * sets: p (g_a - g_b) a multiple of line * sets for every two storages a, b */
	int64_t ls;
	if (__builtin_mul_overflow(line, w->sets, &ls))
		return true;
	int first = -1;
	for (int a = 0; a < w->na; a++) {
		if (!L->touch[a])
			continue;
		if (first < 0) {
			first = a;
			continue;
		}
		int64_t g = L->gam[a] - L->gam[first];
		int64_t need = ls / mdl_gcd64(ct_mod(g, ls), ls);
		int64_t lcm;
		if (__builtin_mul_overflow(p0 / mdl_gcd64(p0, need), need, &lcm) || lcm > x->n)
			return true;
		p0 = lcm;
	}
	/* a jump needs a period to compare and another to skip; a snapshot must cost less than
	 * the accesses between two of them */
	int64_t per = accesses_per_iteration(w, x);
	if (w->ntags <= WARP_MAX_SNAP_TAGS && x->n >= 3 * p0 && per > 0 && p0 * per * 4 >= w->ntags)
		L->p0 = p0;
	return true;
}

/* True when x is or holds a loop of a parallel band (its loops below already planned). */
static bool band_below(const wsim *w, const mnode *x)
{
	if (x->is_loop)
		return w->loops[x->wid].band;
	for (int i = 0; i < x->nkids; i++)
		if (band_below(w, x->kids[i]))
			return true;
	return false;
}

/* Plan every loop below x; *warps: some loop below x (x included) warps. */
static bool plan_loops(wsim *w, mnode *x, int64_t line, bool *warps)
{
	if (x->is_loop && !plan_loop(w, x, line))
		return false;
	bool below = false;
	for (int i = 0; i < x->nkids; i++) {
		bool k = false;
		if (!plan_loops(w, x->kids[i], line, &k))
			return false;
		below = below || k;
	}
	if (x->is_loop) {
		wloop *L = &w->loops[x->wid];
		L->band = share_is_band(x->lt);
		for (int i = 0; i < x->nkids && !L->band; i++)
			L->band = band_below(w, x->kids[i]);
		L->flat = !below && accesses_per_iteration(w, x) <= TEMPLATE_MAX && !(w->share && L->band);
		below = below || L->p0;
	}
	*warps = below;
	return true;
}

/* ------------------------------------------------------------ checks of the tree */

/* True when every access of every statement below x lies inside its storage at every value of
 * its counters, and no access is inexact. */
static bool accesses_inside(const wsim *w, const mnode *x, const sim_buffer *buf)
{
	if (!x->is_loop && x->nkids == 0) {
		for (int i = 0; i < x->nacc; i++) {
			int a = x->acc[i].array;
			if (x->acc[i].inexact || a < 0 || a >= w->na)
				return false;
			const int64_t *af = x->aff + i * (x->depth + 1);
			int64_t lo = af[0], hi = af[0];
			for (int j = 0; j < x->depth; j++) {
				int64_t v;
				if (__builtin_mul_overflow(af[1 + j], x->anc[j]->n - 1, &v))
					return false;
				if (__builtin_add_overflow(v < 0 ? lo : hi, v, v < 0 ? &lo : &hi))
					return false;
			}
			int64_t span = buf[a].elem_size * buf[a].count;
			if (lo < 0 || hi > span - buf[a].elem_size)
				return false;
		}
		return true;
	}
	for (int i = 0; i < x->nkids; i++)
		if (!accesses_inside(w, x->kids[i], buf))
			return false;
	return true;
}

/* ------------------------------------------------------------ simulation */

static void sim_node(wsim *w, const mnode *x);

/* One tree-PLRU access of line to a row of ways lines followed by its bit words (sim.h
 * sim_plru_set, as the simulator): a hit, or a fill of the lowest empty way, else of the way the bits point
 * to; then the bits on the way's path point away from it. True on a hit. */
static inline bool plru_row(uint64_t *row, unsigned ways, uint64_t line)
{
	return sim_plru_set(row, row + ways, ways, line);
}

/* One access of storage a at byte address addr: the per-set LRU row of its line (as sim.c's
 * sa_access: one pass searches and shifts). */
static inline void sim_access1(wsim *w, int a, int64_t addr)
{
	uint64_t line = (uint64_t)addr >> w->lshift;
	uint64_t set = w->pow2 ? line & (uint64_t)(w->sets - 1) : line % (uint64_t)w->sets;
	uint64_t *row = w->tags + set * (uint64_t)w->rw;
	w->miss[w->na + 1]++;
	if (w->plru) {
		if (!plru_row(row, (unsigned)w->ways, line)) {
			w->miss[a]++;
			w->miss[w->na]++;
		}
		return;
	}
	uint64_t prev = line;
	for (int p = 0; p < w->ways; p++) {
		uint64_t cur = row[p];
		row[p] = prev;
		if (cur == line)
			return;
		prev = cur;
	}
	w->miss[a]++;
	w->miss[w->na]++;
}

static void count_work(wsim *w, int64_t n)
{
	w->simulated += n;
	w->work += n;
	if (w->budget && w->work > w->budget)
		w->stop = true;
}

static void sim_stmt(wsim *w, const mnode *s)
{
	if (w->share && !share_runs_serial(w->share))
		return;
	int wd = s->depth + 1;
	for (int i = 0; i < s->nacc; i++) {
		const int64_t *af = s->aff + i * wd;
		int a = s->acc[i].array;
		int64_t addr = w->base[a] + af[0];
		for (int j = 0; j < s->depth; j++)
			addr += af[1 + j] * w->t[j];
		sim_access1(w, a, addr);
	}
	count_work(w, s->nacc);
}

/* ------------------------------------------------------------ templates */

/* Append the accesses of one execution of y (the counters from depth d on walked here) to tp. */
static bool tmpl_walk(wsim *w, wtmpl *tp, const mnode *y, int d)
{
	if (y->is_loop) {
		for (int64_t it = 0; it < y->n; it++) {
			w->t[y->depth] = it;
			for (int i = 0; i < y->nkids; i++)
				if (!tmpl_walk(w, tp, y->kids[i], d))
					return false;
		}
		return true;
	}
	for (int i = 0; i < y->nkids; i++)
		if (!tmpl_walk(w, tp, y->kids[i], d))
			return false;
	if (y->nkids)
		return true;
	int wd = y->depth + 1;
	for (int i = 0; i < y->nacc; i++) {
		int site = -1;
		for (int k = 0; k < tp->nsite && site < 0; k++)
			if (tp->site[k].s == y && tp->site[k].acc == i)
				site = k;
		if (site < 0) {
			if (tp->nsite == tp->capsite) {
				int cap = tp->capsite ? 2 * tp->capsite : 16;
				wsite *v = realloc(tp->site, sizeof *v * (size_t)cap);
				if (!v)
					return mdl_fail(w->m, CT_ERR_NOMEM, "out of memory");
				tp->site = v;
				tp->capsite = cap;
			}
			tp->site[tp->nsite] = (wsite){y, i};
			site = tp->nsite++;
		}
		const int64_t *af = y->aff + i * wd;
		int64_t rel = 0;
		for (int j = d + 1; j < y->depth; j++)
			rel += af[1 + j] * w->t[j];
		tp->esite[tp->n] = site;
		tp->rel[tp->n++] = rel;
	}
	return true;
}

static void tmpl_free(wtmpl *tp)
{
	if (!tp)
		return;
	free(tp->site);
	free(tp->esite);
	free(tp->rel);
	free(tp->addr);
	free(tp);
}

/* The template of an iteration of loop x (the counters below it walked here). */
static wtmpl *tmpl_build(wsim *w, const mnode *x)
{
	int64_t per = accesses_per_iteration(w, x);
	wtmpl *tp = calloc(1, sizeof *tp);
	if (tp) {
		tp->esite = malloc(sizeof *tp->esite * (size_t)(per + 1));
		tp->rel = malloc(sizeof *tp->rel * (size_t)(per + 1));
	}
	int64_t saved[MODEL_MAX_DEPTH];
	memcpy(saved, w->t, sizeof saved);
	bool ok = tp && tp->esite && tp->rel;
	if (!ok)
		mdl_fail(w->m, CT_ERR_NOMEM, "out of memory");
	for (int i = 0; ok && i < x->nkids; i++)
		ok = tmpl_walk(w, tp, x->kids[i], x->depth);
	memcpy(w->t, saved, sizeof saved);
	if (ok && !(tp->addr = malloc(sizeof *tp->addr * (size_t)(tp->nsite + 1))))
		ok = mdl_fail(w->m, CT_ERR_NOMEM, "out of memory");
	if (!ok) {
		tmpl_free(tp);
		tp = NULL;
	}
	return tp;
}

/* One iteration of the loop of template tp at the counters in w->t. */
static void sim_template(wsim *w, const wtmpl *tp)
{
	int64_t *addr = tp->addr;
	for (int k = 0; k < tp->nsite; k++) {
		const mnode *s = tp->site[k].s;
		const int64_t *af = s->aff + tp->site[k].acc * (s->depth + 1);
		int64_t v = w->base[s->acc[tp->site[k].acc].array] + af[0];
		/* the template's loop is at the depth below which rel counts */
		for (int j = 0; j <= w->tdepth; j++)
			v += af[1 + j] * w->t[j];
		addr[k] = v;
	}
	for (int64_t e = 0; e < tp->n; e++) {
		int k = tp->esite[e];
		sim_access1(w, tp->site[k].s->acc[tp->site[k].acc].array, addr[k] + tp->rel[e]);
	}
	count_work(w, tp->n);
}

/* The storage whose lines hold `line`, or -1. */
static int region_of(const wsim *w, uint64_t line)
{
	for (int a = 0; a < w->na; a++)
		if ((int64_t)line >= w->rlo[a] && (int64_t)line <= w->rhi[a])
			return a;
	return -1;
}

/* The ways of a full PLRU row in the order the tree ranks them: from the root, the child the
 * bit points to first (the next victim is ord[0]). Two full rows whose lines in this order are
 * the same behave alike for ever: they differ by swapping the children of some nodes (and
 * flipping their bits), which PLRU cannot tell apart. */
static void plru_order(const uint64_t *row, int ways, int *ord)
{
	const uint64_t *b = row + ways;
	int n = 0;
	/* leaf rank r's way: the bits of r from the top choose, at each node, the pointed-to
	 * child (0) or the other one (1) */
	int depth = 0;
	while ((1 << depth) < ways)
		depth++;
	for (int r = 0; r < ways; r++) {
		unsigned node = 1;
		for (int d = depth - 1; d >= 0; d--) {
			unsigned bit = (unsigned)((b[node >> 6] >> (node & 63)) & 1);
			node = 2 * node + (bit ^ (unsigned)((r >> d) & 1));
		}
		ord[n++] = (int)node - ways;
	}
}

/* True when row rb is phi of row ra (rows of a PLRU or LRU level): each line L of storage r
 * moved to L + delta[r] inside r, in the same place of its row and with the same tree bits;
 * or, for full PLRU rows, in the same place of the tree's ranking (plru_order): the states
 * are then equal up to swaps of subtrees, under which PLRU behaves alike, and a row that is
 * full stays full, so the empty ways' fill order (the lowest first) never tells them apart. */
static bool row_is_moved(const wsim *w, const uint64_t *ra, const uint64_t *rb)
{
	bool full = w->plru;
	for (int k = 0; k < w->ways && full; k++)
		full = ra[k] != EMPTY_TAG && rb[k] != EMPTY_TAG;
	int oa[64], ob[64];
	if (full && w->ways <= 64 && w->ways > 2) {
		plru_order(ra, w->ways, oa);
		plru_order(rb, w->ways, ob);
		for (int k = 0; k < w->ways; k++) {
			int r = region_of(w, ra[oa[k]]);
			int64_t to = r < 0 ? -1 : (int64_t)ra[oa[k]] + w->delta[r];
			if (r < 0 || to < w->rlo[r] || to > w->rhi[r] || (uint64_t)to != rb[ob[k]])
				return false;
		}
		return true;
	}
	for (int k = w->ways; k < w->rw; k++)
		if (ra[k] != rb[k])
			return false;
	for (int k = 0; k < w->ways; k++) {
		if (ra[k] == EMPTY_TAG) {
			if (rb[k] != EMPTY_TAG)
				return false;
			continue;
		}
		int r = region_of(w, ra[k]);
		if (r < 0)
			return false;
		int64_t to = (int64_t)ra[k] + w->delta[r];
		if (to < w->rlo[r] || to > w->rhi[r] || (uint64_t)to != rb[k])
			return false;
	}
	return true;
}

/* True when state b is phi(state a): set s of a at set s + D of b, each row moved as
 * row_is_moved says. */
static bool state_is_moved(const wsim *w, const uint64_t *sa, const uint64_t *sb, int64_t D)
{
	for (int64_t s = 0; s < w->sets; s++) {
		const uint64_t *ra = sa + s * w->rw, *rb = sb + ((s + D) % w->sets) * w->rw;
		if (!row_is_moved(w, ra, rb))
			return false;
	}
	return true;
}

/* True when the row holds no line (its PLRU bits are then all 0: only an access sets one). */
static bool row_empty(const wsim *w, const uint64_t *row)
{
	if (!w->plru)
		return row[0] == EMPTY_TAG;
	for (int k = 0; k < w->ways; k++)
		if (row[k] != EMPTY_TAG)
			return false;
	return true;
}

/* The empty state: no lines, PLRU bits 0. */
static void state_clear(const wsim *w, uint64_t *tags)
{
	for (int64_t s = 0; s < w->sets; s++) {
		uint64_t *row = tags + s * w->rw;
		for (int k = 0; k < w->ways; k++)
			row[k] = EMPTY_TAG;
		for (int k = w->ways; k < w->rw; k++)
			row[k] = 0;
	}
}

/* phi^q of the current state into w->scratch, then the state; false (state untouched) when a
 * moved line would leave its storage. */
static bool jump_state(wsim *w, int64_t q)
{
	state_clear(w, w->scratch);
	for (int64_t s = 0; s < w->sets; s++) {
		const uint64_t *row = w->tags + s * w->rw;
		if (row_empty(w, row))
			continue;
		int64_t to_set = -1;
		for (int k = 0; k < w->ways; k++) {
			if (row[k] == EMPTY_TAG) {
				if (w->plru)
					continue;
				break;
			}
			int r = region_of(w, row[k]);
			int64_t mv, to;
			if (r < 0 || __builtin_mul_overflow(q, w->delta[r], &mv) ||
			    __builtin_add_overflow((int64_t)row[k], mv, &to) || to < w->rlo[r] || to > w->rhi[r])
				return false;
			int64_t ts = w->pow2 ? (to & (w->sets - 1)) : to % w->sets;
			/* a row moves whole, onto a row no other row moved to */
			if ((to_set >= 0 && ts != to_set) || (to_set < 0 && !row_empty(w, w->scratch + ts * w->rw)))
				return false;
			to_set = ts;
			w->scratch[ts * w->rw + k] = (uint64_t)to;
		}
		for (int k = w->ways; k < w->rw; k++)
			w->scratch[to_set * w->rw + k] = row[k];
	}
	memcpy(w->tags, w->scratch, sizeof *w->tags * (size_t)w->ntags);
	w->work += w->ntags / 4;
	return true;
}

/* Try to jump at iteration it of loop x against the snapshots of f: the iterations skipped
 * (0: none). */
static int64_t try_warp(wsim *w, const wloop *L, wframe *f, int64_t it, int64_t end)
{
	int line = 1 << w->lshift;
	for (int h = 0; h < f->n; h++) {
		int slot = ((f->next - 1 - h) % WARP_HISTORY + WARP_HISTORY) % WARP_HISTORY;
		int64_t p = it - f->it[slot];
		int64_t q = (end - it) / p;
		if (q < 1)
			continue;
		/* the lines each storage moves per period, and the sets' rotation they agree on */
		int64_t D = -1;
		bool ok = true;
		for (int a = 0; a < w->na && ok; a++) {
			w->delta[a] = 0;
			if (!L->touch[a])
				continue;
			int64_t b;
			if (__builtin_mul_overflow(p, L->gam[a], &b) || b % line) {
				ok = false;
				break;
			}
			w->delta[a] = b / line;
			int64_t r = ct_mod(w->delta[a], w->sets);
			ok = D < 0 || r == D;
			D = r;
		}
		if (!ok)
			continue;
		w->work += w->ntags / 4;
		if (!state_is_moved(w, f->tags + (int64_t)slot * w->ntags, w->tags, D < 0 ? 0 : D))
			continue;
		if (!jump_state(w, q))
			continue;
		const int64_t *old = f->miss + (int64_t)slot * (w->na + 2);
		for (int a = 0; a <= w->na + 1; a++)
			w->miss[a] += q * (w->miss[a] - old[a]);
		w->skipped += q * p;
		w->warps++;
		return q * p;
	}
	return 0;
}

static void snapshot(wsim *w, wframe *f, int64_t it)
{
	int slot = f->next;
	memcpy(f->tags + (int64_t)slot * w->ntags, w->tags, sizeof *w->tags * (size_t)w->ntags);
	memcpy(f->miss + (int64_t)slot * (w->na + 2), w->miss, sizeof *w->miss * (size_t)(w->na + 2));
	f->it[slot] = it;
	f->next = (slot + 1) % WARP_HISTORY;
	if (f->n < WARP_HISTORY)
		f->n++;
	w->work += w->ntags / 4;
}

/* The snapshots of depth d, allocated once per depth. */
static wframe *frame_at(wsim *w, int d)
{
	wframe *f = &w->fr[d];
	if (!f->tags) {
		f->tags = malloc(sizeof *f->tags * (size_t)(WARP_HISTORY * w->ntags));
		f->miss = malloc(sizeof *f->miss * (size_t)(WARP_HISTORY * (w->na + 2)));
		if (!f->tags || !f->miss) {
			mdl_fail(w->m, CT_ERR_NOMEM, "out of memory");
			w->stop = true;
			return NULL;
		}
	}
	f->n = f->next = 0;
	return f;
}

static void sim_loop(wsim *w, const mnode *x)
{
	wloop *L = &w->loops[x->wid];
	int d = x->depth;
	/* threads: a band loop runs the thread's iterations; another thread than 0 skips what
	 * lies outside every band */
	int64_t a = 0, end = x->n, off = 0;
	int c = w->share ? share_level(w->share, x) : -1;
	if (c >= 0)
		share_enter(w->share, x, c, &a, &end, &off);
	else if (w->share && !L->band && !share_runs_serial(w->share))
		return;
	if (L->flat && !L->tmpl && !(L->tmpl = tmpl_build(w, x))) {
		w->stop = true;
		return;
	}
	/* a band loop outside the band's innermost one runs partial iterations at its ends (a
	 * chunk starts and stops inside the loops below): its iterations do not repeat, no warp */
	bool partial = c >= 0 && c < w->share->ncol - 1;
	wframe *f = L->p0 && end - a >= 3 * L->p0 && !partial ? frame_at(w, d) : NULL;
	bool jumped = false;
	for (int64_t it = a; it < end && !w->stop; it++) {
		w->t[d] = it;
		if (c >= 0)
			share_iter(w->share, c, off, it);
		if (f && !jumped && (it - a) % L->p0 == 0) {
			int64_t skip = try_warp(w, L, f, it, end);
			if (skip > 0) {
				jumped = true;
				it += skip;
				if (it >= end)
					break;
				w->t[d] = it;
				if (c >= 0)
					share_iter(w->share, c, off, it);
			} else {
				snapshot(w, f, it);
			}
		}
		if (L->tmpl) {
			w->tdepth = d;
			sim_template(w, L->tmpl);
		} else {
			for (int i = 0; i < x->nkids && !w->stop; i++)
				sim_node(w, x->kids[i]);
		}
	}
	if (c >= 0)
		share_leave(w->share, x, c);
}

static void sim_node(wsim *w, const mnode *x)
{
	if (x->is_loop) {
		sim_loop(w, x);
	} else if (x->nkids == 0) {
		sim_stmt(w, x);
	} else {
		for (int i = 0; i < x->nkids && !w->stop; i++)
			sim_node(w, x->kids[i]);
	}
}

/* ------------------------------------------------------------ one level */

static void wsim_free_level(wsim *w)
{
	free(w->tags);
	free(w->scratch);
	w->tags = w->scratch = NULL;
	for (int d = 0; d < MODEL_MAX_DEPTH; d++) {
		free(w->fr[d].tags);
		free(w->fr[d].miss);
		w->fr[d].tags = NULL;
		w->fr[d].miss = NULL;
	}
	for (int i = 0; i < w->nloops; i++)
		tmpl_free(w->loops[i].tmpl);
	w->nloops = 0;
}

/* Count level lv: true when done (misses in w->miss); false with *why, or with m->st set. */
static bool count_level(wsim *w, const sim_level *lv, const sim_buffer *buf, const char **why)
{
	int64_t sets = sim_level_sets(lv);
	int64_t ways = lv->ways > 0 ? lv->ways : lv->size / lv->line;
	if (sets * ways > WARP_MAX_TAGS) {
		*why = "the level has too many lines to simulate";
		return false;
	}
	w->sets = sets;
	w->ways = (int)ways;
	w->plru = lv->policy == SIM_PLRU;
	w->nbw = w->plru ? (int)((ways + 63) / 64) : 0;
	w->rw = w->ways + w->nbw;
	w->ntags = sets * w->rw;
	w->pow2 = (sets & (sets - 1)) == 0;
	w->lshift = 0;
	while ((INT64_C(1) << w->lshift) < lv->line)
		w->lshift++;
	for (int a = 0; a < w->na; a++) {
		int64_t span = buf[a].elem_size * buf[a].count;
		w->rlo[a] = w->base[a] >> w->lshift;
		w->rhi[a] = span > 0 ? (w->base[a] + span - 1) >> w->lshift : w->rlo[a] - 1;
	}
	w->tags = malloc(sizeof *w->tags * (size_t)w->ntags);
	/* jumps (the only users of the scratch state) need snapshots */
	if (w->ntags <= WARP_MAX_SNAP_TAGS)
		w->scratch = malloc(sizeof *w->scratch * (size_t)w->ntags);
	if (!w->tags || (w->ntags <= WARP_MAX_SNAP_TAGS && !w->scratch)) {
		mdl_fail(w->m, CT_ERR_NOMEM, "out of memory");
		return false;
	}
	state_clear(w, w->tags);
	memset(w->miss, 0, sizeof *w->miss * (size_t)(w->na + 2));
	w->stop = false;
	w->work = 0;
	bool warps = false;
	if (!plan_loops(w, &w->m->root, lv->line, &warps))
		return false;
	/* no loop can warp: the whole trace would be simulated, so say so before walking it */
	if (!warps && w->budget && accesses_per_iteration(w, &w->m->root) > w->budget) {
		*why = "the simulation with warping would pass its work budget";
		return false;
	}
	sim_node(w, &w->m->root);
	if (w->m->st)
		return false;
	if (w->stop) {
		*why = "the simulation with warping would pass its work budget";
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ entry point */

void warp_result_free(warp_result *r)
{
	if (!r)
		return;
	free(r->array_misses);
	r->array_misses = NULL;
}

ct_status warp_count(ct_looptree *t, const sim_spec *spec, const bool *want, int64_t budget,
                     warp_result *r)
{
	return warp_count_share(t, spec, want, budget, NULL, r);
}

ct_status warp_count_share(ct_looptree *t, const sim_spec *spec, const bool *want, int64_t budget,
                           mshare *share, warp_result *r)
{
	memset(r, 0, sizeof *r);
	ct_ctx *ctx = t->k->ctx;
	sim_buffer *buf = NULL;
	ct_status st = sim_tree_buffers(t, &buf);
	if (st)
		return st;
	int na = t->narrays;
	int64_t *base = calloc((size_t)na + 1, sizeof *base);
	model *m = base ? mdl_tree_new(t) : NULL;
	wsim w;
	memset(&w, 0, sizeof w);
	if (!base || !m) {
		st = m ? ct_error(ctx, CT_ERR_NOMEM, "out of memory") : ct_ctx_last_status(ctx);
		goto out;
	}
	if (m->st) {
		st = m->st;
		goto out;
	}
	if (sim_layout(ctx, buf, na, sim_spec_max_line(spec), base) < 0) {
		st = ct_ctx_last_status(ctx);
		goto out;
	}
	w.m = m;
	w.na = na;
	w.base = base;
	w.budget = budget;
	w.share = share;
	w.rlo = mdl_alloc(m, sizeof *w.rlo * (size_t)na + 1);
	w.rhi = mdl_alloc(m, sizeof *w.rhi * (size_t)na + 1);
	w.miss = mdl_alloc(m, sizeof *w.miss * (size_t)(na + 2));
	w.delta = mdl_alloc(m, sizeof *w.delta * (size_t)na + 1);
	r->narrays = na;
	r->array_misses = calloc((size_t)(SIM_MAX_LEVELS * na) + 1, sizeof *r->array_misses);
	if (m->st || !r->array_misses) {
		st = m->st ? m->st : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	bool exact = !m->root.any_inexact;
	for (int a = 0; a < na; a++)
		exact = exact && !m->inexact[a];
	if (!exact) {
		r->why = "the kernel's accesses are not all affine in its loops";
		goto out;
	}
	if (!accesses_inside(&w, &m->root, buf)) {
		r->why = "an access may lie outside its array";
		goto out;
	}
	for (int l = 0; l < spec->nlevels; l++) {
		if (!want[l])
			continue;
		const char *why = NULL;
		bool done = count_level(&w, &spec->level[l], buf, &why);
		if (m->st) {
			st = m->st;
			wsim_free_level(&w);
			goto out;
		}
		if (done) {
			r->done[l] = true;
			r->misses[l] = w.miss[na];
			r->accesses = w.miss[na + 1];
			for (int a = 0; a < na; a++)
				r->array_misses[l * na + a] = w.miss[a];
		} else {
			r->why = why;
		}
		r->simulated += w.simulated;
		r->skipped += w.skipped;
		r->warps += w.warps;
		w.simulated = w.skipped = w.warps = 0;
		wsim_free_level(&w);
	}
out:
	free(w.loops);
	mdl_tree_free(m);
	free(base);
	free(buf);
	if (st)
		warp_result_free(r);
	return st;
}
