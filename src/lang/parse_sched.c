/* parse_sched.c: the schedule grammar: `reorder(...)`, `split(...)` and `tile(...)` items. */
#include "lang/parse_internal.h"
#include "ir/order.h"

#include <stdio.h>

static ir_sched *new_sched(parser *p, ir_sched_kind kind, ir_pos pos, int n)
{
	ct_kernel *k = p->k;
	k->sched = lp_grow(p, k->sched, &p->cap_sched, k->nsched + 1, sizeof *k->sched);
	ir_sched *s = &k->sched[k->nsched++];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->pos = pos;
	s->n = n;
	s->idx = lp_alloc(p, sizeof *s->idx * (size_t)n);
	s->arg_pos = lp_alloc(p, sizeof *s->arg_pos * (size_t)n);
	if (kind != SC_REORDER) {
		s->size = lp_alloc(p, sizeof *s->size * (size_t)n);
		s->out = lp_alloc(p, sizeof *s->out * (size_t)n);
		s->size_expr = lp_alloc(p, sizeof *s->size_expr * (size_t)n);
	}
	return s;
}

/* Split index x by size into a new index called name; -1 after an error. */
static int do_split(parser *p, int x, int64_t size, const char *name, ir_pos npos, ir_pos xpos)
{
	ct_kernel *k = p->k;
	if (k->indices[x].child >= 0) {
		lp_err(p, xpos, "index '%s' is already split; split its inner index '%s' instead",
		     k->indices[x].name, k->indices[k->indices[x].child].name);
		return -1;
	}
	if (!lp_name_free(p, name, npos) || lp_too_many(p, k->nindices, npos, "indices"))
		return -1;
	k->indices = lp_grow(p, k->indices, &p->cap_indices, k->nindices + 1, sizeof *k->indices);
	p->in_scope = lp_grow(p, p->in_scope, &p->cap_in_scope, k->nindices + 1, sizeof(bool));
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
	lp_sym_add(p, name, SYM_INDEX, id);
	return id;
}

