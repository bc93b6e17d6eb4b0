/* test_model_random.c: the model (alone, and through predict with its simulator fallback) never
 * calls a count exact that the simulator contradicts, on a fixed-seed run of the model bench's
 * random (kernel, schedule, cache) cases (bench_model --random). */
#include "../../bench/model/random_kernels.h"

#include "harness.h"

/* 150 cases of every family from seed 7: every case runs, and every count the model calls
 * exact equals the simulator's. */
static void test_never_claims_exact_wrongly(void)
{
	rk_stats s;
	CHECK(rk_run(150, 7, &s, stderr));
	CHECKF(s.cases == 150 && s.failed == 0, "%d cases, %d failures", s.cases, s.failed);
	CHECKF(s.wrong_claims == 0, "%d wrong exact claims", s.wrong_claims);
	int fam[RK_NFAM] = {0};
	for (int i = 0; i < s.cases; i++) {
		fam[s.res[i].family]++;
		if (s.res[i].claimed_exact)
			CHECK(s.res[i].predicted == s.res[i].simulated);
	}
	for (int f = 0; f < RK_NFAM; f++)
		CHECKF(fam[f] > 0, "no case of %s", rk_family_name[f]);
	/* the model is exact on most of them (98.5% on the bench's seed 1) */
	CHECKF(s.equal * 100 >= 90 * s.cases, "exact on %d of %d", s.equal, s.cases);
	free(s.res);
}

/* The model alone (no simulator fallback) on 150 cases of seed 7, with partial enumeration
 * (enum AUTO) or the analysis alone (NEVER): it never calls a count exact that the simulator
 * contradicts (set-associative levels, predicted as fully associative, are never called exact),
 * and it is exact on most fully associative ones. */
static void model_alone_cases(model_enum_mode mode)
{
	rk_stats s;
	rk_model_only = true;
	rk_enumerate = mode;
	bool ok = rk_run(150, 7, &s, stderr);
	rk_model_only = false;
	rk_enumerate = MODEL_ENUM_AUTO;
	CHECK(ok);
	CHECKF(s.cases == 150 && s.failed == 0, "%d cases, %d failures", s.cases, s.failed);
	CHECKF(s.wrong_claims == 0, "%d wrong exact claims", s.wrong_claims);
	int fa = 0, fa_equal = 0;
	for (int i = 0; i < s.cases; i++) {
		const rk_result *x = &s.res[i];
		CHECK(!x->simulated_by_predict);
		if (x->claimed_exact)
			CHECK(x->predicted == x->simulated && !x->set_assoc);
		if (!x->set_assoc) {
			fa++;
			fa_equal += x->predicted == x->simulated;
		}
	}
	CHECKF(fa_equal * 100 >= 95 * fa, "exact on %d of %d fully associative cases", fa_equal, fa);
	int64_t enumerated = 0;
	for (int i = 0; i < s.cases; i++)
		enumerated += s.res[i].enumerated;
	CHECK(mode == MODEL_ENUM_AUTO ? enumerated > 0 : enumerated == 0);
	free(s.res);
}

static void test_model_alone_never_claims_exact_wrongly(void) { model_alone_cases(MODEL_ENUM_AUTO); }

static void test_analysis_alone_never_claims_exact_wrongly(void) { model_alone_cases(MODEL_ENUM_NEVER); }

/* predict's fallback on the same cases: every simulated count is the simulator's and says why;
 * set-associative levels are counted exactly, by the model's own simulation with warping
 * (source model, no fallback) or, where that cannot, by the simulator (their traces are
 * short). */
static void test_predict_fallback_reasons(void)
{
	rk_stats s;
	CHECK(rk_run(150, 7, &s, stderr));
	int sa = 0, sa_model = 0;
	for (int i = 0; i < s.cases; i++) {
		const rk_result *x = &s.res[i];
		if (x->simulated_by_predict)
			CHECK(x->predicted == x->simulated && x->fallback != CT_FALLBACK_NONE);
		else
			CHECK(x->fallback == CT_FALLBACK_NONE);
		if (x->set_assoc) {
			sa++;
			CHECK(x->claimed_exact && x->predicted == x->simulated);
			if (x->simulated_by_predict)
				CHECK(x->fallback == CT_FALLBACK_SET_ASSOC);
			else
				sa_model++;
		}
	}
	CHECKF(sa > 0, "no set-associative case");
	CHECKF(sa_model * 10 >= sa * 8, "%d of %d set-associative cases counted by the model", sa_model, sa);
	free(s.res);
}

/* The generator is deterministic: the same seed gives the same cases. */
static void test_generator_deterministic(void)
{
	rk_rng a = {42}, b = {42};
	rk_case x, y;
	for (int i = 0; i < 50; i++) {
		rk_generate(&a, &x);
		rk_generate(&b, &y);
		CHECK(strcmp(x.src, y.src) == 0 && strcmp(x.spec, y.spec) == 0);
	}
}

int main(void)
{
	RUN(test_never_claims_exact_wrongly);
	RUN(test_model_alone_never_claims_exact_wrongly);
	RUN(test_analysis_alone_never_claims_exact_wrongly);
	RUN(test_predict_fallback_reasons);
	RUN(test_generator_deterministic);
	return h_report();
}
