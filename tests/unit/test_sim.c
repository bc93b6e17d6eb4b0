/* test_sim.c: the exact cache simulator against brute-force LRU caches, hand-counted traces and
 * the `--cache` spec grammar. */
#include "model/sim.h"

#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------ helpers */

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64: deterministic, good enough for traces */
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int64_t rng_below(uint64_t *s, int64_t n)
{
	return (int64_t)(rng_next(s) % (uint64_t)n);
}

/* One access of a test trace. */
typedef struct tr_acc {
	int buf, ref, write;
	int64_t off;
} tr_acc;

typedef struct trace {
	int nbuf;
	sim_buffer buf[4];
	int nref;
	tr_acc *a;
	size_t n, cap;
} trace;

static void tr_init(trace *t, int nref)
{
	memset(t, 0, sizeof *t);
	t->nref = nref;
}

static int tr_buf(trace *t, int64_t elem_size, int64_t count)
{
	t->buf[t->nbuf].elem_size = elem_size;
	t->buf[t->nbuf].count = count;
	return t->nbuf++;
}

static void tr_add(trace *t, int ref, int buf, int64_t off, int write)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->a = realloc(t->a, t->cap * sizeof *t->a);
		if (!t->a) {
			fprintf(stderr, "test_sim: out of memory\n");
			exit(2);
		}
	}
	t->a[t->n++] = (tr_acc){buf, ref, write, off};
}

static void tr_free(trace *t)
{
	free(t->a);
}

/* The address convention of CLI.md, derived here independently of sim_layout. */
static void tr_bases(const trace *t, int64_t align, int64_t *base)
{
	int64_t end = 0;
	for (int i = 0; i < t->nbuf; i++) {
		base[i] = (end + align - 1) / align * align;
		end = base[i] + t->buf[i].elem_size * t->buf[i].count;
	}
}

/* ------------------------------------------------------------ brute-force references */

/* An LRU cache with a last-use time per way: on a miss the empty or least recently used way of
 * the set is replaced. Deliberately unlike the simulator's move-to-front rows. */
typedef struct bf_cache {
	int64_t line, sets, ways;
	uint64_t *tag, *used, now;
} bf_cache;

static void bf_init(bf_cache *c, const sim_level *l)
{
	c->line = l->line;
	c->ways = l->ways ? l->ways : l->size / l->line;
	c->sets = l->size / l->line / c->ways;
	c->tag = calloc((size_t)(c->sets * c->ways), sizeof *c->tag);
	c->used = calloc((size_t)(c->sets * c->ways), sizeof *c->used);
	c->now = 0;
}

static void bf_free(bf_cache *c)
{
	free(c->tag);
	free(c->used);
}

/* True on a hit. */
static bool bf_access(bf_cache *c, uint64_t addr)
{
	uint64_t line = addr / (uint64_t)c->line;
	size_t row = (size_t)(line % (uint64_t)c->sets) * (size_t)c->ways;
	uint64_t *tag = c->tag + row, *used = c->used + row;
	c->now++;
	int64_t victim = 0;
	for (int64_t w = 0; w < c->ways; w++) {
		if (used[w] && tag[w] == line) {
			used[w] = c->now;
			return true;
		}
		if (used[w] < used[victim])
			victim = w;
	}
	tag[victim] = line;
	used[victim] = c->now;
	return false;
}

/* Stack distances by brute force: the whole LRU stack as an array, most recent first. */
typedef struct bf_stack {
	uint64_t *line;
	int64_t n, cap;
	uint64_t *hist; /* hist[d] */
	uint64_t cold;
} bf_stack;

static void bf_stack_access(bf_stack *s, uint64_t line)
{
	int64_t p = 0;
	while (p < s->n && s->line[p] != line)
		p++;
	if (p == s->n) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 256;
			s->line = realloc(s->line, (size_t)s->cap * sizeof *s->line);
			s->hist = realloc(s->hist, (size_t)s->cap * sizeof *s->hist);
			memset(s->hist + s->n, 0, (size_t)(s->cap - s->n) * sizeof *s->hist);
		}
		s->n++;
		s->cold++;
	} else {
		s->hist[p]++;
	}
	memmove(s->line + 1, s->line, (size_t)p * sizeof *s->line);
	s->line[0] = line;
}

/* A fully associative LRU of cap lines over line ids 0..n-1 as a doubly linked list: O(1) per
 * access, for traces too long for the array references. */
typedef struct lru_list {
	int64_t cap, size, head, tail;
	int64_t *prev, *next;
	bool *in;
	uint64_t misses;
} lru_list;

static void lru_init(lru_list *l, int64_t cap, int64_t n)
{
	memset(l, 0, sizeof *l);
	l->cap = cap;
	l->head = l->tail = -1;
	l->prev = malloc((size_t)n * sizeof *l->prev);
	l->next = malloc((size_t)n * sizeof *l->next);
	l->in = calloc((size_t)n, sizeof *l->in);
}

static void lru_unlink(lru_list *l, int64_t x)
{
	if (l->prev[x] >= 0)
		l->next[l->prev[x]] = l->next[x];
	else
		l->head = l->next[x];
	if (l->next[x] >= 0)
		l->prev[l->next[x]] = l->prev[x];
	else
		l->tail = l->prev[x];
}

static void lru_access(lru_list *l, int64_t x)
{
	if (l->in[x]) {
		lru_unlink(l, x);
	} else {
		l->misses++;
		l->in[x] = true;
		if (++l->size > l->cap) {
			int64_t y = l->tail;
			lru_unlink(l, y);
			l->in[y] = false;
			l->size--;
		}
	}
	l->prev[x] = -1;
	l->next[x] = l->head;
	if (l->head >= 0)
		l->prev[l->head] = x;
	l->head = x;
	if (l->tail < 0)
		l->tail = x;
}

static void lru_free(lru_list *l)
{
	free(l->prev);
	free(l->next);
	free(l->in);
}

/* ------------------------------------------------------------ trace generators */

typedef void (*gen_fn)(trace *t, uint64_t seed);

static void gen_cyclic(trace *t, uint64_t seed)
{
	int64_t n = 20 + rng_below(&seed, 100);
	int b = tr_buf(t, 8, n * 8);
	for (int r = 0; r < 6; r++)
		for (int64_t i = 0; i < n * 8; i++)
			tr_add(t, 0, b, i, 0);
}

