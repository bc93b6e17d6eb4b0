/* symbolic.c: the model's miss counts as piecewise quasi-polynomials in a kernel's runtime params (predict --symbolic; docs/MODEL.md, "Symbolic formulas"). */
#include "model/symbolic.h"
#include "core/json.h"
#include "model/model_int.h"

#include <stdio.h>

/*
 * The class covered: a tree of loops and statements (after the loops that are empty on the
 * domain are dropped) whose trip counts are polynomials in the runtime params, whose
 * accesses are index subscripts that tile their dimensions (one subscript per array and
 * statement; its statements walk the same elements through twin loops, as a cache buffer's
 * copy loops and its body do, or other lines, as a split's main and tail versions: parts),
 * each array on its own lines with rows a whole number of lines (or a constant-size buffer,
 * read as one dimension). The formula holds on a lattice, every runtime param a multiple of its modulus:
 * the moduli are the divisors the bounds (tails of splits: floor(N / 16)), the rows and the
 * unit-stride loops need (a row of N f32 is a whole number of 64-byte lines when
 * N % 16 == 0). There each array's lines in one execution of a loop are a product of trip
 * counts, and the counts of the model's reuse partitions (docs/MODEL.md, "Counting the
 * partitions") are differences of those products: polynomials. The stack distance of a
 * reuse is bracketed by footprints of the loops and children between its source and its
 * target (also products of trip counts): a class misses a level where its least distance
 * reaches the capacity, hits where its most is below it, and is not decided in between
 * (the formula then gives bounds). Everything else says why it is not covered.
 */

/* ------------------------------------------------------------ polynomials */

