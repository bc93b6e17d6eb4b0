/* cmd_kernel.c: the commands that take one kernel through the pipeline: check, lower, run, emit, build, and the demo. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cmd_check(cli *c) { return with_kernel(c, NULL); }

int print_lowered(ct_ctx *ctx, ct_kernel *k, int json)
{
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t)
		return fail(ctx, ct_ctx_last_status(ctx));
	ct_status st = ct_looptree_print(t, json ? CT_FORMAT_JSON : CT_FORMAT_TEXT, stdout);
	ct_looptree_free(t);
	return st ? fail(ctx, st) : EXIT_OK;
}

/* lower: the tree; for a distributed kernel (text) also its distribution and exchanges. */
static int lower_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	int rc = print_lowered(ctx, k, c->json);
	if (rc != EXIT_OK || c->json || !ct_kernel_is_distributed(k))
		return rc;
	char *s = ct_kernel_distribution_text(k, c->ranks);
	if (!s)
		return fail(ctx, ct_ctx_last_status(ctx));
	printf("\n%s", s);
	free(s);
	return EXIT_OK;
}

int cmd_lower(cli *c) { return with_kernel(c, lower_kernel); }

/* The target a run ran on: the plan target its engine is named after
 * ("opencl", "cuda"), else the host (the native and interp engines). */
static const char *run_target(const ct_run_result *r)
{
	for (int i = 0; ct_target_name(i); i++)
		if (strcmp(r->engine, ct_target_name(i)) == 0)
			return ct_target_name(i);
	return "host";
}

/* `run --json`: CLI.md's object (the selector's run adds "tuned"). */
static json_t *run_json(const ct_kernel *k, const ct_run_result *r, int checked, bool *ok)
{
	json_t *o = json_object();
	ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), ok);
	ct_json_set(o, "target", json_string(run_target(r)), ok);
	ct_json_set(o, "engine", json_string(r->engine), ok);
	ct_json_set(o, "threads", json_integer(r->threads), ok);
	ct_json_set(o, "seconds", ct_json_real(r->seconds, 9), ok);
	ct_json_set(o, "gflops", ct_json_real(r->gflops, 6), ok);
	ct_json_set(o, "verified", ct_json_tristate(r->verified), ok);
	ct_json_set(o, "max_rel_error", ct_json_real(r->max_rel_error, 6), ok);
	ct_json_set(o, "code_cache", json_string(r->code_cache), ok);
	ct_json_set(o, "compile_seconds", ct_json_real(r->compile_seconds, 6), ok);
	ct_json_set(o, "checked", json_boolean(checked), ok);
	return o;
}

static void print_run_text(const ct_kernel *k, const ct_run_result *r, int checked)
{
	printf("kernel %s: %s engine, %d thread%s%s\n", ct_kernel_name(k), r->engine, r->threads,
	       r->threads == 1 ? "" : "s", checked ? ", checked (every access bounds-tested)" : "");
	printf("  time     %.6f s (median)\n", r->seconds);
	printf("  speed    %.3f GFLOP/s\n", r->gflops);
	if (r->verified == 1)
		printf("  verified against the reference interpreter (max relative error %.3g)\n",
		       r->max_rel_error);
	else if (r->verified == 0)
		printf("  MISMATCH in array %s (max relative error %.3g)\n", r->mismatch_array,
		       r->max_rel_error);
	else
		printf("  not verified (--no-verify)\n");
	if (strcmp(r->code_cache, "none") != 0)
		printf("  code     %s (compile %.3f s)\n", r->code_cache, r->compile_seconds);
}

/* Whether `cachet run` asks the solution selector: the file has tunable
 * params, none is set with -D, and the engine is native. */
