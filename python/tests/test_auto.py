"""test_auto.py: Kernel.auto(): the schedule and plan chosen by ct_kernel_autoschedule, as the cachet tool prints them."""
import os
import subprocess

import pytest

import cachet
from test_numpy import cachet_example

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("CACHET") or os.path.join(ROOT, "build", "cachet")


def test_auto_text_runs_and_verifies():
    k = cachet.load(cachet_example("auto_matmul"))
    text = k.auto(threads=2)
    assert text.startswith("# auto_matmul.cachet")
    assert "# ---- cachet auto" in text and "register tile" in text
    assert "\nschedule {" in text and "vectorize(" in text and "parallelize(" in text
    a = cachet.Kernel(text, params={"M": 37, "N": 45, "K": 21})
    r = a.verify(threads=2)
    assert r.verified


def test_auto_is_stable_and_matches_the_tool():
    path = cachet_example("auto_matmul")
    k = cachet.load(path)
    one, two = k.auto(threads=1), k.auto(threads=1)
    assert one == two and "parallelize" not in one
    if os.path.exists(CLI):
        out = subprocess.run([CLI, "auto", path, "--threads", "1"], check=True, capture_output=True,
                             text=True).stdout
        assert out == one


def test_auto_keeps_a_written_schedule():
    k = cachet.load(cachet_example("matmul"))
    text = k.auto(threads=1)
    assert "kept from the file: its schedule" in text
    assert "ii, jj, kk = tile(i=32, j=64, k=48)" in text


def test_auto_arguments():
    k = cachet.load(cachet_example("auto_matmul"))
    with pytest.raises(ValueError):
        k.auto(budget=-1)
    with pytest.raises(TypeError):
        k.auto(threads="2")
