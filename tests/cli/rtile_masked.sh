#!/bin/sh
# rtile_masked.sh: register tiles whose vectorized trip count leaves a remainder that is not a power of two use one masked chunk with 64-byte vectors, and equal the interpreter.
. tests/cli/lib/expect.sh

# f32 and f64 tiles, remainders 15, 13, 7, 5, 3 lanes of a full vector, with
# and without 64-byte vectors (the masked helpers fall back to memcpy where
# the compiler does not target AVX-512)
for vb in 64 32; do
	for d in "-D M=9 -D N=31 -D K=5" "-D M=13 -D N=45 -D K=3" "-D M=8 -D N=23 -D K=17" "-D M=3 -D N=13 -D K=2"; do
		for f in examples/sgemm_small.cachet examples/dgemm_small.cachet; do
			# shellcheck disable=SC2086
			expect "$f $d --vector-bytes $vb" 0 '"verified": true' \
				"$CACHET" run "$f" $d --vector-bytes "$vb" --json
		done
	done
done
# the packed gemm examples' tails (masked chunks inside multicached panels)
expect "sgemm 37x61x29" 0 '"verified": true' "$CACHET" run examples/sgemm.cachet -D M=37 -D N=61 -D K=29 --vector-bytes 64 --json
expect "dgemm 37x61x29" 0 '"verified": true' "$CACHET" run examples/dgemm.cachet -D M=37 -D N=61 -D K=29 --vector-bytes 64 --json

# what is emitted: 31 floats = 16 + 16 with 15 in use (two accumulators per
# row: 6 x 2 = 12, the example's 6 rows below 64 columns), no masks with
# 32-byte vectors
expect "31 floats: a masked chunk of 15" 0 'ct_ldm_v16f\(&B\[k \* 31 \+ j \+ 16\], 15\)' \
	"$CACHET" emit examples/sgemm_small.cachet -D M=9 -D N=31 -D K=5 --vector-bytes 64
expect "31 floats: 12 accumulators" 0 'register tile: 6 x 31 of C \(12 accumulators' \
	"$CACHET" emit examples/sgemm_small.cachet -D M=9 -D N=31 -D K=5 --vector-bytes 64
"$CACHET" emit examples/sgemm_small.cachet -D M=9 -D N=31 -D K=5 --vector-bytes 32 >"$tmp/e32" 2>&1
if grep -q 'ct_ldm_v[0-9]*[fd](&' "$tmp/e32"; then bad "32-byte vectors: no masked chunks"; else ok; fi
# a power-of-two remainder keeps its narrower vector (100 = 64 + 16 + 16 + 4)
"$CACHET" emit examples/sgemm_small.cachet -D M=8 -D N=100 -D K=4 --vector-bytes 64 >"$tmp/e100" 2>&1
if grep -q 'ct_ldm_v[0-9]*[fd](&' "$tmp/e100"; then bad "remainder 4: a 4-lane chunk, not a mask"; else ok; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
