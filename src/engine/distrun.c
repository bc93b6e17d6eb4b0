/* distrun.c: `cachet run --ranks N`: build a distributed kernel's MPI program with mpicc, launch it with mpirun on the deterministic inputs, and verify what it gathers against the interpreter. */
#include "engine/engine.h"

#include "gen/gen.h"
#include "jit/jit.h"
#include "plan/dist.h"

#include <cachet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool dist_find_tool(ct_ctx *ctx, const char *env, const char *name, char *out, size_t cap)
{
	const char *v = getenv(env);
	if (v && *v) {
		snprintf(out, cap, "%s", v);
		return access(out, X_OK) == 0;
	}
	bool found = aot_find_on_path(ctx, name, out, cap) == CT_OK;
	ct_ctx_clear_error(ctx);
	return found;
}

/* A fresh private folder for the program and its data. */
static ct_status work_dir(ct_ctx *ctx, char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, cap, "%s/cachet-mpi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return ct_error(ctx, CT_ERR_IO, "cannot make a folder for the MPI program: %s", strerror(errno));
	return CT_OK;
}

static void remove_dir(const char *dir)
{
	static const char *const files[] = {"prog.c", "prog", "in.bin", "out.bin"};
	char path[4200];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

static ct_status write_file(ct_ctx *ctx, const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return ct_error(ctx, CT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	bool ok = fwrite(data, 1, n, f) == n;
	if (fclose(f) != 0 || !ok)
		return ct_error(ctx, CT_ERR_IO, "cannot write %s", path);
	return CT_OK;
}

/* Every argument array of b, in declaration order, into path (write) or from it. */
static ct_status move_arrays(ct_kernel *k, run_buffers *b, const char *path, bool write)
{
	FILE *f = fopen(path, write ? "wb" : "rb");
	if (!f)
		return ct_error(k->ctx, CT_ERR_IO, "cannot %s %s: %s", write ? "write" : "read", path, strerror(errno));
	bool ok = true;
	for (int a = 0; a < k->narrays && ok; a++) {
		if (k->arrays[a].role == CT_TEMP)
			continue;
		size_t n = (size_t)b->bytes[a];
		ok = (write ? fwrite(b->data[a], 1, n, f) : fread(b->data[a], 1, n, f)) == n;
	}
	if (fclose(f) != 0)
		ok = false;
	return ok ? CT_OK : ct_error(k->ctx, CT_ERR_IO, "the MPI program's arrays in %s are incomplete", path);
}

/* An argv of at most 16 words, each copied into its own storage (jit_run takes char *const []). */
typedef struct argv_buf {
	char word[16][4200];
	char *v[17];
	int n;
} argv_buf;

static void arg_add(argv_buf *a, const char *w)
{
	if (a->n >= 16)
		return;
	snprintf(a->word[a->n], sizeof a->word[a->n], "%s", w);
	a->v[a->n] = a->word[a->n];
	a->v[++a->n] = NULL;
}

/* What the ranks said of a failure: their "rank R: ..." lines, which Open MPI's banners
 * would push out of a tail, into buf; else the last lines of the output. */
static const char *failure_text(const jit_proc *p, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (const char *l = p->out; l && *l && len + 1 < cap;) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) : strlen(l);
		if (n > 5 && strncmp(l, "rank ", 5) == 0 && memchr(l, ':', n))
			len += (size_t)snprintf(buf + len, cap - len, "%.*s\n", (int)n, l);
		l += n + (end ? 1 : 0);
	}
	return len > 0 ? buf : NULL;
}

/* The last lines of a program's output, for messages. */
static const char *tail_of(const jit_proc *p)
{
	if (!p->out)
		return "";
	size_t n = p->out_len, lines = 0;
	while (n > 0 && lines < 12)
		if (p->out[--n] == '\n')
			lines++;
	return p->out + (n > 0 ? n + 1 : 0);
}

