/* cgen.c: the C backend: a loop tree becomes one readable C99 function, emitted through kgen. */
#include "gen/gen.h"

#include "gen/kgen.h"

#include <stdlib.h>
#include <string.h>

/* Temps up to this many bytes live on the stack; larger ones on the heap. */
#define CG_STACK_TEMP_BYTES 65536

/* C keywords and the names the generated code itself uses: a user name
 * among them gets a trailing underscore. */
static const char *const reserved[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
	"restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
	"union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
	"_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
	"_Thread_local", "bool", "true", "false", "NULL", "int32_t", "int64_t", "uint64_t",
	"size_t", "sqrt", "sqrtf", "exp", "expf", "fma", "fmaf", "fabs", "fabsf", "malloc", "calloc",
	"free", "args", "params", "main", "min", "max", "abs"};

typedef struct cg {
	ct_looptree *t;
	const ct_kernel *k;
	kg_ctx *kg;
	int64_t *pval;          /* compile-time param values */
	char **aname;           /* C names of arrays */
	char **iname;           /* C names of indices */
	char **pname;           /* C names of params */
	const char **lname;     /* C names of lets (as kgen returned them) */
	char **stride;          /* per array, per dim: stride as C text */
	ct_arena arena;         /* bound expressions built while generating */
	bool failed;
} cg;

static bool is_reserved(const char *s)
{
	if (strncmp(s, "ct_", 3) == 0 || strncmp(s, "cachet_", 7) == 0)
		return true;
	for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		if (strcmp(reserved[i], s) == 0)
			return true;
	return false;
}

/* A C identifier for user name s (malloc'd). */
static char *c_name(cg *g, const char *s)
{
	size_t n = strlen(s);
	char *r = malloc(n + 2);
	if (!r) {
		g->failed = true;
		return NULL;
	}
	memcpy(r, s, n + 1);
	if (is_reserved(s)) {
		r[n] = '_';
		r[n + 1] = 0;
	}
	return r;
}

