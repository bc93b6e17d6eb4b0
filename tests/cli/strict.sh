#!/bin/sh
# strict.sh: cache(..., strict=true) keeps the order of += updates (issue #28, row 4): with
# C = 1e8 and rows [-1e8, 1, 1, 1] in f32, tests/plans/strict_cache.cachet gives 3.0 through
# its strict cache CC (as without the plan) and 0.0 through the reducing cache CR (1e8 + the
# sum -1e8 + 3, rounded), which `run` still verifies (docs/PLANS.md, section 4).
# Prints "N passed, M failed".
BUILD=${CACHET_BUILD:-build}
CACHET=${CACHET:-$BUILD/cachet}
PY=${PYTHON:-/usr/bin/python3}
# under the sanitizers (SAN=1) the instrumented library needs its runtimes preloaded (lib/pysan)
[ "${SAN:-}" = 1 ] && PY="$(pwd)/tests/cli/lib/pysan"
pass=0
fail=0
check() {
	if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=tests/plans/strict_cache.cachet
"$CACHET" lower --json "$f" >"$tmp/lower.json"
check $? "lower --json $f"
grep -q '"name": *"CC"[^}]*"prologue": *"copy_in", *"epilogue": *"copy_out"' "$tmp/lower.json"
check $? "strict cache CC: copy_in / copy_out"
grep -q '"name": *"CR"[^}]*"prologue": *"zero_fill", *"epilogue": *"reduce"' "$tmp/lower.json"
check $? "plain cache CR: zero_fill / reduce"
# strict=false is the default and the same kernel (one code cache key)
sed 's/, strict=true//' "$f" >"$tmp/a.cachet"
sed 's/strict=true/strict=false/' "$f" >"$tmp/b.cachet"
"$CACHET" lower "$tmp/a.cachet" >"$tmp/a.txt" && "$CACHET" lower "$tmp/b.cachet" >"$tmp/b.txt" && cmp -s "$tmp/a.txt" "$tmp/b.txt"
check $? "strict=false is the default"
if "$PY" -c 'import numpy, cffi' 2>/dev/null && make -s BUILD="$BUILD" PYTHON="$PY" python >"$tmp/make" 2>&1; then
	cat >"$tmp/t.py" <<'PY'
import sys
import numpy as np
import cachet
k = cachet.Kernel(open(sys.argv[1]).read())
A = np.array([[-1e8, 1, 1, 1]] * 8, dtype=np.float32)
C = np.full(8, 1e8, dtype=np.float32)
R = np.full(8, 1e8, dtype=np.float32)
k(A, C, R)
print(C[0], R[0])
PY
	out=$(PYTHONPATH="$BUILD/python" PYTHONDONTWRITEBYTECODE=1 "$PY" "$tmp/t.py" "$f" 2>&1)
	[ "$out" = "3.0 0.0" ]
	check $? "strict keeps the order: C = 3.0, the reducing cache gives R = 0.0 (got: $out)"
else
	echo "skip: $PY lacks numpy or cffi (the numbers through Python)"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
