/* shift.c: vectorized loops whose statement reads an array at constant offsets of the vectorized index take those reads from lane shifts of vectors loaded once, not from loads that straddle cache lines. */
#include "gen/shift.h"

#include "target/target.h"

#include <stdio.h>
#include <string.h>

/*
 * The 5-point stencil's row x reads A[x, y-1], A[x, y] and A[x, y+1] for
 * the W lanes y .. y+W-1 of one vector step. Loaded as written, the reads
 * at y-1 and y+1 are vectors W-1 elements off the line boundary that the
 * step's y sits on: each spans two cache lines, and such loads cost about
 * twice an aligned one (bench/RESULTS.md, "lane shifts": alone they held a
 * one-row loop to 74-87% of memcpy's speed, against 112-126% with shifts).
 * With the three vectors P = A[x, y-W .. y), Q = A[x, y .. y+W) and
 * R = A[x, y+W .. y+2W) in registers, A[x, y+c .. y+c+W) is lanes W+c ..
 * 2W+c of P:Q (c < 0) or lanes c .. c+W of Q:R (c > 0): one shuffle
 * (valignd with AVX-512). Q and R of one step are P and Q of the next, so
 * each step loads one vector per group of reads, aligned when the step is.
 *
 * A group is the reads of one storage whose subscripts are equal except
 * for the constant of the one subscript that the vectorized index moves by
 * 1 per iteration (and whose stride is 1). Each window (a group's offset
 * 0 < |c| < W) is a local aligned array of W lanes filled by the shuffle
 * before the step's lane loop, which then reads lane `y - base` of it where
 * it read A[.., y + c]; the expression and its order of operations are
 * unchanged, so the results are the loop's bit for bit. The compiler keeps
 * the window in a register (its store and the lane loop's load of it fold
 * away). The group's reads at offset 0 read the lanes of the step's own
 * vector Q the same way (a local copy of Q that folds away), so that the
 * row is loaded once per step, not once for the shifts and again for the
 * read at y (bench/RESULTS.md, "stencil: the centre from the register":
 * the second load cost the stencil a few points of the copy bound). Reads
 * of the array the statement writes stay as they are (a carried vector
 * would miss the step's own stores).
 *
 * Bounds: a step loads whole vectors around its base, wider than what its
 * lanes read. Steps use windows only where every vector they load lies
 * within the elements the loop over [from, to) reads of that row anyway,
 * [from + cmin, to + cmax) (cmin, cmax: the group's extreme offsets); the
 * first and last steps otherwise fall back to the plain form. Loads are
 * unaligned loads (memcpy), so rows at any alignment stay correct; they
 * are aligned, and cost least, when the step's base is: the streaming
 * loop (stream.c) steps at line boundaries of the stored array, and the
 * plain vector loop here first runs scalar to a vector boundary of the
 * first group's row.
 *
 * Prefetch: each step also prefetches, for each array, the row of its
 * leading group (the group whose base lies furthest ahead: A[x+1, y] of
 * A[x-1, y], A[x, y], A[x+1, y]) SH_PREFETCH_BYTES ahead of the step. The
 * trailing groups' rows are the leading row of earlier iterations of the
 * enclosing loops and come from the caches; the leading row is the one
 * stream from memory, and with two or three rows read at a distance of a
 * row from each other the hardware prefetcher alone left the stencil at
 * 64-79% of the copy bound, with the prefetch 101-120% on 1 and 2 threads
 * (bench/RESULTS.md, "5-point stencil: prefetch of the leading row"). The
 * address is computed as an integer (it may lie past the array's end near
 * the last rows; a prefetch never faults) and the helper is empty for
 * compilers without __builtin_prefetch. It changes no result.
 *
 * The shuffle is GCC's __builtin_shuffle where the compiler is GCC; other
 * compilers build the window through a local array of two vectors, which
 * clang folds into a shuffle, and which is the plain unaligned load (the
 * form before this) for a compiler without vector extensions.
 */

