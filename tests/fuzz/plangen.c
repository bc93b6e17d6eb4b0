/* plangen.c: random kernels, schedules and plans for the differential fuzzer (tests/fuzz/difffuzz.c). */
#include "plangen.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ random numbers */

typedef struct rng {
	uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform integer in 0 .. n-1 (n >= 1). */
static int rint_(rng *r, int n)
{
	return n <= 1 ? 0 : (int)(rnext(r) % (uint64_t)n);
}

/* True with probability pct percent. */
static int chance(rng *r, int pct)
{
	return rint_(r, 100) < pct;
}

static int64_t pick64(rng *r, const int64_t *v, int n)
{
	return v[rint_(r, n)];
}

/* ------------------------------------------------------------------ the kernel's header */

static int add_param(pg_kernel *k, const char *name, int64_t v)
{
	pg_param *p = &k->p[k->np];
	snprintf(p->name, sizeof p->name, "%s", name);
	p->value = v;
	p->runtime = 0;
	return k->np++;
}

static int64_t param_value(const pg_kernel *k, const char *name)
{
	for (int i = 0; i < k->np; i++)
		if (strcmp(k->p[i].name, name) == 0)
			return k->p[i].value;
	return 1;
}

static int add_array(pg_kernel *k, const char *name, int role, int rank, const char *e0, const char *e1,
		     const char *e2)
{
	pg_array *a = &k->a[k->na];
	memset(a, 0, sizeof *a);
	snprintf(a->name, sizeof a->name, "%s", name);
	a->role = role;
	a->rank = rank;
	a->dtype = k->dtype;
	const char *e[3] = {e0, e1, e2};
	for (int d = 0; d < rank; d++)
		snprintf(a->ext[d], sizeof a->ext[d], "%s", e[d]);
	return k->na++;
}

/* Record one use path (list of bands) of array ai. */
static void use(pg_kernel *k, int ai, int n, ...)
{
	pg_array *a = &k->a[ai];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		a->path[a->npaths][i] = va_arg(ap, int);
	va_end(ap);
	a->pathlen[a->npaths++] = n;
}

static int affine_shape(const pg_kernel *k);
static int syrk_unclamped(const pg_kernel *k);
static void kill_split(pg_kernel *k, int s);
static void kill_cache(pg_kernel *k, int c);

static int add_band(pg_kernel *k, int n, const char *i0, const char *e0, const char *i1, const char *e1,
		    const char *i2, const char *e2)
{
	pg_band *b = &k->b[k->nb];
	memset(b, 0, sizeof *b);
	b->norig = n;
	const char *is[3] = {i0, i1, i2}, *es[3] = {e0, e1, e2};
	for (int d = 0; d < n; d++) {
		snprintf(b->orig[d], sizeof b->orig[d], "%s", is[d]);
		b->trips[d] = param_value(k, es[d]);
	}
	return k->nb++;
}

/* Small sizes, primes and edge values; stencils get smaller ones (3-D boxes grow fast). */
static int64_t pick_extent(rng *r, int small)
{
	static const int64_t v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 19, 23, 24, 31, 32, 37};
	static const int64_t s[] = {1, 2, 3, 4, 5, 6, 7, 8};
	return small ? pick64(r, s, 8) : pick64(r, v, small ? 8 : (chance(r, 70) ? 13 : 20));
}

static int pick_input_role(rng *r)
{
	return chance(r, 20) ? 4 /* const */ : 0 /* input */;
}

/* Whether a matrix-vector kernel of the extended families (half of them, variant bit 0) has a
 * second pass over its matrix's rows (make_template, print_body). */
static int matvec_passes(const pg_kernel *k)
{
	return k->kind == PG_MATVEC && k->families != PG_FAM_CLASSIC && !k->opencl && (k->variant & 1) != 0;
}

/* ------------------------------------------------------------------ the distributed family */

/* Extents for distributed kernels: small ones (fewer elements than ranks along an axis), primes
 * and composites that divide by no tile and no grid. */
static int64_t pick_dist_extent(rng *r, int small)
{
	static const int64_t v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 19, 23};
	return small ? 1 + rint_(r, 7) : pick64(r, v, 17);
}

/* The distributed family's template (pg_dist.shape): params, arrays, bands and use paths; the
 * body is printed by print_dist. */
static void dist_template(pg_kernel *k, rng *r)
{
	static const char *const ext[] = {"N", "M", "L"}, *const idx[] = {"x", "y", "z"};
	pg_dist *d = &k->d;
	int A, B, C, T, X, b0, b1;
	d->shape = rint_(r, PG_DS_N);
	switch (d->shape) {
	case PG_DS_ST1:
	case PG_DS_ST2:
	case PG_DS_ST3:
	case PG_DS_JACOBI: {
		int n = d->shape == PG_DS_JACOBI ? 2 : d->shape - PG_DS_ST1 + 1;
		d->rank = n;
		d->box = chance(r, 40);
		d->guard = rint_(r, 3);
		for (int e = 0; e < n; e++) {
			int top = n == 3 && d->box ? 2 : 3; /* a 3-D box of width 2 has 125 terms */
			d->halo[e][0] = rint_(r, top);
			d->halo[e][1] = chance(r, 60) ? d->halo[e][0] : rint_(r, top);
			int64_t v = pick_dist_extent(r, n == 3);
			if (d->guard == 0 && v < d->halo[e][0] + d->halo[e][1] + 1)
				v = d->halo[e][0] + d->halo[e][1] + 1 + rint_(r, 3);
			add_param(k, ext[e], v);
		}
		const char *e1 = n > 1 ? ext[1] : "", *e2 = n > 2 ? ext[2] : "";
		A = add_array(k, "A", pick_input_role(r), n, "N", e1, e2);
		B = add_array(k, "B", d->shape == PG_DS_JACOBI || chance(r, 25) ? 2 : 1, n, "N", e1, e2);
		b0 = add_band(k, n, "x", "N", n > 1 ? idx[1] : "", e1, n > 2 ? idx[2] : "", e2);
		use(k, A, 1, b0), use(k, B, 1, b0);
		d->second = chance(r, 30);
		if (d->second) {
			C = add_array(k, "C", 1, n, "N", e1, e2);
			use(k, C, 1, b0);
		}
		break;
	}
	case PG_DS_GEMM:
		add_param(k, "M", pick_dist_extent(r, 0));
		add_param(k, "N", pick_dist_extent(r, 0));
		add_param(k, "K", pick_dist_extent(r, 0));
		d->form = chance(r, 35); /* C = 0 before the k loop */
		A = add_array(k, "A", pick_input_role(r), 2, "M", "K", "");
		B = add_array(k, "B", pick_input_role(r), 2, "K", "N", "");
		C = add_array(k, "C", d->form ? 1 : 2, 2, "M", "N", "");
		if (d->form) {
			b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
			b1 = add_band(k, 1, "k", "K", "", "", "", "");
			use(k, A, 2, b0, b1), use(k, B, 2, b0, b1), use(k, C, 1, b0), use(k, C, 2, b0, b1);
		} else {
			b0 = add_band(k, 3, "i", "M", "j", "N", "k", "K");
			use(k, A, 1, b0), use(k, B, 1, b0), use(k, C, 1, b0);
		}
		break;
	case PG_DS_ROWSUM:
		/* form 0: R[i] += A[i, j] * X[j]; 1: Q[j] += A[i, j]; 2: R[i] -= A[i, j] * X[j] */
		add_param(k, "M", pick_dist_extent(r, 0));
		add_param(k, "N", pick_dist_extent(r, 0));
		d->form = rint_(r, 3);
		A = add_array(k, "A", pick_input_role(r), 2, "M", "N", "");
		b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
		use(k, A, 1, b0);
		if (d->form == 1) {
			X = add_array(k, "Q", 2, 1, "N", "", "");
			use(k, X, 1, b0);
		} else {
			X = add_array(k, "X", pick_input_role(r), 1, "N", "", "");
			C = add_array(k, "R", 2, 1, "M", "", "");
			use(k, X, 1, b0), use(k, C, 1, b0);
		}
		break;
	case PG_DS_DOT:
		/* rank 1: S[0] += A[x] * B[x]; rank 2: S[0] += A[x, y] beside B[x, y] = A[x, y] * 2 */
		d->rank = 1 + chance(r, 50);
		add_param(k, "N", pick_dist_extent(r, 0));
		if (d->rank == 2)
			add_param(k, "M", pick_dist_extent(r, 0));
		A = add_array(k, "A", pick_input_role(r), d->rank, "N", "M", "");
		B = add_array(k, "B", d->rank == 2 ? 1 : pick_input_role(r), d->rank, "N", "M", "");
		X = add_array(k, "S", 2, 1, "1", "", "");
		b0 = add_band(k, d->rank, "x", "N", "y", "M", "", "");
		use(k, A, 1, b0), use(k, B, 1, b0), use(k, X, 1, b0);
		break;
	case PG_DS_TRANS:
		/* form 0: B[y, x] = A[x, y] + T[y, x]; 1: B[y, x] = A[x, y] - A[N-1-x, y] */
		add_param(k, "N", pick_dist_extent(r, 0));
		add_param(k, "M", pick_dist_extent(r, 0));
		d->form = chance(r, 40);
		A = add_array(k, "A", pick_input_role(r), 2, "N", "M", "");
		B = add_array(k, "B", 1, 2, "M", "N", "");
		b0 = add_band(k, 2, "x", "N", "y", "M", "", "");
		use(k, A, 1, b0), use(k, B, 1, b0);
		if (!d->form) {
			T = add_array(k, "T", pick_input_role(r), 2, "M", "N", "");
			use(k, T, 1, b0);
		}
		break;
	default: /* PG_DS_REFUSE */
		d->refuse = 1 + rint_(r, 5);
		add_param(k, "N", pick_dist_extent(r, 0) + 2);
		if (d->refuse <= 2)
			add_param(k, "M", pick_dist_extent(r, 0) + 2);
		switch (d->refuse) {
		case 1: /* Gauss-Seidel in place: carried along both distributed loops */
			A = add_array(k, "A", 2, 2, "N", "M", "");
			b0 = add_band(k, 2, "x", "N", "y", "M", "", "");
			k->b[b0].carried = 1;
			use(k, A, 1, b0);
			break;
		case 2: /* B[x+1, y] = A[x, y]: a write off the distributed index */
			A = add_array(k, "A", pick_input_role(r), 2, "N", "M", "");
			B = add_array(k, "B", 2, 2, "N", "M", "");
			b0 = add_band(k, 2, "x", "N", "y", "M", "", "");
			use(k, A, 1, b0), use(k, B, 1, b0);
			break;
		case 3: /* S[0] = max(S[0], A[x]): not a sum */
		case 4: /* S[0] += A[x] read back in B[x] = S[0] */
			A = add_array(k, "A", pick_input_role(r), 1, "N", "", "");
			X = add_array(k, "S", 2, 1, "1", "", "");
			b0 = add_band(k, 1, "x", "N", "", "", "", "");
			k->b[b0].carried = 1;
			use(k, A, 1, b0), use(k, X, 1, b0);
			if (d->refuse == 4) {
				B = add_array(k, "B", 1, 1, "N", "", "");
				use(k, B, 1, b0);
			}
			break;
		default: /* 5: B[x] written, then read at B[x+1] (another rank's element) */
			A = add_array(k, "A", pick_input_role(r), 1, "N", "", "");
			B = add_array(k, "B", 2, 1, "N", "", "");
			C = add_array(k, "C", 1, 1, "N", "", "");
			b0 = add_band(k, 1, "x", "N", "", "", "", "");
			k->b[b0].carried = 1;
			use(k, A, 1, b0), use(k, B, 1, b0), use(k, C, 1, b0);
			break;
		}
		break;
	}
}