int dist_policy_flags(ct_ctx *ctx, const char *mpicc, const char **out)
{
	jit_state *js = jit_state_get(ctx);
	jit_compiler *cc = js ? jit_compiler_get(js, mpicc) : NULL;
	int n = 0;
	if (cc) {
		n = jit_policy_flags(cc, out); /* the record stays with the ctx's jit state */
	} else {
		ct_ctx_clear_error(ctx);
		out[n++] = "-O3";
		out[n++] = "-march=native";
	}
	return n;
}

/* The whole key of an MPI program in the code cache's blob folder: the compiler's identity
 * (its file, version and what -march=native means), the command line, the source. A hit is a
 * byte-equal key; a program whose run fails verification is dropped (ct_kernel_run_ranks). */
static char *program_key(ct_ctx *ctx, const char *mpicc, argv_buf *a, const char *text, size_t len, size_t *klen)
{
	jit_state *js = jit_state_get(ctx);
	jit_compiler *cc = js ? jit_compiler_get(js, mpicc) : NULL;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b, "cachet-mpi-program-1\n%s\n%s\n%s\n", cc && cc->file ? cc->file : "?",
	              cc && cc->version ? cc->version : "?", cc && cc->march ? cc->march : "?");
	for (int i = 1; i < a->n; i++)
		ct_buf_printf(&b, "%s ", a->v[i]);
	ct_buf_putc(&b, '\n');
	if (b.failed) {
		ct_buf_free(&b);
		return NULL;
	}
	*klen = b.len + len;
	char *key = malloc(*klen + 1);
	if (key) {
		memcpy(key, b.s, b.len);
		memcpy(key + b.len, text, len);
		key[*klen] = 0;
	}
	ct_buf_free(&b);
	return key;
}

/* Write the cached program (data, n bytes) as the executable exe. */
static bool program_from_cache(ct_ctx *ctx, const char *exe, const void *data, size_t n)
{
	if (write_file(ctx, exe, data, n) != CT_OK) {
		ct_ctx_clear_error(ctx);
		return false;
	}
	return chmod(exe, 0700) == 0;
}

/* The MPI program of k as dir/prog: from the code cache's blobs when the same source was
 * built by the same compiler before (*cached), else built with mpicc and kept there. *key
 * (malloc'd, *klen bytes) names the entry, for a drop after a failed verification. */
static ct_status compile_program(ct_kernel *k, const char *mpicc, const char *dir, bool *cached, char **key,
                                 size_t *klen)
{
	char src[4200], exe[4200];
	snprintf(src, sizeof src, "%s/prog.c", dir);
	snprintf(exe, sizeof exe, "%s/prog", dir);
	*cached = false;
	*key = NULL;
	size_t len = 0;
	char *text = gen_dist_c(k, &len);
	if (!text)
		return ct_ctx_last_status(k->ctx);
	static const char *const words[] = {"-fopenmp", "-DCTD_MAIN", "-o"};
	argv_buf *a = ct_alloc(k->ctx, sizeof *a);
	if (!a) {
		free(text);
		return CT_ERR_NOMEM;
	}
	arg_add(a, mpicc);
	/* the native engine's compile policy (src/jit/compile.c): the same code, the same flags */
	const char *policy[JIT_POLICY_MAX];
	int np = dist_policy_flags(k->ctx, mpicc, policy);
	for (int i = 0; i < np; i++)
		arg_add(a, policy[i]);
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		arg_add(a, words[i]);
	arg_add(a, "prog");
	arg_add(a, "prog.c");
	arg_add(a, "-lm");
	*key = program_key(k->ctx, mpicc, a, text, len, klen);
	void *blob = NULL;
	size_t n = 0;
	if (*key && jit_blob_get(k->ctx, *key, *klen, &blob, &n) == CT_OK && blob &&
	    program_from_cache(k->ctx, exe, blob, n)) {
		*cached = true;
		free(blob);
		free(text);
		ct_free(k->ctx, a);
		return CT_OK;
	}
	free(blob);
	ct_status st = write_file(k->ctx, src, text, len);
	free(text);
	jit_proc p;
	if (!st)
		st = jit_run(k->ctx, mpicc, a->v, dir, 300, 16384, &p);
	ct_free(k->ctx, a);
	if (st)
		return st;
	if (p.exit_code != 0)
		st = ct_error(k->ctx, CT_ERR_COMPILE, "mpicc failed on the MPI program of '%s':\n%s", k->name, tail_of(&p));
	jit_proc_free(k->ctx, &p);
	unsigned char *bin = NULL;
	size_t blen = 0;
	if (!st && *key && jit_read_file(k->ctx, exe, (size_t)256 << 20, &bin, &blen) == CT_OK)
		jit_blob_put(k->ctx, *key, *klen, bin, blen);
	ct_ctx_clear_error(k->ctx);
	ct_free(k->ctx, bin);
	return st;
}

