"""first_kernel.py: write a kernel as a string, run it in place on numpy arrays, compare with numpy.

Run: make python && PYTHONPATH=build/python /usr/bin/python3 examples/python/first_kernel.py
"""
import numpy as np

import cachet

# C += A @ B with sizes known only at run time; the j loop in blocks of 16
k = cachet.Kernel("""
kernel matmul
param M : runtime
param N : runtime
param K : runtime
array A : f32[M, K] input
array B : f32[K, N] input
array C : f32[M, N] inout
for (i: M, j: N, k: K) {
  C[i, j] += A[i, k] * B[k, j]
}
schedule {
  jj = split(j, 16)
  reorder(i, k, j, jj)
}
""")
print(k)                                   # the call's signature

rng = np.random.default_rng(0)
a = rng.standard_normal((100, 70), dtype=np.float32)
b = rng.standard_normal((70, 50), dtype=np.float32)
c = np.zeros((100, 50), np.float32)
k(a, b, c)                                 # M, N, K from the shapes; C written in place
err = np.abs(c - a @ b).max()
print(f"max |C - A @ B| = {err:.2e}")
assert err < 1e-3

try:
    k(a, b, c.astype(np.float64))          # checked before anything runs
except TypeError as e:
    print("refused:", e)
