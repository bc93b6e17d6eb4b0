#!/bin/sh
# affine_search.sh: the stages that rank schedules on kernels with affine loop bounds (issue #31):
# the tile search, counted by the exact simulator, finds the best tiling that simulating every
# candidate finds; its limits say why. The tuner ranks by the simulator (or the core cost alone
# when the trace is too long), stores winners, and `run`'s selector picks them, verified.
# predict --per-ref counts every reference by the simulator (past 2^26 accesses it shares out the estimate); --threads without a parallel loop (or
# with one thread) gives thread 0 predict's counts; over a parallel loop it splits the simulated
# trace as the generated code splits the loop, and refuses bands it cannot split, naming the loop.
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

# ---------------------------------------------------------------- tune and the selector
tt=$(kfile tt.cachet "kernel trmm_tune" "param N = 32, M = 32" "param TJ = 8 tune {4, 8, 16}" \
	"param TK = 8 tune {4, 8}" "array L : f32[N, N] input" "array B : f32[N, M] input" \
	"array C : f32[N, M] inout" "for (i: N, j: M, k: 0 .. i+1) {" "  C[i, j] += L[i, k] * B[k, j]" "}" \
	"schedule {" "  jj = split(j, TJ)" "  kk = split(k, TK)" "  reorder(i, j, k, jj, kk)" "}")
expect "tune: affine kernel, two sizes, simulated" 0 '"size_class": "N=24:M=24", .*"memory_source": "simulator", .*"stored": true' \
	"$CACHET" tune "$tt" --sizes 32,24 --budget 12 --cache 1K:64,8K:64 --json --quiet
grep -q '"size_class": "N=32:M=32", .*"memory_source": "simulator", .*"stored": true' "$tmp/o" && ok ||
	bad "tune: affine kernel at 32: $(head -c 400 "$tmp/o")"
expect "tune --show: the affine family's records" 0 "N=32:M=32 +TJ=[0-9]+:TK=[0-9]+" "$CACHET" tune --show "$tt"
expect "run: the selector's exact record (affine)" 0 "tuned .*\(exact N=32:M=32\)" "$CACHET" run "$tt"
grep -q "verified against the reference interpreter" "$tmp/o" && ok || bad "run: exact record not verified"
expect "run: nearest class (affine)" 0 '"verified": true, .*"source": "nearest", "size_class": "N=24:M=24"' \
	"$CACHET" run "$tt" -D N=21 -D M=27 --json
CACHET_CACHE_DIR="$tmp/empty" expect "run: no store, the model (affine)" 0 "tuned .*\(model\)" \
	"$CACHET" run "$tt" -D N=19 -D M=23
grep -q "verified against the reference interpreter" "$tmp/o" && ok || bad "run: model's pick not verified"
expect "tune: trace too long to simulate every point, core cost alone" 0 "ranked by the core cost alone" \
	"$CACHET" tune "$tt" -D N=1024 -D M=1024 --budget 2 --cache 32K:64

# ---------------------------------------------------------------- predict --per-ref
# every row the simulator's own: per (array, statement) the rows equal `cachet simulate`'s
# per-reference counts (which list an update's read and write apart), for a plain and a blocked
# (cached) triangular kernel
cat >"$tmp/refs.py" <<'PY'
import json, sys
p, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
L = len(p["levels"])
# a plan's cache buffer stands for its array in simulate's rows (per-ref names the storage)
alias = dict(a.split("=") for a in sys.argv[3:])
def sums(rows, key):
    out = {}
    for r in rows:
        k = (alias.get(r["array"], r["array"]), r["stmt"])
        v = out.setdefault(k, [0] * L)
        for l in range(L):
            v[l] += r[key][l]
    return out
src = sums([r for r in p["per_ref"] if r["line"] > 0], "misses")
sim = sums(s["references"], "misses")
bad = [k for k in sim if sim[k] != src.get(k)]
if bad or any(r["split"] != "simulated" for r in p["per_ref"]):
    print("differ: %s per-ref %s simulate %s" % (bad, src, sim))
