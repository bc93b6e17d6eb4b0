/* cexpr.c: the C expression printer: affine bounds, array accesses (offsets, strides, checked-mode
 * ranges) and typed expressions; cgen.c, oclgen.c, rtile.c and the loop emitters all print through it. */
#include "gen/cgen.h"
#include "ir/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The floor-division helper, added to the preamble on first use (kernels
 * without cache regions never need it, and their text stays as it was). */
static const char floordiv_helper[] =
	"static inline int64_t ct_floordiv64(int64_t a, int64_t b) { int64_t q = a / b; "
	"return (a % b != 0 && ((a % b < 0) != (b < 0))) ? q - 1 : q; }";

static void need_floordiv(cg *g)
{
	if (!g->floordiv && g->kg)
		kg_preamble(g->kg, "%s", floordiv_helper);
	g->floordiv = true;
}

/* ------------------------------------------------------------ affine text */

/* Loop variable v as C: its name, or its fixed value. */
static void put_loop_var(cg *g, ct_buf *b, int v)
{
	if (g->fixed[v])
		ct_buf_printf(b, g->fixed_val[v] < 0 ? "(%lld)" : "%lld", (long long)g->fixed_val[v]);
	else
		ct_buf_puts(b, g->iname[v]);
}

/* The value of original index id as C: the sum of its chain's loop variables. */
static void put_orig_index(cg *g, ct_buf *b, int id, bool paren)
{
	const ct_looptree *t = g->t;
	if (id < 0 || id >= g->nindices) {
		cg_bad(g, "index", id);
		return;
	}
	/* chains exist for the kernel's own indices only; a copy-loop index is
	 * its loop variable */
	int n = t->chain_len && id < g->k->nindices ? t->chain_len[id] : 0;
	if (n <= 1) {
		put_loop_var(g, b, n == 1 && t->chain ? t->chain[id][0] : id);
		return;
	}
	/* the variables, then the fixed ones folded into one constant */
	int64_t c = 0;
	int vars = 0;
	for (int i = 0; i < n; i++) {
		int v = t->chain[id][i];
		if (g->fixed[v])
			c += g->fixed_val[v];
		else
			vars++;
	}
	if (vars == 0) {
		ct_buf_printf(b, c < 0 && paren ? "(%lld)" : "%lld", (long long)c);
		return;
	}
	bool wrap = paren && (vars > 1 || c != 0);
	if (wrap)
		ct_buf_putc(b, '(');
	bool first = true;
	for (int i = 0; i < n; i++)
		if (!g->fixed[t->chain[id][i]]) {
			ct_buf_printf(b, "%s%s", first ? "" : " + ", g->iname[t->chain[id][i]]);
			first = false;
		}
	if (c != 0)
		ct_buf_printf(b, " %c %lld", c < 0 ? '-' : '+', (long long)(c < 0 ? -c : c));
	if (wrap)
		ct_buf_putc(b, ')');
}

/* Derived value i (t->derived[i]) as C: a const declared at the start of
 * the kernel function. */
static void put_derived(cg *g, ct_buf *b, int i)
{
	if (i < 0 || i >= g->t->nderived) {
		cg_bad(g, "derived value", i);
		return;
	}
	ct_buf_printf(b, "ct_d%d", i);
}

/* floor(v / step) of the innermost open loop over index id (AFF_TRIP). */
static void put_trip(cg *g, ct_buf *b, int id)
{
	const lt_node *x = id >= 0 && id < g->nindices ? g->open[id] : NULL;
	if (!x) {
		cg_bad(g, "trip count of an index outside its loops: index", id);
		return;
	}
	if (x->step == 1) {
		put_loop_var(g, b, id);
		return;
	}
	if (g->fixed[id]) {
		ct_buf_printf(b, "%lld", (long long)ct_floordiv(g->fixed_val[id], x->step));
		return;
	}
	need_floordiv(g);
	ct_buf_printf(b, "ct_floordiv64(%s, %lld)", g->iname[id], (long long)x->step);
}

/* v * (v + 1) / 2 of the innermost open loop over index id (AFF_TRI: a row start of a packed
 * cache, plan_pack.c); in range, as the plan sized the buffer, so it cannot overflow. */
