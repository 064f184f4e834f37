"""A declared accumulator (``accumulates``: float32 input summed in float64, as polars does):
each output within half an ulp of its own type of the exact prefix, plus what the wider
type's rounding in any summation order can add -- far tighter than the bound of the input's
own type, so an accumulation in the input's type fails it."""

from __future__ import annotations

import functools

import numpy as np

from ...core.arrays import as_dtype, dtype_name
from ...core.dtypes import SIGNIFICAND_BITS
from ...oracle.bounds import abs_sums, gamma, sequential_depths, ulp
from ...oracle.exact import exact_scan_axis
from ...targets.target import Target
from ..diagnosis import Cause, Reason
from .base import Failure


def accumulator(target: Target, dtype: str) -> str | None:
    """The type the target declares it accumulates ``dtype`` input in (None: its own)."""
    return dict(target.spec.accumulates).get(dtype)


def accumulated_beyond(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray,
                       wider: str | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Per output of a sum of ``x`` along its last axis accumulated in a wider type (the
    declared one, or ``wider``): whether it lies beyond ``ulp/2 + gamma_d(wider) * sum|x|``
    of the exact prefix (d its depth in a sequential order, the deepest any order has), and
    its error as a multiple of that; None where no accumulator is declared for ``x``'s
    dtype and none is given."""
    wider = wider or accumulator(target, dtype_name(x.dtype))
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


def accumulated_words(target: Target, dtype: str, times: float, twice: bool = False) -> str:
    """What an output beyond its declared accumulator's bound (``times`` that bound) says;
    ``twice``: every such output is the exact prefix rounded twice (:func:`rounded_twice`)."""
    wider = accumulator(target, dtype)
    head = (f"beyond the bound of a sum accumulated in {wider} (declared accumulates "
            f"{dtype}:{wider}; {times:.3g}x that bound): ")
    if twice:
        lib = casting_twice(dtype) if dtype in _THROUGH_FLOAT32 else None
        how = f" (as {lib}, installed here, casts float64 to {dtype})" if lib else ""
        return head + (f"each such output is the exact prefix rounded twice, to float32 and "
                       f"then to {dtype}: exact sums cast through float32{how}, or sums "
                       f"accumulated in float32 (on these inputs the two agree); round the "
                       f"wider sum once, or declare --accumulates {dtype}:float32")
    return head + f"some partial sums were rounded to {dtype}"


#: The 16-bit floats a float64 reaches through float32 where a cast goes that way (ml_dtypes'
#: to bfloat16 before 0.7, or a sum kept in float32 and cast down): rounded twice, it lands a
#: whole ulp off where float32 rounds onto a tie.
_THROUGH_FLOAT32 = ("bfloat16", "float16")


@functools.cache
def casting_twice(dtype: str) -> str | None:
    """The library, with its version, whose cast from float64 to the 16-bit ``dtype`` rounds
    twice here, through float32 (ml_dtypes' to bfloat16 before 0.7: docs/findings.md); None
    where it rounds once.  The installed library is asked, once a process."""
    bits = SIGNIFICAND_BITS[dtype]
    # Just above the midpoint of 1 and the next value up: float32 rounds it onto that
    # midpoint, and ties-to-even then gives 1; rounded once it is the next value.
    probe = np.array([1 + 2.0**-bits + 2.0**-40])
    if probe.astype(as_dtype(dtype)).astype(np.float64)[0] != 1:
        return None
    if dtype == "bfloat16":
        import ml_dtypes

        return f"ml_dtypes {ml_dtypes.__version__}"
    return f"NumPy {np.__version__}"


def rounded_twice(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray,
                  bad: np.ndarray) -> bool:
    """Whether each output ``bad`` selects (of a sum of ``x`` along its last axis, ``want``
    its exact prefix rounded once) is that prefix rounded to float32 and then to ``x``'s
    16-bit type, which once would not be: exact sums cast through float32, or sums kept in
    float32 (inputs that fit float32's sums exactly do not tell the two apart)."""
    if dtype_name(x.dtype) not in _THROUGH_FLOAT32 or not bad.any():
        return False
    exact = exact_scan_axis(x.astype(np.float64), "add", -1, target.spec.inclusive)
    with np.errstate(over="ignore", invalid="ignore"):
        twice = exact.astype(np.float32).astype(x.dtype)
    return bool((twice[bad] == got[bad]).all() and (twice[bad] != want[bad]).all())


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
    twice = rounded_twice(target, x, got, want, beyond[0])
    return Failure(Cause.PRECISION, accumulated_words(target, dtype_name(x.dtype), beyond[1][k],
                                                      twice),
                   k, got[k], want[k], {"declared accumulator": accumulator(
                       target, dtype_name(x.dtype))}, reason=Reason.ACCUMULATOR)
