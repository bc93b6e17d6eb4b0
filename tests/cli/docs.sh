#!/bin/sh
# docs.sh: the commands that README.md and docs/*.md show in code blocks run, and print what the docs
# show. A block line "$ CMD" is a command; the lines after it, up to the next "$ " line or the
# block's end, are its output as shown. Outputs are compared with every run of blanks and newlines
# made one blank, decimal numbers (times, speeds, errors) and the code cache's hit kind read as
# "#", and a "..." in the docs standing for anything. A bare "cachet ..." line (a synopsis) is run
# when it has no placeholders. A block that starts "# NAME.cachet:" must equal examples/NAME.cachet.
# Commands that cannot run here (placeholders, missing files) are listed as skipped.
# Python: a ```python block runs with Debian's interpreter on the package `make` built
# (PYTHONPATH=build/python) and must exit 0; "$ " commands that name python3 or pip (docs/PYTHON.md's
# installs, into folders of the scratch folder, from a copy of python/) run as the others. Without
# Debian's numpy and cffi they are listed as skipped.
. "$(dirname "$0")/lib/expect.sh"

root=$(pwd)
case "$CACHET" in /*) bin=$CACHET ;; *) bin=$root/$CACHET ;; esac
# commands run in a scratch folder that sees the repository's folders, so that
# one writing files (build -o) leaves the checkout alone
work=$tmp/work
mkdir -p "$work/build" "$tmp/bin"
for d in examples tests bench docs include; do ln -s "$root/$d" "$work/$d"; done
ln -s "$bin" "$work/build/cachet"
# the Python package and the library it bundles as `make` leaves them; python/ copied, since pip
# builds in the source folder (python/build, python/cachet.egg-info)
build=$(dirname "$bin")
PY=${PYTHON:-/usr/bin/python3}
pyok=""
pywhy="no numpy or cffi for $PY, or no $build/python"
# under the sanitizers the bundled library is instrumented and Python is not: python.sh preloads the
# runtimes for its tests; the documented commands are run by the plain build's suite
[ "${SAN:-}" = 1 ] && pywhy="an instrumented library (SAN=1)"
if [ "${SAN:-}" != 1 ] && "$PY" -c 'import numpy, cffi' 2>/dev/null && [ -d "$build/python/cachet" ]; then
	pyok=1
	ln -s "$build/python" "$work/build/python"
	for so in "$build"/libcachet.so*; do ln -s "$so" "$work/build/"; done
	cp -r "$root/python" "$work/python"
	rm -rf "$work/python/tests" "$work/python/build" "$work/python"/*.egg-info
fi
ln -s "$bin" "$tmp/bin/cachet"
export CACHET_CACHE_DIR="$tmp/cache"

# Cut every doc's code blocks into cases: $tmp/case.N.{loc,cmd,want,kind}.
for md in README.md docs/*.md; do
	awk -v md="$md" -v out="$tmp/case" -v start="$(ls "$tmp"/case.*.loc 2>/dev/null | wc -l)" '
	function newcase(kind, text) {
		n++; id = out "." (start + n)
		print md ":" NR > (id ".loc"); close(id ".loc")
		print text > (id ".cmd"); close(id ".cmd")
		print kind > (id ".kind"); close(id ".kind")
		printf "" > (id ".want"); close(id ".want")
		want = id ".want"
	}
	/^[ \t]*```/ {
		if (!inb) {
			inb = 1; first = 1; want = ""; kfile = ""
			if ($0 ~ /```python[ \t]*$/) { newcase("python", "python block"); kfile = want; want = ""; first = 0 }
			next
		}
		inb = 0; if (want != "") close(want); if (kfile != "") close(kfile); want = ""; kfile = ""; next
	}
	!inb { next }
	first {
		first = 0
		if (match($0, /^# [A-Za-z0-9_]+\.cachet:/)) {
			newcase("kernel", substr($0, 3, index($0, ":") - 3))
			kfile = want; want = ""
		}
	}
	kfile != "" { print >> kfile; next }
	/^\$ / { newcase("shown", substr($0, 3)); next }
	/^[ \t]*(\.\/)?(build\/)?cachet( |$)/ { if (want == "") { sub(/^[ \t]+/, ""); newcase("bare", $0); want = ""; bare = id }; next }
	/^[ \t]+\[/ && bare != "" { print >> (bare ".cmd"); close(bare ".cmd"); next }
	{ bare = "" }
	want != "" { print >> want }
	' "$md"
done

# One line of output: blanks and newlines squeezed, varying numbers and the code cache's kind as "#".
normalize() {
	sed -E -e 's/[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?/#/g' -e 's/[0-9]+[eE][-+]?[0-9]+/#/g' \
		-e 's/"code_cache": "(compiled|disk|memory)"/"code_cache": "#"/' \
		-e 's/^( *code +)(compiled|disk|memory)/\1#/' "$1" | tr -s ' \t\n' '   ' | sed -e 's/^ //' -e 's/ $//'
}

# The shown output as a case pattern: glob characters literal, "..." for anything.
pattern() {
	normalize "$1" | sed -e 's/[][\\*?]/\\&/g' -e 's/\.\.\./*/g'
}

