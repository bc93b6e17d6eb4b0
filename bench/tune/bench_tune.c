/* bench_tune.c: model-pruned tuning vs exhaustive measurement, tuned vs hand-written sgemm, selector overhead. */
#include <cachet.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_util.h"

/*
 * Usage: bench_tune [--size N] [--gemm SIZES] [--skip-exhaustive] [--dump FILE]   (from the repository root)
 * (--dump FILE: every point of the exhaustive search, model rank, values, cost, seconds)
 * (a) bench/tune/sgemm_tune.cachet (288 points) at N x N x N, 1 thread:
 *     ct_tune as `cachet tune` runs it (the model ranks every point, the best 5%
 *     are measured and verified) against ct_tune measuring every valid point;
 *     the winners are then re-timed back to back (interleaved, NREP times)
 *     and the ratio of the best times is reported.
 * (b) with --gemm 256,512,...: at each size, the pruned tuner's winner against
 *     the hand-written plan of examples/sgemm.cachet, re-timed back to back.
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

/* Median seconds of one run of k as it stands, 1 thread. */
static double time_kernel(ct_kernel *k)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 0;
	o.threads = 1;
	o.repeat = 3;
	ct_run_result r;
	if (ct_kernel_run(k, &o, &r) != CT_OK)
		return -1;
	if (r.seconds * 3 < 0.1) {
		o.repeat = (int)fmin(200, 0.1 / r.seconds);
		if (ct_kernel_run(k, &o, &r) != CT_OK)
			return -1;
	}
	return r.seconds;
}

typedef struct choice {
	ct_kernel *k;
	const char *const *names;
	int64_t values[16];
	int n;
} choice;

/* Re-time two configurations back to back, interleaved; medians in t[0], t[1]. */
static int duel(choice *a, choice *b, double *t)
{
	double va[NREP], vb[NREP];
	for (int r = 0; r < NREP; r++) {
		if (apply(a->k, a->names, a->values, a->n) || (va[r] = time_kernel(a->k)) < 0)
			return -1;
		if (apply(b->k, b->names, b->values, b->n) || (vb[r] = time_kernel(b->k)) < 0)
			return -1;
	}
	/* the minimum: on a shared machine noise only adds time */
	t[0] = va[0];
	t[1] = vb[0];
	for (int r = 1; r < NREP; r++) {
		t[0] = fmin(t[0], va[r]);
		t[1] = fmin(t[1], vb[r]);
	}
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

static ct_status tune(ct_kernel *k, int exhaustive, int no_default, ct_tune_result *r)
{
	ct_tune_opts o;
	ct_tune_opts_init(&o);
	o.budget = 3600;
	o.threads = 1;
	o.no_store = 1;
	o.exhaustive = exhaustive;
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
	if (tune(k, 0, 1, &p) != CT_OK || p.best < 0) {
		fprintf(stderr, "bench: pruned: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	double tp = now() - t0;
	t0 = now();
	if (tune(k, 0, 0, &q) != CT_OK || q.best < 0) {
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
	if (tune(k, 1, 1, &e) != CT_OK || e.best < 0) {
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
	double t[2], u[2];
	if (duel(&a, &b, t) == 0 && duel(&c, &b, u) == 0)
		printf("re-timed back to back (best of %d): exhaustive winner %.4f ms; model top 5%% %.4f ms "
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
static int bench_vs_hand(ct_ctx *ctx, const char *list)
{
	printf("\n(b) tuned sgemm_tune (pruned search at each size) vs examples/sgemm.cachet, 1 thread, "
	       "re-timed back to back (best of %d)\n", NREP);
	printf("%-8s %-32s %12s %12s %8s\n", "size", "tuned params", "tuned GF/s", "hand GF/s", "ratio");
	const char *p = list;
	while (*p) {
		int64_t n = strtoll(p, NULL, 10);
		ct_kernel *k = ct_kernel_parse_file(ctx, "bench/tune/sgemm_tune.cachet");
		ct_kernel *h = ct_kernel_parse_file(ctx, "examples/sgemm.cachet");
		if (!k || !h || n < 1)
			return 1;
		set_sizes(k, n);
		set_sizes(h, n);
		ct_kernel_recheck(k);
		ct_kernel_recheck(h);
		ct_tune_result r;
		if (tune(k, 0, 0, &r) != CT_OK || r.best < 0)
			return 1;
		choice a = {k, r.params, {0}, r.nparams}, b = {h, NULL, {0}, 0};
		memcpy(a.values, r.candidates[r.best].values, sizeof(int64_t) * (size_t)r.nparams);
		double t[2];
		char v[256];
		print_values(&r, r.best, v, sizeof v);
		if (duel(&a, &b, t) == 0) {
			double fl = 2.0 * (double)n * (double)n * (double)n;
			printf("%-8lld %-32s %12.2f %12.2f %8.3f\n", (long long)n, v, fl / t[0] * 1e-9,
			       fl / t[1] * 1e-9, t[1] / t[0]);
		}
		fflush(stdout);
		ct_tune_result_free(&r);
		ct_kernel_free(k);
		ct_kernel_free(h);
		const char *c = strchr(p, ',');
		p = c ? c + 1 : p + strlen(p);
	}
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
	int skip = 0, only_sel = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
			n = strtoll(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--gemm") == 0 && i + 1 < argc)
			gemm = argv[++i];
		else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
			dump = argv[++i];
		else if (strcmp(argv[i], "--skip-exhaustive") == 0)
			skip = 1;
		else if (strcmp(argv[i], "--selector") == 0)
			only_sel = 1;
		else {
			fprintf(stderr, "usage: bench_tune [--size N] [--gemm 256,512] [--skip-exhaustive] [--selector] [--dump FILE]\n");
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
	if (!only_sel)
		rc |= bench_pruning(ctx, n, skip, dump);
	if (!only_sel && gemm)
		rc |= bench_vs_hand(ctx, gemm);
	rc |= bench_selector(ctx);
	ct_ctx_free(ctx);
	return rc;
}
