#!/bin/sh
# install.sh: `make install PREFIX=...` gives a header, libraries, cachet.pc and the CLI a program can use.
BUILD=${CACHET_BUILD:-build}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

make -s BUILD="$BUILD" install PREFIX="$tmp/p" >"$tmp/log" 2>&1
check $? "make install"
for f in include/cachet.h lib/libcachet.a lib/libcachet.so lib/pkgconfig/cachet.pc bin/cachet; do
	test -f "$tmp/p/$f"
	check $? "installed $f"
done
# a versioned SONAME: libcachet.so -> libcachet.so.N -> libcachet.so.x.y.z, which says libcachet.so.N,
# N = CACHET_SOVERSION of the header
so=libcachet.so.$(sed -n 's/^#define CACHET_SOVERSION \([0-9]*\)$/\1/p' include/cachet.h)
[ "$so" != libcachet.so. ]
check $? "the header names its ABI version (CACHET_SOVERSION)"
test -L "$tmp/p/lib/libcachet.so" && [ "$(readlink "$tmp/p/lib/libcachet.so")" = "$so" ]
check $? "libcachet.so is a symlink to $so"
test -L "$tmp/p/lib/$so" && test -f "$tmp/p/lib/$(readlink "$tmp/p/lib/$so")"
check $? "$so is a symlink to the versioned file"
if command -v readelf >/dev/null 2>&1; then
	readelf -d "$tmp/p/lib/libcachet.so" | grep -q "SONAME.*\[$so\]"
	check $? "readelf -d shows SONAME $so"
else
	echo "skip: no readelf, SONAME not read" >&2
fi
cat >"$tmp/use.c" <<'C'
#include <cachet.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	const char *text = "kernel k\nparam N = 4\narray X : f32[N] inout\nfor (i: N) { X[i] *= 2 }\n";
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, strlen(text), "k.cachet");
	int ok = k && ct_kernel_array_count(k) == 1;
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	puts(ok ? "ok" : "bad");
	return !ok;
}
C
export PKG_CONFIG_PATH="$tmp/p/lib/pkgconfig"
# the sanitizer build installs instrumented libraries: the program needs the runtime too
SANFL=""
[ "${SAN:-}" = 1 ] && SANFL="-fsanitize=address,undefined"
cc $SANFL "$tmp/use.c" $(pkg-config --cflags --libs cachet) -o "$tmp/use" && LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/use" >/dev/null
check $? "program linked with pkg-config --libs cachet (shared)"
if command -v readelf >/dev/null 2>&1; then
	readelf -d "$tmp/use" | grep -q "NEEDED.*\[$so\]"
	check $? "the program needs $so (the SONAME), not libcachet.so"
fi
# examples/callable.c: ct_kernel_compile + ct_callable_call on the program's own buffers
cc $SANFL examples/callable.c $(pkg-config --cflags --libs cachet) -lm -o "$tmp/callable" &&
	LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/callable" examples/axpy_runtime.cachet >"$tmp/callable.out"
check $? "examples/callable.c builds and runs"
grep -q "L = 1000: all right" "$tmp/callable.out" && grep -q "L = 37: all right" "$tmp/callable.out"
check $? "examples/callable.c is right at two sizes"
cc $SANFL "$tmp/use.c" $(pkg-config --cflags cachet) "$tmp/p/lib/libcachet.a" $(pkg-config --libs --static cachet | sed 's/-lcachet//') -o "$tmp/use_static" && "$tmp/use_static" >/dev/null
check $? "program linked with libcachet.a"
"$tmp/p/bin/cachet" --version | grep -q "^cachet "
check $? "installed CLI runs"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