static void gen_strided(trace *t, uint64_t seed)
{
	int64_t stride = 1 + rng_below(&seed, 40), n = 4000;
	int b = tr_buf(t, 4, n);
	for (int r = 0; r < 4; r++)
		for (int64_t s = 0; s < stride; s++)
			for (int64_t i = s; i < n; i += stride)
				tr_add(t, (int)(s % 2), b, i, (int)(i & 1));
}

static void gen_power2_stride(trace *t, uint64_t seed)
{
	/* Strides of whole power-of-two blocks: the set-conflict worst case. */
	int64_t stride = INT64_C(64) << rng_below(&seed, 5), n = 64 * 1024;
	int b = tr_buf(t, 1, n);
	for (int r = 0; r < 8; r++)
		for (int64_t i = r; i < n; i += stride)
			tr_add(t, 0, b, i, 0);
}

static void gen_matrix_cols(trace *t, uint64_t seed)
{
	int64_t rows = 24 + rng_below(&seed, 40), cols = 24 + rng_below(&seed, 40);
	int a = tr_buf(t, 8, rows * cols), b = tr_buf(t, 8, rows * cols);
	for (int64_t j = 0; j < cols; j++)
		for (int64_t i = 0; i < rows; i++) {
			tr_add(t, 0, a, i * cols + j, 0);
			tr_add(t, 1, b, j * rows + i, 1);
		}
}

static void gen_matmul(trace *t, uint64_t seed)
{
	/* C[i][j] += A[i][k] * B[k][j] in CLI.md's order: A, B, C read, C write. */
	int64_t n = 12 + rng_below(&seed, 14);
	int ab = tr_buf(t, 4, n * n), bb = tr_buf(t, 4, n * n), cb = tr_buf(t, 4, n * n);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			for (int64_t k = 0; k < n; k++) {
				tr_add(t, 0, ab, i * n + k, 0);
				tr_add(t, 1, bb, k * n + j, 0);
				tr_add(t, 2, cb, i * n + j, 0);
				tr_add(t, 2, cb, i * n + j, 1);
			}
}

static void gen_matmul_tiled(trace *t, uint64_t seed)
{
	int64_t n = 32 + 8 * rng_below(&seed, 3), tile = 8 << rng_below(&seed, 2);
	int ab = tr_buf(t, 8, n * n), bb = tr_buf(t, 8, n * n), cb = tr_buf(t, 8, n * n);
	for (int64_t i0 = 0; i0 < n; i0 += tile)
		for (int64_t k0 = 0; k0 < n; k0 += tile)
			for (int64_t j0 = 0; j0 < n; j0 += tile)
				for (int64_t i = i0; i < i0 + tile && i < n; i++)
					for (int64_t k = k0; k < k0 + tile && k < n; k++)
						for (int64_t j = j0; j < j0 + tile && j < n; j++) {
							tr_add(t, 0, ab, i * n + k, 0);
							tr_add(t, 1, bb, k * n + j, 0);
							tr_add(t, 2, cb, i * n + j, 0);
							tr_add(t, 3, cb, i * n + j, 1);
						}
}

static void gen_random_small(trace *t, uint64_t seed)
{
	int64_t ws = 4 + rng_below(&seed, 60);
	int b = tr_buf(t, 16, 256);
	for (int i = 0; i < 20000; i++)
		tr_add(t, 0, b, rng_below(&seed, ws * 4), (int)(i % 3 == 0));
}

static void gen_random_mixed(trace *t, uint64_t seed)
{
	/* A hot set, a warm set and cold streaming over several buffers. */
	int b0 = tr_buf(t, 8, 64), b1 = tr_buf(t, 4, 2000), b2 = tr_buf(t, 2, 40000),
	    b3 = tr_buf(t, 1, 100);
	for (int i = 0; i < 30000; i++) {
		int64_t r = rng_below(&seed, 100);
		if (r < 50)
			tr_add(t, 0, b0, rng_below(&seed, 64), 0);
		else if (r < 80)
			tr_add(t, 1, b1, rng_below(&seed, 2000), 1);
		else if (r < 95)
			tr_add(t, 2, b2, (i * 37) % 40000, 0);
		else
			tr_add(t, 3, b3, rng_below(&seed, 100), 1);
	}
}

static void gen_stencil(trace *t, uint64_t seed)
{
	int64_t n = 30 + rng_below(&seed, 30);
	int in = tr_buf(t, 8, n * n), out = tr_buf(t, 8, n * n);
	for (int it = 0; it < 2; it++)
		for (int64_t i = 1; i < n - 1; i++)
			for (int64_t j = 1; j < n - 1; j++) {
				tr_add(t, 0, in, (i - 1) * n + j, 0);
				tr_add(t, 0, in, i * n + j - 1, 0);
				tr_add(t, 0, in, i * n + j, 0);
				tr_add(t, 0, in, i * n + j + 1, 0);
				tr_add(t, 0, in, (i + 1) * n + j, 0);
				tr_add(t, 1, out, i * n + j, 1);
			}
}

static void gen_zipf_like(trace *t, uint64_t seed)
{
	/* Distances of all magnitudes: the square of a uniform number favours small ids. */
	int b = tr_buf(t, 64, 3000);
	for (int i = 0; i < 40000; i++) {
		int64_t u = rng_below(&seed, 3000);
		tr_add(t, (int)(u & 1), b, u * u / 3000, 0);
	}
}

static const struct {
	const char *name;
	gen_fn fn;
	int nref;
} trace_table[] = {
    {"cyclic", gen_cyclic, 1},
    {"strided", gen_strided, 2},
    {"power2-stride", gen_power2_stride, 1},
    {"matrix-columns", gen_matrix_cols, 2},
    {"matmul", gen_matmul, 3},
    {"matmul-tiled", gen_matmul_tiled, 4},
    {"random-small", gen_random_small, 1},
    {"random-mixed", gen_random_mixed, 4},
    {"stencil", gen_stencil, 2},
    {"zipf-like", gen_zipf_like, 2},
};

/* Hierarchies: fully associative of several sizes (around the top array of 16 lines too),
 * direct-mapped, 2/4/8/16-way, non-power-of-two set counts, mixed line sizes. */
static const char *const spec_table[] = {
    "64:64",
    "256:64",
    "1K:64,1088:64,1152:64",
    "4K:64,16K:64",
    "8K:32,3K:128",
    "1K:64:1",
    "2K:64:2",
    "4K:32:4",
    "8K:64:8",
    "16K:64:16",
    "3K:64:4,1536:32:2",
    "2K:64:32",
    "1K:64,4K:64:4,32K:64",
    "512:16,4K:128:8,16K:64,64K:64:16",
};

