/* test_threads.c: ct_kernel_predict_threads (predict --threads) against references built by
 * hand: each thread's share of the parallel band written as kernels of its own (the band's
 * rows, or the partial and whole rows of a collapsed band), whose traces the simulator counts
 * for the private levels, and interleave one access from each thread in turn for the shared
 * ones. */
#include "../../bench/model/random_kernels.h"
#include "interp/interp.h"
#include "model/model_int.h"

#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* A trace in memory: (buffer, offset) pairs. */
typedef struct rtrace {
	int32_t *buf;
	int64_t *off;
	int64_t n, cap;
} rtrace;

static ct_status collect(void *ud, const interp_access *acc, int n)
{
	rtrace *t = ud;
	for (int i = 0; i < n; i++) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 4096;
			t->buf = realloc(t->buf, sizeof *t->buf * (size_t)t->cap);
			t->off = realloc(t->off, sizeof *t->off * (size_t)t->cap);
		}
		t->buf[t->n] = acc[i].buffer;
		t->off[t->n++] = acc[i].offset;
	}
	return CT_OK;
}

/* Append the trace of src with params name[i] = val[i] to t; false on failure. */
static bool append_trace(rtrace *t, const char *src, const char *const *name, const int64_t *val, int nv)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "ref.cachet");
	bool ok = k != NULL;
	for (int i = 0; ok && i < nv; i++)
		ok = ct_kernel_set_param(k, name[i], val[i]) == CT_OK;
	ok = ok && ct_kernel_recheck(k) == CT_OK;
	ct_looptree *lt = ok ? ct_kernel_lower(k, 1) : NULL;
	ok = lt && interp_trace_batch(lt, collect, t) == CT_OK;
	if (!ok)
		fprintf(stderr, "  reference: %s\n", ct_ctx_last_message(ctx));
	ct_looptree_free(lt);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return ok;
}

/* The buffers of the kernels (all alike): those of src. */
static bool ref_buffers(const char *src, sim_buffer **buf, int *nbuf)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "ref.cachet");
	ct_looptree *lt = k ? ct_kernel_lower(k, 1) : NULL;
	bool ok = lt && sim_tree_buffers(lt, buf) == CT_OK;
	*nbuf = lt ? lt->narrays : 0;
	ct_looptree_free(lt);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return ok;
}

/* The references' counts: level l of spec per thread (private levels) or of the interleaved
 * traces (shared ones), into misses[l * (nt + 1) + i] (i = nt: the shared count). */
static void ref_counts(const rtrace *tr, int nt, const sim_spec *spec, const sim_buffer *buf, int nbuf,
                       int64_t *misses)
{
	ct_ctx *ctx = ct_ctx_new();
	for (int i = 0; i < nt; i++) {
		sim *s = sim_new(ctx, spec, buf, nbuf, 0);
		for (int64_t a = 0; s && a < tr[i].n; a++)
			sim_access(s, tr[i].buf[a], tr[i].off[a], 0);
		uint64_t m[SIM_MAX_LEVELS] = {0};
		CHECK(s && sim_result(s, m, NULL, NULL) == CT_OK);
		for (int l = 0; l < spec->nlevels; l++)
			misses[l * (nt + 1) + i] = (int64_t)m[l];
		sim_free(s);
	}
	sim *s = sim_new(ctx, spec, buf, nbuf, 0);
	/* nt >= 1 here; the cast keeps gcc -O1's range analysis (make sanitize) from seeing a
	 * negative count */
	int64_t *pos = calloc(nt > 0 ? (size_t)nt : 1, sizeof *pos);
	for (bool more = true; s && more;) {
		more = false;
		for (int i = 0; i < nt; i++)
			if (pos[i] < tr[i].n) {
				sim_access(s, tr[i].buf[pos[i]], tr[i].off[pos[i]], 0);
				pos[i]++;
				more = true;
			}
	}
	uint64_t m[SIM_MAX_LEVELS] = {0};
	CHECK(s && sim_result(s, m, NULL, NULL) == CT_OK);
	for (int l = 0; l < spec->nlevels; l++)
		misses[l * (nt + 1) + nt] = (int64_t)m[l];
	free(pos);
	sim_free(s);
	ct_ctx_free(ctx);
}

