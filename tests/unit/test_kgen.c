/* test_kgen.c: kgen sharing, scoping, hoisting, merge sections, lazy bodies and errors. */
#include "harness.h"

#include "gen/kgen.h"

#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

typedef void (*build_fn)(kg_ctx *kg, const void *ud);

/* Run fn on a fresh context; the text (free with ct_free) or NULL. */
static char *build(ct_ctx *ctx, unsigned flags, build_fn fn, const void *ud)
{
	kg_ctx *kg = kg_new(ctx, flags);
	if (!kg)
		return NULL;
	fn(kg, ud);
	char *text = kg_take(kg, NULL);
	kg_free(kg);
	return text;
}

static void check_text(const char *got, const char *want)
{
	CHECKF(got && !strcmp(got, want), "\n--- got:\n%s--- want:\n%s---", got ? got : "(null)\n",
	       want);
}

/* Compile C text with the system compiler, warnings as errors (shadowing
 * included: the context must never produce it). 1 compiled, 0 failed, -1 no
 * compiler (the check is skipped). */
static int try_compile(const char *text)
{
	if (system("command -v cc >/dev/null 2>&1") != 0)
		return -1;
	char path[] = "/tmp/kgen_test_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof cmd,
	         "cc -std=c11 -Wall -Wextra -Wshadow -Werror -c -x c -o /dev/null %s", path);
	int rc = ok ? system(cmd) : 1;
	unlink(path);
	return rc == 0;
}

static void check_compiles(const char *text)
{
	if (!text)
		return;
	int r = try_compile(text);
	if (r < 0)
		fprintf(stderr, "[%s] no C compiler: compile check skipped\n", h_case);
	CHECKF(r != 0, "generated code does not compile:\n%s", text);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay ? strstr(hay, needle) : NULL; p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Build, compare with want, and compile if asked. */
static void expect(unsigned flags, build_fn fn, const void *ud, const char *want, bool compile)
{
	ct_ctx *ctx = ct_ctx_new();
	char *text = build(ctx, flags, fn, ud);
	CHECKF(text, "kg_take failed: %s", ct_ctx_last_message(ctx));
	check_text(text, want);
	if (compile)
		check_compiles(text);
	ct_free(ctx, text);
	ct_ctx_free(ctx);
}

#define COPY2_PROTO "void copy2(const float *a, float *b, int n)"

/* ------------------------------------------------------------ (1) (2) sharing and scopes */

/* One sub-generator writing b[off] = a[off] with its own `off`. */
static void gen_copy(kg_ctx *kg, kg_share share, const char *ctype, const char *init)
{
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *off = kg_var_declare(kg, "off", ctype, share, init);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "b[%s] = a[%s];", off, off);
	kg_section_end(kg);
}

/* Two such sub-generators: (share, type, init) each. */
typedef struct copy2_spec {
	kg_share share1;
	const char *ctype1, *init1;
	kg_share share2;
	const char *ctype2, *init2;
} copy2_spec;

static void build_copy2(kg_ctx *kg, const void *ud)
{
	const copy2_spec *s = ud;
	kg_func_declare(kg, "copy2", 0, COPY2_PROTO, NULL, NULL);
	kg_func_begin(kg, "copy2");
	gen_copy(kg, s->share1, s->ctype1, s->init1);
	gen_copy(kg, s->share2, s->ctype2, s->init2);
	kg_func_end(kg);
}

static void test_shared_off(void)
{
	const copy2_spec s = {KG_SHARE_SIBLINGS, "int", "0", KG_SHARE_SIBLINGS, "int", "n - 1"};
	expect(0, build_copy2, &s,
	       COPY2_PROTO "\n"
	                   "{\n"
	                   "\tint off = 0;\n"
	                   "\tb[off] = a[off];\n"
	                   "\n"
	                   "\toff = n - 1;\n"
	                   "\tb[off] = a[off];\n"
	                   "}\n",
	       true);
}

static const copy2_spec private_off = {KG_PRIVATE, "int",           "0",
                                       KG_PRIVATE, "unsigned long", "(unsigned long)n - 1"};

static void test_private_off_scoped(void)
{
	expect(0, build_copy2, &private_off,
	       COPY2_PROTO "\n"
	                   "{\n"
	                   "\t{\n"
	                   "\t\tint off = 0;\n"
	                   "\t\tb[off] = a[off];\n"
	                   "\t}\n"
	                   "\n"
	                   "\t{\n"
	                   "\t\tunsigned long off = (unsigned long)n - 1;\n"
	                   "\t\tb[off] = a[off];\n"
	                   "\t}\n"
	                   "}\n",
	       true);
}

static void test_private_off_renamed(void)
{
	expect(KG_RENAME_ONLY, build_copy2, &private_off,
	       COPY2_PROTO "\n"
	                   "{\n"
	                   "\tint off = 0;\n"
	                   "\tb[off] = a[off];\n"
	                   "\n"
	                   "\tunsigned long off_1 = (unsigned long)n - 1;\n"
	                   "\tb[off_1] = a[off_1];\n"
	                   "}\n",
	       true);
}

/* Shared policy but different types: a second variable, renamed since the
 * first must stay visible to its sharers. */
static void test_shared_type_clash(void)
{
	const copy2_spec s = {KG_SHARE_BOTH, "int", "0", KG_SHARE_BOTH, "long", "n"};
	expect(0, build_copy2, &s,
	       COPY2_PROTO "\n"
	                   "{\n"
	                   "\tint off = 0;\n"
	                   "\tb[off] = a[off];\n"
	                   "\n"
	                   "\tlong off_1 = n;\n"
	                   "\tb[off_1] = a[off_1];\n"
	                   "}\n",
	       true);
}

/* Enclosing an earlier section in { } must keep its shared variables alive:
 * they move before the `{`, their initialization stays in place. */
static void build_wrap_escape(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "w", 0, "void w(const float *a, float *b, int n)", NULL, NULL);
	kg_func_begin(kg, "w");
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *t = kg_var_declare(kg, "t", "int", KG_PRIVATE, "n");
	const char *off = kg_var_declare(kg, "off", "int", KG_SHARE_SIBLINGS, "1");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "b[%s] = a[%s];", off, t);
	kg_section_end(kg);
	kg_section_begin(kg, KG_DIRECT, 0);
	t = kg_var_declare(kg, "t", "float", KG_PRIVATE, "a[0]");
	off = kg_var_declare(kg, "off", "int", KG_SHARE_SIBLINGS, NULL);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "b[%s] = %s;", off, t);
	kg_section_end(kg);
	kg_func_end(kg);
}

