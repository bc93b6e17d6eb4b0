/* report.h: `cachet report` (tools/report.c), called from the CLI's dispatch in tools/cachet.c. */
#ifndef CACHET_TOOLS_REPORT_H
#define CACHET_TOOLS_REPORT_H

/* Run `cachet report` on argv[1..argc) (argv[0] is "report"); returns the
 * CLI's exit code (0 done, 1 failed, 2 bad input or usage). */
int cachet_report_main(int argc, char **argv);
/* One line of `cachet --help`. */
#define CACHET_REPORT_SUMMARY "write an HTML report of where a kernel's cache misses come from (plots, tables)"

#endif