static int64_t gcd_i(int64_t a, int64_t b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static bool fits64(__int128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

/* num/den in lowest terms with den > 0; false on overflow. */
static bool rat_norm(__int128 num, __int128 den, int64_t *n, int64_t *d)
{
	if (den < 0) {
		num = -num;
		den = -den;
	}
	__int128 a = num < 0 ? -num : num, b = den;
	while (b) {
		__int128 t = a % b;
		a = b;
		b = t;
	}
	if (a > 1) {
		num /= a;
		den /= a;
	}
	if (num == 0)
		den = 1;
	if (!fits64(num) || !fits64(den))
		return false;
	*n = (int64_t)num;
	*d = (int64_t)den;
	return true;
}

static void poly_zero(sym_poly *p) { p->n = 0; }

static void poly_const(sym_poly *p, int64_t num, int64_t den)
{
	p->n = 0;
	if (num == 0)
		return;
	memset(&p->t[0], 0, sizeof p->t[0]);
	rat_norm(num, den, &p->t[0].num, &p->t[0].den);
	p->n = 1;
}

static void poly_var(sym_poly *p, int v)
{
	memset(&p->t[0], 0, sizeof p->t[0]);
	p->t[0].num = p->t[0].den = 1;
	p->t[0].e[v] = 1;
	p->n = 1;
}

/* p += x (one term); false on overflow or too many terms. */
static bool poly_add_term(sym_poly *p, const sym_term *x)
{
	if (x->num == 0)
		return true;
	for (int i = 0; i < p->n; i++)
		if (memcmp(p->t[i].e, x->e, sizeof x->e) == 0) {
			int64_t n, d;
			if (!rat_norm((__int128)p->t[i].num * x->den + (__int128)x->num * p->t[i].den,
			              (__int128)p->t[i].den * x->den, &n, &d))
				return false;
			if (n == 0)
				p->t[i] = p->t[--p->n];
			else {
				p->t[i].num = n;
				p->t[i].den = d;
			}
			return true;
		}
	if (p->n == SYM_MAXT)
		return false;
	p->t[p->n++] = *x;
	return true;
}

/* *out = a + sign * b (out may be a or b). */
static bool poly_add(sym_poly *out, const sym_poly *a, const sym_poly *b, int sign)
{
	sym_poly r = *a;
	for (int i = 0; i < b->n; i++) {
		sym_term x = b->t[i];
		x.num *= sign;
		if (!poly_add_term(&r, &x))
			return false;
	}
	*out = r;
	return true;
}

static bool poly_mul(sym_poly *out, const sym_poly *a, const sym_poly *b)
{
	sym_poly r;
	r.n = 0;
	for (int i = 0; i < a->n; i++)
		for (int j = 0; j < b->n; j++) {
			sym_term x;
			for (int v = 0; v < SYM_MAXV; v++) {
				int e = a->t[i].e[v] + b->t[j].e[v];
				if (e > 60)
					return false;
				x.e[v] = (uint8_t)e;
			}
			if (!rat_norm((__int128)a->t[i].num * b->t[j].num, (__int128)a->t[i].den * b->t[j].den,
			              &x.num, &x.den) ||
			    !poly_add_term(&r, &x))
				return false;
		}
	*out = r;
	return true;
}

static bool poly_scale(sym_poly *p, int64_t num, int64_t den)
{
	sym_poly c;
	poly_const(&c, num, den);
	return poly_mul(p, p, &c);
}

/* The constant p is, if it is one. */
static bool poly_is_const(const sym_poly *p, int64_t *num, int64_t *den)
{
	if (p->n == 0) {
		*num = 0;
		*den = 1;
		return true;
	}
	if (p->n > 1)
		return false;
	for (int v = 0; v < SYM_MAXV; v++)
		if (p->t[0].e[v])
			return false;
	*num = p->t[0].num;
	*den = p->t[0].den;
	return true;
}

static bool term_is_const(const sym_term *x)
{
	for (int v = 0; v < SYM_MAXV; v++)
		if (x->e[v])
			return false;
	return true;
}

/* Every non-constant coefficient >= 0: p does not decrease in any variable (all >= 0). */
static bool poly_monotone(const sym_poly *p)
{
	for (int i = 0; i < p->n; i++)
		if (!term_is_const(&p->t[i]) && p->t[i].num < 0)
			return false;
	return true;
}

bool sym_poly_eval(const sym_poly *p, const int64_t *vals, int64_t *out)
{
	/* sum over a common denominator */
	__int128 den = 1;
	for (int i = 0; i < p->n; i++) {
		den = den / gcd_i((int64_t)(den % INT64_MAX), p->t[i].den) * p->t[i].den;
		if (den > ((__int128)1 << 62))
			return false;
	}
	__int128 sum = 0;
	for (int i = 0; i < p->n; i++) {
		__int128 v = (__int128)p->t[i].num * (den / p->t[i].den);
		for (int x = 0; x < SYM_MAXV; x++)
			for (int e = 0; e < p->t[i].e[x]; e++) {
				v *= vals[x];
				if (v > ((__int128)1 << 100) || v < -((__int128)1 << 100))
					return false;
			}
		sum += v;
	}
	if (sum % den)
		return false;
	sum /= den;
	if (!fits64(sum))
		return false;
	*out = (int64_t)sum;
	return true;
}

double sym_poly_value(const sym_poly *p, const int64_t *vals)
{
	double sum = 0;
	for (int i = 0; i < p->n; i++) {
		double v = (double)p->t[i].num / (double)p->t[i].den;
		for (int x = 0; x < SYM_MAXV; x++)
			for (int e = 0; e < p->t[i].e[x]; e++)
				v *= (double)vals[x];
		sum += v;
	}
	return sum;
}

/* Terms by decreasing total degree, then by exponents. */
static int term_cmp(const void *pa, const void *pb)
{
	const sym_term *a = pa, *b = pb;
	int da = 0, db = 0;
	for (int v = 0; v < SYM_MAXV; v++) {
		da += a->e[v];
		db += b->e[v];
	}
	if (da != db)
		return db - da;
	for (int v = 0; v < SYM_MAXV; v++)
		if (a->e[v] != b->e[v])
			return b->e[v] - a->e[v];
	return 0;
}

static void poly_print(ct_buf *b, const sym_poly *p0, const sym_result *r)
{
	if (p0->n == 0) {
		ct_buf_puts(b, "0");
		return;
	}
	sym_poly p = *p0;
	qsort(p.t, (size_t)p.n, sizeof p.t[0], term_cmp);
	for (int i = 0; i < p.n; i++) {
		const sym_term *x = &p.t[i];
		int64_t num = x->num;
		if (i == 0 && num < 0)
			ct_buf_puts(b, "-");
		else if (i > 0)
			ct_buf_puts(b, num < 0 ? " - " : " + ");
		if (num < 0)
			num = -num;
		bool mono = !term_is_const(x);
		if (!mono || num != 1)
			ct_buf_printf(b, "%lld%s", (long long)num, mono ? "*" : "");
		bool first = true;
		for (int v = 0; v < r->nvars; v++)
			if (x->e[v]) {
				ct_buf_printf(b, "%s%s", first ? "" : "*", r->var_name[v]);
				if (x->e[v] > 1)
					ct_buf_printf(b, "^%d", x->e[v]);
				first = false;
			}
		if (x->den != 1)
			ct_buf_printf(b, "/%lld", (long long)x->den);
	}
}

/* ------------------------------------------------------------ the analysis's state */

enum { ROLE_ABSENT, ROLE_UNIT, ROLE_DISTINCT };

#define SYM_MAXLOOPS 64

#define SYM_MAXST 32
/* Most extra parts of storages (a split's main and tail reach different elements). */
#define SYM_MAXPARTS 16
#define SYM_MAXKIDS 32
/* The body of a loop (or of the run: ROOT): its children in order, kid >= 0 a loop, kid < 0
 * statement -kid - 1. */
#define ROOT SYM_MAXLOOPS
typedef struct sbody {
	int n;
	int kid[SYM_MAXKIDS];
} sbody;

/* A statement (or let) of the tree: its loops outermost first and its accesses' storages in
 * trace order. */
typedef struct sstmt {
	const lt_node *lt;
	int depth;
	int path[SYM_MAXLOOPS];
	int nacc;
	int acc_array[64];
	int ref[64];               /* the source reference of each access (r->refs) */
} sstmt;

/* One storage's accesses and, per line size, how its lines follow the loops. Every access
 * of a storage has the same subscript (coefficients per loop of the tree), over loops that
 * enclose all its statements. */
typedef struct sarr {
	int nacc;
	int cnt[SYM_MAXST];        /* accesses in each statement */
	int first[SYM_MAXST], last[SYM_MAXST]; /* positions of its first and last there */
	bool under[SYM_MAXLOOPS];  /* some statement of it lies in loop j */
	int64_t c[IR_MAX_RANK];
	int64_t beta[IR_MAX_RANK][SYM_MAXLOOPS];
	int rank, dc;              /* dims; the one of unit stride */
	sym_poly stride[IR_MAX_RANK];
	sym_poly count;            /* elements */
	/* per line size */
	int64_t E;                 /* the unit loop's iterations a line */
	int u;                     /* the loop of unit step in dim dc (-1 none) */
	int role[SYM_MAXLOOPS];
	bool inl[SYM_MAXLOOPS];     /* the loop's whole range lies in one line (role ABSENT) */
	int twin[SYM_MAXLOOPS];    /* a loop of a's subscript: the loop of the first statement of a
	                            * that walks the same part of it (itself there; a cache buffer's
	                            * copy loop: the body's loop), -1 for the others */
	sym_poly Dbody[SYM_MAXLOOPS]; /* lines in one iteration of loop j's body (0: none there) */
	sym_poly Dloop[SYM_MAXLOOPS]; /* lines in one execution of loop j */
	sym_poly Droot;            /* lines of the whole run */
} sarr;

typedef struct sctx {
	ct_looptree *t;
	ct_kernel *k;
	sym_result *r;
	const char *why;           /* unsupported: why */
	bool retry;                /* a modulus must grow: grow[v] times */
	int64_t grow[SYM_MAXV];
	int n;                     /* loops of the tree, in preorder */
	const lt_node *loops[SYM_MAXLOOPS];
	int lparent[SYM_MAXLOOPS]; /* enclosing loop (-1: the run) */
	sbody body[SYM_MAXLOOPS + 1]; /* [ROOT]: the run's */
	int nst;
	sstmt st[SYM_MAXST];
	int na;                    /* storages analysed: the tree's (norig), then parts */
	int norig;
	sarr *arr;                 /* [na] */
	int orig[SYM_MAXLOOPS + SYM_MAXPARTS]; /* parts (>= norig): the storage they are part of */
	sym_poly inst[SYM_MAXLOOPS]; /* executions of loop j: product of the trips outside */
	sym_poly inst_st[SYM_MAXST]; /* executions of statement s */
	bool refs_ok;              /* every access has its reference */
	int64_t vb[IR_MAX_RANK][SYM_MAXLOOPS]; /* array_lines's scratch */
	const int64_t *cur_at;     /* carried_at: the line's blocks in the body that splits a */
	bool mark[SYM_MAXLOOPS][SYM_MAXLOOPS];
	bool nomem;
} sctx;

static bool unsupported(sctx *s, const char *why)
{
	if (!s->why)
		s->why = why;
	return false;
}

/* x mod c on the domain (every variable v a multiple of modulus[v]): 1 with *res when it
 * is the same everywhere, 0 when a modulus must grow first (s->grow says which), -1 when x
 * is not integral. */
static int det_mod(sctx *s, const sym_poly *x, int64_t c, int64_t *res)
{
	int64_t rc = 0;
	bool ok = true;
	for (int i = 0; i < x->n; i++) {
		const sym_term *tm = &x->t[i];
		if (term_is_const(tm)) {
			if (tm->den != 1)
				return -1;
			rc = tm->num;
			continue;
		}
		__int128 scaled = tm->num;
		for (int v = 0; v < s->r->nvars; v++)
			for (int e = 0; e < tm->e[v]; e++) {
				scaled *= s->r->modulus[v];
				if (scaled > ((__int128)1 << 100) || scaled < -((__int128)1 << 100))
					return -1;
			}
		if (scaled % ((__int128)tm->den * c) != 0) {
			ok = false;
			for (int v = 0; v < s->r->nvars; v++)
				if (tm->e[v]) {
					int64_t f = tm->den * c;
					s->grow[v] = s->grow[v] / gcd_i(s->grow[v], f) * f;
				}
		}
	}
	if (!ok) {
		s->retry = true;
		return 0;
	}
	*res = ((rc % c) + c) % c;
	return 1;
}

/* x is a multiple of c everywhere on the domain (growing the moduli if need be). */
static bool divides(sctx *s, const sym_poly *x, int64_t c, const char *what)
{
	if (c <= 1)
		return true;
	int64_t res;
	int d = det_mod(s, x, c, &res);
	if (d == 0)
		return false;
	if (d < 0 || res != 0)
		return unsupported(s, what);
	return true;
}

/* ------------------------------------------------------------ bounds -> polynomials */

static int var_of(const sym_result *r, int param)
{
	for (int v = 0; v < r->nvars; v++)
		if (r->var_param[v] == param)
			return v;
	return -1;
}

static bool bx_poly(sctx *s, const bx *x, sym_poly *out, int depth)
{
	if (!x || depth > 200)
		return unsupported(s, "a loop bound the formulas cannot read");
	sym_poly a, b;
	int64_t num, den, res;
	switch (x->kind) {
	case BX_CONST:
		poly_const(out, x->v, 1);
		return true;
	case BX_PARAM:
		if (x->id >= s->k->nparams) {
			int d = x->id - s->k->nparams;
			if (d >= s->t->nderived)
				return unsupported(s, "a loop bound the formulas cannot read");
			return bx_poly(s, s->t->derived[d], out, depth + 1);
		}
		if (s->k->params[x->id].runtime) {
			int v = var_of(s->r, x->id);
			if (v < 0)
				return unsupported(s, "a loop bound the formulas cannot read");
			poly_var(out, v);
		} else
			poly_const(out, s->k->params[x->id].value, 1);
		return true;
	case BX_ADD:
	case BX_SUB:
		if (!bx_poly(s, x->a, &a, depth + 1) || !bx_poly(s, x->b, &b, depth + 1))
			return false;
		if (!poly_add(out, &a, &b, x->kind == BX_ADD ? 1 : -1))
			return unsupported(s, "a formula too large");
		return true;
	case BX_MUL:
		/* a factor that is 0 on the domain makes the other one irrelevant (the balanced
		 * split's blocks of the other size when it divides) */
		if (!bx_poly(s, x->a, &a, depth + 1))
			return false;
		if (a.n == 0) {
			poly_zero(out);
			return true;
		}
		if (!bx_poly(s, x->b, &b, depth + 1))
			return false;
		if (!poly_mul(out, &a, &b))
			return unsupported(s, "a formula too large");
		return true;
	case BX_FLOORDIV:
	case BX_MOD: {
		if (!bx_poly(s, x->a, &a, depth + 1) || !bx_poly(s, x->b, &b, depth + 1))
			return false;
		if (!poly_is_const(&b, &num, &den) || den != 1 || num <= 0)
			return unsupported(s, "a loop bound divided by a runtime param");
		int d = det_mod(s, &a, num, &res);
		if (d == 0)
			return false;
		if (d < 0)
			return unsupported(s, "a loop bound the formulas cannot read");
		if (x->kind == BX_MOD) {
			poly_const(out, res, 1);
			return true;
		}
		sym_poly rr;
		poly_const(&rr, res, 1);
		if (!poly_add(out, &a, &rr, -1) || !poly_scale(out, 1, num))
			return unsupported(s, "a formula too large");
		return true;
	}
	case BX_MIN:
	case BX_MAX: {
		if (!bx_poly(s, x->a, &a, depth + 1) || !bx_poly(s, x->b, &b, depth + 1))
			return false;
		sym_poly d;
		if (!poly_add(&d, &a, &b, -1))
			return unsupported(s, "a formula too large");
		if (!poly_is_const(&d, &num, &den))
			return unsupported(s, "a min or max of runtime params in a loop bound");
		bool a_less = num < 0;
		*out = (x->kind == BX_MIN) == a_less ? a : b;
		return true;
	}
	}
	return unsupported(s, "a loop bound the formulas cannot read");
}

/* The trip count of loop x on the domain. */
static bool loop_trip(sctx *s, const lt_node *x, sym_poly *trip)
{
	sym_poly lo, hi, diff;
	if (!bx_poly(s, x->lo, &lo, 0) || !bx_poly(s, x->hi, &hi, 0))
		return false;
	if (!poly_add(&diff, &hi, &lo, -1))
		return unsupported(s, "a formula too large");
	if (x->step <= 0)
		return unsupported(s, "a loop with a step that is not positive");
	int64_t res, num, den;
	int d = det_mod(s, &diff, x->step, &res);
	if (d == 0)
		return false;
	if (d < 0)
		return unsupported(s, "a loop bound the formulas cannot read");
	sym_poly rr;
	poly_const(&rr, res, 1);
	if (!poly_add(trip, &diff, &rr, -1) || !poly_scale(trip, 1, x->step))
		return unsupported(s, "a formula too large");
	if (res) {
		poly_const(&rr, 1, 1);
		poly_add(trip, trip, &rr, 1);
	}
	if (poly_is_const(trip, &num, &den) && num <= 0)
		poly_zero(trip);
	return true;
}

/* ------------------------------------------------------------ the tree of loops */

static const char *node_kind_why(const lt_node *x)
{
	switch (x->kind) {
	case LT_IF:
		return "a guard (if) in the nest: its index-set pieces are not derived";
	case LT_CACHE:
		return "the plan's cache buffers (their copy loops reach the buffer through other "
		       "loops than the body: not derived)";
	default:
		return "a node of the loop tree the formulas do not read";
	}
}

static bool build_list(sctx *s, lt_node *const *kids, int nkids, int bi, int *path, int depth);

/* The loops and statements of kids that are not empty on the domain, into body bi (loops
 * enclosing them: path[0..depth)). */
static bool build_tree(sctx *s, lt_node *const *kids, int nkids, int bi, int *path, int depth)
{
	s->body[bi].n = 0;
	return build_list(s, kids, nkids, bi, path, depth);
}

/* build_tree's work, appending to body bi. A cache region's prologue copies, body and
 * epilogue run in order where it stands, as the model builds them: its kids join bi. */
static bool build_list(sctx *s, lt_node *const *kids, int nkids, int bi, int *path, int depth)
{
	sbody *B = &s->body[bi];
	for (int i = 0; i < nkids; i++) {
		const lt_node *x = kids[i];
		if (B->n == SYM_MAXKIDS)
			return unsupported(s, "a loop body of more than 32 children");
		if (x->kind == LT_LOOP) {
			sym_poly trip;
			if (!loop_trip(s, x, &trip))
				return false;
			if (trip.n == 0)
				continue;
			if (s->n == SYM_MAXLOOPS || depth == SYM_MAXLOOPS)
				return unsupported(s, "a tree of more than 64 loops");
			int j = s->n++;
			s->loops[j] = x;
			s->lparent[j] = depth ? path[depth - 1] : -1;
			s->r->trip[j] = trip;
			s->r->loop_name[j] = s->t->indices[x->index].name;
			s->r->loop_parent[j] = s->lparent[j];
			B->kid[B->n++] = j;
			path[depth] = j;
			if (!build_tree(s, x->kids, x->nkids, j, path, depth + 1))
				return false;
			if (s->body[j].n == 0)
				return unsupported(s, "a loop whose body is empty on the domain");
		} else if (x->kind == LT_STMT || x->kind == LT_LET) {
			if (s->nst == SYM_MAXST)
				return unsupported(s, "more than 32 statements");
			sstmt *st = &s->st[s->nst];
			st->lt = x;
			st->depth = depth;
			memcpy(st->path, path, sizeof *path * (size_t)depth);
			B->kid[B->n++] = -(s->nst++) - 1;
		} else if (x->kind == LT_CACHE) {
			if (!build_list(s, x->kids, x->nkids, bi, path, depth))
				return false;
		} else
			return unsupported(s, node_kind_why(x));
	}
	return true;
}

/* ------------------------------------------------------------ the accesses */

static void set_point(sctx *s, int which)
{
	for (int v = 0; v < s->r->nvars; v++) {
		ir_param *p = &s->k->params[s->r->var_param[v]];
		p->value = s->r->modulus[v] * (which ? 11 + 3 * v : 7 + 2 * v);
		p->has_value = true;
	}
}

/* Whether access ac of statement si has part q's subscript on the loops they share. */
static bool part_fits(const sctx *s, const model *m, const macc *ac, int si, int q)
{
	const sarr *a = &s->arr[q];
	const sstmt *st = &s->st[si];
	if (!a->nacc)
		return true;
	for (int d = 0; d < m->rank[ac->array]; d++) {
		if (a->c[d] != ac->c[d])
			return false;
		for (int j = 0; j < st->depth; j++)
			if (a->under[st->path[j]] && a->beta[d][st->path[j]] != ac->beta[d * ac->depth + j])
				return false;
	}
	return true;
}

/*
 * The storage (or part of one) that access ac of statement si belongs to. A statement's
 * accesses of one array are one part (several subscripts there are a stencil's: not
 * derived); statements whose subscripts differ on the loops they share (the main and the
 * tail of a split that does not divide, which walk other elements) are parts of their own,
 * analysed as storages of their own where their lines are disjoint (line_classes checks).
 */
static int pick_part(sctx *s, const model *m, const macc *ac, int si)
{
	for (int q = 0; q < s->na; q++)
		if (s->orig[q] == ac->array && s->arr[q].cnt[si])
			return q;
	for (int q = 0; q < s->na; q++)
		if (s->orig[q] == ac->array && part_fits(s, m, ac, si, q))
			return q;
	if (s->na >= s->norig + SYM_MAXPARTS) {
		unsupported(s, "one array with different subscripts in more statements than the "
		               "formulas follow");
		return -1;
	}
	int q = s->na++;
	s->orig[q] = ac->array;
	return q;
}

/* One statement x of the model tree (statement si): its accesses fill (which 0) or must
 * equal (which 1) s->arr. */
static bool match_stmt(sctx *s, const model *m, const mnode *x, int si, int which)
{
	sstmt *st = &s->st[si];
	if (x->nacc > 64)
		return unsupported(s, "a statement of more than 64 accesses");
	if (which == 0)
		st->nacc = x->nacc;
	else if (st->nacc != x->nacc)
		return unsupported(s, "subscripts that depend on the runtime params");
	for (int i = 0; i < x->nacc; i++) {
		const macc *ac = &x->acc[i];
		if (ac->inexact)
			return unsupported(s, "a subscript the model cannot express exactly");
		int part = ac->array;
		if (which == 0) {
			part = pick_part(s, m, ac, si);
			if (part < 0)
				return false;
		}
		sarr *a = &s->arr[part];
		if (which == 1 && s->orig[st->acc_array[i]] != ac->array)
			return unsupported(s, "subscripts that depend on the runtime params");
		if (which == 1)
			a = &s->arr[part = st->acc_array[i]];
		st->acc_array[i] = part;
		bool fresh = which == 0 && a->nacc == 0;
		for (int d = 0; d < m->rank[ac->array]; d++) {
			/* the coefficients of the loops on this statement's path: those of loops that
			 * enclose an earlier statement of a must be the same (a loop private to this
			 * statement, such as a copy loop of a cache buffer, is set here; their lines are
			 * checked against the other statements' in array_twins) */
			bool same = fresh || a->c[d] == ac->c[d];
			for (int j = 0; j < st->depth; j++) {
				int lj = st->path[j];
				int64_t b = ac->beta[d * ac->depth + j];
				if (which == 0 && !a->under[lj])
					a->beta[d][lj] = b;
				else
					same &= a->beta[d][lj] == b;
			}
			if (fresh)
				a->c[d] = ac->c[d];
			else if (!same)
				return unsupported(s, which ? "subscripts that depend on the runtime params"
				                      : a->cnt[si] ? "several references to one array with "
				                                     "different subscripts (stencil offsets): their "
				                                     "union is not derived"
				                                   : "one array with different subscripts in "
				                                     "different statements (the tail of a split, "
				                                     "or shifted uses): their union is not derived");
		}
		if (which == 0) {
			if (a->cnt[si] == 0)
				a->first[si] = i;
			a->last[si] = i;
			a->cnt[si]++;
			a->nacc++;
			for (int j = 0; j < st->depth; j++)
				a->under[st->path[j]] = true;
		}
	}
	return true;
}

/* The children of model node x must be body bi's, with the trips at vals. */
static bool match_body(sctx *s, const model *m, const mnode *x, int bi, const int64_t *vals,
                       int which)
{
	const sbody *B = &s->body[bi];
	if (x->nkids != B->n)
		return unsupported(s, "a nest the model cuts into pieces (guards, tails)");
	for (int i = 0; i < B->n; i++) {
		const mnode *y = x->kids[i];
		int k = B->kid[i];
		if (k >= 0) {
			int64_t n;
			if (!y->is_loop || y->lt != s->loops[k] || !sym_poly_eval(&s->r->trip[k], vals, &n) ||
			    n != y->n)
				return unsupported(s, "a nest the model cuts into pieces (guards, tails)");
			if (!match_body(s, m, y, k, vals, which))
				return false;
		} else {
			const sstmt *st = &s->st[-k - 1];
			if (y->is_loop || y->nkids || y->lt != st->lt || y->depth != st->depth)
				return unsupported(s, "a nest the model cuts into pieces (guards, tails)");
			if (!match_stmt(s, m, y, -k - 1, which))
				return false;
		}
	}
	return true;
}

/* The model tree at one point of the domain must be the tree of s, with its trips; its
 * accesses fill (which 0) or must equal (which 1) s->arr. */
static bool check_point(sctx *s, int which)
{
	set_point(s, which);
	model *m = mdl_tree_new(s->t);
	if (!m) {
		s->nomem = true;
		return false;
	}
	bool ok = false;
	int64_t vals[SYM_MAXV];
	for (int v = 0; v < s->r->nvars; v++)
		vals[v] = s->k->params[s->r->var_param[v]].value;
	if (m->st) {
		ct_ctx_clear_error(s->k->ctx);
		unsupported(s, "the model tree could not be built on the domain");
		goto out;
	}
	if (which == 0) {
		if (m->na > SYM_MAXLOOPS) {
			unsupported(s, "more than 64 arrays and buffers");
			goto out;
		}
		s->na = s->norig = m->na;
		for (int a = 0; a < m->na; a++)
			s->orig[a] = a;
		s->arr = calloc((size_t)m->na + SYM_MAXPARTS + 1, sizeof *s->arr);
		if (!s->arr) {
			s->nomem = true;
			goto out;
		}
	} else if (s->norig != m->na) {
		unsupported(s, "subscripts that depend on the runtime params");
		goto out;
	}
	if (!match_body(s, m, &m->root, ROOT, vals, which))
		goto out;
	/* the storages' strides: a product of the extents of the more minor dims */
	for (int pi = 0; pi < s->na; pi++) {
		sarr *sa = &s->arr[pi];
		int a = s->orig[pi];
		if (!sa->nacc)
			continue;
		const int *o = m->order + a * IR_MAX_RANK;
		const int64_t *st = m->stride + a * IR_MAX_RANK;
		sa->rank = m->rank[a];
		sa->dc = o[sa->rank - 1];
		sym_poly acc;
		poly_const(&acc, 1, 1);
		for (int q = sa->rank - 1; q >= 0; q--) {
			int64_t v;
			if (which == 0)
				sa->stride[o[q]] = acc;
			if (!sym_poly_eval(&sa->stride[o[q]], vals, &v) || v != st[o[q]]) {
				unsupported(s, "an array layout the formulas cannot read");
				goto out;
			}
			sym_poly e;
			if (!bx_poly(s, s->t->ext[a * IR_MAX_RANK + o[q]], &e, 0))
				goto out;
			if (!poly_mul(&acc, &acc, &e)) {
				unsupported(s, "a formula too large");
				goto out;
			}
		}
		sa->count = acc;
	}
	ok = true;
out:
	mdl_tree_free(m);
	return ok;
}

/* ------------------------------------------------------------ one line size */

static bool poly_equal(const sym_poly *x, const sym_poly *y)
{
	sym_poly d;
	return poly_add(&d, x, y, -1) && d.n == 0;
}

/* Whether loops i and j walk a's elements alike: the same coefficients and trip counts. */
static bool same_walk(const sctx *s, const sarr *a, int rank, int i, int j)
{
	for (int d = 0; d < rank; d++)
		if (a->beta[d][i] != a->beta[d][j])
			return false;
	return poly_equal(&s->r->trip[i], &s->r->trip[j]);
}

/* Loop j moves a's element: a coefficient in its subscript, and more than one iteration (a
 * copy loop over a buffer dimension of extent 1 does not). */
static bool walks(const sctx *s, const sarr *a, int j)
{
	int64_t n, d;
	if (poly_is_const(&s->r->trip[j], &n, &d) && n == d)
		return false;
	for (int q = 0; q < a->rank; q++)
		if (a->beta[q][j])
			return true;
	return false;
}

/*
 * Statements of one storage under different loops (a cache buffer: its copy loops, the
 * body's loops and the epilogue's): each loop of a's subscript in a statement must have a
 * twin among the loops of the first statement (the same coefficients and trip count), one
 * for one, so that every statement of a walks the same elements, once, given the loops
 * enclosing them all. a->twin[j]: that loop of the first statement (-1: j moves no element).
 */
static bool array_twins(sctx *s, sarr *a)
{
	int s0 = -1;
	for (int si = 0; si < s->nst && s0 < 0; si++)
		if (a->cnt[si])
			s0 = si;
	for (int j = 0; j < s->n; j++)
		a->twin[j] = -1;
	if (s0 < 0)
		return true;
	const char *why = "one storage walked by several statements through loops that are not "
	                  "twins (other tilings of its dimensions, or a cache buffer's copy loops "
	                  "unlike the body's): their union is not derived";
	const sstmt *st0 = &s->st[s0];
	bool on0[SYM_MAXLOOPS] = {false};
	for (int j = 0; j < st0->depth; j++) {
		int lj = st0->path[j];
		on0[lj] = true;
		if (walks(s, a, lj))
			a->twin[lj] = lj;
	}
	for (int si = s0 + 1; si < s->nst; si++) {
		if (!a->cnt[si])
			continue;
		const sstmt *st = &s->st[si];
		bool used[SYM_MAXLOOPS] = {false}, on[SYM_MAXLOOPS] = {false};
		for (int j = 0; j < st->depth; j++)
			on[st->path[j]] = true;
		for (int j = 0; j < st->depth; j++) {
			int lj = st->path[j];
			if (!walks(s, a, lj))
				continue;
			if (a->twin[lj] < 0)
				for (int c = 0; c < s->n && a->twin[lj] < 0; c++)
					if (on0[c] && !on[c] && a->twin[c] == c && !used[c] &&
					    same_walk(s, a, a->rank, c, lj))
						a->twin[lj] = c;
			if (a->twin[lj] < 0 || used[a->twin[lj]])
				return unsupported(s, why);
			used[a->twin[lj]] = true;
		}
		for (int c = 0; c < s->n; c++)
			if (a->twin[c] == c && !used[c])
				return unsupported(s, why);
	}
	return true;
}

static bool mul_into(sctx *s, sym_poly *p, const sym_poly *x)
{
	if (!poly_mul(p, p, x))
		return unsupported(s, "a formula too large");
	return true;
}

/* How array a's lines follow each loop at E elements a line; D[l]. */
static bool array_lines(sctx *s, sarr *a, int64_t line, int64_t elem)
{
	if (line % elem)
		return unsupported(s, "a line size that is not a multiple of an element");
	int64_t epl = line / elem;  /* elements a line */
	a->E = 1;
	a->u = -1;
	/* the subscript as seen here: per dim, or flattened to one dim of addresses when the
	 * storage has a constant size whose rows are not whole lines (a cache buffer of 16 x 8
	 * f32: two rows a 64-byte line) */
	int rank = a->rank, dc = a->dc;
	int64_t vc[IR_MAX_RANK];
	int64_t (*vb)[SYM_MAXLOOPS] = s->vb;
	memcpy(vc, a->c, sizeof vc);
	memcpy(vb, a->beta, sizeof a->beta);
	bool flat = false, consts = true;
	int64_t sv[IR_MAX_RANK];
	for (int d = 0; d < rank; d++) {
		int64_t num, den;
		consts &= poly_is_const(&a->stride[d], &num, &den) && den == 1;
		sv[d] = consts ? num : 0;
	}
	for (int d = 0; d < rank && consts; d++)
		flat |= d != dc && sv[d] % epl != 0;
	if (flat) {
		memset(vb, 0, sizeof a->beta);
		vc[0] = 0;
		for (int d = 0; d < rank; d++) {
			vc[0] += a->c[d] * sv[d];
			for (int j = 0; j < s->n; j++)
				vb[0][j] += a->beta[d][j] * sv[d];
		}
		rank = 1;
		dc = 0;
	}
	int used_dim[SYM_MAXLOOPS];
	bool inline_loop[SYM_MAXLOOPS] = {false};
	for (int j = 0; j < s->n; j++)
		used_dim[j] = -1;
	for (int d = 0; d < rank; d++) {
		/* rows are whole lines */
		if (d != dc && !divides(s, &a->stride[d], epl,
		                        "rows that are not a whole number of lines on the domain"))
			return false;
		/* the loops of this dim, by increasing coefficient, must tile it (those of the first
		 * statement: the others' are their twins) */
		int ord[SYM_MAXLOOPS], no = 0;
		for (int j = 0; j < s->n; j++) {
			int64_t b = vb[d][j];
			if (!b || a->twin[j] != j)
				continue;
			if (b < 0)
				return unsupported(s, "a subscript that runs backwards");
			if (used_dim[j] >= 0)
				return unsupported(s, "a loop in two subscripts of one array");
			used_dim[j] = d;
			int q = no++;
			while (q > 0 && vb[d][ord[q - 1]] > b) {
				ord[q] = ord[q - 1];
				q--;
			}
			ord[q] = j;
		}
		for (int q = 0; q + 1 < no; q++) {
			int64_t tn, td;
			if (!poly_is_const(&s->r->trip[ord[q]], &tn, &td))
				return unsupported(s, "an inner loop of a subscript with a runtime trip count");
			if (vb[d][ord[q + 1]] < vb[d][ord[q]] * tn)
				return unsupported(s, "subscripts whose loops overlap");
		}
		if (d == dc) {
			if (vc[d] % epl)
				return unsupported(s, "a unit-stride subscript that does not start a line");
			/* the loops below a line's worth of elements: those whose whole range stays in
			 * one line do not change it (inline), the one that crosses lines every E
			 * iterations is the unit loop; the others step by whole lines */
			int64_t span = 1;
			for (int q = 0; q < no; q++) {
				int j = ord[q];
				int64_t b = vb[d][j], tn, td;
				if (b >= epl) {
					if (b % epl)
						return unsupported(s, "a strided unit-stride subscript (not a whole "
						                      "number of lines a step)");
					continue;
				}
				if (b != span || epl % b)
					return unsupported(s, "a unit-stride subscript with gaps inside a line");
				bool known = poly_is_const(&s->r->trip[j], &tn, &td);
				if (known && b * tn <= epl) {
					if (epl % (b * tn))
						return unsupported(s, "a loop whose range does not divide a line");
					inline_loop[j] = true;
					span = b * tn;
					continue;
				}
				a->u = j;
				a->E = epl / b;
				if (!divides(s, &s->r->trip[j], a->E,
				             "a unit-stride loop that is not a whole number of lines"))
					return false;
				span = -1;
			}
		}
	}
	/* the twins of a loop follow a's lines as it does */
	for (int j = 0; j < s->n; j++) {
		int c = a->twin[j];
		a->inl[j] = c >= 0 && inline_loop[c];
		a->role[j] = c < 0 || used_dim[c] < 0 || inline_loop[c] ? ROLE_ABSENT
		             : c == a->u && a->E > 1 ? ROLE_UNIT : ROLE_DISTINCT;
	}
	/* lines in a loop's body, a loop, the run: the product of what the loops of a's
	 * subscript inside give, each twin once (twins walk the same lines) */
	bool (*mark)[SYM_MAXLOOPS] = s->mark;
	memset(mark, 0, sizeof s->mark);
	for (int z = 0; z < s->n; z++)
		if (a->role[z] != ROLE_ABSENT)
			for (int j = s->lparent[z]; j >= 0; j = s->lparent[j])
				mark[j][a->twin[z]] = true;
	poly_const(&a->Droot, a->nacc ? 1 : 0, 1);
	for (int j = 0; j < s->n; j++) {
		poly_zero(&a->Dbody[j]);
		poly_zero(&a->Dloop[j]);
		if (a->under[j])
			poly_const(&a->Dbody[j], 1, 1);
	}
	for (int c = 0; c < s->n; c++) {
		if (a->twin[c] != c || a->role[c] == ROLE_ABSENT)
			continue;
		sym_poly f = s->r->trip[c];
		if (a->role[c] == ROLE_UNIT && !poly_scale(&f, 1, a->E))
			return unsupported(s, "a formula too large");
		if (!mul_into(s, &a->Droot, &f))
			return false;
		for (int j = 0; j < s->n; j++)
			if (mark[j][c] && a->under[j] && !mul_into(s, &a->Dbody[j], &f))
				return false;
	}
	for (int j = 0; j < s->n; j++) {
		a->Dloop[j] = a->Dbody[j];
		if (a->under[j] && a->role[j] != ROLE_ABSENT) {
			sym_poly f = s->r->trip[j];
			if ((a->role[j] == ROLE_UNIT && !poly_scale(&f, 1, a->E)) ||
			    !mul_into(s, &a->Dloop[j], &f))
				return unsupported(s, "a formula too large");
		}
	}
	return true;
}

/* Whether b's lines are the same in the two instances of a window, different, or maybe
 * either. */
enum { ST_SAME, ST_DIFFER, ST_MAYBE };

static int st_join(int x, int y)
{
	return x == ST_DIFFER || y == ST_DIFFER ? ST_DIFFER : x == ST_MAYBE || y == ST_MAYBE ? ST_MAYBE
	                                                                                      : ST_SAME;
}

/* p += cn/cd * x. */
static bool lin(sctx *s, sym_poly *p, int64_t cn, int64_t cd, const sym_poly *x)
{
	sym_poly q = *x;
	if (!poly_scale(&q, cn, cd) || !poly_add(p, p, &q, 1))
		return unsupported(s, "a formula too large");
	return true;
}

static bool lin_const(sctx *s, sym_poly *p, int64_t c)
{
	sym_poly q;
	poly_const(&q, c, 1);
	if (!poly_add(p, p, &q, 1))
		return unsupported(s, "a formula too large");
	return true;
}

/* Where the reused line's block lies among the blocks of the first loop it depends on. */
enum { POS_ANY, POS_FIRST, POS_MIDDLE, POS_LAST };

/* x >= v everywhere on the domain (a constant, or a polynomial that only grows from the
 * domain's least point). */
static bool at_least(const sctx *s, const sym_poly *x, int64_t v)
{
	int64_t n, d;
	if (poly_is_const(x, &n, &d))
		return n >= v * d;
	return poly_monotone(x) && sym_poly_eval(x, s->r->modulus, &n) && n >= v;
}

/* Storage b among the accesses [from, to) of statement si. */
static bool in_range(const sctx *s, int si, int b, int from, int to)
{
	for (int i = from; i < to; i++)
		if (s->st[si].acc_array[i] == b)
			return true;
	return false;
}

static int arr_index(const sctx *s, const sarr *a) { return (int)(a - s->arr); }

/* Storage a in child k of a body (a loop with a statement of it, or such a statement). */
static bool has(const sarr *a, int k) { return k >= 0 ? a->under[k] : a->cnt[-k - 1] > 0; }

/* Lines of b in one execution of child k (a polynomial; 0 where b is not). */
static sym_poly dnode(const sarr *b, int k)
{
	sym_poly p;
	if (k >= 0)
		return b->Dloop[k];
	poly_const(&p, b->cnt[-k - 1] > 0, 1);
	return p;
}

/* Add the lines of b in children [from, to) of body B to hi (each one execution), and the
 * first one's that has b to lo (their union holds at least its lines). */
static bool kids_lines(sctx *s, const sarr *b, const sbody *B, int from, int to, sym_poly *lo,
                       sym_poly *hi, bool *lo_done)
{
	/* at most b's lines in one iteration of the body (children that walk the same lines of
	 * b, such as two reduce loops into one array, count them once) */
	int bi = (int)(B - s->body);
	const sym_poly *cap = bi == ROOT ? &b->Droot : &b->Dbody[bi];
	sym_poly sum, d;
	poly_zero(&sum);
	for (int i = from; i < to; i++) {
		int k = B->kid[i];
		if (has(b, k) && (d = dnode(b, k), !poly_add(&sum, &sum, &d, 1)))
			return unsupported(s, "a formula too large");
	}
	if (!poly_add(&d, &sum, cap, -1))
		return unsupported(s, "a formula too large");
	if (!poly_add(hi, hi, d.n && at_least(s, &d, 0) ? cap : &sum, 1))
		return unsupported(s, "a formula too large");
	for (int i = from; i < to; i++) {
		int k = B->kid[i];
		if (!has(b, k))
			continue;
		d = dnode(b, k);
		if (lo && !*lo_done) {
			if (!poly_add(lo, lo, &d, 1))
				return unsupported(s, "a formula too large");
			*lo_done = true;
		}
	}
	return true;
}

/* The first and last children of body B that hold a (-1 none). */
static void a_kids(const sarr *a, const sbody *B, int *fa, int *la)
{
	*fa = *la = -1;
	for (int i = 0; i < B->n; i++)
		if (has(a, B->kid[i])) {
			if (*fa < 0)
				*fa = i;
			*la = i;
		}
}

/* b's lines in the part of one execution of child k after the last touch of a's line (end:
 * after; else before the first), where a's line is the same in all of k (a depends on no
 * loop inside k). lo gets a part that surely lies there. */
static bool edge_node(sctx *s, const sarr *a, const sarr *b, int k, bool end, sym_poly *lo,
                      sym_poly *hi, bool *lo_done)
{
	if (k < 0) {
		int si = -k - 1;
		int ai = arr_index(s, a), bi = arr_index(s, b);
		bool there = end ? in_range(s, si, bi, a->last[si] + 1, s->st[si].nacc)
		                 : in_range(s, si, bi, 0, a->first[si]);
		if (!there || ai == bi)
			return true;
		if (!lin_const(s, hi, 1))
			return false;
		if (!*lo_done) {
			*lo_done = true;
			return lin_const(s, lo, 1);
		}
		return true;
	}
	if (a->role[k] != ROLE_ABSENT) {
		/* a's line changes with k (a cache buffer walked by its copy loops): the part
		 * after (before) the line's touch holds anything from none to all of b's lines
		 * there */
		if (has(b, k)) {
			sym_poly d = dnode(b, k);
			if (!poly_add(hi, hi, &d, 1))
				return unsupported(s, "a formula too large");
		}
		return true;
	}
	/* a loop: its last (first) iteration */
	const sbody *B = &s->body[k];
	int fa, la;
	a_kids(a, B, &fa, &la);
	if (end)
		return kids_lines(s, b, B, la + 1, B->n, lo, hi, lo_done) &&
		       edge_node(s, a, b, B->kid[la], true, lo, hi, lo_done);
	return kids_lines(s, b, B, 0, fa, lo, hi, lo_done) &&
	       edge_node(s, a, b, B->kid[fa], false, lo, hi, lo_done);
}

static bool window_node(sctx *s, const sarr *a, const sarr *b, int k, int state, int pos,
                        sym_poly *lo, sym_poly *hi);

/* Most levels of twin loops whose blocks the classes of a sibling reuse follow. */
#define SYM_PAIR_DEPTH 8

/* Both constants: the larger; else x unless it is 0 (a lower bound of a union of parts). */
static const sym_poly *poly_max(const sym_poly *x, const sym_poly *y)
{
	int64_t xn, xd, yn, yd;
	if (poly_is_const(x, &xn, &xd) && poly_is_const(y, &yn, &yd))
		return (__int128)xn * yd >= (__int128)yn * xd ? x : y;
	return x->n ? x : y;
}

/* The loops where a's line first changes below children k1 (its last iteration, going down)
 * and k2 (its first): through loops that leave a's line alone and hold a in one child.
 * False when a side does not reach such a loop. */
static bool pair_level(const sctx *s, const sarr *a, int k1, int k2, int *m1, int *m2)
{
	int k[2] = {k1, k2};
	for (int side = 0; side < 2; side++) {
		while (k[side] >= 0 && a->role[k[side]] == ROLE_ABSENT) {
			int fa, la;
			a_kids(a, &s->body[k[side]], &fa, &la);
			if (fa < 0 || fa != la)
				return false;
			k[side] = s->body[k[side]].kid[fa];
		}
		if (k[side] < 0)
			return false;
	}
	*m1 = k[0];
	*m2 = k[1];
	return a->twin[*m1] >= 0 && a->twin[*m1] == a->twin[*m2];
}

/* b's lines in n iterations-blocks of loop m whose blocks hold w iterations: per block
 * (*kind 1; *per), all of b's lines in m's body once any block is there (*kind 2), none (0),
 * or not known (3: blocks that share lines of b). */
static int block_lines(const sarr *b, int m, int64_t w, sym_poly *per)
{
	if (!b->under[m])
		return 0;
	*per = b->Dbody[m];
	switch (b->role[m]) {
	case ROLE_ABSENT:
		return 2;
	case ROLE_DISTINCT:
		return poly_scale(per, w, 1) ? 1 : 3;
	default:
		if (w % b->E)
			return 3;
		return poly_scale(per, w / b->E, 1) ? 1 : 3;
	}
}

/* lo, hi of b's lines in n blocks, n in [x, y] (polynomials, x <= y on the domain). */
static bool blocks_range(sctx *s, const sarr *b, int m, int kind, const sym_poly *per,
                         const sym_poly *x, const sym_poly *y, sym_poly *lo, sym_poly *hi)
{
	poly_zero(lo);
	poly_zero(hi);
	if (kind == 0)
		return true;
	if (kind == 2) {
		if (at_least(s, x, 1))
			*lo = *per;
		if (y->n)
			*hi = *per;
		return true;
	}
	if (kind == 3) {
		*hi = b->Dloop[m];
		return true;
	}
	if (!poly_mul(lo, x, per) || !poly_mul(hi, y, per))
		return unsupported(s, "a formula too large");
	return true;
}

static bool pair_window(sctx *s, const sarr *a, const sarr *b, int k1, int k2, int state,
                        int pos, const int64_t *at, int depth, sym_poly *lo, sym_poly *hi);

/*
 * The part of the window in the first and last iterations of a block: side 1 is the last
 * iteration of loop m1's block (the children after the one holding a, and inside it), side
 * 2 the first iteration of m2's (the children before it).
 */
static bool pair_bodies(sctx *s, const sarr *a, const sarr *b, int m1, int m2, int state,
                        const int64_t *at, int depth, sym_poly *lo, sym_poly *hi)
{
	const sbody *B1 = &s->body[m1], *B2 = &s->body[m2];
	int fa1, la1, fa2, la2;
	a_kids(a, B1, &fa1, &la1);
	a_kids(a, B2, &fa2, &la2);
	sym_poly klo, khi, plo, phi;
	poly_zero(&klo);
	poly_zero(&khi);
	poly_zero(&plo);
	poly_zero(&phi);
	bool done = false;
	if (!kids_lines(s, b, B1, la1 + 1, B1->n, &klo, &khi, &done) ||
	    !kids_lines(s, b, B2, 0, fa2, &klo, &khi, &done) ||
	    !pair_window(s, a, b, B1->kid[la1], B2->kid[fa2], state, POS_ANY, at, depth + 1, &plo,
	                 &phi))
		return false;
	if (!poly_add(lo, lo, poly_max(&plo, &klo), 1) || !poly_add(hi, hi, &phi, 1) ||
	    !poly_add(hi, hi, &khi, 1))
		return unsupported(s, "a formula too large");
	return true;
}

/*
 * b's least and most lines in the window of a reuse of a's line X between its last touch in
 * one execution of child k1 (side 1) and its first touch in a later execution of child k2
 * (side 2), where a's line changes inside them (a buffer walked by its copy loops and by the
 * body): the part of k1 after X and the part of k2 before X. Down the loops that leave a's
 * line alone (their last and first iterations, the children around), to loops m1 and m2
 * that walk a's lines alike (twins): X lies in the same block p of both, so the blocks after
 * p in m1 and before p in m2 lie wholly in the window (nb - 1 blocks of a's lines, and of
 * any storage walked alike; pos says where p is), and the block's own iterations form the
 * same kind of window one level further in. state: whether b's lines in the two executions
 * are the same. Elsewhere the parts are bracketed by none and all of each child's lines.
 */
static bool pair_window(sctx *s, const sarr *a, const sarr *b, int k1, int k2, int state,
                        int pos, const int64_t *at, int depth, sym_poly *lo, sym_poly *hi)
{
	int m1, m2;
	if (!pair_level(s, a, k1, k2, &m1, &m2)) {
		bool done = false;
		return edge_node(s, a, b, k1, true, lo, hi, &done) &&
		       edge_node(s, a, b, k2, false, lo, hi, &done);
	}
	/* the children around the way down (wholly in the window) */
	sym_poly klo, khi;
	poly_zero(&klo);
	poly_zero(&khi);
	bool done = false;
	for (int side = 0; side < 2; side++) {
		int k = side ? k2 : k1, m = side ? m2 : m1;
		while (k != m) {
			const sbody *B = &s->body[k];
			int fa, la;
			a_kids(a, B, &fa, &la);
			if (!(side ? kids_lines(s, b, B, 0, fa, &klo, &khi, &done)
			           : kids_lines(s, b, B, la + 1, B->n, &klo, &khi, &done)))
				return false;
			k = B->kid[fa];
		}
	}
	/* the blocks outside X's */
	int64_t w = a->role[m1] == ROLE_UNIT ? a->E : 1;
	sym_poly nb = s->r->trip[m1], one, last, zero;
	if (!poly_scale(&nb, 1, w))
		return unsupported(s, "a formula too large");
	poly_const(&one, 1, 1);
	poly_zero(&zero);
	if (!poly_add(&last, &nb, &one, -1))
		return unsupported(s, "a formula too large");
	/* blocks after X's in m1: n1 in [x1, y1]; before it in m2: nb - 1 - n1 */
	sym_poly x1, y1, x2, y2, two;
	poly_const(&two, 2, 1);
	switch (pos) {
	case POS_FIRST:
		x1 = y1 = last;
		x2 = y2 = zero;
		break;
	case POS_LAST:
		x1 = y1 = zero;
		x2 = y2 = last;
		break;
	case POS_MIDDLE:
		x1 = x2 = one;
		if (!poly_add(&y1, &nb, &two, -1))
			return unsupported(s, "a formula too large");
		y2 = y1;
		break;
	default:
		x1 = x2 = zero;
		y1 = y2 = last;
	}
	if (at && depth < SYM_PAIR_DEPTH && at[depth] >= 0) {
		/* X's block is known: block at[depth] */
		poly_const(&x2, at[depth], 1);
		y2 = x2;
		if (!poly_add(&x1, &last, &x2, -1))
			return unsupported(s, "a formula too large");
		y1 = x1;
	}
	sym_poly per1, per2, flo, fhi;
	poly_zero(&per1);
	poly_zero(&per2);
	int kind1 = block_lines(b, m1, w, &per1), kind2 = block_lines(b, m2, w, &per2);
	bool aligned = kind1 == 1 && kind2 == 1 && poly_equal(&per1, &per2) &&
	               ((b->twin[m1] >= 0 && b->twin[m1] == b->twin[m2] && state == ST_SAME) ||
	                state == ST_DIFFER);
	if (aligned) {
		/* every block but X's once, on one side or the other */
		if (!poly_mul(&flo, &last, &per1))
			return unsupported(s, "a formula too large");
		fhi = flo;
	} else {
		sym_poly l1, h1, l2, h2;
		if (!blocks_range(s, b, m1, kind1, &per1, &x1, &y1, &l1, &h1) ||
		    !blocks_range(s, b, m2, kind2, &per2, &x2, &y2, &l2, &h2))
			return false;
		/* the two sides' lines: disjoint where b's lines of the two executions differ */
		if (state == ST_DIFFER) {
			if (!poly_add(&flo, &l1, &l2, 1))
				return unsupported(s, "a formula too large");
		} else
			flo = *poly_max(&l1, &l2);
		if (!poly_add(&fhi, &h1, &h2, 1))
			return unsupported(s, "a formula too large");
	}
	/* X's block: its last iteration in m1, its first in m2 */
	sym_poly ilo, ihi;
	poly_zero(&ilo);
	poly_zero(&ihi);
	if (!pair_bodies(s, a, b, m1, m2, state, at, depth, &ilo, &ihi))
		return false;
	/* a known block, b on one side only, its lines shared by neighbouring iterations (a
	 * line of b every E_b iterations, blocks of w): b's line-blocks from X's iteration on
	 * (side 1) or up to it (side 2); X's iteration's lines are among them when its
	 * neighbour in the window shares its line-block */
	int64_t nbc, nbd;
	if (at && depth < SYM_PAIR_DEPTH && at[depth] >= 0 && poly_is_const(&nb, &nbc, &nbd) &&
	    nbd == 1 && ((kind1 == 3 && kind2 == 0) || (kind1 == 0 && kind2 == 3))) {
		bool side1 = kind1 == 3;
		int m = side1 ? m1 : m2;
		int64_t E = b->E, pb = at[depth], n = 0;
		bool covered_b = false;
		if (side1) {
			int64_t tp = pb * w + w - 1, end = nbc * w - 1;
			if (tp + 1 <= end) {
				n = end / E - (tp + 1) / E + 1;
				covered_b = (tp + 1) / E == tp / E;
			}
		} else {
			int64_t tp = pb * w;
			if (tp >= 1) {
				n = (tp - 1) / E + 1;
				covered_b = (tp - 1) / E == tp / E;
			}
		}
		sym_poly f = b->Dbody[m];
		if (!poly_scale(&f, n, 1))
			return unsupported(s, "a formula too large");
		sym_poly tlo = f, thi = f;
		if (!covered_b && (!poly_add(&tlo, &tlo, &ilo, 1) || !poly_add(&thi, &thi, &ihi, 1)))
			return unsupported(s, "a formula too large");
		if (!poly_add(lo, lo, poly_max(&tlo, &klo), 1) || !poly_add(hi, hi, &thi, 1) ||
		    !poly_add(hi, hi, &khi, 1))
			return unsupported(s, "a formula too large");
		return true;
	}
	/* b's lines there lie outside the other blocks' where it changes with every block */
	bool apart = (kind1 == 0 || kind1 == 1) && (kind2 == 0 || kind2 == 1);
	bool covered = kind1 != 1 && kind2 != 1 && kind1 != 3 && kind2 != 3 &&
	               (kind1 == 0 || at_least(s, &x1, 1)) && (kind2 == 0 || at_least(s, &x2, 1)) &&
	               (kind1 || kind2);
	sym_poly slo, shi;
	if (covered) {
		slo = flo;
		shi = fhi;
	} else if (apart) {
		if (!poly_add(&slo, &flo, &ilo, 1) || !poly_add(&shi, &fhi, &ihi, 1))
			return unsupported(s, "a formula too large");
	} else {
		slo = *poly_max(&flo, &ilo);
		if (!poly_add(&shi, &fhi, &ihi, 1))
			return unsupported(s, "a formula too large");
	}
	if (!poly_add(lo, lo, poly_max(&slo, &klo), 1) || !poly_add(hi, hi, &shi, 1) ||
	    !poly_add(hi, hi, &khi, 1))
		return unsupported(s, "a formula too large");
	return true;
}

/*
 * Add storage b's least and most lines in a window of a reuse of a's line X to lo and hi.
 * The window is the suffix of one execution I1 of body bi after the last touch of X and the
 * prefix of a later execution I2 before its first touch; `state` says whether b's lines in
 * I1 and I2 are the same. When one child of the body holds a, the window is the children
 * after it in I1, those before it in I2, and the same kind of window inside that child;
 * when several do (a's line is the same in the whole body), it is the part of the last
 * after its last touch and of the first before its first touch, and the children around.
 */
/* window_body where several children of body bi hold a: the part of the last after the
 * line's last touch, of the first before its first touch (pair_window: at gives the line's
 * blocks, or NULL), and the children around. */
static bool window_split(sctx *s, const sarr *a, const sarr *b, int bi, int state, int pos,
                         const int64_t *at, sym_poly *lo, sym_poly *hi)
{
	const sbody *B = &s->body[bi];
	int fa, la;
	a_kids(a, B, &fa, &la);
	bool lo_done = false;
	sym_poly klo, khi, plo, phi;
	poly_zero(&klo);
	poly_zero(&khi);
	poly_zero(&plo);
	poly_zero(&phi);
	if (!kids_lines(s, b, B, la + 1, B->n, &klo, &khi, &lo_done) ||
	    !kids_lines(s, b, B, 0, fa, &klo, &khi, &lo_done) ||
	    !pair_window(s, a, b, B->kid[la], B->kid[fa], state, pos, at ? at : s->cur_at, 0, &plo,
	                 &phi))
		return false;
	if (!poly_add(lo, lo, poly_max(&plo, &klo), 1) || !poly_add(hi, hi, &phi, 1) ||
	    !poly_add(hi, hi, &khi, 1))
		return unsupported(s, "a formula too large");
	return true;
}

static bool window_body(sctx *s, const sarr *a, const sarr *b, int bi, int state, int pos,
                        sym_poly *lo, sym_poly *hi)
{
	const sbody *B = &s->body[bi];
	int fa, la;
	a_kids(a, B, &fa, &la);
	if (fa < 0)
		return true;
	bool lo_done = false;
	if (fa == la && has(b, B->kid[fa])) {
		/* b's lines in the window's children come on top of the inner window's (lo: the
		 * larger of the inner window's and the first child's, where they are known) */
		sym_poly klo, ilo;
		poly_zero(&klo);
		poly_zero(&ilo);
		bool done = false;
		if (!kids_lines(s, b, B, la + 1, B->n, &klo, hi, &done) ||
		    !kids_lines(s, b, B, 0, fa, &klo, hi, &done) ||
		    !window_node(s, a, b, B->kid[fa], state, pos, &ilo, hi))
			return false;
		if (!poly_add(lo, lo, poly_max(&ilo, &klo), 1))
			return unsupported(s, "a formula too large");
		return true;
	}
	if (fa == la)
		return kids_lines(s, b, B, la + 1, B->n, lo, hi, &lo_done) &&
		       kids_lines(s, b, B, 0, fa, lo, hi, &lo_done);
	return window_split(s, a, b, bi, state, pos, NULL, lo, hi);
}

/*
 * The window inside child k of a body that holds a: a statement (the accesses after a's
 * last in I1's execution and before a's first in I2's), or a loop m. When a's line does not
 * depend on m it is touched in every iteration: the window lies in I1's last iteration and
 * I2's first. Else it is touched in a block [s0, s0 + w) of m's iterations (w = a's
 * iterations a line when m is a's unit loop, else 1); the iterations outside the block lie
 * wholly in the window, the block's edges partly: the same kind of window in m's body.
 */
static bool window_node(sctx *s, const sarr *a, const sarr *b, int k, int state, int pos,
                        sym_poly *lo, sym_poly *hi)
{
	if (k < 0) {
		int si = -k - 1;
		if (a == b)
			return true;
		int bi = arr_index(s, b);
		bool after = in_range(s, si, bi, a->last[si] + 1, s->st[si].nacc);
		bool before = in_range(s, si, bi, 0, a->first[si]);
		if (!after && !before)
			return true;
		return lin_const(s, lo, 1) &&
		       lin_const(s, hi, after && before && state != ST_SAME ? 2 : 1);
	}
	int m = k;
	if (a->role[m] == ROLE_ABSENT)
		return window_body(s, a, b, m,
		                   st_join(state, b->role[m] != ROLE_ABSENT ? ST_MAYBE : ST_SAME), pos, lo,
		                   hi);
	const sym_poly *T = &s->r->trip[m], *D1 = &b->Dbody[m];
	int64_t w = a->role[m] == ROLE_UNIT ? a->E : 1;
	sym_poly TD;
	if (!poly_mul(&TD, T, D1))
		return unsupported(s, "a formula too large");
	int inner = state;
	switch (b->role[m]) {
	case ROLE_ABSENT: {
		/* every iteration of m touches the same lines of b */
		bool outside = at_least(s, T, w + 1);
		sym_poly ilo, ihi;
		poly_zero(&ilo);
		poly_zero(&ihi);
		if (!window_body(s, a, b, m, state, POS_ANY, &ilo, &ihi))
			return false;
		if (!poly_add(lo, lo, outside ? D1 : &ilo, 1))
			return unsupported(s, "a formula too large");
		/* a middle block: iterations outside it in both instances, whose lines differ */
		if (pos == POS_MIDDLE && state == ST_DIFFER && !lin(s, lo, 1, 1, D1))
			return false;
		if (state == ST_SAME)
			return lin(s, hi, 1, 1, D1);
		/* the line in the first or last block: the iterations outside it all lie in one
		 * of the two instances, the other one gives only the inner window's lines */
		if (pos == POS_FIRST || pos == POS_LAST)
			return lin(s, hi, 1, 1, D1) && poly_add(hi, hi, &ihi, 1);
		return lin(s, hi, 2, 1, D1);
	}
	case ROLE_DISTINCT:
		/* the iterations outside the block: distinct lines each */
		if (!lin(s, lo, 1, 1, &TD) || !lin(s, lo, -w, 1, D1) || !lin(s, hi, 1, 1, &TD) ||
		    !lin(s, hi, -w, 1, D1))
			return false;
		if (w > 1)
			inner = ST_DIFFER;
		break;
	case ROLE_UNIT: {
		int64_t E = b->E;
		if (w % E == 0) {
			/* the block is whole lines of b */
			if (!lin(s, lo, 1, E, &TD) || !lin(s, lo, -(w / E), 1, D1) || !lin(s, hi, 1, E, &TD) ||
			    !lin(s, hi, -(w / E), 1, D1))
				return false;
			if (w > E)
				inner = ST_DIFFER;
			break;
		}
		if (E % w)
			return unsupported(s, "arrays whose lines hold unrelated numbers of elements");
		/* the block lies inside one line of b, which the iterations around it touch too:
		 * every line of b in I1 or I2, one of them maybe in both */
		if (!lin(s, lo, 1, E, &TD) || !lin(s, hi, 1, E, &TD))
			return false;
		return state == ST_SAME || lin(s, hi, 1, 1, D1);
	}
	}
	return window_body(s, a, b, m, inner, POS_ANY, lo, hi);
}

/* The first statement of body bi (in execution order) that holds a. */
static int first_stmt(const sctx *s, const sarr *a, int bi)
{
	int fa, la;
	a_kids(a, &s->body[bi], &fa, &la);
	if (fa < 0)
		return -1;
	int k = s->body[bi].kid[fa];
	return k < 0 ? -k - 1 : first_stmt(s, a, k);
}

/* The reference of a's first access in statement si (-1 unknown). */
static int first_ref(const sctx *s, const sarr *a, int si)
{
	return s->refs_ok && si >= 0 ? s->st[si].ref[a->first[si]] : -1;
}

static bool push_reuse(sctx *s, sym_lines *L, const sym_reuse *x, int *cap)
{
	if (L->n == *cap) {
		int nc = *cap ? 2 * *cap : 16;
		sym_reuse *nr = realloc(L->r, sizeof *nr * (size_t)nc);
		if (!nr) {
			s->nomem = true;
			return false;
		}
		L->r = nr;
		*cap = nc;
	}
	L->r[L->n] = *x;
	L->r[L->n++].array = s->orig[x->array]; /* a part's classes are its array's */
	return true;
}

/* The iterations t >= 1 of loop l in class cls (0 all, 1 t % g != 0, 2 t % g == 0) in which
 * array a finds its lines of iteration t - 1 again. */
static bool class_iters(sctx *s, const sarr *a, int l, int64_t g, int cls, sym_poly *it)
{
	const sym_poly *T = &s->r->trip[l];
	sym_poly one;
	poly_const(&one, 1, 1);
	poly_zero(it);
	if (cls == 0)
		return lin(s, it, 1, 1, T) && lin(s, it, -1, 1, &one);
	if (cls == 1)
		return lin(s, it, 1, 1, T) && lin(s, it, -1, g, T);
	if (a->role[l] == ROLE_ABSENT)
		return lin(s, it, 1, g, T) && lin(s, it, -1, 1, &one);
	return lin(s, it, 1, g, T) && lin(s, it, -1, a->E, T);
}

/* The first loop inside loop l, on the way to a's statements, whose iterations change a's
 * line (-1 none). */
static int first_dep(const sctx *s, const sarr *a, int l)
{
	for (int j = l + 1; j < s->n; j++) {
		bool inside = false;
		for (int p = s->lparent[j]; p >= 0 && !inside; p = s->lparent[p])
			inside = p == l;
		if (inside && a->under[j] && a->role[j] != ROLE_ABSENT)
			return j;
	}
	return -1;
}

/* Add b's least and most lines in a window (blo, bhi) to class x's distances. The window
 * lies in `inst` instances of a body where b has `per` lines each: at most inst * per of them
 * (b's lines walked in several children, a buffer's by its copy loops and its body, are
 * counted once each there). */
static bool add_capped(sctx *s, sym_reuse *x, const sym_poly *blo, const sym_poly *bhi,
                       const sym_poly *per, int64_t inst)
{
	sym_poly capv = *per, d;
	if (!poly_scale(&capv, inst, 1) || !poly_add(&d, bhi, &capv, -1))
		return unsupported(s, "a formula too large");
	const sym_poly *hi = at_least(s, &d, 0) ? &capv : bhi;
	if (!poly_add(&x->dlo, &x->dlo, blo, 1) || !poly_add(&x->dhi, &x->dhi, hi, 1))
		return unsupported(s, "a formula too large");
	return true;
}

static bool pair_chain(const sctx *s, const sarr *a, int k1, int k2, int64_t *nb, int *depth,
                       int *mlast);
static bool push_merged(sctx *s, sym_lines *L, const sym_reuse *x, int from, int *cap);

/* The state of b's lines in iterations t - 1 and t of loop l (class cls of g). */
static int carried_state(const sarr *b, int l, int64_t g, int cls)
{
	return b->role[l] == ROLE_ABSENT ? ST_SAME
	       : b->role[l] == ROLE_DISTINCT ? ST_DIFFER
	       : cls == 1 ? ST_SAME
	       : b->E == g ? ST_DIFFER : ST_MAYBE;
}

/* The reuse of a carried by loop l whose body walks a in several children by twin loops (a
 * buffer's body, then its copy in the next iteration): one class per position of the line
 * among the twins' blocks (nb[depth]; classes of the same distances merged). */
static bool carried_at(sctx *s, sym_lines *L, int ai, int l, int64_t g, const int64_t *nb,
                       int depth, int mlast, int *cap)
{
	const sarr *a = &s->arr[ai];
	for (int cls = g ? 1 : 0; cls <= (g ? 2 : 0); cls++) {
		sym_reuse x;
		memset(&x, 0, sizeof x);
		x.array = ai;
		x.kind = SYM_CARRIED;
		x.loop = l;
		x.ref = first_ref(s, a, first_stmt(s, a, l));
		x.g = g;
		x.cls = cls;
		x.posloop = -1;
		x.spatial = a->role[l] == ROLE_UNIT || a->inl[l];
		sym_poly it;
		if (!class_iters(s, a, l, g, cls, &it))
			return false;
		x.count = s->inst[l];
		if (!mul_into(s, &x.count, &it) || !mul_into(s, &x.count, &a->Dbody[mlast]))
			return false;
		if (x.count.n == 0)
			continue;
		int64_t at[SYM_PAIR_DEPTH] = {0};
		int from = L->n;
		for (;;) {
			sym_reuse y = x;
			y.at = true;
			for (int bi = 0; bi < s->na; bi++) {
				const sarr *b = &s->arr[bi];
				if (!b->nacc || !b->under[l])
					continue;
				int state = carried_state(b, l, g, cls);
				sym_poly blo, bhi;
				poly_zero(&blo);
				poly_zero(&bhi);
				s->cur_at = at;
				bool ok = window_body(s, a, b, l, state, POS_ANY, &blo, &bhi);
				s->cur_at = NULL;
				if (!ok ||
				    !add_capped(s, &y, &blo, &bhi, &b->Dbody[l], state == ST_SAME ? 1 : 2))
					return false;
			}
			if (!push_merged(s, L, &y, from, cap))
				return false;
			int d = depth - 1;
			while (d >= 0 && ++at[d] == nb[d])
				at[d--] = 0;
			if (d < 0)
				break;
		}
	}
	return true;
}

/* The reuse of a carried by loop l, in classes of iterations and blocks. */
static bool carried_classes(sctx *s, sym_lines *L, int ai, int l, int *cap)
{
	const sarr *a = &s->arr[ai];
	int64_t g = 0;
	for (int b = 0; b < s->na; b++)
		if (s->arr[b].nacc && s->arr[b].under[l] && s->arr[b].role[l] == ROLE_UNIT)
			g = gcd_i(g, s->arr[b].E);
	/* the first loop inside l on which a's line depends, and its blocks: split by the block
	 * of the reused line when there are surely two or more */
	int m = first_dep(s, a, l);
	sym_poly nblocks;
	bool split = false;
	if (m >= 0) {
		nblocks = s->r->trip[m];
		if (a->role[m] == ROLE_UNIT && !poly_scale(&nblocks, 1, a->E))
			return unsupported(s, "a formula too large");
		split = at_least(s, &nblocks, 2);
	}
	/* down the loops that leave a's line alone to the body whose children walk a apart */
	int fa, la, sb = l;
	for (;;) {
		a_kids(a, &s->body[sb], &fa, &la);
		int k = fa >= 0 ? s->body[sb].kid[fa] : -1;
		if (fa < 0 || fa != la || k < 0 || a->role[k] != ROLE_ABSENT)
			break;
		sb = k;
	}
	int64_t nb[SYM_PAIR_DEPTH];
	int depth, mlast = -1;
	if (fa >= 0 && fa != la &&
	    pair_chain(s, a, s->body[sb].kid[la], s->body[sb].kid[fa], nb, &depth, &mlast))
		return carried_at(s, L, ai, l, g, nb, depth, mlast, cap);
	for (int cls = g ? 1 : 0; cls <= (g ? 2 : 0); cls++)
		for (int pos = split ? POS_FIRST : POS_ANY; pos <= (split ? POS_LAST : POS_ANY); pos++) {
			sym_reuse x;
			memset(&x, 0, sizeof x);
			x.array = ai;
			x.kind = SYM_CARRIED;
			x.loop = l;
			x.ref = first_ref(s, a, first_stmt(s, a, l));
			x.g = g;
			x.cls = cls;
			x.pos = pos;
			x.posloop = m;
			x.spatial = a->role[l] == ROLE_UNIT || a->inl[l];
			sym_poly it;
			if (!class_iters(s, a, l, g, cls, &it))
				return false;
			x.count = s->inst[l];
			if (!mul_into(s, &x.count, &it))
				return false;
			if (pos == POS_ANY) {
				if (!mul_into(s, &x.count, &a->Dbody[l]))
					return false;
			} else {
				/* a's lines in one block of m */
				sym_poly per = a->Dbody[m];
				if (pos == POS_MIDDLE) {
					sym_poly two, mid;
					poly_const(&two, 2, 1);
					if (!poly_add(&mid, &nblocks, &two, -1) || !mul_into(s, &per, &mid))
						return unsupported(s, "a formula too large");
				}
				if (!mul_into(s, &x.count, &per))
					return false;
			}
			if (x.count.n == 0)
				continue;
			/* the window: the suffix of iteration t - 1 after the last touch of the line,
			 * the prefix of iteration t before its first */
			for (int bi = 0; bi < s->na; bi++) {
				const sarr *b = &s->arr[bi];
				if (!b->nacc || !b->under[l])
					continue;
				int state = b->role[l] == ROLE_ABSENT ? ST_SAME
				            : b->role[l] == ROLE_DISTINCT ? ST_DIFFER
				            : cls == 1 ? ST_SAME
				            : b->E == g ? ST_DIFFER : ST_MAYBE;
				sym_poly blo, bhi;
				poly_zero(&blo);
				poly_zero(&bhi);
				if (!window_body(s, a, b, l, state, x.pos, &blo, &bhi) ||
				    !add_capped(s, &x, &blo, &bhi, &b->Dbody[l], state == ST_SAME ? 1 : 2))
					return false;
			}
			if (!push_reuse(s, L, &x, cap))
				return false;
		}
	return true;
}

/* The levels of twin loops below children k1 and k2 (pair_level, then inside the blocks)
 * whose block counts are constants: nb[], their product in *lines; false when there are none,
 * more than SYM_PAIR_DEPTH, or more than 256 positions. *mlast: the innermost pair's m2. */
static bool pair_chain(const sctx *s, const sarr *a, int k1, int k2, int64_t *nb, int *depth,
                       int *mlast)
{
	int64_t total = 1;
	*depth = 0;
	int m1, m2;
	while (pair_level(s, a, k1, k2, &m1, &m2)) {
		int64_t n, d;
		if (*depth == SYM_PAIR_DEPTH || !poly_is_const(&s->r->trip[m2], &n, &d) || d != 1)
			return false;
		if (a->role[m2] == ROLE_UNIT)
			n /= a->E;
		total *= n;
		if (total > 256)
			return false;
		nb[(*depth)++] = n;
		*mlast = m2;
		int fa1, la1, fa2, la2;
		a_kids(a, &s->body[m1], &fa1, &la1);
		a_kids(a, &s->body[m2], &fa2, &la2);
		k1 = s->body[m1].kid[la1];
		k2 = s->body[m2].kid[fa2];
	}
	return *depth > 0;
}

/* One class of a sibling reuse: b's windows into x's distances. */
static bool sibling_window(sctx *s, sym_reuse *x, const sarr *a, int bi, int prev, int i,
                           const int64_t *at)
{
	const sbody *B = &s->body[bi];
	for (int q = 0; q < s->na; q++) {
		const sarr *b = &s->arr[q];
		if (!b->nacc)
			continue;
		bool lo_done = false;
		sym_poly klo, khi, plo, phi, blo, bhi;
		poly_zero(&klo);
		poly_zero(&khi);
		poly_zero(&plo);
		poly_zero(&phi);
		if (!kids_lines(s, b, B, prev + 1, i, &klo, &khi, &lo_done) ||
		    !pair_window(s, a, b, B->kid[prev], B->kid[i], ST_SAME, x->pos, at, 0, &plo, &phi))
			return false;
		blo = *poly_max(&plo, &klo);
		if (!poly_add(&bhi, &phi, &khi, 1))
			return unsupported(s, "a formula too large");
		if (!add_capped(s, x, &blo, &bhi, bi == ROOT ? &b->Droot : &b->Dbody[bi], 1))
			return false;
	}
	return true;
}

/* Push x, or add its count to an earlier class of the same reuse with the same distances
 * (from index from on). */
static bool push_merged(sctx *s, sym_lines *L, const sym_reuse *x, int from, int *cap)
{
	for (int c = from; c < L->n; c++) {
		sym_reuse *y = &L->r[c];
		if (y->ref == x->ref && poly_equal(&y->dlo, &x->dlo) && poly_equal(&y->dhi, &x->dhi))
			return poly_add(&y->count, &y->count, &x->count, 1) ||
			       unsupported(s, "a formula too large");
	}
	return push_reuse(s, L, x, cap);
}

/*
 * The reuse of a's lines in child i of body bi that child prev (the one before that holds a)
 * touched: one access per line of a in child i and execution of the body. Where a's line
 * changes inside them (a buffer's copy and body), the window depends on where the line lies:
 * one class per position of the line among the blocks of the twin loops that walk it (at most
 * 256; classes of the same distances merged), else by its block in the first of them (first,
 * middle, last).
 */
static bool sibling_pair(sctx *s, sym_lines *L, int ai, int bi, int prev, int i, int *cap)
{
	const sarr *a = &s->arr[ai];
	const sbody *B = &s->body[bi];
	sym_poly execs;
	poly_const(&execs, 1, 1);
	if (bi != ROOT && (!mul_into(s, &execs, &s->inst[bi]) || !mul_into(s, &execs, &s->r->trip[bi])))
		return false;
	sym_reuse x;
	memset(&x, 0, sizeof x);
	x.array = ai;
	x.kind = SYM_SIBLING;
	x.loop = bi == ROOT ? -1 : bi;
	int k = B->kid[i];
	x.ref = first_ref(s, a, k < 0 ? -k - 1 : first_stmt(s, a, k));
	int64_t nb[SYM_PAIR_DEPTH];
	int depth, mlast = -1;
	if (pair_chain(s, a, B->kid[prev], k, nb, &depth, &mlast)) {
		/* every position of the line: a mixed-radix count over the levels */
		int64_t at[SYM_PAIR_DEPTH] = {0};
		int from = L->n;
		for (;;) {
			sym_reuse y = x;
			y.at = true;
			y.count = a->Dbody[mlast];
			if (!mul_into(s, &y.count, &execs) || !sibling_window(s, &y, a, bi, prev, i, at) ||
			    !push_merged(s, L, &y, from, cap))
				return false;
			int d = depth - 1;
			while (d >= 0 && ++at[d] == nb[d])
				at[d--] = 0;
			if (d < 0)
				break;
		}
		return true;
	}
	int m1, m2;
	bool paired = pair_level(s, a, B->kid[prev], k, &m1, &m2);
	sym_poly nbp, per = a->Dbody[paired ? m2 : 0];
	bool split = false;
	if (paired) {
		nbp = s->r->trip[m2];
		if (a->role[m2] == ROLE_UNIT && !poly_scale(&nbp, 1, a->E))
			return unsupported(s, "a formula too large");
		split = at_least(s, &nbp, 2);
	}
	for (int pos = split ? POS_FIRST : POS_ANY; pos <= (split ? POS_LAST : POS_ANY); pos++) {
		sym_reuse y = x;
		y.pos = pos;
		y.posloop = paired ? m2 : -1;
		if (pos == POS_ANY)
			y.count = dnode(a, k);
		else {
			y.count = per;
			if (pos == POS_MIDDLE) {
				sym_poly two, mid;
				poly_const(&two, 2, 1);
				if (!poly_add(&mid, &nbp, &two, -1) || !mul_into(s, &y.count, &mid))
					return unsupported(s, "a formula too large");
			}
		}
		if (!mul_into(s, &y.count, &execs) || !sibling_window(s, &y, a, bi, prev, i, NULL))
			return false;
		if (y.count.n && !push_reuse(s, L, &y, cap))
			return false;
	}
	return true;
}

/* The reuse of a between the children of body bi that hold it (a's line is the same in all
 * of them): each later one finds the line in the one before. */
static bool sibling_classes(sctx *s, sym_lines *L, int ai, int bi, int *cap)
{
	const sarr *a = &s->arr[ai];
	const sbody *B = &s->body[bi];
	int prev = -1;
	for (int i = 0; i < B->n; i++) {
		if (!has(a, B->kid[i]))
			continue;
		if (prev >= 0 && !sibling_pair(s, L, ai, bi, prev, i, cap))
			return false;
		prev = i;
	}
	return true;
}

/* The reuse classes of storage ai at line size L->line. */
static bool array_classes(sctx *s, sym_lines *L, int ai, int *cap)
{
	const sarr *a = &s->arr[ai];
	sym_reuse x;
	memset(&x, 0, sizeof x);
	x.array = ai;
	x.kind = SYM_COLD;
	x.count = a->Droot;
	x.ref = first_ref(s, a, first_stmt(s, a, ROOT));
	if (!push_reuse(s, L, &x, cap))
		return false;
	/* an earlier access of the same execution: the storages in between */
	for (int si = 0; si < s->nst; si++)
		for (int i = a->first[si], prev = -1; a->cnt[si] && i <= a->last[si]; i++) {
			if (s->st[si].acc_array[i] != ai)
				continue;
			if (prev >= 0) {
				int64_t between = 0;
				for (int b = 0; b < s->na; b++)
					between += b != ai && in_range(s, si, b, prev + 1, i);
				memset(&x, 0, sizeof x);
				x.array = ai;
				x.kind = SYM_STMT;
				x.count = s->inst_st[si];
				x.ref = s->refs_ok ? s->st[si].ref[i] : -1;
				poly_const(&x.dlo, between, 1);
				x.dhi = x.dlo;
				if (!push_reuse(s, L, &x, cap))
					return false;
			}
			prev = i;
		}
	for (int l = 0; l < s->n; l++)
		if (a->under[l] && a->role[l] != ROLE_DISTINCT && !carried_classes(s, L, ai, l, cap))
			return false;
	/* between children: the bodies with two or more children that hold a */
	for (int bi = 0; bi <= s->n; bi++) {
		int b = bi == s->n ? ROOT : bi;
		if (b != ROOT && !a->under[b])
			continue;
		int fa, la;
		a_kids(a, &s->body[b], &fa, &la);
		if (fa >= 0 && fa != la && !sibling_classes(s, L, ai, b, cap))
			return false;
	}
	return true;
}

/* The first and last element part q reaches in dim d (of its subscript as it stands, or
 * flattened: d < 0), when the loops of that dim have constant trip counts. */
static bool part_range(const sctx *s, const sarr *a, int d, int64_t *lo, int64_t *hi)
{
	*lo = *hi = a->c[d];
	for (int j = 0; j < s->n; j++) {
		int64_t b = a->beta[d][j], tn, td;
		if (!b || a->twin[j] != j)
			continue;
		if (!poly_is_const(&s->r->trip[j], &tn, &td) || td != 1)
			return false;
		if (b < 0)
			*lo += b * (tn - 1);
		else
			*hi += b * (tn - 1);
	}
	return true;
}

/* Parts p and q of one storage never share a line: some dim whose ranges are constants keeps
 * them apart (other rows, or other lines of the unit-stride dim). */
static bool parts_apart(const sctx *s, const sarr *p, const sarr *q, int64_t epl)
{
	/* rows must be whole lines (array_lines requires it but of a buffer of constant size,
	 * which it reads as one dimension: rows that share lines) */
	for (int d = 0; d < p->rank; d++) {
		int64_t num, den;
		if (d != p->dc && poly_is_const(&p->stride[d], &num, &den) && num % (epl * den) != 0)
			return false;
	}
	for (int d = 0; d < p->rank; d++) {
		int64_t plo, phi, qlo, qhi;
		if (!part_range(s, p, d, &plo, &phi) || !part_range(s, q, d, &qlo, &qhi))
			continue;
		if (d == p->dc) {
			plo = plo / epl;
			phi = phi / epl;
			qlo = qlo / epl;
			qhi = qhi / epl;
		}
		if (plo >= 0 && qlo >= 0 && (phi < qlo || qhi < plo))
			return true;
	}
	return false;
}

static bool line_classes(sctx *s, sym_lines *L)
{
	for (int p = s->norig; p < s->na; p++)
		for (int q = 0; q < p; q++)
			if (s->orig[q] == s->orig[p] && s->arr[q].nacc && s->arr[p].nacc &&
			    !parts_apart(s, &s->arr[p], &s->arr[q], L->line / s->r->elem[s->orig[p]]))
				return unsupported(s, "one array with different subscripts in different "
				                      "statements whose lines meet (shifted uses, or the tail "
				                      "of a split sharing a line with the main part): their "
				                      "union is not derived");
	for (int a = 0; a < s->na; a++)
		if (s->arr[a].nacc && !array_lines(s, &s->arr[a], L->line, s->r->elem[s->orig[a]]))
			return false;
	int cap = 0;
	for (int a = 0; a < s->na; a++)
		if (s->arr[a].nacc && !array_classes(s, L, a, &cap))
			return false;
	return true;
}

/* ------------------------------------------------------------ entry */

void sym_result_free(sym_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nlines; i++)
		free(r->lines[i].r);
	free(r->array_name);
	free(r->elem);
	free(r->nacc);
	free(r->count);
	memset(r, 0, sizeof *r);
}

/* The reads of expression e in trace order (the node, then its arguments): references of
 * statement si from access *idx on. */
static void ref_reads(sctx *s, const ir_expr *e, int si, int *idx)
{
	if (!e || !s->refs_ok)
		return;
	if (e->kind == EX_ACCESS) {
		if (*idx >= s->st[si].nacc || s->r->nrefs == SYM_MAXREFS) {
			s->refs_ok = false;
			return;
		}
		sym_ref *f = &s->r->refs[s->r->nrefs];
		f->array = e->id;
		f->line = e->pos.line;
		f->col = e->pos.col;
		f->access = "read";
		s->st[si].ref[(*idx)++] = s->r->nrefs++;
	}
	for (int i = 0; i < e->nargs; i++)
		ref_reads(s, e->args[i], si, idx);
}

/* The source reference of every access, in the model's order of a statement's accesses (the
 * reads as written, then an op='s read of its element, then the write); r->nrefs stays 0
 * where they do not match. */
static void find_refs(sctx *s)
{
	s->refs_ok = true;
	s->r->nrefs = 0;
	for (int si = 0; si < s->nst && s->refs_ok; si++) {
		const ir_node *n = s->st[si].lt->stmt;
		int idx = 0;
		if (!n) {
			s->refs_ok = false;
			break;
		}
		ref_reads(s, n->rhs, si, &idx);
		if (s->refs_ok && n->kind == ND_STMT && n->lhs) {
			int writes = n->op == AS_SET ? 1 : 2;
			if (idx + writes > s->st[si].nacc || s->r->nrefs == SYM_MAXREFS) {
				s->refs_ok = false;
				break;
			}
			sym_ref *f = &s->r->refs[s->r->nrefs];
			f->array = n->lhs->id;
			f->line = n->lhs->pos.line;
			f->col = n->lhs->pos.col;
			f->access = writes == 2 ? "update" : "write";
			for (int w = 0; w < writes; w++)
				s->st[si].ref[idx++] = s->r->nrefs;
			s->r->nrefs++;
		}
		/* the model's storage of each access must be the reference's array */
		for (int i = 0; s->refs_ok && i < s->st[si].nacc; i++)
			s->refs_ok = i < idx &&
			             s->r->refs[s->st[si].ref[i]].array == s->orig[s->st[si].acc_array[i]];
	}
	if (!s->refs_ok)
		s->r->nrefs = 0;
}

/* One try at the moduli of r: false with s->retry when one must grow, s->why when the
 * kernel is not covered, s->nomem. */
static bool analyse_once(sctx *s, const sim_spec *spec)
{
	sym_result *r = s->r;
	int path[SYM_MAXLOOPS];
	if (!build_tree(s, s->t->roots, s->t->nroots, ROOT, path, 0) || !check_point(s, 0) ||
	    !check_point(s, 1))
		return false;
	for (int a = 0; a < s->na; a++)
		if (s->arr[a].nacc && !array_twins(s, &s->arr[a]))
			return false;
	r->nloops = s->n;
	r->narrays = s->norig;
	r->file = s->k->file;
	find_refs(s);
	r->array_name = calloc((size_t)s->na + 1, sizeof *r->array_name);
	r->elem = calloc((size_t)s->na + 1, sizeof *r->elem);
	r->nacc = calloc((size_t)s->na + 1, sizeof *r->nacc);
	if (!r->array_name || !r->elem || !r->nacc) {
		s->nomem = true;
		return false;
	}
	r->count = calloc((size_t)s->na + 1, sizeof *r->count);
	if (!r->count) {
		s->nomem = true;
		return false;
	}
	for (int a = 0; a < s->norig; a++) {
		r->array_name[a] = s->t->arrays[a].name;
		r->elem[a] = (int64_t)ct_dtype_size(s->t->arrays[a].type);
	}
	for (int q = 0; q < s->na; q++) {
		int a = s->orig[q];
		r->nacc[a] += s->arr[q].nacc;
		if (s->arr[q].nacc)
			r->count[a] = s->arr[q].count;
	}
	/* executions: the product of the enclosing trips (loops in preorder: parents first) */
	for (int l = 0; l < s->n; l++) {
		int p = s->lparent[l];
		if (p < 0)
			poly_const(&s->inst[l], 1, 1);
		else if (!poly_mul(&s->inst[l], &s->inst[p], &r->trip[p]))
			return unsupported(s, "a formula too large");
	}
	poly_zero(&r->accesses);
	for (int si = 0; si < s->nst; si++) {
		const sstmt *st = &s->st[si];
		if (st->depth == 0)
			poly_const(&s->inst_st[si], 1, 1);
		else if (!poly_mul(&s->inst_st[si], &s->inst[st->path[st->depth - 1]],
		                   &r->trip[st->path[st->depth - 1]]))
			return unsupported(s, "a formula too large");
		if (!lin(s, &r->accesses, st->nacc, 1, &s->inst_st[si]))
			return false;
	}
	for (int l = 0; l < spec->nlevels; l++) {
		bool seen = false;
		for (int i = 0; i < r->nlines; i++)
			seen |= r->lines[i].line == spec->level[l].line;
		if (seen)
			continue;
		sym_lines *L = &r->lines[r->nlines++];
		L->line = spec->level[l].line;
		s->why = NULL;
		if (!line_classes(s, L)) {
			if (s->retry || s->nomem)
				return false;
			L->why = s->why;
			free(L->r);
			L->r = NULL;
			L->n = 0;
		}
	}
	s->why = NULL;
	return true;
}

ct_status sym_analyse(ct_looptree *t, const sim_spec *spec, sym_result *r)
{
	memset(r, 0, sizeof *r);
	r->spec = *spec;
	ct_kernel *k = t->k;
	if (k->affine_bounds) {
		/* the trip counts below are read from rectangular bounds */
		r->why = "loops with affine bounds (bounds that use enclosing indices or min/max; issue #31): "
		         "a formula over a triangular or banded space needs its points counted as polynomials "
		         "in the params (Ehrhart counting), which the formulas do not do yet; `cachet predict` "
		         "with values for the params counts them by simulation";
		return CT_OK;
	}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime) {
			if (r->nvars == SYM_MAXV) {
				r->why = "more than 8 runtime params";
				return CT_OK;
			}
			r->var_param[r->nvars] = p;
			r->var_name[r->nvars] = k->params[p].name;
			r->modulus[r->nvars++] = 1;
		}
	int64_t saved[SYM_MAXV];
	bool saved_has[SYM_MAXV];
	for (int v = 0; v < r->nvars; v++) {
		saved[v] = k->params[r->var_param[v]].value;
		saved_has[v] = k->params[r->var_param[v]].has_value;
	}
	ct_status st = CT_OK;
	for (int attempt = 0;; attempt++) {
		sctx s;
		memset(&s, 0, sizeof s);
		s.t = t;
		s.k = k;
		s.r = r;
		for (int v = 0; v < SYM_MAXV; v++)
			s.grow[v] = 1;
		bool ok = analyse_once(&s, spec);
		free(s.arr);
		if (s.nomem) {
			st = ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
			break;
		}
		if (ok)
			break;
		if (!s.retry) {
			r->why = s.why ? s.why : "not derived";
			break;
		}
		/* a modulus must grow: start again on the finer lattice */
		int64_t mod[SYM_MAXV];
		bool big = attempt >= 8;
		for (int v = 0; v < r->nvars; v++) {
			mod[v] = r->modulus[v] / gcd_i(r->modulus[v], s.grow[v]) * s.grow[v];
			big |= mod[v] > (1 << 20);
		}
		int nv = r->nvars;
		const char *names[SYM_MAXV];
		int params[SYM_MAXV];
		memcpy(names, r->var_name, sizeof names);
		memcpy(params, r->var_param, sizeof params);
		sym_result_free(r);
		r->spec = *spec;
		r->nvars = nv;
		memcpy(r->var_name, names, sizeof names);
		memcpy(r->var_param, params, sizeof params);
		memcpy(r->modulus, mod, sizeof mod);
		if (big) {
			r->why = "the formulas would need the runtime params on too coarse a lattice";
			break;
		}
	}
	for (int v = 0; v < r->nvars; v++) {
		k->params[r->var_param[v]].value = saved[v];
		k->params[r->var_param[v]].has_value = saved_has[v];
	}
	if (st)
		sym_result_free(r);
	return st;
}

