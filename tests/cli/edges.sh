#!/bin/sh
# edges.sh: arithmetic at the edges (issues 34.4 and 28 rows 2, 10): check refuses what a run would, and the
# generated code checks what depends on runtime params: sizes (status 1, MemoryError) and loops (status 2).
# The kernels of tests/plans (edge_*, errors/loop_overflow, deep_over, unroll_blowup) cover the rest.
verbose=1
. "$(dirname "$0")/lib/expect.sh"
BUILD=${CACHET_BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
# under the sanitizers (SAN=1) the instrumented library needs its runtimes preloaded (lib/pysan)
[ "${SAN:-}" = 1 ] && PY="$(pwd)/tests/cli/lib/pysan"
CC_=${CC:-cc}

# a runtime-sized temp: its size once wrapped to 0 for L = 2^62 (64 bytes allocated, then overrun)
cat >"$tmp/tonly.cachet" <<'EOF'
kernel tonly
param L : runtime
array T : f32[L] temp
array Y : f32[1] inout
for (i: L) { T[i] = i }
for (j: L) { Y[0] += T[j] }
EOF
# a runtime-sized loop split by 4: for L near 2^63 its tail's `i += 4` overflows
cat >"$tmp/rtloop.cachet" <<'EOF'
kernel rtloop
param L : runtime
array A : f32[1] input
array Y : f32[1] inout
for (i: L) { Y[0] += A[0] }
schedule { ii = split(i, 4) }
EOF
# a runtime param that is only a loop bound: check once accepted -D M=-1, both engines refused it
cat >"$tmp/neg.cachet" <<'EOF'
kernel neg
param M : runtime
array A : f32[8] input
array Y : f32[1] inout
for (i: M) { Y[0] += A[0] }
EOF

expect "check -D M=-1 refused at the param" 2 "neg.cachet:2:7: error: runtime param 'M' must not be negative \(it is -1\)" \
	"$CACHET" check "$tmp/neg.cachet" -D M=-1
expect "check -D M=3 accepted" 0 "" "$CACHET" check "$tmp/neg.cachet" -D M=3
expect "check -D L=2^63-1 refuses the overflowing tail loop" 2 "rtloop.cachet:6:26: error: loop 'i' overflows 64 bits" \
	"$CACHET" check "$tmp/rtloop.cachet" -D L=9223372036854775807

# the unroll cap: refused at once, never a minutes-long compile
start=$(date +%s)
expect "unroll blow-up refused" 2 "would make 1488 statements for the C compiler" \
	timeout 60 "$CACHET" run tests/plans/errors/unroll_blowup.cachet
el=$(($(date +%s) - start))
if [ "$el" -le 10 ]; then ok "unroll blow-up refused in ${el} s"; else bad "unroll blow-up took ${el} s"; fi

# the package: status 1 for a size that overflows, 2 for a loop that would; 0 and the right sum otherwise
if command -v "$CC_" >/dev/null 2>&1 && "$CACHET" build "$tmp/tonly.cachet" -o "$tmp/pt" >"$tmp/o" 2>&1 &&
	"$CACHET" build "$tmp/rtloop.cachet" -o "$tmp/pr" >"$tmp/o" 2>&1; then
	grep -q "2 when a loop would overflow 64 bits" "$tmp/pt/tonly.h" && ok "header documents status 2" ||
		bad "header lacks status 2"
	cat >"$tmp/main.c" <<'EOF'
#include "tonly.h"
#include "rtloop.h"
#include <stdint.h>
#include <stdio.h>
int main(void)
{
	float y[1] = {0}, a[1] = {1};
	int r62 = cachet_tonly(y, (int64_t)1 << 62), r63 = cachet_tonly(y, INT64_MAX);
	int rneg = cachet_tonly(y, -1);
	int r10 = cachet_tonly(y, 10);
	float s = y[0];
	y[0] = 0;
	int rl = cachet_rtloop(a, y, INT64_MAX), rl9 = cachet_rtloop(a, y, 9);
	printf("%d %d %d %d %g %d %d %g\n", r62, r63, rneg, r10, (double)s, rl, rl9, (double)y[0]);
	return 0;
}
EOF
	if "$CC_" -I"$tmp/pt" -I"$tmp/pr" "$tmp/main.c" "$tmp/pt/libtonly.a" "$tmp/pr/librtloop.a" -lm -o "$tmp/main" 2>"$tmp/e"; then
		got=$(timeout 20 "$tmp/main" 2>&1)
		rc=$?
		# 2^62, 2^63-1 and -1 elements cannot be allocated (-1: the engines refuse it before, a direct call
		# gets 1); 10 gives 0+1+...+9; the loop of 2^63-1 would overflow: 2, nothing run
		if [ "$rc" = 0 ] && [ "$got" = "1 1 1 0 45 2 0 9" ]; then
			ok "package statuses: $got"
		else
			bad "package statuses: exit $rc, got '$got', want '1 1 1 0 45 2 0 9'"
		fi
	else
		bad "package program does not compile"
		head -5 "$tmp/e" >&2
	fi
else
	echo "skip package checks: no C compiler or build failed"
fi

# Python: MemoryError for 2^61 (as before) and 2^62 (once a segfault); a loop that would overflow is a
# CachetError, not a hang
if [ -f "$BUILD/python/cachet/__init__.py" ] && "$PY" -c 'import numpy, cffi' 2>/dev/null; then
	cat >"$tmp/t.py" <<EOF
import numpy as np, cachet
k = cachet.load("$tmp/tonly.cachet")
y = np.zeros(1, dtype=np.float32)
out = []
for L in (2**61, 2**62, 2**63 - 1):
    try:
        k(y, L=L)
        out.append("ran")
    except MemoryError:
        out.append("MemoryError")
k(y, L=10)
out.append(str(int(y[0])))
r = cachet.load("$tmp/rtloop.cachet")
a = np.ones(1, dtype=np.float32)
y = np.zeros(1, dtype=np.float32)
try:
    r(a, y, L=2**63 - 1)
    out.append("ran")
except MemoryError:
    out.append("MemoryError")
except Exception as e:
    out.append("overflows" if "overflows 64 bits" in str(e) else repr(e))
print(" ".join(out))
EOF
	got=$(PYTHONPATH="$BUILD/python" PYTHONDONTWRITEBYTECODE=1 timeout 120 "$PY" "$tmp/t.py" 2>"$tmp/py.err")
	rc=$?
	want="MemoryError MemoryError MemoryError 45 overflows"
	if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
		ok "python: $got"
	else
		bad "python: exit $rc, got '$got', want '$want'; stderr: $(head -c 600 "$tmp/py.err")"
	fi
else
	echo "skip python checks: no $BUILD/python (make python) or numpy/cffi"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
