/* cgen.h: the C backend's shared state, between the loop/statement emitter (cgen.c) and register tiles (rtile.c). */
#ifndef CT_CGEN_H
#define CT_CGEN_H

/* The most statement instances the automatic `#pragma unroll` of CUDA
 * loops may expand a nest to (cg_unroll_hint): a register tile of 16 x 4
 * over a k-slice of 8 is 512. */
#define CG_UNROLL_BUDGET 1024

#include "gen/gen.h"
#include "gen/kgen.h"

struct cg_shift;

/* The state of one gen_c run. */
typedef struct cg {
	ct_looptree *t;
	const ct_kernel *k;
	kg_ctx *kg;
	int64_t *pval;          /* compile-time param values */
	/* storage: the kernel's arrays, then cache buffers (t->arrays) */
	int narrays;
	const ir_array *arrays;
	/* loop-tree indices: the kernel's, then copy-loop indices (t->indices) */
	int nindices;
	const ir_index *indices;
	char **aname;           /* C names of storage */
	char **iname;           /* C names of indices */
	char **pname;           /* C names of params */
	const char **lname;     /* C names of lets (as kgen returned them) */
	char **stride;          /* per storage, per dim: stride as C text */
	const lt_node **open;   /* per index: the innermost open loop over it */
	/* per index: a constant that replaces the loop variable in the text
	 * (register tiles spell each unrolled iteration and vector lane base) */
	bool *fixed;
	int64_t *fixed_val;
	bool floordiv;          /* ct_floordiv64 is in the preamble */
	const lt_node *band;    /* the parallel loop being emitted */
	int band_left;          /* loops of its collapsed band still to open */
	const lt_node *preduce_at; /* the parallel reduction loop whose copies are open (preduce.c) */
	/* per storage, for per-thread buffers: a stack array of priv_count
	 * elements in the parallel loop's body (else a slice of a heap slab) */
	bool *priv_stack;
	int64_t *priv_count;
	/* register tiles: the widest vector in bytes (from the target, or the
	 * ctx's CT_OPT_VECTOR_BYTES; 0 until first needed) and the vector
	 * types whose typedef and helpers are in the preamble (bit log2(lanes)
	 * of vtypes[0] for float, vtypes[1] for double) */
	int vector_bytes;
	unsigned vtypes[2];
	bool stream_helpers;    /* ct_stream64 and ct_stream_fence are in the preamble (stream.c) */
	bool stream_team;       /* in a parallel loop whose threads fence once at its end (stream.c) */
	bool stream_fence_end;  /* streaming stores outside parallel loops: fence before returning */
	const struct cg_shift *shift; /* while a lane loop is emitted: reads that come from windows (shift.c) */
	unsigned shift_types;   /* the window helpers in the preamble (shift.c) */
	ct_arena arena;         /* bound expressions built while generating */
	/* Backend hooks (the OpenCL backend, oclgen.c; NULL for C): loop is
	 * asked first for every loop and returns true when it emitted it;
	 * region is told when a cache region's kids start (enter) and end. */
	bool (*hook_loop)(struct cg *g, const lt_node *x);
	void (*hook_region)(struct cg *g, const lt_node *x, bool enter);
	/* access: asked first for every access of storage a (subscripts sub)
	 * and returns true when it wrote it (CUDA's register shares) */
	bool (*hook_access)(struct cg *g, ct_buf *b, int a, const aff *sub);
	void *hook_ud;
	/* strided arrays are addressed in their declared dense layout, not
	 * through layout arguments: the OpenCL backend, whose device buffers
	 * (cachet run, the package's wrapper) are always dense copies */
	bool dense_views;
	/* CUDA (oclgen.c): loops with constant bounds and at most this many
	 * trips get `#pragma unroll`, so that per-thread arrays indexed by
	 * them (register tiles) stay in registers, as long as what the
	 * unrolled loops expand to stays within CG_UNROLL_BUDGET statements;
	 * 0: no such hint */
	int unroll_const_max;
	/* while a vector loop with reductions is emitted (cgen.c gen_reduce_loop):
	 * its reduction statements and, for the one at vred[i], the C lvalue of
	 * its private accumulator at the current iteration is "ct_vr<i>" then
	 * vred_at ("[j - ct_vb]", or "" for one scalar accumulator) */
	lt_node *const *vred;
	int nvred;
	const char *vred_at;
	bool *vred_used; /* per vred: taken in this copy of the body (unrolled copies of one statement) */
	bool failed;
	bool entry_checks;      /* the function checks its runtime params (ct_ok) */
	bool reported;          /* an error more precise than "out of memory" is on ctx */
	/* checked mode (gen_c_opts): every access tested first; raw turns the
	 * test off for addresses whose range the caller tests (cg_check_range);
	 * while pend is set, accesses are spelled raw and their tests joined
	 * into *pend with &&, for the caller to put the statement under them
	 * (cg_pend_begin/end): a statement's arithmetic stays one expression
	 * without branches inside, so the compiler contracts a * b + c as in
	 * unchecked code and the results are the same bits */
	bool checked;
	bool raw;
	ct_buf *pend;
	const ir_node *cur_stmt; /* the statement being emitted (for test sites) */
	int cur_region;          /* the innermost cache region being emitted, -1 */
	gen_site *sites;         /* the test sites so far */
	int nsites, capsites;
	char **count;            /* checked: per storage, its element count as C */
	char **dstride;          /* checked: per strided array and dim, its dense stride as C */
} cg;