/* ------------------------------------------------------------ evaluation */

/* Class x counts for `who`: everything (< 0), storage who (< narrays), or reference
 * who - narrays. */
static bool in_filter(const sym_result *r, const sym_reuse *x, int who)
{
	if (who < 0)
		return true;
	if (who < r->narrays)
		return x->array == who;
	return x->ref == who - r->narrays;
}

static const sym_lines *lines_of(const sym_result *r, int64_t line)
{
	for (int i = 0; i < r->nlines; i++)
		if (r->lines[i].line == line)
			return &r->lines[i];
	return NULL;
}

const char *sym_level_why(const sym_result *r, int l)
{
	if (r->why)
		return r->why;
	const sim_level *lv = &r->spec.level[l];
	const sym_lines *L = lines_of(r, lv->line);
	if (!L)
		return "not analysed";
	if (L->why)
		return L->why;
	return NULL;
}

bool sym_level_setassoc(const sym_result *r, int l)
{
	const sim_level *lv = &r->spec.level[l];
	return lv->ways > 0 && lv->size / lv->line / lv->ways > 1;
}

/* A set-associative level at vals: whether every set can hold all the lines of the storages
 * that map to it (sum over storages of ceil(lines / sets) <= ways), so that no line is ever
 * evicted and every access misses just when its line is new. */
