/* bench_opencl.c: sgemm on the OpenCL device (PoCL): cachet's generated kernel vs CLBlast, and cold build vs binary load times. */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <clblast_c.h>
#include <dlfcn.h>

#include "cachet.h"
#include "gen/ocl.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_util.h"

/*
 * For each size n (M = N = K = n): the kernel of examples/opencl_sgemm.cachet
 * (source and NDRange from cachet's OpenCL backend) and CLBlastSgemm run on
 * the same device, queue and buffers; each timed run starts from C = 0
 * (the reset is not timed) and is enqueue .. clFinish; the median of
 * `reps` runs is reported. The C of each one's last timed run is
 * compared with the other's (|a - b| <= 1e-4 * max|C| + 1e-6), and 256
 * sampled elements of cachet's with a double-precision host sum: a
 * mismatch fails the bench. CLBlast runs with Xgemm parameters tuned for
 * the device by its own tuner (clblast_setup), and the header says which. Build times: source -> kernel ready (clBuildProgram,
 * clCreateKernel and the first launch, where PoCL compiles the work-group
 * function), with PoCL's own kernel cache off (POCL_KERNEL_CACHE=0), vs
 * binary -> kernel ready (clCreateProgramWithBinary, clBuildProgram,
 * clCreateKernel), the binary taken after the first launch, as the
 * library's code cache does: "load(same)" in this process (PoCL's cache
 * off, median of 5), "fresh 1st" in a new process whose PoCL cache folder
 * is empty, "fresh" the median of 5 new processes after it (PoCL's cache
 * on, as a user's next runs see it), "launch" their first launch.
 */

#define DIE(...)                                                                                     \
	do {                                                                                         \
		fprintf(stderr, "bench_opencl: " __VA_ARGS__);                                       \
		fputc('\n', stderr);                                                                 \
		exit(1);                                                                             \
	} while (0)

typedef struct dev {
	cl_device_id d;
	cl_context cx;
	cl_command_queue q;
} dev;

/* NAME=VALUE settings of the kernel's params besides M, N, K (the tuner's winner, --tune-budget). */
static char g_set[16][80];
static int g_nset;

/* Apply g_set to k: 0, or the failing status. */
static ct_status apply_settings(ct_kernel *k)
{
	for (int i = 0; i < g_nset; i++) {
		char name[64];
		long long v;
		ct_status st = sscanf(g_set[i], "%63[^=]=%lld", name, &v) == 2 ? ct_kernel_set_param(k, name, v) : CT_ERR_INPUT;
		if (st != CT_OK)
			return st;
	}
	return CT_OK;
}

/* Tune file's tunable params at size n on the OpenCL device (ct_tune, budget seconds) and keep the
 * winner in g_set; what happened into desc. */
static void tune_kernel(const char *file, int n, double budget, char *desc, size_t cap)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse_file(ctx, file);
	if (!k || ct_kernel_set_param(k, "M", n) || ct_kernel_set_param(k, "N", n) || ct_kernel_set_param(k, "K", n) ||
	    ct_kernel_recheck(k))
		DIE("%s: %s", file, ct_ctx_last_message(ctx));
	ct_tune_options to;
	ct_tune_options_init(&to);
	to.budget = budget;
	ct_tune_result r;
	memset(&r, 0, sizeof r);
	double t0 = now();
	if (ct_tune(k, &to, &r) != CT_OK || r.best < 0) {
		snprintf(desc, cap, "not tuned: %s", r.best < 0 ? "no verified candidate" : ct_ctx_last_message(ctx));
	} else {
		size_t used = (size_t)snprintf(desc, cap, "tuned on this device at n=%d in %.0f s (budget %.0f s): %d of %d "
		                                          "candidates measured, decision %s, winner",
		                               n, now() - t0, budget, r.nmeasured, r.ncandidates,
		                               ct_tune_decision_name(r.decision));
		for (int p = 0; p < r.nparams && g_nset < 16; p++, g_nset++) {
			snprintf(g_set[g_nset], sizeof g_set[g_nset], "%s=%lld", r.params[p],
			         (long long)r.candidates[r.best].values[p]);
			if (used < cap)
				used += (size_t)snprintf(desc + used, cap - used, " %s", g_set[g_nset]);
		}
	}
	ct_tune_result_free(&r);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* cachet's source and launch for size n. */
static char *cachet_source(ct_ctx *ctx, const char *file, int n, ocl_launch *L)
{
	FILE *f = fopen(file, "rb");
	if (!f)
		DIE("cannot open %s", file);
	static char text[1 << 16];
	size_t len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = 0;
	ct_kernel *k = ct_kernel_parse(ctx, text, len, file);
	if (!k || ct_kernel_set_param(k, "M", n) || ct_kernel_set_param(k, "N", n) || ct_kernel_set_param(k, "K", n) ||
	    apply_settings(k) || ct_kernel_recheck(k))
		DIE("%s: %s", file, ct_ctx_last_message(ctx));
	ct_looptree *t = ct_kernel_lower(k, 1);
	char *src = t ? gen_opencl(t, NULL, L) : NULL;
	if (!src)
		DIE("%s: %s", file, ct_ctx_last_message(ctx));
	ct_looptree_free(t);
	ct_kernel_free(k);
	return src;
}

