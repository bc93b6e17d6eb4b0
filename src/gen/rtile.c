/* rtile.c: register tiles: an unrolled x vectorized band's left-hand side kept in vector variables across the loop around it. */
#include "gen/cgen.h"
#include "ir/deps.h"
#include "target/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The pattern (Accera's kernelize, BLIS's micro-kernel), on the planned tree:
 *
 *   for r ...                 R: a loop that is not unrolled, vectorized or parallel
 *                             (its bounds may be affine in enclosing indices)
 *     for u ... (unroll)      U: zero or more unrolled loops, each the only kid of the last
 *       for v ... (vectorize) V: constant trip count, step 1
 *         L[..] op= e         the only statement: op is += or -=, L is f32 or f64 and
 *                             does not move with r; e is made of + - * / unary -, fma,
 *                             accesses and values that do not move with v; accesses of
 *                             L's own storage only where lhs_reads_ok proves them apart
 *
 * becomes, in C with GCC/Clang vector extensions:
 *
 *   { acc(u, c) = L at (u, lanes c)           one accumulator per unrolled iteration and chunk
 *     for r ... { each operand at (u, c) fetched once: a vector load where it moves with v,
 *                 a scalar (broadcast by the vector arithmetic) where it does not;
 *                 acc(u, c) = acc(u, c) + e(u, c) }     (a * b + c contracts to an FMA)
 *     L at (u, c) = acc(u, c) }
 *
 * V's iterations are cut into chunks of power-of-two lanes, widest first, up to the
 * target's vector width (target_vector_bytes: the ctx's CT_OPT_VECTOR_BYTES, else the probe's): 16 floats in one
 * chunk on AVX-512, 13 as 8 + 4 + 1 (a one-lane chunk is a scalar). The operations are
 * those of the loops, in the same order per element, so the result equals the loops' up
 * to the FMA contraction. Tails need nothing of their own: every version of the loops
 * (main, tail) has its own trip counts and gets its own tile; a version whose trip count
 * is only known at run time does not match and is emitted as loops.
 */

#define RT_MAX_U 8     /* unrolled loops in one band */
#define RT_MAX_ACC 64  /* accumulators of one tile (more would only spill) */
#define RT_MAX_CHUNKS 16

typedef struct chunk {
	int64_t off; /* first iteration of V it covers, from V's lower bound */
	int lanes;
	int active;  /* lanes in use: < lanes for a masked last chunk */
} chunk;

/* An operand fetched once per iteration of R. */
typedef struct operand {
	char *text;  /* the access (scalar) or its address (vector) as C */
	char *check; /* checked mode, vectors: the test of its lanes' range (cg_check_range); else NULL */
	int lanes;   /* 0: scalar */
	int active;  /* lanes loaded (the rest zero): < lanes in a masked chunk */
} operand;

typedef struct rtile {
	cg *g;
	const lt_node *r;
	const lt_node *u[RT_MAX_U];
	int nu;
	int64_t utrip[RT_MAX_U];
	const lt_node *v;
	int64_t vlo, vtrip;
	const ir_node *s;
	ct_dtype type;
	chunk ch[RT_MAX_CHUNKS];
	int nch;
	operand *op;
	int nop, cap;
	int cur_active; /* lanes in use of the chunk being spelled */
	bool failed;
} rtile;

/* ------------------------------------------------------------ matching */

static bool const_bounds(const lt_node *x, int64_t *lo, int64_t *trip)
{
	int64_t l, h;
	if (!lt_const_range(x, &l, &h) || x->step < 1)
		return false;
	*lo = l;
	*trip = ct_trip_count(l, h, x->step);
	return true;
}

/* Whether e moves with loop variable v (its accesses or index values). */
static bool moves_with(const rtile *rt, const ir_expr *e, int v)
{
	const ct_looptree *t = rt->g->t;
	bool bad = false;
	if (e->kind == EX_ACCESS)
		for (int d = 0; d < t->arrays[e->id].rank; d++)
			if (lt_var_coef(t, e->sub[d], v, &bad) != 0 || bad)
				return true;
	if (e->kind == EX_INDEX && e->id >= 0 && e->id < t->k->nindices && t->chain && t->chain[e->id])
		for (int m = 0; m < t->chain_len[e->id]; m++)
			if (t->chain[e->id][m] == v)
				return true;
	for (int i = 0; i < e->nargs; i++)
		if (moves_with(rt, e->args[i], v))
			return true;
	return false;
}

