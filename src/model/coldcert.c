/* coldcert.c: a proof that a set-associative LRU level misses only first touches (no line is
 * evicted before its next use), from the model tree's affine accesses, without simulating. */
#include "model/model_int.h"

/*
 * LRU hits an access to line L exactly when fewer than `ways` other lines of L's set were
 * accessed since L's previous access. Every reuse (two consecutive accesses of one line) lies
 * inside one execution of the deepest node of the model tree that holds both accesses:
 *
 * - a statement: both in one instance; the window holds at most its accesses;
 * - a sequence (a loop's body, or the run): two different children c_u, c_v (u < v), v among
 *   the later children whose lines of the storage can meet c_u's;
 * - a loop x (counter t_d): iterations i < i + k; k is at most D, the most iterations apart
 *   that two accesses of the storage can share a line (0: no reuse carried by x; its move per
 *   iteration g, the same for every access of the storage below x, against the width of an
 *   iteration's footprint; g = 0: the line is touched again at i + 1); iterations i + 1 ..
 *   i + k - 1 lie wholly in the window.
 *
 * The window's ends are narrowed with dense accesses: it starts no earlier than the last point
 * of c_u (of iteration i) after which a single dense access touches every line the storage can
 * have there (the last access to the line comes at or after it), and ends no later than the
 * first point of c_v (of iteration i + k) where a single dense access has touched every line
 * the storage can have there; both descend into a child loop's last (first) iteration when
 * that one already covers them. Without such an access the whole child (from the first child
 * touching the storage, up to the last) is taken.
 *
 * For each such window and storage b the lines of each storage in the window lie in one
 * interval (the hull of its accesses' boxes, relative to the counters fixed for the window,
 * whose common part only shifts it), so a set holds at most ceil(lines / sets) of them; when
 * the sum over storages is at most `ways` for every window, every reuse hits and the level
 * misses exactly the distinct lines touched: the fully associative model's cold misses. Windows
 * are over-approximated only (a larger window, a larger interval), so the proof is sound; it
 * fails (the caller then warps or simulates) where the bound is too coarse.
 *
 * An access is dense when the gaps between its addresses are at most a line (every line from
 * its first to its last is touched): its terms |c_j| * t_j sorted by |c_j|, each |c_j| at most a
 * line more than the span of the smaller ones.
 */

typedef struct cc {
	model *m;
	int na;
	const int64_t *base;      /* [na] byte address of each storage */
	int64_t *span_lines;      /* [na] lines of each storage */
	int64_t sets, ways, line;
	/* the window's frame: counters 0 .. omit-1 are fixed (their part is a common shift);
	 * carry >= 0: that counter ranges over [klo, khi] (relative iterations) */
	int omit, carry;
	int64_t klo, khi;
	const mnode *pin[MODEL_MAX_DEPTH]; /* a loop held at one iteration (pinv): the first in a
	                                    * prefix, the last in a suffix */
	int64_t pinv[MODEL_MAX_DEPTH];
	/* per storage: the frame's agreement and the footprint being built */
	bool *bad;                /* accesses disagree on a fixed counter's coefficient */
	bool *aligned;            /* every fixed counter's coefficient is a multiple of the line */
	bool *seen;
	int64_t *coef;            /* [na * MODEL_MAX_DEPTH] the fixed counters' coefficients */
	bool *has;
	int64_t *lo, *hi;         /* [na] hull of the byte offsets in the window */
} cc;

/* The range of counter j of statement s in the current frame; false when it is fixed. */
static bool counter_range(const cc *c, const mnode *s, int j, int64_t *lo, int64_t *hi)
{
	if (j < c->omit)
		return false;
	if (j == c->carry) {
		*lo = c->klo;
		*hi = c->khi;
	} else if (c->pin[j] == s->anc[j]) {
		*lo = *hi = c->pinv[j];
	} else {
		*lo = 0;
		*hi = s->anc[j]->n - 1;
	}
	return true;
}

/* The box [*lo, *hi] of access i of statement s's byte offsets in the current frame. */
static void access_box(const cc *c, const mnode *s, int i, int64_t *lo, int64_t *hi)
{
	const int64_t *af = s->aff + i * (s->depth + 1);
	int64_t l = af[0], h = af[0];
	for (int j = 0; j < s->depth; j++) {
		int64_t a, b;
		if (!counter_range(c, s, j, &a, &b))
			continue;
		int64_t va = af[1 + j] * a, vb = af[1 + j] * b;
		l += va < vb ? va : vb;
		h += va < vb ? vb : va;
	}
	*lo = l;
	*hi = h;
}

