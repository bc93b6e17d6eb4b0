/* lower.c: print a loop tree as Accera-style pseudo-code or as one JSON object (`cachet lower`). */
#include "core/json.h"
#include "ir/looptree.h"
#include "ir/targets.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pr {
	ct_buf *b;
	const ct_looptree *t;
	const ct_kernel *k;
	/* per loop-tree index: the innermost loop over it being printed (for
	 * AFF_TRIP terms); NULL when printing without that context */
	const lt_node **open;
} pr;

static const char *index_name(const pr *p, int id)
{
	if (p->t->indices && id >= 0 && id < p->t->nindices)
		return p->t->indices[id].name;
	if (id >= 0 && id < p->k->nindices)
		return p->k->indices[id].name;
	return "?";
}

/* Storage a of the tree: a kernel array or a cache buffer (NULL if none). */
static const ir_array *storage(const pr *p, int a)
{
	if (p->t->arrays && a >= 0 && a < p->t->narrays)
		return &p->t->arrays[a];
	if (a >= 0 && a < p->k->narrays)
		return &p->k->arrays[a];
	return NULL;
}

static const char *storage_name(const pr *p, int a)
{
	const ir_array *s = storage(p, a);
	return s && s->name ? s->name : "?";
}

/* Loop variables whose sum is index id: its chain when id is an original
 * index of a scheduled tree, else id itself. */
static const int *index_chain(const pr *p, int id, int *n)
{
	if (id >= 0 && id < p->k->nindices && p->t->chain && p->t->chain[id] &&
	    p->t->chain_len[id] > 0) {
		*n = p->t->chain_len[id];
		return p->t->chain[id];
	}
	*n = 1;
	return NULL;
}

/* One term coef*name of a sum; first says whether it opens the sum. */
static void put_term(ct_buf *b, int64_t coef, const char *name, bool first)
{
	uint64_t mag = coef < 0 ? (uint64_t)0 - (uint64_t)coef : (uint64_t)coef;
	if (coef < 0)
		ct_buf_putc(b, '-');
	else if (!first)
		ct_buf_putc(b, '+');
	if (mag != 1)
		ct_buf_printf(b, "%llu*", (unsigned long long)mag);
	ct_buf_puts(b, name);
}

/* Text of one non-index symbol of an affine expression into o: a param, a
 * derived value `(N / 4 * 4)`, a loop variable, or a trip count `i//4`
 * (floor division by the step of the innermost enclosing loop). */
static void sym_text(const pr *p, const aff_term *t, ct_buf *o)
{
	/* `2*(i//4)` and `-(i//4)`, but `i//4` alone */
	bool paren = t->coef != 1;
	switch (t->kind) {
	case AFF_PARAM:
		if (t->id >= 0 && t->id < p->k->nparams) {
			ct_buf_puts(o, p->k->params[t->id].name);
		} else if (t->id >= p->k->nparams && t->id - p->k->nparams < p->t->nderived &&
		           p->t->derived) {
			const bx *d = p->t->derived[t->id - p->k->nparams];
			int64_t v;
			bool atom = d && (d->kind == BX_PARAM || (bx_is_const(d, &v) && v >= 0) ||
			                  d->kind == BX_MIN || d->kind == BX_MAX);
			if (!atom)
				ct_buf_putc(o, '(');
			bx_print(o, p->k, d);
			if (!atom)
				ct_buf_putc(o, ')');
		} else {
			ct_buf_putc(o, '?');
		}
		break;
	case AFF_LOOP:
		ct_buf_puts(o, index_name(p, t->id));
		break;
	case AFF_TRIP: {
		const lt_node *x =
		    p->open && t->id >= 0 && t->id < p->t->nindices ? p->open[t->id] : NULL;
		if (x && x->step == 1)
			ct_buf_puts(o, index_name(p, t->id));
		else if (x)
			ct_buf_printf(o, paren ? "(%s//%lld)" : "%s//%lld", index_name(p, t->id),
			              (long long)x->step);
		else
			ct_buf_printf(o, "trip(%s)", index_name(p, t->id));
		break;
	}
	case AFF_TRI: /* v * (v + 1) / 2: a row start of a packed cache (plan_pack.c) */
		ct_buf_printf(o, "tri(%s)", index_name(p, t->id));
		break;
	default:
		ct_buf_putc(o, '?');
		break;
	}
}

/* Which pass of put_aff prints term t: 0 index terms, 1 params, loop
 * variables and trip counts, 2 derived values. */
static int term_pass(const pr *p, const aff_term *t)
{
	if (t->kind == AFF_INDEX)
		return 0;
	return t->kind == AFF_PARAM && t->id >= p->k->nparams ? 2 : 1;
}

/* An affine subscript, compactly: index terms (each as its chain), the
 * other symbols (params, loop variables, trip counts), derived values, then
 * the constant: `i+ii`, `x-1`, `2*i+2*ii+N-1`, `i//4`, `i+ii-(N / 4 * 4)`. */
