#!/bin/sh
# cli_basic.sh: table-driven tests of the command line: exit codes, messages, JSON fields.
. "$(dirname "$0")/lib/expect.sh"

good=$(kfile good.cachet "kernel k" "param N = 8" "array A : f32[N] input" "array B : f32[N] output" \
	"for (i: N) {" "  B[i] = A[i] * 2" "}")
oob=$(kfile oob.cachet "kernel k" "param N = 8" "array A : f32[N] input" "array B : f32[N] output" \
	"for (i: N) {" "  B[i] = A[i+1]" "}")
printf 'kernel k\n\001\002\377garbage\000\n' >"$tmp/bin.cachet"
: >"$tmp/empty.cachet"

expect "version" 0 "^cachet [0-9]" "$CACHET" --version
expect "help" 0 "usage: cachet COMMAND" "$CACHET" --help
expect "no args" 2 "usage" "$CACHET"
expect "unknown command" 2 "unknown command 'frob'" "$CACHET" frob
expect "check help" 0 "usage: cachet check" "$CACHET" check --help
expect "lower help" 0 "usage: cachet lower" "$CACHET" lower --help
expect "run help" 0 "usage: cachet run" "$CACHET" run --help
expect "demo help" 0 "usage: cachet demo" "$CACHET" demo --help
expect "check good" 0 "" "$CACHET" check "$good"
expect "check prints nothing" 0 "" sh -c "test -z \"\$($CACHET check $good 2>&1)\""
expect "check missing file" 2 "error" "$CACHET" check "$tmp/nope.cachet"
expect "check no file" 2 "needs a FILE" "$CACHET" check
expect "check oob" 2 "oob.cachet:6:[0-9]+: error: " "$CACHET" check "$oob"
expect "check binary" 2 "error: " "$CACHET" check "$tmp/bin.cachet"
expect "check empty" 2 "empty.cachet.*error: " "$CACHET" check "$tmp/empty.cachet"
expect "check folder" 2 "error" "$CACHET" check "$tmp"
expect "unknown option" 2 "unknown option '--frob'" "$CACHET" check "$good" --frob
expect "bad -D" 2 "NAME=INTEGER" "$CACHET" check "$good" -D N
expect "bad -D value" 2 "NAME=INTEGER" "$CACHET" check "$good" -D N=x
expect "unknown param -D" 2 "error: .*'Q'" "$CACHET" check "$good" -D Q=3
expect "-D shrink" 0 "" "$CACHET" check "$good" -D N=3
expect "-DNAME form" 0 "" "$CACHET" check "$good" -DN=3
expect "bad engine" 2 "unknown engine" "$CACHET" run "$good" --engine gpu
expect "bad repeat" 2 "repeat" "$CACHET" run "$good" --repeat 0
expect "lower text" 0 "for i" "$CACHET" lower "$good"
expect "lower json" 0 '"caches": \[\]' "$CACHET" lower "$good" --json
expect "run interp json" 0 '"verified": true' "$CACHET" run "$good" --engine interp --json
expect "run interp fields" 0 '"max_rel_error": [0-9]' "$CACHET" run "$good" --engine interp --json
expect "run interp text" 0 "verified" "$CACHET" run "$good" --engine interp
expect "run repeat" 0 '"seconds": ' "$CACHET" run "$good" --engine interp --repeat 3 --json
expect "run no-verify" 0 '"verified": null' "$CACHET" run "$good" --engine interp --no-verify --json
expect "demo" 0 "verified" "$CACHET" demo

# native runs, the code cache across processes, emit, cache subcommands
expect "emit" 0 "int cachet_k\(const float \*restrict A, float \*restrict B\)" "$CACHET" emit "$good"
expect "emit help" 0 "usage: cachet emit" "$CACHET" emit --help
expect "emit bad target" 2 "unknown target .bogus. \(host, opencl or cuda\)" "$CACHET" emit "$good" --target bogus
expect "run native first" 0 '"code_cache": "(compiled|disk)"' "$CACHET" run "$good" --json
expect "run native second process" 0 '"code_cache": "disk"' "$CACHET" run "$good" --json
expect "run native no cache" 0 '"code_cache": "compiled"' env CACHET_NO_CACHE=1 "$CACHET" run "$good" --json
expect "run with --cc clang" 0 '"verified": true' env CACHET_NO_CACHE=1 "$CACHET" run "$good" --cc clang --json
expect "run with a missing compiler" 1 "compiler 'nosuchcc' not found" env CACHET_NO_CACHE=1 "$CACHET" run "$good" --cc nosuchcc
# a compiler that miscompiles (doubles become triples): the run must say so and exit 1
cat >"$tmp/badcc" <<'SH'
#!/bin/sh
for a in "$@"; do case "$a" in *.c) sed -i 's/ \* 2\.0f/ * 3.0f/' "$a" ;; esac; done
exec cc "$@"
SH
chmod +x "$tmp/badcc"
# newly compiled code is checked before its first use (docs/LIBRARY.md): refused, exit 1
expect "miscompiled: refused before first use" 1 "a miscompile by the C compiler '$tmp/badcc'" \
	env CACHET_NO_CACHE=1 "$CACHET" run "$good" --cc "$tmp/badcc"
