/* sim_speed.c: accesses per second of the exact cache simulator on a tiled matmul trace. */
#include "model/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The problem: C[i][j] += A[i][k] * B[k][j], n^3 doubles, tiles of t in i, k and j. */
typedef struct problem {
	int64_t n, tile;
} problem;

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Feed the trace one access at a time, as the interpreter's trace callback does; the order is
 * CLI.md's (A, B, then C read and C write), each access tagged with its reference id. */
static void run_calls(sim *s, const problem *p)
{
	int64_t n = p->n, t = p->tile;
	for (int64_t i0 = 0; i0 < n; i0 += t)
		for (int64_t k0 = 0; k0 < n; k0 += t)
			for (int64_t j0 = 0; j0 < n; j0 += t)
				for (int64_t i = i0; i < min64(i0 + t, n); i++)
					for (int64_t k = k0; k < min64(k0 + t, n); k++)
						for (int64_t j = j0; j < min64(j0 + t, n); j++) {
							sim_access_ref(s, 0, 0, i * n + k, 0);
							sim_access_ref(s, 1, 1, k * n + j, 0);
							sim_access_ref(s, 2, 2, i * n + j, 0);
							sim_access_ref(s, 3, 2, i * n + j, 1);
						}
}

/* The same trace as line numbers in batches (the spec must have one line size). */
static void run_batches(sim *s, const problem *p, int64_t line)
{
	int sh = __builtin_ctzll((unsigned long long)line);
	enum { CHUNK = 8192 };
	uint64_t buf[CHUNK];
	size_t m = 0;
	int64_t n = p->n, t = p->tile, es = (int64_t)sizeof(double);
	int64_t base[3];
	for (int b = 0; b < 3; b++)
		base[b] = sim_address(s, b, 0);
	for (int64_t i0 = 0; i0 < n; i0 += t)
		for (int64_t k0 = 0; k0 < n; k0 += t)
			for (int64_t j0 = 0; j0 < n; j0 += t)
				for (int64_t i = i0; i < min64(i0 + t, n); i++)
					for (int64_t k = k0; k < min64(k0 + t, n); k++)
						for (int64_t j = j0; j < min64(j0 + t, n); j++) {
							if (m + 4 > CHUNK) {
								sim_access_lines(s, buf, m, NULL);
								m = 0;
							}
							uint64_t c = (uint64_t)(base[2] + (i * n + j) * es) >> sh;
							buf[m++] = (uint64_t)(base[0] + (i * n + k) * es) >> sh;
							buf[m++] = (uint64_t)(base[1] + (k * n + j) * es) >> sh;
							buf[m++] = c;
							buf[m++] = c;
						}
	sim_access_lines(s, buf, m, NULL);
}

static int bench_row(ct_ctx *ctx, const char *label, const char *spec_text, const problem *p,
		     bool batch)
{
	sim_spec spec;
	if (sim_spec_parse(ctx, spec_text, &spec)) {
		fprintf(stderr, "sim_speed: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	sim_buffer buf[3];
	for (int b = 0; b < 3; b++)
		buf[b] = (sim_buffer){(int64_t)sizeof(double), p->n * p->n};
	sim *s = sim_new(ctx, &spec, buf, 3, 4);
	if (!s) {
		fprintf(stderr, "sim_speed: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	double t0 = now_seconds();
	if (batch)
		run_batches(s, p, spec.level[0].line);
	else
		run_calls(s, p);
	double secs = now_seconds() - t0;
	uint64_t misses[SIM_MAX_LEVELS], accesses;
	if (sim_result(s, misses, &accesses, NULL)) {
		fprintf(stderr, "sim_speed: %s\n", ct_ctx_last_message(ctx));
		sim_free(s);
		return 1;
	}
	printf("%-22s %-7s %-26s %12llu %8.3f %9.1f  ", label, batch ? "lines" : "access",
	       spec_text, (unsigned long long)accesses, secs, (double)accesses / secs / 1e6);
	for (int l = 0; l < spec.nlevels; l++)
		printf("%s%llu", l ? "/" : "", (unsigned long long)misses[l]);
	printf("\n");
	sim_free(s);
	return 0;
}

/* The slow path's worst case: uniformly random lines over a working set far larger than the
 * top array, so nearly every access goes through the hash and the tree. */
static int bench_random(ct_ctx *ctx, const char *spec_text, int64_t lines, int64_t n)
{
	enum { CHUNK = 8192 };
	uint64_t buf[CHUNK], state = 42;
	sim_spec spec;
	if (sim_spec_parse(ctx, spec_text, &spec))
		return 1;
	sim *s = sim_new(ctx, &spec, NULL, 0, 0);
	if (!s)
		return 1;
	double t0 = now_seconds();
	for (int64_t i = 0; i < n; i += CHUNK) {
		size_t m = (size_t)min64(CHUNK, n - i);
		for (size_t j = 0; j < m; j++) {
			/* splitmix64 */
			uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
			z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
			z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
			buf[j] = (z ^ (z >> 31)) % (uint64_t)lines;
		}
		sim_access_lines(s, buf, m, NULL);
	}
	double secs = now_seconds() - t0;
	uint64_t misses[SIM_MAX_LEVELS], accesses;
	int rc = sim_result(s, misses, &accesses, NULL) != CT_OK;
	if (!rc)
		printf("%-22s %-7s %-26s %12llu %8.3f %9.1f  %llu\n", "random, 2^20 lines", "lines",
		       spec_text, (unsigned long long)accesses, secs, (double)accesses / secs / 1e6,
		       (unsigned long long)misses[0]);
	sim_free(s);
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
	printf("%-22s %-7s %-26s %12s %8s %9s  %s\n", "levels", "api", "spec", "accesses",
	       "seconds", "Macc/s", "misses per level");
	int rc = 0;
	for (int batch = 0; batch < 2 && !rc; batch++)
		for (size_t r = 0; r < sizeof rows / sizeof rows[0] && !rc; r++)
			rc = bench_row(ctx, rows[r].label, rows[r].spec, &p, batch != 0);
	if (!rc)
		rc = bench_random(ctx, rows[0].spec, INT64_C(1) << 20, INT64_C(1) << 25);
	if (rc)
		fprintf(stderr, "sim_speed: %s\n", ct_ctx_last_message(ctx));
	ct_ctx_free(ctx);
	return rc;
}
