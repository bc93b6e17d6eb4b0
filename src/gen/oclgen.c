/* oclgen.c: the GPU backend (OpenCL C and CUDA C, one generator, two dialects): a planned loop tree becomes one kernel, with work-group mapping and group-shared caches. */
#include "gen/ocl.h"

#include "gen/cgen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The statements are the C backend's (cgen.c), the expressions and accesses its printer's (cexpr.c):
 * OpenCL C is C99 with address spaces, so the preamble maps the C names
 * the C backend uses (int64_t, sqrtf, ...) onto OpenCL's, and this file
 * takes over three things through cgen's hooks:
 *
 *   loops over parallelized indices: parallelize(i, j) on plan(target=
 *     opencl) makes each index a dimension of the NDRange. A split index
 *     (ii = split(i, 16)) gives one work-group per tile: the loops over i
 *     become `i = lo + get_group_id(d) * 16` and the loops over ii
 *     `ii = get_local_id(d) * step(ii)`, each guarded by its loop's own
 *     bounds (so main and tail versions both work); an unsplit index gives
 *     `i = lo + get_global_id(d)`;
 *   copies of location=local caches: the buffer is `__local`, declared at
 *     kernel scope, and each copy nest is flattened and shared among the
 *     work-items of the group (blocked: one contiguous chunk each;
 *     striped: round-robin chunks of OCL_STRIPE elements), with a
 *     barrier after the copies that fill the buffer, one before the copies
 *     that read it back or refill it, and none elsewhere;
 *   declarations: private caches and temps are per-work-item arrays;
 *     double-buffered local caches prefetch the next block into a private
 *     array (each work-item its own share of the flattened block) and move
 *     it into the local buffer between two barriers.
 *
 * What would be wrong is refused with a message rather than generated:
 * statements outside the work-item loops (every work-item would run them),
 * writes that two work-items could make to one element, local caches
 * inside a work-item loop or outside a work-group loop, private caches
 * that write back from outside the work-item loops, location=global.
 *
 * CUDA C (gen_cuda, docs/CUDA.md) is the same generator spelled by
 * dialect_cuda (blockIdx / threadIdx, __shared__, __syncthreads(), ...),
 * and goes further where CUDA allows what PoCL did not: a private cache
 * above the work-item loops is spread over the threads (each keeps its own
 * share, in registers: spread, gen_spread_copy); the next block of a
 * double buffer is kept in registers (next_reg); striped copies give
 * element f to thread f mod n (coalesced); shared rows are padded against
 * bank conflicts (pad_shared); thread t runs iteration t * step of every
 * version of a work-item loop (item_aligned); constant loops get
 * `#pragma unroll`; PoCL's extra fences are left out. The OpenCL output
 * is unchanged by all of this (the .cl files of tests/golden).
 */

#define OCL_STRIPE 4             /* elements per chunk of a striped copy */
#define OCL_MAX_PRIVATE_BYTES 65536 /* a private array larger than this is refused */
#define CUDA_UNROLL_MAX 64       /* CUDA: `#pragma unroll` on constant loops of at most this many trips */

typedef enum ocl_role { OR_NONE, OR_GROUP, OR_ITEM, OR_GLOBAL } ocl_role;

/* How one GPU language spells what the generator emits: the generator is
 * written once, and OpenCL C and CUDA C differ only in these words (as
 * Halide's and TVM's GPU code generators share their lowering). */
typedef struct gpu_dialect {
	const char *target;      /* plan(target=...) in messages */
	const char *lang;        /* "OpenCL C", "CUDA C": the first comment */
	const char *shared_loc;  /* the location= word of a group-shared cache */
	unsigned kg_flags;       /* kg_new flags (the kernel qualifier) */
	const char *gptr;        /* qualifier of the kernel's array pointers */
	const char *restrict_kw; /* the no-alias qualifier */
	const char *shared_q;    /* qualifier of a group-shared buffer */
	const char *barrier;     /* the group barrier statement */
	const char *long_param;  /* type of a runtime param */
	bool cuda;               /* ids are blockIdx/threadIdx/blockDim; C++ spellings */
} gpu_dialect;

static const gpu_dialect dialect_opencl = {"opencl", "OpenCL C", "local", KG_OPENCL, "__global ", "restrict",
                                           "__local", "barrier(CLK_LOCAL_MEM_FENCE);", "long", false};
static const gpu_dialect dialect_cuda = {"cuda", "CUDA C", "shared", KG_OPENCL | KG_CUDA, "", "__restrict__",
                                         "__shared__", "__syncthreads();", "long long", true};

/* A location=private cache above the work-item loops, spread over them
 * (CUDA): each thread keeps the elements of its own iterations only, so a
 * block tile of C becomes one small register array per thread. */
typedef struct dist_buf {
	bool on;
	int dim_of[IR_MAX_RANK];  /* buffer dimension -> its NDRange dimension, or -1 */
	int64_t ext[IR_MAX_RANK]; /* per-thread extent */
	int64_t count;            /* per-thread elements */
} dist_buf;

typedef struct og {
	const gpu_dialect *D;
	cg *g;
	ct_looptree *t;
	const ct_kernel *k;
	ocl_launch *L;
	int ndims;
	int root[3];            /* the parallelized (original) index of each dimension */
	int item[3];            /* the index of its work-item loops: the root's split child, or the root */
	bool split[3];
	int64_t lsize[3];       /* work-items per group (1 where unsplit) */
	int *role;              /* per tree index: ocl_role */
	int *dim;               /* per tree index: its dimension */
	bool *is_local;         /* per storage: a __local buffer */
	bool *is_next;          /* per storage: the __local prefetch buffer of a double-buffered
	                           cache (each work-item uses only its own share: no barriers) */
	int *local_region;      /* per region: 1 when its copies are cooperative */
	dist_buf *dist;         /* per storage: a private cache spread over the threads */
	bool *dist_region;      /* per region: its buffer is spread (dist) */
	const char *qtext[3];   /* in a spread copy: the thread's own position in dimension d */
	bool *next_reg;         /* per storage: a next block kept in registers (CUDA), each thread its share */
	const char *nextq;      /* in a copy of such a block: the thread's slot */
	const int64_t *pv;      /* param values, then derived values (lt_param_values) */
	int64_t *sbytes;        /* CUDA, per storage: bytes of a shared buffer (0: none) */
	int64_t *spad;          /* its rows' padding (pad_shared) */
	int cur[IR_MAX_DEPTH * 4]; /* regions entered (innermost last) */
	int ncur;
	int nest;               /* numbers the cooperative copies */
	bool any_local;         /* some region is location=local (the kernel has barriers) */
	const lt_node *hoist_at; /* the loop whose work-item guard is open above it (hoist_guard) */
	unsigned hoisted;       /* bit d: the work-item index of dimension d is defined and
	                           guarded above the loops being generated */
	ct_status st;
} og;

static bool og_err(og *o, ir_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool og_err(og *o, ir_pos pos, const char *fmt, ...)
{
	if (o->st == CT_OK) {
		va_list ap;
		va_start(ap, fmt);
		ct_verror_at(o->k->ctx, CT_ERR_INPUT, o->k->file, pos.line, pos.col, fmt, ap);
		va_end(ap);
		o->st = CT_ERR_INPUT;
	}
	return false;
}

/* The id of this work-group (what 'g'), work-item in its group ('l') or
 * in the NDRange ('g' + global: 'G') in dimension d, in the dialect's
 * spelling; CUDA's 32-bit product is widened before it can overflow. */
static const char *gpu_id(const og *o, char what, int d, char *buf, size_t n)
{
	char c = "xyz"[d < 0 || d > 2 ? 0 : d];
	if (!o->D->cuda)
		snprintf(buf, n, "get_%s_id(%d)", what == 'g' ? "group" : what == 'l' ? "local" : "global", d);
	else if (what == 'G')
		snprintf(buf, n, "((int64_t)blockIdx.%c * blockDim.%c + threadIdx.%c)", c, c, c);
	else
		snprintf(buf, n, "%s.%c", what == 'g' ? "blockIdx" : "threadIdx", c);
	return buf;
}

static const char *ix_name(const og *o, int i)
{
	return i >= 0 && i < o->t->nindices ? o->t->indices[i].name : "?";
}

/* ------------------------------------------------------------ the mapping */

/* The dimensions from the plan's parallelize items. */
static bool map_dims(og *o)
{
	const ct_kernel *k = o->k;
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *it = &k->plan[i];
		if (it->kind != PL_PARALLELIZE)
			continue;
		if (it->spmd)
			return og_err(o, it->pos, "parallelize(..., spmd=true) is not implemented for plan(target=%s)", o->D->target);
		for (int j = 0; j < it->n; j++) {
			int x = it->idx[j];
			ir_pos pos = it->idx_pos ? it->idx_pos[j] : it->pos;
			if (x < 0 || x >= k->nindices)
				return og_err(o, pos, "parallelize: unknown index");
			const ir_index *ix = &k->indices[x];
			if (ix->kind != IX_LOOP)
				return og_err(o, pos,
				              "parallelize(%s): on plan(target=%s) name the loop's own index ('%s'); "
				              "its split index becomes the work-items",
				              ix->name, o->D->target, k->indices[ix->root].name);
			for (int d = 0; d < o->ndims; d++)
				if (o->root[d] == x)
					return og_err(o, pos, "parallelize: '%s' is parallelized twice", ix->name);
			if (o->ndims == 3)
				return og_err(o, pos, "%s parallelizes at most 3 indices (work-group dimensions)", o->D->target);
			int d = o->ndims++;
			o->root[d] = x;
			o->split[d] = ix->child >= 0;
			o->item[d] = ix->child >= 0 ? ix->child : x;
			int64_t istep = ix->child >= 0 ? k->indices[ix->child].step : 1;
			o->lsize[d] = ix->child >= 0 ? (ix->step + istep - 1) / istep : 1;
			if (ix->child >= 0) {
				o->role[x] = OR_GROUP;
				o->role[ix->child] = OR_ITEM;
				o->dim[ix->child] = d;
			} else {
				o->role[x] = OR_GLOBAL;
			}
			o->dim[x] = d;
			if (ix->child >= 0)
				snprintf(o->L->dim_name[d], sizeof o->L->dim_name[d], "%s/%s", ix->name,
				         k->indices[ix->child].name);
			else
				snprintf(o->L->dim_name[d], sizeof o->L->dim_name[d], "%s", ix->name);
		}
	}
	return true;
}

/* Whether every access of array a in e (and in the statement's left-hand
 * side) has subscript `sub` in dimension d. */
static bool same_dim(const ir_expr *e, int a, int d, aff sub)
{
	if (!e)
		return true;
	if (e->kind == EX_ACCESS && e->id == a && !aff_equal(e->sub[d], sub))
		return false;
	for (int i = 0; i < e->nargs; i++)
		if (!same_dim(e->args[i], a, d, sub))
			return false;
	return true;
}

static bool all_same_dim(const ir_node *const *v, int n, int a, int d, aff sub)
{
	for (int i = 0; i < n; i++) {
		const ir_node *x = v[i];
		if (x->kind == ND_STMT && (!same_dim(x->lhs, a, d, sub) || !same_dim(x->rhs, a, d, sub)))
			return false;
		if (x->kind == ND_LET && !same_dim(x->rhs, a, d, sub))
			return false;
		if (x->kind == ND_IF && !same_dim(x->cond, a, d, sub))
			return false;
		if (!all_same_dim((const ir_node *const *)x->body, x->nbody, a, d, sub) ||
		    !all_same_dim((const ir_node *const *)x->els, x->nels, a, d, sub))
			return false;
	}
	return true;
}

/* Subscript s moves with index x only (params and constants aside). */
static bool only_index(aff s, int x)
{
	bool has = false;
	for (int i = 0; i < s.n; i++) {
		if (s.t[i].kind != AFF_INDEX)
			continue;
		if (s.t[i].id != x)
			return false;
		has = true;
	}
	return has;
}

/* Two work-items differ in some parallel index x; they never touch one
 * element of an array that either writes when, for each x, one dimension
 * of that array is subscripted alike everywhere by a function of x alone. */
static bool independent_stmt(og *o, const ir_node *s)
{
	const ct_kernel *k = o->k;
	int a = s->lhs->id;
	for (int d = 0; d < o->ndims; d++) {
		int x = o->root[d];
		bool found = false;
		for (int j = 0; j < k->arrays[a].rank && !found; j++)
			found = only_index(s->lhs->sub[j], x) &&
			        all_same_dim((const ir_node *const *)k->body, k->nbody, a, j, s->lhs->sub[j]);
		if (!found)
			return og_err(o, s->pos,
			              "parallelize(%s): the iterations of '%s' are not independent: they may access the "
			              "same elements of '%s', which the loop writes",
			              k->indices[x].name, k->indices[x].name, k->arrays[a].name);
	}
	return true;
}

static bool independent(og *o, const ir_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const ir_node *x = v[i];
		if (x->kind == ND_STMT && !independent_stmt(o, x))
			return false;
		if (!independent(o, (const ir_node *const *)x->body, x->nbody) ||
		    !independent(o, (const ir_node *const *)x->els, x->nels))
			return false;
	}
	return true;
}

/* Roles of the loops around x: bit (2 * d) a group (or global) loop of
 * dimension d, bit (2 * d + 1) a work-item (or global) loop. */
static unsigned around(const og *o, const lt_node *x)
{
	unsigned m = 0;
	for (const lt_node *y = x->parent; y; y = y->parent) {
		if (y->kind != LT_LOOP || y->index < 0 || y->index >= o->t->nindices)
			continue;
		int r = o->role[y->index], d = o->dim[y->index];
		if (r == OR_GROUP)
			m |= 1u << (2 * d);
		else if (r == OR_ITEM)
			m |= 1u << (2 * d + 1);
		else if (r == OR_GLOBAL)
			m |= 3u << (2 * d);
	}
	return m;
}

