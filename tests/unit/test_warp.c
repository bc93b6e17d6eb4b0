/* test_warp.c: the set-associative counts of warp_count (the model tree simulated with warping)
 * equal the exact simulator's over the interpreter's trace, per level and per array, on
 * hand-picked kernels where warping skips iterations and on random kernels and caches; and the
 * levels cold_certify proves to miss only first touches do so in the simulator. */
#include "../../bench/model/random_kernels.h"
#include "interp/interp.h"

#include "harness.h"

static ct_status feed(void *ud, const interp_access *acc, int n)
{
	sim *s = ud;
	for (int i = 0; i < n; i++)
		sim_access(s, acc[i].buffer, acc[i].offset, acc[i].is_write);
	return CT_OK;
}

/* What one comparison found. */
typedef struct cmp_out {
	bool ran;            /* both counted every level */
	bool equal;          /* every level's total and every array's count agree */
	int64_t skipped, warps, simulated, accesses;
	int nlevels;
	int64_t misses[SIM_MAX_LEVELS];
} cmp_out;

/* Count tree t at spec both ways and compare (a level warp_count leaves undone: ran false). */
static void compare_tree(ct_looptree *t, const sim_spec *spec, cmp_out *o)
{
	memset(o, 0, sizeof *o);
	bool want[SIM_MAX_LEVELS];
	for (int l = 0; l < SIM_MAX_LEVELS; l++)
		want[l] = l < spec->nlevels;
	warp_result w;
	if (warp_count(t, spec, want, 0, &w) != CT_OK)
		return;
	bool all = true;
	for (int l = 0; l < spec->nlevels; l++)
		all = all && w.done[l];
	sim_buffer *buf = NULL;
	sim *s = NULL;
	uint64_t misses[SIM_MAX_LEVELS], acc = 0;
	bool ok = all && sim_tree_buffers(t, &buf) == CT_OK && (s = sim_new(t->k->ctx, spec, buf, t->narrays, 0)) &&
	          interp_trace_batch(t, feed, s) == CT_OK && sim_result(s, misses, &acc, NULL) == CT_OK;
	if (ok) {
		o->ran = true;
		o->equal = true;
		for (int l = 0; l < spec->nlevels; l++) {
			o->misses[l] = w.misses[l];
			if ((uint64_t)w.misses[l] != misses[l]) {
				o->equal = false;
				fprintf(stderr, "  level %d: warp %lld, simulator %llu\n", l, (long long)w.misses[l],
				        (unsigned long long)misses[l]);
			}
			for (int a = 0; a < t->narrays; a++)
				if ((uint64_t)w.array_misses[l * t->narrays + a] != sim_buffer_misses(s, l, a)) {
					o->equal = false;
					fprintf(stderr, "  level %d array %d: warp %lld, simulator %llu\n", l, a,
					        (long long)w.array_misses[l * t->narrays + a],
					        (unsigned long long)sim_buffer_misses(s, l, a));
				}
		}
	}
	o->skipped = w.skipped;
	o->warps = w.warps;
	o->simulated = w.simulated;
	o->accesses = (int64_t)acc;
	o->nlevels = spec->nlevels;
	sim_free(s);
	free(buf);
	warp_result_free(&w);
}