static void put_tri(cg *g, ct_buf *b, int id)
{
	if (id >= 0 && id < g->nindices && g->fixed[id]) {
		int64_t v = g->fixed_val[id];
		ct_buf_printf(b, "%lld", (long long)(v * (v + 1) / 2));
		return;
	}
	if (id < 0 || id >= g->nindices || !g->open[id]) {
		cg_bad(g, "row start of an index outside its loops: index", id);
		return;
	}
	ct_buf_printf(b, "(%s * (%s + 1) / 2)", g->iname[id], g->iname[id]);
}

/* One symbol of an affine expression (not a compile-time param). */
static void put_sym(cg *g, ct_buf *b, const aff_term *tm, bool paren)
{
	switch (tm->kind) {
	case AFF_PARAM:
		if (tm->id >= g->k->nparams)
			put_derived(g, b, tm->id - g->k->nparams);
		else if (tm->id >= 0)
			ct_buf_puts(b, g->pname[tm->id]);
		else
			cg_bad(g, "param", tm->id);
		return;
	case AFF_INDEX: put_orig_index(g, b, tm->id, paren); return;
	case AFF_LOOP:
		if (tm->id >= 0 && tm->id < g->nindices)
			put_loop_var(g, b, tm->id);
		else
			cg_bad(g, "loop index", tm->id);
		return;
	case AFF_TRIP: put_trip(g, b, tm->id); return;
	case AFF_TRI: put_tri(g, b, tm->id); return;
	default: cg_bad(g, "affine term kind", tm->kind); return;
	}
}

/* An affine expression over original indices, loop variables, trip counts,
 * params and derived values as C (int64). */
void cg_put_aff(cg *g, ct_buf *b, aff x)
{
	int64_t c = x.c;
	bool any = false;
	/* derived values (params numbered after the kernel's) last: `i - ct_d0` */
	for (int j = 0; j < 2 * x.n; j++) {
		const aff_term *tm = &x.t[j % x.n];
		bool derived = tm->kind == AFF_PARAM && tm->id >= g->k->nparams;
		if (derived != (j >= x.n))
			continue;
		if (tm->kind == AFF_PARAM && tm->id >= 0 && tm->id < g->k->nparams &&
		    !g->k->params[tm->id].runtime) {
			c += tm->coef * g->pval[tm->id];
			continue;
		}
		/* a loop variable that a register tile fixed folds into the constant */
		if ((tm->kind == AFF_LOOP || tm->kind == AFF_TRIP || tm->kind == AFF_TRI) && tm->id >= 0 &&
		    tm->id < g->nindices && g->fixed[tm->id]) {
			const lt_node *o = g->open[tm->id];
			int64_t val = g->fixed_val[tm->id];
			if (tm->kind == AFF_TRI)
				val = val * (val + 1) / 2;
			c += tm->coef * (tm->kind == AFF_TRIP && o ? ct_floordiv(val, o->step) : val);
			continue;
		}
		int64_t a = tm->coef;
		if (any)
			ct_buf_puts(b, a < 0 ? " - " : " + ");
		else if (a < 0)
			ct_buf_puts(b, "-");
		if (a < 0)
			a = -a;
		if (a != 1)
			ct_buf_printf(b, "%lld * ", (long long)a);
		put_sym(g, b, tm, a != 1 || x.n > 1);
		any = true;
	}
	if (!any)
		ct_buf_printf(b, "%lld", (long long)c);
	else if (c)
		ct_buf_printf(b, " %c %lld", c < 0 ? '-' : '+', (long long)(c < 0 ? -c : c));
}

void cg_aff(cg *g, ct_buf *b, aff x)
{
	cg_put_aff(g, b, x);
}

void cg_bound(cg *g, ct_buf *b, const bx *x)
{
	switch (x->kind) {
	case BX_CONST: ct_buf_printf(b, "%lld", (long long)x->v); return;
	case BX_PARAM:
		/* derived values by name; compile-time params folded */
		if (x->id >= g->k->nparams)
			put_derived(g, b, x->id - g->k->nparams);
		else if (x->id < 0)
			cg_bad(g, "param", x->id);
		else if (!g->k->params[x->id].runtime)
			ct_buf_printf(b, "%lld", (long long)g->pval[x->id]);
		else
			ct_buf_puts(b, g->pname[x->id]);
		return;
	case BX_MIN:
	case BX_MAX:
		ct_buf_puts(b, x->kind == BX_MIN ? "ct_min64(" : "ct_max64(");
		cg_bound(g, b, x->a);
		ct_buf_puts(b, ", ");
		cg_bound(g, b, x->b);
		ct_buf_putc(b, ')');
		return;
	default: {
		/* fully parenthesised: bounds are short and never ambiguous this way */
		static const char *const ops[] = {[BX_ADD] = " + ", [BX_SUB] = " - ", [BX_MUL] = " * ",
						  [BX_FLOORDIV] = " / ", [BX_MOD] = " % "};
		ct_buf_putc(b, '(');
		cg_bound(g, b, x->a);
		ct_buf_puts(b, ops[x->kind]);
		cg_bound(g, b, x->b);
		ct_buf_putc(b, ')');
		return;
	}
	}
}

