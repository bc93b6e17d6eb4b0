/* cgen.c: the C backend: a loop tree becomes one readable C99 function, emitted through kgen. */
#include "gen/gen.h"

#include "gen/cgen.h"
#include "ir/targets.h"
#include "ir/slots.h"
#include "ir/deps.h"

#include <stdlib.h>
#include <string.h>

/* Temps and cache buffers up to this many bytes live on the stack, as long
 * as all of them together stay within the total; the others on the heap. */
#define CG_STACK_TEMP_BYTES 65536
#define CG_STACK_TOTAL_BYTES 262144
/* Per-thread cache buffers (in parallel loops) up to this many bytes live
 * on the stack of each thread, as long as all of them together stay within
 * the total (thread stacks are the process's default, 8 MiB on Linux; set
 * OMP_STACKSIZE if it is smaller): a heap slab allocated per call costs a
 * page fault per page whenever malloc has given the memory back, which
 * made a 257^3 sgemm 8x slower. */
#define CG_PRIV_STACK_BYTES (1 << 20)
#define CG_PRIV_STACK_TOTAL_BYTES (2 << 20)

/* C keywords and the names the generated code itself uses: a user name
 * among them gets a trailing underscore. */
static const char *const reserved[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
	"restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
	"union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
	"_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
	"_Thread_local", "bool", "true", "false", "NULL", "int32_t", "int64_t", "uint64_t",
	"size_t", "sqrt", "sqrtf", "exp", "expf", "fma", "fmaf", "fabs", "fabsf", "malloc", "calloc",
	"free", "args", "params", "main", "min", "max", "abs"};



static bool is_reserved(const char *s)
{
	if (strncmp(s, "ct_", 3) == 0 || strncmp(s, "cachet_", 7) == 0)
		return true;
	for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		if (strcmp(reserved[i], s) == 0)
			return true;
	return false;
}

/* A C identifier for user name s (malloc'd). */
static char *c_name(cg *g, const char *s)
{
	size_t n = strlen(s);
	char *r = malloc(n + 2);
	if (!r) {
		g->failed = true;
		return NULL;
	}
	memcpy(r, s, n + 1);
	if (is_reserved(s)) {
		r[n] = '_';
		r[n + 1] = 0;
	}
	return r;
}

