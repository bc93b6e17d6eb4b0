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
		"$CACHET" run examples/matmul.cachet -D M=300000 -D N=300000 -D K=300000 --no-verify --engine $eng
	ms=$(millis "$CACHET" run examples/matmul.cachet -D M=300000 -D N=300000 -D K=300000 --no-verify --engine $eng)
	if [ "$ms" -lt 2000 ]; then ok; else bad "size refusal ($eng) took $ms ms"; fi
done
ms=$(millis "$CACHET" run examples/opencl_local.cachet -D M=600000 -D N=600000 -D K=600000)
if [ "$ms" -lt 2000 ]; then ok; else bad "opencl size refusal took $ms ms"; fi

# -- rows 2 and 3: OpenCL with a full or read-only cache folder: a warning, and the run goes on
# (PoCL gets a private folder, removed at exit). Needs root for a tmpfs mount; else skipped.
skipped=""
mnt=$tmp/mnt
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
# the private folders are counted in a TMPDIR of this test's own: another run of the suite on the
# machine (CI and make sanitize at once) makes and removes its own in /tmp meanwhile
ptmp=$tmp/ptmp
mkdir -p "$ptmp"
ocl_private() { ls -d "$ptmp"/cachet-pocl.* 2>/dev/null | wc -l; }
if mount -t tmpfs -o size=2m,mode=0755 tmpfs "$mnt" 2>/dev/null; then
	dd if=/dev/zero of="$mnt/fill" bs=1k count=1900 2>/dev/null
	before=$(ocl_private)
	CACHET_CACHE_DIR=$mnt/c expect "opencl on a full disk: runs" 0 '"verified": true' \
		env TMPDIR="$ptmp" "$CACHET" run examples/opencl_local.cachet --json
	CACHET_CACHE_DIR=$mnt/c expect "opencl on a full disk: warns" 0 'warning: not giving PoCL the cache folder .*KiB free' \
		env TMPDIR="$ptmp" "$CACHET" run examples/opencl_local.cachet --json
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
--version extra|unexpected argument 'extra'|--version extra
--help extra|unexpected argument 'extra'|--help extra
abbreviated option|unknown option '--jso'|lower $k --jso
run of short options|unknown option '-hD'|lower $k -hD
value on a flag|unknown option '--json=1'|lower $k --json=1
double dash|unknown option '--'|lower $k --
-o with = attached|unknown option '-o=x'|build $k -o=x
-o with the folder attached|unknown option '-ox'|build $k -ox
--checked outside run|unknown option '--checked'|lower $k --checked
missing value|--engine expects native or interp|run $k --engine
missing value, not taken|'cachet probe' takes no option '--cache'|probe --cache
-D without a value|-D expects NAME=VALUE|lower $k -D
-D without =|-D expects NAME=INTEGER .*, not 'M'|lower $k -DM
ROWS

# options and words mix in any order; -D attached or apart; --opt=VALUE
for args in "lower --json $k" "lower $k --json" "lower -D M=8 $k -DN=8 --json" "run --engine=interp $k --repeat 2 --no-verify"; do
	# shellcheck disable=SC2086
	expect "accepted: $args" 0 "" "$CACHET" $args
done

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

# -- row 6: every error with a position shows its source line and a caret; past 20, a count
sed 's/parallelize(i, j, policy=dynamic)/parallelize(k)/' examples/plan_parallelize.cachet >"$tmp/par.cachet"
sed 's/  vectorize(jj)/  vectorize(ii)/' examples/plan_parallelize.cachet >"$tmp/vec.cachet"
for cmd in check lower run emit; do
	expect "parallelize over a reduction ($cmd): source line" 2 '^    parallelize\(k\)$' "$CACHET" $cmd "$tmp/par.cachet"
	expect "parallelize over a reduction ($cmd): caret" 2 '^                \^$' "$CACHET" $cmd "$tmp/par.cachet"
	expect "vectorize not innermost ($cmd): source line" 2 '^    vectorize\(ii\)$' "$CACHET" $cmd "$tmp/vec.cachet"
