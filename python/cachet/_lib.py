"""_lib.py: find and load libcachet (cffi ABI mode: dlopen, no compiler at import)."""
import os

try:
    from ._cachet_ffi import ffi
except ImportError as e:  # pragma: no cover - a package built without gen_ffi.py
    raise ImportError(
        "cachet: the package was not built (cachet/_cachet_ffi.py is missing); "
        "run 'make python' and use PYTHONPATH=build/python, or 'pip install ./python'"
    ) from e

_HERE = os.path.dirname(os.path.abspath(__file__))
# the library's SONAME: CACHET_SOVERSION of include/cachet.h (a test holds them equal)
SONAME = "libcachet.so.1"


def _candidates():
    """Where the library may be, in the order tried (documented in docs/PYTHON.md)."""
    env = os.environ.get("CACHET_LIBRARY")
    if env:
        return [env]
    return [os.path.join(_HERE, SONAME), SONAME]


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("cachet: cannot load libcachet: " + "; ".join(errors)
                      + f" (set CACHET_LIBRARY to the path of {SONAME})")


lib, library_path = _load()
libc = ffi.dlopen(None)