static void free_names(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ------------------------------------------------------------ affine text */

/* The value of original index id as C: the sum of its chain's loop variables. */
static void put_orig_index(cg *g, ct_buf *b, int id, bool paren)
{
	const ct_looptree *t = g->t;
	int n = t->chain_len ? t->chain_len[id] : 1;
	if (n <= 1) {
		ct_buf_puts(b, g->iname[n == 1 && t->chain ? t->chain[id][0] : id]);
		return;
	}
	if (paren)
		ct_buf_putc(b, '(');
	for (int i = 0; i < n; i++)
		ct_buf_printf(b, "%s%s", i ? " + " : "", g->iname[t->chain[id][i]]);
	if (paren)
		ct_buf_putc(b, ')');
}

/* An affine expression over original indices and params as C (int64). */
static void put_aff(cg *g, ct_buf *b, aff x)
{
	int64_t c = x.c;
	bool any = false;
	for (int i = 0; i < x.n; i++) {
		const aff_term *tm = &x.t[i];
		if (tm->kind == AFF_PARAM && !g->k->params[tm->id].runtime) {
			c += tm->coef * g->pval[tm->id];
			continue;
		}
		int64_t a = tm->coef;
		if (any)
			ct_buf_puts(b, a < 0 ? " - " : " + ");
		else if (a < 0)
			ct_buf_puts(b, "-");
		if (a < 0)
			a = -a;
		if (a != 1)
			ct_buf_printf(b, "%lld * ", (long long)a);
		if (tm->kind == AFF_PARAM)
			ct_buf_puts(b, g->pname[tm->id]);
		else
			put_orig_index(g, b, tm->id, a != 1 || x.n > 1);
		any = true;
	}
	if (!any)
		ct_buf_printf(b, "%lld", (long long)c);
	else if (c)
		ct_buf_printf(b, " %c %lld", c < 0 ? '-' : '+', (long long)(c < 0 ? -c : c));
}

/* A loop bound as C; runtime params by name, min/max through helpers. */
static void put_bx(cg *g, ct_buf *b, const bx *x)
{
	switch (x->kind) {
	case BX_CONST: ct_buf_printf(b, "%lld", (long long)x->v); return;
	case BX_PARAM: ct_buf_puts(b, g->pname[x->id]); return;
	case BX_MIN:
	case BX_MAX:
		ct_buf_puts(b, x->kind == BX_MIN ? "ct_min64(" : "ct_max64(");
		put_bx(g, b, x->a);
		ct_buf_puts(b, ", ");
		put_bx(g, b, x->b);
		ct_buf_putc(b, ')');
		return;
	default: {
		/* fully parenthesised: bounds are short and never ambiguous this way */
		static const char *const ops[] = {[BX_ADD] = " + ", [BX_SUB] = " - ", [BX_MUL] = " * ",
						  [BX_FLOORDIV] = " / ", [BX_MOD] = " % "};
		ct_buf_putc(b, '(');
		put_bx(g, b, x->a);
		ct_buf_puts(b, ops[x->kind]);
		put_bx(g, b, x->b);
		ct_buf_putc(b, ')');
		return;
	}
	}
}

/* The element count of the dimensions of array a after position r of its
 * layout (its stride there), as a folded bound expression: a constant when
 * every size is known, else a product of runtime params. */
static const bx *layout_product(cg *g, int a, int from)
{
	const ir_array *arr = &g->k->arrays[a];
	const bx *p = bx_const(&g->arena, 1);
	for (int r = from; r < arr->rank && p; r++) {
		const bx *e = bx_from_aff(&g->arena, g->k, arr->ext[arr->order[r]]);
		p = e ? bx_bin(&g->arena, BX_MUL, p, e) : NULL;
	}
	return p;
}

/* Strides of every array as C text, from its layout (most major first). */
static bool make_strides(cg *g)
{
	const ct_kernel *k = g->k;
	g->stride = calloc((size_t)k->narrays * IR_MAX_RANK, sizeof *g->stride);
	if (!g->stride)
		return false;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		for (int r = 0; r < arr->rank; r++) {
			const bx *st = layout_product(g, a, r + 1);
			if (!st)
				return false;
			ct_buf b;
			ct_buf_init(&b);
			put_bx(g, &b, st);
			g->stride[a * IR_MAX_RANK + arr->order[r]] = ct_buf_take(&b);
			if (!g->stride[a * IR_MAX_RANK + arr->order[r]])
				return false;
		}
	}
	return true;
}

/* The element of array a at subscripts sub[] as C: A[linear offset]. */
static void put_access(cg *g, ct_buf *b, int a, const aff *sub)
{
	const ir_array *arr = &g->k->arrays[a];
	ct_buf_printf(b, "%s[", g->aname[a]);
	bool any = false;
	for (int d = 0; d < arr->rank; d++) {
		const char *s = g->stride[a * IR_MAX_RANK + d];
		if (sub[d].n == 0 && sub[d].c == 0)
			continue;
		if (any)
			ct_buf_puts(b, " + ");
		ct_buf t;
		ct_buf_init(&t);
		put_aff(g, &t, sub[d]);
		const char *txt = t.s ? t.s : "0";
		if (strcmp(s, "1") == 0)
			ct_buf_puts(b, txt);
		else if (strchr(txt, ' '))
			ct_buf_printf(b, "(%s) * %s", txt, s);
		else
			ct_buf_printf(b, "%s * %s", txt, s);
		if (t.failed)
			g->failed = true;
		ct_buf_free(&t);
		any = true;
	}
	if (!any)
		ct_buf_putc(b, '0');
	ct_buf_putc(b, ']');
}

/* ------------------------------------------------------------ expressions */

static bool is_int(ct_dtype t) { return t == CT_I32 || t == CT_I64; }

static void put_expr(cg *g, ct_buf *b, const ir_expr *e, ct_dtype want);

/* A literal in type t. */
static void put_num(ct_buf *b, const ir_expr *e, ct_dtype t)
{
	if (is_int(t)) {
		long long v = e->is_float ? (long long)e->num : (long long)e->inum;
		ct_buf_printf(b, v < 0 ? "(%lld)" : "%lld", v);
		return;
	}
	double v = e->is_float ? e->num : (double)e->inum;
	char tmp[64];
	snprintf(tmp, sizeof tmp, "%.17g", v);
	if (!strpbrk(tmp, ".eEn"))
		strcat(tmp, ".0");
	ct_buf_printf(b, v < 0 ? "(%s%s)" : "%s%s", tmp, t == CT_F32 ? "f" : "");
}

