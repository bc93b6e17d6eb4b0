/* threads.c: predict --threads: each core's misses on its private levels, and the shared
 * levels' misses of all threads together, for the work split of the plan's parallel bands. */
#include "model/model_int.h"

#include <limits.h>

/* The longest interleaved run (all threads' accesses) simulated for the levels warping does
 * not count per thread and for the shared levels: about 2 s at the simulator's pace. */
#define THREADS_SIM_MAX ((int64_t)1 << 26)

/* The most memory the threads' own simulators of the walk may take (the lines of the private
 * levels warping did not count, one copy per thread). */
#define THREADS_SIM_BYTES ((int64_t)1 << 29)

/* warp_count's work budget per thread and level (as predict's, PREDICT_WARP_BUDGET). */
#define THREADS_WARP_BUDGET ((int64_t)1 << 24)

/* ------------------------------------------------------------ one thread's accesses */

/* A frame of the walk: node x, and for a loop the iteration running and the last + 1. */
typedef struct tframe {
	const mnode *x;
	int64_t it, end, off;
	int kid; /* next child to enter */
	int c;   /* band level of a loop (-1: none) */
} tframe;

/* One thread's accesses in order, one at a time (warp.c's walk, resumable): the same share
 * of the bands, the same addresses. */
typedef struct titer {
	const int64_t *base;
	mshare sh;
	int64_t t[MODEL_MAX_DEPTH];
	tframe *st;
	int sp, cap;
	const mnode *stmt; /* statement whose accesses are being given */
	int acc;
} titer;

/* What titer_next gives. */
enum { T_ACCESS, T_BARRIER, T_DONE };

/* True when x is a loop of a band or holds one (warp.c's band_below; wid marks it here). */
static bool holds_band(const mnode *x)
{
	return x->wid != 0;
}

/* Mark every node that is or holds a band loop (in wid, which warp.c does not read from this
 * tree). */
static bool mark_bands(mnode *x)
{
	bool b = x->is_loop && share_is_band(x->lt);
	for (int i = 0; i < x->nkids; i++)
		b = mark_bands(x->kids[i]) || b;
	x->wid = b;
	return b;
}

/* Nodes on the longest path from x down: the most frames a walk holds. */
static int tree_height(const mnode *x)
{
	int h = 0;
	for (int i = 0; i < x->nkids; i++) {
		int k = tree_height(x->kids[i]);
		h = k > h ? k : h;
	}
	return h + 1;
}

static bool titer_push(titer *I, const mnode *x)
{
	if (I->sp == I->cap)
		return false;
	tframe *f = &I->st[I->sp];
	memset(f, 0, sizeof *f);
	f->x = x;
	f->c = -1;
	if (x->is_loop) {
		f->end = x->n;
		f->c = share_level(&I->sh, x);
		if (f->c >= 0)
			share_enter(&I->sh, x, f->c, &f->it, &f->end, &f->off);
		else if (!holds_band(x) && !share_runs_serial(&I->sh))
			return true; /* nothing of this thread here */
	}
	I->sp++;
	return true;
}

/* The next access (storage *a, byte address *addr), a band's barrier (entering the first
 * piece of a band's loop or leaving its last: every thread meets the same ones, in the same
 * order), or the end. */
static int titer_next(titer *I, int *a, int64_t *addr)
{
	for (;;) {
		if (I->stmt) {
			const mnode *s = I->stmt;
			if (I->acc < s->nacc) {
				const int64_t *af = s->aff + I->acc * (s->depth + 1);
				*a = s->acc[I->acc].array;
				int64_t v = I->base[*a] + af[0];
				for (int j = 0; j < s->depth; j++)
					v += af[1 + j] * I->t[j];
				*addr = v;
				I->acc++;
				return T_ACCESS;
			}
			I->stmt = NULL;
		}
		if (I->sp == 0)
			return T_DONE;
		tframe *f = &I->st[I->sp - 1];
		const mnode *x = f->x;
		if (!x->is_loop && x->nkids == 0) {
			I->sp--;
			if (share_runs_serial(&I->sh)) {
				I->stmt = x;
				I->acc = 0;
			}
			continue;
		}
		if (x->is_loop) {
			if (f->kid == x->nkids) {
				f->it++;
				f->kid = 0;
			}
			if (f->kid == 0) {
				if (f->it >= f->end) {
					int c = f->c;
					bool band_end = c == 0 && share_last_piece(&I->sh, x);
					if (c >= 0)
						share_leave(&I->sh, x, c);
					I->sp--;
					if (band_end)
						return T_BARRIER;
					continue;
				}
				I->t[x->depth] = f->it;
				if (f->c >= 0)
					share_iter(&I->sh, f->c, f->off, f->it);
			}
		} else if (f->kid == x->nkids) {
			I->sp--;
			continue;
		}
		const mnode *y = x->kids[f->kid++];
		int sp = I->sp;
		if (!titer_push(I, y))
			return T_DONE; /* deeper than the stack: cannot happen (MODEL_MAX_DEPTH) */
		/* entering a band's first piece is a barrier: thread 0's work before it is done */
		if (I->sp > sp && y->is_loop && I->st[I->sp - 1].c == 0 && share_first_piece(&I->sh, y))
			return T_BARRIER;
	}
}