/* The kernel's templates: params, arrays, bands and use paths. The body is printed by print_body. */
static void make_template(pg_kernel *k, rng *r)
{
	int A, B, C, X, Y, T, b0, b1, b2;
	switch (k->kind) {
	case PG_MATMUL:
	case PG_MATMUL_IMP:
		add_param(k, "M", pick_extent(r, 0));
		add_param(k, "N", pick_extent(r, 0));
		add_param(k, "K", pick_extent(r, 0));
		A = add_array(k, "A", pick_input_role(r), 2, "M", "K", "");
		B = add_array(k, "B", pick_input_role(r), 2, "K", "N", "");
		if (k->kind == PG_MATMUL) {
			C = add_array(k, "C", 2, 2, "M", "N", "");
			b0 = add_band(k, 3, "i", "M", "j", "N", "k", "K");
			use(k, A, 1, b0), use(k, B, 1, b0), use(k, C, 1, b0);
		} else {
			C = add_array(k, "C", chance(r, 50) ? 1 : 2, 2, "M", "N", "");
			b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
			b1 = add_band(k, 1, "k", "K", "", "", "", "");
			use(k, A, 2, b0, b1), use(k, B, 2, b0, b1), use(k, C, 1, b0), use(k, C, 2, b0, b1);
		}
		break;
	case PG_MATVEC:
		if (matvec_passes(k)) {
			/* rows and columns enough for blocks of rows and a vector of columns (the jam) */
			static const int64_t rows[] = {3, 4, 5, 7, 8, 9, 13, 17, 24, 37}, cols[] = {7, 16, 17, 24, 31, 32, 37, 48};
			add_param(k, "M", pick64(r, rows, 10));
			add_param(k, "N", pick64(r, cols, 8));
		} else {
			add_param(k, "M", pick_extent(r, 0));
			add_param(k, "N", pick_extent(r, 0));
		}
		A = add_array(k, "A", pick_input_role(r), 2, "M", "N", "");
		X = add_array(k, "X", pick_input_role(r), 1, "N", "", "");
		Y = add_array(k, "Y", 2, 1, "M", "", "");
		b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
		use(k, A, 1, b0), use(k, X, 1, b0), use(k, Y, 1, b0);
		if (matvec_passes(k)) {
			/* a second pass over A's rows, a column sum (bicg's; bit 1: of Y, atax's), which
			 * `cachet auto` fuses with the first along the rows and jams in blocks of rows */
			C = add_array(k, "Z", 2, 1, "N", "", "");
			b1 = add_band(k, 2, "i2", "M", "j2", "N", "", "");
			use(k, A, 1, b1), use(k, C, 1, b1), use(k, Y, 1, b1);
			if (!(k->variant & 2)) {
				B = add_array(k, "W", pick_input_role(r), 1, "M", "", "");
				use(k, B, 1, b1);
			}
		}
		break;
	case PG_TRANSPOSE:
		add_param(k, "M", pick_extent(r, 0));
		add_param(k, "N", pick_extent(r, 0));
		A = add_array(k, "A", pick_input_role(r), 2, "M", "N", "");
		B = add_array(k, "B", chance(r, 70) ? 1 : 2, 2, "N", "M", "");
		b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
		use(k, A, 1, b0), use(k, B, 1, b0);
		break;
	case PG_ST1:
	case PG_ST2:
	case PG_ST3: {
		/* an n-d stencil: A read, B written (or updated), one band x, y, z over N, M, L; 3-d keeps extents small */
		int n = k->kind - PG_ST1 + 1;
		static const char *const ext[] = {"N", "M", "L"}, *const idx[] = {"x", "y", "z"};
		for (int d = 0; d < n; d++)
			add_param(k, ext[d], pick_extent(r, n == 3));
		const char *e1 = n > 1 ? ext[1] : "", *e2 = n > 2 ? ext[2] : "";
		A = add_array(k, "A", pick_input_role(r), n, "N", e1, e2);
		B = add_array(k, "B", chance(r, 70) ? 1 : 2, n, "N", e1, e2);
		b0 = add_band(k, n, "x", "N", n > 1 ? idx[1] : "", e1, n > 2 ? idx[2] : "", e2);
		use(k, A, 1, b0), use(k, B, 1, b0);
		break;
	}
	case PG_TWOIDX:
		add_param(k, "V", pick_extent(r, 1) + 1);
		add_param(k, "N", pick_extent(r, 1) + 1);
		A = add_array(k, "A", pick_input_role(r), 2, "N", "N", "");
		C = add_array(k, "C1", pick_input_role(r), 2, "N", "V", "");
		X = add_array(k, "C2", pick_input_role(r), 2, "N", "V", "");
		T = add_array(k, "T", 3, 2, "V", "N", "");
		B = add_array(k, "B", 2, 2, "V", "V", "");
		b0 = add_band(k, 2, "a", "V", "q", "N", "", "");
		b1 = add_band(k, 1, "p", "N", "", "", "", "");
		b2 = add_band(k, 1, "b", "V", "", "", "", "");
		use(k, A, 2, b0, b1), use(k, C, 2, b0, b1), use(k, X, 2, b0, b2);
		use(k, T, 1, b0), use(k, T, 2, b0, b1), use(k, T, 2, b0, b2), use(k, B, 2, b0, b2);
		break;
	case PG_WAVE: {
		/* A[i, j] from its neighbours above / left / diagonal (a wavefront); the anti-diagonal
		 * A[i-1, j+1] needs j below N-1 */
		add_param(k, "M", pick_extent(r, 0) + 1);
		add_param(k, "N", pick_extent(r, 0) + 1);
		A = add_array(k, "A", 2, 2, "M", "N", "");
		b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
		k->b[b0].carried = 1;
		use(k, A, 1, b0);
		if (k->variant & 16) {
			B = add_array(k, "B", pick_input_role(r), 2, "M", "N", "");
			use(k, B, 1, b0);
		}
		break;
	}
	case PG_ACCUM:
		/* bit 0: one scalar S[0] over the whole nest, else a row accumulator R[i] over j;
		 * bit 3: a second, associative reduction Q[0] += ... beside it */
		add_param(k, "M", pick_extent(r, 0));
		add_param(k, "N", pick_extent(r, 0));
		A = add_array(k, "A", pick_input_role(r), 2, "M", "N", "");
		if (k->variant & 1)
			X = add_array(k, "S", 2, 1, "1", "", "");
		else
			X = add_array(k, "R", 2, 1, "M", "", "");
		b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
		k->b[b0].carried = 1;
		use(k, A, 1, b0), use(k, X, 1, b0);
		if (k->variant & 8) {
			Y = add_array(k, "Q", 2, 1, "1", "", "");
			use(k, Y, 1, b0);
		}
		break;
	case PG_GS:
		/* bit 0: 2-D sweep, else 1-D with (bit 1) an outer time loop */
		if (k->variant & 1) {
			add_param(k, "N", pick_extent(r, 0) + 2);
			add_param(k, "M", pick_extent(r, 0) + 2);
			A = add_array(k, "A", 2, 2, "N", "M", "");
			b0 = add_band(k, 2, "x", "N", "y", "M", "", "");
		} else {
			add_param(k, "N", pick_extent(r, 0) + 2);
			add_param(k, "NT", 1 + rint_(r, 3));
			A = add_array(k, "A", 2, 1, "N", "", "");
			if (k->variant & 2)
				b0 = add_band(k, 2, "t", "NT", "x", "N", "", "");
			else
				b0 = add_band(k, 1, "x", "N", "", "", "", "");
		}
		k->b[b0].carried = 1;
		use(k, A, 1, b0);
		break;
	case PG_SWEEPS:
		/* for (t: NT) { B from A; [bit 1: C from A and B]; A from B (and C) }, every sweep over the
		 * inner points (print_sweeps) */
		add_param(k, "NT", 1 + rint_(r, 3));
		add_param(k, "N", pick_extent(r, 0) + 2);
		add_param(k, "M", pick_extent(r, 0) + 2);
		A = add_array(k, "A", 2, 2, "N", "M", "");
		B = add_array(k, "B", 2, 2, "N", "M", "");
		b0 = add_band(k, 2, "x", "N", "y", "M", "", "");
		use(k, A, 1, b0), use(k, B, 1, b0);
		if (k->variant & 2) {
			C = add_array(k, "C", 2, 2, "N", "M", "");
			b2 = add_band(k, 2, "x3", "N", "y3", "M", "", "");
			use(k, A, 1, b2), use(k, B, 1, b2), use(k, C, 1, b2);
		}
		b1 = add_band(k, 2, "x2", "N", "y2", "M", "", "");
		use(k, A, 1, b1), use(k, B, 1, b1);
		if (k->variant & 2)
			use(k, k->na - 1, 1, b1); /* C */
		break;
	case PG_MULTI:
		/* for (i) { Y[i] = ..; for (j) { [let t]; B = ..; C = .. }; [Y[i] += B[i, N-1]] } [for (m, n) ..] */
		add_param(k, "M", pick_extent(r, 0));
		add_param(k, "N", pick_extent(r, 0));
		A = add_array(k, "A", pick_input_role(r), 2, "M", "N", "");
		X = add_array(k, "X", pick_input_role(r), 1, "M", "", "");
		Y = add_array(k, "Y", 1, 1, "M", "", "");
		B = add_array(k, "B", chance(r, 70) ? 1 : 2, 2, "M", "N", "");
		C = add_array(k, "C", 2, 2, "M", "N", "");
		b0 = add_band(k, 1, "i", "M", "", "", "", "");
		b1 = add_band(k, 1, "j", "N", "", "", "", "");
		use(k, A, 2, b0, b1), use(k, X, 1, b0), use(k, Y, 1, b0), use(k, Y, 2, b0, b1);
		use(k, B, 2, b0, b1), use(k, C, 2, b0, b1);
		/* bit 3: a temp row T filled in each iteration of i and read back at other elements
		 * (doitgen's S): a parallel i needs it private per thread (no use path: no cache of it) */
		if (k->variant & 8)
			add_array(k, "T", 3, 1, "N", "", "");
		if (k->variant & 2) {
			b2 = add_band(k, 2, "m", "M", "n", "N", "", "");
			use(k, C, 1, b2), use(k, A, 1, b2), use(k, Y, 1, b2);
		}
		break;
	case PG_AFFINE: {
		/* the nest's shape from variant bits 0-2 and 10-11, its bounds' offsets from bits 3-8
		 * (print_affine); the bands as the shape's loops are written, each affine loop fixed */
		int shape = affine_shape(k);
		add_param(k, "M", pick_extent(r, 0));
		if (syrk_unclamped(k))
			k->p[k->np - 1].value = 32 + rint_(r, 48);
		add_param(k, "N", pick_extent(r, 0));
		add_param(k, "K", pick_extent(r, 0));
		/* the strips (shape 8): P strips of 4 rows, the rows' extent 4*P */
		const char *rows = shape == 8 ? "4*P" : "M";
		if (shape == 8)
			add_param(k, "P", 1 + rint_(r, 6));
		if (shape == 9) { /* tiles of Q rows: Q divides M unless the rows end at min(Q, M - t) */
			int64_t sv = 1 + rint_(r, 5);
			add_param(k, "Q", sv);
			if (!((k->variant >> 9) & 1))
				k->p[0].value = sv * (1 + rint_(r, 5));
		}
		A = add_array(k, "A", pick_input_role(r), 2, rows, "K", "");
		B = add_array(k, "B", pick_input_role(r), 2, "K", "N", "");
		/* output only where the nest writes it before reading it (the trmm shape) */
		C = add_array(k, "C", shape == 0 && chance(r, 50) ? 1 : 2, 2, rows, "N", "");
		X = add_array(k, "X", pick_input_role(r), 1, "N", "", "");
		Y = add_array(k, "Y", 2, 1, rows, "", "");
		T = add_array(k, "S", 2, 2, "M", "M", "");
		/* the bands as the shape's loops are written (with their uses, where caches go) */
		switch (shape) {
		case 0: /* (i, j) then k */
			b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
			b1 = add_band(k, 1, "k", "K", "", "", "", "");
			k->b[b1].fixed[0] = 1;
			use(k, A, 2, b0, b1), use(k, B, 2, b0, b1), use(k, C, 1, b0), use(k, C, 2, b0, b1);
			break;
		case 1: /* (i, j) with j banded */
			b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
			k->b[b0].fixed[1] = 1;
			use(k, C, 1, b0), use(k, X, 1, b0), use(k, Y, 1, b0);
			break;
		case 2: /* (i, j, k) with j triangular */
			b0 = add_band(k, 3, "i", "M", "j", "M", "k", "K");
			k->b[b0].fixed[1] = 1;
			use(k, A, 1, b0), use(k, T, 1, b0);
			break;
		case 4: /* (i, j, k): j triangular, k over both (a FOR nested alone is one band) */
			b0 = add_band(k, 3, "i", "M", "j", "N", "k", "K");
			k->b[b0].fixed[1] = k->b[b0].fixed[2] = 1;
			snprintf(k->b[b0].dep[2], PG_NAME, "j");
			use(k, A, 1, b0), use(k, B, 1, b0), use(k, C, 1, b0);
			break;
		case 3: /* (i), a statement, then j: in place, carried */
			b0 = add_band(k, 1, "i", "M", "", "", "", "");
			k->b[b0].carried = 1;
			b1 = add_band(k, 1, "j", "N", "", "", "", "");
			k->b[b1].fixed[0] = 1;
			use(k, Y, 1, b0), use(k, Y, 2, b0, b1);
			break;
		case 6: /* (i, k, j): trmm in i-k-j order, the rectangular j inside the triangle */
			b0 = add_band(k, 3, "i", "M", "k", "K", "j", "N");
			k->b[b0].fixed[1] = 1;
			use(k, A, 1, b0), use(k, B, 1, b0), use(k, C, 1, b0);
			break;
		case 7: /* (i, j, k): a band of j around the diagonal, a rectangular k inside */
			b0 = add_band(k, 3, "i", "M", "j", "N", "k", "K");
			k->b[b0].fixed[1] = 1;
			use(k, A, 1, b0), use(k, B, 1, b0), use(k, C, 1, b0);
			break;
		case 8: /* (s), then dk, then (r, c): strips of R rows across an affine loop */
			b0 = add_band(k, 1, "s", "P", "", "", "", "");
			b1 = add_band(k, 1, "r0", "4", "", "", "", "");
			b2 = add_band(k, 3, "dk", "K", "r", "4", "c", "N");
			k->b[b2].fixed[0] = 1;
			snprintf(k->b[b2].dep[0], PG_NAME, "s");
			use(k, Y, 2, b0, b1), use(k, A, 2, b0, b2), use(k, C, 2, b0, b2);
			if (!(k->variant & 512))
				use(k, B, 2, b0, b2);
			break;
		case 9: /* (t step Q, i, j) then k: tiles of rows written with a step */
			b0 = add_band(k, 3, "t", "M", "i", "Q", "j", "N");
			b1 = add_band(k, 1, "k", "K", "", "", "", "");
			k->b[b0].stepped[0] = 1;
			if ((k->variant >> 9) & 1) { /* i: 0 .. min(Q, M - t) */
				k->b[b0].fixed[1] = 1;
				snprintf(k->b[b0].dep[1], PG_NAME, "t");
			}
			use(k, A, 2, b0, b1), use(k, B, 2, b0, b1), use(k, C, 1, b0), use(k, C, 2, b0, b1);
			break;
		default: /* 5: (i, j), j clamped */
			b0 = add_band(k, 2, "i", "M", "j", "N", "", "");
			k->b[b0].fixed[1] = 1;
			use(k, T, 1, b0), use(k, A, 1, b0), use(k, C, 1, b0);
			break;
		}
		/* every fixed loop of band 0 uses i unless set above */
		for (int o = 0; o < 3; o++)
			if (k->b[b0].fixed[o] && !k->b[b0].dep[o][0])
				snprintf(k->b[b0].dep[o], PG_NAME, "i");
		break;
	}
	case PG_DIST:
		dist_template(k, r);
		break;
	case PG_ROWBUF:
		/* for (r: R, q: Q) { for (p) { T[p] = 0; for (s) T[p] += A[r, q, s] * W[s, p] }
		 * for (p2) A[r, q, p2] = T[p2] } (print_rowbuf); bit 0: q from 1 (A has Q + 1 rows) */
		add_param(k, "R", pick_extent(r, 0));
		add_param(k, "Q", pick_extent(r, 0));
		add_param(k, "P", pick_extent(r, 0));
		add_array(k, "A", 2, 3, "R", k->variant & 1 ? "Q + 1" : "Q", "P");
		add_array(k, "W", pick_input_role(r), 2, "P", "P", "");
		add_array(k, "T", 3, 1, "P", "", ""); /* no use path: no cache of it */
		add_band(k, 2, "r", "R", "q", "Q", "", "");
		break;
	default: /* PG_REDTEMP */
		add_param(k, "M", pick_extent(r, 0));
		add_param(k, "N", pick_extent(r, 0));
		A = add_array(k, "A", pick_input_role(r), 2, "M", "N", "");
		T = add_array(k, "T", 3, 1, "M", "", "");
		X = add_array(k, "X", pick_input_role(r), 1, "M", "", "");
		Y = add_array(k, "Y", chance(r, 70) ? 1 : 2, 1, "M", "", "");
		b0 = add_band(k, 1, "i", "M", "", "", "", "");
		b1 = add_band(k, 1, "j", "N", "", "", "", "");
		b2 = add_band(k, 1, "m", "M", "", "", "", "");
		use(k, A, 2, b0, b1), use(k, T, 1, b0), use(k, T, 2, b0, b1), use(k, T, 1, b2);
		use(k, X, 1, b2), use(k, Y, 1, b2);
		break;
	}
}

static int is_int(int dt)
{
	return dt == 2 || dt == 3;
}

/* Element types, layouts, strided arrays and runtime params. */
static void decorate(pg_kernel *k, rng *r)
{
	for (int i = 0; i < k->na; i++) {
		pg_array *a = &k->a[i];
		if (chance(r, 12)) /* a second type: floats mix with floats, integers with integers */
			a->dtype = is_int(k->dtype) ? (k->dtype == 2 ? 3 : 2) : (k->dtype == 0 ? 1 : 0);
		if (a->rank >= 2 && chance(r, 40)) {
			a->layout = 1 + rint_(r, 3);
			int p[3] = {0, 1, 2};
			for (int d = a->rank - 1; d > 0; d--) {
				int e = rint_(r, d + 1), t = p[d];
				p[d] = p[e], p[e] = t;
			}
			memcpy(a->perm, p, sizeof p);
		}
		if (a->role != 3 && chance(r, 8))
			a->strided = 1;
	}
	/* an f32 array the kernel writes (a temp read back later) rounds what follows to f32, while an
	 * f64 output is verified to 1e-10: then every written float array is f32 */
	int f32w = 0;
	for (int i = 0; i < k->na; i++)
		f32w |= k->a[i].role != 0 && k->a[i].role != 4 && k->a[i].dtype == 0;
	for (int i = 0; f32w && i < k->na; i++)
		if (k->a[i].role != 0 && k->a[i].role != 4 && k->a[i].dtype == 1)
			k->a[i].dtype = 0;
	for (int i = 0; i < k->np; i++)
		if (chance(r, 10))
			k->p[i].runtime = 1;
}

/* ------------------------------------------------------------------ the schedule */

static int index_alive(const pg_kernel *k, const char *name)
{
	for (int b = 0; b < k->nb; b++)
		for (int i = 0; i < k->b[b].norig; i++)
			if (strcmp(k->b[b].orig[i], name) == 0)
				return 1;
	for (int s = 0; s < k->ns; s++)
		if (k->s[s].alive && strcmp(k->s[s].inner, name) == 0)
			return 1;
	return 0;
}

int pg_band_order(const pg_kernel *k, int b, char out[][PG_NAME])
{
	const pg_band *bd = &k->b[b];
	int n = 0;
	if (bd->reorder) {
		for (int i = 0; i < bd->nord; i++)
			if (index_alive(k, bd->ord[i]))
				memcpy(out[n++], bd->ord[i], PG_NAME);
		return n;
	}
	for (int i = 0; i < bd->norig; i++)
		memcpy(out[n++], bd->orig[i], PG_NAME);
	for (int s = 0; s < k->ns; s++) {
		const pg_split *sp = &k->s[s];
		if (!sp->alive || sp->band != b)
			continue;
		int at = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(out[i], sp->parent) == 0)
				at = i;
		if (at < 0 || n >= PG_MAXBI)
			continue;
		memmove(out[at + 2], out[at + 1], (size_t)(n - at - 1) * PG_NAME);
		memcpy(out[at + 1], sp->inner, PG_NAME);
		n++;
	}
	return n;
}

/* The loop order of a use path: the band orders concatenated. */
static int path_order(const pg_kernel *k, const pg_array *a, int u, char out[][PG_NAME])
{
	int n = 0;
	for (int i = 0; i < a->pathlen[u]; i++) {
		char tmp[PG_MAXBI][PG_NAME];
		int m = pg_band_order(k, a->path[u][i], tmp);
		for (int j = 0; j < m && n < 3 * PG_MAXBI; j++)
			memcpy(out[n++], tmp[j], PG_NAME);
	}
	return n;
}

/* The deepest use's order of array ai (the order levels count in). */
static int array_order(const pg_kernel *k, int ai, char out[][PG_NAME])
{
	int best = 0;
	for (int u = 0; u < k->a[ai].npaths; u++) {
		char tmp[3 * PG_MAXBI][PG_NAME];
		int n = path_order(k, &k->a[ai], u, tmp);
		if (n > best) {
			best = n;
			memcpy(out, tmp, (size_t)n * PG_NAME);
		}
	}
	return best;
}

static int64_t pick_split_size(rng *r, int64_t trips)
{
	switch (rint_(r, 9)) {
	case 0: return 1;
	case 1: return 2;
	case 2: return 3;
	case 3: return 5;
	case 4: return 7;
	/* trips may be a split size at the 64-bit edge (--edges): no overflow (UBSan) */
	case 5: return trips < INT64_MAX - 6 ? trips + 1 + rint_(r, 5) : trips; /* larger than the extent */
	case 6: return trips > 1 ? trips : 4;
	case 7: return trips / 2 > 1 ? trips / 2 : 2;
	default: return 1 + rint_(r, trips < INT_MAX - 2 ? (int)(trips + 2) : INT_MAX);
	}
}

static void name_inner(char *out, const char *parent)
{
	/* i -> ii -> iii: the inner repeats the original letter once more */
	snprintf(out, PG_NAME, "%s%c", parent, parent[0]);
}