static unsigned all_bits(const og *o, int which)
{
	unsigned m = 0;
	for (int d = 0; d < o->ndims; d++)
		m |= 1u << (2 * d + which);
	return m;
}

/* Every statement of the kernel runs inside the loops of every dimension. */
static bool stmts_inside(og *o, const lt_node *const *v, int n)
{
	unsigned want = all_bits(o, 0) | all_bits(o, 1);
	for (int i = 0; i < n; i++) {
		const lt_node *x = v[i];
		if (x->kind == LT_STMT && x->stmt && x->stmt->stmt_id > 0 && (around(o, x) & want) != want) {
			for (int d = 0; d < o->ndims; d++)
				if ((around(o, x) & (3u << (2 * d))) != (3u << (2 * d)))
					return og_err(o, x->stmt->pos,
					              "parallelize(%s): this statement is outside the loops over '%s' "
					              "(every work-item would run it)",
					              ix_name(o, o->root[d]), o->L->dim_name[d]);
		}
		if (!stmts_inside(o, (const lt_node *const *)x->kids, x->nkids) ||
		    !stmts_inside(o, (const lt_node *const *)x->els, x->nels))
			return false;
	}
	return true;
}

static const lt_node *copy_stmt(const lt_node *x);

/* The work-item loop (over a parallelized kernel index) that one of region node x's
 * copy nests (prologue or epilogue: a multicache's slots) runs in; NULL
 * when there is none. */
static const lt_node *parallel_copy_loop(const og *o, const lt_node *x)
{
	for (int i = 0; i < x->nkids; i++) {
		const lt_node *y = x->kids[i];
		if (y->kind != LT_LOOP || y->index < 0 || y->index >= o->k->nindices || o->role[y->index] != OR_ITEM)
			continue;
		if (copy_stmt(y))
			return y;
	}
	return NULL;
}

/* A double-buffered region prefetches the next iteration's block of the
 * loop around it (docs/PLANS.md section 9); when that loop is a work-group,
 * work-item or global loop its iterations run in different work-items, so
 * the prefetched block never reaches the one that uses it: refused, as
 * for a parallel loop on the host (src/plan/verbs.c). */
static bool check_carry(og *o, const lt_region *rg, const ir_plan_item *ci)
{
	if (!rg->double_buffer || rg->elided)
		return true;
	const lt_node *P = rg->node->parent;
	while (P && P->kind != LT_LOOP)
		P = P->parent;
	if (!P || P->index < 0 || P->index >= o->t->nindices || o->role[P->index] == OR_NONE)
		return true;
	int d = o->dim[P->index];
	const ct_kernel *k = o->k;
	ir_pos pos = ci->pos;
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *it = &k->plan[i];
		for (int j = 0; it->kind == PL_PARALLELIZE && j < it->n; j++)
			if (it->idx[j] == o->root[d])
				pos = it->idx_pos ? it->idx_pos[j] : it->pos;
	}
	return og_err(o, pos,
	              "parallelize(%s): the double-buffered cache '%s' carries blocks from one iteration of '%s' "
	              "to the next (on plan(target=%s) its iterations are work-groups or work-items)",
	              ix_name(o, o->root[d]), ci->name, ix_name(o, P->index), o->D->target);
}

/* ------------------------------------------------------------ spread private caches (CUDA) */

/* The position in sub of a term over tree index x (its own loop
 * variable, coefficient 1), or -1. */
static int loop_term(aff sub, int x)
{
	for (int i = 0; i < sub.n; i++)
		if (sub.t[i].kind == AFF_LOOP && sub.t[i].id == x && sub.t[i].coef == 1)
			return i;
	return -1;
}

/* Whether body subscript s of a spread dimension is `ii` or `ii + iii`:
 * the work-item index x of the dimension plus (when x was split) its
 * inner index, which stays below x's step. */
static bool spread_sub_ok(const og *o, aff s, int x)
{
	if (loop_term(s, x) < 0 || s.c != 0)
		return false;
	int child = o->k->indices[x].child;
	if (s.n == 1)
		return true;
	return s.n == 2 && child >= 0 && loop_term(s, child) >= 0;
}

typedef struct spread_walk {
	const og *o;
	int a;                   /* the buffer */
	unsigned dims;           /* bit d: spread over dimension d */
	int dim_of[IR_MAX_RANK];
	bool ok;
} spread_walk;

/* One access of the buffer: a copy statement's (copy), or the body's,
 * first assigning the buffer dimension of each work-item index (assign),
 * then checking every access against that. */
static void spread_access(spread_walk *w, const ir_expr *e, bool copy, bool assign)
{
	const og *o = w->o;
	int rank = o->t->arrays[w->a].rank;
	for (int b = 0; b < rank; b++) {
		aff s = e->sub[b];
		int d = w->dim_of[b];
		if (copy) {
			/* a copy index alone, which the copy restricts to this thread's part */
			if (d >= 0 && (s.n != 1 || s.c != 0 || s.t[0].kind != AFF_LOOP || s.t[0].coef != 1 ||
			               s.t[0].id < o->k->nindices))
				w->ok = false;
			continue;
		}
		for (int dd = 0; dd < o->ndims; dd++) {
			if (!(w->dims & (1u << dd)) || loop_term(s, o->item[dd]) < 0) {
				if (!assign && d == dd)
					w->ok = false;
				continue;
			}
			if (assign && d < 0) {
				for (int bb = 0; bb < rank; bb++)
					if (w->dim_of[bb] == dd)
						w->ok = false;
				w->dim_of[b] = d = dd;
			}
			if (d != dd)
				w->ok = false;
		}
		if (!assign && d >= 0 && !spread_sub_ok(o, s, o->item[d]))
			w->ok = false;
	}
}

static void spread_expr(spread_walk *w, const ir_expr *e, bool copy, bool assign)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS && e->id == w->a)
		spread_access(w, e, copy, assign);
	for (int i = 0; i < e->nargs; i++)
		spread_expr(w, e->args[i], copy, assign);
}

/* The accesses of the copies (copies) or of the body in v. */
static void spread_nodes(spread_walk *w, lt_node *const *v, int n, bool copies, bool assign)
{
	for (int i = 0; i < n && w->ok; i++) {
		const lt_node *x = v[i];
		const ir_node *s = x->stmt;
		if (s && (x->kind == LT_STMT || x->kind == LT_LET || x->kind == LT_IF)) {
			bool copy = s->kind == ND_STMT && s->stmt_id == 0;
			if (copy == copies) {
				spread_expr(w, s->lhs, copy, assign);
				spread_expr(w, s->rhs, copy, assign);
				spread_expr(w, s->cond, copy, assign);
			}
		}
		spread_nodes(w, x->kids, x->nkids, copies, assign);
		spread_nodes(w, x->els, x->nels, copies, assign);
	}
}

/* CUDA: whether work-item loop x starts at a constant multiple of its
 * step, so that thread t runs iteration t * step of every version (main
 * and tail) of the loop: the same thread owns the same iterations
 * wherever they are, which a private cache spread over the threads needs
 * (spread). OpenCL keeps `lo + id * step`. */
static bool item_aligned(const og *o, const lt_node *x)
{
	int64_t lo = -1;
	return o->D->cuda && x->step > 0 && lt_const_lo(x, &lo) && lo >= 0 && lo % x->step == 0;
}

/* Whether every work-item loop of dimension d below x runs its iterations
 * in the threads that own them (item_aligned). */
static bool items_from_zero(const og *o, const lt_node *x, int d)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_LOOP && y->index == o->item[d] && !item_aligned(o, y))
			return false;
		if (!items_from_zero(o, y, d))
			return false;
	}
	return true;
}

/* Spread the buffer of private region r (above the work-item loops of the
 * dimensions missing from m) over the threads, when each thread touches
 * only its own elements: every body access subscripts one buffer
 * dimension per such work-item index by `ii` or `ii + iii`, and the copies
 * by one copy index there. */
static bool spread(og *o, int r, unsigned m)
{
	const ct_looptree *t = o->t;
	const lt_region *rg = &t->regions[r];
	int a = rg->buffer;
	if (a < 0 || a >= t->narrays || rg->double_buffer)
		return false;
	spread_walk w;
	memset(&w, 0, sizeof w);
	w.o = o;
	w.a = a;
	w.ok = true;
	for (int b = 0; b < IR_MAX_RANK; b++)
		w.dim_of[b] = -1;
	for (int d = 0; d < o->ndims; d++) {
		if (m & (1u << (2 * d + 1)))
			continue;
		if (!o->split[d] || !(m & (1u << (2 * d))) || !items_from_zero(o, rg->node, d))
			return false;
		w.dims |= 1u << d;
	}
	spread_nodes(&w, rg->node->kids, rg->node->nkids, false, true);
	spread_nodes(&w, rg->node->kids, rg->node->nkids, false, false);
	for (int d = 0; d < o->ndims && w.ok; d++) {
		bool found = false;
		for (int b = 0; b < t->arrays[a].rank; b++)
			found = found || w.dim_of[b] == d;
		if ((w.dims & (1u << d)) && !found)
			w.ok = false; /* threads that differ in d would share elements */
	}
	if (w.ok)
		spread_nodes(&w, rg->node->kids, rg->node->nkids, true, false);
	if (!w.ok)
		return false;
	dist_buf *db = &o->dist[a];
	db->count = 1;
	for (int b = 0; b < t->arrays[a].rank; b++) {
		int64_t e = 0;
		if (!bx_is_const(t->ext[a * IR_MAX_RANK + b], &e))
			return false;
		db->dim_of[b] = w.dim_of[b];
		db->ext[b] = w.dim_of[b] >= 0 ? o->k->indices[o->item[w.dim_of[b]]].step : e;
		db->count *= db->ext[b] > 0 ? db->ext[b] : 1;
	}
	db->on = true;
	o->dist_region[r] = true;
	return true;
}

/* An access of a spread buffer: its place in this thread's share. */
static bool hook_access(cg *g, ct_buf *b, int a, const aff *sub)
{
	og *o = g->hook_ud;
	if (a >= 0 && a < o->t->narrays && o->next_reg[a]) {
		if (!o->nextq)
			cg_bad(g, "next block in registers outside its copies", a);
		ct_buf_printf(b, "%s[%s]", g->aname[a], o->nextq ? o->nextq : "0");
		return true;
	}
	if (a < 0 || a >= o->t->narrays || !o->dist[a].on)
		return false;
	const dist_buf *db = &o->dist[a];
	int rank = o->t->arrays[a].rank;
	int64_t stride[IR_MAX_RANK];
	int64_t s = 1;
	for (int d = rank - 1; d >= 0; d--) {
		stride[d] = s;
		s *= db->ext[d];
	}
	ct_buf_printf(b, "%s[", g->aname[a]);
	bool any = false;
	for (int d = 0; d < rank; d++) {
		ct_buf t;
		ct_buf_init(&t);
		int dd = db->dim_of[d];
		aff x = sub[d];
		aff_term rest[2];
		int at = dd >= 0 ? loop_term(x, o->item[dd]) : -1;
		if (dd >= 0 && at >= 0) {
			/* `ii + iii` in the body: iii is the place in the share */
			int n = 0;
			for (int i = 0; i < x.n && n < 2; i++)
				if (i != at)
					rest[n++] = x.t[i];
			x.n = n;
			x.t = rest;
			cg_put_aff(g, &t, x);
		} else if (dd >= 0) {
			/* a copy index: the copy's own counter (gen_spread_copy) */
			if (o->qtext[dd])
				ct_buf_puts(&t, o->qtext[dd]);
			else
				cg_bad(g, "spread buffer outside its copies", a);
		} else {
			cg_put_aff(g, &t, x);
		}
		const char *txt = t.s ? t.s : "0";
		if (strcmp(txt, "0") != 0) {
			if (any)
				ct_buf_puts(b, " + ");
			if (stride[d] == 1)
				ct_buf_puts(b, txt);
			else
				ct_buf_printf(b, "(%s) * %lld", txt, (long long)stride[d]);
			any = true;
		}
		if (t.failed)
			g->failed = true;
		ct_buf_free(&t);
	}
	if (!any)
		ct_buf_putc(b, '0');
	ct_buf_putc(b, ']');
	return true;
}

/* The first statement of v[0..n) (and the blocks inside) that writes array a, or NULL. */
static const ir_node *first_write(const ir_node *const *v, int n, int a)
{
	for (int i = 0; i < n; i++) {
		const ir_node *x = v[i];
		if (x->kind == ND_STMT && x->lhs && x->lhs->id == a)
			return x;
		const ir_node *y = first_write((const ir_node *const *)x->body, x->nbody, a);
		if (!y)
			y = first_write((const ir_node *const *)x->els, x->nels, a);
		if (y)
			return y;
	}
	return NULL;
}

/*
 * A cache that writes back and whose region holds an affine loop copies its box over the
 * loop's range back whole (the elements the loop never wrote go back as they were copied in,
 * plan_block.c): no two work-groups' boxes may share an element, or one group's copy-back could
 * undo another's writes. They share none where, for every grid dimension d, the region lies
 * inside d's work-group (or global) loop and the array has a dimension that every access
 * subscripts alike by a function of d's index alone (independent_stmt found one for every
 * written array): the box's values there are those of the group's own values of the index, and
 * a function of one index with a nonzero coefficient maps other groups' values elsewhere.
 * Inside a group the copies are the group's (local: shared, between barriers) or a work-item's
 * own (private: inside its work-item loops, check_regions). CT_ERR_INPUT naming the cache
 * and the loop otherwise.
 */
