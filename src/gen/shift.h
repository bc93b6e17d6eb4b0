/* shift.h: lane-shift windows for vectorized loops that read one array at constant offsets of the vectorized index (shift.c). */
#ifndef CT_SHIFT_H
#define CT_SHIFT_H

#include "gen/cgen.h"

#define SH_MAX_GROUPS 8
#define SH_MAX_WINS 32
/* how far ahead of a vector step the leading row is prefetched (shift.c) */
#define SH_PREFETCH_BYTES 4096

/* Reads of one storage that differ only in the constant of the subscript
 * that the vectorized index moves: A[x, y-1], A[x, y], A[x, y+1]. */
typedef struct sh_group {
	int a;                    /* storage */
	int dim;                  /* the subscript that moves with the index (stride 1) */
	aff sub[IR_MAX_RANK];     /* the subscripts with that one's constant 0: the base */
	int64_t cmin, cmax;       /* constants of every read of the group */
	bool before, after;       /* a window needs the vector before / after the base's */
	bool center;              /* a read at offset 0 (from the step's own vector where it is loaded) */
} sh_group;

/* One window: the lanes of group grp at offset c (0 < |c| < lanes). */
typedef struct sh_win {
	int grp;
	int64_t c;
} sh_win;

/* The windows of one vectorized loop's statement. */
typedef struct cg_shift {
	int v;                    /* the vectorized index */
	int64_t w;                /* lanes of one step of the vector loop */
	const char *base;         /* C name of the first lane's value of v */
	int ngroups;
	sh_group grp[SH_MAX_GROUPS];
	int nwins;
	sh_win win[SH_MAX_WINS];
} cg_shift;

/* Find the windows of statement s in a loop over index v of w lanes into
 * *sp; false when there is none (no read at an offset 0 < |c| < w of a
 * contiguous f32/f64 array other than the one s writes). */
bool sh_plan(cg *g, const ir_node *s, int v, int64_t w, cg_shift *sp);
/* C text of the first and last starts of a vector step at which every
 * load of the windows stays within what the loop over [from, to) reads:
 * "from + k" and "to + k" into lo and hi. */
void sh_range(const cg_shift *sp, const char *from, const char *to, ct_buf *lo, ct_buf *hi);
/* Before the vector steps (base names the first step's start): the
 * carried vectors, loaded. */
void sh_prime(cg *g, cg_shift *sp);
/* At the top of a vector step: the vectors not carried, loaded, and the
 * windows built from them (then g->shift = sp while the lane loop is
 * emitted, so that the reads become window lanes). */
void sh_step_begin(cg *g, cg_shift *sp);
/* At the end of a vector step: the carried vectors move on by one step. */
void sh_step_end(cg *g, const cg_shift *sp);
/* Address text (&A[...]) of group 0's base at the base of sp. */
void sh_base_addr(cg *g, const cg_shift *sp, int grp, ct_buf *b);

#endif