/* ------------------------------------------------------------ the interleaved run */

/* The per-thread and shared simulators of the levels warping did not count, fed by every
 * thread in turn, one access each, between barriers. */
typedef struct tjoint {
	int nt;
	sim **own;        /* [nt]: thread i's private levels (NULL: none left) */
	sim *shared;      /* the shared levels (NULL: none) */
	int64_t *acc;     /* [nt] accesses per thread */
	int64_t total;
} tjoint;

/* Walk every thread's accesses, interleaved; false past limit accesses (counts incomplete). */
static bool run_joint(titer *it, tjoint *j, int64_t limit)
{
	enum { RUN, WAIT, DONE };
	int nt = j->nt;
	int *state = calloc((size_t)nt, sizeof *state);
	if (!state)
		return false;
	bool ok = true;
	for (;;) {
		bool running = false;
		for (int i = 0; i < nt; i++) {
			if (state[i] != RUN)
				continue;
			int a;
			int64_t addr;
			int r = titer_next(&it[i], &a, &addr);
			if (r == T_BARRIER) {
				state[i] = WAIT;
				continue;
			}
			if (r == T_DONE) {
				state[i] = DONE;
				continue;
			}
			running = true;
			j->acc[i]++;
			if (++j->total > limit) {
				ok = false;
				break;
			}
			if (j->own[i])
				sim_access(j->own[i], 0, addr, 0);
			if (j->shared)
				sim_access(j->shared, 0, addr, 0);
		}
		if (!ok)
			break;
		if (running)
			continue;
		bool waiting = false;
		for (int i = 0; i < nt; i++)
			if (state[i] == WAIT) {
				state[i] = RUN;
				waiting = true;
			}
		if (!waiting)
			break;
	}
	free(state);
	return ok;
}

/* ------------------------------------------------------------ the prediction */

void ct_thread_result_free(ct_thread_result *r)
{
	if (!r)
		return;
	free(r->thread_accesses);
	r->thread_accesses = NULL;
	for (int l = 0; l < CT_SIM_MAX_LEVELS; l++) {
		free(r->level[l].thread_misses);
		r->level[l].thread_misses = NULL;
	}
}

/* The levels of spec with want[l] as a spec of their own (sub->level[i] is spec's map[i]). */
static void sub_spec(const sim_spec *spec, const bool *want, sim_spec *sub, int *map)
{
	memset(sub, 0, sizeof *sub);
	for (int l = 0; l < spec->nlevels; l++)
		if (want[l]) {
			map[sub->nlevels] = l;
			sub->level[sub->nlevels++] = spec->level[l];
		}
}

/* The work of ct_kernel_predict_threads once the spec is parsed and the tree lowered. */
typedef struct tpredict {
	ct_ctx *ctx;
	ct_kernel *k;
	ct_looptree *t;
	const sim_spec *spec;
	int nt;
	ct_thread_result *r;
	bool counted[CT_SIM_MAX_LEVELS]; /* private level: every thread's count is in */
	bool *done;                      /* [nt * nlevels]: thread i's level l counted by warping */
} tpredict;

/* The serial run (no parallel band reached, or one thread): thread 0 does everything, so its
 * private counts and the shared ones are ct_kernel_predict's. */
