/* test_checked.c: checked native code (run --checked): the same results as unchecked code, bit for bit, and the first access outside a storage reported, never made. */
#include "cachet.h"
#include "gen/gen.h"
#include "harness.h"
#include "engine/engine.h"
#include "ir/slots.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* A kernel from text (file names the source in messages). */
static ct_kernel *parse(ct_ctx *ctx, const char *text, const char *file)
{
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), file);
	if (!k)
		fprintf(stderr, "parse: %s\n", ct_ctx_last_message(ctx));
	return k;
}

/* The -D values of a `# run-with: -D A=1 -D B=2` line of text, applied to k. */
static void apply_run_with(ct_kernel *k, const char *text)
{
	const char *p = strstr(text, "# run-with:");
	if (!p)
		return;
	const char *end = strchr(p, '\n');
	char line[256];
	size_t n = end ? (size_t)(end - p) : strlen(p);
	if (n >= sizeof line)
		n = sizeof line - 1;
	memcpy(line, p, n);
	line[n] = 0;
	for (char *q = strstr(line, "-D "); q; q = strstr(q, "-D ")) {
		q += 3;
		char name[64];
		long long v;
		if (sscanf(q, "%63[A-Za-z0-9_]=%lld", name, &v) == 2)
			ct_kernel_set_param(k, name, v);
	}
	ct_kernel_recheck(k);
}

/* The checked or unchecked code of k, compiled and loaded: its entry
 * (checked: the checked entry) and thread setter; false on failure. */
static bool load(ct_ctx *ctx, ct_kernel *k, bool checked, void **entry, void (**set_threads)(int))
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	char *src = t ? gen_c_opts(t, NULL, checked, NULL, NULL) : NULL;
	ct_looptree_free(t);
	if (!src) {
		fprintf(stderr, "generate: %s\n", ct_ctx_last_message(ctx));
		return false;
	}
	ct_compile_options co;
	ct_compile_options_init(&co);
	static const char *const simd[] = {"-fopenmp-simd"};
	co.openmp = gen_c_openmp(k) == 2;
	if (gen_c_openmp(k) == 1) {
		co.flags = simd;
		co.nflags = 1;
	}
	ct_module *m = NULL;
	ct_status st = ct_module_load(ctx, src, strlen(src), &co, &m, NULL);
	free(src);
	if (st) {
		fprintf(stderr, "compile: %s\n", ct_ctx_last_message(ctx));
		return false;
	}
	char name[300];
	snprintf(name, sizeof name, checked ? "cachet_%s_checked_entry" : "cachet_%s_entry", ct_kernel_name(k));
	*entry = ct_module_symbol(m, name);
	*set_threads = NULL;
	if (gen_c_openmp(k) == 2) {
		gen_threads_symbol(k, name, sizeof name);
		void *s = ct_module_symbol(m, name);
		if (s)
			memcpy(set_threads, &s, sizeof s);
	}
	return *entry != NULL;
}

/* One run of a loaded entry on buffers with k's param values; *oob filled
 * for checked code. The entry's status. */
static int call(ct_kernel *k, void *entry, bool checked, void *const *buffers, gen_oob *oob)
{
	int64_t params[256];
	if (k->nparams + view_slots(k) > 256)
		return -1;
	ir_param_values(k, params);
	view_dense_values(k, params, params + k->nparams);
	memset(oob, 0, sizeof *oob);
	if (checked) {
		gen_checked_entry_fn f;
		memcpy(&f, &entry, sizeof f);
		return f(buffers, params, oob);
	}
	gen_entry_fn f;
	memcpy(&f, &entry, sizeof f);
	return f(buffers, params);
}

/* ------------------------------------------------------------ the same results */

/* The first byte where x and y (n bytes each) differ, -1 when none. */
static int64_t first_difference(const void *x, const void *y, int64_t n)
{
	const unsigned char *p = x, *q = y;
	for (int64_t i = 0; i < n; i++)
		if (p[i] != q[i])
			return i;
	return -1;
}

/* Every host example: the checked code computes the unchecked code's
 * outputs bit for bit (2 threads where it has parallel loops) and notes no
 * violation. */
/* Outputs of the examples that are the same bits checked and unchecked. */
static int exact;