/* A malformed tree (the plan pass and the backend disagree): a precise
 * error on the kernel's ctx, once. */
void cg_bad(cg *g, const char *what, int id);
/* The element of storage a at subscripts sub[] as C: A[linear offset]. */
void cg_access(cg *g, ct_buf *b, int a, const aff *sub);
/* Checked mode: `ct_inb(ct_ck, SITE, OFFSET + delta, lanes, COUNT)` into b,
 * the test that elements [offset + delta, offset + delta + lanes) of storage
 * a at sub[] lie in it (delta: C text or NULL); nothing outside checked mode. */
void cg_check_range(cg *g, ct_buf *b, int a, const aff *sub, const char *delta, int64_t lanes);
/* Checked mode: collect the tests of the accesses spelled from now into
 * b (initialized here) until cg_pend_end, which returns b's text (NULL
 * when there is none, or outside checked mode). */
void cg_pend_begin(cg *g, ct_buf *b);
const char *cg_pend_end(cg *g, ct_buf *b);
/* Expression e as C converted to type want (integers compute in int64). */
void cg_expr(cg *g, ct_buf *b, const ir_expr *e, ct_dtype want);
/* A loop bound as C; runtime params by name, min/max through helpers. */
void cg_bound(cg *g, ct_buf *b, const bx *x);
/* Emit the nodes v[0..n). */
void cg_nodes(cg *g, lt_node *const *v, int n);

/* Emit loop x as a register tile when it is the reduction loop around an
 * unrolled x vectorized band over one `+=` / `-=` statement whose left-hand
 * side does not move with x (rtile.c); false, with nothing emitted, when
 * the pattern does not apply. */
bool cg_register_tile(cg *g, const lt_node *x);
/* Emit vector loop x with its reduction statements (lt_node.reduce) summed
 * in private accumulators and added to their elements after the loop
 * (vreduce.c); false, with nothing emitted, when x has none. */
bool cg_reduce_loop(cg *g, const lt_node *x);
/* The reduction of vred that statement x updates in this copy of the
 * vector loop's body (the next copy of x not yet emitted), or -1. */
int cg_reduce_slot(cg *g, const lt_node *x);
/* Reduction statement s, the i-th of the vector loop being emitted, as an
 * update of its accumulator (vreduce.c). */
void cg_reduce_stmt(cg *g, const ir_node *s, int i);
/* `#pragma GCC unroll n` before loop x's header where the plan says
 * unroll(x, by=n) (src/gen/cgen.c). */
void cg_unroll_hint(cg *g, const lt_node *x);
/* The trip count of loop x as C (known: the number, or -1 when it depends on
 * runtime params), and the per-thread buffer pointers a parallel band's
 * body uses (src/gen/cgen.c). */