/* True when access i of s touches every line between its first and last in the frame. */
static bool access_dense(const cc *c, const mnode *s, int i)
{
	const int64_t *af = s->aff + i * (s->depth + 1);
	int64_t g[MODEL_MAX_DEPTH], n[MODEL_MAX_DEPTH];
	int k = 0;
	for (int j = 0; j < s->depth; j++) {
		int64_t a, b;
		if (!counter_range(c, s, j, &a, &b) || b == a || af[1 + j] == 0)
			continue;
		g[k] = af[1 + j] < 0 ? -af[1 + j] : af[1 + j];
		n[k++] = b - a;
	}
	/* insertion sort by |coefficient| */
	for (int x = 1; x < k; x++)
		for (int y = x; y > 0 && g[y] < g[y - 1]; y--) {
			int64_t t = g[y];
			g[y] = g[y - 1];
			g[y - 1] = t;
			t = n[y];
			n[y] = n[y - 1];
			n[y - 1] = t;
		}
	int64_t span = 0;
	for (int x = 0; x < k; x++) {
		if (g[x] > span + c->line)
			return false;
		span += g[x] * n[x];
	}
	return true;
}

/* Add the accesses below y (all its executions in the frame) to the footprint. */
static void add_full(cc *c, const mnode *y)
{
	if (y->is_loop || y->nkids) {
		for (int i = 0; i < y->nkids; i++)
			add_full(c, y->kids[i]);
		return;
	}
	for (int i = 0; i < y->nacc; i++) {
		int a = y->acc[i].array;
		int64_t lo, hi;
		access_box(c, y, i, &lo, &hi);
		if (!c->has[a] || lo < c->lo[a])
			c->lo[a] = lo;
		if (!c->has[a] || hi > c->hi[a])
			c->hi[a] = hi;
		c->has[a] = true;
	}
}

static void fp_clear(cc *c)
{
	memset(c->has, 0, sizeof *c->has * (size_t)c->na);
}

/* True when storage b is accessed below y. */
static bool touches(const mnode *y, int b)
{
	if (!y->is_loop && !y->nkids) {
		for (int i = 0; i < y->nacc; i++)
			if (y->acc[i].array == b)
				return true;
		return false;
	}
	for (int i = 0; i < y->nkids; i++)
		if (touches(y->kids[i], b))
			return true;
	return false;
}

/* The frame's agreement: every access of each storage below x has the same coefficients for
 * counters 0 .. nfix-1 (bad[] where not), and aligned[] where they are all multiples of the
 * line (the common shift then keeps the hull's place within its lines). */
static void frame_walk(cc *c, const mnode *y, int nfix)
{
	if (y->is_loop || y->nkids) {
		for (int i = 0; i < y->nkids; i++)
			frame_walk(c, y->kids[i], nfix);
		return;
	}
	for (int i = 0; i < y->nacc; i++) {
		int a = y->acc[i].array;
		const int64_t *af = y->aff + i * (y->depth + 1);
		int64_t *cf = c->coef + (size_t)a * MODEL_MAX_DEPTH;
		for (int j = 0; j < nfix && j < y->depth; j++) {
			if (c->seen[a] && cf[j] != af[1 + j])
				c->bad[a] = true;
			cf[j] = af[1 + j];
			if (af[1 + j] % c->line)
				c->aligned[a] = false;
		}
		c->seen[a] = true;
	}
}

static void frame_set(cc *c, const mnode *x, int nfix)
{
	for (int a = 0; a < c->na; a++) {
		c->bad[a] = c->seen[a] = false;
		c->aligned[a] = true;
	}
	frame_walk(c, x, nfix);
}

/* Lines of storage a's hull in the window. */
static int64_t hull_lines(const cc *c, int a)
{
	if (c->bad[a])
		return c->span_lines[a];
	int64_t n;
	if (c->aligned[a])
		n = (ct_mod(c->base[a] + c->lo[a], c->line) + c->hi[a] - c->lo[a]) / c->line + 1;
	else
		n = (c->hi[a] - c->lo[a]) / c->line + 2;
	return n < c->span_lines[a] ? n : c->span_lines[a];
}

