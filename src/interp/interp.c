/* interp.c: reference interpreter and address-trace walker over a loop tree compiled to code: running
 * the program; compiling it is in interp_expr.c (statements) and interp_tree.c (the tree). */
#include "interp/interp_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/*
 * How it runs fast: every array offset, index value and `if` difference is
 * an affine function of the loop variables on the path to its statement. It
 * lives in an "affine register" that the enclosing loops keep up to date:
 * a loop with variable v owns updates off[dst] = off[src] + coef * v, one
 * per distinct (src, coef) among the functions below it that depend on v.
 * Functions that differ by a constant share registers (the constant is the
 * access's displacement), so a 5-point stencil keeps one register per loop.
 * Statements ip_compile to a small typed register bytecode; the trace walker
 * uses the same loops and registers and just lists each statement's
 * accesses. A static range analysis of each register over the loop box
 * proves most accesses in bounds and guarantees the register arithmetic
 * never overflows; the rest are checked when they run.
 */

/* ------------------------------------------------------------ execution */

typedef struct ip_state {
	ip_val *r;
	int64_t *o;
	void **base;
	const int64_t *nelem;
	const ct_kernel *k;
	const ir_array *arrays; /* the tree's storage, for messages */
	bool trace;
	interp_access *acc;
	int nacc;
	interp_batch_fn fn;
	void *ud;
	ct_status st;
	ct_ctx *report; /* the ctx whose progress callback hears of the roots' loops (NULL: none) */
	int nthreads;   /* interp_trace_threads: the threads (0 or 1: one) */
	int thread;     /* the thread running now */
	bool in_par;    /* inside a parallel loop the walk splits */
} ip_state;

static inline int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t wsub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t wmul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}
static inline int64_t wneg(int64_t a)
{
	return (int64_t)((uint64_t)0 - (uint64_t)a);
}

/* Integer division truncates; x/0 is 0 and INT64_MIN/-1 wraps. */
static inline int64_t idiv(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	if (b == -1)
		return wneg(a);
	return a / b;
}

#define ELT(T, arr, off) (((T *)base[(arr)])[(off)])

