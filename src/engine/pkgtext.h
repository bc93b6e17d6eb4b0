/* pkgtext.h: the C text the device packages' host wrappers share (oclpkg.c, cudapkg.c). */
#ifndef CT_PKGTEXT_H
#define CT_PKGTEXT_H

#include "engine/engine.h"
#include "gen/ocl.h"

/* Append C for affine x: compile-time params as their values, runtime
 * params as the wrapper's arguments of the same name. */
void pkg_aff(ct_buf *b, const ct_kernel *k, aff x);
/* "input", "output", "inout", "const" or "temp". */
const char *pkg_role_name(ct_role r);
/* Append s (len bytes) as a C string literal, one source line per line
 * (no trigraph survives: a '?' after a '?' is written \?). */
void pkg_c_string(ct_buf *b, const char *s, size_t len);
/* Append one comment line per array of k (temps excluded):
 * " *   NAME: TYPE[EXTENTS] elements, dense, ROLE". */
void pkg_array_docs(ct_buf *b, const ct_kernel *k);
/* Append the statements that compute the launch of L from the index
 * bounds (runtime params included): size_t ct_g[3] (work-items, threads)
 * and ct_l[3] (per work-group, block). */
void pkg_ndrange(ct_buf *b, const ct_kernel *k, const ocl_launch *L);

#endif
