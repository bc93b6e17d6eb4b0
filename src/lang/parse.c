/* parse.c: recursive-descent parser from .cachet tokens to the kernel IR, resolving names: the
 * shared helpers, names, expressions, statements and the file; declarations, schedule and plan
 * have their own files (parse_decl.c, parse_sched.c, parse_plan.c). */
#include "lang/parse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ------------------------------------------------------------ helpers */

void *lp_alloc(parser *p, size_t size)
{
	void *q = ct_arena_alloc(p->a, size);
	if (!q)
		longjmp(p->oom, 1);
	return q;
}

/* Ensure a vector v of *cap elements (elt bytes) can hold need; arena-backed. */
void *lp_grow(parser *p, void *v, int *cap, int need, size_t elt)
{
	if (need <= *cap)
		return v;
	int n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *nv = lp_alloc(p, (size_t)n * elt);
	if (*cap)
		memcpy(nv, v, (size_t)*cap * elt);
	*cap = n;
	return nv;
}

void lp_err(parser *p, ir_pos at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_diag_vadd(p->ctx, at.line, at.col, fmt, ap);
	va_end(ap);
	p->nerr++;
}

/* A short description of a token for "found ..." messages. */
void lp_tok_desc(const tok *t, char *buf, size_t n)
{
	if (t->kind == T_IDENT)
		snprintf(buf, n, "'%.40s'", t->s);
	else
		snprintf(buf, n, "%s", lex_kind_name(t->kind));
}

bool lp_expect(parser *p, tok_kind k)
{
	if (at(p, k)) {
		next(p);
		return true;
	}
	char found[64];
	lp_tok_desc(cur(p), found, sizeof found);
	lp_err(p, tpos(cur(p)), "expected %s, found %s", lex_kind_name(k), found);
	return false;
}

/* Expect a name; returns it (NULL after reporting an error). */
const char *lp_expect_ident(parser *p, const char *what, ir_pos *pos)
{
	tok *t = cur(p);
	*pos = tpos(t);
	if (t->kind == T_IDENT) {
		next(p);
		return t->s;
	}
	if (t->kind >= T_KERNEL && t->kind <= T_PLAN)
		lp_err(p, *pos, "%s is a keyword and cannot be used as %s", lex_kind_name(t->kind),
		     what);
	else {
		char found[64];
		lp_tok_desc(t, found, sizeof found);
		lp_err(p, *pos, "expected %s, found %s", what, found);
	}
	return NULL;
}

/* Skip to the start of the next statement after the one that began at token
 * index start: a token that begins a line, the token after ';', or a '}'
 * that closes the current block. Braced groups on the way are skipped whole
 * so that a bad `for` header does not leak its body. Always moves past
 * start unless at '}' or the end. */
void lp_sync(parser *p, int start)
{
	int bal = 0;
	if (p->i <= start && cur(p)->kind != T_RBRACE && cur(p)->kind != T_EOF) {
		if (cur(p)->kind == T_LBRACE)
			bal++;
		next(p);
	}
	for (;;) {
		tok *t = cur(p);
		if (t->kind == T_EOF)
			return;
		if (bal == 0 && t->nl)
			return;
		if (t->kind == T_LBRACE) {
			bal++;
		} else if (t->kind == T_RBRACE) {
			if (bal == 0)
				return;
			if (--bal == 0) {
				next(p);
				return;
			}
		} else if (t->kind == T_SEMI && bal == 0) {
			next(p);
			return;
		}
		next(p);
	}
}

/* ------------------------------------------------------------ names */

static const char *sym_kind_name(sym_kind k)
{
	switch (k) {
	case SYM_PARAM: return "a param";
	case SYM_ARRAY: return "an array";
	case SYM_INDEX: return "an index";
	case SYM_CACHE: return "a cache";
	case SYM_FAILED:
	case SYM_NONE: break;
	}
	return "a name";
}

static size_t sym_slot(const sym *tab, int cap, const char *name)
{
	size_t mask = (size_t)cap - 1;
	size_t h = (size_t)XXH64(name, strlen(name), 0) & mask;
	while (tab[h].name && strcmp(tab[h].name, name) != 0)
		h = (h + 1) & mask;
	return h;
}

sym *lp_sym_find(parser *p, const char *name)
{
	if (!p->tabcap)
		return NULL;
	sym *s = &p->tab[sym_slot(p->tab, p->tabcap, name)];
	return s->name ? s : NULL;
}

static ir_pos sym_decl_pos(parser *p, const sym *s)
{
	ir_pos none = {0, 0};
	switch (s->kind) {
	case SYM_PARAM: return p->k->params[s->id].pos;
	case SYM_ARRAY: return p->k->arrays[s->id].pos;
	case SYM_INDEX: return p->k->indices[s->id].pos;
	case SYM_CACHE: return p->k->plan[s->id].name_pos;
	case SYM_FAILED: {
		ir_pos d = {s->id, 0};
		return d;
	}
	case SYM_NONE: break;
	}
	return none;
}

static int scope_find(parser *p, const char *name)
{
	for (int i = p->nscope - 1; i >= 0; i--)
		if (strcmp(p->scope[i].name, name) == 0)
			return p->scope[i].id;
	return -1;
}