static bool level_fits(const sym_result *r, int l, const int64_t *vals)
{
	const sim_level *lv = &r->spec.level[l];
	int64_t sets = lv->size / lv->line / lv->ways, per_set = 0;
	for (int a = 0; a < r->narrays; a++) {
		int64_t n;
		if (!r->nacc[a])
			continue;
		if (!sym_poly_eval(&r->count[a], vals, &n) || n < 0 || n > INT64_MAX / 16 / r->elem[a])
			return false;
		int64_t lines = (n * r->elem[a] + lv->line - 1) / lv->line;
		per_set += (lines + sets - 1) / sets;
	}
	return per_set <= lv->ways;
}

bool sym_in_domain(const sym_result *r, const int64_t *vals)
{
	if (r->why)
		return false;
	for (int v = 0; v < r->nvars; v++)
		if (vals[v] < r->modulus[v] || vals[v] % r->modulus[v])
			return false;
	for (int l = 0; l < r->nloops; l++) {
		int64_t n;
		if (!sym_poly_eval(&r->trip[l], vals, &n) || n < 1)
			return false;
	}
	return true;
}

/* Class x at capacity C lines: 1 miss, 0 hit, 2 not decided; -1 when it cannot be
 * evaluated. *count its accesses. */
static int decide(const sym_reuse *x, int64_t C, const int64_t *vals, int64_t *count)
{
	if (!sym_poly_eval(&x->count, vals, count))
		return -1;
	if (x->kind == SYM_COLD)
		return 1;
	int64_t lo, hi;
	if (!sym_poly_eval(&x->dlo, vals, &lo) || !sym_poly_eval(&x->dhi, vals, &hi))
		return -1;
	return lo >= C ? 1 : hi < C ? 0 : 2;
}

