/* wave.c: auto's wavefront of rows for an in-place sweep whose every loop carries (Gauss-Seidel). */
#include "tune/wave.h"

#include "lang/lang.h"

#include <stdio.h>
#include <string.h>

/*
 * An in-place sweep `for (t, i, j) X[i, j] = f(X[i-1, j-1], .., X[i, j-1], ..)`
 * runs at the latency of one chain: each point's value enters the next
 * point's expression along j, so a point waits for the whole expression of
 * the one before it (seidel-2d: 6 additions and a division, ~30 cycles,
 * while the core could issue its 9 operations in 4 or 5). Nothing of the
 * nest is parallel, and every reorder the schedule can say breaks a
 * dependence. But the points of different rows are independent when they
 * are far enough apart: rows ib .. ib+U-1 of one sweep run together, row
 * ib+u `lag * u` columns behind row ib, so that U chains are in flight:
 *
 *   for (outer..) { for (ib: rows step U) { for (w: jlo .. jhi + lag*(U-1)) {
 *     for (u: U) { if (ib+u < ihi && jlo <= w - lag*u < jhi) { S(i = ib+u, j = w - lag*u) } } } } }
 *
 * with the loop over u unrolled. Each point's own expression is unchanged
 * (only independent points change order), so the result is bit-identical.
 *
 * Legality (a sufficient test, proved here). Every access of X moves as
 * the statement's own element does: X[.., i + a, .., j + b, ..] with the
 * other subscripts those of the left-hand side. So two instances with the
 * same outer indices meet only at a constant distance (di, dj) (the
 * left-hand side's offsets minus a read's), and the dependence runs from
 * the earlier to the later in the written order: (di, dj)
 * lexicographically positive. Instances with different outer indices keep
 * their order (the outer loops are kept around everything). In the new
 * order an instance (i, j) has the position (b, w, u): b = (i - ilo) / U,
 * u = (i - ilo) % U, w = j + lag * u, compared lexicographically. For a
 * dependence from (i, j) to (i + di, j + dj):
 *   di = 0: same b and u, w grows by dj >= 1;
 *   di >= 1 in a later block: b grows;
 *   di >= 1 in the same block: u grows by di, w by dj + lag * di.
 * So it keeps its order when dj + lag * di >= 0 for every dependence with
 * di >= 1 (the least such lag is lag_min), and it ends in a later step w
 * when dj + lag * di >= 1. The rewrite writes the least lag with the
 * latter: with lag_min where some dependence has dj + lag * di = 0
 * (seidel-2d's (1, -1) at lag 1), row ib+u+1 reads within one step the
 * value row ib+u has just written, and the unrolled rows of a step form one
 * chain again (measured, seidel-2d at N = 2000, 20 sweeps, 8 rows, on the
 * Zen 4 VM: lag 1 0.43 s, lag 2 0.13-0.14 s, lag 3 as lag 2; the nest as
 * written 0.69 s). With every
 * dependence ending in a later step, the U points of one step are
 * independent and issue together. Each (i, j) of the range is run exactly
 * once: b and u follow from i, w from j, w lies in jlo .. jhi - 1 + lag *
 * (U - 1), and the guard keeps the rows and columns of the range.
 * tests/unit/test_auto.c compares the rewrite with the written kernel bit
 * for bit, and a lag one below lag_min breaks it.
 */

/* The rows of a wavefront unrolled: the language's unroll limit. */
#define WAVE_MAX_ROWS 64

/* -1 when s is not `x + c` for index x (coefficient 1) nor free of both
 * row and col; 1: row + c, 2: col + c, 0: neither. */
static int sub_shape(aff s, int row, int col)
{
	bool r = aff_coef(s, AFF_INDEX, row) != 0, c = aff_coef(s, AFF_INDEX, col) != 0;
	if (!r && !c)
		return 0;
	if (s.n != 1 || s.t[0].kind != AFF_INDEX || s.t[0].coef != 1)
		return -1;
	return s.t[0].id == row ? 1 : 2;
}

