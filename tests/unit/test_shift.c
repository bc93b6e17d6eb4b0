/* test_shift.c: vectorized loops that read an array at offsets of the vectorized index take those reads from lane shifts; every form equals the interpreter bit for bit. */
#include "cachet.h"
#include "harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Sums of reads at offsets -3 .. +3 (two of them divided, so that a lane
 * taken from the wrong offset changes the result). */
#define SUM1(T) "B[i] = ((((((A[i-3] + A[i-2]) + A[i-1] / 2) + A[i]) - A[i+1]) + A[i+2] / 3) + A[i+3]) / 7\n"
#define SUM2 "B[x, y] = (((((((A[x, y-3] + A[x, y-2]) + A[x, y-1] / 2) + A[x, y]) - A[x, y+1]) + A[x, y+2] / 3) + A[x, y+3]) + A[x-1, y]) / 7\n"
#define STENCIL                                                                             \
	"for (x: N, y: M) {\n"                                                              \
	"  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"                                   \
	"    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"     \
	"  } else {\n    B[x, y] = A[x, y]\n  }\n}\n"

typedef struct scase {
	const char *name, *text;
	int vector_bytes; /* CT_OPT_VECTOR_BYTES */
	int threads;
	int wins;         /* windows built per vector step of the emitted code (calls of *_win), at least; 0: none */
} scase;

