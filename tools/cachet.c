/* cachet.c: the command-line tool: its options (getopt_long), the command table, help, and main; each command lives in a cmd_*.c file (report in report.c). */
#include "cli.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* What getopt_long returns for each option: the letter of a short one,
 * values above any character for the long-only ones. */
enum {
	K_HELP = 'h', K_D = 'D', K_OUT = 'o',
	K_BRANCHING = 256, K_JSON, K_NO_VERIFY, K_CHECKED, K_SIMULATE, K_PER_REF, K_SHOW, K_QUIET, K_FORCE,
	K_EXPORT, K_IMPORT, K_ENGINE, K_REPEAT, K_THREADS, K_VECTOR_BYTES, K_TARGET, K_CACHE, K_CC, K_MAX,
	K_SIZES, K_BUDGET, K_MAX_ACCESSES, K_AUTO,
	K_SYMBOLIC, K_RANKS, K_GRID
};

/* "+": stop at each word that is not an option (parse_args takes it and
 * goes on, so options and words mix in any order); ":": report a missing
 * value apart from an unknown option. */
static const char short_options[] = "+:hD:o:";

static const struct option long_options[] = {
	{"help", no_argument, NULL, K_HELP},
	{"branching", no_argument, NULL, K_BRANCHING},
	{"json", no_argument, NULL, K_JSON},
	{"no-verify", no_argument, NULL, K_NO_VERIFY},
	{"checked", no_argument, NULL, K_CHECKED},
	{"auto", no_argument, NULL, K_AUTO},
	{"simulate", no_argument, NULL, K_SIMULATE},
	{"per-ref", no_argument, NULL, K_PER_REF},
	{"symbolic", no_argument, NULL, K_SYMBOLIC},
	{"show", no_argument, NULL, K_SHOW},
	{"quiet", no_argument, NULL, K_QUIET},
	{"force", no_argument, NULL, K_FORCE},
	{"export", required_argument, NULL, K_EXPORT},
	{"import", required_argument, NULL, K_IMPORT},
	{"engine", required_argument, NULL, K_ENGINE},
	{"repeat", required_argument, NULL, K_REPEAT},
	{"threads", required_argument, NULL, K_THREADS},
	{"vector-bytes", required_argument, NULL, K_VECTOR_BYTES},
	{"target", required_argument, NULL, K_TARGET},
	{"cache", required_argument, NULL, K_CACHE},
	{"cc", required_argument, NULL, K_CC},
	{"max", required_argument, NULL, K_MAX},
	{"sizes", required_argument, NULL, K_SIZES},
	{"budget", required_argument, NULL, K_BUDGET},
	{"max-accesses", required_argument, NULL, K_MAX_ACCESSES},
	{"output", required_argument, NULL, K_OUT},
	{"ranks", required_argument, NULL, K_RANKS},
	{"grid", required_argument, NULL, K_GRID},
	{NULL, 0, NULL, 0},
};

/* Per option: the O_* bit a command must have to take it (0: every command
 * takes it) and what its value must be, said when it is missing or bad. */
static const struct option_rule {
	int key;
	unsigned bit;
	const char *expects;
} option_rules[] = {
	{K_HELP, 0, NULL},
	{K_D, O_D, "%s expects NAME=VALUE"},
	{K_OUT, O_OUT, "%s expects a folder"},
	{K_BRANCHING, O_BRANCHING, NULL},
	{K_JSON, O_JSON, NULL},
	{K_NO_VERIFY, O_NO_VERIFY, NULL},
	{K_CHECKED, 0, NULL}, /* run only: any other command does not know it */
	{K_AUTO, 0, NULL},    /* run only, as --checked */
	{K_SIMULATE, O_SIMULATE, NULL},
	{K_PER_REF, O_PER_REF, NULL},
	{K_SYMBOLIC, O_SYMBOLIC, NULL},
	{K_SHOW, O_SHOW, NULL},
	{K_QUIET, O_QUIET, NULL},
	{K_FORCE, O_FORCE, NULL},
	{K_EXPORT, O_EXPORT, "%s expects a FILE.json"},
	{K_IMPORT, O_IMPORT, "%s expects a FILE.json"},
	{K_ENGINE, O_ENGINE, "%s expects native or interp"},
	{K_REPEAT, O_REPEAT, "%s expects an integer in 1..1000000"},
	{K_THREADS, O_THREADS, "%s expects an integer in 0..4096"},
	{K_VECTOR_BYTES, O_VECTOR_BYTES, "%s expects 0 or a power of two in 8..256"},
	{K_TARGET, O_TARGET, NULL}, /* the names come from the library's targets (target_names) */
	{K_CACHE, O_CACHE, "%s expects SIZE:LINE[:WAYS],..."},
	{K_CC, O_CC, "%s expects a compiler command"},
	{K_MAX, O_MAX, "%s expects a positive integer"},
	{K_SIZES, O_SIZES, "%s expects a list of sizes"},
	{K_BUDGET, O_BUDGET, "%s expects seconds"},
	{K_MAX_ACCESSES, O_MAX_ACCESSES, "%s expects a count of accesses (0 = no limit)"},
	{K_RANKS, O_RANKS, "%s expects an integer in 1..4096"},
	{K_GRID, O_GRID, "%s expects the ranks per distributed index as PxQ (2x2, 4x1, 4)"},
};

