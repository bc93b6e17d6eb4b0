#!/bin/sh
# misuse2.sh: issue 28's CLI rows: signals leave no temp folder or compiler behind, full disks and
# /dev/full are errors (never exit 0, never a lost file), non-UTF-8 names in JSON, the tuning
# store's refusals, the simulator's cap, and options a command cannot honour.
. "$(dirname "$0")/lib/expect.sh"
export CACHET_CACHE_DIR=${CACHET_CACHE_DIR:-$tmp/cache}
k=examples/matmul.cachet
small="-D M=8 -D N=8 -D K=8"

# -- row 8: every command checks its output stream: a result lost on a full device is exit 1
while IFS='|' read -r name args; do
	# shellcheck disable=SC2086
	expect "output to /dev/full: $name" 1 "cannot write the output: No space left" sh -c "\"\$0\" $args >/dev/full" "$CACHET"
done <<ROWS
emit|emit $k
run --json|run $k $small --json
predict --json|predict $k --cache 4K:64 --json
simulate|simulate $k $small --cache 4K:64
report --json|report $k $small --cache 4K:64 --no-run --no-measure --json
cache stats|cache stats
cache path|cache path
check --help|check --help
--version|--version
ROWS
for args in "lower $k" "lower $k --json" "probe --json" "tune --show"; do
	# shellcheck disable=SC2086
	expect "output to /dev/full: $args" 1 "No space left" sh -c "\"\$0\" $args >/dev/full" "$CACHET"
done

# -- row 7: a file name that is not UTF-8 is escaped in the JSON (U+FFFD), never an error with exit 0
odd=$(printf '%s/odd\377only.cachet' "$tmp")
cp examples/copy.cachet "$odd"
expect "non-UTF-8 name: predict --per-ref --json" 0 'odd\\u[fF]{3}[dD]only\.cachet:' "$CACHET" predict "$odd" --per-ref --json --cache 4K:64
expect "non-UTF-8 name: report --json" 0 '"file": ".*odd\\u[fF]{3}[dD]only' "$CACHET" report "$odd" --cache 4K:64 --no-run --no-measure --json
# -- row 6: report's outputs on a full file system: a message, exit 1, the good file kept whole;
# the output never replaces the kernel file; -o into a missing folder makes it first
rep="--no-run --no-measure --cache 4K:64"
cp examples/copy.cachet "$tmp/F.cachet"
expect "report -o onto its own kernel file: refused" 2 "is the kernel file itself" "$CACHET" report "$tmp/F.cachet" -o "$tmp/F.cachet" $rep
cmp -s examples/copy.cachet "$tmp/F.cachet" && ok || bad "report -o F.cachet changed the kernel file"
ln "$tmp/F.cachet" "$tmp/hard.html"
expect "report -o onto a hard link of the kernel file: refused" 2 "is the kernel file itself" "$CACHET" report "$tmp/F.cachet" -o "$tmp/hard.html" $rep
cp "$tmp/F.cachet" "$tmp/levels.csv"
expect "report --csv over the kernel file: refused" 2 "is the kernel file itself" "$CACHET" report "$tmp/levels.csv" --csv "$tmp" $rep
expect "report -o into a missing folder: made" 0 "" "$CACHET" report "$tmp/F.cachet" -o "$tmp/new/a/b.html" $rep
[ -s "$tmp/new/a/b.html" ] && ok || bad "report -o new/a/b.html: no page"
expect "report -o where no folder can be made: exit 1 first" 1 "cannot" "$CACHET" report "$tmp/F.cachet" -o /proc/nope/x.html $rep
mkdir -p "$tmp/pk"
cp examples/copy.cachet "$tmp/pk/cp.c"
expect "build over its own kernel file (DIR/NAME.c): refused" 2 "is the kernel file itself" "$CACHET" build "$tmp/pk/cp.c" -o "$tmp/pk"
cmp -s examples/copy.cachet "$tmp/pk/cp.c" && ok || bad "build replaced the kernel file"
expect "build -o where no folder can be made: exit 1" 1 "cannot create folder" "$CACHET" build examples/copy.cachet -o /proc/nope
fmnt=$tmp/full
mkdir -p "$fmnt"
if mount -t tmpfs -o size=64k tmpfs "$fmnt" 2>/dev/null; then
	"$CACHET" report "$tmp/F.cachet" -o "$fmnt/x.html" $rep >/dev/null 2>&1
	"$CACHET" report "$tmp/F.cachet" --csv "$fmnt/csv" $rep >/dev/null 2>&1
	cp "$fmnt/x.html" "$tmp/good.html"
	dd if=/dev/zero of="$fmnt/fill" bs=4k count=100 2>/dev/null
	expect "report -o on a full disk: a message, exit 1" 1 "x.html: error: cannot write: No space left" \
		"$CACHET" report "$tmp/F.cachet" -o "$fmnt/x.html" $rep
	cmp -s "$fmnt/x.html" "$tmp/good.html" && ok || bad "report on a full disk: the good page was not kept"
	rm -f "$fmnt/csv/per_ref.csv"
	expect "report --csv on a full disk: a message, exit 1" 1 "csv: error: cannot write: No space left" \
		"$CACHET" report "$tmp/F.cachet" --csv "$fmnt/csv" $rep
	n=$(find "$fmnt/csv" -size 0 | wc -l)
	[ "$n" = 0 ] && ok || bad "report --csv on a full disk left $n empty files"
	[ "$(ls -A "$fmnt" | wc -l)" = 3 ] && ok || bad "temp files left on the full disk: $(ls -A "$fmnt")"
	umount "$fmnt"
