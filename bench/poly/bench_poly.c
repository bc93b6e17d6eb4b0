/* bench_poly.c: the PolyBench-style suite (bench/poly/kernels): each kernel's plain nest under gcc and Polly, its BLAS formulation, and cachet auto, timed and verified, as a table.
 *
 * For each kernel (a .cachet file with no schedule and no plan) and each
 * thread count, every peer runs in a child process of its own (so the OpenMP
 * runtimes of gcc and clang, OpenBLAS's threads and the modules never meet):
 *   gcc     the plain nest as cachet emits it (ct_kernel_emit), gcc -O3 -march=native;
 *           with T > 1 threads also again with -ftree-parallelize-loops=T (peer gcc-par,
 *           gcc's own auto-parallelizer); the table shows the faster
 *   polly   the same C, clang -O3 -march=native -mllvm -polly, and again with
 *           -mllvm -polly-vectorizer=stripmine (peer polly-sm); with T > 1 also
 *           -mllvm -polly-parallel -fopenmp (OMP_NUM_THREADS=T); the table shows the faster
 *   blas    the kernel's BLAS formulation, where one exists (not for the stencils), OpenBLAS
 *           at its best for that kernel: run once with the library's own pick of kernel set
 *           and once with each x86-64 set (OPENBLAS_CORETYPE; OPENBLAS_L2_SIZE removed),
 *           each in a child that loads OpenBLAS itself (dlopen: the library reads the
 *           variables when it loads); the table shows the fastest correct one. The sets
 *           differ per routine (on a Zen 4 EPYC dgemv with A transposed by 20%, dtrmm by
 *           6%), so one pick for the whole suite would flatter some ratios
 *   auto    `cachet auto FILE --threads T` (model only), run through ct_kernel_compile
 *   auto-b  `cachet auto FILE --threads T --budget S` (measured), the same way
 *   halide  the kernel written in Halide (halide/poly_halide.cpp: every kernel but the triangular
 *           ones and seidel2d), scheduled by each of Halide 14's
 *           autoschedulers (Mullapudi2016, Li2018, Adams2019), JIT; the table shows the
 *           fastest correct one
 * A peer's inputs are the same deterministic pseudo-random data (ct_fill_random).
 * Verification: at the small size of each kernel (its "# small:" line) every
 * peer's outputs are compared with cachet's reference interpreter (the
 * per-type tolerance, ct_dtype_tolerance); at the default (PolyBench LARGE)
 * sizes every peer's outputs are compared with the gcc plain nest's (relative
 * tolerance LARGE_TOL: the peers may reassociate sums), after every peer ran and
 * was verified at the small size too. A wrong result is
 * printed as WRONG, left out of the ratios, and makes the exit status 1.
 *
 * Usage: bench_poly [--quick] [--small] [--only K1,K2] [--threads 1,2] [--reps N]
 *                   [--budget S] [--dir DIR] [--cachet PATH] [--polly-cc CC]
 *                   [--halide-lib SO | --no-halide]
 *   --quick   small sizes only, the kernels gemm and jacobi2d (unless --only), 1 rep,
 *             auto's budget 2 s: a smoke test of the harness (make check runs it)
 *   --small   small sizes only, every kernel
 * Time: the median of --reps runs (default 3; more, up to 64, while they add up to less than
 * 0.3 s), each on fresh inputs, after an untimed run when the kernel has under 2 GFLOP.
 * Ratios are speedups: time of the peer / time of cachet auto (> 1: cachet is faster). */
#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/bench_util.h"
#include "cachet.h"

enum { MAX_ARRAYS = 16, MAX_KERNELS = 64, MAX_THREADS = 8, MAX_REPS = 64 };
/* A kernel below this many flops gets an untimed run first. */
#define WARM_FLOPS 2e9
/* Runs shorter than this in total are repeated (up to MAX_REPS) to reach it. */
#define MIN_SECONDS 0.3
/* Relative tolerance between peers at the default sizes (they may reassociate sums). */
#define LARGE_TOL 1e-9

typedef enum peer {
	P_GCC, P_POLLY, P_BLAS, P_AUTO, P_AUTO_B, P_HAL_M, P_HAL_L, P_HAL_A, P_POLLY_SM, P_GCC_PAR,
	P_BLAS_HSW, P_BLAS_SKX, P_BLAS_CPX, P_BLAS_SPR, P_BLAS_ZEN, N_PEERS
} peer;
static const char *const PEER_NAME[N_PEERS] = {"gcc",        "polly",        "blas",         "auto",
                                               "auto-b",     "halide-m16",   "halide-l18",   "halide-a19",
                                               "polly-sm",   "gcc-par",      "blas-haswell", "blas-skylakex",
                                               "blas-cooperlake", "blas-sapphirerapids", "blas-zen"};
/* Each BLAS peer's OpenBLAS kernel set, P_BLAS's first (OPENBLAS_CORETYPE; "own": the library's
 * own pick, the variable removed), as the table's (blas's) column names them. */
static const char *const BLAS_SET[6] = {"own", BENCH_OPENBLAS_SETS};
/* Each Halide peer's autoscheduler (poly_halide.so). */
static const char *const HALIDE_SCHED[3] = {"Mullapudi2016", "Li2018", "Adams2019"};
/* The table's columns: the first five peers, then the best Halide peer. */
enum { P_HALIDE = P_HAL_M, N_COLS = P_HALIDE + 1 };
static const char *const COL_NAME[N_COLS] = {"gcc", "polly", "blas", "auto", "auto-b", "halide"};

/* What the options say. */
typedef struct options {
	int quick, small, reps, nthreads, threads[MAX_THREADS];
	double budget;
	const char *only, *dir, *cachet, *polly_cc, *halide_lib;
	int *blas_unknown; /* [N_PEERS]: a BLAS peer whose kernel set this OpenBLAS does not know */
} options;

/* One kernel at one size: its arrays' pristine data. */
typedef struct suite_kernel {
	char path[512], name[64], small[512]; /* small: the "-D N=.. -D M=.." of the file */
	char defs[512];                       /* the -D words of the size measured now */
	ct_ctx *ctx;
	ct_kernel *k;
	int narr;
	size_t bytes[MAX_ARRAYS];
	void *init[MAX_ARRAYS]; /* NULL for a temp */
	void *ref[MAX_ARRAYS];  /* the reference outputs (interpreter or gcc), NULL for inputs/temps */
	double flops;
} suite_kernel;

/* One peer's measurement. */
typedef struct result {
	int state; /* 0 not run, 1 ok, -1 failed (why), -2 wrong result */
	double seconds, err, auto_seconds;
	char why[160];
} result;

/* Memory shared with a child: its outputs, its time and its message. */
typedef struct shared {
	void *out[MAX_ARRAYS];
	double *seconds;
	char *why;
} shared;

/* ------------------------------------------------------------------ kernels */

static int is_written(ct_role r) { return r == CT_OUTPUT || r == CT_INOUT; }