/* Extent d of storage a as a bound expression: the tree's (buffers
 * included), or the kernel's folded when there is no tree. */
static const bx *storage_ext(cg *g, int a, int d)
{
	if (g->t->ext && a < g->t->narrays)
		return g->t->ext[a * IR_MAX_RANK + d];
	return bx_from_aff(&g->arena, g->k, g->arrays[a].ext[d]);
}

/* A bound as C without the parentheses that cg_bound puts around a whole
 * binary operation: `(N / 4) * 4` (for declarations and comments). */
void cg_put_bx_bare(cg *g, ct_buf *b, const bx *x)
{
	ct_buf t;
	ct_buf_init(&t);
	cg_bound(g, &t, x);
	const char *s = t.s ? t.s : "";
	size_t n = strlen(s);
	bool wrapped = n >= 2 && s[0] == '(';
	int depth = 0;
	for (size_t i = 0; wrapped && i < n; i++) {
		depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
		if (depth == 0 && i + 1 < n)
			wrapped = false; /* the first '(' closes before the end */
	}
	if (wrapped)
		ct_buf_printf(b, "%.*s", (int)(n - 2), s + 1);
	else
		ct_buf_puts(b, s);
	if (t.failed)
		b->failed = true;
	ct_buf_free(&t);
}

/* The element count of the dimensions of storage a after position r of its
 * layout (its stride there), as a folded bound expression: a constant when
 * every size is known, else a product of runtime params (and derived values). */
const bx *cg_layout_product(cg *g, int a, int from)
{
	const ir_array *arr = &g->arrays[a];
	const bx *ext[IR_MAX_RANK] = {NULL};
	for (int d = 0; d < arr->rank && d < IR_MAX_RANK; d++)
		ext[d] = storage_ext(g, a, d);
	return ir_layout_product(&g->arena, arr->rank, arr->order, ext, from);
}

/* Whether storage a is a kernel array declared `strided`: its base offset
 * and strides are arguments (ct_vo_A, ct_vs_A_D), not constants. */
bool cg_strided_arg(const cg *g, int a)
{
	return !g->dense_views && a < g->k->narrays && g->arrays[a].strided && g->arrays[a].role != CT_TEMP;
}

/* The stride texts of strided array a: the run-time arguments. */
static bool strided_stride_names(cg *g, int a)
{
	const ir_array *arr = &g->arrays[a];
	for (int d = 0; d < arr->rank; d++) {
		char name[48];
		if (arr->unit_minor && d == arr->order[arr->rank - 1])
			snprintf(name, sizeof name, "1"); /* dense along it: a constant the compiler vectorizes */
		else
			snprintf(name, sizeof name, "ct_vs%d_%d", a, d);
		size_t n = strlen(name) + 1;
		g->stride[a * IR_MAX_RANK + d] = malloc(n);
		if (!g->stride[a * IR_MAX_RANK + d])
			return false;
		memcpy(g->stride[a * IR_MAX_RANK + d], name, n);
	}
	return true;
}

/* Strides of all storage as C text, from its layout (most major first). */
bool cg_make_strides(cg *g)
{
	g->stride = calloc((size_t)g->narrays * IR_MAX_RANK + 1, sizeof *g->stride);
	if (!g->stride)
		return false;
	for (int a = 0; a < g->narrays; a++) {
		const ir_array *arr = &g->arrays[a];
		if (cg_strided_arg(g, a)) {
			if (!strided_stride_names(g, a))
				return false;
			continue;
		}
		for (int r = 0; r < arr->rank; r++) {
			const bx *st = cg_layout_product(g, a, r + 1);
			if (!st)
				return false;
			ct_buf b;
			ct_buf_init(&b);
			cg_bound(g, &b, st);
			g->stride[a * IR_MAX_RANK + arr->order[r]] = ct_buf_take(&b);
			if (!g->stride[a * IR_MAX_RANK + arr->order[r]])
				return false;
		}
	}
	return true;
}

