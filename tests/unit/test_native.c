/* test_native.c: generated C equals the reference interpreter for many kernels and schedules. */
#include "cachet.h"
#include "harness.h"

#include "gen/gen.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Parse text, give runtime param L the value l (if l > 0), run it natively
 * with verification; true when verified. */
static bool native_ok_with(const char *name, const char *text, int64_t l)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), name);
	if (k && l > 0 && (ct_kernel_set_param(k, "L", l) || ct_kernel_recheck(k))) {
		ct_kernel_free(k);
		k = NULL;
	}
	if (!k) {
		fprintf(stderr, "%s: parse failed: %s %s\n%s\n", name, ct_ctx_diag_render(ctx, 0),
			ct_ctx_last_message(ctx), text);
		ct_ctx_free(ctx);
		return false;
	}
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	ct_status st = ct_kernel_run(k, &o, &r);
	if (st)
		fprintf(stderr, "%s: %s\n%s\n", name, ct_ctx_last_message(ctx), text);
	bool ok = st == CT_OK && r.verified == 1;
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return ok;
}

static bool native_ok(const char *name, const char *text) { return native_ok_with(name, text, 0); }

static void one(const char *name, const char *text)
{
	h_begin(name);
	CHECKF(native_ok(name, text), "%s", name);
	h_end();
}

/* Runtime sizes in strides, in a heap temp and in a column-major output, at
 * several values of L (primes give tails). */
static void runtime_strides(void)
{
	static const char *text =
		"kernel rt2\nparam L : runtime\nparam C = 3\narray A : f64[L, C, L] input\n"
		"array T : f64[L, C] temp\narray B : f64[L, C] output layout=col_major\n"
		"for (i: L, j: C) {\n  T[i, j] = A[i, j, 0] + A[i, j, L-1]\n  B[i, j] = T[i, j] * 2\n}\n"
		"schedule {\n  ii = split(i, 4)\n}\n";
	static const int64_t ls[] = {1, 4, 37, 100};
	for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "runtime strides and temp, L=%lld", (long long)ls[i]);
		h_begin(name);
		CHECKF(native_ok_with(name, text, ls[i]), "%s", name);
		h_end();
	}
}

/* Every chain-respecting order of the tiled matmul (all 90, as in
 * test_interp), with dividing and with prime (tail-producing) sizes. */
static void matmul_orders(void)
{
	static const char *idx[6] = {"i", "j", "k", "ii", "jj", "kk"};
	static const int sizes[2][6] = {{16, 16, 16, 8, 4, 8}, {17, 13, 11, 5, 3, 7}};
	int perm[6] = {0, 1, 2, 3, 4, 5};
	/* enumerate permutations in lexicographic order (next_permutation) */
	for (;;) {
		int pos[6];
		for (int i = 0; i < 6; i++)
			pos[perm[i]] = i;
		if (pos[0] < pos[3] && pos[1] < pos[4] && pos[2] < pos[5]) {
			for (int s = 0; s < 2; s++) {
				char text[1024], order[64] = "", name[96];
				for (int i = 0; i < 6; i++) {
					strcat(order, idx[perm[i]]);
					strcat(order, i < 5 ? ", " : "");
				}
				snprintf(text, sizeof text,
					 "kernel mm\nparam M = %d, N = %d, K = %d\n"
					 "array A : f32[M, K] input\narray B : f32[K, N] input\n"
					 "array C : f32[M, N] inout\n"
					 "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
					 "schedule {\n  ii, jj, kk = tile(i=%d, j=%d, k=%d)\n  reorder(%s)\n}\n",
					 sizes[s][0], sizes[s][1], sizes[s][2], sizes[s][3], sizes[s][4],
					 sizes[s][5], order);
				snprintf(name, sizeof name, "matmul %s (%s)", s ? "prime" : "dividing", order);
				one(name, text);
			}
		}
		int i = 4;
		while (i >= 0 && perm[i] > perm[i + 1])
			i--;
		if (i < 0)
			break;
		int j = 5;
		while (perm[j] < perm[i])
			j--;
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
		for (int a = i + 1, b = 5; a < b; a++, b--) {
			t = perm[a];
			perm[a] = perm[b];
			perm[b] = t;
		}
	}
}

static const char *const types[] = {"f32", "f64", "i32", "i64"};

static void all_types(void)
{
	for (int t = 0; t < 4; t++) {
		char text[1024], name[64];
		snprintf(text, sizeof text,
			 "kernel ty\nparam N = 37\narray X : %s[N] input\narray Y : %s[N] inout\n"
			 "array Z : %s[N] output\n"
			 "for (i: N) {\n  let t = X[i] * 3 - i\n  Y[i] += min(t, X[i]) / 2 + abs(X[i])\n"
			 "  Z[i] = select(t > 0, t, -t) * max(Y[i], 1)\n}\n"
			 "schedule {\n  ii = split(i, 8)\n}\n",
			 types[t], types[t], types[t]);
		snprintf(name, sizeof name, "all ops in %s", types[t]);
		one(name, text);
	}
}

static void more_kernels(void)
{
	one("two-index transform, tiled",
	    "kernel ti\nparam N = 20, V = 13\n"
	    "array A : f64[N, N] input\narray C1 : f64[N, V] input\narray C2 : f64[N, V] input\n"
	    "array T : f64[V, N] temp\narray B : f64[V, V] inout\n"
	    "for (a: V, q: N) {\n  T[a, q] = 0\n  for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
	    "  for (b: V) { B[a, b] += C2[q, b] * T[a, q] }\n}\n"
	    "schedule {\n  aa, qq = tile(a=4, q=6)\n  reorder(a, q, aa, qq)\n  bb = split(b, 5)\n}\n");
	one("stencil with boundary if, prime tiles",
	    "kernel st\nparam N = 23, M = 19\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	    "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
	    "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
	    "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"
	    "schedule {\n  xx, yy = tile(x=7, y=5)\n  reorder(x, y, xx, yy)\n}\n");
	one("runtime size with tails (-D given in the file's default)",
	    "kernel rt\nparam L = 1001\narray X : f32[L] input\narray Y : f32[L] inout\n"
	    "for (i: L) {\n  Y[i] = 2.5 * X[i] + Y[i]\n}\nschedule {\n  ii = split(i, 16)\n  iii = split(ii, 3)\n}\n");
	one("lo..hi bounds and tail of tail",
	    "kernel lh\nparam N = 100\narray A : f64[N] input\narray B : f64[N] inout\n"
	    "for (i: 3 .. N-2) {\n  B[i] = A[i-1] + A[i+2]\n}\nschedule {\n  ii = split(i, 10)\n  iii = split(ii, 4)\n}\n");
	one("column-major and dimension-order layouts",
	    "kernel lay\nparam N = 9, M = 14, P = 5\narray A : f64[N, M, P] input layout=(2, 0, 1)\n"
	    "array B : f64[M, N] output layout=col_major\n"
	    "for (i: N, j: M) {\n  B[j, i] = 0\n  for (p: P) { B[j, i] += A[i, j, p] }\n}\n");
	one("names that are C keywords or library names",
	    "kernel kw\nparam N = 10\narray double : f32[N] input\narray exp : f32[N] output\n"
	    "for (sqrt: N) {\n  let float = double[sqrt] + 1\n  exp[sqrt] = float * 2\n}\n");
	one("big temp on the heap",
	    "kernel big\nparam N = 300\narray X : f64[N, N] input\narray T : f64[N, N] temp\n"
	    "array Y : f64[N] output\n"
	    "for (i: N) {\n  for (j: N) { T[i, j] = X[i, j] * X[j, i] }\n  Y[i] = 0\n"
	    "  for (k: N) { Y[i] += T[i, k] }\n}\n");
	one("integer division by zero and wrap-around",
	    "kernel idz\nparam N = 17\narray X : i32[N] input\narray Y : i32[N] output\n"
	    "for (i: N) {\n  Y[i] = X[i] / (i - 8) + X[i] * 2147483647\n}\n");
}

