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
echo "$pass passed, $fail failed"; [ "$fail" = 0 ]