/* Parse src, set its runtime params, lower and compare at spec_text. */
static void compare_src(const char *src, const int64_t *rt, const char (*rt_name)[4], int nrt,
                        const char *spec_text, cmp_out *o)
{
	memset(o, 0, sizeof *o);
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "warp.cachet");
	sim_spec spec;
	bool ok = k && sim_spec_parse(ctx, spec_text, &spec) == CT_OK;
	for (int i = 0; ok && i < nrt; i++)
		ok = ct_kernel_set_param(k, rt_name[i], rt[i]) == CT_OK;
	ct_looptree *t = ok ? ct_kernel_lower(k, 1) : NULL;
	if (t)
		compare_tree(t, &spec, o);
	else
		fprintf(stderr, "  could not lower (%s)\n", ct_ctx_last_message(ctx));
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* Kernels with power-of-two strides (conflict misses) where warping must skip iterations. */
static const struct {
	const char *name, *src, *spec;
} table[] = {
    {"vector add 256x256 on 4K:64:1 (every array in the same sets)",
     "kernel add\nparam N = 256\narray A : f32[N, N] input\narray B : f32[N, N] input\narray C : f32[N, N] output\n"
     "for (i: N, j: N) {\n  C[i, j] = A[i, j] + B[i, j]\n}\n",
     "4K:64:1,8K:64:2,3K:32:3"},
    {"rowsum 64x1024 on 2K:32:4",
     "kernel rowsum\nparam N = 64, M = 1024\narray A : f32[N, M] input\narray S : f32[N] inout\n"
     "for (i: N, j: M) {\n  S[i] += A[i, j]\n}\n",
     "2K:32:4,1536:64:3"},
    {"matmul 64 on 8K:64:4",
     "kernel mm\nparam N = 64\narray A : f64[N, N] input\narray B : f64[N, N] input\narray C : f64[N, N] inout\n"
     "for (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n",
     "8K:64:4,6K:32:3,16K:64:16"},
    {"tiled matmul 96 on 32K:64:8",
     "kernel mm\nparam N = 96\narray A : f32[N, N] input\narray B : f32[N, N] input\narray C : f32[N, N] inout\n"
     "for (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
     "schedule {\n  ii, jj, kk = tile(i=16, j=32, k=16)\n  reorder(i, j, k, ii, kk, jj)\n}\n",
     "32K:64:8,1K:16:1"},
    {"vector add 256x256 on PLRU 4K:64:4 and 8K:64:8 (one set of 8)",
     "kernel add\nparam N = 256\narray A : f32[N, N] input\narray B : f32[N, N] input\narray C : f32[N, N] output\n"
     "for (i: N, j: N) {\n  C[i, j] = A[i, j] + B[i, j]\n}\n",
     "4K:64:4:plru,512:64:8:plru,3K:32:4:plru"},
    {"matmul 64 on PLRU 8K:64:4",
     "kernel mm\nparam N = 64\narray A : f64[N, N] input\narray B : f64[N, N] input\narray C : f64[N, N] inout\n"
     "for (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n",
     "8K:64:4:plru,6K:32:16:plru,16K:64:16:plru"},
    {"stencil 256x256 on 8K:64:2",
     "kernel st\nparam N = 256\narray A : f32[N, N] input\narray B : f32[N, N] output\n"
     "for (i: N - 2, j: N - 2) {\n  B[i + 1, j + 1] = A[i, j + 1] + A[i + 1, j] + A[i + 1, j + 1] + A[i + 1, j + 2] + A[i + 2, j + 1]\n}\n",
     "8K:64:2,5K:64:5"},
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		cmp_out o;
		compare_src(table[i].src, NULL, NULL, 0, table[i].spec, &o);
		CHECKF(o.ran && o.equal, "%s: ran %d equal %d", table[i].name, o.ran, o.equal);
		CHECKF(o.warps > 0 && o.skipped > 0, "%s: %lld warps, %lld iterations skipped", table[i].name,
		       (long long)o.warps, (long long)o.skipped);
		CHECKF(o.simulated < o.accesses * o.nlevels, "%s: %lld simulated of %lld", table[i].name,
		       (long long)o.simulated, (long long)o.accesses);
		printf("  %s: misses %lld, %lld of %lld accesses simulated (all levels), %lld warps skipped %lld iterations\n",
		       table[i].name, (long long)o.misses[0], (long long)o.simulated, (long long)o.accesses,
		       (long long)o.warps, (long long)o.skipped);
	}
}

/* A random set-associative spec of 1 to 3 levels: 1 to 16 ways, power-of-two and odd set
 * counts, lines of 8 to 128 bytes. */
static void random_spec(rk_rng *r, char *out, size_t cap)
{
	static const int64_t sets[] = {2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 64, 96, 128};
	static const int64_t lines[] = {8, 16, 32, 64, 128};
	int n = (int)rk_range(r, 1, 3);
	size_t len = 0;
	out[0] = 0;
	for (int l = 0; l < n; l++) {
		int64_t ways = rk_range(r, 1, 16), line = lines[rk_range(r, 0, 4)];
		int64_t s = sets[rk_range(r, 0, (int64_t)(sizeof sets / sizeof sets[0]) - 1)];
		len += (size_t)snprintf(out + len, cap - len, "%s%lld:%lld:%lld", l ? "," : "",
		                        (long long)(s * ways * line), (long long)line, (long long)ways);
	}
}

