/* threads_affine.c: predict --threads for kernels with affine loop bounds, which the model's
 * band walk does not take: the interpreter's trace with each access on its thread, counted by
 * the exact simulator per thread (private levels) and interleaved (shared levels). */
#include "model/model_int.h"
#include "model/sim.h"
#include "interp/interp.h"

#include <stdlib.h>
#include <string.h>

/* The most accesses of one stretch between barriers held back to interleave for the shared
 * levels (8 bytes each, 512 MiB at most): the whole trace predict simulates, so a trace
 * within AFFINE_SIM_MAX always gets its shared counts. */
#define TA_PENDING_MAX AFFINE_SIM_MAX

/* A held-back access: buffer (16 bits), write (1 bit), element offset (47 bits). */
enum { TA_OFF_BITS = 47 };

/* The trace's consumer. */
typedef struct tafeed {
	ct_ctx *ctx;
	int nt;
	sim **own;         /* [nt]: thread i's private levels (NULL: no private level) */
	sim *shared;       /* the shared levels (NULL: none) */
	uint64_t **q;      /* [nt]: thread i's accesses since the last barrier, for shared */
	int64_t *qn, *qcap;
	int64_t pending;   /* sum of qn */
	bool shared_ok;    /* false once a stretch passed TA_PENDING_MAX */
	int64_t *acc;      /* [nt] accesses per thread */
	int64_t total;
	int team;          /* most threads a parallel loop used */
	bool parallel;     /* a parallel loop ran */
} tafeed;

/* The held-back accesses to the shared levels, one of each thread in turn (as threads.c's
 * run_joint interleaves the rectangular bands' threads). */
static void ta_interleave(tafeed *f)
{
	if (!f->pending)
		return;
	for (int64_t k = 0;; k++) {
		bool any = false;
		for (int i = 0; i < f->nt; i++) {
			if (k >= f->qn[i])
				continue;
			uint64_t x = f->q[i][k];
			int64_t off = (int64_t)(x & (((uint64_t)1 << TA_OFF_BITS) - 1));
			sim_access(f->shared, (int)(x >> 48), off, (int)((x >> TA_OFF_BITS) & 1));
			any = true;
		}
		if (!any)
			break;
	}
	for (int i = 0; i < f->nt; i++)
		f->qn[i] = 0;
	f->pending = 0;
}

/* Hold access a of thread i back for the shared levels; false out of memory. */
static bool ta_hold(tafeed *f, int i, const interp_access *a)
{
	if (a->offset < 0 || a->offset >= ((int64_t)1 << TA_OFF_BITS) || a->buffer >= (1 << 15) ||
	    f->pending >= TA_PENDING_MAX) {
		f->shared_ok = false; /* not representable, or too long a stretch: no shared count */
		return true;
	}
	if (f->qn[i] == f->qcap[i]) {
		int64_t cap = f->qcap[i] ? 2 * f->qcap[i] : 4096;
		uint64_t *q = realloc(f->q[i], sizeof *q * (size_t)cap);
		if (!q)
			return false;
		f->q[i] = q;
		f->qcap[i] = cap;
	}
	f->q[i][f->qn[i]++] = (uint64_t)a->buffer << 48 | (uint64_t)(a->is_write != 0) << TA_OFF_BITS |
	                      (uint64_t)a->offset;
	f->pending++;
	return true;
}

static ct_status ta_feed(void *ud, const interp_access *acc, int n)
{
	tafeed *f = ud;
	for (int k = 0; k < n; k++) {
		const interp_access *a = &acc[k];
		if (a->buffer == INTERP_BARRIER) {
			ta_interleave(f);
			f->parallel = true;
			f->team = a->ref > f->team ? a->ref : f->team;
			continue;
		}
		if (++f->total > AFFINE_SIM_MAX)
			return ct_error(f->ctx, CT_ERR_LIMIT,
			                "the cache model does not analyse loops with affine bounds yet (issue #31), "
			                "and the trace has more than %lld accesses, too many to simulate within "
			                "predict --threads: use smaller sizes",
			                (long long)AFFINE_SIM_MAX);
		int i = a->thread;
		f->acc[i]++;
		if (f->own[i])
			sim_access(f->own[i], a->buffer, a->offset, a->is_write);
		if (f->shared && f->shared_ok && !ta_hold(f, i, a))
			return ct_error(f->ctx, CT_ERR_NOMEM, "out of memory");
	}
	return CT_OK;
}

/* The first parallel loop at or under x that the trace would split wrongly: a collapsed band,
 * a grid of two indices, or a main version followed by its tail (the generated code runs
 * them as one loop); NULL when there is none. *dynamic: a policy=dynamic loop was met. */
static const lt_node *ta_unsplittable(const ct_kernel *k, const lt_node *x, bool *dynamic)
{
	if (x->kind == LT_LOOP && x->parallel) {
		const ir_plan_item *it = x->par_item >= 0 && x->par_item < k->nplan ? &k->plan[x->par_item] : NULL;
		if (it && it->policy == POLICY_DYNAMIC)
			*dynamic = true;
		const lt_node *p = x->parent;
		bool tail = false;
		for (int i = 0; p && i + 1 < p->nkids; i++)
			if (p->kids[i] == x && p->kids[i + 1]->kind == LT_LOOP && p->kids[i + 1]->index == x->index)
				tail = true;
		if (x->collapse > 1 || tail || (it && (it->n > 1 || it->spmd)))
			return x;
		return NULL; /* loops inside run on its threads: not split again */
	}
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = ta_unsplittable(k, i < x->nkids ? x->kids[i] : x->els[i - x->nkids], dynamic);
		if (y)
			return y;
	}
	return NULL;
}

