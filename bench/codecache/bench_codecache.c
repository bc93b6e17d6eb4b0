/* bench_codecache.c: cold compile vs disk hit (verify + dlopen) vs memory hit of the code cache, as
 * a table. */
#include "jit/jit.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bench_util.h"

/*
 * Usage: bench_codecache [REPEATS]   (default 40 disk hits per source)
 * Uses a private temporary cache folder, removed at the end. The compiler
 * probe (cc --version, cc -### -march=native) is paid once per ctx and is
 * shown on its own line; the disk-hit column is a lookup in a ctx that
 * already knows its compiler, as in a long-running process.
 */

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* A generated-looking source: nk small kernels (f0 ... f{nk-1}). */
static char *many_kernels(int nk)
{
	size_t cap = (size_t)nk * 400 + 64;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	size_t n = 0;
	n += (size_t)snprintf(s + n, cap - n, "#include <stddef.h>\n");
	for (int k = 0; k < nk; k++)
		n += (size_t)snprintf(
		    s + n, cap - n,
		    "void f%d(size_t n, float *restrict y, const float *restrict x)\n"
		    "{\n"
		    "\tfor (size_t i = 0; i < n; i++)\n"
		    "\t\ty[i] = y[i] * %d.5f + x[i] * x[i] - %d.25f;\n"
		    "}\n",
		    k, k % 7 + 1, k % 5);
	return s;
}

static const char axpy[] =
    "#include <stddef.h>\n"
    "void axpy(size_t n, float a, const float *restrict x, float *restrict y)\n"
    "{\n"
    "\tfor (size_t i = 0; i < n; i++)\n"
    "\t\ty[i] += a * x[i];\n"
    "}\n";

static const char matmul[] =
    "#include <stddef.h>\n"
    "#define N 256\n"
    "#define T 32\n"
    "void matmul(const float *restrict A, const float *restrict B, float *restrict C)\n"
    "{\n"
    "\tfor (int ii = 0; ii < N; ii += T)\n"
    "\t\tfor (int kk = 0; kk < N; kk += T)\n"
    "\t\t\tfor (int jj = 0; jj < N; jj += T) {\n"
    "\t\t\t\tfloat cache_B[T][T];\n"
    "\t\t\t\tfor (int k = 0; k < T; k++)\n"
    "\t\t\t\t\tfor (int j = 0; j < T; j++)\n"
    "\t\t\t\t\t\tcache_B[k][j] = B[(kk + k) * N + jj + j];\n"
    "\t\t\t\tfor (int i = ii; i < ii + T; i++)\n"
    "\t\t\t\t\tfor (int k = 0; k < T; k++) {\n"
    "\t\t\t\t\t\tfloat a = A[i * N + kk + k];\n"
    "\t\t\t\t\t\tfor (int j = 0; j < T; j++)\n"
    "\t\t\t\t\t\t\tC[i * N + jj + j] += a * cache_B[k][j];\n"
    "\t\t\t\t\t}\n"
    "\t\t\t}\n"
    "}\n";

