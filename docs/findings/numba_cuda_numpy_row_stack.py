"""Reproduction: numba.cuda cannot compile a kernel when its NumPy has no ``row_stack``.

    python docs/findings/numba_cuda_numpy_row_stack.py

Plain numba-cuda and CuPy, no scancheck: prints the versions, then compiles and launches
the smallest kernel.  On the device machine of 2026-11-23 it raised AttributeError:
module 'numpy' has no attribute 'row_stack' (docs/findings.md).
"""

import importlib.metadata as md
import traceback

import cupy as cp
import numpy as np
from numba import cuda

for pkg in ("numpy", "numba", "numba-cuda", "cupy-cuda13x"):
    try:
        print(pkg, md.version(pkg))
    except md.PackageNotFoundError:
        print(pkg, "not installed")
print("np.row_stack present:", hasattr(np, "row_stack"))


@cuda.jit
def one(a):
    a[0] = 1.0


a = cp.zeros(1, dtype=cp.float32)
try:
    one[1, 1](a)
    cuda.synchronize()
    print("compiled and ran:", a.get())
    print(f"fixed in {md.version('numba-cuda')}")
except Exception:
    traceback.print_exc(limit=6)
    print("still reproduces")