static bool written_boxes_apart(og *o, const lt_region *rg, const ir_plan_item *it)
{
	const ct_kernel *k = o->k;
	const lt_node *x = rg->node ? lt_affine_below(rg->node) : NULL;
	if (rg->elided || rg->epilogue == LT_EPI_NONE || !x)
		return true;
	const ir_plan_item *q = it;
	while (q->src_cache >= 0 && q->src_cache < k->nplan)
		q = &k->plan[q->src_cache];
	int a = q->src_array;
	unsigned m = around(o, rg->node);
	const ir_node *w = a >= 0 && a < k->narrays ? first_write((const ir_node *const *)k->body, k->nbody, a) : NULL;
	for (int d = 0; d < o->ndims; d++) {
		bool apart = w && (m & (1u << (2 * d)));
		bool found = false;
		for (int j = 0; apart && !found && j < k->arrays[a].rank; j++)
			found = only_index(w->lhs->sub[j], o->root[d]) &&
			        all_same_dim((const ir_node *const *)k->body, k->nbody, a, j, w->lhs->sub[j]);
		if (!apart || !found)
			return og_err(o, it->pos,
			              "cache '%s' holds loop '%s', whose bounds are affine (they use enclosing indices or "
			              "min/max), and writes its block back: on plan(target=%s) the box around the "
			              "loop's range, copied back whole, could overlap the box of another work-group "
			              "in '%s' (no dimension of '%s' is subscripted by '%s' alone inside the region; "
			              "place the cache inside that loop)",
			              it->name, ix_name(o, x->index), o->D->target, ix_name(o, o->root[d]),
			              a >= 0 && a < k->narrays ? k->arrays[a].name : "?", ix_name(o, o->root[d]));
	}
	return true;
}

/* The location rules of each region (see the top of this file). */
static bool check_regions(og *o)
{
	const ct_looptree *t = o->t;
	const ct_kernel *k = o->k;
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		if (rg->item < 0 || rg->item >= k->nplan || !rg->node)
			continue;
		const ir_plan_item *it = &k->plan[rg->item];
		if (!check_carry(o, rg, it) || !written_boxes_apart(o, rg, it))
			return false;
		ir_pos pos = it->location_opt.given ? it->location_opt.pos : it->pos;
		if (it->location == LOC_GLOBAL)
			return og_err(o, pos,
			              "cache '%s': location=global cannot be honoured on plan(target=%s) (the "
			              "buffer would need one slice of global memory per work-group); use %s or private",
			              it->name, o->D->target, o->D->shared_loc);
		if (it->strategy != STRAT_DEFAULT && it->location != LOC_LOCAL)
			return og_err(o, it->strategy_opt.pos,
			              "cache '%s': strategy= applies to location=%s caches (their copies are shared "
			              "by the work-group)", it->name, o->D->shared_loc);
		const lt_node *par = parallel_copy_loop(o, rg->node);
		if (par && it->location == LOC_LOCAL)
			return og_err(o, pos,
			              "cache '%s': the copies of this location=%s multicache loop over '%s', which "
			              "is parallelized on plan(target=%s) (each work-item would copy its own slot "
			              "with the whole group's copy loop); trigger it at a level outside the work-item "
			              "loops or use location=private", it->name, o->D->shared_loc, ix_name(o, par->index),
			              o->D->target);
		unsigned m = around(o, rg->node);
		if (it->location == LOC_LOCAL) {
			for (int d = 0; d < o->ndims; d++) {
				if (m & (1u << (2 * d + 1)))
					return og_err(o, pos,
					              "cache '%s': a location=%s cache must sit outside the work-item loop "
					              "over '%s' (at a level between the work-group and work-item loops)",
					              it->name, o->D->shared_loc, ix_name(o, o->item[d]));
				if (!(m & (1u << (2 * d))))
					return og_err(o, pos,
					              "cache '%s': a location=%s cache must sit inside the work-group loop "
					              "over '%s'", it->name, o->D->shared_loc, ix_name(o, o->root[d]));
			}
			if (!rg->elided)
				o->local_region[r] = 1;
			o->any_local = o->any_local || !rg->elided;
			if (!rg->elided && rg->buffer >= 0 && rg->buffer < t->narrays)
				o->is_local[rg->buffer] = true;
			/* the prefetch of a double buffer: __local too, not a private
			 * array: PoCL 3.1 lost per-work-item private arrays kept across
			 * the barriers of tail versions (docs/OPENCL.md, section 4) */
			if (!rg->elided && rg->double_buffer && rg->temp >= 0 && rg->temp < t->narrays)
				o->is_local[rg->temp] = o->is_next[rg->temp] = true;
		} else if (!rg->elided && o->D->cuda && spread(o, r, m)) {
			/* each thread keeps its own share (dist_buf) */
		} else if (!rg->elided && rg->epilogue != LT_EPI_NONE) {
			unsigned want = all_bits(o, 0) | all_bits(o, 1);
			if ((m & want) != want)
				return og_err(o, pos,
				              "cache '%s' (location=private) writes back to '%s' from outside the work-item "
				              "loops: every work-item would write the whole block; place it inside them or "
				              "use location=%s", it->name, t->arrays[rg->source].name, o->D->shared_loc);
		}
	}
	return true;
}

/* The loop verbs of the plan that plan(target=opencl) cannot honour:
 * unroll or vectorize of a parallelized index (its loops are the NDRange),
 * streaming stores. */
static bool check_verbs(og *o)
{
	const ct_kernel *k = o->k;
	for (int i = 0; i < k->nplan; i++) {
		const ir_plan_item *it = &k->plan[i];
		if (it->kind != PL_UNROLL && it->kind != PL_VECTORIZE)
			continue;
		const char *verb = it->kind == PL_UNROLL ? "unroll" : "vectorize";
		if (it->kind == PL_VECTORIZE && it->nontemporal)
			return og_err(o, it->pos, "vectorize(..., nontemporal=true) is not implemented for plan(target=%s)",
			              o->D->target);
		for (int j = 0; j < it->n; j++) {
			int x = it->idx[j];
			ir_pos pos = it->idx_pos ? it->idx_pos[j] : it->pos;
			if (x >= 0 && x < o->t->nindices && o->role[x] != OR_NONE)
				return og_err(o, pos,
				              "%s(%s): '%s' is parallelized on plan(target=%s) (its loops are the "
				              "work-groups or work-items); split it and name the inner index",
				              verb, ix_name(o, x), ix_name(o, x), o->D->target);
		}
	}
	return true;
}

/* ------------------------------------------------------------ loops */

/* Open `{ const int64_t v = VALUE; if (guard) {` for loop x. */
static void open_mapped(og *o, const lt_node *x, const char *value, bool guard_lo)
{
	cg *g = o->g;
	cg_range r;
	cg_range_open(g, x, &r);
	const char *v = g->iname[x->index], *lo = r.lo.s ? r.lo.s : "0", *hi = r.hi.s ? r.hi.s : "0";
	kg_block_bare(g->kg);
	if (guard_lo && o->any_local && !o->D->cuda) {
		/* a loop of at most one iteration rather than an `if`: PoCL
		 * (3.1, LLVM 15) miscompiled barriers under group-uniform ifs
		 * of main and tail versions, never under loops; without
		 * barriers the `if` vectorizes better */
		kg_block_open(g->kg, "for (int64_t %s = %s; %s >= %s && %s < %s; %s = INT64_MAX)", v, value, v, lo, v,
		              hi, v);
	} else {
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %s;", v, value);
		if (guard_lo)
			kg_block_open(g->kg, "if (%s >= %s && %s < %s)", v, lo, v, hi);
		else
			kg_block_open(g->kg, "if (%s < %s)", v, hi);
	}
	cg_range_close(g, &r);
}

static void close_mapped(og *o)
{
	kg_block_close(o->g->kg);
	kg_block_close(o->g->kg);
}


static void barrier(og *o);

static bool has_barrier(const og *o, const lt_node *x);
typedef enum copy_kind { CK_NONE, CK_FILL, CK_DRAIN, CK_PRIVATE } copy_kind;
static copy_kind kind_of(const og *o, const lt_node *x);

/* Whether the last code in x's body ends with a barrier: a fill of a local
 * buffer (a barrier follows the last fill), or a loop that ends each
 * iteration with one (gen_plain_loop, gen_mapped); x needs no second one.
 * A drain or a prefetch ends without one. */
static bool ends_with_barrier(const og *o, const lt_node *x)
{
	const lt_node *y = x;
	do
		y = y->nkids > 0 && y->nels == 0 ? y->kids[y->nkids - 1] : NULL;
	while (y && y->kind == LT_CACHE);
	if (!y || y->kind != LT_LOOP || y->index < 0 || y->index >= o->t->nindices)
		return false;
	copy_kind ck = kind_of(o, y);
	if (ck != CK_NONE)
		return ck == CK_FILL;
	return !o->D->cuda && (o->role[y->index] == OR_NONE || o->role[y->index] == OR_GROUP) && has_barrier(o, y);
}

/* A loop over a parallel index: its iteration of this work-item. */
static void gen_mapped(og *o, const lt_node *x)
{
	cg *g = o->g;
	int r = o->role[x->index], d = o->dim[x->index];
	ct_buf val;
	ct_buf_init(&val);
	bool item_lo = false;
	if (r == OR_ITEM && item_aligned(o, x)) {
		/* CUDA: iteration v of every version by thread v / step */
		char id[96];
		ct_buf_printf(&val, "(int64_t)%s * %lld", gpu_id(o, 'l', d, id, sizeof id), (long long)x->step);
		item_lo = true;
	} else if (r == OR_ITEM) {
		/* the inner index of a split: one work-item per iteration */
		cg_range ri;
		cg_range_open(g, x, &ri);
		ct_buf_printf(&val, "%s", ri.lo.s ? ri.lo.s : "0");
		cg_range_close(g, &ri);
		char id[96];
		ct_buf_printf(&val, " + (int64_t)%s * %lld", gpu_id(o, 'l', d, id, sizeof id), (long long)x->step);
	} else {
		/* the outer loop: the tile of this group (or this work-item's
		 * iteration, unsplit), counted from the start of the index: for an
		 * affine loop its own lower bound here, over params and indices
		 * that are the same in every iteration this work-item runs
		 * (affine_grid_ok), so each value of the loop keeps its work-item */
		const ir_index *ix = &o->k->indices[o->root[d]];
		if (ir_index_affine(ix)) {
			cg_range r0;
			cg_range_open(g, x, &r0);
			ct_buf_printf(&val, "%s", r0.lo.s ? r0.lo.s : "0");
			cg_range_close(g, &r0);
		} else {
			const bx *lo = bx_from_aff(&g->arena, o->k, ix->lo);
			if (!lo) {
				g->failed = true;
				ct_buf_free(&val);
				return;
			}
			cg_bound(g, &val, lo);
		}
		char id[96];
		if (r == OR_GROUP)
			ct_buf_printf(&val, " + (int64_t)%s * %lld", gpu_id(o, 'g', d, id, sizeof id), (long long)x->step);
		else
			ct_buf_printf(&val, " + (int64_t)%s", gpu_id(o, 'G', d, id, sizeof id));
	}
	if (val.failed)
		g->failed = true;
	if (r == OR_ITEM && (o->hoisted & (1u << d))) {
		/* defined and guarded above the sequential loops (hoist_guard) */
		ct_buf_free(&val);
		cg_loop_body(g, x);
		return;
	}
	/* CUDA needs none of PoCL's fences (gen_plain_loop) */
	bool fenced = r == OR_GROUP && has_barrier(o, x) && !o->D->cuda;
	if (fenced)
		barrier(o); /* a barrier before it and one at the end: see gen_plain_loop */
	open_mapped(o, x, val.s ? val.s : "0", r != OR_ITEM || item_lo);
	ct_buf_free(&val);
	cg_loop_body(g, x);
	if (fenced && !ends_with_barrier(o, x))
		barrier(o);
	close_mapped(o);
}

/*
 * A sequential loop, as written. One whose body has barriers (end_barrier)
 * ends every iteration with a barrier. OpenCL does not need it (a fill that repeats already has one
 * before it), but PoCL 3.1 does: when the code after a body's last
 * barrier branches on the work-item (`if (ii < 5)` of a tail) and the
 * branch rejoins at the loop latch, whose successors are barriers (the
 * next iteration's, and the next loop's), its parallel-region formation
 * runs the guarded code for every work-item of the group: clang hoists the
 * test above the barriers, and the region that starts at the guarded code
 * is entered without it. The tail work-items then read past their __local
 * block and write rows past the end of C (docs/OPENCL.md, section 4). A
 * barrier at the end of the body makes the branch rejoin before a barrier
 * inside the region, which PoCL compiles correctly.
 *
 * Such a loop also starts with a barrier before it (so does a work-group
 * loop with barriers, gen_mapped). PoCL forms parallel regions between
 * barriers; a region with two exits (a loop latch: the next iteration's
 * barrier or the code after the loop) is "diverging": PoCL runs its first
 * work-item alone and assumes (llvm.assume) that every other one takes the
 * same branches. A work-item guard in such a region is then decided by
 * work-item 0 for the whole group: the guarded `C[..] += ..` of a tail ran
 * for the inactive work-items too (docs/OPENCL.md, section 5). With the
 * barrier before each loop with barriers, the guarded code after a loop
 * (tested above its barrier-free loops, hoist_guard) no longer shares a
 * region with a loop test that PoCL 3.1 compiled that way.
 */
