/* parse_internal.h: what the parser's files (parse.c, parse_decl.c, parse_sched.c, parse_plan.c) share; private to lang/. */
#ifndef CT_LANG_PARSE_INTERNAL_H
#define CT_LANG_PARSE_INTERNAL_H

#include "lang/lang.h"

#include <setjmp.h>
#include <string.h>

/* Most indices one schedule or plan item may name. */
#define MAX_SCHED_ARGS 64

/* SYM_FAILED: a param, array or loop index whose declaration had an error;
 * its uses are errors already reported, so they fail without a message (no
 * cascade of "unknown name" after one bad line). Its id is the declaration's
 * line. (A let's is LET_FAILED in the scope.) */
typedef enum sym_kind {
	SYM_NONE = 0,
	SYM_PARAM,
	SYM_ARRAY,
	SYM_INDEX,
	SYM_CACHE,
	SYM_FAILED
} sym_kind;

/* One kernel-wide name (params, arrays, indices, caches share one space). */
typedef struct sym {
	const char *name;
	sym_kind kind;
	int id;
} sym;

/* The id of a scoped let whose value had an error (its uses fail silently). */
#define LET_FAILED (-2)

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

/* ------------------------------------------------------------ tokens (inline: called on every token) */

static inline tok *cur(parser *p) { return &p->t[p->i]; }
static inline tok *peek(parser *p, int n)
{
	int j = p->i + n;
	return &p->t[j < p->nt ? j : p->nt - 1];
}
static inline void next(parser *p)
{
	if (p->i < p->nt - 1)
		p->i++;
}
static inline bool at(parser *p, tok_kind k) { return cur(p)->kind == k; }
static inline bool at_word(parser *p, const char *w)
{
	return cur(p)->kind == T_IDENT && strcmp(cur(p)->s, w) == 0;
}
static inline ir_pos tpos(const tok *t)
{
	ir_pos r = {t->line, t->col};
	return r;
}
static inline bool word_is(const tok *t, const char *w)
{
	return t->kind == T_IDENT && strcmp(t->s, w) == 0;
}

/* ------------------------------------------------------------ helpers (parse.c) */

/* Arena allocation; on failure unwinds to lang_parse through p->oom. */
void *lp_alloc(parser *p, size_t size);
/* Ensure a vector v of *cap elements (elt bytes) can hold need; arena-backed. */
void *lp_grow(parser *p, void *v, int *cap, int need, size_t elt);
/* Report an error at a source position (counts in p->nerr). */
void lp_err(parser *p, ir_pos at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A short description of a token for "found ..." messages. */
void lp_tok_desc(const tok *t, char *buf, size_t n);
/* Consume a token of kind k, or report what was found instead. */
bool lp_expect(parser *p, tok_kind k);
/* Expect a name; returns it (NULL after reporting an error). */
const char *lp_expect_ident(parser *p, const char *what, ir_pos *pos);
/* Skip to the start of the next statement after the one that began at token index start. */
void lp_sync(parser *p, int start);
/* The kernel-wide name, or NULL. */
sym *lp_sym_find(parser *p, const char *name);
/* Report a clash when name is already declared; true when it is free. */
bool lp_name_free(parser *p, const char *name, ir_pos at);
void lp_sym_add(parser *p, const char *name, sym_kind kind, int id);
/* After an error in the declaration of name (at): mark the name declared
 * and failed, when it is not declared already. */
void lp_sym_failed(parser *p, const char *name, ir_pos at);
/* Whether s names a failed declaration; if so, count one silent error. */
bool lp_quiet_failed(parser *p, const sym *s);
/* Report (and return true) when a table of n names is full. */
bool lp_too_many(parser *p, int n, ir_pos at, const char *what);
/* A whole expression; NULL after an error. */
ir_expr *lp_parse_expr(parser *p);
/* An integer expression evaluated now; false after an error. */
bool lp_parse_int(parser *p, bool allow_params, const char *what, int64_t *v, ir_expr **ex);
/* The id of the index named by t, or -1 after reporting (where names the item). */
int lp_find_index(parser *p, const tok *t, const char *where);
/* The `{ item ... }` of a schedule or plan block, each item parsed by item(). */
void lp_block_items(parser *p, const tok *t, const char *what, bool (*item)(parser *p));
/* `true` or `false` as the value of option opt. */
bool lp_parse_bool(parser *p, const char *opt, bool *v);

/* ------------------------------------------------------------ grammars */

/* parse_decl.c: `param ...`, `array ...` and the layouts they and caches use */
bool lp_parse_param(parser *p);
bool lp_parse_array(parser *p);
bool lp_parse_layout(parser *p, int rank, const char *owner, int *order);
/* parse_sched.c: the `schedule { ... }` block */
void lp_parse_schedule(parser *p);
/* parse_plan.c: the `plan(...) { ... }` block */
void lp_parse_plan(parser *p);

#endif