/* A random tree-PLRU spec of 1 to 3 levels (one in four an LRU level): 1 to 16 ways (powers of
 * two), power-of-two and odd set counts (one set too: a fully associative PLRU), lines of 8 to
 * 128 bytes. */
static void random_spec_plru(rk_rng *r, char *out, size_t cap)
{
	static const int64_t sets[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 64, 96, 128};
	static const int64_t lines[] = {8, 16, 32, 64, 128};
	int n = (int)rk_range(r, 1, 3);
	size_t len = 0;
	out[0] = 0;
	for (int l = 0; l < n; l++) {
		int64_t ways = (int64_t)1 << rk_range(r, 0, 4), line = lines[rk_range(r, 0, 4)];
		int64_t s = sets[rk_range(r, 0, (int64_t)(sizeof sets / sizeof sets[0]) - 1)];
		len += (size_t)snprintf(out + len, cap - len, "%s%lld:%lld:%lld%s", l ? "," : "",
		                        (long long)(s * ways * line), (long long)line, (long long)ways,
		                        rk_range(r, 0, 3) ? ":plru" : "");
	}
}

/* Random kernels of the model bench's families on random set-associative caches: every count
 * warp_count gives equals the simulator's, it gives one on most cases, and warping skips
 * iterations on some. */
#ifndef WARP_RANDOM_CASES /* a longer run: cc -DWARP_RANDOM_CASES=5000 -DWARP_RANDOM_SEED=... */
#define WARP_RANDOM_CASES 400
#endif
#ifndef WARP_RANDOM_SEED
#define WARP_RANDOM_SEED 20261129
#endif

/* The random comparison: `cases` kernels with specs from make_spec, from seed. */
static void random_cases(uint64_t seed, int ncases, void (*make_spec)(rk_rng *, char *, size_t))
{
	rk_rng r = {seed};
	int cases = 0, ran = 0, equal = 0, warped = 0;
	while (cases < ncases) {
		rk_case c;
		rk_generate(&r, &c);
		char spec[160];
		make_spec(&r, spec, sizeof spec);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, c.src, strlen(c.src), "random.cachet");
		bool parsed = k != NULL;
		ct_kernel_free(k);
		ct_ctx_free(ctx);
		if (!parsed)
			continue; /* a schedule the checker refuses */
		cases++;
		cmp_out o;
		compare_src(c.src, c.rt_val, (const char(*)[4])c.rt_name, c.nrt, spec, &o);
		ran += o.ran;
		equal += o.ran && o.equal;
		warped += o.ran && o.skipped > 0;
		if (o.ran && !o.equal)
			fprintf(stderr, "differs on %s:\n%s\n", spec, c.src);
	}
	printf("  random: %d cases, %d counted, %d equal, %d warped\n", cases, ran, equal, warped);
	CHECKF(equal == ran, "%d of %d equal", equal, ran);
	CHECKF(ran * 10 >= cases * 8, "counted %d of %d", ran, cases);
	CHECKF(warped * 10 >= ran, "warped on %d of %d", warped, ran);
}

static void test_random(void)
{
	random_cases(WARP_RANDOM_SEED, WARP_RANDOM_CASES, random_spec);
}

/* The same with tree-PLRU levels (sim.c's PLRU against the model tree's, warping included). */
#ifndef WARP_PLRU_CASES
#define WARP_PLRU_CASES 300
#endif
static void test_random_plru(void)
{
	random_cases(WARP_RANDOM_SEED + 35, WARP_PLRU_CASES, random_spec_plru);
}

/* Past its work budget warp_count leaves a level undone and says why; a kernel the model cannot
 * express exactly (a guard comparing two indices) is left undone too. */