bool sym_level_misses(const sym_result *r, int l, int array, const int64_t *vals, int64_t *lo,
                      int64_t *hi, uint64_t *sig)
{
	if (sym_level_why(r, l) || !sym_in_domain(r, vals))
		return false;
	const sim_level *lv = &r->spec.level[l];
	const sym_lines *L = lines_of(r, lv->line);
	int64_t C = lv->size / lv->line;
	uint64_t h = 1469598103934665603ull;
	bool assoc = sym_level_setassoc(r, l);
	if (assoc && !level_fits(r, l, vals))
		return false;
	/* a set-associative level that evicts nothing: every line misses once */
	if (assoc)
		C = INT64_MAX;
	*lo = *hi = 0;
	for (int i = 0; i < L->n; i++) {
		const sym_reuse *x = &L->r[i];
		if (!in_filter(r, x, array))
			continue;
		int64_t c;
		int d = decide(x, C, vals, &c);
		if (d < 0)
			return false;
		if (d == 1)
			*lo += c;
		if (d >= 1)
			*hi += c;
		h = (h ^ (uint64_t)(i * 4 + d)) * 1099511628211ull;
	}
	if (sig)
		*sig = h;
	return true;
}

/* ------------------------------------------------------------ rendering */

/* Chambers of one variable: runs of n (the variable = modulus * n) with the same classes
 * missing. */
