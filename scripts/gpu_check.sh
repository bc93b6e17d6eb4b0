#!/bin/sh
# gpu_check.sh: the whole GPU suite of cachet's CUDA target (docs/CUDA.md, "On a GPU") on a
# borrowed machine that has a GPU but none of our build tools or Debian libraries (the session's
# `device` tool). `prepare` here builds the binaries and bundles them, with the shared libraries
# they load that are not glibc's (found with ldd), into gpu_probe/ (ignored by git; the device call
# carries it: `carry: ["gpu_probe"]`). `run` there prints the machine, `cachet probe`, a verified
# `cachet run` of every examples/cuda_*.cachet, test_cuda, the differential fuzzer on target=cuda
# plans, compute-sanitizer memcheck and racecheck, Nsight Compute's occupancy and bank conflicts
# of the sgemm kernel, bench_cuda and bench_opencl (tuned for the GPU, against CLBlast). Each step
# has a header, runs under timeout and ends with one line "verdict: ..."; the whole run stays
# within RUN_BUDGET seconds (default 380), later steps are skipped when it is spent. The log is
# also written to $OUT/gpu.log when OUT is set. `run STEP...` runs only those steps (machine
# probe examples test fuzz sanitize ncu bench opencl gen).
#   sh scripts/gpu_check.sh prepare
#   sh scripts/gpu_check.sh run [STEP...]
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
G=$ROOT/gpu_probe
BUILD=${BUILD:-build}

# The shared libraries binary $1 loads that are not glibc's own or the kernel's: one path a line.
bundle_libs() {
	ldd "$1" 2>/dev/null | awk '/=>/ && $3 ~ /^\// {print $3}' |
		grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[^/]*|libgcc_s|libstdc\+\+)\.so'
}

prepare() {
	set -e
	bins="$BUILD/cachet $BUILD/fuzz/difffuzz $BUILD/bench/bench_cuda $BUILD/bench/bench_opencl"
	for t in test_cuda test_cudart; do
		if [ -f "tests/unit/$t.c" ]; then bins="$bins $BUILD/tests/$t"; fi
	done
	# shellcheck disable=SC2086
	nice -n 10 make -j2 $bins >/dev/null
	rm -rf "$G" && mkdir -p "$G/bin" "$G/lib" "$G/examples"
	for b in $bins; do cp "$b" "$G/bin/"; done
	tuner=$(command -v clblast_tuner_xgemm || true)
	if [ -n "$tuner" ]; then cp "$tuner" "$G/bin/"; fi
	for b in "$G"/bin/*; do bundle_libs "$b"; done | sort -u >"$G/libs.txt"
	while read -r l; do cp -L "$l" "$G/lib/"; done <"$G/libs.txt"
	cp examples/cuda_*.cachet examples/opencl_*.cachet "$G/examples/" 2>/dev/null || true
	if [ -d tests/cuda ]; then cp -r tests/cuda "$G/tests-cuda"; fi
	git rev-parse --short HEAD >"$G/commit" 2>/dev/null || echo unknown >"$G/commit"
	set +e
	# the bench's kernels generated and compiled by nvcc here, so that the GPU run does not find out
	if "$G/bin/bench_cuda" --compile-only >"$G/compile-check.txt" 2>&1; then
		echo "bench_cuda --compile-only: every kernel of the bench compiled for sm_90a"
	else
		cat "$G/compile-check.txt"
		echo "WARNING: bench_cuda --compile-only failed (above): the GPU bench will fail on these kernels"
	fi
	echo "gpu_probe/ ready ($(ls "$G/bin" | tr '\n' ' '); $(wc -l <"$G/libs.txt") libraries: $(ls "$G/lib" | tr '\n' ' '))"
	echo "on the device: bash scripts/gpu_check.sh run   (carry: [\"gpu_probe\"])"
}

# ------------------------------------------------------------------ run (on the GPU machine)

T0=$(date +%s)
RUN_BUDGET=${RUN_BUDGET:-380}
step_n=0

# header NAME: a step's banner
header() {
	step_n=$((step_n + 1))
	echo
	echo "=================================================================== [$step_n] $1 (t=$(($(date +%s) - T0)) s)"
}

verdict() {
	echo "verdict: $*"
	summary="$summary
  $step_name: $*"
}

# left: seconds of the run's budget left
left() {
	echo $((RUN_BUDGET - ($(date +%s) - T0)))
}

# tmo WANT: WANT, or what is left of the budget when less; 0 when less than 5 s are left
tmo() {
	l=$(left)
	if [ "$l" -lt 5 ]; then echo 0; elif [ "$l" -lt "$1" ]; then echo "$l"; else echo "$1"; fi
}

# find_tool NAME DIR...: NAME on PATH or in the first DIR that has it
find_tool() {
	n=$1
	shift
	p=$(command -v "$n" 2>/dev/null)
	if [ -n "$p" ]; then echo "$p"; return; fi
	for d in "$@"; do
		for c in $d/$n; do
			if [ -x "$c" ]; then echo "$c"; return; fi
		done
	done
}

# defs_of FILE: the -D values of its "# run-with:" line (the CUDA examples' defaults are 4096, too
# big for the interpreter that verifies them); without one, 1001 for each runtime param
defs_of() {
	if grep -q '^# run-with:' "$1"; then
		grep -m1 '^# run-with:' "$1" | sed 's/^# run-with://'
	else
		sed -n 's/^param \([A-Za-z_][A-Za-z_0-9]*\) *: *runtime.*/-D \1=1001/p' "$1" | tr '\n' ' '
	fi
}

