/* test_plan.c: the plan pass: where each cache lands, its shape and actions, and that planned runs equal unplanned ones. */
#include "harness.h"

#include "ir/looptree.h"

#include <stdlib.h>

/* Every region of a tree as text, one per line:
 *   NAME@INDEX/LEVEL^TRIGGER/TLEVEL [SHAPE] elided|copy PRO/EPI mN [db] */
static void describe(const ct_looptree *t, char *out, size_t cap)
{
	out[0] = 0;
	size_t n = 0;
	for (int r = 0; r < t->nregions; r++) {
		const lt_region *g = &t->regions[r];
		static const char *const pro[] = {"none", "copy_in", "zero_fill"};
		static const char *const epi[] = {"none", "copy_out", "reduce"};
		n += (size_t)snprintf(out + n, cap - n, "%s@%s/%d^%s/%d [", t->k->plan[g->item].name,
		                      g->index >= 0 ? t->indices[g->index].name : "-", g->level,
		                      g->trigger_index >= 0 ? t->indices[g->trigger_index].name : "-",
		                      g->trigger_level);
		for (int d = 0; d < g->rank && n < cap; d++) {
			ct_buf b;
			ct_buf_init(&b);
			bx_print(&b, t->k, g->shape[d]);
			n += (size_t)snprintf(out + n, cap - n, "%s%s", d ? "," : "", b.s ? b.s : "?");
			ct_buf_free(&b);
		}
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "] %s %s/%s m%d%s\n",
			                      g->elided ? "elided" : "copy", pro[g->prologue], epi[g->epilogue],
			                      g->nmulti, g->double_buffer ? " db" : "");
		if (n >= cap)
			return;
	}
}

#define MM_HEAD                                                                                    \
	"array A : f32[M, K] input\n"                                                              \
	"array B : f32[K, N] input\n"                                                              \
	"array C : f32[M, N] inout\n"                                                              \
	"for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"

typedef struct pcase {
	const char *name;
	const char *text;
	const char *rt;     /* runtime param to set, or NULL */
	int64_t rt_value;
	const char *expect; /* describe() of the tree */
} pcase;