static void test_wrap_keeps_shared(void)
{
	expect(0, build_wrap_escape, NULL,
	       "void w(const float *a, float *b, int n)\n"
	       "{\n"
	       "\tint off;\n"
	       "\t{\n"
	       "\t\tint t = n;\n"
	       "\t\toff = 1;\n"
	       "\t\tb[off] = a[t];\n"
	       "\t}\n"
	       "\n"
	       "\t{\n"
	       "\t\tfloat t = a[0];\n"
	       "\t\tb[off] = t;\n"
	       "\t}\n"
	       "}\n",
	       true);
}

/* Parameters are variables of the body: shared by type, never redeclared. */
static void build_params(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "p", 0, "void p(float *restrict b, int n, float v[4])", NULL, NULL);
	kg_func_begin(kg, "p");
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *n1 = kg_var_declare(kg, "n", "int", KG_SHARE_NESTED, NULL);
	const char *n2 = kg_var_declare(kg, "n", "long", KG_PRIVATE, "2");
	const char *b = kg_var_declare(kg, "b", "float *restrict", KG_SHARE_BOTH, NULL);
	const char *v = kg_var_lookup(kg, "v");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "%s[%s] = (float)%s + %s[0];", b, n1, n2, v ? v : "?");
	kg_section_end(kg);
	kg_func_end(kg);
}

static void test_params_are_variables(void)
{
	expect(0, build_params, NULL,
	       "void p(float *restrict b, int n, float v[4])\n"
	       "{\n"
	       "\tlong n_1 = 2;\n"
	       "\tb[n] = (float)n_1 + v[0];\n"
	       "}\n",
	       true);
}

/* An initializer on a shared variable becomes an assignment, so a const or
 * array variable is never shared that way, and a section whose shared
 * const variable cannot be split is not enclosed in { }: renaming instead. */
static void build_const(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "cst", 0, "float cst(const float *a)", NULL, NULL);
	kg_func_begin(kg, "cst");
	const char *t1 = kg_var_declare(kg, "t", "const double", KG_PRIVATE, "1.0");
	const char *t2 = kg_var_declare(kg, "t", "const double", KG_PRIVATE, "2.0");
	const char *p1 = kg_var_declare(kg, "p", "const float *", KG_SHARE_BOTH, "a");
	const char *p2 = kg_var_declare(kg, "p", "const float *", KG_SHARE_BOTH, "a + 1");
	const char *q1 = kg_var_declare(kg, "q", "const float *const", KG_SHARE_BOTH, "a");
	const char *q2 = kg_var_declare(kg, "q", "const float *const", KG_SHARE_BOTH, "a + 2");
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *u1 = kg_var_declare(kg, "u", "int", KG_PRIVATE, "3");
	const char *c1 = kg_var_declare(kg, "c", "const int", KG_SHARE_SIBLINGS, "4");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "%s += %s;", u1, c1);
	kg_section_end(kg);
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *u2 = kg_var_declare(kg, "u", "float", KG_PRIVATE, "*a");
	kg_stmt(kg, KG_OTHER, NULL, NULL,
	        "return (float)(%s + %s) + %s + %s[0] + %s[0] + %s[0] + %s[0] + %s;", t1, t2, u2,
	        p1, p2, q1, q2, c1);
	kg_section_end(kg);
	kg_func_end(kg);
}

static void test_const_never_assigned(void)
{
	expect(0, build_const, NULL,
	       "float cst(const float *a)\n"
	       "{\n"
	       "\tconst double t = 1.0;\n"
	       "\tconst double t_1 = 2.0;\n"
	       "\tconst float *p = a;\n"
	       "\tp = a + 1;\n"
	       "\tconst float *const q = a;\n"
	       "\tconst float *const q_1 = a + 2;\n"
	       "\n"
	       "\tint u = 3;\n"
	       "\tconst int c = 4;\n"
	       "\tu += c;\n"
	       "\n"
	       "\tfloat u_1 = *a;\n"
	       "\treturn (float)(t + t_1) + u_1 + p[0] + p[0] + q[0] + q_1[0] + c;\n"
	       "}\n",
	       true);
}

/* Many sub-generators (past the first growth of the name index): each
 * private `t` gets its own { } (none renamed), the shared accumulator is
 * declared once, and the whole compiles. */
static void build_many(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "many", 0, "long many(const int *a)", NULL, NULL);
	kg_func_begin(kg, "many");
	const char *acc = "?";
	for (int i = 0; i < 100; i++) {
		kg_section_begin(kg, i % 3 ? KG_DIRECT : KG_MERGE, 2);
		acc = kg_var_declare(kg, "acc", "long", KG_SHARE_SIBLINGS, i ? NULL : "0");
		const char *t = kg_var_declare(kg, "t", i % 2 ? "long" : "int", KG_PRIVATE, NULL);
		kg_stmt(kg, KG_FETCH, t, "a", "%s = a[%d];", t, i);
		kg_stmt(kg, KG_ARITH, acc, acc, "%s += %s;", acc, t);
		kg_section_end(kg);
	}
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return %s;", acc);
	kg_func_end(kg);
}

static void test_many_sections(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char *text = build(ctx, 0, build_many, NULL);
	CHECKF(text, "%s", ct_ctx_last_message(ctx));
	CHECK(count(text, "\t{\n") == 100 && count(text, "\t}\n") == 100);
	CHECK(count(text, "long acc") == 1 && count(text, "t_1") == 0);
	CHECK(count(text, "\t\tint t;\n") == 50 && count(text, "\t\tlong t;\n") == 50);
	CHECK(text && strstr(text, "\tlong acc;\n\t{\n\t\tacc = 0;\n\t\tint t;\n"));
	check_compiles(text);
	ct_free(ctx, text);
	ct_ctx_free(ctx);
}

/* Every pair of policies, for non-nested and for nested sections: shared
 * iff both allow the relation, else two declarations; always compiles. */
typedef struct share_row {
	kg_share p1, p2;
	bool nested;
} share_row;

static void build_share_pair(kg_ctx *kg, const void *ud)
{
	const share_row *r = ud;
	kg_func_declare(kg, "s", 0, "int s(void)", NULL, NULL);
	kg_func_begin(kg, "s");
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *x1 = kg_var_declare(kg, "x", "int", r->p1, "1");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "(void)%s;", x1);
	if (!r->nested)
		kg_section_end(kg);
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *x2 = kg_var_declare(kg, "x", "int", r->p2, "2");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "%s += %s;", x1, x2);
	if (r->nested)
		kg_stmt(kg, KG_OTHER, NULL, NULL, "return %s + %s;", x1, x2);
	kg_section_end(kg);
	if (r->nested)
		kg_section_end(kg);
	else
		kg_stmt(kg, KG_OTHER, NULL, NULL, "return 0;");
	kg_func_end(kg);
}