/* Checked mode: the element count of every storage as C, and the dense
 * strides of strided arrays (their tests use the dense offset). */
bool cg_make_counts(cg *g)
{
	g->count = calloc((size_t)g->narrays + 1, sizeof *g->count);
	g->dstride = calloc((size_t)g->narrays * IR_MAX_RANK + 1, sizeof *g->dstride);
	if (!g->count || !g->dstride)
		return false;
	for (int a = 0; a < g->narrays; a++) {
		const ir_array *arr = &g->arrays[a];
		for (int r = -1; r < (cg_strided_arg(g, a) ? arr->rank : 0); r++) {
			const bx *p = cg_layout_product(g, a, r + 1);
			if (!p)
				return false;
			ct_buf b;
			ct_buf_init(&b);
			cg_bound(g, &b, p);
			char *txt = ct_buf_take(&b);
			if (!txt)
				return false;
			if (r < 0)
				g->count[a] = txt;
			else
				g->dstride[a * IR_MAX_RANK + arr->order[r]] = txt;
		}
	}
	return true;
}

/* Whether C text s has a space outside parentheses: a sum or product that
 * needs parentheses before `* stride` (a call such as `ct_floordiv64(k, 8)`
 * does not). */
static bool top_level_space(const char *s)
{
	int depth = 0;
	for (; *s; s++) {
		depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
		if (*s == ' ' && depth == 0)
			return true;
	}
	return false;
}

/* The linear offset of storage a at subscripts sub[] as C (no brackets):
 * with the strides of its layout (a strided array's arguments and base
 * offset), or with dense set, those of the dense layout of its extents
 * (what checked mode tests against the element count). */
static void put_offset(cg *g, ct_buf *b, int a, const aff *sub, bool dense)
{
	const ir_array *arr = &g->arrays[a];
	bool any = false;
	bool view = cg_strided_arg(g, a) && !(dense && g->dstride);
	if (view) { /* the view's base: any offset, even below the data */
		ct_buf_printf(b, "ct_vo%d", a);
		any = true;
	}
	char **strides = cg_strided_arg(g, a) && !view ? g->dstride : g->stride;
	for (int d = 0; d < arr->rank; d++) {
		const char *s = strides[a * IR_MAX_RANK + d];
		if (sub[d].n == 0 && sub[d].c == 0)
			continue;
		ct_buf t;
		ct_buf_init(&t);
		cg_put_aff(g, &t, sub[d]);
		const char *txt = t.s ? t.s : "0";
		if (strcmp(txt, "0") == 0) { /* fixed loop variables that sum to 0 */
			ct_buf_free(&t);
			continue;
		}
		if (any)
			ct_buf_puts(b, " + ");
		if (!s || strcmp(s, "1") == 0)
			ct_buf_puts(b, txt);
		else if (top_level_space(txt))
			ct_buf_printf(b, "(%s) * %s", txt, s);
		else
			ct_buf_printf(b, "%s * %s", txt, s);
		if (t.failed)
			g->failed = true;
		ct_buf_free(&t);
		any = true;
	}
	if (!any)
		ct_buf_putc(b, '0');
}

/* A new test site of checked code for storage a, in the statement (or the
 * cache copy) being emitted; its number, -1 when out of memory. */
static int new_site(cg *g, int a)
{
	if (!ct_vec_grow(g->k->ctx, (void **)&g->sites, &g->capsites, g->nsites + 1, sizeof *g->sites)) {
		g->failed = true;
		return -1;
	}
	const ir_node *s = g->cur_stmt && g->cur_stmt->stmt_id > 0 ? g->cur_stmt : NULL;
	g->sites[g->nsites] = (gen_site){a, s, s ? -1 : g->cur_region};
	return g->nsites++;
}

void cg_check_range(cg *g, ct_buf *b, int a, const aff *sub, const char *delta, int64_t lanes)
{
	if (!g->checked || a < 0 || a >= g->narrays || !sub)
		return;
	ct_buf_printf(b, "ct_inb(ct_ck, %d, ", new_site(g, a));
	if (delta)
		ct_buf_putc(b, '(');
	put_offset(g, b, a, sub, true);
	if (delta)
		ct_buf_printf(b, ") + %s", delta);
	ct_buf_printf(b, ", %lld, %s)", (long long)lanes, g->count[a] ? g->count[a] : "0");
}