/* Whether loop variable v is a term of the sum that index id stands for. */
static bool chain_has(const cg *g, int id, int v)
{
	const ct_looptree *t = g->t;
	int n = t->chain_len && id < g->k->nindices ? t->chain_len[id] : 0;
	if (n == 0)
		return id == v;
	for (int i = 0; i < n; i++)
		if (t->chain[id][i] == v)
			return true;
	return false;
}

/* How much subscript x moves when loop variable v moves by 1; *bad when
 * it moves in steps of the loop rather than with v itself. */
static int64_t moves(const cg *g, aff x, int v, bool *bad)
{
	int64_t m = 0;
	for (int i = 0; i < x.n; i++) {
		const aff_term *tm = &x.t[i];
		if (tm->kind == AFF_INDEX && tm->id >= 0 && tm->id < g->nindices && chain_has(g, tm->id, v))
			m += tm->coef;
		else if (tm->kind == AFF_LOOP && tm->id == v)
			m += tm->coef;
		else if ((tm->kind == AFF_TRIP || tm->kind == AFF_TRI) && tm->id == v)
			*bad = true;
	}
	return m;
}

static bool is_float(ct_dtype t) { return t == CT_F32 || t == CT_F64; }

/* Whether access (a, sub) belongs to group gr; its offset in *c. */
static bool in_group(const sh_group *gr, int a, int rank, const aff *sub, int64_t *c)
{
	if (gr->a != a)
		return false;
	for (int d = 0; d < rank; d++) {
		aff x = sub[d];
		if (d == gr->dim)
			x.c = 0;
		if (!aff_equal(x, gr->sub[d]))
			return false;
	}
	*c = sub[gr->dim].c;
	return true;
}

/* Add the read e (an access) to the groups of sp. */
static void add_read(cg *g, const ir_expr *e, int written, cg_shift *sp)
{
	int a = e->id;
	if (a < 0 || a >= g->narrays || a == written || !e->sub || !is_float(g->arrays[a].type))
		return;
	int rank = g->arrays[a].rank, dim = -1;
	bool bad = false;
	for (int d = 0; d < rank; d++) {
		int64_t m = moves(g, e->sub[d], sp->v, &bad);
		if (m != 0 && (dim >= 0 || m != 1))
			bad = true;
		if (m != 0)
			dim = d;
	}
	if (bad || dim < 0 || strcmp(g->stride[a * IR_MAX_RANK + dim], "1") != 0)
		return;
	int64_t c = 0;
	int k = 0;
	while (k < sp->ngroups && !in_group(&sp->grp[k], a, rank, e->sub, &c))
		k++;
	if (k == sp->ngroups) {
		if (k == SH_MAX_GROUPS)
			return;
		sh_group *gr = &sp->grp[sp->ngroups++];
		memset(gr, 0, sizeof *gr);
		gr->a = a;
		gr->dim = dim;
		for (int d = 0; d < rank; d++)
			gr->sub[d] = e->sub[d];
		gr->sub[dim].c = 0;
		c = e->sub[dim].c;
		gr->cmin = gr->cmax = c;
	}
	sh_group *gr = &sp->grp[k];
	gr->cmin = c < gr->cmin ? c : gr->cmin;
	gr->cmax = c > gr->cmax ? c : gr->cmax;
	if (c == 0)
		gr->center = true;
	if (c == 0 || c <= -sp->w || c >= sp->w)
		return;
	for (int i = 0; i < sp->nwins; i++)
		if (sp->win[i].grp == k && sp->win[i].c == c)
			return;
	if (sp->nwins == SH_MAX_WINS)
		return;
	sp->win[sp->nwins++] = (sh_win){k, c};
	gr->before = gr->before || c < 0;
	gr->after = gr->after || c > 0;
}

/* The reads of e, into the groups of sp. */
static void add_reads(cg *g, const ir_expr *e, int written, cg_shift *sp)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS)
		add_read(g, e, written, sp);
	for (int i = 0; i < e->nargs; i++)
		add_reads(g, e->args[i], written, sp);
}