#define SYM_SCAN_MAX 16384
#define SYM_MAX_CHAMBERS 64

typedef struct chamber {
	int64_t from, to;          /* values of the variable; to = -1: and beyond */
	bool derived;              /* false: a set-associative level that evicts there */
	sym_poly lo, hi;           /* the misses there: at least, at most */
} chamber;

/* Whether class x's decision at n stays for every larger n (distances that only grow). */
static bool stable(const sym_reuse *x, int d)
{
	int64_t num, den;
	if (x->kind == SYM_COLD)
		return true;
	if (d == 1)
		return poly_monotone(&x->dlo);
	if (d == 0)
		return poly_is_const(&x->dhi, &num, &den);
	/* not decided, for good when both bounds are constants */
	return poly_is_const(&x->dlo, &num, &den) && poly_is_const(&x->dhi, &num, &den);
}

/* The chambers of level l (array, or all < 0) of a one-variable r; 0 when the scan does not
 * settle (then none are given), -1 when out of memory. */
static int chambers(const sym_result *r, int l, int array, chamber *out)
{
	const sim_level *lv = &r->spec.level[l];
	const sym_lines *L = lines_of(r, lv->line);
	bool assoc = sym_level_setassoc(r, l);
	/* a set-associative level that evicts nothing misses the cold lines only */
	int64_t C = assoc ? INT64_MAX : lv->size / lv->line;
	/* where it evicts, it does so for every larger value when the storages only grow */
	bool grows = true;
	for (int a = 0; a < r->narrays; a++)
		grows &= !r->nacc[a] || poly_monotone(&r->count[a]);
	int nc = 0;
	int8_t *prev = calloc((size_t)L->n + 2, 1), *cur = calloc((size_t)L->n + 2, 1);
	if (!prev || !cur) {
		free(prev);
		free(cur);
		return -1;
	}
	int res = 0;
	for (int64_t n = 1; n <= SYM_SCAN_MAX; n++) {
		int64_t v = r->modulus[0] * n, c;
		if (!sym_in_domain(r, &v))
			continue;
		bool fits = !assoc || level_fits(r, l, &v);
		bool settled = true;
		memset(cur, 0, (size_t)L->n + 1);
		cur[L->n] = fits;
		for (int i = 0; i < L->n && fits; i++) {
			const sym_reuse *x = &L->r[i];
			if (!in_filter(r, x, array))
				continue;
			int d = decide(x, C, &v, &c);
			if (d < 0)
				goto out;
			cur[i] = (int8_t)d;
			settled &= stable(x, d);
		}
		/* a level that fits now may evict at larger values */
		if (assoc)
			settled = !fits && grows;
		if (nc == 0 || memcmp(prev, cur, (size_t)L->n + 1) != 0) {
			if (nc == SYM_MAX_CHAMBERS)
				goto out;
			chamber *ch = &out[nc++];
			ch->from = v;
			ch->to = v;
			ch->derived = fits;
			poly_zero(&ch->lo);
			poly_zero(&ch->hi);
			for (int i = 0; i < L->n && fits; i++) {
				const sym_reuse *x = &L->r[i];
				if (!in_filter(r, x, array))
					continue;
				if ((cur[i] == 1 && !poly_add(&ch->lo, &ch->lo, &x->count, 1)) ||
				    (cur[i] >= 1 && !poly_add(&ch->hi, &ch->hi, &x->count, 1)))
					goto out;
			}
			memcpy(prev, cur, (size_t)L->n + 1);
		} else
			out[nc - 1].to = v;
		if (settled) {
			out[nc - 1].to = -1;
			res = nc;
			break;
		}
	}
out:
	free(prev);
	free(cur);
	return res;
}

