/* gen.h: code generators that turn a loop tree into source (the C backend for now). */
#ifndef CT_GEN_H
#define CT_GEN_H

#include "ir/looptree.h"

/* The C source of loop tree t: `void cachet_<name>(arrays..., runtime
 * params...)` plus a uniform entry `void cachet_<name>_entry(void *const
 * *args, const int64_t *params)` (args: one pointer per array in
 * declaration order, temps ignored; params: every param's value in
 * declaration order). Temps and the cache buffers of a planned tree
 * (storage t->arrays[k->narrays ..]) are zeroed locals of the kernel
 * function, never arguments; derived values are `const int64_t ct_dI`
 * declared at its start; each cache region is a commented block. Returns a
 * malloc'd string (free()), NULL with an error on the kernel's ctx (a
 * malformed tree gives CT_ERR_INPUT). */
char *gen_c(ct_looptree *t, size_t *len);

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

/* Signature of the uniform entry point. */
typedef void (*gen_entry_fn)(void *const *args, const int64_t *params);

/* Everything that lowering, the plan pass, the loop verbs and the emitter
 * of k's plan target (OpenCL C for plan(target=opencl), C otherwise) would
 * refuse, found without compiling (validate.c): the check behind
 * ct_kernel_parse and ct_kernel_recheck. Runtime params without a value
 * stay symbolic. CT_OK, or the first error on k's ctx, always with a
 * position in the file. */
ct_status gen_validate(ct_kernel *k);

/* ------------------------------------------------------------ packages (aot.c, oclpkg.c) */

/* Write data to path atomically (a temp file renamed into place). */
ct_status aot_write_atomic(ct_ctx *ctx, const char *path, const char *data, size_t len);
/* Compile the package source src into lib_a and lib_so (through obj,
 * removed after) with the code cache's compiler, -O3 -march=native; lib
 * (e.g. "-lOpenCL", or NULL) is linked into lib_so; openmp: apply k's
 * OpenMP flags (host kernels). */
ct_status aot_compile_package(ct_kernel *k, const char *src, const char *obj, const char *lib_a, const char *lib_so,
                              const char *lib, bool openmp);
/* The package of a plan(target=opencl) kernel (oclpkg.c): DIR/NAME.cl,
 * NAME.h, NAME.c (the host wrapper embedding the source and this device's
 * binary), libNAME.a, libNAME.so. */
ct_status gen_opencl_package(ct_kernel *k, const char *dir);

#endif
