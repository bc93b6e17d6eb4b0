/* test_tune_decide.c: the tuner's keep-the-default decision (tune_decide) on injected timings. */
#include "harness.h"

#include "tune/tune.h"

#include <math.h>

/* One table row: n interleaved rounds (seconds; 0 = that run failed). */
typedef struct drow {
	const char *name;
	int n;
	double td[8], tb[8]; /* default, candidate */
	int keep_default;
	int rounds;
	double gain, spread; /* expected, to 1e-9 */
} drow;

static const drow drows[] = {
	/* a clear win: every round 10% faster, no spread */
	{"clear win", 5, {1.1, 1.1, 1.1, 1.1, 1.1}, {1, 1, 1, 1, 1}, 0, 5, 0.1, 0},
	/* the candidate slower: the default stays */
	{"candidate slower", 5, {1, 1, 1, 1, 1}, {1.2, 1.2, 1.2, 1.2, 1.2}, 1, 5, 1 / 1.2 - 1, 0},
	/* a tie: no gain, the default stays */
	{"tie", 5, {2, 2, 2, 2, 2}, {2, 2, 2, 2, 2}, 1, 5, 0, 0},
	/* 5% faster but the rounds scatter by more (ratios 0.9, 1.2, 1.05, 0.95, 1.15: median
	 * 1.05, deviations .15 .15 0 .1 .1 -> MAD 0.1): within the noise */
	{"gain within spread", 5, {0.9, 1.2, 1.05, 0.95, 1.15}, {1, 1, 1, 1, 1}, 1, 5, 0.05, 0.1},
	/* 8% faster with a 1% spread (ratios 1.05 1.07 1.08 1.09 1.11): a win */
	{"gain beyond spread", 5, {1.05, 1.08, 1.11, 1.07, 1.09}, {1, 1, 1, 1, 1}, 0, 5, 0.08, 0.01},
	/* one wild round (the machine got busy while the default ran) moves neither the
	 * median nor the MAD much: still a win */
	{"one outlier round", 5, {1.1, 3.0, 1.1, 1.1, 1.1}, {1, 1, 1, 1, 1}, 0, 5, 0.1, 0},
	/* 0.5% faster without any spread: below the 1% floor, the default stays */
	{"below the floor", 5, {1.005, 1.005, 1.005, 1.005, 1.005}, {1, 1, 1, 1, 1}, 1, 5, 0.005, 0},
	/* failed runs leave their round out; 3 rounds remain: a win */
	{"failed rounds left out", 5, {1.2, 0, 1.2, 1.2, 1.2}, {1, 1, 0, 1, 1}, 0, 3, 0.2, 0},
	/* only 2 usable rounds: too little evidence, the default stays */
	{"too few rounds", 5, {1.5, 1.5, 0, 0, 0}, {1, 1, 1, 1, 1}, 1, 2, 0.5, 0},
	/* nothing ran */
	{"no rounds", 0, {0}, {0}, 1, 0, 0, 0},
	/* an even count: the median of 4 ratios (1.1, 1.2, 1.3, 1.4) is 1.25, MAD 0.1 */
	{"even count", 4, {1.1, 1.2, 1.3, 1.4}, {1, 1, 1, 1}, 0, 4, 0.25, 0.1},
	/* a drifting machine: both slow down together, the ratio is steady */
	{"common drift", 6, {1.1, 2.2, 3.3, 1.1, 2.2, 3.3}, {1, 2, 3, 1, 2, 3}, 0, 6, 0.1, 0},
};

static void decide_rows(void)
{
	for (size_t i = 0; i < sizeof drows / sizeof drows[0]; i++) {
		const drow *d = &drows[i];
		h_begin(d->name);
		tune_verdict v;
		tune_decide(d->td, d->tb, d->n, &v);
		CHECKF(v.keep_default == d->keep_default, "keep_default %d, want %d (gain %g spread %g)",
		       v.keep_default, d->keep_default, v.gain, v.spread);
		CHECKF(v.rounds == d->rounds, "rounds %d, want %d", v.rounds, d->rounds);
		CHECKF(fabs(v.gain - d->gain) < 1e-9, "gain %.12g, want %.12g", v.gain, d->gain);
		CHECKF(fabs(v.spread - d->spread) < 1e-9, "spread %.12g, want %.12g", v.spread, d->spread);
		h_end();
	}
}

/* The medians of each side are reported too, over the rounds that count. */
static void decide_medians(void)
{
	double td[5] = {3, 1, 2, 0, 5}, tb[5] = {1, 1, 1, 1, 0.5};
	tune_verdict v;
	tune_decide(td, tb, 5, &v);
	/* rounds 0, 1, 2, 4 count: default {3, 1, 2, 5} -> 2.5, candidate {1, 1, 1, 0.5} -> 1 */
	CHECKF(v.rounds == 4 && fabs(v.default_s - 2.5) < 1e-12 && fabs(v.best_s - 1) < 1e-12,
	       "rounds %d default %g best %g", v.rounds, v.default_s, v.best_s);
	/* NULL inputs: nothing to weigh, the default stays */
	tune_decide(NULL, tb, 5, &v);
	CHECK(v.keep_default == 1 && v.rounds == 0);
}

int main(void)
{
	decide_rows();
	RUN(decide_medians);
	return h_report();
}