else
	echo "SKIP: a full file system needs a tmpfs mount (not root?)"
fi

# -- row 5: INT, TERM and HUP during a compile kill the compiler (its own process group) and
# remove the build folder, the compiler's temporaries and PoCL's private folder (each run gets a
# TMPDIR of its own, so that nothing else's files are counted)
left() { ls -A "$1" | tr '\n' ' '; }
for sig in INT TERM HUP; do
	t=$(mktemp -d "$tmp/sig.XXXXXX")
	CACHET_NO_CACHE=1 TMPDIR=$t timeout -s $sig 0.3 "$CACHET" run examples/sgemm.cachet >/dev/null 2>&1
	[ -z "$(left "$t")" ] && ok || bad "SIG$sig during run left $(left "$t") in TMPDIR"
done
{
	printf 'kernel big\nparam N = 64\narray A : f32[N] input\narray B : f32[N] inout\nfor (i: N) {\n'
	i=1
	while [ $i -le 3000 ]; do printf '  B[i] = B[i] * A[i] + %d\n' $i; i=$((i + 1)); done
	printf '}\n'
} >"$tmp/big.cachet"
t=$(mktemp -d "$tmp/sig.XXXXXX")
CACHET_NO_CACHE=1 TMPDIR=$t timeout -s INT 1 "$CACHET" run "$tmp/big.cachet" --no-verify >/dev/null 2>&1
sleep 0.2
n=$(pgrep -f "$t" | wc -l)
[ "$n" = 0 ] && ok || bad "SIGINT during a long compile: $n compiler processes still running"
[ -z "$(left "$t")" ] && ok || bad "SIGINT during a long compile left $(left "$t")"
t=$(mktemp -d "$tmp/sig.XXXXXX")
CACHET_NO_CACHE=1 TMPDIR=$t timeout -s INT 2.5 "$CACHET" tune examples/tune_matmul.cachet --budget 5 --quiet >/dev/null 2>&1
[ -z "$(left "$t")" ] && ok || bad "SIGINT during tune left $(left "$t")"
# one SIGINT, as Ctrl-C sends (timeout --foreground): plain `timeout` signals the process and then its
# group, and a second SIGINT during PoCL's LLVM compile meets LLVM's one-shot handler's SIG_DFL before
# cachet's handler runs (docs/LIBRARY.md, "Signals")
t=$(mktemp -d "$tmp/sig.XXXXXX")
CACHET_CACHE_DIR=/proc/none TMPDIR=$t timeout --foreground -s INT 0.5 "$CACHET" run examples/opencl_local.cachet >/dev/null 2>&1
[ -z "$(left "$t")" ] && ok || bad "SIGINT during an OpenCL run left $(left "$t")"

# -- row 11: tuning into a read-only store says nothing was stored, never "not better than the record"
rmnt=$tmp/ro
mkdir -p "$rmnt"
if mount -t tmpfs -o size=16m tmpfs "$rmnt" 2>/dev/null; then
	mkdir "$rmnt/c"
	mount -o remount,ro "$rmnt"
	CACHET_CACHE_DIR=$rmnt/c expect "tune into a read-only store: said" 0 "not stored: the store is read-only" \
		"$CACHET" tune examples/tune_matmul.cachet --budget 5 --quiet
	grep -q "not better than the record" "$tmp/o" && bad "tune into a read-only store: 'not better than the record'" || ok
	umount "$rmnt"
