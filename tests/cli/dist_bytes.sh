#!/bin/sh
# dist_bytes.sh: the bytes `cachet predict --ranks N` predicts per rank for distributed kernels equal the bytes the ranks of `cachet run --ranks N` count (issue #32, item 4), for star and box halos of widths 1 and 2, SUMMA panels, a reduction and a grid with more ranks than blocks; and `lower --ranks` names the messages. Skipped without Open MPI.
verbose=1
. "$(dirname "$0")/lib/expect.sh"

if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
	skip "no Open MPI (mpicc, mpirun): make deps installs openmpi-bin and libopenmpi-dev"
	counts
	exit 0
fi
export CACHET_MPI_TIMEOUT=${CACHET_MPI_TIMEOUT:-120}

# stencil NAME EXPR [GRID]: a 37 x 29 f32 stencil tiled 4 x 8 whose interior reads EXPR
stencil() {
	cat >"$tmp/$1.cachet" <<EOF
kernel $1
param N = 37, M = 29
array A : f32[N, M] input
array B : f32[N, M] output
for (x: N, y: M) {
  if (1 < x && x < N-2 && 1 < y && y < M-2) {
    B[x, y] = $2
  } else {
    B[x, y] = A[x, y]
  }
}
schedule {
  xx, yy = tile(x=4, y=8)
  reorder(x, y, xx, yy)
}
plan {
  AA = cache(A, index=xx)
  distribute(x, y${3:+, grid=$3})
}
EOF
}
stencil star1 "A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] - 4 * A[x, y]"
stencil box1 "A[x-1, y-1] + A[x-1, y+1] + A[x+1, y-1] + A[x+1, y+1] + A[x, y]"
stencil star2 "A[x-2, y] + A[x+2, y] + A[x, y-2] + A[x, y+2] + A[x-1, y] + A[x+1, y] + A[x, y]"
cat >"$tmp/summa.cachet" <<'EOF'
kernel summa
param M = 30, N = 27, K = 33
array A : f32[M, K] input
array B : f32[K, N] input
array C : f32[M, N] inout
for (i: M, j: N, k: K) {
  C[i, j] += A[i, k] * B[k, j]
}
schedule {
  ii, jj, kk = tile(i=4, j=8, k=4)
  reorder(i, j, k, ii, kk, jj)
}
plan {
  distribute(i, j)
}
EOF
# replicate=(A, B): every rank holds A and B whole, so a call moves nothing
sed 's/  distribute(i, j)/  distribute(i, j, replicate=(A, B))/' "$tmp/summa.cachet" >"$tmp/summa_repl.cachet"
cat >"$tmp/rowsum.cachet" <<'EOF'
kernel rowsum
param M = 13, N = 50
array A : f64[M, N] input
array S : f64[M] inout
for (i: M, j: N) {
  S[i] += A[i, j]
}
plan {
  distribute(i, j)
}
EOF

# counted R F: the per-rank "sent received" the run counted, one line per rank
counted() {
	"$CACHET" run "$2" --ranks "$1" ${3:+--grid "$3"} >"$tmp/run.out" 2>"$tmp/run.err" || return 1
	grep -q verified "$tmp/run.out" || return 1
	sed -n 's/^rank \([0-9]*\): .* sent \([0-9]*\) bytes, received \([0-9]*\) bytes$/\1 \2 \3/p' "$tmp/run.out"
}
predicted() {
	"$CACHET" predict "$2" --ranks "$1" ${3:+--grid "$3"} 2>/dev/null |
		sed -n 's/^  rank \([0-9]*\): sent \([0-9]*\), received \([0-9]*\)$/\1 \2 \3/p'
}