static void gen_plain_loop(og *o, const lt_node *x, bool end_barrier, bool hint_vector)
{
	cg *g = o->g;
	cg_range r;
	cg_range_open(g, x, &r);
	const char *v = g->iname[x->index];
	bool cuda_barriers = o->D->cuda && end_barrier;
	if (cuda_barriers)
		end_barrier = false; /* the fences are PoCL's; a fill has its own barrier before it */
	if (end_barrier)
		barrier(o);
	if (x->tail)
		kg_comment(g->kg, "tail of %s", v);
	if (hint_vector && !o->D->cuda)
		kg_comment(g->kg, "vectorize(%s): a scalar loop, vectorized by the OpenCL compiler", v);
	else if (hint_vector)
		kg_comment(g->kg, "vectorize(%s): a scalar loop, unrolled where its trip count is constant", v);
	if (o->D->cuda && !cuda_barriers)
		cg_unroll_hint(g, x);
	cg_for_open(g, x, &r, true);
	cg_loop_body(g, x);
	if (end_barrier && !ends_with_barrier(o, x))
		barrier(o);
	kg_block_close(g->kg);
	cg_range_close(g, &r);
}

/* ------------------------------------------------------------ cooperative copies */

/* The storage a copy statement writes, and the one it reads (-1 for a zero fill). */
static void copy_sides(const lt_node *s, int *w, int *rd)
{
	*w = s->stmt->lhs ? s->stmt->lhs->id : -1;
	*rd = s->stmt->rhs && s->stmt->rhs->kind == EX_ACCESS ? s->stmt->rhs->id : -1;
}

/* The copy statement at the bottom of nest x (through its loops and guard). */
static const lt_node *copy_stmt(const lt_node *x)
{
	while (x && (x->kind == LT_LOOP || (x->kind == LT_IF && !x->stmt)) && x->nkids == 1)
		x = x->kids[0];
	return x && x->kind == LT_STMT && x->stmt && x->stmt->kind == ND_STMT && x->stmt->stmt_id == 0 ? x : NULL;
}

/* What a node of a local region's copies does to the local buffers:
 * fills one, reads one back (drain), or neither (a prefetch into the next
 * block, whose elements only the work-item that moves them touches);
 * CK_NONE when x is no copy nest. */
static copy_kind kind_of(const og *o, const lt_node *x)
{
	if (x->kind != LT_LOOP || x->index < o->k->nindices)
		return CK_NONE;
	const lt_node *s = copy_stmt(x);
	if (!s)
		return CK_NONE;
	int w, rd;
	copy_sides(s, &w, &rd);
	if (w >= 0 && w < o->t->narrays && o->is_local[w] && !o->is_next[w])
		return CK_FILL;
	if (rd >= 0 && rd < o->t->narrays && o->is_local[rd] && !o->is_next[rd])
		return CK_DRAIN;
	return CK_PRIVATE;
}

/* Whether the code of x's kids has barriers: they copy a local region's
 * buffer (fills, drains and double-buffer moves all have one). */
static bool has_barrier(const og *o, const lt_node *x)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_CACHE && y->cache >= 0 && y->cache < o->t->nregions && o->local_region[y->cache])
			return true;
		if (y->kind == LT_LOOP && (kind_of(o, y) == CK_FILL || kind_of(o, y) == CK_DRAIN))
			return true;
		if (has_barrier(o, y))
			return true;
	}
	return false;
}

static const lt_node *sibling(const lt_node *x, int dir);

/* Whether x is the first code a work-group runs: nothing before it at any
 * level up to the work-group loops, and no other loop around it (whose
 * next iteration would refill what this one reads). Only then may a fill
 * go without a barrier before it. */
static bool first_in_group(const og *o, const lt_node *x)
{
	for (const lt_node *y = x; y; y = y->parent) {
		if (y != x && y->kind == LT_LOOP && y->index >= 0 && y->index < o->t->nindices) {
			if (o->role[y->index] != OR_GROUP)
				return false;
			continue;
		}
		if (sibling(y, -1))
			return false;
		if (!y->parent) {
			for (int i = 0; i < o->t->nroots; i++)
				if (o->t->roots[i] == y)
					return i == 0;
		}
	}
	return true;
}

/* The sibling before (dir -1) or after (+1) x in its parent's kids. */
static const lt_node *sibling(const lt_node *x, int dir)
{
	const lt_node *p = x->parent;
	if (!p)
		return NULL;
	for (int i = 0; i < p->nkids; i++)
		if (p->kids[i] == x) {
			int j = i + dir;
			return j >= 0 && j < p->nkids ? p->kids[j] : NULL;
		}
	return NULL;
}

/* The code emitted right before x: its previous sibling, or that of the
 * cache region nodes it opens (they add no code of their own); NULL at
 * the start of a loop, an if or the kernel. */
static const lt_node *prev_code(const lt_node *x)
{
	for (const lt_node *y = x; y; y = y->parent) {
		const lt_node *p = sibling(y, -1);
		if (p)
			return p;
		if (!y->parent || y->parent->kind != LT_CACHE)
			return NULL;
	}
	return NULL;
}

static void barrier(og *o)
{
	kg_stmt(o->g->kg, KG_OTHER, NULL, NULL, "%s", o->D->barrier);
}

/* The strategy of the innermost region entered. */
static ir_strategy cur_strategy(const og *o)
{
	if (o->ncur == 0)
		return STRAT_BLOCKED;
	const lt_region *rg = &o->t->regions[o->cur[o->ncur - 1]];
	ir_strategy s = rg->item >= 0 && rg->item < o->k->nplan ? o->k->plan[rg->item].strategy : STRAT_DEFAULT;
	return s == STRAT_STRIPED ? STRAT_STRIPED : STRAT_BLOCKED;
}

static void buf_reset(ct_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = 0;
}

static int cmp_loop(const void *a, const void *b)
{
	const lt_node *x = *(const lt_node *const *)a, *y = *(const lt_node *const *)b;
	return (x->index > y->index) - (x->index < y->index);
}

/* The next-block storage in registers that the copy at the bottom of
 * x reads or writes (CUDA double buffers), or -1. */
static int nest_next_reg(const og *o, const lt_node *x)
{
	const lt_node *s = copy_stmt(x);
	if (!s)
		return -1;
	int w, rd;
	copy_sides(s, &w, &rd);
	if (w >= 0 && w < o->t->narrays && o->next_reg[w])
		return w;
	if (rd >= 0 && rd < o->t->narrays && o->next_reg[rd])
		return rd;
	return -1;
}

/* ------------------------------------------------------------ CUDA: vector copies */

/* CUDA's 16-byte vector type of element type t and its components. */
static const char *vec16_type(ct_dtype t)
{
	switch (t) {
	case CT_F32: return "float4";
	case CT_F64: return "double2";
	case CT_I32: return "int4";
	case CT_I64: return "longlong2";
	}
	return "float4";
}

static const char vec_comp[] = "xyzw";

/* Whether every value of term tm (coefficient times a loop variable, a
 * param, ...) times stride s is a multiple of v elements; the copy index
 * cl is the vector's own (not asked here). */
static bool term_aligned(const og *o, const aff_term *tm, int64_t s, int64_t v)
{
	cg *g = o->g;
	int64_t m = tm->coef * s;
	if (m % v == 0)
		return true;
	if (tm->kind == AFF_PARAM)
		return tm->id < o->k->nparams && !o->k->params[tm->id].runtime && (m * o->pv[tm->id]) % v == 0;
	if (tm->kind != AFF_LOOP || tm->id < 0 || tm->id >= o->t->nindices || !g->open[tm->id])
		return false;
	/* a loop of the kernel: its values are lo + m * step (a work-group or
	 * work-item loop too: group * step, or thread * step) */
	const lt_node *l = g->open[tm->id];
	int64_t lo = 0;
	return lt_const_lo(l, &lo) && (m * lo) % v == 0 && (m * l->step) % v == 0;
}

/*
 * Whether access e (of a kernel array, in global memory) reads v
 * consecutive elements, 16-byte aligned, when copy index cl takes v
 * consecutive values from a multiple of v: cl only in the array's
 * contiguous dimension with coefficient 1, every other term a multiple of
 * v. The arrays' pointers are 16-byte aligned (ocl.h: cudaMalloc's are).
 */
static bool access_vec_aligned(const og *o, const ir_expr *e, int cl, int64_t v)
{
	const ct_looptree *t = o->t;
	int a = e->id;
	if (e->kind != EX_ACCESS || a < 0 || a >= o->k->narrays || o->k->arrays[a].role == CT_TEMP || !o->L->sizes_known)
		return false;
	int64_t stride[IR_MAX_RANK], count = 0;
	if (lt_array_layout(t, o->pv, a, stride, &count) != CT_OK)
		return false;
	bool found = false;
	int64_t c = 0;
	for (int d = 0; d < t->arrays[a].rank; d++) {
		aff s = e->sub[d];
		c += s.c * stride[d];
		for (int i = 0; i < s.n; i++) {
			const aff_term *tm = &s.t[i];
			if (tm->kind == AFF_LOOP && tm->id == cl) {
				if (stride[d] != 1 || tm->coef != 1 || found)
					return false;
				found = true;
			} else if (!term_aligned(o, tm, stride[d], v)) {
				return false;
			}
		}
	}
	return found && c % v == 0;
}

/* The elements of a 16-byte vector of the copy's type when the flattened
 * copy (extents constant; its innermost one, from a constant start, a
 * multiple of them) can go v elements per thread and step; else 1. The
 * shape alone decides (a prefetch and its move must agree). */
static int64_t copy_vec_width(const og *o, const lt_node *const *sorted, int n, const lt_node *s)
{
	if (!o->D->cuda || !o->L->explicit_local || n < 1 || !s->stmt->lhs)
		return 1;
	int w = s->stmt->lhs->id;
	if (w < 0 || w >= o->t->narrays)
		return 1;
	int64_t v = 16 / (int64_t)ct_dtype_size(o->t->arrays[w].type);
	for (int i = 0; i < n; i++) {
		int64_t lo = 0, hi = 0;
		if (!bx_is_const(sorted[i]->lo, &lo) || !bx_is_const(sorted[i]->hi, &hi) || sorted[i]->step != 1)
			return 1;
		if (i == n - 1 && ((hi - lo) % v != 0 || lo % v != 0 || hi - lo < v))
			return 1;
	}
	return v;
}

/*
 * The statement of a copy, v lanes of consecutive innermost copy index
 * cl from base ct_bID: one 16-byte load of the source when it is a
 * global array aligned for it (and no guard sits between), then each
 * lane's store; otherwise each lane's whole statement (guards included).
 * A next block in registers takes slot q * v + lane.
 */
static void gen_copy_lanes(og *o, lt_node *const *kids, int cl, int id, int64_t v, const char *qn)
{
	cg *g = o->g;
	const lt_node *bottom = kids[0];
	const ir_node *st = bottom->kind == LT_STMT ? bottom->stmt : NULL;
	bool vload = st && st->kind == ND_STMT && st->op == AS_SET && st->rhs && st->rhs->kind == EX_ACCESS &&
	             access_vec_aligned(o, st->rhs, cl, v);
	const char *cv = g->iname[cl];
	char slot[64];
	ct_buf b;
	ct_buf_init(&b);
	if (vload) {
		ct_dtype ty = o->t->arrays[st->rhs->id].type;
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s ct_v%d;", vec16_type(ty), id);
		kg_block_bare(g->kg);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = ct_b%d;", cv, id);
		cg_access(g, &b, st->rhs->id, st->rhs->sub);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_v%d = *(const %s *)&%s; /* 16 bytes, aligned */", id,
		        vec16_type(ty), b.s ? b.s : "0");
		kg_block_close(g->kg);
	}
	for (int64_t l = 0; l < v; l++) {
		kg_block_bare(g->kg);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = ct_b%d + %lld;", cv, id, (long long)l);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "(void)%s;", cv);
		snprintf(slot, sizeof slot, "%s * %lld + %lld", qn, (long long)v, (long long)l);
		o->nextq = slot;
		if (vload) {
			buf_reset(&b);
			cg_access(g, &b, st->lhs->id, st->lhs->sub);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s = ct_v%d.%c;", b.s ? b.s : "0", id, vec_comp[l]);
		} else {
			cg_nodes(g, kids, 1);
		}
		o->nextq = NULL;
		kg_block_close(g->kg);
	}
	if (b.failed)
		g->failed = true;
	ct_buf_free(&b);
}

/* Copy nest x shared by the work-group: its iterations flattened in the
 * order of the buffer's dimensions (copy index c0 outermost; the same for
 * every nest of one shape, so a prefetch and its move give each element
 * to the same work-item), then split among the work-items. */
