/* distgen.c: the MPI program of a distributed kernel: the per-rank kernel's C, the runtime of src/ir/distrt.c, the kernel's tables and the driver of src/gen/distmpi.c.in. */
#include "gen/gen.h"

#include "plan/dist.h"
#include "plan/plan.h"

#include <cachet.h>
#include <stdlib.h>
#include <string.h>

#include "dist_text.h"

static void put_lines(ct_buf *b, const char *const *lines)
{
	for (int i = 0; lines[i]; i++)
		ct_buf_puts(b, lines[i]);
}

static void put_i64s(ct_buf *b, const int64_t *v, int n)
{
	ct_buf_putc(b, '{');
	for (int i = 0; i < n; i++)
		ct_buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
	if (n == 0)
		ct_buf_putc(b, '0');
	ct_buf_putc(b, '}');
}

static void put_array(ct_buf *b, const ctd_array *a, int naxes)
{
	int64_t align[CTD_MAX_DIMS];
	for (int d = 0; d < a->rank; d++)
		align[d] = a->align[d];
	ct_buf_printf(b, "\t{.rank = %d, .esize = %d, .role = %d, .reduce = %d, .replicated = %d, .ext = ", a->rank,
	              a->esize, a->role, a->reduce, a->replicated);
	put_i64s(b, a->ext, a->rank);
	ct_buf_puts(b, ", .align = ");
	put_i64s(b, align, a->rank);
	ct_buf_printf(b, ", .panel_dim = %d, .panel_axis = %d, .plo = %lld, .phi = %lld, .pstep = %lld", a->panel_dim,
	              a->panel_axis, (long long)a->plo, (long long)a->phi, (long long)a->pstep);
	ct_buf_printf(b, ", .nref = %d, .ref = {", a->nref);
	for (int i = 0; i < a->nref; i++) {
		const ctd_ref *r = &a->ref[i];
		ct_buf_printf(b, "%s\n\t\t{.write = %d, .coef = {", i ? "," : "", r->write);
		for (int d = 0; d < a->rank; d++) {
			ct_buf_puts(b, d ? ", " : "");
			put_i64s(b, r->coef[d], naxes);
		}
		ct_buf_puts(b, "}, .rlo = ");
		put_i64s(b, r->rlo, a->rank);
		ct_buf_puts(b, ", .rhi = ");
		put_i64s(b, r->rhi, a->rank);
		ct_buf_putc(b, '}');
	}
	ct_buf_puts(b, "}}");
}

static int mpi_type_code(ct_dtype t)
{
	switch (t) {
	case CT_F32: return 0;
	case CT_F64: return 1;
	case CT_I32: return 2;
	case CT_I64: return 3;
	}
	return 0;
}