/* Predict src with nt threads at spec_text and compare with the references' traces tr. */
static void compare(const char *what, const char *src, int nt, const char *spec_text, const rtrace *tr)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "par.cachet");
	sim_spec spec;
	CHECK(k && sim_spec_parse(ctx, spec_text, &spec) == CT_OK);
	ct_thread_result r;
	memset(&r, 0, sizeof r);
	ct_status st = k ? ct_kernel_predict_threads(k, spec_text, nt, &r) : CT_ERR_USAGE;
	CHECKF(st == CT_OK, "%s: %s", what, ct_ctx_last_message(ctx));
	sim_buffer *buf = NULL;
	int nbuf = 0;
	CHECK(ref_buffers(src, &buf, &nbuf));
	int64_t *ref = calloc((size_t)(spec.nlevels * (nt + 1)), sizeof *ref);
	if (st == CT_OK && buf) {
		ref_counts(tr, nt, &spec, buf, nbuf, ref);
		CHECKF(r.parallel && r.team == nt, "%s: parallel %d team %d", what, r.parallel, r.team);
		for (int i = 0; i < nt; i++)
			CHECKF(r.thread_accesses[i] == tr[i].n, "%s: thread %d: %lld accesses, reference %lld", what, i,
			       (long long)r.thread_accesses[i], (long long)tr[i].n);
		for (int l = 0; l < spec.nlevels; l++) {
			CHECKF(r.level[l].exact, "%s: level %d not exact (%s)", what, l + 1,
			       r.level[l].why ? r.level[l].why : "");
			if (r.level[l].private_level) {
				int64_t sum = 0;
				for (int i = 0; i < nt; i++) {
					CHECKF(r.level[l].thread_misses[i] == ref[l * (nt + 1) + i],
					       "%s: level %d thread %d: %lld, reference %lld", what, l + 1, i,
					       (long long)r.level[l].thread_misses[i], (long long)ref[l * (nt + 1) + i]);
					sum += r.level[l].thread_misses[i];
				}
				CHECK(sum == r.level[l].misses);
			} else {
				CHECKF(r.level[l].misses == ref[l * (nt + 1) + nt], "%s: shared level %d: %lld, reference %lld",
				       what, l + 1, (long long)r.level[l].misses, (long long)ref[l * (nt + 1) + nt]);
			}
		}
		printf("  %s, %d threads on %s: L1 per thread", what, nt, spec_text);
		for (int i = 0; i < nt; i++)
			printf(" %lld", (long long)r.level[0].thread_misses[i]);
		printf(", shared %lld\n", (long long)r.level[spec.nlevels - 1].misses);
	}
	free(ref);
	free(buf);
	ct_thread_result_free(&r);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void free_traces(rtrace *tr, int nt)
{
	for (int i = 0; i < nt; i++) {
		free(tr[i].buf);
		free(tr[i].off);
	}
}

/* libgomp's static schedule of n iterations over nt threads: thread i's [lo, hi). */
static void chunk(int64_t n, int nt, int i, int64_t *lo, int64_t *hi)
{
	int64_t q = n / nt, r = n % nt;
	*lo = i < r ? i * (q + 1) : q * i + r;
	*hi = *lo + q + (i < r);
}

static const char *const specs[] = {
    "2K:64:2,64K:64",                          /* LRU private (warped), FA shared */
    "1K:64:4:plru:private,8K:64:4:plru:shared", /* PLRU both */
    "2K:64:private,16K:32:4",                  /* FA private (walked), set-assoc shared */
};

/* parallelize(i) over 67 rows, 3 threads: rows 0-22, 23-44, 45-66. */
static void test_rows(void)
{
	const char *src = "kernel t1\nparam N = 67, M = 96\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	                  "for (i: N, j: M) {\n  B[i, j] = A[i, j] * 2.0\n}\nplan {\n  parallelize(i)\n}\n";
	const char *ref = "kernel r1\nparam N = 67, M = 96, S = 0, L = 1\narray A : f32[N, M] input\n"
	                  "array B : f32[N, M] output\nfor (i: L, j: M) {\n  B[i + S, j] = A[i + S, j] * 2.0\n}\n";
	const char *const names[] = {"S", "L"};
	for (int nt = 2; nt <= 4; nt++) {
		rtrace tr[4];
		memset(tr, 0, sizeof tr);
		for (int i = 0; i < nt; i++) {
			int64_t lo, hi;
			chunk(67, nt, i, &lo, &hi);
			int64_t v[] = {lo, hi - lo};
			CHECK(append_trace(&tr[i], ref, names, v, 2));
		}
		for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
			compare("rows", src, nt, specs[s], tr);
		free_traces(tr, nt);
	}
}

/* parallelize(i, j) collapsed over N x M of a matmul on nt threads: flattened chunks, each a
 * partial row, whole rows and a partial row of (i, j) (5 x 7, 3 threads: 0-11, 12-23, 24-34). */
