/* auto.c: ct_kernel_autoschedule: a schedule and a plan chosen from the nest, the probe and the model (docs/AUTO.md). */
#include "ir/deps.h"
#include "ir/looptree.h"
#include "ir/targets.h"
#include "lang/lang.h"
#include "model/model.h"
#include "model/sim.h"
#include "target/target.h"
#include "tune/tune.h"
#include "tune/wave.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AUTO_MAX_BAND 12
#define AUTO_MAX_NESTS 64
#define AUTO_MAX_ACC 256
/* Names one run may make up, and their longest (the language's 255 and a suffix). */
#define AUTO_NAMES 512
#define AUTO_NAME_MAX 272
/* Registers the register tile leaves free besides its accumulators, its
 * vectors of the right operand and its broadcast: room for the compiler. */
#define AUTO_SPARE_REGS 2
/* Largest unroll of the register tile's rows. */
#define AUTO_MAX_MR 16
/* Fraction of a cache a tile may fill (the rest: the streams passing through). */
#define AUTO_CACHE_SHARE 0.5
/* Statement executions per thread below which a nest is not parallelized:
 * starting a parallel region (waking the threads) costs microseconds, a
 * few thousand simple iterations. */
#define AUTO_MIN_PAR_WORK 4096
/* The same for a parallel loop inside a serial one, which starts a region
 * per outer iteration: there the start costs more than waking the threads
 * once. Measured on a 2-core EPYC VM: PolyBench's doitgen with its inner
 * loop on 2 threads (21,000 regions of 12,800 multiply-adds per thread) took
 * 1.04 s against 0.057 s serially, about 47 us a region; 65,536 simple
 * statement executions take tens of microseconds. */
#define AUTO_MIN_INNER_PAR_WORK 65536
/* Model predictions of tilings in one run (one per register-tiled nest, for
 * its comment): past them a nest's comment has no miss counts, so that
 * `auto` without a budget stays within its 2 s on kernels of many sums. A
 * count, not a time, so that the file does not depend on the machine's load. */
#define AUTO_MAX_EVALS 81
/* Cost of a miss of each level in core cycles (the next level's load-to-use
 * latency; memory: its latency over the misses a core keeps in flight).
 * Fixed, not measured, so the same machine description gives the same file. */
static const double auto_miss_cycles[] = {14, 50, 30, 30, 30, 30};

/* ------------------------------------------------------------ the file's text */

/* Byte ranges of the user's schedule and plan blocks (start = end = 0: none). */
typedef struct auto_text {
	size_t sched_lo, sched_hi, plan_lo, plan_hi;
	bool has_sched, has_plan;
} auto_text;

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The end of the block that starts at word w (after its closing brace). */
static size_t block_end(const char *s, size_t n, size_t w)
{
	int depth = 0;
	bool opened = false;
	for (size_t i = w; i < n; i++) {
		if (s[i] == '#') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (s[i] == '{') {
			depth++;
			opened = true;
		} else if (s[i] == '}' && --depth == 0 && opened)
			return i + 1;
	}
	return n;
}

/* Find the top-level `schedule` and `plan` blocks of the text. */
static void split_text(const char *s, size_t n, auto_text *at)
{
	memset(at, 0, sizeof *at);
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '#') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '{' || c == '(')
			depth++;
		else if (c == '}' || c == ')')
			depth--;
		if (depth != 0 || !ident_char(c) || (i > 0 && ident_char(s[i - 1])))
			continue;
		size_t e = i;
		while (e < n && ident_char(s[e]))
			e++;
		bool is_sched = e - i == 8 && !strncmp(s + i, "schedule", 8);
		bool is_plan = e - i == 4 && !strncmp(s + i, "plan", 4);
		if (is_sched || is_plan) {
			size_t end = block_end(s, n, i);
			if (is_sched && !at->has_sched) {
				at->has_sched = true;
				at->sched_lo = i, at->sched_hi = end;
			} else if (is_plan && !at->has_plan) {
				at->has_plan = true;
				at->plan_lo = i, at->plan_hi = end;
			}
			i = end - 1;
			continue;
		}
		i = e - 1;
	}
}

/* The text without its schedule and plan blocks, trailing blanks trimmed. */
static void put_head(ct_buf *b, const char *s, size_t n, const auto_text *at)
{
	size_t start = b->len;
	for (size_t i = 0; i < n; i++) {
		if ((at->has_sched && i >= at->sched_lo && i < at->sched_hi) ||
		    (at->has_plan && i >= at->plan_lo && i < at->plan_hi))
			continue;
		ct_buf_putc(b, s[i]);
	}
	while (b->len > start && (b->s[b->len - 1] == '\n' || b->s[b->len - 1] == ' ' ||
	                          b->s[b->len - 1] == '\t'))
		b->len--;
	b->s[b->len] = 0;
	ct_buf_putc(b, '\n');
}

/* ------------------------------------------------------------ the machine */

typedef struct auto_machine {
	int vector_bytes, registers, fma_units, fma_latency, threads;
	int ncaches;
	int64_t cache_size[CT_PROBE_MAX_CACHES];
	int cache_line[CT_PROBE_MAX_CACHES], cache_ways[CT_PROBE_MAX_CACHES], cache_shared[CT_PROBE_MAX_CACHES];
	char model[80];
	bool from_spec;      /* the levels are --cache's, taken as given */
	bool llc_checked;    /* llc_for asked the probe for the last level's usable size */
	int64_t llc_reported; /* > 0: the probe found the last level smaller than this reported size */
} auto_machine;

static void machine_init(ct_ctx *ctx, int threads, auto_machine *m)
{
	const ct_probe_info *pi = target_get(ctx);
	memset(m, 0, sizeof *m);
	m->vector_bytes = pi ? pi->vector_bytes : 16;
	int64_t vb = ct_ctx_get_option(ctx, CT_OPT_VECTOR_BYTES);
	if (vb > 0)
		m->vector_bytes = (int)vb;
	if (m->vector_bytes < 8)
		m->vector_bytes = 8;
	m->registers = pi && pi->vector_registers > 0 ? pi->vector_registers : 16;
	m->fma_units = pi && pi->fma_units > 0 ? pi->fma_units : 2;
	m->fma_latency = pi && pi->fma_latency > 0 ? pi->fma_latency : 4;
	m->threads = threads > 0 ? threads : (pi && pi->cpus_allowed > 0 ? pi->cpus_allowed : 1);
	if (pi) {
		m->ncaches = pi->ncaches;
		for (int i = 0; i < pi->ncaches; i++) {
			m->cache_size[i] = pi->caches[i].size;
			m->cache_line[i] = pi->caches[i].line;
			m->cache_ways[i] = pi->caches[i].ways;
			m->cache_shared[i] = pi->caches[i].shared_by;
		}
		snprintf(m->model, sizeof m->model, "%s", pi->model);
	}
	if (m->ncaches == 0) {
		m->ncaches = 2;
		m->cache_size[0] = 32 << 10, m->cache_line[0] = 64;
		m->cache_size[1] = 1 << 20, m->cache_line[1] = 64;
	}
}

/* The levels of o->cache_spec in place of the probe's, so that every derivation (tiles, the
 * fusion of sweeps, time blocks) and the model's predictions read the same caches: a user
 * who plans for another machine's caches gets that machine's choices. A private level is
 * shared by 1 core, a shared one (or the last, unmarked) by the plan's threads. CT_ERR_INPUT
 * for a spec sim_spec_parse refuses. */
static ct_status machine_caches(ct_ctx *ctx, const char *spec_text, auto_machine *m)
{
	if (!spec_text)
		return CT_OK;
	sim_spec spec;
	ct_status st = sim_spec_parse(ctx, spec_text, &spec);
	if (st != CT_OK)
		return st;
	m->from_spec = true;
	m->ncaches = spec.nlevels < CT_PROBE_MAX_CACHES ? spec.nlevels : CT_PROBE_MAX_CACHES;
	for (int i = 0; i < m->ncaches; i++) {
		const sim_level *l = &spec.level[i];
		m->cache_size[i] = l->size;
		m->cache_line[i] = (int)l->line;
		/* fully associative (0): as many ways as lines */
		m->cache_ways[i] = (int)(l->ways > 0 ? l->ways : l->size / l->line);
		m->cache_shared[i] = sim_level_private(&spec, i) ? 1 : m->threads;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ the nests */

/* One access of a nest: its array and its element stride per band index. */
typedef struct auto_acc {
	int array;
	bool write;
	int64_t stride[AUTO_MAX_BAND];
	int dim[AUTO_MAX_BAND];       /* the first dimension each band index moves (-1: none) */
} auto_acc;

typedef struct auto_nest {
	const ir_node *top;
	int nband;
	int band[AUTO_MAX_BAND];      /* original index ids as written, outermost first */
	int64_t trip[AUTO_MAX_BAND];
	int nacc;
	auto_acc acc[AUTO_MAX_ACC];
	const ir_node *stmt;          /* the band's body when it is one statement */
	const ir_node *inner;         /* the innermost for of the band */
	int64_t work;                 /* statement executions of the nest */
	double cost[AUTO_MAX_BAND];   /* LoopCost per band position */
	int order[AUTO_MAX_BAND];     /* band positions, outermost first */
} auto_nest;

/* Whether some loop's affine bounds use index id: the iterations of id then do different
 * amounts of work (a triangle), which a dynamic schedule shares out evenly. */
static bool bounds_use_index(const ct_kernel *k, int id)
{
	for (int x = 0; x < k->nindices; x++) {
		const ir_index *ix = &k->indices[x];
		for (int j = 0; j < ix->nlo + ix->nhi; j++)
			if (aff_coef(j < ix->nlo ? ix->los[j] : ix->his[j - ix->nlo], AFF_INDEX, id) != 0)
				return true;
	}
	return false;
}
#define UNEVEN_NOTE ", dynamic: the bounds of an inner loop use it (uneven work)"

/* The trip count of loop id (an affine loop's mean, ir_index_mid_trip); 1 when empty. */
static int64_t index_trip(const ct_kernel *k, const int64_t *pv, int id)
{
	int64_t n = ir_index_mid_trip(k, pv, id);
	return n < 1 ? 1 : n;
}

static int band_pos(const auto_nest *n, int id)
{
	for (int i = 0; i < n->nband; i++)
		if (n->band[i] == id)
			return i;
	return -1;
}

/* Element strides of array a (row-major in its layout order). */
static void array_strides(const ct_kernel *k, const int64_t *pv, int a, int64_t *st)
{
	const ir_array *ar = &k->arrays[a];
	int64_t s = 1;
	for (int r = ar->rank - 1; r >= 0; r--) {
		int d = ar->order[r];
		st[d] = s;
		bool ok = true;
		int64_t e = aff_eval(ar->ext[d], pv, NULL, &ok);
		s *= ok && e > 0 ? e : 1;
	}
}

static void add_access(const ct_kernel *k, const int64_t *pv, auto_nest *n, const ir_expr *e, bool write)
{
	if (n->nacc >= AUTO_MAX_ACC)
		return;
	auto_acc *a = &n->acc[n->nacc++];
	int64_t st[IR_MAX_RANK];
	array_strides(k, pv, e->id, st);
	a->array = e->id;
	a->write = write;
	for (int b = 0; b < n->nband; b++) {
		int64_t s = 0;
		a->dim[b] = -1;
		for (int d = 0; d < k->arrays[e->id].rank; d++) {
			int64_t c = aff_coef(e->sub[d], AFF_INDEX, n->band[b]);
			s += c * st[d];
			if (c && a->dim[b] < 0)
				a->dim[b] = d;
		}
		a->stride[b] = s;
	}
}

static void walk_expr(const ct_kernel *k, const int64_t *pv, auto_nest *n, const ir_expr *e)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS)
		add_access(k, pv, n, e, false);
	for (int i = 0; i < e->nargs; i++)
		walk_expr(k, pv, n, e->args[i]);
}

static void walk_node(const ct_kernel *k, const int64_t *pv, auto_nest *n, const ir_node *x)
{
	if (x->kind == ND_STMT) {
		add_access(k, pv, n, x->lhs, true);
		if (x->op != AS_SET)
			add_access(k, pv, n, x->lhs, false);
	}
	walk_expr(k, pv, n, x->rhs);
	walk_expr(k, pv, n, x->cond);
	for (int i = 0; i < x->nbody; i++)
		walk_node(k, pv, n, x->body[i]);
	for (int i = 0; i < x->nels; i++)
		walk_node(k, pv, n, x->els[i]);
}

/* McKinley, Carr and Tseng's LoopCost of each band loop as the innermost:
 * the cache lines its iterations touch, per iteration; the loop order puts
 * the costliest outermost. */
static void loop_costs(const ct_kernel *k, const auto_machine *m, auto_nest *n)
{
	int64_t line = m->cache_line[0] > 0 ? m->cache_line[0] : 64;
	for (int b = 0; b < n->nband; b++) {
		double c = 0;
		for (int a = 0; a < n->nacc; a++) {
			int64_t s = llabs(n->acc[a].stride[b]) * (int64_t)ct_dtype_size(k->arrays[n->acc[a].array].type);
			if (s == 0)
				c += 1.0 / (double)n->trip[b];
			else if (s < line)
				c += (double)s / (double)line;
			else
				c += 1;
		}
		n->cost[b] = c;
	}
	for (int b = 0; b < n->nband; b++)
		n->order[b] = b;
	for (int i = 1; i < n->nband; i++)
		for (int j = i; j > 0 && n->cost[n->order[j]] > n->cost[n->order[j - 1]] + 1e-12; j--) {
			int t = n->order[j];
			n->order[j] = n->order[j - 1];
			n->order[j - 1] = t;
		}
}

/* Statement executions of node x (every branch of an if counted). */
static int64_t node_work(const ct_kernel *k, const int64_t *pv, const ir_node *x)
{
	if (x->kind == ND_STMT || x->kind == ND_LET)
		return 1;
	int64_t w = 0;
	for (int i = 0; i < x->nbody; i++)
		w += node_work(k, pv, x->body[i]);
	for (int i = 0; i < x->nels; i++)
		w += node_work(k, pv, x->els[i]);
	for (int i = 0; x->kind == ND_FOR && i < x->nidx; i++) {
		int64_t t = index_trip(k, pv, x->idx[i]);
		w = w > INT64_MAX / (t > 0 ? t : 1) ? INT64_MAX : w * t;
	}
	return w;
}

static void nest_init(const ct_kernel *k, const int64_t *pv, const auto_machine *m, const ir_node *top, auto_nest *n)
{
	memset(n, 0, sizeof *n);
	n->top = top;
	const ir_node *x = top;
	for (;;) {
		for (int i = 0; i < x->nidx && n->nband < AUTO_MAX_BAND; i++) {
			n->band[n->nband] = x->idx[i];
			n->trip[n->nband] = index_trip(k, pv, x->idx[i]);
			n->nband++;
		}
		if (x->nbody == 1 && x->body[0]->kind == ND_FOR)
			x = x->body[0];
		else
			break;
	}
	n->inner = x;
	n->work = node_work(k, pv, top);
	if (x->nbody == 1 && x->body[0]->kind == ND_STMT)
		n->stmt = x->body[0];
	walk_node(k, pv, n, top);
	loop_costs(k, m, n);
}

/* ------------------------------------------------------------ names */

static bool name_taken(const ct_kernel *k, const char *s, char (*extra)[AUTO_NAME_MAX], int nextra)
{
	for (int i = 0; i < k->nparams; i++)
		if (!strcmp(k->params[i].name, s))
			return true;
	for (int i = 0; i < k->narrays; i++)
		if (!strcmp(k->arrays[i].name, s))
			return true;
	for (int i = 0; i < k->nindices; i++)
		if (!strcmp(k->indices[i].name, s))
			return true;
	for (int i = 0; i < k->nlets; i++)
		if (!strcmp(k->lets[i].name, s))
			return true;
	for (int i = 0; i < nextra; i++)
		if (!strcmp(extra[i], s))
			return true;
	return !strcmp(s, "kernel") || !strcmp(s, "param") || !strcmp(s, "array") || !strcmp(s, "for") ||
	       !strcmp(s, "if") || !strcmp(s, "else") || !strcmp(s, "plan") || !strcmp(s, "schedule");
}

/* The names this run made up, so that two never meet: name[AUTO_NAMES]
 * (malloc'd by the run); a copy of the struct taken before trying a
 * candidate and put back after gives its names up again. */
typedef struct auto_names {
	char (*name)[AUTO_NAME_MAX];
	int n;
} auto_names;

/* A name base + suffix (+ a number) that nothing in k or nm has. Names
 * too long for the language make the candidate fail its check, nothing
 * worse. */
static const char *fresh(const ct_kernel *k, auto_names *nm, const char *base, const char *suffix)
{
	char s[AUTO_NAME_MAX];
	snprintf(s, sizeof s, "%s%s", base, suffix);
	for (int t = 0; name_taken(k, s, nm->name, nm->n) && t < 100; t++)
		snprintf(s, sizeof s, "%s%s%d", base, suffix, t + 2);
	if (!nm->name || nm->n >= AUTO_NAMES)
		return "auto_overflow";
	snprintf(nm->name[nm->n], AUTO_NAME_MAX, "%s", s);
	return nm->name[nm->n++];
}

/* ------------------------------------------------------------ candidates */

/* A register-tiled gemm-shaped nest: u (rows, unrolled), v (unit stride,
 * vectorized), r (the sum), the others outside. */
typedef struct auto_gemm {
	int u, v, r;                  /* band positions */
	int mr, nv, lanes, nr;        /* register tile: mr x nr = mr x (nv vectors of lanes) */
	int64_t kc, nc, mc;           /* cache tiles of r, v, u */
	int l1_ways;                  /* ways of L1 kc was derived from (0: half of L1) */
	int64_t kc0, nc0, mc0;        /* the analytical values (gemm_blocks) */
	int64_t kc_l1;                /* the largest kc L1 allows (kc0 is at most this) */
	int nc_level, nc_sharers;     /* the cache nc was derived from (0-based) and the threads sharing it */
	const char *p_kc, *p_nc, *p_mc;
	int elt;
	int left, right;              /* accesses: the operand moving with u and r, with v and r (-1: none) */
	bool pack;                    /* pack both into caches (BLIS's packed panels) */
} auto_gemm;

/* Whether the nest is a sum into an element the sum's loop does not move:
 * one statement X[..] += e over a perfect band. */
static bool gemm_shape(const ct_kernel *k, const auto_machine *m, const auto_nest *n, auto_gemm *g)
{
	const ir_node *s = n->stmt;
	if (!s || (s->op != AS_ADD && s->op != AS_SUB) || n->nband < 3)
		return false;
	const auto_acc *w = NULL;
	for (int a = 0; a < n->nacc; a++)
		if (n->acc[a].write)
			w = &n->acc[a];
	if (!w)
		return false;
	memset(g, 0, sizeof *g);
	g->u = g->v = g->r = -1;
	/* r: the costliest loop the written element does not move along (the sum) */
	for (int i = 0; i < n->nband; i++) {
		int b = n->order[i];
		if (w->stride[b] == 0 && g->r < 0)
			g->r = b;
		if (w->stride[b] == 1 && g->v < 0)
			g->v = b;
	}
	for (int i = 0; i < n->nband; i++) {
		int b = n->order[i];
		if (b != g->v && w->stride[b] != 0 && (g->u < 0 || llabs(w->stride[b]) > llabs(w->stride[g->u])))
			g->u = b;
	}
	if (g->u < 0 || g->v < 0 || g->r < 0)
		return false;
	g->left = g->right = -1;
	for (int a = 0; a < n->nacc; a++) {
		const auto_acc *x = &n->acc[a];
		if (x->write || x->array == w->array || k->arrays[x->array].rank != 2)
			continue;
		if (x->stride[g->u] && x->stride[g->r] && !x->stride[g->v] && g->left < 0)
			g->left = a;
		if (x->stride[g->v] && x->stride[g->r] && !x->stride[g->u] && g->right < 0)
			g->right = a;
	}
	g->elt = (int)ct_dtype_size(k->arrays[w->array].type);
	g->lanes = m->vector_bytes / g->elt;
	if (g->lanes < 2 || n->trip[g->v] < g->lanes || n->trip[g->u] < 2)
		return false;
	/* the register tile: accumulators mr * nv enough to cover the FMA
	 * latency at full issue (latency x units independent chains), within
	 * the registers with the nv vectors of the right operand and one
	 * broadcast; among those the most FMAs per load (mr * nv / (mr + nv)) */
	int need = m->fma_latency * m->fma_units;
	double best = -1;
	for (int nv = 1; nv <= 4; nv *= 2) {
		if ((int64_t)nv * g->lanes > n->trip[g->v])
			break;
		for (int mr = 2; mr <= AUTO_MAX_MR && mr <= n->trip[g->u]; mr++) {
			int acc = mr * nv;
			if (acc + nv + 1 + AUTO_SPARE_REGS > m->registers)
				break;
			double ratio = (double)acc / (double)(mr + nv) + (acc >= need ? 100 : 0);
			if (ratio > best + 1e-9) {
				best = ratio;
				g->mr = mr;
				g->nv = nv;
			}
		}
	}
	if (best < 0)
		return false;
	g->nr = g->nv * g->lanes;
	return true;
}

static int64_t round_down(int64_t x, int64_t m)
{
	int64_t r = x / m * m;
	return r < m ? m : r;
}

static int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

static int64_t cache_bytes(const auto_machine *m, int level)
{
	if (level >= m->ncaches)
		level = m->ncaches - 1;
	if (level < 0 || level >= CT_PROBE_MAX_CACHES)
		return 32 << 10;
	int64_t s = m->cache_size[level];
	return s > 0 ? s : 32 << 10;
}

/* x in blocks of at most b, made even: the fewest blocks of at most b,
 * each of the same size rounded up to a multiple of unit (the last one
 * shorter); x itself when one block holds it. */
static int64_t even_blocks(int64_t x, int64_t b, int64_t unit)
{
	if (b >= x)
		return x;
	if (b < unit)
		b = unit;
	int64_t nb = (x + b - 1) / b;
	int64_t e = round_up((x + nb - 1) / nb, unit);
	return e < x ? e : x;
}

/* The ways of L1 the left operand's mr x kc row panel may hold: half of
 * them but one (Low et al.: one way is left to the streams, the rest
 * shared between what stays and what passes through); 0 when the probe
 * gives no associativity. */
static int l1_panel_ways(const auto_machine *m)
{
	int w = m->cache_ways[0];
	if (w < 2 || m->cache_size[0] <= 0 || m->cache_line[0] <= 0 || m->cache_size[0] % w)
		return 0;
	return (w - 1) / 2 > 0 ? (w - 1) / 2 : 1;
}

/* The cycles per vector FMA that a kc x nc block adds to the register
 * tile's own: the mr x nr tile of the written array is loaded and stored
 * once per kc, a vector load or store a cycle each (2 / kc), and with
 * packing the mr x kc row panel of the left operand is copied once per nc
 * columns, element by element (the copy transposes, so it is scalar), a
 * load and a store that issue in one cycle (lanes / nc). Weighing the copy
 * as two instructions (2 lanes / nc) chose kc 88, nc 704 for dgemm at 2048
 * on a Zen 4 guest: 0.38-0.40 s on one thread, where 128 x 512 took 0.36
 * and 256 x 256 0.36 (the hand plan 0.33). */
static double gemm_block_overhead(const auto_gemm *g, int64_t kc, int64_t nc)
{
	double o = 2.0 / (double)kc;
	if (g->pack)
		o += (double)g->lanes / (double)nc;
	return o;
}

/* BLIS's analytical blocking (Low et al. 2016), for auto's loop order
 * (the row panels of mr rows outside the column panels of nr columns,
 * as in examples/dgemm.cachet): the left operand's mr x kc row panel is
 * what L1 keeps, reused by each of the NC / nr column panels; the right
 * operand's kc x nr micro-panels pass through L1 once per row panel, read
 * in order from the packed kc x nc block (prefetched while the FMAs run,
 * so they do not bound kc). So:
 *   kc: at most what puts the row panel in (ways - 1) / 2 ways of L1
 *       (half of L1 without the ways), in even blocks of the sum (no
 *       short last block); the larger kc, the fewer times the mr x nr
 *       tile of the written array is loaded and stored (once per block
 *       of the sum), but the smaller nc (below): kc is the one of those
 *       whose block adds the fewest cycles per FMA
 *       (gemm_block_overhead), the row panel being packed once per nc
 *       columns. On a Zen 5 guest (L1 48 KiB 12-way, L2 1 MiB 8-way),
 *       the L1 bound alone gave kc 688 and nc 128 for sgemm at 2048 (101-
 *       103 ms on one thread; dgemm 416 and 128, 107 ms on two), where
 *       128 x 1024 and 192 x 1024 took 87.6-88.4 ms (dgemm 128 x 512:
 *       96.5 ms) and the hand plan 84.5 (96.7);
 *   nc: the kc x nc block of the right operand in half of L2 over the
 *       threads that share it: in this loop order it is read again once
 *       per row panel of mr rows, the role BLIS's mc x kc block of the
 *       left operand has (BLIS keeps that one in L2; its right block,
 *       read once per mc rows, in L3). On an Ice Lake server (L2 1.25
 *       MiB, 20-way, L3 a slower mesh), sgemm at 2048 on one thread ran
 *       146-155 GFLOP/s with the block at 0.7 MiB, 100-109 at 1.4 MiB and
 *       67-80 at 5.6 MiB (half of L3, the rule before);
 *   mc: the rows per thread: the row panels are packed per mr rows, so
 *       mc sets only how often the right block is packed (once per mc
 *       rows), the fewer the better.
 * Each at most its loop's extent (one block then). */
/* The cache the right block is kept in: L2 (L1 when the probe gives one
 * level); *sharers gets the plan's threads that share one instance. */
static int gemm_nc_level(const auto_machine *m, int *sharers)
{
	int lev = m->ncaches > 1 ? 1 : 0;
	int s = m->cache_shared[lev] > 1 ? m->cache_shared[lev] : 1;
	*sharers = s > m->threads ? m->threads : s;
	return lev;
}

/* nc for a given kc: the kc x nc block in half of that cache over its
 * sharers, a multiple of nr, in even blocks of the columns. */
static int64_t gemm_nc_for(const auto_machine *m, const auto_nest *n, const auto_gemm *g, int64_t kc)
{
	int sharers;
	int lev = gemm_nc_level(m, &sharers);
	double l2 = (double)cache_bytes(m, lev) * AUTO_CACHE_SHARE / sharers;
	return even_blocks(n->trip[g->v], round_down((int64_t)(l2 / ((double)kc * g->elt)), g->nr), g->nr);
}

static void gemm_blocks(const auto_machine *m, const auto_nest *n, auto_gemm *g)
{
	int pw = l1_panel_ways(m);
	double l1 = pw ? (double)pw * (double)(m->cache_size[0] / m->cache_ways[0])
	               : (double)cache_bytes(m, 0) * AUTO_CACHE_SHARE;
	int sharers;
	int lev = gemm_nc_level(m, &sharers);
	int64_t kmax = round_down((int64_t)(l1 / ((double)g->mr * g->elt)), 8);
	int64_t kc = 0, nc = 0;
	double best = 0;
	for (int64_t kk = kmax; kk >= 8; kk -= 8) {
		int64_t kt = even_blocks(n->trip[g->r], kk, 8);
		int64_t nt = gemm_nc_for(m, n, g, kt);
		double cost = gemm_block_overhead(g, kt, nt);
		if (kc == 0 || cost < best * (1 - 1e-9))
			kc = kt, nc = nt, best = cost;
	}
	g->kc_l1 = even_blocks(n->trip[g->r], kmax, 8);
	/* the rows per thread */
	int64_t mc = (n->trip[g->u] + m->threads - 1) / m->threads;
	mc = even_blocks(n->trip[g->u], mc < n->trip[g->u] ? round_up(mc, g->mr) : mc, g->mr);
	g->kc = g->kc0 = kc, g->nc = g->nc0 = nc, g->mc = g->mc0 = mc;
	g->l1_ways = pw;
	g->nc_level = lev, g->nc_sharers = sharers;
}

/* ------------------------------------------------------------ one file */

/* What the run chose for a nest, as the text of its schedule and plan
 * items and their comments. */
typedef struct auto_choice {
	ct_buf params;   /* param lines (tile sizes) */
	ct_buf sched;    /* schedule items */
	ct_buf plan;     /* plan items */
	ct_buf why;      /* comments of the nest */
	int ntune;       /* params given a tune list, */
	int64_t points;  /* the product of their lists' lengths */
} auto_choice;

static void choice_init(auto_choice *c)
{
	ct_buf_init(&c->params);
	ct_buf_init(&c->sched);
	ct_buf_init(&c->plan);
	ct_buf_init(&c->why);
	c->ntune = 0;
	c->points = 1;
}

static void choice_free(auto_choice *c)
{
	ct_buf_free(&c->params);
	ct_buf_free(&c->sched);
	ct_buf_free(&c->plan);
	ct_buf_free(&c->why);
}

static const char *iname(const ct_kernel *k, const auto_nest *n, int b)
{
	return k->indices[n->band[b]].name;
}

/* Insert the param lines after the `kernel NAME` line of head. */
static char *assemble(const char *head, const char *params, const char *top, const char *sched, const char *plan)
{
	ct_buf b;
	ct_buf_init(&b);
	const char *kw = head;
	for (;;) {
		kw = strstr(kw, "kernel");
		if (!kw || ((kw == head || kw[-1] == '\n') && !ident_char(kw[6])))
			break;
		kw += 6;
	}
	const char *after = kw ? strchr(kw, '\n') : NULL;
	if (after && params && *params) {
		after++;
		for (const char *p = head; p < after; p++)
			ct_buf_putc(&b, *p);
		ct_buf_puts(&b, params);
		ct_buf_puts(&b, after);
	} else
		ct_buf_puts(&b, head);
	ct_buf_puts(&b, "\n");
	ct_buf_puts(&b, top);
	if (sched && *sched)
		ct_buf_printf(&b, "schedule {\n%s}\n", sched);
	if (plan && *plan)
		ct_buf_printf(&b, "%splan {\n%s}\n", sched && *sched ? "\n" : "", plan);
	return ct_buf_take(&b);
}

/* ------------------------------------------------------------ checking a candidate */

/* Parse text on a private ctx with k's param values: NULL when the checks
 * refuse it (its message into err). */
/* A private ctx for trial parses, with the options of k's that the checks
 * read (one per run: a ctx probes the machine once, on first use). */
static ct_ctx *trial_ctx(const ct_kernel *k)
{
	ct_ctx *c = ct_ctx_new();
	if (!c)
		return NULL;
	ct_ctx_set_option(c, CT_OPT_MAX_ERRORS, 1);
	ct_ctx_set_option(c, CT_OPT_VECTOR_BYTES, ct_ctx_get_option(k->ctx, CT_OPT_VECTOR_BYTES));
	ct_ctx_set_option(c, CT_OPT_BRANCHING, ct_ctx_get_option(k->ctx, CT_OPT_BRANCHING));
	return c;
}

/* shared: the run's trial ctx (then *cp is NULL), or NULL for a ctx of
 * the kernel's own (*cp, the caller frees it). */
static ct_kernel *trial_parse_as(ct_ctx *shared, ct_kernel *k, const char *text, ct_ctx **cp, char *err, size_t nerr,
                                 bool quick)
{
	ct_ctx *c = shared ? shared : trial_ctx(k);
	*cp = shared ? NULL : c;
	if (!c)
		return NULL;
	ct_ctx_clear_error(c);
	/* quick: the language's checks only (the model's candidates differ in
	 * tile sizes alone; the one chosen is checked in full) */
	ct_kernel *t = quick ? lang_parse(c, text, strlen(text), k->file ? k->file : "auto")
	                     : ct_kernel_parse(c, text, strlen(text), k->file ? k->file : "auto");
	if (t) {
		bool changed = false;
		for (int i = 0; i < k->nparams; i++) {
			const ir_param *p = &k->params[i];
			if (p->overridden || (p->runtime && p->has_value)) {
				ct_kernel_set_param(t, p->name, p->value);
				changed = true;
			}
		}
		if (changed && (quick ? lang_recheck(t) : ct_kernel_recheck(t)) != CT_OK) {
			ct_kernel_free(t);
			t = NULL;
		}
	}
	if (!t && err) {
		const char *msg = ct_ctx_diag_count(c) > 0 ? ct_ctx_diag_render(c, 0) : ct_ctx_last_message(c);
		snprintf(err, nerr, "%s", msg ? msg : "refused");
	}
	return t;
}

static ct_kernel *trial_parse(ct_ctx *shared, ct_kernel *k, const char *text, ct_ctx **cp, char *err, size_t nerr)
{
	return trial_parse_as(shared, k, text, cp, err, nerr, false);
}

static bool find_loops(const lt_node *x, int index, const lt_node **out, int *n, int cap)
{
	if (!x)
		return false;
	if (x->kind == LT_LOOP && x->index == index && *n < cap)
		out[(*n)++] = x;
	for (int i = 0; i < x->nkids; i++)
		find_loops(x->kids[i], index, out, n, cap);
	for (int i = 0; i < x->nels; i++)
		find_loops(x->els[i], index, out, n, cap);
	return *n > 0;
}

/* Whether some version of the loop over index `name` of kernel t carries a
 * dependence: 1 carries, 0 free, -1 unknown (treated as carries). A
 * parallel loop counts reductions (its threads would race on the sum); a
 * vector loop does not: the verb pass accepts a sum over it only as partial
 * sums per lane, re-associated where the plan allows it (not strict), and
 * refuses it otherwise (docs/LANGUAGE.md, section 7). */
static int loop_carries(ct_kernel *t, dep_info *d, ct_looptree *tree, const char *name, bool with_reductions)
{
	int id = -1;
	for (int i = 0; i < t->nindices; i++)
		if (!strcmp(t->indices[i].name, name))
			id = i;
	if (id < 0)
		return -1;
	const lt_node *nodes[64];
	int n = 0;
	for (int r = 0; r < tree->nroots; r++)
		find_loops(tree->roots[r], id, nodes, &n, 64);
	if (n == 0)
		return -1;
	for (int i = 0; i < n; i++) {
		/* a parallel loop may carry through temps private to its iterations (one copy per thread) */
		int c = with_reductions ? dep_loop_carries_private(d, tree, nodes[i], true, NULL)
		                        : dep_loop_carries(d, tree, nodes[i], false);
		if (c != 0)
			return c < 0 ? -1 : 1;
	}
	return 0;
}

/* ------------------------------------------------------------ the run */

typedef struct auto_run {
	ct_kernel *k;
	const ct_auto_options *o;
	auto_machine m;
	int64_t *pv;
	auto_names names;
	char *head;
	auto_text at;
	ct_buf params, sched, plan, why;   /* accepted so far */
	int nests, tiled, parallel, vector;
	const char *keep;                  /* fused row loops (space-separated): their nests keep their order */
	int evals;                         /* tilings the model evaluated */
	ct_ctx *tctx;                      /* trial parses (trial_ctx) */
	/* the nest being chosen for (k->body[top]; -1: none): its candidates are
	 * checked on the text without the other nests' items (candidate_ok) */
	int top;
	bool *roots;                       /* its nests for the dependences (nest_roots), NULL: all */
	/* the text its candidates are checked on: the file's head without the
	 * top-level nodes no question about the nest needs (nest_head); NULL:
	 * the whole head */
	char *nest_head;
	int nest_others;                   /* the nests nest_head keeps besides this one (lets not counted) */
	size_t sched_base, plan_base;      /* the items from before the first nest (the user's schedule, wave items) */
	size_t sched_from, plan_from;      /* where this nest's accepted items start */
	size_t params_from;                /* and its params (auto adds none before the first nest) */
	int ntune;                         /* accepted params with a tune list, */
	int64_t points;                    /* the product of their lists' lengths */
	struct auto_trial *trial;          /* the last candidate's trial (trial_get), NULL: none */
} auto_run;

