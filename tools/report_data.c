/* report_data.c: the data `cachet report` shows: the model's and simulator's counts, the sweeps over tile
 * sizes, the heat map over two tiles, the roofline's figures and the tuner's measured points. */
#include "report_int.h"

static int param_index(const ct_kernel *k, const char *name)
{
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		if (strcmp(ct_kernel_param_name(k, i), name) == 0)
			return i;
	return -1;
}

/* Set param name to v and recheck; 0 (error cleared) when the kernel refuses it. */
static int set_param(report *r, const char *name, int64_t v)
{
	if (ct_kernel_set_param(r->k, name, v) == CT_OK && ct_kernel_recheck(r->k) == CT_OK)
		return 1;
	ct_ctx_clear_error(r->ctx);
	return 0;
}

/* The model's misses per level of r->k as it stands; 0 when it cannot count them. */
static int model_counts(report *r, int64_t *misses, int64_t *accesses)
{
	ct_predict_result p;
	memset(&p, 0, sizeof p);
	double t0 = now_s();
	ct_status st = ct_kernel_predict(r->k, r->o.cache, &p);
	r->t_model += now_s() - t0;
	if (st != CT_OK) {
		ct_ctx_clear_error(r->ctx);
		return 0;
	}
	for (int l = 0; l < p.nlevels; l++)
		misses[l] = p.level[l].misses;
	if (accesses)
		*accesses = p.accesses;
	ct_predict_result_free(&p);
	return 1;
}

/* The simulator's misses, when the trace fits the per-point and total limits. */
static int sim_counts(report *r, int64_t accesses, int64_t *misses)
{
	if (accesses > r->o.sim_point_max || r->sim_used + accesses > r->sim_limit)
		return 0;
	ct_sim_result s;
	memset(&s, 0, sizeof s);
	double t0 = now_s();
	ct_status st = ct_kernel_simulate(r->k, r->o.cache, &s);
	r->t_sim += now_s() - t0;
	if (st != CT_OK) {
		ct_ctx_clear_error(r->ctx);
		return 0;
	}
	r->sim_used += s.accesses;
	for (int l = 0; l < s.nlevels; l++)
		misses[l] = s.level[l].misses;
	ct_sim_result_free(&s);
	return 1;
}

/* ------------------------------------------------------------ gathering the data */

/* The first loop of `index` starting at 0 in `nodes` (the lowered tree's "loops" or a loop's "body",
 * depth first in source order), or NULL. */
static json_t *first_loop(json_t *nodes, const char *index)
{
	size_t i;
	json_t *node;
	json_array_foreach(nodes, i, node)
	{
		const char *name = json_string_value(json_object_get(node, "loop"));
		const char *lo = json_string_value(json_object_get(node, "lo"));
		if (name && lo && strcmp(name, index) == 0 && strcmp(lo, "0") == 0)
			return node;
		json_t *inner = first_loop(json_object_get(node, "body"), index);
		if (inner)
			return inner;
	}
	return NULL;
}

/* The extent of loop index `index`: the "hi" of its first loop from 0 in the lowered tree (r->tree_doc)
 * 1024 when there is none or it is not a number (a runtime bound). */
