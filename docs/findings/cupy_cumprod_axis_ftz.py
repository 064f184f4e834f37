"""Plain CuPy, no scancheck: does cupy.cumprod along an axis flush float32 subnormal products?"""
import cupy as cp
import numpy as np

for dtype in (np.float32, np.float64):
    row = np.array([2.0**-100, 2.0**-30, 2.0**100], dtype=dtype)  # exact products 2**-100, 2**-130, 2**-30
    x = np.stack([row, row])  # 2-D: scanned along axis 1
    got = cp.cumprod(cp.asarray(x), axis=1).get()
    got1 = cp.cumprod(cp.asarray(row)).get()
    print(dtype.__name__, "axis=1:", got[0].tolist(), "| 1-D:", got1.tolist(),
          "| exact:", [2.0**-100, 2.0**-130, 2.0**-30])