/* Temps on the stack while they fit (each up to 64 KiB, all up to 256 KiB),
 * the rest on the heap; running out of memory frees the earlier heap ones. */
static void temps_stack_and_heap(void)
{
	static const char text[] =
		"kernel heaps\nparam N = 4000\narray X : f64[N] input\narray T1 : f64[N, 5] temp\n"
		"array T2 : f64[N, 5] temp\narray S1 : f64[N] temp\narray S2 : f64[N] temp\n"
		"array S3 : f64[N] temp\narray S4 : f64[N] temp\narray S5 : f64[N] temp\n"
		"array S6 : f64[N] temp\narray S7 : f64[N] temp\narray S8 : f64[N] temp\n"
		"array S9 : f64[N] temp\narray Y : f64[N] output\n"
		"for (i: N) {\n  T1[i, 0] = X[i]\n  T2[i, 1] = T1[i, 0] * 2\n  S1[i] = T2[i, 1] + 1\n"
		"  S2[i] = S1[i] + 1\n  S3[i] = S2[i] + 1\n  S4[i] = S3[i] + 1\n  S5[i] = S4[i] + 1\n"
		"  S6[i] = S5[i] + 1\n  S7[i] = S6[i] + 1\n  S8[i] = S7[i] + 1\n  S9[i] = S8[i] + 1\n"
		"  Y[i] = S9[i]\n}\n";
	h_begin("temps: stack while they fit, then heap");
	CHECK(native_ok("heaps", text));
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "heaps");
	char *src = k ? ct_kernel_emit(k, "host", NULL) : NULL;
	CHECK(src != NULL);
	static const char *const want[] = {
		"if (!T1)\n\t\treturn 1;",
		"if (!T2) {\n\t\tfree(T1);\n\t\treturn 1;",
		"_Alignas(64) double S8[4000] = {0};",
		"if (!S9) {\n\t\tfree(T1); free(T2);\n\t\treturn 1;",
		"free(S9);",
	};
	for (size_t i = 0; src && i < sizeof want / sizeof want[0]; i++)
		CHECKF(strstr(src, want[i]) != NULL, "missing `%s` in\n%s", want[i], src);
	free(src);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

/* ------------------------------------------------------------ hand-planned tree */

/*
 * A tree edited by hand the way the plan pass edits it, so that the backend
 * and the printer are tested independently of src/plan: the kernel
 *
 *   for (i: N) { B[i] = A[i] * 3; S[0] += A[i] }   split(i, 4), N runtime
 *
 * gets a multicache AA of A (all of A copied before the i loops into
 * AA[(N+3)/4][4], last-major, guarded against the partial last block, and
 * read through floor(i/4) = AFF_TRIP, AFF_LOOP ii and, in the tail, through
 * i + ii - d0 with derived value d0 = N/4*4) and a cache SS of S (zero fill,
 * reduce into S).
 */
static const char cached_text[] =
	"kernel hand\nparam N : runtime\narray A : i32[N] input\narray B : i32[N] output\n"
	"array S : i32[1] inout\n"
	"for (i: N) {\n  B[i] = A[i] * 3\n  S[0] += A[i]\n}\n"
	"schedule {\n  ii = split(i, 4)\n}\n"
	"plan {\n  AA = cache(A, index=ii, trigger_index=i)\n  SS = cache(S, index=i)\n}\n";

enum { HA_A, HA_B, HA_S, HA_AA, HA_SS, HA_N };  /* storage ids */
enum { HI_I, HI_II, HI_C0, HI_C1, HI_N };       /* index ids */

static lt_node *hnode(ct_looptree *t, lt_kind kind)
{
	lt_node *x = ct_arena_alloc(&t->arena, sizeof *x);
	if (x) {
		x->kind = kind;
		x->index = -1;
		x->step = 1;
	}
	return x;
}

/* Give x the n kids of v (and make x their parent). */
static bool hkids(ct_looptree *t, lt_node *x, lt_node *const *v, int n)
{
	x->kids = ct_arena_alloc(&t->arena, sizeof *x->kids * (size_t)n);
	if (!x->kids)
		return false;
	for (int i = 0; i < n; i++) {
		if (!v[i])
			return false;
		x->kids[i] = v[i];
		v[i]->parent = x;
	}
	x->nkids = n;
	return true;
}

/* c + sum of n (kind, id, coef) terms. */
static aff haff(ct_looptree *t, int64_t c, int n, const int (*terms)[3], bool *ok)
{
	aff r = aff_const(c);
	for (int i = 0; i < n; i++)
		r = aff_add(&t->arena, r, aff_sym1(&t->arena, terms[i][0], terms[i][1], terms[i][2], ok), ok);
	return r;
}

static ir_expr *haccess(ct_looptree *t, int a, aff *sub)
{
	ir_expr *e = ct_arena_alloc(&t->arena, sizeof *e);
	if (e) {
		e->kind = EX_ACCESS;
		e->type = t->arrays[a].type;
		e->id = a;
		e->sub = sub;
		e->height = 1;
	}
	return e;
}

static aff *hsubs(ct_looptree *t, int n, const aff *v)
{
	aff *s = ct_arena_alloc(&t->arena, sizeof *s * (size_t)n);
	if (s)
		memcpy(s, v, sizeof *s * (size_t)n);
	return s;
}

/* Copy of e with every access to array `from` replaced by `to` (NULL on
 * allocation failure). */
