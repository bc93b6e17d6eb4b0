#!/bin/sh
# distributed.sh: distribute() kernels on 1-4 MPI ranks (loopback, bounded time): the examples verify on every grid, equal the single-process run bit for bit where no sum is split, send the halo bytes worked out by hand, refuse what cannot be distributed, fail (never hang) when a rank fails, and a Jacobi step called repeatedly on each rank's own blocks equals a serial loop.
. tests/cli/lib/expect.sh
# every run is bounded twice: cachet kills mpirun at CACHET_MPI_TIMEOUT, timeout kills cachet
export CACHET_MPI_TIMEOUT=${CACHET_MPI_TIMEOUT:-120}
T="timeout 180"
D=tests/cli/dist
# the flags `cachet run --ranks` and the native engine compile with
CFLAGS_RUN="-O3 -march=native -fopenmp"

have_mpi=1
command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 || have_mpi=0
# CACHET_TEST_NO_MPI=1: behave as without Open MPI (to see the skips on a machine that has it)
[ "${CACHET_TEST_NO_MPI:-0}" = 1 ] && have_mpi=0
why_skip="mpicc or mpirun missing (make deps installs openmpi-bin and libopenmpi-dev)"
# mpirun's own options for a test: as root where CI runs as root, more ranks than cores
MPIRUN="$(command -v mpirun) --oversubscribe"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
# A bit-for-bit comparison that fails for a known, documented reason (docs/DISTRIBUTED.md: the
# compiler contracts multiply-adds into fma differently in the per-rank kernel and the
# single-process one; both verify within the tolerance): counted apart, never as passed;
# "xfail WHAT" is printed. When the two codes agree the check passes and counts as passed.
xfailed=0
xfail() {
	xfailed=$((xfailed + 1))
	echo "xfail $*"
}

# seconds per part, printed (the script is one of the slow ones)
t_last=$(date +%s)
lap() {
	t_now=$(date +%s)
	echo "time: $1 $((t_now - t_last)) s"
	t_last=$t_now
}

# ---------------------------------------------------------------- runs of the examples
# run_ok NAME PATTERN FILE ARGS...: `cachet run FILE ARGS...` exits 0 and prints "verified"
# and PATTERN (empty: "verified" only)
run_ok() {
	name=$1 pat=$2 f=$3
	shift 3
	if [ "$have_mpi" = 0 ]; then
		skip "$name: $why_skip"
		return
	fi
	$T "$CACHET" run "$f" "$@" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" != 0 ] || ! grep -q 'verified against' "$tmp/o" || grep -q 'NOT verified\|not verified' "$tmp/o"; then
		bad "$name: exit $rc, want 0 and verified"
		head -12 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
		return
	fi
	if [ -n "$pat" ] && ! grep -qE -- "$pat" "$tmp/o"; then
		bad "$name: output lacks /$pat/"
		sed 's/^/    /' "$tmp/o" >&2
		return
	fi
	ok "$name"
}
# the stencils and Jacobi: no sum over ranks and no product a compiler could fuse into a
# multiply-add differently from the interpreter, so every run equals the interpreter exactly
# (4 ranks on 64 x 64 runs in the byte checks below)
EXACT='max relative error 0\)'
for n in 1 2; do
	run_ok "dist_stencil5 --ranks $n" "$EXACT" examples/dist_stencil5.cachet --ranks "$n"
done
# non-dividing extents: 3 ranks (3 x 1) over 50 rows (4 tiles, the last of 2 rows) and 70
# columns; 1 x 4 over 70 columns (5 tiles, the last of 6)
for ex in dist_stencil5 dist_stencil9 dist_stencil_w2 dist_jacobi; do
	run_ok "$ex --ranks 3 N=50 M=70" "$EXACT" "examples/$ex.cachet" --ranks 3 -D N=50 -D M=70
done
run_ok "dist_stencil9 --grid 1x4 N=37 M=70" "$EXACT" examples/dist_stencil9.cachet --ranks 4 --grid 1x4 -D N=37 -D M=70
run_ok "dist_jacobi --ranks 4" "$EXACT" examples/dist_jacobi.cachet --ranks 4
# more ranks than blocks along an axis: 32 rows are 2 tiles of 16, on 4 ranks along x; the
# last two ranks own nothing, send nothing and receive nothing
run_ok "dist_stencil5 --grid 4x1 N=32 (2 tiles, 4 ranks)" \
	"rank 3: exchange [0-9.]+ s, compute [0-9.]+ s, sent 0 bytes, received 0 bytes" \
	examples/dist_stencil5.cachet --ranks 4 --grid 4x1 -D N=32
