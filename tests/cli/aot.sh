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
# The entry points return a status: 1 when a temp cannot be allocated (the
# outputs untouched), 0 otherwise (issue 22, row 8).
grep -q "^int cachet_scale2(" "$tmp/pkg/scale2.h" && grep -q "Returns 0, or 1 when" "$tmp/pkg/scale2.h"
check $? "header documents the status the kernel returns"
cat >"$tmp/big.cachet" <<'K'
kernel bigtemp
param N : runtime
array X : f64[N] input
array T : f64[N, N] temp
array Y : f64[N] output
for (i: N) {
  T[i, i] = X[i] + 1
}
for (j: N) {
  Y[j] = 2 * T[j, j]
}
K
"$CACHET" build "$tmp/big.cachet" -o "$tmp/big" >/dev/null
check $? "build a kernel with a runtime-sized temp"
cat >"$tmp/big.c" <<'C'
#include "bigtemp.h"
#include <stdio.h>
#include <stdlib.h>
/* argv[1] = N; prints the status; exit 1 when the outputs do not match it */
int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 4;
	double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
	if (!x || !y)
		return 2;
	for (int64_t i = 0; i < n; i++) {
		x[i] = (double)i;
		y[i] = 7;
	}
	int rc = cachet_bigtemp(x, y, n);
	printf("%d\n", rc);
	for (int64_t i = 0; i < n; i++)
		if (y[i] != (rc ? 7.0 : 2.0 * (i + 1)))
			return 1;
	return 0;
}
C
cc -I"$tmp/big" "$tmp/big.c" "$tmp/big/libbigtemp.a" -lm -o "$tmp/big_main"
check $? "a caller of the status-returning kernel compiles"
test "$("$tmp/big_main" 5)" = 0
check $? "a temp that fits: status 0 and the outputs computed"
# N = 2^21: the temp needs 32 TiB; a 1 GiB address-space limit makes sure
# the allocation fails on any overcommit setting
out=$( (ulimit -v 1048576 2>/dev/null; "$tmp/big_main" 2097152) )
rc=$?
test "$rc" = 0 && test "$out" = 1
check $? "a temp too large to allocate: status 1 and the outputs untouched (got rc $rc, status '$out')"

# examples/host_package.c: the documented way to call a package, status checked
"$CACHET" build examples/axpy_runtime.cachet -o "$tmp/axpy" >/dev/null &&
	cc -std=c11 -I"$tmp/axpy" examples/host_package.c "$tmp/axpy/libaxpy.a" -lm -o "$tmp/axpy_main" &&
	test "$("$tmp/axpy_main")" = "axpy: ok"
check $? "examples/host_package.c builds against its package and runs"

"$CACHET" build "$tmp/k.cachet" >/dev/null 2>&1
test $? = 2
check $? "build without -o is a usage error"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