static const scase cases[] = {
	{"1-D f32, offsets -3..3, N = 1000",
	 "kernel s1\nparam N = 1000\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: 3 .. N-3) {\n  " SUM1(f32) "}\nplan {\n  vectorize(i)\n}\n", 64, 1, 6},
	{"1-D f64, offsets -3..3, N = 997",
	 "kernel s2\nparam N = 997\narray A : f64[N] input\narray B : f64[N] output\n"
	 "for (i: 3 .. N-3) {\n  " SUM1(f64) "}\nplan {\n  vectorize(i)\n}\n", 64, 1, 6},
	{"1-D f64, 16-byte vectors: only -1 and +1 fit in 2 lanes",
	 "kernel s3\nparam N = 101\narray A : f64[N] input\narray B : f64[N] output\n"
	 "for (i: 3 .. N-3) {\n  " SUM1(f64) "}\nplan {\n  vectorize(i)\n}\n", 16, 1, 2},
	{"1-D f32, 32-byte vectors, runtime N",
	 "kernel s4\nparam N : runtime\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: 3 .. N-3) {\n  " SUM1(f32) "}\nplan {\n  vectorize(i)\n}\n", 32, 1, 6},
	{"2-D f32, rows not aligned (M = 101)",
	 "kernel s5\nparam N = 9, M = 101\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	 "for (x: 1 .. N, y: 3 .. M-3) {\n  " SUM2 "}\nplan {\n  vectorize(y)\n}\n", 64, 1, 6},
	{"2-D f64, nontemporal, parallel rows (M = 77)",
	 "kernel s6\nparam N = 12, M = 77\narray A : f64[N, M] input\narray B : f64[N, M] output\n"
	 "for (x: 1 .. N, y: 3 .. M-3) {\n  " SUM2 "}\nplan {\n  vectorize(y, nontemporal=true)\n  parallelize(x)\n}\n",
	 64, 2, 6},
	{"2-D f32, nontemporal, rows not aligned (M = 101)",
	 "kernel s7\nparam N = 7, M = 101\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	 "for (x: 1 .. N, y: 3 .. M-3) {\n  " SUM2 "}\nplan {\n  vectorize(y, nontemporal=true)\n}\n", 64, 1, 6},
	{"stencil, boundary split, nontemporal, parallel (f32 100 x 100)",
	 "kernel s8\nparam N = 100, M = 100\narray A : f32[N, M] input\narray B : f32[N, M] output\n" STENCIL
	 "plan {\n  vectorize(y, nontemporal=true)\n  parallelize(x)\n}\n", 64, 2, 2},
	{"stencil, boundary split, plain vectors (f64 50 x 77)",
	 "kernel s9\nparam N = 50, M = 77\narray A : f64[N, M] input\narray B : f64[N, M] output\n" STENCIL
	 "plan {\n  vectorize(y)\n}\n", 64, 1, 2},
	{"stencil, runtime sizes, 32-byte vectors (f32)",
	 "kernel s10\nparam N : runtime, M : runtime\narray A : f32[N, M] input\narray B : f32[N, M] output\n" STENCIL
	 "plan {\n  vectorize(y)\n}\n", 32, 1, 2},
	{"split loop with tails: vectorize(yy) over 64 of M = 150",
	 "kernel s11\nparam N = 5, M = 150\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
	 "for (x: 1 .. N, y: 3 .. M-3) {\n  " SUM2 "}\nschedule {\n  yy = split(y, 64)\n}\nplan {\n  vectorize(yy)\n}\n",
	 64, 1, 6},
	{"only positive offsets",
	 "kernel s12\nparam N = 70\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: 0 .. N-2) {\n  B[i] = A[i+1] / 2 - A[i+2]\n}\nplan {\n  vectorize(i)\n}\n", 64, 1, 2},
	{"only a negative offset, nontemporal",
	 "kernel s13\nparam N = 70\narray A : f64[N] input\narray B : f64[N] output\n"
	 "for (i: 1 .. N) {\n  B[i] = A[i-1] * 2\n}\nplan {\n  vectorize(i, nontemporal=true)\n}\n", 64, 1, 1},
	{"the written array stays as it is; offsets beyond the vector stay loads",
	 "kernel s14\nparam N = 90\narray A : f32[N] input\narray B : f32[N] inout\n"
	 "for (i: 20 .. N-20) {\n  B[i] = B[i] + A[i-1] + A[i+17] + A[i-20]\n}\nplan {\n  vectorize(i)\n}\n", 64, 1, 1},
	{"no offsets: no windows",
	 "kernel s15\nparam N = 90\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: N) {\n  B[i] = A[i] * 2\n}\nplan {\n  vectorize(i)\n}\n", 64, 1, 0},
	{"1-D f32 that reads A from A[5] on",
	 "kernel s17\nparam N = 1000\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: 8 .. N-3) {\n  " SUM1(f32) "}\nplan {\n  vectorize(i)\n}\n", 64, 1, 6},
	{"1-D f32 that reads A from A[5] on, nontemporal",
	 "kernel s18\nparam N = 1000\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: 8 .. N-3) {\n  " SUM1(f32) "}\nplan {\n  vectorize(i, nontemporal=true)\n}\n", 64, 1, 6},
	{"the centre and one negative offset, odd N (centre from the step's vector)",
	 "kernel s19\nparam N = 203\narray A : f32[N] input\narray B : f32[N] output\n"
	 "for (i: 1 .. N) {\n  B[i] = A[i] / 3 - A[i-1]\n}\nplan {\n  vectorize(i)\n}\n", 64, 1, 1},
	{"the centre and one positive offset, nontemporal, parallel rows (f64 9 x 45)",
	 "kernel s20\nparam N = 9, M = 45\narray A : f64[N, M] input\narray B : f64[N, M] output\n"
	 "for (x: N, y: 0 .. M-1) {\n  B[x, y] = A[x, y+1] * 2 - A[x, y] / 3\n}\n"
	 "plan {\n  vectorize(y, nontemporal=true)\n  parallelize(x)\n}\n", 64, 2, 1},
	{"short rows: fewer elements than one window step (M = 9)",
	 "kernel s16\nparam N = 4, M = 9\narray A : f32[N, M] input\narray B : f32[N, M] output\n" STENCIL
	 "plan {\n  vectorize(y, nontemporal=true)\n}\n", 64, 1, 2},
};

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

/* The case of kernel name. */
static const scase *find_case(const char *name)
{
	char key[32];
	snprintf(key, sizeof key, "kernel %s\n", name);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (strncmp(cases[i].text, key, strlen(key)) == 0)
			return &cases[i];
	return NULL;
}

/* Case c parsed in ctx with its options; runtime params set. */
static ct_kernel *load(ct_ctx *ctx, const scase *c)
{
	CHECK(ct_ctx_set_option(ctx, CT_OPT_VECTOR_BYTES, c->vector_bytes) == CT_OK);
	ct_kernel *k = ct_kernel_parse(ctx, c->text, strlen(c->text), c->name);
	CHECKF(k != NULL, "%s: %s", c->name, ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : "");
	if (!k)
		return NULL;
	for (int i = 0; i < ct_kernel_param_count(k); i++) {
		const char *p = ct_kernel_param_name(k, i);
		if (strstr(c->text, "runtime") && (strcmp(p, "N") == 0 || strcmp(p, "M") == 0))
			CHECK(ct_kernel_set_param(k, p, strcmp(p, "N") == 0 ? 61 : 53) == CT_OK);
	}
	CHECK(ct_kernel_recheck(k) == CT_OK);
	return k;
}

/* Every case, compiled by the default compiler (and by cc, when given):
 * windows where expected, and the same values as the interpreter. With
 * another compiler the parallel cases are left out: clang's OpenMP runtime
 * (libomp) loaded next to libgomp crashes LeakSanitizer's exit scan in the
 * sanitizer build, and their windows are those of the serial cases. */
static void verify_all(const char *cc)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const scase *c = &cases[i];
		if (cc && strstr(c->text, "parallelize"))
			continue;
		ct_ctx *ctx = ct_ctx_new();
		if (cc)
			CHECK(ct_ctx_set_compiler(ctx, cc) == CT_OK);
		ct_kernel *k = load(ctx, c);
		char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
		CHECKF(src != NULL, "%s: %s", c->name, ct_ctx_last_message(ctx));
		if (src) {
			int wins = count(src, "_win(ct_sw");
			CHECKF(c->wins ? wins >= c->wins : wins == 0, "%s: %d windows, expected %d:\n%s", c->name, wins,
			       c->wins, src);
		}
		free(src);
		ct_run_options o;
		ct_run_options_init(&o);
		o.threads = c->threads;
		ct_run_result r;
		ct_status st = k ? ct_kernel_run(k, &o, &r) : CT_ERR_INPUT;
		CHECKF(st == CT_OK && r.verified == 1 && r.max_rel_error == 0, "%s (%s): %s, max rel error %g", c->name,
		       cc ? cc : "cc", ct_ctx_last_message(ctx), st == CT_OK ? r.max_rel_error : -1.0);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

static void test_cases_equal_interpreter(void) { verify_all(NULL); }

/* The form that clang compiles (a local pair of vectors, no GCC shuffle). */
static void test_cases_clang(void)
{
	if (access("/usr/bin/clang", X_OK) != 0) {
		printf("test_shift: no /usr/bin/clang, its form not checked\n");
		return;
	}
	verify_all("clang");
}

typedef int (*entry_fn)(void *const *args, const int64_t *params); /* 0, or 1: out of memory */

/* Run src's kernel name on A into B. */
static int run_src(ct_ctx *ctx, const char *src, const char *name, void *a, void *b)
{
	ct_compile_options co;
	ct_compile_options_init(&co);
	ct_module *m = NULL;
	if (ct_module_load(ctx, src, strlen(src), &co, &m, NULL) != CT_OK)
		return -1;
	char sym[64];
	snprintf(sym, sizeof sym, "cachet_%s_entry", name);
	void *e = ct_module_symbol(m, sym);
	if (!e)
		return -1;
	entry_fn f;
	memcpy(&f, &e, sizeof f);
	void *const args[2] = {a, b};
	const int64_t params[1] = {0};
	f(args, params);
	return 0;
}

/* A compiler without GNU vector extensions gets plain unaligned loads
 * into the windows: the emitted text with __GNUC__ taken as undefined
 * computes the same bits as the vector form. */
static void test_portable_fallback(void)
{
	const scase *c = find_case("s5"); /* 2-D f32, M = 101 */
	CHECK(c != NULL);
	if (!c)
		return;
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = load(ctx, c);
	char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
	CHECK(src != NULL);
	if (src) {
		size_t len = strlen(src);
		char *plain = malloc(len + 1);
		CHECK(plain != NULL);
		if (plain) {
			memcpy(plain, src, len + 1);
			int n = 0;
			for (char *p = plain; (p = strstr(p, "defined(__GNUC__)")) != NULL; n++)
				memcpy(p, "(0 && __GNUC__)  ", 17);
			CHECKF(n >= 2, "%d", n);
			enum { COUNT = 9 * 101 };
			float a[COUNT], b1[COUNT], b2[COUNT];
			ct_fill_random(a, CT_F32, COUNT, 7, 0);
			memset(b1, 0, sizeof b1);
			memset(b2, 0, sizeof b2);
			CHECK(run_src(ctx, src, "s5", a, b1) == 0);
			CHECK(run_src(ctx, plain, "s5", a, b2) == 0);
			CHECK(memcmp(b1, b2, sizeof b1) == 0);
			/* and both the loop's values (B is 0 outside the loop) */
			int bad = 0;
			for (int x = 0; x < 9; x++)
				for (int y = 0; y < 101; y++) {
					const float *r = &a[x * 101 + y];
					float e = x >= 1 && y >= 3 && y < 98
					                  ? (((((((r[-3] + r[-2]) + r[-1] / 2) + r[0]) - r[1]) + r[2] / 3) + r[3]) + r[-101]) / 7
					                  : 0;
					bad += b1[x * 101 + y] != e;
				}
			CHECKF(bad == 0, "%d elements differ", bad);
			free(plain);
		}
	}
	free(src);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The windows' whole-vector loads stay within the elements the loop reads:
 * with the first element the kernel reads just after an unmapped page, and
 * then with A's last element just before one, the 1-D kernels run without
 * a fault and compute the sums of their reads. The kernels that read from
 * A[5] on put A[0..5) in the unmapped page; streamed (s18), their vector
 * steps start on B's line boundaries, not A's vector boundaries, so that a
 * step that loaded below A[5] or past A's end would fault. */
static void test_loads_in_bounds(void)
{
	static const struct {
		const char *name; /* the case's kernel */
		size_t es, n;     /* element size, elements */
		size_t first;     /* first element read */
	} runs[] = {{"s1", 4, 1000, 0}, {"s2", 8, 997, 0}, {"s17", 4, 1000, 5}, {"s18", 4, 1000, 5}};
	long page = sysconf(_SC_PAGESIZE);
	for (size_t u = 0; u < sizeof runs / sizeof runs[0]; u++) {
		const char *name = runs[u].name;
		const scase *sc = find_case(name);
		CHECK(sc != NULL);
		if (!sc)
			continue;
		size_t es = runs[u].es, n = runs[u].n, first = runs[u].first, bytes = n * es;
		size_t span = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page + (size_t)page;
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = load(ctx, sc);
		char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
		CHECK(src != NULL);
		char *map = mmap(NULL, span + 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(map != MAP_FAILED);
		/* B on a line boundary: the streamed steps start where B[i] is */
		double *b = aligned_alloc(64, (n * 8 + 63) / 64 * 64), *ref = calloc(n, 8);
		if (src && map != MAP_FAILED && b && ref) {
			CHECK(mprotect(map, (size_t)page, PROT_NONE) == 0);
			CHECK(mprotect(map + (size_t)page + span, (size_t)page, PROT_NONE) == 0);
			/* guard before the first element read, guard after the last */
			char *at[2] = {map + page - first * es, map + page + span - bytes};
			for (int g = 0; g < 2; g++) {
				ct_fill_random(at[g] + first * es, es == 4 ? CT_F32 : CT_F64, (int64_t)(n - first), 3, 0);
				memset(b, 0, n * 8);
				CHECK(run_src(ctx, src, name, at[g], b) == 0);
				if (g == 0)
					memcpy(ref, b, n * 8);
				else
					CHECK(memcmp(ref, b, n * es) == 0);
			}
			int bad = 0;
			for (size_t i = first + 3; i + 3 < n; i++) {
				double e;
				if (es == 4) {
					const float *r = (const float *)at[1] + i;
					e = (((((((r[-3] + r[-2]) + r[-1] / 2) + r[0]) - r[1]) + r[2] / 3) + r[3]) / 7);
					bad += ((const float *)b)[i] != (float)e;
				} else {
					const double *r = (const double *)at[1] + i;
					e = (((((((r[-3] + r[-2]) + r[-1] / 2) + r[0]) - r[1]) + r[2] / 3) + r[3]) / 7);
					bad += b[i] != e;
				}
			}
			CHECKF(bad == 0, "%s: %d elements differ", sc->name, bad);
		}
		if (map != MAP_FAILED)
			munmap(map, span + 2 * (size_t)page);
		free(b);
		free(ref);
		free(src);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* The reads at offset 0 of a group with windows take the lanes of the
 * step's own vector (ct_szK, a copy of ct_svqK), not a second load; the
 * vector steps run to one limit computed before the loop. A kernel without
 * windows (s15) and the array the statement writes (s14) keep their loads. */
static void test_centre_from_vector(void)
{
	static const struct {
		const char *name;
		int centre;  /* reads of A at offset 0 from ct_sz */
		int stream; /* streamed lines (the limit named ct_sh_end_) or plain vectors (ct_sv_last) */
	} want[] = {{"s1", 1, 0}, {"s8", 1, 1}, {"s9", 1, 0}, {"s19", 1, 0}, {"s20", 1, 1}, {"s12", 0, 0},
	            {"s13", 0, 1}, {"s14", 0, 0}, {"s15", 0, 0}};
	for (size_t u = 0; u < sizeof want / sizeof want[0]; u++) {
		const scase *c = find_case(want[u].name);
		CHECK(c != NULL);
		if (!c)
			continue;
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = load(ctx, c);
		char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
		CHECK(src != NULL);
		if (src) {
			/* per vector step: the declaration and the memcpy name ct_szK three times, the reads after */
			int copies = count(src, "memcpy(ct_sz"), has = copies > 0 && count(src, "ct_sz") > 3 * copies;
			CHECKF(has == (want[u].centre != 0), "%s: centre from the vector %d, expected %d:\n%s", c->name, has,
			       want[u].centre, src);
			if (strcmp(want[u].name, "s15") != 0) {
				const char *lim = want[u].stream ? "ct_nt_y <= ct_sh_end_y" : "<= ct_sv_last;";
				if (strcmp(want[u].name, "s13") == 0)
					lim = "ct_nt_i <= ct_sh_end_i";
				CHECKF(strstr(src, lim) != NULL, "%s: no '%s' in:\n%s", c->name, lim, src);
			}
			if (strcmp(want[u].name, "s14") == 0)
				CHECKF(strstr(src, "ct_sz") == NULL, "%s: the written array from a window:\n%s", c->name, src);
		}
		free(src);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

/* Each vector step prefetches the leading row of each array only: A[x+1, y]
 * of the stencil (not rows x-1 and x, which the caches hold), row x where
 * the kernel reads rows x-1 and x (s5), the one row of a 1-D kernel; a
 * kernel without windows (s15) prefetches nothing. The prefetch changes no
 * result (test_cases_equal_interpreter) and does not fault past the
 * array's end (test_loads_in_bounds, s1 and s18: the prefetch of the last
 * steps lies in the unmapped page). */
static void test_prefetch_leading_row(void)
{
	static const struct {
		const char *name;
		const char *want; /* in every prefetch line; NULL: no prefetch */
		const char *not1, *not2;
	} want[] = {{"s8", "&A[(x + 1) * 100 + ", "(x - 1)", "&A[x * "},
	            {"s10", "&A[(x + 1) * M + ", "(x - 1)", "&A[x * "},
	            {"s6", "&A[x * 77 + ", "(x - 1)", NULL},
	            {"s5", "&A[x * 101 + ", "(x - 1)", NULL},
	            {"s1", "&A[ct_sv_i]", NULL, NULL},
	            {"s15", NULL, NULL, NULL}};
	for (size_t u = 0; u < sizeof want / sizeof want[0]; u++) {
		const scase *c = find_case(want[u].name);
		CHECK(c != NULL);
		if (!c)
			continue;
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = load(ctx, c);
		char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
		CHECK(src != NULL);
		if (src) {
			int calls = 0;
			for (const char *p = src; (p = strstr(p, "ct_prefetch((uintptr_t)(")) != NULL; p++) {
				const char *e = strchr(p, '\n');
				size_t len = e ? (size_t)(e - p) : strlen(p);
				char line[256];
				snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
				calls++;
				CHECKF(want[u].want && strstr(line, want[u].want) != NULL, "%s: prefetch '%s'", c->name, line);
				CHECKF(!want[u].not1 || strstr(line, want[u].not1) == NULL, "%s: prefetch '%s'", c->name, line);
				CHECKF(!want[u].not2 || strstr(line, want[u].not2) == NULL, "%s: prefetch '%s'", c->name, line);
			}
			CHECKF((calls > 0) == (want[u].want != NULL), "%s: %d prefetches:\n%s", c->name, calls, src);
		}
		free(src);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
}

int main(void)
{
	RUN(test_cases_equal_interpreter);
	RUN(test_cases_clang);
	RUN(test_portable_fallback);
	RUN(test_loads_in_bounds);
	RUN(test_centre_from_vector);
	RUN(test_prefetch_leading_row);
	return h_report();
}
