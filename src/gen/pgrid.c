/* pgrid.c: a two-index parallel band whose loops have main and tail versions, run as one parallel loop over every pair of blocks. */
#include "gen/cgen.h"

#include <stdio.h>
#include <string.h>

/*
 * parallelize(i, j) collapses the two loops with OpenMP where each loop over
 * i holds just one loop over j. A non-dividing split gives a loop a main and
 * a tail version, and then the tree is
 *
 *   for i (main)  { for j (main) {A}  for j (tail) {B} }
 *   for i (tail)  { for j (main) {C}  for j (tail) {D} }
 *
 * (either level may have one version only), which OpenMP cannot collapse:
 * before this the band was parallel over i alone, so a gemm whose row
 * blocks are one main and one tail block, or one block, ran on one thread
 * however many column blocks it had. Here the pairs are numbered
 *
 *   for p in 0 .. (ni_main + ni_tail) * (nj_main + nj_tail) - 1   (parallel)
 *     a = p / nj, b = p % nj
 *     i = the a-th block of the i versions, j = the b-th of the j versions
 *     the body of that pair of versions
 *
 * Each pair runs once, as before, so the result is unchanged (the
 * iterations were proved independent for the collapsed band). The loops
 * over j must have the same trip counts under every version of i (their
 * bounds are over params and constants, so they do; compared as text).
 */

#define PG_MAX 2 /* versions of one loop: main, tail */

typedef struct pgrid {
	const lt_node *outer[PG_MAX];
	int nouter;
	const lt_node *inner[PG_MAX][PG_MAX]; /* [outer version][inner version] */
	int ninner;
	ct_buf otrips[PG_MAX], itrips[PG_MAX];
	int64_t oknown[PG_MAX], iknown[PG_MAX];
} pgrid;

static const ir_plan_item *grid_item(const cg *g, const lt_node *x)
{
	const ct_kernel *k = g->k;
	if (x->kind != LT_LOOP || !x->parallel || x->par_item < 0 || x->par_item >= k->nplan)
		return NULL;
	const ir_plan_item *it = &k->plan[x->par_item];
	if (it->kind != PL_PARALLELIZE || it->spmd || it->n != 2 || it->idx[0] != x->index)
		return NULL;
	return it;
}

/* Whether y is a plain loop over index idx (no unroll, vectorize or
 * parallel marks of its own). */
static bool plain_loop_over(const lt_node *y, int idx)
{
	return y->kind == LT_LOOP && y->index == idx && !y->unroll && !y->vector && !y->parallel;
}

/* Fill gr from the siblings v[0..n): the outer versions and, under each,
 * the inner ones. False when the shape does not match. */
static bool match_grid(cg *g, lt_node *const *v, int n, const ir_plan_item *it, pgrid *gr)
{
	const lt_node *x = v[0];
	gr->outer[0] = x;
	gr->nouter = 1;
	if (n > 1 && !x->tail && v[1]->kind == LT_LOOP && v[1]->index == x->index && v[1]->tail && v[1]->parallel &&
	    v[1]->par_item == x->par_item)
		gr->outer[gr->nouter++] = v[1];
	gr->ninner = gr->outer[0]->nkids;
	if (gr->ninner < 1 || gr->ninner > PG_MAX)
		return false;
	for (int o = 0; o < gr->nouter; o++) {
		const lt_node *ox = gr->outer[o];
		if (ox->nkids != gr->ninner || ox->unroll || ox->vector || ox->index < 0 || ox->index >= g->nindices)
			return false;
		for (int c = 0; c < gr->ninner; c++) {
			const lt_node *y = ox->kids[c];
			if (!plain_loop_over(y, it->idx[1]) || (gr->ninner == 2 && y->tail != (c == 1)))
				return false;
			gr->inner[o][c] = y;
		}
	}
	/* worth it only where OpenMP's collapse cannot do it */
	return gr->nouter > 1 || gr->ninner > 1;
}

/* Trip counts as C, and the same inner trips under every outer version. */
static bool grid_trips(cg *g, pgrid *gr)
{
	for (int o = 0; o < gr->nouter; o++)
		cg_loop_trips(g, &gr->otrips[o], gr->outer[o], &gr->oknown[o]);
	for (int c = 0; c < gr->ninner; c++) {
		cg_loop_trips(g, &gr->itrips[c], gr->inner[0][c], &gr->iknown[c]);
		for (int o = 1; o < gr->nouter; o++) {
			ct_buf t;
			ct_buf_init(&t);
			int64_t known;
			cg_loop_trips(g, &t, gr->inner[o][c], &known);
			bool same = t.s && gr->itrips[c].s && strcmp(t.s, gr->itrips[c].s) == 0;
			ct_buf_free(&t);
			if (!same)
				return false;
		}
	}
	return true;
}