else
	echo "SKIP: a read-only store needs a tmpfs mount (not root?)"
fi

# -- row 12: an export's records are checked before any is imported; a bad one is refused with the reason
export CACHET_CACHE_DIR=$tmp/store12
mkdir -p "$CACHET_CACHE_DIR"
dev=$("$CACHET" tune --show --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["device_id"])')
rec() { # rec FAMILY PARAMS: an export of one record of this device
	printf '{"format": "cachet-tune-export", "version": 1, "device_id": "%s", "device": "x", "records": [{"family": "%s", "dtype": "f32", "size_class": "M=96:N=96:K=96", "params": "%s", "seconds": 2.6e-5, "gflops": 67.5, "verified": 1, "trusted": true, "tuner_version": "3", "cachet_version": "0.1.0", "device_id": "%s", "device": "x", "timestamp": 1795892243}]}\n' \
		"$dev" "$1" "$2" "$dev" >"$tmp/imp.json"
}
fam=tune_matmul-d89ddf53dda12b07
while IFS='|' read -r name family params pat; do
	rec "$family" "$params"
	expect "import refuses $name" 2 "$pat" "$CACHET" tune --import "$tmp/imp.json"
done <<ROWS
a word and a negative tile|$fam|TI=abc:TJ=-5|params: 'TI=abc' is not a whole number
zero tiles|$fam|TI=0:TJ=0:TK=0|params: 'TI=0' is not a whole number of at least 1
empty params|$fam||params: empty
a name twice|$fam|TI=32:TI=64|'TI' is given twice
a path as the family|../../etc/x|TI=32:TJ=32:TK=32|family '../../etc/x' names no kernel family
ROWS
n=$("$CACHET" tune --show --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["records"]))')
[ "$n" = 0 ] && ok || bad "refused imports left $n records in the store"
rec "$fam" "TI=32:TJ=32:TK=32;decision=default"
expect "import of a good record" 0 "imported 1 of 1" "$CACHET" tune --import "$tmp/imp.json"
# a record of the right shape whose names are not the kernel's tunables: imported (the store does
# not know the kernel), then said when the selector meets it, never silently skipped
export CACHET_CACHE_DIR=$tmp/store12b
mkdir -p "$CACHET_CACHE_DIR"
rec "$fam" "XX=32:YY=32:ZZ=32"
expect "import of a record naming other params" 0 "imported 1 of 1" "$CACHET" tune --import "$tmp/imp.json"
expect "run says it ignores that record" 0 "record M=96:N=96:K=96 of 'tune_matmul' ignored: its values \\(XX=32:YY=32:ZZ=32\\) do not name" \
	"$CACHET" run examples/tune_matmul.cachet -D M=96 -D N=96 -D K=96 --engine native
export CACHET_CACHE_DIR=$tmp/cache

# -- row 13: a trace past the simulator's limit is refused at once (the model counts it); the limit
# is --max-accesses; a long simulation tells its progress on stderr
printf 'kernel big3\nparam N = 100000\narray A : f32[N, N, N] input\narray B : f32[N, N, N] output\nfor (i: N, j: N, k: N) {\n  B[i, j, k] = A[i, j, k] * 2\n}\n' >"$tmp/big3.cachet"
expect "simulate of 2e15 accesses: refused" 2 "makes 2000000000000000 accesses, over the simulator's limit of 10000000000" \
	timeout 20 "$CACHET" simulate "$tmp/big3.cachet" --cache 32K:64
expect "simulate --max-accesses: a lower limit" 2 "over the simulator's limit of 1000 " \
	"$CACHET" simulate examples/copy.cachet --cache 4K:64 --max-accesses 1000 -D N=1000
expect "simulate --max-accesses 0: no limit" 0 '"accesses": 128' "$CACHET" simulate examples/copy.cachet --cache 4K:64 --max-accesses 0 --json
expect "predict --simulate --max-accesses" 2 "over the simulator's limit of 100 " \
	"$CACHET" predict examples/copy.cachet --cache 4K:64 --simulate --max-accesses 100
