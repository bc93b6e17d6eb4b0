/* test_project.c: a band's bounds projected onto a loop order (src/ir/project.c), band by band. */
#include "harness.h"

#include "ir/project.h"

#include <stdlib.h>

/* One band: the kernel's loops, the order (names, outermost first) and
 * what proj_band_bounds gives: "x: LO .. HI; y: ..." for each root in the
 * order (LO a max(...) when it has several terms, HI a min(...)), "-"
 * when the order keeps every bound (no projection), or the error. */
typedef struct pcase {
	const char *name;
	const char *loops;
	const char *order;
	const char *want;
} pcase;

#define HDR                                                                                        \
	"kernel t\n"                                                                               \
	"param N = 16, W = 3\n"                                                                    \
	"param P1 : runtime\nparam P2 : runtime\nparam P3 : runtime\nparam P4 : runtime\n"         \
	"param Q1 : runtime\nparam Q2 : runtime\nparam Q3 : runtime\nparam Q4 : runtime\n"         \
	"param R : runtime\n"                                                                      \
	"array B : f32[N] output\n"

static const pcase cases[] = {
    {"a triangle, the affine loop moved out", "for (i: N, k: 0 .. i+1) { B[i] = 1 }", "k i",
     "k: 0 .. N; i: k .. N"},
    {"the order kept: no projection", "for (i: N, k: 0 .. i+1) { B[i] = 1 }", "i k", "-"},
    {"a rectangular band reordered: no projection", "for (i: N, k: W) { B[i] = 1 }", "k i", "-"},
    {"runtime params", "for (i: R, k: 0 .. i+1) { B[0] = 1 }", "k i", "k: 0 .. R; i: k .. R"},
    {"a band with max and min", "for (i: N, j: max(0, i-W) .. min(N, i+W+1)) { B[j] = 1 }", "j i",
     "j: 0 .. N; i: max(-W+j, 0) .. min(W+j+1, N)"},
    {"three deep", "for (i: N, j: 0 .. i+1, k: j .. i+1) { B[k] = 1 }", "k j i",
     "k: 0 .. N; j: 0 .. k+1; i: k .. N"},
    {"three deep, the middle one out", "for (i: N, j: 0 .. i+1, k: j .. i+1) { B[k] = 1 }", "j i k",
     "j: 0 .. N; i: j .. N; k: j .. i+1"},
    {"an index outside the band", "for (t: N) { for (i: t .. N, k: t .. i+1) { B[k] = 1 } }", "k i",
     "k: t .. N; i: k .. N"},
    {"three deep with max and min",
     "for (i: N, j: max(0, i-W) .. min(N, i+W+1), k: max(i, j) .. min(N, i+j+1)) { B[k] = 1 }",
     "k j i", "k: 0 .. N; j: 0 .. k+1; i: max(-j+k, -W+j) .. min(k+1, W+j+1)"},
    {"an equality", "for (i: N, j: i .. i+1) { B[j] = 1 }", "j i", "j: 0 .. N; i: j .. j+1"},
    {"a derived bound that would need a division",
     "for (i: N, j: 0 .. i+1, k: i+j .. i+j+1) { B[j] = 1 }", "k i j",
     /* i >= k/2 is left out: i runs from 0 and j's written bounds keep the instances */
     "k: 0 .. 2*N-1; i: 0 .. min(N, k+1); j: -i+k .. min(-i+k+1, i+1)"},
    {"no instance at all", "for (i: N, j: i+1 .. i) { B[i] = 1 }", "j i", "j: 0 .. 0; i: 0 .. 0"},
    {"a division", "for (i: N, k: 0 .. 2*i+1) { B[i] = 1 }", "k i",
     "error i: in this order the range of loop 'i' would need a division (a bound gives it "
     "coefficient 2): not supported"},
    {"more than 16 terms",
     "for (i: max(max(max(P1, P2), max(P3, P4)), max(max(Q1, Q2), max(Q3, Q4))) .. N, "
     "j: 0 .. min(min(min(i+P1, i+P2), min(i+P3, i+P4)), min(min(i+Q1, i+Q2), min(i+Q3, i+Q4))), "
     "k: i .. i+2) { B[0] = 1 }",
     "j k i", "error i: in this order loop 'i' would have more than 16 bound terms"},
};