/* True when no set can hold more than `ways` lines of the window's footprint. */
static bool fp_fits(const cc *c)
{
	int64_t per_set = 0;
	for (int a = 0; a < c->na; a++)
		if (c->has[a])
			per_set += (hull_lines(c, a) + c->sets - 1) / c->sets;
	return per_set <= c->ways;
}

/* True when some access of storage b below y is dense and its box holds [tlo, thi]. */
static bool covers(const cc *c, const mnode *y, int b, int64_t tlo, int64_t thi)
{
	if (y->is_loop || y->nkids) {
		for (int i = 0; i < y->nkids; i++)
			if (covers(c, y->kids[i], b, tlo, thi))
				return true;
		return false;
	}
	for (int i = 0; i < y->nacc; i++) {
		if (y->acc[i].array != b)
			continue;
		int64_t lo, hi;
		access_box(c, y, i, &lo, &hi);
		if (lo <= tlo && hi >= thi && access_dense(c, y, i))
			return true;
	}
	return false;
}

static void prefix_node(cc *c, const mnode *y, int b, int64_t tlo, int64_t thi);

/* Add the kids of a sequence up to the first point where storage b's lines [tlo, thi] have all
 * been touched (all of them when no kid covers them alone). */
static void prefix_seq(cc *c, mnode *const *kids, int nk, int b, int64_t tlo, int64_t thi)
{
	for (int k = 0; k < nk; k++) {
		if (covers(c, kids[k], b, tlo, thi)) {
			prefix_node(c, kids[k], b, tlo, thi);
			return;
		}
		add_full(c, kids[k]);
	}
}

static void prefix_node(cc *c, const mnode *y, int b, int64_t tlo, int64_t thi)
{
	if (y->is_loop) {
		/* its first iteration covers them: the prefix ends inside it */
		const mnode *was = c->pin[y->depth];
		int64_t wasv = c->pinv[y->depth];
		c->pin[y->depth] = y;
		c->pinv[y->depth] = 0;
		bool first = covers(c, y, b, tlo, thi);
		if (first)
			prefix_seq(c, y->kids, y->nkids, b, tlo, thi);
		c->pin[y->depth] = was;
		c->pinv[y->depth] = wasv;
		if (!first)
			add_full(c, y);
	} else if (y->nkids) {
		prefix_seq(c, y->kids, y->nkids, b, tlo, thi);
	} else {
		add_full(c, y);
	}
}

static void suffix_node(cc *c, const mnode *y, int b, int64_t tlo, int64_t thi);

/* Add the kids of a sequence from the last point after which a single dense access touches
 * every line of storage b in [tlo, thi] (from the first kid touching b when no kid covers them
 * alone): the last access to any of those lines lies after it. */
static void suffix_seq(cc *c, mnode *const *kids, int nk, int b, int64_t tlo, int64_t thi)
{
	/* kids before the first that touches b hold no access to those lines */
	int from = 0;
	while (from < nk && !touches(kids[from], b))
		from++;
	for (int k = nk - 1; k >= from; k--) {
		if (covers(c, kids[k], b, tlo, thi)) {
			suffix_node(c, kids[k], b, tlo, thi);
			return;
		}
		add_full(c, kids[k]);
	}
}

/* The end of y's execution from that point on (all of y when y does not cover the lines). */
static void suffix_node(cc *c, const mnode *y, int b, int64_t tlo, int64_t thi)
{
	if (!covers(c, y, b, tlo, thi)) {
		add_full(c, y);
	} else if (y->is_loop) {
		/* its last iteration covers them: the suffix starts inside it */
		const mnode *was = c->pin[y->depth];
		int64_t wasv = c->pinv[y->depth];
		c->pin[y->depth] = y;
		c->pinv[y->depth] = y->n - 1;
		bool last = covers(c, y, b, tlo, thi);
		if (last)
			suffix_seq(c, y->kids, y->nkids, b, tlo, thi);
		c->pin[y->depth] = was;
		c->pinv[y->depth] = wasv;
		if (!last)
			add_full(c, y);
	} else if (y->nkids) {
		suffix_seq(c, y->kids, y->nkids, b, tlo, thi);
	} else {
		add_full(c, y);
	}
}