static int add_split(pg_kernel *k, int band, const char *parent, int64_t size, int group, int balanced)
{
	if (k->ns >= PG_MAXS)
		return -1;
	pg_split *s = &k->s[k->ns];
	memset(s, 0, sizeof *s);
	s->alive = 1;
	s->band = band;
	snprintf(s->parent, sizeof s->parent, "%s", parent);
	name_inner(s->inner, parent);
	s->size = size;
	s->group = group;
	s->balanced = balanced;
	return k->ns++;
}

/* A random order of a band in which every chain goes outer before inner. tiled: all first-level
 * indices, then all second-level ones, ... (each level shuffled). */
static void random_reorder(pg_kernel *k, int b, rng *r, int tiled)
{
	pg_band *bd = &k->b[b];
	char all[PG_MAXBI][PG_NAME];
	int n = pg_band_order(k, b, all), placed[PG_MAXBI] = {0};
	bd->nord = 0;
	while (bd->nord < n) {
		int cand[PG_MAXBI], nc = 0, minlen = 99;
		for (int i = 0; i < n; i++) {
			if (placed[i])
				continue;
			/* available when its parent (the name minus one letter) is placed or original */
			int ok = 1;
			for (int s = 0; s < k->ns; s++)
				if (k->s[s].alive && strcmp(k->s[s].inner, all[i]) == 0)
					for (int j = 0; j < n; j++)
						if (!placed[j] && strcmp(all[j], k->s[s].parent) == 0)
							ok = 0;
			if (!ok)
				continue;
			int len = (int)strlen(all[i]);
			if (tiled && len > minlen)
				continue;
			if (tiled && len < minlen)
				nc = 0, minlen = len;
			cand[nc++] = i;
		}
		int c = cand[rint_(r, nc)];
		placed[c] = 1;
		memcpy(bd->ord[bd->nord++], all[c], PG_NAME);
	}
	bd->reorder = 1;
}

/* Whether name is in the split chain of original index o: o followed by its first letter
 * repeated (i, ii, iii; dk, dkd, dkdd). */
static int in_chain(const char *name, const char *o)
{
	size_t n = strlen(o);
	if (!o[0] || strncmp(name, o, n) != 0)
		return 0;
	for (const char *c = name + n; *c; c++)
		if (*c != o[0])
			return 0;
	return 1;
}

/* The original index of band bd whose split chain holds name, or -1. */
static int chain_of(const pg_band *bd, const char *name)
{
	for (int o = 0; o < bd->norig; o++)
		if (strcmp(name, bd->orig[o]) == 0 || in_chain(name, bd->orig[o]))
			return o;
	return -1;
}

/* Each split chain of band b together in its reorder: the roots in their drawn order, each one's
 * split inners right after it (in their drawn order). A loop whose bounds are projected onto
 * the new order may use every root outside it, whose whole value (the sum of its chain) is then
 * known. */
static void chains_together(pg_kernel *k, int b)
{
	pg_band *bd = &k->b[b];
	char out[PG_MAXBI][PG_NAME];
	int n = 0;
	/* the first affine loop goes before the root its bounds use (where the draw put it after),
	 * so that the bounds must be projected */
	for (int o = 0; o < bd->norig; o++) {
		if (!bd->fixed[o] || !bd->dep[o][0])
			continue;
		int at = -1, dat = -1;
		for (int i = 0; i < bd->nord; i++) {
			if (strcmp(bd->ord[i], bd->orig[o]) == 0)
				at = i;
			if (strcmp(bd->ord[i], bd->dep[o]) == 0)
				dat = i;
		}
		if (at > dat && dat >= 0) {
			memcpy(out[0], bd->ord[at], PG_NAME);
			memcpy(bd->ord[at], bd->ord[dat], PG_NAME);
			memcpy(bd->ord[dat], out[0], PG_NAME);
		}
		break;
	}
	for (int i = 0; i < bd->nord; i++) {
		int o = chain_of(bd, bd->ord[i]);
		if (o < 0) {
			memcpy(out[n++], bd->ord[i], PG_NAME);
			continue;
		}
		if (strcmp(bd->ord[i], bd->orig[o]) != 0)
			continue;
		for (int j = 0; j < bd->nord; j++)
			if (chain_of(bd, bd->ord[j]) == o)
				memcpy(out[n++], bd->ord[j], PG_NAME);
	}
	if (n == bd->nord)
		memcpy(bd->ord, out, sizeof out[0] * (size_t)n);
}

/* Put the band's fixed (affine) loops back into its reorder, in the order they are written, each
 * at a random place after the last loop of its dependency's chain (so inside the loops its bounds
 * use; never split, it stands alone). */
static void keep_fixed_last(pg_kernel *k, int b, rng *r)
{
	pg_band *bd = &k->b[b];
	char out[PG_MAXBI][PG_NAME];
	int n = 0;
	for (int i = 0; i < bd->nord; i++) {
		int fixed = 0;
		for (int o = 0; o < bd->norig; o++)
			fixed |= bd->fixed[o] && strcmp(bd->orig[o], bd->ord[i]) == 0;
		if (!fixed)
			memcpy(out[n++], bd->ord[i], PG_NAME);
	}
	for (int o = 0; o < bd->norig; o++) {
		if (!bd->fixed[o])
			continue;
		int after = 0, before = n; /* after its dependency's chain, before its own split inner */
		for (int i = 0; i < n; i++) {
			if (in_chain(out[i], bd->dep[o]))
				after = i + 1;
			if (in_chain(out[i], bd->orig[o]) && i < before)
				before = i;
		}
		if (after > before) {
			/* its inners came first: they go right after the chain, in their order, with it */
			char rest[PG_MAXBI][PG_NAME], moved[PG_MAXBI][PG_NAME];
			int nr = 0, nm = 0;
			for (int i = 0; i < n; i++) {
				if (i < after && in_chain(out[i], bd->orig[o]))
					memcpy(moved[nm++], out[i], PG_NAME);
				else
					memcpy(rest[nr++], out[i], PG_NAME);
			}
			after = 0;
			for (int i = 0; i < nr; i++)
				if (in_chain(rest[i], bd->dep[o]))
					after = i + 1;
			n = 0;
			for (int i = 0; i <= nr; i++) {
				if (i == after)
					for (int j = 0; j < nm; j++)
						memcpy(out[n++], moved[j], PG_NAME);
				if (i < nr)
					memcpy(out[n++], rest[i], PG_NAME);
			}
			before = after;
		}
		int at = after + rint_(r, before - after + 1);
		memmove(out[at + 1], out[at], sizeof out[0] * (size_t)(n - at));
		memcpy(out[at], bd->orig[o], PG_NAME);
		n++;
	}
	memcpy(bd->ord, out, sizeof out[0] * (size_t)n);
}

/* The tunable param of k (its number + 1), 0 when none. */
static int tune_param(const pg_kernel *k)
{
	for (int i = 0; i < k->np; i++)
		if (k->p[i].ntune)
			return i + 1;
	return 0;
}

static void gen_schedule(pg_kernel *k, rng *r)
{
	int group = 0;
	for (int b = 0; b < k->nb; b++) {
		pg_band *bd = &k->b[b];
		/* legal mode: a band that carries a dependence keeps its order (tile reorders) */
		int keep = bd->carried && (k->families == PG_FAM_LEGAL || k->families == PG_FAM_DIST);
		int tile = chance(r, 40) && bd->norig > 1 && !keep, bal = chance(r, 8);
		if (tile)
			group++;
		for (int i = 0; i < bd->norig; i++) {
			if (!chance(r, 55))
				continue;
			int64_t trips = bd->trips[i];
			if (bd->stepped[i]) /* check refuses splitting a loop written with a step */
				continue;
			if (bd->fixed[i]) { /* an affine loop: plain splits (per-iteration ranges) */
				int s = add_split(k, b, bd->orig[i], pick_split_size(r, trips), 0, 0);
				/* now and then its inner split again (each block ends at the loop's bound) */
				for (int d = 0; s >= 0 && d < 2 && chance(r, 20); d++)
					s = add_split(k, b, k->s[s].inner, pick_split_size(r, k->s[s].size), 0, 0);
				continue;
			}
			int s = add_split(k, b, bd->orig[i], pick_split_size(r, trips), tile ? group : 0,
					  tile ? bal : chance(r, 8));
			/* --edges: now and then a split size at the 64-bit edge (issue 34 item 4) */
			static const int64_t edge[] = {(int64_t)1 << 40, (int64_t)1 << 62, INT64_MAX - 1, INT64_MAX};
			if (s >= 0 && k->edges && chance(r, 2))
				k->s[s].size = pick64(r, edge, 4);
			int tp = tune_param(k);
			if (s >= 0 && tp && !tile && chance(r, 50)) /* a tunable split size */
				k->s[s].tparam = tp, k->s[s].size = k->p[tp - 1].value;
			/* chains: split the inner index again, to depth 3 */
			for (int d = 0; s >= 0 && d < 2 && chance(r, 35); d++) {
				int64_t outer = k->s[s].size;
				s = add_split(k, b, k->s[s].inner, pick_split_size(r, outer), 0, chance(r, 5));
			}
		}
		if (chance(r, 65) && !keep) {
			random_reorder(k, b, r, chance(r, 50));
			/* an affine band keeps its order as drawn seven times in ten: its affine loops may move
			 * out of the loops their bounds use, so check projects every loop's bounds onto the
			 * new order (src/ir/project.h) or refuses it with a message */
			int any_fixed = 0;
			for (int o = 0; o < bd->norig; o++)
				any_fixed |= bd->fixed[o];
			if (!any_fixed || chance(r, 30))
				keep_fixed_last(k, b, r);
			else if (chance(r, 70))
				chains_together(k, b);
		}
	}
}

/* ------------------------------------------------------------------ the plan */

static int add_cache(pg_kernel *k, int array, int parent)
{
	if (k->nc >= PG_MAXC)
		return -1;
	pg_cache *c = &k->c[k->nc];
	memset(c, 0, sizeof *c);
	c->alive = 1;
	c->array = array;
	c->parent = parent;
	c->thrifty = -1;
	char an[PG_NAME], pn[PG_NAME];
	memcpy(an, k->a[array].name, PG_NAME);
	memcpy(pn, parent < 0 ? an : k->c[parent].name, PG_NAME);
	snprintf(c->src, sizeof c->src, "%s", pn);
	if (parent < 0)
		snprintf(c->name, sizeof c->name, "%.11s%.11s", an, an);
	else
		snprintf(c->name, sizeof c->name, "%.20s%c", pn, an[0]);
	/* unique even for two-letter arrays (C1C1 -> C1C1C) */
	for (int i = 0; i < k->nc; i++)
		if (strcmp(k->c[i].name, c->name) == 0)
			snprintf(c->name, sizeof c->name, "%.16s_%d", pn, k->nc % 100);
	return k->nc++;
}

static int level_of_index(const char ord[][PG_NAME], int n, const char *idx)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ord[i], idx) == 0)
			return n - i;
	return 0;
}

/* The level a cache ends at in its array's order (an approximation for index=: the deepest use). */
static int cache_level(const pg_kernel *k, const pg_cache *c, const char ord[][PG_NAME], int n)
{
	(void)k;
	if (c->place == PG_LEVEL)
		return c->level;
	if (c->place == PG_INDEX)
		return level_of_index(ord, n, c->index);
	return 0;
}

static void random_layout(rng *r, int rank, int *layout, int *perm)
{
	*layout = 1 + rint_(r, 3);
	int p[3] = {0, 1, 2};
	for (int d = rank - 1; d > 0; d--) {
		int e = rint_(r, d + 1), t = p[d];
		p[d] = p[e], p[e] = t;
	}
	memcpy(perm, p, sizeof p);
}

/* Place cache c at a random level below maxlevel (its source's level for a hierarchy). */
static void place_cache(pg_kernel *k, pg_cache *c, rng *r, const char ord[][PG_NAME], int n, int maxlevel,
			int64_t maxel_below)
{
	static const int64_t budgets[] = {1, 2, 3, 4, 8, 16, 30, 64, 100, 1000, 1 << 20};
	if (maxel_below > 0 || (maxel_below == 0 && chance(r, 15)) || (maxel_below < 0 && chance(r, 2))) {
		c->place = PG_MAXEL;
		c->maxel = pick64(r, budgets, 11);
		if (maxel_below > 1 && c->maxel >= maxel_below)
			c->maxel = 1 + rint_(r, (int)(maxel_below > 1000 ? 1000 : maxel_below - 1));
		return;
	}
	int lv = 1 + rint_(r, maxlevel > 0 ? maxlevel : 1);
	if (chance(r, 2))
		lv = n + 1; /* out of range: a refusal to test */
	if (chance(r, 45) && lv <= n) {
		c->place = PG_INDEX;
		memcpy(c->index, ord[n - lv], PG_NAME);
	} else {
		c->place = PG_LEVEL;
		c->level = lv;
	}
	(void)k;
}

/* ------------------------------------------------------------------ the distributed family's plan */

/* The original indices distribute() may name for k's shape (outermost first); their count. */
static int dist_candidates(const pg_kernel *k, char out[][PG_NAME])
{
	int n = 0;
	for (int b = 0; b < k->nb; b++)
		for (int i = 0; i < k->b[b].norig && n < 3; i++)
			memcpy(out[n++], k->b[b].orig[i], PG_NAME);
	return n;
}

/* ranks as a grid of n dimensions (a random factorization). */
static void random_grid(rng *r, int ranks, int n, int64_t *g)
{
	for (int e = 0; e < 3; e++)
		g[e] = 1;
	for (int f = 2; ranks > 1; f++)
		while (ranks % f == 0) {
			g[rint_(r, n)] *= f;
			ranks /= f;
		}
}

/* distribute(): which indices (all or a random subset, now and then a split's inner: refused),
 * which grid (none, auto, explicit in the plan, or given to the run) and how many ranks. */
static void dist_choose(pg_kernel *k, rng *r)
{
	pg_dist *d = &k->d;
	char cand[3][PG_NAME];
	int nc = dist_candidates(k, cand);
	/* the imperfect gemm's k loop holds no statement of its own: distributing it is refused now
	 * and then only */
	if (k->b[0].norig < nc && !chance(r, 10))
		nc = k->b[0].norig;
	unsigned mask = (1u << nc) - 1;
	if (chance(r, 45))
		mask = 1 + (unsigned)rint_(r, (int)mask);
	d->n = 0;
	for (int i = 0; i < nc; i++)
		if (mask & (1u << i))
			memcpy(d->idx[d->n++], cand[i], PG_NAME);
	/* an index from a split: distribute(xx) is refused with its message */
	for (int i = 0; i < d->n && chance(r, 5); i++)
		for (int s = 0; s < k->ns; s++)
			if (k->s[s].alive && strcmp(k->s[s].parent, d->idx[i]) == 0) {
				memcpy(d->idx[i], k->s[s].inner, PG_NAME);
				d->split_idx = 1;
				break;
			}
	d->ranks = 1 + rint_(r, 4);
	int g = rint_(r, 100);
	d->grid[0] = g < 35 ? -1 : 0;
	if (g >= 50 && g < 80)
		random_grid(r, d->ranks, d->n, d->grid);
	else if (g >= 80) {
		d->rungrid = 1;
		random_grid(r, d->ranks, d->n, d->rgrid);
	}
}

/* replicate=: now and then some inputs held whole by every rank. Drawn from a stream of its own
 * (the kernel's seed, another constant), so that every other draw of a seed stays as it was and
 * the fixed seeds of tests/cli/fuzz_dist.sh keep their kernels. */
static void dist_replicate(pg_kernel *k)
{
	rng r = {k->seed ^ UINT64_C(0x5eed0f4e91ca7e5)};
	k->d.repl = 0;
	if (!chance(&r, 25))
		return;
	for (int a = 0; a < k->na && a < 32; a++)
		if ((k->a[a].role == 0 || k->a[a].role == 4) /* input, const */ && chance(&r, 60))
			k->d.repl |= 1u << a;
}

/* The levels of order ord (n loops, outermost first) below the first loop at which every
 * distributed index's chain has begun (where distribute() wants caches): 0 when none. */
static int levels_inside_dist(const pg_kernel *k, const char ord[][PG_NAME], int n)
{
	for (int i = 0; i < n; i++) {
		int all = 1;
		for (int g = 0; g < k->d.n && all; g++) {
			int seen = 0;
			for (int j = 0; j <= i && !seen; j++)
				seen = in_chain(ord[j], k->d.idx[g]) && strlen(ord[j]) >= strlen(k->d.idx[g]);
			all = seen;
		}
		if (all)
			return n - 1 - i;
	}
	return 0;
}

/* The levels of order ord (n loops, outermost first) inside its innermost fixed (affine) loop:
 * n when it has none. */
static int levels_inside_fixed(const pg_kernel *k, const char ord[][PG_NAME], int n)
{
	int last = -1;
	for (int i = 0; i < n; i++)
		for (int b = 0; b < k->nb; b++)
			for (int o = 0; o < k->b[b].norig; o++)
				if (k->b[b].fixed[o] && in_chain(ord[i], k->b[b].orig[o]))
					last = i; /* the affine loop or its split inner */
	return n - 1 - last;
}

/* Whether kernel k's shape reads A[i, k] in a triangle (the trmm-like shapes: k below i + e + 1,
 * or from i - d in the upper form of shape 0). */
static int packs_a(const pg_kernel *k)
{
	int shape = affine_shape(k);
	return shape == 0 || shape == 4 || shape == 6;
}

