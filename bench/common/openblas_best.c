/* openblas_best.c: finds the OpenBLAS kernel set that computes gemm correctly and fastest on this machine.
 *
 * A DYNAMIC_ARCH OpenBLAS picks its kernels from the CPU it recognises, and
 * 0.3.21 does not know every CPU it runs on (on Zen 5 it picks an AVX2 set);
 * OPENBLAS_CORETYPE overrides the pick, but only when the library loads, and
 * machines set it (with OPENBLAS_L2_SIZE) in their environment because some
 * builds misbehave on some CPUs. So each candidate runs in a child process of
 * its own (this program re-run with --one): the library's own pick with both
 * variables removed, each x86-64 kernel set worth trying, and the
 * environment's own values when it has any. A child first verifies gemm
 * (s/dgemm, plain and transposed A, odd and square shapes, 1 thread and all
 * threads, against a double-precision reference); a candidate that crashes,
 * computes a wrong result, or that the library does not know (it falls back
 * to another set) is excluded. The benches that compare with OpenBLAS run
 * this first (bench_util.h, bench_openblas_at_best; bench_python.py) and
 * re-execute with the winner's environment, so the peer runs at its best.
 *
 * Usage: openblas_best [--score ROUTINE] [--coretype NAME]
 *   --score ROUTINE: what the candidates are timed on: gemm (the default),
 *   or trmm, trsm, syrk (single precision: the triangular benches'
 *   routines). The kernel sets share a gemm but not these: on a Zen 4
 *   EPYC, SkylakeX's and Cooperlake's strsm ran 15-25% below Haswell's and
 *   Zen's while their gemm was within 1%, so a bench of one routine
 *   probes with that routine.
 *   --coretype NAME: only that candidate (a kernel set, "default": the
 *   library's own pick, "environment": the environment's values), still
 *   verified; exit 1 when it fails.
 * stdout, the lines that bench_util.h and bench_python.py read:
 *   label NAME           the chosen candidate
 *   coretype NAME|-      the OPENBLAS_CORETYPE to run with (-: unset)
 *   l2 VALUE|-           the OPENBLAS_L2_SIZE to run with (-: unset)
 *   note TEXT            the choice, each candidate's score, the environment's values
 * stderr: one line per candidate. Exit 1 when no candidate is correct.
 * Score: geometric mean GFLOP/s of s/dgemm at 256 and 1024 (of the routine
 * at 512 and 1024 under --score), 1 thread, best of 3 rounds of >= 0.1 s,
 * best of 2 passes over the candidates.
 *
 * Test hooks (tests/cli/openblas_probe.sh): CACHET_BENCH_OPENBLAS_QUICK=1
 * measures tiny sizes for a few ms (figures meaningless); CACHET_BENCH_OPENBLAS_INJECT
 * = "LABEL:wrong,LABEL:crash" makes the child of candidate LABEL corrupt one
 * element of its verified result, or die of SIGSEGV.
 *
 * openblas_best --one LABEL ROUTINE: the child; prints "SCORE CORENAME ok" or "0 CORENAME wrong ERR". */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

/* One candidate: its label, and the two variables' values for its child (NULL: unset). */
typedef struct candidate {
	const char *label;
	const char *coretype;
	const char *l2;
} candidate;

/* The kernel sets to try (a set the library does not know is excluded). */
static const char *const KERNEL_SETS[] = {BENCH_OPENBLAS_SETS};
enum { N_SETS = (int)(sizeof KERNEL_SETS / sizeof KERNEL_SETS[0]), MAX_CANDIDATES = N_SETS + 2 };

static int quick(void)
{
	const char *q = getenv("CACHET_BENCH_OPENBLAS_QUICK");
	return q && *q && strcmp(q, "0") != 0;
}

