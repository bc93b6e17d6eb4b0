/* cli.h: what the files of the cachet tool share: the parsed command line, exit codes, the helpers every command uses, and the commands. */
#ifndef CT_CLI_H
#define CT_CLI_H

#include "cachet.h"
#include "core/json.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Exit codes of CLI.md. */
enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_BAD_INPUT = 2 };

#define MAX_DEFINES 64

typedef struct define {
	const char *name;
	int64_t value;
} define;

/* Everything a command line can say; each command uses what it needs. */
typedef struct cli {
	const char *cmd;
	const char *file;
	define defs[MAX_DEFINES];
	int ndefs;
	int json;
	ct_run_options run;
	const char *target;
	const char *out_dir;
	const char *cache_spec;
	int simulate;
	int per_ref;
	int symbolic;         /* predict --symbolic */
	int64_t max_tile;
	const char *sizes;
	double budget;
	const char *sub;      /* cache subcommand */
	const char *cc;       /* --cc: compiler command for generated code */
	int64_t vector_bytes; /* --vector-bytes: widest register-tile vector (0 = the machine's) */
	int show;             /* tune --show */
	int quiet;            /* tune --quiet: no progress lines */
	int force;            /* tune --import --force: records of another device too */
	const char *export_path; /* tune --export FILE.json */
	const char *import_path; /* tune --import FILE.json */
	int branching;        /* --branching: CT_OPT_BRANCHING (tested copies and boundary ifs) */
	int64_t max_accesses; /* --max-accesses: CT_OPT_SIM_MAX_ACCESSES (-1: not given) */
	int auto_plan;        /* run --auto: the schedule and plan of ct_kernel_autoschedule */
	int help;
	int ranks;          /* run --ranks N: MPI ranks of a distributed kernel (0: one process) */
	int ngrid;          /* run --grid PxQ: ranks per distributed index */
	int64_t grid[3];
	unsigned accepts; /* the command's O_* and A_* bits */
	unsigned given;   /* the O_* bits of the options on the command line */
} cli;

/* What a command accepts: one bit per option, and its positional words. */
enum {
	O_D = 1u << 0, O_BRANCHING = 1u << 1, O_JSON = 1u << 2, O_NO_VERIFY = 1u << 3,
	O_SIMULATE = 1u << 4, O_SHOW = 1u << 5, O_ENGINE = 1u << 6, O_REPEAT = 1u << 7,
	O_THREADS = 1u << 8, O_VECTOR_BYTES = 1u << 9, O_TARGET = 1u << 10, O_CACHE = 1u << 11,
	O_CC = 1u << 12, O_MAX = 1u << 13, O_SIZES = 1u << 14, O_BUDGET = 1u << 15, O_OUT = 1u << 16,
	O_QUIET = 1u << 17, O_FORCE = 1u << 18, O_EXPORT = 1u << 19, O_IMPORT = 1u << 22,
	O_PER_REF = 1u << 23, O_MAX_ACCESSES = 1u << 24,
	O_SYMBOLIC = 1u << 25, O_RANKS = 1u << 26, O_GRID = 1u << 27,
	A_FILE = 1u << 20, /* one kernel FILE ('-' = stdin) */
	A_SUB = 1u << 21   /* one subcommand word (cache) */
};

/* ------------------------------------------------------------ helpers (cli.c) */

/* "cachet: error: " fmt (with arg), the --help hint; returns exit 2. */
int usage_error(const char *fmt, const char *arg);
/* Print the last error of ctx: a parse's diagnostics with carets, else the
 * error with its source line when it has a position. */
void print_error(ct_ctx *ctx);
/* Map a library status to the exit codes of CLI.md. */
int exit_code(ct_status st);
/* print_error, then exit_code(st). */
int fail(ct_ctx *ctx, ct_status st);
/* The file at path, whole (malloc'd, NUL-terminated; at most max bytes); NULL
 * with errno set when it cannot be read or is longer. *len (optional): its length. */
char *read_path(const char *path, size_t max, size_t *len);
/* A whole decimal int64 (1) or not (0). */
int parse_int(const char *s, int64_t *v);
/* An integer as the kernel language writes it (docs/LANGUAGE.md): an
 * optional '-', then decimal without a leading zero (0 itself aside) or
 * 0x hexadecimal; fits int64. 1 when s is one, else 0. -D values. */
int parse_literal(const char *s, int64_t *v);
/* The ctx of the command under way, for the signal handler's ct_ctx_cancel
 * (NULL: none; cleared before the ctx is freed). */
extern ct_ctx *volatile signal_ctx;
/* Set when a command could not print its result (print_json ran out of memory). */
extern int output_failed;
/* The exit code of a command that returned rc, once stdout is flushed: a
 * result that could not be written (a full disk, /dev/full) is an error
 * with a message and exit 1, never exit 0. */
int finish_output(int rc);
/* Whether a progress line is on stderr, not yet wiped (show_progress). */
extern int progress_drawn;

/* A ct_progress_fn for the CLI: on a terminal one bar redrawn in place
 * ("verify [####    ] 12%"), wiped when done; elsewhere, for "simulate"
 * only, a line at each tenth ("simulate: 30% of the trace"). */