void cg_loop_trips(cg *g, ct_buf *b, const lt_node *x, int64_t *known);
void cg_private_views(cg *g, const lt_node *band);
/* Parallel reductions (src/gen/preduce.c): at entry, after the temps
 * (heap: which are on the heap), one slab of a copy per thread of each
 * array a parallel loop sums into (ct_looptree.pred), freed by
 * cg_preduce_free at exit; around parallel loop x with lt_node.preduce
 * (open before its directive, close after it) the copies zeroed and then
 * added to the arrays in thread order; in its band's body (views) the
 * arrays named as the thread's copy. */
void cg_preduce_slabs(cg *g, const bool *heap);
void cg_preduce_free(cg *g);
void cg_preduce_open(cg *g, const lt_node *x);
void cg_preduce_close(cg *g, const lt_node *x);
void cg_preduce_views(cg *g, const lt_node *band);
/* Emit the parallel band of two indices starting at v[0] whose loops have
 * main and tail versions as one parallel loop over every pair of blocks
 * (src/gen/pgrid.c); returns how many of v[0..n) it emitted (the versions
 * of the outer loop), 0 with nothing emitted where it does not apply. */
int cg_parallel_grid(cg *g, lt_node *const *v, int n);

/* Affine expression x as C (params by name, original indices as the sums
 * of their chains). */
void cg_aff(cg *g, ct_buf *b, aff x);
/* Branch-free forms (bfree.c), unless the ctx asks for CT_OPT_BRANCHING:
 * emit the nest of single loops x .. around a guard if (halo copies) with
 * the guards moved into the loop bounds; emit loop x around a boundary `if`
 * split into boundary and interior pieces. False, with nothing emitted,
 * when the pattern does not apply. */
bool cg_guarded_nest(cg *g, const lt_node *x);
bool cg_split_boundary(cg *g, const lt_node *x);
/* For other backends (oclgen.c): set up g for tree t (false when out of
 * memory), free it, and emit the tree's derived values (`const int64_t
 * ct_dI = ...;`) at the current position of g->kg. dense_views: arrays
 * declared `strided` get their declared dense layout instead of layout
 * arguments (see cg.dense_views). */
bool cg_setup(cg *g, ct_looptree *t, bool dense_views);
/* The text g->kg generated, as a malloc'd string (its length in *len when len
 * is not NULL) when ok, else NULL; g->kg's buffer is released either way. */
char *cg_take_text(cg *g, bool ok, size_t *len);
void cg_teardown(cg *g);
void cg_derived(cg *g);

/* Emit loop x over [from, to) (NULL: x's own bounds) around nodes with
 * streaming stores when x is vectorized with nontemporal=true and nodes are
 * one assignment to an array (stream.c): scalar iterations up to a 64-byte
 * boundary of the stored element, then whole 64-byte lines computed into a
 * local line and stored non-temporally, then the rest, then a store fence;
 * false, with nothing emitted, otherwise. */
bool cg_stream_loop(cg *g, const lt_node *x, const char *from, const char *to, lt_node *const *nodes, int n);
/* The OpenMP directive of parallel loop x with clauses sched (collapse,
 * schedule) and team (num_threads): when x holds a nontemporal vectorized
 * loop, a parallel region whose worksharing loop (nowait) is followed by
 * one store fence per thread, opened here and closed by
 * cg_stream_team_close after the loop; false, with nothing emitted,
 * otherwise. */
bool cg_stream_team_open(cg *g, const lt_node *x, const char *sched, const char *team);
/* After parallel loop x: the fence and the end of the region that
 * cg_stream_team_open opened, if it did. */
void cg_stream_team_close(cg *g, const lt_node *x);
/* At the end of the kernel: a store fence when streaming stores ran outside
 * parallel loops. */
void cg_stream_finish(cg *g);