typedef struct row {
	const char *name;
	const char *src;
	int openmp;
} row;

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 40;
	if (reps < 3)
		reps = 3;
	char dir[] = "/tmp/cachet-bench-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char *big = many_kernels(64);
	if (!big)
		return 1;
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 1;
	/* the generated C of the examples (run from the repository root), then
	 * two hand-written sources and a large one */
	static const char *const examples[] = {"matmul", "two_index", "stencil5", "transpose", "axpy_runtime"};
	row rows[16];
	char names[16][64];
	int nrows = 0;
	for (size_t e = 0; e < sizeof examples / sizeof *examples; e++) {
		char path[256];
		snprintf(path, sizeof path, "examples/%s.cachet", examples[e]);
		ct_kernel *k = ct_kernel_parse_file(ctx, path);
		char *src = k ? ct_kernel_emit(k, NULL, NULL) : NULL;
		ct_kernel_free(k);
		if (!src) {
			fprintf(stderr, "bench: %s: %s (run from the repository root)\n", path,
			        ct_ctx_last_message(ctx));
			return 1;
		}
		snprintf(names[nrows], sizeof names[nrows], "examples/%s", examples[e]);
		rows[nrows] = (row){names[nrows], src, 0};
		nrows++;
	}
	rows[nrows++] = (row){"axpy (6 lines)", axpy, 0};
	rows[nrows++] = (row){"tiled matmul (20 lines)", matmul, 0};
	rows[nrows++] = (row){"64 kernels (320 lines)", big, 0};
	ct_cache_set_dir(ctx, dir);
	/* the probe: paid once per ctx */
	double t0 = ct_now();
	char hex[JIT_DIGEST_HEX];
	if (jit_key(ctx, axpy, strlen(axpy), NULL, hex, NULL) != CT_OK) {
		fprintf(stderr, "bench: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	double probe = ct_now() - t0;

	printf("code cache: cold compile vs disk hit vs memory hit (median; cache in %s)\n\n", dir);
	printf("%-26s %7s %11s %11s %11s %10s %10s\n", "source", "bytes", "cold ms", "disk us",
	       "memory ns", "cold/disk", "disk/mem");
	bool ok = true;
	double worst_disk = 0, worst_mem = 0;
	for (int r = 0; r < nrows; r++) {
		const char *src = rows[r].src;
		size_t len = strlen(src);
		ct_compile_options o;
		ct_compile_options_init(&o);
		o.openmp = rows[r].openmp;
		ct_module *m;
		ct_load_info info;
		double cold[3], *disk = malloc((size_t)reps * sizeof *disk);
		if (!disk)
			return 1;
		/* cold: compile + load + publish, from an empty folder */
		for (int i = 0; i < 3; i++) {
			jit_forget_memo(ctx);
			ct_cache_clear(ctx);
			if (ct_module_load(ctx, src, len, &o, &m, &info) != CT_OK ||
			    strcmp(info.how, "compiled") != 0) {
				fprintf(stderr, "bench: %s\n", ct_ctx_last_message(ctx));
				return 1;
			}
			cold[i] = info.seconds;
		}
		/* disk: checksum + key compare + dlopen; the unload before is
		 * not timed */
		for (int i = 0; i < reps; i++) {
			jit_forget_memo(ctx);
			if (ct_module_load(ctx, src, len, &o, &m, &info) != CT_OK ||
			    strcmp(info.how, "disk") != 0) {
				fprintf(stderr, "bench: not a disk hit: %s\n",
				        ct_ctx_last_message(ctx));
				return 1;
			}
			disk[i] = info.seconds;
		}
		/* memory: the loop around the lookup is included */
		int n = 1000000;
		double m0 = ct_now();
		for (int i = 0; i < n; i++)
			if (jit_load(ctx, src, len, &o, &m, NULL, NULL) != CT_OK)
				return 1;
		double mem = (ct_now() - m0) / n;
		double c = median(cold, 3), d = median(disk, reps);
		free(disk);
		printf("%-26s %7zu %11.1f %11.1f %11.0f %9.0fx %9.0fx\n", rows[r].name, len,
		       c * 1e3, d * 1e6, mem * 1e9, c / d, d / mem);
		if (d > worst_disk)
			worst_disk = d;
		if (mem > worst_mem)
			worst_mem = mem;
	}
	/* a fresh ctx pays the compiler probe before its first disk hit */
	double fresh[5];
	for (int i = 0; i < 5; i++) {
		ct_ctx *c2 = ct_ctx_new();
		ct_cache_set_dir(c2, dir);
		ct_module *m;
		ct_load_info info;
		if (!c2 || ct_module_load(c2, axpy, strlen(axpy), NULL, &m, &info) != CT_OK)
			return 1;
		fresh[i] = info.seconds;
		ct_ctx_free(c2);
	}
	printf("\ncompiler probe (once per ctx): %.1f ms; first disk hit in a fresh ctx: %.1f ms\n",
	       probe * 1e3, median(fresh, 5) * 1e3);
	ok = worst_mem <= 1e-6 && worst_disk <= 200e-6;
	printf("targets: memory hit <= 1 us: %s (worst %.0f ns); disk hit <= 200 us: %s (worst "
	       "%.1f us)\n",
	       worst_mem <= 1e-6 ? "met" : "MISSED", worst_mem * 1e9,
	       worst_disk <= 200e-6 ? "met" : "MISSED", worst_disk * 1e6);
	ct_ctx_free(ctx);
	free(big);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return ok ? 0 : 1;
}
