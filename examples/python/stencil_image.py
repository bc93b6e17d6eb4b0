"""stencil_image.py: a 5-point blur on a numpy image, on the whole image and on a strided view of it.

Run: make python && PYTHONPATH=build/python /usr/bin/python3 examples/python/stencil_image.py
"""
import os

import numpy as np

import cachet

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)

# a synthetic 256 x 320 grey image: rings plus noise
y, x = np.mgrid[0:256, 0:320]
img = (np.sin(np.hypot(x - 160, y - 128) / 6) + 0.2 * np.random.default_rng(1).standard_normal((256, 320)))
img = img.astype(np.float32)

# stencil5_fast.cachet: rows and columns are compile-time params
blur = cachet.load(os.path.join(EXAMPLES, "stencil5_fast.cachet"), params={"N": 256, "M": 320})
out = np.empty_like(img)
blur(img, out)

want = img.copy()
want[1:-1, 1:-1] = (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:] + img[1:-1, 1:-1]) / 5
print(f"whole image: max error {np.abs(out - want).max():.1e}")
assert np.allclose(out, want, atol=1e-5)

# view_stencil.cachet declares A and B `strided`: it runs on every other pixel of the image in place,
# writing into a view of a larger canvas; no copy is made
vs = cachet.load(os.path.join(EXAMPLES, "view_stencil.cachet"), params={"N": 128, "M": 160, "X1": 128, "Y1": 160})
half = img[::2, ::2]
canvas = np.zeros((130, 170), np.float32)
view = canvas[1:129, 5:165]
vs(half, view)
want = half.copy()
want[1:-1, 1:-1] = (half[:-2, 1:-1] + half[2:, 1:-1] + half[1:-1, :-2] + half[1:-1, 2:] + half[1:-1, 1:-1]) / 5
print(f"strided view: max error {np.abs(view - want).max():.1e}, canvas border untouched: "
      f"{canvas[0].any() == False}")
assert np.allclose(view, want, atol=1e-5) and not canvas[0].any()