static void collapsed(int64_t N, int64_t M, int64_t K, int nt)
{
	char src[512], row[512], rows[512];
	snprintf(src, sizeof src,
	         "kernel mm\nparam N = %lld, M = %lld, K = %lld\narray A : f64[N, K] input\narray B : f64[K, M] input\n"
	         "array C : f64[N, M] inout\nfor (i: N, j: M, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	         "plan {\n  parallelize(i, j)\n}\n",
	         (long long)N, (long long)M, (long long)K);
	snprintf(row, sizeof row,
	         "kernel mr\nparam N = %lld, M = %lld, K = %lld, I = 0, J = 0, L = 1\narray A : f64[N, K] input\n"
	         "array B : f64[K, M] input\narray C : f64[N, M] inout\nfor (j: L, k: K) {\n"
	         "  C[I, j + J] += A[I, k] * B[k, j + J]\n}\n",
	         (long long)N, (long long)M, (long long)K);
	snprintf(rows, sizeof rows,
	         "kernel mw\nparam N = %lld, M = %lld, K = %lld, I = 0, L = 1\narray A : f64[N, K] input\n"
	         "array B : f64[K, M] input\narray C : f64[N, M] inout\nfor (i: L, j: M, k: K) {\n"
	         "  C[i + I, j] += A[i + I, k] * B[k, j]\n}\n",
	         (long long)N, (long long)M, (long long)K);
	const char *const rn[] = {"I", "J", "L"}, *const wn[] = {"I", "L"};
	rtrace tr[4];
	memset(tr, 0, sizeof tr);
	for (int t = 0; t < nt; t++) {
		int64_t lo, hi;
		chunk(N * M, nt, t, &lo, &hi);
		int64_t f = lo;
		if (f % M) { /* the partial first row */
			int64_t end = (f / M + 1) * M < hi ? (f / M + 1) * M : hi;
			int64_t v[] = {f / M, f % M, end - f};
			CHECK(append_trace(&tr[t], row, rn, v, 3));
			f = end;
		}
		if (hi - f >= M) { /* whole rows */
			int64_t v[] = {f / M, (hi - f) / M};
			CHECK(append_trace(&tr[t], rows, wn, v, 2));
			f += (hi - f) / M * M;
		}
		if (f < hi) { /* the partial last row */
			int64_t v[] = {f / M, 0, hi - f};
			CHECK(append_trace(&tr[t], row, rn, v, 3));
		}
	}
	char what[64];
	snprintf(what, sizeof what, "collapsed %lldx%lldx%lld", (long long)N, (long long)M, (long long)K);
	for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
		compare(what, src, nt, specs[s], tr);
	free_traces(tr, nt);
}

/* Small (every chunk mid-row), and long enough for the rows to warp inside a chunk. */
static void test_collapsed(void)
{
	collapsed(5, 7, 24, 3);
	collapsed(41, 32, 4, 3);
	collapsed(64, 16, 2, 4);
	collapsed(200, 4, 1, 3);
	collapsed(301, 3, 2, 4);
}

/* A parallel loop the model tree cuts in two pieces (the if on i decides differently below and
 * above row 10): each thread's rows still come from one static split of the whole loop. */
