/* difffuzz.c: the differential fuzzer of the schedule and plan space (docs/FUZZ.md). Each random
 * kernel (plangen.c) is checked in a child process: a refusal must carry file:line:col; an accepted
 * kernel must lower, emit and verify against the unplanned reference in the interpreter, natively
 * on 1 and 2 threads and on OpenCL. Failures are minimized and written as .cachet files. */
#include "plangen.h"

#include <cachet.h>

#include <dlfcn.h>
#include <poll.h>
#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum cls {
	C_PASS, C_REJECT, C_LIMIT, C_REJECT_NOLOC, C_CHECK_MISMATCH, C_WRONG, C_OOB, C_RUNERR, C_COMPILE,
	C_CRASH, C_HANG, C_SLOW_COMPILE, C_NCLS
};
static const char *cls_name[C_NCLS] = {"pass", "rejected", "limit", "reject-noloc", "check-mismatch",
				       "wrong-result", "oob", "run-error", "compile-error", "crash", "hang",
				       "slow-compile"};

enum eng { E_INTERP, E_NATIVE1, E_NATIVE2, E_OPENCL, E_SELECTOR, E_CALLABLE, E_PACKAGE, E_PYTHON, E_AUTO, E_CUDA, E_CUDACC, E_MPI, E_NENG };
static const char *eng_name[E_NENG] = {"interp", "native", "native-2t", "opencl", "selector", "callable",
				       "package", "python", "auto", "cuda", "cudacompile", "mpi"};

/* The entry points into compiled code (--entries): bits of the sample mask a kernel is run with.
 * M_RUN is ct_kernel_run natively (1 and 2 threads) or on OpenCL; the others are host only. */
enum entry { N_RUN, N_SELECTOR, N_CALLABLE, N_PACKAGE, N_PYTHON, N_AUTO, N_NENTRY };
static const char *entry_name[N_NENTRY] = {"run", "selector", "callable", "package", "python", "auto"};
#define M_RUN (1 << N_RUN)
#define M_SELECTOR (1 << N_SELECTOR)
#define M_CALLABLE (1 << N_CALLABLE)
#define M_PACKAGE (1 << N_PACKAGE)
#define M_PYTHON (1 << N_PYTHON)
#define M_AUTO (1 << N_AUTO)

/* What a child reports about one kernel. */
typedef struct verdict {
	int cls;
	int accepted;
	int verified[E_NENG];
	char engine[16];
	char msg[600];
	int cuda_pending;    /* cudacompile: the source waits in the worker's batch folder */
	int cuda_refused;    /* the CUDA generator refused the kernel with a message (not a finding) */
	int dist_refused;    /* mpi: ct_kernel_run_ranks refused it with a located distribute: message */
	int dist_drawn;      /* mpi: the generator drew it to be refused, yet it ran and verified */
	int vreduce;         /* its host C sums a reduction in a vector loop (src/gen/vreduce.c) */
	int vjam;            /* its host C runs unrolled copies inside a vector loop (unroll and jam) */
	int early_read;      /* it has the generator's line buffer (print_multi): a temp read before the
	                        statement that writes it, in rows i > 0 (the output rule's exact form) */
	int preduce;         /* its host C sums a reduction on threads (src/gen/preduce.c) */
	int auto_fused;      /* auto's file fuses sweeps along their rows */
	int auto_blocked;    /* and blocks their time loop */
	int auto_passes;     /* auto's file fuses matrix-vector passes along a matrix's rows */
	int auto_wave;       /* auto's file runs an in-place sweep's rows as a wavefront */
	int auto_jam;        /* and jams blocks of the fused passes' rows into their vector loops */
	int auto_dist;       /* auto's file distributes a nest */
	int auto_rl;         /* auto's file interchanges a left-looking pair of loops right-looking */
	int auto_tri;        /* auto's file cuts a triangle in blocks */
	int auto_split;      /* auto's file splits a sum of products, one loop per product */
	int auto_expand;     /* auto's file expands a temp along a loop (doitgen's row buffer) */
	int compiles;        /* compiler runs measured (a code-cache hit is not one) */
	double compile_s;    /* their total seconds */
	double compile_max;  /* the slowest one */
} verdict;

typedef struct config {
	uint64_t seed;
	long count;
	double seconds;
	int interp, native, opencl;
	int cuda;           /* plan(target=cuda) kernels run on the GPU (the CUDA engine) */
	int cudacompile;    /* plan(target=cuda) kernels emitted and compiled by nvcc --cubin (no GPU) */
	int mpi;            /* distribute() kernels run on MPI ranks (ct_kernel_run_ranks) */
	int cuda_share;     /* percent of kernels with plan(target=cuda) */
	int cuda_batch;     /* kernels per nvcc call (one translation unit) */
	const char *nvcc, *cuda_arch;
	int native_every;   /* run natively every Nth accepted kernel */
	int opencl_share;   /* percent of kernels with plan(target=opencl) */
	int minimize;
	int timeout;        /* seconds per kernel */
	int quiet;
	int verbose;      /* print every kernel's verdict */
	const char *out, *findings;
	const char *ccwrap;
	char cachedir[256];
	int checked;
	int jobs;         /* worker processes */
	pg_options gen;   /* the generator's options (families all, tune share 30, edges on by default) */
	int minimize_max; /* failures minimized per worker and unminimized signature (default 3) */
	int share_probe;  /* the selector's children share their worker's probed ctx (default 1) */
	int entry_every[N_NENTRY]; /* 0: entry off; N: every Nth accepted kernel */
	double slow_compile; /* a compile slower than this (s) is the finding slow-compile */
	const char *python;  /* the interpreter of the python entry */
	char pyscript[512], pypath[1024]; /* tests/fuzz/pyentry.py and build/python, absolute */
} config;

static config cfg;

/* What the child is doing now, in memory shared with the parent (mmap'd in main before any fork),
 * so a crash or a hang names its step ("crash in package: call"). */
/* With the selector entry: one ctx per worker whose machine probe (seconds of microbenchmarks,
 * once per ctx, for the model's choice) has run; the children inherit it by fork. */
static ct_ctx *g_probed_ctx;

static char *g_phase, *g_phase_base; /* this worker's slot of the shared page (96 of 128 bytes) */

static void set_phase(const char *what, int eng)
{
	if (g_phase)
		snprintf(g_phase, 96, "%s%s%s", eng >= 0 ? eng_name[eng] : "", eng >= 0 ? ": " : "", what);
}

/* ------------------------------------------------------------------ one kernel, in a child */

static void set_verdict(verdict *v, int cls, int eng, const char *fmt, ...)
{
	v->cls = cls;
	snprintf(v->engine, sizeof v->engine, "%s", eng >= 0 ? eng_name[eng] : "check");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof v->msg, fmt, ap);
	va_end(ap);
	for (char *p = v->msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '|')
			*p = ' ';
}

static void quiet_warning(void *ud, const char *msg)
{
	(void)ud, (void)msg;
}

/* Classify a failed status of lower/emit/run. */
static int classify(ct_status st, const char *msg)
{
	if (st == CT_ERR_VERIFY)
		return C_WRONG;
	if (strstr(msg, "out-of-bounds") || strstr(msg, "out of bounds"))
		return C_OOB;
	if (st == CT_ERR_LIMIT)
		return C_LIMIT;
	if (st == CT_ERR_INPUT || st == CT_ERR_UNSUPPORTED || st == CT_ERR_USAGE)
		return C_CHECK_MISMATCH;
	if (st == CT_ERR_COMPILE)
		return C_COMPILE;
	return C_RUNERR;
}

static double now(void);

/* Count one load of compiled code (how: "compiled" when the compiler ran). */
static void note_compile(verdict *v, const char *how, double secs)
{
	if (!how || strcmp(how, "compiled") != 0)
		return;
	v->compiles++;
	v->compile_s += secs;
	if (secs > v->compile_max)
		v->compile_max = secs;
}

/* Whether the host C src has a `#pragma omp simd` loop whose body starts with an unrolled loop
 * (cgen.c's "unrolled:" comment): unroll and jam without a vector reduction. */
static int jammed_store(const char *src)
{
	for (const char *p = strstr(src, "#pragma omp simd\n"); p; p = strstr(p + 1, "#pragma omp simd\n")) {
		const char *q = strchr(p + 17, '\n'); /* the for line */
		if (!q)
			return 0;
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, "/* unrolled:", 12) == 0)
			return 1;
	}
	return 0;
}

static int run_engine(ct_kernel *k, ct_ctx *ctx, int eng, verdict *v)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = eng == E_INTERP ? CT_ENGINE_INTERP : CT_ENGINE_NATIVE;
	o.threads = eng == E_NATIVE2 ? 2 : 1;
	o.verify = 1;
	o.repeat = 1;
#ifdef FUZZ_HAVE_CHECKED
	if (eng == E_NATIVE1 || eng == E_NATIVE2)
		o.checked = cfg.checked;
#endif
	ct_run_result r;
	memset(&r, 0, sizeof r);
	set_phase("run", eng);
	ct_status st = ct_kernel_run(k, &o, &r);
	note_compile(v, r.code_cache, r.compile_seconds);
	if (eng == E_CUDA && st == CT_OK && (!r.engine || strcmp(r.engine, "cuda") != 0)) {
		set_verdict(v, C_RUNERR, eng, "a plan(target=cuda) kernel ran on engine '%s', not on the GPU",
			    r.engine ? r.engine : "?");
		return 1;
	}
	if (st == CT_OK && r.verified == 1) {
		v->verified[eng] = 1;
		return 0;
	}
	if (st == CT_OK) {
		set_verdict(v, C_WRONG, eng, "not verified (verified=%d)", r.verified);
		return 1;
	}
	if (st == CT_ERR_VERIFY) {
		set_verdict(v, C_WRONG, eng, "max relative error %.3g in '%s'", r.max_rel_error,
			    r.mismatch_array ? r.mismatch_array : "?");
		return 1;
	}
	int c = classify(st, ct_ctx_last_message(ctx));
	set_verdict(v, c, eng, "%s", ct_ctx_last_message(ctx));
	return 1;
}

/* ------------------------------------------------------------------ the other entry points */

#define MAXARR 16

static uint64_t cur_seed; /* the kernel being checked (threads of the entries alternate by it) */

/* Deterministic inputs of every array and the unscheduled interpreter's result on them: the
 * reference the callable, package and Python entries are compared with. */
typedef struct refdata {
	int na;
	int64_t n[MAXARR];
	int dtype[MAXARR], role[MAXARR], rank[MAXARR], order[MAXARR][8], strided[MAXARR];
	int64_t ext[MAXARR][8];
	void *in[MAXARR], *want[MAXARR]; /* NULL for temps */
	double tol[MAXARR];
} refdata;

static void ref_free(refdata *rd)
{
	for (int i = 0; i < rd->na; i++)
		free(rd->in[i]), free(rd->want[i]);
	memset(rd, 0, sizeof *rd);
}

static int written_role(int role)
{
	return role == CT_OUTPUT || role == CT_INOUT;
}

/* The written order's trace, for the output rule (docs/LANGUAGE.md): which elements of each
 * output and temp array are written so far, and the first read of one that is not. */
typedef struct early_read {
	int na;
	int64_t n[MAXARR];
	unsigned char *done[MAXARR]; /* NULL for the other roles */
	int bad;                     /* the array of the first read before its write, or -1 */
	int64_t bad_at;
} early_read;

static void early_read_access(void *ud, int buf, int64_t off, int is_write)
{
	early_read *e = ud;
	if (buf < 0 || buf >= e->na || !e->done[buf] || off < 0 || off >= e->n[buf])
		return;
	if (is_write)
		e->done[buf][off] = 1;
	else if (!e->done[buf][off] && e->bad < 0)
		e->bad = buf, e->bad_at = off;
}

/* Whether kernel k (its unscheduled tree t) reads an element of an output or temp array that no
 * earlier access wrote, which check must have refused: 0, or 1 with v set. */
static int check_early_reads(ct_kernel *k, ct_looptree *t, const refdata *rd, verdict *v)
{
	early_read e;
	memset(&e, 0, sizeof e);
	e.na = rd->na;
	e.bad = -1;
	int ok = 1;
	for (int i = 0; i < rd->na && ok; i++) {
		e.n[i] = rd->n[i];
		if (rd->role[i] == CT_OUTPUT || rd->role[i] == CT_TEMP)
			ok = (e.done[i] = calloc((size_t)rd->n[i] + 1, 1)) != NULL;
	}
	ct_status st = ok ? ct_interp_trace(t, early_read_access, &e) : CT_ERR_NOMEM;
	for (int i = 0; i < rd->na; i++)
		free(e.done[i]);
	if (st != CT_OK)
		return 0; /* the reference run reports it */
	if (e.bad < 0)
		return 0;
	set_verdict(v, C_CHECK_MISMATCH, E_INTERP,
		    "check accepted a read of %s '%s' element %lld before any write of it (the output rule)",
		    rd->role[e.bad] == CT_TEMP ? "temp" : "output", ct_kernel_array_name(k, e.bad), (long long)e.bad_at);
	return 1;
}

