/* isplit.c: index-set splitting: a loop whose only statement is an if on affine bounds of its index runs as up to three loops without the test. */
#include "gen/cgen.h"

#include <string.h>

/*
 * The pattern, on the planned tree:
 *
 *   for v in [LO, HI) (step 1, not unrolled, not parallel)
 *     if (c1 && c2 && ...) { THEN } else { ELSE }     the loop's only kid
 *
 * where every ci compares affine expressions (`<`, `<=`, `>`, `>=`) and
 * either does not involve v (an invariant test) or involves v's original
 * index o = v + rest with coefficient +1 or -1 (a bound: rest is the sum of
 * o's other chain loops, all of them outside v). The 5-point stencil's
 * `0 < y && y < M-1` is two bounds. It becomes
 *
 *   { lo = clamp(max of the lower bounds), hi = clamp(min of the upper bounds)
 *     if (invariant tests) { for v in [LO, lo) ELSE; for v in [lo, hi) THEN;
 *                            for v in [hi, HI) ELSE }
 *     else for v in [LO, HI) ELSE }
 *
 * (the ELSE loops are left out when there is no else). Each iteration runs
 * the same branch as before, in the same order of v, so the result is the
 * loops' exactly; the gain is a loop body without a test (a clean vector loop
 * under vectorize, where the test would otherwise be a mask per element).
 */

#define IS_MAX_TESTS 32
#define IS_MAX_TERMS 64

typedef struct is_test {
	const ir_expr *cmp; /* an EX_CMP with its affine difference */
	int coef;           /* of o in args[0] - args[1]: 0 (invariant), +1 or -1 */
} is_test;

/* Leaves of the && tree e into v[]; false when e is not a conjunction of
 * affine comparisons or has too many. */
static bool collect_tests(const ir_expr *e, is_test *v, int *n)
{
	if (e->kind == EX_AND && e->nargs == 2)
		return collect_tests(e->args[0], v, n) && collect_tests(e->args[1], v, n);
	if (e->kind != EX_CMP || !e->has_diff || *n >= IS_MAX_TESTS || e->cmp == CMP_EQ ||
	    e->cmp == CMP_NE)
		return false;
	v[(*n)++].cmp = e;
	return true;
}

/* Whether original index id is fixed while loop v runs: every loop of its
 * chain is open outside v, or a constant of a register tile. */
static bool invariant_index(const cg *g, int id, int v)
{
	const ct_looptree *t = g->t;
	if (id < 0 || id >= g->k->nindices || !t->chain_len || !t->chain)
		return false;
	for (int i = 0; i < t->chain_len[id]; i++) {
		int u = t->chain[id][i];
		if (u == v || !(g->fixed[u] || g->open[u]))
			return false;
	}
	return true;
}

/* The coefficient of o in test x (0, +1, -1), or 2 when it cannot be used:
 * another coefficient of o, or an index that moves inside the loop. */
static int test_coef(const cg *g, const ir_expr *x, int o, int v)
{
	int coef = 0;
	for (int i = 0; i < x->diff.n; i++) {
		const aff_term *tm = &x->diff.t[i];
		if (tm->kind != AFF_INDEX)
			continue;
		if (tm->id == o) {
			if (tm->coef != 1 && tm->coef != -1)
				return 2;
			coef = (int)tm->coef;
		} else if (!invariant_index(g, tm->id, v)) {
			return 2;
		}
	}
	return coef;
}

/* o's value minus v, as C: the other loops of its chain ("0" for none). */
static void put_rest(const cg *g, ct_buf *b, int o, int v)
{
	const ct_looptree *t = g->t;
	int64_t c = 0;
	bool any = false;
	for (int i = 0; i < t->chain_len[o]; i++) {
		int u = t->chain[o][i];
		if (u == v)
			continue;
		if (g->fixed[u]) {
			c += g->fixed_val[u];
			continue;
		}
		ct_buf_printf(b, "%s%s", any ? " + " : "", g->iname[u]);
		any = true;
	}
	if (!any)
		ct_buf_printf(b, "%lld", (long long)c);
	else if (c)
		ct_buf_printf(b, " + %lld", (long long)c);
}

/* The bound that test x (coefficient coef of o) puts on v, as C: a first
 * value of v (*lower) or an end. With d = coef * o + r: o > -r, o >= -r,
 * o < -r, o <= -r for coef +1 and cmp >, >=, <, <=; o < r, o <= r, o > r,
 * o >= r for coef -1. */
static void put_bound(cg *g, ct_buf *b, const ir_expr *x, int coef, int o, int v, bool *lower)
{
	aff_term terms[IS_MAX_TERMS];
	aff r = x->diff;
	int n = 0;
	for (int i = 0; i < r.n; i++)
		if (!(r.t[i].kind == AFF_INDEX && r.t[i].id == o))
			terms[n++] = r.t[i];
	r.t = terms;
	r.n = n;
	bool gt = x->cmp == CMP_GT || x->cmp == CMP_GE, strict = x->cmp == CMP_GT || x->cmp == CMP_LT;
	/* o >= first, or o < end: adjust by one for the strict / non-strict side */
	*lower = coef > 0 ? gt : !gt;
	int64_t adj = *lower ? (strict ? 1 : 0) : (strict ? 0 : 1);
	ct_buf_puts(b, "(");
	if (coef > 0)
		ct_buf_puts(b, "-(");
	else
		ct_buf_puts(b, "(");
	cg_aff(g, b, r);
	ct_buf_printf(b, ") + %lld - (", (long long)adj);
	put_rest(g, b, o, v);
	ct_buf_puts(b, "))");
}

