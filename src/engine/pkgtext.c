/* pkgtext.c: the C text the device packages' host wrappers share: affine sizes, string literals, array comments, the launch's sizes. */
#include "engine/pkgtext.h"

#include <stdio.h>
#include <string.h>

void pkg_aff(ct_buf *b, const ct_kernel *k, aff x)
{
	int64_t c = x.c;
	int nrt = 0;
	for (int i = 0; i < x.n; i++) {
		if (x.t[i].kind != AFF_PARAM)
			continue;
		if (k->params[x.t[i].id].runtime)
			nrt++;
		else
			c += x.t[i].coef * k->params[x.t[i].id].value;
	}
	if (!nrt) {
		ct_buf_printf(b, "%lld", (long long)c);
		return;
	}
	ct_buf_puts(b, "(");
	bool first = true;
	for (int i = 0; i < x.n; i++) {
		if (x.t[i].kind != AFF_PARAM || !k->params[x.t[i].id].runtime)
			continue;
		int64_t coef = x.t[i].coef;
		const char *name = k->params[x.t[i].id].name;
		if (coef == 1)
			ct_buf_printf(b, "%s%s", first ? "" : " + ", name);
		else
			ct_buf_printf(b, "%s%lld * %s", first ? "" : " + ", (long long)coef, name);
		first = false;
	}
	if (c)
		ct_buf_printf(b, " + %lld", (long long)c);
	ct_buf_puts(b, ")");
}

const char *pkg_role_name(ct_role r)
{
	switch (r) {
	case CT_INPUT: return "input";
	case CT_OUTPUT: return "output";
	case CT_INOUT: return "inout";
	case CT_CONST: return "const";
	default: return "temp";
	}
}

void pkg_c_string(ct_buf *b, const char *s, size_t len)
{
	ct_buf_puts(b, "\"");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n')
			ct_buf_puts(b, i + 1 < len ? "\\n\"\n\"" : "\\n");
		else if (c == '"' || c == '\\')
			ct_buf_printf(b, "\\%c", c);
		else if (c == '?' && i > 0 && s[i - 1] == '?') /* "??x" is a trigraph under -std=c11 */
			ct_buf_puts(b, "\\?");
		else if (c < 32 || c > 126)
			ct_buf_printf(b, "\\%03o", c);
		else
			ct_buf_printf(b, "%c", c);
	}
	ct_buf_puts(b, "\"");
}

void pkg_array_docs(ct_buf *b, const ct_kernel *k)
{
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		ct_buf_printf(b, " *   %s: %s[", ar->name, ct_dtype_name(ar->type));
		for (int d = 0; d < ar->rank; d++) {
			ct_buf_puts(b, d ? ", " : "");
			pkg_aff(b, k, ar->ext[d]);
		}
		ct_buf_printf(b, "] elements, dense, %s\n", pkg_role_name(ar->role));
	}
}

/* C text of the least (want_max false) or greatest value of affine f over the boxes
 * [ct_blY, ct_bhY) of the indices it uses (AFF_INDEX Y), params by name (pkg_aff). */
static void pkg_aff_bound(ct_buf *b, const ct_kernel *k, aff f, bool want_max)
{
	ct_buf_puts(b, "(");
	pkg_aff(b, k, f);
	for (int t = 0; t < f.n; t++) {
		const aff_term *tm = &f.t[t];
		if (tm->kind != AFF_INDEX || tm->coef == 0)
			continue;
		bool hi_end = (tm->coef > 0) == want_max;
		ct_buf_printf(b, " + %lld * %s%d%s", (long long)tm->coef, hi_end ? "(ct_bh" : "ct_bl", tm->id,
		              hi_end ? " - 1)" : "");
	}
	ct_buf_puts(b, ")");
}

/* Statements that set `int64_t n` to the greatest trip span of affine loop x over the boxes of
 * the loops declared before it, as ir_index_span computes it (the package's runtime params
 * are known only here): a box per loop, an empty one emptying those whose bounds use it. */
