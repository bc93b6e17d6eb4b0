/* report_plot.c: `cachet report`'s plots: data files and one gnuplot script (svg terminal), the SVGs inlined. */
#include "report_int.h"

/* ------------------------------------------------------------ plots (gnuplot's svg terminal) */

static const char *const level_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

static FILE *plot_data(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return fopen(path, "w");
}

/* Register plot id (its SVG file is DIR/ID.svg) with a caption; its index. */
static int add_plot(report *r, const char *id, const char *caption)
{
	if (r->nplots >= MAX_PLOTS)
		return -1;
	snprintf(r->plot_id[r->nplots], sizeof r->plot_id[0], "%s", id);
	snprintf(r->plot_caption[r->nplots], sizeof r->plot_caption[0], "%s", caption);
	return r->nplots++;
}

static void gp_level_name(const report *r, int l, char *buf, size_t cap)
{
	int64_t sz = r->pr.level[l].size;
	if (sz % (1024 * 1024) == 0)
		snprintf(buf, cap, "L%d (%lld MiB)", l + 1, (long long)(sz >> 20));
	else if (sz % 1024 == 0)
		snprintf(buf, cap, "L%d (%lld KiB)", l + 1, (long long)(sz >> 10));
	else
		snprintf(buf, cap, "L%d (%lld B)", l + 1, (long long)sz);
}

/* One tile param's sweep: data file and script lines. */
static void gp_phase(report *r, FILE *g, const char *dir, int i)
{
	const phase *ph = &r->ph[i];
	int nl = r->pr.nlevels, any_model = 0;
	/* per level: some point > 0 (gnuplot refuses a series of log-scale points all undefined,
	 * which a level with no misses is, or a sweep cut short by the deadline to one point) */
	int lev_model[L] = {0}, lev_sim[L] = {0};
	char name[64], id[80], cap[256];
	snprintf(name, sizeof name, "phase%d.dat", i);
	FILE *d = plot_data(dir, name);
	if (!d)
		return;
	for (int j = 0; j < ph->n; j++) {
		const point *p = &ph->pts[j];
		if (!p->ok)
			continue;
		fprintf(d, "%lld", (long long)p->tile);
		for (int l = 0; l < nl; l++) {
			fprintf(d, " %lld", (long long)p->model[l]);
			lev_model[l] |= p->model[l] > 0;
		}
		for (int l = 0; l < nl; l++) {
			if (p->simulated)
				fprintf(d, " %lld", (long long)p->sim[l]);
			else
				fputs(" ?", d);
			lev_sim[l] |= p->simulated && p->sim[l] > 0;
		}
		fputc('\n', d);
	}
	fclose(d);
	for (int l = 0; l < nl; l++)
		any_model |= lev_model[l];
	if (!any_model)
		return;
	snprintf(id, sizeof id, "phase-%s", ph->param);
	snprintf(cap, sizeof cap,
	         "Misses per level against the tile size %s (index %s), the other tiles as written; lines: the model, "
	         "circles: the exact simulator; dashed: the file's value %lld",
	         ph->param, ph->index, (long long)ph->value);
	add_plot(r, id, cap);
	fprintf(g, "set output '%s/%s.svg'\n", dir, id);
	fprintf(g, "set title 'misses against tile size %s (index %s)'\nset xlabel '%s'\nset ylabel 'misses'\n",
	        ph->param, ph->index, ph->param);
	/* the file's value may lie past the loop's extent (NC 512 over 256 columns): its point, the
	 * only one when the model's deadline came first, must be in the range */
	fprintf(g, "set logscale x 2\nset logscale y 10\nset xrange [0.8:%g]\nset key outside right top\n",
	        (double)(ph->value > ph->extent ? ph->value : ph->extent) * 1.25);
	fprintf(g, "set arrow 1 from %lld, graph 0 to %lld, graph 1 nohead dt 2 lc rgb '#888888'\n",
	        (long long)ph->value, (long long)ph->value);
	fprintf(g, "plot ");
	int first = 1;
	for (int l = 0; l < nl; l++) {
		char lv[64];
		gp_level_name(r, l, lv, sizeof lv);
		if (lev_model[l]) {
			fprintf(g, "%s'%s/%s' using 1:($%d>0?$%d:NaN) with linespoints lw 2 pt 7 ps 0.6 lc rgb '%s' title '%s model'",
			        first ? "" : ", ", dir, name, 2 + l, 2 + l, level_colors[l % 8], lv);
			first = 0;
		}
		if (lev_sim[l]) {
			fprintf(g, "%s'%s/%s' using 1:($%d>0?$%d:NaN) with points pt 6 ps 1.6 lw 1.5 lc rgb '%s' title '%s simulated'",
			        first ? "" : ", ", dir, name, 2 + nl + l, 2 + nl + l, level_colors[l % 8], lv);
			first = 0;
		}
	}
	fprintf(g, "\nunset arrow 1\nunset logscale\nset autoscale\n");
}

