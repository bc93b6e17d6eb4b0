/* test_deps.c: the dependence module (src/ir/deps.c): broken and kept orders, reductions, carried loops, and the loop tree's instances and order against the analysis. */
#include "harness.h"

#include "ir/deps.h"
#include "lang/lang.h"

#include <stdlib.h>

/* The checked kernel of text, without the plan's and the schedule's
 * validation (lang only), so that an illegal reorder can be asked about. */
static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = lang_parse(ctx, text, strlen(text), "test.cachet");
	if (!k)
		fprintf(stderr, "parse failed: %s\n", ct_ctx_last_message(ctx));
	return k;
}

/* dep_order_keeps of k's scheduled tree; the violation's text into txt. */
static int keeps(ct_kernel *k, char *txt, size_t cap)
{
	dep_info *d = dep_compute(k);
	ct_looptree *t = d ? lt_build_loops(k, true) : NULL;
	dep_violation v;
	memset(&v, 0, sizeof v);
	int r = t ? dep_order_keeps(d, t, &v) : -2;
	if (txt && cap)
		txt[0] = 0;
	if (r == 0 && txt) {
		ct_buf b;
		ct_buf_init(&b);
		dep_violation_text(k, &v, &b);
		char *s = ct_buf_take(&b);
		snprintf(txt, cap, "%s", s ? s : "");
		free(s);
	}
	dep_violation_free(k->ctx, &v);
	ct_looptree_free(t);
	dep_free(d);
	return r;
}

/* The first loop over index name under nodes v, or NULL. */
static const lt_node *loop_of(const ct_kernel *k, lt_node *const *v, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = v[i];
		if (x->kind == LT_LOOP && strcmp(k->indices[x->index].name, name) == 0)
			return x;
		const lt_node *y = loop_of(k, x->kids, x->nkids, name);
		if (!y)
			y = loop_of(k, x->els, x->nels, name);
		if (y)
			return y;
	}
	return NULL;
}

/* dep_loop_carries of the loop over name in k's tree (scheduled or not). */
static int carries(ct_kernel *k, bool sched, const char *name, bool with_red)
{
	dep_info *d = dep_compute(k);
	ct_looptree *t = d ? lt_build_loops(k, sched) : NULL;
	const lt_node *x = t ? loop_of(k, t->roots, t->nroots, name) : NULL;
	int r = x ? dep_loop_carries(d, t, x, with_red) : -2;
	ct_looptree_free(t);
	dep_free(d);
	return r;
}

/* dep_same_instances of k's trees with and without the schedule. */
static int same(ct_kernel *k)
{
	dep_info *d = dep_compute(k);
	int r = d ? 1 : -2;
	for (int sched = 0; sched < 2 && r == 1; sched++) {
		ct_looptree *t = lt_build_loops(k, sched);
		r = t ? dep_same_instances(d, t) : -2;
		ct_looptree_free(t);
	}
	dep_free(d);
	return r;
}

static const char *ORD = "kernel ord\n"
                         "param N = 2\n"
                         "array A : f32[N, N] input\n"
                         "array S : f32[1] inout\n"
                         "for (i: N, j: N) { S[0] = S[0] * 0.5 + A[i, j] }\n"
                         "schedule { reorder(j, i) }\n";

