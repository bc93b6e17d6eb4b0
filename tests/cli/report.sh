#!/bin/sh
# report.sh: `cachet report`: the HTML page is well-formed XML, self-contained (no scripts, links or
# external references), its SVGs parse and hold the expected series; JSON and CSV hold the same data;
# exit codes; every example gives a report; headless chromium draws every plot (non-blank pixels).
. "$(dirname "$0")/lib/expect.sh"
PY=/usr/bin/python3
CHK="$(dirname "$0")/lib/report_check.py"
SPEC=32K:64,1M:64

check() { # NAME COMMAND...: the checker prints "ok" or the problems
	name=$1
	shift
	out=$("$@" 2>&1)
	if [ "$out" = ok ]; then ok; else bad "$name: $out"; fi
}

# ---------------------------------------------------------------- a kernel with four tile params
f=examples/tiles_two_index.cachet
expect "report tiles" 0 "" "$CACHET" report $f --cache $SPEC -o "$tmp/t.html" --csv "$tmp/csv" --json
cp "$tmp/o" "$tmp/t.json"
check "html well formed, self-contained, series" $PY "$CHK" html "$tmp/t.html" \
	'id="plot-phase-TA"' 'id="plot-phase-TQ"' 'id="plot-phase-TP"' 'id="plot-phase-TB"' 'id="plot-heatmap"' \
	'id="plot-roofline"' 'L1 (32 KiB) model' 'L1 (32 KiB) simulated' 'L2 (1 MiB) model' 'tiles picks' \
	'1 core:' 'kernel (measured)' 'id="per-ref"' 'id="looptree"' 'for aa in range(0, 16)' \
	'tiles_two_index.cachet:19:48' 'reuse carried by'
check "json members and sums" $PY "$CHK" json "$tmp/t.json"
# each sweep runs up to the extent of its first loop from 0 in the lowered tree (read with jansson)
expect "sweep extents from the loop tree" 0 "^TA 64 TQ 96 TP 96 TB 48$" $PY -c '
import json, sys
print(" ".join("%s %d" % (p["param"], p["extent"]) for p in json.load(open(sys.argv[1]))["phases"]))' "$tmp/t.json"
for c in levels per_ref phases heatmap roofline tuning; do
	if [ -s "$tmp/csv/$c.csv" ]; then ok; else bad "csv $c.csv missing or empty"; fi
done
expect "csv phases rows" 0 "^TA,[0-9]+,L1,[0-9]+,[0-9]+$" cat "$tmp/csv/phases.csv"
expect "csv heatmap pick" 0 "^[0-9]+,[0-9]+,L1,[0-9]+,1$" cat "$tmp/csv/heatmap.csv"
expect "csv per_ref capacity" 0 "^examples/tiles_two_index.cachet:19:48,A,2,read,589824,L1,[0-9]+,1152,[0-9]+,a$" \
	cat "$tmp/csv/per_ref.csv"
# the model's curve meets the simulator's points on fully associative levels (the model is exact there)
expect "model = simulator at simulated tiles" 0 "^same$" $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
pts = [p for ph in d["phases"] for p in ph["points"] if p["simulated"]]
print("same" if pts and all(p["model"] == p["simulated"] for p in pts) else "differ %d" % len(pts))' "$tmp/t.json"

# ---------------------------------------------------------------- the two-index example (no tile params)
expect "report two_index" 0 "" "$CACHET" report examples/two_index.cachet --cache $SPEC -o "$tmp/two.html" --no-run
check "two_index html" $PY "$CHK" html "$tmp/two.html" 'id="plot-roofline"' 'kernel (bound, not run)' \
	'no tile' 'two_index.cachet:16:38'

# ---------------------------------------------------------------- tuner points from the store
expect "tune for the report" 0 "" "$CACHET" tune examples/tune_matmul.cachet --budget 4 --quiet
expect "report tune_matmul" 0 "" "$CACHET" report examples/tune_matmul.cachet --cache $SPEC -o "$tmp/tune.html" --no-run --json
check "tuning plot" $PY "$CHK" html "$tmp/tune.html" 'id="plot-tuning"' 'measured points' 'Kendall'
cp "$tmp/o" "$tmp/tune.json"
expect "tuning json points" 0 '"points": \[\{"params": "TI=' cat "$tmp/tune.json"

