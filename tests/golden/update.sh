#!/bin/sh
# update.sh: regenerate the golden C files of every example (make golden).
BUILD=${1:-build}
for f in examples/*.cachet; do
	name=$(basename "$f" .cachet)
	defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	"$BUILD/cachet" emit "$f" $defs --vector-bytes 64 >"tests/golden/$name.c" || exit 1
	if grep -q 'plan(target=opencl)' "$f"; then
		"$BUILD/cachet" emit "$f" $defs --target opencl >"tests/golden/$name.cl" || exit 1
	fi
	if grep -q 'plan(target=cuda)' "$f"; then
		"$BUILD/cachet" emit "$f" $defs --target cuda >"tests/golden/$name.cu" || exit 1
	fi
done
echo "golden files updated in tests/golden/"
