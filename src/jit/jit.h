/* jit.h: compile generated C with the system compiler, load it, and cache it in memory and on disk.
 */
#ifndef CT_JIT_H
#define CT_JIT_H

#include "core/core.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Three files share this header:
 *   compile.c    running programs (posix_spawn, timeout, captured output),
 *                probing a compiler's identity, compiling one source;
 *   codecache.c  the per-ctx state, the key, the module memo, jit_load and
 *                the public ct_module / ct_cache_* functions;
 *   diskcache.c  the on-disk entries: folder checks, lookup, publish,
 *                verify, prune and sweep.
 *
 * The key of a module is the byte string
 *     config text (cachet and format version, compiler identity, resolved
 *     flags, compiler environment) + "source N\n" + the N source bytes;
 * its name is the hex XXH3-128 digest of those bytes. Lookups compare the
 * whole key, never only the digest.
 */

/* 2: a temp starts at zero in the self-test's reference too (run_buffers_alloc
 * filled temps with random values, so kernels reading a temp element before
 * writing it were refused as wrong; format 1 entries keep those verdicts) */
#define JIT_FORMAT_VERSION 2
#define JIT_DIGEST_HEX 33         /* 32 hex digits and a NUL */
#define JIT_DEFAULT_TIMEOUT 300.0 /* seconds a compile may take */
#define JIT_PROBE_TIMEOUT 30.0    /* seconds a compiler probe may take */
#define JIT_DEFAULT_MAX_BYTES ((int64_t)1 << 30)
#define JIT_PRUNE_INTERVAL 60 /* seconds between two automatic prunes */
#define JIT_TOUCH_INTERVAL 60 /* seconds before a hit refreshes an entry's LRU time */
#define JIT_FRONT_SLOTS 16
#define JIT_ORPHAN_AGE 600 /* seconds before a stray temp folder is swept */
#define JIT_LIVE_SLOTS 4    /* compilers and build folders ct_ctx_cancel can undo at once */
#define JIT_LIVE_PATH 4160  /* a build folder's name: the temp folder + "/cachet-build-XXXXXX" */

/* What ct_ctx_cancel undoes from a signal handler: the process groups of
 * the programs running and the build folders that exist. Plain fixed-size
 * data (a handler may neither lock nor allocate): a slot is filled, then
 * marked used; a handler acts on used slots only. */
typedef struct jit_live {
	volatile sig_atomic_t pid[JIT_LIVE_SLOTS];     /* process group leaders, 0 = free */
	volatile sig_atomic_t dir_used[JIT_LIVE_SLOTS]; /* 1: dir[i] names a build folder */
	char dir[JIT_LIVE_SLOTS][JIT_LIVE_PATH];
	volatile sig_atomic_t cancelled;                /* ct_ctx_cancel ran: start nothing more */
} jit_live;

/* One compiler command as resolved in a ctx (probed once, on first use). */
typedef struct jit_compiler {
	char *cmd;    /* the command as given (words split on blanks, no shell) */
	char **words; /* NULL-terminated words of cmd; words[0] is the program as given */
	int nwords;
	char *exe;        /* absolute path that is executed (found on PATH, symlinks kept) */
	char *real;       /* realpath(exe): the compiler's identity */
	char *file;       /* size, mtime and XXH3 of the file at real (file_identity) */
	char *version;    /* output of `cc --version` */
	int version_exit; /* its exit status */
	char *march;      /* what -march=native resolves to (target flags of the driver's -###) */
	struct jit_compiler *next;
} jit_compiler;

/* A compiler plus a flag set: everything in the key except the source. */
typedef struct jit_config {
	jit_compiler *cc;
	int openmp;
	char **extra; /* the caller's extra flags (copies), NULL-terminated */
	int nextra;
	unsigned generation; /* jit_state generation it was built in */
	char *text;          /* canonical key text (ctx allocator) */
	size_t text_len;
	uint64_t seed; /* 64 bits of the digest of text: seeds the memory-table hash */
	struct jit_config *next;
} jit_config;