want() {
	[ -z "$STEPS" ] || echo " $STEPS " | grep -q " $1 "
}

# late SECONDS: true (and a verdict) when less than SECONDS of the run's budget are left
late() {
	if [ "$(left)" -lt "$1" ]; then
		verdict "SKIPPED: the run's budget ($RUN_BUDGET s) is spent"
		return 0
	fi
	return 1
}

step_machine() {
	step_name=machine
	header "machine"
	nvidia-smi -L 2>&1
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>&1
	echo "glibc: $(ldd --version 2>&1 | head -1); cores: $(nproc); bundle from commit $(cat "$G/commit" 2>/dev/null)"
	echo "nvcc: $($NVCC --version 2>&1 | tail -2 | head -1) ($NVCC)"
	echo "compute-sanitizer: ${SAN:-not found}; ncu: ${NCU:-not found}"
	echo "bundled libraries used (the machine lacks them): $(ls "$RUNLIB" 2>/dev/null | tr '\n' ' ')"
	if nvidia-smi -L >/dev/null 2>&1; then verdict "ok: a GPU"; else verdict "FAILED: nvidia-smi lists no GPU"; fi
}

step_probe() {
	step_name=probe
	header "cachet probe (the GPU section)"
	late 60 && return
	timeout "$(tmo 40)" "$B/cachet" probe >/tmp/gc-probe.txt 2>&1
	rc=$?
	# the GPU section: from its first CUDA/GPU line on (the whole output when none)
	if grep -qi 'cuda\|gpu' /tmp/gc-probe.txt; then
		awk 'tolower($0) ~ /cuda|gpu/ {on = 1} on' /tmp/gc-probe.txt | head -40
	else
		tail -40 /tmp/gc-probe.txt
	fi
	if [ $rc -eq 0 ] && grep -qi 'cuda\|gpu' /tmp/gc-probe.txt && ! grep -q '^cuda *none' /tmp/gc-probe.txt; then
		verdict "ok: $(grep -m1 '^cuda' /tmp/gc-probe.txt | sed 's/^cuda *//' | cut -c1-150)"
	else
		verdict "FAILED (exit $rc): $(grep -m1 '^cuda' /tmp/gc-probe.txt || echo 'no CUDA section')"
	fi
}

step_examples() {
	step_name=examples
	header "cachet run of every examples/cuda_*.cachet and tests/plans/cuda/*.cachet at its run-with sizes (on the GPU: engine cuda; verified against the interpreter)"
	late 30 && return
	ok=0 bad=0
	for f in examples/cuda_*.cachet tests/plans/cuda/*.cachet; do
		[ -e "$f" ] || continue
		t=$(tmo 30)
		if [ "$t" -eq 0 ]; then echo "skipped $f: out of time"; bad=$((bad + 1)); continue; fi
		# shellcheck disable=SC2046
		out=$(timeout "$t" "$B/cachet" run "$f" $(defs_of "$f") --json 2>&1)
		rc=$?
		line=$(echo "$out" | tr -d '\n' | sed 's/  */ /g' | head -c 600)
		if [ $rc -eq 0 ] && echo "$out" | grep -q '"verified": *\(1\|true\)' && echo "$out" | grep -q '"engine": *"cuda"'; then
			ok=$((ok + 1))
			echo "ok   $f $(defs_of "$f"): $(echo "$line" | grep -o '"seconds": *[0-9.e-]*\|"gflops": *[0-9.e-]*\|"engine": *"[a-z]*"' | tr '\n' ' ')"
		else
			bad=$((bad + 1))
			echo "FAIL $f (exit $rc): $line"
		fi
	done
	if [ $ok -gt 0 ] && [ $bad -eq 0 ]; then verdict "ok: $ok verified"; else verdict "FAILED: $ok verified, $bad failed"; fi
}

