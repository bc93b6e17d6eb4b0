/* bench_util.h: timing helpers the benchmarks share (wall clock, sorting, median). */
#ifndef CT_BENCH_UTIL_H
#define CT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Makes the OpenBLAS this bench compares with run at its best: unless OPENBLAS_CORETYPE is set
 * already, runs openblas_best (built beside this program; bench/common/openblas_best.c), which
 * times each of OpenBLAS's kernel sets in a child process and prints the fastest, and re-executes
 * this program with OPENBLAS_CORETYPE set to it (the library reads the variable only when it
 * loads). The candidates' figures go to stderr. Returns normally when the library's own pick is
 * the best or the probe cannot run (then says so). Call it first in main. */
static inline void bench_openblas_at_best(char **argv)
{
	if (getenv("OPENBLAS_CORETYPE") || getenv("CACHET_BENCH_OPENBLAS_PICKED"))
		return;
	setenv("CACHET_BENCH_OPENBLAS_PICKED", "1", 1);
	char exe[4096], cmd[4200], name[64] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16); /* room for the probe's name */
	if (n > 0)
		exe[n] = 0;
	char *slash = n > 0 ? strrchr(exe, '/') : NULL;
	if (!slash) {
		fprintf(stderr, "bench: cannot find openblas_best; OpenBLAS keeps its own kernel pick\n");
		return;
	}
	strcpy(slash + 1, "openblas_best");
	snprintf(cmd, sizeof cmd, "'%s'", exe);
	FILE *p = popen(cmd, "r");
	int ok = p && fgets(name, sizeof name, p) != NULL;
	if (p && pclose(p) != 0)
		ok = 0;
	name[strcspn(name, "\n")] = 0;
	if (!ok || !*name) {
		fprintf(stderr, "bench: %s failed; OpenBLAS keeps its own kernel pick\n", exe);
		return;
	}
	if (strcmp(name, "default") == 0)
		return;
	setenv("OPENBLAS_CORETYPE", name, 1);
	fflush(NULL);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "bench: re-executing with OPENBLAS_CORETYPE=%s failed\n", name);
}

#endif