/* What the walk of the statement found about array x's accesses. */
typedef struct wave_walk {
	const ir_expr *lhs;
	int x, rank, drow, dcol, row, col;
	bool ok;
	int nread;
	int64_t di[64], dj[64];       /* each read's distance from the left-hand side */
	int chain;                    /* the longest chain from a read along j (ops, per column) */
	int64_t chain_dj;
	int ops;                      /* operations of the expression */
} wave_walk;

static void walk(wave_walk *W, const ir_expr *e, int depth)
{
	if (!e || !W->ok)
		return;
	switch (e->kind) {
	case EX_NEG:
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV:
	case EX_CALL:
		W->ops++;
		for (int i = 0; i < e->nargs; i++)
			walk(W, e->args[i], depth + 1);
		return;
	case EX_ACCESS:
		break;
	default:
		for (int i = 0; i < e->nargs; i++)
			walk(W, e->args[i], depth);
		return;
	}
	if (e->id != W->x)
		return;
	for (int d = 0; d < W->rank && W->ok; d++) {
		int sh = sub_shape(e->sub[d], W->row, W->col);
		W->ok = d == W->drow ? sh == 1 : d == W->dcol ? sh == 2 : sh == 0 && aff_equal(e->sub[d], W->lhs->sub[d]);
	}
	if (!W->ok || W->nread >= 64) {
		W->ok = false;
		return;
	}
	int64_t di = W->lhs->sub[W->drow].c - e->sub[W->drow].c, dj = W->lhs->sub[W->dcol].c - e->sub[W->dcol].c;
	W->di[W->nread] = di;
	W->dj[W->nread] = dj;
	W->nread++;
	/* a value this row wrote dj columns before: a chain of depth operations per dj columns */
	if (di == 0 && dj >= 1 && (W->chain_dj == 0 || (int64_t)depth * W->chain_dj > (int64_t)W->chain * dj)) {
		W->chain = depth;
		W->chain_dj = dj;
	}
}

/* ceil(a / b), b > 0. */
static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

bool wave_find(const ct_kernel *k, const int64_t *pv, const wave_machine *m, const ir_node *top, wave_plan *w)
{
	memset(w, 0, sizeof *w);
	w->top = top;
	int band[10], nb = 0;
	const ir_node *x = top;
	while (x && x->kind == ND_FOR) {
		for (int i = 0; i < x->nidx; i++) {
			if (nb >= 10)
				return false;
			band[nb++] = x->idx[i];
		}
		if (x->nbody != 1)
			return false;
		x = x->body[0];
	}
	if (!x || x->kind != ND_STMT || !x->lhs || nb < 2)
		return false;
	for (int b = 0; b < nb; b++) {
		const ir_index *ix = &k->indices[band[b]];
		if (ix->kind != IX_LOOP || ir_index_affine(ix) || ix->step_expr || ix->step != 1)
			return false;
	}
	w->stmt = x;
	w->nouter = nb - 2;
	memcpy(w->outer, band, (size_t)w->nouter * sizeof *band);
	w->row = band[nb - 2];
	w->col = band[nb - 1];
	/* the left-hand side: one subscript row + a, one col + b, the others free of both */
	wave_walk W;
	memset(&W, 0, sizeof W);
	W.lhs = x->lhs;
	W.x = x->lhs->id;
	W.rank = k->arrays[W.x].rank;
	W.row = w->row;
	W.col = w->col;
	W.drow = W.dcol = -1;
	W.ok = true;
	for (int d = 0; d < W.rank; d++) {
		int sh = sub_shape(x->lhs->sub[d], w->row, w->col);
		if (sh < 0 || (sh == 1 && W.drow >= 0) || (sh == 2 && W.dcol >= 0))
			return false;
		if (sh == 1)
			W.drow = d;
		else if (sh == 2)
			W.dcol = d;
	}
	if (W.drow < 0 || W.dcol < 0)
		return false;
	walk(&W, x->rhs, x->op == AS_SET ? 0 : 1);
	if (!W.ok)
		return false;
	W.ops += x->op == AS_SET ? 0 : 1;
	/* the dependences (source to sink, lexicographically positive) between the statement's instances */
	bool across = false;
	int64_t lag_min = 0, lag = 0;
	for (int r = 0; r < W.nread; r++) {
		int64_t di = W.di[r], dj = W.dj[r];
		if (di < 0 || (di == 0 && dj < 0))
			di = -di, dj = -dj;
		if (di == 0)
			continue;
		across = true;
		int64_t lo = ceil_div(-dj, di), l1 = ceil_div(1 - dj, di);
		lag_min = lo > lag_min ? lo : lag_min;
		if (l1 > lag || (l1 == lag && w->tight_di == 0)) {
			lag = l1;
			w->tight_di = di;
			w->tight_dj = dj;
		}
	}
	/* a chain along j through the statement's own result, and rows that depend on each other */
	if (W.chain_dj < 1 || !across || lag > 1024)
		return false;
	w->lag_min = lag_min;
	w->lag = lag;
	w->chain_ops = W.chain;
	w->point_ops = W.ops;
	int lat = m->fma_latency > 0 ? m->fma_latency : 1, units = m->fma_units > 0 ? m->fma_units : 1;
	w->latency = lat;
	w->units = units;
	/* The chain: its operations, plus one for the value's way through memory (the generated code
	 * stores each point and the next loads it back: at least a load's latency, which the probe does
	 * not give; counted as one operation's), at the probe's FMA latency, per column. The issue: the
	 * point's operations over the FMA units. U chains keep the units busy when U * issue >= chain
	 * (Little's law, as the register tile's accumulators cover latency x units). */
	w->chain_cycles = (double)(W.chain + 1) * lat / (double)W.chain_dj;
	w->point_cycles = (double)(W.ops > 0 ? W.ops : 1) / units;
	int64_t U = (int64_t)(w->chain_cycles / w->point_cycles);
	if ((double)U * w->point_cycles < w->chain_cycles)
		U++;
	/* At most half the vector registers (a row in flight holds its running value and an operand
	 * when the compiler interleaves the rows' statements), the rows there are, the unroll limit. */
	bool ok = true;
	int64_t lo = aff_eval(k->indices[w->row].lo, pv, NULL, &ok), hi = aff_eval(k->indices[w->row].hi, pv, NULL, &ok);
	int64_t cap = m->registers / 2;
	if (ok && hi - lo < cap)
		cap = hi - lo;
	if (cap > WAVE_MAX_ROWS)
		cap = WAVE_MAX_ROWS;
	w->rows_cap = cap;
	if (U > cap)
		U = cap;
	if (U < 2)
		return false;
	w->rows = U;
	return true;
}

