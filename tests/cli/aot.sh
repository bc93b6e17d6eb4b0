#!/bin/sh
# aot.sh: `cachet build` packages link into a plain C program that runs without cachet.
CACHET=${CACHET:-build/cachet}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

cat >"$tmp/k.cachet" <<'K'
kernel scale2
param L : runtime
param C = 3
array X : f64[L, C] input
array Y : f64[L, C] output
for (i: L, j: C) {
  Y[i, j] = 2 * X[i, j] + j
}
schedule {
  ii = split(i, 4)
}
K
"$CACHET" build "$tmp/k.cachet" -o "$tmp/pkg" >/dev/null
check $? "build"
for f in scale2.h libscale2.a libscale2.so; do
	test -s "$tmp/pkg/$f"
	check $? "package file $f"
done
grep -q "Y: f64\[L, 3\], row-major, output" "$tmp/pkg/scale2.h"
check $? "header documents the arguments"
cat >"$tmp/main.c" <<'C'
#include "scale2.h"
#include <stdio.h>
int main(void)
{
	double x[10 * 3], y[10 * 3];
	for (int i = 0; i < 30; i++)
		x[i] = i;
	cachet_scale2(x, y, 10);
	for (int i = 0; i < 30; i++)
		if (y[i] != 2.0 * i + i % 3) {
			printf("bad %d: %g\n", i, y[i]);
			return 1;
		}
	printf("ok\n");
	return 0;
}
C
cc -I"$tmp/pkg" "$tmp/main.c" "$tmp/pkg/libscale2.a" -lm -o "$tmp/main_static" && "$tmp/main_static" >/dev/null
check $? "static link runs"
cc -I"$tmp/pkg" "$tmp/main.c" -L"$tmp/pkg" -lscale2 -Wl,-rpath,"$tmp/pkg" -o "$tmp/main_shared" && "$tmp/main_shared" >/dev/null
check $? "shared link runs"
cp "$tmp/main.c" "$tmp/main.cc"
if command -v g++ >/dev/null 2>&1; then
	g++ -I"$tmp/pkg" "$tmp/main.cc" "$tmp/pkg/libscale2.a" -lm -o "$tmp/main_cxx" && "$tmp/main_cxx" >/dev/null
	check $? "C++ program includes the header and links"
fi
"$CACHET" build "$tmp/k.cachet" >/dev/null 2>&1
test $? = 2
check $? "build without -o is a usage error"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