struct ct_module {
	void *handle; /* from dlopen */
	jit_config *cfg;
	char *src; /* copy of the source (full-key compare on module memo hits) */
	size_t len;
	uint64_t hash; /* memory-table hash */
	char digest[JIT_DIGEST_HEX];
	bool cached;            /* in the module memo (false: loaded with the memo and code cache bypassed) */
	struct ct_module *next; /* every module of the ctx, for ct_ctx_free */
};

/* Counters of one ctx (process-local). */
typedef struct jit_counters {
	int64_t memo_hits, disk_hits, compiles, corrupt, evicted, swept, publish_failed;
} jit_counters;

/* The code-cache state of a ctx, hung at ctx->code_cache. */
typedef struct jit_state {
	ct_ctx *ctx;
	/* environment, read once when the ctx first uses the code cache */
	char *env_cc;  /* $CC or NULL */
	bool no_cache; /* CACHET_NO_CACHE=1 */
	int64_t max_bytes;
	/* settings */
	char *cc_override;   /* ct_ctx_set_compiler */
	char *dir_override;  /* ct_cache_set_dir */
	const char *version; /* cachet version in the key (tests may change it) */
	char *version_copy;
	unsigned generation; /* bumped when the key recipe changes (version) */
	ct_warn_fn warn;
	void *warn_ud;
	/* probed compilers and configs */
	jit_compiler *compilers;
	jit_config *configs;
	/* module memo: open addressing, power-of-two capacity */
	ct_module **table;
	size_t table_cap, table_used;
	ct_module *modules;
	/* front table: the last module hit per (length, config) slot; a hit
	 * there costs one memcmp of the source and no hashing */
	ct_module *front[JIT_FRONT_SLOTS];
	/* disk */
	bool disk_checked; /* the folder was checked (disk_ok says how it went) */
	bool disk_ok;
	char disk_why[512]; /* why the folder is not used, when it is not */
	char *root;         /* the cache folder as configured (for ct_cache_path) */
	char *code_dir;     /* root/code-v1: the entries' shard folders live here */
	char *tmp_dir;      /* where builds happen ($TMPDIR or /tmp) */
	unsigned trash_seq;
	unsigned char *scratch; /* read buffer for checksums */
	size_t scratch_cap;
	jit_counters n;
	jit_live live; /* for ct_ctx_cancel */
} jit_state;

/* dlopen flags for a module built under cfg. OpenMP modules stay mapped
 * (RTLD_NODELETE): unloading them could unload the OpenMP runtime under its
 * own idle pool threads. */
static inline int jit_dlopen_flags(const jit_config *cfg)
{
	return RTLD_NOW | RTLD_LOCAL | (cfg->openmp ? RTLD_NODELETE : 0);
}

/* ------------------------------------------------------------ codecache.c */

/* Compile-and-load src (len bytes) with options o (NULL = defaults), or
 * fetch it from the memory or disk cache. On success *out is the module
 * (owned by ctx, valid until ct_ctx_free), *how (if how) is "memory", "disk"
 * or "compiled", and *seconds (if seconds) the wall time of this lookup.
 * CT_ERR_COMPILE with the compiler's message (and the kept source as the
 * error's file) when the source does not compile or load. */
ct_status jit_load(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o,
                   ct_module **out, const char **how, double *seconds);
/* The code-cache state of ctx, created on first use (NULL on out-of-memory). */
jit_state *jit_state_get(ct_ctx *ctx);
/* Fill hex with the key digest src would have under o, and *text (if text)
 * with a malloc'd copy of the full key (free() it). Probes the compiler. */
ct_status jit_key(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o,
                  char hex[JIT_DIGEST_HEX], char **text);
/* Forget the module of src under o in ctx's module memo and remove its disk
 * entry, so the next jit_load compiles it again (a run of it failed
 * verification: a compiler that miscompiled must not be trusted twice).
 * Modules already loaded stay mapped. */
ct_status jit_evict(ct_ctx *ctx, const char *src, size_t len, const ct_compile_options *o);
/* The compiler options o name, as "'cmd' (first line of its --version)",
 * into buf (cap bytes), for messages that suspect the compiler. */