bool sh_plan(cg *g, const ir_node *s, int v, int64_t w, cg_shift *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->v = v;
	sp->w = w;
	/* lanes: a power of two the helpers spell, vectors of at most 128 bytes */
	if (!s || s->kind != ND_STMT || !s->lhs || s->lhs->kind != EX_ACCESS || w < 2 || w > 16 || (w & (w - 1)) != 0 ||
	    v < 0 || v >= g->nindices || g->fixed[v])
		return false;
	add_reads(g, s->rhs, s->lhs->id, sp);
	return sp->nwins > 0;
}

/* ------------------------------------------------------------ helpers */

/* The C names of group gr's vector type: ct_svf16, ct_svd8 ... */
static void type_name(const cg *g, const cg_shift *sp, int gr, char *out, size_t cap)
{
	bool dbl = g->arrays[sp->grp[gr].a].type == CT_F64;
	snprintf(out, cap, "ct_sv%c%lld", dbl ? 'd' : 'f', (long long)sp->w);
}

/* The vector type, its load and its window function for lanes of type t,
 * once per kernel. */
static void need_helpers(cg *g, ct_dtype t, int64_t w)
{
	int lg = 0;
	while ((1 << lg) < w)
		lg++;
	unsigned bit = 1u << (lg + (t == CT_F64 ? 8 : 0));
	if (g->shift_types & bit)
		return;
	g->shift_types |= bit;
	const char *e = ir_dtype_c(t);
	char ty[32];
	snprintf(ty, sizeof ty, "ct_sv%c%lld", t == CT_F64 ? 'd' : 'f', (long long)w);
	long long bytes = w * (int64_t)ct_dtype_size(t);
	kg_preamble(g->kg, "#if defined(__GNUC__)");
	kg_preamble(g->kg, "typedef %s %s __attribute__((vector_size(%lld)));", e, ty, bytes);
	kg_preamble(g->kg, "#else");
	kg_preamble(g->kg, "typedef struct { %s e[%lld]; } %s;", e, (long long)w, ty);
	kg_preamble(g->kg, "#endif");
	kg_preamble(g->kg, "static inline %s %s_load(const %s *p) { %s r; memcpy(&r, p, sizeof r); return r; }", ty,
	             ty, e, ty);
	kg_preamble(g->kg, "/* lanes s .. s+%lld of lo:hi (0 < s < %lld) into w: one shuffle where the compiler has "
	                   "vector shuffles */",
	             (long long)w - 1, (long long)w);
	kg_preamble(g->kg, "static inline void %s_win(%s *w, %s lo, %s hi, int s)", ty, e, ty, ty);
	kg_preamble(g->kg, "{");
	kg_preamble(g->kg, "#if defined(__GNUC__) && !defined(__clang__)");
	kg_preamble(g->kg, "\ttypedef %s ct_m __attribute__((vector_size(%lld)));",
	             t == CT_F64 ? "int64_t" : "int32_t", bytes);
	ct_buf id;
	ct_buf_init(&id);
	for (int64_t i = 0; i < w; i++)
		ct_buf_printf(&id, "%s%lld", i ? ", " : "", (long long)i);
	kg_preamble(g->kg, "\tconst ct_m id = {%s};", id.s ? id.s : "0");
	if (id.failed)
		g->failed = true;
	ct_buf_free(&id);
	kg_preamble(g->kg, "\tconst %s r = __builtin_shuffle(lo, hi, id + s);", ty);
	kg_preamble(g->kg, "\tmemcpy(w, &r, sizeof r);");
	kg_preamble(g->kg, "#else");
	kg_preamble(g->kg, "\t%s t[%lld];", e, 2 * (long long)w);
	kg_preamble(g->kg, "\tmemcpy(t, &lo, sizeof lo);");
	kg_preamble(g->kg, "\tmemcpy(t + %lld, &hi, sizeof hi);", (long long)w);
	kg_preamble(g->kg, "\tmemcpy(w, t + s, sizeof lo);");
	kg_preamble(g->kg, "#endif");
	kg_preamble(g->kg, "}");
}