run_ok "dist_stencil_w2 --grid 2x2 N=16 (1 row tile, 2 x 2)" "$EXACT" examples/dist_stencil_w2.cachet --ranks 4 --grid 2x2 -D N=16
# gemm on the three 4-rank grids, non-dividing sizes on 3, and 4 ranks along a 1-tile axis;
# its k loop is not distributed, but the C compiler fuses multiply-adds where the
# interpreter does not, so exactness is checked below against the single-process kernel
for g in 1x4 4x1; do
	run_ok "dist_gemm --grid $g" "grid $g" examples/dist_gemm.cachet --ranks 4 --grid "$g"
done
run_ok "dist_gemm --ranks 3 M=50 N=70 K=29" "" examples/dist_gemm.cachet --ranks 3 -D M=50 -D N=70 -D K=29
run_ok "dist_gemm --grid 4x1 M=16 (1 row tile, 4 ranks)" "" examples/dist_gemm.cachet --ranks 4 --grid 4x1 -D M=16
run_ok "dist_two_index --ranks 4" "grid 4" examples/dist_two_index.cachet --ranks 4
run_ok "dist_two_index --ranks 3 V=23 N=17" "grid 3" examples/dist_two_index.cachet --ranks 3 -D V=23 -D N=17
# the dot product: partial sums reduced; each rank adds its 8 bytes into rank 0's
run_ok "dist_dot --ranks 4" "rank 0: .* sent 0 bytes, received 24 bytes" examples/dist_dot.cachet --ranks 4
run_ok "dist_dot --ranks 3 L=1000" "rank 2: .* sent 8 bytes, received 0 bytes" examples/dist_dot.cachet --ranks 3 -D L=1000
# more ranks than blocks: 2 blocks of 64 on 3 ranks, 3 rows of B on 4 ranks; an empty rank
# still adds its partial sum (zero)
run_ok "dist_dot --ranks 3 L=100 (2 blocks)" "rank 2: .* sent 8 bytes, received 0 bytes" examples/dist_dot.cachet --ranks 3 -D L=100
run_ok "dist_two_index --ranks 4 V=3 (3 rows)" "rank 3: .* sent 0 bytes, received 0 bytes" examples/dist_two_index.cachet --ranks 4 -D V=3

lap runs
# ---------------------------------------------------------------- bytes of the halos
# (each of these runs also verifies exactly)
# bytes_are NAME "rank 0: S R" ... -- FILE ARGS...: each rank's printed sent and received bytes,
# and the run verified exactly (exact=0 bytes_are ...: verified)
bytes_are() {
	name=$1
	shift
	: >"$tmp/want"
	while [ "$1" != -- ]; do
		echo "$1" >>"$tmp/want"
		shift
	done
	shift
	if [ "$have_mpi" = 0 ]; then
		skip "$name: $why_skip"
		return
	fi
	$T "$CACHET" run "$@" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	sed -nE 's/^(rank [0-9]+): .* sent ([0-9]+) bytes, received ([0-9]+) bytes$/\1: \2 \3/p' "$tmp/o" >"$tmp/got"
	vpat="^  verified against .*$EXACT"
	[ "${exact:-1}" = 0 ] && vpat="^  verified against"
	if [ "$rc" = 0 ] && cmp -s "$tmp/want" "$tmp/got" && grep -qE "$vpat" "$tmp/o"; then
		ok "$name"
	else
		bad "$name: exit $rc (verified lines: $(grep -cE "$vpat" "$tmp/o")); bytes per rank (sent received), want then got:"
		paste "$tmp/want" "$tmp/got" | sed 's/^/    /' >&2
		head -5 "$tmp/e" | sed 's/^/    /' >&2
	fi
}
# 5-point star, f64, N=50 x M=70 on 2x2, tiles of 16: the rows are 4 tiles (16+16+16+2), cut
# 2 | 2 -> rows 0..31 and 32..49 (32 and 18 rows); the columns 5 tiles (4 x 16 + 6), cut
# 3 | 2 -> columns 0..47 and 48..69 (48 and 22 columns). Ranks in row-major grid order:
#   rank 0 (rows 0-31,  cols 0-47):  its last row to the south (48) + its last column to the
#                                    east (32) = 80 elements x 8 = 640 bytes; it receives the
#                                    same shapes back (the neighbours' first row / column)
#   rank 1 (rows 0-31,  cols 48-69): south 22 + west 32 = 54 x 8 = 432
#   rank 2 (rows 32-49, cols 0-47):  north 48 + east 18 = 66 x 8 = 528
#   rank 3 (rows 32-49, cols 48-69): north 22 + west 18 = 40 x 8 = 320
# no corners: the star never reads a diagonal neighbour
bytes_are "dist_stencil5 2x2 N=50 M=70: star halo bytes" \
	"rank 0: 640 640" "rank 1: 432 432" "rank 2: 528 528" "rank 3: 320 320" -- \
	examples/dist_stencil5.cachet --ranks 4 --grid 2x2 -D N=50 -D M=70
