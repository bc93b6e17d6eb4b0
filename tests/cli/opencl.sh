#!/bin/sh
# opencl.sh: `cachet emit --target opencl` and `cachet run` on plan(target=opencl) kernels (PoCL, from make deps): verified runs, plan errors with positions, device limits, build logs.
. tests/cli/lib/expect.sh

MM='kernel mm
param M = 9, N = 8, K = 6
array A : f32[M, K] input
array B : f32[K, N] input
array C : f32[M, N] inout
for (i: M, j: N, k: K) {
  C[i, j] += A[i, k] * B[k, j]
}'

# a matmul with the schedule and plan given as one line each
mm() {
	name=$1
	shift
	f=$tmp/$name.cachet
	printf '%s\n' "$MM" >"$f"
	for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
	echo "$f"
}

ex=examples/opencl_local.cachet
expect "emit: a __kernel" 0 '^__kernel void cachet_matmul_local\(' "$CACHET" emit "$ex" --target opencl
expect "emit: __local buffers" 0 '__local float AA\[64\]' "$CACHET" emit "$ex" --target opencl
expect "emit: barriers" 0 'barrier\(CLK_LOCAL_MEM_FENCE\)' "$CACHET" emit "$ex" --target opencl
expect "emit: groups and items" 0 'get_group_id\(1\) \* 8' "$CACHET" emit "$ex" --target opencl
expect "emit: striped copies" 0 'shared by the work-group \(striped\)' "$CACHET" emit "$ex" --target opencl
expect "run: verified on opencl" 0 '"target": "opencl", "engine": "opencl".*"verified": true' \
	"$CACHET" run "$ex" --json
expect "run: interpreter still runs it" 0 '"verified": true' "$CACHET" run "$ex" --engine interp --json

f=$(mm glob 'schedule {' '  ii, jj = tile(i=4, j=4)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=opencl) {' '  AA = cache(A, index=ii, location=global)' '  parallelize(i, j)' '}')
expect "location=global refused" 2 'glob.cachet:14:27: error: cache .AA.: location=global cannot be honoured' \
	"$CACHET" emit "$f" --target opencl
expect "location=global refused by run" 2 'location=global cannot be honoured' "$CACHET" run "$f"

f=$(mm dep 'plan(target=opencl) {' '  parallelize(k)' '}')
expect "a reduction index is refused" 2 "dep.cachet:7:3: error: parallelize\(k\): the iterations of 'k' are not independent" \
	"$CACHET" emit "$f" --target opencl

f=$(mm big 'schedule {' '  ii, jj = tile(i=128, j=128)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=opencl) {' '  parallelize(i, j)' '}')
expect "device limit" 2 'a work-group of 128 x 128 = 16384 work-items exceeds the device.s limit' \
	"$CACHET" run "$f" -D M=256 -D N=256 -D K=1

f=$(mm small 'schedule {' '  ii = split(i, 4)' '}' 'plan(target=opencl) {' '  parallelize(i)' '}')
expect "runs with split i" 0 '"verified": true' "$CACHET" run "$f" --json
# build options that break the generated code: the device's build log is shown
CACHET_OPENCL_OPTIONS='-Dct_lid=1' expect "build failure shows the log" 1 'failed to build.*build log' \
	"$CACHET" run "$f"

# a runtime size: the NDRange and the tail are computed from L at run time
f=$(kfile axpy.cachet 'kernel axpy' 'param L : runtime' 'array X : f32[L] input' 'array Y : f32[L] inout' \
	'for (i: L) {' '  Y[i] = 2.5 * X[i] + Y[i]' '}' 'schedule {' '  ii = split(i, 16)' '}' \
	'plan(target=opencl) {' '  parallelize(i)' '}')
expect "runtime size, emitted as a long argument" 0 'cachet_axpy\(.*, long L\)' "$CACHET" emit "$f" --target opencl
expect "runtime size, verified" 0 '"verified": true' "$CACHET" run "$f" -D L=1001 --json

# no OpenCL platform (the ICD loader finds no driver): a clear error, exit 2
OCL_ICD_VENDORS=$tmp/no-vendors expect "no OpenCL: a clear error" 2 'OpenCL is not available: no OpenCL platform' \
	"$CACHET" run "$f" -D L=100