static void equal_for_example(const char *path)
{
	FILE *f = fopen(path, "rb");
	CHECKF(f != NULL, "%s", path);
	if (!f)
		return;
	static char text[65536];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	if (strstr(text, "target=opencl"))
		return; /* --checked covers host kernels */
	ct_ctx *ctx = ct_ctx_new();
	ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, 64); /* the widest register tiles, masked chunks included */
	ct_kernel *k = parse(ctx, text, path);
	CHECKF(k != NULL, "%s", path);
	if (k)
		apply_run_with(k, text);
	void *plain = NULL, *checked = NULL;
	void (*st_plain)(int) = NULL, (*st_checked)(int) = NULL;
	bool ok = k && load(ctx, k, false, &plain, &st_plain) && load(ctx, k, true, &checked, &st_checked);
	CHECKF(ok, "%s: load", path);
	run_buffers in, a, b;
	memset(&in, 0, sizeof in);
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (ok)
		ok = !run_buffers_alloc(k, &in, true) && !run_buffers_alloc(k, &a, false) &&
		     !run_buffers_alloc(k, &b, false);
	CHECKF(ok || !k, "%s: buffers", path);
	if (ok) {
		if (st_plain)
			st_plain(2);
		if (st_checked)
			st_checked(2);
		run_buffers_copy(&a, &in);
		run_buffers_copy(&b, &in);
		gen_oob oob;
		CHECKF(call(k, plain, false, (void *const *)a.data, &oob) == 0, "%s", path);
		CHECKF(call(k, checked, true, (void *const *)b.data, &oob) == 0, "%s", path);
		CHECKF(!oob.hit, "%s: violation at site %d, element %lld of %lld", path, oob.site, (long long)oob.elem,
		       (long long)oob.count);
		for (int i = 0; i < k->narrays; i++)
			if (k->arrays[i].role == CT_OUTPUT || k->arrays[i].role == CT_INOUT) {
				/* integers bit for bit; floating point too, except where the compiler
				 * vectorized an in-order reduction of the unchecked loop (a multiply,
				 * then an add) and contracted the checked scalar one into an FMA */
				ct_dtype t = k->arrays[i].type;
				int64_t at = first_difference(a.data[i], b.data[i], a.bytes[i]);
				bool fp = t == CT_F32 || t == CT_F64;
				double e = fp ? ct_max_rel_error(b.data[i], a.data[i], t, ct_kernel_array_elements(k, i)) : 0;
				CHECKF(at < 0 || (fp && e <= ct_dtype_tolerance(t)), "%s: array %s differs from byte %lld (%g)",
				       path, k->arrays[i].name, (long long)at, e);
				if (at >= 0)
					printf("test_checked: %s: array %s rounds differently checked (max relative error %g)\n",
					       path, k->arrays[i].name, e);
				else
					exact++;
			}
	}
	run_buffers_free(&in);
	run_buffers_free(&a);
	run_buffers_free(&b);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static int by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void test_examples_equal(void)
{
	DIR *d = opendir("examples");
	if (!d) {
		printf("test_checked: no examples/ here, examples not compared\n");
		return;
	}
	char *names[256];
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;) {
		size_t len = strlen(e->d_name);
		if (len > 7 && strcmp(e->d_name + len - 7, ".cachet") == 0)
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, by_name);
	CHECKF(n >= 20, "%d examples", n);
	for (int i = 0; i < n; i++) {
		char path[600];
		snprintf(path, sizeof path, "examples/%s", names[i]);
		h_end();
		h_begin(names[i]);
		equal_for_example(path);
		free(names[i]);
	}
	printf("test_checked: %d outputs of the examples the same bits checked and unchecked\n", exact);
}

/* ------------------------------------------------------------ violations */

/* Add delta to the constant of dimension dim of every access of array `array`
 * in statement stmt_id under the nodes v[0..n): a plan error that the
 * checker never lets through, made by hand. */
static int corrupt_expr(ir_expr *e, int array, int dim, int64_t delta)
{
	if (!e)
		return 0;
	int hits = 0;
	if (e->kind == EX_ACCESS && e->id == array) {
		e->sub[dim].c += delta;
		hits++;
	}
	for (int i = 0; i < e->nargs; i++)
		hits += corrupt_expr(e->args[i], array, dim, delta);
	return hits;
}

