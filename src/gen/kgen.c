/* kgen.c: the generator context: declarations, scopes, inline sections, formatting. */
#include "gen/kgen.h"

#include <stdio.h>
#include <string.h>
#include <xxhash.h>

/*
 * Representation. Each function body is a linked list of items (lines with
 * an absolute depth, blank-line requests, invisible markers), so that code
 * can be inserted after the fact at a marker: hoisted declarations before a
 * loop header, `{` / `}` around an ended section. Indentation and blank
 * lines are decided only when the text is rendered. Everything lives in one
 * arena, freed at reset: no per-object frees, no leaks on error paths.
 */

/* Far above what a checked kernel makes: plan/edges.c refuses a loop
 * nested deeper than PLAN_MAX_DEPTH (256) tree levels, at the loop, and
 * each level opens at most a few blocks here. */
enum { KG_MAX_DEPTH = 1024 };

/* What generators get back after an error, so they can go on blindly. */
#define KG_ERR_NAME "kg_error"

typedef enum { IT_LINE, IT_BLANK, IT_MARK } it_kind;

typedef struct kg_item {
	struct kg_item *next;
	const char *text; /* IT_LINE: without indentation or newline */
	int depth;
	it_kind kind;
} kg_item;

typedef struct kg_sec kg_sec;
typedef struct kg_scope kg_scope;

/* A statement waiting in a merge section. */
typedef struct kg_qstmt {
	struct kg_qstmt *next;
	const char *text;
	const char **defs, **uses;
	int ndefs, nuses;
	int rank; /* kg_stype: fetch < arith < store */
	int depth;
} kg_qstmt;

struct kg_sec {
	kg_sec *parent;
	kg_order order;
	int flush;
	bool open, wrapped;
	bool want_wrap;       /* an earlier section was enclosed because of this one */
	kg_scope *base;       /* the scope current when it began */
	kg_item *start, *end; /* markers around its code */
	/* the variables declared while it was open, which are exactly those of
	 * its region (sections nest strictly): after vbefore, seq below vend */
	struct kg_var *vbefore;
	long vend;
	kg_qstmt *qhead, *qtail;
	int nq, ngroups, last_rank;
};

struct kg_scope {
	kg_scope *parent;
	kg_sec *owner; /* the section that opened it */
	int depth;     /* of the lines inside */
	bool open;
	kg_item *hoist; /* hoisted declarations go after this item, before the header */
	long var_seq;   /* variables numbered from here on were declared inside */
};

typedef struct kg_var {
	struct kg_var *prev, *next;
	struct kg_var *req_next, *name_next; /* hash chains, newest first */
	const char *req;                     /* name asked for */
	const char *name;                    /* name in code */
	const char *ctype;
	const char *init; /* still part of the declaration item, or NULL */
	kg_share share;
	kg_sec *sec;
	kg_scope *scope;
	kg_item *decl; /* NULL for parameters */
	long seq;
	bool alive; /* false once its section was enclosed in { } */
} kg_var;

typedef struct kg_func kg_func;

typedef struct kg_edge {
	struct kg_edge *next;
	kg_func *callee;
} kg_edge;

enum { FN_DECLARED, FN_BUSY, FN_DONE };

struct kg_func {
	kg_func *next;
	const char *name, *proto;
	unsigned flags;
	kg_gen_fn gen;
	void *ud;
	int state;
	bool used, fwd;
	int mark;       /* ordering walk: 0 new, 1 on the path, 2 placed */
	kg_func *onext; /* output order */
	kg_item head;   /* sentinel of the body items */
	kg_item *tail;
	kg_edge *uses, *uses_tail;
};

/* A function body being written; bodies nest when a helper is generated
 * while its caller is being written. */
typedef struct kg_frame {
	struct kg_frame *prev;
	kg_func *fn;
	bool from_gen;
	kg_sec *root_sec, *sec;
	kg_scope *root_scope, *scope;
	kg_var *vhead, *vtail;
	long nvars;
	/* variables by requested and by actual name, so that declaring stays
	 * linear in the number of variables (backends unroll thousands) */
	kg_var **by_req, **by_name;
	size_t nbuckets;
} kg_frame;

struct kg_ctx {
	ct_ctx *ctx;
	unsigned flags;
	ct_arena arena;
	ct_status status;
	char msg[512];
	bool taken;
	kg_func *funcs, *funcs_tail;
	kg_item pre_head;
	kg_item *pre_tail;
	kg_frame *frame;
	char *out;
	size_t len, cap;
};

/* ------------------------------------------------------------ errors, memory */

