#!/bin/sh
# cuda.sh: plan(target=cuda) without a GPU: every CUDA example and tests/plans/cuda kernel is checked, emitted, compiled by nvcc (one nvcc call for all), run on the CPU under tests/cuda/emu.h against the interpreter; plan-level checks on `lower --json` and on where the barriers go; errors.
# nvcc: $NVCC when set, else /usr/local/cuda/bin/nvcc, else nvcc on PATH; without one the compile checks count as skipped (the reason is printed).
. tests/cli/lib/expect.sh
skipped=0

if [ -z "${NVCC:-}" ]; then
	NVCC=/usr/local/cuda/bin/nvcc
	[ -x "$NVCC" ] || NVCC=$(command -v nvcc 2>/dev/null || true)
fi

mkdir -p "$tmp/cu"
kernels=""
for f in examples/cuda_*.cachet tests/plans/cuda/*.cachet; do
	kernels="$kernels $f"
done

# every kernel: check, emit (the examples also at their run-with sizes, as in
# their golden files), run in the interpreter (the plan's semantics)
for f in $kernels; do
	kn=$(basename "$f" .cachet)
	defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	case $kn in runtime_params) defs="-D L=1001" ;; esac
	expect "check $f" 0 '' "$CACHET" check "$f"
	expect "emit --target cuda $f" 0 'extern "C" __global__ void' "$CACHET" emit "$f" --target cuda
	cp "$tmp/o" "$tmp/cu/$kn.cu"
	if [ -n "$defs" ]; then
		expect "emit --target cuda $f $defs" 0 'extern "C" __global__ void' "$CACHET" emit "$f" $defs --target cuda
		cp "$tmp/o" "$tmp/cu/${kn}_small.cu"
	fi
	expect "lower --json $f: target cuda" 0 '"target": "cuda"' "$CACHET" lower --json "$f" $defs
	expect "run --engine interp $f" 0 '"verified": true' "$CACHET" run "$f" $defs --engine interp --json
done

# every tune point of the tunable sgemm generates (the tuner may pick any)
ex=examples/cuda_sgemm_tune.cachet
n=0
for BM in 64 128; do for BN in 64 128; do for TM in 4 16; do
	n=$((n + 1))
	expect "tune point BM=$BM BN=$BN TM=$TM" 0 '__launch_bounds__' \
		"$CACHET" emit "$ex" --target cuda -D BM=$BM -D BN=$BN -D TM=$TM -D TN=8 -D BK=16
	cp "$tmp/o" "$tmp/cu/tune_$n.cu"
done; done; done

# nvcc: all of them in one call (compile errors fail the suite)
count=$(ls "$tmp/cu"/*.cu | wc -l)
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
	echo "SKIP: no nvcc (\$NVCC, /usr/local/cuda/bin/nvcc, PATH): $count CUDA compiles skipped"
	skipped=$((skipped + count))
else
	if (cd "$tmp/cu" && "$NVCC" --cubin -arch=sm_90a -Werror all-warnings ./*.cu) >"$tmp/nvcc.out" 2>&1; then
		for c in "$tmp"/cu/*.cu; do
			if [ -s "${c%.cu}.cubin" ]; then ok; else bad "nvcc made no cubin for $(basename "$c")"; fi
		done
	else
		bad "nvcc --cubin -arch=sm_90a failed on the generated CUDA"
		head -30 "$tmp/nvcc.out" >&2
	fi
fi

# every kernel run on the CPU (tests/cuda/emu.h: one thread per CUDA thread,
# __syncthreads a barrier) and compared with the interpreter: the mapping, the
# guards, the register shares and the barriers of the generated code, here
CXX=${CXX:-g++}
build=${CACHET_BUILD:-$(dirname "$CACHET")}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
if [ "${SAN:-}" = 1 ]; then
	# an instrumented libcachet would need the sanitizer runtimes in the emulation too;
	# the plain build's suite runs these
	echo "SKIP: SAN=1 (an instrumented libcachet): the CPU runs of the CUDA kernels skipped"
	skipped=$((skipped + 1))
elif ! command -v "$CXX" >/dev/null 2>&1 || ! [ -e "$build/libcachet.so" ]; then
	echo "SKIP: no $CXX or no $build/libcachet.so: the CPU runs of the CUDA kernels skipped"
	skipped=$((skipped + 1))
else
	# random plans: kernels of the differential fuzzer with plan(target=opencl) (shared caches,
	# double buffers, private caches, tails), spelled for cuda (location=local is shared there);
	# and affine ones drawn for cuda (issue #31: triangles, bands, tetrahedra, splits of affine
	# loops, shared caches over them; the a54... ones put an affine loop on the grid, one with a
	# packed cache of A); a seed whose plan the target refuses is left out
	fuzzed=""
	if [ -x "$build/fuzz/difffuzz" ]; then
		for seed in 9000 9011 9013 9073 9089 9096 a31000018 a31000043 a31000059 a31000112 a31000134 a32000240 a32000297 \
			a5400002 a5400034 a5400036 a5400041; do
			case $seed in
			a*) seed=${seed#a}
				"$build/fuzz/difffuzz" --print $seed --families affine --cuda-share 100 2>/dev/null >"$tmp/fz$seed.cachet" ;;
			*) "$build/fuzz/difffuzz" --print $seed --opencl-share 100 2>/dev/null |
				sed 's/plan(target=opencl)/plan(target=cuda)/; s/location=local/location=shared/' >"$tmp/fz$seed.cachet" ;;
			esac
			if grep -q 'plan(target=cuda)' "$tmp/fz$seed.cachet" && "$CACHET" check "$tmp/fz$seed.cachet" >/dev/null 2>&1; then
				fuzzed="$fuzzed $tmp/fz$seed.cachet"
			else
				echo "note: fuzzer seed $seed gives no cuda plan this target accepts: left out"
			fi
		done
	else
		echo "SKIP: no $build/fuzz/difffuzz: the fuzzer's plans are not run on the CPU"
		skipped=$((skipped + 1))
	fi
	# each kernel at its run-with sizes; the gemms also at sizes no tile divides
	for run in $kernels $fuzzed "examples/cuda_sgemm.cachet|-D M=300 -D N=260 -D K=100" \
		"examples/cuda_dgemm.cachet|-D M=130 -D N=70 -D K=50"; do
		f=${run%%|*}
		kn=$(basename "$f" .cachet)
		defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
		case $run in *"|"*) defs=${run#*|} ;; esac
		case $kn in runtime_params) defs="-D L=1001" ;; esac
		"$CACHET" emit "$f" $defs --target cuda >"$tmp/emu.cu" 2>/dev/null
		fn=$(head -1 "$tmp/emu.cu" | sed 's|^/\* \([A-Za-z0-9_]*\):.*|\1|')
		if ! "$CXX" -std=c++20 -O1 -pthread -w -Iinclude -include tests/cuda/emu.h -include "$tmp/emu.cu" \
			-DCT_KERNEL="$fn" tests/cuda/emu_main.cpp -o "$tmp/emu" -L"$build" -lcachet \
			-Wl,-rpath,"$build" 2>"$tmp/emu.err"; then
			bad "CPU run of $f: the emulation does not build"
			head -10 "$tmp/emu.err" >&2
			continue
		fi
		expect "CPU run of the CUDA kernel of $f $defs" 0 'max rel error' timeout 120 "$tmp/emu" "$f" $defs
	done
fi

# where each cache lives: lower --json and the text
ex=examples/cuda_sgemm.cachet
expect "lower: CC is private" 0 '"name": "CC".*"location": "private"' sh -c \
	"\"$CACHET\" lower --json $ex | tr -d '\n'"
expect "lower: AA is shared" 0 '"name": "AA".*"location": "shared"' sh -c "\"$CACHET\" lower --json $ex | tr -d '\n'"
expect "lower text: shared" 0 'cache BB of B .*double-buffered; shared:' "$CACHET" lower "$ex" -D M=256 -D N=256 -D K=64
expect "lower: opencl plans unchanged" 0 '"target": "opencl"' "$CACHET" lower --json examples/opencl_local.cachet

# the generated code: spellings, spaces, copies, barriers
"$CACHET" emit "$ex" --target cuda >"$tmp/sg.cu"
has() { # has NAME PATTERN FILE [COUNT]
	c=$(grep -cE -- "$2" "$3")
	if [ -n "${4:-}" ]; then [ "$c" = "$4" ] && ok || bad "$1: $c lines match /$2/, want $4"
	else [ "$c" -gt 0 ] && ok || bad "$1: no line matches /$2/"; fi
}
has "kernel qualifier" '^extern "C" __global__ void __launch_bounds__\(256\) cachet_sgemm_cuda\(const float \*__restrict__ A' "$tmp/sg.cu"
has "register tile: the thread's share" 'float CC\[64\]; /\* cache buffer CC, this thread.s share \(registers\)' "$tmp/sg.cu"
has "shared, aligned, padded" '__shared__ __align__\(16\) float AA\[1056\];.*rows padded by 4' "$tmp/sg.cu"
has "next blocks in registers" 'float AA_next\[4\];' "$tmp/sg.cu"
has "block ids" 'blockIdx\.y \* 128' "$tmp/sg.cu"
has "thread ids" '\(int64_t\)threadIdx\.x \* 4' "$tmp/sg.cu"
has "coalesced copies" 'const int64_t ct_f[0-9]+ = ct_lid \+ ct_q[0-9]+ \* ct_nwi;' "$tmp/sg.cu"
has "16-byte global loads in the copies" 'ct_v[0-9]+ = \*\(const float4 \*\)&A\[\(i \+ c0\) \* 4096 \+ k \+ c1 \+ 8\]; /\* 16 bytes, aligned \*/' "$tmp/sg.cu"
has "unrolled register loops" '#pragma unroll' "$tmp/sg.cu"
has "no OpenCL spelling left" 'get_local_id|get_group_id|barrier\(CLK|__local |__kernel' "$tmp/sg.cu" 0
has "launch comment" 'launch: grid \(32, 32, 1\) of blocks of \(32, 8, 1\) threads' "$tmp/sg.cu"
# barriers: the first fill (2 per k version of the prologue: before and after),
# then per k-slice 2: before the moves of the next blocks and after them
has "barriers: two per k-slice" '__syncthreads\(\);' "$tmp/sg.cu" 10
awk '/for \(int64_t k = 0; k < 4080; k \+= 8\)/{on=1; next} on&&/__syncthreads/{n++} on&&/for \(int64_t k =/{exit} END{print n+0}' \
	"$tmp/sg.cu" >"$tmp/nbar"