void cg_pend_begin(cg *g, ct_buf *b)
{
	ct_buf_init(b);
	g->pend = g->checked ? b : NULL;
}

const char *cg_pend_end(cg *g, ct_buf *b)
{
	g->pend = NULL;
	if (b->failed)
		g->failed = true;
	return g->checked && b->s && b->s[0] ? b->s : NULL;
}

/* The element of array a at subscripts sub[] as C: A[linear offset]; in
 * checked mode (unless raw) the offset goes through the bounds test
 * (ct_ix: element 0 when it fails), or for a strided array the test of its
 * dense offset chooses between the offset and the view's base. */
void cg_access(cg *g, ct_buf *b, int a, const aff *sub)
{
	if (a < 0 || a >= g->narrays || !sub) {
		cg_bad(g, "storage", a);
		return;
	}
	if (g->shift && cg_shift_access(g, b, a, sub))
		return;
	if (g->hook_access && g->hook_access(g, b, a, sub))
		return;
	ct_buf_printf(b, "%s[", g->aname[a]);
	if (g->checked && !g->raw && g->pend) {
		if (g->pend->s && g->pend->s[0])
			ct_buf_puts(g->pend, " && ");
		cg_check_range(g, g->pend, a, sub, NULL, 1);
		put_offset(g, b, a, sub, false);
	} else if (!g->checked || g->raw) {
		put_offset(g, b, a, sub, false);
	} else if (cg_strided_arg(g, a)) {
		cg_check_range(g, b, a, sub, NULL, 1);
		ct_buf_puts(b, " ? ");
		put_offset(g, b, a, sub, false);
		ct_buf_printf(b, " : ct_vo%d", a);
	} else {
		ct_buf_printf(b, "ct_ix(ct_ck, %d, ", new_site(g, a));
		put_offset(g, b, a, sub, false);
		ct_buf_printf(b, ", %s)", g->count[a] ? g->count[a] : "0");
	}
	ct_buf_putc(b, ']');
}

/* ------------------------------------------------------------ operator spellings */

/* One table for every printer of arithmetic: the scalar one below (floats infix, integers
 * through the overflow-checked helpers of the preamble), index arithmetic (put_plain), the
 * statements (compound assignments), and the vector printers of rtile.c (GCC vector
 * extensions) and oclgen.c (OpenCL vectors), which take the same infix operators. */
static const cg_op_spell op_spell[] = {
	[EX_ADD] = {" + ", "ct_iadd", "+"},
	[EX_SUB] = {" - ", "ct_isub", "-"},
	[EX_MUL] = {" * ", "ct_imul", "*"},
	[EX_DIV] = {" / ", "ct_idiv", "/"},
};

const cg_op_spell *cg_op(ir_expr_kind k)
{
	static const cg_op_spell none = {" ? ", "ct_bad_op", "?"};
	if (k < EX_ADD || k > EX_DIV)
		return &none;
	return &op_spell[k];
}

const cg_op_spell *cg_assign_op(ir_assign op)
{
	switch (op) {
	case AS_ADD: return cg_op(EX_ADD);
	case AS_SUB: return cg_op(EX_SUB);
	case AS_MUL: return cg_op(EX_MUL);
	case AS_SET: break;
	}
	return cg_op(EX_NEG); /* no operation: `=` is written by the caller */
}

/* The C math functions of the calls, by base name: C adds the f of float
 * (fn_suffix); OpenCL C overloads them, vectors included. */
static const char *const math_fn[] = {[FN_MIN] = "fmin", [FN_MAX] = "fmax", [FN_ABS] = "fabs",
                                      [FN_SQRT] = "sqrt", [FN_EXP] = "exp", [FN_FMA] = "fma"};

const char *cg_math_fn(ir_fn fn)
{
	if (fn < 0 || fn >= (int)(sizeof math_fn / sizeof math_fn[0]) || !math_fn[fn])
		return "ct_bad_fn";
	return math_fn[fn];
}

/* ------------------------------------------------------------ expressions */



/* A literal in type t. */
static void put_num(ct_buf *b, const ir_expr *e, ct_dtype t)
{
	if (cg_is_int(t)) {
		long long v = e->is_float ? (long long)e->num : (long long)e->inum;
		ct_buf_printf(b, v < 0 ? "(%lld)" : "%lld", v);
		return;
	}
	double v = e->is_float ? e->num : (double)e->inum;
	char tmp[64];
	snprintf(tmp, sizeof tmp, "%.17g", v);
	if (!strpbrk(tmp, ".eEn"))
		strcat(tmp, ".0");
	ct_buf_printf(b, v < 0 ? "(%s%s)" : "%s%s", tmp, t == CT_F32 ? "f" : "");
}