/* One command: name, one-line summary, usage, flags it accepts, handler. */
typedef struct command {
	const char *name;
	const char *summary;
	const char *usage;
	const char *details;
	int (*fn)(cli *c);
	unsigned accepts; /* O_* and A_* bits */
} command;

static const command *find_command(const char *name);
static void print_command_help(FILE *f, const command *cmd);

static int parse_define(cli *c, char *arg)
{
	const char *eq = strchr(arg, '=');
	int64_t v;
	if (!eq || eq == arg || !parse_literal(eq + 1, &v))
		return usage_error("-D expects NAME=INTEGER (decimal without a leading zero, or 0x hexadecimal, "
		                   "as in the kernel language), not '%s'", arg);
	if (c->ndefs >= MAX_DEFINES)
		return usage_error("too many -D options (%s)", arg);
	/* the name is the text before '=': cut it in place (argv strings are writable) */
	arg[eq - arg] = 0;
	c->defs[c->ndefs].name = arg;
	c->defs[c->ndefs].value = v;
	c->ndefs++;
	return EXIT_OK;
}

/* The rule of option key (NULL: not an option of the tool). */
static const struct option_rule *option_rule(int key)
{
	for (size_t i = 0; i < sizeof option_rules / sizeof option_rules[0]; i++)
		if (option_rules[i].key == key)
			return &option_rules[i];
	return NULL;
}

/* An option the command does not take, or a word too many: exit 2. */
static int refuse_arg(const cli *c, const char *what, const char *a)
{
	fprintf(stderr, "cachet: error: 'cachet %s' takes no %s '%s'\n(run 'cachet %s --help' for usage)\n",
	        c->cmd, what, a, c->cmd);
	return EXIT_BAD_INPUT;
}

/* A word that is not an option: the cache subcommand, else the FILE. */
static int positional(cli *c, const char *a)
{
	if ((c->accepts & A_SUB) && !c->sub)
		c->sub = a;
	else if ((c->accepts & A_FILE) && !c->file)
		c->file = a;
	else
		return refuse_arg(c, c->accepts & (A_SUB | A_FILE) ? "further argument" : "argument", a);
	return EXIT_OK;
}

/* Whether word a spells the option getopt_long matched, in full: getopt
 * also takes abbreviations (--jso) and runs of short options (-hD), which
 * CLI.md does not promise, so they stay unknown options. */
static int spelled_in_full(const char *a, int key)
{
	if (a[0] == '-' && a[1] == '-') {
		for (const struct option *o = long_options; o->name; o++) {
			size_t n = strlen(o->name);
			if (o->val == key && strncmp(a + 2, o->name, n) == 0 && (a[2 + n] == 0 || a[2 + n] == '='))
				return 1;
		}
		return 0;
	}
	/* -D takes its value attached (-DN=1) or apart, -o only apart */
	return a[0] == '-' && a[1] == key && (a[2] == 0 || key == K_D);
}

