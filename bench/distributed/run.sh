#!/bin/sh
# run.sh: make bench-distributed: builds the hand-written MPI peers (and PETSc's DMDA peer and
# cachet's distributed kernels when they are there), runs each on 2 and 4 ranks at the same sizes,
# verifies each result against a serial reference and prints one table (bench/distributed/README.md).
#
# Usage: sh bench/distributed/run.sh [BUILD]   (BUILD: the build folder with cachet, default build)
# Environment: RANKS="2 4", STENCIL_SIZES="2048 4096", GEMM_SIZES="1024", STENCIL_REPS=20,
# GEMM_REPS=3, PANEL=128 (SUMMA's k panel of the peers), RUN_TIMEOUT=300 (seconds per mpirun),
# CACHET=path of the CLI.
set -u
BUILD=${1:-build}
HERE=$(dirname "$0")
OUT=$BUILD/bench/distributed
CACHET=${CACHET:-$BUILD/cachet}
RANKS=${RANKS:-2 4}
STENCIL_SIZES=${STENCIL_SIZES:-2048 4096}
GEMM_SIZES=${GEMM_SIZES:-1024}
STENCIL_REPS=${STENCIL_REPS:-20}
GEMM_REPS=${GEMM_REPS:-3}
PANEL=${PANEL:-128}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
MPICC=${MPICC:-mpicc}
CFLAGS="-O3 -march=native -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror" # _GNU_SOURCE: bench_util.h (clock_gettime, setenv)

command -v "$MPICC" >/dev/null && command -v mpirun >/dev/null || {
	echo "bench-distributed: needs Open MPI (mpicc, mpirun: make deps installs openmpi-bin, libopenmpi-dev)" >&2
	exit 2
}
mkdir -p "$OUT" || exit 1
ROWS=$OUT/rows.txt
LOG=$OUT/log.txt
: >"$ROWS"
: >"$LOG"

# mpirun on a small machine: more ranks than cores, no binding (ranks share the cores), as root
# when the bench runs as root; one thread per rank (OpenBLAS, OpenMP).
LOAD=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)
MPIRUN="mpirun --oversubscribe --bind-to none -x OPENBLAS_NUM_THREADS=1 -x OMP_NUM_THREADS=1"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"

# The 2-D grid MPI_Dims_create(R, 2) picks (the peers' grid): PxQ with P >= Q, Q the largest
# divisor of R not above its square root.
dims() {
	r=$1 q=1 d=1
	while [ $((d * d)) -le "$r" ]; do
		[ $((r % d)) -eq 0 ] && q=$d
		d=$((d + 1))
	done
	echo "$((r / q))x$q"
}

build() { # build OUTPUT SOURCES/FLAGS...: one MPI program; logs and says so when it fails
	out=$1
	shift
	if ! "$MPICC" $CFLAGS -o "$OUT/$out" "$@" -lm >>"$LOG" 2>&1; then
		echo "bench-distributed: building $out failed (see $LOG)" >&2
		return 1
	fi
}

build bench_distributed "$HERE/bench_distributed.c" || exit 1
build peer_stencil "$HERE/peer_stencil.c" || exit 1
build peer_summa "$HERE/peer_summa.c" || exit 1
HAVE_BLAS=0
build peer_summa_blas -DPEER_BLAS "$HERE/peer_summa.c" -lopenblas && HAVE_BLAS=1
# OpenBLAS at its best, as every bench measures it (bench/common/openblas_best.c): the verified
# fastest kernel set, whatever OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE the environment forces
# (unset, this OpenBLAS picks a slow default here); one thread per rank
# (env's -u options first, then the assignments)
OB_SET="OPENBLAS_NUM_THREADS=1" OB_UNSET=""
OB_NOTE="the environment's kernel set (no $BUILD/bench/openblas_best: make bench-deps)"
if [ $HAVE_BLAS = 1 ] && [ -x "$BUILD/bench/openblas_best" ] && ob=$("$BUILD/bench/openblas_best" 2>/dev/null); then
	core=$(echo "$ob" | sed -n 's/^coretype //p')
	l2=$(echo "$ob" | sed -n 's/^l2 //p')
	OB_NOTE=$(echo "$ob" | sed -n 's/^note //p')
	if [ -n "$core" ] && [ "$core" != - ]; then OB_SET="$OB_SET OPENBLAS_CORETYPE=$core"; else OB_UNSET="$OB_UNSET -u OPENBLAS_CORETYPE"; fi
	if [ -n "$l2" ] && [ "$l2" != - ]; then OB_SET="$OB_SET OPENBLAS_L2_SIZE=$l2"; else OB_UNSET="$OB_UNSET -u OPENBLAS_L2_SIZE"; fi
fi
OB_ENV="$OB_UNSET $OB_SET"
HAVE_PETSC=0
if pkg-config --exists PETSc 2>/dev/null; then
	build peer_petsc $(pkg-config --cflags PETSc) "$HERE/peer_petsc.c" $(pkg-config --libs PETSc) &&
		build peer_stencil_f64 -DDIST_REAL_F64 "$HERE/peer_stencil.c" && HAVE_PETSC=1
fi