/* Parses "-D A=1 -D B=2" into k's params and rechecks; 0 on success. */
static int apply_defs(ct_kernel *k, const char *defs)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", defs);
	for (char *w = strtok(buf, " \t"); w; w = strtok(NULL, " \t")) {
		if (strcmp(w, "-D") == 0)
			continue;
		char *eq = strchr(w, '=');
		if (!eq)
			return -1;
		*eq = 0;
		if (ct_kernel_set_param(k, w, strtoll(eq + 1, NULL, 10)) != CT_OK)
			return -1;
	}
	return ct_kernel_recheck(k) == CT_OK ? 0 : -1;
}

/* Reads the file's "# small: ..." line into small (cap bytes); 0 when found. */
static int read_small(const char *path, char *small, size_t cap)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int found = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "# small: ", 9) == 0) {
			line[strcspn(line, "\n")] = 0;
			snprintf(small, cap, "%.500s", line + 9);
			found = 0;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

static void kernel_release(suite_kernel *s)
{
	for (int i = 0; i < s->narr; i++) {
		free(s->init[i]);
		free(s->ref[i]);
		s->init[i] = s->ref[i] = NULL;
	}
	ct_kernel_free(s->k);
	ct_ctx_free(s->ctx);
	s->k = NULL;
	s->ctx = NULL;
}

/* Loads s->path at the small size (small = 1) or its default sizes and fills its inputs. */
static int kernel_load(suite_kernel *s, int small)
{
	s->ctx = ct_ctx_new();
	s->k = s->ctx ? ct_kernel_parse_file(s->ctx, s->path) : NULL;
	if (!s->k) {
		fprintf(stderr, "bench_poly: %s: %s\n", s->path, s->ctx ? ct_ctx_last_message(s->ctx) : "no memory");
		return -1;
	}
	snprintf(s->name, sizeof s->name, "%s", ct_kernel_name(s->k));
	snprintf(s->defs, sizeof s->defs, "%s", small ? s->small : "");
	if (small && apply_defs(s->k, s->small) != 0) {
		fprintf(stderr, "bench_poly: %s: bad '# small:' line: %s\n", s->path, s->small);
		return -1;
	}
	s->narr = ct_kernel_array_count(s->k);
	if (s->narr > MAX_ARRAYS)
		return -1;
	s->flops = ct_kernel_flops(s->k);
	for (int i = 0; i < s->narr; i++) {
		ct_dtype t = ct_kernel_array_dtype(s->k, i);
		int64_t n = ct_kernel_array_elements(s->k, i);
		s->bytes[i] = (size_t)n * ct_dtype_size(t);
		s->init[i] = s->ref[i] = NULL;
		if (ct_kernel_array_role(s->k, i) == CT_TEMP)
			continue;
		s->init[i] = malloc(s->bytes[i] ? s->bytes[i] : 1);
		if (!s->init[i])
			return -1;
		ct_fill_random(s->init[i], t, n, 20261128, (uint64_t)i);
	}
	return 0;
}

/* The reference outputs from cachet's interpreter (unscheduled order). */
static int reference_interp(suite_kernel *s)
{
	void *bufs[MAX_ARRAYS] = {0};
	for (int i = 0; i < s->narr; i++) {
		if (!s->init[i])
			continue;
		bufs[i] = malloc(s->bytes[i] ? s->bytes[i] : 1);
		if (!bufs[i])
			return -1;
		memcpy(bufs[i], s->init[i], s->bytes[i]);
	}
	ct_looptree *t = ct_kernel_lower(s->k, 0);
	int rc = t && ct_interp_run(t, bufs) == CT_OK ? 0 : -1;
	ct_looptree_free(t);
	for (int i = 0; i < s->narr; i++) {
		if (bufs[i] && is_written(ct_kernel_array_role(s->k, i)))
			s->ref[i] = bufs[i];
		else
			free(bufs[i]);
	}
	return rc;
}

/* ------------------------------------------------------------------ BLAS formulations */

/* Buffer of the array called name (the child's work copy), or NULL. */
static double *arr(const suite_kernel *s, void **work, const char *name)
{
	for (int i = 0; i < s->narr; i++)
		if (strcmp(ct_kernel_array_name(s->k, i), name) == 0)
			return work[i];
	return NULL;
}

/* Value of the param called name. */
static int par(const suite_kernel *s, const char *name)
{
	for (int i = 0; i < ct_kernel_param_count(s->k); i++)
		if (strcmp(ct_kernel_param_name(s->k, i), name) == 0) {
			int set = 0;
			return (int)ct_kernel_param_value(s->k, i, &set);
		}
	return 0;
}

/* 1 when the kernel has a BLAS formulation below. */
static int has_blas(const char *name)
{
	static const char *const WITH[] = {"gemm", "mm2", "mm3", "gemver", "gesummv", "atax", "bicg",
	                                   "mvt", "doitgen", "syrk", "syr2k", "covariance", "two_index", "trmm"};
	for (size_t i = 0; i < sizeof WITH / sizeof *WITH; i++)
		if (strcmp(name, WITH[i]) == 0)
			return 1;
	return 0;
}

/* Scratch for the BLAS formulations' intermediates (the kernels' temps). */
static double *scratch(double **slot, size_t n)
{
	if (!*slot)
		*slot = calloc(n ? n : 1, sizeof(double));
	return *slot;
}

#define RM CblasRowMajor
#define NT CblasNoTrans
#define TR CblasTrans

/* The OpenBLAS routines the BLAS formulations call, loaded by a BLAS peer's child (dlopen:
 * this program does not link OpenBLAS, so each child loads it under its own kernel set). */
typedef struct blas_lib {
	__typeof__(cblas_dgemm) *dgemm;
	__typeof__(cblas_dgemv) *dgemv;
	__typeof__(cblas_dger) *dger;
	__typeof__(cblas_daxpy) *daxpy;
	__typeof__(cblas_dsyrk) *dsyrk;
	__typeof__(cblas_dtrmm) *dtrmm;
	__typeof__(cblas_dsyr2k) *dsyr2k;
	__typeof__(openblas_set_num_threads) *set_num_threads;
	__typeof__(openblas_get_corename) *get_corename;
} blas_lib;

/* 1 when p is one of the BLAS peers (the library's own kernel set, or one named). */
static int is_blas_peer(peer p)
{
	return p == P_BLAS || (p >= P_BLAS_HSW && p <= P_BLAS_ZEN);
}

/* Puts symbol name of h into the function pointer at slot (of size bytes); 0 when found. */
static int blas_sym(void *h, const char *name, void *slot, size_t size)
{
	void *f = dlsym(h, name);
	if (!f || size != sizeof f)
		return -1;
	memcpy(slot, &f, size);
	return 0;
}

/* Loads OpenBLAS into lib with peer p's kernel set (OPENBLAS_CORETYPE set or removed,
 * OPENBLAS_L2_SIZE removed), on threads threads; 0 when loaded, else a message in why
 * (a set the library does not know: it would run another). */
static int blas_load(peer p, int threads, blas_lib *lib, char *why, size_t cap)
{
	const char *set = p == P_BLAS ? NULL : BLAS_SET[p - P_BLAS_HSW + 1];
	if (set)
		setenv("OPENBLAS_CORETYPE", set, 1);
	else
		unsetenv("OPENBLAS_CORETYPE");
	unsetenv("OPENBLAS_L2_SIZE");
	void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, cap, "dlopen libopenblas.so.0: %.100s", dlerror());
		return -1;
	}
