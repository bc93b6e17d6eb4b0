/* sim.c: exact LRU and tree-PLRU cache simulation: one stack-distance pass per line size serves
 * every fully associative LRU level, a move-to-front row per set each set-associative LRU level,
 * a row of ways and a bit tree per set each PLRU level. */
#include "model/sim.h"

#include <stdio.h>
#include <string.h>

/* The SD_TOP most recently used distinct lines live in a small move-to-front array: their stack
 * distance is their position, found without hashing or counting, and most accesses of a loop
 * nest land there. Lines leave it in LRU order, so stamping them with increasing numbers as
 * they leave orders the other lines exactly like the LRU stack below the array. */
#define SD_TOP 16
#define SD_COLD INT64_MAX     /* distance of a first touch */
#define EMPTY_LINE UINT64_MAX /* no line: line numbers stay below 2^63 */
#define IN_TOP UINT32_MAX     /* stamp of a line that sits in the top array */
#define HASH_MIN_BITS 12
#define SD_PREFETCH 16   /* accesses of a batch to look ahead */
#define STAMPS_MIN 4096u /* a multiple of 64 */
/* Stamps, slot numbers and counts are 32-bit to keep the hot tables small: with at most 2^29
 * lines there are fewer than 2^31 slots (load >= 1/4) and stamps (tcap <= 4 * live). */
#define SD_MAX_LINES (UINT64_C(1) << 29)
/* Set-associative levels keep one tag per line. */
#define SA_MAX_LINES (INT64_C(1) << 27)
/* Numbers in a spec: generous, and line * ways products never overflow. */
#define SPEC_MAX_NUM (INT64_C(1) << 48)

/* A hash slot: the line and its stamp side by side, so a probe costs one cache miss. */
typedef struct sd_slot {
	uint64_t line;  /* EMPTY_LINE if free */
	uint32_t stamp; /* stamp, or IN_TOP */
} sd_slot;

/* One stack-distance pass over the lines of one size. The LRU stack is top[0..ntop-1] followed
 * by the stamped lines, newest stamp first; a line's distance is its depth in that stack. */
typedef struct sd_engine {
	uint64_t top[SD_TOP];      /* most recent first; EMPTY_LINE past ntop */
	uint32_t top_slot[SD_TOP]; /* their hash slots */
	int ntop;
	int shift; /* log2 of the line size */
	/* Open-addressing hash (linear probing, no deletions): line -> stamp or IN_TOP. */
	sd_slot *slots;
	unsigned hbits;
	uint64_t nlines; /* distinct lines seen */
	/* The stamps in use, out of 0..tcap-1: a bitmap, and a Fenwick tree that counts them per
	 * block of 64 stamps (64 times smaller than one over single stamps, so that it stays in
	 * the host's cache). Stamps are handed out upwards from clock; when they run out,
	 * compaction renumbers the live ones 0..live-1. */
	uint64_t *used; /* tcap / 64 words */
	uint32_t *blk;  /* blk[1..tcap / 64], 1-based */
	uint32_t tcap, clock, live;
	uint64_t *hist; /* hist[d], d < hist_cap; hist_cap >= nlines bounds every distance */
	uint64_t hist_cap;
	uint64_t cold;
	/* The fully associative levels this pass serves, with their capacities in lines. */
	int nlev;
	int lev[SIM_MAX_LEVELS];
	int64_t cap[SIM_MAX_LEVELS];
	int64_t min_cap;
	sim_hist view;
} sd_engine;

/* One set-associative level: sets rows of ways tags, EMPTY_LINE if unused; LRU keeps a row
 * most recent first, tree-PLRU keeps each line in its way and nbw words of tree bits a set. */
typedef struct sa_cache {
	uint64_t *tags;
	uint64_t *bits; /* PLRU: [sets * nbw], node n (1..ways-1) of a set at bit n */
	uint64_t sets, set_mask;
	bool pow2, plru;
	int ways, shift, lev, nbw;
} sa_cache;

struct sim {
	ct_ctx *ctx;
	ct_status err; /* sticky first error */
	sim_spec spec;
	int nbuf, nref;
	int64_t *base, *esize, *count;
	int nsd, nsa;
	sd_engine sd[SIM_MAX_LEVELS];
	sa_cache sa[SIM_MAX_LEVELS];
	int line_shift; /* the one line size's log2, -1 when levels differ */
	uint64_t accesses, writes;
	uint64_t misses[SIM_MAX_LEVELS];
	uint64_t *buf_miss; /* [level][nbuf + 1]; column nbuf: no buffer */
	uint64_t *ref_miss; /* [level][nref + 1]; column nref: no reference */
};

/* log2 of a power of two. */
static int log2_exact(int64_t v)
{
	int s = 0;
	while ((INT64_C(1) << s) < v)
		s++;
	return s;
}

