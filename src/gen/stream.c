/* stream.c: vectorize(x, nontemporal=true): a vectorized loop that assigns an output array stores it with non-temporal (streaming) stores of whole, aligned 64-byte lines. */
#include "gen/cgen.h"
#include "gen/shift.h"

#include <string.h>

/*
 * A kernel that writes a large output array once per element and never
 * reads it back (a stencil, a copy, an element-wise map) moves each output
 * line three times with ordinary stores: the line is read for ownership,
 * written in the cache, and written back when evicted. Streaming stores
 * write whole lines straight to memory (write-combining), which saves the
 * read; they need aligned, full-line addresses to do so. The loop
 *
 *   for v in [FROM, TO)  L[.. v ..] = e          (vectorize(v, nontemporal=true))
 *
 * becomes
 *
 *   v from FROM while &L[..] is not on a 64-byte boundary:  L = e   (scalar)
 *   whole lines:  line[0..W) = e for the W elements of a line (a simd loop
 *                 into a local aligned line, kept in a vector register by
 *                 the compiler), then ct_stream64(&L[..], line)
 *   the rest:     L = e                                              (scalar)
 *
 * Each element gets the same value as before, and the iterations are
 * independent (vectorize checked it), so the result is the loop's exactly.
 * Streaming stores are weakly ordered: a store fence must make them visible
 * before another thread (or the caller, after the kernel) reads the array.
 * A fence waits until the write-combining buffers have drained to memory
 * (a fence per 4096-float row of the 5-point stencil cost a quarter of its
 * time), so it is made as rarely as correctness allows: in a parallel loop,
 * the loop becomes `omp parallel { omp for nowait ...; fence }`, one fence
 * per thread before the region's barrier; outside parallel loops, one fence
 * at the end of the kernel; only inside a parallel loop that cannot take
 * that form (the merged main and tail versions of a split) does each
 * streamed loop fence at its end. ct_stream64 is chosen when the generated code is
 * compiled: AVX-512, AVX or SSE2 streaming stores, clang's
 * __builtin_nontemporal_store elsewhere, else a plain copy.
 *
 * When the statement reads an array at offsets of v (A[x, y-1], A[x, y+1]),
 * the lines where it can take those reads from lane shifts (shift.c) do:
 * the scalar head also runs up to where the shifts' whole-vector loads stay
 * in range, a first line loop uses the shifts up to where they stop being
 * in range, and the plain line loop does the lines after it.
 */

#define ST_LINE 64

static const char *const stream_helpers[] = {
	"#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)",
	"#include <immintrin.h>",
	"#endif",
	"static inline int ct_line_aligned(const void *p) { return ((uintptr_t)p & 63) == 0; }",
	"static inline void ct_stream64(void *p, const void *v)",
	"{",
	"#if defined(__AVX512F__)",
	"\t_mm512_stream_ps((float *)p, _mm512_load_ps((const float *)v));",
	"#elif defined(__AVX__)",
	"\t_mm256_stream_ps((float *)p, _mm256_load_ps((const float *)v));",
	"\t_mm256_stream_ps((float *)p + 8, _mm256_load_ps((const float *)v + 8));",
	"#elif defined(__SSE2__)",
	"\tfor (int i = 0; i < 16; i += 4)",
	"\t\t_mm_stream_ps((float *)p + i, _mm_load_ps((const float *)v + i));",
	"#elif defined(__clang__)",
	"\ttypedef float ct_line16 __attribute__((vector_size(64)));",
	"\tct_line16 x;",
	"\tmemcpy(&x, v, 64);",
	"\t__builtin_nontemporal_store(x, (ct_line16 *)p);",
	"#else",
	"\tmemcpy(p, v, 64);",
	"#endif",
	"}",
	"#if defined(__SSE2__)",
	"static inline void ct_stream_fence(void) { _mm_sfence(); }",
	"#else",
	"static inline void ct_stream_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }",
	"#endif",
};

static void need_stream_helpers(cg *g)
{
	if (g->stream_helpers)
		return;
	g->stream_helpers = true;
	for (size_t i = 0; i < sizeof stream_helpers / sizeof *stream_helpers; i++)
		kg_preamble(g->kg, "%s", stream_helpers[i]);
}

