/* corecost.c: the tuner's core cost of a planned loop tree: register tiles, vector loads and FMAs in cycles (docs/TUNE.md). */
#include "tune/corecost.h"

#include <math.h>
#include <string.h>

/*
 * The cache model counts the loop tree's accesses; the C backend keeps a
 * register tile's left-hand side in vector registers (src/gen/rtile.c), so
 * what decides the speed of a compute-bound kernel is invisible to it: how
 * many vector FMAs and operand loads one iteration of the tile's loop
 * issues, whether enough independent accumulators hide the FMA latency, and
 * how often the tile is loaded and stored. This file counts those issue
 * slots on the same tree the model sees, with the pattern rtile.c matches:
 *
 *   for r (not unrolled, vectorized or parallel)
 *     for u ... (unrolled, constant trips)
 *       for v (vectorized, constant trip, step 1)
 *         L[..] op= e     (op += or -=, L does not move with r)
 *
 * Everything else is counted per statement execution: its accesses as load
 * or store slots and its arithmetic as FMA-unit slots, divided by the lanes
 * of its type that an enclosing vectorized loop fills.
 *
 * A loop with affine bounds (issue #31: `k: 0 .. i+1`) has a trip count
 * that changes with the loops around it, so the walk enumerates the values
 * of each loop whose variable some affine bound inside it uses (at most
 * CC_ENUM_BUDGET iterations a tree; past it, such a loop takes its middle
 * value, which gives an inner bound linear in it its mean trip count), and
 * multiplies the others' kids by their trip counts as for a rectangular nest.
 */

#define CC_MAX_U 8
#define CC_ENUM_BUDGET ((int64_t)1 << 24)

typedef struct cc {
	const ct_looptree *t;
	const tune_machine *m;
	int64_t *pv;
	double cycles;
	tune_core_cost *out;
	int64_t *var;              /* [t->nindices] values of the enumerated loops' variables */
	const lt_node **enumerated; /* the loops whose variable an affine bound inside them uses */
	int nenum;
	int64_t budget;            /* enumerated iterations left */
	double saved;              /* cycles the threads of parallel bands take off one thread's */
	bool in_parallel;          /* the walk is inside a parallel band */
} cc;

/* The value of affine bound term f at the enumerated variables (AFF_LOOP: a loop variable,
 * AFF_INDEX: the sum of an original index's chain). */
static int64_t term_value(const cc *c, aff f, bool *ok)
{
	const ct_looptree *t = c->t;
	int64_t v = f.c;
	for (int i = 0; i < f.n && *ok; i++) {
		const aff_term *tm = &f.t[i];
		int64_t x = 0, q;
		if (tm->kind == AFF_PARAM)
			x = c->pv[tm->id];
		else if (tm->kind == AFF_LOOP && tm->id >= 0 && tm->id < t->nindices)
			x = c->var[tm->id];
		else if (tm->kind == AFF_INDEX && tm->id >= 0 && tm->id < t->k->nindices && t->chain && t->chain[tm->id])
			for (int m = 0; m < t->chain_len[tm->id]; m++)
				x += c->var[t->chain[tm->id][m]];
		else
			*ok = false;
		*ok = *ok && ct_mul_ok(tm->coef, x, &q) && ct_add_ok(v, q, &v);
	}
	return v;
}

/* Loop x's range [*lo, *hi) now: its bounds over params, and for an affine loop its terms at
 * the enumerated variables. */
static bool range_of(const cc *c, const lt_node *x, int64_t *lo, int64_t *hi)
{
	bool ok = true;
	*lo = bx_eval(x->lo, c->pv, &ok);
	*hi = bx_eval(x->hi, c->pv, &ok);
	for (int j = 0; j < x->ndlo && ok; j++) {
		int64_t v = term_value(c, x->dlo[j], &ok);
		*lo = v > *lo ? v : *lo;
	}
	for (int j = 0; j < x->ndhi && ok; j++) {
		int64_t v = term_value(c, x->dhi[j], &ok);
		*hi = v < *hi ? v : *hi;
	}
	return ok;
}