[ "$(cat "$tmp/nbar")" = 2 ] && ok || bad "main k loop has $(cat "$tmp/nbar") barriers, want 2"
"$CACHET" emit tests/plans/cuda/i64_global.cachet --target cuda >"$tmp/g.cu"
has "no shared memory, no barrier" '__syncthreads' "$tmp/g.cu" 0
has "global ids" '\(\(int64_t\)blockIdx\.x \* blockDim\.x \+ threadIdx\.x\)' "$tmp/g.cu"
has "threads past the space return" 'threadIdx\.z != 0 \|\| blockIdx\.z != 0' "$tmp/g.cu"
"$CACHET" emit tests/plans/cuda/runtime_params.cachet --target cuda >"$tmp/r.cu"
has "runtime params as long long" 'cachet_cu_axpy\(const float \*__restrict__ X, float \*__restrict__ Y, long long L\)' "$tmp/r.cu"
has "NVRTC: own integer types" '^typedef long long int64_t;' "$tmp/r.cu"

"$CACHET" emit tests/plans/cuda/verbs.cachet --target cuda --vector-bytes 16 >"$tmp/v.cu"
has "vectorize: a scalar loop, unrolled" 'vectorize\(jj\): a scalar loop, unrolled' "$tmp/v.cu"
has "vectorize: no OpenCL vector types" 'vload|vstore|float4' "$tmp/v.cu" 0
has "unroll: one copy per iteration" 'const int64_t kk = 3;' "$tmp/v.cu"