/* The test hook's action for label ("wrong", "crash"), or "" (CACHET_BENCH_OPENBLAS_INJECT). */
static const char *injected(const char *label, char *buf, size_t cap)
{
	const char *spec = getenv("CACHET_BENCH_OPENBLAS_INJECT");
	size_t n = strlen(label);
	buf[0] = 0;
	for (const char *p = spec; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > n && strncmp(p, label, n) == 0 && p[n] == ':') {
			snprintf(buf, cap, "%.*s", (int)(len - n - 1), p + n + 1);
			return buf;
		}
		p = end ? end + 1 : p + len;
	}
	return buf;
}

/* Best GFLOP/s over rounds of >= min_s of square row-major gemm of size n on 1 thread. */
static double gemm_gflops(int n, int f64, int rounds, double min_s)
{
	size_t count = (size_t)n * (size_t)n;
	size_t elem = f64 ? sizeof(double) : sizeof(float);
	char *a = calloc(count, elem), *b = calloc(count, elem), *c = calloc(count, elem);
	double best = 0;
	for (int round = 0; a && b && c && round < rounds; round++) {
		int reps = 0;
		double t0 = now(), t;
		do {
			if (f64)
				cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0,
				            (double *)a, n, (double *)b, n, 1.0, (double *)c, n);
			else
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
				            (float *)a, n, (float *)b, n, 1.0f, (float *)c, n);
			reps++;
			t = now() - t0;
		} while (t < min_s);
		double g = 2.0 * n * n * (double)n * reps / t * 1e-9;
		if (g > best)
			best = g;
	}
	free(a);
	free(b);
	free(c);
	return best;
}

/* The routines --score accepts besides gemm (single precision, row-major, square, lower). */
static const char *const ROUTINES[] = {"gemm", "trmm", "trsm", "syrk"};

/* One call of routine (trmm, trsm or syrk) of size n on a (the triangle, identity: the
 * values stay put over repeated calls) and b (overwritten: B = L B, L \ B; C += A^T A). */
static void routine_call(const char *routine, int n, const float *a, float *b)
{
	if (strcmp(routine, "trmm") == 0)
		cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0f, a, n, b, n);
	else if (strcmp(routine, "trsm") == 0)
		cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0f, a, n, b, n);
	else
		cblas_ssyrk(CblasRowMajor, CblasLower, CblasTrans, n, n, 1.0f, a, n, 1.0f, b, n);
}

/* Best GFLOP/s over rounds of >= min_s of routine (trmm, trsm, syrk) of size n on 1 thread
 * (flops: n^3 for each; the timing only ranks the candidates). */
static double routine_gflops(const char *routine, int n, int rounds, double min_s)
{
	size_t count = (size_t)n * (size_t)n;
	float *a = calloc(count, sizeof *a), *b = calloc(count, sizeof *b);
	double best = 0;
	for (int i = 0; a && i < n; i++)
		a[(size_t)i * n + i] = 1.0f;
	for (int round = 0; a && b && round < rounds; round++) {
		int reps = 0;
		double t0 = now(), t;
		do {
			routine_call(routine, n, a, b);
			reps++;
			t = now() - t0;
		} while (t < min_s);
		double g = (double)n * n * (double)n * reps / t * 1e-9;
		if (g > best)
			best = g;
	}
	free(a);
	free(b);
	return best;
}

/* A deterministic value in [-1, 1] for element i of operand seed. */
static double val(size_t i, int seed)
{
	unsigned x = (unsigned)(i * 2654435761u) ^ (unsigned)(seed * 40503 + 17);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (double)(x % 2001) / 1000.0 - 1.0;
}

/* Max over C of |C - ref| / (sum_k |a||b| + |c0|) after C = A' B + C0 (row-major, A' = A or
 * A^T) by OpenBLAS, of type f64 or f32; corrupts C first when wrong. */
