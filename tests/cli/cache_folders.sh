#!/bin/sh
# cache_folders.sh: `cachet cache stats|clear` see every folder cachet writes (code-v1, blob-v1, pocl-v1, tuning stores), clear works on a missing folder, and never removes a file that is not cachet's or PoCL's.
. tests/cli/lib/expect.sh

# clear and stats while nothing exists yet (the folder is created, empty)
CACHET_CACHE_DIR=$tmp/none/deeper expect "clear: nothing there yet" 0 "" "$CACHET" cache clear
CACHET_CACHE_DIR=$tmp/none/deeper expect "stats: nothing there yet" 0 "^entries +0$" "$CACHET" cache stats
CACHET_CACHE_DIR=$tmp/none/deeper expect "stats: every folder listed" 0 "blob-v1 +0 entries" "$CACHET" cache stats
CACHET_CACHE_DIR=$tmp/none/deeper expect "clear twice" 0 "" "$CACHET" cache clear

export CACHET_CACHE_DIR=$tmp/c
unset POCL_CACHE_DIR
f=$(kfile axpy.cachet 'kernel axpy' 'param L = 100' 'array X : f32[L] input' 'array Y : f32[L] inout' \
	'for (i: L) {' '  Y[i] = 2.5 * X[i] + Y[i]' '}' 'schedule {' '  ii = split(i, 16)' '}' \
	'plan(target=opencl) {' '  parallelize(i)' '}')
h=$(kfile copy.cachet 'kernel cp' 'param N = 64' 'array X : f64[N] input' 'array Y : f64[N] output' \
	'for (i: N) {' '  Y[i] = X[i]' '}')
expect "opencl run (binary kept)" 0 '"verified": true' "$CACHET" run "$f" --json
expect "host run (kernel kept)" 0 '"verified": true' "$CACHET" run "$h" --json
# two blobs: the binary and the device's warm-up record that names it (docs/OPENCL.md)
expect "stats: the OpenCL binary" 0 "blob-v1 +2 entries +[1-9]" "$CACHET" cache stats
expect "stats: PoCL's cache, pointed into cachet's folder" 0 "pocl-v1 +1 entries +[1-9]" "$CACHET" cache stats
expect "stats: the compiled host kernel" 0 "code-v1 +1 entries" "$CACHET" cache stats
expect "stats: total of the caches" 0 "^entries +4$" "$CACHET" cache stats
[ -n "$(ls "$CACHET_CACHE_DIR"/pocl-v1 2>/dev/null)" ] && ok || bad "PoCL wrote nothing into pocl-v1"
expect "second opencl run: binary from disk" 0 '"code_cache": "disk"' "$CACHET" run "$f" --json

# files that are not cachet's, in every folder, and a link out of it
mkdir -p "$tmp/outside"
echo keep >"$tmp/outside/precious"
for d in . blob-v1 pocl-v1 code-v1; do echo mine >"$CACHET_CACHE_DIR/$d/notes.txt"; done
echo mine >"$CACHET_CACHE_DIR/blob-v1/0123.bin"
ln -s "$tmp/outside" "$CACHET_CACHE_DIR/pocl-v1/ABCDEF"
echo store >"$CACHET_CACHE_DIR/mydevice.sqlite"
expect "stats: a tuning store is counted" 0 '\*\.sqlite +1 entries +6 bytes' "$CACHET" cache stats
expect "clear" 0 "" "$CACHET" cache clear
expect "stats after clear: nothing cached" 0 "^entries +0$" "$CACHET" cache stats
for d in . blob-v1 pocl-v1 code-v1; do
	[ -f "$CACHET_CACHE_DIR/$d/notes.txt" ] && ok || bad "clear removed $d/notes.txt"
done
[ -f "$CACHET_CACHE_DIR/blob-v1/0123.bin" ] && ok || bad "clear removed a .bin not named like a blob"
[ -f "$tmp/outside/precious" ] && ok || bad "clear followed a link out of the cache folder"
[ -f "$CACHET_CACHE_DIR/mydevice.sqlite" ] && ok || bad "clear removed a tuning store"
expect "after clear: the OpenCL program is built again" 0 '"code_cache": "compiled"' "$CACHET" run "$f" --json

# the user's own POCL_CACHE_DIR is left alone
POCL_CACHE_DIR=$tmp/userpocl expect "run with the user's POCL_CACHE_DIR" 0 '"verified": true' \
	"$CACHET" run "$f" -D L=77 --json
[ -n "$(ls "$tmp/userpocl" 2>/dev/null)" ] && ok || bad "POCL_CACHE_DIR set by the user was not used"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