static void gp_heat(report *r, FILE *g, const char *dir)
{
	const heat *h = &r->hm;
	if (!h->on)
		return;
	FILE *d = plot_data(dir, "heat.dat"), *pk = plot_data(dir, "picks.dat");
	int64_t lo = -1, hi = -1;
	for (int y = 0; d && y < h->ny; y++) {
		for (int x = 0; x < h->nx; x++) {
			int64_t v = h->cell[y * h->nx + x];
			if (v >= 0) {
				fprintf(d, "%d %d %lld\n", x, y, (long long)v);
				lo = lo < 0 || v < lo ? v : lo;
				hi = v > hi ? v : hi;
			} else {
				fprintf(d, "%d %d NaN\n", x, y);
			}
		}
		fputc('\n', d);
	}
	for (int c = 0; pk && c < h->npicks; c++)
		fprintf(pk, "%d %d %d\n", h->xi[c], h->yi[c], h->rank[c]);
	if (d)
		fclose(d);
	if (pk)
		fclose(pk);
	if (!d || !pk || hi < 0)
		return;
	char cap[256];
	snprintf(cap, sizeof cap,
	         "L%d misses (the tile search's ranking level) over %s x %s, %s; red dots: the tile search's picks, "
	         "numbered by rank",
	         h->level + 1, r->ph[h->px].param, r->ph[h->py].param, h->fixed[0] ? h->fixed : "no other tile params");
	add_plot(r, "heatmap", cap);
	fprintf(g, "set output '%s/heatmap.svg'\n", dir);
	fprintf(g, "set title 'L%d misses over %s x %s'\nset xlabel '%s'\nset ylabel '%s'\n", h->level + 1,
	        r->ph[h->px].param, r->ph[h->py].param, r->ph[h->px].param, r->ph[h->py].param);
	fprintf(g, "set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n", h->nx - 0.5, h->ny - 0.5);
	for (int a = 0; a < 2; a++) {
		fprintf(g, "set %ctics (", a ? 'y' : 'x');
		int n = a ? h->ny : h->nx;
		for (int i = 0; i < n; i++)
			fprintf(g, "%s'%lld' %d", i ? ", " : "", (long long)(a ? h->yv[i] : h->xv[i]), i);
		fprintf(g, ")\n");
	}
	fprintf(g, "set palette defined (0 '#30123b', 0.25 '#4686fb', 0.5 '#1ae4b6', 0.75 '#faba39', 1 '#7a0403')\n");
	fprintf(g, "set cblabel 'misses'\n%s\nset key outside right bottom\n", lo > 0 && hi > 4 * lo ? "set logscale cb" : "");
	fprintf(g, "plot '%s/heat.dat' using 1:2:3 with image pixels notitle, '%s/picks.dat' using 1:2 with points pt 7 "
	           "ps 1.8 lc rgb '#ff0000' title 'tiles picks', '' using 1:2:3 with labels offset 0.9,0.9 tc rgb '#ffffff' notitle\n",
	        dir, dir);
	fprintf(g, "unset logscale\nset xtics autofreq\nset ytics autofreq\nset autoscale\nset key default\n");
}