# affine loop bounds (issue #31): per-thread ranges from the thread's own indices
"$CACHET" emit tests/plans/cuda/affine_band.cachet --target cuda >"$tmp/ab.cu"
has "affine: max/min bounds" 'for \(int64_t j = ct_max64\(0, i \+ ii - 3\); j < ct_min64\(45, i \+ ii \+ 4\); j\+\+\)' "$tmp/ab.cu"
"$CACHET" emit tests/plans/cuda/affine_split.cachet --target cuda >"$tmp/as.cu"
has "affine: a split's per-iteration range" 'for \(int64_t jj = 0; jj < ct_min64\(16, \(i \+ ii\) - j \+ 1\); jj \+= 1\)' "$tmp/as.cu"
has "affine: the split loop steps below the bound" 'for \(int64_t j = 0; j < i \+ ii \+ 1; j \+= 16\)' "$tmp/as.cu"
"$CACHET" emit tests/plans/cuda/affine_trmm.cachet --target cuda >"$tmp/at.cu"
has "affine: no #pragma unroll on a triangular loop" '#pragma unroll' "$tmp/at.cu" 0
"$CACHET" emit tests/plans/cuda/affine_shared.cachet --target cuda >"$tmp/ash.cu"
has "affine: shared copies test the array's bounds inside kb" 'if \(16 \* ib \+ c0 >= 0 && -16 \* ib - c0 \+ 47 >= 0 && 16 \* kb \+ c1 >= 0' "$tmp/ash.cu"
has "affine: the triangular kb loop around the shared fills" 'for \(int64_t kb = 0; kb < ib \+ 1; kb \+= 1\)' "$tmp/ash.cu"

# OpenCL still spells OpenCL (the one generator, two dialects)
expect "opencl: __local" 0 '__local float AA\[64\]' "$CACHET" emit examples/opencl_local.cachet --target opencl