/* `reorder(i, j, ...)`: one whole band, outer indices of a chain first. */
static bool parse_reorder(parser *p)
{
	tok *rt = cur(p);
	next(p);
	if (!lp_expect(p, T_LPAREN))
		return false;
	int ids[MAX_SCHED_ARGS];
	ir_pos pos[MAX_SCHED_ARGS];
	int n = 0;
	bool ok = true;
	for (;;) {
		tok *t = cur(p);
		ir_pos ip;
		if (!lp_expect_ident(p, "an index name", &ip))
			return false;
		if (n >= MAX_SCHED_ARGS) {
			lp_err(p, ip, "reorder names too many indices (at most %d)", MAX_SCHED_ARGS);
			return false;
		}
		int id = lp_find_index(p, t, "reorder");
		if (id < 0)
			ok = false;
		ids[n] = id;
		pos[n++] = ip;
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!lp_expect(p, T_RPAREN))
			return false;
		break;
	}
	if (!ok)
		return true; /* errors reported; the line itself is well formed */
	ct_kernel *k = p->k;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < a; b++)
			if (ids[a] == ids[b]) {
				lp_err(p, pos[a], "index '%s' appears twice in reorder",
				     k->indices[ids[a]].name);
				return true;
			}
	const ir_node *band = sched_band_head(k, ids[0]);
	for (int a = 1; a < n; a++)
		if (sched_band_head(k, ids[a]) != band) {
			lp_err(p, pos[a],
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
			lp_err(p, tpos(rt),
			     "reorder must name every index of its band; '%s' is missing",
			     k->indices[x].name);
			return true;
		}
	}
	for (int a = 0; a < n; a++) {
		int par = k->indices[ids[a]].parent;
		for (int b = a + 1; b < n && par >= 0; b++)
			if (ids[b] == par) {
				lp_err(p, pos[a],
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
		lp_err(p, *pos, "option 'balanced' is given twice");
		return false;
	}
	*given = true;
	next(p);
	next(p);
	return lp_parse_bool(p, "balanced", v);
}

/* The new index names on the left of a split or tile. */
typedef struct split_names {
	const char *v[MAX_SCHED_ARGS];
	ir_pos pos[MAX_SCHED_ARGS];
	int n;
} split_names;

/* What the parentheses of a split or tile give: per index its size, then the options. */
typedef struct split_args {
	bool tile;
	const char *what; /* "split" or "tile" */
	int x[MAX_SCHED_ARGS];
	ir_pos xpos[MAX_SCHED_ARGS];
	int64_t size[MAX_SCHED_ARGS];
	ir_expr *size_expr[MAX_SCHED_ARGS];
	int n;
	bool ok; /* false after an unknown index or a bad size: nothing is split, the line is read on */
	bool balanced, balanced_given;
	ir_pos balanced_pos;
} split_args;

/* `a, b =`: the names of the new indices; false after an error. */
static bool parse_split_names(parser *p, split_names *nm)
{
	nm->n = 0;
	for (;;) {
		if (nm->n >= MAX_SCHED_ARGS) {
			lp_err(p, tpos(cur(p)), "too many names (at most %d)", MAX_SCHED_ARGS);
			return false;
		}
		nm->v[nm->n] = lp_expect_ident(p, "an index name", &nm->pos[nm->n]);
		if (!nm->v[nm->n])
			return false;
		nm->n++;
		if (!at(p, T_COMMA))
			break;
		next(p);
	}
	return lp_expect(p, T_ASSIGN);
}

/* `split` or `tile`; false after an error. */
static bool parse_split_word(parser *p, split_args *sa)
{
	tok *ft = cur(p);
	sa->tile = at_word(p, "tile");
	if (!sa->tile && !at_word(p, "split")) {
		char found[64];
		lp_tok_desc(ft, found, sizeof found);
		lp_err(p, tpos(ft), "expected split(...) or tile(...), found %s", found);
		return false;
	}
	sa->what = sa->tile ? "tile" : "split";
	next(p);
	return true;
}

/* One `x, 32` of a split or `x=32` of a tile; false after an error that ends the item. */
static bool parse_split_size(parser *p, split_args *sa)
{
	tok *t = cur(p);
	int n = sa->n;
	if (!sa->tile && n > 0) {
		char found[64];
		lp_tok_desc(t, found, sizeof found);
		lp_err(p, tpos(t), "expected the option balanced=true or false after the split size, found %s",
		       found);
		return false;
	}
	if (n >= MAX_SCHED_ARGS) {
		lp_err(p, tpos(t), "too many indices in %s (at most %d)", sa->what, MAX_SCHED_ARGS);
		return false;
	}
	if (!lp_expect_ident(p, "an index name", &sa->xpos[n]))
		return false;
	sa->x[n] = lp_find_index(p, t, sa->what);
	if (sa->x[n] < 0)
		sa->ok = false;
	if (!lp_expect(p, sa->tile ? T_ASSIGN : T_COMMA))
		return false;
	ir_pos spos = tpos(cur(p));
	if (!lp_parse_int(p, true, "a split size", &sa->size[n], &sa->size_expr[n])) {
		if (!sa->size_expr[n])
			return false;
		sa->ok = false;
	} else if (sa->size[n] < 1) {
		lp_err(p, spos, "split size must be at least 1, not %lld", (long long)sa->size[n]);
		sa->ok = false;
	}
	sa->n++;
	return true;
}

/* `(x, 32)` of a split or `(x=32, y=64)` of a tile, each with an optional
 * `balanced=true` after the sizes; false after an error that ends the item. */
static bool parse_split_args(parser *p, split_args *sa)
{
	if (!lp_expect(p, T_LPAREN))
		return false;
	for (;;) {
		if (sa->n > 0 && at_balanced(p, sa->tile)) {
			if (!parse_balanced(p, &sa->balanced_given, &sa->balanced, &sa->balanced_pos))
				return false;
		} else if (!parse_split_size(p, sa)) {
			return false;
		}
		if (!at(p, T_COMMA))
			break;
		next(p);
	}
	return lp_expect(p, T_RPAREN);
}

/* The new indices and the schedule entry of a well-formed split or tile at st. */
static void add_split(parser *p, const split_names *nm, const split_args *sa, const tok *st)
{
	int n = sa->n;
	int outs[MAX_SCHED_ARGS];
	for (int a = 0; a < n; a++) {
		outs[a] = do_split(p, sa->x[a], sa->size[a], nm->v[a], nm->pos[a], sa->xpos[a]);
		if (outs[a] < 0)
			return;
	}
	ir_sched *s = new_sched(p, sa->tile ? SC_TILE : SC_SPLIT, tpos(st), n);
	for (int a = 0; a < n; a++) {
		s->idx[a] = sa->x[a];
		s->size[a] = sa->size[a];
		s->out[a] = outs[a];
		s->arg_pos[a] = sa->xpos[a];
		s->size_expr[a] = sa->size_expr[a];
		p->k->indices[sa->x[a]].balanced = sa->balanced;
	}
	s->balanced = sa->balanced;
	s->balanced_pos = sa->balanced_pos;
}

/* `a, b = tile(x=32, y=64)` or `a = split(x, 32)`, each with an optional
 * `balanced=true` after the sizes */
static bool parse_split(parser *p)
{
	tok *st = cur(p);
	split_names nm;
	split_args sa;
	memset(&sa, 0, sizeof sa);
	sa.ok = true;
	if (!parse_split_names(p, &nm) || !parse_split_word(p, &sa) || !parse_split_args(p, &sa))
		return false;
	if (sa.n != nm.n) {
		lp_err(p, tpos(st), "%s makes %d ind%s, but %d name%s given on the left", sa.what, sa.n,
		       sa.n == 1 ? "ex" : "ices", nm.n, nm.n == 1 ? " is" : "s are");
		return true;
	}
	if (sa.ok)
		add_split(p, &nm, &sa, st);
	return true;
}

static bool parse_schedule_item(parser *p)
{
	if (at_word(p, "reorder") && peek(p, 1)->kind == T_LPAREN)
		return parse_reorder(p);
	return parse_split(p);
}

void lp_parse_schedule(parser *p)
{
	tok *t = cur(p);
	next(p);
	if (p->seen_schedule)
		lp_err(p, tpos(t), "second 'schedule' block (write one)");
	else if (p->seen_plan)
		lp_err(p, tpos(t), "'schedule' must come before 'plan'");
	p->seen_schedule = true;
	p->after_logic = true;
	lp_block_items(p, t, "schedule", parse_schedule_item);
}