#define NSEEDS 2

/* Run trace t through spec with the simulator and the references; compare everything. */
static void compare_run(const trace *t, const char *spec_text)
{
	ct_ctx *ctx = ct_ctx_new();
	sim_spec spec;
	CHECKF(sim_spec_parse(ctx, spec_text, &spec) == CT_OK, "%s", ct_ctx_last_message(ctx));
	sim *s = sim_new(ctx, &spec, t->buf, t->nbuf, t->nref);
	CHECK(s != NULL);
	if (!s) {
		ct_ctx_free(ctx);
		return;
	}
	int64_t base[4];
	tr_bases(t, sim_spec_max_line(&spec), base);
	for (int b = 0; b < t->nbuf; b++)
		CHECK(sim_address(s, b, 0) == base[b]);

	bf_cache ref[SIM_MAX_LEVELS];
	bf_stack stack[SIM_MAX_LEVELS];
	uint64_t want[SIM_MAX_LEVELS] = {0}, want_buf[SIM_MAX_LEVELS][5] = {{0}},
	         want_ref[SIM_MAX_LEVELS][5] = {{0}};
	memset(stack, 0, sizeof stack);
	for (int l = 0; l < spec.nlevels; l++)
		bf_init(&ref[l], &spec.level[l]);
	for (size_t i = 0; i < t->n; i++) {
		const tr_acc *a = &t->a[i];
		uint64_t addr = (uint64_t)(base[a->buf] + a->off * t->buf[a->buf].elem_size);
		sim_access_ref(s, a->ref, a->buf, a->off, a->write);
		for (int l = 0; l < spec.nlevels; l++) {
			if (!bf_access(&ref[l], addr)) {
				want[l]++;
				want_buf[l][a->buf]++;
				want_ref[l][a->ref]++;
			}
			if (sim_level_sets(&spec.level[l]) == 1)
				bf_stack_access(&stack[l], addr / (uint64_t)spec.level[l].line);
		}
	}
	uint64_t got[SIM_MAX_LEVELS], accesses, writes, want_writes = 0;
	for (size_t i = 0; i < t->n; i++)
		want_writes += (uint64_t)t->a[i].write;
	CHECK(sim_result(s, got, &accesses, &writes) == CT_OK);
	CHECK(accesses == t->n);
	CHECK(writes == want_writes);
	for (int l = 0; l < spec.nlevels; l++) {
		CHECKF(got[l] == want[l], "level %d: simulator %llu misses, brute force %llu",
		       l + 1, (unsigned long long)got[l], (unsigned long long)want[l]);
		for (int b = 0; b < t->nbuf; b++)
			CHECK(sim_buffer_misses(s, l, b) == want_buf[l][b]);
		CHECK(sim_buffer_misses(s, l, -1) == 0);
		for (int r = 0; r < t->nref; r++)
			CHECK(sim_ref_misses(s, l, r) == want_ref[l][r]);
		const sim_hist *h = sim_histogram(s, l);
		CHECK((h != NULL) == (sim_level_sets(&spec.level[l]) == 1));
		if (!h)
			continue;
		/* The whole histogram, not just this level's capacity. */
		CHECK(h->line == spec.level[l].line);
		CHECK(h->cold == stack[l].cold);
		CHECK(h->len == stack[l].n);
		uint64_t sum = h->cold;
		for (int64_t d = 0; d < h->len && d < stack[l].n; d++) {
			CHECKF(h->count[d] == stack[l].hist[d], "distance %lld", (long long)d);
			sum += h->count[d];
		}
		CHECK(sum == t->n && h->accesses == t->n);
		CHECK(sim_misses_for_lines(h, spec.level[l].size / spec.level[l].line) == got[l]);
	}
	for (int l = 0; l < spec.nlevels; l++) {
		bf_free(&ref[l]);
		free(stack[l].line);
		free(stack[l].hist);
	}
	sim_free(s);
	ct_ctx_free(ctx);
}

static void test_against_brute_force(void)
{
	char name[160];
	for (size_t g = 0; g < sizeof trace_table / sizeof trace_table[0]; g++)
		for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
			trace t;
			tr_init(&t, trace_table[g].nref);
			trace_table[g].fn(&t, seed * 7919);
			for (size_t c = 0; c < sizeof spec_table / sizeof spec_table[0]; c++) {
				snprintf(name, sizeof name, "%s seed %llu / %s",
				         trace_table[g].name, (unsigned long long)seed,
				         spec_table[c]);
				h_begin(name);
				compare_run(&t, spec_table[c]);
				h_end();
			}
			tr_free(&t);
		}
}

/* ------------------------------------------------------------ hand-counted cases */