/* Emit loop x over [from, to) (NULL: x's own bounds) around nodes when x
 * is vectorized and nodes are one assignment that reads a contiguous array
 * at constant offsets of x's index (shift.c): each vector step loads the
 * array's vectors once, carried to the next step, and the offset reads
 * take lanes of two neighbouring vectors; false, with nothing emitted,
 * otherwise. */
bool cg_shift_loop(cg *g, const lt_node *x, const char *from, const char *to, lt_node *const *nodes, int n);
/* While g->shift is set: the read of storage a at sub[] as a window lane
 * (true), or false when it is not one of the windows. */
bool cg_shift_access(cg *g, ct_buf *b, int a, const aff *sub);

/* `const int64_t v = lo + (it - (first)) * step;` for version x of a
 * merged parallel loop whose shared iteration number is it and whose
 * first iteration of x is first (preceded by "tail of v" for a tail). */
void cg_version_var(cg *g, const lt_node *x, const char *it, const char *first);

/* ------------------------------------------------------------ loops (cgen.c): written once for every backend */

/* Loop x's bounds as C text, for its header (cg_range_open .. cg_range_close). */
typedef struct cg_range {
	ct_buf lo, hi;
} cg_range;
/* The bounds of loop x as C into r. */
void cg_range_open(cg *g, const lt_node *x, cg_range *r);
/* Free r; g fails when either bound could not be written. */
void cg_range_close(cg *g, cg_range *r);
/* Open `for (int64_t v = lo; v < hi; v++)` of loop x, `v += step` when the step is not 1 or
 * spell_step is set (OpenCL C has always spelled it; its golden files keep that text). */
void cg_for_open(cg *g, const lt_node *x, const cg_range *r, bool spell_step);
/* Make x the open loop over its index (the version whose variable its body's accesses name);
 * returns the loop it hides, for cg_loop_leave. */
const lt_node *cg_loop_enter(cg *g, const lt_node *x);
void cg_loop_leave(cg *g, const lt_node *x, const lt_node *outer);
/* The kids of loop x with x open. */
void cg_loop_body(cg *g, const lt_node *x);

/* ------------------------------------------------------------ cexpr.c: the expression printer */

/* How one arithmetic operation is written (cg_op): infix (" + ") on floats and vectors, through
 * an overflow-checked helper ("ct_iadd") on integers, and as the bare operator ("+") of a
 * compound assignment. */
typedef struct cg_op_spell {
	const char *infix;
	const char *int_fn;
	const char *bare;
} cg_op_spell;
/* The spelling of EX_ADD, EX_SUB, EX_MUL or EX_DIV (a placeholder for any other kind). */
const cg_op_spell *cg_op(ir_expr_kind k);
/* The spelling of the operation of a compound assignment (AS_ADD, ...). */
const cg_op_spell *cg_assign_op(ir_assign op);
/* The base name of a call's C math function ("fabs"; C adds f for float). */
const char *cg_math_fn(ir_fn fn);
/* Whether t is an integer type (integers compute in int64 in the generated C). */
static inline bool cg_is_int(ct_dtype t) { return t == CT_I32 || t == CT_I64; }
/* An affine expression over original indices, loop variables, trip counts,
 * params and derived values as C (int64). */
void cg_put_aff(cg *g, ct_buf *b, aff x);
/* A bound as C without the parentheses that cg_bound puts around a whole
 * binary operation: `(N / 4) * 4` (for declarations and comments). */
void cg_put_bx_bare(cg *g, ct_buf *b, const bx *x);
/* The element count of the dimensions of storage a after position r of its
 * layout (its stride there), as a folded bound expression: a constant when
 * every size is known, else a product of runtime params (and derived values). */
const bx *cg_layout_product(cg *g, int a, int from);
/* Whether storage a is a kernel array declared `strided`: its base offset
 * and strides are arguments (ct_vo_A, ct_vs_A_D), not constants. */
bool cg_strided_arg(const cg *g, int a);
/* Strides of all storage as C text, from its layout (most major first). */
bool cg_make_strides(cg *g);
/* Checked mode: the element count of every storage as C, and the dense
 * strides of strided arrays (their tests use the dense offset). */
bool cg_make_counts(cg *g);

#endif
