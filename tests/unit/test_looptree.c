/* test_looptree.c: bounds, bands, split chains, tails, pseudo-code and JSON of the loop tree. */
#include "harness.h"

#include "ir/looptree.h"

#include <stdlib.h>

/* ------------------------------------------------------------ helpers */

static ct_kernel *parse(ct_ctx *ctx, const char *text)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "test.cachet");
	if (!k) {
		for (int i = 0; i < ct_ctx_diag_count(ctx); i++)
			fprintf(stderr, "%s\n", ct_ctx_diag_render(ctx, i));
		fprintf(stderr, "parse failed: %s\n", ct_ctx_last_message(ctx));
	}
	return k;
}

/* Compact shape of a tree with bounds evaluated: `i[0,96)/32{ii[0,32){S1}}`,
 * a tail loop is marked T, an if is `?{then}:{else}`, a let `L`. */
static void shape_nodes(ct_buf *b, const ct_kernel *k, const int64_t *pv, lt_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = v[i];
		if (i)
			ct_buf_putc(b, ' ');
		switch (x->kind) {
		case LT_LOOP: {
			bool ok = true;
			int64_t lo = bx_eval(x->lo, pv, &ok), hi = bx_eval(x->hi, pv, &ok);
			ct_buf_printf(b, "%s[%lld,%lld)", k->indices[x->index].name, (long long)lo,
			              (long long)hi);
			if (x->step != 1)
				ct_buf_printf(b, "/%lld", (long long)x->step);
			if (x->tail)
				ct_buf_putc(b, 'T');
			ct_buf_putc(b, '{');
			shape_nodes(b, k, pv, x->kids, x->nkids);
			ct_buf_putc(b, '}');
			break;
		}
		case LT_STMT:
			ct_buf_printf(b, "S%d", x->stmt->stmt_id);
			break;
		case LT_LET:
			ct_buf_puts(b, "L");
			break;
		case LT_IF:
			ct_buf_puts(b, "?{");
			shape_nodes(b, k, pv, x->kids, x->nkids);
			ct_buf_puts(b, "}:{");
			shape_nodes(b, k, pv, x->els, x->nels);
			ct_buf_putc(b, '}');
			break;
		case LT_CACHE:
			ct_buf_puts(b, "C");
			break;
		}
	}
}

static char *shape(ct_looptree *t)
{
	int64_t pv[64];
	ir_param_values(t->k, pv);
	ct_buf b;
	ct_buf_init(&b);
	shape_nodes(&b, t->k, pv, t->roots, t->nroots);
	return ct_buf_take(&b);
}

/* Parse text, set NAME=VALUE pairs of defs (";"-separated), lower, and
 * compare the shape with want. */
static void check_shape(const char *text, const char *defs, int sched, const char *want)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	char buf[256];
	snprintf(buf, sizeof buf, "%s", defs ? defs : "");
	for (char *tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";")) {
		char *eq = strchr(tok, '=');
		*eq = 0;
		CHECK(ct_kernel_set_param(k, tok, atoll(eq + 1)) == CT_OK);
	}
	if (defs)
		CHECK(ct_kernel_recheck(k) == CT_OK);
	ct_looptree *t = ct_kernel_lower(k, sched);
	CHECKF(t != NULL, "%s", ct_ctx_last_message(ctx));
	if (t) {
		char *s = shape(t);
		CHECKF(s && strcmp(s, want) == 0, "\n got: %s\nwant: %s", s ? s : "(null)", want);
		free(s);
	}
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ bound expressions */

typedef struct bx_row {
	const char *name;
	int op;     /* bx_kind, or -1: x alone */
	int xk, yk; /* 0 const, 1 param 0 ("L"), 2 (L - 1), 3 (L + 2) */
	int64_t xv, yv;
	const char *text; /* printed */
	int64_t at100;    /* value with L = 100 */
	bool is_const;
} bx_row;

