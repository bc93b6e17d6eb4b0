/* vreduce.c: vectorize(x) of a loop that carries a reduction: each reduced element summed in private vector accumulators, added to it after the loop. */
#include "gen/cgen.h"
#include "target/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The verb (src/plan/verbs.c) marks the statements under a vector loop x
 * that update, with `+=` or `-=`, an element that does not move with x
 * (lt_node.reduce); nothing else under x accesses that storage. Such a loop
 *
 *   for j in [LO, HI)  t[i] += e(j)
 *
 * becomes, with NA = K x the lanes of the target's widest vector (of the
 * narrowest summed type: the loop's lanes):
 *
 *   { T ct_vr0[NA] = {0};  int64_t ct_vb = LO;  const int64_t ct_ve = HI;
 *     for (; ct_ve - ct_vb >= NA; ct_vb += NA)
 *       simd for j in [ct_vb, ct_vb + NA)  ct_vr0[j - ct_vb] += e(j);
 *     simd for j in [ct_vb, ct_ve)        ct_vr0[j - ct_vb] += e(j);   (the tail)
 *     pairwise sum of ct_vr0 into ct_vr0[0];  t[i] += ct_vr0[0]; }
 *
 * The array is K independent vector accumulators the compiler keeps in
 * registers: one accumulator gives one vector add per add latency, a chain
 * the loop waits on (measured on Zen 4, f64 dot product of 1000 elements
 * hot in L1, gcc 12 -O3 -march=native: 2 accumulators 85 ns, 1 accumulator
 * 107-113 ns, the scalar loop 870 ns). K comes from the target: enough
 * chains to keep the FMA units busy over their latency, at the rate the
 * loads allow (the probe's fma_latency x min(fma_units, fma_units x
 * reductions / vector loads); a core issues as many vector loads as FMAs
 * per cycle, as src/tune/corecost.c assumes), spread over the reductions,
 * a power of two, at most half the vector registers in all, and no more
 * lanes in all than the loop's longest trip count rounded up to a power of
 * two where it is known (a split's 8-iteration block sums in one vector
 * of 8 lanes, not in 8 vectors that it would never fill). A loop with a
 * step other than 1 sums into one scalar accumulator per reduction under
 * `#pragma omp simd reduction(+:...)`. `-=` sums the same way and
 * subtracts the sum. Integers sum in uint64_t (wrapping, as the statements'
 * own ct_iadd / ct_isub) and are converted once at the end. The statements
 * that are not reductions run as in any vector loop; the element takes its
 * sum right after the loop, before anything after the loop reads it.
 *
 * Unroll and jam: the loop's body may hold loops that unroll(y) unrolls
 * completely (gesummv's `for j { for iu { y[i+iu] += ... } }`). Their
 * copies are emitted one after the other in each step of the vector loop,
 * and each copy of each reduction statement is a reduction of its own (its
 * accumulator array; cg_reduce_slot gives the k-th copy of a statement
 * emitted in one body the k-th entry find_reductions walked), so what the
 * copies share (x[j]) is loaded once for all. K counts each load once per
 * copy that uses the copy's index. After the loop each copy's element
 * takes its sum with the unrolled indices bound to that copy's values. A
 * loop inside that is not unrolled (the tail of a runtime-sized split,
 * which unroll leaves a loop) makes the whole loop the scalar loops.
 */

#define VR_MAX_K 16    /* accumulators per reduction */
#define VR_MAX_DEPTH 8 /* unrolled loops nested under the vector loop */
#define VR_MAX_RED 64  /* reductions (copies counted) in one vector loop */

/* The reductions under a vector loop: one per statement and copy of the
 * unrolled loops around it under the loop (bind: those loops and their
 * values in that copy). plain: a loop under it is not unrolled (the tail
 * of a runtime-sized split), so it runs as the scalar loops it is. */
typedef struct vred_one {
	int nb;
	const lt_node *loop[VR_MAX_DEPTH];
	int64_t val[VR_MAX_DEPTH];
} vred_one;

typedef struct vred_list {
	lt_node **v;
	vred_one *b;
	int n, cap;
	bool failed, plain;
	vred_one cur; /* the copy being walked */
} vred_list;

static void find_reductions(vred_list *l, lt_node *x)
{
	if (l->failed || l->plain)
		return;
	if (x->kind == LT_LOOP) {
		int64_t lo, hi;
		if (!x->unroll || x->step < 1 || !lt_const_range(x, &lo, &hi) || l->cur.nb == VR_MAX_DEPTH) {
			l->plain = true;
			return;
		}
		int d = l->cur.nb++;
		l->cur.loop[d] = x;
		for (int64_t c = lo; c < hi && !l->plain && !l->failed; c += x->step) {
			l->cur.val[d] = c;
			for (int i = 0; i < x->nkids; i++)
				find_reductions(l, x->kids[i]);
		}
		l->cur.nb--;
		return;
	}
	if (x->kind == LT_STMT && x->reduce && x->stmt) {
		if (l->n == VR_MAX_RED) {
			l->plain = true;
			return;
		}
		if (l->n == l->cap) {
			int cap = l->cap ? 2 * l->cap : 4;
			lt_node **v = realloc(l->v, sizeof *v * (size_t)cap);
			if (v)
				l->v = v;
			vred_one *b = v ? realloc(l->b, sizeof *b * (size_t)cap) : NULL;
			if (!v || !b) {
				l->failed = true;
				return;
			}
			l->b = b;
			l->cap = cap;
		}
		l->b[l->n] = l->cur;
		l->v[l->n++] = x;
	}
	for (int i = 0; i < x->nkids; i++)
		find_reductions(l, x->kids[i]);
	for (int i = 0; i < x->nels; i++)
		find_reductions(l, x->els[i]);
}

/* Accesses under x that move with index (the vector loads and stores of
 * one step), each counted once per copy of the unrolled loops around it
 * (under the vector loop: loops[0 .. nl)) whose index it uses: A[i+iu, j]
 * under unroll(iu) of 4 trips is 4 loads, x[j] one (the copies share it). */
static int64_t moving_accesses(const cg *g, const ir_expr *e, int index, const lt_node *const *loops, int nl)
{
	if (!e)
		return 0;
	int64_t n = 0;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < g->narrays && e->sub) {
		bool moves = false;
		for (int d = 0; d < g->arrays[e->id].rank && !moves; d++) {
			bool bad = false;
			moves = lt_var_coef(g->t, e->sub[d], index, &bad) != 0 || bad;
		}
		if (moves) {
			n = 1;
			for (int u = 0; u < nl; u++) {
				bool uses = false;
				for (int d = 0; d < g->arrays[e->id].rank && !uses; d++) {
					bool bad = false;
					uses = lt_var_coef(g->t, e->sub[d], loops[u]->index, &bad) != 0 || bad;
				}
				int64_t lo, hi;
				if (uses && lt_const_range(loops[u], &lo, &hi) && hi > lo && loops[u]->step > 0)
					n *= (hi - lo + loops[u]->step - 1) / loops[u]->step;
			}
		}
	}
	for (int i = 0; i < e->nargs; i++)
		n += moving_accesses(g, e->args[i], index, loops, nl);
	return n;
}

