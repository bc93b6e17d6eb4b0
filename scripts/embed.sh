#!/bin/sh
# embed.sh NAME FILE...: the text of FILEs as a C array of lines `static const char *const NAME[]` (NULL-terminated), for sources that generated code carries (src/gen/distgen.c); #include "ir/..." lines are left out.
set -e
name=$1
shift
echo "static const char *const $name[] = {"
for f in "$@"; do
	sed -e '/^#include "ir\//d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n",/' "$f"
done
echo "	0"
echo "};"