static void test_share_table(void)
{
	static const char *const pn[] = {"private", "siblings", "nested", "both"};
	for (int nested = 0; nested < 2; nested++)
		for (int p1 = 0; p1 < 4; p1++)
			for (int p2 = 0; p2 < 4; p2++) {
				char name[96];
				snprintf(name, sizeof name, "share[%s,%s,%s]",
				         nested ? "nested" : "non-nested", pn[p1], pn[p2]);
				h_begin(name);
				share_row r = {(kg_share)p1, (kg_share)p2, nested != 0};
				unsigned need = nested ? KG_SHARE_NESTED : KG_SHARE_SIBLINGS;
				bool shared = (p1 & need) && (p2 & need);
				ct_ctx *ctx = ct_ctx_new();
				char *text = build(ctx, 0, build_share_pair, &r);
				CHECKF(text, "%s", ct_ctx_last_message(ctx));
				int decls = count(text, "\tint x");
				CHECKF(decls == (shared ? 1 : 2), "%d declarations in\n%s", decls,
				       text ? text : "");
				if (shared)
					CHECK(count(text, "\tx = 2;") == 1);
				check_compiles(text);
				ct_free(ctx, text);
				ct_ctx_free(ctx);
				h_end();
			}
}

/* ------------------------------------------------------------ (3) hoisting */

static void build_hoist(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "sum", 0, "void sum(const float *a, float *b, int n)", NULL, NULL);
	kg_func_begin(kg, "sum");
	const char *i = kg_var_declare(kg, "i", "int", KG_SHARE_NESTED, NULL);
	kg_block_open(kg, "for (%s = 0; %s < n; %s++)", i, i, i);
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *acc = kg_var_hoist(kg, 1, "acc", "float", KG_SHARE_NESTED, "0");
	CHECK(kg_depth(kg) == 2);
	kg_stmt(kg, KG_ARITH, acc, "a", "%s += a[%s];", acc, i);
	kg_section_end(kg);
	kg_block_close(kg);
	const char *acc2 = kg_var_lookup(kg, "acc");
	CHECK(acc2 && !strcmp(acc2, "acc"));
	kg_stmt(kg, KG_STORE, "b", acc, "b[0] = %s;", acc2 ? acc2 : "?");
	kg_func_end(kg);
}

static void test_hoist_out_of_loop(void)
{
	expect(0, build_hoist, NULL,
	       "void sum(const float *a, float *b, int n)\n"
	       "{\n"
	       "\tint i;\n"
	       "\tfloat acc = 0;\n"
	       "\tfor (i = 0; i < n; i++) {\n"
	       "\t\tacc += a[i];\n"
	       "\t}\n"
	       "\tb[0] = acc;\n"
	       "}\n",
	       true);
}

/* Two levels out, at the outer loop's depth, after what precedes it; a
 * second hoist of the same shared name reuses it; a name used inside the
 * loop is not reused for the hoisted one. */
static void build_hoist2(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "mm", 0, "void mm(const float *a, float *c, int n)", NULL, NULL);
	kg_func_begin(kg, "mm");
	const char *i = kg_var_declare(kg, "i", "int", KG_SHARE_NESTED, NULL);
	kg_block_open(kg, "for (%s = 0; %s < n; %s++)", i, i, i);
	const char *j = kg_var_declare(kg, "j", "int", KG_SHARE_NESTED, NULL);
	kg_block_open(kg, "for (%s = 0; %s < n; %s++)", j, j, j);
	const char *t = kg_var_declare(kg, "t", "float", KG_PRIVATE, "a[i * n + j]");
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *s = kg_var_hoist(kg, 2, "s", "float", KG_SHARE_BOTH, "0");
	const char *t2 = kg_var_hoist(kg, 2, "t", "float", KG_PRIVATE, "1");
	kg_stmt(kg, KG_ARITH, s, t, "%s += %s * %s;", s, t, t2);
	kg_section_end(kg);
	kg_section_begin(kg, KG_DIRECT, 0);
	const char *s2 = kg_var_hoist(kg, 2, "s", "float", KG_SHARE_BOTH, NULL);
	CHECK(kg_status(kg) != CT_OK || !strcmp(s, s2)); /* after an error: placeholders */
	kg_stmt(kg, KG_ARITH, s2, NULL, "%s *= 0.5f;", s2);
	kg_section_end(kg);
	kg_block_close(kg);
	kg_block_close(kg);
	kg_stmt(kg, KG_STORE, "c", s, "c[0] = %s;", s);
	kg_func_end(kg);
}

static void test_hoist_two_levels(void)
{
	expect(0, build_hoist2, NULL,
	       "void mm(const float *a, float *c, int n)\n"
	       "{\n"
	       "\tint i;\n"
	       "\tfloat s = 0;\n"
	       "\tfloat t_1 = 1;\n"
	       "\tfor (i = 0; i < n; i++) {\n"
	       "\t\tint j;\n"
	       "\t\tfor (j = 0; j < n; j++) {\n"
	       "\t\t\tfloat t = a[i * n + j];\n"
	       "\n"
	       "\t\t\ts += t * t_1;\n"
	       "\n"
	       "\t\t\ts *= 0.5f;\n"
	       "\t\t}\n"
	       "\t}\n"
	       "\tc[0] = s;\n"
	       "}\n",
	       true);
}

/* ------------------------------------------------------------ (4) (5) merge sections */

typedef struct mstmt {
	kg_stype type;
	const char *defs, *uses, *text;
} mstmt;

typedef struct merge_row {
	const char *name;
	kg_order order;
	int flush;
	mstmt st[16];
	const char *want; /* the body lines, tab-indented */
} merge_row;

static void build_merge_row(kg_ctx *kg, const void *ud)
{
	const merge_row *r = ud;
	kg_func_declare(kg, "f", 0, "void f(void)", NULL, NULL);
	kg_func_begin(kg, "f");
	kg_section_begin(kg, r->order, r->flush);
	for (int i = 0; i < 16 && r->st[i].text; i++)
		kg_stmt(kg, r->st[i].type, r->st[i].defs, r->st[i].uses, "%s", r->st[i].text);
	kg_section_end(kg);
	kg_func_end(kg);
}