/* Cache c of A at i, packed to fit the triangle (most splits of i dropped: a split row is
 * refused); false when it did not (another draw, or a split of i left). */
static int target_packed(pg_kernel *k, pg_cache *c, rng *q)
{
	if (strcmp(k->a[c->array].name, "A") != 0 || !packs_a(k) || !chance(q, 75))
		return 0;
	int split = 0;
	for (int t = 0; t < k->ns; t++)
		if (k->s[t].alive && strcmp(k->s[t].parent, "i") == 0 && chance(q, 80))
			kill_split(k, t);
	for (int t = 0; t < k->ns; t++)
		split |= k->s[t].alive && strcmp(k->s[t].parent, "i") == 0;
	if (split)
		return 0;
	c->packed = affine_shape(k) == 0 && ((k->variant >> 9) & 1) ? 2 : 1;
	c->place = PG_INDEX;
	snprintf(c->index, PG_NAME, "i");
	return 1;
}

/* A packed cache of A for the trmm-like shapes where the draws left A uncached (a third of
 * them), from the packed stream. */
static void add_packed_a(pg_kernel *k)
{
	rng q = {k->seed * 0xBF58476D1CE4E5B9ull + 4242};
	if (k->kind != PG_AFFINE || !packs_a(k) || !chance(&q, 33))
		return;
	int ai = -1;
	for (int i = 0; i < k->na; i++)
		if (strcmp(k->a[i].name, "A") == 0 && k->a[i].npaths > 0 && k->a[i].rank == 2 &&
		    (k->a[i].role == 0 || k->a[i].role == 4))
			ai = i;
	for (int c = 0; c < k->nc && ai >= 0; c++)
		if (k->c[c].alive && k->c[c].array == ai)
			return;
	int ci = ai >= 0 ? add_cache(k, ai, -1) : -1;
	if (ci < 0)
		return;
	k->c[ci].thrifty = -1;
	if (!target_packed(k, &k->c[ci], &q))
		kill_cache(k, ci);
}

/* The use of array c->array whose loops hold cache c's index; -1 for none. */
static int cache_use(const pg_kernel *k, const pg_cache *c)
{
	const pg_array *a = &k->a[c->array];
	for (int u = 0; u < a->npaths; u++) {
		char o[3 * PG_MAXBI][PG_NAME];
		int n = path_order(k, a, u, o);
		if (level_of_index(o, n, c->index) > 0)
			return u;
	}
	return -1;
}

/* Whether uses u and v of array a share no band (no loop of one is around the other). */
static int paths_apart(const pg_array *a, int u, int v)
{
	for (int i = 0; i < a->pathlen[u]; i++)
		for (int j = 0; j < a->pathlen[v]; j++)
			if (a->path[u][i] == a->path[v][j])
				return 0;
	return 1;
}

/* A second cache of an array that has one placed by index= (no trigger), placed by index=
 * at a use in another nest (no band in common): two independent caches of one array
 * (src/plan/plan.c, check_items), from a stream of its own (the other draws stay as they
 * were). At most one per kernel, in seven kernels in ten that have such an array. */
static void add_other_nest_cache(pg_kernel *k)
{
	rng q = {k->seed * 0xA24BAED4963EE407ull + 4711};
	if (!chance(&q, 70))
		return;
	for (int ci = 0, nc = k->nc; ci < nc; ci++) {
		const pg_cache *c = &k->c[ci];
		if (!c->alive || c->parent >= 0 || c->place != PG_INDEX || c->trig)
			continue;
		const pg_array *a = &k->a[c->array];
		int first = cache_use(k, c);
		for (int v = 0; v < a->npaths && first >= 0; v++) {
			char o[3 * PG_MAXBI][PG_NAME];
			int n = path_order(k, a, v, o);
			if (n < 1 || !paths_apart(a, first, v))
				continue;
			int ni = add_cache(k, c->array, -1);
			if (ni < 0)
				return;
			pg_cache *d = &k->c[ni];
			d->place = PG_INDEX;
			memcpy(d->index, o[rint_(&q, n)], PG_NAME);
			if (chance(&q, 30))
				random_layout(&q, a->rank, &d->layout, d->perm);
			return;
		}
	}
}

/* packed=lower|upper on an affine kernel's cache (a quarter of them), from a stream of its own
 * (the other draws stay as they were): mostly a read-only rank-2 array, without the options
 * packed= refuses, at a level that holds the innermost affine loop (the triangle) and often
 * the loop of its rows; the rest are refusals to test. */
static void draw_packed(pg_kernel *k, pg_cache *c, const char ord[][PG_NAME], int n, int inside)
{
	rng q = {k->seed * 0x94D049BB133111EBull + 97 + (uint64_t)(c - k->c)};
	if (!chance(&q, 25))
		return;
	const pg_array *a = &k->a[c->array];
	c->packed = chance(&q, 75) ? 1 : 2;
	if (chance(&q, 5))
		return; /* as drawn: most likely refused */
	if (c->parent >= 0 || a->rank != 2 || !(a->role == 0 || a->role == 4)) {
		c->packed = 0;
		return;
	}
	c->layout = 0;
	c->trig = 0;
	c->dbuf = 0;
	c->loc = 0;
	if (target_packed(k, c, &q))
		return;
	if (c->place != PG_MAXEL && n > inside && chance(&q, 80)) {
		int lv = inside + 1 + rint_(&q, n - inside);
		if (chance(&q, 50)) {
			c->place = PG_INDEX;
			memcpy(c->index, ord[n - lv], PG_NAME);
		} else {
			c->place = PG_LEVEL;
			c->level = lv;
		}
	}
}

/* Now and then (its own random stream, so the other draws stay as they were) a read-only cache
 * inside the innermost affine loop, with no trigger, is triggered at the whole nest: its slots
 * then count the affine loop's span, copied before the loops its bounds use, and the main and
 * tail versions of an outer split share them (tests/plans/affine_multicache_outer_tail.cachet).
 * The draws above put such a trigger at most at the affine loop half the time, and almost
 * never above a split with a tail: 24,000 seeds had none. */
static void draw_span_trigger(pg_kernel *k, pg_cache *c, int ro, int parent, int lv, int inside, int n)
{
	rng q = {k->seed * 0xD6E8FEB86659FD93ull + 131 + (uint64_t)(c - k->c)};
	if (!ro || parent >= 0 || c->trig || c->place == PG_MAXEL || lv <= 0 || lv > inside || lv >= n ||
	    !chance(&q, 60))
		return;
	c->trig = PG_TLEVEL;
	c->tlevel = n;
}

static void gen_host_caches(pg_kernel *k, rng *r)
{
	for (int ai = 0; ai < k->na; ai++) {
		/* the affine shapes leave some arrays unused: no cache of those */
		if (!chance(r, 40) || (k->kind == PG_AFFINE && k->a[ai].npaths == 0))
			continue;
		char ord[3 * PG_MAXBI][PG_NAME];
		int n = array_order(k, ai, ord), role = k->a[ai].role;
		int ro = role == 0 || role == 4, parent = -1;
		int depth = 1 + (chance(r, 35) ? 1 + chance(r, 35) : 0);
		/* affine kernels: read-only arrays mostly inside the innermost affine loop (a
		 * multicache or double buffer over one is refused), written ones half the time above
		 * it (a written box over an affine loop, copied in and out whole); distributed ones:
		 * mostly inside the distributed loops (a cache outside them is refused) */
		int aff = k->kind == PG_AFFINE || k->kind == PG_DIST;
		int inside = k->kind == PG_AFFINE ? levels_inside_fixed(k, ord, n)
			     : k->kind == PG_DIST ? levels_inside_dist(k, ord, n) : n;
		int stay = k->kind == PG_AFFINE && !ro ? 50 : 90;
		if (aff && inside < 1 && chance(r, stay))
			continue;
		for (int d = 0; d < depth; d++) {
			int ci = add_cache(k, ai, parent);
			if (ci < 0)
				break;
			pg_cache *c = &k->c[ci];
			int maxlevel = aff && inside > 0 && chance(r, stay) ? inside : n;
			int64_t below = 0;
			if (parent >= 0) {
				const pg_cache *pc = &k->c[parent];
				if (pc->place == PG_MAXEL)
					below = pc->maxel;
				else
					maxlevel = cache_level(k, pc, ord, n) - 1, below = -1;
				if (below < 0 && maxlevel < 1) {
					c->alive = 0, k->nc--;
					break;
				}
			}
			place_cache(k, c, r, ord, n, maxlevel, below);
			if (chance(r, 30))
				random_layout(r, k->a[ai].rank, &c->layout, c->perm);
			if (chance(r, 35))
				c->thrifty = chance(r, 50);
			int lv = cache_level(k, c, ord, n);
			int trig_ok = ro || role == 3 || chance(r, 3);
			if (c->place != PG_MAXEL && lv > 0 && trig_ok && chance(r, k->kind == PG_AFFINE ? 50 : 30)) {
				int top = parent >= 0 ? cache_level(k, &k->c[parent], ord, n) : n;
				/* affine kernels: a trigger above the affine loop half the time (its slots
				 * count the loop's span) */
				if (aff && inside > 0 && top > inside && chance(r, k->kind == PG_AFFINE ? 50 : 90))
					top = inside;
				if (top < lv)
					top = lv;
				int tl = lv + rint_(r, top - lv + 1);
				if (tl <= n && chance(r, 40)) {
					c->trig = PG_TINDEX;
					memcpy(c->tindex, ord[n - tl], PG_NAME);
				} else {
					c->trig = PG_TLEVEL;
					c->tlevel = tl;
				}
			}
			if (k->kind == PG_AFFINE)
				draw_span_trigger(k, c, ro, parent, lv, inside, n);
			if ((ro || chance(r, 3)) && chance(r, k->kind == PG_AFFINE ? 40 : 20))
				c->dbuf = 1;
			/* a double buffer right inside the innermost affine loop, half the time: the loop
			 * around it is then the affine one, peeled with per-iteration ranges */
			if (c->dbuf && k->kind == PG_AFFINE && inside > 0 && parent < 0 && c->place != PG_MAXEL &&
			    !c->trig && chance(r, 50)) {
				c->place = PG_LEVEL;
				c->level = inside;
				c->thrifty = 0; /* an elided cache has nothing to double buffer */
			}
			if (chance(r, 1))
				c->loc = 1 + rint_(r, 3); /* refused on host */
			if (k->kind == PG_AFFINE)
				draw_packed(k, c, ord, n, inside);
			if (c->packed && chance(r, 90))
				break; /* no cache of a packed one (refused): one now and then */
			parent = ci;
		}
	}
}

static int add_verb(pg_kernel *k, int kind)
{
	if (k->nv >= PG_MAXV)
		return -1;
	pg_verbi *v = &k->v[k->nv];
	memset(v, 0, sizeof *v);
	v->alive = 1;
	v->kind = kind;
	return k->nv++;
}

static int has_output_only(const pg_kernel *k)
{
	for (int i = 0; i < k->na; i++)
		if (k->a[i].role == 1)
			return 1;
	return 0;
}

/* The written array of each template and the original index of each of its dimensions ("" where
 * vectorizing it cannot work: a loop nest lies inside). */
static const struct {
	const char *array;
	const char *dims[3];
} written[PG_NKINDS] = {
	[PG_MATMUL] = {"C", {"i", "j", ""}},     [PG_MATMUL_IMP] = {"C", {"", "", ""}},
	[PG_MATVEC] = {"Y", {"i", "", ""}},      [PG_TRANSPOSE] = {"B", {"j", "i", ""}},
	[PG_ST1] = {"B", {"x", "", ""}},         [PG_ST2] = {"B", {"x", "y", ""}},
	[PG_ST3] = {"B", {"x", "y", "z"}},       [PG_TWOIDX] = {"B", {"", "b", ""}},
	[PG_REDTEMP] = {"Y", {"m", "", ""}},
	[PG_WAVE] = {"A", {"i", "j", ""}},       [PG_ACCUM] = {"R", {"i", "", ""}},
	[PG_GS] = {"A", {"x", "y", ""}},         [PG_MULTI] = {"B", {"", "j", ""}},
	[PG_SWEEPS] = {"B", {"x", "y", ""}},     [PG_ROWBUF] = {"A", {"r", "q", ""}},
};

/* A reduction index of the template: an original index of a band that the written array's
 * subscripts do not name (matmul's k, matrix-vector's j), drawn at random; NULL when none. */
static const char *reduction_index(const pg_kernel *k, rng *r, int *band)
{
	const char *cand[16];
	int cb[16], n = 0;
	for (int b = 0; b < k->nb; b++)
		for (int j = 0; j < k->b[b].norig && n < 16; j++) {
			int named = 0;
			for (int d = 0; d < 3; d++)
				named |= strcmp(written[k->kind].dims[d], k->b[b].orig[j]) == 0;
			if (!named)
				cand[n] = k->b[b].orig[j], cb[n++] = b;
		}
	if (n == 0)
		return NULL;
	int c = rint_(r, n);
	*band = cb[c];
	return cand[c];
}

/* name becomes the innermost index of its split chain. */
static void innermost_of(const pg_kernel *k, char *name)
{
	for (int s = 0; s < k->ns; s++) /* splits come after their parents */
		if (k->s[s].alive && strcmp(k->s[s].parent, name) == 0)
			memcpy(name, k->s[s].inner, PG_NAME);
}

/* Vectorize the written array's contiguous index: its innermost split moved to the end of its band
 * (a legal reorder), so the loop is innermost and the written accesses contiguous; with red, a
 * reduction index instead (vectorize of a reduction loop: the written element stays put while the
 * loop runs; check refuses it where the reads are not contiguous in it). 0 when the template has
 * no such loop. */
static int smart_vectorize(pg_kernel *k, rng *r, int red)
{
	int ai = -1;
	for (int i = 0; i < k->na; i++)
		if (written[k->kind].array && strcmp(k->a[i].name, written[k->kind].array) == 0)
			ai = i;
	if (ai < 0)
		return 0;
	const pg_array *a = &k->a[ai];
	int d = a->layout == 2 ? 0 : a->layout == 3 ? a->perm[a->rank - 1] : a->rank - 1;
	const char *orig = written[k->kind].dims[d];
	int b = -1;
	if (red) {
		orig = reduction_index(k, r, &b);
		if (!orig)
			return 0;
	}
	for (int i = 0; !red && orig[0] && i < k->nb; i++)
		for (int j = 0; j < k->b[i].norig; j++)
			if (strcmp(k->b[i].orig[j], orig) == 0)
				b = i;
	if (b < 0)
		return 0;
	char inner[PG_NAME];
	snprintf(inner, sizeof inner, "%s", orig);
	innermost_of(k, inner);
	/* not in the classic family (whose kernels stay those of its generator), now and
	 * then unroll and jam: another index of the band split by 2..4, its new
	 * inner unrolled inside the vector loop (several rows in one vector loop: their sums, or
	 * their updates of one vector) */
	char jam[PG_NAME] = "";
	if (k->families != PG_FAM_CLASSIC && k->b[b].norig > 1 && chance(r, 35)) {
		const char *o = k->b[b].orig[rint_(r, k->b[b].norig)];
		if (strcmp(o, orig) != 0) {
			char rows[PG_NAME];
			snprintf(rows, sizeof rows, "%s", o);
			innermost_of(k, rows);
			int sp = add_split(k, b, rows, 2 + rint_(r, 3), 0, 0);
			if (sp >= 0)
				memcpy(jam, k->s[sp].inner, PG_NAME);
		}
	}
	char ord[PG_MAXBI][PG_NAME];
	int n = pg_band_order(k, b, ord), m = 0;
	pg_band *bd = &k->b[b];
	for (int i = 0; i < n; i++)
		if (strcmp(ord[i], inner) != 0 && strcmp(ord[i], jam) != 0)
			memcpy(bd->ord[m++], ord[i], PG_NAME);
	memcpy(bd->ord[m++], inner, PG_NAME);
	if (jam[0])
		memcpy(bd->ord[m++], jam, PG_NAME);
	bd->nord = m;
	bd->reorder = 1;
	int v = add_verb(k, PG_VECTORIZE);
	if (v < 0)
		return 0;
	memcpy(k->v[v].idx[0], inner, PG_NAME);
	k->v[v].n = 1;
	int u = jam[0] ? add_verb(k, PG_UNROLL) : -1;
	if (u >= 0) {
		memcpy(k->v[u].idx[0], jam, PG_NAME);
		k->v[u].n = 1;
	}
	if (!red && a->role == 1 && chance(r, 40))
		k->v[v].nontemporal = 1;
	return 1;
}