/* Whether the plan vectorizes loop x's index with nontemporal=true. */
static bool nontemporal_index(const cg *g, const lt_node *x)
{
	for (int i = 0; i < g->k->nplan; i++) {
		const ir_plan_item *it = &g->k->plan[i];
		if (it->kind == PL_VECTORIZE && it->nontemporal && it->n == 1 && it->idx && it->idx[0] == x->index)
			return true;
	}
	return false;
}

/* The assignment that the loop streams: nodes are one `L[..] = e` to a
 * kernel array whose elements divide a line; NULL otherwise. */
static const ir_node *streamed_stmt(const cg *g, lt_node *const *nodes, int n)
{
	if (n != 1 || nodes[0]->kind != LT_STMT || !nodes[0]->stmt)
		return NULL;
	const ir_node *s = nodes[0]->stmt;
	const ir_expr *l = s->lhs;
	if (s->op != AS_SET || !l || l->kind != EX_ACCESS || l->id < 0 || l->id >= g->k->narrays || !s->rhs)
		return NULL;
	size_t es = ct_dtype_size(g->arrays[l->id].type);
	if (es == 0 || ST_LINE % es != 0)
		return NULL;
	return s;
}

/* `L = e;` of statement s as C, with the value converted to L's type; in
 * checked mode under the tests of e's accesses and dst_check (the test of
 * dst, or NULL). */
static void put_assign(cg *g, ct_buf *b, const ir_node *s, const char *dst, const char *dst_check)
{
	ct_dtype t = g->arrays[s->lhs->id].type;
	bool integer = t == CT_I32 || t == CT_I64;
	ct_buf r, pend;
	ct_buf_init(&r);
	cg_pend_begin(g, &pend);
	cg_expr(g, &r, s->rhs, integer ? CT_I64 : t);
	const char *cond = cg_pend_end(g, &pend);
	if (cond || dst_check)
		ct_buf_printf(b, "if (%s%s%s) ", dst_check ? dst_check : "", cond && dst_check ? " && " : "",
		              cond ? cond : "");
	if (integer)
		ct_buf_printf(b, "%s = (%s)(%s);", dst, ir_dtype_c(t), r.s ? r.s : "0");
	else
		ct_buf_printf(b, "%s = %s;", dst, r.s ? r.s : "0");
	if (r.failed)
		g->failed = true;
	ct_buf_free(&r);
	ct_buf_free(&pend);
}

/* One line of the body, as C, into kgen (statement defs/uses: the array). */
static void put_line(cg *g, const char *arr, ct_buf *b)
{
	kg_stmt(g->kg, KG_OTHER, arr, arr, "%s", b->s ? b->s : "");
	if (b->failed)
		g->failed = true;
	ct_buf_free(b);
	ct_buf_init(b);
}

/* Whether x lies inside a parallel loop. */
static bool inside_parallel(const lt_node *x)
{
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_LOOP && y->parallel)
			return true;
	return false;
}

