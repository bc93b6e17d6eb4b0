/* bench_distributed.c: cachet's side of make bench-distributed (an MPI driver of a distributed kernel's global-array entry) and the table of every row. */
#include "dist_common.h"

#include <time.h>

/*
 * Usage:
 *   mpirun -np R bench_distributed stencil N REPS     built with -DDIST_KERNEL_STENCIL and the C
 *                                                     of `cachet emit dstencil5.cachet --target mpi`
 *   mpirun -np R bench_distributed summa M N K REPS   built with -DDIST_KERNEL_SUMMA and dsumma's C
 *   (-DDIST_GLOBAL_NO_PARAMS: the generated entry without the params argument; dist_proto.h)
 *   bench_distributed table ROWS                      (no MPI) the table of the ROW lines in ROWS
 *
 * The driver measures cachet's kernel as the peers measure themselves (same inputs, one untimed
 * call, then REPS calls; the stencil as a Jacobi iteration, A and B swapped), through the
 * generated entry for callers with global arrays: rank 0 holds the whole arrays, the entry
 * scatters, runs, gathers. The times in the row are the kernel's own figures for each call
 * (cachet_NAME_dist_stats: exchange and compute seconds of this rank), summed over the calls,
 * max over ranks; the scatter and gather are not in them (a NOTE line gives the whole call's
 * wall time and the bytes each rank sent and received per call).
 */

#if defined(DIST_KERNEL_STENCIL) || defined(DIST_KERNEL_SUMMA)
#define DIST_HAVE_KERNEL 1
#endif

#ifdef DIST_KERNEL_STENCIL
#define KNAME dstencil5
#endif
#ifdef DIST_KERNEL_SUMMA
#define KNAME dsumma
#endif

#ifdef DIST_HAVE_KERNEL
#include "dist_proto.h"
#define STR1(x) #x
#define STR(x) STR1(x)
#ifdef DIST_GLOBAL_NO_PARAMS
#define PARAMS_NOTE " (generated entry without params: sizes fixed at emit)"
#else
#define PARAMS_NOTE ""
#endif

/* What the NOTE line reports: one rank's whole-call wall time and bytes, summed over the timed calls. */
typedef struct {
	double wall;
	int64_t sent, received;
} cachet_sums;

/* One call of the kernel on the global arrays; its kernel figures into t, the rest added to s. Aborts the job when the
 * entry fails (so mpirun ends, never hangs). */