elif [sum(r["misses"][l] for r in p["per_ref"]) for l in range(L)] != [x["misses"] for x in p["levels"]]:
    print("rows do not add up to the levels")
else:
    print("ok")
PY
for k in "examples/trmm.cachet -D N=40 -D M=24" "examples/trmm_blocked.cachet -D NB=2 -D MB=2"; do
	set -- $k
	"$CACHET" predict "$@" --cache 1K:32,8K:64 --per-ref --json >"$tmp/p.json" &&
		"$CACHET" simulate "$@" --cache 1K:32,8K:64 --json >"$tmp/s.json" &&
		r=$(python3 "$tmp/refs.py" "$tmp/p.json" "$tmp/s.json" BB=B) || r="failed"
	[ "$r" = ok ] && ok || bad "per-ref $1: $r"
done
expect "per-ref text: simulated, carriers unknown" 0 "every reference counted by the exact simulator, not the model" \
	"$CACHET" predict examples/trmm.cachet -D N=40 -D M=24 --cache 1K:32 --per-ref
grep -qE "trmm.cachet:16:26 B +2 read +[0-9]+ +[0-9]+ \([0-9]+\) \?" "$tmp/o" && ok ||
	bad "per-ref text: B's row: $(grep 16:26 "$tmp/o")"
# past 2^26 accesses predict estimates, and --per-ref shares the estimate's per-array counts out
# over the references (nothing simulated: by accesses), every count not exact
expect "per-ref: too long a trace, the estimate's rows" 0 "examples/trmm.cachet:16:16 L +2 read +4297064448 " \
	"$CACHET" predict examples/trmm.cachet -D N=2048 -D M=2048 --cache 4K:64 --per-ref
grep -q "the model's estimate" "$tmp/o" && ok || bad "per-ref: the estimate's note: $(head -c 300 "$tmp/o")"
if "$CACHET" predict examples/trmm.cachet -D N=336 -D M=336 --cache 32K:64,1M:64 --per-ref --json >"$tmp/pe.json" &&
	"$CACHET" predict examples/trmm.cachet -D N=336 -D M=336 --cache 32K:64,1M:64 --json >"$tmp/pp.json"; then
	python3 - "$tmp/pe.json" "$tmp/pp.json" <<'PY' && ok || bad "per-ref: the estimate's rows do not add up"
import json, sys
p, q = (json.load(open(f)) for f in sys.argv[1:3])
assert p["levels"] == q["levels"], (p["levels"], q["levels"])
assert all(lv["source"] == "affine estimate" and not lv["exact"] for lv in p["levels"]), p["levels"]
rows = p["per_ref"]
assert rows and all(r["split"] in ("model", "accesses") for r in rows), rows
assert sum(r["accesses"] for r in rows) == p["accesses"], p["accesses"]
for l, lv in enumerate(p["levels"]):
    assert sum(r["misses"][l] for r in rows) == lv["misses"], (l, lv)
    assert all(r["cold"][l] <= r["misses"][l] for r in rows)
PY
else
	bad "per-ref at N = 336: $(head -c 300 "$tmp/pe.json")"
fi

# ---------------------------------------------------------------- predict --threads
# no parallel loop, or one thread: thread 0 runs everything, with predict's simulated counts
expect "threads: affine kernel, no parallel loop" 0 '"threads": \{"threads": 2, "team": 1, "parallel": false, .*"thread_accesses": \[68608, 0\], "levels": \[\{"size": 2048, "line": 32, "ways": 0, "policy": "lru", "private": true, "misses": 1948, "exact": true, "thread_misses": \[1948, 0\]\}, \{"size": 16384, "line": 64, "ways": 0, "policy": "lru", "private": false, "misses": 176, "exact": true\}' \
	"$CACHET" predict examples/trmm.cachet -D N=32 -D M=32 --cache 2K:32:private,16K:64 --threads 2 --json
grep -q '"levels": \[{"size": 2048, "line": 32, "ways": 0, "misses": 1948, "exact": true, "source": "simulator", "fallback": "affine loop bounds"}, {"size": 16384, "line": 64, "ways": 0, "misses": 176' "$tmp/o" &&
	ok || bad "threads: predict's own counts differ: $(head -c 300 "$tmp/o")"
