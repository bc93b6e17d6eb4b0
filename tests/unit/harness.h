/* harness.h: a tiny test harness; each test program prints "N passed, M failed". */
#ifndef CT_HARNESS_H
#define CT_HARNESS_H

#include <stdio.h>
#include <string.h>

static int h_pass, h_fail, h_case_failed;
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
}

static inline void h_end(void)
{
	if (h_case_failed)
		h_fail++;
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
	printf("%d passed, %d failed\n", h_pass, h_fail);
	return h_fail ? 1 : 0;
}

#endif