/* Whether `work` statement executions pay for starting the threads. */
static bool worth_threads(const auto_run *R, int64_t work)
{
	return R->m.threads > 1 && work >= (int64_t)AUTO_MIN_PAR_WORK * R->m.threads;
}

/* Accepted items into b: all of them, or (part) those before base and those
 * from `from` on. */
static void put_items(ct_buf *b, const ct_buf *items, bool part, size_t base, size_t from)
{
	if (!items->s)
		return;
	if (!part) {
		ct_buf_puts(b, items->s);
		return;
	}
	for (size_t i = 0; i < base && i < items->len; i++)
		ct_buf_putc(b, items->s[i]);
	if (from < items->len)
		ct_buf_puts(b, items->s + from);
}

/* The text with the accepted items plus candidate c; with own_nest, of the
 * accepted items only those from before the first nest and this nest's
 * (R->top): the other nests' params, schedules and plans, already checked, stay
 * out, so that the check of a candidate costs the same in the tenth nest as
 * in the first (their bands and their loops do not meet this nest's); and
 * of the body, R->nest_head's nodes where it has them. */
static char *with_items(auto_run *R, const auto_choice *c, bool own_nest)
{
	ct_buf p, s, l;
	ct_buf_init(&p);
	ct_buf_init(&s);
	ct_buf_init(&l);
	bool part = own_nest && R->top >= 0;
	put_items(&p, &R->params, part, 0, R->params_from);
	ct_buf_puts(&p, c && c->params.s ? c->params.s : "");
	put_items(&s, &R->sched, part, R->sched_base, R->sched_from);
	ct_buf_puts(&s, c && c->sched.s ? c->sched.s : "");
	put_items(&l, &R->plan, part, R->plan_base, R->plan_from);
	ct_buf_puts(&l, c && c->plan.s ? c->plan.s : "");
	char *txt = assemble(part && R->nest_head ? R->nest_head : R->head, p.s, "", s.s, l.s);
	ct_buf_free(&p);
	ct_buf_free(&s);
	ct_buf_free(&l);
	return txt;
}

/* The text with the accepted items plus candidate c. */
static char *with_choice(auto_run *R, const auto_choice *c)
{
	return with_items(R, c, false);
}

/* The model's cost of text (cycles of misses at this machine's caches);
 * misses[] per level. < 0 when it cannot be predicted. */
static double model_cost(auto_run *R, ct_kernel *t, int64_t *misses, int *nlevels)
{
	ct_predict_result pr;
	if (predict_quick(t, R->o->cache_spec, &pr) != CT_OK)
		return -1;
	double c = 0;
	*nlevels = pr.nlevels;
	for (int l = 0; l < pr.nlevels && l < CT_SIM_MAX_LEVELS; l++) {
		misses[l] = pr.level[l].misses;
		c += (double)pr.level[l].misses * auto_miss_cycles[l < 6 ? l : 5];
	}
	ct_predict_result_free(&pr);
	return c;
}

static void accept(auto_run *R, const auto_choice *c)
{
	R->ntune += c->ntune;
	R->points *= c->points;
	ct_buf_puts(&R->params, c->params.s ? c->params.s : "");
	ct_buf_puts(&R->sched, c->sched.s ? c->sched.s : "");
	ct_buf_puts(&R->plan, c->plan.s ? c->plan.s : "");
	ct_buf_puts(&R->why, c->why.s ? c->why.s : "");
}

static int accesses_of(const ir_node *x, int a, const ir_expr **out, int n, int cap);

/* Whether node x accesses array a. */
static bool touches(const ir_node *x, int a)
{
	const ir_expr *one[1];
	return accesses_of(x, a, one, 0, 1) > 0;
}

static bool writes(const ir_node *x, int a);

/* The nests whose dependences a question about a loop of k->body[top]
 * needs (dep_compute_roots): that nest, and every top-level node that
 * accesses a temp it writes (a temp is made private to a parallel loop's
 * iterations only when no access outside the loop needs its values). A
 * temp the nest only reads is no such question, and no loop of the nest
 * carries a dependence through it: the rectangles of a triangle cut in
 * blocks all read one copy (A_t), and taking every nest that reads it
 * made each nest's question one about the whole file (three quarters of
 * auto's time on PolyBench's syrk). NULL when out of memory. */
static bool *nest_roots(const ct_kernel *k, int top)
{
	bool *roots = calloc((size_t)k->nbody + 1, sizeof *roots);
	if (!roots)
		return NULL;
	roots[top] = true;
	for (int a = 0; a < k->narrays; a++) {
		if (k->arrays[a].role != CT_TEMP || !writes(k->body[top], a))
			continue;
		for (int r = 0; r < k->nbody; r++)
			roots[r] = roots[r] || touches(k->body[r], a);
	}
	return roots;
}

static size_t node_end(const char *s, size_t n, size_t a, bool block);

/* The first top-level node of k that writes array a (-1: none). */
static int first_writer(const ct_kernel *k, int a)
{
	for (int r = 0; r < k->nbody; r++)
		if (writes(k->body[r], a))
			return r;
	return -1;
}

/* The top-level nodes that the checks of a candidate for nest top need:
 * the nest, its dependence questions' nests (roots), every
 * `let`, and the first writer of each temp or output array that these
 * touch and of each output (the language refuses a read of such an array
 * that no earlier statement writes, and an output that none writes), until
 * no more are added. Flags over k->body; NULL when out of memory. */
static bool *nest_keep(const ct_kernel *k, int top, const bool *roots)
{
	bool *keep = calloc((size_t)k->nbody + 1, sizeof *keep);
	if (!keep)
		return NULL;
	for (int r = 0; r < k->nbody; r++)
		keep[r] = r == top || roots[r] || k->body[r]->kind == ND_LET;
	for (bool grew = true; grew;) {
		grew = false;
		for (int a = 0; a < k->narrays; a++) {
			ct_role role = k->arrays[a].role;
			if (role != CT_TEMP && role != CT_OUTPUT)
				continue;
			bool need = role == CT_OUTPUT;
			for (int r = 0; r < k->nbody && !need; r++)
				need = keep[r] && touches(k->body[r], a);
			int w = need ? first_writer(k, a) : -1;
			if (w >= 0 && !keep[w]) {
				keep[w] = true;
				grew = true;
			}
		}
	}
	return keep;
}

/* R's head without the top-level nodes that keep leaves out (NULL when
 * their text cannot be cut out: a node not where its position says). */
