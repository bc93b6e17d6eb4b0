/* test_symbolic.c: predict --symbolic's formulas (src/model/symbolic.c) equal the numeric model (model_analyse) at >= 100 sampled param values per kernel, chamber boundaries included; kernels outside the class say why. */
#include "../../bench/model/random_kernels.h"
#include "cachet.h"
#include "core/core.h"
#include "ir/ir.h"
#include "model/model.h"
#include "model/symbolic.h"

#include "harness.h"

#include <math.h>
#include <stdlib.h>

/* A perfect matmul with one runtime size. */
static const char *mm_n =
	"kernel mm\nparam N : runtime\n"
	"array A : f32[N, N] input\narray B : f32[N, N] input\narray C : f32[N, N] inout\n"
	"for (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n";

/* Three runtime sizes, f64, loop order i, k, j. */
static const char *mm_mnk =
	"kernel mm3\nparam M : runtime, N : runtime, K : runtime\n"
	"array A : f64[M, K] input\narray B : f64[K, N] input\narray C : f64[M, N] inout\n"
	"for (i: M, k: K, j: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n";

/* Tiled, with the tails of the runtime size empty on the formula's lattice. */
static const char *mm_tiled =
	"kernel mmt\nparam N : runtime\n"
	"array A : f32[N, N] input\narray B : f32[N, N] input\narray C : f32[N, N] inout\n"
	"for (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	"schedule {\n  ii, jj, kk = tile(i=8, j=32, k=16)\n  reorder(i, j, k, ii, kk, jj)\n}\n";

/* A matrix-vector product and a transpose (a column walk). */
static const char *mv =
	"kernel mv\nparam M : runtime, N : runtime\n"
	"array A : f32[M, N] input\narray x : f32[N] input\narray y : f32[M] inout\n"
	"for (i: M, j: N) {\n  y[i] += A[i, j] * x[j]\n}\n";

static const char *tr =
	"kernel tr\nparam N : runtime\n"
	"array A : f64[N, N] input\narray B : f64[N, N] output\n"
	"for (i: N, j: N) {\n  B[j, i] = A[i, j]\n}\n";

/* Outside the class: a stencil with offsets and the two-index transform (imperfect). */
static const char *stencil =
	"kernel st\nparam N : runtime\n"
	"array A : f32[N, N] input\narray B : f32[N, N] output\n"
	"for (x: N - 2, y: N - 2) {\n  B[x + 1, y + 1] = A[x, y + 1] + A[x + 2, y + 1] + A[x + 1, y]\n}\n";

static const char *two_index =
	"kernel two_index\nparam V : runtime, N : runtime\n"
	"array A : f64[N, N] input\narray C1 : f64[N, V] input\narray C2 : f64[N, V] input\n"
	"array T : f64[V, N] temp\narray B : f64[V, V] inout\n"
	"for (a: V, q: N) {\n  T[a, q] = 0\n  for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
	"  for (b: V) { B[a, b] += C2[q, b] * T[a, q] }\n}\n";

/* Constant splits that do not divide (256 by 48): the tail versions reach other elements of A
 * and B (parts of their own, on other lines) and the same ones of C (twin loops). */
static const char *mm_tail =
	"kernel mmtail\nparam M : runtime, N : runtime\n"
	"array A : f32[M, 256] input\narray B : f32[256, N] input\narray C : f32[M, N] inout\n"
	"for (i: M, j: N, k: 256) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	"schedule {\n  kk = split(k, 48)\n  reorder(i, k, j, kk)\n}\n";

static const char *mm_tail_tiled =
	"kernel mmtt\nparam M : runtime, N : runtime\nparam K = 256\n"
	"array A : f32[M, K] input\narray B : f32[K, N] input\narray C : f32[M, N] inout\n"
	"for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	"schedule {\n  ii, jj, kk = tile(i=32, j=64, k=48)\n  kkk = split(kk, 4)\n"
	"  reorder(i, j, k, ii, kk, jj, kkk)\n}\n";

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The points compared: one value per variable each. */
typedef struct points {
	int n, cap, nv;
	int64_t *v;
} points;

static void add_point(points *p, const sym_result *r, const int64_t *mult)
{
	int64_t vals[SYM_MAXV];
	for (int v = 0; v < r->nvars; v++) {
		if (mult[v] < 1)
			return;
		vals[v] = mult[v] * r->modulus[v];
	}
	for (int i = 0; i < p->n; i++)
		if (!memcmp(p->v + i * SYM_MAXV, vals, sizeof vals[0] * (size_t)r->nvars))
			return;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->v = realloc(p->v, sizeof *p->v * SYM_MAXV * (size_t)p->cap);
	}
	memcpy(p->v + p->n * SYM_MAXV, vals, sizeof vals);
	p->n++;
}