static void fill(float *x, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

static cl_kernel make_kernel(dev *v, cl_program p, const char *fn, cl_mem A, cl_mem B, cl_mem C)
{
	cl_int e;
	cl_kernel k = clCreateKernel(p, fn, &e);
	if (!k)
		DIE("clCreateKernel: %d", e);
	clSetKernelArg(k, 0, sizeof A, &A);
	clSetKernelArg(k, 1, sizeof B, &B);
	clSetKernelArg(k, 2, sizeof C, &C);
	(void)v;
	return k;
}

static void launch(dev *v, cl_kernel k, const ocl_launch *L)
{
	cl_int e = clEnqueueNDRangeKernel(v->q, k, (cl_uint)L->ndims, NULL, L->global,
	                                  L->explicit_local ? L->local : NULL, 0, NULL, NULL);
	if (e != CL_SUCCESS || clFinish(v->q) != CL_SUCCESS)
		DIE("launch failed: %d", e);
}

static void zero(dev *v, cl_mem C, const float *zeros, size_t bytes)
{
	if (clEnqueueWriteBuffer(v->q, C, CL_TRUE, 0, bytes, zeros, 0, NULL, NULL) != CL_SUCCESS)
		DIE("write failed");
}

static void clblast_once(dev *v, int n, cl_mem A, cl_mem B, cl_mem C)
{
	CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)n,
	                                   (size_t)n, (size_t)n, 1.0f, A, 0, (size_t)n, B, 0, (size_t)n, 1.0f, C, 0,
	                                   (size_t)n, &v->q, NULL);
	if (s != CLBlastSuccess || clFinish(v->q) != CL_SUCCESS)
		DIE("CLBlastSgemm failed: %d", (int)s);
}

static double max_diff(const float *a, const float *b, size_t n, double *scale)
{
	double d = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		double x = fabs((double)a[i] - (double)b[i]);
		d = x > d ? x : d;
		m = fabs((double)b[i]) > m ? fabs((double)b[i]) : m;
	}
	*scale = m;
	return d;
}

/* The bytes of file path (malloc'd, *n of them); dies when unreadable. */
static unsigned char *read_binary(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		DIE("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*n ? *n : 1);
	if (!b || fread(b, 1, *n, f) != *n)
		DIE("cannot read %s", path);
	fclose(f);
	return b;
}

/* Load the program binary in file path and drop it (the process's first
 * program; see load_child). */
static void warm_program(dev *v, const char *path)
{
	size_t n = 0;
	unsigned char *b = read_binary(path, &n);
	const unsigned char *bp = b;
	cl_int e;
	cl_program p = clCreateProgramWithBinary(v->cx, 1, &v->d, &n, &bp, NULL, &e);
	if (!p || clBuildProgram(p, 1, &v->d, "", NULL, NULL) != CL_SUCCESS)
		DIE("warm-up binary load failed");
	clReleaseProgram(p);
	free(b);
}

/* The binary of a one-line kernel (malloc'd, *n bytes): the other
 * program the "after a first program" children load first. */
static unsigned char *tiny_binary(dev *v, size_t *n)
{
	const char *src = "__kernel void ct_tiny(__global float *x) { x[get_global_id(0)] = 0.0f; }\n";
	cl_int e;
	cl_program p = clCreateProgramWithSource(v->cx, 1, &src, NULL, &e);
	if (!p || clBuildProgram(p, 1, &v->d, "", NULL, NULL) != CL_SUCCESS)
		DIE("tiny program failed to build");
	cl_kernel k = clCreateKernel(p, "ct_tiny", &e);
	*n = 0;
	clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof *n, n, NULL);
	unsigned char *b = malloc(*n ? *n : 1);
	if (!b || clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof b, &b, NULL) != CL_SUCCESS)
		DIE("tiny program: no binary");
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(p);
	return b;
}

/* --load-child N BIN POCLDIR WARM: in this fresh process, load the binary
 * in file BIN (the sgemm of size N) as a user's process would: PoCL's
 * kernel cache on, in POCLDIR. Prints "LOAD_MS FIRST_LAUNCH_MS ...":
 * program from binary + build + kernel, then the first launch. Opening the
 * platform and context is not timed (every OpenCL program pays it, cached
 * or not). WARM ("-": none) is another program's binary, loaded untimed
 * first, as cachet's device open loads the binary it kept last: the timed
 * load is then not the process's first program (PoCL's first costs about
 * 2 ms more, whatever the program). */