/* Fill rd for k; 0, or 1 with v set. */
static int ref_make(ct_kernel *k, ct_ctx *ctx, refdata *rd, verdict *v)
{
	memset(rd, 0, sizeof *rd);
	rd->na = ct_kernel_array_count(k);
	if (rd->na > MAXARR) {
		set_verdict(v, C_RUNERR, -1, "difffuzz: more than %d arrays", MAXARR);
		return 1;
	}
	int any_f32 = 0;
	for (int i = 0; i < rd->na; i++)
		any_f32 |= ct_kernel_array_dtype(k, i) == CT_F32;
	for (int i = 0; i < rd->na; i++) {
		rd->n[i] = ct_kernel_array_elements(k, i);
		rd->dtype[i] = ct_kernel_array_dtype(k, i);
		rd->role[i] = ct_kernel_array_role(k, i);
		rd->rank[i] = ct_kernel_array_order(k, i, rd->order[i]);
		rd->strided[i] = ct_kernel_array_is_strided(k, i);
		for (int d = 0; d < rd->rank[i]; d++)
			rd->ext[i][d] = ct_kernel_array_extent(k, i, d);
		rd->tol[i] = ct_dtype_tolerance(any_f32 && rd->dtype[i] == CT_F64 ? CT_F32 : (ct_dtype)rd->dtype[i]);
		if (rd->role[i] == CT_TEMP)
			continue;
		size_t bytes = (size_t)rd->n[i] * ct_dtype_size((ct_dtype)rd->dtype[i]);
		rd->in[i] = malloc(bytes);
		rd->want[i] = malloc(bytes);
		if (!rd->in[i] || !rd->want[i]) {
			set_verdict(v, C_RUNERR, -1, "difffuzz: out of memory");
			return 1;
		}
		ct_fill_random(rd->in[i], (ct_dtype)rd->dtype[i], rd->n[i], 20261128, (uint64_t)i);
		memcpy(rd->want[i], rd->in[i], bytes);
	}
	ct_looptree *t = ct_kernel_lower(k, 0);
	ct_status st = t ? ct_interp_run(t, rd->want) : ct_ctx_last_status(ctx);
	int early = st == CT_OK && check_early_reads(k, t, rd, v);
	ct_looptree_free(t);
	if (early)
		return 1;
	if (st != CT_OK) {
		set_verdict(v, classify(st, ct_ctx_last_message(ctx)), E_INTERP, "reference: %s", ct_ctx_last_message(ctx));
		return 1;
	}
	return 0;
}

static void **ref_copy(const refdata *rd);
static void bufs_free(void **b, int n);
static int ref_compare(ct_kernel *k, const refdata *rd, void *const *got, int eng, verdict *v);

/* The scheduled and planned kernel in the interpreter on the entries' inputs: a schedule that
 * changes the result shows here (the interpreter runs it as written), not as a compiled entry's
 * failure, even where the engines' own inputs happened to hide it. */
static int ref_scheduled(ct_kernel *k, ct_ctx *ctx, const refdata *rd, verdict *v)
{
	void **b = ref_copy(rd);
	ct_looptree *t = ct_kernel_lower(k, 1);
	ct_status st = t && b ? ct_interp_run(t, b) : ct_ctx_last_status(ctx);
	ct_looptree_free(t);
	int fail = 1;
	if (st != CT_OK)
		set_verdict(v, classify(st, ct_ctx_last_message(ctx)), E_INTERP, "%s", ct_ctx_last_message(ctx));
	else
		fail = ref_compare(k, rd, b, E_INTERP, v);
	if (fail)
		snprintf(v->msg + strlen(v->msg), sizeof v->msg - strlen(v->msg), " (the entries' inputs)");
	bufs_free(b, rd->na);
	return fail;
}

/* Fresh copies of the inputs (the buffers an entry runs on). */
static void **ref_copy(const refdata *rd)
{
	void **b = calloc(MAXARR, sizeof *b);
	for (int i = 0; b && i < rd->na; i++)
		if (rd->in[i]) {
			size_t bytes = (size_t)rd->n[i] * ct_dtype_size((ct_dtype)rd->dtype[i]);
			b[i] = malloc(bytes);
			if (b[i])
				memcpy(b[i], rd->in[i], bytes);
		}
	return b;
}

static void bufs_free(void **b, int n)
{
	for (int i = 0; b && i < n; i++)
		free(b[i]);
	free(b);
}

/* Compare what entry eng wrote with the reference, with the tolerance rules of verification. */
static int ref_compare(ct_kernel *k, const refdata *rd, void *const *got, int eng, verdict *v)
{
	for (int i = 0; i < rd->na; i++) {
		if (!written_role(rd->role[i]))
			continue;
		double err = ct_max_rel_error(got[i], rd->want[i], (ct_dtype)rd->dtype[i], rd->n[i]);
		if (!(err <= rd->tol[i])) {
			set_verdict(v, C_WRONG, eng, "max relative error %.3g in '%s'", err, ct_kernel_array_name(k, i));
			return 1;
		}
	}
	v->verified[eng] = 1;
	return 0;
}

/* The values of k's runtime params, in declaration order; their count. */
static int runtime_values(ct_kernel *k, int64_t *out)
{
	int n = 0;
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		if (ct_kernel_param_is_runtime(k, i))
			out[n++] = ct_kernel_param_value(k, i, NULL);
	return n;
}

static int has_tune(ct_kernel *k)
{
	for (int i = 0; i < ct_kernel_param_count(k); i++)
		if (ct_kernel_param_candidates(k, i, NULL) > 0)
			return 1;
	return 0;
}

/* The selector: the solution for the kernel's sizes (the model's pick: the store is empty), run
 * and verified as `cachet run` does without -D for the tunable params. */
static int run_selector(ct_kernel *k, ct_ctx *ctx, verdict *v)
{
	if (!has_tune(k))
		return 0;
	ct_selector *sel = ct_selector_new(k, cfg.cachedir);
	if (!sel) {
		set_verdict(v, classify(ct_ctx_last_status(ctx), ct_ctx_last_message(ctx)), E_SELECTOR, "%s",
			    ct_ctx_last_message(ctx));
		return 1;
	}
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = CT_ENGINE_NATIVE;
	o.threads = 1 + (int)(cur_seed & 1);
	o.verify = 1;
	o.repeat = 1;
	ct_run_result r;
	ct_solution sol;
	memset(&r, 0, sizeof r);
	memset(&sol, 0, sizeof sol);
	set_phase("select and run", E_SELECTOR);
	ct_status st = ct_kernel_run_selected(sel, &o, &r, &sol);
	note_compile(v, r.code_cache, r.compile_seconds);
	char what[160] = "";
	for (int i = 0; i < sol.ntuned && strlen(what) < 120; i++)
		snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s=%lld", i ? " " : "",
			 ct_kernel_param_name(k, sol.tuned[i]), (long long)sol.values[i]);
	int fail = 1;
	if (st == CT_OK && r.verified == 1) {
		v->verified[E_SELECTOR] = 1;
		fail = 0;
	} else if (st == CT_OK || st == CT_ERR_VERIFY) {
		set_verdict(v, C_WRONG, E_SELECTOR, "max relative error %.3g in '%s' (selected %s, %d pieces)",
			    r.max_rel_error, r.mismatch_array ? r.mismatch_array : "?", what, sol.npieces);
	} else {
		set_verdict(v, classify(st, ct_ctx_last_message(ctx)), E_SELECTOR, "%s (selected %s)",
			    ct_ctx_last_message(ctx), what);
	}
	ct_selector_free(sel);
	return fail;
}

/* ct_kernel_compile + ct_callable_call on the reference's inputs. */
static int run_callable(ct_kernel *k, ct_ctx *ctx, const refdata *rd, verdict *v)
{
	ct_ctx_set_option(ctx, CT_OPT_THREADS, 1 + (int)(cur_seed & 1));
	double t0 = now();
	set_phase("compile", E_CALLABLE);
	ct_callable *h = ct_kernel_compile(k);
	double secs = now() - t0;
	if (!h) {
		set_verdict(v, classify(ct_ctx_last_status(ctx), ct_ctx_last_message(ctx)), E_CALLABLE, "%s",
			    ct_ctx_last_message(ctx));
		return 1;
	}
	if (secs > 0.05) /* a memo hit costs microseconds: this one ran the compiler */
		note_compile(v, "compiled", secs);
	void **b = ref_copy(rd), *args[MAXARR];
	int na = 0;
	for (int i = 0; i < rd->na; i++)
		if (rd->role[i] != CT_TEMP)
			args[na++] = b[i];
	int64_t params[PG_MAXP * 2];
	runtime_values(k, params);
	set_phase("call", E_CALLABLE);
	ct_status st = ct_callable_call(h, args, params);
	int fail = 1;
	if (st != CT_OK)
		set_verdict(v, classify(st, ct_ctx_last_message(ctx)), E_CALLABLE, "%s", ct_ctx_last_message(ctx));
	else
		fail = ref_compare(k, rd, b, E_CALLABLE, v);
	ct_callable_free(h);
	bufs_free(b, rd->na);
	return fail;
}

/* The argument names of cachet_NAME's prototype in the package header, in order; their count
 * (-1 when the header cannot be read). */
static int header_args(const char *hpath, const char *name, char names[][64], int cap)
{
	FILE *f = fopen(hpath, "r");
	if (!f)
		return -1;
	char line[1024], start[128];
	snprintf(start, sizeof start, "int cachet_%s(", name);
	int in = 0, n = 0;
	while (fgets(line, sizeof line, f)) {
		if (!in) {
			in = strncmp(line, start, strlen(start)) == 0;
			continue;
		}
		/* "\tconst float *CACHET_RESTRICT A /\* ... *\/," : the identifier before the comment */
		int last = strstr(line, ");") != NULL;
		char *c = strstr(line, "/*");
		if (c)
			*c = 0;
		char *e = line + strlen(line);
		while (e > line && !((e[-1] >= 'A' && e[-1] <= 'Z') || (e[-1] >= 'a' && e[-1] <= 'z') ||
				     (e[-1] >= '0' && e[-1] <= '9') || e[-1] == '_'))
			e--;
		char *b = e;
		while (b > line && ((b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= 'a' && b[-1] <= 'z') ||
				    (b[-1] >= '0' && b[-1] <= '9') || b[-1] == '_'))
			b--;
		if (e > b && n < cap)
			snprintf(names[n++], 64, "%.*s", (int)(e - b), b);
		if (last)
			break;
	}
	fclose(f);
	return n;
}

/* A strided array's call layout in the package entry: base offset 3 and the dense strides of its
 * declared layout doubled (a real view, with gaps), so the layout arguments are exercised. */
static void view_layout(const refdata *rd, int a, int64_t *off, int64_t *stride, int64_t *phys_n)
{
	int64_t s = 2;
	for (int d = rd->rank[a] - 1; d >= 0; d--) {
		int dim = rd->order[a][d];
		stride[dim] = s;
		s *= rd->ext[a][dim];
	}
	*off = 3;
	*phys_n = 3 + s + 1;
}

/* Copy between a dense buffer (declared layout) and its view (off, stride); to_view or back. */
static void view_copy(const refdata *rd, int a, void *dense, void *phys, int64_t off, const int64_t *stride,
		      int to_view)
{
	size_t es = ct_dtype_size((ct_dtype)rd->dtype[a]);
	int r = rd->rank[a];
	int64_t idx[8] = {0};
	for (int64_t e = 0; e < rd->n[a]; e++) {
		/* e is the dense offset in declared order: its logical index, most major first */
		int64_t rem = e, p = off;
		for (int d = r - 1; d >= 0; d--) {
			int dim = rd->order[a][d];
			idx[dim] = rem % rd->ext[a][dim];
			rem /= rd->ext[a][dim];
		}
		for (int d = 0; d < r; d++)
			p += idx[d] * stride[d];
		if (to_view)
			memcpy((char *)phys + (size_t)p * es, (char *)dense + (size_t)e * es, es);
		else
			memcpy((char *)dense + (size_t)e * es, (char *)phys + (size_t)p * es, es);
	}
}

typedef int (*entry48)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
		       intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
		       intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
		       intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
		       intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
		       intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t);

/* cachet build (ct_kernel_build) into a private folder, then the package's own C entry
 * cachet_NAME from its libNAME.so, its arguments laid out as NAME.h says (every argument is a
 * pointer or an int64_t: on x86-64 and AArch64 each takes one integer slot, so one 48-slot call
 * serves every prototype); strided arrays are passed as real views. */