static void put_aff(const pr *p, aff x)
{
	bool first = true;
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < x.n; i++) {
			const aff_term *t = &x.t[i];
			if (term_pass(p, t) != pass)
				continue;
			if (t->kind != AFF_INDEX) {
				ct_buf nm;
				ct_buf_init(&nm);
				sym_text(p, t, &nm);
				if (nm.failed)
					p->b->failed = true;
				put_term(p->b, t->coef, nm.s ? nm.s : "?", first);
				ct_buf_free(&nm);
				first = false;
				continue;
			}
			int n;
			const int *c = index_chain(p, t->id, &n);
			for (int j = 0; j < n; j++) {
				put_term(p->b, t->coef, index_name(p, c ? c[j] : t->id), first);
				first = false;
			}
		}
	}
	if (first)
		ct_buf_printf(p->b, "%lld", (long long)x.c);
	else if (x.c > 0)
		ct_buf_printf(p->b, "+%lld", (long long)x.c);
	else if (x.c < 0)
		ct_buf_printf(p->b, "-%llu", (unsigned long long)((uint64_t)0 - (uint64_t)x.c));
}

/* Shortest text that reads back as the same double, always with a '.' or
 * an exponent so that it looks like a float literal. */
static void put_double(ct_buf *b, double v)
{
	char s[64];
	if (isnan(v) || isinf(v)) {
		ct_buf_puts(b, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	ct_buf_puts(b, s);
	if (!strpbrk(s, ".eE"))
		ct_buf_puts(b, ".0");
}

/* Precedences: 1 ||, 2 &&, 3 comparisons, 4 + -, 5 * /, 6 unary, 7 atoms. */
static int expr_prec(const pr *p, const ir_expr *e)
{
	switch (e->kind) {
	case EX_OR:
		return 1;
	case EX_AND:
		return 2;
	case EX_CMP:
		return 3;
	case EX_ADD:
	case EX_SUB:
		return 4;
	case EX_MUL:
	case EX_DIV:
		return 5;
	case EX_NEG:
	case EX_NOT:
		return 6;
	case EX_NUM:
		return (e->is_float ? e->num < 0 : e->inum < 0) ? 6 : 7;
	case EX_INDEX: {
		int n;
		index_chain(p, e->id, &n);
		return n > 1 ? 4 : 7;
	}
	default:
		return 7;
	}
}

static void put_expr(const pr *p, const ir_expr *e, int need);

static void put_access(const pr *p, const ir_expr *e)
{
	const ir_array *a = storage(p, e->id);
	ct_buf_puts(p->b, a ? a->name : "?");
	ct_buf_putc(p->b, '[');
	for (int d = 0; a && d < a->rank; d++) {
		if (d)
			ct_buf_puts(p->b, ", ");
		if (e->sub)
			put_aff(p, e->sub[d]);
		else if (e->sub_expr)
			put_expr(p, e->sub_expr[d], 0);
	}
	ct_buf_putc(p->b, ']');
}

static void put_expr(const pr *p, const ir_expr *e, int need)
{
	static const char *const fns[] = {
	    [FN_MIN] = "min", [FN_MAX] = "max", [FN_ABS] = "abs",      [FN_SQRT] = "sqrt",
	    [FN_EXP] = "exp", [FN_FMA] = "fma", [FN_SELECT] = "select"};
	static const char *const cmps[] = {[CMP_LT] = " < ",  [CMP_LE] = " <= ", [CMP_GT] = " > ",
	                                   [CMP_GE] = " >= ", [CMP_EQ] = " == ", [CMP_NE] = " != "};
	ct_buf *b = p->b;
	if (!e) {
		ct_buf_puts(b, "?");
		return;
	}
	int prec = expr_prec(p, e);
	bool paren = prec < need;
	if (paren)
		ct_buf_putc(b, '(');
	switch (e->kind) {
	case EX_NUM:
		if (e->is_float)
			put_double(b, e->num);
		else
			ct_buf_printf(b, "%lld", (long long)e->inum);
		break;
	case EX_INDEX: {
		int n;
		const int *c = index_chain(p, e->id, &n);
		for (int j = 0; j < n; j++) {
			if (j)
				ct_buf_putc(b, '+');
			ct_buf_puts(b, index_name(p, c ? c[j] : e->id));
		}
		break;
	}
	case EX_PARAM:
		ct_buf_puts(b,
		            e->id >= 0 && e->id < p->k->nparams ? p->k->params[e->id].name : "?");
		break;
	case EX_LET:
		ct_buf_puts(b, e->id >= 0 && e->id < p->k->nlets ? p->k->lets[e->id].name : "?");
		break;
	case EX_ACCESS:
		put_access(p, e);
		break;
	case EX_NEG:
	case EX_NOT:
		ct_buf_putc(b, e->kind == EX_NEG ? '-' : '!');
		put_expr(p, e->nargs > 0 ? e->args[0] : NULL, 6);
		break;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV:
	case EX_AND:
	case EX_OR:
	case EX_CMP: {
		const char *op = e->kind == EX_ADD   ? " + "
		                 : e->kind == EX_SUB ? " - "
		                 : e->kind == EX_MUL ? " * "
		                 : e->kind == EX_DIV ? " / "
		                 : e->kind == EX_AND ? " && "
		                 : e->kind == EX_OR  ? " || "
		                                     : cmps[e->cmp];
		/* comparisons do not chain: both sides bind tighter */
		put_expr(p, e->nargs > 0 ? e->args[0] : NULL, e->kind == EX_CMP ? prec + 1 : prec);
		ct_buf_puts(b, op);
		put_expr(p, e->nargs > 1 ? e->args[1] : NULL, prec + 1);
		break;
	}
	case EX_CALL:
		ct_buf_puts(b, fns[e->fn]);
		ct_buf_putc(b, '(');
		for (int i = 0; i < e->nargs; i++) {
			if (i)
				ct_buf_puts(b, ", ");
			put_expr(p, e->args[i], 0);
		}
		ct_buf_putc(b, ')');
		break;
	}
	if (paren)
		ct_buf_putc(b, ')');
}

/* The text of a statement or let: `C[i+ii, j] += A[i+ii, k] * B[k, j]`. */
static void put_stmt(const pr *p, const ir_node *s)
{
	static const char *const ops[] = {
	    [AS_SET] = " = ", [AS_ADD] = " += ", [AS_SUB] = " -= ", [AS_MUL] = " *= "};
	if (s->kind == ND_LET) {
		ct_buf_puts(p->b, "let ");
		ct_buf_puts(p->b, s->let_id >= 0 && s->let_id < p->k->nlets
		                      ? p->k->lets[s->let_id].name
		                      : "?");
		ct_buf_puts(p->b, " = ");
	} else {
		put_expr(p, s->lhs, 0);
		ct_buf_puts(p->b, ops[s->op]);
	}
	put_expr(p, s->rhs, 0);
}

/* ------------------------------------------------------------ pseudo-code */

static void indent(ct_buf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		ct_buf_puts(b, "    ");
}

/* Enter / leave loop x: the innermost loop over its index while its kids print. */
static const lt_node *open_loop(const pr *p, const lt_node *x)
{
	if (!p->open || x->index < 0 || x->index >= p->t->nindices)
		return NULL;
	const lt_node *outer = p->open[x->index];
	p->open[x->index] = x;
	return outer;
}

static void close_loop(const pr *p, const lt_node *x, const lt_node *outer)
{
	if (p->open && x->index >= 0 && x->index < p->t->nindices)
		p->open[x->index] = outer;
}

/* The condition of an if: its expression, or its guards `g >= 0 && ...`. */
static void put_cond(const pr *p, const lt_node *x)
{
	if (x->stmt) {
		put_expr(p, x->stmt->cond, 0);
		return;
	}
	for (int i = 0; i < x->nguard && x->guard; i++) {
		if (i)
			ct_buf_puts(p->b, " && ");
		put_aff(p, x->guard[i]);
		ct_buf_puts(p->b, " >= 0");
	}
	if (x->nguard <= 0 || !x->guard)
		ct_buf_puts(p->b, "true");
}

const char *lt_prologue_name(lt_prologue x)
{
	switch (x) {
	case LT_PRO_NONE:
		return "none";
	case LT_PRO_COPY_IN:
		return "copy_in";
	case LT_PRO_ZERO_FILL:
		return "zero_fill";
	}
	return "?";
}

const char *lt_epilogue_name(lt_epilogue x)
{
	switch (x) {
	case LT_EPI_NONE:
		return "none";
	case LT_EPI_COPY_OUT:
		return "copy_out";
	case LT_EPI_REDUCE:
		return "reduce";
	}
	return "?";
}

static const lt_region *region_of(const pr *p, const lt_node *x)
{
	return x->cache >= 0 && x->cache < p->t->nregions && p->t->regions
	           ? &p->t->regions[x->cache]
	           : NULL;
}

/* The plan's name of region r's cache (`AA` of `AA = cache(A, ...)`). */
static const char *cache_name(const pr *p, const lt_region *r)
{
	if (r->item >= 0 && r->item < p->k->nplan && p->k->plan[r->item].name)
		return p->k->plan[r->item].name;
	return storage_name(p, r->buffer);
}

/* What the plan caches in region r: an array, or the parent cache (by its
 * name, also when that one is elided). */
static const char *cache_source(const pr *p, const lt_region *r)
{
	const ct_kernel *k = p->k;
	const ir_plan_item *it = r->item >= 0 && r->item < k->nplan ? &k->plan[r->item] : NULL;
	if (it && it->src_cache >= 0 && it->src_cache < k->nplan && k->plan[it->src_cache].name)
		return k->plan[it->src_cache].name;
	if (it && it->src_array >= 0 && it->src_array < k->narrays)
		return k->arrays[it->src_array].name;
	return storage_name(p, r->source);
}

/* Whether subtree x only copies (statements with stmt_id 0: the prologue
 * and epilogue copies of a cache region). */
static bool copy_only(const lt_node *x)
{
	switch (x->kind) {
	case LT_STMT:
		return x->stmt && x->stmt->stmt_id == 0;
	case LT_LET:
	case LT_CACHE:
		return false;
	case LT_LOOP:
	case LT_IF:
		for (int i = 0; i < x->nkids; i++)
			if (!copy_only(x->kids[i]))
				return false;
		for (int i = 0; i < x->nels; i++)
			if (!copy_only(x->els[i]))
				return false;
		return true;
	}
	return false;
}

/* "lower" or "upper" for a packed cache's region (its buffer the triangle alone, plan_pack.c),
 * NULL otherwise. */
static const char *region_packed(const pr *p, const lt_region *r)
{
	const ir_plan_item *it = r->item >= 0 && r->item < p->k->nplan ? &p->k->plan[r->item] : NULL;
	if (!it || it->packed == PACK_NONE || r->elided || r->rank != 1)
		return NULL;
	return it->packed == PACK_UPPER ? "upper" : "lower";
}

/* Where the buffer of region r lives on a GPU target, in the target's own
 * word (its row's location= spelling: "shared" or "local", "private");
 * NULL on the host, whose caches are ordinary memory. */
static const char *gpu_space(const pr *p, const lt_region *r)
{
	const ct_kernel *k = p->k;
	const ir_target_info *row = ir_kernel_target(k);
	if (!row->gpu || r->item < 0 || r->item >= k->nplan)
		return NULL;
	return ir_target_space_word(row, k->plan[r->item].location == LOC_LOCAL ? LOC_LOCAL : LOC_PRIVATE);
}

/* `cache AA of A (index ii, level 1; trigger i, level 2): buffer AA[4, 32]
 * first_major; copy_in / none` */
static void put_cache_header(const pr *p, const lt_region *r)
{
	ct_buf *b = p->b;
	ct_buf_printf(b, "cache %s of %s (", cache_name(p, r), cache_source(p, r));
	if (r->index < 0)
		ct_buf_puts(b, "element level");
	else
		ct_buf_printf(b, "index %s, level %d", index_name(p, r->index), r->level);
	if (r->trigger_index != r->index || r->trigger_level != r->level) {
		if (r->trigger_index < 0)
			ct_buf_printf(b, "; trigger level %d", r->trigger_level);
		else
			ct_buf_printf(b, "; trigger %s, level %d", index_name(p, r->trigger_index),
			              r->trigger_level);
	}
	ct_buf_puts(b, "): ");
	if (r->elided) {
		ct_buf_printf(b, "elided, %s used in place", storage_name(p, r->source));
	} else {
		ct_buf_printf(b, "buffer %s[", storage_name(p, r->buffer));
		for (int d = 0; d < r->rank && d < IR_MAX_RANK; d++) {
			if (d)
				ct_buf_puts(b, ", ");
			bx_print(b, p->k, r->shape[d]);
		}
		ct_buf_putc(b, ']');
		if (region_packed(p, r)) {
			ct_buf_printf(b, " packed=%s", region_packed(p, r));
		} else if (r->first_major) {
			ct_buf_puts(b, " first_major");
		} else if (r->last_major) {
			ct_buf_puts(b, " last_major");
		} else {
			ct_buf_puts(b, " layout=(");
			for (int d = 0; d < r->rank && d < IR_MAX_RANK; d++)
				ct_buf_printf(b, "%s%d", d ? ", " : "", r->order[d]);
			ct_buf_putc(b, ')');
		}
		if (r->nmulti > 0)
			ct_buf_printf(b, ", %d multicache dim%s", r->nmulti,
			              r->nmulti == 1 ? "" : "s");
	}
	ct_buf_printf(b, "; %s / %s", lt_prologue_name(r->prologue), lt_epilogue_name(r->epilogue));
	if (r->double_buffer)
		ct_buf_puts(b, "; double-buffered");
	if (gpu_space(p, r))
		ct_buf_printf(b, "; %s", gpu_space(p, r));
	ct_buf_puts(b, ":\n");
}

/* The first copy statement in subtree x, or NULL. */
static const ir_node *first_copy(const lt_node *x)
{
	if (x->kind == LT_STMT)
		return x->stmt && x->stmt->stmt_id == 0 ? x->stmt : NULL;
	for (int i = 0; i < x->nkids; i++) {
		const ir_node *s = first_copy(x->kids[i]);
		if (s)
			return s;
	}
	for (int i = 0; i < x->nels; i++) {
		const ir_node *s = first_copy(x->els[i]);
		if (s)
			return s;
	}
	return NULL;
}

/* The label of a part of cache region r: `# body`, or what the copies of
 * kid x do, from its first copy statement: `# prologue: copy_in A -> AA`,
 * `# prologue: zero_fill CC`, `# prologue: prefetch A -> AA_next`,
 * `# epilogue: copy_out CC -> C`, `# epilogue: reduce CC into C`. */
static void put_part_label(const pr *p, const lt_region *r, const lt_node *x, int part, int depth)
{
	ct_buf *b = p->b;
	indent(b, depth);
	if (part == 1) {
		ct_buf_puts(b, "# body\n");
		return;
	}
	ct_buf_puts(b, part == 0 ? "# prologue: " : "# epilogue: ");
	const ir_node *s = first_copy(x);
	const ir_expr *rhs = s ? s->rhs : NULL;
	int to = s && s->lhs ? s->lhs->id : -1;
	int from = rhs && rhs->kind == EX_ACCESS ? rhs->id : -1;
	const char *tn = storage_name(p, to), *fn = storage_name(p, from);
	if (!s)
		ct_buf_puts(b, "copies");
	else if (from < 0)
		ct_buf_printf(b, "zero_fill %s", tn);
	else if (s->op != AS_SET)
		ct_buf_printf(b, "reduce %s into %s", fn, tn);
	else if (r->double_buffer && to == r->temp)
		ct_buf_printf(b, "prefetch %s -> %s", fn, tn);
	else if (to == r->buffer && from == r->source)
		ct_buf_printf(b, "copy_in %s -> %s", fn, tn);
	else if (to == r->source && from == r->buffer)
		ct_buf_printf(b, "copy_out %s -> %s", fn, tn);
	else
		ct_buf_printf(b, "copy %s -> %s", fn, tn);
	ct_buf_putc(b, '\n');
}

static void put_text_nodes(const pr *p, lt_node *const *v, int n, int depth);

/* A cache region: its header, then its kids one level deeper, each run of
 * copies (kids that only copy) labelled as prologue or epilogue. */
static void put_text_cache(const pr *p, const lt_node *x, int depth)
{
	const lt_region *r = region_of(p, x);
	if (!r) {
		ct_buf_puts(p->b, "cache ?:\n");
		put_text_nodes(p, x->kids, x->nkids, depth + 1);
		return;
	}
	put_cache_header(p, r);
	if (x->nkids == 0)
		put_text_nodes(p, x->kids, 0, depth + 1);
	int last = -1;
	bool body_seen = false;
	for (int i = 0; i < x->nkids; i++) {
		int part = !copy_only(x->kids[i]) ? 1 : body_seen ? 2 : 0;
		if (part == 1)
			body_seen = true;
		if (part != last)
			put_part_label(p, r, x->kids[i], part, depth + 1);
		last = part;
		put_text_nodes(p, x->kids + i, 1, depth + 1);
	}
}

/* `  # tail, unroll` after a loop header's colon: its version and the plan's loop
 * verbs on it. */
static void put_loop_notes(const pr *p, const lt_node *x)
{
	ct_buf *b = p->b;
	const char *sep = "  # ";
	if (x->tail) {
		ct_buf_printf(b, "%stail", sep);
		sep = ", ";
	}
	if (x->unroll) {
		ct_buf_printf(b, "%sunroll", sep);
		sep = ", ";
	}
	if (x->unroll_by > 0) {
		ct_buf_printf(b, "%sunroll by %d", sep, x->unroll_by);
		sep = ", ";
	}
	if (x->vector) {
		ct_buf_printf(b, "%svectorize", sep);
		sep = ", ";
	}
	if (x->parallel) {
		const ir_plan_item *it = x->par_item >= 0 && x->par_item < p->k->nplan ? &p->k->plan[x->par_item] : NULL;
		ct_buf_printf(b, "%sparallel", sep);
		if (x->collapse > 1)
			ct_buf_printf(b, " collapse(%d)", x->collapse);
		if (it && it->policy == POLICY_DYNAMIC)
			ct_buf_puts(b, " dynamic");
		if (it && it->max_threads > 0)
			ct_buf_printf(b, " max_threads=%lld", (long long)it->max_threads);
		/* a parallel reduction: the arrays each thread sums into its own copy of */
		const char *open = " reduce(";
		for (int a = 0; x->preduce && a < p->k->narrays; a++)
			if (x->preduce[a]) {
				ct_buf_printf(b, "%s%s", open, p->k->arrays[a].name);
				open = ", ";
			}
		if (open[0] == ',')
			ct_buf_putc(b, ')');
	}
}

/* One bound of loop x: its bound over params, or for an affine loop the
 * max (lower) or min (upper) of that and its affine terms. */
static void put_bound(const pr *p, const lt_node *x, bool upper)
{
	const bx *base = upper ? x->hi : x->lo;
	int n = upper ? x->ndhi : x->ndlo;
	const aff *v = upper ? x->dhi : x->dlo;
	int64_t c;
	bool none = bx_is_const(base, &c) && c == (upper ? LT_NO_HI : LT_NO_LO);
	if (n == 0) {
		bx_print(p->b, p->k, base);
		return;
	}
	if (n + !none > 1)
		ct_buf_puts(p->b, upper ? "min(" : "max(");
	if (!none)
		bx_print(p->b, p->k, base);
	for (int j = 0; j < n; j++) {
		if (j > 0 || !none)
			ct_buf_puts(p->b, ", ");
		put_aff(p, v[j]);
	}
	if (n + !none > 1)
		ct_buf_putc(p->b, ')');
}

static void text_lo(const pr *p, const void *x)
{
	put_bound(p, x, false);
}
static void text_hi(const pr *p, const void *x)
{
	put_bound(p, x, true);
}

static void put_text_node(const pr *p, const lt_node *x, int depth)
{
	ct_buf *b = p->b;
	indent(b, depth);
	switch (x->kind) {
	case LT_LOOP: {
		ct_buf_printf(b, "for %s in range(", index_name(p, x->index));
		put_bound(p, x, false);
		ct_buf_puts(b, ", ");
		put_bound(p, x, true);
		if (x->step != 1)
			ct_buf_printf(b, ", step=%lld", (long long)x->step);
		ct_buf_puts(b, "):");
		put_loop_notes(p, x);
		ct_buf_putc(b, '\n');
		const lt_node *outer = open_loop(p, x);
		put_text_nodes(p, x->kids, x->nkids, depth + 1);
		close_loop(p, x, outer);
		break;
	}
	case LT_STMT:
	case LT_LET:
		put_stmt(p, x->stmt);
		ct_buf_putc(b, '\n');
		break;
	case LT_IF:
		ct_buf_puts(b, "if ");
		put_cond(p, x);
		ct_buf_puts(b, ":\n");
		put_text_nodes(p, x->kids, x->nkids, depth + 1);
		if (x->nels > 0) {
			indent(b, depth);
			ct_buf_puts(b, "else:\n");
			put_text_nodes(p, x->els, x->nels, depth + 1);
		}
		break;
	case LT_CACHE:
		put_text_cache(p, x, depth);
		break;
	}
}

static void put_text_nodes(const pr *p, lt_node *const *v, int n, int depth)
{
	if (n == 0) {
		indent(p->b, depth);
		ct_buf_puts(p->b, "pass\n");
	}
	for (int i = 0; i < n; i++)
		put_text_node(p, v[i], depth);
}

static void put_text(const pr *p)
{
	const ct_kernel *k = p->k;
	ct_buf_printf(p->b, "# kernel %s", k->name ? k->name : "?");
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *pa = &k->params[i];
		ct_buf_puts(p->b, i ? ", " : ": ");
		if (pa->runtime)
			ct_buf_printf(p->b, "%s (runtime)", pa->name);
		else
			ct_buf_printf(p->b, "%s=%lld", pa->name, (long long)pa->value);
	}
	ct_buf_putc(p->b, '\n');
	for (int i = 0; i < p->t->nroots; i++)
		put_text_node(p, p->t->roots[i], 0);
}

/* ------------------------------------------------------------ JSON */

/* The text that fn(p, arg) prints, as a JSON string. */
static json_t *json_text(const pr *p, void (*fn)(const pr *, const void *), const void *arg)
{
	ct_buf tmp;
	ct_buf_init(&tmp);
	pr q = {&tmp, p->t, p->k, p->open};
	fn(&q, arg);
	json_t *v = tmp.failed ? NULL : json_string(tmp.s ? tmp.s : "");
	ct_buf_free(&tmp);
	return v;
}

static void text_bx(const pr *p, const void *x)
{
	bx_print(p->b, p->k, x);
}
static void text_stmt(const pr *p, const void *s)
{
	put_stmt(p, s);
}
static void text_cond(const pr *p, const void *x)
{
	put_cond(p, x);
}

static json_t *json_nodes(const pr *p, lt_node *const *v, int n, bool *ok);

/* A loop's "parallel" member: collapse, policy and thread cap. */
static json_t *json_parallel(const pr *p, const lt_node *x, bool *ok)
{
	const ir_plan_item *it = x->par_item >= 0 && x->par_item < p->k->nplan ? &p->k->plan[x->par_item] : NULL;
	json_t *o = json_object();
	ct_json_set(o, "collapse", json_integer(x->collapse), ok);
	ct_json_set(o, "policy", json_string(it && it->policy == POLICY_DYNAMIC ? "dynamic" : "static"), ok);
	ct_json_set(o, "max_threads", json_integer(it ? (json_int_t)it->max_threads : 0), ok);
	if (x->preduce) { /* a parallel reduction: the arrays summed in per-thread copies */
		json_t *r = json_array();
		for (int a = 0; a < p->k->narrays; a++)
			if (x->preduce[a] && json_array_append_new(r, json_string(p->k->arrays[a].name)) != 0)
				*ok = false;
		ct_json_set(o, "reduce", r, ok);
	}
	return o;
}

static json_t *json_loop(const pr *p, const lt_node *x, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "loop", json_string(index_name(p, x->index)), ok);
	ct_json_set(o, "lo", json_text(p, text_lo, x), ok);
	ct_json_set(o, "hi", json_text(p, text_hi, x), ok);
	ct_json_set(o, "step", json_integer((json_int_t)x->step), ok);
	ct_json_set(o, "tail", json_boolean(x->tail), ok);
	if (x->unroll)
		ct_json_set(o, "unroll", json_true(), ok);
	if (x->unroll_by > 0)
		ct_json_set(o, "unroll_by", json_integer(x->unroll_by), ok);
	if (x->vector)
		ct_json_set(o, "vectorize", json_true(), ok);
	if (x->parallel)
		ct_json_set(o, "parallel", json_parallel(p, x, ok), ok);
	const lt_node *outer = open_loop(p, x);
	ct_json_set(o, "body", json_nodes(p, x->kids, x->nkids, ok), ok);
	close_loop(p, x, outer);
	return o;
}