/* "a + b" of the trip counts, or the number when all are known. */
static void put_sum(ct_buf *b, const ct_buf *t, const int64_t *known, int n)
{
	int64_t sum = 0;
	bool all = true;
	for (int i = 0; i < n; i++) {
		all = all && known[i] >= 0;
		sum += known[i] >= 0 ? known[i] : 0;
	}
	if (all) {
		ct_buf_printf(b, "%lld", (long long)sum);
		return;
	}
	ct_buf_putc(b, '(');
	for (int i = 0; i < n; i++)
		ct_buf_printf(b, "%s%s", i ? " + " : "", t[i].s ? t[i].s : "0");
	ct_buf_putc(b, ')');
}

/* `if (num < first + trips) {...} else {...}` over the versions of one
 * level, each setting its loop variable from num, then calling body. */
static void gen_level(cg *g, pgrid *gr, bool outer, int o, const char *num)
{
	int nv = outer ? gr->nouter : gr->ninner;
	ct_buf first;
	ct_buf_init(&first);
	ct_buf_puts(&first, "0");
	for (int c = 0; c < nv; c++) {
		const lt_node *x = outer ? gr->outer[c] : gr->inner[o][c];
		const ct_buf *trips = outer ? &gr->otrips[c] : &gr->itrips[c];
		if (nv > 1 && c == 0)
			kg_block_open(g->kg, "if (%s < %s)", num, trips->s ? trips->s : "0");
		else if (nv > 1)
			kg_block_next(g->kg, "else");
		cg_version_var(g, x, num, first.s ? first.s : "0");
		const lt_node *saved = g->open[x->index];
		g->open[x->index] = x;
		if (outer) {
			gen_level(g, gr, false, c, "ct_pg_b");
		} else {
			cg_private_views(g, gr->outer[o]);
			cg_nodes(g, x->kids, x->nkids);
		}
		g->open[x->index] = saved;
		ct_buf_printf(&first, " + %s", trips->s ? trips->s : "0");
	}
	if (nv > 1)
		kg_block_close(g->kg);
	if (first.failed)
		g->failed = true;
	ct_buf_free(&first);
}

int cg_parallel_grid(cg *g, lt_node *const *v, int n)
{
	const ir_plan_item *it = n > 0 && g->band_left == 0 ? grid_item(g, v[0]) : NULL;
	pgrid gr;
	memset(&gr, 0, sizeof gr);
	if (!it || !match_grid(g, v, n, it, &gr))
		return 0;
	for (int i = 0; i < PG_MAX; i++) {
		ct_buf_init(&gr.otrips[i]);
		ct_buf_init(&gr.itrips[i]);
	}
	int used = 0;
	if (grid_trips(g, &gr)) {
		ct_buf ni, nj;
		ct_buf_init(&ni);
		ct_buf_init(&nj);
		put_sum(&ni, gr.otrips, gr.oknown, gr.nouter);
		put_sum(&nj, gr.itrips, gr.iknown, gr.ninner);
		const char *a = g->iname[gr.outer[0]->index], *b = g->iname[gr.inner[0][0]->index];
		kg_comment(g->kg, "parallel over the blocks of %s and %s, main and tail versions together", a, b);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL,
			"#pragma omp parallel for schedule(%s) num_threads(ct_team(ct_nt, %lld, %s * %s))",
			it->policy == POLICY_DYNAMIC ? "dynamic" : "static", (long long)it->max_threads, ni.s, nj.s);
		kg_block_open(g->kg, "for (int64_t ct_pg = 0; ct_pg < %s * %s; ct_pg++)", ni.s, nj.s);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_pg_a = ct_pg / %s, ct_pg_b = ct_pg %% %s;", nj.s,
			nj.s);
		gen_level(g, &gr, true, 0, "ct_pg_a");
		kg_block_close(g->kg);
		if (ni.failed || nj.failed)
			g->failed = true;
		ct_buf_free(&ni);
		ct_buf_free(&nj);
		used = gr.nouter;
	}
	for (int i = 0; i < PG_MAX; i++) {
		ct_buf_free(&gr.otrips[i]);
		ct_buf_free(&gr.itrips[i]);
	}
	return used;
}