static int run_package(ct_kernel *k, ct_ctx *ctx, const refdata *rd, verdict *v)
{
	char dir[512], path[700];
	snprintf(dir, sizeof dir, "%s/pkg-%d", cfg.cachedir, (int)getpid());
	double t0 = now();
	set_phase("build", E_PACKAGE);
	ct_status st = ct_kernel_build(k, dir);
	double secs = now() - t0;
	if (st != CT_OK) {
		set_verdict(v, classify(st, ct_ctx_last_message(ctx)), E_PACKAGE, "build: %s", ct_ctx_last_message(ctx));
		return 1;
	}
	note_compile(v, "compiled", secs);
	const char *name = ct_kernel_name(k);
	snprintf(path, sizeof path, "%s/%s.h", dir, name);
	char names[64][64];
	int nargs = header_args(path, name, names, 64);
	snprintf(path, sizeof path, "%s/lib%s.so", dir, name);
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	char sym[128];
	snprintf(sym, sizeof sym, "cachet_%s", name);
	entry48 fn = NULL;
	if (so)
		*(void **)&fn = dlsym(so, sym);
	if (nargs < 0 || nargs > 48 || !fn) {
		set_verdict(v, C_RUNERR, E_PACKAGE, "package: %s", !so ? dlerror() : !fn ? "no cachet_NAME" : "header");
		if (so)
			dlclose(so);
		return 1;
	}
	void **b = ref_copy(rd), *phys[MAXARR] = {0};
	int64_t off[MAXARR] = {0}, stride[MAXARR][8];
	for (int i = 0; i < rd->na; i++) {
		if (!rd->strided[i] || !b[i])
			continue;
		int64_t pn;
		view_layout(rd, i, &off[i], stride[i], &pn);
		phys[i] = calloc((size_t)pn, ct_dtype_size((ct_dtype)rd->dtype[i]));
		if (phys[i])
			view_copy(rd, i, b[i], phys[i], off[i], stride[i], 1);
	}
	intptr_t a[48] = {0};
	int bad = -1;
	for (int j = 0; j < nargs && bad < 0; j++) {
		int ai = -1, d = -1, found = 0;
		if (sscanf(names[j], "ct_vo%d", &ai) == 1 && ai >= 0 && ai < rd->na) {
			a[j] = (intptr_t)off[ai], found = 1;
		} else if (sscanf(names[j], "ct_vs%d_%d", &ai, &d) == 2 && ai >= 0 && ai < rd->na && d >= 0 && d < 8) {
			a[j] = (intptr_t)stride[ai][d], found = 1;
		} else {
			for (int i = 0; i < rd->na && !found; i++)
				if (strcmp(names[j], ct_kernel_array_name(k, i)) == 0)
					a[j] = (intptr_t)(phys[i] ? phys[i] : b[i]), found = 1;
			for (int i = 0; i < ct_kernel_param_count(k) && !found; i++)
				if (strcmp(names[j], ct_kernel_param_name(k, i)) == 0)
					a[j] = (intptr_t)ct_kernel_param_value(k, i, NULL), found = 1;
		}
		if (!found)
			bad = j;
	}
	int fail = 1;
	if (bad >= 0) {
		set_verdict(v, C_RUNERR, E_PACKAGE, "package header: argument '%s' names nothing", names[bad]);
	} else {
		set_phase("call", E_PACKAGE);
		int rc = fn(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
			    a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26],
			    a[27], a[28], a[29], a[30], a[31], a[32], a[33], a[34], a[35], a[36], a[37], a[38], a[39],
			    a[40], a[41], a[42], a[43], a[44], a[45], a[46], a[47]);
		for (int i = 0; i < rd->na; i++)
			if (phys[i])
				view_copy(rd, i, b[i], phys[i], off[i], stride[i], 0);
		if (rc != 0)
			set_verdict(v, C_RUNERR, E_PACKAGE, "cachet_%s returned %d", name, rc);
		else
			fail = ref_compare(k, rd, b, E_PACKAGE, v);
	}
	for (int i = 0; i < rd->na; i++)
		free(phys[i]);
	bufs_free(b, rd->na);
	dlclose(so);
	return fail;
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return 1;
	size_t w = fwrite(p, 1, n, f);
	return fclose(f) != 0 || w != n;
}

/* Python: cachet.Kernel(text) called on numpy arrays (tests/fuzz/pyentry.py, with
 * PYTHONPATH=build/python), strided arrays given as non-contiguous views; the arrays it wrote come
 * back through files and are compared with the reference. */
static int run_python(ct_kernel *k, const char *text, size_t len, const refdata *rd, verdict *v)
{
	char dir[512], path[700];
	snprintf(dir, sizeof dir, "%s/py-%d", cfg.cachedir, (int)getpid());
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/kernel.cachet", dir);
	int err = write_file(path, text, len);
	snprintf(path, sizeof path, "%s/spec.txt", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		err = 1;
	for (int i = 0; f && i < rd->na; i++) {
		if (rd->role[i] == CT_TEMP)
			continue;
		fprintf(f, "array %d %s %s %d %d %d", i, ct_kernel_array_name(k, i),
			ct_dtype_name((ct_dtype)rd->dtype[i]), rd->strided[i], written_role(rd->role[i]), rd->rank[i]);
		for (int d = 0; d < rd->rank[i]; d++)
			fprintf(f, " %lld", (long long)rd->ext[i][d]);
		for (int d = 0; d < rd->rank[i]; d++)
			fprintf(f, " %d", rd->order[i][d]);
		fprintf(f, "\n");
		char bin[760];
		snprintf(bin, sizeof bin, "%s/in%d.bin", dir, i);
		err |= write_file(bin, rd->in[i], (size_t)rd->n[i] * ct_dtype_size((ct_dtype)rd->dtype[i]));
	}
	for (int i = 0; f && i < ct_kernel_param_count(k); i++)
		if (ct_kernel_param_is_runtime(k, i))
			fprintf(f, "param %s %lld\n", ct_kernel_param_name(k, i), (long long)ct_kernel_param_value(k, i, NULL));
	if (f)
		fprintf(f, "threads %d\n", 1 + (int)(cur_seed & 1));
	if (f)
		fclose(f);
	if (err) {
		set_verdict(v, C_RUNERR, E_PYTHON, "difffuzz: cannot write %s", dir);
		return 1;
	}
	char cmd[2400];
	snprintf(cmd, sizeof cmd, "PYTHONPATH='%s' CACHET_CACHE_DIR='%s' '%s' '%s' '%s' 2>&1", cfg.pypath, cfg.cachedir,
		 cfg.python, cfg.pyscript, dir);
	double t0 = now();
	set_phase("python", E_PYTHON);
	FILE *p = popen(cmd, "r");
	char out[4096] = "";
	size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
	out[n] = 0;
	int rc = p ? pclose(p) : -1;
	double secs = now() - t0;
	/* the script prints "compile S" (seconds of its first call) */
	const char *cs = strstr(out, "compile ");
	if (cs && atof(cs + 8) > 0.05)
		note_compile(v, "compiled", atof(cs + 8));
	(void)secs;
	if (rc != 0) {
		char *last = strstr(out, "Error");
		const char *m = last ? last : out;
		while (last && (last = strstr(last + 1, "Error")) != NULL)
			m = last;
		set_verdict(v, strstr(out, "out-of-bounds") ? C_OOB : strstr(out, "CompileError") ? C_COMPILE : C_RUNERR,
			    E_PYTHON, "python: %.500s", m);
		return 1;
	}
	void **b = ref_copy(rd);
	for (int i = 0; i < rd->na; i++) {
		if (!written_role(rd->role[i]))
			continue;
		snprintf(path, sizeof path, "%s/out%d.bin", dir, i);
		FILE *g = fopen(path, "rb");
		size_t want = (size_t)rd->n[i] * ct_dtype_size((ct_dtype)rd->dtype[i]);
		size_t got = g ? fread(b[i], 1, want, g) : 0;
		if (g)
			fclose(g);
		if (got != want) {
			set_verdict(v, C_RUNERR, E_PYTHON, "python: no result for array '%s'", ct_kernel_array_name(k, i));
			bufs_free(b, rd->na);
			return 1;
		}
	}
	int fail = ref_compare(k, rd, b, E_PYTHON, v);
	bufs_free(b, rd->na);
	return fail;
}

/* text without its top-level `schedule {..}` and `plan {..}` blocks (malloc'd): the plain nest
 * `cachet auto` chooses for. Comments are kept; braces inside them are not counted. */
static char *strip_blocks(const char *text, size_t len)
{
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	int depth = 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == '#') {
			while (i < len && text[i] != '\n')
				out[o++] = text[i++];
			if (i < len)
				out[o++] = '\n';
			continue;
		}
		int word = depth == 0 && (i == 0 || !(isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_'));
		if (word && ((len - i >= 8 && !strncmp(text + i, "schedule", 8)) || (len - i >= 4 && !strncmp(text + i, "plan", 4)))) {
			/* skip to the block's closing brace */
			int d = 0, opened = 0;
			for (; i < len; i++) {
				if (text[i] == '#')
					while (i < len && text[i] != '\n')
						i++;
				if (i >= len)
					break;
				if (text[i] == '{')
					d++, opened = 1;
				else if (text[i] == '}' && --d == 0 && opened)
					break;
			}
			continue;
		}
		if (c == '{' || c == '(')
			depth++;
		else if (c == '}' || c == ')')
			depth--;
		out[o++] = c;
	}
	out[o] = 0;
	return out;
}

/* The caches auto plans for on every other seed (L1 512 bytes 2-way, L2 4 KiB 4-way). */
#define AUTO_TINY_CACHES "512:64:2,4K:64:4"

/* auto: the kernel's plain nest (its schedule and plan dropped) through ct_kernel_autoschedule
 * (model only, for 1 or 2 threads by seed), the file it returns parsed, run natively and verified:
 * what `cachet run --auto` does. */
static int run_auto(ct_kernel *k, ct_ctx *ctx, const char *text, size_t len, verdict *v)
{
	char *plain = strip_blocks(text, len);
	if (!plain)
		return 0;
	int threads = 1 + (int)(cur_seed & 1);
	ct_ctx *c2 = ct_ctx_new();
	set_phase("auto", E_AUTO);
	ct_kernel *p = ct_kernel_parse(c2, plain, strlen(plain), "auto.cachet");
	free(plain);
	int fail = 0;
	for (int i = 0; p && i < ct_kernel_param_count(k); i++) {
		int set = 0;
		int64_t val = ct_kernel_param_value(k, i, &set);
		if (ct_kernel_param_is_runtime(k, i) && set)
			ct_kernel_set_param(p, ct_kernel_param_name(k, i), val);
	}
	if (p && ct_kernel_recheck(p) != CT_OK) {
		ct_kernel_free(p);
		p = NULL;
	}
	if (!p) {
		/* the plain nest alone is refused (a size only the schedule made valid): not auto's */
		ct_ctx_free(c2);
		return 0;
	}
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = threads;
	/* every other seed plans for tiny caches, so that kernels of fuzz size overflow them and
	 * reach what only large arrays reach on this machine: the fusion and time blocks of sweeps,
	 * cache tiles smaller than the loops */
	if (cur_seed & 2)
		o.cache_spec = AUTO_TINY_CACHES;
	/* and every other seed (another bit) for vectors of 16 bytes: auto's units derived from them
	 * (a triangle's blocks: four vectors) then fit kernels of fuzz size; the run compiles for
	 * them too */
	if (cur_seed & 4)
		ct_ctx_set_option(c2, CT_OPT_VECTOR_BYTES, 16);
	char *out = NULL;
	ct_status st = ct_kernel_autoschedule(p, &o, &out, NULL);
	ct_kernel *a = NULL;
	if (st == CT_OK) {
		/* auto.c's notes on what it rewrote */
		v->auto_fused = strstr(out, " are fused along their rows ") != NULL;
		v->auto_dist = strstr(out, " is distributed (one nest per part)") != NULL;
		v->auto_rl = strstr(out, " are interchanged\n#   (right-looking)") != NULL;
		v->auto_tri = strstr(out, "), is cut in blocks: ") != NULL;
		v->auto_split = strstr(out, " products is split: ") != NULL;
		v->auto_expand = strstr(out, " is expanded along ") != NULL;
		v->auto_blocked = v->auto_fused && strstr(out, " in blocks of TB_") != NULL;
		v->auto_passes = strstr(out, " are fused along its rows (loop ") != NULL;
		v->auto_wave = strstr(out, " runs its rows in a wavefront ") != NULL;
		v->auto_jam = v->auto_passes && strstr(out, "#   jammed: blocks of ") != NULL;
	}
	if (st != CT_OK) {
		set_verdict(v, classify(st, ct_ctx_last_message(c2)), E_AUTO, "autoschedule: %s", ct_ctx_last_message(c2));
		fail = 1;
	} else if (!(a = ct_kernel_parse(c2, out, strlen(out), "auto.cachet"))) {
		set_verdict(v, C_CHECK_MISMATCH, E_AUTO, "its file does not check: %s", ct_ctx_last_message(c2));
		fail = 1;
	}
	for (int i = 0; a && !fail && i < ct_kernel_param_count(p); i++) {
		int set = 0;
		int64_t val = ct_kernel_param_value(p, i, &set);
		if (ct_kernel_param_is_runtime(p, i) && set)
			ct_kernel_set_param(a, ct_kernel_param_name(p, i), val);
	}
	if (a && !fail && ct_kernel_recheck(a) != CT_OK) {
		set_verdict(v, C_CHECK_MISMATCH, E_AUTO, "its file does not recheck: %s", ct_ctx_last_message(c2));
		fail = 1;
	}
	if (a && !fail) {
		ct_run_options ro;
		ct_run_options_init(&ro);
		ro.engine = CT_ENGINE_NATIVE;
		ro.threads = threads;
		ro.verify = 1;
		ro.repeat = 1;
		/* the plain nest as generated: auto may distribute or fuse its loops, or run its rows as a
		 * wavefront */
		ro.reference = p;
		ct_run_result r;
		memset(&r, 0, sizeof r);
		set_phase("auto run", E_AUTO);
		st = ct_kernel_run(a, &ro, &r);
		note_compile(v, r.code_cache, r.compile_seconds);
		if (st == CT_OK && r.verified == 1)
			v->verified[E_AUTO] = 1;
		else if (st == CT_OK || st == CT_ERR_VERIFY) {
			set_verdict(v, C_WRONG, E_AUTO, "max relative error %.3g in '%s'", r.max_rel_error,
				    r.mismatch_array ? r.mismatch_array : "?");
			fail = 1;
		} else {
			set_verdict(v, classify(st, ct_ctx_last_message(c2)), E_AUTO, "%s", ct_ctx_last_message(c2));
			fail = 1;
		}
	}
	if (fail && out)
		snprintf(v->msg + strlen(v->msg), sizeof v->msg - strlen(v->msg), " [auto%s%s, plan: %.200s]",
			 o.cache_spec ? " for caches " : "", o.cache_spec ? o.cache_spec : "",
			 strstr(out, "\nschedule {") ? strstr(out, "\nschedule {") + 1 :
			 strstr(out, "\nplan {") ? strstr(out, "\nplan {") + 1 : "none");
	free(out);
	ct_kernel_free(a);
	ct_kernel_free(p);
	ct_ctx_free(c2);
	(void)ctx;
	return fail;
}

/* The entries other than ct_kernel_run that the sample mask asks for; 1 on a failure (v set). */
static int run_entries(ct_kernel *k, ct_ctx *ctx, const char *text, size_t len, int mask, verdict *v)
{
	if ((mask & M_SELECTOR) && run_selector(k, ctx, v))
		return 1;
	if ((mask & M_AUTO) && run_auto(k, ctx, text, len, v))
		return 1;
	if (!(mask & (M_CALLABLE | M_PACKAGE | M_PYTHON)))
		return 0;
	refdata rd;
	set_phase("reference", E_INTERP);
	int fail = ref_make(k, ctx, &rd, v) || ref_scheduled(k, ctx, &rd, v);
	if (!fail && (mask & M_CALLABLE))
		fail = run_callable(k, ctx, &rd, v);
	if (!fail && (mask & M_PACKAGE))
		fail = run_package(k, ctx, &rd, v);
	if (!fail && (mask & M_PYTHON))
		fail = run_python(k, text, len, &rd, v);
	ref_free(&rd);
	return fail;
}

/* Parse, check, lower, emit and run text; fill v. */
/* ------------------------------------------------------------------ cudacompile: nvcc --cubin */

/* The campaign's workers batch their CUDA sources (g_cuda_dir set): the child writes the source
 * into the worker's folder and the worker compiles the batch as one translation unit (one nvcc
 * run instead of one a kernel), each source in a namespace of its own; when the batch fails, each
 * source is compiled alone, and only a source that fails alone is a finding. Elsewhere (--file,
 * the minimizer) the child compiles at once. */
static char g_cuda_dir[400];

/* Seconds nvcc may take on one batch or source: --slow-compile's (a longer one is the finding
 * slow-compile, as for the C compiler). */
static int nvcc_limit(void)
{
	return cfg.slow_compile >= 1 ? (int)cfg.slow_compile : 1;
}

/* Run nvcc --cubin on cu into cubin (log: its output), stopped after nvcc_limit() seconds; the
 * exit status (-1: not run; 124: stopped). */
static int nvcc_cubin(const char *cu, const char *cubin, const char *log)
{
	char cmd[2000];
	snprintf(cmd, sizeof cmd, "timeout %d %s --cubin -arch=%s -o '%s' '%s' >'%s' 2>&1", nvcc_limit(), cfg.nvcc,
		 cfg.cuda_arch, cubin, cu, log);
	int st = system(cmd);
	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The first error line of nvcc's log (or its first line) into out. */
static void nvcc_first_error(const char *log, char *out, size_t cap)
{
	FILE *f = fopen(log, "r");
	char line[600], first[600] = "";
	out[0] = 0;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!first[0])
			snprintf(first, sizeof first, "%s", line);
		if (strstr(line, "error")) {
			const char *msg = strstr(line, "error");
			snprintf(out, cap, "%.*s", (int)(cap > 1 ? cap - 1 : 0), msg);
			break;
		}
	}
	if (f)
		fclose(f);
	if (!out[0])
		snprintf(out, cap, "%.*s", (int)(cap > 1 ? cap - 1 : 0), first[0] ? first : "nvcc failed without output");
}