static void cachet_call(const int64_t *params, void *const *global, dist_times *t, cachet_sums *s)
{
	double t0 = MPI_Wtime();
#ifdef DIST_GLOBAL_NO_PARAMS
	(void)params; /* the sizes were fixed when the kernel was emitted */
	int rc = DIST_GLOBAL(MPI_COMM_WORLD, 0, global);
#else
	int rc = DIST_GLOBAL(MPI_COMM_WORLD, 0, params, global);
#endif
	double t1 = MPI_Wtime();
	if (rc != 0) {
		fprintf(stderr, "bench_distributed: cachet_%s_dist_global returned %d\n", STR(KNAME), rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	double ex = 0, co = 0;
	int64_t sent = 0, recv = 0;
	DIST_STATS(&ex, &co, &sent, &recv);
	t->exch = ex;
	t->comp = co;
	t->total = ex + co;
	t->recv = (double)recv;
	s->wall += t1 - t0;
	s->sent += sent;
	s->received += recv;
}

/* The NOTE line under the table: the whole call's wall time (with scatter and gather) and the
 * bytes per call, max over ranks. Collective. */
static void cachet_note(const char *kernel, const char *size, const cachet_sums *s, int calls)
{
	double w = s->wall / calls, wmax = 0;
	int64_t b[2] = {s->sent / calls, s->received / calls}, bmax[2] = {0, 0};
	MPI_Reduce(&w, &wmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(b, bmax, 2, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	int rank, ranks;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (rank == 0)
		printf("NOTE cachet %s %d ranks %s: whole call with scatter and gather %.3f ms; per rank and call "
		       "at most %lld bytes sent, %lld received%s\n",
		       kernel, ranks, size, wmax * 1e3, (long long)bmax[0], (long long)bmax[1], PARAMS_NOTE);
}

/* The grid MPI_Dims_create picks for the job's ranks: the grid= of the emitted kernel. */
static void job_dims(int *dims)
{
	int ranks;
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	dims[0] = dims[1] = 0;
	MPI_Dims_create(ranks, 2, dims);
}
#endif

#ifdef DIST_KERNEL_STENCIL
static int run_kernel(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench_distributed stencil N REPS\n");
		return 2;
	}
	int64_t n = atoll(argv[2]);
	int reps = atoi(argv[3]), rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	real *a = NULL, *b = NULL;
	if (rank == 0) {
		a = malloc(sizeof(real) * (size_t)(n * n));
		b = malloc(sizeof(real) * (size_t)(n * n));
		if (!a || !b)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++)
				a[i * n + j] = (real)stencil_input(i, j);
	}
	int64_t params[2] = {n, n};
	cachet_sums warm = {0, 0, 0}, s = {0, 0, 0};
	dist_times *t = calloc((size_t)reps + 1, sizeof *t); /* t[0]: the untimed call */
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r <= reps; r++) {
		void *global[2] = {a, b};
		cachet_call(params, rank == 0 ? global : (void *const[2]){NULL, NULL}, &t[r], r == 0 ? &warm : &s);
		real *swap = a;
		a = b;
		b = swap;
	}
	double err = 0;
	if (rank == 0) {
		real *ref = stencil_reference(n, reps + 1);
		err = ref ? rel_err_real(a, ref, n * n) : INFINITY;
		free(ref);
	}
	char size[32];
	snprintf(size, sizeof size, "%lldx%lld", (long long)n, (long long)n);
	int dims[2];
	job_dims(dims);
	dist_report(MPI_COMM_WORLD, "cachet", "stencil5", dims, 2, size, t + 1, reps, err, DIST_TOL_F32);
	free(t);
	cachet_note("stencil5", size, &s, reps);
	free(a);
	free(b);
	return 0;
}
#endif

#ifdef DIST_KERNEL_SUMMA
static int run_kernel(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: bench_distributed summa M N K REPS\n");
		return 2;
	}
	int64_t m = atoll(argv[2]), n = atoll(argv[3]), k = atoll(argv[4]);
	int reps = atoi(argv[5]), rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	float *a = NULL, *b = NULL, *c = NULL;
	if (rank == 0) {
		a = malloc(sizeof(float) * (size_t)(m * k));
		b = malloc(sizeof(float) * (size_t)(k * n));
		c = malloc(sizeof(float) * (size_t)(m * n));
		if (!a || !b || !c)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int64_t i = 0; i < m; i++)
			for (int64_t p = 0; p < k; p++)
				a[i * k + p] = (float)gemm_a(i, p);
		for (int64_t p = 0; p < k; p++)
			for (int64_t j = 0; j < n; j++)
				b[p * n + j] = (float)gemm_b(p, j);
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				c[i * n + j] = (float)gemm_c0(i, j);
	}
	int64_t params[3] = {m, n, k};
	void *global[3] = {a, b, c}, *none[3] = {NULL, NULL, NULL};
	cachet_sums warm = {0, 0, 0}, s = {0, 0, 0};
	dist_times *t = calloc((size_t)reps + 1, sizeof *t); /* t[0]: the untimed call */
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r <= reps; r++)
		cachet_call(params, rank == 0 ? global : none, &t[r], r == 0 ? &warm : &s);
	double err = 0;
	if (rank == 0) {
		double *ref = gemm_reference(m, n, k);
		if (ref) {
			for (int64_t i = 0; i < m; i++)
				for (int64_t j = 0; j < n; j++) {
					double c0 = gemm_c0(i, j);
					ref[i * n + j] = c0 + (reps + 1) * (ref[i * n + j] - c0);
				}
			err = rel_err_f32(c, ref, m * n);
		} else
			err = INFINITY;
		free(ref);
	}
	char size[64];
	snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
	int dims[2];
	job_dims(dims);
	dist_report(MPI_COMM_WORLD, "cachet", "summa", dims, 2, size, t + 1, reps, err, DIST_TOL_F32);
	free(t);
	cachet_note("summa", size, &s, reps);
	free(a);
	free(b);
	free(c);
	return 0;
}
#endif

