"""A declared accumulator (``accumulates``: float32 input summed in float64, as polars does):
each output within half an ulp of its own type of the exact prefix, plus what the wider
type's rounding in any summation order can add -- far tighter than the bound of the input's
own type, so an accumulation in the input's type fails it."""

from __future__ import annotations

import numpy as np

from ...core.arrays import dtype_name
from ...oracle.bounds import abs_sums, gamma, sequential_depths, ulp
from ...oracle.exact import exact_scan_axis
from ..diagnosis import Cause
from ..targets import Target
from .base import Failure


def accumulator(target: Target, dtype: str) -> str | None:
    """The type the target declares it accumulates ``dtype`` input in (None: its own)."""
    return dict(target.spec.accumulates).get(dtype)


def accumulated_beyond(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per output of a sum of ``x`` along its last axis declared accumulated in a wider type:
    whether it lies beyond ``ulp/2 + gamma_d(wider) * sum|x|`` of the exact prefix (d its
    depth in a sequential order, the deepest any order has), and its error as a multiple of
    that; None where no accumulator is declared for ``x``'s dtype."""
    wider = accumulator(target, dtype_name(x.dtype))
    if wider is None or target.spec.family != "sum":
        return None
    inc = target.spec.inclusive
    name = dtype_name(x.dtype)
    # Measured from the exact prefix, not from ``want`` (it rounded to x's type): a right
    # wider sum, rounded once more, lands a whole ulp from ``want`` wherever the exact prefix
    # lies near the midpoint between two of x's values (double rounding).  The float64
    # rounding of the exact prefix is within half its own ulp of it.
    exact = exact_scan_axis(x.astype(np.float64), "add", -1, inc)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        allowed = (np.maximum(ulp(got, name), ulp(want, name)) / 2 + ulp(exact, "float64") / 2
                   + gamma(sequential_depths(x.shape[-1], inc), wider) * abs_sums(x, inc))
        err = np.abs(got.astype(np.float64) - exact)
        bad = np.isfinite(err) & np.isfinite(allowed) & (err > allowed * (1 + 2.0**-50))
        return bad, err / allowed


def accumulated_words(target: Target, dtype: str, times: float) -> str:
    """What an output beyond its declared accumulator's bound (``times`` that bound) says."""
    wider = accumulator(target, dtype)
    return (f"beyond the bound of a sum accumulated in {wider} (declared accumulates "
            f"{dtype}:{wider}; {times:.3g}x that bound): some partial sums were rounded to "
            f"{dtype}")


def accumulated_failure(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                        ) -> Failure | None:
    """``floats within bound`` of a 1-D sum declared accumulated in a wider type: every finite
    output within its bound (:func:`accumulated_beyond`)."""
    if (got == want).all():
        return None
    beyond = accumulated_beyond(target, x, got, want)
    if beyond is None or not beyond[0].any():
        return None
    k = int(np.flatnonzero(beyond[0])[0])
    return Failure(Cause.PRECISION, accumulated_words(target, dtype_name(x.dtype), beyond[1][k]),
                   k, got[k], want[k], {"declared accumulator": accumulator(
                       target, dtype_name(x.dtype))})