static int64_t index_extent(const report *r, const char *index)
{
	json_t *loop = r->tree_doc ? first_loop(json_object_get(r->tree_doc, "loops"), index) : NULL;
	const char *hi = loop ? json_string_value(json_object_get(loop, "hi")) : NULL;
	char *end = NULL;
	long long v = hi ? strtoll(hi, &end, 10) : 0;
	return hi && end != hi && *end == 0 && v > 0 ? v : 1024;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorted distinct values of v[0..n); returns the new n. */
static int uniq(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

/* The tile sizes a sweep tries: 1, 2, 3, 4, 6, 8, 12, ... (powers of two and
 * their halfway points) up to the extent, the extent and the file's value. */
static int sweep_values(int64_t extent, int64_t value, int64_t *out, int cap)
{
	int n = 0;
	for (int64_t p = 1; p <= extent && n + 4 < cap; p *= 2) {
		out[n++] = p;
		if (p >= 2 && p + p / 2 <= extent)
			out[n++] = p + p / 2;
	}
	out[n++] = extent;
	if (value >= 1)
		out[n++] = value;
	return uniq(out, n);
}

void lower_tree(report *r)
{
	ct_looptree *t = ct_kernel_lower(r->k, 1);
	if (!t) {
		ct_ctx_clear_error(r->ctx);
		return;
	}
	r->tree = ct_looptree_to_string(t, CT_FORMAT_TEXT);
	char *json = ct_looptree_to_string(t, CT_FORMAT_JSON);
	r->tree_doc = json ? json_loads(json, 0, NULL) : NULL;
	free(json);
	ct_looptree_free(t);
}

void search_tiles(report *r)
{
	memset(&r->tr, 0, sizeof r->tr);
	double t0 = now_s();
	ct_status st = ct_kernel_tiles(r->k, r->o.cache, NULL, &r->tr);
	r->t_model += now_s() - t0;
	if (st != CT_OK) {
		snprintf(r->tiles_note, sizeof r->tiles_note, "no tile search: %s", ct_ctx_last_message(r->ctx));
		ct_ctx_clear_error(r->ctx);
		memset(&r->tr, 0, sizeof r->tr);
		return;
	}
	r->have_tiles = r->tr.nindices > 0;
	if (!r->have_tiles)
		snprintf(r->tiles_note, sizeof r->tiles_note, "the kernel has no tile params");
}

/* One point of a sweep or the heat map: the model's counts, and the simulator's when it fits
 * (deadline 0: whatever the time). */
static void count_point(report *r, point *p, double deadline, int try_sim)
{
	int64_t acc = 0;
	p->ok = (deadline == 0 || now_s() < deadline) && model_counts(r, p->model, &acc);
	p->simulated = p->ok && try_sim && sim_counts(r, acc, p->sim);
}

/* Misses against each tile param, the others at the file's values. */
void sweep_phases(report *r, double deadline)
{
	for (int i = 0; i < r->tr.nindices && r->nphases < MAX_TILES; i++) {
		phase *ph = &r->ph[r->nphases++];
		ph->param = r->tr.params[i];
		ph->index = r->tr.indices[i];
		ph->value = ct_kernel_param_value(r->k, param_index(r->k, ph->param), NULL);
		ph->extent = index_extent(r, ph->index);
		int64_t v[MAX_PTS];
		ph->n = sweep_values(ph->extent, ph->value, v, MAX_PTS);
		/* each tile param gets an equal share of the simulation budget */
		int nt = r->tr.nindices < MAX_TILES ? r->tr.nindices : MAX_TILES;
		int64_t share = r->o.sim_total_max / nt;
		r->sim_limit = share * r->nphases;
		/* simulated points spread over the sweep: every stride-th, as many as the share holds */
		int64_t fit = r->pr.accesses > 0 ? share / r->pr.accesses : ph->n;
		int stride = fit >= ph->n ? 1 : fit < 1 ? ph->n + 1 : (int)((ph->n + fit - 1) / fit);
		for (int j = 0; j < ph->n; j++) {
			point *p = &ph->pts[j];
			p->tile = v[j];
			/* the file's own value whatever the deadline (as the heat map's picks): a slow
			 * machine that runs out of model time still gets a point in every sweep */
			if (set_param(r, ph->param, v[j]))
				count_point(r, p, v[j] == ph->value ? 0 : deadline, j % stride == 0);
		}
		set_param(r, ph->param, ph->value);
	}
}

/* At most side values of v[0..n), evenly spread, the first and last kept. */
static int thin(const int64_t *v, int n, int side, int64_t *out)
{
	if (n <= side) {
		memcpy(out, v, (size_t)n * sizeof *v);
		return n;
	}
	for (int i = 0; i < side; i++)
		out[i] = v[(int64_t)i * (n - 1) / (side - 1)];
	return side;
}

static int find_i64(const int64_t *v, int n, int64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

/* The model's misses at the tile search's ranking level over the first two
 * tile params, the other tile params at the best pick's values; the picks'
 * own values join the grid so that each pick is a cell. */
/* Count cell (x, y) of heat map h into h->cell (-1: not counted, past deadline when it is not 0,
 * or the model failed). */
static void heat_cell(report *r, heat *h, int x, int y, double deadline)
{
	int64_t m[L];
	int ok = (deadline == 0 || now_s() < deadline) && set_param(r, r->ph[h->px].param, h->xv[x]) &&
	         set_param(r, r->ph[h->py].param, h->yv[y]) && model_counts(r, m, NULL);
	h->cell[y * h->nx + x] = ok ? m[h->level] : -1;
}

void heat_map(report *r, double deadline)
{
	heat *h = &r->hm;
	if (r->nphases < 2 || r->tr.ncandidates < 1)
		return;
	h->on = 1;
	h->px = 0;
	h->py = 1;
	h->level = r->tr.rank_level;
	const ct_tiles_candidate *best = &r->tr.candidates[0];
	int64_t saved[MAX_TILES];
	size_t fl = 0;
	h->fixed[0] = 0;
	for (int i = 0; i < r->nphases; i++) {
		saved[i] = r->ph[i].value;
		if (i != h->px && i != h->py) {
			set_param(r, r->ph[i].param, best->tiles[i]);
			fl += (size_t)snprintf(h->fixed + fl, sizeof h->fixed - fl, "%s%s=%lld", fl ? ", " : "",
			                       r->ph[i].param, (long long)best->tiles[i]);
			fl = fl < sizeof h->fixed ? fl : sizeof h->fixed - 1;
		}
	}
	int64_t all[MAX_PTS];
	for (int a = 0; a < 2; a++) {
		const phase *ph = &r->ph[a == 0 ? h->px : h->py];
		int64_t *vals = a == 0 ? h->xv : h->yv;
		int n = 0;
		for (int j = 0; j < ph->n; j++)
			all[n++] = ph->pts[j].tile;
		n = thin(all, n, HEAT_SIDE, vals);
		h->npicks = r->tr.ncandidates < MAX_PICKS ? r->tr.ncandidates : MAX_PICKS;
		for (int c = 0; c < h->npicks; c++)
			vals[n++] = r->tr.candidates[c].tiles[a == 0 ? h->px : h->py];
		n = uniq(vals, n);
		if (a == 0)
			h->nx = n;
		else
			h->ny = n;
	}
	int kept = 0;
	for (int c = 0; c < h->npicks; c++) {
		int xi = find_i64(h->xv, h->nx, r->tr.candidates[c].tiles[h->px]);
		int yi = find_i64(h->yv, h->ny, r->tr.candidates[c].tiles[h->py]);
		int seen = 0;
		for (int e = 0; e < kept; e++)
			seen |= h->xi[e] == xi && h->yi[e] == yi;
		if (seen)
			continue; /* picks that differ only in other tiles share a cell: the best one's rank */
		h->xi[kept] = xi;
		h->yi[kept] = yi;
		h->rank[kept++] = c + 1;
	}
	h->npicks = kept;
	h->cell = malloc((size_t)(h->nx * h->ny) * sizeof *h->cell);
	for (int c = 0; h->cell && c < h->nx * h->ny; c++)
		h->cell[c] = -2; /* not yet counted */
	/* the picks' cells first, whatever the deadline (a handful): a slow machine that runs out
	 * of model time still shows where the picks are; then the grid until the deadline */
	for (int e = 0; h->cell && e < h->npicks; e++)
		heat_cell(r, h, h->xi[e], h->yi[e], 0);
	for (int y = 0; h->cell && y < h->ny; y++)
		for (int x = 0; x < h->nx; x++)
			if (h->cell[y * h->nx + x] == -2)
				heat_cell(r, h, x, y, deadline);
	for (int i = 0; i < r->nphases; i++)
		set_param(r, r->ph[i].param, saved[i]);
	if (!h->cell)
		h->on = 0;
}

/* The dtype the roofline's peak is of: the first output or inout array's. */
static ct_dtype output_dtype(const ct_kernel *k)
{
	for (int i = 0; i < ct_kernel_array_count(k); i++) {
		ct_role ro = ct_kernel_array_role(k, i);
		if (ro == CT_OUTPUT || ro == CT_INOUT)
			return ct_kernel_array_dtype(k, i);
	}
	return ct_kernel_array_count(k) > 0 ? ct_kernel_array_dtype(k, 0) : CT_F32;
}

/* The probe's peaks and bandwidth, the model's intensity per level, one timed run. */
void roofline(report *r)
{
	roof *f = &r->rf;
	ct_dtype dt = output_dtype(r->k);
	f->dtype = ct_dtype_name(dt);
	ct_probe_info pi;
	memset(&pi, 0, sizeof pi);
	double t0 = now_s();
	unsigned flags = r->o.measure ? CT_PROBE_MEASURE_FLOPS | CT_PROBE_MEASURE_BANDWIDTH : 0;
	if (ct_probe_run(r->ctx, flags, &pi) != CT_OK)
		ct_ctx_clear_error(r->ctx);
	r->t_probe = now_s() - t0;
	int f64 = dt == CT_F64 || dt == CT_I64;
	f->peak_core = f64 ? pi.gflops_f64_core : pi.gflops_f32_core;
	f->peak_all = f64 ? pi.gflops_f64_all : pi.gflops_f32_all;
	f->bw_core = pi.copy_gbs_core;
	f->bw_all = pi.copy_gbs_all;
	f->threads_all = pi.threads_measured;
	f->measured = f->peak_core > 0 && f->bw_core > 0;
	f->flops = ct_kernel_flops(r->k);
	f->have_flops = f->flops > 0;
	for (int l = 0; l < r->pr.nlevels; l++) {
		f->bytes[l] = (double)r->pr.level[l].misses * (double)r->pr.level[l].line;
		f->oi[l] = f->have_flops && f->bytes[l] > 0 ? f->flops / f->bytes[l] : 0;
	}
	if (!r->o.run) {
		snprintf(f->note, sizeof f->note, "not run (--no-run): the point sits on the bound");
		return;
	}
	ct_run_options ro;
	ct_run_options_init(&ro);
	ro.verify = 0;
	ct_run_result rr;
	memset(&rr, 0, sizeof rr);
	t0 = now_s();
	ct_status st = ct_kernel_run(r->k, &ro, &rr);
	r->t_run = now_s() - t0;
	if (st != CT_OK) {
		snprintf(f->note, sizeof f->note, "the run failed: %s", ct_ctx_last_message(r->ctx));
		ct_ctx_clear_error(r->ctx);
		return;
	}
	f->ran = 1;
	f->seconds = rr.seconds;
	f->gflops = rr.gflops;
	snprintf(f->note, sizeof f->note, "one run, %s engine, %d thread%s, %.3g s", rr.engine, rr.threads,
	         rr.threads == 1 ? "" : "s", rr.seconds);
}

/* Apply a stored point's params ("T=32:U=64") to the kernel; 0 if refused. */
static int apply_point(report *r, const char *params)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", params);
	for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return 0;
		*eq = 0;
		if (param_index(r->k, tok) < 0 || ct_kernel_set_param(r->k, tok, strtoll(eq + 1, NULL, 10)) != CT_OK) {
			ct_ctx_clear_error(r->ctx);
			return 0;
		}
	}
	if (ct_kernel_recheck(r->k) != CT_OK) {
		ct_ctx_clear_error(r->ctx);
		return 0;
	}
	return 1;
}

static int nlevels_cmp;
/* The model's order: fewer misses of the smallest level first, then the next. */
static int cmp_model(const void *a, const void *b)
{
	const tpoint *x = *(tpoint *const *)a, *y = *(tpoint *const *)b;
	if (x->ok != y->ok)
		return y->ok - x->ok;
	for (int l = 0; l < nlevels_cmp; l++)
		if (x->misses[l] != y->misses[l])
			return x->misses[l] < y->misses[l] ? -1 : 1;
	return 0;
}

/* Kendall's tau of the model's rank and the measured time over the verified points. */
static double kendall(const tpoint *p, int n)
{
	double conc = 0, disc = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			if (!p[i].ok || !p[j].ok || p[i].verified == 0 || p[j].verified == 0)
				continue;
			double a = (double)(p[i].rank - p[j].rank), b = p[i].seconds - p[j].seconds;
			if (a * b > 0)
				conc++;
			else if (a * b < 0)
				disc++;
		}
	return conc + disc > 0 ? (conc - disc) / (conc + disc) : 0;
}

