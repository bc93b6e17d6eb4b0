/* bench_util.h: what the benchmarks share: wall clock, sorting, median, and the OpenBLAS peer at its best. */
#ifndef CT_BENCH_UTIL_H
#define CT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Monotonic wall-clock seconds. */
static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort comparator of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (n >= 1); sorts v. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Parses "a,b,c" into out (at most max values, each in [lo, hi]); the count, 0 on a bad list. */
static inline int bench_parse_list(const char *s, long *out, int max, long lo, long hi)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < lo || v > hi || (*end && *end != ','))
			return 0;
		out[n++] = v;
		s = *end ? end + 1 : end;
	}
	return *s ? 0 : n;
}

/* Removes argv[i] and argv[i + 1] from argv (of *argc entries and a NULL). */
static inline void bench_drop_args(int *argc, char **argv, int i)
{
	for (int j = i; j + 2 <= *argc; j++)
		argv[j] = argv[j + 2];
	*argc -= 2;
}

/* Runs path with args (NULL-terminated) and reads its stdout into out (cap bytes);
 * 1 when it exited 0. */
static inline int bench_run_probe(char *const *args, char *out, size_t cap)
{
	int fd[2];
	if (pipe(fd) != 0)
		return 0;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execv(args[0], args);
		_exit(127);
	}
	close(fd[1]);
	size_t len = 0;
	ssize_t got;
	while (pid > 0 && len + 1 < cap && (got = read(fd[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = 0;
	close(fd[0]);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The value of the probe output's line "KEY VALUE" (in text, modified), or NULL. */
static inline char *bench_probe_line(char *text, const char *key)
{
	size_t n = strlen(key);
	for (char *p = text; p && *p;) {
		char *end = strchr(p, '\n');
		if (strncmp(p, key, n) == 0 && p[n] == ' ') {
			if (end)
				*end = 0;
			return p + n + 1;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* The x86-64 OpenBLAS kernel sets worth trying on an AVX2/AVX-512 CPU (OPENBLAS_CORETYPE;
 * 0.3.21 does not know SapphireRapids, a later OpenBLAS may): openblas_best's candidates
 * besides the library's own pick, and bench_poly's BLAS peers. */
#define BENCH_OPENBLAS_SETS "Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen"

/* Makes the OpenBLAS this bench compares with run at its best, whatever the environment
 * says: runs openblas_best (built beside this program; bench/common/openblas_best.c), which
 * verifies and times the library's own pick (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
 * removed), each x86-64 kernel set and the environment's own values, each in a child process,
 * and re-executes this program with the fastest correct one's OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE (the library reads them only when it loads). "--openblas-coretype NAME"
 * in argv fixes the candidate instead (still verified; the bench stops when it fails); the
 * option is removed from argv. bench_peer_note() then says what was chosen, for the
 * table's header. Call it first in main; returns the new argc. The candidates are timed on
 * gemm; bench_openblas_at_best_for times them on another routine. */
static inline int bench_openblas_at_best_for(int argc, char **argv, const char *routine)
{
	const char *fixed = NULL;
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--openblas-coretype") == 0) {
			fixed = argv[i + 1];
			bench_drop_args(&argc, argv, i);
			break;
		}
	if (getenv("CACHET_BENCH_OPENBLAS_PICKED"))
		return argc; /* the re-executed process: the environment is the probe's */
	setenv("CACHET_BENCH_OPENBLAS_PICKED", "1", 1);
	char exe[4096], out[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16); /* room for the probe's name */
	char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
	if (!slash) {
		setenv("CACHET_BENCH_PEER_NOTE", "not probed: cannot find openblas_best; the environment's values", 1);
		return argc;
	}
	strcpy(slash + 1, "openblas_best");
	char opt[] = "--coretype", name[256], score_opt[] = "--score", score[32];
	snprintf(name, sizeof name, "%s", fixed ? fixed : "");
	snprintf(score, sizeof score, "%s", routine ? routine : "gemm");
	char *args[6] = {exe, score_opt, score, fixed ? opt : NULL, fixed ? name : NULL, NULL};
	int ok = bench_run_probe(args, out, sizeof out);
	char *note = bench_probe_line(out, "note");
	static char copy1[4096], copy2[4096]; /* each line's value points into its own copy */
	snprintf(copy1, sizeof copy1, "%s", out);
	snprintf(copy2, sizeof copy2, "%s", out);
	char *core = bench_probe_line(copy1, "coretype"), *l2 = bench_probe_line(copy2, "l2");
	if (!ok || !core || !l2 || !note) {
		fprintf(stderr, "bench: %s: %s\n", exe, note ? note : "failed");
		if (fixed) {
			fprintf(stderr, "bench: --openblas-coretype %s: not usable here\n", fixed);
			exit(2);
		}
		setenv("CACHET_BENCH_PEER_NOTE", "not probed: openblas_best failed; the environment's values", 1);
		return argc;
	}
	if (strcmp(core, "-") == 0)
		unsetenv("OPENBLAS_CORETYPE");
	else
		setenv("OPENBLAS_CORETYPE", core, 1);
	if (strcmp(l2, "-") == 0)
		unsetenv("OPENBLAS_L2_SIZE");
	else
		setenv("OPENBLAS_L2_SIZE", l2, 1);
	setenv("CACHET_BENCH_PEER_NOTE", note, 1);
	fflush(NULL);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "bench: re-executing with the probe's OpenBLAS settings failed\n");
	return argc;
}

/* bench_openblas_at_best_for with the candidates timed on gemm (s/dgemm). */
static inline int bench_openblas_at_best(int argc, char **argv)
{
	return bench_openblas_at_best_for(argc, argv, NULL);
}

/* What bench_openblas_at_best chose, for the table's header. */
static inline const char *bench_peer_note(void)
{
	const char *note = getenv("CACHET_BENCH_PEER_NOTE");
	return note ? note : "not probed";
}

#endif
