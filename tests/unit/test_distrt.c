/* test_distrt.c: the arithmetic of distributed kernels (src/ir/distrt.c) against brute force, and the bytes the library predicts for kernels against hand-counted halos and panels. */
#include "ir/distrt.h"

#include "harness.h"

#include <cachet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int64_t rng_in(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* Blocks of every coordinate tile the trips in order, sizes differing by at most one. */
static void test_share(void)
{
	uint64_t s = 1;
	for (int t = 0; t < 2000; t++) {
		int64_t n = rng_in(&s, 0, 100), g = rng_in(&s, 1, 12), at = 0, most = 0, least = INT64_MAX;
		for (int64_t c = 0; c < g; c++) {
			int64_t b[2];
			ctd_share(n, g, c, b);
			CHECKF(b[0] == at && b[1] >= b[0], "n %lld g %lld c %lld: [%lld, %lld) after %lld", (long long)n,
			       (long long)g, (long long)c, (long long)b[0], (long long)b[1], (long long)at);
			at = b[1];
			most = b[1] - b[0] > most ? b[1] - b[0] : most;
			least = b[1] - b[0] < least ? b[1] - b[0] : least;
		}
		CHECK(at == n);
		CHECK(most - least <= 1);
	}
}

/* The grids MPI_Dims_create gives (Open MPI 4, checked by hand against its documentation's
 * rule: as square as possible, non-increasing). */
static void test_dims(void)
{
	static const struct {
		int64_t n;
		int nd;
		int64_t want[3];
	} rows[] = {
	    {1, 1, {1}},       {4, 1, {4}},        {4, 2, {2, 2}},   {6, 2, {3, 2}},       {12, 2, {4, 3}},
	    {7, 2, {7, 1}},    {8, 3, {2, 2, 2}},  {64, 2, {8, 8}},  {512, 2, {32, 16}},   {512, 3, {8, 8, 8}},
	    {3, 2, {3, 1}},    {18, 2, {6, 3}},    {24, 3, {4, 3, 2}},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int64_t d[3] = {0, 0, 0};
		ctd_dims_create(rows[i].n, rows[i].nd, d);
		for (int g = 0; g < rows[i].nd; g++)
			CHECKF(d[g] == rows[i].want[g], "%lld ranks over %d: dimension %d is %lld, not %lld", (long long)rows[i].n,
			       rows[i].nd, g, (long long)d[g], (long long)rows[i].want[g]);
	}
}

/* A random 2-D array over 1 or 2 random axes, with random stencil refs. */
static void random_case(uint64_t *s, ctd_axis *ax, int *naxes, ctd_array *a)
{
	memset(a, 0, sizeof *a);
	*naxes = (int)rng_in(s, 1, 2);
	a->rank = 2;
	a->esize = 4;
	a->panel_dim = a->panel_axis = -1;
	for (int d = 0; d < 2; d++) {
		a->ext[d] = rng_in(s, 1, 40);
		a->align[d] = d < *naxes ? d : -1;
	}
	for (int g = 0; g < *naxes; g++) {
		ax[g].lo = rng_in(s, 0, 2);
		ax[g].hi = a->ext[g] - rng_in(s, 0, 2);
		ax[g].step = rng_in(s, 1, 6);
		ax[g].ranks = rng_in(s, 1, 5);
	}
	a->nref = (int)rng_in(s, 1, 5);
	for (int i = 0; i < a->nref; i++)
		for (int d = 0; d < 2; d++) {
			if (d < *naxes)
				a->ref[i].coef[d][d] = 1;
			int64_t c = rng_in(s, -2, 2);
			a->ref[i].rlo[d] = d < *naxes ? c : 0;
			a->ref[i].rhi[d] = d < *naxes ? c : a->ext[d] - 1;
		}
}

static bool in_box(const ctd_box *b, int64_t x, int64_t y)
{
	return x >= b->lo[0] && x < b->hi[0] && y >= b->lo[1] && y < b->hi[1];
}