static json_t *json_node(const pr *p, const lt_node *x, bool *ok)
{
	json_t *o = NULL;
	switch (x->kind) {
	case LT_LOOP:
		return json_loop(p, x, ok);
	case LT_STMT:
		o = json_object();
		ct_json_set(o, "stmt", json_integer(x->stmt->stmt_id), ok);
		ct_json_set(o, "text", json_text(p, text_stmt, x->stmt), ok);
		break;
	case LT_LET:
		o = json_object();
		ct_json_set(o, "let",
		            json_string(x->stmt->let_id >= 0 && x->stmt->let_id < p->k->nlets
		                            ? p->k->lets[x->stmt->let_id].name
		                            : "?"),
		            ok);
		ct_json_set(o, "text", json_text(p, text_stmt, x->stmt), ok);
		break;
	case LT_IF:
		o = json_object();
		ct_json_set(o, "if", json_text(p, text_cond, x), ok);
		ct_json_set(o, "then", json_nodes(p, x->kids, x->nkids, ok), ok);
		ct_json_set(o, "else", json_nodes(p, x->els, x->nels, ok), ok);
		break;
	case LT_CACHE:
		o = json_object();
		ct_json_set(o, "cache", json_integer(x->cache), ok);
		ct_json_set(o, "body", json_nodes(p, x->kids, x->nkids, ok), ok);
		break;
	}
	return o;
}

