/* plangen.h: the differential fuzzer's kernel model: a random kernel with its schedule and plan as
 * editable records (so the minimizer can drop items and shrink sizes), printed as .cachet text. */
#ifndef PLANGEN_H
#define PLANGEN_H

#include <stddef.h>
#include <stdint.h>

#define PG_NAME 24
#define PG_MAXP 8      /* params */
#define PG_MAXA 8      /* arrays */
#define PG_MAXB 4      /* bands */
#define PG_MAXBI 16    /* indices of one band (originals and split inners) */
#define PG_MAXS 24     /* splits */
#define PG_MAXC 16     /* caches */
#define PG_MAXV 8      /* loop verbs */
#define PG_MAXU 6      /* use paths of one array */

enum pg_kind {
	PG_MATMUL, PG_MATMUL_IMP, PG_MATVEC, PG_TRANSPOSE, PG_ST1, PG_ST2, PG_ST3, PG_TWOIDX, PG_REDTEMP,
	/* the extended families (--families legal|all): what users write beyond the classic templates */
	PG_WAVE,   /* in-place recurrence / wavefront: A[i, j] = f(A[i-1, j], A[i, j-1], ...) */
	PG_ACCUM,  /* accumulator with a non-associative update: S[0] = S[0] * 0.5 + A[i, j] */
	PG_GS,     /* Gauss-Seidel-like in-place stencil, 1-D (with time steps) or 2-D */
	PG_MULTI,  /* imperfect nest: statements between loops, several statements per body, let */
	PG_AFFINE, /* affine loop bounds (issue #31): triangular, banded and tetrahedral nests, with
	              max/min terms; no schedule or plan yet (check refuses them on such kernels) */
	PG_SWEEPS, /* stencil sweeps in a time loop, each reading the other's result (Jacobi's pair,
	              fdtd's three): what `cachet auto` fuses along rows and time-blocks */
	PG_DIST,   /* distribute() over MPI ranks (issue #32, --families dist): stencils with halos,
	              gemm, row sums and dot products (reductions over ranks), transposes, and shapes
	              distribute() must refuse */
	PG_ROWBUF, /* doitgen's row buffer: a temp row written and read per (r, q), the rows replaced
	              in place by their products with a matrix (what `cachet auto` expands along q);
	              drawn from a stream of its own, so the other kinds' seeds stay as they were */
	PG_NKINDS
};
#define PG_NCLASSIC PG_WAVE
/* Which kernels pg_generate draws: the classic templates only (the seeds of make check's first
 * pass), the extended families with schedules that keep every loop-carried dependence's order
 * (legal under today's checks), or everything (reorders that break a dependence included). */
enum pg_families { PG_FAM_CLASSIC, PG_FAM_LEGAL, PG_FAM_ALL, PG_FAM_AFFINE /* the affine family only */,
		  PG_FAM_DIST /* the distributed family only (PG_DIST) */ };
/* The shapes of the distributed family (pg_dist.shape). */
enum pg_dshape {
	PG_DS_ST1, PG_DS_ST2, PG_DS_ST3, /* n-d stencils B[x, ..] = f(A[x+c, ..]) with halos 0..2 */
	PG_DS_JACOBI,  /* 2-D, B inout: B[x, y] = B[x, y] * 0.5 + stencil of A */
	PG_DS_GEMM,    /* C[i, j] += A[i, k] * B[k, j] (perfect, or C = 0 before the k loop) */
	PG_DS_ROWSUM,  /* R[i] += A[i, j] * X[j] or Q[j] += A[i, j]: a reduction over a distributed index */
	PG_DS_DOT,     /* S[0] += A[x] * B[x] (1-D) or S[0] += A[x, y] beside an aligned write (2-D) */
	PG_DS_TRANS,   /* B[y, x] = A[x, y] + T[y, x] (or A[N-1-x, y]): reads of other ranks' blocks */
	PG_DS_REFUSE,  /* a shape distribute() must refuse (pg_dist.refuse says which) */
	PG_DS_N
};
enum pg_place { PG_LEVEL, PG_INDEX, PG_MAXEL };
enum pg_trig { PG_TNONE, PG_TLEVEL, PG_TINDEX };
enum pg_verb { PG_VECTORIZE, PG_UNROLL, PG_PARALLELIZE };

typedef struct pg_param {
	char name[PG_NAME];
	int64_t value;
	int runtime;  /* declared `: runtime`, the value given with ct_kernel_set_param (-D) */
	int ntune;    /* > 0: `tune {tune[0], ...}` (a tunable param: the selector picks its value) */
	int64_t tune[4];
} pg_param;

typedef struct pg_array {
	char name[PG_NAME];
	int dtype;    /* ct_dtype */
	int role;     /* ct_role */
	int rank;
	char ext[3][PG_NAME];
	int layout;   /* 0 none, 1 row_major, 2 col_major, 3 perm */
	int perm[3];
	int strided;
	int npaths;   /* uses: each a list of bands, outermost first */
	int path[PG_MAXU][PG_MAXB];
	int pathlen[PG_MAXU];
} pg_array;

typedef struct pg_band {
	int norig;
	char orig[3][PG_NAME];
	int64_t trips[3];          /* extent of each original index under the params */
	int reorder;               /* print a reorder of this band */
	int nord;
	char ord[PG_MAXBI][PG_NAME]; /* the reorder's list (alive indices only are printed) */
	int carried;               /* the body carries a dependence across this band's loops */
	int fixed[3];              /* an affine loop (PG_AFFINE): never split, and kept after the chain
	                              of dep[] in a reorder (inside the loops its bounds use) */
	char dep[3][PG_NAME];      /* a fixed loop's innermost index its bounds use ("" when outside) */
	int stepped[3];            /* a loop written with a step (the affine family's shape 9): never split */
} pg_band;

