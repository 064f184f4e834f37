"""Plain CuPy: does cupy.cumprod of a 1-D float64 array give the same bits on every run?
With CuPy's routine accelerator CUB on (its default), and with it off."""
import hashlib

import cupy as cp
import numpy as np
from cupy._core import _accelerator

default = _accelerator.get_routine_accelerators()
print("cupy", cp.__version__, "default accelerators", default)
rng = np.random.default_rng(16)
for n in (41027, 1 << 20):
    x = cp.asarray(rng.uniform(0.999, 1.001, n))  # float64 factors near 1
    for accelerators in (default, []):
        _accelerator.set_routine_accelerators(accelerators)
        runs = [cp.cumprod(x).get() for _ in range(50)]
        distinct = len({hashlib.sha1(r.tobytes()).hexdigest() for r in runs})
        most = max(int((r != runs[0]).sum()) for r in runs)
        print(f"n={n} accelerators={accelerators}: {distinct} distinct outputs in 50 runs; "
              f"at most {most} elements differ from run 1")
    _accelerator.set_routine_accelerators(default)
