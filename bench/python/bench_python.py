"""bench_python.py: the Python binding's per-call overhead and sgemm from Python vs numpy.matmul (make bench-python).

1. A cached tiny kernel (axpy on 16 floats, sizes inferred from the shapes)
   called from Python, against the same compiled handle called in a C loop
   (bench/python/callraw.c) and against numpy's own call overhead (a 2x2 and
   a 4x4 matmul, np.add on 16 floats). Each row: the best wall-clock time of
   7 rounds and the median CPU time (process time: on a shared, loaded
   machine the wall clock also counts the time the process waits for a core).
2. examples/sgemm.cachet (C += A B, f32, all cores) from Python against
   numpy.matmul (Debian's numpy: OpenBLAS) at 64 .. 4096; the ratio is
   numpy's time over cachet's (above 1: cachet faster). numpy runs at its
   best whatever the environment says (openblas_at_best: the verified
   fastest OpenBLAS kernel set; --openblas-coretype NAME fixes it) on as
   many threads as cachet (threadpoolctl); the header says both.
"""
import argparse
import os
import platform
import statistics
import sys
import time
import subprocess
import timeit


# Variables that would hold numpy's OpenBLAS below its best: a forced kernel set, a cache size, a
# thread count fixed at load. Their values are kept for the header (CACHET_BENCH_ENV_<NAME>).
PEER_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def openblas_at_best():
    """Re-run this script with numpy's OpenBLAS at its best, whatever the environment says.

    numpy's OpenBLAS reads OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE only when it loads, so this runs
    before numpy is imported: the probe (bench/common/openblas_best.c, CACHET_BENCH_OPENBLAS_BEST,
    which make bench-python sets) verifies and times the library's own pick with both variables
    removed, each kernel set and the environment's values, and the script re-executes with the
    fastest correct one (--openblas-coretype NAME fixes it instead; the bench stops when it fails
    verification). The thread-count variables are removed too: numpy's threads are set to
    cachet's (threadpoolctl) in sgemm(). The header says all of it.
    """
    fixed = None
    if "--openblas-coretype" in sys.argv[1:-1]:
        i = sys.argv.index("--openblas-coretype")
        fixed = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    if os.environ.get("CACHET_BENCH_OPENBLAS_PICKED"):
        return
    os.environ["CACHET_BENCH_OPENBLAS_PICKED"] = "1"
    for name in PEER_ENV:
        os.environ["CACHET_BENCH_ENV_" + name] = os.environ.get(name, "(unset)")
    for name in PEER_ENV[2:]:
        os.environ.pop(name, None)
    probe = os.environ.get("CACHET_BENCH_OPENBLAS_BEST")
    if not probe:
        os.environ["CACHET_BENCH_PEER_NOTE"] = ("not probed: CACHET_BENCH_OPENBLAS_BEST not set "
                                                "(make bench-python sets it); the environment's values")
    else:
        best = subprocess.run([probe] + (["--coretype", fixed] if fixed else []),
                              stdout=subprocess.PIPE, text=True, check=False)
        lines = dict(line.split(" ", 1) for line in best.stdout.splitlines() if " " in line)
        if best.returncode != 0 or not {"coretype", "l2", "note"} <= lines.keys():
            print(f"bench: {probe}: {lines.get('note', 'failed')}", file=sys.stderr)
            if fixed:
                sys.exit(f"bench: --openblas-coretype {fixed}: not usable here")
            os.environ["CACHET_BENCH_PEER_NOTE"] = "not probed: openblas_best failed; the environment's values"
        else:
            for name, key in (("OPENBLAS_CORETYPE", "coretype"), ("OPENBLAS_L2_SIZE", "l2")):
                if lines[key] == "-":
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = lines[key]
            os.environ["CACHET_BENCH_PEER_NOTE"] = lines["note"]
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable] + sys.argv)


def blas_info():
    """numpy's BLAS as threadpoolctl sees it (a dict), or None without threadpoolctl."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    info = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    return info[0] if info else {}


def numpy_threads(threads):
    """numpy's BLAS on `threads` threads, as cachet's sgemm (threadpoolctl); the limiter, or None."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl.threadpool_limits(limits=threads, user_api="blas")