static ct_status kg_fail(kg_ctx *kg, ct_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record the first error only: it is usually the cause of the others. */
static ct_status kg_fail(kg_ctx *kg, ct_status st, const char *fmt, ...)
{
	if (kg->status != CT_OK)
		return kg->status;
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(kg->msg, sizeof kg->msg, "kgen: ");
	vsnprintf(kg->msg + n, sizeof kg->msg - (size_t)n, fmt, ap);
	va_end(ap);
	kg->status = st;
	ct_error(kg->ctx, st, "%s", kg->msg);
	return st;
}

static void *kg_mem(kg_ctx *kg, size_t n)
{
	if (kg->status != CT_OK)
		return NULL;
	void *p = ct_arena_alloc(&kg->arena, n);
	if (!p)
		kg_fail(kg, CT_ERR_NOMEM, "out of memory");
	return p;
}

static char *kg_strndup(kg_ctx *kg, const char *s, size_t n)
{
	char *d = kg_mem(kg, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static char *kg_strdup(kg_ctx *kg, const char *s)
{
	return kg_strndup(kg, s, strlen(s));
}

static char *kg_vfmt(kg_ctx *kg, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		kg_fail(kg, CT_ERR_USAGE, "bad format \"%s\"", fmt);
		return NULL;
	}
	char *d = kg_mem(kg, (size_t)n + 1);
	if (d)
		vsnprintf(d, (size_t)n + 1, fmt, ap);
	return d;
}

static char *kg_fmt(kg_ctx *kg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *kg_fmt(kg_ctx *kg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = kg_vfmt(kg, fmt, ap);
	va_end(ap);
	return s;
}

/* The frame being written, or NULL with a usage error naming the caller. */
static kg_frame *need_frame(kg_ctx *kg, const char *what)
{
	if (kg->status != CT_OK)
		return NULL;
	if (kg->taken) {
		kg_fail(kg, CT_ERR_USAGE, "%s after kg_take", what);
		return NULL;
	}
	if (!kg->frame)
		kg_fail(kg, CT_ERR_USAGE, "%s outside a function body", what);
	return kg->frame;
}

static bool usable(kg_ctx *kg, const char *what)
{
	if (kg->status != CT_OK)
		return false;
	if (kg->taken) {
		kg_fail(kg, CT_ERR_USAGE, "%s after kg_take", what);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ items */

static kg_item *item_new(kg_ctx *kg, it_kind kind, const char *text, int depth)
{
	kg_item *it = kg_mem(kg, sizeof *it);
	if (it) {
		it->kind = kind;
		it->text = text;
		it->depth = depth;
	}
	return it;
}

static void insert_after(kg_func *fn, kg_item *pos, kg_item *it)
{
	it->next = pos->next;
	pos->next = it;
	if (fn->tail == pos)
		fn->tail = it;
}

static kg_item *emit(kg_ctx *kg, kg_frame *fr, it_kind kind, const char *text, int depth)
{
	kg_item *it = item_new(kg, kind, text, depth);
	if (it)
		insert_after(fr->fn, fr->fn->tail, it);
	return it;
}

/* Emit text line by line (a statement may span lines); returns the first. */
static kg_item *emit_lines(kg_ctx *kg, kg_frame *fr, const char *text, int depth)
{
	kg_item *first = NULL;
	const char *p = text;
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (!nl && n == 0 && p != text)
			break; /* a trailing newline ends the text */
		kg_item *it = n ? emit(kg, fr, IT_LINE, kg_strndup(kg, p, n), depth)
		                : emit(kg, fr, IT_BLANK, NULL, depth);
		if (!it)
			return NULL;
		if (!first)
			first = it;
		if (!nl)
			break;
		p = nl + 1;
	}
	return first;
}

/* ------------------------------------------------------------ names */

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Split a list of names separated by spaces or commas. */
static const char **split_names(kg_ctx *kg, const char *s, int *n)
{
	*n = 0;
	if (!s)
		return NULL;
	int cap = 0;
	for (const char *p = s; *p; p++)
		if (is_ident_char(*p) && (p == s || !is_ident_char(p[-1])))
			cap++;
	if (!cap)
		return NULL;
	const char **v = kg_mem(kg, (size_t)cap * sizeof *v);
	if (!v)
		return NULL;
	const char *p = s;
	while (*p) {
		while (*p && (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n'))
			p++;
		const char *q = p;
		while (*q && *q != ' ' && *q != ',' && *q != '\t' && *q != '\n')
			q++;
		if (q > p && *n < cap)
			v[(*n)++] = kg_strndup(kg, p, (size_t)(q - p));
		p = q;
	}
	return v;
}

/* "T name[dims] = init;" from a type that may carry an array suffix. */
static char *decl_text(kg_ctx *kg, const char *ctype, const char *name, const char *init)
{
	const char *lb = strchr(ctype, '[');
	size_t bn = lb ? (size_t)(lb - ctype) : strlen(ctype);
	while (bn && ctype[bn - 1] == ' ')
		bn--;
	const char *sep = bn && ctype[bn - 1] == '*' ? "" : " ";
	return kg_fmt(kg, "%.*s%s%s%s%s%s;", (int)bn, ctype, sep, name, lb ? lb : "",
	              init ? " = " : "", init ? init : "");
}

/* ------------------------------------------------------------ sections and scopes */

static bool is_ancestor(const kg_sec *a, const kg_sec *s)
{
	for (s = s ? s->parent : NULL; s; s = s->parent)
		if (s == a)
			return true;
	return false;
}

/* The first variable of e's region; whether v is still in it. */
static struct kg_var *region_first(const kg_frame *fr, const kg_sec *e)
{
	return e->vbefore ? e->vbefore->next : fr->vhead;
}

static bool in_region(const struct kg_var *v, const kg_sec *e)
{
	return v && (e->open || v->seq < e->vend);
}

static bool visible(const kg_var *v)
{
	return v->alive && v->scope->open;
}

/* The section whose queue receives the current section's statements. */
static kg_sec *queue_owner(kg_sec *s)
{
	while (s->order == KG_INHERIT && s->parent)
		s = s->parent;
	return s;
}

static bool names_meet(const char **a, int na, const char **b, int nb)
{
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (!strcmp(a[i], b[j]))
				return true;
	return false;
}

/* Whether s (later) must stay after t (earlier): read after write, write
 * after read, write after write. */
static bool depends(const kg_qstmt *t, const kg_qstmt *s)
{
	return names_meet(s->uses, s->nuses, t->defs, t->ndefs) ||
	       names_meet(s->defs, s->ndefs, t->uses, t->nuses) ||
	       names_meet(s->defs, s->ndefs, t->defs, t->ndefs);
}

/* Emit the queued statements of q: repeatedly the ready statement (all its
 * predecessors emitted) of the lowest type, earliest first. Quadratic in
 * the queue length, which the flush size bounds. */
static void queue_flush(kg_ctx *kg, kg_frame *fr, kg_sec *q)
{
	int n = q->nq;
	kg_qstmt *head = q->qhead;
	q->qhead = q->qtail = NULL;
	q->nq = q->ngroups = 0;
	q->last_rank = -1;
	if (n == 0 || kg->status != CT_OK)
		return;
	kg_qstmt **st = kg_mem(kg, (size_t)n * sizeof *st);
	int *npred = kg_mem(kg, (size_t)n * sizeof *npred);
	int *nsucc = kg_mem(kg, (size_t)n * sizeof *nsucc);
	int *first = kg_mem(kg, ((size_t)n + 1) * sizeof *first);
	bool *done = kg_mem(kg, (size_t)n * sizeof *done);
	if (!done)
		return;
	int i = 0;
	for (kg_qstmt *s = head; s && i < n; s = s->next)
		st[i++] = s;
	size_t nedges = 0;
	for (int b = 0; b < n; b++)
		for (int a = 0; a < b; a++)
			if (depends(st[a], st[b])) {
				npred[b]++;
				nsucc[a]++;
				nedges++;
			}
	int *succ = kg_mem(kg, (nedges ? nedges : 1) * sizeof *succ);
	if (!succ)
		return;
	first[0] = 0;
	for (int a = 0; a < n; a++)
		first[a + 1] = first[a] + nsucc[a];
	memset(nsucc, 0, (size_t)n * sizeof *nsucc);
	for (int b = 0; b < n; b++)
		for (int a = 0; a < b; a++)
			if (depends(st[a], st[b]))
				succ[first[a] + nsucc[a]++] = b;
	for (int k = 0; k < n; k++) {
		int best = -1;
		for (int a = 0; a < n; a++)
			if (!done[a] && npred[a] == 0 && (best < 0 || st[a]->rank < st[best]->rank))
				best = a;
		if (best < 0)
			break; /* cannot happen: edges only go forward */
		done[best] = true;
		emit_lines(kg, fr, st[best]->text, st[best]->depth);
		for (int e = first[best]; e < first[best + 1]; e++)
			npred[succ[e]]--;
	}
}

/* Emit whatever the current section's queue holds: before anything that
 * must not be reordered with it. */
static void fence(kg_ctx *kg, kg_frame *fr)
{
	queue_flush(kg, fr, queue_owner(fr->sec));
}

static bool has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(s, w); p; p = strstr(p + 1, w))
		if ((p == s || !is_ident_char(p[-1])) && !is_ident_char(p[n]))
			return true;
	return false;
}

/* Whether `name = value;` is valid for the type: not an array, not const
 * itself (a pointer to const is fine, a const pointer is not). */
static bool assignable(const char *ctype)
{
	if (strchr(ctype, '['))
		return false;
	const char *star = strrchr(ctype, '*');
	return !has_word(star ? star : ctype, "const");
}

/* Whether the declaration can become `T name;` plus `name = init;`. */
static bool splittable(const kg_var *v)
{
	return !v->init || assignable(v->ctype);
}

/* Whether ended section e can be enclosed in { }: its shared variables
 * declared at its base level must then move before the `{`, which needs
 * their declaration and initialization to be separable. */
static bool wrap_ok(const kg_frame *fr, const kg_sec *e)
{
	if (!e || e->open || e->wrapped || !e->parent || e->order == KG_INHERIT)
		return false;
	for (const kg_var *v = region_first(fr, e); in_region(v, e); v = v->next)
		if (v->alive && v->scope == e->base && v->share != KG_PRIVATE && !splittable(v))
			return false;
	return true;
}

/* Enclose ended section e in { }: its private variables end there, freeing
 * their names; shared ones are declared before the `{` and keep living. */
static void wrap(kg_ctx *kg, kg_frame *fr, kg_sec *e)
{
	int depth = e->base->depth;
	kg_item *at = e->start;
	for (kg_var *v = region_first(fr, e); in_region(v, e); v = v->next) {
		if (!v->alive || v->scope != e->base)
			continue;
		if (v->share == KG_PRIVATE) {
			v->alive = false;
			continue;
		}
		kg_item *d = item_new(kg, IT_LINE, decl_text(kg, v->ctype, v->name, NULL), depth);
		if (!d)
			return;
		insert_after(fr->fn, at, d);
		at = d;
		if (v->init) {
			v->decl->text = kg_fmt(kg, "%s = %s;", v->name, v->init);
		} else {
			v->decl->kind = IT_MARK;
			v->decl->text = NULL;
		}
		v->decl = d;
		v->init = NULL;
	}
	kg_item *open = item_new(kg, IT_LINE, "{", depth);
	kg_item *close = item_new(kg, IT_LINE, "}", depth);
	if (!close)
		return;
	insert_after(fr->fn, at, open);
	for (kg_item *it = open->next; it && it != e->end; it = it->next)
		it->depth++;
	insert_after(fr->fn, e->end, close);
	e->wrapped = true;
}

/* The ended section whose enclosing in { } would end private variable x. */
static kg_sec *retiring_section(const kg_var *x)
{
	if (x->share != KG_PRIVATE)
		return NULL;
	for (kg_sec *s = x->sec; s && !s->open; s = s->parent)
		if (s->base == x->scope)
			return s;
	return NULL;
}

static bool has_base_privates(const kg_frame *fr, const kg_sec *e)
{
	for (const kg_var *v = region_first(fr, e); in_region(v, e); v = v->next)
		if (v->alive && v->share == KG_PRIVATE && v->scope == e->base)
			return true;
	return false;
}

/* ------------------------------------------------------------ lifetime */

kg_ctx *kg_new(ct_ctx *ctx, unsigned flags)
{
	if (!ctx)
		return NULL;
	kg_ctx *kg = ct_alloc(ctx, sizeof *kg);
	if (!kg)
		return NULL;
	kg->ctx = ctx;
	kg->flags = flags;
	ct_arena_init(&kg->arena, ctx);
	kg->pre_tail = &kg->pre_head;
	return kg;
}

void kg_reset(kg_ctx *kg)
{
	if (!kg)
		return;
	ct_ctx *ctx = kg->ctx;
	unsigned flags = kg->flags;
	ct_arena_free(&kg->arena);
	ct_free(ctx, kg->out);
	memset(kg, 0, sizeof *kg);
	kg->ctx = ctx;
	kg->flags = flags;
	ct_arena_init(&kg->arena, ctx);
	kg->pre_tail = &kg->pre_head;
}

void kg_free(kg_ctx *kg)
{
	if (!kg)
		return;
	ct_arena_free(&kg->arena);
	ct_free(kg->ctx, kg->out);
	ct_free(kg->ctx, kg);
}

ct_status kg_status(const kg_ctx *kg)
{
	return kg ? kg->status : CT_ERR_USAGE;
}
bool kg_is_opencl(const kg_ctx *kg)
{
	return kg && (kg->flags & KG_OPENCL);
}
int kg_depth(const kg_ctx *kg)
{
	return kg && kg->frame ? kg->frame->scope->depth : 0;
}

/* ------------------------------------------------------------ functions */

ct_status kg_preamble(kg_ctx *kg, const char *fmt, ...)
{
	if (!usable(kg, "kg_preamble"))
		return kg->status;
	va_list ap;
	va_start(ap, fmt);
	char *s = kg_vfmt(kg, fmt, ap);
	va_end(ap);
	kg_item *it = item_new(kg, IT_LINE, s, 0);
	if (it && s) {
		kg->pre_tail->next = it;
		kg->pre_tail = it;
	}
	return kg->status;
}

static kg_func *find_func(const kg_ctx *kg, const char *name)
{
	for (kg_func *f = kg->funcs; f; f = f->next)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

ct_status kg_func_declare(kg_ctx *kg, const char *name, unsigned flags, const char *proto,
                          kg_gen_fn gen, void *ud)
{
	if (!usable(kg, "kg_func_declare"))
		return kg->status;
	if (!name || !*name || !proto || !*proto)
		return kg_fail(kg, CT_ERR_USAGE, "kg_func_declare needs a name and a prototype");
	kg_func *f = find_func(kg, name);
	if (f) {
		if (!strcmp(f->proto, proto) && f->flags == flags && f->gen == gen && f->ud == ud)
			return CT_OK;
		return kg_fail(kg, CT_ERR_USAGE, "function '%s' declared twice differently", name);
	}
	f = kg_mem(kg, sizeof *f);
	if (!f)
		return kg->status;
	f->name = kg_strdup(kg, name);
	f->proto = kg_strdup(kg, proto);
	f->flags = flags;
	f->gen = gen;
	f->ud = ud;
	f->tail = &f->head;
	if (kg->funcs_tail)
		kg->funcs_tail->next = f;
	else
		kg->funcs = f;
	kg->funcs_tail = f;
	return kg->status;
}

static size_t bucket(const kg_frame *fr, const char *name)
{
	return (size_t)(XXH3_64bits(name, strlen(name)) & (fr->nbuckets - 1));
}

static void index_var(kg_frame *fr, kg_var *v)
{
	size_t h = bucket(fr, v->req);
	v->req_next = fr->by_req[h];
	fr->by_req[h] = v;
	h = bucket(fr, v->name);
	v->name_next = fr->by_name[h];
	fr->by_name[h] = v;
}

/* Room for one more variable: at most one per bucket on average. Rebuilt
 * oldest first, so that the chains stay newest first. */
static bool index_room(kg_ctx *kg, kg_frame *fr)
{
	if ((size_t)fr->nvars < fr->nbuckets)
		return true;
	size_t nb = fr->nbuckets ? 2 * fr->nbuckets : 64;
	kg_var **r = kg_mem(kg, nb * sizeof *r);
	kg_var **n = kg_mem(kg, nb * sizeof *n);
	if (!n)
		return false;
	fr->by_req = r;
	fr->by_name = n;
	fr->nbuckets = nb;
	for (kg_var *v = fr->vhead; v; v = v->next)
		index_var(fr, v);
	return true;
}

/* The chains holding the variables requested as / named `name`. */
static kg_var *by_req(const kg_frame *fr, const char *name)
{
	return fr->nbuckets ? fr->by_req[bucket(fr, name)] : NULL;
}

static kg_var *by_name(const kg_frame *fr, const char *name)
{
	return fr->nbuckets ? fr->by_name[bucket(fr, name)] : NULL;
}

static kg_var *var_add(kg_ctx *kg, kg_frame *fr, const char *req, const char *name,
                       const char *ctype, kg_share share, kg_scope *scope)
{
	kg_var *v = index_room(kg, fr) ? kg_mem(kg, sizeof *v) : NULL;
	if (!v)
		return NULL;
	v->req = req;
	v->name = name;
	v->ctype = ctype;
	v->share = share;
	v->sec = fr->sec;
	v->scope = scope;
	v->seq = fr->nvars++;
	v->alive = true;
	v->prev = fr->vtail;
	if (fr->vtail)
		fr->vtail->next = v;
	else
		fr->vhead = v;
	fr->vtail = v;
	index_var(fr, v);
	return v;
}

/* Register the parameters of the prototype as variables of the body, so
 * that no declaration clashes with them and sections can share them. A
 * parameter is its last identifier (before any array suffix); the text
 * before is its type. Unnamed parameters are skipped. */
static void add_params(kg_ctx *kg, kg_frame *fr)
{
	const char *proto = fr->fn->proto, *name = fr->fn->name;
	size_t nl = strlen(name);
	const char *p = proto;
	for (;;) {
		p = strstr(p, name);
		if (!p)
			return;
		bool starts = p == proto || !is_ident_char(p[-1]);
		const char *q = p + nl;
		while (*q == ' ')
			q++;
		if (starts && *q == '(') {
			p = q + 1;
			break;
		}
		p += nl;
	}
	while (*p && *p != ')') {
		int level = 0;
		const char *q = p;
		while (*q && (level > 0 || (*q != ',' && *q != ')'))) {
			if (*q == '(' || *q == '[')
				level++;
			else if (*q == ')' || *q == ']')
				level--;
			q++;
		}
		const char *e = q; /* [p, e) is one parameter */
		while (e > p && e[-1] == ' ')
			e--;
		const char *arr = e;
		while (arr > p && arr[-1] == ']') { /* an array suffix goes with the type */
			while (arr > p && arr[-1] != '[')
				arr--;
			if (arr > p)
				arr--;
			while (arr > p && arr[-1] == ' ')
				arr--;
		}
		const char *id = arr;
		while (id > p && is_ident_char(id[-1]))
			id--;
		const char *t = id;
		while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		while (p < t && *p == ' ')
			p++;
		if (id < arr && t > p) { /* a type and a name */
			char *ty = kg_fmt(kg, "%.*s%.*s", (int)(t - p), p, (int)(e - arr), arr);
			char *nm = kg_strndup(kg, id, (size_t)(arr - id));
			if (!ty || !nm)
				return;
			var_add(kg, fr, nm, nm, ty, KG_SHARE_BOTH, fr->root_scope);
		}
		p = *q == ',' ? q + 1 : q;
	}
}

static kg_frame *frame_push(kg_ctx *kg, kg_func *fn, bool from_gen)
{
	kg_frame *fr = kg_mem(kg, sizeof *fr);
	kg_sec *sec = kg_mem(kg, sizeof *sec);
	kg_scope *sc = kg_mem(kg, sizeof *sc);
	if (!sc)
		return NULL;
	sec->order = KG_DIRECT;
	sec->open = true;
	sec->base = sc;
	sec->last_rank = -1;
	sc->owner = sec;
	sc->depth = 1;
	sc->open = true;
	fr->fn = fn;
	fr->from_gen = from_gen;
	fr->root_sec = fr->sec = sec;
	fr->root_scope = fr->scope = sc;
	fr->prev = kg->frame;
	kg->frame = fr;
	fn->state = FN_BUSY;
	add_params(kg, fr);
	return fr;
}

static void frame_pop(kg_ctx *kg, kg_frame *fr)
{
	if (kg->status != CT_OK)
		return;
	if (fr->sec != fr->root_sec) {
		kg_fail(kg, CT_ERR_USAGE, "function '%s' ends inside a section", fr->fn->name);
		return;
	}
	if (fr->scope != fr->root_scope) {
		kg_fail(kg, CT_ERR_USAGE, "function '%s' ends with an open block", fr->fn->name);
		return;
	}
	fence(kg, fr);
	fr->fn->state = FN_DONE;
	kg->frame = fr->prev;
}

/* Produce the body of f with its generator, suspending the current body. */
static void generate(kg_ctx *kg, kg_func *f)
{
	kg_frame *fr = frame_push(kg, f, true);
	if (!fr)
		return;
	f->gen(kg, f->ud);
	if (kg->status != CT_OK)
		return;
	if (kg->frame != fr) {
		kg_fail(kg, CT_ERR_USAGE, "generator of '%s' left a function body open", f->name);
		return;
	}
	frame_pop(kg, fr);
}

ct_status kg_func_begin(kg_ctx *kg, const char *name)
{
	if (!usable(kg, "kg_func_begin"))
		return kg->status;
	kg_func *f = name ? find_func(kg, name) : NULL;
	if (!f)
		return kg_fail(kg, CT_ERR_USAGE, "kg_func_begin of undeclared function '%s'",
		               name ? name : "(null)");
	if (f->gen)
		return kg_fail(kg, CT_ERR_USAGE, "function '%s' has a body generator", name);
	if (f->state != FN_DECLARED)
		return kg_fail(kg, CT_ERR_USAGE, "body of function '%s' begun twice", name);
	frame_push(kg, f, false);
	return kg->status;
}

ct_status kg_func_end(kg_ctx *kg)
{
	kg_frame *fr = need_frame(kg, "kg_func_end");
	if (!fr)
		return kg->status;
	if (fr->from_gen)
		return kg_fail(kg, CT_ERR_USAGE, "kg_func_end without kg_func_begin in '%s'",
		               fr->fn->name);
	frame_pop(kg, fr);
	return kg->status;
}

const char *kg_func_use(kg_ctx *kg, const char *name)
{
	if (!usable(kg, "kg_func_use"))
		return KG_ERR_NAME;
	kg_func *f = name ? find_func(kg, name) : NULL;
	if (!f) {
		kg_fail(kg, CT_ERR_USAGE, "use of undeclared function '%s'",
		        name ? name : "(null)");
		return KG_ERR_NAME;
	}
	f->used = true;
	if (kg->frame) {
		kg_func *caller = kg->frame->fn;
		bool known = false;
		for (kg_edge *e = caller->uses; e && !known; e = e->next)
			if (e->callee == f)
				known = true;
		if (!known) {
			kg_edge *e = kg_mem(kg, sizeof *e);
			if (!e)
				return KG_ERR_NAME;
			e->callee = f;
			if (caller->uses_tail)
				caller->uses_tail->next = e;
			else
				caller->uses = e;
			caller->uses_tail = e;
		}
	}
	if (f->gen && f->state == FN_DECLARED)
		generate(kg, f);
	return kg->status == CT_OK ? f->name : KG_ERR_NAME;
}

/* ------------------------------------------------------------ code */

static ct_status block_open(kg_ctx *kg, const char *what, const char *header)
{
	kg_frame *fr = need_frame(kg, what);
	if (!fr || !header)
		return kg->status;
	if (fr->scope->depth >= KG_MAX_DEPTH)
		return kg_fail(kg, CT_ERR_LIMIT, "blocks nested deeper than %d", KG_MAX_DEPTH);
	fence(kg, fr);
	int depth = fr->scope->depth;
	kg_item *mark = emit(kg, fr, IT_MARK, NULL, depth);
	const char *line = *header ? kg_fmt(kg, "%s {", header) : "{";
	kg_scope *sc = kg_mem(kg, sizeof *sc);
	if (!sc || !line || !emit(kg, fr, IT_LINE, line, depth))
		return kg->status;
	sc->parent = fr->scope;
	sc->owner = fr->sec;
	sc->depth = depth + 1;
	sc->open = true;
	sc->hoist = mark;
	sc->var_seq = fr->nvars;
	fr->scope = sc;
	return kg->status;
}

ct_status kg_block_open(kg_ctx *kg, const char *fmt, ...)
{
	if (!usable(kg, "kg_block_open"))
		return kg->status;
	va_list ap;
	va_start(ap, fmt);
	char *h = kg_vfmt(kg, fmt, ap);
	va_end(ap);
	return block_open(kg, "kg_block_open", h);
}

ct_status kg_block_bare(kg_ctx *kg)
{
	return block_open(kg, "kg_block_bare", "");
}

/* The innermost block, if the current section may close it. */
static kg_scope *closable(kg_ctx *kg, kg_frame *fr, const char *what)
{
	kg_scope *sc = fr->scope;
	if (sc == fr->root_scope) {
		kg_fail(kg, CT_ERR_USAGE, "%s without an open block", what);
		return NULL;
	}
	if (sc->owner != fr->sec) {
		kg_fail(kg, CT_ERR_USAGE, "%s of a block opened outside the current section", what);
		return NULL;
	}
	return sc;
}

ct_status kg_block_next(kg_ctx *kg, const char *fmt, ...)
{
	kg_frame *fr = need_frame(kg, "kg_block_next");
	if (!fr)
		return kg->status;
	kg_scope *sc = closable(kg, fr, "kg_block_next");
	if (!sc)
		return kg->status;
	va_list ap;
	va_start(ap, fmt);
	char *h = kg_vfmt(kg, fmt, ap);
	va_end(ap);
	fence(kg, fr);
	kg_scope *nx = kg_mem(kg, sizeof *nx);
	char *line = h ? kg_fmt(kg, "} %s {", h) : NULL;
	if (!nx || !line || !emit(kg, fr, IT_LINE, line, sc->depth - 1))
		return kg->status;
	*nx = *sc;
	sc->open = false;
	fr->scope = nx;
	return kg->status;
}

ct_status kg_block_close(kg_ctx *kg)
{
	kg_frame *fr = need_frame(kg, "kg_block_close");
	if (!fr)
		return kg->status;
	kg_scope *sc = closable(kg, fr, "kg_block_close");
	if (!sc)
		return kg->status;
	fence(kg, fr);
	sc->open = false;
	fr->scope = sc->parent;
	emit(kg, fr, IT_LINE, "}", sc->parent->depth);
	return kg->status;
}

ct_status kg_stmt(kg_ctx *kg, kg_stype type, const char *defs, const char *uses, const char *fmt,
                  ...)
{
	kg_frame *fr = need_frame(kg, "kg_stmt");
	if (!fr)
		return kg->status;
	if (type < KG_FETCH || type > KG_OTHER)
		return kg_fail(kg, CT_ERR_USAGE, "bad statement type %d", (int)type);
	va_list ap;
	va_start(ap, fmt);
	char *text = kg_vfmt(kg, fmt, ap);
	va_end(ap);
	if (!text)
		return kg->status;
	kg_sec *q = queue_owner(fr->sec);
	if (q->order != KG_MERGE || type == KG_OTHER) {
		queue_flush(kg, fr, q);
		emit_lines(kg, fr, text, fr->scope->depth);
		return kg->status;
	}
	kg_qstmt *s = kg_mem(kg, sizeof *s);
	if (!s)
		return kg->status;
	s->text = text;
	s->rank = (int)type;
	s->depth = fr->scope->depth;
	s->defs = split_names(kg, defs, &s->ndefs);
	s->uses = split_names(kg, uses, &s->nuses);
	if (q->last_rank < 0 || s->rank < q->last_rank) { /* a new group */
		if (q->flush > 0 && q->ngroups >= q->flush)
			queue_flush(kg, fr, q);
		q->ngroups++;
	}
	q->last_rank = s->rank;
	if (q->qtail)
		q->qtail->next = s;
	else
		q->qhead = s;
	q->qtail = s;
	q->nq++;
	return kg->status;
}

ct_status kg_comment(kg_ctx *kg, const char *fmt, ...)
{
	kg_frame *fr = need_frame(kg, "kg_comment");
	if (!fr)
		return kg->status;
	va_list ap;
	va_start(ap, fmt);
	char *text = kg_vfmt(kg, fmt, ap);
	va_end(ap);
	if (!text)
		return kg->status;
	fence(kg, fr);
	char *line = kg_fmt(kg, "/* %s */", text);
	if (line)
		emit(kg, fr, IT_LINE, line, fr->scope->depth);
	return kg->status;
}

/* ------------------------------------------------------------ sections */

ct_status kg_section_begin(kg_ctx *kg, kg_order order, int flush)
{
	kg_frame *fr = need_frame(kg, "kg_section_begin");
	if (!fr)
		return kg->status;
	if (order < KG_DIRECT || order > KG_INHERIT || flush < 0)
		return kg_fail(kg, CT_ERR_USAGE, "bad section policy %d / flush %d", (int)order,
		               flush);
	kg_sec *s = kg_mem(kg, sizeof *s);
	if (!s)
		return kg->status;
	if (order != KG_INHERIT) {
		fence(kg, fr);
		emit(kg, fr, IT_BLANK, NULL, fr->scope->depth);
	}
	s->parent = fr->sec;
	s->order = order;
	s->flush = flush;
	s->open = true;
	s->base = fr->scope;
	s->last_rank = -1;
	s->start = emit(kg, fr, IT_MARK, NULL, fr->scope->depth);
	s->vbefore = fr->vtail;
	fr->sec = s;
	return kg->status;
}

ct_status kg_section_end(kg_ctx *kg)
{
	kg_frame *fr = need_frame(kg, "kg_section_end");
	if (!fr)
		return kg->status;
	kg_sec *s = fr->sec;
	if (s == fr->root_sec)
		return kg_fail(kg, CT_ERR_USAGE, "kg_section_end without an open section");
	if (fr->scope != s->base)
		return kg_fail(kg, CT_ERR_USAGE, "section ends with an open block");
	if (s->order != KG_INHERIT)
		queue_flush(kg, fr, s);
	s->end = emit(kg, fr, IT_MARK, NULL, fr->scope->depth);
	if (!s->end)
		return kg->status;
	s->open = false;
	s->vend = fr->nvars;
	fr->sec = s->parent;
	/* symmetric with the earlier section that was enclosed for its sake */
	if (s->want_wrap && has_base_privates(fr, s) && wrap_ok(fr, s))
		wrap(kg, fr, s);
	if (s->order != KG_INHERIT)
		emit(kg, fr, IT_BLANK, NULL, fr->scope->depth);
	return kg->status;
}

/* ------------------------------------------------------------ variables */

/* Whether v can serve a new declaration (whose initializer, if any,
 * becomes an assignment). */
static bool shareable(const kg_var *v, const kg_sec *c, kg_share share, const char *ctype,
                      bool init)
{
	if (strcmp(v->ctype, ctype) || (init && !assignable(ctype)))
		return false;
	if (v->sec == c)
		return true;
	bool nested = is_ancestor(v->sec, c) || is_ancestor(c, v->sec);
	unsigned need = nested ? KG_SHARE_NESTED : KG_SHARE_SIBLINGS;
	return (v->share & need) && (share & need);
}

static bool scope_within(const kg_scope *inner, const kg_scope *outer)
{
	for (; inner; inner = inner->parent)
		if (inner == outer)
			return true;
	return false;
}

/* Whether cand is taken where a new variable would live; *who is the
 * visible variable holding it, if any. A hoisted declaration must also
 * avoid names declared inside the blocks it is hoisted out of. */
static bool name_taken(const kg_ctx *kg, const kg_frame *fr, const char *cand,
                       const kg_scope *hoisted_out_of, kg_var **who)
{
	*who = NULL;
	for (const kg_func *f = kg->funcs; f; f = f->next)
		if (!strcmp(f->name, cand))
			return true;
	for (kg_var *v = by_name(fr, cand); v; v = v->name_next) {
		if (strcmp(v->name, cand))
			continue;
		if (visible(v)) {
			*who = v;
			return true;
		}
		if (hoisted_out_of && v->seq >= hoisted_out_of->var_seq)
			return true;
	}
	return false;
}

static const char *declare(kg_ctx *kg, const char *what, int levels, const char *name,
                           const char *ctype, kg_share share, const char *init)
{
	kg_frame *fr = need_frame(kg, what);
	if (!fr)
		return KG_ERR_NAME;
	if (!name || !*name || !ctype || !*ctype || share < KG_PRIVATE || share > KG_SHARE_BOTH) {
		kg_fail(kg, CT_ERR_USAGE, "%s needs a name, a type and a sharing policy", what);
		return KG_ERR_NAME;
	}
	/* the scope it will live in, and the outermost block it leaves */
	kg_scope *target = fr->scope, *out_of = NULL;
	for (int i = 0; i < levels; i++) {
		if (target == fr->root_scope) {
			kg_fail(kg, CT_ERR_USAGE, "cannot hoist '%s' out of %d blocks", name,
			        levels);
			return KG_ERR_NAME;
		}
		out_of = target;
		target = target->parent;
	}
	for (kg_var *v = by_req(fr, name); v; v = v->req_next) {
		if (!visible(v) || strcmp(v->req, name) ||
		    !shareable(v, fr->sec, share, ctype, init != NULL))
			continue;
		if (out_of && !scope_within(target, v->scope))
			continue; /* lives inside the loop: not what a hoist asks for */
		if (init) {
			char *a = kg_fmt(kg, "%s = %s;", v->name, init);
			kg_item *it = out_of ? item_new(kg, IT_LINE, a, target->depth) : NULL;
			if (out_of && it) {
				insert_after(fr->fn, out_of->hoist, it);
				out_of->hoist = it;
			} else if (!out_of && a) {
				fence(kg, fr);
				emit(kg, fr, IT_LINE, a, target->depth);
			}
		}
		return kg->status == CT_OK ? v->name : KG_ERR_NAME;
	}
	char *req = kg_strdup(kg, name);
	const char *cand = req;
	kg_var *who;
	for (int k = 1; cand && name_taken(kg, fr, cand, out_of, &who);) {
		/* a hoisted name must stay free inside the loop too: no use freeing it here */
		bool may_wrap = who && !out_of && !(kg->flags & KG_RENAME_ONLY);
		kg_sec *e = may_wrap ? retiring_section(who) : NULL;
		if (e && wrap_ok(fr, e)) {
			wrap(kg, fr, e);
			if (fr->sec != fr->root_sec)
				fr->sec->want_wrap = true;
			continue;
		}
		cand = kg_fmt(kg, "%s_%d", name, k++);
	}
	char *ty = kg_strdup(kg, ctype);
	char *in = init ? kg_strdup(kg, init) : NULL;
	char *text = cand && ty ? decl_text(kg, ty, cand, in) : NULL;
	if (!text)
		return KG_ERR_NAME;
	kg_item *d;
	if (out_of) {
		d = item_new(kg, IT_LINE, text, target->depth);
		if (d) {
			insert_after(fr->fn, out_of->hoist, d);
			out_of->hoist = d;
		}
	} else {
		if (in)
			fence(kg, fr);
		d = emit(kg, fr, IT_LINE, text, target->depth);
	}
	kg_var *v = d ? var_add(kg, fr, req, cand, ty, share, target) : NULL;
	if (!v)
		return KG_ERR_NAME;
	v->init = in;
	v->decl = d;
	return v->name;
}

const char *kg_var_declare(kg_ctx *kg, const char *name, const char *ctype, kg_share share,
                           const char *init)
{
	return declare(kg, "kg_var_declare", 0, name, ctype, share, init);
}

const char *kg_var_hoist(kg_ctx *kg, int levels, const char *name, const char *ctype,
                         kg_share share, const char *init)
{
	if (levels < 1) {
		if (usable(kg, "kg_var_hoist"))
			kg_fail(kg, CT_ERR_USAGE, "kg_var_hoist needs levels >= 1, not %d", levels);
		return KG_ERR_NAME;
	}
	return declare(kg, "kg_var_hoist", levels, name, ctype, share, init);
}

const char *kg_var_lookup(const kg_ctx *kg, const char *name)
{
	if (!kg || !kg->frame || !name || kg->status != CT_OK)
		return NULL;
	for (const kg_var *v = by_req(kg->frame, name); v; v = v->req_next)
		if (visible(v) && !strcmp(v->req, name))
			return v->name;
	return NULL;
}

/* ------------------------------------------------------------ result */

static void out_put(kg_ctx *kg, const char *s, size_t n)
{
	if (kg->status != CT_OK)
		return;
	if (kg->len + n + 1 > kg->cap) {
		size_t cap = kg->cap ? kg->cap : 4096;
		while (cap < kg->len + n + 1)
			cap *= 2;
		char *p = ct_realloc(kg->ctx, kg->out, cap);
		if (!p) {
			kg_fail(kg, CT_ERR_NOMEM, "out of memory for %zu bytes of output", cap);
			return;
		}
		kg->out = p;
		kg->cap = cap;
	}
	memcpy(kg->out + kg->len, s, n);
	kg->len += n;
	kg->out[kg->len] = 0;
}

static void out_puts(kg_ctx *kg, const char *s)
{
	out_put(kg, s, strlen(s));
}

static void out_quals(kg_ctx *kg, const kg_func *f)
{
	bool cl = kg->flags & KG_OPENCL;
	if (cl && (f->flags & KG_FUNC_KERNEL))
		out_puts(kg, (kg->flags & KG_CUDA) ? "extern \"C\" __global__ " : "__kernel ");
	if (!cl && (f->flags & KG_FUNC_STATIC))
		out_puts(kg, "static ");
	if (f->flags & KG_FUNC_INLINE)
		out_puts(kg, "inline ");
}

/* Body lines, indented; a blank line only between two lines, never twice,
 * never right after a `{` or right before a `}`. */
static void render_body(kg_ctx *kg, const kg_func *f)
{
	bool after_open = true, blank = false;
	for (const kg_item *it = f->head.next; it; it = it->next) {
		if (it->kind == IT_MARK)
			continue;
		if (it->kind == IT_BLANK) {
			blank = true;
			continue;
		}
		if (blank && !after_open && it->text[0] != '}')
			out_puts(kg, "\n");
		blank = false;
		for (int i = 0; i < it->depth; i++)
			out_puts(kg, "\t");
		out_puts(kg, it->text);
		out_puts(kg, "\n");
		size_t n = strlen(it->text);
		after_open = n && it->text[n - 1] == '{';
	}
}

static bool emitted(const kg_func *f)
{
	return !(f->flags & KG_FUNC_ON_DEMAND) || f->used;
}

/* Place f after everything it uses (post-order); a use reaching a function
 * still on the path is recursion, which needs a forward declaration. */
static void place(kg_func *f, kg_func ***tail)
{
	if (f->mark == 2)
		return;
	if (f->mark == 1) {
		f->fwd = true;
		return;
	}
	f->mark = 1;
	for (kg_edge *e = f->uses; e; e = e->next)
		place(e->callee, tail);
	f->mark = 2;
	**tail = f;
	*tail = &f->onext;
}

char *kg_take(kg_ctx *kg, size_t *len)
{
	if (len)
		*len = 0;
	if (!kg)
		return NULL;
	if (kg->taken)
		kg_fail(kg, CT_ERR_USAGE, "kg_take called twice without kg_reset");
	if (kg->status == CT_OK && kg->frame)
		kg_fail(kg, CT_ERR_USAGE, "function '%s' not ended", kg->frame->fn->name);
	/* bodies still to generate; a generator may declare more functions */
	for (kg_func *f = kg->funcs; f && kg->status == CT_OK; f = f->next)
		if (f->gen && f->state == FN_DECLARED && emitted(f))
			generate(kg, f);
	for (kg_func *f = kg->funcs; f && kg->status == CT_OK; f = f->next)
		if (f->state != FN_DONE && emitted(f))
			kg_fail(kg, CT_ERR_USAGE, "function '%s' declared without a body", f->name);
	kg_func *order = NULL, **tail = &order;
	for (kg_func *f = kg->funcs; f && kg->status == CT_OK; f = f->next)
		if (emitted(f))
			place(f, &tail);
	if (kg->status != CT_OK)
		order = NULL; /* items may be half-built: render nothing */
	for (const kg_item *it = kg->pre_head.next; it && kg->status == CT_OK; it = it->next) {
		out_puts(kg, it->text);
		out_puts(kg, "\n");
	}
	bool sep = kg->pre_head.next != NULL;
	bool any_fwd = false;
	for (kg_func *f = order; f; f = f->onext) {
		if (!f->fwd)
			continue;
		if (sep && !any_fwd)
			out_puts(kg, "\n");
		any_fwd = sep = true;
		out_quals(kg, f);
		out_puts(kg, f->proto);
		out_puts(kg, ";\n");
	}
	for (kg_func *f = order; f; f = f->onext) {
		if (sep)
			out_puts(kg, "\n");
		sep = true;
		out_quals(kg, f);
		out_puts(kg, f->proto);
		out_puts(kg, "\n{\n");
		render_body(kg, f);
		out_puts(kg, "}\n");
	}
	if (kg->status == CT_OK && !kg->out)
		out_put(kg, "", 0);
	kg->taken = true;
	if (kg->status != CT_OK) {
		ct_free(kg->ctx, kg->out);
		kg->out = NULL;
		kg->len = kg->cap = 0;
		/* the ctx's last error may have been overwritten since: restore the first */
		ct_error(kg->ctx, kg->status, "%s", kg->msg);
		return NULL;
	}
	char *text = kg->out;
	if (len)
		*len = kg->len;
	kg->out = NULL;
	kg->len = kg->cap = 0;
	return text;
}