/* The kernel's tables and the names the driver defines. */
static void put_tables(ct_buf *b, const ct_kernel *k, const dist_plan *p)
{
	char fn[300], entry[300];
	gen_symbol_names(k, fn, entry, sizeof fn);
	ct_buf_printf(b, "\n/* ---- the distribution of kernel '%s' (cachet: src/plan/dist.c) ---- */\n", k->name);
	ct_buf_printf(b, "#define CTD_NAXES %d\n#define CTD_NARRAYS %d\n#define CTD_NPARAMS %d\n", p->naxes, p->narrays,
	              k->nparams);
	ct_buf_printf(b, "#define CTD_ENTRY %s\n#define CTD_DIST %s_dist\n#define CTD_GLOBAL %s_dist_global\n", entry, fn, fn);
	ct_buf_printf(b, "#define CTD_STATS %s_dist_stats\n#define CTD_ERROR %s_dist_error\n#define CTD_LOCAL_BOX %s_dist_local_box\n",
	              fn, fn, fn);
	ct_buf_printf(b, "/* SUMMA: the loop whose panels are broadcast (%s) */\n#define CTD_PANEL %d\n",
	              p->panel_index >= 0 ? k->indices[p->panel_index].name : "none", p->panel_index >= 0);
	ct_buf_printf(b, "static const ctd_axis ctd_panel_init = {%lld, %lld, %lld, 0};\n", (long long)p->panel.lo,
	              (long long)p->panel.hi, (long long)p->panel.step);
	ct_buf_puts(b, "static const int64_t ctd_param_values[CTD_NPARAMS + 1] = ");
	put_i64s(b, p->params, k->nparams);
	ct_buf_puts(b, ";\n/* grid= as written; all 0: MPI_Dims_create chooses */\nstatic const int64_t ctd_grid_given[CTD_MAX_AXES] = ");
	put_i64s(b, p->grid, CTD_MAX_AXES);
	ct_buf_puts(b, ";\n/* per distributed loop: its values lo .. hi-1 in blocks of step */\nstatic const ctd_axis ctd_axes_init[CTD_MAX_AXES] = {");
	for (int g = 0; g < p->naxes; g++)
		ct_buf_printf(b, "%s{%lld, %lld, %lld, 0} /* %s */", g ? ", " : "", (long long)p->axes[g].lo,
		              (long long)p->axes[g].hi, (long long)p->axes[g].step, k->indices[p->axis_index[g]].name);
	ct_buf_puts(b, "};\nstatic const int ctd_mpitype[CTD_NARRAYS + 1] = {");
	for (int a = 0; a < k->narrays; a++)
		ct_buf_printf(b, "%s%d", a ? ", " : "", mpi_type_code(k->arrays[a].type));
	ct_buf_puts(b, "};\n/* the declared layout of the whole arrays: dimension order, most major first */\n"
	               "static const int ctd_layout[CTD_NARRAYS + 1][CTD_MAX_DIMS] = {");
	for (int a = 0; a < k->narrays; a++) {
		int64_t order[IR_MAX_RANK];
		for (int d = 0; d < k->arrays[a].rank; d++)
			order[d] = k->arrays[a].order[d];
		ct_buf_puts(b, a ? ", " : "");
		put_i64s(b, order, k->arrays[a].rank);
	}
	ct_buf_puts(b, "};\n/* per array: role (0 input, 1 output, 2 inout, 3 temp), the axis each dimension is aligned\n"
	               " * with (-1: whole on every rank), the axes summed over, and each access */\n"
	               "static const ctd_array ctd_arrays_init[CTD_NARRAYS] = {\n");
	for (int a = 0; a < p->narrays; a++) {
		ct_buf_printf(b, "\t/* %s */\n", k->arrays[a].name);
		put_array(b, &p->arrays[a], p->naxes);
		ct_buf_puts(b, a + 1 < p->narrays ? ",\n" : "\n");
	}
	ct_buf_puts(b, "};\n");
}

/* The per-rank kernel: k localized (dist_localize), lowered and emitted as C. */
static char *rank_kernel(ct_kernel *k, const dist_plan *p)
{
	dist_saved s;
	if (dist_localize(k, p, &s))
		return NULL;
	char *src = NULL;
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (t) {
		size_t n;
		src = gen_c(t, &n);
		ct_looptree_free(t);
	}
	dist_restore(k, &s);
	return src;
}

ct_status gen_dist_check(ct_kernel *k)
{
	dist_plan *p = NULL;
	ct_status st = dist_analyse(k, &p);
	if (st || !p)
		return st;
	char *src = rank_kernel(k, p);
	dist_plan_free(k->ctx, p);
	if (src) {
		free(src);
		return CT_OK;
	}
	/* a refusal of the per-rank kernel that the whole kernel passed: say where it comes from */
	st = ct_ctx_last_status(k->ctx);
	char msg[700];
	snprintf(msg, sizeof msg, "%s", ct_ctx_last_message(k->ctx) ? ct_ctx_last_message(k->ctx) : "?");
	int line = ct_ctx_last_line(k->ctx), col = ct_ctx_last_col(k->ctx);
	return ct_error_at(k->ctx, st ? st : CT_ERR_INPUT, k->file, line, col,
	                   "distribute: on the ranks, whose loops run over bounds given per rank: %s", msg);
}

char *gen_dist_c(ct_kernel *k, size_t *len)
{
	dist_plan *p = NULL;
	if (dist_analyse(k, &p))
		return NULL;
	if (!p) {
		ct_error(k->ctx, CT_ERR_USAGE, "kernel '%s' has no distribute() in its plan (target mpi)", k->name);
		return NULL;
	}
	char *src = rank_kernel(k, p);
	if (!src) {
		dist_plan_free(k->ctx, p);
		return NULL;
	}
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_puts(&b, src);
	free(src);
	ct_buf_puts(&b, "\n/* ---- distributed over MPI ranks: docs/DISTRIBUTED.md ---- */\n"
	                "#include <mpi.h>\n#include <stdio.h>\n#define CTD_FN static inline\n");
	put_lines(&b, ctd_text_rt);
	put_tables(&b, k, p);
	put_lines(&b, ctd_text_mpi);
	dist_plan_free(k->ctx, p);
	if (b.failed) {
		ct_buf_free(&b);
		ct_error(k->ctx, CT_ERR_NOMEM, "out of memory generating the MPI program");
		return NULL;
	}
	if (len)
		*len = b.len;
	return ct_buf_take(&b);
}