static int64_t moving_under(const cg *g, const lt_node *x, int index, const lt_node **loops, int nl)
{
	int64_t n = 0;
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET)) {
		n += moving_accesses(g, x->stmt->rhs, index, loops, nl);
		if (x->kind == LT_STMT)
			n += moving_accesses(g, x->stmt->lhs, index, loops, nl);
	}
	bool in = x->kind == LT_LOOP && x->index != index && nl < VR_MAX_DEPTH;
	if (in)
		loops[nl++] = x;
	for (int i = 0; i < x->nkids; i++)
		n += moving_under(g, x->kids[i], index, loops, nl);
	for (int i = 0; i < x->nels; i++)
		n += moving_under(g, x->els[i], index, loops, nl);
	return n;
}

/* Accumulators per reduction (the header comment): a power of two >= 1. */
static int accumulators(cg *g, const lt_node *x, int nred)
{
	const ct_probe_info *pi = target_get(g->k->ctx);
	int64_t units = pi && pi->fma_units > 0 ? pi->fma_units : 1;
	int64_t lat = pi && pi->fma_latency > 0 ? pi->fma_latency : 1;
	int64_t regs = pi && pi->vector_registers > 0 ? pi->vector_registers : 16;
	const lt_node *loops[VR_MAX_DEPTH];
	int64_t loads = moving_under(g, x, x->index, loops, 0);
	if (loads < nred)
		loads = nred;
	int64_t chains = (lat * units * nred + loads - 1) / loads; /* lat x min(units, units x nred / loads) */
	int64_t k = (chains + nred - 1) / nred, cap = regs / 2 / nred;
	if (k > cap)
		k = cap;
	if (k > VR_MAX_K)
		k = VR_MAX_K;
	int p = 1;
	while (2 * p <= k)
		p *= 2;
	return p;
}

