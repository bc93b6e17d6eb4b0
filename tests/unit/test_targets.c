/* test_targets.c: the targets' table (ir facts, gen emitters, engine rows) and that a CUDA kernel never runs as host C. */
#include "harness.h"
#include "cachet.h"
#include "engine/targets.h"
#include "gen/targets.h"
#include "ir/targets.h"
#include "lang/lang.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every row has every field, row i is target i, names are unique, and the
 * three columns (ir, gen, engine) have the same rows. */
static void test_rows_complete(void)
{
	int n = ir_target_count();
	CHECK(n >= 3);
	CHECK(ir_target_at(-1) == NULL && ir_target_at(n) == NULL);
	for (int i = 0; i < n; i++) {
		const ir_target_info *r = ir_target_at(i);
		CHECK(r != NULL);
		if (!r)
			continue;
		CHECKF((int)r->id == i, "row %d has id %d", i, (int)r->id);
		CHECK(r->name && *r->name && r->title && *r->title);
		CHECK(r->grid_unit && r->barrier && r->source_ext && *r->source_ext);
		CHECK(ir_target_row(r->id) == r && ir_target_find(r->name) == r);
		for (int j = 0; j < i; j++) {
			CHECKF(strcmp(ir_target_at(j)->name, r->name) != 0, "name '%s' twice", r->name);
			CHECKF(strcmp(ir_target_at(j)->source_ext, r->source_ext) != 0, "ext '%s' twice", r->source_ext);
		}
		/* a GPU target has memory spaces, a barrier and a grid; the host none of them */
		CHECKF(r->gpu == (r->nspaces > 0), "%s: gpu %d, %d spaces", r->name, r->gpu, r->nspaces);
		CHECKF(r->gpu == (r->parallel == IR_PAR_GRID), "%s", r->name);
		CHECKF(r->gpu == (*r->barrier != '\0'), "%s", r->name);
		CHECKF((r->parallel == IR_PAR_GRID) == (r->grid_dims > 0 && *r->grid_unit), "%s", r->name);
		CHECKF(!r->gpu || (!r->native_entry && !r->checked), "%s: a GPU kernel is no host entry", r->name);
		CHECK(r->nspaces == 0 || r->spaces != NULL);
		CHECK(r->nrefused == 0 || r->refused != NULL);
		for (int s = 0; s < r->nspaces; s++) {
			CHECK(r->spaces[s].word && *r->spaces[s].word && r->spaces[s].qualifier);
			CHECK(r->spaces[s].loc != LOC_DEFAULT);
			CHECK(ir_target_space(r, r->spaces[s].word) == &r->spaces[s]);
			CHECK(ir_target_space_word(r, r->spaces[s].loc) == r->spaces[s].word);
		}
		for (int s = 0; s < r->nrefused; s++) /* a refused word is never also accepted */
			CHECK(r->refused[s].hint && *r->refused[s].hint && !ir_target_space(r, r->refused[s].word));
		const gen_target *g = gen_target_row(r->id);
		CHECK(g->id == r->id && g->emit != NULL);
		const eng_target *e = eng_target_row(r->id);
		CHECK(e->id == r->id && e->source && e->run && e->package);
		CHECK(ct_target_name(i) && strcmp(ct_target_name(i), r->name) == 0);
	}
	CHECK(ct_target_name(n) == NULL && ct_target_name(-1) == NULL);
	CHECK(ir_target_find("bogus") == NULL && ir_target_find(NULL) == NULL);
}

