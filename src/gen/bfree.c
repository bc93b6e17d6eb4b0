/* bfree.c: branch-free loops for the C backend: guarded copy nests get tightened bounds, loops around boundary ifs are split into boundary and interior pieces. */
#include "gen/cgen.h"

#include <string.h>

/*
 * Both transformations are index-set splitting done when the code is
 * generated. A test `c*v + rest >= 0` on loop variable v with c = +-1 is a
 * bound on v, so
 *
 *   for v in [lo, hi): if (test) S        becomes
 *   for v in [max(lo, ..), min(hi, ..)): S          (copy nests: no else)
 *
 * and for a boundary `if (interior) T else E` in the body of the loop over
 * v, the range is cut into [lo, a) [a, b) [b, hi) where [a, b) is where
 * the tests on v hold: E, T without any test, E. Tests that do not involve
 * v stay as one test around the pieces. Atoms whose coefficient on v is not
 * +-1, `!=`, `||` and `!` keep the branching form.
 */

/* The coefficient *c of loop-tree variable v in x (through its own
 * AFF_LOOP term, or an original index whose chain holds v) and in *rest
 * the remainder, with the other chain members as AFF_LOOP terms. False
 * when x uses v in a way this cannot express (a trip counter). */
static bool var_split(cg *g, aff x, int v, int64_t *c, aff *rest)
{
	const ct_looptree *t = g->t;
	bool ok = true;
	aff r = aff_const(x.c);
	*c = 0;
	for (int i = 0; i < x.n && ok; i++) {
		const aff_term *tm = &x.t[i];
		bool in_chain = false;
		if (tm->kind == AFF_INDEX && tm->id >= 0 && tm->id < g->k->nindices && t->chain && t->chain_len)
			for (int j = 0; j < t->chain_len[tm->id]; j++)
				in_chain = in_chain || t->chain[tm->id][j] == v;
		if ((tm->kind == AFF_TRIP || tm->kind == AFF_TRI) && tm->id == v)
			return false;
		if (tm->kind == AFF_LOOP && tm->id == v) {
			*c += tm->coef;
		} else if (in_chain) {
			*c += tm->coef;
			for (int j = 0; j < t->chain_len[tm->id]; j++) {
				int w = t->chain[tm->id][j];
				if (w != v)
					r = aff_add(&g->arena, r, aff_sym1(&g->arena, AFF_LOOP, w, tm->coef, &ok), &ok);
			}
		} else {
			r = aff_add(&g->arena, r, aff_sym1(&g->arena, tm->kind, tm->id, tm->coef, &ok), &ok);
		}
	}
	*rest = r;
	return ok;
}

/* Whether aff x involves loop-tree variable v. */
static bool uses_var(cg *g, aff x, int v)
{
	int64_t c = 0;
	aff r;
	return !var_split(g, x, v, &c, &r) || c != 0;
}

/* A loop that the splits may rewrite: a plain counted loop (vectorized too when the pieces
 * keep its simd pragma: the interior piece is then a vector loop without masks). */
static bool plain_loop(const cg *g, const lt_node *x, bool vector_ok)
{
	return x->kind == LT_LOOP && x->step == 1 && !x->parallel && !x->unroll && (vector_ok || !x->vector) &&
	       x->index >= 0 && x->index < g->nindices && !g->fixed[x->index];
}

/* Append to bound text b: "ct_max64(b, e)" (or min) with e = sign*rest + add. */
static void wrap_bound(cg *g, ct_buf *b, bool upper, aff rest, int64_t sign, int64_t add)
{
	bool ok = true;
	aff e = aff_scale(&g->arena, rest, sign, &ok);
	e = aff_add(&g->arena, e, aff_const(add), &ok);
	if (!ok) {
		g->failed = true;
		return;
	}
	ct_buf t;
	ct_buf_init(&t);
	ct_buf_printf(&t, "%s(%s, ", upper ? "ct_min64" : "ct_max64", b->s ? b->s : "0");
	cg_aff(g, &t, e);
	ct_buf_putc(&t, ')');
	if (t.failed)
		g->failed = true;
	ct_buf_free(b);
	*b = t;
}

/* ------------------------------------------------------------ guarded copy nests */

#define BF_MAX_NEST 16

/* A nest of single loops ending in a guard if (the copies of a halo
 * cache): its loops in loop[0..*n) and the if in *guard. */
static bool guarded_nest(const cg *g, const lt_node *x, const lt_node **loop, int *n, const lt_node **guard)
{
	*n = 0;
	while (x && plain_loop(g, x, false) && *n < BF_MAX_NEST) {
		loop[(*n)++] = x;
		x = x->nkids == 1 ? x->kids[0] : NULL;
	}
	if (!x || *n == 0 || x->kind != LT_IF || x->stmt || x->nguard <= 0 || !x->guard || x->nels)
		return false;
	*guard = x;
	return true;
}

