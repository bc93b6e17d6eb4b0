/* test_tensor.c: tensor views: layouts, sub-views, halo caches, index casts, copies, errors. */
#include "cachet.h"
#include "harness.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- test environment */

/* An allocator that counts live blocks (leaks show without ASan) and can
 * fail one chosen allocation (fault injection). */
typedef struct tally {
	int64_t live;    /* blocks allocated and not yet freed */
	int64_t calls;   /* fresh allocations so far */
	int64_t fail_at; /* fail the fresh allocation with this number (0: never) */
} tally;

static void *tally_alloc(void *ud, void *ptr, size_t size)
{
	tally *t = ud;
	if (size == 0) {
		if (ptr) {
			t->live--;
			free(ptr);
		}
		return NULL;
	}
	if (ptr)
		return realloc(ptr, size);
	t->calls++;
	if (t->fail_at && t->calls == t->fail_at)
		return NULL;
	void *p = malloc(size);
	if (p)
		t->live++;
	return p;
}

/* One ctx per case, so that a leak is attributed to the case that made it. */
typedef struct env {
	tally tl;
	ct_ctx *ctx;
	double buf[256]; /* data of the small tensors of error cases */
} env;

static void env_open(env *e)
{
	memset(e, 0, sizeof *e);
	e->ctx = ct_ctx_new_with_alloc(tally_alloc, &e->tl);
	CHECK(e->ctx != NULL);
}

static void env_close(env *e)
{
	ct_ctx_free(e->ctx);
	CHECKF(e->tl.live == 0, "%lld block(s) leaked", (long long)e->tl.live);
}

/* A value that names a logical index of a top-level tensor (extents < 100),
 * so that any element read back tells where it came from; never 0, the
 * value of a clipped halo element. */
static double enc(int rank, const int64_t *idx)
{
	double v = 0;
	for (int d = 0; d < rank; d++)
		v = v * 100 + (double)idx[d];
	return v + 1;
}

/* Advance idx through the box [lo, hi) in row-major order; false when done. */
static bool next_index(int rank, int64_t *idx, const int64_t *lo, const int64_t *hi)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++idx[d] < hi[d])
			return true;
		idx[d] = lo[d];
	}
	return false;
}

static bool box_empty(int rank, const int64_t *lo, const int64_t *hi)
{
	for (int d = 0; d < rank; d++)
		if (lo[d] >= hi[d])
			return true;
	return false;
}

static bool in_box(int rank, const int64_t *idx, const int64_t *lo, const int64_t *hi)
{
	for (int d = 0; d < rank; d++)
		if (idx[d] < lo[d] || idx[d] >= hi[d])
			return false;
	return true;
}

static int64_t box_count(int rank, const int64_t *lo, const int64_t *hi)
{
	int64_t n = 1;
	for (int d = 0; d < rank; d++)
		n *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
	return n;
}

static void window_of(const ct_tensor *t, int64_t *lo, int64_t *hi)
{
	for (int d = 0; d < ct_tensor_rank(t); d++)
		CHECK(ct_tensor_window(t, d, &lo[d], &hi[d]) == CT_OK);
}

/* Set every element of t's extents to enc(its top-level index). */
static void fill_enc(ct_tensor *t)
{
	int rank = ct_tensor_rank(t);
	int64_t lo[8] = {0}, hi[8], idx[8] = {0}, r[8];
	for (int d = 0; d < rank; d++)
		hi[d] = ct_tensor_extent(t, d);
	if (box_empty(rank, lo, hi))
		return;
	do {
		CHECK(ct_tensor_cast(t, NULL, idx, r) == CT_OK);
		CHECK(ct_tensor_set(t, idx, enc(rank, r)) == CT_OK);
	} while (next_index(rank, idx, lo, hi));
}

/* How a table row makes its top-level tensor. */
enum { MK_ROW, MK_COL, MK_ORDER, MK_STRIDED, MK_EVERY_OTHER };

typedef struct top_spec {
	int rank;
	int64_t ext[8];
	int make;
	int order[8];      /* MK_ORDER */
	int64_t stride[8]; /* MK_STRIDED */
	int64_t origin;    /* MK_STRIDED */
	int64_t buf;       /* MK_STRIDED: buffer elements */
} top_spec;

/* Elements the buffer of s needs. */
static int64_t top_buffer_elements(const top_spec *s)
{
	if (s->make == MK_STRIDED)
		return s->buf;
	int64_t n = 1;
	for (int d = 0; d < s->rank; d++)
		n *= s->ext[d];
	return s->make == MK_EVERY_OTHER ? 2 * n : n;
}

/* Make the top-level tensor of s over data (MK_EVERY_OTHER: every other
 * element of the last dimension of a row-major buffer twice as wide). */
static ct_tensor *top_make(ct_ctx *ctx, void *data, ct_dtype type, const top_spec *s)
{
	switch (s->make) {
	case MK_ROW: return ct_tensor_new(ctx, data, type, s->rank, s->ext, CT_TENSOR_ROW_MAJOR);
	case MK_COL: return ct_tensor_new(ctx, data, type, s->rank, s->ext, CT_TENSOR_COL_MAJOR);
	case MK_ORDER: return ct_tensor_new_ordered(ctx, data, type, s->rank, s->ext, s->order);
	case MK_STRIDED:
		return ct_tensor_new_strided(ctx, data, s->buf, type, s->rank, s->ext, s->stride,
					     s->origin);
	case MK_EVERY_OTHER: {
		int64_t st[8], n = 2;
		for (int d = s->rank - 1; d >= 0; d--) {
			st[d] = d == s->rank - 1 ? 2 : n;
			n *= s->ext[d];
		}
		return ct_tensor_new_strided(ctx, data, top_buffer_elements(s), type, s->rank,
					     s->ext, st, 0);
	}
	}
	return NULL;
}

static void *buffer_new(const top_spec *s, ct_dtype type)
{
	int64_t n = top_buffer_elements(s);
	return calloc((size_t)(n > 0 ? n : 1), type == CT_F32 || type == CT_I32 ? 4 : 8);
}

/* ---------------------------------------------------------------- layouts of top-level tensors */

typedef struct layout_case {
	const char *name;
	top_spec s;
	int64_t want_stride[8];
	int64_t probe[8];
	int64_t want_off; /* physical offset of probe; -1: the tensor is empty */
} layout_case;