/* The points the tuner measured for this kernel's family, type and sizes
 * (the store's points table), each with the model's misses, ranked. */
void tuning_points(report *r)
{
	int tunable = 0;
	for (int i = 0; i < ct_kernel_param_count(r->k); i++)
		tunable |= ct_kernel_param_candidates(r->k, i, NULL) > 0;
	if (!tunable) {
		snprintf(r->tune_note, sizeof r->tune_note, "the kernel has no tunable params");
		return;
	}
	ct_dtype dt;
	if (ct_kernel_tune_key(r->k, r->family, sizeof r->family, r->size_class, sizeof r->size_class, &dt) !=
	    CT_OK) {
		snprintf(r->tune_note, sizeof r->tune_note, "no tuning key: %s", ct_ctx_last_message(r->ctx));
		ct_ctx_clear_error(r->ctx);
		return;
	}
	ct_store *s = ct_store_open(r->ctx, NULL, CT_STORE_READONLY | CT_STORE_QUIET);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	if (s && sqlite3_open_v2(ct_store_path(s), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db,
	                       "SELECT params, seconds, gflops, verified FROM points WHERE family=?1 AND dtype=?2"
	                       " AND size_class=?3 AND abandoned=0 ORDER BY params",
	                       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, r->family, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, ct_dtype_name(dt), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, r->size_class, -1, SQLITE_STATIC);
		r->tp = calloc(MAX_TUNE_POINTS, sizeof *r->tp);
		while (r->tp && r->ntp < MAX_TUNE_POINTS && sqlite3_step(st) == SQLITE_ROW) {
			tpoint *p = &r->tp[r->ntp];
			const unsigned char *txt = sqlite3_column_text(st, 0);
			snprintf(p->params, sizeof p->params, "%s", txt ? (const char *)txt : "");
			p->seconds = sqlite3_column_double(st, 1);
			p->gflops = sqlite3_column_double(st, 2);
			p->verified = sqlite3_column_int(st, 3);
			r->ntp += p->seconds > 0;
		}
	}
	sqlite3_finalize(st);
	if (db)
		sqlite3_close(db);
	ct_store_close(s);
	if (r->ntp == 0) {
		snprintf(r->tune_note, sizeof r->tune_note,
		         "the tuning store has no measured points of %s (%s, %s): run `cachet tune` first", r->family,
		         ct_dtype_name(dt), r->size_class);
		return;
	}
	/* each point's model counts, then its rank in the model's order */
	int np = ct_kernel_param_count(r->k);
	int64_t *saved = malloc((size_t)np * sizeof *saved);
	tpoint **order = malloc((size_t)r->ntp * sizeof *order);
	if (!saved || !order) {
		free(saved);
		free(order);
		r->ntp = 0;
		return;
	}
	for (int i = 0; i < np; i++)
		saved[i] = ct_kernel_param_value(r->k, i, NULL);
	for (int i = 0; i < r->ntp; i++) {
		tpoint *p = &r->tp[i];
		p->ok = apply_point(r, p->params) && model_counts(r, p->misses, NULL);
		order[i] = p;
	}
	for (int i = 0; i < np; i++)
		if (ct_kernel_param_candidates(r->k, i, NULL) > 0)
			ct_kernel_set_param(r->k, ct_kernel_param_name(r->k, i), saved[i]);
	if (ct_kernel_recheck(r->k) != CT_OK)
		ct_ctx_clear_error(r->ctx);
	nlevels_cmp = r->pr.nlevels;
	qsort(order, (size_t)r->ntp, sizeof *order, cmp_model);
	for (int i = 0; i < r->ntp; i++)
		order[i]->rank = i + 1;
	r->tau = kendall(r->tp, r->ntp);
	free(order);
	free(saved);
}
