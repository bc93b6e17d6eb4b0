#!/bin/sh
# gpu_suite.sh: what of the GPU suite (docs/CUDA.md, "On a GPU") can be checked without a GPU: bench_cuda
# says "no CUDA device: <reason>" and exits 2 where there is none, --compile-only generates and
# compiles every kernel of the bench with nvcc (skipped without nvcc, the CUDA generator or the
# examples), scripts/gpu_check.sh refuses a wrong verb and its run reports a missing GPU as a
# failed step (never passed), and the fuzzer's CUDA kernels leave the other seeds' kernels as
# they were.
. "$(dirname "$0")/lib/expect.sh"
BUILD=${CACHET_BUILD:-build}
BENCH=$BUILD/bench/bench_cuda
FUZZ=$BUILD/fuzz/difffuzz

if [ ! -x "$BENCH" ]; then
	bad "$BENCH is missing (make $BENCH)"
elif ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 ' || [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]; then
	skip "bench_cuda without a device: this machine has libcuda.so.1 (a GPU machine runs the bench itself)"
else
	expect "bench_cuda: no device" 2 '^no CUDA device: cannot load libcuda.so.1' "$BENCH" --reps 1
	expect "bench_cuda: the cpu line first" 2 '^cpu: ' "$BENCH" --reps 1
fi
expect "bench_cuda: a bad option" 2 'usage: bench_cuda' "$BENCH" --bogus

nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc)
if [ -z "$nvcc" ]; then
	skip "bench_cuda --compile-only: no nvcc"
elif [ ! -e examples/cuda_sgemm.cachet ] || [ ! -e examples/cuda_dgemm.cachet ] ||
	[ ! -e examples/cuda_sgemm_tune.cachet ] || [ ! -e examples/cuda_stencil.cachet ]; then
	skip "bench_cuda --compile-only: the bench's examples (examples/cuda_{sgemm,dgemm,sgemm_tune,stencil}.cachet) are not all here yet"
elif ! "$CACHET" emit examples/cuda_sgemm.cachet --target cuda >/dev/null 2>"$tmp/gen.err"; then
	skip "bench_cuda --compile-only: no CUDA generator in this build ($(head -1 "$tmp/gen.err"))"
else
	expect "bench_cuda --compile-only: every kernel of the bench compiles (sm_90a)" 0 'every kernel compiled' \
		"$BENCH" --compile-only --sizes 1024,8192 --stencil-size 8192
fi

# the bench's own path on a made-up GPU (bench/cuda/fake_gpu.c as libcuda.so.1 and as cuBLAS): the
# launch of cachet's compiled kernel, the row-major/column-major call of cuBLAS, the comparisons
if [ -z "$nvcc" ] || [ ! -e examples/cuda_sgemm.cachet ] || [ ! -e examples/cuda_stencil.cachet ] ||
	! "$CACHET" emit examples/cuda_sgemm.cachet --target cuda >/dev/null 2>&1; then
	skip "bench_cuda on a made-up GPU: needs nvcc, the CUDA generator and the CUDA examples"
elif ! ${CC:-cc} -shared -fPIC -O2 -o "$tmp/libcuda.so.1" bench/cuda/fake_gpu.c -lm 2>"$tmp/cc.err"; then
	bad "bench/cuda/fake_gpu.c does not compile: $(head -3 "$tmp/cc.err")"
else
	cp "$tmp/libcuda.so.1" "$tmp/libfakeblas.so"
	# run_fake [VAR=VALUE] -- BENCH ARGS...
	run_fake() {
		set -- "$@"
		extra=
		[ "$1" != -- ] && extra=$1 && shift
		shift
		env LD_LIBRARY_PATH="$tmp" CACHET_CUBLAS="$tmp/libfakeblas.so" $extra "$BENCH" --stencil-size 64 --reps 2 --no-lib "$@"
	}
	run_fake -- --sizes 96 --only sgemm,dgemm,stencil >"$tmp/fake.out" 2>&1
	echo "exit $?" >>"$tmp/fake.out"
	expect "bench_cuda on a made-up GPU: exit 0" 0 'exit 0' cat "$tmp/fake.out"
	expect "bench_cuda on a made-up GPU: cachet's sgemm C and cuBLAS's agree" 0 \
		'^ +96 \|.*ok: max\|cachet-cuBLAS\| 0' sed -n '/== sgemm/,/^ratio/p' "$tmp/fake.out"
	expect "bench_cuda on a made-up GPU: cachet's dgemm C and cuBLAS's agree" 0 \
		'^ +96 \|.*ok: max\|cachet-cuBLAS\| 0' sed -n '/== dgemm/,/^ratio/p' "$tmp/fake.out"
	expect "bench_cuda on a made-up GPU: the stencil against the copy" 0 '^ +64 \|' sed -n '/== stencil/,/^GB/p' "$tmp/fake.out"
	expect "bench_cuda on a made-up GPU: a wrong kernel is a MISMATCH, exit 1" 1 'MISMATCH' \
		run_fake FAKE_GPU_WRONG=1 -- --sizes 64 --only sgemm
fi

expect "gpu_check.sh: a wrong verb" 2 'usage: sh scripts/gpu_check.sh prepare.run' sh scripts/gpu_check.sh bogus
if command -v nvidia-smi >/dev/null 2>&1; then
	skip "gpu_check.sh run machine without a GPU: this machine has nvidia-smi"
else
	# a missing GPU is a failed step, and the run fails; the log goes to $OUT/gpu.log
	expect "gpu_check.sh run machine: no GPU fails" 1 'verdict: FAILED: nvidia-smi lists no GPU' \
		env OUT="$tmp/out" sh scripts/gpu_check.sh run machine
	expect "gpu_check.sh: the log in \$OUT/gpu.log" 0 'summary' cat "$tmp/out/gpu.log"
fi

if [ -x "$FUZZ" ]; then
	# --cuda-share 0 (the default without a CUDA engine) draws every seed's kernel as before
	"$FUZZ" --print 5 --opencl-share 15 >"$tmp/a" 2>&1
	"$FUZZ" --print 5 --opencl-share 15 --cuda-share 0 >"$tmp/b" 2>&1
	expect "difffuzz: --cuda-share 0 keeps the kernels" 0 '' cmp "$tmp/a" "$tmp/b"
	expect "difffuzz: --cuda-share 100 gives CUDA plans" 0 'plan\(target=cuda\)' "$FUZZ" --print 5 --cuda-share 100
	expect "difffuzz: a CUDA kernel gets no OpenCL spelling" 1 '' \
		sh -c "for s in 1 2 3 4 5 6 7 8 9 10 11 12; do '$FUZZ' --print \$s --cuda-share 100; done | grep -E 'location=local|target=opencl'"
	expect "difffuzz: the engines cuda and cudacompile in its usage" 2 'interp,native,opencl,cuda,cudacompile' "$FUZZ" --help
else
	bad "$FUZZ is missing (make $FUZZ)"
fi
counts
[ "$fail" = 0 ]