static void gen_shared_copy(og *o, const lt_node *x)
{
	cg *g = o->g;
	const lt_node *nest[IR_MAX_RANK];
	int n = 0;
	const lt_node *y = x;
	while (y && y->kind == LT_LOOP && n < IR_MAX_RANK) {
		nest[n++] = y;
		y = y->nkids == 1 ? y->kids[0] : NULL;
	}
	if (!y || y->kind == LT_LOOP) {
		cg_bad(g, "copy nest of index", x->index);
		return;
	}
	const lt_node *sorted[IR_MAX_RANK];
	memcpy(sorted, nest, sizeof *nest * (size_t)n);
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_loop);
	int id = o->nest++;
	ir_strategy s = cur_strategy(o);
	int reg = o->D->cuda ? nest_next_reg(o, nest[n - 1]) : -1;
	bool cuda_stripe = o->D->cuda && o->L->explicit_local && (s == STRAT_STRIPED || reg >= 0);
	if (cuda_stripe)
		kg_comment(g->kg, "shared by the block (%s: consecutive threads, consecutive elements)",
		           reg >= 0 ? "striped, for the next block in registers" : "striped");
	else
		kg_comment(g->kg, "shared by the work-group (%s)", s == STRAT_STRIPED ? "striped" : "blocked");
	kg_block_bare(g->kg);
	ct_buf e;
	ct_buf_init(&e);
	for (int i = 0; i < n; i++) {
		buf_reset(&e);
		ct_buf_puts(&e, "(");
		cg_bound(g, &e, sorted[i]->hi);
		ct_buf_puts(&e, ") - (");
		cg_bound(g, &e, sorted[i]->lo);
		ct_buf_puts(&e, ")");
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_e%d_%d = %s;", id, i, e.s ? e.s : "0");
	}
	buf_reset(&e);
	for (int i = 0; i < n; i++)
		ct_buf_printf(&e, "%sct_e%d_%d", i ? " * " : "", id, i);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_n%d = %s;", id, n ? (e.s ? e.s : "0") : "1");
	char qn[32];
	snprintf(qn, sizeof qn, "ct_q%d", id);
	int64_t vw = cuda_stripe ? copy_vec_width(o, sorted, n, copy_stmt(x)) : 1;
	if (vw > 1) {
		/* v consecutive elements of the innermost dimension per thread and
		 * step: 16-byte loads where the source allows (gen_copy_lanes) */
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma unroll");
		kg_block_open(g->kg, "for (int64_t %s = 0; %s < (ct_n%d / %lld + ct_nwi - 1) / ct_nwi; %s++)", qn, qn, id,
		              (long long)vw, qn);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_f%d = ct_lid + %s * ct_nwi;", id, qn);
		kg_block_open(g->kg, "if (ct_f%d < ct_n%d / %lld)", id, id, (long long)vw);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t ct_r%d = ct_f%d * %lld;", id, id, (long long)vw);
	} else if (cuda_stripe) {
		/* element f of the block to thread f % ct_nwi: a warp's accesses are
		 * consecutive (coalesced in global memory, conflict-free in
		 * shared memory); a constant trip count, unrolled */
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma unroll");
		kg_block_open(g->kg, "for (int64_t %s = 0; %s < (ct_n%d + ct_nwi - 1) / ct_nwi; %s++)", qn, qn, id, qn);
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_f%d = ct_lid + %s * ct_nwi;", id, qn);
		kg_block_open(g->kg, "if (ct_f%d < ct_n%d)", id, id);
		o->nextq = reg >= 0 ? qn : NULL;
	} else if (s == STRAT_STRIPED) {
		kg_block_open(g->kg, "for (int64_t ct_s%d = ct_lid * %d; ct_s%d < ct_n%d; ct_s%d += ct_nwi * %d)", id,
		              OCL_STRIPE, id, id, id, OCL_STRIPE);
		kg_block_open(g->kg, "for (int64_t ct_f%d = ct_s%d; ct_f%d < ct_min64(ct_s%d + %d, ct_n%d); ct_f%d++)",
		              id, id, id, id, OCL_STRIPE, id, id);
	} else {
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_c%d = (ct_n%d + ct_nwi - 1) / ct_nwi;", id, id);
		kg_block_open(g->kg,
		              "for (int64_t ct_f%d = ct_lid * ct_c%d; ct_f%d < ct_min64((ct_lid + 1) * ct_c%d, ct_n%d); ct_f%d++)",
		              id, id, id, id, id, id);
	}
	if (vw == 1)
		kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t ct_r%d = ct_f%d;", id, id);
	const lt_node *outer[IR_MAX_RANK];
	for (int i = n - 1; i >= 0; i--) {
		buf_reset(&e);
		cg_bound(g, &e, sorted[i]->lo);
		const char *v = g->iname[sorted[i]->index];
		if (i == n - 1 && vw > 1) {
			/* the lanes' start: each lane defines the index itself */
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t ct_b%d = %s + ct_r%d %% ct_e%d_%d;", id,
			        e.s ? e.s : "0", id, id, i);
			if (i > 0)
				kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_r%d /= ct_e%d_%d;", id, id, i);
		} else if (i > 0) {
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %s + ct_r%d %% ct_e%d_%d;", v,
			        e.s ? e.s : "0", id, id, i);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "ct_r%d /= ct_e%d_%d;", id, id, i);
		} else {
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %s + ct_r%d;", v, e.s ? e.s : "0", id);
		}
		outer[i] = g->open[sorted[i]->index];
		g->open[sorted[i]->index] = sorted[i];
	}
	if (e.failed)
		g->failed = true;
	ct_buf_free(&e);
	if (vw > 1)
		gen_copy_lanes(o, nest[n - 1]->kids, sorted[n - 1]->index, id, vw, qn);
	else
		cg_nodes(g, nest[n - 1]->kids, 1);
	for (int i = 0; i < n; i++)
		g->open[sorted[i]->index] = outer[i];
	o->nextq = NULL;
	if (s == STRAT_STRIPED || cuda_stripe)
		kg_block_close(g->kg);
	kg_block_close(g->kg);
	kg_block_close(g->kg);
}

/* The code emitted right after x: its next sibling, or that of the cache
 * region nodes it ends; NULL at the end of a loop, an if or the kernel. */
static const lt_node *next_code(const lt_node *x)
{
	for (const lt_node *y = x; y; y = y->parent) {
		const lt_node *p = sibling(y, 1);
		if (p)
			return p;
		if (!y->parent || y->parent->kind != LT_CACHE)
			return NULL;
	}
	return NULL;
}

/* Whether the code of x starts with a fill of a local buffer. */
static bool starts_with_fill(const og *o, const lt_node *x)
{
	while (x && x->kind == LT_CACHE)
		x = x->nkids > 0 ? x->kids[0] : NULL;
	return x && kind_of(o, x) == CK_FILL;
}

/* A copy nest of a local region, with the barriers it needs: after the
 * fills (before the first reader), before a fill that may overwrite what
 * the group still reads, before a drain (after the writers). Consecutive
 * nests of the same kind share their barriers. */
static void gen_local_copy(og *o, const lt_node *x, copy_kind ck)
{
	const lt_node *prev = prev_code(x), *next = sibling(x, 1);
	copy_kind pk = prev ? kind_of(o, prev) : CK_NONE, nk = next ? kind_of(o, next) : CK_NONE;
	if (o->D->cuda) {
		/* fills in a row across the ends of cache regions (the moves of
		 * two double buffers) share their barriers as well */
		if (prev && pk == CK_NONE && ends_with_barrier(o, prev))
			pk = CK_FILL;
		if (!next && starts_with_fill(o, next_code(x)))
			nk = CK_FILL;
	}
	if (ck == CK_FILL && pk != CK_FILL && !first_in_group(o, x))
		barrier(o);
	if (ck == CK_DRAIN && pk != CK_DRAIN)
		barrier(o);
	gen_shared_copy(o, x);
	if (ck == CK_FILL && nk != CK_FILL)
		barrier(o);
}

/* ------------------------------------------------------------ vectorize */

#define OCL_MAX_LANES 16 /* float16, double16: OpenCL's widest vector types */

/* Whether a loop below x (not x) is unrolled or vectorized. */
static bool has_verb_inside(const lt_node *x)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if ((y->kind == LT_LOOP && (y->unroll || y->vector)) || has_verb_inside(y))
			return true;
	}
	return false;
}

/* Whether scalar expression e (as C, converted to t) is the same for every
 * iteration of loop xi: its text with xi fixed to 0 and to 1. */
static bool lane_invariant(cg *g, const ir_expr *e, ct_dtype t, int xi)
{
	ct_buf a, b;
	ct_buf_init(&a);
	ct_buf_init(&b);
	bool was = g->fixed[xi];
	int64_t val = g->fixed_val[xi];
	g->fixed[xi] = true;
	g->fixed_val[xi] = 0;
	cg_expr(g, &a, e, t);
	g->fixed_val[xi] = 1;
	cg_expr(g, &b, e, t);
	g->fixed[xi] = was;
	g->fixed_val[xi] = val;
	bool same = !a.failed && !b.failed && a.s && b.s && strcmp(a.s, b.s) == 0;
	ct_buf_free(&a);
	ct_buf_free(&b);
	return same;
}

/* Whether e can be computed as an OpenCL vector of type t over loop xi:
 * lane-invariant parts (broadcast), accesses of type t (contiguous in xi:
 * the plan pass checked it), + - * / and unary minus, and the calls that
 * OpenCL C overloads for vectors. */
static bool vec_ok(cg *g, const ir_expr *e, ct_dtype t, int xi)
{
	if (lane_invariant(g, e, t, xi))
		return true;
	switch (e->kind) {
	case EX_ACCESS:
		return e->type == t && e->id >= 0 && e->id < g->narrays && g->arrays[e->id].type == t;
	case EX_NEG: case EX_ADD: case EX_SUB: case EX_MUL: case EX_DIV:
		break;
	case EX_CALL:
		if (e->fn == FN_SELECT)
			return false;
		break;
	default:
		return false;
	}
	if (e->type != t)
		return false;
	for (int i = 0; i < e->nargs; i++)
		if (!vec_ok(g, e->args[i], t, xi))
			return false;
	return true;
}

/* e (vec_ok) as an OpenCL expression of type tN (N lanes from loop xi's
 * current value). */
static void put_vec(cg *g, ct_buf *b, const ir_expr *e, ct_dtype t, int n, int xi)
{
	const char *ty = ir_dtype_c(t);
	if (lane_invariant(g, e, t, xi)) {
		ct_buf_printf(b, "(%s%d)(", ty, n);
		cg_expr(g, b, e, t);
		ct_buf_putc(b, ')');
		return;
	}
	if (e->kind == EX_ACCESS) {
		ct_buf_printf(b, "vload%d(0, &", n);
		cg_access(g, b, e->id, e->sub);
		ct_buf_putc(b, ')');
		return;
	}
	if (e->kind == EX_NEG) {
		ct_buf_puts(b, "(-");
		put_vec(g, b, e->args[0], t, n, xi);
		ct_buf_putc(b, ')');
	} else if (e->kind == EX_CALL) {
		ct_buf_printf(b, "%s(", cg_math_fn(e->fn));
		for (int i = 0; i < e->nargs; i++) {
			if (i)
				ct_buf_puts(b, ", ");
			put_vec(g, b, e->args[i], t, n, xi);
		}
		ct_buf_putc(b, ')');
	} else {
		ct_buf_putc(b, '(');
		put_vec(g, b, e->args[0], t, n, xi);
		ct_buf_puts(b, cg_op(e->kind)->infix);
		put_vec(g, b, e->args[1], t, n, xi);
		ct_buf_putc(b, ')');
	}
}

/* Whether every node of vector loop x is a statement on a float array
 * whose right-hand side vec_ok accepts. */
static bool vec_body_ok(cg *g, const lt_node *x)
{
	for (int i = 0; i < x->nkids; i++) {
		const lt_node *y = x->kids[i];
		if (y->kind != LT_STMT || !y->stmt || y->stmt->kind != ND_STMT || !y->stmt->lhs ||
		    y->stmt->lhs->kind != EX_ACCESS || y->stmt->lhs->id < 0 || y->stmt->lhs->id >= g->narrays)
			return false;
		ct_dtype t = g->arrays[y->stmt->lhs->id].type;
		if ((t != CT_F32 && t != CT_F64) || !vec_ok(g, y->stmt->rhs, t, x->index) ||
		    lane_invariant(g, y->stmt->lhs, t, x->index))
			return false;
	}
	return x->nkids > 0 && x->nels == 0;
}

/* The statements of vector loop x, N lanes at a time. */
static void gen_vec_stmts(cg *g, const lt_node *x, int n)
{
	for (int i = 0; i < x->nkids; i++) {
		const ir_node *s = x->kids[i]->stmt;
		ct_dtype t = g->arrays[s->lhs->id].type;
		ct_buf l, r;
		ct_buf_init(&l);
		ct_buf_init(&r);
		cg_access(g, &l, s->lhs->id, s->lhs->sub);
		put_vec(g, &r, s->rhs, t, n, x->index);
		const char *arr = g->aname[s->lhs->id];
		if (s->op == AS_SET)
			kg_stmt(g->kg, KG_OTHER, arr, NULL, "vstore%d(%s, 0, &%s);", n, r.s ? r.s : "0", l.s ? l.s : "0");
		else
			kg_stmt(g->kg, KG_OTHER, arr, arr, "vstore%d(vload%d(0, &%s) %s %s, 0, &%s);", n, n,
			        l.s ? l.s : "0", cg_assign_op(s->op)->bare, r.s ? r.s : "0", l.s ? l.s : "0");
		if (l.failed || r.failed)
			g->failed = true;
		ct_buf_free(&l);
		ct_buf_free(&r);
	}
}

/* The lanes of vector loop x under vectors of vb bytes: the widest power
 * of two up to vb / element size (and OpenCL's 16) that its (constant)
 * trip count reaches; that limit when the trip count is known at run
 * time only. */
static int vec_lanes(const og *o, const lt_node *x, int64_t vb, int64_t *trips)
{
	const lt_node *s = x->kids[0];
	ct_dtype t = o->g->arrays[s->stmt->lhs->id].type;
	int64_t most = vb / (int64_t)ct_dtype_size(t);
	int cap = 1;
	while (cap * 2 <= most && cap * 2 <= OCL_MAX_LANES)
		cap *= 2;
	int64_t lo = 0, hi = 0;
	*trips = -1;
	if (!lt_const_range(x, &lo, &hi))
		return cap;
	*trips = hi > lo ? hi - lo : 0;
	int n = 1;
	while (n * 2 <= cap && n * 2 <= *trips)
		n *= 2;
	return n;
}

/*
 * vectorize(x) on plan(target=opencl). By default a scalar loop, left to
 * the OpenCL compiler's vectorizer: on PoCL 3.1 it ran as fast as float4
 * and twice as fast as float16 code (docs/OPENCL.md, section 4; a
 * `#pragma clang loop vectorize(enable)` on it gained nothing measurable
 * and made PoCL print warnings where it could not vectorize). With CT_OPT_VECTOR_BYTES set
 * (`--vector-bytes B`) the statements of x run N lanes at a time in
 * OpenCL vector types (vloadN / vstoreN of the contiguous accesses,
 * lane-invariant operands broadcast), then a scalar loop over the
 * iterations left (none when N divides a constant trip count); a body that
 * is not only such statements (lets, ifs, integer arrays, select) stays a
 * scalar loop.
 */