/* Whether group k is the leading one of its array: no other group of the
 * same array and moving subscript has subscripts that differ from k's only
 * in their constants and are ahead of k's (row-major order). */
static bool leading(const cg_shift *sp, int k)
{
	const sh_group *gk = &sp->grp[k];
	for (int j = 0; j < sp->ngroups; j++) {
		const sh_group *gj = &sp->grp[j];
		if (j == k || gj->a != gk->a || gj->dim != gk->dim)
			continue;
		bool same = true;
		int order = 0; /* > 0: j ahead of k */
		for (int d = 0; d < IR_MAX_RANK && same; d++) {
			aff x = gj->sub[d], y = gk->sub[d];
			int64_t cx = x.c, cy = y.c;
			x.c = y.c = 0;
			if (!aff_equal(x, y))
				same = false;
			else if (order == 0 && cx != cy)
				order = cx > cy ? 1 : -1;
		}
		if (same && (order > 0 || (order == 0 && j < k)))
			return false;
	}
	return true;
}

/* The bit of shift_types for the prefetch helper: above need_helpers'
 * bits (lane count's log2, + 8 for f64: below 16). */
#define SH_PREFETCH_BIT (1u << 20)

/* The prefetch helper, once per kernel. */
static void need_prefetch(cg *g)
{
	if (g->shift_types & SH_PREFETCH_BIT)
		return;
	g->shift_types |= SH_PREFETCH_BIT;
	kg_preamble(g->kg, "/* a hint: fetch the line at p into the caches (no fault where p is not mapped) */");
	kg_preamble(g->kg, "static inline void ct_prefetch(uintptr_t p)");
	kg_preamble(g->kg, "{");
	kg_preamble(g->kg, "#if defined(__GNUC__)");
	kg_preamble(g->kg, "\t__builtin_prefetch((const void *)p, 0, 3);");
	kg_preamble(g->kg, "#else");
	kg_preamble(g->kg, "\t(void)p;");
	kg_preamble(g->kg, "#endif");
	kg_preamble(g->kg, "}");
}

void sh_base_addr(cg *g, const cg_shift *sp, int gr, ct_buf *b)
{
	/* the access at the step's first lane: v spelt as the base's name */
	char *saved = g->iname[sp->v], name[320];
	const struct cg_shift *on = g->shift;
	snprintf(name, sizeof name, "%s", sp->base);
	g->iname[sp->v] = name;
	g->shift = NULL;
	bool raw = g->raw; /* an address: what is loaded from it is tested apart (sh_load) */
	g->raw = true;
	ct_buf_putc(b, '&');
	cg_access(g, b, sp->grp[gr].a, sp->grp[gr].sub);
	g->raw = raw;
	g->shift = on;
	g->iname[sp->v] = saved;
}

/* `ty_load(&BASE + delta)` of group gr into b (delta: elements, may be 0);
 * in checked mode `TEST ? ty_load(..) : (ty){0}` with the test of the
 * vector's w lanes. */
static void sh_load(cg *g, const cg_shift *sp, int gr, const char *ty, int64_t delta, ct_buf *b)
{
	if (g->checked) {
		char *saved = g->iname[sp->v], name[320], d[32];
		snprintf(name, sizeof name, "%s", sp->base);
		snprintf(d, sizeof d, "(%lld)", (long long)delta);
		g->iname[sp->v] = name;
		cg_check_range(g, b, sp->grp[gr].a, sp->grp[gr].sub, d, sp->w);
		g->iname[sp->v] = saved;
		ct_buf_puts(b, " ? ");
	}
	ct_buf_printf(b, "%s_load(", ty);
	sh_base_addr(g, sp, gr, b);
	if (delta)
		ct_buf_printf(b, " %c %lld", delta < 0 ? '-' : '+', (long long)(delta < 0 ? -delta : delta));
	ct_buf_putc(b, ')');
	if (g->checked)
		ct_buf_printf(b, " : (%s){0}", ty);
}