static void gen_host_verbs(pg_kernel *k, rng *r)
{
	char ord[3 * PG_MAXBI][PG_NAME];
	int ai = rint_(r, k->na), n = array_order(k, ai, ord);
	if (chance(r, 25) && smart_vectorize(k, r, chance(r, 40))) {
		n = array_order(k, ai, ord);
	} else if (n > 0 && chance(r, 15)) {
		int v = add_verb(k, PG_VECTORIZE);
		memcpy(k->v[v].idx[0], ord[n - 1], PG_NAME);
		k->v[v].n = 1;
		if (has_output_only(k) && chance(r, 35))
			k->v[v].nontemporal = 1;
	}
	if (n > 0 && chance(r, 30)) {
		int v = add_verb(k, PG_UNROLL), vec = k->nv > 1 && n > 1; /* not the vectorized loop */
		memcpy(k->v[v].idx[0], ord[n - 1 - vec - rint_(r, n - vec > 2 ? 3 : n - vec)], PG_NAME);
		k->v[v].n = 1;
		if (chance(r, 45))
			k->v[v].by = 2 + rint_(r, 7);
		/* --edges: a second full unroll, of the next loop out (register-tile blow-ups: the
		 * compile time the slow-compile verdict watches) */
		int at = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(ord[i], k->v[v].idx[0]) == 0)
				at = i;
		if (k->edges && at > 0 && chance(r, 20)) {
			int u = add_verb(k, PG_UNROLL);
			if (u >= 0) {
				memcpy(k->v[u].idx[0], ord[at - 1], PG_NAME);
				k->v[u].n = 1;
			}
		}
	}
	if (chance(r, 35)) {
		char bo[PG_MAXBI][PG_NAME];
		int m = pg_band_order(k, 0, bo);
		int v = add_verb(k, PG_PARALLELIZE);
		pg_verbi *pv = &k->v[v];
		pv->n = m > 1 && chance(r, 40) ? 2 : 1;
		for (int i = 0; i < pv->n; i++)
			memcpy(pv->idx[i], bo[i], PG_NAME);
		/* now and then a loop further in alone: a sum's loop (matmul's k, matvec's j) runs
		 * as a parallel reduction (docs/LANGUAGE.md, "Loop verbs") */
		if (pv->n == 1 && m > 1 && chance(r, 30)) {
			memcpy(pv->idx[0], bo[1 + rint_(r, m - 1)], PG_NAME);
			/* a cache inside the loop keeps the dependence test from taking a sum */
			if (chance(r, 50))
				for (int c = 0; c < k->nc; c++)
					k->c[c].alive = 0;
		}
		if (chance(r, 25))
			pv->policy = 1 + rint_(r, 2);
		if (chance(r, 20))
			pv->max_threads = 1 + rint_(r, 4);
		if (chance(r, 20))
			pv->spmd = 1;
	}
}

/* Whether split s cuts an affine (fixed) loop: its inner's range is per iteration. */
static int split_of_fixed(const pg_kernel *k, const pg_split *s)
{
	const pg_band *bd = &k->b[s->band];
	for (int o = 0; o < bd->norig; o++)
		if (bd->fixed[o] && in_chain(s->parent, bd->orig[o]))
			return 1;
	return 0;
}

/* The loop verbs of an affine kernel: parallelize the outermost loop of band 0 (alone; a
 * dependence makes check refuse it, which the fuzzer counts), unroll a split inner loop of a
 * rectangular index now and then. */
static void gen_affine_verbs(pg_kernel *k, rng *r)
{
	char bo[PG_MAXBI][PG_NAME];
	int m = pg_band_order(k, 0, bo);
	if (m > 0 && chance(r, 60)) {
		int v = add_verb(k, PG_PARALLELIZE);
		k->v[v].n = 1;
		memcpy(k->v[v].idx[0], bo[0], PG_NAME);
		if (chance(r, 50))
			k->v[v].policy = 1 + rint_(r, 2);
		if (chance(r, 20))
			k->v[v].max_threads = 1 + rint_(r, 4);
	}
	int tile = -1; /* a split whose inner loop is just outside the band's innermost */
	int tb = affine_shape(k) == 8 ? k->nb - 1 : 0; /* the strips: the (r, c) band inside dk */
	if (tb != 0)
		m = pg_band_order(k, tb, bo);
	if (m > 1 && chance(r, tb != 0 ? 80 : 40)) {
		/* vectorize the innermost loop (check refuses it where it is not contiguous and
		 * independent) and now and then unroll the small rectangular split inner just outside
		 * it: an unroll x vectorize register tile, often across an affine loop, and in the
		 * in-place shapes one that reads its own array (proved by the dependence test) */
		int v = add_verb(k, PG_VECTORIZE);
		if (v >= 0) {
			k->v[v].n = 1;
			memcpy(k->v[v].idx[0], bo[m - 1], PG_NAME);
		}
		for (int s = 0; s < k->ns && chance(r, 70); s++)
			if (k->s[s].alive && k->s[s].size <= 8 && !split_of_fixed(k, &k->s[s]) &&
			    strcmp(k->s[s].inner, bo[m - 2]) == 0)
				tile = s;
		if (tile >= 0 && (v = add_verb(k, PG_UNROLL)) >= 0) {
			k->v[v].n = 1;
			memcpy(k->v[v].idx[0], k->s[tile].inner, PG_NAME);
		}
		const pg_band *bd = &k->b[tb]; /* or a small rectangular loop of the band as written */
		for (int o = 0; tile < 0 && o < bd->norig; o++)
			if (!bd->fixed[o] && bd->trips[o] <= 8 && strcmp(bd->orig[o], bo[m - 2]) == 0 &&
			    chance(r, 70) && (v = add_verb(k, PG_UNROLL)) >= 0) {
				k->v[v].n = 1;
				memcpy(k->v[v].idx[0], bo[m - 2], PG_NAME);
				tile = o;
			}
	}
	for (int s = 0; s < k->ns && tile < 0 && chance(r, 30); s++)
		if (k->s[s].alive && k->s[s].size <= 8 && !split_of_fixed(k, &k->s[s])) {
			int v = add_verb(k, PG_UNROLL);
			k->v[v].n = 1;
			memcpy(k->v[v].idx[0], k->s[s].inner, PG_NAME);
			break;
		}
}


/* A GPU plan (OpenCL or CUDA) for an affine kernel: band 0's first index (and its second now and
 * then, affine or not; or its affine second alone) tiled into work-groups and work-items (an
 * affine one covers its greatest range, each work-item testing its bounds), an affine loop split
 * once now and then
 * (per-iteration ranges), the affine loops kept after the loops their bounds use; caches now and
 * then: shared ones between the work-group and work-item loops (refused where the region holds
 * an affine loop that moves the block or a written array), private or global ones mostly inside
 * the innermost affine loop; an unroll or vectorize now and then. */
static void gen_affine_gpu(pg_kernel *k, rng *r)
{
	static const int64_t wg[] = {1, 2, 3, 4, 5, 8};
	pg_band *bd = &k->b[0];
	int npar = bd->norig > 1 && !bd->fixed[1] && chance(r, 50) ? 2 : 1;
	/* an affine loop on the grid (its greatest range, each work-item testing its bounds), from a
	 * stream of its own (the other seeds draw what they drew before): band 0's second loop when
	 * it is affine, with the first or alone (the first then runs in each work-item) */
	rng z = {k->seed * 0x94D049BB133111EBull + 4231};
	int par[3] = {0, 1, 2};
	if (bd->norig > 1 && bd->fixed[1] && chance(&z, 50)) {
		npar = chance(&z, 35) ? 1 : 2;
		par[0] = npar == 1 ? 1 : 0;
	}
	for (int i = 0; i < npar; i++)
		add_split(k, 0, bd->orig[par[i]], pick64(r, wg, 6), 1, 0);
	for (int b = 0; b < k->nb; b++)
		for (int o = 0; o < k->b[b].norig; o++)
			if (k->b[b].fixed[o] && !k->b[b].orig[o][1] && chance(r, 25) &&
			    !(b == 0 && (o == par[0] || (npar > 1 && o == par[1])))) /* i -> ii: one letter */
				add_split(k, b, k->b[b].orig[o], pick_split_size(r, k->b[b].trips[o]), 0, 0);
	for (int b = 0; b < k->nb; b++) {
		random_reorder(k, b, r, b == 0 && chance(r, 50));
		keep_fixed_last(k, b, r);
	}
	pg_verbi *pv = &k->v[add_verb(k, PG_PARALLELIZE)];
	pv->n = npar;
	for (int i = 0; i < npar; i++)
		memcpy(pv->idx[i], bd->orig[par[i]], PG_NAME);
	for (int ai = 0; ai < k->na; ai++) {
		if (k->a[ai].npaths == 0 || !chance(r, 60))
			continue;
		char ord[3 * PG_MAXBI][PG_NAME];
		int n = array_order(k, ai, ord), inside = levels_inside_fixed(k, ord, n);
		int ro = k->a[ai].role == 0 || k->a[ai].role == 4;
		int shared = ro && chance(r, 30);
		if (n == 0 || (!shared && inside < 1))
			continue;
		int ci = add_cache(k, ai, -1);
		if (ci < 0)
			break;
		pg_cache *c = &k->c[ci];
		int lastg = 0, firsti = n - 1; /* the last work-group loop, the first work-item loop */
		for (int i = 0; i < n; i++)
			for (int p = 0; p < npar; p++) {
				char wi[PG_NAME];
				name_inner(wi, bd->orig[par[p]]);
				if (strcmp(ord[i], bd->orig[par[p]]) == 0 && i > lastg)
					lastg = i;
				if (strcmp(ord[i], wi) == 0 && i < firsti)
					firsti = i;
			}
		c->place = PG_INDEX;
		if (shared) {
			c->loc = 1;
			int lo = lastg + 1 <= firsti ? lastg + 1 : firsti;
			memcpy(c->index, ord[lo + rint_(r, firsti - lo + 1)], PG_NAME);
			c->strat = chance(r, 60) ? 1 + rint_(r, 2) : 0;
			if (chance(r, 20))
				c->dbuf = 1;
		} else {
			c->loc = chance(r, 80) ? 2 : 0;
			int lo = inside > 0 && chance(r, 95) ? n - inside : 0;
			memcpy(c->index, ord[lo + rint_(r, n - lo)], PG_NAME);
		}
		if (chance(r, 20))
			random_layout(r, k->a[ai].rank, &c->layout, c->perm);
		if (chance(r, 20))
			c->thrifty = chance(r, 50);
	}
	if (chance(r, 20)) { /* the innermost loop, or a small loop inside the innermost affine one */
		char ord[3 * PG_MAXBI][PG_NAME];
		int n = array_order(k, 0, ord), inside = levels_inside_fixed(k, ord, n);
		int unroll = inside > 1 && chance(r, 50);
		int v = n > 0 ? add_verb(k, unroll ? PG_UNROLL : PG_VECTORIZE) : -1;
		if (v >= 0) {
			k->v[v].n = 1;
			memcpy(k->v[v].idx[0], ord[unroll ? n - 1 - rint_(r, inside) : n - 1], PG_NAME);
		}
	}
	add_packed_a(k); /* packed=, each work-item's own (private): a stream of its own */
}

/* OpenCL: tile the first one or two indices of band 0 into work-groups and work-items, keep the
 * tiles outermost, and put local caches between the two and private ones anywhere. */
static void gen_opencl(pg_kernel *k, rng *r)
{
	static const int64_t wg[] = {1, 2, 3, 4, 5, 8};
	pg_band *bd = &k->b[0];
	/* matvec's j is its reduction: parallel only over i (mostly; a refusal now and then) */
	int npar = bd->norig > 1 && chance(r, k->kind == PG_MATVEC ? 5 : 70) ? 2 : 1;
	int grp = 1;
	for (int i = 0; i < bd->norig; i++) {
		if (i >= npar && !chance(r, 50))
			continue;
		int s = add_split(k, 0, bd->orig[i], pick64(r, wg, 6), grp, 0);
		if (s >= 0 && chance(r, 20))
			add_split(k, 0, k->s[s].inner, 2, 0, 0);
	}
	random_reorder(k, 0, r, 1);
	/* the work-group indices first, in the order parallelize names them */
	pg_verbi *pv = &k->v[add_verb(k, PG_PARALLELIZE)];
	pv->n = npar;
	for (int i = 0; i < npar; i++)
		memcpy(pv->idx[i], bd->orig[i], PG_NAME);
	if (npar == 2 && chance(r, 30)) {
		memcpy(pv->idx[0], bd->orig[1], PG_NAME);
		memcpy(pv->idx[1], bd->orig[0], PG_NAME);
	}
	for (int ai = 0; ai < k->na; ai++) {
		if (!chance(r, 50))
			continue;
		char ord[3 * PG_MAXBI][PG_NAME];
		int n = array_order(k, ai, ord);
		int ci = add_cache(k, ai, -1);
		if (ci < 0 || n == 0)
			break;
		pg_cache *c = &k->c[ci];
		int ro = k->a[ai].role == 0 || k->a[ai].role == 4;
		/* between the last work-group loop and the first work-item loop */
		int lastg = 0, firsti = n - 1, lasti = 0;
		for (int i = 0; i < n; i++) {
			for (int p = 0; p < npar; p++) {
				if (strcmp(ord[i], bd->orig[p]) == 0 && i > lastg)
					lastg = i;
				char wi[PG_NAME];
				name_inner(wi, bd->orig[p]);
				if (strcmp(ord[i], wi) == 0 && i < firsti)
					firsti = i;
				if (strcmp(ord[i], wi) == 0 && i > lasti)
					lasti = i;
			}
		}
		int writes = !(k->a[ai].role == 0 || k->a[ai].role == 4);
		c->place = PG_INDEX;
		if (chance(r, 55)) {
			c->loc = 1;
			int lo = lastg + 1 <= firsti ? lastg + 1 : firsti;
			memcpy(c->index, ord[lo + rint_(r, firsti - lo + 1)], PG_NAME);
			c->strat = chance(r, 60) ? 1 + rint_(r, 2) : 0;
			if (ro && chance(r, 30))
				c->dbuf = 1;
		} else {
			c->loc = chance(r, 80) ? 2 : 0;
			/* a private cache that writes back belongs inside the work-item loops (mostly) */
			int lo = writes && lasti + 1 < n && chance(r, 80) ? lasti + 1 : 0;
			memcpy(c->index, ord[lo + rint_(r, n - lo)], PG_NAME);
		}
		if (chance(r, 20))
			random_layout(r, k->a[ai].rank, &c->layout, c->perm);
		if (chance(r, 20))
			c->thrifty = chance(r, 50);
	}
	if (chance(r, 15)) {
		char ord[3 * PG_MAXBI][PG_NAME];
		int n = array_order(k, 0, ord);
		/* not a work-group or work-item loop (mostly) */
		int cand[3 * PG_MAXBI], nc = 0;
		for (int i = 0; i < n; i++) {
			int par = 0;
			for (int p = 0; p < npar; p++) {
				char wi[PG_NAME];
				name_inner(wi, bd->orig[p]);
				par |= strcmp(ord[i], bd->orig[p]) == 0 || strcmp(ord[i], wi) == 0;
			}
			if (!par || chance(r, 5))
				cand[nc++] = i;
		}
		int v = add_verb(k, chance(r, 50) ? PG_UNROLL : PG_VECTORIZE);
		k->v[v].n = 1;
		memcpy(k->v[v].idx[0], ord[nc ? cand[nc - 1 - rint_(r, nc > 1 ? 2 : 1)] : n - 1], PG_NAME);
	}
}

/* The extended families' additions to any kernel, from their own stream x (so a classic kernel
 * keeps its schedule and plan): a tunable param (used as a split size by gen_schedule, or unused as
 * in the reports), and more strided arrays. */
static void extend(pg_kernel *k, rng *x, int tune_share)
{
	if (chance(x, tune_share) && k->np < PG_MAXP) {
		static const int64_t cand[] = {1, 2, 3, 4, 5, 8, 16};
		int p = add_param(k, "TS", 1);
		pg_param *pp = &k->p[p];
		pp->ntune = 2 + rint_(x, 3);
		int first = rint_(x, 7 - pp->ntune + 1);
		for (int i = 0; i < pp->ntune; i++)
			pp->tune[i] = cand[first + i];
		pp->value = pp->tune[rint_(x, pp->ntune)];
	}
	for (int i = 0; i < k->na; i++)
		if (k->a[i].role != 3 && chance(x, 10))
			k->a[i].strided = 1;
	/* --edges: a runtime param given 0 or -1 now and then (check must refuse it) */
	for (int i = 0; k->edges && i < k->np; i++)
		if (k->p[i].runtime && chance(x, 5))
			k->p[i].value = -rint_(x, 2);
}

const char *pg_kind_name(int kind)
{
	static const char *const kinds[PG_NKINDS] = {
		"matmul", "matmul_imperfect", "matvec", "transpose", "stencil1d", "stencil2d", "stencil3d",
		"two_index", "reduce_temp", "wavefront", "accumulator", "inplace_sweep", "imperfect_multi",
		"affine", "sweeps", "distributed", "rowbuf"};
	return kind >= 0 && kind < PG_NKINDS ? kinds[kind] : "?";
}

/* A kernel of the distributed family: its template, types and layouts (runtime params rarely:
 * refused), a schedule, distribute() and caches and loop verbs around it. */
static void gen_dist(pg_kernel *k, rng *r, rng *x)
{
	k->kind = PG_DIST;
	k->variant = (uint32_t)rnext(x);
	k->dtype = rint_(r, 4);
	snprintf(k->name, sizeof k->name, "fz%llu", (unsigned long long)k->seed);
	make_template(k, r);
	decorate(k, r);
	for (int i = 0; i < k->np; i++)
		k->p[i].runtime &= chance(x, 30);
	if (chance(r, 80))
		gen_schedule(k, r);
	k->plan = 1;
	dist_choose(k, r);
	dist_replicate(k);
	if (chance(r, 45))
		gen_host_caches(k, r);
	if (chance(r, 25))
		gen_host_verbs(k, r);
	/* balanced splits do not combine with caches (check refuses it): keep a few such refusals */
	if (k->nc > 0 && chance(r, 90))
		for (int s = 0; s < k->ns; s++)
			k->s[s].balanced = 0;
}

