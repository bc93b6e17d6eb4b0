#!/bin/sh
# golden.sh: `cachet emit` of every example equals its golden file (update with `make golden`); OpenCL and CUDA examples also their .cl / .cu.
# Register tiles are emitted for 64-byte vectors whatever the machine (--vector-bytes 64).
CACHET=${CACHET:-build/cachet}
pass=0
fail=0
for f in examples/*.cachet; do
	name=$(basename "$f" .cachet)
	g=tests/golden/$name.c
	defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	if [ ! -f "$g" ]; then
		fail=$((fail + 1))
		echo "FAIL: $g is missing (run make golden)" >&2
	elif "$CACHET" emit "$f" $defs --vector-bytes 64 | diff -u "$g" - >&2; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: emit $f differs from $g (run make golden if intended)" >&2
	fi
	# a CUDA example also has its CUDA C (NAME.cu)
	if grep -q 'plan(target=cuda)' "$f"; then
		if "$CACHET" emit "$f" $defs --target cuda | diff -u "tests/golden/$name.cu" - >&2; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: emit --target cuda $f differs from tests/golden/$name.cu (run make golden if intended)" >&2
		fi
	fi
	# an OpenCL example also has its OpenCL C (NAME.cl)
	grep -q 'plan(target=opencl)' "$f" || continue
	if "$CACHET" emit "$f" $defs --target opencl | diff -u "tests/golden/$name.cl" - >&2; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: emit --target opencl $f differs from tests/golden/$name.cl (run make golden if intended)" >&2
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