static void test_fallbacks(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = table[0].src;
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "add.cachet");
	sim_spec spec;
	CHECK(k && sim_spec_parse(ctx, "4K:64:1", &spec) == CT_OK);
	ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
	bool want[SIM_MAX_LEVELS] = {true};
	warp_result w;
	CHECK(t && warp_count(t, &spec, want, 1000, &w) == CT_OK);
	CHECK(!w.done[0] && w.why && strstr(w.why, "budget"));
	warp_result_free(&w);
	CHECK(t && warp_count(t, &spec, want, 0, &w) == CT_OK);
	CHECK(w.done[0] && w.misses[0] == 196608);
	warp_result_free(&w);
	ct_looptree_free(t);
	ct_kernel_free(k);
	const char *diag = "kernel diag\nparam N = 100\narray A : f32[N, N] input\narray B : f32[N, N] output\n"
	                   "array D : f32[N] output\nfor (i: N, j: N) {\n  B[j, i] = A[i, j]\n  if (i == j) {\n"
	                   "    D[i] = A[i, j]\n  }\n}\n";
	k = ct_kernel_parse(ctx, diag, strlen(diag), "diag.cachet");
	t = k ? ct_kernel_lower(k, 1) : NULL;
	CHECK(t && warp_count(t, &spec, want, 0, &w) == CT_OK);
	CHECK(!w.done[0] && w.why && strstr(w.why, "affine"));
	warp_result_free(&w);
	ct_looptree_free(t);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ct_kernel_predict on a trace longer than it would simulate (8.4M accesses): a level that warps
 * and one that never evicts are both the model's, exact, and equal to the simulator's. */