static void gen_vector_loop(og *o, const lt_node *x)
{
	cg *g = o->g;
	int64_t trips = -1, vb = ct_ctx_get_option(o->k->ctx, CT_OPT_VECTOR_BYTES);
	/* CUDA: a scalar loop, unrolled; NVVM merges the contiguous accesses
	 * of the (16-byte aligned) shared buffers into float4 / double2 */
	int n = !o->D->cuda && vb > 0 && x->step == 1 && vec_body_ok(g, x) ? vec_lanes(o, x, vb, &trips) : 1;
	if (n < 2) {
		gen_plain_loop(o, x, false, true);
		return;
	}
	cg_range r;
	cg_range_open(g, x, &r);
	const char *v = g->iname[x->index], *hi = r.hi.s ? r.hi.s : "0";
	kg_comment(g->kg, "%svectorized: %s, %d lanes", x->tail ? "tail, " : "", v, n);
	kg_block_bare(g->kg);
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "int64_t %s = %s;", v, r.lo.s ? r.lo.s : "0");
	const lt_node *outer = cg_loop_enter(g, x);
	kg_block_open(g->kg, "for (; %s <= (%s) - %d; %s += %d)", v, hi, n, v, n);
	gen_vec_stmts(g, x, n);
	kg_block_close(g->kg);
	if (trips < 0 || trips % n != 0) {
		kg_block_open(g->kg, "for (; %s < %s; %s++)", v, hi, v);
		cg_nodes(g, x->kids, x->nkids);
		kg_block_close(g->kg);
	}
	cg_loop_leave(g, x, outer);
	kg_block_close(g->kg);
	cg_range_close(g, &r);
}

/* Whether copy nest x (of a cache region) writes or reads a __local
 * buffer: the work-items of the group share its copies. */
static bool touches_local(const og *o, const lt_node *x)
{
	if (x->index < o->k->nindices)
		return false;
	const lt_node *s = copy_stmt(x);
	if (!s)
		return false;
	int w, rd;
	copy_sides(s, &w, &rd);
	return (w >= 0 && w < o->t->narrays && o->is_local[w]) || (rd >= 0 && rd < o->t->narrays && o->is_local[rd]);
}

/* Collect into item[d] the work-item loop of each dimension below x; false
 * when two of one dimension differ (index or bounds), or when x holds a
 * barrier or a cooperative copy (code that every work-item of the group
 * must run). */
static bool item_loops_below(const og *o, const lt_node *x, const lt_node **item)
{
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = i < x->nkids ? x->kids[i] : x->els[i - x->nkids];
		if (y->kind == LT_CACHE && y->cache >= 0 && y->cache < o->t->nregions && o->local_region[y->cache])
			return false;
		if (y->kind == LT_LOOP && y->index >= 0 && y->index < o->t->nindices) {
			if (touches_local(o, y))
				return false;
			if (o->role[y->index] == OR_ITEM) {
				const lt_node *z = item[o->dim[y->index]];
				if (z && (z->index != y->index || z->step != y->step || !bx_equal(z->lo, y->lo) ||
				          !bx_equal(z->hi, y->hi)))
					return false;
				item[o->dim[y->index]] = y;
			} else if (o->role[y->index] != OR_NONE) {
				return false;
			}
		}
		if (!item_loops_below(o, y, item))
			return false;
	}
	return true;
}

/* The slot that holds x in its parent's kids (or among the roots). */
static lt_node *const *node_slot(const og *o, const lt_node *x)
{
	const lt_node *p = x->parent;
	lt_node *const *v = p ? p->kids : o->t->roots;
	int n = p ? p->nkids : o->t->nroots;
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return &v[i];
	return NULL;
}

/*
 * A sequential loop without barriers around work-item loops, in a kernel
 * with barriers: the work-item indices are defined and their guards
 * (`if (ii < 5 && jj < 8)`) tested once above the loop, and the work-item
 * loops below it open no guard of their own. Each work-item runs its own
 * copy of the sequential loops, so testing the guard outside them is the
 * same program; only the private copies a work-item makes for itself move
 * under the guard. It keeps divergent branches out of the sequential loops,
 * which PoCL 3.1 turns into loops with barriers in kernels that have
 * barriers (docs/OPENCL.md, section 5): with the guard inside them, the
 * vectorized work-item loops of loopvec lost updates of tail work-groups.
 */
static bool hoist_guard(og *o, const lt_node *x)
{
	cg *g = o->g;
	if (!o->any_local || o->hoisted || x == o->hoist_at || o->role[x->index] != OR_NONE || has_barrier(o, x))
		return false;
	const lt_node *item[3] = {NULL, NULL, NULL};
	if (!item_loops_below(o, x, item) || (!item[0] && !item[1] && !item[2]))
		return false;
	/* a work-item loop with affine bounds (a split of an affine loop) may use indices of the
	 * loops between: its guard stays at the loop */
	for (int d = 0; d < 3; d++)
		if (item[d] && lt_affine_loop(item[d]))
			return false;
	lt_node *const *slot = node_slot(o, x);
	if (!slot)
		return false;
	ct_buf cond;
	ct_buf_init(&cond);
	kg_block_bare(g->kg);
	unsigned mask = 0;
	for (int d = 0; d < 3; d++) {
		if (!item[d])
			continue;
		ct_buf lo, hi;
		ct_buf_init(&lo);
		ct_buf_init(&hi);
		cg_bound(g, &lo, item[d]->lo);
		cg_bound(g, &hi, item[d]->hi);
		const char *v = g->iname[item[d]->index];
		char id[96];
		if (item_aligned(o, item[d])) {
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = (int64_t)%s * %lld;", v,
			        gpu_id(o, 'l', d, id, sizeof id), (long long)item[d]->step);
			ct_buf_printf(&cond, "%s%s >= %s && %s < %s", mask ? " && " : "", v, lo.s ? lo.s : "0", v,
			              hi.s ? hi.s : "0");
		} else {
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = %s + (int64_t)%s * %lld;", v,
			        lo.s ? lo.s : "0", gpu_id(o, 'l', d, id, sizeof id), (long long)item[d]->step);
			ct_buf_printf(&cond, "%s%s < %s", mask ? " && " : "", v, hi.s ? hi.s : "0");
		}
		if (lo.failed || hi.failed)
			g->failed = true;
		ct_buf_free(&lo);
		ct_buf_free(&hi);
		mask |= 1u << d;
	}
	kg_block_open(g->kg, "if (%s)", cond.s ? cond.s : "0");
	if (cond.failed)
		g->failed = true;
	ct_buf_free(&cond);
	const lt_node *was = o->hoist_at;
	o->hoist_at = x;
	o->hoisted = mask;
	cg_nodes(g, slot, 1);
	o->hoisted = 0;
	o->hoist_at = was;
	kg_block_close(g->kg);
	kg_block_close(g->kg);
	return true;
}

/* The copy index that subscript dimension b of spread buffer a is in copy
 * statement s (spread() checked it is one), or -1. */
static int spread_copy_index(const og *o, const lt_node *s, int a, int b)
{
	const ir_expr *e = s->stmt->lhs && s->stmt->lhs->id == a ? s->stmt->lhs : s->stmt->rhs;
	if (!e || e->kind != EX_ACCESS || e->id != a || e->sub[b].n != 1)
		return -1;
	(void)o;
	return e->sub[b].t[0].id;
}

/*
 * A copy nest of a spread private cache (CUDA): in each spread dimension
 * the thread copies only its own part, `ct_qN` = 0 .. its extent, at
 * buffer position own + ct_qN (own = its work-item index, guarded by the
 * loop's bounds for tail blocks); the other loops run as written. Every
 * loop has a constant trip count, so `#pragma unroll` keeps the share in
 * registers.
 */
static void gen_spread_copy(og *o, const lt_node *x, int a)
{
	cg *g = o->g;
	const dist_buf *db = &o->dist[a];
	const lt_node *s = copy_stmt(x);
	int rank = o->t->arrays[a].rank;
	int cidx[IR_MAX_RANK];
	for (int b = 0; b < rank; b++)
		cidx[b] = db->dim_of[b] >= 0 ? spread_copy_index(o, s, a, b) : -1;
	const lt_node *nest[IR_MAX_RANK * 2];
	const lt_node *outer[IR_MAX_RANK * 2];
	int n = 0, opened = 0;
	char qn[3][32];
	const lt_node *y = x;
	kg_comment(g->kg, "this thread's share");
	while (y && y->kind == LT_LOOP && n < IR_MAX_RANK * 2) {
		nest[n] = y;
		int b = -1;
		for (int bb = 0; bb < rank; bb++)
			if (cidx[bb] == y->index)
				b = bb;
		cg_range r;
		cg_range_open(g, y, &r);
		if (b >= 0) {
			int d = db->dim_of[b];
			char id[96];
			snprintf(qn[d], sizeof qn[d], "ct_q%d", o->nest++);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "#pragma unroll");
			kg_block_open(g->kg, "for (int64_t %s = 0; %s < %lld; %s++)", qn[d], qn[d], (long long)db->ext[b],
			              qn[d]);
			const char *v = g->iname[y->index];
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "const int64_t %s = (int64_t)%s * %lld + %s;", v,
			        gpu_id(o, 'l', d, id, sizeof id), (long long)db->ext[b], qn[d]);
			kg_block_open(g->kg, "if (%s >= %s && %s < %s)", v, r.lo.s ? r.lo.s : "0", v, r.hi.s ? r.hi.s : "0");
			o->qtext[d] = qn[d];
			opened += 2;
			outer[n] = g->open[y->index];
			g->open[y->index] = y;
		} else {
			cg_unroll_hint(g, y);
			cg_for_open(g, y, &r, true);
			opened += 1;
			outer[n] = cg_loop_enter(g, y);
		}
		cg_range_close(g, &r);
		n++;
		y = y->nkids == 1 ? y->kids[0] : NULL;
	}
	if (n > 0)
		cg_nodes(g, nest[n - 1]->kids, nest[n - 1]->nkids);
	for (int i = n - 1; i >= 0; i--)
		g->open[nest[i]->index] = outer[i];
	for (int i = 0; i < opened; i++)
		kg_block_close(g->kg);
	for (int d = 0; d < 3; d++)
		o->qtext[d] = NULL;
}

/* The spread buffer whose copy nest x is (in a spread region), or -1. */
static int spread_copy_of(const og *o, const lt_node *x)
{
	if (o->ncur == 0 || !o->dist_region[o->cur[o->ncur - 1]] || x->index < o->k->nindices)
		return -1;
	const lt_node *s = copy_stmt(x);
	if (!s)
		return -1;
	int w, rd;
	copy_sides(s, &w, &rd);
	if (w >= 0 && w < o->t->narrays && o->dist[w].on)
		return w;
	if (rd >= 0 && rd < o->t->narrays && o->dist[rd].on)
		return rd;
	return -1;
}

static bool hook_loop(cg *g, const lt_node *x)
{
	og *o = g->hook_ud;
	if (x->index < 0 || x->index >= o->t->nindices)
		return false;
	if (hoist_guard(o, x))
		return true;
	int sa = spread_copy_of(o, x);
	if (sa >= 0) {
		gen_spread_copy(o, x, sa);
		return true;
	}
	if (o->role[x->index] != OR_NONE) {
		gen_mapped(o, x);
		return true;
	}
	if (o->ncur > 0 && o->local_region[o->cur[o->ncur - 1]]) {
		copy_kind ck = kind_of(o, x);
		if (ck != CK_NONE) {
			gen_local_copy(o, x, ck);
			return true;
		}
	}
	if (x->vector) {
		gen_vector_loop(o, x);
		return true;
	}
	if (o->any_local && has_barrier(o, x)) {
		gen_plain_loop(o, x, true, false);
		return true;
	}
	if (!x->unroll && has_verb_inside(x)) {
		/* a plain loop: the C backend would make a register tile of a
		 * reduction loop around unrolled and vectorized loops */
		gen_plain_loop(o, x, false, false);
		return true;
	}
	return false;
}

static void hook_region(cg *g, const lt_node *x, bool enter)
{
	og *o = g->hook_ud;
	if (enter && o->ncur < (int)(sizeof o->cur / sizeof o->cur[0]))
		o->cur[o->ncur++] = x->cache;
	else if (!enter && o->ncur > 0)
		o->ncur--;
}

/* ------------------------------------------------------------ the kernel */

/* OpenCL C spellings of what the C backend's code uses. */
static const char *const preamble[] = {
	"#if defined(cl_khr_fp64)",
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
	"#endif",
	"typedef long int64_t;",
	"typedef ulong uint64_t;",
	"typedef int int32_t;",
	"#define INT64_MAX LONG_MAX",
	"#define INT64_MIN LONG_MIN",
	"#define sqrtf sqrt",
	"#define expf exp",
	"#define fmaf fma",
	"#define fabsf fabs",
	"static inline int64_t ct_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }",
	"static inline int64_t ct_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }",
	"static inline int64_t ct_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }",
	"static inline int64_t ct_ineg(int64_t a) { return (int64_t)((uint64_t)0 - (uint64_t)a); }",
	"static inline int64_t ct_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : (b == -1 ? ct_ineg(a) : a / b); }",
	"static inline int64_t ct_iabs(int64_t a) { return a < 0 ? ct_ineg(a) : a; }",
	"static inline int64_t ct_min64(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max64(int64_t a, int64_t b) { return a > b ? a : b; }",
	"static inline float ct_min_float(float a, float b) { return a < b ? a : b; }",
	"static inline float ct_max_float(float a, float b) { return a > b ? a : b; }",
	"static inline int64_t ct_min_int32_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max_int32_t(int64_t a, int64_t b) { return a > b ? a : b; }",
	"static inline int64_t ct_min_int64_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max_int64_t(int64_t a, int64_t b) { return a > b ? a : b; }",
};