/* Run one statement's (or condition's) code. */
static inline void run_code(ip_val *restrict r, const int64_t *restrict o, void *const *base,
                            const ip_insn *ip)
{
	for (;; ip++) {
		switch (ip->op) {
		case OP_END:
			return;
		case OP_LD + CT_F32:
			r[ip->dst].f = ELT(float, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_LD + CT_F64:
			r[ip->dst].d = ELT(double, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_LD + CT_I32:
			r[ip->dst].i = ELT(int32_t, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_LD + CT_I64:
			r[ip->dst].i = ELT(int64_t, ip->a, o[ip->b] + ip->disp);
			break;
		case OP_MAC_F32: {
			float *p = &ELT(float, ip->a, o[ip->b] + ip->disp);
			*p = *p + r[ip->c].f * r[ip->dst].f;
			return;
		}
		case OP_MAC_F64: {
			double *p = &ELT(double, ip->a, o[ip->b] + ip->disp);
			*p = *p + r[ip->c].d * r[ip->dst].d;
			return;
		}
/* A store of value V into a T element, plain or op= (ADD, SUB, MUL): floats
 * with C's operators, integers wrapping (wadd, wsub, wmul). */
#define ST(T, t, V, ADD, SUB, MUL)                                                                 \
	case OP_ST + 4 * t + AS_SET:                                                               \
		ELT(T, ip->a, o[ip->b] + ip->disp) = (T)(V);                                       \
		break;                                                                             \
	case OP_ST + 4 * t + AS_ADD: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = (T)ADD(*p, V);                                                                \
		break;                                                                             \
	}                                                                                          \
	case OP_ST + 4 * t + AS_SUB: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = (T)SUB(*p, V);                                                                \
		break;                                                                             \
	}                                                                                          \
	case OP_ST + 4 * t + AS_MUL: {                                                             \
		T *p = &ELT(T, ip->a, o[ip->b] + ip->disp);                                        \
		*p = (T)MUL(*p, V);                                                                \
		break;                                                                             \
	}
#define FADD(x, y) ((x) + (y))
#define FSUB(x, y) ((x) - (y))
#define FMUL(x, y) ((x) * (y))
			ST(float, CT_F32, r[ip->c].f, FADD, FSUB, FMUL)
			ST(double, CT_F64, r[ip->c].d, FADD, FSUB, FMUL)
			ST(int32_t, CT_I32, r[ip->c].i, wadd, wsub, wmul)
			ST(int64_t, CT_I64, r[ip->c].i, wadd, wsub, wmul)
#undef FADD
#undef FSUB
#undef FMUL
#undef ST
		case OP_IX + R_I:
			r[ip->dst].i = o[ip->a] + ip->disp;
			break;
		case OP_IX + R_F:
			r[ip->dst].f = (float)(o[ip->a] + ip->disp);
			break;
		case OP_IX + R_D:
			r[ip->dst].d = (double)(o[ip->a] + ip->disp);
			break;
		case OP_ACMP + CMP_LT:
			r[ip->dst].i = o[ip->a] + ip->disp < 0;
			break;
		case OP_ACMP + CMP_LE:
			r[ip->dst].i = o[ip->a] + ip->disp <= 0;
			break;
		case OP_ACMP + CMP_GT:
			r[ip->dst].i = o[ip->a] + ip->disp > 0;
			break;
		case OP_ACMP + CMP_GE:
			r[ip->dst].i = o[ip->a] + ip->disp >= 0;
			break;
		case OP_ACMP + CMP_EQ:
			r[ip->dst].i = o[ip->a] + ip->disp == 0;
			break;
		case OP_ACMP + CMP_NE:
			r[ip->dst].i = o[ip->a] + ip->disp != 0;
			break;
		case OP_MOV:
			r[ip->dst] = r[ip->a];
			break;
		case OP_I2F:
			r[ip->dst].f = (float)r[ip->a].i;
			break;
		case OP_I2D:
			r[ip->dst].d = (double)r[ip->a].i;
			break;
		case OP_F2D:
			r[ip->dst].d = (double)r[ip->a].f;
			break;
		case OP_D2F:
			r[ip->dst].f = (float)r[ip->a].d;
			break;
		case OP_F2I:
			r[ip->dst].i = f2i((double)r[ip->a].f);
			break;
		case OP_D2I:
			r[ip->dst].i = f2i(r[ip->a].d);
			break;
		case OP_AND:
			r[ip->dst].i = (r[ip->a].i != 0) & (r[ip->b].i != 0);
			break;
		case OP_OR:
			r[ip->dst].i = (r[ip->a].i != 0) | (r[ip->b].i != 0);
			break;
		case OP_NOT:
			r[ip->dst].i = r[ip->a].i == 0;
			break;
		/* integers: wrapping int64 arithmetic */
		case AR(R_I, A_ADD):
			r[ip->dst].i = wadd(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_SUB):
			r[ip->dst].i = wsub(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_MUL):
			r[ip->dst].i = wmul(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_DIV):
			r[ip->dst].i = idiv(r[ip->a].i, r[ip->b].i);
			break;
		case AR(R_I, A_NEG):
			r[ip->dst].i = wneg(r[ip->a].i);
			break;
		case AR(R_I, A_MIN):
			r[ip->dst].i = r[ip->a].i < r[ip->b].i ? r[ip->a].i : r[ip->b].i;
			break;
		case AR(R_I, A_MAX):
			r[ip->dst].i = r[ip->a].i > r[ip->b].i ? r[ip->a].i : r[ip->b].i;
			break;
		case AR(R_I, A_ABS):
			r[ip->dst].i = r[ip->a].i < 0 ? wneg(r[ip->a].i) : r[ip->a].i;
			break;
		case AR(R_I, A_SQRT):
			r[ip->dst].i = f2i(sqrt((double)r[ip->a].i));
			break;
		case AR(R_I, A_EXP):
			r[ip->dst].i = f2i(exp((double)r[ip->a].i));
			break;
		case AR(R_I, A_FMA):
			r[ip->dst].i = wadd(wmul(r[ip->a].i, r[ip->b].i), r[ip->c].i);
			break;
		case AR(R_I, A_SEL):
			r[ip->dst].i = r[ip->a].i ? r[ip->b].i : r[ip->c].i;
			break;
		case AR(R_I, A_LT):
			r[ip->dst].i = r[ip->a].i < r[ip->b].i;
			break;
		case AR(R_I, A_LE):
			r[ip->dst].i = r[ip->a].i <= r[ip->b].i;
			break;
		case AR(R_I, A_GT):
			r[ip->dst].i = r[ip->a].i > r[ip->b].i;
			break;
		case AR(R_I, A_GE):
			r[ip->dst].i = r[ip->a].i >= r[ip->b].i;
			break;
		case AR(R_I, A_EQ):
			r[ip->dst].i = r[ip->a].i == r[ip->b].i;
			break;
		case AR(R_I, A_NE):
			r[ip->dst].i = r[ip->a].i != r[ip->b].i;
			break;
		case AR(R_I, A_NZ):
			r[ip->dst].i = r[ip->a].i != 0;
			break;
#define AR_FLOAT(R, fld, SQRT, EXP, ABS, FMA)                                                      \
	case AR(R, A_ADD):                                                                         \
		r[ip->dst].fld = r[ip->a].fld + r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_SUB):                                                                         \
		r[ip->dst].fld = r[ip->a].fld - r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_MUL):                                                                         \
		r[ip->dst].fld = r[ip->a].fld * r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_DIV):                                                                         \
		r[ip->dst].fld = r[ip->a].fld / r[ip->b].fld;                                      \
		break;                                                                             \
	case AR(R, A_NEG):                                                                         \
		r[ip->dst].fld = -r[ip->a].fld;                                                    \
		break;                                                                             \
	case AR(R, A_MIN):                                                                         \
		r[ip->dst].fld = r[ip->a].fld < r[ip->b].fld ? r[ip->a].fld : r[ip->b].fld;        \
		break;                                                                             \
	case AR(R, A_MAX):                                                                         \
		r[ip->dst].fld = r[ip->a].fld > r[ip->b].fld ? r[ip->a].fld : r[ip->b].fld;        \
		break;                                                                             \
	case AR(R, A_ABS):                                                                         \
		r[ip->dst].fld = ABS(r[ip->a].fld);                                                \
		break;                                                                             \
	case AR(R, A_SQRT):                                                                        \
		r[ip->dst].fld = SQRT(r[ip->a].fld);                                               \
		break;                                                                             \
	case AR(R, A_EXP):                                                                         \
		r[ip->dst].fld = EXP(r[ip->a].fld);                                                \
		break;                                                                             \
	case AR(R, A_FMA):                                                                         \
		r[ip->dst].fld = FMA(r[ip->a].fld, r[ip->b].fld, r[ip->c].fld);                    \
		break;                                                                             \
	case AR(R, A_SEL):                                                                         \
		r[ip->dst].fld = r[ip->a].i ? r[ip->b].fld : r[ip->c].fld;                         \
		break;                                                                             \
	case AR(R, A_LT):                                                                          \
		r[ip->dst].i = r[ip->a].fld < r[ip->b].fld;                                        \
		break;                                                                             \
	case AR(R, A_LE):                                                                          \
		r[ip->dst].i = r[ip->a].fld <= r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_GT):                                                                          \
		r[ip->dst].i = r[ip->a].fld > r[ip->b].fld;                                        \
		break;                                                                             \
	case AR(R, A_GE):                                                                          \
		r[ip->dst].i = r[ip->a].fld >= r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_EQ):                                                                          \
		r[ip->dst].i = r[ip->a].fld == r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_NE):                                                                          \
		r[ip->dst].i = r[ip->a].fld != r[ip->b].fld;                                       \
		break;                                                                             \
	case AR(R, A_NZ):                                                                          \
		r[ip->dst].i = r[ip->a].fld != 0;                                                  \
		break;
			AR_FLOAT(R_F, f, sqrtf, expf, fabsf, fmaf)
			AR_FLOAT(R_D, d, sqrt, exp, fabs, fma)