static const layout_case layout_cases[] = {
	{"row-major 3x4", {.rank = 2, .ext = {3, 4}, .make = MK_ROW},
	 {4, 1}, {1, 2}, 6},
	{"col-major 3x4", {.rank = 2, .ext = {3, 4}, .make = MK_COL},
	 {1, 3}, {1, 2}, 7},
	{"order (1,0) is column-major",
	 {.rank = 2, .ext = {3, 4}, .make = MK_ORDER, .order = {1, 0}},
	 {1, 3}, {1, 2}, 7},
	{"order (0,1) is row-major", {.rank = 2, .ext = {3, 4}, .make = MK_ORDER, .order = {0, 1}},
	 {4, 1}, {1, 2}, 6},
	{"row-major 2x3x4", {.rank = 3, .ext = {2, 3, 4}, .make = MK_ROW},
	 {12, 4, 1}, {1, 1, 2}, 18},
	{"col-major 2x3x4", {.rank = 3, .ext = {2, 3, 4}, .make = MK_COL},
	 {1, 2, 6}, {1, 1, 2}, 15},
	{"order (2,0,1)", {.rank = 3, .ext = {2, 3, 4}, .make = MK_ORDER, .order = {2, 0, 1}},
	 {3, 1, 6}, {1, 1, 2}, 16},
	{"strided: every other column",
	 {.rank = 2, .ext = {3, 4}, .make = MK_STRIDED, .stride = {8, 2}, .origin = 0, .buf = 24},
	 {8, 2}, {2, 3}, 22},
	{"strided with an origin",
	 {.rank = 2, .ext = {3, 4}, .make = MK_STRIDED, .stride = {8, 2}, .origin = 5, .buf = 28},
	 {8, 2}, {2, 3}, 27},
	{"stride 0 repeats a row",
	 {.rank = 2, .ext = {3, 4}, .make = MK_STRIDED, .stride = {0, 1}, .origin = 0, .buf = 4},
	 {0, 1}, {2, 3}, 3},
	{"rank 1", {.rank = 1, .ext = {7}, .make = MK_ROW},
	 {1}, {6}, 6},
	{"rank 8 row-major", {.rank = 8, .ext = {2, 2, 2, 2, 2, 2, 2, 2}, .make = MK_ROW},
	 {128, 64, 32, 16, 8, 4, 2, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, 255},
	{"rank 8 col-major", {.rank = 8, .ext = {2, 2, 2, 2, 2, 2, 2, 2}, .make = MK_COL},
	 {1, 2, 4, 8, 16, 32, 64, 128}, {1, 0, 0, 0, 0, 0, 0, 1}, 129},
	{"empty 0x5", {.rank = 2, .ext = {0, 5}, .make = MK_ROW},
	 {5, 1}, {0}, -1},
};

static void run_layout_case(const layout_case *c)
{
	env e;
	env_open(&e);
	double *buf = buffer_new(&c->s, CT_F64);
	ct_tensor *t = top_make(e.ctx, buf, CT_F64, &c->s);
	CHECKF(t != NULL, "%s", ct_ctx_last_message(e.ctx));
	if (!t)
		goto out;
	int rank = c->s.rank;
	int64_t n = 1;
	CHECK(ct_tensor_rank(t) == rank);
	CHECK(ct_tensor_dtype(t) == CT_F64);
	CHECK(ct_tensor_data(t) == buf);
	CHECK(ct_tensor_get_ctx(t) == e.ctx);
	CHECK(ct_tensor_parent(t) == NULL);
	CHECK(ct_tensor_root(t) == t);
	CHECK(!ct_tensor_is_cached(t));
	CHECK(ct_tensor_child_count(t) == 0);
	CHECK(ct_tensor_origin(t) == (c->s.make == MK_STRIDED ? c->s.origin : 0));
	for (int d = 0; d < rank; d++) {
		int64_t lo, hi, klo, khi;
		n *= c->s.ext[d];
		CHECK(ct_tensor_extent(t, d) == c->s.ext[d]);
		CHECKF(ct_tensor_stride(t, d) == c->want_stride[d], "dim %d stride %lld", d,
		       (long long)ct_tensor_stride(t, d));
		CHECK(ct_tensor_parent_offset(t, d) == 0);
		CHECK(ct_tensor_window(t, d, &lo, &hi) == CT_OK && lo == 0 && hi == c->s.ext[d]);
		CHECK(ct_tensor_halo(t, d, &klo, &khi) == CT_OK && klo == 0 && khi == 0);
	}
	CHECK(ct_tensor_elements(t) == n);
	if (c->want_off >= 0) {
		int64_t off = -1;
		double v = 0;
		CHECK(ct_tensor_offset(t, c->probe, &off) == CT_OK);
		CHECKF(off == c->want_off, "offset %lld", (long long)off);
		CHECK(ct_tensor_set(t, c->probe, 42.5) == CT_OK);
		CHECK(buf[c->want_off] == 42.5);
		CHECK(ct_tensor_get(t, c->probe, &v) == CT_OK && v == 42.5);
		/* every index agrees with origin + sum idx*stride */
		int64_t lo[8] = {0}, idx[8] = {0};
		do {
			int64_t want = ct_tensor_origin(t);
			for (int d = 0; d < rank; d++)
				want += idx[d] * c->want_stride[d];
			CHECK(ct_tensor_offset(t, idx, &off) == CT_OK && off == want);
		} while (next_index(rank, idx, lo, c->s.ext));
	} else {
		int64_t zero[8] = {0}, off;
		CHECK(ct_tensor_offset(t, zero, &off) == CT_ERR_USAGE);
	}
	CHECK(ct_tensor_free(t) == CT_OK);
out:
	free(buf);
	env_close(&e);
}

/* ---------------------------------------------------------------- chains of sub-views */

typedef struct sub_case {
	const char *name;
	top_spec s;
	int levels; /* sub-views below the top-level tensor (1..3) */
	int64_t off[3][8], ext[3][8];
	int64_t probe[8]; /* index in the deepest view: may leave its extents, not its window */
} sub_case;

static const sub_case sub_cases[] = {
	{"one level, row-major", {.rank = 2, .ext = {6, 7}, .make = MK_ROW},
	 1, {{1, 2}}, {{3, 4}}, {2, 3}},
	{"sub-view of a sub-view", {.rank = 2, .ext = {6, 7}, .make = MK_ROW},
	 2, {{1, 2}, {1, 1}}, {{4, 5}, {2, 3}}, {1, 2}},
	{"three levels, row-major", {.rank = 2, .ext = {9, 9}, .make = MK_ROW},
	 3, {{1, 2}, {2, 1}, {1, 1}}, {{7, 6}, {4, 4}, {2, 2}}, {1, 0}},
	{"three levels, col-major", {.rank = 2, .ext = {9, 8}, .make = MK_COL},
	 3, {{2, 1}, {1, 2}, {0, 1}}, {{6, 6}, {4, 3}, {3, 2}}, {2, 1}},
	{"order (2,0,1), two levels",
	 {.rank = 3, .ext = {4, 5, 6}, .make = MK_ORDER, .order = {2, 0, 1}},
	 2, {{1, 1, 2}, {1, 2, 1}}, {{3, 4, 4}, {2, 2, 3}}, {1, 1, 2}},
	{"every other column, two levels", {.rank = 2, .ext = {5, 6}, .make = MK_EVERY_OTHER},
	 2, {{1, 1}, {1, 2}}, {{4, 5}, {2, 3}}, {1, 2}},
	{"strided with origin, one level",
	 {.rank = 2, .ext = {3, 4}, .make = MK_STRIDED, .stride = {8, 2}, .origin = 5, .buf = 28},
	 1, {{1, 1}}, {{2, 2}}, {1, 1}},
	{"whole parent", {.rank = 2, .ext = {4, 4}, .make = MK_ROW},
	 2, {{0, 0}, {0, 0}}, {{4, 4}, {4, 4}}, {3, 3}},
	{"rank 1, three levels", {.rank = 1, .ext = {20}, .make = MK_ROW},
	 3, {{3}, {4}, {2}}, {{15}, {9}, {5}}, {4}},
	{"probe a neighbour outside the block", {.rank = 2, .ext = {6, 7}, .make = MK_ROW},
	 1, {{2, 2}}, {{2, 2}}, {-1, -2}},
	{"empty block at the parent's end", {.rank = 2, .ext = {4, 5}, .make = MK_ROW},
	 1, {{4, 0}}, {{0, 5}}, {-1, 0}},
};

static void run_sub_case(const sub_case *c)
{
	env e;
	env_open(&e);
	int rank = c->s.rank;
	double *buf = buffer_new(&c->s, CT_F64);
	ct_tensor *v[4] = {NULL};
	v[0] = top_make(e.ctx, buf, CT_F64, &c->s);
	CHECK(v[0] != NULL);
	if (!v[0])
		goto out;
	fill_enc(v[0]);
	int64_t cum[8] = {0};
	for (int l = 1; l <= c->levels; l++) {
		v[l] = ct_tensor_sub(v[l - 1], c->off[l - 1], c->ext[l - 1]);
		CHECKF(v[l] != NULL, "level %d: %s", l, ct_ctx_last_message(e.ctx));
		if (!v[l])
			goto out;
		int64_t want_origin = ct_tensor_origin(v[0]);
		for (int d = 0; d < rank; d++) {
			int64_t lo, hi;
			cum[d] += c->off[l - 1][d];
			want_origin += cum[d] * ct_tensor_stride(v[0], d);
			CHECK(ct_tensor_extent(v[l], d) == c->ext[l - 1][d]);
			CHECK(ct_tensor_stride(v[l], d) == ct_tensor_stride(v[0], d));
			CHECK(ct_tensor_parent_offset(v[l], d) == c->off[l - 1][d]);
			/* a sub-view can address the whole top-level tensor */
			CHECK(ct_tensor_window(v[l], d, &lo, &hi) == CT_OK);
			CHECK(lo == -cum[d] && hi == c->s.ext[d] - cum[d]);
		}
		CHECK(ct_tensor_origin(v[l]) == want_origin);
		CHECK(ct_tensor_parent(v[l]) == v[l - 1]);
		CHECK(ct_tensor_root(v[l]) == v[0]);
		CHECK(ct_tensor_data(v[l]) == buf);
		CHECK(!ct_tensor_is_cached(v[l]));
		CHECK(ct_tensor_child_count(v[l - 1]) == 1);
	}
	ct_tensor *leaf = v[c->levels];
	/* cast the probe to every ancestor: add the offsets of the levels crossed */
	for (int k = c->levels; k >= 0; k--) {
		int64_t got[8], want[8];
		memcpy(want, c->probe, sizeof want);
		for (int l = k + 1; l <= c->levels; l++)
			for (int d = 0; d < rank; d++)
				want[d] += c->off[l - 1][d];
		CHECK(ct_tensor_cast(leaf, v[k], c->probe, got) == CT_OK);
		CHECKF(memcmp(got, want, (size_t)rank * sizeof *got) == 0, "cast to level %d", k);
	}
	int64_t r[8], r0[8], off_leaf, off_root;
	double val;
	CHECK(ct_tensor_cast(leaf, NULL, c->probe, r) == CT_OK);
	CHECK(ct_tensor_cast(leaf, v[0], c->probe, r0) == CT_OK);
	CHECK(memcmp(r, r0, (size_t)rank * sizeof *r) == 0);
	CHECK(ct_tensor_get(leaf, c->probe, &val) == CT_OK && val == enc(rank, r));
	CHECK(ct_tensor_offset(leaf, c->probe, &off_leaf) == CT_OK);
	CHECK(ct_tensor_offset(v[0], r, &off_root) == CT_OK && off_leaf == off_root);
	CHECK(ct_tensor_set(leaf, c->probe, -5) == CT_OK);
	CHECK(ct_tensor_get(v[0], r, &val) == CT_OK && val == -5);
	CHECK(ct_tensor_set(leaf, c->probe, enc(rank, r)) == CT_OK);
	/* every element of the leaf reads its top-level element */
	int64_t lo[8] = {0}, idx[8] = {0};
	if (!box_empty(rank, lo, c->ext[c->levels - 1])) {
		do {
			CHECK(ct_tensor_cast(leaf, NULL, idx, r) == CT_OK);
			CHECK(ct_tensor_get(leaf, idx, &val) == CT_OK && val == enc(rank, r));
		} while (next_index(rank, idx, lo, c->ext[c->levels - 1]));
	}
out:
	for (int l = 3; l >= 0; l--) {
		if (!v[l])
			continue;
		CHECK(ct_tensor_free(v[l]) == CT_OK);
		if (l > 0)
			CHECK(ct_tensor_child_count(v[l - 1]) == 0);
	}
	free(buf);
	env_close(&e);
}

/* ---------------------------------------------------------------- cached copies with halos */

/* What the cached copy of a row is taken from. */
enum { P_ROOT, P_BLOCK, P_CACHE };

typedef struct halo_case {
	const char *name;
	top_spec s;                       /* the top-level tensor (f64) */
	int parent;                       /* P_ROOT, or a sub-view / cached copy of the root: */
	int64_t boff[8], bext[8], bhalo[8]; /* its block, and for P_CACHE its halo */
	int64_t off[8], ext[8];           /* the cached block, in the parent */
	int64_t hlo[8], hhi[8];           /* halo asked for */
	bool null_halo;                   /* pass NULL halo arrays (no halo) */
	ct_tensor_layout layout;          /* of the cache buffer */
	int64_t klo[8], khi[8];           /* halo expected to be kept */
} halo_case;

#define S8x10 {.rank = 2, .ext = {8, 10}, .make = MK_ROW}
#define H1 {1, 1}

static const halo_case halo_cases[] = {
	{"corner: top-left", S8x10,
	 P_ROOT, {0}, {0}, {0}, {0, 0}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {0, 0}, {1, 1}},
	{"corner: top-right", S8x10,
	 P_ROOT, {0}, {0}, {0}, {0, 7}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {0, 1}, {1, 0}},
	{"corner: bottom-left", S8x10,
	 P_ROOT, {0}, {0}, {0}, {5, 0}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 0}, {0, 1}},
	{"corner: bottom-right", S8x10,
	 P_ROOT, {0}, {0}, {0}, {5, 7}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1}, {0, 0}},
	{"edge: top", S8x10,
	 P_ROOT, {0}, {0}, {0}, {0, 4}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {0, 1}, {1, 1}},
	{"edge: bottom", S8x10,
	 P_ROOT, {0}, {0}, {0}, {5, 4}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1}, {0, 1}},
	{"edge: left", S8x10,
	 P_ROOT, {0}, {0}, {0}, {3, 0}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 0}, {1, 1}},
	{"edge: right", S8x10,
	 P_ROOT, {0}, {0}, {0}, {3, 7}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1}, {1, 0}},
	{"interior", S8x10,
	 P_ROOT, {0}, {0}, {0}, {3, 4}, {3, 3}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1}, {1, 1}},
	{"whole tensor, halo 2 all clipped", S8x10,
	 P_ROOT, {0}, {0}, {0}, {0, 0}, {8, 10}, {2, 2}, {2, 2}, false, CT_TENSOR_ROW_MAJOR, {0, 0},
	 {0, 0}},
	{"halo 3 partly clipped", S8x10,
	 P_ROOT, {0}, {0}, {0}, {1, 2}, {3, 3}, {3, 3}, {3, 3}, false, CT_TENSOR_ROW_MAJOR, {1, 2},
	 {3, 3}},
	{"asymmetric halo", S8x10,
	 P_ROOT, {0}, {0}, {0}, {1, 6}, {2, 2}, {2, 0}, {0, 3}, false, CT_TENSOR_ROW_MAJOR, {1, 0},
	 {0, 2}},
	{"no halo (NULL)", S8x10,
	 P_ROOT, {0}, {0}, {0}, {2, 2}, {4, 5}, {0}, {0}, true, CT_TENSOR_ROW_MAJOR, {0, 0},
	 {0, 0}},
	{"empty block, halo only", S8x10,
	 P_ROOT, {0}, {0}, {0}, {4, 5}, {0, 2}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1}, {1, 1}},
	{"SPMD tile at the corner: clipped at the top level", S8x10,
	 P_BLOCK, {4, 5}, {4, 5}, {0}, {0, 0}, {4, 5}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1},
	 {0, 0}},
	{"SPMD tile: halo from the neighbouring tiles", S8x10,
	 P_BLOCK, {0, 0}, {4, 5}, {0}, {0, 0}, {4, 5}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {0, 0},
	 {1, 1}},
	{"SPMD 34x34: 32x32 tile, halo 1", {.rank = 2, .ext = {96, 96}, .make = MK_ROW},
	 P_BLOCK, {32, 32}, {32, 32}, {0}, {0, 0}, {32, 32}, H1, H1, false, CT_TENSOR_ROW_MAJOR,
	 {1, 1}, {1, 1}},
	{"col-major parent, row-major cache", {.rank = 2, .ext = {8, 10}, .make = MK_COL},
	 P_ROOT, {0}, {0}, {0}, {0, 4}, {3, 3}, H1, {2, 2}, false, CT_TENSOR_ROW_MAJOR, {0, 1},
	 {2, 2}},
	{"row-major parent, col-major cache", S8x10,
	 P_ROOT, {0}, {0}, {0}, {5, 7}, {3, 3}, H1, H1, false, CT_TENSOR_COL_MAJOR, {1, 1}, {0, 0}},
	{"order (1,0) parent, col-major cache",
	 {.rank = 2, .ext = {8, 10}, .make = MK_ORDER, .order = {1, 0}},
	 P_ROOT, {0}, {0}, {0}, {3, 0}, {2, 4}, H1, H1, false, CT_TENSOR_COL_MAJOR, {1, 0}, {1, 1}},
	{"every-other-column parent", {.rank = 2, .ext = {8, 10}, .make = MK_EVERY_OTHER},
	 P_ROOT, {0}, {0}, {0}, {2, 8}, {3, 2}, H1, H1, false, CT_TENSOR_ROW_MAJOR, {1, 1}, {1, 0}},
	{"cache of a cache: clipped at the parent's kept halo", S8x10,
	 P_CACHE, {2, 3}, {4, 4}, {1, 1}, {0, 0}, {2, 2}, {2, 2}, {2, 2}, false,
	 CT_TENSOR_ROW_MAJOR, {1, 1}, {2, 2}},
	{"cache of a corner cache", S8x10,
	 P_CACHE, {0, 0}, {4, 4}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, false,
	 CT_TENSOR_ROW_MAJOR, {2, 2}, {1, 1}},
	{"3-D corner", {.rank = 3, .ext = {4, 5, 6}, .make = MK_ROW},
	 P_ROOT, {0}, {0}, {0}, {0, 3, 4}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false,
	 CT_TENSOR_ROW_MAJOR, {0, 1, 1}, {1, 0, 0}},
	{"3-D interior, col-major cache", {.rank = 3, .ext = {4, 5, 6}, .make = MK_ROW},
	 P_ROOT, {0}, {0}, {0}, {1, 1, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 2}, false,
	 CT_TENSOR_COL_MAJOR, {1, 1, 1}, {1, 1, 2}},
	{"1-D both ends", {.rank = 1, .ext = {6}, .make = MK_ROW},
	 P_ROOT, {0}, {0}, {0}, {0}, {6}, {2}, {2}, false, CT_TENSOR_ROW_MAJOR, {0}, {0}},
};