#define F(d, u, t)                                                                                 \
	{                                                                                          \
		KG_FETCH, d, u, t                                                                  \
	}
#define A(d, u, t)                                                                                 \
	{                                                                                          \
		KG_ARITH, d, u, t                                                                  \
	}
#define S(d, u, t)                                                                                 \
	{                                                                                          \
		KG_STORE, d, u, t                                                                  \
	}
#define O(t)                                                                                       \
	{                                                                                          \
		KG_OTHER, NULL, NULL, t                                                            \
	}

static const merge_row merge_rows[] = {
    {"direct keeps order",
     KG_DIRECT,
     0,
     {F("a", "A", "a = A[0];"), A("c", "a", "c = a;"), S("C", "c", "C[0] = c;"),
      F("b", "A", "b = A[1];"), A("d", "b", "d = b;"), S("C", "d", "C[1] = d;")},
     "\ta = A[0];\n\tc = a;\n\tC[0] = c;\n\tb = A[1];\n\td = b;\n\tC[1] = d;\n"},
    {"merge groups by type",
     KG_MERGE,
     0,
     {F("a", "A", "a = A[0];"), A("c", "a", "c = a;"), S("C", "c", "C[0] = c;"),
      F("b", "A", "b = A[1];"), A("d", "b", "d = b;"), S("C", "d", "C[1] = d;")},
     "\ta = A[0];\n\tb = A[1];\n\tc = a;\n\td = b;\n\tC[0] = c;\n\tC[1] = d;\n"},
    {"fetch after the arith it reads",
     KG_MERGE,
     0,
     {A("k", "n", "k = n - 1;"), F("x", "A k", "x = A[k];"), S("C", "x", "C[0] = x;"),
      F("y", "A", "y = A[0];")},
     "\ty = A[0];\n\tk = n - 1;\n\tx = A[k];\n\tC[0] = x;\n"},
    {"reused temporaries (war, waw)",
     KG_MERGE,
     0,
     {F("a", "A", "a = A[0];"), A("c", "a", "c = a * 2;"), S("C", "c", "C[0] = c;"),
      F("a", "A", "a = A[1];"), A("c", "a", "c = a + 1;"), S("C", "c", "C[1] = c;")},
     "\ta = A[0];\n\tc = a * 2;\n\ta = A[1];\n\tC[0] = c;\n\tc = a + 1;\n\tC[1] = c;\n"},
    {"other is a fence",
     KG_MERGE,
     0,
     {F("a", "A", "a = A[0];"), A("c", "a", "c = a;"), F("b", "A", "b = A[1];"), O("barrier();"),
      A("d", "b", "d = b;"), F("e", "A", "e = A[2];")},
     "\ta = A[0];\n\tb = A[1];\n\tc = a;\n\tbarrier();\n\te = A[2];\n\td = b;\n"},
    {"flush every 2 groups",
     KG_MERGE,
     2,
     {F("a", "A", "a = A[0];"), S("C", "a", "C[0] = a;"), F("b", "A", "b = A[1];"),
      S("C", "b", "C[1] = b;"), F("c", "A", "c = A[2];"), S("C", "c", "C[2] = c;")},
     "\ta = A[0];\n\tb = A[1];\n\tC[0] = a;\n\tC[1] = b;\n\tc = A[2];\n\tC[2] = c;\n"},
    {"multi-line statements move whole",
     KG_MERGE,
     0,
     {S("C", "x", "C[0] = x;\nC[1] = x;"), F("y", "A", "y = A[0];\ny += A[1];")},
     "\ty = A[0];\n\ty += A[1];\n\tC[0] = x;\n\tC[1] = x;\n"},
};

#undef F
#undef A
#undef S
#undef O

static void test_merge_table(void)
{
	for (size_t i = 0; i < sizeof merge_rows / sizeof merge_rows[0]; i++) {
		const merge_row *r = &merge_rows[i];
		char name[96];
		snprintf(name, sizeof name, "merge[%s]", r->name);
		h_begin(name);
		char want[1024];
		snprintf(want, sizeof want, "void f(void)\n{\n%s}\n", r->want);
		expect(0, build_merge_row, r, want, false);
		h_end();
	}
}

/* The situation of the clBLAS documentation: 8 interleaved fetch / arith /
 * store groups, emitted in flushes of 4 (4 fetches, 4 ariths, 4 stores, then
 * the next 4 of each). */
static void build_merge8(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "t8", 0, "void t8(const float *A, float *C)", NULL, NULL);
	kg_func_begin(kg, "t8");
	const char *a[8], *c[8];
	for (int g = 0; g < 8; g++) {
		char n[16];
		snprintf(n, sizeof n, "a%d", g);
		a[g] = kg_var_declare(kg, n, "float", KG_SHARE_NESTED, NULL);
		snprintf(n, sizeof n, "c%d", g);
		c[g] = kg_var_declare(kg, n, "float", KG_SHARE_NESTED, NULL);
	}
	kg_section_begin(kg, KG_MERGE, 4);
	for (int g = 0; g < 8; g++) {
		kg_stmt(kg, KG_FETCH, a[g], "A", "%s = A[%d];", a[g], g);
		kg_stmt(kg, KG_ARITH, c[g], a[g], "%s = 2 * %s;", c[g], a[g]);
		kg_stmt(kg, KG_STORE, "C", c[g], "C[%d] = %s;", g, c[g]);
	}
	kg_section_end(kg);
	kg_func_end(kg);
}

static void test_merge_flush4(void)
{
	char want[4096];
	size_t n = (size_t)snprintf(want, sizeof want, "void t8(const float *A, float *C)\n{\n");
	for (int g = 0; g < 8; g++)
		n += (size_t)snprintf(want + n, sizeof want - n, "\tfloat a%d;\n\tfloat c%d;\n", g,
		                      g);
	n += (size_t)snprintf(want + n, sizeof want - n, "\n");
	for (int half = 0; half < 2; half++) {
		for (int g = 4 * half; g < 4 * half + 4; g++)
			n += (size_t)snprintf(want + n, sizeof want - n, "\ta%d = A[%d];\n", g, g);
		for (int g = 4 * half; g < 4 * half + 4; g++)
			n +=
			    (size_t)snprintf(want + n, sizeof want - n, "\tc%d = 2 * a%d;\n", g, g);
		for (int g = 4 * half; g < 4 * half + 4; g++)
			n += (size_t)snprintf(want + n, sizeof want - n, "\tC[%d] = c%d;\n", g, g);
	}
	snprintf(want + n, sizeof want - n, "}\n");
	/* spot-check the expectation itself: the 5th fetch follows the 4th store */
	CHECK(strstr(want, "\tC[3] = c3;\n\ta4 = A[4];\n") != NULL);
	expect(0, build_merge8, NULL, want, true);
}