static int load_child(const char *file, int n, const char *binfile, const char *pocl_dir, const char *warmfile)
{
	unsetenv("POCL_KERNEL_CACHE");
	setenv("POCL_CACHE_DIR", pocl_dir, 1);
	ct_ctx *ctx = ct_ctx_new();
	ocl_launch L;
	char *src = cachet_source(ctx, file, n, &L);
	size_t bn = 0;
	unsigned char *bin = read_binary(binfile, &bn);
	dev v;
	cl_platform_id plat;
	cl_int e;
	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &v.d, NULL) != CL_SUCCESS)
		DIE("no OpenCL device");
	v.cx = clCreateContext(NULL, 1, &v.d, NULL, NULL, &e);
	v.q = v.cx ? clCreateCommandQueue(v.cx, v.d, 0, &e) : NULL;
	size_t bytes = (size_t)n * (size_t)n * sizeof(float);
	cl_mem A = clCreateBuffer(v.cx, CL_MEM_READ_WRITE, bytes, NULL, &e);
	cl_mem B = clCreateBuffer(v.cx, CL_MEM_READ_WRITE, bytes, NULL, &e);
	cl_mem C = clCreateBuffer(v.cx, CL_MEM_READ_WRITE, bytes, NULL, &e);
	if (!v.q || !A || !B || !C)
		DIE("no context, queue or buffers: %d", e);
	if (strcmp(warmfile, "-") != 0)
		warm_program(&v, warmfile);
	double t0 = now();
	const unsigned char *bp = bin;
	cl_program p = clCreateProgramWithBinary(v.cx, 1, &v.d, &bn, &bp, NULL, &e);
	if (!p || clBuildProgram(p, 1, &v.d, "", NULL, NULL) != CL_SUCCESS)
		DIE("binary load failed");
	cl_kernel k = make_kernel(&v, p, L.fn, A, B, C);
	double load = now() - t0;
	t0 = now();
	launch(&v, k, &L);
	double first = now() - t0;
	/* the same binary again in this process (LLVM's bitcode reader warm) */
	t0 = now();
	bp = bin;
	cl_program p2 = clCreateProgramWithBinary(v.cx, 1, &v.d, &bn, &bp, NULL, &e);
	if (!p2 || clBuildProgram(p2, 1, &v.d, "", NULL, NULL) != CL_SUCCESS)
		DIE("binary load failed");
	cl_kernel k2 = make_kernel(&v, p2, L.fn, A, B, C);
	double again = now() - t0;
	clReleaseKernel(k2);
	clReleaseProgram(p2);
	/* through the library, as `cachet run` does (cache folder next to the
	 * binary): the first run of this process ("compiled" in the first
	 * child, "disk" after it: load + first launch), then the same kernel
	 * in the same ctx ("memory"); not verified (the interpreter is slow),
	 * the bench's runs are */
	double lib1 = -1, lib2 = -1;
	const char *how1 = "-", *how2 = "-";
	if (n <= 1024) {
		char cdir[300];
		snprintf(cdir, sizeof cdir, "%s-cache", binfile);
		ct_ctx *lc = ct_ctx_new();
		ct_cache_set_dir(lc, cdir);
		FILE *kf = fopen(file, "rb");
		static char text[1 << 16];
		size_t tl = kf ? fread(text, 1, sizeof text - 1, kf) : 0;
		if (kf)
			fclose(kf);
		ct_kernel *kk = ct_kernel_parse(lc, text, tl, file);
		if (!kk || ct_kernel_set_param(kk, "M", n) || ct_kernel_set_param(kk, "N", n) ||
		    ct_kernel_set_param(kk, "K", n) || ct_kernel_recheck(kk))
			DIE("%s: %s", file, ct_ctx_last_message(lc));
		ct_run_options o;
		ct_run_options_init(&o);
		o.verify = 0;
		ct_run_result r1, r2;
		if (ct_kernel_run(kk, &o, &r1) || ct_kernel_run(kk, &o, &r2))
			DIE("library run: %s", ct_ctx_last_message(lc));
		lib1 = r1.compile_seconds * 1e3;
		lib2 = r2.compile_seconds * 1e3;
		how1 = r1.code_cache;
		how2 = r2.code_cache;
		ct_kernel_free(kk);
		ct_ctx_free(lc);
	}
	printf("%.6f %.6f %.6f %.6f %s %.6f %s\n", load * 1e3, first * 1e3, again * 1e3, lib1, how1, lib2, how2);
	clReleaseKernel(k);
	clReleaseProgram(p);
	clReleaseMemObject(A);
	clReleaseMemObject(B);
	clReleaseMemObject(C);
	clReleaseCommandQueue(v.q);
	clReleaseContext(v.cx);
	free(bin);
	free(src);
	ct_ctx_free(ctx);
	return 0;
}

/* What the fresh processes measured (ms; medians of all but the first). */
typedef struct fresh_result {
	double first;             /* the first process: PoCL's cache folder empty */
	double load, launch;      /* the others: load, its first launch */
	double again;             /* the same binary again in that process */
	double after_first;       /* the load when another program was loaded first (as cachet's device open does) */
	double lib_disk, lib_mem; /* the library: first run of the process (load + first launch), then "memory" */
	char lib_how[2][16];
} fresh_result;

