/* comm.c: the communication of distributed kernels: the bytes each rank sends and receives per call, and the text `cachet lower` shows of a distribution. */
#include "model/model.h"

#include "plan/dist.h"

#include <cachet.h>
#include <stdlib.h>
#include <string.h>

/* The analysed distribution of k with a grid of ranks ranks (0: grid= of the plan, or 2 per
 * axis). */
static ct_status comm_plan(ct_kernel *k, int ranks, const int64_t *grid, int ngrid, dist_plan **out)
{
	*out = NULL;
	if (!k)
		return CT_ERR_USAGE;
	ct_status st = dist_analyse(k, out);
	if (st)
		return st;
	if (!*out)
		return ct_error(k->ctx, CT_ERR_USAGE, "kernel '%s' has no distribute() in its plan", k->name);
	dist_plan *p = *out;
	if (grid && ngrid != p->naxes)
		st = ct_error(k->ctx, CT_ERR_USAGE, "--grid has %d dimensions; distribute() has %d", ngrid, p->naxes);
	int64_t n = ranks;
	if (!st && n <= 0) {
		n = 1;
		for (int g = 0; g < p->naxes; g++)
			n *= p->grid[g] > 0 ? p->grid[g] : 2;
	}
	if (!st)
		st = dist_set_grid(k->ctx, p, n, grid);
	if (st) {
		dist_plan_free(k->ctx, p);
		*out = NULL;
	}
	return st;
}

ct_status ct_kernel_predict_ranks(ct_kernel *k, int ranks, const int64_t *grid, int ngrid, int64_t *sent,
                                  int64_t *received, int64_t *dims)
{
	if (!k || !sent || !received)
		return k ? ct_error(k->ctx, CT_ERR_USAGE, "ct_kernel_predict_ranks: NULL sent or received") : CT_ERR_USAGE;
	if (ranks < 1 || ranks > (1 << 20))
		return ct_error(k->ctx, CT_ERR_USAGE, "ranks must be 1 .. %d, not %d", 1 << 20, ranks);
	dist_plan *p;
	ct_status st = comm_plan(k, ranks, grid, ngrid, &p);
	if (st)
		return st;
	for (int g = 0; dims && g < IR_MAX_GRID; g++)
		dims[g] = g < p->naxes ? p->axes[g].ranks : 0;
	for (int64_t r = 0; r < ranks; r++)
		dist_rank_bytes(p, r, &sent[r], &received[r]);
	dist_plan_free(k->ctx, p);
	return CT_OK;
}

static void put_box(ct_buf *b, const ctd_box *x, int rank)
{
	ct_buf_putc(b, '[');
	for (int d = 0; d < rank; d++)
		ct_buf_printf(b, "%s%lld..%lld", d ? ", " : "", (long long)x->lo[d], (long long)x->hi[d] - 1);
	ct_buf_putc(b, ']');
}

/* One array's line: alignment, reductions, the halo reach of a middle rank. */
static void describe_array(ct_buf *b, const ct_kernel *k, const dist_plan *p, int a)
{
	const ctd_array *arr = &p->arrays[a];
	static const char *const roles[] = {"input", "output", "inout", "temp"};
	ct_buf_printf(b, "  %s (%s): dimensions ", k->arrays[a].name, roles[arr->role & 3]);
	for (int d = 0; d < arr->rank; d++) {
		int g = arr->align[d];
		if (d == arr->panel_dim)
			ct_buf_printf(b, "%spanels of '%s' split over '%s'", d ? " x " : "", k->indices[p->panel_index].name,
			              k->indices[p->axis_index[arr->panel_axis]].name);
		else
			ct_buf_printf(b, "%s%s", d ? " x " : "", g >= 0 ? k->indices[p->axis_index[g]].name : "whole");
	}
	if (arr->panel_dim >= 0)
		ct_buf_printf(b, "; each call broadcasts its panels along '%s' (SUMMA)",
		              k->indices[p->axis_index[arr->panel_axis]].name);
	if (arr->role == 3)
		ct_buf_puts(b, "; the kernel's own, on every rank");
	if (arr->replicated)
		ct_buf_puts(b, "; replicated (replicate=): whole on every rank");
	for (int g = 0; g < p->naxes; g++)
		if (arr->reduce >> g & 1)
			ct_buf_printf(b, "; partial sums over '%s' added into coordinate 0", k->indices[p->axis_index[g]].name);
	bool any = false;
	for (int g = 0; g < p->naxes; g++) {
		int64_t lo = 0, hi = 0;
		for (int i = 0; i < arr->nref && arr->role != 1 && arr->role != 3; i++)
			for (int d = 0; d < arr->rank; d++) {
				if (arr->align[d] != g || arr->ref[i].coef[d][g] != 1)
					continue;
				if (-arr->ref[i].rlo[d] > lo)
					lo = -arr->ref[i].rlo[d];
				if (arr->ref[i].rhi[d] > hi)
					hi = arr->ref[i].rhi[d];
			}
		if (lo > 0 || hi > 0) {
			ct_buf_printf(b, "%s%s -%lld..+%lld", any ? ", " : "; halo ", k->indices[p->axis_index[g]].name,
			              (long long)lo, (long long)hi);
			any = true;
		}
	}
	ct_buf_putc(b, '\n');
}