# past the check's budget (compile-time sizes) the run's own verification finds it
expect "verification mismatch exits 1" 1 "MISMATCH in array B" env CACHET_NO_CACHE=1 "$CACHET" run "$good" \
	-D N=4100000 --cc "$tmp/badcc"
expect "verification mismatch json" 1 '"verified": false' env CACHET_NO_CACHE=1 "$CACHET" run "$good" \
	-D N=4100000 --cc "$tmp/badcc" --json
expect "cache path" 0 "^$CACHET_CACHE_DIR\$" "$CACHET" cache path
expect "cache stats" 0 "entries +[1-9]" "$CACHET" cache stats
expect "cache verify" 0 "0 bad entries" "$CACHET" cache verify
expect "cache bad subcommand" 2 "unknown cache command" "$CACHET" cache frob
expect "cache no subcommand" 2 "cache needs" "$CACHET" cache
expect "build help" 0 "usage: cachet build" "$CACHET" build --help
expect "build needs -o" 2 "needs -o" "$CACHET" build "$good"

# simulate: counts checked by hand (64 doubles each = 8 lines each; X then Y per iteration)
copy=$(kfile copy.cachet "kernel cp" "param N = 64" "array X : f64[N] input" "array Y : f64[N] output" \
	"for (i: N) {" "  Y[i] = X[i]" "}")
expect "simulate big cache: cold misses only" 0 '"accesses": 128, "levels": \[\{"size": 4096, "line": 64, "ways": 0, "simulated_misses": 16\}' \
	"$CACHET" simulate "$copy" --cache 4K:64 --json
expect "simulate one-line cache: every access misses" 0 '"simulated_misses": 128' "$CACHET" simulate "$copy" --cache 64:64 --json
expect "simulate two-line cache" 0 '"simulated_misses": 16' "$CACHET" simulate "$copy" --cache 128:64 --json
expect "simulate direct-mapped, conflicting bases" 0 '"simulated_misses": ' "$CACHET" simulate "$copy" --cache 1K:64:1 --json
expect "simulate per reference" 0 '\{"array": "X", "stmt": 1, "write": false, "misses": \[8\]\}' "$CACHET" simulate "$copy" --cache 4K:64 --json
expect "simulate bad spec" 2 "not a power of two" "$CACHET" simulate "$copy" --cache 32K:48
expect "simulate text" 0 "L1 +4096 bytes" "$CACHET" simulate "$copy" --cache 4K:64
expect "simulate machine caches" 0 '"levels": \[\{' "$CACHET" simulate "$copy" --json
expect "probe" 0 "caches" "$CACHET" probe
expect "probe json" 0 '"device_id": ' "$CACHET" probe --json

# runtime params need a value to run, not to check or lower
rt=$(kfile rt.cachet "kernel k" "param L : runtime" "array X : f64[L] inout" "for (i: L) {" "  X[i] *= 2" "}")
expect "runtime check" 0 "" "$CACHET" check "$rt"
expect "runtime run without value" 2 "needs a value" "$CACHET" run "$rt" --engine interp
expect "runtime run" 0 '"verified": true' "$CACHET" run "$rt" -D L=77 --engine interp --json

# an f64 result computed through an f32 temp carries f32's accuracy: verified
# to f32's tolerance (the compiled code may contract the f32 multiply-add
# into an fma; issue 17, fuzz finding wrong-result-125261)
f=$(kfile mixed.cachet 'kernel mixed' 'param M = 7, N = 23' 'array A : f32[M, N] input' 'array T : f32[M] temp' \
	'array X : f64[M] input' 'array Y : f64[M] inout' 'for (i: M) {' '  T[i] = 0' \
	'  for (j: N) {' '    T[i] += A[i, j] * A[i, j]' '  }' '}' 'for (m: M) {' '  Y[m] = T[m] + X[m]' '}')
expect "f64 through an f32 temp: verified" 0 "verified" "$CACHET" run "$f"
expect "f64 through an f32 temp: verified in the interpreter" 0 "verified" "$CACHET" run "$f" --engine interp

# --json is valid JSON even where a string holds a quote or a backslash (the
# file name in predict --per-ref's "where"), and every command's object parses
jf=$(kfile 'odd"name\.cachet' "kernel k" "param N = 8, T = 4" "array X : f64[N] inout" "for (i: N) {" "  X[i] *= 2" "}" \
	"schedule { ii = split(i, T) }")
for args in "lower" "run --engine interp" "simulate --cache 4K:64" "predict --cache 4K:64 --simulate --per-ref" \
	"tiles --cache 4K:64"; do
	# shellcheck disable=SC2086
	expect "json parses: $args" 0 "" sh -c '"$1" $2 --json "$3" | python3 -c "import json, sys; json.loads(sys.stdin.read())"' \
		sh "$CACHET" "$args" "$jf"
done
expect "json escapes the file name" 0 'odd\\"name\\\\\.cachet:' "$CACHET" predict "$jf" --cache 4K:64 --per-ref --json

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
