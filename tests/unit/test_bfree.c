/* test_bfree.c: branch-free halo copies and split boundary loops: both forms equal the interpreter; the interior has no tests. */
#include "cachet.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define STENCIL_BODY                                                                        \
	"for (x: N, y: M) {\n"                                                              \
	"  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"                                   \
	"    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"     \
	"  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"

typedef struct kcase {
	const char *name, *text;
	int threads;
} kcase;

static const kcase cases[] = {
	{"halo caches", "kernel k1\nparam N = 64, M = 64\narray A : f32[N, M] input\narray B : f32[N, M] output\n" STENCIL_BODY
	 "schedule {\n  xx, yy = tile(x=16, y=32)\n  reorder(x, y, xx, yy)\n}\n"
	 "plan {\n  AA = cache(A, index=xx)\n  BB = cache(B, index=xx)\n}\n", 1},
	{"tails and runtime sizes", "kernel k2\nparam N : runtime, M = 45\narray A : f64[N, M] input\narray B : f64[N, M] output\n" STENCIL_BODY
	 "schedule {\n  xx, yy = tile(x=8, y=16)\n  reorder(x, y, xx, yy)\n}\n"
	 "plan {\n  AA = cache(A, index=xx)\n}\n", 1},
	{"unscheduled", "kernel k3\nparam N = 33, M = 20\narray A : f32[N, M] input\narray B : f32[N, M] output\n" STENCIL_BODY, 1},
	{"==, >=, negative coefficients, no else",
	 "kernel k4\nparam N = 30\narray A : i32[N, N] input\narray B : i32[N, N] inout\n"
	 "for (x: N, y: N) {\n  if (x >= 2 && N - 3 - y >= 0 && 4 <= y) { B[x, y] = A[x, y] + 1 }\n}\n"
	 "for (p: N, q: N) {\n  if (q == 5) { B[p, q] = B[p, q] * 2 } else { B[p, q] = B[p, q] - 1 }\n}\n", 1},
	{"fallbacks: !=, ||, coefficient 2",
	 "kernel k5\nparam N = 30\narray A : f64[N, N] input\narray B : f64[N, N] output\n"
	 "for (x: N, y: N) {\n  if (y != 3 && 2*y < N) { B[x, y] = A[x, y] } else if (x < 2 || y > N-3) { B[x, y] = 1 } else { B[x, y] = 2 }\n}\n", 1},
	{"SPMD with private halo tiles", "kernel k6\nparam N = 96, M = 70\narray A : f32[N, M] input\narray B : f32[N, M] output\n" STENCIL_BODY
	 "schedule {\n  xx, yy = tile(x=48, y=70)\n  reorder(x, y, xx, yy)\n}\n"
	 "plan {\n  AA = cache(A, index=xx)\n  parallelize(x, y, spmd=true)\n}\n", 2},
	{"1-D with halo", "kernel k7\nparam N = 100\narray A : f64[N] input\narray B : f64[N] output\n"
	 "for (i: N) {\n  if (0 < i && i < N-1) { B[i] = (A[i-1] + A[i] + A[i+1]) / 3 } else { B[i] = A[i] }\n}\n"
	 "schedule {\n  ii = split(i, 16)\n}\nplan {\n  AA = cache(A, index=ii)\n}\n", 1},
};

static void test_forms_verify(void)
{
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int branching = 0; branching <= 1; branching++) {
			ct_ctx *ctx = ct_ctx_new();
			CHECK(ct_ctx_set_option(ctx, CT_OPT_BRANCHING, branching) == CT_OK);
			ct_kernel *k = ct_kernel_parse(ctx, cases[c].text, strlen(cases[c].text), cases[c].name);
			CHECKF(k != NULL, "%s: %s", cases[c].name, ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : "");
			if (k && strcmp(cases[c].name, "tails and runtime sizes") == 0)
				CHECK(ct_kernel_set_param(k, "N", 37) == CT_OK && ct_kernel_recheck(k) == CT_OK);
			ct_run_options o;
			ct_run_options_init(&o);
			o.threads = cases[c].threads;
			ct_run_result r;
			ct_status st = k ? ct_kernel_run(k, &o, &r) : CT_ERR_INPUT;
			CHECKF(st == CT_OK && r.verified == 1, "%s, branching %d: %s", cases[c].name, branching,
			       ct_ctx_last_message(ctx));
			ct_kernel_free(k);
			ct_ctx_free(ctx);
		}
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_ctx_set_option(ctx, CT_OPT_BRANCHING, 2) == CT_ERR_USAGE);
	CHECK(ct_ctx_get_option(ctx, CT_OPT_BRANCHING) == 0);
	ct_ctx_free(ctx);
}

static char *emit(const char *text, int branching)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_ctx_set_option(ctx, CT_OPT_BRANCHING, branching);
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "emit");
	char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return src;
}

/* The text of the block that follows marker in src (from its '{' to the
 * matching '}'), or NULL. */
static char *block_after(const char *src, const char *marker)
{
	const char *m = strstr(src, marker);
	const char *open = m ? strchr(m, '{') : NULL;
	if (!open)
		return NULL;
	int depth = 0;
	for (const char *p = open; *p; p++) {
		depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
		if (depth == 0) {
			size_t n = (size_t)(p - open + 1);
			char *r = malloc(n + 1);
			if (r) {
				memcpy(r, open, n);
				r[n] = 0;
			}
			return r;
		}
	}
	return NULL;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

/* The interior loop of the split has no condition, and the copies of the
 * halo caches have none either; the branching form has both. */
static void test_emitted_interior(void)
{
	char *bf = emit(cases[0].text, 0), *br = emit(cases[0].text, 1);
	CHECK(bf && br);
	if (bf && br) {
		char *in = block_after(bf, "/* interior: no tests */");
		CHECKF(in != NULL, "%s", bf);
		if (in) {
			CHECKF(strstr(in, "if") == NULL && strchr(in, '?') == NULL && strstr(in, "&&") == NULL &&
			           strstr(in, " < ") == NULL,
			       "a condition in the interior:\n%s", in);
			CHECKF(strstr(in, "/ 5.0f") != NULL, "the interior is the stencil:\n%s", in);
		}
		free(in);
		/* copies: in the branching form each copy loop tests its element */
		CHECKF(count(br, "if (x + c0") >= 3, "%s", br);
		CHECKF(count(bf, "if (x + c0") == 0 && count(bf, "c0 - 1 >= 0") == 0, "%s", bf);
		CHECKF(count(bf, "ct_max64(0, -x + 1)") == 1, "the halo copy starts at row max(0, 1 - x): %s", bf);
		/* the remaining test (on x + xx) is once per row, outside the pieces */
		CHECKF(count(bf, "if (") < count(br, "if ("), "%d vs %d", count(bf, "if ("), count(br, "if ("));
	}
	free(bf);
	free(br);
}

int main(void)
{
	RUN(test_forms_verify);
	RUN(test_emitted_interior);
	return h_report();
}