expect "threads: affine kernel, parallel loop, one thread" 0 '"threads": \{"threads": 1, "team": 1, "parallel": true, .*"thread_accesses": \[540672\], "levels": \[\{"size": 2048, "line": 32, "ways": 0, "policy": "lru", "private": false, "misses": 17540, "exact": true' \
	"$CACHET" predict examples/trmm_blocked.cachet -D NB=2 -D MB=2 --cache 2K:32 --threads 1 --json

# several threads over a parallel loop: the simulated trace split as the generated code splits
# the loop. A kernel whose bound only looks affine (`min(N, N + i)` is N) takes that path and
# must give the rectangular band walk's counts exactly: private levels per thread, the shared
# one over all threads' accesses interleaved between barriers (serial code before, between
# and after the parallel loop, a parallel loop inside a sequential one, max_threads)
thr_obj() { sed 's/.*"threads": {/{/; s/, "seconds": [0-9.e+-]*//g' "$tmp/o"; }
twin() { # name source sed-expression threads cache
	cp "$2" "$tmp/$1_r.cachet"
	sed "$3" "$2" >"$tmp/$1_a.cachet"
	grep -q 'min(N' "$tmp/$1_a.cachet" || { bad "twin $1: no affine bound"; return; }
	"$CACHET" predict "$tmp/$1_r.cachet" --threads "$4" --cache "$5" --json >"$tmp/o" 2>&1 ||
		{ bad "twin $1: rect: $(head -c 300 "$tmp/o")"; return; }
	want=$(thr_obj)
	"$CACHET" predict "$tmp/$1_a.cachet" --threads "$4" --cache "$5" --json >"$tmp/o" 2>&1 ||
		{ bad "twin $1: affine: $(head -c 300 "$tmp/o")"; return; }
	got=$(thr_obj)
	case "$want" in *'"parallel": true'*'"exact": true'*) ;; *) bad "twin $1: rect not parallel, exact: $want"; return ;; esac
	[ "$got" = "$want" ] && ok || bad "twin $1 T=$4: affine path $got, band walk $want"
}
printf '%s\n' "kernel mm" "param N = 48" "array A : f32[N, N] input" "array B : f32[N, N] input" \
	"array C : f32[N, N] inout" "for (i: N, j: N, k: N) {" "  C[i, j] += A[i, k] * B[k, j]" "}" \
	"plan {" "  parallelize(i)" "}" >"$tmp/mm.src"
for T in 2 3 5; do
	twin mm "$tmp/mm.src" 's/j: N, k: N/j: 0 .. min(N, N + i), k: N/' $T 2K:64:2:private,16K:64:4:shared
done
printf '%s\n' "kernel st" "param N = 40, S = 3" "array A : f32[N, N] inout" "array B : f32[N, N] inout" \
	"for (i0: N) {" "  A[i0, 0] = A[i0, 0] + 1" "}" "for (t: S) {" "  for (i: 1 .. N-1, j: 1 .. N-1) {" \
	"    B[i, j] = A[i-1, j] + A[i+1, j] + A[i, j-1] + A[i, j+1]" "  }" "  for (r: N) {" "    A[r, 0] = B[r, 1]" \
	"  }" "}" "for (z: N) {" "  B[z, 0] = A[z, 1]" "}" "plan {" "  parallelize(i, max_threads=2)" "}" >"$tmp/st.src"
for T in 2 4; do
	twin st "$tmp/st.src" 's/j: 1 .. N-1) {/j: 1 .. min(N-1, N + i)) {/' $T 1K:32:4:private,4K:64:shared
done
# a triangle by rows over 2 threads (rows 0-31 and 32-63): each thread's private misses are
# those of its own rows run alone
tri() { kfile "$1.cachet" "kernel tri" "param N = 64" "array A : f32[N, N] inout" \
	"for (i: $2) {" "  for (j: 0 .. i+1) {" "    A[i, j] += 1" "  }" "}" "plan {" "  parallelize(i$3)" "}"; }