static json_t *json_nodes(const pr *p, lt_node *const *v, int n, bool *ok)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		ct_json_push(a, json_node(p, v[i], ok), ok);
	return a;
}

/* A region's "shape": constants as numbers, runtime sizes as C text. */
static json_t *json_shape(const pr *p, const lt_region *r, bool *ok)
{
	json_t *a = json_array();
	for (int d = 0; d < r->rank && d < IR_MAX_RANK; d++) {
		int64_t v;
		ct_json_push(a, bx_is_const(r->shape[d], &v) ? json_integer((json_int_t)v)
		                                             : json_text(p, text_bx, r->shape[d]),
		             ok);
	}
	return a;
}

/* A region's "layout": "first_major", "last_major" or the dimension order. */
static json_t *json_layout(const lt_region *r, bool *ok)
{
	if (r->first_major)
		return json_string("first_major");
	if (r->last_major)
		return json_string("last_major");
	json_t *a = json_array();
	for (int d = 0; d < r->rank && d < IR_MAX_RANK; d++)
		ct_json_push(a, json_integer(r->order[d]), ok);
	return a;
}

/* One entry of "caches" (CLI.md), plus name, source_storage, buffer and
 * multicache_dims. */
static json_t *json_region(const pr *p, const lt_region *r, bool *ok)
{
	const ct_kernel *k = p->k;
	const ir_plan_item *it = r->item >= 0 && r->item < k->nplan ? &k->plan[r->item] : NULL;
	json_t *o = json_object();
	ct_json_set(o, "name", ct_json_str_or_null(it ? it->name : NULL), ok);
	ct_json_set(o, "array",
	            ct_json_str_or_null(it && it->root_array >= 0 && it->root_array < k->narrays
	                                    ? k->arrays[it->root_array].name
	                                    : NULL),
	            ok);
	/* source: what the plan names (an array, or the parent cache even when
	 * that one is elided); source_storage: the storage the copies read */
	const char *src_storage = storage(p, r->source) ? storage_name(p, r->source) : NULL;
	ct_json_set(o, "source", ct_json_str_or_null(src_storage || it ? cache_source(p, r) : NULL), ok);
	ct_json_set(o, "source_storage", ct_json_str_or_null(src_storage), ok);
	ct_json_set(o, "buffer",
	            ct_json_str_or_null(!r->elided && storage(p, r->buffer) ? storage_name(p, r->buffer) : NULL),
	            ok);
	ct_json_set(o, "index", ct_json_str_or_null(r->index >= 0 ? index_name(p, r->index) : NULL), ok);
	ct_json_set(o, "level", json_integer(r->level), ok);
	ct_json_set(o, "trigger_index",
	            ct_json_str_or_null(r->trigger_index >= 0 ? index_name(p, r->trigger_index) : NULL), ok);
	ct_json_set(o, "trigger_level", json_integer(r->trigger_level), ok);
	ct_json_set(o, "shape", json_shape(p, r, ok), ok);
	ct_json_set(o, "multicache_dims", json_integer(r->nmulti), ok);
	ct_json_set(o, "layout", json_layout(r, ok), ok);
	ct_json_set(o, "elided", json_boolean(r->elided), ok);
	ct_json_set(o, "prologue", json_string(lt_prologue_name(r->prologue)), ok);
	ct_json_set(o, "epilogue", json_string(lt_epilogue_name(r->epilogue)), ok);
	ct_json_set(o, "double_buffer", json_boolean(r->double_buffer), ok);
	if (region_packed(p, r))
		ct_json_set(o, "packed", json_string(region_packed(p, r)), ok);
	if (gpu_space(p, r))
		ct_json_set(o, "location", json_string(gpu_space(p, r)), ok);
	return o;
}