static int64_t trip_of(const cc *c, const lt_node *x)
{
	int64_t lo, hi;
	if (!range_of(c, x, &lo, &hi) || hi <= lo || x->step < 1)
		return 0;
	return ct_trip_count(lo, hi, x->step);
}

/* Whether term f reads tree loop variable v. */
static bool term_reads(const ct_looptree *t, aff f, int v)
{
	bool bad = false;
	return lt_var_coef(t, f, v, &bad) != 0 || bad;
}

/* Whether an affine loop at or under x (x itself excluded when `self` is false) has a bound
 * term that reads loop variable v. */
static bool bound_reads(const ct_looptree *t, const lt_node *x, int v, bool self)
{
	if (self && x->kind == LT_LOOP)
		for (int j = 0; j < x->ndlo + x->ndhi; j++)
			if (term_reads(t, j < x->ndlo ? x->dlo[j] : x->dhi[j - x->ndlo], v))
				return true;
	for (int i = 0; i < x->nkids + x->nels; i++)
		if (bound_reads(t, i < x->nkids ? x->kids[i] : x->els[i - x->nkids], v, true))
			return true;
	return false;
}

/* List the loops at or under x whose variable an affine bound inside them reads (at most cap:
 * the tree's loops). */
static void find_enumerated(cc *c, const lt_node *x, int cap)
{
	if (x->kind == LT_LOOP && c->nenum < cap && lt_affine_below(x) && bound_reads(c->t, x, x->index, false))
		c->enumerated[c->nenum++] = x;
	for (int i = 0; i < x->nkids + x->nels; i++)
		find_enumerated(c, i < x->nkids ? x->kids[i] : x->els[i - x->nkids], cap);
}

/* Loops at or under x. */
static int count_loops(const lt_node *x)
{
	int n = x->kind == LT_LOOP;
	for (int i = 0; i < x->nkids + x->nels; i++)
		n += count_loops(i < x->nkids ? x->kids[i] : x->els[i - x->nkids]);
	return n;
}

static bool is_enumerated(const cc *c, const lt_node *x)
{
	for (int i = 0; i < c->nenum; i++)
		if (c->enumerated[i] == x)
			return true;
	return false;
}

/* Whether expression e moves with tree loop variable x. */
static bool moves(const ct_looptree *t, const ir_expr *e, int x)
{
	bool bad = false;
	if (e->kind == EX_ACCESS && e->id >= 0 && e->id < t->narrays)
		for (int d = 0; d < t->arrays[e->id].rank; d++)
			if (lt_var_coef(t, e->sub[d], x, &bad) != 0 || bad)
				return true;
	if (e->kind == EX_INDEX && e->id >= 0 && e->id < t->k->nindices && t->chain && t->chain[e->id])
		for (int m = 0; m < t->chain_len[e->id]; m++)
			if (t->chain[e->id][m] == x)
				return true;
	for (int i = 0; i < e->nargs; i++)
		if (moves(t, e->args[i], x))
			return true;
	return false;
}

/* Accesses (reads) and arithmetic operations of e. */
static void count_expr(const ir_expr *e, int *reads, int *ops)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS)
		(*reads)++;
	else if (e->kind == EX_NEG || e->kind == EX_ADD || e->kind == EX_SUB || e->kind == EX_MUL ||
	         e->kind == EX_DIV || e->kind == EX_CALL)
		(*ops)++;
	for (int i = 0; i < e->nargs; i++)
		count_expr(e->args[i], reads, ops);
}

/* Vector instructions of one element update `L op= e`: e's operations plus
 * the accumulation, a product feeding it contracted into one FMA. */
static int update_instructions(const ir_node *s)
{
	int reads = 0, ops = 0;
	count_expr(s->rhs, &reads, &ops);
	int n = ops + (s->op != AS_SET);
	if (s->op != AS_SET && s->rhs && s->rhs->kind == EX_MUL)
		n--;
	return n < 1 ? 1 : n;
}