static void predict_long(const char *spec)
{
	const char *src = "kernel mm\nparam N = 128\narray A : f32[N, N] input\narray B : f32[N, N] input\n"
	                  "array C : f32[N, N] inout\nfor (i: N, j: N, k: N) {\n  C[i, j] += A[i, k] * B[k, j]\n}\n"
	                  "schedule {\n  ii, jj, kk = tile(i=32, j=64, k=32)\n  reorder(i, j, k, ii, kk, jj)\n}\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "mm.cachet");
	CHECK(k != NULL);
	ct_predict_result pr;
	ct_sim_result sr;
	memset(&pr, 0, sizeof pr);
	memset(&sr, 0, sizeof sr);
	CHECK(k && ct_kernel_predict(k, spec, &pr) == CT_OK);
	CHECK(pr.accesses > CT_PREDICT_SIM_MAX);
	CHECK(k && ct_kernel_simulate(k, spec, &sr) == CT_OK);
	for (int l = 0; l < 2; l++) {
		CHECKF(pr.source[l] == CT_SOURCE_MODEL && pr.fallback[l] == CT_FALLBACK_NONE && pr.level[l].exact,
		       "level %d: source %d fallback %d exact %d", l, pr.source[l], pr.fallback[l], pr.level[l].exact);
		CHECKF(pr.level[l].misses == sr.level[l].misses, "level %d: %lld, simulator %lld", l,
		       (long long)pr.level[l].misses, (long long)sr.level[l].misses);
	}
	int64_t sum = 0;
	for (int a = 0; a < pr.narrays; a++) {
		CHECK(pr.arrays[a].exact);
		sum += pr.arrays[a].misses[0];
	}
	CHECK(sum == pr.level[0].misses);
	printf("  mm 128 on %s: %lld, %lld misses in %.1f ms (simulator %.1f ms)\n", spec,
	       (long long)pr.level[0].misses, (long long)pr.level[1].misses, pr.seconds * 1e3, sr.seconds * 1e3);
	ct_predict_result_free(&pr);
	ct_sim_result_free(&sr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* LRU, and tree-PLRU: the L1 by warping, the L2 (never evicts: PLRU fills empty ways first)
 * the model's cold misses. */
static void test_predict_long(void)
{
	predict_long("16K:64:4,1M:64:16");
	predict_long("16K:64:4:plru,1M:64:16:plru");
}

/* ct_kernel_predict on random kernels with tree-PLRU levels: every count it calls exact equals
 * the simulator's, and most are the model's (warping, or a level that never evicts). */
static void test_predict_random_plru(void)
{
	rk_rng r = {777035};
	int cases = 0, levels = 0, exact = 0, equal = 0, model = 0;
	while (cases < 80) {
		rk_case c;
		rk_generate(&r, &c);
		char spec[160];
		random_spec_plru(&r, spec, sizeof spec);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, c.src, strlen(c.src), "random.cachet");
		bool ok = k != NULL;
		for (int i = 0; ok && i < c.nrt; i++)
			ok = ct_kernel_set_param(k, c.rt_name[i], c.rt_val[i]) == CT_OK;
		ct_predict_result pr;
		ct_sim_result sr;
		memset(&pr, 0, sizeof pr);
		memset(&sr, 0, sizeof sr);
		if (ok && ct_kernel_predict(k, spec, &pr) == CT_OK && ct_kernel_simulate(k, spec, &sr) == CT_OK) {
			cases++;
			for (int l = 0; l < pr.nlevels; l++) {
				levels++;
				model += pr.source[l] == CT_SOURCE_MODEL && pr.level[l].exact;
				if (!pr.level[l].exact)
					continue;
				exact++;
				equal += pr.level[l].misses == sr.level[l].misses;
				if (pr.level[l].misses != sr.level[l].misses)
					fprintf(stderr, "  %s level %d: predict %lld, simulate %lld\n%s\n", spec, l,
					        (long long)pr.level[l].misses, (long long)sr.level[l].misses, c.src);
			}
		}
		ct_predict_result_free(&pr);
		ct_sim_result_free(&sr);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	printf("  predict on PLRU: %d cases, %d levels, %d exact (%d the model's), %d equal to the simulator\n",
	       cases, levels, exact, model, equal);
	CHECK(equal == exact);
	CHECK(exact * 10 >= levels * 9);
	CHECK(model * 10 >= levels * 8);
}

/* cold_certify on random kernels and random LRU caches: every level it proves to miss only
 * first touches misses, in the simulator, exactly the distinct lines (the misses of a fully
 * associative level that holds every line); some of them hold fewer lines than the kernel
 * touches (a proof beyond "never evicts"). */
#ifndef COLD_RANDOM_CASES
#define COLD_RANDOM_CASES 400
#endif
static void test_cold_random(void)
{
	rk_rng r = {WARP_RANDOM_SEED + 99};
	int cases = 0, levels = 0, proved = 0, equal = 0, beyond = 0;
	while (cases < COLD_RANDOM_CASES) {
		rk_case c;
		rk_generate(&r, &c);
		char spec[160];
		random_spec(&r, spec, sizeof spec);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse(ctx, c.src, strlen(c.src), "random.cachet");
		bool ok = k != NULL;
		for (int i = 0; ok && i < c.nrt; i++)
			ok = ct_kernel_set_param(k, c.rt_name[i], c.rt_val[i]) == CT_OK;
		sim_spec sp;
		ok = ok && sim_spec_parse(ctx, spec, &sp) == CT_OK;
		ct_looptree *t = ok ? ct_kernel_lower(k, 1) : NULL;
		bool want[SIM_MAX_LEVELS], cold[SIM_MAX_LEVELS];
		for (int l = 0; l < SIM_MAX_LEVELS; l++)
			want[l] = true;
		if (t && cold_certify(t, &sp, want, cold) == CT_OK) {
			cases++;
			/* the simulator on the spec, and on one fully associative level per line size that
			 * holds every line (its misses: the distinct lines) */
			sim_spec all = sp;
			for (int l = 0; l < sp.nlevels; l++) {
				all.level[sp.nlevels + l] = (sim_level){(int64_t)1 << 30, sp.level[l].line, 0, SIM_LRU, 0};
				all.nlevels++;
			}
			sim_buffer *buf = NULL;
			sim *s = NULL;
			uint64_t misses[SIM_MAX_LEVELS];
			bool ran = sim_tree_buffers(t, &buf) == CT_OK && (s = sim_new(ctx, &all, buf, t->narrays, 0)) &&
			           interp_trace_batch(t, feed, s) == CT_OK && sim_result(s, misses, NULL, NULL) == CT_OK;
			CHECK(ran);
			for (int l = 0; ran && l < sp.nlevels; l++) {
				levels++;
				if (!cold[l])
					continue;
				proved++;
				uint64_t distinct = misses[sp.nlevels + l];
				equal += misses[l] == distinct;
				beyond += distinct > (uint64_t)(sp.level[l].size / sp.level[l].line);
				if (misses[l] != distinct)
					fprintf(stderr, "  %s level %d: proved first touches only, simulator %llu, distinct %llu\n%s\n",
					        spec, l, (unsigned long long)misses[l], (unsigned long long)distinct, c.src);
			}
			sim_free(s);
			free(buf);
		}
		ct_looptree_free(t);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	printf("  cold: %d cases, %d levels, %d proved first touches only (%d touching more lines than the "
	       "level holds), %d equal\n",
	       cases, levels, proved, beyond, equal);
	CHECKF(equal == proved, "%d of %d equal", equal, proved);
	CHECK(proved > 0 && beyond > 0);
}

/* examples/dgemm.cachet at 192^3 (28M accesses, more than predict simulates; a main and a
 * tail block of rows) on an L2 of 1024 sets where the storages need 21 ways in a set (so it
 * may evict) but no line is evicted before its next use: cold_certify proves it (not the L1,
 * which evicts), warping alone would pass predict's budget (2^24) on it, and ct_kernel_predict
 * counts the level as the model's, exact, equal to the simulator's. */
static void test_cold_dgemm(void)
{
	FILE *f = fopen("examples/dgemm.cachet", "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	static char src[1 << 16];
	size_t n = fread(src, 1, sizeof src - 1, f);
	fclose(f);
	src[n] = 0;
	const char *spec = "32K:64:8,1M:64:16";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, n, "dgemm.cachet");
	CHECK(k != NULL);
	static const char *const names[] = {"M", "N", "K"};
	for (int i = 0; k && i < 3; i++)
		CHECK(ct_kernel_set_param(k, names[i], 192) == CT_OK);
	CHECK(k && ct_kernel_recheck(k) == CT_OK);
	sim_spec sp;
	CHECK(sim_spec_parse(ctx, spec, &sp) == CT_OK);
	ct_looptree *t = k ? ct_kernel_lower(k, 1) : NULL;
	bool want[SIM_MAX_LEVELS] = {true, true}, cold[SIM_MAX_LEVELS];
	CHECK(t && cold_certify(t, &sp, want, cold) == CT_OK);
	CHECKF(!cold[0] && cold[1], "cold %d %d", cold[0], cold[1]);
	warp_result w;
	bool l2[SIM_MAX_LEVELS] = {false, true};
	CHECK(t && warp_count(t, &sp, l2, (int64_t)1 << 24, &w) == CT_OK);
	CHECK(t && !w.done[1]);
	warp_result_free(&w);
	ct_looptree_free(t);
	ct_predict_result pr;
	ct_sim_result sr;
	memset(&pr, 0, sizeof pr);
	memset(&sr, 0, sizeof sr);
	CHECK(k && ct_kernel_predict(k, spec, &pr) == CT_OK);
	CHECK(pr.accesses > CT_PREDICT_SIM_MAX);
	CHECK(k && ct_kernel_simulate(k, spec, &sr) == CT_OK);
	for (int l = 0; l < 2; l++) {
		CHECKF(pr.source[l] == CT_SOURCE_MODEL && pr.level[l].exact, "level %d: source %d exact %d", l,
		       pr.source[l], pr.level[l].exact);
		CHECKF(pr.level[l].misses == sr.level[l].misses, "level %d: %lld, simulator %lld", l,
		       (long long)pr.level[l].misses, (long long)sr.level[l].misses);
	}
	int64_t sum = 0;
	for (int a = 0; a < pr.narrays; a++) {
		CHECK(pr.arrays[a].exact);
		sum += pr.arrays[a].misses[1];
	}
	CHECK(sum == pr.level[1].misses);
	printf("  dgemm 192 on %s: %lld, %lld misses (the L2 proved first touches only)\n", spec,
	       (long long)pr.level[0].misses, (long long)pr.level[1].misses);
	ct_predict_result_free(&pr);
	/* at its own size (256^3, 67.5M accesses) on this machine's kind of caches: the 2 MiB L2 is
	 * the model's, exact, the simulator's 33,024 (cachet simulate, 2026-11-29: every line of
	 * A, B, C and BB once and AA's 256) */
	ct_predict_result big;
	memset(&big, 0, sizeof big);
	for (int i = 0; k && i < 3; i++)
		CHECK(ct_kernel_set_param(k, names[i], 256) == CT_OK);
	CHECK(k && ct_kernel_recheck(k) == CT_OK);
	CHECK(k && ct_kernel_predict(k, "48K:64:12,2M:64:16,300M:64:20", &big) == CT_OK);
	CHECKF(big.source[1] == CT_SOURCE_MODEL && big.level[1].exact && big.level[1].misses == 33024,
	       "dgemm 256 L2: source %d exact %d misses %lld", big.source[1], big.level[1].exact,
	       (long long)big.level[1].misses);
	ct_predict_result_free(&big);
	ct_sim_result_free(&sr);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

int main(void)
{
	(void)rk_run; /* the header's runner: test_model_random's */
	RUN(test_table);
	RUN(test_random);
	RUN(test_random_plru);
	RUN(test_fallbacks);
	RUN(test_predict_long);
	RUN(test_predict_random_plru);
	RUN(test_cold_random);
	RUN(test_cold_dgemm);
	return h_report();
}