/* One loop over v in [from, to) around nodes, with x's pragma. */
static void split_loop(cg *g, const lt_node *x, const char *from, const char *to,
                       lt_node *const *nodes, int n)
{
	if (n == 0 || cg_stream_loop(g, x, from, to, nodes, n))
		return;
	const char *v = g->iname[x->index];
	if (x->vector)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
	kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s++)", v, from, v, to, v);
	const lt_node *outer = g->open[x->index];
	g->open[x->index] = x;
	cg_nodes(g, nodes, n);
	g->open[x->index] = outer;
	kg_block_close(g->kg);
}

bool cg_index_split(cg *g, const lt_node *x)
{
	if (x->kind != LT_LOOP || x->step != 1 || x->unroll || x->parallel || x->nkids != 1 ||
	    x->index < 0 || x->index >= g->k->nindices || g->fixed[x->index])
		return false;
	const lt_node *f = x->kids[0];
	if (f->kind != LT_IF || !f->stmt || !f->stmt->cond)
		return false;
	int v = x->index, o = g->indices[v].root;
	if (o < 0 || o >= g->k->nindices || !g->t->chain_len || !g->t->chain)
		return false;
	bool in_chain = false;
	for (int i = 0; g->t->chain_len && i < g->t->chain_len[o]; i++)
		in_chain = in_chain || g->t->chain[o][i] == v;
	is_test tests[IS_MAX_TESTS];
	int n = 0, nb = 0;
	if (!in_chain || !collect_tests(f->stmt->cond, tests, &n))
		return false;
	for (int i = 0; i < n; i++) {
		if (tests[i].cmp->diff.n > IS_MAX_TERMS)
			return false;
		tests[i].coef = test_coef(g, tests[i].cmp, o, v);
		if (tests[i].coef == 2)
			return false;
		nb += tests[i].coef != 0;
	}
	if (nb == 0)
		return false;
	/* the rest of o's chain must be fixed outside v too */
	for (int i = 0; i < g->t->chain_len[o]; i++) {
		int u = g->t->chain[o][i];
		if (u != v && !g->fixed[u] && !g->open[u])
			return false;
	}
	ct_buf lo, hi, first, end, inv;
	ct_buf_init(&lo);
	ct_buf_init(&hi);
	ct_buf_init(&first);
	ct_buf_init(&end);
	ct_buf_init(&inv);
	cg_bound(g, &lo, x->lo);
	cg_bound(g, &hi, x->hi);
	/* first = min(max(LO, lower bounds...), HI); end = max(min(HI, upper bounds...), first) */
	ct_buf_puts(&first, "ct_min64(");
	ct_buf_puts(&end, "ct_max64(");
	for (int i = 0; i < n; i++)
		if (tests[i].coef) {
			ct_buf tb;
			ct_buf_init(&tb);
			bool lower;
			put_bound(g, &tb, tests[i].cmp, tests[i].coef, o, v, &lower);
			ct_buf_printf(lower ? &first : &end, "%s", lower ? "ct_max64(" : "ct_min64(");
			if (tb.failed)
				g->failed = true;
			ct_buf_free(&tb);
		}
	ct_buf_puts(&first, lo.s ? lo.s : "0");
	ct_buf_puts(&end, hi.s ? hi.s : "0");
	for (int i = 0; i < n; i++)
		if (tests[i].coef) {
			ct_buf tb;
			ct_buf_init(&tb);
			bool lower;
			put_bound(g, &tb, tests[i].cmp, tests[i].coef, o, v, &lower);
			ct_buf_printf(lower ? &first : &end, ", %s)", tb.s ? tb.s : "0");
			if (tb.failed)
				g->failed = true;
			ct_buf_free(&tb);
		}
	const char *vn = g->iname[v];
	ct_buf_printf(&first, ", %s)", hi.s ? hi.s : "0");
	ct_buf_printf(&end, ", ct_first_%s)", vn);
	for (int i = 0, k = 0; i < n; i++)
		if (!tests[i].coef) {
			ct_buf_puts(&inv, k++ ? " && " : "");
			cg_expr(g, &inv, tests[i].cmp, CT_I64);
		}
	kg_comment(g->kg, "%sindex-set split of %s: the if's bounds on %s as loop bounds", x->tail ? "tail, " : "",
		   vn, vn);
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_first_%s = %s;", vn, first.s ? first.s : "0");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_end_%s = %s;", vn, end.s ? end.s : "0");
	char fv[300], ev[300];
	snprintf(fv, sizeof fv, "ct_first_%s", vn);
	snprintf(ev, sizeof ev, "ct_end_%s", vn);
	if (inv.s && inv.s[0])
		kg_block_open(g->kg, "if (%s)", inv.s);
	split_loop(g, x, lo.s ? lo.s : "0", fv, f->els, f->nels);
	split_loop(g, x, fv, ev, f->kids, f->nkids);
	split_loop(g, x, ev, hi.s ? hi.s : "0", f->els, f->nels);
	if (inv.s && inv.s[0]) {
		kg_block_next(g->kg, "else");
		split_loop(g, x, lo.s ? lo.s : "0", hi.s ? hi.s : "0", f->els, f->nels);
		kg_block_close(g->kg);
	}
	kg_block_close(g->kg);
	if (lo.failed || hi.failed || first.failed || end.failed || inv.failed)
		g->failed = true;
	ct_buf_free(&lo);
	ct_buf_free(&hi);
	ct_buf_free(&first);
	ct_buf_free(&end);
	ct_buf_free(&inv);
	return true;
}
