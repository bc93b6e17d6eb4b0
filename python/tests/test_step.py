"""test_step.py: loops written with a step (the fused two-index transform's tiles) from numpy, at several tilings."""
import os

import numpy as np
import pytest

import cachet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUSED = os.path.join(ROOT, "examples", "two_index_fused.cachet")


@pytest.mark.parametrize("tiles", [(16, 8, 4, 32), (64, 32, 32, 64), (1, 2, 8, 4)])
def test_fused_two_index(tiles):
    ta, tj, ti, tb = tiles
    k = cachet.Kernel(FUSED, params=dict(V=64, N=32, TA=ta, TJ=tj, TI=ti, TB=tb))
    rng = np.random.default_rng(7)
    a, c1, c2 = rng.random((32, 32)), rng.random((32, 64)), rng.random((32, 64))
    b = np.full((64, 64), 5.0)  # an output: every element is written
    k(a, c1, c2, b)
    assert np.allclose(b, c1.T @ a @ c2, rtol=1e-12)


def test_step_not_dividing_is_refused():
    with pytest.raises(cachet.KernelError, match="may exceed the extent"):
        cachet.Kernel(FUSED, params=dict(V=64, N=32, TA=24, TJ=8, TI=4, TB=32))
