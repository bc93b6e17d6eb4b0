/* preduce.c: parallel reductions: a parallel loop that sums into an array gives each thread a zeroed copy, added to the array in thread order after the loop. */
#include "gen/cgen.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * parallelize(x) of a loop whose only carried dependences are `+=` / `-=`
 * sums into elements of an array S (src/plan/verbs.c, par_reduction; the
 * loop marks S in lt_node.preduce, the tree in ct_looptree.pred) becomes
 *
 *   at entry:  ct_rn_S = elements of S;  ct_rs_S = malloc(ct_rn_S * ct_nt)
 *              (out of memory: free the temps, return 1, the outputs untouched)
 *   { const int ct_rt = ct_team(...);   the team the loop's directive asks for
 *     memset(ct_rs_S, 0, ct_rt copies);
 *     #pragma omp parallel for ...  for x { T *S = ct_rs_S + ct_rn_S * thread; body }
 *     for each copy q in thread order, each element e:  S[e] += copy_q[e] }
 *   at exit:   free(ct_rs_S)
 *
 * The body is the loop's own: its accesses of S name the thread's copy,
 * which has S's layout. Each thread's copy holds the sum of its own
 * iterations' updates (a static schedule: a block of them); adding the
 * copies in thread order makes the result one re-association of the
 * sequential sum, the same for a given thread count. Integers are added as
 * uint64_t and converted back, as the statements' ct_iadd / ct_isub wrap.
 */

static const char *elem_type(const cg *g, int a)
{
	return ir_dtype_c(g->arrays[a].type);
}

void cg_preduce_slabs(cg *g, const bool *heap)
{
	const ct_looptree *t = g->t;
	ct_buf freed; /* the heap temps and slabs so far, freed when one allocation fails */
	ct_buf_init(&freed);
	for (int a = 0; a < g->narrays && heap; a++)
		if (heap[a] && t->priv && t->priv[a])
			ct_buf_printf(&freed, "%sfree(ct_priv_%d);", freed.s ? " " : "", a);
		else if (heap[a])
			ct_buf_printf(&freed, "%sfree(%s);", freed.s ? " " : "", g->aname[a]);
	for (int a = 0; t->pred && a < g->narrays && a < g->k->narrays; a++) {
		if (!t->pred[a])
			continue;
		const bx *elems = cg_layout_product(g, a, 0);
		if (!elems) {
			g->failed = true;
			break;
		}
		ct_buf n;
		ct_buf_init(&n);
		cg_bound(g, &n, elems);
		const char *ty = elem_type(g, a);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL,
			"const size_t ct_rn_%d = (size_t)(%s); /* elements of %s, summed by parallel threads */", a,
			n.s ? n.s : "1", g->arrays[a].name);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL,
			"%s *ct_rs_%d = ct_rn_%d < SIZE_MAX / sizeof(%s) / (size_t)ct_nt ? malloc((ct_rn_%d ? ct_rn_%d : 1) * sizeof(%s) * (size_t)ct_nt) : NULL; /* a copy of %s per thread */",
			ty, a, a, ty, a, a, ty, g->arrays[a].name);
		kg_block_open(g->kg, "if (!ct_rs_%d)", a);
		if (freed.s)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", freed.s);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "return 1; /* out of memory: the outputs stay untouched */");
		kg_block_close(g->kg);
		ct_buf_printf(&freed, "%sfree(ct_rs_%d);", freed.s ? " " : "", a);
		if (n.failed)
			g->failed = true;
		ct_buf_free(&n);
	}
	if (freed.failed)
		g->failed = true;
	ct_buf_free(&freed);
}

void cg_preduce_free(cg *g)
{
	for (int a = 0; g->t->pred && a < g->narrays && a < g->k->narrays; a++)
		if (g->t->pred[a])
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "free(ct_rs_%d);", a);
}

/* "x2, y" of the arrays parallel loop x sums into, for comments. */
static void summed_names(const cg *g, const lt_node *x, ct_buf *b)
{
	for (int a = 0; a < g->narrays && a < g->k->narrays; a++)
		if (x->preduce[a])
			ct_buf_printf(b, "%s%s", b->s ? ", " : "", g->arrays[a].name);
}

void cg_preduce_open(cg *g, const lt_node *x)
{
	const ct_kernel *k = g->k;
	const ir_plan_item *it = x->par_item >= 0 && x->par_item < k->nplan ? &k->plan[x->par_item] : NULL;
	ct_buf trips, names;
	ct_buf_init(&trips);
	ct_buf_init(&names);
	const lt_node *y = x;
	for (int c = 0; c < x->collapse && y && y->kind == LT_LOOP; c++) {
		int64_t known;
		if (c)
			ct_buf_puts(&trips, " * ");
		cg_loop_trips(g, &trips, y, &known);
		y = y->nkids == 1 ? y->kids[0] : NULL;
	}
	summed_names(g, x, &names);
	kg_comment(g->kg, "parallel reduction over %s into %s: each thread sums into its own zeroed copy",
		   g->iname[x->index], names.s ? names.s : "?");
	kg_block_bare(g->kg);
	/* the team of the loop's directive (gen_parallel_pragma): no thread numbers beyond it */
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int ct_rt = ct_team(ct_nt, %lld, %s);",
		(long long)(it ? it->max_threads : 0), trips.s ? trips.s : "1");
	for (int a = 0; a < g->narrays && a < g->k->narrays; a++)
		if (x->preduce[a])
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "memset(ct_rs_%d, 0, ct_rn_%d * sizeof(%s) * (size_t)ct_rt);",
				a, a, elem_type(g, a));
	if (trips.failed || names.failed)
		g->failed = true;
	ct_buf_free(&trips);
	ct_buf_free(&names);
}

void cg_preduce_close(cg *g, const lt_node *x)
{
	kg_comment(g->kg, "the threads' copies added in thread order");
	for (int a = 0; a < g->narrays && a < g->k->narrays; a++) {
		if (!x->preduce[a])
			continue;
		const char *ty = elem_type(g, a);
		bool fl = g->arrays[a].type == CT_F32 || g->arrays[a].type == CT_F64;
		kg_block_open(g->kg, "for (int ct_rq = 0; ct_rq < ct_rt; ct_rq++)");
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const %s *restrict ct_rc = ct_rs_%d + ct_rn_%d * (size_t)ct_rq;", ty, a, a);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
		kg_block_open(g->kg, "for (size_t ct_re = 0; ct_re < ct_rn_%d; ct_re++)", a);
		if (fl)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s[ct_re] += ct_rc[ct_re];", g->aname[a]);
		else
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s[ct_re] = (%s)((uint64_t)%s[ct_re] + (uint64_t)ct_rc[ct_re]);",
				g->aname[a], ty, g->aname[a]);
		kg_block_close(g->kg);
		kg_block_close(g->kg);
	}
	kg_block_close(g->kg);
}

void cg_preduce_views(cg *g, const lt_node *band)
{
	for (int a = 0; band->preduce && a < g->narrays && a < g->k->narrays; a++)
		if (band->preduce[a])
			kg_stmt(g->kg, KG_OTHER, NULL, NULL,
				"%s *restrict %s = ct_rs_%d + ct_rn_%d * (size_t)ct_thread_num(); /* this thread's copy */",
				elem_type(g, a), g->aname[a], a, a);
}
