/* bench_auto.c: issue #30 item 4: `cachet run --auto` on the plain-nest twins of the examples vs every hand-written plan of the same computation, as a table. */
#include <cachet.h>

#include <ftw.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_kernel.h"
#include "../common/bench_util.h"

/*
 * Usage: bench_auto [--quick] [--no-check] [--cases LIST] [--threads LIST] [--sizes LIST]
 *                   [--budget S] [--rounds N] [--min-seconds S] [--keep DIR]
 * (from the repository root; bench/auto/README.md says how to read the table)
 * Cases: sgemm, dgemm, two-index, stencil5 (--cases: a comma-separated subset).
 * For each case, size (default: gemm 1024,2048; two-index V = N = 512,1024;
 * stencil 4096 x 4096; --sizes LIST replaces every case's list: a size sets
 * every size param of the case) and thread count (default 1,2):
 *   - every hand-written plan of the computation among the examples, with
 *     the size params overridden (a plan that does not check at that size,
 *     two_index_fused.cachet's tiles that do not divide it, is "n/a");
 *   - the plain-nest twin through auto as `cachet run --auto` runs it:
 *     ct_kernel_autoschedule at those sizes and that thread count, model
 *     only (its seconds are the "choose" column), the text parsed, the
 *     sizes set again, checked, emitted;
 *   - with --budget S, the twin through auto with a budget of S seconds
 *     (the tuner measures its tile params; a fresh store per bench run, so
 *     nothing from an earlier run is reused): the auto-b column.
 * Each is compiled with -fopenmp through the code cache and its threads set
 * (cachet_NAME_set_threads). All run on the same buffers: inputs from
 * ct_fill_random, inout and output arrays from ct_fill_random too, or zero
 * when one plan declares as output what another declares inout (so that
 * two_index_fused's B = ... equals the others' B += ...). Each plan runs once
 * from those initial values and its result is compared with the best hand
 * plan's (max relative error, ct_dtype_tolerance of the array's type); a
 * wrong one prints WRONG and the exit status is 1. Timing: each plan's calls
 * per measurement are enough for --min-seconds (default 0.2); --rounds
 * (default 5) rounds each measure every plan once, in an order rotated per
 * round, so that a change of the machine's load falls on every plan; the
 * median per plan is shown. ratio = best hand time / auto time (> 1: auto is
 * faster); "within 10%" when auto takes at most 1.1 x the best hand time.
 * Before the table, every plan is also run at a small size with ct_kernel_run
 * (native, verified against the reference interpreter) on each thread count
 * (--no-check leaves it out).
 * --quick: small sizes, 1 round of 1 call (the test suite's mode; its times
 * mean nothing). --keep DIR writes each chosen auto file to DIR.
 * CACHET_BENCH_AUTO_INJECT=CASE (a test hook) spoils auto's result of that case.
 * Waiting OpenMP threads spin a bounded time, then sleep (ct_threads_wait_default, as the CLI).
 */

#define MAX_HAND 3
#define MAX_VARIANTS (MAX_HAND + 2)
#define MAX_SIZES 8
#define MAX_ARRAYS 8
#define MAX_PARAMS 16

/* One computation: its hand-written plans and its plain-nest twin. */
typedef struct case_def {
	const char *name;
	const char *twin;                /* the plain nest auto schedules */
	const char *hand[MAX_HAND];      /* hand-written plans, NULL-terminated */
	const char *sizep[3];            /* the size params a size sets */
	int nsizep;
	long sizes[MAX_SIZES];           /* default sizes */
	int nsizes;
	long quick;                      /* --quick's size */
	long check;                      /* the interpreter check's size */
	const char *what;                /* one line for the legend */
} case_def;