void sh_range(const cg_shift *sp, const char *from, const char *to, ct_buf *lo, ct_buf *hi)
{
	int64_t l = INT64_MIN, h = INT64_MAX;
	for (int k = 0; k < sp->ngroups; k++) {
		const sh_group *gr = &sp->grp[k];
		if (!gr->before && !gr->after)
			continue;
		/* loads from base - W (before) or base, to base + 2W (after) or base + W */
		int64_t gl = gr->cmin + (gr->before ? sp->w : 0), gh = gr->cmax - (gr->after ? 2 : 1) * sp->w;
		l = gl > l ? gl : l;
		h = gh < h ? gh : h;
	}
	ct_buf_printf(lo, "%s + (%lld)", from, (long long)l);
	ct_buf_printf(hi, "%s + (%lld)", to, (long long)h);
}

/* A statement line into kgen. */
static void put(cg *g, ct_buf *b)
{
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", b->s ? b->s : "");
	if (b->failed)
		g->failed = true;
	ct_buf_free(b);
	ct_buf_init(b);
}

/* One statement "QUAL TY ct_svWK = <group k's vector at offset off>;" (W: p, q
 * or r, the window before, at and after the step), flushed through b. */
static void put_window(cg *g, cg_shift *sp, int k, const char *qual, const char *ty, char w, int64_t off,
                       ct_buf *b)
{
	ct_buf_printf(b, "%s%s ct_sv%c%d = ", qual, ty, w, k);
	sh_load(g, sp, k, ty, off, b);
	ct_buf_putc(b, ';');
	put(g, b);
}

void sh_prime(cg *g, cg_shift *sp)
{
	ct_buf b;
	ct_buf_init(&b);
	for (int k = 0; k < sp->ngroups; k++) {
		const sh_group *gr = &sp->grp[k];
		if (!gr->before && !gr->after)
			continue;
		char ty[32];
		type_name(g, sp, k, ty, sizeof ty);
		need_helpers(g, g->arrays[gr->a].type, sp->w);
		if (gr->before)
			put_window(g, sp, k, "", ty, 'p', -sp->w, &b);
		if (gr->after)
			put_window(g, sp, k, "", ty, 'q', 0, &b);
	}
	ct_buf_free(&b);
}

void sh_step_begin(cg *g, cg_shift *sp)
{
	ct_buf b;
	ct_buf_init(&b);
	for (int k = 0; k < sp->ngroups; k++) {
		const sh_group *gr = &sp->grp[k];
		if (!gr->before && !gr->after)
			continue;
		char ty[32];
		type_name(g, sp, k, ty, sizeof ty);
		put_window(g, sp, k, "const ", ty, gr->after ? 'r' : 'q', gr->after ? sp->w : 0, &b);
	}
	for (int k = 0; k < sp->ngroups; k++) {
		if (!leading(sp, k))
			continue;
		need_prefetch(g);
		ct_buf_puts(&b, "ct_prefetch((uintptr_t)(");
		sh_base_addr(g, sp, k, &b);
		ct_buf_printf(&b, ") + %d);", SH_PREFETCH_BYTES);
		put(g, &b);
	}
	for (int k = 0; k < sp->ngroups; k++) {
		const sh_group *gr = &sp->grp[k];
		if (!gr->center || (!gr->before && !gr->after))
			continue;
		/* the reads at offset 0: lanes of the step's own vector, not a second load of them */
		ct_dtype t = g->arrays[gr->a].type;
		long long w = (long long)sp->w;
		ct_buf_printf(&b, "%s ct_sz%d[%lld] __attribute__((aligned(%lld))); /* %s at offset 0 */", ir_dtype_c(t), k, w,
		              w * (long long)ct_dtype_size(t), g->aname[gr->a]);
		put(g, &b);
		ct_buf_printf(&b, "memcpy(ct_sz%d, &ct_svq%d, sizeof ct_sz%d);", k, k, k);
		put(g, &b);
	}
	for (int i = 0; i < sp->nwins; i++) {
		const sh_win *wn = &sp->win[i];
		ct_dtype t = g->arrays[sp->grp[wn->grp].a].type;
		char ty[32];
		type_name(g, sp, wn->grp, ty, sizeof ty);
		ct_buf_printf(&b, "%s ct_sw%d[%lld] __attribute__((aligned(%lld))); /* %s at offset %+lld */",
		              ir_dtype_c(t), i, (long long)sp->w, (long long)(sp->w * (int64_t)ct_dtype_size(t)),
		              g->aname[sp->grp[wn->grp].a], (long long)wn->c);
		put(g, &b);
		if (wn->c < 0)
			ct_buf_printf(&b, "%s_win(ct_sw%d, ct_svp%d, ct_svq%d, %lld);", ty, i, wn->grp, wn->grp,
			              (long long)(sp->w + wn->c));
		else
			ct_buf_printf(&b, "%s_win(ct_sw%d, ct_svq%d, ct_svr%d, %lld);", ty, i, wn->grp, wn->grp,
			              (long long)wn->c);
		put(g, &b);
	}
	ct_buf_free(&b);
}

