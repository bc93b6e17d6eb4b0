/* targets.c: the table of plan targets: names, memory spaces, barriers, how parallelize maps, what runs them. */
#include "ir/targets.h"

#include <stdio.h>
#include <string.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* OpenCL's address spaces (docs/OPENCL.md). */
static const ir_space opencl_spaces[] = {
	{"global", LOC_GLOBAL, "__global"},
	{"local", LOC_LOCAL, "__local"},
	{"private", LOC_PRIVATE, "__private"},
};

/* CUDA's: what OpenCL calls local memory (one copy per work-group) is
 * CUDA's shared memory (one per block), written location=shared. */
static const ir_space cuda_spaces[] = {
	{"global", LOC_GLOBAL, ""},
	{"shared", LOC_LOCAL, "__shared__"},
	{"private", LOC_PRIVATE, ""},
};

/* location=local is refused on CUDA rather than taken as shared: CUDA's own
 * "local memory" is per-thread (spilled registers), the opposite of what an
 * OpenCL reader means, so the plan names the memory the way CUDA does. */
static const ir_space_hint cuda_refused[] = {
	{"local", "OpenCL's local memory is CUDA's shared memory: write location=shared"},
};

/* Row i is target i (checked by tests/unit/test_targets.c). */
static const ir_target_info rows[] = {
	{.id = TARGET_HOST,
	 .name = "host",
	 .title = "host C",
	 .gpu = false,
	 .parallel = IR_PAR_OPENMP,
	 .grid_dims = 0,
	 .grid_unit = "",
	 .spaces = NULL,
	 .nspaces = 0,
	 .refused = NULL,
	 .nrefused = 0,
	 .barrier = "",
	 .checked = true,
	 .native_entry = true,
	 .source_ext = "c"},
	{.id = TARGET_OPENCL,
	 .name = "opencl",
	 .title = "OpenCL",
	 .gpu = true,
	 .parallel = IR_PAR_GRID,
	 .grid_dims = 3,
	 .grid_unit = "work-group",
	 .spaces = opencl_spaces,
	 .nspaces = COUNT(opencl_spaces),
	 .refused = NULL,
	 .nrefused = 0,
	 .barrier = "barrier(CLK_LOCAL_MEM_FENCE)",
	 .checked = false,
	 .native_entry = false,
	 .source_ext = "cl"},
	{.id = TARGET_CUDA,
	 .name = "cuda",
	 .title = "CUDA",
	 .gpu = true,
	 .parallel = IR_PAR_GRID,
	 .grid_dims = 3,
	 .grid_unit = "thread-block",
	 .spaces = cuda_spaces,
	 .nspaces = COUNT(cuda_spaces),
	 .refused = cuda_refused,
	 .nrefused = COUNT(cuda_refused),
	 .barrier = "__syncthreads()",
	 .checked = false,
	 .native_entry = false,
	 .source_ext = "cu"},
};

const char *ct_target_name(int i)
{
	const ir_target_info *r = ir_target_at(i);
	return r ? r->name : NULL;
}

int ir_target_count(void)
{
	return COUNT(rows);
}

const ir_target_info *ir_target_at(int i)
{
	return i >= 0 && i < COUNT(rows) ? &rows[i] : NULL;
}

const ir_target_info *ir_target_row(ir_target t)
{
	const ir_target_info *r = ir_target_at((int)t);
	return r ? r : &rows[TARGET_HOST];
}

const ir_target_info *ir_target_find(const char *name)
{
	for (int i = 0; name && i < COUNT(rows); i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

const ir_target_info *ir_kernel_target(const ct_kernel *k)
{
	return ir_target_row(k && k->has_plan ? k->target : TARGET_HOST);
}

const ir_space *ir_target_space(const ir_target_info *r, const char *word)
{
	for (int i = 0; r && word && i < r->nspaces; i++)
		if (strcmp(r->spaces[i].word, word) == 0)
			return &r->spaces[i];
	return NULL;
}

const char *ir_target_space_word(const ir_target_info *r, ir_location loc)
{
	for (int i = 0; r && i < r->nspaces; i++)
		if (r->spaces[i].loc == loc)
			return r->spaces[i].word;
	return NULL;
}

const char *ir_target_space_hint(const ir_target_info *r, const char *word)
{
	for (int i = 0; r && word && i < r->nrefused; i++)
		if (strcmp(r->refused[i].word, word) == 0)
			return r->refused[i].hint;
	return NULL;
}

char *ir_target_list(char *buf, size_t cap, const char *pre, const char *post, bool gpu_only)
{
	int n = 0, k = 0;
	for (int i = 0; i < COUNT(rows); i++)
		n += !gpu_only || rows[i].gpu;
	size_t len = 0;
	if (cap)
		buf[0] = '\0';
	for (int i = 0; i < COUNT(rows) && len < cap; i++) {
		if (gpu_only && !rows[i].gpu)
			continue;
		const char *sep = k == 0 ? "" : k == n - 1 ? " or " : ", ";
		k++;
		int w = snprintf(buf + len, cap - len, "%s%s%s%s", sep, pre, rows[i].name, post);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}