static const char *fn_suffix(ct_dtype t) { return t == CT_F32 ? "f" : ""; }

/* The operation of e in its own type (no conversion). */
static void put_op(cg *g, ct_buf *b, const ir_expr *e)
{
	ct_dtype t = e->type;
	const ir_expr *const *a = (const ir_expr *const *)e->args;
	switch (e->kind) {
	case EX_NUM: put_num(b, e, t); return;
	case EX_INDEX: put_orig_index(g, b, e->id, true); return;
	case EX_PARAM:
		if (g->k->params[e->id].runtime)
			ct_buf_puts(b, g->pname[e->id]);
		else
			ct_buf_printf(b, "%lld", (long long)g->pval[e->id]);
		return;
	case EX_LET: ct_buf_puts(b, g->lname[e->id] ? g->lname[e->id] : "ct_undefined_let"); return;
	case EX_ACCESS: put_access(g, b, e->id, e->sub); return;
	case EX_NEG:
		if (is_int(t)) {
			ct_buf_puts(b, "ct_ineg(");
			put_expr(g, b, a[0], t);
			ct_buf_putc(b, ')');
		} else {
			ct_buf_puts(b, "(-");
			put_expr(g, b, a[0], t);
			ct_buf_putc(b, ')');
		}
		return;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		static const char *const iops[] = {[EX_ADD] = "ct_iadd(", [EX_SUB] = "ct_isub(",
						   [EX_MUL] = "ct_imul(", [EX_DIV] = "ct_idiv("};
		static const char *const fops[] = {[EX_ADD] = " + ", [EX_SUB] = " - ", [EX_MUL] = " * ",
						   [EX_DIV] = " / "};
		if (is_int(t)) {
			ct_buf_puts(b, iops[e->kind]);
			put_expr(g, b, a[0], t);
			ct_buf_puts(b, ", ");
			put_expr(g, b, a[1], t);
			ct_buf_putc(b, ')');
		} else {
			ct_buf_putc(b, '(');
			put_expr(g, b, a[0], t);
			ct_buf_puts(b, fops[e->kind]);
			put_expr(g, b, a[1], t);
			ct_buf_putc(b, ')');
		}
		return;
	}
	case EX_CALL:
		switch (e->fn) {
		case FN_MIN:
		case FN_MAX:
			ct_buf_printf(b, "ct_%s_%s(", e->fn == FN_MIN ? "min" : "max", ir_dtype_c(t));
			put_expr(g, b, a[0], t);
			ct_buf_puts(b, ", ");
			put_expr(g, b, a[1], t);
			ct_buf_putc(b, ')');
			return;
		case FN_ABS:
			if (is_int(t))
				ct_buf_puts(b, "ct_iabs(");
			else
				ct_buf_printf(b, "fabs%s(", fn_suffix(t));
			put_expr(g, b, a[0], t);
			ct_buf_putc(b, ')');
			return;
		case FN_SQRT:
		case FN_EXP:
			/* integer sqrt/exp go through double, then truncate */
			if (is_int(t)) {
				ct_buf_printf(b, "ct_itrunc(%s((double)", e->fn == FN_SQRT ? "sqrt" : "exp");
				put_expr(g, b, a[0], t);
				ct_buf_puts(b, "))");
			} else {
				ct_buf_printf(b, "%s%s(", e->fn == FN_SQRT ? "sqrt" : "exp", fn_suffix(t));
				put_expr(g, b, a[0], t);
				ct_buf_putc(b, ')');
			}
			return;
		case FN_FMA:
			if (is_int(t)) {
				ct_buf_puts(b, "ct_iadd(ct_imul(");
				put_expr(g, b, a[0], t);
				ct_buf_puts(b, ", ");
				put_expr(g, b, a[1], t);
				ct_buf_puts(b, "), ");
				put_expr(g, b, a[2], t);
				ct_buf_putc(b, ')');
			} else {
				ct_buf_printf(b, "fma%s(", fn_suffix(t));
				for (int i = 0; i < 3; i++) {
					if (i)
						ct_buf_puts(b, ", ");
					put_expr(g, b, a[i], t);
				}
				ct_buf_putc(b, ')');
			}
			return;
		case FN_SELECT:
			ct_buf_putc(b, '(');
			put_expr(g, b, a[0], a[0]->type);
			ct_buf_puts(b, " ? ");
			put_expr(g, b, a[1], t);
			ct_buf_puts(b, " : ");
			put_expr(g, b, a[2], t);
			ct_buf_putc(b, ')');
			return;
		}
		return;
	case EX_CMP: {
		static const char *const ops[] = {[CMP_LT] = " < ", [CMP_LE] = " <= ", [CMP_GT] = " > ",
						  [CMP_GE] = " >= ", [CMP_EQ] = " == ", [CMP_NE] = " != "};
		/* compare in the wider operand type, as the interpreter does */
		ct_dtype ct = a[0]->type > a[1]->type ? a[0]->type : a[1]->type;
		if (a[0]->untyped && !a[1]->untyped)
			ct = a[1]->type;
		else if (a[1]->untyped && !a[0]->untyped)
			ct = a[0]->type;
		ct_buf_putc(b, '(');
		put_expr(g, b, a[0], ct);
		ct_buf_puts(b, ops[e->cmp]);
		put_expr(g, b, a[1], ct);
		ct_buf_putc(b, ')');
		return;
	}
	case EX_AND:
	case EX_OR:
		ct_buf_putc(b, '(');
		put_expr(g, b, a[0], a[0]->type);
		ct_buf_puts(b, e->kind == EX_AND ? " && " : " || ");
		put_expr(g, b, a[1], a[1]->type);
		ct_buf_putc(b, ')');
		return;
	case EX_NOT:
		ct_buf_puts(b, "(!");
		put_expr(g, b, a[0], a[0]->type);
		ct_buf_putc(b, ')');
		return;
	}
}