static void free_names(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void cg_bad(cg *g, const char *what, int id)
{
	if (!g->reported)
		ct_error(g->k->ctx, CT_ERR_INPUT, "cannot generate C: %s %d in the loop tree", what, id);
	g->reported = true;
	g->failed = true;
}

/* Whether a statement under x accesses storage a. */
static bool uses_storage(const lt_node *x, int a)
{
	if (x->stmt && (x->kind == LT_STMT || x->kind == LT_LET) &&
	    (ir_expr_reads(x->stmt->rhs, a) || (x->kind == LT_STMT && ir_expr_reads(x->stmt->lhs, a))))
		return true;
	for (int i = 0; i < x->nkids; i++)
		if (uses_storage(x->kids[i], a))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (uses_storage(x->els[i], a))
			return true;
	return false;
}

/* ------------------------------------------------------------ statements */


static void gen_stmt(cg *g, const lt_node *x)
{
	const ir_node *s = x->stmt;
	int vr = cg_reduce_slot(g, x);
	if (vr >= 0) {
		cg_reduce_stmt(g, s, vr);
		return;
	}
	const ir_expr *lhs = s->lhs;
	if (!lhs || lhs->kind != EX_ACCESS || lhs->id < 0 || lhs->id >= g->narrays) {
		cg_bad(g, "statement", s->stmt_id);
		return;
	}
	ct_dtype t = g->arrays[lhs->id].type;
	ct_buf l, r, pend;
	ct_buf_init(&l);
	ct_buf_init(&r);
	g->cur_stmt = s;
	/* checked: the statement as written, under the tests of its accesses */
	cg_pend_begin(g, &pend);
	cg_access(g, &l, lhs->id, lhs->sub);
	if (cg_is_int(t) && s->op != AS_SET)
		cg_expr(g, &r, s->rhs, CT_I64);
	else
		cg_expr(g, &r, s->rhs, cg_is_int(t) ? CT_I64 : t);
	const char *cond = cg_pend_end(g, &pend);
	if (cond)
		kg_block_open(g->kg, "if (%s)", cond);
	const char *arr = g->aname[lhs->id];
	if (cg_is_int(t) && s->op != AS_SET) {
		kg_stmt(g->kg, KG_OTHER, arr, arr, "%s = (%s)%s(%s, %s);", l.s, ir_dtype_c(t),
			cg_assign_op(s->op)->int_fn, l.s, r.s);
	} else {
		if (cg_is_int(t))
			kg_stmt(g->kg, KG_OTHER, arr, NULL, "%s = (%s)%s;", l.s, ir_dtype_c(t), r.s);
		else if (s->op == AS_SET)
			kg_stmt(g->kg, KG_OTHER, arr, NULL, "%s = %s;", l.s, r.s);
		else
			kg_stmt(g->kg, KG_OTHER, arr, NULL, "%s %s= %s;", l.s, cg_assign_op(s->op)->bare, r.s);
	}
	if (cond)
		kg_block_close(g->kg);
	if (l.failed || r.failed)
		g->failed = true;
	ct_buf_free(&l);
	ct_buf_free(&r);
	ct_buf_free(&pend);
}

static void gen_let(cg *g, const ir_node *s)
{
	const ir_let *let = &g->k->lets[s->let_id];
	ct_dtype t = let->type;
	ct_buf r, pend, v;
	ct_buf_init(&r);
	ct_buf_init(&v);
	g->cur_stmt = s;
	cg_pend_begin(g, &pend);
	cg_expr(g, &r, s->rhs, cg_is_int(t) ? CT_I64 : t);
	const char *cond = cg_pend_end(g, &pend);
	/* checked: the value when its accesses pass their tests, else 0 */
	if (cond)
		ct_buf_printf(&v, "%s ? %s : 0", cond, r.s ? r.s : "0");
	const char *value = cond ? v.s : r.s;
	char ctype[32];
	snprintf(ctype, sizeof ctype, "const %s", cg_is_int(t) ? "int64_t" : ir_dtype_c(t));
	char *name = c_name(g, let->name);
	if (name && value)
		g->lname[s->let_id] = kg_var_declare(g->kg, name, ctype, KG_PRIVATE, value);
	else
		g->failed = true;
	free(name);
	ct_buf_free(&r);
	ct_buf_free(&v);
	ct_buf_free(&pend);
}

/* The condition of an if without statement: every guard >= 0. */
static void put_guards(cg *g, ct_buf *b, const lt_node *x)
{
	ct_buf_putc(b, '(');
	for (int i = 0; i < x->nguard; i++) {
		if (i)
			ct_buf_puts(b, " && ");
		cg_put_aff(g, b, x->guard[i]);
		ct_buf_puts(b, " >= 0");
	}
	if (x->nguard <= 0)
		ct_buf_putc(b, '1');
	ct_buf_putc(b, ')');
}

static void gen_if(cg *g, const lt_node *x)
{
	ct_buf c;
	ct_buf_init(&c);
	if (x->stmt)
		cg_expr(g, &c, x->stmt->cond, CT_I64);
	else if (x->nguard > 0 && !x->guard)
		cg_bad(g, "guards of an if, count", x->nguard);
	else
		put_guards(g, &c, x);
	kg_block_open(g->kg, "if %s", c.s ? c.s : "(0)");
	cg_nodes(g, x->kids, x->nkids);
	if (x->nels) {
		kg_block_next(g->kg, "else");
		cg_nodes(g, x->els, x->nels);
	}
	kg_block_close(g->kg);
	if (c.failed)
		g->failed = true;
	ct_buf_free(&c);
}

/* Statement instances the subtree of x would hold with each of its loops
 * of constant trip count written out (a loop of runtime trips counts
 * once), capped at CG_UNROLL_BUDGET + 1: what unrolling x would hand the
 * compiler. */
static int64_t expanded_size(const lt_node *x)
{
	const int64_t cap = CG_UNROLL_BUDGET + 1;
	int64_t body = x->kind == LT_STMT || x->kind == LT_LET ? 1 : 0;
	for (int i = 0; i < x->nkids && body < cap; i++)
		body += expanded_size(x->kids[i]);
	for (int i = 0; i < x->nels && body < cap; i++)
		body += expanded_size(x->els[i]);
	int64_t lo = 0, hi = 0;
	if (x->kind == LT_LOOP && x->step > 0 && lt_const_range(x, &lo, &hi)) {
		int64_t trips = hi > lo ? (hi - lo + x->step - 1) / x->step : 0;
		body = trips > 0 && body > cap / trips ? cap : body * trips;
	}
	return body < cap ? body : cap;
}

/* The trips of x when it is a loop the hint unrolls whole (constant, at
 * most g->unroll_const_max trips, and what it and the unrolled loops
 * around it expand to stays within CG_UNROLL_BUDGET statements: nested
 * unrolls multiply, and nvcc took minutes on a 155-element private
 * cache copied and read in a 7 x 31 x 5 x 2 nest); 0 when it is not. */
static int64_t auto_unrolled(const cg *g, const lt_node *x)
{
	int64_t lo = 0, hi = 0;
	if (x->kind != LT_LOOP || x->unroll_by > 1 || g->unroll_const_max <= 0 || x->step <= 0 ||
	    !lt_const_range(x, &lo, &hi))
		return 0;
	int64_t trips = hi > lo ? (hi - lo + x->step - 1) / x->step : 0;
	if (trips < 1 || trips > g->unroll_const_max)
		return 0;
	int64_t outer = 1;
	for (const lt_node *a = x->parent; a && outer <= CG_UNROLL_BUDGET; a = a->parent) {
		int64_t t = auto_unrolled(g, a);
		if (t > 0)
			outer *= t;
	}
	int64_t size = expanded_size(x);
	return outer <= CG_UNROLL_BUDGET && size <= CG_UNROLL_BUDGET / outer ? trips : 0;
}

void cg_unroll_hint(cg *g, const lt_node *x)
{
	/* GCC's spelling; Clang accepts it too, other compilers ignore it */
	if (x->unroll_by > 1 && g->unroll_const_max == 0)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma GCC unroll %d", x->unroll_by);
	else if (x->unroll_by > 1)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma unroll %d", x->unroll_by);
	if (auto_unrolled(g, x) > 0)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma unroll");
}

/* The loop x fully unrolled: each iteration a block with the loop
 * variable a constant (plan: unroll). */
static void gen_unrolled(cg *g, const lt_node *x)
{
	int64_t lo = 0, hi = 0;
	if (!lt_const_range(x, &lo, &hi)) {
		cg_bad(g, "unrolled loop with runtime bounds over index", x->index);
		return;
	}
	const char *v = g->iname[x->index];
	kg_comment(g->kg, "%sunrolled: %s in %lld .. %lld step %lld", x->tail ? "tail, " : "", v, (long long)lo,
		   (long long)hi, (long long)x->step);
	const lt_node *outer = g->open[x->index];
	g->open[x->index] = x;
	for (int64_t i = lo; i < hi; i += x->step) {
		kg_block_bare(g->kg);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %lld;", v, (long long)i);
		cg_nodes(g, x->kids, x->nkids);
		kg_block_close(g->kg);
	}
	g->open[x->index] = outer;
}

/* The iterations of the collapsed band of parallel loop x as C: a number
 * when the bounds are constants (*known set, *n its value). */
static void put_band_trips(cg *g, ct_buf *b, const lt_node *x, bool *known, int64_t *n)
{
	*known = true;
	*n = 1;
	const lt_node *y = x;
	for (int c = 0; c < x->collapse && y && y->kind == LT_LOOP; c++) {
		int64_t lo, hi;
		if (lt_const_range(y, &lo, &hi)) {
			int64_t t = ct_trip_count(lo, hi, y->step);
			*n = ct_mul_ok(*n, t, n) ? *n : INT64_MAX;
		} else {
			*known = false;
		}
		y = y->nkids == 1 ? y->kids[0] : NULL;
	}
	if (*known) {
		ct_buf_printf(b, "%lld", (long long)*n);
		return;
	}
	y = x;
	for (int c = 0; c < x->collapse && y && y->kind == LT_LOOP; c++) {
		ct_buf_puts(b, c ? " * ct_trips(" : "ct_trips(");
		cg_bound(g, b, y->lo);
		ct_buf_puts(b, ", ");
		cg_bound(g, b, y->hi);
		ct_buf_printf(b, ", %lld)", (long long)y->step);
		y = y->nkids == 1 ? y->kids[0] : NULL;
	}
}

/* The OpenMP directive of parallel loop x (plan: parallelize), with a team
 * of at most as many threads as the band has iterations: an idle thread
 * spinning at the barrier steals a core on a busy machine (it made a
 * one-block 512^3 sgemm 6x slower on 2 threads). None when the band runs
 * at most once. */
static void gen_parallel_pragma(cg *g, const lt_node *x)
{
	const ct_kernel *k = g->k;
	const ir_plan_item *it = x->par_item >= 0 && x->par_item < k->nplan ? &k->plan[x->par_item] : NULL;
	if (!it || it->kind != PL_PARALLELIZE) {
		cg_bad(g, "parallelize item", x->par_item);
		return;
	}
	ct_buf trips;
	ct_buf_init(&trips);
	bool known;
	int64_t n;
	put_band_trips(g, &trips, x, &known, &n);
	if (!known || n > 1) {
		char collapse[32] = "";
		if (x->collapse > 1)
			snprintf(collapse, sizeof collapse, " collapse(%d)", x->collapse);
		ct_buf psched, team;
		ct_buf_init(&psched);
		ct_buf_init(&team);
		ct_buf_printf(&psched, "%s schedule(%s)", collapse, it->policy == POLICY_DYNAMIC ? "dynamic" : "static");
		ct_buf_printf(&team, "num_threads(ct_team(ct_nt, %lld, %s))", (long long)it->max_threads,
			      trips.s ? trips.s : "1");
		if (psched.failed || team.failed)
			g->failed = true;
		else if (!cg_stream_team_open(g, x, psched.s, team.s))
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp parallel for%s %s", psched.s, team.s);
		ct_buf_free(&psched);
		ct_buf_free(&team);
	}
	if (trips.failed)
		g->failed = true;
	ct_buf_free(&trips);
}

/* In the body of the innermost loop of a parallel band: each thread's own
 * slice of the heap slabs of the private buffers used inside it. */
static void gen_private_views(cg *g, const lt_node *band)
{
	const ct_looptree *t = g->t;
	for (int a = 0; t->priv && a < g->narrays; a++) {
		if (!t->priv[a] || !uses_storage(band, a))
			continue;
		const char *ty = ir_dtype_c(g->arrays[a].type);
		if (!g->priv_stack[a]) /* stack ones are declared by their regions */
			kg_stmt(g->kg, KG_OTHER, NULL, NULL,
				"%s *restrict %s = (%s *)(void *)((char *)ct_priv_%d + %s_bytes * (size_t)ct_thread_num());",
				ty, g->aname[a], ty, a, g->aname[a]);
	}
	cg_preduce_views(g, band);
}

/* The PL_PARALLELIZE item of parallel loop x when it asks for SPMD. */
static const ir_plan_item *spmd_item(const cg *g, const lt_node *x)
{
	const ct_kernel *k = g->k;
	if (!x->parallel || x->par_item < 0 || x->par_item >= k->nplan)
		return NULL;
	const ir_plan_item *it = &k->plan[x->par_item];
	return it->kind == PL_PARALLELIZE && it->spmd ? it : NULL;
}

/* ct_trips(lo, hi, step) of loop y as C into b. */
static void put_trips(cg *g, ct_buf *b, const lt_node *y)
{
	ct_buf_puts(b, "ct_trips(");
	cg_bound(g, b, y->lo);
	ct_buf_puts(b, ", ");
	cg_bound(g, b, y->hi);
	ct_buf_printf(b, ", %lld)", (long long)y->step);
}

/* Open the loop over y restricted to the trips [ct_sb[2*d], ct_sb[2*d+1])
 * of this thread's block. */
static void open_block_loop(cg *g, const lt_node *y, int d)
{
	ct_buf lo, hi;
	ct_buf_init(&lo);
	ct_buf_init(&hi);
	cg_bound(g, &lo, y->lo);
	cg_bound(g, &hi, y->hi);
	const char *v = g->iname[y->index];
	kg_block_open(g->kg, "for (int64_t %s = %s + ct_sb[%d] * %lld; %s < ct_min64(%s, %s + ct_sb[%d] * %lld); %s += %lld)",
		      v, lo.s ? lo.s : "0", 2 * d, (long long)y->step, v, hi.s ? hi.s : "0", lo.s ? lo.s : "0",
		      2 * d + 1, (long long)y->step, v, (long long)y->step);
	if (lo.failed || hi.failed)
		g->failed = true;
	ct_buf_free(&lo);
	ct_buf_free(&hi);
}

/*
 * SPMD (parallelize(..., spmd=true)): one parallel region; each thread
 * takes its place on a grid of one or two dimensions (the band's first
 * loops) and runs the same loops over its own block of their iterations:
 * trips / grid extent each, the remainder spread one by one over the first
 * blocks (ct_spmd_blocks). Caches inside the band get per-thread buffers,
 * as with any parallel loop, so a cache of the block is the thread's
 * private tile with its halo.
 */
static void gen_spmd(cg *g, const lt_node *x, const ir_plan_item *it)
{
	int dims = x->collapse >= 2 && x->nkids == 1 && x->kids[0]->kind == LT_LOOP ? 2 : 1;
	const lt_node *y = dims == 2 ? x->kids[0] : NULL;
	ct_buf tx, ty;
	ct_buf_init(&tx);
	ct_buf_init(&ty);
	put_trips(g, &tx, x);
	if (y)
		put_trips(g, &ty, y);
	else
		ct_buf_puts(&ty, "1");
	kg_comment(g->kg, "SPMD: a %s grid of threads, one block of %s%s%s each", dims == 2 ? "2-D" : "1-D",
		   g->iname[x->index], y ? " x " : "", y ? g->iname[y->index] : "");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp parallel num_threads(ct_team(ct_nt, %lld, %s * %s))",
		(long long)it->max_threads, tx.s ? tx.s : "1", ty.s ? ty.s : "1");
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t ct_sb[4];");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_spmd_blocks(ct_thread_num(), ct_num_threads(), %d, %s, %s, ct_sb);",
		dims, tx.s ? tx.s : "1", ty.s ? ty.s : "1");
	const lt_node *outer_x = g->open[x->index], *outer_y = y ? g->open[y->index] : NULL;
	open_block_loop(g, x, 0);
	g->open[x->index] = x;
	if (y) {
		open_block_loop(g, y, 1);
		g->open[y->index] = y;
	}
	const lt_node *inner = y ? y : x;
	g->band = x;
	g->band_left = 0;
	gen_private_views(g, x);
	cg_nodes(g, inner->kids, inner->nkids);
	if (y) {
		kg_block_close(g->kg);
		g->open[y->index] = outer_y;
	}
	kg_block_close(g->kg);
	g->open[x->index] = outer_x;
	kg_block_close(g->kg);
	if (tx.failed || ty.failed)
		g->failed = true;
	ct_buf_free(&tx);
	ct_buf_free(&ty);
}