static const char *fn_suffix(ct_dtype t) { return t == CT_F32 ? "f" : ""; }

/* A call in the type of e (integer sqrt and exp through double). */
static void put_call(cg *g, ct_buf *b, const ir_expr *e)
{
	ct_dtype t = e->type;
	const ir_expr *const *a = (const ir_expr *const *)e->args;
	switch (e->fn) {
	case FN_MIN:
	case FN_MAX:
		ct_buf_printf(b, "ct_%s_%s(", e->fn == FN_MIN ? "min" : "max", ir_dtype_c(t));
		cg_expr(g, b, a[0], t);
		ct_buf_puts(b, ", ");
		cg_expr(g, b, a[1], t);
		ct_buf_putc(b, ')');
		return;
	case FN_ABS:
		if (cg_is_int(t))
			ct_buf_puts(b, "ct_iabs(");
		else
			ct_buf_printf(b, "%s%s(", cg_math_fn(FN_ABS), fn_suffix(t));
		cg_expr(g, b, a[0], t);
		ct_buf_putc(b, ')');
		return;
	case FN_SQRT:
	case FN_EXP:
		/* integer sqrt/exp go through double, then truncate */
		if (cg_is_int(t)) {
			ct_buf_printf(b, "ct_itrunc(%s((double)", cg_math_fn(e->fn));
			cg_expr(g, b, a[0], t);
			ct_buf_puts(b, "))");
		} else {
			ct_buf_printf(b, "%s%s(", cg_math_fn(e->fn), fn_suffix(t));
			cg_expr(g, b, a[0], t);
			ct_buf_putc(b, ')');
		}
		return;
	case FN_FMA:
		if (cg_is_int(t)) {
			ct_buf_puts(b, "ct_iadd(ct_imul(");
			cg_expr(g, b, a[0], t);
			ct_buf_puts(b, ", ");
			cg_expr(g, b, a[1], t);
			ct_buf_puts(b, "), ");
			cg_expr(g, b, a[2], t);
			ct_buf_putc(b, ')');
		} else {
			ct_buf_printf(b, "%s%s(", cg_math_fn(FN_FMA), fn_suffix(t));
			for (int i = 0; i < 3; i++) {
				if (i)
					ct_buf_puts(b, ", ");
				cg_expr(g, b, a[i], t);
			}
			ct_buf_putc(b, ')');
		}
		return;
	case FN_SELECT:
		ct_buf_putc(b, '(');
		cg_expr(g, b, a[0], a[0]->type);
		ct_buf_puts(b, " ? ");
		cg_expr(g, b, a[1], t);
		ct_buf_puts(b, " : ");
		cg_expr(g, b, a[2], t);
		ct_buf_putc(b, ')');
		return;
	}
}

