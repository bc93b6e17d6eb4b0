/* bench_tune.c: model-pruned tuning vs exhaustive measurement, tuned vs hand-written sgemm, selector overhead. */
#include <cachet.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_util.h"

/*
 * Usage: bench_tune [--size N] [--gemm LIST|all] [--budget S] [--big-budget S] [--skip-exhaustive]
 *                   [--skip-pruning] [--control] [--selector] [--dump FILE]   (from the repository root)
 * (--dump FILE: every point of the exhaustive search, model rank, values, cost, seconds)
 * (a) bench/tune/sgemm_tune.cachet (288 points) at N x N x N, 1 thread:
 *     ct_tune as `cachet tune` runs it (the model ranks every point, the best 5%
 *     are measured and verified) against ct_tune measuring every valid point;
 *     the winners are then re-timed back to back (interleaved, NREP times)
 *     and the ratio of the best times is reported.
 * (b) with --gemm LIST (N or MxNxK, comma-separated; "all" = every size and
 *     shape of bench/gemm): at each, ct_tune on sgemm_tune starting from the
 *     hand-written tiles of examples/sgemm.cachet (so its default point is
 *     the hand-written plan; --budget S seconds per size, --big-budget S for
 *     sizes over 4e10 flops), then the tuned and the hand-written kernels
 *     timed interleaved, NREP rounds (5 where a run takes over 0.5 s):
 *     medians, the ratio hand/tuned of the medians and the spread of the
 *     per-round ratios (median absolute deviation). --control adds the
 *     hand-written kernel timed against itself the same way: the noise floor.
 * (c) ct_select warm: ns per call, against a ct_store_get per call (what the
 *     selector's memory saves).
 */

#define NREP 7

static void set_sizes(ct_kernel *k, int64_t n)
{
	ct_kernel_set_param(k, "M", n);
	ct_kernel_set_param(k, "N", n);
	ct_kernel_set_param(k, "K", n);
}

/* Set the tunable params of k to values (names[i] = values[i]). */
static int apply(ct_kernel *k, const char *const *names, const int64_t *values, int n)
{
	for (int i = 0; i < n; i++)
		if (ct_kernel_set_param(k, names[i], values[i]) != CT_OK)
			return -1;
	return ct_kernel_recheck(k) == CT_OK ? 0 : -1;
}

/* Median seconds of one run of k as it stands, 1 thread: an untimed warm-up
 * run, then enough runs to last 0.1 s (at least one, at most 200). */
static double time_kernel(ct_kernel *k)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 0;
	o.threads = 1;
	o.repeat = 1;
	ct_run_result r;
	if (ct_kernel_run(k, &o, &r) != CT_OK)
		return -1;
	o.repeat = r.seconds > 0 ? (int)fmax(1, fmin(200, ceil(0.1 / r.seconds))) : 3;
	if (ct_kernel_run(k, &o, &r) != CT_OK)
		return -1;
	return r.seconds;
}

typedef struct choice {
	ct_kernel *k;
	const char *const *names;
	int64_t values[16];
	int n;
} choice;

/* Re-time two configurations back to back, interleaved (the order swapped
 * each round), rounds times (at most NREP): the medians in t[0], t[1], the
 * median of the per-round ratios b/a in t[2] and their median absolute
 * deviation (the spread) in t[3]. */
static int duel(choice *a, choice *b, int rounds, double *t)
{
	double va[NREP], vb[NREP], ratio[NREP], dev[NREP];
	if (rounds > NREP)
		rounds = NREP;
	for (int r = 0; r < rounds; r++) {
		for (int s = 0; s < 2; s++) {
			bool first = (s == 0) == (r % 2 == 0);
			choice *c = first ? a : b;
			double *out = first ? &va[r] : &vb[r];
			if (apply(c->k, c->names, c->values, c->n) || (*out = time_kernel(c->k)) < 0)
				return -1;
		}
		ratio[r] = vb[r] / va[r];
	}
	t[0] = median(va, rounds);
	t[1] = median(vb, rounds);
	t[2] = median(ratio, rounds);
	for (int r = 0; r < rounds; r++)
		dev[r] = fabs(ratio[r] - t[2]);
	t[3] = median(dev, rounds);
	return 0;
}