/* Report a clash when name is already declared (globally or as a let in
 * scope); true when it is free. */
bool lp_name_free(parser *p, const char *name, ir_pos at)
{
	sym *s = lp_sym_find(p, name);
	if (s) {
		ir_pos d = sym_decl_pos(p, s);
		lp_err(p, at, "'%s' is already declared as %s (line %d)", name,
		     sym_kind_name(s->kind), d.line);
		return false;
	}
	int l = scope_find(p, name);
	if (l >= 0) {
		lp_err(p, at, "'%s' is already declared as a let (line %d)", name,
		     p->k->lets[l].pos.line);
		return false;
	}
	return true;
}

void lp_sym_failed(parser *p, const char *name, ir_pos at)
{
	if (!lp_sym_find(p, name) && scope_find(p, name) < 0)
		lp_sym_add(p, name, SYM_FAILED, at.line);
}

bool lp_quiet_failed(parser *p, const sym *s)
{
	if (!s || s->kind != SYM_FAILED)
		return false;
	p->nerr++;
	return true;
}

void lp_sym_add(parser *p, const char *name, sym_kind kind, int id)
{
	if (2 * (p->tabn + 1) > p->tabcap) {
		int ncap = p->tabcap ? p->tabcap * 2 : 64;
		sym *nt = lp_alloc(p, sizeof *nt * (size_t)ncap);
		for (int i = 0; i < p->tabcap; i++)
			if (p->tab[i].name)
				nt[sym_slot(nt, ncap, p->tab[i].name)] = p->tab[i];
		p->tab = nt;
		p->tabcap = ncap;
	}
	sym *s = &p->tab[sym_slot(p->tab, p->tabcap, name)];
	s->name = name;
	s->kind = kind;
	s->id = id;
	p->tabn++;
}

bool lp_too_many(parser *p, int n, ir_pos at, const char *what)
{
	if (n < IR_MAX_NAMES)
		return false;
	lp_err(p, at, "too many %s (at most %d)", what, IR_MAX_NAMES);
	return true;
}

/* ------------------------------------------------------------ expressions */

static ir_expr *mk(parser *p, ir_expr_kind kind, ir_pos pos)
{
	ir_expr *e = lp_alloc(p, sizeof *e);
	e->kind = kind;
	e->pos = pos;
	e->type = CT_F64;
	e->height = 1;
	return e;
}

/* A node with operands; NULL (after an error) when the tree gets too tall. */
static ir_expr *mk_op(parser *p, ir_expr_kind kind, ir_pos pos, int nargs, ir_expr **args)
{
	int h = 0;
	for (int i = 0; i < nargs; i++)
		if (args[i]->height > h)
			h = args[i]->height;
	if (h + 1 > IR_MAX_EXPR_DEPTH) {
		lp_err(p, pos, "expression is too deeply nested (more than %d levels)",
		     IR_MAX_EXPR_DEPTH);
		return NULL;
	}
	ir_expr *e = mk(p, kind, pos);
	e->nargs = nargs;
	e->args = lp_alloc(p, sizeof *e->args * (size_t)nargs);
	memcpy(e->args, args, sizeof *e->args * (size_t)nargs);
	e->height = h + 1;
	return e;
}

static ir_expr *mk_bin(parser *p, ir_expr_kind kind, ir_expr *l, ir_expr *r)
{
	ir_expr *a[2] = {l, r};
	return mk_op(p, kind, l->pos, 2, a);
}

/* Guard recursion of the expression parser (error once, then NULL). */
static bool enter(parser *p, ir_pos at)
{
	if (p->edepth >= IR_MAX_EXPR_DEPTH) {
		lp_err(p, at, "expression is too deeply nested (more than %d levels)",
		     IR_MAX_EXPR_DEPTH);
		return false;
	}
	p->edepth++;
	return true;
}

static ir_expr *parse_or(parser *p);

typedef struct fn_info {
	const char *name;
	ir_fn fn;
	int nargs;
} fn_info;

static const fn_info fns[] = {
    {"min", FN_MIN, 2}, {"max", FN_MAX, 2}, {"abs", FN_ABS, 1},       {"sqrt", FN_SQRT, 1},
    {"exp", FN_EXP, 1}, {"fma", FN_FMA, 3}, {"select", FN_SELECT, 3},
};

/* Parse '(' e {',' e} ')' into a fresh arena array; *n gets the count. */
static ir_expr **parse_list(parser *p, tok_kind open, tok_kind close, int *n, int max)
{
	if (!lp_expect(p, open))
		return NULL;
	ir_expr **v = NULL;
	int cap = 0;
	*n = 0;
	if (at(p, close)) {
		next(p);
		return lp_alloc(p, sizeof *v);
	}
	for (;;) {
		ir_expr *e = parse_or(p);
		if (!e)
			return NULL;
		if (*n >= max) {
			lp_err(p, e->pos, "too many operands (at most %d)", max);
			return NULL;
		}
		v = lp_grow(p, v, &cap, *n + 1, sizeof *v);
		v[(*n)++] = e;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!lp_expect(p, close))
			return NULL;
		return v;
	}
}