static void test_pieces(void)
{
	const char *src = "kernel pc\nparam N = 50, M = 64\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	                  "for (i: N, j: M) {\n  if (i < 10) {\n    B[i, j] = A[i, j]\n  } else {\n"
	                  "    B[i, j] = A[i, j] + A[i - 1, j]\n  }\n}\nplan {\n  parallelize(i)\n}\n";
	const char *ref = "kernel rp\nparam N = 50, M = 64, S = 0, L = 1\narray A : f32[N, M] input\n"
	                  "array B : f32[N, M] output\nfor (i: L, j: M) {\n  if (i + S < 10) {\n    B[i + S, j] = A[i + S, j]\n"
	                  "  } else {\n    B[i + S, j] = A[i + S, j] + A[i + S - 1, j]\n  }\n}\n";
	const char *const names[] = {"S", "L"};
	for (int nt = 2; nt <= 4; nt += 2) {
		rtrace tr[4];
		memset(tr, 0, sizeof tr);
		for (int i = 0; i < nt; i++) {
			int64_t lo, hi;
			chunk(50, nt, i, &lo, &hi);
			int64_t v[] = {lo, hi - lo};
			CHECK(append_trace(&tr[i], ref, names, v, 2));
		}
		for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
			compare("pieces", src, nt, specs[s], tr);
		free_traces(tr, nt);
	}
}

/* A split loop's main and tail versions run as one parallel loop (cgen.c's
 * gen_parallel_versions): 67 rows in blocks of 16, 5 blocks over the threads. */
static void test_versions(void)
{
	const char *src = "kernel t2\nparam N = 67, M = 40\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	                  "for (i: N, j: M) {\n  B[i, j] = A[i, j] * 2.0\n}\nschedule {\n  ii = split(i, 16)\n}\n"
	                  "plan {\n  parallelize(i)\n}\n";
	const char *ref = "kernel r2\nparam N = 67, M = 40, S = 0, L = 1\narray A : f32[N, M] input\n"
	                  "array B : f32[N, M] output\nfor (i: L, j: M) {\n  B[i + S, j] = A[i + S, j] * 2.0\n}\n";
	const char *const names[] = {"S", "L"};
	for (int nt = 2; nt <= 3; nt++) {
		rtrace tr[4];
		memset(tr, 0, sizeof tr);
		for (int i = 0; i < nt; i++) {
			int64_t lo, hi;
			chunk(5, nt, i, &lo, &hi);
			int64_t top = hi * 16 < 67 ? hi * 16 : 67;
			int64_t v[] = {lo * 16, top - lo * 16};
			if (top > lo * 16)
				CHECK(append_trace(&tr[i], ref, names, v, 2));
		}
		for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
			compare("versions", src, nt, specs[s], tr);
		free_traces(tr, nt);
	}
}

/* parallelize(i, j) over the main and tail versions of both (pgrid.c): the pairs of an i block
 * and a j block, 5 x 3 = 15, numbered i-block major, split over the threads. */
static void test_grid(void)
{
	const char *src = "kernel t3\nparam N = 67, M = 40\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	                  "for (i: N, j: M) {\n  B[i, j] = A[i, j] * 2.0\n}\nschedule {\n  ii, jj = tile(i=16, j=16)\n"
	                  "  reorder(i, j, ii, jj)\n}\nplan {\n  parallelize(i, j)\n}\n";
	const char *ref = "kernel r3\nparam N = 67, M = 40, R = 0, RL = 1, C = 0, CL = 1\narray A : f32[N, M] input\n"
	                  "array B : f32[N, M] output\nfor (i: RL, j: CL) {\n  B[i + R, j + C] = A[i + R, j + C] * 2.0\n}\n";
	const char *const names[] = {"R", "RL", "C", "CL"};
	for (int nt = 2; nt <= 4; nt++) {
		rtrace tr[4];
		memset(tr, 0, sizeof tr);
		for (int i = 0; i < nt; i++) {
			int64_t lo, hi;
			chunk(15, nt, i, &lo, &hi);
			for (int64_t p = lo; p < hi; p++) {
				int64_t a = p / 3, b = p % 3;
				int64_t r = a * 16, c = b * 16;
				int64_t v[] = {r, (r + 16 < 67 ? 16 : 67 - r), c, (c + 16 < 40 ? 16 : 40 - c)};
				CHECK(append_trace(&tr[i], ref, names, v, 4));
			}
		}
		for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
			compare("grid", src, nt, specs[s], tr);
		free_traces(tr, nt);
	}
}

/* One thread is ct_kernel_predict; a kernel without parallelize puts everything on thread 0. */
static void test_serial(void)
{
	const char *par = "kernel t1\nparam N = 67, M = 96\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	                  "for (i: N, j: M) {\n  B[i, j] = A[i, j] * 2.0\n}\nplan {\n  parallelize(i)\n}\n";
	const char *seq = "kernel t0\nparam N = 67, M = 96\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	                  "for (i: N, j: M) {\n  B[i, j] = A[i, j] * 2.0\n}\n";
	const char *spec = "2K:64:2,4K:64:4:plru,64K:64";
	for (int v = 0; v < 2; v++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, v ? seq : par, strlen(v ? seq : par), "s.cachet");
		ct_predict_result pr;
		ct_thread_result r;
		memset(&r, 0, sizeof r);
		int nt = v ? 4 : 1;
		CHECK(k && ct_kernel_predict(k, spec, &pr) == CT_OK);
		CHECK(k && ct_kernel_predict_threads(k, spec, nt, &r) == CT_OK);
		CHECK(r.parallel == !v && r.team == 1 && r.nthreads == nt);
		CHECK(r.accesses == pr.accesses && r.thread_accesses[0] == pr.accesses);
		for (int i = 1; i < nt; i++)
			CHECK(r.thread_accesses[i] == 0);
		for (int l = 0; l < pr.nlevels; l++) {
			CHECKF(r.level[l].misses == pr.level[l].misses && r.level[l].exact == pr.level[l].exact,
			       "level %d: %lld, predict %lld", l + 1, (long long)r.level[l].misses,
			       (long long)pr.level[l].misses);
			if (r.level[l].private_level) {
				CHECK(r.level[l].thread_misses[0] == pr.level[l].misses);
				for (int i = 1; i < nt; i++)
					CHECK(r.level[l].thread_misses[i] == 0);
			}
		}
		CHECK(r.level[0].private_level && r.level[1].private_level && !r.level[2].private_level);
		CHECK(r.level[1].plru && !r.level[0].plru);
		ct_predict_result_free(&pr);
		ct_thread_result_free(&r);
		/* 0 threads is a usage error */
		CHECK(k && ct_kernel_predict_threads(k, spec, 0, &r) == CT_ERR_USAGE);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* Random kernels of the model bench's families with their outermost loop parallelized (where
 * the checker allows it): the private levels warped per thread equal the same levels walked
 * access by access per thread, on random set-associative LRU and PLRU caches. */
static void test_random_warp(void)
{
	rk_rng r = {3535};
	int cases = 0, tries = 0, levels = 0, warped = 0;
	while (cases < 60 && tries < 2000) {
		tries++;
		rk_case c;
		rk_generate(&r, &c);
		if (strstr(c.src, "plan {"))
			continue; /* planned kernels: their loops are the plan's */
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, c.src, strlen(c.src), "r.cachet");
		ct_looptree *lt = NULL;
		for (int i = 0; k && i < c.nrt; i++)
			ct_kernel_set_param(k, c.rt_name[i], c.rt_val[i]);
		lt = k ? ct_kernel_lower(k, 1) : NULL;
		const char *outer = NULL;
		for (int i = 0; lt && i < lt->nroots && !outer; i++)
			if (lt->roots[i]->kind == LT_LOOP)
				outer = ct_kernel_index_name(k, lt->roots[i]->index);
		char src[8192];
		if (outer)
			snprintf(src, sizeof src, "%splan {\n  parallelize(%s)\n}\n", c.src, outer);
		ct_looptree_free(lt);
		ct_kernel_free(k);
		k = outer ? ct_kernel_parse(ctx, src, strlen(src), "rp.cachet") : NULL;
		for (int i = 0; k && i < c.nrt; i++)
			ct_kernel_set_param(k, c.rt_name[i], c.rt_val[i]);
		char spec[128];
		int64_t ways = (int64_t)1 << rk_range(&r, 1, 3), sets = rk_range(&r, 2, 9), line = 32;
		snprintf(spec, sizeof spec, "%lld:%lld:%lld%s,%lld:64:4:shared", (long long)(sets * ways * line),
		         (long long)line, (long long)ways, rk_range(&r, 0, 1) ? ":plru" : "", (long long)(sets * 4 * 64 * 4));
		int nt = (int)rk_range(&r, 2, 4);
		ct_thread_result a, b;
		memset(&a, 0, sizeof a);
		memset(&b, 0, sizeof b);
		if (k && ct_kernel_predict_threads(k, spec, nt, &a) == CT_OK && a.parallel && a.team > 1 &&
		    threads_predict(k, spec, nt, false, &b) == CT_OK) {
			cases++;
			levels++;
			bool same = a.level[0].exact && b.level[0].exact && a.level[1].misses == b.level[1].misses;
			for (int i = 0; i < nt && same; i++)
				same = a.level[0].thread_misses[i] == b.level[0].thread_misses[i] &&
				       a.thread_accesses[i] == b.thread_accesses[i];
			warped += same;
			CHECKF(same, "%s, %d threads: warped %lld, walked %lld\n%s", spec, nt,
			       (long long)a.level[0].misses, (long long)b.level[0].misses, src);
		}
		ct_thread_result_free(&a);
		ct_thread_result_free(&b);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	printf("  random parallel kernels: %d (of %d generated), %d equal warped and walked\n", cases, tries, warped);
	CHECK(cases >= 30);
}

int main(void)
{
	(void)rk_run; /* the header's runner: test_model_random's */
	RUN(test_rows);
	RUN(test_collapsed);
	RUN(test_pieces);
	RUN(test_versions);
	RUN(test_grid);
	RUN(test_random_warp);
	RUN(test_serial);
	return h_report();
}