#define BLAS_SYM(field, name) (blas_sym(h, name, &lib->field, sizeof lib->field) == 0)
	if (!(BLAS_SYM(dgemm, "cblas_dgemm") && BLAS_SYM(dgemv, "cblas_dgemv") && BLAS_SYM(dger, "cblas_dger") &&
	      BLAS_SYM(daxpy, "cblas_daxpy") && BLAS_SYM(dsyrk, "cblas_dsyrk") && BLAS_SYM(dtrmm, "cblas_dtrmm") &&
	      BLAS_SYM(dsyr2k, "cblas_dsyr2k") && BLAS_SYM(set_num_threads, "openblas_set_num_threads") &&
	      BLAS_SYM(get_corename, "openblas_get_corename"))) {
		snprintf(why, cap, "libopenblas.so.0 lacks a routine");
		return -1;
	}
#undef BLAS_SYM
	const char *core = lib->get_corename();
	if (set && (!core || strcasecmp(core, set) != 0)) {
		snprintf(why, cap, "kernel set %s not known to this OpenBLAS (ran as %s)", set, core ? core : "?");
		return -1;
	}
	lib->set_num_threads(threads);
	return 0;
}

/* The kernel computed with (Open)BLAS calls (b's) on the work buffers; tmp holds two scratch
 * buffers kept across repetitions (their allocation is not timed). 0 when done. */
