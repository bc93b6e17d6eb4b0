"""test_runtime.py: 10,000 calls without memory growth; two threads calling kernels at once; the GIL released."""
import gc
import os
import threading
import time
import tracemalloc

import numpy as np

import cachet
from test_errors import AXPY
from test_numpy import MATMUL


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_10000_calls_no_growth():
    k = cachet.Kernel(AXPY)
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    bad = np.ones(64, np.float64)
    k(x, y)
    for _ in range(500):                # warm up caches of cffi, numpy and the allocator
        k(x, y)
    tracemalloc.start()
    gc.collect()                        # the error path's tracebacks are cycles: count what outlives them
    rss0 = rss_kib()
    snap0 = tracemalloc.take_snapshot()
    for i in range(10000):
        k(x, y)
        if i % 10 == 0:                 # the error path too (1,000 times)
            try:
                k(bad, y)
            except TypeError:
                pass
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    rss1 = rss_kib()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename") if s.size_diff > 0)
    assert grown < 64 * 1024, f"Python allocations grew by {grown} bytes"
    if "asan" not in os.environ.get("LD_PRELOAD", ""):  # ASan's quarantine holds freed memory
        assert rss1 - rss0 < 2048, f"RSS grew by {rss1 - rss0} KiB"
    np.testing.assert_allclose(y, np.full(64, 2.5 * 10501, np.float32), rtol=1e-6)


def test_two_threads_concurrently():
    k1 = cachet.Kernel(MATMUL.replace(": T[", ": f64["))
    k2 = cachet.Kernel(AXPY)
    errors = []

    def mm():
        rng = np.random.default_rng(0)
        try:
            for _ in range(200):
                a, b = rng.random((17, 9)), rng.random((9, 13))
                c = np.zeros((17, 13))
                k1(a, b, c)
                np.testing.assert_allclose(c, a @ b, rtol=1e-12)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def shared(seed):
        """The same Kernel object from two threads at once."""
        try:
            for n in range(1, 300):
                x = np.full(n, seed, np.float32)
                y = np.ones(n, np.float32)
                k2(x, y)
                assert (y == 2.5 * seed + 1).all()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=mm), threading.Thread(target=shared, args=(1,)),
          threading.Thread(target=shared, args=(2,))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_gil_released_during_call():
    k = cachet.Kernel(MATMUL.replace(": T[", ": f64[").replace("schedule {\n  jj = split(j, 8)\n}\n", ""))
    n = 160
    a, b, c = np.ones((n, n)), np.ones((n, n)), np.zeros((n, n))
    k(a, b, c)                          # compile first
    stamps = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    spans = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.3 or len(spans) < 5:
        s0 = time.perf_counter()
        k(a, b, c)
        spans.append((s0, time.perf_counter()))
    stop.set()
    t.join()
    # a tick is Python code: with the GIL held through the C call, a tick can only slip in at the
    # call's edges (one per call at most: a ctypes.PyDLL usleep gives 30 in 30 calls); released, the
    # ticker runs all along (a CDLL usleep of 10 ms: 500 in 30 calls)
    inside = sum(1 for s in stamps if any(lo < s < hi for lo, hi in spans))
    print(f"{inside} ticks inside {len(spans)} calls")
    assert inside > 2 * len(spans), f"{inside} ticks inside {len(spans)} calls"


def _wait_env_after_import(env):
    """GOMP_SPINCOUNT and OMP_WAIT_POLICY as the C library sees them after `import cachet`."""
    import subprocess
    import sys
    code = ("import ctypes, cachet\n"
            "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p\n"
            "print(libc.getenv(b'GOMP_SPINCOUNT'), libc.getenv(b'OMP_WAIT_POLICY'))\n")
    full = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=full, check=True, capture_output=True, text=True)
    return out.stdout.split()


def test_import_bounds_the_spin_unless_the_user_chose():
    spin, policy = _wait_env_after_import({})
    assert policy == "None" and spin.startswith("b'") and int(spin[2:-1]) > 0
    assert _wait_env_after_import({"OMP_WAIT_POLICY": "passive"}) == ["None", "b'passive'"]
    assert _wait_env_after_import({"GOMP_SPINCOUNT": "7"}) == ["b'7'", "None"]
