#!/bin/sh
# misuse.sh: issue 22's CLI rows: instant size refusals, unknown arguments, OpenCL on a full or
# read-only cache folder, diagnostics with source lines, stdin, build -o parents, progress.
. "$(dirname "$0")/lib/expect.sh"

# elapsed milliseconds of a command (its output discarded)
millis() {
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# -- row 7: a run too large for memory is refused before anything is allocated or compiled
for eng in native interp; do
	expect "size refusal ($eng)" 2 "the arrays need more than" \
		"$CACHET" run examples/matmul.cachet -D M=30000 -D N=30000 -D K=30000 --no-verify --engine $eng
	ms=$(millis "$CACHET" run examples/matmul.cachet -D M=30000 -D N=30000 -D K=30000 --no-verify --engine $eng)
	if [ "$ms" -lt 2000 ]; then ok; else bad "size refusal ($eng) took $ms ms"; fi
done
ms=$(millis "$CACHET" run examples/opencl_local.cachet -D M=60000 -D N=60000 -D K=60000)
if [ "$ms" -lt 2000 ]; then ok; else bad "opencl size refusal took $ms ms"; fi

# -- rows 2 and 3: OpenCL with a full or read-only cache folder: a warning, and the run goes on
# (PoCL gets a private folder, removed at exit). Needs root for a tmpfs mount; else skipped.
skipped=""
mnt=$tmp/mnt
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
ocl_private() { ls -d "${TMPDIR:-/tmp}"/cachet-pocl.* 2>/dev/null | wc -l; }
if mount -t tmpfs -o size=2m,mode=0755 tmpfs "$mnt" 2>/dev/null; then
	dd if=/dev/zero of="$mnt/fill" bs=1k count=1900 2>/dev/null
	before=$(ocl_private)
	CACHET_CACHE_DIR=$mnt/c expect "opencl on a full disk: runs" 0 '"verified": true' \
		"$CACHET" run examples/opencl_local.cachet --json
	CACHET_CACHE_DIR=$mnt/c expect "opencl on a full disk: warns" 0 'warning: not giving PoCL the cache folder .*KiB free' \
		"$CACHET" run examples/opencl_local.cachet --json
	if [ "$(ocl_private)" = "$before" ]; then ok; else bad "PoCL's private folder left behind"; fi
	umount "$mnt"
	mount -t tmpfs -o size=256m,mode=0755 tmpfs "$mnt"
	CACHET_CACHE_DIR=$mnt/c "$CACHET" run examples/matmul.cachet -D M=8 -D N=8 -D K=8 >/dev/null 2>&1
	mount -o remount,ro "$mnt"
	CACHET_CACHE_DIR=$mnt/c expect "opencl on a read-only cache folder: runs" 0 '"verified": true' \
		"$CACHET" run examples/opencl_local.cachet --json
	CACHET_CACHE_DIR=$mnt/c expect "opencl on a read-only cache folder: warns" 0 'cannot write in it: Read-only' \
		"$CACHET" run examples/opencl_local.cachet --json
	CACHET_CACHE_DIR=$mnt/empty expect "opencl with a cache folder that cannot be made" 0 '"verified": true' \
		"$CACHET" run examples/opencl_local.cachet --json
	umount "$mnt"
else
	skipped="$skipped full/read-only-tmpfs"
	echo "SKIP: rows 2/3 need a tmpfs mount (not root?)"
fi

# -- row 5: every argument a command does not take is an error (exit 2), never ignored
k=examples/matmul.cachet
while IFS='|' read -r name pat args; do
	# shellcheck disable=SC2086
	expect "$name" 2 "$pat" "$CACHET" $args
done <<ROWS
cache stats --json|'cachet cache' takes no option '--json'|cache stats --json
demo --json|'cachet demo' takes no option '--json'|demo --json
demo extra|'cachet demo' takes no argument 'extra'|demo extra
probe extra|'cachet probe' takes no argument 'extra'|probe extra
cache clear now|'cachet cache' takes no further argument 'now'|cache clear now
cache path x|takes no further argument 'x'|cache path x
check --json|'cachet check' takes no option '--json'|check $k --json
check two files|takes no further argument|check $k $k
lower --engine|'cachet lower' takes no option '--engine'|lower $k --engine interp
emit --repeat|'cachet emit' takes no option '--repeat'|emit $k --repeat 2
simulate --max|'cachet simulate' takes no option '--max'|simulate $k --max 4
predict -o|'cachet predict' takes no option '-o'|predict $k -o x
tiles --threads|'cachet tiles' takes no option '--threads'|tiles $k --threads 1
tune --target|'cachet tune' takes no option '--target'|tune $k --target host
build --json|'cachet build' takes no option '--json'|build $k -o x --json
run --show|'cachet run' takes no option '--show'|run $k --show
run unknown option|unknown option '--frob'|run $k --frob
ROWS

# cache clear names what it could not remove, exit 1 (a read-only mount; root only)
if mount -t tmpfs -o size=256m,mode=0755 tmpfs "$mnt" 2>/dev/null; then
	CACHET_CACHE_DIR=$mnt/c "$CACHET" run examples/matmul.cachet -D M=8 -D N=8 -D K=8 >/dev/null 2>&1
	mount -o remount,ro "$mnt"
	CACHET_CACHE_DIR=$mnt/c expect "cache clear on a read-only folder" 1 'could not remove 1 entry of .*code-v1 1' \
		"$CACHET" cache clear
	CACHET_CACHE_DIR=$mnt/none expect "cache clear on a folder that cannot be made" 1 'not usable' \
		"$CACHET" cache clear
	umount "$mnt"
else
	skipped="$skipped clear-read-only"
	echo "SKIP: cache clear on a read-only folder needs a tmpfs mount (not root?)"
fi

echo "$pass passed, $fail failed${skipped:+ (skipped:$skipped)}"
[ "$fail" = 0 ]