/* Check that c (copied in) holds its parent's data where the halo was kept
 * and zero where it was clipped. */
static void check_cache_contents(const halo_case *hc, const ct_tensor *c, const ct_tensor *parent)
{
	int rank = hc->s.rank;
	int64_t lo[8], hi[8], idx[8], klo[8], khi[8];
	window_of(c, lo, hi);
	for (int d = 0; d < rank; d++) {
		klo[d] = -hc->klo[d];
		khi[d] = hc->ext[d] + hc->khi[d];
	}
	if (box_empty(rank, lo, hi))
		return;
	memcpy(idx, lo, sizeof idx);
	do {
		int64_t r[8], p[8];
		double v = -1, pv = -2;
		CHECK(ct_tensor_get(c, idx, &v) == CT_OK);
		CHECK(ct_tensor_cast(c, NULL, idx, r) == CT_OK);
		CHECK(ct_tensor_cast(c, parent, idx, p) == CT_OK);
		bool in_root = in_box(rank, r, (const int64_t[8]){0}, hc->s.ext);
		if (in_box(rank, idx, klo, khi)) {
			CHECK(ct_tensor_get(parent, p, &pv) == CT_OK);
			CHECKF(in_root && v == enc(rank, r) && v == pv,
			       "kept (%lld,%lld) reads %g", (long long)idx[0],
			       (long long)(rank > 1 ? idx[1] : 0), v);
		} else {
			CHECKF(v == 0, "clipped (%lld,%lld) reads %g", (long long)idx[0],
			       (long long)(rank > 1 ? idx[1] : 0), v);
			/* a boundary test on logical indices sees it leave the
			 * domain, unless a cached ancestor clipped it first */
			if (hc->parent != P_CACHE)
				CHECK(!in_root);
		}
	} while (next_index(rank, idx, lo, hi));
}

