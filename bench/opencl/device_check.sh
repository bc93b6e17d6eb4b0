#!/bin/sh
# device_check.sh: cachet's OpenCL engine on a borrowed GPU machine that has no build tools of
# ours (the session's `device` tool): `prepare` here bundles the built binaries and the Debian
# libraries they load into gpu_probe/ (ignored by git: the device call carries it, `carry:
# ["gpu_probe"]`); `run` there lists the GPU, points the OpenCL loader at the NVIDIA driver
# when no ICD file names it, and runs an example, test_ocl, the OpenCL differential fuzzer and
# bench_opencl.
set -e
cd "$(dirname "$0")/../.."
G=$PWD/gpu_probe
case "$1" in
prepare)
	make -j2 build/cachet build/tests/test_ocl build/fuzz/difffuzz build/bench/bench_opencl >/dev/null
	rm -rf "$G" && mkdir -p "$G/lib"
	cp build/cachet build/tests/test_ocl build/fuzz/difffuzz build/bench/bench_opencl "$G/"
	for l in libxxhash.so.0 libhwloc.so.15 libsqlite3.so.0 libjansson.so.4 libudev.so.1 libclblast.so.1 libOpenCL.so.1; do
		cp -L "/lib/x86_64-linux-gnu/$l" "$G/lib/"
	done
	echo "gpu_probe/ ready: on the device run: sh bench/opencl/device_check.sh run"
	;;
run)
	set +e
	export LD_LIBRARY_PATH=$G/lib CACHET_CACHE_DIR=/tmp/ct-cache TMPDIR=/tmp
	mkdir -p /tmp/ct-cache
	echo "== machine"; nvidia-smi -L; ldd --version | head -1; nproc
	echo "== OpenCL vendors"; ls /etc/OpenCL/vendors 2>&1
	if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
		lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/{print $NF; exit}')
		echo "no nvidia.icd; the driver's OpenCL library: $lib"
		mkdir -p /tmp/vendors && echo "${lib:-libnvidia-opencl.so.1}" >/tmp/vendors/nvidia.icd
		export OCL_ICD_VENDORS=/tmp/vendors
	fi
	echo "== example"; timeout 60 "$G/cachet" run examples/opencl_sgemm.cachet --json 2>&1 | head -c 800; echo
	echo "== test_ocl"; timeout 120 "$G/test_ocl" 2>&1 | tail -3
	echo "== difffuzz opencl"
	timeout 150 "$G/difffuzz" --seed "${SEED:-9300000}" --seconds 120 --engines opencl --opencl-share 100 --jobs 8 \
		--out /tmp/ff 2>&1 | tail -4
	echo "== bench_opencl"; timeout 150 "$G/bench_opencl" --reps 3 2>&1 | grep -v "^       " | tail -8
	;;
*)
	echo "usage: sh bench/opencl/device_check.sh prepare|run" >&2
	exit 2
	;;
esac
