#!/bin/sh
# fuzz_cuda.sh: the differential fuzzer's CUDA pass without a GPU (docs/FUZZ.md, "CUDA"): 80 random
# kernels with plan(target=cuda) (the GPU plan shapes of the OpenCL pass, location=shared; a
# quarter of them with affine loop bounds: triangles, bands, issue #31), each
# checked in the interpreter and, when accepted, emitted by the CUDA generator and compiled by
# nvcc --cubin -arch=sm_90a (the engine cudacompile; the sources are compiled in batches, one nvcc
# run per 32 kernels, and alone when a batch fails). A compile error or a generator crash is a
# finding; a refusal with a message is not. Skipped, with the reason, without nvcc or without the
# CUDA generator. Then "N passed, M failed[, K skipped]" (one per kernel).
# Reproduce one seed: build/fuzz/difffuzz --seed S --count 1 --engines interp,cudacompile --cuda-share 100 --out DIR
BUILD=${CACHET_BUILD:-build}
FUZZ=$BUILD/fuzz/difffuzz
CACHET=${CACHET:-$BUILD/cachet}
if [ ! -x "$FUZZ" ]; then
	echo "FAIL $FUZZ is missing (make $FUZZ)"
	echo "0 passed, 1 failed"
	exit 1
fi
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc)
if [ -z "$nvcc" ]; then
	echo "skip the CUDA fuzz pass: no nvcc (CUDA_HOME, /usr/local/cuda/bin, PATH)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the generator: a kernel with a CUDA plan must emit
cat >"$tmp/probe.cachet" <<'K'
kernel probe
param N = 8
array A : f32[N] input
array B : f32[N] output
for (i: N) {
  B[i] = A[i]
}
schedule {
  ii = split(i, 4)
}
plan(target=cuda) {
  parallelize(i)
}
K
if ! "$CACHET" emit "$tmp/probe.cachet" --target cuda >"$tmp/probe.cu" 2>"$tmp/probe.err"; then
	echo "skip the CUDA fuzz pass: this build has no CUDA generator ($(head -1 "$tmp/probe.err"))"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
CACHET_CACHE_DIR=$tmp/cache "$FUZZ" --seed "${FUZZ_CUDA_SEED:-29000001}" --count "${FUZZ_CUDA_COUNT:-80}" \
	--engines interp,cudacompile --cuda-share 100 --nvcc "$nvcc" --no-minimize --timeout 300 >"$tmp/out" 2>&1
rc=$?
grep -E '^FAIL|^kernels:|^verified:|^cuda:|^failures:' "$tmp/out"
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -1)
compiled=$(sed -nE 's/^verified:.* cudacompile ([0-9]+).*/\1/p' "$tmp/out")
if [ -z "$last" ]; then
	tail -5 "$tmp/out"
	echo "0 passed, 1 failed"
	exit 1
fi
if [ "${compiled:-0}" -lt 1 ]; then
	echo "FAIL no kernel was compiled by nvcc (cudacompile 0): the pass tested nothing"
	p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	echo "$p passed, $((f + 1)) failed"
	exit 1
fi
echo "$last"
exit $rc
