#!/bin/sh
# plans.sh: the caching plans of tests/plans (see docs/PLANS.md).
#
# Every tests/plans/*.cachet must pass `cachet check`, run verified in the
# interpreter and natively (natively only when a C compiler is found), and
# `cachet lower --json` must report the cache regions its header comments
# describe. The header lines (anywhere in the file, one per line):
#
#   # run-with: -D N=50 -D M=20
#       arguments for check, run and lower (at most one such line)
#   # expect-regions: NAME COUNT
#       cache NAME has COUNT regions in "caches"; NAME * counts all regions
#   # expect-cache: SEL FIELD=VALUE ...
#       the region SEL has each FIELD equal to VALUE. SEL is NAME (the first
#       region whose "name" is NAME), NAME.K (its K-th region, from 0, in
#       the order of "caches") or a plain number N (the N-th entry of
#       "caches", from 0). VALUE is the JSON value without quotes and
#       without blanks: index=ii, index=null, level=3, shape=[4,32],
#       layout=first_major, layout=[1,0,2], elided=false, buffer=null.
#
# The examples/plan_*.cachet carry the same expect lines; only those are
# checked here (tests/cli/examples.sh checks and runs every example).
#
# Every tests/plans/errors/*.cachet must be refused with exit code 2 by
# `cachet check` (and by `cachet run`), with a message
#
#   # expect-error: LINE:COL: SUBSTRING
#
# i.e. a line "FILE:LINE:COL: error: ..." that contains SUBSTRING.
#
# One line per case: "ok   ..." or "FAIL ..." (details on stderr); the last
# line is "N passed, M failed". JSON is read with awk (no python needed).
verbose=1
. "$(dirname "$0")/lib/expect.sh"

# a C compiler for the native engine: $CC (its first word) or cc
set -- ${CC:-cc}
have_cc=false
command -v "$1" >/dev/null 2>&1 && have_cc=true

# The "caches" list of `lower --json` on stdin -> one line per region on
# stdout: " FIELD=VALUE FIELD=VALUE ... " (strings unquoted, blanks removed
# from values, nested lists and objects kept compact). Exit 1 when there is
# no "caches" list.
caches() {
	awk '
	function ws() {
		while (pos <= n && index(" \t\r\n", substr(s, pos, 1)) > 0)
			pos++
	}
	function str(   out, c) {
		pos++
		out = ""
		while (pos <= n) {
			c = substr(s, pos, 1)
			if (c == "\\") {
				out = out substr(s, pos + 1, 1)
				pos += 2
				continue
			}
			pos++
			if (c == "\"")
				return out
			if (c != " " && c != "\t")
				out = out c
		}
		return out
	}
	function val(   c, out) {
		ws()
		c = substr(s, pos, 1)
		if (c == "\"")
			return str()
		if (c == "[" || c == "{") {
			pos++
			out = c
			while (pos <= n) {
				ws()
				c = substr(s, pos, 1)
				if (c == "]" || c == "}") {
					pos++
					return out c
				}
				if (c == "," || c == ":") {
					pos++
					out = out c
					continue
				}
				out = out val()
			}
			return out
		}
		out = ""
		while (pos <= n) {
			c = substr(s, pos, 1)
			if (index(" \t\r\n,]}:", c) > 0)
				break
			out = out c
			pos++
		}
		if (out == "") # not JSON: skip a character rather than loop
			pos++
		return out
	}
	{ s = s $0 "\n" }
	END {
		n = length(s)
		p = 0
		off = 0
		rest = s
		while ((k = index(rest, "\"caches\"")) > 0) {
			p = off + k
			off += k
			rest = substr(rest, k + 1)
		}
		if (p == 0)
			exit 1
		pos = p + 8
		ws()
		if (substr(s, pos, 1) != ":")
			exit 1
		pos++
		ws()
		if (substr(s, pos, 1) != "[")
			exit 1
		pos++
		while (pos <= n) {
			ws()
			c = substr(s, pos, 1)
			if (c == "]")
				exit 0
			if (c == ",") {
				pos++
				continue
			}
			if (c != "{")
				exit 1
			pos++
			line = ""
			while (pos <= n) {
				ws()
				c = substr(s, pos, 1)
				if (c == "}") {
					pos++
					break
				}
				if (c == ",") {
					pos++
					continue
				}
				if (c != "\"")
					exit 1
				key = str()
				ws()
				if (substr(s, pos, 1) != ":")
					exit 1
				pos++
				line = line " " key "=" val()
			}
			print line " "
		}
		exit 1
	}'
}

