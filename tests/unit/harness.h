/* harness.h: a tiny test harness; each test program prints "N passed, M failed" (", K skipped" when some could not run here). */
#ifndef CT_HARNESS_H
#define CT_HARNESS_H

#include <stdio.h>
#include <string.h>

static int h_pass, h_fail, h_skip, h_case_failed, h_case_skipped;
static const char *h_case = "";

/* Report a failed check inside the current case (the case fails). */
#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			h_case_failed = 1;                                             \
			fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__,    \
				__LINE__, h_case, #cond);                              \
		}                                                                      \
	} while (0)

/* Like CHECK, with a printf-style explanation. */
#define CHECKF(cond, ...)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			h_case_failed = 1;                                             \
			fprintf(stderr, "%s:%d: [%s] check failed: %s: ", __FILE__,    \
				__LINE__, h_case, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
		}                                                                      \
	} while (0)

/* A case is one named unit (a test function or one row of a table). */
static inline void h_begin(const char *name)
{
	h_case = name;
	h_case_failed = 0;
	h_case_skipped = 0;
}

/* The current case cannot run on this machine (no GPU, no driver): it
 * counts as skipped, never as passed, and the reason is printed. */
static inline void h_skip_case(const char *why)
{
	h_case_skipped = 1;
	printf("skip %s: %s\n", h_case, why);
}

static inline void h_end(void)
{
	if (h_case_failed)
		h_fail++;
	else if (h_case_skipped)
		h_skip++;
	else
		h_pass++;
}

#define RUN(fn)                                                                        \
	do {                                                                           \
		h_begin(#fn);                                                          \
		fn();                                                                  \
		h_end();                                                               \
	} while (0)

static inline int h_report(void)
{
	if (h_skip)
		printf("%d passed, %d failed, %d skipped\n", h_pass, h_fail, h_skip);
	else
		printf("%d passed, %d failed\n", h_pass, h_fail);
	return h_fail ? 1 : 0;
}

#endif
