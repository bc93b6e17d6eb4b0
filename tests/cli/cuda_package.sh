#!/bin/sh
# cuda_package.sh: `cachet build` on plan(target=cuda) kernels (docs/CUDA.md, "Packages"): every file of the
# package is there, the wrapper compiles under the strict flags with no CUDA header or library, the embedded
# cubin is an ELF for sm_90a and the PTX assembles and names the kernel, and programs that link the package
# (examples/cuda_package.c among them) exit 2 with "no NVIDIA driver" where there is none, or, on a machine
# with an NVIDIA GPU and driver, run the kernel and match a reference computed on the host.
# Packages are made twice: with `cachet build` (the CUDA generator's kernels) and through the package's inner
# entry with hand-written kernels (tests/cli/cuda_package/: the wrapper checked apart from the generator).
# The GPU runs count as skipped, with the reason, where there is no GPU. Prints "N passed, M failed, K skipped".
# On a GPU machine with our build tools: the same command. On one without them (scripts/gpu_check.sh's):
#   here:  CUDA_PKG_KEEP=DIR sh tests/cli/cuda_package.sh    (keeps the GPU runs' programs in DIR)
#   there: sh tests/cli/cuda_package.sh --run-kept DIR       (runs them: "N passed, M failed, K skipped")
. tests/cli/lib/expect.sh
B=${CACHET_BUILD:-build}
D=tests/cli/cuda_package
SANFL=""
[ "${SAN:-}" = 1 ] && SANFL="-fsanitize=address,undefined"
LIBS="$SANFL $B/libcachet.a $(pkg-config --libs libxxhash hwloc sqlite3 jansson isl 2>/dev/null || echo -lxxhash -lhwloc -lsqlite3 -ljansson -lisl -lgmp) -lm -ldl -lpthread"
# the Makefile's warning set
STRICT="-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -Wno-sign-conversion
	-Wpointer-arith -Wcast-qual -Wwrite-strings -Wundef -Wvla -Werror"

