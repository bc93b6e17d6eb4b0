#!/bin/sh
# rank_wrap.sh: start one rank of a distributed program ("$@": the program and its arguments),
# or make it fail (see fake_mpirun.sh): FAIL_MODE=exit: rank FAIL_RANK exits 7 with a message;
# noinput: every rank gets a missing input file, so the program itself fails on rank 0.
rank=${OMPI_COMM_WORLD_RANK:-0}
case ${FAIL_MODE:-exit} in
exit)
	if [ "$rank" = "${FAIL_RANK:-1}" ]; then
		echo "rank $rank: injected failure" >&2
		exit 7
	fi
	exec "$@" ;;
noinput)
	prog=$1
	shift 2
	exec "$prog" /nonexistent/in.bin "$@" ;;
esac
echo "rank_wrap.sh: unknown FAIL_MODE '$FAIL_MODE'" >&2
exit 9
