/* bench_blas3.c: cachet's triangular kernels (bench/blas3/trmm, trsm, syrk .cachet) vs OpenBLAS's strmm, strsm and ssyrk. */
#include <cachet.h>
#include <cblas.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_kernel.h"
#include "../common/bench_util.h"

/*
 * Usage: bench_blas3 [--ops trmm,trsm,syrk] [--sizes LIST] [--threads LIST] [--openblas-coretype NAME]
 *        (from the repository root)
 * For each operation, size n (default 256,512,1024,2048; multiples of 256,
 * the block of bench/blas3's kernels) and thread count
 * (default 1,2), all f32 row-major, square (M = N = K = n):
 *   trmm: C = L B (cachet, out of place) vs cblas_strmm(Left, Lower, NoTrans, NonUnit): B := L B
 *   trsm: B := L^-1 B in place (both) vs cblas_strsm(Left, Lower, NoTrans, NonUnit)
 *   syrk: C += A^T A, lower triangle (both) vs cblas_ssyrk(Lower, Trans)
 * L's diagonal is raised by n (well conditioned for trsm; the same L for all). Every call of an
 * in-place operation starts from a fresh copy of its input (memcpy); the time of that copy,
 * measured alone, is subtracted from both sides. The result of one call of each from the same
 * inputs is compared with the same operation in f64 (OpenBLAS's d-routine on the inputs
 * widened): max relative error over the written part, |got - want| / max(1, |want|), of cachet
 * and of OpenBLAS's f32 routine; a row is ok when cachet's is within the f32 tolerance or within
 * 4x OpenBLAS's own (a k-long f32 sum in order, as cachet's loops add, rounds more than
 * OpenBLAS's blocked one). Median of NMEAS measurements of >= MIN_SECONDS each, taken in
 * rounds that alternate OpenBLAS, cachet (and the copy) so both see the same host, each
 * measurement after a pause and an untimed call (settle: the other library's threads idle); GFLOP/s
 * count the triangular flops (trmm, trsm: n^2 m; syrk: n (n+1) k). OpenBLAS runs with the
 * kernel set that computes correctly and fastest here, whatever the environment says, timed
 * on the routine compared: each routine's ops run in a process of their own with a table of
 * their own (OpenBLAS reads its kernel set when it loads), since the sets' strsm differ by up
 * to 25% where their gemm is within 1% (run_per_routine).
 */

#define NMEAS 5
#define SETTLE_NS 150000000L /* 0.15 s: longer than either library's spinning (settle) */
#define MIN_SECONDS 0.2

typedef bench_entry_fn entry_fn;
typedef bench_threads_fn threads_fn;

/* The most params a kernel file may have (its values are passed as one array): a file that
 * `cachet auto` wrote has its tile params and split points too. */
#define BENCH_MAX_PARAMS 64

typedef struct problem {
	const char *op;
	int64_t n;
	float *l, *b0, *b, *c0, *c, *work; /* inputs, the in-place operand's start and copy */
	entry_fn entry;
	int64_t params[BENCH_MAX_PARAMS];
} problem;

static float *alloc_f32(int64_t count)
{
	size_t bytes = ((size_t)count * sizeof(float) + 63) / 64 * 64;
	float *p = aligned_alloc(64, bytes ? bytes : 64);
	if (p)
		memset(p, 0, bytes ? bytes : 64);
	return p;
}

/* trmm, or trmm_if: the same product written as the square nest with `if (k <= i)` (issue
 * #31's "square-with-if form", to measure what the triangular loops save). */
static bool is_trmm(const char *op)
{
	return strcmp(op, "trmm") == 0 || strcmp(op, "trmm_if") == 0;
}

/* cachet's call: trmm C = L B; trsm in place on p->work; syrk C += A^T A (A is p->l). */
static void run_cachet(const problem *p)
{
	int64_t nn = p->n * p->n;
	if (is_trmm(p->op)) {
		/* trmm(L, B, C) */
		void *const args[3] = {p->l, p->b0, p->c};
		p->entry(args, p->params);
	} else if (strcmp(p->op, "trsm") == 0) {
		memcpy(p->work, p->b0, (size_t)nn * sizeof(float));
		void *const args[2] = {p->l, p->work};
		p->entry(args, p->params);
	} else { /* syrk(A, A2, C): A read as rows and as columns (two names, so a plan can pack
	          * each side) */
		void *const args[3] = {p->l, p->l, p->c};
		p->entry(args, p->params);
	}
}