static void print_values(const ct_tune_result *r, int i, char *out, size_t n)
{
	size_t len = 0;
	out[0] = 0;
	for (int p = 0; p < r->nparams && len < n; p++)
		len += (size_t)snprintf(out + len, n - len, "%s%s=%lld", p ? " " : "", r->params[p],
		                        (long long)r->candidates[i].values[p]);
}

static void progress(void *ud, const char *phase, int done, int total)
{
	(void)ud;
	if (done == total || done % 16 == 0)
		fprintf(stderr, "\r  %s %d/%d   ", phase, done, total);
	if (done == total)
		fputc('\n', stderr);
}

static ct_status tune(ct_kernel *k, int exhaustive, int no_default, double budget, ct_tune_result *r)
{
	ct_tune_options o;
	ct_tune_options_init(&o);
	o.budget = budget;
	o.threads = 1;
	o.no_store = 1;
	o.exhaustive = exhaustive;
	/* the model's pruning: its first 5%, as before the tuner measured until the budget */
	o.fraction = exhaustive ? 0 : 0.05;
	o.no_default = no_default;
	o.verify = !exhaustive; /* the exhaustive reference only needs times */
	o.progress = progress;
	return ct_tune(k, &o, r);
}

/* (a) */
static int bench_pruning(ct_ctx *ctx, int64_t n, int skip_exhaustive, const char *dump)
{
	ct_kernel *k = ct_kernel_parse_file(ctx, "bench/tune/sgemm_tune.cachet");
	if (!k) {
		fprintf(stderr, "bench: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	set_sizes(k, n);
	ct_kernel_recheck(k);
	printf("(a) model-pruned vs exhaustive tuning: bench/tune/sgemm_tune.cachet at %lld^3, f32, 1 thread\n",
	       (long long)n);
	ct_tune_result p, q, e;
	double t0 = now();
	if (tune(k, 0, 1, 3600, &p) != CT_OK || p.best < 0) {
		fprintf(stderr, "bench: pruned: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	double tp = now() - t0;
	t0 = now();
	if (tune(k, 0, 0, 3600, &q) != CT_OK || q.best < 0) {
		fprintf(stderr, "bench: pruned + default: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	double tq = now() - t0;
	char vp[256], vq[256], ve[256];
	print_values(&p, p.best, vp, sizeof vp);
	print_values(&q, q.best, vq, sizeof vq);
	printf("%-16s %6s %6s %13s  %-32s %8s %8s %8s\n", "search", "space", "valid", "measured", "best",
	       "GFLOP/s", "model s", "wall s");
	printf("%-16s %6lld %6d %6d (%4.1f%%)  %-32s %8.2f %8.2f %8.1f\n", "model top 5%", (long long)p.space,
	       p.ncandidates, p.nmeasured, 100.0 * p.nmeasured / p.ncandidates, vp,
	       p.candidates[p.best].gflops, p.model_seconds, tp);
	printf("%-16s %6lld %6d %6d (%4.1f%%)  %-32s %8.2f %8.2f %8.1f\n", "default + model", (long long)q.space,
	       q.ncandidates, q.nmeasured, 100.0 * q.nmeasured / q.ncandidates, vq,
	       q.candidates[q.best].gflops, q.model_seconds, tq);
	if (skip_exhaustive) {
		ct_tune_result_free(&p);
		ct_tune_result_free(&q);
		ct_kernel_free(k);
		return 0;
	}
	t0 = now();
	if (tune(k, 1, 1, 3600, &e) != CT_OK || e.best < 0) {
		fprintf(stderr, "bench: exhaustive: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	double te = now() - t0;
	print_values(&e, e.best, ve, sizeof ve);
	printf("%-16s %6lld %6d %6d (%4.1f%%)  %-32s %8.2f %8.2f %8.1f\n", "exhaustive", (long long)e.space,
	       e.ncandidates, e.nmeasured, 100.0 * e.nmeasured / e.ncandidates, ve,
	       e.candidates[e.best].gflops, e.model_seconds, te);
	/* how good the model's order is: the best measured time among its first k% */
	printf("model rank of the exhaustive winner: %d of %d; best of the model's first k%% "
	       "(exhaustive times), as a share of the winner's GFLOP/s:", e.best, e.ncandidates);
	static const double ks[] = {0.05, 0.10, 0.25, 0.50};
	for (int j = 0; j < 4; j++) {
		int m = (int)ceil(ks[j] * e.ncandidates);
		double b = 0;
		for (int i = 0; i < m && i < e.ncandidates; i++)
			if (e.candidates[i].seconds > 0 && (b == 0 || e.candidates[i].seconds < b))
				b = e.candidates[i].seconds;
		printf(" %.0f%%: %.3f", ks[j] * 100, b > 0 ? e.candidates[e.best].seconds / b : 0);
	}
	printf("\n");
	if (dump) {
		/* every measured point: its values, model cost and time, for offline study of the ranking */
		FILE *f = fopen(dump, "w");
		for (int i = 0; f && i < e.ncandidates; i++) {
			char v[256];
			print_values(&e, i, v, sizeof v);
			fprintf(f, "%d\t%s\t%.6g\t%.9g\n", i, v, e.candidates[i].cost, e.candidates[i].seconds);
		}
		if (f)
			fclose(f);
	}
	choice a = {k, p.params, {0}, p.nparams}, b = {k, e.params, {0}, e.nparams},
	       c = {k, q.params, {0}, q.nparams};
	memcpy(a.values, p.candidates[p.best].values, sizeof(int64_t) * (size_t)p.nparams);
	memcpy(b.values, e.candidates[e.best].values, sizeof(int64_t) * (size_t)e.nparams);
	memcpy(c.values, q.candidates[q.best].values, sizeof(int64_t) * (size_t)q.nparams);
	double t[4], u[4];
	if (duel(&a, &b, NREP, t) == 0 && duel(&c, &b, NREP, u) == 0)
		printf("re-timed back to back (medians of %d): exhaustive winner %.4f ms; model top 5%% %.4f ms "
		       "(exhaustive/pruned speed %.3f); default + model %.4f ms (%.3f); measured %d and %d vs %d "
		       "candidates (%.1fx fewer)\n",
		       NREP, t[1] * 1e3, t[0] * 1e3, t[1] / t[0], u[0] * 1e3, u[1] / u[0], p.nmeasured,
		       q.nmeasured, e.nmeasured, (double)e.nmeasured / p.nmeasured);
	ct_tune_result_free(&p);
	ct_tune_result_free(&q);
	ct_tune_result_free(&e);
	ct_kernel_free(k);
	return 0;
}

/* (b) */

typedef struct gshape {
	int64_t m, n, k;
} gshape;

/* bench/gemm's problems (bench/gemm/bench_gemm.c: its sizes, then its rectangular shapes). */
static const gshape gemm_all[] = {{32, 32, 32},       {64, 64, 64},       {100, 100, 100},
                                  {127, 127, 127},    {256, 256, 256},    {257, 257, 257},
                                  {512, 512, 512},    {1000, 1000, 1000}, {1024, 1024, 1024},
                                  {2048, 2048, 2048}, {4096, 4096, 4096}, {2048, 32, 2048},
                                  {32, 2048, 2048},   {2048, 2048, 32}};
#define GEMM_MAX 32

/* "all", or N / MxNxK comma-separated, into out; the count, 0 if malformed. */
static int parse_gemm(const char *s, gshape *out)
{
	if (strcmp(s, "all") == 0) {
		int n = (int)(sizeof gemm_all / sizeof gemm_all[0]);
		memcpy(out, gemm_all, sizeof gemm_all);
		return n;
	}
	int n = 0;
	while (*s && n < GEMM_MAX) {
		int64_t v[3];
		int got = 0;
		char *end;
		for (;;) {
			v[got] = strtoll(s, &end, 10);
			if (end == s || v[got] < 1)
				return 0;
			got++;
			s = end;
			if (*s != 'x' || got == 3)
				break;
			s++;
		}
		if (got == 2 || (*s && *s != ','))
			return 0;
		out[n++] = got == 1 ? (gshape){v[0], v[0], v[0]} : (gshape){v[0], v[1], v[2]};
		if (*s)
			s++;
	}
	return *s ? 0 : n;
}

/* The integer after `key` in text (after spaces), or -1. */
static int64_t number_after(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ')
		p++;
	char *end;
	long long v = strtoll(p, &end, 10);
	return end == p ? -1 : v;
}

/* The tiles of the hand-written plan (examples/sgemm.cachet) as sgemm_tune's
 * NC, KC, MC, NR, MR: read from its schedule's tile(j=, k=, i=) and the splits
 * of jj and ii. 0 when they are not found there (the plan was rewritten):
 * then the tuner starts from sgemm_tune's own defaults. */
static int hand_tiles(const char *path, int64_t *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = 0;
	fclose(f);
	const char *sched = strstr(text, "\nschedule");
	const char *tile = sched ? strstr(sched, "tile(") : NULL;
	v[0] = number_after(tile, "j=");
	v[1] = number_after(tile, "k=");
	v[2] = number_after(tile, "ih="); /* the row blocks' tile (rows cut in halves first) */
	if (v[2] < 1)
		v[2] = number_after(tile, "i=");
	v[3] = number_after(sched, "split(jj,");
	v[4] = number_after(sched, "split(ii,");
	for (int i = 0; i < 5; i++)
		if (v[i] < 1)
			return 0;
	return 1;
}

static void set_shape(ct_kernel *k, gshape s)
{
	ct_kernel_set_param(k, "M", s.m);
	ct_kernel_set_param(k, "N", s.n);
	ct_kernel_set_param(k, "K", s.k);
}

static void put_values(const char *const *names, const int64_t *v, int n, char *out, size_t cap)
{
	size_t len = 0;
	out[0] = 0;
	for (int p = 0; p < n && len < cap; p++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s=%lld", p ? " " : "", names[p], (long long)v[p]);
}

static int bench_vs_hand(ct_ctx *ctx, const char *list, double budget, double big_budget, int control)
{
	gshape shapes[GEMM_MAX];
	int nshapes = parse_gemm(list, shapes);
	if (nshapes == 0) {
		fprintf(stderr, "bench: --gemm takes all or N[,MxNxK...]\n");
		return 2;
	}
	static const char *const tnames[] = {"NC", "KC", "MC", "NR", "MR"};
	int64_t hand[5] = {0};
	int known = hand_tiles("examples/sgemm.cachet", hand);
	char hv[128];
	put_values(tnames, hand, 5, hv, sizeof hv);
	printf("\n(b) tuned sgemm_tune vs the hand-written examples/sgemm.cachet (%s), 1 thread\n",
	       known ? hv : "tiles not recognised: the tuner starts from sgemm_tune's defaults");
	printf("    tuner: default point = the hand-written tiles, budget %.0f s per size (%.0f s over 4e10 "
	       "flops); then both timed interleaved, medians of %d rounds (5 where a run takes > 0.5 s)\n",
	       budget, big_budget, NREP);
	printf("    decision: default = no candidate beat it; kept = a candidate looked faster, not "
	       "confirmed; tuned = confirmed faster\n");
	printf("%-15s %-32s %-8s %9s %9s %9s %7s %7s %-5s %8s\n", "shape MxNxK", "tuned params", "decision",
	       "measured", "tuned GF", "hand GF", "ratio", "spread", "holds", "tune s");
	int total_measured = 0, total_valid = 0, nhold = 0, nnoise = 0, nfail = 0;
	double total_tune = 0;
	for (int i = 0; i < nshapes; i++) {
		gshape g = shapes[i];
		ct_kernel *k = ct_kernel_parse_file(ctx, "bench/tune/sgemm_tune.cachet");
		ct_kernel *h = ct_kernel_parse_file(ctx, "examples/sgemm.cachet");
		if (!k || !h) {
			fprintf(stderr, "bench: %s\n", ct_ctx_last_message(ctx));
			return 1;
		}
		set_shape(k, g);
		set_shape(h, g);
		if (known && apply(k, tnames, hand, 5) != 0) {
			fprintf(stderr, "bench: the hand-written tiles do not fit sgemm_tune: %s\n", ct_ctx_last_message(ctx));
			return 1;
		}
		if (ct_kernel_recheck(k) != CT_OK || ct_kernel_recheck(h) != CT_OK) {
			fprintf(stderr, "bench: %s\n", ct_ctx_last_message(ctx));
			return 1;
		}
		double fl = 2.0 * (double)g.m * (double)g.n * (double)g.k;
		ct_tune_result r;
		double t0 = now();
		if (tune(k, 0, 0, fl > 4e10 ? big_budget : budget, &r) != CT_OK || r.best < 0) {
			fprintf(stderr, "bench: tune %lldx%lldx%lld: %s\n", (long long)g.m, (long long)g.n,
			        (long long)g.k, ct_ctx_last_message(ctx));
			return 1;
		}
		double tt = now() - t0;
		total_tune += tt;
		total_measured += r.nmeasured;
		total_valid += r.ncandidates;
		choice a = {k, r.params, {0}, r.nparams}, b = {h, NULL, {0}, 0};
		memcpy(a.values, r.candidates[r.best].values, sizeof(int64_t) * (size_t)r.nparams);
		/* one run's time picks the rounds: long runs get the minimum of 5 */
		double one = time_kernel(h);
		double t[4];
		char v[128], shape[48], meas[32];
		put_values(r.params, a.values, r.nparams, v, sizeof v);
		snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)g.m, (long long)g.n, (long long)g.k);
		snprintf(meas, sizeof meas, "%d/%d%s", r.nmeasured, r.ncandidates, r.budget_hit ? "b" : "");
		if (one > 0 && duel(&a, &b, one > 0.5 ? 5 : NREP, t) == 0) {
			/* ratio = hand time / tuned time: >= 1 when the tuned kernel is at least as fast */
			double ratio = t[1] / t[0];
			const char *holds = ratio >= 1 ? "yes" : 1 - ratio <= t[3] ? "noise" : "NO";
			nhold += ratio >= 1;
			nnoise += ratio < 1 && 1 - ratio <= t[3];
			nfail += ratio < 1 && 1 - ratio > t[3];
			static const char *const dn[] = {"nodflt", "default", "kept", "tuned"};
			printf("%-15s %-32s %-8s %9s %9.2f %9.2f %7.3f %7.3f %-5s %8.1f", shape, v,
			       r.decision >= 0 && r.decision <= 3 ? dn[r.decision] : "?", meas, fl / t[0] * 1e-9,
			       fl / t[1] * 1e-9, ratio, t[3], holds, tt);
			/* the noise floor: the hand-written kernel against itself, the same way */
			double c[4];
			if (control && duel(&b, &b, one > 0.5 ? 5 : NREP, c) == 0)
				printf("   control %.3f (spread %.3f)", c[1] / c[0], c[3]);
			printf("\n");
		} else {
			printf("%-15s %-32s timing failed: %s\n", shape, v, ct_ctx_last_message(ctx));
			nfail++;
		}
		fflush(stdout);
		ct_tune_result_free(&r);
		ct_kernel_free(k);
		ct_kernel_free(h);
	}
	printf("tuned >= hand-written: %d of %d rows; below but within the spread: %d; below beyond it: %d\n",
	       nhold, nshapes, nnoise, nfail);
	printf("model pruning: measured %d of %d valid candidates in all (%.1f%%, %.1fx fewer than "
	       "measuring every one); tuning took %.0f s\n",
	       total_measured, total_valid, 100.0 * total_measured / (total_valid ? total_valid : 1),
	       (double)total_valid / (total_measured ? total_measured : 1), total_tune);
	return 0;
}

/* (c) */
static int bench_selector(ct_ctx *ctx)
{
	char dir[] = "/tmp/ct_bench_tune_XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	ct_kernel *k = ct_kernel_parse_file(ctx, "bench/tune/sgemm_tune.cachet");
	if (!k)
		return 1;
	char family[128];
	ct_dtype t;
	ct_kernel_tune_key(k, family, sizeof family, NULL, 0, &t);
	ct_store *s = ct_store_open(ctx, dir, CT_STORE_QUIET);
	/* 64 records of size classes, as a tuned device might hold */
	for (int i = 0; i < 64; i++) {
		char cls[64];
		int64_t n = 64 + 64 * i;
		snprintf(cls, sizeof cls, "M=%lld:N=%lld:K=%lld", (long long)n, (long long)n, (long long)n);
		ct_tune_record r;
		memset(&r, 0, sizeof r);
		r.family = family;
		r.dtype = t;
		r.size_class = cls;
		r.params = "NC=256:KC=128:MC=64:NR=32:MR=8";
		r.seconds = 1e-3;
		r.gflops = 1;
		r.verified = 1;
		r.tuner_version = "1";
		ct_store_put(s, &r, NULL);
	}
	ct_selector *sel = ct_selector_new(k, dir);
	if (!sel)
		return 1;
	int64_t sizes[8][3];
	for (int i = 0; i < 8; i++)
		sizes[i][0] = sizes[i][1] = sizes[i][2] = 64 + 64 * i * 7 + (i % 2); /* exact and nearest */
	ct_solution sol;
	for (int i = 0; i < 8; i++)
		ct_select(sel, sizes[i], 3, &sol); /* cold: fills the memory */
	const long calls = 4000000;
	double v[NREP], w[NREP];
	long sink = 0;
	for (int r = 0; r < NREP; r++) {
		double t0 = now();
		for (long c = 0; c < calls; c++) {
			ct_select(sel, sizes[c & 7], 3, &sol);
			sink += sol.npieces;
		}
		v[r] = (now() - t0) / (double)calls;
	}
	const long gets = 20000;
	for (int r = 0; r < NREP; r++) {
		double t0 = now();
		for (long c = 0; c < gets; c++) {
			ct_tune_record rec;
			int found;
			ct_store_get(s, family, t, "M=512:N=512:K=512", &rec, &found);
			sink += found;
		}
		w[r] = (now() - t0) / (double)gets;
	}
	double sv = median(v, NREP), sw = median(w, NREP);
	printf("\n(c) solution selector, warm (8 problem sizes in turn, 64 records; median of %d)\n", NREP);
	printf("%-28s %12s\n", "lookup", "ns per call");
	printf("%-28s %12.1f\n", "ct_select (in memory)", sv * 1e9);
	printf("%-28s %12.1f\n", "ct_store_get (SQLite)", sw * 1e9);
	printf("ratio %.0fx; target <= 1000 ns: %s   (%ld)\n", sw / sv, sv * 1e9 <= 1000 ? "met" : "NOT met",
	       sink % 2);
	ct_selector_free(sel);
	ct_store_close(s);
	ct_kernel_free(k);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) != 0;
}

int main(int argc, char **argv)
{
	int64_t n = 512;
	const char *gemm = NULL, *dump = NULL;
	int skip = 0, only_sel = 0, skip_pruning = 0, control = 0;
	double budget = 90, big_budget = 420;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
			n = strtoll(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--gemm") == 0 && i + 1 < argc)
			gemm = argv[++i];
		else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
			dump = argv[++i];
		else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
			budget = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--big-budget") == 0 && i + 1 < argc)
			big_budget = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--control") == 0)
			control = 1;
		else if (strcmp(argv[i], "--skip-pruning") == 0)
			skip_pruning = 1;
		else if (strcmp(argv[i], "--skip-exhaustive") == 0)
			skip = 1;
		else if (strcmp(argv[i], "--selector") == 0)
			only_sel = 1;
		else {
			fprintf(stderr, "usage: bench_tune [--size N] [--gemm all|256,2048x32x2048] [--budget S] [--big-budget S] "
			                "[--control] [--skip-exhaustive] [--skip-pruning] [--selector] [--dump FILE]\n");
			return 2;
		}
	}
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	ct_probe_info pi;
	ct_probe_run(ctx, 0, &pi);
	printf("cpu: %s\n", pi.model);
	int rc = 0;
	if (!only_sel && !skip_pruning)
		rc |= bench_pruning(ctx, n, skip, dump);
	if (!only_sel && gemm)
		rc |= bench_vs_hand(ctx, gemm, budget, big_budget, control);
	rc |= bench_selector(ctx);
	ct_ctx_free(ctx);
	return rc;
}