/* s[a, e) with the identifiers from[0..1] written to[0..1] (comments kept as written), each new
 * line indented by pad more. */
static void put_subst(ct_buf *b, const char *s, size_t a, size_t e, const char *const *from, const char *const *to,
                      const char *pad)
{
	for (size_t i = a; i < e;) {
		char c = s[i];
		if (c == '#') {
			while (i < e && s[i] != '\n')
				ct_buf_putc(b, s[i++]);
			continue;
		}
		bool id0 = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
		bool prev = i > a && ((s[i - 1] >= 'a' && s[i - 1] <= 'z') || (s[i - 1] >= 'A' && s[i - 1] <= 'Z') ||
		                      (s[i - 1] >= '0' && s[i - 1] <= '9') || s[i - 1] == '_' || s[i - 1] == '.');
		if (id0 && !prev) {
			size_t j = i;
			while (j < e && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
			                 (s[j] >= '0' && s[j] <= '9') || s[j] == '_'))
				j++;
			const char *rep = NULL;
			for (int r = 0; r < 2 && !rep; r++)
				if (strlen(from[r]) == j - i && !strncmp(s + i, from[r], j - i))
					rep = to[r];
			if (rep)
				ct_buf_puts(b, rep);
			else
				for (size_t q = i; q < j; q++)
					ct_buf_putc(b, s[q]);
			i = j;
			continue;
		}
		ct_buf_putc(b, c);
		if (c == '\n' && i + 1 < e)
			ct_buf_puts(b, pad);
		i++;
	}
}

/* The indent of level l below a nest indented by base. */
static void put_pad(ct_buf *b, const char *base, int l)
{
	ct_buf_puts(b, base);
	for (int i = 0; i < l; i++)
		ct_buf_puts(b, "  ");
}

