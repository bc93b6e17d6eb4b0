/* gen.h: code generators that turn a loop tree into source (the C backend for now). */
#ifndef CT_GEN_H
#define CT_GEN_H

#include "ir/looptree.h"

/* The C source of loop tree t: `int cachet_<name>(arrays..., runtime
 * params...)` plus a uniform entry `int cachet_<name>_entry(void *const
 * *args, const int64_t *params)` (args: one pointer per array in
 * declaration order, temps ignored; params: every param's value in
 * declaration order); both return 0, or 1 when a temp or cache buffer on
 * the heap could not be allocated (no output touched). Temps and the cache buffers of a planned tree
 * (storage t->arrays[k->narrays ..]) are zeroed locals of the kernel
 * function, never arguments; derived values are `const int64_t ct_dI`
 * declared at its start; each cache region is a commented block. Returns a
 * malloc'd string (free()), NULL with an error on the kernel's ctx (a
 * malformed tree gives CT_ERR_INPUT). */
char *gen_c(ct_looptree *t, size_t *len);

/* Checked mode (run --checked): every access of an array or cache buffer
 * is tested against the storage's element count before it happens. The
 * kernel function takes one more argument, `ct_oob *ct_ck` (a gen_oob),
 * and the uniform entry is `int cachet_<name>_checked_entry(void *const
 * *args, const int64_t *params, void *oob)`. A statement runs as written
 * under the tests of its accesses (skipped when one fails); vector loads
 * and stores test their lane range (zeros, or no store); any other access
 * goes to element 0 of its storage (always allocated) when it fails. A
 * failing test records the first violation in *oob (one compare-exchange
 * on its flag, so threads of parallel loops keep one): memory outside a
 * storage is never touched, and the run's results are to be discarded.
 * site numbers the tests in the order of generation. */
typedef struct gen_oob {
	int hit;        /* 0: no violation */
	int site;       /* the test that failed (gen_site) */
	int64_t elem;   /* the element index (dense, linear) */
	int64_t count;  /* the storage's element count */
} gen_oob;

/* What a test site of checked code accesses: storage (t->arrays) and the
 * statement it belongs to (NULL: none), or for a cache's copies the region
 * (-1: none). */
typedef struct gen_site {
	int storage;
	const ir_node *stmt;
	int region;
} gen_site;

/* gen_c, checked when checked is set; with sites not NULL, *sites receives
 * the malloc'd table of test sites (*nsites of them; free()). */
char *gen_c_opts(ct_looptree *t, size_t *len, bool checked, gen_site **sites, int *nsites);

/* The error of violation o of k's checked code: regenerates the code to
 * find the site, then CT_ERR_RUNTIME with "out-of-bounds access to array
 * 'A' (element E of N) in statement at FILE:LINE" (or "in a copy of cache
 * 'AA' (FILE:LINE)") on k's ctx. */
ct_status gen_oob_error(ct_kernel *k, const gen_oob *o);

/* The error for a non-zero status rc of a generated kernel function: 1
 * "could not allocate its temps and cache buffers" (CT_ERR_NOMEM; also
 * when a size overflows for the runtime params), 2 "a loop overflows 64
 * bits with these runtime params" (CT_ERR_LIMIT). Nothing was touched. */
ct_status gen_status_error(ct_kernel *k, int rc);
/* The same for violation o of the checked code of tree t (its sites come
 * from generating t's checked code again). */
ct_status gen_oob_report(ct_looptree *t, const gen_oob *o);

/* What the C of kernel k needs from the compiler: 2 when it has parallel
 * loops (-fopenmp), 1 when it has only vectorized ones (`#pragma omp simd`:
 * -fopenmp-simd), 0 otherwise. Without those flags the code is still
 * correct, serial and left to the compiler's own vectorizer. */
int gen_c_openmp(const ct_kernel *k);

/* The name of `void cachet_NAME_set_threads(int n)`, which the C of a kernel
 * with parallel loops exports: the thread count of its next runs (n <= 0:
 * one per processor). */
void gen_threads_symbol(const ct_kernel *k, char *name, size_t cap);

/* Write the kernel's C symbol names into fn / entry (cap bytes each). */
void gen_symbol_names(const ct_kernel *k, char *fn, char *entry, size_t cap);

/* The signature of the kernel function as C text (for headers of AOT
 * packages), with a comment per argument describing its shape, type,
 * layout and role. malloc'd; NULL on error. */
char *gen_c_prototype(const ct_kernel *k);

/* The MPI program of kernel k, whose plan has distribute() (docs/DISTRIBUTED.md): the per-rank
 * kernel, the runtime and the driver (cachet_NAME_dist, _dist_global, _dist_stats, ...; with
 * -DCTD_MAIN a main() for `cachet run --ranks`). NULL with an error on k's ctx (why k cannot be
 * distributed, or that it has no distribute item). Caller frees. */
char *gen_dist_c(ct_kernel *k, size_t *len);
/* What `check` promises of a kernel with distribute(): dist_analyse's refusals, and that the
 * per-rank kernel lowers and emits (an error from it is said to come from the ranks). CT_OK
 * for a kernel without distribute(). */
ct_status gen_dist_check(ct_kernel *k);

/* Signature of the uniform entry point: 0, or non-zero when the kernel
 * could not allocate its temps and cache buffers (outputs untouched). */
typedef int (*gen_entry_fn)(void *const *args, const int64_t *params);
/* Signature of the checked entry point (gen_c_opts). */
typedef int (*gen_checked_entry_fn)(void *const *args, const int64_t *params, void *oob);

/* Everything that lowering, the plan pass, the loop verbs and the emitter
 * of k's plan target (OpenCL C for plan(target=opencl), C otherwise) would
 * refuse, found without compiling (validate.c): the check behind
 * ct_kernel_parse and ct_kernel_recheck. Runtime params without a value
 * stay symbolic. CT_OK, or the first error on k's ctx, always with a
 * position in the file. */
ct_status gen_validate(ct_kernel *k);

#endif