/* The operation of e in its own type (no conversion). */
static void put_op(cg *g, ct_buf *b, const ir_expr *e)
{
	ct_dtype t = e->type;
	const ir_expr *const *a = (const ir_expr *const *)e->args;
	switch (e->kind) {
	case EX_NUM: put_num(b, e, t); return;
	case EX_INDEX: put_orig_index(g, b, e->id, true); return;
	case EX_PARAM:
		if (g->k->params[e->id].runtime)
			ct_buf_puts(b, g->pname[e->id]);
		else
			ct_buf_printf(b, "%lld", (long long)g->pval[e->id]);
		return;
	case EX_LET: ct_buf_puts(b, g->lname[e->id] ? g->lname[e->id] : "ct_undefined_let"); return;
	case EX_ACCESS: cg_access(g, b, e->id, e->sub); return;
	case EX_NEG:
		if (cg_is_int(t)) {
			ct_buf_puts(b, "ct_ineg(");
			cg_expr(g, b, a[0], t);
			ct_buf_putc(b, ')');
		} else {
			ct_buf_puts(b, "(-");
			cg_expr(g, b, a[0], t);
			ct_buf_putc(b, ')');
		}
		return;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		if (cg_is_int(t)) {
			ct_buf_printf(b, "%s(", cg_op(e->kind)->int_fn);
			cg_expr(g, b, a[0], t);
			ct_buf_puts(b, ", ");
			cg_expr(g, b, a[1], t);
			ct_buf_putc(b, ')');
		} else {
			ct_buf_putc(b, '(');
			cg_expr(g, b, a[0], t);
			ct_buf_puts(b, cg_op(e->kind)->infix);
			cg_expr(g, b, a[1], t);
			ct_buf_putc(b, ')');
		}
		return;
	}
	case EX_CALL: put_call(g, b, e); return;
	case EX_CMP: {
		static const char *const ops[] = {[CMP_LT] = " < ", [CMP_LE] = " <= ", [CMP_GT] = " > ",
						  [CMP_GE] = " >= ", [CMP_EQ] = " == ", [CMP_NE] = " != "};
		/* compare in the wider operand type, as the interpreter does */
		ct_dtype ct = a[0]->type > a[1]->type ? a[0]->type : a[1]->type;
		if (a[0]->untyped && !a[1]->untyped)
			ct = a[1]->type;
		else if (a[1]->untyped && !a[0]->untyped)
			ct = a[0]->type;
		ct_buf_putc(b, '(');
		cg_expr(g, b, a[0], ct);
		ct_buf_puts(b, ops[e->cmp]);
		cg_expr(g, b, a[1], ct);
		ct_buf_putc(b, ')');
		return;
	}
	case EX_AND:
	case EX_OR:
		ct_buf_putc(b, '(');
		cg_expr(g, b, a[0], a[0]->type);
		ct_buf_puts(b, e->kind == EX_AND ? " && " : " || ");
		cg_expr(g, b, a[1], a[1]->type);
		ct_buf_putc(b, ')');
		return;
	case EX_NOT:
		ct_buf_puts(b, "(!");
		cg_expr(g, b, a[0], a[0]->type);
		ct_buf_putc(b, ')');
		return;
	}
}

/* An index expression (indices, params and literals only: affine and
 * bounded by the checked extents, so plain int64 arithmetic is safe). */
static void put_plain(cg *g, ct_buf *b, const ir_expr *e)
{
	const ir_expr *const *a = (const ir_expr *const *)e->args;
	switch (e->kind) {
	case EX_NUM:
		ct_buf_printf(b, e->inum < 0 ? "(%lld)" : "%lld", (long long)(e->is_float ? (int64_t)e->num : e->inum));
		return;
	case EX_NEG:
		ct_buf_puts(b, "(-");
		put_plain(g, b, a[0]);
		ct_buf_putc(b, ')');
		return;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL: {
		ct_buf_putc(b, '(');
		put_plain(g, b, a[0]);
		ct_buf_puts(b, cg_op(e->kind)->infix);
		put_plain(g, b, a[1]);
		ct_buf_putc(b, ')');
		return;
	}
	default: put_op(g, b, e); return;
	}
}

/* Expression e converted to type want (integers compute in int64). */
void cg_expr(cg *g, ct_buf *b, const ir_expr *e, ct_dtype want)
{
	ct_dtype have = e->type;
	/* index arithmetic in an integer context is plain int64; in a float
	 * context each index and param converts first and the operations are
	 * the float ones, as in the interpreter (`0.25 * i`, `i / 2`) */
	if (e->untyped && e->kind != EX_NUM && cg_is_int(want)) {
		put_plain(g, b, e);
		return;
	}
	bool same = have == want || (cg_is_int(have) && cg_is_int(want)) || e->kind == EX_NUM ||
		    e->kind == EX_CMP || e->kind == EX_AND || e->kind == EX_OR || e->kind == EX_NOT;
	if (e->kind == EX_NUM) {
		put_num(b, e, want);
		return;
	}
	if ((e->kind == EX_INDEX || e->kind == EX_PARAM) && !cg_is_int(want)) {
		ct_buf_printf(b, "(%s)", ir_dtype_c(want));
		put_op(g, b, e);
		return;
	}
	if (same) {
		put_op(g, b, e);
		return;
	}
	ct_buf_printf(b, "(%s)", cg_is_int(want) ? "int64_t" : ir_dtype_c(want));
	if (cg_is_int(want) && !cg_is_int(have)) {
		/* float -> int without UB on out-of-range values */
		ct_buf_puts(b, "ct_itrunc(");
		put_op(g, b, e);
		ct_buf_putc(b, ')');
		return;
	}
	put_op(g, b, e);
}
