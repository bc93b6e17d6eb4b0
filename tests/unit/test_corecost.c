/* test_corecost.c: the tuner's core cost: register tiles counted in issue cycles, and the ranking it gives. */
#include "harness.h"

#include "cachet.h"
#include "ir/looptree.h"
#include "tune/corecost.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A matmul whose register tile is MR rows x NR lanes of C across the k loop
 * of a KC block (the pattern of examples/sgemm.cachet, no caches). */
static ct_kernel *rtmm(ct_ctx *ctx, int m, int n, int k, int mr, int nr, int kc)
{
	char src[1024];
	snprintf(src, sizeof src,
	         "kernel rtmm\n"
	         "param M = %d, N = %d, K = %d, MR = %d, NR = %d, KC = %d\n"
	         "array A : f32[M, K] input\n"
	         "array B : f32[K, N] input\n"
	         "array C : f32[M, N] inout\n"
	         "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	         "schedule { ii, jj, kk = tile(i=MR, j=NR, k=KC); reorder(i, j, k, kk, ii, jj) }\n"
	         "plan { unroll(ii); vectorize(jj) }\n",
	         m, n, k, mr, nr, kc);
	ct_kernel *kn = ct_kernel_parse(ctx, src, strlen(src), "rtmm.cachet");
	CHECKF(kn != NULL, "%s", ct_ctx_last_message(ctx));
	return kn;
}

/* A machine fixed by hand: 1 GHz (cycles = ns), 2 FMA units and load
 * ports, FMA latency 4, 32-byte vectors (8 floats), 16 registers. */
static tune_machine test_machine(void)
{
	tune_machine m;
	memset(&m, 0, sizeof m);
	m.ghz = 1;
	m.fma_units = 2;
	m.fma_latency = 4;
	m.vector_bytes = 32;
	m.vector_registers = 16;
	m.load_ports = 2;
	return m;
}

static double cycles_of(ct_kernel *k, const tune_machine *m, tune_core_cost *out)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	CHECK(t != NULL);
	if (!t)
		return -1;
	ct_status st = tune_core_cycles(t, m, out);
	CHECK(st == CT_OK);
	ct_looptree_free(t);
	return st ? -1 : out->cycles;
}

/* The formula on a case worked by hand: 16 x 16 x 8, tile 4 x 16 across a
 * k block of 8: 2 chunks of 8 lanes, 8 accumulators; per k iteration 8
 * FMAs / 2 = 4 cycles, 4 broadcasts + 2 vector loads / 2 = 3, latency 4:
 * 4 cycles; per tile 8 x 4 + (8 loads + 8 stores) / 2 + 4 drain = 44; four
 * tiles: 176 cycles. */
