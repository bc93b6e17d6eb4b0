/* bench_stencil_spmd.c: the HammerBlade stencil experiment: SPMD 5-point stencil, non-cached vs cached with halo, branching vs branch-free, as a table. */
#include "cachet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_util.h"

/*
 * Usage: bench_stencil_spmd [--quick] [--threads T]   (default 2 threads;
 * waiting threads spin a bounded time, then sleep, as for the CLI)
 *
 * The 5-point stencil (i32, boundary copied) on an input whose elements
 * equal their row-major index, so the average of a point and its four
 * neighbours is the point itself: the expected output is the input, and
 * every variant is checked against it. parallelize(x, y, spmd=true) puts
 * the threads on a T x 1 grid; the tiles are one block per thread
 * (tile = n / cores). Four variants of the same kernel, measured in the
 * same run: A read in place or through a per-thread cache of its block
 * plus halo (AA = cache(A, index=xx)), each generated in the branching
 * form (per-element tests in the halo copy and the body) or branch-free
 * (CT_OPT_BRANCHING 0). Times are per call (a parallel region), the
 * best of many batches of at least 1 ms (time_calls).
 */

typedef int (*entry_fn)(void *const *args, const int64_t *params); /* 0, or 1: out of memory */
typedef void (*threads_fn)(int n);

static char *kernel_text(int64_t n, int64_t m, int64_t tx, int64_t ty, int cached)
{
	char *s = malloc(1024);
	if (!s)
		return NULL;
	snprintf(s, 1024,
	         "kernel st_spmd\nparam N = %lld, M = %lld\n"
	         "array A : i32[N, M] input\narray B : i32[N, M] output\n"
	         "for (x: N, y: M) {\n"
	         "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	         "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	         "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
	         "schedule {\n  xx, yy = tile(x=%lld, y=%lld)\n  reorder(x, y, xx, yy)\n}\n"
	         "plan {\n%s  parallelize(x, y, spmd=true)\n}\n",
	         (long long)n, (long long)m, (long long)tx, (long long)ty, cached ? "  AA = cache(A, index=xx)\n" : "");
	return s;
}

/* Compile one variant; NULL on error (printed). */
static entry_fn load(ct_ctx *ctx, const char *text, int branching, int threads)
{
	ct_ctx_set_option(ctx, CT_OPT_BRANCHING, branching);
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "bench.cachet");
	size_t len = 0;
	char *src = k ? ct_kernel_emit(k, NULL, &len) : NULL;
	ct_kernel_free(k);
	if (!src) {
		fprintf(stderr, "generate: %s\n", ct_ctx_last_message(ctx));
		return NULL;
	}
	ct_compile_options co;
	ct_compile_options_init(&co);
	co.openmp = 1;
	ct_module *m = NULL;
	ct_status st = ct_module_load(ctx, src, len, &co, &m, NULL);
	free(src);
	if (st) {
		fprintf(stderr, "compile: %s\n", ct_ctx_last_message(ctx));
		return NULL;
	}
	void *e = ct_module_symbol(m, "cachet_st_spmd_entry"), *t = ct_module_symbol(m, "cachet_st_spmd_set_threads");
	if (!e || !t)
		return NULL;
	entry_fn f;
	threads_fn tf;
	memcpy(&f, &e, sizeof f);
	memcpy(&tf, &t, sizeof tf);
	tf(threads);
	return f;
}

/* Seconds per call of f on args: the best of many short batches. On a
 * loaded machine a batch in which a thread was descheduled is ruined (a
 * time slice is milliseconds, a small call microseconds), so the minimum
 * over batches is what the code itself costs; at least 5 batches, up to
 * 200 or total_s seconds. */
static double time_calls(entry_fn f, void *const *args, double batch_s, double total_s)
{
	int64_t params[1] = {0};
	f(args, params); /* warm */
	int64_t reps = 1;
	for (;;) {
		double t0 = now();
		for (int64_t r = 0; r < reps; r++)
			f(args, params);
		double t = now() - t0;
		if (t >= batch_s || reps > (1 << 24))
			break;
		reps *= t > 0 ? (int64_t)(batch_s / t) + 1 : 16;
	}
	double best = 1e300, start = now();
	for (int b = 0; b < 200 && (b < 5 || now() - start < total_s); b++) {
		double t0 = now();
		for (int64_t r = 0; r < reps; r++)
			f(args, params);
		double v = (now() - t0) / (double)reps;
		best = v < best ? v : best;
	}
	return best;
}