/* Reuses between the children of one execution of a sequence (frame: counters below omit
 * fixed): a line of storage b last touched in child u is touched next no later than where the
 * first later child that touches every line b can have in u (a dense access over them) has
 * done so; without one, by the last child touching b. */
/* True when byte hulls [lo1, hi1] and [lo2, hi2] of storage b (same frame) may share a line. */
static bool may_share_line(const cc *c, int b, int64_t lo1, int64_t hi1, int64_t lo2, int64_t hi2)
{
	if (!c->aligned[b])
		return lo2 <= hi1 + c->line - 1 && hi2 >= lo1 - c->line + 1;
	int64_t base = c->base[b];
	return ct_floordiv(base + lo2, c->line) <= ct_floordiv(base + hi1, c->line) &&
	       ct_floordiv(base + hi2, c->line) >= ct_floordiv(base + lo1, c->line);
}

static bool check_seq(cc *c, const mnode *x, int omit)
{
	if (x->nkids < 2)
		return true;
	c->omit = omit;
	c->carry = -1;
	frame_set(c, x, omit);
	for (int b = 0; b < c->na; b++) {
		for (int u = 0; u + 1 < x->nkids; u++) {
			if (!touches(x->kids[u], b))
				continue;
			fp_clear(c);
			add_full(c, x->kids[u]);
			int64_t tlo = c->lo[b], thi = c->hi[b];
			/* the last later kid that may touch one of those lines */
			int last = -1;
			for (int k = u + 1; k < x->nkids; k++) {
				if (!touches(x->kids[k], b))
					continue;
				fp_clear(c);
				add_full(c, x->kids[k]);
				if (c->bad[b] || may_share_line(c, b, tlo, thi, c->lo[b], c->hi[b]))
					last = k;
			}
			if (last < 0)
				continue;
			fp_clear(c);
			if (c->bad[b])
				add_full(c, x->kids[u]);
			else
				suffix_node(c, x->kids[u], b, tlo, thi);
			int v = u + 1;
			while (v <= last && (c->bad[b] || !covers(c, x->kids[v], b, tlo, thi)))
				v++;
			for (int k = u + 1; k < v && k <= last; k++)
				add_full(c, x->kids[k]);
			if (v <= last)
				prefix_node(c, x->kids[v], b, tlo, thi);
			if (!fp_fits(c))
				return false;
		}
	}
	return true;
}

/* The most iterations of loop x apart that two accesses of storage b can share a line. */
static int64_t reuse_span(cc *c, const mnode *x, int b)
{
	int d = x->depth;
	if (c->bad[b])
		return x->n - 1;
	int64_t g = c->coef[(size_t)b * MODEL_MAX_DEPTH + d];
	if (g == 0)
		return 1;
	c->klo = c->khi = 0;
	fp_clear(c);
	add_full(c, x);
	int64_t ag = g < 0 ? -g : g, k;
	if (c->aligned[b])
		k = (hull_lines(c, b) - 1) / (ag / c->line);
	else
		k = (c->hi[b] - c->lo[b] + c->line - 1) / ag;
	return k < x->n - 1 ? k : x->n - 1;
}

/* Reuses carried by loop x. */
static bool check_loop(cc *c, const mnode *x)
{
	int d = x->depth;
	if (x->n < 2)
		return true;
	c->omit = d;
	c->carry = d;
	frame_set(c, x, d + 1);
	for (int b = 0; b < c->na; b++) {
		if (!c->seen[b])
			continue;
		int64_t k = reuse_span(c, x, b);
		if (k < 1)
			continue;
		/* the targets: b's lines in iterations i (relative 0) and i + k */
		c->klo = c->khi = 0;
		fp_clear(c);
		add_full(c, x);
		int64_t slo = c->lo[b], shi = c->hi[b];
		c->klo = c->khi = k;
		fp_clear(c);
		add_full(c, x);
		int64_t tlo = c->lo[b], thi = c->hi[b];
		/* iteration i + k up to the first point that covers b's lines there */
		fp_clear(c);
		if (c->bad[b])
			add_full(c, x);
		else
			prefix_seq(c, x->kids, x->nkids, b, tlo, thi);
		if (k >= 2) {
			c->klo = 1;
			c->khi = k - 1;
			add_full(c, x);
		}
		/* iteration i from the last point that covers b's lines there */
		c->klo = c->khi = 0;
		if (c->bad[b]) {
			for (int i = 0; i < x->nkids; i++)
				if (touches(x->kids[i], b)) {
					for (int j = i; j < x->nkids; j++)
						add_full(c, x->kids[j]);
					break;
				}
		} else {
			suffix_seq(c, x->kids, x->nkids, b, slo, shi);
		}
		if (!fp_fits(c))
			return false;
	}
	return true;
}