/* Two sub-generators in KG_INHERIT sections are merged by their parent;
 * a declaration without initializer goes before what is queued, a block is
 * a fence. */
static void gen_tile_part(kg_ctx *kg, int k)
{
	kg_section_begin(kg, KG_INHERIT, 0);
	char n[16];
	snprintf(n, sizeof n, "v%d", k);
	const char *v = kg_var_declare(kg, n, "float", KG_PRIVATE, NULL);
	kg_stmt(kg, KG_FETCH, v, "A", "%s = A[%d];", v, k);
	kg_stmt(kg, KG_ARITH, v, v, "%s *= %s;", v, v);
	kg_stmt(kg, KG_STORE, "C", v, "C[%d] = %s;", k, v);
	kg_section_end(kg);
}

static void build_inherit(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "sq2", 0, "void sq2(const float *A, float *C, int n)", NULL, NULL);
	kg_func_begin(kg, "sq2");
	kg_section_begin(kg, KG_MERGE, 0);
	gen_tile_part(kg, 0);
	gen_tile_part(kg, 1);
	kg_block_open(kg, "if (n > 2)");
	gen_tile_part(kg, 2);
	gen_tile_part(kg, 3);
	kg_block_close(kg);
	kg_section_end(kg);
	kg_func_end(kg);
}

static void test_merge_inherit_and_blocks(void)
{
	expect(0, build_inherit, NULL,
	       "void sq2(const float *A, float *C, int n)\n"
	       "{\n"
	       "\tfloat v0;\n"
	       "\tfloat v1;\n"
	       "\tv0 = A[0];\n"
	       "\tv1 = A[1];\n"
	       "\tv0 *= v0;\n"
	       "\tv1 *= v1;\n"
	       "\tC[0] = v0;\n"
	       "\tC[1] = v1;\n"
	       "\tif (n > 2) {\n"
	       "\t\tfloat v2;\n"
	       "\t\tfloat v3;\n"
	       "\t\tv2 = A[2];\n"
	       "\t\tv3 = A[3];\n"
	       "\t\tv2 *= v2;\n"
	       "\t\tv3 *= v3;\n"
	       "\t\tC[2] = v2;\n"
	       "\t\tC[3] = v3;\n"
	       "\t}\n"
	       "}\n",
	       true);
}

/* ------------------------------------------------------------ (6) functions */

static void gen_sq(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return x * x;");
}

/* Body generators receive void *; the test passes counters through it. */
static void gen_sq_counted(kg_ctx *kg, void *ud)
{
	(*(int *)ud)++;
	gen_sq(kg, NULL);
}

typedef struct lazy_spec {
	unsigned kflags;
	const char *kproto;
	int *calls;
} lazy_spec;

static void build_lazy(kg_ctx *kg, const void *ud)
{
	const lazy_spec *s = ud;
	/* the caller is declared before the helper, and written first */
	kg_func_declare(kg, "k", s->kflags, s->kproto, NULL, NULL);
	kg_func_declare(kg, "sq", KG_FUNC_STATIC | KG_FUNC_INLINE, "float sq(float x)",
	                gen_sq_counted, s->calls);
	kg_func_begin(kg, "k");
	const char *i = kg_var_declare(kg, "i", "int", KG_SHARE_NESTED, NULL);
	kg_block_open(kg, "for (%s = 0; %s < n; %s++)", i, i, i);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "v[%s] = %s(v[%s]);", i, kg_func_use(kg, "sq"), i);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "v[%s] += %s(1.0f);", i, kg_func_use(kg, "sq"));
	kg_block_close(kg);
	kg_func_end(kg);
}

static void test_lazy_helper_before_caller(void)
{
	int calls = 0;
	const lazy_spec s = {KG_FUNC_KERNEL, "void k(float *v, int n)", &calls};
	expect(0, build_lazy, &s,
	       "static inline float sq(float x)\n"
	       "{\n"
	       "\treturn x * x;\n"
	       "}\n"
	       "\n"
	       "void k(float *v, int n)\n"
	       "{\n"
	       "\tint i;\n"
	       "\tfor (i = 0; i < n; i++) {\n"
	       "\t\tv[i] = sq(v[i]);\n"
	       "\t\tv[i] += sq(1.0f);\n"
	       "\t}\n"
	       "}\n",
	       true);
	CHECKF(calls == 1, "body generated %d times", calls);
}

static void test_opencl_qualifiers(void)
{
	int calls = 0;
	const lazy_spec s = {KG_FUNC_KERNEL, "void k(__global float *v, int n)", &calls};
	expect(KG_OPENCL, build_lazy, &s,
	       "inline float sq(float x)\n"
	       "{\n"
	       "\treturn x * x;\n"
	       "}\n"
	       "\n"
	       "__kernel void k(__global float *v, int n)\n"
	       "{\n"
	       "\tint i;\n"
	       "\tfor (i = 0; i < n; i++) {\n"
	       "\t\tv[i] = sq(v[i]);\n"
	       "\t\tv[i] += sq(1.0f);\n"
	       "\t}\n"
	       "}\n",
	       false);
	ct_ctx *ctx = ct_ctx_new();
	kg_ctx *kg = kg_new(ctx, KG_OPENCL);
	CHECK(kg_is_opencl(kg));
	kg_free(kg);
	kg = kg_new(ctx, 0);
	CHECK(!kg_is_opencl(kg) && kg_depth(kg) == 0);
	kg_free(kg);
	ct_ctx_free(ctx);
}

/* A helper whose generator uses another helper: innermost first; an unused
 * on-demand helper is dropped, an unused ordinary one is still emitted. */
static void gen_h1(kg_ctx *kg, void *ud)
{
	(void)ud;
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return %s(x) + 1;", kg_func_use(kg, "h2"));
}

static void gen_h2(kg_ctx *kg, void *ud)
{
	(void)ud;
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return x * 2;");
}

static void gen_ret0(kg_ctx *kg, void *ud)
{
	(void)ud;
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return x - x;");
}