static const bx *mk(ct_arena *a, int kind, int64_t v)
{
	switch (kind) {
	case 0:
		return bx_const(a, v);
	case 1:
		return bx_param(a, 0);
	case 2:
		return bx_bin(a, BX_SUB, bx_param(a, 0), bx_const(a, 1));
	default:
		return bx_bin(a, BX_ADD, bx_param(a, 0), bx_const(a, 2));
	}
}

static const bx_row bx_rows[] = {
    {"bx const+const", BX_ADD, 0, 0, 3, 4, "7", 7, true},
    {"bx const*const", BX_MUL, 0, 0, 6, 7, "42", 42, true},
    {"bx floordiv neg", BX_FLOORDIV, 0, 0, -7, 2, "-4", -4, true},
    {"bx mod neg", BX_MOD, 0, 0, -7, 2, "1", 1, true},
    {"bx floordiv pos", BX_FLOORDIV, 0, 0, 100, 32, "3", 3, true},
    {"bx min", BX_MIN, 0, 0, 3, 5, "3", 3, true},
    {"bx max", BX_MAX, 0, 0, 3, 5, "5", 5, true},
    {"bx x+0", BX_ADD, 1, 0, 0, 0, "L", 100, false},
    {"bx 0+x", BX_ADD, 0, 1, 0, 0, "L", 100, false},
    {"bx x*1", BX_MUL, 1, 0, 0, 1, "L", 100, false},
    {"bx x*0", BX_MUL, 1, 0, 0, 0, "0", 0, true},
    {"bx x/1", BX_FLOORDIV, 1, 0, 0, 1, "L", 100, false},
    {"bx x%1", BX_MOD, 1, 0, 0, 1, "0", 0, true},
    {"bx x-x", BX_SUB, 1, 1, 0, 0, "0", 0, true},
    {"bx (L-1)-1", BX_SUB, 2, 0, 0, 1, "L - 2", 98, false},
    {"bx (L-1)+1", BX_ADD, 2, 0, 0, 1, "L", 100, false},
    {"bx (L+2)-(L-1)", BX_SUB, 3, 2, 0, 0, "3", 3, true},
    {"bx L/16", BX_FLOORDIV, 1, 0, 0, 16, "L / 16", 6, false},
    {"bx L%16", BX_MOD, 1, 0, 0, 16, "L % 16", 4, false},
    {"bx (L-1)*3", BX_MUL, 2, 0, 0, 3, "(L - 1) * 3", 297, false},
    {"bx 5-(L+2)", BX_SUB, 0, 3, 5, 0, "3 - L", -97, false},
    {"bx max(L-1,0)", BX_MAX, 2, 0, 0, 0, "max(L - 1, 0)", 99, false},
    {"bx min(L,L)", BX_MIN, 1, 1, 0, 0, "L", 100, false},
};

static void test_bx_rows(ct_kernel *k)
{
	for (size_t r = 0; r < sizeof bx_rows / sizeof bx_rows[0]; r++) {
		const bx_row *row = &bx_rows[r];
		h_begin(row->name);
		ct_arena a;
		ct_arena_init(&a, k->ctx);
		const bx *x = bx_bin(&a, (bx_kind)row->op, mk(&a, row->xk, row->xv),
		                     mk(&a, row->yk, row->yv));
		CHECK(x != NULL);
		ct_buf b;
		ct_buf_init(&b);
		bx_print(&b, k, x);
		char *s = ct_buf_take(&b);
		CHECKF(s && strcmp(s, row->text) == 0, "printed '%s', want '%s'", s, row->text);
		free(s);
		int64_t pv[4] = {100, 0, 0, 0}, v;
		bool ok = true;
		CHECK(bx_eval(x, pv, &ok) == row->at100 && ok);
		CHECK(bx_is_const(x, &v) == row->is_const);
		ct_arena_free(&a);
		h_end();
	}
}