# unroll and vectorize (examples/opencl_verbs.cachet): the default form, explicit vectors, errors
ex=examples/opencl_verbs.cachet
expect "unroll: one copy per iteration" 0 'const int64_t kk = 3;' "$CACHET" emit "$ex" --target opencl
expect "vectorize: a scalar loop by default" 0 'vectorize\(jj\): a scalar loop' "$CACHET" emit "$ex" --target opencl
expect "vectorize: float4 with --vector-bytes 16" 0 'vstore4\(vload4\(0, &C\[' \
	"$CACHET" emit "$ex" --target opencl --vector-bytes 16
expect "vectorize: verified with float8" 0 '"verified": true' "$CACHET" run "$ex" --vector-bytes 32 --json
f=$(mm vitem 'schedule {' '  ii, jj = tile(i=4, j=4)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=opencl) {' '  vectorize(jj)' '  parallelize(i, j)' '}')
expect "vectorize of a work-item index is refused" 2 \
	"vitem.cachet:14:13: error: vectorize\(jj\): 'jj' is parallelized on plan\(target=opencl\)" \
	"$CACHET" emit "$f" --target opencl

f=$(mm host 'plan(target=host) {' '  parallelize(i)' '}')
expect "--target opencl needs an opencl plan" 2 'needs plan\(target=opencl\)' "$CACHET" emit "$f" --target opencl

# a strided array is addressed densely: no layout arguments (issue 17, compile-error-200003)
f=$(kfile strided.cachet 'kernel strided' 'param N = 5' 'array A : f64[N] const' 'array B : f32[N] output strided' \
	'for (x: N) {' '  if (0 < x && x < N-1) {' '    B[x] = (A[x-1] + A[x] + A[x+1]) / 3' '  } else {' \
	'    B[x] = A[x]' '  }' '}' 'schedule {' '  xx = split(x, 2)' '}' 'plan(target=opencl) {' \
	'  AA = cache(A, index=x, location=private)' '  BB = cache(B, index=xx, location=local)' \
	'  parallelize(x)' '}')
expect "strided array: no layout arguments" 0 '^__kernel void cachet_strided\(__global const double \*restrict A, __global float \*restrict B\)' \
	"$CACHET" emit "$f" --target opencl
expect "strided array: verified" 0 '"verified": true' "$CACHET" run "$f" --json

# a double buffer around a work-group loop would prefetch for another work-group: refused as on
# the host (issue 17, fuzz finding wrong-result-220074: it gave wrong results)
f=$(kfile dbcarry.cachet 'kernel dbcarry' 'param M = 2, N = 4' 'array A : i32[M, N] const layout=last_major' \
	'array B : i32[N, M] output' 'for (i: M, j: N) {' '  B[j, i] = 2 * A[i, j] + 1' '}' 'schedule {' \
	'  ii = split(i, 1)' '  jj = split(j, 2)' '  reorder(j, i, jj, ii)' '}' 'plan(target=opencl) {' \
	'  AA = cache(A, index=jj, double_buffer=true)' '  parallelize(j, i)' '}')
expect "double buffer across work-groups refused" 2 \
	"dbcarry.cachet:15:18: error: parallelize\(i\): the double-buffered cache 'AA' carries blocks from one iteration of 'i' to the next" \
	"$CACHET" emit "$f" --target opencl
expect "double buffer across work-groups refused by run" 2 "carries blocks from one iteration of 'i'" "$CACHET" run "$f"

# the probe lists OpenCL devices, and says so when there are none
expect "probe lists PoCL's device" 0 '^opencl +Portable Computing Language \| .+ \| cpu \| OpenCL [0-9.]+ .*compute units' \
	"$CACHET" probe
expect "probe --json lists it" 0 '"opencl": \[\{"platform": "Portable Computing Language", "name": ".+", "type": "cpu"' \
	"$CACHET" probe --json
expect "probe without an OpenCL platform" 0 '^opencl +none \(no OpenCL loader, platform or device\)' \
	env OCL_ICD_VENDORS=/nonexistent "$CACHET" probe
expect "probe --json without an OpenCL platform" 0 '"opencl": \[\]' \
	env OCL_ICD_VENDORS=/nonexistent "$CACHET" probe --json