static int corrupt_nodes(ir_node **v, int n, int stmt_id, int array, int dim, int64_t delta)
{
	int hits = 0;
	for (int i = 0; i < n; i++) {
		ir_node *x = v[i];
		if (x->kind == ND_STMT && x->stmt_id == stmt_id)
			hits += corrupt_expr(x->lhs, array, dim, delta) + corrupt_expr(x->rhs, array, dim, delta);
		hits += corrupt_nodes(x->body, x->nbody, stmt_id, array, dim, delta);
		hits += corrupt_nodes(x->els, x->nels, stmt_id, array, dim, delta);
	}
	return hits;
}

static int array_id(const ct_kernel *k, const char *name)
{
	for (int i = 0; i < k->narrays; i++)
		if (strcmp(k->arrays[i].name, name) == 0)
			return i;
	return -1;
}

typedef struct oob_case {
	const char *name;
	const char *text;
	const char *array; /* the accesses moved: of this array */
	int stmt;          /* in this statement (1..) */
	int dim;
	int64_t delta;
	int threads;
	const char *want;  /* the message, exactly ("" to match only its start) */
} oob_case;

/* The kernels' statement lines count from the `kernel` line, 1. */
static const oob_case oob_cases[] = {
	{"read past the end",
	 "kernel k\nparam N = 10\narray A : f32[N] input\narray B : f32[N] output\nfor (i: N) {\n"
	 "  B[i] = A[i] * 2\n}\n",
	 "A", 1, 0, 3, 1, "out-of-bounds access to array 'A' (element 10 of 10) in statement at t.cachet:6"},
	{"write below the start",
	 "kernel k\nparam N = 10\narray A : f32[N] input\narray B : f32[N] output\nfor (i: N) {\n"
	 "  B[i] = A[i] * 2\n}\n",
	 "B", 1, 0, -4, 1, "out-of-bounds access to array 'B' (element -4 of 10) in statement at t.cachet:6"},
	{"a row below the start, runtime size",
	 "kernel k\nparam R : runtime\nparam C = 7\narray A : f64[R, C] input\narray B : f64[R, C] output\n"
	 "for (i: R, j: C) {\n  B[i, j] = A[i, j] + 1\n}\n",
	 "A", 1, 0, -1, 1, "out-of-bounds access to array 'A' (element -7 of "},
	{"a cache's copy reads past its source",
	 "kernel k\nparam N = 16\narray A : f32[N] input\narray B : f32[N] output\nfor (i: N) {\n"
	 "  B[i] = A[i] + 1\n}\nschedule {\n  ii = split(i, 4)\n}\nplan {\n  AA = cache(A, index=ii, thrifty=false)\n}\n",
	 "A", 1, 0, 2, 1, "out-of-bounds access to array 'A' (element 16 of 16) in a copy of cache 'AA' (t.cachet:12)"},
	{"a vector load of a register tile",
	 "kernel k\nparam M = 8, N = 32, K = 8\narray A : f32[M, K] input\narray B : f32[K, N] input\n"
	 "array C : f32[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	 "schedule {\n  ii, jj = tile(i=2, j=16)\n  reorder(i, j, k, ii, jj)\n}\n"
	 "plan {\n  unroll(ii)\n  vectorize(jj)\n}\n",
	 "B", 1, 1, 5, 1, "out-of-bounds access to array 'B' (element 256 of 256) in statement at t.cachet:7"},
	{"a lane-shift window of a vector loop",
	 "kernel k\nparam N = 4, M = 67\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	 "for (x: N, y: M) {\n  if (0 < y && y < M-1) {\n    B[x, y] = A[x, y-1] + A[x, y] + A[x, y+1]\n  }\n}\n"
	 "plan {\n  vectorize(y)\n}\n",
	 "A", 1, 0, 1, 1, ""},
	{"a streamed line",
	 "kernel k\nparam N = 4, M = 64\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	 "for (x: N, y: M) {\n  B[x, y] = A[x, y] * 3\n}\n"
	 "plan {\n  vectorize(y, nontemporal=true)\n}\n",
	 "B", 1, 0, 1, 1, "out-of-bounds access to array 'B' (element 256 of 256) in statement at t.cachet:6"},
	{"two threads of a parallel loop",
	 "kernel k\nparam N = 64, M = 8\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	 "for (i: N, j: M) {\n  B[i, j] = A[i, j] - 1\n}\nplan {\n  parallelize(i)\n}\n",
	 "A", 1, 0, 63, 2, "out-of-bounds access to array 'A' (element "},
};