static void test_bx_eval_errors(ct_kernel *k)
{
	h_begin("bx eval: division by zero and overflow");
	ct_arena a;
	ct_arena_init(&a, k->ctx);
	int64_t pv[1] = {0};
	bool ok = true;
	bx_eval(bx_bin(&a, BX_FLOORDIV, bx_const(&a, 5), bx_param(&a, 0)), pv, &ok);
	CHECK(!ok);
	ok = true;
	bx_eval(bx_bin(&a, BX_MOD, bx_const(&a, 5), bx_param(&a, 0)), pv, &ok);
	CHECK(!ok);
	ok = true;
	pv[0] = INT64_MAX;
	bx_eval(bx_bin(&a, BX_ADD, bx_param(&a, 0), bx_const(&a, 1)), pv, &ok);
	CHECK(!ok);
	/* constant folding that would overflow keeps the node */
	const bx *big = bx_bin(&a, BX_MUL, bx_const(&a, INT64_MAX), bx_const(&a, 2));
	CHECK(big && !bx_is_const(big, NULL));
	ok = true;
	bx_eval(big, pv, &ok);
	CHECK(!ok);
	ct_arena_free(&a);
	h_end();
}

static void test_bx_from_aff(void)
{
	h_begin("bx from aff: compile-time params fold, runtime stay");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(
	    ctx, "kernel f\nparam M = 10, K = 3\nparam L : runtime\narray A : f32[2*M+K, L] input\n"
	         "array B : f32[2*M+K, L] output\nfor (i: 2*M+K, j: L) { B[i, j] = A[i, j] }\n");
	CHECK(k != NULL);
	if (k) {
		ct_arena a;
		ct_arena_init(&a, ctx);
		ct_buf b;
		ct_buf_init(&b);
		bx_print(&b, k, bx_from_aff(&a, k, k->arrays[0].ext[0]));
		ct_buf_puts(&b, "|");
		bx_print(&b, k, bx_from_aff(&a, k, k->arrays[0].ext[1]));
		bool ok = true;
		aff x = aff_sym1(&a, AFF_PARAM, 2, -2, &ok);
		x = aff_add(&a, x, aff_sym1(&a, AFF_PARAM, 0, 1, &ok), &ok);
		x = aff_add(&a, x, aff_const(7), &ok);
		ct_buf_puts(&b, "|");
		bx_print(&b, k, bx_from_aff(&a, k, x));
		char *s = ct_buf_take(&b);
		CHECKF(s && strcmp(s, "23|L|0 - L * 2 + 17") == 0, "got '%s'", s);
		free(s);
		ct_arena_free(&a);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	h_end();
}

/* ------------------------------------------------------------ tails and bands */

#define ONE_LOOP(N, SCHED)                                                                         \
	"kernel t\nparam N = " N "\narray A : f32[N] input\narray B : f32[N] output\n"             \
	"for (i: N) { B[i] = A[i] }\nschedule { " SCHED " }\n"

typedef struct shape_row {
	const char *name;
	const char *text;
	const char *defs;
	int sched;
	const char *want;
} shape_row;

static const shape_row shape_rows[] = {
    {"tail: N=100 split 32", ONE_LOOP("100", "ii = split(i, 32)"), NULL, 1,
     "i[0,96)/32{ii[0,32){S1}} i[96,100)/32T{ii[0,4){S1}}"},
    {"tail: dividing split has no tail", ONE_LOOP("96", "ii = split(i, 32)"), NULL, 1,
     "i[0,96)/32{ii[0,32){S1}}"},
    {"tail: split wider than the loop is all tail", ONE_LOOP("10", "ii = split(i, 32)"), NULL, 1,
     "i[0,10)/32T{ii[0,10){S1}}"},
    {"tail: unscheduled tree ignores splits", ONE_LOOP("100", "ii = split(i, 32)"), NULL, 0,
     "i[0,100){S1}"},
    {"tail of tail: 100 by 32 then 6", ONE_LOOP("100", "ii = split(i, 32)\n iii = split(ii, 6)"),
     NULL, 1,
     "i[0,96)/32{ii[0,30)/6{iii[0,6){S1}} ii[30,32)/6T{iii[0,2){S1}}} "
     "i[96,100)/32T{ii[0,4)/6T{iii[0,4){S1}}}"},
    {"tail of tail: inner split divides the main window",
     ONE_LOOP("100", "ii = split(i, 32)\n iii = split(ii, 8)"), NULL, 1,
     "i[0,96)/32{ii[0,32)/8{iii[0,8){S1}}} i[96,100)/32T{ii[0,4)/8T{iii[0,4){S1}}}"},
    {"tail: three levels 100/24/10/3",
     ONE_LOOP("100", "ii = split(i, 24)\n iii = split(ii, 10)\n iv = split(iii, 3)"), NULL, 1,
     "i[0,96)/24{ii[0,20)/10{iii[0,9)/3{iv[0,3){S1}} iii[9,10)/3T{iv[0,1){S1}}} "
     "ii[20,24)/10T{iii[0,3)/3{iv[0,3){S1}} iii[3,4)/3T{iv[0,1){S1}}}} "
     "i[96,100)/24T{ii[0,4)/10T{iii[0,3)/3{iv[0,3){S1}} iii[3,4)/3T{iv[0,1){S1}}}}"},
    {"tail: lo .. hi bounds keep their offset",
     "kernel t\nparam N = 100\narray A : f32[N] input\narray B : f32[N] output\n"
     "for (i: 1 .. N-1) { B[i] = A[i] }\nschedule { ii = split(i, 32) }\n",
     NULL, 1, "i[1,97)/32{ii[0,32){S1}} i[97,99)/32T{ii[0,2){S1}}"},
    {"tail: runtime size L=100",
     "kernel t\nparam L : runtime\narray A : f32[L] input\narray B : f32[L] output\n"
     "for (i: L) { B[i] = A[i] }\nschedule { ii = split(i, 16) }\n",
     "L=100", 1, "i[0,96)/16{ii[0,16){S1}} i[96,100)/16T{ii[0,4){S1}}"},
    {"tail: runtime size that divides keeps an empty tail",
     "kernel t\nparam L : runtime\narray A : f32[L] input\narray B : f32[L] output\n"
     "for (i: L) { B[i] = A[i] }\nschedule { ii = split(i, 16) }\n",
     "L=96", 1, "i[0,96)/16{ii[0,16){S1}} i[96,96)/16T{ii[0,0){S1}}"},
    {"tail: runtime lo .. hi, empty range",
     "kernel t\nparam L : runtime\narray A : f32[L] input\narray B : f32[L] output\n"
     "for (i: 2 .. L-1) { B[i] = A[i] }\nschedule { ii = split(i, 4) }\n",
     "L=1", 1, "i[2,2)/4{ii[0,4){S1}} i[2,0)/4T{ii[0,0){S1}}"},
    {"band: tile and reorder",
     "kernel mm\nparam M = 10, N = 8, K = 4\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
     "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"
     "schedule { ii, jj = tile(i=4, j=4)\n reorder(j, i, ii, k, jj) }\n",
     NULL, 1,
     "j[0,8)/4{i[0,8)/4{ii[0,4){k[0,4){jj[0,4){S1}}}} i[8,10)/4T{ii[0,2){k[0,4){jj[0,4){S1}}}}}"},
    {"band: default order puts each split index right after the index it splits (Accera)",
     "kernel mm\nparam M = 4, N = 4\narray A : f32[M, N] input\narray B : f32[M, N] output\n"
     "for (i: M) { for (j: N) { B[i, j] = A[i, j] } }\nschedule { jj = split(j, 2)\n ii = split(i, "
     "2) }\n",
     NULL, 1, "i[0,4)/2{ii[0,2){j[0,4)/2{jj[0,2){S1}}}}"},
    {"band: imperfect nest has inner bands",
     "kernel ti\nparam N = 5, V = 3\narray A : f64[N, N] input\narray C1 : f64[N, V] input\n"
     "array T : f64[V, N] temp\narray B : f64[V, N] inout\n"
     "for (a: V, q: N) {\n T[a, q] = 0\n for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
     " for (b: N) { B[a, b] += T[a, q] }\n}\nschedule { qq = split(q, 2)\n pp = split(p, 4)\n"
     " reorder(q, a, qq) }\n",
     NULL, 1,
     "q[0,4)/2{a[0,3){qq[0,2){S1 p[0,4)/4{pp[0,4){S2}} p[4,5)/4T{pp[0,1){S2}} b[0,5){S3}}}} "
     "q[4,5)/2T{a[0,3){qq[0,1){S1 p[0,4)/4{pp[0,4){S2}} p[4,5)/4T{pp[0,1){S2}} b[0,5){S3}}}}"},
    {"band: if and let stay inside the band",
     "kernel st\nparam N = 5\narray A : f32[N] input\narray B : f32[N] output\n"
     "for (x: N) {\n let t = A[x]\n if (0 < x) { B[x] = t } else { B[x] = 0 }\n}\n"
     "schedule { xx = split(x, 3) }\n",
     NULL, 1, "x[0,3)/3{xx[0,3){L ?{S1}:{S2}}} x[3,5)/3T{xx[0,2){L ?{S1}:{S2}}}"},
};

static void test_shapes(void)
{
	for (size_t r = 0; r < sizeof shape_rows / sizeof shape_rows[0]; r++) {
		h_begin(shape_rows[r].name);
		check_shape(shape_rows[r].text, shape_rows[r].defs, shape_rows[r].sched,
		            shape_rows[r].want);
		h_end();
	}
}

static void test_runtime_symbolic(void)
{
	h_begin("tail: runtime bounds stay symbolic");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(
	    ctx, "kernel t\nparam L : runtime\narray A : f32[L] input\narray B : f32[L] output\n"
	         "for (i: 1 .. L) { B[i-1] = A[i-1] }\nschedule { ii = split(i, 16) }\n");
	CHECK(k != NULL);
	ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
	CHECKF(t != NULL, "%s", ct_ctx_last_message(ctx));
	if (t && t->nroots == 2) {
		ct_buf b;
		ct_buf_init(&b);
		for (int r = 0; r < 2; r++) {
			const lt_node *x = t->roots[r];
			bx_print(&b, k, x->lo);
			ct_buf_puts(&b, "..");
			bx_print(&b, k, x->hi);
			ct_buf_puts(&b, x->tail ? " tail " : " main ");
			bx_print(&b, k, x->kids[0]->hi);
			ct_buf_puts(&b, ";");
		}
		char *s = ct_buf_take(&b);
		const char *want = "1..max(L - 1, 0) / 16 * 16 + 1 main 16;"
		                   "max(L - 1, 0) / 16 * 16 + 1..L tail max(L - 1, 0) % 16;";
		CHECKF(s && strcmp(s, want) == 0, "got '%s'", s);
		free(s);
	} else {
		CHECK(t && t->nroots == 2);
	}
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

static void test_chains(void)
{
	h_begin("chains: original index = sum of its chain");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, ONE_LOOP("100", "ii = split(i, 32)\n iii = split(ii, 6)"));
	CHECK(k != NULL);
	for (int s = 0; k && s <= 1; s++) {
		ct_looptree *t = ct_kernel_lower(k, s);
		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK(t->scheduled == (s == 1));
		CHECK(t->nindices == k->nindices);
		int i = 0;
		CHECK(strcmp(k->indices[i].name, "i") == 0);
		CHECK(t->chain_len[i] == (s ? 3 : 1));
		CHECK(t->chain[i][0] == i);
		if (s) {
			CHECK(strcmp(k->indices[t->chain[i][1]].name, "ii") == 0);
			CHECK(strcmp(k->indices[t->chain[i][2]].name, "iii") == 0);
		}
		ct_looptree_free(t);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

static void test_parents(void)
{
	h_begin("tree: parent links and no cache nodes");
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, ONE_LOOP("100", "ii = split(i, 32)"));
	ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
	CHECK(t != NULL);
	for (int r = 0; t && r < t->nroots; r++) {
		const lt_node *x = t->roots[r];
		CHECK(x->parent == NULL);
		for (int c = 0; c < x->nkids; c++) {
			CHECK(x->kids[c]->parent == x);
			CHECK(x->kids[c]->kind == LT_LOOP);
			CHECK(x->kids[c]->kids[0]->parent == x->kids[c]);
			CHECK(x->kids[c]->kids[0]->kind == LT_STMT);
		}
	}
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	h_end();
}

/* ------------------------------------------------------------ printing */

static void check_print(const char *text, int sched, int json, const char *want)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text);
	CHECK(k != NULL);
	ct_looptree *t = k ? ct_kernel_lower(k, sched) : NULL;
	CHECK(t != NULL);
	ct_format fmt = json ? CT_FORMAT_JSON : CT_FORMAT_TEXT;
	char *s = t ? ct_looptree_to_string(t, fmt) : NULL;
	CHECKF(s && strcmp(s, want) == 0, "\n--- got:\n%s--- want:\n%s", s ? s : "(null)\n", want);
	free(s);
	/* the printer writes the same text to a stream, ending in a newline */
	char *buf = NULL;
	size_t len = 0, wl = strlen(want);
	FILE *f = t ? open_memstream(&buf, &len) : NULL;
	CHECK(!t || (f && ct_looptree_print(t, fmt, f) == CT_OK));
	if (f)
		fclose(f);
	CHECKF(!t || (buf && strncmp(buf, want, wl) == 0 &&
	              strcmp(buf + wl, wl && want[wl - 1] == '\n' ? "" : "\n") == 0),
	       "printed: %s", buf ? buf : "(null)");
	free(buf);
	CHECK(!t || ct_looptree_print(t, fmt, NULL) == CT_ERR_USAGE);
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static const char mm_text[] =
    "kernel mm\nparam M = 6, N = 4, K = 5\n"
    "array A : f32[M, K] input\narray B : f32[K, N] input\narray C : f32[M, N] inout\n"
    "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
    "schedule {\n  ii, jj, kk = tile(i=4, j=2, k=3)\n  reorder(i, j, k, ii, jj, kk)\n}\n";

static void test_print_matmul(void)
{
	check_print(mm_text, 1, 0,
	            "# kernel mm: M=6, N=4, K=5\n"
	            "for i in range(0, 4, step=4):\n"
	            "    for j in range(0, 4, step=2):\n"
	            "        for k in range(0, 3, step=3):\n"
	            "            for ii in range(0, 4):\n"
	            "                for jj in range(0, 2):\n"
	            "                    for kk in range(0, 3):\n"
	            "                        C[i+ii, j+jj] += A[i+ii, k+kk] * B[k+kk, j+jj]\n"
	            "        for k in range(3, 5, step=3):  # tail\n"
	            "            for ii in range(0, 4):\n"
	            "                for jj in range(0, 2):\n"
	            "                    for kk in range(0, 2):\n"
	            "                        C[i+ii, j+jj] += A[i+ii, k+kk] * B[k+kk, j+jj]\n"
	            "for i in range(4, 6, step=4):  # tail\n"
	            "    for j in range(0, 4, step=2):\n"
	            "        for k in range(0, 3, step=3):\n"
	            "            for ii in range(0, 2):\n"
	            "                for jj in range(0, 2):\n"
	            "                    for kk in range(0, 3):\n"
	            "                        C[i+ii, j+jj] += A[i+ii, k+kk] * B[k+kk, j+jj]\n"
	            "        for k in range(3, 5, step=3):  # tail\n"
	            "            for ii in range(0, 2):\n"
	            "                for jj in range(0, 2):\n"
	            "                    for kk in range(0, 2):\n"
	            "                        C[i+ii, j+jj] += A[i+ii, k+kk] * B[k+kk, j+jj]\n");
}

static void test_print_unscheduled(void)
{
	check_print(mm_text, 0, 0,
	            "# kernel mm: M=6, N=4, K=5\n"
	            "for i in range(0, 6):\n"
	            "    for j in range(0, 4):\n"
	            "        for k in range(0, 5):\n"
	            "            C[i, j] += A[i, k] * B[k, j]\n");
}

static void test_print_axpy_runtime(void)
{
	check_print(
	    "kernel axpy\nparam L : runtime\narray X : f32[L] input\narray Y : f32[L] inout\n"
	    "for (i: L) {\n  Y[i] = 2.5 * X[i] + Y[i]\n}\nschedule {\n  ii = split(i, 16)\n}\n",
	    1, 0,
	    "# kernel axpy: L (runtime)\n"
	    "for i in range(0, L / 16 * 16, step=16):\n"
	    "    for ii in range(0, 16):\n"
	    "        Y[i+ii] = 2.5 * X[i+ii] + Y[i+ii]\n"
	    "for i in range(L / 16 * 16, L, step=16):  # tail\n"
	    "    for ii in range(0, L % 16):\n"
	    "        Y[i+ii] = 2.5 * X[i+ii] + Y[i+ii]\n");
}

static void test_print_stencil(void)
{
	check_print("kernel st\nparam N = 8\narray A : f64[N] input\narray B : f64[N] output\n"
	            "for (x: N) {\n  let t = A[x] * 2\n"
	            "  if (0 < x && x < N-1) {\n    B[x] = (A[x-1] + t + A[x+1]) / 4\n  } else {\n"
	            "    B[x] = -t + select(t > 0.5, min(t, 1), abs(t))\n  }\n}\n"
	            "schedule {\n  xx = split(x, 4)\n}\n",
	            1, 0,
	            "# kernel st: N=8\n"
	            "for x in range(0, 8, step=4):\n"
	            "    for xx in range(0, 4):\n"
	            "        let t = A[x+xx] * 2\n"
	            "        if 0 < x+xx && x+xx < N - 1:\n"
	            "            B[x+xx] = (A[x+xx-1] + t + A[x+xx+1]) / 4\n"
	            "        else:\n"
	            "            B[x+xx] = -t + select(t > 0.5, min(t, 1), abs(t))\n");
}

static void test_print_imperfect(void)
{
	check_print(
	    "kernel ti\nparam N = 5, V = 3\narray A : f64[N, N] input\narray C1 : f64[N, V] input\n"
	    "array T : f64[V, N] temp\narray B : f64[V, N] inout layout=col_major\n"
	    "for (a: V, q: N) {\n T[a, q] = 0\n for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
	    " for (b: N) { B[a, b] -= T[a, q] * (2 * a + q) }\n}\n",
	    1, 0,
	    "# kernel ti: N=5, V=3\n"
	    "for a in range(0, 3):\n"
	    "    for q in range(0, 5):\n"
	    "        T[a, q] = 0\n"
	    "        for p in range(0, 5):\n"
	    "            T[a, q] += C1[p, a] * A[p, q]\n"
	    "        for b in range(0, 5):\n"
	    "            B[a, b] -= T[a, q] * (2 * a + q)\n");
}

/* A tiny JSON checker: true when s is exactly one well-formed value. */
static const char *json_ws(const char *s)
{
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

static const char *json_value(const char *s, int depth);

static const char *json_string(const char *s)
{
	if (*s != '"')
		return NULL;
	for (s++; *s && *s != '"'; s++) {
		if ((unsigned char)*s < 32)
			return NULL;
		if (*s == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
						return NULL;
				s += 4;
			} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
				return NULL;
			}
		}
	}
	return *s == '"' ? s + 1 : NULL;
}

