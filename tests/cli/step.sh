#!/bin/sh
# step.sh: loops written with a step (`for (t: 0 .. N step T)`, docs/LANGUAGE.md section 3): the
# fused two-index example checks, lowers (steps shown), runs and verifies on every engine and at
# several tilings (the code cache keys the step), counts its flops, and its misses predicted by
# the model equal the simulator's; the tile search takes step params (the TCE's fused tiles);
# the refusals are in tests/plans/errors/step_*.cachet.
. "$(dirname "$0")/lib/expect.sh"
export CACHET_CACHE_DIR="$tmp/cache"

f=examples/two_index_fused.cachet
small="-D V=64 -D N=64 -D TA=16 -D TJ=32 -D TI=8 -D TB=16"

expect "check" 0 "" "$CACHET" check "$f"
# shellcheck disable=SC2086
expect "lower: the step" 0 "^for at in range\(0, 64, step=16\):$" "$CACHET" lower "$f" $small
# shellcheck disable=SC2086
expect "lower --json: the step" 0 '"loop": "jt", "lo": "0", "hi": "64", "step": 32' \
	"$CACHET" lower "$f" $small --json
# shellcheck disable=SC2086
expect "emit: the step" 0 "for \(int64_t at = 0; at < 64; at \+= 16\)" "$CACHET" emit "$f" $small
for e in interp native; do
	# shellcheck disable=SC2086
	expect "run $e" 0 "verified against the reference interpreter" "$CACHET" run "$f" $small --engine "$e"
done
# shellcheck disable=SC2086
expect "run checked" 0 "checked \(every access bounds-tested\)" "$CACHET" run "$f" $small --checked
# other tilings, one cache: a binary keyed without the step would read past T or skip tiles
for t in "64 64 64 64" "1 2 4 8" "32 8 64 2"; do
	set -- $t
	expect "run TA=$1 TJ=$2 TI=$3 TB=$4" 0 "verified" "$CACHET" run "$f" -D V=64 -D N=64 \
		-D TA="$1" -D TJ="$2" -D TI="$3" -D TB="$4" --checked
done

# the flop count: 2 V N N for T and 2 V V N for B, whatever the tiles (gflops x seconds)
for t in "16 32 8 16" "64 1 2 4"; do
	set -- $t
	"$CACHET" run "$f" -D V=64 -D N=32 -D TA="$1" -D TJ="$2" -D TI="$3" -D TB="$4" --json >"$tmp/j" 2>&1
	flops=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["gflops"]*1e9*r["seconds"]))' "$tmp/j" 2>/dev/null)
	want=$((2 * 64 * 32 * 32 + 2 * 64 * 64 * 32))
	# gflops is rounded to 6 digits: within 0.01 %
	if [ -n "$flops" ] && [ $((flops - want)) -lt $((want / 10000 + 1)) ] && [ $((want - flops)) -lt $((want / 10000 + 1)) ]; then
		ok "flops $t"
	else
		bad "flops $t: $flops, want $want"
	fi
done

# the model equals the simulator on the stepped nest (rectangular: no fallback)
for c in 8K:64 32K:64:8; do
	# shellcheck disable=SC2086
	p=$("$CACHET" predict "$f" $small --cache "$c" --json | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["levels"][0]["misses"], r["levels"][0].get("source", ""))')
	# shellcheck disable=SC2086
	s=$("$CACHET" simulate "$f" $small --cache "$c" --json | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["levels"][0]["simulated_misses"])')
	case $p in
	"$s model") ok "predict = simulate at $c ($s)" ;;
	*) bad "predict at $c: $p, simulate $s" ;;
	esac
done

# the tile search: the four steps are its params; its best tiling's count is the simulator's
"$CACHET" tiles "$f" -D V=64 -D N=64 -D TB=16 --cache 8K:64 --max 64 --json >"$tmp/t" 2>"$tmp/te"
best=$(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["candidates"][0]
print(",".join(r["params"]), " ".join(str(t) for t in c["tiles"]), c["misses"])' "$tmp/t" 2>/dev/null)
case $best in
"TA,TJ,TI,TB "*)
	ok "tiles: step params"
	set -- $best
	s=$("$CACHET" simulate "$f" -D V=64 -D N=64 -D TA="$2" -D TJ="$3" -D TI="$4" -D TB="$5" \
		--cache 8K:64 --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["levels"][0]["simulated_misses"])')
	if [ "$s" = "$6" ]; then ok "tiles: best ($2 $3 $4 $5) = simulate ($s)"; else bad "tiles: best $6, simulate $s"; fi
	expect "tiles: best verifies" 0 "verified" "$CACHET" run "$f" -D V=64 -D N=64 \
		-D TA="$2" -D TJ="$3" -D TI="$4" -D TB="$5" --checked
	;;
*) bad "tiles: $best"; head -3 "$tmp/te" >&2 ;;
esac

# a step param that sizes anything else is no tile (changing it would change the result)
g=$(kfile g.cachet 'kernel g' 'param N = 64, T = 8' 'array A : f32[N] input' \
	'array B : f32[N] output' 'for (t: 0 .. N step T) {' '  B[t] = A[t] * T' '}')
expect "tiles: a step that is also a value" 2 "no tile params" "$CACHET" tiles "$g"

# the tuner on a step param: its small verifying instance keeps the steps dividing the sizes
# (N = 256 capped to a multiple of every step), so every candidate is verified
w=$(kfile w.cachet 'kernel w' 'param N = 256' 'param T = 32 tune {8, 16, 32, 64}' \
	'array A : f32[N, N] input' 'array B : f32[N, N] output' 'for (t: 0 .. N step T, j: N) {' \
	'  for (i: T) {' '    B[t + i, j] = A[j, t + i] * 2' '  }' '}')
"$CACHET" tune "$w" --budget 20 --quiet --json >"$tmp/tj" 2>"$tmp/te"
v=$(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["measured"], sum(1 for c in r["candidates"] if c["verified"] is True), r["stored"])' "$tmp/tj" 2>/dev/null)
case $v in
"4 4 True") ok "tune: four step values verified, winner stored" ;;
*) bad "tune: $v"; head -3 "$tmp/te" >&2 ;;
esac

# a tail written with min: any step, the model counts with the simulator
h=$(kfile h.cachet 'kernel h' 'param N = 70, T = 16' 'array A : f32[N] input' \
	'array B : f32[N] output' 'for (t: 0 .. N step T) {' '  for (i: 0 .. min(T, N - t)) {' \
	'    B[t + i] = A[t + i] * 2' '  }' '}')
expect "min tail: run" 0 "verified" "$CACHET" run "$h" --checked
expect "min tail: T=70" 0 "verified" "$CACHET" run "$h" -D T=70 --checked
expect "min tail: T=1" 0 "verified" "$CACHET" run "$h" -D T=1 --checked
# a step without `..`
u=$(kfile u.cachet 'kernel u' 'param N = 9' 'array A : f32[N] input' 'array B : f32[N] output' \
	'for (b: N) { B[b] = 0 }' 'for (t: N step 4) {' '  B[t] = A[t]' '}')
expect "step without ..: lower" 0 "for t in range\(0, 9, step=4\):" "$CACHET" lower "$u"
expect "step without ..: run" 0 "verified" "$CACHET" run "$u" --checked

counts
