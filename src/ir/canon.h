/* canon.h: canonical serialization of a kernel for the kernel memo. */
#ifndef CT_CANON_H
#define CT_CANON_H

#include "ir/ir.h"

/* The canonical bytes of k for target (NULL = "host"): the kernel name,
 * every param's kind and compile-time value, the arrays, the indices, the
 * statements, the schedule and the plan, with every other name alpha-renamed
 * to its number (two files differing only in index, array or param names
 * give the same bytes) and no address or position. malloc'd (free()), NULL
 * on out-of-memory; *len is the byte count (the text holds no NUL). */
char *canon_kernel(const ct_kernel *k, const char *target, size_t *len);

#endif
