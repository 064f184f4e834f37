"""Built-in scans of the dataframe and array libraries on the CPU -- pandas, polars, pyarrow
and numba -- each with the contract its library documents (or, where it documents none,
the behaviour measured and stated), so that a check judges what the library promises:

- pandas ``Series.cum*()`` (skipna=True, the default): NaN at each NaN input, the others
  the scan of the rest (``nans='skip'``); int32 sums and products come back int64.
  ``DataFrame.cumsum(axis=)`` takes 2-D arrays only (``ndim=(2,)``).
- polars ``Series.cum_*()``: sums wrap in the input's integer type, float32 sums
  accumulate in float64; ``cum_max``/``cum_min`` leave NaN out (``nans='ignore'``, NaN
  for an all-NaN prefix); int32 products come back int64.
- pyarrow ``compute.cumulative_*``: sums wrap, ``cumulative_sum_checked`` raises
  ``ArrowInvalid`` exactly where a prefix overflows (``overflow='raise'``);
  ``cumulative_max``/``min`` leave NaN out and give the identity (-inf, +inf) for an all-NaN
  prefix (``nan_prefix='identity'``).
- numba ``np.cumsum``/``np.cumprod`` under ``@njit``: NumPy's rules, int32 widened to int64.

Measured with pandas 3.1.1, polars 2.1.0, pyarrow 26.0.1 and numba 0.68.1 (2026-11-26).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .spec import TargetSpec
from .targets import Target, builtin

_FLOATS_INTS = ("float32", "float64", "int32", "int64")
#: int32 sums and products come back as int64.
_WIDENED = (("int32", "int64"),)


def _pandas(method: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        import pandas as pd

        return getattr(pd.Series(x), method)().to_numpy()

    return run


def _pandas_frame(x: np.ndarray, axis: int) -> np.ndarray:
    import pandas as pd

    # pandas names a frame's axes 0 and 1 alone, by design (pandas-dev/pandas#48802): a
    # negative one is turned into its number here, as numpy's caller means it.
    out = pd.DataFrame(x).cumsum(axis=axis % x.ndim).to_numpy()
    # An empty frame's cumsum along its empty axis comes back float64 whatever the input
    # (pandas 3.1.1: shape (0, 3) along axis 1, (3, 0) along either): no value took that
    # type, so the empty result is handed back in the input's, not judged as a promotion.
    return out if out.size else np.empty(x.shape, x.dtype)


def _polars(method: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        import polars as pl

        return getattr(pl.Series(x), method)().to_numpy()

    return run


def _pyarrow(function: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        return getattr(pc, function)(pa.array(x)).to_numpy(zero_copy_only=False)

    return run


@functools.cache
def _jitted(name: str) -> Callable[[np.ndarray], np.ndarray]:
    import numba

    fn = getattr(np, name)
    return numba.njit(lambda x: fn(x))


def _numba(name: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        return _jitted(name)(x)

    return run


def frame_targets(not_installed: Callable[[str], str | None]) -> list[Target]:
    """The built-in pandas, polars, pyarrow and numba scans (``not_installed(module)`` says
    why one whose library is missing cannot run)."""
    def library(name: str, fn: Callable[..., Any], spec: TargetSpec, module: str) -> Target:
        return builtin(name, fn, spec, not_installed(module))

    out = []
    for method, op in (("cumsum", "add"), ("cumprod", "mul"), ("cummax", "max"),
                       ("cummin", "min")):
        widened = _WIDENED if op in ("add", "mul") else ()
        out.append(library(f"pandas Series.{method}()", _pandas(method),
                           TargetSpec(op=op, dtypes=_FLOATS_INTS, nans="skip", promote=widened),
                           "pandas"))
    out.append(library("pandas DataFrame.cumsum(axis=)", _pandas_frame,
                       TargetSpec(dtypes=("float64", "int64"), nans="skip", axis="arg",
                                  ndim=(2,)), "pandas"))
    for method, op in (("cum_sum", "add"), ("cum_prod", "mul"), ("cum_max", "max"),
                       ("cum_min", "min")):
        if op == "add":
            spec = TargetSpec(dtypes=_FLOATS_INTS, accumulates=(("float32", "float64"),))
        elif op == "mul":
            spec = TargetSpec(op=op, dtypes=_FLOATS_INTS, promote=_WIDENED)
        else:
            spec = TargetSpec(op=op, dtypes=_FLOATS_INTS, nans="ignore")
        out.append(library(f"polars Series.{method}()", _polars(method), spec, "polars"))
    for function, spec in (
            ("cumulative_sum", TargetSpec(dtypes=_FLOATS_INTS)),
            ("cumulative_sum_checked", TargetSpec(dtypes=("int32", "int64"), overflow="raise")),
            ("cumulative_prod", TargetSpec(op="mul", dtypes=_FLOATS_INTS)),
            ("cumulative_max", TargetSpec(op="max", dtypes=_FLOATS_INTS, nans="ignore",
                                          nan_prefix="identity")),
            ("cumulative_min", TargetSpec(op="min", dtypes=_FLOATS_INTS, nans="ignore",
                                          nan_prefix="identity"))):
        out.append(library(f"pyarrow.compute.{function}", _pyarrow(function), spec, "pyarrow"))
    for name, op in (("cumsum", "add"), ("cumprod", "mul")):
        out.append(library(f"numba njit(np.{name})", _numba(name),
                           TargetSpec(op=op, dtypes=_FLOATS_INTS, promote=_WIDENED), "numba"))
    return out