/* Whether the right-hand side e can be computed on vectors: the parts that
 * move with V are accesses of the statement's type joined by + - * / unary -
 * and fma (reads of the left-hand side's storage: see lhs_reads_ok). */
static bool vector_expr_ok(const rtile *rt, const ir_expr *e)
{
	int vv = rt->v->index;
	if (!moves_with(rt, e, vv)) {
		for (int i = 0; i < e->nargs; i++)
			if (!vector_expr_ok(rt, e->args[i]))
				return false;
		return true;
	}
	if (e->type != rt->type)
		return false;
	switch (e->kind) {
	case EX_ACCESS: return true;
	case EX_NEG: return vector_expr_ok(rt, e->args[0]);
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: return vector_expr_ok(rt, e->args[0]) && vector_expr_ok(rt, e->args[1]);
	case EX_CALL:
		return e->fn == FN_FMA && vector_expr_ok(rt, e->args[0]) && vector_expr_ok(rt, e->args[1]) &&
		       vector_expr_ok(rt, e->args[2]);
	default: return false;
	}
}

/* The widest vector of the target in lanes of type t (at least 1). */
static int max_lanes(cg *g, ct_dtype t)
{
	if (g->vector_bytes == 0)
		g->vector_bytes = target_vector_bytes(g->k->ctx);
	int lanes = g->vector_bytes / (int)ct_dtype_size(t);
	return lanes < 1 ? 1 : lanes > 64 ? 64 : lanes;
}

/* Cut V's trip count into chunks of power-of-two lanes, widest first. With
 * 64-byte vectors (AVX-512, whose loads and stores take a lane mask) a
 * remainder that is not a power of two is one masked full-width chunk
 * instead: 31 floats are 16 + 16 (15 in use), two accumulators per row
 * where 16 + 8 + 4 + 2 + 1 took five (and a scalar). */
static bool make_chunks(rtile *rt)
{
	int most = max_lanes(rt->g, rt->type);
	bool masks = most > 1 && (size_t)most * ct_dtype_size(rt->type) == 64;
	int64_t off = 0;
	rt->nch = 0;
	while (off < rt->vtrip) {
		int64_t left = rt->vtrip - off;
		int lanes = most, active;
		if (masks && left < most && (left & (left - 1)) != 0) {
			active = (int)left;
		} else {
			while (lanes > left)
				lanes /= 2;
			active = lanes;
		}
		if (rt->nch == RT_MAX_CHUNKS)
			return false;
		rt->ch[rt->nch++] = (chunk){off, lanes, active};
		off += active;
	}
	return true;
}

/* One element of the left-hand side, relative to its place at the first
 * iteration of the band: per dimension the offset. */
typedef struct lelem {
	int64_t off[IR_MAX_RANK];
} lelem;

static int cmp_lelem(const void *a, const void *b)
{
	const lelem *x = a, *y = b;
	for (int d = 0; d < IR_MAX_RANK; d++)
		if (x->off[d] != y->off[d])
			return x->off[d] < y->off[d] ? -1 : 1;
	return 0;
}

#define RT_MAX_ELEMS 65536 /* iterations of U x V checked for distinct elements */

/*
 * Whether every iteration of the unrolled loops and V updates its own
 * element of the left-hand side: each gets an accumulator of its own, so
 * two iterations on one element (a U loop the left-hand side does not move
 * with: a reduction, `unroll(kkk)` over `C[i, j] +=`) would each store
 * their partial sum and the last would win. Such a band stays loops.
 */
