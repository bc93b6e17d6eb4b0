#!/bin/sh
# header.sh: include/cachet.h reads as the API's spec: every section names the src/ folders that
# implement it (and they exist), every pointer of a declaration says who owns it, no marker or
# issue number, no #include below the top, and the Makefile's SONAME is the header's CACHET_SOVERSION.
#
# One line per check: "ok ..." or "FAIL ..."; the last line is "N passed, M failed".
# The checks are table-driven and each is also run on a made-up bad header, which it must refuse.
cd "$(dirname "$0")/../.." || exit 2
PY=${PYTHON:-/usr/bin/python3}
command -v "$PY" >/dev/null 2>&1 || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/check.py" <<'PY'
"""The header's rules, each a function of the header text returning what breaks it ([] = none)."""
import os
import re
import sys

SECTION = re.compile(r"^/\* -{20,} (.*?) \*/$", re.M)


def sections_name_folders(text):
    bad = []
    titles = SECTION.findall(text)
    if len(titles) < 5:
        return ["fewer than 5 sections"]
    for t in titles:
        paths = re.findall(r"src/[\w./]+", t)
        if not paths:
            bad.append(f"section '{t}' names no src/ folder")
        for p in paths:
            p = p.rstrip(".")
            if not os.path.exists(p):
                bad.append(f"section '{t}' names {p}, which does not exist")
    return bad


def pointers_annotated(text):
    bad = []
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for m in re.finditer(r"CT_API([^;]*);", code, flags=re.S):
        d = " ".join(m.group(1).split())
        name = re.search(r"(\w+)\s*\(", d).group(1)
        ret = d[: d.index(name)]
        params = d[d.index("(") + 1 : d.rindex(")")]
        if "*" in ret and not re.search(r"CT_(KEEP|GIVE|TAKE)", ret):
            bad.append(f"{name}: returned pointer not annotated")
        for p in params.split(","):
            if "*" in p and not re.search(r"CT_(KEEP|GIVE|TAKE)", p):
                bad.append(f"{name}: parameter '{p.strip()}' not annotated")
    return bad


def no_markers(text):
    return [f"line {i + 1}: {l.strip()}" for i, l in enumerate(text.split("\n"))
            if re.search(r"@@|\bissue\s*#?\d|#\d{2,}\b|\bTODO\b|\bFIXME\b", l, re.I)]


def includes_on_top(text):
    lines = text.split("\n")
    first_decl = next(i for i, l in enumerate(lines) if l.startswith(("typedef", "CT_API", "#define CT_")))
    return [f"line {i + 1}: {l.strip()}" for i, l in enumerate(lines)
            if l.startswith("#include") and i > first_decl]


def option_structs_named(text):
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [f"struct {n}: option structs end in _options" for n in re.findall(r"typedef struct (ct_\w+_opts?)\b", code)]


def printers_one_way(text):
    bad = []
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for m in re.finditer(r"CT_API([^;]*?\b(ct_\w+_print)\s*\(([^;]*?)\));", code, flags=re.S):
        d = " ".join(m.group(1).split())
        params = [p.strip() for p in " ".join(m.group(3).split()).split(",")]
        if not d.startswith("ct_status"):
            bad.append(f"{m.group(2)}: a printer returns ct_status")
        if len(params) < 3 or not params[-2].startswith("ct_format") or "FILE *out" not in params[-1]:
            bad.append(f"{m.group(2)}: a printer ends with (ct_format format, FILE *out)")
    return bad


RULES = [sections_name_folders, pointers_annotated, no_markers, includes_on_top,
         option_structs_named, printers_one_way]

BAD = {
    "sections_name_folders": "/* ---------------------------------------------------------------- a (src/run/x.c) */\n" * 5,
    "pointers_annotated": "CT_API char *ct_x(const char *s);\n",
    "no_markers": "/* @@ appended (issue #20) */\n",
    "includes_on_top": "typedef int ct_x;\n#include <x.h>\n",
    "option_structs_named": "typedef struct ct_x_opts { int a; } ct_x_opts;\n",
    "printers_one_way": "CT_API CT_GIVE char *ct_x_print(CT_KEEP ct_x *x, int json);\n",
}

text = open(sys.argv[1], encoding="utf-8").read()
npass = nfail = 0
for rule in RULES:
    errs = rule(text)
    if errs:
        nfail += 1
        print(f"FAIL {rule.__name__}: " + "; ".join(errs[:5]))
    else:
        npass += 1
        print(f"ok   {rule.__name__}")
    if rule(BAD[rule.__name__]):
        npass += 1
        print(f"ok   {rule.__name__} refuses a bad header")
    else:
        nfail += 1
        print(f"FAIL {rule.__name__} accepts a bad header")
print(f"{npass} passed, {nfail} failed")
PY

"$PY" "$tmp/check.py" include/cachet.h >"$tmp/out"
rc=$?
pass=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tmp/out")
fail=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tmp/out")
grep -v 'passed, .* failed$' "$tmp/out"
[ -z "$pass" ] && pass=0 && fail=1
[ "$rc" != 0 ] && [ "$fail" = 0 ] && fail=1

# the SONAME the Makefile builds is the header's ABI version
so=$(sed -n 's/^#define CACHET_SOVERSION \([0-9][0-9]*\)$/\1/p' include/cachet.h)
mk=$(make -s --no-print-directory -f Makefile BUILD="$tmp/none" --eval 'print-soname: ; @echo $(SONAME)' print-soname 2>/dev/null)
if [ -n "$so" ] && [ "$mk" = "libcachet.so.$so" ]; then
	pass=$((pass + 1))
	echo "ok   the Makefile's SONAME is libcachet.so.\$CACHET_SOVERSION ($mk)"
else
	fail=$((fail + 1))
	echo "FAIL the Makefile's SONAME '$mk' is not libcachet.so.$so"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
