/* test_kernelmemo.c: canonical kernel keys and the kernel memo (in memory). */
#include "engine/kernelmemo.h"
#include "harness.h"
#include "ir/canon.h"

#include <stdlib.h>
#include <string.h>

static const char *mm =
	"kernel mm\nparam M = 16, N = 12, K = 8\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
	"array C : f32[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	"schedule {\n  ii = split(i, 4)\n}\n";
/* the same kernel with every index, array and param renamed, and other spacing */
static const char *mm_renamed =
	"kernel mm   # same, other names\nparam P = 16, Q = 12, R = 8\narray X : f32[P, R] input\n"
	"array Y : f32[R, Q] input\narray Z : f32[P, Q] inout\n"
	"for (a: P, b: Q, c: R) { Z[a, b] += X[a, c] * Y[c, b] }\nschedule { aa = split(a, 4) }\n";

static char *key_of(ct_ctx *ctx, const char *text, size_t *len, const char *def, int64_t v)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	if (!k)
		return NULL;
	if (def && (ct_kernel_set_param(k, def, v) || ct_kernel_recheck(k))) {
		ct_kernel_free(k);
		return NULL;
	}
	char *key = canon_kernel(k, "host", len);
	ct_kernel_free(k);
	return key;
}

static bool same_key(const char *a, const char *b, const char *def, int64_t v)
{
	ct_ctx *ctx = ct_ctx_new();
	size_t la = 0, lb = 0;
	char *ka = key_of(ctx, a, &la, NULL, 0), *kb = key_of(ctx, b, &lb, def, v);
	bool same = ka && kb && la == lb && memcmp(ka, kb, la) == 0;
	free(ka);
	free(kb);
	ct_ctx_free(ctx);
	return same;
}

static void alpha_renamed_share_key(void) { CHECK(same_key(mm, mm_renamed, NULL, 0)); }
static void identical_share_key(void) { CHECK(same_key(mm, mm, NULL, 0)); }
static void size_changes_key(void) { CHECK(!same_key(mm, mm, "M", 17)); }

static void split_changes_key(void)
{
	char *other = strdup(mm);
	char *p = strstr(other, "split(i, 4)");
	p[10] = '8';
	CHECK(!same_key(mm, other, NULL, 0));
	free(other);
}

static void op_changes_key(void)
{
	char *other = strdup(mm);
	char *p = strstr(other, "+=");
	p[0] = '-';
	CHECK(!same_key(mm, other, NULL, 0));
	free(other);
}

static void type_changes_key(void)
{
	char *other = strdup(mm);
	char *p = strstr(other, "C : f32");
	p[5] = '6';
	p[6] = '4';
	CHECK(!same_key(mm, other, NULL, 0));
	free(other);
}

/* Loop verb options change the emitted code, so they change the key: each
 * pair differs only in the option's value. */
static void verb_options_change_key(void)
{
	static const char *const pairs[][2] = {
		{"plan {\n  unroll(k, by=2)\n}\n", "plan {\n  unroll(k, by=4)\n}\n"},
		{"plan {\n  unroll(k, by=2)\n}\n", "plan {\n  unroll(ii)\n}\n"},
		{"plan {\n  vectorize(j, nontemporal=true)\n}\n", "plan {\n  vectorize(j, nontemporal=false)\n}\n"},
	};
	static const char *y =
		"kernel y\nparam N = 64\narray X : f32[N, N] input\narray Y : f32[N, N] output\n"
		"for (i: N, j: N) {\n  Y[i, j] = X[i, j]\n}\n";
	for (size_t c = 0; c < sizeof pairs / sizeof pairs[0]; c++) {
		const char *base = c < 2 ? mm : y;
		size_t n = strlen(base) + 64;
		char *a = malloc(n), *b = malloc(n);
		CHECK(a && b);
		if (a && b) {
			snprintf(a, n, "%s%s", base, pairs[c][0]);
			snprintf(b, n, "%s%s", base, pairs[c][1]);
			CHECK(same_key(a, a, NULL, 0));
			CHECK(!same_key(a, b, NULL, 0));
		}
		free(a);
		free(b);
	}
}

static void lru_eviction(void)
{
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_kernel_memo_set_max(ctx, 2) == CT_OK);
	int v1 = 1, v2 = 2, v3 = 3;
	CHECK(kernel_memo_put(ctx, "a", 1, &v1));
	CHECK(kernel_memo_put(ctx, "b", 1, &v2));
	CHECK(kernel_memo_get(ctx, "a", 1) == &v1); /* a is now the most recent */
	CHECK(kernel_memo_put(ctx, "c", 1, &v3));   /* evicts b */
	CHECK(kernel_memo_get(ctx, "b", 1) == NULL);
	CHECK(kernel_memo_get(ctx, "a", 1) == &v1);
	CHECK(kernel_memo_get(ctx, "c", 1) == &v3);
	ct_kernel_memo_info info;
	CHECK(ct_kernel_memo_stats(ctx, &info) == CT_OK);
	CHECK(info.entries == 2 && info.evictions == 1 && info.hits == 3 && info.misses == 1);
	CHECK(ct_kernel_memo_set_max(ctx, 0) == CT_ERR_USAGE);
	ct_ctx_free(ctx);
}

static void full_compare_not_hash(void)
{
	ct_ctx *ctx = ct_ctx_new();
	int v = 7;
	CHECK(kernel_memo_put(ctx, "abcd", 4, &v));
	CHECK(kernel_memo_get(ctx, "abce", 4) == NULL);
	CHECK(kernel_memo_get(ctx, "abc", 3) == NULL);
	CHECK(kernel_memo_get(ctx, "abcd", 4) == &v);
	ct_ctx_free(ctx);
}

/* A second run of the same (or alpha-renamed) kernel in one ctx is a memory hit. */
static void run_twice_hits_memory(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *texts[3] = {mm, mm, mm_renamed};
	const char *want[3] = {NULL, "memory", "memory"};
	for (int i = 0; i < 3; i++) {
		ct_kernel *k = ct_kernel_parse(ctx, texts[i], strlen(texts[i]), "t.cachet");
		CHECK(k != NULL);
		if (!k)
			break;
		ct_run_options o;
		ct_run_options_init(&o);
		ct_run_result r;
		CHECK(ct_kernel_run(k, &o, &r) == CT_OK);
		CHECK(r.verified == 1);
		if (want[i])
			CHECKF(strcmp(r.code_cache, want[i]) == 0, "run %d: %s", i, r.code_cache);
		else
			CHECK(strcmp(r.code_cache, "memory") != 0);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(alpha_renamed_share_key);
	RUN(identical_share_key);
	RUN(size_changes_key);
	RUN(split_changes_key);
	RUN(op_changes_key);
	RUN(type_changes_key);
	RUN(verb_options_change_key);
	RUN(lru_eviction);
	RUN(full_compare_not_hash);
	RUN(run_twice_hits_memory);
	return h_report();
}