static bool lhs_distinct(const rtile *rt)
{
	const ct_looptree *t = rt->g->t;
	const ir_expr *lhs = rt->s->lhs;
	int rank = t->arrays[lhs->id].rank, nl = rt->nu + 1;
	int64_t coef[RT_MAX_U + 1][IR_MAX_RANK], trip[RT_MAX_U + 1], step[RT_MAX_U + 1], n = 1;
	for (int l = 0; l < nl; l++) {
		const lt_node *y = l < rt->nu ? rt->u[l] : rt->v;
		trip[l] = l < rt->nu ? rt->utrip[l] : rt->vtrip;
		step[l] = y->step;
		for (int d = 0; d < rank; d++) {
			bool bad = false;
			coef[l][d] = lt_var_coef(t, lhs->sub[d], y->index, &bad);
			if (bad)
				return false;
		}
		if (!ct_mul_ok(n, trip[l], &n) || n > RT_MAX_ELEMS)
			return false;
	}
	lelem *e = calloc((size_t)n, sizeof *e);
	if (!e)
		return false;
	bool ok = true;
	for (int64_t i = 0; i < n && ok; i++) {
		int64_t r = i;
		for (int l = nl - 1; l >= 0; l--) {
			int64_t it = r % trip[l], v;
			r /= trip[l];
			for (int d = 0; d < rank && ok; d++)
				ok = ct_mul_ok(it * step[l], coef[l][d], &v) && ct_add_ok(e[i].off[d], v, &e[i].off[d]);
		}
	}
	if (ok) {
		qsort(e, (size_t)n, sizeof *e, cmp_lelem);
		for (int64_t i = 1; i < n && ok; i++)
			ok = cmp_lelem(&e[i - 1], &e[i]) != 0;
	}
	free(e);
	return ok;
}

/* A right-hand side that reads the left-hand side's storage elsewhere
 * (trsm's B[i, j] -= L[i, k] * B[k, j], k < i): the tile holds its
 * elements in registers while R runs, so the reads must never meet them.
 * The dependence test (isl) proves it: no loop of the band (R, U, V)
 * carries a dependence other than the left-hand side's own reduction.
 * Unknown is no. */
static bool lhs_reads_ok(const rtile *rt)
{
	cg *g = rt->g;
	dep_info *d = dep_compute(g->t->k); /* the tree's kernel: g->k, not const */
	bool ok = d != NULL && dep_loop_carries(d, g->t, rt->r, false) == 0 &&
	          dep_loop_carries(d, g->t, rt->v, false) == 0;
	for (int i = 0; i < rt->nu && ok; i++)
		ok = dep_loop_carries(d, g->t, rt->u[i], false) == 0;
	dep_free(d);
	ct_ctx_clear_error(g->k->ctx); /* not proved: the loops are emitted as loops */
	return ok;
}

static bool match(rtile *rt, const lt_node *x)
{
	const ct_looptree *t = rt->g->t;
	if (x->kind != LT_LOOP || x->unroll || x->vector || x->parallel || x->nkids != 1)
		return false;
	rt->r = x;
	const lt_node *y = x->kids[0];
	rt->nu = 0;
	while (y->kind == LT_LOOP && y->unroll && y->nkids == 1 && rt->nu < RT_MAX_U) {
		int64_t lo;
		if (!const_bounds(y, &lo, &rt->utrip[rt->nu]) || rt->utrip[rt->nu] == 0)
			return false;
		rt->u[rt->nu++] = y;
		y = y->kids[0];
	}
	if (y->kind != LT_LOOP || !y->vector || y->step != 1 || y->nkids != 1 ||
	    !const_bounds(y, &rt->vlo, &rt->vtrip) || rt->vtrip == 0)
		return false;
	rt->v = y;
	const lt_node *st = y->kids[0];
	if (st->kind != LT_STMT || !st->stmt || !st->stmt->lhs || st->stmt->lhs->kind != EX_ACCESS)
		return false;
	rt->s = st->stmt;
	const ir_expr *lhs = rt->s->lhs;
	if ((rt->s->op != AS_ADD && rt->s->op != AS_SUB) || lhs->id < 0 || lhs->id >= t->narrays)
		return false;
	rt->type = t->arrays[lhs->id].type;
	if (rt->type != CT_F32 && rt->type != CT_F64)
		return false;
	/* the left-hand side stays put while R runs */
	for (int d = 0; d < t->arrays[lhs->id].rank; d++) {
		bool bad = false;
		if (lt_var_coef(t, lhs->sub[d], x->index, &bad) != 0 || bad)
			return false;
	}
	if (!vector_expr_ok(rt, rt->s->rhs) || !lhs_distinct(rt) || !make_chunks(rt))
		return false;
	int64_t acc = rt->nch;
	for (int i = 0; i < rt->nu; i++)
		acc *= rt->utrip[i];
	return acc <= RT_MAX_ACC && (!ir_expr_reads(rt->s->rhs, lhs->id) || lhs_reads_ok(rt));
}