static void test_recurrence_broken(void)
{
	h_begin("a recurrence into one element: the interchange breaks it, named");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, ORD);
	CHECK(k != NULL);
	if (k) {
		char txt[512];
		CHECKF(keeps(k, txt, sizeof txt) == 0, "%s", ct_ctx_last_message(ctx));
		CHECKF(strstr(txt, "iteration (i, j) of S[0] must run after (i-1, j+1)") != NULL, "%s", txt);
		CHECKF(strstr(txt, "e.g. (i=1, j=0) after (i=0, j=1)") != NULL, "%s", txt);
		CHECK(carries(k, false, "i", false) == 1);
		CHECK(carries(k, false, "j", false) == 1);
		CHECK(same(k) == 1);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

static void test_reduction_reorders(void)
{
	h_begin("S[0] += A[i, j]: a reduction reorders; its loops carry only the reduction");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, "kernel red\n"
	                          "param N = 3\n"
	                          "array A : f32[N, N] input\n"
	                          "array S : f32[1] inout\n"
	                          "for (i: N, j: N) { S[0] += A[i, j] }\n"
	                          "schedule { reorder(j, i) }\n");
	CHECK(k != NULL);
	if (k) {
		CHECK(keeps(k, NULL, 0) == 1);
		CHECK(carries(k, true, "j", false) == 0);
		CHECK(carries(k, true, "j", true) == 1);
		ct_kernel_free(k);
	}
	/* ... but not when the statement also reads what it updates elsewhere */
	k = parse(ctx, "kernel red2\n"
	               "param N = 3\n"
	               "array A : f32[N, N] input\n"
	               "array S : f32[N] inout\n"
	               "for (i: 1 .. N, j: N) { S[j] += S[j] * A[i, j] + S[0] }\n"
	               "schedule { reorder(j, i) }\n");
	CHECK(k != NULL);
	if (k) {
		char txt[512];
		CHECK(keeps(k, txt, sizeof txt) == 0);
		CHECKF(strstr(txt, "of S[") != NULL, "%s", txt);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

static void test_matmul_loops(void)
{
	h_begin("matmul: i and j carry nothing, k carries the reduction only; any order keeps it");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, "kernel mm\n"
	                          "param M = 9, N = 7, K = 5\n"
	                          "array A : f32[M, K] input\n"
	                          "array B : f32[K, N] input\n"
	                          "array C : f32[M, N] inout\n"
	                          "for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
	                          "schedule {\n"
	                          "  ii, jj, kk = tile(i=4, j=2, k=3)\n"
	                          "  reorder(k, j, i, kk, ii, jj)\n"
	                          "}\n");
	CHECK(k != NULL);
	if (k) {
		CHECK(keeps(k, NULL, 0) == 1);
		CHECK(carries(k, false, "i", true) == 0);
		CHECK(carries(k, false, "j", true) == 0);
		CHECK(carries(k, false, "k", true) == 1);
		CHECK(carries(k, false, "k", false) == 0);
		CHECK(same(k) == 1);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

/* A wavefront update in place, tiled: legal with distances (1,0) and
 * (0,1), broken once (1,-1) joins them. */
static void test_wavefront_tiles(void)
{
	static const char *fmt = "kernel wf\n"
	                         "param N = 10, M = 11\n"
	                         "array A : f64[N, M] inout\n"
	                         "for (i: 1 .. N, j: 1 .. M-1) { A[i, j] = A[i-1, j] + A[i, j-1]%s }\n"
	                         "schedule {\n"
	                         "  ii, jj = tile(i=3, j=4)\n"
	                         "  reorder(i, j, ii, jj)\n"
	                         "}\n";
	char text[512];
	h_begin("wavefront tiled: legal, then broken by A[i-1, j+1]");
	ct_ctx *ctx = ct_ctx_new();
	snprintf(text, sizeof text, fmt, "");
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		CHECK(keeps(k, NULL, 0) == 1);
		CHECK(same(k) == 1);
		ct_kernel_free(k);
	}
	snprintf(text, sizeof text, fmt, " + A[i-1, j+1]");
	k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		char txt[512];
		CHECK(keeps(k, txt, sizeof txt) == 0);
		CHECKF(strstr(txt, "of A[") != NULL && strstr(txt, "must run after (i-1, j+1)") != NULL, "%s", txt);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

/* Imperfect nests, several statements, ifs, runtime params and balanced
 * splits: the tree runs the written instances, in the functions' order. */
static void test_tree_instances(void)
{
	static const char *const kernels[] = {
	    "kernel a\nparam N = 7, M = 5\narray A : f32[N, M] input\narray T : f32[N] temp\narray B : f32[N, M] output\n"
	    "for (i: N) {\n  T[i] = 0\n  for (j: M, k: 1 .. M) {\n    T[i] += A[i, k]\n    B[i, j] = T[i] + A[i, j]\n  }\n}\n"
	    "schedule {\n  jj = split(j, 2)\n  kk = split(k, 3)\n  reorder(k, j, kk, jj)\n}\n",
	    "kernel b\nparam N = 23\narray A : f32[N] input\narray B : f32[N] output\n"
	    "for (x: N) {\n  if (x >= 1 && x <= N-2) { B[x] = A[x-1] + A[x+1] } else { B[x] = A[x] }\n}\n"
	    "schedule {\n  xx = split(x, 4, balanced=true)\n  xxx = split(xx, 3)\n  reorder(x, xx, xxx)\n}\n",
	    "kernel c\nparam N = 23, M : runtime\narray A : f32[N, M] inout\n"
	    "for (i: 2 .. N, j: M) { A[i, j] = A[i-2, j] * 0.5 }\n"
	    "schedule {\n  ii = split(i, 5, balanced=true)\n  jj = split(j, 3)\n  reorder(j, i, jj, ii)\n}\n",
	    "kernel e\nparam N = 5, M = 23\narray A : f32[N, M] inout\n"
	    "for (i: 1 .. N, j: M) { A[i, j] = A[i-1, j] + 1 }\n"
	    "schedule {\n  jj = split(j, 8)\n  jjj = split(jj, 3, balanced=true)\n  reorder(j, i, jj, jjj)\n}\n",
	    "kernel f\nparam N = 17\narray A : f32[N] inout\n"
	    "for (i: 3 .. N) { A[i] = A[i-3] * 2 }\n"
	    "schedule {\n  ii = split(i, 5)\n  iii = split(ii, 4, balanced=true)\n  iiii = split(iii, 2)\n  reorder(i, ii, iii, iiii)\n}\n",
	    /* a split of an affine loop steps from the loop's first value, max(0, i-5) here (the
	     * order once stepped from the bound over params alone, 0) */
	    "kernel g\nparam N = 17\narray A : f32[N] inout\n"
	    "for (i: N) {\n  for (j: max(0, i - 5) .. i) {\n    A[i] = A[i] - A[j] * 0.5\n  }\n}\n"
	    "schedule {\n  jj = split(j, 3)\n}\n",
	    /* ... and from i - 3 where no bound is over params alone (once the sentinel INT64_MIN) */
	    "kernel h\nparam N = 17\narray A : f32[N] inout\n"
	    "for (i: 3 .. N) {\n  for (j: i - 3 .. i) {\n    A[i] = A[i] + A[j]\n  }\n}\n"
	    "schedule {\n  jj = split(j, 3)\n}\n",
	    /* reorders that project the bounds (src/ir/project.h): a rectangular i moved inside
	     * k: 0 .. i+1 steps from k (its projected lower bound) ... */
	    "kernel p\nparam N = 14\narray A : f32[N] inout\n"
	    "for (i: N) {\n  for (k: 0 .. i+1) {\n    A[i] = A[i] + A[k] * 0.5\n  }\n}\n"
	    "schedule {\n  ii = split(i, 3)\n  reorder(k, i, ii)\n}\n",
	    /* ... a band's j moved out, its blocks from its projected bound over params, with tails */
	    "kernel q\nparam N = 19\narray A : f32[N] input\narray B : f32[N] inout\n"
	    "for (i: N) {\n  for (j: max(0, i-3) .. min(N, i+4)) {\n    B[i] = B[i] + A[j]\n  }\n}\n"
	    "schedule {\n  jj = split(j, 3)\n  reorder(j, jj, i)\n}\n",
	    /* ... and with a runtime param: i in max(2, ...) .. min(N, j+3) */
	    "kernel r\nparam N : runtime, M = 4\narray A : f32[N, M] inout\n"
	    "for (i: 2 .. N) {\n  for (j: i - 2 .. N, m: M) {\n    A[i, m] = A[i, m] + A[j, m]\n  }\n}\n"
	    "schedule {\n  ii = split(i, 4)\n  reorder(j, m, i, ii)\n}\n",
	    /* ... a band of two loops around a nest that is its own band, and a tetrahedron whose three
	     * loops are all projected (k outermost) */
	    "kernel t\nparam M = 9, N = 7, K = 8\narray A : f32[M, K] inout\n"
	    "for (i: M, j: 0 .. min(i + 1, N)) {\n  for (k: j .. min(i + 3, K)) {\n    A[i, k] = A[i, k] + A[j, k] * 0.5\n  }\n}\n"
	    "schedule {\n  jj = split(j, 2)\n  reorder(j, jj, k, i)\n}\n",
	    "kernel u\nparam M = 9, N = 7\narray A : f32[M, N] inout\n"
	    "for (i: M) {\n  for (j: 0 .. min(i + 1, N), k: j .. min(i + 3, N)) {\n    A[i, k] = A[i, k] + A[i, j] * 0.5\n  }\n}\n"
	    "schedule {\n  ii = split(i, 4)\n  reorder(k, j, i, ii)\n}\n",
	    /* splits of an affine loop's split index: each block ends at the root's bound */
	    "kernel v\nparam N = 19\narray A : f32[N] inout\n"
	    "for (i: N) {\n  for (j: max(0, i - 11) .. i) {\n    A[i] = A[i] - A[j] * 0.5\n  }\n}\n"
	    "schedule {\n  jj = split(j, 7)\n  jjj = split(jj, 3)\n  jjjj = split(jjj, 2)\n}\n",
	    "kernel w\nparam N = 19\narray A : f32[N] inout\n"
	    "for (i: N) {\n  for (j: max(0, i - 11) .. i) {\n    A[j] = A[j] + A[i] * 0.5\n  }\n}\n"
	    "schedule {\n  jj = split(j, 7)\n  jjj = split(jj, 3)\n  reorder(j, jj, jjj, i)\n}\n",
	    "kernel d\nparam N = 13\narray A : f32[N] inout\n"
	    "for (i: N) { A[i] = A[i] + 1 }\n"
	    "for (j: N) { A[j] = A[N-1-j] * 2 }\n"
	    "schedule {\n  jj = split(j, 4)\n  jjj = split(jj, 3)\n  reorder(j, jj, jjj)\n}\n",
	};
	for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
		char name[64];
		snprintf(name, sizeof name, "the tree runs the written instances, kernel %zu", i);
		h_begin(name);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse(ctx, kernels[i]);
		CHECK(k != NULL);
		if (k) {
			CHECKF(same(k) == 1, "%s", ct_ctx_last_message(ctx));
			ct_kernel_free(k);
		}
		ct_ctx_free(ctx);
		h_end();
	}
}

/* A balanced split sized by a runtime param (its loop tree's bounds are
 * not affine: the analysis uses the closed form of its blocks). */
static void test_balanced_runtime(void)
{
	static const char *fmt = "kernel br\n"
	                         "param N : runtime, M = 6\n"
	                         "array A : f32[N, M] inout\n"
	                         "for (i: 2 .. N, j: 1 .. M-1) { A[i, j] = %s }\n"
	                         "schedule {\n"
	                         "  ii = split(i, 5, balanced=true)\n"
	                         "  reorder(j, i, ii)\n"
	                         "}\n";
	/* a balanced split of a split-off index: its window is its parent's
	 * block, a runtime tail in the last one */
	static const char *fmt2 = "kernel br2\n"
	                          "param N : runtime, M = 6\n"
	                          "array A : f32[N, M] inout\n"
	                          "for (i: 2 .. N, j: 1 .. M-1) { A[i, j] = %s }\n"
	                          "schedule {\n"
	                          "  ii = split(i, 8)\n"
	                          "  iii = split(ii, 3, balanced=true)\n"
	                          "  reorder(i, j, ii, iii)\n"
	                          "}\n";
	char text[512];
	h_begin("balanced split by a runtime param: legal and broken reorders");
	ct_ctx *ctx = ct_ctx_new();
	snprintf(text, sizeof text, fmt, "A[i-2, j] * 0.5");
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		CHECKF(keeps(k, NULL, 0) == 1, "%s", ct_ctx_last_message(ctx));
		ct_kernel_free(k);
	}
	snprintf(text, sizeof text, fmt2, "A[i-2, j] * 0.5");
	k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		CHECKF(keeps(k, NULL, 0) == 1, "%s", ct_ctx_last_message(ctx));
		ct_kernel_free(k);
	}
	snprintf(text, sizeof text, fmt2, "A[i-1, j+1] * 0.5");
	k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		char txt[512];
		CHECKF(keeps(k, txt, sizeof txt) == 0, "%s", ct_ctx_last_message(ctx));
		CHECKF(strstr(txt, "must run after (i-1, j+1)") != NULL, "%s", txt);
		ct_kernel_free(k);
	}
	snprintf(text, sizeof text, fmt, "A[i-1, j+1] * 0.5");
	k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		char txt[512];
		CHECK(keeps(k, txt, sizeof txt) == 0);
		CHECKF(strstr(txt, "must run after (i-1, j+1)") != NULL && strstr(txt, " with N=") != NULL, "%s", txt);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