void sh_step_end(cg *g, const cg_shift *sp)
{
	for (int k = 0; k < sp->ngroups; k++) {
		const sh_group *gr = &sp->grp[k];
		if (gr->before)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_svp%d = ct_svq%d;", k, k);
		if (gr->after)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_svq%d = ct_svr%d;", k, k);
	}
}

bool cg_shift_access(cg *g, ct_buf *b, int a, const aff *sub)
{
	const cg_shift *sp = g->shift;
	if (!sp || a < 0 || a >= g->narrays || !sub)
		return false;
	int rank = g->arrays[a].rank;
	for (int k = 0; k < sp->ngroups; k++) {
		int64_t c = 0;
		if (!in_group(&sp->grp[k], a, rank, sub, &c))
			continue;
		if (c == 0 && sp->grp[k].center && (sp->grp[k].before || sp->grp[k].after)) {
			ct_buf_printf(b, "ct_sz%d[%s - %s]", k, g->iname[sp->v], sp->base);
			return true;
		}
		for (int i = 0; i < sp->nwins; i++)
			if (sp->win[i].grp == k && sp->win[i].c == c) {
				ct_buf_printf(b, "ct_sw%d[%s - %s]", i, g->iname[sp->v], sp->base);
				return true;
			}
		return false;
	}
	return false;
}

/* ------------------------------------------------------------ plain vector loops */

/* The widest vector of the target in bytes (target_vector_bytes), kept
 * for the rest of the generation as register tiles keep it (rtile.c). */
static int vector_bytes(cg *g)
{
	if (g->vector_bytes == 0)
		g->vector_bytes = target_vector_bytes(g->k->ctx);
	return g->vector_bytes;
}

/* The one assignment of nodes; NULL otherwise. */
static const ir_node *one_stmt(const cg *g, lt_node *const *nodes, int n)
{
	if (n != 1 || nodes[0]->kind != LT_STMT || !nodes[0]->stmt)
		return NULL;
	const ir_node *s = nodes[0]->stmt;
	if (!s->lhs || s->lhs->kind != EX_ACCESS || s->lhs->id < 0 || s->lhs->id >= g->narrays || !s->rhs)
		return NULL;
	return s;
}

