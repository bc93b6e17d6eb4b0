/* test_native.c: generated C equals the reference interpreter for many kernels and schedules. */
#include "cachet.h"
#include "harness.h"

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

int main(void)
{
	matmul_orders();
	all_types();
	more_kernels();
	runtime_strides();
	return h_report();
}