typedef struct pg_split {
	int alive;
	int band;
	char inner[PG_NAME], parent[PG_NAME];
	int64_t size;
	int balanced;
	int group;     /* splits of one tile(...) share a group > 0 */
	int tparam;    /* > 0: the size is param tparam-1 (a tune param), printed by name */
} pg_split;

typedef struct pg_cache {
	int alive;
	char name[PG_NAME], src[PG_NAME];
	int array;     /* root array */
	int parent;    /* index of the source cache, -1 for an array */
	int place;     /* pg_place */
	int level;
	char index[PG_NAME];
	int64_t maxel;
	int layout, perm[3];
	int thrifty;   /* -1 absent, 0, 1 */
	int trig, tlevel;
	char tindex[PG_NAME];
	int dbuf;
	int loc;       /* 0 absent, 1 local, 2 private, 3 global */
	int strat;     /* 0 absent, 1 blocked, 2 striped */
	int packed;    /* 0 absent, 1 lower, 2 upper (affine kernels: packed triangular caches) */
} pg_cache;

typedef struct pg_verbi {
	int alive;
	int kind;      /* pg_verb */
	int n;
	char idx[3][PG_NAME];
	int nontemporal, by, policy, max_threads, spmd; /* 0 = absent; policy 1 static 2 dynamic */
} pg_verbi;

/* The distributed family's choices (PG_DIST). */
typedef struct pg_dist {
	int shape;        /* pg_dshape */
	int rank;         /* the stencils' and sums' dimensions */
	int halo[3][2];   /* stencils: reach below and above along each dimension (0..2) */
	int box;          /* stencil terms: every combination (box) rather than the axes (star) */
	int guard;        /* stencils: 0 loop bounds inside the halo, 1 if/else, 2 if without else */
	int second;       /* a second statement in the body */
	int form;         /* a shape's variant: gemm imperfect, row or column sum, -= ... */
	int refuse;       /* PG_DS_REFUSE: 1 in place, 2 write off the index, 3 max into a scalar,
	                     4 a reduction read back, 5 a written array read at another element */
	int split_idx;    /* (any shape) an index from a split distributed: refused */
	int n;            /* distributed indices, outermost first */
	char idx[3][PG_NAME];
	int64_t grid[3];  /* the plan's grid=: 0 auto (grid[0] == -1: no grid= at all) */
	int rungrid;      /* ct_kernel_run_ranks gets rgrid (cachet run --grid) */
	int64_t rgrid[3];
	int ranks;        /* the run's ranks, 1..4 */
	unsigned repl;    /* replicate=: bit a for array a (inputs only), drawn apart (dist_replicate) */
} pg_dist;

typedef struct pg_kernel {
	uint64_t seed;
	int kind;
	char name[PG_NAME];
	int np, na, nb, ns, nc, nv;
	pg_param p[PG_MAXP];
	pg_array a[PG_MAXA];
	pg_band b[PG_MAXB];
	pg_split s[PG_MAXS];
	pg_cache c[PG_MAXC];
	pg_verbi v[PG_MAXV];
	int opencl;    /* a GPU plan: plan(target=opencl), or plan(target=cuda) when cuda is set */
	int cuda;      /* the GPU plan spelled for CUDA: target=cuda, location=shared for local */
	int plan;      /* print a plan block (even empty) */
	int dtype;     /* the kernel's main element type */
	int families;  /* pg_families it was drawn with */
	int edges;     /* pg_options.edges it was drawn with */
	uint32_t variant; /* the body's random choices (extended families), fixed at generation */
	pg_dist d;        /* PG_DIST: the distributed family's choices */
} pg_kernel;

/* What pg_generate draws. */
typedef struct pg_options {
	int opencl_share; /* percent of kernels given an OpenCL plan */
	int cuda_share;   /* percent of the others given the same GPU plan shapes as plan(target=cuda)
	                     (0: the random stream, so every seed's kernel, is as without it) */
	int families;     /* pg_families (PG_FAM_CLASSIC draws exactly the kernels of the classic generator) */
	int tune_share;   /* percent of the extended generator's host kernels given a tunable param */
	int edges;        /* extended generator: now and then split sizes at the 64-bit edge, runtime params
	                     of 0 or -1, a second unroll (compile-time blow-ups) */
} pg_options;

/* Generate kernel number seed (deterministic for one o). */
void pg_generate(pg_kernel *k, uint64_t seed, const pg_options *o);
/* Name of k's template ("matmul", "wavefront", ...). */
const char *pg_kind_name(int kind);
/* Print k as .cachet text into buf (cap bytes); returns the length (truncated text beyond cap). */
size_t pg_print(const pg_kernel *k, char *buf, size_t cap);
/* The ranks (and grid) k's distributed run takes ("4", "4 --grid 2x2"), "" for no PG_DIST. */
void pg_ranks_of(const pg_kernel *k, char *buf, size_t cap);
/* The -D arguments of k's runtime params ("-D M=5 -D N=3"), "" when none. */
void pg_run_with(const pg_kernel *k, char *buf, size_t cap);
/* The loop order (alive indices, outermost first) of band b after the schedule. */
int pg_band_order(const pg_kernel *k, int b, char out[][PG_NAME]);

/* The minimizer's edits: edit number e of kernel k into *out; 0 when e is past the last edit.
 * Edits only remove or shrink (so repeated application terminates). */
int pg_edit(const pg_kernel *k, int e, pg_kernel *out);

#endif