/* Lanes of the target's widest vector for elements of `bytes` bytes. */
static int64_t max_lanes(const tune_machine *m, size_t bytes)
{
	int64_t l = m->vector_bytes / (int64_t)(bytes ? bytes : 4);
	return l < 1 ? 1 : l;
}

/* Vector registers (chunks) rtile.c cuts `trip` lanes into: full vectors,
 * then one masked vector on 64-byte targets or power-of-two pieces. */
static int64_t chunks_of(int64_t trip, int64_t lanes, int vector_bytes)
{
	int64_t n = trip / lanes, left = trip % lanes;
	if (left && vector_bytes == 64)
		return n + 1;
	for (; left; left &= left - 1)
		n++;
	return n;
}

/* The register tile rooted at loop r, when r matches rtile.c's pattern:
 * cycles of the whole of r (all its iterations, the tile's load and store,
 * the chains' drain) and the flops counted as FMA pairs, for one execution
 * of r. */
static bool tile_cycles(cc *c, const lt_node *r, double *cycles, double *flops)
{
	const ct_looptree *t = c->t;
	const tune_machine *m = c->m;
	if (r->kind != LT_LOOP || r->unroll || r->vector || r->parallel || r->nkids != 1)
		return false;
	const lt_node *u[CC_MAX_U], *y = r->kids[0];
	int64_t utrip[CC_MAX_U];
	int nu = 0;
	while (y->kind == LT_LOOP && y->unroll && y->nkids == 1 && nu < CC_MAX_U) {
		utrip[nu] = trip_of(c, y);
		if (utrip[nu] == 0)
			return false;
		u[nu++] = y;
		y = y->kids[0];
	}
	if (y->kind != LT_LOOP || !y->vector || y->step != 1 || y->nkids != 1)
		return false;
	const lt_node *v = y, *st = y->kids[0];
	int64_t vtrip = trip_of(c, v);
	if (vtrip == 0 || st->kind != LT_STMT || !st->stmt || !st->stmt->lhs ||
	    st->stmt->lhs->kind != EX_ACCESS || (st->stmt->op != AS_ADD && st->stmt->op != AS_SUB))
		return false;
	const ir_node *s = st->stmt;
	int lhs = s->lhs->id;
	if (lhs < 0 || lhs >= t->narrays || (t->arrays[lhs].type != CT_F32 && t->arrays[lhs].type != CT_F64))
		return false;
	if (moves(t, s->lhs, r->index))
		return false;
	int64_t lanes = max_lanes(m, ct_dtype_size(t->arrays[lhs].type));
	int64_t nch = chunks_of(vtrip, lanes, m->vector_bytes);
	int64_t rows = 1;
	for (int i = 0; i < nu; i++)
		rows *= utrip[i];
	int64_t nacc = rows * nch;
	if (nacc > 64) /* rtile.c emits loops then */
		return false;
	/* operands fetched once per iteration of r: each access of e once per
	 * combination of the unrolled loops and chunks it moves with */
	int64_t loads = 0;
	const ir_expr *stack[64];
	int sp = 0;
	stack[sp++] = s->rhs;
	while (sp > 0) {
		const ir_expr *e = stack[--sp];
		if (!e)
			continue;
		if (e->kind == EX_ACCESS) {
			int64_t n = moves(t, e, v->index) ? nch : 1;
			for (int i = 0; i < nu; i++)
				if (moves(t, e, u[i]->index))
					n *= utrip[i];
			loads += n;
			continue;
		}
		for (int i = 0; i < e->nargs && sp < 64; i++)
			stack[sp++] = e->args[i];
	}
	int64_t rtrip = trip_of(c, r);
	double fma = (double)(nacc * update_instructions(s)) / m->fma_units;
	double ld = (double)loads / m->load_ports;
	/* every accumulator is one dependent chain: an iteration lasts at least
	 * the FMA latency */
	double iter = fma > ld ? fma : ld;
	if (iter < m->fma_latency)
		iter = m->fma_latency;
	/* more live vectors than registers: the excess is spilled and reloaded */
	int64_t live = nacc + loads;
	if (live > m->vector_registers)
		iter += 2.0 * (double)(live - m->vector_registers) / m->load_ports;
	/* the tile: loaded before r, stored after it, once the chains drain */
	double moves_cy = (double)(2 * nacc) / m->load_ports + m->fma_latency;
	*cycles = (double)rtrip * iter + moves_cy;
	*flops = 2.0 * (double)(rows * vtrip * rtrip) * (double)update_instructions(s);
	return true;
}

