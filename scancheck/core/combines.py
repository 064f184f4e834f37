"""The combine of each built-in operator, on NumPy arrays of elements and on exact numbers.

The rows of :data:`scancheck.core.operators.OPERATORS` name these; each NumPy combine takes
``(earlier, later)`` arrays of elements, shape ``(n,)`` or ``(n, 2)`` for the pair monoids,
and each exact one Python numbers (ints, Fractions, mpmath values) or tuples of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from .arrays import as_dtype
from .dtypes import is_float

#: The interval monoid's encoding of its identity and of its absorbing error element.
INTERVAL_IDENTITY = (-1, -1)
INTERVAL_ERROR = (-2, -2)


def max_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # NaN-propagating, and the earlier operand wins ties (so -0.0/+0.0 and NaN
    # payloads resolve the same way on every schedule): the CUDA functor is identical.
    take_b = np.isnan(b) | (b > a) if is_float(a.dtype) else b > a
    if is_float(a.dtype):
        take_b &= ~np.isnan(a)
    return np.where(take_b, b, a)


def min_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    take_b = np.isnan(b) | (b < a) if is_float(a.dtype) else b < a
    if is_float(a.dtype):
        take_b &= ~np.isnan(a)
    return np.where(take_b, b, a)


def recurrence_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # (a1, b1) then (a2, b2): y = a2*(a1*y0 + b1) + b2.  Two separately rounded
    # operations, never a fused multiply-add: the kernels are compiled with --fmad=false.
    a1, b1 = x[..., 0], x[..., 1]
    a2, b2 = y[..., 0], y[..., 1]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.stack([a2 * a1, a2 * b1 + b2], axis=-1)


def segmented_add_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # (f1, v1) then (f2, v2): a head flag f2 starts a new segment, so the sum restarts at v2.
    f1, v1 = x[..., 0], x[..., 1]
    f2, v2 = y[..., 0], y[..., 1]
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add(v1, v2, dtype=np.result_type(v1, v2))  # integers wrap, as in CUDA
    # The later flag where it is one, else the earlier: "or" on flags of 0 and 1, and the
    # identity (0, 0) neutral on any flag value.
    return np.stack([np.where(f2 != 0, f2, f1), np.where(f2 != 0, v2, total)], axis=-1)


def mul_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.multiply(a, b, dtype=np.result_type(a, b))  # integers wrap, as in CUDA


def logaddexp_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # NumPy has no float16 or bfloat16 loop of its own precision: through float32, once
    # rounded, as the CUDA functor computes it.
    dt = np.result_type(a, b)
    wide = np.float64 if dt == np.float64 else np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        return np.logaddexp(np.asarray(a, wide), np.asarray(b, wide)).astype(dt)


def logaddexp_exact(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) at mpmath's working precision (-inf is the identity)."""
    if mpmath.isinf(a) and a < 0:
        return b
    if mpmath.isinf(b) and b < 0:
        return a
    hi, lo = (a, b) if a >= b else (b, a)
    return hi + mpmath.log1p(mpmath.exp(lo - hi))


def arg_np(which: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """(value, index) pairs: the larger (smaller) value wins, a NaN above all; equal values
    go to the later operand, so every output names the last index of its extreme (PyTorch's
    cummax and cummin).  Index -1 is the identity, which loses every tie."""
    def combine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        ev, lv = x[..., 0], y[..., 0]
        with np.errstate(invalid="ignore"):
            beats = (lv >= ev) if which == "max" else (lv <= ev)
            take = np.isnan(lv) | (~np.isnan(ev) & beats) if is_float(x.dtype) else beats
        take = (take | (x[..., 1] < 0)) & (y[..., 1] >= 0)
        return np.where(take[..., None], y, x)

    return combine


def arg_exact(which: str) -> Callable[[Any, Any], tuple]:
    def combine(x: Any, y: Any) -> tuple:
        if y[1] < 0:
            return tuple(x)
        if x[1] < 0 or y[0] != y[0]:
            return tuple(y)
        if x[0] != x[0]:
            return tuple(x)
        return tuple(y) if (y[0] >= x[0] if which == "max" else y[0] <= x[0]) else tuple(x)

    return combine


def interval_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ident = np.array(INTERVAL_IDENTITY, dtype=x.dtype)
    err = np.array(INTERVAL_ERROR, dtype=x.dtype)
    x_id = np.all(x == ident, axis=-1)
    y_id = np.all(y == ident, axis=-1)
    adjacent = (x[..., 1] + 1 == y[..., 0]) & (x[..., 0] >= 0) & (y[..., 0] >= 0)
    joined = np.stack([x[..., 0], y[..., 1]], axis=-1)
    out = np.where(adjacent[..., None], joined, err)
    out = np.where(y_id[..., None], x, out)
    return np.where(x_id[..., None], y, out)


def interval_exact(x: tuple, y: tuple) -> tuple:
    if tuple(x) == INTERVAL_IDENTITY:
        return tuple(y)
    if tuple(y) == INTERVAL_IDENTITY:
        return tuple(x)
    if x[0] >= 0 and y[0] >= 0 and x[1] + 1 == y[0]:
        return (x[0], y[1])
    return INTERVAL_ERROR


def lowest(dtype: str) -> Any:
    if as_dtype(dtype) == np.bool_:
        return False
    return -np.inf if is_float(dtype) else np.iinfo(dtype).min


def highest(dtype: str) -> Any:
    if as_dtype(dtype) == np.bool_:
        return True
    return np.inf if is_float(dtype) else np.iinfo(dtype).max
