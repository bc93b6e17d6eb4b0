#!/bin/sh
# cuda_runtime.sh: plan(target=cuda) without a GPU (this project's machines and CI): `cachet run` says what is missing and exits 2, `cachet probe` says "cuda none (reason)" and succeeds. On a machine with an NVIDIA GPU the run checks are skipped (build/tests/test_cuda covers them there).
. tests/cli/lib/expect.sh

K='kernel scale
param N = 37
array X : f32[N] input
array Y : f32[N] inout
for (i: N) {
  Y[i] = 3 * X[i] + Y[i]
}
schedule {
  ii = split(i, 8)
}
plan(target=cuda) {
  parallelize(i)
}'
f=$tmp/scale.cachet
printf '%s\n' "$K" >"$f"

# the probe: always succeeds; lists the GPU or says why there is none
expect "probe: a cuda line" 0 '^cuda +' "$CACHET" probe
expect "probe --json: a cuda object" 0 '"cuda": \{"devices": \[' "$CACHET" probe --json
expect "probe: no driver is no error" 0 '^cuda +none \(CUDA: no NVIDIA driver: /nonexistent/libcuda.so.1 not found' \
	env CACHET_LIBCUDA=/nonexistent/libcuda.so.1 "$CACHET" probe
expect "probe --json: the reason" 0 \
	'"cuda": \{"devices": \[\], "reason": "CUDA: no NVIDIA driver' env CACHET_LIBCUDA=/nonexistent/libcuda.so.1 \
	"$CACHET" probe --json

if ! "$CACHET" check "$f" >/dev/null 2>&1; then
	for c in "run: no driver is exit 2" "run --checked refused" "tune: no driver is exit 2" \
		"run: this machine's answer" "run --json: exit 2 too"; do
		skip "$c: this build's parser does not take plan(target=cuda) yet"
	done
else
	# a made-up missing driver: the same answer on every machine
	expect "run: no driver is exit 2" 2 \
		'CUDA: no NVIDIA driver: /nonexistent/libcuda.so.1 not found \(plan\(target=cuda\) needs an NVIDIA GPU\)' \
		env CACHET_LIBCUDA=/nonexistent/libcuda.so.1 "$CACHET" run "$f"
	expect "run --checked refused" 2 'cover host kernels only, not plan\(target=cuda\)' \
		env CACHET_LIBCUDA=/nonexistent/libcuda.so.1 "$CACHET" run "$f" --checked
	printf '%s\n' "$K" | sed 's/^param N = 37$/param N = 37\nparam T = 8 tune {4, 8}/; s/split(i, 8)/split(i, T)/' \
		>"$tmp/scale_tune.cachet"
	expect "tune: no driver is exit 2, before any candidate" 2 'CUDA: no NVIDIA driver' \
		env CACHET_LIBCUDA=/nonexistent/libcuda.so.1 "$CACHET" tune "$tmp/scale_tune.cachet" --budget 5
	if "$CACHET" probe | grep -q '^cuda  *none'; then
		expect "run: this machine's answer is exit 2" 2 'CUDA: (no NVIDIA driver|the driver found no device)' \
			"$CACHET" run "$f"
		expect "run --json: exit 2 too" 2 'CUDA: ' "$CACHET" run "$f" --json
	else
		skip "run: this machine's answer: it has a CUDA device (build/tests/test_cuda runs there)"
		skip "run --json: exit 2 too: it has a CUDA device"
	fi
fi

counts
[ "$fail" = 0 ]
