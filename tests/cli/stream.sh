#!/bin/sh
# stream.sh: vectorize(x, nontemporal=true) stores with streaming stores (aligned lines, scalar head and tail, one fence per thread or per kernel), equals the interpreter, and refuses arrays that are not write-only outputs.
. tests/cli/lib/expect.sh

# f64 and integer types, a split with a tail version of the vectorized index,
# no parallel loop (one fence before returning)
f64=$(kfile s64.cachet 'kernel s64' 'param N = 5, M = 45' \
	'array X : f64[N, M] input' 'array Y : f64[N, M] output' \
	'for (i: N, j: M) {' '  Y[i, j] = X[i, j] * 2 - 1' '}' \
	'schedule {' '  jj = split(j, 24)' '}' \
	'plan {' '  vectorize(jj, nontemporal=true)' '}')
i32=$(kfile s32.cachet 'kernel s32' 'param N = 7, M = 33' \
	'array X : i32[N, M] input' 'array Y : i32[N, M] output' \
	'for (i: N, j: M) {' '  Y[i, j] = X[i, j] * 3 + i' '}' \
	'plan {' '  vectorize(j, nontemporal=true)' '  parallelize(i)' '}')
i64=$(kfile s64i.cachet 'kernel s64i' 'param N = 3, M = 19' \
	'array X : i64[N, M] input' 'array Y : i64[N, M] output' \
	'for (i: N, j: M) {' '  Y[i, j] = X[i, j] - j' '}' \
	'plan {' '  vectorize(j, nontemporal=true)' '}')
# runtime sizes; the parallel index split with a tail: main and tail blocks
# run as one parallel loop, whose streamed loops fence each
rt=$(kfile srt.cachet 'kernel srt' 'param N : runtime' 'param M : runtime' \
	'array X : f32[N, M] input' 'array Y : f32[N, M] output' \
	'for (i: N, j: M) {' '  Y[i, j] = X[i, j] / 3' '}' \
	'schedule {' '  ii = split(i, 4)' '  reorder(i, ii, j)' '}' \
	'plan {' '  vectorize(j, nontemporal=true)' '  parallelize(i)' '}')

# kernel file, its -D values
set -- \
	"examples/plan_nontemporal.cachet|" \
	"examples/plan_nontemporal.cachet|-D N=1 -D M=1" \
	"examples/plan_nontemporal.cachet|-D N=5 -D M=16" \
	"examples/plan_nontemporal.cachet|-D N=9 -D M=100" \
	"examples/plan_nontemporal.cachet|-D N=3 -D M=257" \
	"examples/stencil5_fast.cachet|-D N=37 -D M=45" \
	"examples/stencil5_fast.cachet|-D N=3 -D M=3" \
	"examples/stencil5_fast.cachet|-D N=19 -D M=130" \
	"$f64|" "$f64|-D M=17" "$i32|" "$i32|-D M=64" "$i64|" \
	"$rt|-D N=37 -D M=45" "$rt|-D N=3 -D M=200" "$rt|-D N=1 -D M=1"