/* Write n bytes of b to path. */
static void write_file(const char *path, const unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n)
		DIE("cannot write %s", path);
	fclose(f);
}

/* Run one --load-child process; its seven figures in row, the library's
 * "how" words in h1, h2. */
static void one_child(const char *self, const char *file, int n, const char *binfile, const char *pocl,
                      const char *warm, double row[5], char h1[16], char h2[16])
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' --load-child %d '%s' '%s' '%s' '%s'", self, n, file, binfile, pocl, warm);
	FILE *c = popen(cmd, "r");
	if (!c || fscanf(c, "%lf %lf %lf %lf %15s %lf %15s", &row[0], &row[1], &row[2], &row[3], h1, &row[4], h2) != 7)
		DIE("the load child failed: %s", cmd);
	if (pclose(c) != 0)
		DIE("the load child failed: %s", cmd);
}

/* Load the binary in 1 + 2 x reps fresh processes (this program with
 * --load-child), PoCL's kernel cache in a new folder: the first finds it
 * empty (PoCL unpacks the binary), the others find the unpacked files, as a
 * user's later processes do; they alternate between loading it as the
 * process's first program and after the tiny program's binary tb. */
static void fresh_loads(const char *self, const char *file, int n, const unsigned char *bin, size_t bn,
                        const unsigned char *tb, size_t tn, int reps, fresh_result *fr)
{
	char dir[] = "/tmp/cachet-bench-ocl-XXXXXX";
	if (!mkdtemp(dir))
		DIE("mkdtemp failed");
	char binfile[300], warmfile[300], pocl[300], cmd[400];
	snprintf(binfile, sizeof binfile, "%s/program.bin", dir);
	snprintf(warmfile, sizeof warmfile, "%s/tiny.bin", dir);
	snprintf(pocl, sizeof pocl, "%s/pocl-v1", dir);
	write_file(binfile, bin, bn);
	write_file(warmfile, tb, tn);
	double v[6][16];
	int got = 0;
	memset(fr, 0, sizeof *fr);
	double row[5];
	char h1[16] = "", h2[16] = "";
	one_child(self, file, n, binfile, pocl, "-", row, h1, h2);
	fr->first = row[0];
	for (int r = 0; r < reps && r < 16; r++) {
		one_child(self, file, n, binfile, pocl, "-", row, h1, h2);
		for (int i = 0; i < 5; i++)
			v[i][got] = row[i];
		snprintf(fr->lib_how[0], sizeof fr->lib_how[0], "%s", h1);
		snprintf(fr->lib_how[1], sizeof fr->lib_how[1], "%s", h2);
		one_child(self, file, n, binfile, pocl, warmfile, row, h1, h2);
		v[5][got] = row[0];
		got++;
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_opencl: cannot remove %s\n", dir);
	fr->load = median(v[0], got);
	fr->launch = median(v[1], got);
	fr->again = median(v[2], got);
	fr->lib_disk = median(v[3], got);
	fr->lib_mem = median(v[4], got);
	fr->after_first = median(v[5], got);
}

/* Whether CLBlast's built-in database names this device: it holds entries by device name, and a
 * device it does not name gets the vendor's or the global defaults. So the device's name, with
 * PoCL's "pthread-"/"cpu-" prefix or without, is looked for in the library's file. 1: named,
 * 0: not, -1: the library cannot be read; its path into lib. */
static int clblast_db_names(const char *dname, char *lib, size_t cap)
{
	Dl_info info;
	void *sym = dlsym(RTLD_DEFAULT, "CLBlastSgemm");
	FILE *f = sym && dladdr(sym, &info) && info.dli_fname ? fopen(info.dli_fname, "rb") : NULL;
	char *text = NULL;
	long size = 0;
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)size)) && fread(text, 1, (size_t)size, f) != (size_t)size) {
		free(text);
		text = NULL;
	}
	if (f)
		fclose(f);
	if (!text)
		return -1;
	snprintf(lib, cap, "%s", info.dli_fname);
	const char *bare = dname;
	if (strncmp(bare, "pthread-", 8) == 0)
		bare += 8;
	else if (strncmp(bare, "cpu-", 4) == 0)
		bare += 4;
	int named = (*dname && memmem(text, (size_t)size, dname, strlen(dname))) ||
	            (*bare && memmem(text, (size_t)size, bare, strlen(bare)));
	free(text);
	return named;
}

/*
 * CLBlast at its best (issue #33): CLBlast 1.5 reads no variable, and its database has no entry
 * for a device it was not tuned on (PoCL here), which then runs the vendor's or global defaults.
 * So the bench tunes it with CLBlast's own tuner (clblast_tuner_xgemm of Debian's clblast-utils)
 * once per device, keeps the tuner's output in BUILD/bench/clblast-tuned/<device>/ (device-
 * specific: never committed), and before timing applies the fastest configuration whose result
 * the tuner verified ("results match") with CLBlastOverrideParameters. Bounded: the tuner runs at
 * m = n = k = 512 (--clblast-tune-size), one run per configuration, with CLBlast's -fraction F
 * (--clblast-fraction, default 40; in CLBlast 1.5 it measures (configurations)/F of each phase,
 * drawn at random: 14 of the 578 of its first phase, 3020 of the 120800 of its second), and is
 * stopped after --clblast-tune-seconds (default 180); every configuration it measured by then
 * counts (its log, tuner.log, lists them; its phases GEMMK=0 fixed set, GEMMK=0 random set, then
 * GEMMK=1, are reached in that order, and a phase it finished also leaves its JSON file).
 */