/* The whole tree as one JSON object (CLI.md, `cachet lower --json`). */
static json_t *json_tree(const pr *p, bool *ok)
{
	const ct_kernel *k = p->k;
	json_t *o = json_object();
	ct_json_set(o, "kernel", json_string(k->name ? k->name : ""), ok);
	ct_json_set(o, "target", json_string(ir_kernel_target(k)->name), ok);
	ct_json_set(o, "scheduled", json_boolean(p->t->scheduled), ok);
	json_t *params = json_object();
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *pa = &k->params[i];
		ct_json_set(params, pa->name, pa->has_value ? json_integer((json_int_t)pa->value) : json_null(), ok);
	}
	ct_json_set(o, "params", params, ok);
	ct_json_set(o, "loops", json_nodes(p, p->t->roots, p->t->nroots, ok), ok);
	json_t *caches = json_array();
	for (int i = 0; i < p->t->nregions && p->t->regions; i++)
		ct_json_push(caches, json_region(p, &p->t->regions[i], ok), ok);
	ct_json_set(o, "caches", caches, ok);
	return o;
}

char *ct_looptree_to_string(ct_looptree *t, ct_format format)
{
	if (!t)
		return NULL;
	bool json = format == CT_FORMAT_JSON;
	ct_buf b;
	ct_buf_init(&b);
	const lt_node **open = ct_alloc(t->k->ctx, sizeof *open * ((size_t)t->nindices + 1));
	if (open)
		memset(open, 0, sizeof *open * ((size_t)t->nindices + 1));
	else
		b.failed = true;
	pr p = {&b, t, t->k, open};
	char *s = NULL;
	if (json) {
		bool ok = open != NULL;
		json_t *v = ok ? json_tree(&p, &ok) : NULL;
		if (ok)
			s = ct_json_line(v);
		else
			json_decref(v);
		ct_buf_free(&b);
	} else {
		put_text(&p);
		s = ct_buf_take(&b);
	}
	ct_free(t->k->ctx, open);
	if (!s)
		ct_error(t->k->ctx, CT_ERR_NOMEM, "out of memory printing the loop tree");
	return s;
}

ct_status ct_looptree_print(ct_looptree *t, ct_format format, FILE *out)
{
	if (!t || !out)
		return t ? ct_error(t->k->ctx, CT_ERR_USAGE, "ct_looptree_print: no output stream") : CT_ERR_USAGE;
	char *s = ct_looptree_to_string(t, format);
	if (!s)
		return ct_ctx_last_status(t->k->ctx);
	/* every printer ends its output with a newline */
	size_t n = strlen(s);
	bool ok = fputs(s, out) >= 0 && (n == 0 || s[n - 1] == '\n' || fputc('\n', out) != EOF) && fflush(out) == 0;
	free(s);
	return ok ? CT_OK : ct_error(t->k->ctx, CT_ERR_IO, "cannot print the loop tree: %s", strerror(errno));
}
