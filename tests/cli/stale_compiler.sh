#!/bin/sh
# stale_compiler.sh: the code cache's key names the compiler's file itself (size, mtime, content
# hash), and code that fails its check before first use is evicted and refused (issues 22 and 34):
# a wrapper that miscompiles is refused every time (never a cached wrong binary), and once the wrapper is
# fixed in place (same size, same mtime, same --version) the kernel is compiled again, right.
. tests/cli/lib/expect.sh

export CACHET_CACHE_DIR=$tmp/c
command -v cc >/dev/null 2>&1 || { echo "skip: no cc" >&2; echo "0 passed, 0 failed"; exit 0; }
f=$(kfile scale.cachet 'kernel scale' 'param N = 256' 'array X : f32[N] input' \
	'array Y : f32[N] output' 'for (i: N) {' '  Y[i] = X[i] * 3' '}')
# the wrapper rewrites " * " into " + " in the source it compiles; its fixed twin has the same
# length, and gets the same mtime below, so only the content hash tells them apart
cat >"$tmp/evilcc" <<'SH'
#!/bin/sh
for a in "$@"; do case $a in *.c) sed -i 's/ \* / + /g' "$a" ;; esac; done
exec cc "$@"
SH
sed 's/ + \/g/ * \/g/' "$tmp/evilcc" >"$tmp/goodcc"
chmod +x "$tmp/evilcc" "$tmp/goodcc"
[ "$(wc -c <"$tmp/evilcc")" = "$(wc -c <"$tmp/goodcc")" ] && ok || bad "the fixed wrapper differs in size"
cmp -s "$tmp/evilcc" "$tmp/goodcc" && bad "the fixed wrapper is the same file" || ok

# newly compiled code is checked against the interpreter before its first use (issue 34): the
# wrong binary is refused, also unverified, also after a fallback compile (the wrapper breaks
# that too); both stay on disk marked "bad", never loaded again
expect "the miscompiling wrapper, unverified: refused before first use" 1 \
	"kernel 'scale': its compiled code gives wrong results .*also compiled with -fno-tree-vectorize: a miscompile by the C compiler '$tmp/evilcc' .* is suspected" \
	"$CACHET" run "$f" --cc "$tmp/evilcc" --no-verify --json
expect "verified: refused too" 1 'a miscompile by the C compiler' "$CACHET" run "$f" --cc "$tmp/evilcc" --json
n=$(find "$CACHET_CACHE_DIR/code-v1" -name kernel.so 2>/dev/null | wc -l)
nb=$(find "$CACHET_CACHE_DIR/code-v1" -name verdict -exec grep -l '^bad ' {} + 2>/dev/null | wc -l)
[ "$n" = 2 ] && [ "$nb" = 2 ] && ok || bad "want the 2 wrong binaries marked bad on disk ($n entries, $nb bad)"
expect "again: the kept verdict refuses it without compiling" 1 'found by an earlier check, whose verdict is kept' \
	"$CACHET" run "$f" --cc "$tmp/evilcc" --json

# fix the wrapper in place: same path, size and mtime
touch -r "$tmp/evilcc" "$tmp/goodcc"
cp -p "$tmp/goodcc" "$tmp/evilcc.new" && mv "$tmp/evilcc.new" "$tmp/evilcc"
touch -r "$tmp/goodcc" "$tmp/evilcc"
expect "the fixed wrapper: compiled again" 0 '"code_cache": "compiled"' "$CACHET" run "$f" --cc "$tmp/evilcc" --json
expect "  and right" 0 '"verified": true' "$CACHET" run "$f" --cc "$tmp/evilcc" --json
expect "  then from the disk cache" 0 '"code_cache": "disk"' "$CACHET" run "$f" --cc "$tmp/evilcc" --json

# the compiler found on PATH under a plain name is keyed by its file too
mkdir -p "$tmp/bin"
cp "$tmp/evilcc" "$tmp/bin/mycc"
PATH="$tmp/bin:$PATH" expect "a compiler on PATH (right)" 0 '"verified": true' "$CACHET" run "$f" --cc mycc --json
sed 's/ \* \/g/ + \/g/' "$tmp/evilcc" >"$tmp/bin/mycc"
PATH="$tmp/bin:$PATH" expect "the same name on PATH miscompiling: not the cached binary" 1 \
	"a miscompile by the C compiler 'mycc'" "$CACHET" run "$f" --cc mycc --json
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