for row in "$@"; do
	f=${row%%|*}
	defs=${row#*|}
	for t in 1 2 3 4; do
		# shellcheck disable=SC2086
		expect "$f $defs --threads $t" 0 '"verified": true' "$CACHET" run "$f" $defs --threads "$t" --json
	done
done

# what is emitted
expect "streaming stores of lines" 0 'ct_stream64\(&Y\[i \* 45 \+ j\], ct_line\)' \
	"$CACHET" emit examples/plan_nontemporal.cachet
expect "scalar head up to a line boundary" 0 'if \(ct_line_aligned\(&Y\[i \* 45 \+ j\]\)\)' \
	"$CACHET" emit examples/plan_nontemporal.cachet
expect "a parallel region whose loop does not wait" 0 '#pragma omp for schedule\(static\) nowait' \
	"$CACHET" emit examples/plan_nontemporal.cachet
"$CACHET" emit examples/plan_nontemporal.cachet >"$tmp/ex" 2>&1
# one fence per thread: after the worksharing loop, not in the rows
n=$(grep -c 'ct_stream_fence();' "$tmp/ex")
if [ "$n" = 1 ]; then ok; else bad "plan_nontemporal: one fence, found $n"; fi
if grep -q 'ct_stream_fence(); /\* the streaming stores, before returning' "$tmp/ex"; then
	bad "plan_nontemporal: no fence at the end of a kernel whose threads fence"
else ok; fi
expect "8 doubles a line, fence before returning" 0 'ct_stream_fence\(\); /\* the streaming stores, before returning' \
	"$CACHET" emit "$f64"
expect "8 doubles a line" 0 'whole lines \(8 elements\)' "$CACHET" emit "$f64"
expect "merged parallel versions fence per streamed loop" 0 'if \(ct_nt_j > ct_nt_lines_j\)' \
	"$CACHET" emit "$rt"
expect "stencil: the interior is streamed" 0 'ct_stream64\(&B\[x \* 256 \+ y\], ct_line\)' \
	"$CACHET" emit examples/stencil5_fast.cachet
# without the option: no streaming
"$CACHET" emit examples/stencil5.cachet >"$tmp/plain" 2>&1
if grep -q 'ct_stream64' "$tmp/plain"; then bad "stencil5 without the option streams"; else ok; fi
# the native code (AVX-512 or AVX or SSE2 here) has streaming stores
if "$CACHET" emit examples/plan_nontemporal.cachet -D M=4096 >"$tmp/nt.c" 2>/dev/null &&
	cc -O3 -march=native -fopenmp -S -o "$tmp/nt.s" "$tmp/nt.c" 2>/dev/null; then
	if grep -qE 'movntps|movntdq' "$tmp/nt.s"; then ok; else bad "no movnt instruction in the compiled example"; fi
fi

# errors: arrays that are not write-only outputs, and the option's syntax
inout=$(kfile e1.cachet 'kernel e1' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] inout' \
	'for (i: N) {' '  Y[i] = X[i] + 1' '}' 'plan {' '  vectorize(i, nontemporal=true)' '}')
expect "inout array" 2 "e1.cachet:9:13: error: vectorize\(i, nontemporal=true\): 'Y' is written in the loop but is not an output array" \
	"$CACHET" check "$inout"
readback=$(kfile e2.cachet 'kernel e2' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] output' \
	'array Z : f32[N] output' 'for (i: N) {' '  Y[i] = X[i] + 1' '  Z[i] = Y[i] * 2' '}' \
	'plan {' '  vectorize(i, nontemporal=true)' '}')
expect "output read back" 2 "e2.cachet:11:13: error: vectorize\(i, nontemporal=true\): the kernel reads 'Y'" \
	"$CACHET" check "$readback"
update=$(kfile e3.cachet 'kernel e3' 'param N = 8, K = 4' 'array X : f32[K, N] input' 'array Y : f32[K, N] output' \
	'for (k: K, i: N) {' '  Y[k, i] = X[k, i]' '}' 'for (k2: K, i2: N) {' '  Y[k2, i2] += 1' '}' \
	'plan {' '  vectorize(i, nontemporal=true)' '}')
expect "output updated" 2 "error: vectorize\(i, nontemporal=true\): the kernel reads 'Y'" "$CACHET" check "$update"
cached=$(kfile e4.cachet 'kernel e4' 'param N = 64' 'array X : f32[N, N] input' 'array Y : f32[N, N] output' \
	'for (i: N, j: N) {' '  Y[i, j] = X[i, j]' '}' 'schedule {' '  jj = split(j, 16)' '}' \
	'plan {' '  YY = cache(Y, index=jj)' '  vectorize(jj, nontemporal=true)' '}')
expect "cached output" 2 "e4.cachet:13:13: error: vectorize\(jj, nontemporal=true\): 'Y' has a cache" "$CACHET" check "$cached"
badval=$(kfile e5.cachet 'kernel e5' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] output' \
	'for (i: N) {' '  Y[i] = X[i]' '}' 'plan {' '  vectorize(i, nontemporal=maybe)' '}')
expect "nontemporal=maybe" 2 "e5.cachet:9:28: error: expected true or false for 'nontemporal'" "$CACHET" check "$badval"
twice=$(kfile e6.cachet 'kernel e6' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] output' \
	'for (i: N) {' '  Y[i] = X[i]' '}' 'plan {' '  vectorize(i, nontemporal=true, nontemporal=false)' '}')
expect "option twice" 2 "e6.cachet:9:34: error: option 'nontemporal' is given twice" "$CACHET" check "$twice"
other=$(kfile e7.cachet 'kernel e7' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] output' \
	'for (i: N) {' '  Y[i] = X[i]' '}' 'plan {' '  vectorize(i, aligned=true)' '}')
expect "unknown option" 2 "e7.cachet:9:16: error: unknown vectorize option 'aligned' \(use nontemporal\)" "$CACHET" check "$other"
unr=$(kfile e8.cachet 'kernel e8' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] output' \
	'for (i: N) {' '  Y[i] = X[i]' '}' 'plan {' '  unroll(i, nontemporal=true)' '}')
expect "unroll has no nontemporal" 2 "e8.cachet:9:13: error: unknown unroll option 'nontemporal' \(use by\)" "$CACHET" check "$unr"
# with the option off, an inout array is fine
off=$(kfile e9.cachet 'kernel e9' 'param N = 8' 'array X : f32[N] input' 'array Y : f32[N] inout' \
	'for (i: N) {' '  Y[i] = X[i] + Y[i]' '}' 'plan {' '  vectorize(i, nontemporal=false)' '}')
expect "nontemporal=false" 0 '"verified": true' "$CACHET" run "$off" --json

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
