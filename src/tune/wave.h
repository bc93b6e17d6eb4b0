/* wave.h: auto's wavefront of rows for in-place sweeps (Gauss-Seidel; docs/AUTO.md). */
#ifndef CT_WAVE_H
#define CT_WAVE_H

#include "ir/ir.h"
#include "tune/tune.h"

/* The machine facts the choice of rows reads (auto's description of the probe). */
typedef struct wave_machine {
	int fma_latency;   /* cycles from one dependent operation to the next */
	int fma_units;     /* operations issued per cycle */
	int registers;     /* vector registers */
} wave_machine;

/* A nest that runs as a wavefront: `for (outer.., i, j) { S }` becomes, for
 * each value of the outer loops, blocks of `rows` rows of i, each block's
 * rows advancing together along j with row ib + u `lag * u` columns behind
 * row ib. */
typedef struct wave_plan {
	const ir_node *top;      /* the nest (a child of the kernel's body) */
	const ir_node *stmt;     /* its one statement */
	int nouter;
	int outer[8];            /* the loops around the row loop (index ids, outermost first) */
	int row, col;            /* the row loop i and the column loop j (index ids) */
	int64_t lag_min;         /* the least lag that keeps every dependence */
	int64_t lag;             /* the lag written: every dependence then ends in a later step */
	int64_t tight_di, tight_dj; /* the dependence across rows that sets the lag */
	int64_t rows;            /* rows in flight (the param) */
	int chain_ops;           /* operations from the carried value to the statement's result */
	int point_ops;           /* operations of one point */
	double chain_cycles, point_cycles; /* their latency, and the issue of a point's operations */
	int latency, units;      /* the machine facts they came from */
	int64_t rows_cap;        /* half the vector registers, the row loop's trip, the unroll limit */
} wave_plan;

/* Whether nest `top` (a top-level for of k, parameter values pv) is an
 * in-place sweep that a wavefront of rows makes faster and keeps exact:
 * a perfect band `for (outer.., i, j)` (rectangular loops, unit steps) over
 * one statement writing X[.., i + a, .., j + b, ..] whose accesses of X all
 * move the same way, with a dependence along j through the statement's own
 * result (a latency chain) and one across the rows. Fills *w (the lag, the
 * rows from m) when so. */
CT_INTERN bool wave_find(const ct_kernel *k, const int64_t *pv, const wave_machine *m, const ir_node *top,
                         wave_plan *w);

/* The names the rewrite declares (fresh in the kernel): the block loop of
 * the rows, the row within the block (unrolled), the step along the
 * columns, and the rows param. */
typedef struct wave_names {
	const char *block, *row, *step, *rows;
} wave_names;

/* Source offsets in k->text the rewrite needs: where the nest's text
 * starts, its statement's text [stmt_lo, stmt_hi) (a trailing comment
 * left out), and the end of the last param line (where the rows param
 * goes). */
typedef struct wave_src {
	size_t nest_lo, stmt_lo, stmt_hi, params_end;
} wave_src;

/* The text of k with nest w->top written as the wavefront (names nm), and
 * into note the comment lines that say what and why; NULL when it cannot
 * be written. */
CT_INTERN char *wave_text(const ct_kernel *k, const wave_plan *w, const wave_names *nm, const wave_src *src,
                          ct_buf *note);

/* The plan items the wavefront needs in the auto run of its rewritten
 * kernel: `unroll(x)` for each token "+x" of keep (auto's list of the names
 * its rewrites made) that names an index of k, appended to plan. */
CT_INTERN void wave_plan_items(const ct_kernel *k, const char *keep, ct_buf *plan);

#endif