static void run_blas(const problem *p)
{
	int n = (int)p->n;
	int64_t nn = p->n * p->n;
	if (strcmp(p->op, "syrk") == 0) {
		cblas_ssyrk(CblasRowMajor, CblasLower, CblasTrans, n, n, 1.0f, p->l, n, 1.0f, p->c, n);
		return;
	}
	memcpy(p->work, p->b0, (size_t)nn * sizeof(float));
	if (is_trmm(p->op))
		cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0f, p->l, n,
		            p->work, n);
	else
		cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0f, p->l, n,
		            p->work, n);
}

static void run_copy(const problem *p)
{
	memcpy(p->work, p->b0, (size_t)(p->n * p->n) * sizeof(float));
}

/* Calls of fn that take at least MIN_SECONDS together (one call timed to find out). */
static long reps_for(void (*fn)(const problem *), const problem *p)
{
	double t0 = now();
	fn(p);
	double one = now() - t0;
	long reps = one > 0 ? (long)ceil(MIN_SECONDS / one) : 1000;
	return reps < 1 ? 1 : reps;
}

/* Seconds of one call of fn over reps calls. */
static double time_reps(void (*fn)(const problem *), const problem *p, long reps)
{
	double t0 = now();
	for (long r = 0; r < reps; r++)
		fn(p);
	return (now() - t0) / (double)reps;
}

/* Lets the threads of the function timed before go to sleep, then calls fn once untimed: on
 * 2 cores, OpenBLAS's idle workers spin for up to 2^28 cycles (its THREAD_TIMEOUT, about
 * 0.07 s here) after a call, and libgomp's spin too; a call timed right after the other
 * library's ran its first call with a core taken (trmm 2048 on 2 threads: cachet 47 ms in
 * the bench, 43 ms alone). */
static void settle(void (*fn)(const problem *), const problem *p)
{
	struct timespec ts = {0, SETTLE_NS};
	nanosleep(&ts, NULL);
	fn(p);
}

/* Median seconds of one call of each of the nf functions fn[], measured in NMEAS rounds that
 * take each in turn: the host's other tenants come and go within seconds, and interleaving
 * gives every function the same conditions (measuring one NMEAS times, then the next, made a
 * busy second fall on one side of a ratio). */
static void time_interleaved(void (*const fn[])(const problem *), int nf, const problem *p, double *out)
{
	long reps[3];
	double v[3][NMEAS];
	for (int f = 0; f < nf; f++)
		reps[f] = reps_for(fn[f], p);
	for (int i = 0; i < NMEAS; i++)
		for (int f = 0; f < nf; f++) {
			settle(fn[f], p);
			v[f][i] = time_reps(fn[f], p, reps[f]);
		}
	for (int f = 0; f < nf; f++) {
		qsort(v[f], NMEAS, sizeof *v[f], cmp_double);
		out[f] = v[f][NMEAS / 2];
	}
}

/* bench/blas3/OP.cachet at size n, compiled with OpenMP; NULL (a message printed) on error. */
static entry_fn load_kernel(ct_ctx *ctx, const char *dir, const char *op, int64_t n, int64_t *params,
                            threads_fn *set_threads, double *compile_s)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.cachet", dir, op);
	ct_kernel *k = ct_kernel_parse_file(ctx, path);
	if (!k) {
		fprintf(stderr, "bench: %s: %s (run from the repository root)\n", path, ct_ctx_last_message(ctx));
		return NULL;
	}
	char *src = NULL;
	entry_fn fn = NULL;
	bool sy = strcmp(op, "syrk") == 0;
	if (ct_kernel_set_param(k, "N", n) != CT_OK ||
	    ct_kernel_set_param(k, sy ? "K" : "M", n) != CT_OK ||
	    ct_kernel_recheck(k) != CT_OK || ct_kernel_param_count(k) > BENCH_MAX_PARAMS || !(src = ct_kernel_emit(k, NULL, NULL))) {
		fprintf(stderr, "bench: %s: %s\n", path, ct_ctx_last_message(ctx));
		goto out;
	}
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		params[i] = ct_kernel_param_value(k, i, NULL);
	ct_load_info info;
	fn = bench_load_entry(ctx, k, src, path, set_threads, &info);
	if (fn && strcmp(info.how, "compiled") == 0)
		*compile_s += info.seconds;
