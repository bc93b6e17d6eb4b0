/* sim.h: the exact cache simulator (stack-distance histogram for fully associative LRU levels,
 * per-set LRU for set-associative ones) that validates the analytical model. */
#ifndef CT_MODEL_SIM_H
#define CT_MODEL_SIM_H

#include "core/core.h"

#include <stddef.h>
#include <stdint.h>

/* More levels than any real hierarchy; keeps the spec a plain value. */
#define SIM_MAX_LEVELS 8

/* Replacement policy of a level (docs/MODEL.md, "Replacement policies"). */
typedef enum sim_policy {
	SIM_LRU = 0,  /* least recently used (the default) */
	SIM_PLRU = 1  /* tree pseudo-LRU: ways - 1 bits a set, ways a power of two */
} sim_policy;

/* Whether a level is one per core or shared by all (predict --threads). */
typedef enum sim_sharing {
	SIM_SHARE_DEFAULT = 0, /* unmarked: every level but the last of the spec is private */
	SIM_SHARE_PRIVATE = 1,
	SIM_SHARE_SHARED = 2
} sim_sharing;

/* One cache level as CLI.md's `--cache SIZE:LINE[:WAYS][:POLICY][:SHARING]` describes it. */
typedef struct sim_level {
	int64_t size; /* bytes, a multiple of line (and of line * ways) */
	int64_t line; /* bytes, a power of two */
	int64_t ways; /* 0 = fully associative */
	int policy;   /* sim_policy */
	int sharing;  /* sim_sharing */
} sim_level;

/* A whole hierarchy. Every level is an independent LRU (or PLRU), write-allocate cache that sees the
 * whole access stream (CLI.md), so levels do not filter each other. A plain value: memset
 * before filling and it compares byte for byte. */
typedef struct sim_spec {
	int nlevels;
	sim_level level[SIM_MAX_LEVELS];
} sim_spec;

/* Parse a `--cache` SPEC: one or more comma-separated levels, each
 * SIZE:LINE[:WAYS][:POLICY][:SHARING]; SIZE and LINE in bytes, optionally with a K, M or G suffix
 * (powers of 1024); WAYS a plain count, 0 or absent for fully associative; POLICY `lru` (the
 * default) or `plru`; SHARING `private` or `shared` (the two words after WAYS in either order).
 * Checks that the line is a power of two, the size a multiple of the line and of line * ways
 * (sets = size / (line * ways), any positive count), a PLRU level's ways a power of two (given,
 * not 0), and at most SIM_MAX_LEVELS levels. On error: CT_ERR_INPUT with a message naming the
 * level, *spec zeroed. */
ct_status sim_spec_parse(ct_ctx *ctx, const char *text, sim_spec *spec);

/* The machine's own caches (target_get) as a spec: a level of unknown associativity, or
 * whose size does not split into whole sets, is fully associative; sizes are capped at 1 GiB.
 * CT_ERR_UNSUPPORTED when no level is known. What a NULL spec means to the commands. */
ct_status sim_machine_spec(ct_ctx *ctx, sim_spec *spec);

/* Check a spec built by hand with the same rules as sim_spec_parse (CT_ERR_INPUT). */
ct_status sim_spec_check(ct_ctx *ctx, const sim_spec *spec);

/* Number of sets of a level: 1 for fully associative ones (ways 0 or ways = size / line). */
int64_t sim_level_sets(const sim_level *l);

/* True when the level's misses are not those of one LRU stack of its lines (the stack
 * distances alone do not decide them): more than one set, or tree-PLRU over more than 2 ways
 * (2-way PLRU is LRU). */
bool sim_level_conflicts(const sim_level *l);

/* True when level l of spec is private to a core: marked so, or unmarked and not the last. */
bool sim_level_private(const sim_spec *spec, int l);

/* The spec as text that sim_spec_parse reads back (policy and sharing only where marked or not
 * the default); buf of n bytes, truncated. Returns buf. */
const char *sim_spec_format(const sim_spec *spec, char *buf, size_t n);

/* One array or cache buffer of the trace: elements of elem_size bytes, laid out densely. */
typedef struct sim_buffer {
	int64_t elem_size;
	int64_t count;
} sim_buffer;

/* CLI.md's address convention: buffer i starts at base[i], the first multiple of align at or
 * after the end of buffer i-1 (buffer 0 at 0), so every buffer begins on its own line when align
 * is the largest line size of the hierarchy (sim_spec_max_line). Returns the total span in bytes,
 * or -1 with CT_ERR_LIMIT on ctx when it overflows int64, CT_ERR_USAGE for an element size
 * below 1, a negative count or an align that is not a power of two. */
int64_t sim_layout(ct_ctx *ctx, const sim_buffer *buf, int nbuf, int64_t align, int64_t *base);

/* Largest line size of the spec (the alignment sim_layout needs); 1 for an empty spec. */
int64_t sim_spec_max_line(const sim_spec *spec);

