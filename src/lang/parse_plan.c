/* parse_plan.c: the plan grammar: `plan(target=...)`, caches and the loop items; options by table. */
#include "lang/parse_internal.h"
#include "ir/targets.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------ options by table
 * Every option of a plan item is one row: its name, how its value is written, where the value is
 * stored and which values are allowed. One reader (parse_opt) walks the rows, so the checks and the
 * messages ("given twice", "unknown ... option (use ...)", out of range) are the same for all. */

/* How an option's value is written. */
typedef enum opt_kind {
	OPT_BOOL,  /* true | false, into a bool */
	OPT_INT,   /* an integer expression, into an int64_t */
	OPT_INDEX, /* an index name, into an int (the index id) */
	OPT_WORD,  /* one of a fixed set of words, into an enum */
	OPT_SPACE, /* a memory space of the plan's target (its row's location= words), into an ir_location */
	OPT_LAYOUT,/* a layout, into the cache's order[] */
	OPT_GRID,  /* auto | PxQ | PxQxR: distribute()'s grid of ranks, into grid[] */
	OPT_ARRAYS /* A or (A, B, ...): array names, into nrepl / repl */
} opt_kind;

/* One allowed word of an OPT_WORD option and the enum value it stands for. */
typedef struct opt_word {
	const char *word;
	int value;
} opt_word;

/* The allowed words of an OPT_WORD option and the names its messages use. */
typedef struct opt_words {
	const char *what; /* what lp_expect_ident asks for: "a location" */
	const char *noun; /* "unknown location 'x' (use ...)" */
	const opt_word *v;
	int n;
} opt_words;

/* No field to set (offsetof never gives this). */
#define NO_FIELD ((size_t)-1)

typedef struct opt_spec {
	const char *name;
	opt_kind kind;
	size_t seen;       /* offsetof the ir_opt_pos in the item's seen record; exclusive options share one */
	const char *clash; /* message when that ir_opt_pos is already given (NULL: "given twice") */
	size_t field;      /* offsetof the value in ir_plan_item */
	bool bounded;      /* OPT_INT: the value must lie in min .. max */
	int64_t min, max;  /* max INT64_MAX: "at least min" */
	const opt_words *words; /* OPT_WORD */
	size_t flag, flag2;     /* bools of ir_plan_item set when the option is given, or NO_FIELD */
	int where;              /* the ir_cache_pos this option places the cache at, or -1 */
	bool gpu_only;          /* only under a GPU target's plan (plan(target=opencl), ...) */
} opt_spec;

/* The options of one kind of item, for lookup and for the "(use ...)" list. */
typedef struct opt_table {
	const opt_spec *v;
	int n;
} opt_table;

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* OPT_WORD values are stored as int. */
_Static_assert(sizeof(ir_location) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(ir_strategy) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(ir_policy) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(ir_packed) == sizeof(int), "enum stored as int");

static const opt_word strategy_words[] = {{"blocked", STRAT_BLOCKED}, {"striped", STRAT_STRIPED}};
static const opt_words strategies = {"a strategy", "strategy", strategy_words, COUNT(strategy_words)};
static const opt_word policy_words[] = {{"static", POLICY_STATIC}, {"dynamic", POLICY_DYNAMIC}};
static const opt_words policies = {"a policy", "policy", policy_words, COUNT(policy_words)};
static const opt_word packed_words[] = {{"lower", PACK_LOWER}, {"upper", PACK_UPPER}};
static const opt_words packings = {"a triangle", "triangle", packed_words, COUNT(packed_words)};

#define IT(f) offsetof(ir_plan_item, f)
#define WHERE_CLASH "give only one of level=, index= and max_elements="
#define TRIGGER_CLASH "give trigger_level= or trigger_index=, not both (nor twice)"

