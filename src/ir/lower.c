/* lower.c: print a loop tree as Accera-style pseudo-code or as one JSON object (`cachet lower`). */
#include "ir/looptree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pr {
	ct_buf *b;
	const ct_looptree *t;
	const ct_kernel *k;
} pr;

static const char *index_name(const pr *p, int id)
{
	if (id >= 0 && id < p->k->nindices)
		return p->k->indices[id].name;
	return "?";
}

/* Loop variables whose sum is index id: its chain when id is an original
 * index of a scheduled tree, else id itself. */
static const int *index_chain(const pr *p, int id, int *n)
{
	if (id >= 0 && id < p->t->nindices && p->t->chain && p->t->chain[id] &&
	    p->t->chain_len[id] > 0) {
		*n = p->t->chain_len[id];
		return p->t->chain[id];
	}
	*n = 1;
	return NULL;
}

/* One term coef*name of a sum; first says whether it opens the sum. */
static void put_term(ct_buf *b, int64_t coef, const char *name, bool first)
{
	uint64_t mag = coef < 0 ? (uint64_t)0 - (uint64_t)coef : (uint64_t)coef;
	if (coef < 0)
		ct_buf_putc(b, '-');
	else if (!first)
		ct_buf_putc(b, '+');
	if (mag != 1)
		ct_buf_printf(b, "%llu*", (unsigned long long)mag);
	ct_buf_puts(b, name);
}

/* An affine subscript, compactly: index terms (each as its chain), params,
 * then the constant: `i+ii`, `x-1`, `2*i+2*ii+N-1`. */
static void put_aff(const pr *p, aff x)
{
	bool first = true;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < x.n; i++) {
			const aff_term *t = &x.t[i];
			if ((t->kind == AFF_INDEX) != (pass == 0))
				continue;
			if (t->kind == AFF_PARAM) {
				const char *nm = t->id >= 0 && t->id < p->k->nparams
				                     ? p->k->params[t->id].name
				                     : "?";
				put_term(p->b, t->coef, nm, first);
				first = false;
				continue;
			}
			int n;
			const int *c = index_chain(p, t->id, &n);
			for (int j = 0; j < n; j++) {
				put_term(p->b, t->coef, index_name(p, c ? c[j] : t->id), first);
				first = false;
			}
		}
	}
	if (first)
		ct_buf_printf(p->b, "%lld", (long long)x.c);
	else if (x.c > 0)
		ct_buf_printf(p->b, "+%lld", (long long)x.c);
	else if (x.c < 0)
		ct_buf_printf(p->b, "-%llu", (unsigned long long)((uint64_t)0 - (uint64_t)x.c));
}

/* Shortest text that reads back as the same double, always with a '.' or
 * an exponent so that it looks like a float literal. */
