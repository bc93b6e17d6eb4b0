/* parse.c: recursive-descent parser from .cachet tokens to the kernel IR, resolving names. */
#include "lang/lang.h"
#include "ir/order.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef enum sym_kind { SYM_NONE = 0, SYM_PARAM, SYM_ARRAY, SYM_INDEX, SYM_CACHE } sym_kind;

/* One kernel-wide name (params, arrays, indices, caches share one space). */
typedef struct sym {
	const char *name;
	sym_kind kind;
	int id;
} sym;

/* A `let` visible in the current block. */
typedef struct scoped_let {
	const char *name;
	int id;
} scoped_let;

/* A growable list of nodes (a block's children). */
typedef struct node_list {
	ir_node **v;
	int n, cap;
} node_list;

typedef struct parser {
	ct_ctx *ctx;
	ct_kernel *k;
	ct_arena *a;
	tok *t;
	int nt, i;
	int nerr;
	jmp_buf oom; /* allocation failure unwinds to lang_parse */
	sym *tab;    /* open addressing, power-of-two capacity */
	int tabcap, tabn;
	int cap_params, cap_arrays, cap_indices, cap_lets, cap_sched, cap_plan;
	bool *in_scope; /* per index: inside its loop right now */
	int cap_in_scope;
	scoped_let *scope;
	int nscope, cap_scope;
	int depth;        /* nesting of for/if blocks */
	int edepth;       /* recursion depth of the expression parser */
	bool kernel_err;  /* "must start with kernel" reported */
	bool after_logic; /* a schedule or plan was seen */
	bool seen_schedule, seen_plan;
} parser;

/* ------------------------------------------------------------ helpers */

static void *palloc(parser *p, size_t size)
{
	void *q = ct_arena_alloc(p->a, size);
	if (!q)
		longjmp(p->oom, 1);
	return q;
}

/* Ensure a vector v of *cap elements (elt bytes) can hold need; arena-backed. */
static void *pgrow(parser *p, void *v, int *cap, int need, size_t elt)
{
	if (need <= *cap)
		return v;
	int n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *nv = palloc(p, (size_t)n * elt);
	if (*cap)
		memcpy(nv, v, (size_t)*cap * elt);
	*cap = n;
	return nv;
}

static tok *cur(parser *p) { return &p->t[p->i]; }
static tok *peek(parser *p, int n)
{
	int j = p->i + n;
	return &p->t[j < p->nt ? j : p->nt - 1];
}
static void next(parser *p)
{
	if (p->i < p->nt - 1)
		p->i++;
}
static bool at(parser *p, tok_kind k) { return cur(p)->kind == k; }
static bool at_word(parser *p, const char *w)
{
	return cur(p)->kind == T_IDENT && strcmp(cur(p)->s, w) == 0;
}
static ir_pos tpos(const tok *t)
{
	ir_pos r = {t->line, t->col};
	return r;
}

