/* parse_decl.c: the declaration grammar: `param` (with `tune` candidates), `array`, layouts. */
#include "lang/parse_internal.h"

#include <stdio.h>
#include <stdlib.h>

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
	if (!lp_parse_int(p, false, "a tune value", v, NULL))
		return false;
	if (*v < 1) {
		lp_err(p, vp, "tune value %lld of '%s' must be at least 1", (long long)*v, name);
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
			lp_err(p, vp, "param '%s' has more than %d tune values", name, TUNE_MAX_VALUES);
			return false;
		}
		if (!tune_value(p, name, &out[*n]))
			return false;
		(*n)++;
		if (at(p, T_RBRACE)) {
			next(p);
			return true;
		}
		if (!lp_expect(p, T_COMMA))
			return false;
	}
}

/* `lo .. hi [step s]` after `tune`: both ends included, hi reached by steps. */
static bool tune_range(parser *p, const char *name, int64_t *out, int *n)
{
	int64_t lo, hi, step = 1;
	ir_pos rp = tpos(cur(p));
	if (!tune_value(p, name, &lo) || !lp_expect(p, T_DOTDOT) || !tune_value(p, name, &hi))
		return false;
	if (at_word(p, "step")) {
		next(p);
		if (!tune_value(p, name, &step))
			return false;
	}
	if (hi < lo) {
		lp_err(p, rp, "empty tune range %lld..%lld of '%s'", (long long)lo, (long long)hi,
		     name);
		return false;
	}
	if ((hi - lo) % step != 0) {
		lp_err(p, rp,
		     "tune range %lld..%lld of '%s' does not end on a step of %lld (both ends are included)",
		     (long long)lo, (long long)hi, name, (long long)step);
		return false;
	}
	if ((hi - lo) / step >= TUNE_MAX_VALUES) {
		lp_err(p, rp, "param '%s' has more than %d tune values", name, TUNE_MAX_VALUES);
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
		lp_err(p, pr->tune_pos, "tunable param '%s' needs a plain integer default, not an expression of params",
		     pr->name);
		return false;
	}
	int64_t *vals = lp_alloc(p, sizeof *vals * TUNE_MAX_VALUES);
	int n = 0;
	bool ok = at(p, T_LBRACE) ? tune_list(p, pr->name, vals, &n) : tune_range(p, pr->name, vals, &n);
	if (!ok)
		return false;
	qsort(vals, (size_t)n, sizeof *vals, cmp_i64);
	bool has_default = false;
	for (int i = 0; i < n; i++) {
		if (i > 0 && vals[i] == vals[i - 1]) {
			lp_err(p, pr->tune_pos, "tune value %lld of '%s' is listed twice", (long long)vals[i],
			     pr->name);
			return false;
		}
		has_default |= vals[i] == pr->value;
	}
	if (!has_default) {
		lp_err(p, pr->tune_pos, "the default %lld of '%s' is not among its tune values",
		     (long long)pr->value, pr->name);
		return false;
	}
	pr->ntune = n;
	pr->tune = vals;
	return true;
}

/* `param A = 1, B : runtime, C = 2*A, T = 64 tune {32, 64}` */
bool lp_parse_param(parser *p)
{
	next(p);
	for (;;) {
		ir_pos npos;
		const char *name = lp_expect_ident(p, "a param name", &npos);
		if (!name)
			return false;
		ir_param pr;
		memset(&pr, 0, sizeof pr);
		pr.name = name;
		pr.pos = npos;
		if (at(p, T_ASSIGN)) {
			next(p);
			ir_expr *e;
			if (!lp_parse_int(p, true, "a param value", &pr.value, &e)) {
				lp_sym_failed(p, name, npos);
				return false;
			}
			pr.has_value = true;
			if (e->kind != EX_NUM)
				pr.def = e;
			if (at_word(p, "tune") && !parse_tune(p, &pr))
				return false;
		} else if (at(p, T_COLON)) {
			next(p);
			if (!lp_expect(p, T_RUNTIME))
				return false;
			pr.runtime = true;
			if (at_word(p, "tune")) {
				lp_err(p, tpos(cur(p)), "runtime param '%s' cannot be tuned", name);
				return false;
			}
		} else {
			lp_err(p, tpos(cur(p)), "expected '= VALUE' or ': runtime' after param '%s'",
			     name);
			return false;
		}
		if (!lp_name_free(p, name, npos) || lp_too_many(p, p->k->nparams, npos, "params"))
			return false;
		ct_kernel *k = p->k;
		k->params = lp_grow(p, k->params, &p->cap_params, k->nparams + 1, sizeof *k->params);
		k->params[k->nparams] = pr;
		lp_sym_add(p, name, SYM_PARAM, k->nparams);
		k->nparams++;
		if (!at(p, T_COMMA))
			return true;
		next(p);
	}
}