step_test() {
	step_name=test_cuda
	header "test_cuda (the CUDA test suite on the GPU) and test_cudart (the runtime on a made-up driver)"
	if [ ! -x "$B/test_cuda" ]; then verdict "SKIPPED: no test_cuda in the bundle (tests/unit/test_cuda.c missing when prepared)"; return; fi
	late 30 && return
	msg="" failed=0
	for t in test_cuda test_cudart; do
		[ -x "$B/$t" ] || continue
		timeout "$(tmo 60)" "$B/$t" >/tmp/gc-$t.txt 2>&1
		rc=$?
		echo "--- $t (exit $rc)"
		grep -i 'fail\|skip' /tmp/gc-$t.txt | head -20
		tail -3 /tmp/gc-$t.txt
		msg="$msg $t: $(tail -1 /tmp/gc-$t.txt | cut -c1-120) (exit $rc);"
		[ $rc -eq 0 ] || failed=1
		# on the GPU machine a case of test_cuda skipped for want of a device is a failure
		if [ $t = test_cuda ] && grep -qi '^skip.*no CUDA device' /tmp/gc-$t.txt; then
			failed=1
			msg="$msg test_cuda skipped cases for want of a device;"
		fi
	done
	if [ $failed -eq 0 ]; then verdict "ok:$msg"; else verdict "FAILED:$msg"; fi
}

step_fuzz() {
	step_name=difffuzz
	header "differential fuzzer: random target=cuda plans run on the GPU and verified (${FUZZ_SECONDS:-35} s)"
	late 30 && return
	s=${FUZZ_SECONDS:-35}
	t=$(tmo $((s + 20)))
	[ "$t" -lt $((s + 15)) ] && s=$((t - 15))
	timeout "$t" "$B/difffuzz" --seed "${SEED:-29000000}" --seconds "$s" --engines interp,cuda --cuda-share 100 \
		--jobs "${FUZZ_JOBS:-8}" --no-minimize --timeout 15 --out /tmp/gc-fuzz >/tmp/gc-fuzz.txt 2>&1
	rc=$?
	grep '^FAIL' /tmp/gc-fuzz.txt | head -10
	tail -5 /tmp/gc-fuzz.txt
	if [ -d /tmp/gc-fuzz ] && [ -n "$(ls /tmp/gc-fuzz 2>/dev/null)" ] && [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT/fuzz-findings" && cp -r /tmp/gc-fuzz/. "$OUT/fuzz-findings/"
	fi
	v=$(grep '^verified:' /tmp/gc-fuzz.txt | tail -1)
	if [ $rc -eq 0 ]; then verdict "ok: $v"; else verdict "FAILED (exit $rc): $v; $(tail -1 /tmp/gc-fuzz.txt)"; fi
}

step_sanitize() {
	step_name=sanitizer
	header "compute-sanitizer memcheck and racecheck on the examples"
	if [ -z "$SAN" ]; then verdict "SKIPPED: compute-sanitizer not found"; return; fi
	late 20 && return
	ok=0 bad=0
	end=$(($(date +%s) + ${SAN_SECONDS:-50}))
	for f in examples/cuda_*.cachet; do
		[ -e "$f" ] || continue
		for tool in memcheck racecheck; do
			t=$(tmo 30)
			s_left=$((end - $(date +%s)))
			[ "$s_left" -lt "$t" ] && t=$s_left
			[ "$t" -lt 5 ] && t=0
			if [ "$t" -eq 0 ]; then echo "skipped $tool $f: out of time"; bad=$((bad + 1)); continue; fi
			# shellcheck disable=SC2046
			timeout "$t" "$SAN" --tool "$tool" --error-exitcode 99 "$B/cachet" run "$f" $(defs_of "$f") --no-verify \
				>/tmp/gc-san.txt 2>&1
			rc=$?
			sum=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/gc-san.txt | tail -1)
			if [ $rc -eq 0 ] && echo "$sum" | grep -q ' 0 \(errors\|hazards\)'; then
				ok=$((ok + 1))
				echo "clean $tool $f $(defs_of "$f"): $sum"
			else
				bad=$((bad + 1))
				echo "DIRTY $tool $f (exit $rc): $sum"
				grep -E '^=+ (Invalid|Error|Race|Warning|.*hazard)' /tmp/gc-san.txt | head -6
				tail -3 /tmp/gc-san.txt
			fi
		done
	done
	if [ $ok -gt 0 ] && [ $bad -eq 0 ]; then verdict "ok: $ok runs clean"; else verdict "FAILED: $ok clean, $bad not"; fi
}