static const case_def CASES[] = {
	{"sgemm", "examples/auto_matmul.cachet", {"examples/sgemm.cachet", "examples/sgemm_tune.cachet"},
	 {"M", "N", "K"}, 3, {1024, 2048}, 2, 64, 67, "C += A B, f32, M = N = K = size"},
	{"dgemm", "examples/auto_dgemm.cachet", {"examples/dgemm.cachet", "examples/dgemm_tune.cachet"},
	 {"M", "N", "K"}, 3, {1024, 2048}, 2, 64, 67, "C += A B, f64, M = N = K = size"},
	{"two-index", "examples/auto_two_index.cachet",
	 {"examples/two_index.cachet", "examples/two_index_fast.cachet", "examples/two_index_fused.cachet"},
	 {"V", "N"}, 2, {512, 1024}, 2, 128, 128, "B += C1^T A C2, f64, V = N = size (B from 0)"},
	{"stencil5", "examples/auto_stencil5.cachet", {"examples/stencil5.cachet", "examples/stencil5_fast.cachet"},
	 {"N", "M"}, 2, {4096}, 1, 64, 61, "5-point stencil, f32, N = M = size"},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

typedef struct options {
	bool quick;
	bool no_check; /* --no-check: no reference check before the table */
	bool use_case[NCASES];
	long threads[8];
	int nthreads;
	long sizes[MAX_SIZES]; /* --sizes, or none */
	int nsizes;
	double budget;
	int rounds;
	double min_seconds;
	const char *keep;
	char store[64]; /* auto-b's fresh store ("" without --budget) */
} options;

/* One array of a case: one buffer every plan uses, its initial values, its role. */
typedef struct array_buf {
	char name[64];
	ct_dtype t;
	int64_t n;
	bool written;  /* inout or output in some plan */
	bool zero;     /* output in one plan, inout in another: starts at 0 */
	void *data, *init;
} array_buf;

/* One plan of a row, loaded. */
typedef struct variant {
	char label[32];      /* the kernel's name, or "auto", "auto-b" */
	bool is_hand;
	bool present;        /* false: n/a at this size (why says why) */
	char why[512];
	bench_entry_fn entry;
	int64_t params[MAX_PARAMS];
	void *args[MAX_ARRAYS];
	void *result[MAX_ARRAYS]; /* the written arrays after one call from the initial values */
	double ms;
	double err;          /* vs the best hand plan */
	bool ok;
	double choose_s;     /* auto: its time to choose */
} variant;

/* Set the case's size params of k to size and check it; CT_OK or the status. */
static ct_status set_size(ct_kernel *k, const case_def *c, long size)
{
	for (int i = 0; i < c->nsizep; i++) {
		ct_status st = ct_kernel_set_param(k, c->sizep[i], size);
		if (st != CT_OK)
			return st;
	}
	return ct_kernel_recheck(k);
}

/* The auto text of the twin (parsed, sizes set) with that many threads and budget (0: model only);
 * the kernel as `cachet run --auto` runs it, or NULL with a message in why. */
static ct_kernel *auto_kernel(ct_ctx *ctx, const case_def *c, long size, int threads, double budget,
                              const options *opt, double *choose_s, char *why, size_t cap)
{
	ct_kernel *k = ct_kernel_parse_file(ctx, c->twin);
	if (!k || set_size(k, c, size) != CT_OK) {
		snprintf(why, cap, "%s: %s", c->twin, ct_ctx_last_message(ctx));
		ct_kernel_free(k);
		return NULL;
	}
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = threads;
	o.budget = budget;
	if (budget > 0)
		o.store_dir = opt->store;
	char *text = NULL;
	size_t len = 0;
	double t0 = now();
	ct_status st = ct_kernel_autoschedule(k, &o, &text, &len);
	*choose_s = now() - t0;
	ct_kernel_free(k);
	if (st != CT_OK) {
		snprintf(why, cap, "auto %s: %s", c->twin, ct_ctx_last_message(ctx));
		free(text);
		return NULL;
	}
	if (opt->keep) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s_%ld_t%d%s.cachet", opt->keep, c->name, size, threads,
		         budget > 0 ? "_budget" : "");
		FILE *f = fopen(path, "w");
		if (f) {
			fwrite(text, 1, len, f);
			fclose(f);
		} else {
			fprintf(stderr, "bench: cannot write %s\n", path);
		}
	}
	ct_kernel *a = ct_kernel_parse(ctx, text, len, c->twin);
	free(text);
	if (!a || set_size(a, c, size) != CT_OK) {
		snprintf(why, cap, "auto's file for %s: %s", c->twin, ct_ctx_last_message(ctx));
		ct_kernel_free(a);
		return NULL;
	}
	return a;
}