/* True for 1, 2, 4, ...; false for 0 and negatives. */
static bool is_pow2(int64_t v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

/* ------------------------------------------------------------ spec */

int64_t sim_level_sets(const sim_level *l)
{
	if (l->ways <= 0 || l->line <= 0)
		return 1;
	return l->size / (l->line * l->ways);
}

bool sim_level_conflicts(const sim_level *l)
{
	return (l->ways > 0 && sim_level_sets(l) > 1) || (l->policy == SIM_PLRU && l->ways > 2);
}

bool sim_level_private(const sim_spec *spec, int l)
{
	int sh = spec->level[l].sharing;
	return sh == SIM_SHARE_PRIVATE || (sh == SIM_SHARE_DEFAULT && l < spec->nlevels - 1);
}

const char *sim_spec_format(const sim_spec *spec, char *buf, size_t n)
{
	size_t used = 0;
	if (n)
		buf[0] = 0;
	for (int i = 0; i < spec->nlevels && used < n; i++) {
		const sim_level *l = &spec->level[i];
		int w = snprintf(buf + used, n - used, "%s%lld:%lld:%lld%s%s", i ? "," : "",
		                 (long long)l->size, (long long)l->line, (long long)l->ways,
		                 l->policy == SIM_PLRU ? ":plru" : "",
		                 l->sharing == SIM_SHARE_PRIVATE  ? ":private"
		                 : l->sharing == SIM_SHARE_SHARED ? ":shared"
		                                                  : "");
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

int64_t sim_spec_max_line(const sim_spec *spec)
{
	int64_t m = 1;
	for (int i = 0; i < spec->nlevels; i++)
		if (spec->level[i].line > m)
			m = spec->level[i].line;
	return m;
}

/* The checks shared by the parser and hand-built specs; what names the spec in messages. */
static ct_status check_level(ct_ctx *ctx, const char *what, int i, const sim_level *l)
{
	long long size = l->size, line = l->line, ways = l->ways;
	if (size <= 0 || size > SPEC_MAX_NUM)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: size %lld is not in 1..2^48 bytes", what, i + 1,
		                size);
	if (line <= 0 || line > SPEC_MAX_NUM)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: line size %lld is not in 1..2^48 bytes", what, i + 1,
		                line);
	if (!is_pow2(line))
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: line size %lld is not a power of two", what, i + 1,
		                line);
	if (size % line)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: size %lld is not a multiple of the line size %lld",
		                what, i + 1, size, line);
	if (ways < 0)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: ways %lld must be 0 (fully associative) or positive",
		                what, i + 1, ways);
	if (ways > size / line)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: %lld ways exceed the %lld lines of the level", what,
		                i + 1, ways, size / line);
	if (l->policy != SIM_LRU && l->policy != SIM_PLRU)
		return ct_error(ctx, CT_ERR_INPUT, "%s: level %d: unknown replacement policy %d", what,
		                i + 1, l->policy);
	if (l->sharing < SIM_SHARE_DEFAULT || l->sharing > SIM_SHARE_SHARED)
		return ct_error(ctx, CT_ERR_INPUT, "%s: level %d: unknown sharing %d", what, i + 1,
		                l->sharing);
	if (l->policy == SIM_PLRU && !is_pow2(ways))
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: a tree-PLRU level needs a power-of-two number of ways "
		                "(its tree of ways - 1 bits), not %lld",
		                what, i + 1, ways);
	if (ways > 0 && size % (line * ways))
		return ct_error(
		    ctx, CT_ERR_INPUT,
		    "%s: level %d: size %lld is not a multiple of line * ways = %lld, so "
		    "the sets would not be whole",
		    what, i + 1, size, line * ways);
	return CT_OK;
}

ct_status sim_spec_check(ct_ctx *ctx, const sim_spec *spec)
{
	if (spec->nlevels < 1 || spec->nlevels > SIM_MAX_LEVELS)
		return ct_error(ctx, CT_ERR_INPUT, "cache spec: %d levels, expected 1 to %d",
		                spec->nlevels, SIM_MAX_LEVELS);
	for (int i = 0; i < spec->nlevels; i++) {
		ct_status st = check_level(ctx, "cache spec", i, &spec->level[i]);
		if (st)
			return st;
	}
	return CT_OK;
}

/* p advanced past blanks (a spec typed with spaces after commas still parses). */
static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Read a decimal number (with a K/M/G suffix when suffix) at *pp; false if there is none or it
 * exceeds SPEC_MAX_NUM. Advances *pp past it and trailing blanks. */