static const struct {
	const char *name, *spec;
	int64_t lines[24];
	int n;
	uint64_t misses[3];
} hand_table[] = {
    {"cyclic 5 lines through a 4-line LRU misses every time",
     "256:64",
     {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4},
     15,
     {15}},
    {"4 lines fit a 4-line LRU", "256:64", {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, 12, {4}},
    {"one line repeated", "64:64", {7, 7, 7, 7, 7}, 5, {1}},
    {"LRU evicts the least recent, not the oldest", "192:64", {0, 1, 2, 0, 3, 0, 4}, 7, {5}},
    {"direct-mapped conflicts", "256:64:1", {0, 4, 0, 4, 1, 2, 3, 1}, 8, {7}},
    {"2-way set overflows", "256:64:2", {0, 2, 4, 0}, 4, {4}},
    {"2-way keeps the recent pair", "256:64:2", {0, 2, 0, 4, 0, 2}, 6, {4}},
    {"levels see the whole stream", "128:64,256:64", {0, 1, 2, 0, 1, 2}, 6, {6, 3}},
    {"fully associative by ways = lines", "256:64:4", {0, 4, 8, 12, 0, 4, 8, 12}, 8, {4}},
    {"12 sets map by modulo", "3K:64:4", {0, 12, 24, 36, 48, 0, 1, 13, 25, 37, 1}, 11, {10}},
};

static void test_hand_counted(void)
{
	for (size_t i = 0; i < sizeof hand_table / sizeof hand_table[0]; i++) {
		h_begin(hand_table[i].name);
		ct_ctx *ctx = ct_ctx_new();
		sim_spec spec;
		CHECK(sim_spec_parse(ctx, hand_table[i].spec, &spec) == CT_OK);
		/* One element per line, so offsets are line numbers. */
		sim_buffer b = {spec.level[0].line, 64};
		sim *s = sim_new(ctx, &spec, &b, 1, 0);
		CHECK(s != NULL);
		if (s) {
			for (int k = 0; k < hand_table[i].n; k++)
				sim_access(s, 0, hand_table[i].lines[k], 0);
			uint64_t got[SIM_MAX_LEVELS];
			CHECK(sim_result(s, got, NULL, NULL) == CT_OK);
			for (int l = 0; l < spec.nlevels; l++)
				CHECKF(got[l] == hand_table[i].misses[l], "level %d: %llu misses",
				       l + 1, (unsigned long long)got[l]);
			sim_free(s);
		}
		ct_ctx_free(ctx);
		h_end();
	}
}

/* ------------------------------------------------------------ tree-PLRU */

/* Tree-PLRU on one 4-way set (256:64:4:plru), access by access. Worked by hand with the tree's
 * bits b1 (root: 0 = ways 0-1, 1 = ways 2-3), b2 (0 = way 0, 1 = way 1), b3 (0 = way 2,
 * 1 = way 3), all 0 at first; an access sets the bits of its path to point away from its way;
 * a miss fills the lowest empty way, else the way the bits point to:
 *   A B C D  fill ways 0 1 2 3 (misses); bits after D: b1=0 b2=0 b3=0
 *   A        hit way 0: b1=1 b2=1
 *   E        miss: b1=1 -> b3=0 -> way 2 (C out; LRU would drop B): b1=0 b3=1
 *   B        hit way 1: b1=1 b2=0
 *   C        miss: b1=1 -> b3=1 -> way 3 (D out): b1=0 b3=0
 *   D        miss: b1=0 -> b2=0 -> way 0 (A out): b1=1 b2=1
 *   A        miss: b1=1 -> b3=0 -> way 2 (E out): b1=0 b3=1
 *   E        miss: b1=0 -> b2=1 -> way 1 (B out): b1=1 b2=0
 *   C        hit way 3: b1=0 b3=0
 *   D        hit way 0: b1=1 b2=1
 * 9 misses; LRU misses 10 of the same 13 accesses (E drops B, so the B after it misses). */
static void test_plru_hand(void)
{
	static const int64_t seq[] = {0, 1, 2, 3, 0, 4, 1, 2, 3, 0, 4, 2, 3};
	static const int hit[] = {0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1};
	const char *specs[] = {"256:64:4:plru", "256:64:4:lru"};
	for (int v = 0; v < 2; v++) {
		ct_ctx *ctx = ct_ctx_new();
		sim_spec spec;
		CHECK(sim_spec_parse(ctx, specs[v], &spec) == CT_OK);
		sim_buffer b = {64, 64};
		sim *s = sim_new(ctx, &spec, &b, 1, 0);
		CHECK(s != NULL);
		uint64_t before = 0, got = 0;
		int lru_hits = 0;
		for (int i = 0; s && i < 13; i++) {
			sim_access(s, 0, seq[i], 0);
			CHECK(sim_result(s, &got, NULL, NULL) == CT_OK);
			if (v == 0)
				CHECKF((got == before) == (hit[i] != 0), "access %d (line %lld): %s", i,
				       (long long)seq[i], got == before ? "hit" : "miss");
			lru_hits += got == before;
			before = got;
		}
		CHECKF(v == 0 ? got == 9 : got == 10 && lru_hits == 3, "%s: %llu misses, %d hits", specs[v],
		       (unsigned long long)got, lru_hits);
		sim_free(s);
		ct_ctx_free(ctx);
	}
}

/* A reference tree-PLRU written from the definition, unlike sim.c: a bool per tree node, the
 * victim found by descending from the root, the path found by bisecting the way range. */
typedef struct ref_plru {
	int64_t sets, ways, line;
	uint64_t *tag;
	bool *valid, *node; /* [sets * ways]; node [sets * ways], index 1..ways-1 used */
} ref_plru;

static bool ref_plru_access(ref_plru *c, uint64_t addr)
{
	uint64_t line = addr / (uint64_t)c->line;
	int64_t set = (int64_t)(line % (uint64_t)c->sets);
	uint64_t *tag = c->tag + set * c->ways;
	bool *valid = c->valid + set * c->ways, *node = c->node + set * c->ways;
	int64_t way = -1;
	for (int64_t w = 0; w < c->ways && way < 0; w++)
		if (valid[w] && tag[w] == line)
			way = w;
	bool hit = way >= 0;
	for (int64_t w = 0; w < c->ways && way < 0; w++)
		if (!valid[w])
			way = w;
	if (way < 0) {
		int64_t lo = 0, hi = c->ways, n = 1;
		while (hi - lo > 1) {
			int64_t mid = (lo + hi) / 2;
			if (node[n])
				lo = mid, n = 2 * n + 1;
			else
				hi = mid, n = 2 * n;
		}
		way = lo;
	}
	tag[way] = line;
	valid[way] = true;
	int64_t lo = 0, hi = c->ways, n = 1;
	while (hi - lo > 1) {
		int64_t mid = (lo + hi) / 2;
		bool right = way >= mid;
		node[n] = !right; /* point to the other half */
		if (right)
			lo = mid, n = 2 * n + 1;
		else
			hi = mid, n = 2 * n;
	}
	return hit;
}

/* sim.c's PLRU against the reference on random traces (hot lines, strides and conflicts), one
 * access at a time, over 1 to 16 ways and power-of-two and odd set counts; 2-way PLRU is LRU. */
static void test_plru_reference(void)
{
	static const struct {
		int64_t sets, ways;
	} shape[] = {{1, 4}, {1, 8}, {1, 16}, {3, 4}, {4, 2}, {4, 8}, {5, 16}, {8, 4}, {7, 8}, {16, 1}};
	int compared = 0, differ = 0;
	for (size_t c = 0; c < sizeof shape / sizeof shape[0]; c++)
		for (uint64_t seed = 1; seed <= 6; seed++) {
			ct_ctx *ctx = ct_ctx_new();
			char text[64], lru_text[64];
			int64_t line = 32, size = shape[c].sets * shape[c].ways * line;
			snprintf(text, sizeof text, "%lld:%lld:%lld:plru", (long long)size, (long long)line,
			         (long long)shape[c].ways);
			snprintf(lru_text, sizeof lru_text, "%lld:%lld:%lld", (long long)size, (long long)line,
			         (long long)shape[c].ways);
			sim_spec spec, lru;
			CHECK(sim_spec_parse(ctx, text, &spec) == CT_OK && spec.level[0].policy == SIM_PLRU);
			CHECK(sim_spec_parse(ctx, lru_text, &lru) == CT_OK);
			sim_buffer b = {1, 1 << 16};
			sim *s = sim_new(ctx, &spec, &b, 1, 0), *sl = sim_new(ctx, &lru, &b, 1, 0);
			ref_plru r = {shape[c].sets, shape[c].ways, line, NULL, NULL, NULL};
			size_t n = (size_t)(shape[c].sets * shape[c].ways);
			r.tag = calloc(n, sizeof *r.tag);
			r.valid = calloc(n, sizeof *r.valid);
			r.node = calloc(n, sizeof *r.node);
			uint64_t st = seed * 0x9E3779B97F4A7C15u, before = 0, lbefore = 0, got, lgot;
			int64_t hot = (int64_t)(shape[c].sets * shape[c].ways) * 3 / 2 + 1;
			for (int i = 0; s && sl && i < 4000; i++) {
				int64_t off = rng_below(&st, 3) == 0 ? rng_below(&st, 1 << 16)
				              : rng_below(&st, 2) ? rng_below(&st, hot) * line
				                                  : (i % hot) * line * (int64_t)shape[c].sets;
				off %= 1 << 16;
				sim_access(s, 0, off, 0);
				sim_access(sl, 0, off, 0);
				sim_result(s, &got, NULL, NULL);
				sim_result(sl, &lgot, NULL, NULL);
				bool ref_hit = ref_plru_access(&r, (uint64_t)off);
				compared++;
				if ((got == before) != ref_hit)
					differ++;
				if (shape[c].ways <= 2 && (got == before) != (lgot == lbefore))
					differ++;
				before = got;
				lbefore = lgot;
			}
			free(r.tag);
			free(r.valid);
			free(r.node);
			sim_free(s);
			sim_free(sl);
			ct_ctx_free(ctx);
		}
	printf("  plru reference: %d accesses compared, %d differ\n", compared, differ);
	CHECK(compared == 10 * 6 * 4000);
	CHECK(differ == 0);
}

/* distances: 0 1 0 1 2 0 -> inf inf 1 1 inf 2; same line twice in a row -> 0 */
static void test_histogram_small(void)
{
	ct_ctx *ctx = ct_ctx_new();
	sim_spec spec;
	CHECK(sim_spec_parse(ctx, "4K:64", &spec) == CT_OK);
	sim_buffer b = {8, 1024};
	sim *s = sim_new(ctx, &spec, &b, 1, 0);
	const int64_t lines[] = {0, 1, 0, 1, 2, 0, 0};
	for (int i = 0; i < 7; i++)
		sim_access(s, 0, lines[i] * 8 + i % 8, 0); /* any element of the line */
	const sim_hist *h = sim_histogram(s, 0);
	CHECK(h && h->cold == 3 && h->accesses == 7 && h->len == 3);
	CHECK(h && h->count[0] == 1 && h->count[1] == 2 && h->count[2] == 1);
	CHECK(h && sim_misses_for_lines(h, 0) == 7 && sim_misses_for_lines(h, 1) == 6 &&
	      sim_misses_for_lines(h, 2) == 4 && sim_misses_for_lines(h, 3) == 3 &&
	      sim_misses_for_lines(h, 1000) == 3);
	sim_free(s);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ spec grammar */

static const struct {
	const char *text;
	int nlevels;
	sim_level level[3];
	int64_t sets[3];
} spec_good[] = {
    {"32K:64", 1, {{32768, 64, 0, 0, 0}}, {1}},
    {"32K:64,1M:64", 2, {{32768, 64, 0, 0, 0}, {1 << 20, 64, 0, 0, 0}}, {1, 1}},
    {"48K:64:12", 1, {{49152, 64, 12, 0, 0}}, {64}},
    {"32768:64:8", 1, {{32768, 64, 8, 0, 0}}, {64}},
    {"1m:128:0", 1, {{1 << 20, 128, 0, 0, 0}}, {1}},
    {"2G:64:16", 1, {{INT64_C(2) << 30, 64, 16, 0, 0}}, {INT64_C(2) << 30 >> 10}},
    {" 32K : 64 , 256k:64:8 ", 2, {{32768, 64, 0, 0, 0}, {262144, 64, 8, 0, 0}}, {1, 512}},
    {"3K:64:4", 1, {{3072, 64, 4, 0, 0}}, {12}},
    {"64:64", 1, {{64, 64, 0, 0, 0}}, {1}},
    {"64:64:1", 1, {{64, 64, 1, 0, 0}}, {1}},
    {"1K:1K", 1, {{1024, 1024, 0, 0, 0}}, {1}},
    {"1K:64:16", 1, {{1024, 64, 16, 0, 0}}, {1}},
    {"16K:32:2,512K:64:8,8M:64:16",
     3,
     {{16384, 32, 2, 0, 0}, {524288, 64, 8, 0, 0}, {8 << 20, 64, 16, 0, 0}},
     {256, 1024, 8192}},
    {"32K:64:8:plru", 1, {{32768, 64, 8, SIM_PLRU, 0}}, {64}},
    {"32K:64:8:lru:private,1M:64:16:shared:plru",
     2,
     {{32768, 64, 8, SIM_LRU, SIM_SHARE_PRIVATE}, {1 << 20, 64, 16, SIM_PLRU, SIM_SHARE_SHARED}},
     {64, 1024}},
    {"32K:64:private , 1M : 64 : 1 : plru", 2, {{32768, 64, 0, SIM_LRU, SIM_SHARE_PRIVATE}, {1 << 20, 64, 1, SIM_PLRU, 0}},
     {1, 16384}},
    {"256:64:4:plru", 1, {{256, 64, 4, SIM_PLRU, 0}}, {1}},
};

static void test_spec_good(void)
{
	for (size_t i = 0; i < sizeof spec_good / sizeof spec_good[0]; i++) {
		h_begin(spec_good[i].text);
		ct_ctx *ctx = ct_ctx_new();
		sim_spec spec;
		CHECKF(sim_spec_parse(ctx, spec_good[i].text, &spec) == CT_OK, "%s",
		       ct_ctx_last_message(ctx));
		CHECK(spec.nlevels == spec_good[i].nlevels);
		for (int l = 0; l < spec.nlevels && l < 3; l++) {
			CHECK(spec.level[l].size == spec_good[i].level[l].size);
			CHECK(spec.level[l].line == spec_good[i].level[l].line);
			CHECK(spec.level[l].ways == spec_good[i].level[l].ways);
			CHECK(sim_level_sets(&spec.level[l]) == spec_good[i].sets[l]);
			CHECK(spec.level[l].policy == spec_good[i].level[l].policy);
			CHECK(spec.level[l].sharing == spec_good[i].level[l].sharing);
			/* the text form reads back to the same level */
			char text[256];
			sim_spec back;
			CHECK(sim_spec_parse(ctx, sim_spec_format(&spec, text, sizeof text), &back) == CT_OK);
			CHECKF(memcmp(&back, &spec, sizeof spec) == 0, "%s", text);
		}
		CHECK(sim_spec_check(ctx, &spec) == CT_OK);
		ct_ctx_free(ctx);
		h_end();
	}
}

static const struct {
	const char *text, *message;
} spec_bad[] = {
    {"", "empty"},
    {"   ", "empty"},
    {"32K", "level 1: expected ':' and a line size"},
    {"32K:", "level 1: expected a line size"},
    {"32K:48", "level 1: line size 48 is not a power of two"},
    {"100:64", "level 1: size 100 is not a multiple of the line size 64"},
    {"32K:64:3", "level 1: size 32768 is not a multiple of line * ways = 192"},
    {"256:64:8", "level 1: 8 ways exceed the 4 lines of the level"},
    {"32K:64,", "level 2: expected a size"},
    {"32K:64;1M:64", "level 1: unexpected ';1M:64'"},
    {"32X:64", "level 1: expected ':'"},
    {"-1:64", "level 1: expected a size"},
    {"0:64", "level 1: size 0 is not in 1..2^48"},
    {"64:0", "level 1: line size 0 is not in"},
    {"999999999999999999999:64", "level 1: expected a size"},
    {"1000000G:64", "level 1: expected a size"},
    {"32K:64:4K", "level 1: unexpected 'K'"},
    {"32K:64:x", "level 1: expected lru, plru, private or shared after ':' at 'x'"},
    {"32K:64,1M:96", "level 2: line size 96 is not a power of two"},
    {"1K:64,1K:64,1K:64,1K:64,1K:64,1K:64,1K:64,1K:64,1K:64", "more than 8 levels"},
    {"32K:64:-1", "expected lru, plru, private or shared after ':' at '-1'"},
    {"48K:64:12:plru", "level 1: a tree-PLRU level needs a power-of-two number of ways"},
    {"32K:64:plru", "needs a power-of-two number of ways (its tree of ways - 1 bits), not 0"},
    {"32K:64:8:plru:lru", "a replacement policy given twice"},
    {"32K:64:8:private:shared", "private/shared given twice"},
    {"32K:64:8:fifo", "expected lru, plru, private or shared after ':' at 'fifo'"},
    {"32K:64,1M:64:16:plru:", "level 2: expected lru, plru, private or shared"},
};

static void test_spec_bad(void)
{
	for (size_t i = 0; i < sizeof spec_bad / sizeof spec_bad[0]; i++) {
		h_begin(spec_bad[i].text);
		ct_ctx *ctx = ct_ctx_new();
		sim_spec spec;
		spec.nlevels = 5;
		CHECK(sim_spec_parse(ctx, spec_bad[i].text, &spec) == CT_ERR_INPUT);
		CHECK(ct_ctx_last_status(ctx) == CT_ERR_INPUT);
		CHECKF(strstr(ct_ctx_last_message(ctx), spec_bad[i].message) != NULL, "got \"%s\"",
		       ct_ctx_last_message(ctx));
		CHECK(strstr(ct_ctx_last_message(ctx), "cache spec") != NULL);
		CHECK(spec.nlevels == 0);
		ct_ctx_free(ctx);
		h_end();
	}
}

static void test_spec_check_by_hand(void)
{
	ct_ctx *ctx = ct_ctx_new();
	sim_spec spec;
	memset(&spec, 0, sizeof spec);
	CHECK(sim_spec_check(ctx, &spec) == CT_ERR_INPUT);
	CHECK(strstr(ct_ctx_last_message(ctx), "0 levels") != NULL);
	spec.nlevels = 1;
	spec.level[0] = (sim_level){4096, 64, 3, SIM_LRU, SIM_SHARE_DEFAULT};
	CHECK(sim_spec_check(ctx, &spec) == CT_ERR_INPUT);
	CHECK(sim_new(ctx, &spec, NULL, 0, 0) == NULL);
	spec.level[0].ways = 4;
	CHECK(sim_spec_check(ctx, &spec) == CT_OK);
	CHECK(sim_spec_max_line(&spec) == 64);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ layout and usage */

static void test_layout(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const sim_buffer b[] = {{8, 10}, {4, 3}, {1, 0}, {8, 16}, {2, 32}};
	int64_t base[5];
	CHECK(sim_layout(ctx, b, 5, 64, base) == 384);
	CHECK(base[0] == 0 && base[1] == 128 && base[2] == 192 && base[3] == 192 && base[4] == 320);
	CHECK(sim_layout(ctx, b, 2, 1, base) == 92 && base[1] == 80);
	CHECK(sim_layout(ctx, b, 2, 48, base) == -1);
	CHECK(ct_ctx_last_status(ctx) == CT_ERR_USAGE);
	const sim_buffer huge[] = {{8, INT64_MAX / 16}, {8, INT64_MAX / 16}, {8, 64}};
	CHECK(sim_layout(ctx, huge, 3, 64, base) == -1);
	CHECK(ct_ctx_last_status(ctx) == CT_ERR_LIMIT);
	const sim_buffer neg[] = {{8, -1}};
	CHECK(sim_layout(ctx, neg, 1, 64, base) == -1);
	ct_ctx_free(ctx);
}

static void test_usage_errors(void)
{
	ct_ctx *ctx = ct_ctx_new();
	sim_spec spec;
	CHECK(sim_spec_parse(ctx, "1K:64,4K:64:4", &spec) == CT_OK);
	sim_buffer b = {8, 100};
	sim *s = sim_new(ctx, &spec, &b, 1, 2);
	sim_access_ref(s, 1, 0, 99, 1);
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_OK);
	sim_access(s, 0, 100, 0);
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_ERR_USAGE);
	CHECK(strstr(ct_ctx_last_message(ctx), "out of range") != NULL);
	uint64_t naccess = 0, misses[2];
	sim_access(s, 0, 1, 0); /* ignored after the sticky error */
	sim_result(s, misses, &naccess, NULL);
	CHECK(naccess == 1 && misses[0] == 1 && misses[1] == 1);
	CHECK(sim_ref_misses(s, 0, 1) == 1 && sim_ref_misses(s, 0, 2) == 0);
	CHECK(sim_buffer_misses(s, 2, 0) == 0 && sim_buffer_misses(s, 0, 1) == 0);
	sim_free(s);

	s = sim_new(ctx, &spec, &b, 1, 0);
	sim_access_ref(s, 0, 0, 1, 0); /* no reference ids declared */
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_ERR_USAGE);
	sim_free(s);
	s = sim_new(ctx, &spec, &b, 1, 0);
	sim_access(s, 1, 0, 0);
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_ERR_USAGE);
	sim_free(s);
	s = sim_new(ctx, &spec, &b, 1, 0);
	sim_access(s, 0, -1, 0);
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_ERR_USAGE);
	sim_free(s);

	/* line numbers need one line size */
	CHECK(sim_spec_parse(ctx, "1K:64,4K:128", &spec) == CT_OK);
	s = sim_new(ctx, &spec, NULL, 0, 0);
	const uint64_t lines[] = {1, 2, 3};
	sim_access_lines(s, lines, 3, NULL);
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_ERR_USAGE);
	sim_free(s);
	CHECK(sim_spec_parse(ctx, "1K:64", &spec) == CT_OK);
	s = sim_new(ctx, &spec, NULL, 0, 0);
	const uint64_t big[] = {UINT64_MAX - 1};
	sim_access_lines(s, big, 1, NULL);
	CHECK(sim_result(s, NULL, NULL, NULL) == CT_ERR_USAGE);
	sim_free(s);
	sim_free(NULL);

	/* the trace adapter has ct_trace_fn's shape */
	ct_trace_fn fn = sim_trace;
	s = sim_new(ctx, &spec, &b, 1, 0);
	fn(s, 0, 3, 1);
	fn(s, 0, 4, 0);
	uint64_t w = 0;
	CHECK(sim_result(s, misses, &naccess, &w) == CT_OK && naccess == 2 && w == 1 &&
	      misses[0] == 1);
	sim_free(s);
	ct_ctx_free(ctx);
}