/* The array of bufs named name, or NULL. */
static array_buf *find_array(array_buf *bufs, int nbufs, const char *name)
{
	for (int i = 0; i < nbufs; i++)
		if (strcmp(bufs[i].name, name) == 0)
			return &bufs[i];
	return NULL;
}

/* Make kernel k's arrays known to bufs (names, types, sizes; the first plan declares them, the others
 * must agree). false with a message in why. */
static bool note_arrays(const ct_kernel *k, array_buf *bufs, int *nbufs, char *why, size_t cap)
{
	for (int i = 0; i < ct_kernel_array_count(k); i++) {
		ct_role r = ct_kernel_array_role(k, i);
		if (r == CT_TEMP)
			continue;
		const char *name = ct_kernel_array_name(k, i);
		array_buf *b = find_array(bufs, *nbufs, name);
		bool written = r == CT_INOUT || r == CT_OUTPUT;
		if (!b) {
			if (*nbufs == MAX_ARRAYS) {
				snprintf(why, cap, "more than %d arrays", MAX_ARRAYS);
				return false;
			}
			b = &bufs[(*nbufs)++];
			memset(b, 0, sizeof *b);
			snprintf(b->name, sizeof b->name, "%s", name);
			b->t = ct_kernel_array_dtype(k, i);
			b->n = ct_kernel_array_elements(k, i);
			b->written = written;
			b->zero = r == CT_OUTPUT;
			continue;
		}
		if (b->t != ct_kernel_array_dtype(k, i) || b->n != ct_kernel_array_elements(k, i)) {
			snprintf(why, cap, "array %s differs from the first plan's (type or size)", name);
			return false;
		}
		if (b->written != written) {
			snprintf(why, cap, "array %s is written by one plan and only read by another", name);
			return false;
		}
		/* output here, inout elsewhere (or the other way round): start from 0 */
		if (written && b->zero != (r == CT_OUTPUT))
			b->zero = true;
	}
	return true;
}

/* Compile k (emitted C, -fopenmp) into v: entry, params, arguments on bufs, threads set. */
static bool load_variant(ct_ctx *ctx, ct_kernel *k, const char *path, variant *v, array_buf *bufs, int nbufs,
                         int threads, double *compile_s)
{
	if (ct_kernel_param_count(k) > MAX_PARAMS || ct_kernel_array_count(k) > MAX_ARRAYS) {
		snprintf(v->why, sizeof v->why, "%s: more than %d params or %d arrays", path, MAX_PARAMS, MAX_ARRAYS);
		return false;
	}
	char *src = ct_kernel_emit(k, NULL, NULL);
	if (!src) {
		snprintf(v->why, sizeof v->why, "%s: %s", path, ct_ctx_last_message(ctx));
		return false;
	}
	bench_threads_fn set_threads = NULL;
	ct_load_info info;
	v->entry = bench_load_entry(ctx, k, src, path, &set_threads, &info);
	free(src);
	if (!v->entry) {
		snprintf(v->why, sizeof v->why, "%s: not loaded (the message above)", path);
		return false;
	}
	if (strcmp(info.how, "compiled") == 0)
		*compile_s += info.seconds;
	if (set_threads)
		set_threads(threads);
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		v->params[i] = ct_kernel_param_value(k, i, NULL);
	for (int i = 0; i < ct_kernel_array_count(k); i++) {
		array_buf *b = ct_kernel_array_role(k, i) == CT_TEMP ? NULL
		               : find_array(bufs, nbufs, ct_kernel_array_name(k, i));
		v->args[i] = b ? b->data : NULL; /* a temp is the kernel's own */
	}
	v->present = true;
	return true;
}

/* One call of v. */
static int call(const variant *v)
{
	return v->entry((void *const *)v->args, v->params);
}

/* Median milliseconds per call of each present variant: calls per measurement for min_seconds,
 * rounds rounds, each measuring every variant once in an order rotated by the round. */
