/* report_out.c: `cachet report --json` and `--csv DIR`: the report's data as one JSON object and as CSV files. */
#include "report_int.h"

/* ------------------------------------------------------------ JSON (jansson) and CSV */

/* A text member: NULL is the empty string, as the page shows it. */
static json_t *text(const char *s)
{
	return json_string(s ? s : "");
}

/* Counts per level, or null where the point was not counted. */
static json_t *counts_or_null(bool have, const int64_t *v, int n)
{
	return have ? ct_json_ints(v, n) : json_null();
}

static json_t *json_phases(const report *r, bool *ok)
{
	int nl = r->pr.nlevels;
	json_t *a = json_array();
	for (int i = 0; i < r->nphases; i++) {
		const phase *ph = &r->ph[i];
		json_t *o = json_object(), *pts = json_array();
		ct_json_set(o, "param", json_string(ph->param), ok);
		ct_json_set(o, "index", json_string(ph->index), ok);
		ct_json_set(o, "value", json_integer((json_int_t)ph->value), ok);
		ct_json_set(o, "extent", json_integer((json_int_t)ph->extent), ok);
		for (int j = 0; j < ph->n; j++) {
			const point *p = &ph->pts[j];
			json_t *pt = json_object();
			ct_json_set(pt, "tile", json_integer((json_int_t)p->tile), ok);
			ct_json_set(pt, "model", counts_or_null(p->ok, p->model, nl), ok);
			ct_json_set(pt, "simulated", counts_or_null(p->simulated, p->sim, nl), ok);
			ct_json_push(pts, pt, ok);
		}
		ct_json_set(o, "points", pts, ok);
		ct_json_push(a, o, ok);
	}
	return a;
}

static json_t *json_heat(const report *r, bool *ok)
{
	const heat *h = &r->hm;
	if (!h->on)
		return json_null();
	json_t *o = json_object(), *cells = json_array(), *picks = json_array();
	ct_json_set(o, "x_param", json_string(r->ph[h->px].param), ok);
	ct_json_set(o, "y_param", json_string(r->ph[h->py].param), ok);
	ct_json_set(o, "level", json_integer(h->level + 1), ok);
	ct_json_set(o, "fixed", text(h->fixed), ok);
	ct_json_set(o, "x", ct_json_ints(h->xv, h->nx), ok);
	ct_json_set(o, "y", ct_json_ints(h->yv, h->ny), ok);
	for (int y = 0; y < h->ny; y++)
		ct_json_push(cells, ct_json_ints(h->cell + y * h->nx, h->nx), ok);
	ct_json_set(o, "misses", cells, ok);
	for (int c = 0; c < h->npicks; c++) {
		int64_t xy[2] = {h->xv[h->xi[c]], h->yv[h->yi[c]]};
		ct_json_push(picks, ct_json_ints(xy, 2), ok);
	}
	ct_json_set(o, "picks", picks, ok);
	return o;
}

static json_t *json_tiles(const report *r, bool *ok)
{
	json_t *o = json_object();
	if (!r->have_tiles) {
		ct_json_set(o, "note", text(r->tiles_note), ok);
		return o;
	}
	json_t *params = json_array(), *picks = json_array();
	for (int i = 0; i < r->tr.nindices; i++)
		ct_json_push(params, json_string(r->tr.params[i]), ok);
	ct_json_set(o, "params", params, ok);
	ct_json_set(o, "rank_level", json_integer(r->tr.rank_level + 1), ok);
	for (int c = 0; c < r->tr.ncandidates; c++) {
		json_t *pick = json_object();
		ct_json_set(pick, "tiles", ct_json_ints(r->tr.candidates[c].tiles, r->tr.nindices), ok);
		ct_json_set(pick, "misses", ct_json_ints(r->tr.candidates[c].misses, r->tr.nlevels), ok);
		ct_json_push(picks, pick, ok);
	}
	ct_json_set(o, "picks", picks, ok);
	return o;
}

static json_t *json_roof(const report *r, bool *ok)
{
	const roof *rf = &r->rf;
	json_t *o = json_object(), *oi = json_array();
	ct_json_set(o, "dtype", json_string(rf->dtype), ok);
	ct_json_set(o, "measured", json_boolean(rf->measured), ok);
	ct_json_set(o, "peak_gflops_core", ct_json_real(rf->peak_core, 6), ok);
	ct_json_set(o, "peak_gflops_all", ct_json_real(rf->peak_all, 6), ok);
	ct_json_set(o, "copy_gbs_core", ct_json_real(rf->bw_core, 6), ok);
	ct_json_set(o, "copy_gbs_all", ct_json_real(rf->bw_all, 6), ok);
	ct_json_set(o, "threads_all", json_integer(rf->threads_all), ok);
	ct_json_set(o, "flops", ct_json_real(rf->have_flops ? rf->flops : 0, 6), ok);
	for (int l = 0; l < r->pr.nlevels; l++)
		ct_json_push(oi, ct_json_real(rf->oi[l], 6), ok);
	ct_json_set(o, "intensity", oi, ok);
	ct_json_set(o, "ran", json_boolean(rf->ran), ok);
	ct_json_set(o, "seconds", ct_json_real(rf->seconds, 6), ok);
	ct_json_set(o, "gflops", ct_json_real(rf->gflops, 6), ok);
	ct_json_set(o, "note", text(rf->note), ok);
	return o;
}

