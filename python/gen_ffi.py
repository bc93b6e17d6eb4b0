"""gen_ffi.py: turn include/cachet.h into cffi's out-of-line ABI module cachet/_cachet_ffi.py.

The binding's declarations are the public header itself, cleaned of what cffi's
parser does not take (comments, preprocessor lines, the ownership macros), so the
package can never drift from the library it was built with. The generated module
holds the parsed types only: importing it needs neither pycparser nor a compiler.
"""
import re
import sys

# libc calls the binding needs: the JSON printers of the C API write to a FILE*,
# which open_memstream turns into a string without a temporary file.
LIBC_CDEF = """
typedef struct _IO_FILE FILE;
FILE *open_memstream(char **ptr, size_t *sizeloc);
int fclose(FILE *f);
void free(void *p);
"""


def header_cdef(text):
    """Return the declarations of cachet.h in the subset of C that cffi parses."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out, skip = [], False
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("#ifdef __cplusplus"):
            skip = True
            continue
        if skip:
            skip = not s.startswith("#endif")
            continue
        if s.startswith("#"):
            # keep integer constants (CT_SIM_MAX_LEVELS ...); drop the rest
            if re.match(r"#\s*define\s+\w+\s+\d+\s*$", s):
                out.append(s)
            continue
        out.append(line)
    body = "\n".join(out)
    body = re.sub(r"\b(CT_API|CT_GIVE|CT_TAKE|CT_KEEP)\b", "", body)
    return LIBC_CDEF + body


def build(header_path, out_dir):
    """Write out_dir/_cachet_ffi.py from the header at header_path."""
    import os
    import cffi
    with open(header_path, encoding="utf-8") as f:
        cdef = header_cdef(f.read())
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source("_cachet_ffi", None)
    ffi.emit_python_code(os.path.join(out_dir, "_cachet_ffi.py"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: gen_ffi.py include/cachet.h OUT_DIR")
    build(sys.argv[1], sys.argv[2])