done
expect "tiles without tile params: source line" 2 '^  kernel transpose$' "$CACHET" tiles examples/transpose.cachet
expect "tiles without tile params: caret" 2 '^         \^$' "$CACHET" tiles examples/transpose.cachet
{
	printf 'kernel k\nparam N = 8\narray A : f32[N] inout\nfor (i: N) {\n'
	i=1
	while [ $i -le 30 ]; do printf '  A[i] = Q%d\n' $i; i=$((i + 1)); done
	printf '}\n'
} >"$tmp/many.cachet"
expect "30 errors: 20 shown, 10 suppressed" 2 '^30 errors \(the first 20 shown, 10 more suppressed\)$' "$CACHET" check "$tmp/many.cachet"
n=$("$CACHET" check "$tmp/many.cachet" 2>&1 | grep -c '^    A\[i\] = Q')
[ "$n" = 20 ] && ok || bad "20 errors with source lines, got $n"

# -- row 11: '-' reads the kernel from stdin; build -o creates parents; verify progress on a terminal
expect "stdin: lower" 0 "for i in range" sh -c "\"$CACHET\" lower - <examples/matmul.cachet"
expect "stdin: run" 0 '"verified": true' sh -c "\"$CACHET\" run - --engine interp -D M=8 -D N=8 -D K=8 --json <examples/matmul.cachet"
printf 'kernel k\nparam N = 8\narray A : f32[N] inout\nfor (i: N) {\n  A[i] = B\n}\n' >"$tmp/bad.cachet"
expect "stdin: diagnostics name <stdin>" 2 '^<stdin>:5:10: error: unknown name' sh -c "\"$CACHET\" check - <\"$tmp/bad.cachet\""
expect "stdin: with the source line" 2 '^    A\[i\] = B$' sh -c "\"$CACHET\" check - <\"$tmp/bad.cachet\""
expect "stdin: plan error with the source line" 2 '^    vectorize\(ii\)$' sh -c "\"$CACHET\" check - <\"$tmp/vec.cachet\""
expect "stdin: empty" 2 '^<stdin>' sh -c "\"$CACHET\" check - </dev/null"
expect "build -o a/b/c creates parents" 0 "wrote $tmp/pkg/a/b/c/matmul.h" "$CACHET" build examples/matmul.cachet -o "$tmp/pkg/a/b/c"
[ -f "$tmp/pkg/a/b/c/libmatmul.a" ] && ok || bad "build -o a/b/c: no libmatmul.a"
: >"$tmp/afile"
expect "build -o under a file" 1 "cannot create folder '$tmp/afile/x'" "$CACHET" build examples/matmul.cachet -o "$tmp/afile/x/y"
# a reference run of about two seconds (512x512x1024 in the interpreter)
big="run examples/matmul.cachet -D M=512 -D N=512 -D K=1024"
"$CACHET" $big >"$tmp/plain.out" 2>"$tmp/plain.err"
[ -s "$tmp/plain.err" ] && bad "verify progress printed when stderr is not a terminal" || ok
if command -v script >/dev/null 2>&1; then
	script -qec "\"$CACHET\" $big >\"$tmp/tty.out\"" /dev/null >"$tmp/tty.err" 2>&1
	grep -q 'verify \[#*' "$tmp/tty.err" && ok || bad "no verify progress on a terminal: $(head -c 200 "$tmp/tty.err")"
	grep -q 'verified against' "$tmp/tty.out" && ok || bad "the run's report after the progress line"
	grep -q 'verify \[' "$tmp/tty.out" && bad "progress on stdout" || ok
else
	skipped="$skipped progress-on-a-terminal"
	echo "SKIP: no 'script' to give stderr a terminal"
fi

echo "$pass passed, $fail failed${skipped:+ (skipped:$skipped)}"
[ "$fail" = 0 ]