static int blas_run(const suite_kernel *s, const blas_lib *b, void **w, double **tmp)
{
	const char *k = s->name;
	if (strcmp(k, "gemm") == 0) {
		int ni = par(s, "NI"), nj = par(s, "NJ"), nk = par(s, "NK");
		b->dgemm(RM, NT, NT, ni, nj, nk, 1.5, arr(s, w, "A"), nk, arr(s, w, "B"), nj, 1.2,
		         arr(s, w, "C"), nj);
	} else if (strcmp(k, "mm2") == 0) {
		int ni = par(s, "NI"), nj = par(s, "NJ"), nk = par(s, "NK"), nl = par(s, "NL");
		double *t = scratch(&tmp[0], (size_t)ni * nj);
		if (!t)
			return -1;
		b->dgemm(RM, NT, NT, ni, nj, nk, 1.5, arr(s, w, "A"), nk, arr(s, w, "B"), nj, 0.0, t, nj);
		b->dgemm(RM, NT, NT, ni, nl, nj, 1.0, t, nj, arr(s, w, "C"), nl, 1.2, arr(s, w, "D"), nl);
	} else if (strcmp(k, "mm3") == 0) {
		int ni = par(s, "NI"), nj = par(s, "NJ"), nk = par(s, "NK"), nl = par(s, "NL"),
		    nm = par(s, "NM");
		double *e = scratch(&tmp[0], (size_t)ni * nj), *f = scratch(&tmp[1], (size_t)nj * nl);
		if (!e || !f)
			return -1;
		b->dgemm(RM, NT, NT, ni, nj, nk, 1.0, arr(s, w, "A"), nk, arr(s, w, "B"), nj, 0.0, e, nj);
		b->dgemm(RM, NT, NT, nj, nl, nm, 1.0, arr(s, w, "C"), nm, arr(s, w, "D"), nl, 0.0, f, nl);
		b->dgemm(RM, NT, NT, ni, nl, nj, 1.0, e, nj, f, nl, 0.0, arr(s, w, "G"), nl);
	} else if (strcmp(k, "gemver") == 0) {
		int n = par(s, "N");
		double *a = arr(s, w, "A"), *x = arr(s, w, "x");
		b->dger(RM, n, n, 1.0, arr(s, w, "u1"), 1, arr(s, w, "v1"), 1, a, n);
		b->dger(RM, n, n, 1.0, arr(s, w, "u2"), 1, arr(s, w, "v2"), 1, a, n);
		b->dgemv(RM, TR, n, n, 1.2, a, n, arr(s, w, "y"), 1, 1.0, x, 1);
		b->daxpy(n, 1.0, arr(s, w, "z"), 1, x, 1);
		b->dgemv(RM, NT, n, n, 1.5, a, n, x, 1, 1.0, arr(s, w, "w"), 1);
	} else if (strcmp(k, "gesummv") == 0) {
		int n = par(s, "N");
		double *x = arr(s, w, "x"), *y = arr(s, w, "y");
		b->dgemv(RM, NT, n, n, 1.5, arr(s, w, "A"), n, x, 1, 0.0, y, 1);
		b->dgemv(RM, NT, n, n, 1.2, arr(s, w, "B"), n, x, 1, 1.0, y, 1);
	} else if (strcmp(k, "atax") == 0) {
		int m = par(s, "M"), n = par(s, "N");
		double *a = arr(s, w, "A"), *t = scratch(&tmp[0], (size_t)m);
		if (!t)
			return -1;
		b->dgemv(RM, NT, m, n, 1.0, a, n, arr(s, w, "x"), 1, 0.0, t, 1);
		b->dgemv(RM, TR, m, n, 1.0, a, n, t, 1, 0.0, arr(s, w, "y"), 1);
	} else if (strcmp(k, "bicg") == 0) {
		int m = par(s, "M"), n = par(s, "N");
		double *a = arr(s, w, "A");
		b->dgemv(RM, TR, n, m, 1.0, a, m, arr(s, w, "r"), 1, 0.0, arr(s, w, "s"), 1);
		b->dgemv(RM, NT, n, m, 1.0, a, m, arr(s, w, "p"), 1, 0.0, arr(s, w, "q"), 1);
	} else if (strcmp(k, "mvt") == 0) {
		int n = par(s, "N");
		double *a = arr(s, w, "A");
		b->dgemv(RM, NT, n, n, 1.0, a, n, arr(s, w, "y1"), 1, 1.0, arr(s, w, "x1"), 1);
		b->dgemv(RM, TR, n, n, 1.0, a, n, arr(s, w, "y2"), 1, 1.0, arr(s, w, "x2"), 1);
	} else if (strcmp(k, "doitgen") == 0) {
		int nq = par(s, "NQ"), nr = par(s, "NR"), np = par(s, "NP");
		size_t rows = (size_t)nr * nq;
		double *a = arr(s, w, "A"), *t = scratch(&tmp[0], rows * np);
		if (!t)
			return -1;
		b->dgemm(RM, NT, NT, (int)rows, np, np, 1.0, a, np, arr(s, w, "C4"), np, 0.0, t, np);
		memcpy(a, t, rows * np * sizeof *a);
	} else if (strcmp(k, "syrk") == 0) {
		int m = par(s, "M"), n = par(s, "N");
		b->dsyrk(RM, CblasLower, NT, n, m, 1.5, arr(s, w, "A"), m, 1.2, arr(s, w, "C"), n);
	} else if (strcmp(k, "trmm") == 0) {
		int m = par(s, "M"), n = par(s, "N");
		b->dtrmm(RM, CblasLeft, CblasLower, CblasTrans, CblasUnit, m, n, 1.5, arr(s, w, "A"), m,
		         arr(s, w, "B"), n);
	} else if (strcmp(k, "syr2k") == 0) {
		int m = par(s, "M"), n = par(s, "N");
		b->dsyr2k(RM, CblasLower, NT, n, m, 1.5, arr(s, w, "A"), m, arr(s, w, "B"), m, 1.2,
		          arr(s, w, "C"), n);
	} else if (strcmp(k, "covariance") == 0) {
		int m = par(s, "M"), n = par(s, "N");
		double *d = arr(s, w, "data"), *mean = arr(s, w, "mean");
		for (int j = 0; j < m; j++)
			mean[j] = 0;
		for (int i = 0; i < n; i++) /* the mean and the centring are O(N M): plain loops */
			for (int j = 0; j < m; j++)
				mean[j] += d[(size_t)i * m + j];
		for (int j = 0; j < m; j++)
			mean[j] /= n;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < m; j++)
				d[(size_t)i * m + j] -= mean[j];
		b->dgemm(RM, TR, NT, m, m, n, 1.0 / (n - 1), d, m, d, m, 0.0, arr(s, w, "cov"), m);
	} else if (strcmp(k, "two_index") == 0) {
		int v = par(s, "V"), n = par(s, "N");
		double *t = scratch(&tmp[0], (size_t)v * n);
		if (!t)
			return -1;
		b->dgemm(RM, TR, NT, v, n, n, 1.0, arr(s, w, "C1"), v, arr(s, w, "A"), n, 0.0, t, n);
		b->dgemm(RM, NT, NT, v, v, n, 1.0, t, n, arr(s, w, "C2"), v, 0.0, arr(s, w, "B"), v);
	} else {
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ running one peer in a child */

typedef int (*entry_fn)(void *const *args, const int64_t *params);

/* The child's callable: a module's entry, a ct_callable (auto), or BLAS. */
typedef struct runner {
	entry_fn entry;
	ct_callable *callable;
	int blas;
	blas_lib lib;
	double *tmp[2];
	void *halide;                /* poly_halide.so's handle */
	int (*halide_run)(void *h);
	const char *(*halide_error)(void *h);
} runner;

/* Compiles the plain nest of s with cc and flags into r->entry; message in why. */
static int prepare_plain(suite_kernel *s, peer p, int threads, const char *polly_cc, runner *r,
                         char *why, size_t cap)
{
	char par_flag[64];
	snprintf(par_flag, sizeof par_flag, "-ftree-parallelize-loops=%d", threads);
	const char *gcc_flags[] = {par_flag}; /* gcc-par: gcc's auto-parallelizer */
	/* Polly, then (polly-sm) its strip-mining vectorizer, then (T > 1) its OpenMP code */
	const char *polly_flags[6] = {"-mllvm", "-polly"};
	int npolly = 2;
	if (p == P_POLLY_SM) {
		polly_flags[npolly++] = "-mllvm";
		polly_flags[npolly++] = "-polly-vectorizer=stripmine";
	}
	if (threads > 1) {
		polly_flags[npolly++] = "-mllvm";
		polly_flags[npolly++] = "-polly-parallel";
	}
	ct_compile_options o;
	ct_compile_options_init(&o);
	int gcc = p == P_GCC || p == P_GCC_PAR;
	o.cc = gcc ? "gcc" : polly_cc;
	o.openmp = p != P_GCC && threads > 1;
	o.flags = gcc ? gcc_flags : polly_flags;
	o.nflags = gcc ? (p == P_GCC_PAR) : npolly;
	size_t len = 0;
	char *src = ct_kernel_emit(s->k, "host", &len);
	ct_module *m = NULL;
	if (!src || ct_module_load(s->ctx, src, len, &o, &m, NULL) != CT_OK) {
		snprintf(why, cap, "%s", ct_ctx_last_message(s->ctx));
		free(src);
		return -1;
	}
	free(src);
	char sym[160];
	snprintf(sym, sizeof sym, "cachet_%s_entry", s->name);
	r->entry = (entry_fn)(uintptr_t)ct_module_symbol(m, sym);
	if (!r->entry) {
		snprintf(why, cap, "no symbol %.100s", sym);
		return -1;
	}
	return 0;
}

/* Compiles cachet auto's file (auto_path) with threads into r->callable. */
static int prepare_auto(suite_kernel *s, const char *auto_path, int threads, runner *r, char *why,
                        size_t cap)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ctx ? ct_kernel_parse_file(ctx, auto_path) : NULL;
	if (!k || ct_ctx_set_option(ctx, CT_OPT_THREADS, threads) != CT_OK ||
	    apply_defs(k, s->defs) != 0 || !(r->callable = ct_kernel_compile(k))) {
		snprintf(why, cap, "%.100s: %s", auto_path, ctx ? ct_ctx_last_message(ctx) : "no memory");
		return -1;
	}
	return 0; /* k and ctx live until the child exits */
}

/* 1 when poly_halide.so writes the kernel (halide/poly_halide.cpp, builder_of). */
static int has_halide(const char *name)
{
	static const char *const WITH[] = {"gemm",    "mm2",      "mm3",      "two_index", "doitgen",
	                                   "covariance", "gesummv", "atax",   "bicg",      "mvt",
	                                   "gemver",  "jacobi1d", "jacobi2d", "heat3d",    "fdtd2d"};
	for (size_t i = 0; i < sizeof WITH / sizeof *WITH; i++)
		if (strcmp(name, WITH[i]) == 0)
			return 1;
	return 0;
}

/* Loads the Halide peer of s from lib and has it JIT-compile the kernel with its
 * autoscheduler on the work buffers w. */
static int prepare_halide(suite_kernel *s, peer p, int threads, const char *lib, void **w, runner *r,
                          char *why, size_t cap)
{
	char env[16];
	snprintf(env, sizeof env, "%d", threads);
	setenv("HL_NUM_THREADS", env, 1);
	void *so = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	typedef void *(*new_fn)(const char *, const char *, int, void *const *, const int64_t *, char *,
	                        size_t);
	new_fn make = so ? (new_fn)(uintptr_t)dlsym(so, "poly_halide_new") : NULL;
	r->halide_run = so ? (int (*)(void *))(uintptr_t)dlsym(so, "poly_halide_run") : NULL;
	r->halide_error = so ? (const char *(*)(void *))(uintptr_t)dlsym(so, "poly_halide_error") : NULL;
	if (!make || !r->halide_run || !r->halide_error) {
		snprintf(why, cap, "%s: %s", lib, so ? "no poly_halide_new" : dlerror());
		return -1;
	}
	int64_t params[MAX_ARRAYS];
	int np = ct_kernel_param_count(s->k);
	for (int i = 0; i < np && i < MAX_ARRAYS; i++) {
		int set = 0;
		params[i] = ct_kernel_param_value(s->k, i, &set);
	}
	r->halide = make(s->name, HALIDE_SCHED[p - P_HAL_M], threads, w, params, why, cap);
	return r->halide ? 0 : -1;
}