static void put_double(ct_buf *b, double v)
{
	char s[64];
	if (isnan(v) || isinf(v)) {
		ct_buf_puts(b, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	ct_buf_puts(b, s);
	if (!strpbrk(s, ".eE"))
		ct_buf_puts(b, ".0");
}

/* Precedences: 1 ||, 2 &&, 3 comparisons, 4 + -, 5 * /, 6 unary, 7 atoms. */
static int expr_prec(const pr *p, const ir_expr *e)
{
	switch (e->kind) {
	case EX_OR:
		return 1;
	case EX_AND:
		return 2;
	case EX_CMP:
		return 3;
	case EX_ADD:
	case EX_SUB:
		return 4;
	case EX_MUL:
	case EX_DIV:
		return 5;
	case EX_NEG:
	case EX_NOT:
		return 6;
	case EX_NUM:
		return (e->is_float ? e->num < 0 : e->inum < 0) ? 6 : 7;
	case EX_INDEX: {
		int n;
		index_chain(p, e->id, &n);
		return n > 1 ? 4 : 7;
	}
	default:
		return 7;
	}
}

static void put_expr(const pr *p, const ir_expr *e, int need);

static void put_access(const pr *p, const ir_expr *e)
{
	const ir_array *a = e->id >= 0 && e->id < p->k->narrays ? &p->k->arrays[e->id] : NULL;
	ct_buf_puts(p->b, a ? a->name : "?");
	ct_buf_putc(p->b, '[');
	for (int d = 0; a && d < a->rank; d++) {
		if (d)
			ct_buf_puts(p->b, ", ");
		if (e->sub)
			put_aff(p, e->sub[d]);
		else if (e->sub_expr)
			put_expr(p, e->sub_expr[d], 0);
	}
	ct_buf_putc(p->b, ']');
}

static void put_expr(const pr *p, const ir_expr *e, int need)
{
	static const char *const fns[] = {
	    [FN_MIN] = "min", [FN_MAX] = "max", [FN_ABS] = "abs",      [FN_SQRT] = "sqrt",
	    [FN_EXP] = "exp", [FN_FMA] = "fma", [FN_SELECT] = "select"};
	static const char *const cmps[] = {[CMP_LT] = " < ",  [CMP_LE] = " <= ", [CMP_GT] = " > ",
	                                   [CMP_GE] = " >= ", [CMP_EQ] = " == ", [CMP_NE] = " != "};
	ct_buf *b = p->b;
	if (!e) {
		ct_buf_puts(b, "?");
		return;
	}
	int prec = expr_prec(p, e);
	bool paren = prec < need;
	if (paren)
		ct_buf_putc(b, '(');
	switch (e->kind) {
	case EX_NUM:
		if (e->is_float)
			put_double(b, e->num);
		else
			ct_buf_printf(b, "%lld", (long long)e->inum);
		break;
	case EX_INDEX: {
		int n;
		const int *c = index_chain(p, e->id, &n);
		for (int j = 0; j < n; j++) {
			if (j)
				ct_buf_putc(b, '+');
			ct_buf_puts(b, index_name(p, c ? c[j] : e->id));
		}
		break;
	}
	case EX_PARAM:
		ct_buf_puts(b,
		            e->id >= 0 && e->id < p->k->nparams ? p->k->params[e->id].name : "?");
		break;
	case EX_LET:
		ct_buf_puts(b, e->id >= 0 && e->id < p->k->nlets ? p->k->lets[e->id].name : "?");
		break;
	case EX_ACCESS:
		put_access(p, e);
		break;
	case EX_NEG:
	case EX_NOT:
		ct_buf_putc(b, e->kind == EX_NEG ? '-' : '!');
		put_expr(p, e->nargs > 0 ? e->args[0] : NULL, 6);
		break;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV:
	case EX_AND:
	case EX_OR:
	case EX_CMP: {
		const char *op = e->kind == EX_ADD   ? " + "
		                 : e->kind == EX_SUB ? " - "
		                 : e->kind == EX_MUL ? " * "
		                 : e->kind == EX_DIV ? " / "
		                 : e->kind == EX_AND ? " && "
		                 : e->kind == EX_OR  ? " || "
		                                     : cmps[e->cmp];
		/* comparisons do not chain: both sides bind tighter */
		put_expr(p, e->nargs > 0 ? e->args[0] : NULL, e->kind == EX_CMP ? prec + 1 : prec);
		ct_buf_puts(b, op);
		put_expr(p, e->nargs > 1 ? e->args[1] : NULL, prec + 1);
		break;
	}
	case EX_CALL:
		ct_buf_puts(b, fns[e->fn]);
		ct_buf_putc(b, '(');
		for (int i = 0; i < e->nargs; i++) {
			if (i)
				ct_buf_puts(b, ", ");
			put_expr(p, e->args[i], 0);
		}
		ct_buf_putc(b, ')');
		break;
	}
	if (paren)
		ct_buf_putc(b, ')');
}

/* The text of a statement or let: `C[i+ii, j] += A[i+ii, k] * B[k, j]`. */
static void put_stmt(const pr *p, const ir_node *s)
{
	static const char *const ops[] = {
	    [AS_SET] = " = ", [AS_ADD] = " += ", [AS_SUB] = " -= ", [AS_MUL] = " *= "};
	if (s->kind == ND_LET) {
		ct_buf_puts(p->b, "let ");
		ct_buf_puts(p->b, s->let_id >= 0 && s->let_id < p->k->nlets
		                      ? p->k->lets[s->let_id].name
		                      : "?");
		ct_buf_puts(p->b, " = ");
	} else {
		put_expr(p, s->lhs, 0);
		ct_buf_puts(p->b, ops[s->op]);
	}
	put_expr(p, s->rhs, 0);
}

/* ------------------------------------------------------------ pseudo-code */

static void indent(ct_buf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		ct_buf_puts(b, "    ");
}

static void put_text_nodes(const pr *p, lt_node *const *v, int n, int depth);

static void put_text_node(const pr *p, const lt_node *x, int depth)
{
	ct_buf *b = p->b;
	indent(b, depth);
	switch (x->kind) {
	case LT_LOOP:
		ct_buf_printf(b, "for %s in range(", index_name(p, x->index));
		bx_print(b, p->k, x->lo);
		ct_buf_puts(b, ", ");
		bx_print(b, p->k, x->hi);
		if (x->step != 1)
			ct_buf_printf(b, ", step=%lld", (long long)x->step);
		ct_buf_puts(b, x->tail ? "):  # tail\n" : "):\n");
		put_text_nodes(p, x->kids, x->nkids, depth + 1);
		break;
	case LT_STMT:
	case LT_LET:
		put_stmt(p, x->stmt);
		ct_buf_putc(b, '\n');
		break;
	case LT_IF:
		ct_buf_puts(b, "if ");
		put_expr(p, x->stmt->cond, 0);
		ct_buf_puts(b, ":\n");
		put_text_nodes(p, x->kids, x->nkids, depth + 1);
		if (x->nels > 0) {
			indent(b, depth);
			ct_buf_puts(b, "else:\n");
			put_text_nodes(p, x->els, x->nels, depth + 1);
		}
		break;
	case LT_CACHE:
		ct_buf_puts(b, "# cache region\n");
		put_text_nodes(p, x->kids, x->nkids, depth);
		break;
	}
}

static void put_text_nodes(const pr *p, lt_node *const *v, int n, int depth)
{
	if (n == 0) {
		indent(p->b, depth);
		ct_buf_puts(p->b, "pass\n");
	}
	for (int i = 0; i < n; i++)
		put_text_node(p, v[i], depth);
}

static void put_text(const pr *p)
{
	const ct_kernel *k = p->k;
	ct_buf_printf(p->b, "# kernel %s", k->name ? k->name : "?");
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *pa = &k->params[i];
		ct_buf_puts(p->b, i ? ", " : ": ");
		if (pa->runtime)
			ct_buf_printf(p->b, "%s (runtime)", pa->name);
		else
			ct_buf_printf(p->b, "%s=%lld", pa->name, (long long)pa->value);
	}
	ct_buf_putc(p->b, '\n');
	for (int i = 0; i < p->t->nroots; i++)
		put_text_node(p, p->t->roots[i], 0);
}

/* ------------------------------------------------------------ JSON */

/* Append the text that fn(p, arg) prints, as a JSON string. */
static void json_text(const pr *p, void (*fn)(const pr *, const void *), const void *arg)
{
	ct_buf tmp;
	ct_buf_init(&tmp);
	pr q = {&tmp, p->t, p->k};
	fn(&q, arg);
	if (tmp.failed)
		p->b->failed = true;
	ct_buf_json_str(p->b, tmp.s ? tmp.s : "");
	ct_buf_free(&tmp);
}

static void text_bx(const pr *p, const void *x)
{
	bx_print(p->b, p->k, x);
}
static void text_stmt(const pr *p, const void *s)
{
	put_stmt(p, s);
}
static void text_expr(const pr *p, const void *e)
{
	put_expr(p, e, 0);
}

static void put_json_nodes(const pr *p, lt_node *const *v, int n);

static void put_json_node(const pr *p, const lt_node *x)
{
	ct_buf *b = p->b;
	switch (x->kind) {
	case LT_LOOP:
		ct_buf_puts(b, "{\"loop\": ");
		ct_buf_json_str(b, index_name(p, x->index));
		ct_buf_puts(b, ", \"lo\": ");
		json_text(p, text_bx, x->lo);
		ct_buf_puts(b, ", \"hi\": ");
		json_text(p, text_bx, x->hi);
		ct_buf_printf(b, ", \"step\": %lld, \"tail\": %s, \"body\": ", (long long)x->step,
		              x->tail ? "true" : "false");
		put_json_nodes(p, x->kids, x->nkids);
		ct_buf_putc(b, '}');
		break;
	case LT_STMT:
		ct_buf_printf(b, "{\"stmt\": %d, \"text\": ", x->stmt->stmt_id);
		json_text(p, text_stmt, x->stmt);
		ct_buf_putc(b, '}');
		break;
	case LT_LET:
		ct_buf_puts(b, "{\"let\": ");
		ct_buf_json_str(b, x->stmt->let_id >= 0 && x->stmt->let_id < p->k->nlets
		                       ? p->k->lets[x->stmt->let_id].name
		                       : "?");
		ct_buf_puts(b, ", \"text\": ");
		json_text(p, text_stmt, x->stmt);
		ct_buf_putc(b, '}');
		break;
	case LT_IF:
		ct_buf_puts(b, "{\"if\": ");
		json_text(p, text_expr, x->stmt->cond);
		ct_buf_puts(b, ", \"then\": ");
		put_json_nodes(p, x->kids, x->nkids);
		ct_buf_puts(b, ", \"else\": ");
		put_json_nodes(p, x->els, x->nels);
		ct_buf_putc(b, '}');
		break;
	case LT_CACHE:
		ct_buf_puts(b, "{\"cache\": null, \"body\": ");
		put_json_nodes(p, x->kids, x->nkids);
		ct_buf_putc(b, '}');
		break;
	}
}

static void put_json_nodes(const pr *p, lt_node *const *v, int n)
{
	ct_buf_putc(p->b, '[');
	for (int i = 0; i < n; i++) {
		if (i)
			ct_buf_puts(p->b, ", ");
		put_json_node(p, v[i]);
	}
	ct_buf_putc(p->b, ']');
}

static void put_json(const pr *p)
{
	const ct_kernel *k = p->k;
	ct_buf *b = p->b;
	ct_buf_puts(b, "{\"kernel\": ");
	ct_buf_json_str(b, k->name ? k->name : "");
	ct_buf_printf(b, ", \"target\": \"%s\", \"scheduled\": %s, \"params\": {",
	              k->has_plan && k->target == TARGET_OPENCL ? "opencl" : "host",
	              p->t->scheduled ? "true" : "false");
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *pa = &k->params[i];
		if (i)
			ct_buf_puts(b, ", ");
		ct_buf_json_str(b, pa->name);
		if (pa->has_value)
			ct_buf_printf(b, ": %lld", (long long)pa->value);
		else
			ct_buf_puts(b, ": null");
	}
	ct_buf_puts(b, "}, \"loops\": ");
	put_json_nodes(p, p->t->roots, p->t->nroots);
	ct_buf_puts(b, ", \"caches\": []}\n");
}

char *ct_looptree_print(ct_looptree *t, int json)
{
	if (!t)
		return NULL;
	ct_buf b;
	ct_buf_init(&b);
	pr p = {&b, t, t->k};
	if (json)
		put_json(&p);
	else
		put_text(&p);
	char *s = ct_buf_take(&b);
	if (!s)
		ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory printing the loop tree");
	return s;
}