/* Rank r's messages before its block runs. */
static void describe_rank(ct_buf *b, const ct_kernel *k, const dist_plan *p, int64_t r)
{
	int64_t me[CTD_MAX_AXES], other[CTD_MAX_AXES], n = ctd_nranks(p->axes, p->naxes);
	ctd_coords(p->axes, p->naxes, r, me);
	ct_buf_printf(b, "  rank %lld (", (long long)r);
	for (int g = 0; g < p->naxes; g++) {
		int64_t lo, hi;
		ctd_block(&p->axes[g], me[g], &lo, &hi);
		ct_buf_printf(b, "%s%s %lld..%lld", g ? ", " : "", k->indices[p->axis_index[g]].name, (long long)lo,
		              (long long)hi - 1);
	}
	ct_buf_puts(b, "):");
	bool any = false;
	for (int a = 0; a < p->narrays; a++)
		for (int64_t s = 0; s < n; s++) {
			ctd_box x;
			ctd_coords(p->axes, p->naxes, s, other);
			ctd_message(&p->arrays[a], p->axes, p->naxes, other, me, &x);
			if (ctd_box_empty(&x, p->arrays[a].rank))
				continue;
			ct_buf_printf(b, "%s %s", any ? "," : "", k->arrays[a].name);
			put_box(b, &x, p->arrays[a].rank);
			ct_buf_printf(b, " from %lld", (long long)s);
			any = true;
		}
	if (!any)
		ct_buf_puts(b, " nothing to receive");
	int64_t sent, received;
	dist_rank_bytes(p, r, &sent, &received);
	ct_buf_printf(b, "; %lld bytes out, %lld in\n", (long long)sent, (long long)received);
}

char *ct_kernel_distribution_text(ct_kernel *k, int ranks)
{
	dist_plan *p;
	if (comm_plan(k, ranks, NULL, 0, &p))
		return NULL;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_puts(&b, "distribute(");
	for (int g = 0; g < p->naxes; g++)
		ct_buf_printf(&b, "%s%s", g ? ", " : "", k->indices[p->axis_index[g]].name);
	ct_buf_puts(&b, ") over a grid of ");
	for (int g = 0; g < p->naxes; g++)
		ct_buf_printf(&b, "%s%lld", g ? "x" : "", (long long)p->axes[g].ranks);
	ct_buf_printf(&b, " ranks%s; blocks of", ranks > 0 || p->grid[0] > 0 ? "" : " (e.g.; --ranks N for another)");
	for (int g = 0; g < p->naxes; g++)
		ct_buf_printf(&b, "%s %lld-value tiles of '%s'", g ? " x" : "", (long long)p->axes[g].step,
		              k->indices[p->axis_index[g]].name);
	ct_buf_puts(&b, "\narrays:\n");
	for (int a = 0; a < p->narrays; a++)
		describe_array(&b, k, p, a);
	if (p->panel_index >= 0) {
		ct_buf_printf(&b, "panels of '%s':", k->indices[p->panel_index].name);
		for (int64_t k0 = p->panel.lo, k1; k0 < p->panel.hi; k0 = k1) {
			k1 = ctd_panel_next(p->arrays, p->narrays, p->axes, k0);
			if (k1 <= k0)
				break;
			ct_buf_printf(&b, " %lld..%lld", (long long)k0, (long long)k1 - 1);
		}
		ct_buf_putc(&b, '\n');
	}
	ct_buf_puts(&b, p->panel_index >= 0 ? "exchange before each call (then the panels, one broadcast each):\n"
	                                    : "exchange before each call (the interior runs while it travels):\n");
	int64_t n = ctd_nranks(p->axes, p->naxes);
	for (int64_t r = 0; r < n && r < 64; r++)
		describe_rank(&b, k, p, r);
	if (n > 64)
		ct_buf_printf(&b, "  ... %lld more ranks\n", (long long)(n - 64));
	dist_plan_free(k->ctx, p);
	if (b.failed) {
		ct_buf_free(&b);
		ct_error(k->ctx, CT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	return ct_buf_take(&b);
}