static ir_expr *parse_call(parser *p)
{
	tok *t = cur(p);
	const fn_info *f = NULL;
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (strcmp(fns[i].name, t->s) == 0)
			f = &fns[i];
	if (!f) {
		lp_err(p, tpos(t),
		     "unknown function '%s' (use min, max, abs, sqrt, exp, fma or select)", t->s);
		return NULL;
	}
	next(p);
	int n;
	ir_expr **args = parse_list(p, T_LPAREN, T_RPAREN, &n, 16);
	if (!args)
		return NULL;
	if (n != f->nargs) {
		lp_err(p, tpos(t), "'%s' takes %d argument%s, not %d", f->name, f->nargs,
		     f->nargs == 1 ? "" : "s", n);
		return NULL;
	}
	ir_expr *e = mk_op(p, EX_CALL, tpos(t), n, args);
	if (e)
		e->fn = f->fn;
	return e;
}

static ir_expr *parse_access(parser *p)
{
	tok *t = cur(p);
	sym *s = lp_sym_find(p, t->s);
	if (lp_quiet_failed(p, s))
		return NULL;
	if (!s || s->kind != SYM_ARRAY) {
		if (scope_find(p, t->s) >= 0)
			lp_err(p, tpos(t), "'%s' is a let, not an array", t->s);
		else if (s)
			lp_err(p, tpos(t), "'%s' is %s, not an array", t->s, sym_kind_name(s->kind));
		else
			lp_err(p, tpos(t), "unknown array '%s'", t->s);
		return NULL;
	}
	next(p);
	int n;
	ir_expr **subs = parse_list(p, T_LBRACKET, T_RBRACKET, &n, IR_MAX_RANK + 1);
	if (!subs)
		return NULL;
	const ir_array *arr = &p->k->arrays[s->id];
	if (n != arr->rank) {
		lp_err(p, tpos(t), "'%s' has %d dimension%s, but %d subscript%s given", arr->name,
		     arr->rank, arr->rank == 1 ? "" : "s", n, n == 1 ? " is" : "s are");
		return NULL;
	}
	ir_expr *e = mk_op(p, EX_ACCESS, tpos(t), n, subs);
	if (!e)
		return NULL;
	/* subscripts live in sub_expr (sub is filled by the checker) */
	e->sub_expr = e->args;
	e->args = NULL;
	e->nargs = 0;
	e->id = s->id;
	e->type = arr->type;
	return e;
}

static ir_expr *parse_name(parser *p)
{
	tok *t = cur(p);
	next(p);
	int l = scope_find(p, t->s);
	if (l == LET_FAILED) {
		p->nerr++; /* reported at the let */
		return NULL;
	}
	if (l >= 0) {
		ir_expr *e = mk(p, EX_LET, tpos(t));
		e->id = l;
		return e;
	}
	sym *s = lp_sym_find(p, t->s);
	if (lp_quiet_failed(p, s))
		return NULL;
	if (!s) {
		lp_err(p, tpos(t), "unknown name '%s'", t->s);
		return NULL;
	}
	switch (s->kind) {
	case SYM_PARAM: {
		ir_expr *e = mk(p, EX_PARAM, tpos(t));
		e->id = s->id;
		return e;
	}
	case SYM_INDEX: {
		if (p->k->indices[s->id].kind != IX_LOOP) {
			lp_err(p, tpos(t),
			     "index '%s' is made by the schedule and cannot be used here", t->s);
			return NULL;
		}
		if (!p->in_scope[s->id]) {
			lp_err(p, tpos(t), "index '%s' is used outside its loop", t->s);
			return NULL;
		}
		ir_expr *e = mk(p, EX_INDEX, tpos(t));
		e->id = s->id;
		return e;
	}
	case SYM_ARRAY:
		lp_err(p, tpos(t), "array '%s' needs subscripts ('%s[...]')", t->s, t->s);
		return NULL;
	case SYM_CACHE:
	case SYM_FAILED:
	case SYM_NONE: break;
	}
	lp_err(p, tpos(t), "'%s' is %s and cannot be used in an expression", t->s,
	     sym_kind_name(s->kind));
	return NULL;
}

static ir_expr *parse_primary(parser *p)
{
	tok *t = cur(p);
	switch (t->kind) {
	case T_INT: {
		next(p);
		ir_expr *e = mk(p, EX_NUM, tpos(t));
		e->inum = t->ival;
		e->num = (double)t->ival;
		return e;
	}
	case T_FLOAT: {
		next(p);
		ir_expr *e = mk(p, EX_NUM, tpos(t));
		e->num = t->fval;
		e->is_float = true;
		e->inum = (t->fval > -9.0e18 && t->fval < 9.0e18) ? (int64_t)t->fval : 0;
		return e;
	}
	case T_LPAREN: {
		next(p);
		ir_expr *e = parse_or(p);
		if (!e || !lp_expect(p, T_RPAREN))
			return NULL;
		return e;
	}
	case T_IDENT: {
		tok_kind nk = peek(p, 1)->kind;
		if (nk == T_LPAREN)
			return parse_call(p);
		if (nk == T_LBRACKET)
			return parse_access(p);
		return parse_name(p);
	}
	default: break;
	}
	char found[64];
	lp_tok_desc(t, found, sizeof found);
	lp_err(p, tpos(t), "expected an expression, found %s", found);
	return NULL;
}