/* One run of the runner on the work buffers (w: one slot per array, NULL for temps). */
static int runner_call(const suite_kernel *s, runner *r, void **w)
{
	if (r->entry)
		return r->entry(w, NULL) == 0 ? 0 : -1;
	if (r->blas)
		return blas_run(s, &r->lib, w, r->tmp);
	if (r->halide)
		return r->halide_run(r->halide);
	void *args[MAX_ARRAYS];
	int n = 0;
	for (int i = 0; i < s->narr; i++)
		if (s->init[i])
			args[n++] = w[i];
	return ct_callable_call(r->callable, args, NULL) == CT_OK ? 0 : -1;
}

/* Test hook (tests/cli/poly_bench.sh): CACHET_BENCH_POLY_INJECT=PEER:KERNEL makes that
 * peer's child corrupt the first element of the kernel's first written array, so the
 * verification must report it. */
static void inject(const suite_kernel *s, peer p, shared *sh)
{
	const char *spec = getenv("CACHET_BENCH_POLY_INJECT");
	char want[200];
	snprintf(want, sizeof want, "%s:%s", PEER_NAME[p], s->name);
	/* "blas:K" is every BLAS peer's (kernel sets): the column shows the fastest correct one */
	if (is_blas_peer(p))
		snprintf(want, sizeof want, "%s:%s", PEER_NAME[P_BLAS], s->name);
	if (!spec || strcmp(spec, want) != 0)
		return;
	for (int i = 0; i < s->narr; i++)
		if (sh->out[i] && ct_kernel_array_dtype(s->k, i) == CT_F64) {
			*(double *)sh->out[i] += 1.0;
			return;
		}
}

/* The child: prepares peer p, runs it reps times on fresh copies of the inputs, leaves the
 * median time and the outputs in sh. Never returns. */
static void child(suite_kernel *s, peer p, int threads, int reps, const options *opt,
                  const char *auto_path, shared *sh)
{
	char env[16];
	snprintf(env, sizeof env, "%d", threads);
	setenv("OMP_NUM_THREADS", env, 1);
	/* the table is the parent's stdout: what a peer prints (Halide's autoschedulers print
	 * their search on stderr) goes nowhere; a child's failure comes back in sh->why */
	int devnull = open("/dev/null", O_WRONLY);
	if (devnull >= 0) {
		dup2(devnull, 1);
		dup2(devnull, 2);
	}
	runner r = {0};
	int rc = 0;
	void *w[MAX_ARRAYS] = {0};
	for (int i = 0; i < s->narr; i++)
		if (s->init[i] && !(w[i] = malloc(s->bytes[i] ? s->bytes[i] : 1)))
			_exit(1);
	if (p == P_GCC || p == P_GCC_PAR || p == P_POLLY || p == P_POLLY_SM)
		rc = prepare_plain(s, p, threads, opt->polly_cc, &r, sh->why, 160);
	else if (is_blas_peer(p))
		rc = (r.blas = 1, blas_load(p, threads, &r.lib, sh->why, 160));
	else if (p >= P_HAL_M && p <= P_HAL_A)
		rc = prepare_halide(s, p, threads, opt->halide_lib, w, &r, sh->why, 160);
	else
		rc = prepare_auto(s, auto_path, threads, &r, sh->why, 160);
	if (rc != 0)
		_exit(1);
	double t[MAX_REPS], total = 0;
	reps = reps > MAX_REPS ? MAX_REPS : reps;
	/* one untimed run first (thread pools, page faults, OpenBLAS's first call) where a run
	 * is cheap (below WARM_FLOPS); a short run is repeated until MIN_SECONDS of runs */
	int rep = s->flops < WARM_FLOPS ? -1 : 0;
	for (; rep < reps || (total < MIN_SECONDS && rep < MAX_REPS); rep++) {
		for (int i = 0; i < s->narr; i++)
			if (w[i])
				memcpy(w[i], s->init[i], s->bytes[i]);
		double t0 = now();
		if (runner_call(s, &r, w) != 0) {
			snprintf(sh->why, 160, "the run failed%s%.140s", r.halide ? ": " : "",
			         r.halide ? r.halide_error(r.halide) : "");
			sh->why[strcspn(sh->why, "\n")] = 0;
			_exit(1);
		}
		if (rep >= 0)
			total += t[rep] = now() - t0;
	}
	reps = rep;
	for (int i = 0; i < s->narr; i++)
		if (sh->out[i])
			memcpy(sh->out[i], w[i], s->bytes[i]);
	inject(s, p, sh);
	*sh->seconds = median(t, reps);
	_exit(0);
}

/* Largest relative error of the written arrays in out against ref. */
static double compare(const suite_kernel *s, void *const *out, void *const *ref)
{
	double worst = 0;
	for (int i = 0; i < s->narr; i++) {
		if (!ref[i] || !out[i])
			continue;
		ct_dtype t = ct_kernel_array_dtype(s->k, i);
		double e = ct_max_rel_error(out[i], ref[i], t, ct_kernel_array_elements(s->k, i));
		if (!(e <= worst)) /* NaN wins */
			worst = e;
	}
	return worst;
}

/* Runs peer p in a child and verifies it against s->ref (filled from this run when
 * set_ref and there is none yet). */
static void run_peer(suite_kernel *s, peer p, int threads, int reps, const options *opt,
                     const char *auto_path, double tol, int set_ref, result *res)
{
	shared sh = {0};
	size_t total = 4096;
	for (int i = 0; i < s->narr; i++)
		if (s->init[i] && is_written(ct_kernel_array_role(s->k, i)))
			total += (s->bytes[i] + 63) / 64 * 64;
	char *mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		res->state = -1;
		snprintf(res->why, sizeof res->why, "mmap: %s", strerror(errno));
		return;
	}
	sh.seconds = (double *)(void *)mem;
	sh.why = mem + 64;
	size_t off = 4096;
	for (int i = 0; i < s->narr; i++)
		if (s->init[i] && is_written(ct_kernel_array_role(s->k, i))) {
			sh.out[i] = mem + off;
			off += (s->bytes[i] + 63) / 64 * 64;
		}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		child(s, p, threads, reps, opt, auto_path, &sh);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		res->state = -1;
		snprintf(res->why, sizeof res->why, "%s", *sh.why ? sh.why
		         : WIFSIGNALED(status) ? "crashed" : "failed");
	} else {
		res->state = 1;
		res->seconds = *sh.seconds;
		if (set_ref) {
			int any = 0;
			for (int i = 0; i < s->narr; i++)
				any |= s->ref[i] != NULL;
			for (int i = 0; i < s->narr && !any; i++)
				if (sh.out[i] && (s->ref[i] = malloc(s->bytes[i])) != NULL)
					memcpy(s->ref[i], sh.out[i], s->bytes[i]);
		}
		res->err = compare(s, sh.out, s->ref);
		if (!(res->err <= tol)) {
			res->state = -2;
			snprintf(res->why, sizeof res->why, "max rel error %.2g > %.0g", res->err, tol);
		}
	}
	munmap(mem, total);
}

