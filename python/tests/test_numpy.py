"""test_numpy.py: kernels run in place on numpy arrays match numpy (a @ b, np.einsum, stencils), all four dtypes."""
import numpy as np
import pytest

import cachet

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}

MATMUL = """kernel mm
param M : runtime
param N : runtime
param K : runtime
array A : T[M, K] input
array B : T[K, N] input
array C : T[M, N] inout
for (i: M, j: N, k: K) {
  C[i, j] += A[i, k] * B[k, j]
}
schedule {
  jj = split(j, 8)
}
"""


def rand(shape, dtype, rng, order="C"):
    if np.issubdtype(dtype, np.integer):
        a = rng.integers(-8, 9, size=shape).astype(dtype)
    else:
        a = rng.uniform(-1, 1, size=shape).astype(dtype)
    return np.asarray(a, order=order)


def close(got, want, dtype):
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("t", list(DTYPES))
def test_matmul_runtime_sizes_all_dtypes(t):
    dt = DTYPES[t]
    k = cachet.Kernel(MATMUL.replace(": T[", f": {t}["))
    rng = np.random.default_rng(1)
    for m, n, kk in [(5, 19, 7), (16, 8, 1), (33, 17, 12)]:
        a, b, c = rand((m, kk), dt, rng), rand((kk, n), dt, rng), rand((m, n), dt, rng)
        want = c + a @ b
        k(a, b, c)                    # M, N, K inferred from the shapes
        close(c, want, dt)
    # by name, and with the runtime params given explicitly
    c2 = np.zeros((4, 3), dt)
    k(A=np.ones((4, 2), dt), B=np.ones((2, 3), dt), C=c2, M=4, N=3, K=2)
    close(c2, np.full((4, 3), 2, dt), dt)


@pytest.mark.parametrize("t", list(DTYPES))
def test_einsum_contraction_all_dtypes(t):
    """A two-index transform with a temp: B[a,b] += C2[q,b] * sum_p C1[p,a] A[p,q]."""
    dt = DTYPES[t]
    text = open(cachet_example("two_index")).read().replace("f64[", f"{t}[")
    k = cachet.Kernel(text, params={"V": 12, "N": 20})
    rng = np.random.default_rng(2)
    a, c1, c2 = rand((20, 20), dt, rng), rand((20, 12), dt, rng), rand((20, 12), dt, rng)
    b = rand((12, 12), dt, rng)
    want = b + np.einsum("pa,pq,qb->ab", c1, a, c2)
    k(a, c1, c2, b)
    close(b, want, dt)
    assert k.args == ("A", "C1", "C2", "B")  # the temp T is not an argument


def cachet_example(name):
    import os
    from conftest import EXAMPLES
    return os.path.join(EXAMPLES, name + ".cachet")


@pytest.mark.parametrize("name,dt", [("matmul", np.float32), ("dgemm_small", np.float64)])
def test_examples_matmul(name, dt):
    k = cachet.load(cachet_example(name), params={"M": 40, "N": 48, "K": 36})
    rng = np.random.default_rng(3)
    a, b, c = rand((40, 36), dt, rng), rand((36, 48), dt, rng), rand((40, 48), dt, rng)
    want = c + a @ b
    k(a, b, c)
    close(c, want, dt)


def stencil5_numpy(a):
    b = a.copy()
    b[1:-1, 1:-1] = (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[1:-1, 1:-1]) / 5
    return b


@pytest.mark.parametrize("name", ["stencil5", "stencil5_fast"])
def test_stencil5(name):
    k = cachet.load(cachet_example(name), params={"N": 37, "M": 70})
    a = rand((37, 70), np.float32, np.random.default_rng(4))
    b = np.zeros_like(a)
    k(a, b)
    close(b, stencil5_numpy(a), np.float32)


