/* distrt.h: the arithmetic of distributed kernels (blocks of a grid of ranks, owned and needed boxes, the messages between ranks), shared by the library and the generated MPI code. */
#ifndef CT_DISTRT_H
#define CT_DISTRT_H

/*
 * distrt.c is compiled into the library (the model counts the bytes of
 * each message with it, src/model) and its text is copied into every
 * generated MPI program (src/gen/distgen.c), so that the ranks and the
 * model cut the same blocks. It uses nothing but <stdint.h> and
 * <string.h>, and every name starts with ctd_.
 *
 * A distributed kernel has naxes distributed loops (axes). Axis g runs
 * the values lo .. hi-1 of its index in blocks of step (the outermost
 * split of the index): trips = ceil((hi - lo) / step). A grid of
 * ranks[g] ranks along each axis gives coordinate c the trips
 * [c*q + min(c, r), ...) with q = trips / ranks, r = trips % ranks (the
 * first r blocks one trip longer). A rank's block of the iteration space
 * is the product of its blocks per axis.
 *
 * An array's dimension is either aligned with an axis (align[d] = g: its
 * elements are owned by the blocks of g, the first block's range reaching
 * down to 0 and the last one's up to the extent) or whole (align[d] = -1:
 * every rank holds the whole dimension). Each access of the array (ref)
 * gives per dimension the subscript's coefficient on each axis index and
 * the range [rlo, rhi] (inclusive) of the rest of the subscript over the
 * other loops.
 */
#include <stdint.h>

/* Empty in the library; `static inline` in generated code (no exported names, no warnings for
 * the functions a kernel does not need). */
#ifndef CTD_FN
#define CTD_FN
#endif

#define CTD_MAX_DIMS 8
#define CTD_MAX_AXES 3
#define CTD_MAX_REFS 32

typedef struct ctd_axis {
	int64_t lo, hi, step;  /* values lo .. hi-1 of the index, in blocks of step */
	int64_t ranks;         /* ranks of the grid along this axis */
} ctd_axis;

typedef struct ctd_ref {
	int write;             /* 1 for the left-hand side of a statement */
	int64_t coef[CTD_MAX_DIMS][CTD_MAX_AXES];
	int64_t rlo[CTD_MAX_DIMS], rhi[CTD_MAX_DIMS];
} ctd_ref;

typedef struct ctd_array {
	int rank;              /* dimensions */
	int esize;             /* bytes per element */
	int role;              /* 0 input, 1 output, 2 inout, 3 temp (never moved) */
	int reduce;            /* bit g: ranks along axis g sum their partial results (+=) */
	int replicated;        /* replicate= of the plan: whole on every rank, never split */
	int64_t ext[CTD_MAX_DIMS];
	int align[CTD_MAX_DIMS];
	/* SUMMA panels: dimension panel_dim (-1: none) is indexed by the panel loop, whose values
	 * plo .. phi-1 run in blocks of pstep; it is split over the ranks of axis panel_axis (an
	 * axis the array is not aligned with), and each call broadcasts one panel after the other
	 * along that axis instead of exchanging halos */
	int panel_dim, panel_axis;
	int64_t plo, phi, pstep;
	int nref;
	ctd_ref ref[CTD_MAX_REFS];
} ctd_array;

/* A box: lo[d] .. hi[d]-1 per dimension; empty when some hi <= lo. */
typedef struct ctd_box {
	int64_t lo[CTD_MAX_DIMS], hi[CTD_MAX_DIMS];
} ctd_box;

/* Trips [b[0], b[1]) of block c of n trips over g blocks. */
CTD_FN void ctd_share(int64_t n, int64_t g, int64_t c, int64_t *b);
/* Trip count of axis a. */
CTD_FN int64_t ctd_trips(const ctd_axis *a);
/* Values [*lo, *hi) of the block of coordinate c along axis a. */
CTD_FN void ctd_block(const ctd_axis *a, int64_t c, int64_t *lo, int64_t *hi);
/* Rank number of coordinates c (row-major over the axes, as MPI_Cart_create numbers them). */
CTD_FN int64_t ctd_rank_of(const ctd_axis *ax, int naxes, const int64_t *c);
/* Coordinates of rank r. */
CTD_FN void ctd_coords(const ctd_axis *ax, int naxes, int64_t r, int64_t *c);
/* Ranks of the grid (the product of ranks[g]). */
CTD_FN int64_t ctd_nranks(const ctd_axis *ax, int naxes);
/* The grid as balanced as possible over nd dimensions for n ranks, largest first (what
 * MPI_Dims_create gives): dims[nd]. */
CTD_FN void ctd_dims_create(int64_t n, int nd, int64_t *dims);

/* Whether box b is empty over rank dimensions; its element count. */
CTD_FN int ctd_box_empty(const ctd_box *b, int rank);
CTD_FN int64_t ctd_box_count(const ctd_box *b, int rank);
/* b = b intersected with c. */
CTD_FN void ctd_box_meet(ctd_box *b, const ctd_box *c, int rank);
/* b = the bounding box of b and c (an empty operand is ignored). */
CTD_FN void ctd_box_join(ctd_box *b, const ctd_box *c, int rank);

/* The box of array a that the rank at coordinates c owns. */
CTD_FN void ctd_owned(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *c, ctd_box *out);
/* The box that ref i of a touches on the rank at c, clipped to the extents (empty when the
 * rank's block is empty). */
CTD_FN void ctd_ref_box(const ctd_array *a, int i, const ctd_axis *ax, int naxes, const int64_t *c, ctd_box *out);
/* The local storage of a on the rank at c: the bounding box of what it owns and touches. */
CTD_FN void ctd_local(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *c, ctd_box *out);
/* The box of a that the rank at `from` sends to the rank at `to` before the kernel runs (what
 * `to` reads of what `from` owns; the bounding box over to's reads): empty when none, or
 * when from == to, or for outputs and temps. */
CTD_FN void ctd_message(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *from, const int64_t *to,
                 ctd_box *out);
/* The end of the panel that starts at value k0: the nearest block end above k0 of any panel
 * array's split (arrays without panels do not count); phi of the first panel array when none. */
CTD_FN int64_t ctd_panel_next(const ctd_array *arrs, int narrays, const ctd_axis *ax, int64_t k0);
/* The coordinate along a's panel axis that owns panel value k0. */
CTD_FN int64_t ctd_panel_owner(const ctd_array *a, const ctd_axis *ax, int64_t k0);
/* The panel [k0, k1) of a that the rank at c receives: its owned box with the panel
 * dimension set to [k0, k1). */
CTD_FN void ctd_panel_box(const ctd_array *a, const ctd_axis *ax, int naxes, const int64_t *c, int64_t k0, int64_t k1,
                          ctd_box *out);
/* Whether the rank at c holds a's owned box as its canonical copy: coordinate 0 on every axis
 * that no dimension of a is aligned with (replicated copies and partial sums end there). */
CTD_FN int ctd_canonical(const ctd_array *a, int naxes, const int64_t *c);

#endif