/* The longest trip count of step-1 loop x where its bounds (or, with
 * affine bounds, its bounds over params) are constants; else -1. */
static int64_t max_trips(const lt_node *x)
{
	int64_t lo, hi;
	if (x->step != 1)
		return -1;
	if (!lt_const_range(x, &lo, &hi)) {
		if (!lt_affine_loop(x) || !bx_is_const(x->lo, &lo) || !bx_is_const(x->hi, &hi) || lo == LT_NO_LO ||
		    hi == LT_NO_HI)
			return -1;
	}
	int64_t n;
	return hi <= lo ? 0 : ct_sub_ok(hi, lo, &n) ? n : -1;
}

/* The accumulator's C type for a reduction into storage of type t. */
static const char *acc_type(ct_dtype t)
{
	return cg_is_int(t) ? "uint64_t" : ir_dtype_c(t);
}

void cg_reduce_stmt(cg *g, const ir_node *s, int i)
{
	ct_dtype t = g->arrays[s->lhs->id].type;
	ct_buf r, pend;
	ct_buf_init(&r);
	g->cur_stmt = s;
	cg_pend_begin(g, &pend);
	cg_expr(g, &r, s->rhs, cg_is_int(t) ? CT_I64 : t);
	const char *cond = cg_pend_end(g, &pend);
	if (cond)
		kg_block_open(g->kg, "if (%s)", cond);
	if (cg_is_int(t))
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_vr%d%s += (uint64_t)(%s);", i, g->vred_at, r.s ? r.s : "0");
	else
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_vr%d%s += %s;", i, g->vred_at, r.s ? r.s : "0");
	if (cond)
		kg_block_close(g->kg);
	if (r.failed)
		g->failed = true;
	ct_buf_free(&r);
	ct_buf_free(&pend);
}

/* The element of reduction i takes its sum, held in sum (C text). */
static void add_sum(cg *g, const ir_node *s, const char *sum)
{
	ct_dtype t = g->arrays[s->lhs->id].type;
	ct_buf l, pend;
	ct_buf_init(&l);
	g->cur_stmt = s;
	cg_pend_begin(g, &pend);
	cg_access(g, &l, s->lhs->id, s->lhs->sub);
	const char *cond = cg_pend_end(g, &pend);
	if (cond)
		kg_block_open(g->kg, "if (%s)", cond);
	const char *arr = g->aname[s->lhs->id];
	const char *lv = l.s ? l.s : "0";
	if (cg_is_int(t))
		kg_stmt(g->kg, KG_OTHER, arr, arr, "%s = (%s)%s(%s, (int64_t)%s);", lv, ir_dtype_c(t),
		        cg_assign_op(s->op)->int_fn, lv, sum);
	else
		kg_stmt(g->kg, KG_OTHER, arr, arr, "%s %s= %s;", lv, cg_assign_op(s->op)->bare, sum);
	if (cond)
		kg_block_close(g->kg);
	if (l.failed)
		g->failed = true;
	ct_buf_free(&l);
	ct_buf_free(&pend);
}