static ir_expr *hsubst(ct_looptree *t, const ir_expr *e, int from, ir_expr *to)
{
	if (e->kind == EX_ACCESS && e->id == from)
		return to;
	ir_expr *c = ct_arena_alloc(&t->arena, sizeof *c);
	if (!c)
		return NULL;
	*c = *e;
	if (e->nargs > 0) {
		c->args = ct_arena_alloc(&t->arena, sizeof *c->args * (size_t)e->nargs);
		if (!c->args)
			return NULL;
		for (int i = 0; i < e->nargs; i++)
			if (!(c->args[i] = hsubst(t, e->args[i], from, to)))
				return NULL;
	}
	return c;
}

/* A statement: a copy of s (or a new copy statement when s is NULL) with
 * left-hand side lhs and right-hand side rhs. */
static lt_node *hstmt(ct_looptree *t, const ir_node *s, ir_expr *lhs, ir_assign op, ir_expr *rhs)
{
	ir_node *n = ct_arena_alloc(&t->arena, sizeof *n);
	lt_node *x = hnode(t, LT_STMT);
	if (!n || !x || !lhs || !rhs)
		return NULL;
	if (s)
		*n = *s;
	n->kind = ND_STMT;
	n->lhs = lhs;
	n->op = op;
	n->rhs = rhs;
	if (!s)
		n->stmt_id = 0;
	x->stmt = n;
	return x;
}

static lt_node *hloop(ct_looptree *t, int index, const bx *lo, const bx *hi, int64_t step, lt_node *kid)
{
	lt_node *x = hnode(t, LT_LOOP);
	if (!x || !lo || !hi)
		return NULL;
	x->index = index;
	x->lo = lo;
	x->hi = hi;
	x->step = step;
	return hkids(t, x, &kid, 1) ? x : NULL;
}

/* The ii loop of main or tail loop m, its two statements reading AA through
 * aa_col (the column subscript) and accumulating into SS. */
static bool hbody(ct_looptree *t, lt_node *m, aff aa_col, bool *ok)
{
	lt_node *ii = m->kids[0];
	const ir_node *s1 = ii->kids[0]->stmt, *s2 = ii->kids[1]->stmt;
	static const int trip_i[][3] = {{AFF_TRIP, HI_I, 1}};
	aff aa[2] = {haff(t, 0, 1, trip_i, ok), aa_col};
	aff ss0[1] = {aff_const(0)};
	ir_expr *rd = haccess(t, HA_AA, hsubs(t, 2, aa));
	ir_expr *ss = haccess(t, HA_SS, hsubs(t, 1, ss0));
	lt_node *k[2] = {hstmt(t, s1, s1->lhs, s1->op, rd ? hsubst(t, s1->rhs, HA_A, rd) : NULL),
			 hstmt(t, s2, ss, s2->op, rd ? hsubst(t, s2->rhs, HA_A, rd) : NULL)};
	return hkids(t, ii, k, 2);
}

/* Build the hand-planned tree of cached_text (NULL with a message). */
static ct_looptree *hand_planned(ct_kernel *k)
{
	/* the tree before the plan: roots = main and tail loop of i */
	k->has_plan = false;
	ct_looptree *t = ct_kernel_lower(k, 1);
	k->has_plan = true;
	if (!t || t->nroots != 2 || t->narrays != HA_AA || t->nindices != HI_C0 || k->nplan != 2) {
		fprintf(stderr, "hand-planned tree: unexpected tree\n");
		ct_looptree_free(t);
		return NULL;
	}
	ct_arena *a = &t->arena;
	bool ok = true;
	const bx *n = bx_param(a, 0), *four = bx_const(a, 4);
	const bx *rows = bx_bin(a, BX_FLOORDIV, bx_bin(a, BX_ADD, n, bx_const(a, 3)), four);

	/* storage: + AA (i32[(N+3)/4][4], last-major) and SS (i32[1]) */
	ir_array *arrays = ct_arena_alloc(a, sizeof *arrays * HA_N);
	const bx **ext = ct_arena_alloc(a, sizeof *ext * HA_N * IR_MAX_RANK);
	if (!arrays || !ext) {
		ct_looptree_free(t);
		return NULL;
	}
	memcpy(arrays, t->arrays, sizeof *arrays * HA_AA);
	memcpy(ext, t->ext, sizeof *ext * HA_AA * IR_MAX_RANK);
	arrays[HA_AA] = arrays[HA_A];
	arrays[HA_AA].name = "AA";
	arrays[HA_AA].role = CT_TEMP;
	arrays[HA_AA].rank = 2;
	arrays[HA_AA].order[0] = 1;
	arrays[HA_AA].order[1] = 0;
	ext[HA_AA * IR_MAX_RANK] = rows;
	ext[HA_AA * IR_MAX_RANK + 1] = four;
	arrays[HA_SS] = arrays[HA_S];
	arrays[HA_SS].name = "SS";
	arrays[HA_SS].role = CT_TEMP;
	ext[HA_SS * IR_MAX_RANK] = bx_const(a, 1);
	t->arrays = arrays;
	t->ext = ext;
	t->narrays = HA_N;

	/* indices: + copy loops c0, c1 */
	ir_index *ix = ct_arena_alloc(a, sizeof *ix * HI_N);
	if (!ix) {
		ct_looptree_free(t);
		return NULL;
	}
	memcpy(ix, t->indices, sizeof *ix * HI_C0);
	for (int i = HI_C0; i < HI_N; i++) {
		memset(&ix[i], 0, sizeof ix[i]);
		ix[i].name = i == HI_C0 ? "c0" : "c1";
		ix[i].kind = IX_LOOP;
		ix[i].step = 1;
		ix[i].parent = ix[i].child = -1;
		ix[i].root = i;
	}
	t->indices = ix;
	t->nindices = HI_N;

	/* derived value d0 = N / 4 * 4: the start of the tail */
	t->derived = ct_arena_alloc(a, sizeof *t->derived);
	if (!t->derived) {
		ct_looptree_free(t);
		return NULL;
	}
	t->derived[0] = bx_bin(a, BX_MUL, bx_bin(a, BX_FLOORDIV, n, four), four);
	t->nderived = 1;

	/* copy in: for c0, c1: if (N - 4*c0 - c1 - 1 >= 0) AA[c0, c1] = A[4*c0 + c1] */
	static const int guard_t[][3] = {{AFF_PARAM, 0, 1}, {AFF_LOOP, HI_C0, -4}, {AFF_LOOP, HI_C1, -1}};
	static const int cc_t[][3] = {{AFF_LOOP, HI_C0, 1}, {AFF_LOOP, HI_C1, 1}};
	static const int src_t[][3] = {{AFF_LOOP, HI_C0, 4}, {AFF_LOOP, HI_C1, 1}};
	aff *guard = ct_arena_alloc(a, sizeof *guard);
	aff aa_sub[2] = {haff(t, 0, 1, cc_t, &ok), haff(t, 0, 1, cc_t + 1, &ok)};
	aff a_sub[1] = {haff(t, 0, 2, src_t, &ok)};
	lt_node *gif = hnode(t, LT_IF);
	if (!guard || !gif) {
		ct_looptree_free(t);
		return NULL;
	}
	*guard = haff(t, -1, 3, guard_t, &ok);
	gif->guard = guard;
	gif->nguard = 1;
	lt_node *copy = hstmt(t, NULL, haccess(t, HA_AA, hsubs(t, 2, aa_sub)), AS_SET,
			      haccess(t, HA_A, hsubs(t, 1, a_sub)));
	ok = ok && copy && hkids(t, gif, &copy, 1);
	lt_node *cin = hloop(t, HI_C0, bx_const(a, 0), rows, 1, hloop(t, HI_C1, bx_const(a, 0), four, 1, gif));

	/* the body: main loop reads AA[i//4, ii], the tail AA[i//4, i + ii - d0] */
	lt_node *m = t->roots[0], *tl = t->roots[1];
	static const int col_main[][3] = {{AFF_LOOP, HI_II, 1}};
	static const int col_tail[][3] = {{AFF_PARAM, 1, -1}, {AFF_LOOP, HI_I, 1}, {AFF_LOOP, HI_II, 1}};
	ok = ok && m->nkids == 1 && m->kids[0]->nkids == 2 && tl->nkids == 1 && tl->kids[0]->nkids == 2 &&
	     hbody(t, m, haff(t, 0, 1, col_main, &ok), &ok) && hbody(t, tl, haff(t, 0, 3, col_tail, &ok), &ok);

	/* SS: SS[0] = 0 before the loops, S[0] += SS[0] after them */
	aff zero[1] = {aff_const(0)};
	ir_expr *lit = ct_arena_alloc(a, sizeof *lit);
	if (lit) {
		lit->kind = EX_NUM;
		lit->type = CT_I32;
		lit->untyped = true;
		lit->height = 1;
	}
	lt_node *zfill = lit ? hstmt(t, NULL, haccess(t, HA_SS, hsubs(t, 1, zero)), AS_SET, lit) : NULL;
	lt_node *red = hstmt(t, NULL, haccess(t, HA_S, hsubs(t, 1, zero)), AS_ADD,
			     haccess(t, HA_SS, hsubs(t, 1, zero)));
	lt_node *c0 = hnode(t, LT_CACHE), *c1 = hnode(t, LT_CACHE);
	t->regions = ct_arena_alloc(a, sizeof *t->regions * 2);
	t->roots = ct_arena_alloc(a, sizeof *t->roots);
	if (!ok || !c0 || !c1 || !cin || !zfill || !red || !t->regions || !t->roots) {
		fprintf(stderr, "hand-planned tree: building failed\n");
		ct_looptree_free(t);
		return NULL;
	}
	lt_node *k1[4] = {zfill, m, tl, red}, *k0[2] = {cin, c1};
	c1->cache = 1;
	c0->cache = 0;
	ok = hkids(t, c1, k1, 4) && hkids(t, c0, k0, 2);
	t->roots[0] = c0;
	t->nroots = 1;

	lt_region *r = &t->regions[0];
	r->item = 0;
	r->source = HA_A;
	r->buffer = HA_AA;
	r->index = HI_II;
	r->level = 1;
	r->trigger_index = HI_I;
	r->trigger_level = 2;
	r->rank = 2;
	r->nmulti = 1;
	r->shape[0] = rows;
	r->shape[1] = four;
	r->order[0] = 1;
	r->order[1] = 0;
	r->last_major = true;
	r->prologue = LT_PRO_COPY_IN;
	r->epilogue = LT_EPI_NONE;
	r->temp = -1;
	r->node = c0;
	r = &t->regions[1];
	r->item = 1;
	r->source = HA_S;
	r->buffer = HA_SS;
	r->index = r->trigger_index = HI_I;
	r->level = r->trigger_level = 2;
	r->rank = 1;
	r->shape[0] = bx_const(a, 1);
	r->first_major = r->last_major = true;
	r->prologue = LT_PRO_ZERO_FILL;
	r->epilogue = LT_EPI_REDUCE;
	r->temp = -1;
	r->node = c1;
	t->nregions = 2;
	if (!ok) {
		ct_looptree_free(t);
		return NULL;
	}
	return t;
}