void pg_generate(pg_kernel *k, uint64_t seed, const pg_options *o)
{
	int opencl_share = o->opencl_share, families = o->families;
	rng r = {seed * 0x2545F4914F6CDD1Dull + 12345};
	rng x = {seed * 0x9E3779B97F4A7C15ull + 777}; /* the extended families' own choices */
	memset(k, 0, sizeof *k);
	k->seed = seed;
	k->families = families;
	if (families == PG_FAM_DIST) {
		gen_dist(k, &r, &x);
		return;
	}
	k->edges = o->edges && families != PG_FAM_CLASSIC;
	k->opencl = chance(&r, opencl_share);
	if (!k->opencl && o->cuda_share > 0 && chance(&r, o->cuda_share))
		k->opencl = k->cuda = 1;
	/* the CUDA pass of the extended generator: a quarter of its kernels affine (issue #31), from
	 * a stream of their own (every other seed draws the kernel it drew before) */
	rng y = {seed * 0xD1B54A32D192ED03ull + 31};
	/* doitgen's row buffer: one host kernel in 16 of the extended generator (not --families
	 * affine), from a stream of its own */
	rng z = {seed * 0xA0761D6478BD642Full + 57};
	int cuda_affine = k->cuda && families != PG_FAM_CLASSIC && chance(&y, 25);
	if (k->opencl) {
		static const int okinds[] = {PG_MATMUL, PG_MATMUL, PG_MATVEC, PG_TRANSPOSE, PG_ST1, PG_ST2};
		k->kind = okinds[rint_(&r, 6)];
		if (families == PG_FAM_AFFINE || cuda_affine)
			k->kind = PG_AFFINE;
	} else {
		k->kind = rint_(&r, PG_NCLASSIC);
		/* half of the extended generator's host kernels come from the new templates */
		if (families != PG_FAM_CLASSIC && chance(&x, 50))
			k->kind = PG_NCLASSIC + rint_(&x, PG_DIST - PG_NCLASSIC); /* the distributed family only with --families dist */
		if (families == PG_FAM_AFFINE)
			k->kind = PG_AFFINE;
		else if (families != PG_FAM_CLASSIC && chance(&z, 6))
			k->kind = PG_ROWBUF;
	}
	k->variant = (uint32_t)rnext(&x);
	/* a GPU grid refuses the shapes whose parallel loop's iterations share an array (the strips'
	 * Y[4*s + r0], the in-place Y): three times in four another shape */
	if (k->opencl && k->kind == PG_AFFINE && chance(&y, 75)) {
		if (affine_shape(k) == 8)
			k->variant |= 1u << 10;
		if (affine_shape(k) == 3)
			k->variant ^= 1u;
	}
	k->dtype = rint_(&r, 4);
	snprintf(k->name, sizeof k->name, "fz%llu", (unsigned long long)seed);
	make_template(k, &r);
	decorate(k, &r);
	if (families != PG_FAM_CLASSIC && !k->opencl)
		extend(k, &x, k->kind == PG_AFFINE ? 0 : o->tune_share);
	if (k->kind == PG_AFFINE && !k->opencl) { /* host: schedules, caches and loop verbs */
		/* the strips less often: a register tile needs dk, r, c in that order */
		if (chance(&r, affine_shape(k) == 8 ? 40 : 85))
			gen_schedule(k, &r);
		k->plan = chance(&r, 70);
		if (k->plan) {
			if (affine_shape(k) != 8 || chance(&r, 40)) /* caches break the strips' tiles */
				gen_host_caches(k, &r); /* a region holding an affine loop is refused */
			add_packed_a(k); /* packed=: a stream of its own */
			add_other_nest_cache(k); /* a stream of its own */
			gen_affine_verbs(k, &r);
		}
		return;
	}
	if (k->opencl) {
		k->plan = 1;
		for (int i = 0; i < k->np; i++)
			k->p[i].runtime = 0;
		for (int i = 0; i < k->na; i++) /* strided arrays: rarely (the emitter's gap is a finding) */
			k->a[i].strided &= chance(&r, 15);
		if (k->kind == PG_AFFINE)
			gen_affine_gpu(k, &r);
		else
			gen_opencl(k, &r);
		return;
	}
	if (chance(&r, 85))
		gen_schedule(k, &r);
	k->plan = chance(&r, 90);
	if (k->plan) {
		gen_host_caches(k, &r);
		if (families != PG_FAM_CLASSIC)
			add_other_nest_cache(k); /* a stream of its own */
		gen_host_verbs(k, &r);
	}
	/* balanced splits do not combine with caches yet (check refuses it): keep a few such refusals */
	if (k->nc > 0 && chance(&r, 90))
		for (int s = 0; s < k->ns; s++)
			k->s[s].balanced = 0;
}

/* ------------------------------------------------------------------ printing */

typedef struct obuf {
	char *p;
	size_t n, cap;
} obuf;

static void put(obuf *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(o->p + o->n, o->n < o->cap ? o->cap - o->n : 0, fmt, ap);
	va_end(ap);
	if (m > 0)
		o->n += (size_t)m;
	if (o->n >= o->cap)
		o->n = o->cap ? o->cap - 1 : 0;
}

static const char *dtn(int t)
{
	static const char *n[] = {"f32", "f64", "i32", "i64"};
	return n[t & 3];
}

static const char *rolen(int r)
{
	static const char *n[] = {"input", "output", "inout", "temp", "const"};
	return n[r % 5];
}

static void put_layout(obuf *o, int layout, const int *perm, int rank)
{
	if (layout == 1)
		put(o, "first_major");
	else if (layout == 2)
		put(o, "last_major");
	else {
		put(o, "(");
		for (int d = 0; d < rank; d++)
			put(o, "%s%d", d ? ", " : "", perm[d]);
		put(o, ")");
	}
}

/* Whether every array the kernel writes is an integer one (then no division in the body). */
static int int_kernel(const pg_kernel *k)
{
	for (int i = 0; i < k->na; i++)
		if (!is_int(k->a[i].dtype))
			return 0;
	return 1;
}

/* The wavefront's body: its neighbour terms from variant bits 0-3 (above, left, diagonal,
 * anti-diagonal), an input B with bit 4, the update's form from bits 5-6. Floats: a convex
 * combination (the values stay bounded, so FMA contraction stays within tolerance); integers: one
 * term added, or a min/max of the terms plus a constant (no overflow on any extent drawn). */
static void print_wave(const pg_kernel *k, obuf *o, int ik)
{
	static const char *const terms[] = {"A[i-1, j]", "A[i, j-1]", "A[i-1, j-1]", "A[i-1, j+1]"};
	unsigned mask = k->variant & 15;
	if (!mask)
		mask = 1;
	const char *t[4];
	int n = 0;
	for (int b = 0; b < 4; b++)
		if (mask & (1u << b))
			t[n++] = terms[b];
	int hasB = (k->variant & 16) != 0, form = (k->variant >> 5) & 3;
	int j0 = (mask & 6) ? 1 : 0;
	put(o, "for (i: 1 .. M, j: %d .. %s) {\n  ", j0, (mask & 8) ? "N-1" : "N");
	if (ik) {
		if (n == 1 && form < 2) {
			put(o, "A[i, j] %s %s%s\n", form ? "-=" : "+=", t[0], hasB ? " + B[i, j]" : "");
		} else {
			put(o, "A[i, j] = ");
			for (int m = 0; m < n - 1; m++)
				put(o, "%s(%s, ", form & 1 ? "min" : "max", t[m]);
			put(o, "%s", t[n - 1]);
			for (int m = 0; m < n - 1; m++)
				put(o, ")");
			put(o, " %s %s\n", form & 2 ? "-" : "+", hasB ? "B[i, j]" : "1");
		}
	} else if (form == 0) {
		put(o, "A[i, j] = (A[i, j]");
		for (int m = 0; m < n; m++)
			put(o, " + %s", t[m]);
		put(o, "%s) / %d\n", hasB ? " + B[i, j]" : "", n + 1 + hasB);
	} else {
		/* weights 0.5, 0.25, 0.125, ...: their sum stays below 1 */
		static const char *const w[] = {"0.5", "0.25", "0.125", "0.0625"};
		put(o, "A[i, j] = ");
		for (int m = 0; m < n; m++)
			put(o, "%s%s * %s", m ? (form == 2 && m == 1 ? " - " : " + ") : "", t[m], w[m]);
		put(o, "%s\n", hasB ? " + B[i, j] * 0.0625" : "");
	}
	put(o, "}\n");
}

/* The accumulator: S[0] over the whole nest (bit 0) or R[i] over j, its update from bits 1-2
 * (non-associative: the order of the updates decides the result), bit 3 a second statement that
 * is a plain += reduction into Q[0]. */
static void print_accum(const pg_kernel *k, obuf *o, int ik)
{
	const char *s = (k->variant & 1) ? "S[0]" : "R[i]";
	int form = (k->variant >> 1) & 3;
	put(o, "for (i: M, j: N) {\n  ");
	if (ik) {
		static const char *const f[] = {"%s = A[i, j] - %s", "%s = max(%s - 1, A[i, j])",
						"%s = min(%s + 1, A[i, j] * 2)", "%s = A[i, j] - %s"};
		put(o, f[form], s, s);
	} else {
		static const char *const f[] = {"%s = %s * 0.5 + A[i, j]", "%s = A[i, j] - %s * 0.75",
						"%s = max(%s * 0.5, A[i, j])", "%s = (%s + A[i, j] * A[i, j]) * 0.5"};
		put(o, f[form], s, s);
	}
	put(o, "\n");
	if (k->variant & 8)
		put(o, "  Q[0] += A[i, j]\n");
	put(o, "}\n");
}

/* The in-place sweep: 2-D (bit 0) or 1-D with time steps (bit 1); bit 2 picks the update. */
static void print_gs(const pg_kernel *k, obuf *o, int ik)
{
	int alt = (k->variant & 4) != 0;
	if (k->variant & 1) {
		put(o, "for (x: 1 .. N-1, y: 1 .. M-1) {\n  ");
		if (ik)
			put(o, "A[x, y] = max(min(A[x-1, y], A[x+1, y]), min(A[x, y-1], A[x, y+1])) %s\n", alt ? "- 1" : "+ 1");
		else if (alt)
			put(o, "A[x, y] = A[x, y] * 0.5 + (A[x-1, y] + A[x, y-1]) * 0.25\n");
		else
			put(o, "A[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1]) / 4\n");
	} else {
		put(o, "for (%sx: 1 .. N-1) {\n  ", (k->variant & 2) ? "t: NT, " : "");
		if (ik)
			put(o, "A[x] = %s(A[x-1], A[x+1]) %s\n", alt ? "max" : "min", alt ? "- 1" : "+ 1");
		else if (alt)
			put(o, "A[x] = A[x-1] * 0.5 - A[x] * 0.25 + A[x+1] * 0.25\n");
		else
			put(o, "A[x] = (A[x-1] + A[x] + A[x+1]) / 3\n");
	}
	put(o, "}\n");
}

/* Sweeps in a time loop (make_template's PG_SWEEPS): B from A, C from A and B (bit 1), A from B
 * (and C). Bit 0: the sweeps read rows ahead and behind unevenly (a wider fusion shift); bit 2:
 * the last sweep updates A in place (A = A + ...); bit 3: the first sweep reads B's old value too. */
static void print_sweeps(const pg_kernel *k, obuf *o, int ik)
{
	int uneven = (k->variant & 1) != 0, three = (k->variant & 2) != 0;
	int inplace = (k->variant & 4) != 0, old = (k->variant & 8) != 0;
	put(o, "for (t: NT) {\n");
	put(o, "  for (x: 1 .. N-1, y: 1 .. M-1) {\n    B[x, y] = ");
	if (ik)
		put(o, "max(A[x-1, y], A[x+1, y]) - min(A[x, y-1], A[x, y+1])%s\n", old ? " + B[x, y] / 2" : "");
	else
		put(o, "(A[x, y] + A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1]) * 0.2%s\n",
		    old ? " - B[x, y] * 0.25" : "");
	put(o, "  }\n");
	if (three) {
		put(o, "  for (x3: 1 .. N-1, y3: 1 .. M-1) {\n    C[x3, y3] = ");
		if (ik)
			put(o, "A[x3, y3] - B[x3-1, y3] + B[x3, y3+1] / 2\n");
		else
			put(o, "A[x3, y3] * 0.5 - (B[x3-1, y3] - B[x3, y3+1]) * 0.25\n");
		put(o, "  }\n");
	}
	put(o, "  for (x2: 1 .. N-1, y2: 1 .. M-1) {\n    A[x2, y2] = %s", inplace ? "A[x2, y2] + " : "");
	const char *up = uneven ? "B[x2-1, y2-1]" : "B[x2-1, y2]", *down = uneven ? "B[x2+1, y2+1]" : "B[x2+1, y2]";
	if (ik)
		put(o, "min(%s, %s) - max(B[x2, y2-1], B[x2, y2+1]) / 2%s\n", up, down, three ? " + C[x2, y2] / 4" : "");
	else
		put(o, "(B[x2, y2] + %s + %s + B[x2, y2-1] + B[x2, y2+1]) * %s%s\n", up, down,
		    inplace ? "0.05" : "0.2", three ? " + C[x2, y2] * 0.125" : "");
	put(o, "  }\n}\n");
}

/* The imperfect nest: a statement before the inner loop, several statements (bit 0: a let) in it,
 * one after it (bit 2), and a second nest reading what the first wrote (bit 1). */
/* doitgen's shape (make_template's PG_ROWBUF). Bit 0: q runs from 1; bits 1 and 5: T[0] is not
 * reset in the nest (written once before it), its sum runs on from one (r, q) to the next (not
 * private to q: auto must not expand it); bit 2: the sum's loops written as one band
 * `for (p: P, s: P)` after a loop of resets; bit 3: the row read back reversed
 * (T[P - 1 - p2]); bit 4: a second update of the row (T[p] = T[p] * 2 before the copy, its
 * own loop). */
static void print_rowbuf(const pg_kernel *k, obuf *o)
{
	/* bit 1 only with bit 5: three kernels in four keep T private to q */
	unsigned v = k->variant & ((k->variant & 32) ? ~0u : ~2u);
	const char *lo = v & 2 ? "1 .. P" : "P";
	/* T[0], never reset in the nest, written once before it: a read of an element nothing wrote
	 * is one the fuzzer's output-rule oracle (check_early_reads) counts against check */
	if (v & 2)
		put(o, "for (z: 1) { T[z] = 0 }\n");
	put(o, v & 1 ? "for (r: R, q: 1 .. Q + 1) {\n" : "for (r: R, q: Q) {\n");
	if (v & 4) {
		put(o, "  for (p0: ");
		put(o, lo);
		put(o, ") { T[p0] = 0 }\n  for (p: P, s: P) {\n    T[p] += A[r, q, s] * W[s, p]\n  }\n");
	} else {
		put(o, v & 2 ? "  for (p0: 1 .. P) { T[p0] = 0 }\n  for (p: P) {\n"
		             : "  for (p: P) {\n    T[p] = 0\n");
		put(o, "    for (s: P) { T[p] += A[r, q, s] * W[s, p] }\n  }\n");
	}
	if (v & 16)
		put(o, "  for (p1: P) { T[p1] = T[p1] * 2 }\n");
	put(o, v & 8 ? "  for (p2: P) {\n    A[r, q, p2] = T[P - 1 - p2]\n  }\n}\n"
	             : "  for (p2: P) {\n    A[r, q, p2] = T[p2]\n  }\n}\n");
}

static void print_multi(const pg_kernel *k, obuf *o, int ik)
{
	int row = (k->variant & 8) != 0; /* the temp row T (make_template) */
	/* bit 4 with it: T is a line buffer, written at the end of each row and read (rows i > 0) in
	 * the next, before the statement that writes it (the output rule's exact form) */
	int carried = row && (k->variant & 16) != 0;
	put(o, "for (i: M) {\n  Y[i] = X[i] * 2 + 1\n");
	if (row && !carried)
		put(o, "  for (q: N) {\n    T[q] = X[i] + q\n  }\n");
	put(o, "  for (j: N) {\n");
	const char *rhs = "A[i, j] + Y[i]";
	if (k->variant & 1) {
		put(o, "    let t = A[i, j] * 2 - Y[i]\n");
		rhs = "t + X[i]";
	}
	if (carried)
		put(o, "    if (i > 0) {\n      B[i, j] = %s + T[N-1-j]\n    } else {\n      B[i, j] = %s\n    }\n", rhs, rhs);
	else
		put(o, "    B[i, j] = %s%s\n", rhs, row ? " + T[N-1-j]" : "");
	put(o, ik ? "    C[i, j] = B[i, j] - C[i, j]\n" : "    C[i, j] = C[i, j] * 0.5 + B[i, j]\n");
	put(o, "  }\n");
	if (k->variant & 4)
		put(o, "  Y[i] += B[i, N-1]\n");
	if (carried)
		put(o, "  for (q: N) {\n    T[q] = B[i, q] * 0.5 + q\n  }\n");
	put(o, "}\n");
	if (k->variant & 2)
		put(o, "for (m: M, n: N) {\n  C[m, n] -= A[m, n] * Y[m]\n}\n");
}