/* The signature of every level's chamber at mult (0 where not in the domain). */
static uint64_t signature(const sym_result *r, const int64_t *mult)
{
	int64_t vals[SYM_MAXV];
	for (int v = 0; v < r->nvars; v++)
		vals[v] = mult[v] * r->modulus[v];
	uint64_t h = 0;
	for (int l = 0; l < r->spec.nlevels; l++) {
		int64_t lo, hi;
		uint64_t sig = 0;
		if (sym_level_misses(r, l, -1, vals, &lo, &hi, &sig))
			h = h * 31 + sig;
	}
	return h;
}

/* Sample points: small multiples, random ones, and the neighbours of every chamber boundary
 * met along each variable's axis (others at random multiples) and along the diagonal. */
static void sample(const sym_result *r, points *p, int64_t scan)
{
	int64_t m[SYM_MAXV];
	int nv = r->nvars;
	for (int64_t n = 1; n <= 110; n++) {
		for (int v = 0; v < nv; v++)
			m[v] = n + v;
		add_point(p, r, m);
	}
	for (int i = 0; i < 60; i++) {
		for (int v = 0; v < nv; v++)
			m[v] = 1 + (int64_t)(next_rand() % (nv == 1 ? 400 : 48));
		add_point(p, r, m);
	}
	for (int axis = -1; axis < nv; axis++) {
		int64_t base[SYM_MAXV];
		for (int v = 0; v < nv; v++)
			base[v] = 1 + (int64_t)(next_rand() % 8);
		uint64_t prev = 0;
		for (int64_t n = 1; n <= scan; n++) {
			for (int v = 0; v < nv; v++)
				m[v] = axis < 0 || v == axis ? n : base[v];
			uint64_t sig = signature(r, m);
			if (n > 1 && sig != prev)
				for (int64_t d = -2; d <= 1; d++) {
					int64_t q[SYM_MAXV];
					for (int v = 0; v < nv; v++)
						q[v] = axis < 0 || v == axis ? n + d : base[v];
					add_point(p, r, q);
				}
			prev = sig;
		}
	}
}

static void set_vals(ct_kernel *k, const sym_result *r, const int64_t *vals)
{
	for (int v = 0; v < r->nvars; v++) {
		k->params[r->var_param[v]].value = vals[v];
		k->params[r->var_param[v]].has_value = true;
	}
}

/* Compare the formulas of kernel k with the numeric model at the sampled points: equal where
 * the formula is exact, within its bounds elsewhere; at least min_exact points exact on every
 * level. */