static const char *json_value(const char *s, int depth)
{
	if (depth > 200)
		return NULL;
	s = json_ws(s);
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';
		bool obj = *s == '{';
		s = json_ws(s + 1);
		if (*s == close)
			return s + 1;
		for (;;) {
			if (obj) {
				s = json_string(json_ws(s));
				if (!s)
					return NULL;
				s = json_ws(s);
				if (*s++ != ':')
					return NULL;
			}
			s = json_value(s, depth + 1);
			if (!s)
				return NULL;
			s = json_ws(s);
			if (*s == close)
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	}
	if (*s == '"')
		return json_string(s);
	if (strncmp(s, "true", 4) == 0 || strncmp(s, "null", 4) == 0)
		return s + 4;
	if (strncmp(s, "false", 5) == 0)
		return s + 5;
	char *end;
	strtod(s, &end);
	return end > s ? end : NULL;
}

static bool json_ok(const char *s)
{
	const char *e = s ? json_value(s, 0) : NULL;
	return e && *json_ws(e) == 0;
}

static void test_json(void)
{
	const char *texts[] = {
	    mm_text,
	    "kernel axpy\nparam L : runtime\narray X : f32[L] input\narray Y : f32[L] inout\n"
	    "for (i: L) {\n  Y[i] = 2.5 * X[i] + Y[i]\n}\nschedule {\n  ii = split(i, 16)\n}\n",
	    "kernel st\nparam N = 8\narray A : f64[N] input\narray B : f64[N] output\n"
	    "for (x: N) {\n  let t = A[x] * 2\n  if (0 < x && x < N-1) {\n    B[x] = (A[x-1] + t) "
	    "/ 4\n"
	    "  } else {\n    B[x] = t\n  }\n}\n",
	};
	for (int i = 0; i < 3; i++) {
		char name[64];
		snprintf(name, sizeof name, "json: well formed %d", i);
		h_begin(name);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse(ctx, texts[i]);
		ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
		char *s = t ? ct_looptree_to_string(t, CT_FORMAT_JSON) : NULL;
		CHECKF(json_ok(s), "not JSON: %s", s ? s : "(null)");
		CHECK(s && strstr(s, "\"target\": \"host\""));
		CHECK(s && strstr(s, "\"caches\": []"));
		CHECK(s && strstr(s, "\"loops\": [{\"loop\": "));
		if (s && i == 0) {
			CHECK(strstr(s, "{\"kernel\": \"mm\""));
			CHECK(strstr(s, "\"params\": {\"M\": 6, \"N\": 4, \"K\": 5}"));
			CHECK(strstr(s, "{\"loop\": \"i\", \"lo\": \"4\", \"hi\": \"6\", \"step\": "
			                "4, \"tail\": true, "));
			CHECK(strstr(s, "{\"stmt\": 1, \"text\": \"C[i+ii, j+jj] += A[i+ii, k+kk] "
			                "* B[k+kk, j+jj]\"}"));
		}
		if (s && i == 1) {
			CHECK(strstr(s, "\"params\": {\"L\": null}"));
			CHECK(strstr(s, "\"hi\": \"L % 16\""));
		}
		if (s && i == 2) {
			CHECK(strstr(s, "{\"let\": \"t\", \"text\": \"let t = A[x] * 2\"}"));
			CHECK(
			    strstr(s, "{\"if\": \"0 < x && x < N - 1\", \"then\": [{\"stmt\": 1"));
			CHECK(strstr(s, "\"else\": [{\"stmt\": 2, \"text\": \"B[x] = t\"}]"));
		}
		/* deterministic */
		char *s2 = t ? ct_looptree_to_string(t, CT_FORMAT_JSON) : NULL;
		CHECK(s && s2 && strcmp(s, s2) == 0);
		free(s);
		free(s2);
		ct_looptree_free(t);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		h_end();
	}
}

static void test_print_literals(void)
{
	check_print("kernel lit\nparam N = 2\narray A : f64[N] input\narray B : f64[N] output\n"
	            "for (i: N) { B[i] = A[i] * 0.1 + 3 - 1e-3 / (A[i] - (2 - A[i])) }\n",
	            1, 0,
	            "# kernel lit: N=2\n"
	            "for i in range(0, 2):\n"
	            "    B[i] = A[i] * 0.1 + 3 - 0.001 / (A[i] - (2 - A[i]))\n");
}

int main(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(
	    ctx, "kernel b\nparam L : runtime\narray A : f32[L] input\narray B : f32[L] output\n"
	         "for (i: L) { B[i] = A[i] }\n");
	if (k) {
		test_bx_rows(k);
		test_bx_eval_errors(k);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	test_bx_from_aff();
	test_shapes();
	test_runtime_symbolic();
	test_chains();
	test_parents();
	RUN(test_print_matmul);
	RUN(test_print_unscheduled);
	RUN(test_print_axpy_runtime);
	RUN(test_print_stencil);
	RUN(test_print_imperfect);
	RUN(test_print_literals);
	test_json();
	return h_report();
}