void show_progress(void *ud, const char *phase, int done, int total);

/* Parse c->file (or stdin for "-") with the ctx options and -D applied;
 * NULL after printing the error, *rc then the exit code. */
ct_kernel *load_kernel(ct_ctx *ctx, cli *c, int *rc);
/* A command that works on one kernel file: the ctx and the kernel (with -D
 * applied) are made and freed around it. */
typedef int (*kernel_cmd)(ct_ctx *ctx, ct_kernel *k, cli *c);
/* Parse c->file, apply -D and the ctx options, run fn (NULL: only check). */
int with_kernel(cli *c, kernel_cmd fn);
/* Print v (taken) as one line on stdout: the layout of every --json object. */
void print_json(json_t *v, bool ok);
/* A warning handler that says nothing (the command reports the problem). */
void quiet(void *ud, const char *msg);

/* A per-reference row (ct_ref_misses) as predict --per-ref and report print it: */
/* where a level's count came from (ct_count_source): "model", "simulator", "fully associative estimate" */
const char *count_source_name(int s);
/* what carries the row's capacity misses at level l, into buf ("-" when none) */
const char *carrier_text(const ct_ref_misses *m, int l, char *buf, size_t cap);
/* its place in the source, FILE:LINE:COL (file: the table's), or "(copy loops)" */
const char *ref_where(const char *file, const ct_ref_misses *m, char *buf, size_t cap);
/* what it does: a source read, write or op= update, or a plan's copy loops */
const char *ref_access(const ct_ref_misses *m);
/* the rows of t as the `per_ref` JSON array of predict --per-ref --json and report --json
 * (file: what FILE:LINE:COL names); *ok becomes false when memory runs out */
json_t *ref_table_json(const ct_ref_table *t, const char *file, int nlevels, bool *ok);
/* one cache level's size, line and ways: the start of every command's per-level JSON object */
json_t *cache_level_json(int64_t size, int64_t line, int64_t ways, bool *ok);
/* level l of a prediction as predict --json and report --json list it: cache_level_json, then
 * misses, exact, source and, where the level was simulated, why ("fallback") */
json_t *predict_level_json(const ct_predict_result *r, int l, bool *ok);

/* ------------------------------------------------------------ output files (cli.c) */

/* mkdir -p of path's parent folders (with self, of path itself too); 0
 * after printing why not. */
int make_parents(const char *path, int self);
/* Whether a and b name the same existing file (device and inode). */
int same_file(const char *a, const char *b);
/* A file written in place of path atomically: a temp file in the same
 * folder, flushed, fsync'd and renamed over path only when every write
 * succeeded, so a full disk never leaves a fragment where a good file was.
 * A path that exists and is no regular file (a device, a pipe, a symbolic
 * link such as /dev/stdout, which a rename would replace) is written in
 * place, its errors still reported. */
typedef struct atomic_file {
	FILE *f;
	const char *path;
	int in_place;
	char tmp[4200];
} atomic_file;
/* Start writing path; NULL after a message. */
FILE *atomic_open(atomic_file *o, const char *path);
/* Finish: 1 when path now holds what was written; 0 after a message (the
 * temp file removed, path untouched). */
int atomic_commit(atomic_file *o);
/* Give up: the temp file removed, path untouched. */
void atomic_abort(atomic_file *o);

/* ------------------------------------------------------------ what a signal undoes (cli.c) */

/* Remove name (under folder fd, AT_FDCWD) and, for a folder, everything in
 * it, with system calls only: async-signal-safe. */
void remove_tree_at(int fd, const char *name, int depth);
/* Track temp folder dir for the signal handler (it removes it); the slot,
 * -1 when none is free (then it is not tracked). */
int temp_track(const char *dir);
void temp_untrack(int slot);
/* A child the tool runs itself in a process group of its own (gnuplot; 0:
 * none): the handler kills the group. */
extern volatile sig_atomic_t tool_child;
/* For the signal handler: kill tool_child, remove the tracked folders. */
void undo_for_signal(void);

/* ------------------------------------------------------------ the commands (cmd_*.c) */

int cmd_check(cli *c);
int cmd_lower(cli *c);
int cmd_run(cli *c);
int cmd_emit(cli *c);
int cmd_build(cli *c);
int cmd_demo(cli *c);
int cmd_simulate(cli *c);
int cmd_predict(cli *c);
int cmd_tiles(cli *c);
int cmd_tune(cli *c);
int cmd_auto(cli *c);
/* The kernel of k's file with the schedule and plan `auto` chooses (cmd_auto.c); NULL after
 * printing the error, *rc then the exit code. */
ct_kernel *auto_kernel(ct_ctx *ctx, ct_kernel *k, cli *c, int *rc);
int cmd_cache(cli *c);
int cmd_probe(cli *c);

/* Pieces the demo reuses. */
int print_lowered(ct_ctx *ctx, ct_kernel *k, int json);
int run_kernel(ct_ctx *ctx, ct_kernel *k, cli *c);
void print_sim_text(const ct_kernel *k, const ct_sim_result *r);

#endif