/* Write distinct values over c's window, copy out, and check that the parent
 * changed exactly in the block. */
static void check_copy_out(const halo_case *hc, ct_tensor *c, ct_tensor *parent)
{
	int rank = hc->s.rank;
	int64_t plo[8], phi[8], lo[8], hi[8], idx[8], blo[8], bhi[8];
	window_of(parent, plo, phi);
	window_of(c, lo, hi);
	for (int d = 0; d < rank; d++) {
		blo[d] = hc->off[d];
		bhi[d] = hc->off[d] + hc->ext[d];
	}
	int64_t n = box_count(rank, plo, phi), k = 0;
	double *snap = calloc((size_t)(n ? n : 1), sizeof *snap);
	if (!box_empty(rank, plo, phi)) {
		memcpy(idx, plo, sizeof idx);
		do
			CHECK(ct_tensor_get(parent, idx, &snap[k++]) == CT_OK);
		while (next_index(rank, idx, plo, phi));
	}
	if (!box_empty(rank, lo, hi)) {
		memcpy(idx, lo, sizeof idx);
		do
			CHECK(ct_tensor_set(c, idx, -1e6 - enc(rank, idx)) == CT_OK);
		while (next_index(rank, idx, lo, hi));
	}
	CHECK(ct_tensor_copy_out(c) == CT_OK);
	k = 0;
	if (!box_empty(rank, plo, phi)) {
		memcpy(idx, plo, sizeof idx);
		do {
			double v = 0, want = snap[k++];
			if (in_box(rank, idx, blo, bhi)) {
				int64_t j[8];
				for (int d = 0; d < rank; d++)
					j[d] = idx[d] - hc->off[d];
				want = -1e6 - enc(rank, j);
			}
			CHECK(ct_tensor_get(parent, idx, &v) == CT_OK);
			CHECKF(v == want, "parent (%lld,%lld) is %g, want %g", (long long)idx[0],
			       (long long)(rank > 1 ? idx[1] : 0), v, want);
		} while (next_index(rank, idx, plo, phi));
	}
	/* copying in again reads the written interior back */
	CHECK(ct_tensor_copy_in(c) == CT_OK);
	if (!box_empty(rank, blo, bhi)) {
		int64_t zero[8] = {0};
		memcpy(idx, zero, sizeof idx);
		do {
			double v = 0;
			CHECK(ct_tensor_get(c, idx, &v) == CT_OK && v == -1e6 - enc(rank, idx));
		} while (next_index(rank, idx, zero, hc->ext));
	}
	free(snap);
}

static void run_halo_case(const halo_case *hc)
{
	env e;
	env_open(&e);
	int rank = hc->s.rank;
	double *buf = buffer_new(&hc->s, CT_F64);
	ct_tensor *root = top_make(e.ctx, buf, CT_F64, &hc->s), *mid = NULL, *c = NULL;
	CHECK(root != NULL);
	if (!root)
		goto out;
	fill_enc(root);
	ct_tensor *parent = root;
	if (hc->parent == P_BLOCK)
		parent = mid = ct_tensor_sub(root, hc->boff, hc->bext);
	else if (hc->parent == P_CACHE)
		parent = mid = ct_tensor_cache(root, hc->boff, hc->bext, hc->bhalo, hc->bhalo,
					       CT_TENSOR_ROW_MAJOR);
	CHECK(parent != NULL);
	if (!parent)
		goto out;
	if (hc->parent == P_CACHE)
		CHECK(ct_tensor_copy_in(mid) == CT_OK);
	c = ct_tensor_cache(parent, hc->off, hc->ext, hc->null_halo ? NULL : hc->hlo,
			    hc->null_halo ? NULL : hc->hhi, hc->layout);
	CHECKF(c != NULL, "%s", ct_ctx_last_message(e.ctx));
	if (!c)
		goto out;
	CHECK(ct_tensor_is_cached(c));
	CHECK(ct_tensor_parent(c) == parent);
	CHECK(ct_tensor_root(c) == root);
	CHECK(ct_tensor_child_count(parent) == 1);
	CHECK(ct_tensor_data(c) != buf && ct_tensor_data(c) != NULL);
	/* the buffer holds the whole halo asked for, laid out by hc->layout */
	int64_t want_stride[8], s = 1, want_origin = 0;
	for (int k = 0; k < rank; k++) {
		int d = hc->layout == CT_TENSOR_ROW_MAJOR ? rank - 1 - k : k;
		want_stride[d] = s;
		s *= hc->ext[d] + hc->hlo[d] + hc->hhi[d];
	}
	for (int d = 0; d < rank; d++) {
		int64_t klo, khi, clo, chi, wlo, whi;
		want_origin += hc->hlo[d] * want_stride[d];
		CHECK(ct_tensor_extent(c, d) == hc->ext[d]);
		CHECK(ct_tensor_parent_offset(c, d) == hc->off[d]);
		CHECK(ct_tensor_stride(c, d) == want_stride[d]);
		CHECK(ct_tensor_halo(c, d, &klo, &khi) == CT_OK);
		CHECKF(klo == hc->klo[d] && khi == hc->khi[d], "dim %d kept %lld/%lld", d,
		       (long long)klo, (long long)khi);
		CHECK(ct_tensor_clipped(c, d, &clo, &chi) == CT_OK);
		CHECK(clo == hc->hlo[d] - hc->klo[d] && chi == hc->hhi[d] - hc->khi[d]);
		CHECK(ct_tensor_window(c, d, &wlo, &whi) == CT_OK);
		CHECK(wlo == -hc->hlo[d] && whi == hc->ext[d] + hc->hhi[d]);
	}
	CHECK(ct_tensor_origin(c) == want_origin);
	/* stale data in the buffer must not survive a copy-in */
	int64_t lo[8], hi[8], idx[8];
	window_of(c, lo, hi);
	if (!box_empty(rank, lo, hi)) {
		memcpy(idx, lo, sizeof idx);
		do
			CHECK(ct_tensor_set(c, idx, 999) == CT_OK);
		while (next_index(rank, idx, lo, hi));
	}
	CHECK(ct_tensor_copy_in(c) == CT_OK);
	check_cache_contents(hc, c, parent);
	check_copy_out(hc, c, parent);
out:
	CHECK(ct_tensor_free(c) == CT_OK);
	CHECK(ct_tensor_free(mid) == CT_OK);
	CHECK(ct_tensor_free(root) == CT_OK);
	free(buf);
	env_close(&e);
}

/* ---------------------------------------------------------------- element types */

typedef struct dtype_case {
	const char *name;
	ct_dtype type;
	ct_tensor_layout cache_layout;
	double in, want; /* set(in) reads back want */
} dtype_case;

static const dtype_case dtype_cases[] = {
	{"f32, row-major cache", CT_F32, CT_TENSOR_ROW_MAJOR, 0.5, 0.5},
	{"f32, col-major cache", CT_F32, CT_TENSOR_COL_MAJOR, -1e30, (double)-1e30f},
	{"f64, row-major cache", CT_F64, CT_TENSOR_ROW_MAJOR, 1.0 / 3, 1.0 / 3},
	{"f64, col-major cache", CT_F64, CT_TENSOR_COL_MAJOR, -1e300, -1e300},
	{"i32, row-major cache", CT_I32, CT_TENSOR_ROW_MAJOR, -3.9, -3},
	{"i32, col-major cache", CT_I32, CT_TENSOR_COL_MAJOR, 2147483647.0, 2147483647.0},
	{"i64, row-major cache", CT_I64, CT_TENSOR_ROW_MAJOR, 1099511627776.7, 1099511627776.0},
	{"i64, col-major cache", CT_I64, CT_TENSOR_COL_MAJOR, -9.2e18, -9.2e18},
};

/* The raw element at offset off of a typed buffer, as a double. */
static double raw_at(const void *data, ct_dtype t, int64_t off)
{
	switch (t) {
	case CT_F32: return ((const float *)data)[off];
	case CT_F64: return ((const double *)data)[off];
	case CT_I32: return ((const int32_t *)data)[off];
	case CT_I64: return (double)((const int64_t *)data)[off];
	}
	return NAN;
}