/* One side of an affine loop's range: fn (ct_max64 or ct_min64) over its
 * bound over params (unless it has none) and its affine terms. */
static void affine_side(cg *g, ct_buf *b, const bx *base, bool none, const aff *v, int n,
                        const char *fn)
{
	for (int j = none ? 1 : 0; j < n; j++)
		ct_buf_printf(b, "%s(", fn);
	if (!none)
		cg_bound(g, b, base);
	for (int j = 0; j < n; j++) {
		if (j > 0 || !none)
			ct_buf_puts(b, ", ");
		cg_put_aff(g, b, v[j]);
		if (j > 0 || !none)
			ct_buf_putc(b, ')');
	}
}

void cg_range_open(cg *g, const lt_node *x, cg_range *r)
{
	ct_buf_init(&r->lo);
	ct_buf_init(&r->hi);
	if (lt_affine_loop(x)) {
		int64_t c;
		affine_side(g, &r->lo, x->lo, bx_is_const(x->lo, &c) && c == LT_NO_LO, x->dlo,
		            x->ndlo, "ct_max64");
		affine_side(g, &r->hi, x->hi, bx_is_const(x->hi, &c) && c == LT_NO_HI, x->dhi,
		            x->ndhi, "ct_min64");
		return;
	}
	cg_bound(g, &r->lo, x->lo);
	cg_bound(g, &r->hi, x->hi);
}

void cg_range_close(cg *g, cg_range *r)
{
	if (r->lo.failed || r->hi.failed)
		g->failed = true;
	ct_buf_free(&r->lo);
	ct_buf_free(&r->hi);
}

void cg_for_open(cg *g, const lt_node *x, const cg_range *r, bool spell_step)
{
	const char *v = g->iname[x->index];
	const char *lo = r->lo.s ? r->lo.s : "0", *hi = r->hi.s ? r->hi.s : "0";
	if (x->step == 1 && !spell_step)
		kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s++)", v, lo, v, hi, v);
	else
		kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s += %lld)", v, lo, v, hi, v,
			      (long long)x->step);
}

const lt_node *cg_loop_enter(cg *g, const lt_node *x)
{
	const lt_node *outer = g->open[x->index];
	g->open[x->index] = x;
	return outer;
}

void cg_loop_leave(cg *g, const lt_node *x, const lt_node *outer)
{
	g->open[x->index] = outer;
}

void cg_loop_body(cg *g, const lt_node *x)
{
	const lt_node *outer = cg_loop_enter(g, x);
	cg_nodes(g, x->kids, x->nkids);
	cg_loop_leave(g, x, outer);
}

/* Whether a loop below x (not x itself) has affine bounds. */
static bool kids_affine(const lt_node *x)
{
	for (int i = 0; i < x->nkids + x->nels; i++)
		if (lt_affine_below(i < x->nkids ? x->kids[i] : x->els[i - x->nkids]))
			return true;
	return false;
}

static void gen_loop(cg *g, const lt_node *x)
{
	const ir_plan_item *spmd = spmd_item(g, x);
	if (spmd && x->index >= 0 && x->index < g->nindices) {
		gen_spmd(g, x, spmd);
		return;
	}
	if (x->index < 0 || x->index >= g->nindices) {
		cg_bad(g, "loop over index", x->index);
		return;
	}
	if (g->hook_loop && g->hook_loop(g, x))
		return;
	if (x->parallel && x->preduce && g->preduce_at != x) {
		const lt_node *was = g->preduce_at;
		g->preduce_at = x;
		cg_preduce_open(g, x);
		gen_loop(g, x);
		cg_preduce_close(g, x);
		g->preduce_at = was;
		return;
	}
	if (x->unroll) {
		gen_unrolled(g, x);
		return;
	}
	/* a vector loop that carries reductions: before the rewrites, which
	 * take its statements as independent */
	if (x->vector && cg_reduce_loop(g, x))
		return;
	/* the rewrites below read loops as rectangular: a loop with affine bounds
	 * in x's subtree gets plain loops down to it (issue #31 extends them).
	 * A register tile reads only the loops inside x as ranges: x itself (the
	 * loop the accumulators live across) may be affine. */
	bool rect = !g->k->affine_bounds || !lt_affine_below(x);
	bool rect_inside = rect || !kids_affine(x);
	if (rect_inside && g->band_left == 0 && cg_register_tile(g, x))
		return;
	if (rect && (cg_guarded_nest(g, x) || cg_split_boundary(g, x)))
		return;
	if (rect && g->band_left == 0 && cg_stream_loop(g, x, NULL, NULL, x->kids, x->nkids))
		return;
	if (rect && cg_shift_loop(g, x, NULL, NULL, x->kids, x->nkids))
		return;
	cg_range r;
	cg_range_open(g, x, &r);
	if (x->tail)
		kg_comment(g->kg, "tail of %s", g->iname[x->index]);
	if (x->parallel) {
		gen_parallel_pragma(g, x);
		g->band = x;
		g->band_left = x->collapse;
	}
	if (x->vector)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma omp simd");
	cg_unroll_hint(g, x);
	cg_for_open(g, x, &r, false);
	const lt_node *outer = cg_loop_enter(g, x);
	if (g->band_left > 0 && --g->band_left == 0)
		gen_private_views(g, g->band);
	cg_nodes(g, x->kids, x->nkids);
	cg_loop_leave(g, x, outer);
	kg_block_close(g->kg);
	if (x->parallel)
		cg_stream_team_close(g, x);
	cg_range_close(g, &r);
}

/* Whether loops x and y (siblings, y right after x) are the main and tail
 * versions of one parallel loop, to be run as one parallel loop. */
static bool parallel_versions(const cg *g, const lt_node *x, const lt_node *y)
{
	return g->band_left == 0 && x->kind == LT_LOOP && y->kind == LT_LOOP && x->parallel && y->parallel &&
	       x->collapse == 1 && y->collapse == 1 && x->index == y->index && !x->tail && y->tail &&
	       x->par_item == y->par_item && !x->unroll && !y->unroll && x->index >= 0 &&
	       x->index < g->nindices;
}

/* The trip count of loop x as C (a number when its bounds are constants). */
static void put_loop_trips(cg *g, ct_buf *b, const lt_node *x, int64_t *known)
{
	int64_t lo, hi;
	*known = -1;
	if (lt_const_range(x, &lo, &hi)) {
		*known = ct_trip_count(lo, hi, x->step);
		ct_buf_printf(b, "%lld", (long long)*known);
		return;
	}
	ct_buf_puts(b, "ct_trips(");
	cg_bound(g, b, x->lo);
	ct_buf_puts(b, ", ");
	cg_bound(g, b, x->hi);
	ct_buf_printf(b, ", %lld)", (long long)x->step);
}

void cg_loop_trips(cg *g, ct_buf *b, const lt_node *x, int64_t *known)
{
	put_loop_trips(g, b, x, known);
}

void cg_private_views(cg *g, const lt_node *band)
{
	gen_private_views(g, band);
}

/* One version of a merged parallel loop: its variable from the shared
 * iteration number, then its body. */
void cg_version_var(cg *g, const lt_node *x, const char *it, const char *first)
{
	ct_buf lo;
	ct_buf_init(&lo);
	cg_bound(g, &lo, x->lo);
	const char *v = g->iname[x->index];
	if (x->tail)
		kg_comment(g->kg, "tail of %s", v);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %s + (%s - (%s)) * %lld;", v, lo.s ? lo.s : "0",
		it, first, (long long)x->step);
	if (lo.failed)
		g->failed = true;
	ct_buf_free(&lo);
}

static void gen_version_body(cg *g, const lt_node *x, const char *it, const char *first)
{
	cg_version_var(g, x, it, first);
	const lt_node *outer = cg_loop_enter(g, x);
	gen_private_views(g, x);
	cg_nodes(g, x->kids, x->nkids);
	cg_loop_leave(g, x, outer);
}

/* The main version x and the tail version y of a parallel loop as one
 * parallel loop over the iterations of both: with a separate parallel loop
 * per version, a 1000-column gemm in 512-column blocks ran its one main
 * block and then its tail block on one thread each. */