static ir_expr *parse_unary(parser *p)
{
	tok *t = cur(p);
	if (t->kind != T_MINUS && t->kind != T_PLUS)
		return parse_primary(p);
	if (!enter(p, tpos(t)))
		return NULL;
	next(p);
	ir_expr *x = parse_unary(p);
	p->edepth--;
	if (!x || t->kind == T_PLUS)
		return x;
	if (x->kind == EX_NUM) {
		/* fold so that `-1` is one literal (and -INT64_MAX stays exact) */
		x->inum = -x->inum;
		x->num = -x->num;
		x->pos = tpos(t);
		return x;
	}
	ir_expr *e = mk_op(p, EX_NEG, tpos(t), 1, &x);
	return e;
}

static ir_expr *parse_mul(parser *p)
{
	ir_expr *l = parse_unary(p);
	while (l && (at(p, T_STAR) || at(p, T_SLASH))) {
		ir_expr_kind k = at(p, T_STAR) ? EX_MUL : EX_DIV;
		next(p);
		ir_expr *r = parse_unary(p);
		if (!r)
			return NULL;
		l = mk_bin(p, k, l, r);
	}
	return l;
}

static ir_expr *parse_add(parser *p)
{
	ir_expr *l = parse_mul(p);
	while (l && (at(p, T_PLUS) || at(p, T_MINUS))) {
		ir_expr_kind k = at(p, T_PLUS) ? EX_ADD : EX_SUB;
		next(p);
		ir_expr *r = parse_mul(p);
		if (!r)
			return NULL;
		l = mk_bin(p, k, l, r);
	}
	return l;
}

static bool cmp_op(tok_kind k, ir_cmp *c)
{
	switch (k) {
	case T_LT: *c = CMP_LT; return true;
	case T_LE: *c = CMP_LE; return true;
	case T_GT: *c = CMP_GT; return true;
	case T_GE: *c = CMP_GE; return true;
	case T_EQ: *c = CMP_EQ; return true;
	case T_NE: *c = CMP_NE; return true;
	default: return false;
	}
}

static ir_expr *parse_cmp(parser *p)
{
	ir_expr *l = parse_add(p);
	ir_cmp c, c2;
	if (!l || !cmp_op(cur(p)->kind, &c))
		return l;
	next(p);
	ir_expr *r = parse_add(p);
	if (!r)
		return NULL;
	if (cmp_op(cur(p)->kind, &c2)) {
		lp_err(p, tpos(cur(p)), "comparisons cannot be chained; join them with '&&'");
		return NULL;
	}
	ir_expr *e = mk_bin(p, EX_CMP, l, r);
	if (e)
		e->cmp = c;
	return e;
}

static ir_expr *parse_not(parser *p)
{
	tok *t = cur(p);
	if (t->kind != T_NOT)
		return parse_cmp(p);
	if (!enter(p, tpos(t)))
		return NULL;
	next(p);
	ir_expr *x = parse_not(p);
	p->edepth--;
	return x ? mk_op(p, EX_NOT, tpos(t), 1, &x) : NULL;
}

static ir_expr *parse_and(parser *p)
{
	ir_expr *l = parse_not(p);
	while (l && at(p, T_AND)) {
		next(p);
		ir_expr *r = parse_not(p);
		if (!r)
			return NULL;
		l = mk_bin(p, EX_AND, l, r);
	}
	return l;
}

/* expr := or; precedence from loosest: || && ! comparisons + - * / unary. */
static ir_expr *parse_or(parser *p)
{
	if (!enter(p, tpos(cur(p))))
		return NULL;
	ir_expr *l = parse_and(p);
	while (l && at(p, T_OR)) {
		next(p);
		ir_expr *r = parse_and(p);
		if (!r) {
			l = NULL;
			break;
		}
		l = mk_bin(p, EX_OR, l, r);
	}
	p->edepth--;
	return l;
}

/* A whole expression (the lowest precedence level, `or`). */
ir_expr *lp_parse_expr(parser *p) { return parse_or(p); }

/* An integer expression evaluated now (param values, split sizes, plan
 * numbers); false after an error. */