expect "--max-accesses is not a word" 2 "expects a count of accesses" "$CACHET" simulate examples/copy.cachet --max-accesses lots
# (the library tells progress from the first second on: judged only when the run took two)
t0=$(date +%s%N)
"$CACHET" simulate examples/matmul.cachet --cache 32K:64 -D K=512 >/dev/null 2>"$tmp/sim.err"
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$ms" -lt 2000 ] || grep -qE "^simulate: [0-9]+% of the trace$" "$tmp/sim.err"; then ok; else
	bad "a simulation of $ms ms told no progress on stderr"; fi

# -- the last paragraph: options --show/--export/--import cannot honour are refused, not ignored
while IFS='|' read -r name args pat; do
	# shellcheck disable=SC2086
	expect "tune $name" 2 "$pat" "$CACHET" tune $args
done <<ROWS
--show --budget|--show --budget 5|'cachet tune --show' tunes nothing: --budget does not apply
--show --sizes|--show --sizes 64|--sizes does not apply
--show --threads|--show --threads 2|--threads does not apply
--show --cc|--show --cc gcc|--cc does not apply
--show --quiet|--show --quiet|--quiet does not apply
--export --json|--export $tmp/x.json --json|'cachet tune --export' takes no --json
--import --budget|--import $tmp/imp.json --budget 5|'cachet tune --import' tunes nothing: --budget
--import --json|--import $tmp/imp.json --json|'cachet tune --import' takes no --json
ROWS
expect "tune --show --json is honoured" 0 '"records": ' "$CACHET" tune --show --json
expect "--sizes naming a param twice" 2 "'M=64:M=32' sets M twice" "$CACHET" tune examples/tune_matmul.cachet --sizes M=64:M=32 --budget 1
# -D values follow the language's integer literals: no leading zero (octal in C), hex with 0x
expect "-D with a leading zero: refused" 2 "decimal without a leading zero" "$CACHET" check $k -D M=010
expect "-D in hexadecimal: accepted" 0 "" "$CACHET" check $k -D M=0x10
expect "-D with a plus sign: refused" 2 "NAME=INTEGER" "$CACHET" check $k -D M=+5
expect "report -D with a leading zero: refused" 2 "decimal without a leading zero" "$CACHET" report $k -D M=010 --json
expect "--sizes with a leading zero: refused" 2 "is not a number" "$CACHET" tune examples/tune_matmul.cachet --sizes 064 --budget 1
# a kernel name too long for the package's file names: a clear error before the compile
long=$(printf 'k%.0s' $(seq 1 255))
kfile long.cachet "kernel $long" "param N = 8" "array A : f32[N] input" "array B : f32[N] output" \
	"for (i: N) {" "  B[i] = A[i] * 2" "}" >/dev/null
expect "build of a 255-character kernel name" 2 "build needs a kernel name of at most 235 characters" \
	"$CACHET" build "$tmp/long.cachet" -o "$tmp/longpkg"

# -- beyond the list: tune --export is an output like report's: exit 1 when it cannot be written,
# replaced atomically (a full disk keeps the old export whole), never over the store itself
export CACHET_CACHE_DIR=$tmp/store12
expect "tune --export to /dev/full: exit 1" 1 "cannot write /dev/full: No space left" "$CACHET" tune --export /dev/full
expect "tune --export where no folder is: exit 1" 1 "cannot write /proc/none/x.json" "$CACHET" tune --export /proc/none/x.json
expect "tune --export onto the store itself: refused" 2 "it is the store itself" sh -c '"$1" tune --export "$2"/*.sqlite' sh "$CACHET" "$CACHET_CACHE_DIR"
# a symbolic link (as /dev/stdout is) is written through, never replaced by a rename
ln -s "$tmp/target.json" "$tmp/link.json"
expect "tune --export through a link" 0 "exported" "$CACHET" tune --export "$tmp/link.json"
[ -L "$tmp/link.json" ] && grep -q '"format": "cachet-tune-export"' "$tmp/target.json" && ok || bad "tune --export replaced the link"
ln -s "$tmp/target.html" "$tmp/link.html"
expect "report -o through a link" 0 "" "$CACHET" report examples/copy.cachet -o "$tmp/link.html" --no-run --no-measure --cache 4K:64
[ -L "$tmp/link.html" ] && grep -q '<html' "$tmp/target.html" && ok || bad "report -o replaced the link"
emnt=$tmp/efull
mkdir -p "$emnt"
if mount -t tmpfs -o size=64k tmpfs "$emnt" 2>/dev/null; then
	"$CACHET" tune --export "$emnt/e.json" >/dev/null 2>&1
	cp "$emnt/e.json" "$tmp/e.good"
	dd if=/dev/zero of="$emnt/fill" bs=4k count=100 2>/dev/null
	expect "tune --export on a full disk: exit 1" 1 "No space left" "$CACHET" tune --export "$emnt/e.json"
	cmp -s "$emnt/e.json" "$tmp/e.good" && ok || bad "tune --export on a full disk: the old export was not kept whole"
	umount "$emnt"