static void gen_parallel_versions(cg *g, const lt_node *x, const lt_node *y)
{
	const ct_kernel *k = g->k;
	const ir_plan_item *it = x->par_item >= 0 && x->par_item < k->nplan ? &k->plan[x->par_item] : NULL;
	if (!it || it->kind != PL_PARALLELIZE) {
		cg_bad(g, "parallelize item", x->par_item);
		return;
	}
	ct_buf tx, ty;
	ct_buf_init(&tx);
	ct_buf_init(&ty);
	int64_t nx, ny;
	put_loop_trips(g, &tx, x, &nx);
	put_loop_trips(g, &ty, y, &ny);
	const char *v = g->iname[x->index];
	char iv[300];
	snprintf(iv, sizeof iv, "ct_pv_%s", v);
	/* a buffer, not a fixed array: runtime trip counts can be long
	 * (balanced splits) */
	ct_buf tb;
	ct_buf_init(&tb);
	if (nx >= 0 && ny >= 0)
		ct_buf_printf(&tb, "%lld", (long long)(nx + ny));
	else
		ct_buf_printf(&tb, "%s + %s", tx.s ? tx.s : "0", ty.s ? ty.s : "0");
	const char *total = tb.s ? tb.s : "0";
	kg_comment(g->kg, "parallel over the main and tail versions of %s together", v);
	if (!(nx >= 0 && ny >= 0 && nx + ny <= 1))
		kg_stmt(g->kg, KG_OTHER, NULL, NULL,
			"#pragma omp parallel for schedule(%s) num_threads(ct_team(ct_nt, %lld, %s))",
			it->policy == POLICY_DYNAMIC ? "dynamic" : "static", (long long)it->max_threads, total);
	kg_block_open(g->kg, "for (int64_t %s = 0; %s < %s; %s++)", iv, iv, total, iv);
	kg_block_open(g->kg, "if (%s < %s)", iv, tx.s ? tx.s : "0");
	gen_version_body(g, x, iv, "0");
	kg_block_next(g->kg, "else");
	gen_version_body(g, y, iv, tx.s ? tx.s : "0");
	kg_block_close(g->kg);
	kg_block_close(g->kg);
	if (tx.failed || ty.failed || tb.failed)
		g->failed = true;
	ct_buf_free(&tx);
	ct_buf_free(&ty);
	ct_buf_free(&tb);
}

/* Whether no cache node above x belongs to x's region (double buffering
 * nests nodes of one region). */
static bool outermost_node_of_region(const lt_node *x)
{
	for (const lt_node *y = x->parent; y; y = y->parent)
		if (y->kind == LT_CACHE && y->cache == x->cache)
			return false;
	return true;
}

/* A per-thread buffer kept on the stack is declared in its region's block
 * (not zeroed: a cache's copies write every element its body reads), so
 * the buffers of the main and tail versions of a region share stack. */
static void declare_private_on_stack(cg *g, int a)
{
	if (a < 0 || a >= g->narrays || !g->priv_stack[a])
		return;
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "_Alignas(64) %s %s[%lld]; /* cache buffer %s, this thread's */",
		ir_dtype_c(g->arrays[a].type), g->aname[a], (long long)g->priv_count[a], g->arrays[a].name);
}

/* A cache region: a comment that describes it, then its kids (copies in,
 * the body, copies out) in a block of their own. */
static void gen_cache(cg *g, const lt_node *x)
{
	const ct_looptree *t = g->t;
	if (x->cache < 0 || x->cache >= t->nregions) {
		cg_bad(g, "cache region", x->cache);
		return;
	}
	const lt_region *r = &t->regions[x->cache];
	const ct_kernel *k = g->k;
	if (r->source < 0 || r->source >= g->narrays || r->buffer < 0 || r->buffer >= g->narrays ||
	    r->rank < 0 || r->rank > IR_MAX_RANK) {
		cg_bad(g, "storage of cache region", x->cache);
		return;
	}
	const ir_plan_item *it = r->item >= 0 && r->item < k->nplan ? &k->plan[r->item] : NULL;
	const char *name = it && it->name ? it->name : g->arrays[r->buffer].name;
	/* what the plan caches: an array or the parent cache (named even when elided) */
	const char *src = g->arrays[r->source].name;
	if (it && it->src_cache >= 0 && it->src_cache < k->nplan && k->plan[it->src_cache].name)
		src = k->plan[it->src_cache].name;
	else if (it && it->src_array >= 0 && it->src_array < k->narrays)
		src = k->arrays[it->src_array].name;
	ct_buf c;
	ct_buf_init(&c);
	ct_buf_printf(&c, "cache %s of %s: ", name, src);
	if (r->elided) {
		/* no buffer and no copies: the body uses the source */
		ct_buf_printf(&c, "elided, %s used in place", g->arrays[r->source].name);
	} else {
		ct_buf_puts(&c, g->aname[r->buffer]);
		for (int d = 0; d < r->rank; d++) {
			ct_buf_putc(&c, '[');
			if (r->shape[d])
				cg_put_bx_bare(g, &c, r->shape[d]);
			else
				ct_buf_putc(&c, '?');
			ct_buf_putc(&c, ']');
		}
		if (it && it->packed != PACK_NONE && r->rank == 1) /* the triangle alone (plan_pack.c) */
			ct_buf_puts(&c, it->packed == PACK_UPPER ? " packed=upper" : " packed=lower");
		else if (r->first_major)
			ct_buf_puts(&c, " first_major");
		else if (r->last_major)
			ct_buf_puts(&c, " last_major");
		else {
			ct_buf_puts(&c, " layout (");
			for (int d = 0; d < r->rank; d++)
				ct_buf_printf(&c, "%s%d", d ? ", " : "", r->order[d]);
			ct_buf_putc(&c, ')');
		}
		if (r->nmulti > 0)
			ct_buf_printf(&c, ", %d multicache dim%s", r->nmulti, r->nmulti == 1 ? "" : "s");
	}
	/* the copies it makes: `copy_in`, `zero_fill, reduce`, or none */
	bool pro = !r->elided && r->prologue != LT_PRO_NONE,
	     epi = !r->elided && r->epilogue != LT_EPI_NONE;
	if (pro)
		ct_buf_printf(&c, ", %s", lt_prologue_name(r->prologue));
	if (epi)
		ct_buf_printf(&c, ", %s", lt_epilogue_name(r->epilogue));
	if (!pro && !epi && !r->elided)
		ct_buf_puts(&c, ", no copies");
	if (r->double_buffer)
		ct_buf_puts(&c, ", double-buffered");
	kg_comment(g->kg, "%s", c.s ? c.s : "cache");
	if (c.failed)
		g->failed = true;
	ct_buf_free(&c);
	kg_block_bare(g->kg);
	if (outermost_node_of_region(x)) {
		declare_private_on_stack(g, r->elided ? -1 : r->buffer);
		declare_private_on_stack(g, r->temp);
	}
	if (g->hook_region)
		g->hook_region(g, x, true);
	int outer_region = g->cur_region;
	g->cur_region = x->cache;
	cg_nodes(g, x->kids, x->nkids);
	g->cur_region = outer_region;
	if (g->hook_region)
		g->hook_region(g, x, false);
	kg_block_close(g->kg);
}

void cg_nodes(cg *g, lt_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = v[i];
		switch (x->kind) {
		case LT_LOOP: {
			int grid = cg_parallel_grid(g, v + i, n - i);
			if (grid > 0) {
				i += grid - 1;
			} else if (i + 1 < n && parallel_versions(g, x, v[i + 1])) {
				gen_parallel_versions(g, x, v[i + 1]);
				i++;
			} else {
				gen_loop(g, x);
			}
			break;
		}
		case LT_STMT: gen_stmt(g, x); break;
		case LT_LET: gen_let(g, x->stmt); break;
		case LT_IF: gen_if(g, x); break;
		case LT_CACHE: gen_cache(g, x); break;
		}
	}
}

/* ------------------------------------------------------------ function */

static const char *const helpers[] = {
	"static inline int64_t ct_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }",
	"static inline int64_t ct_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }",
	"static inline int64_t ct_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }",
	"static inline int64_t ct_ineg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }",
	"static inline int64_t ct_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : (b == -1 ? ct_ineg(a) : a / b); }",
	"static inline int64_t ct_iabs(int64_t a) { return a < 0 ? ct_ineg(a) : a; }",
	"static inline int64_t ct_itrunc(double x) { return x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x; }",
	"static inline int64_t ct_min64(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max64(int64_t a, int64_t b) { return a > b ? a : b; }",
	"static inline float ct_min_float(float a, float b) { return a < b ? a : b; }",
	"static inline float ct_max_float(float a, float b) { return a > b ? a : b; }",
	"static inline double ct_min_double(double a, double b) { return a < b ? a : b; }",
	"static inline double ct_max_double(double a, double b) { return a > b ? a : b; }",
	"static inline int64_t ct_min_int32_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max_int32_t(int64_t a, int64_t b) { return a > b ? a : b; }",
	"static inline int64_t ct_min_int64_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max_int64_t(int64_t a, int64_t b) { return a > b ? a : b; }",
};

/* Parallel loops (plan: parallelize) run under OpenMP when the code is
 * compiled with -fopenmp, and serially otherwise. */
static const char *const omp_helpers[] = {
	"static inline int64_t ct_trips(int64_t lo, int64_t hi, int64_t step) { return hi > lo ? (int64_t)(((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step) + 1 : 0; }",
	"static inline int ct_team(int nt, int64_t most, int64_t trips) { int64_t n = nt; if (most > 0 && most < n) n = most; if (trips < n) n = trips; return n < 1 ? 1 : (int)n; }",
	"#ifdef _OPENMP",
	"#include <omp.h>",
	"static inline int ct_thread_num(void) { return omp_get_thread_num(); }",
	"static inline int ct_max_threads(void) { return omp_get_max_threads(); }",
	"#else",
	"static inline int ct_thread_num(void) { return 0; }",
	"static inline int ct_max_threads(void) { return 1; }",
	"#endif",
};

