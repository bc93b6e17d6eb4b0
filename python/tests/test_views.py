"""test_views.py: numpy views with strides map to `strided` arrays (ct_kernel_run_views), never a silent copy."""
import numpy as np
import pytest

import cachet
from test_numpy import cachet_example, stencil5_numpy

MIXED = """kernel mixed
param N = 6, M = 5
array A : f64[N, M] input strided
array B : f64[N, M] output
for (i: N, j: M) {
  B[i, j] = 2 * A[i, j]
}
"""


@pytest.fixture(scope="module")
def vs():
    return cachet.load(cachet_example("view_stencil"))


def test_strided_views_in_and_out(vs):
    rng = np.random.default_rng(11)
    big_a = rng.uniform(-1, 1, (128, 144)).astype(np.float32)
    big_b = np.full((130, 100), 7, np.float32)
    a = big_a[::2, ::3]                  # 64 x 48, strides (2 rows, 3 elements)
    b = big_b[1:129:2, 2:98:2]           # 64 x 48 inside a larger buffer
    assert a.shape == b.shape == (64, 48) and not a.flags.c_contiguous
    vs(a, b)
    np.testing.assert_allclose(b, stencil5_numpy(a), rtol=1e-6, atol=1e-6)
    untouched = np.ones(big_b.shape, bool)
    untouched[1:129:2, 2:98:2] = False
    assert (big_b[untouched] == 7).all()  # written only through the view


def test_fortran_and_transposed_views(vs):
    rng = np.random.default_rng(12)
    a = np.asfortranarray(rng.uniform(-1, 1, (64, 48)).astype(np.float32))
    b = np.zeros((48, 64), np.float32).T  # a transposed view: column-major 64 x 48
    vs(a, b)
    np.testing.assert_allclose(b, stencil5_numpy(a), rtol=1e-6, atol=1e-6)
    c = np.zeros((64, 48), np.float32)   # dense row-major still takes the fast path
    vs(np.ascontiguousarray(a), c)
    np.testing.assert_array_equal(c, b)


def test_strided_refusals(vs):
    a = np.ones((64, 48), np.float32)
    b = np.zeros((64, 48), np.float32)
    with pytest.raises(ValueError, match="negative stride"):
        vs(a[::-1], b)
    rep = np.lib.stride_tricks.as_strided(np.zeros(48, np.float32), (64, 48), (0, 4), writeable=True)
    with pytest.raises(ValueError, match="repeats elements"):
        vs(a, rep)
    with pytest.raises(ValueError, match="read-only"):
        vs(a, np.broadcast_to(b, (64, 48)))
    assert (b == 0).all()
    # an input may repeat elements (stride 0)
    vs(np.broadcast_to(np.arange(48, dtype=np.float32), (64, 48)), b)
    assert b[0, 5] == 5


def test_mixed_strided_and_dense():
    k = cachet.Kernel(MIXED)
    base = np.arange(60.0).reshape(6, 10)
    b = np.zeros((6, 5))
    k(base[:, ::2], b)
    np.testing.assert_array_equal(b, 2 * base[:, ::2])
    with pytest.raises(ValueError, match="not dense.*declare the array `strided`"):
        k(base[:, ::2], np.zeros((6, 10))[:, ::2])
    with pytest.raises(ValueError, match="a copy would lose the kernel's writes"):
        k(base[:, ::2], np.zeros((6, 5), order="F"))
