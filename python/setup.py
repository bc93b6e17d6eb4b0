"""setup.py: generates cachet/_cachet_ffi.py from include/cachet.h and bundles libcachet.so.N.

N is CACHET_SOVERSION in the header. The library comes from $CACHET_LIBRARY
if set, else ../build/libcachet.so.N (run `make` first). Without one the
package is built without a bundled library and finds libcachet.so.N through
the dynamic loader at import (after `make install`) or through $CACHET_LIBRARY.
"""
import os
import re
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_ffi  # noqa: E402


def _header():
    for p in (os.environ.get("CACHET_HEADER"), os.path.join(ROOT, "include", "cachet.h")):
        if p and os.path.exists(p):
            return p
    sys.exit("cachet: include/cachet.h not found (set CACHET_HEADER)")


def _soname():
    """libcachet.so.N, N from the header's CACHET_SOVERSION (the loader in _lib.py names the same)."""
    with open(_header(), encoding="utf-8") as f:
        m = re.search(r"^#define CACHET_SOVERSION (\d+)$", f.read(), flags=re.M)
    if not m:
        sys.exit("cachet: CACHET_SOVERSION not found in the header")
    return "libcachet.so." + m.group(1)


def _library():
    p = os.environ.get("CACHET_LIBRARY") or os.path.join(ROOT, "build", _soname())
    return os.path.realpath(p) if os.path.exists(p) else None


class BuildPy(build_py):
    """build_py plus the generated ffi module and the bundled library."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "cachet")
        os.makedirs(out, exist_ok=True)
        gen_ffi.build(_header(), out)
        lib = _library()
        if lib:
            shutil.copyfile(lib, os.path.join(out, _soname()))
        else:
            print(f"cachet: no {_soname()} to bundle (run 'make' first); the package will use "
                  f"$CACHET_LIBRARY or the system's {_soname()}", file=sys.stderr)


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
