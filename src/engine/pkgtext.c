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
		ct_buf_printf(b, "\t{\n\t\tint64_t n = ");
		pkg_aff(b, k, ix->hi);
		ct_buf_puts(b, " - ");
		pkg_aff(b, k, ix->lo);
		if (ix->child >= 0)
			ct_buf_printf(b, ";\n\t\tint64_t groups = n < 1 ? 1 : (n + %lld - 1) / %lld;\n", (long long)ix->step,
			              (long long)ix->step);
		else
			ct_buf_puts(b, ";\n\t\tint64_t groups = n < 1 ? 1 : n;\n");
		ct_buf_printf(b, "\t\tct_g[%d] = (size_t)groups * %zu;\n\t\tct_l[%d] = %zu;\n\t}\n", d, L->local[d], d,
		              L->local[d]);
	}
}