static const pcase cases[] = {
    /* Accera's 32^3 example: A at ii is a 4x32 row block (contiguous:
     * elided), B at k a 32x16 block, C at ii a 4x16 accumulator hoisted
     * out over k, which does not move it */
    {"index", "kernel mm\nparam M = 32, N = 32, K = 32\n" MM_HEAD
              "schedule { ii, jj, kk = tile(i=4, j=16, k=32)\n reorder(i, j, k, ii, jj, kk) }\n"
              "plan(target=host) { AA = cache(A, index=ii)\n BB = cache(B, index=k)\n CC = cache(C, index=ii) }\n",
     NULL, 0,
     "AA@ii/3^ii/3 [4,32] elided copy_in/none m0\n"
     "BB@k/4^k/4 [32,16] copy copy_in/none m0\n"
     "CC@k/4^k/4 [4,16] copy zero_fill/reduce m0\n"},
    /* level 2 of (i, j, k, ii, jj, kk) is jj; thrifty=false keeps the copy */
    {"level", "kernel mm\nparam M = 32, N = 32, K = 32\n" MM_HEAD
              "schedule { ii, jj, kk = tile(i=4, j=16, k=8)\n reorder(i, j, k, ii, jj, kk) }\n"
              "plan(target=host) { AA = cache(A, level=2, thrifty=false)\n BB = cache(B, level=3) }\n",
     NULL, 0,
     "AA@jj/2^jj/2 [1,8] copy copy_in/none m0\n"
     "BB@ii/3^ii/3 [8,16] copy copy_in/none m0\n"},
    /* budgets: C's block is 16 at jj, 64 at iii and at kk (kk does not
     * move it), 128 at ii; B with budget 1 is an element-level cache */
    {"budget", "kernel mm\nparam M = 32, N = 32, K = 32\n" MM_HEAD
               "schedule { ii, jj, kk = tile(i=8, j=16, k=8)\n iii = split(ii, 4)\n"
               " reorder(i, j, k, ii, kk, iii, jj) }\n"
               "plan(target=host) { CC = cache(C, max_elements=64)\n BB = cache(B, max_elements=1)\n"
               " AA = cache(A, max_elements=100000) }\n",
     NULL, 0,
     "CC@kk/3^kk/3 [4,16] copy zero_fill/reduce m0\n"
     "BB@-/0^-/0 [1,1] elided copy_in/none m0\n"
     "AA@i/7^i/7 [32,32] elided copy_in/none m0\n"},
    /* hierarchy: a transposed 8x8 block of A, and inside it a 4x1 column
     * that is contiguous in the column-major parent (elided) */
    {"hierarchy", "kernel mm\nparam M = 32, N = 32, K = 32\n" MM_HEAD
                  "schedule { ii, jj, kk = tile(i=8, j=16, k=8)\n iii = split(ii, 4)\n"
                  " reorder(i, j, k, ii, kk, iii, jj) }\n"
                  "plan(target=host) { AA = cache(A, level=4, layout=last_major)\n"
                  " AAA = cache(AA, level=2, layout=first_major) }\n",
     NULL, 0,
     "AA@ii/4^ii/4 [8,8] copy copy_in/none m0\n"
     "AAA@iii/2^iii/2 [4,1] elided copy_in/none m0\n"},
    /* prime tiles: main and tail regions, each its own shape */
    {"prime", "kernel mm\nparam M = 30, N = 30, K = 30\n" MM_HEAD
              "schedule { ii, jj, kk = tile(i=7, j=11, k=13)\n reorder(i, j, k, ii, jj, kk) }\n"
              "plan(target=host) { CC = cache(C, index=jj) }\n",
     NULL, 0,
     "CC@jj/2^jj/2 [1,11] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,11] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,8] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,8] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,11] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,11] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,8] elided zero_fill/reduce m0\n"
     "CC@jj/2^jj/2 [1,8] elided zero_fill/reduce m0\n"},
    /* multicache: B at kk (hoisted out over ii and i, which do not move
     * it), triggered at k: one 8x16 slot per k step */
    {"multicache", "kernel mm\nparam M = 32, N = 32, K = 32\n" MM_HEAD
                   "schedule { ii, jj, kk = tile(i=8, j=16, k=8)\n reorder(j, k, i, ii, kk, jj) }\n"
                   "plan(target=host) { BB = cache(B, level=2, trigger_level=5) }\n",
     NULL, 0, "BB@i/4^k/5 [4,8,16] copy copy_in/none m1\n"},
    /* double buffering of A at ii, and its peeled last k step */
    {"double_buffer", "kernel mm\nparam M = 32, N = 32, K = 32\n" MM_HEAD
                      "schedule { ii, jj, kk = tile(i=8, j=16, k=8)\n reorder(i, j, k, ii, jj, kk) }\n"
                      "plan(target=host) { AA = cache(A, index=ii, double_buffer=true) }\n",
     NULL, 0, "AA@ii/3^ii/3 [8,8] copy copy_in/none m0 db\n"},
    /* an output written by `=` everywhere: zero fill and copy out */
    {"output", "kernel sc\nparam N = 24\narray X : f64[N, N] input\narray Y : f64[N, N] output\n"
               "for (i: N, j: N) { Y[i, j] = 2 * X[j, i] }\n"
               "schedule { ii = split(i, 8)\n jj = split(j, 8)\n reorder(i, j, ii, jj) }\n"
               "plan(target=host) { YY = cache(Y, index=ii)\n XX = cache(X, index=ii, layout=last_major) }\n",
     NULL, 0,
     "YY@ii/2^ii/2 [8,8] copy zero_fill/copy_out m0\n"
     "XX@ii/2^ii/2 [8,8] copy copy_in/none m0\n"},
    /* a 5-point stencil: a 10x10 halo block around each 8x8 tile */
    {"halo", "kernel st\nparam N = 20, M = 20\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
             "for (x: N, y: M) {\n if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
             "  B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
             " } else { B[x, y] = A[x, y] } }\n"
             "schedule { xx, yy = tile(x=8, y=8)\n reorder(x, y, xx, yy) }\n"
             "plan(target=host) { AA = cache(A, index=xx) }\n",
     NULL, 0,
     "AA@xx/2^xx/2 [10,10] copy copy_in/none m0\n"
     "AA@xx/2^xx/2 [10,6] copy copy_in/none m0\n"
     "AA@xx/2^xx/2 [6,10] copy copy_in/none m0\n"
     "AA@xx/2^xx/2 [6,6] copy copy_in/none m0\n"},
    /* the whole array of a guarded stencil is clamped to the array */
    {"halo_whole", "kernel st\nparam N = 20\narray A : f32[N] input\narray B : f32[N] output\n"
                   "for (x: N) { if (0 < x && x < N-1) { B[x] = A[x-1] + A[x+1] } else { B[x] = A[x] } }\n"
                   "plan(target=host) { AA = cache(A, index=x) }\n",
     NULL, 0, "AA@x/1^x/1 [20] elided copy_in/none m0\n"},
    /* runtime M: tiles of 8 rows, the tail's block bounded by the tile */
    {"runtime", "kernel mm\nparam M : runtime\nparam N = 20, K = 20\n" MM_HEAD
                "schedule { ii, jj = tile(i=8, j=16)\n reorder(i, j, k, ii, jj) }\n"
                "plan(target=host) { AA = cache(A, index=ii)\n CC = cache(C, index=ii) }\n",
     "M", 37,
     "AA@ii/2^ii/2 [8,1] copy copy_in/none m0\n"
     "AA@ii/2^ii/2 [8,1] copy copy_in/none m0\n"
     "AA@ii/2^ii/2 [7,1] copy copy_in/none m0\n"
     "AA@ii/2^ii/2 [7,1] copy copy_in/none m0\n"
     "CC@k/3^k/3 [8,16] copy zero_fill/reduce m0\n"
     "CC@k/3^k/3 [8,4] copy zero_fill/reduce m0\n"
     "CC@k/3^k/3 [7,16] copy zero_fill/reduce m0\n"
     "CC@k/3^k/3 [7,4] copy zero_fill/reduce m0\n"},
    /* an imperfect nest: T is read and written (copy in and out), B accumulates */
    {"imperfect", "kernel two_index\nparam V = 12, N = 10\narray A : f64[N, N] input\n"
                  "array C1 : f64[N, V] input\narray C2 : f64[N, V] input\narray T : f64[V, N] temp\n"
                  "array B : f64[V, V] inout\n"
                  "for (a: V, q: N) {\n T[a, q] = 0\n for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
                  " for (b: V) { B[a, b] += C2[q, b] * T[a, q] } }\n"
                  "plan(target=host) { BB = cache(B, index=q)\n CC = cache(C1, index=p) }\n",
     NULL, 0,
     "BB@q/2^q/2 [1,12] elided zero_fill/reduce m0\n"
     "CC@q/2^q/2 [10,1] copy copy_in/none m0\n"},
    /* integers accumulate exactly through a reduce */
    {"int_reduce", "kernel h\nparam N = 40\narray X : i32[N, 8] input\narray H : i32[8] inout\n"
                   "for (i: N, j: 8) { H[j] += X[i, j] }\n"
                   "schedule { ii = split(i, 7) }\n"
                   "plan(target=host) { HH = cache(H, index=i, thrifty=false) }\n",
     NULL, 0,
     "HH@i/3^i/3 [8] copy zero_fill/reduce m0\n"
     "HH@i/3^i/3 [8] copy zero_fill/reduce m0\n"},
};