bool lp_parse_int(parser *p, bool allow_params, const char *what, int64_t *v, ir_expr **ex)
{
	ir_expr *e = parse_or(p);
	if (ex)
		*ex = e;
	if (!e)
		return false;
	if (!lang_eval_int(p->k, e, allow_params, what, v)) {
		p->nerr++;
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ statements */

static ir_node *mk_node(parser *p, ir_node_kind kind, ir_pos pos, ir_node *parent)
{
	ir_node *n = lp_alloc(p, sizeof *n);
	n->kind = kind;
	n->pos = pos;
	n->parent = parent;
	n->let_id = -1;
	return n;
}

static void list_add(parser *p, node_list *l, ir_node *n)
{
	l->v = lp_grow(p, l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = n;
}

static bool sep_ok(parser *p)
{
	if (p->i == 0 || cur(p)->nl)
		return true;
	tok_kind pk = p->t[p->i - 1].kind;
	return pk == T_SEMI || pk == T_LBRACE || pk == T_RBRACE;
}

static void parse_block(parser *p, ir_node *parent, int *n, ir_node ***body);
static ir_node *parse_stmt(parser *p, ir_node *parent);

/* The affine terms of one loop bound: the bound is the max (lower bound)
 * or min (upper bound) of them. */
#define BOUND_MAX_TERMS 8
typedef struct bound_terms {
	int n;
	aff t[BOUND_MAX_TERMS];
} bound_terms;

/* Collect the terms of bound e: max(...) nests in a lower bound and min(...)
 * in an upper one; every term is affine in params and enclosing indices.
 * The other function would make the space a union, not one polyhedron. */
static bool parse_bound(parser *p, const ir_expr *e, bool lower, bound_terms *b)
{
	if (e->kind == EX_CALL && (e->fn == FN_MIN || e->fn == FN_MAX)) {
		if ((e->fn == FN_MAX) != lower) {
			lp_err(p, e->pos,
			       "%s loop bound may not use %s(...): use %s(...) of affine terms "
			       "(the iteration space must be one convex polyhedron)",
			       lower ? "a lower" : "an upper", lower ? "min" : "max",
			       lower ? "max" : "min");
			return false;
		}
		for (int i = 0; i < e->nargs; i++)
			if (!parse_bound(p, e->args[i], lower, b))
				return false;
		return true;
	}
	if (b->n == BOUND_MAX_TERMS) {
		lp_err(p, e->pos, "a loop bound may have at most %d terms in min/max",
		       BOUND_MAX_TERMS);
		return false;
	}
	return lang_to_aff(p->k, p->a, e, true, "loop bound", &b->t[b->n++]);
}

/* Whether a bound of a single term over params only (a rectangular loop). */
static bool bound_plain(const bound_terms *b)
{
	return b->n == 1 && !aff_uses_kind(b->t[0], AFF_INDEX);
}

/* Give index x its bounds; a loop with an affine bound keeps every term
 * (ir_index_affine). */
static bool set_bounds(parser *p, ir_index *x, const bound_terms *lo, const bound_terms *hi)
{
	x->lo = lo->t[0];
	x->hi = hi->t[0];
	if (bound_plain(lo) && bound_plain(hi))
		return true;
	x->los = lp_alloc(p, sizeof *x->los * (size_t)lo->n);
	x->his = lp_alloc(p, sizeof *x->his * (size_t)hi->n);
	if (!x->los || !x->his)
		return false;
	memcpy(x->los, lo->t, sizeof *x->los * (size_t)lo->n);
	memcpy(x->his, hi->t, sizeof *x->his * (size_t)hi->n);
	x->nlo = lo->n;
	x->nhi = hi->n;
	p->k->affine_bounds = true;
	return true;
}

/* An index whose loop header had an error: later uses of the name (the
 * schedule, the plan) are that error, not new ones. */
static ir_node *failed_index(parser *p, const char *name, ir_pos at)
{
	lp_sym_failed(p, name, at);
	return NULL;
}

/* `for (x: E, y: lo .. hi) { ... }` */
static ir_node *parse_for(parser *p, ir_node *parent)
{
	tok *ft = cur(p);
	next(p);
	ir_node *n = mk_node(p, ND_FOR, tpos(ft), parent);
	if (!lp_expect(p, T_LPAREN))
		return NULL;
	int cap = 0;
	ir_pos npos;
	for (;;) {
		const char *name = lp_expect_ident(p, "an index name", &npos);
		if (!name || !lp_expect(p, T_COLON))
			return NULL;
		ir_expr *e1 = parse_or(p);
		if (!e1)
			return failed_index(p, name, npos);
		ir_expr *e2 = NULL, *se = NULL;
		int64_t sv = 1;
		if (at(p, T_DOTDOT)) {
			next(p);
			e2 = parse_or(p);
			if (!e2)
				return failed_index(p, name, npos);
		}
		if (at_word(p, "step")) {
			next(p);
			if (!lp_parse_int(p, true, "a loop step", &sv, &se))
				return failed_index(p, name, npos);
		}
		bound_terms lo = {0, {{0, 0, NULL}}}, hi = {0, {{0, 0, NULL}}};
		bool ok = true;
		if (e2) {
			ok = parse_bound(p, e1, true, &lo);
			if (ok)
				ok = parse_bound(p, e2, false, &hi);
		} else {
			lo.n = 1;
			ok = parse_bound(p, e1, false, &hi);
		}
		if (!ok) {
			p->nerr++;
			return failed_index(p, name, npos);
		}
		if (!lp_name_free(p, name, npos) || lp_too_many(p, p->k->nindices, npos, "indices"))
			return NULL;
		ct_kernel *k = p->k;
		k->indices =
		    lp_grow(p, k->indices, &p->cap_indices, k->nindices + 1, sizeof *k->indices);
		p->in_scope =
		    lp_grow(p, p->in_scope, &p->cap_in_scope, k->nindices + 1, sizeof(bool));
		int id = k->nindices++;
		ir_index *x = &k->indices[id];
		x->name = name;
		x->pos = npos;
		x->kind = IX_LOOP;
		if (!set_bounds(p, x, &lo, &hi))
			return NULL;
		x->loop = n;
		x->step = sv;
		x->step_expr = se;
		x->window = 0;
		x->parent = -1;
		x->child = -1;
		x->root = id;
		lp_sym_add(p, name, SYM_INDEX, id);
		n->idx = lp_grow(p, n->idx, &cap, n->nidx + 1, sizeof *n->idx);
		n->idx[n->nidx++] = id;
		/* the bounds of the next indices of this `for` may use it */
		p->in_scope[id] = true;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!lp_expect(p, T_RPAREN))
			return NULL;
		break;
	}
	for (int i = 0; i < n->nidx; i++)
		p->in_scope[n->idx[i]] = true;
	parse_block(p, n, &n->nbody, &n->body);
	for (int i = 0; i < n->nidx; i++)
		p->in_scope[n->idx[i]] = false;
	return n;
}

/* `if (cond) { ... } [else if ... | else { ... }]` */
static ir_node *parse_if(parser *p, ir_node *parent)
{
	tok *it = cur(p);
	next(p);
	ir_node *n = mk_node(p, ND_IF, tpos(it), parent);
	if (!lp_expect(p, T_LPAREN))
		return NULL;
	n->cond = parse_or(p);
	if (!n->cond || !lp_expect(p, T_RPAREN))
		return NULL;
	parse_block(p, n, &n->nbody, &n->body);
	if (at(p, T_ELSE)) {
		next(p);
		if (at(p, T_IF)) {
			if (p->depth >= IR_MAX_DEPTH) {
				lp_err(p, tpos(cur(p)),
				     "blocks are nested too deeply (at most %d levels)",
				     IR_MAX_DEPTH);
				lp_sync(p, p->i);
				return n;
			}
			p->depth++;
			ir_node *e = parse_if(p, n);
			p->depth--;
			if (e) {
				n->els = lp_alloc(p, sizeof *n->els);
				n->els[0] = e;
				n->nels = 1;
			}
		} else {
			parse_block(p, n, &n->nels, &n->els);
		}
	}
	return n;
}

/* A let visible from here to the end of its block (id LET_FAILED: one whose value had an error). */
static void scope_push(parser *p, const char *name, int id)
{
	p->scope = lp_grow(p, p->scope, &p->cap_scope, p->nscope + 1, sizeof *p->scope);
	p->scope[p->nscope].name = name;
	p->scope[p->nscope].id = id;
	p->nscope++;
}

static ir_node *parse_let(parser *p, ir_node *parent)
{
	tok *lt = cur(p);
	next(p);
	ir_pos npos;
	const char *name = lp_expect_ident(p, "a name", &npos);
	if (!name || !lp_expect(p, T_ASSIGN))
		return NULL;
	ir_expr *rhs = parse_or(p);
	if (!rhs) {
		scope_push(p, name, LET_FAILED); /* its uses in the block are this error */
		return NULL;
	}
	if (!lp_name_free(p, name, npos) || lp_too_many(p, p->k->nlets, npos, "lets"))
		return NULL;
	ct_kernel *k = p->k;
	k->lets = lp_grow(p, k->lets, &p->cap_lets, k->nlets + 1, sizeof *k->lets);
	int id = k->nlets++;
	k->lets[id].name = name;
	k->lets[id].pos = npos;
	k->lets[id].type = CT_F64;
	scope_push(p, name, id);
	ir_node *n = mk_node(p, ND_LET, tpos(lt), parent);
	n->let_id = id;
	n->rhs = rhs;
	return n;
}

static ir_node *parse_assign(parser *p, ir_node *parent)
{
	tok *t = cur(p);
	ir_expr *lhs = parse_access(p);
	if (!lhs)
		return NULL;
	ir_assign op;
	switch (cur(p)->kind) {
	case T_ASSIGN: op = AS_SET; break;
	case T_PLUSEQ: op = AS_ADD; break;
	case T_MINUSEQ: op = AS_SUB; break;
	case T_STAREQ: op = AS_MUL; break;
	default: {
		char found[64];
		lp_tok_desc(cur(p), found, sizeof found);
		lp_err(p, tpos(cur(p)), "expected '=', '+=', '-=' or '*=', found %s", found);
		return NULL;
	}
	}
	next(p);
	ir_expr *rhs = parse_or(p);
	if (!rhs)
		return NULL;
	ir_node *n = mk_node(p, ND_STMT, tpos(t), parent);
	n->lhs = lhs;
	n->op = op;
	n->rhs = rhs;
	n->stmt_id = ++p->k->nstmts;
	return n;
}

/* One statement of a block (or of the top level); NULL after an error (the
 * caller resynchronises). */
static ir_node *parse_stmt(parser *p, ir_node *parent)
{
	tok *t = cur(p);
	switch (t->kind) {
	case T_FOR:
	case T_IF: {
		if (p->depth >= IR_MAX_DEPTH) {
			lp_err(p, tpos(t), "blocks are nested too deeply (at most %d levels)",
			     IR_MAX_DEPTH);
			return NULL;
		}
		p->depth++;
		ir_node *n = t->kind == T_FOR ? parse_for(p, parent) : parse_if(p, parent);
		p->depth--;
		return n;
	}
	case T_IDENT: {
		tok_kind nk = peek(p, 1)->kind;
		if (strcmp(t->s, "let") == 0 && nk == T_IDENT)
			return parse_let(p, parent);
		if (nk == T_LBRACKET)
			return parse_assign(p, parent);
		if (scope_find(p, t->s) >= 0 &&
		    (nk == T_ASSIGN || nk == T_PLUSEQ || nk == T_MINUSEQ || nk == T_STAREQ)) {
			lp_err(p, tpos(t), "cannot assign to let '%s' (a let is set once)", t->s);
			return NULL;
		}
		sym *s = lp_sym_find(p, t->s);
		if (lp_quiet_failed(p, s))
			return NULL;
		if (s && s->kind == SYM_ARRAY) {
			lp_err(p, tpos(t), "array '%s' needs subscripts ('%s[...]')", t->s, t->s);
			return NULL;
		}
		if (!s && scope_find(p, t->s) < 0 &&
		    (nk == T_ASSIGN || nk == T_PLUSEQ || nk == T_MINUSEQ || nk == T_STAREQ)) {
			lp_err(p, tpos(t), "unknown array '%s'", t->s);
			return NULL;
		}
		break;
	}
	default: break;
	}
	char found[64];
	lp_tok_desc(t, found, sizeof found);
	lp_err(p, tpos(t), "expected a statement, found %s", found);
	return NULL;
}

static bool is_top_keyword(tok_kind k)
{
	return k == T_KERNEL || k == T_PARAM || k == T_ARRAY || k == T_SCHEDULE || k == T_PLAN;
}

/* '{' statements '}' with their own let scope. */
static void parse_block(parser *p, ir_node *parent, int *n, ir_node ***body)
{
	*n = 0;
	*body = NULL;
	if (!lp_expect(p, T_LBRACE)) {
		lp_sync(p, p->i);
		return;
	}
	int scope_mark = p->nscope;
	node_list l = {NULL, 0, 0};
	for (;;) {
		tok *t = cur(p);
		if (t->kind == T_RBRACE) {
			next(p);
			break;
		}
		if (t->kind == T_EOF) {
			lp_err(p, tpos(t),
			     "missing '}' (the block opened at line %d:%d is not closed)",
			     parent->pos.line, parent->pos.col);
			break;
		}
		if (t->kind == T_SEMI) {
			next(p);
			continue;
		}
		int st = p->i;
		if (!sep_ok(p)) {
			lp_err(p, tpos(t), "expected a new line or ';' before the next statement");
			lp_sync(p, st);
			continue;
		}
		if (is_top_keyword(t->kind)) {
			lp_err(p, tpos(t), "%s is only allowed at the top level, not inside a block",
			     lex_kind_name(t->kind));
			lp_sync(p, st);
			continue;
		}
		ir_node *s = parse_stmt(p, parent);
		if (s)
			list_add(p, &l, s);
		else
			lp_sync(p, st);
	}
	p->nscope = scope_mark;
	*n = l.n;
	*body = l.v;
}

/* ------------------------------------------------------------ declarations */

static void parse_kernel_line(parser *p)
{
	tok *t = cur(p);
	next(p);
	ir_pos npos;
	const char *name = lp_expect_ident(p, "the kernel name", &npos);
	if (!name)
		return;
	if (p->k->name) {
		lp_err(p, tpos(t), "second 'kernel' line (the kernel is named at line %d)",
		     p->k->name_pos.line);
		return;
	}
	p->k->name = name;
	p->k->name_pos = npos;
}

/* ------------------------------------------------------------ shared by the declaration, schedule and plan grammars */

int lp_find_index(parser *p, const tok *t, const char *where)
{
	sym *s = lp_sym_find(p, t->s);
	if (lp_quiet_failed(p, s))
		return -1;
	if (!s || s->kind != SYM_INDEX) {
		if (s)
			lp_err(p, tpos(t), "'%s' is %s, not an index, in %s", t->s,
			     sym_kind_name(s->kind), where);
		else
			lp_err(p, tpos(t), "unknown index '%s' in %s", t->s, where);
		return -1;
	}
	return s->id;
}

/* The `{ item item ... }` of a schedule or plan block opened by keyword t:
 * items separated by new lines or ';', each parsed by item(); after a bad
 * item the parser resynchronises and goes on, so one run reports several. */
void lp_block_items(parser *p, const tok *t, const char *what, bool (*item)(parser *p))
{
	if (!lp_expect(p, T_LBRACE)) {
		lp_sync(p, p->i);
		return;
	}
	for (;;) {
		tok *it = cur(p);
		if (it->kind == T_RBRACE) {
			next(p);
			return;
		}
		if (it->kind == T_EOF) {
			lp_err(p, tpos(it), "missing '}' (the %s at line %d is not closed)", what, t->line);
			return;
		}
		if (it->kind == T_SEMI) {
			next(p);
			continue;
		}
		int st = p->i;
		if (!sep_ok(p))
			lp_err(p, tpos(it), "expected a new line or ';' before the next %s item", what);
		if (!item(p))
			lp_sync(p, st);
	}
}

/* `true` or `false` as the value of option opt. */
bool lp_parse_bool(parser *p, const char *opt, bool *v)
{
	tok *t = cur(p);
	if (t->kind == T_IDENT && (strcmp(t->s, "true") == 0 || strcmp(t->s, "false") == 0)) {
		*v = t->s[0] == 't';
		next(p);
		return true;
	}
	char found[64];
	lp_tok_desc(t, found, sizeof found);
	lp_err(p, tpos(t), "expected true or false for '%s', found %s", opt, found);
	return false;
}

/* ------------------------------------------------------------ file */

static void parse_file(parser *p)
{
	node_list top = {NULL, 0, 0};
	while (!at(p, T_EOF)) {
		tok *t = cur(p);
		int st = p->i;
		if (t->kind == T_SEMI) {
			next(p);
			continue;
		}
		if (!sep_ok(p) && t->kind != T_RBRACE) {
			lp_err(p, tpos(t), "expected a new line or ';' before the next item");
			lp_sync(p, st);
			if (p->i == st)
				next(p);
			continue;
		}
		if (!p->k->name && t->kind != T_KERNEL && !p->kernel_err) {
			lp_err(p, tpos(t), "the file must start with 'kernel NAME'");
			p->kernel_err = true;
		}
		int before = p->nerr;
		switch (t->kind) {
		case T_KERNEL: parse_kernel_line(p); break;
		case T_PARAM: lp_parse_param(p); break;
		case T_ARRAY: lp_parse_array(p); break;
		case T_SCHEDULE: lp_parse_schedule(p); break;
		case T_PLAN: lp_parse_plan(p); break;
		case T_RBRACE:
			lp_err(p, tpos(t), "unmatched '}'");
			next(p);
			break;
		default:
			if (p->after_logic &&
			    (t->kind == T_FOR || t->kind == T_IF || t->kind == T_IDENT)) {
				lp_err(p, tpos(t),
				     "statements must come before 'schedule' and 'plan'");
				break;
			}
			ir_node *n = parse_stmt(p, NULL);
			if (n)
				list_add(p, &top, n);
		}
		if (p->nerr > before)
			lp_sync(p, st);
		if (p->i == st)
			next(p); /* always make progress (a stray '}' stops sync) */
	}
	p->k->nbody = top.n;
	p->k->body = top.v;
	if (!p->k->name && !p->kernel_err)
		lp_err(p, tpos(&p->t[0]), "the file must start with 'kernel NAME'");
}

/* Lex and parse text into p->k; false when memory ran out (the arena is
 * then in an unknown state and must be freed). Kept apart from lang_parse
 * so that nothing live across setjmp is modified after it. */
static bool parse_guarded(parser *p, const char *text, size_t len, const char *file)
{
	if (setjmp(p->oom))
		return false;
	ct_kernel *k = p->k;
	k->file = ct_arena_strdup(p->a, file ? file : "<input>");
	char *copy = ct_arena_alloc(p->a, len + 1);
	if (!k->file || !copy)
		return false;
	if (len)
		memcpy(copy, text, len);
	k->text = copy;
	k->text_len = len;
	p->t = lex_text(p->a, p->ctx, copy, len, &p->nt, &p->nerr);
	if (!p->t)
		return false;
	parse_file(p);
	return !k->arena.failed;
}

ct_kernel *lang_parse(ct_ctx *ctx, const char *text, size_t len, const char *file)
{
	if (!ctx)
		return NULL;
	if (!text)
		len = 0;
	ct_diag_begin(ctx, file, text ? text : "", len);
	if (len > LANG_MAX_TEXT) {
		ct_error_at(ctx, CT_ERR_LIMIT, file ? file : "<input>", 0, 0,
		            "kernel text is too large (%zu bytes; at most %zu)", len,
		            LANG_MAX_TEXT);
		return NULL;
	}
	ct_kernel *k = ct_alloc(ctx, sizeof *k);
	parser *p = ct_alloc(ctx, sizeof *p);
	if (!k || !p) {
		ct_free(ctx, k);
		ct_free(ctx, p);
		return NULL;
	}
	k->ctx = ctx;
	ct_arena_init(&k->arena, ctx);
	p->ctx = ctx;
	p->k = k;
	p->a = &k->arena;
	bool ok = parse_guarded(p, text ? text : "", len, file);
	int nerr = p->nerr;
	ct_free(ctx, p);
	if (ok && nerr == 0)
		nerr = check_structure(k);
	if (ok && nerr == 0 && !k->arena.failed)
		nerr = check_sizes(k);
	if (!ok || k->arena.failed) {
		ct_arena_free(&k->arena);
		ct_free(ctx, k);
		ct_error(ctx, CT_ERR_NOMEM, "out of memory while reading the kernel");
		return NULL;
	}
	if (nerr > 0) {
		ct_arena_free(&k->arena);
		ct_free(ctx, k);
		return NULL;
	}
	return k;
}
