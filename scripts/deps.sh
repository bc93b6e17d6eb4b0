#!/bin/sh
# deps.sh: install the Debian packages cachet needs when any is missing (run as root); PoCL (pocl-opencl-icd) is the OpenCL device the OpenCL tests run on; python3-numpy, -cffi and -pytest are what the Python package (make python) and its tests need (python3-venv, -pip and -setuptools: its documented installs); gnuplot-nox draws `cachet report`'s plots; libisl-dev is the integer set library of the exact dependence test of schedules (src/ir/deps.c); openmpi-bin and libopenmpi-dev are the MPI of distributed kernels (distribute(), cachet run --ranks: mpicc, mpirun).
set -e
PKGS="gcc make libc6-dev pkg-config libxxhash-dev libhwloc-dev libsqlite3-dev libjansson-dev libisl-dev clang ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd python3 python3-numpy python3-cffi python3-pytest python3-setuptools python3-pip python3-venv gnuplot-nox openmpi-bin libopenmpi-dev"
# --test (make check): also what only the test suite needs: chromium, the headless browser that
# tests/cli/report.sh draws `cachet report`'s page in (the test says SKIP, with why, without it)
TEST=0
[ "${1:-}" = --test ] && TEST=1 && PKGS="$PKGS chromium"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing missing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: run 'make deps' as root (or install:$missing)" >&2
	[ "$TEST" = 1 ] && exit 0 # the tests that need them say SKIP
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends $missing >/dev/null
