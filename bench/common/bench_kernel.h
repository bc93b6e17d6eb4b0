/* bench_kernel.h: loads a checked kernel's emitted C with OpenMP and finds its entry point and thread setter, for the benches that call cachet's code directly. */
#ifndef BENCH_KERNEL_H
#define BENCH_KERNEL_H

#include <cachet.h>

#include <stdio.h>
#include <string.h>

typedef int (*bench_entry_fn)(void *const *args, const int64_t *params); /* 0, or 1: out of memory */
typedef void (*bench_threads_fn)(int n);

/* Compile src (kernel k's emitted C; path names it in messages) with OpenMP through the code
 * cache and find cachet_NAME_entry and cachet_NAME_set_threads (*set_threads NULL when the code
 * has none). *info says how it was loaded. NULL, a message on stderr, on error. */
static inline bench_entry_fn bench_load_entry(ct_ctx *ctx, const ct_kernel *k, const char *src, const char *path,
                                              bench_threads_fn *set_threads, ct_load_info *info)
{
	ct_module *m;
	ct_compile_options co;
	ct_compile_options_init(&co);
	co.openmp = 1; /* the kernels' parallelize */
	*set_threads = NULL;
	if (ct_module_load(ctx, src, strlen(src), &co, &m, info) != CT_OK) {
		fprintf(stderr, "bench: %s: %s\n", path, ct_ctx_last_message(ctx));
		return NULL;
	}
	char sym[160];
	snprintf(sym, sizeof sym, "cachet_%s_entry", ct_kernel_name(k));
	void *addr = ct_module_symbol(m, sym);
	if (!addr) {
		fprintf(stderr, "bench: %s: no symbol %s\n", path, sym);
		return NULL;
	}
	bench_entry_fn fn;
	memcpy(&fn, &addr, sizeof fn);
	snprintf(sym, sizeof sym, "cachet_%s_set_threads", ct_kernel_name(k));
	addr = ct_module_symbol(m, sym);
	if (addr)
		memcpy(set_threads, &addr, sizeof *set_threads);
	return fn;
}

#endif