static void build_chain(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "k", 0, "int k(int x)", NULL, NULL);
	kg_func_declare(kg, "h1", KG_FUNC_STATIC, "int h1(int x)", gen_h1, NULL);
	kg_func_declare(kg, "h2", KG_FUNC_STATIC, "int h2(int x)", gen_h2, NULL);
	kg_func_declare(kg, "h3", KG_FUNC_STATIC | KG_FUNC_ON_DEMAND, "int h3(int x)", gen_ret0,
	                NULL);
	kg_func_declare(kg, "h4", 0, "int h4(int x)", gen_ret0, NULL);
	/* declaring again identically is harmless */
	kg_func_declare(kg, "h2", KG_FUNC_STATIC, "int h2(int x)", gen_h2, NULL);
	kg_func_begin(kg, "k");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return %s(x);", kg_func_use(kg, "h1"));
	kg_func_end(kg);
}

static void test_lazy_chain_order(void)
{
	expect(0, build_chain, NULL,
	       "static int h2(int x)\n{\n\treturn x * 2;\n}\n\n"
	       "static int h1(int x)\n{\n\treturn h2(x) + 1;\n}\n\n"
	       "int k(int x)\n{\n\treturn h1(x);\n}\n\n"
	       "int h4(int x)\n{\n\treturn x - x;\n}\n",
	       true);
}

/* Mutual recursion: a forward declaration. */
static void build_recursion(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "f", 0, "int f(int x)", NULL, NULL);
	kg_func_declare(kg, "g", 0, "int g(int x)", NULL, NULL);
	kg_func_begin(kg, "f");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return x > 0 ? %s(x - 1) : 1;", kg_func_use(kg, "g"));
	kg_func_end(kg);
	kg_func_begin(kg, "g");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return x > 0 ? %s(x - 1) : 0;", kg_func_use(kg, "f"));
	kg_func_end(kg);
}

static void test_recursion_forward_decl(void)
{
	expect(0, build_recursion, NULL,
	       "int f(int x);\n\n"
	       "int g(int x)\n{\n\treturn x > 0 ? f(x - 1) : 0;\n}\n\n"
	       "int f(int x)\n{\n\treturn x > 0 ? g(x - 1) : 1;\n}\n",
	       true);
}

/* A body begun while another is being written (eager helper). */
static void build_nested_begin(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "outer", 0, "int outer(int x)", NULL, NULL);
	kg_func_declare(kg, "inner", KG_FUNC_STATIC, "int inner(int x)", NULL, NULL);
	kg_func_begin(kg, "outer");
	const char *t = kg_var_declare(kg, "t", "int", KG_PRIVATE, "x");
	kg_func_begin(kg, "inner");
	CHECK(kg_depth(kg) == 1);
	CHECK(kg_var_lookup(kg, "t") == NULL); /* the caller's variables are not visible */
	const char *u = kg_var_declare(kg, "t", "int", KG_PRIVATE, "x + 1");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return %s;", u);
	kg_func_end(kg);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "return %s(%s);", kg_func_use(kg, "inner"), t);
	kg_func_end(kg);
}

static void test_nested_function_bodies(void)
{
	expect(0, build_nested_begin, NULL,
	       "static int inner(int x)\n{\n\tint t = x + 1;\n\treturn t;\n}\n\n"
	       "int outer(int x)\n{\n\tint t = x;\n\treturn inner(t);\n}\n",
	       true);
}

/* ------------------------------------------------------------ formatting */

static void build_format(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_preamble(kg, "#include <stddef.h>");
	kg_func_declare(kg, "fmt", 0, "void fmt(float *p, int n)", NULL, NULL);
	kg_func_begin(kg, "fmt");
	kg_comment(kg, "head");
	const char *q = kg_var_declare(kg, "q", "float *", KG_SHARE_BOTH, "p");
	kg_block_open(kg, "if (n > 0)");
	kg_stmt(kg, KG_STORE, "q", NULL, "%s[0] = 1;", q);
	kg_block_next(kg, "else if (n < 0)");
	kg_stmt(kg, KG_STORE, "q", NULL, "%s[0] = -1;", q);
	kg_block_next(kg, "else");
	kg_stmt(kg, KG_STORE, "q", NULL, "%s[0] = 0;", q);
	kg_block_close(kg);
	kg_section_begin(kg, KG_DIRECT, 0);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "%s[1] = 2;\n%s[2] = (float)sizeof(size_t);\n", q, q);
	kg_section_end(kg);
	kg_section_begin(kg, KG_DIRECT, 0); /* empty: leaves no trace */
	kg_section_end(kg);
	kg_block_bare(kg);
	kg_stmt(kg, KG_OTHER, NULL, NULL, "%s[3] = 4;", q);
	kg_block_close(kg);
	kg_func_end(kg);
}

static void test_formatting(void)
{
	expect(0, build_format, NULL,
	       "#include <stddef.h>\n"
	       "\n"
	       "void fmt(float *p, int n)\n"
	       "{\n"
	       "\t/* head */\n"
	       "\tfloat *q = p;\n"
	       "\tif (n > 0) {\n"
	       "\t\tq[0] = 1;\n"
	       "\t} else if (n < 0) {\n"
	       "\t\tq[0] = -1;\n"
	       "\t} else {\n"
	       "\t\tq[0] = 0;\n"
	       "\t}\n"
	       "\n"
	       "\tq[1] = 2;\n"
	       "\tq[2] = (float)sizeof(size_t);\n"
	       "\n"
	       "\t{\n"
	       "\t\tq[3] = 4;\n"
	       "\t}\n"
	       "}\n",
	       true);
}

static void build_opencl_local(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "tile", KG_FUNC_KERNEL, "void tile(__global const float *a)", NULL,
	                NULL);
	kg_func_begin(kg, "tile");
	const char *t = kg_var_declare(kg, "t", "__local float[16][17]", KG_SHARE_BOTH, NULL);
	kg_stmt(kg, KG_FETCH, t, "a", "%s[0][0] = a[0];", t);
	kg_func_end(kg);
}

static void test_array_declarations(void)
{
	expect(KG_OPENCL, build_opencl_local, NULL,
	       "__kernel void tile(__global const float *a)\n"
	       "{\n"
	       "\t__local float t[16][17];\n"
	       "\tt[0][0] = a[0];\n"
	       "}\n",
	       false);
}

static void build_cuda_kernel(kg_ctx *kg, const void *ud)
{
	(void)ud;
	kg_func_declare(kg, "tile", KG_FUNC_KERNEL | KG_FUNC_STATIC, "void tile(const float *__restrict__ a)", NULL, NULL);
	kg_func_begin(kg, "tile");
	kg_stmt(kg, KG_OTHER, NULL, NULL, "(void)a;");
	kg_func_end(kg);
}