#undef AR_FLOAT
		default:
			return;
		}
	}
}

static bool exec_chk(ip_state *s, const ip_node *x)
{
	for (int i = 0; i < x->nchk; i++) {
		const ip_chk *c = &x->chk[i];
		int64_t off = s->o[c->reg] + c->disp;
		if (off < 0 || off >= s->nelem[c->array]) {
			s->st =
			    ct_error(s->k->ctx, CT_ERR_RUNTIME,
			             "out-of-bounds access to array '%s' (element %lld of %lld)",
			             s->arrays[c->array].name, (long long)off,
			             (long long)s->nelem[c->array]);
			return false;
		}
	}
	return true;
}

static bool flush(ip_state *s)
{
	if (s->nacc == 0)
		return true;
	ct_status st = s->fn(s->ud, s->acc, s->nacc);
	s->nacc = 0;
	if (st != CT_OK) {
		s->st = st;
		return false;
	}
	return true;
}

static inline bool emit_trace(ip_state *s, const ip_node *x)
{
	const ip_tr *tr = x->tr;
	int n = x->ntr;
	if (s->nacc + n > INTERP_BATCH) {
		if (!flush(s))
			return false;
		/* a statement with more accesses than a batch goes in pieces */
		while (n > INTERP_BATCH) {
			for (int i = 0; i < INTERP_BATCH; i++, tr++) {
				interp_access *a = &s->acc[i];
				a->offset = s->o[tr->reg] + tr->disp;
				a->buffer = tr->buffer;
				a->ref = tr->ref;
				a->is_write = tr->is_write;
				a->thread = s->thread;
			}
			s->nacc = INTERP_BATCH;
			n -= INTERP_BATCH;
			if (!flush(s))
				return false;
		}
	}
	interp_access *a = s->acc + s->nacc;
	const int64_t *o = s->o;
	for (int i = 0; i < n; i++) {
		a[i].offset = o[tr[i].reg] + tr[i].disp;
		a[i].buffer = tr[i].buffer;
		a[i].ref = tr[i].ref;
		a[i].is_write = tr[i].is_write;
		a[i].thread = s->thread;
	}
	s->nacc += n;
	return true;
}