/* Compile one source alone in folder dir as NAME.cu: 0, or 1 with the finding in v. */
static int cuda_compile_one(const char *dir, const char *name, verdict *v)
{
	char cu[600], cubin[600], log[600];
	snprintf(cu, sizeof cu, "%s/%s.cu", dir, name);
	snprintf(cubin, sizeof cubin, "%s/%s.cubin", dir, name);
	snprintf(log, sizeof log, "%s/%s.log", dir, name);
	set_phase("nvcc", E_CUDACC);
	double t0 = now();
	int rc = nvcc_cubin(cu, cubin, log);
	note_compile(v, "compiled", now() - t0);
	if (rc == 0) {
		v->verified[E_CUDACC] = 1;
		return 0;
	}
	if (rc == 124) {
		set_verdict(v, C_SLOW_COMPILE, E_CUDACC, "nvcc --cubin -arch=%s was still running after %d s", cfg.cuda_arch,
			    nvcc_limit());
		return 1;
	}
	char err[500];
	nvcc_first_error(log, err, sizeof err);
	set_verdict(v, C_COMPILE, E_CUDACC, "nvcc --cubin -arch=%s (exit %d): %s", cfg.cuda_arch, rc, err);
	return 1;
}

/* cudacompile on the emitted source src (n bytes) of kernel pk (NULL: a file): into the batch, or
 * compiled now. 0, or 1 with the finding in v. */
static int cuda_compile(const pg_kernel *pk, const char *text, const char *src, size_t n, verdict *v)
{
	char dir[600], path[700], name[64];
	(void)text;
	snprintf(name, sizeof name, "fz%llu", (unsigned long long)(pk ? pk->seed : 0));
	int batch = g_cuda_dir[0] && pk;
	if (batch)
		snprintf(dir, sizeof dir, "%s", g_cuda_dir);
	else if (snprintf(dir, sizeof dir, "%s/cuda-%d", cfg.cachedir[0] ? cfg.cachedir : "/tmp", (int)getpid()) &&
		 mkdir(dir, 0700) != 0 && errno != EEXIST) {
		set_verdict(v, C_RUNERR, E_CUDACC, "cannot make %s: %s", dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "%s/%s.cu", dir, name);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(src, 1, n, f) != n || fclose(f) != 0) {
		set_verdict(v, C_RUNERR, E_CUDACC, "cannot write %s", path);
		return 1;
	}
	if (batch) {
		v->cuda_pending = 1;
		return 0;
	}
	return cuda_compile_one(dir, name, v);
}

/* The ranks and grid of a file's "# ranks: N [--grid PxQ]" line (ranks 0 when it has none). */
static int file_ranks(const char *text, int64_t *grid, int *ngrid)
{
	const char *p = strstr(text, "# ranks:");
	*ngrid = 0;
	if (!p)
		return 0;
	int ranks = atoi(p + 8);
	const char *g = strstr(p, "--grid ");
	const char *eol = strchr(p, '\n');
	if (g && (!eol || g < eol))
		for (g += 7; *ngrid < 3 && *g >= '0' && *g <= '9'; g++) {
			char *end;
			grid[(*ngrid)++] = strtoll(g, &end, 10);
			g = end;
			if (*g != 'x')
				break;
		}
	return ranks;
}

/* cachet's message about a failed distributed run, without the ranks' backtraces, addresses and
 * Open MPI's banners (they differ from run to run, so the minimizer and the dedupe could never
 * match two runs): its first line, then the first line of the ranks' output that says something
 * ("free(): invalid pointer", "Signal: Segmentation fault (11)"). */
static void mpi_message(const char *msg, char *out, size_t cap)
{
	const char *nl = strchr(msg, '\n');
	size_t n = nl ? (size_t)(nl - msg) : strlen(msg);
	while (n > 0 && (msg[n - 1] == ':' || msg[n - 1] == ' '))
		n--;
	snprintf(out, cap, "%.*s", (int)(n < 300 ? n : 300), msg);
	for (const char *p = nl; p && *p; p = strchr(p, '\n')) {
		p++;
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *q = p;
		if (*q == '[') { /* "[host:pid] text": the text, unless it is a backtrace frame or a banner */
			q = memchr(p, ']', len);
			if (!q)
				continue;
			q += 2;
			if (q >= p + len || *q == '[' || *q == '*' || strncmp(q, "Signal code", 11) == 0)
				continue;
		}
		size_t m = len - (size_t)(q - p);
		if (m < 4 || *q == '-' || strncmp(q, "Primary job", 11) == 0 || strncmp(q, "a non-zero", 10) == 0 ||
		    strncmp(q, "mpirun noticed", 14) == 0 || strstr(q, "*** Process received") == q)
			continue;
		size_t have = strlen(out);
		snprintf(out + have, cap - have, ": %.*s", (int)(m < 200 ? m : 200), q);
		break;
	}
}

/* A distribute() kernel on its ranks (ct_kernel_run_ranks: mpicc, mpirun, verified against the
 * interpreter). A refusal is fine when it is CT_ERR_INPUT with a "distribute:" message located in
 * the file; anything else that is not verified is a failure. Returns 1 on a failure. */
static int run_mpi(ct_kernel *k, ct_ctx *ctx, const pg_kernel *pk, const char *text, verdict *v)
{
	int64_t grid[3] = {0, 0, 0};
	int ngrid = 0, ranks;
	if (pk) {
		ranks = pk->d.ranks;
		if (pk->d.rungrid)
			for (ngrid = 0; ngrid < pk->d.n; ngrid++)
				grid[ngrid] = pk->d.rgrid[ngrid];
	} else {
		ranks = file_ranks(text, grid, &ngrid);
	}
	if (ranks < 1)
		ranks = 2;
	ct_run_options o;
	ct_run_options_init(&o);
	o.verify = 1;
	ct_run_result r;
	memset(&r, 0, sizeof r);
	set_phase("run", E_MPI);
	ct_status st = ct_kernel_run_ranks(k, &o, ranks, ngrid ? grid : NULL, ngrid, &r, NULL);
	if (r.compile_seconds > 0)
		note_compile(v, "compiled", r.compile_seconds);
	const char *msg = ct_ctx_last_message(ctx);
	if (st == CT_OK && r.verified == 1) {
		v->verified[E_MPI] = 1;
		v->dist_drawn = pk && (pk->d.refuse || pk->d.split_idx);
		return 0;
	}
	if (st == CT_OK) {
		set_verdict(v, C_WRONG, E_MPI, "not verified (verified=%d) on %d ranks", r.verified, ranks);
		return 1;
	}
	if (st == CT_ERR_VERIFY) {
		set_verdict(v, C_WRONG, E_MPI, "max relative error %.3g in '%s' on %d ranks", r.max_rel_error,
			    r.mismatch_array ? r.mismatch_array : "?", ranks);
		return 1;
	}
	if (st == CT_ERR_INPUT) {
		const char *file = ct_ctx_last_file(ctx);
		int located = ct_ctx_last_line(ctx) > 0 && ct_ctx_last_col(ctx) > 0 && file &&
			      strcmp(file, "fuzz.cachet") == 0;
		if (located && strstr(msg, "distribute: ")) {
			set_verdict(v, C_PASS, E_MPI, "refused: %s", msg);
			v->dist_refused = 1;
			return 0;
		}
		/* check accepted it: a refusal that is not distribute()'s own is a check mismatch */
		set_verdict(v, located ? C_CHECK_MISMATCH : C_REJECT_NOLOC, E_MPI,
			    "refused on %d ranks without a distribute: message (%s:%d:%d): %s", ranks,
			    file ? file : "(null)", ct_ctx_last_line(ctx), ct_ctx_last_col(ctx), msg);
		return 1;
	}
	int c = classify(st, msg);
	if (c == C_CHECK_MISMATCH || c == C_LIMIT)
		c = C_RUNERR; /* the grid and the ranks are the generator's: any other refusal is a finding */
	char first[600];
	mpi_message(msg, first, sizeof first);
	set_verdict(v, c, E_MPI, "%s (%d ranks)", first, ranks);
	return 1;
}