static double gemm_error(int m, int n, int k, int f64, int trans_a, int wrong)
{
	size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
	double *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c);
	float *af = malloc(na * sizeof *af), *bf = malloc(nb * sizeof *bf), *cf = malloc(nc * sizeof *cf);
	double err = INFINITY;
	if (!a || !b || !c || !af || !bf || !cf)
		goto out;
	for (size_t i = 0; i < na; i++)
		af[i] = (float)(a[i] = (float)val(i, 1));
	for (size_t i = 0; i < nb; i++)
		bf[i] = (float)(b[i] = (float)val(i, 2));
	for (size_t i = 0; i < nc; i++)
		cf[i] = (float)(c[i] = (float)val(i, 3));
	int lda = trans_a ? m : k; /* A stored k x m when transposed */
	CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
	if (f64)
		cblas_dgemm(CblasRowMajor, ta, CblasNoTrans, m, n, k, 1.0, a, lda, b, n, 1.0, c, n);
	else
		cblas_sgemm(CblasRowMajor, ta, CblasNoTrans, m, n, k, 1.0f, af, lda, bf, n, 1.0f, cf, n);
	if (wrong) {
		c[nc / 2] += 1.0;
		cf[nc / 2] += 1.0f;
	}
	err = 0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double c0 = val((size_t)i * n + j, 3), ref = (float)c0, mag = fabs(ref);
			for (int p = 0; p < k; p++) {
				double x = trans_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
				ref += x * b[(size_t)p * n + j];
				mag += fabs(x * b[(size_t)p * n + j]);
			}
			double got = f64 ? c[(size_t)i * n + j] : (double)cf[(size_t)i * n + j];
			double e = fabs(got - ref) / (mag > 0 ? mag : 1);
			if (!(e <= err)) /* NaN counts as worst */
				err = isnan(e) ? INFINITY : e;
		}
out:
	free(a);
	free(b);
	free(c);
	free(af);
	free(bf);
	free(cf);
	return err;
}

/* Verifies s/dgemm on every shape, with A plain and transposed, on 1 thread and on all of
 * them; the worst error relative to the type's bound (k * eps * 4: the rounding bound of
 * a k-term dot product with margin), > 1: wrong. */
static double verify(int wrong)
{
	static const int shapes[][3] = {{67, 131, 45}, {256, 256, 256}, {33, 47, 29}};
	int nshapes = quick() ? 1 : 2, all = openblas_get_num_threads();
	double worst = 0;
	for (int t = 0; t < 2; t++) {
		openblas_set_num_threads(t == 0 ? 1 : all);
		for (int s = 0; s < nshapes; s++)
			for (int f64 = 0; f64 < 2; f64++)
				for (int tr = 0; tr < 2; tr++) {
					const int *d = shapes[quick() ? 2 : s];
					double bound = d[2] * (f64 ? DBL_EPSILON : FLT_EPSILON) * 4;
					double e = gemm_error(d[0], d[1], d[2], f64, tr, wrong) / bound;
					if (!(e <= worst))
						worst = isnan(e) ? INFINITY : e;
				}
	}
	return worst;
}

/* --one LABEL ROUTINE: verify, then score this process's kernel set on routine. */
static int measure_one(const char *label, const char *routine)
{
	char act[32];
	injected(label, act, sizeof act);
	if (strcmp(act, "crash") == 0)
		raise(SIGSEGV);
	double worst = verify(strcmp(act, "wrong") == 0);
	const char *core = openblas_get_corename();
	if (!(worst <= 1)) {
		printf("0 %s wrong %.3g\n", core, worst);
		return 0;
	}
	openblas_set_num_threads(1);
	int small = quick() ? 48 : 256, big = quick() ? 96 : 1024, rounds = quick() ? 1 : 3;
	double min_s = quick() ? 0.002 : 0.1, score;
	if (strcmp(routine, "gemm") == 0) {
		double s = gemm_gflops(small, 0, rounds, min_s) * gemm_gflops(big, 0, rounds, min_s) *
		           gemm_gflops(small, 1, rounds, min_s) * gemm_gflops(big, 1, rounds, min_s);
		score = s > 0 ? sqrt(sqrt(s)) : 0.0;
	} else {
		score = sqrt(routine_gflops(routine, 2 * small, rounds, min_s) * routine_gflops(routine, big, rounds, min_s));
	}
	printf("%.2f %s ok\n", score, core);
	return 0;
}