/* Two statements of one band: the interchange is legal while the second
 * reads what the first wrote in the same iteration, broken once it reads
 * a partial sum. */
static void test_imperfect(void)
{
	static const char *fmt = "kernel imp\n"
	                         "param N = 4, M = 5\n"
	                         "array A : f32[M, M] input\n"
	                         "array S : f32[N] temp\n"
	                         "array B : f32[N, M, M] output\n"
	                         "for (i: N) {\n"
	                         "  S[i] = 0\n"
	                         "  for (j: M, k: M) {\n"
	                         "    S[i] += A[j, k]\n"
	                         "    B[i, j, k] = %s\n"
	                         "  }\n"
	                         "}\n"
	                         "schedule { reorder(k, j) }\n";
	char text[512];
	h_begin("imperfect nest, two statements: reduction kept, partial sums refused");
	ct_ctx *ctx = ct_ctx_new();
	snprintf(text, sizeof text, fmt, "A[j, k] * 2");
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		CHECK(keeps(k, NULL, 0) == 1);
		ct_kernel_free(k);
	}
	snprintf(text, sizeof text, fmt, "S[i]");
	k = parse(ctx, text);
	CHECK(k != NULL);
	if (k) {
		char txt[512];
		CHECK(keeps(k, txt, sizeof txt) == 0);
		CHECKF(strstr(txt, "iteration (i, j, k) of") != NULL, "%s", txt);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

/* dep_parts_ordered of the first nest's parts (the children of its
 * innermost for over `levels` indices), keeping the first `keep` indices. */
static int parts_ok(const char *text, int keep)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	int r = -2;
	if (k) {
		const ir_node *x = k->body[0];
		while (x->nbody == 1 && x->body[0]->kind == ND_FOR)
			x = x->body[0];
		dep_info *d = dep_compute(k);
		r = d ? dep_parts_ordered(d, x->body, x->nbody, keep) : -1;
		dep_free(d);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	return r;
}

static void test_distribution(void)
{
	h_begin("distribution: no dependence from a later part to an earlier one");
	/* trmm: row i gathers the rows below it (not yet scaled), then scales */
	static const char *trmm = "kernel trmm\n"
	                          "param M = 6, N = 5\n"
	                          "array A : f64[M, M] input\n"
	                          "array B : f64[M, N] inout\n"
	                          "for (i: M, j: N) {\n"
	                          "  for (k: i+1 .. M) { B[i, j] += A[k, i] * B[k, j] }\n"
	                          "  B[i, j] = 1.5 * B[i, j]\n"
	                          "}\n";
	CHECK(parts_ok(trmm, 0) == 1);
	CHECK(parts_ok(trmm, 1) == 1);
	/* the rows above, already scaled: only the j loop inside i distributes */
	static const char *up = "kernel up\n"
	                        "param M = 6, N = 5\n"
	                        "array A : f64[M, M] input\n"
	                        "array B : f64[M, N] inout\n"
	                        "for (i: M, j: N) {\n"
	                        "  for (k: 0 .. i) { B[i, j] += A[k, i] * B[k, j] }\n"
	                        "  B[i, j] = 1.5 * B[i, j]\n"
	                        "}\n";
	CHECK(parts_ok(up, 0) == 0);
	CHECK(parts_ok(up, 1) == 1);
	CHECK(parts_ok(up, 2) == 1);
	/* atax's transposed sum: init, then the sum over i2 */
	static const char *atax = "kernel at\n"
	                          "param M = 4, N = 5\n"
	                          "array A : f64[M, N] input\n"
	                          "array t : f64[M] input\n"
	                          "array y : f64[N] output\n"
	                          "for (j2: N) {\n"
	                          "  y[j2] = 0\n"
	                          "  for (i2: M) { y[j2] += A[i2, j2] * t[i2] }\n"
	                          "}\n";
	CHECK(parts_ok(atax, 0) == 1);
	/* a time loop around two sweeps: each reads what the other wrote */
	static const char *jac = "kernel jac\n"
	                         "param T = 3, N = 8\n"
	                         "array A : f64[N] inout\n"
	                         "array B : f64[N] temp\n"
	                         "for (t: T) {\n"
	                         "  for (i: 1 .. N-1) { B[i] = A[i-1] + A[i+1] }\n"
	                         "  for (i2: 1 .. N-1) { A[i2] = B[i2] }\n"
	                         "}\n";
	CHECK(parts_ok(jac, 0) == 0);
	CHECK(parts_ok(jac, 1) == 1);
	h_end();
}

/* dep_temp_private of temp `temp` and the loop over `loop` (the written order's tree), and
 * dep_loop_carries_private of that loop (parallel: reductions count); *priv: whether the latter
 * needs the temp private. */
static int private_ok(const char *text, const char *loop, const char *temp, int *carries_priv, bool *priv)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	int r = -2;
	*carries_priv = -2;
	*priv = false;
	if (k) {
		int a = -1;
		for (int i = 0; i < k->narrays; i++)
			if (strcmp(k->arrays[i].name, temp) == 0)
				a = i;
		dep_info *d = dep_compute(k);
		ct_looptree *t = d ? lt_build_loops(k, false) : NULL;
		const lt_node *x = t ? loop_of(k, t->roots, t->nroots, loop) : NULL;
		bool pv[8] = {false};
		if (x && k->narrays <= 8) {
			r = dep_temp_private(d, t, x, a);
			*carries_priv = dep_loop_carries_private(d, t, x, true, pv);
			*priv = a >= 0 && pv[a];
		}
		ct_looptree_free(t);
		dep_free(d);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	return r;
}

static void test_private_temps(void)
{
	h_begin("temps private to a loop's iterations");
	int c;
	bool pv;
	/* doitgen, its p loop distributed: every (r, q) writes S before it reads it */
	static const char *dg = "kernel dg\n"
	                        "param NR = 3, NQ = 2, NP = 5\n"
	                        "array A : f64[NR, NQ, NP] inout\n"
	                        "array C4 : f64[NP, NP] input\n"
	                        "array S : f64[NP] temp\n"
	                        "for (r: NR, q: NQ) {\n"
	                        "  for (p: NP) { S[p] = 0 }\n"
	                        "  for (p1: NP) { for (s: NP) { S[p1] += A[r, q, s] * C4[s, p1] } }\n"
	                        "  for (p2: NP) { A[r, q, p2] = S[p2] }\n"
	                        "}\n";
	CHECK(private_ok(dg, "r", "S", &c, &pv) == 1 && c == 0 && pv);
	CHECK(private_ok(dg, "q", "S", &c, &pv) == 1 && c == 0 && pv);
	/* p1: its iterations read S[p1] that the p loop (another iteration of nothing around p1) wrote */
	CHECK(private_ok(dg, "p1", "S", &c, &pv) == 0 && c == 0 && !pv);
	/* S[0] written by iteration 0 only, read by every iteration: it flows between them */
	static const char *fl = "kernel fl\n"
	                        "param N = 6, M = 3\n"
	                        "array A : f64[N, M] inout\n"
	                        "array S : f64[N] temp\n"
	                        "for (i: N) {\n"
	                        "  S[i] = A[i, 0] * 2\n"
	                        "  for (j: M) { A[i, j] = A[i, j] + S[0] }\n"
	                        "}\n";
	CHECK(private_ok(fl, "i", "S", &c, &pv) == 0 && c == 1 && !pv);
	/* written outside the loop too: no copy there */
	static const char *out = "kernel out\n"
	                         "param N = 6, M = 3\n"
	                         "array A : f64[N, M] inout\n"
	                         "array T : f64[M] temp\n"
	                         "for (j0: M) { T[j0] = 1 }\n"
	                         "for (i: N) {\n"
	                         "  for (j: M) { T[j] = A[i, j] * 2 }\n"
	                         "  for (j2: M) { A[i, j2] = T[M-1-j2] + 1 }\n"
	                         "}\n";
	CHECK(private_ok(out, "i", "T", &c, &pv) == 0 && c == 1 && !pv);
	/* private, but i carries through A anyway (row i reads row i-1): no temp reported */
	static const char *rec = "kernel rec\n"
	                         "param N = 6, M = 3\n"
	                         "array A : f64[N, M] inout\n"
	                         "array T : f64[M] temp\n"
	                         "for (i: 1 .. N) {\n"
	                         "  for (j: M) { T[j] = A[i-1, j] * 2 }\n"
	                         "  for (j2: M) { A[i, j2] = T[j2] + 1 }\n"
	                         "}\n";
	CHECK(private_ok(rec, "i", "T", &c, &pv) == 1 && c == 1 && !pv);
	/* one element written only on some iterations (an if): a read may find an older value */
	static const char *cond = "kernel cond\n"
	                          "param N = 6, M = 3\n"
	                          "array A : f64[N, M] inout\n"
	                          "array T : f64[M] temp\n"
	                          "for (i: N) {\n"
	                          "  for (j: M) { if (j > 0) { T[j] = A[i, j] } else { T[j] = 0 } }\n"
	                          "  for (j2: M) { if (i > 2 && j2 == 0) { T[j2] = 5 } }\n"
	                          "  for (j3: M) { A[i, j3] = T[j3] }\n"
	                          "}\n";
	CHECK(private_ok(cond, "i", "T", &c, &pv) == 1 && c == 0 && pv);
	h_end();
}

/* dep_rewrite_keeps of rewrite `to` of kernel `from`, with its correspondence. */
static int rewrite_ok(const char *from, const char *to, const int *old_stmt, int *const *old_dim)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *a = parse(ctx, from), *b = a ? parse(ctx, to) : NULL;
	dep_info *d = b ? dep_compute(a) : NULL;
	int r = d ? dep_rewrite_keeps(d, b, old_stmt, old_dim) : -2;
	dep_free(d);
	ct_kernel_free(b);
	ct_kernel_free(a);
	ct_ctx_free(ctx);
	return r;
}

