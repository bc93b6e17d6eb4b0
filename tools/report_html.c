/* report_html.c: `cachet report -o FILE`: the self-contained HTML page (tables, inlined plots, notes). */
#include "report_int.h"

/* ------------------------------------------------------------ the HTML page */

static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if ((unsigned char)*s >= 32 || *s == '\n' || *s == '\t')
			fputc(*s, f);
	}
}

static const char page_style[] =
	"body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}"
	"h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:28px}"
	"pre{background:#f6f6f6;padding:8px;border:1px solid #ddd;overflow:auto;font-size:12px}"
	"table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
	"th{background:#eee}td.l{text-align:left}.note{color:#555;font-size:13px}"
	"figure{margin:12px 0}figure svg{width:760px;height:420px;display:block}"
	"figcaption{font-size:13px;color:#444;max-width:760px}.cols{display:flex;gap:16px;flex-wrap:wrap}"
	".cols>div{flex:1;min-width:420px}";

static void html_levels(FILE *f, const report *r)
{
	fputs("<table><tr><th>level</th><th>bytes</th><th>line</th><th>ways</th><th>misses</th><th>% of accesses</th>"
	      "<th>exact</th><th>source</th></tr>\n",
	      f);
	for (int l = 0; l < r->pr.nlevels; l++)
		fprintf(f,
		        "<tr><td class=\"l\">L%d</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.2f%%</td>"
		        "<td>%s</td><td class=\"l\">%s</td></tr>\n",
		        l + 1, (long long)r->pr.level[l].size, (long long)r->pr.level[l].line, (long long)r->pr.level[l].ways,
		        (long long)r->pr.level[l].misses,
		        r->pr.accesses ? 100.0 * (double)r->pr.level[l].misses / (double)r->pr.accesses : 0.0,
		        r->pr.level[l].exact ? "yes" : "no", count_source_name(r->pr.source[l]));
	fprintf(f, "</table>\n<p class=\"note\">%lld accesses; model %.3f ms.</p>\n", (long long)r->pr.accesses,
	        r->pr.seconds * 1e3);
}

static void html_note(FILE *f, const char *note)
{
	fputs("<p class=\"note\">", f);
	html_text(f, note);
	fputs("</p>\n", f);
}