typedef struct clblast_opts {
	const char *dir; /* where the tuned results live (a folder per device) */
	double fraction; /* the tuner's -fraction */
	int size;        /* the tuner's -m/-n/-k */
	int seconds;     /* the tuner's time budget */
	bool force_tune; /* --clblast-tune: re-run the tuner even when results are kept */
	bool untuned;    /* --clblast-untuned: CLBlast's own defaults, nothing applied */
} clblast_opts;

/* The device's folder under o->dir (its name with anything but [A-Za-z0-9.-] as '_') into buf. */
static void clblast_device_dir(const clblast_opts *o, const char *dname, char *buf, size_t cap)
{
	char safe[256];
	size_t i = 0;
	for (; dname[i] && i < sizeof safe - 1; i++) {
		char c = dname[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		         c == '-';
		safe[i] = ok ? c : '_';
	}
	safe[i] = 0;
	if ((size_t)snprintf(buf, cap, "%s/%s", o->dir, i ? safe : "device") >= cap)
		DIE("the folder name %s is too long", o->dir);
}

/* Run clblast_tuner_xgemm for the device in folder ddir (made; old results removed), stopped
 * after o->seconds; tuned.txt records the command and the date. 0 when the tuner ran. */
static int clblast_run_tuner(const clblast_opts *o, const char *ddir)
{
	char cmd[4096], tuner[300];
	snprintf(tuner, sizeof tuner, "clblast_tuner_xgemm -precision 32 -m %d -n %d -k %d -fraction %g -runs 1",
	         o->size, o->size, o->size, o->fraction);
	if (snprintf(cmd, sizeof cmd,
	         "command -v clblast_tuner_xgemm >/dev/null 2>&1 || { echo 'bench_opencl: clblast_tuner_xgemm not "
	         "found (make bench-deps installs clblast-utils)' >&2; exit 1; }; "
	         "mkdir -p '%s' && cd '%s' && rm -f clblast_xgemm_*.json tuned.txt tuner.log && "
	         "echo 'bench_opencl: tuning CLBlast for at most %d s: %s (log: %s/tuner.log)' >&2 && "
	         "{ timeout -s INT %d %s >tuner.log 2>&1; "
	         "printf '%s, stopped after %d s\\n%%s\\n' \"$(date -u '+%%Y-%%m-%%d %%H:%%M UTC')\" > tuned.txt; }",
	         ddir, ddir, o->seconds, tuner, ddir, o->seconds, tuner, tuner, o->seconds) >= (int)sizeof cmd)
		DIE("the tuner's command is too long");
	return system(cmd) == 0 ? 0 : -1;
}

/* Copy line without its terminal colour escapes (ESC [ ... m). */
static void strip_ansi(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	for (const char *p = in; *p && o + 1 < cap; p++) {
		if (*p == 27 && p[1] == '[') {
			p += 2;
			while (*p && *p != 'm')
				p++;
			if (!*p)
				break;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = 0;
}

/* The fastest verified configuration in ddir/tuner.log: "NAME=V ..." into params, how many
 * configurations were verified into *count. The log's rows are "| id | total | v v v ... | local |
 * global | compiles | time ms | GFLOPS | status |" under a "Parameters explored: NAME ..." line.
 * 0 when one was found. */
static int clblast_best(const char *ddir, char *params, size_t pcap, int *count, double *best_ms)
{
	char path[700];
	snprintf(path, sizeof path, "%s/tuner.log", ddir);
	FILE *f = fopen(path, "r");
	*count = 0;
	*best_ms = -1;
	if (!f)
		return -1;
	static char raw[4096], line[4096], names[64][16];
	int nnames = 0;
	while (fgets(raw, sizeof raw, f)) {
		strip_ansi(raw, line, sizeof line);
		const char *ex = strstr(line, "Parameters explored:");
		if (ex) {
			nnames = 0;
			char *save = NULL;
			for (char *t = strtok_r(line + (ex - line) + 20, " \n", &save); t && nnames < 64;
			     t = strtok_r(NULL, " \n", &save))
				snprintf(names[nnames++], sizeof names[0], "%s", t);
			continue;
		}
		if (line[0] != '|' || !strstr(line, "results match") || nnames == 0)
			continue;
		char *field[12];
		int nf = 0;
		char *save = NULL;
		for (char *t = strtok_r(line, "|", &save); t && nf < 12; t = strtok_r(NULL, "|", &save))
			field[nf++] = t;
		/* id, total, values, local, global, compiles, time, GFLOPS, status */
		if (nf < 9 || atoi(field[0]) <= 0)
			continue;
		double ms = atof(field[6]);
		char vals[512] = "";
		size_t used = 0;
		int nv = 0;
		char *vs = NULL;
		for (char *t = strtok_r(field[2], " ", &vs); t; t = strtok_r(NULL, " ", &vs)) {
			if (nv >= nnames)
				break;
			int w = snprintf(vals + used, sizeof vals - used, "%s%s=%s", nv ? " " : "", names[nv], t);
			if (w > 0 && (size_t)w < sizeof vals - used)
				used += (size_t)w;
			nv++;
		}
		if (nv != nnames || ms <= 0)
			continue;
		(*count)++;
		if (*best_ms < 0 || ms < *best_ms) {
			*best_ms = ms;
			snprintf(params, pcap, "%s", vals);
		}
	}
	fclose(f);
	return *best_ms > 0 ? 0 : -1;
}

/* Apply "NAME=V NAME=V ..." (PRECISION dropped) to the device's Xgemm kernel; 0 on success. */
static int clblast_apply(cl_device_id d, const char *params, char *shown, size_t scap)
{
	const char *names[32];
	size_t values[32], n = 0;
	static char buf[512];
	snprintf(buf, sizeof buf, "%s", params);
	shown[0] = 0;
	size_t used = 0;
	for (char *tok = strtok(buf, " "); tok && n < 32; tok = strtok(NULL, " ")) {
		char *eq = strchr(tok, '=');
		if (!eq || strncmp(tok, "PRECISION=", 10) == 0)
			continue;
		*eq = 0;
		names[n] = tok;
		values[n] = (size_t)strtoul(eq + 1, NULL, 10);
		int w = snprintf(shown + used, scap - used, "%s%s=%zu", n ? " " : "", tok, values[n]);
		if (w > 0 && (size_t)w < scap - used)
			used += (size_t)w;
		n++;
	}
	return n && CLBlastOverrideParameters(d, "Xgemm", CLBlastPrecisionSingle, n, names, values) == CLBlastSuccess
	               ? 0
	               : -1;
}

/* Put CLBlast at its best on device d as o says (tuning it first when no results are kept) and
 * say in buf which parameters it runs with. */
static const char *clblast_setup(const clblast_opts *o, cl_device_id d, const char *dname, char *buf, size_t cap)
{
	char lib[400] = "?";
	int named = clblast_db_names(dname, lib, sizeof lib);
	const char *db = named > 0 ? "its database's entry for this device"
	                 : named == 0 ? "its vendor/global defaults (its database does not name this device)"
	                              : "its database's parameters (whether it names this device: unknown)";
	if (o->untuned) {
		snprintf(buf, cap, "CLBlast: untuned, %s, because --clblast-untuned", db);
		return buf;
	}
	char ddir[600], params[512] = "", shown[600];
	int count = 0;
	double ms = 0;
	clblast_device_dir(o, dname, ddir, sizeof ddir);
	int have = clblast_best(ddir, params, sizeof params, &count, &ms) == 0;
	if (o->force_tune || !have) {
		if (clblast_run_tuner(o, ddir) != 0) {
			snprintf(buf, cap, "CLBlast: untuned, %s, because clblast_tuner_xgemm could not run (see above)", db);
			return buf;
		}
		have = clblast_best(ddir, params, sizeof params, &count, &ms) == 0;
	}
	if (!have) {
		snprintf(buf, cap, "CLBlast: untuned, %s, because clblast_tuner_xgemm verified no configuration (%s)", db,
		         ddir);
		return buf;
	}
	if (clblast_apply(d, params, shown, sizeof shown) != 0) {
		snprintf(buf, cap, "CLBlast: untuned, %s, because CLBlastOverrideParameters refused %s", db, params);
		return buf;
	}
	char path[700], how[400] = "", when[64] = "";
	snprintf(path, sizeof path, "%s/tuned.txt", ddir);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(how, sizeof how, f))
			how[strcspn(how, "\n")] = 0;
		if (fgets(when, sizeof when, f))
			when[strcspn(when, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, cap,
	         "CLBlast: Xgemm parameters tuned here by `%.200s` (%.100s; fastest of %d verified configurations, %.2f ms at "
	         "its size; %.300s): %.300s",
	         how[0] ? how : "clblast_tuner_xgemm", when[0] ? when : "date unknown", count, ms, ddir, shown);
	return buf;
}

int main(int argc, char **argv)
{
	const char *file = "examples/opencl_sgemm.cachet";
	if (argc == 7 && strcmp(argv[1], "--load-child") == 0)
		return load_child(argv[3], atoi(argv[2]), argv[4], argv[5], argv[6]);
	int sizes[8] = {256, 512, 1024, 2048}, nsizes = 4, reps = 3;
	bool pocl_cache = false, load_times = true;
	double tune_budget = 0;
	int tune_size = 2048;
	/* the tuned results live next to this program (BUILD/bench/clblast-tuned) */
	char tuned_dir[600];
	const char *slash = strrchr(argv[0], '/');
	snprintf(tuned_dir, sizeof tuned_dir, "%.*s/clblast-tuned", slash ? (int)(slash - argv[0]) : 1,
	         slash ? argv[0] : ".");
	clblast_opts co = {tuned_dir, 40, 512, 180, false, false};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			nsizes = 2;
			reps = 1;
		} else if (strcmp(argv[i], "--pocl-cache") == 0) {
			pocl_cache = true;
		} else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--clblast-tune") == 0) {
			co.force_tune = true;
		} else if (strcmp(argv[i], "--clblast-untuned") == 0) {
			co.untuned = true;
		} else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
			file = argv[++i];
		} else if (strcmp(argv[i], "--tune-budget") == 0 && i + 1 < argc) {
			tune_budget = atof(argv[++i]);
		} else if (strcmp(argv[i], "--tune-size") == 0 && i + 1 < argc) {
			tune_size = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--no-load-times") == 0) {
			load_times = false;
		} else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			nsizes = 0;
			for (char *p = argv[++i]; p && *p && nsizes < 8; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
				sizes[nsizes++] = atoi(p);
		} else if (strcmp(argv[i], "--clblast-dir") == 0 && i + 1 < argc) {
			co.dir = argv[++i];
		} else if (strcmp(argv[i], "--clblast-fraction") == 0 && i + 1 < argc) {
			co.fraction = atof(argv[++i]);
		} else if (strcmp(argv[i], "--clblast-tune-seconds") == 0 && i + 1 < argc) {
			co.seconds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--clblast-tune-size") == 0 && i + 1 < argc) {
			co.size = atoi(argv[++i]);
		}
	}
	if (reps < 1)
		reps = 1;
	/* cold builds must compile: PoCL's own kernel cache (on by default)
	 * would hide it; --pocl-cache leaves it on, to see the binary load
	 * with it */
	if (!pocl_cache)
		setenv("POCL_KERNEL_CACHE", "0", 1);
	dev v;
	cl_platform_id plat;
	cl_int e;
	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &v.d, NULL) != CL_SUCCESS)
		DIE("no OpenCL device (install pocl-opencl-icd)");
	v.cx = clCreateContext(NULL, 1, &v.d, NULL, NULL, &e);
	v.q = v.cx ? clCreateCommandQueue(v.cx, v.d, 0, &e) : NULL;
	if (!v.q)
		DIE("no context/queue: %d", e);
	char dname[256] = "";
	clGetDeviceInfo(v.d, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
	cl_uint cus = 0;
	clGetDeviceInfo(v.d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
	printf("device: %s (%u compute units); %s; median of %d runs, the last verified\n", dname, cus,
	       file, reps);
	if (tune_budget > 0) {
		char desc[1200];
		tune_kernel(file, tune_size, tune_budget, desc, sizeof desc);
		printf("cachet: %s\n", desc);
		load_times = load_times && g_nset == 0; /* the load children know only the file's values */
	}
	char tuning[1024];
	printf("peer: %s\n", clblast_setup(&co, v.d, dname, tuning, sizeof tuning));
	printf("%6s | %12s %9s | %12s %9s | %7s | %10s %11s\n", "n", "cachet s", "GFLOP/s", "CLBlast s", "GFLOP/s",
	       "ratio", "cold build", "binary load");
	size_t tiny_n = 0;
	unsigned char *tiny = tiny_binary(&v, &tiny_n);
	ct_ctx *ctx = ct_ctx_new();
	int failed = 0;
	for (int si = 0; si < nsizes; si++) {
		int n = sizes[si];
		size_t elems = (size_t)n * (size_t)n, bytes = elems * sizeof(float);
		float *a = malloc(bytes), *b = malloc(bytes), *c1 = malloc(bytes), *c2 = calloc(elems, sizeof(float)),
		      *zeros = calloc(elems, sizeof(float));
		if (!a || !b || !c1 || !c2 || !zeros)
			DIE("out of memory");
		fill(a, elems, 1u + (unsigned)n);
		fill(b, elems, 7u + (unsigned)n);
		cl_mem A = clCreateBuffer(v.cx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &e);
		cl_mem B = clCreateBuffer(v.cx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &e);
		cl_mem C = clCreateBuffer(v.cx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, zeros, &e);
		if (!A || !B || !C)
			DIE("buffers: %d", e);

		/* cachet: cold build (source -> first launch done) */
		ocl_launch L;
		char *src = cachet_source(ctx, file, n, &L);
		double t0 = now();
		const char *s = src;
		cl_program p = clCreateProgramWithSource(v.cx, 1, &s, NULL, &e);
		if (!p || clBuildProgram(p, 1, &v.d, "", NULL, NULL) != CL_SUCCESS)
			DIE("build failed");
		cl_kernel k = make_kernel(&v, p, L.fn, A, B, C);
		launch(&v, k, &L);
		double cold = now() - t0;
		/* the binary, after the first launch; then binary -> kernel */
		size_t bn = 0;
		clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bn, &bn, NULL);
		unsigned char *bin = malloc(bn ? bn : 1);
		clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
		clReleaseKernel(k);
		clReleaseProgram(p);
		double loads[5];
		for (int r = 0; r < 5; r++) {
			t0 = now();
			const unsigned char *bp = bin;
			cl_program q = clCreateProgramWithBinary(v.cx, 1, &v.d, &bn, &bp, NULL, &e);
			if (!q || clBuildProgram(q, 1, &v.d, "", NULL, NULL) != CL_SUCCESS)
				DIE("binary load failed");
			cl_kernel kq = make_kernel(&v, q, L.fn, A, B, C);
			loads[r] = now() - t0;
			if (r < 4) {
				clReleaseKernel(kq);
				clReleaseProgram(q);
			} else {
				k = kq;
				p = q;
			}
		}
		double load = median(loads, 5);
		fresh_result fr;
		memset(&fr, 0, sizeof fr);
		fr.lib_disk = -1;
		if (load_times)
			fresh_loads(argv[0], file, n, bin, bn, tiny, tiny_n, 5, &fr);
		/* first launch of the binary-loaded kernel: no compile left */
		zero(&v, C, zeros, bytes);
		t0 = now();
		launch(&v, k, &L);
		double first = now() - t0;
		double tc[16], tb[16];
		for (int r = 0; r < reps && r < 16; r++) {
			zero(&v, C, zeros, bytes);
			t0 = now();
			launch(&v, k, &L);
			tc[r] = now() - t0;
		}
		clEnqueueReadBuffer(v.q, C, CL_TRUE, 0, bytes, c1, 0, NULL, NULL);
		/* CLBlast: one untimed call compiles its kernels */
		zero(&v, C, zeros, bytes);
		clblast_once(&v, n, A, B, C);
		for (int r = 0; r < reps && r < 16; r++) {
			zero(&v, C, zeros, bytes);
			t0 = now();
			clblast_once(&v, n, A, B, C);
			tb[r] = now() - t0;
		}
		clEnqueueReadBuffer(v.q, C, CL_TRUE, 0, bytes, c2, 0, NULL, NULL);
		double scale = 0, d = max_diff(c1, c2, elems, &scale);
		bool ok = d <= 1e-4 * scale + 1e-6;
		/* and 256 sampled elements against a double-precision host sum */
		unsigned seed = 99u;
		for (int smp = 0; smp < 256; smp++) {
			seed = seed * 1103515245u + 12345u;
			size_t i = (seed >> 4) % (size_t)n, j = (seed >> 16) % (size_t)n;
			double ref = 0;
			for (int kk = 0; kk < n; kk++)
				ref += (double)a[i * (size_t)n + (size_t)kk] * (double)b[(size_t)kk * (size_t)n + j];
			if (fabs(ref - (double)c1[i * (size_t)n + j]) > 1e-4 * scale + 1e-5)
				ok = false;
		}
		double mc = median(tc, reps < 16 ? reps : 16), mb = median(tb, reps < 16 ? reps : 16);
		double fl = 2.0 * n * (double)n * n;
		printf("%6d | %12.6f %9.2f | %12.6f %9.2f | %6.2fx | %9.3fs %9.3fms%s\n", n, mc, fl / mc * 1e-9, mb,
		       fl / mb * 1e-9, mb / mc, cold, load * 1e3, ok ? "" : "  MISMATCH");
		if (load_times) {
			printf("       binary load in fresh processes (PoCL's cache on): first %.3f ms (its cache empty), then "
			       "%.3f ms (median of 5), again in that process %.3f ms, first launch %.3f ms\n",
			       fr.first, fr.load, fr.again, fr.launch);
			printf("       binary load in fresh processes after another program's binary (as cachet's device open "
			       "loads the one it kept last): %.3f ms (median of 5)\n",
			       fr.after_first);
		}
		if (fr.lib_disk >= 0)
			printf("       library (cachet run's path), fresh process: %s %.3f ms (load + first launch), then "
			       "%s %.3f ms\n", fr.lib_how[0], fr.lib_disk, fr.lib_how[1], fr.lib_mem);
		printf("       first launch after the binary load: %.3f ms (a steady run: %.3f ms); max |diff| %.3g of max|C| %.3g\n",
		       first * 1e3, mc * 1e3, d, scale);
		fflush(stdout);
		if (!ok)
			failed = 1;
		clReleaseKernel(k);
		clReleaseProgram(p);
		clReleaseMemObject(A);
		clReleaseMemObject(B);
		clReleaseMemObject(C);
		free(bin);
		free(src);
		free(a);
		free(b);
		free(c1);
		free(c2);
		free(zeros);
	}
	printf("ratio = CLBlast time / cachet time (> 1: cachet faster)\n");
	free(tiny);
	ct_ctx_free(ctx);
	clReleaseCommandQueue(v.q);
	clReleaseContext(v.cx);
	return failed;
}