static void gp_roofline(report *r, FILE *g, const char *dir)
{
	const roof *f = &r->rf;
	int nl = r->pr.nlevels, any = 0;
	FILE *d = plot_data(dir, "roof.dat");
	if (!d)
		return;
	double bw = f->bw_all > 0 ? f->bw_all : f->bw_core, peak = f->peak_all > 0 ? f->peak_all : f->peak_core;
	double lo_x = 1e300, hi_x = 0;
	for (int l = 0; l < nl; l++) {
		if (f->oi[l] <= 0 || (l > 0 && f->oi[l] == f->oi[l - 1]))
			continue; /* levels with the same traffic share a point, labelled L2-L3 */
		double y = f->ran ? f->gflops : (f->measured ? fmin(peak, bw * f->oi[l]) : 0);
		if (y <= 0)
			continue;
		int last = l;
		while (last + 1 < nl && f->oi[last + 1] == f->oi[l])
			last++;
		if (last > l)
			fprintf(d, "%.6g %.6g L%d-L%d\n", f->oi[l], y, l + 1, last + 1);
		else
			fprintf(d, "%.6g %.6g L%d\n", f->oi[l], y, l + 1);
		lo_x = fmin(lo_x, f->oi[l]);
		hi_x = fmax(hi_x, f->oi[l]);
		any = 1;
	}
	fclose(d);
	if (!f->measured && !any)
		return;
	char cap[512];
	snprintf(cap, sizeof cap,
	         "Roofline (%s): the probe's measured FMA peak and copy bandwidth; points: the kernel's flops per byte "
	         "moved out of each level (the model's misses x line), at %s",
	         f->dtype, f->ran ? "its measured speed" : "the bound (not run)");
	add_plot(r, "roofline", cap);
	double xmin = fmin(lo_x / 4, 1.0 / 16), xmax = fmax(hi_x * 4, 256);
	fprintf(g, "set output '%s/roofline.svg'\nset title 'roofline (%s)'\n", dir, f->dtype);
	fprintf(g, "set xlabel 'operational intensity (flop/byte)'\nset ylabel 'GFLOP/s'\nset logscale xy\n");
	fprintf(g, "set xrange [%g:%g]\nset key outside right top\nset samples 400\n", xmin, xmax);
	if (f->measured)
		fprintf(g, "set yrange [%g:%g]\n", fmin(0.05, f->bw_core * xmin / 2), peak * 2.5);
	fprintf(g, "roof(x,p,b) = (b*x < p ? b*x : p)\nplot ");
	const char *sep = "";
	if (f->measured) {
		fprintf(g, "roof(x,%g,%g) lw 2 lc rgb '#1f77b4' title '1 core: %.1f GFLOP/s, %.1f GB/s'", f->peak_core,
		        f->bw_core, f->peak_core, f->bw_core);
		sep = ", ";
		if (f->peak_all > 0 && f->bw_all > 0 && f->threads_all > 1)
			fprintf(g, ", roof(x,%g,%g) lw 2 dt 2 lc rgb '#2ca02c' title '%d threads: %.1f GFLOP/s, %.1f GB/s'",
			        f->peak_all, f->bw_all, f->threads_all, f->peak_all, f->bw_all);
	}
	if (any)
		fprintf(g, "%s'%s/roof.dat' using 1:2 with points pt %d ps 1.6 lc rgb '#d62728' title 'kernel %s', "
		           "'' using 1:2:3 with labels offset 1.5,0.8 notitle",
		        sep, dir, f->ran ? 7 : 6, f->ran ? "(measured)" : "(bound, not run)");
	fprintf(g, "\nunset logscale\nset autoscale\n");
}

static void gp_tuning(report *r, FILE *g, const char *dir)
{
	if (r->ntp == 0)
		return;
	FILE *d = plot_data(dir, "tune.dat");
	if (!d)
		return;
	int any = 0;
	double top = 0;
	for (int i = 0; i < r->ntp; i++)
		if (r->tp[i].ok && r->tp[i].gflops > 0) {
			fprintf(d, "%d %.6g\n", r->tp[i].rank, r->tp[i].gflops);
			top = fmax(top, r->tp[i].gflops);
			any = 1;
		}
	fclose(d);
	if (!any)
		return;
	char cap[256];
	snprintf(cap, sizeof cap,
	         "The tuner's measured points (the tuning store) against the model's ranking (fewest predicted misses "
	         "first); Kendall's tau of rank and time: %.2f",
	         r->tau);
	add_plot(r, "tuning", cap);
	fprintf(g, "set output '%s/tuning.svg'\nset title 'tuner: measured speed against model rank'\n", dir);
	fprintf(g, "set xlabel 'model rank (1 = fewest predicted misses)'\nset ylabel 'measured GFLOP/s'\n");
	fprintf(g, "set key outside right top\nset xrange [0:%d]\nset yrange [0:%g]\n", r->ntp + 1, top * 1.15);
	fprintf(g, "plot '%s/tune.dat' using 1:2 with points pt 7 ps 1.2 lc rgb '#1f77b4' title 'measured points'\n", dir);
	fprintf(g, "set autoscale\n");
}