/* Owned boxes partition the array among the canonical ranks; what a rank needs and does not own
 * comes in exactly one message from its owner; every local box holds the owned box and the
 * reads; the ranks' bytes out and in balance. Brute force over elements. */
static void test_boxes(void)
{
	uint64_t s = 7;
	for (int t = 0; t < 400; t++) {
		ctd_axis ax[CTD_MAX_AXES];
		ctd_array a;
		int naxes;
		random_case(&s, ax, &naxes, &a);
		a.role = 0;
		int64_t n = ctd_nranks(ax, naxes), out = 0, in = 0;
		for (int64_t x = 0; x < a.ext[0]; x++)
			for (int64_t y = 0; y < a.ext[1]; y++) {
				int owners = 0;
				for (int64_t r = 0; r < n; r++) {
					int64_t c[CTD_MAX_AXES];
					ctd_coords(ax, naxes, r, c);
					ctd_box o;
					ctd_owned(&a, ax, naxes, c, &o);
					owners += ctd_canonical(&a, naxes, c) && in_box(&o, x, y);
				}
				CHECKF(owners == 1, "case %d: element (%lld, %lld) has %d owners", t, (long long)x, (long long)y, owners);
			}
		for (int64_t r = 0; r < n; r++) {
			int64_t me[CTD_MAX_AXES], other[CTD_MAX_AXES];
			ctd_coords(ax, naxes, r, me);
			CHECK(ctd_rank_of(ax, naxes, me) == r);
			ctd_box own, local;
			ctd_owned(&a, ax, naxes, me, &own);
			ctd_local(&a, ax, naxes, me, &local);
			for (int i = 0; i < a.nref; i++) {
				ctd_box rb;
				ctd_ref_box(&a, i, ax, naxes, me, &rb);
				for (int64_t x = rb.lo[0]; x < rb.hi[0]; x++)
					for (int64_t y = rb.lo[1]; y < rb.hi[1]; y++) {
						CHECK(in_box(&local, x, y));
						if (in_box(&own, x, y))
							continue;
						int from = 0;
						for (int64_t q = 0; q < n; q++) {
							ctd_box m;
							ctd_coords(ax, naxes, q, other);
							ctd_message(&a, ax, naxes, other, me, &m);
							from += !ctd_box_empty(&m, 2) && in_box(&m, x, y);
						}
						CHECKF(from == 1, "case %d: rank %lld reads (%lld, %lld) from %d messages", t, (long long)r,
						       (long long)x, (long long)y, from);
					}
			}
			for (int64_t q = 0; q < n; q++) {
				ctd_box m;
				ctd_coords(ax, naxes, q, other);
				ctd_message(&a, ax, naxes, me, other, &m);
				out += ctd_box_count(&m, 2);
				ctd_message(&a, ax, naxes, other, me, &m);
				in += ctd_box_count(&m, 2);
			}
		}
		CHECK(out == in);
	}
}

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "dist.cachet");
	CHECKF(k != NULL, "parse: %s", ct_ctx_last_message(ctx));
	return k;
}

/* Predicted bytes of a 5-point stencil on 2x2 ranks: rank 0 owns rows 0..31 and columns 0..31
 * of a 64 x 48 grid (8 of 8-row tiles split 4/4, 3 of 16-column tiles split 2/1) and sends its
 * last column (32 floats) to rank 1 and its last row (32 floats) to rank 2: 256 bytes; rank 1
 * (columns 32..47) sends 32 + 16 floats: 192 bytes. A star: no corners. The 9-point box adds
 * one corner element to each diagonal neighbour. */