# kernel ranks grid(optional)
while read -r k r g; do
	[ -z "$k" ] && continue
	name="$k on $r ranks${g:+ ($g)}"
	if ! counted "$r" "$tmp/$k.cachet" "$g" >"$tmp/c"; then
		bad "$name: the run failed or did not verify: $(tail -3 "$tmp/run.err" "$tmp/run.out" | tr '\n' ' ')"
		continue
	fi
	predicted "$r" "$tmp/$k.cachet" "$g" >"$tmp/p"
	if [ -s "$tmp/c" ] && cmp -s "$tmp/c" "$tmp/p"; then
		ok "$name: predicted bytes = counted bytes ($(awk '{s += $2} END {print s}' "$tmp/c") bytes sent in all)"
	else
		bad "$name: predicted [$(tr '\n' ';' <"$tmp/p")] counted [$(tr '\n' ';' <"$tmp/c")]"
	fi
done <<'EOF'
star1 4 2x2
star1 3
box1 4 2x2
box1 4 4x1
star2 4 1x4
star2 2
summa 4 2x2
summa 3 1x3
summa 4 4x1
summa_repl 4 2x2
rowsum 4 2x2
rowsum 3 1x3
EOF

if counted 4 "$tmp/summa_repl.cachet" 2x2 >"$tmp/c" && [ -s "$tmp/c" ] &&
	awk '{s += $2 + $3} END {exit s != 0}' "$tmp/c"; then
	ok "replicate=(A, B): no bytes per call"
else
	bad "replicate=(A, B): bytes per call [$(tr '\n' ';' <"$tmp/c")]"
fi

# a star halo sends no corners, a box one does: rank 0 of 2x2 receives from 1, 2 (star), also 3 (box)
"$CACHET" lower "$tmp/star1.cachet" --ranks 4 >"$tmp/l1" 2>&1
"$CACHET" lower "$tmp/box1.cachet" --ranks 4 >"$tmp/l2" 2>&1
if grep -q "^  rank 0 (.*from 2; " "$tmp/l1" && ! grep "^  rank 0 (" "$tmp/l1" | grep -q "from 3"; then
	ok "lower: the star stencil's rank 0 receives from ranks 1 and 2 only"
else
	bad "lower star: $(grep '^  rank 0' "$tmp/l1")"
fi
if grep "^  rank 0 (" "$tmp/l2" | grep -q "A\[20..20, 16..16\] from 3"; then
	ok "lower: the box stencil's rank 0 receives its corner A[20, 16] from rank 3"
else
	bad "lower box: $(grep '^  rank 0' "$tmp/l2")"
fi
# the distributed fuzz family's findings (tests/fuzz/regress/difffuzz/dist-*), on their ranks:
# each verifies now, but unroll of a distributed loop, which check refuses
for f in tests/fuzz/regress/difffuzz/dist-*.cachet; do
	[ -f "$f" ] || continue
	r=$(sed -n 's/^# ranks: \([0-9]*\).*/\1/p' "$f" | head -1)
	case $f in
	*unroll-distributed-loop*) want=2 pat="error: distribute: unroll" ;;
	*) want=0 pat="verified against" ;;
	esac
	expect "regression $(basename "$f" .cachet) on ${r:-2} ranks" "$want" "$pat" \
		"$CACHET" run "$f" --ranks "${r:-2}"
done

# the MPI program comes from the code cache the second time (the same source, compiler and flags)
"$CACHET" run "$tmp/star1.cachet" --ranks 2 >/dev/null 2>&1
expect "a second run takes its MPI program from the code cache" 0 "code +disk" "$CACHET" run "$tmp/star1.cachet" --ranks 2
expect "CACHET_NO_CACHE=1 builds it again" 0 "code +compiled" env CACHET_NO_CACHE=1 "$CACHET" run "$tmp/star1.cachet" --ranks 2

# a rank that fails stops the whole run with its message, while the others wait for its halo
start=$(date +%s)
CACHET_MPI_FAIL_RANK=2 "$CACHET" run "$tmp/star1.cachet" --ranks 4 >"$tmp/f.out" 2>"$tmp/f.err"
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" = 1 ] && grep -q "rank 2: failing on purpose" "$tmp/f.err" && [ "$took" -lt 60 ]; then
	ok "a failing rank: exit 1 with its message in ${took} s"
else
	bad "a failing rank: exit $rc after ${took} s: $(tail -3 "$tmp/f.err" | tr '\n' ' ')"
fi
counts
[ "$fail" = 0 ]