/* Run gnuplot on script; 0 on success, else a note in r->plot_note. */
static int run_gnuplot(report *r, const char *dir, const char *script)
{
	char log[4096];
	snprintf(log, sizeof log, "%s/gnuplot.log", dir);
	/* gnuplot runs in a process group of its own, which a signal kills whole (cachet.c) */
	pid_t pid = fork();
	if (pid > 0) {
		setpgid(pid, pid);
		tool_child = (sig_atomic_t)pid;
	}
	if (pid < 0) {
		snprintf(r->plot_note, sizeof r->plot_note, "cannot start gnuplot: %s", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		setpgid(0, 0);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	tool_child = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(r->plot_note, sizeof r->plot_note, "gnuplot is not installed (Debian package gnuplot-nox; make deps)");
		return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *msg = read_path(log, SIZE_MAX, NULL);
		snprintf(r->plot_note, sizeof r->plot_note, "gnuplot failed: %.400s", msg ? msg : "");
		free(msg);
		return 0;
	}
	return 1;
}

/* gnuplot's SVG made to sit inside the page: from <svg on, its ids prefixed
 * with the plot's number so that the page's ids stay unique. */
static char *inline_svg(const char *text, int n)
{
	const char *s = strstr(text, "<svg");
	if (!s)
		return NULL;
	static const char *const ids[] = {"gpPt", "gpDot", "gnuplot_", "gpImage", "greybox", "textbox"};
	size_t cap = strlen(s) * 2 + 64, len = 0;
	char *out = malloc(cap), prefix[16];
	snprintf(prefix, sizeof prefix, "p%d", n);
	while (out && *s) {
		size_t k, hit = 0;
		for (k = 0; k < sizeof ids / sizeof ids[0]; k++)
			if (strncmp(s, ids[k], strlen(ids[k])) == 0)
				hit = 1;
		if (hit && len + strlen(prefix) + 1 < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s", prefix);
		if (len + 2 >= cap)
			break;
		out[len++] = *s++;
	}
	if (out)
		out[len] = 0;
	return out;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Every plot: data files and one gnuplot script in a private temp folder,
 * one gnuplot run, the SVGs read back; 0 when gnuplot failed. */
int make_plots(report *r)
{
	double t0 = now_s();
	const char *tmp = getenv("TMPDIR");
	char dir[4096], script[4200];
	snprintf(dir, sizeof dir, "%s/cachet-report-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(r->plot_note, sizeof r->plot_note, "cannot make a temporary folder: %s", strerror(errno));
		return 0;
	}
	int slot = temp_track(dir); /* a signal removes it (cachet.c) */
	snprintf(script, sizeof script, "%s/plots.gp", dir);
	FILE *g = fopen(script, "w");
	if (!g) {
		remove_dir(dir);
		temp_untrack(slot);
		return 0;
	}
	fprintf(g, "set terminal svg size 760,420 noenhanced font 'sans,12' background '#ffffff'\n");
	fprintf(g, "set datafile missing '?'\nset grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n");
	for (int i = 0; i < r->nphases; i++)
		gp_phase(r, g, dir, i);
	gp_heat(r, g, dir);
	gp_roofline(r, g, dir);
	gp_tuning(r, g, dir);
	fclose(g);
	int ok = r->nplots == 0 || run_gnuplot(r, dir, script);
	for (int i = 0; ok && i < r->nplots; i++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%s.svg", dir, r->plot_id[i]);
		char *text = read_path(path, SIZE_MAX, NULL);
		r->svg[i] = text ? inline_svg(text, i) : NULL;
		free(text);
	}
	remove_dir(dir);
	temp_untrack(slot);
	r->t_plot = now_s() - t0;
	return ok;
}