/* The levels of spec where want[l], as a spec of their own. */
static void ta_sub_spec(const sim_spec *spec, const bool *want, sim_spec *sub)
{
	memset(sub, 0, sizeof *sub);
	for (int l = 0; l < spec->nlevels; l++)
		if (want[l])
			sub->level[sub->nlevels++] = spec->level[l];
}

/* r's counts from the simulators: level l is the s-th of its kind's sub-spec. */
static ct_status ta_results(tafeed *f, const sim_spec *spec, ct_thread_result *r)
{
	int npriv = 0, nshared = 0;
	for (int l = 0; l < spec->nlevels; l++) {
		uint64_t ms[SIM_MAX_LEVELS] = {0};
		if (r->level[l].private_level) {
			int64_t sum = 0;
			for (int i = 0; i < f->nt; i++) {
				ct_status st = sim_result(f->own[i], ms, NULL, NULL);
				if (st)
					return st;
				r->level[l].thread_misses[i] = (int64_t)ms[npriv];
				sum += (int64_t)ms[npriv];
			}
			npriv++;
			r->level[l].misses = sum;
			r->level[l].exact = 1;
			continue;
		}
		if (f->shared_ok) {
			ct_status st = sim_result(f->shared, ms, NULL, NULL);
			if (st)
				return st;
			r->level[l].misses = (int64_t)ms[nshared];
		}
		nshared++;
		r->level[l].exact = f->shared_ok;
		r->level[l].why = f->shared_ok ? NULL : "the threads' interleaved trace is too long to simulate";
	}
	return CT_OK;
}

ct_status threads_affine(ct_looptree *t, const sim_spec *spec, int nt, ct_thread_result *r)
{
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	bool dynamic = false;
	const lt_node *bad = NULL;
	for (int i = 0; i < t->nroots && !bad; i++)
		bad = ta_unsplittable(k, t->roots[i], &dynamic);
	if (bad) {
		const ir_index *x = &k->indices[bad->index];
		return ct_error_at(ctx, CT_ERR_USAGE, k->file, x->pos.line, x->pos.col,
		                   "predict --threads %d: kernel '%s' has loops with affine bounds, and its "
		                   "parallel loop '%s' is collapsed, a grid or split into a main and a tail "
		                   "version: the simulated trace splits only a single parallel loop over "
		                   "threads (--threads 1, or predict, counts the whole run)",
		                   nt, k->name, x->name);
	}
	tafeed f;
	memset(&f, 0, sizeof f);
	f.ctx = ctx;
	f.nt = nt;
	f.shared_ok = true;
	f.team = 1;
	sim_buffer *buf = NULL;
	bool want_priv[SIM_MAX_LEVELS] = {false}, want_shared[SIM_MAX_LEVELS] = {false};
	for (int l = 0; l < spec->nlevels; l++) {
		want_priv[l] = r->level[l].private_level;
		want_shared[l] = !want_priv[l];
	}
	sim_spec ps, ss;
	ta_sub_spec(spec, want_priv, &ps);
	ta_sub_spec(spec, want_shared, &ss);
	f.own = calloc((size_t)nt, sizeof *f.own);
	f.q = calloc((size_t)nt, sizeof *f.q);
	f.qn = calloc((size_t)nt, sizeof *f.qn);
	f.qcap = calloc((size_t)nt, sizeof *f.qcap);
	f.acc = calloc((size_t)nt, sizeof *f.acc);
	ct_status st = f.own && f.q && f.qn && f.qcap && f.acc ? sim_tree_buffers(t, &buf)
	                                                       : ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	for (int i = 0; i < nt && !st && ps.nlevels; i++)
		if (!(f.own[i] = sim_new(ctx, &ps, buf, t->narrays, 0)))
			st = ct_ctx_last_status(ctx);
	if (!st && ss.nlevels && !(f.shared = sim_new(ctx, &ss, buf, t->narrays, 0)))
		st = ct_ctx_last_status(ctx);
	if (!st)
		st = interp_trace_threads(t, nt, ta_feed, &f);
	if (!st) {
		if (f.shared_ok)
			ta_interleave(&f);
		st = ta_results(&f, spec, r);
	}
	if (!st) {
		r->accesses = f.total;
		for (int i = 0; i < nt; i++)
			r->thread_accesses[i] = f.acc[i];
		r->parallel = f.parallel;
		r->team = f.team;
		r->assumed = dynamic;
	}
	for (int i = 0; i < nt; i++) {
		if (f.own)
			sim_free(f.own[i]);
		if (f.q)
			free(f.q[i]);
	}
	sim_free(f.shared);
	free(f.own);
	free(f.q);
	free(f.qn);
	free(f.qcap);
	free(f.acc);
	free(buf);
	return st;
}