# ---------------------------------------------------------------- exit codes
expect "no output asked" 2 "needs -o FILE, --json or --csv DIR" "$CACHET" report $f
expect "no file" 2 "needs a FILE" "$CACHET" report -o "$tmp/x.html"
expect "unknown option" 2 "unknown option '--bogus'" "$CACHET" report $f --bogus -o "$tmp/x.html"
expect "bad -D" 2 "-D expects NAME=INTEGER" "$CACHET" report $f -D TA -o "$tmp/x.html"
expect "missing file" 2 "" "$CACHET" report "$tmp/none.cachet" -o "$tmp/x.html"
bad_k=$(kfile bad.cachet "kernel b" "param N = 8" "array X : f64[N] input" "for (i: N) {" "  X[i] = Y[i]" "}")
expect "parse error at file:line:col" 2 "bad.cachet:5:[0-9]+: error" "$CACHET" report "$bad_k" -o "$tmp/x.html"
# a missing folder is made (as build makes its -o); one that cannot be is exit 1 before any work
expect "unwritable output" 1 "cannot create folder '/proc/no'" "$CACHET" report $f --cache $SPEC --no-run --no-measure \
	-o /proc/no/such/x.html
# without gnuplot the page cannot be drawn (exit 1, says what to install); JSON and CSV need no gnuplot
expect "no gnuplot: page refused" 1 "gnuplot is not installed" env PATH=/nonexistent "$CACHET" report $f --cache $SPEC \
	--no-run --no-measure -o "$tmp/x.html"
expect "no gnuplot: json still" 0 '"phases": \[\{"param": "TA"' env PATH=/nonexistent "$CACHET" report $f --cache $SPEC \
	--no-run --no-measure --json
expect "runtime param without a value" 2 "runtime param 'L' needs a value" "$CACHET" report examples/axpy_runtime.cachet \
	--no-run --no-measure -o "$tmp/x.html"
expect "help" 0 "usage: cachet report FILE" "$CACHET" report --help
expect "listed in cachet --help" 0 "^  report " "$CACHET" --help

# ---------------------------------------------------------------- every example
for e in examples/*.cachet; do
	defs=$(grep -m1 '^# run-with:' "$e" | sed 's/^# run-with://')
	b=$(basename "$e" .cachet)
	"$CACHET" report "$e" $defs --no-run --no-measure --sim-total 8M -o "$tmp/ex-$b.html" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ $rc != 0 ]; then
		bad "example $e: exit $rc: $(head -c 300 "$tmp/e")"
		continue
	fi
	check "example $e html" $PY "$CHK" html "$tmp/ex-$b.html" 'id="per-ref"'
done

# ---------------------------------------------------------------- drawn by a real browser
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
shoot() { # PNG WIDTH HEIGHT HTML
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/chr" \
		--window-size="$2,$3" --screenshot="$1" "file://$4" >/dev/null 2>&1
}
if [ -z "$CHROMIUM" ]; then
	echo "SKIP browser test: chromium is not installed (scripts/deps.sh --test installs it as root)"
else
	mkdir -p "$tmp/pages"
	$PY "$CHK" split "$tmp/t.html" "$tmp/pages" >"$tmp/ids"
	$PY "$CHK" split "$tmp/tune.html" "$tmp/pages" >>"$tmp/ids"
	n=$(wc -l <"$tmp/ids")
	if [ "$n" -ge 7 ]; then ok; else bad "browser: $n plots to draw, want 7"; fi
	for id in $(cat "$tmp/ids"); do
		rm -f "$tmp/$id.png"
		if ! shoot "$tmp/$id.png" 800 440 "$tmp/pages/$id.html" || [ ! -s "$tmp/$id.png" ]; then
			bad "browser: no screenshot of $id"
			continue
		fi
		# the plot area (inside the axes, left of the key): lines, points or cells drawn in colour
		check "browser drew $id" $PY "$CHK" pixels "$tmp/$id.png" 80 40 560 370 2000 100
	done
	if shoot "$tmp/page.png" 1280 3000 "$tmp/t.html" && [ -s "$tmp/page.png" ]; then
		check "browser drew the whole page" $PY "$CHK" pixels "$tmp/page.png" 0 0 1280 3000 50000 5000
	else
		bad "browser: no screenshot of the page"
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