static bool exec_nodes(ip_state *s, ip_node *const *v, int n);

/* The bounds of loop x at this entry: its affine terms over the enclosing
 * loops' variables, clamped by its bounds over params. */
static void loop_bounds(const ip_state *s, const ip_node *x, int64_t *lo, int64_t *hi)
{
	*lo = x->lo;
	*hi = x->hi;
	for (int j = 0; j < x->ndlo; j++) {
		int64_t v = s->o[x->dlo[j].reg] + x->dlo[j].disp;
		*lo = v > *lo ? v : *lo;
	}
	for (int j = 0; j < x->ndhi; j++) {
		int64_t v = s->o[x->dhi[j].reg] + x->dhi[j].disp;
		*hi = v < *hi ? v : *hi;
	}
}

/* The registers loop x updates at value v, trip counter trip: those of v, of the trip counter
 * and of tri(v) (packed caches' row starts; v is within the range the compiler proved free
 * of overflow). */
static void loop_regs(int64_t *o, const ip_node *x, int64_t v, int64_t trip)
{
	for (const ip_upd *p = x->upd; p < x->upd + x->nupd; p++)
		o[p->dst] = o[p->src] + p->coef * v;
	for (const ip_upd *p = x->tupd; p < x->tupd + x->ntupd; p++)
		o[p->dst] = o[p->src] + p->coef * trip;
	for (const ip_upd *p = x->qupd; p < x->qupd + x->nqupd; p++)
		o[p->dst] = o[p->src] + p->coef * (v * (v + 1) / 2);
}

/* A loop with trip counter updates (cache regions of the plan). */
static bool exec_loop_trip(ip_state *s, const ip_node *x)
{
	int64_t lo, hi, step = x->step, trip = x->trip0;
	loop_bounds(s, x, &lo, &hi);
	if (x->ndlo > 0)
		trip = ct_floordiv(lo, step);
	for (int64_t v = lo; v < hi; v += step, trip++) {
		loop_regs(s->o, x, v, trip);
		if (!exec_nodes(s, x->kids, x->nkids))
			return false;
	}
	return true;
}

/* The thread of iteration i of n under libgomp's static split over team threads. */
static int static_thread(int64_t i, int64_t n, int64_t team)
{
	int64_t q = n / team, r = n % team;
	return (int)(i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q);
}

