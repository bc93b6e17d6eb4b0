/* test_balanced.c: balanced splits (split(.., balanced=true)) in the canonical kernel key, and the
 * loop versions they give (blocks of s, of s - 1, the tail). */
#include "harness.h"
#include "ir/canon.h"
#include "ir/looptree.h"

#include <stdlib.h>
#include <string.h>

static const char *plain = "kernel b\nparam M = 127\narray X : f32[M] inout\nfor (i: M) { X[i] += 1 }\n"
                           "schedule { ii = split(i, 6) }\n";
static const char *bal = "kernel b\nparam M = 127\narray X : f32[M] inout\nfor (i: M) { X[i] += 1 }\n"
                         "schedule { ii = split(i, 6, balanced=true) }\n";
static const char *off = "kernel b\nparam M = 127\narray X : f32[M] inout\nfor (i: M) { X[i] += 1 }\n"
                         "schedule { ii = split(i, 6, balanced=false) }\n";
static const char *tiled = "kernel b\nparam M = 127\narray X : f32[M] inout\nfor (i: M) { X[i] += 1 }\n"
                           "schedule { ii = tile(i=6, balanced=true) }\n";
static const char *tiled_plain = "kernel b\nparam M = 127\narray X : f32[M] inout\nfor (i: M) { X[i] += 1 }\n"
                                 "schedule { ii = tile(i=6) }\n";

static char *key_of(ct_ctx *ctx, const char *text, size_t *len)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	if (!k)
		return NULL;
	char *key = canon_kernel(k, "host", len);
	ct_kernel_free(k);
	return key;
}

static int same_key(const char *a, const char *b)
{
	ct_ctx *ctx = ct_ctx_new();
	size_t la = 0, lb = 0;
	char *ka = key_of(ctx, a, &la), *kb = key_of(ctx, b, &lb);
	int r = !ka || !kb ? -1 : la == lb && memcmp(ka, kb, la) == 0;
	free(ka);
	free(kb);
	ct_ctx_free(ctx);
	return r;
}

static void balanced_changes_key(void) { CHECK(same_key(plain, bal) == 0); }
static void balanced_false_is_plain(void) { CHECK(same_key(plain, off) == 1); }
static void tile_option_changes_key(void) { CHECK(same_key(tiled_plain, tiled) == 0); }

/* The loops over i at the top of the tree: (lo, hi, step) each. */
static int top_loops(const char *text, int64_t M, int64_t out[][3], int max)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "t.cachet");
	int n = -1;
	if (k && ct_kernel_set_param(k, "M", M) == CT_OK && ct_kernel_recheck(k) == CT_OK) {
		ct_looptree *t = ct_kernel_lower(k, 1);
		if (t) {
			n = 0;
			for (int r = 0; r < t->nroots && n < max; r++) {
				const lt_node *x = t->roots[r];
				if (x->kind != LT_LOOP || !bx_is_const(x->lo, &out[n][0]) ||
				    !bx_is_const(x->hi, &out[n][1])) {
					n = -1;
					break;
				}
				out[n++][2] = x->step;
			}
			ct_looptree_free(t);
		}
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return n;
}

/* Every M from 1 to 80: the versions cover 0 .. M once, blocks of 6 then
 * of 5 then at most one short block, and no short block when balancing is
 * possible (r > 0 and q + 1 >= 6 - r). */
static void versions_cover(void)
{
	for (int64_t M = 1; M <= 80; M++) {
		int64_t l[3][3];
		int n = top_loops(bal, M, l, 3);
		CHECKF(n >= 1 && n <= 3, "M=%lld: %d loops", (long long)M, n);
		if (n < 1)
			continue;
		int64_t at = 0, q = M / 6, r = M % 6;
		int tails = 0;
		for (int i = 0; i < n; i++) {
			CHECKF(l[i][0] == at, "M=%lld loop %d starts at %lld", (long long)M, i, (long long)l[i][0]);
			int64_t w = l[i][1] - l[i][0];
			if (l[i][2] == 5)
				CHECKF(w % 5 == 0, "M=%lld blocks of 5 over %lld", (long long)M, (long long)w);
			else if (w % 6 != 0)
				tails++;
			at = l[i][1];
		}
		CHECKF(at == M, "M=%lld covered up to %lld", (long long)M, (long long)at);
		bool balance = r > 0 && q + 1 >= 6 - r;
		CHECKF(tails == (r > 0 && !balance), "M=%lld: %d short blocks", (long long)M, tails);
	}
}

int main(void)
{
	RUN(balanced_changes_key);
	RUN(balanced_false_is_plain);
	RUN(tile_option_changes_key);
	RUN(versions_cover);
	return h_report();
}