static json_t *json_tuning(const report *r, bool *ok)
{
	json_t *o = json_object(), *pts = json_array();
	ct_json_set(o, "family", text(r->family), ok);
	ct_json_set(o, "size_class", text(r->size_class), ok);
	ct_json_set(o, "note", text(r->tune_note), ok);
	ct_json_set(o, "kendall_tau", ct_json_real(r->tau, 6), ok);
	for (int i = 0; i < r->ntp; i++) {
		const tpoint *p = &r->tp[i];
		json_t *pt = json_object();
		ct_json_set(pt, "params", text(p->params), ok);
		ct_json_set(pt, "seconds", ct_json_real(p->seconds, 6), ok);
		ct_json_set(pt, "gflops", ct_json_real(p->gflops, 6), ok);
		ct_json_set(pt, "verified", json_integer(p->verified), ok);
		ct_json_set(pt, "model_rank", json_integer(p->rank), ok);
		ct_json_set(pt, "misses", counts_or_null(p->ok, p->misses, r->pr.nlevels), ok);
		ct_json_push(pts, pt, ok);
	}
	ct_json_set(o, "points", pts, ok);
	return o;
}

static json_t *json_levels(const report *r, bool *ok)
{
	json_t *a = json_array();
	for (int l = 0; l < r->pr.nlevels; l++)
		ct_json_push(a, predict_level_json(&r->pr, l, ok), ok);
	return a;
}

static json_t *json_seconds(const report *r, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "model", ct_json_fixed(r->t_model, 4), ok);
	ct_json_set(o, "simulator", ct_json_fixed(r->t_sim, 4), ok);
	ct_json_set(o, "probe", ct_json_fixed(r->t_probe, 4), ok);
	ct_json_set(o, "run", ct_json_fixed(r->t_run, 4), ok);
	ct_json_set(o, "plots", ct_json_fixed(r->t_plot, 4), ok);
	ct_json_set(o, "total", ct_json_fixed(r->t_total, 4), ok);
	return o;
}

/* --json: the report's data as one object on one line (docs/REPORT.md lists the members), built with
 * jansson like every other --json of the CLI; 0 when memory ran out. */
int write_json(FILE *f, const report *r)
{
	bool ok = true;
	json_t *o = json_object(), *params = json_object();
	ct_json_set(o, "kernel", json_string(ct_kernel_name(r->k)), &ok);
	ct_json_set(o, "file", ct_json_text(r->o.file), &ok);
	for (int i = 0; i < ct_kernel_param_count(r->k); i++)
		ct_json_set(params, ct_kernel_param_name(r->k, i),
		            json_integer((json_int_t)ct_kernel_param_value(r->k, i, NULL)), &ok);
	ct_json_set(o, "params", params, &ok);
	ct_json_set(o, "accesses", json_integer((json_int_t)r->pr.accesses), &ok);
	ct_json_set(o, "levels", json_levels(r, &ok), &ok);
	ct_json_set(o, "per_ref", ref_table_json(&r->rt, report_file(r), r->pr.nlevels, &ok), &ok);
	if (r->refs_note[0])
		ct_json_set(o, "per_ref_note", text(r->refs_note), &ok);
	ct_json_set(o, "tiles", json_tiles(r, &ok), &ok);
	ct_json_set(o, "phases", json_phases(r, &ok), &ok);
	ct_json_set(o, "heatmap", json_heat(r, &ok), &ok);
	ct_json_set(o, "roofline", json_roof(r, &ok), &ok);
	ct_json_set(o, "tuning", json_tuning(r, &ok), &ok);
	ct_json_set(o, "seconds", json_seconds(r, &ok), &ok);
	ct_json_set(o, "simulated_accesses", json_integer((json_int_t)r->sim_used), &ok);
	char *line = ok ? ct_json_line(o) : (json_decref(o), NULL);
	if (!line)
		return 0;
	fputs(line, f);
	free(line);
	return 1;
}

/* The CSV files being written, each replaced atomically (atomic_file). */
typedef struct csv_files {
	char path[4096];
	atomic_file out;
} csv_files;

static FILE *csv_open(const report *r, csv_files *c, const char *name)
{
	snprintf(c->path, sizeof c->path, "%s/%s", r->o.csv_dir, name);
	return atomic_open(&c->out, c->path);
}

static int csv_close(csv_files *c, FILE *f)
{
	return f && atomic_commit(&c->out);
}