t2=$(tri tri2 N "")
expect "threads: a triangle over 2 threads" 0 '"threads": \{"threads": 2, "team": 2, "parallel": true, "assumed_static": false, "accesses": 4160, "thread_accesses": \[1056, 3104\]' \
	"$CACHET" predict "$t2" --threads 2 --cache 512:32:private --json
misses() { sed 's/.*"levels": \[{[^}]*"misses": \([0-9]*\).*/\1/' "$tmp/o"; }
"$CACHET" predict "$(tri tri_lo "0 .. 32" "")" --cache 512:32 --json >"$tmp/o" 2>&1
m0=$(misses)
"$CACHET" predict "$(tri tri_hi "32 .. N" "")" --cache 512:32 --json >"$tmp/o" 2>&1
m1=$(misses)
"$CACHET" predict "$t2" --threads 2 --cache 512:32:private --json >"$tmp/o" 2>&1
grep -q "\"thread_misses\": \[$m0, $m1\]" "$tmp/o" && ok || bad "threads: triangle's thread misses, want [$m0, $m1]: $(thr_obj)"
expect "threads: policy=dynamic is split as static, and says so" 0 '"assumed_static": true' \
	"$CACHET" predict "$(tri trid N ", policy=dynamic")" --threads 2 --cache 512:32:private --json
expect "threads: the blocked trmm over 2 threads (policy=dynamic)" 0 '"threads": \{"threads": 2, "team": 2, "parallel": true, "assumed_static": true, "accesses": 540672, "thread_accesses": \[[0-9]+, [0-9]+\], "levels": \[\{"size": 2048, "line": 32, "ways": 0, "policy": "lru", "private": true, "misses": [0-9]+, "exact": true, "thread_misses": \[[0-9]+, [0-9]+\]\}, \{"size": 65536, "line": 64, "ways": 0, "policy": "lru", "private": false, "misses": [0-9]+, "exact": true\}' \
	"$CACHET" predict examples/trmm_blocked.cachet -D NB=2 -D MB=2 --cache 2K:32:private,64K:64 --threads 2 --json
# one thread in the team (max_threads=1) over a kernel with a packed cache: predict's own counts
sed 's/parallelize(ib, policy=dynamic)/parallelize(ib, max_threads=1)/' examples/trmm_packed.cachet >"$tmp/tp1.cachet"
"$CACHET" predict "$tmp/tp1.cachet" -D NB=3 -D MB=2 --cache 2K:32:private,64K:64 --json >"$tmp/o" 2>&1
want=$(sed 's/.*"levels": \[{[^}]*"misses": \([0-9]*\)[^}]*}, {[^}]*"misses": \([0-9]*\).*/\1, 0\] \2/' "$tmp/o")
"$CACHET" predict "$tmp/tp1.cachet" -D NB=3 -D MB=2 --cache 2K:32:private,64K:64 --threads 2 --json >"$tmp/o" 2>&1
got=$(sed 's/.*"thread_misses": \[\([0-9, ]*\]\)}, {[^}]*"misses": \([0-9]*\).*/\1 \2/' "$tmp/o")
[ "$got" = "$want" ] && ok || bad "threads: packed kernel, team of one: $got, predict $want"
# a parallel band the trace cannot split: refused, naming the loop
grid=$(kfile grid.cachet "kernel grid" "param N = 32" "array A : f32[N, N] inout" "for (i: N, j: N) {" \
	"  for (k: 0 .. i+1) {" "    A[i, j] += 1" "  }" "}" "plan {" "  parallelize(i, j)" "}")
expect "threads: a grid over an affine kernel: refused" 2 "grid.cachet:4:6: error: predict --threads 2: kernel 'grid' has loops with affine bounds, and its parallel loop 'i' is collapsed, a grid or split into a main and a tail version" \
	"$CACHET" predict "$grid" --threads 2 --cache 1K:32
expect "symbolic: still says why not" 0 "unsupported: loops with affine bounds" \
	"$CACHET" predict --symbolic examples/tiles_trmm.cachet --cache 4K:64

counts
[ "$fail" = 0 ]