void jit_compiler_line(ct_ctx *ctx, const ct_compile_options *o, char *buf, size_t cap);
/* The verdict kept with the module named digest on disk (a short text:
 * the check before first use, engine/selftest.c), read into buf (cap
 * bytes): false when there is none (no entry, no verdict, the disk cache
 * off). put writes it next to the entry's kernel.so (atomically; best
 * effort: nothing without an entry). It lives and goes with the entry. */
bool jit_verdict_get(ct_ctx *ctx, const char *digest, char *buf, size_t cap);
void jit_verdict_put(ct_ctx *ctx, const char *digest, const char *text);
/* Use version v instead of CACHET_VERSION in keys (tests of key sensitivity). */
ct_status jit_set_version(ct_ctx *ctx, const char *v);
/* Drop the module memo and unload every module (benchmarks: forces the next
 * lookup to the disk). Symbols taken from the modules become invalid. */
void jit_forget_memo(ct_ctx *ctx);
/* Report a warning through the ctx's handler (default: stderr). */
void jit_warn(jit_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* jit_warn through ctx's code-cache state (for warnings of other modules). */
void jit_warn_ctx(ct_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ compile.c */

/* Result of running one program. */
typedef struct jit_proc {
	char *out;      /* stdout and stderr together, NUL-terminated (ctx allocator) */
	size_t out_len; /* bytes kept (at most the limit given) */
	int exit_code;  /* exit status, 128+signal when killed, -1 when unknown */
	bool timed_out;
} jit_proc;

/* Run exe with argv (NULL-terminated; argv[0] as the program sees it) in
 * folder cwd (NULL = inherit), stdin from /dev/null, stdout and stderr
 * captured (first keep bytes kept), in its own process group that is killed
 * when timeout seconds pass. No shell is involved. CT_ERR_IO when the
 * program could not be started; a failing program is CT_OK with its
 * exit_code set. */
ct_status jit_run(ct_ctx *ctx, const char *exe, char *const argv[], const char *cwd, double timeout,
                  size_t keep, jit_proc *res);
void jit_proc_free(ct_ctx *ctx, jit_proc *res);

/* The compiler record for command cmd, probing it (path, --version,
 * -march=native) on first use in this ctx. */
jit_compiler *jit_compiler_get(jit_state *st, const char *cmd);
void jit_compiler_free(jit_state *st, jit_compiler *c);

/* The native compile policy, the optimization flags of every build of
 * generated code (modules and `cachet build` packages): -O3 -march=native,
 * and for GCC -fno-tree-slp-vectorize (docs/LIBRARY.md, "The compile
 * policy"). Writes at most JIT_POLICY_MAX flags (static strings) to out;
 * returns their count. They are in the code cache's key (jit_command). */
#define JIT_POLICY_MAX 4
int jit_policy_flags(const jit_compiler *cc, const char **out);
/* Whether cc is clang (its --version says so); else GCC-like. */
bool jit_compiler_is_clang(const jit_compiler *cc);
/* The fallback flags of a kernel whose code under the policy failed its
 * check before first use: no auto-vectorization at all (the compiler's
 * vectorizers are where the known miscompiles are). */
#define JIT_FALLBACK_FLAG "-fno-tree-vectorize"

/* The command line of a build under cfg into argv (cap entries): compiler
 * words, the policy flags, -fPIC -shared [-fopenmp], -o so, src, the extra
 * flags, -lm, NULL. Returns the count (NULL excluded), -1 if cap is short.
 * The key lists this same command (with placeholders for so and src). */
int jit_command(const jit_config *cfg, const char *so, const char *src, const char **argv, int cap);

/* Compile src under cfg into a shared object in a fresh private folder
 * (mode 0700) under st->tmp_dir. On success *dir and *so are the folder and
 * the object's path (ctx allocator; the caller removes them with
 * jit_build_remove). On failure the source is kept, its path is given in
 * the CT_ERR_COMPILE error, and nothing is returned. */
ct_status jit_compile(jit_state *st, const jit_config *cfg, const char *src, size_t len,
                      const char *digest, double timeout, char **dir, char **so);
/* Stop tracking build folder dir for ct_ctx_cancel (a failed build keeps
 * it for the user). */
void jit_build_forget(jit_state *st, const char *dir);
/* Remove a build folder made by jit_compile (the object, the source next to
 * it, then the folder); frees dir and so. */
void jit_build_remove(jit_state *st, char *dir, char *so);

/* snprintf into buf (cap bytes); false when the result does not fit (a cut
 * path must never name another file). */
bool jit_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Read the whole file at path (at most max bytes) into a ctx allocation. */
ct_status jit_read_file(ct_ctx *ctx, const char *path, size_t max, unsigned char **data,
                        size_t *len);
/* Write all of data to fd (retrying short writes). */
bool jit_write_all(int fd, const void *data, size_t len);

/* ------------------------------------------------------------ diskcache.c */

/* The folder policy of every file cachet reads back (compiled code, OpenCL
 * binaries, tuning stores), at every level below the cache folder: a
 * folder (dir) or regular file (!dir) owned by this process's effective
 * user and writable by nobody else. false with why filled otherwise. */
bool jit_stat_safe(const struct stat *sb, bool dir, const char *path, char *why, size_t cap);
/* jit_stat_safe of path (lstat, or stat when follow). */
bool jit_path_safe(const char *path, bool dir, bool follow, char *why, size_t cap);

/* Check (once per ctx) the cache folder: create it (mode 0700), refuse it
 * with a warning when owned by another user or writable by group/others.
 * Returns st->disk_ok. */
bool jit_disk_ready(jit_state *st);
/* Look up the entry named digest whose key is cfg->text + the source
 * section. true and *handle set on a verified hit; a corrupt or mismatched
 * entry is counted, reported as a warning, removed, and false returned. */
bool jit_disk_lookup(jit_state *st, const jit_config *cfg, const char *src, size_t len,
                     const char *digest, void **handle);
/* Publish so_bytes under digest with the full key (atomically: a whole
 * folder renamed into place). Failures are warnings: the cache is optional. */
void jit_disk_publish(jit_state *st, const jit_config *cfg, const char *src, size_t len,
                      const char *digest, const unsigned char *so_bytes, size_t so_len);
/* The verdict file of the entry named digest (jit_verdict_get/put). */
bool jit_disk_verdict_get(jit_state *st, const char *digest, char *buf, size_t cap);
void jit_disk_verdict_put(jit_state *st, const char *digest, const char *text);
/* Remove the entry named digest, if there is one (a module whose results
 * proved wrong: it must not be loaded again). */
void jit_disk_remove(jit_state *st, const char *digest);
/* Prune least-recently-used entries when over the cap and sweep orphan
 * temp folders; force = ignore the debounce interval. */
void jit_disk_prune(jit_state *st, bool force);
/* Totals of the disk cache (entries, bytes). */
void jit_disk_totals(jit_state *st, int64_t *entries, int64_t *bytes);
/* Check every entry's key and checksum; remove bad ones; *bad their count. */
ct_status jit_disk_verify(jit_state *st, int64_t *bad);
/* Remove every entry. */
ct_status jit_disk_clear(jit_state *st);

/* ------------------------------------------------------------ blobcache.c */

/* Opaque byte blobs (OpenCL program binaries) kept in the cache folder
 * under the whole key: get gives a malloc'd copy (CT_OK with *data NULL on
 * a miss, or when the cache is off); put is best effort (a failure is a
 * warning, never an error). */
ct_status jit_blob_get(ct_ctx *ctx, const char *key, size_t klen, void **data, size_t *n);
void jit_blob_put(ct_ctx *ctx, const char *key, size_t klen, const void *data, size_t n);
/* Report key's entry as bad (why: a short reason; the device refused it),
 * count it as corrupt and remove it, so the caller rebuilds. */
void jit_blob_drop(ct_ctx *ctx, const char *key, size_t klen, const char *why);

/* ------------------------------------------------------------ cachedirs.c */

#define JIT_CACHE_FOLDERS 4
/* Totals of every folder cachet writes in st->root (ct_cache_folders). */
int jit_cache_folders(jit_state *st, ct_cache_folder *out, int cap);
/* Remove the OpenCL binaries and PoCL's cache folder's contents (names of
 * their shapes only; young temp files are another process's writes). */
ct_status jit_cache_clear_others(jit_state *st);

#endif