static void run_dtype_case(const dtype_case *dc)
{
	env e;
	env_open(&e);
	const top_spec s = {.rank = 2, .ext = {5, 6}, .make = MK_ROW};
	void *buf = buffer_new(&s, dc->type);
	ct_tensor *root = ct_tensor_new(e.ctx, buf, dc->type, 2, s.ext, CT_TENSOR_ROW_MAJOR);
	CHECK(root != NULL && ct_tensor_dtype(root) == dc->type);
	if (!root)
		goto out;
	fill_enc(root);
	int64_t p[2] = {2, 3}, off;
	double v;
	CHECK(ct_tensor_offset(root, p, &off) == CT_OK && raw_at(buf, dc->type, off) == enc(2, p));
	/* a corner block: two halo sides kept, two clipped */
	const int64_t boff[2] = {3, 4}, bext[2] = {2, 2}, h[2] = {1, 2};
	ct_tensor *c = ct_tensor_cache(root, boff, bext, h, h, dc->cache_layout);
	CHECK(c != NULL && ct_tensor_dtype(c) == dc->type);
	if (!c)
		goto out;
	CHECK(ct_tensor_copy_in(c) == CT_OK);
	int64_t lo[2] = {-1, -2}, hi[2] = {3, 4}, idx[2] = {-1, -2};
	do {
		int64_t r[2];
		CHECK(ct_tensor_cast(c, NULL, idx, r) == CT_OK);
		CHECK(ct_tensor_get(c, idx, &v) == CT_OK);
		bool kept = idx[0] < 2 && idx[1] < 2;
		CHECKF(v == (kept ? enc(2, r) : 0), "(%lld,%lld) reads %g", (long long)idx[0],
		       (long long)idx[1], v);
	} while (next_index(2, idx, lo, hi));
	/* set/get conversion, then out to the parent */
	int64_t z[2] = {1, 0}, rz[2] = {4, 4}, halo[2] = {-1, -1}, rh[2] = {2, 3};
	CHECK(ct_tensor_set(c, z, dc->in) == CT_OK);
	CHECK(ct_tensor_get(c, z, &v) == CT_OK);
	CHECKF(v == dc->want, "got %.17g", v);
	CHECK(ct_tensor_set(c, halo, 77) == CT_OK);
	CHECK(ct_tensor_copy_out(c) == CT_OK);
	CHECK(ct_tensor_get(root, rz, &v) == CT_OK && v == dc->want);
	CHECK(ct_tensor_get(root, rh, &v) == CT_OK && v == enc(2, rh));
	CHECK(ct_tensor_offset(root, rz, &off) == CT_OK && raw_at(buf, dc->type, off) == dc->want);
	CHECK(ct_tensor_free(c) == CT_OK);
out:
	CHECK(ct_tensor_free(root) == CT_OK);
	free(buf);
	env_close(&e);
}

/* ---------------------------------------------------------------- errors */

typedef struct err_case {
	const char *name;
	ct_status (*fn)(env *e);
	ct_status want;
	bool recorded; /* the error is on the ctx too (false where no ctx is reachable) */
} err_case;

static const int64_t e34[2] = {3, 4};

/* The status of a constructor call: CT_OK if it made a tensor (freed here),
 * else the ctx's last status. */
static ct_status made(env *e, ct_tensor *t)
{
	if (t)
		return ct_tensor_free(t) == CT_OK ? CT_OK : CT_ERR_RUNTIME;
	return ct_ctx_last_status(e->ctx);
}

static ct_tensor *root34(env *e)
{
	return ct_tensor_new(e->ctx, e->buf, CT_F64, 2, e34, CT_TENSOR_ROW_MAJOR);
}