/* An index expression (indices, params and literals only: affine and
 * bounded by the checked extents, so plain int64 arithmetic is safe). */
static void put_plain(cg *g, ct_buf *b, const ir_expr *e)
{
	const ir_expr *const *a = (const ir_expr *const *)e->args;
	switch (e->kind) {
	case EX_NUM:
		ct_buf_printf(b, e->inum < 0 ? "(%lld)" : "%lld", (long long)(e->is_float ? (int64_t)e->num : e->inum));
		return;
	case EX_NEG:
		ct_buf_puts(b, "(-");
		put_plain(g, b, a[0]);
		ct_buf_putc(b, ')');
		return;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL: {
		static const char *const ops[] = {[EX_ADD] = " + ", [EX_SUB] = " - ", [EX_MUL] = " * "};
		ct_buf_putc(b, '(');
		put_plain(g, b, a[0]);
		ct_buf_puts(b, ops[e->kind]);
		put_plain(g, b, a[1]);
		ct_buf_putc(b, ')');
		return;
	}
	default: put_op(g, b, e); return;
	}
}

/* Expression e converted to type want (integers compute in int64). */
static void put_expr(cg *g, ct_buf *b, const ir_expr *e, ct_dtype want)
{
	ct_dtype have = e->type;
	if (e->untyped && e->kind != EX_NUM) {
		if (!is_int(want))
			ct_buf_printf(b, "(%s)", ir_dtype_c(want));
		put_plain(g, b, e);
		return;
	}
	bool same = have == want || (is_int(have) && is_int(want)) || e->kind == EX_NUM ||
		    e->kind == EX_CMP || e->kind == EX_AND || e->kind == EX_OR || e->kind == EX_NOT;
	if (e->kind == EX_NUM) {
		put_num(b, e, want);
		return;
	}
	if ((e->kind == EX_INDEX || e->kind == EX_PARAM) && !is_int(want)) {
		ct_buf_printf(b, "(%s)", ir_dtype_c(want));
		put_op(g, b, e);
		return;
	}
	if (same) {
		put_op(g, b, e);
		return;
	}
	ct_buf_printf(b, "(%s)", is_int(want) ? "int64_t" : ir_dtype_c(want));
	if (is_int(want) && !is_int(have)) {
		/* float -> int without UB on out-of-range values */
		ct_buf_puts(b, "ct_itrunc(");
		put_op(g, b, e);
		ct_buf_putc(b, ')');
		return;
	}
	put_op(g, b, e);
}