/* Each corrupted kernel through ct_kernel_run with checked set: the
 * violation as CT_ERR_RUNTIME with its message; with checked unset the
 * kernel is never run here (it would read or write outside its arrays). */
static void oob_row(const oob_case *c)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, c->text, "t.cachet");
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	if (strstr(c->text, "runtime"))
		ct_kernel_set_param(k, "R", 5);
	int a = array_id(k, c->array);
	CHECK(a >= 0);
	CHECK(corrupt_nodes(k->body, k->nbody, c->stmt, a, c->dim, c->delta) > 0);
	ct_run_options o;
	ct_run_options_init(&o);
	CHECK(o.checked == 0); /* the default */
	o.checked = 1;
	o.threads = c->threads;
	ct_run_result r;
	ct_status st = ct_kernel_run(k, &o, &r);
	const char *msg = ct_ctx_last_message(ctx);
	CHECKF(st == CT_ERR_RUNTIME, "status %d: %s", (int)st, msg);
	/* a message with its place is compared whole, else its start */
	const char *want = c->want[0] ? c->want : "out-of-bounds access to array '";
	if (strstr(want, "t.cachet:"))
		CHECKF(strcmp(msg, want) == 0, "got '%s', want '%s'", msg, want);
	else
		CHECKF(strncmp(msg, want, strlen(want)) == 0, "got '%s', want '%s...'", msg, want);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_violations(void)
{
	for (size_t i = 0; i < sizeof oob_cases / sizeof oob_cases[0]; i++) {
		h_end();
		h_begin(oob_cases[i].name);
		oob_row(&oob_cases[i]);
	}
}

/* The record the generated code fills, read straight: the first violation
 * of a serial loop is its first out-of-range element, and the run goes on
 * without touching memory outside (the outputs past the violation are
 * those of element 0's redirected accesses, never a neighbour's memory). */
static void test_record(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, oob_cases[0].text, "t.cachet");
	CHECK(k != NULL);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	CHECK(corrupt_nodes(k->body, k->nbody, 1, array_id(k, "A"), 0, 3) == 1);
	void *entry = NULL;
	void (*st)(int) = NULL;
	CHECK(load(ctx, k, true, &entry, &st));
	/* the arrays inside guard zones that must stay as they are */
	float a[10 + 32], b[10 + 32];
	for (int i = 0; i < 42; i++) {
		a[i] = (float)i;
		b[i] = -1;
	}
	void *bufs[2] = {a + 16, b + 16};
	gen_oob oob;
	if (entry)
		CHECK(call(k, entry, true, (void *const *)bufs, &oob) == 0);
	CHECK(oob.hit == 1);
	CHECKF(oob.elem == 10 && oob.count == 10, "element %lld of %lld", (long long)oob.elem, (long long)oob.count);
	for (int i = 0; i < 16; i++)
		CHECK(b[i] == -1 && b[26 + i] == -1);
	for (int i = 0; i < 7; i++)
		CHECK(b[16 + i] == 2 * (float)(16 + i + 3));
	/* the message of that record, from the tree */
	ct_looptree *t = ct_kernel_lower(k, 1);
	CHECK(t && gen_oob_report(t, &oob) == CT_ERR_RUNTIME);
	CHECKF(strcmp(ct_ctx_last_message(ctx), oob_cases[0].want) == 0, "%s", ct_ctx_last_message(ctx));
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The repro 3 of issue 17 (a hierarchy over a guarded stencil): where the
 * interpreter finds its cache buffer read out of bounds, the checked native
 * run reports the same access; where it does not (the plan pass fixed),
 * both verify. */