# region SEL: the line of $tmp/regions for selector SEL (empty if none)
region() {
	case "$1" in
	*[!0-9]*)
		case "$1" in
		*.*) rname=${1%.*} rk=${1##*.} ;;
		*) rname=$1 rk=0 ;;
		esac
		case "$rk" in '' | *[!0-9]*) return ;; esac
		grep -F " name=$rname " "$tmp/regions" | sed -n "$((rk + 1))p"
		;;
	*) sed -n "$(($1 + 1))p" "$tmp/regions" ;;
	esac
}

# lower FILE NAME DEFS...: `cachet lower --json` of FILE and the regions its
# expect-regions / expect-cache lines describe
lower() {
	f=$1 name=$2
	shift 2
	: >"$tmp/regions"
	"$CACHET" lower "$f" "$@" --json >"$tmp/lower" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 0 ] && caches <"$tmp/lower" >"$tmp/regions"; then
		ok "$name: lower --json ($(wc -l <"$tmp/regions" | tr -d ' ') regions)"
	else
		bad "$name: lower --json (exit $rc, or no \"caches\" list)"
		head -5 "$tmp/e" | sed 's/^/    /' >&2
	fi
	grep '^# expect-regions:' "$f" | sed 's/^# expect-regions://' >"$tmp/want"
	while read -r rname count; do
		if [ "$rname" = "*" ]; then
			got=$(wc -l <"$tmp/regions" | tr -d ' ')
		else
			got=$(grep -cF " name=$rname " "$tmp/regions")
		fi
		if [ "$got" = "$count" ]; then
			ok "$name: $rname has $count regions"
		else
			bad "$name: $rname has $got regions, want $count"
		fi
	done <"$tmp/want"
	grep '^# expect-cache:' "$f" | sed 's/^# expect-cache://' >"$tmp/want"
	while read -r sel fields; do
		reg=$(region "$sel")
		if [ -z "$reg" ]; then
			bad "$name: $sel: no such region"
			continue
		fi
		missing=""
		set -f # VALUEs such as [4,32] are not file patterns
		for fv in $fields; do
			case "$reg" in
			*" $fv "*) ;;
			*) missing="$missing $fv" ;;
			esac
		done
		set +f
		if [ -z "$missing" ]; then
			ok "$name: $sel"
		else
			bad "$name: $sel: want$missing"
			echo "    got:$reg" >&2
		fi
	done <"$tmp/want"
}

for f in tests/plans/*.cachet; do
	[ -f "$f" ] || continue
	name=${f#tests/}
	defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	# check
	if "$CACHET" check "$f" $defs >"$tmp/o" 2>"$tmp/e"; then
		ok "$name: check"
	else
		bad "$name: check"
		head -5 "$tmp/e" | sed 's/^/    /' >&2
	fi
	# run, interpreter
	"$CACHET" run "$f" $defs --engine interp --json >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '"verified": true' "$tmp/o"; then
		ok "$name: run --engine interp"
	else
		bad "$name: run --engine interp (exit $rc)"
		head -5 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
	fi
	# run, native
	if $have_cc; then
		"$CACHET" run "$f" $defs --json >"$tmp/o" 2>"$tmp/e"
		rc=$?
		if [ "$rc" = 0 ] && grep -q '"verified": true' "$tmp/o"; then
			ok "$name: run (native)"
		else
			bad "$name: run (native) (exit $rc)"
			head -5 "$tmp/o" "$tmp/e" | sed 's/^/    /' >&2
		fi
	else
		echo "skip $name: run (native): no C compiler"
	fi
	lower "$f" "$name" $defs
done

# the examples of docs/PLANS.md: what their comments promise (examples.sh
# checks and runs them)
for f in examples/plan_*.cachet; do
	[ -f "$f" ] || continue
	defs=$(grep -m1 '^# run-with:' "$f" | sed 's/^# run-with://')
	lower "$f" "$f" $defs
done

for f in tests/plans/errors/*.cachet; do
	[ -f "$f" ] || continue
	name=${f#tests/}
	want=$(grep -m1 '^# expect-error:' "$f" | sed 's/^# expect-error: *//')
	if [ -z "$want" ]; then
		bad "$name: no '# expect-error:' line"
		continue
	fi
	lc=${want%%: *}
	msg=${want#*: }
	"$CACHET" check "$f" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" != 2 ]; then
		bad "$name: check exit $rc, want 2"
		head -5 "$tmp/e" | sed 's/^/    /' >&2
	elif grep -F -- "$f:$lc: error: " "$tmp/e" | grep -qF -- "$msg"; then
		ok "$name: $lc: $msg"
	else
		bad "$name: no '$f:$lc: error: ...$msg'"
		head -5 "$tmp/e" | sed 's/^/    /' >&2
	fi
	"$CACHET" run "$f" --engine interp >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 2 ]; then
		ok "$name: run refused"
	else
		bad "$name: run exit $rc, want 2"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
