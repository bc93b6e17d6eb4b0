/* slots.h: the run-time layout values (slots) of strided arrays that the generated code and the interpreter take after the params. */
#ifndef CT_SLOTS_H
#define CT_SLOTS_H

#include "ir/ir.h"

/*
 * A `strided` array takes its physical layout with the call: one base
 * offset and one stride per dimension, in elements. Element (i0, .., ir-1)
 * of the kernel's logical indices lives at data[base + i0*s0 + ... ].
 * These values follow the params in the params[] of the uniform entry and
 * of the interpreter: params[nparams + view_slot(k, a)] is array a's base,
 * the next rank values its strides. Arrays that are not strided have no
 * slot: their layout is known when the code is generated.
 */

/* First slot of array a (relative to nparams), or -1 when a is not strided. */
int view_slot(const ct_kernel *k, int a);
/* Number of slots of all strided arrays of k. */
int view_slots(const ct_kernel *k);
/* The dense strides of array a in its declared layout under params pv (one
 * per dimension, in elements); false on overflow. */
bool view_dense_strides(const ct_kernel *k, int a, const int64_t *pv, int64_t *stride);
/* The slots of a dense run (every array in its declared layout, base 0),
 * from the param values pv (k->nparams of them); out has view_slots(k). */
void view_dense_values(const ct_kernel *k, const int64_t *pv, int64_t *out);

#endif
