#!/bin/sh
# miscompile.sh: issue 34's regressions through every entry point: GCC 12.2's two miscompiles
# (tests/plans/repro_gcc_*.cachet) and the strided array with a tune param
# (tests/plans/repro_tune_strided.cachet) verify natively, through the solution selector, as a
# package (`cachet build` checks the library it ships) and from Python (Debian's numpy); a
# miscompiling compiler wrapper is refused on each path (docs/LIBRARY.md, "The compile policy").
. tests/cli/lib/expect.sh

export CACHET_CACHE_DIR=$tmp/c
command -v cc >/dev/null 2>&1 || { echo "skip: no cc" >&2; echo "0 passed, 0 failed"; exit 0; }
PY=${PYTHON:-/usr/bin/python3}
# under the sanitizers (SAN=1) the instrumented library needs its runtimes preloaded (lib/pysan)
[ "${SAN:-}" = 1 ] && PY="$(pwd)/tests/cli/lib/pysan"
BUILD=${CACHET_BUILD:-build}

for f in tests/plans/repro_gcc_outer_vect.cachet tests/plans/repro_gcc_slp_split.cachet \
	tests/plans/repro_gcc_slp_unroll.cachet tests/plans/repro_tune_strided.cachet; do
	n=$(basename "$f" .cachet)
	expect "$n: native" 0 '"verified": true' "$CACHET" run "$f" --json
	expect "$n: native, unverified run (checked before first use)" 0 '"verified": null' \
		"$CACHET" run "$f" --no-verify --json
	# a tune param sends `cachet run` through the selector
	if grep -q ' tune ' "$f"; then
		sel=$f
	else
		sel=$tmp/$n-tune.cachet
		sed 's/^kernel .*/&\nparam TT = 1 tune {1, 2}/' "$f" >"$sel"
	fi
	expect "$n: through the selector" 0 '"verified": true.*"tuned": \{' "$CACHET" run "$sel" --json
	expect "$n: as a package" 0 'wrote .*\.so' "$CACHET" build "$f" -o "$tmp/pkg-$n"
done
# the outer-loop miscompile is found before first use and compiled again without vectorization
rm -rf "$CACHET_CACHE_DIR"
expect "the fallback is announced once" 0 'suspected compiler bug; compiled again with -fno-tree-vectorize' \
	"$CACHET" run tests/plans/repro_gcc_outer_vect.cachet
expect "  then silent (the verdict is kept)" 0 '' sh -c \
	"\"$CACHET\" run tests/plans/repro_gcc_outer_vect.cachet 2>&1 | grep -q warning && exit 1 || exit 0"

# from Python: the arrays of the issue, checked against numpy
if "$PY" -c 'import numpy, cffi' 2>/dev/null && make -s BUILD="$BUILD" PYTHON="$PY" python >/dev/null 2>&1; then
	cat >"$tmp/t.py" <<'PY'
import sys
import numpy as np
import cachet

d = sys.argv[1]
G = np.random.default_rng(1).random((5, 3))
want = G.copy()
for i in range(1, 5):
    for j in range(1, 3):
        want[i, j] += want[i - 1, j - 1]
cachet.Kernel(d + "/repro_gcc_outer_vect.cachet")(G)
assert np.allclose(G, want, rtol=1e-12, atol=0), ("gwave", G, want)
for name, n in (("repro_gcc_slp_split", 12), ("repro_gcc_slp_unroll", 12)):
    A = np.arange(n, dtype=np.float64) ** 2
    B = np.zeros(n)
    cachet.Kernel(d + "/" + name + ".cachet")(A, B)
    want = np.zeros(n)
    lo, hi = (2, n - 2)
    want[lo:hi] = A[lo - 2:hi - 2] + A[lo - 1:hi - 1] + A[lo + 2:hi + 2]
    assert np.array_equal(B, want), (name, B, want)
    if name == "repro_gcc_slp_split":
        assert B[5] == 74, B  # the issue's wrong answer was 62
base = np.arange(6, dtype=np.float32)
A = base[1::3]  # a strided view: base offset 1, stride 3
Y = np.zeros(2, dtype=np.float32)
cachet.Kernel(d + "/repro_tune_strided.cachet")(A, Y)
assert np.array_equal(Y, A), Y
print("python ok")
PY
	expect "python: the three kernels and the strided one, right" 0 'python ok' \
		env PYTHONPATH="$BUILD/python" PYTHONDONTWRITEBYTECODE=1 "$PY" "$tmp/t.py" tests/plans
	pyok=true
else
	echo "skip: python: $PY lacks numpy or cffi" >&2
	pyok=false
fi

# a compiler wrapper that miscompiles (" * " becomes " + "): refused on every path
cat >"$tmp/evilcc" <<'SH'
#!/bin/sh
for a in "$@"; do case $a in *.c) sed -i 's/ \* / + /g' "$a" ;; esac; done
exec cc "$@"
SH
chmod +x "$tmp/evilcc"
f=$(kfile scale.cachet 'kernel scale' 'param L : runtime' 'param T = 2 tune {2, 4}' 'array X : f32[L] input' \
	'array Y : f32[L] output' 'for (i: L) {' '  Y[i] = X[i] * 3' '}')
g=$(kfile tscale.cachet 'kernel tscale' 'param N = 40' 'param T = 2 tune {2, 4}' 'array X : f32[N] input strided' \
	'array Y : f32[N] output' 'for (i: N) {' '  Y[i] = X[i] * 3' '}' 'schedule { ii = split(i, T) }')
rm -rf "$CACHET_CACHE_DIR"
msg="a miscompile by the C compiler '$tmp/evilcc'.* is suspected"
expect "evil: run, unverified" 1 "$msg" "$CACHET" run "$f" -D L=100 -D T=2 --no-verify --cc "$tmp/evilcc"
expect "evil: run through the selector" 1 "$msg" "$CACHET" run "$g" --cc "$tmp/evilcc"
expect "evil: package refused" 1 "$msg" "$CACHET" build "$f" -o "$tmp/evilpkg" --cc "$tmp/evilcc"
[ ! -e "$tmp/evilpkg/libscale.so" ] && [ ! -e "$tmp/evilpkg/libscale.a" ] && ok || bad "evil: a refused package left a library"
if $pyok; then
	cat >"$tmp/e.py" <<'PY'
import sys
import numpy as np
import cachet

k = cachet.Kernel(sys.argv[1])
try:
    k(np.ones(50, dtype=np.float32), np.zeros(50, dtype=np.float32))
except cachet.CachetError as e:
    assert "a miscompile by the C compiler" in str(e), str(e)
    print("python refused")
else:
    print("python used the wrong code")
PY
	expect "evil: python refused" 0 'python refused' env CC="$tmp/evilcc" PYTHONPATH="$BUILD/python" \
		PYTHONDONTWRITEBYTECODE=1 "$PY" "$tmp/e.py" "$f"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
