/* openblas_best.c: finds the OPENBLAS_CORETYPE under which this machine's OpenBLAS runs gemm fastest.
 *
 * A DYNAMIC_ARCH OpenBLAS picks its kernels from the CPU it recognises, and
 * 0.3.21 does not know every CPU it runs on (on Zen 5 it picks its AVX2
 * "Haswell" kernels); OPENBLAS_CORETYPE overrides the pick, but only when
 * the library loads. So each candidate is measured in a child process of
 * its own (this program re-run with --one), and the benches that compare
 * with OpenBLAS set the winner before they start (bench_util.h,
 * bench_openblas_at_best), so that the peer is measured at its best.
 *
 * Usage: openblas_best          prints the best candidate's name on stdout
 *                               ("default": the library's own pick) and one
 *                               line per candidate on stderr (score: geometric
 *                               mean GFLOP/s of s/dgemm at 256 and 1024, 1 thread)
 *        openblas_best --one    measures the coretype of this process */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

/* The x86-64 kernels sets of OpenBLAS 0.3.21 worth trying on an AVX2/AVX-512 CPU;
 * "" is the library's own pick. */
static const char *const CANDIDATES[] = {"", "Haswell", "SkylakeX", "Cooperlake", "Zen"};
enum { N_CANDIDATES = (int)(sizeof CANDIDATES / sizeof CANDIDATES[0]) };

/* Best GFLOP/s over 3 rounds of >= 0.1 s of square row-major gemm of size n, 1 thread. */
static double gemm_gflops(int n, int f64)
{
	size_t count = (size_t)n * (size_t)n;
	size_t elem = f64 ? sizeof(double) : sizeof(float);
	char *a = calloc(count, elem), *b = calloc(count, elem), *c = calloc(count, elem);
	double best = 0;
	for (int round = 0; a && b && c && round < 3; round++) {
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
		} while (t < 0.1);
		double g = 2.0 * n * n * (double)n * reps / t * 1e-9;
		if (g > best)
			best = g;
	}
	free(a);
	free(b);
	free(c);
	return best;
}

/* --one: the score of this process's coretype (geometric mean of f32 and f64 at 256 and 1024). */
static int measure_one(void)
{
	openblas_set_num_threads(1);
	double s = gemm_gflops(256, 0) * gemm_gflops(1024, 0) * gemm_gflops(256, 1) * gemm_gflops(1024, 1);
	printf("%.2f %s\n", s > 0 ? sqrt(sqrt(s)) : 0.0, openblas_get_config());
	return 0;
}

/* Runs `self --one` with OPENBLAS_CORETYPE=name; its score, or -1 when the child failed. */
static double score_of(const char *self, const char *name, char *config, size_t cap)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (*name)
			setenv("OPENBLAS_CORETYPE", name, 1);
		else
			unsetenv("OPENBLAS_CORETYPE");
		execl(self, self, "--one", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	FILE *in = fdopen(fd[0], "r");
	double score = -1;
	char line[512] = "";
	if (in && fgets(line, sizeof line, in) && sscanf(line, "%lf", &score) == 1) {
		const char *cfg = strchr(line, ' ');
		snprintf(config, cap, "%s", cfg ? cfg + 1 : "");
		config[strcspn(config, "\n")] = 0;
	}
	if (in)
		fclose(in);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? score : -1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--one") == 0)
		return measure_one();
	/* two passes, each candidate's best kept: the first child also pays the CPU's ramp-up */
	double score[N_CANDIDATES];
	char config[N_CANDIDATES][400];
	for (int i = 0; i < N_CANDIDATES; i++)
		score[i] = -1, config[i][0] = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < N_CANDIDATES; i++) {
			char cfg[400] = "";
			double s = score_of("/proc/self/exe", CANDIDATES[i], cfg, sizeof cfg);
			if (s > score[i]) {
				score[i] = s;
				snprintf(config[i], sizeof config[i], "%s", cfg);
			}
		}
	int best = -1;
	for (int i = 0; i < N_CANDIDATES; i++) {
		fprintf(stderr, "openblas_best: OPENBLAS_CORETYPE=%-10s %7.2f GFLOP/s (%s)\n",
		        *CANDIDATES[i] ? CANDIDATES[i] : "(unset)", score[i], score[i] < 0 ? "failed" : config[i]);
		/* the library's own pick (first) wins near-ties: it is what users get without the variable */
		if (score[i] > 0 && (best < 0 || score[i] > score[best] * 1.01))
			best = i;
	}
	if (best < 0)
		return 1;
	printf("%s\n", *CANDIDATES[best] ? CANDIDATES[best] : "default");
	return 0;
}