static char *kept_text(const auto_run *R, const bool *keep)
{
	const ct_kernel *k = R->k;
	const char *s = k->text;
	size_t len = k->text_len, from = 0;
	ct_buf b;
	ct_buf_init(&b);
	size_t line_off = 0; /* where line `line` starts: the nodes come in the text's order */
	int line = 1;
	for (int r = 0; r < k->nbody; r++) {
		if (keep[r])
			continue;
		const ir_node *x = k->body[r];
		for (; line < x->pos.line && line_off < len; line_off++)
			if (s[line_off] == '\n')
				line++;
		size_t a = line_off + (size_t)(x->pos.col > 0 ? x->pos.col - 1 : 0);
		a = a < len ? a : len;
		size_t e = node_end(s, len, a, x->kind != ND_STMT);
		if (a < from || e <= a || (x->kind == ND_FOR && strncmp(s + a, "for", 3) != 0)) {
			ct_buf_free(&b);
			return NULL;
		}
		for (size_t i = from; i < a; i++)
			ct_buf_putc(&b, s[i]);
		from = e;
	}
	for (size_t i = from; i < len; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf h;
	ct_buf_init(&h);
	put_head(&h, b.s ? b.s : "", b.len, &R->at);
	ct_buf_free(&b);
	return ct_buf_take(&h);
}

/* The dependences of trial kernel t (R's kernel with other schedule and plan
 * items: the same body) for questions about loops of the nest R->top
 * (dep_compute_roots over R->roots), or of all of t outside a nest. NULL with
 * an error on t's ctx. */
static dep_info *trial_deps(const auto_run *R, ct_kernel *t)
{
	if (!R->roots || t->nbody != R->k->nbody)
		return dep_compute(t);
	return dep_compute_roots(t, R->roots);
}

/* The last candidate's trial parse in a nest, its dependences and loop
 * tree: candidate_ok asks whether its loops carry dependences, then
 * private_note or vector_sums ask about the one accepted, on the same
 * text; each parse and dependence analysis is of the whole file, so
 * asking again cost a fifth of auto's time on syr2k's 63 nests. */
typedef struct auto_trial {
	char *txt;            /* with_items(R, c, true) */
	int top;              /* R->top when parsed (its dependences are that nest's) */
	ct_kernel *t;         /* NULL: it did not parse (why) */
	dep_info *d;          /* NULL until asked for (or unknown) */
	ct_looptree *tree;
	bool deps_done;
	char why[512];
} auto_trial;

static void trial_drop(auto_run *R)
{
	auto_trial *x = R->trial;
	if (!x)
		return;
	ct_looptree_free(x->tree);
	dep_free(x->d);
	ct_kernel_free(x->t);
	free(x->txt);
	free(x);
	R->trial = NULL;
}

/* The trial of candidate c (R->trial, owned by R): parsed, and with
 * deps its dependences and loop tree (x->d NULL: unknown). NULL when out
 * of memory. */
static auto_trial *trial_get(auto_run *R, const auto_choice *c, bool deps)
{
	char *txt = with_items(R, c, true);
	if (!txt)
		return NULL;
	auto_trial *x = R->trial;
	if (!x || x->top != R->top || strcmp(x->txt, txt) != 0) {
		trial_drop(R);
		x = calloc(1, sizeof *x);
		if (!x) {
			free(txt);
			return NULL;
		}
		ct_ctx *cx = NULL;
		x->txt = txt;
		x->top = R->top;
		x->t = trial_parse(R->tctx, R->k, txt, &cx, x->why, sizeof x->why);
		R->trial = x;
	} else
		free(txt);
	if (deps && x->t && !x->deps_done) {
		x->deps_done = true;
		x->d = trial_deps(R, x->t);
		x->tree = x->d ? lt_build_loops(x->t, true) : NULL;
		if (!x->tree) {
			dep_free(x->d);
			x->d = NULL;
		}
	}
	ct_ctx_clear_error(R->tctx);
	return x;
}

/* R->nest_head for nest top: the head with only the nodes that nest_keep
 * keeps, so that checking a candidate of the last of a file's 63 nests
 * (syr2k's triangles cut in blocks) parses, lowers and analyses one nest,
 * not 63. Only where the accepted items are all this nest's (no schedule
 * or plan of the user's, no items before the first nest: those may name
 * any nest's loops), and only when that text checks as it is; else NULL
 * (the whole head). The whole file is checked at the end. */
static void nest_head_set(auto_run *R, int top)
{
	R->nest_head = NULL;
	R->nest_others = 0;
	const ct_kernel *k = R->k;
	if (R->at.has_sched || R->at.has_plan || R->sched_base > 0 || R->plan_base > 0 || !R->roots)
		return; /* (no roots: out of memory, and the questions then take the whole file) */
	bool *keep = nest_keep(k, top, R->roots);
	int kept = 0, others = 0;
	for (int r = 0; keep && r < k->nbody; r++) {
		kept += keep[r];
		others += keep[r] && r != top && k->body[r]->kind != ND_LET;
	}
	char *h = keep && kept < k->nbody ? kept_text(R, keep) : NULL;
	free(keep);
	if (!h)
		return;
	R->nest_head = h;
	R->nest_others = others;
	auto_trial *x = trial_get(R, NULL, false);
	if (!x || !x->t) {
		trial_drop(R);
		free(R->nest_head);
		R->nest_head = NULL;
		R->nest_others = 0;
	}
}

/* Check candidate c on top of what was accepted: it parses (the schedule's
 * legality included) and parallel/vector loops carry no dependence. In a
 * nest (R->top), on the text with this nest's items only and with the
 * dependences of this nest (and those sharing its temps): what the other
 * nests were given has been checked, their bands' checks and loops do not
 * meet this one's, and the whole file is checked at the end. */
static bool candidate_ok(auto_run *R, const auto_choice *c, const char **par, int npar, const char **vec, int nvec,
                         char *why, size_t nwhy)
{
	auto_trial *x = trial_get(R, c, npar + nvec > 0);
	if (!x || !x->t) {
		snprintf(why, nwhy, "%s", x ? x->why : "out of memory");
		return false;
	}
	if (npar + nvec > 0 && !x->d) {
		snprintf(why, nwhy, "dependences unknown");
		return false;
	}
	for (int i = 0; i < npar + nvec; i++) {
		const char *v = i < npar ? par[i] : vec[i - npar];
		if (loop_carries(x->t, x->d, x->tree, v, i < npar) != 0) {
			snprintf(why, nwhy, "loop %s carries a dependence", v);
			return false;
		}
	}
	return true;
}

/* The temps that parallel loop x of candidate c needs private (one copy per
 * thread: dep_loop_carries_private) as a note for the comment, into note
 * ("" when none). */
static void private_note(auto_run *R, const auto_choice *c, const char *x, char *note, size_t n)
{
	note[0] = '\0';
	auto_trial *tr = trial_get(R, c, true);
	ct_kernel *t = tr ? tr->t : NULL;
	dep_info *d = t ? tr->d : NULL;
	ct_looptree *tree = d ? tr->tree : NULL;
	bool *priv = tree ? calloc((size_t)t->narrays + 1, sizeof *priv) : NULL;
	const lt_node *nodes[1];
	int nn = 0;
	int id = -1;
	for (int i = 0; t && i < t->nindices; i++)
		if (!strcmp(t->indices[i].name, x))
			id = i;
	for (int r = 0; priv && id >= 0 && r < tree->nroots && nn == 0; r++)
		find_loops(tree->roots[r], id, nodes, &nn, 1);
	if (nn == 1 && dep_loop_carries_private(d, tree, nodes[0], true, priv) == 0)
		for (int a = 0; a < t->narrays; a++)
			if (priv[a])
				snprintf(note + strlen(note), n - strlen(note), "%s%s", note[0] ? ", " : " (one copy per thread of temp ",
				         t->arrays[a].name);
	if (note[0])
		snprintf(note + strlen(note), n - strlen(note), ": every read of it follows a write in the same iteration)");
	free(priv);
	ct_ctx_clear_error(R->tctx);
}

/* Whether the accepted vector loop v of candidate c carries a reduction (its
 * lanes then hold partial sums, added at the end: a re-association), for
 * the comment. */
static bool vector_sums(auto_run *R, const auto_choice *c, const char *v)
{
	auto_trial *tr = trial_get(R, c, true);
	return tr && tr->t && tr->d && loop_carries(tr->t, tr->d, tr->tree, v, true) != 0;
}

static void put_order(ct_buf *b, const ct_kernel *k, const auto_nest *n)
{
	for (int i = 0; i < n->nband; i++)
		ct_buf_printf(b, "%s%s", i ? ", " : "", iname(k, n, n->order[i]));
}

static void put_costs(ct_buf *b, const ct_kernel *k, const auto_nest *n)
{
	for (int i = 0; i < n->nband; i++)
		ct_buf_printf(b, "%s%s %.3g", i ? ", " : "", iname(k, n, n->order[i]), n->cost[n->order[i]]);
}

/* The values of a tune list around v: its half and its double as even
 * blocks, within unit .. top; their count (1 to 3) into c[]. */
static int tune_values(int64_t v, int64_t unit, int64_t top, int64_t *c)
{
	int64_t all[3] = {even_blocks(top, v / 2, unit), v, even_blocks(top, v * 2, unit)};
	int n = 0;
	int64_t last = 0;
	for (int i = 0; i < 3; i++) {
		if ((i != 1 && (all[i] < unit || all[i] > top)) || all[i] <= last)
			continue;
		c[n++] = last = all[i];
	}
	return n;
}

/* `param NAME = v tune {..}   # note`: v, half and twice it, kept within
 * unit .. top; without the list (listed false) `param NAME = v   # note`. */
static void put_tune(ct_buf *b, const char *name, int64_t v, int64_t unit, int64_t top, const char *note, bool listed)
{
	ct_buf_printf(b, "param %s = %lld", name, (long long)v);
	if (listed) {
		int64_t c[3];
		int n = tune_values(v, unit, top, c);
		ct_buf_puts(b, " tune {");
		for (int i = 0; i < n; i++)
			ct_buf_printf(b, "%s%lld", i ? ", " : "", (long long)c[i]);
		ct_buf_putc(b, '}');
	}
	ct_buf_printf(b, "   # auto: %s\n", note);
}

/* Whether access a can be packed: a rank-2 input, const or temp. */
static bool packable(const ct_kernel *k, const auto_nest *n, int a)
{
	if (a < 0)
		return false;
	const ir_array *ar = &k->arrays[n->acc[a].array];
	return ar->rank == 2 && (ar->role == CT_INPUT || ar->role == CT_CONST || ar->role == CT_TEMP);
}

/* `NAME = cache(X, index=inner, trigger_index=trig[, layout=(..)])`: the
 * operand of access a packed for the register tile, its dimension moved
 * by band position fast (the vector or the broadcast row) made the
 * contiguous one. */
static void put_pack(auto_run *R, const auto_nest *n, int a, int fast, const char *inner, const char *trig,
                     ct_buf *plan)
{
	const ct_kernel *k = R->k;
	const ir_array *ar = &k->arrays[n->acc[a].array];
	int df = n->acc[a].dim[fast], other = df == 0 ? 1 : 0;
	const char *name = fresh(k, &R->names, ar->name, "p");
	ct_buf_printf(plan, "  %s = cache(%s, index=%s, trigger_index=%s", name, ar->name, inner, trig);
	if (!(ar->order[0] == other && ar->order[1] == df))
		ct_buf_printf(plan, ", layout=(%d, %d)", other, df);
	ct_buf_puts(plan, ")\n");
}

/* The gemm-shaped choice with cache tiles kc, nc, mc (and the fixed register tile). */
static void gemm_choice(auto_run *R, const auto_nest *n, auto_gemm *g, auto_choice *c, const char **par,
                        const char **vec, const char **unr)
{
	const ct_kernel *k = R->k;
	const char *U = iname(k, n, g->u), *V = iname(k, n, g->v), *Rn = iname(k, n, g->r);
	const char *u1 = fresh(k, &R->names, U, "1"), *v1 = fresh(k, &R->names, V, "1"),
	           *r1 = fresh(k, &R->names, Rn, "1"), *u2 = fresh(k, &R->names, U, "2"),
	           *v2 = fresh(k, &R->names, V, "2");
	if (!g->p_kc) {
		g->p_kc = fresh(k, &R->names, "KC_", Rn);
		g->p_nc = fresh(k, &R->names, "NC_", V);
		g->p_mc = fresh(k, &R->names, "MC_", U);
	}
	/* tune lists while the file's stay within what the selector and the
	 * tuner take (the nests after write their blocks as plain params) */
	int64_t vals[3];
	int64_t pts = (int64_t)tune_values(g->kc, 8, n->trip[g->r], vals) * tune_values(g->nc, g->nr, n->trip[g->v], vals) *
	              tune_values(g->mc, g->mr, n->trip[g->u], vals);
	bool listed = R->ntune + 3 <= CT_SELECT_MAX_PARAMS && R->points <= TUNE_MAX_SPACE / pts;
	if (listed) {
		c->ntune = 3;
		c->points = pts;
	}
	const char *plain = listed ? "" : " (no tune list: docs/AUTO.md)";
	char note[160];
	snprintf(note, sizeof note, "the sum %s in blocks: the left row panel in L1%s", Rn, plain);
	put_tune(&c->params, g->p_kc, g->kc, 8, n->trip[g->r], note, listed);
	snprintf(note, sizeof note, "columns %s in blocks: the right block in L2%s", V, plain);
	put_tune(&c->params, g->p_nc, g->nc, g->nr, n->trip[g->v], note, listed);
	snprintf(note, sizeof note, "rows %s per block: the rows per thread%s", U, plain);
	put_tune(&c->params, g->p_mc, g->mc, g->mr, n->trip[g->u], note, listed);
	ct_buf_printf(&c->sched, "  %s, %s, %s = tile(%s=%s, %s=%s, %s=%s)\n", u1, v1, r1, U, g->p_mc, V, g->p_nc, Rn,
	              g->p_kc);
	ct_buf_printf(&c->sched, "  %s = split(%s, %d)\n", v2, v1, g->nr);
	ct_buf_printf(&c->sched, "  %s = split(%s, %d)\n", u2, u1, g->mr);
	ct_buf_puts(&c->sched, "  reorder(");
	int cnt = 0;
	for (int i = 0; i < n->nband; i++) {
		int b = n->order[i];
		if (b != g->u && b != g->v && b != g->r)
			ct_buf_printf(&c->sched, "%s%s", cnt++ ? ", " : "", iname(k, n, b));
	}
	ct_buf_printf(&c->sched, "%s%s, %s, %s, %s, %s, %s, %s, %s)\n", cnt ? ", " : "", U, V, Rn, u1, v1, r1, u2, v2);
	if (g->pack) {
		put_pack(R, n, g->right, g->v, r1, u1, &c->plan);
		/* one cache per array: an operand read twice (syrk's A) is packed for its vector side */
		if (n->acc[g->left].array != n->acc[g->right].array)
			put_pack(R, n, g->left, g->u, r1, v1, &c->plan);
	}
	ct_buf_printf(&c->plan, "  unroll(%s)\n  vectorize(%s)\n", u2, v2);
	par[0] = U;
	par[1] = V;
	vec[0] = v2;
	*unr = u2;
}

/* The comment of a register-tiled sum; nl < 0: the model counted no candidate's misses. */
static void gemm_why(auto_run *R, const auto_nest *n, const auto_gemm *g, auto_choice *c, bool parallel,
                     const int64_t *miss, int nl)
{
	const ct_kernel *k = R->k;
	const char *U = iname(k, n, g->u), *V = iname(k, n, g->v), *Rn = iname(k, n, g->r);
	const auto_machine *m = &R->m;
	ct_buf *w = &c->why;
	ct_buf_printf(w, "# nest at line %d: a sum into %s[..] that %s does not move (%s += ...)\n", n->top->pos.line,
	              k->arrays[n->stmt->lhs->id].name, Rn, k->arrays[n->stmt->lhs->id].name);
	ct_buf_printf(w, "#   loop order from reuse (LoopCost, lines per iteration: ");
	put_costs(w, k, n);
	ct_buf_printf(w, "): %s, %s, %s blocks outside, the register tile inside\n", U, V, Rn);
	ct_buf_printf(w, "#   register tile %d x %d (unroll x vectorize): %d accumulators of %d-byte vectors cover the\n",
	              g->mr, g->nr, g->mr * g->nv, m->vector_bytes);
	ct_buf_printf(w, "#     FMA latency x units (%d x %d) within %d registers (+ %d vectors of %s's row, 1 broadcast);\n",
	              m->fma_latency, m->fma_units, m->registers, g->nv, V);
	ct_buf_printf(w, "#     %d FMAs per %d loads\n", g->mr * g->nv, g->mr + g->nv);
	if (g->l1_ways)
		ct_buf_printf(w, "#   %s from %lld: the %d x %lld row panel of the left operand, reused by every column panel,\n"
		                 "#     in L1: at most %lld, in %d of L1's %d ways (%lld KiB; (ways - 1) / 2: Low et al.), in even\n"
		                 "#     blocks of %s = %lld;\n",
		              g->p_kc, (long long)g->kc0, g->mr, (long long)g->kc0, (long long)g->kc_l1, g->l1_ways,
		              m->cache_ways[0], (long long)(cache_bytes(m, 0) >> 10), Rn, (long long)n->trip[g->r]);
	else
		ct_buf_printf(w, "#   %s from %lld: the %d x %lld row panel of the left operand, reused by every column panel,\n"
		                 "#     in L1: at most %lld, in half of L1 (%lld KiB; no associativity known), in even blocks\n"
		                 "#     of %s = %lld;\n",
		              g->p_kc, (long long)g->kc0, g->mr, (long long)g->kc0, (long long)g->kc_l1,
		              (long long)(cache_bytes(m, 0) >> 10), Rn, (long long)n->trip[g->r]);
	if (g->kc0 < g->kc_l1)
		ct_buf_printf(w, "#     %lld, not %lld: its block adds the fewest cycles per vector FMA (%s[..]'s tile\n"
		                 "#     loaded and stored per %s block, 2 / %s; the row panel copied per %s block, %d lanes\n"
		                 "#     / %s): %.4f, where %lld would give %.4f\n",
		              (long long)g->kc0, (long long)g->kc_l1, k->arrays[n->stmt->lhs->id].name, g->p_kc, g->p_kc,
		              g->p_nc, g->lanes, g->p_nc, gemm_block_overhead(g, g->kc0, g->nc0), (long long)g->kc_l1,
		              gemm_block_overhead(g, g->kc_l1, gemm_nc_for(m, n, g, g->kc_l1)));
	ct_buf_printf(w, "#     the %lld x %d micro-panels stream in order; %s[..]'s tile is loaded and stored once per block\n",
	              (long long)g->kc0, g->nr, k->arrays[n->stmt->lhs->id].name);
	ct_buf_printf(w, "#   %s from %lld: the %lld x %lld block of the right operand in half of L%d (%lld KiB) over the %d\n"
	                 "#     thread(s) sharing it (read again per %d-row panel: BLIS keeps such a block in L2), at most %s = %lld\n",
	              g->p_nc, (long long)g->nc0, (long long)g->kc0, (long long)g->nc0, g->nc_level + 1,
	              (long long)(cache_bytes(m, g->nc_level) >> 10), g->nc_sharers, g->mr, V, (long long)n->trip[g->v]);
	ct_buf_printf(w, "#   %s from %lld: the rows per thread (%s = %lld, %d thread(s)): the right block is packed once\n"
	                 "#     per %s rows, the left row panels per %d rows\n",
	              g->p_mc, (long long)g->mc0, U, (long long)n->trip[g->u], m->threads, g->p_mc, g->mr);
	ct_buf_printf(w, "#   %s = %lld, %s = %lld, %s = %lld as derived (the model's fixed cost per miss would charge\n"
	                 "#     the prefetched reads of the packed panels a full latency: its neighbours are not taken;\n"
	                 "#     %s)",
	              g->p_kc, (long long)g->kc, g->p_nc, (long long)g->nc, g->p_mc, (long long)g->mc,
	              c->ntune > 0 ? "the tune lists are for cachet tune and --budget"
	                           : "no tune lists: the file's earlier nests have as many as cachet tune and the selector take");
	if (nl < 0)
		ct_buf_puts(w, "; no model count at these sizes (over its work budget)\n");
	else {
		if (!R->nest_head)
			ct_buf_puts(w, "; the whole file's predicted misses (the nests after this one as written)");
		else if (R->nest_others > 0)
			ct_buf_printf(w,
			              "; predicted misses of this nest and %d more (the first writers of its temps and of\n"
			              "#     the outputs, the other nests of its temps; cold caches)",
			              R->nest_others);
		else
			ct_buf_puts(w, "; this nest's predicted misses (cold caches)");
		for (int l = 0; l < nl; l++)
			ct_buf_printf(w, " L%d %lld", l + 1, (long long)miss[l]);
		ct_buf_puts(w, "\n");
	}
	if (g->pack && n->acc[g->left].array == n->acc[g->right].array)
		ct_buf_printf(w, "#   %s packed (a cache) for the vector side: its %lld x %d panels laid out with %s contiguous\n",
		              k->arrays[n->acc[g->right].array].name, (long long)g->kc, g->nr, V);
	else if (g->pack)
		ct_buf_printf(w, "#   %s and %s packed (caches): the %lld x %d panels of %s read %lld times per block, each\n"
		                 "#     %s row panel once per %d rows, laid out so the register tile reads them in order\n",
		              k->arrays[n->acc[g->right].array].name, k->arrays[n->acc[g->left].array].name,
		              (long long)g->kc, g->nr, k->arrays[n->acc[g->right].array].name,
		              (long long)((g->mc + g->mr - 1) / g->mr), k->arrays[n->acc[g->left].array].name, g->mr);
	if (parallel)
		ct_buf_printf(w, "#   parallelize(%s, %s): the blocks of %s and %s on %d threads (no dependence between them)\n",
		              U, V, U, V, m->threads);
	else if (m->threads == 1)
		ct_buf_puts(w, "#   one thread: no parallel loop\n");
	else if (n->work < (int64_t)AUTO_MIN_PAR_WORK * m->threads)
		ct_buf_printf(w, "#   not parallel: %lld iterations are too few for %d threads (a parallel region costs more)\n",
		              (long long)n->work, m->threads);
	else
		ct_buf_printf(w, "#   not parallel: a block loop carries a dependence\n");
}

/* Whether the register-tiled nest's parallel block loops (of u and v, when
 * parallel) and its vector loop (the inner part of v) carry no dependence.
 * Asked of the untiled nest in the order (others, u, v, r), which is
 * cheaper than the tiled tree's many versions and says as much: u carrying
 * nothing there means no two dependent instances differ in u under the
 * same outer values, so neither do blocks of u; v carrying nothing means
 * none differ in v alone, so neither do its blocks nor its vector lanes. */
static bool gemm_loops_free(auto_run *R, const auto_nest *n, const auto_gemm *g, bool parallel)
{
	const ct_kernel *k = R->k;
	auto_choice p;
	choice_init(&p);
	ct_buf_puts(&p.sched, "  reorder(");
	int cnt = 0;
	for (int i = 0; i < n->nband; i++) {
		int b = n->order[i];
		if (b != g->u && b != g->v && b != g->r)
			ct_buf_printf(&p.sched, "%s%s", cnt++ ? ", " : "", iname(k, n, b));
	}
	ct_buf_printf(&p.sched, "%s%s, %s, %s)\n", cnt ? ", " : "", iname(k, n, g->u), iname(k, n, g->v),
	              iname(k, n, g->r));
	const char *par[2] = {iname(k, n, g->u), iname(k, n, g->v)}, *vec[1] = {iname(k, n, g->v)};
	char err[512];
	bool ok = candidate_ok(R, &p, par, parallel ? 2 : 0, vec, 1, err, sizeof err);
	choice_free(&p);
	return ok;
}

/* Try the register-tiled plan of a gemm-shaped nest; true when accepted. */
static bool try_gemm(auto_run *R, const auto_nest *n)
{
	auto_gemm g;
	if (!gemm_shape(R->k, &R->m, n, &g))
		return false;
	bool can_pack = packable(R->k, n, g.left) && packable(R->k, n, g.right);
	g.pack = can_pack; /* the blocks are for the packed variants, tried first */
	gemm_blocks(&R->m, n, &g);
	/* The derived blocks stand; the model gives their misses for the comment.
	 * It does not choose among their neighbours: it charges every miss a
	 * fixed latency, also the in-order reads of the packed panels that the
	 * hardware prefetches while the FMAs run, so it preferred smaller blocks
	 * that measured slower (dgemm at 1024 on Zen 4: KC 128, NC 512 took
	 * 68 ms where the derived KC 256, NC 1024 took 60 and the hand plan 63).
	 * `cachet tune` and --budget measure the tune lists instead. */
	int64_t bmiss[CT_SIM_MAX_LEVELS] = {0};
	int bnl = -1;
	if (R->evals < AUTO_MAX_EVALS) {
		R->evals++;
		auto_choice c;
		choice_init(&c);
		auto_names keep = R->names;
		const char *par[2], *vec[1], *unr;
		auto_gemm h = g; /* its names given back with keep */
		gemm_choice(R, n, &h, &c, par, vec, &unr);
		R->names = keep;
		char *txt = with_items(R, &c, R->nest_head != NULL);
		ct_ctx *cx = NULL;
		ct_kernel *t = trial_parse_as(R->tctx, R->k, txt, &cx, NULL, 0, true);
		free(txt);
		int nl = 0;
		if (t && model_cost(R, t, bmiss, &nl) >= 0)
			bnl = nl;
		ct_kernel_free(t);
		ct_ctx_free(cx);
		choice_free(&c);
	}
	for (int variant = can_pack ? 0 : 2; variant < 4; variant++) {
		int withpar = !(variant & 1) && worth_threads(R, n->work);
		g.pack = variant < 2;
		auto_choice c;
		choice_init(&c);
		auto_names keep = R->names;
		const char *par[2], *vec[1], *unr;
		gemm_choice(R, n, &g, &c, par, vec, &unr);
		if (withpar && R->m.threads > 1)
			ct_buf_printf(&c.plan, "  parallelize(%s, %s)\n", par[0], par[1]);
		char err[512];
		bool parallel = withpar && R->m.threads > 1;
		if (candidate_ok(R, &c, NULL, 0, NULL, 0, err, sizeof err) &&
		    gemm_loops_free(R, n, &g, parallel)) {
			gemm_why(R, n, &g, &c, parallel, bmiss, bnl);
			accept(R, &c);
			choice_free(&c);
			R->tiled++;
			R->parallel += parallel;
			R->vector++;
			return true;
		}
		R->names = keep;
		choice_free(&c);
	}
	return false;
}

/* Innermost loops (no loop inside) of the nest's statements: the
 * candidates for vectorize; one index each. */
static bool has_for(const ir_node *x)
{
	for (int i = 0; i < x->nbody; i++)
		if (x->body[i]->kind == ND_FOR || has_for(x->body[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (x->els[i]->kind == ND_FOR || has_for(x->els[i]))
			return true;
	return false;
}

static int leaf_loops(const ir_node *x, const ir_node **out, int n, int cap)
{
	if (x->kind != ND_FOR && x->kind != ND_IF)
		return n;
	if (x->kind == ND_FOR && !has_for(x)) {
		if (n < cap)
			out[n++] = x;
		return n;
	}
	for (int i = 0; i < x->nbody; i++)
		n = leaf_loops(x->body[i], out, n, cap);
	for (int i = 0; i < x->nels; i++)
		n = leaf_loops(x->els[i], out, n, cap);
	return n;
}

/* The innermost loop (its index's name) of the nest's first version under
 * the accepted schedule: root `nest` of the scheduled tree. NULL if unknown. */
static const char *scheduled_innermost(auto_run *R, int nest, char *out, size_t n)
{
	char *txt = with_choice(R, NULL);
	ct_ctx *cx = NULL;
	ct_kernel *t = trial_parse(R->tctx, R->k, txt, &cx, NULL, 0);
	free(txt);
	ct_looptree *tree = t ? lt_build_loops(t, true) : NULL;
	const char *res = NULL;
	int seen = -1;
	for (int r = 0; tree && r < tree->nroots && !res; r++) {
		const lt_node *x = tree->roots[r];
		if (x->kind != LT_LOOP || ++seen != nest)
			continue;
		for (bool more = true; more;) {
			more = false;
			for (int i = 0; i < x->nkids; i++)
				if (x->kids[i]->kind == LT_LOOP) {
					x = x->kids[i];
					more = true;
					break;
				}
		}
		snprintf(out, n, "%s", tree->indices[x->index].name);
		res = out;
	}
	ct_looptree_free(tree);
	ct_kernel_free(t);
	ct_ctx_free(cx);
	return res;
}

/* ------------------------------------------------------------ inner bands and thread blocks of a vector loop */

/* The perfect bands below a nest's own band (lu's `for (j2) { for (k2) }`
 * inside its row loop) that auto reordered: their top node and their
 * outermost and innermost loops after the reorder. */
#define AUTO_MAX_INNER 16
typedef struct auto_inner {
	int n;
	const ir_node *top[AUTO_MAX_INNER];
	int outer[AUTO_MAX_INNER];   /* index id of the outermost loop now */
	int inner[AUTO_MAX_INNER];   /* index id of the innermost loop now */
	int64_t trip[AUTO_MAX_INNER];  /* of the innermost loop */
	char line[AUTO_MAX_INNER][256];  /* its reorder item */
	bool split[AUTO_MAX_INNER];  /* its innermost loop split into thread blocks (split_inner) */
} auto_inner;

/* The outermost loop (index id) of the nest headed by for y: its own
 * unless auto reordered its band. */
static int inner_outer(const auto_inner *in, const ir_node *y)
{
	for (int i = 0; in && i < in->n; i++)
		if (in->top[i] == y)
			return in->outer[i];
	return y->idx[0];
}

/* The nodes from root down to x (root first) into path; their count, 0
 * when x is not under root. */
static int node_path(const ir_node *root, const ir_node *x, const ir_node **path, int depth, int cap)
{
	if (depth >= cap)
		return 0;
	path[depth] = root;
	if (root == x)
		return depth + 1;
	for (int i = 0; i < root->nbody; i++) {
		int d = node_path(root->body[i], x, path, depth + 1, cap);
		if (d)
			return d;
	}
	for (int i = 0; i < root->nels; i++) {
		int d = node_path(root->els[i], x, path, depth + 1, cap);
		if (d)
			return d;
	}
	return 0;
}

/* err cut at its first line (a diagnostic's source line and caret would
 * leave the comment). */
static const char *first_line(char *err)
{
	char *nl = strchr(err, '\n');
	if (nl)
		*nl = '\0';
	return err;
}

/* Whether a loop of for x is written with a step (a tile loop written by
 * hand: LoopCost counts its subscripts per unit, not per step). */
static bool stepped(const ct_kernel *k, const ir_node *x)
{
	for (int i = 0; i < x->nidx; i++)
		if (ir_index_src_step(&k->indices[x->idx[i]]) != 1)
			return true;
	return false;
}

/* The top of the perfect band that ends at leaf loop x (a chain of fors
 * each the only child of the one above) below the band of nest n; NULL
 * when x is in n's band, not under it, or a loop of the band is written
 * with a step (tiled by hand: its order is the user's). */
static const ir_node *inner_band_top(const ct_kernel *k, const auto_nest *n, const ir_node *x)
{
	const ir_node *path[64];
	int d = node_path(n->top, x, path, 0, 64);
	if (d < 2 || band_pos(n, x->idx[0]) >= 0 || stepped(k, x))
		return NULL;
	int t = d - 1;
	while (t > 0 && path[t - 1]->kind == ND_FOR && path[t - 1]->nbody == 1 && band_pos(n, path[t - 1]->idx[0]) < 0) {
		t--;
		if (stepped(k, path[t]))
			return NULL;
	}
	return path[t];
}

/* Each perfect band of two or more loops below nest n's band (its leaf
 * loops' bands) in the order by reuse (LoopCost), when the schedule check
 * accepts it: its innermost loop is then the vector candidate. Into in. */
static void inner_reorders(auto_run *R, const auto_nest *n, auto_choice *c, auto_inner *in)
{
	const ct_kernel *k = R->k;
	const ir_node *leaves[32];
	int nl = leaf_loops(n->top, leaves, 0, 32);
	for (int i = 0; i < nl && in->n < AUTO_MAX_INNER; i++) {
		const ir_node *y = inner_band_top(k, n, leaves[i]);
		if (!y)
			continue;
		auto_nest *b = calloc(1, sizeof *b);
		if (!b)
			return;
		nest_init(k, R->pv, &R->m, y, b);
		bool same = true;
		for (int j = 0; j < b->nband; j++)
			same = same && b->order[j] == j;
		/* only for a vector loop: the new innermost moves what the band writes, unit stride */
		int v = b->order[b->nband - 1];
		bool unit = b->nacc > 0;
		for (int a = 0; a < b->nacc && unit; a++)
			unit = (b->acc[a].stride[v] == 0 || b->acc[a].stride[v] == 1) && (!b->acc[a].write || b->acc[a].stride[v] != 0);
		if (b->nband < 2 || same || !unit) {
			free(b);
			continue;
		}
		auto_choice p = *c;
		ct_buf sc;
		ct_buf_init(&sc);
		ct_buf_puts(&sc, c->sched.s ? c->sched.s : "");
		size_t at = sc.len;
		ct_buf_puts(&sc, "  reorder(");
		put_order(&sc, k, b);
		ct_buf_puts(&sc, ")\n");
		p.sched = sc;
		char err[512];
		if (candidate_ok(R, &p, NULL, 0, NULL, 0, err, sizeof err)) {
			ct_buf_free(&c->sched);
			c->sched = sc;
			ct_buf_printf(&c->why, "#   inner band at line %d: order ", y->pos.line);
			put_order(&c->why, k, b);
			ct_buf_puts(&c->why, " from reuse (LoopCost, lines per iteration: ");
			put_costs(&c->why, k, b);
			ct_buf_puts(&c->why, ")\n");
			in->top[in->n] = y;
			in->outer[in->n] = b->band[b->order[0]];
			in->inner[in->n] = b->band[b->order[b->nband - 1]];
			in->trip[in->n] = b->trip[b->order[b->nband - 1]];
			snprintf(in->line[in->n], sizeof in->line[in->n], "%s", c->sched.s + at);
			in->n++;
		} else {
			ct_buf_free(&sc);
			ct_buf_printf(&c->why, "#   inner band at line %d: as written, not in the order by reuse: %s\n", y->pos.line,
			              first_line(err));
		}
		free(b);
	}
}

/* The innermost loop (index id) of leaf x after the inner reorders, or -1. */
static int inner_leaf(const ct_kernel *k, const auto_nest *n, const auto_inner *in, const ir_node *x)
{
	const ir_node *y = inner_band_top(k, n, x);
	for (int i = 0; y && i < in->n; i++)
		if (in->top[i] == y)
			return in->inner[i];
	return -1;
}

/* Thread blocks of loop x: schedule sc (taken: freed or kept in c) plus `parallelize(x)` and
 * `vectorize(xv)` on c's plan, checked as a candidate (x and xv carry nothing: the sum stays
 * in its thread, in order). On success c's schedule and plan are replaced; on failure the
 * names are put back to keep and c's comment says why. */
static bool take_blocks(auto_run *R, auto_choice *c, ct_buf *sc, const char *x, const char *xv,
                        const auto_names *keep)
{
	ct_buf pl;
	ct_buf_init(&pl);
	ct_buf_puts(&pl, c->plan.s ? c->plan.s : "");
	ct_buf_printf(&pl, "  parallelize(%s)\n  vectorize(%s)\n", x, xv);
	auto_choice p = *c;
	p.sched = *sc;
	p.plan = pl;
	char err[512];
	if (!candidate_ok(R, &p, &x, 1, &xv, 1, err, sizeof err)) {
		ct_buf_free(sc);
		ct_buf_free(&pl);
		R->names = *keep;
		ct_buf_printf(&c->why, "#   no thread blocks of %s: %s\n", x, first_line(err));
		return false;
	}
	ct_buf_free(&c->sched);
	ct_buf_free(&c->plan);
	c->sched = *sc;
	c->plan = pl;
	return true;
}

/* Inner band j of in (below a carrying loop, its outermost loop now
 * carrying too, as lu's (k2, j2) under i): its innermost loop v in one
 * block per thread, the block loop outermost and parallel, each block a
 * vector loop (a region per iteration of the loops around it, so only
 * for work that pays for one, as parallel_inside). True when taken. */
static bool split_inner(auto_run *R, auto_choice *c, auto_inner *in, int j)
{
	const ct_kernel *k = R->k;
	const ir_node *y = in->top[j];
	int elt = 8;
	for (int i = 0; i < y->nbody; i++)
		if (y->body[i]->kind == ND_STMT)
			elt = (int)ct_dtype_size(k->arrays[y->body[i]->lhs->id].type);
	int64_t lanes = R->m.vector_bytes / elt;
	if (lanes < 2 || in->trip[j] < 2 * lanes * R->m.threads || !c->sched.s || !strstr(c->sched.s, in->line[j]))
		return false;
	int64_t ch = round_up((in->trip[j] + R->m.threads - 1) / R->m.threads, lanes);
	const char *x = k->indices[in->inner[j]].name;
	auto_names keep = R->names;
	const char *xv = fresh(k, &R->names, x, "v");
	/* the band's reorder item, with x's block loop first and its lanes last */
	char ord[256] = "";
	const char *l = in->line[j] + strlen("  reorder("), *e = strrchr(l, ')');
	int nl = e ? (int)(e - l) : 0;
	int xl = (int)strlen(x);
	snprintf(ord, sizeof ord, "%s", x);
	for (const char *p = l; p < l + nl;) {
		const char *q = memchr(p, ',', (size_t)(l + nl - p));
		int len = (int)((q ? q : l + nl) - p);
		if (!(len == xl && !strncmp(p, x, (size_t)xl)))
			snprintf(ord + strlen(ord), sizeof ord - strlen(ord), ", %.*s", len, p);
		p = q ? q + 2 : l + nl;
	}
	snprintf(ord + strlen(ord), sizeof ord - strlen(ord), ", %s", xv);
	const char *at = strstr(c->sched.s, in->line[j]);
	ct_buf sc;
	ct_buf_init(&sc);
	ct_buf_printf(&sc, "%.*s  %s = split(%s, %lld)\n  reorder(%s)\n%s", (int)(at - c->sched.s), c->sched.s, xv, x,
	              (long long)ch, ord, at + strlen(in->line[j]));
	if (!take_blocks(R, c, &sc, x, xv, &keep))
		return false;
	ct_buf_printf(&c->why,
	              "#   %s = split(%s, %lld), reorder(%s) inside it: one block of %s per thread (%lld\n"
	              "#     iterations on average over %d threads, whole %lld-lane vectors), the block loop\n"
	              "#     outermost; parallelize(%s), vectorize(%s) inside each block\n",
	              xv, x, (long long)ch, ord, x, (long long)in->trip[j], R->m.threads, (long long)lanes, x, xv);
	in->split[j] = true;
	R->parallel++;
	R->vector++;
	return true;
}

/* A perfect band whose outermost loop carries (a sum's loop moved out, as
 * the transposed matrix-vector sum's i2 in (i2, j2)) and whose innermost
 * loop v does not: v in one block per thread, the block loop outermost
 * and parallel, each block a vector loop (`vv = split(v, ch)`,
 * `reorder(v, .., vv)`, `parallelize(v)`, `vectorize(vv)`): one parallel
 * region, and each element's updates stay in order in its thread. c's
 * schedule (the band's reorder, if any) is replaced. True when taken. */
static bool split_par(auto_run *R, const auto_nest *n, auto_choice *c, bool reordered, const char *carrier)
{
	const ct_kernel *k = R->k;
	if (n->nband < 2 || has_for(n->inner) || R->m.threads < 2 || !worth_threads(R, n->work))
		return false;
	int vp = reordered ? n->order[n->nband - 1] : n->nband - 1;
	int elt = 8;
	for (int a = 0; a < n->nacc; a++)
		if (n->acc[a].write)
			elt = (int)ct_dtype_size(k->arrays[n->acc[a].array].type);
	int64_t lanes = R->m.vector_bytes / elt;
	if (lanes < 2 || n->trip[vp] < 2 * lanes * R->m.threads)
		return false;
	int64_t ch = round_up((n->trip[vp] + R->m.threads - 1) / R->m.threads, lanes);
	const char *x = iname(k, n, vp);
	auto_names keep = R->names;
	const char *xv = fresh(k, &R->names, x, "v");
	ct_buf sc, ord;
	ct_buf_init(&sc);
	ct_buf_init(&ord);
	ct_buf_puts(&ord, x);
	for (int i = 0; i < n->nband; i++) {
		int b = reordered ? n->order[i] : i;
		if (b != vp)
			ct_buf_printf(&ord, ", %s", iname(k, n, b));
	}
	ct_buf_printf(&ord, ", %s", xv);
	ct_buf_printf(&sc, "  %s = split(%s, %lld)\n  reorder(%s)\n", xv, x, (long long)ch, ord.s);
	if (!take_blocks(R, c, &sc, x, xv, &keep)) {
		ct_buf_free(&ord);
		return false;
	}
	ct_buf_printf(&c->why,
	              "#   %s = split(%s, %lld), reorder(%s): %s carries, %s does not: one block of %s per\n"
	              "#     thread (%lld iterations over %d threads, whole %lld-lane vectors), the block loop\n"
	              "#     outermost; parallelize(%s), vectorize(%s) inside each block (each element's updates\n"
	              "#     stay in order, in one thread)\n",
	              xv, x, (long long)ch, ord.s, carrier, x, x, (long long)n->trip[vp], R->m.threads, (long long)lanes,
	              x, xv);
	ct_buf_free(&ord);
	R->parallel++;
	R->vector++;
	return true;
}

/* The outermost loop carries (a time loop around stencil sweeps): each
 * nest inside the band's innermost loop gets its outermost loop on the
 * threads where that carries nothing (one parallel region per sweep). */
static void parallel_inside(auto_run *R, const auto_nest *n, auto_choice *c, auto_inner *in)
{
	const ct_kernel *k = R->k;
	const ir_node *x = n->inner;
	for (int i = 0; x && i < x->nbody; i++) {
		const ir_node *y = x->body[i];
		if (y->kind != ND_FOR)
			continue;
		int yid = inner_outer(in, y);
		int64_t work = node_work(k, R->pv, y);
		if (work < (int64_t)AUTO_MIN_INNER_PAR_WORK * R->m.threads) {
			ct_buf_printf(&c->why,
			              "#   %s not parallel: %lld iterations per sweep are too few for %d threads (a region "
			              "starts every sweep)\n",
			              k->indices[yid].name, (long long)work, R->m.threads);
			continue;
		}
		const char *v = k->indices[yid].name;
		auto_choice p = *c;
		ct_buf pl;
		ct_buf_init(&pl);
		ct_buf_puts(&pl, c->plan.s ? c->plan.s : "");
		bool uneven = bounds_use_index(k, yid);
		ct_buf_printf(&pl, "  parallelize(%s%s)\n", v, uneven ? ", policy=dynamic" : "");
		p.plan = pl;
		char err[512];
		if (candidate_ok(R, &p, &v, 1, NULL, 0, err, sizeof err)) {
			ct_buf_free(&c->plan);
			c->plan = pl;
			ct_buf_printf(&c->why, "#   parallelize(%s) inside it: its iterations are independent; %d threads%s\n", v,
			              R->m.threads, uneven ? UNEVEN_NOTE : "");
			R->parallel++;
		} else {
			ct_buf_free(&pl);
			ct_buf_printf(&c->why, "#   %s not parallel: %s\n", v, err);
			for (int j = 0; in && j < in->n; j++)
				if (in->top[j] == y)
					split_inner(R, c, in, j);
		}
	}
}

static void try_nontemporal(auto_run *R, const auto_nest *n, const ir_node *x, const char *v, auto_choice *c);

/* A band of one loop with nothing inside, parallel: blocks of it on the
 * threads and each block one vector loop (split to the thread count,
 * rounded to whole vectors). True when taken. */
static bool split_1d(auto_run *R, const auto_nest *n, auto_choice *c, bool parallel)
{
	const ct_kernel *k = R->k;
	if (n->nband != 1 || has_for(n->top) || !parallel || R->m.threads < 2)
		return false;
	int elt = 8;
	for (int a = 0; a < n->nacc; a++)
		if (n->acc[a].write)
			elt = (int)ct_dtype_size(k->arrays[n->acc[a].array].type);
	int64_t lanes = R->m.vector_bytes / elt;
	if (lanes < 2 || n->trip[0] < 2 * lanes * R->m.threads)
		return false;
	int64_t ch = round_up((n->trip[0] + R->m.threads - 1) / R->m.threads, lanes);
	const char *x = iname(k, n, 0);
	auto_names keep = R->names;
	const char *xv = fresh(k, &R->names, x, "v");
	auto_choice p = *c;
	ct_buf sc, pl;
	ct_buf_init(&sc);
	ct_buf_init(&pl);
	ct_buf_puts(&sc, c->sched.s ? c->sched.s : "");
	ct_buf_printf(&sc, "  %s = split(%s, %lld)\n", xv, x, (long long)ch);
	ct_buf_puts(&pl, c->plan.s ? c->plan.s : "");
	ct_buf_printf(&pl, "  vectorize(%s)\n", xv);
	p.sched = sc;
	p.plan = pl;
	char err[512];
	if (!candidate_ok(R, &p, NULL, 0, &xv, 1, err, sizeof err)) {
		ct_buf_free(&sc);
		ct_buf_free(&pl);
		R->names = keep;
		return false;
	}
	ct_buf_free(&c->sched);
	ct_buf_free(&c->plan);
	c->sched = sc;
	c->plan = pl;
	ct_buf_printf(&c->why, "#   %s = split(%s, %lld): one block per thread (%lld iterations over %d threads, whole\n"
	                       "#     %lld-lane vectors); vectorize(%s) inside each block\n",
	              xv, x, (long long)ch, (long long)n->trip[0], R->m.threads, (long long)lanes, xv);
	try_nontemporal(R, n, n->top, xv, c);
	R->vector++;
	return true;
}


/* Bytes of array a at the kernel's sizes (0: unknown). */
static int64_t array_bytes(const ct_kernel *k, const int64_t *pv, int a)
{
	const ir_array *ar = &k->arrays[a];
	int64_t b = (int64_t)ct_dtype_size(ar->type);
	for (int d = 0; d < ar->rank; d++) {
		bool ok = true;
		int64_t e = aff_eval(ar->ext[d], pv, NULL, &ok);
		if (!ok || e <= 0 || b > INT64_MAX / e)
			return 0;
		b *= e;
	}
	return b;
}

/* The store's key for the last level's usable size: "usable reported seconds-since-1970". */
#define LLC_FACT "fact.llc_usable"
/* Kept this long: a neighbour's load can shrink a measurement, and a later one corrects it. */
#define LLC_FACT_SECONDS (7 * 24 * 3600)

/* Whether store s keeps a usable size for a last level of this reported size, measured in
 * the last LLC_FACT_SECONDS (then *usable gets it): the measurement varies between runs on
 * a loaded guest, and a choice made from it would make the same input give another file. */
static bool llc_kept(ct_store *s, int64_t reported, int64_t *usable)
{
	char v[96];
	long long u, r, when;
	if (!tune_store_fact_get(s, LLC_FACT, v, sizeof v) || sscanf(v, "%lld %lld %lld", &u, &r, &when) != 3)
		return false;
	long long age = (long long)time(NULL) - when;
	if (r != reported || u <= 0 || u > r || age < 0 || age > LLC_FACT_SECONDS)
		return false;
	*usable = u;
	return true;
}

/* The last level's size for a choice between "fits" and "does not fit" a
 * total of bytes. Where the answer turns on the last level (total above the
 * level below it, within the reported size) and the levels are the probe's,
 * the probe first measures the level's usable size (CT_PROBE_MEASURE_CAPACITY,
 * 0.2-0.6 s, once per ctx): a virtual machine may report far more than a core
 * can use (508 MiB of L3 on a KVM guest of a Zen 5 host, where 32 MiB already
 * runs at memory latency), and the choice would then keep a 64 MiB output in
 * a cache it does not fit. The measurement is a machine fact like the
 * reported sizes: the header comment gives both, and the per-device store
 * keeps it for a week (llc_kept), so that the next run reads it. */
static int64_t llc_for(auto_run *R, int64_t total)
{
	auto_machine *m = &R->m;
	int last = m->ncaches - 1;
	if (last < 1 || m->from_spec || m->llc_checked || total <= m->cache_size[last - 1] ||
	    total > m->cache_size[last])
		return m->cache_size[last];
	m->llc_checked = true;
	int64_t reported = m->cache_size[last], usable = 0;
	ct_store *s = ct_store_open(R->k->ctx, R->o->store_dir, CT_STORE_QUIET);
	if (!llc_kept(s, reported, &usable)) {
		const ct_probe_info *pi = NULL;
		if (ct_probe_run(R->k->ctx, CT_PROBE_MEASURE_CAPACITY, NULL) == CT_OK)
			pi = target_get(R->k->ctx);
		if (pi && pi->ncaches == m->ncaches && pi->caches[last].size > 0) {
			usable = pi->caches[last].size < reported ? pi->caches[last].size : reported;
			char v[96];
			snprintf(v, sizeof v, "%lld %lld %lld", (long long)usable, (long long)reported,
			         (long long)time(NULL));
			tune_store_fact_put(s, LLC_FACT, v); /* a store that cannot keep it: measured next run too */
		}
	}
	ct_store_close(s);
	if (usable > 0 && usable < reported) {
		m->llc_reported = reported;
		m->cache_size[last] = usable;
	}
	return m->cache_size[last];
}

/* Whether a top-level node of k other than nest top accesses array a: the
 * plan refuses streaming stores to an array the kernel reads anywhere, and
 * candidate_ok checks a nest with only the nests its questions need
 * (covariance's `cov[a, b] = 0`, distributed from the sum that reads it:
 * the whole file then did not check). */
static bool used_by_other_nest(const ct_kernel *k, const ir_node *top, int a)
{
	for (int j = 0; j < k->nbody; j++) {
		const ir_expr *acc[1];
		if (k->body[j] != top && accesses_of(k->body[j], a, acc, 0, 1) > 0)
			return true;
	}
	return false;
}

/* Whether the vector loop x (a leaf of nest n) should store with streaming
 * stores (vectorize(.., nontemporal=true), docs/PLANS.md section 15): every
 * array it writes is an output the nest does not read (the plan's check
 * says whether the kernel reads it anywhere), and together they are larger
 * than the last-level cache, so their lines would be evicted unread before
 * the kernel ends: stored through the cache, each line is first read from
 * memory (read for ownership) and later written back. why gets the sizes. */
static bool wants_nontemporal(auto_run *R, const auto_nest *n, const ir_node *x, char *why, size_t nwhy)
{
	const ct_kernel *k = R->k;
	const auto_machine *m = &R->m;
	int64_t total = 0;
	char names[128] = "";
	if (m->ncaches <= 0 || m->cache_size[m->ncaches - 1] <= 0)
		return false;
	for (int a = 0; a < k->narrays; a++) {
		if (!writes(x, a))
			continue;
		if (k->arrays[a].role != CT_OUTPUT)
			return false;
		for (int i = 0; i < n->nacc; i++)
			if (n->acc[i].array == a && !n->acc[i].write)
				return false;
		int64_t b = array_bytes(k, R->pv, a);
		if (b <= 0)
			return false;
		total += b;
		snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "", k->arrays[a].name);
	}
	int64_t llc = llc_for(R, total);
	if (total <= llc)
		return false;
	snprintf(why, nwhy, "%s written, never read, %lld MiB > the last-level cache (L%d, %lld MiB%s)", names,
	         (long long)(total >> 20), m->ncaches, (long long)(llc >> 20),
	         m->llc_reported > 0 ? " usable, as measured" : "");
	return true;
}

/* The accepted vector loop v (leaf x of nest n) in c's plan: with streaming
 * stores when wants_nontemporal says so and the plan's check accepts them;
 * the comment says which, and why. */
static void try_nontemporal(auto_run *R, const auto_nest *n, const ir_node *x, const char *v, auto_choice *c)
{
	char ntw[256];
	if (!wants_nontemporal(R, n, x, ntw, sizeof ntw))
		return;
	char users[128] = "";
	for (int a = 0; a < R->k->narrays; a++)
		if (writes(x, a) && used_by_other_nest(R->k, n->top, a))
			snprintf(users + strlen(users), sizeof users - strlen(users), "%s%s", users[0] ? ", " : "",
			         R->k->arrays[a].name);
	if (users[0]) {
		ct_buf_printf(&c->why, "#     no streaming stores (%s): another nest accesses %s\n", ntw, users);
		return;
	}
	char line[320];
	snprintf(line, sizeof line, "  vectorize(%s)\n", v);
	const char *at = c->plan.s ? strstr(c->plan.s, line) : NULL;
	if (!at)
		return;
	ct_buf nt;
	ct_buf_init(&nt);
	ct_buf_printf(&nt, "%.*s  vectorize(%s, nontemporal=true)\n%s", (int)(at - c->plan.s), c->plan.s, v,
	              at + strlen(line));
	auto_choice q = *c;
	q.plan = nt;
	char err[512];
	if (candidate_ok(R, &q, NULL, 0, &v, 1, err, sizeof err)) {
		ct_buf_free(&c->plan);
		c->plan = nt;
		ct_buf_printf(&c->why, "#     nontemporal=true (streaming stores): %s\n", ntw);
	} else {
		ct_buf_free(&nt);
		ct_buf_printf(&c->why, "#     no streaming stores (%s): %s\n", ntw, err);
	}
}

/* Order from reuse, vectorize what can be, parallelize the outermost loop that can be. */
/* Register tiles of inner bands (doitgen's sum after distribution, (s, p_1)
 * inside (r, q)): an inner band of two loops whose body is one update
 * `X[..] += ..` (or `-=`) that its outer loop does not move, its inner loop
 * v the vector loop of nv whole vectors, nv from 2 to the vector registers
 * less 4 (a row of the other operand, a broadcast, spare) and at most 64:
 * v is split into vectors (vv) and unrolled, so the C backend keeps the nv
 * vectors of X in registers over the outer loop (one row of a register
 * tile: each element of X loaded and stored once per sweep of the outer
 * loop instead of once per iteration). On c, checked as a candidate. */
/* An inner band's register tile as a candidate: c's schedule with its nl bytes at at_l (the
 * band's reorder item) replaced by sched_items, its plan with the vlen bytes at at_v (the
 * band's vectorize item) replaced by plan_items, checked with vector loop vv. True: c takes
 * them. False: c is as it was and its comment says why (the band at line `line`); the caller
 * gives back the names it made. */
static bool take_inner_tile(auto_run *R, auto_choice *c, const char *at_l, size_t nl, const char *sched_items,
                            const char *at_v, size_t vlen, const char *plan_items, const char *vv, int line)
{
	ct_buf sc, pl;
	ct_buf_init(&sc);
	ct_buf_init(&pl);
	for (const char *q = c->sched.s; q < at_l; q++)
		ct_buf_putc(&sc, *q);
	ct_buf_printf(&sc, "%s%s", sched_items, at_l + nl);
	for (const char *q = c->plan.s; q < at_v; q++)
		ct_buf_putc(&pl, *q);
	ct_buf_printf(&pl, "%s%s", plan_items, at_v + vlen);
	auto_choice p = *c;
	p.sched = sc;
	p.plan = pl;
	char err[512];
	if (!candidate_ok(R, &p, NULL, 0, &vv, 1, err, sizeof err)) {
		ct_buf_free(&sc);
		ct_buf_free(&pl);
		ct_buf_printf(&c->why, "#   inner band at line %d: no register tile: %s\n", line, first_line(err));
		return false;
	}
	ct_buf_free(&c->sched);
	ct_buf_free(&c->plan);
	c->sched = sc;
	c->plan = pl;
	return true;
}

static void inner_register_tiles(auto_run *R, auto_choice *c, const auto_inner *in)
{
	const ct_kernel *k = R->k;
	for (int j = 0; j < in->n; j++) {
		const ir_node *y = in->top[j], *leaf = y;
		int loops = y->nidx;
		while (leaf->nbody == 1 && leaf->body[0]->kind == ND_FOR) {
			leaf = leaf->body[0];
			loops += leaf->nidx;
		}
		const ir_node *st = leaf->nbody == 1 ? leaf->body[0] : NULL;
		if (in->split[j] || loops != 2 || !st || st->kind != ND_STMT || (st->op != AS_ADD && st->op != AS_SUB))
			continue;
		bool moves = false;
		for (int d = 0; d < k->arrays[st->lhs->id].rank; d++)
			moves = moves || aff_coef(st->lhs->sub[d], AFF_INDEX, in->outer[j]) != 0;
		int64_t lanes = R->m.vector_bytes / (int64_t)ct_dtype_size(k->arrays[st->lhs->id].type);
		int64_t nv = lanes > 0 ? in->trip[j] / lanes : 0;
		if (moves || lanes < 2 || in->trip[j] % lanes != 0 || nv < 2 || nv > 64 || nv > R->m.registers - 4 ||
		    bounds_use_index(k, in->inner[j]) || bounds_use_index(k, in->outer[j]))
			continue; /* (an affine loop's trip count is a mean) */
		const char *v = k->indices[in->inner[j]].name;
		char vec[AUTO_NAME_MAX + 16], par[AUTO_NAME_MAX + 16];
		snprintf(vec, sizeof vec, "  vectorize(%s)\n", v);
		snprintf(par, sizeof par, "parallelize(%s", v);
		const char *at_v = c->plan.s ? strstr(c->plan.s, vec) : NULL;
		const char *at_l = c->sched.s ? strstr(c->sched.s, in->line[j]) : NULL;
		size_t ll = strlen(in->line[j]);
		if (!at_v || !at_l || strstr(c->plan.s, par) || ll < 3 || strcmp(in->line[j] + ll - 2, ")\n") != 0)
			continue;
		auto_names keep = R->names;
		const char *vv = fresh(k, &R->names, v, "v");
		ct_buf si, pi;
		ct_buf_init(&si);
		ct_buf_init(&pi);
		ct_buf_printf(&si, "  %s = split(%s, %lld)\n%.*s, %s)\n", vv, v, (long long)lanes, (int)(ll - 2), in->line[j], vv);
		ct_buf_printf(&pi, "  unroll(%s)\n  vectorize(%s)\n", v, vv);
		bool took = take_inner_tile(R, c, at_l, ll, si.s, at_v, strlen(vec), pi.s, vv, y->pos.line);
		ct_buf_free(&si);
		ct_buf_free(&pi);
		if (!took) {
			R->names = keep;
			continue;
		}
		ct_buf_printf(&c->why,
		              "#   inner band at line %d: register tile of one row: %s in %lld vectors of %lld (%s =\n"
		              "#     split(%s, %lld), unroll(%s)), kept in %lld of the %d vector registers over %s\n",
		              y->pos.line, v, (long long)nv, (long long)lanes, vv, v, (long long)lanes, v, (long long)nv,
		              R->m.registers, k->indices[in->outer[j]].name);
	}
}

/* Inner bands of three loops whose body is a sum a register tile takes
 * (gemm_shape: doitgen's S[q, p] += A[r, q, s] * C4[s, p] inside r once
 * its temp is expanded): the tile of the nest's own band without its cache
 * tiles or packing, `ui = split(u, mr)`, `vv = split(v, nr)`,
 * `reorder(u, v, r, ui, vv)`, `unroll(ui)`, `vectorize(vv)`, in place of
 * the band's reorder and vector loop. */
static void inner_gemm_tiles(auto_run *R, auto_choice *c, const auto_inner *in)
{
	const ct_kernel *k = R->k;
	for (int j = 0; j < in->n; j++) {
		const ir_node *y = in->top[j], *leaf = y;
		int loops = y->nidx;
		while (leaf->nbody == 1 && leaf->body[0]->kind == ND_FOR) {
			leaf = leaf->body[0];
			loops += leaf->nidx;
		}
		if (in->split[j] || loops != 3)
			continue;
		auto_nest *b = calloc(1, sizeof *b);
		if (!b)
			return;
		nest_init(k, R->pv, &R->m, y, b);
		auto_gemm g;
		bool shape = gemm_shape(k, &R->m, b, &g) && b->band[g.v] == in->inner[j];
		for (int i = 0; shape && i < b->nband; i++)
			shape = !bounds_use_index(k, b->band[i]) && !ir_index_affine(&k->indices[b->band[i]]);
		const char *u = shape ? k->indices[b->band[g.u]].name : NULL;
		const char *v = shape ? k->indices[b->band[g.v]].name : NULL;
		const char *r = shape ? k->indices[b->band[g.r]].name : NULL;
		int64_t tu = shape ? b->trip[g.u] : 0;
		free(b);
		if (!shape)
			continue;
		char vec[AUTO_NAME_MAX + 16];
		snprintf(vec, sizeof vec, "  vectorize(%s)\n", v);
		const char *at_v = c->plan.s ? strstr(c->plan.s, vec) : NULL;
		const char *at_l = c->sched.s ? strstr(c->sched.s, in->line[j]) : NULL;
		if (!at_v || !at_l)
			continue;
		auto_names keep = R->names;
		const char *ui = fresh(k, &R->names, u, "i");
		const char *vv = fresh(k, &R->names, v, "v");
		ct_buf si, pi;
		ct_buf_init(&si);
		ct_buf_init(&pi);
		ct_buf_printf(&si, "  %s = split(%s, %d)\n  %s = split(%s, %d)\n  reorder(%s, %s, %s, %s, %s)\n", ui, u, g.mr, vv,
		              v, g.nr, u, v, r, ui, vv);
		ct_buf_printf(&pi, "  unroll(%s)\n  vectorize(%s)\n", ui, vv);
		bool took = take_inner_tile(R, c, at_l, strlen(in->line[j]), si.s, at_v, strlen(vec), pi.s, vv, y->pos.line);
		ct_buf_free(&si);
		ct_buf_free(&pi);
		if (!took) {
			R->names = keep;
			continue;
		}
		ct_buf_printf(&c->why,
		              "#   inner band at line %d: register tile %d x %d (%s x %s: %d rows of %d vectors of %d, from\n"
		              "#     the FMA latency x units and the %d vector registers, as a nest's own band), over %s;\n"
		              "#     no cache tiles or packing (an inner band's): its %lld rows are read in place\n",
		              y->pos.line, g.mr, g.nr, u, v, g.mr, g.nv, g.lanes, R->m.registers, r, (long long)tu);
	}
}

static bool rowfuse_parallel_kept(const char *keep, const char *name);

/* The elements of the arrays that statements under x sum into (`+=` /
 * `-=`) at an element that does not move with index id; false when some
 * size is unknown. */
static bool summed_elements(const ct_kernel *k, const int64_t *pv, const ir_node *x, int id, int64_t *elems,
                            int64_t *bytes)
{
	if (x->kind == ND_STMT && x->lhs && (x->op == AS_ADD || x->op == AS_SUB)) {
		bool moves = false;
		for (int d = 0; d < k->arrays[x->lhs->id].rank; d++)
			moves = moves || aff_coef(x->lhs->sub[d], AFF_INDEX, id) != 0;
		int64_t b = moves ? 0 : array_bytes(k, pv, x->lhs->id);
		if (!moves && b <= 0)
			return false;
		*elems += b / (int64_t)ct_dtype_size(k->arrays[x->lhs->id].type);
		*bytes += b;
	}
	for (int i = 0; i < x->nbody; i++)
		if (!summed_elements(k, pv, x->body[i], id, elems, bytes))
			return false;
	for (int i = 0; i < x->nels; i++)
		if (!summed_elements(k, pv, x->els[i], id, elems, bytes))
			return false;
	return true;
}

/* Whether the outermost loop (index id) of nest n, which carries, may run
 * on threads as a parallel reduction at a small cost: the threads' copies
 * of what it sums (zeroed, then added after the loop) are at most 1/16 of
 * the nest's statement executions, and one copy fits the second cache
 * level (a thread's sums stay near it: column sums, not a matrix). Measured against a per-thread block of
 * the vector loop (split_par) for `y[j] += A[i, j] * x[i]` on the 2-core VM,
 * 2 threads: N = 500 alike (45 us), 1000 158 against 172 us, 2000 1.7
 * against 2.7 ms, 4000 8.8 against 11.7 ms. Whether it does is the verb's
 * check (only sums carried), in candidate_ok's parse. */
static bool reduction_cheap(const auto_run *R, const auto_nest *n, int id)
{
	int64_t elems = 0, bytes = 0, copies;
	return summed_elements(R->k, R->pv, n->top, id, &elems, &bytes) && elems > 0 &&
	       ct_mul_ok(elems, 16 * (int64_t)R->m.threads, &copies) && copies <= n->work &&
	       R->m.ncaches > 0 && bytes <= cache_bytes(&R->m, R->m.ncaches > 1 ? 1 : 0);
}

/* Whether keep (space-separated words) holds the word mark followed by name ("^i_u"). */
static bool keep_marks(const char *keep, char mark, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = keep ? strchr(keep, mark) : NULL; p; p = strchr(p + 1, mark))
		if ((p == keep || p[-1] == ' ') && !strncmp(p + 1, name, n) && (p[n + 1] == ' ' || p[n + 1] == '\0'))
			return true;
	return false;
}

/* Whether keep marks loop name "^name": the rows of a jammed block (rowfuse_jam; unrolled,
 * "+name"), whose loop over the columns is the one to vectorize. */
static bool jam_unrolled(const char *keep, const char *name)
{
	return keep_marks(keep, '^', name);
}

static const ir_node *jam_column_loop(const ir_node *top, const ir_node *x);

/* jam_column_loop over the nodes v[0..n) (a body or an else branch). */
static const ir_node *jam_column_in(ir_node *const *v, int n, const ir_node *x)
{
	for (int i = 0; i < n; i++) {
		const ir_node *y = v[i];
		if (y == x)
			return NULL;
		if (y->kind == ND_FOR && y->nbody == 1 && y->body[0] == x)
			return y->nidx == 1 ? y : NULL;
		const ir_node *r = y->kind == ND_FOR || y->kind == ND_IF ? jam_column_loop(y, x) : NULL;
		if (r)
			return r;
	}
	return NULL;
}

/* The loop over the columns whose whole body is loop x (under top, not
 * top itself): the vector loop of a jammed block's rows; NULL when x is
 * not alone in such a loop (a row's statements in a block). */
static const ir_node *jam_column_loop(const ir_node *top, const ir_node *x)
{
	const ir_node *r = jam_column_in(top->body, top->nbody, x);
	return r ? r : jam_column_in(top->els, top->nels, x);
}

static void try_plain(auto_run *R, const auto_nest *n, int nest, bool reorder)
{
	const ct_kernel *k = R->k;
	auto_choice c;
	choice_init(&c);
	bool same = true;
	for (int i = 0; i < n->nband; i++)
		same = same && n->order[i] == i;
	bool do_reorder = reorder && !same && n->nband > 1;
	char err[512] = "";
	if (do_reorder) {
		ct_buf_puts(&c.sched, "  reorder(");
		put_order(&c.sched, k, n);
		ct_buf_puts(&c.sched, ")\n");
		if (!candidate_ok(R, &c, NULL, 0, NULL, 0, err, sizeof err)) {
			choice_free(&c);
			choice_init(&c);
			do_reorder = false;
		}
	}
	ct_buf_printf(&c.why, "# nest at line %d: loop order ", n->top->pos.line);
	if (do_reorder) {
		put_order(&c.why, k, n);
		ct_buf_puts(&c.why, " from reuse (LoopCost, lines per iteration: ");
		put_costs(&c.why, k, n);
		ct_buf_puts(&c.why, ")\n");
	} else if (reorder && !same && n->nband > 1) {
		ct_buf_puts(&c.why, "as written: the order by reuse (");
		put_order(&c.why, k, n);
		ct_buf_puts(&c.why, ") would break a dependence\n");
	} else
		ct_buf_puts(&c.why, reorder                ? "as written (already the order by reuse)\n"
		                    : R->at.has_sched ? "as the schedule says\n"
		                                      : "as auto rewrote it (fused sweeps or passes, a wavefront of rows:\n"
		                                        "#   a reorder would undo it)\n");
	auto_inner in;
	memset(&in, 0, sizeof in);
	if (reorder)
		inner_reorders(R, n, &c, &in);
	bool par_split = false;
	/* the outermost loop: its blocks to the threads */
	const char *outer = iname(k, n, do_reorder ? n->order[0] : 0);
	if (R->m.threads > 1 && !worth_threads(R, n->work))
		ct_buf_printf(&c.why, "#   not parallel: %lld iterations are too few for %d threads (a parallel region costs more)\n",
		              (long long)n->work, R->m.threads);
	else if (R->m.threads > 1 && n->trip[do_reorder ? n->order[0] : 0] > 1) {
		auto_choice p = c;
		ct_buf pl;
		ct_buf_init(&pl);
		ct_buf_puts(&pl, c.plan.s ? c.plan.s : "");
		bool uneven = bounds_use_index(k, n->band[do_reorder ? n->order[0] : 0]);
		ct_buf_printf(&pl, "  parallelize(%s%s)\n", outer, uneven ? ", policy=dynamic" : "");
		p.plan = pl;
		bool indep = candidate_ok(R, &p, &outer, 1, NULL, 0, err, sizeof err);
		/* a fused row loop that carries column sums: the verb takes them as a parallel reduction */
		char err2[512];
		bool sums = !indep &&
		            (rowfuse_parallel_kept(R->keep, outer) ||
		             (!R->at.has_sched && reduction_cheap(R, n, n->band[do_reorder ? n->order[0] : 0]))) &&
		            candidate_ok(R, &p, NULL, 0, NULL, 0, err2, sizeof err2);
		if (indep || sums) {
			char priv[256];
			private_note(R, &p, outer, priv, sizeof priv);
			ct_buf_free(&c.plan);
			c.plan = pl;
			ct_buf_printf(&c.why, "#   parallelize(%s): %s%s; %d threads%s\n", outer,
			              sums ? "it carries only sums, each thread's into its own copy (a parallel reduction)"
			                   : "its iterations are independent",
			              priv, R->m.threads, uneven ? UNEVEN_NOTE : "");
			R->parallel++;
		} else {
			ct_buf_free(&pl);
			ct_buf_printf(&c.why, "#   not parallel: %s\n", err);
			if (!R->at.has_sched) {
				parallel_inside(R, n, &c, &in);
				par_split = split_par(R, n, &c, do_reorder, outer);
			}
		}
	}
	bool split_done = reorder && split_1d(R, n, &c, strstr(c.plan.s ? c.plan.s : "", "parallelize(") != NULL);
	/* the innermost loops: vector loops when contiguous and independent */
	const ir_node *leaves[32];
	char vbuf[64];
	int nl = leaf_loops(n->top, leaves, 0, 32);
	for (int i = 0; i < nl; i++) {
		const ir_node *x = leaves[i];
		const char *v = k->indices[x->idx[x->nidx - 1]].name;
		if (x == n->top || (n->nband > 0 && band_pos(n, x->idx[x->nidx - 1]) >= 0)) {
			/* in the band: its innermost after the reorder */
			v = iname(k, n, do_reorder ? n->order[n->nband - 1] : n->nband - 1);
			if (!reorder && !(v = scheduled_innermost(R, nest, vbuf, sizeof vbuf)))
				continue;
		} else if (inner_leaf(k, n, &in, x) >= 0) {
			bool split = false;
			for (int j = 0; j < in.n; j++)
				split = split || (in.split[j] && in.top[j] == inner_band_top(k, n, x));
			if (split)
				continue;
			v = k->indices[inner_leaf(k, n, &in, x)].name;
		}
		if (jam_unrolled(R->keep, v)) {
			/* a jammed block's rows (unrolled): their loop over the columns is the vector loop */
			const ir_node *up = jam_column_loop(n->top, x);
			if (!up)
				continue;
			v = k->indices[up->idx[0]].name;
		}
		auto_choice p = c;
		ct_buf pl;
		ct_buf_init(&pl);
		ct_buf_puts(&pl, c.plan.s ? c.plan.s : "");
		ct_buf_printf(&pl, "  vectorize(%s)\n", v);
		p.plan = pl;
		bool seen = (split_done && x == n->top) || (par_split && x == n->inner);
		for (int j = 0; j < i; j++)
			seen = seen || !strcmp(k->indices[leaves[j]->idx[leaves[j]->nidx - 1]].name, v) ||
			       (band_pos(n, leaves[j]->idx[leaves[j]->nidx - 1]) >= 0 &&
			        band_pos(n, x->idx[x->nidx - 1]) >= 0);
		if (seen) {
			ct_buf_free(&pl);
			continue;
		}
		if (candidate_ok(R, &p, NULL, 0, &v, 1, err, sizeof err)) {
			ct_buf_free(&c.plan);
			c.plan = pl;
			if (vector_sums(R, &c, v))
				ct_buf_printf(&c.why,
				              "#   vectorize(%s): innermost, unit stride; the sum over it runs as partial sums per\n"
				              "#     lane, added after the loop (a re-association: docs/LANGUAGE.md, section 7)\n",
				              v);
			else
				ct_buf_printf(&c.why, "#   vectorize(%s): innermost, unit stride, no dependence across it\n", v);
			R->vector++;
			try_nontemporal(R, n, x, v, &c);
		} else {
			ct_buf_free(&pl);
			ct_buf_printf(&c.why, "#   %s not vectorized: %s\n", v, err);
		}
	}
	inner_register_tiles(R, &c, &in);
	inner_gemm_tiles(R, &c, &in);
	accept(R, &c);
	choice_free(&c);
}

/* One line of the header comment per machine fact the choices read. */
static void put_machine(ct_buf *b, const auto_run *R)
{
	const auto_machine *m = &R->m;
	/* target_get does not run the FMA microbenchmark (0.3 s, and a noisy count would make the
	 * file unstable): the units and latency are what the ISA implies, and the comment says so */
	ct_buf_printf(b,
	              "# machine: %d-byte vectors, %d vector registers, %d FMA/cycle of latency %d (the probe's "
	              "defaults for this ISA, not measured), %d thread(s)\n",
	              m->vector_bytes, m->registers, m->fma_units, m->fma_latency, m->threads);
	ct_buf_puts(b, "#   caches:");
	for (int i = 0; i < m->ncaches; i++) {
		ct_buf_printf(b, " L%d %lld KiB", i + 1, (long long)(m->cache_size[i] >> 10));
		if (i + 1 == m->ncaches && m->llc_reported > 0)
			ct_buf_printf(b, " usable (measured; %lld KiB reported)", (long long)(m->llc_reported >> 10));
		ct_buf_printf(b, " %d-way%s", m->cache_ways[i], i + 1 < m->ncaches ? "," : "\n");
	}
	ct_buf_puts(b, "#   sizes:");
	bool any = false;
	for (int i = 0; i < R->k->nparams; i++)
		if (tune_is_size_param(R->k, i)) {
			ct_buf_printf(b, " %s=%lld", R->k->params[i].name, (long long)R->pv[i]);
			any = true;
		}
	ct_buf_puts(b, any ? "\n" : " none\n");
}

/* ------------------------------------------------------------ loop distribution (fused or not) */

/* Byte offset of position p in text s (lines and columns 1-based). */
static size_t pos_offset(const char *s, size_t n, ir_pos p)
{
	size_t off = 0;
	for (int line = 1; line < p.line && off < n; off++)
		if (s[off] == '\n')
			line++;
	off += (size_t)(p.col > 0 ? p.col - 1 : 0);
	return off < n ? off : n;
}

/* The end of the node whose text starts at a: a for's closing brace (past
 * it; comments inside skipped), a statement's end (a newline, ';', a
 * comment or the parent's '}' at depth 0). */
static size_t node_end(const char *s, size_t n, size_t a, bool block)
{
	int depth = 0;
	bool opened = false;
	for (size_t i = a; i < n; i++) {
		char c = s[i];
		if (c == '#' && !block)
			return i;
		if (c == '#') {
			/* a comment inside a for: skipped (its braces do not count) */
			while (i + 1 < n && s[i + 1] != '\n')
				i++;
			continue;
		}
		if (c == '(' || c == '[' || c == '{') {
			depth++;
			opened = opened || c == '{';
		} else if (c == ')' || c == ']' || c == '}') {
			if (depth == 0)
				return i;
			depth--;
			if (block && c == '}' && depth == 0 && opened)
				return i + 1;
		} else if (!block && depth == 0 && (c == '\n' || c == ';'))
			return i;
	}
	return n;
}

/* Identifiers of s written otherwise: those at the offsets at[i] as at_to[i]
 * (one access, whatever its name), the others named from[i] as to[i]. */
typedef struct renames {
	const char *const *from, *const *to;
	int n;
	const size_t *at;
	const char *const *at_to;
	int nat;
} renames;

/* s[a, e) with the identifiers renamed as rn says. */
static void put_renamed_as(ct_buf *b, const char *s, size_t a, size_t e, const renames *rn)
{
	for (size_t i = a; i < e;) {
		if (ident_char(s[i]) && !(s[i] >= '0' && s[i] <= '9') && (i == a || !ident_char(s[i - 1]))) {
			size_t j = i;
			while (j < e && ident_char(s[j]))
				j++;
			const char *rep = NULL;
			for (int r = 0; r < rn->nat && !rep; r++)
				if (rn->at[r] == i)
					rep = rn->at_to[r];
			for (int r = 0; r < rn->n && !rep; r++)
				if (strlen(rn->from[r]) == j - i && !strncmp(s + i, rn->from[r], j - i))
					rep = rn->to[r];
			if (rep)
				ct_buf_puts(b, rep);
			else
				for (size_t q = i; q < j; q++)
					ct_buf_putc(b, s[q]);
			i = j;
		} else
			ct_buf_putc(b, s[i++]);
	}
}

/* s[a, e) with the identifiers from[i] written to[i]. */
static void put_renamed(ct_buf *b, const char *s, size_t a, size_t e, const char *const *from, const char *const *to,
                        int nren)
{
	renames rn = {from, to, nren, NULL, NULL, 0};
	put_renamed_as(b, s, a, e, &rn);
}

/* The accesses of x (and below) to array a, into out (at most cap). */
static int accesses_of(const ir_node *x, int a, const ir_expr **out, int n, int cap);

static int expr_accesses(const ir_expr *e, int a, const ir_expr **out, int n, int cap)
{
	if (!e)
		return n;
	if (e->kind == EX_ACCESS && e->id == a && n < cap)
		out[n++] = e;
	for (int i = 0; i < e->nargs; i++)
		n = expr_accesses(e->args[i], a, out, n, cap);
	return n;
}

static int accesses_of(const ir_node *x, int a, const ir_expr **out, int n, int cap)
{
	if (x->kind == ND_STMT)
		n = expr_accesses(x->lhs, a, out, n, cap);
	n = expr_accesses(x->rhs, a, out, n, cap);
	n = expr_accesses(x->cond, a, out, n, cap);
	for (int i = 0; i < x->nbody; i++)
		n = accesses_of(x->body[i], a, out, n, cap);
	for (int i = 0; i < x->nels; i++)
		n = accesses_of(x->els[i], a, out, n, cap);
	return n;
}

static bool writes(const ir_node *x, int a)
{
	if (x->kind == ND_STMT && x->lhs->id == a)
		return true;
	for (int i = 0; i < x->nbody; i++)
		if (writes(x->body[i], a))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (writes(x->els[i], a))
			return true;
	return false;
}

/* Whether distributing the one-for band of nest n over its parts keeps
 * every dependence: the parts then run one after the other, so no part may
 * depend on a later one. Sufficient (and what the two-index transform's
 * temp and PolyBench's gemm need): every array written by a part and
 * accessed by another is accessed by all of them, in some dimensions,
 * with the same subscripts, each a band index plus a constant, every band
 * index among them: then two band iterations never touch one element, and
 * parts meet only within one band iteration, in their order. */
static bool distribution_legal(const ct_kernel *k, const auto_nest *n)
{
	const ir_node *x = n->top;
	for (int a = 0; a < k->narrays; a++) {
		int users = 0;
		bool written = false;
		for (int c = 0; c < x->nbody; c++) {
			const ir_expr *acc[64];
			if (accesses_of(x->body[c], a, acc, 0, 64) > 0)
				users++;
			written = written || writes(x->body[c], a);
		}
		if (users < 2 || !written)
			continue;
		const ir_expr *acc[64];
		int na = accesses_of(x, a, acc, 0, 64);
		if (na >= 64)
			return false;
		/* the dimensions that every access subscripts alike by one band index
		 * (plus a constant) must name every band index: then two band
		 * iterations never touch one element; the other dimensions are free
		 * (PolyBench's gemm: C[i, j] *= beta, then C[i, j] += ... over k, j) */
		unsigned used = 0;
		for (int d = 0; d < k->arrays[a].rank; d++) {
			aff s0 = acc[0]->sub[d];
			if (s0.n != 1 || s0.t[0].kind != AFF_INDEX || llabs(s0.t[0].coef) != 1 || band_pos(n, s0.t[0].id) < 0)
				continue;
			bool alike = true;
			for (int i = 1; i < na && alike; i++)
				alike = aff_equal(acc[i]->sub[d], s0);
			if (alike)
				used |= 1u << band_pos(n, s0.t[0].id);
		}
		if (used != (1u << n->nband) - 1)
			return false;
	}
	return true;
}

/* The body of one copy of a loop (copies_text): the text s[a1, e1), then,
 * when a2 < e2, a space and s[a2, e2). */
typedef struct copy_body {
	size_t a1, e1, a2, e2;
} copy_body;

/* The text of R's kernel with for x written once per body (nb of them):
 * each under its own copy of x's header, the copies' indices (names,
 * nnames of them) renamed `_c` (the first keeps the names). A top-level
 * x's copies are whole lines ("{\n  body\n}"); an inner one's ("{ body }")
 * keep x's indentation, so the loops around x stay around all the copies.
 * NULL when x's text is not a `for` with a brace. */
static char *copies_text(auto_run *R, const ir_node *x, const char *const *names, int nnames, bool inner,
                         const copy_body *body, int nb)
{
	const ct_kernel *k = R->k;
	const char *s = k->text;
	size_t len = k->text_len;
	size_t a = pos_offset(s, len, x->pos);
	if (strncmp(s + a, "for", 3) != 0)
		return NULL;
	size_t e = node_end(s, len, a, true);
	const char *brace = memchr(s + a, '{', e - a);
	if (!brace)
		return NULL;
	size_t hb = (size_t)(brace - s), line = a;
	while (line > 0 && s[line - 1] != '\n')
		line--;
	ct_buf b;
	ct_buf_init(&b);
	for (size_t i = 0; i < a; i++)
		ct_buf_putc(&b, s[i]);
	for (int c = 0; c < nb; c++) {
		const char *to[8];
		for (int i = 0; i < nnames; i++) {
			char suf[16];
			snprintf(suf, sizeof suf, "_%d", c);
			to[i] = c == 0 ? names[i] : fresh(k, &R->names, names[i], suf);
		}
		if (c > 0) {
			ct_buf_puts(&b, "\n");
			for (size_t i = line; inner && i < a && (s[i] == ' ' || s[i] == '\t'); i++)
				ct_buf_putc(&b, s[i]);
		}
		put_renamed(&b, s, a, hb, names, to, nnames);
		ct_buf_puts(&b, inner ? "{ " : "{\n  ");
		put_renamed(&b, s, body[c].a1, body[c].e1, names, to, nnames);
		if (body[c].a2 < body[c].e2) {
			ct_buf_putc(&b, ' ');
			put_renamed(&b, s, body[c].a2, body[c].e2, names, to, nnames);
		}
		ct_buf_puts(&b, inner ? " }" : "\n}");
	}
	for (size_t i = e; i < len; i++)
		ct_buf_putc(&b, s[i]);
	return ct_buf_take(&b);
}

/* The text of R's kernel with for x distributed over its parts (statements
 * and loops): each part under its own copy of x's header (copies_text).
 * NULL when x's body holds other than statements and loops, or its text is
 * not a `for` with a brace. */
static char *parts_text(auto_run *R, const ir_node *x, const char *const *names, int nnames, bool inner)
{
	const ct_kernel *k = R->k;
	if (x->nbody < 2)
		return NULL;
	copy_body *body = calloc((size_t)x->nbody, sizeof *body);
	if (!body)
		return NULL;
	for (int c = 0; c < x->nbody; c++) {
		const ir_node *y = x->body[c];
		if (y->kind != ND_STMT && y->kind != ND_FOR) {
			free(body);
			return NULL;
		}
		body[c].a1 = pos_offset(k->text, k->text_len, y->pos);
		body[c].e1 = node_end(k->text, k->text_len, body[c].a1, y->kind == ND_FOR);
	}
	char *t = copies_text(R, x, names, nnames, inner, body, x->nbody);
	free(body);
	return t;
}

/* The text of k with nest n distributed over its parts (NULL: it cannot be
 * written so): each part under its own copy of the band's for, the copies'
 * indices renamed (the first keeps the names). *sufficient: whether
 * distribution_legal says the distribution keeps every dependence (else
 * the dependence analysis must say so). */
static char *distributed_text(auto_run *R, const auto_nest *n, bool *sufficient)
{
	const ct_kernel *k = R->k;
	const ir_node *x = n->top;
	if (n->top != n->inner || n->nband > 8)
		return NULL;
	*sufficient = distribution_legal(k, n);
	const char *names[8];
	for (int i = 0; i < n->nband; i++)
		names[i] = iname(k, n, i);
	return parts_text(R, x, names, n->nband, false);
}

static ct_status autoschedule(ct_kernel *k, const ct_auto_options *o, int depth, char **text, const char *note,
                               const char *keep);

/* auto on t, a rewrite of R's kernel (distributed, fused) with its note: *text is its file,
 * or NULL when that run fails (its error cleared: the caller goes on without the rewrite). */
static void auto_rewritten(auto_run *R, ct_kernel *t, int depth, char **text, const char *note, const char *keep)
{
	if (note && keep && autoschedule(t, R->o, depth + 1, text, note, keep) == CT_OK)
		return;
	ct_ctx_clear_error(R->tctx);
	free(*text);
	*text = NULL;
}

/* auto_rewritten with the comments of earlier rewrites (before) first, then this one's note. */
static void auto_rewritten_after(auto_run *R, ct_kernel *t, int depth, char **text, const char *before,
                                 const char *note)
{
	ct_buf all;
	ct_buf_init(&all);
	ct_buf_puts(&all, before ? before : "");
	ct_buf_puts(&all, note);
	auto_rewritten(R, t, depth, text, all.s, R->keep ? R->keep : "");
	ct_buf_free(&all);
}

/* Distributions in one file: each is a re-parse and a new auto run, one
 * nest at a time (PolyBench's 3mm distributes three). */
#define AUTO_MAX_DISTRIBUTE 8

/* Whether gemm-shaped nest n (g) is a product of two operands summed into an
 * element: both operands found, and no other read than the element's own
 * (what the packed register tile takes). */
static bool two_operand_sum(const auto_nest *n, const auto_gemm *g)
{
	if (g->left < 0 || g->right < 0)
		return false;
	int w = -1, others = 0;
	for (int a = 0; a < n->nacc; a++)
		if (n->acc[a].write)
			w = n->acc[a].array;
	for (int a = 0; a < n->nacc; a++)
		others += !n->acc[a].write && n->acc[a].array != w;
	return others == 2;
}

/* How many top-level nests of t (parameter values pv) are sums that take a
 * register tile (two_operands: and are a product of two operands). */
static int count_sums(ct_kernel *t, const int64_t *pv, const auto_machine *m, bool two_operands)
{
	int count = 0;
	for (int j = 0; j < t->nbody; j++) {
		if (t->body[j]->kind != ND_FOR)
			continue;
		auto_nest *n = calloc(1, sizeof *n);
		auto_gemm g;
		if (!n)
			return count;
		nest_init(t, pv, m, t->body[j], n);
		count += gemm_shape(t, m, n, &g) && (!two_operands || two_operand_sum(n, &g));
		free(n);
	}
	return count;
}

static int tiled_sums(ct_kernel *t, const int64_t *pv, const auto_machine *m)
{
	return count_sums(t, pv, m, false);
}

/* Whether the statements directly in for x, the innermost of the perfect
 * band that starts at for top, get a unit-stride vector loop: the band's
 * innermost loop by reuse (LoopCost) moves every element they write and
 * has stride 0 or 1 in every access of theirs (what `vectorize` takes). */
static bool unit_band(const ct_kernel *k, const int64_t *pv, const auto_machine *m, const ir_node *top,
                      const ir_node *x)
{
	auto_nest *n = calloc(1, sizeof *n);
	if (!n)
		return false;
	for (const ir_node *y = top;; y = y->body[0]) {
		for (int i = 0; i < y->nidx && n->nband < AUTO_MAX_BAND; i++) {
			n->band[n->nband] = y->idx[i];
			n->trip[n->nband] = index_trip(k, pv, y->idx[i]);
			n->nband++;
		}
		if (y == x || y->nbody != 1 || y->body[0]->kind != ND_FOR)
			break;
	}
	for (int i = 0; i < x->nbody; i++)
		if (x->body[i]->kind == ND_STMT)
			walk_node(k, pv, n, x->body[i]);
	loop_costs(k, m, n);
	int v = n->order[n->nband - 1];
	bool ok = n->nacc > 0;
	for (int a = 0; a < n->nacc && ok; a++)
		ok = (n->acc[a].stride[v] == 0 || n->acc[a].stride[v] == 1) && (!n->acc[a].write || n->acc[a].stride[v] != 0);
	free(n);
	return ok;
}

/* The statements under node x (top: the head of the perfect band x ends,
 * x itself when x is not the only child of a for) that unit_band says get
 * a unit-stride vector loop. */
static int vector_walk(const ct_kernel *k, const int64_t *pv, const auto_machine *m, const ir_node *x,
                       const ir_node *top)
{
	int count = 0;
	if (x->kind == ND_FOR) {
		int nst = 0;
		for (int i = 0; i < x->nbody; i++)
			nst += x->body[i]->kind == ND_STMT;
		if (nst > 0 && unit_band(k, pv, m, top, x))
			count += nst;
	}
	for (int i = 0; i < x->nbody; i++) {
		const ir_node *y = x->body[i];
		count += vector_walk(k, pv, m, y, x->kind == ND_FOR && x->nbody == 1 ? top : y);
	}
	for (int i = 0; i < x->nels; i++)
		count += vector_walk(k, pv, m, x->els[i], x->els[i]);
	return count;
}

/* How many statements of t get a unit-stride vector loop in the order by
 * reuse of their perfect band (what a distribution can give a sum whose
 * fused loop is strided: atax's y[j2] += A[i2, j2] * t[i2]). */
static int vector_stmts(const ct_kernel *t, const int64_t *pv, const auto_machine *m)
{
	int count = 0;
	for (int j = 0; j < t->nbody; j++)
		count += vector_walk(t, pv, m, t->body[j], t->body[j]);
	return count;
}

/* Whether distributing nest n (of R's kernel, its top for over its parts)
 * keeps every dependence, by the dependence analysis (dep_parts_ordered:
 * no dependence from a later part to an earlier one): 1 yes, 0 no, -1
 * unknown. */
static int distribution_deps(auto_run *R, const auto_nest *n)
{
	char *txt = with_choice(R, NULL);
	ct_ctx *cx = NULL;
	ct_kernel *t = txt ? trial_parse(R->tctx, R->k, txt, &cx, NULL, 0) : NULL;
	free(txt);
	int r = -1;
	if (t && t->nbody == R->k->nbody) {
		int at = -1;
		for (int i = 0; i < R->k->nbody; i++)
			if (R->k->body[i] == n->top)
				at = i;
		dep_info *d = at >= 0 && t->body[at]->kind == ND_FOR ? dep_compute(t) : NULL;
		if (d)
			r = dep_parts_ordered(d, t->body[at]->body, t->body[at]->nbody, 0);
		dep_free(d);
	}
	ct_kernel_free(t);
	ct_ctx_free(cx);
	ct_ctx_clear_error(R->tctx);
	return r;
}

/* The two-index transform's choice (TCE): the fused nest cannot hold a
 * register tile; distributed, its sums can. When a nest distributes
 * legally and one of its parts is then a register-tiled sum, the file
 * written is the distributed one, planned as any other. CT_OK with *text
 * NULL when nothing was distributed. */
static ct_status try_distribute(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	int had = tiled_sums(R->k, R->pv, &R->m), hadv = vector_stmts(R->k, R->pv, &R->m);
	for (int i = 0; i < R->k->nbody; i++) {
		if (R->k->body[i]->kind != ND_FOR)
			continue;
		auto_nest *n = calloc(1, sizeof *n);
		if (!n)
			return CT_ERR_NOMEM;
		nest_init(R->k, R->pv, &R->m, R->k->body[i], n);
		auto_names keep = R->names;
		bool sufficient = false;
		char *dt = distributed_text(R, n, &sufficient);
		int line = n->top->pos.line, parts = n->top->nbody;
		char band[256] = "";
		for (int b = 0; b < n->nband; b++)
			snprintf(band + strlen(band), sizeof band - strlen(band), "%s%s", b ? ", " : "", iname(R->k, n, b));
		R->names = keep;
		if (!dt) {
			free(n);
			continue;
		}
		ct_ctx *cx = NULL;
		ct_kernel *t = trial_parse(R->tctx, R->k, dt, &cx, NULL, 0);
		int64_t *pv = t ? calloc((size_t)t->nparams + 1, sizeof *pv) : NULL;
		if (pv)
			ir_param_values(t, pv);
		/* only when distributing this nest gives a sum a register tile it had
		 * not, or statements a unit-stride vector loop they had not */
		bool tiles = pv && tiled_sums(t, pv, &R->m) > had;
		int morev = pv ? vector_stmts(t, pv, &R->m) - hadv : 0;
		/* a triangle's sum takes no register tile (docs/AUTO.md): its reason is the vector loop */
		bool affine = false;
		for (int b = 0; b < n->nband; b++)
			affine = affine || bounds_use_index(R->k, n->band[b]);
		free(pv);
		bool legal = sufficient;
		if ((tiles || morev > 0) && !sufficient) {
			legal = distribution_deps(R, n) == 1;
			if (!legal)
				ct_buf_printf(&R->why,
				              "# the nest at line %d, for (%s) over %d parts, stays fused: distributed, %s, but\n"
				              "#   a dependence runs from a later part to an earlier part's later iteration\n",
				              line, band, parts,
				              tiles && (!affine || morev <= 0) ? "a sum would take a register tile"
				                    : "more statements would get a unit-stride vector loop");
		}
		free(n);
		ct_status st = CT_OK;
		if ((tiles || morev > 0) && legal) {
			/* plan the distributed kernel (its text is the user's with the nest distributed);
			 * the comments of earlier distributions come first */
			char note[768];
			const char *why_legal = sufficient ? "the parts share only elements of one iteration"
			                                   : "the dependence analysis finds no dependence from a later part\n"
			                                     "#   to an earlier one";
			if (tiles && (!affine || morev <= 0))
				snprintf(note, sizeof note,
				         "# the nest at line %d, for (%s) over %d parts, is distributed (one nest per part):\n"
				         "#   fused, no part can hold a register tile; distributed, a sum can (the TCE's\n"
				         "#   fused-or-not choice); legal: %s\n",
				         line, band, parts, why_legal);
			else
				snprintf(note, sizeof note,
				         "# the nest at line %d, for (%s) over %d parts, is distributed (one nest per part):\n"
				         "#   fused, a part's innermost loop is strided or a sum's; distributed, %d more\n"
				         "#   statement(s) get a unit-stride innermost loop to vectorize;\n"
				         "#   legal: %s\n",
				         line, band, parts, morev, why_legal);
			auto_rewritten_after(R, t, depth, text, before, note);
		}
		ct_kernel_free(t);
		ct_ctx_free(cx);
		free(dt);
		if (st != CT_OK || *text)
			return st;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ a sum of products split in its products */

/* Sums of products a loop may be split into (syr2k's two). */
#define AUTO_MAX_ADDENDS 8

/* The addends of e, a left-associated chain of `+` as parsed (`a + b + c`:
 * ((a + b) + c)), into out (a parenthesized right operand is one addend);
 * their count, 0 when more than cap. */
static int addends(const ir_expr *e, const ir_expr **out, int cap)
{
	if (!e)
		return 0;
	if (e->kind != EX_ADD || e->nargs != 2) {
		if (cap < 1)
			return 0;
		out[0] = e;
		return 1;
	}
	int n = addends(e->args[0], out, cap - 1);
	if (n == 0)
		return 0;
	out[n] = e->args[1];
	return n + 1;
}

/* The array reads of product e (factors of `*` and `-`: reads, numbers and
 * params) into acc (at most 2); -1 when e is not such a product or has
 * more than two reads. */
static int product_reads(const ir_expr *e, const ir_expr **acc, int n)
{
	if (!e)
		return -1;
	switch (e->kind) {
	case EX_NUM:
	case EX_PARAM:
		return n;
	case EX_ACCESS:
		if (n >= 2)
			return -1;
		acc[n] = e;
		return n + 1;
	case EX_NEG:
		return e->nargs == 1 ? product_reads(e->args[0], acc, n) : -1;
	case EX_MUL:
		if (e->nargs != 2)
			return -1;
		n = product_reads(e->args[0], acc, n);
		return n < 0 ? -1 : product_reads(e->args[1], acc, n);
	default:
		return -1;
	}
}

static bool access_uses(const ir_expr *e, int rank, int id);

/* Whether addend e of an update of lhs is a product of two operands as a
 * register tile takes it (gemm's A[i, k] * B[k, j] into C[i, j]): two
 * reads, neither of lhs's array; an index the element does not use that
 * both use (the sum), and for each read an index of the element it uses
 * and the other does not (its rows, the other's columns). */
static bool tile_product(const ct_kernel *k, const ir_expr *lhs, const ir_expr *e)
{
	const ir_expr *acc[2];
	if (product_reads(e, acc, 0) != 2 || acc[0]->id == lhs->id || acc[1]->id == lhs->id)
		return false;
	bool sum = false, rows = false, cols = false;
	for (int id = 0; id < k->nindices; id++) {
		bool in_elt = access_uses(lhs, k->arrays[lhs->id].rank, id);
		bool a = access_uses(acc[0], k->arrays[acc[0]->id].rank, id);
		bool b = access_uses(acc[1], k->arrays[acc[1]->id].rank, id);
		sum = sum || (!in_elt && a && b);
		rows = rows || (in_elt && a && !b);
		cols = cols || (in_elt && b && !a);
	}
	return sum && rows && cols;
}

/* The offsets in s[a, e) (an expression's text) just past each `+` at depth
 * 0 that adds two addends (not a sign, not an exponent's), into cut; their
 * count, -1 when more than cap. */
static int top_pluses(const char *s, size_t a, size_t e, size_t *cut, int cap)
{
	int depth = 0, n = 0;
	for (size_t i = a; i < e; i++) {
		char c = s[i];
		if (c == '(' || c == '[')
			depth++;
		else if (c == ')' || c == ']')
			depth--;
		if (c != '+' || depth != 0)
			continue;
		size_t p = i;
		while (p > a && (s[p - 1] == ' ' || s[p - 1] == '\t'))
			p--;
		if (p == a || !(ident_char(s[p - 1]) || s[p - 1] == ')' || s[p - 1] == ']' || s[p - 1] == '.'))
			continue; /* a sign */
		size_t w = p;
		while (w > a && (ident_char(s[w - 1]) || s[w - 1] == '.'))
			w--;
		if (w < p && s[w] >= '0' && s[w] <= '9' && (s[p - 1] == 'e' || s[p - 1] == 'E'))
			continue; /* 1.5e+3 */
		if (n >= cap)
			return -1;
		cut[n++] = i + 1;
	}
	return n;
}

/* A loop split into its products: for x (one statement s in its braces,
 * X[f] += p1 + p2 + ...) and the text spans of the addends. */
typedef struct split_sum {
	const ir_node *x, *s;
	int n;
	size_t lo[AUTO_MAX_ADDENDS], hi[AUTO_MAX_ADDENDS]; /* addend m: text [lo, hi) */
	size_t op;                                          /* the statement's `+=` or `-=` */
} split_sum;

/* Whether for x is a loop whose only child is an update X[f] += p1 + p2
 * (+ ...; also -=) whose addends are each a product of two operands that a
 * register tile takes (tile_product), their text found (*sp). */
static bool split_shape(const ct_kernel *k, const ir_node *x, split_sum *sp)
{
	if (x->kind != ND_FOR || x->nbody != 1 || x->nidx > 8)
		return false;
	const ir_node *s = x->body[0];
	if (s->kind != ND_STMT || (s->op != AS_ADD && s->op != AS_SUB) || !s->lhs || s->lhs->kind != EX_ACCESS)
		return false;
	const ir_expr *add[AUTO_MAX_ADDENDS];
	int n = addends(s->rhs, add, AUTO_MAX_ADDENDS);
	if (n < 2)
		return false;
	for (int m = 0; m < n; m++)
		if (!tile_product(k, s->lhs, add[m]))
			return false;
	const char *t = k->text;
	size_t len = k->text_len, xa = pos_offset(t, len, x->pos), a = pos_offset(t, len, s->pos);
	if (strncmp(t + xa, "for", 3) != 0 || !memchr(t + xa, '{', a > xa ? a - xa : 0))
		return false;
	size_t e = node_end(t, len, a, false);
	size_t op = a;
	while (op + 1 < e && !((t[op] == '+' || t[op] == '-') && t[op + 1] == '='))
		op++;
	if (op + 1 >= e)
		return false;
	size_t cut[AUTO_MAX_ADDENDS];
	if (top_pluses(t, op + 2, e, cut, AUTO_MAX_ADDENDS) != n - 1)
		return false;
	sp->x = x;
	sp->s = s;
	sp->n = n;
	sp->op = op;
	for (int m = 0; m < n; m++) {
		sp->lo[m] = m == 0 ? op + 2 : cut[m - 1];
		sp->hi[m] = m == n - 1 ? e : cut[m] - 1;
		while (sp->lo[m] < sp->hi[m] && (t[sp->lo[m]] == ' ' || t[sp->lo[m]] == '\t'))
			sp->lo[m]++;
		while (sp->hi[m] > sp->lo[m] && (t[sp->hi[m] - 1] == ' ' || t[sp->hi[m] - 1] == '\t'))
			sp->hi[m]--;
		if (sp->lo[m] == sp->hi[m])
			return false;
	}
	return true;
}

/* The first loop at or below x that split_shape takes. */
static bool find_split(const ct_kernel *k, const ir_node *x, split_sum *sp)
{
	if (split_shape(k, x, sp))
		return true;
	for (int c = 0; c < x->nbody; c++)
		if (find_split(k, x->body[c], sp))
			return true;
	for (int c = 0; c < x->nels; c++)
		if (find_split(k, x->els[c], sp))
			return true;
	return false;
}

/* The text of R's kernel with loop sp->x written once per addend, each
 * copy updating the element with its addend alone (copies_text). */
static char *split_sum_text(auto_run *R, const split_sum *sp)
{
	const ct_kernel *k = R->k;
	const char *names[8];
	for (int i = 0; i < sp->x->nidx; i++)
		names[i] = k->indices[sp->x->idx[i]].name;
	copy_body body[AUTO_MAX_ADDENDS];
	size_t sa = pos_offset(k->text, k->text_len, sp->s->pos);
	for (int m = 0; m < sp->n; m++)
		body[m] = (copy_body){sa, sp->op + 2, sp->lo[m], sp->hi[m]};
	return copies_text(R, sp->x, names, sp->x->nidx, sp->x->parent != NULL, body, sp->n);
}

/* syr2k's C[i, j] += A[j, k] * B[i, k] + B[j, k] * A[i, k]: a sum of two
 * products takes no register tile, each product alone does. A loop whose
 * only statement updates an element by a sum of such products is written
 * once per product (docs/AUTO.md): the element's updates are re-associated
 * (docs/LANGUAGE.md, section 7), nothing else moves. Later runs distribute
 * the copies and tile each. CT_OK with *text NULL when nothing was split. */
static ct_status try_split_sums(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	split_sum sp;
	bool found = false;
	for (int i = 0; i < k->nbody && !found; i++)
		found = find_split(k, k->body[i], &sp);
	if (!found)
		return CT_OK;
	auto_names keep = R->names;
	char *tt = split_sum_text(R, &sp);
	ct_ctx *cx = NULL;
	ct_kernel *t = tt ? trial_parse(R->tctx, R->k, tt, &cx, NULL, 0) : NULL;
	if (t) {
		const ir_expr *lhs = sp.s->lhs;
		char band[256] = "";
		for (int i = 0; i < sp.x->nidx; i++)
			snprintf(band + strlen(band), sizeof band - strlen(band), "%s%s", i ? ", " : "",
			         k->indices[sp.x->idx[i]].name);
		char note[768];
		snprintf(note, sizeof note,
		         "# the update at line %d of %s[..] by a sum of %d products is split: for (%s) is written\n"
		         "#   once per product, in the order written; a sum of products takes no register tile,\n"
		         "#   each product alone does (packed panels, as a gemm); the element's updates are\n"
		         "#   re-associated, x1 + y1 + x2 + y2 ... as x1 + x2 ... + y1 + y2 ... (docs/LANGUAGE.md,\n"
		         "#   section 7: reductions re-associate; the loop reads no element it writes)\n",
		         sp.s->pos.line, k->arrays[lhs->id].name, sp.n, band);
		auto_rewritten_after(R, t, depth, text, before, note);
	}
	if (!*text)
		R->names = keep;
	ct_kernel_free(t);
	ct_ctx_free(cx);
	free(tt);
	return CT_OK;
}

/* ------------------------------------------------------------ distribution of an inner loop */

/* The text of k with for x, a loop inside a nest, distributed over its
 * parts (statements and loops): each part under its own copy of x, the
 * copies' indices renamed (the first keeps the names); the loops around x
 * stay around all the copies. NULL when it cannot be written so. */
static char *inner_distributed_text(auto_run *R, const ir_node *x)
{
	const ct_kernel *k = R->k;
	if (x->kind != ND_FOR || !x->parent || x->nidx > 8)
		return NULL;
	const char *names[8];
	for (int i = 0; i < x->nidx; i++)
		names[i] = k->indices[x->idx[i]].name;
	return parts_text(R, x, names, x->nidx, true);
}

/* The positions from the kernel's body down to x (in a parent's body i,
 * in its else branch -1 - i) into path; their count, 0 when too deep. */
static int child_path(const ct_kernel *k, const ir_node *x, int *path, int cap)
{
	int n = 0;
	for (const ir_node *y = x; y; y = y->parent) {
		if (n >= cap)
			return 0;
		const ir_node *p = y->parent;
		int at = -1;
		for (int i = 0; p && i < p->nbody; i++)
			if (p->body[i] == y)
				at = i;
		for (int i = 0; p && i < p->nels; i++)
			if (p->els[i] == y)
				at = -1 - i;
		for (int i = 0; !p && i < k->nbody; i++)
			if (k->body[i] == y)
				at = i;
		path[n++] = at;
	}
	for (int i = 0; i < n / 2; i++) {
		int t = path[i];
		path[i] = path[n - 1 - i];
		path[n - 1 - i] = t;
	}
	return n;
}

/* The node of k at path (child_path's), NULL when k has none there. */
static ir_node *node_at(const ct_kernel *k, const int *path, int n)
{
	if (n < 1 || path[0] < 0 || path[0] >= k->nbody)
		return NULL;
	ir_node *y = k->body[path[0]];
	for (int i = 1; i < n && y; i++)
		y = path[i] >= 0 ? (path[i] < y->nbody ? y->body[path[i]] : NULL)
		                 : (-1 - path[i] < y->nels ? y->els[-1 - path[i]] : NULL);
	return y;
}

/* Whether distributing the inner loop x of R's kernel over its parts
 * keeps every dependence, the loops around x kept around the copies
 * (dep_parts_ordered with their indices in common): 1 yes, 0 no, -1
 * unknown. */
static int inner_distribution_deps(auto_run *R, const ir_node *x)
{
	int path[64], np = child_path(R->k, x, path, 64), keep = 0;
	for (const ir_node *y = x->parent; y; y = y->parent)
		keep += y->kind == ND_FOR ? y->nidx : 0;
	char *txt = np ? with_choice(R, NULL) : NULL;
	ct_ctx *cx = NULL;
	ct_kernel *t = txt ? trial_parse(R->tctx, R->k, txt, &cx, NULL, 0) : NULL;
	free(txt);
	int r = -1;
	ir_node *y = t ? node_at(t, path, np) : NULL;
	if (y && y->kind == ND_FOR && y->nbody == x->nbody) {
		dep_info *d = dep_compute(t);
		if (d)
			r = dep_parts_ordered(d, y->body, y->nbody, keep);
		dep_free(d);
	}
	ct_kernel_free(t);
	ct_ctx_free(cx);
	ct_ctx_clear_error(R->tctx);
	return r;
}

/* The loops inside the nests of k (not a nest's own top loop) over two or
 * more parts, outer ones first, into out (at most cap); their count. */
static int inner_parted(const ir_node *x, const ir_node **out, int n, int cap)
{
	if (x->kind == ND_FOR && x->parent && x->nbody >= 2 && n < cap)
		out[n++] = x;
	for (int i = 0; i < x->nbody; i++)
		n = inner_parted(x->body[i], out, n, cap);
	for (int i = 0; i < x->nels; i++)
		n = inner_parted(x->els[i], out, n, cap);
	return n;
}

/* doitgen's choice: a loop inside a nest (for (p) { S[p] = 0; for (s) {
 * S[p] += .. } } inside for (r, q)) whose parts, distributed inside the
 * loops around it, give more statements a unit-stride vector loop (the sum
 * then runs (s, p), p its vector loop, inside (r, q)). The first such loop
 * that distributes legally (the dependence analysis) is written
 * distributed, and the result is planned as any other file. CT_OK with
 * *text NULL when nothing was distributed. */
static ct_status try_distribute_inner(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	int hadv = vector_stmts(R->k, R->pv, &R->m);
	const ir_node *cand[32];
	int nc = 0;
	for (int i = 0; i < R->k->nbody; i++)
		if (R->k->body[i]->kind == ND_FOR)
			nc = inner_parted(R->k->body[i], cand, nc, 32);
	for (int c = 0; c < nc && !*text; c++) {
		const ir_node *x = cand[c];
		auto_names names = R->names;
		char *dt = inner_distributed_text(R, x);
		R->names = names;
		if (!dt)
			continue;
		ct_ctx *cx = NULL;
		ct_kernel *t = trial_parse(R->tctx, R->k, dt, &cx, NULL, 0);
		int64_t *pv = t ? calloc((size_t)t->nparams + 1, sizeof *pv) : NULL;
		if (pv)
			ir_param_values(t, pv);
		int morev = pv ? vector_stmts(t, pv, &R->m) - hadv : 0;
		free(pv);
		char idx[128] = "";
		for (int i = 0; i < x->nidx; i++)
			snprintf(idx + strlen(idx), sizeof idx - strlen(idx), "%s%s", i ? ", " : "",
			         R->k->indices[x->idx[i]].name);
		if (morev > 0 && inner_distribution_deps(R, x) != 1)
			ct_buf_printf(&R->why,
			              "# the loop at line %d, for (%s) over %d parts, stays fused: distributed, more\n"
			              "#   statements would get a unit-stride vector loop, but a dependence runs from a\n"
			              "#   later part to an earlier part's later iteration\n",
			              x->pos.line, idx, x->nbody);
		else if (morev > 0) {
			char note[768]; /* the text (387 bytes) with idx (< 128) and three ints */
			snprintf(note, sizeof note,
			         "# the loop at line %d, for (%s) over %d parts, is distributed inside the loops around\n"
			         "#   it (one loop per part): fused, a part's innermost loop is strided or a sum's;\n"
			         "#   distributed, %d more statement(s) get a unit-stride innermost loop to vectorize;\n"
			         "#   legal: the dependence analysis finds no dependence from a later part to an\n"
			         "#   earlier one within an iteration of the loops around it\n",
			         x->pos.line, idx, x->nbody, morev);
			auto_rewritten_after(R, t, depth, text, before, note);
		}
		ct_kernel_free(t);
		ct_ctx_free(cx);
		free(dt);
	}
	return CT_OK;
}


/* ------------------------------------------------------------ expansion of a temp */

static void put_range(ct_buf *b, const ct_kernel *k, int id);

/* A temp of a nest that expansion along the band's innermost loop q turns
 * into a matrix a register tile can take (doitgen: the row buffer S[p] of
 * each (r, q) becomes S[q, p], its sum a gemm per r). */
typedef struct expand_temp {
	const ir_node *top;    /* the nest */
	const ir_node *inner;  /* the band's innermost for: its body holds the parts */
	int band[AUTO_MAX_BAND], nband;
	int a;                 /* the temp */
	int64_t bytes;         /* its size expanded */
} expand_temp;

/* Whether access e uses one of the indices ids[0..n). */
static bool subs_use(const ir_expr *e, int rank, const int *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (access_uses(e, rank, ids[i]))
			return true;
	return false;
}

/* Whether temp a of R's kernel may be expanded along the last loop of E's
 * band (the checks of its shape; legality is the dependence analysis's). */
static bool expand_candidate(const auto_run *R, const expand_temp *E, int a)
{
	const ct_kernel *k = R->k;
	const ir_array *ar = &k->arrays[a];
	if (ar->role != CT_TEMP || ar->rank >= IR_MAX_RANK || !writes(E->inner, a))
		return false;
	for (int d = 0; d < ar->rank; d++)
		if (ar->order[d] != d)
			return false;
	for (int i = 0; i < k->nbody; i++)
		if (k->body[i] != E->top && touches(k->body[i], a))
			return false;
	const ir_expr *acc[64];
	int na = accesses_of(E->top, a, acc, 0, 64);
	if (na >= 64 || accesses_of(E->inner, a, acc, 0, 64) != na)
		return false;
	for (int i = 0; i < na; i++)
		if (subs_use(acc[i], ar->rank, E->band, E->nband))
			return false;
	return true;
}

/* s[a, e) renamed (from -> to), each access of temp `name` given `sub, `
 * as its new first subscript. */
static void put_expanded(ct_buf *b, const char *s, size_t a, size_t e, const char *const *from, const char *const *to,
                         int nren, const char *name, const char *sub)
{
	ct_buf r;
	ct_buf_init(&r);
	put_renamed(&r, s, a, e, from, to, nren);
	size_t nl = strlen(name);
	for (size_t i = 0; i < r.len; i++) {
		ct_buf_putc(b, r.s[i]);
		bool id = i + nl <= r.len && !strncmp(r.s + i, name, nl) && (i == 0 || !ident_char(r.s[i - 1])) &&
		          (i + nl == r.len || !ident_char(r.s[i + nl]));
		if (!id)
			continue;
		size_t j = i + nl;
		while (j < r.len && (r.s[j] == ' ' || r.s[j] == '\t'))
			j++;
		if (j >= r.len || r.s[j] != '[')
			continue;
		for (size_t q = i + 1; q <= j; q++)
			ct_buf_putc(b, r.s[q]);
		ct_buf_printf(b, "%s, ", sub);
		i = j;
	}
	ct_buf_free(&r);
}

/* The range text of loop id ("q: 0 .. N") split into its bounds: *lo (a
 * malloc'd copy, "0" for a count) and *hi. False when it cannot be read. */
static bool range_bounds(const ct_kernel *k, int id, char **lo, char **hi)
{
	ct_buf b;
	ct_buf_init(&b);
	put_range(&b, k, id);
	const char *c = b.s ? strchr(b.s, ':') : NULL;
	*lo = *hi = NULL;
	if (!c) {
		ct_buf_free(&b);
		return false;
	}
	c++;
	const char *dots = strstr(c, "..");
	if (dots) {
		*lo = strndup(c, (size_t)(dots - c));
		*hi = strdup(dots + 2);
	} else {
		*lo = strdup("0");
		*hi = strdup(c);
	}
	ct_buf_free(&b);
	for (int i = 0; i < 2; i++) {
		char *t = i ? *hi : *lo;
		size_t n = t ? strlen(t) : 0;
		while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
			t[--n] = '\0';
		if (t)
			memmove(t, t + strspn(t, " \t"), strlen(t + strspn(t, " \t")) + 1);
	}
	return *lo && *hi;
}

/* The text of R's kernel with temp E->a expanded along the band's last
 * loop q: its declaration gets q's extent first, each access q (less q's
 * lower bound) as its first subscript; the band is written as its outer
 * loops around q, and, when distribute, q is written once per part of its
 * body (the copies renamed). NULL when it cannot be written so. */
static char *expanded_text(auto_run *R, const expand_temp *E, bool distribute)
{
	const ct_kernel *k = R->k;
	const char *s = k->text;
	size_t len = k->text_len;
	int q = E->band[E->nband - 1];
	const char *qn = k->indices[q].name;
	char *lo = NULL, *hi = NULL;
	if (!range_bounds(k, q, &lo, &hi)) {
		free(lo);
		free(hi);
		return NULL;
	}
	bool zero = !strcmp(lo, "0");
	const ir_array *ar = &k->arrays[E->a];
	size_t da = pos_offset(s, len, ar->ext_pos[0]);
	size_t a = pos_offset(s, len, E->top->pos), e = node_end(s, len, a, true);
	if (da >= a || strncmp(s + a, "for", 3) != 0) {
		free(lo);
		free(hi);
		return NULL;
	}
	ct_buf b;
	ct_buf_init(&b);
	for (size_t i = 0; i < da; i++)
		ct_buf_putc(&b, s[i]);
	if (zero)
		ct_buf_printf(&b, "%s, ", hi);
	else
		ct_buf_printf(&b, "(%s) - (%s), ", hi, lo);
	for (size_t i = da; i < a; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_puts(&b, "for (");
	for (int i = 0; i + 1 < E->nband; i++) {
		ct_buf_puts(&b, i ? ", " : "");
		put_range(&b, k, E->band[i]);
	}
	ct_buf_puts(&b, ") {\n");
	int parts = distribute ? E->inner->nbody : 1;
	for (int c = 0; c < parts; c++) {
		char suf[16];
		snprintf(suf, sizeof suf, "_%d", c);
		const char *to = c == 0 ? qn : fresh(k, &R->names, qn, suf);
		char sub[AUTO_NAME_MAX + 64];
		if (zero)
			snprintf(sub, sizeof sub, "%s", to);
		else
			snprintf(sub, sizeof sub, "%s - (%s)", to, lo);
		ct_buf r;
		ct_buf_init(&r);
		put_range(&r, k, q);
		const char *colon = r.s ? strchr(r.s, ':') : NULL;
		ct_buf_printf(&b, "  for (%s%s) {\n", to, colon ? colon : ": ?");
		ct_buf_free(&r);
		int from = distribute ? c : 0, upto = distribute ? c + 1 : E->inner->nbody;
		for (int y = from; y < upto; y++) {
			const ir_node *x = E->inner->body[y];
			size_t pa = pos_offset(s, len, x->pos);
			size_t pe = node_end(s, len, pa, x->kind == ND_FOR);
			ct_buf pb;
			ct_buf_init(&pb);
			put_expanded(&pb, s, pa, pe, &qn, &to, 1, ar->name, sub);
			ct_buf_puts(&b, "    ");
			for (size_t i = 0; i < pb.len; i++) {
				ct_buf_putc(&b, pb.s[i]);
				if (pb.s[i] == '\n')
					ct_buf_puts(&b, "  ");
			}
			ct_buf_puts(&b, "\n");
			ct_buf_free(&pb);
		}
		ct_buf_puts(&b, "  }\n");
	}
	ct_buf_puts(&b, "}");
	for (size_t i = e; i < len; i++)
		ct_buf_putc(&b, s[i]);
	free(lo);
	free(hi);
	return ct_buf_take(&b);
}

/* The loop of index `name` in t's tree (its first version), or NULL. */
static const lt_node *tree_loop(const ct_kernel *t, const ct_looptree *tree, const char *name)
{
	for (int i = 0; i < t->nindices; i++)
		if (!strcmp(t->indices[i].name, name)) {
			const lt_node *nodes[8];
			int n = 0;
			for (int r = 0; r < tree->nroots; r++)
				find_loops(tree->roots[r], i, nodes, &n, 8);
			return n > 0 ? nodes[0] : NULL;
		}
	return NULL;
}

/* Whether the expansion keeps the kernel's meaning, asked of t1 (the text
 * expanded, not distributed): the temp is private to q's iterations
 * (dep_temp_private: each read follows a write of its element in the same
 * iteration, so giving each iteration its own row changes no value read),
 * and q's parts may run one after another (dep_parts_ordered, the loops
 * around q kept). 1 yes, 0 no, -1 unknown. */
static int expansion_legal(auto_run *R, const expand_temp *E, ct_kernel *t1)
{
	const char *qn = R->k->indices[E->band[E->nband - 1]].name;
	int a = -1;
	for (int i = 0; i < t1->narrays; i++)
		if (!strcmp(t1->arrays[i].name, R->k->arrays[E->a].name))
			a = i;
	dep_info *d = a >= 0 ? dep_compute(t1) : NULL;
	ct_looptree *tree = d ? lt_build_loops(t1, false) : NULL;
	const lt_node *x = tree ? tree_loop(t1, tree, qn) : NULL;
	const ir_node *qf = NULL;
	for (int i = 0; i < t1->nindices; i++)
		if (!strcmp(t1->indices[i].name, qn))
			qf = t1->indices[i].loop;
	int r = -1;
	if (x && qf && qf->kind == ND_FOR && qf->nidx == 1) {
		r = dep_temp_private(d, tree, x, a);
		if (r == 1)
			r = dep_parts_ordered(d, qf->body, qf->nbody, E->nband - 1);
	}
	ct_looptree_free(tree);
	dep_free(d);
	ct_ctx_clear_error(R->tctx);
	return r;
}

/* Whether a part of t2 (the text expanded and distributed) is a sum into
 * the temp that a register tile takes with q's copy as its rows: a band
 * headed by q's copy, gemm-shaped (gemm_shape), its rows that copy. */
static bool expansion_tiles(auto_run *R, const expand_temp *E, ct_kernel *t2)
{
	const char *name = R->k->arrays[E->a].name;
	const ir_node *top = NULL;
	for (int i = 0; i < t2->nbody && !top; i++)
		if (t2->body[i]->kind == ND_FOR && t2->body[i]->pos.line == E->top->pos.line)
			top = t2->body[i];
	if (!top)
		return false;
	int64_t *pv = calloc((size_t)t2->nparams + 1, sizeof *pv);
	if (!pv)
		return false;
	ir_param_values(t2, pv);
	bool tiles = false;
	for (int c = 0; c < top->nbody && !tiles; c++) {
		const ir_node *y = top->body[c];
		if (y->kind != ND_FOR)
			continue;
		auto_nest *n = calloc(1, sizeof *n);
		if (!n)
			break;
		nest_init(t2, pv, &R->m, y, n);
		auto_gemm g;
		tiles = n->stmt && !strcmp(t2->arrays[n->stmt->lhs->id].name, name) && gemm_shape(t2, &R->m, n, &g) &&
		        g.u == 0;
		free(n);
	}
	free(pv);
	return tiles;
}

/* doitgen's choice: a temp written and read per iteration of a nest's band
 * (S[p] per (r, q)), each read after a write of its element in the same
 * iteration, expanded along the band's innermost loop q (S[q, p]) and q
 * distributed over the parts of its body, when a part is then a sum into
 * the temp that a register tile takes with q as its rows (the sum, one
 * vector-matrix product per (r, q), becomes a matrix product per r) and
 * the expanded temp fits in half of L2 (it is written and read back per
 * iteration of the loops around q). One temp per nest. CT_OK with *text
 * NULL when nothing was expanded. */
static ct_status try_expand_temps(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	for (int i = 0; i < k->nbody && !*text; i++) {
		if (k->body[i]->kind != ND_FOR)
			continue;
		auto_nest *n = calloc(1, sizeof *n);
		if (!n)
			break;
		nest_init(k, R->pv, &R->m, k->body[i], n);
		expand_temp E;
		memset(&E, 0, sizeof E);
		E.top = n->top;
		E.inner = n->inner;
		E.nband = n->nband;
		memcpy(E.band, n->band, sizeof E.band);
		free(n);
		int q = E.nband >= 2 ? E.band[E.nband - 1] : -1;
		bool shape = q >= 0 && E.inner->nbody >= 2 && E.inner->nidx > 0 && !stepped(k, E.inner) &&
		             k->indices[q].nlo == 0 && k->indices[q].nhi == 0;
		for (int c = 0; shape && c < E.inner->nbody; c++)
			shape = E.inner->body[c]->kind == ND_STMT || E.inner->body[c]->kind == ND_FOR;
		for (const ir_node *x = E.top; shape && x != E.inner; x = x->body[0])
			shape = !stepped(k, x);
		for (int a = 0; shape && a < k->narrays && !*text; a++) {
			if (!expand_candidate(R, &E, a))
				continue;
			E.a = a;
			int64_t trips = index_trip(k, R->pv, q), bytes = array_bytes(k, R->pv, a);
			E.bytes = bytes > 0 && trips < INT64_MAX / bytes ? bytes * trips : 0;
			if (E.bytes <= 0 || (double)E.bytes > AUTO_CACHE_SHARE * (double)cache_bytes(&R->m, 1))
				continue;
			auto_names keep = R->names;
			char *t1s = expanded_text(R, &E, false);
			char *t2s = t1s ? expanded_text(R, &E, true) : NULL;
			ct_ctx *c1 = NULL, *c2 = NULL;
			ct_kernel *t1 = t2s ? trial_parse(R->tctx, R->k, t1s, &c1, NULL, 0) : NULL;
			ct_kernel *t2 = t1 ? trial_parse(R->tctx, R->k, t2s, &c2, NULL, 0) : NULL;
			ct_ctx_clear_error(R->tctx);
			if (t2 && expansion_tiles(R, &E, t2)) {
				if (expansion_legal(R, &E, t1) == 1) {
					char note[1024];
					snprintf(note, sizeof note,
					         "# the temp %s of the nest at line %d is expanded along %s (%s[%s, ..], %lld KiB): it is\n"
					         "#   written and read per iteration of (%s), each read after a write of its element in\n"
					         "#   the same iteration (the dependence analysis), so each %s may have its own; then %s is\n"
					         "#   distributed over its %d parts (legal: no dependence from a later part to an earlier\n"
					         "#   one) and the sum into %s is a matrix product that a register tile takes, rows %s\n",
					         k->arrays[a].name, E.top->pos.line, k->indices[q].name, k->arrays[a].name,
					         k->indices[q].name, (long long)(E.bytes >> 10), k->indices[q].name,
					         k->indices[q].name, k->indices[q].name, E.inner->nbody, k->arrays[a].name,
					         k->indices[q].name);
					/* the copies of q ("&name"): not fused again as sweeps along their rows */
					ct_buf kb, all;
					ct_buf_init(&kb);
					ct_buf_init(&all);
					ct_buf_puts(&kb, R->keep ? R->keep : "");
					for (int c = 0; c < t2->nindices; c++)
						if (t2->indices[c].loop && t2->indices[c].loop->parent &&
						    t2->indices[c].loop->parent->pos.line == E.top->pos.line &&
						    t2->indices[c].loop->parent->kind == ND_FOR)
							ct_buf_printf(&kb, " &%s", t2->indices[c].name);
					ct_buf_puts(&all, before ? before : "");
					ct_buf_puts(&all, note);
					auto_rewritten(R, t2, depth, text, all.s, kb.s);
					ct_buf_free(&kb);
					ct_buf_free(&all);
				} else
					ct_buf_printf(&R->why,
					              "# the temp %s of the nest at line %d is not expanded along %s: the dependence\n"
					              "#   analysis does not show it private to %s's iterations with its parts in order\n",
					              k->arrays[a].name, E.top->pos.line, k->indices[q].name, k->indices[q].name);
			}
			if (!*text)
				R->names = keep;
			ct_kernel_free(t1);
			ct_kernel_free(t2);
			ct_ctx_free(c1);
			ct_ctx_free(c2);
			free(t1s);
			free(t2s);
		}
	}
	return CT_OK;
}


/* ------------------------------------------------------------ loop fusion of sweeps (stencils) */

/* Sweeps one fusion may join, and accesses of one array per sweep it reads. */
#define AUTO_MAX_FUSE 16
#define AUTO_FUSE_ACC 64

/* The row loop of sweep y, a child of a loop's body: its outermost index
 * when y is a for over rows (a rectangular, unit-step outer loop with
 * loops inside it: each row is a loop's work, so the fused row loop keeps
 * the inner loops' vectors); -1 otherwise. */
static int fuse_row_index(const ct_kernel *k, const ir_node *y)
{
	if (y->kind != ND_FOR || y->nidx < 1)
		return -1;
	const ir_index *ix = &k->indices[y->idx[0]];
	if (ix->kind != IX_LOOP || ir_index_affine(ix) || ix->step_expr)
		return -1;
	if (y->nidx < 2 && !has_for(y))
		return -1;
	return y->idx[0];
}

/* The accesses of y to array a, and whether each writes (a statement's left side). */
static int fuse_accesses(const ir_node *y, int a, const ir_expr **out, bool *wr, int n, int cap)
{
	if (y->kind == ND_STMT && y->lhs && y->lhs->id == a && n < cap) {
		wr[n] = true;
		out[n++] = y->lhs;
	}
	int m = n;
	n = expr_accesses(y->rhs, a, out, n, cap);
	n = expr_accesses(y->cond, a, out, n, cap);
	for (int i = m; i < n; i++)
		wr[i] = false;
	for (int i = 0; i < y->nbody; i++)
		n = fuse_accesses(y->body[i], a, out, wr, n, cap);
	for (int i = 0; i < y->nels; i++)
		n = fuse_accesses(y->els[i], a, out, wr, n, cap);
	return n;
}

/* A sweep at one fixed row (fdtd-2d's source row `ey[0, j] = fict[t]`):
 * its row subscripts are constants, as if its row index were 0. */
#define FUSE_CONST (-2)

/* The dimensions of array a that every access of acc[0..n) subscripts as
 * the row index o plus a constant (o = FUSE_CONST: as a constant) (a bit
 * per dimension). */
static unsigned row_dims(const ct_kernel *k, const ir_expr *const *acc, int n, int o)
{
	unsigned mask = 0;
	for (int d = 0; d < k->arrays[acc[0]->id].rank && d < 32; d++) {
		bool all = true;
		for (int i = 0; i < n && all; i++) {
			aff s = acc[i]->sub[d];
			all = o == FUSE_CONST ? s.n == 0
			                      : s.n == 1 && s.t[0].kind == AFF_INDEX && s.t[0].id == o && s.t[0].coef == 1;
		}
		if (all)
			mask |= 1u << d;
	}
	return mask;
}

/* Whether x and y have the same terms (their difference is a constant). */
static bool aff_same_terms(aff x, aff y)
{
	x.c = 0;
	y.c = 0;
	return aff_equal(x, y);
}

/* A run of sweeps of one loop's body fused along their row loops: sweep s
 * of the run runs its row r in the fused loop's iteration r + shift[s]. */
typedef struct auto_fuse {
	const ir_node *loop;              /* the loop whose body holds the sweeps */
	int first, count;                 /* loop->body[first .. first + count - 1] */
	int row[AUTO_MAX_FUSE];           /* each sweep's row index, or FUSE_CONST */
	int ref;                          /* the first sweep over rows: the bounds are its plus constants */
	int64_t shift[AUTO_MAX_FUSE];
	int64_t lo_min, hi_max;           /* the fused range: first sweep's lo + lo_min .. its hi + hi_max */
	int64_t window, footprint;        /* bytes live across the fused rows; bytes the sweeps touch */
	int64_t row_bytes;                /* one row of every array with a row dimension */
	int level;                        /* the cache level the window fits and the sweeps overflow */
	int64_t tshift, tblock;           /* time blocks: rows per time step, steps per block (0: none) */
} auto_fuse;

/* The longest run of sweeps from loop->body[first] that can be fused,
 * with its shifts (the smallest that keep every dependence). Legality,
 * sufficient: every array written by one sweep of the run and used by
 * another is subscripted in some dimension, by every access of both, as
 * the sweep's row index plus a constant. Then sweep s's row x and sweep
 * s''s row x' (s before s') touch one element only when x' = x + a - b
 * (a, b: the constants), and the fused order runs s's row before s''s
 * when x + shift[s] <= x' + shift[s'], that is shift[s'] >= shift[s] + b - a:
 * with that for every pair that writes, every dependence between the
 * sweeps keeps its direction; within a sweep the rows keep their order.
 * The row loops' bounds must differ by constants. The run's count is 1
 * when nothing can be fused. */
static void fuse_run(const ct_kernel *k, const ir_node *loop, int first, auto_fuse *F)
{
	memset(F, 0, sizeof *F);
	F->loop = loop;
	F->first = first;
	F->count = 1;
	F->ref = -1;
	const ir_index *x0 = NULL;
	for (int s2 = 0; first + s2 < loop->nbody && s2 < AUTO_MAX_FUSE; s2++) {
		const ir_node *y2 = loop->body[first + s2];
		int o2 = fuse_row_index(k, y2);
		if (o2 < 0 && y2->kind == ND_FOR)
			o2 = FUSE_CONST;
		if (o2 == -1 || (o2 >= 0 && x0 && (!aff_same_terms(k->indices[o2].lo, x0->lo) ||
		                                   !aff_same_terms(k->indices[o2].hi, x0->hi))))
			return;
		if (o2 >= 0 && !x0) {
			x0 = &k->indices[o2];
			F->ref = s2;
		}
		F->row[s2] = o2;
		int64_t need = 0;
		for (int s = 0; s < s2; s++) {
			const ir_node *y = loop->body[first + s];
			int o = F->row[s];
			for (int a = 0; a < k->narrays; a++) {
				const ir_expr *p[AUTO_FUSE_ACC], *q[AUTO_FUSE_ACC];
				bool pw[AUTO_FUSE_ACC], qw[AUTO_FUSE_ACC];
				int np = fuse_accesses(y, a, p, pw, 0, AUTO_FUSE_ACC);
				int nq = fuse_accesses(y2, a, q, qw, 0, AUTO_FUSE_ACC);
				if (np == 0 || nq == 0 || !(writes(y, a) || writes(y2, a)))
					continue;
				unsigned m = np < AUTO_FUSE_ACC && nq < AUTO_FUSE_ACC
				                 ? row_dims(k, p, np, o) & row_dims(k, q, nq, o2)
				                 : 0;
				if (!m)
					return;
				int d = 0;
				while (!(m & (1u << d)))
					d++;
				for (int i = 0; i < np; i++)
					for (int j = 0; j < nq; j++)
						if ((pw[i] || qw[j]) && F->shift[s] + q[j]->sub[d].c - p[i]->sub[d].c > need)
							need = F->shift[s] + q[j]->sub[d].c - p[i]->sub[d].c;
			}
		}
		F->shift[s2] = need;
		/* a run of one sweep fuses nothing; it needs a sweep over rows */
		F->count = s2 == 0 || F->ref < 0 ? 1 : s2 + 1;
	}
}

/* The run's fused range, live window and footprint at the kernel's sizes
 * (pv), and the cache level where fusing saves misses: the smallest whose
 * size holds the window (the rows between a row's first use by one sweep
 * and its last use by another, each array's row the bytes of one value of
 * its row dimension) while the sweeps together touch more than it holds,
 * so that unfused each sweep finds the rows the one before it used gone
 * from that level. level -1: no such level. */
static void fuse_measure(const ct_kernel *k, const int64_t *pv, const auto_machine *m, auto_fuse *F)
{
	const ir_node *const *ys = (const ir_node *const *)F->loop->body + F->first;
	const ir_index *x0 = &k->indices[F->row[F->ref]];
	F->lo_min = INT64_MAX, F->hi_max = INT64_MIN;
	bool inside = true;
	for (int s = 0; s < F->count; s++) {
		if (F->row[s] == FUSE_CONST) {
			/* its one row 0 is fused row shift: below it when the lower bound is a number */
			inside = inside && aff_is_const(x0->lo);
			int64_t lo = F->shift[s] - x0->lo.c;
			F->lo_min = lo < F->lo_min ? lo : F->lo_min;
			continue;
		}
		const ir_index *x = &k->indices[F->row[s]];
		int64_t lo = x->lo.c - x0->lo.c + F->shift[s], hi = x->hi.c - x0->hi.c + F->shift[s];
		F->lo_min = lo < F->lo_min ? lo : F->lo_min;
		F->hi_max = hi > F->hi_max ? hi : F->hi_max;
	}
	/* and above it for every size: the upper bound a number, or an array's extent (at least 1) plus
	 * a constant */
	for (int s = 0; s < F->count && inside; s++) {
		if (F->row[s] != FUSE_CONST)
			continue;
		bool ok = aff_is_const(x0->hi) && x0->hi.c + F->hi_max >= F->shift[s] + 1;
		for (int a = 0; a < k->narrays && !ok; a++)
			for (int d = 0; d < k->arrays[a].rank && !ok; d++)
				ok = aff_same_terms(k->arrays[a].ext[d], x0->hi) &&
				     x0->hi.c + F->hi_max - k->arrays[a].ext[d].c >= F->shift[s];
		inside = ok;
	}
	F->window = F->footprint = F->row_bytes = 0;
	for (int a = 0; a < k->narrays; a++) {
		int64_t bytes = array_bytes(k, pv, a);
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		unsigned dims = ~0u;
		bool used = false;
		for (int s = 0; s < F->count; s++) {
			const ir_expr *p[AUTO_FUSE_ACC];
			bool pw[AUTO_FUSE_ACC];
			int np = fuse_accesses(ys[s], a, p, pw, 0, AUTO_FUSE_ACC);
			if (np == 0)
				continue;
			used = true;
			dims &= np < AUTO_FUSE_ACC ? row_dims(k, p, np, F->row[s]) : 0;
			for (int d = 0; dims && d < 32; d++) {
				if (!(dims & (1u << d)))
					continue;
				for (int i = 0; i < np; i++) {
					/* row x + c of sweep s is used in fused iteration x + shift: row r at r - c + shift */
					int64_t at = F->shift[s] - p[i]->sub[d].c;
					lo = at < lo ? at : lo;
					hi = at > hi ? at : hi;
				}
				break;
			}
		}
		if (!used)
			continue;
		F->footprint += bytes;
		int d = 0;
		while (dims && d < 32 && !(dims & (1u << d)))
			d++;
		bool ok = true;
		int64_t ext = dims && d < k->arrays[a].rank ? aff_eval(k->arrays[a].ext[d], pv, NULL, &ok) : 0;
		/* an array without a common row dimension (a source read by one sweep) counts whole */
		F->window += ext > 0 && ok && lo <= hi ? bytes / ext * (hi - lo + 1) : bytes;
		F->row_bytes += ext > 0 && ok && lo <= hi ? bytes / ext : 0;
	}
	F->level = -1;
	for (int l = 0; l < m->ncaches && inside; l++)
		if (F->window <= cache_bytes(m, l)) {
			if (F->footprint > cache_bytes(m, l))
				F->level = l;
			break;
		}
}

/* Time blocks of a run that is the whole body of a one-index loop (the
 * time loop t): the fused row loop moves out of TB steps of t, and step u
 * of a block runs its rows tshift rows later than step u - 1 (a skewed
 * wavefront over the rows). Legal when every pair of sweeps s, s' (s' =
 * s included) that share an array one of them writes keeps its order
 * from a step to the next: sweep s's row x at step u meets sweep s''s row
 * x' = x + a - b at a later step u', and the blocked order runs it first
 * when x + shift[s] + u tshift <= x' + shift[s'] + u' tshift, which holds
 * for every u' > u when tshift >= 0 and tshift >= shift[s] - shift[s'] +
 * b - a. The block TB: the most steps whose window (the fused window plus
 * tshift rows of every array per further step) fills at most
 * AUTO_CACHE_SHARE of the level that holds the fused window; none when
 * that is under 2 steps. */
static void fuse_time(const ct_kernel *k, const int64_t *pv, const auto_machine *m, auto_fuse *F)
{
	F->tshift = F->tblock = 0;
	const ir_node *loop = F->loop;
	/* the block is a param of the file: it goes after the last param line */
	if (F->level < 0 || F->first != 0 || F->count != loop->nbody || loop->nidx != 1 || k->nparams == 0)
		return;
	const ir_index *tx = &k->indices[loop->idx[0]];
	if (tx->kind != IX_LOOP || ir_index_affine(tx) || tx->step_expr)
		return;
	int64_t D = 0;
	for (int s = 0; s < F->count; s++)
		for (int s2 = 0; s2 < F->count; s2++) {
			const ir_node *y = loop->body[s], *y2 = loop->body[s2];
			for (int a = 0; a < k->narrays; a++) {
				const ir_expr *p[AUTO_FUSE_ACC], *q[AUTO_FUSE_ACC];
				bool pw[AUTO_FUSE_ACC], qw[AUTO_FUSE_ACC];
				int np = fuse_accesses(y, a, p, pw, 0, AUTO_FUSE_ACC);
				int nq = fuse_accesses(y2, a, q, qw, 0, AUTO_FUSE_ACC);
				if (np == 0 || nq == 0 || !(writes(y, a) || writes(y2, a)))
					continue;
				unsigned mk = np < AUTO_FUSE_ACC && nq < AUTO_FUSE_ACC
				                  ? row_dims(k, p, np, F->row[s]) & row_dims(k, q, nq, F->row[s2])
				                  : 0;
				if (!mk)
					return;
				int d = 0;
				while (!(mk & (1u << d)))
					d++;
				for (int i = 0; i < np; i++)
					for (int j = 0; j < nq; j++) {
						int64_t need = F->shift[s] - F->shift[s2] + q[j]->sub[d].c - p[i]->sub[d].c;
						if ((pw[i] || qw[j]) && need > D)
							D = need;
					}
			}
		}
	int64_t steps = index_trip(k, pv, loop->idx[0]);
	int64_t room = (int64_t)((double)cache_bytes(m, F->level) * AUTO_CACHE_SHARE) - F->window;
	int64_t per = D * F->row_bytes;
	int64_t tb = per > 0 && room > 0 ? 1 + room / per : 0;
	if (tb > steps)
		tb = steps;
	if (D < 1 || tb < 2)
		return;
	F->tshift = D;
	F->tblock = tb;
}

/* f plus the constant e as bound text: "f + e", "f - |e|" or "f". */
static void put_shifted(ct_buf *b, const char *f, int64_t e)
{
	if (e > 0)
		ct_buf_printf(b, "%s + %lld", f, (long long)e);
	else if (e < 0)
		ct_buf_printf(b, "%s - %lld", f, (long long)-e);
	else
		ct_buf_puts(b, f);
}

/* The sweeps of run F, each with its row loop running the one row
 * f - shift (+ skew, the time blocks' text) when that is in its range;
 * the rest of each sweep (its inner loops, its body) as written, its
 * lines indented by pad more. *e: where the last sweep's text ends. */
static bool put_sweeps(ct_buf *b, const ct_kernel *k, const auto_fuse *F, const char *f, const char *skew,
                       const char *pad, size_t *e)
{
	const char *s = k->text;
	size_t len = k->text_len;
	const ir_node *const *ys = (const ir_node *const *)F->loop->body + F->first;
	const ir_index *x0 = &k->indices[F->row[F->ref]];
	for (int c = 0; c < F->count; c++) {
		const ir_node *y = ys[c];
		size_t ya = pos_offset(s, len, y->pos);
		*e = node_end(s, len, ya, true);
		size_t ind = ya;
		while (ind > 0 && (s[ind - 1] == ' ' || s[ind - 1] == '\t'))
			ind--;
		if (F->row[c] == FUSE_CONST) {
			/* the sweep at one row: in the fused iteration of that row */
			ct_buf_puts(b, pad);
			for (size_t i = ind; i < ya; i++)
				ct_buf_putc(b, s[i]);
			ct_buf_puts(b, "if (");
			put_shifted(b, f, -F->shift[c]);
			ct_buf_printf(b, "%s == 0) {\n%s  ", skew, pad);
			for (size_t i = ind; i < ya; i++)
				ct_buf_putc(b, s[i]);
			for (size_t i = ya; i < *e; i++) {
				ct_buf_putc(b, s[i]);
				if (s[i] == '\n' && i + 1 < *e && s[i + 1] != '\n')
					ct_buf_printf(b, "%s  ", pad);
			}
			ct_buf_printf(b, "\n%s", pad);
			for (size_t i = ind; i < ya; i++)
				ct_buf_putc(b, s[i]);
			ct_buf_puts(b, "}\n");
			continue;
		}
		const ir_index *x = &k->indices[F->row[c]];
		const char *open = strncmp(s + ya, "for", 3) == 0 ? memchr(s + ya, '(', *e - ya) : NULL;
		if (!open)
			return false;
		/* the first index's declaration ends at the first ',' or ')' outside parentheses */
		size_t q = (size_t)(open - s) + 1;
		for (int depth = 0; q < *e; q++) {
			if (s[q] == '(')
				depth++;
			else if (s[q] == ')' && depth-- == 0)
				break;
			else if (s[q] == ',' && depth == 0)
				break;
		}
		/* with a skew every row bound is needed: later steps reach past the range */
		bool lo_b = *skew || x->lo.c - x0->lo.c + F->shift[c] > F->lo_min;
		bool hi_b = *skew || x->hi.c - x0->hi.c + F->shift[c] < F->hi_max;
		ct_buf_puts(b, pad);
		for (size_t i = ind; i < ya; i++)
			ct_buf_putc(b, s[i]);
		ct_buf_printf(b, "for (%s: ", x->name);
		if (lo_b) {
			ct_buf_puts(b, "max(");
			lang_aff_print(b, k, x->lo);
			ct_buf_puts(b, ", ");
		}
		put_shifted(b, f, -F->shift[c]);
		ct_buf_puts(b, skew);
		ct_buf_puts(b, lo_b ? ") .. " : " .. ");
		if (hi_b) {
			ct_buf_puts(b, "min(");
			lang_aff_print(b, k, x->hi);
			ct_buf_puts(b, ", ");
		}
		put_shifted(b, f, 1 - F->shift[c]);
		ct_buf_puts(b, skew);
		ct_buf_puts(b, hi_b ? ")" : "");
		for (size_t i = q; i < *e; i++) {
			ct_buf_putc(b, s[i]);
			if (s[i] == '\n' && i + 1 < *e && s[i + 1] != '\n')
				ct_buf_puts(b, pad);
		}
		ct_buf_puts(b, "\n");
	}
	return true;
}

/* The text of k with run F fused: one loop f over the union of the
 * sweeps' (shifted) row ranges, and in it each sweep with its row loop
 * running the one row f - shift when that is in its range (put_sweeps).
 * With time blocks (F->tblock), the time loop t becomes blocks of TB
 * steps (a param, F->tblock), and in each block the fused row loop runs
 * the block's steps, step t's rows tshift * (t - block start) later:
 * `for (tb: lo .. hi step TB) { for (f: ..) { for (t: tb .. min(tb + TB, hi)) { sweeps } } }`.
 * *fname, *tbname: the names made up. NULL: it cannot be written. */
static char *fused_text(auto_run *R, const auto_fuse *F, const char **fname, const char **tbname)
{
	const ct_kernel *k = R->k;
	const char *s = k->text;
	size_t len = k->text_len;
	const ir_node *const *ys = (const ir_node *const *)F->loop->body + F->first;
	const ir_index *x0 = &k->indices[F->row[F->ref]];
	const ir_index *tx = &k->indices[F->loop->idx[0]];
	bool blocked = F->tblock > 1 && k->nparams > 0;
	const char *f = fresh(k, &R->names, x0->name, "_f");
	const char *tb = blocked ? fresh(k, &R->names, tx->name, "_b") : "";
	char pname[AUTO_NAME_MAX + 8];
	snprintf(pname, sizeof pname, "TB_%s", tx->name);
	const char *P = blocked ? fresh(k, &R->names, pname, "") : "";
	*fname = f;
	*tbname = P;
	/* blocked: the whole time loop is rewritten, else the run of sweeps */
	size_t a0 = pos_offset(s, len, blocked ? F->loop->pos : ys[0]->pos);
	size_t ind = a0;
	while (ind > 0 && (s[ind - 1] == ' ' || s[ind - 1] == '\t'))
		ind--;
	ct_buf b;
	ct_buf_init(&b);
	size_t from = 0;
	if (blocked) {
		/* the block param after the last param line */
		size_t pl = pos_offset(s, len, k->params[k->nparams - 1].pos);
		while (pl < len && s[pl] != '\n')
			pl++;
		for (; from < pl && from < a0; from++)
			ct_buf_putc(&b, s[from]);
		ct_buf_printf(&b, "\nparam %s = %lld", P, (long long)F->tblock);
	}
	for (size_t i = from; i < a0; i++)
		ct_buf_putc(&b, s[i]);
	aff lo = x0->lo, hi = x0->hi;
	lo.c += F->lo_min;
	hi.c += F->hi_max - (blocked ? F->tshift : 0);
	char skew[3 * AUTO_NAME_MAX + 64] = "";
	const char *pad = "  ";
	if (blocked) {
		ct_buf_printf(&b, "for (%s: ", tb);
		lang_aff_print(&b, k, tx->lo);
		ct_buf_puts(&b, " .. ");
		lang_aff_print(&b, k, tx->hi);
		ct_buf_printf(&b, " step %s) {\n  ", P);
		for (size_t i = ind; i < a0; i++)
			ct_buf_putc(&b, s[i]);
		char co[32] = "";
		if (F->tshift != 1)
			snprintf(co, sizeof co, "%lld*", (long long)F->tshift);
		snprintf(skew, sizeof skew, " - %s%s + %s%s", co, tx->name, co, tb);
		pad = "    ";
	}
	ct_buf_printf(&b, "for (%s: ", f);
	lang_aff_print(&b, k, lo);
	ct_buf_puts(&b, " .. ");
	lang_aff_print(&b, k, hi);
	if (blocked && F->tshift == 1)
		ct_buf_printf(&b, " + %s", P);
	else if (blocked)
		ct_buf_printf(&b, " + %lld*%s", (long long)F->tshift, P);
	ct_buf_puts(&b, ") {\n");
	if (blocked) {
		ct_buf_puts(&b, "    ");
		for (size_t i = ind; i < a0; i++)
			ct_buf_putc(&b, s[i]);
		ct_buf_printf(&b, "for (%s: %s .. min(%s + %s, ", tx->name, tb, tb, P);
		lang_aff_print(&b, k, tx->hi);
		ct_buf_puts(&b, ")) {\n");
	}
	size_t e = a0;
	bool ok = put_sweeps(&b, k, F, f, skew, pad, &e);
	if (blocked) {
		/* close the step loop and the row loop; the time loop's own brace closes the blocks */
		ct_buf_puts(&b, "    ");
		for (size_t i = ind; i < a0; i++)
			ct_buf_putc(&b, s[i]);
		ct_buf_puts(&b, "}\n  ");
		for (size_t i = ind; i < a0; i++)
			ct_buf_putc(&b, s[i]);
		ct_buf_puts(&b, "}\n");
		e = node_end(s, len, a0, true) - 1;
		for (size_t i = ind; i < a0; i++)
			ct_buf_putc(&b, s[i]);
	} else {
		for (size_t i = ind; i < a0; i++)
			ct_buf_putc(&b, s[i]);
	}
	ct_buf_puts(&b, "}");
	for (size_t i = blocked ? e + 1 : e; i < len; i++)
		ct_buf_putc(&b, s[i]);
	if (!ok) {
		ct_buf_free(&b);
		return NULL;
	}
	return ct_buf_take(&b);
}

/* Whether the loops under x (x included) hold one that keep marks as a jammed block's rows
 * ("^name", rowfuse_jam). */
static bool holds_marked(const ct_kernel *k, const char *keep, char mark, const ir_node *x)
{
	if (x->kind == ND_FOR)
		for (int i = 0; i < x->nidx; i++)
			if (keep_marks(keep, mark, k->indices[x->idx[i]].name))
				return true;
	for (int i = 0; i < x->nbody; i++)
		if (holds_marked(k, keep, mark, x->body[i]))
			return true;
	for (int i = 0; i < x->nels; i++)
		if (holds_marked(k, keep, mark, x->els[i]))
			return true;
	return false;
}

static bool holds_jam(const ct_kernel *k, const char *keep, const ir_node *x)
{
	return holds_marked(k, keep, '^', x);
}

/* Stencil sweeps in a time loop (jacobi-2d's B from A, then A from B):
 * each sweep streams its arrays through the caches, and when they are
 * larger than a level the next sweep finds nothing of them there. Fused
 * along their rows with the shifts that keep the dependences (fuse_run),
 * a row is used by every sweep while it is still in that level. Taken for
 * the first run of the file that saves misses at some level (fuse_measure)
 * and whose sweeps would not run on threads (a fused row loop carries);
 * the fused kernel is then planned as any other. CT_OK with *text NULL
 * when nothing was fused. */
static ct_status try_fuse(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	for (int i = 0; i < k->nbody; i++) {
		const ir_node *x = k->body[i];
		/* a jammed block of rows (rowfuse_jam marks them "^name"): its loops over the columns
		 * are the passes' vector loops, not sweeps; fused with a lag of 0 each became a loop of
		 * one iteration inside a scalar one (mvt on 2 threads ran 10x slower). Only that nest
		 * is left: another top-level nest of the file may still hold sweeps to fuse. */
		if (x->kind != ND_FOR || holds_jam(k, R->keep, x) || holds_marked(k, R->keep, '&', x))
			continue;
		for (int first = 0; first + 1 < x->nbody;) {
			auto_fuse F;
			fuse_run(k, x, first, &F);
			if (F.count < 2) {
				first++;
				continue;
			}
			bool parallel = false;
			for (int s = 0; s < F.count; s++)
				parallel = parallel || (R->m.threads > 1 && node_work(k, R->pv, x->body[first + s]) >=
				                                                 (int64_t)AUTO_MIN_INNER_PAR_WORK * R->m.threads);
			fuse_measure(k, R->pv, &R->m, &F);
			if (parallel || F.level < 0) {
				/* a leading sweep at one row may be what kept the run out: try without it */
				first += F.row[0] == FUSE_CONST ? 1 : F.count;
				continue;
			}
			auto_names keep = R->names;
			const char *fname = NULL;
			fuse_time(k, R->pv, &R->m, &F);
			const char *tbname = NULL;
			char *ft = fused_text(R, &F, &fname, &tbname);
			ct_ctx *cx = NULL;
			ct_kernel *t = ft ? trial_parse(R->tctx, R->k, ft, &cx, NULL, 0) : NULL;
			ct_status st = CT_OK;
			if (t) {
				ct_buf note;
				ct_buf_init(&note);
				ct_buf_puts(&note, before ? before : "");
				ct_buf_printf(&note, "# the %d sweeps at lines", F.count);
				for (int s = 0; s < F.count; s++)
					ct_buf_printf(&note, "%s %d", s ? "," : "", x->body[first + s]->pos.line);
				ct_buf_printf(&note, " are fused along their rows (loop %s; row shifts", fname);
				for (int s = 0; s < F.count; s++)
					ct_buf_printf(&note, "%s %lld", s ? "," : "", (long long)F.shift[s]);
				ct_buf_printf(&note,
				              "):\n#   apart, each sweep streams %lld KiB through L%d (%lld KiB), and the next finds "
				              "none of its rows there;\n#   fused, the rows in use span %lld KiB, which L%d holds; "
				              "legal: each row runs after the rows it depends on\n",
				              (long long)(F.footprint >> 10), F.level + 1,
				              (long long)(cache_bytes(&R->m, F.level) >> 10), (long long)(F.window >> 10),
				              F.level + 1);
				if (F.tblock > 1)
					ct_buf_printf(&note,
					              "#   and the time loop %s in blocks of %s = %lld steps, each step %lld rows after the "
					              "one before\n#   (a wavefront over the rows): the block's rows in use span %lld KiB, "
					              "at most half of L%d;\n#   legal: each step's rows run after the rows of earlier "
					              "steps they depend on\n",
					              k->indices[x->idx[0]].name, tbname, (long long)F.tblock, (long long)F.tshift,
					              (long long)((F.window + (F.tblock - 1) * F.tshift * F.row_bytes) >> 10),
					              F.level + 1);
				if (R->m.threads > 1)
					ct_buf_printf(&note, "#   (the sweeps are too small for %d threads; a fused row loop carries)\n",
					              R->m.threads);
				ct_buf kb;
				ct_buf_init(&kb);
				ct_buf_printf(&kb, "%s %s", R->keep ? R->keep : "", fname);
				auto_rewritten(R, t, depth, text, note.s, kb.s);
				ct_buf_free(&kb);
				ct_buf_free(&note);
			}
			ct_kernel_free(t);
			ct_ctx_free(cx);
			free(ft);
			if (*text)
				return st;
			R->names = keep;
			first += F.count;
		}
	}
	return CT_OK;
}

/* An in-place sweep whose every loop carries (Gauss-Seidel): its rows in a
 * wavefront (src/tune/wave.c, which proves it legal). The rewritten nest
 * keeps its order and gets `unroll` of its rows ("+name" in keep). CT_OK
 * with *text NULL when no nest qualifies. */
static ct_status try_wave(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	wave_machine wm = {R->m.fma_latency, R->m.fma_units, R->m.registers};
	for (int i = 0; i < k->nbody && !*text && k->nparams > 0; i++) {
		wave_plan W;
		if (k->body[i]->kind != ND_FOR || !wave_find(k, R->pv, &wm, k->body[i], &W))
			continue;
		auto_names keep = R->names;
		const char *rn = k->indices[W.row].name;
		char pn[AUTO_NAME_MAX + 8];
		snprintf(pn, sizeof pn, "U_%s", rn);
		wave_names nm = {fresh(k, &R->names, rn, "_b"), fresh(k, &R->names, rn, "_u"),
		                 fresh(k, &R->names, k->indices[W.col].name, "_w"), fresh(k, &R->names, pn, "")};
		wave_src src;
		src.nest_lo = pos_offset(k->text, k->text_len, W.top->pos);
		src.stmt_lo = pos_offset(k->text, k->text_len, W.stmt->pos);
		src.stmt_hi = node_end(k->text, k->text_len, src.stmt_lo, false);
		src.params_end = pos_offset(k->text, k->text_len, k->params[k->nparams - 1].pos);
		while (src.params_end < k->text_len && k->text[src.params_end] != '\n')
			src.params_end++;
		ct_buf note;
		ct_buf_init(&note);
		ct_buf_puts(&note, before ? before : "");
		char *wt = wave_text(k, &W, &nm, &src, &note);
		ct_ctx *cx = NULL;
		ct_kernel *t = wt ? trial_parse(R->tctx, R->k, wt, &cx, NULL, 0) : NULL;
		if (t) {
			ct_buf kb;
			ct_buf_init(&kb);
			ct_buf_printf(&kb, "%s %s %s %s +%s", R->keep ? R->keep : "", nm.block, nm.step, nm.row, nm.row);
			auto_rewritten(R, t, depth, text, note.s, kb.s);
			ct_buf_free(&kb);
		}
		ct_buf_free(&note);
		ct_kernel_free(t);
		ct_ctx_free(cx);
		free(wt);
		if (!*text)
			R->names = keep;
	}
	return CT_OK;
}

/* Whether nest x declares a loop named in keep (space-separated names):
 * a fused row loop, whose nest keeps the order fusion wrote (a reorder by
 * reuse could move the time steps out of it again, legal and slower). */
static bool holds_kept(const ct_kernel *k, const ir_node *x, const char *keep)
{
	if (!keep || x->kind != ND_FOR)
		return false;
	for (int i = 0; i < x->nidx; i++) {
		const char *nm = k->indices[x->idx[i]].name;
		size_t n = strlen(nm);
		for (const char *p = strstr(keep, nm); p; p = strstr(p + 1, nm))
			if ((p == keep || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
				return true;
	}
	for (int i = 0; i < x->nbody; i++)
		if (holds_kept(k, x->body[i], keep))
			return true;
	return false;
}

/* ------------------------------------------------------------ row fusion of matrix-vector passes */

/* Top-level nests one row fusion may join (members and the nests moved
 * before them). */
#define AUTO_MAX_ROWFUSE 8

/* One top-level nest as a pass over the rows of a rank-2 array: its row
 * index, the index of the loop over a row, and how its body is written
 * under the fused row loop. */
typedef struct auto_rowpass {
	int row, col;          /* kernel index ids */
	int array;             /* the streamed array (rank 2, read only here), -1 if none */
	bool swap;             /* a perfect band (col, row) whose sum is moved inside the row loop */
	bool whole;            /* the body inside the nest's braces is the row's body as written */
} auto_rowpass;

/* Whether subscript s is exactly index id (coefficient 1, no constant). */
static bool sub_is(aff s, int id)
{
	return s.c == 0 && s.n == 1 && s.t[0].kind == AFF_INDEX && s.t[0].id == id && s.t[0].coef == 1;
}

/* Whether every access of nest x to rank-2 array a is a[row, col] (row,
 * col: index ids), there is one, and x does not write a. */
static bool streams(const ct_kernel *k, const ir_node *x, int a, int row, int col)
{
	const ir_expr *acc[64];
	if (k->arrays[a].rank != 2 || writes(x, a))
		return false;
	int na = accesses_of(x, a, acc, 0, 64);
	if (na <= 0 || na >= 64)
		return false;
	for (int i = 0; i < na; i++)
		if (!sub_is(acc[i]->sub[0], row) || !sub_is(acc[i]->sub[1], col))
			return false;
	return true;
}

/* Whether index id is a rectangular unit-step loop. */
static bool plain_index(const ct_kernel *k, int id)
{
	const ir_index *x = &k->indices[id];
	return x->kind == IX_LOOP && !ir_index_affine(x) && x->step == 1 && ir_index_src_step(x) == 1;
}

/* Whether nodes body[0..n) are statements only. */
static bool stmts_only(ir_node *const *body, int n)
{
	for (int i = 0; i < n; i++)
		if (body[i]->kind != ND_STMT)
			return false;
	return n > 0;
}

/* The sum of a perfect band (col, row) may run inside the row loop (the
 * order (row, col)) when it is one `+=` / `-=` statement whose element
 * is one per col (its subscripts use no index but col, one of them col
 * alone, times a nonzero coefficient, plus params) and whose right-hand
 * side does not read its array: each element's updates then still run in
 * the order of row, and no other instance meets them (exact, even under
 * strict=true; `S[0] += ..` would add in another order). */
static bool swappable(const ct_kernel *k, const ir_node *st, int col)
{
	if (st->op != AS_ADD && st->op != AS_SUB)
		return false;
	bool one = false;
	for (int d = 0; d < k->arrays[st->lhs->id].rank; d++) {
		aff sd = st->lhs->sub[d];
		int nidx = 0;
		for (int i = 0; i < sd.n; i++)
			if (sd.t[i].kind == AFF_INDEX) {
				if (sd.t[i].id != col)
					return false;
				nidx++;
			}
		one = one || nidx == 1;
	}
	const ir_expr *acc[2];
	return one && expr_accesses(st->rhs, st->lhs->id, acc, 0, 2) == 0;
}

/* Nest x as a pass over the rows of a streamed array (P->array -1: it is
 * not one): `for (i) { ..A[i, j].. }` with j a loop inside it, a perfect
 * band `for (i, j)` of statements reading A[i, j], or a perfect band
 * `for (j, i)` of one sum reading A[i, j] that may run in the order (i, j). */
static void row_pass(const ct_kernel *k, const ir_node *x, auto_rowpass *P)
{
	memset(P, 0, sizeof *P);
	P->array = -1;
	if (x->kind != ND_FOR || x->nidx < 1 || x->nidx > 2)
		return;
	int a = x->idx[0], b = -1;
	ir_node *const *body = x->body;
	int nb = x->nbody;
	if (x->nidx == 2)
		b = x->idx[1];
	else if (x->nbody == 1 && x->body[0]->kind == ND_FOR && x->body[0]->nidx == 1 &&
	         stmts_only(x->body[0]->body, x->body[0]->nbody)) {
		b = x->body[0]->idx[0];
		body = x->body[0]->body;
		nb = x->body[0]->nbody;
	}
	if (!plain_index(k, a) || (b >= 0 && !plain_index(k, b)))
		return;
	for (int arr = 0; arr < k->narrays && P->array < 0; arr++) {
		if (b >= 0 && stmts_only(body, nb)) {
			if (streams(k, x, arr, a, b)) {
				*P = (auto_rowpass){a, b, arr, false, x->nidx == 1};
			} else if (nb == 1 && streams(k, x, arr, b, a) && swappable(k, body[0], a))
				*P = (auto_rowpass){b, a, arr, true, false};
			continue;
		}
		if (x->nidx != 1 || k->arrays[arr].rank != 2)
			continue;
		/* for (i) { ... }: A[i, j] with j any loop inside */
		const ir_expr *acc[64];
		int na = accesses_of(x, arr, acc, 0, 64);
		if (na > 0 && acc[0]->sub[1].n == 1 && acc[0]->sub[1].t[0].kind == AFF_INDEX &&
		    acc[0]->sub[1].t[0].id != a && streams(k, x, arr, a, acc[0]->sub[1].t[0].id))
			*P = (auto_rowpass){a, acc[0]->sub[1].t[0].id, arr, false, true};
	}
}

/* Whether nodes x and y share no array that one of them writes. */
static bool independent(const ct_kernel *k, const ir_node *x, const ir_node *y)
{
	for (int a = 0; a < k->narrays; a++) {
		const ir_expr *acc[1];
		bool wx = writes(x, a), wy = writes(y, a);
		if ((wx && accesses_of(y, a, acc, 0, 1) > 0) || (wy && accesses_of(x, a, acc, 0, 1) > 0))
			return false;
	}
	return true;
}

/* The text of index id's range in its for's header (`i: N`, `j: 1 .. M`). */
static void put_range(ct_buf *b, const ct_kernel *k, int id)
{
	const char *s = k->text;
	size_t len = k->text_len, a = pos_offset(s, len, k->indices[id].pos);
	int depth = 0;
	for (size_t i = a; i < len; i++) {
		char c = s[i];
		if (c == '(' || c == '[')
			depth++;
		else if ((c == ')' || c == ']') && depth-- == 0)
			break;
		else if (c == ',' && depth == 0)
			break;
		ct_buf_putc(b, c);
	}
}

/* Pass P (nest x) written under the fused row loop, its row index renamed
 * to the fused loop's name. */
static void put_pass(ct_buf *b, const ct_kernel *k, const ir_node *x, const auto_rowpass *P, const char *fname)
{
	const char *s = k->text;
	size_t len = k->text_len;
	const char *from[1] = {k->indices[P->row].name}, *to[1] = {fname};
	if (P->whole) {
		size_t a = pos_offset(s, len, x->pos), e = node_end(s, len, a, true);
		const char *brace = memchr(s + a, '{', e - a);
		size_t hb = brace ? (size_t)(brace - s) + 1 : e;
		size_t he = e > hb ? e - 1 : e;
		while (hb < he && (s[hb] == ' ' || s[hb] == '\t' || s[hb] == '\n' || s[hb] == '\r'))
			hb++;
		while (he > hb && (s[he - 1] == ' ' || s[he - 1] == '\t' || s[he - 1] == '\n' || s[he - 1] == '\r'))
			he--;
		ct_buf_puts(b, "\n  ");
		put_renamed(b, s, hb, he, from, to, 1);
		return;
	}
	const ir_node *inner = x->nidx == 2 ? x : x->body[0];
	ct_buf_puts(b, "\n  for (");
	put_range(b, k, P->col);
	ct_buf_puts(b, ") {");
	for (int i = 0; i < inner->nbody; i++) {
		size_t a = pos_offset(s, len, inner->body[i]->pos), e = node_end(s, len, a, false);
		while (e > a && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
			e--;
		ct_buf_puts(b, "\n    ");
		put_renamed(b, s, a, e, from, to, 1);
	}
	ct_buf_puts(b, "\n  }");
}

/* The cache level that holds `bytes` (ncaches: none, memory). */
static int holding_level(const auto_machine *m, int64_t bytes)
{
	for (int l = 0; l < m->ncaches; l++)
		if (bytes <= cache_bytes(m, l))
			return l;
	return m->ncaches;
}

/* Whether auto's text parallelizes loop fname (a fused row loop on threads). */
static bool rowfuse_on_threads(const char *text, const char *fname)
{
	char item[AUTO_NAME_MAX + 32];
	snprintf(item, sizeof item, "  parallelize(%s)", fname);
	return strstr(text, item) != NULL;
}

/* Whether keep marks loop name "%name": a fused row loop whose column sums may run as a
 * parallel reduction (try_rowfuse). */
static bool rowfuse_parallel_kept(const char *keep, const char *name)
{
	return keep_marks(keep, '%', name);
}

/* ------------------------------------------------------------ unroll and jam of fused row passes */

/* Unroll and jam of the fused row passes (try_rowfuse): blocks of U rows,
 * each pass's loop over the columns running the U rows' statements in one
 * vector loop (`unroll` of the rows inside it, docs/PLANS.md section 17),
 * so that a pass's vector (x[j] of a row sum, y[j] of a column sum) is
 * read, or read and written, once per U rows instead of once per row:
 *
 *   for (i_b: lo .. hi step U) {
 *     if (i_b + U <= hi) {
 *       for (i_u: U) { t[(i_b + i_u)] = 0 }                       a row's statements
 *       for (j: N) { for (i_u2: U) { t[(i_b + i_u2)] += A[(i_b + i_u2), j] * x[j] } }
 *       for (j2: N) { for (i_u3: U) { y[j2] += A[(i_b + i_u3), j2] * t[(i_b + i_u3)] } }
 *     } else {
 *       for (i: i_b .. hi) { the fused body, one row at a time }   the last hi - lo mod U rows
 *     }
 *   }
 *
 * U: the largest power of two whose rows fit half the vector registers
 * (vreduce's cap on a loop's accumulators) at 2 registers per row (the
 * row's vector of the matrix and its sum's accumulator or its factor
 * t[i]) and 1 shared by the rows (the pass's vector): U = 4 with 32
 * registers (4 rows x 2 + 1 = 9 of 16 registers; 8 rows would take 17),
 * 2 with 16 (5 of 8), 1 (no jam) with 8 (2 rows would take 5 of 4).
 * Legal when the fused row loop carries no dependence but sums (the
 * dependence analysis, the reduction pairs apart): the jam reorders only
 * instances of different rows; within a row each statement keeps its order
 * and a column sum y[j] still adds the rows in row order (exact on one
 * thread); the row sums over j re-associate as any vector sum. A column
 * loop that the plan would not vectorize (a strided vector) drops the jam
 * (jam_vectorized): it gains only in vector loops. On threads the blocks
 * run in parallel, each row's copy under an if (rowfuse_jam). */

/* Why the fused row loop f (index row of t, the text fused by try_rowfuse)
 * does not take the jam, or NULL; *u gets the rows per block. */
static const char *jam_refusal(const auto_run *R, ct_kernel *t, const ir_node *f, int row, int elt, int *u)
{
	*u = 1;
	const auto_machine *m = &R->m;
	int lanes = elt > 0 ? m->vector_bytes / elt : 0;
	int fit = 1;
	while (2 * (2 * fit) + 1 <= m->registers / 2)
		fit *= 2;
	if (lanes < 2 || fit < 2)
		return "the vector registers hold one row's vectors only";
	const ir_index *ri = &t->indices[row];
	if (f->nidx != 1 || ri->nlo > 1 || ri->nhi > 1 || bounds_use_index(t, row))
		return "the row loop's bounds are not plain";
	if (index_trip(t, R->pv, row) < fit)
		return "fewer rows than a block";
	int loops = 0;
	for (int p = 0; p < f->nbody; p++) {
		const ir_node *x = f->body[p];
		if (x->kind == ND_STMT)
			continue;
		if (x->kind != ND_FOR || x->nidx != 1)
			return "a part of the row loop is not a statement or a loop over the columns";
		for (int q = 0; q < x->nbody; q++)
			if (x->body[q]->kind != ND_STMT)
				return "a loop over the columns holds more than statements";
		if (index_trip(t, R->pv, x->idx[0]) < lanes)
			return "a loop over the columns is shorter than a vector";
		loops++;
	}
	if (loops == 0)
		return "no loop over the columns";
	dep_info *d = dep_compute(t);
	ct_looptree *tree = d ? lt_build_loops(t, true) : NULL;
	int c = tree ? loop_carries(t, d, tree, ri->name, false) : -1;
	ct_looptree_free(tree);
	dep_free(d);
	ct_ctx_clear_error(t->ctx);
	if (c != 0)
		return "the row loop carries a dependence other than sums";
	*u = fit;
	return NULL;
}

/* The jammed text of fused loop f (index row) of t (text t->text) in
 * blocks of u rows (above); names from R->names; the loops of the rows
 * appended to unrolled (" +name ^name": unroll them, vectorize the column
 * loop around them: try_plain), the column loops to cols (" name").
 * guarded: every block runs its u rows' copies under `if (block + row <
 * hi)` (the last block's missing rows skipped; no else), so that each sum
 * keeps one update statement (a parallel reduction of the blocks takes
 * it). NULL when out of memory. */
static char *jam_text(auto_run *R, ct_kernel *t, const ir_node *f, int row, int u, const char *bname, bool guarded,
                      ct_buf *unrolled, ct_buf *cols)
{
	const char *s = t->text;
	size_t len = t->text_len, a0 = pos_offset(s, len, f->pos), e0 = node_end(s, len, a0, true);
	const char *brace = memchr(s + a0, '{', e0 - a0);
	if (!brace || e0 == 0 || s[e0 - 1] != '}')
		return NULL;
	const ir_index *ri = &t->indices[row];
	ct_buf b, hi;
	ct_buf_init(&b);
	ct_buf_init(&hi);
	lang_aff_print(&hi, t, ri->hi);
	for (size_t i = 0; i < a0; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_printf(&b, "for (%s: ", bname);
	lang_aff_print(&b, t, ri->lo);
	ct_buf_printf(&b, " .. %s step %d) {", hi.s, u);
	if (!guarded)
		ct_buf_printf(&b, "\n  if (%s + %d <= %s) {", bname, u, hi.s);
	const char *in = guarded ? "" : "  ";
	for (int p = 0; p < f->nbody; p++) {
		const ir_node *x = f->body[p];
		const char *un = fresh(t, &R->names, ri->name, "_u");
		char at[2 * AUTO_NAME_MAX + 8];
		snprintf(at, sizeof at, "(%s + %s)", bname, un);
		const char *from[1] = {ri->name}, *to[1] = {at};
		ct_buf_printf(unrolled, " +%s ^%s", un, un);
		const ir_node *const *st =
			x->kind == ND_FOR ? (const ir_node *const *)x->body : (const ir_node *const *)&f->body[p];
		int nst = x->kind == ND_FOR ? x->nbody : 1;
		/* the levels: the block (and its if), the column loop, the rows' loop, the guard */
		int lv = (guarded ? 1 : 2) + (x->kind == ND_FOR) + 1 + guarded;
		if (x->kind == ND_FOR) {
			ct_buf_printf(&b, "\n  %sfor (", in);
			put_range(&b, t, x->idx[0]);
			ct_buf_printf(&b, ") {\n    %sfor (%s: %d) {", in, un, u);
			ct_buf_printf(cols, " %s", t->indices[x->idx[0]].name);
		} else
			ct_buf_printf(&b, "\n  %sfor (%s: %d) {", in, un, u);
		if (guarded) {
			ct_buf_putc(&b, '\n');
			for (int l = 0; l < lv - 1; l++)
				ct_buf_puts(&b, "  ");
			ct_buf_printf(&b, "if (%s + %s < %s) {", bname, un, hi.s);
		}
		for (int q = 0; q < nst; q++) {
			size_t a = pos_offset(s, len, st[q]->pos), e = node_end(s, len, a, false);
			while (e > a && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
				e--;
			ct_buf_putc(&b, '\n');
			for (int l = 0; l < lv; l++)
				ct_buf_puts(&b, "  ");
			put_renamed(&b, s, a, e, from, to, 1);
		}
		for (int l = lv - 1; l >= (guarded ? 1 : 2); l--) {
			ct_buf_putc(&b, '\n');
			for (int m = 0; m < l; m++)
				ct_buf_puts(&b, "  ");
			ct_buf_putc(&b, '}');
		}
	}
	if (!guarded) {
		/* the last rows, one at a time: the fused body with its column loops renamed */
		const char *from[AUTO_MAX_ROWFUSE * 2], *to[AUTO_MAX_ROWFUSE * 2];
		int nren = 0;
		for (int p = 0; p < f->nbody && nren < AUTO_MAX_ROWFUSE * 2; p++)
			if (f->body[p]->kind == ND_FOR) {
				from[nren] = t->indices[f->body[p]->idx[0]].name;
				to[nren] = fresh(t, &R->names, from[nren], "_r");
				nren++;
			}
		ct_buf_printf(&b, "\n  } else {\n    for (%s: %s .. %s) {", ri->name, bname, hi.s);
		size_t hb = (size_t)(brace - s) + 1, he = e0 - 1;
		while (hb < he && (s[hb] == ' ' || s[hb] == '\t' || s[hb] == '\n' || s[hb] == '\r'))
			hb++;
		while (he > hb && (s[he - 1] == ' ' || s[he - 1] == '\t' || s[he - 1] == '\n' || s[he - 1] == '\r'))
			he--;
		ct_buf_puts(&b, "\n      ");
		/* the body's own lines keep their indent, two levels deeper */
		size_t q = hb;
		while (q < he) {
			size_t nl = q;
			while (nl < he && s[nl] != '\n')
				nl++;
			put_renamed(&b, s, q, nl, from, to, nren);
			if (nl < he)
				ct_buf_puts(&b, "\n    ");
			q = nl + 1;
		}
		ct_buf_puts(&b, "\n    }\n  }");
	}
	ct_buf_puts(&b, "\n}");
	for (size_t i = e0; i < len; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_free(&hi);
	return ct_buf_take(&b);
}

/* Whether auto's text vectorizes every column loop named in cols (" a b"):
 * the jam gains only in vector loops. */
static bool jam_vectorized(const char *text, const char *cols)
{
	for (const char *p = cols; p && *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n == 0)
			break;
		char item[AUTO_NAME_MAX + 32];
		snprintf(item, sizeof item, "  vectorize(%.*s)\n", (int)n, p);
		if (!strstr(text, item))
			return false;
		p += n;
	}
	return true;
}

/* The fused row loop (t->body[at], written by try_rowfuse with comment
 * note) jammed in blocks of rows (above) and auto's text of it into *text;
 * *text NULL (and why into *refused) when the jam is refused or gains no
 * vector loop. parallel: the fused loop would run on threads, its column
 * sums as a parallel reduction, which the verb takes for one update
 * statement per sum only: the jammed copy and the last rows' copy are two
 * (with the last rows' loop empty at the file's sizes the verb accepts it,
 * and refuses it at others: -D), so on threads every block guards its rows
 * (jam_text's guarded form) and the last block skips the missing ones. */
static void rowfuse_jam(auto_run *R, int depth, ct_kernel *t, int at, int elt, const char *note, bool parallel,
                        char **text, ct_buf *refused)
{
	*text = NULL;
	const ir_node *f = t->body[at];
	int row = f->kind == ND_FOR && f->nidx == 1 ? f->idx[0] : -1, u = 1;
	const char *why = row < 0 ? "the row loop is not one loop" : jam_refusal(R, t, f, row, elt, &u);
	if (why) {
		ct_buf_printf(refused, "#   not jammed (rows one at a time): %s\n", why);
		return;
	}
	auto_names keep = R->names;
	const char *fname = t->indices[row].name, *bname = fresh(t, &R->names, fname, "_b");
	ct_buf unrolled, cols;
	ct_buf_init(&unrolled);
	ct_buf_init(&cols);
	char *jt = jam_text(R, t, f, row, u, bname, parallel, &unrolled, &cols);
	ct_ctx *cx = NULL;
	ct_kernel *j = jt ? trial_parse(R->tctx, R->k, jt, &cx, NULL, 0) : NULL;
	ct_ctx_clear_error(R->tctx);
	if (j) {
		ct_buf nb, kb;
		ct_buf_init(&nb);
		ct_buf_init(&kb);
		ct_buf_printf(&nb,
		              "%s#   jammed: blocks of %d rows (loop %s), each pass's loop over the columns running the\n"
		              "#   %d rows in one vector loop, its vector read (or updated) once per %d rows; %d = the\n"
		              "#   most rows (a power of two) at 2 vector registers per row (the matrix's vector, the\n"
		              "#   row's sum or factor) + 1 shared in half of the %d registers; %s;\n"
		              "#   legal: the row loop carries no dependence but sums, a column sum still adds the\n"
		              "#   rows in row order\n",
		              note, u, bname, u, u, u, R->m.registers,
		              parallel ? "the blocks on threads\n#   (a parallel reduction: each row's copy under an if, the "
		                         "last block's missing rows\n#   skipped, so that each sum has one statement)"
		                       : "the last rows of the range not in a block\n#   run one at a time (else)");
		ct_buf_printf(&kb, "%s %s%s%s %s%s", R->keep ? R->keep : "", bname, parallel ? " %" : "",
		              parallel ? bname : "", fname, unrolled.s ? unrolled.s : "");
		auto_rewritten(R, j, depth, text, nb.s, kb.s);
		if (*text && !jam_vectorized(*text, cols.s)) {
			ct_buf_puts(refused, "#   not jammed (rows one at a time): a loop over the columns would not be "
			                     "vectorized\n");
			free(*text);
			*text = NULL;
		} else if (*text && parallel && !rowfuse_on_threads(*text, bname)) {
			ct_buf_puts(refused, "#   not jammed (rows one at a time): parallelize refuses its blocks of rows\n");
			free(*text);
			*text = NULL;
		}
		ct_buf_free(&nb);
		ct_buf_free(&kb);
	} else
		ct_buf_puts(refused, "#   not jammed (rows one at a time): its text does not parse\n");
	ct_kernel_free(j);
	ct_ctx_free(cx);
	free(jt);
	ct_buf_free(&unrolled);
	ct_buf_free(&cols);
	if (!*text)
		R->names = keep;
}

/* The matrix-vector passes that read one matrix (bicg's A^T r and A p,
 * mvt's A y1 and A^T y2, atax's A x then A^T t): apart, each pass streams
 * the whole matrix and the next finds its rows only as far as the matrix
 * fits; fused along the rows, each row is read from memory once and its
 * other passes find it in the cache the row and the vectors fit in. A run
 * of top-level nests that each pass over the rows of one read-only rank-2
 * array (same row bounds; nests between them that share nothing written
 * with them move before) is fused into one row loop, the passes' loops
 * over a row inside it one after the other, when the rows in use fit in a
 * nearer cache level than the matrix and the vectors. Where the passes
 * would run on threads the fused row loop does too, its column sums as a
 * parallel reduction (the nested run is told with "%row" in keep:
 * rowfuse_parallel_kept); if the plan does not parallelize it the passes
 * stay apart. Legal by the dependence analysis (dep_parts_ordered: the
 * fused loop distributed over its parts runs the passes as written) and,
 * for a sum moved inside the row loop, by swappable. CT_OK with *text NULL
 * when nothing was fused. */
static ct_status try_rowfuse(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	for (int first = 0; first < k->nbody; first++) {
		auto_rowpass P[AUTO_MAX_ROWFUSE];
		int at[AUTO_MAX_ROWFUSE], moved[AUTO_MAX_ROWFUSE], nm = 0, nmoved = 0;
		row_pass(k, k->body[first], &P[0]);
		if (P[0].array < 0)
			continue;
		at[nm++] = first;
		int A = P[0].array;
		const ir_index *r0 = &k->indices[P[0].row];
		for (int j = first + 1; j < k->nbody && nm + nmoved < AUTO_MAX_ROWFUSE; j++) {
			const ir_node *y = k->body[j];
			row_pass(k, y, &P[nm]);
			const ir_index *rj = P[nm].array == A ? &k->indices[P[nm].row] : NULL;
			if (rj && aff_equal(rj->lo, r0->lo) && aff_equal(rj->hi, r0->hi)) {
				at[nm++] = j;
				continue;
			}
			bool free_of = true;
			for (int i = 0; i < nm && free_of; i++)
				free_of = independent(k, k->body[at[i]], y);
			if (!free_of)
				break;
			moved[nmoved++] = j;
		}
		while (nmoved > 0 && moved[nmoved - 1] > at[nm - 1])
			nmoved--;
		if (nm < 2)
			continue;
		/* on threads: the fused row loop carries the column sums (a parallel reduction) */
		bool parallel = false;
		for (int i = 0; i < nm; i++)
			parallel = parallel || worth_threads(R, node_work(k, R->pv, k->body[at[i]]));
		/* the rows in use against the whole matrix, each with the other arrays the passes touch */
		int64_t others = 0, whole = array_bytes(k, R->pv, A);
		bool known = true;
		int64_t rows = aff_eval(k->arrays[A].ext[0], R->pv, NULL, &known);
		for (int a = 0; a < k->narrays; a++) {
			bool used = false;
			for (int i = 0; i < nm && !used; i++) {
				const ir_expr *acc[1];
				used = accesses_of(k->body[at[i]], a, acc, 0, 1) > 0;
			}
			if (used && a != A)
				others += array_bytes(k, R->pv, a);
		}
		bool ok = known && whole > 0 && rows > 0;
		int far = ok ? holding_level(&R->m, whole + others) : 0;
		int near = ok ? holding_level(&R->m, whole / rows + others) : 0;
		/* on threads: the row loop's column sums run as a parallel reduction (kept
		 * with a "%row" mark; rowfuse_parallel_kept), each copy capped by the verb */
		if (!ok || near >= far)
			continue;
		/* the fused text */
		const char *s = k->text;
		size_t len = k->text_len;
		size_t a0 = pos_offset(s, len, k->body[at[0]]->pos);
		size_t e1 = node_end(s, len, pos_offset(s, len, k->body[at[nm - 1]]->pos), true);
		if (e1 == 0 || s[e1 - 1] != '}')
			continue;
		const char *fname = k->indices[P[0].row].name;
		ct_buf b;
		ct_buf_init(&b);
		for (size_t i = 0; i < a0; i++)
			ct_buf_putc(&b, s[i]);
		for (int i = 0; i < nmoved; i++) {
			size_t ya = pos_offset(s, len, k->body[moved[i]]->pos);
			size_t ye = node_end(s, len, ya, k->body[moved[i]]->kind == ND_FOR);
			for (size_t q = ya; q < ye; q++)
				ct_buf_putc(&b, s[q]);
			ct_buf_puts(&b, "\n");
		}
		ct_buf_puts(&b, "for (");
		put_range(&b, k, P[0].row);
		ct_buf_puts(&b, ") {");
		for (int i = 0; i < nm; i++)
			put_pass(&b, k, k->body[at[i]], &P[i], fname);
		ct_buf_puts(&b, "\n}");
		for (size_t i = e1; i < len; i++)
			ct_buf_putc(&b, s[i]);
		char *ft = ct_buf_take(&b);
		ct_ctx *cx = NULL;
		ct_kernel *t = ft ? trial_parse(R->tctx, R->k, ft, &cx, NULL, 0) : NULL;
		int fused_at = first + nmoved;
		int legal = 0;
		if (t && fused_at < t->nbody && t->body[fused_at]->kind == ND_FOR) {
			dep_info *d = dep_compute(t);
			if (d)
				legal = dep_parts_ordered(d, t->body[fused_at]->body, t->body[fused_at]->nbody, 0);
			dep_free(d);
		}
		ct_ctx_clear_error(R->tctx);
		if (legal == 0) {
			ct_buf_printf(&R->why, "# the %d passes over the rows of %s at lines", nm, k->arrays[A].name);
			for (int i = 0; i < nm; i++)
				ct_buf_printf(&R->why, "%s %d", i ? "," : "", k->body[at[i]]->pos.line);
			ct_buf_puts(&R->why, " stay apart: fused along the rows, a dependence\n"
			                     "#   would run from a later part of the row loop to an earlier one\n");
		}
		if (legal == 1) {
			ct_buf note;
			ct_buf_init(&note);
			ct_buf_puts(&note, before ? before : "");
			char held[16] = "memory";
			if (far < R->m.ncaches)
				snprintf(held, sizeof held, "L%d", far + 1);
			ct_buf_printf(&note, "# the %d passes over the rows of %s at lines", nm, k->arrays[A].name);
			for (int i = 0; i < nm; i++)
				ct_buf_printf(&note, "%s %d", i ? "," : "", k->body[at[i]]->pos.line);
			ct_buf_printf(&note,
			              " are fused along its rows (loop %s):\n"
			              "#   apart, each pass streams %lld KiB (%s and the vectors), which only %s holds;\n"
			              "#   fused, a row and the vectors span %lld KiB, which L%d holds, and each row is read\n"
			              "#   from memory once; legal: the dependence analysis finds no dependence from a later\n"
			              "#   part of the fused loop to an earlier one",
			              fname, (long long)((whole + others) >> 10), k->arrays[A].name,
			              held,
			              (long long)((whole / rows + others) >> 10), near + 1);
			ct_buf_puts(&note, nmoved ? " (the nests between them, which share nothing\n"
			                            "#   written with the passes, run before them)\n"
			                          : "\n");
			if (parallel)
				ct_buf_printf(&note,
				              "#   on %d threads: the fused row loop carries the column sums, which each thread\n"
				              "#   sums into its own zeroed copy, added in thread order (a parallel reduction)\n",
				              R->m.threads);
			ct_buf kb;
			ct_buf_init(&kb);
			ct_buf_printf(&kb, "%s %s%s%s", R->keep ? R->keep : "", fname, parallel ? " %" : "",
			              parallel ? fname : "");
			ct_buf refused;
			ct_buf_init(&refused);
			rowfuse_jam(R, depth, t, fused_at, (int)ct_dtype_size(k->arrays[A].type), note.s ? note.s : "",
			            parallel, text, &refused);
			bool jammed = *text != NULL;
			if (!jammed) {
				ct_buf_puts(&note, refused.s ? refused.s : "");
				auto_rewritten(R, t, depth, text, note.s, kb.s);
			}
			ct_buf_free(&refused);
			ct_buf_free(&kb);
			ct_buf_free(&note);
			/* worth threads but not on them (the reduction refused): the passes stay apart */
			if (parallel && *text && !jammed && !rowfuse_on_threads(*text, fname)) {
				free(*text);
				*text = NULL;
			}
		}
		ct_kernel_free(t);
		ct_ctx_free(cx);
		free(ft);
		if (*text)
			return CT_OK;
	}
	return CT_OK;
}

/* ------------------------------------------------------------ the right-looking interchange */

/*
 * A loop j whose body is a loop k: lo .. j (the same lo as j's) followed by
 * statements S2 that use j, as in the left-looking forms of LU and the
 * triangular solves:
 *
 *   for (j: lo .. hi) { for (k: lo .. j) { S1 } S2 }
 *
 * is rewritten with k outermost, S2 run at k = j before the updates of k:
 *
 *   for (k: lo .. hi) { S2[j := k] for (j: k + 1 .. hi) { S1 } }
 *
 * Both run the same instances. It is taken when S1's statements then get a
 * unit-stride vector loop they had not (vector_stmts) and the dependence
 * analysis proves that every dependence, and every sum's order over k, is
 * kept (dep_rewrite_keeps), so the result is the same to the bit.
 */

/* A for header "for (NAME: LO .. HI) {" at s[a..]: the offsets of NAME, LO and HI (each [x, x_end),
 * trimmed) and of the opening brace; false for any other form (several indices, a step). */
typedef struct rl_head {
	size_t name, name_end, lo, lo_end, hi, hi_end, brace;
} rl_head;

static size_t skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

static bool rl_header(const char *s, size_t n, size_t a, rl_head *h)
{
	if (a + 3 >= n || strncmp(s + a, "for", 3) != 0)
		return false;
	size_t i = skip_space(s, n, a + 3);
	if (i >= n || s[i] != '(')
		return false;
	h->name = i = skip_space(s, n, i + 1);
	while (i < n && ident_char(s[i]))
		i++;
	h->name_end = i;
	i = skip_space(s, n, i);
	if (h->name_end == h->name || i >= n || s[i] != ':')
		return false;
	h->lo = skip_space(s, n, i + 1);
	/* LO .. HI at depth 0, up to the header's ')' */
	int depth = 0;
	size_t dots = 0, close = 0;
	for (i = h->lo; i < n && !close; i++) {
		char c = s[i];
		if (c == '(' || c == '[')
			depth++;
		else if ((c == ')' || c == ']') && depth > 0)
			depth--;
		else if (c == ')')
			close = i;
		else if (depth == 0 && (c == ',' || c == '\n' || c == '{'))
			return false;
		else if (depth == 0 && c == '.' && i + 1 < n && s[i + 1] == '.' && !dots)
			dots = i++;
	}
	if (!dots || !close)
		return false;
	h->lo_end = dots;
	while (h->lo_end > h->lo && (s[h->lo_end - 1] == ' ' || s[h->lo_end - 1] == '\t'))
		h->lo_end--;
	h->hi = skip_space(s, n, dots + 2);
	h->hi_end = close;
	while (h->hi_end > h->hi && (s[h->hi_end - 1] == ' ' || s[h->hi_end - 1] == '\t'))
		h->hi_end--;
	i = skip_space(s, n, close + 1);
	if (i >= n || s[i] != '{' || h->lo_end <= h->lo || h->hi_end <= h->hi)
		return false;
	h->brace = i;
	return true;
}

static bool same_text(const char *s, size_t a, size_t ae, size_t b, size_t be)
{
	return ae - a == be - b && strncmp(s + a, s + b, ae - a) == 0;
}

/* Whether x is the loop j of the pattern above, in k's text: its headers in *hj and *hk. */
static bool rl_pattern(const ct_kernel *k, const ir_node *x, rl_head *hj, rl_head *hk)
{
	if (x->kind != ND_FOR || x->nidx != 1 || x->nbody < 2 || x->body[0]->kind != ND_FOR)
		return false;
	const ir_node *y = x->body[0];
	if (y->nidx != 1 || y->nbody < 1)
		return false;
	for (int i = 0; i < y->nbody; i++)
		if (y->body[i]->kind != ND_STMT)
			return false;
	for (int i = 1; i < x->nbody; i++)
		if (x->body[i]->kind != ND_STMT)
			return false;
	/* unit steps: `for (j: lo .. hi step S)` would read as the range "lo .. hi step S" */
	if (k->indices[x->idx[0]].step_expr || k->indices[y->idx[0]].step_expr)
		return false;
	const char *s = k->text;
	size_t n = k->text_len;
	if (!rl_header(s, n, pos_offset(s, n, x->pos), hj) || !rl_header(s, n, pos_offset(s, n, y->pos), hk))
		return false;
	/* k: lo .. j, with j's lo */
	return same_text(s, hk->hi, hk->hi_end, hj->name, hj->name_end) &&
	       same_text(s, hk->lo, hk->lo_end, hj->lo, hj->lo_end);
}

/* The text of k with loop x (the pattern, headers hj and hk) rewritten right-looking. */
static char *rl_text(const ct_kernel *k, const ir_node *x, const rl_head *hj, const rl_head *hk)
{
	const char *s = k->text;
	size_t n = k->text_len;
	const ir_node *y = x->body[0];
	size_t xa = pos_offset(s, n, x->pos), xe = node_end(s, n, xa, true);
	size_t ya = pos_offset(s, n, y->pos), ye = node_end(s, n, ya, true);
	if (xe > n || ye < hk->brace + 2)
		return NULL;
	char jn[AUTO_NAME_MAX], kn[AUTO_NAME_MAX];
	snprintf(jn, sizeof jn, "%.*s", (int)(hj->name_end - hj->name), s + hj->name);
	snprintf(kn, sizeof kn, "%.*s", (int)(hk->name_end - hk->name), s + hk->name);
	const char *from[] = {jn}, *to[] = {kn};
	int col = x->pos.col > 1 ? x->pos.col - 1 : 0;
	ct_buf b;
	ct_buf_init(&b);
	for (size_t i = 0; i < xa; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_printf(&b, "for (%s: %.*s .. %.*s) {\n", kn, (int)(hj->lo_end - hj->lo), s + hj->lo,
	              (int)(hj->hi_end - hj->hi), s + hj->hi);
	for (int i = 1; i < x->nbody; i++) {
		size_t a = pos_offset(s, n, x->body[i]->pos), e = node_end(s, n, a, false);
		ct_buf_printf(&b, "%*s  ", col, "");
		put_renamed(&b, s, a, e, from, to, 1);
		ct_buf_putc(&b, '\n');
	}
	ct_buf_printf(&b, "%*s  for (%s: %s + 1 .. %.*s) {", col, "", jn, kn, (int)(hj->hi_end - hj->hi), s + hj->hi);
	/* S1 as written, between k's braces */
	for (size_t i = hk->brace + 1; i + 1 < ye; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_printf(&b, "}\n%*s}", col, "");
	for (size_t i = xe; i < n; i++)
		ct_buf_putc(&b, s[i]);
	return ct_buf_take(&b);
}

/* dep_rewrite_keeps of t, the rewrite of x in R's kernel, with the statements numbered as the
 * dependence analysis numbers them: 1, 0, -1. */
static int rl_legal(auto_run *R, const ir_node *x, ct_kernel *t)
{
	const ir_node *y = x->body[0];
	int a = y->nbody, b = x->nbody - 1; /* S1's statements, S2's */
	dep_info *d = dep_compute(R->k);
	int nst = dep_stmt_count(d), s1 = 0;
	/* S1's first statement; its indices end with j, k */
	int base = d ? dep_stmt_number(d, y->body[0], &s1) : -1;
	int tdepth = s1 - 2, nd = R->k->nindices + 2;
	int *old = base >= 0 && tdepth >= 0 ? calloc((size_t)nst, sizeof *old) : NULL;
	int **dims = old ? calloc((size_t)nst, sizeof *dims) : NULL;
	int *perm = dims ? calloc((size_t)nd * 2, sizeof *perm) : NULL;
	int r = -1;
	if (perm && tdepth + 2 <= nd) {
		/* S1 (old dims ..., j, k) is new (..., k, j): new position p holds old index perm[p] */
		int *ident = perm + nd;
		for (int p = 0; p < nd; p++)
			perm[p] = ident[p] = p;
		perm[tdepth] = tdepth + 1;
		perm[tdepth + 1] = tdepth;
		for (int s = 0; s < nst; s++) {
			bool in = s >= base && s < base + a + b;
			/* new order in x: S2's b statements, then S1's a */
			old[s] = !in ? s : s < base + b ? base + a + (s - base) : base + (s - base - b);
			dims[s] = in && s >= base + b ? perm : ident;
		}
		int *const *od = dims;
		r = dep_rewrite_keeps(d, t, old, od);
	}
	dep_free(d);
	free(old);
	free(dims);
	free(perm);
	if (r < 0)
		ct_ctx_clear_error(R->k->ctx);
	return r;
}

static bool rl_find(const ir_node *x, const ct_kernel *k, const ir_node **out, rl_head *hj, rl_head *hk)
{
	if (x->kind != ND_FOR)
		return false;
	if (rl_pattern(k, x, hj, hk)) {
		*out = x;
		return true;
	}
	for (int i = 0; i < x->nbody; i++)
		if (rl_find(x->body[i], k, out, hj, hk))
			return true;
	return false;
}

static ct_status try_right_looking(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	int hadv = vector_stmts(k, R->pv, &R->m);
	for (int i = 0; i < k->nbody && !*text; i++) {
		const ir_node *x = NULL;
		rl_head hj, hk;
		if (!rl_find(k->body[i], k, &x, &hj, &hk))
			continue;
		char *rt = rl_text(k, x, &hj, &hk);
		ct_ctx *cx = NULL;
		ct_kernel *t = rt ? trial_parse(R->tctx, R->k, rt, &cx, NULL, 0) : NULL;
		int64_t *pv = t ? calloc((size_t)t->nparams + 1, sizeof *pv) : NULL;
		if (pv)
			ir_param_values(t, pv);
		int morev = pv ? vector_stmts(t, pv, &R->m) - hadv : 0;
		free(pv);
		const char *jn = k->indices[x->idx[0]].name, *kn = k->indices[x->body[0]->idx[0]].name;
		int legal = morev > 0 ? rl_legal(R, x, t) : -1;
		if (morev > 0 && legal == 0)
			ct_buf_printf(&R->why,
			              "# the loops at line %d, for (%s) around for (%s: .. %s), stay as written: with %s\n"
			              "#   outermost (right-looking), a dependence or a sum's order would change\n",
			              x->pos.line, jn, kn, jn, kn);
		if (morev > 0 && legal == 1) {
			char note[768];
			snprintf(note, sizeof note,
			         "# the loops at line %d, for (%s) around for (%s: .. %s), are interchanged\n"
			         "#   (right-looking): %s outermost, the statements after the inner loop run at\n"
			         "#   %s = %s before the updates of %s, and %d more statement(s) get a unit-stride\n"
			         "#   innermost loop to vectorize; legal: the dependence analysis finds the same\n"
			         "#   instances, every dependence and every sum's order kept\n",
			         x->pos.line, jn, kn, jn, kn, jn, kn, kn, morev);
			auto_rewritten_after(R, t, depth, text, before, note);
		}
		ct_kernel_free(t);
		ct_ctx_free(cx);
		free(rt);
	}
	return CT_OK;
}

/* ------------------------------------------------------------ triangles in blocks */

/*
 * A triangle `for (i: LO .. HI, j: JL .. i + D) { body }` (or the upper one,
 * `j: i + D .. JH`) whose (i, j) iterations are independent is cut in blocks,
 * as a recursive blocked syrk is: at a middle row m (LO plus a multiple of
 * the unit U) the rows below m hold a rectangle `j: JL .. m + D` and two
 * triangles, the rows above m and the rows below, which are cut again while
 * they have at least 4 U rows. Each rectangle is a nest of its own with
 * rectangular bounds (params), so it takes the register tile and the packed
 * panels of a gemm; the triangles left are 2 U to 4 U rows tall. U is four
 * vectors of the element (32 f64 on AVX-512): a block is then a few register
 * tiles wide. The split points are params written from the bounds
 * (`param TR_i_1 = LO + (HI - LO) / (2 U) * U`; integer division rounds
 * toward zero), so the file computes the same at other sizes.
 *
 * Legal when no dependence is carried by i or by j (sums and races
 * included; temps private to an iteration allowed): then no two (i, j)
 * iterations depend on each other, and the blocks run each iteration whole,
 * once. The bound JL must not exceed LO + D (JH not be below HI + D) by a
 * constant, so that every rectangle's columns start where the triangle's
 * start.
 *
 * An input read both by an access that moves with i and not j and by one
 * that moves with j and not i (syrk's A[i, k] and A[j, k]) is read in the
 * rectangles through a copy (a temp filled before the blocks) for the
 * accesses that move with j: a plan caches an array once per nest, and a
 * gemm packs each operand in a cache of its own.
 */

#define TRI_MAX_INNER 16   /* indices declared in the triangle's body */
#define TRI_MAX_COPY 4     /* arrays read through a copy */
#define TRI_MAX_AT 32      /* accesses read through a copy */
#define TRI_MAX_PIECES 64  /* rectangles and triangles */
#define TRI_MAX_TERMS 40   /* terms of a bound of j (aff_without_index's buffers) */

typedef struct tri_nest {
	const ir_node *x;                 /* the top-level for */
	const ir_node *jn;                /* the for that declares j (x, or x's only child) */
	int i, j;                         /* their index ids */
	bool lower;                       /* j: JL .. i + D (else i + D .. JH) */
	aff d, fixed;                     /* D, and JL or JH */
	size_t body, body_end;            /* the text between jn's braces */
	const char *inner[TRI_MAX_INNER]; /* the indices the body declares */
	int ninner;
	int rest[TRI_MAX_INNER];          /* the indices after j in its header (rectangular) */
	int nrest;
	int copy[TRI_MAX_COPY];           /* arrays read through a copy in the rectangles */
	const char *copy_name[TRI_MAX_COPY];
	int ncopy;
	size_t at[TRI_MAX_AT];            /* their accesses that move with j: text offsets */
	const char *at_to[TRI_MAX_AT];
	int nat;
	int64_t unit;                     /* U */
	bool at_m;                        /* a lower triangle's rectangles end at m, not m + D */
	int rects, tris, leaf_rows;       /* what the cut made */
	int splits;                       /* split params written */
} tri_nest;

/* The aff x without its term in index i, its other terms copied into buf (at most cap:
 * callers take bounds of at most TRI_MAX_TERMS terms). */
static aff aff_without_index(aff x, int i, aff_term *buf, int cap)
{
	aff r = {x.c, 0, buf};
	for (int q = 0; q < x.n && r.n < cap; q++)
		if (!(x.t[q].kind == AFF_INDEX && x.t[q].id == i))
			buf[r.n++] = x.t[q];
	return r;
}

/* The indices the body nodes v[0..n) declare, into T (each block renames them); false
 * when there are too many or a `let` (its name would be declared once per block). */
static bool tri_collect(const ct_kernel *k, ir_node *const *v, int n, tri_nest *T)
{
	for (int q = 0; q < n; q++) {
		const ir_node *y = v[q];
		if (y->kind == ND_LET)
			return false;
		if (y->kind == ND_FOR)
			for (int a = 0; a < y->nidx; a++) {
				if (T->ninner == TRI_MAX_INNER)
					return false;
				T->inner[T->ninner++] = k->indices[y->idx[a]].name;
			}
		if (!tri_collect(k, y->body, y->nbody, T) || !tri_collect(k, y->els, y->nels, T))
			return false;
	}
	return true;
}

/* sign * (a + d - f), d without its term in index i, into *gap when it is a
 * constant (the params cancel): true then. */
static bool const_gap(const ct_kernel *k, aff a, aff d, aff f, int i, int sign, int64_t *gap)
{
	int64_t *c = calloc((size_t)k->nparams + 1, sizeof *c);
	if (!c)
		return false;
	const aff *x[3] = {&a, &d, &f};
	int64_t w[3] = {1, 1, -1};
	bool ok = true;
	for (int q = 0; q < 3; q++)
		for (int t = 0; t < x[q]->n; t++) {
			const aff_term *y = &x[q]->t[t];
			if (y->kind == AFF_PARAM)
				c[y->id] += w[q] * y->coef;
			else
				ok = ok && q == 1 && y->id == i;
		}
	for (int p = 0; p < k->nparams; p++)
		ok = ok && c[p] == 0;
	free(c);
	*gap = sign * (a.c + d.c - f.c);
	return ok;
}

/* The element size of the first statement's left-hand side under nodes v[0..n) (0: none,
 * or not a float: a register tile holds f32 or f64). */
static int64_t tri_elt(const ct_kernel *k, ir_node *const *v, int n)
{
	for (int q = 0; q < n; q++) {
		if (v[q]->kind == ND_STMT) {
			ct_dtype t = k->arrays[v[q]->lhs->id].type;
			return t == CT_F32 || t == CT_F64 ? (int64_t)ct_dtype_size(t) : 0;
		}
		int64_t e = tri_elt(k, v[q]->body, v[q]->nbody);
		if (e > 0)
			return e;
	}
	return 0;
}

/* Whether subscript list of access e uses index id. */
static bool access_uses(const ir_expr *e, int rank, int id)
{
	for (int d = 0; d < rank; d++)
		if (aff_coef(e->sub[d], AFF_INDEX, id) != 0)
			return true;
	return false;
}

/* The inputs of T's body read by an access moving with i (not j) and by one
 * moving with j (not i): their j-moving accesses go to a copy. False when
 * one cannot be placed (its text not where the IR says). */
static bool tri_copies(auto_run *R, tri_nest *T)
{
	const ct_kernel *k = R->k;
	const char *s = k->text;
	size_t n = k->text_len;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (!ir_array_readonly(ar))
			continue;
		const ir_expr *acc[TRI_MAX_AT];
		int na = 0;
		for (int q = 0; q < T->jn->nbody; q++)
			na = accesses_of(T->jn->body[q], a, acc, na, TRI_MAX_AT);
		bool by_i = false, by_j = false;
		for (int q = 0; q < na; q++) {
			bool ui = access_uses(acc[q], ar->rank, T->i), uj = access_uses(acc[q], ar->rank, T->j);
			by_i = by_i || (ui && !uj);
			by_j = by_j || (uj && !ui);
		}
		if (!by_i || !by_j)
			continue;
		if (T->ncopy == TRI_MAX_COPY)
			return false;
		const char *cn = fresh(k, &R->names, ar->name, "_t");
		T->copy[T->ncopy] = a;
		T->copy_name[T->ncopy++] = cn;
		size_t len = strlen(ar->name);
		for (int q = 0; q < na; q++) {
			if (!access_uses(acc[q], ar->rank, T->j) || access_uses(acc[q], ar->rank, T->i))
				continue;
			size_t off = pos_offset(s, n, acc[q]->pos);
			if (T->nat == TRI_MAX_AT || off + len > n || strncmp(s + off, ar->name, len) != 0 ||
			    (off + len < n && ident_char(s[off + len])))
				return false;
			T->at[T->nat] = off;
			T->at_to[T->nat++] = cn;
		}
	}
	return true;
}

/* Whether top-level for x is a triangle of the shape above (its bounds,
 * body and copies into *T; the legality is tri_legal's). */
static bool tri_shape(auto_run *R, const ir_node *x, tri_nest *T)
{
	const ct_kernel *k = R->k;
	memset(T, 0, sizeof *T);
	if (x->kind != ND_FOR)
		return false;
	const ir_node *jn = x->nidx >= 2 ? x : x->nidx == 1 && x->nbody == 1 && x->body[0]->kind == ND_FOR ? x->body[0] : NULL;
	if (!jn || jn->nbody < 1)
		return false;
	T->x = x;
	T->jn = jn;
	T->i = x->idx[0];
	int jat = jn == x ? 1 : 0;
	T->j = jn->idx[jat];
	/* the indices after j in its header: rectangular, written again in each block's header */
	for (int q = jat + 1; q < jn->nidx; q++) {
		const ir_index *y = &k->indices[jn->idx[q]];
		if (ir_index_affine(y) || y->step != 1 || y->step_expr || T->nrest == TRI_MAX_INNER)
			return false;
		T->rest[T->nrest++] = jn->idx[q];
	}
	const ir_index *I = &k->indices[T->i], *J = &k->indices[T->j];
	if (ir_index_affine(I) || I->step != 1 || I->step_expr || !ir_index_affine(J) || J->step != 1 ||
	    J->step_expr || J->nlo != 1 || J->nhi != 1 || aff_uses_kind(I->lo, AFF_INDEX) ||
	    aff_uses_kind(I->hi, AFF_INDEX))
		return false;
	aff lo = J->los[0], hi = J->his[0];
	if (lo.n > TRI_MAX_TERMS || hi.n > TRI_MAX_TERMS)
		return false;
	int64_t cl = aff_coef(lo, AFF_INDEX, T->i), ch = aff_coef(hi, AFF_INDEX, T->i);
	/* no index but i in j's bounds */
	aff_term obuf[TRI_MAX_TERMS];
	if (aff_uses_kind(aff_without_index(lo, T->i, obuf, (int)(sizeof obuf / sizeof *obuf)), AFF_INDEX) ||
	    aff_uses_kind(aff_without_index(hi, T->i, obuf, (int)(sizeof obuf / sizeof *obuf)), AFF_INDEX))
		return false;
	if (cl == 0 && ch == 1) {
		T->lower = true;
		T->d = hi;
		T->fixed = lo;
	} else if (cl == 1 && ch == 0) {
		T->d = lo;
		T->fixed = hi;
	} else
		return false;
	/* lower: JL <= LO + D, upper: HI + D <= JH, by a constant (D's i term aside) */
	int64_t gap = 0;
	if (!const_gap(k, T->lower ? I->lo : I->hi, T->d, T->fixed, T->i, T->lower ? 1 : -1, &gap) || gap < 0)
		return false;
	/* a lower triangle whose D >= 0 is a constant and JL <= LO by a constant may end its
	 * rectangles' columns at m (whole blocks of U): every row from m on reaches column m,
	 * and the triangle below m starts at column m, its own first row's */
	aff_term dbuf[TRI_MAX_TERMS];
	aff dd = aff_without_index(T->d, T->i, dbuf, (int)(sizeof dbuf / sizeof *dbuf));
	aff none = {0, 0, NULL};
	int64_t gap0 = 0;
	T->at_m = T->lower && dd.n == 0 && dd.c >= 0 && const_gap(k, I->lo, none, T->fixed, T->i, 1, &gap0) &&
	          gap0 >= 0;
	const char *s = k->text;
	size_t n = k->text_len;
	/* the body: between the braces of jn */
	size_t a = pos_offset(s, n, jn->pos), e = node_end(s, n, a, true);
	int depth = 0;
	size_t q = a;
	for (; q < e; q++) {
		if (s[q] == '(')
			depth++;
		else if (s[q] == ')' && --depth == 0)
			break;
	}
	q = skip_space(s, n, q + 1);
	if (q >= e || s[q] != '{' || e < q + 2 || s[e - 1] != '}')
		return false;
	T->body = q + 1;
	T->body_end = e - 1;
	return tri_collect(k, jn->body, jn->nbody, T) && tri_copies(R, T);
}

/* Whether no dependence is carried by T's loops i and j (sums and races
 * included; temps private to an iteration allowed): 1, 0, -1. */
static int tri_legal(auto_run *R, const tri_nest *T)
{
	ct_kernel *k = R->k;
	/* the dependences of the triangle's nest and of those sharing the temps it writes
	 * (nest_roots): the whole file's took 15% of auto's instructions on syr2k, whose
	 * second triangle is asked with the first's 31 blocks written */
	int at = -1;
	for (int i = 0; i < k->nbody; i++)
		if (k->body[i] == T->x)
			at = i;
	bool *roots = at >= 0 ? nest_roots(k, at) : NULL;
	dep_info *d = roots ? dep_compute_roots(k, roots) : dep_compute(k);
	free(roots);
	ct_looptree *tree = d ? lt_build_loops(k, false) : NULL;
	int r = -1;
	if (tree) {
		int ci = loop_carries(k, d, tree, k->indices[T->i].name, true);
		int cj = ci == 0 ? loop_carries(k, d, tree, k->indices[T->j].name, true) : ci;
		r = ci < 0 || cj < 0 ? -1 : ci == 0 && cj == 0;
	}
	ct_looptree_free(tree);
	dep_free(d);
	if (r < 0)
		ct_ctx_clear_error(k->ctx);
	return r;
}

/* " + D" for D as written after a name (nothing for 0). */
static void put_plus(ct_buf *b, const ct_kernel *k, aff dd)
{
	if (dd.n == 0 && dd.c == 0)
		return;
	if (dd.n == 0) {
		ct_buf_printf(b, " %c %lld", dd.c < 0 ? '-' : '+', (long long)(dd.c < 0 ? -dd.c : dd.c));
		return;
	}
	ct_buf_puts(b, " + (");
	lang_aff_print(b, k, dd);
	ct_buf_putc(b, ')');
}

/* One block of T: rows r0 .. r1 (texts), columns cl .. ch; a triangle's
 * bound on the block's own row is written "@" (i + D). */
static void tri_piece(auto_run *R, tri_nest *T, ct_buf *b, const char *r0, const char *r1, const char *cl,
                      const char *ch, bool rect)
{
	const ct_kernel *k = R->k;
	char suffix[16];
	snprintf(suffix, sizeof suffix, "_b%d", T->rects + T->tris + 1);
	const char *from[2 * TRI_MAX_INNER + 2], *to[2 * TRI_MAX_INNER + 2];
	int nren = 0;
	from[nren] = k->indices[T->i].name;
	to[nren++] = fresh(k, &R->names, k->indices[T->i].name, suffix);
	from[nren] = k->indices[T->j].name;
	to[nren++] = fresh(k, &R->names, k->indices[T->j].name, suffix);
	for (int q = 0; q < T->nrest; q++) {
		from[nren] = k->indices[T->rest[q]].name;
		to[nren] = fresh(k, &R->names, from[nren], suffix);
		nren++;
	}
	for (int q = 0; q < T->ninner; q++) {
		from[nren] = T->inner[q];
		to[nren++] = fresh(k, &R->names, T->inner[q], suffix);
	}
	aff_term buf[TRI_MAX_TERMS];
	aff dd = aff_without_index(T->d, T->i, buf, (int)(sizeof buf / sizeof *buf));
	ct_buf row;
	ct_buf_init(&row);
	ct_buf_puts(&row, to[0]);
	put_plus(&row, k, dd);
	ct_buf_printf(b, "for (%s: %s .. %s, %s: %s .. %s", to[0], r0, r1, to[1], strcmp(cl, "@") ? cl : row.s,
	              strcmp(ch, "@") ? ch : row.s);
	ct_buf_free(&row);
	for (int q = 0; q < T->nrest; q++) {
		const ir_index *y = &k->indices[T->rest[q]];
		ct_buf_printf(b, ", %s: ", to[2 + q]);
		lang_aff_print(b, k, y->lo);
		ct_buf_puts(b, " .. ");
		lang_aff_print(b, k, y->hi);
	}
	ct_buf_puts(b, ") {");
	renames rn = {from, to, nren, T->at, T->at_to, rect ? T->nat : 0};
	put_renamed_as(b, R->k->text, T->body, T->body_end, &rn);
	ct_buf_puts(b, "}\n");
	if (rect)
		T->rects++;
	else
		T->tris++;
}

/* The blocks of the triangle of rows r0 .. r1 (texts; v0 .. v1 their values)
 * whose other column bound is other (JL or JH, or a block's m + D), into b;
 * the split params into params. */
static void tri_cut(auto_run *R, tri_nest *T, ct_buf *b, ct_buf *params, const char *r0, const char *r1, int64_t v0,
                    int64_t v1, const char *other)
{
	const ct_kernel *k = R->k;
	if (v1 - v0 < 4 * T->unit || T->rects + T->tris + 3 > TRI_MAX_PIECES) {
		if (T->lower)
			tri_piece(R, T, b, r0, r1, other, "@", false);
		else
			tri_piece(R, T, b, r0, r1, "@", other, false);
		if (v1 - v0 > T->leaf_rows)
			T->leaf_rows = (int)(v1 - v0);
		return;
	}
	char pname[AUTO_NAME_MAX + 8];
	snprintf(pname, sizeof pname, "TR_%s", k->indices[T->i].name);
	char nsuf[16];
	snprintf(nsuf, sizeof nsuf, "_%d", ++T->splits);
	const char *m = fresh(k, &R->names, pname, nsuf);
	if (strcmp(r0, "0") == 0)
		ct_buf_printf(params, "param %s = %s / %lld * %lld", m, r1, (long long)(2 * T->unit), (long long)T->unit);
	else
		ct_buf_printf(params, "param %s = %s + (%s - %s) / %lld * %lld", m, r0, r1, r0, (long long)(2 * T->unit),
		              (long long)T->unit);
	ct_buf_printf(params, "   # auto: the rows of the triangle at line %d cut at a multiple of %lld\n", T->x->pos.line,
	              (long long)T->unit);
	int64_t vm = v0 + (v1 - v0) / (2 * T->unit) * T->unit;
	aff_term buf[TRI_MAX_TERMS];
	aff dd = aff_without_index(T->d, T->i, buf, (int)(sizeof buf / sizeof *buf));
	/* the rectangle's columns end at m + D, or at m (T->at_m) */
	ct_buf mb;
	ct_buf_init(&mb);
	ct_buf_puts(&mb, m);
	if (!T->at_m)
		put_plus(&mb, k, dd);
	char *md = ct_buf_take(&mb);
	if (!md)
		return;
	if (T->lower) {
		tri_cut(R, T, b, params, r0, m, v0, vm, other);
		tri_piece(R, T, b, m, r1, other, md, true);
		tri_cut(R, T, b, params, m, r1, vm, v1, md);
	} else {
		tri_cut(R, T, b, params, r0, m, v0, vm, md);
		tri_piece(R, T, b, r0, m, md, other, true);
		tri_cut(R, T, b, params, m, r1, vm, v1, other);
	}
	free(md);
}

/* The text of R's kernel with T cut in blocks (NULL when out of memory). */
static char *tri_text(auto_run *R, tri_nest *T)
{
	const ct_kernel *k = R->k;
	const char *s = k->text;
	size_t n = k->text_len;
	const ir_index *I = &k->indices[T->i];
	ct_buf lo, hi, other, blocks, params;
	ct_buf_init(&lo);
	ct_buf_init(&hi);
	ct_buf_init(&other);
	ct_buf_init(&blocks);
	ct_buf_init(&params);
	lang_aff_print(&lo, k, I->lo);
	lang_aff_print(&hi, k, I->hi);
	lang_aff_print(&other, k, T->fixed);
	bool ok = true;
	int64_t v0 = aff_eval(I->lo, R->pv, NULL, &ok), v1 = aff_eval(I->hi, R->pv, NULL, &ok);
	/* the copies first */
	for (int c = 0; c < T->ncopy; c++) {
		const ir_array *ar = &k->arrays[T->copy[c]];
		const char *ix[IR_MAX_RANK];
		char suffix[16];
		snprintf(suffix, sizeof suffix, "_c%d", c + 1);
		for (int d = 0; d < ar->rank; d++) {
			char base[16];
			snprintf(base, sizeof base, "x%d", d);
			ix[d] = fresh(k, &R->names, base, suffix);
		}
		ct_buf_puts(&blocks, "for (");
		for (int d = 0; d < ar->rank; d++) {
			ct_buf_printf(&blocks, "%s%s: ", d ? ", " : "", ix[d]);
			lang_aff_print(&blocks, k, ar->ext[d]);
		}
		ct_buf_printf(&blocks, ") {\n  %s[", T->copy_name[c]);
		for (int d = 0; d < ar->rank; d++)
			ct_buf_printf(&blocks, "%s%s", d ? ", " : "", ix[d]);
		ct_buf_printf(&blocks, "] = %s[", ar->name);
		for (int d = 0; d < ar->rank; d++)
			ct_buf_printf(&blocks, "%s%s", d ? ", " : "", ix[d]);
		ct_buf_puts(&blocks, "]\n}\n");
	}
	if (ok && lo.s && hi.s && other.s)
		tri_cut(R, T, &blocks, &params, lo.s, hi.s, v0, v1, other.s);
	ct_buf_free(&lo);
	ct_buf_free(&hi);
	ct_buf_free(&other);
	/* the params after the last param line, the copies' arrays after the last array's */
	size_t pl = 0, al = 0;
	if (k->nparams > 0)
		for (pl = pos_offset(s, n, k->params[k->nparams - 1].pos); pl < n && s[pl] != '\n'; pl++)
			;
	for (al = pos_offset(s, n, k->arrays[k->narrays - 1].pos); al < n && s[al] != '\n'; al++)
		;
	size_t xa = pos_offset(s, n, T->x->pos), xe = node_end(s, n, xa, true);
	ct_buf out;
	ct_buf_init(&out);
	bool params_first = k->nparams > 0 && pl <= al;
	size_t at = 0;
	if (params_first) {
		for (; at < pl; at++)
			ct_buf_putc(&out, s[at]);
		ct_buf_printf(&out, "\n%.*s", params.len > 0 ? (int)params.len - 1 : 0, params.s ? params.s : "");
	}
	for (; at < al; at++)
		ct_buf_putc(&out, s[at]);
	if (!params_first && params.len > 0)
		ct_buf_printf(&out, "\n%.*s", (int)params.len - 1, params.s);
	for (int c = 0; c < T->ncopy; c++) {
		const ir_array *ar = &k->arrays[T->copy[c]];
		ct_buf_printf(&out, "\narray %s : %s[", T->copy_name[c], ct_dtype_name(ar->type));
		for (int d = 0; d < ar->rank; d++) {
			ct_buf_puts(&out, d ? ", " : "");
			lang_aff_print(&out, k, ar->ext[d]);
		}
		ct_buf_puts(&out, "] temp");
	}
	for (; at < xa; at++)
		ct_buf_putc(&out, s[at]);
	ct_buf_puts(&out, blocks.s ? blocks.s : "");
	for (at = xe; at < n && s[at] == '\n'; at++)
		;
	for (; at < n; at++)
		ct_buf_putc(&out, s[at]);
	ct_buf_free(&blocks);
	ct_buf_free(&params);
	return ok ? ct_buf_take(&out) : (ct_buf_free(&out), NULL);
}

static ct_status try_triangles(auto_run *R, int depth, const char *before, char **text)
{
	*text = NULL;
	const ct_kernel *k = R->k;
	if (k->narrays == 0)
		return CT_OK;
	int had = count_sums(R->k, R->pv, &R->m, true);
	for (int i = 0; i < k->nbody && !*text; i++) {
		tri_nest T;
		auto_names keep = R->names;
		if (!tri_shape(R, k->body[i], &T)) {
			R->names = keep;
			continue;
		}
		const ir_index *I = &k->indices[T.i];
		bool ok = true;
		int64_t rows = aff_eval(I->hi, R->pv, NULL, &ok) - aff_eval(I->lo, R->pv, NULL, &ok);
		/* the register tile's types only */
		int64_t elt = tri_elt(k, T.jn->body, T.jn->nbody);
		T.unit = elt > 0 ? 4 * (R->m.vector_bytes / elt) : 0;
		if (!ok || T.unit < 1 || rows < 4 * T.unit) {
			R->names = keep;
			continue;
		}
		char *tt = tri_text(R, &T);
		ct_ctx *cx = NULL;
		ct_kernel *t = tt ? trial_parse(R->tctx, R->k, tt, &cx, NULL, 0) : NULL;
		int64_t *pv = t ? calloc((size_t)t->nparams + 1, sizeof *pv) : NULL;
		if (pv)
			ir_param_values(t, pv);
		int more = pv ? count_sums(t, pv, &R->m, true) - had : 0;
		free(pv);
		int legal = more > 0 ? tri_legal(R, &T) : -1;
		const char *in = k->indices[T.i].name, *jn = k->indices[T.j].name;
		if (more > 0 && legal == 0)
			ct_buf_printf(&R->why,
			              "# the triangle at line %d, for (%s, %s), is not cut in blocks: a dependence is carried\n"
			              "#   by %s or %s, so its iterations must keep their order\n",
			              T.x->pos.line, in, jn, in, jn);
		if (more > 0 && legal == 1) {
			ct_buf note;
			ct_buf_init(&note);
			ct_buf_printf(&note,
			              "# the triangle at line %d, for (%s, %s), is cut in blocks: %d rectangle(s), each a\n"
			              "#   product of two operands as a gemm (a register tile and packed panels), and %d\n"
			              "#   triangle(s) of at most %d rows (a triangle is cut while it has 4 x %lld rows: %lld =\n"
			              "#   four vectors of its element); legal: no dependence is carried by %s or %s, so its\n"
			              "#   iterations may run in any order\n",
			              T.x->pos.line, in, jn, T.rects, T.tris, T.leaf_rows, (long long)T.unit,
			              (long long)T.unit, in, jn);
			for (int c = 0; c < T.ncopy; c++)
				ct_buf_printf(&note,
				              "#   %s is read by the rectangles through its copy %s where the access moves with %s:\n"
				              "#   a nest caches an array once, and the two operands are packed apart\n",
				              k->arrays[T.copy[c]].name, T.copy_name[c], jn);
			auto_rewritten_after(R, t, depth, text, before, note.s ? note.s : "");
			ct_buf_free(&note);
		}
		if (!*text)
			R->names = keep;
		ct_kernel_free(t);
		ct_ctx_free(cx);
		free(tt);
	}
	return CT_OK;
}

static ct_status run_budget(auto_run *R, char **text);
static void insert_after_header(char **text, const char *lines);

ct_status ct_kernel_autoschedule(ct_kernel *k, const ct_auto_options *o, char **text, size_t *len)
{
	if (!k || !text)
		return CT_ERR_USAGE;
	*text = NULL;
	if (len)
		*len = 0;
	ct_status st = autoschedule(k, o, 0, text, NULL, NULL);
	if (st == CT_OK && len)
		*len = strlen(*text);
	return st;
}

/* ct_kernel_autoschedule's work; depth: how many nests were distributed to
 * give k (each a nested run, up to AUTO_MAX_DISTRIBUTE), note: the comments
 * saying how. */
static ct_status autoschedule(ct_kernel *k, const ct_auto_options *o, int depth, char **text, const char *note,
                               const char *keep)
{
	ct_status st = ir_kernel_ready(k);
	if (st != CT_OK)
		return st;
	if (!ir_params_complete(k))
		return ir_params_need_values(k);
	const ir_target_info *row = ir_kernel_target(k);
	if (row->gpu || !row->native_entry)
		return ct_error(k->ctx, CT_ERR_INPUT, "%s: auto chooses plans for target host only (this kernel's is %s)",
		                k->name, row->name);
	if (!k->text)
		return ct_error(k->ctx, CT_ERR_USAGE, "%s: auto needs the kernel's text (parse it from a file or a string)",
		                k->name);
	ct_auto_options def;
	if (!o) {
		ct_auto_options_init(&def);
		o = &def;
	}
	auto_run R;
	memset(&R, 0, sizeof R);
	R.k = k;
	R.o = o;
	R.keep = keep;
	R.top = -1;
	R.points = 1;
	machine_init(k->ctx, o->threads, &R.m);
	ct_status cst = machine_caches(k->ctx, o->cache_spec, &R.m);
	if (cst != CT_OK)
		return cst;
	R.pv = calloc((size_t)k->nparams + 1, sizeof *R.pv);
	R.tctx = trial_ctx(k);
	R.names.name = calloc(AUTO_NAMES, sizeof *R.names.name);
	if (!R.pv || !R.tctx || !R.names.name) {
		free(R.pv);
		free(R.names.name);
		trial_drop(&R);
		ct_ctx_free(R.tctx);
		return ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	}
	ir_param_values(k, R.pv);
	split_text(k->text, k->text_len, &R.at);
	ct_buf hb;
	ct_buf_init(&hb);
	put_head(&hb, k->text, k->text_len, &R.at);
	R.head = ct_buf_take(&hb);
	ct_buf_init(&R.params);
	ct_buf_init(&R.sched);
	ct_buf_init(&R.plan);
	ct_buf_init(&R.why);
	ct_buf kept;
	ct_buf_init(&kept);
	if (R.at.has_sched) {
		/* the user's schedule, kept: its items (without the braces) */
		const char *s = k->text + R.at.sched_lo;
		const char *ob = memchr(s, '{', R.at.sched_hi - R.at.sched_lo);
		const char *cb = k->text + R.at.sched_hi - 1;
		if (ob && cb > ob) {
			ob++;
			while (ob < cb && (*ob == ' ' || *ob == '\t' || *ob == '\r'))
				ob++;
			if (*ob == '\n')
				ob++;
			for (const char *p = ob; p < cb; p++)
				ct_buf_putc(&R.sched, *p);
			while (R.sched.len > 0 && (R.sched.s[R.sched.len - 1] == ' ' || R.sched.s[R.sched.len - 1] == '\t'))
				R.sched.len--;
			if (R.sched.len > 0 && R.sched.s[R.sched.len - 1] != '\n')
				ct_buf_putc(&R.sched, '\n');
		}
		ct_buf_puts(&kept, "# kept from the file: its schedule\n");
	}
	char *dist = NULL;
	if (depth < AUTO_MAX_DISTRIBUTE && !R.at.has_sched && !R.at.has_plan &&
	    ((try_split_sums(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_distribute(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_distribute_inner(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_expand_temps(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_fuse(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_rowfuse(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_wave(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_right_looking(&R, depth, note, &dist) == CT_OK && dist) ||
	     (try_triangles(&R, depth, note, &dist) == CT_OK && dist))) {
		ct_buf_free(&kept);
		ct_buf_free(&R.params);
		ct_buf_free(&R.sched);
		ct_buf_free(&R.plan);
		ct_buf_free(&R.why);
		free(R.head);
		free(R.pv);
		free(R.names.name);
		trial_drop(&R);
		ct_ctx_free(R.tctx);
		*text = dist;
		return CT_OK;
	}
	if (R.at.has_plan) {
		/* the user's plan: kept whole; nothing is added to it */
		ct_buf_puts(&kept, "# kept from the file: its plan (auto adds nothing to a written plan)\n");
	} else {
		wave_plan_items(k, keep, &R.plan);
		R.sched_base = R.sched.len;
		R.plan_base = R.plan.len;
		for (int i = 0; i < k->nbody && R.nests < AUTO_MAX_NESTS; i++) {
			if (k->body[i]->kind != ND_FOR)
				continue;
			auto_nest *n = calloc(1, sizeof *n);
			if (!n)
				break;
			nest_init(k, R.pv, &R.m, k->body[i], n);
			R.nests++;
			R.top = i;
			R.roots = nest_roots(k, i); /* NULL (out of memory): the whole kernel's */
			R.sched_from = R.sched.len;
			R.plan_from = R.plan.len;
			R.params_from = R.params.len;
			nest_head_set(&R, i);
			if (R.at.has_sched || !try_gemm(&R, n))
				try_plain(&R, n, R.nests - 1, !R.at.has_sched && !holds_kept(k, k->body[i], keep));
			R.top = -1;
			free(R.roots);
			R.roots = NULL;
			trial_drop(&R);
			free(R.nest_head);
			R.nest_head = NULL;
			free(n);
		}
	}
	/* the file */
	ct_buf top;
	ct_buf_init(&top);
	ct_buf_printf(&top, "# ---- cachet auto (docs/AUTO.md): the schedule and plan below were chosen from the\n"
	                    "# ---- nest, this machine's description and the cache model (%s)\n",
	              o->budget > 0 ? "then measured" : "model only, nothing measured");
	put_machine(&top, &R);
	ct_buf_puts(&top, note ? note : "");
	ct_buf_puts(&top, kept.s ? kept.s : "");
	ct_buf_puts(&top, R.why.s ? R.why.s : "");
	char *out = NULL;
	if (R.at.has_plan) {
		ct_buf pb;
		ct_buf_init(&pb);
		for (size_t i = R.at.plan_lo; i < R.at.plan_hi; i++)
			ct_buf_putc(&pb, k->text[i]);
		ct_buf_puts(&pb, "\n");
		char *t1 = assemble(R.head, R.params.s, top.s, R.sched.s, "");
		ct_buf all;
		ct_buf_init(&all);
		ct_buf_puts(&all, t1);
		ct_buf_puts(&all, R.sched.len ? "\n" : "");
		ct_buf_puts(&all, pb.s);
		free(t1);
		ct_buf_free(&pb);
		out = ct_buf_take(&all);
	} else
		out = assemble(R.head, R.params.s, top.s, R.sched.s, R.plan.s);
	ct_buf_free(&top);
	ct_buf_free(&kept);
	/* the whole file must check: what a person gets runs */
	st = CT_OK;
	if (out) {
		ct_ctx *cx = NULL;
		char err[512];
		ct_kernel *t = trial_parse(R.tctx, k, out, &cx, err, sizeof err);
		if (!t)
			st = ct_error(k->ctx, CT_ERR_UNSUPPORTED, "%s: auto made a file that does not check: %s", k->name, err);
		int64_t miss[CT_SIM_MAX_LEVELS] = {0};
		int nl = 0;
		if (t && model_cost(&R, t, miss, &nl) >= 0 && nl > 0) {
			ct_buf b;
			ct_buf_init(&b);
			ct_buf_puts(&b, "# the model's misses of the whole file at these sizes:");
			for (int l = 0; l < nl; l++)
				ct_buf_printf(&b, " L%d %lld", l + 1, (long long)miss[l]);
			ct_buf_puts(&b, "\n");
			insert_after_header(&out, b.s);
			ct_buf_free(&b);
		}
		ct_kernel_free(t);
		ct_ctx_free(cx);
	} else
		st = ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
	if (st == CT_OK && o->budget > 0 && R.tiled > 0)
		st = run_budget(&R, &out);
	ct_buf_free(&R.params);
	ct_buf_free(&R.sched);
	ct_buf_free(&R.plan);
	ct_buf_free(&R.why);
	free(R.head);
	free(R.pv);
	free(R.names.name);
	trial_drop(&R);
	ct_ctx_free(R.tctx);
	if (st != CT_OK) {
		free(out);
		return st;
	}
	*text = out;
	return CT_OK;
}

/* Replace `param NAME = OLD` by NEW in text (the first such line). */
static char *set_param_text(const char *text, const char *name, int64_t v)
{
	ct_buf b;
	ct_buf_init(&b);
	char key[64];
	snprintf(key, sizeof key, "param %s = ", name);
	const char *p = strstr(text, key);
	if (!p) {
		ct_buf_puts(&b, text);
		return ct_buf_take(&b);
	}
	for (const char *q = text; q < p; q++)
		ct_buf_putc(&b, *q);
	ct_buf_printf(&b, "%s%lld", key, (long long)v);
	p += strlen(key);
	while (*p >= '0' && *p <= '9')
		p++;
	ct_buf_puts(&b, p);
	return ct_buf_take(&b);
}

/* Insert line(s) into *text after the header comment's second line. */
static void insert_after_header(char **text, const char *lines)
{
	const char *at = strstr(*text, "# ---- nest");
	at = at ? strchr(at, '\n') : NULL;
	if (!at || !lines)
		return;
	ct_buf all;
	ct_buf_init(&all);
	for (const char *q = *text; q <= at; q++)
		ct_buf_putc(&all, *q);
	ct_buf_puts(&all, lines);
	ct_buf_puts(&all, at + 1);
	char *t = ct_buf_take(&all);
	if (t) {
		free(*text);
		*text = t;
	}
}

/* With a budget: the tuner measures the tile params' candidates (the
 * model's ranking first) and the file takes the fastest verified point. */
static ct_status run_budget(auto_run *R, char **text)
{
	ct_ctx *cx = NULL;
	char err[512];
	ct_kernel *t = trial_parse(NULL, R->k, *text, &cx, err, sizeof err);
	if (!t)
		return ct_error(R->k->ctx, CT_ERR_UNSUPPORTED, "auto: %s", err);
	ct_ctx_set_option(cx, CT_OPT_THREADS, R->m.threads);
	ct_tune_options to;
	ct_tune_options_init(&to);
	to.budget = R->o->budget;
	to.threads = R->m.threads;
	to.cache_spec = R->o->cache_spec;
	to.store_dir = R->o->store_dir;
	to.progress = R->o->progress;
	to.progress_ud = R->o->progress_ud;
	ct_tune_result tr;
	ct_status st = ct_tune(t, &to, &tr);
	if (st != CT_OK) {
		ct_status s2 = ct_error(R->k->ctx, st, "auto: tuning: %s", ct_ctx_last_message(cx));
		ct_kernel_free(t);
		ct_ctx_free(cx);
		return s2;
	}
	if (tr.best >= 0) {
		for (int i = 0; i < tr.nparams; i++) {
			char *nt = set_param_text(*text, tr.params[i], tr.candidates[tr.best].values[i]);
			free(*text);
			*text = nt;
		}
		ct_buf b;
		ct_buf_init(&b);
		ct_buf_printf(&b, "# measured: %d of %d candidates in %.1f s; the best (%s) took %.3g ms\n", tr.nmeasured,
		              tr.ncandidates, tr.seconds, ct_tune_decision_name(tr.decision),
		              tr.candidates[tr.best].seconds * 1e3);
		insert_after_header(text, b.s);
		ct_buf_free(&b);
	}
	ct_tune_result_free(&tr);
	ct_kernel_free(t);
	ct_ctx_free(cx);
	return CT_OK;
}

void ct_auto_options_init(ct_auto_options *o)
{
	if (o)
		memset(o, 0, sizeof *o);
}
