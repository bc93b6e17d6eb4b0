/* kernelmemo.c: the kernel memo of a ctx (in memory): canonical kernel bytes -> loaded entry point, bounded, LRU. */
#include "engine/kernelmemo.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define PC_BUCKETS 512        /* power of two */
#define PC_DEFAULT_MAX 256    /* entries kept before the least recently used goes */

typedef struct pc_entry {
	uint64_t hash;
	char *key;
	size_t klen;
	void *value;
	struct pc_entry *chain;          /* bucket list */
	struct pc_entry *older, *newer;  /* LRU list */
} pc_entry;

typedef struct kernel_memo {
	pc_entry *bucket[PC_BUCKETS];
	pc_entry *newest, *oldest;
	int64_t entries, max_entries;
	int64_t hits, misses, evictions;
} kernel_memo;

static void pc_release(ct_ctx *ctx)
{
	kernel_memo *pc = ctx->kernel_memo;
	if (!pc)
		return;
	kernel_memo_clear(ctx);
	ct_free(ctx, pc);
	ctx->kernel_memo = NULL;
}

static kernel_memo *pc_get(ct_ctx *ctx)
{
	if (ctx->kernel_memo)
		return ctx->kernel_memo;
	kernel_memo *pc = ct_alloc(ctx, sizeof *pc);
	if (!pc)
		return NULL;
	if (!ct_ctx_on_free(ctx, pc_release)) {
		ct_free(ctx, pc);
		return NULL;
	}
	pc->max_entries = PC_DEFAULT_MAX;
	ctx->kernel_memo = pc;
	return pc;
}

static void lru_unlink(kernel_memo *pc, pc_entry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		pc->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		pc->newest = e->older;
	e->older = e->newer = NULL;
}

static void lru_push(kernel_memo *pc, pc_entry *e)
{
	e->older = pc->newest;
	e->newer = NULL;
	if (pc->newest)
		pc->newest->newer = e;
	pc->newest = e;
	if (!pc->oldest)
		pc->oldest = e;
}

static void entry_remove(ct_ctx *ctx, kernel_memo *pc, pc_entry *e)
{
	pc_entry **p = &pc->bucket[e->hash & (PC_BUCKETS - 1)];
	while (*p && *p != e)
		p = &(*p)->chain;
	if (*p)
		*p = e->chain;
	lru_unlink(pc, e);
	ct_free(ctx, e->key);
	ct_free(ctx, e);
	pc->entries--;
}

void *kernel_memo_get(ct_ctx *ctx, const char *key, size_t len)
{
	kernel_memo *pc = pc_get(ctx);
	if (!pc)
		return NULL;
	uint64_t h = XXH3_64bits(key, len);
	for (pc_entry *e = pc->bucket[h & (PC_BUCKETS - 1)]; e; e = e->chain)
		if (e->hash == h && e->klen == len && memcmp(e->key, key, len) == 0) {
			pc->hits++;
			if (pc->newest != e) {
				lru_unlink(pc, e);
				lru_push(pc, e);
			}
			return e->value;
		}
	pc->misses++;
	return NULL;
}

bool kernel_memo_put(ct_ctx *ctx, const char *key, size_t len, void *value)
{
	kernel_memo *pc = pc_get(ctx);
	if (!pc)
		return false;
	pc_entry *e = ct_alloc(ctx, sizeof *e);
	char *k = e ? ct_alloc(ctx, len ? len : 1) : NULL;
	if (!k) {
		ct_free(ctx, e);
		return false;
	}
	memcpy(k, key, len);
	e->key = k;
	e->klen = len;
	e->hash = XXH3_64bits(key, len);
	e->value = value;
	pc_entry **b = &pc->bucket[e->hash & (PC_BUCKETS - 1)];
	e->chain = *b;
	*b = e;
	lru_push(pc, e);
	pc->entries++;
	while (pc->entries > pc->max_entries && pc->oldest) {
		entry_remove(ctx, pc, pc->oldest);
		pc->evictions++;
	}
	return true;
}

void kernel_memo_clear(ct_ctx *ctx)
{
	kernel_memo *pc = ctx->kernel_memo;
	while (pc && pc->oldest)
		entry_remove(ctx, pc, pc->oldest);
}

ct_status ct_kernel_memo_stats(ct_ctx *ctx, ct_kernel_memo_info *info)
{
	if (!ctx || !info)
		return CT_ERR_USAGE;
	memset(info, 0, sizeof *info);
	kernel_memo *pc = pc_get(ctx);
	if (!pc)
		return ct_ctx_last_status(ctx);
	info->entries = pc->entries;
	info->max_entries = pc->max_entries;
	info->hits = pc->hits;
	info->misses = pc->misses;
	info->evictions = pc->evictions;
	return CT_OK;
}

ct_status ct_kernel_memo_set_max(ct_ctx *ctx, int64_t entries)
{
	if (!ctx)
		return CT_ERR_USAGE;
	if (entries < 1 || entries > (1 << 20))
		return ct_error(ctx, CT_ERR_USAGE, "kernel memo size must be in 1..1048576");
	kernel_memo *pc = pc_get(ctx);
	if (!pc)
		return ct_ctx_last_status(ctx);
	pc->max_entries = entries;
	while (pc->entries > pc->max_entries && pc->oldest) {
		entry_remove(ctx, pc, pc->oldest);
		pc->evictions++;
	}
	return CT_OK;
}