static int compare(ct_kernel *k, const char *spec_text, int64_t scan, int min_exact, bool all_levels)
{
	sim_spec spec;
	memset(&spec, 0, sizeof spec);
	CHECK(sim_spec_parse(k->ctx, spec_text, &spec) == CT_OK);
	ct_looptree *t = ct_kernel_lower(k, 1);
	CHECK(t != NULL);
	if (!t)
		return 0;
	sym_result r;
	CHECK(sym_analyse(t, &spec, &r) == CT_OK);
	CHECKF(r.why == NULL, "unsupported: %s", r.why ? r.why : "");
	if (r.why) {
		sym_result_free(&r);
		ct_looptree_free(t);
		return 0;
	}
	points p = {0, 0, r.nvars, NULL};
	sample(&r, &p, scan);
	int exact_points = 0, compared = 0, mismatches = 0;
	for (int i = 0; i < p.n; i++) {
		const int64_t *vals = p.v + i * SYM_MAXV;
		if (!sym_in_domain(&r, vals))
			continue;
		set_vals(k, &r, vals);
		model_result mr;
		if (model_analyse(t, &spec, &mr) != CT_OK) {
			CHECKF(0, "model_analyse failed at point %d", i);
			continue;
		}
		/* the classes of each line size add up to every access, as the model's partitions */
		for (int li = 0; li < r.nlines; li++) {
			int64_t sum = 0, n;
			for (int c = 0; c < r.lines[li].n; c++)
				if (sym_poly_eval(&r.lines[li].r[c].count, vals, &n))
					sum += n;
				else
					sum = -1;
			if (!r.lines[li].why)
				CHECKF(sum == mr.accesses, "%s: classes %lld, accesses %lld", ct_kernel_name(k),
				       (long long)sum, (long long)mr.accesses);
		}
		bool all_exact = true, model_exact = true;
		int compared_before = compared;
		for (int a = 0; a < mr.narrays; a++)
			model_exact &= mr.array_exact[a] || !mr.array_accesses[a];
		for (int l = 0; l < spec.nlevels && model_exact; l++) {
			if (sym_level_why(&r, l)) {
				CHECKF(!all_levels, "L%d: %s", l + 1, sym_level_why(&r, l));
				continue;
			}
			const model_lines *ml = model_for_line(&mr, spec.level[l].line);
			int64_t C = spec.level[l].size / spec.level[l].line;
			for (int a = -1; a < r.narrays; a++) {
				if (a >= 0 && !r.nacc[a])
					continue;
				int64_t lo, hi;
				bool ex = true;
				int64_t got = model_misses(ml, C, a, &ex);
				if (!ex) {
					model_exact = false;
					continue;
				}
				bool derived = sym_level_misses(&r, l, a, vals, &lo, &hi, NULL);
				if (!derived && sym_level_setassoc(&r, l))
					continue; /* a set-associative level that evicts here */
				if (!derived) {
					CHECKF(0, "%s: no formula at point %d (%s=%lld) L%d: %s", ct_kernel_name(k), i,
					       r.var_name[0], (long long)vals[0], l + 1,
					       sym_level_why(&r, l) ? sym_level_why(&r, l) : "-");
					continue;
				}
				compared++;
				if (got < lo || got > hi || (lo == hi && got != lo)) {
					if (mismatches++ < 8)
						CHECKF(0, "%s L%d %s at %s=%lld%s: model %lld, formula %lld..%lld",
						       ct_kernel_name(k), l + 1, a < 0 ? "all" : r.array_name[a],
						       r.var_name[0], (long long)vals[0], r.nvars > 1 ? ",..." : "",
						       (long long)got, (long long)lo, (long long)hi);
				}
				all_exact &= lo == hi;
			}
		}
		exact_points += all_exact && model_exact && compared > compared_before;
		model_result_free(&mr);
	}
	CHECKF(exact_points >= min_exact, "%s: %d exact points of %d (%d compared)", ct_kernel_name(k),
	       exact_points, p.n, compared);
	CHECK(mismatches == 0);
	printf("  %s: %d points, %d exact on every level, %d counts compared\n", ct_kernel_name(k), p.n,
	       exact_points, compared);
	free(p.v);
	sym_result_free(&r);
	ct_looptree_free(t);
	return exact_points;
}

static void check_text_min(const char *text, const char *spec, int64_t scan, int min_exact)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "test.cachet");
	CHECK(k != NULL);
	if (k)
		compare(k, spec, scan, min_exact, true);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void check_text(const char *text, const char *spec, int64_t scan)
{
	check_text_min(text, spec, scan, 100);
}

/* The tails of constant splits: exact where the reuse between the main and the tail
 * versions is decided (a large cache), within the bounds elsewhere (the reuse of C's line
 * between them depends on where the line lies in the row: not split by position). */
static void test_split_tails(void)
{
	check_text(mm_tail, "256K:64", 200);
	check_text_min(mm_tail, "4K:64,32K:64", 200, 0);
	check_text(mm_tail_tiled, "256K:64", 200);
	check_text(mm_tail_tiled, "32K:64", 200);
}

static void test_matmul_n(void) { check_text(mm_n, "4K:64,32K:64,256K:128", 400); }
static void test_matmul_mnk(void) { check_text(mm_mnk, "2K:32,16K:64", 200); }
static void test_matmul_tiled(void) { check_text(mm_tiled, "4K:64,32K:64", 200); }
static void test_matvec(void) { check_text(mv, "1K:64,8K:32", 300); }
static void test_transpose(void) { check_text(tr, "2K:64,16K:64", 400); }
/* The two-index transform: an imperfect nest (two loops and a statement in one body, a temp
 * array shared by three statements). */
static void test_two_index(void) { check_text(two_index, "4K:64,32K:64", 120); }

/* Random perfect nests of the families above (loop orders, element types, tiles, caches):
 * the formulas never contradict the model. */