static bool parse_num(const char **pp, bool suffix, int64_t *out)
{
	const char *p = skip_spaces(*pp);
	if (*p < '0' || *p > '9')
		return false;
	int64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > SPEC_MAX_NUM)
			return false;
	}
	if (suffix) {
		int sh = 0;
		switch (*p) {
		case 'K':
		case 'k':
			sh = 10;
			break;
		case 'M':
		case 'm':
			sh = 20;
			break;
		case 'G':
		case 'g':
			sh = 30;
			break;
		default:
			break;
		}
		if (sh) {
			if (v > (SPEC_MAX_NUM >> sh))
				return false;
			v <<= sh;
			p++;
		}
	}
	*pp = skip_spaces(p);
	*out = v;
	return true;
}

/* One `:WORD` after a level's numbers at *pp (at the ':'): a policy or a sharing, each at most
 * once (*seen: bit 0 a policy was given, bit 1 a sharing). Advances *pp past it and blanks. */
static ct_status parse_attr(ct_ctx *ctx, const char *what, int i, const char **pp, sim_level *l,
                            unsigned *seen)
{
	const char *p = skip_spaces(*pp + 1), *w = p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
		p++;
	size_t n = (size_t)(p - w);
	unsigned bit = 0;
	if (n == 3 && strncmp(w, "lru", 3) == 0)
		bit = 1, l->policy = SIM_LRU;
	else if (n == 4 && strncmp(w, "plru", 4) == 0)
		bit = 1, l->policy = SIM_PLRU;
	else if (n == 7 && strncmp(w, "private", 7) == 0)
		bit = 2, l->sharing = SIM_SHARE_PRIVATE;
	else if (n == 6 && strncmp(w, "shared", 6) == 0)
		bit = 2, l->sharing = SIM_SHARE_SHARED;
	if (!bit)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: level %d: expected lru, plru, private or shared after ':' at "
		                "'%.16s' (SIZE:LINE[:WAYS][:lru|:plru][:private|:shared])",
		                what, i + 1, w);
	if (*seen & bit)
		return ct_error(ctx, CT_ERR_INPUT, "%s: level %d: %s given twice at '%.16s'", what,
		                i + 1, bit == 1 ? "a replacement policy" : "private/shared", w);
	*seen |= bit;
	*pp = skip_spaces(p);
	return CT_OK;
}

ct_status sim_spec_parse(ct_ctx *ctx, const char *text, sim_spec *spec)
{
	char what[96];
	memset(spec, 0, sizeof *spec);
	if (!text)
		text = "";
	snprintf(what, sizeof what, "cache spec '%.64s%s'", text, strlen(text) > 64 ? "..." : "");
	const char *p = skip_spaces(text);
	if (!*p)
		return ct_error(ctx, CT_ERR_INPUT,
		                "%s: empty; expected SIZE:LINE[:WAYS][:POLICY][:SHARING] levels such "
		                "as 32K:64,1M:64",
		                what);
	sim_spec out;
	memset(&out, 0, sizeof out);
	for (;;) {
		int i = out.nlevels;
		if (i == SIM_MAX_LEVELS)
			return ct_error(ctx, CT_ERR_INPUT, "%s: more than %d levels", what,
			                SIM_MAX_LEVELS);
		sim_level *l = &out.level[i];
		if (!parse_num(&p, true, &l->size))
			return ct_error(
			    ctx, CT_ERR_INPUT,
			    "%s: level %d: expected a size such as 32768, 32K or 1M (at "
			    "most 2^48) at '%.16s'",
			    what, i + 1, p);
		if (*p != ':')
			return ct_error(ctx, CT_ERR_INPUT,
			                "%s: level %d: expected ':' and a line size after the size "
			                "(SIZE:LINE[:WAYS][:POLICY][:SHARING]) at '%.16s'",
			                what, i + 1, p);
		p++;
		if (!parse_num(&p, true, &l->line))
			return ct_error(
			    ctx, CT_ERR_INPUT,
			    "%s: level %d: expected a line size in bytes such as 64 at '%.16s'",
			    what, i + 1, p);
		if (*p == ':' && skip_spaces(p + 1)[0] >= '0' && skip_spaces(p + 1)[0] <= '9') {
			p++;
			if (!parse_num(&p, false, &l->ways))
				return ct_error(
				    ctx, CT_ERR_INPUT,
				    "%s: level %d: expected a number of ways (0 = fully "
				    "associative) at '%.16s'",
				    what, i + 1, p);
		}
		unsigned seen = 0;
		while (*p == ':') {
			ct_status st = parse_attr(ctx, what, i, &p, l, &seen);
			if (st)
				return st;
		}
		out.nlevels++;
		ct_status st = check_level(ctx, what, i, l);
		if (st)
			return st;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p)
			return ct_error(
			    ctx, CT_ERR_INPUT,
			    "%s: level %d: unexpected '%.16s' (levels are separated by ',')", what,
			    i + 1, p);
		break;
	}
	*spec = out;
	return CT_OK;
}

/* ------------------------------------------------------------ layout */