/* "host, opencl or cuda": the plan targets the library knows (ct_target_name), into buf. */
static const char *target_names(char *buf, size_t cap)
{
	int n = 0;
	while (ct_target_name(n))
		n++;
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && len < cap; i++) {
		int w = snprintf(buf + len, cap - len, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", ct_target_name(i));
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}

/* Whether name is a plan target the library knows. */
static bool known_target(const char *name)
{
	if (strcmp(name, "mpi") == 0)
		return true; /* emit only: the MPI program of distribute() */
	for (int i = 0; ct_target_name(i); i++)
		if (strcmp(ct_target_name(i), name) == 0)
			return true;
	return false;
}

/* `PxQ[xR]` of --grid into c->grid; false when it is not one to three positive integers. */
static bool parse_grid(cli *c, const char *v)
{
	c->ngrid = 0;
	while (*v && c->ngrid < 3) {
		char *end;
		long long x = strtoll(v, &end, 10);
		if (end == v || x < 1 || x > 4096)
			return false;
		c->grid[c->ngrid++] = x;
		v = end;
		if (*v == 'x' && v[1])
			v++;
		else if (*v)
			return false;
	}
	return *v == 0 && c->ngrid > 0;
}

/* Apply option key with value v (NULL for a flag); a is the word that named it. */
static int apply_option(cli *c, int key, const char *a, char *v)
{
	const char *expects = option_rule(key)->expects;
	int64_t n;
	switch (key) {
	case K_HELP: c->help = 1; break;
	case K_D: return parse_define(c, v);
	case K_BRANCHING: c->branching = 1; break;
	case K_JSON: c->json = 1; break;
	case K_NO_VERIFY: c->run.verify = 0; break;
	case K_CHECKED: c->run.checked = 1; break;
	case K_AUTO: c->auto_plan = 1; break;
	case K_SIMULATE: c->simulate = 1; break;
	case K_PER_REF: c->per_ref = 1; break;
	case K_SYMBOLIC: c->symbolic = 1; break;
	case K_SHOW: c->show = 1; break;
	case K_QUIET: c->quiet = 1; break;
	case K_FORCE: c->force = 1; break;
	case K_EXPORT:
	case K_IMPORT:
		if (!*v)
			return usage_error(expects, a);
		*(key == K_IMPORT ? &c->import_path : &c->export_path) = v;
		break;
	case K_ENGINE:
		if (strcmp(v, "native") == 0)
			c->run.engine = CT_ENGINE_NATIVE;
		else if (strcmp(v, "interp") == 0)
			c->run.engine = CT_ENGINE_INTERP;
		else
			return usage_error("unknown engine '%s' (native or interp)", v);
		break;
	case K_REPEAT:
		if (!parse_int(v, &n) || n < 1 || n > 1000000)
			return usage_error(expects, a);
		c->run.repeat = (int)n;
		break;
	case K_THREADS:
		if (!parse_int(v, &n) || n < 0 || n > 4096)
			return usage_error(expects, a);
		c->run.threads = (int)n;
		break;
	case K_VECTOR_BYTES:
		if (!parse_int(v, &n) || (n != 0 && (n < 8 || n > 256 || (n & (n - 1)) != 0)))
			return usage_error(expects, a);
		c->vector_bytes = n;
		break;
	case K_RANKS:
		if (!parse_int(v, &n) || n < 1 || n > 4096)
			return usage_error(expects, a);
		c->ranks = (int)n;
		break;
	case K_GRID:
		if (!parse_grid(c, v))
			return usage_error(expects, a);
		break;
	case K_TARGET:
		if (!known_target(v)) {
			char names[160], msg[512];
			snprintf(msg, sizeof msg, "unknown target '%s' (%s); emit also takes mpi", v,
			         target_names(names, sizeof names));
			return usage_error("%s", msg);
		}
		c->target = v;
		break;
	case K_CACHE: c->cache_spec = v; break;
	case K_CC:
		if (!*v)
			return usage_error(expects, a);
		c->cc = v;
		break;
	case K_MAX:
		if (!parse_int(v, &n) || n < 1)
			return usage_error(expects, a);
		c->max_tile = n;
		break;
	case K_SIZES: c->sizes = v; break;
	case K_BUDGET: {
		/* decimal seconds only: strtod would also take " 5", "0x10", "inf" (a tuning run without end) */
		char *end;
		c->budget = strtod(v, &end);
		if (*end || !(c->budget > 0) || !isfinite(c->budget) || strspn(v, "0123456789.eE+-") != strlen(v))
			return usage_error("--budget expects positive seconds, not '%s'", v);
		break;
	}
	case K_OUT:
		if (!*v)
			return usage_error(expects, a);
		c->out_dir = v;
		break;
	case K_MAX_ACCESSES:
		if (!parse_int(v, &n) || n < 0)
			return usage_error(expects, a);
		c->max_accesses = n;
		break;
	}
	return EXIT_OK;
}

/* The command's words from argv[first] on, options (getopt_long) and
 * positional words in any order. Every refusal exits 2 with what was wrong. */
static int parse_args(cli *c, int argc, char **argv, int first)
{
	opterr = 0; /* the messages are ours */
	optind = first;
	while (optind < argc) {
		const char *a = argv[optind];
		if (strcmp(a, "--") == 0)
			return usage_error("unknown option '%s'", a);
		int key = getopt_long(argc, argv, short_options, long_options, NULL);
		if (key == -1) {
			/* a word that is not an option ("-" is stdin) */
			int rc = positional(c, argv[optind]);
			if (rc)
				return rc;
			optind++;
			continue;
		}
		int missing = key == ':';
		if (missing)
			key = optopt;
		const struct option_rule *rule = key == '?' ? NULL : option_rule(key);
		if (!rule || !spelled_in_full(a, key) || ((key == K_CHECKED || key == K_AUTO) && strcmp(c->cmd, "run") != 0))
			return usage_error("unknown option '%s'", a);
		if (rule->bit && !(c->accepts & rule->bit))
			return refuse_arg(c, "option", a);
		if (missing && key == K_TARGET) {
			char names[160], msg[512];
			snprintf(msg, sizeof msg, "%s expects %s", a, target_names(names, sizeof names));
			return usage_error("%s", msg);
		}
		if (missing)
			return usage_error(rule->expects, a);
		int rc = apply_option(c, key, a, optarg);
		if (rc)
			return rc;
		c->given |= rule->bit;
	}
	return EXIT_OK;
}

static const command commands[] = {
	{"check", "parse and validate a kernel file; prints nothing on success",
	 "cachet check FILE [-D NAME=VALUE]...",
	 "  -D NAME=VALUE   override a param, or give a runtime param its value\n", cmd_check, A_FILE | O_D},
	{"lower", "print the scheduled, planned loop tree as pseudo-code",
	 "cachet lower FILE [-D NAME=VALUE]... [--json] [--ranks N]",
	 "  -D NAME=VALUE   override a param\n  --json          print the loop tree as one JSON object\n"
	 "  --ranks N       a kernel with distribute(): its exchanges on N ranks (default: the\n"
	 "                  plan's grid=, or 2 ranks per distributed index)\n",
	 cmd_lower, A_FILE | O_D | O_JSON | O_RANKS},
	{"run", "run a kernel on deterministic inputs, time it and verify it",
	 "cachet run FILE [-D ...] [--engine native|interp] [--repeat N] [--threads T] [--no-verify] [--checked] "
	 "[--cc CC] [--vector-bytes B] [--branching] [--auto] [--json] [--ranks N [--grid PxQ]]",
	 "  --auto          run the schedule and plan `cachet auto` chooses (model only) instead\n"
	 "                  of the file's own (a schedule or plan the file has is kept)\n"
	 "  --engine E      native (compiled, default) or interp (the reference interpreter)\n"
	 "  --cc CC         compiler command for the generated C (default $CC, else cc)\n"
	 "  --repeat N      timed runs; the median is reported\n"
	 "  --threads T     threads of the plan's parallel loops (0 = all cores)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --branching     per-element tests in halo copies and boundary ifs (default: branch-free)\n"
	 "  --no-verify     skip the comparison with the unscheduled reference\n"
	 "  --checked       compile with a bounds test on every array and cache access; the\n"
	 "                  first access outside its storage fails the run (host kernels;\n"
	 "                  tunable params keep the file's values)\n"
	 "  --json          one JSON object on stdout\n"
	 "  --ranks N       a kernel with distribute(): run it on N MPI ranks (mpicc and\n"
	 "                  mpirun of Open MPI; docs/DISTRIBUTED.md), verified as a\n"
	 "                  single-process run is\n"
	 "  --grid PxQ      with --ranks: the ranks per distributed index (default: the\n"
	 "                  plan's grid=, or as MPI_Dims_create chooses)\n"
	 "exit codes: 0 verified, 1 the kernel ran but failed, 2 bad input\n",
	 cmd_run, A_FILE | O_D | O_ENGINE | O_REPEAT | O_THREADS | O_NO_VERIFY | O_CC | O_VECTOR_BYTES | O_BRANCHING | O_JSON |
	 O_RANKS | O_GRID},
	{"emit", "print the generated source",
	 "cachet emit FILE [-D ...] [--target host|opencl|cuda|mpi] [--vector-bytes B] [--branching]",
	 "  --target T      host (C99, the default), opencl (OpenCL C, docs/OPENCL.md)\n"
	 "                  or cuda (CUDA C, docs/CUDA.md); opencl and cuda need the\n"
	 "                  kernel's plan(target=...) to match; mpi: the MPI program of\n"
	 "                  a kernel with distribute() (docs/DISTRIBUTED.md)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --branching     per-element tests in halo copies and boundary ifs (default: branch-free)\n",
	 cmd_emit, A_FILE | O_D | O_TARGET | O_VECTOR_BYTES | O_BRANCHING},
	{"build", "write an ahead-of-time package: NAME.h, libNAME.a, libNAME.so",
	 "cachet build FILE [-D ...] -o DIR [--cc CC] [--vector-bytes B] [--branching]",
	 "  -o DIR          the package folder (created if missing)\n"
	 "  --cc CC         compiler command (default $CC, else cc)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --branching     per-element tests in halo copies and boundary ifs (default: branch-free)\n"
	 "The package needs no cachet at run time; it is compiled with -O3\n"
	 "-march=native for this machine. For plan(target=opencl): NAME.cl and a C\n"
	 "wrapper (link with -lOpenCL) embedding the source and this device's binary;\n"
	 "for plan(target=cuda): NAME.cu and a C wrapper over the CUDA driver API.\n",
	 cmd_build, A_FILE | O_D | O_OUT | O_CC | O_VECTOR_BYTES | O_BRANCHING},
	{"cache", "inspect or clean the code cache", "cachet cache stats|clear|verify|path",
	 "  stats           the folder, its entries and bytes, per folder (compiled\n"
	 "                  kernels, OpenCL binaries, PoCL's cache, tuning stores)\n"
	 "  clear           remove every entry (tuning stores are kept)\n"
	 "  verify          check every entry's key and checksum, remove bad ones\n"
	 "  path            print the folder\n"
	 "CACHET_CACHE_DIR sets the folder (default ${XDG_CACHE_HOME:-~/.cache}/cachet);\n"
	 "CACHET_NO_CACHE=1 bypasses it.\n",
	 cmd_cache, A_SUB},
	{"simulate", "count the cache misses of a kernel's exact address trace",
	 "cachet simulate FILE [-D ...] [--cache SPEC] [--json]",
	 "  --cache SPEC    cache levels SIZE:LINE[:WAYS],... (sizes in bytes or with K/M/G\n"
	 "                  suffixes; WAYS 0 or absent = fully associative), e.g. 32K:64,1M:64;\n"
	 "                  default: this machine's caches\n"
	 "  --max-accesses N  walk traces of up to N accesses (default 10^10, about five\n"
	 "                  minutes; 0 = no limit); a longer one is refused before it starts\n"
	 "  --json          one JSON object on stdout\n"
	 "Every level is an LRU, write-allocate cache seeing the whole access stream.\n"
	 "A simulation past a second tells its progress on stderr.\n",
	 cmd_simulate, A_FILE | O_D | O_CACHE | O_MAX_ACCESSES | O_JSON},
	{"predict", "predict a kernel's cache misses with the stack-distance model (no trace)",
	 "cachet predict FILE [-D ...] [--cache SPEC] [--simulate] [--per-ref] [--symbolic] [--threads T] [--ranks N [--grid PxQ]] [--json]",
	 "  --cache SPEC    cache levels SIZE:LINE[:WAYS][:plru][:private|:shared],... as for\n"
	 "                  simulate; default: this\n"
	 "                  machine's caches (set-associative levels are simulated exactly up\n"
	 "                  to 2M accesses, else predicted as fully associative; `source` says)\n"
	 "  --simulate      also run the exact simulator and print its counts side by side\n"
	 "  --max-accesses N  with --simulate: the simulator's limit, as for simulate\n"
	 "  --per-ref       also one row per source reference (FILE:LINE:COL), most misses\n"
	 "                  first: accesses, misses and cold misses per level, and the loop\n"
	 "                  carrying the reuse that misses\n"
	 "  --symbolic      the misses as formulas in the runtime params (which need no\n"
	 "                  value): per level and array, piecewise on a lattice of the params,\n"
	 "                  with each reuse's count and stack distance (docs/MODEL.md)\n"
	 "  --json          one JSON object on stdout\n"
	 "Misses are attributed per array (all references of an array together); --per-ref\n"
	 "shares an array's counts out over its references (by an exact simulation of up to\n"
	 "16M accesses, else by accesses) and says so.\n"
	 "  --threads T     also each core's misses on the private levels and the shared\n"
	 "                  levels' of all T threads together, split as the plan's\n"
	 "                  parallelize splits the work (docs/MODEL.md, \"Threads\")\n"
	 "  --ranks N       a kernel with distribute(): instead, the bytes each of N MPI\n"
	 "                  ranks sends and receives per call (docs/DISTRIBUTED.md)\n"
	 "  --grid PxQ      with --ranks: the ranks per distributed index\n",
	 cmd_predict, A_FILE | O_D | O_CACHE | O_SIMULATE | O_PER_REF | O_MAX_ACCESSES | O_THREADS | O_JSON |
	                 O_SYMBOLIC | O_RANKS | O_GRID},
	{"tiles", "search tile sizes with the cache model (the Tensor Contraction Engine's search)",
	 "cachet tiles FILE [-D ...] [--cache SPEC] [--max T] [--json]",
	 "  --cache SPEC    cache levels as for simulate; default: this machine's caches\n"
	 "  --max T         largest tile tried (default: each index's extent, 1024 if unknown)\n"
	 "  --json          one JSON object on stdout\n"
	 "The tiles are the compile-time params written as split/tile sizes\n"
	 "(param TA = 16 ... tile(a=TA)). Runtime params left without -D are unknown\n"
	 "bounds. Ranked by the misses of the smallest level, then the next; ties:\n"
	 "larger tiles first. The 10 best are shown.\n",
	 cmd_tiles, A_FILE | O_D | O_CACHE | O_MAX | O_JSON},
	{"tune", "tune a kernel's tunable params: rank by the cache model, measure the best few, store the winner",
	 "cachet tune FILE [-D ...] [--sizes SETS] [--budget SECONDS] [--cache SPEC] [--threads T] [--cc CC]\n"
	 "       [--vector-bytes B] [--quiet] [--json]\n"
	 "       cachet tune --show [FILE] [--json]\n"
	 "       cachet tune --export FILE.json [FILE] | --import FILE.json [--force]",
	 "  --sizes SETS    size sets to tune, comma-separated; each is a plain n (every\n"
	 "                  size param n), NAME=V:NAME=V (M=64:N=128:K=32; the others keep\n"
	 "                  their values) or the size params' values joined by x in\n"
	 "                  declaration order (64x64x64); default: the file's sizes (with -D)\n"
	 "  --budget S      wall seconds for the whole run (default 60), shared by the sets;\n"
	 "                  measuring goes on until it is used (or the space is)\n"
	 "  --quiet         no progress lines on stderr\n"
	 "  --export F.json write the store's records (of FILE's family when given) to F.json\n"
	 "  --import F.json read records exported on a machine of the same device id\n"
	 "  --force         with --import: take records of another device id too (as stale)\n"
	 "  --cache SPEC    cache levels for the model (default: this machine's)\n"
	 "  --threads T     threads of the measured runs (0 = all cores)\n"
	 "  --cc CC         compiler command for the measured candidates (default $CC, else cc)\n"
	 "  --vector-bytes B  widest vector of register tiles (0 = this machine's)\n"
	 "  --show          print the store's records (of FILE's family when given), by\n"
	 "                  kernel family and size class, with what the selector picks\n"
	 "  --json          one JSON object on stdout (per size set)\n"
	 "Tunable params are written `param T = 64 tune {16, 32, 64}` or\n"
	 "`tune 16..256 step 16`; see docs/TUNE.md. CACHET_CACHE_DIR sets the store's folder.\n",
	 cmd_tune, A_FILE | O_D | O_SIZES | O_BUDGET | O_CACHE | O_THREADS | O_SHOW | O_CC | O_VECTOR_BYTES | O_JSON |
	 O_QUIET | O_FORCE | O_EXPORT | O_IMPORT},
	{"auto", "choose a schedule and a plan from the nest, this machine and the cache model",
	 "cachet auto FILE [-D ...] [--target host] [--threads T] [--budget SECONDS] [--cache SPEC]\n"
	 "       [--vector-bytes B] [-o OUT.cachet] [--quiet] [--json]",
	 "  --threads T     threads the plan is for (0 = the CPUs this process may use)\n"
	 "  --budget S      also measure: the tuner times the model's best tile sizes for S\n"
	 "                  seconds and the file takes the fastest verified ones (default:\n"
	 "                  model only, nothing measured)\n"
	 "  --cache SPEC    cache levels for the model (default: this machine's)\n"
	 "  --vector-bytes B  the vector width the register tiles are for (0 = this machine's)\n"
	 "  --target host   the only target auto chooses plans for today\n"
	 "  -o OUT.cachet   write the file there (default: stdout)\n"
	 "  --quiet         no progress lines on stderr (with --budget)\n"
	 "  --json          one JSON object on stdout: the file's text and what was chosen\n"
	 "The output is a whole .cachet file with a comment on each choice; a schedule or plan\n"
	 "the input has is kept. See docs/AUTO.md.\n",
	 cmd_auto, A_FILE | O_D | O_TARGET | O_THREADS | O_BUDGET | O_CACHE | O_VECTOR_BYTES | O_OUT | O_QUIET | O_JSON},
	{"probe", "describe this machine: cores, caches, vector ISA, measured peak and bandwidth",
	 "cachet probe [--json]", "  --json          one JSON object on stdout\n", cmd_probe, O_JSON},
	{"demo", "the default job: an embedded matmul, run and explained", "cachet demo", "", cmd_demo, 0},
};

static const command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_command_help(FILE *f, const command *cmd)
{
	fprintf(f, "usage: %s\n\n%s.\n\n%s", cmd->usage, cmd->summary, cmd->details);
}

static void print_help(FILE *f)
{
	fprintf(f, "cachet %s: loop nests to fast, cache-aware kernels\n\nusage: cachet COMMAND [ARGS]\n\n",
		CACHET_VERSION);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-9s %s\n", "report", CACHET_REPORT_SUMMARY);
	fprintf(f, "\n'cachet COMMAND --help' describes a command. Exit codes: 0 success, 1 the kernel\n"
		   "ran but failed, 2 bad input or usage.\n");
}

/* PoCL keeps its own kernel cache (compiled work-group functions), by
 * default in ~/.cache/pocl. For the commands that may run OpenCL, the tool
 * points it at CACHE/pocl-v1 when the user has not set POCL_CACHE_DIR, so
 * that `cachet cache stats|clear` see and empty it. The library never sets
 * it: an environment variable is the process's, and PoCL reads it once, at
 * its first call; a program is the one to decide, as this one does here
 * before any OpenCL call.
 *
 * PoCL does not survive a cache folder it cannot write: on a full disk
 * LLVM aborts the process ("IO failure on output stream"), on a read-only
 * one the build fails. So the folder is handed over only after a probe
 * write and with POCL_MIN_FREE bytes free; otherwise PoCL gets a private
 * temporary folder, removed at exit, and the run goes on without a kept
 * PoCL cache, as host kernels go on without the code cache. */
#define POCL_MIN_FREE ((int64_t)64 << 20)

/* Whether PoCL may write in dir: NULL if so, else why not (written in why). */
static const char *pocl_folder_problem(const char *dir, char *why, size_t cap)
{
	struct statvfs fs;
	if (statvfs(dir, &fs) == 0 && (int64_t)fs.f_bavail * (int64_t)fs.f_frsize < POCL_MIN_FREE) {
		snprintf(why, cap, "only %lld KiB free (PoCL needs %lld MiB)",
		         (long long)((int64_t)fs.f_bavail * (int64_t)fs.f_frsize >> 10),
		         (long long)(POCL_MIN_FREE >> 20));
		return why;
	}
	char probe[4200];
	if (snprintf(probe, sizeof probe, "%s/.cachet-probe.%ld", dir, (long)getpid()) >= (int)sizeof probe) {
		snprintf(why, cap, "its name is too long");
		return why;
	}
	static const char block[4096];
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int ok = fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block;
	int err = errno;
	if (fd >= 0) {
		ok = close(fd) == 0 && ok;
		unlink(probe);
	}
	if (!ok) {
		snprintf(why, cap, "cannot write in it: %s", strerror(err));
		return why;
	}
	return NULL;
}

static char pocl_tmp[4096]; /* the private folder to remove at exit ("" = none) */
/* set once pocl_tmp names the folder made: a signal handler never sees a name half written */
static volatile sig_atomic_t pocl_tmp_ready;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_pocl_tmp(void)
{
	if (pocl_tmp[0])
		nftw(pocl_tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A private folder for PoCL's cache, removed at exit; 0 if none can be made. */
static int pocl_private_folder(void)
{
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = "/tmp";
	if (snprintf(pocl_tmp, sizeof pocl_tmp, "%s/cachet-pocl.XXXXXX", t) >= (int)sizeof pocl_tmp ||
	    !mkdtemp(pocl_tmp)) {
		pocl_tmp[0] = 0;
		return 0;
	}
	pocl_tmp_ready = 1;
	atexit(remove_pocl_tmp);
	setenv("POCL_CACHE_DIR", pocl_tmp, 1);
	return 1;
}

static void point_pocl_cache(const char *cmd)
{
	const char *e = getenv("POCL_CACHE_DIR"), *nc = getenv("CACHET_NO_CACHE");
	if ((e && *e) || (nc && strcmp(nc, "1") == 0) ||
	    (strcmp(cmd, "run") != 0 && strcmp(cmd, "build") != 0 && strcmp(cmd, "tune") != 0))
		return;
	ct_ctx *ctx = ct_ctx_new();
	if (ctx)
		ct_cache_set_warning_handler(ctx, quiet, NULL);
	char dir[4096], why[160];
	const char *problem = NULL;
	if (ctx && ct_cache_folders(ctx, NULL, 0) >= 0 &&
	    snprintf(dir, sizeof dir, "%s/pocl-v1", ct_cache_path(ctx)) < (int)sizeof dir &&
	    (mkdir(dir, 0700) == 0 || errno == EEXIST)) {
		if (!(problem = pocl_folder_problem(dir, why, sizeof why))) {
			setenv("POCL_CACHE_DIR", dir, 1);
			ct_ctx_free(ctx);
			return;
		}
		fprintf(stderr, "cachet: warning: not giving PoCL the cache folder %s: %s; "
		        "OpenCL kernels run without a kept PoCL cache\n", dir, problem);
	}
	/* the cache folder is not usable (the library says why when it is
	 * used): PoCL's cache goes to a private folder too */
	ct_ctx_free(ctx);
	pocl_private_folder();
}

/* SIGINT, SIGTERM, SIGHUP: kill the compiler the command's ctx runs and
 * remove its build folders (ct_ctx_cancel), kill the tool's own child
 * (gnuplot) and remove its temp folders and PoCL's private folder, then
 * die of the signal as if there were no handler. */
static void on_fatal_signal(int sig)
{
	ct_ctx_cancel(signal_ctx);
	undo_for_signal();
	/* PoCL's threads may still be writing in the folder while it is
	 * removed, and make it again (their mkdir -p of a cache path): remove
	 * it until it has stayed gone for 3 looks 10 ms apart (0.5 s at most) */
	struct stat st;
	for (int i = 0, gone = 0; pocl_tmp_ready && i < 50 && gone < 3; i++) {
		if (lstat(pocl_tmp, &st) == 0) {
			remove_tree_at(AT_FDCWD, pocl_tmp, 0);
			gone = 0;
		} else {
			gone++;
		}
		struct timespec pause = {0, 10 * 1000 * 1000};
		nanosleep(&pause, NULL);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, old;
		/* a signal the caller ignores (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

int main(int argc, char **argv)
{
	/* Threads of parallel loops spin a bounded time before they sleep
	 * (unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT): set before
	 * any generated code loads the OpenMP runtime, which reads it once. */
	ct_threads_wait_default();
	if (argc < 2) {
		print_help(stderr);
		return EXIT_BAD_INPUT;
	}
	int top = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0 ||
	          strcmp(argv[1], "--version") == 0;
	if (top && argc > 2)
		return usage_error("unexpected argument '%s'", argv[2]);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		print_help(stdout);
		return finish_output(EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cachet %s\n", CACHET_VERSION);
		return finish_output(EXIT_OK);
	}
	catch_fatal_signals();
	if (strcmp(argv[1], "report") == 0)
		return finish_output(cachet_report_main(argc - 1, argv + 1));
	const command *cmd = find_command(argv[1]);
	if (!cmd)
		return usage_error("unknown command '%s'", argv[1]);
	cli c;
	memset(&c, 0, sizeof c);
	c.cmd = cmd->name;
	c.accepts = cmd->accepts;
	c.max_accesses = -1;
	ct_run_options_init(&c.run);
	int rc = parse_args(&c, argc, argv, 2);
	if (rc)
		return rc;
	if (c.help) {
		print_command_help(stdout, cmd);
		return finish_output(EXIT_OK);
	}
	point_pocl_cache(cmd->name);
	return finish_output(cmd->fn(&c));
}