static const char *const preamble_fp64[] = {
	"static inline int64_t ct_itrunc(double x) { return x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x; }",
	"static inline double ct_min_double(double a, double b) { return a < b ? a : b; }",
	"static inline double ct_max_double(double a, double b) { return a > b ? a : b; }",
};

static const char *const preamble_fp32[] = {
	"static inline int64_t ct_itrunc(float x) { return x != x ? 0 : x >= 9.2e18f ? INT64_MAX : x <= -9.2e18f ? INT64_MIN : (int64_t)x; }",
};

/* CUDA C spellings of the same: NVRTC has no system headers, so there
 * the integer types are typedefs of their own (nvcc, whose runtime header
 * includes stdint.h already, takes them from there); the math functions
 * (sqrtf, fma, ...) are CUDA's device functions of the C names. The
 * helpers are inline, not static, so that unused ones raise no warning. */
static const char *const preamble_cuda[] = {
	"#if defined(__CUDACC_RTC__)",
	"typedef long long int64_t;",
	"typedef unsigned long long uint64_t;",
	"typedef int int32_t;",
	"#else",
	"#include <stdint.h>",
	"#endif",
	"#ifndef INT64_MAX",
	"#define INT64_MAX 9223372036854775807LL",
	"#define INT64_MIN (-9223372036854775807LL - 1LL)",
	"#endif",
	"#define CT_DEV __device__ __forceinline__",
	"CT_DEV int64_t ct_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }",
	"CT_DEV int64_t ct_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }",
	"CT_DEV int64_t ct_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }",
	"CT_DEV int64_t ct_ineg(int64_t a) { return (int64_t)((uint64_t)0 - (uint64_t)a); }",
	"CT_DEV int64_t ct_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : (b == -1 ? ct_ineg(a) : a / b); }",
	"CT_DEV int64_t ct_iabs(int64_t a) { return a < 0 ? ct_ineg(a) : a; }",
	"CT_DEV int64_t ct_min64(int64_t a, int64_t b) { return a < b ? a : b; }",
	"CT_DEV int64_t ct_max64(int64_t a, int64_t b) { return a > b ? a : b; }",
	"CT_DEV float ct_min_float(float a, float b) { return a < b ? a : b; }",
	"CT_DEV float ct_max_float(float a, float b) { return a > b ? a : b; }",
	"CT_DEV double ct_min_double(double a, double b) { return a < b ? a : b; }",
	"CT_DEV double ct_max_double(double a, double b) { return a > b ? a : b; }",
	"CT_DEV int64_t ct_min_int32_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"CT_DEV int64_t ct_max_int32_t(int64_t a, int64_t b) { return a > b ? a : b; }",
	"CT_DEV int64_t ct_min_int64_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"CT_DEV int64_t ct_max_int64_t(int64_t a, int64_t b) { return a > b ? a : b; }",
	"CT_DEV int64_t ct_itrunc(double x) { return x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x; }",
};

static bool uses_double(const ct_looptree *t)
{
	for (int a = 0; a < t->narrays; a++)
		if (t->arrays[a].type == CT_F64)
			return true;
	return false;
}

/* The kernel's parameter list. */
static void put_kernel_params(const gpu_dialect *D, cg *g, ct_buf *b)
{
	const ct_kernel *k = g->k;
	bool first = true;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		if (arr->role == CT_TEMP)
			continue;
		bool ro = ir_array_readonly(arr);
		ct_buf_printf(b, "%s%s%s%s *%s %s", first ? "" : ", ", D->gptr, ro ? "const " : "",
		              ir_dtype_c(arr->type), D->restrict_kw, g->aname[a]);
		first = false;
	}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime) {
			ct_buf_printf(b, "%s%s %s", first ? "" : ", ", D->long_param, g->pname[p]);
			first = false;
		}
	if (first)
		ct_buf_puts(b, "void");
}

/* Where storage a comes from in the file: a kernel array's declaration, or
 * the cache(...) statement whose buffer (or prefetch buffer) it is. */
static ir_pos storage_pos(const og *o, int a)
{
	const ct_looptree *t = o->t;
	for (int r = 0; a >= o->k->narrays && r < t->nregions; r++) {
		const lt_region *rg = &t->regions[r];
		if ((rg->buffer == a || rg->temp == a) && rg->item >= 0 && rg->item < o->k->nplan)
			return o->k->plan[rg->item].pos;
	}
	return t->arrays[a].pos;
}

/*
 * CUDA: a shared buffer whose rows (its innermost layout dimension) span a
 * multiple of the 32 four-byte banks would put a column in one bank: the
 * threads of a warp that walk down a column (a transposed fill, a
 * layout=(1, 0) cache read by rows of threads) would wait on each other.
 * Its rows are padded by 16 bytes, which shifts each row by 4 banks and
 * keeps every row 16-byte aligned (float4 / double2 loads stay possible).
 * The strides the accesses use (g->stride) and *count change; returns the
 * padding in elements (0: none).
 */
static int64_t pad_shared(og *o, int a, int64_t *count)
{
	cg *g = o->g;
	const ir_array *arr = &o->t->arrays[a];
	int rank = arr->rank;
	if (rank < 2)
		return 0;
	int64_t ext[IR_MAX_RANK];
	for (int d = 0; d < rank; d++)
		if (!bx_is_const(o->t->ext[a * IR_MAX_RANK + d], &ext[d]) || ext[d] < 1)
			return 0;
	int64_t size = (int64_t)ct_dtype_size(arr->type);
	int inner = arr->order[rank - 1];
	if ((ext[inner] * size) % 128 != 0)
		return 0;
	int64_t pad = 16 / size, s = ext[inner] + pad;
	for (int r = rank - 2; r >= 0; r--) {
		int d = arr->order[r];
		char txt[32];
		snprintf(txt, sizeof txt, "%lld", (long long)s);
		char *copy = strdup(txt);
		if (!copy) {
			g->failed = true;
			return 0;
		}
		free(g->stride[a * IR_MAX_RANK + d]);
		g->stride[a * IR_MAX_RANK + d] = copy;
		s *= ext[d];
	}
	*count = s;
	return pad;
}

/*
 * CUDA: the shared buffers (sized by declare_buffers), each its own
 * array. The versions of one cache (main and tail blocks: AA, AA_2, ...)
 * may be in use at once (the main and tail versions of a work-item loop
 * each have their block, both filled before the loop that uses them), so
 * they do not share storage; their sum counts against the 48 KiB
 * (cuda_limits).
 */
static void declare_shared(og *o)
{
	cg *g = o->g;
	const ct_looptree *t = o->t;
	for (int a = 0; a < t->narrays; a++) {
		if (o->sbytes[a] == 0)
			continue;
		const ir_array *arr = &t->arrays[a];
		int64_t n = o->sbytes[a] / (int64_t)ct_dtype_size(arr->type);
		o->L->local_bytes += o->sbytes[a];
		if (o->spad[a] > 0)
			kg_stmt(g->kg, KG_OTHER, NULL, NULL,
			        "__shared__ __align__(16) %s %s[%lld]; /* cache buffer %s, shared by the block; rows padded by "
			        "%lld (no bank conflicts down a column) */",
			        ir_dtype_c(arr->type), g->aname[a], (long long)n, arr->name, (long long)o->spad[a]);
		else
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "__shared__ __align__(16) %s %s[%lld]; /* cache buffer %s, shared by the block */",
			        ir_dtype_c(arr->type), g->aname[a], (long long)n, arr->name);
	}
}

/* Temps and cache buffers: __local or per work-item arrays of their
 * (compile-time) size. */
static bool declare_buffers(og *o, const int64_t *pv)
{
	cg *g = o->g;
	const ct_looptree *t = o->t;
	for (int a = 0; a < t->narrays; a++) {
		const ir_array *arr = &t->arrays[a];
		if (arr->role != CT_TEMP)
			continue;
		bool used = a < o->k->narrays;
		for (int r = 0; r < t->nregions && !used; r++)
			used = (!t->regions[r].elided && t->regions[r].buffer == a) || t->regions[r].temp == a;
		if (!used)
			continue;
		for (int d = 0; d < arr->rank; d++)
			if (!bx_is_const(t->ext[a * IR_MAX_RANK + d], &(int64_t){0}))
				return og_err(o, storage_pos(o, a),
				              "'%s' needs a compile-time size on plan(target=%s) (its extent %d depends "
				              "on a runtime param)", arr->name, o->D->target, d);
		int64_t stride[IR_MAX_RANK], count = 0;
		ct_status st = lt_array_layout(t, pv, a, stride, &count);
		if (st) {
			o->st = st;
			return false;
		}
		if (count < 1)
			count = 1;
		int64_t bytes = count * (int64_t)ct_dtype_size(arr->type);
		const char *what = a < o->k->narrays ? "temp" : "cache buffer";
		if (o->D->cuda && o->is_next[a] && o->L->explicit_local) {
			/* the next block of a double buffer: in registers, each
			 * thread the elements f of its striped share (gen_shared_copy) */
			int64_t nwi = (int64_t)(o->L->local[0] * o->L->local[1] * o->L->local[2]);
			/* room for either share: one element or one 16-byte vector per
			 * thread and step (gen_shared_copy, copy_vec_width) */
			int64_t v = 16 / (int64_t)ct_dtype_size(arr->type), slots = ((count + v - 1) / v + nwi - 1) / nwi * v;
			o->next_reg[a] = true;
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s %s[%lld]; /* %s %s, the next block: this thread's share (registers) */",
			        ir_dtype_c(arr->type), g->aname[a], (long long)slots, what, arr->name);
		} else if (o->dist[a].on) {
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s %s[%lld]; /* %s %s, this thread's share (registers) */",
			        ir_dtype_c(arr->type), g->aname[a], (long long)o->dist[a].count, what, arr->name);
		} else if (o->is_local[a] && o->D->cuda) {
			/* declared by declare_shared, after every buffer is sized */
			o->spad[a] = pad_shared(o, a, &count);
			o->sbytes[a] = count * (int64_t)ct_dtype_size(arr->type);
		} else if (o->is_local[a]) {
			o->L->local_bytes += bytes;
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s %s %s[%lld]; /* %s %s, %s */", o->D->shared_q,
			        ir_dtype_c(arr->type), g->aname[a], (long long)count, what, arr->name,
			        o->is_next[a] ? "the next block: each work-item fills and moves its own share"
			                      : "shared by the work-group");
		} else {
			if (bytes > OCL_MAX_PRIVATE_BYTES)
				return og_err(o, storage_pos(o, a),
				              "%s '%s' needs %lld bytes per work-item: more than the %d of private memory "
				              "plan(target=%s) allows (use location=%s or a smaller block)",
				              what, arr->name, (long long)bytes, OCL_MAX_PRIVATE_BYTES, o->D->target,
				              o->D->shared_loc);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s %s[%lld]%s; /* %s %s, this work-item's */",
			        ir_dtype_c(arr->type), g->aname[a], (long long)count, a < o->k->narrays ? " = {0}" : "",
			        what, arr->name);
		}
	}
	return true;
}

/* Whether the loops mapped to the grid with affine bounds can be: a work-item computes its value
 * of such a loop from the loop's lower bound, so that bound may use only indices whose value is
 * the same in every iteration the work-item runs (params, and loops mapped to the grid: their
 * whole split chain); a sequential loop's index there would give the work-item other values of
 * the loop in each of its iterations, and two work-items of other groups one value, unordered.
 * The upper bound may use any index: it only guards. CT_ERR_INPUT naming the loops otherwise. */
static bool affine_grid_ok(og *o)
{
	const ct_kernel *k = o->k;
	const ct_looptree *t = o->t;
	for (int d = 0; d < o->ndims; d++) {
		const ir_index *ix = &k->indices[o->root[d]];
		for (int l = 0; ir_index_affine(ix) && l < ix->nlo; l++)
			for (int q = 0; q < ix->los[l].n; q++) {
				const aff_term *tm = &ix->los[l].t[q];
				if (tm->kind != AFF_INDEX || tm->id < 0 || tm->id >= k->nindices)
					continue;
				for (int c = 0; c < t->chain_len[tm->id]; c++) {
					int y = t->chain[tm->id][c];
					if (o->role[y] != OR_NONE)
						continue;
					ir_pos pos = k->indices[o->root[d]].pos;
					for (int i = 0; i < k->nplan; i++)
						for (int j = 0; k->plan[i].kind == PL_PARALLELIZE && j < k->plan[i].n; j++)
							if (k->plan[i].idx[j] == o->root[d])
								pos = k->plan[i].idx_pos ? k->plan[i].idx_pos[j] : k->plan[i].pos;
					char which[200];
					if (y == tm->id)
						snprintf(which, sizeof which, "a loop that");
					else
						snprintf(which, sizeof which, "whose split loop '%s'", ix_name(o, y));
					return og_err(o, pos,
					              "parallelize(%s): the lower bound of loop '%s' uses '%s', %s runs in "
					              "sequence inside each work-item on plan(target=%s): the values of '%s' "
					              "would move from one work-item to another between its iterations "
					              "(parallelize '%s' too, or give '%s' a lower bound over params and "
					              "parallelized loops)",
					              ix->name, ix->name, k->indices[tm->id].name, which, o->D->target, ix->name,
					              k->indices[tm->id].name, ix->name);
				}
			}
	}
	return true;
}

/* Global and local sizes of the NDRange under param values pv: a loop with affine bounds
 * covers its greatest range over the enclosing loops' (ir_index_span); false (CT_ERR_LIMIT)
 * when that overflows. */