static void check_kernel(const char *text, size_t len, const pg_kernel *pk, int native, verdict *v)
{
	memset(v, 0, sizeof *v);
	cur_seed = pk ? pk->seed : 0;
	ct_ctx *ctx = g_probed_ctx ? g_probed_ctx : ct_ctx_new();
	if (!ctx) {
		set_verdict(v, C_RUNERR, -1, "ct_ctx_new failed");
		return;
	}
	ct_cache_set_warning_handler(ctx, quiet_warning, NULL);
	if (cfg.cachedir[0])
		ct_cache_set_dir(ctx, cfg.cachedir);
	if (cfg.ccwrap)
		ct_ctx_set_compiler(ctx, cfg.ccwrap);
	ct_kernel *k = ct_kernel_parse(ctx, text, len, "fuzz.cachet");
	for (int i = 0; k && pk && i < pk->np; i++) {
		if (!pk->p[i].runtime)
			continue;
		if (ct_kernel_set_param(k, pk->p[i].name, pk->p[i].value) != CT_OK || ct_kernel_recheck(k) != CT_OK) {
			ct_kernel_free(k);
			k = NULL;
		}
	}
	/* a file: the -D NAME=VALUE of its "# run-with:" line */
	const char *rw = k && !pk ? strstr(text, "# run-with:") : NULL;
	while (k && rw && (rw = strstr(rw, "-D ")) != NULL && rw < text + len) {
		char name[64];
		long long val;
		rw += 3;
		if (sscanf(rw, "%63[A-Za-z0-9_]=%lld", name, &val) == 2 &&
		    (ct_kernel_set_param(k, name, val) != CT_OK || ct_kernel_recheck(k) != CT_OK)) {
			ct_kernel_free(k);
			k = NULL;
		}
	}
	if (!k) {
		int line = ct_ctx_last_line(ctx), col = ct_ctx_last_col(ctx);
		const char *file = ct_ctx_last_file(ctx);
		int located = line > 0 && col > 0 && file && strcmp(file, "fuzz.cachet") == 0;
		set_verdict(v, located ? C_REJECT : C_REJECT_NOLOC, -1, "%s:%d:%d: %s", file ? file : "(null)", line,
			    col, ct_ctx_last_message(ctx));
		if (ctx != g_probed_ctx)
			ct_ctx_free(ctx);
		return;
	}
	v->accepted = 1;
	v->early_read = strstr(text, "  for (q: N) {\n    T[q] = B[i, q] * 0.5 + q\n") != NULL;
	int cuda = pk ? pk->cuda : strstr(text, "target=cuda") != NULL;
	int opencl = !cuda && (pk ? pk->opencl : strstr(text, "target=opencl") != NULL);
	set_phase("lower", -1);
	ct_looptree *t = ct_kernel_lower(k, 1);
	if (!t) {
		set_verdict(v, classify(ct_ctx_last_status(ctx), ct_ctx_last_message(ctx)), -1, "lower: %s",
			    ct_ctx_last_message(ctx));
		snprintf(v->engine, sizeof v->engine, "lower");
		goto done;
	}
	free(ct_looptree_to_string(t, CT_FORMAT_TEXT));
	free(ct_looptree_to_string(t, CT_FORMAT_JSON));
	ct_looptree_free(t);
	size_t n = 0;
	set_phase("emit", -1);
	char *src = ct_kernel_emit(k, cuda ? "cuda" : opencl ? "opencl" : "host", &n);
	if (!src && cuda && ct_ctx_last_status(ctx) == CT_ERR_UNSUPPORTED && ct_ctx_last_message(ctx)[0]) {
		/* the CUDA generator refuses what it cannot do, with a message: fine */
		v->cuda_refused = 1;
		v->cls = C_PASS;
		set_verdict(v, C_PASS, E_CUDACC, "refused: %s", ct_ctx_last_message(ctx));
		goto done;
	}
	if (!src) {
		set_verdict(v, classify(ct_ctx_last_status(ctx), ct_ctx_last_message(ctx)), -1, "emit: %s",
			    ct_ctx_last_message(ctx));
		snprintf(v->engine, sizeof v->engine, "emit");
		goto done;
	}
	v->vreduce = !cuda && !opencl && strstr(src, ", each summed in ") != NULL; /* vreduce.c's comment */
	v->vjam = !cuda && !opencl && (strstr(src, " (the copies of unrolled loops jammed), ") != NULL ||
	                               jammed_store(src));
	v->preduce = !cuda && !opencl && strstr(src, "parallel reduction over ") != NULL; /* preduce.c's comment */
	if (cuda && cfg.cudacompile && cuda_compile(pk, text, src, n, v)) {
		free(src);
		goto done;
	}
	free(src);
	if (cfg.interp && run_engine(k, ctx, E_INTERP, v))
		goto done;
	if (cuda) {
		if (cfg.cuda && (native & M_RUN) && run_engine(k, ctx, E_CUDA, v))
			goto done;
	} else if (opencl) {
		if (cfg.opencl && (native & M_RUN) && run_engine(k, ctx, E_OPENCL, v))
			goto done;
	} else {
		if (cfg.native && (native & M_RUN) &&
		    (run_engine(k, ctx, E_NATIVE1, v) || run_engine(k, ctx, E_NATIVE2, v)))
			goto done;
		if (run_entries(k, ctx, text, len, native, v))
			goto done;
		int dist = pk ? pk->kind == PG_DIST : strstr(text, "distribute(") != NULL;
		if (dist && cfg.mpi && (native & M_RUN) && run_mpi(k, ctx, pk, text, v))
			goto done;
	}
	v->cls = C_PASS;
	if (v->compile_max > cfg.slow_compile) {
		set_verdict(v, C_SLOW_COMPILE, -1, "the C compiler took %.1f s (limit %g s)", v->compile_max,
			    cfg.slow_compile);
		snprintf(v->engine, sizeof v->engine, "compile");
	}
done:
	ct_kernel_free(k);
	if (ctx != g_probed_ctx)
		ct_ctx_free(ctx);
}

/* Whether comm names a compiler, assembler or linker process. */
static int is_compiler(const char *comm)
{
	return strstr(comm, "cc") || strstr(comm, "clang") || strcmp(comm, "as") == 0 || strcmp(comm, "ld") == 0 ||
	       strstr(comm, "collect2") || strstr(comm, "lto") || strstr(comm, "ld.") == comm;
}

/* The descendants of pid (from /proc): their pids into out (cap), their count; *compiler set when
 * one of them is a compiler. */
static int descendants(pid_t pid, pid_t *out, int cap, int *compiler)
{
	static pid_t pids[32768], ppids[32768];
	static char comms[32768][24];
	int n = 0, m = 0;
	*compiler = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < 32768) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char path[300], buf[512];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t r = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[r] = 0;
		char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
		if (!lp || !rp)
			continue;
		int pp = 0;
		if (sscanf(rp + 2, "%*c %d", &pp) != 1)
			continue;
		pids[n] = (pid_t)atoi(buf);
		ppids[n] = (pid_t)pp;
		snprintf(comms[n], sizeof comms[n], "%.*s", (int)(rp - lp - 1), lp + 1);
		n++;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		pid_t q = ppids[i];
		for (int depth = 0; depth < 12 && q > 1 && q != pid; depth++) {
			pid_t next = 0;
			for (int j = 0; j < n; j++)
				if (pids[j] == q)
					next = ppids[j];
			q = next;
		}
		if (q != pid)
			continue;
		if (is_compiler(comms[i]))
			*compiler = 1;
		if (m < cap)
			out[m++] = pids[i];
	}
	return m;
}

/* Run check_kernel in a child (crashes and hangs become verdicts). The parent keeps the clock: when
 * the child has not answered in --timeout seconds it is a hang, or a slow compile when a compiler
 * is still running under it; the child and everything under it are then killed. */