/* Seconds the ranks may take: CACHET_MPI_TIMEOUT, default 300. */
static double launch_timeout(void)
{
	const char *v = getenv("CACHET_MPI_TIMEOUT");
	double t = v && *v ? strtod(v, NULL) : 0;
	return t > 0 ? t : 300;
}

/* Threads per rank: --threads when given, else the processors shared out over the ranks. */
static int rank_threads(const ct_run_options *o, int ranks)
{
	if (o && o->threads > 0)
		return o->threads;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long t = cpus > 0 ? cpus / ranks : 1;
	return t < 1 ? 1 : (int)t;
}

static ct_status launch(ct_kernel *k, const char *mpirun, const char *dir, int ranks, int threads, const char *grid,
                        char **report)
{
	char np[32], exe[4200], in[4200], out[4200], omp[64];
	snprintf(np, sizeof np, "%d", ranks);
	snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%d", threads);
	snprintf(exe, sizeof exe, "%s/prog", dir);
	snprintf(in, sizeof in, "%s/in.bin", dir);
	snprintf(out, sizeof out, "%s/out.bin", dir);
	argv_buf *a = ct_alloc(k->ctx, sizeof *a);
	if (!a)
		return CT_ERR_NOMEM;
	arg_add(a, mpirun);
	if (geteuid() == 0)
		arg_add(a, "--allow-run-as-root");
	arg_add(a, "--oversubscribe"); /* more ranks than cores: a test, not a cluster */
	arg_add(a, "-np");
	arg_add(a, np);
	arg_add(a, "-x"); /* the parallel loops inside each rank */
	arg_add(a, omp);
	arg_add(a, exe);
	arg_add(a, in);
	arg_add(a, out);
	if (grid)
		arg_add(a, grid);
	jit_proc p;
	double timeout = launch_timeout();
	ct_status st = jit_run(k->ctx, mpirun, a->v, dir, timeout, 65536, &p);
	ct_free(k->ctx, a);
	if (st)
		return st;
	char said[2048];
	const char *why = p.timed_out || p.exit_code != 0 ? failure_text(&p, said, sizeof said) : NULL;
	if ((p.timed_out || p.exit_code != 0) && !why)
		why = tail_of(&p);
	/* a rank that failed may leave the others running (an abort that met a rank still
	 * starting, under load): what the ranks said goes with the timeout too */
	if (p.timed_out)
		st = ct_error(k->ctx, CT_ERR_RUNTIME,
		              "the %d ranks of '%s' did not finish within %.0f s (killed; CACHET_MPI_TIMEOUT)%s%s", ranks,
		              k->name, timeout, *why ? ":\n" : "", why);
	else if (p.exit_code != 0)
		st = ct_error(k->ctx, CT_ERR_RUNTIME, "the distributed run of '%s' on %d ranks failed (exit %d)%s%s", k->name,
		              ranks, p.exit_code, *why ? ":\n" : ", with no output", why);
	else if (report)
		*report = strdup(p.out ? p.out : ""); /* the caller free()s it (include/cachet.h) */
	jit_proc_free(k->ctx, &p);
	return st;
}