/* What each target's row says today. */
static void test_rows_facts(void)
{
	const ir_target_info *h = ir_target_find("host"), *o = ir_target_find("opencl"), *c = ir_target_find("cuda");
	CHECK(h && o && c);
	if (!h || !o || !c)
		return;
	CHECK(h->id == TARGET_HOST && o->id == TARGET_OPENCL && c->id == TARGET_CUDA);
	CHECK(h->native_entry && h->checked && !h->gpu && h->parallel == IR_PAR_OPENMP);
	CHECK(o->gpu && c->gpu && o->grid_dims == 3 && c->grid_dims == 3);
	/* OpenCL: global, local, private */
	CHECK(o->nspaces == 3 && ir_target_space(o, "local") && ir_target_space(o, "local")->loc == LOC_LOCAL);
	CHECK(ir_target_space(o, "global")->loc == LOC_GLOBAL && ir_target_space(o, "private")->loc == LOC_PRIVATE);
	CHECK(ir_target_space(o, "shared") == NULL);
	/* CUDA: shared is what local is on OpenCL; local is refused with a hint */
	CHECK(c->nspaces == 3 && ir_target_space(c, "shared") && ir_target_space(c, "shared")->loc == LOC_LOCAL);
	CHECK(strcmp(ir_target_space(c, "shared")->qualifier, "__shared__") == 0);
	CHECK(ir_target_space(c, "global")->loc == LOC_GLOBAL && ir_target_space(c, "private")->loc == LOC_PRIVATE);
	CHECK(ir_target_space(c, "local") == NULL && ir_target_space_hint(c, "local") != NULL);
	CHECK(strcmp(ir_target_space_word(c, LOC_LOCAL), "shared") == 0);
	CHECK(strcmp(ir_target_space_word(o, LOC_LOCAL), "local") == 0);
	CHECK(ir_target_space_word(h, LOC_LOCAL) == NULL && ir_target_space(h, "global") == NULL);
	CHECK(strcmp(c->barrier, "__syncthreads()") == 0 && strcmp(o->barrier, "barrier(CLK_LOCAL_MEM_FENCE)") == 0);
	/* the engines' entry points: the CUDA row points at the seam */
	CHECK(eng_target_row(TARGET_HOST)->run == run_native && eng_target_row(TARGET_HOST)->package == aot_host_package);
	CHECK(eng_target_row(TARGET_OPENCL)->run == run_opencl && eng_target_row(TARGET_OPENCL)->source == ocl_kernel_source);
	CHECK(eng_target_row(TARGET_OPENCL)->package == gen_opencl_package);
	CHECK(eng_target_row(TARGET_CUDA)->run == run_cuda && eng_target_row(TARGET_CUDA)->source == cuda_kernel_source);
	CHECK(eng_target_row(TARGET_CUDA)->package == gen_cuda_package);
	CHECK(gen_target_row(TARGET_OPENCL)->emit == gen_opencl && gen_target_row(TARGET_CUDA)->emit == gen_cuda);
	CHECK(gen_target_row(TARGET_HOST)->probes_machine && !gen_target_row(TARGET_CUDA)->probes_machine);
	/* the lists the messages give */
	char buf[160];
	CHECK(strcmp(ir_target_list(buf, sizeof buf, "", "", false), "host, opencl or cuda") == 0);
	CHECK(strcmp(ir_target_list(buf, sizeof buf, "plan(target=", ")", true),
	             "plan(target=opencl) or plan(target=cuda)") == 0);
	CHECK(strcmp(ir_target_list(buf, 8, "", "", false), "host, o") == 0); /* truncated, terminated */
}

#define MM                                                                                              \
	"kernel mm\nparam M = 16, N = 16, K = 16\narray A : f32[M, K] input\narray B : f32[K, N] input\n" \
	"array C : f32[M, N] inout\nfor (i: M, j: N, k: K) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"      \
	"schedule {\n  ii, jj, kk = tile(i=4, j=4, k=4)\n  reorder(i, j, k, ii, jj, kk)\n}\n"

/* The plan-level parse (lang only: no generator runs) of text; NULL with ctx's error. */
static ct_kernel *parse_only(ct_ctx *ctx, const char *text)
{
	return lang_parse(ctx, text, strlen(text), "t.cachet");
}

/* One plan, its expected error ("" none). */
typedef struct plan_case {
	const char *name, *plan, *err;
} plan_case;