static bool launch_sizes(og *o, const int64_t *pv)
{
	ocl_launch *L = o->L;
	L->barriers = o->any_local;
	L->ndims = o->ndims > 0 ? o->ndims : 1;
	L->explicit_local = false;
	for (int d = 0; d < o->ndims; d++)
		L->explicit_local = L->explicit_local || o->split[d];
	L->sizes_known = ir_params_complete(o->k);
	for (int d = 0; d < 3; d++)
		L->global[d] = L->local[d] = 1;
	for (int d = 0; d < o->ndims; d++) {
		const ir_index *ix = &o->k->indices[o->root[d]];
		bool ok = true;
		int64_t n = 0;
		if (ir_index_affine(ix)) {
			if (!ir_index_span(o->k, pv, o->root[d], &n)) {
				ct_error(o->k->ctx, CT_ERR_LIMIT,
				         "parallelize(%s): the greatest range of loop '%s' over its enclosing loops' "
				         "cannot be computed in 64-bit arithmetic (the grid is sized by it)",
				         ix->name, ix->name);
				o->st = CT_ERR_LIMIT;
				return false;
			}
		} else {
			int64_t lo = aff_eval(ix->lo, pv, NULL, &ok), hi = aff_eval(ix->hi, pv, NULL, &ok);
			n = hi > lo ? hi - lo : 0;
		}
		int64_t groups = o->split[d] ? ct_trip_count(0, n, ix->step) : n;
		L->global[d] = (size_t)(groups < 1 ? 1 : groups) * (size_t)o->lsize[d];
		L->local[d] = (size_t)o->lsize[d];
		if (!ok)
			L->sizes_known = false;
	}
	return true;
}

static void og_free(og *o)
{
	free(o->role);
	free(o->dim);
	free(o->is_local);
	free(o->is_next);
	free(o->dist);
	free(o->dist_region);
	free(o->next_reg);
	free(o->sbytes);
	free(o->spad);
	free(o->local_region);
}

/* The code that starts the kernel: which work-item this is in its group,
 * and (CUDA) the threads that must do nothing. */
static void kernel_start(og *o)
{
	kg_ctx *kg = o->g->kg;
	if (!o->D->cuda) {
		kg_stmt(kg, KG_OTHER, NULL, NULL,
		        "const int64_t ct_lid = (int64_t)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + "
		        "get_local_size(1) * get_local_id(2))); /* this work-item in its group */");
		kg_stmt(kg, KG_OTHER, NULL, NULL,
		        "const int64_t ct_nwi = (int64_t)(get_local_size(0) * get_local_size(1) * get_local_size(2));");
	} else {
		/* the block is launched with exactly local[] threads when
		 * explicit_local: its size is a constant the compiler folds into
		 * the copies; otherwise the runtime picks the block and rounds
		 * the grid up, and every thread past the iteration space fails
		 * its loop's guard (and, past the dimensions used, returns here) */
		const ocl_launch *L = o->L;
		int used = o->ndims;
		ct_buf c;
		ct_buf_init(&c);
		for (int d = used; d < 3; d++)
			ct_buf_printf(&c, "%sthreadIdx.%c != 0 || blockIdx.%c != 0", c.len ? " || " : "", "xyz"[d],
			              "xyz"[d]);
		kg_block_open(kg, "if (%s)", c.s ? c.s : "0");
		kg_stmt(kg, KG_OTHER, NULL, NULL, "return; /* a thread past the iteration space */");
		kg_block_close(kg);
		if (c.failed)
			o->g->failed = true;
		ct_buf_free(&c);
		if (L->explicit_local) {
			kg_stmt(kg, KG_OTHER, NULL, NULL,
			        "const int64_t ct_lid = (int64_t)(threadIdx.x + %zu * (threadIdx.y + %zu * threadIdx.z)); "
			        "/* this thread in its block */", L->local[0], L->local[1]);
			kg_stmt(kg, KG_OTHER, NULL, NULL, "const int64_t ct_nwi = %zu; /* threads per block */",
			        L->local[0] * L->local[1] * L->local[2]);
		} else {
			kg_stmt(kg, KG_OTHER, NULL, NULL,
			        "const int64_t ct_lid = (int64_t)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * "
			        "threadIdx.z)); /* this thread in its block */");
			kg_stmt(kg, KG_OTHER, NULL, NULL,
			        "const int64_t ct_nwi = (int64_t)(blockDim.x * blockDim.y * blockDim.z);");
		}
	}
	kg_stmt(kg, KG_OTHER, NULL, NULL, "(void)ct_lid;");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "(void)ct_nwi;");
}

static void put_preamble(og *o, kg_ctx *kg, const char *fn)
{
	const ct_kernel *k = o->k;
	kg_preamble(kg, "/* %s: %s generated by cachet %s from kernel '%s'. */", fn, o->D->lang, CACHET_VERSION,
	            k->name);
	if (o->D->cuda) {
		for (size_t i = 0; i < sizeof preamble_cuda / sizeof preamble_cuda[0]; i++)
			kg_preamble(kg, "%s", preamble_cuda[i]);
		return;
	}
	for (size_t i = 0; i < sizeof preamble / sizeof preamble[0]; i++)
		kg_preamble(kg, "%s", preamble[i]);
	bool fp64 = uses_double(o->t);
	for (size_t i = 0; fp64 && i < sizeof preamble_fp64 / sizeof preamble_fp64[0]; i++)
		kg_preamble(kg, "%s", preamble_fp64[i]);
	for (size_t i = 0; !fp64 && i < sizeof preamble_fp32 / sizeof preamble_fp32[0]; i++)
		kg_preamble(kg, "%s", preamble_fp32[i]);
}

#define CUDA_MAX_THREADS 1024      /* threads per block, on every NVIDIA GPU CUDA 13 supports */
#define CUDA_MAX_STATIC_SHARED 49152 /* bytes of __shared__ arrays declared in a kernel */
#define CUDA_MAX_GRID_YZ 65535       /* blocks in the grid's y and z dimensions */

/* CUDA's fixed limits, refused at generation rather than at launch: the
 * threads of a block (before the buffers), the static shared memory of
 * the buffers (shared: after declare_buffers). The position is the
 * parallelize item's. */
static bool cuda_limits(og *o, bool shared)
{
	const ocl_launch *L = o->L;
	ir_pos pos = o->k->plan_pos;
	for (int i = 0; i < o->k->nplan; i++)
		if (o->k->plan[i].kind == PL_PARALLELIZE)
			pos = o->k->plan[i].pos;
	size_t threads = L->local[0] * L->local[1] * L->local[2];
	if (!shared && L->explicit_local && threads > CUDA_MAX_THREADS)
		return og_err(o, pos,
		              "a block of %zu x %zu x %zu = %zu threads exceeds CUDA's %d (split the parallel indices "
		              "again: each thread then runs the inner loop)",
		              L->local[0], L->local[1], L->local[2], threads, CUDA_MAX_THREADS);
	for (int d = 1; !shared && L->explicit_local && L->sizes_known && d < 3; d++) {
		size_t blocks = (L->global[d] + L->local[d] - 1) / L->local[d];
		if (blocks > CUDA_MAX_GRID_YZ)
			return og_err(o, pos,
			              "%zu blocks in the grid's %c dimension ('%s') exceed CUDA's %d (parallelize the index "
			              "with the most blocks first: the grid's x takes 2^31 - 1)",
			              blocks, "xyz"[d], L->dim_name[d], CUDA_MAX_GRID_YZ);
	}
	if (shared && L->local_bytes > CUDA_MAX_STATIC_SHARED)
		return og_err(o, pos,
		              "the shared caches need %lld bytes per block: more than the %d of static shared memory "
		              "(use smaller blocks)", (long long)L->local_bytes, CUDA_MAX_STATIC_SHARED);
	return true;
}

/* The one GPU generator: the kernel of loop tree t in dialect D. */
static char *gen_gpu(ct_looptree *t, size_t *len, ocl_launch *Lout, const gpu_dialect *D)
{
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	ocl_launch Lbuf;
	ocl_launch *L = Lout ? Lout : &Lbuf;
	memset(L, 0, sizeof *L);
	og o;
	memset(&o, 0, sizeof o);
	o.D = D;
	o.t = t;
	o.k = k;
	o.L = L;
	o.role = calloc((size_t)t->nindices + 1, sizeof *o.role);
	o.dim = calloc((size_t)t->nindices + 1, sizeof *o.dim);
	o.is_local = calloc((size_t)t->narrays + 1, sizeof *o.is_local);
	o.is_next = calloc((size_t)t->narrays + 1, sizeof *o.is_next);
	o.dist = calloc((size_t)t->narrays + 1, sizeof *o.dist);
	o.dist_region = calloc((size_t)t->nregions + 1, sizeof *o.dist_region);
	o.next_reg = calloc((size_t)t->narrays + 1, sizeof *o.next_reg);
	o.sbytes = calloc((size_t)t->narrays + 1, sizeof *o.sbytes);
	o.spad = calloc((size_t)t->narrays + 1, sizeof *o.spad);
	o.local_region = calloc((size_t)t->nregions + 1, sizeof *o.local_region);
	int64_t *pv = calloc((size_t)k->nparams + (size_t)t->nderived + 1, sizeof *pv);
	if (!o.role || !o.dim || !o.is_local || !o.is_next || !o.local_region || !o.dist || !o.dist_region || !o.next_reg || !o.sbytes ||
	    !o.spad || !pv) {
		og_free(&o);
		free(pv);
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating %s", D->cuda ? "CUDA" : "OpenCL");
		return NULL;
	}
	lt_param_values(t, pv);
	o.pv = pv;
	if (!map_dims(&o) || !independent(&o, (const ir_node *const *)k->body, k->nbody) ||
	    !stmts_inside(&o, (const lt_node *const *)t->roots, t->nroots) || !check_regions(&o) ||
	    !check_verbs(&o) || !affine_grid_ok(&o) || !launch_sizes(&o, pv)) {
		og_free(&o);
		free(pv);
		return NULL;
	}
	if (D->cuda && !cuda_limits(&o, false)) {
		og_free(&o);
		free(pv);
		return NULL;
	}

	cg g;
	char *result = NULL;
	if (!cg_setup(&g, t, true)) {
		cg_teardown(&g);
		og_free(&o);
		free(pv);
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating %s", D->cuda ? "CUDA" : "OpenCL");
		return NULL;
	}
	o.g = &g;
	g.hook_loop = hook_loop;
	g.hook_region = hook_region;
	g.hook_access = D->cuda ? hook_access : NULL;
	g.hook_ud = &o;
	g.unroll_const_max = D->cuda ? CUDA_UNROLL_MAX : 0;
	g.kg = kg_new(ctx, D->kg_flags);
	if (!g.kg)
		goto out;
	char fn[300], entry[300];
	gen_symbol_names(k, fn, entry, sizeof fn);
	snprintf(L->fn, sizeof L->fn, "%s", fn);
	put_preamble(&o, g.kg, fn);
	ct_buf proto;
	ct_buf_init(&proto);
	if (D->cuda && L->explicit_local)
		/* the block size is fixed: the compiler may use the registers
		 * that many threads leave (on Hopper: 145 -> 129 for cuda_sgemm) */
		ct_buf_printf(&proto, "void __launch_bounds__(%zu) %s(", L->local[0] * L->local[1] * L->local[2], fn);
	else
		ct_buf_printf(&proto, "void %s(", fn);
	put_kernel_params(D, &g, &proto);
	ct_buf_putc(&proto, ')');
	if (proto.failed)
		g.failed = true;
	kg_func_declare(g.kg, fn, KG_FUNC_KERNEL, proto.s ? proto.s : "void f(void)", NULL, NULL);
	ct_buf_free(&proto);
	kg_func_begin(g.kg, fn);
	if (D->cuda && L->sizes_known && L->explicit_local)
		kg_comment(g.kg, "launch: grid (%zu, %zu, %zu) of blocks of (%zu, %zu, %zu) threads",
		           (L->global[0] + L->local[0] - 1) / L->local[0], (L->global[1] + L->local[1] - 1) / L->local[1],
		           (L->global[2] + L->local[2] - 1) / L->local[2], L->local[0], L->local[1], L->local[2]);
	else if (D->cuda && L->sizes_known)
		kg_comment(g.kg, "launch: (%zu, %zu, %zu) threads in blocks of any size", L->global[0], L->global[1],
		           L->global[2]);
	for (int d = 0; d < o.ndims; d++) {
		if (D->cuda)
			kg_comment(g.kg, "grid dimension %c: %s (%s)", "xyz"[d], L->dim_name[d],
			           o.split[d] ? "blocks of threads" : "threads");
		else
			kg_comment(g.kg, "NDRange dimension %d: %s (%s)", d, L->dim_name[d],
			           o.split[d] ? "work-groups of work-items" : "work-items");
	}
	if (D->cuda && declare_buffers(&o, pv))
		declare_shared(&o);
	if ((!D->cuda && !declare_buffers(&o, pv)) || o.st != CT_OK || (D->cuda && !cuda_limits(&o, true))) {
		kg_func_end(g.kg);
		goto out;
	}
	kernel_start(&o);
	cg_derived(&g);
	cg_nodes(&g, t->roots, t->nroots);
	kg_func_end(g.kg);

	result = cg_take_text(&g, !g.failed && o.st == CT_OK, len);
out:
	if (!result && o.st == CT_OK && !g.reported && ct_ctx_last_status(ctx) == CT_OK)
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating %s", D->cuda ? "CUDA" : "OpenCL");
	cg_teardown(&g);
	og_free(&o);
	free(pv);
	return result;
}

char *gen_opencl(ct_looptree *t, size_t *len, ocl_launch *L)
{
	return gen_gpu(t, len, L, &dialect_opencl);
}

char *gen_cuda(ct_looptree *t, size_t *len, ocl_launch *L)
{
	return gen_gpu(t, len, L, &dialect_cuda);
}