/* "PxQ" of grid into buf (NULL when grid is NULL). */
static const char *grid_text(const dist_plan *p, const int64_t *grid, char *buf, size_t cap)
{
	if (!grid)
		return NULL;
	size_t len = 0;
	buf[0] = '\0';
	for (int g = 0; g < p->naxes && len < cap; g++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld", g ? "x" : "", (long long)grid[g]);
	return buf;
}

ct_status ct_kernel_run_ranks(ct_kernel *k, const ct_run_options *o, int ranks, const int64_t *grid, int ngrid,
                              ct_run_result *r, char **report)
{
	if (report)
		*report = NULL;
	if (!k)
		return CT_ERR_USAGE;
	ct_ctx *ctx = k->ctx;
	if (r)
		memset(r, 0, sizeof *r);
	if (ranks < 1 || ranks > 4096)
		return ct_error(ctx, CT_ERR_USAGE, "--ranks takes 1 .. 4096 ranks, not %d", ranks);
	dist_plan *p = NULL;
	ct_status st = dist_analyse(k, &p);
	if (st)
		return st;
	if (!p)
		return ct_error(ctx, CT_ERR_USAGE, "--ranks needs a kernel whose plan has distribute(...)");
	if (grid && ngrid != p->naxes)
		st = ct_error(ctx, CT_ERR_USAGE, "--grid has %d dimensions; distribute() has %d", ngrid, p->naxes);
	if (!st)
		st = dist_set_grid(ctx, p, ranks, grid);
	char gbuf[80];
	const char *gtext = grid_text(p, grid, gbuf, sizeof gbuf);
	dist_plan_free(ctx, p);
	if (st)
		return st;
	char mpicc[4096], mpirun[4096];
	if (!dist_find_tool(ctx, "CACHET_MPICC", "mpicc", mpicc, sizeof mpicc) ||
	    !dist_find_tool(ctx, "CACHET_MPIRUN", "mpirun", mpirun, sizeof mpirun))
		return ct_error(ctx, CT_ERR_UNSUPPORTED,
		                "distributed runs need Open MPI's mpicc and mpirun (make deps installs openmpi-bin and libopenmpi-dev)");
	char dir[4096];
	if ((st = work_dir(ctx, dir, sizeof dir)) != CT_OK)
		return st;
	run_buffers init, got, want;
	memset(&init, 0, sizeof init);
	memset(&got, 0, sizeof got);
	memset(&want, 0, sizeof want);
	char in[4200], out[4200];
	snprintf(in, sizeof in, "%s/in.bin", dir);
	snprintf(out, sizeof out, "%s/out.bin", dir);
	double t0 = ct_now();
	bool cached = false;
	char *key = NULL;
	size_t klen = 0;
	st = compile_program(k, mpicc, dir, &cached, &key, &klen);
	double t1 = ct_now();
	if (!st)
		st = run_buffers_alloc(k, &init, true);
	if (!st)
		st = move_arrays(k, &init, in, true);
	if (!st)
		st = launch(k, mpirun, dir, ranks, rank_threads(o, ranks), gtext, report);
	double t2 = ct_now();
	if (!st)
		st = run_buffers_alloc(k, &got, false);
	if (!st)
		st = move_arrays(k, &got, out, false);
	if (r) {
		r->engine = "mpi";
		r->code_cache = cached ? "disk" : "compiled";
		r->compile_seconds = t1 - t0;
		r->seconds = t2 - t1;
		r->threads = rank_threads(o, ranks);
		r->verified = -1;
		r->mismatch_array = "";
	}
	if (!st && (!o || o->verify)) {
		st = run_buffers_alloc(k, &want, false);
		if (!st)
			st = run_reference(k, &init, &want);
		ct_run_result tmp;
		memset(&tmp, 0, sizeof tmp);
		if (!st)
			st = run_verify(k, &got, &want, r ? r : &tmp);
	}
	/* a program whose results are wrong is never taken from the cache again */
	if (st == CT_ERR_VERIFY && key)
		jit_blob_drop(ctx, key, klen, "its run failed verification");
	free(key);
	run_buffers_free(&init);
	run_buffers_free(&got);
	run_buffers_free(&want);
	remove_dir(dir);
	return st;
}