def peer_lines(threads):
    """The header lines that say how numpy.matmul runs: its BLAS, kernel set, threads, the environment."""
    had = " ".join(f"{n}={os.environ.get('CACHET_BENCH_ENV_' + n, '(unset)')}" for n in PEER_ENV)
    info = blas_info()
    if info is None:
        blas = "numpy's BLAS: unknown (no threadpoolctl: apt install python3-threadpoolctl)"
    elif not info:
        blas = "numpy's BLAS: none that threadpoolctl knows"
    else:
        blas = (f"numpy's BLAS: {info.get('internal_api')} {info.get('version')} ({info.get('filepath')}), "
                f"kernel set {info.get('architecture')}, {info.get('num_threads')} threads "
                f"(set to cachet's {threads}), {info.get('threading_layer')}")
    note = os.environ.get("CACHET_BENCH_PEER_NOTE", "not probed")
    lines = [f"peer: numpy.matmul; OpenBLAS {note}", blas, f"environment had {had}; the thread-count variables removed"]
    chosen = note.split()[2] if note.startswith("kernel set ") else None
    if chosen and info and str(info.get("architecture", "")).lower() != chosen.lower():
        lines.append(f"WARNING: numpy's BLAS runs kernel set {info.get('architecture')}, not the probe's {chosen}: "
                     "numpy does not load the OpenBLAS the probe measured (update-alternatives --display libblas.so.3)")
    return lines


openblas_at_best()

import numpy as np  # noqa: E402  (after openblas_at_best: the variable counts only at load)

import cachet  # noqa: E402
from cachet._lib import ffi  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

AXPY = """kernel axpy16
param L : runtime
array X : f32[L] input
array Y : f32[L] inout
for (i: L) {
  Y[i] = 2.5 * X[i] + Y[i]
}
"""


def cpu_line():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def rounds_us(fn, number, repeat=7):
    """Wall-clock and CPU (process) microseconds per call of each of `repeat` rounds of fn(number)."""
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn(number)
        cpu.append((time.process_time() - c) / number * 1e6)
        wall.append((time.perf_counter() - w) / number * 1e6)
    return wall, cpu


def stmt_us(stmt, g, number, repeat=7):
    return rounds_us(timeit.Timer(stmt, globals=g).timeit, number, repeat)


def overhead(quick):
    k = cachet.Kernel(AXPY)
    x, y = np.ones(16, np.float32), np.zeros(16, np.float32)
    k(x, y)
    h = k.compile()
    number = 20000 if quick else 200000
    raw_lib = os.environ.get("CACHET_BENCH_RAW")
    raw = None
    if raw_lib:
        import cffi
        rffi = cffi.FFI()  # the package's ffi is out-of-line (no cdef): addresses cross as integers
        rffi.cdef("double cachet_bench_raw_ns(void *h, void **args, int64_t *params, int64_t n);")
        rlib = rffi.dlopen(raw_lib)
        addr = [int(ffi.cast("uintptr_t", ffi.from_buffer(v))) for v in (x, y)]
        args = rffi.new("void *[]", [rffi.cast("void *", a) for a in addr])
        params = rffi.new("int64_t[]", [16])
        rh = rffi.cast("void *", int(ffi.cast("uintptr_t", h)))
        raw = rounds_us(lambda n: rlib.cachet_bench_raw_ns(rh, args, params, n), number * 10)
    from cachet._lib import lib
    g = {"lib": lib, "h": h, "argv": ffi.new("void *[]", [ffi.from_buffer(x), ffi.from_buffer(y)]),
         "pv": ffi.new("int64_t[]", [16]),
         "k": k, "x": x, "y": y, "np": np, "a2": np.ones((2, 2), np.float32),
         "a4": np.ones((4, 4), np.float32), "o2": np.empty((2, 2), np.float32)}
    pos, named = "cachet k(x, y) from Python (axpy, 16 floats)", "cachet k(X=x, Y=y) by name"
    rows = [(pos, stmt_us("k(x, y)", g, number)),
            ("cffi call of the handle, prebuilt C arrays, no checks",
             stmt_us("lib.ct_callable_call(h, argv, pv)", g, number)),
            (named, stmt_us("k(X=x, Y=y)", g, number)),
            ("numpy a @ a (2x2 f32)", stmt_us("a2 @ a2", g, number)),
            ("numpy np.matmul(a, a, out=o) (2x2 f32)", stmt_us("np.matmul(a2, a2, out=o2)", g, number)),
            ("numpy a @ a (4x4 f32)", stmt_us("a4 @ a4", g, number)),
            ("numpy np.add(x, y, out=y) (16 f32)", stmt_us("np.add(x, y, out=y)", g, number))]
    if raw is not None:
        rows.insert(0, ("raw C loop: ct_callable_call on the same handle", raw))
    print("## Per-call overhead (7 rounds: wall-clock best, CPU time median)\n")
    print("| call | us per call (wall, best) | us per call (CPU, median) |")
    print("|---|---:|---:|")
    for name, (wall, cpu) in rows:
        print(f"| {name} | {min(wall):.3f} | {statistics.median(cpu):.3f} |")
    if raw is not None:
        us = {name: (min(wall), statistics.median(cpu)) for name, (wall, cpu) in rows}
        r = us["raw C loop: ct_callable_call on the same handle"]
        print(f"\nPython call overhead above the raw C call: {us[pos][0] - r[0]:.2f} us wall-clock, "
              f"{us[pos][1] - r[1]:.2f} us CPU (by name: {us[named][0] - r[0]:.2f} us wall-clock, "
              f"{us[named][1] - r[1]:.2f} us CPU)")
    print()


