"""A declared accumulator (``accumulates``: float32 input summed in float64, as polars does):
each output within half an ulp of its own type of the exact prefix, plus what the wider
type's rounding in any summation order can add -- far tighter than the bound of the input's
own type, so an accumulation in the input's type fails it."""

from __future__ import annotations

import numpy as np

from ...core.arrays import dtype_name
from ...oracle.bounds import abs_sums, gamma, sequential_depths, ulp
from ...oracle.exact import exact_scan
from ..diagnosis import Cause
from ..targets import Target
from .base import Failure


def accumulator(target: Target, dtype: str) -> str | None:
    """The type the target declares it accumulates ``dtype`` input in (None: its own)."""
    return dict(target.spec.accumulates).get(dtype)


def accumulated_failure(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                        ) -> Failure | None:
    """``floats within bound`` of a sum declared accumulated in a wider type: every finite
    output within ``ulp/2 + gamma_d(wider) * sum|x|`` of the exact prefix (d its depth in
    a sequential order, the deepest any order has)."""
    wider = accumulator(target, dtype_name(x.dtype))
    if wider is None or target.spec.family != "sum" or (got == want).all():
        return None
    inc = target.spec.inclusive
    name = dtype_name(x.dtype)
    # Measured from the exact prefix, not from ``want`` (it rounded to x's type): a right
    # wider sum, rounded once more, lands a whole ulp from ``want`` wherever the exact prefix
    # lies near the midpoint between two of x's values (double rounding).  The float64
    # rounding of the exact prefix is within half its own ulp of it.
    exact = exact_scan(x.astype(np.float64), inclusive=inc)
    with np.errstate(invalid="ignore", over="ignore"):
        allowed = (np.maximum(ulp(got, name), ulp(want, name)) / 2 + ulp(exact, "float64") / 2
                   + gamma(sequential_depths(x.shape[0], inc), wider) * abs_sums(x, inc))
        err = np.abs(got.astype(np.float64) - exact)
        bad = np.isfinite(err) & np.isfinite(allowed) & (err > allowed * (1 + 2.0**-50))
    if not bad.any():
        return None
    k = int(np.flatnonzero(bad)[0])
    return Failure(Cause.PRECISION, f"beyond the bound of a sum accumulated in {wider} (declared "
                   f"accumulates {x.dtype.name}:{wider}; {err[k] / allowed[k]:.3g}x that "
                   f"bound): some partial sums were rounded to {x.dtype.name}", k, got[k],
                   want[k], {"declared accumulator": wider})
