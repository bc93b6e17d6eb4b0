#!/bin/sh
# symbolic.sh: `cachet predict --symbolic`: every example with a runtime param gives formulas or
# says why not; the formulas' pieces, evaluated at points of their lattice, equal `predict -D`'s
# counts (per level and per array); usage errors; text and JSON shapes.
. "$(dirname "$0")/lib/expect.sh"

spec=4K:64,32K:64
mm=$(kfile mm.cachet "kernel mm" "param N : runtime" "array A : f32[N, N] input" \
	"array B : f32[N, N] input" "array C : f32[N, N] inout" \
	"for (i: N, j: N, k: N) {" "  C[i, j] += A[i, k] * B[k, j]" "}")
tail=$(kfile tail.cachet "kernel mmtail" "param M : runtime, N : runtime" "array A : f32[M, 256] input" \
	"array B : f32[256, N] input" "array C : f32[M, N] inout" \
	"for (i: M, j: N, k: 256) {" "  C[i, j] += A[i, k] * B[k, j]" "}" \
	"schedule {" "  kk = split(k, 48)" "  reorder(i, k, j, kk)" "}")
st=$(kfile st.cachet "kernel st" "param N : runtime" "array A : f32[N, N] input" \
	"array B : f32[N, N] output" "for (x: N - 2, y: N) {" "  B[x + 1, y] = A[x, y] + A[x + 2, y]" "}")

expect "symbolic help" 0 "--symbolic" "$CACHET" predict --help
expect "symbolic needs no value" 0 "domain: N % 16 == 0, N >= 16" "$CACHET" predict --symbolic "$mm" --cache $spec
expect "symbolic distances" 0 "carried by i: count N\^3/16 - N\^2/16, distance N\^2/16" \
	"$CACHET" predict --symbolic "$mm" --cache 4K:64
expect "symbolic chambers" 0 "N >= 64: N\^3$" "$CACHET" predict --symbolic "$mm" --cache 4K:64
expect "symbolic json" 0 '"supported": true, "unsupported": null, "domain": "N % 16 == 0, N >= 16"' \
	"$CACHET" predict --symbolic "$mm" --cache $spec --json
expect "symbolic at -D values" 0 "at N = 80: 544400" "$CACHET" predict --symbolic "$mm" --cache 4K:64 -D N=80
expect "symbolic at -D values json" 0 '"at": \{"misses": 544400, "misses_max": 544400\}' \
	"$CACHET" predict --symbolic "$mm" --cache 4K:64 -D N=80 --json
expect "symbolic off the lattice" 0 "at N = 81: not derived" "$CACHET" predict --symbolic "$mm" --cache 4K:64 -D N=81
expect "symbolic unsupported" 0 "unsupported: several references to one array" \
	"$CACHET" predict --symbolic "$st" --cache $spec
expect "symbolic unsupported json" 0 '"supported": false' "$CACHET" predict --symbolic "$st" --cache $spec --json
expect "symbolic set-associative" 0 "where no line is evicted \\(ceil\\(N\\^2/256\\) \\+ ceil" \
	"$CACHET" predict --symbolic "$mm" --cache 4K:64:4
expect "symbolic cache buffers" 0 "earlier sibling in k, by the line's position \(8 classes\): count M\*N\*K/4096 each, distance 21, 39, 41, 43, 45, 47, 49, 51$" \
	"$CACHET" predict --symbolic examples/plan_runtime.cachet --cache 4K:64
expect "symbolic cache buffers' misses" 0 "misses = M\*N\*K/64 \+ 153\*M\*N/512" \
	"$CACHET" predict --symbolic examples/plan_runtime.cachet --cache 4K:64
expect "symbolic copy loops' references" 0 "the plan's copy loops of AA \(write\)" \
	"$CACHET" predict --symbolic examples/plan_runtime.cachet --cache 4K:64
expect "symbolic split tail" 0 "A, the part other statements reach \(other lines\):" \
	"$CACHET" predict --symbolic "$tail" --cache 4K:64
expect "symbolic with simulate" 2 "neither --simulate" "$CACHET" predict --symbolic "$mm" --cache $spec --simulate
expect "symbolic with per-ref" 2 "neither --simulate" "$CACHET" predict --symbolic "$mm" --cache $spec --per-ref
expect "symbolic bad spec" 2 "error" "$CACHET" predict --symbolic "$mm" --cache 4K:48
expect "symbolic only for predict" 2 "error" "$CACHET" simulate --symbolic "$mm" --cache $spec

# Evaluate the one-param pieces of a --symbolic JSON at lattice points and compare with
# predict -D: prints "ok N" or the first mismatch.
cat >"$tmp/cmp.py" <<'EOF'
import json, re, subprocess, sys
from fractions import Fraction
cachet, path, spec = sys.argv[1:4]
sym = json.loads(subprocess.run([cachet, "predict", "--symbolic", path, "--cache", spec, "--json"],
                                capture_output=True, text=True, check=True).stdout)
if not sym["supported"]:
    print("unsupported", sym["unsupported"]); sys.exit(0)
