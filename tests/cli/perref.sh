#!/bin/sh
# perref.sh: `cachet predict --per-ref`: on every example the rows add up to the per-level and
# per-array totals, are sorted by misses and name their source positions; counts by hand on small
# kernels (one reference per array, a stencil shared out by simulation, a plan's copy loops).
. "$(dirname "$0")/lib/expect.sh"

cat >"$tmp/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = sys.argv[2]
# the kernels with affine loop bounds (issue #31): every level counted by the simulator
affine = any(l.get("fallback") == "affine loop bounds" for l in d["levels"])
L = len(d["levels"])
rows = d["per_ref"]
errs = []
for l in range(L):
    s = sum(r["misses"][l] for r in rows)
    if s != d["levels"][l]["misses"]:
        errs.append("level %d: rows add up to %d, the level has %d" % (l, s, d["levels"][l]["misses"]))
for a in d["references"]:
    for l in range(L):
        s = sum(r["misses"][l] for r in rows if r["array"] == a["array"])
        if s != a["misses"][l]:
            errs.append("array %s level %d: %d vs %d" % (a["array"], l, s, a["misses"][l]))
if sum(r["accesses"] for r in rows) != d["accesses"]:
    errs.append("accesses do not add up")
keys = [r["misses"] for r in rows]
if keys != sorted(keys, reverse=True):
    errs.append("rows not sorted by misses")
for r in rows:
    if any(c > m for c, m in zip(r["cold"], r["misses"])):
        errs.append("cold above misses: " + r["where"])
    if r["line"] > 0 and r["where"] != "%s:%d:%d" % (f, r["line"], r["col"]):
        errs.append("where " + r["where"])
    n = sum(1 for q in rows if q["array"] == r["array"])
    if affine:
        # every row the simulator's own (no model); a carrier only where misses are not all cold
        if r["split"] != "simulated":
            errs.append("split of %s: %s" % (r["where"], r["split"]))
        for l in range(L):
            if r["carried_by"][l] != ("-" if r["cold"][l] == r["misses"][l] else "?"):
                errs.append("carrier of %s level %d: %s" % (r["where"], l, r["carried_by"][l]))
    elif (n == 1) != (r["split"] == "model"):
        errs.append("split of " + r["array"])
    if len(r["carried_by"]) != L:
        errs.append("carried_by")
src = len(set((r["line"], r["col"]) for r in rows if r["line"] > 0))
if src != sum(a["nrefs"] for a in d["references"]):
    errs.append("%d source rows, %d references" % (src, sum(a["nrefs"] for a in d["references"])))
print("; ".join(errs) if errs else "ok")
PY

