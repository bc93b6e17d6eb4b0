/* tune.h: internal interface of src/tune: the store, the tuner and the selector. */
#ifndef CT_TUNE_H
#define CT_TUNE_H

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Version of the store's file format (tables, columns, checksum bytes). A file
 * with another format version is set aside, not migrated. */
#define TUNE_STORE_FORMAT 1
/* The most points a tuning space may have (their product of tune lists);
 * auto writes its tune lists within it and within CT_SELECT_MAX_PARAMS. */
#define TUNE_MAX_SPACE 1000000
/* Written into the meta table so that a stranger's SQLite file is recognised. */
#define TUNE_STORE_MAGIC "cachet-tune-store"

/* The cachet cache folder: $CACHET_CACHE_DIR, else $XDG_CACHE_HOME/cachet,
 * else ~/.cache/cachet. Returns a ctx-allocated string, NULL (CT_ERR_IO on ctx)
 * when no home folder is known. */
CT_INTERN char *tune_cache_dir(ct_ctx *ctx);

/* How to open a store. The identity fields let tests and tools open a store
 * as another device or another cachet version would; NULL means this
 * process's own (target_get and CACHET_VERSION). */
typedef struct tune_store_cfg {
	const char *dir;            /* NULL: tune_cache_dir */
	unsigned flags;             /* CT_STORE_* */
	const char *param_names;    /* the tuner's parameter-name list; NULL: not checked */
	const char *device_id;      /* names the file <dir>/<device_id>.sqlite */
	const char *identity;       /* full identity kept in the meta table */
	const char *cachet_version; /* written into records; others' records are stale */
} tune_store_cfg;

/* ct_store_open with every knob (see ct_store_open for the behaviour). */
CT_INTERN ct_store *tune_store_open(ct_ctx *ctx, const tune_store_cfg *cfg);

/* XXH3-64 of the canonical bytes of r's stored fields (family, dtype,
 * size class, params, seconds, gflops, verified, tuner and cachet versions,
 * timestamp); cachet_version is passed apart because put takes it from the
 * store, not from r. The trusted flag is not covered: it is derived. */
CT_INTERN uint64_t tune_record_checksum(const ct_tune_record *r, const char *cachet_version);

/* ct_store_put that marks the record stale (stale != 0): the selector uses it
 * as nearest at best (imports from another device or cachet version). */
CT_INTERN ct_status tune_store_put_stale(ct_store *s, const ct_tune_record *r, int stale, int *stored);
/* A machine fact measured once and kept (the meta table's "fact.*" keys, such as
 * "fact.llc_usable"): a later run reads it instead of measuring again, so that what is
 * chosen from it stays the same. Facts go when the device identity changes. get copies
 * the value into out and returns 1, or returns 0 (none, no store, or key not "fact.*");
 * put keeps nothing where the store cannot be written (CT_OK). */
CT_INTERN int tune_store_fact_get(ct_store *s, const char *key, char *out, size_t n);
CT_INTERN ct_status tune_store_fact_put(ct_store *s, const char *key, const char *value);
/* One point the tuner measured (the store's points table): a rerun of the
 * same sizes resumes from these instead of measuring them again. */
typedef struct tune_point {
	const char *params; /* "TI=64:TJ=32" */
	double seconds, gflops;
	int verified;  /* 1, 0 (wrong), -1 (did not build or run) */
	int abandoned; /* 1: seconds is its first run only (docs/TUNE.md) */
} tune_point;
/* Keep p for (family, dtype, size_class); a store that cannot be written keeps nothing (CT_OK). */
CT_INTERN ct_status tune_points_put(ct_store *s, const char *family, ct_dtype dtype, const char *size_class,
				    const char *tuner_version, const tune_point *p);
/* Call fn for each point of (family, dtype, size_class) written by this
 * cachet version and tuner_version into a store of this device identity;
 * returns how many. p's strings live until fn returns. */
CT_INTERN int tune_points_each(ct_store *s, const char *family, ct_dtype dtype, const char *size_class,
			       const char *tuner_version, void (*fn)(void *ud, const tune_point *p), void *ud);

/* ------------------------------------------------------------ tuner (tuner.c) and selector (select.c) */
struct ct_kernel;
/* A size param: compile-time, neither tunable nor derived; or runtime with a value. */
CT_INTERN bool tune_is_size_param(const struct ct_kernel *k, int i);
/* The type the store files k under: its first output/inout array's. */
CT_INTERN ct_dtype tune_kernel_dtype(const struct ct_kernel *k);
/* The family key of k (see ct_kernel_tune_key) into out. */
CT_INTERN ct_status tune_family(struct ct_kernel *k, char *out, size_t n);
/* "M=256:N=256" from sizes[] (the size params in order; NULL = k's values). */
CT_INTERN void tune_size_class(const struct ct_kernel *k, const int64_t *sizes, char *out, size_t n);
/* Set params ids[0..n-1] to values and re-check k. */
CT_INTERN ct_status tune_apply(struct ct_kernel *k, const int *ids, const int64_t *values, int n);
/* Cost in ns of one miss of each of nlevels levels (docs/TUNE.md). */
CT_INTERN void tune_weights(ct_ctx *ctx, int nlevels, double *w);
/* "TI=64:TJ=128" for params ids[0..n-1] with values v. */
CT_INTERN void tune_params_text(const struct ct_kernel *k, const int *ids, const int64_t *v, int n,
				char *out, size_t cap);
/* The model's best values of params ids[0..nt-1] for k's current sizes: every point of
 * their space ranked (at most max_evals of them, evenly spread); k is left with
 * them applied. Within about a second (TUNE_SELECT_MODEL_SECONDS): when the ranking
 * cannot count every point's misses in that time, the values k has (the file's) are
 * kept. CT_ERR_INPUT when no point is valid. */
CT_INTERN ct_status tune_model_best(struct ct_kernel *k, const int *ids, int nt, int max_evals,
				    int64_t *best);
/* decide.c: whether the tuner's best candidate replaces the default (hand-written)
 * point, from n rounds of interleaved timings td[i] (default) and tb[i] (the
 * candidate) in seconds; a round where either is <= 0 (did not run) is left
 * out. The candidate wins only if, over at least TUNE_DECIDE_MIN_ROUNDS
 * rounds, the median of the per-round ratios td/tb exceeds 1 by more than
 * the measured spread (the median absolute deviation of those ratios) and by
 * more than TUNE_DECIDE_MIN_GAIN; otherwise the default is kept. */
#define TUNE_DECIDE_MIN_ROUNDS 3
#define TUNE_DECIDE_MIN_GAIN 0.01
typedef struct tune_verdict {
	int rounds;          /* rounds where both ran */
	double default_s;    /* median of the default's times */
	double best_s;       /* median of the candidate's times */
	double gain;         /* median(td/tb) - 1: > 0 when the candidate is faster */
	double spread;       /* median |td/tb - median(td/tb)| */
	int keep_default;    /* 1: the default stays */
} tune_verdict;
CT_INTERN void tune_decide(const double *td, const double *tb, int n, tune_verdict *v);
#endif