/* ------------------------------------------------------------ text */

static const char *elem_c(ct_dtype t) { return t == CT_F32 ? "float" : "double"; }
static char elem_tag(ct_dtype t) { return t == CT_F32 ? 'f' : 'd'; }

/* The typedef and load/store helpers of the vector of `lanes` elements of
 * type t, in the preamble once. */
static void need_vtype(cg *g, ct_dtype t, int lanes)
{
	int bit = 0;
	while ((1 << bit) < lanes)
		bit++;
	unsigned *have = &g->vtypes[t == CT_F64];
	if (lanes < 2 || (*have & (1u << bit)))
		return;
	*have |= 1u << bit;
	const char *e = elem_c(t);
	char n[32];
	snprintf(n, sizeof n, "v%d%c", lanes, elem_tag(t));
	size_t bytes = (size_t)lanes * ct_dtype_size(t);
	/* unaligned loads and stores through memcpy: one vector move each */
	kg_preamble(g->kg, "typedef %s ct_%s __attribute__((vector_size(%zu)));", e, n, bytes);
	kg_preamble(g->kg, "static inline ct_%s ct_ld_%s(const %s *p) { ct_%s v; memcpy(&v, p, sizeof v); return v; }",
	            n, n, e, n);
	kg_preamble(g->kg, "static inline void ct_st_%s(%s *p, ct_%s v) { memcpy(p, &v, sizeof v); }", n, e, n);
	if (bytes != 64)
		return;
	/* masked chunks (make_chunks): the first n lanes, with AVX-512 mask
	 * moves where the compiler targets them, else through memcpy */
	const char *ps = t == CT_F64 ? "pd" : "ps", *mt = t == CT_F64 ? "__mmask8" : "__mmask16";
	kg_preamble(g->kg, "#if defined(__AVX512F__)");
	kg_preamble(g->kg, "#include <immintrin.h>");
	kg_preamble(g->kg,
	            "static inline ct_%s ct_ldm_%s(const %s *p, int n) { return (ct_%s)_mm512_maskz_loadu_%s((%s)((1u << n) - 1), p); }",
	            n, n, e, n, ps, mt);
	kg_preamble(g->kg,
	            "static inline void ct_stm_%s(%s *p, ct_%s v, int n) { _mm512_mask_storeu_%s(p, (%s)((1u << n) - 1), (__m512%s)v); }",
	            n, e, n, ps, mt, t == CT_F64 ? "d" : "");
	kg_preamble(g->kg, "#else");
	kg_preamble(g->kg,
	            "static inline ct_%s ct_ldm_%s(const %s *p, int n) { ct_%s v = {0}; memcpy(&v, p, (size_t)n * sizeof *p); return v; }",
	            n, n, e, n);
	kg_preamble(g->kg,
	            "static inline void ct_stm_%s(%s *p, ct_%s v, int n) { memcpy(p, &v, (size_t)n * sizeof *p); }", n, e, n);
	kg_preamble(g->kg, "#endif");
}

/* The C type of an accumulator or operand of `lanes` lanes, and the
 * suffix of its load/store helpers. */
static void type_name(const rtile *rt, int lanes, char *out, size_t cap)
{
	if (lanes < 2)
		snprintf(out, cap, "%s", elem_c(rt->type));
	else
		snprintf(out, cap, "ct_v%d%c", lanes, elem_tag(rt->type));
}

static const char *helper_suffix(const char *type_name_text)
{
	return type_name_text + 3; /* "ct_v16f" -> "v16f" */
}

/* Fix the unrolled loops at iteration m of their product (last fastest)
 * and V at the first lane of chunk c. */