/* SPMD grids (gen_spmd), only in code that has one. */
static const char *const spmd_helpers[] = {
	"#ifdef _OPENMP",
	"static inline int ct_num_threads(void) { return omp_get_num_threads(); }",
	"#else",
	"static inline int ct_num_threads(void) { return 1; }",
	"#endif",
	"/* the trips [b[2d], b[2d+1]) of thread t of p along each grid dimension d: p threads on a gx x gy grid (gy the largest divisor of p at most sqrt(p) for 2 dimensions, 1 otherwise), n / g trips per block and the remainder one by one over the first blocks */",
	"static inline void ct_spmd_share(int64_t n, int64_t g, int64_t c, int64_t *b) { int64_t q = n / g, r = n % g; b[0] = c * q + (c < r ? c : r); b[1] = b[0] + q + (c < r ? 1 : 0); }",
	"static inline void ct_spmd_blocks(int t, int p, int dims, int64_t nx, int64_t ny, int64_t *b) { int64_t gy = 1; for (int64_t d = 1; dims == 2 && d * d <= p; d++) if (p % d == 0) gy = d; int64_t gx = p / gy; ct_spmd_share(nx, gx, t / gy, b); ct_spmd_share(ny, gy, t % gy, b + 2); }",
};

/* Checked mode (gen_c_opts): the record of the first violation and the
 * tests. The flag is claimed by one compare-exchange, so of threads that
 * fail at once one writes the record; the caller reads it after the call. */
static const char *const checked_helpers[] = {
	"typedef struct ct_oob { int hit; int site; int64_t elem; int64_t count; } ct_oob;",
	"static inline void ct_oob_note(ct_oob *o, int site, int64_t e, int64_t n)",
	"{",
	"#if defined(__GNUC__)",
	"\tint none = 0;",
	"\tif (!__atomic_compare_exchange_n(&o->hit, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))",
	"\t\treturn;",
	"#else",
	"\tif (o->hit)",
	"\t\treturn;",
	"\to->hit = 1;",
	"#endif",
	"\to->site = site;",
	"\to->elem = e;",
	"\to->count = n;",
	"}",
	"/* element e of a storage of n elements: e when it lies inside, else 0 (always allocated) after noting it */",
	"static inline int64_t ct_ix(ct_oob *o, int site, int64_t e, int64_t n) { if (e >= 0 && e < n) return e; ct_oob_note(o, site, e, n); return 0; }",
	"/* whether elements e .. e+w-1 lie inside a storage of n elements; notes the first one outside when not */",
	"static inline int ct_inb(ct_oob *o, int site, int64_t e, int64_t w, int64_t n) { if (e >= 0 && e <= n - w) return 1; ct_oob_note(o, site, e < 0 || e >= n ? e : n, n); return 0; }",
};

/* Whether some parallelize item of k asks for SPMD. */
static bool has_spmd(const ct_kernel *k)
{
	for (int i = 0; i < k->nplan; i++)
		if (k->plan[i].kind == PL_PARALLELIZE && k->plan[i].spmd)
			return true;
	return false;
}

/* `void cachet_NAME_set_threads(int n)`: the threads of the next runs' parallel
 * loops (n <= 0: one per processor); the runner calls it before each run. */
static void gen_set_threads(cg *g)
{
	char name[300], proto[400];
	gen_threads_symbol(g->k, name, sizeof name);
	snprintf(proto, sizeof proto, "void %s(int n)", name);
	kg_func_declare(g->kg, name, KG_FUNC_KERNEL, proto, NULL, NULL);
	kg_func_begin(g->kg, name);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#ifdef _OPENMP");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "omp_set_num_threads(n > 0 ? n : omp_get_num_procs());");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#else");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "(void)n;");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#endif");
	kg_func_end(g->kg);
}

/* A comment describing array a: type, shape, layout, role. */
static void describe_array(cg *g, ct_buf *b, int a)
{
	const ir_array *arr = &g->k->arrays[a];
	ct_buf_printf(b, "%s: %s[", arr->name, ct_dtype_name(arr->type));
	for (int d = 0; d < arr->rank; d++) {
		if (d)
			ct_buf_puts(b, ", ");
		cg_put_aff(g, b, arr->ext[d]);
	}
	bool row = true, col = true;
	for (int d = 0; d < arr->rank; d++) {
		row = row && arr->order[d] == d;
		col = col && arr->order[d] == arr->rank - 1 - d;
	}
	if (row)
		ct_buf_puts(b, "], row-major");
	else if (col)
		ct_buf_puts(b, "], column-major");
	else {
		ct_buf_puts(b, "], dimension order (");
		for (int d = 0; d < arr->rank; d++)
			ct_buf_printf(b, "%s%d", d ? ", " : "", arr->order[d]);
		ct_buf_putc(b, ')');
	}
	ct_buf_printf(b, ", %s", ct_role_name(arr->role));
}

/* The layout arguments of strided array a: its base offset, then one
 * stride per dimension (elements). */
static void put_strided_params(cg *g, ct_buf *b, int a, bool comments)
{
	const char *sep = comments ? ",\n\t" : ", ";
	ct_buf_printf(b, "%sint64_t ct_vo%d", sep, a);
	if (comments)
		ct_buf_printf(b, " /* %s: offset of element (0, ...) */", g->arrays[a].name);
	for (int d = 0; d < g->arrays[a].rank; d++) {
		ct_buf_printf(b, "%sint64_t ct_vs%d_%d", sep, a, d);
		if (comments)
			ct_buf_printf(b, " /* %s: stride of dimension %d */", g->arrays[a].name, d);
	}
}

/* The parameter list of the kernel function. */
static void put_params(cg *g, ct_buf *b, bool comments)
{
	const ct_kernel *k = g->k;
	bool first = true;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		if (arr->role == CT_TEMP)
			continue;
		bool ro = ir_array_readonly(arr);
		ct_buf_printf(b, "%s%s%s%s *restrict %s", first ? "" : ",", comments ? "\n\t" : (first ? "" : " "),
			      ro ? "const " : "", ir_dtype_c(arr->type), g->aname[a]);
		if (comments) {
			ct_buf_puts(b, " /* ");
			describe_array(g, b, a);
			ct_buf_puts(b, " */");
		}
		first = false;
		if (cg_strided_arg(g, a))
			put_strided_params(g, b, a, comments);
	}
	for (int p = 0; p < k->nparams; p++) {
		if (!k->params[p].runtime)
			continue;
		ct_buf_printf(b, "%s%sint64_t %s", first ? "" : ",", comments ? "\n\t" : (first ? "" : " "),
			      g->pname[p]);
		if (comments)
			ct_buf_puts(b, " /* runtime size */");
		first = false;
	}
	if (g->checked) {
		ct_buf_printf(b, "%s%sct_oob *ct_ck", first ? "" : ",", comments ? "\n\t" : (first ? "" : " "));
		first = false;
	}
	if (first)
		ct_buf_puts(b, "void");
}

/*
 * Entry checks of the runtime params. check proves every loop and size
 * whose bounds it knows (plan/edges.c); those that name runtime params are
 * proven here, at each call, with the same rule: the bounds, the loop
 * variable after its last iteration (`v += step`) and each size computed
 * without overflow. A loop that would overflow returns 2 before anything
 * is touched; a size that would returns 1 (it cannot be allocated).
 */
static const char *const entry_check_helpers[] = {
	"static inline int64_t ct_cadd(int64_t a, int64_t b, int *ok) { int64_t r; if (__builtin_add_overflow(a, b, &r)) { *ok = 0; return 0; } return r; }",
	"static inline int64_t ct_csub(int64_t a, int64_t b, int *ok) { int64_t r; if (__builtin_sub_overflow(a, b, &r)) { *ok = 0; return 0; } return r; }",
	"static inline int64_t ct_cmul(int64_t a, int64_t b, int *ok) { int64_t r; if (__builtin_mul_overflow(a, b, &r)) { *ok = 0; return 0; } return r; }",
	"static inline int64_t ct_cdiv(int64_t a, int64_t b, int *ok) { if (b == 0 || (a == INT64_MIN && b == -1)) { *ok = 0; return 0; } return a / b; }",
	"static inline int64_t ct_cmod(int64_t a, int64_t b, int *ok) { if (b == 0 || (a == INT64_MIN && b == -1)) { *ok = 0; return 0; } return a % b; }",
	"static inline void ct_cloop(int64_t lo, int64_t hi, int64_t step, int *ok) { int64_t span, last; if (hi <= lo) return; if (step < 1 || __builtin_sub_overflow(hi, lo, &span)) { *ok = 0; return; } last = lo + (span - 1) / step * step; if (last > INT64_MAX - step) *ok = 0; }",
	"static inline size_t ct_csize(int64_t n, size_t esize, const int *ok) { return !*ok || n < 0 || (uint64_t)n > (SIZE_MAX - 63) / esize ? SIZE_MAX : ((size_t)n * esize + 63) / 64 * 64; }",
};

/* Bound x as C whose every operation is overflow-checked into ct_ok
 * (derived values expanded: their ct_dI may have wrapped). */
static void put_checked_bx(cg *g, ct_buf *b, const bx *x)
{
	const ct_kernel *k = g->k;
	switch (x->kind) {
	case BX_CONST:
		ct_buf_printf(b, "%lld", (long long)x->v);
		return;
	case BX_PARAM:
		if (x->id >= k->nparams && x->id - k->nparams < g->t->nderived)
			put_checked_bx(g, b, g->t->derived[x->id - k->nparams]);
		else
			cg_bound(g, b, x);
		return;
	case BX_MIN:
	case BX_MAX:
		ct_buf_puts(b, x->kind == BX_MIN ? "ct_min64(" : "ct_max64(");
		break;
	case BX_ADD: ct_buf_puts(b, "ct_cadd("); break;
	case BX_SUB: ct_buf_puts(b, "ct_csub("); break;
	case BX_MUL: ct_buf_puts(b, "ct_cmul("); break;
	case BX_FLOORDIV: ct_buf_puts(b, "ct_cdiv("); break;
	case BX_MOD: ct_buf_puts(b, "ct_cmod("); break;
	}
	put_checked_bx(g, b, x->a);
	ct_buf_puts(b, ", ");
	put_checked_bx(g, b, x->b);
	ct_buf_puts(b, x->kind == BX_MIN || x->kind == BX_MAX ? ")" : ", &ct_ok)");
}