static void test_in_child(const char *text, size_t len, const pg_kernel *pk, int native, verdict *v)
{
	int fd[2];
	memset(v, 0, sizeof *v);
	if (pipe(fd) != 0) {
		set_verdict(v, C_RUNERR, -1, "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	if (g_phase)
		snprintf(g_phase, 96, "parse");
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		setpgid(0, 0);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0 && !getenv("FUZZ_CHILD_STDERR"))
			dup2(devnull, 2);
		verdict cv;
		check_kernel(text, len, pk, native, &cv);
		size_t off = 0;
		while (off < sizeof cv) {
			ssize_t w = write(fd[1], (char *)&cv + off, sizeof cv - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fd[1]);
	if (pid > 0)
		setpgid(pid, pid);
	size_t off = 0;
	double deadline = now() + cfg.timeout;
	int timed_out = 0, compiling = 0;
	while (pid > 0 && off < sizeof *v) {
		int ms = (int)((deadline - now()) * 1000);
		struct pollfd pfd = {fd[0], POLLIN, 0};
		int pr = ms > 0 ? poll(&pfd, 1, ms) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0) {
			pid_t kids[256];
			int nk = descendants(pid, kids, 256, &compiling);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			for (int i = 0; i < nk; i++)
				kill(kids[i], SIGKILL);
			timed_out = 1;
			break;
		}
		ssize_t r = read(fd[0], (char *)v + off, sizeof *v - off);
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (pid < 0)
		set_verdict(v, C_RUNERR, -1, "fork: %s", strerror(errno));
	else if (off < sizeof *v) {
		int accepted = v->accepted;
		if (timed_out && compiling) {
			set_verdict(v, C_SLOW_COMPILE, -1, "the C compiler was still running after %d s", cfg.timeout);
			snprintf(v->engine, sizeof v->engine, "compile");
		}
		else if (timed_out)
			set_verdict(v, C_HANG, -1, "no answer in %d s (in %s)", cfg.timeout, g_phase ? g_phase : "?");
		else if (WIFSIGNALED(status))
			set_verdict(v, C_CRASH, -1, "signal %d (%s) in %s", WTERMSIG(status), strsignal(WTERMSIG(status)),
				    g_phase ? g_phase : "?");
		else
			set_verdict(v, C_CRASH, -1, "child exited %d without a verdict (in %s)", WEXITSTATUS(status),
				    g_phase ? g_phase : "?");
		v->accepted = accepted || (timed_out && compiling);
	}
}

static int is_failure(int c)
{
	return c >= C_REJECT_NOLOC;
}

static void test_kernel(const pg_kernel *k, int native, verdict *v)
{
	static char text[65536];
	size_t n = pg_print(k, text, sizeof text);
	test_in_child(text, n, k, native, v);
}

/* ------------------------------------------------------------------ findings */

static int ends_with(const char *s, size_t n, const char *w)
{
	size_t m = strlen(w);
	return n >= m && memcmp(s + n - m, w, m) == 0;
}

/* The message with numbers and quoted names blanked (the dedupe key). */
static void normalize(const char *m, char *out, size_t cap)
{
	size_t n = 0;
	/* an OpenCL build log: its first error, without the device and the temp file's name */
	const char *log = strstr(m, "build log:"), *cl = log ? strstr(log, ".cl:") : NULL;
	char first[300];
	if (cl) {
		cl += 4;
		while ((*cl >= '0' && *cl <= '9') || *cl == ':')
			cl++;
		snprintf(first, sizeof first, "opencl build: %s", cl);
		char *cut = strstr(first, " error:");
		if (cut)
			*cut = 0;
		m = first;
	}
	for (const char *p = m; *p && n + 4 < cap; p++) {
		if (*p >= '0' && *p <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			if (n && out[n - 1] == '-')
				n--;
			out[n++] = '#';
		} else if (*p == '(' && (ends_with(out, n, "unroll") || ends_with(out, n, "vectorize") ||
					 ends_with(out, n, "parallelize")) && strchr(p, ')')) {
			p = strchr(p, ')'); /* the indices of a verb: unroll(?) */
			out[n++] = '(', out[n++] = '?', out[n++] = ')';
		} else if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');
			if (q && q - p < 40) {
				out[n++] = '?';
				p = q;
			}
		} else if (*p == '.' && n && out[n - 1] == '#') {
			/* 2.2 -> # */
		} else if (*p == 'e' && n && out[n - 1] == '#' && (p[1] == '-' || p[1] == '+')) {
			p++;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = 0;
}

static int same_failure(const verdict *a, const verdict *b)
{
	if (a->cls != b->cls)
		return 0;
	if (a->cls == C_WRONG || a->cls == C_OOB || a->cls == C_CRASH || a->cls == C_HANG)
		return 1;
	char na[600], nb[600];
	normalize(a->msg, na, sizeof na);
	normalize(b->msg, nb, sizeof nb);
	return strcmp(na, nb) == 0;
}

/* Plan features of k, for the index (what the minimized kernel still needs). */
static void features(const pg_kernel *k, char *buf, size_t cap)
{
	buf[0] = 0;
#define FEAT(cond, s) \
	do { \
		if ((cond) && !strstr(buf, s " ")) \
			snprintf(buf + strlen(buf), cap - strlen(buf), "%s ", s); \
	} while (0)
	for (int c = 0; c < k->nc; c++) {
		const pg_cache *cc = &k->c[c];
		if (!cc->alive)
			continue;
		FEAT(1, "cache");
		FEAT(cc->parent >= 0, "hierarchy");
		FEAT(cc->trig, "trigger");
		FEAT(cc->dbuf, "double_buffer");
		FEAT(cc->place == PG_MAXEL, "max_elements");
		FEAT(cc->layout, "layout");
		FEAT(cc->thrifty == 0, "thrifty=false");
		FEAT(cc->loc == 1, "local");
		FEAT(cc->loc == 2, "private");
		FEAT(cc->packed, "packed");
	}
	for (int s = 0; s < k->ns; s++) {
		if (!k->s[s].alive)
			continue;
		FEAT(1, "split");
		FEAT(k->s[s].balanced, "balanced");
	}
	for (int b = 0; b < k->nb; b++)
		FEAT(k->b[b].reorder, "reorder");
	for (int v = 0; v < k->nv; v++) {
		const pg_verbi *vv = &k->v[v];
		if (!vv->alive)
			continue;
		FEAT(vv->kind == PG_VECTORIZE, "vectorize");
		FEAT(vv->nontemporal, "nontemporal");
		FEAT(vv->kind == PG_UNROLL, "unroll");
		FEAT(vv->kind == PG_PARALLELIZE, "parallelize");
		FEAT(vv->spmd, "spmd");
	}
	for (int p = 0; p < k->np; p++)
		FEAT(k->p[p].runtime, "runtime");
	for (int a = 0; a < k->na; a++)
		FEAT(k->a[a].strided, "strided");
	FEAT(k->opencl && !k->cuda, "opencl");
	FEAT(k->cuda, "cuda");
	FEAT(k->kind == PG_DIST && k->d.n > 0, "distribute");
	FEAT(k->kind == PG_DIST && (k->d.grid[0] > 0 || k->d.rungrid), "grid");
	for (int p = 0; p < k->np; p++)
		FEAT(k->p[p].ntune, "tune");
	snprintf(buf + strlen(buf), cap - strlen(buf), "kernel=%s ", pg_kind_name(k->kind));
#undef FEAT
	size_t n = strlen(buf);
	if (n)
		buf[n - 1] = 0;
}

/* Shrink k while it fails as v does; returns the number of tests made. */
static int minimize(pg_kernel *k, int native, verdict *v)
{
	int tests = 0, e = 0;
	/* each try of a slow compile costs up to --timeout: reported as drawn */
	if (v->cls == C_SLOW_COMPILE)
		return 0;
	/* a failure before any run needs no compiled runs to reproduce */
	if (strcmp(v->engine, "lower") == 0 || strcmp(v->engine, "emit") == 0 || strcmp(v->engine, "check") == 0)
		native = 0;
	time_t start = time(NULL);
	pg_kernel cand;
	while (tests < 400 && time(NULL) - start < 120 && pg_edit(k, e, &cand)) {
		verdict cv;
		test_kernel(&cand, native, &cv);
		tests++;
		if (same_failure(&cv, v)) {
			*k = cand;
			*v = cv;
		} else {
			e++;
		}
	}
	return tests;
}

/* Whether sig is already listed in dir/.sigs; if not, add it (under a lock: two campaigns share it). */
static int seen_before(const char *dir, const char *sig, const char *file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/.sigs", dir);
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return 0;
	flock(fd, LOCK_EX);
	FILE *f = fdopen(fd, "r+");
	char line[1024];
	int seen = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *tab = strchr(line, '\t');
		if (tab)
			*tab = 0;
		if (strcmp(line, sig) == 0)
			seen = 1;
	}
	if (f && !seen) {
		fseek(f, 0, SEEK_END);
		fprintf(f, "%s\t%s\n", sig, file);
		fflush(f);
	}
	flock(fd, LOCK_UN);
	if (f)
		fclose(f);
	else
		close(fd);
	return seen;
}

static void append_index(const char *dir, const char *fname, const verdict *v, const char *feat);

/* Which known class of issue 34 a minimized finding looks like ("" when none): the minimizer keeps
 * a reorder, a strided array or a huge split only when the failure needs it. */
static const char *known_class(const pg_kernel *k, const verdict *v, const char *feat)
{
	int carried = 0, reorder = 0, huge = 0;
	for (int b = 0; b < k->nb; b++)
		carried |= k->b[b].carried, reorder |= k->b[b].reorder;
	for (int s = 0; s < k->ns; s++)
		huge |= k->s[s].alive && k->s[s].size > ((int64_t)1 << 40);
	/* the interpreter runs the schedule as written: a dependence broken by it fails there first */
	if ((v->cls == C_WRONG || v->cls == C_OOB) && reorder && carried && strcmp(v->engine, "interp") == 0)
		return "a reorder across a loop-carried dependence that check accepts (issue 34 item 1, helper deps)";
	if (strcmp(v->engine, "selector") == 0 && strstr(feat, "strided"))
		return "the selector's pieces and strided arrays (issue 34 item 2, helper entry)";
	if (v->cls == C_SLOW_COMPILE)
		return "a plan whose C takes the compiler minutes (unroll of a loop around a nest; issue 34 item 5 and "
		       "'also found': cap what the plan may generate at check)";
	if (strstr(v->msg, "must not be negative") || strstr(v->msg, "must be at least 1"))
		return "a runtime param below 1 that check accepts (issue 34, 'also found': check -D M=-1)";
	if (huge || strstr(v->msg, "overflow") || strstr(v->msg, "out of memory") || strstr(v->msg, "too large"))
		return "64-bit overflow at the edges (issue 34 item 4, helper edges)";
	if ((v->cls == C_WRONG) && (strncmp(v->engine, "native", 6) == 0 || strcmp(v->engine, "package") == 0 ||
				    strcmp(v->engine, "selector") == 0 ||
				    strcmp(v->engine, "callable") == 0 || strcmp(v->engine, "python") == 0))
		return "compiled code wrong where the interpreter is right: check the emitted C against -O0 / "
		       "clang (a gcc 12.2 miscompile is issue 34 item 3, helper entry)";
	return "";
}

static void write_finding(const char *dir, const char *fname, const char *text, const pg_kernel *k,
			  const verdict *v, const char *feat, int index)
{
	char path[512];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/%s", dir, fname);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	char rw[256];
	pg_run_with(k, rw, sizeof rw);
	fprintf(f, "# fuzz finding (tests/fuzz/difffuzz): seed %llu, class %s, engine %s\n",
		(unsigned long long)k->seed, cls_name[v->cls], v->engine);
	fprintf(f, "# message: %s\n# features: %s\n", v->msg, feat);
	if (known_class(k, v, feat)[0])
		fprintf(f, "# looks like: %s\n", known_class(k, v, feat));
	if (rw[0])
		fprintf(f, "# run-with: %s\n", rw);
	pg_ranks_of(k, rw, sizeof rw);
	if (rw[0])
		fprintf(f, "# ranks: %s\n", rw);
	fputs(text, f);
	fclose(f);
	if (index)
		append_index(dir, fname, v, feat);
}

/* One line of dir/INDEX.md (the table's head first when the file is new). */
static void append_index(const char *dir, const char *fname, const verdict *v, const char *feat)
{
	char path[512];
	snprintf(path, sizeof path, "%s/INDEX.md", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	flock(fd, LOCK_EX);
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size == 0)
		dprintf(fd, "# Differential fuzzer findings (tests/fuzz/difffuzz, docs/FUZZ.md)\n\n"
			    "| file | class | engine | message | features |\n|---|---|---|---|---|\n");
	const char *m = v->msg, *log = strstr(m, "build log:"), *cl = log ? strstr(log, ".cl:") : NULL;
	char first[300];
	if (cl) {
		snprintf(first, sizeof first, "OpenCL build: %s", cl + 4);
		char *cut = strstr(first, " error:");
		if (cut)
			*cut = 0;
		m = first;
	}
	dprintf(fd, "| %s | %s | %s | %.200s | %s |\n", fname, cls_name[v->cls], v->engine, m, feat);
	flock(fd, LOCK_UN);
	close(fd);
}

/* The dedupe key of a finding: class, engine, blanked message; for wrong results and oob also the
 * features that change what the plan pass builds (not layouts, orders or the kernel). */
static void sig_of(int cls, const char *engine, const char *msg, const char *feat, char *sig, size_t cap)
{
	char norm[600], cf[256] = "";
	normalize(msg, norm, sizeof norm);
	if (cls == C_WRONG || cls == C_OOB) {
		static const char *const core[] = {"hierarchy", "trigger", "double_buffer", "max_elements",
						   "runtime", "local", "private", "parallelize", "spmd",
						   "balanced", "nontemporal", "unroll", "vectorize", "cache", "split",
						   "strided", "reorder"};
		for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
			size_t n = strlen(core[i]);
			for (const char *f = strstr(feat, core[i]); f; f = strstr(f + 1, core[i]))
				if ((f[n] == ' ' || f[n] == 0) && (f == feat || f[-1] == ' ')) {
					snprintf(cf + strlen(cf), sizeof cf - strlen(cf), "%s ", core[i]);
					break;
				}
		}
	}
	snprintf(sig, cap, "%s|%s|%s|%s", cls_name[cls], engine, norm, cf);
}

/* Rebuild dir/INDEX.md and dir/.sigs from the findings' headers, moving duplicates (by sig_of)
 * to dir/dups/. */
static int reindex(const char *dir)
{
	char cmd[1200], path[1024];
	snprintf(cmd, sizeof cmd, "ls '%s' | grep '\\.cachet$' | sort -t- -k2 -n", dir);
	FILE *ls = popen(cmd, "r");
	if (!ls)
		return 2;
	snprintf(path, sizeof path, "%s/.sigs", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/INDEX.md", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/dups", dir);
	mkdir(path, 0755);
	char name[256];
	int kept = 0, moved = 0;
	while (fgets(name, sizeof name, ls)) {
		name[strcspn(name, "\n")] = 0;
		snprintf(path, sizeof path, "%s/%s", dir, name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		char line[2048], clsn[64] = "", eng[16] = "", feat[256] = "";
		verdict v;
		memset(&v, 0, sizeof v);
		unsigned long long seed = 0;
		while (fgets(line, sizeof line, f) && line[0] == '#') {
			line[strcspn(line, "\n")] = 0;
			sscanf(line, "# fuzz finding (tests/fuzz/difffuzz): seed %llu, class %63[^,], engine %15s", &seed, clsn, eng);
			if (strncmp(line, "# message: ", 11) == 0)
				snprintf(v.msg, sizeof v.msg, "%.590s", line + 11);
			if (strncmp(line, "# features: ", 12) == 0)
				snprintf(feat, sizeof feat, "%.250s", line + 12);
		}
		fclose(f);
		for (int c = 0; c < C_NCLS; c++)
			if (strcmp(clsn, cls_name[c]) == 0)
				v.cls = c;
		snprintf(v.engine, sizeof v.engine, "%s", eng);
		char sig[1024];
		sig_of(v.cls, v.engine, v.msg, feat, sig, sizeof sig);
		if (seen_before(dir, sig, name)) {
			char to[1024];
			snprintf(to, sizeof to, "%s/dups/%s", dir, name);
			rename(path, to);
			moved++;
			continue;
		}
		kept++;
		append_index(dir, name, &v, feat);
	}
	pclose(ls);
	printf("%d findings kept, %d duplicates moved to %s/dups\n", kept, moved, dir);
	return 0;
}

/* Whether this worker has already minimized cfg.minimize_max failures that looked like v on a
 * kernel like k before minimization (class, engine, blanked message, template and plan features):
 * a campaign that hits one known class thousands of times then spends its time on new kernels. */
static int minimized_enough(const pg_kernel *k, const verdict *v)
{
	static char seen[512][400];
	static int count[512], nseen;
	char feat[256], sig[1024], key[400];
	features(k, feat, sizeof feat);
	sig_of(v->cls, v->engine, v->msg, feat, sig, sizeof sig);
	snprintf(key, sizeof key, "%.300s|%s", sig, pg_kind_name(k->kind));
	for (int i = 0; i < nseen; i++)
		if (strcmp(seen[i], key) == 0)
			return ++count[i] > cfg.minimize_max;
	if (nseen < 512) {
		snprintf(seen[nseen], sizeof seen[nseen], "%s", key);
		count[nseen++] = 1;
	}
	return 0;
}

/* A failure: minimize it, dedupe it, write it. Returns 1 when it is new. */
static int report_failure(pg_kernel *k, int native, verdict *v)
{
	if (cfg.minimize && !minimized_enough(k, v))
		minimize(k, native, v);
	static char text[65536];
	pg_print(k, text, sizeof text);
	char feat[256], sig[1024];
	features(k, feat, sizeof feat);
	sig_of(v->cls, v->engine, v->msg, feat, sig, sizeof sig);
	char fname[128];
	snprintf(fname, sizeof fname, "%s-%llu.cachet", cls_name[v->cls], (unsigned long long)k->seed);
	int fresh = 1;
	if (cfg.out) {
		fresh = !seen_before(cfg.out, sig, fname);
		if (fresh)
			write_finding(cfg.out, fname, text, k, v, feat, 1);
	}
	if (cfg.findings && !seen_before(cfg.findings, sig, fname))
		write_finding(cfg.findings, fname, text, k, v, feat, 1);
	if (!cfg.quiet)
		printf("FAIL seed %llu: %s (%s): %s%s\n", (unsigned long long)k->seed, cls_name[v->cls], v->engine,
		       v->msg, fresh ? "" : " [seen]");
	return fresh;
}

/* ------------------------------------------------------------------ the campaign */

typedef struct tally {
	long tried, rejected, accepted, limit, failed, newfail;
	long verified[E_NENG];
	long bycls[C_NCLS];
	long compiles;          /* compiler runs measured */
	double compile_s, compile_max;
	uint64_t compile_max_seed;
	long slow10;            /* compiles over 10 s */
	long cuda_refused;      /* plan(target=cuda) kernels the CUDA generator refused with a message */
	long cuda_batches;      /* nvcc runs on batches */
	long dist_refused;      /* mpi: refused by ct_kernel_run_ranks with a located distribute: message */
	long dist_drawn;        /* mpi: drawn to be refused, yet ran and verified */
	long dist_kinds[8];     /* mpi: verified per shape of the distributed family (pg_dshape) */
	long vreduce;           /* accepted kernels whose host C sums a reduction in a vector loop */
	long vjam;              /* accepted kernels whose host C runs unrolled copies in a vector loop */
	long early_read;        /* accepted kernels with a line buffer */
	long preduce;           /* accepted kernels whose host C sums a reduction on threads */
	long auto_fused;        /* auto's files that fuse sweeps along their rows */
	long auto_blocked;      /* and block their time loop */
	long auto_passes;       /* auto's files that fuse passes along a matrix's rows */
	long auto_wave;         /* auto's files that run rows as a wavefront */
	long auto_jam;          /* auto's files that jam blocks of fused passes' rows */
	long auto_dist;         /* auto's files that distribute a nest */
	long auto_rl;           /* auto's files that interchange loops right-looking */
	long auto_tri;          /* auto's files that cut a triangle in blocks */
	long auto_split;        /* auto's files that split a sum of products */
	long auto_expand;       /* auto's files that expand a temp along a loop */
} tally;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void summary(const tally *t, double secs)
{
	printf("kernels: %ld tried, %ld rejected by check, %ld accepted, %ld hit a run-time limit, %.1f s (%.1f kernels/s)\n",
	       t->tried, t->rejected, t->accepted, t->limit, secs, secs > 0 ? (double)t->tried / secs : 0);
	printf("verified: interp %ld, native %ld, native-2t %ld, opencl %ld, selector %ld, callable %ld, package %ld, python %ld, auto %ld, cuda %ld, cudacompile %ld, mpi %ld\n",
	       t->verified[E_INTERP], t->verified[E_NATIVE1], t->verified[E_NATIVE2], t->verified[E_OPENCL],
	       t->verified[E_SELECTOR], t->verified[E_CALLABLE], t->verified[E_PACKAGE], t->verified[E_PYTHON],
	       t->verified[E_AUTO], t->verified[E_CUDA], t->verified[E_CUDACC], t->verified[E_MPI]);
	if (cfg.mpi) {
		static const char *const shapes[] = {"stencil1d", "stencil2d", "stencil3d", "jacobi", "gemm",
						     "rowsum", "dot", "transpose"};
		printf("mpi: %ld refused by distribute (located messages), %ld drawn to be refused yet verified; verified by shape:",
		       t->dist_refused, t->dist_drawn);
		for (int i = 0; i < 8; i++)
			printf(" %s %ld", shapes[i], t->dist_kinds[i]);
		printf("\n");
	}
	printf("vector reductions: %ld accepted kernels sum a reduction in a vector loop (vectorize of a reduction loop)\n",
	       t->vreduce);
	printf("unroll and jam: %ld accepted kernels run the copies of unrolled loops inside a vector loop\n", t->vjam);
	printf("line buffers: %ld accepted kernels read a temp row before the statement that writes it "
	       "(in the row before: the output rule's exact form)\n",
	       t->early_read);
	printf("parallel reductions: %ld accepted kernels sum into per-thread copies (parallelize of a loop that carries "
	       "only sums)\n",
	       t->preduce);
	if (t->verified[E_AUTO])
		printf("auto: %ld files fuse sweeps along their rows (%ld of them block the time loop), %ld fuse passes along a "
		       "matrix's rows (%ld of them jam blocks of rows into the vector loops), %ld run rows as a wavefront, %ld "
		       "distribute a nest, %ld interchange loops right-looking, %ld cut a triangle in blocks, %ld split a sum of "
		       "products, %ld expand a temp (half the seeds "
		       "plan for the caches %s, half for vectors of 16 bytes)\n",
		       t->auto_fused, t->auto_blocked, t->auto_passes, t->auto_jam, t->auto_wave, t->auto_dist, t->auto_rl,
		       t->auto_tri, t->auto_split, t->auto_expand, AUTO_TINY_CACHES);
	if (cfg.cuda || cfg.cudacompile)
		printf("cuda: %ld kernels refused by the CUDA generator with a message (not findings); %ld nvcc batches\n",
		       t->cuda_refused, t->cuda_batches);
	if (t->compiles)
		printf("compiles: %ld, mean %.2f s, max %.2f s (seed %llu), %ld over 10 s\n", t->compiles,
		       t->compile_s / (double)t->compiles, t->compile_max, (unsigned long long)t->compile_max_seed,
		       t->slow10);
	printf("failures:");
	int any = 0;
	for (int c = C_REJECT_NOLOC; c < C_NCLS; c++)
		if (t->bycls[c])
			printf(" %s %ld", cls_name[c], t->bycls[c]), any = 1;
	printf("%s\n", any ? "" : " none");
}

/* The seeds whose CUDA sources wait in g_cuda_dir. */
static uint64_t g_pend[512];
static int g_npend;

/* Append to f the #include lines of file path (each once: they are hoisted out of the
 * namespaces). */
static void hoist_includes(FILE *out, const char *path, char *seen, size_t cap)
{
	FILE *f = fopen(path, "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "#include", 8) != 0 || strstr(seen, line))
			continue;
		fputs(line, out);
		if (strlen(seen) + strlen(line) + 1 < cap)
			strcat(seen, line);
	}
	if (f)
		fclose(f);
}

/* Compile the batch of waiting CUDA sources as one translation unit; when it fails, each alone;
 * the ones that fail alone are findings (reported and minimized here). */
static void cuda_flush(tally *t)
{
	if (g_npend == 0)
		return;
	char batch[600], cubin[600], log[600], path[700], cmd[1400];
	snprintf(batch, sizeof batch, "%s/batch.cu", g_cuda_dir);
	snprintf(cubin, sizeof cubin, "%s/batch.cubin", g_cuda_dir);
	snprintf(log, sizeof log, "%s/batch.log", g_cuda_dir);
	FILE *f = fopen(batch, "w");
	static char seen[16384];
	seen[0] = 0;
	for (int i = 0; f && i < g_npend; i++) {
		snprintf(path, sizeof path, "%s/fz%llu.cu", g_cuda_dir, (unsigned long long)g_pend[i]);
		hoist_includes(f, path, seen, sizeof seen);
	}
	for (int i = 0; f && i < g_npend; i++)
		fprintf(f, "namespace ct_fz%llu {\n#include \"fz%llu.cu\"\n}\n", (unsigned long long)g_pend[i],
			(unsigned long long)g_pend[i]);
	int ok = f && fclose(f) == 0 && nvcc_cubin(batch, cubin, log) == 0;
	t->cuda_batches++;
	if (ok) {
		t->verified[E_CUDACC] += g_npend;
	} else {
		char dir[400];
		snprintf(dir, sizeof dir, "%s", g_cuda_dir);
		for (int i = 0; i < g_npend; i++) {
			verdict v;
			memset(&v, 0, sizeof v);
			char name[64];
			snprintf(name, sizeof name, "fz%llu", (unsigned long long)g_pend[i]);
			if (cuda_compile_one(dir, name, &v) == 0) {
				t->verified[E_CUDACC]++;
				continue;
			}
			pg_kernel k;
			pg_generate(&k, g_pend[i], &cfg.gen);
			t->failed++;
			t->bycls[v.cls]++;
			g_cuda_dir[0] = 0; /* the minimizer's children compile at once */
			t->newfail += report_failure(&k, M_RUN, &v);
			snprintf(g_cuda_dir, sizeof g_cuda_dir, "%s", dir);
		}
	}
	snprintf(cmd, sizeof cmd, "rm -f '%s'/*.cu '%s'/*.cubin '%s'/*.log", g_cuda_dir, g_cuda_dir, g_cuda_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "difffuzz: cannot clean %s\n", g_cuda_dir);
	g_npend = 0;
}

/* Worker w of jobs: kernels seed + w, seed + w + jobs, ... into t. */
static void run_share(int w, int jobs, tally *t)
{
	memset(t, 0, sizeof *t);
	if (g_phase_base)
		g_phase = g_phase_base + (w % 64) * 128;
	if (cfg.entry_every[N_SELECTOR] > 0 && cfg.share_probe) {
		ct_probe_info pi;
		g_probed_ctx = ct_ctx_new();
		if (g_probed_ctx) {
			ct_cache_set_warning_handler(g_probed_ctx, quiet_warning, NULL);
			ct_probe_run(g_probed_ctx, CT_PROBE_MEASURE_LATENCY | CT_PROBE_MEASURE_BANDWIDTH, &pi);
			ct_probe_run(g_probed_ctx, CT_PROBE_MEASURE_FLOPS, &pi);
		}
	}
	if (cfg.cudacompile && cfg.cachedir[0]) {
		snprintf(g_cuda_dir, sizeof g_cuda_dir, "%s/cuda-w%d", cfg.cachedir, w);
		if (mkdir(g_cuda_dir, 0700) != 0 && errno != EEXIST)
			g_cuda_dir[0] = 0; /* compiled one by one then */
	}
	g_npend = 0;
	double t0 = now(), last = t0;
	long accepted_seen = 0;
	for (long i = w; cfg.count <= 0 || i < cfg.count; i += jobs) {
		if (cfg.seconds > 0 && now() - t0 >= cfg.seconds)
			break;
		pg_kernel k;
		pg_generate(&k, cfg.seed + (uint64_t)i, &cfg.gen);
		int native = 0;
		if ((cfg.native || cfg.opencl || cfg.cuda || cfg.mpi) && cfg.native_every > 0 && (accepted_seen % cfg.native_every) == 0)
			native |= M_RUN;
		for (int e = N_SELECTOR; e < N_NENTRY; e++)
			if (cfg.entry_every[e] > 0 && (accepted_seen % cfg.entry_every[e]) == 0)
				native |= 1 << e;
		verdict v;
		test_kernel(&k, native, &v);
		t->compiles += v.compiles;
		t->compile_s += v.compile_s;
		if (v.compile_max > 10)
			t->slow10++;
		if (v.compile_max > t->compile_max)
			t->compile_max = v.compile_max, t->compile_max_seed = k.seed;
		t->tried++;
		if (v.accepted)
			accepted_seen++;
		for (int e = 0; e < E_NENG; e++)
			t->verified[e] += v.verified[e];
		if (cfg.verbose)
			printf("seed %llu: %s (%s) %s [%s, mask %d, %d compiles, %.2f s]%s%s%s\n", (unsigned long long)k.seed,
			       cls_name[v.cls], v.engine, v.msg, pg_kind_name(k.kind), native, v.compiles, v.compile_s,
			       v.verified[E_MPI] ? " mpi verified" : "", v.dist_refused ? " mpi refused" : "",
			       v.dist_drawn ? " (drawn to be refused)" : "");
		t->cuda_refused += v.cuda_refused;
		t->dist_refused += v.dist_refused;
		t->dist_drawn += v.dist_drawn;
		t->vreduce += v.accepted && v.vreduce;
		t->vjam += v.accepted && v.vjam;
		t->early_read += v.accepted && v.early_read;
		t->preduce += v.accepted && v.preduce;
		t->auto_fused += v.auto_fused;
		t->auto_blocked += v.auto_blocked;
		t->auto_passes += v.auto_passes;
		t->auto_wave += v.auto_wave;
		t->auto_jam += v.auto_jam;
		t->auto_dist += v.auto_dist;
		t->auto_rl += v.auto_rl;
		t->auto_tri += v.auto_tri;
		t->auto_split += v.auto_split;
		t->auto_expand += v.auto_expand;
		if (v.verified[E_MPI] && k.kind == PG_DIST && k.d.shape < 8)
			t->dist_kinds[k.d.shape]++;
		if (v.cuda_pending && g_npend < (int)(sizeof g_pend / sizeof *g_pend))
			g_pend[g_npend++] = k.seed;
		if (g_npend >= cfg.cuda_batch)
			cuda_flush(t);
		if (v.cls == C_REJECT)
			t->rejected++;
		else if (v.accepted)
			t->accepted++;
		if (v.cls == C_LIMIT)
			t->limit++;
		if (is_failure(v.cls)) {
			t->failed++;
			t->bycls[v.cls]++;
			t->newfail += report_failure(&k, native, &v);
		}
		if (!cfg.quiet && now() - last >= 10) {
			last = now();
			char who[32] = "";
			if (jobs > 1)
				snprintf(who, sizeof who, ", worker %d", w);
			printf("[%.0f s%s] %ld kernels, %ld accepted, %ld failed (%ld new)\n", last - t0, who, t->tried,
			       t->accepted, t->failed, t->newfail);
			fflush(stdout);
		}
	}
	cuda_flush(t);
}

/* The campaign, on cfg.jobs worker processes; one summary. */
static int campaign(void)
{
	tally t, part;
	double t0 = now();
	if (cfg.jobs <= 1) {
		run_share(0, 1, &t);
	} else {
		memset(&t, 0, sizeof t);
		int fds[64];
		pid_t pids[64];
		for (int w = 0; w < cfg.jobs; w++) {
			int fd[2];
			if (pipe(fd) != 0)
				return 2;
			fflush(stdout);
			pids[w] = fork();
			if (pids[w] == 0) {
				close(fd[0]);
				run_share(w, cfg.jobs, &part);
				ssize_t wr = write(fd[1], &part, sizeof part);
				_exit(wr == (ssize_t)sizeof part ? 0 : 1);
			}
			close(fd[1]);
			fds[w] = fd[0];
		}
		for (int w = 0; w < cfg.jobs; w++) {
			memset(&part, 0, sizeof part);
			if (read(fds[w], &part, sizeof part) != (ssize_t)sizeof part)
				part.failed++, part.bycls[C_CRASH]++; /* a worker lost: count it */
			close(fds[w]);
			if (pids[w] > 0)
				waitpid(pids[w], NULL, 0);
			t.tried += part.tried, t.rejected += part.rejected, t.accepted += part.accepted;
			t.limit += part.limit, t.failed += part.failed, t.newfail += part.newfail;
			for (int e = 0; e < E_NENG; e++)
				t.verified[e] += part.verified[e];
			for (int c = 0; c < C_NCLS; c++)
				t.bycls[c] += part.bycls[c];
			t.compiles += part.compiles, t.compile_s += part.compile_s, t.slow10 += part.slow10;
			t.cuda_refused += part.cuda_refused, t.cuda_batches += part.cuda_batches;
			t.dist_refused += part.dist_refused, t.dist_drawn += part.dist_drawn;
			t.vreduce += part.vreduce;
			t.vjam += part.vjam;
			t.early_read += part.early_read;
			t.preduce += part.preduce;
			t.auto_fused += part.auto_fused, t.auto_dist += part.auto_dist, t.auto_rl += part.auto_rl;
			t.auto_tri += part.auto_tri;
			t.auto_split += part.auto_split;
			t.auto_expand += part.auto_expand;
			t.auto_blocked += part.auto_blocked;
			t.auto_passes += part.auto_passes, t.auto_wave += part.auto_wave, t.auto_jam += part.auto_jam;
			for (int s = 0; s < 8; s++)
				t.dist_kinds[s] += part.dist_kinds[s];
			if (part.compile_max > t.compile_max)
				t.compile_max = part.compile_max, t.compile_max_seed = part.compile_max_seed;
		}
	}
	summary(&t, now() - t0);
	printf("%ld passed, %ld failed\n", t.tried - t.failed, t.failed);
	return t.failed ? 1 : 0;
}

/* Test one .cachet file (a finding or a regression) the same way. */
static int test_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "difffuzz: cannot read %s\n", path);
		return 2;
	}
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	verdict v;
	int mask = M_RUN;
	for (int e = N_SELECTOR; e < N_NENTRY; e++)
		if (cfg.entry_every[e] > 0)
			mask |= 1 << e;
	test_in_child(text, n, NULL, mask, &v);
	printf("%s: %s (%s) %s\n", path, cls_name[v.cls], v.engine, v.msg);
	return is_failure(v.cls) ? 1 : 0;
}