static void test_issue17_repro3(void)
{
	static const char text[] =
		"kernel r3\nparam N = 8, M = 5\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
		"for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
		"    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n  } else {\n"
		"    B[x, y] = A[x, y]\n  }\n}\n"
		"schedule {\n  x1 = split(x, 3)\n  y2 = split(y, 4)\n  reorder(y, x, x1, y2)\n}\n"
		"plan {\n  AA = cache(A, level=4, layout=last_major, thrifty=false)\n  AAA = cache(AA, index=x1)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text, "r3.cachet");
	CHECK(k != NULL);
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = CT_ENGINE_INTERP;
	ct_run_result r;
	ct_status ist = k ? ct_kernel_run(k, &o, &r) : CT_ERR_USAGE;
	char imsg[512];
	snprintf(imsg, sizeof imsg, "%s", ct_ctx_last_message(ctx));
	o.engine = CT_ENGINE_NATIVE;
	o.checked = 1;
	ct_status nst = k ? ct_kernel_run(k, &o, &r) : CT_ERR_USAGE;
	const char *nmsg = ct_ctx_last_message(ctx);
	if (ist == CT_ERR_RUNTIME) {
		CHECKF(nst == CT_ERR_RUNTIME, "native checked: %d %s", (int)nst, nmsg);
		CHECKF(strncmp(nmsg, imsg, strlen(imsg)) == 0, "native '%s' vs interpreter '%s'", nmsg, imsg);
	} else {
		printf("test_checked: repro 3 verifies in the interpreter now (%d)\n", (int)ist);
		CHECKF(ist == CT_OK && nst == CT_OK, "interp %d, native checked %d: %s", (int)ist, (int)nst, nmsg);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Checked and unchecked code of one kernel are two plan-cache entries:
 * one never stands in for the other. */
static void test_cache_keys(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, oob_cases[0].text, "t.cachet");
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	ct_kernel_memo_info before, after;
	CHECK(ct_kernel_memo_stats(ctx, &before) == CT_OK);
	CHECK(k && ct_kernel_run(k, &o, &r) == CT_OK);
	o.checked = 1;
	CHECK(k && ct_kernel_run(k, &o, &r) == CT_OK);
	CHECK(k && ct_kernel_run(k, &o, &r) == CT_OK);
	CHECKF(!strcmp(r.code_cache, "memory"), "%s", r.code_cache);
	CHECK(ct_kernel_memo_stats(ctx, &after) == CT_OK);
	CHECKF(after.entries == before.entries + 2, "%lld entries", (long long)after.entries);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* OpenCL kernels are refused, with a clear error, before anything runs. */
static void test_opencl_refused(void)
{
	static const char text[] = "kernel k\nparam N = 16\narray A : f32[N] input\narray B : f32[N] output\n"
				   "for (i: N) {\n  B[i] = A[i]\n}\nplan(target=opencl) {\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text, "t.cachet");
	ct_run_options o;
	ct_run_options_init(&o);
	o.checked = 1;
	ct_run_result r;
	CHECK(k && ct_kernel_run(k, &o, &r) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "host kernels only") != NULL, "%s", ct_ctx_last_message(ctx));
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The solution selector runs unchecked pieces: it refuses a checked run. */
static void test_selector_refused(void)
{
	static const char text[] = "kernel k\nparam N = 16\nparam T = 4 tune {2, 4}\narray A : f32[N] input\n"
				   "array B : f32[N] output\nfor (i: N) {\n  B[i] = A[i]\n}\n"
				   "schedule {\n  ii = split(i, T)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse(ctx, text, "t.cachet");
	ct_selector *sel = k ? ct_selector_new(k, NULL) : NULL;
	CHECKF(sel != NULL, "%s", ct_ctx_last_message(ctx));
	ct_run_options o;
	ct_run_options_init(&o);
	o.checked = 1;
	ct_run_result r;
	ct_solution sol;
	CHECK(sel && ct_kernel_run_selected(sel, &o, &r, &sol) == CT_ERR_UNSUPPORTED);
	ct_selector_free(sel);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	RUN(test_record);
	RUN(test_violations);
	RUN(test_issue17_repro3);
	RUN(test_cache_keys);
	RUN(test_opencl_refused);
	RUN(test_selector_refused);
	RUN(test_examples_equal);
	return h_report();
}