/* A parallel loop of a threads trace: a barrier record, then each iteration on its thread. */
static bool exec_loop_par(ip_state *s, const ip_node *x)
{
	int64_t lo, hi, step = x->step, trip = x->trip0;
	loop_bounds(s, x, &lo, &hi);
	if (x->ndlo > 0)
		trip = ct_floordiv(lo, step);
	int64_t n = ct_trip_count(lo, hi, step), team = s->nthreads;
	if (x->par_max > 0 && x->par_max < team)
		team = x->par_max;
	if (n < team)
		team = n;
	if (s->nacc == INTERP_BATCH && !flush(s))
		return false;
	interp_access *b = &s->acc[s->nacc++];
	memset(b, 0, sizeof *b);
	b->buffer = INTERP_BARRIER;
	b->ref = (int32_t)team; /* the team, for the consumer's report */
	s->in_par = true;
	int64_t i = 0;
	for (int64_t v = lo; v < hi; v += step, trip++, i++) {
		s->thread = static_thread(i, n, team);
		loop_regs(s->o, x, v, trip);
		if (!(x->fast ? emit_trace(s, x->kids[0]) : exec_nodes(s, x->kids, x->nkids)))
			return false;
	}
	s->in_par = false;
	s->thread = 0;
	return true;
}

static bool exec_loop(ip_state *s, const ip_node *x)
{
	if (x->parallel && s->nthreads > 1 && !s->in_par)
		return exec_loop_par(s, x);
	int64_t *o = s->o;
	const ip_upd *u = x->upd, *ue = x->upd + x->nupd;
	int64_t lo, hi, step = x->step;
	loop_bounds(s, x, &lo, &hi);
	if (x->fast && !s->trace) {
		ip_val *r = s->r;
		void *const *base = s->base;
		const ip_insn *code = x->kids[0]->code;
		for (int64_t v = lo; v < hi; v += step) {
			for (const ip_upd *p = u; p < ue; p++)
				o[p->dst] = o[p->src] + p->coef * v;
			run_code(r, o, base, code);
		}
		return true;
	}
	if (x->fast) {
		const ip_node *k = x->kids[0];
		for (int64_t v = lo; v < hi; v += step) {
			for (const ip_upd *p = u; p < ue; p++)
				o[p->dst] = o[p->src] + p->coef * v;
			if (!emit_trace(s, k))
				return false;
		}
		return true;
	}
	if (x->ntupd || x->nqupd)
		return exec_loop_trip(s, x);
	for (int64_t v = lo; v < hi; v += step) {
		for (const ip_upd *p = u; p < ue; p++)
			o[p->dst] = o[p->src] + p->coef * v;
		if (!exec_nodes(s, x->kids, x->nkids))
			return false;
	}
	return true;
}

static bool exec_nodes(ip_state *s, ip_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const ip_node *x = v[i];
		switch (x->kind) {
		case LT_LOOP:
			if (!exec_loop(s, x))
				return false;
			break;
		case LT_STMT:
		case LT_LET:
			if (x->nchk && !exec_chk(s, x))
				return false;
			if (s->trace) {
				if (!emit_trace(s, x))
					return false;
			} else {
				run_code(s->r, s->o, s->base, x->code);
			}
			break;
		case LT_IF: {
			bool yes = true;
			if (x->is_conj) {
				const int64_t *o = s->o;
				for (const ip_conj *q = x->conj, *qe = q + x->nconj; q < qe && yes;
				     q++) {
					int64_t a = o[q->reg] + q->disp;
					switch (q->cmp) {
					case CMP_LT:
						yes = a < 0;
						break;
					case CMP_LE:
						yes = a <= 0;
						break;
					case CMP_GT:
						yes = a > 0;
						break;
					case CMP_GE:
						yes = a >= 0;
						break;
					case CMP_EQ:
						yes = a == 0;
						break;
					default:
						yes = a != 0;
						break;
					}
				}
			} else {
				if (x->nchk && !exec_chk(s, x))
					return false;
				run_code(s->r, s->o, s->base, x->code);
				yes = s->r[x->cond].i != 0;
			}
			if (yes) {
				if (!exec_nodes(s, x->kids, x->nkids))
					return false;
			} else if (!exec_nodes(s, x->els, x->nels)) {
				return false;
			}
			break;
		}
		case LT_CACHE:
			if (!exec_nodes(s, x->kids, x->nkids))
				return false;
			break;
		}
	}
	return true;
}

/* Progress of a long run (ct_ctx_set_progress): the iterations of the
 * outermost loops, counted as they end. */