/* Generate t's C, compile it with warnings as errors and return its entry
 * (NULL with a message); *src gets the text (free()). */
static gen_entry_fn hload(ct_ctx *ctx, ct_looptree *t, char **src)
{
	size_t len = 0;
	*src = gen_c(t, &len);
	if (!*src) {
		fprintf(stderr, "gen_c: %s\n", ct_ctx_last_message(ctx));
		return NULL;
	}
	static const char *const flags[] = {"-Wall", "-Wextra", "-Werror"};
	ct_compile_options co;
	ct_compile_options_init(&co);
	co.flags = flags;
	co.nflags = 3;
	ct_module *mod = NULL;
	if (ct_module_load(ctx, *src, len, &co, &mod, NULL)) {
		fprintf(stderr, "compile: %s\n%s\n", ct_ctx_last_message(ctx), *src);
		return NULL;
	}
	char fn[300], entry[300];
	gen_symbol_names(t->k, fn, entry, sizeof fn);
	void *sym = ct_module_symbol(mod, entry);
	gen_entry_fn f = NULL;
	if (sym)
		memcpy(&f, &sym, sizeof f);
	return f;
}

/* Run f on A[i] = (7i mod 11) - 5, B = 77, S = {100} with N = n; true when
 * B[i] = 3 A[i] and S = 100 + sum A. */
static bool hrun(gen_entry_fn f, int64_t n)
{
	int32_t *a = malloc(sizeof *a * (size_t)(n + 1)), *b = malloc(sizeof *b * (size_t)(n + 1)), s = 100;
	bool ok = a && b;
	int32_t sum = 100;
	for (int64_t i = 0; ok && i < n; i++) {
		a[i] = (int32_t)(i * 7 % 11) - 5;
		b[i] = 77;
		sum += a[i];
	}
	if (ok) {
		void *args[3] = {a, b, &s};
		int64_t params[1] = {n};
		f(args, params);
	}
	for (int64_t i = 0; ok && i < n; i++)
		if (b[i] != 3 * a[i]) {
			fprintf(stderr, "N=%lld: B[%lld] = %d, want %d\n", (long long)n, (long long)i, b[i], 3 * a[i]);
			ok = false;
		}
	if (ok && s != sum) {
		fprintf(stderr, "N=%lld: S = %d, want %d\n", (long long)n, s, sum);
		ok = false;
	}
	free(a);
	free(b);
	return ok;
}

/* The generated C of the hand-planned tree: buffers as zeroed locals,
 * AFF_TRIP through ct_floordiv64, the derived value, the guard and the
 * region comments; compiled with -Wall -Wextra -Werror it computes what
 * the unplanned tree computes, at sizes with and without a tail. */