static bool time_variants(variant *vs, int nv, const options *opt)
{
	long reps[MAX_VARIANTS] = {0};
	double per[MAX_VARIANTS][16];
	int rounds = opt->rounds > 16 ? 16 : opt->rounds;
	for (int i = 0; i < nv; i++) {
		if (!vs[i].present)
			continue;
		double t0 = now();
		if (call(&vs[i]) != 0)
			return false;
		double one = now() - t0;
		reps[i] = one > 0 ? (long)ceil(opt->min_seconds / one) : 1000;
		if (reps[i] < 1)
			reps[i] = 1;
	}
	for (int r = 0; r < rounds; r++)
		for (int j = 0; j < nv; j++) {
			int i = (j + r) % nv;
			if (!vs[i].present)
				continue;
			double t0 = now();
			for (long q = 0; q < reps[i]; q++)
				if (call(&vs[i]) != 0)
					return false;
			per[i][r] = (now() - t0) / (double)reps[i];
		}
	for (int i = 0; i < nv; i++)
		if (vs[i].present)
			vs[i].ms = 1e3 * median(per[i], rounds);
	return true;
}

/* bytes rounded up to a line, 64-byte aligned (free with free). */
static void *alloc_bytes(size_t bytes)
{
	bytes = (bytes + 63) / 64 * 64;
	return aligned_alloc(64, bytes ? bytes : 64);
}

/* Reset the written arrays to their initial values. */
static void reset(array_buf *bufs, int nbufs)
{
	for (int i = 0; i < nbufs; i++)
		if (bufs[i].written)
			memcpy(bufs[i].data, bufs[i].init, (size_t)bufs[i].n * ct_dtype_size(bufs[i].t));
}

/* Whether the budget's file kept every param value of the model's (the tuner found nothing
 * faster, or nothing confirmed faster): then the two columns time one plan, and their
 * difference is the machine's noise. */
static bool same_values(const ct_kernel *a, const ct_kernel *b)
{
	int n = ct_kernel_param_count(a);
	if (n != ct_kernel_param_count(b))
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(ct_kernel_param_name(a, i), ct_kernel_param_name(b, i)) != 0 ||
		    ct_kernel_param_value(a, i, NULL) != ct_kernel_param_value(b, i, NULL))
			return false;
	return true;
}

typedef struct totals {
	int rows, within, wrong, rows_b, at_or_above_b, same_b;
	double compile_s;
} totals;

