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

echo "$pass passed, $fail failed"; [ "$fail" = 0 ]