static void hand_planned_native(void)
{
	h_begin("hand-planned tree: generated C and native runs");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, cached_text, strlen(cached_text), "hand");
	ct_looptree *t = k ? hand_planned(k) : NULL;
	CHECK(t != NULL);
	char *src = NULL, *src0 = NULL;
	gen_entry_fn f = t ? hload(ctx, t, &src) : NULL;
	CHECK(f != NULL);
	static const char *const want[] = {
		"const int64_t ct_d0 = (N / 4) * 4;",
		"/* cache AA of A: AA[(N + 3) / 4][4] last_major, 1 multicache dim, copy_in */",
		"/* cache SS of S: SS[1] first_major, zero_fill, reduce */",
		"for (int64_t c1 = 0; c1 < ct_min64(4, N - 4 * c0); c1++) {", /* the guard, branch-free */
		"AA[c0 + c1 * ((N + 3) / 4)] = (int32_t)A[4 * c0 + c1];",
		"ct_floordiv64(i, 4) + ii * ((N + 3) / 4)",
		"ct_floordiv64(i, 4) + (i + ii - ct_d0) * ((N + 3) / 4)",
		"static inline int64_t ct_floordiv64(int64_t a, int64_t b)",
		"SS[0] = (int32_t)ct_iadd(SS[0], ",
		"S[0] = (int32_t)ct_iadd(S[0], SS[0]);",
		"_Alignas(64) int32_t SS[1] = {0}; /* cache buffer SS */",
		"memset(AA, 0, AA_bytes);",
		"int cachet_hand(const int32_t *restrict A, int32_t *restrict B, int32_t *restrict S, int64_t N)",
		"return cachet_hand((const int32_t *)args[0], (int32_t *)args[1], (int32_t *)args[2], params[0]);",
	};
	for (size_t i = 0; src && i < sizeof want / sizeof want[0]; i++)
		CHECKF(strstr(src, want[i]) != NULL, "missing `%s` in\n%s", want[i], src);
	/* the floor-division helper the code uses, at every sign */
	if (src) {
		size_t n = strlen(src);
		static const char probe[] = "\nint64_t probe_floordiv(int64_t a, int64_t b);\n"
					    "int64_t probe_floordiv(int64_t a, int64_t b) { return ct_floordiv64(a, b); }\n";
		char *s2 = malloc(n + sizeof probe);
		ct_module *mod = NULL;
		if (s2) {
			memcpy(s2, src, n);
			memcpy(s2 + n, probe, sizeof probe);
		}
		CHECK(s2 && ct_module_load(ctx, s2, strlen(s2), NULL, &mod, NULL) == CT_OK);
		void *sym = mod ? ct_module_symbol(mod, "probe_floordiv") : NULL;
		int64_t (*fd)(int64_t, int64_t) = NULL;
		if (sym)
			memcpy(&fd, &sym, sizeof fd);
		static const int64_t cases[][3] = {{-9, 4, -3}, {-8, 4, -2}, {-1, 4, -1}, {0, 4, 0},  {3, 4, 0},
						   {7, 4, 1},   {8, 4, 2},   {7, -4, -2}, {-7, -4, 1}, {-8, -4, 2}};
		for (size_t i = 0; fd && i < sizeof cases / sizeof cases[0]; i++)
			CHECKF(fd(cases[i][0], cases[i][1]) == cases[i][2], "floor(%lld / %lld) = %lld",
			       (long long)cases[i][0], (long long)cases[i][1], (long long)fd(cases[i][0], cases[i][1]));
		CHECK(fd != NULL);
		free(s2);
	}
	/* the same kernel without the hand edits (and without the plan pass) */
	if (k)
		k->has_plan = false;
	ct_looptree *t0 = k ? ct_kernel_lower(k, 1) : NULL;
	gen_entry_fn f0 = t0 ? hload(ctx, t0, &src0) : NULL;
	CHECK(f0 != NULL);
	CHECK(!src0 || !strstr(src0, "ct_floordiv64"));
	static const int64_t ns[] = {0, 1, 3, 4, 10, 13, 64};
	for (size_t i = 0; f && f0 && i < sizeof ns / sizeof ns[0]; i++) {
		CHECKF(hrun(f, ns[i]), "planned, N=%lld", (long long)ns[i]);
		CHECKF(hrun(f0, ns[i]), "unplanned, N=%lld", (long long)ns[i]);
	}
	free(src);
	free(src0);
	ct_looptree_free(t);
	ct_looptree_free(t0);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

/* Value text of field `key` in the r-th entry of "caches" of json, or
 * NULL: the text from after `"key": ` to the next top-level ',' or '}'. */
static char *cache_field(const char *json, int r, const char *key)
{
	const char *p = strstr(json, "\"caches\": [");
	if (!p)
		return NULL;
	p += strlen("\"caches\": [");
	for (int i = 0; i <= r; i++) {
		p = strchr(p, '{');
		if (!p)
			return NULL;
		if (i < r)
			p = strchr(p, '}');
		if (!p)
			return NULL;
	}
	const char *end = strchr(p, '}');
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *f = strstr(p, pat);
	if (!f || !end || f > end)
		return NULL;
	f += strlen(pat);
	int depth = 0;
	bool str = false;
	const char *e = f;
	for (; *e; e++) {
		if (str) {
			if (*e == '\\' && e[1])
				e++;
			else if (*e == '"')
				str = false;
			continue;
		}
		if (*e == '"')
			str = true;
		else if (*e == '[')
			depth++;
		else if (*e == ']')
			depth--;
		else if (depth == 0 && (*e == ',' || *e == '}'))
			break;
	}
	size_t n = (size_t)(e - f);
	char *v = malloc(n + 1);
	if (v) {
		memcpy(v, f, n);
		v[n] = 0;
	}
	return v;
}

typedef struct cache_row {
	int region;
	const char *key, *value;
} cache_row;

static const cache_row cache_rows[] = {
	{0, "name", "\"AA\""},
	{0, "array", "\"A\""},
	{0, "source", "\"A\""},
	{0, "source_storage", "\"A\""},
	{0, "buffer", "\"AA\""},
	{0, "index", "\"ii\""},
	{0, "level", "1"},
	{0, "trigger_index", "\"i\""},
	{0, "trigger_level", "2"},
	{0, "shape", "[\"(N + 3) / 4\", 4]"},
	{0, "multicache_dims", "1"},
	{0, "layout", "\"last_major\""},
	{0, "elided", "false"},
	{0, "prologue", "\"copy_in\""},
	{0, "epilogue", "\"none\""},
	{0, "double_buffer", "false"},
	{1, "name", "\"SS\""},
	{1, "array", "\"S\""},
	{1, "source", "\"S\""},
	{1, "source_storage", "\"S\""},
	{1, "buffer", "\"SS\""},
	{1, "index", "\"i\""},
	{1, "level", "2"},
	{1, "trigger_index", "\"i\""},
	{1, "trigger_level", "2"},
	{1, "shape", "[1]"},
	{1, "multicache_dims", "0"},
	{1, "layout", "\"first_major\""},
	{1, "prologue", "\"zero_fill\""},
	{1, "epilogue", "\"reduce\""},
};