out:
	free(src);
	ct_kernel_free(k);
	return fn;
}

/* Max relative error of x vs the f64 ref over the lower triangle (syrk) or everything. */
static double compare(const float *x, const double *ref, int64_t n, bool lower)
{
	double worst = 0;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < (lower ? i + 1 : n); j++) {
			double w = ref[i * n + j], aw = fabs(w);
			double e = fabs((double)x[i * n + j] - w) / (aw > 1 ? aw : 1);
			if (!(e <= worst)) /* NaN counts */
				worst = isnan(e) ? INFINITY : e;
		}
	return worst;
}

/* The operation in f64 (OpenBLAS's d-routine, the inputs widened) into out: the reference. */
static int reference(const problem *p, double *out)
{
	int n = (int)p->n;
	int64_t nn = p->n * p->n;
	double *l = malloc((size_t)nn * sizeof *l);
	if (!l)
		return -1;
	for (int64_t i = 0; i < nn; i++)
		l[i] = p->l[i];
	const float *start = strcmp(p->op, "syrk") == 0 ? p->c0 : p->b0;
	for (int64_t i = 0; i < nn; i++)
		out[i] = start[i];
	if (strcmp(p->op, "syrk") == 0)
		cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, n, n, 1.0, l, n, 1.0, out, n);
	else if (is_trmm(p->op))
		cblas_dtrmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0, l, n, out, n);
	else
		cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0, l, n, out, n);
	free(l);
	return 0;
}

/* One operation, size and thread count: one row. 0 ok, 1 mismatch, -1 error. */
static int bench_one(ct_ctx *ctx, const char *dir, const char *op, int64_t n, int threads, double *compile_s)
{
	problem p = {.op = op, .n = n};
	threads_fn set_threads = NULL;
	p.entry = load_kernel(ctx, dir, op, n, p.params, &set_threads, compile_s);
	if (!p.entry)
		return -1;
	if (set_threads)
		set_threads(threads);
	openblas_set_num_threads(threads);
	int64_t nn = n * n;
	p.l = alloc_f32(nn);
	p.b0 = alloc_f32(nn);
	p.c0 = alloc_f32(nn);
	p.c = alloc_f32(nn);
	p.work = alloc_f32(nn);
	float *ref = alloc_f32(nn), *mine = alloc_f32(nn);
	double *ref64 = malloc((size_t)nn * sizeof *ref64);
	if (!p.l || !p.b0 || !p.c0 || !p.c || !p.work || !ref || !mine || !ref64) {
		fprintf(stderr, "bench: out of memory\n");
		return -1;
	}
	ct_fill_random(p.l, CT_F32, nn, 1, 0);
	for (int64_t i = 0; i < n; i++) /* well conditioned for the solve */
		p.l[i * n + i] += (float)n;
	ct_fill_random(p.b0, CT_F32, nn, 1, 1);
	ct_fill_random(p.c0, CT_F32, nn, 1, 2);
	bool sy = strcmp(op, "syrk") == 0, tm = is_trmm(op);
	/* correctness: one call of each from the same inputs */
	memcpy(p.c, p.c0, (size_t)nn * sizeof(float));
	run_cachet(&p);
	memcpy(mine, sy || tm ? p.c : p.work, (size_t)nn * sizeof(float));
	memcpy(p.c, p.c0, (size_t)nn * sizeof(float));
	run_blas(&p);
	memcpy(ref, sy ? p.c : p.work, (size_t)nn * sizeof(float));
	if (reference(&p, ref64) != 0) {
		fprintf(stderr, "bench: out of memory\n");
		return -1;
	}
	double err = compare(mine, ref64, n, sy), err_blas = compare(ref, ref64, n, sy);
	int ok = err <= ct_dtype_tolerance(CT_F32) || err <= 4 * err_blas;

	void (*const fns[3])(const problem *) = {run_blas, run_cachet, run_copy};
	double t[3] = {0, 0, 0};
	time_interleaved(fns, sy ? 2 : 3, &p, t);
	double tcopy = t[2];
	double tb = t[0] - tcopy;
	double tc = t[1] - (strcmp(op, "trsm") == 0 ? tcopy : 0);
	double flop = sy ? (double)n * (double)(n + 1) * (double)n : (double)n * (double)n * (double)n;
	double gc = flop / tc * 1e-9, gb = flop / tb * 1e-9;
	printf("%-7s %-6lld %3d %10.3f %10.3f %10.2f %10.2f %7.2f %10.2e %10.2e  %s\n", op, (long long)n, threads,
	       tc * 1e3, tb * 1e3, gc, gb, gc / gb, err, err_blas, ok ? "ok" : "MISMATCH");
	fflush(stdout);
	free(p.l);
	free(p.b0);
	free(p.c0);
	free(p.c);
	free(p.work);
	free(ref);
	free(mine);
	free(ref64);
	return ok ? 0 : 1;
}