if not sym["params"]:
    # every count is a number: both bounds against predict's
    num = json.loads(subprocess.run([cachet, "predict", path, "--cache", spec, "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    n = 0
    for l, lv in enumerate(sym["levels"]):
        if lv["unsupported"]:
            continue
        lo, hi, got = int(lv["misses"]["at_least"]), int(lv["misses"]["at_most"]), num["levels"][l]["misses"]
        if not lo <= got <= hi:
            print("mismatch L%d: model %d, formula %d..%d" % (l + 1, got, lo, hi)); sys.exit(1)
        n += 1
    print("ok", n); sys.exit(0)
def iverson(formula, vals):
    # "[3*K + 87 >= 512] * (...)": the brackets are 1 where their condition holds
    e = formula
    for nm, v in vals.items():
        e = re.sub(r"\b%s\b" % nm, "(%d)" % v, e)
    e = re.sub(r"\[([^\]]+)\]", r"(1 if (\1) else 0)", e.replace("^", "**"))
    e = re.sub(r"(\d+)", r"Fraction(\1)", e)
    return eval(e)
if len(sym["params"]) > 1:
    # several params: the at_least / at_most sums at points of the lattice
    ps = sym["params"]
    n = 0
    for k in [(1, 1, 1, 1), (2, 3, 1, 2), (3, 1, 2, 1), (4, 2, 5, 3), (1, 6, 2, 2), (7, 3, 9, 1), (5, 5, 5, 5)]:
        vals = {p["name"]: p["modulus"] * k[i % len(k)] for i, p in enumerate(ps)}
        args = []
        for nm, v in vals.items():
            args += ["-D", "%s=%d" % (nm, v)]
        num = json.loads(subprocess.run([cachet, "predict", path, "--cache", spec, "--json"] + args,
                                        capture_output=True, text=True, check=True).stdout)
        for l, lv in enumerate(sym["levels"]):
            if lv["unsupported"]:
                continue
            rows = [(None, lv["misses"], num["levels"][l]["misses"])]
            for a in lv["arrays"]:
                got = [r["misses"][l] for r in num["references"] if r["array"] == a["array"]]
                rows.append((a["array"], a["misses"], got[0]))
            for arr, m, got in rows:
                lo, hi = iverson(m["at_least"], vals), iverson(m["at_most"], vals)
                if not lo <= got <= hi:
                    print("mismatch L%d %s at %s: model %d, formula %s..%s" % (l + 1, arr or "all", vals, got, lo, hi))
                    sys.exit(1)
                n += 1
    print("ok", n); sys.exit(0)
name, mod = sym["params"][0]["name"], sym["params"][0]["modulus"]
def value(formula, v):
    e = re.sub(r"\b%s\b" % name, "(%d)" % v, formula).replace("^", "**")
    e = re.sub(r"(\d+)", r"Fraction(\1)", e)
    return eval(e)
def piece(pieces, v):
    for p in pieces:
        if p["from"] <= v and (p["to"] is None or v <= p["to"]):
            return p
    return None
n = 0
for k in list(range(1, 13)) + [40, 97]:
    v = mod * k
    num = json.loads(subprocess.run([cachet, "predict", path, "--cache", spec, "-D", "%s=%d" % (name, v),
                                     "--json"], capture_output=True, text=True, check=True).stdout)
    for l, lv in enumerate(sym["levels"]):
        if lv["unsupported"]:
            continue
        rows = [(None, lv["misses"], num["levels"][l]["misses"])]
        for a in lv["arrays"]:
            got = [r["misses"][l] for r in num["references"] if r["array"] == a["array"]]
            rows.append((a["array"], a["misses"], got[0]))
        for arr, m, got in rows:
            p = piece(m["pieces"], v)
            if p is None:
                print("no piece for %s=%d" % (name, v)); sys.exit(1)
            lo, hi = value(p["misses"], v), value(p["misses_max"], v)
            if not (lo <= got <= hi) or (p["exact"] and lo != got):
                print("mismatch L%d %s at %s=%d: model %d, formula %s..%s" % (l + 1, arr or "all", name, v, got, lo, hi))
                sys.exit(1)
            n += 1
print("ok", n)
EOF
if ! python3 -c 'import json, fractions' 2>/dev/null; then
	skip "no python3: formulas not evaluated"
else
	# the examples with a runtime param (one param: the pieces; several: the at_least and
	# at_most sums), then those without (their formulas are numbers)
	for f in $(grep -l ': runtime' examples/*.cachet) "$mm" "$tail"; do
		out=$(python3 "$tmp/cmp.py" "$CACHET" "$f" "$spec" 2>&1)
		case "$out" in
		"ok 0"*) bad "$f: no level compared" ;;
		ok*) ok ;;
		*) bad "$f: $out" ;;
		esac
	done
	# (since cache buffers and split tails are derived: matmul and the plan_* examples below)
	for f in auto_matmul colwalk copy dgemm_small plan_unroll plan_vectorize relu_bias sgemm_small tune_matmul \
		two_index matmul opencl_sgemm opencl_sgemm_tune plan_double_buffer plan_layout plan_level \
		plan_max_elements plan_multicache plan_parallelize plan_thrifty; do
		for sp in 4K:64,32K:64,1M:64 1K:32,8K:128; do
			out=$(python3 "$tmp/cmp.py" "$CACHET" "examples/$f.cachet" "$sp" 2>&1)
			case "$out" in
			"ok 0"*) bad "$f $sp: no level compared" ;;
			ok*) ok ;;
			*) bad "$f $sp: $out" ;;
			esac
		done
	done
fi
counts