int64_t sim_layout(ct_ctx *ctx, const sim_buffer *buf, int nbuf, int64_t align, int64_t *base)
{
	if (!is_pow2(align)) {
		ct_error(ctx, CT_ERR_USAGE, "buffer alignment %lld is not a power of two",
		         (long long)align);
		return -1;
	}
	int64_t end = 0;
	for (int i = 0; i < nbuf; i++) {
		int64_t bytes, start;
		if (buf[i].elem_size <= 0 || buf[i].count < 0) {
			ct_error(ctx, CT_ERR_USAGE, "buffer %d: element size %lld, count %lld", i,
			         (long long)buf[i].elem_size, (long long)buf[i].count);
			return -1;
		}
		if (!ct_add_ok(end, align - 1, &start) ||
		    !ct_mul_ok(buf[i].elem_size, buf[i].count, &bytes))
			goto overflow;
		start &= ~(align - 1);
		if (!ct_add_ok(start, bytes, &end))
			goto overflow;
		base[i] = start;
	}
	return end;
overflow:
	ct_error(ctx, CT_ERR_LIMIT, "buffers span more than 2^63 bytes");
	return -1;
}

/* ------------------------------------------------------------ stack distances */

/* The slot where a probe for line starts, in a table of 2^bits slots (bits >= 2). */
static inline uint64_t hash_home(uint64_t line, unsigned bits)
{
	/* Groups of 4 neighbouring lines share one 64-byte run of slots (a sweep then misses
	 * once per group), and the groups are scattered by a multiplicative hash (so that
	 * power-of-two strides do not pile up in a few sets of the host's cache). */
	uint64_t group = ((line >> 2) * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits + 2);
	return group << 2 | (line & 3);
}

/* Slot of line, or of the empty slot where it belongs. */
static inline uint64_t hash_probe(const sd_engine *g, uint64_t line)
{
	uint64_t mask = (UINT64_C(1) << g->hbits) - 1;
	uint64_t i = hash_home(line, g->hbits);
	while (g->slots[i].line != line && g->slots[i].line != EMPTY_LINE)
		i = (i + 1) & mask;
	return i;
}

