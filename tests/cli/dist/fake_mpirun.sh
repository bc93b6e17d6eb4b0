#!/bin/sh
# fake_mpirun.sh: an mpirun for tests/cli/distributed.sh's failure checks (CACHET_MPIRUN=this).
# It runs the real mpirun (REAL_MPIRUN) with the same options, but each rank starts through
# rank_wrap.sh, which makes rank FAIL_RANK fail (FAIL_MODE=exit: exit 7 with a message on
# stderr; FAIL_MODE=hang: sleep, so that only cachet's CACHET_MPI_TIMEOUT can end the run).
pre=""
while [ $# -gt 0 ]; do
	case $1 in
	-np) pre="$pre $1 $2"; shift 2
		# mpirun's options after -np (-x VAR=VALUE) stay with it
		while [ "${1:-}" = -x ]; do pre="$pre $1 $2"; shift 2; done
		break ;;
	*) pre="$pre $1"; shift ;;
	esac
done
# word splitting of $pre is intended: mpirun's options, no blanks in them
exec "$REAL_MPIRUN" $pre sh "$(dirname "$0")/rank_wrap.sh" "$@"