/* Loop x's body, x open: each reduction copy's statement takes its own
 * accumulators (cg_reduce_slot), so none is used yet. */
static void body(cg *g, const lt_node *x)
{
	for (int i = 0; g->vred_used && i < g->nvred; i++)
		g->vred_used[i] = false;
	const lt_node *outer = cg_loop_enter(g, x);
	cg_nodes(g, x->kids, x->nkids);
	cg_loop_leave(g, x, outer);
}

int cg_reduce_slot(cg *g, const lt_node *x)
{
	for (int i = 0; x->reduce && i < g->nvred; i++)
		if (g->vred[i] == x && !(g->vred_used && g->vred_used[i])) {
			/* the copies of an unrolled loop come in the order find_reductions walked them */
			if (g->vred_used)
				g->vred_used[i] = true;
			return i;
		}
	return -1;
}

/* A loop under vector loop x is not unrolled (the tail of a runtime-sized
 * split): x runs as the scalar loops it is, its sums in order. */
static void plain_loop(cg *g, const lt_node *x)
{
	cg_range r;
	cg_range_open(g, x, &r);
	kg_comment(g->kg, "vectorize(%s): a loop inside is not unrolled: the scalar loops", g->iname[x->index]);
	cg_for_open(g, x, &r, false);
	const lt_node *outer = cg_loop_enter(g, x);
	cg_nodes(g, x->kids, x->nkids);
	cg_loop_leave(g, x, outer);
	kg_block_close(g->kg);
	cg_range_close(g, &r);
}

/* Reduction i (its copy's unrolled loops bound to their values) takes its sum. */
static void add_sum_copy(cg *g, const lt_node *s, const vred_one *b, const char *sum)
{
	const lt_node *outer[VR_MAX_DEPTH];
	if (b->nb > 0)
		kg_block_bare(g->kg);
	for (int d = 0; d < b->nb; d++) {
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %lld;", g->iname[b->loop[d]->index],
		        (long long)b->val[d]);
		outer[d] = cg_loop_enter(g, b->loop[d]);
	}
	add_sum(g, s->stmt, sum);
	for (int d = b->nb - 1; d >= 0; d--)
		cg_loop_leave(g, b->loop[d], outer[d]);
	if (b->nb > 0)
		kg_block_close(g->kg);
}