/* True when every access below x lies inside its storage (buf) at every value of its counters. */
static bool inside(cc *c, const mnode *x, const sim_buffer *buf)
{
	if (x->is_loop || x->nkids) {
		for (int i = 0; i < x->nkids; i++)
			if (!inside(c, x->kids[i], buf))
				return false;
		return true;
	}
	for (int i = 0; i < x->nacc; i++) {
		int a = x->acc[i].array;
		if (a < 0 || a >= c->na)
			return false;
		int64_t lo, hi;
		access_box(c, x, i, &lo, &hi);
		if (lo < 0 || hi > buf[a].elem_size * (buf[a].count - 1))
			return false;
	}
	return true;
}

/* Every window below x. */
static bool check_node(cc *c, const mnode *x)
{
	if (!x->is_loop && !x->nkids)
		return x->nacc <= c->ways;
	if (x->is_loop && !check_loop(c, x))
		return false;
	if (!check_seq(c, x, x->is_loop ? x->depth + 1 : x->depth))
		return false;
	for (int i = 0; i < x->nkids; i++)
		if (!check_node(c, x->kids[i]))
			return false;
	return true;
}

ct_status cold_certify(ct_looptree *t, const sim_spec *spec, const bool *want, bool *ok)
{
	ct_ctx *ctx = t->k->ctx;
	for (int l = 0; l < spec->nlevels; l++)
		ok[l] = false;
	sim_buffer *buf = NULL;
	ct_status st = sim_tree_buffers(t, &buf);
	if (st)
		return st;
	int na = t->narrays;
	int64_t *base = calloc((size_t)na + 1, sizeof *base);
	model *m = base ? mdl_tree_new(t) : NULL;
	if (!base || !m) {
		st = m ? ct_error(ctx, CT_ERR_NOMEM, "out of memory") : ct_ctx_last_status(ctx);
		goto out;
	}
	if ((st = m->st))
		goto out;
	bool exact = !m->root.any_inexact;
	for (int a = 0; a < na; a++)
		exact = exact && !m->inexact[a];
	if (!exact)
		goto out;
	if (sim_layout(ctx, buf, na, sim_spec_max_line(spec), base) < 0) {
		st = ct_ctx_last_status(ctx);
		goto out;
	}
	cc c;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.na = na;
	c.base = base;
	c.span_lines = mdl_alloc(m, sizeof *c.span_lines * (size_t)na + 1);
	c.bad = mdl_alloc(m, sizeof *c.bad * (size_t)na + 1);
	c.aligned = mdl_alloc(m, sizeof *c.aligned * (size_t)na + 1);
	c.seen = mdl_alloc(m, sizeof *c.seen * (size_t)na + 1);
	c.has = mdl_alloc(m, sizeof *c.has * (size_t)na + 1);
	c.lo = mdl_alloc(m, sizeof *c.lo * (size_t)na + 1);
	c.hi = mdl_alloc(m, sizeof *c.hi * (size_t)na + 1);
	c.coef = mdl_alloc(m, sizeof *c.coef * (size_t)na * MODEL_MAX_DEPTH + 1);
	if ((st = m->st))
		goto out;
	c.carry = -1;
	if (!inside(&c, &m->root, buf))
		goto out;
	for (int l = 0; l < spec->nlevels; l++) {
		const sim_level *lv = &spec->level[l];
		/* LRU only: tree-PLRU can evict a line with fewer than `ways` others since its use */
		if (!want[l] || lv->policy != SIM_LRU || lv->ways <= 0)
			continue;
		c.sets = sim_level_sets(lv);
		c.ways = lv->ways;
		c.line = lv->line;
		for (int a = 0; a < na; a++) {
			int64_t span = buf[a].elem_size * buf[a].count;
			c.span_lines[a] = span > 0 ? (base[a] + span - 1) / lv->line - base[a] / lv->line + 1 : 0;
		}
		ok[l] = check_node(&c, &m->root);
	}
out:
	mdl_tree_free(m);
	free(base);
	free(buf);
	return st;
}