static void rm_tree(const char *dir)
{
	if (!dir[0])
		return;
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* --entries run[:N],selector[:N],...: each entry on every Nth accepted kernel (N defaults to
 * --native-every; run is the native engine, as --engines native). */
static int parse_entries(const char *list)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", list);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		char *colon = strchr(tok, ':');
		int every = colon ? atoi(colon + 1) : cfg.native_every;
		if (colon)
			*colon = 0;
		int e = -1;
		for (int i = 0; i < N_NENTRY; i++)
			if (strcmp(tok, entry_name[i]) == 0)
				e = i;
		if (e < 0 || every < 1) {
			fprintf(stderr, "difffuzz: --entries: unknown entry or rate '%s'\n", tok);
			return 1;
		}
		if (e == N_RUN)
			cfg.native = 1, cfg.native_every = every;
		else
			cfg.entry_every[e] = every;
	}
	return 0;
}

/* tests/fuzz/pyentry.py (from the working folder, else next to the source tree of the driver) and
 * build/python (next to the driver: BUILD/fuzz/difffuzz), absolute. */
static void find_python_paths(const char *argv0)
{
	char *abs = realpath("tests/fuzz/pyentry.py", NULL);
	snprintf(cfg.pyscript, sizeof cfg.pyscript, "%s", abs ? abs : "tests/fuzz/pyentry.py");
	free(abs);
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		snprintf(exe, sizeof exe, "%s", argv0);
		n = (ssize_t)strlen(exe);
	}
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0; /* BUILD/fuzz */
	snprintf(cfg.pypath, sizeof cfg.pypath, "%s/../python", exe);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: difffuzz [--seed S] [--count N] [--seconds T] [--engines interp,native,opencl,cuda,cudacompile,mpi]\n"
		"                [--native-every N] [--opencl-share P] [--cuda-share P] [--cuda-batch N] [--nvcc CMD]\n"
		"                [--cuda-arch sm_90a] [--out DIR] [--findings DIR]\n"
		"                [--no-minimize] [--timeout S] [--cc CMD] [--checked 0|1] [--jobs J] [--verbose] [--quiet]\n"
		"                [--families classic|legal|all|affine|dist] [--entries run[:N],selector[:N],callable[:N],package[:N],python[:N],auto[:N]]\n"
		"                [--tune-share P] [--edges 0|1] [--minimize-max N] [--share-probe 0|1] [--slow-compile S] [--python CMD]\n"
		"       difffuzz --print SEED [--families F] [--opencl-share P]  print the kernel of one seed (and its # ranks:)\n"
		"       difffuzz --file F.cachet [--engines ...]     check one file (mpi: on the ranks of its # ranks: line)\n"
		"       difffuzz --reindex DIR                       rebuild DIR/INDEX.md, duplicates to DIR/dups\n");
}