static void html_refs(FILE *f, const report *r)
{
	int nl = r->pr.nlevels, shared = 0;
	if (r->refs_note[0]) {
		fputs("<p class=\"note\" id=\"per-ref\">", f);
		html_text(f, r->refs_note);
		fputs("</p>\n", f);
		return;
	}
	fputs("<table id=\"per-ref\"><tr><th>reference</th><th>array</th><th>stmt</th><th>access</th><th>accesses</th>", f);
	for (int l = 0; l < nl; l++)
		fprintf(f, "<th>L%d misses</th><th>cold</th><th>capacity</th><th>reuse carried by</th>", l + 1);
	fputs("</tr>\n", f);
	for (int i = 0; i < r->rt.nrefs; i++) {
		const ct_ref_misses *m = &r->rt.refs[i];
		char where[512], carrier[128];
		shared |= m->split != CT_SPLIT_MODEL;
		fputs("<tr><td class=\"l\">", f);
		html_text(f, ref_where(report_file(r), m, where, sizeof where));
		fputs("</td><td class=\"l\">", f);
		html_text(f, m->array);
		fprintf(f, "</td><td>%d</td><td class=\"l\">%s%s</td><td>%lld</td>", m->stmt, ref_access(m),
		        m->split == CT_SPLIT_SIM ? " *" : m->split == CT_SPLIT_ACCESSES ? " **" : "", (long long)m->accesses);
		for (int l = 0; l < nl; l++) {
			fprintf(f, "<td>%lld</td><td>%lld</td><td>%lld</td><td class=\"l\">", (long long)m->misses[l],
			        (long long)m->cold[l], (long long)(m->misses[l] - m->cold[l]));
			html_text(f, carrier_text(m, l, carrier, sizeof carrier));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (shared)
		fputs("<p class=\"note\">The model counts per array; an array's counts are shared out over its references "
		      "by an exact simulation (*) or by accesses (**).</p>\n",
		      f);
}

static void html_plot(FILE *f, const report *r, const char *id_prefix)
{
	for (int i = 0; i < r->nplots; i++) {
		if (strncmp(r->plot_id[i], id_prefix, strlen(id_prefix)) != 0)
			continue;
		fprintf(f, "<figure class=\"plot\" id=\"plot-%s\">\n", r->plot_id[i]);
		if (r->svg[i])
			fputs(r->svg[i], f);
		else
			fputs("<p class=\"note\">(no plot)</p>", f);
		fputs("\n<figcaption>", f);
		html_text(f, r->plot_caption[i]);
		fputs("</figcaption></figure>\n", f);
	}
}

static int has_plot(const report *r, const char *id_prefix)
{
	for (int i = 0; i < r->nplots; i++)
		if (strncmp(r->plot_id[i], id_prefix, strlen(id_prefix)) == 0)
			return 1;
	return 0;
}


static void html_tuning(FILE *f, const report *r)
{
	fputs("<h2 id=\"tuning\">Tuner's measured points</h2>\n", f);
	if (r->ntp == 0) {
		html_note(f, r->tune_note);
		return;
	}
	html_plot(f, r, "tuning");
	fputs("<table><tr><th>params</th><th>model rank</th><th>measured s</th><th>GFLOP/s</th><th>verified</th></tr>\n", f);
	for (int i = 0; i < r->ntp; i++) {
		const tpoint *p = &r->tp[i];
		fputs("<tr><td class=\"l\">", f);
		html_text(f, p->params);
		fprintf(f, "</td><td>%d</td><td>%.4g</td><td>%.3g</td><td>%d</td></tr>\n", p->rank, p->seconds, p->gflops,
		        p->verified);
	}
	fputs("</table>\n", f);
}

int write_html(const report *r)
{
	atomic_file out;
	FILE *f = atomic_open(&out, r->o.out);
	if (!f)
		return 0;
	const char *name = ct_kernel_name(r->k);
	fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<title>cachet report: ",
	      f);
	html_text(f, name);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>cachet report: ", page_style);
	html_text(f, name);
	fputs("</h1>\n<p class=\"note\">", f);
	html_text(f, r->o.file);
	fputs(" &#8212; params:", f);
	for (int i = 0; i < ct_kernel_param_count(r->k); i++) {
		fputc(' ', f);
		html_text(f, ct_kernel_param_name(r->k, i));
		fprintf(f, "=%lld", (long long)ct_kernel_param_value(r->k, i, NULL));
	}
	fprintf(f, ". Made in %.2f s (model %.2f s, simulator %.2f s, probe %.2f s, run %.2f s, plots %.2f s).</p>\n",
	        r->t_total, r->t_model, r->t_sim, r->t_probe, r->t_run, r->t_plot);
	fputs("<h2 id=\"kernel\">Kernel and its lowered loop tree</h2>\n<div class=\"cols\"><div><pre id=\"source\">", f);
	html_text(f, r->src);
	fputs("</pre></div><div><pre id=\"looptree\">", f);
	html_text(f, r->tree ? r->tree : "(the kernel could not be lowered)");
	fputs("</pre></div></div>\n<h2 id=\"levels\">Misses per level</h2>\n", f);
	html_levels(f, r);
	fputs("<h2 id=\"references\">Misses per reference</h2>\n", f);
	html_refs(f, r);
	fputs("<h2 id=\"phases\">Misses against tile sizes</h2>\n", f);
	if (r->plot_note[0])
		html_note(f, r->plot_note);
	if (has_plot(r, "phase-"))
		html_plot(f, r, "phase-");
	else
		html_note(f, r->have_tiles ? "no tile size could be counted" : r->tiles_note);
	fputs("<h2 id=\"heat\">Misses over two tile sizes</h2>\n", f);
	if (has_plot(r, "heatmap"))
		html_plot(f, r, "heatmap");
	else
		html_note(f, r->have_tiles ? "fewer than two tile params: no heat map" : r->tiles_note);
	fputs("<h2 id=\"roof\">Roofline</h2>\n", f);
	if (has_plot(r, "roofline"))
		html_plot(f, r, "roofline");
	else
		html_note(f, "no roofline: the probe measured no peak and the kernel's flops are unknown");
	html_note(f, r->rf.note);
	html_tuning(f, r);
	fputs("</body>\n</html>\n", f);
	return atomic_commit(&out);
}
