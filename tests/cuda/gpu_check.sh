#!/bin/sh
# gpu_check.sh: the generated CUDA kernels on a borrowed GPU machine that has none of our build
# tools (the session's `device` tool; see bench/opencl/device_check.sh). `prepare` here builds,
# per kernel, tests/cuda/gpu_main.cu around its generated source with nvcc (cudart static) into
# build/gpu_cuda/, with libcachet and the Debian libraries it loads in build/gpu_cuda/lib (carry
# "build/gpu_cuda"); `run` there verifies every tests/plans/cuda kernel and CUDA example against
# the interpreter at small sizes, then times cuda_sgemm / cuda_dgemm / cuda_stencil / cuda_trmm at bench
# sizes (cuBLAS on the same buffers for the gemms, loaded from the machine's CUDA toolkit).
set -e
cd "$(dirname "$0")/../.."
G=$PWD/build/gpu_cuda
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
# NAME|FILE|MODE|DEFS (MODE verify or time)
list() {
	for f in tests/plans/cuda/*.cachet; do
		n=$(basename "$f" .cachet)
		case $n in runtime_params) echo "v_$n|$f|verify|-D L=100001" ;; *) echo "v_$n|$f|verify|" ;; esac
	done
	for f in examples/cuda_*.cachet; do
		n=$(basename "$f" .cachet)
		echo "v_$n|$f|verify|$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')"
	done
	echo "v_sgemm_mid|examples/cuda_sgemm.cachet|verify|-D M=300 -D N=260 -D K=100"
	echo "t_sgemm_1024|examples/cuda_sgemm.cachet|time|-D M=1024 -D N=1024 -D K=1024"
	echo "t_sgemm_4096|examples/cuda_sgemm.cachet|time|-D M=4096 -D N=4096 -D K=4096"
	echo "t_sgemm_8192|examples/cuda_sgemm.cachet|time|-D M=8192 -D N=8192 -D K=8192"
	echo "t_dgemm_4096|examples/cuda_dgemm.cachet|time|-D M=4096 -D N=4096 -D K=4096"
	echo "t_stencil_8192|examples/cuda_stencil.cachet|time|-D N=8192 -D M=8192"
	echo "t_trmm_4096|examples/cuda_trmm.cachet|time|-D NB=128 -D M=4096"
}
case "$1" in
prepare)
	make -j2 build/cachet >/dev/null
	rm -rf "$G" && mkdir -p "$G/lib" "$G/src"
	list | while IFS='|' read -r name file mode defs; do
		build/cachet emit "$file" $defs --target cuda >"$G/src/$name.cu"
		fn=$(head -1 "$G/src/$name.cu" | sed 's|^/\* \([A-Za-z0-9_]*\):.*|\1|')
		echo "$fn $name"
	done >"$G/build.list"
	# two at a time
	i=0
	while read -r fn name; do
		"$NVCC" -std=c++17 -O2 -arch=sm_90a -Iinclude -include "$G/src/$name.cu" -DCT_KERNEL="$fn" \
			tests/cuda/gpu_main.cu -o "$G/$name" -Lbuild -lcachet -ldl -Xlinker -rpath -Xlinker '$ORIGIN/lib' &
		i=$((i + 1))
		[ $((i % 2)) = 0 ] && wait
	done <"$G/build.list"
	wait
	while read -r fn name; do
		[ -x "$G/$name" ] || { echo "gpu_check: $name did not build" >&2; exit 1; }
	done <"$G/build.list"
	cp -L build/libcachet.so.1 "$G/lib/"
	for l in libxxhash.so.0 libhwloc.so.15 libsqlite3.so.0 libjansson.so.4 libudev.so.1 libisl.so.23 libgmp.so.10; do
		cp -L "/lib/x86_64-linux-gnu/$l" "$G/lib/"
	done
	list >"$G/list"
	echo "build/gpu_cuda ready ($(du -sh "$G" | cut -f1)): on the device run: sh tests/cuda/gpu_check.sh run"
	;;
run)
	set +e
	export LD_LIBRARY_PATH=$G/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
	echo "== machine"; nvidia-smi -L
	bad=0
	while IFS='|' read -r name file mode defs; do
		if [ "$mode" = verify ]; then
			echo "== verify $file $defs"
			timeout 120 "$G/$name" --verify "$file" $defs || bad=$((bad + 1))
		else
			echo "== time $file $defs"
			timeout 120 "$G/$name" --time 10 "$file" $defs || bad=$((bad + 1))
		fi
	done <"$G/list"
	echo "== $bad failed"
	;;
*)
	echo "usage: sh tests/cuda/gpu_check.sh prepare|run" >&2
	exit 2
	;;
esac
