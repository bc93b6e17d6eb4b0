/* json.h: JSON output built with jansson and printed the one way cachet prints it: one line, `{"a": 1, "b": [2, 3]}`. */
#ifndef CT_JSON_H
#define CT_JSON_H

#include "core/core.h"

#include <jansson.h>

/* obj[key] = v (v taken). *ok becomes false when v is NULL (out of memory,
 * or a string that is not UTF-8) or the insert fails; v is released then. */
CT_INTERN void ct_json_set(json_t *obj, const char *key, json_t *v, bool *ok);
/* Append v to arr (v taken); *ok as for ct_json_set. */
CT_INTERN void ct_json_push(json_t *arr, json_t *v, bool *ok);
/* A string, or JSON null for NULL. */
CT_INTERN json_t *ct_json_str_or_null(const char *s);
/* A text that may not be UTF-8 (a file name, a folder from the
 * environment): each byte that is not part of a well-formed UTF-8 sequence
 * becomes U+FFFD, so the object can still be printed; JSON null for NULL;
 * NULL only when memory runs out. */
CT_INTERN json_t *ct_json_text(const char *s);
/* A number rounded as printf's %.{sig}g rounds: integral values print as
 * integers (0, not 0.0), others with up to 9 significant digits; NaN and the
 * infinities, which JSON cannot say, are null. */
CT_INTERN json_t *ct_json_real(double v, int sig);
/* A number rounded to `decimals` places (printf's %.{decimals}f), printed
 * without trailing zeros (0.5, not 0.5000; 1, not 1.0000). */
CT_INTERN json_t *ct_json_fixed(double v, int decimals);
/* A yes/no/unknown flag as cachet keeps them (1, 0, -1: "verified"):
 * true, false, or null. */
CT_INTERN json_t *ct_json_tristate(int v);
/* An array of n integers. */
CT_INTERN json_t *ct_json_ints(const int64_t *v, int n);
/* v (taken) as one line of text ending in "\n" (malloc'd, the caller frees
 * it); NULL when v is NULL or memory runs out. Keys keep their insertion
 * order; non-ASCII text is escaped. */
CT_INTERN char *ct_json_line(json_t *v);

#endif
