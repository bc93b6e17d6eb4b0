/* report_out.c: `cachet report --json` and `--csv DIR`: the report's data as one JSON object and as CSV files. */
#include "report_int.h"

/* ------------------------------------------------------------ JSON and CSV */

/* A JSON string: s with quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 32)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_counts(FILE *f, const int64_t *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
	fputc(']', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void json_refs(FILE *f, const report *r)
{
	int nl = r->pr.nlevels;
	fputs(", \"per_ref\": [", f);
	for (int i = 0; i < r->rt.nrefs; i++) {
		const ct_ref_misses *m = &r->rt.refs[i];
		char where[512], carrier[128];
		fprintf(f, "%s{\"array\": ", i ? ", " : "");
		json_str(f, m->array);
		fprintf(f, ", \"stmt\": %d, \"where\": ", m->stmt);
		json_str(f, ref_where(report_file(r), m, where, sizeof where));
		fprintf(f, ", \"access\": \"%s\", \"accesses\": %lld, \"misses\": ", ref_access(m),
		        (long long)m->accesses);
		json_counts(f, m->misses, nl);
		fputs(", \"cold\": ", f);
		json_counts(f, m->cold, nl);
		fputs(", \"carried_by\": [", f);
		for (int l = 0; l < nl; l++) {
			fputs(l ? ", " : "", f);
			json_str(f, carrier_text(m, l, carrier, sizeof carrier));
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

static void json_phases(FILE *f, const report *r)
{
	int nl = r->pr.nlevels;
	fputs(", \"phases\": [", f);
	for (int i = 0; i < r->nphases; i++) {
		const phase *ph = &r->ph[i];
		fprintf(f, "%s{\"param\": \"%s\", \"index\": \"%s\", \"value\": %lld, \"extent\": %lld, \"points\": [",
		        i ? ", " : "", ph->param, ph->index, (long long)ph->value, (long long)ph->extent);
		for (int j = 0; j < ph->n; j++) {
			const point *p = &ph->pts[j];
			fprintf(f, "%s{\"tile\": %lld, \"model\": ", j ? ", " : "", (long long)p->tile);
			if (p->ok)
				json_counts(f, p->model, nl);
			else
				fputs("null", f);
			fputs(", \"simulated\": ", f);
			if (p->simulated)
				json_counts(f, p->sim, nl);
			else
				fputs("null", f);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

static void json_heat(FILE *f, const report *r)
{
	const heat *h = &r->hm;
	fputs(", \"heatmap\": ", f);
	if (!h->on) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"x_param\": \"%s\", \"y_param\": \"%s\", \"level\": %d, \"fixed\": ", r->ph[h->px].param,
	        r->ph[h->py].param, h->level + 1);
	json_str(f, h->fixed);
	fputs(", \"x\": ", f);
	json_counts(f, h->xv, h->nx);
	fputs(", \"y\": ", f);
	json_counts(f, h->yv, h->ny);
	fputs(", \"misses\": [", f);
	for (int y = 0; y < h->ny; y++) {
		fputs(y ? ", " : "", f);
		json_counts(f, h->cell + y * h->nx, h->nx);
	}
	fputs("], \"picks\": [", f);
	for (int c = 0; c < h->npicks; c++)
		fprintf(f, "%s[%lld, %lld]", c ? ", " : "", (long long)h->xv[h->xi[c]], (long long)h->yv[h->yi[c]]);
	fputs("]}", f);
}

static void json_tiles(FILE *f, const report *r)
{
	fputs(", \"tiles\": ", f);
	if (!r->have_tiles) {
		fputs("{\"note\": ", f);
		json_str(f, r->tiles_note);
		fputc('}', f);
		return;
	}
	fputs("{\"params\": [", f);
	for (int i = 0; i < r->tr.nindices; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", r->tr.params[i]);
	fprintf(f, "], \"rank_level\": %d, \"picks\": [", r->tr.rank_level + 1);
	for (int c = 0; c < r->tr.ncandidates; c++) {
		fprintf(f, "%s{\"tiles\": ", c ? ", " : "");
		json_counts(f, r->tr.candidates[c].tiles, r->tr.nindices);
		fputs(", \"misses\": ", f);
		json_counts(f, r->tr.candidates[c].misses, r->tr.nlevels);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void json_roof(FILE *f, const report *r)
{
	const roof *rf = &r->rf;
	fprintf(f, ", \"roofline\": {\"dtype\": \"%s\", \"measured\": %s, \"peak_gflops_core\": ", rf->dtype,
	        rf->measured ? "true" : "false");
	json_num(f, rf->peak_core);
	fputs(", \"peak_gflops_all\": ", f);
	json_num(f, rf->peak_all);
	fputs(", \"copy_gbs_core\": ", f);
	json_num(f, rf->bw_core);
	fputs(", \"copy_gbs_all\": ", f);
	json_num(f, rf->bw_all);
	fprintf(f, ", \"threads_all\": %d, \"flops\": ", rf->threads_all);
	json_num(f, rf->have_flops ? rf->flops : 0);
	fputs(", \"intensity\": [", f);
	for (int l = 0; l < r->pr.nlevels; l++) {
		fputs(l ? ", " : "", f);
		json_num(f, rf->oi[l]);
	}
	fprintf(f, "], \"ran\": %s, \"seconds\": ", rf->ran ? "true" : "false");
	json_num(f, rf->seconds);
	fputs(", \"gflops\": ", f);
	json_num(f, rf->gflops);
	fputs(", \"note\": ", f);
	json_str(f, rf->note);
	fputc('}', f);
}

static void json_tuning(FILE *f, const report *r)
{
	fputs(", \"tuning\": {\"family\": ", f);
	json_str(f, r->family);
	fputs(", \"size_class\": ", f);
	json_str(f, r->size_class);
	fputs(", \"note\": ", f);
	json_str(f, r->tune_note);
	fputs(", \"kendall_tau\": ", f);
	json_num(f, r->tau);
	fputs(", \"points\": [", f);
	for (int i = 0; i < r->ntp; i++) {
		const tpoint *p = &r->tp[i];
		fprintf(f, "%s{\"params\": ", i ? ", " : "");
		json_str(f, p->params);
		fprintf(f, ", \"seconds\": %.6g, \"gflops\": %.6g, \"verified\": %d, \"model_rank\": %d, \"misses\": ",
		        p->seconds, p->gflops, p->verified, p->rank);
		if (p->ok)
			json_counts(f, p->misses, r->pr.nlevels);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("]}", f);
}

void write_json(FILE *f, const report *r)
{
	fputs("{\"kernel\": ", f);
	json_str(f, ct_kernel_name(r->k));
	fputs(", \"file\": ", f);
	json_str(f, r->o.file);
	fputs(", \"params\": {", f);
	for (int i = 0; i < ct_kernel_param_count(r->k); i++)
		fprintf(f, "%s\"%s\": %lld", i ? ", " : "", ct_kernel_param_name(r->k, i),
		        (long long)ct_kernel_param_value(r->k, i, NULL));
	fprintf(f, "}, \"accesses\": %lld, \"levels\": [", (long long)r->pr.accesses);
	for (int l = 0; l < r->pr.nlevels; l++)
		fprintf(f, "%s{\"size\": %lld, \"line\": %lld, \"ways\": %lld, \"misses\": %lld, \"exact\": %s, \"source\": \"%s\"}",
		        l ? ", " : "", (long long)r->pr.level[l].size, (long long)r->pr.level[l].line,
		        (long long)r->pr.level[l].ways, (long long)r->pr.level[l].misses,
		        r->pr.level[l].exact ? "true" : "false", count_source_name(r->pr.source[l]));
	fputc(']', f);
	json_refs(f, r);
	json_tiles(f, r);
	json_phases(f, r);
	json_heat(f, r);
	json_roof(f, r);
	json_tuning(f, r);
	fprintf(f, ", \"seconds\": {\"model\": %.4f, \"simulator\": %.4f, \"probe\": %.4f, \"run\": %.4f, \"plots\": %.4f, "
	           "\"total\": %.4f}, \"simulated_accesses\": %lld}\n",
	        r->t_model, r->t_sim, r->t_probe, r->t_run, r->t_plot, r->t_total, (long long)r->sim_used);
}

static FILE *csv_open(const report *r, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", r->o.csv_dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
	return f;
}

static int csv_close(FILE *f)
{
	return f && fclose(f) == 0;
}

/* The CSV files of --csv DIR; 0 when one cannot be written. */
int write_csv(const report *r)
{
	int nl = r->pr.nlevels, ok = 1;
	if (mkdir(r->o.csv_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: error: cannot create the folder: %s\n", r->o.csv_dir, strerror(errno));
		return 0;
	}
	FILE *f = csv_open(r, "levels.csv");
	if (f) {
		fprintf(f, "level,size,line,ways,misses,exact,source\n");
		for (int l = 0; l < nl; l++)
			fprintf(f, "L%d,%lld,%lld,%lld,%lld,%d,%s\n", l + 1, (long long)r->pr.level[l].size,
			        (long long)r->pr.level[l].line, (long long)r->pr.level[l].ways,
			        (long long)r->pr.level[l].misses, r->pr.level[l].exact, count_source_name(r->pr.source[l]));
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "per_ref.csv")) != NULL) {
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
	ok &= csv_close(f);
	if ((f = csv_open(r, "phases.csv")) != NULL) {
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
	ok &= csv_close(f);
	if ((f = csv_open(r, "heatmap.csv")) != NULL) {
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
	ok &= csv_close(f);
	if ((f = csv_open(r, "roofline.csv")) != NULL) {
		const roof *rf = &r->rf;
		fprintf(f, "what,level,intensity_flop_per_byte,gflops\n");
		fprintf(f, "peak_core,,,%.6g\npeak_all,,,%.6g\ncopy_gbs_core,,,%.6g\ncopy_gbs_all,,,%.6g\n", rf->peak_core,
		        rf->peak_all, rf->bw_core, rf->bw_all);
		for (int l = 0; l < nl; l++)
			fprintf(f, "kernel,L%d,%.6g,%.6g\n", l + 1, rf->oi[l], rf->ran ? rf->gflops : 0.0);
	}
	ok &= csv_close(f);
	if ((f = csv_open(r, "tuning.csv")) != NULL) {
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
	ok &= csv_close(f);
	return ok;
}