/* Whether the bound names something only known at run time. */
static bool runtime_bx(const bx *x)
{
	int64_t v;
	return x && !bx_is_const(x, &v);
}

static bool tree_needs_checks(const cg *g, lt_node *const *nodes, int n)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = nodes[i];
		if (x->kind == LT_LOOP && (runtime_bx(x->lo) || runtime_bx(x->hi)))
			return true;
		if (tree_needs_checks(g, x->kids, x->nkids) || tree_needs_checks(g, x->els, x->nels))
			return true;
	}
	return false;
}

/* Whether the code needs the entry checks: a loop or a temp or cache
 * buffer sized by runtime params. */
static bool needs_entry_checks(const cg *g)
{
	for (int a = 0; a < g->narrays; a++) {
		if (g->arrays[a].role != CT_TEMP)
			continue;
		for (int d = 0; d < g->arrays[a].rank && g->t->ext; d++)
			if (runtime_bx(g->t->ext[a * IR_MAX_RANK + d]))
				return true;
	}
	return tree_needs_checks(g, g->t->roots, g->t->nroots);
}

/* Whether loop x cannot overflow whatever the runtime params: by 1 from a
 * constant >= 0 to a param or constant (nothing computed; the variable
 * stops at hi). */
static bool loop_safe(const cg *g, const lt_node *x)
{
	int64_t lo;
	const bx *h = x->hi;
	return x->step == 1 && !lt_affine_loop(x) && bx_is_const(x->lo, &lo) && lo >= 0 &&
	       (h->kind == BX_CONST || (h->kind == BX_PARAM && h->id >= 0 && h->id < g->k->nparams));
}

/* ct_cloop(lo, hi, step) of each loop with runtime bounds, once per text. */
static void put_loop_checks(cg *g, ct_buf *seen, lt_node *const *nodes, int n)
{
	for (int i = 0; i < n && !g->failed; i++) {
		const lt_node *x = nodes[i];
		/* an affine loop starts at its lower terms (x->lo is only their part over params, or
		 * the LT_NO_LO sentinel): its last value is below hi, so hi - 1 stands for its start */
		bool affine = lt_affine_loop(x);
		if (x->kind == LT_LOOP && (affine ? runtime_bx(x->hi) : runtime_bx(x->lo) || runtime_bx(x->hi)) &&
		    !loop_safe(g, x)) {
			ct_buf line;
			ct_buf_init(&line);
			ct_buf_puts(&line, "ct_cloop(");
			if (affine) {
				ct_buf_puts(&line, "ct_max64(");
				put_checked_bx(g, &line, x->hi);
				ct_buf_puts(&line, ", INT64_MIN + 1) - 1");
			} else {
				put_checked_bx(g, &line, x->lo);
			}
			ct_buf_puts(&line, ", ");
			put_checked_bx(g, &line, x->hi);
			ct_buf_printf(&line, ", %lld, &ct_ok);", (long long)x->step);
			if (line.failed) {
				g->failed = true;
			} else if (!seen->s || !strstr(seen->s, line.s)) {
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", line.s);
				ct_buf_printf(seen, "%s\n", line.s);
			}
			ct_buf_free(&line);
		}
		put_loop_checks(g, seen, x->kids, x->nkids);
		put_loop_checks(g, seen, x->els, x->nels);
	}
}

static void gen_entry_checks(cg *g)
{
	g->entry_checks = needs_entry_checks(g);
	if (!g->entry_checks)
		return;
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int ct_ok = 1; /* the runtime params keep each loop and size within 64 bits */");
	ct_buf seen;
	ct_buf_init(&seen);
	put_loop_checks(g, &seen, g->t->roots, g->t->nroots);
	if (seen.failed)
		g->failed = true;
	if (seen.s) {
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "if (!ct_ok)");
		kg_stmt(g->kg, KG_OTHER, NULL, NULL,
			"\treturn 2; /* a loop overflows 64 bits with these runtime params: nothing was touched */");
	}
	ct_buf_free(&seen);
}

/* The derived values of the tree, once per run: const int64_t ct_dI. */
static void gen_derived(cg *g)
{
	const ct_looptree *t = g->t;
	for (int i = 0; i < t->nderived; i++) {
		ct_buf v;
		ct_buf_init(&v);
		if (t->derived && t->derived[i])
			cg_put_bx_bare(g, &v, t->derived[i]);
		else
			cg_bad(g, "derived value", i);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_d%d = %s;", i, v.s ? v.s : "0");
		if (v.failed)
			g->failed = true;
		ct_buf_free(&v);
	}
}

/* Declare the temps and cache buffers: small constant-sized ones on the
 * stack, the rest on the heap; all zeroed. */
/* A slot per plan item and role of storage a: 2 * item for the buffer of a
 * region of that cache, 2 * item + 1 for its double-buffer temp; -1 when
 * no region uses it. */
static int storage_item(const ct_looptree *t, int a)
{
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		if (rg->item < 0 || rg->item >= t->k->nplan)
			continue;
		if (!rg->elided && rg->buffer == a)
			return 2 * rg->item;
		if (rg->temp == a)
			return 2 * rg->item + 1;
	}
	return -1;
}

/* const size_t NAME_bytes: the bytes of storage a (elems elements,
 * printed as count), 64-byte rounded. A constant count is proven by check;
 * one of runtime params is computed checked: SIZE_MAX when it overflows. */
static void put_temp_bytes(cg *g, int a, const bx *elems, bool constant, const char *count, const char *what,
			   const char *per)
{
	const ir_array *arr = &g->arrays[a];
	const char *ty = ir_dtype_c(arr->type);
	if (constant || !g->entry_checks) {
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const size_t %s_bytes = ((size_t)(%s) * sizeof(%s) + 63) / 64 * 64; /* %s %s%s */",
			g->aname[a], count ? count : "1", ty, what, arr->name, per);
		return;
	}
	ct_buf c;
	ct_buf_init(&c);
	put_checked_bx(g, &c, elems);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const size_t %s_bytes = ct_csize(%s, sizeof(%s), &ct_ok); /* %s %s%s */",
		g->aname[a], c.s ? c.s : "1", ty, what, arr->name, per);
	if (c.failed)
		g->failed = true;
	ct_buf_free(&c);
}

/* Whether every element of kernel temp a that the kernel reads is written
 * first (dep_reads_written, isl, on the written order, which every legal
 * schedule and plan keeps for a write and its read): then its heap copy
 * needs no zeroing. *d is the order, computed on the first question
 * (*asked); unknown is false. */
static bool temp_written_first(cg *g, dep_info **d, bool *asked, int a)
{
	if (a >= g->k->narrays)
		return false; /* a cache buffer: not the kernel's */
	if (!*asked) {
		*asked = true;
		*d = dep_compute_order(g->t->k); /* the looptree's kernel: g->k, not const */
		ct_ctx_clear_error(g->k->ctx);
	}
	int r = *d ? dep_reads_written(*d, a) : -1;
	ct_ctx_clear_error(g->k->ctx);
	return r == 1;
}