# A synopsis line "cachet CMD [--opt a|b] ...": every option and value it names is in
# `cachet CMD --help`, and every option of that help's usage is in the synopsis.
synopsis() {
	set -- "$1" "$2" "$(echo "$2" | awk '{print $2}')"
	case "$3" in -*) return 0 ;; esac
	"$bin" "$3" --help >"$tmp/help" 2>&1 || return 0
	for o in $(echo "$2" | grep -oE -- '--[a-z-]+( [a-z]+(\|[a-z]+)+)?' | tr ' |' '\n\n' | sort -u); do
		grep -qe "$o" "$tmp/help" && ok || bad "$1: '$o' of the synopsis is not in 'cachet $3 --help'"
	done
	for o in $(sed -n '/^usage:/,/^$/p' "$tmp/help" | grep -oE -- '--[a-z-]+' | sort -u); do
		# the synopsis of a command may take two lines (tune: tuning, --show)
		grep -E "^(cachet +$3 |  +\[)" docs/CLI.md | grep -qe "$o" && ok ||
			bad "$1: '$o' of 'cachet $3 --help' is not in the synopsis of docs/CLI.md"
	done
}

skipped=""
i=1
while [ -f "$tmp/case.$i.loc" ]; do
	loc=$(cat "$tmp/case.$i.loc")
	kind=$(cat "$tmp/case.$i.kind")
	cmd=$(sed -E 's/[ \t]+#.*$//' "$tmp/case.$i.cmd" | tr -s ' \t\n' '   ' | sed 's/ $//')
	want=$tmp/case.$i.want
	i=$((i + 1))
	if [ "$kind" = python ]; then
		if [ -z "$pyok" ]; then
			skipped="$skipped
  $loc: python block ($pywhy)"
		elif (cd "$work" && PYTHONPATH=$work/build/python "$PY" "$want") >"$tmp/got" 2>"$tmp/err"; then
			ok
		else
			bad "$loc: the python block exits non-zero"
			tail -5 "$tmp/err" >&2
		fi
		continue
	fi
	if [ "$kind" = kernel ]; then
		ex=examples/$cmd
		if [ ! -f "$ex" ]; then
			skipped="$skipped
  $loc: kernel $cmd (no $ex)"
		elif cmp -s "$want" "$ex"; then
			ok
		else
			bad "$loc: the kernel shown differs from $ex"
			diff "$ex" "$want" | head -10 >&2
		fi
		continue
	fi
	# placeholders (FILE, [--json], a|b, ...) and files that are not here: not runnable
	why=""
	case "$cmd" in *'['* | *'|'* | *'...'* | *'<'*'>'*) why="placeholders" ;; esac
	for w in $cmd; do
		case "$w" in
		-*) ;;
		*[A-Z][A-Z]*) [ -z "$(echo "$w" | tr -d 'A-Z_')" ] && why="placeholder $w" ;;
		esac
		case "$w" in
		-* | *=*) ;;
		*/* | *.cachet) [ -e "$work/$w" ] || [ -e "$w" ] || why="needs $w" ;;
		esac
	done
	case " $cmd" in
	*[\ /]python3\ * | *[\ /]python\ * | *[\ /]pip\ *) [ -z "$pyok" ] && why=$pywhy ;;
	esac
	if [ -n "$why" ] && [ "$kind" = bare ]; then
		synopsis "$loc" "$cmd"
	fi
	if [ -n "$why" ]; then
		skipped="$skipped
  $loc: $cmd ($why)"
		continue
	fi
	(cd "$work" && PATH=$tmp/bin:$PATH sh -c "$cmd") >"$tmp/got" 2>"$tmp/err"
	rc=$?
	if grep -q 'error:' "$want"; then
		cat "$tmp/err" >>"$tmp/got"
		[ "$rc" != 0 ] && ok || bad "$loc: '$cmd' exits 0, the docs show an error"
	else
		[ "$rc" = 0 ] && ok || { bad "$loc: '$cmd' exits $rc"; head -5 "$tmp/err" >&2; continue; }
	fi
	[ -s "$want" ] || continue
	pat=$(pattern "$want")
	got=$(normalize "$tmp/got")
	# shellcheck disable=SC2254
	case "$got" in
	$pat) ok ;;
	*)
		bad "$loc: the output of '$cmd' differs from the docs"
		echo "    docs: $(normalize "$want" | cut -c1-400)" >&2
		echo "    got:  $(echo "$got" | cut -c1-400)" >&2
		;;
	esac
done
# what the prose of docs/CLI.md says of SPEC, the help says too
for c in simulate predict tiles tune; do
	expect "$c --help: K/M/G suffixes (docs/CLI.md)" 0 "K/M/G|as for simulate|cache levels" "$CACHET" $c --help
done
expect "simulate --help: K/M/G suffixes" 0 "with K/M/G" "$CACHET" simulate --help
grep -q 'with `K`/`M`/`G`' docs/CLI.md && ok || bad "docs/CLI.md no longer names the G suffix"

[ -n "${DOCS_DEBUG:-}" ] && j=1 && while [ -f "$tmp/case.$j.loc" ]; do echo "$j $(cat "$tmp/case.$j.loc") $(cat "$tmp/case.$j.cmd")"; j=$((j + 1)); done
[ -n "$skipped" ] && echo "skipped (not runnable here):$skipped"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