/* The CSV files of --csv DIR; 0 when one cannot be written. */
int write_csv(const report *r)
{
	int nl = r->pr.nlevels, ok = 1;
	csv_files cf;
	if (!make_parents(r->o.csv_dir, 1))
		return 0;
	FILE *f = csv_open(r, &cf, "levels.csv");
	if (f) {
		fprintf(f, "level,size,line,ways,misses,exact,source\n");
		for (int l = 0; l < nl; l++)
			fprintf(f, "L%d,%lld,%lld,%lld,%lld,%d,%s\n", l + 1, (long long)r->pr.level[l].size,
			        (long long)r->pr.level[l].line, (long long)r->pr.level[l].ways,
			        (long long)r->pr.level[l].misses, r->pr.level[l].exact, count_source_name(r->pr.source[l]));
	}
	ok &= csv_close(&cf, f);
	if ((f = csv_open(r, &cf, "per_ref.csv")) != NULL) {
		fprintf(f, "where,array,stmt,access,accesses,level,misses,cold,capacity,carried_by\n");
		for (int i = 0; i < r->rt.nrefs; i++) {
			const ct_ref_misses *m = &r->rt.refs[i];
			char where[512], carrier[128];
			for (int l = 0; l < nl; l++)
				fprintf(f, "%s,%s,%d,%s,%lld,L%d,%lld,%lld,%lld,%s\n", ref_where(report_file(r), m, where, sizeof where),
				        m->array, m->stmt, ref_access(m), (long long)m->accesses, l + 1,
				        (long long)m->misses[l], (long long)m->cold[l], (long long)(m->misses[l] - m->cold[l]),
				        carrier_text(m, l, carrier, sizeof carrier));
		}
	}
	ok &= csv_close(&cf, f);
	if ((f = csv_open(r, &cf, "phases.csv")) != NULL) {
		fprintf(f, "param,tile,level,model,simulated\n");
		for (int i = 0; i < r->nphases; i++)
			for (int j = 0; j < r->ph[i].n; j++) {
				const point *p = &r->ph[i].pts[j];
				for (int l = 0; p->ok && l < nl; l++) {
					fprintf(f, "%s,%lld,L%d,%lld,", r->ph[i].param, (long long)p->tile, l + 1,
					        (long long)p->model[l]);
					if (p->simulated)
						fprintf(f, "%lld", (long long)p->sim[l]);
					fputc('\n', f);
				}
			}
	}
	ok &= csv_close(&cf, f);
	if ((f = csv_open(r, &cf, "heatmap.csv")) != NULL) {
		const heat *h = &r->hm;
		fprintf(f, "%s,%s,level,misses,pick\n", h->on ? r->ph[h->px].param : "x", h->on ? r->ph[h->py].param : "y");
		for (int y = 0; h->on && y < h->ny; y++)
			for (int x = 0; x < h->nx; x++) {
				int pick = 0;
				for (int c = 0; c < h->npicks; c++)
					if (h->xi[c] == x && h->yi[c] == y && !pick)
						pick = h->rank[c];
				if (h->cell[y * h->nx + x] >= 0)
					fprintf(f, "%lld,%lld,L%d,%lld,%d\n", (long long)h->xv[x], (long long)h->yv[y], h->level + 1,
					        (long long)h->cell[y * h->nx + x], pick);
			}
	}
	ok &= csv_close(&cf, f);
	if ((f = csv_open(r, &cf, "roofline.csv")) != NULL) {
		const roof *rf = &r->rf;
		fprintf(f, "what,level,intensity_flop_per_byte,gflops\n");
		fprintf(f, "peak_core,,,%.6g\npeak_all,,,%.6g\ncopy_gbs_core,,,%.6g\ncopy_gbs_all,,,%.6g\n", rf->peak_core,
		        rf->peak_all, rf->bw_core, rf->bw_all);
		for (int l = 0; l < nl; l++)
			fprintf(f, "kernel,L%d,%.6g,%.6g\n", l + 1, rf->oi[l], rf->ran ? rf->gflops : 0.0);
	}
	ok &= csv_close(&cf, f);
	if ((f = csv_open(r, &cf, "tuning.csv")) != NULL) {
		fprintf(f, "params,seconds,gflops,verified,model_rank");
		for (int l = 0; l < nl; l++)
			fprintf(f, ",L%d_misses", l + 1);
		fputc('\n', f);
		for (int i = 0; i < r->ntp; i++) {
			const tpoint *p = &r->tp[i];
			fprintf(f, "%s,%.6g,%.6g,%d,%d", p->params, p->seconds, p->gflops, p->verified, p->rank);
			for (int l = 0; l < nl; l++)
				fprintf(f, ",%lld", (long long)(p->ok ? p->misses[l] : -1));
			fputc('\n', f);
		}
	}
	ok &= csv_close(&cf, f);
	return ok;
}