static void pkg_affine_span(ct_buf *b, const ct_kernel *k, int x)
{
	for (int y = 0; y <= x; y++) {
		const ir_index *iy = &k->indices[y];
		if (iy->kind != IX_LOOP)
			continue;
		bool af = ir_index_affine(iy);
		int nlo = af ? iy->nlo : 1, nhi = af ? iy->nhi : 1;
		const aff *los = af ? iy->los : &iy->lo, *his = af ? iy->his : &iy->hi;
		ct_buf_printf(b, "\t\tint64_t ct_bl%d = INT64_MIN, ct_bh%d = INT64_MAX, ct_be%d = 0;\n", y, y, y);
		for (int j = 0; j < nlo + nhi; j++) {
			aff f = j < nlo ? los[j] : his[j - nlo];
			for (int t = 0; t < f.n; t++)
				if (f.t[t].kind == AFF_INDEX && f.t[t].id < y)
					ct_buf_printf(b, "\t\tct_be%d |= ct_be%d;\n", y, f.t[t].id);
			ct_buf_puts(b, "\t\t{\n\t\t\tint64_t v = ");
			pkg_aff_bound(b, k, f, j >= nlo);
			if (j < nlo)
				ct_buf_printf(b, ";\n\t\t\tif (v > ct_bl%d)\n\t\t\t\tct_bl%d = v;\n\t\t}\n", y, y);
			else
				ct_buf_printf(b, ";\n\t\t\tif (v < ct_bh%d)\n\t\t\t\tct_bh%d = v;\n\t\t}\n", y, y);
		}
		ct_buf_printf(b, "\t\tct_be%d |= ct_bh%d <= ct_bl%d;\n\t\t(void)ct_be%d;\n", y, y, y, y);
		if (y < x)
			continue;
		ct_buf_puts(b, "\t\tint64_t n = INT64_MAX;\n");
		ct_arena a;
		ct_arena_init(&a, k->ctx);
		for (int u = 0; u < nhi; u++)
			for (int l = 0; l < nlo; l++) {
				/* the greatest of his[u] - los[l], a term in both counted once (aff_sub) */
				bool ok = true;
				aff dd = aff_sub(&a, his[u], los[l], &ok);
				ct_buf_puts(b, "\t\t{\n\t\t\tint64_t v = ");
				pkg_aff_bound(b, k, dd, true);
				ct_buf_puts(b, ";\n\t\t\tif (v < n)\n\t\t\t\tn = v;\n\t\t}\n");
			}
		ct_arena_free(&a);
		ct_buf_printf(b, "\t\tif (ct_be%d)\n\t\t\tn = 0;\n", y);
	}
}

void pkg_ndrange(ct_buf *b, const ct_kernel *k, const ocl_launch *L)
{
	ct_buf_printf(b, "\tsize_t ct_g[3] = {1, 1, 1}, ct_l[3] = {1, 1, 1};\n");
	for (int d = 0; d < L->ndims; d++) {
		char root[64];
		snprintf(root, sizeof root, "%s", L->dim_name[d]);
		char *slash = strchr(root, '/');
		if (slash)
			*slash = 0;
		int x = -1;
		for (int i = 0; i < k->nindices; i++)
			if (strcmp(k->indices[i].name, root) == 0)
				x = i;
		if (x < 0) /* no parallelize: one work-item */
			continue;
		const ir_index *ix = &k->indices[x];
		if (ir_index_affine(ix)) {
			ct_buf_printf(b, "\t{\n");
			pkg_affine_span(b, k, x);
		} else {
			ct_buf_printf(b, "\t{\n\t\tint64_t n = ");
			pkg_aff(b, k, ix->hi);
			ct_buf_puts(b, " - ");
			pkg_aff(b, k, ix->lo);
			ct_buf_puts(b, ";\n");
		}
		if (ix->child >= 0)
			ct_buf_printf(b, "\t\tint64_t groups = n < 1 ? 1 : (n + %lld - 1) / %lld;\n", (long long)ix->step,
			              (long long)ix->step);
		else
			ct_buf_puts(b, "\t\tint64_t groups = n < 1 ? 1 : n;\n");
		ct_buf_printf(b, "\t\tct_g[%d] = (size_t)groups * %zu;\n\t\tct_l[%d] = %zu;\n\t}\n", d, L->local[d], d,
		              L->local[d]);
	}
}
