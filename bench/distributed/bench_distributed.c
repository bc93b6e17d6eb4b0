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
 * call, then REPS calls; the stencil as a Jacobi iteration), through the generated entry for
 * callers whose data is distributed already: each rank holds its boxes
 * (cachet_NAME_dist_local_box), filled from the global indices, and calls cachet_NAME_dist. The
 * times in the row are the kernel's own figures for each call (cachet_NAME_dist_stats: exchange
 * and compute seconds of this rank), max over ranks (a NOTE line gives the whole call's wall
 * time and the bytes each rank sent and received per call).
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

/* The NOTE line under the table: the whole call's wall time (with scatter and gather) and the
 * bytes per call, max over ranks. Collective. */
static void cachet_note(const char *kernel, const char *size, const cachet_sums *s, int calls, const char *what)
{
	double w = s->wall / calls, wmax = 0;
	int64_t b[2] = {s->sent / calls, s->received / calls}, bmax[2] = {0, 0};
	MPI_Reduce(&w, &wmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(b, bmax, 2, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	int rank, ranks;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (rank == 0)
		printf("NOTE cachet %s %d ranks %s: whole call (%s) %.3f ms; per rank and call "
		       "at most %lld bytes sent, %lld received%s\n",
		       kernel, ranks, size, what, wmax * 1e3, (long long)bmax[0], (long long)bmax[1], PARAMS_NOTE);
}

/* The box of array a on this rank (lo .. hi-1, 2-D), allocated zeroed with esize-byte elements
 * (dense, row-major: the kernels' arrays are). */
static void *local_box(int a, size_t esize, int64_t *lo, int64_t *hi)
{
	if (DIST_LOCAL_BOX(MPI_COMM_WORLD, a, lo, hi) != 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	int64_t n = (hi[0] - lo[0]) * (hi[1] - lo[1]);
	void *p = calloc((size_t)(n > 0 ? n : 1), esize);
	if (!p)
		MPI_Abort(MPI_COMM_WORLD, 1);
	return p;
}

/* One call of cachet_NAME_dist on the local boxes; its figures into t, the whole call into s
 * (when s). Aborts the job when the call fails (so mpirun ends, never hangs). */
static void local_call(void *const *local, dist_times *t, cachet_sums *s)
{
	double t0 = MPI_Wtime();
	if (DIST_CALL(MPI_COMM_WORLD, local) != 0) {
		fprintf(stderr, "bench_distributed: cachet_%s_dist failed\n", STR(KNAME));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	double t1 = MPI_Wtime(), ex = 0, co = 0;
	int64_t sent = 0, recv = 0;
	DIST_STATS(&ex, &co, &sent, &recv);
	*t = (dist_times){ex, co, ex + co, (double)recv};
	if (s) {
		s->wall += t1 - t0;
		s->sent += sent;
		s->received += recv;
	}
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
/*
 * The stencil as the peers run it: each rank holds only its boxes (cachet_NAME_dist_local_box),
 * filled from the global indices, and calls cachet_NAME_dist, the entry for callers whose data
 * is distributed already: halo exchange, interior, boundary. Between calls (not timed) B's
 * block goes back into A's, the Jacobi step; the next call's exchange refreshes A's halo. No
 * rank 0 scatter or gather in the loop (through the global entry, the other ranks waited in
 * their exchange for rank 0's gather of the call before). Each rank checks its own block
 * against the serial reference.
 */
static int run_kernel(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench_distributed stencil N REPS\n");
		return 2;
	}
	int64_t n = atoll(argv[2]);
	int reps = atoi(argv[3]);
	int64_t alo[2], ahi[2], blo[2], bhi[2];
	real *a = local_box(0, sizeof(real), alo, ahi), *b = local_box(1, sizeof(real), blo, bhi);
	int64_t aw = ahi[1] - alo[1], bw = bhi[1] - blo[1];
	for (int64_t i = alo[0]; i < ahi[0]; i++)
		for (int64_t j = alo[1]; j < ahi[1]; j++)
			a[(i - alo[0]) * aw + j - alo[1]] = (real)stencil_input(i, j);
	cachet_sums s = {0, 0, 0};
	dist_times *t = calloc((size_t)reps + 1, sizeof *t); /* t[0]: the untimed call */
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r <= reps; r++) {
		local_call((void *const[2]){a, b}, &t[r], r > 0 ? &s : NULL);
		/* the Jacobi step: B's block (all of B's box) into A's box */
		for (int64_t i = blo[0]; i < bhi[0]; i++)
			memcpy(&a[(i - alo[0]) * aw + blo[1] - alo[1]], &b[(i - blo[0]) * bw], sizeof(real) * (size_t)bw);
	}
	/* every rank: its block of the serial result after reps + 1 calls */
	double err = 0, errmax = 0;
	real *ref = stencil_reference(n, reps + 1);
	if (!ref)
		err = INFINITY;
	double scale = 0;
	for (int64_t i = 0; ref && i < n * n; i++)
		scale = fabs((double)ref[i]) > scale ? fabs((double)ref[i]) : scale;
	for (int64_t i = blo[0]; ref && i < bhi[0]; i++)
		for (int64_t j = blo[1]; j < bhi[1]; j++) {
			double e = fabs((double)b[(i - blo[0]) * bw + j - blo[1]] - (double)ref[i * n + j]);
			err = e > err ? e : err;
		}
	err = scale > 0 ? err / scale : err;
	free(ref);
	MPI_Allreduce(&err, &errmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	char size[32];
	snprintf(size, sizeof size, "%lldx%lld", (long long)n, (long long)n);
	int dims[2];
	job_dims(dims);
	dist_report(MPI_COMM_WORLD, "cachet", "stencil5", dims, 2, size, t + 1, reps, errmax, DIST_TOL_F32);
	free(t);
	cachet_note("stencil5", size, &s, reps, "_dist on the local boxes");
	free(a);
	free(b);
	return 0;
}
#endif

#ifdef DIST_KERNEL_SUMMA
/* SUMMA on the local boxes (cachet_NAME_dist), as the peer runs: each rank fills its blocks of
 * A, B and C from the global indices and calls the entry REPS + 1 times (C accumulates); each
 * rank checks its block of C against the serial result. */
static int run_kernel(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: bench_distributed summa M N K REPS\n");
		return 2;
	}
	int64_t m = atoll(argv[2]), n = atoll(argv[3]), k = atoll(argv[4]);
	int reps = atoi(argv[5]);
	int64_t lo[3][2], hi[3][2];
	float *x[3];
	for (int i = 0; i < 3; i++)
		x[i] = local_box(i, sizeof(float), lo[i], hi[i]);
	for (int i = 0; i < 3; i++) {
		int64_t w = hi[i][1] - lo[i][1];
		for (int64_t r = lo[i][0]; r < hi[i][0]; r++)
			for (int64_t c = lo[i][1]; c < hi[i][1]; c++)
				x[i][(r - lo[i][0]) * w + c - lo[i][1]] =
				    (float)(i == 0 ? gemm_a(r, c) : i == 1 ? gemm_b(r, c) : gemm_c0(r, c));
	}
	cachet_sums s = {0, 0, 0};
	dist_times *t = calloc((size_t)reps + 1, sizeof *t); /* t[0]: the untimed call */
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r <= reps; r++)
		local_call((void *const[3]){x[0], x[1], x[2]}, &t[r], r > 0 ? &s : NULL);
	double err = 0, errmax = 0, scale = 0;
	double *ref = gemm_reference(m, n, k);
	if (!ref)
		err = INFINITY;
	for (int64_t i = 0; ref && i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double c0 = gemm_c0(i, j), v = c0 + (reps + 1) * (ref[i * n + j] - c0);
			ref[i * n + j] = v;
			scale = fabs(v) > scale ? fabs(v) : scale;
		}
	int64_t w = hi[2][1] - lo[2][1];
	for (int64_t i = lo[2][0]; ref && i < hi[2][0]; i++)
		for (int64_t j = lo[2][1]; j < hi[2][1]; j++) {
			double e = fabs((double)x[2][(i - lo[2][0]) * w + j - lo[2][1]] - ref[i * n + j]);
			err = e > err ? e : err;
		}
	err = scale > 0 ? err / scale : err;
	free(ref);
	MPI_Allreduce(&err, &errmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	char size[64];
	snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
	int dims[2];
	job_dims(dims);
	dist_report(MPI_COMM_WORLD, "cachet", "summa", dims, 2, size, t + 1, reps, errmax, DIST_TOL_F32);
	free(t);
	cachet_note("summa", size, &s, reps, "_dist on the local boxes");
	for (int i = 0; i < 3; i++)
		free(x[i]);
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
