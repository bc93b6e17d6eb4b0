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

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