static const char hand_text[] =
	"# kernel hand: N (runtime)\n"
	"cache AA of A (index ii, level 1; trigger i, level 2): buffer AA[(N + 3) / 4, 4] last_major, "
	"1 multicache dim; copy_in / none:\n"
	"    # prologue: copy_in A -> AA\n"
	"    for c0 in range(0, (N + 3) / 4):\n"
	"        for c1 in range(0, 4):\n"
	"            if N-4*c0-c1-1 >= 0:\n"
	"                AA[c0, c1] = A[4*c0+c1]\n"
	"    # body\n"
	"    cache SS of S (index i, level 2): buffer SS[1] first_major; zero_fill / reduce:\n"
	"        # prologue: zero_fill SS\n"
	"        SS[0] = 0\n"
	"        # body\n"
	"        for i in range(0, N / 4 * 4, step=4):\n"
	"            for ii in range(0, 4):\n"
	"                B[i+ii] = AA[i//4, ii] * 3\n"
	"                SS[0] += AA[i//4, ii]\n"
	"        for i in range(N / 4 * 4, N, step=4):  # tail\n"
	"            for ii in range(0, N % 4):\n"
	"                B[i+ii] = AA[i//4, i+ii-(N / 4 * 4)] * 3\n"
	"                SS[0] += AA[i//4, i+ii-(N / 4 * 4)]\n"
	"        # epilogue: reduce SS into S\n"
	"        S[0] += SS[0]\n";

/* `cachet lower` of the hand-planned tree: the pseudo-code, the tree
 * nodes of the regions and the "caches" entries of the JSON. */
static void hand_planned_lower(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, cached_text, strlen(cached_text), "hand");
	ct_looptree *t = k ? hand_planned(k) : NULL;
	char *text = t ? ct_looptree_to_string(t, CT_FORMAT_TEXT) : NULL;
	char *json = t ? ct_looptree_to_string(t, CT_FORMAT_JSON) : NULL;
	h_begin("hand-planned tree: pseudo-code");
	CHECK(text != NULL);
	CHECKF(text && strcmp(text, hand_text) == 0, "got\n%s", text ? text : "(null)");
	h_end();
	h_begin("hand-planned tree: JSON tree nodes");
	CHECK(json != NULL);
	static const char *const nodes[] = {
		"\"loops\": [{\"cache\": 0, \"body\": [{\"loop\": \"c0\"",
		"{\"cache\": 1, \"body\": [{\"stmt\": 0, \"text\": \"SS[0] = 0\"}",
		"{\"if\": \"N-4*c0-c1-1 >= 0\", \"then\": [{\"stmt\": 0, \"text\": \"AA[c0, c1] = A[4*c0+c1]\"}], "
		"\"else\": []}",
		"{\"stmt\": 1, \"text\": \"B[i+ii] = AA[i//4, i+ii-(N / 4 * 4)] * 3\"}",
		"{\"stmt\": 0, \"text\": \"S[0] += SS[0]\"}",
	};
	for (size_t i = 0; json && i < sizeof nodes / sizeof nodes[0]; i++)
		CHECKF(strstr(json, nodes[i]) != NULL, "missing `%s` in\n%s", nodes[i], json);
	h_end();
	for (size_t i = 0; i < sizeof cache_rows / sizeof cache_rows[0]; i++) {
		const cache_row *row = &cache_rows[i];
		char name[96];
		snprintf(name, sizeof name, "hand-planned tree: caches[%d].%s", row->region, row->key);
		h_begin(name);
		char *v = json ? cache_field(json, row->region, row->key) : NULL;
		CHECKF(v && strcmp(v, row->value) == 0, "got %s, want %s", v ? v : "(absent)", row->value);
		free(v);
		h_end();
	}
	h_begin("hand-planned tree: layout as an order, elided buffer, no index");
	if (t) {
		lt_region *r = &t->regions[1];
		r->first_major = r->last_major = false;
		r->elided = true;
		r->index = -1;
		free(json);
		json = ct_looptree_to_string(t, CT_FORMAT_JSON);
		static const cache_row more[] = {
			{1, "layout", "[0]"}, {1, "elided", "true"}, {1, "buffer", "null"}, {1, "index", "null"}};
		for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
			char *v = json ? cache_field(json, more[i].region, more[i].key) : NULL;
			CHECKF(v && strcmp(v, more[i].value) == 0, "%s: got %s, want %s", more[i].key,
			       v ? v : "(absent)", more[i].value);
			free(v);
		}
	}
	CHECK(t != NULL);
	h_end();
	free(text);
	free(json);
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ loop verbs */

/* Parse text (runtime param L = l when l > 0) in a ctx whose register
 * tiles use vectors of at most vb bytes (0: the machine's), run it natively
 * on 2 threads with verification, and check that its C holds each of
 * want[] (NULL-ended). */