# errors
MM='kernel mm
param M = 9, N = 8, K = 6
array A : f32[M, K] input
array B : f32[K, N] input
array C : f32[M, N] inout
for (i: M, j: N, k: K) {
  C[i, j] += A[i, k] * B[k, j]
}'
mm() {
	name=$1
	shift
	f=$tmp/$name.cachet
	printf '%s\n' "$MM" >"$f"
	for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
	echo "$f"
}
f=$(mm glob 'schedule {' '  ii, jj = tile(i=4, j=4)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=cuda) {' '  AA = cache(A, index=ii, location=global)' '  parallelize(i, j)' '}')
expect "location=global refused" 2 'glob.cachet:14:27: error: cache .AA.: location=global cannot be honoured on plan\(target=cuda\).*use shared or private' \
	"$CACHET" emit "$f" --target cuda
f=$(mm inner 'schedule {' '  ii, jj = tile(i=4, j=4)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=cuda) {' '  CC = cache(C, index=ii, location=private)' '  parallelize(i, j)' '}')
expect "a private cache above the thread loops is spread over them" 0 'float CC\[1\]; .*this thread.s share' \
	"$CACHET" emit "$f" --target cuda
expect "the same on opencl is refused" 2 \
	"error: cache 'CC' \(location=private\) writes back to 'C' from outside the work-item loops.*use location=local" \
	sh -c "sed 's/target=cuda/target=opencl/' $f >$tmp/inner_ocl.cachet && \"$CACHET\" emit $tmp/inner_ocl.cachet --target opencl"
f=$(mm dep 'plan(target=cuda) {' '  parallelize(k)' '}')
expect "a reduction index is refused" 2 "dep.cachet:7:3: error: parallelize\(k\): the iterations of 'k' are not independent" \
	"$CACHET" emit "$f" --target cuda
f=$(mm four 'schedule {' '  ii = split(i, 2)' '}' 'plan(target=cuda) {' '  parallelize(i, j, k, ii)' '}')
expect "at most 3 dimensions" 2 'cuda parallelizes at most 3 indices' "$CACHET" check "$f"
f=$(mm threads 'param Z = 1' 'schedule {' '  ii, jj = tile(i=64, j=64)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=cuda) {' '  parallelize(j, i)' '}')
expect "more than 1024 threads per block" 2 'threads.cachet:15:3: error: a block of 64 x 64 x 1 = 4096 threads exceeds CUDA.s 1024' \
	"$CACHET" check "$f" -D M=128 -D N=128
f=$(mm smem 'schedule {' '  ii, jj, kk = tile(i=32, j=32, k=256)' '  reorder(i, j, k, ii, jj, kk)' '}' \
	'plan(target=cuda) {' '  AA = cache(A, index=ii, location=shared)' '  BB = cache(B, index=ii, location=shared)' \
	'  parallelize(j, i)' '}')
expect "more than 48 KiB of shared memory" 2 'smem.cachet:16:3: error: the shared caches need 70144 bytes per block' \
	"$CACHET" emit "$f" -D M=64 -D N=64 -D K=512 --target cuda
f=$(mm grid 'schedule {' '  ii, jj = tile(i=2, j=2)' '  reorder(i, j, k, ii, jj)' '}' \
	'plan(target=cuda) {' '  parallelize(j, i)' '}')
expect "more than 65535 blocks in y" 2 "grid.cachet:14:3: error: 70000 blocks in the grid's y dimension \('i/ii'\) exceed CUDA's 65535" \
	"$CACHET" check "$f" -D M=140000 -D N=4 -D K=1
f=$(mm host 'plan(target=host) {' '  parallelize(i)' '}')
expect "--target cuda needs a cuda plan" 2 'needs plan\(target=cuda\)' "$CACHET" emit "$f" --target cuda
expect "unknown target" 2 "unknown target 'cud'" "$CACHET" emit "$f" --target cud
f=$(mm shhost 'schedule {' '  ii = split(i, 4)' '}' 'plan {' '  AA = cache(A, index=ii, location=shared)' '}')
expect "location= on a host plan" 2 'location= is only for plan' "$CACHET" check "$f"

# nested automatic unrolls multiply: the k loop (7 trips around 465 statements) is not unrolled,
# its copy and compute nests (155 and 310) are (tests/plans/cuda/nested_unroll_cap.cachet)
"$CACHET" emit tests/plans/cuda/nested_unroll_cap.cachet --target cuda >"$tmp/cap.cu" 2>&1
if grep -B1 'for (int64_t k = 0; k < 35' "$tmp/cap.cu" | grep -q 'pragma unroll'; then
	bad "nested unroll cap: the 7-trip k loop around 465 statements is unrolled"
elif ! grep -B1 'for (int64_t j = 0; j < 31' "$tmp/cap.cu" | grep -q 'pragma unroll'; then
	bad "nested unroll cap: the 31 x 5 x 2 nest inside it is not unrolled"
else
	ok
fi

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" = 0 ]