static void fix_vars(rtile *rt, int64_t m, int c)
{
	cg *g = rt->g;
	for (int i = rt->nu - 1; i >= 0; i--) {
		int64_t lo, trip;
		const_bounds(rt->u[i], &lo, &trip);
		int x = rt->u[i]->index;
		g->fixed[x] = true;
		g->fixed_val[x] = lo + m % rt->utrip[i] * rt->u[i]->step;
		m /= rt->utrip[i];
	}
	g->fixed[rt->v->index] = true;
	g->fixed_val[rt->v->index] = rt->vlo + rt->ch[c].off;
}

static void unfix_vars(rtile *rt)
{
	for (int i = 0; i < rt->nu; i++)
		rt->g->fixed[rt->u[i]->index] = false;
	rt->g->fixed[rt->v->index] = false;
}

/* The name of the operand text/lanes, added on first use (check: its
 * range test in checked mode, or NULL). */
static const char *intern(rtile *rt, ct_buf *text, const char *check, int lanes, char *name, size_t cap)
{
	const char *s = text->s ? text->s : "";
	int i = 0;
	int active = lanes > 1 ? rt->cur_active : lanes;
	while (i < rt->nop &&
	       !(rt->op[i].lanes == lanes && rt->op[i].active == active && strcmp(rt->op[i].text, s) == 0))
		i++;
	if (i == rt->nop) {
		char *copy = strdup(s), *ccopy = check ? strdup(check) : NULL;
		if (!copy || (check && !ccopy) ||
		    !ct_vec_grow(rt->g->k->ctx, (void **)&rt->op, &rt->cap, rt->nop + 1, sizeof *rt->op)) {
			free(copy);
			free(ccopy);
			rt->failed = true;
			return "0";
		}
		rt->op[rt->nop++] = (operand){copy, ccopy, lanes, active};
	}
	snprintf(name, cap, "ct_o%d", i);
	return name;
}

/* e in chunk c of `lanes` lanes as vector C, its operands interned. */
static void put_vexpr(rtile *rt, ct_buf *b, const ir_expr *e, int lanes)
{
	cg *g = rt->g;
	char name[32];
	const ir_expr *const *a = (const ir_expr *const *)e->args;
	if (!moves_with(rt, e, rt->v->index)) {
		/* a scalar (broadcast by the arithmetic): fetched once when it reads
		 * memory (checked: under the tests of its accesses) */
		ct_buf t, pend;
		ct_buf_init(&t);
		cg_pend_begin(g, &pend);
		cg_expr(g, &t, e, rt->type);
		const char *check = cg_pend_end(g, &pend);
		if (t.s && strchr(t.s, '['))
			ct_buf_puts(b, intern(rt, &t, check, 0, name, sizeof name));
		else
			ct_buf_printf(b, "(%s)", t.s ? t.s : "0");
		rt->failed = rt->failed || t.failed;
		ct_buf_free(&t);
		ct_buf_free(&pend);
		return;
	}
	switch (e->kind) {
	case EX_ACCESS: {
		/* checked: the access as is and a test of all its lanes */
		ct_buf t, c;
		ct_buf_init(&t);
		ct_buf_init(&c);
		bool raw = g->raw;
		g->raw = true;
		cg_access(g, &t, e->id, e->sub);
		g->raw = raw;
		cg_check_range(g, &c, e->id, e->sub, NULL, lanes > 1 ? rt->cur_active : 1);
		ct_buf_puts(b, intern(rt, &t, c.s, lanes, name, sizeof name));
		rt->failed = rt->failed || t.failed || c.failed;
		ct_buf_free(&t);
		ct_buf_free(&c);
		return;
	}
	case EX_NEG:
		ct_buf_puts(b, "(-");
		put_vexpr(rt, b, a[0], lanes);
		ct_buf_putc(b, ')');
		return;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		ct_buf_putc(b, '(');
		put_vexpr(rt, b, a[0], lanes);
		ct_buf_puts(b, cg_op(e->kind)->infix);
		put_vexpr(rt, b, a[1], lanes);
		ct_buf_putc(b, ')');
		return;
	}
	case EX_CALL: /* fma, checked by vector_expr_ok */
		ct_buf_putc(b, '(');
		put_vexpr(rt, b, a[0], lanes);
		ct_buf_puts(b, " * ");
		put_vexpr(rt, b, a[1], lanes);
		ct_buf_puts(b, " + ");
		put_vexpr(rt, b, a[2], lanes);
		ct_buf_putc(b, ')');
		return;
	default: rt->failed = true; return;
	}
}

