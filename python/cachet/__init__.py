"""cachet: write a loop-nest kernel, run it in place on numpy arrays, tune it, ship it.

A binding of libcachet (include/cachet.h) through cffi's ABI mode: the
library does all the work (parsing, checks, planning, code generation, the
code cache, the model, the tuner); this package checks numpy arrays and
turns results into dicts. See docs/PYTHON.md.
"""

import json as _json

from ._lib import ffi as _ffi, lib as _lib, library_path

# Threads waiting at an OpenMP barrier spin a bounded time, then sleep, as the
# cachet tool arranges (docs/CLI.md, unless OMP_WAIT_POLICY or GOMP_SPINCOUNT
# is set): libgomp reads the environment when the first parallel kernel is
# loaded, so this comes before.
_lib.ct_threads_wait_default()
from ._kernel import ArrayInfo, CachetError, Kernel, KernelError, RunResult, load
from ._kernel import _capture, _ctx_error

__all__ = ["Kernel", "load", "probe", "cache_path", "KernelError", "CachetError",
           "ArrayInfo", "RunResult", "library_path", "__version__"]

__version__ = "0.1.0"

CT_PROBE_MEASURE = 0x27
CT_PROBE_OPENCL = 1 << 3
CT_PROBE_CUDA = 1 << 4


def probe(measure: bool = False, opencl: bool = False, cuda: bool = False) -> dict:
    """The machine as libcachet sees it (`cachet probe --json`), as a dict.

    measure: also run the microbenchmarks (FMA peak, bandwidth, latency;
    about a second); opencl: also list the OpenCL devices; cuda: also list
    the CUDA devices (with measure: their copy bandwidth and fp32 peak).
    """
    ctx = _lib.ct_ctx_new()
    if ctx == _ffi.NULL:
        raise MemoryError("ct_ctx_new failed")
    try:
        flags = ((CT_PROBE_MEASURE if measure else 0) | (CT_PROBE_OPENCL if opencl else 0)
                 | (CT_PROBE_CUDA if cuda else 0))
        st = _lib.ct_probe_run(ctx, flags, _ffi.NULL)
        if st:
            raise _ctx_error(ctx, st, "probe")
        st, text = _capture(lambda f: _lib.ct_probe_print(ctx, _lib.CT_FORMAT_JSON, f))
        if st:
            raise _ctx_error(ctx, st, "probe")
        return _json.loads(text)
    finally:
        _lib.ct_ctx_free(ctx)


def cache_path() -> str:
    """The cache folder compiled kernels and tuning stores live in (shared with the cachet tool)."""
    ctx = _lib.ct_ctx_new()
    if ctx == _ffi.NULL:
        raise MemoryError("ct_ctx_new failed")
    try:
        return _ffi.string(_lib.ct_cache_path(ctx)).decode()
    finally:
        _lib.ct_ctx_free(ctx)
