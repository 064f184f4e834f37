"""NumPy's scans (ufunc ``accumulate`` and ``cumsum``/``cumprod``), Python's
``itertools.accumulate``, and scancheck's NumPy segmented references (one per segment
description), each with its documented contract and its plain call."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dtypes import DTYPES, INPUT_DTYPES
from ..oracle.segmented import segment_ids, segment_rows
from ..targets.spec import TargetSpec
from .known import KnownBug
from .rows import Row

#: What sums and products return for bool and narrow integer input when called without
#: dtype=, as most code calls them: widened, the scan taken in the wider type (measured:
#: NumPy 2.4, torch 2.13 and JAX 0.10 on a CPU, torch 2.11 and CuPy 14.2 on an H100, where
#: CuPy follows NumPy's rule).
PROMOTED = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32")
NUMPY_PROMOTE = tuple((d, "uint64" if d.startswith("u") else "int64") for d in PROMOTED)

#: The NumPy ufunc that scans with each operator.
_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
           "logaddexp": np.logaddexp}


def _accumulate(op: str) -> Callable[..., np.ndarray]:
    """Python's itertools.accumulate from ``initial`` over NumPy scalars (each step rounded to
    the dtype, integers wrapping), its last output dropped: an exclusive scan."""
    combine = {"add": operator.add, "mul": operator.mul}[op]

    def run(x: np.ndarray, initial: Any) -> np.ndarray:
        steps = itertools.accumulate(x, combine, initial=x.dtype.type(initial))
        return np.fromiter(steps, x.dtype, x.shape[0] + 1)[:-1]

    return run


def numpy_segmented(kind: str, op: str = "add", inclusive: bool = True, reverse: bool = False
                    ) -> Callable[[np.ndarray, Any], np.ndarray]:
    """A segmented scan of NumPy's ufunc ``accumulate``, one segment at a time along axis 0,
    the segments told as ``kind`` says: the plain reference a segmented kernel is compared
    with."""
    ufunc = _UFUNCS[op]

    def run(x: np.ndarray, segments: Any) -> np.ndarray:
        out = np.empty_like(x)
        ids = segment_ids(kind, np.asarray(segments), x.shape[0])
        for index in segment_rows(ids, reverse).index:
            for row in index:
                at = row[row >= 0]
                acc = ufunc.accumulate(x[at], axis=0, dtype=x.dtype)
                if not inclusive:
                    ident = np.full((1, *x.shape[1:]), ufunc.identity if ufunc.identity
                                    is not None else _identity(op, x.dtype), x.dtype)
                    acc = np.concatenate([ident, acc[:-1]])
                out[at] = acc
        return out

    return run


def _identity(op: str, dtype: np.dtype) -> Any:
    from ..core.operators import get_operator

    return get_operator(op).identity(dtype.name)[()]


def _numpy(api: str, fn: Callable[..., Any], spec: TargetSpec, call: str, name: str = "",
           **mode: str) -> Row:
    return Row(name or f"numpy.{api}", fn, spec, call=("", call), api=f"numpy.{api}",
               mode=tuple(mode.items()))


_FLOATS_INTS = ("float32", "float64", "int32", "int64")

# Library scans are called with dtype= the input's: by default NumPy promotes int32 to
# int64, which the conformance check would (rightly) report.
ROWS: tuple[Row, ...] = (
    _numpy("cumsum", lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
           TargetSpec(dtypes=DTYPES, axis="arg"), "np.cumsum(x, axis=AXIS, dtype=x.dtype)"),
    _numpy("cumprod", lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype),
           TargetSpec(op="mul", dtypes=DTYPES, axis="arg"), "np.cumprod(x, axis=AXIS, dtype=x.dtype)"),
    # Called without dtype=: bool and narrow integers come back widened.
    _numpy("cumsum", lambda x, axis: np.cumsum(x, axis=axis),
           TargetSpec(dtypes=PROMOTED, promote=NUMPY_PROMOTE, axis="arg"),
           "np.cumsum(x, axis=AXIS)", "numpy.cumsum (default dtype)", dtype="default"),
    _numpy("cumprod", lambda x, axis: np.cumprod(x, axis=axis),
           TargetSpec(op="mul", dtypes=PROMOTED, promote=NUMPY_PROMOTE, axis="arg"),
           "np.cumprod(x, axis=AXIS)", "numpy.cumprod (default dtype)", dtype="default"),
    # Running maxima and minima, of booleans too (a running or and a running and).
    _numpy("maximum.accumulate", lambda x, axis: np.maximum.accumulate(x, axis),
           TargetSpec(op="max", dtypes=INPUT_DTYPES, axis="arg"), "np.maximum.accumulate(x, AXIS)"),
    _numpy("minimum.accumulate", lambda x, axis: np.minimum.accumulate(x, axis),
           TargetSpec(op="min", dtypes=INPUT_DTYPES, axis="arg"), "np.minimum.accumulate(x, AXIS)"),
    _numpy("logaddexp.accumulate", lambda x, axis: np.logaddexp.accumulate(x, axis),
           TargetSpec(op="logaddexp", dtypes=("float32", "float64", "float16"), axis="arg"),
           "np.logaddexp.accumulate(x, AXIS)"),
    # Scans from an initial value (exclusive): Python's own.
    Row("itertools.accumulate(initial=)", _accumulate("add"),
        TargetSpec(inclusive=False, initial=True), api="itertools.accumulate",
        call=("import itertools\nimport operator\n",
              "np.fromiter(itertools.accumulate(x[1:], operator.add, initial=x[0]), x.dtype, "
              "x.shape[0])[:-1]"), mode=(("combine", "operator.add"),)),
    Row("itertools.accumulate(operator.mul, initial=)", _accumulate("mul"),
        TargetSpec(op="mul", inclusive=False, initial=True), api="itertools.accumulate",
        call=("import itertools\nimport operator\n",
              "np.fromiter(itertools.accumulate(x[1:], operator.mul, initial=x[0]), x.dtype, "
              "x.shape[0])[:-1]"), mode=(("combine", "operator.mul"),)),
    # scancheck's segmented references: a segmented kernel's plain counterpart.
    *(Row(f"numpy segmented cumsum ({kind})", numpy_segmented(kind),
          TargetSpec(segments=kind, dtypes=_FLOATS_INTS), api="numpy segmented (reference)",
          mode=(("segments", kind),))
      for kind in ("offsets", "flags", "keys", "groups")),
    Row("numpy segmented cumsum (offsets, exclusive, reverse, T x H)",
        numpy_segmented("offsets", inclusive=False, reverse=True),
        TargetSpec(segments="offsets", inclusive=False, reverse=True, axis=0, dtypes=_FLOATS_INTS),
        api="numpy segmented (reference)"),
    Row("numpy segmented cummax (flags, reverse)", numpy_segmented("flags", "max", reverse=True),
        TargetSpec(op="max", segments="flags", reverse=True, dtypes=_FLOATS_INTS),
        api="numpy segmented (reference)"),
    Row("numpy segmented cumprod (keys)", numpy_segmented("keys", "mul"),
        TargetSpec(op="mul", segments="keys", dtypes=_FLOATS_INTS), api="numpy segmented (reference)"),
    Row("numpy segmented logcumsumexp (offsets, T x H)", numpy_segmented("offsets", "logaddexp"),
        TargetSpec(op="logaddexp", segments="offsets", axis=0, dtypes=("float32", "float64")),
        api="numpy segmented (reference)"),
)

#: Bugs of NumPy's companions that scancheck's checks met (docs/findings.md).
KNOWN: tuple[KnownBug, ...] = (
    KnownBug("jax-ml/ml_dtypes#401", "https://github.com/jax-ml/ml_dtypes/pull/401",
             "ml_dtypes casts float64 to bfloat16 through float32, rounding twice", "ml_dtypes",
             ("ml_dtypes",), "0", "0.7.0", (), (),
             "a pull request, open when last seen, whose example is this one (1 + 2**-8 + "
             "2**-40 to bfloat16)",
             "docs/findings/ml_dtypes_bfloat16_double_rounding.py"),
)