typedef struct config {
	const char *label;
	int64_t n, m, tx, ty; /* overall size and per-thread block */
} config;

int main(int argc, char **argv)
{
	int threads = 2, quick = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
	}
	if (threads < 1)
		threads = 1;
	/* as the CLI and bench_gemm: waiting threads spin a bounded time, then
	 * sleep (set OMP_WAIT_POLICY or GOMP_SPINCOUNT to override) */
	ct_threads_wait_default();
	config cf[7];
	int nc = 0;
	const int64_t per[4] = {4, 8, 16, 34}, whole[3] = {256, 1024, 4096};
	for (int i = 0; i < 4; i++)
		cf[nc++] = (config){"per thread", per[i] * threads, per[i], per[i], per[i]};
	for (int i = 0; i < (quick ? 2 : 3); i++)
		cf[nc++] = (config){"overall", whole[i], whole[i], (whole[i] + threads - 1) / threads, whole[i]};
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	double batch = 0.001, total = quick ? 0.1 : 0.4;
	printf("stencil_spmd: 5-point i32 stencil, SPMD on %d threads (grid %d x 1), input = row-major index, output checked = input\n",
	       threads, threads);
	printf("times per call in microseconds; nc = A in place, c = per-thread cache of the block + halo;\n"
	       "br = branching form, bf = branch-free (CT_OPT_BRANCHING 0)\n\n");
	printf("%-10s %-11s %-11s %10s %10s %10s %10s %9s %9s %9s %9s\n", "size", "per thread", "tile+halo", "nc br",
	       "nc bf", "c br", "c bf", "c/nc bf", "c/nc br", "bf x nc", "bf x c");
	int bad = 0;
	const char *crossover = NULL;
	for (int c = 0; c < nc; c++) {
		int64_t n = cf[c].n, m = cf[c].m, count = n * m;
		int32_t *a = malloc((size_t)count * sizeof *a), *b = malloc((size_t)count * sizeof *b);
		if (!a || !b)
			return 1;
		for (int64_t i = 0; i < count; i++)
			a[i] = (int32_t)i;
		double t[4]; /* nc br, nc bf, c br, c bf */
		for (int v = 0; v < 4 && !bad; v++) {
			char *text = kernel_text(n, m, cf[c].tx, cf[c].ty, v >= 2);
			entry_fn f = text ? load(ctx, text, v % 2 == 0, threads) : NULL;
			free(text);
			if (!f) {
				bad = 1;
				break;
			}
			memset(b, 0, (size_t)count * sizeof *b);
			void *args[2] = {a, b};
			t[v] = time_calls(f, args, batch, total) * 1e6;
			if (memcmp(a, b, (size_t)count * sizeof *a) != 0) {
				fprintf(stderr, "variant %d at %lldx%lld: output differs from the input\n", v, (long long)n,
				        (long long)m);
				bad = 1;
			}
		}
		free(a);
		free(b);
		if (bad)
			break;
		char size[48], pt[48], th[48];
		snprintf(size, sizeof size, "%lldx%lld", (long long)n, (long long)m);
		snprintf(pt, sizeof pt, "%lldx%lld", (long long)cf[c].tx, (long long)cf[c].ty);
		snprintf(th, sizeof th, "%lldx%lld", (long long)cf[c].tx + 2, (long long)cf[c].ty + 2);
		printf("%-10s %-11s %-11s %10.2f %10.2f %10.2f %10.2f %9.2f %9.2f %9.2f %9.2f\n", size, pt, th, t[0], t[1],
		       t[2], t[3], t[1] / t[3], t[0] / t[2], t[0] / t[1], t[2] / t[3]);
		if (t[3] * 1.05 < t[1]) { /* beyond the noise of a shared machine */
			static char cross[1024];
			size_t used = strlen(cross);
			snprintf(cross + used, sizeof cross - used, "%s%s (block %s, %.2fx)", used ? ", " : "", size, pt,
			         t[1] / t[3]);
			crossover = cross;
		}
	}
	if (!bad)
		printf("\nc/nc = non-cached time / cached time (> 1: the cache pays off); bf x = branching / branch-free.\n"
		       "sizes where the cached branch-free variant beats the non-cached one by more than 5%%: %s\n",
		       crossover ? crossover : "none");
	ct_ctx_free(ctx);
	return bad;
}