/* Line numbers in a batch agree with element accesses; writes are counted from the flags. */
static void test_lines_batch(void)
{
	ct_ctx *ctx = ct_ctx_new();
	sim_spec spec;
	CHECK(sim_spec_parse(ctx, "2K:64,1K:64:2", &spec) == CT_OK);
	sim_buffer b = {64, 4096};
	sim *s1 = sim_new(ctx, &spec, &b, 1, 0), *s2 = sim_new(ctx, &spec, NULL, 0, 0);
	uint64_t seed = 5, lines[5000];
	uint8_t w[5000];
	for (int i = 0; i < 5000; i++) {
		lines[i] = (uint64_t)rng_below(&seed, 100);
		w[i] = (uint8_t)(i & 1);
		sim_access(s1, 0, (int64_t)lines[i], w[i]);
	}
	sim_access_lines(s2, lines, 5000, w);
	uint64_t m1[2], m2[2], a1, a2, w1, w2;
	CHECK(sim_result(s1, m1, &a1, &w1) == CT_OK && sim_result(s2, m2, &a2, &w2) == CT_OK);
	CHECK(m1[0] == m2[0] && m1[1] == m2[1] && a1 == a2 && w1 == w2 && w2 == 2500);
	CHECK(sim_buffer_misses(s2, 0, -1) == m2[0] && sim_ref_misses(s2, 1, -1) == m2[1]);
	sim_free(s1);
	sim_free(s2);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ long traces */

/* Millions of accesses: many tree compactions (stamps wrap around the tree), hash and tree
 * growth, sparse 64-bit line numbers. Reference: O(1) linked-list LRUs over line ids. */
typedef struct long_case {
	const char *name;
	int kind;
	int64_t ids; /* distinct line ids */
	int64_t n;   /* accesses */
} long_case;

static const long_case long_table[] = {
    {"stable working set, compaction without growth", 0, 700, 3000000},
    {"growing sweeps, tree and hash growth", 1, 150000, 2500000},
    {"sparse 64-bit lines, hot and cold mix", 2, 60000, 2000000},
    {"working set at the top array's edge", 3, 17, 1000000},
};

static int64_t long_next(const long_case *c, uint64_t *seed, int64_t i)
{
	switch (c->kind) {
	case 0:
		return rng_below(seed, 4) ? rng_below(seed, 40) : rng_below(seed, c->ids);
	case 1: {
		/* sweep 0..r-1 with r growing, interleaved with small random reuse */
		int64_t r = 1000 + i / 20;
		if (r > c->ids)
			r = c->ids;
		return i % 5 ? (i * 7) % r : rng_below(seed, r);
	}
	case 2:
		return rng_below(seed, 3) ? rng_below(seed, 500) : rng_below(seed, c->ids);
	default:
		return i % 2 ? (i / 2) % c->ids : rng_below(seed, c->ids);
	}
}

static void test_long_traces(void)
{
	const int64_t caps[] = {1, 2, 15, 16, 17, 18, 64, 500, 699, 700, 701, 5000, 100000};
	enum { NCAPS = sizeof caps / sizeof caps[0], CHUNK = 4096 };
	for (size_t c = 0; c < sizeof long_table / sizeof long_table[0]; c++) {
		const long_case *lc = &long_table[c];
		h_begin(lc->name);
		ct_ctx *ctx = ct_ctx_new();
		sim_spec spec;
		CHECK(sim_spec_parse(ctx, "32K:64,64K:64:8", &spec) == CT_OK);
		sim *s = sim_new(ctx, &spec, NULL, 0, 0);
		lru_list ref[NCAPS];
		for (int k = 0; k < NCAPS; k++)
			lru_init(&ref[k], caps[k], lc->ids);
		bf_cache sa;
		bf_init(&sa, &spec.level[1]);
		uint64_t sa_misses = 0, seed = 99 + c, lines[CHUNK];
		for (int64_t i = 0; i < lc->n; i += CHUNK) {
			int64_t m = lc->n - i < CHUNK ? lc->n - i : CHUNK;
			for (int64_t j = 0; j < m; j++) {
				int64_t id = long_next(lc, &seed, i + j);
				/* a bijection onto sparse lines for kind 2 */
				lines[j] = lc->kind == 2
				               ? ((uint64_t)id * UINT64_C(0x2545F4914F6CDD1D)) &
				                     ((UINT64_C(1) << 50) - 1)
				               : (uint64_t)id;
				for (int k = 0; k < NCAPS; k++)
					lru_access(&ref[k], id);
				sa_misses += !bf_access(&sa, lines[j] * 64);
			}
			sim_access_lines(s, lines, (size_t)m, NULL);
		}
		uint64_t got[2], naccess;
		CHECK(sim_result(s, got, &naccess, NULL) == CT_OK && naccess == (uint64_t)lc->n);
		CHECK(got[1] == sa_misses);
		const sim_hist *h = sim_histogram(s, 0);
		uint64_t sum = h->cold;
		for (int64_t d = 0; d < h->len; d++)
			sum += h->count[d];
		CHECK(sum == (uint64_t)lc->n);
		CHECK(got[0] == sim_misses_for_lines(h, 512));
		for (int k = 0; k < NCAPS; k++)
			CHECKF(sim_misses_for_lines(h, caps[k]) == ref[k].misses,
			       "capacity %lld: %llu, reference %llu", (long long)caps[k],
			       (unsigned long long)sim_misses_for_lines(h, caps[k]),
			       (unsigned long long)ref[k].misses);
		for (int k = 0; k < NCAPS; k++)
			lru_free(&ref[k]);
		bf_free(&sa);
		sim_free(s);
		ct_ctx_free(ctx);
		h_end();
	}
}

/* ------------------------------------------------------------ allocation failures */

typedef struct fail_alloc {
	int left; /* allocations that succeed before every later one fails */
} fail_alloc;

static void *failing_alloc(void *ud, void *ptr, size_t size)
{
	fail_alloc *f = ud;
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	if (f->left-- <= 0)
		return NULL;
	return realloc(ptr, size);
}

/* Every allocation of sim_new and of a growing run may fail: the result is then an error, never
 * a crash or a leak (the sanitizer build checks leaks), and otherwise it is exact. */
static void test_alloc_failures(void)
{
	uint64_t want = 0;
	for (int k = 0; k < 60; k++) {
		fail_alloc f = {k + 1}; /* the context itself comes first */
		ct_ctx *ctx = ct_ctx_new_with_alloc(failing_alloc, &f);
		if (!ctx)
			continue;
		sim_spec spec;
		CHECK(sim_spec_parse(ctx, "1K:64,2K:64:2", &spec) == CT_OK);
		sim_buffer b = {8, 400000};
		sim *s = sim_new(ctx, &spec, &b, 1, 1);
		if (!s) {
			CHECK(ct_ctx_last_status(ctx) == CT_ERR_NOMEM);
			ct_ctx_free(ctx);
			continue;
		}
		for (int64_t i = 0; i < 400000; i += 8)
			sim_access_ref(s, 0, 0, i % 5 ? i : 8, 0);
		uint64_t m[2];
		ct_status st = sim_result(s, m, NULL, NULL);
		CHECK(st == CT_OK || st == CT_ERR_NOMEM);
		if (st == CT_OK) {
			if (!want)
				want = m[0];
			CHECK(m[0] == want);
		}
		sim_free(s);
		ct_ctx_free(ctx);
	}
	CHECK(want != 0);
}

/* ------------------------------------------------------------ kernels with cache regions */

/* ct_kernel_simulate on a planned tree: cache buffers are buffers of the
 * trace on their own regions, and their copies count under no reference.
 * In a cache that holds everything, the plain kernel misses once per line
 * of its arrays; with AA = cache(A) the body's reads of A hit the lines the
 * copies brought in, so reference A (read) has no misses while the copies
 * add accesses. */
static void test_simulate_cached(void)
{
	static const char *const text[2] = {
	    "kernel mmc\nparam M = 40, N = 36, K = 20\narray A : f32[M, K] input\n"
	    "array B : f32[K, N] input\narray C : f32[M, N] inout\n"
	    "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	    "schedule { ii, jj, kk = tile(i=16, j=8, k=8)\n reorder(i, j, k, ii, kk, jj) }\n",
	    "plan {\n AA = cache(A, index=ii)\n}\n"};
	ct_sim_result r[2];
	memset(r, 0, sizeof r);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k[2] = {NULL, NULL}; /* they own the names in r */
	for (int w = 0; w < 2; w++) {
		char buf[1024];
		snprintf(buf, sizeof buf, "%s%s", text[0], w ? text[1] : "");
		k[w] = ct_kernel_parse(ctx, buf, strlen(buf), "mmc.cachet");
		CHECKF(k[w] != NULL, "%s", ct_ctx_last_message(ctx));
		ct_status st = k[w] ? ct_kernel_simulate(k[w], "1M:64", &r[w]) : CT_ERR_INPUT;
		CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	}
	int64_t want = 40 * 36 * 20 * 4;
	CHECKF(r[0].accesses == want, "%lld accesses, want %lld", (long long)r[0].accesses,
	       (long long)want);
	/* 40*20 + 20*36 + 40*36 floats, 16 to a line */
	CHECKF(r[0].level[0].misses == (800 + 720 + 1440) / 16, "%lld misses",
	       (long long)r[0].level[0].misses);
	CHECK(r[1].accesses > r[0].accesses);
	CHECK(r[1].level[0].misses > r[0].level[0].misses);
	CHECK(r[0].nrefs == 4 && r[1].nrefs == 4);
	if (r[0].nrefs == 4 && r[1].nrefs == 4) {
		int64_t sum = 0;
		for (int i = 0; i < 4; i++) {
			CHECK(strcmp(r[0].refs[i].array, r[1].refs[i].array) == 0);
			sum += r[1].refs[i].misses[0];
		}
		CHECK(strcmp(r[1].refs[0].array, "A") == 0 && r[1].refs[0].misses[0] == 0);
		CHECK(r[0].refs[0].misses[0] > 0);
		/* the rest are the copies' misses, under no reference */
		CHECK(sum < r[1].level[0].misses);
	}
	ct_sim_result_free(&r[0]);
	ct_sim_result_free(&r[1]);
	ct_kernel_free(k[0]);
	ct_kernel_free(k[1]);
	ct_ctx_free(ctx);
}

int main(void)
{
	test_against_brute_force();
	test_hand_counted();
	RUN(test_plru_hand);
	RUN(test_plru_reference);
	test_spec_good();
	test_spec_bad();
	RUN(test_histogram_small);
	RUN(test_spec_check_by_hand);
	RUN(test_layout);
	RUN(test_usage_errors);
	RUN(test_lines_batch);
	test_long_traces();
	RUN(test_alloc_failures);
	RUN(test_simulate_cached);
	return h_report();
}