/* cold + sum over classes of [distance >= C] * count, with the least (hi false) or the most
 * distances. */
static bool poly_same(const sym_poly *a, const sym_poly *b);

/* Where reference f stands: FILE:LINE:COL, or the plan's copy loops (a cache buffer's copy,
 * zero-fill or reduce statement, which the source does not write). */
static void ref_where(const sym_result *r, int f, char *where, size_t n)
{
	if (r->refs[f].line <= 0)
		snprintf(where, n, "the plan's copy loops of %s", r->array_name[r->refs[f].array]);
	else
		snprintf(where, n, "%s:%d:%d", r->file ? r->file : "-", r->refs[f].line, r->refs[f].col);
}

/* Distance d is at least C everywhere on the domain (a polynomial that does not decrease,
 * at least C at the domain's least point), or below it everywhere (a constant). */
static bool always_at_least(const sym_result *r, const sym_poly *d, int64_t C)
{
	int64_t v;
	return poly_monotone(d) && sym_poly_eval(d, r->modulus, &v) && v >= C;
}

static void iverson(ct_buf *b, const sym_result *r, const sym_lines *L, int array, int64_t C,
                    bool hi)
{
	/* the cold misses and the classes whose (constant) distance decides them */
	sym_poly sure;
	poly_zero(&sure);
	for (int i = 0; i < L->n; i++) {
		const sym_reuse *x = &L->r[i];
		if (!in_filter(r, x, array))
			continue;
		int64_t num, den;
		const sym_poly *d = hi ? &x->dhi : &x->dlo;
		if (x->kind == SYM_COLD || (poly_is_const(d, &num, &den) && num >= C * den) ||
		    always_at_least(r, d, C))
			poly_add(&sure, &sure, &x->count, 1);
	}
	poly_print(b, &sure, r);
	/* the others, one bracket per distance (the classes of one distance summed) */
	for (int i = 0; i < L->n; i++) {
		const sym_reuse *x = &L->r[i];
		if (!in_filter(r, x, array) || x->kind == SYM_COLD)
			continue;
		int64_t num, den;
		const sym_poly *d = hi ? &x->dhi : &x->dlo;
		if (poly_is_const(d, &num, &den) || always_at_least(r, d, C))
			continue;
		bool before = false;
		for (int q = 0; q < i && !before; q++) {
			const sym_reuse *y = &L->r[q];
			before = in_filter(r, y, array) && y->kind != SYM_COLD &&
			         poly_same(hi ? &y->dhi : &y->dlo, d);
		}
		if (before)
			continue;
		sym_poly sum = x->count;
		for (int q = i + 1; q < L->n; q++) {
			const sym_reuse *y = &L->r[q];
			if (in_filter(r, y, array) && y->kind != SYM_COLD &&
			    poly_same(hi ? &y->dhi : &y->dlo, d))
				poly_add(&sum, &sum, &y->count, 1);
		}
		ct_buf_puts(b, " + [");
		poly_print(b, d, r);
		ct_buf_printf(b, " >= %lld] * (", (long long)C);
		poly_print(b, &sum, r);
		ct_buf_puts(b, ")");
	}
}

static bool poly_same(const sym_poly *a, const sym_poly *b)
{
	sym_poly d;
	return poly_add(&d, a, b, -1) && d.n == 0;
}

/* A class whose distance is a range, not one polynomial. */
static bool is_range(const sym_reuse *x)
{
	return x->kind != SYM_COLD && !poly_same(&x->dlo, &x->dhi);
}


static char *poly_str(const sym_poly *p, const sym_result *r)
{
	ct_buf b;
	ct_buf_init(&b);
	poly_print(&b, p, r);
	return ct_buf_take(&b);
}

static const char *pos_name(int pos)
{
	return pos == POS_FIRST ? "first" : pos == POS_LAST ? "last" : "middle";
}

static void class_name(ct_buf *b, const sym_result *r, const sym_reuse *x)
{
	if (x->kind == SYM_COLD) {
		ct_buf_puts(b, "cold");
		return;
	}
	if (x->kind == SYM_STMT) {
		ct_buf_puts(b, "same statement execution");
		return;
	}
	if (x->kind == SYM_SIBLING) {
		ct_buf_printf(b, "earlier sibling in %s", x->loop < 0 ? "the run" : r->loop_name[x->loop]);
		if (x->pos)
			ct_buf_printf(b, ", line in the %s block of %s", pos_name(x->pos),
			              r->loop_name[x->posloop]);
		return;
	}
	ct_buf_printf(b, "carried by %s%s", r->loop_name[x->loop], x->spatial ? " (spatial)" : "");
	if (x->cls)
		ct_buf_printf(b, ", %s %% %lld %s 0", r->loop_name[x->loop], (long long)x->g,
		              x->cls == 1 ? "!=" : "==");
	if (x->pos)
		ct_buf_printf(b, ", line in the %s block of %s", pos_name(x->pos), r->loop_name[x->posloop]);
}

static void domain_text(ct_buf *b, const sym_result *r)
{
	for (int v = 0; v < r->nvars; v++) {
		if (v)
			ct_buf_puts(b, ", ");
		if (r->modulus[v] > 1)
			ct_buf_printf(b, "%s %% %lld == 0, ", r->var_name[v], (long long)r->modulus[v]);
		ct_buf_printf(b, "%s >= %lld", r->var_name[v], (long long)r->modulus[v]);
	}
	if (!r->nvars)
		ct_buf_puts(b, "no runtime params (every count is a number)");
}

/* ---- text */

/* A set-associative level's condition for evicting nothing: sum over the storages of
 * ceil(lines / sets) <= ways. */
static void fits_text(ct_buf *b, const sym_result *r, int l)
{
	const sim_level *lv = &r->spec.level[l];
	int64_t sets = lv->size / lv->line / lv->ways;
	bool first = true;
	for (int a = 0; a < r->narrays; a++) {
		if (!r->nacc[a])
			continue;
		sym_poly q = r->count[a];
		poly_scale(&q, r->elem[a], lv->line * sets);
		ct_buf_printf(b, "%sceil(", first ? "" : " + ");
		poly_print(b, &q, r);
		ct_buf_puts(b, ")");
		first = false;
	}
	ct_buf_printf(b, " <= %lld", (long long)lv->ways);
}

/* The cold misses of `who` (the misses of a level that evicts nothing). */
static void cold_poly(const sym_result *r, const sym_lines *L, int who, sym_poly *p)
{
	poly_zero(p);
	for (int i = 0; i < L->n; i++)
		if (in_filter(r, &L->r[i], who) && L->r[i].kind == SYM_COLD)
			poly_add(p, p, &L->r[i].count, 1);
}

static void text_pieces(ct_buf *b, const sym_result *r, int l, int array, const char *indent)
{
	const sym_lines *L = lines_of(r, r->spec.level[l].line);
	int64_t C = r->spec.level[l].size / r->spec.level[l].line;
	if (sym_level_setassoc(r, l)) {
		sym_poly cold;
		cold_poly(r, L, array, &cold);
		ct_buf_printf(b, "%swhere no line is evicted (", indent);
		fits_text(b, r, l);
		ct_buf_puts(b, "): misses = ");
		poly_print(b, &cold, r);
		ct_buf_printf(b, "\n%selsewhere not derived (conflict misses)\n", indent);
	} else {
		ct_buf lo, hi;
		ct_buf_init(&lo);
		ct_buf_init(&hi);
		iverson(&lo, r, L, array, C, false);
		iverson(&hi, r, L, array, C, true);
		char *los = ct_buf_take(&lo), *his = ct_buf_take(&hi);
		if (los && his && strcmp(los, his) == 0)
			ct_buf_printf(b, "%smisses = %s\n", indent, los);
		else
			ct_buf_printf(b, "%sat least %s\n%sat most  %s\n", indent, los ? los : "?", indent,
			              his ? his : "?");
		free(los);
		free(his);
	}
	if (r->nvars != 1)
		return;
	chamber ch[SYM_MAX_CHAMBERS];
	int nc = chambers(r, l, array, ch);
	for (int i = 0; i < nc; i++) {
		const char *v = r->var_name[0];
		if (ch[i].to < 0)
			ct_buf_printf(b, "%s  %s >= %lld: ", indent, v, (long long)ch[i].from);
		else if (ch[i].to == ch[i].from)
			ct_buf_printf(b, "%s  %s = %lld: ", indent, v, (long long)ch[i].from);
		else
			ct_buf_printf(b, "%s  %s = %lld .. %lld: ", indent, v, (long long)ch[i].from,
			              (long long)ch[i].to);
		if (!ch[i].derived) {
			ct_buf_puts(b, "not derived (lines evicted: conflict misses)\n");
			continue;
		}
		bool exact = poly_same(&ch[i].lo, &ch[i].hi);
		if (!exact)
			ct_buf_puts(b, "between ");
		poly_print(b, &ch[i].lo, r);
		if (!exact) {
			ct_buf_puts(b, " and ");
			poly_print(b, &ch[i].hi, r);
			ct_buf_puts(b, " (not decided: a distance range holds the capacity)");
		}
		ct_buf_puts(b, "\n");
	}
}