# 9-point box, same blocks: the star's rows and columns plus one corner element (8 bytes)
# to and from the diagonal neighbour (each rank of a 2x2 grid has exactly one)
bytes_are "dist_stencil9 2x2 N=50 M=70: box halo bytes (corners)" \
	"rank 0: 648 648" "rank 1: 440 440" "rank 2: 536 536" "rank 3: 328 328" -- \
	examples/dist_stencil9.cachet --ranks 4 --grid 2x2 -D N=50 -D M=70
# 64 x 64 on 2x2: 32 x 32 blocks. Star: one row of 32 + one column of 32 = 64 x 8 = 512;
# box: + 1 corner = 520; width-2 star: two rows + two columns = 128 x 8 = 1024
bytes_are "dist_stencil5 2x2 64x64" "rank 0: 512 512" "rank 1: 512 512" "rank 2: 512 512" "rank 3: 512 512" -- \
	examples/dist_stencil5.cachet --ranks 4
bytes_are "dist_stencil9 2x2 64x64" "rank 0: 520 520" "rank 1: 520 520" "rank 2: 520 520" "rank 3: 520 520" -- \
	examples/dist_stencil9.cachet --ranks 4
bytes_are "dist_stencil_w2 2x2 64x64 (width 2)" "rank 0: 1024 1024" "rank 1: 1024 1024" "rank 2: 1024 1024" \
	"rank 3: 1024 1024" -- examples/dist_stencil_w2.cachet --ranks 4
# width 2 on 3 x 1 (64 rows: 4 tiles cut 2 | 1 | 1 -> rows 0-31, 32-47, 48-63): two rows of
# 64 per neighbour = 1024 bytes, the middle rank has two neighbours
bytes_are "dist_stencil_w2 3x1 (width 2)" "rank 0: 1024 1024" "rank 1: 2048 2048" "rank 2: 1024 1024" -- \
	examples/dist_stencil_w2.cachet --ranks 3
# gemm on 2x2, SUMMA: K = 48 splits 24 | 24 over either axis, so two panels of k; each rank owns
# one panel of A (32 rows x 24 f64 = 6144 bytes, sent to its one row neighbour) and of B (24 x 32,
# to its column neighbour), and receives the other two: 12288 bytes out and in
exact=0 bytes_are "dist_gemm --grid 2x2: SUMMA panels" "rank 0: 12288 12288" "rank 1: 12288 12288" \
	"rank 2: 12288 12288" "rank 3: 12288 12288" -- examples/dist_gemm.cachet --ranks 4 --grid 2x2