static void verb_case_vb(const char *name, const char *text, int64_t l, const char *const *want, int vb)
{
	h_begin(name);
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, vb) == CT_OK);
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), name);
	if (k && l > 0 && (ct_kernel_set_param(k, "L", l) || ct_kernel_recheck(k))) {
		ct_kernel_free(k);
		k = NULL;
	}
	CHECKF(k != NULL, "%s: %s %s\n%s", name, ct_ctx_diag_render(ctx, 0), ct_ctx_last_message(ctx), text);
	if (k) {
		ct_run_options o;
		ct_run_options_init(&o);
		o.threads = 2;
		ct_run_result r;
		ct_status st = ct_kernel_run(k, &o, &r);
		CHECKF(st == CT_OK && r.verified == 1, "%s: %s", name, ct_ctx_last_message(ctx));
		char *src = ct_kernel_emit(k, "host", NULL);
		CHECK(src != NULL);
		for (int i = 0; src && want && want[i]; i++)
			CHECKF(strstr(src, want[i]) != NULL, "%s: missing `%s` in\n%s", name, want[i], src);
		free(src);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

#define VERB_MM(M, N, K, TYPE)                                                                     \
	"kernel vm\nparam M = " M ", N = " N ", K = " K "\n"                                       \
	"array A : " TYPE "[M, K] input\narray B : " TYPE "[K, N] input\n"                        \
	"array C : " TYPE "[M, N] inout\n"                                                         \
	"for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"

static void verb_case(const char *name, const char *text, int64_t l, const char *const *want)
{
	verb_case_vb(name, text, l, want, 0);
}

/* Every verb, alone and together, with caches, with dividing and
 * non-dividing (tail) sizes and runtime sizes: the result equals the
 * interpreter's, and the C shows the verb. */
static void verbs(void)
{
	static const char *const sched = "schedule {\n  ii, jj, kk = tile(i=4, j=16, k=8)\n"
	                                 "  reorder(i, j, k, ii, kk, jj)\n}\n";
	static const char *const unroll_ii[] = {"const int64_t ii = 3;", NULL};
	static const char *const simd[] = {"#pragma omp simd", NULL};
	static const char *const row_tile[] = {"register tile: 16 of C", NULL};
	static const char *const par[] = {"#pragma omp parallel for schedule(static) num_threads(ct_team(ct_nt, 0, 4))",
	                                  "this thread's */", NULL};
	static const char *const par2[] = {"#pragma omp parallel for collapse(2) schedule(static)", NULL};
	static const char *const dyn[] = {"schedule(dynamic) num_threads(ct_team(ct_nt, 2, 2))", NULL};
	/* with tails the main and tail versions of the parallel loop are one loop:
	 * 17 rows by 4 = 4 + 1 blocks of i, 35 columns by 16 = 2 + 1 blocks of j */
	static const char *const par_tail[] = {"parallel over the main and tail versions of i together",
	                                       "#pragma omp parallel for schedule(static) num_threads(ct_team(ct_nt, 0, 5))",
	                                       "this thread's */", NULL};
	static const char *const dyn_tail[] = {"parallel over the main and tail versions of j together",
	                                       "schedule(dynamic) num_threads(ct_team(ct_nt, 2, 3))", NULL};
	static const struct {
		const char *name, *sizes[3], *type, *plan;
		const char *const *want;
	} rows[] = {
	    {"unroll(ii)", {"16", "32", "16"}, "f32", "unroll(ii)", unroll_ii},
	    {"unroll(ii), tails", {"17", "35", "13"}, "f64", "unroll(ii)", unroll_ii},
	    {"vectorize(jj): a one-row register tile", {"16", "32", "16"}, "f32", "vectorize(jj)", row_tile},
	    {"vectorize(jj), tails", {"17", "35", "13"}, "i32", "vectorize(jj)", simd},
	    {"parallelize(i) with per-thread caches", {"16", "32", "16"}, "f32",
	     "AA = cache(A, index=kk)\n  CC = cache(C, index=ii)\n  parallelize(i)", par},
	    {"parallelize(i) with per-thread caches, tails", {"17", "35", "13"}, "f64",
	     "AA = cache(A, index=kk)\n  CC = cache(C, index=ii)\n  parallelize(i)", par_tail},
	    {"parallelize(i, j) collapsed", {"16", "32", "16"}, "f32", "parallelize(i, j)", par2},
	    {"parallelize(j, dynamic, 2 threads)", {"16", "32", "16"}, "i64",
	     "parallelize(j, policy=dynamic, max_threads=2)", dyn},
	    {"parallelize(j, dynamic, 2 threads), tails", {"17", "35", "13"}, "i64",
	     "parallelize(j, policy=dynamic, max_threads=2)", dyn_tail},
	    {"all three", {"16", "32", "16"}, "f32",
	     "BB = cache(B, index=kk)\n  unroll(kk)\n  vectorize(jj)\n  parallelize(i, j)", par2},
	    {"all three, tails", {"17", "35", "13"}, "f64",
	     "BB = cache(B, index=kk)\n  unroll(ii)\n  vectorize(jj)\n  parallelize(i)", par_tail},
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		char text[2048], name[160];
		snprintf(text, sizeof text, VERB_MM("%s", "%s", "%s", "%s") "%splan {\n  %s\n}\n", rows[r].sizes[0],
		         rows[r].sizes[1], rows[r].sizes[2], rows[r].type, rows[r].type, rows[r].type, sched,
		         rows[r].plan);
		snprintf(name, sizeof name, "verbs: %s", rows[r].name);
		verb_case(name, text, 0, rows[r].want);
	}
	/* a per-thread buffer too large for thread stacks: slices of a heap slab */
	static const char *const slab[] = {"ct_thread_num()", "free(ct_priv_", NULL};
	verb_case("verbs: parallelize(i), per-thread cache on the heap",
	          "kernel vh\nparam N = 620\narray A : f32[N + 3, N] input\narray B : f32[4, N] output\n"
	          "for (i: 4, j: N) {\n  B[i, j] = 0\n  for (k: N) { B[i, j] += A[i + j, k] * (i + 1) }\n}\n"
	          "plan {\n  AA = cache(A, index=j, thrifty=false)\n  parallelize(i)\n}\n",
	          0, slab);
	/* runtime sizes: the unrolled main version, its runtime tail a loop */
	static const char *const rt =
	    "kernel vr\nparam L : runtime\narray X : f32[L, L] input\narray Y : f32[L] inout\n"
	    "array Z : f32[L, L] output\n"
	    "for (i: L, j: L) {\n  Z[i, j] = X[i, j] * Y[j] + i\n}\n"
	    "schedule {\n  ii, jj = tile(i=4, j=8)\n  reorder(i, j, ii, jj)\n}\n"
	    "plan {\n  XX = cache(X, index=ii)\n  unroll(ii)\n  vectorize(jj)\n  parallelize(i, j)\n}\n";
	static const int64_t ls[] = {1, 4, 37};
	for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
		char name[96];
		snprintf(name, sizeof name, "verbs: runtime L=%lld", (long long)ls[i]);
		verb_case(name, rt, ls[i], unroll_ii);
	}
}

/* ------------------------------------------------------------ register tiles */

#define RT_SCHED(NC, KC, MC, NR, MR)                                                               \
	"schedule {\n  jj, kk, ii = tile(j=" NC ", k=" KC ", i=" MC ")\n  jjj = split(jj, " NR ")\n" \
	"  iii = split(ii, " MR ")\n  reorder(j, k, i, jj, ii, kk, iii, jjj)\n}\n"

/* The unroll x vectorize band becomes a register tile (the C shows it)
 * and the result equals the interpreter's: packed BLIS-like matmul plans
 * in f32 and f64 with dividing and tail sizes, at vector widths 16, 32
 * and 64 bytes, `-=` and fma, a scalar expression broadcast, a 1-D
 * convolution (the tile of a non-matmul statement), and runtime sizes
 * whose runtime tails stay loops. */