static void gen_temps(cg *g, bool *heap)
{
	dep_info *order = NULL;
	bool order_asked = false;
	int64_t on_stack = 0, priv_on_stack = 0;
	int64_t *item_stack = calloc(2 * (size_t)g->k->nplan + 2, sizeof *item_stack);
	if (!item_stack) {
		g->failed = true;
		return;
	}
	ct_buf freed; /* `free(T); ` for each heap temp so far: undone on out of memory */
	ct_buf_init(&freed);
	for (int a = 0; a < g->narrays; a++) {
		const ir_array *arr = &g->arrays[a];
		heap[a] = false;
		if (arr->role != CT_TEMP)
			continue;
		const bx *elems = cg_layout_product(g, a, 0);
		if (!elems) {
			g->failed = true;
			break;
		}
		int64_t count = 0, esize = (int64_t)ct_dtype_size(arr->type);
		bool constant = bx_is_const(elems, &count);
		ct_buf n;
		ct_buf_init(&n);
		cg_bound(g, &n, elems);
		const char *ty = ir_dtype_c(arr->type);
		bool priv = g->t->priv && g->t->priv[a];
		int64_t bytes = (count > 0 ? count : 1) * esize, grow = 0;
		int item = priv ? storage_item(g->t, a) : -1;
		if (item >= 0 && bytes > item_stack[item])
			grow = bytes - item_stack[item];
		if (priv && constant && item >= 0 && count <= CG_PRIV_STACK_BYTES / esize &&
		    priv_on_stack + grow <= CG_PRIV_STACK_TOTAL_BYTES) {
			/* each thread's own array, declared in its region's block
			 * (declare_private_on_stack): the versions of one cache
			 * share the stack, so the total counts each cache's
			 * largest buffer */
			priv_on_stack += grow;
			item_stack[item] += grow;
			g->priv_stack[a] = true;
			g->priv_count[a] = count > 0 ? count : 1;
		} else if (priv) {
			/* one copy per thread, each 64-byte aligned; parallel loops
			 * point their threads at their own (gen_private_views); not
			 * zeroed, as above */
			heap[a] = true;
			put_temp_bytes(g, a, elems, constant, n.s, a < g->k->narrays ? "temp" : "cache buffer", ", per thread");
			/* SIZE_MAX: the size overflows; so does a product too large */
			kg_stmt(g->kg, KG_OTHER, NULL, NULL,
				"void *ct_priv_%d = %s_bytes < SIZE_MAX / (size_t)ct_nt ? aligned_alloc(64, %s_bytes ? %s_bytes * (size_t)ct_nt : 64) : NULL;",
				a, g->aname[a], g->aname[a], g->aname[a]);
			kg_block_open(g->kg, "if (!ct_priv_%d)", a);
			if (freed.s)
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", freed.s);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "return 1; /* out of memory: the outputs stay untouched */");
			kg_block_close(g->kg);
			ct_buf_printf(&freed, "%sfree(ct_priv_%d);", freed.s ? " " : "", a);
		} else if (constant && count <= CG_STACK_TEMP_BYTES / esize &&
		    on_stack + (count > 0 ? count : 1) * esize <= CG_STACK_TOTAL_BYTES) {
			on_stack += (count > 0 ? count : 1) * esize;
			char decl[64];
			snprintf(decl, sizeof decl, "_Alignas(64) %s", ty);
			char name[300];
			snprintf(name, sizeof name, "%s[%lld]", g->aname[a], (long long)(count > 0 ? count : 1));
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s %s = {0}; /* %s %s */", decl, name,
				a < g->k->narrays ? "temp" : "cache buffer", arr->name);
		} else {
			heap[a] = true;
			/* 64-byte aligned (a line, a vector), zeroed as the interpreter's temps */
			put_temp_bytes(g, a, elems, constant, n.s, a < g->k->narrays ? "temp" : "cache buffer", "");
			if (constant)
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s *%s = aligned_alloc(64, %s_bytes ? %s_bytes : 64);",
					ty, g->aname[a], g->aname[a], g->aname[a]);
			else /* SIZE_MAX: the size overflows */
				kg_stmt(g->kg, KG_OTHER, NULL, NULL,
					"%s *%s = %s_bytes == SIZE_MAX ? NULL : aligned_alloc(64, %s_bytes ? %s_bytes : 64);", ty,
					g->aname[a], g->aname[a], g->aname[a], g->aname[a]);
			if (!freed.s) {
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "if (!%s)", g->aname[a]);
				kg_stmt(g->kg, KG_OTHER, NULL, NULL,
					"\treturn 1; /* out of memory: the outputs stay untouched */");
			} else {
				kg_block_open(g->kg, "if (!%s)", g->aname[a]);
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", freed.s);
				kg_stmt(g->kg, KG_OTHER, NULL, NULL,
					"return 1; /* out of memory: the outputs stay untouched */");
				kg_block_close(g->kg);
			}
			if (!temp_written_first(g, &order, &order_asked, a))
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "memset(%s, 0, %s_bytes);", g->aname[a], g->aname[a]);
			else if (g->checked) /* poisoned (NaN, -1): a read before its write would show */
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "memset(%s, 0xff, %s_bytes); /* written before read */",
					g->aname[a], g->aname[a]);
			else /* trsm's 4-16 MiB of packed panels at 1024-2048: no pass over them */
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "/* %s: every element read is written first */",
					g->aname[a]);
			ct_buf_printf(&freed, "%sfree(%s);", freed.s ? " " : "", g->aname[a]);
		}
		if (n.failed)
			g->failed = true;
		ct_buf_free(&n);
	}
	if (freed.failed)
		g->failed = true;
	ct_buf_free(&freed);
	free(item_stack);
	dep_free(order);
}

void gen_threads_symbol(const ct_kernel *k, char *name, size_t cap)
{
	snprintf(name, cap, "cachet_%s_set_threads", k->name);
}

int gen_c_openmp(const ct_kernel *k)
{
	int need = 0;
	bool openmp = k->has_plan && ir_kernel_target(k)->parallel == IR_PAR_OPENMP;
	for (int i = 0; openmp && i < k->nplan; i++) {
		if (k->plan[i].kind == PL_PARALLELIZE)
			return 2;
		if (k->plan[i].kind == PL_VECTORIZE)
			need = 1;
	}
	return need;
}

void gen_symbol_names(const ct_kernel *k, char *fn, char *entry, size_t cap)
{
	snprintf(fn, cap, "cachet_%s", k->name);
	snprintf(entry, cap, "cachet_%s_entry", k->name);
}

static bool cg_init(cg *g, ct_looptree *t, bool dense_views)
{
	memset(g, 0, sizeof *g);
	g->dense_views = dense_views;
	g->t = t;
	g->k = t->k;
	g->cur_region = -1;
	const ct_kernel *k = t->k;
	/* a tree's storage and index tables; the kernel's without a tree */
	g->narrays = t->arrays ? t->narrays : k->narrays;
	g->arrays = t->arrays ? t->arrays : k->arrays;
	g->nindices = t->indices ? t->nindices : k->nindices;
	g->indices = t->indices ? t->indices : k->indices;
	ct_arena_init(&g->arena, k->ctx);
	g->pval = calloc((size_t)k->nparams + 1, sizeof *g->pval);
	g->aname = calloc((size_t)g->narrays + 1, sizeof *g->aname);
	g->iname = calloc((size_t)g->nindices + 1, sizeof *g->iname);
	g->pname = calloc((size_t)k->nparams + 1, sizeof *g->pname);
	g->lname = calloc((size_t)k->nlets + 1, sizeof *g->lname);
	g->open = calloc((size_t)g->nindices + 1, sizeof *g->open);
	g->fixed = calloc((size_t)g->nindices + 1, sizeof *g->fixed);
	g->fixed_val = calloc((size_t)g->nindices + 1, sizeof *g->fixed_val);
	g->priv_stack = calloc((size_t)g->narrays + 1, sizeof *g->priv_stack);
	g->priv_count = calloc((size_t)g->narrays + 1, sizeof *g->priv_count);
	if (!g->pval || !g->aname || !g->iname || !g->pname || !g->lname || !g->open || !g->fixed ||
	    !g->fixed_val || !g->priv_stack || !g->priv_count)
		return false;
	ir_param_values(k, g->pval);
	for (int i = 0; i < g->narrays; i++)
		g->aname[i] = c_name(g, g->arrays[i].name);
	for (int i = 0; i < g->nindices; i++)
		g->iname[i] = c_name(g, g->indices[i].name);
	for (int i = 0; i < k->nparams; i++)
		g->pname[i] = c_name(g, k->params[i].name);
	return !g->failed && cg_make_strides(g);
}

static void cg_free(cg *g)
{
	const ct_kernel *k = g->k;
	free(g->pval);
	free_names(g->aname, g->narrays);
	free_names(g->iname, g->nindices);
	free_names(g->pname, k ? k->nparams : 0);
	free(g->lname);
	free(g->open);
	free(g->fixed);
	free(g->fixed_val);
	free(g->priv_stack);
	free(g->priv_count);
	free_names(g->stride, g->narrays * IR_MAX_RANK);
	free_names(g->count, g->narrays);
	free_names(g->dstride, g->narrays * IR_MAX_RANK);
	if (g->sites && k)
		ct_free(k->ctx, g->sites);
	kg_free(g->kg);
	if (g->arena.ctx)
		ct_arena_free(&g->arena);
}

/* The uniform entry: unpack args[] and params[] and call the kernel; its
 * status is the kernel's. Checked code has the checked entry instead, whose
 * third argument is the violation record. */
static void gen_entry(cg *g, const char *fn, const char *entry)
{
	const ct_kernel *k = g->k;
	char proto[400], name[340];
	snprintf(name, sizeof name, g->checked ? "cachet_%s_checked_entry" : "%s", g->checked ? k->name : entry);
	if (g->checked)
		snprintf(proto, sizeof proto, "int %s(void *const *args, const int64_t *params, void *oob)", name);
	else
		snprintf(proto, sizeof proto, "int %s(void *const *args, const int64_t *params)", name);
	kg_func_declare(g->kg, name, KG_FUNC_KERNEL, proto, NULL, NULL);
	kg_func_begin(g->kg, name);
	ct_buf call;
	ct_buf_init(&call);
	ct_buf_printf(&call, "return %s(", fn);
	bool first = true;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		if (arr->role == CT_TEMP)
			continue;
		bool ro = ir_array_readonly(arr);
		ct_buf_printf(&call, "%s(%s%s *)args[%d]", first ? "" : ", ", ro ? "const " : "", ir_dtype_c(arr->type), a);
		first = false;
		int slot = view_slot(k, a);
		for (int d = 0; slot >= 0 && d <= arr->rank; d++)
			ct_buf_printf(&call, ", params[%d]", k->nparams + slot + d);
	}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime) {
			ct_buf_printf(&call, "%sparams[%d]", first ? "" : ", ", p);
			first = false;
		}
	if (g->checked)
		ct_buf_printf(&call, "%s(ct_oob *)oob", first ? "" : ", ");
	ct_buf_puts(&call, ");");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "(void)args;");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "(void)params;");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", call.s ? call.s : "");
	if (call.failed)
		g->failed = true;
	ct_buf_free(&call);
	kg_func_end(g->kg);
}