/* The OpenBLAS routine op is compared with (trmm_if: strmm too); NULL for an unknown op. */
static const char *peer_routine(const char *op)
{
	return is_trmm(op) ? "trmm" : strcmp(op, "trsm") == 0 ? "trsm" : strcmp(op, "syrk") == 0 ? "syrk" : NULL;
}

/* The value of "--ops" in argv, or the default list. */
static const char *ops_arg(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--ops") == 0)
			return argv[i + 1];
	return "trmm,trmm_if,trsm,syrk";
}

/* ops' peer routines, in order, each once, in out (of cap); the count, or -1 (said on stderr)
 * for an unknown op. */
static int peer_routines(const char *ops, const char **out, int cap)
{
	int n = 0;
	char list[64];
	snprintf(list, sizeof list, "%s", ops);
	for (char *op = strtok(list, ","); op; op = strtok(NULL, ",")) {
		const char *r = peer_routine(op);
		if (!r) {
			fprintf(stderr, "bench: unknown op '%s' (trmm, trsm, syrk, trmm_if)\n", op);
			return -1;
		}
		int seen = 0;
		for (int i = 0; i < n; i++)
			seen |= strcmp(out[i], r) == 0;
		if (!seen && n < cap)
			out[n++] = r;
	}
	return n;
}

/* Ops of several peer routines: each routine's ops run in a process of their own (this
 * program again, --ops narrowed to them), so that each probes OpenBLAS's kernel sets on its
 * own routine (the sets' trsm differ by up to 25% where their gemm is within 1%); the
 * processes run one after the other. Returns the exit code: 0 when every one passed, 2 at
 * once on a usage error. */