/* The loop of the nest that guard i bounds, or -1 when it is not a bound
 * (several or none of the nest's variables, or a coefficient not +-1). */
static int bound_of(cg *g, const lt_node *const *loop, int n, aff gd, int64_t *c, aff *rest)
{
	int which = -1;
	for (int l = 0; l < n; l++) {
		if (!uses_var(g, gd, loop[l]->index))
			continue;
		if (which >= 0)
			return -1;
		which = l;
	}
	if (which < 0 || !var_split(g, gd, loop[which]->index, c, rest) || (*c != 1 && *c != -1))
		return -1;
	return which;
}

bool cg_guarded_nest(cg *g, const lt_node *x)
{
	const lt_node *loop[BF_MAX_NEST], *gif = NULL;
	int n = 0;
	if (ct_ctx_get_option(g->k->ctx, CT_OPT_BRANCHING) || g->band_left > 0 || !guarded_nest(g, x, loop, &n, &gif))
		return false;
	int moved = 0;
	ct_buf lo[BF_MAX_NEST], hi[BF_MAX_NEST], resid;
	ct_buf_init(&resid);
	for (int l = 0; l < n; l++) {
		ct_buf_init(&lo[l]);
		ct_buf_init(&hi[l]);
		cg_bound(g, &lo[l], loop[l]->lo);
		cg_bound(g, &hi[l], loop[l]->hi);
	}
	for (int i = 0; i < gif->nguard; i++) {
		int64_t c = 0;
		aff rest;
		int l = bound_of(g, loop, n, gif->guard[i], &c, &rest);
		if (l >= 0 && c == 1) { /* v + rest >= 0: v >= -rest */
			wrap_bound(g, &lo[l], false, rest, -1, 0);
			moved++;
		} else if (l >= 0) { /* -v + rest >= 0: v < rest + 1 */
			wrap_bound(g, &hi[l], true, rest, 1, 1);
			moved++;
		} else {
			ct_buf_puts(&resid, resid.s ? " && " : "(");
			cg_aff(g, &resid, gif->guard[i]);
			ct_buf_puts(&resid, " >= 0");
		}
	}
	if (moved > 0) {
		const lt_node *outer[BF_MAX_NEST];
		kg_comment(g->kg, "branch-free: the bounds tests are in the loop bounds");
		for (int l = 0; l < n; l++) {
			const char *v = g->iname[loop[l]->index];
			kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s++)", v, lo[l].s ? lo[l].s : "0", v,
			              hi[l].s ? hi[l].s : "0", v);
			outer[l] = g->open[loop[l]->index];
			g->open[loop[l]->index] = loop[l];
		}
		if (resid.s) {
			ct_buf_putc(&resid, ')');
			kg_block_open(g->kg, "if %s", resid.s);
		}
		cg_nodes(g, gif->kids, gif->nkids);
		if (resid.s)
			kg_block_close(g->kg);
		for (int l = n - 1; l >= 0; l--) {
			g->open[loop[l]->index] = outer[l];
			kg_block_close(g->kg);
		}
	}
	for (int l = 0; l < n; l++) {
		g->failed = g->failed || lo[l].failed || hi[l].failed;
		ct_buf_free(&lo[l]);
		ct_buf_free(&hi[l]);
	}
	g->failed = g->failed || resid.failed;
	ct_buf_free(&resid);
	return moved > 0;
}

/* ------------------------------------------------------------ boundary ifs */

#define BF_MAX_ATOMS 64

/* The atoms of a conjunction of affine comparisons; false for anything
 * else (||, !, a comparison of values) or too many atoms. */
static bool conj_atoms(const ir_expr *e, const ir_expr **atom, int *n)
{
	if (e->kind == EX_AND) {
		for (int i = 0; i < e->nargs; i++)
			if (!conj_atoms(e->args[i], atom, n))
				return false;
		return true;
	}
	if (e->kind != EX_CMP || !e->has_diff || *n >= BF_MAX_ATOMS)
		return false;
	atom[(*n)++] = e;
	return true;
}

/* Narrow the interior [a, b) of text by atom `c*v + rest cmp 0`. */
static bool narrow_interior(cg *g, ct_buf *a, ct_buf *b, ir_cmp cmp, int64_t c, aff rest)
{
	/* c*v + rest <= up (LT: up = -1) and/or >= down (GT: down = 1) */
	bool up = cmp == CMP_LT || cmp == CMP_LE || cmp == CMP_EQ;
	bool down = cmp == CMP_GT || cmp == CMP_GE || cmp == CMP_EQ;
	int64_t u = cmp == CMP_LT ? -1 : 0, d = cmp == CMP_GT ? 1 : 0;
	if (cmp == CMP_NE)
		return false;
	/* c = 1:  v <= u - rest (b: u - rest + 1), v >= d - rest (a)
	 * c = -1: v >= rest - u (a), v <= rest - d (b: rest - d + 1) */
	if (up && c == 1)
		wrap_bound(g, b, true, rest, -1, u + 1);
	if (up && c == -1)
		wrap_bound(g, a, false, rest, 1, -u);
	if (down && c == 1)
		wrap_bound(g, a, false, rest, -1, d);
	if (down && c == -1)
		wrap_bound(g, b, true, rest, 1, 1 - d);
	return true;
}