int main(int argc, char **argv)
{
	cfg.seed = 1;
	cfg.count = 1000;
	cfg.interp = 1;
	cfg.native_every = 1;
	cfg.opencl_share = -1;
	cfg.cuda_share = -1;
	cfg.cuda_batch = 32;
	cfg.cuda_arch = "sm_90a";
	cfg.minimize = 1;
	cfg.timeout = 60;
	cfg.checked = 1;
	cfg.gen.families = PG_FAM_ALL;
	cfg.gen.tune_share = 30;
	cfg.gen.edges = 1;
	cfg.minimize_max = 3;
	cfg.share_probe = 1;
	cfg.slow_compile = 60;
	cfg.python = "/usr/bin/python3";
	const char *file = NULL, *entries = NULL;
	long print_seed = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && val && ++i)
		if (ARG("--seed"))
			cfg.seed = strtoull(val, NULL, 10);
		else if (ARG("--count"))
			cfg.count = atol(val);
		else if (ARG("--seconds"))
			cfg.seconds = atof(val), cfg.count = cfg.count == 1000 ? 0 : cfg.count;
		else if (ARG("--engines")) {
			cfg.interp = strstr(val, "interp") != NULL;
			cfg.native = strstr(val, "native") != NULL;
			cfg.opencl = strstr(val, "opencl") != NULL;
			cfg.mpi = strstr(val, "mpi") != NULL;
			cfg.cuda = cfg.cudacompile = 0;
			char eb[256];
			snprintf(eb, sizeof eb, "%s", val);
			for (char *tok = strtok(eb, ","); tok; tok = strtok(NULL, ","))
				if (strcmp(tok, "cuda") == 0)
					cfg.cuda = 1;
				else if (strcmp(tok, "cudacompile") == 0)
					cfg.cudacompile = 1;
		} else if (ARG("--native-every"))
			cfg.native_every = atoi(val);
		else if (ARG("--opencl-share"))
			cfg.opencl_share = atoi(val);
		else if (ARG("--cuda-share"))
			cfg.cuda_share = atoi(val);
		else if (ARG("--cuda-batch"))
			cfg.cuda_batch = atoi(val) < 1 ? 1 : atoi(val) > 512 ? 512 : atoi(val);
		else if (ARG("--nvcc"))
			cfg.nvcc = val;
		else if (ARG("--cuda-arch"))
			cfg.cuda_arch = val;
		else if (ARG("--out"))
			cfg.out = val;
		else if (ARG("--findings"))
			cfg.findings = val;
		else if (ARG("--jobs"))
			cfg.jobs = atoi(val) < 1 ? 1 : atoi(val) > 64 ? 64 : atoi(val);
		else if (ARG("--timeout"))
			cfg.timeout = atoi(val);
		else if (ARG("--cc"))
			cfg.ccwrap = val;
		else if (ARG("--checked"))
			cfg.checked = atoi(val);
		else if (ARG("--families")) {
			cfg.gen.families = strcmp(val, "classic") == 0 ? PG_FAM_CLASSIC
				       : strcmp(val, "legal") == 0 ? PG_FAM_LEGAL
				       : strcmp(val, "all") == 0   ? PG_FAM_ALL
				       : strcmp(val, "affine") == 0 ? PG_FAM_AFFINE
				       : strcmp(val, "dist") == 0   ? PG_FAM_DIST
								   : -1;
			if (cfg.gen.families < 0) {
				usage();
				return 2;
			}
		} else if (ARG("--entries"))
			entries = val;
		else if (ARG("--share-probe"))
			cfg.share_probe = atoi(val);
		else if (ARG("--minimize-max"))
			cfg.minimize_max = atoi(val);
		else if (ARG("--tune-share"))
			cfg.gen.tune_share = atoi(val);
		else if (ARG("--edges"))
			cfg.gen.edges = atoi(val);
		else if (ARG("--slow-compile"))
			cfg.slow_compile = atof(val);
		else if (ARG("--python"))
			cfg.python = val;
		else if (ARG("--print"))
			print_seed = atol(val);
		else if (ARG("--file"))
			file = val;
		else if (ARG("--reindex"))
			return reindex(val);
		else if (strcmp(a, "--no-minimize") == 0)
			cfg.minimize = 0;
		else if (strcmp(a, "--verbose") == 0)
			cfg.verbose = 1;
		else if (strcmp(a, "--quiet") == 0)
			cfg.quiet = 1;
		else {
			usage();
			return 2;
		}
#undef ARG
	}
	if (entries && parse_entries(entries) != 0) {
		usage();
		return 2;
	}
	if (cfg.opencl_share < 0)
		cfg.opencl_share = cfg.opencl ? 15 : 0;
	cfg.gen.opencl_share = cfg.opencl_share;
	if (cfg.cuda_share < 0)
		cfg.cuda_share = cfg.cuda || cfg.cudacompile ? 15 : 0;
	cfg.gen.cuda_share = cfg.cuda_share;
	static char nvcc_path[600];
	if (!cfg.nvcc) {
		const char *home = getenv("CUDA_HOME");
		snprintf(nvcc_path, sizeof nvcc_path, "%s/bin/nvcc", home ? home : "/usr/local/cuda");
		cfg.nvcc = access(nvcc_path, X_OK) == 0 ? nvcc_path : "nvcc";
	}
	find_python_paths(argv[0]);
	if (print_seed >= 0) {
		pg_kernel k;
		static char text[65536];
		pg_generate(&k, (uint64_t)print_seed, &cfg.gen);
		pg_print(&k, text, sizeof text);
		char rw[256];
		pg_run_with(&k, rw, sizeof rw);
		if (rw[0])
			printf("# run-with: %s\n", rw);
		pg_ranks_of(&k, rw, sizeof rw);
		if (rw[0])
			printf("# ranks: %s\n", rw);
		fputs(text, stdout);
		return 0;
	}
	g_phase_base = mmap(NULL, 64 * 128, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	g_phase = g_phase_base = g_phase_base == MAP_FAILED ? NULL : g_phase_base;
	/* a private code cache for this run (removed at the end), PoCL without optimization */
	char tmpl[] = "/tmp/difffuzz-cache-XXXXXX";
	if (mkdtemp(tmpl))
		snprintf(cfg.cachedir, sizeof cfg.cachedir, "%s", tmpl);
	char pocl[300];
	snprintf(pocl, sizeof pocl, "%s/pocl", cfg.cachedir);
	if (cfg.cachedir[0] && !getenv("POCL_CACHE_DIR"))
		setenv("POCL_CACHE_DIR", pocl, 1);
	/* OpenCL programs build with the engine's own options (ocl_build_options),
	 * as a user's do, unless CACHET_OPENCL_OPTIONS says otherwise */
	static char wrap[600];
	char *abs = realpath("tests/fuzz/cc-fast.sh", NULL);
	if (!cfg.ccwrap && getenv("FUZZ_CC_WRAP"))
		cfg.ccwrap = getenv("FUZZ_CC_WRAP");
	else if (!cfg.ccwrap && abs && getenv("FUZZ_OPT")) {
		/* FUZZ_OPT's flags after cachet's -O3 (see cc-fast.sh) */
		snprintf(wrap, sizeof wrap, "sh %s", abs);
		cfg.ccwrap = wrap;
	}
	free(abs);
	/* a distributed run that hangs is killed by cachet (a run-error with its message) before the
	 * fuzzer's own --timeout makes it a hang */
	char mpit[32];
	snprintf(mpit, sizeof mpit, "%d", cfg.timeout > 6 ? cfg.timeout * 2 / 3 : 4);
	if (!getenv("CACHET_MPI_TIMEOUT"))
		setenv("CACHET_MPI_TIMEOUT", mpit, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int rc = file ? test_file(file) : campaign();
	rm_tree(cfg.cachedir);
	return rc;
}
