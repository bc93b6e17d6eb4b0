"""test_verbs.py: lower, emit, verify, simulate, predict, tiles, tune, build and probe, against the cachet tool."""
import json
import os
import sys
import subprocess

import pytest

import cachet
from test_errors import AXPY
from test_numpy import cachet_example

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("CACHET") or os.path.join(ROOT, "build", "cachet")


def cli_json(*args):
    if not os.path.exists(CLI):
        pytest.skip("no cachet tool to compare with")
    out = subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def test_lower_and_emit():
    k = cachet.load(cachet_example("matmul"))
    text = k.lower()
    assert "for " in text and "C[" in text
    tree = k.lower(json_output=True)
    assert tree == cli_json("lower", cachet_example("matmul"))
    assert "int cachet_matmul(" in k.emit() and "cachet_matmul_entry" in k.emit()


def test_verify_runs_and_compares():
    k = cachet.Kernel(AXPY)
    r = k.verify(L=1000, repeat=2)
    assert isinstance(r, cachet.RunResult)
    assert r.verified is True and r.engine == "native" and r.seconds > 0
    r = k.verify(L=10, engine="interp", check=False)
    assert r.verified is None and r.engine == "interp"
    assert k.params["L"] == 10


def test_simulate_and_predict_match_the_tool():
    p = cachet_example("matmul")
    k = cachet.load(p, params={"M": 64, "N": 64, "K": 64})
    dims = ["-D", "M=64", "-D", "N=64", "-D", "K=64", "--cache", "4K:64,32K:64:8"]
    sim = k.simulate(cache="4K:64,32K:64:8")
    assert without(sim, "simulate_seconds") == without(cli_json("simulate", p, *dims), "simulate_seconds")
    pred = k.predict(cache="4K:64,32K:64:8")
    assert without(pred, "model_seconds") == without(cli_json("predict", p, *dims), "model_seconds")
    assert pred["levels"][0]["misses"] > 0


def test_tiles_match_the_tool():
    p = cachet_example("tiles_two_index")
    k = cachet.load(p)
    t = k.tiles(cache="32K:64")
    assert without(t, "seconds") == without(cli_json("tiles", p, "--cache", "32K:64"), "seconds")
    best = dict(zip(t["params"], t["candidates"][0]["tiles"]))
    assert set(best) == {"TA", "TQ", "TP", "TB"}


def test_affine_estimate_matches_the_tool():
    # past 2^26 accesses a kernel with affine loop bounds gets the model's estimate, not exact
    p = cachet_example("trmm")
    k = cachet.load(p, params={"N": 1024, "M": 1024})
    r = k.predict(cache="32K:64,1M:64")
    assert r["accesses"] == (1024 + 2 * 1024 * 1025) * 1024
    assert all(lv["source"] == "affine estimate" and not lv["exact"] for lv in r["levels"])
    cli = cli_json("predict", p, "-D", "N=1024", "-D", "M=1024", "--cache", "32K:64,1M:64")
    assert without(r, "model_seconds") == without(cli, "model_seconds")


def test_affine_tiles_and_tune_match_the_tool(tmp_path):
    # loops with affine bounds (k: 0 .. i+1): the tile search and the tuner count misses by simulation
    p = cachet_example("tiles_trmm")
    k = cachet.load(p, params={"N": 32, "M": 32})
    t = k.tiles(cache="1K:64", max_tile=8)
    assert t["source"] == "simulator" and t["fallback"] == "affine loop bounds" and t["accesses"] == 4 * 32 * 528
    timing = ("seconds", "simulate_seconds", "seconds_per_tiling")
    cli = cli_json("tiles", p, "-D", "N=32", "-D", "M=32", "--cache", "1K:64", "--max", "8")
    assert without(t, *timing) == without(cli, *timing)
    assert all(c["exact"] for c in t["candidates"])
    src = open(p).read().replace("param TJ = 16, TK = 16", "param TJ = 8 tune {4, 8}\nparam TK = 8 tune {4, 8}")
    tk = cachet.Kernel(src, params={"N": 24, "M": 24})
    res = tk.tune(budget=6, cache="1K:64", store_dir=str(tmp_path), fraction=0.5)
    assert res[0]["memory_source"] == "simulator" and res[0]["best_params"]
    import numpy as np
    tuned = cachet.Kernel(src, params={"N": 24, "M": 24, **res[0]["best_params"]})
    L = np.tril(np.ones((24, 24), np.float32))
    B = np.ones((24, 24), np.float32)
    C = np.zeros((24, 24), np.float32)
    tuned(L, B, C)
    assert (C == (np.arange(24, dtype=np.float32) + 1)[:, None]).all()


def test_tune_then_use_the_winner(tmp_path):
    k = cachet.load(cachet_example("tune_matmul"))
    res = k.tune(sizes=["32x32x32", {"M": 48, "N": 32, "K": 32}], budget=4, fraction=0.02,
                 store_dir=str(tmp_path))
    assert len(res) == 2
    assert res[0]["best_params"] and set(res[0]["best_params"]) == {"TI", "TJ", "TK"}
    assert k.params["M"] == 96         # the kernel is left as it was
    tuned = cachet.load(cachet_example("tune_matmul"), params={"M": 32, "N": 32, "K": 32, **res[0]["best_params"]})
    import numpy as np
    a, b, c = np.ones((32, 32), np.float32), np.ones((32, 32), np.float32), np.zeros((32, 32), np.float32)
    tuned(a, b, c)
    assert (c == 32).all()


def test_build_package(tmp_path):
    k = cachet.load(cachet_example("copy"))
    files = k.build(tmp_path / "pkg")
    assert set(files) >= {"header", "static", "shared", "source"}
    assert all(os.path.exists(f) for f in files.values())
    assert "cachet_cp" in open(files["header"]).read()


def test_probe_and_cache_path():
    info = cachet.probe()
    assert info["device_id"] and info["caches"]
    assert info == cli_json("probe") or info["device_id"] == cli_json("probe")["device_id"]
    assert cachet.cache_path() == os.environ["CACHET_CACHE_DIR"]
    # the loader's SONAME is the header's CACHET_SOVERSION (cachet._lib is the loaded library)
    so = "libcachet.so.%d" % cachet._lib.CACHET_SOVERSION
    assert cachet.library_path.endswith(so)
    assert sys.modules["cachet._lib"].SONAME == so


def test_probe_cuda():
    # listed only when asked; no driver or no device is an answer, not an error
    assert "cuda" not in cachet.probe()
    cuda = cachet.probe(cuda=True)["cuda"]
    assert isinstance(cuda["devices"], list)
    if not cuda["devices"]:
        assert cuda["reason"].startswith("CUDA: ")
    else:
        assert all(d["name"] and d["sms"] > 0 and d["arch"].startswith("sm_") for d in cuda["devices"])