/* One piece of the split loop: for (v = from; v < to; v++) nodes. */
static void split_piece(cg *g, const lt_node *x, const char *from, const char *to, lt_node *const *nodes, int n,
                        const char *what)
{
	const char *v = g->iname[x->index];
	kg_comment(g->kg, "%s", what);
	if (cg_stream_loop(g, x, from, to, nodes, n) || cg_shift_loop(g, x, from, to, nodes, n))
		return;
	if (x->vector)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
	kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s++)", v, from, v, to, v);
	const lt_node *outer = g->open[x->index];
	g->open[x->index] = x;
	cg_nodes(g, nodes, n);
	g->open[x->index] = outer;
	kg_block_close(g->kg);
}

bool cg_split_boundary(cg *g, const lt_node *x)
{
	if (ct_ctx_get_option(g->k->ctx, CT_OPT_BRANCHING) || g->band_left > 0 || !plain_loop(g, x, true) || x->nkids != 1 ||
	    x->kids[0]->kind != LT_IF || !x->kids[0]->stmt || !x->kids[0]->stmt->cond)
		return false;
	const lt_node *f = x->kids[0];
	const ir_expr *atom[BF_MAX_ATOMS];
	int n = 0, on_v = 0;
	if (!conj_atoms(f->stmt->cond, atom, &n))
		return false;
	int v = x->index;
	ct_buf a, b, resid;
	ct_buf_init(&a);
	ct_buf_init(&b);
	ct_buf_init(&resid);
	ct_buf_printf(&a, "ct_lo_%s", g->iname[v]);
	ct_buf_printf(&b, "ct_hi_%s", g->iname[v]);
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		int64_t c = 0;
		aff rest;
		ok = var_split(g, atom[i]->diff, v, &c, &rest);
		if (ok && c == 0) {
			ct_buf_puts(&resid, resid.s ? " && " : "(");
			cg_expr(g, &resid, atom[i], CT_I64);
		} else if (ok) {
			ok = (c == 1 || c == -1) && narrow_interior(g, &a, &b, atom[i]->cmp, c, rest);
			on_v++;
		}
	}
	if (ok && on_v > 0) {
		const char *iv = g->iname[v];
		ct_buf lo, hi;
		ct_buf_init(&lo);
		ct_buf_init(&hi);
		cg_bound(g, &lo, x->lo);
		cg_bound(g, &hi, x->hi);
		kg_comment(g->kg, "branch-free: the loop over %s split into boundary and interior pieces", iv);
		kg_block_bare(g->kg);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_lo_%s = %s, ct_hi_%s = %s;", iv,
		        lo.s ? lo.s : "0", iv, hi.s ? hi.s : "0");
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_a_%s = ct_min64(%s, ct_hi_%s);", iv,
		        a.s ? a.s : "0", iv);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_b_%s = ct_max64(%s, ct_a_%s);", iv,
		        b.s ? b.s : "0", iv);
		char ca[300], cb[300], clo[300], chi[300];
		snprintf(ca, sizeof ca, "ct_a_%s", iv);
		snprintf(cb, sizeof cb, "ct_b_%s", iv);
		snprintf(clo, sizeof clo, "ct_lo_%s", iv);
		snprintf(chi, sizeof chi, "ct_hi_%s", iv);
		if (resid.s) {
			ct_buf_putc(&resid, ')');
			kg_block_open(g->kg, "if %s", resid.s);
		}
		if (f->nels)
			split_piece(g, x, clo, ca, f->els, f->nels, "boundary (else branch)");
		split_piece(g, x, ca, cb, f->kids, f->nkids, "interior: no tests");
		if (f->nels)
			split_piece(g, x, cb, chi, f->els, f->nels, "boundary (else branch)");
		if (resid.s && f->nels) {
			kg_block_next(g->kg, "else");
			split_piece(g, x, clo, chi, f->els, f->nels, "boundary (else branch)");
		}
		if (resid.s)
			kg_block_close(g->kg);
		kg_block_close(g->kg);
		g->failed = g->failed || lo.failed || hi.failed;
		ct_buf_free(&lo);
		ct_buf_free(&hi);
	}
	g->failed = g->failed || a.failed || b.failed || resid.failed;
	ct_buf_free(&a);
	ct_buf_free(&b);
	ct_buf_free(&resid);
	return ok && on_v > 0;
}
