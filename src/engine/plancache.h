/* plancache.h: the in-memory plan cache (canonical kernel key -> loaded kernel). */
#ifndef CT_PLANCACHE_H
#define CT_PLANCACHE_H

#include "core/core.h"

/* The value stored under key (len bytes), or NULL on a miss. A hit costs
 * one XXH3 of the key and one full compare; the entry becomes the most
 * recently used. Counts a hit or a miss. */
void *plan_cache_get(ct_ctx *ctx, const char *key, size_t len);
/* Store value under key (copied); the least recently used entries go when
 * the cache is full. false on out-of-memory (the cache is optional). */
bool plan_cache_put(ct_ctx *ctx, const char *key, size_t len, void *value);
/* Drop every entry (e.g. when the modules their values point into unload). */
void plan_cache_clear(ct_ctx *ctx);

#endif