/* Cycles of one execution of statement or let x, inside a vectorized loop
 * of `vtrip` iterations (0: none): divided by the lanes of the statement's
 * type (its left-hand side's; f32 for a let) that the loop fills. */
static double stmt_cycles(const cc *c, const lt_node *x, int64_t vtrip)
{
	const ir_node *s = x->stmt;
	if (!s)
		return 0;
	size_t bytes = 4;
	if (x->kind == LT_STMT && s->lhs && s->lhs->id >= 0 && s->lhs->id < c->t->narrays)
		bytes = ct_dtype_size(c->t->arrays[s->lhs->id].type);
	int64_t lanes = 1;
	if (vtrip > 0) {
		int64_t most = max_lanes(c->m, bytes);
		lanes = vtrip < most ? vtrip : most;
	}
	int reads = 0, ops = 0;
	count_expr(s->rhs, &reads, &ops);
	int writes = 0;
	if (x->kind == LT_STMT && s->lhs) {
		writes = 1;
		reads += s->op != AS_SET;
	}
	double mem = (double)(reads + writes) / c->m->load_ports;
	double alu = (double)update_instructions(s) / c->m->fma_units;
	if (x->kind == LT_LET || !s->lhs)
		alu = (double)ops / c->m->fma_units;
	double cy = mem > alu ? mem : alu;
	return cy / (double)lanes;
}

/* The share of parallel band x's iterations the slowest of the machine's threads runs:
 * ceil(P / T) / P for a band of P iterations (x and the collapse - 1 loops nested in it,
 * at their middle values where affine) on T threads. 1 where P cannot be counted. */
static double band_share(const cc *c, const lt_node *x)
{
	double p = 1;
	int n = x->collapse > 0 ? x->collapse : 1;
	for (int d = 0; x && x->kind == LT_LOOP && d < n; d++) {
		p *= (double)trip_of(c, x);
		x = x->nkids == 1 ? x->kids[0] : NULL;
	}
	int t = c->m->threads > 0 ? c->m->threads : 1;
	return p >= 1 ? ceil(p / t) / p : 1;
}

/* Add the cycles of x, run `times` times, inside a vectorized loop of
 * vtrip iterations (0: none). */
static void walk(cc *c, const lt_node *x, double times, int64_t vtrip)
{
	switch (x->kind) {
	case LT_LOOP: {
		double cy, fl;
		if (x->parallel && !c->in_parallel) {
			/* the band's cycles: what the slowest thread runs, and what one thread would */
			double before = c->cycles;
			c->in_parallel = true;
			walk(c, x, times, vtrip);
			c->in_parallel = false;
			double all = c->cycles - before, share = band_share(c, x);
			c->saved += all * (1 - share);
			c->cycles = before + all * share;
			return;
		}
		if (tile_cycles(c, x, &cy, &fl)) {
			c->cycles += times * cy;
			c->out->tiles++;
			c->out->tile_flops += times * fl;
			return;
		}
		int64_t trip = trip_of(c, x), lo, hi;
		int64_t v = x->vector ? (trip > 0 ? trip : 1) : vtrip;
		if (trip > 0 && is_enumerated(c, x) && range_of(c, x, &lo, &hi)) {
			if (c->budget >= trip) {
				/* one value at a time: the affine bounds inside read it */
				c->budget -= trip;
				for (int64_t it = 0; it < trip; it++) {
					c->var[x->index] = lo + it * x->step;
					for (int i = 0; i < x->nkids; i++)
						walk(c, x->kids[i], times, v);
				}
				return;
			}
			c->var[x->index] = lo + (trip - 1) / 2 * x->step;
		}
		for (int i = 0; i < x->nkids; i++)
			walk(c, x->kids[i], times * (double)trip, v);
		return;
	}
	case LT_STMT:
	case LT_LET: c->cycles += times * stmt_cycles(c, x, vtrip); return;
	case LT_IF:
	case LT_CACHE:
		for (int i = 0; i < x->nkids; i++)
			walk(c, x->kids[i], times, vtrip);
		for (int i = 0; i < x->nels; i++)
			walk(c, x->els[i], times, vtrip);
		return;
	}
}