step_ncu() {
	step_name=ncu
	header "Nsight Compute: achieved occupancy and shared-memory bank conflicts of the sgemm kernel (4096)"
	if [ -z "$NCU" ]; then verdict "SKIPPED: ncu not found"; return; fi
	late 30 && return
	f=examples/cuda_sgemm.cachet
	set -- -D M=4096 -D N=4096 -D K=4096
	timeout "$(tmo 60)" "$NCU" --clock-control none -k regex:cachet_ --launch-count 1 --metrics \
		sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,gpu__time_duration.sum \
		"$B/cachet" run "$f" "$@" --no-verify >/tmp/gc-ncu.txt 2>&1
	rc=$?
	grep -E '^ +[a-z_]+__|==PROF==|==ERROR==|==WARNING==|  [a-zA-Z_0-9]+.*\(' /tmp/gc-ncu.txt | head -30
	occ=$(awk '/sm__warps_active.avg.pct_of_peak_sustained_active/ {print $NF}' /tmp/gc-ncu.txt | tail -1)
	ld=$(awk '/l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum/ {print $NF}' /tmp/gc-ncu.txt | tail -1)
	st=$(awk '/l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum/ {print $NF}' /tmp/gc-ncu.txt | tail -1)
	if [ $rc -eq 0 ] && [ -n "$occ" ]; then
		verdict "ok: achieved occupancy $occ %, shared-memory bank conflicts: loads $ld, stores $st"
	else
		tail -5 /tmp/gc-ncu.txt
		verdict "FAILED (exit $rc): no metrics read"
	fi
}

step_bench() {
	step_name=bench_cuda
	header "bench_cuda: sgemm/dgemm vs cuBLAS, stencil vs the copy bandwidth, the tuned sgemm"
	late 60 && return
	timeout "$(tmo 140)" "$B/bench_cuda" ${BENCH_CUDA_ARGS:---reps 5 --tune-budget 20} 2>&1
	rc=$?
	if [ $rc -gt 128 ] && [ "$(left)" -gt 60 ]; then
		# killed by a signal (not the timeout): again without the library's runs, the tables only
		echo "bench_cuda died of signal $((rc - 128)); again with --no-lib (cachet's and cuBLAS's launches only)"
		timeout "$(tmo 90)" "$B/bench_cuda" --reps 3 --no-lib --only sgemm,dgemm,stencil 2>&1
		rc=$?
		[ $rc -eq 0 ] && rc=3 # the library's path did fail
	fi
	if [ $rc -eq 0 ]; then verdict "ok: every result verified (tables above)"; elif [ $rc -eq 3 ]; then
		verdict "FAILED: the library's run crashed; the --no-lib tables above verified the launches"; else verdict "FAILED (exit $rc)"; fi
}