/* One case at one size on one thread count: one row. 0 done, -1 an error (message printed). */
static int bench_row(ct_ctx *ctx, const case_def *c, long size, int threads, const options *opt, totals *tot)
{
	variant vs[MAX_VARIANTS];
	array_buf bufs[MAX_ARRAYS];
	int nv = 0, nbufs = 0, rc = -1;
	memset(vs, 0, sizeof vs);
	memset(bufs, 0, sizeof bufs);
	ct_kernel *ks[MAX_VARIANTS] = {NULL};
	/* parse: hand plans, auto, auto-b */
	for (int h = 0; h < MAX_HAND && c->hand[h]; h++, nv++) {
		variant *v = &vs[nv];
		v->is_hand = true;
		ct_kernel *k = ct_kernel_parse_file(ctx, c->hand[h]);
		if (!k) {
			fprintf(stderr, "bench: %s: %s (run from the repository root)\n", c->hand[h], ct_ctx_last_message(ctx));
			goto out;
		}
		snprintf(v->label, sizeof v->label, "%s", ct_kernel_name(k));
		if (set_size(k, c, size) != CT_OK) {
			snprintf(v->why, sizeof v->why, "%s", ct_ctx_last_message(ctx));
			ct_kernel_free(k);
			continue;
		}
		ks[nv] = k;
	}
	int nhand = nv;
	for (int b = 0; b < (opt->budget > 0 ? 2 : 1); b++, nv++) {
		variant *v = &vs[nv];
		snprintf(v->label, sizeof v->label, "%s", b ? "auto-b" : "auto");
		ks[nv] = auto_kernel(ctx, c, size, threads, b ? opt->budget : 0, opt, &v->choose_s, v->why, sizeof v->why);
		if (!ks[nv]) {
			fprintf(stderr, "bench: %s %ld %d threads: %s\n", c->name, size, threads, v->why);
			goto out;
		}
	}
	char why[512];
	for (int i = 0; i < nv; i++)
		if (ks[i] && !note_arrays(ks[i], bufs, &nbufs, why, sizeof why)) {
			fprintf(stderr, "bench: %s: %s\n", vs[i].label, why);
			goto out;
		}
	for (int i = 0; i < nbufs; i++) {
		size_t bytes = (size_t)bufs[i].n * ct_dtype_size(bufs[i].t);
		bufs[i].data = alloc_bytes(bytes);
		bufs[i].init = bufs[i].written ? alloc_bytes(bytes) : NULL;
		if (!bufs[i].data || (bufs[i].written && !bufs[i].init)) {
			fprintf(stderr, "bench: out of memory\n");
			goto out;
		}
		void *fill = bufs[i].written ? bufs[i].init : bufs[i].data;
		if (bufs[i].zero)
			memset(fill, 0, bytes);
		else
			ct_fill_random(fill, bufs[i].t, bufs[i].n, 1, (uint64_t)i);
	}
	for (int i = 0; i < nv; i++) {
		if (!ks[i])
			continue;
		if (!load_variant(ctx, ks[i], i < nhand ? c->hand[i] : c->twin, &vs[i], bufs, nbufs, threads,
		                  &tot->compile_s)) {
			fprintf(stderr, "bench: %s\n", vs[i].why);
			goto out;
		}
	}
	/* one call of each from the initial values; its written arrays kept */
	for (int i = 0; i < nv; i++) {
		if (!vs[i].present)
			continue;
		reset(bufs, nbufs);
		if (call(&vs[i]) != 0) {
			fprintf(stderr, "bench: %s: out of memory in the kernel\n", vs[i].label);
			goto out;
		}
		for (int a = 0; a < nbufs; a++) {
			if (!bufs[a].written)
				continue;
			size_t bytes = (size_t)bufs[a].n * ct_dtype_size(bufs[a].t);
			if (!(vs[i].result[a] = alloc_bytes(bytes))) {
				fprintf(stderr, "bench: out of memory\n");
				goto out;
			}
			memcpy(vs[i].result[a], bufs[a].data, bytes);
		}
		/* the test suite's hook: CACHET_BENCH_AUTO_INJECT=CASE spoils auto's result of that case */
		const char *inject = getenv("CACHET_BENCH_AUTO_INJECT");
		for (int a = 0; a < nbufs && i == nhand && inject && strcmp(inject, c->name) == 0; a++) {
			if (bufs[a].written && bufs[a].t == CT_F64)
				((double *)vs[i].result[a])[0] += 1;
			else if (bufs[a].written && bufs[a].t == CT_F32)
				((float *)vs[i].result[a])[0] += 1;
		}
	}
	reset(bufs, nbufs);
	if (!time_variants(vs, nv, opt)) {
		fprintf(stderr, "bench: %s: out of memory in a kernel\n", c->name);
		goto out;
	}
	int best = -1;
	for (int i = 0; i < nhand; i++)
		if (vs[i].present && (best < 0 || vs[i].ms < vs[best].ms))
			best = i;
	if (best < 0) {
		fprintf(stderr, "bench: %s at %ld: no hand-written plan checks at this size\n", c->name, size);
		goto out;
	}
	bool row_ok = true;
	for (int i = 0; i < nv; i++) {
		if (!vs[i].present)
			continue;
		vs[i].ok = true;
		for (int a = 0; a < nbufs; a++) {
			if (!bufs[a].written)
				continue;
			double e = ct_max_rel_error(vs[i].result[a], vs[best].result[a], bufs[a].t, bufs[a].n);
			if (!(e <= ct_dtype_tolerance(bufs[a].t)))
				vs[i].ok = false;
			if (!(e <= vs[i].err))
				vs[i].err = e; /* the largest, NaN included */
		}
		if (!vs[i].ok) {
			row_ok = false;
			fprintf(stderr, "bench: %s %ld %d threads: %s differs from %s (max relative error %.3g): WRONG\n",
			        c->name, size, threads, vs[i].label, vs[best].label, vs[i].err);
		}
	}
	/* the row */
	printf("%-10s %6ld %3d", c->name, size, threads);
	for (int h = 0; h < MAX_HAND; h++) {
		if (h >= nhand)
			printf(" %10s", "-");
		else if (!vs[h].present)
			printf(" %10s", "n/a");
		else
			printf(" %10.3f", vs[h].ms);
	}
	const variant *au = &vs[nhand], *ab = opt->budget > 0 ? &vs[nhand + 1] : NULL;
	printf(" %10.3f", au->ms);
	if (ab)
		printf(" %10.3f", ab->ms);
	double ratio = vs[best].ms / au->ms;
	bool within = au->ms <= 1.1 * vs[best].ms;
	printf(" %-16s %7.3f %-13s", vs[best].label, ratio, within ? "within 10%" : "NOT within 10%");
	if (ab) {
		double rb = vs[best].ms / ab->ms;
		printf(" %7.3f %-8s %-6s", rb, rb >= 1 ? "at/above" : "below", same_values(ks[nhand], ks[nhand + 1]) ? "model" : "tuned");
		tot->rows_b++;
		tot->at_or_above_b += rb >= 1;
		tot->same_b += same_values(ks[nhand], ks[nhand + 1]);
	}
	printf(" %8.3f", au->choose_s);
	if (ab)
		printf(" %8.1f", ab->choose_s);
	double maxerr = 0;
	for (int i = 0; i < nv; i++)
		if (vs[i].present && !(vs[i].err <= maxerr))
			maxerr = vs[i].err;
	printf(" %9.2e %s\n", maxerr, row_ok ? "ok" : "WRONG");
	for (int h = 0; h < nhand; h++)
		if (!vs[h].present)
			printf("    n/a: %s at %ld: %s\n", vs[h].label, size, vs[h].why);
	fflush(stdout);
	tot->rows++;
	tot->within += within;
	tot->wrong += !row_ok;
	rc = 0;
out:
	for (int i = 0; i < nv; i++) {
		ct_kernel_free(ks[i]);
		for (int a = 0; a < MAX_ARRAYS; a++)
			free(vs[i].result[a]);
	}
	for (int i = 0; i < nbufs; i++) {
		free(bufs[i].data);
		free(bufs[i].init);
	}
	return rc;
}