/* The affine shape of kernel k: variant bits 0-2, or 8 (strips) for a quarter of them. */
static int affine_shape(const pg_kernel *k)
{
	int hi = (int)((k->variant >> 10) & 3);
	return hi == 0 ? 8 : hi == 1 && ((k->variant >> 12) & 1) ? 9 : (int)(k->variant & 7);
}

/* Whether the syrk-like shape (2) is written unclamped, `j: 0 .. i + 1` (variant bit 13, where
 * its offset is 1: bit 9, or bit 6 clear). */
static int syrk_unclamped(const pg_kernel *k)
{
	return affine_shape(k) == 2 && ((k->variant >> 13) & 1) && (((k->variant >> 9) & 1) || !((k->variant >> 6) & 1));
}

/* The affine nests: trmm-like (shape 0), banded matrix-vector (1), syrk-like lower triangle (2),
 * forward substitution in place (3; bit 9: with lu's left-looking row before it), tetrahedral (4), upper triangle with a clamped start (5),
 * trmm in i-k-j order (6), a banded product with an inner sum (7), trsm's strips (8), tiles of
 * rows whose loop is written with a step (9).
 * Bits 3-5 and 6-8 pick the offsets of the bounds (0..7 around the diagonal), bit 9 the lower
 * or upper form. Every access stays inside its extent for any size drawn: the bounds clamp with
 * the extents (or an `if` does), which check must prove. */
static void print_affine(const pg_kernel *k, obuf *o, int ik)
{
	int shape = affine_shape(k), d = (int)((k->variant >> 3) & 7), e = (int)((k->variant >> 6) & 7);
	int up = (k->variant >> 9) & 1;
	switch (shape) {
	case 0:
		put(o, "for (i: M, j: N) {\n  C[i, j] = %s\n", ik ? "1" : "0.5");
		if (up)
			put(o, "  for (k: max(0, i - %d) .. K) {\n", d);
		else
			put(o, "  for (k: 0 .. min(i + %d, K)) {\n", e + 1);
		put(o, "    C[i, j] += A[i, k] * B[k, j]\n  }\n}\n");
		break;
	case 1:
		put(o, "for (i: M, j: max(0, i - %d) .. min(N, i + %d)) {\n  Y[i] += %s * X[j]\n}\n", d, e + 1,
		    up ? "C[i, j]" : "2");
		break;
	case 2:
		/* bit 13 with the offset 1: `j: 0 .. i + 1`, unclamped (j < M holds): the triangle auto
		 * cuts in blocks when M is large enough (its rows are drawn from 32 .. 79 then); */
		/* bit 14: the columns shifted by c = 1 + 5 d: `j: c .. i + c + 1` (they start past the
		 * first row, up to 36 rows past: beyond auto's first cuts at fuzz sizes, so that its
		 * rectangles must end at m + D) */
		if (syrk_unclamped(k) && ((k->variant >> 14) & 1))
			put(o, "for (i: M, j: %d .. i + %d, k: K) {\n  S[i, j - %d] += A[i, k] * A[j - %d, k]\n}\n",
			    1 + 5 * d, 2 + 5 * d, 1 + 5 * d, 1 + 5 * d);
		else if (syrk_unclamped(k))
			/* bit 15: syr2k's sum of two products, which auto splits in one loop per product
			 * before cutting the triangles (docs/AUTO.md, "sums of products") */
			put(o, "for (i: M, j: 0 .. i + 1, k: K) {\n  S[i, j] += A[i, k] * A[j, k]%s\n}\n",
			    (k->variant >> 15) & 1 ? " + 2 * A[j, k] * A[i, k]" : "");
		else
			put(o, "for (i: M, j: 0 .. min(i + %d, M), k: K) {\n  S[i, j] += A[i, k] * A[j, k]\n}\n",
			    up ? 1 : (e % 2) + 1);
		break;
	case 3:
		put(o, "for (i: M) {\n  Y[i] = %s\n  for (j: max(0, i - %d) .. i) {\n", ik ? "i" : "0.25 * i", d + 1);
		if (up) {
			/* lu's row, left-looking: a sum over k up to j, then statements at j (auto's
			 * right-looking interchange) */
			put(o, "    for (k: max(0, i - %d) .. j) {\n", d + 1);
			put(o, ik ? "      S[i, j] -= min(S[i, k], 3) * min(S[k, j], 3)\n"
			          : "      S[i, j] -= S[i, k] * S[k, j] * 0.25\n");
			put(o, ik ? "    }\n    S[i, j] = min(S[i, j], 7)\n" : "    }\n    S[i, j] = S[i, j] * 0.5\n");
		}
		put(o, ik ? "    Y[i] = Y[i] - min(Y[j], 3)\n" : "    Y[i] -= Y[j] * 0.125\n");
		put(o, "  }\n}\n");
		break;
	case 4:
		put(o, "for (i: M, j: 0 .. min(i + 1, N)) {\n  for (k: j .. min(i + %d, K)) {\n", e + 1);
		put(o, "    C[i, j] += A[i, k] * B[k, j]\n  }\n}\n");
		break;
	case 6:
		put(o, "for (i: M) {\n  for (k: 0 .. min(i + %d, K)) {\n    for (j: N) {\n", e + 1);
		put(o, "      C[i, j] += A[i, k] * B[k, j]\n    }\n  }\n}\n");
		break;
	case 7:
		put(o, "for (i: M, j: max(0, i - %d) .. min(N, i + %d), k: K) {\n", d, e + 1);
		put(o, "  C[i, j] += A[i, k] * B[k, j]\n}\n");
		break;
	case 8:
		/* strips of 4 rows s across the rows dk above them (trsm's diagonal block): C += A * B,
		 * or in place C -= A * C over the rows above the strip (e = 0: the strip's own rows are
		 * never read, so a register tile may hold them; else it reads them and may not) */
		put(o, "for (s: P) {\n  for (r0: 4) {\n    Y[4*s + r0] = %s\n  }\n", ik ? "1" : "0.5");
		if (up)
			put(o, "  for (dk: 0 .. min(4*s + %d, K), r: 4, c: N) {\n"
			       "    C[4*s + r, c] -= A[4*s + r, dk] * C[dk, c]\n", e % 4);
		else
			put(o, "  for (dk: 0 .. min(4*s + %d, K), r: 4, c: N) {\n"
			       "    C[4*s + r, c] += A[4*s + r, dk] * B[dk, c]\n", e);
		put(o, "  }\n}\n");
		break;
	case 9:
		/* tiles of Q rows, the tile loop written with a step; its rows end at Q (Q divides M)
		 * or at min(Q, M - t) (up) */
		put(o, "for (t: 0 .. M step Q) {\n  for (i: %s, j: N) {\n", up ? "0 .. min(Q, M - t)" : "Q");
		put(o, "    C[t + i, j] = %s\n    for (k: K) {\n", ik ? "1" : "0.5");
		put(o, "      C[t + i, j] += A[t + i, k] * B[k, j]\n    }\n  }\n}\n");
		break;
	default:
		put(o, "for (i: M) {\n  for (j: max(i - %d, 0) .. min(N, M)) {\n", d);
		put(o, "    if (j < M) {\n      S[i, j] += A[i, %s] * %s\n    }\n  }\n}\n", up ? "0" : "K - 1",
		    ik ? "2" : "C[i, j]");
		break;
	}
}

/* One subscript: index i shifted by c ("x", "x-2", "x+1"). */
static void put_sub(obuf *o, const char *i, int c)
{
	if (c)
		put(o, "%s%+d", i, c);
	else
		put(o, "%s", i);
}

/* Array a at the stencil's point shifted by off[] (rank n). */
static void put_at(obuf *o, const char *a, int n, const int *off)
{
	static const char *const idx[] = {"x", "y", "z"};
	put(o, "%s[", a);
	for (int e = 0; e < n; e++) {
		if (e)
			put(o, ", ");
		put_sub(o, idx[e], off[e]);
	}
	put(o, "]");
}

/* The stencil's terms (star: the centre and each axis's offsets; box: every combination) as a sum;
 * returns their count. */
static int put_stencil_sum(const pg_kernel *k, obuf *o)
{
	const pg_dist *d = &k->d;
	int n = d->rank, off[3] = {0, 0, 0}, terms = 0;
	if (d->box) {
		int lo[3], hi[3];
		for (int e = 0; e < 3; e++) {
			lo[e] = e < n ? -d->halo[e][0] : 0;
			hi[e] = e < n ? d->halo[e][1] : 0;
			off[e] = lo[e];
		}
		for (;;) {
			put(o, "%s", terms++ ? " + " : "");
			put_at(o, "A", n, off);
			int e = n - 1;
			while (e >= 0 && off[e] == hi[e])
				off[e] = lo[e], e--;
			if (e < 0)
				break;
			off[e]++;
		}
		return terms;
	}
	put_at(o, "A", n, off);
	terms++;
	for (int e = 0; e < n; e++)
		for (int c = -d->halo[e][0]; c <= d->halo[e][1]; c++) {
			if (!c)
				continue;
			off[e] = c;
			put(o, " + ");
			put_at(o, "A", n, off);
			off[e] = 0;
			terms++;
		}
	return terms;
}

/* The stencil shapes: loops over the interior (guard 0) or the whole extent with an if (guard 1:
 * else B = A; guard 2: no else), B from the sum of A's terms (floats: its mean; Jacobi: mixed with
 * B's old value), a second statement C from A and B. */
static void print_dist_stencil(const pg_kernel *k, obuf *o, int ik)
{
	static const char *const ext[] = {"N", "M", "L"}, *const idx[] = {"x", "y", "z"};
	const pg_dist *d = &k->d;
	int n = d->rank, zero[3] = {0, 0, 0}, any = 0;
	for (int e = 0; e < n; e++)
		any |= d->halo[e][0] | d->halo[e][1];
	int guard = any ? d->guard : 0;
	put(o, "for (");
	for (int e = 0; e < n; e++) {
		int lo = guard ? 0 : d->halo[e][0], hi = guard ? 0 : d->halo[e][1];
		put(o, "%s%s: ", e ? ", " : "", idx[e]);
		if (lo)
			put(o, "%d .. ", lo);
		put(o, "%s", ext[e]);
		if (hi)
			put(o, "-%d", hi);
	}
	put(o, ") {\n");
	const char *ind = "  ";
	if (guard) {
		put(o, "  if (");
		int first = 1;
		for (int e = 0; e < n; e++) {
			if (d->halo[e][0])
				put(o, "%s%s >= %d", first ? "" : " && ", idx[e], d->halo[e][0]), first = 0;
			if (d->halo[e][1])
				put(o, "%s%s < %s-%d", first ? "" : " && ", idx[e], ext[e], d->halo[e][1]), first = 0;
		}
		put(o, ") {\n");
		ind = "    ";
	}
	put(o, "%s", ind);
	put_at(o, "B", n, zero);
	put(o, " = ");
	if (d->shape == PG_DS_JACOBI) {
		put_at(o, "B", n, zero);
		put(o, ik ? " + " : " * 0.5 + (");
	} else if (!ik) {
		put(o, "(");
	}
	int terms = put_stencil_sum(k, o);
	if (!ik)
		put(o, ") / %d", d->shape == PG_DS_JACOBI ? 2 * terms : terms);
	put(o, "\n");
	if (guard) {
		if (guard == 1) {
			put(o, "  } else {\n    ");
			put_at(o, "B", n, zero);
			put(o, " = ");
			put_at(o, "A", n, zero);
			put(o, "\n");
		}
		put(o, "  }\n");
	}
	if (d->second) {
		/* B's value where it is written everywhere or holds its input, else A's alone */
		int whole = (guard == 1 || (!guard && !any)) || k->a[1].role == 2;
		put(o, "  ");
		put_at(o, "C", n, zero);
		put(o, " = ");
		put_at(o, "A", n, zero);
		put(o, " * 2");
		if (whole) {
			put(o, " - ");
			put_at(o, "B", n, zero);
		}
		put(o, "\n");
	}
	put(o, "}\n");
}

/* The distributed family's bodies (pg_dist.shape). */
static void print_dist(const pg_kernel *k, obuf *o, int ik)
{
	const pg_dist *d = &k->d;
	switch (d->shape) {
	case PG_DS_ST1:
	case PG_DS_ST2:
	case PG_DS_ST3:
	case PG_DS_JACOBI:
		print_dist_stencil(k, o, ik);
		break;
	case PG_DS_GEMM:
		if (d->form)
			put(o, "for (i: M, j: N) {\n  C[i, j] = 0\n  for (k: K) {\n    C[i, j] += A[i, k] * B[k, j]\n  }\n}\n");
		else
			put(o, "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n");
		break;
	case PG_DS_ROWSUM:
		put(o, "for (i: M, j: N) {\n  %s\n}\n",
		    d->form == 1 ? "Q[j] += A[i, j]" : d->form == 2 ? "R[i] -= A[i, j] * X[j]" : "R[i] += A[i, j] * X[j]");
		break;
	case PG_DS_DOT:
		if (d->rank == 1)
			put(o, "for (x: N) {\n  S[0] += A[x] * B[x]\n}\n");
		else
			put(o, "for (x: N, y: M) {\n  S[0] += A[x, y]\n  B[x, y] = A[x, y] * 2\n}\n");
		break;
	case PG_DS_TRANS:
		put(o, "for (x: N, y: M) {\n  B[y, x] = %s\n}\n", d->form ? "A[x, y] - A[N-1-x, y]" : "A[x, y] + T[y, x]");
		break;
	default:
		switch (d->refuse) {
		case 1:
			if (ik) /* no growth: an integer sweep would overflow */
				put(o, "for (x: 1 .. N-1, y: 1 .. M-1) {\n  A[x, y] = max(min(A[x-1, y], A[x+1, y]), min(A[x, y-1], A[x, y+1])) + 1\n}\n");
			else
				put(o, "for (x: 1 .. N-1, y: 1 .. M-1) {\n  A[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1]) / 4\n}\n");
			break;
		case 2:
			put(o, "for (x: N-1, y: M) {\n  B[x+1, y] = A[x, y]\n}\n");
			break;
		case 3:
			put(o, "for (x: N) {\n  S[0] = max(S[0], A[x])\n}\n");
			break;
		case 4:
			put(o, "for (x: N) {\n  S[0] += A[x]\n  B[x] = S[0]\n}\n");
			break;
		default:
			put(o, "for (x: N-1) {\n  B[x] = A[x] * 2\n  C[x] = B[x+1]\n}\n");
			break;
		}
		break;
	}
}

/* distribute(...) with its grid= (none, auto, PxQ). */
static void print_distribute(const pg_kernel *k, obuf *o)
{
	const pg_dist *d = &k->d;
	put(o, "  distribute(");
	for (int g = 0; g < d->n; g++)
		put(o, "%s%s", g ? ", " : "", d->idx[g]);
	if (d->grid[0] == 0)
		put(o, ", grid=auto");
	else if (d->grid[0] > 0) {
		put(o, ", grid=");
		for (int g = 0; g < d->n; g++)
			put(o, "%s%lld", g ? "x" : "", (long long)d->grid[g]);
	}
	int nrep = 0;
	for (int a = 0; a < k->na && a < 32; a++)
		if (d->repl >> a & 1)
			put(o, "%s%s", nrep++ ? ", " : ", replicate=(", k->a[a].name);
	if (nrep)
		put(o, ")");
	put(o, ")\n");
}

void pg_ranks_of(const pg_kernel *k, char *buf, size_t cap)
{
	obuf o = {buf, 0, cap};
	if (cap)
		buf[0] = 0;
	if (k->kind != PG_DIST)
		return;
	put(&o, "%d", k->d.ranks);
	if (k->d.rungrid) {
		put(&o, " --grid ");
		for (int g = 0; g < k->d.n; g++)
			put(&o, "%s%lld", g ? "x" : "", (long long)k->d.rgrid[g]);
	}
}

