"""tune_and_ship.py: tune a kernel's tiles for a size, check the winner, build a C package of it.

Run: make python && PYTHONPATH=build/python /usr/bin/python3 examples/python/tune_and_ship.py [OUT_DIR]
"""
import os
import sys
import tempfile

import numpy as np

import cachet

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(os.path.dirname(HERE), "tune_matmul.cachet")

k = cachet.load(PATH)
print("what the model expects of the file's tiles:",
      k.predict(cache="32K:64")["levels"][0]["misses"], "misses in 32K")

# a short tuning run (the tool's `cachet tune --sizes 64x64x64 --budget 3`); the winner goes to the
# tuning store in the cache folder, shared with the cachet tool
[res] = k.tune(sizes=["64x64x64"], budget=3, fraction=0.02)
best = res["best_params"]
print("tuned tiles for 64x64x64:", best)

tuned = cachet.load(PATH, params={"M": 64, "N": 64, "K": 64, **best})
print("verified against the interpreter:", tuned.verify().verified)
a = np.random.default_rng(2).standard_normal((64, 64), dtype=np.float32)
c = np.zeros((64, 64), np.float32)
tuned(a, a, c)
assert np.allclose(c, a @ a, atol=1e-3)

out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tune_matmul-")
files = tuned.build(out)
print("shipped:", ", ".join(sorted(os.path.basename(f) for f in files.values())), "in", out)