/* The target word and the location words through the rows (one case each). */
static void test_parse_targets(void)
{
	static const plan_case cases[] = {
	    {"cuda shared", "plan(target=cuda) { AA = cache(A, index=ii, location=shared, strategy=blocked)\n"
	                    "parallelize(i, j) }\n", ""},
	    {"cuda private", "plan(target=cuda) { AA = cache(A, index=kk, location=private) }\n", ""},
	    {"cuda local refused", "plan(target=cuda) { AA = cache(A, index=ii, location=local) }\n",
	     "unknown location 'local' on plan(target=cuda) (use global, shared or private): OpenCL's local "
	     "memory is CUDA's shared memory: write location=shared"},
	    {"opencl shared refused", "plan(target=opencl) { AA = cache(A, index=ii, location=shared) }\n",
	     "unknown location 'shared' (use global, local or private)"},
	    {"opencl local", "plan(target=opencl) { AA = cache(A, index=ii, location=local) }\n", ""},
	    {"host location", "plan(target=host) { AA = cache(A, index=ii, location=shared) }\n",
	     "location= is only for plan(target=opencl) or plan(target=cuda)"},
	    {"cuda grid", "plan(target=cuda) { parallelize(i, j, k, ii) }\n",
	     "cuda parallelizes at most 3 indices (thread-block dimensions)"},
	    {"opencl grid", "plan(target=opencl) { parallelize(i, j, k, ii) }\n",
	     "opencl parallelizes at most 3 indices (work-group dimensions)"},
	    {"unknown target", "plan(target=mpi) { }\n", "unknown target 'mpi' (use host, opencl or cuda)"},
	    {"unknown option", "plan(place=gpu) { }\n",
	     "unknown plan option 'place' (use target=host, target=opencl, target=cuda or strict=true)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const plan_case *pc = &cases[i];
		h_begin(pc->name);
		char text[2048];
		snprintf(text, sizeof text, "%s%s", MM, pc->plan);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse_only(ctx, text);
		if (!*pc->err)
			CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
		else
			CHECKF(!k && strstr(ct_ctx_last_message(ctx), pc->err), "got '%s'", ct_ctx_last_message(ctx));
		if (k && strcmp(pc->name, "cuda shared") == 0) {
			CHECK(k->target == TARGET_CUDA && k->plan[0].location == LOC_LOCAL);
			CHECK(strcmp(ir_kernel_target(k)->name, "cuda") == 0);
		}
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		h_end();
	}
}

/* Whether the ctx loaded or even looked up any host code (its kernel memo). */
static bool memo_untouched(ct_ctx *ctx)
{
	ct_kernel_memo_info m;
	return ct_kernel_memo_stats(ctx, &m) == CT_OK && m.entries == 0 && m.misses == 0 && m.hits == 0;
}

/* A plan(target=cuda) kernel never runs as host C: run, checked run, the
 * callable, views, the selector and build go to the CUDA row or refuse. */
static void test_cuda_never_host(void)
{
	static const char text[] = "kernel cu\nparam N = 24\nparam T = 4 tune {4, 8}\n"
	                           "array A : f32[N] input\narray Y : f32[N] output\n"
	                           "for (i: N) { Y[i] = A[i] * 2 }\n"
	                           "schedule { ii = split(i, T) }\n"
	                           "plan(target=cuda) { parallelize(i) }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse_only(ctx, text);
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	ct_run_options o;
	ct_run_options_init(&o);
	ct_run_result r;
	ct_status st;
	/* ct_kernel_compile: refused */
	CHECK(ct_kernel_compile(k) == NULL && ct_ctx_last_status(ctx) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'cu' targets CUDA: ct_kernel_compile gives host code only"),
	       "%s", ct_ctx_last_message(ctx));
	/* views with the native engine: refused */
	float a[24] = {0}, y[24] = {0};
	int64_t ext[1] = {24};
	ct_tensor *va = ct_tensor_new(ctx, a, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *vy = ct_tensor_new(ctx, y, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *views[2] = {va, vy};
	CHECK(va && vy && ct_kernel_run_views(k, views, &o) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "targets CUDA: ct_kernel_run_views"), "%s", ct_ctx_last_message(ctx));
	ct_tensor_free(va);
	ct_tensor_free(vy);
	/* emit: another GPU target's source is refused, the CUDA row's is asked */
	size_t len = 0;
	CHECK(ct_kernel_emit(k, "opencl", &len) == NULL);
	CHECKF(strstr(ct_ctx_last_message(ctx), "--target opencl needs plan(target=opencl), not plan(target=cuda)"),
	       "%s", ct_ctx_last_message(ctx));
	CHECK(ct_kernel_emit(k, "fpga", &len) == NULL);
	CHECKF(strstr(ct_ctx_last_message(ctx), "target 'fpga' is not supported (host, opencl or cuda)"), "%s",
	       ct_ctx_last_message(ctx));
	/* build: the CUDA package (NAME.cu) or an error, never the host package */
	char dir[] = "/tmp/ct_targets_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char pkg[300], file[400];
	snprintf(pkg, sizeof pkg, "%s/pkg", dir);
	ct_status bst = ct_kernel_build(k, pkg);
	snprintf(file, sizeof file, "%s/cu.cu", pkg);
	struct stat sb;
	bool cu = stat(file, &sb) == 0;
	CHECKF(bst != CT_OK || cu, "build gave status %d without cu.cu", (int)bst);
	if (bst != CT_OK) {
		snprintf(file, sizeof file, "%s/libcu.so", pkg);
		CHECK(stat(file, &sb) != 0);
	}
	/* nothing above loaded, compiled or looked up host code (the runs
	 * below may: the CUDA engine may keep its modules in the memo) */
	CHECK(memo_untouched(ctx));
	/* ct_kernel_run: the CUDA engine (without a GPU an error; with one a verified run), never run_native */
	st = ct_kernel_run(k, &o, &r);
	CHECKF(r.engine && strcmp(r.engine, "cuda") == 0, "engine %s", r.engine ? r.engine : "(null)");
	CHECKF(st != CT_OK || r.verified == 1, "a cuda run that is not verified");
	o.checked = 1;
	CHECK(ct_kernel_run(k, &o, &r) == CT_ERR_UNSUPPORTED);
	CHECKF(strstr(ct_ctx_last_message(ctx), "not plan(target=cuda)"), "%s", ct_ctx_last_message(ctx));
	o.checked = 0;
	/* the selector: the pieces are host code, refused; a run goes whole to the CUDA engine */
	ct_selector *s = ct_selector_new(k, dir);
	CHECKF(s != NULL, "%s", ct_ctx_last_message(ctx));
	if (s) {
		int64_t sizes[1] = {24};
		ct_solution sol;
		memset(&sol, 0, sizeof sol);
		/* selecting re-checks the candidate, which emits CUDA C: until the
		 * generator lands that fails, and the refusal below is tested on an
		 * empty solution (it is decided before the solution is read) */
		ct_status sel = ct_select(s, sizes, 1, &sol);
		if (sel != CT_OK && strstr(ct_ctx_last_message(ctx), "CUDA C generation is not built yet"))
			printf("skip selecting a cuda kernel's values: CUDA C generation is not built yet\n");
		else
			CHECKF(sel == CT_OK && sol.npieces == 1, "%s", ct_ctx_last_message(ctx));
		void *bufs[2] = {a, y};
		CHECK(ct_solution_run(s, &sol, bufs) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "targets CUDA: ct_solution_run runs host code only"), "%s",
		       ct_ctx_last_message(ctx));
		st = ct_kernel_run_selected(s, &o, &r, &sol);
		CHECKF(r.engine && strcmp(r.engine, "cuda") == 0, "engine %s", r.engine ? r.engine : "(null)");
		CHECKF(st != CT_OK || r.verified == 1, "a selected cuda run that is not verified");
		ct_selector_free(s);
	}
	/* the folder is left to the OS's /tmp cleaning when a package was written */
	if (bst != CT_OK) {
		(void)rmdir(pkg);
		(void)rmdir(dir);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* An OpenCL kernel on views with the native engine is refused too (it ran
 * its host C before the table), and the interpreter still runs it. */
static void test_opencl_views_refused(void)
{
	static const char text[] = "kernel ov\nparam N = 8\narray A : f32[N] input\narray Y : f32[N] output\n"
	                           "for (i: N) { Y[i] = A[i] * 2 }\n"
	                           "schedule { ii = split(i, 4) }\n"
	                           "plan(target=opencl) { parallelize(i) }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "ov.cachet");
	CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
	float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {0};
	int64_t ext[1] = {8};
	ct_tensor *va = ct_tensor_new(ctx, a, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *vy = ct_tensor_new(ctx, y, CT_F32, 1, ext, CT_TENSOR_ROW_MAJOR);
	ct_tensor *views[2] = {va, vy};
	ct_run_options o;
	ct_run_options_init(&o);
	if (k && va && vy) {
		CHECK(ct_kernel_run_views(k, views, &o) == CT_ERR_UNSUPPORTED);
		CHECKF(strstr(ct_ctx_last_message(ctx), "kernel 'ov' targets OpenCL: ct_kernel_run_views gives host code only"),
		       "%s", ct_ctx_last_message(ctx));
		CHECK(y[7] == 0 && memo_untouched(ctx));
		o.engine = CT_ENGINE_INTERP;
		CHECKF(ct_kernel_run_views(k, views, &o) == CT_OK, "%s", ct_ctx_last_message(ctx));
		CHECK(y[7] == 16);
	}
	ct_tensor_free(va);
	ct_tensor_free(vy);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The JSON of lower names the target from the row. */
static void test_lower_json_target(void)
{
	static const char *const names[] = {"host", "opencl", "cuda"};
	for (int i = 0; i < 3; i++) {
		char text[1024];
		snprintf(text, sizeof text, "%splan(target=%s) { }\n", MM, names[i]);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = parse_only(ctx, text);
		CHECKF(k != NULL, "%s", ct_ctx_last_message(ctx));
		ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
		char *js = t ? ct_looptree_to_string(t, CT_FORMAT_JSON) : NULL;
		char want[64];
		snprintf(want, sizeof want, "\"target\": \"%s\"", names[i]);
		CHECKF(js && strstr(js, want), "%s: %s", names[i], js ? js : ct_ctx_last_message(ctx));
		free(js);
		ct_looptree_free(t);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

int main(void)
{
	RUN(test_rows_complete);
	RUN(test_rows_facts);
	test_parse_targets(); /* one case per plan */
	RUN(test_cuda_never_host);
	RUN(test_opencl_views_refused);
	RUN(test_lower_json_target);
	return h_report();
}