/* The left-hand side element at (m, c) as C; in checked mode the test of
 * the chunk's lanes in chk. */
static void put_lhs(rtile *rt, ct_buf *b, ct_buf *chk, int64_t m, int c)
{
	cg *g = rt->g;
	fix_vars(rt, m, c);
	bool raw = g->raw;
	g->raw = true;
	cg_access(g, b, rt->s->lhs->id, rt->s->lhs->sub);
	g->raw = raw;
	cg_check_range(g, chk, rt->s->lhs->id, rt->s->lhs->sub, NULL, rt->ch[c].lanes > 1 ? rt->ch[c].active : 1);
	unfix_vars(rt);
}

/* ------------------------------------------------------------ emission */

/* Accumulators loaded from the left-hand side (or stored back). */
static void emit_moves(rtile *rt, int64_t nm, bool load)
{
	cg *g = rt->g;
	int acc = 0;
	for (int64_t m = 0; m < nm; m++)
		for (int c = 0; c < rt->nch; c++, acc++) {
			int lanes = rt->ch[c].lanes;
			char ty[32];
			type_name(rt, lanes, ty, sizeof ty);
			ct_buf l, chk, mv;
			ct_buf_init(&l);
			ct_buf_init(&chk);
			ct_buf_init(&mv);
			put_lhs(rt, &l, &chk, m, c);
			const char *s = l.s ? l.s : "0";
			int active = rt->ch[c].active;
			if (load && lanes > 1 && active < lanes)
				ct_buf_printf(&mv, "ct_ldm_%s(&%s, %d)", helper_suffix(ty), s, active);
			else if (!load && lanes > 1 && active < lanes)
				ct_buf_printf(&mv, "ct_stm_%s(&%s, ct_r%d, %d);", helper_suffix(ty), s, acc, active);
			else if (load && lanes > 1)
				ct_buf_printf(&mv, "ct_ld_%s(&%s)", helper_suffix(ty), s);
			else if (load)
				ct_buf_printf(&mv, "%s", s);
			else if (lanes > 1)
				ct_buf_printf(&mv, "ct_st_%s(&%s, ct_r%d);", helper_suffix(ty), s, acc);
			else
				ct_buf_printf(&mv, "%s = ct_r%d;", s, acc);
			const char *text = mv.s ? mv.s : "0";
			/* checked: elements out of range are neither loaded (zeros) nor stored */
			if (load && chk.s)
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s ct_r%d = %s ? %s : (%s){0};", ty, acc, chk.s, text, ty);
			else if (load)
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s ct_r%d = %s;", ty, acc, text);
			else if (chk.s)
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "if (%s) %s", chk.s, text);
			else
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", text);
			rt->failed = rt->failed || l.failed || chk.failed || mv.failed;
			ct_buf_free(&l);
			ct_buf_free(&chk);
			ct_buf_free(&mv);
		}
}