static void print_body(const pg_kernel *k, obuf *o)
{
	int ik = int_kernel(k);
	switch (k->kind) {
	case PG_MATMUL:
		put(o, "for (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n");
		break;
	case PG_MATMUL_IMP:
		put(o, "for (i: M, j: N) {\n  C[i, j] = 0\n  for (k: K) {\n    C[i, j] += A[i, k] * B[k, j]\n  }\n}\n");
		break;
	case PG_MATVEC:
		put(o, "for (i: M, j: N) {\n  Y[i] += A[i, j] * X[j]\n}\n");
		if (matvec_passes(k))
			put(o, "for (i2: M, j2: N) {\n  Z[j2] += A[i2, j2] * %s[i2]\n}\n", (k->variant & 2) ? "Y" : "W");
		break;
	case PG_TRANSPOSE:
		put(o, "for (i: M, j: N) {\n  B[j, i] = 2 * A[i, j] + 1\n}\n");
		break;
	case PG_ST1:
		put(o, "for (x: N) {\n  if (%s) {\n    B[x] = %sA[x-1] + A[x] + A[x+1]%s\n  } else {\n    B[x] = A[x]\n  }\n}\n",
		    k->seed % 2 ? "0 < x && x < N-1" : "x >= 1 && x <= N-2", ik ? "" : "(", ik ? "" : ") / 3");
		break;
	case PG_ST2:
		put(o, "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
		       "    B[x, y] = %sA[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]%s\n"
		       "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n",
		    ik ? "" : "(", ik ? "" : ") / 5");
		break;
	case PG_ST3:
		put(o, "for (x: N, y: M, z: L) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1 && 0 < z && z < L-1) {\n"
		       "    B[x, y, z] = A[x-1, y, z] + A[x+1, y, z] + A[x, y-1, z] + A[x, y+1, z] + A[x, y, z-1] + "
		       "A[x, y, z+1] - 2 * A[x, y, z]\n  } else {\n    B[x, y, z] = A[x, y, z]\n  }\n}\n");
		break;
	case PG_TWOIDX:
		put(o, "for (a: V, q: N) {\n  T[a, q] = 0\n  for (p: N) { T[a, q] += C1[p, a] * A[p, q] }\n"
		       "  for (b: V) { B[a, b] += C2[q, b] * T[a, q] }\n}\n");
		break;
	case PG_WAVE:
		print_wave(k, o, ik);
		break;
	case PG_ACCUM:
		print_accum(k, o, ik);
		break;
	case PG_GS:
		print_gs(k, o, ik);
		break;
	case PG_MULTI:
		print_multi(k, o, ik);
		break;
	case PG_SWEEPS:
		print_sweeps(k, o, ik);
		break;
	case PG_AFFINE:
		print_affine(k, o, ik);
		break;
	case PG_DIST:
		print_dist(k, o, ik);
		break;
	case PG_ROWBUF:
		print_rowbuf(k, o);
		break;
	default:
		put(o, "for (i: M) {\n  T[i] = 0\n  for (j: N) {\n    T[i] += A[i, j] * A[i, j]\n  }\n}\n"
		       "for (m: M) {\n  Y[m] = T[m] + X[m]\n}\n");
		break;
	}
}

static int split_printed_in_group(const pg_kernel *k, int s)
{
	for (int t = 0; t < s; t++)
		if (k->s[t].alive && k->s[t].group && k->s[t].group == k->s[s].group)
			return 1;
	return 0;
}

static void print_schedule(const pg_kernel *k, obuf *o)
{
	int any = 0;
	for (int s = 0; s < k->ns; s++)
		any |= k->s[s].alive;
	for (int b = 0; b < k->nb; b++)
		any |= k->b[b].reorder;
	if (!any)
		return;
	put(o, "\nschedule {\n");
	for (int s = 0; s < k->ns; s++) {
		const pg_split *sp = &k->s[s];
		if (!sp->alive || (sp->group && split_printed_in_group(k, s)))
			continue;
		int members[PG_MAXS], nm = 0;
		for (int t = s; t < k->ns; t++)
			if (k->s[t].alive && (t == s || (sp->group && k->s[t].group == sp->group)))
				members[nm++] = t;
		put(o, "  ");
		for (int m = 0; m < nm; m++)
			put(o, "%s%s", m ? ", " : "", k->s[members[m]].inner);
		if (nm == 1 && !sp->group) {
			if (sp->tparam > 0)
				put(o, " = split(%s, %s%s)\n", sp->parent, k->p[sp->tparam - 1].name,
				    sp->balanced ? ", balanced=true" : "");
			else
				put(o, " = split(%s, %lld%s)\n", sp->parent, (long long)sp->size,
				    sp->balanced ? ", balanced=true" : "");
			continue;
		}
		put(o, " = tile(");
		for (int m = 0; m < nm; m++)
			put(o, "%s%s=%lld", m ? ", " : "", k->s[members[m]].parent, (long long)k->s[members[m]].size);
		put(o, "%s)\n", sp->balanced ? ", balanced=true" : "");
	}
	for (int b = 0; b < k->nb; b++) {
		if (!k->b[b].reorder)
			continue;
		char ord[PG_MAXBI][PG_NAME];
		int n = pg_band_order(k, b, ord);
		put(o, "  reorder(");
		for (int i = 0; i < n; i++)
			put(o, "%s%s", i ? ", " : "", ord[i]);
		put(o, ")\n");
	}
	put(o, "}\n");
}

static void print_cache(const pg_kernel *k, const pg_cache *c, obuf *o)
{
	put(o, "  %s = cache(%s", c->name, c->src);
	if (c->place == PG_LEVEL)
		put(o, ", level=%d", c->level);
	else if (c->place == PG_INDEX)
		put(o, ", index=%s", c->index);
	else
		put(o, ", max_elements=%lld", (long long)c->maxel);
	if (c->layout) {
		put(o, ", layout=");
		put_layout(o, c->layout, c->perm, k->a[c->array].rank);
	}
	if (c->thrifty >= 0)
		put(o, ", thrifty=%s", c->thrifty ? "true" : "false");
	if (c->trig == PG_TLEVEL)
		put(o, ", trigger_level=%d", c->tlevel);
	else if (c->trig == PG_TINDEX)
		put(o, ", trigger_index=%s", c->tindex);
	if (c->dbuf)
		put(o, ", double_buffer=true");
	if (c->loc)
		put(o, ", location=%s", c->loc == 1 ? (k->cuda ? "shared" : "local") : c->loc == 2 ? "private" : "global");
	if (c->strat)
		put(o, ", strategy=%s", c->strat == 1 ? "blocked" : "striped");
	if (c->packed)
		put(o, ", packed=%s", c->packed == 1 ? "lower" : "upper");
	put(o, ")\n");
}

static void print_verb(const pg_verbi *v, obuf *o)
{
	static const char *names[] = {"vectorize", "unroll", "parallelize"};
	put(o, "  %s(", names[v->kind]);
	for (int i = 0; i < v->n; i++)
		put(o, "%s%s", i ? ", " : "", v->idx[i]);
	if (v->nontemporal)
		put(o, ", nontemporal=true");
	if (v->by)
		put(o, ", by=%d", v->by);
	if (v->policy)
		put(o, ", policy=%s", v->policy == 1 ? "static" : "dynamic");
	if (v->max_threads)
		put(o, ", max_threads=%d", v->max_threads);
	if (v->spmd)
		put(o, ", spmd=true");
	put(o, ")\n");
}

size_t pg_print(const pg_kernel *k, char *buf, size_t cap)
{
	obuf o = {buf, 0, cap};
	if (cap)
		buf[0] = 0;
	put(&o, "kernel %s\n", k->name);
	int first = 1;
	for (int i = 0; i < k->np; i++) {
		if (k->p[i].runtime || k->p[i].ntune)
			continue;
		put(&o, "%s%s = %lld", first ? "param " : ", ", k->p[i].name, (long long)k->p[i].value);
		first = 0;
	}
	if (!first)
		put(&o, "\n");
	for (int i = 0; i < k->np; i++)
		if (k->p[i].runtime)
			put(&o, "param %s : runtime\n", k->p[i].name);
	for (int i = 0; i < k->np; i++) {
		if (!k->p[i].ntune || k->p[i].runtime)
			continue;
		put(&o, "param %s = %lld tune {", k->p[i].name, (long long)k->p[i].value);
		for (int t = 0; t < k->p[i].ntune; t++)
			put(&o, "%s%lld", t ? ", " : "", (long long)k->p[i].tune[t]);
		put(&o, "}\n");
	}
	for (int i = 0; i < k->na; i++) {
		const pg_array *a = &k->a[i];
		put(&o, "array %s : %s[", a->name, dtn(a->dtype));
		for (int d = 0; d < a->rank; d++)
			put(&o, "%s%s", d ? ", " : "", a->ext[d]);
		put(&o, "] %s", rolen(a->role));
		if (a->layout) {
			put(&o, " layout=");
			put_layout(&o, a->layout, a->perm, a->rank);
		}
		if (a->strided)
			put(&o, " strided");
		put(&o, "\n");
	}
	put(&o, "\n");
	print_body(k, &o);
	print_schedule(k, &o);
	int any = k->plan;
	for (int c = 0; c < k->nc; c++)
		any |= k->c[c].alive;
	for (int v = 0; v < k->nv; v++)
		any |= k->v[v].alive;
	if (any) {
		put(&o, "\nplan%s {\n", k->cuda ? "(target=cuda)" : k->opencl ? "(target=opencl)" : "");
		for (int c = 0; c < k->nc; c++)
			if (k->c[c].alive)
				print_cache(k, &k->c[c], &o);
		for (int v = 0; v < k->nv; v++)
			if (k->v[v].alive)
				print_verb(&k->v[v], &o);
		if (k->kind == PG_DIST && k->d.n > 0)
			print_distribute(k, &o);
		put(&o, "}\n");
	}
	return o.n;
}

void pg_run_with(const pg_kernel *k, char *buf, size_t cap)
{
	obuf o = {buf, 0, cap};
	if (cap)
		buf[0] = 0;
	for (int i = 0; i < k->np; i++)
		if (k->p[i].runtime)
			put(&o, "%s-D %s=%lld", o.n ? " " : "", k->p[i].name, (long long)k->p[i].value);
}

/* ------------------------------------------------------------------ minimizer edits */

static int names_index(const char *a, const char *idx)
{
	return a[0] && strcmp(a, idx) == 0;
}

/* Remove split s, the splits of its inner index and every plan item naming a removed index. */
static void kill_split(pg_kernel *k, int s)
{
	k->s[s].alive = 0;
	const char *gone = k->s[s].inner;
	for (int t = 0; t < k->ns; t++)
		if (k->s[t].alive && strcmp(k->s[t].parent, gone) == 0)
			kill_split(k, t);
	for (int c = 0; c < k->nc; c++) {
		pg_cache *cc = &k->c[c];
		if (!cc->alive)
			continue;
		if ((cc->place == PG_INDEX && names_index(cc->index, gone)))
			cc->place = PG_LEVEL, cc->level = 1;
		if (cc->trig == PG_TINDEX && names_index(cc->tindex, gone))
			cc->trig = PG_TNONE;
	}
	for (int v = 0; v < k->nv; v++)
		for (int i = 0; i < k->v[v].n; i++)
			if (k->v[v].alive && names_index(k->v[v].idx[i], gone))
				k->v[v].alive = 0;
}

static void kill_cache(pg_kernel *k, int c)
{
	k->c[c].alive = 0;
	for (int d = 0; d < k->nc; d++)
		if (k->c[d].alive && k->c[d].parent == c)
			kill_cache(k, d);
}

int pg_edit(const pg_kernel *k, int e, pg_kernel *out)
{
	*out = *k;
	/* 1. whole items: verbs, caches, splits, reorders */
	for (int v = 0; v < k->nv; v++)
		if (k->v[v].alive && e-- == 0)
			return out->v[v].alive = 0, 1;
	for (int c = k->nc - 1; c >= 0; c--)
		if (k->c[c].alive && e-- == 0)
			return kill_cache(out, c), 1;
	for (int s = k->ns - 1; s >= 0; s--)
		if (k->s[s].alive && e-- == 0)
			return kill_split(out, s), 1;
	for (int b = 0; b < k->nb; b++)
		if (k->b[b].reorder && e-- == 0)
			return out->b[b].reorder = 0, 1;
	/* 2. options */
	for (int c = 0; c < k->nc; c++) {
		const pg_cache *cc = &k->c[c];
		pg_cache *oc = &out->c[c];
		if (!cc->alive)
			continue;
		if (cc->layout && e-- == 0)
			return oc->layout = 0, 1;
		if (cc->thrifty >= 0 && e-- == 0)
			return oc->thrifty = -1, 1;
		if (cc->trig && e-- == 0)
			return oc->trig = 0, 1;
		if (cc->dbuf && e-- == 0)
			return oc->dbuf = 0, 1;
		if (cc->strat && e-- == 0)
			return oc->strat = 0, 1;
		if (cc->loc && e-- == 0)
			return oc->loc = 0, 1;
		if (cc->packed && e-- == 0)
			return oc->packed = 0, 1;
		if (cc->place == PG_LEVEL && cc->level > 1 && e-- == 0)
			return oc->level--, 1;
		if (cc->place == PG_MAXEL && cc->maxel > 1 && e-- == 0)
			return oc->maxel /= 2, 1;
	}
	for (int v = 0; v < k->nv; v++) {
		const pg_verbi *vv = &k->v[v];
		pg_verbi *ov = &out->v[v];
		if (!vv->alive)
			continue;
		if (vv->nontemporal && e-- == 0)
			return ov->nontemporal = 0, 1;
		if (vv->by && e-- == 0)
			return ov->by = 0, 1;
		if (vv->policy && e-- == 0)
			return ov->policy = 0, 1;
		if (vv->max_threads && e-- == 0)
			return ov->max_threads = 0, 1;
		if (vv->spmd && e-- == 0)
			return ov->spmd = 0, 1;
		if (vv->n > 1 && e-- == 0)
			return ov->n--, 1;
	}
	for (int s = 0; s < k->ns; s++) {
		if (!k->s[s].alive)
			continue;
		if (k->s[s].balanced && e-- == 0)
			return out->s[s].balanced = 0, 1;
		if (k->s[s].group && e-- == 0) { /* a tile item as separate splits */
			for (int t = 0; t < k->ns; t++)
				if (out->s[t].group == k->s[s].group)
					out->s[t].group = 0;
			return 1;
		}
		if (k->s[s].tparam > 0 && e-- == 0) /* the tunable size as a literal */
			return out->s[s].tparam = 0, out->s[s].size = k->p[k->s[s].tparam - 1].value, 1;
		if (k->s[s].tparam > 0)
			continue;
		if (k->s[s].size > 1 && e-- == 0)
			return out->s[s].size = k->s[s].size / 2, 1;
		if (k->s[s].size > 1 && e-- == 0)
			return out->s[s].size = k->s[s].size - 1, 1;
	}
	int items = 0;
	for (int c = 0; c < k->nc; c++)
		items |= k->c[c].alive;
	for (int v = 0; v < k->nv; v++)
		items |= k->v[v].alive;
	if (k->plan && !items && !k->opencl && e-- == 0)
		return out->plan = 0, 1;
	/* the distributed family: the run's grid and the plan's to auto, fewer ranks, fewer distributed
	 * indices, no second statement, narrower halos, a star for a box */
	if (k->kind == PG_DIST) {
		const pg_dist *d = &k->d;
		pg_dist *od = &out->d;
		int fixed = d->rungrid || d->grid[0] > 0; /* the ranks are the grid's */
		if (d->rungrid && e-- == 0)
			return od->rungrid = 0, 1;
		if (d->grid[0] > 0 && e-- == 0)
			return od->grid[0] = 0, 1;
		if (!fixed && d->ranks > 1 && e-- == 0)
			return od->ranks--, 1;
		if (!fixed && d->n > 1 && e-- == 0)
			return od->n--, 1;
		if (d->second && e-- == 0)
			return od->second = 0, 1;
		if (d->box && e-- == 0)
			return od->box = 0, 1;
		for (int g = 0; g < d->rank; g++)
			for (int side = 0; side < 2; side++)
				if (d->halo[g][side] > 0 && e-- == 0)
					return od->halo[g][side]--, 1;
	}
	/* 3. the body of an extended family: drop a wavefront term, plainer update forms, no let, no
	 * statement after the inner loop (the bits that change no declaration or band) */
	static const uint32_t simpler[PG_NKINDS] = {
		[PG_WAVE] = 1 | 2 | 4 | 8 | 32 | 64, [PG_ACCUM] = 2 | 4, [PG_GS] = 4, [PG_MULTI] = 1 | 4,
		[PG_SWEEPS] = 1 | 4 | 8};
	for (int b = 0; b < 32; b++) {
		uint32_t bit = 1u << b;
		if (!(simpler[k->kind] & bit) || !(k->variant & bit))
			continue;
		if (k->kind == PG_WAVE && b < 4 && !(k->variant & 15 & ~bit))
			continue; /* the last term stays */
		if (e-- == 0)
			return out->variant = k->variant & ~bit, 1;
	}
	/* 4. sizes and declarations */
	for (int p = 0; p < k->np; p++) {
		if (k->p[p].ntune && e-- == 0) { /* drop tune (and the splits it sizes become literals) */
			out->p[p].ntune = 0;
			for (int s = 0; s < k->ns; s++)
				if (out->s[s].tparam == p + 1)
					out->s[s].tparam = 0, out->s[s].size = k->p[p].value;
			return 1;
		}
		if (k->p[p].ntune)
			continue; /* its value must stay one of its candidates */
		if (k->p[p].value > 1 && e-- == 0)
			return out->p[p].value = k->p[p].value / 2, 1;
		if (k->p[p].value > 1 && e-- == 0)
			return out->p[p].value = k->p[p].value - 1, 1;
		if (k->p[p].runtime && e-- == 0)
			return out->p[p].runtime = 0, 1;
	}
	for (int a = 0; a < k->na; a++) {
		if (k->a[a].layout && e-- == 0)
			return out->a[a].layout = 0, 1;
		if (k->a[a].strided && e-- == 0)
			return out->a[a].strided = 0, 1;
		if (k->a[a].dtype != k->dtype && e-- == 0)
			return out->a[a].dtype = k->dtype, 1;
	}
	return 0;
}