/* With -D values for every runtime param: level l's misses there, from the formula. */
static void at_values(ct_buf *b, const sym_result *r, const ct_kernel *k, int l)
{
	int64_t vals[SYM_MAXV];
	if (!r->nvars)
		return;
	for (int v = 0; v < r->nvars; v++) {
		const ir_param *p = &k->params[r->var_param[v]];
		if (!p->has_value)
			return;
		vals[v] = p->value;
	}
	ct_buf_puts(b, "      at");
	for (int v = 0; v < r->nvars; v++)
		ct_buf_printf(b, "%s %s = %lld", v ? "," : "", r->var_name[v], (long long)vals[v]);
	int64_t lo, hi;
	if (!sym_in_domain(r, vals))
		ct_buf_puts(b, ": not derived (off the domain's lattice)\n");
	else if (!sym_level_misses(r, l, -1, vals, &lo, &hi, NULL))
		ct_buf_puts(b, ": not derived (lines evicted: conflict misses)\n");
	else if (lo == hi)
		ct_buf_printf(b, ": %lld\n", (long long)lo);
	else
		ct_buf_printf(b, ": between %lld and %lld\n", (long long)lo, (long long)hi);
}

static void render_text(ct_buf *b, const sym_result *r, const ct_kernel *k)
{
	ct_buf_printf(b, "kernel %s: symbolic misses", ct_kernel_name(k));
	if (r->nvars) {
		ct_buf_puts(b, " in ");
		for (int v = 0; v < r->nvars; v++)
			ct_buf_printf(b, "%s%s", v ? ", " : "", r->var_name[v]);
	}
	ct_buf_puts(b, "\n");
	if (r->why) {
		ct_buf_printf(b, "  unsupported: %s\n", r->why);
		return;
	}
	ct_buf_puts(b, "  domain: ");
	domain_text(b, r);
	ct_buf_puts(b, r->nvars ? " (elsewhere not derived: partial lines or tails)\n  loops:"
	                        : "\n  loops:");
	/* preorder: the loops on the current path, with their body's brace opened or not */
	int path[64], npath = 0;
	bool opened[64];
	for (int l = 0; l < r->nloops; l++) {
		while (npath > 0 && path[npath - 1] != r->loop_parent[l])
			if (opened[--npath])
				ct_buf_puts(b, " }");
		if (npath > 0 && !opened[npath - 1]) {
			ct_buf_puts(b, " {");
			opened[npath - 1] = true;
		}
		ct_buf_printf(b, " %s (", r->loop_name[l]);
		poly_print(b, &r->trip[l], r);
		ct_buf_puts(b, ")");
		path[npath] = l;
		opened[npath++] = false;
	}
	while (npath > 0)
		if (opened[--npath])
			ct_buf_puts(b, " }");
	ct_buf_puts(b, "\n  accesses: ");
	poly_print(b, &r->accesses, r);
	ct_buf_puts(b, "\n");
	for (int i = 0; i < r->nlines; i++) {
		const sym_lines *L = &r->lines[i];
		ct_buf_printf(b, "  reuse at %lld-byte lines (count: accesses; distance: lines)\n",
		              (long long)L->line);
		if (L->why) {
			ct_buf_printf(b, "    unsupported: %s\n", L->why);
			continue;
		}
		int last = -1;
		for (int j = 0; j < L->n; j++) {
			const sym_reuse *x = &L->r[j];
			if (x->array != last) {
				last = x->array;
				bool before = false;
				for (int q = 0; q < j && !before; q++)
					before = L->r[q].array == x->array;
				/* a split's tail reaches other elements: a part of the array of its own */
				if (before)
					ct_buf_printf(b, "    %s, the part other statements reach (other lines):\n",
					              r->array_name[x->array]);
				else
					ct_buf_printf(b, "    %s: %d access%s in the statements\n",
					              r->array_name[x->array], r->nacc[x->array],
					              r->nacc[x->array] == 1 ? "" : "es");
			}
			ct_buf_puts(b, "      ");
			class_name(b, r, x);
			/* the classes of single positions of a line with one count: one line */
			int e = j;
			while (x->at && e + 1 < L->n && L->r[e + 1].at && L->r[e + 1].array == x->array &&
			       L->r[e + 1].kind == x->kind && L->r[e + 1].loop == x->loop &&
			       L->r[e + 1].cls == x->cls && poly_same(&L->r[e + 1].count, &x->count))
				e++;
			if (e > j) {
				ct_buf_printf(b, ", by the line's position (%d classes): count ", e - j + 1);
				poly_print(b, &x->count, r);
				ct_buf_puts(b, " each, distance");
				for (int q = j; q <= e; q++) {
					ct_buf_puts(b, q > j ? ", " : " ");
					poly_print(b, &L->r[q].dlo, r);
					if (is_range(&L->r[q])) {
						ct_buf_puts(b, " .. ");
						poly_print(b, &L->r[q].dhi, r);
					}
				}
				ct_buf_puts(b, "\n");
				j = e;
				continue;
			}
			ct_buf_puts(b, ": count ");
			poly_print(b, &x->count, r);
			if (x->kind != SYM_COLD) {
				ct_buf_puts(b, ", distance ");
				poly_print(b, &x->dlo, r);
				if (is_range(x)) {
					ct_buf_puts(b, " .. ");
					poly_print(b, &x->dhi, r);
				}
			}
			ct_buf_puts(b, "\n");
		}
	}
	for (int l = 0; l < r->spec.nlevels; l++) {
		const sim_level *lv = &r->spec.level[l];
		ct_buf_printf(b, "  L%d %lld bytes, line %lld, %s (%lld lines)\n", l + 1, (long long)lv->size,
		              (long long)lv->line,
		              lv->ways ? "set-associative" : "fully associative",
		              (long long)(lv->size / lv->line));
		const char *why = sym_level_why(r, l);
		if (why) {
			ct_buf_printf(b, "    unsupported: %s\n", why);
			continue;
		}
		ct_buf_puts(b, "    all arrays:\n");
		text_pieces(b, r, l, -1, "      ");
		at_values(b, r, k, l);
		for (int a = 0; a < r->narrays; a++)
			if (r->nacc[a]) {
				ct_buf_printf(b, "    %s:\n", r->array_name[a]);
				text_pieces(b, r, l, a, "      ");
				/* an array of several references: each one's share (the one that touches a
				 * line first in each reuse) */
				int nref = 0;
				for (int f = 0; f < r->nrefs; f++)
					nref += r->refs[f].array == a;
				for (int f = 0; nref > 1 && f < r->nrefs; f++)
					if (r->refs[f].array == a) {
						char where[512];
						ref_where(r, f, where, sizeof where);
						ct_buf_printf(b, "      %s (%s):\n", where, r->refs[f].access);
						text_pieces(b, r, l, r->narrays + f, "        ");
					}
			}
	}
}

/* ---- JSON */

static json_t *jpoly(const sym_poly *p, const sym_result *r)
{
	char *s = poly_str(p, r);
	json_t *j = ct_json_str_or_null(s);
	free(s);
	return j;
}

static json_t *json_misses(const sym_result *r, int l, int array, bool *ok)
{
	const sym_lines *L = lines_of(r, r->spec.level[l].line);
	int64_t C = r->spec.level[l].size / r->spec.level[l].line;
	json_t *o = json_object();
	bool assoc = sym_level_setassoc(r, l);
	for (int hi = 0; hi < 2; hi++) {
		ct_buf b;
		ct_buf_init(&b);
		if (assoc) {
			sym_poly cold;
			cold_poly(r, L, array, &cold);
			poly_print(&b, &cold, r);
		} else
			iverson(&b, r, L, array, C, hi);
		char *s = ct_buf_take(&b);
		ct_json_set(o, hi ? "at_most" : "at_least", ct_json_str_or_null(s), ok);
		free(s);
	}
	if (assoc) {
		ct_buf b;
		ct_buf_init(&b);
		fits_text(&b, r, l);
		char *s = ct_buf_take(&b);
		ct_json_set(o, "where", ct_json_str_or_null(s), ok);
		free(s);
	}
	json_t *pieces = json_array();
	if (r->nvars == 1) {
		chamber ch[SYM_MAX_CHAMBERS];
		int nc = chambers(r, l, array, ch);
		for (int i = 0; i < nc; i++) {
			json_t *p = json_object();
			ct_json_set(p, "from", json_integer(ch[i].from), ok);
			ct_json_set(p, "to", ch[i].to < 0 ? json_null() : json_integer(ch[i].to), ok);
			ct_json_set(p, "misses", ch[i].derived ? jpoly(&ch[i].lo, r) : json_null(), ok);
			ct_json_set(p, "misses_max", ch[i].derived ? jpoly(&ch[i].hi, r) : json_null(), ok);
			bool exact = ch[i].derived && poly_same(&ch[i].lo, &ch[i].hi);
			ct_json_set(p, "exact", json_boolean(exact), ok);
			ct_json_push(pieces, p, ok);
		}
	}
	ct_json_set(o, "pieces", pieces, ok);
	return o;
}

/* With -D values for every runtime param: level l's misses there ({"misses", "misses_max"},
 * null where not derived); NULL without values. */
static json_t *json_at(const sym_result *r, const ct_kernel *k, int l, bool *ok)
{
	int64_t vals[SYM_MAXV], lo, hi;
	if (!r->nvars)
		return NULL;
	for (int v = 0; v < r->nvars; v++) {
		const ir_param *p = &k->params[r->var_param[v]];
		if (!p->has_value)
			return NULL;
		vals[v] = p->value;
	}
	json_t *o = json_object();
	bool d = sym_level_misses(r, l, -1, vals, &lo, &hi, NULL);
	ct_json_set(o, "misses", d ? json_integer(lo) : json_null(), ok);
	ct_json_set(o, "misses_max", d ? json_integer(hi) : json_null(), ok);
	return o;
}

static json_t *render_json(const sym_result *r, const ct_kernel *k, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), ok);
	json_t *params = json_array();
	for (int v = 0; v < r->nvars; v++) {
		json_t *p = json_object();
		ct_json_set(p, "name", json_string(r->var_name[v]), ok);
		ct_json_set(p, "modulus", json_integer(r->modulus[v]), ok);
		ct_json_push(params, p, ok);
	}
	ct_json_set(o, "params", params, ok);
	ct_json_set(o, "supported", json_boolean(!r->why), ok);
	ct_json_set(o, "unsupported", ct_json_str_or_null(r->why), ok);
	if (r->why)
		return o;
	ct_buf b;
	ct_buf_init(&b);
	domain_text(&b, r);
	char *d = ct_buf_take(&b);
	ct_json_set(o, "domain", ct_json_str_or_null(d), ok);
	free(d);
	json_t *loops = json_array();
	for (int l = 0; l < r->nloops; l++) {
		json_t *p = json_object();
		ct_json_set(p, "index", json_string(r->loop_name[l]), ok);
		ct_json_set(p, "trip", jpoly(&r->trip[l], r), ok);
		ct_json_push(loops, p, ok);
	}
	ct_json_set(o, "loops", loops, ok);
	ct_json_set(o, "accesses", jpoly(&r->accesses, r), ok);
	json_t *reuse = json_array();
	for (int i = 0; i < r->nlines; i++) {
		const sym_lines *L = &r->lines[i];
		json_t *lo = json_object(), *cls = json_array();
		ct_json_set(lo, "line", json_integer(L->line), ok);
		ct_json_set(lo, "unsupported", ct_json_str_or_null(L->why), ok);
		for (int j = 0; j < L->n; j++) {
			const sym_reuse *x = &L->r[j];
			json_t *c = json_object();
			ct_json_set(c, "array", json_string(r->array_name[x->array]), ok);
			ct_json_set(c, "kind", json_string(x->kind == SYM_COLD ? "cold"
			                                   : x->kind == SYM_STMT ? "statement"
			                                   : x->kind == SYM_SIBLING ? "sibling" : "carried"), ok);
			ct_json_set(c, "loop", x->kind >= SYM_SIBLING && x->loop >= 0
			                       ? json_string(r->loop_name[x->loop]) : json_null(), ok);
			ct_json_set(c, "spatial", json_boolean(x->spatial), ok);
			ct_buf_init(&b);
			if (x->cls)
				ct_buf_printf(&b, "%s %% %lld %s 0", r->loop_name[x->loop], (long long)x->g,
				              x->cls == 1 ? "!=" : "==");
			else
				ct_buf_puts(&b, "all");
			d = ct_buf_take(&b);
			ct_json_set(c, "iterations", ct_json_str_or_null(d), ok);
			free(d);
			ct_json_set(c, "count", jpoly(&x->count, r), ok);
			ct_json_set(c, "distance_lo", x->kind == SYM_COLD ? json_null() : jpoly(&x->dlo, r), ok);
			ct_json_set(c, "distance_hi", x->kind == SYM_COLD ? json_null() : jpoly(&x->dhi, r), ok);
			ct_json_push(cls, c, ok);
		}
		ct_json_set(lo, "classes", cls, ok);
		ct_json_push(reuse, lo, ok);
	}
	ct_json_set(o, "reuse", reuse, ok);
	json_t *levels = json_array();
	for (int l = 0; l < r->spec.nlevels; l++) {
		const sim_level *lv = &r->spec.level[l];
		json_t *lj = json_object();
		ct_json_set(lj, "size", json_integer(lv->size), ok);
		ct_json_set(lj, "line", json_integer(lv->line), ok);
		ct_json_set(lj, "ways", json_integer(lv->ways), ok);
		ct_json_set(lj, "lines", json_integer(lv->size / lv->line), ok);
		const char *why = sym_level_why(r, l);
		ct_json_set(lj, "unsupported", ct_json_str_or_null(why), ok);
		if (!why) {
			ct_json_set(lj, "misses", json_misses(r, l, -1, ok), ok);
			json_t *at = json_at(r, k, l, ok);
			if (at)
				ct_json_set(lj, "at", at, ok);
			json_t *arrays = json_array();
			for (int a = 0; a < r->narrays; a++)
				if (r->nacc[a]) {
					json_t *aj = json_object();
					ct_json_set(aj, "array", json_string(r->array_name[a]), ok);
					ct_json_set(aj, "accesses_in_statements", json_integer(r->nacc[a]), ok);
					ct_json_set(aj, "misses", json_misses(r, l, a, ok), ok);
					ct_json_push(arrays, aj, ok);
				}
			ct_json_set(lj, "arrays", arrays, ok);
			json_t *refs = json_array();
			for (int f = 0; f < r->nrefs; f++) {
				json_t *fj = json_object();
				char where[512];
				ref_where(r, f, where, sizeof where);
				ct_json_set(fj, "where", ct_json_text(where), ok);
				ct_json_set(fj, "array", json_string(r->array_name[r->refs[f].array]), ok);
				ct_json_set(fj, "access", json_string(r->refs[f].access), ok);
				ct_json_set(fj, "misses", json_misses(r, l, r->narrays + f, ok), ok);
				ct_json_push(refs, fj, ok);
			}
			ct_json_set(lj, "references", refs, ok);
		}
		ct_json_push(levels, lj, ok);
	}
	ct_json_set(o, "levels", levels, ok);
	return o;
}

char *sym_render(const sym_result *r, const ct_kernel *k, bool json)
{
	if (json) {
		bool ok = true;
		json_t *o = render_json(r, k, &ok);
		if (!ok) {
			json_decref(o);
			return NULL;
		}
		return ct_json_line(o);
	}
	ct_buf b;
	ct_buf_init(&b);
	render_text(&b, r, k);
	return ct_buf_take(&b);
}

char *ct_kernel_predict_symbolic(ct_kernel *k, const char *spec_text, ct_format format)
{
	sim_spec spec;
	memset(&spec, 0, sizeof spec);
	ct_status st = spec_text ? sim_spec_parse(k->ctx, spec_text, &spec) : sim_machine_spec(k->ctx, &spec);
	if (st)
		return NULL;
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return NULL;
	sym_result r;
	char *out = NULL;
	if (!sym_analyse(t, &spec, &r)) {
		out = sym_render(&r, k, format == CT_FORMAT_JSON);
		if (!out)
			ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	}
	sym_result_free(&r);
	ct_looptree_free(t);
	return out;
}