static ct_status predict_serial(tpredict *p, const char *spec_text)
{
	ct_predict_result pr;
	ct_status st = ct_kernel_predict(p->k, spec_text, &pr);
	if (st)
		return st;
	ct_thread_result *r = p->r;
	r->accesses = pr.accesses;
	r->thread_accesses[0] = pr.accesses;
	for (int l = 0; l < r->nlevels; l++) {
		r->level[l].misses = pr.level[l].misses;
		r->level[l].exact = pr.level[l].exact;
		if (!pr.level[l].exact)
			r->level[l].why = "the model's count of the whole run is not exact";
		if (r->level[l].thread_misses)
			r->level[l].thread_misses[0] = pr.level[l].misses;
	}
	ct_predict_result_free(&pr);
	return CT_OK;
}

/* The first parallel loop at or under x, or NULL. */
static const lt_node *parallel_below(const lt_node *x)
{
	if (x->kind == LT_LOOP && x->parallel)
		return x;
	for (int i = 0; i < x->nkids + x->nels; i++) {
		const lt_node *y = parallel_below(i < x->nkids ? x->kids[i] : x->els[i - x->nkids]);
		if (y)
			return y;
	}
	return NULL;
}

/* A kernel with affine loop bounds, which the model (and so its tree of bands) does not take
 * yet: without a parallel loop, or with one thread, thread 0 runs everything and predict's
 * simulated counts are its own; otherwise the simulated trace is split over the threads
 * (threads_affine.c). */
static ct_status affine_threads(tpredict *p, const char *spec_text)
{
	const lt_node *par = NULL;
	for (int i = 0; i < p->t->nroots && !par; i++)
		par = parallel_below(p->t->roots[i]);
	p->r->parallel = par != NULL;
	p->r->team = 1;
	if (!par || p->nt == 1)
		return predict_serial(p, spec_text);
	return threads_affine(p->t, p->spec, p->nt, p->r);
}

/* The parallel bands the run reaches (their loops' first pieces in the model tree): whether
 * there is one, the largest team, whether one is split by assumption. */
static void scan_bands(const mnode *x, mshare *s, int *team)
{
	for (int i = 0; i < x->nkids; i++) {
		const mnode *y = x->kids[i];
		int c = share_level(s, y);
		if (c == 0) {
			/* a piece of a band's level 0 (its first starts the band): the band's loops are
			 * not entered */
			int64_t a, b, off;
			share_enter(s, y, 0, &a, &b, &off);
			*team = s->team > *team ? s->team : *team;
			share_leave(s, y, 0);
		} else {
			scan_bands(y, s, team);
		}
	}
}

static ct_status find_bands(tpredict *p, bool *parallel, int *team, bool *assumed)
{
	model *m = mdl_tree_new(p->t);
	ct_status st = m ? m->st : ct_ctx_last_status(p->ctx);
	if (!st) {
		mshare sh;
		memset(&sh, 0, sizeof sh);
		sh.nthreads = p->nt;
		sh.k = p->k;
		scan_bands(&m->root, &sh, team);
		*parallel = sh.bands > 0;
		*assumed = sh.assumed;
	}
	mdl_tree_free(m);
	return st;
}

/* Warping, thread by thread, for the private levels whose conflicts need it. */
static ct_status warp_threads(tpredict *p)
{
	ct_thread_result *r = p->r;
	bool want[SIM_MAX_LEVELS] = {false}, any = false;
	for (int l = 0; l < r->nlevels; l++) {
		want[l] = r->level[l].private_level && sim_level_conflicts(&p->spec->level[l]);
		any = any || want[l];
	}
	for (int i = 0; i < p->nt && any; i++) {
		mshare sh;
		memset(&sh, 0, sizeof sh);
		sh.thread = i;
		sh.nthreads = p->nt;
		sh.k = p->k;
		warp_result w;
		ct_status st = warp_count_share(p->t, p->spec, want, THREADS_WARP_BUDGET, &sh, &w);
		if (st)
			return st;
		for (int l = 0; l < r->nlevels; l++)
			if (want[l] && w.done[l]) {
				p->done[i * r->nlevels + l] = true;
				r->level[l].thread_misses[i] = w.misses[l];
			}
		warp_result_free(&w);
	}
	return CT_OK;
}