NVCC=${CACHET_NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || NVCC=$(command -v nvcc || echo none)
PTXAS=$(dirname "$NVCC")/ptxas
CUOBJDUMP=$(dirname "$NVCC")/cuobjdump
# a GPU here: the NVIDIA driver's library is installed (or CACHET_TEST_GPU=1 says so)
gpu=${CACHET_TEST_GPU:-}
if [ -z "$gpu" ]; then
	gpu=0
	ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && gpu=1
fi

# run_pkg NAME PATTERN PROGRAM ARGS...: without a driver, exit 2 naming it; with a GPU, exit 0 and PATTERN.
# With CUDA_PKG_KEEP=DIR the program is also kept in DIR for --run-kept.
keep_n=0
run_pkg() {
	rn=$1 rpat=$2
	shift 2
	if [ -n "${CUDA_PKG_KEEP:-}" ] && [ -x "$1" ]; then
		keep_n=$((keep_n + 1))
		mkdir -p "$CUDA_PKG_KEEP/lib" && cp "$1" "$CUDA_PKG_KEEP/prog$keep_n"
		kp=$1
		shift
		echo "$rn|$rpat|prog$keep_n|$*" >>"$CUDA_PKG_KEEP/kept.txt"
		set -- "$kp" "$@"
	fi
	if [ "$gpu" = 1 ]; then
		"$@" >"$tmp/o" 2>"$tmp/e"
		rrc=$?
		if [ "$rrc" = 2 ]; then
			skip "$rn on the GPU: $(head -1 "$tmp/e")"
		elif [ "$rrc" = 0 ] && grep -qE -- "$rpat" "$tmp/o"; then
			ok
			echo "ok   $rn on the GPU: $(head -1 "$tmp/o")"
		else
			bad "$rn on the GPU: exit $rrc"
			head -5 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
		fi
	else
		expect "$rn without a driver: exit 2, 'no NVIDIA driver'" 2 "no NVIDIA driver: libcuda.so.1 cannot be loaded" "$@"
		skip "$rn on a GPU: no NVIDIA driver here (libcuda.so.1)"
	fi
}

# --run-kept DIR: on a machine with a GPU and none of the build tools (scripts/gpu_check.sh's), run the
# programs a run with CUDA_PKG_KEEP=DIR kept, as the GPU runs above
if [ "${1:-}" = --run-kept ]; then
	K=$2
	gpu=1
	if [ ! -f "$K/kept.txt" ]; then
		bad "no programs kept in $K (run CUDA_PKG_KEEP=$K sh tests/cli/cuda_package.sh where they are built)"
	else
		while IFS='|' read -r kn kpat kprog kargs; do
			# shellcheck disable=SC2086
			run_pkg "$kn" "$kpat" env LD_LIBRARY_PATH="$K/lib" "$K/$kprog" $kargs
		done <"$K/kept.txt"
	fi
	counts
	[ "$fail" = 0 ]
	exit
fi
if [ ! -x "$NVCC" ]; then
	skip "every check: no nvcc (CUDA packages need it, docs/CUDA.md)"
	counts
	exit 0
fi
if [ -n "${CUDA_PKG_KEEP:-}" ]; then
	mkdir -p "$CUDA_PKG_KEEP/lib" && rm -f "$CUDA_PKG_KEEP/kept.txt" "$CUDA_PKG_KEEP"/prog* "$CUDA_PKG_KEEP"/lib/lib*.so
fi

# check_files DIR NAME FN [PTX_ARCH]: the files, the strict compile, no CUDA library, the cubin and the PTX
check_files() {
	cd_=$1 cn=$2 cfn=$3 cwant=${4:-75}
	for pf in "$cn.cu" "$cn.h" "$cn.c" "lib$cn.a" "lib$cn.so"; do
		[ -s "$cd_/$pf" ] && ok || bad "$cn: package file $pf missing"
	done
	for c in cc clang; do
		command -v $c >/dev/null 2>&1 || continue
		$c $STRICT -I"$cd_" -c "$cd_/$cn.c" -o "$tmp/strict.o" 2>"$tmp/cc.err" && ok ||
			{ bad "$cn: $cn.c does not compile under the strict flags ($c)"; head -20 "$tmp/cc.err" >&2; }
	done
	# -pedantic too, less its limit on string literals (ISO C's 4095 bytes: the source and PTX are longer)
	cc $STRICT -pedantic -Wno-overlength-strings -I"$cd_" -c "$cd_/$cn.c" -o "$tmp/strict.o" 2>"$tmp/cc.err" && ok ||
		{ bad "$cn: $cn.c does not compile with -pedantic"; head -20 "$tmp/cc.err" >&2; }
	if command -v c++ >/dev/null 2>&1; then
		printf '#include "%s.h"\nint main() { return 0; }\n' "$cn" >"$tmp/hpp.cc"
		c++ -Wall -Wextra -Werror -I"$cd_" -fsyntax-only "$tmp/hpp.cc" 2>"$tmp/cc.err" && ok ||
			{ bad "$cn: $cn.h does not compile as C++"; head -5 "$tmp/cc.err" >&2; }
	fi
	if command -v readelf >/dev/null 2>&1; then
		readelf -d "$cd_/lib$cn.so" | grep NEEDED | grep -qiE 'cuda|nvrtc' && bad "$cn: lib$cn.so needs a CUDA library" || ok
	fi
	grep -q "$cfn" "$cd_/$cn.cu" && ok || bad "$cn: $cn.cu lacks the kernel $cfn"
	cc -std=c11 -I"$cd_" -DPKG_HEADER="\"$cn.h\"" -DKNAME="$cn" $D/dump.c "$cd_/lib$cn.a" -ldl -o "$tmp/dump" &&
		"$tmp/dump" "$tmp/$cn.cubin" "$tmp/$cn.ptx" "$tmp/$cn.src" >/dev/null && ok || { bad "$cn: cannot dump the embedded code"; return; }
	cmp -s "$tmp/$cn.src" "$cd_/$cn.cu" && ok || bad "$cn: the embedded source is not $cn.cu byte for byte"
	# ELF64, little-endian, e_machine 190 (EM_CUDA), the SM version 90 in e_flags, the note naming sm_90a
	hdr=$(od -An -tu1 -N52 "$tmp/$cn.cubin" | tr -s ' \n' ' ')
	set -- $hdr
	[ "$1 $2 $3 $4 $5 $6" = "127 69 76 70 2 1" ] && ok || bad "$cn: the cubin is not an ELF64 image ($hdr)"
	[ "${19} ${20}" = "190 0" ] && ok || bad "$cn: the cubin's machine is not EM_CUDA (${19} ${20})"
	[ "${50}" = 90 ] && ok || bad "$cn: the cubin is not for SM 90 (e_flags byte ${50})"
	grep -aq -- "-arch sm_90a" "$tmp/$cn.cubin" && ok || bad "$cn: the cubin was not built for sm_90a"
	grep -aq "$cfn" "$tmp/$cn.cubin" && ok || bad "$cn: the cubin lacks the kernel $cfn"
	if [ -x "$CUOBJDUMP" ]; then
		"$CUOBJDUMP" -elf "$tmp/$cn.cubin" 2>&1 | grep -q "sm_90a" && ok || bad "$cn: cuobjdump does not see sm_90a"
	fi
	grep -q "^\.visible \.entry $cfn(" "$tmp/$cn.ptx" && ok || bad "$cn: the PTX does not name the kernel $cfn"
	# the PTX is for the lowest architecture the kernel compiles for (compute_75 unless it needs more) and
	# assembles for it and for the newer ones
	ptarget=$(sed -n 's/^\.target sm_\([0-9a-z]*\)$/\1/p' "$tmp/$cn.ptx")
	pnum=$(echo "$ptarget" | tr -d a-z)
	grep -q "^const int cachet_${cn}_cu_ptx_arch = ${pnum:-none};" "$cd_/$cn.c" && ok ||
		bad "$cn: the wrapper's PTX architecture is not the PTX's (.target sm_$ptarget)"
	[ "$cwant" = any ] || { [ "$cwant" = "$ptarget" ] && ok || bad "$cn: the PTX is for sm_$ptarget, want sm_$cwant"; }
	if [ -x "$PTXAS" ]; then
		archs="75 80 89 90"
		[ "$ptarget" = "$pnum" ] || archs=$ptarget # compute_XXa: that architecture only
		for a in $archs; do
			[ "$ptarget" != "$pnum" ] || [ "$a" -ge "${pnum:-0}" ] || continue
			"$PTXAS" -arch=sm_$a "$tmp/$cn.ptx" -o "$tmp/ptx.cubin" 2>"$tmp/cc.err" && ok ||
				{ bad "$cn: the PTX does not assemble for sm_$a"; head -5 "$tmp/cc.err" >&2; }
		done
	fi
}

# check_axpy DIR NAME: the runtime-size program, static and shared
check_axpy() {
	ad=$1 an=$2
	cc -std=c11 -I"$ad" -DPKG_HEADER="\"$an.h\"" -DKNAME="$an" $D/check_axpy.c "$ad/lib$an.a" -ldl -lm \
		-o "$tmp/$an.static" 2>"$tmp/cc.err" && ok || { bad "$an: the check does not link the static library"; head -5 "$tmp/cc.err" >&2; }
	cc -std=c11 -I"$ad" -DPKG_HEADER="\"$an.h\"" -DKNAME="$an" $D/check_axpy.c -L"$ad" -l"$an" -Wl,-rpath,"$ad" -lm \
		-o "$tmp/$an.shared" 2>"$tmp/cc.err" && ok || { bad "$an: the check does not link the shared library"; head -5 "$tmp/cc.err" >&2; }
	[ -n "${CUDA_PKG_KEEP:-}" ] && cp "$ad/lib$an.so" "$CUDA_PKG_KEEP/lib/"
	run_pkg "$an (static; _run, then _launch on device pointers)" "launch on device pointers: right" "$tmp/$an.static" 1001 launch
	run_pkg "$an (shared, L = 100000)" "all 100000 elements right" "$tmp/$an.shared" 100000
}

# check_example DIR: examples/cuda_package.c as its comment builds it
check_example() {
	cc -std=c11 -I"$1" examples/cuda_package.c "$1/libmatmul_cuda.a" -ldl -lm -o "$tmp/example" 2>"$tmp/cc.err" && ok ||
		{ bad "examples/cuda_package.c does not compile"; head -20 "$tmp/cc.err" >&2; }
	run_pkg "examples/cuda_package.c ($2)" "all 1184 elements right" "$tmp/example"
}

# ---- 1. the wrapper with hand-written kernels (the package's inner entry, cudapkg_write)
cc -std=c11 -Iinclude -Isrc -D_GNU_SOURCE $D/seam.c $LIBS -o "$tmp/seam" 2>"$tmp/cc.err" && ok ||
	{ bad "the seam driver does not compile"; head -20 "$tmp/cc.err" >&2; }
# a fake libcuda.so.1 (tests/cli/cuda_package/fakecuda.c), and one too old
mkdir -p "$tmp/fake" "$tmp/fakeold"
cc -std=c11 -shared -fPIC -Wl,-soname,libcuda.so.1 $D/fakecuda.c -o "$tmp/fake/libcuda.so.1" &&
	cc -std=c11 -shared -fPIC -DFAKECUDA_OLD -Wl,-soname,libcuda.so.1 $D/fakecuda.c -o "$tmp/fakeold/libcuda.so.1" &&
	ok || bad "the fake driver does not compile"
# the same kernel as an OpenCL plan: it parses without the CUDA generator (the seam does not read its plan)
sed 's/target=cuda/target=opencl/; s/location=shared/location=local/' tests/plans/cuda/package_matmul.cachet >"$tmp/mm.cachet"
expect "seam: matmul_cuda package" 0 "wrote .*libmatmul_cuda.so" "$tmp/seam" "$tmp/mm.cachet" $D/matmul_cuda.cu \
	"$tmp/seam_mm" cachet_matmul_cuda 1 i/ii:8 j/jj:8
check_files "$tmp/seam_mm" matmul_cuda cachet_matmul_cuda
grep -q "int cachet_matmul_cuda_cu_run(cachet_matmul_cuda_cu \*h, const float \*A, const float \*B, float \*C);" \
	"$tmp/seam_mm/matmul_cuda.h" && ok || bad "seam: the header's run takes the host arrays"
check_example "$tmp/seam_mm" "hand-written kernel"

axpy_file() { # axpy_file NAME SCHEDULE: the runtime-size kernel (opencl plan: parses without the CUDA front end)
	kfile "$1.cachet" "kernel $1" 'param L : runtime' 'array X : f32[L] input' 'array Y : f32[L] inout' \
		'for (i: L) {' '  Y[i] = 2.5 * X[i] + Y[i]' '}' "$2" "plan(target=${3:-opencl}) {" '  parallelize(i)' '}'
}
# blocks of 16 threads (a split index), a runtime size: the grid comes from L at run time
f=$(axpy_file axpy16 'schedule { ii = split(i, 16) }')
sed 's/FN/cachet_axpy16/g; s/BLOCK/16/g' $D/axpy.cu >"$tmp/axpy16.cu"
expect "seam: axpy16 package" 0 "wrote" "$tmp/seam" "$f" "$tmp/axpy16.cu" "$tmp/seam_a16" cachet_axpy16 1 i/ii:16
check_files "$tmp/seam_a16" axpy16 cachet_axpy16
grep -q "int64_t L" "$tmp/seam_a16/axpy16.h" && ok || bad "seam: L is an argument of the wrapper"
check_axpy "$tmp/seam_a16" axpy16
# an unsplit index: the wrapper picks the blocks (divisors of L: 1001 = 7 x 11 x 13)
f=$(axpy_file axpyany '')
sed 's/FN/cachet_axpyany/g; s/BLOCK/0/g' $D/axpy.cu >"$tmp/axpyany.cu"
expect "seam: axpyany package" 0 "wrote" "$tmp/seam" "$f" "$tmp/axpyany.cu" "$tmp/seam_any" cachet_axpyany 0 i:1
grep -q "ct_shape(h, ct_g, ct_l, 0," "$tmp/seam_any/axpyany.c" && ok || bad "seam: axpyany's blocks are not picked"
check_axpy "$tmp/seam_any" axpyany
# 56 KiB of static shared memory: past the 48 KiB of every generic architecture, only sm_90a's ptxas takes
# it, so the PTX is for compute_90a, and any other device is told so
sed 's/FN/cachet_axpy16/g; s/BLOCK/16/g; s/if (i < L)/__shared__ float big[14336]; big[i % 14336] = X[i]; __syncthreads(); if (i < L \&\& big[i % 14336] == X[i])/' \
	$D/axpy.cu >"$tmp/big.cu"
f=$(axpy_file axpy16 'schedule { ii = split(i, 16) }')
expect "seam: a kernel that needs sm_90a's shared memory" 0 "wrote" "$tmp/seam" "$f" "$tmp/big.cu" "$tmp/seam_big" \
	cachet_axpy16 1 i/ii:16
check_files "$tmp/seam_big" axpy16 cachet_axpy16 90a
cc -std=c11 -I"$tmp/seam_big" -DPKG_HEADER='"axpy16.h"' -DKNAME=axpy16 $D/check_axpy.c "$tmp/seam_big/libaxpy16.a" -ldl -lm \
	-o "$tmp/big" && ok || bad "big: the check does not link"
for cc in 80 100; do
	expect "fake driver: sm_$cc and a kernel for sm_90a only" 1 \
		"its PTX needs compute capability 9.0 exactly .*; the device is Fake GPU \\(compute capability $((cc / 10)).0\\)" \
		env LD_LIBRARY_PATH="$tmp/fake" FAKECUDA_CC=$cc "$tmp/big" 1001
done
expect "fake driver: sm_90: the cubin" 0 "all 1001 elements right" env LD_LIBRARY_PATH="$tmp/fake" "$tmp/big" 1001
# a kernel nvcc refuses: CT_ERR_COMPILE with nvcc's message, no package
printf 'extern "C" __global__ void cachet_axpy16(float *X) { no_such_thing; }\n' >"$tmp/bad.cu"
f=$(axpy_file axpy16 'schedule { ii = split(i, 16) }')
expect "seam: nvcc's error is reported" 1 "nvcc --cubin -arch=sm_90a failed.*|no_such_thing" "$tmp/seam" "$f" \
	"$tmp/bad.cu" "$tmp/seam_bad" cachet_axpy16 1 i/ii:16
[ ! -e "$tmp/seam_bad/libaxpy16.so" ] && ok || bad "seam: a library after nvcc failed"
# no nvcc: refused with a clear error
expect "seam: no nvcc, a clear error" 1 "needs nvcc.*CACHET_NVCC" env CACHET_NVCC=/nonexistent/nvcc \
	"$tmp/seam" "$f" "$tmp/axpy16.cu" "$tmp/seam_nonvcc" cachet_axpy16 1 i/ii:16

# ---- 1b. the wrapper's driver calls, on a fake libcuda.so.1 (tests/cli/cuda_package/fakecuda.c): which code
# it loads, the grid, the data path, the messages of each failure, nothing left allocated or pushed
# fake NAME EXIT PATTERN VAR=VALUE... PROGRAM ARGS: PROGRAM on the fake driver
fake() {
	fk=$1 fw=$2 fp=$3
	shift 3
	expect "fake driver: $fk" "$fw" "$fp" env LD_LIBRARY_PATH="$tmp/fake" "$@"
}
has() { # has WHAT PATTERN: the last fake run's output has PATTERN
	grep -qE -- "$2" "$tmp/o" "$tmp/e" && ok || { bad "fake driver: $1: no /$2/"; head -8 "$tmp/o" "$tmp/e" >&2; }
}
fake "axpy16 on sm_90: the cubin" 0 "all 1001 elements right" FAKECUDA_CC=90 "$tmp/axpy16.static" 1001
has "axpy16 on sm_90" "fake: load cubin"
has "axpy16: blocks of 16, ceil(1001 / 16) of them" "fake: launch grid 63 x 1 x 1 block 16 x 1 x 1"
has "axpy16: the function" "fake: function cachet_axpy16"
has "axpy16: all freed, contexts popped" "fake: released; 0 arrays live, push depth 0"
fake "axpy16: _launch on the program's device pointers" 0 "launch on device pointers: right" "$tmp/axpy16.static" 1001 launch
fake "axpyany: _launch on the program's device pointers" 0 "launch on device pointers: right" "$tmp/axpyany.shared" 999 launch
has "axpyany: _launch's blocks (999 = 9 x 111)" "fake: launch grid 9 x 1 x 1 block 111 x 1 x 1"
fake "axpy16 on sm_80: the PTX" 0 "Fake GPU \\(compute capability 8.0\\), PTX" FAKECUDA_CC=80 "$tmp/axpy16.shared" 1001
has "axpy16 on sm_80" "fake: load ptx"
fake "a refused cubin: the PTX" 0 "all 1001 elements right" FAKECUDA_REFUSE_CUBIN=1 "$tmp/axpy16.static" 1001
has "a refused cubin" "fake: load ptx"
fake "a device older than the PTX" 1 "its PTX needs compute capability 7.5 or newer; the device is Fake GPU \\(compute capability 6.1\\)" \
	FAKECUDA_CC=61 "$tmp/axpy16.static" 1001
fake "a PTX the driver refuses: its error and log" 1 "CUDA_ERROR_UNSUPPORTED_PTX_VERSION.*log: ptxas fatal: the fake driver's log.*newer driver" \
	FAKECUDA_CC=80 FAKECUDA_REFUSE_PTX=1 "$tmp/axpy16.static" 1001
fake "no device: exit 2" 2 "the NVIDIA driver sees no CUDA device" FAKECUDA_DEVICES=0 "$tmp/axpy16.static" 1001
fake "device memory short" 1 "cuMemAlloc of 4004 bytes for array X failed: CUDA_ERROR_OUT_OF_MEMORY" FAKECUDA_FAIL_ALLOC=1 \
	"$tmp/axpy16.static" 1001
has "device memory short: nothing left" "fake: released; 0 arrays live, push depth 0"
fake "a fault in the kernel" 1 "the kernel \\(cuStreamSynchronize\\) failed: CUDA_ERROR_ILLEGAL_ADDRESS" FAKECUDA_FAULT=1 \
	"$tmp/axpy16.static" 1001
has "a fault: nothing left" "fake: released; 0 arrays live, push depth 0"
fake "blocks past the kernel's limit" 1 "blocks of 16 x 1 x 1 threads; Fake GPU .* allows 8 for this kernel" FAKECUDA_MAX_THREADS=8 \
	"$tmp/axpy16.static" 1001
fake "picked blocks: 1001 = 7 x 143" 0 "all 1001 elements right" "$tmp/axpyany.static" 1001
has "picked blocks" "fake: launch grid 7 x 1 x 1 block 143 x 1 x 1"
fake "picked blocks within the kernel's limit" 0 "all 1001 elements right" FAKECUDA_MAX_THREADS=64 "$tmp/axpyany.static" 1001
has "picked blocks within the limit" "fake: launch grid 77 x 1 x 1 block 13 x 1 x 1"
fake "picked blocks, L = 100000" 0 "all 100000 elements right" "$tmp/axpyany.shared" 100000
has "picked blocks, L = 100000" "fake: launch grid 400 x 1 x 1 block 250 x 1 x 1"
fake "the example's grid (8 x 8 blocks over 37 x 32)" 1 "" "$tmp/example"
has "the example's grid" "fake: launch grid 5 x 4 x 1 block 8 x 8 x 1"
# the wrapper under AddressSanitizer and UBSan: no error and no leak on success, on each failure, without a driver
if cc -std=c11 -g -fsanitize=address,undefined -fno-sanitize-recover=all -I"$tmp/seam_a16" -DPKG_HEADER='"axpy16.h"' \
	-DKNAME=axpy16 $D/check_axpy.c "$tmp/seam_a16/axpy16.c" -ldl -lm -o "$tmp/asan" 2>"$tmp/cc.err"; then
	for mode in "OK=1|0" "FAKECUDA_CC=80|0" "FAKECUDA_CC=61|1" "FAKECUDA_REFUSE_PTX=1 FAKECUDA_CC=80|1" "FAKECUDA_FAIL_ALLOC=1|1" \
		"FAKECUDA_FAULT=1|1" "FAKECUDA_DEVICES=0|2"; do
		menv=${mode%|*} mrc=${mode#*|}
		# shellcheck disable=SC2086
		env LD_LIBRARY_PATH="$tmp/fake" ASAN_OPTIONS=detect_leaks=1 $menv "$tmp/asan" 1001 launch >"$tmp/o" 2>&1
		rc=$?
		[ "$rc" = "$mrc" ] && ! grep -q Sanitizer "$tmp/o" && ok ||
			{ bad "sanitizers, fake driver, $menv: exit $rc (want $mrc)"; grep -A5 Sanitizer "$tmp/o" | head -12 >&2; }
	done
	if [ "$gpu" = 0 ]; then
		"$tmp/asan" 10 >"$tmp/o" 2>&1
		rc=$?
		[ "$rc" = 2 ] && ! grep -q Sanitizer "$tmp/o" && ok || bad "sanitizers, no driver: exit $rc"
	fi
else
	skip "the wrapper under the sanitizers: cc cannot build with -fsanitize=address,undefined ($(head -1 "$tmp/cc.err"))"
fi
expect "fake driver: a driver too old (no driver: exit 2)" 2 "libcuda.so.1 has no cuLaunchKernel \\(a driver too old\\)" \
	env LD_LIBRARY_PATH="$tmp/fakeold" "$tmp/axpy16.static" 1001

# ---- 2. `cachet build` with the CUDA generator
kfn() { # the kernel function a wrapper loads
	sed -n 's/^static const char ct_kernel_fn\[\] = "\(.*\)";$/\1/p' "$1"
}
if "$CACHET" emit --target cuda tests/plans/cuda/package_matmul.cachet >"$tmp/emit.cu" 2>"$tmp/emit.err"; then
	expect "build: matmul_cuda" 0 "wrote .*libmatmul_cuda.so" "$CACHET" build tests/plans/cuda/package_matmul.cachet \
		-o "$tmp/mm"
	fn=$(kfn "$tmp/mm/matmul_cuda.c")
	check_files "$tmp/mm" matmul_cuda "${fn:-cachet_matmul_cuda}"
	cmp -s "$tmp/emit.cu" "$tmp/mm/matmul_cuda.cu" && ok || bad "build: matmul_cuda.cu is not what emit --target cuda prints"
	check_example "$tmp/mm" "generated kernel"
	fake "the generated example's grid" 1 "" "$tmp/example"
	has "the generated example's grid" "fake: launch grid 5 x 4 x 1 block 8 x 8 x 1"
	has "the generated example's kernel" "fake: function $fn"
	f=$(axpy_file axpy 'schedule { ii = split(i, 32) }' cuda)
	expect "build: axpy (runtime size)" 0 "wrote .*libaxpy.so" "$CACHET" build "$f" -o "$tmp/axpy"
	fn=$(kfn "$tmp/axpy/axpy.c")
	check_files "$tmp/axpy" axpy "${fn:-cachet_axpy}"
	check_axpy "$tmp/axpy" axpy
	fake "generated axpy: the data path" 0 "all 1001 elements right" "$tmp/axpy.static" 1001
	has "generated axpy: blocks of 32" "fake: launch grid 32 x 1 x 1 block 32 x 1 x 1"
	f=$(axpy_file axpyg '' cuda)
	expect "build: axpyg (unsplit: blocks picked)" 0 "wrote .*libaxpyg.so" "$CACHET" build "$f" -o "$tmp/axpyg"
	check_axpy "$tmp/axpyg" axpyg
	fake "generated axpyg: the data path" 0 "all 1001 elements right" "$tmp/axpyg.static" 1001
	has "generated axpyg: blocks picked" "fake: launch grid 7 x 1 x 1 block 143 x 1 x 1"
	# a kernel file named like the package's NAME.cu is not replaced by it
	mkdir -p "$tmp/self" && cp tests/plans/cuda/package_matmul.cachet "$tmp/self/matmul_cuda.cu"
	expect "build: the kernel file is DIR/NAME.cu (exit 2)" 2 "the package file .*matmul_cuda.cu is the kernel file itself" \
		"$CACHET" build "$tmp/self/matmul_cuda.cu" -o "$tmp/self"
	cmp -s tests/plans/cuda/package_matmul.cachet "$tmp/self/matmul_cuda.cu" && ok || bad "build: the kernel file was replaced"
	# the Python package's build() (the library's ct_kernel_build) names the CUDA source among the files
	PY=${PYTHON:-/usr/bin/python3}
	if [ "${SAN:-}" != 1 ] && [ -d "$B/python/cachet" ] && "$PY" -c 'import numpy, cffi' 2>/dev/null; then
		PYTHONPATH="$B/python" PYTHONDONTWRITEBYTECODE=1 "$PY" -c '
import sys, cachet
k = cachet.Kernel(open(sys.argv[1]).read())
files = k.build(sys.argv[2])
print(sorted(files))
assert files["cuda"].endswith("matmul_cuda.cu") and files["static"].endswith("libmatmul_cuda.a"), files
' tests/plans/cuda/package_matmul.cachet "$tmp/py" >"$tmp/py.out" 2>&1 && ok ||
			{ bad "python: build() of a CUDA kernel"; head -5 "$tmp/py.out" >&2; }
	else
		skip "python: build() of a CUDA kernel (no $B/python, numpy or cffi, or a sanitizer build)"
	fi
	# every CUDA example packages (its kernels compiled by nvcc into the cubin and the PTX)
	for ex in examples/cuda_*.cachet; do
		[ -f "$ex" ] || continue
		en=$(sed -n 's/^kernel \([A-Za-z0-9_]*\).*/\1/p' "$ex" | head -1)
		defs=$(grep -m1 '^# run-with:' "$ex" | sed 's/^# run-with://')
		# shellcheck disable=SC2086
		expect "build: $ex" 0 "wrote .*lib$en.so" "$CACHET" build "$ex" $defs -o "$tmp/ex_$en"
		check_files "$tmp/ex_$en" "$en" "$(kfn "$tmp/ex_$en/$en.c")" any
	done
	expect "build: no nvcc, a clear error (exit 2)" 2 "needs nvcc" env CACHET_NVCC=/nonexistent/nvcc "$CACHET" build "$f" \
		-o "$tmp/nonvcc"
else
	skip "cachet build on plan(target=cuda): no CUDA generator in this build ($(head -1 "$tmp/emit.err"))"
fi

counts
[ "$fail" = 0 ]