/* `name: lo .. hi` of a rectangular loop (`name: hi` from 0). */
static void put_range(ct_buf *b, const ct_kernel *k, int id)
{
	const ir_index *ix = &k->indices[id];
	ct_buf_printf(b, "%s: ", ix->name);
	if (!aff_is_const(ix->lo) || ix->lo.c != 0) {
		lang_aff_print(b, k, ix->lo);
		ct_buf_puts(b, " .. ");
	}
	lang_aff_print(b, k, ix->hi);
}

/* The end of the for whose text starts at a: past the brace that closes its first '{' (comments
 * skipped); len when there is none. */
static size_t block_close(const char *s, size_t len, size_t a)
{
	int depth = 0;
	for (size_t i = a; i < len; i++) {
		if (s[i] == '#') {
			while (i + 1 < len && s[i + 1] != '\n')
				i++;
		} else if (s[i] == '{')
			depth++;
		else if (s[i] == '}' && --depth == 0)
			return i + 1;
	}
	return len;
}

char *wave_text(const ct_kernel *k, const wave_plan *w, const wave_names *nm, const wave_src *src, ct_buf *note)
{
	const char *s = k->text;
	size_t len = k->text_len;
	size_t nest_hi = s ? block_close(s, len, src->nest_lo) : 0, stmt_hi = src->stmt_hi;
	while (s && stmt_hi > src->stmt_lo && (s[stmt_hi - 1] == ' ' || s[stmt_hi - 1] == '\t'))
		stmt_hi--;
	if (!s || src->params_end > src->nest_lo || src->nest_lo >= nest_hi || nest_hi >= len + 1 ||
	    src->stmt_lo < src->nest_lo || stmt_hi > nest_hi || src->stmt_lo >= stmt_hi)
		return NULL;
	const ir_index *ri = &k->indices[w->row], *ci = &k->indices[w->col];
	ct_buf b;
	ct_buf_init(&b);
	for (size_t i = 0; i < src->params_end; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_printf(&b, "\nparam %s = %lld   # rows of the wavefront in flight (cachet auto)", nm->rows,
	              (long long)w->rows);
	for (size_t i = src->params_end; i < src->nest_lo; i++)
		ct_buf_putc(&b, s[i]);
	size_t ind = src->nest_lo;
	while (ind > 0 && (s[ind - 1] == ' ' || s[ind - 1] == '\t'))
		ind--;
	ct_buf in;
	ct_buf_init(&in);
	for (size_t i = ind; i < src->nest_lo; i++)
		ct_buf_putc(&in, s[i]);
	const char *base = in.s ? in.s : "";
	/* the outer loops as written, in one for; the blocks of rows, the steps along the columns, the
	 * rows of a block, the guard: levels 0 .. 4 (the first line's indent is the text's own) */
	int level = 0;
	if (w->nouter > 0) {
		ct_buf_puts(&b, "for (");
		for (int o = 0; o < w->nouter; o++) {
			ct_buf_puts(&b, o ? ", " : "");
			put_range(&b, k, w->outer[o]);
		}
		ct_buf_puts(&b, ") {\n");
		put_pad(&b, base, ++level);
	}
	ct_buf_printf(&b, "for (%s: ", nm->block);
	lang_aff_print(&b, k, ri->lo);
	ct_buf_puts(&b, " .. ");
	lang_aff_print(&b, k, ri->hi);
	ct_buf_printf(&b, " step %s) {\n", nm->rows);
	put_pad(&b, base, ++level);
	ct_buf_printf(&b, "for (%s: ", nm->step);
	lang_aff_print(&b, k, ci->lo);
	ct_buf_puts(&b, " .. ");
	lang_aff_print(&b, k, ci->hi);
	char jt[3 * 300];
	if (w->lag == 1) {
		ct_buf_printf(&b, " + %s - 1) {\n", nm->rows);
		snprintf(jt, sizeof jt, "%s - %s", nm->step, nm->row);
	} else if (w->lag > 1) {
		ct_buf_printf(&b, " + %lld*(%s - 1)) {\n", (long long)w->lag, nm->rows);
		snprintf(jt, sizeof jt, "%s - %lld*%s", nm->step, (long long)w->lag, nm->row);
	} else {
		ct_buf_puts(&b, ") {\n");
		snprintf(jt, sizeof jt, "%s", nm->step);
	}
	put_pad(&b, base, ++level);
	ct_buf_printf(&b, "for (%s: %s) {\n", nm->row, nm->rows);
	put_pad(&b, base, ++level);
	ct_buf_printf(&b, "if (%s + %s < ", nm->block, nm->row);
	lang_aff_print(&b, k, ri->hi);
	if (w->lag > 0) {
		ct_buf_puts(&b, " && ");
		lang_aff_print(&b, k, ci->lo);
		ct_buf_printf(&b, " <= %s && %s < ", jt, jt);
		lang_aff_print(&b, k, ci->hi);
	}
	ct_buf_puts(&b, ") {\n");
	put_pad(&b, base, ++level);
	char it[2 * 300], jp[3 * 300 + 2];
	snprintf(it, sizeof it, "(%s + %s)", nm->block, nm->row);
	snprintf(jp, sizeof jp, w->lag > 0 ? "(%s)" : "%s", jt);
	const char *from[2] = {ri->name, ci->name}, *to[2] = {it, jp};
	ct_buf pad;
	ct_buf_init(&pad);
	put_pad(&pad, base, level);
	put_subst(&b, s, src->stmt_lo, stmt_hi, from, to, pad.s ? pad.s : "");
	ct_buf_free(&pad);
	ct_buf_puts(&b, "\n");
	while (--level >= 0) {
		put_pad(&b, base, level);
		ct_buf_puts(&b, level ? "}\n" : "}");
	}
	for (size_t i = nest_hi; i < len; i++)
		ct_buf_putc(&b, s[i]);
	ct_buf_free(&in);
	/* the comment */
	ct_buf_printf(note,
	              "# the nest at line %d runs its rows in a wavefront (loops %s, %s, %s): %s = %lld rows of a sweep "
	              "at a time,\n#   row %s + u %lld*u columns behind row %s, the %lld rows' statements unrolled "
	              "(guarded) in each step of %s\n",
	              w->top->pos.line, nm->block, nm->step, nm->row, nm->rows, (long long)w->rows, nm->block,
	              (long long)w->lag, nm->block, (long long)w->rows, nm->step);
	ct_buf_printf(note,
	              "#   why: every loop carries, and along %s each point's value enters the next one's expression: "
	              "a chain of\n#   %d operations (+1 for the store and the load back) at FMA latency %d = %.1f cycles "
	              "per point,\n#   against %d operations of issue (%.1f cycles at %d a cycle): %s = chain / issue "
	              "rounded up = %lld chains\n#   in flight keep the units busy (at most %lld: half the vector registers, "
	              "the rows, 64)\n",
	              ci->name, w->chain_ops, w->latency, w->chain_cycles, w->point_ops, w->point_cycles, w->units, nm->rows,
	              (long long)w->rows, (long long)w->rows_cap);
	ct_buf_printf(note,
	              "#   lag %lld: the least with dj + lag*di >= 1 for every dependence (di, dj) across rows ((%lld, %lld) "
	              "sets it),\n#   so that each ends in a later step and one step's rows are independent ",
	              (long long)w->lag, (long long)w->tight_di, (long long)w->tight_dj);
	if (w->lag > w->lag_min)
		ct_buf_printf(note, "(lag %lld, the least that keeps\n#   them, would chain a step's rows)", (long long)w->lag_min);
	else
		ct_buf_puts(note, "(also the least that keeps\n#   them)");
	ct_buf_printf(note,
	              "; legal: every dependence keeps its order (src/tune/wave.c), each\n#   point's expression is "
	              "unchanged: the result is bit-identical; %s may be changed (-D), the lag may not\n",
	              nm->rows);
	return ct_buf_take(&b);
}

void wave_plan_items(const ct_kernel *k, const char *keep, ct_buf *plan)
{
	for (const char *p = keep ? strchr(keep, '+') : NULL; p; p = strchr(p + 1, '+')) {
		if (p != keep && p[-1] != ' ')
			continue;
		size_t n = strcspn(p + 1, " ");
		for (int i = 0; i < k->nindices; i++)
			if (strlen(k->indices[i].name) == n && !strncmp(k->indices[i].name, p + 1, n)) {
				ct_buf_printf(plan, "  unroll(%s)\n", k->indices[i].name);
				break;
			}
	}
}