static void test_stencil_bytes(void)
{
	static const char *const shape[2] = {
	    "A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]",
	    "A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y] + A[x-1, y-1] + A[x-1, y+1] + A[x+1, y-1] + A[x+1, y+1]"};
	static const int64_t want[2][4] = {{256, 192, 256, 192}, {260, 196, 260, 196}};
	for (int v = 0; v < 2; v++) {
		char text[1200];
		snprintf(text, sizeof text,
		         "kernel st\nparam N = 64, M = 48\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
		         "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n    B[x, y] = %s\n  } else {\n"
		         "    B[x, y] = A[x, y]\n  }\n}\nschedule {\n  xx, yy = tile(x=8, y=16)\n  reorder(x, y, xx, yy)\n}\n"
		         "plan {\n  distribute(x, y, grid=2x2)\n}\n",
		         shape[v]);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse(ctx, text);
		int64_t sent[4], recv[4], dims[3];
		if (k) {
			CHECK(ct_kernel_is_distributed(k));
			ct_status st = ct_kernel_predict_ranks(k, 4, NULL, 0, sent, recv, dims);
			CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
			for (int r = 0; r < 4 && st == CT_OK; r++) {
				CHECKF(sent[r] == want[v][r] && recv[r] == want[v][r], "shape %d rank %d: %lld out, %lld in, want %lld", v,
				       r, (long long)sent[r], (long long)recv[r], (long long)want[v][r]);
			}
			CHECK(dims[0] == 2 && dims[1] == 2 && dims[2] == 0);
			/* 3 ranks do not make the 2x2 of grid= */
			CHECK(ct_kernel_predict_ranks(k, 3, NULL, 0, sent, recv, dims) == CT_ERR_USAGE);
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* SUMMA on 2x2: K = 45 in 4-value tiles (12 trips) splits 6/6 over either axis, so the panels
 * are k 0..23 and 24..44. Rank 0 (rows 0..39, columns 0..31) owns the first panel of A (40 x 24
 * floats, sent to its one row neighbour) and of B (24 x 32, to its column neighbour), and
 * receives the second ones (40 x 21 and 21 x 32). */
static void test_summa_bytes(void)
{
	const char *text = "kernel g\nparam M = 70, N = 52, K = 45\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
	                   "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	                   "schedule {\n  ii, jj, kk = tile(i=8, j=16, k=4)\n  reorder(i, j, k, ii, kk, jj)\n}\n"
	                   "plan {\n  distribute(i, j)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	int64_t sent[4], recv[4], dims[3], grid[2] = {2, 2};
	if (k && ct_kernel_predict_ranks(k, 4, grid, 2, sent, recv, dims) == CT_OK) {
		CHECKF(sent[0] == (40 * 24 + 24 * 32) * 4, "rank 0 sends %lld", (long long)sent[0]);
		CHECKF(recv[0] == (40 * 21 + 21 * 32) * 4, "rank 0 receives %lld", (long long)recv[0]);
		char *txt = ct_kernel_distribution_text(k, 4);
		CHECK(txt && strstr(txt, "panels of 'k': 0..23 24..44") != NULL);
		free(txt);
	} else {
		CHECKF(false, "%s", ct_ctx_last_message(ctx));
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* A dot product over the distributed index: the partial sums go to coordinate 0, 8 bytes from
 * each of the other ranks. */
static void test_reduction_bytes(void)
{
	const char *text = "kernel dot\nparam N = 100\narray X : f64[N] input\narray Y : f64[N] input\narray S : f64[1] inout\n"
	                   "for (i: N) {\n  S[0] += X[i] * Y[i]\n}\nplan {\n  distribute(i)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	int64_t sent[3], recv[3];
	if (k && ct_kernel_predict_ranks(k, 3, NULL, 0, sent, recv, NULL) == CT_OK) {
		CHECK(sent[0] == 0 && recv[0] == 16);
		CHECK(sent[1] == 8 && recv[1] == 0 && sent[2] == 8 && recv[2] == 0);
	} else {
		CHECKF(false, "%s", ct_ctx_last_message(ctx));
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_share);
	RUN(test_dims);
	RUN(test_boxes);
	RUN(test_stencil_bytes);
	RUN(test_summa_bytes);
	RUN(test_reduction_bytes);
	return h_report();
}
