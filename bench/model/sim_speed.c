/* sim_speed.c: accesses per second of the exact cache simulator on a tiled matmul trace. */
#include "model/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The problem: C[i][j] += A[i][k] * B[k][j] over n^3 doubles, tiles of `tile` in i, k and j. */
typedef struct problem {
	int64_t n, tile;
} problem;

/* Where the trace goes: one access at a time, or line numbers gathered into batches. */
typedef struct feed {
	sim *s;
	int64_t n;
	int64_t base[3]; /* byte addresses of A, B, C */
	int shift;       /* log2 of the line size */
	uint64_t buf[8192];
	size_t m;
} feed;

typedef void (*row_fn)(feed *f, int64_t i, int64_t k, int64_t j0, int64_t j1);

static double seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The innermost j loop through sim_access_ref, as the interpreter's trace callback feeds it;
 * the order is CLI.md's (A, B, then C read and C write), each tagged with its reference. */
static void row_calls(feed *f, int64_t i, int64_t k, int64_t j0, int64_t j1)
{
	int64_t n = f->n;
	for (int64_t j = j0; j < j1; j++) {
		sim_access_ref(f->s, 0, 0, i * n + k, 0);
		sim_access_ref(f->s, 1, 1, k * n + j, 0);
		sim_access_ref(f->s, 2, 2, i * n + j, 0);
		sim_access_ref(f->s, 3, 2, i * n + j, 1);
	}
}

/* The same accesses as line numbers, handed over in batches. */
static void row_lines(feed *f, int64_t i, int64_t k, int64_t j0, int64_t j1)
{
	const int64_t es = (int64_t)sizeof(double), n = f->n;
	uint64_t a = (uint64_t)(f->base[0] + (i * n + k) * es) >> f->shift;
	for (int64_t j = j0; j < j1; j++) {
		if (f->m + 4 > sizeof f->buf / sizeof f->buf[0]) {
			sim_access_lines(f->s, f->buf, f->m, NULL);
			f->m = 0;
		}
		uint64_t c = (uint64_t)(f->base[2] + (i * n + j) * es) >> f->shift;
		f->buf[f->m++] = a;
		f->buf[f->m++] = (uint64_t)(f->base[1] + (k * n + j) * es) >> f->shift;
		f->buf[f->m++] = c;
		f->buf[f->m++] = c;
	}
}

/* The tiled loop nest i0, k0, j0, i, k, j; row does the innermost loop. */
static void walk(const problem *p, row_fn row, feed *f)
{
	int64_t n = p->n, t = p->tile;
	for (int64_t i0 = 0; i0 < n; i0 += t)
		for (int64_t k0 = 0; k0 < n; k0 += t)
			for (int64_t j0 = 0; j0 < n; j0 += t)
				for (int64_t i = i0; i < min64(i0 + t, n); i++)
					for (int64_t k = k0; k < min64(k0 + t, n); k++)
						row(f, i, k, j0, min64(j0 + t, n));
}

static int bench_row(ct_ctx *ctx, const char *label, const char *spec_text, const problem *p,
                     bool batch)
{
	sim_spec spec;
	if (sim_spec_parse(ctx, spec_text, &spec))
		return 1;
	sim_buffer buf[3];
	for (int b = 0; b < 3; b++)
		buf[b] = (sim_buffer){(int64_t)sizeof(double), p->n * p->n};
	static feed f; /* large; not on the stack */
	f.s = sim_new(ctx, &spec, buf, 3, 4);
	if (!f.s)
		return 1;
	f.n = p->n;
	f.m = 0;
	f.shift = __builtin_ctzll((unsigned long long)spec.level[0].line);
	for (int b = 0; b < 3; b++)
		f.base[b] = sim_address(f.s, b, 0);
	double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	walk(p, batch ? row_lines : row_calls, &f);
	if (batch)
		sim_access_lines(f.s, f.buf, f.m, NULL);
	double wall = seconds(CLOCK_MONOTONIC) - w0, cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
	uint64_t misses[SIM_MAX_LEVELS], accesses;
	int rc = sim_result(f.s, misses, &accesses, NULL) != CT_OK;
	if (!rc) {
		printf("%-18s %-6s %-22s %11llu %7.3f %7.3f %8.1f %8.1f  ", label,
		       batch ? "lines" : "access", spec_text, (unsigned long long)accesses, wall,
		       cpu, (double)accesses / wall / 1e6, (double)accesses / cpu / 1e6);
		for (int l = 0; l < spec.nlevels; l++)
			printf("%s%llu", l ? "/" : "", (unsigned long long)misses[l]);
		printf("\n");
	}
	sim_free(f.s);
	return rc;
}

int main(int argc, char **argv)
{
	problem p = {256, 64};
	if (argc > 1)
		p.n = atoll(argv[1]);
	if (argc > 2)
		p.tile = atoll(argv[2]);
	if (p.n <= 0 || p.tile <= 0) {
		fprintf(stderr, "usage: sim_speed [N [TILE]]   (tiled N^3 double matmul)\n");
		return 2;
	}
	static const struct {
		const char *label, *spec;
	} rows[] = {
	    {"fully associative", "32K:64,1M:64"},
	    {"set-associative", "32K:64:8"},
	    {"both", "32K:64,1M:64,32K:64:8"},
	};
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	printf("tiled matmul n=%lld tile=%lld (doubles; A, B, C read, C write per iteration)\n",
	       (long long)p.n, (long long)p.tile);
	printf("%-18s %-6s %-22s %11s %7s %7s %8s %8s  %s\n", "levels", "api", "spec", "accesses",
	       "wall s", "cpu s", "Macc/s", "(cpu)", "misses per level");
	int rc = 0;
	for (int batch = 0; batch < 2 && !rc; batch++)
		for (size_t r = 0; r < sizeof rows / sizeof rows[0] && !rc; r++)
			rc = bench_row(ctx, rows[r].label, rows[r].spec, &p, batch != 0);
	if (rc)
		fprintf(stderr, "sim_speed: %s\n", ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
	return rc;
}
