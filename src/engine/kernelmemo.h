/* kernelmemo.h: the kernel memo of a ctx (in memory): canonical kernel key -> loaded entry points. */
#ifndef CT_KERNELMEMO_H
#define CT_KERNELMEMO_H

#include "core/core.h"

/* The value stored under key (len bytes), or NULL on a miss. A hit costs
 * one XXH3 of the key and one full compare; the entry becomes the most
 * recently used. Counts a hit or a miss. */
void *kernel_memo_get(ct_ctx *ctx, const char *key, size_t len);
/* Store value under key (copied); the least recently used entries go when
 * the cache is full. false on out-of-memory (the cache is optional). */
bool kernel_memo_put(ct_ctx *ctx, const char *key, size_t len, void *value);
/* Drop every entry (e.g. when the modules their values point into unload). */
void kernel_memo_clear(ct_ctx *ctx);

#endif