/* KG_CUDA: an entry point is `extern "C" __global__` (never static) */
static void test_cuda_kernel(void)
{
	expect(KG_OPENCL | KG_CUDA, build_cuda_kernel, NULL,
	       "extern \"C\" __global__ void tile(const float *__restrict__ a)\n"
	       "{\n"
	       "\t(void)a;\n"
	       "}\n",
	       false);
}

/* ------------------------------------------------------------ (7) errors */

typedef struct err_row {
	const char *name;
	void (*fn)(kg_ctx *kg);
	ct_status status;
	const char *msg; /* a substring of the ctx message after kg_take */
} err_row;

static void e_stmt_outside(kg_ctx *kg)
{
	kg_stmt(kg, KG_OTHER, NULL, NULL, "x = 1;");
}

static void e_begin_f(kg_ctx *kg)
{
	kg_func_declare(kg, "f", 0, "void f(void)", NULL, NULL);
	kg_func_begin(kg, "f");
}

static void e_close_extra(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_block_open(kg, "if (1)");
	kg_block_close(kg);
	kg_block_close(kg); /* one too many */
	/* everything after the first error is ignored */
	kg_stmt(kg, KG_OTHER, NULL, NULL, "x = 1;");
	kg_section_end(kg);
	kg_func_end(kg);
}

static void e_section_end(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_section_end(kg);
}

static void e_end_open_block(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_block_open(kg, "while (1)");
	kg_func_end(kg);
}

static void e_end_in_section(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_section_begin(kg, KG_MERGE, 0);
	kg_func_end(kg);
}

static void e_use_undeclared(kg_ctx *kg)
{
	e_begin_f(kg);
	const char *n = kg_func_use(kg, "nope");
	CHECK(!strcmp(n, "kg_error"));
	kg_func_end(kg);
}

static void e_declare_twice(kg_ctx *kg)
{
	kg_func_declare(kg, "f", 0, "void f(void)", NULL, NULL);
	kg_func_declare(kg, "f", 0, "void f(int)", NULL, NULL);
}

static void e_begin_twice(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_func_end(kg);
	kg_func_begin(kg, "f");
}

static void e_hoist_too_far(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_block_open(kg, "if (1)");
	const char *n = kg_var_hoist(kg, 2, "x", "int", KG_PRIVATE, NULL);
	CHECK(!strcmp(n, "kg_error"));
}

static void e_missing_body(kg_ctx *kg)
{
	kg_func_declare(kg, "f", 0, "void f(void)", NULL, NULL);
	kg_func_declare(kg, "g", KG_FUNC_ON_DEMAND, "void g(void)", NULL, NULL); /* unused: fine */
}

static void e_close_outer(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_block_open(kg, "if (1)");
	kg_section_begin(kg, KG_DIRECT, 0);
	kg_block_close(kg);
}

static void e_not_ended(kg_ctx *kg)
{
	e_begin_f(kg);
}

static void e_section_open_block(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_section_begin(kg, KG_DIRECT, 0);
	kg_block_open(kg, "if (1)");
	kg_section_end(kg);
}

static void e_bad_type(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_stmt(kg, (kg_stype)7, NULL, NULL, "x;");
}

static void gen_leaves_open(kg_ctx *kg, void *ud)
{
	(void)ud;
	kg_func_declare(kg, "g2", 0, "void g2(void)", NULL, NULL);
	kg_func_begin(kg, "g2");
}

static void e_gen_leaves_open(kg_ctx *kg)
{
	kg_func_declare(kg, "g", 0, "void g(void)", gen_leaves_open, NULL);
}

static void e_too_deep(kg_ctx *kg)
{
	e_begin_f(kg);
	for (int i = 0; i < 1030; i++)
		kg_block_open(kg, "if (%d)", i);
}

static void e_bad_declare(kg_ctx *kg)
{
	e_begin_f(kg);
	kg_var_declare(kg, "", "int", KG_PRIVATE, NULL);
}

static void e_end_without_begin(kg_ctx *kg)
{
	kg_func_declare(kg, "g", 0, "void g(void)", NULL, NULL);
	kg_func_declare(kg, "h", 0, "void h(void)", NULL, NULL);
	kg_func_begin(kg, "g");
	kg_func_end(kg);
	kg_func_end(kg);
}

static const err_row err_rows[] = {
    {"statement outside a function", e_stmt_outside, CT_ERR_USAGE, "outside a function body"},
    {"more blocks closed than opened", e_close_extra, CT_ERR_USAGE, "without an open block"},
    {"section end without begin", e_section_end, CT_ERR_USAGE, "without an open section"},
    {"function ends with open block", e_end_open_block, CT_ERR_USAGE, "open block"},
    {"function ends inside section", e_end_in_section, CT_ERR_USAGE, "inside a section"},
    {"use of undeclared function", e_use_undeclared, CT_ERR_USAGE, "undeclared function 'nope'"},
    {"declared twice differently", e_declare_twice, CT_ERR_USAGE, "declared twice differently"},
    {"body begun twice", e_begin_twice, CT_ERR_USAGE, "begun twice"},
    {"hoist out of too many blocks", e_hoist_too_far, CT_ERR_USAGE, "cannot hoist 'x'"},
    {"function without body", e_missing_body, CT_ERR_USAGE, "'f' declared without a body"},
    {"closing a block of the parent", e_close_outer, CT_ERR_USAGE, "outside the current section"},
    {"function not ended", e_not_ended, CT_ERR_USAGE, "'f' not ended"},
    {"section ends with open block", e_section_open_block, CT_ERR_USAGE,
     "section ends with an open block"},
    {"bad statement type", e_bad_type, CT_ERR_USAGE, "bad statement type 7"},
    {"generator leaves a body open", e_gen_leaves_open, CT_ERR_USAGE, "left a function body open"},
    {"blocks nested too deep", e_too_deep, CT_ERR_LIMIT, "deeper than 1024"},
    {"declaration without name", e_bad_declare, CT_ERR_USAGE, "needs a name"},
    {"function end without begin", e_end_without_begin, CT_ERR_USAGE, "outside a function body"},
};

