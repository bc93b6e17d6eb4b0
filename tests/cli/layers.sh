#!/bin/sh
# layers.sh: the folders of src/ form the layers docs/ARCHITECTURE.md documents, with no edge upward.
#
# The order is read from one place, the layer table of docs/ARCHITECTURE.md
# (rows "| N | `folder` | ... |", lowest first). A folder may use only
# folders of a lower row. Two graphs of folders are derived and checked:
#   includes: every `#include "folder/..."` of src/*/*.[ch];
#   calls:    every symbol a folder's objects ($CACHET_BUILD/obj/src/F/*.o)
#             leave undefined (nm -u) that another folder's objects define
#             (skipped with a message when the objects or nm are missing).
# Checks: every folder of src/ has a row; each edge goes down the table; the
# graphs have no cycle (tsort); and, table-driven, the checker itself refuses
# a made-up upward edge and a made-up cycle, so that a broken guard cannot pass.
#
# One line per check: "ok ..." or "FAIL ..."; the last line is "N passed, M failed".
cd "$(dirname "$0")/../.." || exit 2
BUILD=${CACHET_BUILD:-build}
DOC=docs/ARCHITECTURE.md
verbose=1
. tests/cli/lib/expect.sh

# The documented order: "rank folder" per row of the layer table.
awk -F'|' '/^\| *[0-9]+ *\| *`[a-z]+`/ { r = $2; f = $3; gsub(/[ `]/, "", r); gsub(/[ `]/, "", f); print r, f }' \
	"$DOC" >"$tmp/order" 2>/dev/null
if [ -s "$tmp/order" ]; then
	ok "$DOC: layer table of $(wc -l <"$tmp/order") folders"
else
	bad "$DOC: no layer table (rows like '| 0 | \`core\` | ... |')"
fi

# Every folder of src/ has a row (a new folder must be placed on purpose).
for d in src/*/; do
	f=$(basename "$d")
	if awk -v f="$f" '$2 == f { found = 1 } END { exit !found }' "$tmp/order"; then
		ok "src/$f has a layer"
	else
		bad "src/$f is not in the layer table of $DOC"
	fi
done

# Folder edges "from to where" from the includes.
for file in src/*/*.c src/*/*.h; do
	from=$(echo "$file" | cut -d/ -f2)
	sed -n 's|^[ 	]*#[ 	]*include[ 	]*"\([a-z_]*\)/.*|\1|p' "$file" | while read -r to; do
		[ "$to" != "$from" ] && echo "$from $to $file"
	done
done | sort -u >"$tmp/inc"

# Folder edges from the symbols the objects use, where they are built.
: >"$tmp/call"
if [ -d "$BUILD/obj/src" ] && command -v nm >/dev/null 2>&1; then
	for d in "$BUILD"/obj/src/*/; do
		f=$(basename "$d")
		for o in "$d"*.o; do
			# only objects of sources that exist (a moved file leaves its old object behind)
			[ -f "src/$f/$(basename "$o" .o).c" ] || continue
			nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }'
			nm -u "$o" | awk -v f="$f" -v o="$(basename "$o" .o)" 'NF == 2 { print $2, f, o }' >>"$tmp/und"
		done
	done | sort -u >"$tmp/def"
	if [ -s "$tmp/und" ]; then
		sort "$tmp/und" -o "$tmp/und"
		# symbol from file to: an edge where a folder uses another's symbol
		join "$tmp/und" "$tmp/def" | awk '$2 != $4 { print $2, $4, "src/" $2 "/" $3 ".c:" $1 }' | sort -u >"$tmp/call"
	fi
	ok "call graph from the objects of $BUILD/obj/src"
else
	echo "skip call graph: no objects in $BUILD/obj/src or no nm"
fi

# check_edges NAME FILE: each edge "from to where" of FILE goes to a lower row.
check_edges() {
	awk -v name="$1" 'NR == FNR { rank[$2] = $1; next }
		!($1 in rank) || !($2 in rank) { print "unknown " $1 " -> " $2 " (" $3 ")"; next }
		rank[$2] >= rank[$1] { print "upward " $1 " -> " $2 " (" $3 ")" }' "$tmp/order" "$2"
}
# has_cycle FILE: whether the folder graph of FILE has a cycle (tsort names one).
has_cycle() {
	awk '{ print $1, $2 }' "$1" | sort -u | tsort >/dev/null 2>"$tmp/tsort"
	[ -s "$tmp/tsort" ]
}

for g in inc call; do
	[ "$g" = inc ] && what=includes || what=calls
	[ "$g" = call ] && [ ! -s "$tmp/call" ] && continue
	check_edges "$what" "$tmp/$g" >"$tmp/$g.bad"
	if [ -s "$tmp/$g.bad" ]; then
		while read -r line; do bad "$what: $line"; done <"$tmp/$g.bad"
	else
		n=$(awk '{ print $1, $2 }' "$tmp/$g" | sort -u | wc -l)
		ok "$what: $n folder edges, all downward"
	fi
	if has_cycle "$tmp/$g"; then
		bad "$what: the folder graph has a cycle through: $(sed -n 's/^tsort: \([a-z_]*\)$/\1/p' "$tmp/tsort" | sort -u | tr '\n' ' ')"
	else
		ok "$what: the folder graph has no cycle"
	fi
done

# The checker itself, table-driven: made-up graphs it must refuse or accept.
# name | edges (from>to, comma-separated) | expected: up, cycle or clean
while IFS='|' read -r name edges want; do
	echo "$edges" | tr ',' '\n' | awk -F'>' 'NF == 2 { print $1, $2, "made-up" }' >"$tmp/fake"
	got=clean
	has_cycle "$tmp/fake" && got=cycle
	[ "$got" = clean ] && [ -n "$(check_edges self "$tmp/fake")" ] && got=up
	if [ "$got" = "$want" ]; then
		ok "guard: $name is $want"
	else
		bad "guard: $name gave $got, want $want"
	fi
done <<'EOF'
ir uses lang|ir>lang|up
gen uses core|gen>core|clean
engine uses gen and jit|engine>gen,engine>jit|clean
lang and plan use each other|lang>plan,plan>lang|cycle
core uses tune|core>tune|up
EOF

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