/* Affine expression x as text: terms in their order, then the constant. */
static void put_aff(ct_buf *b, const ct_kernel *k, aff x)
{
	for (int i = 0; i < x.n; i++) {
		const aff_term *t = &x.t[i];
		if (t->coef == -1)
			ct_buf_putc(b, '-');
		else if (t->coef == 1)
			ct_buf_puts(b, i ? "+" : "");
		else
			ct_buf_printf(b, i && t->coef > 0 ? "+%lld*" : "%lld*", (long long)t->coef);
		ct_buf_puts(b,
		            t->kind == AFF_PARAM ? k->params[t->id].name : k->indices[t->id].name);
	}
	if (x.n == 0 || x.c != 0)
		ct_buf_printf(b, x.n > 0 && x.c > 0 ? "+%lld" : "%lld", (long long)x.c);
}

static void put_side(ct_buf *b, const ct_kernel *k, const aff *t, int n, const char *many)
{
	if (n > 1)
		ct_buf_printf(b, "%s(", many);
	for (int i = 0; i < n; i++) {
		if (i)
			ct_buf_puts(b, ", ");
		put_aff(b, k, t[i]);
	}
	if (n > 1)
		ct_buf_putc(b, ')');
}

static int index_named(const ct_kernel *k, const char *name, size_t len)
{
	for (int i = 0; i < k->nindices; i++)
		if (strlen(k->indices[i].name) == len &&
		    strncmp(k->indices[i].name, name, len) == 0)
			return i;
	return -1;
}

/* ------------------------------------------------------------ the instances a nest runs */

/* A nest over the loops order[0..n) (outermost first) with the bounds of
 * band p (NULL: the written ones), params pv. */
typedef struct nest {
	const ct_kernel *k;
	const proj_band *p;
	const int *order;
	int n;
	int first; /* order[first..n): the band's loops */
	const int64_t *pv;
	int64_t idx[16];
	long visits;
	bool outside; /* some instance breaks a written bound */
} nest;

static int64_t side(nest *w, const aff *t, int n, bool lower)
{
	bool ok = true;
	int64_t r = aff_eval(t[0], w->pv, w->idx, &ok);
	for (int i = 1; i < n; i++) {
		int64_t v = aff_eval(t[i], w->pv, w->idx, &ok);
		r = lower ? (v > r ? v : r) : (v < r ? v : r);
	}
	CHECK(ok);
	return r;
}

/* Whether the current point keeps every written bound of every loop. */
static bool written_holds(nest *w)
{
	for (int j = 0; j < w->n; j++) {
		proj_bounds b = proj_root(w->k, NULL, w->order[j]);
		int64_t v = w->idx[w->order[j]];
		if (v < side(w, b.los, b.nlo, true) || v >= side(w, b.his, b.nhi, false))
			return false;
	}
	return true;
}

/* The instances of the nest from loop j in. */
static long instances(nest *w, int j)
{
	if (j == w->n) {
		if (!written_holds(w))
			w->outside = true;
		return 1;
	}
	int r = w->order[j];
	proj_bounds b = proj_root(w->k, j >= w->first ? w->p : NULL, r);
	long count = 0;
	for (int64_t v = side(w, b.los, b.nlo, true); v < side(w, b.his, b.nhi, false); v++) {
		if (++w->visits > 1000000)
			return -1;
		w->idx[r] = v;
		long c = instances(w, j + 1);
		if (c < 0)
			return -1;
		count += c;
	}
	return count;
}

/* Every order of the band's roots (the loops outside the band first) that
 * projects runs exactly the written instances. */