/* ct_kernel_run (native, verified against the interpreter) of k on threads; prints "label ok" or the error.
 * 1 verified, 0 not. */
static int check_one(ct_ctx *ctx, ct_kernel *k, const char *label, int threads)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.threads = threads;
	o.verify = 1;
	ct_run_result r;
	memset(&r, 0, sizeof r);
	ct_status st = ct_kernel_run(k, &o, &r);
	if (st == CT_OK && r.verified == 1) {
		printf(" %s ok (%.1e)", label, r.max_rel_error);
		return 1;
	}
	printf(" %s WRONG", label);
	fprintf(stderr, "bench: %s on %d threads: %s (verified %d, max relative error %.3g)\n", label, threads,
	        st == CT_OK ? "not verified" : ct_ctx_last_message(ctx), r.verified, r.max_rel_error);
	return 0;
}

/* Every plan of case c and its auto choice at the check size on threads, each verified against the
 * reference interpreter: one line. The plans that failed, or -1 on an error. */
static int check_case(ct_ctx *ctx, const case_def *c, int threads, const options *opt)
{
	long size = c->check;
	printf("%-10s %4ld x, %d thr:", c->name, size, threads);
	int bad = 0;
	for (int h = 0; h < MAX_HAND && c->hand[h]; h++) {
		ct_kernel *k = ct_kernel_parse_file(ctx, c->hand[h]);
		if (!k) {
			fprintf(stderr, "\nbench: %s: %s (run from the repository root)\n", c->hand[h], ct_ctx_last_message(ctx));
			return -1;
		}
		if (set_size(k, c, size) != CT_OK) {
			printf(" %s n/a", ct_kernel_name(k));
			fprintf(stderr, "bench: %s at %ld: %s\n", c->hand[h], size, ct_ctx_last_message(ctx));
		} else {
			bad += !check_one(ctx, k, ct_kernel_name(k), threads);
		}
		ct_kernel_free(k);
	}
	for (int b = 0; b < (opt->budget > 0 ? 2 : 1); b++) {
		char why[512];
		double s;
		options o2 = *opt;
		o2.keep = NULL;
		ct_kernel *a = auto_kernel(ctx, c, size, threads, b ? opt->budget : 0, &o2, &s, why, sizeof why);
		if (!a) {
			fprintf(stderr, "\nbench: %s\n", why);
			return -1;
		}
		bad += !check_one(ctx, a, b ? "auto-b" : "auto", threads);
		ct_kernel_free(a);
	}
	printf("\n");
	fflush(stdout);
	return bad;
}