static ct_status e_rank0(env *e)
{
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 0, e34, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_rank_neg(env *e)
{
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, -1, e34, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_rank9(env *e)
{
	const int64_t ext[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 9, ext, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_rank9_ordered(env *e)
{
	const int64_t ext[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	const int order[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	return made(e, ct_tensor_new_ordered(e->ctx, e->buf, CT_F64, 9, ext, order));
}

static ct_status e_rank0_strided(env *e)
{
	const int64_t st[1] = {1};
	return made(e, ct_tensor_new_strided(e->ctx, e->buf, 256, CT_F64, 0, e34, st, 0));
}

static ct_status e_neg_extent(env *e)
{
	const int64_t ext[2] = {3, -1};
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 2, ext, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_null_data(env *e)
{
	return made(e, ct_tensor_new(e->ctx, NULL, CT_F64, 2, e34, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_null_extents(env *e)
{
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 2, NULL, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_bad_dtype(env *e)
{
	return made(e, ct_tensor_new(e->ctx, e->buf, (ct_dtype)7, 2, e34, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_bad_layout(env *e)
{
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 2, e34, (ct_tensor_layout)5));
}

static ct_status e_order_dup(env *e)
{
	const int order[2] = {0, 0};
	return made(e, ct_tensor_new_ordered(e->ctx, e->buf, CT_F64, 2, e34, order));
}

static ct_status e_order_range(env *e)
{
	const int order[2] = {0, 2};
	return made(e, ct_tensor_new_ordered(e->ctx, e->buf, CT_F64, 2, e34, order));
}

static ct_status e_order_null(env *e)
{
	return made(e, ct_tensor_new_ordered(e->ctx, e->buf, CT_F64, 2, e34, NULL));
}

static ct_status e_neg_stride(env *e)
{
	const int64_t st[2] = {4, -1};
	return made(e, ct_tensor_new_strided(e->ctx, e->buf, 256, CT_F64, 2, e34, st, 3));
}

static ct_status e_strided_beyond(env *e)
{
	/* every other column of 3 rows of 8 needs 2*8+3*2+1 = 23 elements */
	const int64_t st[2] = {8, 2};
	return made(e, ct_tensor_new_strided(e->ctx, e->buf, 22, CT_F64, 2, e34, st, 0));
}

static ct_status e_strided_fits(env *e)
{
	const int64_t st[2] = {8, 2};
	return made(e, ct_tensor_new_strided(e->ctx, e->buf, 23, CT_F64, 2, e34, st, 0));
}

static ct_status e_neg_origin(env *e)
{
	const int64_t st[2] = {4, 1};
	return made(e, ct_tensor_new_strided(e->ctx, e->buf, 256, CT_F64, 2, e34, st, -1));
}

static ct_status e_count_overflow(env *e)
{
	const int64_t ext[2] = {INT64_MAX / 2, 4};
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 2, ext, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_bytes_overflow(env *e)
{
	/* 2^62 elements fit int64, their bytes do not */
	const int64_t ext[1] = {(int64_t)1 << 62};
	return made(e, ct_tensor_new(e->ctx, e->buf, CT_F64, 1, ext, CT_TENSOR_ROW_MAJOR));
}

static ct_status e_stride_overflow(env *e)
{
	const int64_t ext[1] = {4}, st[1] = {INT64_MAX / 2};
	return made(e, ct_tensor_new_strided(e->ctx, e->buf, INT64_MAX, CT_F64, 1, ext, st, 0));
}

/* Run a failing sub-view request on a 3x4 root; the root keeps no child. */
static ct_status sub_of_root(env *e, const int64_t *off, const int64_t *ext)
{
	ct_tensor *r = root34(e);
	if (!r)
		return CT_ERR_RUNTIME;
	ct_status st = made(e, ct_tensor_sub(r, off, ext));
	CHECK(ct_tensor_child_count(r) == 0);
	CHECK(ct_tensor_free(r) == CT_OK);
	return st;
}

static ct_status e_sub_out_of_range(env *e)
{
	return sub_of_root(e, (const int64_t[]){1, 2}, (const int64_t[]){2, 3});
}

static ct_status e_sub_neg_offset(env *e)
{
	return sub_of_root(e, (const int64_t[]){-1, 0}, (const int64_t[]){2, 2});
}

static ct_status e_sub_neg_extent(env *e)
{
	return sub_of_root(e, (const int64_t[]){0, 0}, (const int64_t[]){2, -2});
}

static ct_status e_sub_past_end(env *e)
{
	return sub_of_root(e, (const int64_t[]){4, 0}, (const int64_t[]){0, 1});
}

static ct_status e_sub_huge_extent(env *e)
{
	return sub_of_root(e, (const int64_t[]){1, 1}, (const int64_t[]){INT64_MAX, 1});
}

static ct_status e_sub_null_offsets(env *e)
{
	return sub_of_root(e, NULL, e34);
}

static ct_status e_sub_origin_overflow(env *e)
{
	/* one element at offset 1 with a huge stride: an empty sub-view one
	 * past it would start beyond INT64_MAX */
	const int64_t ext[1] = {1}, st[1] = {INT64_MAX}, off[1] = {1}, z[1] = {0};
	ct_tensor *r = ct_tensor_new_strided(e->ctx, e->buf, 2, CT_F64, 1, ext, st, 1);
	if (!r)
		return CT_ERR_RUNTIME;
	ct_status st2 = made(e, ct_tensor_sub(r, off, z));
	CHECK(ct_tensor_free(r) == CT_OK);
	return st2;
}

/* Run a failing cache request on a 3x4 root. */
static ct_status cache_of_root(env *e, const int64_t *off, const int64_t *ext, const int64_t *lo,
			       const int64_t *hi, ct_tensor_layout layout)
{
	ct_tensor *r = root34(e);
	if (!r)
		return CT_ERR_RUNTIME;
	ct_status st = made(e, ct_tensor_cache(r, off, ext, lo, hi, layout));
	CHECK(ct_tensor_child_count(r) == 0);
	CHECK(ct_tensor_free(r) == CT_OK);
	return st;
}

static ct_status e_cache_out_of_range(env *e)
{
	return cache_of_root(e, (const int64_t[]){2, 0}, (const int64_t[]){2, 2}, NULL, NULL,
			     CT_TENSOR_ROW_MAJOR);
}

static ct_status e_cache_neg_halo(env *e)
{
	return cache_of_root(e, (const int64_t[]){1, 1}, (const int64_t[]){1, 1},
			     (const int64_t[]){1, -1}, NULL, CT_TENSOR_ROW_MAJOR);
}

static ct_status e_cache_halo_overflow(env *e)
{
	return cache_of_root(e, (const int64_t[]){1, 1}, (const int64_t[]){1, 1},
			     (const int64_t[]){1, 1}, (const int64_t[]){INT64_MAX, 1},
			     CT_TENSOR_ROW_MAJOR);
}

static ct_status e_cache_too_big(env *e)
{
	/* 2^40 elements: fits int64, but is no cache */
	return cache_of_root(e, (const int64_t[]){1, 1}, (const int64_t[]){1, 1},
			     (const int64_t[]){1 << 20, 1 << 20}, (const int64_t[]){0, 0},
			     CT_TENSOR_ROW_MAJOR);
}

static ct_status e_cache_size_overflow(env *e)
{
	return cache_of_root(e, (const int64_t[]){1, 1}, (const int64_t[]){1, 1},
			     (const int64_t[]){INT64_MAX / 4, INT64_MAX / 4},
			     (const int64_t[]){0, 0}, CT_TENSOR_ROW_MAJOR);
}

static ct_status e_cache_bad_layout(env *e)
{
	return cache_of_root(e, (const int64_t[]){1, 1}, (const int64_t[]){1, 1}, NULL, NULL,
			     (ct_tensor_layout)-1);
}

static ct_status e_free_parent_with_child(env *e)
{
	const int64_t off[2] = {1, 1}, ext[2] = {2, 2}, idx[2] = {2, 3};
	ct_tensor *r = root34(e);
	ct_tensor *s = ct_tensor_sub(r, off, ext);
	if (!r || !s)
		return CT_ERR_RUNTIME;
	ct_status st = ct_tensor_free(r);
	/* refused: the parent is intact and usable */
	CHECK(ct_tensor_child_count(r) == 1);
	CHECK(ct_tensor_set(r, idx, 1.5) == CT_OK);
	CHECK(ct_tensor_free(s) == CT_OK);
	CHECK(ct_tensor_child_count(r) == 0);
	CHECK(ct_tensor_free(r) == CT_OK);
	return st;
}

static ct_status e_free_grandparent_of_cache(env *e)
{
	const int64_t off[2] = {1, 1}, ext[2] = {2, 2}, one[2] = {0, 0}, ext1[2] = {1, 1};
	ct_tensor *r = root34(e), *s = ct_tensor_sub(r, off, ext);
	ct_tensor *c = ct_tensor_cache(s, one, ext1, ext1, ext1, CT_TENSOR_ROW_MAJOR);
	if (!r || !s || !c)
		return CT_ERR_RUNTIME;
	ct_status st1 = ct_tensor_free(r), st2 = ct_tensor_free(s);
	CHECK(st1 == CT_ERR_USAGE && st2 == CT_ERR_USAGE);
	CHECK(ct_tensor_free(c) == CT_OK);
	CHECK(ct_tensor_free(r) == CT_ERR_USAGE);
	CHECK(ct_tensor_free(s) == CT_OK);
	CHECK(ct_tensor_free(r) == CT_OK);
	return st1;
}

static ct_status e_copy_in_not_cached(env *e)
{
	ct_tensor *r = root34(e);
	ct_tensor *s = ct_tensor_sub(r, (const int64_t[]){0, 0}, e34);
	ct_status st = ct_tensor_copy_in(s);
	CHECK(ct_tensor_copy_out(r) == CT_ERR_USAGE);
	ct_tensor_free(s);
	ct_tensor_free(r);
	return st;
}

static ct_status e_cast_not_ancestor(env *e)
{
	const int64_t o1[2] = {0, 0}, o2[2] = {1, 1}, ext[2] = {2, 2}, idx[2] = {1, 1};
	int64_t out[2] = {-7, -7};
	ct_tensor *r = root34(e), *a = ct_tensor_sub(r, o1, ext), *b = ct_tensor_sub(r, o2, ext);
	ct_tensor *r2 = root34(e);
	ct_status st = ct_tensor_cast(a, b, idx, out);
	CHECK(ct_tensor_cast(a, r2, idx, out) == CT_ERR_USAGE);
	CHECK(ct_tensor_cast(r, a, idx, out) == CT_ERR_USAGE); /* a child is no ancestor */
	CHECK(out[0] == -7 && out[1] == -7);                   /* untouched on error */
	ct_tensor_free(a);
	ct_tensor_free(b);
	ct_tensor_free(r);
	ct_tensor_free(r2);
	return st;
}

static ct_status e_cast_outside_window(env *e)
{
	/* a cache's window ends at its halo, wherever its parent reaches */
	const int64_t off[2] = {1, 1}, ext[2] = {1, 1}, h[2] = {1, 1}, idx[2] = {-2, 0};
	int64_t out[2];
	ct_tensor *r = root34(e), *c = ct_tensor_cache(r, off, ext, h, h, CT_TENSOR_ROW_MAJOR);
	ct_status st = ct_tensor_cast(c, NULL, idx, out);
	ct_tensor_free(c);
	ct_tensor_free(r);
	return st;
}

static ct_status e_offset_outside(env *e)
{
	const int64_t idx[2] = {3, 0}, neg[2] = {0, -1};
	int64_t off;
	double v;
	ct_tensor *r = root34(e);
	ct_status st = ct_tensor_offset(r, idx, &off);
	CHECK(ct_tensor_get(r, neg, &v) == CT_ERR_USAGE);
	CHECK(ct_tensor_set(r, idx, 1) == CT_ERR_USAGE);
	CHECK(ct_tensor_offset(r, NULL, &off) == CT_ERR_USAGE);
	CHECK(ct_tensor_get(r, neg, NULL) == CT_ERR_USAGE);
	ct_tensor_free(r);
	return st;
}

static ct_status e_dim_out_of_range(env *e)
{
	int64_t lo, hi;
	ct_tensor *r = root34(e);
	CHECK(ct_tensor_extent(r, 2) == -1);
	CHECK(ct_tensor_stride(r, -1) == -1);
	CHECK(ct_tensor_parent_offset(r, 5) == -1);
	CHECK(ct_tensor_halo(r, -1, &lo, &hi) == CT_ERR_USAGE);
	CHECK(ct_tensor_clipped(r, 2, &lo, &hi) == CT_ERR_USAGE);
	CHECK(ct_tensor_window(r, 0, NULL, &hi) == CT_ERR_USAGE);
	ct_status st = ct_tensor_window(r, 2, &lo, &hi);
	ct_tensor_free(r);
	return st;
}

/* Set value into a one-element tensor of type t. */
static ct_status set_one(env *e, ct_dtype t, double value)
{
	const int64_t ext[1] = {1}, idx[1] = {0};
	ct_tensor *r = ct_tensor_new(e->ctx, e->buf, t, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_status st = ct_tensor_set(r, idx, value);
	ct_tensor_free(r);
	return st;
}

static ct_status e_set_i32_range(env *e) { return set_one(e, CT_I32, 3e9); }
static ct_status e_set_i32_nan(env *e) { return set_one(e, CT_I32, NAN); }
static ct_status e_set_i64_range(env *e) { return set_one(e, CT_I64, 1e19); }
static ct_status e_set_i64_inf(env *e) { return set_one(e, CT_I64, -INFINITY); }
static ct_status e_set_f32_range(env *e) { return set_one(e, CT_F32, 1e39); }
static ct_status e_set_f32_inf(env *e) { return set_one(e, CT_F32, INFINITY); }
static ct_status e_set_i32_edge(env *e) { return set_one(e, CT_I32, -2147483648.9); }

static ct_status e_null_handles(env *e)
{
	const int64_t z[2] = {0, 0};
	int64_t out[2], lo, hi;
	double v;
	CHECK(ct_tensor_sub(NULL, z, e34) == NULL);
	CHECK(ct_tensor_cache(NULL, z, e34, NULL, NULL, CT_TENSOR_ROW_MAJOR) == NULL);
	CHECK(ct_tensor_copy_in(NULL) == CT_ERR_USAGE);
	CHECK(ct_tensor_copy_out(NULL) == CT_ERR_USAGE);
	CHECK(ct_tensor_offset(NULL, z, out) == CT_ERR_USAGE);
	CHECK(ct_tensor_get(NULL, z, &v) == CT_ERR_USAGE);
	CHECK(ct_tensor_set(NULL, z, 1) == CT_ERR_USAGE);
	CHECK(ct_tensor_halo(NULL, 0, &lo, &hi) == CT_ERR_USAGE);
	CHECK(ct_tensor_window(NULL, 0, &lo, &hi) == CT_ERR_USAGE);
	CHECK(ct_tensor_rank(NULL) == 0 && ct_tensor_extent(NULL, 0) == -1);
	CHECK(ct_tensor_data(NULL) == NULL && ct_tensor_parent(NULL) == NULL);
	CHECK(ct_tensor_root(NULL) == NULL && ct_tensor_get_ctx(NULL) == NULL);
	CHECK(!ct_tensor_is_cached(NULL) && ct_tensor_child_count(NULL) == -1);
	CHECK(ct_tensor_free(NULL) == CT_OK);
	CHECK(ct_tensor_new(NULL, e->buf, CT_F64, 2, e34, CT_TENSOR_ROW_MAJOR) == NULL);
	return ct_tensor_cast(NULL, NULL, z, out);
}

/* Fail the k-th allocation (after the ctx's) of the call sequence. */
static ct_status nomem_at(env *e, int k)
{
	const int64_t off[2] = {1, 1}, ext[2] = {2, 2}, h[2] = {1, 1};
	e->tl.fail_at = e->tl.calls + k;
	ct_tensor *r = root34(e), *c = NULL;
	if (r)
		c = ct_tensor_cache(r, off, ext, h, h, CT_TENSOR_ROW_MAJOR);
	ct_status st = r && c ? CT_OK : ct_ctx_last_status(e->ctx);
	if (r)
		CHECK(ct_tensor_child_count(r) == (c ? 1 : 0));
	ct_tensor_free(c);
	ct_tensor_free(r);
	e->tl.fail_at = 0;
	return st;
}

static ct_status e_nomem_root(env *e) { return nomem_at(e, 1); }
static ct_status e_nomem_cache_view(env *e) { return nomem_at(e, 2); }
static ct_status e_nomem_cache_buffer(env *e) { return nomem_at(e, 3); }
static ct_status e_nomem_none(env *e) { return nomem_at(e, 4); }

static const err_case err_cases[] = {
	{"rank 0", e_rank0, CT_ERR_INPUT, true},
	{"rank -1", e_rank_neg, CT_ERR_INPUT, true},
	{"rank 9", e_rank9, CT_ERR_LIMIT, true},
	{"rank 9, ordered", e_rank9_ordered, CT_ERR_LIMIT, true},
	{"rank 0, strided", e_rank0_strided, CT_ERR_INPUT, true},
	{"negative extent", e_neg_extent, CT_ERR_INPUT, true},
	{"NULL data", e_null_data, CT_ERR_USAGE, true},
	{"NULL extents", e_null_extents, CT_ERR_USAGE, true},
	{"unknown element type", e_bad_dtype, CT_ERR_INPUT, true},
	{"unknown layout", e_bad_layout, CT_ERR_INPUT, true},
	{"order with a repeated dimension", e_order_dup, CT_ERR_INPUT, true},
	{"order with a dimension out of range", e_order_range, CT_ERR_INPUT, true},
	{"NULL order", e_order_null, CT_ERR_USAGE, true},
	{"negative stride", e_neg_stride, CT_ERR_INPUT, true},
	{"strided view leaves its buffer", e_strided_beyond, CT_ERR_INPUT, true},
	{"strided view just fits its buffer", e_strided_fits, CT_OK, false},
	{"negative origin", e_neg_origin, CT_ERR_INPUT, true},
	{"element count overflows", e_count_overflow, CT_ERR_LIMIT, true},
	{"byte size overflows", e_bytes_overflow, CT_ERR_LIMIT, true},
	{"stride times extent overflows", e_stride_overflow, CT_ERR_LIMIT, true},
	{"sub-view leaves its parent", e_sub_out_of_range, CT_ERR_USAGE, true},
	{"sub-view at a negative offset", e_sub_neg_offset, CT_ERR_USAGE, true},
	{"sub-view with a negative extent", e_sub_neg_extent, CT_ERR_INPUT, true},
	{"sub-view past the parent's end", e_sub_past_end, CT_ERR_USAGE, true},
	{"sub-view whose end overflows", e_sub_huge_extent, CT_ERR_USAGE, true},
	{"sub-view with NULL offsets", e_sub_null_offsets, CT_ERR_USAGE, true},
	{"sub-view origin overflows", e_sub_origin_overflow, CT_ERR_LIMIT, true},
	{"cache leaves its parent", e_cache_out_of_range, CT_ERR_USAGE, true},
	{"cache with a negative halo", e_cache_neg_halo, CT_ERR_INPUT, true},
	{"cache halo overflows", e_cache_halo_overflow, CT_ERR_LIMIT, true},
	{"cache buffer above the limit", e_cache_too_big, CT_ERR_LIMIT, true},
	{"cache buffer size overflows", e_cache_size_overflow, CT_ERR_LIMIT, true},
	{"cache with an unknown layout", e_cache_bad_layout, CT_ERR_INPUT, true},
	{"free a parent with a child", e_free_parent_with_child, CT_ERR_USAGE, true},
	{"free the ancestors of a cache", e_free_grandparent_of_cache, CT_ERR_USAGE, true},
	{"copy in/out of a view that is not cached", e_copy_in_not_cached, CT_ERR_USAGE, true},
	{"cast to a tensor that is no ancestor", e_cast_not_ancestor, CT_ERR_USAGE, true},
	{"cast an index outside the window", e_cast_outside_window, CT_ERR_USAGE, true},
	{"offset/get/set outside the window", e_offset_outside, CT_ERR_USAGE, true},
	{"dimension out of range", e_dim_out_of_range, CT_ERR_USAGE, true},
	{"i32 value out of range", e_set_i32_range, CT_ERR_INPUT, true},
	{"i32 NaN", e_set_i32_nan, CT_ERR_INPUT, true},
	{"i32 value that truncates to INT32_MIN", e_set_i32_edge, CT_OK, false},
	{"i64 value out of range", e_set_i64_range, CT_ERR_INPUT, true},
	{"i64 infinity", e_set_i64_inf, CT_ERR_INPUT, true},
	{"f32 value beyond FLT_MAX", e_set_f32_range, CT_ERR_INPUT, true},
	{"f32 infinity is a value", e_set_f32_inf, CT_OK, false},
	{"NULL handles", e_null_handles, CT_ERR_USAGE, false},
	{"out of memory: the tensor", e_nomem_root, CT_ERR_NOMEM, true},
	{"out of memory: the cache view", e_nomem_cache_view, CT_ERR_NOMEM, true},
	{"out of memory: the cache buffer", e_nomem_cache_buffer, CT_ERR_NOMEM, true},
	{"no failure past the last allocation", e_nomem_none, CT_OK, false},
};

static void run_err_case(const err_case *c)
{
	env e;
	env_open(&e);
	if (!e.ctx)
		return;
	ct_status st = c->fn(&e);
	CHECKF(st == c->want, "status %s, want %s (%s)", ct_strerror(st), ct_strerror(c->want),
	       ct_ctx_last_message(e.ctx));
	if (c->recorded)
		CHECKF(ct_ctx_last_status(e.ctx) == c->want && ct_ctx_last_message(e.ctx)[0],
		       "ctx has %s", ct_strerror(ct_ctx_last_status(e.ctx)));
	else
		CHECK(ct_ctx_last_status(e.ctx) == CT_OK);
	env_close(&e);
}

/* ---------------------------------------------------------------- single cases */

/* Cast from a sub-view of a cached copy of an SPMD tile up every level: the
 * physical offsets index the cache's own buffer, the casts the parents'
 * logical indices. */
static void test_cast_through_cache(void)
{
	env e;
	env_open(&e);
	const int64_t ext[2] = {8, 8}, toff[2] = {4, 0}, text[2] = {4, 4}, coff[2] = {1, 1},
		      cext[2] = {2, 3}, h[2] = {1, 1}, soff[2] = {1, 1}, sext[2] = {1, 2},
		      idx[2] = {0, 1};
	double buf[64], v;
	ct_tensor *r = ct_tensor_new(e.ctx, buf, CT_F64, 2, ext, CT_TENSOR_COL_MAJOR);
	ct_tensor *tile = ct_tensor_sub(r, toff, text);
	ct_tensor *c = ct_tensor_cache(tile, coff, cext, h, h, CT_TENSOR_ROW_MAJOR);
	ct_tensor *s = ct_tensor_sub(c, soff, sext);
	CHECK(r && tile && c && s);
	if (!s)
		goto out;
	fill_enc(r);
	CHECK(ct_tensor_copy_in(c) == CT_OK);
	int64_t at_c[2], at_tile[2], at_root[2], at_null[2], off;
	CHECK(ct_tensor_cast(s, c, idx, at_c) == CT_OK && at_c[0] == 1 && at_c[1] == 2);
	CHECK(ct_tensor_cast(s, tile, idx, at_tile) == CT_OK);
	CHECK(at_tile[0] == 2 && at_tile[1] == 3);
	CHECK(ct_tensor_cast(s, r, idx, at_root) == CT_OK);
	CHECK(at_root[0] == 6 && at_root[1] == 3);
	CHECK(ct_tensor_cast(s, NULL, idx, at_null) == CT_OK);
	CHECK(at_null[0] == 6 && at_null[1] == 3);
	CHECK(ct_tensor_cast(s, s, idx, at_c) == CT_OK && at_c[0] == 0 && at_c[1] == 1);
	/* storage: the sub-view of the cache shares the cache's buffer */
	CHECK(ct_tensor_data(s) == ct_tensor_data(c) && ct_tensor_data(s) != (void *)buf);
	CHECK(ct_tensor_is_cached(c) && !ct_tensor_is_cached(s));
	CHECK(ct_tensor_offset(s, idx, &off) == CT_OK);
	/* cache buffer 4x5 row-major, origin (1,1); s starts at cache (1,1) */
	CHECK(off == (1 + 1 + 0) * 5 + (1 + 1 + 1));
	CHECK(ct_tensor_get(s, idx, &v) == CT_OK && v == enc(2, at_root));
	/* the sub-view of a cache reaches the cache's halo, not beyond */
	const int64_t halo[2] = {-2, -2}, beyond[2] = {-3, 0};
	int64_t wlo, whi;
	CHECK(ct_tensor_cast(s, NULL, halo, at_null) == CT_OK);
	CHECK(at_null[0] == 4 && at_null[1] == 0);
	CHECK(ct_tensor_window(s, 0, &wlo, &whi) == CT_OK && wlo == -2 && whi == 2);
	CHECK(ct_tensor_offset(s, beyond, &off) == CT_ERR_USAGE);
	CHECK(ct_tensor_halo(s, 0, &wlo, &whi) == CT_OK && wlo == 0 && whi == 0);
out:
	ct_tensor_free(s);
	ct_tensor_free(c);
	ct_tensor_free(tile);
	ct_tensor_free(r);
	env_close(&e);
}

/* Every tile of an SPMD grid caches its block with a halo, updates the
 * interior and writes back: the whole tensor changes, the halo never leaks. */
static void test_spmd_grid(void)
{
	env e;
	env_open(&e);
	const int64_t ext[2] = {9, 10}, h[2] = {1, 1};
	double buf[90];
	ct_tensor *r = ct_tensor_new(e.ctx, buf, CT_F64, 2, ext, CT_TENSOR_ROW_MAJOR);
	CHECK(r != NULL);
	if (!r)
		goto out;
	fill_enc(r);
	for (int64_t ti = 0; ti < 9; ti += 3) {
		for (int64_t tj = 0; tj < 10; tj += 4) {
			const int64_t off[2] = {ti, tj}, zero[2] = {0, 0};
			int64_t tx[2] = {3, tj + 4 <= 10 ? 4 : 10 - tj};
			ct_tensor *tile = ct_tensor_sub(r, off, tx);
			ct_tensor *c = ct_tensor_cache(tile, zero, tx, h, h, CT_TENSOR_ROW_MAJOR);
			CHECK(tile && c);
			if (!c) {
				ct_tensor_free(tile);
				break;
			}
			CHECK(ct_tensor_copy_in(c) == CT_OK);
			int64_t idx[2] = {0, 0};
			do {
				double v;
				CHECK(ct_tensor_get(c, idx, &v) == CT_OK);
				CHECK(ct_tensor_set(c, idx, -v) == CT_OK);
			} while (next_index(2, idx, zero, tx));
			CHECK(ct_tensor_copy_out(c) == CT_OK);
			CHECK(ct_tensor_free(c) == CT_OK);
			CHECK(ct_tensor_free(tile) == CT_OK);
		}
	}
	const int64_t zero[2] = {0, 0};
	int64_t idx[2] = {0, 0};
	do {
		double v;
		CHECK(ct_tensor_get(r, idx, &v) == CT_OK && v == -enc(2, idx));
	} while (next_index(2, idx, zero, ext));
	CHECK(ct_tensor_free(r) == CT_OK);
out:
	env_close(&e);
}

/* Failing each allocation of a root + sub-view + cache sequence in turn
 * reports CT_ERR_NOMEM and leaks nothing. */
static void test_nomem_sweep(void)
{
	const int64_t off[2] = {1, 1}, ext[2] = {2, 2}, h[2] = {1, 1};
	bool finished = false;
	for (int k = 1; k < 20 && !finished; k++) {
		env e;
		env_open(&e);
		if (!e.ctx)
			return;
		e.tl.fail_at = e.tl.calls + k;
		ct_tensor *r = root34(&e), *s = NULL, *c = NULL, *cc = NULL;
		if (r)
			s = ct_tensor_sub(r, off, ext);
		if (s)
			c = ct_tensor_cache(s, off, (const int64_t[]){1, 1}, h, h,
					    CT_TENSOR_COL_MAJOR);
		if (c)
			cc = ct_tensor_cache(c, (const int64_t[]){0, 0}, (const int64_t[]){1, 1}, h,
					     h, CT_TENSOR_ROW_MAJOR);
		if (cc)
			finished = true;
		else
			CHECKF(ct_ctx_last_status(e.ctx) == CT_ERR_NOMEM, "k=%d: %s", k,
			       ct_strerror(ct_ctx_last_status(e.ctx)));
		CHECK(ct_tensor_free(cc) == CT_OK);
		CHECK(ct_tensor_free(c) == CT_OK);
		CHECK(ct_tensor_free(s) == CT_OK);
		CHECK(ct_tensor_free(r) == CT_OK);
		env_close(&e);
	}
	CHECK(finished);
}

/* A copy-in after the parent changed refreshes the cache, halo included. */
static void test_copy_in_refreshes(void)
{
	env e;
	env_open(&e);
	const int64_t ext[2] = {4, 4}, off[2] = {1, 1}, bx[2] = {2, 2}, h[2] = {1, 1},
		      corner[2] = {0, 0}, in_cache[2] = {-1, -1};
	float buf[16] = {0};
	double v;
	ct_tensor *r = ct_tensor_new(e.ctx, buf, CT_F32, 2, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *c = ct_tensor_cache(r, off, bx, h, h, CT_TENSOR_COL_MAJOR);
	CHECK(r && c);
	if (!c)
		goto out;
	CHECK(ct_tensor_copy_in(c) == CT_OK);
	CHECK(ct_tensor_get(c, in_cache, &v) == CT_OK && v == 0);
	CHECK(ct_tensor_set(r, corner, 2.5) == CT_OK);
	CHECK(ct_tensor_get(c, in_cache, &v) == CT_OK && v == 0); /* separate storage */
	CHECK(ct_tensor_copy_in(c) == CT_OK);
	CHECK(ct_tensor_get(c, in_cache, &v) == CT_OK && v == 2.5);
out:
	ct_tensor_free(c);
	ct_tensor_free(r);
	env_close(&e);
}

int main(void)
{
	char name[160];
	for (size_t i = 0; i < sizeof layout_cases / sizeof *layout_cases; i++) {
		snprintf(name, sizeof name, "layout: %s", layout_cases[i].name);
		h_begin(name);
		run_layout_case(&layout_cases[i]);
		h_end();
	}
	for (size_t i = 0; i < sizeof sub_cases / sizeof *sub_cases; i++) {
		snprintf(name, sizeof name, "sub-view: %s", sub_cases[i].name);
		h_begin(name);
		run_sub_case(&sub_cases[i]);
		h_end();
	}
	for (size_t i = 0; i < sizeof halo_cases / sizeof *halo_cases; i++) {
		snprintf(name, sizeof name, "halo: %s", halo_cases[i].name);
		h_begin(name);
		run_halo_case(&halo_cases[i]);
		h_end();
	}
	for (size_t i = 0; i < sizeof dtype_cases / sizeof *dtype_cases; i++) {
		snprintf(name, sizeof name, "dtype: %s", dtype_cases[i].name);
		h_begin(name);
		run_dtype_case(&dtype_cases[i]);
		h_end();
	}
	for (size_t i = 0; i < sizeof err_cases / sizeof *err_cases; i++) {
		snprintf(name, sizeof name, "error: %s", err_cases[i].name);
		h_begin(name);
		run_err_case(&err_cases[i]);
		h_end();
	}
	RUN(test_cast_through_cache);
	RUN(test_spmd_grid);
	RUN(test_nomem_sweep);
	RUN(test_copy_in_refreshes);
	return h_report();
}