bool cg_shift_loop(cg *g, const lt_node *x, const char *from, const char *to, lt_node *const *nodes, int n)
{
	if (x->kind != LT_LOOP || !x->vector || x->step != 1 || x->unroll || x->parallel || g->band_left > 0 ||
	    x->index < 0 || x->index >= g->nindices || g->fixed[x->index] || g->shift || g->hook_loop)
		return false; /* (hook_loop: another backend's C dialect, without GNU vectors) */
	const ir_node *s = one_stmt(g, nodes, n);
	if (!s)
		return false;
	size_t es = ct_dtype_size(g->arrays[s->lhs->id].type);
	int64_t w = es ? vector_bytes(g) / (int64_t)es : 0;
	const char *v = g->iname[x->index];
	char base[300];
	snprintf(base, sizeof base, "ct_sv_%s", v);
	cg_shift sp;
	if (!sh_plan(g, s, x->index, w, &sp))
		return false;
	sp.base = base;
	g->cur_stmt = s;
	ct_buf lo, hi, shlo, shhi, addr;
	ct_buf_init(&lo);
	ct_buf_init(&hi);
	ct_buf_init(&shlo);
	ct_buf_init(&shhi);
	ct_buf_init(&addr);
	if (!from)
		cg_bound(g, &lo, x->lo);
	if (!to)
		cg_bound(g, &hi, x->hi);
	const char *f = from ? from : lo.s ? lo.s : "0", *t = to ? to : hi.s ? hi.s : "0";
	const lt_node *outer = g->open[x->index];
	g->open[x->index] = x;
	int k0 = sp.win[0].grp;
	sh_base_addr(g, &sp, k0, &addr);
	sh_range(&sp, "ct_sv_from", "ct_sv_end", &shlo, &shhi);
	kg_comment(g->kg, "%svector loop over %s in steps of %lld lanes: reads at offsets of %s from lane shifts of "
	           "vectors loaded once",
	           x->tail ? "tail, " : "", v, (long long)w, v);
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_sv_from = %s, ct_sv_end = %s;", f, t);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_sh_lo = %s, ct_sh_hi = %s;", shlo.s ? shlo.s : "0",
	        shhi.s ? shhi.s : "0");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t %s = ct_sv_from;", base);
	/* scalar up to where the windows' loads stay in range and start on a
	 * vector boundary of the first group's row (at most w more) */
	kg_block_open(g->kg, "for (; %s < ct_sv_end; %s++)", base, base);
	kg_block_open(g->kg, "if (%s >= ct_sh_lo && (((uintptr_t)(%s) & %lld) == 0 || %s >= ct_sh_lo + %lld))", base,
	              addr.s ? addr.s : "0", (long long)(w * (int64_t)ct_dtype_size(g->arrays[sp.grp[k0].a].type) - 1),
	              base, (long long)w);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "break;");
	kg_block_close(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %s;", v, base);
	cg_nodes(g, nodes, n);
	kg_block_close(g->kg);
	/* the vector steps */
	kg_block_open(g->kg, "if (%s + %lld <= ct_sv_end && %s <= ct_sh_hi)", base, (long long)w, base);
	sh_prime(g, &sp);
	kg_block_open(g->kg, "for (const int64_t ct_sv_last = ct_min64(ct_sv_end - %lld, ct_sh_hi); %s <= ct_sv_last; %s += %lld)",
	              (long long)w, base, base, (long long)w);
	sh_step_begin(g, &sp);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
	kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s + %lld; %s++)", v, base, v, base, (long long)w, v);
	g->shift = &sp;
	cg_nodes(g, nodes, n);
	g->shift = NULL;
	kg_block_close(g->kg);
	sh_step_end(g, &sp);
	kg_block_close(g->kg);
	kg_block_close(g->kg);
	/* the rest */
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
	kg_block_open(g->kg, "for (int64_t %s = %s; %s < ct_sv_end; %s++)", v, base, v, v);
	cg_nodes(g, nodes, n);
	kg_block_close(g->kg);
	kg_block_close(g->kg);
	g->open[x->index] = outer;
	g->failed = g->failed || lo.failed || hi.failed || shlo.failed || shhi.failed || addr.failed;
	ct_buf_free(&lo);
	ct_buf_free(&hi);
	ct_buf_free(&shlo);
	ct_buf_free(&shhi);
	ct_buf_free(&addr);
	return true;
}