/* `cache(SOURCE, ...)`; the order is that of the "(use ...)" list. */
static const opt_spec cache_spec[] = {
	{"level", OPT_INT, IT(where_opt), WHERE_CLASH, IT(value), false, 0, 0, NULL, NO_FIELD, NO_FIELD, CP_LEVEL, false},
	{"index", OPT_INDEX, IT(where_opt), WHERE_CLASH, IT(index_id), false, 0, 0, NULL, NO_FIELD, NO_FIELD, CP_INDEX, false},
	{"max_elements", OPT_INT, IT(where_opt), WHERE_CLASH, IT(value), true, 1, INT64_MAX, NULL, NO_FIELD, NO_FIELD, CP_BUDGET, false},
	{"layout", OPT_LAYOUT, IT(layout_opt), NULL, IT(order), false, 0, 0, NULL, IT(has_layout), NO_FIELD, -1, false},
	{"thrifty", OPT_BOOL, IT(thrifty_opt), NULL, IT(thrifty), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
	{"trigger_level", OPT_INT, IT(trigger_opt), TRIGGER_CLASH, IT(trigger_level), false, 0, 0, NULL, IT(has_trigger), NO_FIELD, -1, false},
	{"trigger_index", OPT_INDEX, IT(trigger_opt), TRIGGER_CLASH, IT(trigger_index), false, 0, 0, NULL, IT(has_trigger), IT(trigger_is_index), -1, false},
	{"double_buffer", OPT_BOOL, IT(double_buffer_opt), NULL, IT(double_buffer), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
	{"location", OPT_SPACE, IT(location_opt), NULL, IT(location), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, true},
	{"strategy", OPT_WORD, IT(strategy_opt), NULL, IT(strategy), false, 0, 0, &strategies, NO_FIELD, NO_FIELD, -1, true},
	{"strict", OPT_BOOL, IT(strict_opt), NULL, IT(strict), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
	{"packed", OPT_WORD, IT(packed_opt), NULL, IT(packed), false, 0, 0, &packings, NO_FIELD, NO_FIELD, -1, false},
};
static const opt_table cache_opts = {cache_spec, COUNT(cache_spec)};

/* Where the options of vectorize, unroll and parallelize were given (they are not kept in the item). */
typedef struct loop_seen {
	ir_opt_pos nontemporal, by, policy, max_threads, spmd, grid, replicate;
} loop_seen;
#define LS(f) offsetof(loop_seen, f)

static const opt_spec vectorize_spec[] = {
	{"nontemporal", OPT_BOOL, LS(nontemporal), NULL, IT(nontemporal), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
};
static const opt_spec unroll_spec[] = {
	{"by", OPT_INT, LS(by), NULL, IT(unroll_by), true, 2, IR_MAX_UNROLL_BY, NULL, NO_FIELD, NO_FIELD, -1, false},
};
static const opt_spec parallelize_spec[] = {
	{"policy", OPT_WORD, LS(policy), NULL, IT(policy), false, 0, 0, &policies, NO_FIELD, NO_FIELD, -1, false},
	{"max_threads", OPT_INT, LS(max_threads), NULL, IT(max_threads), true, 1, INT64_MAX, NULL, NO_FIELD, NO_FIELD, -1, false},
	{"spmd", OPT_BOOL, LS(spmd), NULL, IT(spmd), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
};

static const opt_spec distribute_spec[] = {
	{"grid", OPT_GRID, LS(grid), NULL, IT(grid), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
	{"replicate", OPT_ARRAYS, LS(replicate), NULL, IT(repl), false, 0, 0, NULL, NO_FIELD, NO_FIELD, -1, false},
};

/* The options of a vectorize, unroll, parallelize or distribute item. */
static opt_table loop_opts(ir_plan_kind kind)
{
	switch (kind) {
	case PL_DISTRIBUTE: return (opt_table){distribute_spec, COUNT(distribute_spec)};
	case PL_VECTORIZE: return (opt_table){vectorize_spec, COUNT(vectorize_spec)};
	case PL_UNROLL: return (opt_table){unroll_spec, COUNT(unroll_spec)};
	case PL_PARALLELIZE: return (opt_table){parallelize_spec, COUNT(parallelize_spec)};
	case PL_CACHE: break;
	}
	return cache_opts;
}

/* "a, b or c" from n names, each name at byte offset off of a row of size bytes. */
static void or_list(char *buf, size_t cap, const void *rows, int n, size_t size, size_t off)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && len < cap; i++) {
		const char *name = *(const char *const *)((const char *)rows + (size_t)i * size + off);
		const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
		int w = snprintf(buf + len, cap - len, "%s%s", sep, name);
		if (w < 0)
			return;
		len += (size_t)w;
	}
}

/* The row of option name, or NULL. */
static const opt_spec *opt_find(opt_table t, const char *name)
{
	for (int i = 0; i < t.n; i++)
		if (strcmp(t.v[i].name, name) == 0)
			return &t.v[i];
	return NULL;
}

/* The value of word t (at vp) among ws, in *v; false after reporting an unknown word. */
static bool match_word(parser *p, const opt_words *ws, const tok *t, ir_pos vp, int *v)
{
	for (int i = 0; i < ws->n; i++)
		if (word_is(t, ws->v[i].word)) {
			*v = ws->v[i].value;
			return true;
		}
	char use[128];
	or_list(use, sizeof use, ws->v, ws->n, sizeof *ws->v, offsetof(opt_word, word));
	lp_err(p, vp, "unknown %s '%s' (use %s)", ws->noun, t->s, use);
	return false;
}

/* A name that must be one of ws, its value in *v; false after an error. */
static bool parse_word(parser *p, const opt_words *ws, int *v)
{
	tok *t = cur(p);
	ir_pos vp;
	return lp_expect_ident(p, ws->what, &vp) && match_word(p, ws, t, vp, v);
}

/* A location= word of the plan's target (a row's spaces: global, local, private on OpenCL;
 * global, shared, private on CUDA) into *loc; false after an error. A target without spaces
 * (the host) takes any name here: parse_opt then says the option is for GPU targets. */
static bool parse_space(parser *p, ir_location *loc)
{
	tok *t = cur(p);
	ir_pos vp;
	if (!lp_expect_ident(p, "a location", &vp))
		return false;
	const ir_target_info *row = ir_target_row(p->k->target);
	if (row->nspaces == 0)
		return true;
	const ir_space *sp = ir_target_space(row, t->s);
	if (sp) {
		*loc = sp->loc;
		return true;
	}
	char use[128];
	or_list(use, sizeof use, row->spaces, row->nspaces, sizeof *row->spaces, offsetof(ir_space, word));
	const char *hint = ir_target_space_hint(row, t->s);
	if (hint)
		lp_err(p, vp, "unknown location '%s' on plan(target=%s) (use %s): %s", t->s, row->name, use, hint);
	else
		lp_err(p, vp, "unknown location '%s' (use %s)", t->s, use);
	return false;
}

/* The ranks of one grid dimension: at least 1, at most 1 << 20; false after an error. */
static bool grid_extent(parser *p, int64_t v, ir_pos vp, int64_t *out)
{
	if (v < 1 || v > (1 << 20)) {
		lp_err(p, vp, "grid: %lld ranks along a dimension (use 1 .. %d)", (long long)v, 1 << 20);
		return false;
	}
	*out = v;
	return true;
}

/* `auto` (all 0: MPI_Dims_create chooses) or `PxQ` / `PxQxR` (the lexer reads 2x3x4 as the
 * integer 2 and the name x3x4) into g[IR_MAX_GRID]; false after an error. */
static bool parse_grid(parser *p, int64_t *g)
{
	tok *t = cur(p);
	ir_pos vp = tpos(t);
	memset(g, 0, sizeof *g * IR_MAX_GRID);
	if (t->kind == T_IDENT && word_is(t, "auto")) {
		next(p);
		return true;
	}
	if (t->kind != T_INT) {
		lp_err(p, vp, "grid= takes auto or the ranks per dimension as PxQ (2x2, 4x1, 2x2x1)");
		return false;
	}
	int n = 0;
	if (!grid_extent(p, t->ival, vp, &g[n++]))
		return false;
	next(p);
	tok *r = cur(p);
	if (r->kind != T_IDENT || r->s[0] != 'x' || r->line != t->line)
		return true; /* a 1-D grid: grid=4 */
	const char *s = r->s;
	while (*s == 'x') {
		s++;
		int64_t v = 0;
		const char *start = s;
		while (*s >= '0' && *s <= '9' && v <= (1 << 20))
			v = v * 10 + (*s++ - '0');
		if (s == start || (*s && *s != 'x')) {
			lp_err(p, tpos(r), "grid= takes the ranks per dimension as PxQ (2x2, 4x1, 2x2x1), not '%lldx%s'",
			       (long long)t->ival, r->s + 1);
			return false;
		}
		if (n >= IR_MAX_GRID) {
			lp_err(p, tpos(r), "grid= has at most %d dimensions", IR_MAX_GRID);
			return false;
		}
		if (!grid_extent(p, v, tpos(r), &g[n++]))
			return false;
	}
	next(p);
	return true;
}

/* One array name of replicate= into c->repl; false after an error. */
static bool replicate_one(parser *p, ir_plan_item *c, int *ids, int cap)
{
	tok *t = cur(p);
	ir_pos vp;
	if (!lp_expect_ident(p, "an array name", &vp))
		return false;
	sym *s = lp_sym_find(p, t->s);
	if (!s || s->kind != SYM_ARRAY) {
		lp_err(p, vp, "replicate: '%s' is not an array", t->s);
		return false;
	}
	for (int i = 0; i < c->nrepl; i++)
		if (ids[i] == s->id) {
			lp_err(p, vp, "replicate: '%s' appears twice", t->s);
			return false;
		}
	if (c->nrepl >= cap) {
		lp_err(p, vp, "replicate: at most %d arrays", cap);
		return false;
	}
	ids[c->nrepl++] = s->id;
	return true;
}

/* `replicate=A` or `replicate=(A, B, ...)`: the arrays every rank of distribute() holds whole;
 * false after an error. */
static bool parse_arrays(parser *p, ir_plan_item *c)
{
	int ids[64];
	c->nrepl = 0;
	if (!at(p, T_LPAREN)) {
		if (!replicate_one(p, c, ids, 64))
			return false;
	} else {
		next(p);
		for (;;) {
			if (!replicate_one(p, c, ids, 64))
				return false;
			if (!at(p, T_COMMA))
				break;
			next(p);
		}
		if (!lp_expect(p, T_RPAREN))
			return false;
	}
	c->repl = lp_alloc(p, sizeof *c->repl * (size_t)c->nrepl);
	memcpy(c->repl, ids, sizeof *ids * (size_t)c->nrepl);
	return true;
}

/* Mark option o as given at pos in the seen record; false (after an error) when it, or an
 * option it excludes, was given already. */
static bool opt_claim(parser *p, const opt_spec *o, void *seen, ir_pos pos)
{
	ir_opt_pos *g = (ir_opt_pos *)((char *)seen + o->seen);
	if (g->given) {
		if (o->clash)
			lp_err(p, pos, "%s", o->clash);
		else
			lp_err(p, pos, "option '%s' is given twice", o->name);
		return false;
	}
	g->given = true;
	g->pos = pos;
	return true;
}

/* An OPT_INT value in range; false after an error. */
static bool parse_int_opt(parser *p, const opt_spec *o, const char *item, int64_t *v)
{
	ir_pos vp = tpos(cur(p));
	if (!lp_parse_int(p, false, o->name, v, NULL))
		return false;
	if (!o->bounded || (*v >= o->min && *v <= o->max))
		return true;
	if (o->max == INT64_MAX)
		lp_err(p, vp, "%s must be at least %lld, not %lld", o->name, (long long)o->min,
		       (long long)*v);
	else
		lp_err(p, vp, "%s %s=%lld: the factor must be %lld .. %lld", item, o->name,
		       (long long)*v, (long long)o->min, (long long)o->max);
	return false;
}

/* The value of option o into item c (a cache or loop item called item); false after an error. */
static bool parse_opt_value(parser *p, const opt_spec *o, const char *item, ir_plan_item *c)
{
	char *at_field = (char *)c + o->field;
	switch (o->kind) {
	case OPT_BOOL: return lp_parse_bool(p, o->name, (bool *)at_field);
	case OPT_INT: return parse_int_opt(p, o, item, (int64_t *)at_field);
	case OPT_INDEX: {
		tok *t = cur(p);
		ir_pos ip;
		if (!lp_expect_ident(p, "an index name", &ip))
			return false;
		int id = lp_find_index(p, t, item);
		memcpy(at_field, &id, sizeof id);
		return id >= 0;
	}
	case OPT_WORD: {
		int v;
		if (!parse_word(p, o->words, &v))
			return false;
		memcpy(at_field, &v, sizeof v);
		return true;
	}
	case OPT_SPACE: {
		ir_location loc = LOC_DEFAULT;
		if (!parse_space(p, &loc))
			return false;
		memcpy(at_field, &loc, sizeof loc);
		return true;
	}
	case OPT_GRID: return parse_grid(p, (int64_t *)at_field);
	case OPT_ARRAYS: return parse_arrays(p, c);
	case OPT_LAYOUT: {
		char owner[300];
		snprintf(owner, sizeof owner, "cache '%s'", c->name);
		return lp_parse_layout(p, p->k->arrays[c->root_array].rank, owner, c->order);
	}
	}
	return false;
}

/* Option name (at opos, its `=` already read) of item c, looked up in table t; seen records
 * where each option was given. False after an error. */
static bool parse_opt(parser *p, opt_table t, const char *item, ir_plan_item *c, void *seen,
                      const char *name, ir_pos opos)
{
	const opt_spec *o = opt_find(t, name);
	if (!o) {
		char use[256];
		or_list(use, sizeof use, t.v, t.n, sizeof *t.v, offsetof(opt_spec, name));
		lp_err(p, opos, "unknown %s option '%s' (use %s)", item, name, use);
		return false;
	}
	if (!opt_claim(p, o, seen, opos) || !parse_opt_value(p, o, item, c))
		return false;
	if (o->gpu_only && !ir_target_row(p->k->target)->gpu) {
		char gpus[160];
		lp_err(p, opos, "%s= is only for %s", o->name, ir_target_list(gpus, sizeof gpus, "plan(target=", ")", true));
		return false;
	}
	if (o->flag != NO_FIELD)
		*((bool *)((char *)c + o->flag)) = true;
	if (o->flag2 != NO_FIELD)
		*((bool *)((char *)c + o->flag2)) = true;
	if (o->where >= 0)
		c->where = (ir_cache_pos)o->where;
	return true;
}

/* ------------------------------------------------------------ items */

/* `, opt=value` of a cache */
static bool parse_cache_opt(parser *p, ir_plan_item *c)
{
	ir_pos opos;
	const char *opt = lp_expect_ident(p, "a cache option", &opos);
	if (!opt || !lp_expect(p, T_ASSIGN))
		return false;
	return parse_opt(p, cache_opts, "cache", c, c, opt, opos);
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
		lp_tok_desc(cur(p), found, sizeof found);
		lp_err(p, tpos(cur(p)), "expected cache(...), found %s", found);
		return false;
	}
	next(p);
	if (!lp_expect(p, T_LPAREN))
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
	if (!lp_expect_ident(p, "an array or cache name", &spos))
		return false;
	c.src_pos = spos;
	sym *s = lp_sym_find(p, st->s);
	if (s && s->kind == SYM_ARRAY) {
		c.src_array = s->id;
		c.src_cache = -1;
		c.root_array = s->id;
	} else if (s && s->kind == SYM_CACHE) {
		c.src_array = -1;
		c.src_cache = s->id;
		c.root_array = p->k->plan[s->id].root_array;
	} else {
		if (!lp_quiet_failed(p, s))
			lp_err(p, spos, "unknown array or cache '%s' in cache", st->s);
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
	if (ok && !lp_expect(p, T_RPAREN))
		return false;
	if (!ok)
		return false;
	if (!c.where_opt.given) {
		lp_err(p, npos, "cache '%s' needs one of level=, index= or max_elements=", c.name);
		return true;
	}
	if (!lp_name_free(p, c.name, npos) || lp_too_many(p, p->k->nplan, npos, "plan items"))
		return true;
	ct_kernel *k = p->k;
	k->plan = lp_grow(p, k->plan, &p->cap_plan, k->nplan + 1, sizeof *k->plan);
	k->plan[k->nplan] = c;
	lp_sym_add(p, c.name, SYM_CACHE, k->nplan);
	k->nplan++;
	return true;
}

/* The loop items, by the word that starts them. */
static const opt_word loop_item_words[] = {
	{"vectorize", PL_VECTORIZE}, {"unroll", PL_UNROLL}, {"parallelize", PL_PARALLELIZE},
	{"distribute", PL_DISTRIBUTE}};

/* The kind of loop item that t names; false (after an error) when t names none. */
static bool loop_item_kind(parser *p, const tok *t, ir_plan_kind *kind)
{
	for (int i = 0; i < COUNT(loop_item_words); i++)
		if (word_is(t, loop_item_words[i].word)) {
			*kind = (ir_plan_kind)loop_item_words[i].value;
			return true;
		}
	char found[64];
	lp_tok_desc(t, found, sizeof found);
	lp_err(p, tpos(t),
	       "expected a plan item (NAME = cache(...), vectorize, unroll, parallelize or distribute), "
	       "found %s",
	       found);
	return false;
}

/* The indices a loop item names, in order. */
typedef struct loop_args {
	int ids[MAX_SCHED_ARGS];
	ir_pos pos[MAX_SCHED_ARGS];
	int n;
	bool ok; /* false after an unknown or repeated index: the item is dropped, the line read on */
} loop_args;

/* Index a (at ap) of item what; false after an error that ends the item. */
static bool add_loop_index(parser *p, loop_args *la, const tok *a, ir_pos ap, const char *what)
{
	if (la->n >= MAX_SCHED_ARGS) {
		lp_err(p, ap, "too many indices (at most %d)", MAX_SCHED_ARGS);
		return false;
	}
	int n = la->n;
	la->ids[n] = lp_find_index(p, a, what);
	if (la->ids[n] < 0)
		la->ok = false;
	for (int b = 0; b < n && la->ok; b++)
		if (la->ids[b] == la->ids[n]) {
			lp_err(p, ap, "index '%s' appears twice in %s", a->s, what);
			la->ok = false;
		}
	la->pos[la->n++] = ap;
	return true;
}

/* `(x, y, opt=value, ...)` of loop item c called what: the indices, then the options; false after
 * an error that ends the item. */
static bool parse_loop_args(parser *p, ir_plan_item *c, const char *what, loop_args *la)
{
	bool opts = false;
	loop_seen seen;
	memset(&seen, 0, sizeof seen);
	if (!lp_expect(p, T_LPAREN))
		return false;
	for (;;) {
		tok *a = cur(p);
		ir_pos ap;
		if (!lp_expect_ident(p, "an index name", &ap))
			return false;
		if (at(p, T_ASSIGN)) {
			next(p);
			opts = true;
			if (!parse_opt(p, loop_opts(c->kind), what, c, &seen, a->s, ap))
				return false;
		} else if (opts) {
			lp_err(p, ap, "indices must come before the options of %s", what);
			return false;
		} else if (!add_loop_index(p, la, a, ap, what)) {
			return false;
		}
		if (!at(p, T_COMMA))
			return lp_expect(p, T_RPAREN);
		next(p);
	}
}

/* Whether the indices suit item c: at least one, one for vectorize and unroll, at most the
 * grid's dimensions on a GPU target (three work-group dimensions on OpenCL); reports otherwise. */
static bool loop_indices_fit(parser *p, const ir_plan_item *c, const char *what, const loop_args *la)
{
	if (la->n == 0) {
		lp_err(p, c->pos, "%s needs an index", what);
		return false;
	}
	if (c->kind == PL_DISTRIBUTE && la->n > IR_MAX_GRID) {
		lp_err(p, la->pos[IR_MAX_GRID], "%s takes at most %d indices (a grid of ranks of 1 to %d dimensions)", what,
		       IR_MAX_GRID, IR_MAX_GRID);
		return false;
	}
	if (c->kind == PL_DISTRIBUTE) {
		int given = 0;
		for (int d = 0; d < IR_MAX_GRID; d++)
			given += c->grid[d] > 0;
		if (given > 0 && given != la->n) {
			lp_err(p, c->pos, "%s: grid= has %d dimension%s for %d ind%s", what, given, given == 1 ? "" : "s",
			       la->n, la->n == 1 ? "ex" : "ices");
			return false;
		}
	}
	if (c->kind != PL_PARALLELIZE && c->kind != PL_DISTRIBUTE && la->n != 1) {
		lp_err(p, la->pos[1], "%s takes one index", what);
		return false;
	}
	const ir_target_info *row = ir_target_row(p->k->target);
	if (c->kind == PL_PARALLELIZE && row->parallel == IR_PAR_GRID && la->n > row->grid_dims) {
		lp_err(p, la->pos[row->grid_dims], "%s parallelizes at most %d indices (%s dimensions)", row->name,
		       row->grid_dims, row->grid_unit);
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
	if (!loop_item_kind(p, t, &c.kind))
		return false;
	const char *what = t->s;
	next(p);
	loop_args la;
	la.n = 0;
	la.ok = true;
	if (!parse_loop_args(p, &c, what, &la))
		return false;
	/* after an error in the indices the line itself is well formed: no resynchronising */
	if (!la.ok || !loop_indices_fit(p, &c, what, &la))
		return true;
	ct_kernel *k = p->k;
	if (lp_too_many(p, k->nplan, c.pos, "plan items"))
		return true;
	int n = la.n;
	c.n = n;
	c.idx = lp_alloc(p, sizeof *c.idx * (size_t)n);
	c.idx_pos = lp_alloc(p, sizeof *c.idx_pos * (size_t)n);
	memcpy(c.idx, la.ids, sizeof *c.idx * (size_t)n);
	memcpy(c.idx_pos, la.pos, sizeof *c.idx_pos * (size_t)n);
	k->plan = lp_grow(p, k->plan, &p->cap_plan, k->nplan + 1, sizeof *k->plan);
	k->plan[k->nplan++] = c;
	return true;
}

static bool parse_plan_item(parser *p)
{
	if (cur(p)->kind == T_IDENT && peek(p, 1)->kind == T_ASSIGN)
		return parse_cache(p);
	return parse_loop_item(p);
}

/* "target=host, target=opencl, ... or strict=true": the options of plan(...), from the targets' rows. */
static void plan_option_list(char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < ir_target_count() && len < cap; i++) {
		int w = snprintf(buf + len, cap - len, "%starget=%s", i ? ", " : "", ir_target_at(i)->name);
		if (w < 0)
			return;
		len += (size_t)w;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, " or strict=true");
}

/* The target named by identifier v (at vp) into the kernel: one of the targets' rows. An
 * unknown name is reported; the kernel keeps the host. */
static void plan_target(parser *p, const tok *v, ir_pos vp)
{
	const ir_target_info *row = ir_target_find(v->s);
	if (row) {
		p->k->target = row->id;
		return;
	}
	char use[160];
	lp_err(p, vp, "unknown target '%s' (use %s)", v->s, ir_target_list(use, sizeof use, "", "", false));
}

/* One option of `plan(...)`: target=NAME (a row of the targets' table) or strict=true|false. */
static bool parse_plan_option(parser *p, bool *seen_target, bool *seen_strict)
{
	tok *o = cur(p);
	ir_pos op;
	if (!lp_expect_ident(p, "'target'", &op))
		return false;
	bool target = strcmp(o->s, "target") == 0, strict = strcmp(o->s, "strict") == 0;
	if (!target && !strict) {
		char use[256];
		plan_option_list(use, sizeof use);
		lp_err(p, op, "unknown plan option '%s' (use %s)", o->s, use);
		return false;
	}
	bool *seen = target ? seen_target : seen_strict;
	if (*seen) {
		lp_err(p, op, "option '%s' is given twice", o->s);
		return false;
	}
	*seen = true;
	if (!lp_expect(p, T_ASSIGN))
		return false;
	if (strict) {
		p->k->strict_pos = op;
		return lp_parse_bool(p, "strict", &p->k->strict);
	}
	tok *v = cur(p);
	ir_pos vp;
	if (!lp_expect_ident(p, "a target", &vp))
		return false;
	plan_target(p, v, vp); /* an unknown target is reported; the block is still read */
	return true;
}

/* The options of `plan(...)` up to its `)`; false (after syncing) on an error. */
static bool parse_plan_options(parser *p)
{
	bool seen_target = false, seen_strict = false;
	for (;;) {
		if (!parse_plan_option(p, &seen_target, &seen_strict)) {
			lp_sync(p, p->i);
			return false;
		}
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!lp_expect(p, T_RPAREN)) {
			lp_sync(p, p->i);
			return false;
		}
		return true;
	}
}

void lp_parse_plan(parser *p)
{
	tok *t = cur(p);
	next(p);
	if (p->seen_plan)
		lp_err(p, tpos(t), "second 'plan' block (write one)");
	p->seen_plan = true;
	p->after_logic = true;
	p->k->has_plan = true;
	p->k->plan_pos = tpos(t);
	p->k->target = TARGET_HOST;
	if (at(p, T_LPAREN)) {
		next(p);
		if (!parse_plan_options(p))
			return;
	}
	lp_block_items(p, t, "plan", parse_plan_item);
}