bool cg_reduce_loop(cg *g, const lt_node *x)
{
	if (x->kind != LT_LOOP || !x->vector || x->index < 0 || x->index >= g->nindices || g->nvred > 0)
		return false;
	vred_list l;
	memset(&l, 0, sizeof l);
	for (int i = 0; i < x->nkids; i++)
		find_reductions(&l, x->kids[i]);
	if (l.failed || l.n == 0 || l.plain) {
		g->failed = g->failed || l.failed;
		if (!l.failed && l.plain)
			plain_loop(g, x);
		free(l.v);
		free(l.b);
		return l.failed || l.plain;
	}
	bool used[VR_MAX_RED];
	const char *v = g->iname[x->index];
	int lanes = 1;
	for (int i = 0; i < l.n; i++) {
		ct_dtype t = g->arrays[l.v[i]->stmt->lhs->id].type;
		int es = cg_is_int(t) ? 8 : (int)ct_dtype_size(t);
		int w = target_vector_bytes(g->k->ctx) / es;
		if (w > lanes)
			lanes = w;
	}
	while (lanes & (lanes - 1)) /* a power of two: the pairwise sum halves it */
		lanes &= lanes - 1;
	int k = accumulators(g, x, l.n), na = k * lanes;
	/* no wider than the loop's longest trip count, where it is known */
	int64_t tmax = max_trips(x);
	while (tmax >= 0 && na > 1 && na / 2 >= tmax)
		na /= 2;
	if (na < lanes)
		lanes = na;
	k = na / lanes;
	bool arrays = x->step == 1;
	cg_range r;
	cg_range_open(g, x, &r);
	const char *lo = r.lo.s ? r.lo.s : "0", *hi = r.hi.s ? r.hi.s : "0";
	if (x->tail)
		kg_comment(g->kg, "tail of %s", v);
	bool jam = false;
	for (int i = 0; i < l.n; i++)
		jam = jam || l.b[i].nb > 0;
	const char *jt = jam ? " (the copies of unrolled loops jammed)" : "";
	if (arrays)
		kg_comment(g->kg, "vectorize(%s): %d reduction%s%s, each summed in %d partial sums (%d x %d lanes)", v,
		           l.n, l.n == 1 ? "" : "s", jt, na, k, lanes);
	else
		kg_comment(g->kg, "vectorize(%s): %d reduction%s%s, each summed in one accumulator", v, l.n,
		           l.n == 1 ? "" : "s", jt);
	kg_block_bare(g->kg);
	ct_buf clause;
	ct_buf_init(&clause);
	for (int i = 0; i < l.n; i++) {
		const char *ty = acc_type(g->arrays[l.v[i]->stmt->lhs->id].type);
		if (arrays)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s ct_vr%d[%d] = {0};", ty, i, na);
		else
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s ct_vr%d = 0;", ty, i);
		ct_buf_printf(&clause, "%sct_vr%d", i ? ", " : "", i);
	}
	g->vred = l.v;
	g->nvred = l.n;
	g->vred_used = used;
	if (arrays) {
		char at[300];
		snprintf(at, sizeof at, "[%s - ct_vb]", v);
		g->vred_at = at;
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t ct_vb = %s;", lo);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_ve = %s;", hi);
		kg_block_open(g->kg, "for (; ct_ve - ct_vb >= %d; ct_vb += %d)", na, na);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
		kg_block_open(g->kg, "for (int64_t %s = ct_vb; %s < ct_vb + %d; %s++)", v, v, na, v);
		body(g, x);
		kg_block_close(g->kg);
		kg_block_close(g->kg);
		kg_comment(g->kg, "the last %s < %d iterations", v, na);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
		kg_block_open(g->kg, "for (int64_t %s = ct_vb; %s < ct_ve; %s++)", v, v, v);
		body(g, x);
		kg_block_close(g->kg);
		g->vred_at = "";
		/* pairwise: log2(na) vector steps, not na dependent adds */
		for (int i = 0; i < l.n; i++) {
			kg_block_open(g->kg, "for (int ct_w = %d; ct_w > 0; ct_w /= 2)", na / 2);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
			kg_block_open(g->kg, "for (int ct_q = 0; ct_q < ct_w; ct_q++)");
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_vr%d[ct_q] += ct_vr%d[ct_q + ct_w];", i, i);
			kg_block_close(g->kg);
			kg_block_close(g->kg);
		}
	} else {
		g->vred_at = "";
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd reduction(+:%s)", clause.s ? clause.s : "");
		cg_for_open(g, x, &r, false);
		body(g, x);
		kg_block_close(g->kg);
	}
	g->vred = NULL;
	g->nvred = 0;
	g->vred_at = NULL;
	g->vred_used = NULL;
	for (int i = 0; i < l.n; i++) {
		char sum[64];
		snprintf(sum, sizeof sum, arrays ? "ct_vr%d[0]" : "ct_vr%d", i);
		add_sum_copy(g, l.v[i], &l.b[i], sum);
	}
	kg_block_close(g->kg);
	if (clause.failed)
		g->failed = true;
	ct_buf_free(&clause);
	cg_range_close(g, &r);
	free(l.v);
	free(l.b);
	return true;
}