/* ------------------------------------------------------------ statements */

static void gen_nodes(cg *g, lt_node *const *v, int n);

static void gen_stmt(cg *g, const ir_node *s)
{
	const ir_expr *lhs = s->lhs;
	ct_dtype t = g->k->arrays[lhs->id].type;
	ct_buf l, r;
	ct_buf_init(&l);
	ct_buf_init(&r);
	put_access(g, &l, lhs->id, lhs->sub);
	const char *arr = g->aname[lhs->id];
	if (is_int(t) && s->op != AS_SET) {
		static const char *const iops[] = {[AS_ADD] = "ct_iadd", [AS_SUB] = "ct_isub", [AS_MUL] = "ct_imul"};
		put_expr(g, &r, s->rhs, CT_I64);
		kg_stmt(g->kg, KG_OTHER, arr, arr, "%s = (%s)%s(%s, %s);", l.s, ir_dtype_c(t), iops[s->op], l.s,
			r.s);
	} else {
		static const char *const ops[] = {[AS_SET] = "=", [AS_ADD] = "+=", [AS_SUB] = "-=", [AS_MUL] = "*="};
		put_expr(g, &r, s->rhs, is_int(t) ? CT_I64 : t);
		if (is_int(t))
			kg_stmt(g->kg, KG_OTHER, arr, NULL, "%s = (%s)%s;", l.s, ir_dtype_c(t), r.s);
		else
			kg_stmt(g->kg, KG_OTHER, arr, NULL, "%s %s %s;", l.s, ops[s->op], r.s);
	}
	if (l.failed || r.failed)
		g->failed = true;
	ct_buf_free(&l);
	ct_buf_free(&r);
}

static void gen_let(cg *g, const ir_node *s)
{
	const ir_let *let = &g->k->lets[s->let_id];
	ct_dtype t = let->type;
	ct_buf r;
	ct_buf_init(&r);
	put_expr(g, &r, s->rhs, is_int(t) ? CT_I64 : t);
	char ctype[32];
	snprintf(ctype, sizeof ctype, "const %s", is_int(t) ? "int64_t" : ir_dtype_c(t));
	char *name = c_name(g, let->name);
	if (name && r.s)
		g->lname[s->let_id] = kg_var_declare(g->kg, name, ctype, KG_PRIVATE, r.s);
	else
		g->failed = true;
	free(name);
	ct_buf_free(&r);
}

static void gen_if(cg *g, const lt_node *x)
{
	ct_buf c;
	ct_buf_init(&c);
	put_expr(g, &c, x->stmt->cond, CT_I64);
	kg_block_open(g->kg, "if %s", c.s ? c.s : "(0)");
	gen_nodes(g, x->kids, x->nkids);
	if (x->nels) {
		kg_block_next(g->kg, "else");
		gen_nodes(g, x->els, x->nels);
	}
	kg_block_close(g->kg);
	if (c.failed)
		g->failed = true;
	ct_buf_free(&c);
}

static void gen_loop(cg *g, const lt_node *x)
{
	ct_buf lo, hi;
	ct_buf_init(&lo);
	ct_buf_init(&hi);
	put_bx(g, &lo, x->lo);
	put_bx(g, &hi, x->hi);
	const char *v = g->iname[x->index];
	if (x->tail)
		kg_comment(g->kg, "tail of %s", v);
	if (x->step == 1)
		kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s++)", v, lo.s, v, hi.s, v);
	else
		kg_block_open(g->kg, "for (int64_t %s = %s; %s < %s; %s += %lld)", v, lo.s, v, hi.s, v,
			      (long long)x->step);
	gen_nodes(g, x->kids, x->nkids);
	kg_block_close(g->kg);
	if (lo.failed || hi.failed)
		g->failed = true;
	ct_buf_free(&lo);
	ct_buf_free(&hi);
}