# PoCL 3.1 and work-items outside the tail (docs/OPENCL.md, section 5):
# issue 17's random OpenCL plans (planfix), reduced. A tail group whose
# guarded `C[..] += ..` follows a loop with barriers wrote past the end of C
# (every work-item ran the guarded code); a private cache filled in a k loop
# with the guard inside lost updates of the tail group. The generator puts a
# barrier before each loop with barriers and tests the work-item guard above
# barrier-free sequential loops.
MM1='kernel fz
param M = 1, N = 3, K = 16
array A : f32[M, K] input
array B : f32[K, N] input
array C : f32[M, N] inout
for (i: M, j: N, k: K) {
  C[i, j] += A[i, k] * B[k, j]
}'
f=$(kfile rmw.cachet "$MM1" 'schedule {' '  ii, jj, kk = tile(i=4, j=2, k=3)' '  kkk = split(kk, 2)' \
	'  reorder(i, j, k, kk, kkk, ii, jj)' '}' 'plan(target=opencl) {' '  BB = cache(B, index=kkk, location=local)' \
	'  parallelize(i, j)' '}')
expect "tail group: the guard above the barrier-free loops" 0 'if \(ii < 1 && jj < 2\)' "$CACHET" emit "$f" --target opencl
expect "tail group: verified, nothing written past C" 0 '"verified": true' "$CACHET" run "$f" --json
f=$(kfile reduce.cachet 'kernel fz' 'param M = 16, N = 9, K = 9' 'array A : f32[M, K] input' \
	'array B : f32[K, N] input' 'array C : f32[M, N] inout' 'for (i: M, j: N, k: K) {' \
	'  C[i, j] += A[i, k] * B[k, j]' '}' 'schedule {' '  ii, jj, kk = tile(i=8, j=8, k=8)' \
	'  reorder(i, j, k, kk, ii, jj)' '}' 'plan(target=opencl) {' '  AA = cache(A, index=ii, location=private)' \
	'  BB = cache(B, index=j, location=private)' '  CC = cache(C, index=ii, location=local)' \
	'  parallelize(i, j)' '}')
expect "private caches in a local reduction: verified" 0 '"verified": true' "$CACHET" run "$f" --json

# a local multicache whose slots are work-items is refused (finding wrong-result-opencl-order-k1_15)
f=$(mm mcitem 'schedule {' '  ii, jj, kk = tile(i=2, j=2, k=2)' '  reorder(j, i, k, ii, kk, jj)' '}' \
	'plan(target=opencl) {' '  AA = cache(A, level=2, trigger_level=3, location=local)' '  parallelize(j, i)' '}')
expect "local multicache over a work-item index refused" 2 \
	"mcitem.cachet:14:43: error: cache 'AA': the copies of this location=local multicache loop over 'ii'" \
	"$CACHET" check "$f"

# issue 17's OpenCL campaign on PoCL at full optimization (docs/OPENCL.md,
# section 5): kernels with barriers that PoCL 3.1's optimizing build got
# wrong; the engine builds such kernels with -cl-opt-disable on PoCL.
for f in tests/plans/opencl/*.cachet; do
	expect "$(basename "$f"): verified on PoCL" 0 '"verified": true' env -u CACHET_OPENCL_OPTIONS "$CACHET" run "$f" --json
done
# issue 34: a tune param sends `cachet run` through the selector, which must
# run the OpenCL kernel on the device, not its host C version
expect "selector: a tuned plan(target=opencl) kernel runs on OpenCL" 0 \
	'"engine": "opencl".*"verified": true.*"tuned": \{"source": "model"' \
	"$CACHET" run tests/plans/opencl/tune_selector.cachet --json
expect "selector: -D T=8 runs on OpenCL too" 0 '"engine": "opencl".*"verified": true' \
	"$CACHET" run tests/plans/opencl/tune_selector.cachet -D T=8 --json
expect "CACHET_OPENCL_OPTIONS still overrides the engine's options" 1 'Invalid build option: -no-such-option' \
	env CACHET_OPENCL_OPTIONS=-no-such-option "$CACHET" run tests/plans/opencl/pocl_double_buffer.cachet

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
