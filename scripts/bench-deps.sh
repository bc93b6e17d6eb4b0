#!/bin/sh
# bench-deps.sh: install the Debian packages the benchmarks compare against (OpenBLAS, libxsmm, CLBlast and its tuners, clang with Polly, Halide, PETSc) when missing.
set -e
PKGS="libopenblas-dev libclblast-dev clblast-utils python3-threadpoolctl"
# bench-poly's Polly peer: a clang with LLVM's Polly plugin (llvm-N-linker-tools ships LLVMPolly.so)
# and its OpenMP runtime (for -polly-parallel); the first LLVM version the release packages
for v in 14 15 16; do
	if apt-cache policy "clang-$v" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		PKGS="$PKGS clang-$v llvm-$v-linker-tools libomp-$v-dev"
		break
	fi
done
# bench-poly's Halide peer: Halide 14 and its autoscheduler plugins (Debian 12)
if apt-cache policy libhalide14-0-dev 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	PKGS="$PKGS libhalide14-0-dev"
fi
# bench-distributed's PETSc DMDA peer (f64 only in Debian) and Open MPI
if apt-cache policy libpetsc-real3.18-dev 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	PKGS="$PKGS libpetsc-real3.18-dev"
fi
# libxsmm is only packaged for some architectures and releases
if apt-cache policy libxsmm-dev 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	PKGS="$PKGS libxsmm-dev"
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "bench-deps: installing missing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "bench-deps: run 'make bench-deps' as root (or install:$missing)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends $missing >/dev/null