lap bytes
# ---------------------------------------------------------------- bit for bit
# same NAME KERNEL NARR SIZES RANKS FILE ARGS...: tests/cli/dist/same_driver.c with both
# emits of FILE, on RANKS ranks: distributed == single process, every byte
same() {
	name=$1 kn=$2 narr=$3 sizes=$4 np=$5 f=$6
	shift 6
	if [ "$have_mpi" = 0 ]; then
		skip "$name: $why_skip"
		return
	fi
	: >"$tmp/e"
	# the single-process kernel does not change with the grid: one object per file and sizes
	one_key="$(grep -v distribute "$f" | cksum) $*"
	if [ "$one_key" != "${last_one_key:-}" ]; then
		last_one_key=""
		"$CACHET" emit "$f" "$@" >"$tmp/s_one.c" 2>>"$tmp/e" &&
			mpicc $CFLAGS_RUN -c "-Dcachet_$kn=ser_kernel" "-Dcachet_${kn}_entry=ser_entry" \
				-o "$tmp/s_one.o" "$tmp/s_one.c" 2>>"$tmp/e" && last_one_key=$one_key
	fi
	if [ -z "$last_one_key" ] ||
		! "$CACHET" emit "$f" --target mpi "$@" >"$tmp/s_mpi.c" 2>>"$tmp/e" ||
		! mpicc $CFLAGS_RUN -c -o "$tmp/s_mpi.o" "$tmp/s_mpi.c" 2>>"$tmp/e" ||
		! mpicc $CFLAGS_RUN -Wall -Wextra -Werror "-DKNAME=$kn" "-DNARR=$narr" "-DSIZES={$sizes}" \
			-o "$tmp/s_prog" "$D/same_driver.c" "$tmp/s_mpi.o" "$tmp/s_one.o" -lm 2>>"$tmp/e"; then
		bad "$name: building the comparison failed"
		head -10 "$tmp/e" | sed 's/^/    /' >&2
		return
	fi
	# shellcheck disable=SC2086
	$T $MPIRUN -np "$np" "$tmp/s_prog" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^identical: ' "$tmp/o"; then
		ok "$name"
	elif [ -n "${known:-}" ] && grep -q '^differ: ' "$tmp/o"; then
		xfail "$name: $(cat "$tmp/o"); $known"
	else
		bad "$name: exit $rc, the distributed result is not the single-process one"
		head -3 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
	fi
}
# grid_file FILE GRID: a copy of FILE whose distribute() is given grid=GRID
grid_file() {
	g=$tmp/$(basename "$1" .cachet)_$(echo "$2" | tr x _).cachet
	sed -E "s/^(  distribute\([^)]*)\)/\1, grid=$2)/" "$1" >"$g"
	echo "$g"
}
same "dist_stencil5 == one process, 4 ranks" dist_stencil5 2 "64*64,64*64" 4 examples/dist_stencil5.cachet
same "dist_stencil9 == one process, 3 ranks N=50 M=70" dist_stencil9 2 "50*70,50*70" 3 \
	examples/dist_stencil9.cachet -D N=50 -D M=70
same "dist_stencil_w2 == one process, 4 ranks" dist_stencil_w2 2 "64*64,64*64" 4 examples/dist_stencil_w2.cachet
for g in 1x4 2x2 4x1; do
	same "dist_gemm == one process, grid $g" dist_gemm 3 "64*48,48*64,64*64" 4 "$(grid_file examples/dist_gemm.cachet "$g")"
done
same "dist_gemm == one process, 3 ranks M=50 N=70 K=29" dist_gemm 3 "50*29,29*70,50*70" 3 \
	examples/dist_gemm.cachet -D M=50 -D N=70 -D K=29
same "dist_two_index == one process, 4 ranks" dist_two_index 5 "40*40,40*32,40*32,0,32*32" 4 \
	examples/dist_two_index.cachet
# V=23 (not a multiple of the vector width): the per-rank kernel (runtime bounds, strides from
# the call) and the single-process one are compiled with multiply-adds fused in different
# places; with -ffp-contract=off they are identical. Even --ranks 1 differs.
known="with -ffp-contract=off both are identical: fused multiply-adds differ between the two codes"
same "dist_two_index == one process, 3 ranks V=23" dist_two_index 5 "40*40,40*23,40*23,0,23*23" 3 \
	examples/dist_two_index.cachet -D V=23
known=""