/* Whether a loop under x (x included) is vectorized with nontemporal=true. */
static bool has_stream_loop(const cg *g, const lt_node *x)
{
	if (x->kind == LT_LOOP && x->vector && nontemporal_index(g, x))
		return true;
	for (int i = 0; i < x->nkids; i++)
		if (has_stream_loop(g, x->kids[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (has_stream_loop(g, x->els[i]))
			return true;
	return false;
}

bool cg_stream_team_open(cg *g, const lt_node *x, const char *sched, const char *team)
{
	if (g->stream_team || !has_stream_loop(g, x))
		return false;
	need_stream_helpers(g);
	kg_comment(g->kg, "streaming stores inside: each thread fences once after its share of the loop");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp parallel %s", team);
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp for%s nowait", sched);
	g->stream_team = true;
	return true;
}

void cg_stream_team_close(cg *g, const lt_node *x)
{
	if (!g->stream_team || !x->parallel)
		return;
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_stream_fence();");
	kg_block_close(g->kg);
	g->stream_team = false;
}

void cg_stream_finish(cg *g)
{
	if (g->stream_fence_end)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_stream_fence(); /* the streaming stores, before returning */");
}

/* The loop over whole lines of statement s (v: the loop variable, w lanes
 * of a line, L: the stored element as C) from ct_nt_v on: each line computed
 * into an aligned local line, then streamed; with sp, only the lines up to
 * ct_sh_hi_v, and the reads of sp's windows from lane shifts. */
static void put_lines(cg *g, const ir_node *s, const char *v, int64_t w, const char *L, const char *chk,
                      cg_shift *sp)
{
	const char *arr = g->aname[s->lhs->id];
	ct_dtype t = g->arrays[s->lhs->id].type;
	if (sp) /* one limit, computed once: the loop with both tests ran 5 points of the copy bound slower
	         * (bench/RESULTS.md, "stencil: one loop limit") */
		kg_block_open(g->kg,
		              "for (const int64_t ct_sh_end_%s = ct_min64(ct_nt_end_%s - %lld, ct_sh_hi_%s); ct_nt_%s <= "
		              "ct_sh_end_%s; ct_nt_%s += %lld)",
		              v, v, (long long)w, v, v, v, v, (long long)w);
	else
		kg_block_open(g->kg, "for (; ct_nt_%s + %lld <= ct_nt_end_%s; ct_nt_%s += %lld)", v, (long long)w, v, v,
		              (long long)w);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s ct_line[%lld] __attribute__((aligned(64)));", ir_dtype_c(t),
	        (long long)w);
	if (sp)
		sh_step_begin(g, sp);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
	kg_block_open(g->kg, "for (int64_t %s = ct_nt_%s; %s < ct_nt_%s + %lld; %s++)", v, v, v, v, (long long)w, v);
	ct_buf dst, line;
	ct_buf_init(&dst);
	ct_buf_init(&line);
	ct_buf_printf(&dst, "ct_line[%s - ct_nt_%s]", v, v);
	g->shift = sp;
	put_assign(g, &line, s, dst.s ? dst.s : "ct_line[0]", NULL);
	g->shift = NULL;
	put_line(g, arr, &line);
	kg_block_close(g->kg);
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = ct_nt_%s;", v, v);
	if (chk) /* checked: a line out of range is not stored */
		kg_stmt(g->kg, KG_OTHER, arr, arr, "if (%s) ct_stream64(&%s, ct_line);", chk, L);
	else
		kg_stmt(g->kg, KG_OTHER, arr, arr, "ct_stream64(&%s, ct_line);", L);
	kg_block_close(g->kg);
	if (sp)
		sh_step_end(g, sp);
	kg_block_close(g->kg);
	g->failed = g->failed || dst.failed;
	ct_buf_free(&dst);
	ct_buf_free(&line);
}

bool cg_stream_loop(cg *g, const lt_node *x, const char *from, const char *to, lt_node *const *nodes, int n)
{
	if (x->kind != LT_LOOP || !x->vector || x->step != 1 || x->unroll || x->parallel || x->index < 0 ||
	    x->index >= g->nindices || g->fixed[x->index] || !nontemporal_index(g, x))
		return false;
	const ir_node *s = streamed_stmt(g, nodes, n);
	if (!s)
		return false;
	need_stream_helpers(g);
	const char *v = g->iname[x->index];
	const char *arr = g->aname[s->lhs->id];
	ct_dtype t = g->arrays[s->lhs->id].type;
	int64_t w = ST_LINE / (int64_t)ct_dtype_size(t);
	ct_buf lo, hi, line, raw, chk, chk1;
	ct_buf_init(&chk1);
	ct_buf_init(&lo);
	ct_buf_init(&hi);
	ct_buf_init(&line);
	ct_buf_init(&raw);
	ct_buf_init(&chk);
	g->cur_stmt = s;
	if (!from)
		cg_bound(g, &lo, x->lo);
	if (!to)
		cg_bound(g, &hi, x->hi);
	const lt_node *outer = g->open[x->index];
	g->open[x->index] = x;
	/* the stored element as is (L); checked mode tests it alone for scalar stores
	 * (chk1) and with the w elements of its line for streamed ones (chk) */
	bool was_raw = g->raw;
	g->raw = true;
	cg_access(g, &raw, s->lhs->id, s->lhs->sub);
	g->raw = was_raw;
	cg_check_range(g, &chk, s->lhs->id, s->lhs->sub, NULL, w);
	cg_check_range(g, &chk1, s->lhs->id, s->lhs->sub, NULL, 1);
	const char *L = raw.s ? raw.s : "0", *C = g->checked ? chk.s : NULL, *C1 = g->checked ? chk1.s : NULL;
	kg_comment(g->kg, "%sstreaming stores of %s over %s: to a 64-byte boundary, whole lines (%lld elements) "
	           "non-temporal, the rest", x->tail ? "tail, " : "", arr, v, (long long)w);
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t ct_nt_%s = %s;", v, from ? from : lo.s ? lo.s : "0");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_nt_end_%s = %s;", v, to ? to : hi.s ? hi.s : "0");
	/* reads at offsets of v from lane shifts (shift.c), in the lines where
	 * the windows' loads stay within what the loop reads */
	char base[300];
	snprintf(base, sizeof base, "ct_nt_%s", v);
	cg_shift sp;
	bool shifts = sh_plan(g, s, x->index, w, &sp);
	if (shifts) {
		ct_buf shlo, shhi;
		ct_buf_init(&shlo);
		ct_buf_init(&shhi);
		char e[340];
		snprintf(e, sizeof e, "ct_nt_end_%s", v);
		sp.base = base;
		sh_range(&sp, base, e, &shlo, &shhi);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_sh_lo_%s = %s, ct_sh_hi_%s = %s;", v,
		        shlo.s ? shlo.s : "0", v, shhi.s ? shhi.s : "0");
		g->failed = g->failed || shlo.failed || shhi.failed;
		ct_buf_free(&shlo);
		ct_buf_free(&shhi);
	}
	/* scalar iterations up to the first line boundary of the stored element */
	kg_block_open(g->kg, "for (; ct_nt_%s < ct_nt_end_%s; ct_nt_%s++)", v, v, v);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = ct_nt_%s;", v, v);
	if (shifts)
		kg_block_open(g->kg, "if (ct_line_aligned(&%s) && ct_nt_%s >= ct_sh_lo_%s)", L, v, v);
	else
		kg_block_open(g->kg, "if (ct_line_aligned(&%s))", L);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "break;");
	kg_block_close(g->kg);
	put_assign(g, &line, s, L, C1);
	put_line(g, arr, &line);
	kg_block_close(g->kg);
	/* whole lines: computed into an aligned local line, then streamed */
	bool fence_here = !g->stream_team && inside_parallel(x);
	if (fence_here)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_nt_lines_%s = ct_nt_%s;", v, v);
	if (shifts) {
		/* the lines whose windows' loads stay in range, with lane shifts */
		kg_block_open(g->kg, "if (ct_nt_%s + %lld <= ct_nt_end_%s && ct_nt_%s <= ct_sh_hi_%s)", v, (long long)w,
		              v, v, v);
		sh_prime(g, &sp);
		put_lines(g, s, v, w, L, C, &sp);
		kg_block_close(g->kg);
	}
	put_lines(g, s, v, w, L, C, NULL);
	/* the rest of the loop, scalar */
	kg_block_open(g->kg, "for (int64_t %s = ct_nt_%s; %s < ct_nt_end_%s; %s++)", v, v, v, v, v);
	put_assign(g, &line, s, L, C1);
	put_line(g, arr, &line);
	kg_block_close(g->kg);
	if (fence_here) {
		/* a parallel loop that does not fence at its end: fence here */
		kg_block_open(g->kg, "if (ct_nt_%s > ct_nt_lines_%s)", v, v);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_stream_fence();");
		kg_block_close(g->kg);
	} else if (!g->stream_team) {
		g->stream_fence_end = true;
	}
	kg_block_close(g->kg);
	g->open[x->index] = outer;
	if (lo.failed || hi.failed || raw.failed || chk.failed || chk1.failed)
		g->failed = true;
	ct_buf_free(&lo);
	ct_buf_free(&hi);
	ct_buf_free(&line);
	ct_buf_free(&raw);
	ct_buf_free(&chk);
	ct_buf_free(&chk1);
	return true;
}