static void gen_nodes(cg *g, lt_node *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const lt_node *x = v[i];
		switch (x->kind) {
		case LT_LOOP: gen_loop(g, x); break;
		case LT_STMT: gen_stmt(g, x->stmt); break;
		case LT_LET: gen_let(g, x->stmt); break;
		case LT_IF: gen_if(g, x); break;
		case LT_CACHE: gen_nodes(g, x->kids, x->nkids); break;
		}
	}
}

/* ------------------------------------------------------------ function */

static const char *const helpers[] = {
	"static inline int64_t ct_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }",
	"static inline int64_t ct_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }",
	"static inline int64_t ct_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }",
	"static inline int64_t ct_ineg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }",
	"static inline int64_t ct_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : (b == -1 ? ct_ineg(a) : a / b); }",
	"static inline int64_t ct_iabs(int64_t a) { return a < 0 ? ct_ineg(a) : a; }",
	"static inline int64_t ct_itrunc(double x) { return x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x; }",
	"static inline int64_t ct_min64(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max64(int64_t a, int64_t b) { return a > b ? a : b; }",
	"static inline float ct_min_float(float a, float b) { return a < b ? a : b; }",
	"static inline float ct_max_float(float a, float b) { return a > b ? a : b; }",
	"static inline double ct_min_double(double a, double b) { return a < b ? a : b; }",
	"static inline double ct_max_double(double a, double b) { return a > b ? a : b; }",
	"static inline int64_t ct_min_int32_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max_int32_t(int64_t a, int64_t b) { return a > b ? a : b; }",
	"static inline int64_t ct_min_int64_t(int64_t a, int64_t b) { return a < b ? a : b; }",
	"static inline int64_t ct_max_int64_t(int64_t a, int64_t b) { return a > b ? a : b; }",
};

/* A comment describing array a: type, shape, layout, role. */
static void describe_array(cg *g, ct_buf *b, int a)
{
	const ir_array *arr = &g->k->arrays[a];
	ct_buf_printf(b, "%s: %s[", arr->name, ct_dtype_name(arr->type));
	for (int d = 0; d < arr->rank; d++) {
		if (d)
			ct_buf_puts(b, ", ");
		put_aff(g, b, arr->ext[d]);
	}
	bool row = true, col = true;
	for (int d = 0; d < arr->rank; d++) {
		row = row && arr->order[d] == d;
		col = col && arr->order[d] == arr->rank - 1 - d;
	}
	if (row)
		ct_buf_puts(b, "], row-major");
	else if (col)
		ct_buf_puts(b, "], column-major");
	else {
		ct_buf_puts(b, "], dimension order (");
		for (int d = 0; d < arr->rank; d++)
			ct_buf_printf(b, "%s%d", d ? ", " : "", arr->order[d]);
		ct_buf_putc(b, ')');
	}
	ct_buf_printf(b, ", %s", ct_role_name(arr->role));
}

/* The parameter list of the kernel function. */
static void put_params(cg *g, ct_buf *b, bool comments)
{
	const ct_kernel *k = g->k;
	bool first = true;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		if (arr->role == CT_TEMP)
			continue;
		bool ro = arr->role == CT_INPUT || arr->role == CT_CONST;
		ct_buf_printf(b, "%s%s%s%s *restrict %s", first ? "" : ",", comments ? "\n\t" : (first ? "" : " "),
			      ro ? "const " : "", ir_dtype_c(arr->type), g->aname[a]);
		if (comments) {
			ct_buf_puts(b, " /* ");
			describe_array(g, b, a);
			ct_buf_puts(b, " */");
		}
		first = false;
	}
	for (int p = 0; p < k->nparams; p++) {
		if (!k->params[p].runtime)
			continue;
		ct_buf_printf(b, "%s%sint64_t %s", first ? "" : ",", comments ? "\n\t" : (first ? "" : " "),
			      g->pname[p]);
		if (comments)
			ct_buf_puts(b, " /* runtime size */");
		first = false;
	}
	if (first)
		ct_buf_puts(b, "void");
}

