"""numba's ``np.cumsum`` and ``np.cumprod`` under ``@njit``: NumPy's rules, int32 widened to
int64 (measured with numba 0.68.1, 2026-11-26)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..targets.spec import TargetSpec
from .known import KnownBug
from .rows import Row


@functools.cache
def _jitted(name: str) -> Callable[[np.ndarray], np.ndarray]:
    import numba

    fn = getattr(np, name)
    return numba.njit(lambda x: fn(x))


def numba_scan(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """``np.<name>`` of a 1-D array, compiled by ``numba.njit``."""
    def run(x: np.ndarray) -> np.ndarray:
        return _jitted(name)(x)

    return run


ROWS: tuple[Row, ...] = tuple(
    Row(f"numba njit(np.{name})", numba_scan(name),
        TargetSpec(op=op, dtypes=("float32", "float64", "int32", "int64"),
                   promote=(("int32", "int64"),)),
        needs=("numba",), call=("import numba\n", f"numba.njit(lambda v: np.{name}(v))(x)"),
        api=f"numba.njit(np.{name})")
    for name, op in (("cumsum", "add"), ("cumprod", "mul")))

#: numba's bugs that scancheck's checks met (docs/findings.md).
KNOWN: tuple[KnownBug, ...] = (
    KnownBug("NVIDIA/numba-cuda#907", "https://github.com/NVIDIA/numba-cuda/issues/907",
             "numba.cuda compiles no kernel beside NumPy 2.5 (np.row_stack is gone)", "numba_cuda",
             ("numba-cuda",), "0.30.4", None, (), (),
             "open: the fix proposed in NVIDIA/numba-cuda#916 was closed unmerged",
             "docs/findings/numba_cuda_numpy_row_stack.py", gpu=True),
)