fi
export CACHET_CACHE_DIR=$tmp/cache

# -- beyond the list: empty and non-finite values are refused, never read as "/" or "forever"
T=examples/tune_matmul.cachet
while IFS='|' read -r name args pat; do
	# shellcheck disable=SC2086
	expect "$name" 2 "$pat" timeout 20 "$CACHET" $args
done <<ROWS
tune --budget inf|tune $T --budget inf --quiet|--budget expects positive seconds, not 'inf'
tune --budget 0x10|tune $T --budget 0x10 --quiet|--budget expects positive seconds, not '0x10'
ROWS
expect "build -o with an empty name" 2 "-o expects a folder" "$CACHET" build $k -o ""
expect "report -o with an empty name" 2 "-o expects a file name" "$CACHET" report $k -o "" --no-run --no-measure
# (a kernel file that does not exist: code without the check fails before writing /levels.csv)
expect "report --csv with an empty name" 2 "--csv expects a folder" "$CACHET" report "$tmp/none.cachet" --csv "" --no-run

expect "tune --import /dev/zero: refused at once" 2 "not JSON" timeout 20 "$CACHET" tune --import /dev/zero

# -- beyond the list: TERM while report's gnuplot runs kills it (its own process group) and
# removes the plot folder (a gnuplot that says it started, then sleeps, stands in for a slow one)
mkdir -p "$tmp/fakebin"
printf '#!/bin/sh\necho $$ >"%s/gnuplot.pid"\nexec sleep 30\n' "$tmp" >"$tmp/fakebin/gnuplot"
chmod +x "$tmp/fakebin/gnuplot"
t=$(mktemp -d "$tmp/sig.XXXXXX")
PATH="$tmp/fakebin:$PATH" TMPDIR=$t "$CACHET" report examples/tiles_two_index.cachet -D V=16 -D N=24 -o "$tmp/sig.html" --no-run --no-measure --cache 4K:64 \
	>/dev/null 2>&1 &
cpid=$!
i=0
while [ ! -s "$tmp/gnuplot.pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $cpid
{ wait $cpid; } 2>/dev/null
sleep 0.2
if [ -s "$tmp/gnuplot.pid" ]; then
	# (a zombie waiting for its reaper counts as dead)
	st=$(ps -o stat= -p "$(cat "$tmp/gnuplot.pid")" 2>/dev/null)
	case "$st" in "" | Z*) ok ;; *) bad "SIGTERM during report: gnuplot still running ($st)" ;; esac
	[ -z "$(left "$t")" ] && ok || bad "SIGTERM during report left $(left "$t")"
	kill "$(cat "$tmp/gnuplot.pid")" 2>/dev/null
else
	bad "report never started gnuplot"
fi

# -- last paragraph: "threads" is the count the parallel loops use: a 32-iteration parallel loop
# asked for 4096 threads keeps 32 busy, and says so
cat >"$tmp/par32.cachet" <<'EOF2'
kernel par32
param N = 32
array A : f32[N, 8] input
array B : f32[N, 8] output
for (i: N, j: 8) { B[i, j] = A[i, j] * 2 }
plan { parallelize(i) }
EOF2
expect "--threads 4096 on a 32-iteration parallel loop reports 32" 0 '"threads": 32[,}]' "$CACHET" run "$tmp/par32.cachet" --threads 4096 --json
expect "--threads 4096, N=3: 3 threads" 0 '"threads": 3[,}]' "$CACHET" run "$tmp/par32.cachet" -D N=3 --threads 4096 --json
expect "--threads 2 on 32 iterations: 2" 0 '"threads": 2[,}]' "$CACHET" run "$tmp/par32.cachet" --threads 2 --json

echo "$pass passed, $fail failed"; [ "$fail" = 0 ]