/* Declare the temps: small constant-sized ones on the stack, the rest on the heap. */
static void gen_temps(cg *g, bool *heap)
{
	const ct_kernel *k = g->k;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		heap[a] = false;
		if (arr->role != CT_TEMP)
			continue;
		const bx *elems = layout_product(g, a, 0);
		if (!elems) {
			g->failed = true;
			return;
		}
		int64_t count = 0;
		bool constant = bx_is_const(elems, &count);
		ct_buf n;
		ct_buf_init(&n);
		put_bx(g, &n, elems);
		const char *ty = ir_dtype_c(arr->type);
		if (constant && count <= CG_STACK_TEMP_BYTES / (int64_t)ct_dtype_size(arr->type)) {
			char decl[64];
			snprintf(decl, sizeof decl, "_Alignas(64) %s", ty);
			char name[300];
			snprintf(name, sizeof name, "%s[%lld]", g->aname[a], (long long)(count > 0 ? count : 1));
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s %s = {0}; /* temp %s */", decl, name, arr->name);
		} else {
			heap[a] = true;
			/* 64-byte aligned (a line, a vector), zeroed as the interpreter's temps */
			kg_stmt(g->kg, KG_OTHER, NULL, NULL,
				"const size_t %s_bytes = ((size_t)(%s) * sizeof(%s) + 63) / 64 * 64; /* temp %s */",
				g->aname[a], n.s ? n.s : "1", ty, arr->name);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s *%s = aligned_alloc(64, %s_bytes ? %s_bytes : 64);", ty,
				g->aname[a], g->aname[a], g->aname[a]);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "if (!%s)", g->aname[a]);
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "\treturn; /* out of memory: the outputs stay untouched */");
			kg_stmt(g->kg, KG_OTHER, NULL, NULL, "memset(%s, 0, %s_bytes);", g->aname[a], g->aname[a]);
		}
		if (n.failed)
			g->failed = true;
		ct_buf_free(&n);
	}
}

void gen_symbol_names(const ct_kernel *k, char *fn, char *entry, size_t cap)
{
	snprintf(fn, cap, "cachet_%s", k->name);
	snprintf(entry, cap, "cachet_%s_entry", k->name);
}

static bool cg_init(cg *g, ct_looptree *t)
{
	memset(g, 0, sizeof *g);
	g->t = t;
	g->k = t->k;
	const ct_kernel *k = t->k;
	ct_arena_init(&g->arena, k->ctx);
	g->pval = calloc((size_t)k->nparams + 1, sizeof *g->pval);
	g->aname = calloc((size_t)k->narrays + 1, sizeof *g->aname);
	g->iname = calloc((size_t)k->nindices + 1, sizeof *g->iname);
	g->pname = calloc((size_t)k->nparams + 1, sizeof *g->pname);
	g->lname = calloc((size_t)k->nlets + 1, sizeof *g->lname);
	if (!g->pval || !g->aname || !g->iname || !g->pname || !g->lname)
		return false;
	ir_param_values(k, g->pval);
	for (int i = 0; i < k->narrays; i++)
		g->aname[i] = c_name(g, k->arrays[i].name);
	for (int i = 0; i < k->nindices; i++)
		g->iname[i] = c_name(g, k->indices[i].name);
	for (int i = 0; i < k->nparams; i++)
		g->pname[i] = c_name(g, k->params[i].name);
	return !g->failed && make_strides(g);
}

static void cg_free(cg *g)
{
	const ct_kernel *k = g->k;
	free(g->pval);
	free_names(g->aname, k->narrays);
	free_names(g->iname, k->nindices);
	free_names(g->pname, k->nparams);
	free(g->lname);
	free_names(g->stride, k->narrays * IR_MAX_RANK);
	kg_free(g->kg);
	if (g->arena.ctx)
		ct_arena_free(&g->arena);
}