static int wants_selector(const ct_kernel *k, const cli *c)
{
	if (c->run.engine != CT_ENGINE_NATIVE || c->run.checked) /* checked: the file's own values */
		return 0;
	int tunable = 0;
	for (int i = 0; i < ct_kernel_param_count(k); i++) {
		if (!ct_kernel_param_candidates(k, i, NULL))
			continue;
		tunable = 1;
		for (int d = 0; d < c->ndefs; d++)
			if (strcmp(c->defs[d].name, ct_kernel_param_name(k, i)) == 0)
				return 0;
	}
	return tunable;
}

/* The selector's choice, for the run's report. */
static json_t *solution_json(const ct_kernel *k, const ct_solution *sol, bool *ok)
{
	json_t *o = json_object(), *params = json_object();
	ct_json_set(o, "source", json_string(ct_select_source_name(sol->source)), ok);
	ct_json_set(o, "size_class", json_string(sol->size_class), ok);
	ct_json_set(o, "pieces", json_integer(sol->npieces), ok);
	for (int i = 0; i < sol->ntuned; i++)
		ct_json_set(params, ct_kernel_param_name(k, sol->tuned[i]), json_integer((json_int_t)sol->values[i]),
		            ok);
	ct_json_set(o, "params", params, ok);
	return o;
}

static void print_solution(const ct_kernel *k, const ct_solution *sol)
{
	printf("  tuned    ");
	for (int i = 0; i < sol->ntuned; i++)
		printf("%s%s=%lld", i ? " " : "", ct_kernel_param_name(k, sol->tuned[i]),
		       (long long)sol->values[i]);
	printf(" (%s%s%s), %d piece%s\n", ct_select_source_name(sol->source),
	       sol->size_class[0] ? " " : "", sol->size_class, sol->npieces, sol->npieces == 1 ? "" : "s");
}

static int run_ranks(ct_ctx *ctx, ct_kernel *k, cli *c);