static void tile_by_hand(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = rtmm(ctx, 16, 16, 8, 4, 16, 8);
	tune_machine m = test_machine();
	tune_core_cost c;
	if (k) {
		CHECKF(cycles_of(k, &m, &c) == 176, "%g", c.cycles);
		CHECK(c.tiles == 1 && c.tile_flops == 2.0 * 16 * 16 * 8);
		CHECK(c.ns == 176);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Table: pairs of tile shapes (MR x NR, KC) on one size where the first
 * must cost fewer cycles than the second, and why. */
typedef struct rank_row {
	const char *why;
	int mr, nr, kc;       /* better */
	int mr2, nr2, kc2;    /* worse */
} rank_row;

static const rank_row rank_rows[] = {
    /* 1 accumulator: each k step waits for the previous FMA (latency 4) */
    {"enough accumulators hide the FMA latency", 4, 16, 64, 1, 8, 64},
    /* 4 x 8: 4 accumulators, still latency bound; 4 x 16 has 8 */
    {"two vectors per row beat one", 4, 16, 64, 4, 8, 64},
    /* 8 x 32 needs 32 accumulators + operands on 16 registers: spills */
    {"a tile that spills loses", 4, 16, 64, 8, 32, 64},
    /* the tile is loaded and stored once per k block */
    {"a longer k block moves the tile less often", 4, 16, 64, 4, 16, 8},
    /* 12 lanes: one full vector and a 4-lane one, half of it wasted work per FMA */
    {"the vector width is used", 4, 16, 64, 4, 12, 64},
};

static void rank_shapes(void)
{
	ct_ctx *ctx = ct_ctx_new();
	tune_machine m = test_machine();
	for (size_t i = 0; i < sizeof rank_rows / sizeof *rank_rows; i++) {
		const rank_row *r = &rank_rows[i];
		h_begin(r->why);
		ct_kernel *a = rtmm(ctx, 48, 48, 64, r->mr, r->nr, r->kc);
		ct_kernel *b = rtmm(ctx, 48, 48, 64, r->mr2, r->nr2, r->kc2);
		tune_core_cost ca, cb;
		if (a && b) {
			double x = cycles_of(a, &m, &ca), y = cycles_of(b, &m, &cb);
			CHECKF(x > 0 && x < y, "%dx%d kc %d: %g cycles, %dx%d kc %d: %g", r->mr, r->nr, r->kc, x,
			       r->mr2, r->nr2, r->kc2, y);
			CHECK(ca.tiles >= 1 && cb.tiles >= 1);
		}
		ct_kernel_free(a);
		ct_kernel_free(b);
		h_end();
	}
	ct_ctx_free(ctx);
}

/* Statements outside register tiles: accesses per load port, divided by
 * the lanes of a vectorized loop. */
static void plain_statements(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = "kernel cp\nparam N = 64\narray A : f32[N] input\narray B : f32[N] output\n"
	                  "for (i: N) { B[i] = A[i] }\n"
	                  "schedule { ii = split(i, 8) }\nplan { vectorize(ii) }\n";
	const char *scal = "kernel cp\nparam N = 64\narray A : f32[N] input\narray B : f32[N] output\n"
	                   "for (i: N) { B[i] = A[i] }\n";
	ct_kernel *v = ct_kernel_parse(ctx, src, strlen(src), "cp.cachet");
	ct_kernel *s = ct_kernel_parse(ctx, scal, strlen(scal), "cp.cachet");
	tune_machine m = test_machine();
	tune_core_cost c;
	CHECKF(v && s, "%s", ct_ctx_last_message(ctx));
	if (v && s) {
		/* 64 x (1 read + 1 write) / 2 ports = 64 cycles; / 8 lanes = 8 */
		CHECKF(cycles_of(s, &m, &c) == 64 && c.tiles == 0, "%g", c.cycles);
		CHECKF(cycles_of(v, &m, &c) == 8 && c.tiles == 0, "%g", c.cycles);
	}
	ct_kernel_free(v);
	ct_kernel_free(s);
	/* f64: 4 lanes of a 32-byte vector, twice the f32 loop's cycles */
	const char *dsrc = "kernel cp\nparam N = 64\narray A : f64[N] input\narray B : f64[N] output\n"
	                   "for (i: N) { B[i] = A[i] }\n"
	                   "schedule { ii = split(i, 8) }\nplan { vectorize(ii) }\n";
	ct_kernel *d = ct_kernel_parse(ctx, dsrc, strlen(dsrc), "cp.cachet");
	CHECKF(d != NULL, "%s", ct_ctx_last_message(ctx));
	if (d)
		CHECKF(cycles_of(d, &m, &c) == 16, "%g", c.cycles);
	ct_kernel_free(d);
	ct_ctx_free(ctx);
}

/* Parallel bands: the slowest thread's share, ceil(P / T) of the band's P iterations
 * (the collapsed loops' product). A 1-D copy of 8 vector blocks (8 cycles on one thread)
 * and a 2-D one whose band i x j has 4 x 4 iterations (16 cycles). */
typedef struct par_row {
	const char *plan;
	int threads;
	double cycles, share;
} par_row;
static const par_row par_rows[] = {
    {"vectorize(ii); parallelize(i)", 1, 8, 1},      {"vectorize(ii); parallelize(i)", 2, 4, 0.5},
    {"vectorize(ii); parallelize(i)", 3, 3, 0.375},  {"vectorize(ii); parallelize(i)", 16, 1, 0.125},
    {"vectorize(jj); parallelize(r, j)", 3, 6, 0.375}, {"vectorize(jj); parallelize(r, j)", 16, 1, 0.0625},
    {"vectorize(jj); parallelize(r)", 3, 8, 0.5},    {"vectorize(jj)", 2, 16, 1},
};
static void parallel_bands(void)
{
	ct_ctx *ctx = ct_ctx_new();
	for (size_t i = 0; i < sizeof par_rows / sizeof par_rows[0]; i++) {
		const par_row *r = &par_rows[i];
		char src[512];
		if (strstr(r->plan, "ii"))
			snprintf(src, sizeof src,
			         "kernel cp\nparam N = 64\narray A : f32[N] input\narray B : f32[N] output\n"
			         "for (i: N) { B[i] = A[i] }\nschedule { ii = split(i, 8) }\nplan { %s }\n", r->plan);
		else
			snprintf(src, sizeof src,
			         "kernel cp\narray A : f32[4, 32] input\narray B : f32[4, 32] output\n"
			         "for (r: 4, j: 32) { B[r, j] = A[r, j] }\nschedule { jj = split(j, 8) }\nplan { %s }\n",
			         r->plan);
		ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "cp.cachet");
		CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
		tune_machine m = test_machine();
		m.threads = r->threads;
		tune_core_cost c;
		if (k)
			CHECKF(cycles_of(k, &m, &c) == r->cycles && c.share == r->share,
			       "%s on %d threads: %g cycles, share %g (want %g, %g)", r->plan, r->threads, c.cycles,
			       c.share, r->cycles, r->share);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
}

/* ct_tune ranks a register-tiled kernel's shapes with the core cost: the
 * 1-accumulator tile (latency bound on every target) is never first. */
static void tuner_ranks_tiles(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = "kernel rt\n"
	                  "param M = 64, N = 64, K = 64\n"
	                  "param MR = 1 tune {1, 4}\n"
	                  "param NR = 8 tune {8, 16}\n"
	                  "array A : f32[M, K] input\n"
	                  "array B : f32[K, N] input\n"
	                  "array C : f32[M, N] inout\n"
	                  "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	                  "schedule { ii, jj = tile(i=MR, j=NR); reorder(i, j, k, ii, jj) }\n"
	                  "plan { unroll(ii); vectorize(jj) }\n";
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "rt.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.no_store = 1;
	o.no_default = 1;
	o.fraction = 0.01; /* one measured */
	o.verify = 0;
	ct_tune_result r;
	ct_status st = ct_tune(k, &o, &r);
	CHECKF(st == CT_OK, "%s", ct_ctx_last_message(ctx));
	if (st == CT_OK) {
		CHECK(r.ncandidates == 4 && r.nmeasured == 1);
		/* params in declaration order: MR, NR */
		CHECKF(r.candidates[0].values[0] == 4, "first MR=%lld", (long long)r.candidates[0].values[0]);
		/* the 1 x 8 tile last: one accumulator, the fewest lanes */
		CHECK(r.candidates[3].values[0] == 1 && r.candidates[3].values[1] == 8);
		for (int i = 1; i < r.ncandidates; i++)
			CHECK(r.candidates[i - 1].cost <= r.candidates[i].cost);
		ct_tune_result_free(&r);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Loops with affine bounds: the core cost counts the iterations the triangle runs, not a
 * square's. `C[i, j] += L[i, k] * B[k, j]` costs 2 cycles an execution on the test machine (3
 * reads and a write over 2 ports; one FMA over 2 units), and runs N * M * (N+1)/2 times with k:
 * 0 .. i+1 (16 x 12 x 17 / 2 = 1632), with k split in blocks of 5 (per-iteration tails) too,
 * and for a band (j: max(0, i-2) .. min(N, i+3): 16 * 5 - 6 = 74 points, x 12). */
static void affine_loops(void)
{
	static const char *const srcs[] = {
	    "kernel tri\nparam N = 16, M = 12\narray L : f32[N, N] input\narray B : f32[N, M] input\n"
	    "array C : f32[N, M] inout\nfor (i: N, j: M, k: 0 .. i+1) { C[i, j] += L[i, k] * B[k, j] }\n",
	    "kernel tri\nparam N = 16, M = 12\narray L : f32[N, N] input\narray B : f32[N, M] input\n"
	    "array C : f32[N, M] inout\nfor (i: N, j: M, k: 0 .. i+1) { C[i, j] += L[i, k] * B[k, j] }\n"
	    "schedule { kk = split(k, 5); reorder(i, k, j, kk) }\n",
	    "kernel band\nparam N = 16, M = 12\narray L : f32[N, N] input\narray B : f32[N, M] input\n"
	    "array C : f32[N, M] inout\n"
	    "for (i: N, k: max(0, i-2) .. min(N, i+3), j: M) { C[i, j] += L[i, k] * B[k, j] }\n",
	};
	static const double want[] = {2.0 * 1632, 2.0 * 1632, 2.0 * 74 * 12};
	tune_machine m = test_machine();
	for (int i = 0; i < 3; i++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, srcs[i], strlen(srcs[i]), "tri.cachet");
		CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
		tune_core_cost c;
		if (k)
			CHECKF(cycles_of(k, &m, &c) == want[i], "kernel %d: %g cycles, want %g", i, c.cycles, want[i]);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

int main(void)
{
	RUN(tile_by_hand);
	rank_shapes(); /* one case per row */
	RUN(plain_statements);
	RUN(parallel_bands);
	RUN(tuner_ranks_tiles);
	RUN(affine_loops);
	return h_report();
}