static void register_tiles(void)
{
	static const char *const plan =
	    "plan {\n  BB = cache(B, index=kk, trigger_index=i)\n"
	    "  AA = cache(A, index=kk, trigger_index=jj, layout=(1, 0))\n"
	    "  unroll(iii)\n  vectorize(jjj)\n  parallelize(i)\n}\n";
	static const char *const tile16[] = {"register tile: 4 x 16 of C", "ct_v16f ct_r3 = ct_ld_v16f(", NULL};
	static const char *const tile8[] = {"register tile: 4 x 16 of C", "ct_v8f ct_r7 = ct_ld_v8f(", NULL};
	static const char *const tile4d[] = {"register tile: 4 x 16 of C", "ct_v4d ct_r", NULL};
	/* 13 floats: one masked 16-lane chunk with 64-byte vectors, 8 + 4 + 1 with 32 */
	static const char *const tail13[] = {"register tile: 3 x 13 of C (3 accumulators", "ct_ldm_v16f(&",
	                                     ", 13);", "ct_stm_v16f(&", NULL};
	static const char *const tail13_32[] = {"register tile: 3 x 13 of C", "ct_v8f", "ct_v4f", "float ct_r2 =", NULL};
	static const struct {
		const char *name, *sizes, *type;
		int vb;
		const char *const *want;
	} rows[] = {
	    {"f32, 64-byte vectors", "M = 48, N = 64, K = 40", "f32", 64, tile16},
	    {"f32, 32-byte vectors", "M = 48, N = 64, K = 40", "f32", 32, tile8},
	    {"f32, tails", "M = 51, N = 45, K = 37", "f32", 64, tail13},
	    {"f32, 32-byte vectors, tails", "M = 51, N = 45, K = 37", "f32", 32, tail13_32},
	    {"f64, 32-byte vectors, tails", "M = 50, N = 64, K = 37", "f64", 32, tile4d},
	    {"f64, 16-byte vectors, tails", "M = 7, N = 29, K = 3", "f64", 16, NULL},
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		char text[2048], name[128];
		snprintf(text, sizeof text,
		         "kernel rt\nparam %s\narray A : %s[M, K] input\narray B : %s[K, N] input\n"
		         "array C : %s[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
		         "%s%s",
		         rows[r].sizes, rows[r].type, rows[r].type, rows[r].type, RT_SCHED("32", "16", "24", "16", "4"), plan);
		snprintf(name, sizeof name, "register tile: %s", rows[r].name);
		verb_case_vb(name, text, 0, rows[r].want, rows[r].vb);
	}
	static const char *const sub_fma[] = {"register tile: 3 x 8 of C", "ct_r5 = ct_r5 - ", NULL};
	verb_case_vb("register tile: -= with fma and a broadcast expression",
	             "kernel rf\nparam M = 13, N = 20, K = 9\narray A : f64[M, K] input\narray B : f64[K, N] input\n"
	             "array C : f64[M, N] inout\n"
	             "for (i: M, j: N, k: K) {\n  C[i, j] -= fma(2 * A[i, k] - 1, B[k, j], B[k, j] * A[i, k])\n}\n"
	             "schedule {\n  ii, jj = tile(i=3, j=8)\n  reorder(i, j, k, ii, jj)\n}\n"
	             "plan {\n  unroll(ii)\n  vectorize(jj)\n}\n",
	             0, sub_fma, 32);
	static const char *const conv[] = {"register tile: 16 of Y", "ct_ld_v16f(&X[", NULL};
	verb_case_vb("register tile: 1-D convolution",
	             "kernel conv\nparam N = 100, K = 7\narray X : f32[N + K] input\narray W : f32[K] input\n"
	             "array Y : f32[N] inout\n"
	             "for (i: N, k: K) {\n  Y[i] += W[k] * X[i + k]\n}\n"
	             "schedule {\n  ii = split(i, 16)\n  reorder(i, k, ii)\n}\n"
	             "plan {\n  vectorize(ii)\n}\n",
	             0, conv, 64);
	static const char *const none[] = {"#pragma omp simd", NULL};
	verb_case_vb("no register tile: select in the statement",
	             "kernel ns\nparam M = 12, N = 32, K = 5\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
	             "array C : f32[M, N] inout\n"
	             "for (i: M, j: N, k: K) {\n  C[i, j] += select(A[i, k] > 0, B[k, j], 0)\n}\n"
	             "schedule {\n  ii, jj = tile(i=4, j=16)\n  reorder(i, j, k, ii, jj)\n}\n"
	             "plan {\n  unroll(ii)\n  vectorize(jj)\n}\n",
	             0, none, 64);
	static const char *const rt_tile[] = {"register tile: 4 x 16 of C", NULL};
	static const char *const rt =
	    "kernel rr\nparam L : runtime\narray A : f32[L, L] input\narray B : f32[L, L] input\n"
	    "array C : f32[L, L] inout\nfor (i: L, j: L, k: L) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	    RT_SCHED("32", "16", "24", "16", "4")
	    "plan {\n  BB = cache(B, index=kk, trigger_index=i)\n"
	    "  AA = cache(A, index=kk, trigger_index=jj, layout=(1, 0))\n"
	    "  unroll(iii)\n  vectorize(jjj)\n  parallelize(j)\n}\n";
	static const int64_t ls[] = {1, 16, 50};
	for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
		char name[96];
		snprintf(name, sizeof name, "register tile: runtime L=%lld", (long long)ls[i]);
		verb_case_vb(name, rt, ls[i], rt_tile, 64);
	}
}

/* ct_threads_wait_default: sets GOMP_SPINCOUNT (a positive count) only when the user set
 * neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, and never changes what the user set. */
static void threads_wait_default(void)
{
	static const struct {
		const char *policy, *spin; /* the user's values, NULL = unset */
		int sets;
	} cases[] = {
	    {NULL, NULL, 1}, {"passive", NULL, 0}, {"active", NULL, 0}, {NULL, "0", 0}, {"passive", "500", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsetenv("OMP_WAIT_POLICY");
		unsetenv("GOMP_SPINCOUNT");
		if (cases[i].policy)
			setenv("OMP_WAIT_POLICY", cases[i].policy, 1);
		if (cases[i].spin)
			setenv("GOMP_SPINCOUNT", cases[i].spin, 1);
		CHECKF(ct_threads_wait_default() == cases[i].sets, "case %zu", i);
		const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
		CHECKF(cases[i].policy ? policy && strcmp(policy, cases[i].policy) == 0 : !policy, "case %zu: policy", i);
		if (cases[i].spin)
			CHECKF(spin && strcmp(spin, cases[i].spin) == 0, "case %zu: the user's count kept", i);
		else if (cases[i].sets)
			CHECKF(spin && atol(spin) > 0 && strspn(spin, "0123456789") == strlen(spin), "case %zu: count '%s'", i,
			       spin ? spin : "(unset)");
		else
			CHECKF(!spin, "case %zu: no count", i);
	}
	unsetenv("OMP_WAIT_POLICY");
	unsetenv("GOMP_SPINCOUNT");
}

int main(void)
{
	threads_wait_default();
	hand_planned_native();
	hand_planned_lower();
	temps_stack_and_heap();
	matmul_orders();
	all_types();
	more_kernels();
	runtime_strides();
	verbs();
	register_tiles();
	return h_report();
}