static void test_rewrites(void)
{
	h_begin("rewrites: lu's right-looking interchange keeps every dependence and sum order");
	static const char *lu = "kernel lu\n"
	                        "param N = 9\n"
	                        "array A : f64[N, N] inout\n"
	                        "for (i: N) {\n"
	                        "  for (j: 0 .. i) {\n"
	                        "    for (k: 0 .. j) { A[i, j] -= A[i, k] * A[k, j] }\n"
	                        "    A[i, j] = A[i, j] / A[j, j]\n"
	                        "  }\n"
	                        "}\n";
	static const char *right = "kernel lu\n"
	                           "param N = 9\n"
	                           "array A : f64[N, N] inout\n"
	                           "for (i: N) {\n"
	                           "  for (k: 0 .. i) {\n"
	                           "    A[i, k] = A[i, k] / A[k, k]\n"
	                           "    for (j: k+1 .. i) { A[i, j] -= A[i, k] * A[k, j] }\n"
	                           "  }\n"
	                           "}\n";
	/* new S0 (the division, dims i k) is old S1 (dims i j); new S1 (i k j) is old S0 (i j k) */
	int d0[] = {0, 1}, d1[] = {0, 2, 1};
	int *dims[] = {d0, d1};
	int st[] = {1, 0};
	CHECK(rewrite_ok(lu, right, st, dims) == 1);
	/* a wrong correspondence: the statements swapped back */
	int st_bad[] = {0, 1};
	CHECK(rewrite_ok(lu, right, st_bad, dims) == 0);
	/* the division one iteration late: different instances */
	static const char *shifted = "kernel lu\n"
	                             "param N = 9\n"
	                             "array A : f64[N, N] inout\n"
	                             "for (i: N) {\n"
	                             "  for (k: 0 .. i) {\n"
	                             "    A[i, k] = A[i, k] / A[k, k]\n"
	                             "    for (j: k+2 .. i) { A[i, j] -= A[i, k] * A[k, j] }\n"
	                             "  }\n"
	                             "}\n";
	CHECK(rewrite_ok(lu, shifted, st, dims) == 0);
	/* S1 reads what S2 wrote one iteration of j before, for every k: interchanging breaks it */
	static const char *late = "kernel late\n"
	                          "param N = 9\n"
	                          "array A : f64[N] inout\n"
	                          "array B : f64[N] inout\n"
	                          "for (j: 0 .. N) {\n"
	                          "  for (k: 0 .. j) { B[j] += A[j - 1] }\n"
	                          "  A[j] = B[j]\n"
	                          "}\n";
	static const char *late_r = "kernel late\n"
	                            "param N = 9\n"
	                            "array A : f64[N] inout\n"
	                            "array B : f64[N] inout\n"
	                            "for (k: 0 .. N) {\n"
	                            "  A[k] = B[k]\n"
	                            "  for (j: k+1 .. N) { B[j] += A[j - 1] }\n"
	                            "}\n";
	int e0[] = {0}, e1[] = {1, 0};
	int *edims[] = {e0, e1};
	CHECK(rewrite_ok(late, late_r, st, edims) == 0);
	/* a reordered sum: the k loop of one element reversed */
	static const char *rev = "kernel lu\n"
	                         "param N = 9\n"
	                         "array A : f64[N, N] inout\n"
	                         "for (i: N) {\n"
	                         "  for (j: 0 .. i) {\n"
	                         "    for (k: 0 .. j) { A[i, j] -= A[i, j - 1 - k] * A[j - 1 - k, j] }\n"
	                         "    A[i, j] = A[i, j] / A[j, j]\n"
	                         "  }\n"
	                         "}\n";
	int r0[] = {0, 1, 2}, r1[] = {0, 1};
	int *rdims[] = {r0, r1};
	int rst[] = {0, 1};
	CHECK(rewrite_ok(lu, lu, rst, rdims) == 1);
	CHECK(rewrite_ok(lu, rev, rst, rdims) == 0);
	h_end();
}

int main(void)
{
	test_recurrence_broken();
	test_reduction_reorders();
	test_matmul_loops();
	test_wavefront_tiles();
	test_tree_instances();
	test_imperfect();
	test_balanced_runtime();
	test_distribution();
	test_private_temps();
	test_rewrites();
	return h_report();
}