/* One candidate's outcome over the passes. */
typedef struct result {
	double score;   /* best score; -1: excluded */
	char core[64];  /* the kernel set the library ran with */
	char why[160];  /* why excluded */
} result;

/* Runs `self --one LABEL ROUTINE` with the candidate's environment; fills r (excluded on
 * failure). */
static void run_child(const char *self, const candidate *c, const char *routine, result *r)
{
	int fd[2];
	if (pipe(fd) != 0) {
		snprintf(r->why, sizeof r->why, "no pipe");
		r->score = -1;
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (c->coretype)
			setenv("OPENBLAS_CORETYPE", c->coretype, 1);
		else
			unsetenv("OPENBLAS_CORETYPE");
		if (c->l2)
			setenv("OPENBLAS_L2_SIZE", c->l2, 1);
		else
			unsetenv("OPENBLAS_L2_SIZE");
		execl(self, self, "--one", c->label, routine, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char line[512] = "";
	FILE *in = pid > 0 ? fdopen(fd[0], "r") : NULL;
	int got = in && fgets(line, sizeof line, in) != NULL;
	if (in)
		fclose(in);
	else
		close(fd[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	double score = -1;
	char core[64] = "", verdict[16] = "";
	double err = 0;
	int fields = got ? sscanf(line, "%lf %63s %15s %lf", &score, core, verdict, &err) : 0;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || fields < 3) {
		if (pid > 0 && WIFSIGNALED(status))
			snprintf(r->why, sizeof r->why, "crashed (signal %d)", WTERMSIG(status));
		else
			snprintf(r->why, sizeof r->why, "failed (exit %d)", pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		r->score = -1;
		return;
	}
	snprintf(r->core, sizeof r->core, "%s", core);
	if (strcmp(verdict, "ok") != 0) {
		snprintf(r->why, sizeof r->why, "wrong result (error %.3g x the bound)", err);
		r->score = -1;
		return;
	}
	/* a name the library does not know: it prints "Core not found" and runs its own pick */
	if (c->coretype && strcasecmp(c->coretype, core) != 0 && strcmp(c->label, "environment") != 0) {
		snprintf(r->why, sizeof r->why, "not known to this OpenBLAS (ran as %s)", core);
		r->score = -1;
		return;
	}
	if (r->score >= 0 && score > r->score)
		r->score = score;
}

/* The candidates: the library's own pick, each kernel set, the environment's values when it
 * has any; only the one named by fixed when given. Returns the count, 0 for an unknown name. */
static int candidates(candidate *out, const char *fixed, const char *env_core, const char *env_l2)
{
	int n = 0;
	out[n++] = (candidate){"default", NULL, NULL};
	for (int i = 0; i < N_SETS; i++)
		out[n++] = (candidate){KERNEL_SETS[i], KERNEL_SETS[i], NULL};
	if (env_core || env_l2)
		out[n++] = (candidate){"environment", env_core, env_l2};
	if (!fixed)
		return n;
	for (int i = 0; i < n; i++)
		if (strcasecmp(out[i].label, fixed) == 0) {
			out[0] = out[i];
			return 1;
		}
	/* "environment" with neither variable set is the library's own pick; another name, a kernel
	 * set not in the list: tried as asked */
	out[0] = strcasecmp(fixed, "environment") == 0 ? (candidate){"environment", NULL, NULL}
	                                               : (candidate){fixed, fixed, NULL};
	return 1;
}

/* Appends printf-style text to buf (of cap bytes) at *len. */
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	if (*len >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = *len + (size_t)w < cap ? *len + (size_t)w : cap;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--one") == 0)
		return measure_one(argv[2], argv[3]);
	const char *fixed = NULL, *routine = "gemm";
	for (int i = 1; i < argc; i += 2) {
		int known = 0;
		for (size_t r = 0; i + 1 < argc && r < sizeof ROUTINES / sizeof ROUTINES[0]; r++)
			known |= strcmp(argv[i + 1], ROUTINES[r]) == 0;
		if (i + 1 < argc && strcmp(argv[i], "--coretype") == 0 && *argv[i + 1]) {
			fixed = argv[i + 1];
		} else if (i + 1 < argc && strcmp(argv[i], "--score") == 0 && known) {
			routine = argv[i + 1];
		} else {
			fprintf(stderr, "usage: openblas_best [--score gemm|trmm|trsm|syrk] [--coretype NAME]\n");
			return 2;
		}
	}
	int gemm = strcmp(routine, "gemm") == 0;
	const char *env_core = getenv("OPENBLAS_CORETYPE"), *env_l2 = getenv("OPENBLAS_L2_SIZE");
	candidate cand[MAX_CANDIDATES];
	result res[MAX_CANDIDATES];
	int n = candidates(cand, fixed, env_core, env_l2);
	for (int i = 0; i < n; i++)
		res[i] = (result){0, "", ""};
	/* passes over the candidates, each one's best kept: the first child also pays the CPU's
	 * ramp-up, and a noisy machine's load hits every candidate alike */
	int passes = quick() || fixed ? 1 : 2;
	for (int pass = 0; pass < passes; pass++)
		for (int i = 0; i < n; i++)
			if (res[i].score >= 0)
				run_child("/proc/self/exe", &cand[i], routine, &res[i]);
	int best = -1;
	for (int i = 0; i < n; i++) {
		if (res[i].score >= 0)
			fprintf(stderr, "openblas_best: %-15s %7.2f GFLOP/s (kernels %s)\n", cand[i].label, res[i].score, res[i].core);
		else
			fprintf(stderr, "openblas_best: %-15s excluded: %s\n", cand[i].label, res[i].why);
		/* the library's own pick (first) wins near-ties: what users get without the variables */
		if (res[i].score > 0 && (best < 0 || res[i].score > res[best].score * 1.01))
			best = i;
	}
	char note[2048];
	size_t len = 0;
	if (best >= 0 && fixed)
		add(note, sizeof note, &len, "kernel set %s (fixed by --openblas-coretype %s", res[best].core, fixed);
	else if (best >= 0)
		add(note, sizeof note, &len, "kernel set %s (probed, 1-thread %s%s GFLOP/s: ", res[best].core,
		    gemm ? "s/d" : "s", routine);
	else
		add(note, sizeof note, &len, "no correct kernel set (");
	for (int i = 0; i < n && (!fixed || best < 0); i++) {
		add(note, sizeof note, &len, "%s%s", i ? ", " : "", cand[i].label);
		if (strcmp(cand[i].label, "default") == 0 && res[i].core[0])
			add(note, sizeof note, &len, "=%s", res[i].core);
		if (res[i].score >= 0)
			add(note, sizeof note, &len, " %.0f", res[i].score);
		else
			add(note, sizeof note, &len, " excluded: %s", res[i].why);
	}
	add(note, sizeof note, &len, "; environment had OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s",
	    env_core ? env_core : "(unset)", env_l2 ? env_l2 : "(unset)");
	if (best >= 0)
		add(note, sizeof note, &len, "; runs with OPENBLAS_CORETYPE %s, OPENBLAS_L2_SIZE %s)",
		    cand[best].coretype ? cand[best].coretype : "unset", cand[best].l2 ? cand[best].l2 : "unset");
	else
		add(note, sizeof note, &len, ")");
	if (best < 0) {
		printf("coretype -\nl2 -\nnote %s\n", note);
		fprintf(stderr, "openblas_best: no usable candidate (each crashed, computed a wrong result or is unknown)\n");
		return 1;
	}
	printf("label %s\ncoretype %s\nl2 %s\nnote %s\n", cand[best].label, cand[best].coretype ? cand[best].coretype : "-",
	       cand[best].l2 ? cand[best].l2 : "-", note);
	return 0;
}