/* ------------------------------------------------------------------ cachet auto */

/* 1 when the cachet binary has the auto command. */
static int have_auto(const char *cachet)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "'%s' auto --help 2>&1 | grep -q \"unknown command 'auto'\"", cachet);
	return system(cmd) != 0;
}

/* Runs `cachet auto` on s at its current size with threads (and budget > 0), writing out;
 * 0 on success; its wall time in *secs. */
static int run_auto(const suite_kernel *s, const char *cachet, int threads, double budget,
                    const char *out, double *secs, char *why, size_t cap)
{
	char cmd[2400], b[64] = "";
	if (budget > 0)
		snprintf(b, sizeof b, " --budget %g", budget);
	snprintf(cmd, sizeof cmd, "'%s' auto '%s' %s --threads %d%s -o '%s' >/dev/null 2>'%s.err'",
	         cachet, s->path, s->defs, threads, b, out, out);
	double t0 = now();
	int rc = system(cmd);
	*secs = now() - t0;
	if (rc != 0) {
		char path[1100];
		snprintf(path, sizeof path, "%s.err", out);
		FILE *f = fopen(path, "r");
		snprintf(why, cap, "cachet auto failed");
		if (f) {
			if (fgets(why, (int)cap, f))
				why[strcspn(why, "\n")] = 0;
			fclose(f);
		}
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ the table */

static void cell(const result *r, double flops)
{
	if (r->state == 1)
		printf(" %9.3g %7.2f", r->seconds, flops / r->seconds * 1e-9);
	else if (r->state == -2)
		printf(" %17s", "WRONG");
	else if (r->state == -1)
		printf(" %17s", "failed");
	else
		printf(" %17s", "n/a");
}

/* Speedup of peer a over peer b (time b / time a), or 0 when either is missing. */
static double speedup(const result *a, const result *b)
{
	return a->state == 1 && b->state == 1 ? b->seconds / a->seconds : 0;
}

/* The table's columns of one kernel: the first five peers, then the fastest correct Halide
 * peer (a wrong one shows when none is right); *which names its autoscheduler. */
/* The best of the n peers of group (the fastest correct one; else a wrong one, else a failed
 * one) into *best; *which = its name from names ("" when none is correct). */
static void best_of(const result *res, const int *group, int n, const char *const *names, result *best,
                    const char **which)
{
	*best = res[group[0]];
	*which = best->state == 1 ? names[0] : "";
	for (int g = 1; g < n; g++) {
		const result *r = &res[group[g]];
		if ((r->state == 1 && (best->state != 1 || r->seconds < best->seconds)) ||
		    (best->state == 0 && r->state != 0) || (best->state == -1 && r->state == -2)) {
			*best = *r;
			*which = r->state == 1 ? names[g] : "";
		}
	}
}

/* The table's columns of one kernel: the better gcc (serial or auto-parallelized), the better
 * Polly flag set, blas, auto, auto-b and the best Halide autoscheduler; *gcc, *polly and
 * *halide name the chosen ones. */
static void columns(const result *res, result *col, const char **gcc, const char **polly,
                    const char **blas, const char **halide)
{
	static const int GCC[] = {P_GCC, P_GCC_PAR}, POLLY[] = {P_POLLY, P_POLLY_SM},
	                 BLAS[] = {P_BLAS, P_BLAS_HSW, P_BLAS_SKX, P_BLAS_CPX, P_BLAS_SPR, P_BLAS_ZEN},
	                 HALIDE[] = {P_HAL_M, P_HAL_L, P_HAL_A};
	static const char *const GCC_NAME[] = {"serial", "autopar"}, *const POLLY_NAME[] = {"plain", "stripmine"};
	memcpy(col, res, sizeof *col * P_HALIDE);
	best_of(res, GCC, 2, GCC_NAME, &col[P_GCC], gcc);
	best_of(res, POLLY, 2, POLLY_NAME, &col[P_POLLY], polly);
	best_of(res, BLAS, 6, BLAS_SET, &col[P_BLAS], blas);
	best_of(res, HALIDE, 3, HALIDE_SCHED, &col[P_HALIDE], halide);
}

static void print_tables(suite_kernel *ks, int nk, result (*res)[N_PEERS], int threads,
                         const char *auto_note)
{
	printf("\nthreads %d: seconds and GFLOP/s (the kernel's flop count, a multiply-add = 2)\n", threads);
	printf("%-11s %8s", "kernel", "GFLOP");
	for (int p = 0; p < N_COLS; p++)
		printf(" %17s", COL_NAME[p]);
	printf(" %-8s %-10s %-14s %-14s %13s\n", "(gcc's)", "(polly's)", "(blas's)", "(halide's)", "auto took s");
	result col[MAX_KERNELS][N_COLS];
	for (int i = 0; i < nk; i++) {
		const char *gcc, *polly, *blas, *which;
		columns(res[i], col[i], &gcc, &polly, &blas, &which);
		printf("%-11s %8.3g", ks[i].name, ks[i].flops * 1e-9);
		for (int p = 0; p < N_COLS; p++)
			cell(&col[i][p], ks[i].flops);
		printf(" %-8s %-10s %-14s %-14s", gcc, polly, blas, which);
		if (res[i][P_AUTO].auto_seconds > 0)
			printf(" %6.2f %6.1f\n", res[i][P_AUTO].auto_seconds, res[i][P_AUTO_B].auto_seconds);
		else
			printf(" %13s\n", "n/a");
	}
	/* ratios: polly over gcc for orientation, then cachet auto over each peer */
	static const int A[][2] = {{P_POLLY, P_GCC},    {P_BLAS, P_GCC},     {P_HALIDE, P_GCC},
	                           {P_AUTO, P_GCC},     {P_AUTO, P_POLLY},   {P_AUTO, P_BLAS},
	                           {P_AUTO, P_HALIDE},  {P_AUTO_B, P_GCC},   {P_AUTO_B, P_POLLY},
	                           {P_AUTO_B, P_BLAS},  {P_AUTO_B, P_HALIDE}};
	enum { NR = (int)(sizeof A / sizeof A[0]) };
	printf("\nthreads %d: speedups (time of the second / time of the first; > 1: the first is faster)%s\n",
	       threads, auto_note);
	printf("%-11s", "kernel");
	for (int r = 0; r < NR; r++) {
		char h[40];
		snprintf(h, sizeof h, "%s/%s", COL_NAME[A[r][0]], COL_NAME[A[r][1]]);
		printf(" %12s", h);
	}
	printf("\n");
	double logsum[NR] = {0};
	int cnt[NR] = {0};
	for (int i = 0; i < nk; i++) {
		printf("%-11s", ks[i].name);
		for (int r = 0; r < NR; r++) {
			double x = speedup(&col[i][A[r][0]], &col[i][A[r][1]]);
			if (x > 0) {
				printf(" %12.2f", x);
				logsum[r] += log(x);
				cnt[r]++;
			} else {
				printf(" %12s", "n/a");
			}
		}
		printf("\n");
	}
	printf("%-11s", "geomean");
	for (int r = 0; r < NR; r++)
		if (cnt[r])
			printf(" %12.2f", exp(logsum[r] / cnt[r]));
		else
			printf(" %12s", "n/a");
	printf("\n");
}

/* ------------------------------------------------------------------ main */

static int parse_threads(const char *s, options *o)
{
	o->nthreads = 0;
	for (const char *p = s; *p && o->nthreads < MAX_THREADS;) {
		int t = atoi(p);
		if (t < 1)
			return -1;
		o->threads[o->nthreads++] = t;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return o->nthreads ? 0 : -1;
}

static int parse_options(int argc, char **argv, options *o)
{
	*o = (options){.reps = 3, .budget = 30, .dir = "bench/poly/kernels", .nthreads = 2,
	               .threads = {1, 2}};
	int reps_set = 0, budget_set = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--quick") == 0)
			o->quick = o->small = 1;
		else if (strcmp(a, "--small") == 0)
			o->small = 1;
		else if (strcmp(a, "--only") == 0 && v)
			o->only = argv[++i];
		else if (strcmp(a, "--threads") == 0 && v && parse_threads(v, o) == 0)
			i++;
		else if (strcmp(a, "--reps") == 0 && v && atoi(v) > 0)
			o->reps = atoi(argv[++i]), reps_set = 1;
		else if (strcmp(a, "--budget") == 0 && v && atof(v) > 0)
			o->budget = atof(argv[++i]), budget_set = 1;
		else if (strcmp(a, "--dir") == 0 && v)
			o->dir = argv[++i];
		else if (strcmp(a, "--cachet") == 0 && v)
			o->cachet = argv[++i];
		else if (strcmp(a, "--polly-cc") == 0 && v)
			o->polly_cc = argv[++i];
		else if (strcmp(a, "--halide-lib") == 0 && v)
			o->halide_lib = argv[++i];
		else if (strcmp(a, "--no-halide") == 0)
			o->halide_lib = "";
		else {
			fprintf(stderr, "usage: bench_poly [--quick] [--small] [--only K1,K2] [--threads 1,2] "
			                "[--reps N] [--budget S] [--dir DIR] [--cachet PATH] [--polly-cc CC] "
			                "[--halide-lib SO | --no-halide]\n");
			return -1;
		}
	}
	if (o->quick) {
		if (!o->only)
			o->only = "gemm,jacobi2d";
		if (!reps_set)
			o->reps = 1;
		if (!budget_set)
			o->budget = 2;
	}
	return 0;
}

/* 1 when name is in the comma-separated list (or the list is NULL). */
static int selected(const char *list, const char *name)
{
	if (!list)
		return 1;
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* The first clang that compiles with -mllvm -polly, or NULL. */
static const char *find_polly(void)
{
	static const char *const CANDIDATES[] = {"clang-14", "clang-15", "clang-16", "clang"};
	for (size_t i = 0; i < sizeof CANDIDATES / sizeof *CANDIDATES; i++) {
		char cmd[256];
		snprintf(cmd, sizeof cmd,
		         "echo 'int f(void){return 0;}' | %s -O3 -mllvm -polly -x c -c - -o /dev/null 2>/dev/null",
		         CANDIDATES[i]);
		if (system(cmd) == 0)
			return CANDIDATES[i];
	}
	return NULL;
}

/* The first name of the --only list with no kernel file in dir (printed into out), or 0 when
 * every name has one: a misspelt name would otherwise drop its kernel from the table unseen. */
static int unknown_name(const options *o, char *out, size_t cap)
{
	for (const char *p = o->only; p && *p;) {
		const char *end = strchr(p, ',');
		int len = end ? (int)(end - p) : (int)strlen(p);
		char path[1200];
		snprintf(path, sizeof path, "%s/%.*s.cachet", o->dir, len, p);
		if (len == 0 || access(path, R_OK) != 0) {
			snprintf(out, cap, "%.*s", len, p);
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* The kernel files of dir that the options select, sorted by name. */
static int list_kernels(const options *o, suite_kernel *ks)
{
	char cmd[1100];
	snprintf(cmd, sizeof cmd, "ls '%s'/*.cachet 2>/dev/null | sort", o->dir);
	FILE *f = popen(cmd, "r");
	int n = 0;
	char line[600];
	while (f && fgets(line, sizeof line, f) && n < MAX_KERNELS) {
		line[strcspn(line, "\n")] = 0;
		const char *base = strrchr(line, '/');
		char name[128];
		snprintf(name, sizeof name, "%.120s", base ? base + 1 : line);
		name[strcspn(name, ".")] = 0;
		if (!selected(o->only, name))
			continue;
		memset(&ks[n], 0, sizeof ks[n]);
		snprintf(ks[n].path, sizeof ks[n].path, "%.500s", line);
		if (read_small(line, ks[n].small, sizeof ks[n].small) != 0) {
			fprintf(stderr, "bench_poly: %s: no '# small:' line\n", line);
			continue;
		}
		n++;
	}
	if (f)
		pclose(f);
	return n;
}

/* Measures every peer of kernel s at one thread count; the reference is the interpreter
 * (small) or the first gcc run (default sizes). Returns the number of wrong results. */
static int bench_kernel(suite_kernel *s, int threads, options *o, int auto_ok,
                        const char *tmpdir, result *res)
{
	int small = o->small, wrong = 0;
	double tol = small ? ct_dtype_tolerance(CT_F64) : LARGE_TOL;
	for (int p = 0; p < N_PEERS; p++) {
		memset(&res[p], 0, sizeof res[p]);
		char auto_path[600] = "";
		if (p == P_GCC_PAR && threads == 1)
			continue;
		if ((p == P_POLLY || p == P_POLLY_SM) && !o->polly_cc)
			continue;
		if (is_blas_peer((peer)p) && (!has_blas(s->name) || o->blas_unknown[p]))
			continue;
		if (p >= P_HAL_M && p <= P_HAL_A && (!o->halide_lib || !has_halide(s->name)))
			continue;
		if (p == P_AUTO || p == P_AUTO_B) {
			if (!auto_ok)
				continue;
			snprintf(auto_path, sizeof auto_path, "%s/%s-%d-%s.cachet", tmpdir, s->name, threads,
			         PEER_NAME[p]);
			if (run_auto(s, o->cachet, threads, p == P_AUTO_B ? o->budget : 0, auto_path,
			             &res[p].auto_seconds, res[p].why, sizeof res[p].why) != 0) {
				res[p].state = -1;
				fprintf(stderr, "bench_poly: %s %s: %s\n", s->name, PEER_NAME[p], res[p].why);
				continue;
			}
		}
		run_peer(s, (peer)p, threads, o->reps, o, auto_path, tol, !small && p == P_GCC, &res[p]);
		/* a kernel set this OpenBLAS does not know: said once, then not tried again */
		if (is_blas_peer((peer)p) && res[p].state == -1 && strstr(res[p].why, "not known to this OpenBLAS"))
			o->blas_unknown[p] = 1;
		if (res[p].state < 0)
			fprintf(stderr, "bench_poly: %s %s threads %d: %s\n", s->name, PEER_NAME[p], threads,
			        res[p].why);
		wrong += res[p].state == -2;
	}
	return wrong;
}

int main(int argc, char **argv)
{
	options o;
	if (parse_options(argc, argv, &o) != 0)
		return 2;
	int blas_unknown[N_PEERS] = {0};
	o.blas_unknown = blas_unknown;
	static char cachet_default[4200], halide_default[4200];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	if (!o.cachet) { /* beside build/bench/bench_poly: build/cachet */
		snprintf(cachet_default, sizeof cachet_default, "%s/../cachet", exe);
		o.cachet = cachet_default;
	}
	const char *halide_why = "--no-halide";
	if (!o.halide_lib) { /* built beside it when libhalide14-0-dev is installed */
		snprintf(halide_default, sizeof halide_default, "%s/poly_halide.so", exe);
		o.halide_lib = halide_default;
		halide_why = "no build/bench/poly_halide.so: it needs Debian's libhalide14-0-dev (make bench-deps)";
	}
	if (*o.halide_lib == 0 || access(o.halide_lib, R_OK) != 0)
		o.halide_lib = NULL;
	if (!o.polly_cc)
		o.polly_cc = find_polly();
	static suite_kernel ks[MAX_KERNELS];
	char bad_name[128];
	if (unknown_name(&o, bad_name, sizeof bad_name)) {
		fprintf(stderr, "bench_poly: --only: no kernel named '%s' in %s (the names are its files' names)\n",
		        bad_name, o.dir);
		return 2;
	}
	int nk = list_kernels(&o, ks);
	if (nk == 0) {
		fprintf(stderr, "bench_poly: no kernels in %s%s%s\n", o.dir, o.only ? " named " : "",
		        o.only ? o.only : "");
		return 2;
	}
	int auto_ok = have_auto(o.cachet);
	char tmpdir[] = "/tmp/bench_poly.XXXXXX";
	if (!mkdtemp(tmpdir))
		return 1;

	ct_ctx *pctx = ct_ctx_new();
	ct_probe_info pi;
	memset(&pi, 0, sizeof pi);
	if (!pctx || ct_probe_run(pctx, o.quick ? 0 : CT_PROBE_MEASURE_FLOPS, &pi) != CT_OK)
		snprintf(pi.model, sizeof pi.model, "unknown");
	printf("PolyBench-style suite (bench/poly/kernels, %d kernels), %s sizes, median of %d runs\n", nk,
	       o.small ? "small (each file's '# small:' line)" : "PolyBench LARGE", o.reps);
	printf("cpu: %s", pi.model);
	if (pi.gflops_f64_core > 0)
		printf("; measured f64 FMA peak: one core %.1f GFLOP/s, %d threads %.1f GFLOP/s",
		       pi.gflops_f64_core, pi.threads_measured, pi.gflops_f64_all);
	printf("\n");
	printf("gcc: the plain nest (cachet emit), gcc -O3 -march=native; threads > 1: the faster of that "
	       "and with -ftree-parallelize-loops=T\n");
	printf("polly: %s -O3 -march=native -mllvm -polly, the faster of plain and with -mllvm "
	       "-polly-vectorizer=stripmine; threads > 1: -mllvm -polly-parallel -fopenmp%s\n",
	       o.polly_cc ? o.polly_cc : "(none)", o.polly_cc ? "" : " (no clang with Polly found: not measured)");
	const char *env_core = getenv("OPENBLAS_CORETYPE"), *env_l2 = getenv("OPENBLAS_L2_SIZE");
	printf("blas: OpenBLAS (libopenblas.so.0), the fastest correct of its own kernel set and of Haswell, SkylakeX, "
	       "Cooperlake, SapphireRapids, Zen (OPENBLAS_CORETYPE), OPENBLAS_L2_SIZE removed, each loaded in a "
	       "child of its own; the environment had OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s\n",
	       env_core ? env_core : "(unset)", env_l2 ? env_l2 : "(unset)");
	const char *auto_note = auto_ok ? "" : "  [auto, auto-b: n/a (no cachet auto)]";
	if (auto_ok)
		printf("auto: %s auto --threads T (model only); auto-b: with --budget %g\n", o.cachet, o.budget);
	else
		printf("auto, auto-b: n/a (no cachet auto in %s)\n", o.cachet);
	if (o.halide_lib)
		printf("halide: the fastest correct of Halide 14's autoschedulers Mullapudi2016, Li2018, "
		       "Adams2019 (%s, JIT; every kernel but the triangular ones and seidel2d)\n",
		       o.halide_lib);
	else
		printf("halide: not measured (%s)\n", halide_why);
	printf("verified: %s\n", o.small ? "every peer against cachet's interpreter (ct_dtype_tolerance)"
	                                 : "every peer against the gcc plain nest (relative 1e-9); "
	                                   "and at the small size against the interpreter");
	fflush(stdout);

	static result res[MAX_THREADS][MAX_KERNELS][N_PEERS];
	int wrong = 0;
	for (int i = 0; i < nk; i++) {
		if (!o.small) { /* first every peer at the small size against the interpreter */
			options so = o;
			so.small = 1;
			so.reps = 1;
			so.budget = o.budget < 2 ? o.budget : 2;
			result sr[N_PEERS];
			if (kernel_load(&ks[i], 1) != 0 || reference_interp(&ks[i]) != 0)
				return 1;
			for (int h = 0; h < o.nthreads; h++)
				wrong += bench_kernel(&ks[i], o.threads[h], &so, auto_ok, tmpdir, sr);
			kernel_release(&ks[i]);
		}
		if (kernel_load(&ks[i], o.small) != 0 || (o.small && reference_interp(&ks[i]) != 0))
			return 1;
		for (int h = 0; h < o.nthreads; h++)
			wrong += bench_kernel(&ks[i], o.threads[h], &o, auto_ok, tmpdir, res[h][i]);
		double flops = ks[i].flops;
		kernel_release(&ks[i]);
		ks[i].flops = flops;
		fprintf(stderr, "bench_poly: %s done\n", ks[i].name);
	}
	for (int h = 0; h < o.nthreads; h++)
		print_tables(ks, nk, res[h], o.threads[h], auto_note);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_poly: could not remove %s\n", tmpdir);
	ct_ctx_free(pctx);
	printf("\n%s\n", wrong ? "WRONG results: see above" : "all results verified");
	return wrong ? 1 : 0;
}