static void run_case(const pcase *c)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, c->text, strlen(c->text), "plan.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	if (c->rt)
		CHECK(ct_kernel_set_param(k, c->rt, c->rt_value) == CT_OK);
	ct_looptree *t = ct_kernel_lower(k, 1);
	CHECKF(t != NULL, "%s", ct_ctx_last_message(ctx));
	if (t) {
		char got[4096];
		describe(t, got, sizeof got);
		CHECKF(strcmp(got, c->expect) == 0, "regions\n%s\nexpected\n%s", got, c->expect);
		ct_looptree_free(t);
	}
	for (int e = 0; e < 2; e++) {
		ct_run_options o;
		ct_run_options_init(&o);
		o.engine = e ? CT_ENGINE_NATIVE : CT_ENGINE_INTERP;
		ct_run_result r;
		ct_status st = ct_kernel_run(k, &o, &r);
		if (e && st == CT_ERR_UNSUPPORTED)
			continue; /* no C compiler here */
		CHECKF(st == CT_OK && r.verified == 1, "%s: %s (verified %d)", e ? "native" : "interp",
		       ct_ctx_last_message(ctx), r.verified);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Errors that only the plan pass can see, at the offending argument. */
static void test_errors(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
	    {"kernel t\nparam N = 8\narray A : f32[N, N] input\narray B : f32[N, N] output\n"
	     "for (i: N, j: N) { B[i, j] = A[i, j] + A[j, i] }\n"
	     "schedule { ii = split(i, 4) }\n"
	     "plan(target=host) { AA = cache(A, index=ii) }\n",
	     "plan.cachet:7:21: error: cache 'AA': the uses of 'A' move differently"},
	    {"kernel t\nparam N = 8\narray A : f32[N] input\narray B : f32[N] output\n"
	     "for (i: N) { B[i] = A[i] }\n"
	     "plan(target=host) { AA = cache(A, index=i)\n AB = cache(A, index=i) }\n",
	     "plan.cachet:7:13: error: 'A' already has cache 'AA'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, bad[i].text, strlen(bad[i].text), "plan.cachet");
		CHECK(k == NULL);
		char got[600];
		snprintf(got, sizeof got, "%s:%d:%d: error: %s", ct_ctx_last_file(ctx) ? ct_ctx_last_file(ctx) : "",
		         ct_ctx_last_line(ctx), ct_ctx_last_col(ctx), ct_ctx_last_message(ctx));
		CHECKF(strncmp(got, bad[i].msg, strlen(bad[i].msg)) == 0, "got '%s', want '%s'", got, bad[i].msg);
		CHECK(ct_ctx_last_status(ctx) == CT_ERR_INPUT);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		h_begin(cases[i].name);
		run_case(&cases[i]);
		h_end();
	}
	RUN(test_errors);
	return h_report();
}
