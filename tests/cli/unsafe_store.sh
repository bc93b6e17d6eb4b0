#!/bin/sh
# unsafe_store.sh: one folder policy for every file cachet reads back (issue 22, row 9): in a cache
# folder others may write, `tune` keeps no store and `run` reads none, with a warning, as the code
# cache does; a store file others may write is not read.
. tests/cli/lib/expect.sh

ex=examples/tune_matmul.cachet
export CACHET_CACHE_DIR=$tmp/open
mkdir -p "$CACHET_CACHE_DIR" && chmod 0777 "$CACHET_CACHE_DIR"
expect "tune in a 0777 cache folder: still tunes" 0 "best: rank" \
	"$CACHET" tune "$ex" -D M=24 -D N=20 -D K=16 --budget 3
grep -q "tuning store folder not used: .* is writable by group or others (mode 0777" "$tmp/e" && ok ||
	bad "tune: no warning about the 0777 folder: $(head -c 300 "$tmp/e")"
[ -z "$(find "$CACHET_CACHE_DIR" -name '*.sqlite' 2>/dev/null)" ] && ok ||
	bad "tune wrote a store into a 0777 folder: $(find "$CACHET_CACHE_DIR" -name '*.sqlite')"
expect "run in a 0777 cache folder: verified" 0 '"verified": true' \
	"$CACHET" run "$ex" -D M=24 -D N=20 -D K=16 --json
grep -q "writable by group or others" "$tmp/e" && ok || bad "run: no warning about the 0777 folder"

# a safe folder: the store is written (not group/world-writable), then made 0666: not read
export CACHET_CACHE_DIR=$tmp/safe
expect "tune in a safe folder: stored" 0 '"stored": true' \
	"$CACHET" tune "$ex" -D M=24 -D N=20 -D K=16 --budget 3 --json
store=$(find "$CACHET_CACHE_DIR" -name '*.sqlite' | head -n 1)
[ -n "$store" ] && ok || bad "no store written in a safe folder"
mode=$(stat -c %a "$store" 2>/dev/null)
case $mode in *[2367]? | *[2367]) bad "the store is writable by group or others (mode $mode)" ;; *) ok ;; esac
expect "run: the stored record is used" 0 '"source": "exact"' \
	"$CACHET" run "$ex" -D M=24 -D N=20 -D K=16 --json
chmod 0666 "$store"
expect "run with a 0666 store: verified, the record not used" 0 '"verified": true' \
	"$CACHET" run "$ex" -D M=24 -D N=20 -D K=16 --json
grep -q '"source": "exact"' "$tmp/o" && bad "a 0666 store's record was used" || ok
expect "tune --show with a 0666 store: nothing read" 0 "writable by group or others" "$CACHET" tune --show
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
