#!/bin/sh
# opencl_pkg.sh: `cachet build` on plan(target=opencl) kernels: the package (OpenCL C source, this device's binary, a C host wrapper) compiles with cc against -lOpenCL, runs on PoCL, and gives the interpreter's results.
. tests/cli/lib/expect.sh
B=${CACHET_BUILD:-build}
# a sanitizer build's libcachet.a needs the sanitizer runtimes in the program too
SANFL=""
[ "${SAN:-}" = 1 ] && SANFL="-fsanitize=address,undefined"
LIBS="$SANFL $B/libcachet.a $(pkg-config --libs libxxhash hwloc sqlite3 jansson isl 2>/dev/null || echo -lxxhash -lhwloc -lsqlite3 -ljansson -lisl -lgmp) -lm -ldl -lpthread"

# the checking program: the wrapper's results against ct_interp_run on the
# same inputs, through the handle's own context (run on host arrays) and
# through the caller's context and cl_mem buffers (enqueue)
cat >"$tmp/check.c" <<'C'
#include PKG_HEADER
#include "cachet.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(x) CAT(CAT(cachet_, KNAME), x)

static float *filled(size_t n, unsigned seed)
{
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n && x; i++) {
		seed = seed * 1103515245u + 12345u;
		x[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
	return x;
}

static int same(const float *a, const float *b, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (fabsf(a[i] - b[i]) > 1e-4f * (1.0f + fabsf(b[i]))) {
			fprintf(stderr, "%s: element %zu is %g, the interpreter's %g\n", what, i, a[i], b[i]);
			return 0;
		}
	return 1;
}

int main(int argc, char **argv)
{
	const char *file = argv[1];
	long rt = argc > 3 ? atol(argv[3]) : 0; /* the runtime size, if any */
	int want_binary = atoi(argv[2]);
	ct_ctx *ctx = ct_ctx_new();
	FILE *f = fopen(file, "rb");
	static char text[1 << 16];
	size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
	if (f)
		fclose(f);
	ct_kernel *k = ct_kernel_parse(ctx, text, len, file);
	if (!k || (RTNAME[0] && ct_kernel_set_param(k, RTNAME, rt)) || ct_kernel_recheck(k)) {
		fprintf(stderr, "kernel: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	int na = ct_kernel_array_count(k);
	float *init[8], *ref[8], *got[8], *got2[8];
	size_t n[8];
	for (int a = 0; a < na && a < 8; a++) {
		n[a] = (size_t)ct_kernel_array_elements(k, a);
		init[a] = filled(n[a], 11u + (unsigned)a);
		ref[a] = malloc(n[a] * sizeof(float));
		got[a] = malloc(n[a] * sizeof(float));
		got2[a] = malloc(n[a] * sizeof(float));
		memcpy(ref[a], init[a], n[a] * sizeof(float));
		memcpy(got[a], init[a], n[a] * sizeof(float));
		memcpy(got2[a], init[a], n[a] * sizeof(float));
	}
	ct_looptree *t = ct_kernel_lower(k, 0);
	if (!t || ct_interp_run(t, (void *const *)ref)) {
		fprintf(stderr, "interpreter: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	ct_looptree_free(t);
	/* 1: the handle's own context, host arrays */
	char err[8192];
	FN(_cl) *h = FN(_cl_new)(NULL, NULL, NULL, err, sizeof err);
	if (!h) {
		fprintf(stderr, "new: %s\n", err);
		return 1;
	}
	if (FN(_cl_from_binary)(h) != want_binary) {
		fprintf(stderr, "from_binary %d, want %d\n", FN(_cl_from_binary)(h), want_binary);
		return 1;
	}
	cl_int e = FN(_cl_run)(h, RUN_ARGS(got));
	if (e != CL_SUCCESS) {
		fprintf(stderr, "run: OpenCL error %d\n", (int)e);
		return 1;
	}
	FN(_cl_free)(h);
	/* 2: the caller's context, queue and buffers */
	cl_platform_id plat;
	cl_device_id dev;
	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
		return 1;
	cl_context cx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
	cl_command_queue q = clCreateCommandQueue(cx, dev, 0, &e);
	h = FN(_cl_new)(cx, dev, q, err, sizeof err);
	if (!h) {
		fprintf(stderr, "new on the caller's context: %s\n", err);
		return 1;
	}
	cl_mem m[8];
	for (int a = 0; a < na && a < 8; a++)
		m[a] = clCreateBuffer(cx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n[a] * sizeof(float), got2[a], &e);
	e = FN(_cl_enqueue)(h, ENQ_ARGS(m));
	for (int a = 0; a < na && a < 8 && e == CL_SUCCESS; a++)
		e = clEnqueueReadBuffer(q, m[a], CL_TRUE, 0, n[a] * sizeof(float), got2[a], 0, NULL, NULL);
	if (e != CL_SUCCESS) {
		fprintf(stderr, "enqueue: OpenCL error %d\n", (int)e);
		return 1;
	}
	FN(_cl_free)(h);
	for (int a = 0; a < na && a < 8; a++)
		clReleaseMemObject(m[a]);
	clReleaseCommandQueue(q);
	clReleaseContext(cx);
	int ok = 1;
	for (int a = 0; a < na && a < 8; a++)
		ok = same(got[a], ref[a], n[a], "run") && same(got2[a], ref[a], n[a], "enqueue") && ok;
	printf(ok ? "matches the interpreter\n" : "MISMATCH\n");
	for (int a = 0; a < na && a < 8; a++) {
		free(init[a]);
		free(ref[a]);
		free(got[a]);
		free(got2[a]);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return ok ? 0 : 1;
}
C

# build, compile the check against the package, run it
# pkg NAME FILE KNAME RTNAME RUN_ARGS ENQ_ARGS WANT_BINARY [RUNTIME_SIZE]
pkg() {
	pn=$1 pf=$2 kname=$3 rtname=$4 runargs=$5 enqargs=$6 pwant=$7 prt=${8:-0}
	expect "$pn: build" 0 "wrote .*lib$kname.so" "$CACHET" build "$pf" -o "$tmp/$pn"
	for f in "$kname.cl" "$kname.h" "$kname.c" "lib$kname.a" "lib$kname.so"; do
		[ -s "$tmp/$pn/$f" ] && ok || bad "$pn: package file $f missing"
	done
	cc -std=c11 -Iinclude -I"$tmp/$pn" -DPKG_HEADER="\"$kname.h\"" -DKNAME="$kname" -DRTNAME="\"$rtname\"" \
		-D"RUN_ARGS(x)=$runargs" -D"ENQ_ARGS(m)=$enqargs" "$tmp/check.c" "$tmp/$pn/lib$kname.a" $LIBS -lOpenCL \
		-o "$tmp/$pn/check" 2>"$tmp/cc.err" && ok || { bad "$pn: the check does not compile"; head -20 "$tmp/cc.err" >&2; }
	expect "$pn: static package, verified" 0 "matches the interpreter" "$tmp/$pn/check" "$pf" "$pwant" "$prt"
	cc -std=c11 -Iinclude -I"$tmp/$pn" -DPKG_HEADER="\"$kname.h\"" -DKNAME="$kname" -DRTNAME="\"$rtname\"" \
		-D"RUN_ARGS(x)=$runargs" -D"ENQ_ARGS(m)=$enqargs" "$tmp/check.c" -L"$tmp/$pn" -l"$kname" \
		-Wl,-rpath,"$tmp/$pn" $LIBS -lOpenCL -o "$tmp/$pn/check_so" 2>"$tmp/cc.err" && ok ||
		bad "$pn: the check does not link the shared library"
	expect "$pn: shared package, verified" 0 "matches the interpreter" "$tmp/$pn/check_so" "$pf" "$pwant" "$prt"
}

# local caches (both strategies), double buffering, tails in i: the binary is embedded
pkg local examples/opencl_local.cachet matmul_local "" "x[0], x[1], x[2]" "m[0], m[1], m[2]" 1
grep -q "The binary is for: .*|" "$tmp/local/matmul_local.h" && ok || bad "local: the header names the binary's device"
grep -q "__kernel void cachet_matmul_local" "$tmp/local/matmul_local.cl" && ok || bad "local: the .cl is the kernel"

# the example program, as its comment says to build it
cc -std=c11 -I"$tmp/local" examples/opencl_package.c "$tmp/local/libmatmul_local.a" -lOpenCL -lm -o "$tmp/example" \
	2>"$tmp/cc.err" && ok || { bad "examples/opencl_package.c does not compile"; head -20 "$tmp/cc.err" >&2; }
expect "examples/opencl_package.c runs, from the binary" 0 "loaded from the embedded binary" "$tmp/example"
expect "examples/opencl_package.c is right" 0 "all 1184 elements right" "$tmp/example"

# a runtime size: no launch to warm a binary with at build time, so the wrapper
# builds the source; the NDRange comes from L at run time
f=$(kfile axpy.cachet 'kernel axpy' 'param L : runtime' 'array X : f32[L] input' 'array Y : f32[L] inout' \
	'for (i: L) {' '  Y[i] = 2.5 * X[i] + Y[i]' '}' 'schedule {' '  ii = split(i, 16)' '}' \
	'plan(target=opencl) {' '  parallelize(i)' '}')
pkg runtime "$f" axpy L "x[0], x[1], 1001" "m[0], m[1], 1001" 0 1001
grep -q "int64_t L" "$tmp/runtime/axpy.h" && ok || bad "runtime: L is an argument of the wrapper"

# affine bounds on the grid with a runtime size (issue #31): the wrapper sizes the band's j from
# its greatest range over i, computed from L at run time (8 here)
f=$(kfile band.cachet 'kernel band' 'param L : runtime' 'array X : f32[L] input' 'array C : f32[L, L] inout' \
	'for (i: L, j: max(0, i-3) .. min(L, i+5)) {' '  C[i, j] += 2.5 * X[j]' '}' 'schedule {' '  ii = split(i, 4)' \
	'  jj = split(j, 4)' '}' 'plan(target=opencl) {' '  parallelize(i, j)' '}')
pkg affine "$f" band L "x[0], x[1], 101" "m[0], m[1], 101" 0 101
grep -q "int64_t n = INT64_MAX;" "$tmp/affine/band.c" && ok || bad "affine: the wrapper computes j's greatest range"

# a binary made for another device (its description changed): the wrapper builds the source
if [ -s "$tmp/local/matmul_local.c" ]; then
	mkdir -p "$tmp/other" && cp "$tmp/local/"matmul_local.* "$tmp/other/"
	sed -i 's/^static const char ct_binary_device\[\] = "/&another device: /' "$tmp/other/matmul_local.c"
	cc -std=c11 -Iinclude -I"$tmp/other" -DPKG_HEADER='"matmul_local.h"' -DKNAME=matmul_local -DRTNAME='""' \
		-D'RUN_ARGS(x)=x[0], x[1], x[2]' -D'ENQ_ARGS(m)=m[0], m[1], m[2]' "$tmp/check.c" "$tmp/other/matmul_local.c" \
		$LIBS -lOpenCL -o "$tmp/other/check" 2>"$tmp/cc.err" && ok || bad "other: the check does not compile"
	expect "another device: built from source, verified" 0 "matches the interpreter" "$tmp/other/check" \
		examples/opencl_local.cachet 0
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
