"""Does a CuPy array assigned or filled with the scalar -0.0 keep the sign?  Plain CuPy.

scancheck's device oracle met a float16 output of +0.0 where it had assigned -0.0 to a
slice; this asks CuPy alone, for every float dtype.  On an H100 with CuPy 14.2.0 every
signbit printed False: the sign is lost in all three dtypes (docs/findings.md).
Run on a GPU:  python docs/findings/cupy_negzero_fill.py
"""

import cupy as cp

print("cupy", cp.__version__)
kept = True
for dtype in (cp.float16, cp.float32, cp.float64):
    a = cp.ones(4, dtype=dtype)
    a[:2] = -0.0
    b = cp.ones(4, dtype=dtype)
    b.fill(-0.0)
    print(f"{cp.dtype(dtype).name:8s} a[:2] = -0.0 -> signbit {cp.signbit(a).tolist()};  "
          f"fill(-0.0) -> signbit {cp.signbit(b).tolist()}")
    kept &= bool(cp.signbit(a[:2]).all()) and bool(cp.signbit(b).all())
print(f"fixed in {cp.__version__}" if kept else "still reproduces")
