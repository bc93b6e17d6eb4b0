"""setup.py: generates cachet/_cachet_ffi.py from include/cachet.h and bundles libcachet.so.0.

The library comes from $CACHET_LIBRARY if set, else ../build/libcachet.so.0
(run `make` first). Without one the package is built without a bundled
library and finds libcachet.so.0 through the dynamic loader at import
(after `make install`) or through $CACHET_LIBRARY.
"""
import os
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


def _library():
    p = os.environ.get("CACHET_LIBRARY") or os.path.join(ROOT, "build", "libcachet.so.0")
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
            shutil.copyfile(lib, os.path.join(out, "libcachet.so.0"))
        else:
            print("cachet: no libcachet.so.0 to bundle (run 'make' first); the package will use "
                  "$CACHET_LIBRARY or the system's libcachet.so.0", file=sys.stderr)


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