def sgemm(sizes, threads):
    path = os.path.join(ROOT, "examples", "sgemm.cachet")
    print(f"## sgemm C += A B (f32, {threads or 'all'} threads): cachet from Python vs numpy.matmul\n")
    print("| n | cachet ms | cachet GFLOP/s | numpy ms | numpy GFLOP/s | numpy/cachet |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        k = cachet.load(path, params={"M": n, "N": n, "K": n}, threads=threads)
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        c = np.zeros((n, n), np.float32)
        out = np.empty((n, n), np.float32)
        k(a, b, c)
        ref = a @ b
        assert np.allclose(c, ref, rtol=1e-3, atol=1e-2 * np.sqrt(n)), f"sgemm {n} differs from numpy"
        np.matmul(a, b, out=out)
        flops = 2.0 * n ** 3
        reps = max(3, min(200, int(2e9 / flops)))

        def timed(fn):
            best = float("inf")
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t)
            return best
        # cachet accumulates into C; its time does not depend on C's values. OpenBLAS's idle
        # threads spin for a while after each call (about 2^28 cycles), and cachet's OpenMP
        # threads would share the cores with them: each block of timings starts after a pause
        # longer than that, and the blocks alternate, the best of each side kept.
        tc = tn = float("inf")
        for _ in range(3):
            time.sleep(0.3)
            tc = min(tc, timed(lambda: k(a, b, c)))
            time.sleep(0.3)
            tn = min(tn, timed(lambda: np.matmul(a, b, out=out)))
        print(f"| {n} | {tc * 1e3:.3f} | {flops / tc / 1e9:.1f} | {tn * 1e3:.3f} | {flops / tn / 1e9:.1f} "
              f"| {tn / tc:.2f} |")
        k.close()
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls, sizes up to 1024")
    ap.add_argument("--sizes", default=None, help="comma-separated sgemm sizes (default 64..4096)")
    ap.add_argument("--threads", type=int, default=0, help="threads of the sgemm kernel (0: all cores)")
    ap.add_argument("--openblas-coretype", metavar="NAME",
                    help="numpy's OpenBLAS kernel set, fixed (default: the probe's verified fastest; taken "
                         "before argparse runs, listed here for --help)")
    ap.add_argument("--peer-only", action="store_true",
                    help="the header only: how numpy's BLAS runs (tests/cli/openblas_probe.sh)")
    ap.add_argument("--overhead-only", action="store_true", help="the per-call overhead table only (no sgemm)")
    args = ap.parse_args()
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes else
             [64, 128, 256, 512, 1024] + ([] if args.quick else [2048, 4096]))
    print(f"# cachet Python bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"CPU: {cpu_line()} ({os.cpu_count()} CPUs online)")
    print(f"Python {platform.python_version()} ({sys.executable}), numpy {np.__version__}, "
          f"libcachet {cachet.library_path}")
    threads = args.threads or os.cpu_count()
    numpy_threads(threads)  # holds until restored (threadpoolctl restores only when asked)
    for line in peer_lines(threads):
        print(line)
    print()
    if args.peer_only:
        return
    overhead(args.quick)
    if not args.overhead_only:
        sgemm(sizes, args.threads)


if __name__ == "__main__":
    main()