char *cg_take_text(cg *g, bool ok, size_t *len)
{
	size_t n = 0;
	char *text = kg_take(g->kg, &n), *result = NULL;
	if (text && ok) {
		result = malloc(n + 1);
		if (result) {
			memcpy(result, text, n);
			result[n] = 0;
			if (len)
				*len = n;
		}
	}
	if (text)
		ct_free(g->k->ctx, text);
	return result;
}

/* The site table of g as a malloc'd copy into *sites (NULL when empty). */
static bool take_sites(cg *g, gen_site **sites, int *nsites)
{
	*sites = NULL;
	*nsites = 0;
	if (g->nsites == 0)
		return true;
	*sites = malloc((size_t)g->nsites * sizeof **sites);
	if (!*sites)
		return false;
	memcpy(*sites, g->sites, (size_t)g->nsites * sizeof **sites);
	*nsites = g->nsites;
	return true;
}

char *gen_c(ct_looptree *t, size_t *len)
{
	return gen_c_opts(t, len, false, NULL, NULL);
}

char *gen_c_opts(ct_looptree *t, size_t *len, bool checked, gen_site **sites, int *nsites)
{
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	cg g;
	char *result = NULL;
	memset(&g, 0, sizeof g);
	g.k = k;
	bool *heap = calloc((size_t)(t->arrays ? t->narrays : k->narrays) + 1, sizeof *heap);
	if (!heap || !cg_init(&g, t, false) || (checked && !cg_make_counts(&g))) {
		cg_free(&g);
		free(heap);
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating C");
		return NULL;
	}
	g.checked = checked;
	g.kg = kg_new(ctx, 0);
	if (!g.kg)
		goto out;
	char fn[300], entry[300];
	gen_symbol_names(k, fn, entry, sizeof fn);
	kg_preamble(g.kg, "/* %s: generated by cachet %s from kernel '%s'%s. */", fn, CACHET_VERSION, k->name,
		    checked ? ", checked: every access is tested first" : "");
	kg_preamble(g.kg, "#include <math.h>");
	kg_preamble(g.kg, "#include <stdint.h>");
	kg_preamble(g.kg, "#include <stdlib.h>");
	kg_preamble(g.kg, "#include <string.h>");
	for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++)
		kg_preamble(g.kg, "%s", helpers[i]);
	for (size_t i = 0; checked && i < sizeof checked_helpers / sizeof checked_helpers[0]; i++)
		kg_preamble(g.kg, "%s", checked_helpers[i]);
	if (t->has_parallel)
		for (size_t i = 0; i < sizeof omp_helpers / sizeof omp_helpers[0]; i++)
			kg_preamble(g.kg, "%s", omp_helpers[i]);
	if (t->has_parallel && has_spmd(k))
		for (size_t i = 0; i < sizeof spmd_helpers / sizeof spmd_helpers[0]; i++)
			kg_preamble(g.kg, "%s", spmd_helpers[i]);
	if (needs_entry_checks(&g))
		for (size_t i = 0; i < sizeof entry_check_helpers / sizeof entry_check_helpers[0]; i++)
			kg_preamble(g.kg, "%s", entry_check_helpers[i]);

	ct_buf proto;
	ct_buf_init(&proto);
	ct_buf_printf(&proto, "int %s(", fn);
	put_params(&g, &proto, false);
	ct_buf_putc(&proto, ')');
	kg_func_declare(g.kg, fn, KG_FUNC_KERNEL, proto.s ? proto.s : "int f(void)", NULL, NULL);
	ct_buf_free(&proto);
	kg_func_begin(g.kg, fn);
	/* a per-rank kernel of distribute() takes every layout argument, used or not (an array read
	 * at one element, a contiguous stride that is a constant 1) */
	for (int a = 0; a < k->narrays; a++)
		for (int d = -1; cg_strided_arg(&g, a) && k->arrays[a].unit_minor && d < k->arrays[a].rank; d++)
			kg_stmt(g.kg, KG_OTHER, NULL, NULL, d < 0 ? "(void)ct_vo%d;" : "(void)ct_vs%d_%d;", a, d);
	if (t->has_parallel)
		kg_stmt(g.kg, KG_OTHER, NULL, NULL, "const int ct_nt = ct_max_threads(); /* threads of the parallel loops */");
	gen_derived(&g);
	gen_entry_checks(&g);
	gen_temps(&g, heap);
	cg_preduce_slabs(&g, heap);
	cg_nodes(&g, t->roots, t->nroots);
	cg_stream_finish(&g);
	cg_preduce_free(&g);
	for (int a = 0; a < g.narrays; a++)
		if (heap[a] && t->priv && t->priv[a])
			kg_stmt(g.kg, KG_OTHER, NULL, NULL, "free(ct_priv_%d);", a);
		else if (heap[a])
			kg_stmt(g.kg, KG_OTHER, NULL, NULL, "free(%s);", g.aname[a]);
	kg_stmt(g.kg, KG_OTHER, NULL, NULL, "return 0;");
	kg_func_end(g.kg);
	gen_entry(&g, fn, entry);
	if (t->has_parallel)
		gen_set_threads(&g);

	if (sites && !g.failed && !take_sites(&g, sites, nsites))
		g.failed = true;
	result = cg_take_text(&g, !g.failed, len);
	if (!result && sites) {
		free(*sites);
		*sites = NULL;
	}
out:
	if (!result && !g.reported && ct_ctx_last_status(ctx) == CT_OK)
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating C");
	cg_free(&g);
	free(heap);
	return result;
}

char *gen_c_prototype(const ct_kernel *k)
{
	cg g;
	memset(&g, 0, sizeof g);
	ct_looptree fake;
	memset(&fake, 0, sizeof fake);
	fake.k = (ct_kernel *)(uintptr_t)k;
	char *r = NULL;
	if (cg_init(&g, &fake, false)) {
		ct_buf b;
		ct_buf_init(&b);
		char fn[300], entry[300];
		gen_symbol_names(k, fn, entry, sizeof fn);
		ct_buf_printf(&b, "/* Returns 0, or 1 when the temps and cache buffers it allocates could\n"
				  " * not be allocated (or their size overflows for the runtime params),\n"
				  " * 2 when a loop would overflow 64 bits for the runtime params: then\n"
				  " * no output was touched. */\n"
				  "int %s(", fn);
		put_params(&g, &b, true);
		ct_buf_puts(&b, ");\n");
		ct_buf_printf(&b, "/* Uniform entry: args[i] = array i in declaration order (temps NULL),\n"
				  " * params[i] = param i in declaration order, then for each strided\n"
				  " * array its base offset and strides. Returns as %s. */\n"
				  "int %s(void *const *args, const int64_t *params);\n",
			      fn, entry);
		r = ct_buf_take(&b);
	}
	cg_free(&g);
	return r;
}

/* ------------------------------------------------------------ for other backends */

bool cg_setup(cg *g, ct_looptree *t, bool dense_views)
{
	return cg_init(g, t, dense_views);
}

void cg_teardown(cg *g)
{
	cg_free(g);
}

void cg_derived(cg *g)
{
	gen_derived(g);
}

/* ------------------------------------------------------------ checked mode */

/* Where site s lies, as " in statement at FILE:LINE" or " in a copy of
 * cache 'AA' (FILE:LINE)", into b (nothing when unknown). */
static void put_site_place(const ct_looptree *t, const gen_site *s, ct_buf *b)
{
	const ct_kernel *k = t->k;
	const char *file = k->file && *k->file ? k->file : "<kernel>";
	if (s->stmt && s->stmt->pos.line > 0) {
		ct_buf_printf(b, " in statement at %s:%d", file, s->stmt->pos.line);
		return;
	}
	if (s->region < 0 || s->region >= t->nregions)
		return;
	int item = t->regions[s->region].item;
	if (item < 0 || item >= k->nplan || !k->plan[item].name)
		return;
	ct_buf_printf(b, " in a copy of cache '%s'", k->plan[item].name);
	if (k->plan[item].pos.line > 0)
		ct_buf_printf(b, " (%s:%d)", file, k->plan[item].pos.line);
}

ct_status gen_oob_report(ct_looptree *t, const gen_oob *o)
{
	gen_site *sites = NULL;
	int n = 0;
	char *src = gen_c_opts(t, NULL, true, &sites, &n);
	free(src);
	ct_buf where;
	ct_buf_init(&where);
	const char *name = "?";
	if (src && o->site >= 0 && o->site < n && sites[o->site].storage >= 0 &&
	    sites[o->site].storage < t->narrays) {
		name = t->arrays[sites[o->site].storage].name;
		put_site_place(t, &sites[o->site], &where);
	}
	ct_status st = ct_error(t->k->ctx, CT_ERR_RUNTIME,
	                        "out-of-bounds access to array '%s' (element %lld of %lld)%s", name,
	                        (long long)o->elem, (long long)o->count, where.s ? where.s : "");
	ct_buf_free(&where);
	free(sites);
	return st;
}

ct_status gen_status_error(ct_kernel *k, int rc)
{
	if (rc == 2)
		return ct_error(k->ctx, CT_ERR_LIMIT,
		                "a loop of the kernel overflows 64 bits with these runtime params (nothing was run)");
	return ct_error(k->ctx, CT_ERR_NOMEM, "the kernel could not allocate its temps and cache buffers");
}

ct_status gen_oob_error(ct_kernel *k, const gen_oob *o)
{
	/* the same tree and options give the same code, so the same sites */
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return ct_ctx_last_status(k->ctx);
	ct_status st = gen_oob_report(t, o);
	ct_looptree_free(t);
	return st;
}
