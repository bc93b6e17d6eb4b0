#!/bin/sh
# runtime_check.sh: the CUDA runtime (engine/cuda.c) on a borrowed GPU machine that has no build tools of ours: `prepare` here bundles the built binaries and the Debian libraries they load into gpu_cudart/ (ignored by git: the device call carries it, `carry: ["gpu_cudart"]`); `run` there lists the GPU (cachet probe, with measured copy bandwidth and fp32 peak), runs build/tests/test_cuda (the GPU suite), test_cudart (the runtime on a made-up driver; needs cc there, else that case is skipped) and `cachet run` on each examples/cuda_*.cachet. A few seconds of GPU time; prints one line per step.
set -e
cd "$(dirname "$0")/../.."
G=$PWD/gpu_cudart
case "$1" in
prepare)
	make -j2 build/cachet build/tests/test_cuda build/tests/test_cudart >/dev/null
	rm -rf "$G" && mkdir -p "$G/lib"
	cp build/cachet build/tests/test_cuda build/tests/test_cudart "$G/"
	# every library they load but the C library's own
	for l in $(ldd build/cachet build/tests/test_cuda build/tests/test_cudart | awk '$3 ~ /^\// {print $3}' | sort -u); do
		case $(basename "$l") in
		libc.so.* | libm.so.* | ld-linux* | libpthread.so.* | libdl.so.* | librt.so.*) ;;
		*) cp -L "$l" "$G/lib/" ;;
		esac
	done
	echo "gpu_cudart/ ready: on the device run: sh bench/cuda/runtime_check.sh run"
	;;
run)
	set +e
	export LD_LIBRARY_PATH=$G/lib CACHET_CACHE_DIR=/tmp/ct-cudart-cache TMPDIR=/tmp
	rm -rf /tmp/ct-cudart-cache && mkdir -p /tmp/ct-cudart-cache
	echo "== machine"; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
	echo "== probe"; timeout 60 "$G/cachet" probe 2>&1 | sed -n '/^cuda/,/^measured/p'
	echo "== test_cuda"; timeout 180 "$G/test_cuda" 2>&1 | tail -25
	echo "== test_cudart"; timeout 120 "$G/test_cudart" 2>&1 | tail -8
	for f in examples/cuda_*.cachet; do
		[ -f "$f" ] || continue
		echo "== run $f"; timeout 60 "$G/cachet" run "$f" --json 2>&1 | head -c 600; echo
		echo "== run $f again (the ctx is new: the cubin from disk)"
		timeout 60 "$G/cachet" run "$f" --json 2>&1 | grep -o '"code_cache": "[a-z]*"'
	done
	for f in examples/cuda_*.cachet; do
		[ -f "$f" ] || continue
		echo "== no driver (CACHET_LIBCUDA=/nonexistent): want exit 2"
		CACHET_LIBCUDA=/nonexistent "$G/cachet" run "$f" 2>&1 | tail -1
		CACHET_LIBCUDA=/nonexistent "$G/cachet" run "$f" >/dev/null 2>&1
		echo "exit $?"
		break
	done
	;;
*)
	echo "usage: sh bench/cuda/runtime_check.sh prepare|run" >&2
	exit 2
	;;
esac