lap bit-for-bit
# ---------------------------------------------------------------- Jacobi, called repeatedly
# tests/cli/dist/jacobi_driver.c: R calls of cachet_dist_jacobi_dist on each rank's blocks
# (B copied back into A's owned elements between calls; every call exchanges halos) against
# a serial loop; max error must be 0 and every element of the grid checked once
jacobi() {
	n=$1 m=$2 np=$3 steps=$4
	name="Jacobi N=$n M=$m, $steps calls on $np ranks == serial, bit for bit"
	if [ "$have_mpi" = 0 ]; then
		skip "$name: $why_skip"
		return
	fi
	if ! "$CACHET" emit examples/dist_jacobi.cachet --target mpi -D N="$n" -D M="$m" >"$tmp/jac.c" 2>"$tmp/e" ||
		! mpicc $CFLAGS_RUN -Wall -Wextra -Werror -DJN="$n" -DJM="$m" -o "$tmp/jac" "$D/jacobi_driver.c" \
			"$tmp/jac.c" -lm 2>>"$tmp/e"; then
		bad "$name: building the driver failed"
		head -10 "$tmp/e" | sed 's/^/    /' >&2
		return
	fi
	# shellcheck disable=SC2086
	$T $MPIRUN -np "$np" "$tmp/jac" "$steps" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 0 ] && grep -q "checked $((n * m)) elements, max error 0," "$tmp/o"; then
		ok "$name"
	else
		bad "$name: exit $rc"
		head -5 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
	fi
}
jacobi 48 40 2 10
jacobi 48 40 4 10
jacobi 50 37 3 6

lap jacobi
# ---------------------------------------------------------------- the emitted program compiles
for ex in dist_stencil5 dist_stencil9 dist_stencil_w2 dist_jacobi dist_gemm dist_two_index dist_dot; do
	if [ "$have_mpi" = 0 ]; then
		skip "emit --target mpi $ex compiles: $why_skip"
		continue
	fi
	# with CTD_MAIN: the library functions and the program's main
	if "$CACHET" emit "examples/$ex.cachet" --target mpi >"$tmp/em.c" 2>"$tmp/e" &&
		mpicc -Wall -Wextra -Werror -DCTD_MAIN -c -o "$tmp/em.o" "$tmp/em.c" 2>>"$tmp/e"; then
		ok "emit --target mpi $ex compiles with -Wall -Wextra -Werror"
	else
		bad "emit --target mpi $ex: mpicc -Wall -Wextra -Werror -DCTD_MAIN -c failed"
		head -10 "$tmp/e" | sed 's/^/    /' >&2
	fi
done

lap emit
# ---------------------------------------------------------------- refusals (no MPI needed)
# refuse NAME FRAGMENT LINE...: the kernel of those lines is refused by `cachet emit --target
# mpi` (and by `cachet run --ranks 2`) with exit 2 and "FILE:L:C: error: distribute: FRAGMENT"
refuse() {
	rname=$1 frag=$2
	shift 2
	rf=$(kfile "$rname.cachet" "$@")
	expect "refusal $rname (emit)" 2 "$rname.cachet:[0-9]+:[0-9]+: error: distribute: .*$frag" \
		"$CACHET" emit "$rf" --target mpi
	expect "refusal $rname (run --ranks 2)" 2 "$rname.cachet:[0-9]+:[0-9]+: error: distribute: .*$frag" \
		$T "$CACHET" run "$rf" --ranks 2
	# the issue asks for these errors at check time too
	refusals=$((refusals + 1))
	if "$CACHET" check "$rf" >/dev/null 2>"$tmp/ce"; then
		check_accepts="$check_accepts $rname"
	elif ! grep -qE "error: distribute: .*$frag" "$tmp/ce"; then
		bad "refusal $rname (check): exit 2 without the message"
		head -3 "$tmp/ce" | sed 's/^/    /' >&2
	fi
}
refusals=0
check_accepts=""
H='param N = 64, M = 64'
AB='array A : f64[N, M] input
array B : f64[N, M] output'
COPY='for (x: N, y: M) { B[x, y] = A[x, y] }'
refuse runtime "param 'M' is runtime" \
	'kernel r' 'param N = 64' 'param M : runtime' "$AB" "$COPY" 'plan { distribute(x) }'
refuse affine "loops with affine bounds are not distributed" \
	'kernel r' 'param N = 64' 'array A : f64[N, N] inout' 'for (x: N, y: x) { A[x, y] = 1 }' 'plan { distribute(x) }'
refuse gpu "only the host target is distributed" \
	'kernel r' "$H" 'array A : f32[N, M] input' 'array B : f32[N, M] output' "$COPY" \
	'plan(target=opencl) { distribute(x) }'
refuse split "'xx' comes from a split; name its loop 'x'" \
	'kernel r' "$H" "$AB" "$COPY" 'schedule { xx = split(x, 16) }' 'plan { distribute(xx) }'
refuse balanced "'x' has a balanced split" \
	'kernel r' "$H" "$AB" "$COPY" 'schedule { xx = split(x, 16, balanced=true) }' 'plan { distribute(x) }'