# cachet's kernels: `cachet emit --target mpi` of the kernel with the run's grid, linked with the
# driver. Unavailable (the CLI has no mpi target yet, or a kernel fails to emit or compile): the
# table says so and has the peers only.
CACHET_OK=1
CACHET_WHY=""
cachet_build() { # cachet_build KERNEL(dstencil5|dsumma) DEFINE RANKS -D ARGS...: $OUT/cachet_KERNEL_RANKS
	k=$1 def=$2 r=$3
	shift 3
	sed "s/@GRID@/$(dims "$r")/" "$HERE/$k.cachet" >"$OUT/$k.$r.cachet"
	if ! "$CACHET" emit "$OUT/$k.$r.cachet" "$@" --target mpi >"$OUT/$k.$r.c" 2>"$OUT/emit.err"; then
		cat "$OUT/emit.err" >>"$LOG"
		CACHET_OK=0
		CACHET_WHY="cachet emit $k.cachet --target mpi: $(head -n 1 "$OUT/emit.err")"
		return 1
	fi
	# the entry's signature: issue #32's (with params), else the form without them (dist_proto.h)
	form=""
	"$MPICC" -O3 -march=native -fopenmp -include "$HERE/dist_proto.h" "-DKNAME=$k" -c -o "$OUT/$k.$r.o" \
		"$OUT/$k.$r.c" >"$OUT/probe.log" 2>&1 ||
		{ form=-DDIST_GLOBAL_NO_PARAMS && "$MPICC" -O3 -march=native -fopenmp -include "$HERE/dist_proto.h" \
			"-DKNAME=$k" $form -c -o "$OUT/$k.$r.o" "$OUT/$k.$r.c" >>"$LOG" 2>&1; } &&
		"$MPICC" $CFLAGS -fopenmp "-D$def" $form -o "$OUT/cachet_$k.$r" "$HERE/bench_distributed.c" "$OUT/$k.$r.o" \
			-lm >>"$LOG" 2>&1 || {
		CACHET_OK=0
		CACHET_WHY="compiling cachet's $k for $r ranks failed (see $LOG)"
		return 1
	}
}
[ -x "$CACHET" ] || {
	CACHET_OK=0
	CACHET_WHY="no cachet CLI at $CACHET"
}

run() { # run IMPL KERNEL SIZE RANKS PROGRAM ARGS...: its ROW / NOTE lines into the rows file; a failed
	# or hung run (killed after RUN_TIMEOUT seconds) is a FAIL row of IMPL, KERNEL, SIZE
	impl=$1 kern=$2 size=$3 r=$4
	shift 4
	if ! timeout "$RUN_TIMEOUT" $MPIRUN -np "$r" "$@" >>"$ROWS" 2>>"$LOG"; then
		echo "bench-distributed: mpirun -np $r $* failed or timed out (see $LOG)" >&2
		echo "ROW $impl $kern $r - $size 0 0 0 0 inf FAIL" >>"$ROWS"
	fi
}

for n in $STENCIL_SIZES; do
	for r in $RANKS; do
		run peer-f32 stencil5 "${n}x$n" "$r" "$OUT/peer_stencil" "$n" "$STENCIL_REPS"
		if [ $HAVE_PETSC = 1 ]; then
			run peer-f64 stencil5 "${n}x$n" "$r" "$OUT/peer_stencil_f64" "$n" "$STENCIL_REPS"
			run petsc-dmda-f64 stencil5 "${n}x$n" "$r" "$OUT/peer_petsc" "$n" "$STENCIL_REPS"
		fi
		[ $CACHET_OK = 1 ] && cachet_build dstencil5 DIST_KERNEL_STENCIL "$r" -D "N=$n" -D "M=$n" &&
			run cachet stencil5 "${n}x$n" "$r" "$OUT/cachet_dstencil5.$r" stencil "$n" "$STENCIL_REPS"
	done
done
for n in $GEMM_SIZES; do
	for r in $RANKS; do
		run peer-ikj summa "${n}x${n}x$n" "$r" "$OUT/peer_summa" "$n" "$n" "$n" "$GEMM_REPS" "$PANEL"
		[ $HAVE_BLAS = 1 ] &&
			run peer-openblas summa "${n}x${n}x$n" "$r" env $OB_ENV "$OUT/peer_summa_blas" "$n" "$n" "$n" "$GEMM_REPS" "$PANEL"
		[ $CACHET_OK = 1 ] && cachet_build dsumma DIST_KERNEL_SUMMA "$r" -D "M=$n" -D "N=$n" -D "K=$n" &&
			run cachet summa "${n}x${n}x$n" "$r" "$OUT/cachet_dsumma.$r" summa "$n" "$n" "$n" "$GEMM_REPS"
	done
done

echo "distributed kernels over MPI ranks on one machine (issue #32): halo exchange / panel broadcast vs compute per call"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before the runs: $LOAD (other jobs on these cores make the times noisy)"
echo "mpi: $(mpirun --version 2>/dev/null | head -n 1); $($MPICC --version | head -n 1) -O3 -march=native; one thread per rank, ranks oversubscribe the cores"
echo "stencil: ${STENCIL_REPS} Jacobi calls timed (after 1 untimed); gemm: ${GEMM_REPS} calls of C += A*B timed, peers' k panel ${PANEL}"
echo "times: ms per call, max over ranks (exch and comp each maxed separately); ratio: total / the hand-written peer's total"
echo "of the same kernel, element type, ranks and size (stencil5: peer-f32, or peer-f64 for PETSc; summa: peer-ikj);"
echo "err: max |result - reference| / max |reference| (the serial stencil; f64 gemm), ok <= 1e-3"
[ $HAVE_BLAS = 1 ] || echo "peer-openblas: not built (libopenblas-dev missing: make bench-deps)"
[ $HAVE_BLAS = 1 ] && echo "peer-openblas: $OB_NOTE"
[ $HAVE_PETSC = 1 ] || echo "petsc-dmda-f64: not built (PETSc missing: apt-get install libpetsc-real3.18-dev)"
echo
"$OUT/bench_distributed" table "$ROWS"
status=$?
[ $CACHET_OK = 1 ] || echo "cachet: distributed kernels not available yet ($CACHET_WHY)"
exit $status
