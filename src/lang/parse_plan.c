/* parse_plan.c: the plan grammar: `plan(target=...)`, caches and the loop items; options by table. */
#include "lang/parse_internal.h"

#include <stdio.h>

/* Mark option opt as given at pos; false (after an error) when repeated. */
static bool opt_once(parser *p, ir_opt_pos *o, const char *opt, ir_pos pos)
{
	if (o->given) {
		lp_err(p, pos, "option '%s' is given twice", opt);
		return false;
	}
	o->given = true;
	o->pos = pos;
	return true;
}

static bool parse_cache_opt(parser *p, ir_plan_item *c)
{
	tok *o = cur(p);
	ir_pos opos;
	const char *opt = lp_expect_ident(p, "a cache option", &opos);
	if (!opt || !lp_expect(p, T_ASSIGN))
		return false;
	const ct_kernel *k = p->k;
	if (strcmp(opt, "level") == 0 || strcmp(opt, "max_elements") == 0 ||
	    strcmp(opt, "index") == 0) {
		if (c->where_opt.given) {
			lp_err(p, opos, "give only one of level=, index= and max_elements=");
			return false;
		}
		opt_once(p, &c->where_opt, opt, opos);
		if (opt[0] == 'i') {
			tok *t = cur(p);
			ir_pos ip;
			if (!lp_expect_ident(p, "an index name", &ip))
				return false;
			c->where = CP_INDEX;
			c->index_id = lp_find_index(p, t, "cache");
			return c->index_id >= 0;
		}
		ir_pos vpos = tpos(cur(p));
		if (!lp_parse_int(p, false, opt, &c->value, NULL))
			return false;
		c->where = opt[0] == 'l' ? CP_LEVEL : CP_BUDGET;
		if (c->where == CP_BUDGET && c->value < 1) {
			lp_err(p, vpos, "max_elements must be at least 1, not %lld",
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
		return lp_parse_layout(p, k->arrays[c->root_array].rank, owner, c->order);
	}
	if (strcmp(opt, "thrifty") == 0)
		return opt_once(p, &c->thrifty_opt, opt, opos) && lp_parse_bool(p, opt, &c->thrifty);
	if (strcmp(opt, "double_buffer") == 0)
		return opt_once(p, &c->double_buffer_opt, opt, opos) &&
		       lp_parse_bool(p, opt, &c->double_buffer);
	if (strcmp(opt, "trigger_level") == 0 || strcmp(opt, "trigger_index") == 0) {
		if (c->trigger_opt.given) {
			lp_err(p, opos,
			     "give trigger_level= or trigger_index=, not both (nor twice)");
			return false;
		}
		opt_once(p, &c->trigger_opt, opt, opos);
		c->has_trigger = true;
		if (strcmp(opt, "trigger_index") == 0) {
			tok *t = cur(p);
			ir_pos ip;
			if (!lp_expect_ident(p, "an index name", &ip))
				return false;
			c->trigger_is_index = true;
			c->trigger_index = lp_find_index(p, t, "cache");
			return c->trigger_index >= 0;
		}
		return lp_parse_int(p, false, opt, &c->trigger_level, NULL);
	}
	if (strcmp(opt, "location") == 0 || strcmp(opt, "strategy") == 0) {
		bool loc = opt[0] == 'l';
		if (!opt_once(p, loc ? &c->location_opt : &c->strategy_opt, opt, opos))
			return false;
		tok *t = cur(p);
		ir_pos vp;
		if (!lp_expect_ident(p, loc ? "a location" : "a strategy", &vp))
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
			lp_err(p, vp,
			     loc ? "unknown location '%s' (use global, local or private)"
			         : "unknown strategy '%s' (use blocked or striped)",
			     t->s);
			return false;
		}
		if (p->k->target != TARGET_OPENCL) {
			lp_err(p, opos, "%s= is only for plan(target=opencl)", opt);
			return false;
		}
		return true;
	}
	lp_err(p, tpos(o),
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

/* The n of `unroll(x, by=n)`: 2 .. IR_MAX_UNROLL_BY copies of the body per
 * iteration of the compiled loop. */
static bool parse_unroll_by(parser *p, int64_t *out)
{
	ir_pos vp = tpos(cur(p));
	if (!lp_parse_int(p, false, "by", out, NULL))
		return false;
	if (*out < 2 || *out > IR_MAX_UNROLL_BY) {
		lp_err(p, vp, "unroll by=%lld: the factor must be 2 .. %d", (long long)*out, IR_MAX_UNROLL_BY);
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
		lp_tok_desc(t, found, sizeof found);
		lp_err(p, tpos(t),
		     "expected a plan item (NAME = cache(...), vectorize, unroll or parallelize), "
		     "found %s",
		     found);
		return false;
	}
	const char *what = t->s;
	next(p);
	if (!lp_expect(p, T_LPAREN))
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
		if (!lp_expect_ident(p, "an index name", &ap))
			return false;
		if (at(p, T_ASSIGN)) {
			next(p);
			opts = true;
			if (c.kind == PL_VECTORIZE && strcmp(a->s, "nontemporal") == 0) {
				if (!opt_once(p, &nontemporal, a->s, ap) || !lp_parse_bool(p, a->s, &c.nontemporal))
					return false;
			} else if (c.kind == PL_VECTORIZE) {
				lp_err(p, ap, "unknown vectorize option '%s' (use nontemporal)", a->s);
				return false;
			} else if (c.kind == PL_UNROLL && strcmp(a->s, "by") == 0) {
				if (!opt_once(p, &by, a->s, ap) || !parse_unroll_by(p, &c.unroll_by))
					return false;
			} else if (c.kind == PL_UNROLL) {
				lp_err(p, ap, "unknown unroll option '%s' (use by)", a->s);
				return false;
			} else if (strcmp(a->s, "policy") == 0) {
				if (!opt_once(p, &policy, a->s, ap))
					return false;
				tok *v = cur(p);
				ir_pos vp;
				if (!lp_expect_ident(p, "a policy", &vp))
					return false;
				if (word_is(v, "static"))
					c.policy = POLICY_STATIC;
				else if (word_is(v, "dynamic"))
					c.policy = POLICY_DYNAMIC;
				else {
					lp_err(p, vp, "unknown policy '%s' (use static or dynamic)",
					     v->s);
					return false;
				}
			} else if (strcmp(a->s, "max_threads") == 0) {
				if (!opt_once(p, &threads, a->s, ap))
					return false;
				ir_pos vp = tpos(cur(p));
				if (!lp_parse_int(p, false, "max_threads", &c.max_threads, NULL))
					return false;
				if (c.max_threads < 1) {
					lp_err(p, vp, "max_threads must be at least 1, not %lld",
					     (long long)c.max_threads);
					return false;
				}
			} else if (strcmp(a->s, "spmd") == 0) {
				if (!opt_once(p, &spmd, a->s, ap) || !lp_parse_bool(p, a->s, &c.spmd))
					return false;
			} else {
				lp_err(p, ap,
				     "unknown parallelize option '%s' (use policy, max_threads or "
				     "spmd)",
				     a->s);
				return false;
			}
		} else {
			if (opts) {
				lp_err(p, ap, "indices must come before the options of %s", what);
				return false;
			}
			if (n >= MAX_SCHED_ARGS) {
				lp_err(p, ap, "too many indices (at most %d)", MAX_SCHED_ARGS);
				return false;
			}
			ids[n] = lp_find_index(p, a, what);
			if (ids[n] < 0)
				ok = false;
			for (int b = 0; b < n && ok; b++)
				if (ids[b] == ids[n]) {
					lp_err(p, ap, "index '%s' appears twice in %s", a->s, what);
					ok = false;
				}
			pos[n++] = ap;
		}
		if (at(p, T_COMMA)) {
			next(p);
			continue;
		}
		if (!lp_expect(p, T_RPAREN))
			return false;
		break;
	}
	if (!ok)
		return true;
	if (n == 0) {
		lp_err(p, c.pos, "%s needs an index", what);
		return true;
	}
	if (c.kind != PL_PARALLELIZE && n != 1) {
		lp_err(p, pos[1], "%s takes one index", what);
		return true;
	}
	if (c.kind == PL_PARALLELIZE && p->k->target == TARGET_OPENCL && n > 3) {
		lp_err(p, pos[3], "opencl parallelizes at most 3 indices (work-group dimensions)");
		return true;
	}
	ct_kernel *k = p->k;
	if (lp_too_many(p, k->nplan, c.pos, "plan items"))
		return true;
	c.n = n;
	c.idx = lp_alloc(p, sizeof *c.idx * (size_t)n);
	c.idx_pos = lp_alloc(p, sizeof *c.idx_pos * (size_t)n);
	memcpy(c.idx, ids, sizeof *c.idx * (size_t)n);
	memcpy(c.idx_pos, pos, sizeof *c.idx_pos * (size_t)n);
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
		tok *o = cur(p);
		ir_pos op;
		if (!lp_expect_ident(p, "'target'", &op)) {
			lp_sync(p, p->i);
			return;
		}
		if (strcmp(o->s, "target") != 0) {
			lp_err(p, op, "unknown plan option '%s' (use target=host or target=opencl)",
			     o->s);
			lp_sync(p, p->i);
			return;
		}
		if (!lp_expect(p, T_ASSIGN)) {
			lp_sync(p, p->i);
			return;
		}
		tok *v = cur(p);
		ir_pos vp;
		if (!lp_expect_ident(p, "a target", &vp)) {
			lp_sync(p, p->i);
			return;
		}
		if (word_is(v, "host"))
			p->k->target = TARGET_HOST;
		else if (word_is(v, "opencl"))
			p->k->target = TARGET_OPENCL;
		else
			lp_err(p, vp, "unknown target '%s' (use host or opencl)", v->s);
		if (!lp_expect(p, T_RPAREN)) {
			lp_sync(p, p->i);
			return;
		}
	}
	lp_block_items(p, t, "plan", parse_plan_item);
}