static void perr(parser *p, ir_pos at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(parser *p, ir_pos at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ct_diag_vadd(p->ctx, at.line, at.col, fmt, ap);
	va_end(ap);
	p->nerr++;
}

/* A short description of a token for "found ..." messages. */
static void tok_desc(const tok *t, char *buf, size_t n)
{
	if (t->kind == T_IDENT)
		snprintf(buf, n, "'%.40s'", t->s);
	else
		snprintf(buf, n, "%s", lex_kind_name(t->kind));
}

static bool expect(parser *p, tok_kind k)
{
	if (at(p, k)) {
		next(p);
		return true;
	}
	char found[64];
	tok_desc(cur(p), found, sizeof found);
	perr(p, tpos(cur(p)), "expected %s, found %s", lex_kind_name(k), found);
	return false;
}

/* Expect a name; returns it (NULL after reporting an error). */
static const char *expect_ident(parser *p, const char *what, ir_pos *pos)
{
	tok *t = cur(p);
	*pos = tpos(t);
	if (t->kind == T_IDENT) {
		next(p);
		return t->s;
	}
	if (t->kind >= T_KERNEL && t->kind <= T_PLAN)
		perr(p, *pos, "%s is a keyword and cannot be used as %s", lex_kind_name(t->kind),
		     what);
	else {
		char found[64];
		tok_desc(t, found, sizeof found);
		perr(p, *pos, "expected %s, found %s", what, found);
	}
	return NULL;
}

/* Skip to the start of the next statement after the one that began at token
 * index start: a token that begins a line, the token after ';', or a '}'
 * that closes the current block. Braced groups on the way are skipped whole
 * so that a bad `for` header does not leak its body. Always moves past
 * start unless at '}' or the end. */
static void sync(parser *p, int start)
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

static sym *sym_find(parser *p, const char *name)
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
static bool name_free(parser *p, const char *name, ir_pos at)
{
	sym *s = sym_find(p, name);
	if (s) {
		ir_pos d = sym_decl_pos(p, s);
		perr(p, at, "'%s' is already declared as %s (line %d)", name,
		     sym_kind_name(s->kind), d.line);
		return false;
	}
	int l = scope_find(p, name);
	if (l >= 0) {
		perr(p, at, "'%s' is already declared as a let (line %d)", name,
		     p->k->lets[l].pos.line);
		return false;
	}
	return true;
}

static void sym_add(parser *p, const char *name, sym_kind kind, int id)
{
	if (2 * (p->tabn + 1) > p->tabcap) {
		int ncap = p->tabcap ? p->tabcap * 2 : 64;
		sym *nt = palloc(p, sizeof *nt * (size_t)ncap);
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

static bool too_many(parser *p, int n, ir_pos at, const char *what)
{
	if (n < IR_MAX_NAMES)
		return false;
	perr(p, at, "too many %s (at most %d)", what, IR_MAX_NAMES);
	return true;
}

/* ------------------------------------------------------------ expressions */

static ir_expr *mk(parser *p, ir_expr_kind kind, ir_pos pos)
{
	ir_expr *e = palloc(p, sizeof *e);
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
		perr(p, pos, "expression is too deeply nested (more than %d levels)",
		     IR_MAX_EXPR_DEPTH);
		return NULL;
	}
	ir_expr *e = mk(p, kind, pos);
	e->nargs = nargs;
	e->args = palloc(p, sizeof *e->args * (size_t)nargs);
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
		perr(p, at, "expression is too deeply nested (more than %d levels)",
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
	if (!expect(p, open))
		return NULL;
	ir_expr **v = NULL;
	int cap = 0;
	*n = 0;
	if (at(p, close)) {
		next(p);
		return palloc(p, sizeof *v);
	}
	for (;;) {
		ir_expr *e = parse_or(p);
		if (!e)
			return NULL;
		if (*n >= max) {
			perr(p, e->pos, "too many operands (at most %d)", max);
			return NULL;
		}
		v = pgrow(p, v, &cap, *n + 1, sizeof *v);
		v[(*n)++] = e;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!expect(p, close))
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
		perr(p, tpos(t),
		     "unknown function '%s' (use min, max, abs, sqrt, exp, fma or select)", t->s);
		return NULL;
	}
	next(p);
	int n;
	ir_expr **args = parse_list(p, T_LPAREN, T_RPAREN, &n, 16);
	if (!args)
		return NULL;
	if (n != f->nargs) {
		perr(p, tpos(t), "'%s' takes %d argument%s, not %d", f->name, f->nargs,
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
	sym *s = sym_find(p, t->s);
	if (!s || s->kind != SYM_ARRAY) {
		if (scope_find(p, t->s) >= 0)
			perr(p, tpos(t), "'%s' is a let, not an array", t->s);
		else if (s)
			perr(p, tpos(t), "'%s' is %s, not an array", t->s, sym_kind_name(s->kind));
		else
			perr(p, tpos(t), "unknown array '%s'", t->s);
		return NULL;
	}
	next(p);
	int n;
	ir_expr **subs = parse_list(p, T_LBRACKET, T_RBRACKET, &n, IR_MAX_RANK + 1);
	if (!subs)
		return NULL;
	const ir_array *arr = &p->k->arrays[s->id];
	if (n != arr->rank) {
		perr(p, tpos(t), "'%s' has %d dimension%s, but %d subscript%s given", arr->name,
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
	if (l >= 0) {
		ir_expr *e = mk(p, EX_LET, tpos(t));
		e->id = l;
		return e;
	}
	sym *s = sym_find(p, t->s);
	if (!s) {
		perr(p, tpos(t), "unknown name '%s'", t->s);
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
			perr(p, tpos(t),
			     "index '%s' is made by the schedule and cannot be used here", t->s);
			return NULL;
		}
		if (!p->in_scope[s->id]) {
			perr(p, tpos(t), "index '%s' is used outside its loop", t->s);
			return NULL;
		}
		ir_expr *e = mk(p, EX_INDEX, tpos(t));
		e->id = s->id;
		return e;
	}
	case SYM_ARRAY:
		perr(p, tpos(t), "array '%s' needs subscripts ('%s[...]')", t->s, t->s);
		return NULL;
	case SYM_CACHE:
	case SYM_NONE: break;
	}
	perr(p, tpos(t), "'%s' is %s and cannot be used in an expression", t->s,
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
		if (!e || !expect(p, T_RPAREN))
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
	tok_desc(t, found, sizeof found);
	perr(p, tpos(t), "expected an expression, found %s", found);
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
		perr(p, tpos(cur(p)), "comparisons cannot be chained; join them with '&&'");
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

/* An integer expression evaluated now (param values, split sizes, plan
 * numbers); false after an error. */
static bool parse_int(parser *p, bool allow_params, const char *what, int64_t *v, ir_expr **ex)
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
	ir_node *n = palloc(p, sizeof *n);
	n->kind = kind;
	n->pos = pos;
	n->parent = parent;
	n->let_id = -1;
	return n;
}

static void list_add(parser *p, node_list *l, ir_node *n)
{
	l->v = pgrow(p, l->v, &l->cap, l->n + 1, sizeof *l->v);
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

/* `for (x: E, y: lo .. hi) { ... }` */
static ir_node *parse_for(parser *p, ir_node *parent)
{
	tok *ft = cur(p);
	next(p);
	ir_node *n = mk_node(p, ND_FOR, tpos(ft), parent);
	if (!expect(p, T_LPAREN))
		return NULL;
	int cap = 0;
	ir_pos npos;
	for (;;) {
		const char *name = expect_ident(p, "an index name", &npos);
		if (!name || !expect(p, T_COLON))
			return NULL;
		ir_expr *e1 = parse_or(p);
		if (!e1)
			return NULL;
		ir_expr *e2 = NULL;
		if (at(p, T_DOTDOT)) {
			next(p);
			e2 = parse_or(p);
			if (!e2)
				return NULL;
		}
		aff lo = aff_const(0), hi;
		bool ok = true;
		if (e2) {
			ok = lang_to_aff(p->k, p->a, e1, false, "loop bound", &lo);
			if (ok)
				ok = lang_to_aff(p->k, p->a, e2, false, "loop bound", &hi);
		} else {
			ok = lang_to_aff(p->k, p->a, e1, false, "loop bound", &hi);
		}
		if (!ok) {
			p->nerr++;
			return NULL;
		}
		if (!name_free(p, name, npos) || too_many(p, p->k->nindices, npos, "indices"))
			return NULL;
		ct_kernel *k = p->k;
		k->indices =
		    pgrow(p, k->indices, &p->cap_indices, k->nindices + 1, sizeof *k->indices);
		p->in_scope =
		    pgrow(p, p->in_scope, &p->cap_in_scope, k->nindices + 1, sizeof(bool));
		int id = k->nindices++;
		ir_index *x = &k->indices[id];
		x->name = name;
		x->pos = npos;
		x->kind = IX_LOOP;
		x->lo = lo;
		x->hi = hi;
		x->loop = n;
		x->step = 1;
		x->window = 0;
		x->parent = -1;
		x->child = -1;
		x->root = id;
		sym_add(p, name, SYM_INDEX, id);
		n->idx = pgrow(p, n->idx, &cap, n->nidx + 1, sizeof *n->idx);
		n->idx[n->nidx++] = id;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!expect(p, T_RPAREN))
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
	if (!expect(p, T_LPAREN))
		return NULL;
	n->cond = parse_or(p);
	if (!n->cond || !expect(p, T_RPAREN))
		return NULL;
	parse_block(p, n, &n->nbody, &n->body);
	if (at(p, T_ELSE)) {
		next(p);
		if (at(p, T_IF)) {
			if (p->depth >= IR_MAX_DEPTH) {
				perr(p, tpos(cur(p)),
				     "blocks are nested too deeply (at most %d levels)",
				     IR_MAX_DEPTH);
				sync(p, p->i);
				return n;
			}
			p->depth++;
			ir_node *e = parse_if(p, n);
			p->depth--;
			if (e) {
				n->els = palloc(p, sizeof *n->els);
				n->els[0] = e;
				n->nels = 1;
			}
		} else {
			parse_block(p, n, &n->nels, &n->els);
		}
	}
	return n;
}

static ir_node *parse_let(parser *p, ir_node *parent)
{
	tok *lt = cur(p);
	next(p);
	ir_pos npos;
	const char *name = expect_ident(p, "a name", &npos);
	if (!name || !expect(p, T_ASSIGN))
		return NULL;
	ir_expr *rhs = parse_or(p);
	if (!rhs)
		return NULL;
	if (!name_free(p, name, npos) || too_many(p, p->k->nlets, npos, "lets"))
		return NULL;
	ct_kernel *k = p->k;
	k->lets = pgrow(p, k->lets, &p->cap_lets, k->nlets + 1, sizeof *k->lets);
	int id = k->nlets++;
	k->lets[id].name = name;
	k->lets[id].pos = npos;
	k->lets[id].type = CT_F64;
	p->scope = pgrow(p, p->scope, &p->cap_scope, p->nscope + 1, sizeof *p->scope);
	p->scope[p->nscope].name = name;
	p->scope[p->nscope].id = id;
	p->nscope++;
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
		tok_desc(cur(p), found, sizeof found);
		perr(p, tpos(cur(p)), "expected '=', '+=', '-=' or '*=', found %s", found);
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
			perr(p, tpos(t), "blocks are nested too deeply (at most %d levels)",
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
			perr(p, tpos(t), "cannot assign to let '%s' (a let is set once)", t->s);
			return NULL;
		}
		sym *s = sym_find(p, t->s);
		if (s && s->kind == SYM_ARRAY) {
			perr(p, tpos(t), "array '%s' needs subscripts ('%s[...]')", t->s, t->s);
			return NULL;
		}
		if (!s && scope_find(p, t->s) < 0 &&
		    (nk == T_ASSIGN || nk == T_PLUSEQ || nk == T_MINUSEQ || nk == T_STAREQ)) {
			perr(p, tpos(t), "unknown array '%s'", t->s);
			return NULL;
		}
		break;
	}
	default: break;
	}
	char found[64];
	tok_desc(t, found, sizeof found);
	perr(p, tpos(t), "expected a statement, found %s", found);
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
	if (!expect(p, T_LBRACE)) {
		sync(p, p->i);
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
			perr(p, tpos(t),
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
			perr(p, tpos(t), "expected a new line or ';' before the next statement");
			sync(p, st);
			continue;
		}
		if (is_top_keyword(t->kind)) {
			perr(p, tpos(t), "%s is only allowed at the top level, not inside a block",
			     lex_kind_name(t->kind));
			sync(p, st);
			continue;
		}
		ir_node *s = parse_stmt(p, parent);
		if (s)
			list_add(p, &l, s);
		else
			sync(p, st);
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
	const char *name = expect_ident(p, "the kernel name", &npos);
	if (!name)
		return;
	if (p->k->name) {
		perr(p, tpos(t), "second 'kernel' line (the kernel is named at line %d)",
		     p->k->name_pos.line);
		return;
	}
	p->k->name = name;
	p->k->name_pos = npos;
}

/* Most candidates one tunable param may list or a range may make. */
#define TUNE_MAX_VALUES 4096

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* One candidate value: an integer literal expression >= 1. */
static bool tune_value(parser *p, const char *name, int64_t *v)
{
	ir_pos vp = tpos(cur(p));
	if (!parse_int(p, false, "a tune value", v, NULL))
		return false;
	if (*v < 1) {
		perr(p, vp, "tune value %lld of '%s' must be at least 1", (long long)*v, name);
		return false;
	}
	return true;
}

/* `{v1, v2, ...}` after `tune`: the values into out[], their count into *n. */
static bool tune_list(parser *p, const char *name, int64_t *out, int *n)
{
	next(p);
	for (;;) {
		ir_pos vp = tpos(cur(p));
		if (*n >= TUNE_MAX_VALUES) {
			perr(p, vp, "param '%s' has more than %d tune values", name, TUNE_MAX_VALUES);
			return false;
		}
		if (!tune_value(p, name, &out[*n]))
			return false;
		(*n)++;
		if (at(p, T_RBRACE)) {
			next(p);
			return true;
		}
		if (!expect(p, T_COMMA))
			return false;
	}
}

/* `lo .. hi [step s]` after `tune`: both ends included, hi reached by steps. */
static bool tune_range(parser *p, const char *name, int64_t *out, int *n)
{
	int64_t lo, hi, step = 1;
	ir_pos rp = tpos(cur(p));
	if (!tune_value(p, name, &lo) || !expect(p, T_DOTDOT) || !tune_value(p, name, &hi))
		return false;
	if (at_word(p, "step")) {
		next(p);
		if (!tune_value(p, name, &step))
			return false;
	}
	if (hi < lo) {
		perr(p, rp, "empty tune range %lld..%lld of '%s'", (long long)lo, (long long)hi,
		     name);
		return false;
	}
	if ((hi - lo) % step != 0) {
		perr(p, rp,
		     "tune range %lld..%lld of '%s' does not end on a step of %lld (both ends are included)",
		     (long long)lo, (long long)hi, name, (long long)step);
		return false;
	}
	if ((hi - lo) / step >= TUNE_MAX_VALUES) {
		perr(p, rp, "param '%s' has more than %d tune values", name, TUNE_MAX_VALUES);
		return false;
	}
	for (int64_t v = lo; v <= hi; v += step)
		out[(*n)++] = v;
	return true;
}

/* `tune {..}` or `tune lo..hi [step s]` after a param's default value. */
static bool parse_tune(parser *p, ir_param *pr)
{
	pr->tune_pos = tpos(cur(p));
	next(p);
	if (pr->def) {
		perr(p, pr->tune_pos, "tunable param '%s' needs a plain integer default, not an expression of params",
		     pr->name);
		return false;
	}
	int64_t *vals = palloc(p, sizeof *vals * TUNE_MAX_VALUES);
	int n = 0;
	bool ok = at(p, T_LBRACE) ? tune_list(p, pr->name, vals, &n) : tune_range(p, pr->name, vals, &n);
	if (!ok)
		return false;
	qsort(vals, (size_t)n, sizeof *vals, cmp_i64);
	bool has_default = false;
	for (int i = 0; i < n; i++) {
		if (i > 0 && vals[i] == vals[i - 1]) {
			perr(p, pr->tune_pos, "tune value %lld of '%s' is listed twice", (long long)vals[i],
			     pr->name);
			return false;
		}
		has_default |= vals[i] == pr->value;
	}
	if (!has_default) {
		perr(p, pr->tune_pos, "the default %lld of '%s' is not among its tune values",
		     (long long)pr->value, pr->name);
		return false;
	}
	pr->ntune = n;
	pr->tune = vals;
	return true;
}

/* `param A = 1, B : runtime, C = 2*A, T = 64 tune {32, 64}` */
static bool parse_param(parser *p)
{
	next(p);
	for (;;) {
		ir_pos npos;
		const char *name = expect_ident(p, "a param name", &npos);
		if (!name)
			return false;
		ir_param pr;
		memset(&pr, 0, sizeof pr);
		pr.name = name;
		pr.pos = npos;
		if (at(p, T_ASSIGN)) {
			next(p);
			ir_expr *e;
			if (!parse_int(p, true, "a param value", &pr.value, &e))
				return false;
			pr.has_value = true;
			if (e->kind != EX_NUM)
				pr.def = e;
			if (at_word(p, "tune") && !parse_tune(p, &pr))
				return false;
		} else if (at(p, T_COLON)) {
			next(p);
			if (!expect(p, T_RUNTIME))
				return false;
			pr.runtime = true;
			if (at_word(p, "tune")) {
				perr(p, tpos(cur(p)), "runtime param '%s' cannot be tuned", name);
				return false;
			}
		} else {
			perr(p, tpos(cur(p)), "expected '= VALUE' or ': runtime' after param '%s'",
			     name);
			return false;
		}
		if (!name_free(p, name, npos) || too_many(p, p->k->nparams, npos, "params"))
			return false;
		ct_kernel *k = p->k;
		k->params = pgrow(p, k->params, &p->cap_params, k->nparams + 1, sizeof *k->params);
		k->params[k->nparams] = pr;
		sym_add(p, name, SYM_PARAM, k->nparams);
		k->nparams++;
		if (!at(p, T_COMMA))
			return true;
		next(p);
	}
}

/* A layout: row_major | col_major | first_major | last_major | (d0, d1, ..) */
static bool parse_layout(parser *p, int rank, const char *owner, int *order)
{
	tok *t = cur(p);
	if (t->kind == T_IDENT) {
		bool first = strcmp(t->s, "row_major") == 0 || strcmp(t->s, "first_major") == 0;
		bool last = strcmp(t->s, "col_major") == 0 || strcmp(t->s, "last_major") == 0;
		if (!first && !last) {
			perr(p, tpos(t),
			     "unknown layout '%s' (use row_major, col_major, first_major, "
			     "last_major "
			     "or a dimension order such as (1, 0))",
			     t->s);
			return false;
		}
		next(p);
		for (int d = 0; d < rank; d++)
			order[d] = first ? d : rank - 1 - d;
		return true;
	}
	if (t->kind != T_LPAREN) {
		char found[64];
		tok_desc(t, found, sizeof found);
		perr(p, tpos(t), "expected a layout, found %s", found);
		return false;
	}
	next(p);
	int n = 0;
	bool seen[IR_MAX_RANK] = {false};
	bool perm = true;
	for (;;) {
		tok *d = cur(p);
		if (d->kind != T_INT) {
			char found[64];
			tok_desc(d, found, sizeof found);
			perr(p, tpos(d), "expected a dimension number, found %s", found);
			return false;
		}
		next(p);
		if (n < IR_MAX_RANK && d->ival >= 0 && d->ival < rank && !seen[d->ival]) {
			seen[d->ival] = true;
			order[n] = (int)d->ival;
		} else {
			perm = false;
		}
		n++;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!expect(p, T_RPAREN))
			return false;
		break;
	}
	if (!perm || n != rank) {
		perr(p, tpos(t),
		     "layout of %s must be an order of its %d dimension%s (a permutation of 0..%d)",
		     owner, rank, rank == 1 ? "" : "s", rank - 1);
		return false;
	}
	return true;
}

/* `array A : f32[M, K] input [layout=...] [strided]` */
static bool parse_array(parser *p)
{
	next(p);
	ir_array arr;
	memset(&arr, 0, sizeof arr);
	ir_pos npos;
	const char *name = expect_ident(p, "an array name", &npos);
	if (!name || !expect(p, T_COLON))
		return false;
	arr.name = name;
	arr.pos = npos;
	tok *tt = cur(p);
	static const char *const tnames[] = {"f32", "f64", "i32", "i64"};
	static const ct_dtype tvals[] = {CT_F32, CT_F64, CT_I32, CT_I64};
	int ti = -1;
	if (tt->kind == T_IDENT)
		for (int i = 0; i < 4; i++)
			if (strcmp(tt->s, tnames[i]) == 0)
				ti = i;
	if (ti < 0) {
		char found[64];
		tok_desc(tt, found, sizeof found);
		perr(p, tpos(tt), "expected an element type (f32, f64, i32 or i64), found %s",
		     found);
		return false;
	}
	arr.type = tvals[ti];
	next(p);
	if (!expect(p, T_LBRACKET))
		return false;
	for (;;) {
		ir_pos epos = tpos(cur(p));
		ir_expr *e = parse_or(p);
		if (!e)
			return false;
		if (arr.rank >= IR_MAX_RANK) {
			perr(p, epos, "'%s' has too many dimensions (at most %d)", name,
			     IR_MAX_RANK);
			return false;
		}
		if (!lang_to_aff(p->k, p->a, e, false, "extent", &arr.ext[arr.rank])) {
			p->nerr++;
			return false;
		}
		arr.ext_pos[arr.rank++] = epos;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!expect(p, T_RBRACKET))
			return false;
		break;
	}
	switch (cur(p)->kind) {
	case T_INPUT: arr.role = CT_INPUT; break;
	case T_OUTPUT: arr.role = CT_OUTPUT; break;
	case T_INOUT: arr.role = CT_INOUT; break;
	case T_TEMP: arr.role = CT_TEMP; break;
	case T_CONST: arr.role = CT_CONST; break;
	default: {
		char found[64];
		tok_desc(cur(p), found, sizeof found);
		perr(p, tpos(cur(p)),
		     "expected the role of '%s' (input, output, inout, temp or const), found %s",
		     name, found);
		return false;
	}
	}
	next(p);
	for (int d = 0; d < arr.rank; d++)
		arr.order[d] = d;
	bool has_layout = false;
	while (at(p, T_IDENT) && !cur(p)->nl) {
		tok *o = cur(p);
		if (strcmp(o->s, "strided") == 0) {
			next(p);
			arr.strided = true;
		} else if (strcmp(o->s, "layout") == 0) {
			if (has_layout) {
				perr(p, tpos(o), "layout of '%s' is given twice", name);
				return false;
			}
			has_layout = true;
			next(p);
			if (!expect(p, T_ASSIGN))
				return false;
			char owner[300];
			snprintf(owner, sizeof owner, "'%s'", name);
			if (!parse_layout(p, arr.rank, owner, arr.order))
				return false;
		} else {
			perr(p, tpos(o), "unknown array option '%s' (use layout= or strided)",
			     o->s);
			return false;
		}
	}
	if (!name_free(p, name, npos) || too_many(p, p->k->narrays, npos, "arrays"))
		return false;
	ct_kernel *k = p->k;
	k->arrays = pgrow(p, k->arrays, &p->cap_arrays, k->narrays + 1, sizeof *k->arrays);
	k->arrays[k->narrays] = arr;
	sym_add(p, name, SYM_ARRAY, k->narrays);
	k->narrays++;
	return true;
}

/* ------------------------------------------------------------ schedule */

#define MAX_SCHED_ARGS 64

static int find_index(parser *p, const tok *t, const char *where)
{
	sym *s = sym_find(p, t->s);
	if (!s || s->kind != SYM_INDEX) {
		if (s)
			perr(p, tpos(t), "'%s' is %s, not an index, in %s", t->s,
			     sym_kind_name(s->kind), where);
		else
			perr(p, tpos(t), "unknown index '%s' in %s", t->s, where);
		return -1;
	}
	return s->id;
}

static ir_sched *new_sched(parser *p, ir_sched_kind kind, ir_pos pos, int n)
{
	ct_kernel *k = p->k;
	k->sched = pgrow(p, k->sched, &p->cap_sched, k->nsched + 1, sizeof *k->sched);
	ir_sched *s = &k->sched[k->nsched++];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->pos = pos;
	s->n = n;
	s->idx = palloc(p, sizeof *s->idx * (size_t)n);
	s->arg_pos = palloc(p, sizeof *s->arg_pos * (size_t)n);
	if (kind != SC_REORDER) {
		s->size = palloc(p, sizeof *s->size * (size_t)n);
		s->out = palloc(p, sizeof *s->out * (size_t)n);
		s->size_expr = palloc(p, sizeof *s->size_expr * (size_t)n);
	}
	return s;
}

/* Split index x by size into a new index called name; -1 after an error. */
static int do_split(parser *p, int x, int64_t size, const char *name, ir_pos npos, ir_pos xpos)
{
	ct_kernel *k = p->k;
	if (k->indices[x].child >= 0) {
		perr(p, xpos, "index '%s' is already split; split its inner index '%s' instead",
		     k->indices[x].name, k->indices[k->indices[x].child].name);
		return -1;
	}
	if (!name_free(p, name, npos) || too_many(p, k->nindices, npos, "indices"))
		return -1;
	k->indices = pgrow(p, k->indices, &p->cap_indices, k->nindices + 1, sizeof *k->indices);
	p->in_scope = pgrow(p, p->in_scope, &p->cap_in_scope, k->nindices + 1, sizeof(bool));
	int id = k->nindices++;
	ir_index *y = &k->indices[id];
	memset(y, 0, sizeof *y);
	y->name = name;
	y->pos = npos;
	y->kind = IX_SPLIT;
	y->lo = aff_const(0);
	y->hi = aff_const(size);
	y->step = 1;
	y->window = size;
	y->parent = x;
	y->child = -1;
	y->root = k->indices[x].root;
	k->indices[x].step = size;
	k->indices[x].child = id;
	sym_add(p, name, SYM_INDEX, id);
	return id;
}

/* `reorder(i, j, ...)`: one whole band, outer indices of a chain first. */
static bool parse_reorder(parser *p)
{
	tok *rt = cur(p);
	next(p);
	if (!expect(p, T_LPAREN))
		return false;
	int ids[MAX_SCHED_ARGS];
	ir_pos pos[MAX_SCHED_ARGS];
	int n = 0;
	bool ok = true;
	for (;;) {
		tok *t = cur(p);
		ir_pos ip;
		if (!expect_ident(p, "an index name", &ip))
			return false;
		if (n >= MAX_SCHED_ARGS) {
			perr(p, ip, "reorder names too many indices (at most %d)", MAX_SCHED_ARGS);
			return false;
		}
		int id = find_index(p, t, "reorder");
		if (id < 0)
			ok = false;
		ids[n] = id;
		pos[n++] = ip;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!expect(p, T_RPAREN))
			return false;
		break;
	}
	if (!ok)
		return true; /* errors reported; the line itself is well formed */
	ct_kernel *k = p->k;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < a; b++)
			if (ids[a] == ids[b]) {
				perr(p, pos[a], "index '%s' appears twice in reorder",
				     k->indices[ids[a]].name);
				return true;
			}
	const ir_node *band = sched_band_head(k, ids[0]);
	for (int a = 1; a < n; a++)
		if (sched_band_head(k, ids[a]) != band) {
			perr(p, pos[a],
			     "reorder mixes loop bands: '%s' is not in the band of '%s' (a band is "
			     "one "
			     "'for' with its directly nested single 'for's)",
			     k->indices[ids[a]].name, k->indices[ids[0]].name);
			return true;
		}
	for (int x = 0; x < k->nindices; x++) {
		if (sched_band_head(k, x) != band)
			continue;
		bool named = false;
		for (int a = 0; a < n; a++)
			named |= ids[a] == x;
		if (!named) {
			perr(p, tpos(rt),
			     "reorder must name every index of its band; '%s' is missing",
			     k->indices[x].name);
			return true;
		}
	}
	for (int a = 0; a < n; a++) {
		int par = k->indices[ids[a]].parent;
		for (int b = a + 1; b < n && par >= 0; b++)
			if (ids[b] == par) {
				perr(p, pos[a],
				     "reorder puts inner index '%s' before its outer index '%s'",
				     k->indices[ids[a]].name, k->indices[par].name);
				return true;
			}
	}
	ir_sched *s = new_sched(p, SC_REORDER, tpos(rt), n);
	for (int a = 0; a < n; a++) {
		s->idx[a] = ids[a];
		s->arg_pos[a] = pos[a];
	}
	return true;
}

static bool parse_bool(parser *p, const char *opt, bool *v);

/* Whether the parser is at the `balanced = ...` option of split/tile (in
 * tile, `balanced=true|false`: an index called balanced with a size keeps
 * its meaning). */
static bool at_balanced(parser *p, bool tile)
{
	if (!at_word(p, "balanced") || peek(p, 1)->kind != T_ASSIGN)
		return false;
	if (!tile)
		return true;
	const tok *v = peek(p, 2);
	return v->kind == T_IDENT && (strcmp(v->s, "true") == 0 || strcmp(v->s, "false") == 0);
}

/* `balanced = true|false` of split/tile; false after an error. */
static bool parse_balanced(parser *p, bool *given, bool *v, ir_pos *pos)
{
	*pos = tpos(cur(p));
	if (*given) {
		perr(p, *pos, "option 'balanced' is given twice");
		return false;
	}
	*given = true;
	next(p);
	next(p);
	return parse_bool(p, "balanced", v);
}

/* `a, b = tile(x=32, y=64)` or `a = split(x, 32)`, each with an optional
 * `balanced=true` after the sizes */
static bool parse_split(parser *p)
{
	tok *st = cur(p);
	const char *names[MAX_SCHED_ARGS];
	ir_pos npos[MAX_SCHED_ARGS];
	int nn = 0;
	for (;;) {
		if (nn >= MAX_SCHED_ARGS) {
			perr(p, tpos(cur(p)), "too many names (at most %d)", MAX_SCHED_ARGS);
			return false;
		}
		names[nn] = expect_ident(p, "an index name", &npos[nn]);
		if (!names[nn])
			return false;
		nn++;
		if (!at(p, T_COMMA))
			break;
		next(p);
	}
	if (!expect(p, T_ASSIGN))
		return false;
	tok *ft = cur(p);
	bool tile = at_word(p, "tile");
	if (!tile && !at_word(p, "split")) {
		char found[64];
		tok_desc(ft, found, sizeof found);
		perr(p, tpos(ft), "expected split(...) or tile(...), found %s", found);
		return false;
	}
	const char *what = tile ? "tile" : "split";
	next(p);
	if (!expect(p, T_LPAREN))
		return false;
	int xs[MAX_SCHED_ARGS];
	ir_pos xpos[MAX_SCHED_ARGS];
	int64_t sizes[MAX_SCHED_ARGS];
	ir_expr *sexpr[MAX_SCHED_ARGS];
	int n = 0;
	bool ok = true, bal = false, bal_given = false;
	ir_pos bal_pos = {0, 0};
	for (;;) {
		tok *t = cur(p);
		if (n > 0 && at_balanced(p, tile)) {
			if (!parse_balanced(p, &bal_given, &bal, &bal_pos))
				return false;
			if (!at(p, T_COMMA))
				break;
			next(p);
			continue;
		}
		if (!tile && n > 0) {
			char found[64];
			tok_desc(t, found, sizeof found);
			perr(p, tpos(t), "expected the option balanced=true or false after the split size, found %s",
			     found);
			return false;
		}
		if (n >= MAX_SCHED_ARGS) {
			perr(p, tpos(t), "too many indices in %s (at most %d)", what,
			     MAX_SCHED_ARGS);
			return false;
		}
		if (!expect_ident(p, "an index name", &xpos[n]))
			return false;
		xs[n] = find_index(p, t, what);
		if (xs[n] < 0)
			ok = false;
		if (!expect(p, tile ? T_ASSIGN : T_COMMA))
			return false;
		ir_pos spos = tpos(cur(p));
		if (!parse_int(p, true, "a split size", &sizes[n], &sexpr[n])) {
			if (!sexpr[n])
				return false;
			ok = false;
		} else if (sizes[n] < 1) {
			perr(p, spos, "split size must be at least 1, not %lld",
			     (long long)sizes[n]);
			ok = false;
		}
		n++;
		if (!at(p, T_COMMA))
			break;
		next(p);
	}
	if (!expect(p, T_RPAREN))
		return false;
	if (n != nn) {
		perr(p, tpos(st), "%s makes %d ind%s, but %d name%s given on the left", what, n,
		     n == 1 ? "ex" : "ices", nn, nn == 1 ? " is" : "s are");
		return true;
	}
	if (!ok)
		return true;
	int outs[MAX_SCHED_ARGS];
	for (int a = 0; a < n; a++) {
		outs[a] = do_split(p, xs[a], sizes[a], names[a], npos[a], xpos[a]);
		if (outs[a] < 0)
			return true;
	}
	ir_sched *s = new_sched(p, tile ? SC_TILE : SC_SPLIT, tpos(st), n);
	for (int a = 0; a < n; a++) {
		s->idx[a] = xs[a];
		s->size[a] = sizes[a];
		s->out[a] = outs[a];
		s->arg_pos[a] = xpos[a];
		s->size_expr[a] = sexpr[a];
		p->k->indices[xs[a]].balanced = bal;
	}
	s->balanced = bal;
	s->balanced_pos = bal_pos;
	return true;
}

/* The `{ item item ... }` of a schedule or plan block opened by keyword t:
 * items separated by new lines or ';', each parsed by item(); after a bad
 * item the parser resynchronises and goes on, so one run reports several. */
static void parse_block_items(parser *p, const tok *t, const char *what, bool (*item)(parser *p))
{
	if (!expect(p, T_LBRACE)) {
		sync(p, p->i);
		return;
	}
	for (;;) {
		tok *it = cur(p);
		if (it->kind == T_RBRACE) {
			next(p);
			return;
		}
		if (it->kind == T_EOF) {
			perr(p, tpos(it), "missing '}' (the %s at line %d is not closed)", what, t->line);
			return;
		}
		if (it->kind == T_SEMI) {
			next(p);
			continue;
		}
		int st = p->i;
		if (!sep_ok(p))
			perr(p, tpos(it), "expected a new line or ';' before the next %s item", what);
		if (!item(p))
			sync(p, st);
	}
}

static bool parse_schedule_item(parser *p)
{
	if (at_word(p, "reorder") && peek(p, 1)->kind == T_LPAREN)
		return parse_reorder(p);
	return parse_split(p);
}

static void parse_schedule(parser *p)
{
	tok *t = cur(p);
	next(p);
	if (p->seen_schedule)
		perr(p, tpos(t), "second 'schedule' block (write one)");
	else if (p->seen_plan)
		perr(p, tpos(t), "'schedule' must come before 'plan'");
	p->seen_schedule = true;
	p->after_logic = true;
	parse_block_items(p, t, "schedule", parse_schedule_item);
}

/* ------------------------------------------------------------ plan */

static bool parse_bool(parser *p, const char *opt, bool *v)
{
	tok *t = cur(p);
	if (t->kind == T_IDENT && (strcmp(t->s, "true") == 0 || strcmp(t->s, "false") == 0)) {
		*v = t->s[0] == 't';
		next(p);
		return true;
	}
	char found[64];
	tok_desc(t, found, sizeof found);
	perr(p, tpos(t), "expected true or false for '%s', found %s", opt, found);
	return false;
}

/* Mark option opt as given at pos; false (after an error) when repeated. */
static bool opt_once(parser *p, ir_opt_pos *o, const char *opt, ir_pos pos)
{
	if (o->given) {
		perr(p, pos, "option '%s' is given twice", opt);
		return false;
	}
	o->given = true;
	o->pos = pos;
	return true;
}

static bool word_is(const tok *t, const char *w)
{
	return t->kind == T_IDENT && strcmp(t->s, w) == 0;
}

static bool parse_cache_opt(parser *p, ir_plan_item *c)
{
	tok *o = cur(p);
	ir_pos opos;
	const char *opt = expect_ident(p, "a cache option", &opos);
	if (!opt || !expect(p, T_ASSIGN))
		return false;
	const ct_kernel *k = p->k;
	if (strcmp(opt, "level") == 0 || strcmp(opt, "max_elements") == 0 ||
	    strcmp(opt, "index") == 0) {
		if (c->where_opt.given) {
			perr(p, opos, "give only one of level=, index= and max_elements=");
			return false;
		}
		opt_once(p, &c->where_opt, opt, opos);
		if (opt[0] == 'i') {
			tok *t = cur(p);
			ir_pos ip;
			if (!expect_ident(p, "an index name", &ip))
				return false;
			c->where = CP_INDEX;
			c->index_id = find_index(p, t, "cache");
			return c->index_id >= 0;
		}
		ir_pos vpos = tpos(cur(p));
		if (!parse_int(p, false, opt, &c->value, NULL))
			return false;
		c->where = opt[0] == 'l' ? CP_LEVEL : CP_BUDGET;
		if (c->where == CP_BUDGET && c->value < 1) {
			perr(p, vpos, "max_elements must be at least 1, not %lld",
			     (long long)c->value);
			return false;
		}
		return true;
	}
	if (strcmp(opt, "layout") == 0) {
		if (!opt_once(p, &c->layout_opt, opt, opos))
			return false;
		c->has_layout = true;
		char owner[300];
		snprintf(owner, sizeof owner, "cache '%s'", c->name);
		return parse_layout(p, k->arrays[c->root_array].rank, owner, c->order);
	}
	if (strcmp(opt, "thrifty") == 0)
		return opt_once(p, &c->thrifty_opt, opt, opos) && parse_bool(p, opt, &c->thrifty);
	if (strcmp(opt, "double_buffer") == 0)
		return opt_once(p, &c->double_buffer_opt, opt, opos) &&
		       parse_bool(p, opt, &c->double_buffer);
	if (strcmp(opt, "trigger_level") == 0 || strcmp(opt, "trigger_index") == 0) {
		if (c->trigger_opt.given) {
			perr(p, opos,
			     "give trigger_level= or trigger_index=, not both (nor twice)");
			return false;
		}
		opt_once(p, &c->trigger_opt, opt, opos);
		c->has_trigger = true;
		if (strcmp(opt, "trigger_index") == 0) {
			tok *t = cur(p);
			ir_pos ip;
			if (!expect_ident(p, "an index name", &ip))
				return false;
			c->trigger_is_index = true;
			c->trigger_index = find_index(p, t, "cache");
			return c->trigger_index >= 0;
		}
		return parse_int(p, false, opt, &c->trigger_level, NULL);
	}
	if (strcmp(opt, "location") == 0 || strcmp(opt, "strategy") == 0) {
		bool loc = opt[0] == 'l';
		if (!opt_once(p, loc ? &c->location_opt : &c->strategy_opt, opt, opos))
			return false;
		tok *t = cur(p);
		ir_pos vp;
		if (!expect_ident(p, loc ? "a location" : "a strategy", &vp))
			return false;
		bool good = true;
		if (loc) {
			if (word_is(t, "global"))
				c->location = LOC_GLOBAL;
			else if (word_is(t, "local"))
				c->location = LOC_LOCAL;
			else if (word_is(t, "private"))
				c->location = LOC_PRIVATE;
			else
				good = false;
		} else {
			if (word_is(t, "blocked"))
				c->strategy = STRAT_BLOCKED;
			else if (word_is(t, "striped"))
				c->strategy = STRAT_STRIPED;
			else
				good = false;
		}
		if (!good) {
			perr(p, vp,
			     loc ? "unknown location '%s' (use global, local or private)"
			         : "unknown strategy '%s' (use blocked or striped)",
			     t->s);
			return false;
		}
		if (p->k->target != TARGET_OPENCL) {
			perr(p, opos, "%s= is only for plan(target=opencl)", opt);
			return false;
		}
		return true;
	}
	perr(p, tpos(o),
	     "unknown cache option '%s' (use level, index, max_elements, layout, thrifty, "
	     "trigger_level, trigger_index, double_buffer, location or strategy)",
	     opt);
	return false;
}

/* `NAME = cache(SOURCE, opt=value, ...)` */
static bool parse_cache(parser *p)
{
	tok *nt = cur(p);
	ir_pos npos = tpos(nt);
	next(p);
	next(p); /* '=' */
	if (!at_word(p, "cache")) {
		char found[64];
		tok_desc(cur(p), found, sizeof found);
		perr(p, tpos(cur(p)), "expected cache(...), found %s", found);
		return false;
	}
	next(p);
	if (!expect(p, T_LPAREN))
		return false;
	ir_plan_item c;
	memset(&c, 0, sizeof c);
	c.kind = PL_CACHE;
	c.pos = npos;
	c.name = nt->s;
	c.name_pos = npos;
	c.thrifty = true;
	c.index_id = -1;
	c.trigger_index = -1;
	tok *st = cur(p);
	ir_pos spos;
	if (!expect_ident(p, "an array or cache name", &spos))
		return false;
	c.src_pos = spos;
	sym *s = sym_find(p, st->s);
	if (s && s->kind == SYM_ARRAY) {
		c.src_array = s->id;
		c.src_cache = -1;
		c.root_array = s->id;
	} else if (s && s->kind == SYM_CACHE) {
		c.src_array = -1;
		c.src_cache = s->id;
		c.root_array = p->k->plan[s->id].root_array;
	} else {
		perr(p, spos, "unknown array or cache '%s' in cache", st->s);
		return false;
	}
	bool ok = true;
	while (at(p, T_COMMA)) {
		next(p);
		if (!parse_cache_opt(p, &c)) {
			ok = false;
			break;
		}
	}
	if (ok && !expect(p, T_RPAREN))
		return false;
	if (!ok)
		return false;
	if (!c.where_opt.given) {
		perr(p, npos, "cache '%s' needs one of level=, index= or max_elements=", c.name);
		return true;
	}
	if (!name_free(p, c.name, npos) || too_many(p, p->k->nplan, npos, "plan items"))
		return true;
	ct_kernel *k = p->k;
	k->plan = pgrow(p, k->plan, &p->cap_plan, k->nplan + 1, sizeof *k->plan);
	k->plan[k->nplan] = c;
	sym_add(p, c.name, SYM_CACHE, k->nplan);
	k->nplan++;
	return true;
}

/* The n of `unroll(x, by=n)`: 2 .. IR_MAX_UNROLL_BY copies of the body per
 * iteration of the compiled loop. */
static bool parse_unroll_by(parser *p, int64_t *out)
{
	ir_pos vp = tpos(cur(p));
	if (!parse_int(p, false, "by", out, NULL))
		return false;
	if (*out < 2 || *out > IR_MAX_UNROLL_BY) {
		perr(p, vp, "unroll by=%lld: the factor must be 2 .. %d", (long long)*out, IR_MAX_UNROLL_BY);
		return false;
	}
	return true;
}

/* `vectorize(x, nontemporal=b)`, `unroll(x)`, `unroll(x, by=n)`, `parallelize(x, y, policy=..., max_threads=n, spmd=b)` */
static bool parse_loop_item(parser *p)
{
	tok *t = cur(p);
	ir_plan_item c;
	memset(&c, 0, sizeof c);
	c.pos = tpos(t);
	c.src_array = c.src_cache = c.root_array = -1;
	c.index_id = c.trigger_index = -1;
	if (word_is(t, "vectorize"))
		c.kind = PL_VECTORIZE;
	else if (word_is(t, "unroll"))
		c.kind = PL_UNROLL;
	else if (word_is(t, "parallelize"))
		c.kind = PL_PARALLELIZE;
	else {
		char found[64];
		tok_desc(t, found, sizeof found);
		perr(p, tpos(t),
		     "expected a plan item (NAME = cache(...), vectorize, unroll or parallelize), "
		     "found %s",
		     found);
		return false;
	}
	const char *what = t->s;
	next(p);
	if (!expect(p, T_LPAREN))
		return false;
	int ids[MAX_SCHED_ARGS];
	ir_pos pos[MAX_SCHED_ARGS];
	int n = 0;
	bool ok = true, opts = false;
	ir_opt_pos policy = {false, {0, 0}}, threads = {false, {0, 0}}, spmd = {false, {0, 0}};
	ir_opt_pos nontemporal = {false, {0, 0}}, by = {false, {0, 0}};
	for (;;) {
		tok *a = cur(p);
		ir_pos ap;
		if (!expect_ident(p, "an index name", &ap))
			return false;
		if (at(p, T_ASSIGN)) {
			next(p);
			opts = true;
			if (c.kind == PL_VECTORIZE && strcmp(a->s, "nontemporal") == 0) {
				if (!opt_once(p, &nontemporal, a->s, ap) || !parse_bool(p, a->s, &c.nontemporal))
					return false;
			} else if (c.kind == PL_VECTORIZE) {
				perr(p, ap, "unknown vectorize option '%s' (use nontemporal)", a->s);
				return false;
			} else if (c.kind == PL_UNROLL && strcmp(a->s, "by") == 0) {
				if (!opt_once(p, &by, a->s, ap) || !parse_unroll_by(p, &c.unroll_by))
					return false;
			} else if (c.kind == PL_UNROLL) {
				perr(p, ap, "unknown unroll option '%s' (use by)", a->s);
				return false;
			} else if (strcmp(a->s, "policy") == 0) {
				if (!opt_once(p, &policy, a->s, ap))
					return false;
				tok *v = cur(p);
				ir_pos vp;
				if (!expect_ident(p, "a policy", &vp))
					return false;
				if (word_is(v, "static"))
					c.policy = POLICY_STATIC;
				else if (word_is(v, "dynamic"))
					c.policy = POLICY_DYNAMIC;
				else {
					perr(p, vp, "unknown policy '%s' (use static or dynamic)",
					     v->s);
					return false;
				}
			} else if (strcmp(a->s, "max_threads") == 0) {
				if (!opt_once(p, &threads, a->s, ap))
					return false;
				ir_pos vp = tpos(cur(p));
				if (!parse_int(p, false, "max_threads", &c.max_threads, NULL))
					return false;
				if (c.max_threads < 1) {
					perr(p, vp, "max_threads must be at least 1, not %lld",
					     (long long)c.max_threads);
					return false;
				}
			} else if (strcmp(a->s, "spmd") == 0) {
				if (!opt_once(p, &spmd, a->s, ap) || !parse_bool(p, a->s, &c.spmd))
					return false;
			} else {
				perr(p, ap,
				     "unknown parallelize option '%s' (use policy, max_threads or "
				     "spmd)",
				     a->s);
				return false;
			}
		} else {
			if (opts) {
				perr(p, ap, "indices must come before the options of %s", what);
				return false;
			}
			if (n >= MAX_SCHED_ARGS) {
				perr(p, ap, "too many indices (at most %d)", MAX_SCHED_ARGS);
				return false;
			}
			ids[n] = find_index(p, a, what);
			if (ids[n] < 0)
				ok = false;
			for (int b = 0; b < n && ok; b++)
				if (ids[b] == ids[n]) {
					perr(p, ap, "index '%s' appears twice in %s", a->s, what);
					ok = false;
				}
			pos[n++] = ap;
		}
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!expect(p, T_RPAREN))
			return false;
		break;
	}
	if (!ok)
		return true;
	if (n == 0) {
		perr(p, c.pos, "%s needs an index", what);
		return true;
	}
	if (c.kind != PL_PARALLELIZE && n != 1) {
		perr(p, pos[1], "%s takes one index", what);
		return true;
	}
	if (c.kind == PL_PARALLELIZE && p->k->target == TARGET_OPENCL && n > 3) {
		perr(p, pos[3], "opencl parallelizes at most 3 indices (work-group dimensions)");
		return true;
	}
	ct_kernel *k = p->k;
	if (too_many(p, k->nplan, c.pos, "plan items"))
		return true;
	c.n = n;
	c.idx = palloc(p, sizeof *c.idx * (size_t)n);
	c.idx_pos = palloc(p, sizeof *c.idx_pos * (size_t)n);
	memcpy(c.idx, ids, sizeof *c.idx * (size_t)n);
	memcpy(c.idx_pos, pos, sizeof *c.idx_pos * (size_t)n);
	k->plan = pgrow(p, k->plan, &p->cap_plan, k->nplan + 1, sizeof *k->plan);
	k->plan[k->nplan++] = c;
	return true;
}