static int run_per_routine(int argc, char **argv, const char **routines, int n)
{
	const char *ops = ops_arg(argc, argv);
	int failed = 0;
	for (int r = 0; r < n; r++) {
		char mine[64] = "", list[64];
		snprintf(list, sizeof list, "%s", ops);
		for (char *op = strtok(list, ","); op; op = strtok(NULL, ","))
			if (strcmp(peer_routine(op), routines[r]) == 0)
				snprintf(mine + strlen(mine), sizeof mine - strlen(mine), "%s%s", mine[0] ? "," : "", op);
		char *args[64];
		int k = 0;
		for (int i = 0; i < argc && k < 60; i++) {
			if (i > 0 && strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
				i++;
				continue;
			}
			args[k++] = argv[i];
		}
		char opt[] = "--ops";
		args[k++] = opt;
		args[k++] = mine;
		args[k] = NULL;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			execv("/proc/self/exe", args);
			_exit(127);
		}
		int status = 0, waited = pid > 0 && waitpid(pid, &status, 0) == pid;
		if (waited && WIFEXITED(status) && WEXITSTATUS(status) == 2)
			return 2; /* a usage error: the first table's process said which */
		if (!waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
		if (r + 1 < n)
			printf("\n");
	}
	printf("\n%d of %d tables (one per OpenBLAS routine, each with its peer probed on it) passed\n", n - failed, n);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	ct_threads_wait_default(); /* as the cachet CLI */
	const char *routines[4];
	int nroutines = peer_routines(ops_arg(argc, argv), routines, 4);
	if (nroutines < 0)
		return 2;
	if (nroutines > 1)
		return run_per_routine(argc, argv, routines, nroutines);
	argc = bench_openblas_at_best_for(argc, argv, nroutines == 1 ? routines[0] : NULL);
	long threads[8] = {1, 2}, sizes[8] = {256, 512, 1024, 2048};
	int nthreads = 2, nsizes = 4;
	const char *ops = "trmm,trmm_if,trsm,syrk", *dir = "bench/blas3";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			nthreads = bench_parse_list(argv[++i], threads, 8, 1, 4096);
		else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			nsizes = bench_parse_list(argv[++i], sizes, 8, 256, 8192);
		else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
			ops = argv[++i];
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else
			nthreads = 0;
		for (int s = 0; s < nsizes; s++)
			if (sizes[s] % 256)
				nsizes = 0;
		if (nthreads == 0 || nsizes == 0) {
			fprintf(stderr, "usage: bench_blas3 [--ops trmm,trmm_if,trsm,syrk] [--sizes 256,512 (multiples of 256)] "
			                "[--threads 1,2] [--dir DIR (of OP.cachet)] [--openblas-coretype NAME]\n");
			return 2;
		}
	}
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	char cpu[256] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	for (char line[512]; f && fgets(line, sizeof line, f);)
		if (strncmp(line, "model name", 10) == 0) {
			const char *c = strchr(line, ':');
			snprintf(cpu, sizeof cpu, "%.200s", c ? c + 2 : line);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	printf("triangular BLAS 3 (f32, row-major, square): cachet (%s/*.cachet, cc -O3 -march=native "
	       "-fopenmp) vs OpenBLAS %s\n",
	       dir, openblas_get_config());
	printf("cpu: %s\n", cpu);
	printf("peer: OpenBLAS, %s [loaded: %s]\n", bench_peer_note(), openblas_get_corename());
	printf("median of %d measurements of >= %.1f s each, in rounds alternating the two, each after a 0.15 s pause and "
	       "an untimed call; in-place calls restore their input, its copy "
	       "time subtracted; errors vs the f64 operation (OpenBLAS d-routine), ok: cachet's <= %.0e or "
	       "<= 4x OpenBLAS's\n\n",
	       NMEAS, MIN_SECONDS, ct_dtype_tolerance(CT_F32));
	printf("%-7s %-6s %3s %10s %10s %10s %10s %7s %10s %10s\n", "op", "n", "thr", "cachet", "openblas", "cachet",
	       "openblas", "ratio", "err", "err");
	printf("%-7s %-6s %3s %10s %10s %10s %10s %7s %10s %10s\n", "", "", "", "ms", "ms", "GFLOP/s", "GFLOP/s", "",
	       "cachet", "openblas");
	double t0 = now(), compile_s = 0;
	int bad = 0, rows = 0;
	char list[64];
	snprintf(list, sizeof list, "%s", ops);
	for (char *op = strtok(list, ","); op; op = strtok(NULL, ",")) {
		for (int h = 0; h < nthreads; h++)
			for (int i = 0; i < nsizes; i++) {
				int r = bench_one(ctx, dir, op, sizes[i], (int)threads[h], &compile_s);
				if (r < 0)
					return 1;
				bad += r;
				rows++;
			}
	}
	printf("\n%d of %d results within tolerance; total %.1f s (compiles %.1f s)\n", rows - bad, rows,
	       now() - t0, compile_s);
	ct_ctx_free(ctx);
	return bad ? 1 : 0;
}
