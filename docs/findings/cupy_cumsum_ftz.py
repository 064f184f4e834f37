"""cupy.cumsum without CUB reads float32 subnormals as zero; with CUB it does not.

Plain CuPy, no scancheck.  Run on a GPU:  python docs/findings/cupy_cumsum_ftz.py
"""

import cupy as cp
import numpy as np
from cupy._core import _accelerator

tiny = np.finfo(np.float32).smallest_normal  # 2**-126
least = np.finfo(np.float32).smallest_subnormal  # 2**-149
cases = {
    "[2**-126 - 2**-149, 2**-149]": np.array([tiny - least, least], dtype=np.float32),
    "[2**-149] * 4": np.full(4, least, dtype=np.float32),
    "[1.0, 2**-149] (subnormal addend to a normal)": np.array([1.0, least], dtype=np.float32),
}
print("cupy", cp.__version__, "| device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
for label, x in cases.items():
    print(f"\n{label}\n  numpy.cumsum:           {np.cumsum(x).tolist()}")
    for accel in (["cub"], []):
        saved = _accelerator.get_routine_accelerators()
        _accelerator.set_routine_accelerators(accel)
        try:
            got = cp.cumsum(cp.asarray(x)).get()
        finally:
            _accelerator.set_routine_accelerators(saved)
        print(f"  cupy.cumsum {'(CUB)   ' if accel else '(no CUB)'}: {got.tolist()}")
x64 = np.array([2.0**-1022 - 2.0**-1074, 2.0**-1074])
_accelerator.set_routine_accelerators([])
print("\nfloat64 [2**-1022 - 2**-1074, 2**-1074], no CUB:", cp.cumsum(cp.asarray(x64)).get().tolist(),
      "numpy:", np.cumsum(x64).tolist())
flushed = cp.cumsum(cp.full(4, least, dtype=cp.float32)).get()
print("still reproduces" if not flushed.any() else f"fixed in {cp.__version__}")