int run_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	ct_run_result r;
	if (isatty(2))
		ct_ctx_set_progress(ctx, show_progress, NULL);
	ct_solution sol;
	ct_selector *sel;
	ct_status st;
	int selected = wants_selector(k, c);
	sel = selected ? ct_selector_new(k, NULL) : NULL;
	/* run --auto: without a record, auto's derived values, not the model's pick among them */
	if (sel && c->auto_plan && ct_selector_fallback(sel, CT_SELECT_FILE) != CT_OK) {
		ct_selector_free(sel);
		return fail(ctx, ct_ctx_last_status(ctx));
	}
	if (selected && !sel) {
		if (ct_ctx_last_status(ctx) != CT_ERR_LIMIT)
			return fail(ctx, ct_ctx_last_status(ctx));
		/* more params than the selector takes: the file's own values, as with -D */
		fprintf(stderr, "cachet: note: %s; running the file's values\n", ct_ctx_last_message(ctx));
		ct_ctx_clear_error(ctx);
	}
	if (sel) {
		st = ct_kernel_run_selected(sel, &c->run, &r, &sol);
		/* CT_ERR_VERIFY without a mismatch: the code was refused before it ran (the
		 * compile policy's self-test), so there is no run to print */
		if (st && (st != CT_ERR_VERIFY || r.verified != 0)) {
			ct_selector_free(sel);
			return fail(ctx, st);
		}
		if (c->json) {
			/* the run's object with one more field */
			bool ok = true;
			json_t *o = run_json(k, &r, 0, &ok);
			ct_json_set(o, "tuned", solution_json(k, &sol, &ok), &ok);
			print_json(o, ok);
		} else {
			print_run_text(k, &r, 0);
			print_solution(k, &sol);
		}
		ct_selector_free(sel);
		if (st) {
			print_error(ctx);
			return EXIT_FAILED;
		}
		return EXIT_OK;
	}
	if (c->given & O_GRID && !(c->given & O_RANKS))
		return usage_error("%s", "--grid goes with --ranks");
	if (c->ranks > 0)
		return run_ranks(ctx, k, c);
	st = ct_kernel_run(k, &c->run, &r);
	if (st && (st != CT_ERR_VERIFY || r.verified != 0))
		return fail(ctx, st);
	bool ok = true;
	if (c->json)
		print_json(run_json(k, &r, c->run.checked, &ok), ok);
	else
		print_run_text(k, &r, c->run.checked);
	if (st) {
		print_error(ctx);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* run --ranks N: the distributed run, its verification and each rank's figures. */
static int run_ranks(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	ct_run_result r;
	char *report = NULL;
	ct_status st = ct_kernel_run_ranks(k, &c->run, c->ranks, c->ngrid ? c->grid : NULL, c->ngrid, &r, &report);
	if (st && (st != CT_ERR_VERIFY || r.verified != 0)) {
		free(report);
		return fail(ctx, st);
	}
	if (c->json) {
		bool ok = true;
		json_t *o = run_json(k, &r, 0, &ok);
		ct_json_set(o, "ranks", json_integer(c->ranks), &ok);
		ct_json_set(o, "mpi_report", json_string(report ? report : ""), &ok);
		print_json(o, ok);
	} else {
		printf("kernel %s: %d MPI ranks, %d thread%s each\n", ct_kernel_name(k), c->ranks, r.threads,
		       r.threads == 1 ? "" : "s");
		printf("%s", report ? report : "");
		printf("  time     %.6f s (mpirun, start to end)\n", r.seconds);
		printf("  code     %s (%.3f s)\n", r.code_cache, r.compile_seconds);
		if (r.verified == 1)
			printf("  verified against the reference interpreter (max relative error %.3g)\n", r.max_rel_error);
		else if (r.verified == 0)
			printf("  MISMATCH in array '%s' (max relative error %.3g)\n", r.mismatch_array, r.max_rel_error);
		else
			printf("  not verified (--no-verify)\n");
	}
	free(report);
	if (st) {
		print_error(ctx);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* run --auto: the same run of the kernel with the schedule and plan auto chooses. */
static int run_maybe_auto(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if (!c->auto_plan)
		return run_kernel(ctx, k, c);
	int rc = EXIT_OK;
	ct_kernel *a = auto_kernel(ctx, k, c, &rc);
	if (!a)
		return rc;
	/* verified against the kernel as written, not the chosen file's own loops: auto may
	 * distribute or fuse them */
	c->run.reference = k;
	rc = run_kernel(ctx, a, c);
	c->run.reference = NULL;
	ct_kernel_free(a);
	return rc;
}

int cmd_run(cli *c) { return with_kernel(c, run_maybe_auto); }

static int emit_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	size_t len = 0;
	char *src = ct_kernel_emit(k, c->target, &len);
	if (!src)
		return fail(ctx, ct_ctx_last_status(ctx));
	fwrite(src, 1, len, stdout);
	free(src);
	return EXIT_OK;
}

int cmd_emit(cli *c) { return with_kernel(c, emit_kernel); }

/* The package's longest file name beyond the kernel's name: "lib" NAME
 * ".so" and the temp name it is first written under (".tmp-" and a pid). */
#define PKG_NAME_EXTRA 20

/* Whether the package's file names fit the file system of dir (a name of
 * the language's 255 characters does not: "File name too long" after the
 * compile); exit 2 after a message when not. */
static int package_names_fit(const ct_kernel *k, const cli *c)
{
	long max = pathconf(c->out_dir, _PC_NAME_MAX);
	if (max <= 0) {
		char parent[4096];
		snprintf(parent, sizeof parent, "%s/..", c->out_dir);
		max = pathconf(parent, _PC_NAME_MAX);
	}
	if (max <= 0)
		max = 255;
	size_t n = strlen(ct_kernel_name(k));
	if ((long)n + PKG_NAME_EXTRA <= max)
		return EXIT_OK;
	fprintf(stderr, "%s: error: the kernel's name has %zu characters: the package's file names (libNAME.so, "
	        "NAME.c.tmp-PID: up to %d more) would pass the file name limit of %ld characters in %s; build "
	        "needs a kernel name of at most %ld characters\n",
	        c->file, n, PKG_NAME_EXTRA, max, c->out_dir, max - PKG_NAME_EXTRA);
	return EXIT_BAD_INPUT;
}

static int build_kernel(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	if (!make_parents(c->out_dir, 0))
		return EXIT_FAILED;
	int rc = package_names_fit(k, c);
	if (rc)
		return rc;
	/* a kernel file named like a package file (DIR/NAME.c, NAME.h) would be replaced by it */
	static const char *const files[] = {"%s/%s.h", "%s/%s.c", "%s/%s.cl", "%s/%s.cu", "%s/lib%s.a", "%s/lib%s.so"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[4400];
		snprintf(path, sizeof path, files[i], c->out_dir, ct_kernel_name(k));
		if (same_file(path, c->file)) {
			fprintf(stderr, "cachet: error: the package file %s is the kernel file itself\n", path);
			return EXIT_BAD_INPUT;
		}
	}
	ct_status st = ct_kernel_build(k, c->out_dir);
	if (st == CT_ERR_IO) /* the package cannot be written: a failure (1), as report's */
		return print_error(ctx), EXIT_FAILED;
	if (st)
		return fail(ctx, st);
	const char *n = ct_kernel_name(k);
	printf("wrote %s/%s.h, %s/lib%s.a and %s/lib%s.so\n", c->out_dir, n, c->out_dir, n, c->out_dir, n);
	if (ct_kernel_is_distributed(k))
		printf("wrote %s/%s_mpi.h and %s/lib%s_mpi.a (distributed over MPI ranks)\n", c->out_dir, n, c->out_dir, n);
	return EXIT_OK;
}

int cmd_build(cli *c)
{
	if (!c->out_dir)
		return usage_error("%s needs -o DIR", "build");
	return with_kernel(c, build_kernel);
}

/* The demo kernel: a tiled matmul with a non-dividing split, small enough
 * for the interpreter to verify in a blink. */
static const char demo_text[] =
	"# demo.cachet: C += A * B, tiled for the cache\n"
	"kernel matmul\n"
	"param M = 256, N = 256, K = 256\n"
	"array A : f32[M, K] input\n"
	"array B : f32[K, N] input\n"
	"array C : f32[M, N] inout\n"
	"for (i: M, j: N, k: K) {\n"
	"  C[i, j] += A[i, k] * B[k, j]\n"
	"}\n"
	"schedule {\n"
	"  ii, jj, kk = tile(i=32, j=64, k=48)   # 48 does not divide 256: a tail\n"
	"  reorder(i, j, k, ii, kk, jj)\n"
	"}\n";

int cmd_demo(cli *c)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return EXIT_FAILED;
	signal_ctx = ctx;
	printf("== The kernel (embedded demo.cachet) ==\n%s\n", demo_text);
	ct_kernel *k = ct_kernel_parse(ctx, demo_text, sizeof demo_text - 1, "demo.cachet");
	if (!k) {
		int rc = fail(ctx, ct_ctx_last_status(ctx));
		signal_ctx = NULL;
		ct_ctx_free(ctx);
		return rc;
	}
	printf("== The scheduled loop tree (cachet lower) ==\n");
	int rc = print_lowered(ctx, k, 0);
	if (!rc) {
		printf("\n== Run and verify (cachet run) ==\n");
		c->json = 0;
		rc = run_kernel(ctx, k, c);
	}
	if (!rc) {
		printf("\n== Its cache behaviour on this machine's caches (cachet simulate) ==\n");
		ct_sim_result r;
		ct_status st = ct_kernel_simulate(k, NULL, &r);
		if (st)
			rc = fail(ctx, st);
		else
			print_sim_text(k, &r);
		ct_sim_result_free(&r);
	}
	if (!rc)
		printf("\nThe schedule changed only the order of the iterations: the result equals the\n"
		       "unscheduled reference. Try: cachet lower examples/matmul.cachet --json\n");
	ct_kernel_free(k);
	signal_ctx = NULL;
	ct_ctx_free(ctx);
	return rc;
}