/* A layout: row_major | col_major | first_major | last_major | (d0, d1, ..) */
bool lp_parse_layout(parser *p, int rank, const char *owner, int *order)
{
	tok *t = cur(p);
	if (t->kind == T_IDENT) {
		bool first = strcmp(t->s, "row_major") == 0 || strcmp(t->s, "first_major") == 0;
		bool last = strcmp(t->s, "col_major") == 0 || strcmp(t->s, "last_major") == 0;
		if (!first && !last) {
			lp_err(p, tpos(t),
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
		lp_tok_desc(t, found, sizeof found);
		lp_err(p, tpos(t), "expected a layout, found %s", found);
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
			lp_tok_desc(d, found, sizeof found);
			lp_err(p, tpos(d), "expected a dimension number, found %s", found);
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
		if (!lp_expect(p, T_RPAREN))
			return false;
		break;
	}
	if (!perm || n != rank) {
		lp_err(p, tpos(t),
		     "layout of %s must be an order of its %d dimension%s (a permutation of 0..%d)",
		     owner, rank, rank == 1 ? "" : "s", rank - 1);
		return false;
	}
	return true;
}

/* What follows `array A :` (the type, extents, role, options); adds A. */
static bool parse_array_decl(parser *p, const char *name, ir_pos npos)
{
	ir_array arr;
	memset(&arr, 0, sizeof arr);
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
		lp_tok_desc(tt, found, sizeof found);
		lp_err(p, tpos(tt), "expected an element type (f32, f64, i32 or i64), found %s",
		     found);
		return false;
	}
	arr.type = tvals[ti];
	next(p);
	if (!lp_expect(p, T_LBRACKET))
		return false;
	for (;;) {
		ir_pos epos = tpos(cur(p));
		ir_expr *e = lp_parse_expr(p);
		if (!e)
			return false;
		if (arr.rank >= IR_MAX_RANK) {
			lp_err(p, epos, "'%s' has too many dimensions (at most %d)", name,
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
		if (!lp_expect(p, T_RBRACKET))
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
		lp_tok_desc(cur(p), found, sizeof found);
		lp_err(p, tpos(cur(p)),
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
				lp_err(p, tpos(o), "layout of '%s' is given twice", name);
				return false;
			}
			has_layout = true;
			next(p);
			if (!lp_expect(p, T_ASSIGN))
				return false;
			char owner[300];
			snprintf(owner, sizeof owner, "'%s'", name);
			if (!lp_parse_layout(p, arr.rank, owner, arr.order))
				return false;
		} else {
			lp_err(p, tpos(o), "unknown array option '%s' (use layout= or strided)",
			     o->s);
			return false;
		}
	}
	if (!lp_name_free(p, name, npos) || lp_too_many(p, p->k->narrays, npos, "arrays"))
		return false;
	ct_kernel *k = p->k;
	k->arrays = lp_grow(p, k->arrays, &p->cap_arrays, k->narrays + 1, sizeof *k->arrays);
	k->arrays[k->narrays] = arr;
	lp_sym_add(p, name, SYM_ARRAY, k->narrays);
	k->narrays++;
	return true;
}

/* `array A : f32[M, K] input [layout=...] [strided]` */
bool lp_parse_array(parser *p)
{
	next(p);
	ir_pos npos;
	const char *name = lp_expect_ident(p, "an array name", &npos);
	if (!name || !lp_expect(p, T_COLON))
		return false;
	if (parse_array_decl(p, name, npos))
		return true;
	lp_sym_failed(p, name, npos);
	return false;
}