void tune_machine_init(ct_ctx *ctx, tune_machine *m)
{
	ct_probe_info pi;
	memset(&pi, 0, sizeof pi);
	/* the clock comes from the FMA microbenchmark (~0.3 s, once per ctx) */
	if (ct_probe_run(ctx, CT_PROBE_MEASURE_FLOPS, &pi) != CT_OK)
		memset(&pi, 0, sizeof pi);
	memset(m, 0, sizeof *m);
	m->ghz = pi.ghz > 0 ? pi.ghz : 3.0;
	m->fma_units = pi.fma_units > 0 ? pi.fma_units : 1;
	m->fma_latency = pi.fma_latency > 0 ? pi.fma_latency : 4;
	m->vector_bytes = pi.vector_bytes >= 8 ? pi.vector_bytes : 16;
	m->vector_registers = pi.vector_registers > 0 ? pi.vector_registers : 16;
	/* not probed: a core that issues n vector FMAs per cycle also issues n
	 * vector loads (true of the x86 and Arm cores of the last decade) */
	m->load_ports = m->fma_units;
	m->threads = ct_ctx_threads(ctx, 0);
}

ct_status tune_core_cycles(const ct_looptree *t, const tune_machine *m, tune_core_cost *out)
{
	memset(out, 0, sizeof *out);
	ct_ctx *ctx = t->k->ctx;
	int64_t *pv = ct_alloc(ctx, sizeof *pv * ((size_t)t->k->nparams + (size_t)t->nderived + 1));
	if (!pv)
		return CT_ERR_NOMEM;
	if (!lt_param_values(t, pv)) {
		ct_free(ctx, pv);
		return ct_error(ctx, CT_ERR_LIMIT, "overflow in the sizes of kernel '%s'", t->k->name);
	}
	cc c = {t, m, pv, 0, out, NULL, NULL, 0, CC_ENUM_BUDGET, 0, false};
	int cap = 0;
	for (int i = 0; i < t->nroots; i++)
		cap += count_loops(t->roots[i]);
	c.var = ct_alloc(ctx, sizeof *c.var * ((size_t)t->nindices + 1));
	c.enumerated = ct_alloc(ctx, sizeof *c.enumerated * ((size_t)cap + 1));
	if (!c.var || !c.enumerated) {
		ct_free(ctx, pv);
		ct_free(ctx, c.var);
		ct_free(ctx, (void *)c.enumerated);
		return CT_ERR_NOMEM;
	}
	memset(c.var, 0, sizeof *c.var * ((size_t)t->nindices + 1));
	for (int i = 0; i < t->nroots; i++)
		find_enumerated(&c, t->roots[i], cap);
	for (int i = 0; i < t->nroots; i++)
		walk(&c, t->roots[i], 1.0, 0);
	out->cycles = c.cycles;
	out->ns = c.cycles / m->ghz;
	out->share = c.cycles + c.saved > 0 ? c.cycles / (c.cycles + c.saved) : 1;
	ct_free(ctx, pv);
	ct_free(ctx, c.var);
	ct_free(ctx, (void *)c.enumerated);
	return CT_OK;
}
