# pyentry.py: the differential fuzzer's Python entry (tests/fuzz/difffuzz.c, docs/FUZZ.md): runs
# DIR/kernel.cachet through cachet.Kernel on numpy arrays and writes back what it wrote.
# DIR/spec.txt lists each non-temp array ("array I NAME DTYPE STRIDED WRITTEN RANK EXTENTS... ORDER...")
# with its input DIR/inI.bin (dense, in the declared layout), the runtime params ("param NAME VALUE")
# and "threads T". Arrays declared `strided` are given as non-contiguous views (every second
# element of a bigger array). Each written array goes to DIR/outI.bin in the declared layout.
# Prints "compile S" (the seconds of k.compile()). Exit 0, or 1 with the exception on stderr.
import sys
import time

import numpy as np

import cachet

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def main(d):
    arrays, params, threads = [], {}, 1
    with open(f"{d}/spec.txt") as f:
        for line in f:
            w = line.split()
            if w[0] == "array":
                i, name, dt, strided, written, rank = int(w[1]), w[2], w[3], int(w[4]), int(w[5]), int(w[6])
                ext = [int(x) for x in w[7:7 + rank]]
                order = [int(x) for x in w[7 + rank:7 + 2 * rank]]
                arrays.append((i, name, DTYPES[dt], strided, written, ext, order))
            elif w[0] == "param":
                params[w[1]] = int(w[2])
            elif w[0] == "threads":
                threads = int(w[1])
    with open(f"{d}/kernel.cachet") as f:
        text = f.read()
    k = cachet.Kernel(text, threads=threads)
    t0 = time.perf_counter()
    k.compile()
    print(f"compile {time.perf_counter() - t0:.3f}")
    views = []
    for i, name, dt, strided, written, ext, order in arrays:
        phys_shape = [ext[o] for o in order]
        phys = np.fromfile(f"{d}/in{i}.bin", dtype=dt).reshape(phys_shape)
        if strided:
            big = np.zeros(phys_shape[:-1] + [2 * phys_shape[-1]], dtype=dt)
            view = big[..., ::2]
            view[...] = phys
            phys = view
        # logical[i0, i1, ...] = phys[i_order[0], i_order[1], ...]
        views.append(phys.transpose(np.argsort(order)))
    k(*views, **params)
    for (i, name, dt, strided, written, ext, order), v in zip(arrays, views):
        if written:
            np.ascontiguousarray(v.transpose(order)).tofile(f"{d}/out{i}.bin")


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as e:  # the driver reads the last "...Error" line
        print(f"{type(e).__name__}Error: {e}" if not type(e).__name__.endswith("Error") else f"{type(e).__name__}: {e}")
        sys.exit(1)