static void check_orders(const ct_kernel *k, ct_ctx *ctx, const int *band, int m)
{
	int64_t pv[32];
	for (int i = 0; i < k->nparams && i < 32; i++)
		pv[i] = k->params[i].runtime ? 7 : k->params[i].value;
	int full[16], nf = 0;
	for (int i = 0; i < k->nindices && nf < 16; i++) {
		bool in = false;
		for (int j = 0; j < m; j++)
			in = in || band[j] == i;
		if (!in && k->indices[i].kind == IX_LOOP)
			full[nf++] = i;
	}
	int outer = nf;
	for (int i = 0; i < k->nindices && nf < 16; i++) /* the written order: by declaration */
		for (int j = 0; j < m; j++)
			if (band[j] == i)
				full[nf++] = i;
	nest wr = {k, NULL, full, nf, outer, pv, {0}, 0, false};
	long want = instances(&wr, 0);
	CHECK(want > 0 || strstr(h_case, "no instance"));
	/* the permutations of band[0..m) (m <= 4) by their number */
	int fact = 1;
	for (int i = 2; i <= m; i++)
		fact *= i;
	int compared = 0;
	for (int perm = 0; perm < fact; perm++) {
		int left[8], nl = m, q = perm, ord[16];
		memcpy(left, band, sizeof *band * (size_t)m);
		memcpy(ord, full, sizeof *full * (size_t)outer);
		for (int j = 0; j < m; j++) {
			int f = 1;
			for (int i = 2; i < nl; i++)
				f *= i;
			int pick = q / f;
			q %= f;
			ord[outer + j] = left[pick];
			memmove(left + pick, left + pick + 1,
			        sizeof *left * (size_t)(nl - pick - 1));
			nl--;
		}
		ct_arena a;
		ct_arena_init(&a, ctx);
		proj_band p;
		if (proj_band_bounds(k, ord + outer, m, &a, &p) == CT_OK) {
			nest pr = {k, &p, ord, nf, outer, pv, {0}, 0, false};
			long got = instances(&pr, 0);
			compared += p.projected;
			CHECKF(got == want && !pr.outside,
			       "order %d: %ld instances (%s), written %ld", perm, got,
			       pr.outside ? "some outside the written bounds" : "all inside", want);
		}
		ct_arena_free(&a);
	}
	CHECK(compared > 0);
}

static void run_case(const pcase *c)
{
	h_begin(c->name);
	ct_ctx *ctx = ct_ctx_new();
	char text[1024];
	snprintf(text, sizeof text, HDR "%s\n", c->loops);
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "test.cachet");
	CHECKF(k != NULL, "parse: %s", ct_ctx_last_message(ctx));
	int order[8], n = 0;
	for (const char *s = c->order; k && *s && n < 8;) {
		size_t len = strcspn(s, " ");
		order[n] = index_named(k, s, len);
		CHECK(order[n] >= 0);
		n++;
		s += len + (s[len] == ' ');
	}
	if (k) {
		ct_arena a;
		ct_arena_init(&a, ctx);
		proj_band p;
		ct_status st = proj_band_bounds(k, order, n, &a, &p);
		ct_buf b;
		ct_buf_init(&b);
		if (st != CT_OK)
			ct_buf_printf(&b, "error %s: %s", p.bad >= 0 ? k->indices[p.bad].name : "?",
			              p.err);
		else if (!p.projected)
			ct_buf_puts(&b, "-");
		for (int j = 0; st == CT_OK && p.projected && j < n; j++) {
			proj_bounds r = proj_root(k, &p, order[j]);
			ct_buf_printf(&b, "%s%s: ", j ? "; " : "", k->indices[order[j]].name);
			put_side(&b, k, r.los, r.nlo, "max");
			ct_buf_puts(&b, " .. ");
			put_side(&b, k, r.his, r.nhi, "min");
		}
		if (st == CT_OK && p.projected && n <= 4)
			check_orders(k, ctx, order, n);
		char *got = ct_buf_take(&b);
		CHECKF(got && strcmp(got, c->want) == 0, "got \"%s\", want \"%s\"",
		       got ? got : "(null)", c->want);
		free(got);
		ct_arena_free(&a);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
	return h_report();
}