typedef struct ip_progress {
	ct_ctx *ctx;
	double start, next; /* when the run began; no report before next */
	int64_t done, total;
	bool said;          /* a report was made: the last one is owed */
} ip_progress;

static void progress_tick(ip_progress *g, int64_t n)
{
	g->done += n;
	double now = ct_now();
	if (now < g->next && g->done < g->total)
		return;
	if (!g->said && g->done >= g->total)
		return; /* a run that ends within the first second says nothing */
	g->next = now + 0.1;
	g->said = true;
	/* scaled into an int when the counts do not fit one */
	int64_t scale = g->total / INT_MAX + 1;
	g->ctx->progress(g->ctx->progress_ud, g->ctx->progress_phase, (int)(g->done / scale),
	                 (int)(g->total / scale));
}

/* A root loop run one iteration at a time here: no fused body, no trip counters. */
static bool plain_loop(const ip_node *x)
{
	return x->kind == LT_LOOP && !x->fast && !x->ntupd && !x->nqupd && x->step > 0;
}

/* Progress units of a root: a plain loop's iterations, else 1. */
static int64_t root_trips(const ip_node *x)
{
	if (!plain_loop(x))
		return 1;
	return ct_trip_count(x->lo, x->hi, x->step);
}

/* exec_nodes over the roots, the plain outermost loops one iteration at a
 * time so that their progress can be told. */
static bool exec_roots_progress(ip_state *s, ip_node *const *v, int n)
{
	ip_progress g = {s->report, ct_now(), 0, 0, 0, false};
	g.next = g.start + 1.0;
	for (int i = 0; i < n; i++)
		g.total += root_trips(v[i]);
	for (int i = 0; i < n; i++) {
		const ip_node *x = v[i];
		if (!plain_loop(x)) {
			if (!exec_nodes(s, &v[i], 1))
				return false;
			progress_tick(&g, 1);
			continue;
		}
		const ip_upd *u = x->upd, *ue = x->upd + x->nupd;
		for (int64_t it = x->lo; it < x->hi; it += x->step) {
			for (const ip_upd *p = u; p < ue; p++)
				s->o[p->dst] = s->o[p->src] + p->coef * it;
			if (!exec_nodes(s, x->kids, x->nkids))
				return false;
			progress_tick(&g, 1);
		}
	}
	return true;
}

/* Run program p with the state's buffers (run) or batch consumer (trace). */
static ct_status exec_prog(ip_prog *p, ip_state *s, ct_ctx *ctx)
{
	s->r = p->regs;
	s->o = ct_alloc(ctx, sizeof *s->o * (size_t)(p->noffs + 1));
	if (!s->o)
		return CT_ERR_NOMEM;
	s->nelem = p->nelem;
	s->st = CT_OK;
	bool ok = s->report && !s->trace ? exec_roots_progress(s, p->roots, p->nroots)
	                                 : exec_nodes(s, p->roots, p->nroots);
	if (ok && s->trace)
		flush(s);
	ct_free(ctx, s->o);
	return s->st;
}

static int64_t dtype_bytes(ct_dtype t)
{
	return t == CT_F32 || t == CT_I32 ? 4 : 8;
}

ct_status ct_interp_run(ct_looptree *t, void *const *buffers)
{
	/* a tree lowered before its kernel's params changed runs no more */
	if (t && ir_kernel_ready(t->k) != CT_OK)
		return CT_ERR_USAGE;
	return interp_run_views(t, buffers, NULL, NULL);
}