/* Select the cases named in s (comma-separated); false on an unknown name. */
static bool parse_cases(const char *s, bool *use)
{
	for (int i = 0; i < NCASES; i++)
		use[i] = false;
	while (*s) {
		size_t len = strcspn(s, ",");
		int found = -1;
		for (int i = 0; i < NCASES; i++)
			if (strlen(CASES[i].name) == len && strncmp(CASES[i].name, s, len) == 0)
				found = i;
		if (found < 0)
			return false;
		use[found] = true;
		s += len + (s[len] == ',');
	}
	return true;
}

/* nftw's callback that removes auto-b's store folder, deepest first. */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

/* The usage line on stderr; exit status 2. */
static int usage(void)
{
	fprintf(stderr, "usage: bench_auto [--quick] [--no-check] [--cases sgemm,dgemm,two-index,stencil5] [--threads 1,2] "
	                "[--sizes LIST] [--budget S] [--rounds N] [--min-seconds S] [--keep DIR]\n");
	return 2;
}

int main(int argc, char **argv)
{
	ct_threads_wait_default(); /* as the cachet CLI */
	options opt;
	memset(&opt, 0, sizeof opt);
	for (int i = 0; i < NCASES; i++)
		opt.use_case[i] = true;
	opt.threads[0] = 1, opt.threads[1] = 2, opt.nthreads = 2;
	opt.rounds = 5;
	opt.min_seconds = 0.2;
	bool rounds_set = false, min_set = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (strcmp(a, "--quick") == 0) {
			opt.quick = true;
			continue;
		}
		if (strcmp(a, "--no-check") == 0) {
			opt.no_check = true;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (strcmp(a, "--cases") == 0) {
			if (!parse_cases(v, opt.use_case))
				return usage();
		} else if (strcmp(a, "--threads") == 0) {
			if (!(opt.nthreads = bench_parse_list(v, opt.threads, 8, 1, 4096)))
				return usage();
		} else if (strcmp(a, "--sizes") == 0) {
			if (!(opt.nsizes = bench_parse_list(v, opt.sizes, MAX_SIZES, 1, 65536)))
				return usage();
		} else if (strcmp(a, "--budget") == 0) {
			opt.budget = strtod(v, &end);
			if (end == v || *end || !(opt.budget > 0))
				return usage();
		} else if (strcmp(a, "--rounds") == 0) {
			long r = strtol(v, &end, 10);
			if (end == v || *end || r < 1 || r > 16)
				return usage();
			opt.rounds = (int)r;
			rounds_set = true;
		} else if (strcmp(a, "--min-seconds") == 0) {
			opt.min_seconds = strtod(v, &end);
			if (end == v || *end || !(opt.min_seconds >= 0))
				return usage();
			min_set = true;
		} else if (strcmp(a, "--keep") == 0) {
			opt.keep = v;
		} else {
			return usage();
		}
	}
	if (opt.quick) {
		if (!rounds_set)
			opt.rounds = 1;
		if (!min_set)
			opt.min_seconds = 0;
	}
	if (opt.budget > 0) {
		snprintf(opt.store, sizeof opt.store, "/tmp/cachet-bench-auto-XXXXXX");
		if (!mkdtemp(opt.store)) {
			fprintf(stderr, "bench: cannot make a store folder\n");
			return 1;
		}
	}
	/* the probe's measurements in a ctx of their own: auto reads an unmeasured probe, as the CLI's */
	ct_ctx *pctx = ct_ctx_new(), *ctx = ct_ctx_new();
	if (!pctx || !ctx)
		return 1;
	ct_probe_info pi;
	if (ct_probe_run(pctx, CT_PROBE_MEASURE_FLOPS, &pi) != CT_OK) {
		fprintf(stderr, "bench: probe: %s\n", ct_ctx_last_message(pctx));
		return 1;
	}
	char date[64];
	time_t tnow = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tnow));
	printf("cachet auto (model only%s) vs the hand-written plans of the examples; %s%s\n",
	       opt.budget > 0 ? ", and auto-b: with a budget" : "", date, opt.quick ? "; --quick: times mean nothing" : "");
	printf("cpu: %s; measured FMA peak of one core: f32 %.1f GFLOP/s, f64 %.1f GFLOP/s (%.2f GHz); of %d threads: "
	       "f32 %.1f, f64 %.1f\n",
	       pi.model, pi.gflops_f32_core, pi.gflops_f64_core, pi.ghz, pi.threads_measured, pi.gflops_f32_all,
	       pi.gflops_f64_all);
	if (opt.budget > 0)
		printf("auto-b: --budget %.1f s per choice, a fresh tuner store (%s)\n", opt.budget, opt.store);
	ct_ctx_free(pctx);

	double t0 = now();
	totals tot = {0};
	int check_bad = 0;
	if (!opt.no_check)
		printf("\nreference check: each plan at a small size, native vs the interpreter (ct_kernel_run, max rel. "
		       "error)\n");
	for (int ci = 0; ci < NCASES && !opt.no_check; ci++)
		for (int h = 0; h < opt.nthreads && opt.use_case[ci]; h++) {
			int r = check_case(ctx, &CASES[ci], (int)opt.threads[h], &opt);
			if (r < 0)
				return 1;
			check_bad += r;
		}

	printf("\nmedian of %d round%s (each plan >= %.2f s a round, rounds interleaved); ms per call; "
	       "ratio = best hand / auto (> 1: auto faster);\n"
	       "within 10%%: auto <= 1.1 x best hand; choose = auto's own seconds to choose; max err = of every plan "
	       "vs the best hand plan\n",
	       opt.rounds, opt.rounds == 1 ? "" : "s", opt.min_seconds);
	for (int ci = 0; ci < NCASES; ci++) {
		const case_def *c = &CASES[ci];
		if (!opt.use_case[ci])
			continue;
		printf("%s: %s; auto = %s;", c->name, c->what, c->twin);
		for (int h = 0; h < MAX_HAND && c->hand[h]; h++)
			printf(" h%d = %s%s", h + 1, c->hand[h], strstr(c->hand[h], "_tune") ? " (its default point)" : "");
		printf("\n");
	}
	printf("\n%-10s %6s %3s %10s %10s %10s %10s", "case", "size", "thr", "h1 ms", "h2 ms", "h3 ms", "auto ms");
	if (opt.budget > 0)
		printf(" %10s", "auto-b ms");
	printf(" %-16s %7s %-13s", "best hand", "ratio", "verdict");
	if (opt.budget > 0)
		printf(" %7s %-8s %-6s", "ratio-b", "auto-b", "b pick");
	printf(" %8s", "choose s");
	if (opt.budget > 0)
		printf(" %8s", "choose-b");
	printf(" %9s\n", "max err");
	for (int ci = 0; ci < NCASES; ci++) {
		const case_def *c = &CASES[ci];
		if (!opt.use_case[ci])
			continue;
		const long *sizes = opt.nsizes ? opt.sizes : opt.quick ? &c->quick : c->sizes;
		int nsizes = opt.nsizes ? opt.nsizes : opt.quick ? 1 : c->nsizes;
		for (int s = 0; s < nsizes; s++)
			for (int h = 0; h < opt.nthreads; h++)
				if (bench_row(ctx, c, sizes[s], (int)opt.threads[h], &opt, &tot) < 0)
					return 1;
	}
	printf("\n%d of %d rows: auto within 10%% of the best hand-written plan", tot.within, tot.rows);
	if (opt.budget > 0)
		printf("; auto-b at or above it in %d of %d (b pick: in %d of them the budget kept the model's values, "
		       "so auto and auto-b time the same plan)", tot.at_or_above_b, tot.rows_b, tot.same_b);
	printf("\n");
	if (tot.wrong || check_bad)
		printf("WRONG: %d row%s, %d reference check%s failed\n", tot.wrong, tot.wrong == 1 ? "" : "s", check_bad,
		       check_bad == 1 ? "" : "s");
	else
		printf("all results verified\n");
	printf("total %.1f s (compiles %.1f s)\n", now() - t0, tot.compile_s);
	ct_ctx_free(ctx);
	if (opt.budget > 0)
		nftw(opt.store, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	return tot.wrong || check_bad ? 1 : 0;
}