static void test_random(void)
{
	static const char *orders[] = {"i: N, j: N, k: N", "i: N, k: N, j: N", "j: N, i: N, k: N",
	                               "j: N, k: N, i: N", "k: N, i: N, j: N", "k: N, j: N, i: N"};
	static const char *types[] = {"f32", "f64"};
	static const char *caches[] = {"1K:32", "2K:64", "4K:64", "8K:128", "3K:64", "16K:32",
	                               "512:64", "6K:64"};
	int supported = 0;
	for (int c = 0; c < 100; c++) {
		char text[1024], sched[256] = "";
		const char *ty = types[next_rand() % 2];
		int fam = (int)(next_rand() % 3);
		if (next_rand() % 2) {
			int ti = 1 << (1 + next_rand() % 5), tj = 1 << (1 + next_rand() % 5);
			snprintf(sched, sizeof sched,
			         "schedule {\n  ii, jj = tile(i=%d, j=%d)\n  reorder(i, j, ii, jj)\n}\n", ti, tj);
		}
		if (fam == 0)
			snprintf(text, sizeof text,
			         "kernel r%d\nparam N : runtime\narray A : %s[N, N] input\narray B : %s[N, N] "
			         "input\narray C : %s[N, N] inout\nfor (%s) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n%s",
			         c, ty, ty, ty, orders[next_rand() % 6],
			         sched[0] ? sched : "");
		else if (fam == 1)
			snprintf(text, sizeof text,
			         "kernel r%d\nparam M : runtime, N : runtime\narray A : %s[M, N] input\narray B : "
			         "%s[N, M] output\nfor (%s) {\n  B[j, i] = A[i, j]\n}\n%s",
			         c, ty, ty, next_rand() % 2 ? "i: M, j: N" : "j: N, i: M", sched);
		else
			snprintf(text, sizeof text,
			         "kernel r%d\nparam M : runtime, N : runtime\narray A : %s[M, N] input\narray x : "
			         "%s[N] input\narray y : %s[M] inout\nfor (%s) {\n  y[i] += A[i, j] * x[j]\n}\n%s",
			         c, ty, ty, ty, next_rand() % 2 ? "i: M, j: N" : "j: N, i: M", sched);
		char spec[64];
		snprintf(spec, sizeof spec, "%s,%s", caches[next_rand() % 8], caches[next_rand() % 8]);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "random.cachet");
		/* a schedule that does not fit the loop order is refused: no case */
		if (k) {
			sim_spec sp;
			memset(&sp, 0, sizeof sp);
			ct_looptree *t = ct_kernel_lower(k, 1);
			sym_result r;
			if (t && sim_spec_parse(ctx, spec, &sp) == CT_OK && sym_analyse(t, &sp, &r) == CT_OK) {
				if (!r.why) {
					supported++;
					compare(k, spec, 80, 20, false);
				} else
					printf("  random %d: unsupported: %s\n", c, r.why);
				if (getenv("SYM_DEBUG"))
					printf("%s\n%s\n", text, spec);
				sym_result_free(&r);
			}
			ct_looptree_free(t);
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	CHECKF(supported >= 60, "%d of 100 supported", supported);
}

/* Random imperfect nests of three shapes (a row reduction and its use, matmul with its
 * zeroing, the two-index transform's shape), element types, sizes and caches: the formulas
 * never contradict the model. */
static void test_random_trees(void)
{
	static const char *caches[] = {"1K:32", "2K:64", "4K:64", "8K:128", "3K:64", "16K:32",
	                               "512:64", "6K:64"};
	static const char *shapes[] = {
	    "kernel t%d\nparam N : runtime, M : runtime\narray A : %s[N, M] input\narray x : %s[M] "
	    "input\narray y : %s[M] input\narray t : %s[N] temp\narray B : %s[N, M] output\n"
	    "for (i: N) {\n  t[i] = 0\n  for (j: M) { t[i] += A[i, j] * x[j] }\n"
	    "  for (k: M) { B[i, k] = t[i] * y[k] }\n}\n",
	    "kernel t%d\nparam N : runtime, M : runtime\narray A : %s[N, M] input\narray B : %s[M, N] "
	    "input\narray C : %s[N, N] output\narray D : %s[N] input\narray E : %s[N] output\n"
	    "for (i: N) {\n  for (j: N) {\n    C[i, j] = 0\n    for (k: M) { C[i, j] += A[i, k] * B[k, j] }\n"
	    "  }\n  E[i] = D[i]\n}\n",
	    "kernel t%d\nparam N : runtime, M : runtime\narray A : %s[M, N] input\narray s : %s[N] "
	    "temp\narray B : %s[N, M] output\narray u : %s[M] input\narray v : %s[M] output\n"
	    "for (i: N) {\n  s[i] = 0\n  for (j: M) { s[i] += A[j, i] }\n  for (j2: M) { B[i, j2] = s[i] }\n}\n"
	    "for (q: M) { v[q] = u[q] }\n",
	};
	int supported = 0;
	for (int c = 0; c < 45; c++) {
		char text[2048], spec[64];
		const char *ty = next_rand() % 2 ? "f32" : "f64";
		snprintf(text, sizeof text, shapes[c % 3], c, ty, ty, ty, ty, ty);
		/* the last 15 split the outer loop and an inner one (tails empty on the lattice) */
		if (c >= 30) {
			static const char *inner[] = {"j", "j", "j2"};
			size_t len = strlen(text);
			snprintf(text + len, sizeof text - len, "schedule {\n  ii = split(i, %d)\n  jj = split(%s, %d)\n}\n",
			         1 << (1 + next_rand() % 4), inner[c % 3], 1 << (2 + next_rand() % 4));
		}
		snprintf(spec, sizeof spec, "%s,%s", caches[next_rand() % 8], caches[next_rand() % 8]);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "tree.cachet");
		CHECKF(k != NULL, "%s", text);
		if (k) {
			sim_spec sp;
			memset(&sp, 0, sizeof sp);
			ct_looptree *t = ct_kernel_lower(k, 1);
			sym_result r;
			if (t && sim_spec_parse(ctx, spec, &sp) == CT_OK && sym_analyse(t, &sp, &r) == CT_OK) {
				CHECKF(!r.why, "%s: %s", text, r.why ? r.why : "");
				if (!r.why) {
					supported++;
					compare(k, spec, 60, 20, false);
				}
				sym_result_free(&r);
			}
			ct_looptree_free(t);
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	CHECKF(supported >= 40, "%d of 45 supported", supported);
}

/* The model bench's random cases (bench/model/random_kernels.h: eight families, guarded
 * stencils, imperfect nests and planned kernels among them): those in the class agree with
 * the model (a quarter have runtime params), the others say why; none crashes. */
static void test_bench_families(void)
{
	(void)rk_run; /* the header's runner: test_model_random's */
	rk_rng rr = {UINT64_C(0x9e3779b97f4a7c15) ^ 11};
	int covered = 0, with_params = 0, outside = 0, exact_cases = 0;
	for (int i = 0; i < 300; i++) {
		rk_case c;
		rk_generate(&rr, &c);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, c.src, strlen(c.src), "random.cachet");
		if (!k) {
			ct_ctx_free(ctx);
			continue;
		}
		sim_spec sp;
		memset(&sp, 0, sizeof sp);
		ct_looptree *t = ct_kernel_lower(k, 1);
		sym_result r;
		bool in = false, assoc = false;
		if (t && sim_spec_parse(ctx, c.spec, &sp) == CT_OK && sym_analyse(t, &sp, &r) == CT_OK) {
			in = !r.why && !sym_level_why(&r, 0);
			assoc = in && sym_level_setassoc(&r, 0);
			if (getenv("SYM_DEBUG"))
				printf("  case %d (%s): %s\n", i, rk_family_name[c.family],
				       sym_level_why(&r, 0) ? sym_level_why(&r, 0) : "in the class");
			CHECKF(r.why || r.nlines == 1, "case %d", i);
			sym_result_free(&r);
		}
		ct_looptree_free(t);
		if (in) {
			covered++;
			with_params += c.nrt > 0;
			/* a set-associative level may evict everywhere, and a class between a split's
			 * main and tail parts may straddle the capacity: never outside the bounds, and
			 * most cases exact */
			exact_cases += compare(k, c.spec, c.nrt > 0 ? 60 : 1, 0, true) > 0 || assoc;
		} else
			outside++;
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	printf("  bench families: %d in the class (%d with runtime params, %d exact at some point), "
	       "%d outside\n", covered, with_params, exact_cases, outside);
	CHECKF(covered >= 50 && with_params >= 25 && exact_cases >= 45, "%d covered, %d with params, %d "
	       "exact", covered, with_params, exact_cases);
}

/* Every example with a runtime param: a formula that agrees with the model, or the reason.
 * plan_runtime's cache buffers (copy, zero-fill and reduce loops that walk a buffer through
 * other loops than the body's): exact on >= 100 points from 1 to 32 KiB (the reuses between
 * two loops that walk a buffer are split by the line's position). */
static void test_examples(void)
{
	static const struct {
		const char *file, *spec, *why;
		int min_exact;
	} ex[] = {
		{"examples/axpy_runtime.cachet", "1K:64,4K:32", NULL, 100},
		{"examples/plan_balanced.cachet", "4K:64,32K:64", NULL, 100},
		{"examples/plan_runtime.cachet", "32K:64", NULL, 100},
		{"examples/plan_runtime.cachet", "32K:128", NULL, 100},
		{"examples/plan_runtime.cachet", "16K:64", NULL, 100},
		{"examples/plan_runtime.cachet", "4K:64", NULL, 100},
		{"examples/plan_runtime.cachet", "1K:64", NULL, 100},
		{"examples/plan_runtime.cachet", "8K:64,2K:64", NULL, 100},
	};
	FILE *f = fopen(ex[0].file, "r");
	if (!f) {
		h_skip_case("no examples/ here");
		return;
	}
	fclose(f);
	for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse_file(ctx, ex[i].file);
		CHECKF(k != NULL, "%s", ex[i].file);
		if (k && !ex[i].why)
			compare(k, ex[i].spec, 300, ex[i].min_exact, true);
		if (k && ex[i].why) {
			char *s = ct_kernel_predict_symbolic(k, ex[i].spec, CT_FORMAT_TEXT);
			CHECKF(s && strstr(s, "unsupported: ") && strstr(s, ex[i].why), "%s: %s", ex[i].file,
			       s ? s : "(null)");
			free(s);
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* Kernels outside the class say why, in the text and in the JSON; a set-associative level
 * has no formula. */
static void test_unsupported(void)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{NULL, "different subscripts"},
		{NULL, "a guard (if) in the nest"},
	};
	/* examples/stencil5.cachet with runtime sizes: its boundary test is a guard */
	static const char stencil5[] =
	    "kernel stencil5\nparam N : runtime, M : runtime\narray A : f32[N, M] input\n"
	    "array B : f32[N, M] output\nfor (x: N, y: M) {\n"
	    "  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	    "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
	    "schedule {\n  xx, yy = tile(x=16, y=64)\n  reorder(x, y, xx, yy)\n}\n";
	const char *texts[] = {stencil, stencil5};
	for (int i = 0; i < 2; i++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, texts[i], strlen(texts[i]), "test.cachet");
		CHECK(k != NULL);
		char *s = k ? ct_kernel_predict_symbolic(k, "4K:64", CT_FORMAT_TEXT) : NULL;
		CHECKF(s && strstr(s, "unsupported: ") && strstr(s, cases[i].why), "%s", s ? s : "(null)");
		free(s);
		s = k ? ct_kernel_predict_symbolic(k, "4K:64", CT_FORMAT_JSON) : NULL;
		CHECKF(s && strstr(s, "\"supported\": false") && strstr(s, cases[i].why), "%s", s ? s : "");
		free(s);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	/* a split's tail on the same lines as the main part (rows of 24 f32, 1.5 lines): its
	 * union with the main part is not derived */
	static const char flat_parts[] =
	    "kernel fp\nparam N : runtime\nparam W = 24\narray A : f32[16, W] input\n"
	    "array B : f32[N, 16] inout\nfor (r: N, i: 16, j: W) {\n  B[r, i] += A[i, j]\n}\n"
	    "schedule {\n  jj = split(j, 16)\n  reorder(r, i, j, jj)\n}\n";
	{
		ct_ctx *c2 = ct_ctx_new();
		ct_kernel *k2 = ct_kernel_parse(c2, flat_parts, strlen(flat_parts), "fp.cachet");
		char *t2 = k2 ? ct_kernel_predict_symbolic(k2, "1K:64", CT_FORMAT_TEXT) : NULL;
		CHECKF(t2 && strstr(t2, "unsupported: ") && strstr(t2, "whose lines meet"), "%s",
		       t2 ? t2 : "(null)");
		free(t2);
		ct_kernel_free(k2);
		ct_ctx_free(c2);
	}
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, mm_n, strlen(mm_n), "test.cachet");
	char *s = k ? ct_kernel_predict_symbolic(k, "4K:64:4,32K:64", CT_FORMAT_JSON) : NULL;
	CHECKF(s && strstr(s, "\"supported\": true") && strstr(s, "\"where\": \"ceil("), "%s", s ? s : "");
	free(s);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The text names the domain, each reuse's distance and the chambers (matmul in N at 4 KiB,
 * 64-byte lines: B misses every access from N = 64 on). */
static void test_text(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, mm_n, strlen(mm_n), "test.cachet");
	char *s = k ? ct_kernel_predict_symbolic(k, "4K:64", CT_FORMAT_TEXT) : NULL;
	CHECK(s != NULL);
	if (s) {
		CHECKF(strstr(s, "domain: N % 16 == 0, N >= 16"), "%s", s);
		CHECKF(strstr(s, "carried by i: count N^3/16 - N^2/16, distance"), "%s", s);
		CHECKF(strstr(s, "N >= 64: N^3\n"), "%s", s);
		CHECKF(strstr(s, "cold: count N^2/16"), "%s", s);
	}
	free(s);
	s = k ? ct_kernel_predict_symbolic(k, "4K:64", CT_FORMAT_JSON) : NULL;
	CHECKF(s && strstr(s, "\"pieces\": [") && strstr(s, "\"distance_lo\": \"") &&
	       strstr(s, "\"modulus\": 16"), "%s", s ? s : "");
	free(s);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* cachet tiles with unknown bounds: a tiling in the formulas' class is counted with their
 * bound-free terms: cold misses, every class whose distance names N, and the bound-free
 * classes whose distance reaches the capacity, at N = the first probe. */
static void test_tiles_bound_free(void)
{
	static const char text[] =
	    "kernel mmtiles\nparam N : runtime\nparam TI = 16, TJ = 32, TK = 16\n"
	    "array A : f32[N, N] input\narray B : f32[N, N] input\narray C : f32[N, N] inout\n"
	    "for (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	    "schedule {\n  ii, jj, kk = tile(i=TI, j=TJ, k=TK)\n  reorder(i, j, k, ii, kk, jj)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "tiles.cachet");
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	ct_tiles_options o;
	ct_tiles_options_init(&o);
	o.max_tile = 64;
	o.max_evals = 300;
	ct_tiles_result res;
	memset(&res, 0, sizeof res);
	CHECK(ct_kernel_tiles(k, "4K:64", &o, &res) == CT_OK);
	CHECK(res.runtime_bounds && res.ncandidates >= 1);
	int covered = 0;
	for (int c = 0; c < res.ncandidates && c < 3; c++) {
		const char *names[3] = {"TI", "TJ", "TK"};
		for (int i = 0; i < 3; i++)
			CHECK(ct_kernel_set_param(k, names[i], res.candidates[c].tiles[i]) == CT_OK);
		CHECK(ct_kernel_recheck(k) == CT_OK);
		sim_spec spec;
		memset(&spec, 0, sizeof spec);
		CHECK(sim_spec_parse(ctx, "4K:64", &spec) == CT_OK);
		ct_looptree *t = ct_kernel_lower(k, 1);
		sym_result r;
		CHECK(t && sym_analyse(t, &spec, &r) == CT_OK);
		if (!t)
			continue;
		/* a tiling outside the class (a tile shorter than a line's share) is probed */
		bool has = !sym_level_why(&r, 0);
		covered += has;
		int64_t v[1] = {4096}, want = 0;
		for (int i = 0; has && i < r.lines[0].n; i++) {
			const sym_reuse *x = &r.lines[0].r[i];
			bool bound = false;
			for (int j = 0; j < x->dlo.n; j++)
				bound |= x->dlo.t[j].e[0] > 0;
			for (int j = 0; j < x->dhi.n; j++)
				bound |= x->dhi.t[j].e[0] > 0;
			if (x->kind == SYM_COLD || bound || sym_poly_value(&x->dlo, v) >= 64)
				want += llround(sym_poly_value(&x->count, v));
		}
		CHECKF(!has || res.candidates[c].misses[0] == want, "candidate %d: %lld, formulas %lld", c,
		       (long long)res.candidates[c].misses[0], (long long)want);
		sym_result_free(&r);
		ct_looptree_free(t);
	}
	CHECKF(covered >= 1, "no candidate in the formulas' class");
	ct_tiles_result_free(&res);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Per reference: each reuse class belongs to the reference that touches the line first, so
 * the references' misses add up to their array's and equal an exact simulation's
 * per-reference counts (ct_kernel_predict_refs splits by simulation on these small sizes). */
static void test_references(void)
{
	const char *texts[] = {two_index, mm_n};
	const char *specs[] = {"4K:64,32K:64", "2K:64"};
	for (int c = 0; c < 2; c++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, texts[c], strlen(texts[c]), "refs.cachet");
		CHECK(k != NULL);
		sim_spec spec;
		memset(&spec, 0, sizeof spec);
		ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
		sym_result r;
		if (!t || sim_spec_parse(ctx, specs[c], &spec) != CT_OK || sym_analyse(t, &spec, &r) != CT_OK) {
			CHECK(0);
			ct_looptree_free(t);
			ct_kernel_free(k);
			ct_ctx_free(ctx);
			continue;
		}
		CHECKF(r.nrefs > 0 && !r.why, "%d references", r.nrefs);
		int compared = 0;
		for (int n = 1; n <= 6 && !r.why; n++) {
			int64_t vals[SYM_MAXV];
			char arg[32];
			for (int v = 0; v < r.nvars; v++) {
				vals[v] = r.modulus[v] * (n + v);
				snprintf(arg, sizeof arg, "%s", r.var_name[v]);
				CHECK(ct_kernel_set_param(k, arg, vals[v]) == CT_OK);
			}
			ct_predict_result pr;
			ct_ref_table tab;
			memset(&pr, 0, sizeof pr);
			memset(&tab, 0, sizeof tab);
			CHECK(ct_kernel_predict_refs(k, specs[c], -1, &pr, &tab) == CT_OK);
			for (int l = 0; l < spec.nlevels; l++) {
				for (int a = 0; a < r.narrays; a++) {
					int64_t alo, ahi, sum_lo = 0, sum_hi = 0;
					if (!r.nacc[a] || !sym_level_misses(&r, l, a, vals, &alo, &ahi, NULL))
						continue;
					for (int f = 0; f < r.nrefs; f++) {
						int64_t lo, hi;
						if (r.refs[f].array != a ||
						    !sym_level_misses(&r, l, r.narrays + f, vals, &lo, &hi, NULL))
							continue;
						sum_lo += lo;
						sum_hi += hi;
						for (int q = 0; q < tab.nrefs; q++)
							if (tab.refs[q].line == r.refs[f].line && tab.refs[q].col == r.refs[f].col &&
							    lo == hi) {
								CHECKF(tab.refs[q].misses[l] == lo, "%s:%d:%d L%d at n=%d: %lld, "
								       "formula %lld", ct_kernel_name(k), r.refs[f].line,
								       r.refs[f].col, l + 1, n, (long long)tab.refs[q].misses[l],
								       (long long)lo);
								compared++;
							}
					}
					CHECK(sum_lo == alo && sum_hi == ahi);
				}
			}
			ct_ref_table_free(&tab);
			ct_predict_result_free(&pr);
		}
		CHECKF(compared >= 15, "%d references compared", compared);
		printf("  %s: %d per-reference counts compared\n", ct_kernel_name(k), compared);
		sym_result_free(&r);
		ct_looptree_free(t);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* Set-associative levels: where every set holds all the lines that map to it the formula is
 * the cold misses, equal to predict's exact count (the model, or warping); elsewhere it says
 * it has none. */
static void test_setassoc(void)
{
	const char *spec = "4K:64:4,64K:64:8,1M:64:16";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, mm_n, strlen(mm_n), "sa.cachet");
	sim_spec sp;
	memset(&sp, 0, sizeof sp);
	ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
	sym_result r;
	if (!t || sim_spec_parse(ctx, spec, &sp) != CT_OK || sym_analyse(t, &sp, &r) != CT_OK) {
		CHECK(0);
	} else {
		int compared = 0, evicting = 0;
		for (int n = 1; n <= 40; n++) {
			int64_t v[1] = {16 * n};
			CHECK(ct_kernel_set_param(k, "N", v[0]) == CT_OK);
			ct_predict_result pr;
			memset(&pr, 0, sizeof pr);
			CHECK(ct_kernel_predict(k, spec, &pr) == CT_OK);
			for (int l = 0; l < sp.nlevels; l++) {
				int64_t lo, hi;
				CHECK(sym_level_setassoc(&r, l));
				if (!sym_level_misses(&r, l, -1, v, &lo, &hi, NULL)) {
					evicting++;
					continue;
				}
				CHECKF(lo == hi && pr.level[l].exact && pr.level[l].misses == lo,
				       "L%d at N=%lld: predict %lld, formula %lld..%lld", l + 1, (long long)v[0],
				       (long long)pr.level[l].misses, (long long)lo, (long long)hi);
				compared++;
			}
			ct_predict_result_free(&pr);
		}
		CHECKF(compared >= 20 && evicting >= 40, "%d compared, %d evicting", compared, evicting);
		sym_result_free(&r);
	}
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_matmul_n);
	RUN(test_matmul_mnk);
	RUN(test_matmul_tiled);
	RUN(test_matvec);
	RUN(test_transpose);
	RUN(test_two_index);
	RUN(test_split_tails);
	RUN(test_random);
	RUN(test_random_trees);
	RUN(test_bench_families);
	RUN(test_examples);
	RUN(test_unsupported);
	RUN(test_text);
	RUN(test_references);
	RUN(test_setassoc);
	RUN(test_tiles_bound_free);
	return h_report();
}