/* The body of R: operands, then one update per accumulator. */
static void emit_body(rtile *rt, int64_t nm)
{
	cg *g = rt->g;
	ct_buf upd;
	ct_buf_init(&upd);
	int acc = 0;
	for (int64_t m = 0; m < nm; m++)
		for (int c = 0; c < rt->nch; c++, acc++) {
			fix_vars(rt, m, c);
			ct_buf e;
			ct_buf_init(&e);
			rt->cur_active = rt->ch[c].active;
			put_vexpr(rt, &e, rt->s->rhs, rt->ch[c].lanes);
			unfix_vars(rt);
			ct_buf_printf(&upd, "%sct_r%d = ct_r%d %c %s;", acc ? "\n" : "", acc, acc,
			              rt->s->op == AS_SUB ? '-' : '+', e.s ? e.s : "0");
			rt->failed = rt->failed || e.failed;
			ct_buf_free(&e);
		}
	for (int i = 0; i < rt->nop; i++) {
		const operand *o = &rt->op[i];
		char ty[32];
		type_name(rt, o->lanes, ty, sizeof ty);
		char guard[16] = "", zero[48] = "";
		if (o->check) { /* checked: zeros instead of a vector out of range */
			snprintf(guard, sizeof guard, "%s", " ? ");
			snprintf(zero, sizeof zero, " : (%s){0}", ty);
		}
		if (o->lanes > 1 && o->active < o->lanes)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const %s ct_o%d = %s%sct_ldm_%s(&%s, %d)%s;", ty, i,
			        o->check ? o->check : "", guard, helper_suffix(ty), o->text, o->active, zero);
		else if (o->lanes > 1)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const %s ct_o%d = %s%sct_ld_%s(&%s)%s;", ty, i,
			        o->check ? o->check : "", guard, helper_suffix(ty), o->text, zero);
		else
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const %s ct_o%d = %s%s%s%s;", ty, i, o->check ? o->check : "",
			        guard, o->text, zero);
	}
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", upd.s ? upd.s : "");
	rt->failed = rt->failed || upd.failed;
	ct_buf_free(&upd);
}

/* The header of loop R, as gen_loop writes it. */
static void open_r(rtile *rt)
{
	cg *g = rt->g;
	const lt_node *x = rt->r;
	cg_range r;
	cg_range_open(g, x, &r);
	cg_unroll_hint(g, x);
	cg_for_open(g, x, &r, false);
	cg_range_close(g, &r);
}

bool cg_register_tile(cg *g, const lt_node *x)
{
	rtile rt;
	memset(&rt, 0, sizeof rt);
	rt.g = g;
	if (!match(&rt, x))
		return false;
	g->cur_stmt = rt.s;
	int64_t nm = 1;
	for (int i = 0; i < rt.nu; i++)
		nm *= rt.utrip[i];
	for (int c = 0; c < rt.nch; c++)
		need_vtype(g, rt.type, rt.ch[c].lanes);
	const char *v = g->iname[x->index];
	ct_buf shape;
	ct_buf_init(&shape);
	for (int i = 0; i < rt.nu; i++)
		ct_buf_printf(&shape, "%lld x ", (long long)rt.utrip[i]);
	ct_buf_printf(&shape, "%lld", (long long)rt.vtrip);
	if (x->tail)
		kg_comment(g->kg, "tail of %s", v);
	kg_comment(g->kg, "register tile: %s of %s (%lld accumulators, lanes %d%s) across the loop over %s",
	           shape.s ? shape.s : "?", g->arrays[rt.s->lhs->id].name, (long long)(nm * rt.nch), rt.ch[0].lanes,
	           rt.nch > 1 ? " ..." : "", v);
	ct_buf_free(&shape);
	/* the unrolled and vectorized loops are spelled by fixed values; R is open */
	const lt_node *open_u[RT_MAX_U + 1];
	for (int i = 0; i < rt.nu; i++) {
		open_u[i] = g->open[rt.u[i]->index];
		g->open[rt.u[i]->index] = rt.u[i];
	}
	open_u[rt.nu] = g->open[rt.v->index];
	g->open[rt.v->index] = rt.v;
	kg_block_bare(g->kg);
	emit_moves(&rt, nm, true);
	open_r(&rt);
	const lt_node *outer = cg_loop_enter(g, x);
	emit_body(&rt, nm);
	cg_loop_leave(g, x, outer);
	kg_block_close(g->kg);
	emit_moves(&rt, nm, false);
	kg_block_close(g->kg);
	for (int i = 0; i < rt.nu; i++)
		g->open[rt.u[i]->index] = open_u[i];
	g->open[rt.v->index] = open_u[rt.nu];
	for (int i = 0; i < rt.nop; i++) {
		free(rt.op[i].text);
		free(rt.op[i].check);
	}
	ct_free(g->k->ctx, rt.op);
	if (rt.failed)
		g->failed = true;
	return true;
}
