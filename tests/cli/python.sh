#!/bin/sh
# python.sh: the Python package's pytest suite (python/tests) on Debian's interpreter, and an offline pip install.
# Prints "N passed, M failed" from pytest's summary; skipped tests are counted on a line of their own.
BUILD=${CACHET_BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$PY" -c 'import numpy, cffi, pytest' 2>"$tmp/imp"; then
	# only when Debian's packages cannot be had at all (make deps installs them)
	echo "skip: $PY lacks numpy, cffi or pytest (make deps installs python3-numpy python3-cffi python3-pytest):" >&2
	cat "$tmp/imp" >&2
	echo "skipped: all Python tests"
	echo "0 passed, 0 failed"
	exit 0
fi
make -s BUILD="$BUILD" PYTHON="$PY" python >"$tmp/make" 2>&1 || { cat "$tmp/make" >&2; echo "0 passed, 1 failed"; exit 1; }
# under the sanitizers the library is instrumented: the runtimes go first (Python itself is not, so leaks
# are not reported)
if [ "${SAN:-}" = 1 ]; then
	CC_=${CC:-cc}
	LD_PRELOAD="$($CC_ -print-file-name=libasan.so) $($CC_ -print-file-name=libubsan.so)"
	export LD_PRELOAD ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
PYTHONPATH="$BUILD/python" PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -p no:cacheprovider python/tests >"$tmp/out" 2>&1
rc=$?
tail -n 30 "$tmp/out" >&2
summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$tmp/out" | tail -n 1)
num() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
p=$(num passed)
f=$(( $(num failed) + $(num error) ))
s=$(num skipped)
[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
unset LD_PRELOAD
# pip install ./python offline, without build isolation, from a copy (the wheel bundles the library)
if [ "${SAN:-}" != 1 ]; then
	cp -r python "$tmp/src"
	rm -rf "$tmp/src/build" "$tmp/src/tests"
	if CACHET_HEADER="$(pwd)/include/cachet.h" CACHET_LIBRARY="$(pwd)/$BUILD/libcachet.so.$(sed -n 's/^#define CACHET_SOVERSION \([0-9]*\)$/\1/p' include/cachet.h)" \
	   "$PY" -m pip install -q --no-index --no-build-isolation --no-deps --target "$tmp/site" "$tmp/src" \
	   >"$tmp/pip" 2>&1 &&
	   (cd "$tmp" && PYTHONPATH="$tmp/site" "$PY" -c '
import cachet, numpy as np, os
assert cachet.library_path.startswith(os.path.dirname(cachet.__file__)), cachet.library_path
k = cachet.Kernel("kernel d\nparam L : runtime\narray X : f64[L] inout\nfor (i: L) {\n  X[i] = 2 * X[i]\n}\n")
x = np.arange(5.0); k(x); assert (x == 2 * np.arange(5.0)).all()') >>"$tmp/pip" 2>&1; then
		p=$((p + 1))
	else
		cat "$tmp/pip" >&2
		echo "FAIL: pip install ./python" >&2
		f=$((f + 1))
	fi
fi
[ "$s" != 0 ] && echo "skipped: $s Python tests"
echo "$p passed, $f failed"
[ "$f" = 0 ]