ct_status interp_run_views(ct_looptree *t, void *const *buffers, const int64_t *view,
                           const int64_t *view_nelem)
{
	if (!t || (view && !view_nelem))
		return CT_ERR_USAGE;
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	if (!buffers && k->narrays > 0)
		return ct_error(ctx, CT_ERR_USAGE, "ct_interp_run needs one buffer per array");
	/* the plan's buffers are allocated and zeroed below: refused first when
	 * no run could hold them */
	ct_status st = lt_check_buffers(t);
	if (st)
		return st;
	ip_prog *p = ip_compile_views(t, false, view, view_nelem);
	if (!p)
		return ct_ctx_last_status(ctx);
	int na = t->narrays;
	void **base = ct_alloc(ctx, sizeof *base * (size_t)(na + 1));
	bool *owned = ct_alloc(ctx, sizeof *owned * (size_t)(na + 1));
	if (!base || !owned)
		st = CT_ERR_NOMEM;
	/* the kernel's arrays come from the caller (temps may be NULL); cache
	 * buffers (ids >= k->narrays) are internal: allocated here, zeroed */
	for (int a = 0; a < na && !st; a++) {
		const ir_array *ar = &t->arrays[a];
		if (a < k->narrays) {
			base[a] = buffers[a];
			if (base[a])
				continue;
			if (ar->role != CT_TEMP) {
				st = ct_error(ctx, CT_ERR_USAGE, "no buffer for array '%s'",
				              ar->name);
				break;
			}
		}
		int64_t bytes;
		if (!ct_mul_ok(p->nelem[a], dtype_bytes(ar->type), &bytes) ||
		    (uint64_t)bytes > SIZE_MAX / 2) {
			st = ct_error(ctx, CT_ERR_LIMIT, "temp array '%s' is too large", ar->name);
			break;
		}
		base[a] = ct_alloc(ctx, (size_t)bytes);
		if (!base[a]) {
			st = CT_ERR_NOMEM;
			break;
		}
		owned[a] = true;
	}
	if (!st) {
		ip_state s;
		memset(&s, 0, sizeof s);
		s.base = base;
		s.k = k;
		s.arrays = t->arrays;
		s.report = ctx->progress && ctx->progress_phase ? ctx : NULL;
		st = exec_prog(p, &s, ctx);
	}
	for (int a = 0; base && owned && a < na; a++)
		if (owned[a])
			ct_free(ctx, base[a]);
	ct_free(ctx, base);
	ct_free(ctx, owned);
	ip_prog_free(ctx, p);
	return st;
}

ct_status interp_trace_batch(ct_looptree *t, interp_batch_fn fn, void *ud)
{
	return interp_trace_threads(t, 1, fn, ud);
}

ct_status interp_trace_threads(ct_looptree *t, int nthreads, interp_batch_fn fn, void *ud)
{
	if (!t || !fn || nthreads < 1)
		return CT_ERR_USAGE;
	ct_ctx *ctx = t->k->ctx;
	ip_prog *p = ip_compile(t, true);
	if (!p)
		return ct_ctx_last_status(ctx);
	ip_state s;
	memset(&s, 0, sizeof s);
	s.k = t->k;
	s.arrays = t->arrays;
	s.trace = true;
	s.nthreads = nthreads;
	s.fn = fn;
	s.ud = ud;
	s.acc = ct_alloc(ctx, sizeof *s.acc * INTERP_BATCH);
	ct_status st = s.acc ? exec_prog(p, &s, ctx) : CT_ERR_NOMEM;
	ct_free(ctx, s.acc);
	ip_prog_free(ctx, p);
	return st;
}

static int count_checks(ip_node *const *v, int n)
{
	int r = 0;
	for (int i = 0; i < n; i++) {
		const ip_node *x = v[i];
		r += x->nchk + count_checks(x->kids, x->nkids) + count_checks(x->els, x->nels);
	}
	return r;
}

ct_status interp_unproven(ct_looptree *t, int *n)
{
	*n = 0;
	if (!t)
		return CT_ERR_USAGE;
	ip_prog *p = ip_compile(t, false);
	if (!p)
		return ct_ctx_last_status(t->k->ctx);
	*n = count_checks(p->roots, p->nroots);
	ip_prog_free(t->k->ctx, p);
	return CT_OK;
}

typedef struct trace_cb {
	ct_trace_fn fn;
	void *ud;
} trace_cb;

static ct_status trace_each(void *ud, const interp_access *acc, int n)
{
	const trace_cb *cb = ud;
	for (int i = 0; i < n; i++)
		cb->fn(cb->ud, acc[i].buffer, acc[i].offset, acc[i].is_write);
	return CT_OK;
}

ct_status ct_interp_trace(ct_looptree *t, ct_trace_fn fn, void *ud)
{
	if (!t || !fn)
		return CT_ERR_USAGE;
	if (ir_kernel_ready(t->k) != CT_OK)
		return CT_ERR_USAGE;
	trace_cb cb = {fn, ud};
	return interp_trace_batch(t, trace_each, &cb);
}