static bool parse_plan_item(parser *p)
{
	if (cur(p)->kind == T_IDENT && peek(p, 1)->kind == T_ASSIGN)
		return parse_cache(p);
	return parse_loop_item(p);
}

static void parse_plan(parser *p)
{
	tok *t = cur(p);
	next(p);
	if (p->seen_plan)
		perr(p, tpos(t), "second 'plan' block (write one)");
	p->seen_plan = true;
	p->after_logic = true;
	p->k->has_plan = true;
	p->k->plan_pos = tpos(t);
	p->k->target = TARGET_HOST;
	if (at(p, T_LPAREN)) {
		next(p);
		tok *o = cur(p);
		ir_pos op;
		if (!expect_ident(p, "'target'", &op)) {
			sync(p, p->i);
			return;
		}
		if (strcmp(o->s, "target") != 0) {
			perr(p, op, "unknown plan option '%s' (use target=host or target=opencl)",
			     o->s);
			sync(p, p->i);
			return;
		}
		if (!expect(p, T_ASSIGN)) {
			sync(p, p->i);
			return;
		}
		tok *v = cur(p);
		ir_pos vp;
		if (!expect_ident(p, "a target", &vp)) {
			sync(p, p->i);
			return;
		}
		if (word_is(v, "host"))
			p->k->target = TARGET_HOST;
		else if (word_is(v, "opencl"))
			p->k->target = TARGET_OPENCL;
		else
			perr(p, vp, "unknown target '%s' (use host or opencl)", v->s);
		if (!expect(p, T_RPAREN)) {
			sync(p, p->i);
			return;
		}
	}
	parse_block_items(p, t, "plan", parse_plan_item);
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
			perr(p, tpos(t), "expected a new line or ';' before the next item");
			sync(p, st);
			if (p->i == st)
				next(p);
			continue;
		}
		if (!p->k->name && t->kind != T_KERNEL && !p->kernel_err) {
			perr(p, tpos(t), "the file must start with 'kernel NAME'");
			p->kernel_err = true;
		}
		int before = p->nerr;
		switch (t->kind) {
		case T_KERNEL: parse_kernel_line(p); break;
		case T_PARAM: parse_param(p); break;
		case T_ARRAY: parse_array(p); break;
		case T_SCHEDULE: parse_schedule(p); break;
		case T_PLAN: parse_plan(p); break;
		case T_RBRACE:
			perr(p, tpos(t), "unmatched '}'");
			next(p);
			break;
		default:
			if (p->after_logic &&
			    (t->kind == T_FOR || t->kind == T_IF || t->kind == T_IDENT)) {
				perr(p, tpos(t),
				     "statements must come before 'schedule' and 'plan'");
				break;
			}
			ir_node *n = parse_stmt(p, NULL);
			if (n)
				list_add(p, &top, n);
		}
		if (p->nerr > before)
			sync(p, st);
		if (p->i == st)
			next(p); /* always make progress (a stray '}' stops sync) */
	}
	p->k->nbody = top.n;
	p->k->body = top.v;
	if (!p->k->name && !p->kernel_err)
		perr(p, tpos(&p->t[0]), "the file must start with 'kernel NAME'");
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