/* Bits set in w (without relying on a popcount instruction in the baseline ISA). */
static inline uint32_t popcount64(uint64_t w)
{
	w -= (w >> 1) & UINT64_C(0x5555555555555555);
	w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
	w = (w + (w >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
	return (uint32_t)((w * UINT64_C(0x0101010101010101)) >> 56);
}

/* Stamps in use that are <= t. */
static inline uint32_t stamps_upto(const sd_engine *g, uint32_t t)
{
	uint32_t b = t >> 6, sum = 0;
	for (uint32_t i = b; i; i &= i - 1)
		sum += g->blk[i];
	return sum + popcount64(g->used[b] & (~UINT64_C(0) >> (63 - (t & 63))));
}

/* Mark stamp t used (on) or free. */
static inline void stamps_set(sd_engine *g, uint32_t t, bool on)
{
	uint64_t bit = UINT64_C(1) << (t & 63);
	uint32_t delta = on ? 1 : UINT32_MAX; /* mod 2^32 */
	if (on)
		g->used[t >> 6] |= bit;
	else
		g->used[t >> 6] &= ~bit;
	for (uint32_t i = (t >> 6) + 1, n = g->tcap >> 6; i <= n; i += i & -i)
		g->blk[i] += delta;
}

/* Make st the simulator's sticky error (unless one is set); false, for `return sd_fail()`. */
static bool sd_fail(sim *s, ct_status st)
{
	if (!s->err)
		s->err = st;
	return false;
}

/* Double the hash table; slots move, so top_slot[] is redone. */
static bool sd_hash_grow(sim *s, sd_engine *g)
{
	unsigned bits = g->hbits + 1;
	size_t n = (size_t)1 << bits;
	/* not zeroed: every slot is set below */
	sd_slot *slots = ct_realloc(s->ctx, NULL, n * sizeof *slots);
	if (!slots)
		return sd_fail(s, CT_ERR_NOMEM);
	for (size_t i = 0; i < n; i++)
		slots[i].line = EMPTY_LINE;
	sd_slot *old = g->slots;
	size_t old_n = (size_t)1 << g->hbits;
	g->slots = slots;
	g->hbits = bits;
	for (size_t i = 0; i < old_n; i++) {
		if (old[i].line == EMPTY_LINE)
			continue;
		uint64_t j = hash_probe(g, old[i].line);
		slots[j] = old[i];
	}
	/* top[0] may be the line being inserted; the caller sets its slot afterwards */
	for (int i = 0; i < g->ntop; i++)
		g->top_slot[i] = (uint32_t)hash_probe(g, g->top[i]);
	ct_free(s->ctx, old);
	return true;
}

/* Renumber the live stamps 0..live-1 in order, growing the stamp range to at least 4 * live
 * so that compaction (a scan of the hash table) comes at most once every 3 * live stamps. */
static bool sd_compact(sim *s, sd_engine *g)
{
	/* A stamp's new number is its rank: the stamps used in the blocks before its own (kept
	 * in blk[0..nblk-1] for the scan; the tree is rebuilt below) plus those below it. */
	uint32_t nblk = g->tcap >> 6, run = 0;
	for (uint32_t b = 0; b < nblk; b++) {
		g->blk[b] = run;
		run += popcount64(g->used[b]);
	}
	size_t n = (size_t)1 << g->hbits;
	for (size_t i = 0; i < n; i++) {
		sd_slot *e = &g->slots[i];
		if (e->line == EMPTY_LINE || e->stamp == IN_TOP)
			continue;
		uint32_t t = e->stamp;
		e->stamp =
		    g->blk[t >> 6] + popcount64(g->used[t >> 6] & ((UINT64_C(1) << (t & 63)) - 1));
	}
	uint64_t want = g->tcap;
	while (want < 4 * ((uint64_t)g->live + 1))
		want *= 2;
	if (want > (UINT64_C(1) << 31))
		return sd_fail(s, ct_error(s->ctx, CT_ERR_LIMIT,
		                           "simulator: more than %llu distinct lines",
		                           (unsigned long long)SD_MAX_LINES));
	if (want != g->tcap) {
		uint64_t *used = ct_realloc(s->ctx, g->used, want / 64 * sizeof *used);
		if (!used)
			return sd_fail(s, CT_ERR_NOMEM);
		g->used = used;
		uint32_t *blk = ct_realloc(s->ctx, g->blk, (want / 64 + 1) * sizeof *blk);
		if (!blk)
			return sd_fail(s, CT_ERR_NOMEM);
		g->blk = blk;
		g->tcap = (uint32_t)want;
		nblk = g->tcap >> 6;
	}
	/* Stamps 0..live-1 in use: whole blocks, then a partial one; the tree is built in
	 * linear time by pushing each node's count to its parent. */
	uint32_t live = g->live;
	g->blk[0] = 0;
	for (uint32_t b = 0; b < nblk; b++) {
		uint32_t k = live > 64 * b ? live - 64 * b : 0;
		g->used[b] = k >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << k) - 1;
		g->blk[b + 1] = k >= 64 ? 64 : k;
	}
	for (uint32_t i = 1; i <= nblk; i++) {
		uint32_t parent = i + (i & -i);
		if (parent <= nblk)
			g->blk[parent] += g->blk[i];
	}
	g->clock = live;
	return true;
}

/* The line that falls out of a full top array takes the newest stamp. */
static bool sd_stamp(sim *s, sd_engine *g, uint32_t slot)
{
	if (g->clock == g->tcap && !sd_compact(s, g))
		return false;
	uint32_t t = g->clock++;
	stamps_set(g, t, true);
	g->slots[slot].stamp = t;
	g->live++;
	return true;
}

/* An access whose line was not in the top array. sd_access has already moved the line to
 * top[0] and pushed out evicted (EMPTY_LINE while the array was filling), which is stamped
 * first; the line's distance then comes from the stamps newer than its own, or it is cold. */
static __attribute__((noinline)) int64_t sd_access_slow(sim *s, sd_engine *g, uint64_t line,
                                                        uint64_t evicted, uint32_t evicted_slot)
{
	if (evicted == EMPTY_LINE)
		g->ntop++;
	else if (!sd_stamp(s, g, evicted_slot))
		return SD_COLD;
	uint64_t slot = hash_probe(g, line);
	int64_t d;
	if (g->slots[slot].line == EMPTY_LINE) {
		if (g->nlines + 1 > SD_MAX_LINES) {
			sd_fail(s, ct_error(s->ctx, CT_ERR_LIMIT,
			                    "simulator: more than %llu distinct lines",
			                    (unsigned long long)SD_MAX_LINES));
			return SD_COLD;
		}
		if ((g->nlines + 1) * 2 > (UINT64_C(1) << g->hbits)) {
			if (!sd_hash_grow(s, g))
				return SD_COLD;
			slot = hash_probe(g, line);
		}
		if (g->nlines + 1 > g->hist_cap) {
			uint64_t *h = ct_realloc(s->ctx, g->hist, 2 * g->hist_cap * sizeof *h);
			if (!h) {
				sd_fail(s, CT_ERR_NOMEM);
				return SD_COLD;
			}
			memset(h + g->hist_cap, 0, g->hist_cap * sizeof *h);
			g->hist = h;
			g->hist_cap *= 2;
		}
		g->slots[slot].line = line;
		g->nlines++;
		g->cold++;
		d = SD_COLD;
	} else {
		/* Stamped, so the array was full: its other SD_TOP - 1 lines, and the lines
		 * stamped after t (the evicted one among them), are the distinct lines touched
		 * since. */
		uint32_t t = g->slots[slot].stamp;
		d = SD_TOP - 1 + (int64_t)(g->live - stamps_upto(g, t));
		stamps_set(g, t, false);
		g->live--;
		g->hist[d]++;
	}
	g->slots[slot].stamp = IN_TOP;
	g->top_slot[0] = (uint32_t)slot;
	return d;
}

/* Stack distance of one access (SD_COLD for a first touch), recorded in the histogram. One
 * pass searches the top array and shifts it down behind the line, so a hit at position p
 * costs p + 1 steps and no copy. */
static inline int64_t sd_access(sim *s, sd_engine *g, uint64_t line)
{
	uint64_t prev = line;
	uint32_t prev_slot = 0;
	for (int p = 0; p < SD_TOP; p++) {
		uint64_t cur = g->top[p];
		uint32_t cur_slot = g->top_slot[p];
		g->top[p] = prev;
		g->top_slot[p] = prev_slot;
		if (cur == line) {
			g->top_slot[0] = cur_slot;
			g->hist[p]++;
			return p;
		}
		prev = cur;
		prev_slot = cur_slot;
	}
	return sd_access_slow(s, g, line, prev, prev_slot);
}

/* An empty pass for lines of 2^shift bytes; false (NOMEM on ctx) if allocation fails, the
 * caller then frees what was allocated with sd_release. */
static bool sd_init(sim *s, sd_engine *g, int shift)
{
	g->shift = shift;
	for (int i = 0; i < SD_TOP; i++)
		g->top[i] = EMPTY_LINE;
	g->hbits = HASH_MIN_BITS;
	size_t n = (size_t)1 << g->hbits;
	g->slots = ct_realloc(s->ctx, NULL, n * sizeof *g->slots);
	g->tcap = STAMPS_MIN;
	g->used = ct_alloc(s->ctx, g->tcap / 64 * sizeof *g->used);
	g->blk = ct_alloc(s->ctx, (g->tcap / 64 + 1) * sizeof *g->blk);
	g->hist_cap = 64;
	g->hist = ct_alloc(s->ctx, g->hist_cap * sizeof *g->hist);
	if (!g->slots || !g->used || !g->blk || !g->hist)
		return false;
	for (size_t i = 0; i < n; i++)
		g->slots[i].line = EMPTY_LINE;
	g->min_cap = INT64_MAX;
	return true;
}

/* Free the tables of a pass (sd_init's, whether or not it succeeded). */
static void sd_release(ct_ctx *ctx, sd_engine *g)
{
	ct_free(ctx, g->slots);
	ct_free(ctx, g->used);
	ct_free(ctx, g->blk);
	ct_free(ctx, g->hist);
}

uint64_t sim_misses_for_lines(const sim_hist *h, int64_t lines)
{
	if (lines <= 0)
		return h->accesses;
	uint64_t m = h->cold;
	for (int64_t d = lines; d < h->len; d++)
		m += h->count[d];
	return m;
}

/* ------------------------------------------------------------ set-associative */

/* True on a hit. The row is kept in recency order, so LRU replacement drops its last tag; one
 * pass searches and shifts, as in sd_access. */
static inline bool sa_access(const sa_cache *c, uint64_t addr)
{
	uint64_t line = addr >> c->shift;
	uint64_t set = c->pow2 ? line & c->set_mask : line % c->sets;
	uint64_t *row = c->tags + set * (uint64_t)c->ways;
	uint64_t prev = line;
	for (int p = 0; p < c->ways; p++) {
		uint64_t cur = row[p];
		row[p] = prev;
		if (cur == line)
			return true;
		prev = cur;
	}
	return false;
}

/* Tree-PLRU (docs/MODEL.md, "Replacement policies"): the ways are the leaves of a complete
 * binary tree whose node n (root 1, children 2n and 2n + 1, way w at leaf ways + w) holds one
 * bit: 0 points to its left child, 1 to its right. A miss fills the lowest empty way if there
 * is one, else the way the bits point to from the root; a hit or a fill sets every bit on the
 * way's path to point away from it. True on a hit. */
static inline bool plru_access(const sa_cache *c, uint64_t addr)
{
	uint64_t line = addr >> c->shift;
	uint64_t set = c->pow2 ? line & c->set_mask : line % c->sets;
	return sim_plru_set(c->tags + set * (uint64_t)c->ways, c->bits + set * (uint64_t)c->nbw,
	                    (unsigned)c->ways, line);
}

/* ------------------------------------------------------------ simulator */

sim *sim_new(ct_ctx *ctx, const sim_spec *spec, const sim_buffer *buf, int nbuf, int nref)
{
	if (sim_spec_check(ctx, spec))
		return NULL;
	if (nbuf < 0 || nref < 0 || (nbuf > 0 && !buf)) {
		ct_error(ctx, CT_ERR_USAGE, "sim_new: %d buffers, %d references", nbuf, nref);
		return NULL;
	}
	for (int i = 0; i < spec->nlevels; i++) {
		const sim_level *l = &spec->level[i];
		if ((sim_level_sets(l) > 1 || l->policy == SIM_PLRU) && l->size / l->line > SA_MAX_LINES) {
			ct_error(ctx, CT_ERR_LIMIT,
			         "cache level %d: a set-associative level of more than %lld lines "
			         "is not supported",
			         i + 1, (long long)SA_MAX_LINES);
			return NULL;
		}
	}
	sim *s = ct_alloc(ctx, sizeof *s);
	if (!s)
		return NULL;
	s->ctx = ctx;
	s->spec = *spec;
	s->nbuf = nbuf;
	s->nref = nref;
	int nl = spec->nlevels;
	size_t nb = (size_t)nbuf + 1, nr = (size_t)nref + 1;
	s->base = ct_alloc(ctx, nb * sizeof *s->base);
	s->esize = ct_alloc(ctx, nb * sizeof *s->esize);
	s->count = ct_alloc(ctx, nb * sizeof *s->count);
	s->buf_miss = ct_alloc(ctx, (size_t)nl * nb * sizeof *s->buf_miss);
	s->ref_miss = ct_alloc(ctx, (size_t)nl * nr * sizeof *s->ref_miss);
	if (!s->base || !s->esize || !s->count || !s->buf_miss || !s->ref_miss)
		goto fail;
	for (int i = 0; i < nbuf; i++) {
		s->esize[i] = buf[i].elem_size;
		s->count[i] = buf[i].count;
	}
	int64_t span = sim_layout(ctx, buf, nbuf, sim_spec_max_line(spec), s->base);
	if (span < 0)
		goto fail;
	if (span > (INT64_C(1) << 62)) {
		ct_error(ctx, CT_ERR_LIMIT, "buffers span more than 2^62 bytes");
		goto fail;
	}
	s->line_shift = log2_exact(spec->level[0].line);
	for (int i = 0; i < nl; i++) {
		const sim_level *l = &spec->level[i];
		int shift = log2_exact(l->line);
		if (shift != s->line_shift)
			s->line_shift = -1;
		int64_t sets = sim_level_sets(l);
		if (sets > 1 || l->policy == SIM_PLRU) {
			sa_cache *c = &s->sa[s->nsa++];
			c->shift = shift;
			c->ways = (int)l->ways;
			c->sets = (uint64_t)sets;
			c->pow2 = is_pow2(sets);
			c->set_mask = (uint64_t)sets - 1;
			c->lev = i;
			size_t ntags = (size_t)(l->size / l->line);
			c->tags = ct_alloc(ctx, ntags * sizeof *c->tags);
			if (!c->tags)
				goto fail;
			memset(c->tags, 0xff, ntags * sizeof *c->tags);
			if (l->policy == SIM_PLRU) {
				c->plru = true;
				c->nbw = (c->ways + 63) / 64;
				c->bits = ct_alloc(ctx, (size_t)sets * (size_t)c->nbw * sizeof *c->bits);
				if (!c->bits)
					goto fail;
				memset(c->bits, 0, (size_t)sets * (size_t)c->nbw * sizeof *c->bits);
			}
			continue;
		}
		int e = 0;
		while (e < s->nsd && s->sd[e].shift != shift)
			e++;
		sd_engine *g = &s->sd[e];
		if (e == s->nsd) {
			s->nsd++;
			if (!sd_init(s, g, shift))
				goto fail;
		}
		g->lev[g->nlev] = i;
		g->cap[g->nlev] = l->size / l->line;
		if (g->cap[g->nlev] < g->min_cap)
			g->min_cap = g->cap[g->nlev];
		g->nlev++;
	}
	return s;
fail:
	sim_free(s);
	return NULL;
}

void sim_free(sim *s)
{
	if (!s)
		return;
	ct_ctx *ctx = s->ctx;
	for (int e = 0; e < s->nsd; e++)
		sd_release(ctx, &s->sd[e]);
	for (int c = 0; c < s->nsa; c++) {
		ct_free(ctx, s->sa[c].tags);
		ct_free(ctx, s->sa[c].bits);
	}
	ct_free(ctx, s->base);
	ct_free(ctx, s->esize);
	ct_free(ctx, s->count);
	ct_free(ctx, s->buf_miss);
	ct_free(ctx, s->ref_miss);
	ct_free(ctx, s);
}

/* One miss of level lev, counted in total, against buffer column bcol and reference rcol. */
static inline void count_miss(sim *s, int lev, int bcol, int rcol)
{
	s->misses[lev]++;
	s->buf_miss[(size_t)lev * (size_t)(s->nbuf + 1) + (size_t)bcol]++;
	s->ref_miss[(size_t)lev * (size_t)(s->nref + 1) + (size_t)rcol]++;
}

/* One access of byte address addr through every level; bcol/rcol are the counter columns. */
static inline void access_addr(sim *s, uint64_t addr, int bcol, int rcol)
{
	s->accesses++;
	for (int e = 0; e < s->nsd; e++) {
		sd_engine *g = &s->sd[e];
		int64_t d = sd_access(s, g, addr >> g->shift);
		if (d < g->min_cap)
			continue;
		for (int k = 0; k < g->nlev; k++)
			if (d >= g->cap[k])
				count_miss(s, g->lev[k], bcol, rcol);
	}
	for (int c = 0; c < s->nsa; c++)
		if (!(s->sa[c].plru ? plru_access(&s->sa[c], addr) : sa_access(&s->sa[c], addr)))
			count_miss(s, s->sa[c].lev, bcol, rcol);
}

int64_t sim_address(const sim *s, int buffer, int64_t offset)
{
	return s->base[buffer] + offset * s->esize[buffer];
}

void sim_access_ref(sim *s, int ref, int buffer, int64_t offset, int is_write)
{
	if (s->err)
		return;
	if ((unsigned)buffer >= (unsigned)s->nbuf ||
	    (uint64_t)offset >= (uint64_t)s->count[buffer] || ref < -1 || ref >= s->nref) {
		s->err =
		    ct_error(s->ctx, CT_ERR_USAGE,
		             "simulator: access to element %lld of buffer %d (reference %d) is "
		             "out of range",
		             (long long)offset, buffer, ref);
		return;
	}
	s->writes += is_write != 0;
	access_addr(s, (uint64_t)(s->base[buffer] + offset * s->esize[buffer]), buffer,
	            ref < 0 ? s->nref : ref);
}

void sim_access(sim *s, int buffer, int64_t offset, int is_write)
{
	sim_access_ref(s, -1, buffer, offset, is_write);
}

void sim_trace(void *s, int buffer, int64_t offset, int is_write)
{
	sim_access_ref(s, -1, buffer, offset, is_write);
}

void sim_access_lines(sim *s, const uint64_t *lines, size_t n, const uint8_t *is_write)
{
	if (s->err)
		return;
	if (s->line_shift < 0) {
		s->err = ct_error(s->ctx, CT_ERR_USAGE,
		                  "simulator: line numbers need a single line size in the spec");
		return;
	}
	uint64_t limit = (UINT64_C(1) << 62) >> s->line_shift;
	for (size_t i = 0; i < n && !s->err; i++) {
		if (lines[i] >= limit) {
			s->err = ct_error(s->ctx, CT_ERR_USAGE,
			                  "simulator: line number %llu is too large",
			                  (unsigned long long)lines[i]);
			return;
		}
		if (is_write)
			s->writes += is_write[i] != 0;
		/* Knowing the lines ahead, fetch their hash slots early: on traces with little
		 * locality the probe is otherwise a full memory latency per access. */
		if (i + SD_PREFETCH < n)
			for (int e = 0; e < s->nsd; e++)
				__builtin_prefetch(&s->sd[e].slots[hash_home(lines[i + SD_PREFETCH],
				                                             s->sd[e].hbits)]);
		access_addr(s, lines[i] << s->line_shift, s->nbuf, s->nref);
	}
}

ct_status sim_result(const sim *s, uint64_t *misses, uint64_t *accesses, uint64_t *writes)
{
	if (misses)
		for (int i = 0; i < s->spec.nlevels; i++)
			misses[i] = s->misses[i];
	if (accesses)
		*accesses = s->accesses;
	if (writes)
		*writes = s->writes;
	return s->err;
}

uint64_t sim_buffer_misses(const sim *s, int level, int buffer)
{
	if (level < 0 || level >= s->spec.nlevels || buffer < -1 || buffer >= s->nbuf)
		return 0;
	int col = buffer < 0 ? s->nbuf : buffer;
	return s->buf_miss[(size_t)level * (size_t)(s->nbuf + 1) + (size_t)col];
}

uint64_t sim_ref_misses(const sim *s, int level, int ref)
{
	if (level < 0 || level >= s->spec.nlevels || ref < -1 || ref >= s->nref)
		return 0;
	int col = ref < 0 ? s->nref : ref;
	return s->ref_miss[(size_t)level * (size_t)(s->nref + 1) + (size_t)col];
}

const sim_hist *sim_histogram(sim *s, int level)
{
	for (int e = 0; e < s->nsd; e++) {
		sd_engine *g = &s->sd[e];
		for (int k = 0; k < g->nlev; k++) {
			if (g->lev[k] != level)
				continue;
			g->view.count = g->hist;
			g->view.len = (int64_t)g->nlines;
			g->view.cold = g->cold;
			g->view.accesses = s->accesses;
			g->view.line = INT64_C(1) << g->shift;
			return &g->view;
		}
	}
	return NULL;
}