refuse outside "this statement is not inside loop 'y': every rank would run it" \
	'kernel r' 'param N = 64' 'array A : f64[N] input' 'array B : f64[N] output' 'array s : f64[1] output' \
	'for (x: N) {' '  s[0] = 0' '  for (y: N) { B[y] = A[y] }' '}' 'plan { distribute(y) }'
# a dependence carried by the distributed loop: A[x] from A[x-1]; the read of another rank's
# element of an array written in the call is what refuses it (the check on written arrays
# comes before the dependence test)
refuse carried "'A' is written in this kernel and read at elements another rank may write" \
	'kernel r' 'param N = 64' 'array A : f64[N] inout' 'for (x: N) { if (x > 0) { A[x] = A[x-1] + 1 } }' \
	'plan { distribute(x) }'
refuse temp_other_rank "'T' is written in this kernel and read at elements another rank may write" \
	'kernel r' 'param N = 64' 'array A : f64[N] input' 'array T : f64[N] temp' 'array B : f64[N] output' \
	'for (x: N) {' '  T[x] = A[x] * 2' '  if (x > 0) { B[x] = T[x-1] } else { B[x] = T[x] }' '}' 'plan { distribute(x) }'
refuse write_shifted "'B' is written at a subscript in dimension 1 other than a distributed index itself" \
	'kernel r' 'param N = 64' 'array A : f64[N] input' 'array B : f64[N] output' \
	'for (x: N) { if (x < N-1) { B[x+1] = A[x] } }' 'plan { distribute(x) }'
refuse not_indexed "'s' is written at elements that do not depend on 'x'" \
	'kernel r' 'param N = 64' 'array A : f64[N] input' 'array s : f64[1] output' 'for (x: N) { s[0] = A[x] }' \
	'plan { distribute(x) }'
refuse sum_read "'s' is summed over ranks and also read" \
	'kernel r' 'param N = 64' 'array A : f64[N] input' 'array s : f64[1] inout' 'array B : f64[N] output' \
	'for (x: N) {' '  s[0] += A[x]' '  B[x] = s[0]' '}' 'plan { distribute(x) }'
refuse cache_outside "cache 'AA' lies outside the distributed loops" \
	'kernel r' "$H" "$AB" "$COPY" 'plan {' '  AA = cache(A, index=x)' '  distribute(y)' '}'
refuse two_items "a plan distributes one band \(a second distribute item\)" \
	'kernel r' "$H" "$AB" "$COPY" 'plan {' '  distribute(x)' '  distribute(y)' '}'
refuse grid_dims "grid= has 1 dimension for 2 indices" \
	'kernel r' "$H" "$AB" "$COPY" 'plan { distribute(x, y, grid=4) }'
if [ -z "$check_accepts" ]; then
	ok "cachet check refuses all $refusals"
else
	bad "cachet check accepts $(echo "$check_accepts" | wc -w) of the $refusals refused kernels ($check_accepts )"
fi

lap refusals
# ---------------------------------------------------------------- usage errors and failures
expect "--grid 2x2 with --ranks 3 is a usage error" 2 "the grid \(--grid\) has 4 ranks, not the 3 of the run" \
	$T "$CACHET" run examples/dist_stencil5.cachet --ranks 3 --grid 2x2
expect "--grid with too few dimensions is a usage error" 2 "--grid has 1 dimension" \
	$T "$CACHET" run examples/dist_stencil5.cachet --ranks 4 --grid 4
expect "--ranks without distribute() is a usage error" 2 "needs a kernel whose plan has distribute" \
	$T "$CACHET" run examples/stencil5.cachet --ranks 2
expect "--ranks 0 is a usage error" 2 "--ranks" $T "$CACHET" run examples/dist_stencil5.cachet --ranks 0
expect "no mpicc: exit 2, says what to install" 2 "need Open MPI's mpicc and mpirun" \
	env CACHET_MPICC=/nonexistent/mpicc $T "$CACHET" run examples/dist_stencil5.cachet --ranks 2
if [ "$have_mpi" = 0 ]; then
	skip "failing ranks: $why_skip"
