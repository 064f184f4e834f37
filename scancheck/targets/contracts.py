"""The contracts a library scan may declare beyond IEEE arithmetic: NaN rules for sums,
products and extremes, checked integer overflow, the ranks an axis target takes, and
accumulation in a wider type.  Their validation (:func:`check_contracts`, called by
:class:`~scancheck.targets.spec.TargetSpec`) and the NaN view every property judges through
(:func:`nan_view`): NaN inputs replaced by the identity, their outputs by what that scan
owes there, once the NaN rule's own outputs are checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.arrays import as_dtype
from ..core.counts import is_count
from ..core.dtypes import FLOAT_DTYPES, INT_DTYPES, is_float
from ..core.rules import NAN_PREFIXES

#: The highest rank of array a target of an axis is declared for (``ndim``) or handed.
MAX_RANK = 8
#: The operators a NaN rule other than "propagate" may be declared for.
NAN_RULE_OPS: tuple[str, ...] = ("add", "mul", "max", "min")
#: What an integer add or mul scan does when a prefix leaves its type.
OVERFLOW_RULES: dict[str, str] = {
    "wrap": "two's complement: each output is the exact prefix modulo 2**bits",
    "raise": "checked: the call raises exactly when some output's exact prefix leaves the "
             "type, and returns the exact prefixes otherwise (pyarrow cumulative_sum_checked)",
}
#: The identity a NaN input is read as by :func:`nan_view`: -0.0 for add, so that adding it
#: changes no bit of any sum (a -0.0 sum included).
_IDENTITY = {"add": -0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}
#: The value an all-NaN prefix holds under nan_prefix="identity" (either zero for add).
_PREFIX_VALUE = {"add": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}


def rule_owes(spec: Any) -> float:
    """What an output :func:`nan_view`'s rule decides must hold: NaN, or under
    nan_prefix="identity" the value an all-NaN prefix holds."""
    if spec.nans == "ignore" and spec.nan_prefix == "identity":
        return _PREFIX_VALUE[spec.op]
    return np.nan


def viewed(spec: Any) -> bool:
    """Whether ``spec``'s NaN rule is judged through :func:`nan_view` (every rule but
    "propagate", except "ignore" of max and min with NaN prefixes, which the exact oracle
    computes itself, for exclusive scans too)."""
    return spec.nans == "skip" or (spec.nans == "ignore" and (
        spec.family in ("sum", "product") or spec.nan_prefix == "identity"))


def check_contracts(spec: Any) -> None:
    """Raise a ValueError naming the field and what is allowed unless ``spec``'s zero order,
    NaN rule, NaN prefix, overflow rule, ranks and accumulations fit its operator and
    dtypes."""
    if spec.zeros != "either" and spec.op not in ("max", "min"):
        raise ValueError(f"zeros={spec.zeros!r} with op={spec.op!r}: a zero order (which of "
                         f"-0.0 and +0.0 is the larger) is declared for max and min")
    if spec.nans != "propagate" and spec.op not in NAN_RULE_OPS:
        raise ValueError(f"nans={spec.nans!r} with op={spec.op!r}: a NaN rule other than "
                         f"'propagate' is declared for {', '.join(NAN_RULE_OPS)}")
    if spec.nan_prefix not in NAN_PREFIXES:
        raise ValueError(f"nan_prefix={spec.nan_prefix!r} is unknown; allowed: "
                         f"{', '.join(NAN_PREFIXES)}")
    if spec.nan_prefix != "nan" and spec.nans != "ignore":
        raise ValueError(f"nan_prefix={spec.nan_prefix!r} with nans={spec.nans!r}: an all-NaN "
                         f"prefix has a value of its own only under nans='ignore'")
    if viewed(spec) and (not spec.inclusive or spec.initial or spec.indices):
        raise ValueError(f"nans={spec.nans!r} (nan_prefix={spec.nan_prefix!r}) with op="
                         f"{spec.op!r} is checked on inclusive scans without an initial value "
                         f"or indices, as pandas, numpy.nancumsum and pyarrow compute them")
    if spec.overflow not in OVERFLOW_RULES:
        raise ValueError(f"overflow={spec.overflow!r} is unknown; allowed: "
                         f"{', '.join(OVERFLOW_RULES)}")
    if spec.overflow == "raise" and (spec.family not in ("sum", "product")
                                     or spec.axis is not None
                                     or not any(d in INT_DTYPES for d in spec.dtypes)):
        raise ValueError(f"overflow='raise' with op={spec.op!r}, axis={spec.axis!r}, dtypes="
                         f"{spec.dtypes!r}: checked overflow is declared for 1-D integer add "
                         f"and mul scans (axis=None, an integer dtype)")
    if not isinstance(spec.ndim, tuple | list):
        raise ValueError(f"ndim={spec.ndim!r} must be a tuple of ranks, as ndim=(2, 3)")
    if spec.ndim:
        if spec.axis is None:
            raise ValueError(f"ndim={spec.ndim!r} with axis=None: ranks are declared for "
                             f"targets that scan an axis of N-D arrays")
        axis = spec.axis if isinstance(spec.axis, int) else 0
        for rank in spec.ndim:
            if not is_count(rank) or rank > MAX_RANK or not -rank <= axis < rank:
                raise ValueError(f"ndim={spec.ndim!r}: each rank must be an integer in "
                                 f"1..{MAX_RANK} "
                                 f"that has axis {spec.axis!r}")
    for pair in spec.accumulates:
        if (len(pair) != 2 or pair[0] not in FLOAT_DTYPES or pair[1] not in FLOAT_DTYPES
                or as_dtype(pair[1]).itemsize <= as_dtype(pair[0]).itemsize):
            raise ValueError(f"accumulates={spec.accumulates!r}: each entry must be (input "
                             f"dtype, accumulator dtype), floats of {', '.join(FLOAT_DTYPES)}, "
                             f"the accumulator wider, as ('float32', 'float64')")
        if spec.family not in ("sum", "product"):
            raise ValueError(f"accumulates with op={spec.op!r}: an accumulator is declared for "
                             f"add and mul")


def nan_view(spec: Any, x: np.ndarray, got: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """For a scan of ``x`` along its last axis under ``spec``'s NaN rule (:func:`viewed`):
    ``x`` with each NaN read as the identity, ``got`` with each output the rule decides
    (a NaN input's under "skip", an all-NaN prefix's under "ignore") replaced by what the
    scan of that input owes there, which outputs broke the rule, and the rule in words.
    The replaced outputs repeat the target's own output before them, so every other
    output is judged as the scan of the NaN-free input, by its operator's criteria."""
    if not is_float(x.dtype) or not np.isnan(x).any():
        return x, got, np.zeros(got.shape, dtype=bool), ""
    op = spec.op
    isnan = np.isnan(x)
    ident = x.dtype.type(_IDENTITY[op])
    clean = np.where(isnan, ident, x).astype(x.dtype)
    prefix = np.logical_and.accumulate(isnan, axis=-1)
    with np.errstate(invalid="ignore"):
        if spec.nans == "skip":
            decided, wrong = isnan, isnan & ~np.isnan(got)
            rule = "NaN at each NaN input (nans='skip')"
        elif spec.nan_prefix == "nan":
            decided, wrong = prefix, prefix & ~np.isnan(got)
            rule = "NaN while the whole prefix is NaN (nans='ignore', nan_prefix='nan')"
        else:
            decided = prefix
            wrong = prefix & ~(got == got.dtype.type(_PREFIX_VALUE[op]))
            rule = (f"the identity {_PREFIX_VALUE[op]} while the whole prefix is NaN "
                    f"(nans='ignore', nan_prefix='identity')")
    # Each decided output takes the target's last undecided output before it (the
    # identity before any): the scan of ``clean`` is owed exactly that there.
    at = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    last = np.maximum.accumulate(np.where(decided, -1, at), axis=-1)
    before = np.take_along_axis(got, np.maximum(last, 0), axis=-1)
    filled = np.where(last < 0, got.dtype.type(_IDENTITY[op]), before)
    return clean, np.where(decided, filled, got).astype(got.dtype), wrong, rule


#: Declared NaN rules tried, in order, on a target that breaks its own: (flags, fields).
ALTERNATIVES: tuple[tuple[str, dict[str, str]], ...] = (
    ("--nans skip", {"nans": "skip", "nan_prefix": "nan"}),
    ("--nans ignore", {"nans": "ignore", "nan_prefix": "nan"}),
    ("--nans ignore --nan-prefix identity", {"nans": "ignore", "nan_prefix": "identity"}),
    ("--nans propagate", {"nans": "propagate", "nan_prefix": "nan"}),
)
#: What a target that keeps each alternative does, as a diagnosis says it.
BEHAVIOUR = {
    "--nans skip": "skips NaN (NaN at each NaN input, the others scanned without them, as "
                   "pandas' skipna=True)",
    "--nans ignore": "ignores NaN (each NaN input's output repeats the one before; NaN while "
                     "the whole prefix is NaN, as numpy.fmax.accumulate)",
    "--nans ignore --nan-prefix identity": "ignores NaN (each NaN input's output repeats the "
                                           "one before, the identity while the whole prefix "
                                           "is NaN, as numpy.nancumsum and pyarrow)",
    "--nans propagate": "propagates NaN (NaN from the first NaN input on, as IEEE "
                        "arithmetic)",
}
