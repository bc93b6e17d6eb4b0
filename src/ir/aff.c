/* aff.c: affine expressions over params and indices, with overflow checks. */
#include "ir/ir.h"

#include <string.h>

static int term_cmp(const aff_term *x, const aff_term *y)
{
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

aff aff_const(int64_t c)
{
	aff r = {c, 0, NULL};
	return r;
}

aff aff_sym1(ct_arena *a, int kind, int id, int64_t coef, bool *ok)
{
	aff r = {0, 0, NULL};
	if (coef == 0)
		return r;
	r.t = ct_arena_alloc(a, sizeof *r.t);
	if (!r.t) {
		*ok = false;
		return r;
	}
	r.t[0].kind = kind;
	r.t[0].id = id;
	r.t[0].coef = coef;
	r.n = 1;
	return r;
}

/* x + k*y, merging the sorted term lists. */
static aff aff_axpy(ct_arena *a, aff x, aff y, int64_t k, bool *ok)
{
	aff r = {0, 0, NULL};
	int64_t ky;
	if (!ct_mul_ok(y.c, k, &ky) || !ct_add_ok(x.c, ky, &r.c))
		*ok = false;
	if (x.n + y.n == 0)
		return r;
	r.t = ct_arena_alloc(a, sizeof *r.t * (size_t)(x.n + y.n));
	if (!r.t) {
		*ok = false;
		return r;
	}
	int i = 0, j = 0;
	while (i < x.n || j < y.n) {
		int c = i >= x.n ? 1 : j >= y.n ? -1 : term_cmp(&x.t[i], &y.t[j]);
		aff_term t;
		if (c < 0) {
			t = x.t[i++];
		} else {
			t = y.t[j++];
			if (!ct_mul_ok(t.coef, k, &t.coef))
				*ok = false;
			if (c == 0 && !ct_add_ok(t.coef, x.t[i++].coef, &t.coef))
				*ok = false;
		}
		if (t.coef != 0)
			r.t[r.n++] = t;
	}
	return r;
}

aff aff_add(ct_arena *a, aff x, aff y, bool *ok) { return aff_axpy(a, x, y, 1, ok); }
aff aff_sub(ct_arena *a, aff x, aff y, bool *ok) { return aff_axpy(a, x, y, -1, ok); }

aff aff_scale(ct_arena *a, aff x, int64_t k, bool *ok)
{
	return aff_axpy(a, aff_const(0), x, k, ok);
}

aff aff_subst_index(ct_arena *a, aff x, const aff *const *subst, bool *ok)
{
	aff r = aff_const(x.c);
	for (int i = 0; i < x.n; i++) {
		const aff_term *t = &x.t[i];
		if (t->kind == AFF_INDEX && subst[t->id])
			r = aff_axpy(a, r, *subst[t->id], t->coef, ok);
		else
			r = aff_axpy(a, r, aff_sym1(a, t->kind, t->id, t->coef, ok), 1, ok);
	}
	return r;
}

int64_t aff_eval(aff x, const int64_t *params, const int64_t *idx, bool *ok)
{
	int64_t v = x.c, p;
	for (int i = 0; i < x.n; i++) {
		int64_t s = x.t[i].kind == AFF_PARAM ? params[x.t[i].id] : idx[x.t[i].id];
		if (!ct_mul_ok(x.t[i].coef, s, &p) || !ct_add_ok(v, p, &v))
			*ok = false;
	}
	return v;
}

bool aff_is_const(aff x) { return x.n == 0; }

bool aff_equal(aff x, aff y)
{
	if (x.c != y.c || x.n != y.n)
		return false;
	for (int i = 0; i < x.n; i++)
		if (term_cmp(&x.t[i], &y.t[i]) != 0 || x.t[i].coef != y.t[i].coef)
			return false;
	return true;
}

int64_t aff_coef(aff x, int kind, int id)
{
	for (int i = 0; i < x.n; i++)
		if (x.t[i].kind == kind && x.t[i].id == id)
			return x.t[i].coef;
	return 0;
}

bool aff_uses_kind(aff x, int kind)
{
	for (int i = 0; i < x.n; i++)
		if (x.t[i].kind == kind)
			return true;
	return false;
}

void ir_param_values(const ct_kernel *k, int64_t *params)
{
	for (int i = 0; i < k->nparams; i++)
		params[i] = k->params[i].has_value ? k->params[i].value : 0;
}

bool ir_params_complete(const ct_kernel *k)
{
	for (int i = 0; i < k->nparams; i++)
		if (!k->params[i].has_value)
			return false;
	return true;
}

ct_status ir_params_need_values(const ct_kernel *k)
{
	for (int i = 0; i < k->nparams; i++)
		if (!k->params[i].has_value)
			return ct_error(k->ctx, CT_ERR_USAGE, "runtime param '%s' needs a value (-D %s=VALUE)",
			                k->params[i].name, k->params[i].name);
	return CT_OK;
}

const char *ir_dtype_c(ct_dtype t)
{
	switch (t) {
	case CT_F32: return "float";
	case CT_F64: return "double";
	case CT_I32: return "int32_t";
	case CT_I64: return "int64_t";
	}
	return "double";
}