def test_jacobi1d_and_matvec_bounds():
    k = cachet.load(cachet_example("jacobi1d"), params={"N": 300})
    rng = np.random.default_rng(5)
    a, b = rand(300, np.float64, rng), rand(300, np.float64, rng)
    want = b.copy()
    want[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3
    k(a, b)
    close(b, want, np.float64)
    mv = cachet.load(cachet_example("matvec_bounds"))
    A, x, y = rand((200, 150), np.float64, rng), rand(150, np.float64, rng), rand(200, np.float64, rng)
    want = y.copy()
    want[10:190] += A[10:190] @ x
    mv(A, x, y)
    close(y, want, np.float64)


def test_transpose_col_major_output():
    k = cachet.load(cachet_example("transpose"))
    assert k.arrays[1].order == (1, 0)
    a = rand((100, 300), np.float64, np.random.default_rng(6))
    b = np.zeros((300, 100), order="F")
    k(a, b)
    close(b, a.T, np.float64)


def test_relu_bias_copy_axpy_int_ops():
    rng = np.random.default_rng(7)
    k = cachet.load(cachet_example("relu_bias"))
    x, bias, y = rand((128, 96), np.float32, rng), rand(96, np.float32, rng), np.empty((128, 96), np.float32)
    k(X=x, Bias=bias, Y=y)
    close(y, np.maximum(x + bias, 0), np.float32)
    cp = cachet.load(cachet_example("copy"))
    src, dst = rand(64, np.float64, rng), np.zeros(64)
    cp(src, dst)
    close(dst, src, np.float64)
    ax = cachet.load(cachet_example("axpy_runtime"))
    for n in (1, 15, 16, 1000):
        xs, ys = rand(n, np.float32, rng), rand(n, np.float32, rng)
        want = 2.5 * xs + ys
        ax(xs, ys)
        close(ys, want, np.float32)
    io = cachet.load(cachet_example("histogram_int"))
    X = rng.integers(0, 100, size=(64, 40)).astype(np.int32)
    S, Y = np.arange(64, dtype=np.int64), np.zeros((64, 40), np.int32)
    want_s = S + X.sum(axis=1)
    io(X, S, Y)
    np.testing.assert_array_equal(S, want_s)
    np.testing.assert_array_equal(Y, (X * 3) // 2 - np.arange(64, dtype=np.int32)[:, None])


def test_parallel_kernel_threads():
    k = cachet.load(cachet_example("sgemm"), params={"M": 64, "N": 96, "K": 32})
    rng = np.random.default_rng(8)
    a, b = rand((64, 32), np.float32, rng), rand((32, 96), np.float32, rng)
    for threads in (1, 2):
        c = np.zeros((64, 96), np.float32)
        k(a, b, c, threads=threads)
        close(c, a @ b, np.float32)


@pytest.mark.parametrize("spec,t", [("ij,jk->ik", "f64"), ("bij,bjk->bik", "f32"), ("i,i->i", "i32"),
                                    ("ij->j", "i64"), ("pa,pq,qb->ab", "f64")])
def test_from_einsum(spec, t):
    dt = DTYPES[t]
    k = cachet.Kernel.from_einsum(spec, dtype=t)
    rng = np.random.default_rng(9)
    sizes = {c: 3 + i for i, c in enumerate(sorted(set(spec) - set(",->")))}
    ins, out = spec.split("->")
    ops = [rand(tuple(sizes[c] for c in term), dt, rng) for term in ins.split(",")]
    res = np.zeros(tuple(sizes[c] for c in out), dt)
    k(*ops, res)
    close(res, np.einsum(spec, *ops).astype(dt), dt)


def test_from_einsum_refusals():
    for bad in ("ij,jk", "ij,jk->iz", "i1->i", "ii->ii"):
        with pytest.raises(ValueError):
            cachet.Kernel.from_einsum(bad)
    with pytest.raises(ValueError):
        cachet.Kernel.from_einsum("ij->i", dtype="f16")