/* The uniform entry: unpack args[] and params[] and call the kernel. */
static void gen_entry(cg *g, const char *fn, const char *entry)
{
	const ct_kernel *k = g->k;
	char proto[400];
	snprintf(proto, sizeof proto, "void %s(void *const *args, const int64_t *params)", entry);
	kg_func_declare(g->kg, entry, KG_FUNC_KERNEL, proto, NULL, NULL);
	kg_func_begin(g->kg, entry);
	ct_buf call;
	ct_buf_init(&call);
	ct_buf_printf(&call, "%s(", fn);
	bool first = true;
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *arr = &k->arrays[a];
		if (arr->role == CT_TEMP)
			continue;
		bool ro = arr->role == CT_INPUT || arr->role == CT_CONST;
		ct_buf_printf(&call, "%s(%s%s *)args[%d]", first ? "" : ", ", ro ? "const " : "", ir_dtype_c(arr->type), a);
		first = false;
	}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime) {
			ct_buf_printf(&call, "%sparams[%d]", first ? "" : ", ", p);
			first = false;
		}
	ct_buf_puts(&call, ");");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "(void)args;");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "(void)params;");
	kg_stmt(g->kg, KG_OTHER, NULL, NULL, "%s", call.s ? call.s : "");
	if (call.failed)
		g->failed = true;
	ct_buf_free(&call);
	kg_func_end(g->kg);
}

char *gen_c(ct_looptree *t, size_t *len)
{
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	cg g;
	char *result = NULL;
	memset(&g, 0, sizeof g);
	g.k = k;
	bool *heap = calloc((size_t)k->narrays + 1, sizeof *heap);
	if (!heap || !cg_init(&g, t)) {
		cg_free(&g);
		free(heap);
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating C");
		return NULL;
	}
	g.kg = kg_new(ctx, 0);
	if (!g.kg)
		goto out;
	char fn[300], entry[300];
	gen_symbol_names(k, fn, entry, sizeof fn);
	kg_preamble(g.kg, "/* %s: generated by cachet %s from kernel '%s'. */", fn, CACHET_VERSION, k->name);
	kg_preamble(g.kg, "#include <math.h>");
	kg_preamble(g.kg, "#include <stdint.h>");
	kg_preamble(g.kg, "#include <stdlib.h>");
	kg_preamble(g.kg, "#include <string.h>");
	for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++)
		kg_preamble(g.kg, "%s", helpers[i]);

	ct_buf proto;
	ct_buf_init(&proto);
	ct_buf_printf(&proto, "void %s(", fn);
	put_params(&g, &proto, false);
	ct_buf_putc(&proto, ')');
	kg_func_declare(g.kg, fn, KG_FUNC_KERNEL, proto.s ? proto.s : "void f(void)", NULL, NULL);
	ct_buf_free(&proto);
	kg_func_begin(g.kg, fn);
	gen_temps(&g, heap);
	gen_nodes(&g, t->roots, t->nroots);
	for (int a = 0; a < k->narrays; a++)
		if (heap[a])
			kg_stmt(g.kg, KG_OTHER, NULL, NULL, "free(%s);", g.aname[a]);
	kg_func_end(g.kg);
	gen_entry(&g, fn, entry);

	size_t n = 0;
	char *text = kg_take(g.kg, &n);
	if (text && !g.failed) {
		result = malloc(n + 1);
		if (result) {
			memcpy(result, text, n);
			result[n] = 0;
			if (len)
				*len = n;
		}
	}
	if (text)
		ct_free(ctx, text);
out:
	if (!result && ct_ctx_last_status(ctx) == CT_OK)
		ct_error(ctx, CT_ERR_NOMEM, "out of memory generating C");
	cg_free(&g);
	free(heap);
	return result;
}

char *gen_c_prototype(const ct_kernel *k)
{
	cg g;
	memset(&g, 0, sizeof g);
	ct_looptree fake;
	memset(&fake, 0, sizeof fake);
	fake.k = (ct_kernel *)(uintptr_t)k;
	char *r = NULL;
	if (cg_init(&g, &fake)) {
		ct_buf b;
		ct_buf_init(&b);
		char fn[300], entry[300];
		gen_symbol_names(k, fn, entry, sizeof fn);
		ct_buf_printf(&b, "void %s(", fn);
		put_params(&g, &b, true);
		ct_buf_puts(&b, ");\n");
		ct_buf_printf(&b, "/* Uniform entry: args[i] = array i in declaration order (temps NULL),\n"
				  " * params[i] = param i in declaration order. */\n"
				  "void %s(void *const *args, const int64_t *params);\n",
			      entry);
		r = ct_buf_take(&b);
	}
	cg_free(&g);
	return r;
}