/* One ROW line of the peers and the driver. */
typedef struct {
	char impl[32], kernel[32], grid[32], size[64], ok[8];
	int ranks;
	double exch, comp, total, recv, err;
} row;

/* The hand-written peer the ratio of impl is taken against: the plain loop of the same kernel
 * and element type (the f64 stencil of PETSc against the f64 build of peer_stencil.c). */
static const char *primary_peer(const char *kernel, const char *impl)
{
	if (strcmp(kernel, "summa") == 0)
		return "peer-ikj";
	return strstr(impl, "f64") ? "peer-f64" : "peer-f32";
}

/* The primary peer's row of r's kernel, ranks and size, or NULL. */
static const row *find_primary(const row *rows, int n, const row *r)
{
	for (int i = 0; i < n; i++)
		if (strcmp(rows[i].impl, primary_peer(r->kernel, r->impl)) == 0 && strcmp(rows[i].kernel, r->kernel) == 0 &&
		    rows[i].ranks == r->ranks && strcmp(rows[i].size, r->size) == 0)
			return &rows[i];
	return NULL;
}

/* Prints the table of the ROW lines of path (other lines: NOTE lines after the table, the rest
 * ignored); 1 when a row failed its verification or none was found. */
static int print_table(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	row rows[256];
	char notes[32][512], line[1024];
	int n = 0, nn = 0, bad = 0;
	while (fgets(line, sizeof line, f)) {
		row *r = &rows[n];
		if (n < 256 && sscanf(line, "ROW %31s %31s %d %31s %63s %lf %lf %lf %lf %lf %7s", r->impl, r->kernel, &r->ranks,
		                      r->grid, r->size, &r->exch, &r->comp, &r->total, &r->recv, &r->err, r->ok) == 11) {
			bad |= strcmp(r->ok, "ok") != 0;
			n++;
		} else if (nn < 32 && strncmp(line, "NOTE ", 5) == 0) {
			snprintf(notes[nn], sizeof notes[nn], "%.500s", line + 5);
			nn++;
		}
	}
	fclose(f);
	printf("%-9s %-14s %5s %4s %-14s %10s %10s %10s %7s %9s %9s %4s\n", "kernel", "impl", "ranks", "grid", "size",
	       "exch ms", "comp ms", "total ms", "ratio", "recv KiB", "err", "");
	for (int i = 0; i < n; i++) {
		const row *r = &rows[i], *p = find_primary(rows, n, r);
		char ratio[16] = "";
		if (p && p != r && p->total > 0 && r->total > 0)
			snprintf(ratio, sizeof ratio, "%.3g", r->total / p->total);
		printf("%-9s %-14s %5d %4s %-14s %10.3f %10.3f %10.3f %7s %9.1f %9.2e %4s\n", r->kernel, r->impl, r->ranks,
		       r->grid, r->size, r->exch, r->comp, r->total, ratio, r->recv / 1024, r->err, r->ok);
	}
	for (int i = 0; i < nn; i++)
		printf("%s", notes[i]);
	return bad || n == 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "table") == 0)
		return print_table(argv[2]);
#ifdef DIST_HAVE_KERNEL
	MPI_Init(&argc, &argv);
	int rc = run_kernel(argc, argv);
	MPI_Finalize();
	return rc;
#else
	fprintf(stderr, "usage: bench_distributed table ROWS (built without a distributed kernel: "
	                "-DDIST_KERNEL_STENCIL or -DDIST_KERNEL_SUMMA and the kernel's emitted C)\n");
	return 2;
#endif
}