static void test_error_table(void)
{
	for (size_t i = 0; i < sizeof err_rows / sizeof err_rows[0]; i++) {
		const err_row *r = &err_rows[i];
		char name[96];
		snprintf(name, sizeof name, "error[%s]", r->name);
		h_begin(name);
		ct_ctx *ctx = ct_ctx_new();
		kg_ctx *kg = kg_new(ctx, 0);
		r->fn(kg);
		/* something else may overwrite the ctx error in between: kg_take
		 * reports the first kgen error once more at the end */
		ct_error(ctx, CT_ERR_IO, "unrelated");
		size_t len = 99;
		char *text = kg_take(kg, &len);
		CHECK(text == NULL && len == 0);
		CHECKF(ct_ctx_last_status(ctx) == r->status, "status %d", ct_ctx_last_status(ctx));
		CHECKF(strstr(ct_ctx_last_message(ctx), r->msg), "message \"%s\"",
		       ct_ctx_last_message(ctx));
		CHECK(kg_status(kg) == r->status);
		/* a second take is refused and changes nothing */
		CHECK(kg_take(kg, NULL) == NULL && kg_status(kg) == r->status);
		kg_free(kg);
		ct_ctx_free(ctx);
		h_end();
	}
}

/* An allocator that fails after a budget of allocations and counts what
 * is live, so that every failure point can be tried and leaks seen. */
typedef struct fail_alloc {
	long budget;
	long live;
} fail_alloc;

static void *failing_alloc(void *ud, void *ptr, size_t size)
{
	fail_alloc *fa = ud;
	if (size == 0) {
		if (ptr)
			fa->live--;
		free(ptr);
		return NULL;
	}
	if (fa->budget-- <= 0)
		return NULL;
	void *q = realloc(ptr, size);
	if (q && !ptr)
		fa->live++;
	return q;
}

/* A bit of everything: sections, a retroactive { }, a merge, a hoist, a
 * lazy helper, a long output (so that the output buffer grows). */
static void build_everything(kg_ctx *kg, const void *ud)
{
	build_copy2(kg, &private_off);
	build_merge8(kg, NULL);
	build_hoist2(kg, NULL);
	int calls = 0;
	const lazy_spec s = {0, "void k(float *v, int n)", &calls};
	build_lazy(kg, &s);
	kg_func_declare(kg, "big", 0, "void big(float *v)", NULL, NULL);
	kg_func_begin(kg, "big");
	for (int i = 0; i < 2000; i++)
		kg_stmt(kg, KG_OTHER, NULL, NULL, "v[%d] = %d.0f; /* padding padding padding */", i,
		        i);
	kg_func_end(kg);
	(void)ud;
}

static void test_alloc_failures(void)
{
	ct_ctx *ref_ctx = ct_ctx_new();
	char *ref = build(ref_ctx, 0, build_everything, NULL);
	CHECK(ref != NULL);
	if (ref)
		check_compiles(ref);
	int failures = 0;
	bool done = false;
	for (long budget = 0; budget < 10000 && !done; budget++) {
		fail_alloc fa = {1, 0};
		ct_ctx *ctx = ct_ctx_new_with_alloc(failing_alloc, &fa);
		if (!ctx)
			break;
		fa.budget = budget;
		char *text = build(ctx, 0, build_everything, NULL);
		if (text) {
			check_text(text, ref ? ref : "");
			ct_free(ctx, text);
			done = true;
		} else {
			failures++;
			CHECKF(ct_ctx_last_status(ctx) == CT_ERR_NOMEM, "budget %ld: status %d",
			       budget, ct_ctx_last_status(ctx));
		}
		CHECKF(fa.live == 1, "budget %ld: %ld blocks live besides the ctx", budget,
		       fa.live - 1);
		ct_ctx_free(ctx);
	}
	CHECK(done);
	CHECKF(failures >= 3, "only %d failure points", failures);
	ct_free(ref_ctx, ref);
	ct_ctx_free(ref_ctx);
}

/* ------------------------------------------------------------ (8) reset */

static void test_reset_reuses(void)
{
	ct_ctx *ctx = ct_ctx_new();
	char *fresh = build(ctx, 0, build_copy2, &private_off);
	kg_ctx *kg = kg_new(ctx, 0);
	/* a failed generation ... */
	e_close_extra(kg);
	CHECK(kg_status(kg) == CT_ERR_USAGE);
	CHECK(kg_take(kg, NULL) == NULL);
	/* ... then the same context, reset, does the work of a new one, twice */
	for (int round = 0; round < 2; round++) {
		kg_reset(kg);
		CHECK(kg_status(kg) == CT_OK && kg_depth(kg) == 0);
		build_copy2(kg, &private_off);
		size_t len = 0;
		char *text = kg_take(kg, &len);
		check_text(text, fresh ? fresh : "");
		CHECK(text && len == strlen(text));
		ct_free(ctx, text);
	}
	/* reset in the middle of a body drops it */
	e_begin_f(kg);
	kg_block_open(kg, "if (1)");
	kg_reset(kg);
	build_copy2(kg, &private_off);
	char *text = kg_take(kg, NULL);
	check_text(text, fresh ? fresh : "");
	ct_free(ctx, text);
	kg_free(kg);
	kg_free(NULL);
	kg_reset(NULL);
	ct_free(ctx, fresh);
	ct_ctx_free(ctx);
}

static void test_empty_program(void)
{
	ct_ctx *ctx = ct_ctx_new();
	kg_ctx *kg = kg_new(ctx, 0);
	size_t len = 7;
	char *text = kg_take(kg, &len);
	CHECK(text && text[0] == 0 && len == 0);
	ct_free(ctx, text);
	kg_free(kg);
	CHECK(kg_new(NULL, 0) == NULL);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_shared_off);
	RUN(test_private_off_scoped);
	RUN(test_private_off_renamed);
	RUN(test_shared_type_clash);
	RUN(test_wrap_keeps_shared);
	RUN(test_params_are_variables);
	RUN(test_const_never_assigned);
	RUN(test_many_sections);
	test_share_table();
	RUN(test_hoist_out_of_loop);
	RUN(test_hoist_two_levels);
	test_merge_table();
	RUN(test_merge_flush4);
	RUN(test_merge_inherit_and_blocks);
	RUN(test_lazy_helper_before_caller);
	RUN(test_opencl_qualifiers);
	RUN(test_lazy_chain_order);
	RUN(test_recursion_forward_decl);
	RUN(test_nested_function_bodies);
	RUN(test_formatting);
	RUN(test_array_declarations);
	RUN(test_cuda_kernel);
	test_error_table();
	RUN(test_alloc_failures);
	RUN(test_reset_reuses);
	RUN(test_empty_program);
	return h_report();
}