/* The rest by one interleaved walk: private levels not warped, thread by thread, and the
 * shared levels. */
static ct_status walk_threads(tpredict *p)
{
	ct_thread_result *r = p->r;
	int nt = p->nt, nl = r->nlevels;
	model *m = mdl_tree_new(p->t);
	sim_buffer *buf = NULL;
	int64_t *base = NULL;
	titer *it = NULL;
	tjoint j;
	memset(&j, 0, sizeof j);
	ct_status st = m ? m->st : ct_ctx_last_status(p->ctx);
	if (!st)
		st = sim_tree_buffers(p->t, &buf);
	if (st)
		goto out;
	bool exact = !m->root.any_inexact;
	for (int a = 0; a < m->na; a++)
		exact = exact && !m->inexact[a];
	const char *why = NULL;
	if (!exact)
		why = "the kernel's accesses are not all affine in its loops";
	base = calloc((size_t)m->na + 1, sizeof *base);
	it = calloc((size_t)nt, sizeof *it);
	j.own = calloc((size_t)nt, sizeof *j.own);
	j.acc = calloc((size_t)nt, sizeof *j.acc);
	if (!base || !it || !j.own || !j.acc) {
		st = ct_error(p->ctx, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	int64_t span = sim_layout(p->ctx, buf, m->na, sim_spec_max_line(p->spec), base);
	if (span < 0) {
		st = ct_ctx_last_status(p->ctx);
		goto out;
	}
	/* every address as an offset of one byte buffer at 0: the simulators see the layout */
	sim_buffer whole = {1, span > 0 ? span : 1};
	j.nt = nt;
	bool shared_want[SIM_MAX_LEVELS] = {false};
	int map[SIM_MAX_LEVELS];
	sim_spec sub;
	for (int l = 0; l < nl; l++)
		shared_want[l] = !r->level[l].private_level;
	sub_spec(p->spec, shared_want, &sub, map);
	if (why == NULL && sub.nlevels && !(j.shared = sim_new(p->ctx, &sub, &whole, 1, 0))) {
		st = ct_ctx_last_status(p->ctx);
		goto out;
	}
	/* every thread's copy of the private levels left to walk: bounded memory */
	int64_t bytes = 0;
	for (int i = 0; i < nt; i++)
		for (int l = 0; l < nl; l++)
			if (r->level[l].private_level && !p->done[i * nl + l])
				bytes += 8 * (p->spec->level[l].size / p->spec->level[l].line) + 65536;
	if (why == NULL && bytes > THREADS_SIM_BYTES)
		why = "too many threads to walk each one's copy of the private levels";
	for (int i = 0; i < nt && why == NULL; i++) {
		bool own[SIM_MAX_LEVELS] = {false};
		for (int l = 0; l < nl; l++)
			own[l] = r->level[l].private_level && !p->done[i * nl + l];
		sim_spec os;
		int omap[SIM_MAX_LEVELS];
		sub_spec(p->spec, own, &os, omap);
		if (os.nlevels && !(j.own[i] = sim_new(p->ctx, &os, &whole, 1, 0))) {
			st = ct_ctx_last_status(p->ctx);
			goto out;
		}
	}
	mark_bands(&m->root);
	int height = tree_height(&m->root);
	for (int i = 0; i < nt; i++) {
		it[i].base = base;
		it[i].sh.thread = i;
		it[i].sh.nthreads = nt;
		it[i].sh.k = p->k;
		it[i].cap = height + 2;
		it[i].st = calloc((size_t)it[i].cap, sizeof *it[i].st);
		if (!it[i].st) {
			st = ct_error(p->ctx, CT_ERR_NOMEM, "out of memory");
			goto out;
		}
		titer_push(&it[i], &m->root);
	}
	bool whole_run = why == NULL && run_joint(it, &j, THREADS_SIM_MAX);
	if (why == NULL && !whole_run)
		why = "the threads' interleaved trace is too long to simulate";
	r->accesses = j.total;
	for (int i = 0; i < nt; i++)
		r->thread_accesses[i] = j.acc[i];
	for (int l = 0; l < nl; l++) {
		if (!r->level[l].private_level) {
			uint64_t ms[SIM_MAX_LEVELS] = {0};
			if (whole_run && (st = sim_result(j.shared, ms, NULL, NULL)))
				goto out;
			for (int s = 0; s < sub.nlevels; s++)
				if (map[s] == l)
					r->level[l].misses = (int64_t)ms[s];
			r->level[l].exact = whole_run;
			r->level[l].why = whole_run ? NULL : why;
			continue;
		}
		bool all = true;
		int64_t sum = 0;
		for (int i = 0; i < nt; i++) {
			if (!p->done[i * nl + l]) {
				if (!whole_run || !j.own[i]) {
					all = false;
					continue;
				}
				uint64_t ms[SIM_MAX_LEVELS] = {0};
				if ((st = sim_result(j.own[i], ms, NULL, NULL)))
					goto out;
				int s = 0;
				for (int q = 0; q < l; q++)
					s += r->level[q].private_level && !p->done[i * nl + q];
				r->level[l].thread_misses[i] = (int64_t)ms[s];
			}
			sum += r->level[l].thread_misses[i];
		}
		r->level[l].misses = sum;
		r->level[l].exact = all;
		r->level[l].why = all ? NULL : why;
	}
out:
	for (int i = 0; it && i < nt; i++)
		free(it[i].st);
	for (int i = 0; j.own && i < nt; i++)
		sim_free(j.own[i]);
	sim_free(j.shared);
	free(j.own);
	free(j.acc);
	free(it);
	free(base);
	free(buf);
	mdl_tree_free(m);
	return st;
}

ct_status ct_kernel_predict_threads(ct_kernel *k, const char *spec_text, int threads, ct_thread_result *r)
{
	return threads_predict(k, spec_text, threads, true, r);
}

ct_status threads_predict(ct_kernel *k, const char *spec_text, int threads, bool warp, ct_thread_result *r)
{
	if (!k || !r)
		return CT_ERR_USAGE;
	memset(r, 0, sizeof *r);
	ct_ctx *ctx = k->ctx;
	if (threads < 1 || threads > CT_PREDICT_MAX_THREADS)
		return ct_error(ctx, CT_ERR_USAGE, "predict --threads: %d threads, expected 1 to %d", threads,
		                CT_PREDICT_MAX_THREADS);
	if (ir_kernel_ready(k) != CT_OK || ir_params_need_values(k) != CT_OK)
		return CT_ERR_USAGE;
	sim_spec spec;
	ct_status st = spec_text ? sim_spec_parse(ctx, spec_text, &spec) : sim_machine_spec(ctx, &spec);
	if (st)
		return st;
	double t0 = ct_now();
	r->nthreads = threads;
	r->nlevels = spec.nlevels;
	r->thread_accesses = calloc((size_t)threads, sizeof *r->thread_accesses);
	bool nomem = !r->thread_accesses;
	for (int l = 0; l < spec.nlevels; l++) {
		const sim_level *sl = &spec.level[l];
		r->level[l].size = sl->size;
		r->level[l].line = sl->line;
		r->level[l].ways = sl->ways;
		r->level[l].plru = sl->policy == SIM_PLRU;
		r->level[l].private_level = sim_level_private(&spec, l);
		if (r->level[l].private_level &&
		    !(r->level[l].thread_misses = calloc((size_t)threads, sizeof *r->level[l].thread_misses)))
			nomem = true;
	}
	tpredict p = {ctx, k, NULL, &spec, threads, r, {false}, NULL};
	p.done = calloc((size_t)threads * (size_t)(spec.nlevels + 1), sizeof *p.done);
	if (nomem || !p.done) {
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!(p.t = ct_kernel_lower(k, 1))) {
		st = ct_ctx_last_status(ctx);
		goto out;
	}
	if (k->affine_bounds) {
		st = affine_threads(&p, spec_text);
		goto out;
	}
	bool parallel = false, assumed = false;
	int team = 1;
	if ((st = find_bands(&p, &parallel, &team, &assumed)))
		goto out;
	r->parallel = parallel;
	r->team = team;
	r->assumed = assumed;
	if (!parallel || team <= 1)
		st = predict_serial(&p, spec_text);
	else if (!(st = warp ? warp_threads(&p) : CT_OK))
		st = walk_threads(&p);
out:
	r->seconds = ct_now() - t0;
	ct_looptree_free(p.t);
	free(p.done);
	if (st)
		ct_thread_result_free(r);
	return st;
}