step_opencl() {
	step_name=bench_opencl
	header "bench_opencl on the NVIDIA GPU: examples/opencl_sgemm_tune.cachet tuned for it, against CLBlast"
	late 40 && return
	if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
		lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/{print $NF; exit}')
		echo "no nvidia.icd; the driver's OpenCL library: ${lib:-not found}"
		mkdir -p /tmp/vendors && echo "${lib:-libnvidia-opencl.so.1}" >/tmp/vendors/nvidia.icd
		export OCL_ICD_VENDORS=/tmp/vendors
	fi
	t=$(tmo 80)
	timeout "$t" "$B/bench_opencl" --kernel examples/opencl_sgemm_tune.cachet --tune-budget "${OCL_TUNE:-15}" \
		--tune-size 2048 --sizes 512,1024,2048 --reps 5 --no-load-times --clblast-dir /tmp/gc-clblast \
		--clblast-tune-seconds "${CLBLAST_TUNE:-20}" >/tmp/gc-ocl.txt 2>&1
	rc=$?
	grep -v '^       ' /tmp/gc-ocl.txt
	if [ $rc -eq 0 ]; then verdict "ok (table above)"; else verdict "FAILED (exit $rc)"; fi
}

step_gen() {
	step_name=generator
	header "the generator's own GPU check (tests/cuda/gpu_check.sh run, when build/gpu_cuda was carried too)"
	if [ ! -f tests/cuda/gpu_check.sh ] || [ ! -d build/gpu_cuda ]; then
		verdict "SKIPPED: build/gpu_cuda not carried (sh tests/cuda/gpu_check.sh prepare, then carry it too)"
		return
	fi
	late 30 && return
	timeout "$(tmo 90)" sh tests/cuda/gpu_check.sh run >/tmp/gc-gen.txt 2>&1
	rc=$?
	tail -40 /tmp/gc-gen.txt
	if [ $rc -eq 0 ]; then verdict "ok"; else verdict "FAILED (exit $rc)"; fi
}

run() {
	STEPS="$*"
	if [ -d "$G/bin" ]; then
		B=$G/bin
	else
		B=$ROOT/$BUILD/bench_bins
		mkdir -p "$B"
		for f in "$BUILD/cachet" "$BUILD/fuzz/difffuzz" "$BUILD/bench/bench_cuda" "$BUILD/bench/bench_opencl" "$BUILD/tests/test_cuda" "$BUILD/tests/test_cudart"; do
			[ -x "$f" ] && ln -sf "$ROOT/$f" "$B/"
		done
	fi
	# the bundled libraries the machine lacks (a library it has, same soname, is its newer one;
	# ours on the path would also be loaded by its compilers and tools)
	RUNLIB=/tmp/gc-lib
	rm -rf "$RUNLIB" && mkdir -p "$RUNLIB"
	for l in "$G"/lib/*; do
		[ -e "$l" ] || continue
		n=$(basename "$l")
		ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$n " || ln -sf "$l" "$RUNLIB/$n"
	done
	export LD_LIBRARY_PATH="$RUNLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:/usr/local/cuda/lib64"
	export PATH="$B:$PATH:/usr/local/cuda/bin"
	export CACHET_CACHE_DIR=/tmp/ct-cache TMPDIR=/tmp
	mkdir -p /tmp/ct-cache
	NVCC=$(find_tool nvcc /usr/local/cuda/bin)
	SAN=$(find_tool compute-sanitizer /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer /opt/nvidia/compute-sanitizer)
	NCU=$(find_tool ncu /usr/local/cuda/bin /opt/nvidia/nsight-compute /opt/nvidia/nsight-compute/* /usr/local/cuda/nsight-compute*)
	summary=""
	echo "gpu_check run: $(date -u '+%Y-%m-%d %H:%M UTC'), budget $RUN_BUDGET s, steps: ${STEPS:-all}"
	want machine && step_machine
	want probe && step_probe
	want examples && step_examples
	want test && step_test
	want bench && step_bench
	want ncu && step_ncu
	want sanitize && step_sanitize
	want fuzz && step_fuzz
	want opencl && step_opencl
	want gen && step_gen
	echo
	echo "=================================================================== summary ($(($(date +%s) - T0)) s)"
	echo "$summary"
	echo "$summary" | grep -q 'FAILED' && return 1
	return 0
}

case "${1:-}" in
prepare)
	prepare
	;;
run)
	shift
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT"
		# the log to $OUT/gpu.log as well; the exit status is run's
		{ run "$@"; echo $? >/tmp/gc-rc; } 2>&1 | tee "$OUT/gpu.log"
		exit "$(cat /tmp/gc-rc)"
	fi
	run "$@"
	;;
*)
	echo "usage: sh scripts/gpu_check.sh prepare|run [machine probe examples test bench ncu sanitize fuzz opencl gen]" >&2
	exit 2
	;;
esac