else
	expect "an mpirun that fails (CACHET_MPIRUN=false): exit 1 with a message" 1 \
		"the distributed run of 'dist_stencil5' on 2 ranks failed" \
		env CACHET_MPIRUN=/bin/false $T "$CACHET" run examples/dist_stencil5.cachet --ranks 2
	# the wrappers run from a copy made executable here (a checkout may drop the mode)
	cp "$D/fake_mpirun.sh" "$D/rank_wrap.sh" "$tmp/" && chmod +x "$tmp/fake_mpirun.sh" "$tmp/rank_wrap.sh"
	fake="env REAL_MPIRUN=$(command -v mpirun) CACHET_MPIRUN=$tmp/fake_mpirun.sh"
	# rank 1 of 4 exits 7 before MPI_Init: mpirun aborts the others, cachet exits 1 in time
	start=$(date +%s)
	expect "rank 1 exits 7: the run fails with exit 1" 1 "on 4 ranks failed \(exit 7\)" \
		$fake FAIL_MODE=exit $T "$CACHET" run examples/dist_stencil5.cachet --ranks 4
	if grep -q 'rank 1: injected failure' "$tmp/e"; then
		ok "rank 1's message is in cachet's error"
	else
		bad "rank 1's message ('rank 1: injected failure') is not in cachet's error"
	fi
	# the program itself fails (rank 0 cannot read its input file) and MPI_Aborts with 2; what
	# mpirun then exits with is Open MPI's (2, or 139 once under load, when the abort met a
	# rank still starting): cachet must exit 1 with rank 0's message either way
	# (once, in a CI run under load, Open MPI's abort left the other ranks running until
	# CACHET_MPI_TIMEOUT killed them: still exit 1, and the error carries what the ranks said)
	expect "the program fails on rank 0: exit 1" 1 "(on 4 ranks failed \(exit [0-9]+\)|did not finish within)" \
		$fake FAIL_MODE=noinput CACHET_MPI_TIMEOUT=60 $T "$CACHET" run examples/dist_stencil5.cachet --ranks 4
	if grep -q 'rank 0: cannot read the inputs' "$tmp/e"; then
		ok "rank 0's message is in cachet's error"
	else
		bad "rank 0's message ('cannot read the inputs') is not in cachet's error"
	fi
	# a rank that never ends: killed at CACHET_MPI_TIMEOUT, exit 1, no rank left behind
	if mpicc -O1 -o "$tmp/hang" "$D/hang_rank.c" 2>"$tmp/e"; then
		mkdir -p "$tmp/pids"
		printf '#!/bin/sh\npre=""\nwhile [ $# -gt 0 ]; do case $1 in -np) pre="$pre $1 $2"; shift 2; while [ "${1:-}" = -x ]; do pre="$pre $1 $2"; shift 2; done; break ;; *) pre="$pre $1"; shift ;; esac; done\nexec %s $pre %s %s\n' \
			"$(command -v mpirun)" "$tmp/hang" "$tmp/pids" >"$tmp/hang_mpirun.sh"
		chmod +x "$tmp/hang_mpirun.sh"
		expect "a rank that hangs is killed at CACHET_MPI_TIMEOUT=5: exit 1" 1 "did not finish within 5 s" \
			env CACHET_MPI_TIMEOUT=5 CACHET_MPIRUN="$tmp/hang_mpirun.sh" $T "$CACHET" run examples/dist_stencil5.cachet --ranks 3
		sleep 3
		left=""
		for p in "$tmp"/pids/pid.*; do
			[ -f "$p" ] || continue
			pid=$(cat "$p")
			# gone, or a zombie waiting for its reaper (PID 1 here may not reap)
			st=$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)
			[ -n "$st" ] && [ "$st" != Z ] && left="$left $pid"
		done
		if [ "$(ls "$tmp/pids" | wc -l)" = 3 ] && [ -z "$left" ]; then
			ok "the hung run's 3 ranks are all gone"
		else
			bad "after the timeout, ranks still run:$left (pid files: $(ls "$tmp/pids" | tr '\n' ' '))"
			for pid in $left; do kill "$pid" 2>/dev/null; done
		fi
	else
		bad "hang_rank.c does not compile"
		head -5 "$tmp/e" | sed 's/^/    /' >&2
	fi
	end=$(date +%s)
	echo "failure checks took $((end - start)) s"
fi

lap failures
[ "$xfailed" != 0 ] && echo "$xfailed expected differences (fused multiply-adds, listed above as xfail)"
counts
[ "$fail" = 0 ]