# ---------------------------------------------------------------- every example (table)
# the examples with affine loop bounds (issue #31; check.py tells them by the predict's fallback):
# every row the exact simulator's own counts, at sizes that keep their traces short
for f in examples/*.cachet; do
	defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	case $(basename "$f" .cachet) in
	trmm | trsm | tiles_trmm | trmm_reordered) defs="-D N=48 -D M=40" ;;
	syrk) defs="-D N=48 -D K=40" ;;
	cholesky) defs="-D N=48" ;;
	banded) defs="-D N=200" ;;
	trmm_blocked) defs="-D NB=2 -D MB=3" ;;
	trsm_blocked) defs="-D N=128 -D M=64" ;;
	trsm_written_cache | trmm_double_buffer | trmm_multicache) defs="-D N=48 -D M=64" ;;
	esac
	for spec in 2K:32,16K:64 1K:8 4K:64:4; do
		if ! "$CACHET" predict "$f" $defs --cache "$spec" --per-ref --json >"$tmp/j" 2>"$tmp/e"; then
			bad "per-ref $f $spec: failed: $(head -c 200 "$tmp/e")"
			continue
		fi
		r=$(python3 "$tmp/check.py" "$tmp/j" "$f")
		if [ "$r" = ok ]; then ok; else bad "per-ref $f $spec: $r"; fi
	done
done

# ---------------------------------------------------------------- by hand
copy=$(kfile copy.cachet "kernel cp" "param N = 64" "array X : f64[N] input" "array Y : f64[N] output" \
	"for (i: N) {" "  Y[i] = X[i]" "}")
# 8 lines each, all cold; the read is at 6:10, the write at 6:3
expect "per-ref read row" 0 "^  $copy:6:10 +X +1 read +64 +8 \(8\) -$" \
	"$CACHET" predict "$copy" --cache 4K:64 --per-ref
expect "per-ref write row" 0 "^  $copy:6:3 +Y +1 write +64 +8 \(8\) -$" \
	"$CACHET" predict "$copy" --cache 4K:64 --per-ref
expect "per-ref json row" 0 \
	'"array": "X", "stmt": 1, "where": "[^"]*copy.cachet:6:10", "line": 6, "col": 10, "access": "read", "split": "model", "accesses": 64, "misses": \[8\], "cold": \[8\], "carried_by": \["-"\]' \
	"$CACHET" predict "$copy" --cache 4K:64 --per-ref --json
expect "per-ref header" 0 "L1 misses \(cold\) carried by" "$CACHET" predict "$copy" --cache 4K:64 --per-ref
expect_absent() { # NAME PATTERN COMMAND...: exit 0, output without PATTERN
	name=$1 pat=$2
	shift 2
	if ! "$@" >"$tmp/o" 2>&1; then bad "$name: failed"; elif grep -qE -- "$pat" "$tmp/o"; then bad "$name: has /$pat/"; else ok; fi
}
expect_absent "no per_ref without --per-ref" per_ref "$CACHET" predict "$copy" --cache 4K:64 --json
# matmul 1024^3 tiled: B misses at 4 KiB, its reuse carried by the tile loop ii
expect "per-ref matmul carrier" 0 "matmul.cachet:13:24 +B +1 read +16777216 +1048576 \(4096\) ii$" \
	"$CACHET" predict examples/matmul.cachet --cache 4K:64 --per-ref
expect "per-ref matmul update" 0 "matmul.cachet:13:3 +C +1 update +33554432 " \
	"$CACHET" predict examples/matmul.cachet --cache 4K:64 --per-ref
# a stencil: A's six references share A's counts by simulation, and the note says so
expect "per-ref stencil split" 0 "split by simulation" \
	"$CACHET" predict examples/stencil5.cachet --cache 4K:64 --per-ref
expect "per-ref stencil note" 0 "shared out over its references" \
	"$CACHET" predict examples/stencil5.cachet --cache 4K:64 --per-ref
# a plan's cache: the statement reads the buffer AA, the copy loops read A
expect "per-ref plan buffer" 0 "plan_halo.cachet:23:28 +AA +1 read" \
	"$CACHET" predict examples/plan_halo.cachet --cache 4K:64 --per-ref
expect "per-ref plan copies" 0 "\(copy loops\) +A +0 copy +4620 " \
	"$CACHET" predict examples/plan_halo.cachet --cache 4K:64 --per-ref
# a guard comparing two indices: the model keeps the then branch and is not exact, so the fully
# associative level is simulated; its misses beyond the cold ones are capacity misses, never
# "conflicts" (those are a set-associative level's), issue #20
guard=$(kfile guard.cachet "kernel g" "param N = 64" "array A : f64[N] input" "array B : f64[N, N] input" \
	"array C : f64[N] output" "for (i: N, j: N) {" "  if (j < i) {" "    C[j] = A[j]" "  } else {" \
	"    C[j] = B[i, j]" "  }" "}")
expect "per-ref simulated fully associative" 0 "^  $guard:8:12 +A +1 read +2016 +8 \(4\) " \
	"$CACHET" predict "$guard" --cache 2K:64 --per-ref
expect_absent "per-ref no conflicts when fully associative" conflicts \
	"$CACHET" predict "$guard" --cache 2K:64 --per-ref
expect "per-ref help" 0 "--per-ref" "$CACHET" predict --help
expect "per-ref refused elsewhere" 2 "--per-ref" "$CACHET" simulate "$copy" --per-ref

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
