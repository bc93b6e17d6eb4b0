#!/bin/sh
# affine_search.sh: the stages that rank schedules on kernels with affine loop bounds (issue #31):
# the tile search, counted by the exact simulator, finds the best tiling that simulating every
# candidate finds; its limits say why.
. "$(dirname "$0")/lib/expect.sh"
export CACHET_CACHE_DIR="$tmp/cache"

ex=examples/tiles_trmm.cachet

# ---------------------------------------------------------------- tiles
expect "tiles: affine kernel searched" 0 "fallback: affine loop bounds, which the model does not analyse yet: each tiling counted by the exact simulator \(225792 accesses" \
	"$CACHET" tiles "$ex" -D N=48 -D M=48 --cache 1K:64,4K:64
expect "tiles --json: source and fallback" 0 '"source": "simulator", "fallback": "affine loop bounds", "accesses": 225792, .*"exact": true' \
	"$CACHET" tiles "$ex" -D N=48 -D M=48 --cache 1K:64,4K:64 --json
expect "tiles --json: rectangular kernel keeps the model" 0 '"source": "model", "fallback": null' \
	"$CACHET" tiles examples/tiles_two_index.cachet --cache 64K:64 --max 16 --json

# the search's best against every tiling simulated: TJ, TK in 1..8 (ranked as the search ranks:
# misses of the smaller level, then the larger; ties: the larger product, then larger tiles)
for spec in "24 512:16,2K:32" "32 256:16,1K:16"; do
	set -- $spec
	n=$1 cache=$2
	best=$(for a in 1 2 3 4 5 6 7 8; do for b in 1 2 3 4 5 6 7 8; do
		m=$("$CACHET" simulate "$ex" -D N="$n" -D M="$n" -D TJ=$a -D TK=$b --cache "$cache" --json |
			sed 's/.*"simulated_misses": \([0-9]*\)}, {.*"simulated_misses": \([0-9]*\)}.*/\1 \2/')
		echo "$m $a $b $((a * b))"
	done; done | sort -k1,1n -k2,2n -k5,5nr -k3,3nr -k4,4nr | head -1)
	set -- $best
	want="\"candidates\": \[\{\"tiles\": \[$3, $4\], \"misses\": $1, \"level_misses\": \[$1, $2\]"
	expect "tiles: N=$n $cache: the best of all 64 tilings simulated ($3, $4: $1, $2 misses)" 0 "$want" \
		"$CACHET" tiles "$ex" -D N="$n" -D M="$n" --cache "$cache" --max 8 --json
done

rt=$(kfile rt.cachet "kernel rt" "param N : runtime" "param T = 4" "array A : f32[N, N] inout" \
	"for (i: N, j: 0 .. i+1) {" "  A[i, j] += 1" "}" "schedule {" "  jj = split(j, T)" "}")
expect "tiles: affine kernel with an unknown size" 2 "rt.cachet:1:8: error: kernel 'rt' has loops with affine bounds, which the tile search counts with the exact simulator .*: give runtime param 'N' a value \(-D N=...\)" \
	"$CACHET" tiles "$rt" --cache 4K:64
expect "tiles: affine kernel, size given" 0 "fallback: affine loop bounds" \
	"$CACHET" tiles "$rt" -D N=20 --cache 256:16
expect "tiles: a trace too long to simulate" 2 "error: the tile search stopped at the tiling TJ=[0-9]+, TK=[0-9]+: the cache model does not analyse loops with affine bounds yet .* more than 67108864 accesses, too many to simulate within the tile search \(per tiling\)" \
	"$CACHET" tiles "$ex" -D N=512 -D M=512 --cache 4K:64

counts
[ "$fail" = 0 ]