/* Stack-distance histogram of one line size: count[d] accesses found their line with d distinct
 * other lines touched since its previous access (d = 0: nothing else in between); first touches
 * are cold (infinite distance). Owned by the simulator; valid until its next access. */
typedef struct sim_hist {
	const uint64_t *count;
	int64_t len; /* count[0 .. len-1]; every distance is below len */
	uint64_t cold;
	uint64_t accesses; /* cold + sum of count */
	int64_t line;      /* line size in bytes these distances are measured in */
} sim_hist;

/* Misses of a fully associative LRU cache of `lines` lines: cold + accesses with distance >=
 * lines. One histogram answers every capacity; lines <= 0 misses every access. */
uint64_t sim_misses_for_lines(const sim_hist *h, int64_t lines);

typedef struct sim sim;

/* A simulator for spec (copied) over nbuf buffers (copied; placed by sim_layout with the spec's
 * largest line) and nref reference ids (accesses may carry one in 0..nref-1 for per-reference
 * miss counts). Fully associative levels with the same line size share one stack-distance pass
 * (O(log lines) per access, most accesses O(1)); each set-associative level has its own
 * per-set LRU or tree-PLRU (O(ways) per access, up to 2^27 lines; a PLRU level of one set too). Keeps ctx for its allocations and
 * errors. NULL with the error on ctx. */
sim *sim_new(ct_ctx *ctx, const sim_spec *spec, const sim_buffer *buf, int nbuf, int nref);
/* sim_free(NULL) is a no-op. */
void sim_free(sim *s);

/* Byte address of element offset of buffer (no range check). */
int64_t sim_address(const sim *s, int buffer, int64_t offset);

/* The hot path: one access of element `offset` of `buffer`. is_write only counts writes (a
 * write-allocate LRU treats reads and writes alike). An out-of-range buffer or offset is a
 * sticky CT_ERR_USAGE that sim_result reports; later accesses are then ignored. */
void sim_access(sim *s, int buffer, int64_t offset, int is_write);
/* The same, also counted against reference id ref (0..nref-1; -1 for none). */
void sim_access_ref(sim *s, int ref, int buffer, int64_t offset, int is_write);
/* Adapter with the shape of ct_trace_fn: pass (sim_trace, s) to ct_interp_trace. */
void sim_trace(void *s, int buffer, int64_t offset, int is_write);

/* Batch of n accesses given directly as line numbers in the hierarchy's single line size (a
 * spec with several line sizes is a sticky CT_ERR_USAGE); is_write may be NULL (all reads).
 * Counted under no buffer and no reference. Lines must be below 2^62 / line. */
void sim_access_lines(sim *s, const uint64_t *lines, size_t n, const uint8_t *is_write);

/* Totals so far: misses[l] for each level l of the spec (nlevels entries; may be NULL),
 * accesses and writes (may be NULL). Returns the first error of the run, CT_OK if none. */
ct_status sim_result(const sim *s, uint64_t *misses, uint64_t *accesses, uint64_t *writes);

/* Misses of level `level` caused by accesses to buffer (0..nbuf-1, or -1 for accesses that
 * named no buffer) / carrying reference id ref (0..nref-1, or -1 for none); 0 when out of
 * range. */
uint64_t sim_buffer_misses(const sim *s, int level, int buffer);
uint64_t sim_ref_misses(const sim *s, int level, int ref);

/* The stack-distance histogram serving level `level`; NULL for set-associative levels. Any
 * other fully associative size with the same line size reads from it (sim_misses_for_lines). */
const sim_hist *sim_histogram(sim *s, int level);

/* One access to line in a tree-PLRU set (sim.c and warp.c share it): row holds the set's ways
 * (UINT64_MAX for an empty one), bits its ways - 1 tree bits (bit n for node n, root 1). A hit
 * or a fill of the lowest empty way, else of the way the bits point to; then the bits on that
 * way's path point away from it. True on a hit. */
static inline bool sim_plru_set(uint64_t *row, uint64_t *bits, unsigned ways, uint64_t line)
{
	unsigned w = ways, empty = ways;
	for (unsigned p = 0; p < ways; p++) {
		if (row[p] == line) {
			w = p;
			break;
		}
		if (row[p] == UINT64_MAX && empty == ways)
			empty = p;
	}
	bool hit = w < ways;
	if (!hit) {
		if (empty < ways) {
			w = empty;
		} else {
			unsigned n = 1;
			while (n < ways)
				n = 2 * n + (unsigned)((bits[n >> 6] >> (n & 63)) & 1);
			w = n - ways;
		}
		row[w] = line;
	}
	for (unsigned n = ways + w; n > 1; n >>= 1) {
		unsigned parent = n >> 1;
		uint64_t bit = UINT64_C(1) << (parent & 63);
		/* point away from the child on the path: right (1) after a left child */
		if (n & 1)
			bits[parent >> 6] &= ~bit;
		else
			bits[parent >> 6] |= bit;
	}
	return hit;
}

#endif
