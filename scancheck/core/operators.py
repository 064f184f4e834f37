"""The operator vocabulary shared by the models, the oracle and the CUDA kernels.

Every scan in scancheck is a scan over a monoid: an associative ``combine`` with an
identity.  One :class:`Operator` row names the monoid, how NumPy evaluates it on
arrays of elements, how it is evaluated exactly on Python numbers, and the CUDA
functor in ``kernels/scan_ops.cuh`` that evaluates it on the device.  Combines are
always written ``combine(earlier, later)``: the order matters for the
non-commutative recurrence pair and interval monoid.

Elements are NumPy arrays: shape ``(n,)`` for scalar monoids and ``(n, 2)`` for the
pair monoids (the recurrence pair ``(a, b)`` and the interval ``[i, j]``), laid out
exactly as the CUDA structs ``Pair<T>`` and ``Interval`` are in device memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import array_module, as_dtype, dtype_name, to_numpy
from .combines import (
    INTERVAL_IDENTITY,
    arg_exact,
    arg_np,
    highest,
    interval_exact,
    interval_np,
    logaddexp_exact,
    logaddexp_np,
    lowest,
    max_np,
    min_np,
    mul_np,
    recurrence_np,
    segmented_add_np,
)
from .dtypes import ARG_DTYPES, CUDA_SCALAR, DTYPES, FLOAT_DTYPES, INPUT_DTYPES, KERNEL_DTYPES, is_float
from .rules import extreme_scan

#: How an operator's elements are made for a case (its ``elements`` column).
ELEMENT_KINDS: dict[str, str] = {
    "scalars": "n values of the dtype, drawn from the case's distribution",
    "value-index": "(value, index) pairs: n values drawn as scalars, each with its position",
    "pairs": "(a, b) pairs of the first-order recurrence, drawn as such (contracting or not)",
    "intervals": "the interval proof's input, [k, k] at position k: no data is drawn",
    "flagged": "(flag, value) pairs of a segmented scan: values drawn as scalars, flags 0 or 1 "
               "(1 starts a segment) at a density drawn per case",
}

#: What kind of scan an operator is (its ``family`` column): how its outputs are judged
#: and which contracts a target of it may declare.
FAMILIES: dict[str, str] = {
    "sum": "a running sum: integers wrap modulo 2**bits (or raise, declared), floats are "
           "judged against the rounding bound of any summation order",
    "product": "a running product: integers wrap modulo 2**bits (or raise, declared), floats "
               "are judged by the products' bound (scancheck.oracle.products)",
    "order": "a running extreme: each output one of the inputs, exact in any type, with the "
             "zero order, NaN rule and indices a spec declares",
    "logsumexp": "a running log-sum-exp, judged by its combine-tree bound "
                 "(scancheck.oracle.logsumexp)",
    "arg order": "a running extreme with its index: the monoid cummax and cummin are "
                 "evaluated in",
    "recurrence": "the first-order linear recurrence y_n = a_n*y_{n-1} + b_n, judged through "
                  "rationals or an enclosure",
    "segmented sum": "a sum restarted at every head flag: the monoid segmented kernels scan in",
    "interval": "the interval proof: exact, its answer known without a scan",
}


@dataclass(frozen=True)
class Operator:
    """One monoid: its identity, laws, NumPy and exact evaluation, and CUDA functor."""

    name: str
    #: CUDA functor template in ``kernels/scan_ops.cuh`` (instantiated on the dtype).
    cuda_functor: str
    commutative: bool
    #: 1 for scalar elements, 2 for pair elements stored as ``(n, 2)`` arrays.
    width: int
    dtypes: tuple[str, ...]
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
    #: The same monoid on Python numbers (ints, Fractions, mpmath values, tuples).
    combine_exact: Callable[[Any, Any], Any]
    _identity: Callable[[str], Any]
    #: True when every combine is exact in the element type (no rounding anywhere).
    exact_in: Callable[[str], bool]
    #: What subnormals='flush' allows for it: a key of :data:`FLUSH_RULES`.
    flush: str
    #: What kind of scan it is: a key of :data:`FAMILIES`.
    family: str
    #: The NumPy ufunc whose ``accumulate`` in the element dtype is the inclusive scan
    #: (x[0], then the combine; integers wrapping, NaN for NaN), its ``__name__`` CuPy's
    #: function of the same name; None where NumPy has none.
    ufunc: np.ufunc | None
    doc: str = ""
    #: How its elements are made for a case: a key of :data:`ELEMENT_KINDS`.
    elements: str = "scalars"
    #: Why a target may not declare it ("" where it may): scancheck's own devices.
    not_a_target: str = ""
    #: The C++ element type where it is one type, not a template over the dtype.
    cuda_type: str = ""

    def check_dtype(self, dtype: str) -> np.dtype:
        """Return ``dtype`` as a NumPy dtype, or raise naming the dtypes this operator takes."""
        name = dtype_name(dtype)
        if name not in self.dtypes:
            raise ValueError(
                f"dtype={name!r} is not supported with operator {self.name!r}; "
                f"allowed: {', '.join(self.dtypes)}"
            )
        return as_dtype(name)

    def identity(self, dtype: str) -> np.ndarray:
        """The identity element as an array of shape ``()`` or ``(2,)``."""
        dt = self.check_dtype(dtype)
        return np.asarray(self._identity(dt.name), dtype=dt)

    def element_shape(self, n: int) -> tuple[int, ...]:
        return (n,) if self.width == 1 else (n, self.width)

    def cuda_element(self, dtype: str) -> str:
        """C++ element type of this monoid at ``dtype``, as the kernels are instantiated."""
        dt = self.check_dtype(dtype).name
        scalar = CUDA_SCALAR[dt]
        if self.cuda_type:
            return self.cuda_type
        if self.width == 2:
            return f"scancheck::Pair<{scalar}>"
        return scalar

    def cuda_functor_type(self, dtype: str) -> str:
        dt = self.check_dtype(dtype).name
        if self.cuda_type:
            return self.cuda_functor
        return f"{self.cuda_functor}<{CUDA_SCALAR[dt]}>"

    def check_elements(self, x: Any, argname: str = "x", allow_empty: bool = False) -> None:
        """Raise a ValueError naming ``argname`` unless ``x`` is an array of elements of this
        monoid (non-empty unless ``allow_empty``)."""
        shape = getattr(x, "shape", None)
        if shape is None:
            raise TypeError(f"{argname} must be a NumPy or CuPy array, got {type(x).__name__}")
        want = "1-D" if self.width == 1 else f"2-D of shape (n, {self.width})"
        if len(shape) != (1 if self.width == 1 else 2) or (
            self.width > 1 and shape[1] != self.width
        ):
            raise ValueError(
                f"{argname} must be {want} for operator {self.name!r}, got shape {tuple(shape)}"
            )
        if shape[0] == 0 and not allow_empty:
            raise ValueError(f"{argname} is empty; a scan needs at least one element")
        try:
            self.check_dtype(x.dtype)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{argname}: {exc}") from None

    def host_elements(self, x: Any, argname: str = "x", allow_empty: bool = False) -> np.ndarray:
        """``x`` as a C-contiguous NumPy array in native byte order, checked as
        :meth:`check_elements` checks it (device arrays are copied to the host, sequences
        converted): the form every host-side evaluation reads bit for bit."""
        if hasattr(x, "__cuda_array_interface__") or (
                hasattr(x, "__dlpack__") and not isinstance(x, np.ndarray)):
            x = to_numpy(x)
        elif not hasattr(x, "shape"):
            x = np.asarray(x)
        self.check_elements(x, argname, allow_empty)
        x = np.asarray(x)
        if not x.dtype.isnative:  # a big-endian array read as native would be silently wrong
            x = x.astype(x.dtype.newbyteorder("="))
        return np.ascontiguousarray(x)


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Operator(
            name="add",
            cuda_functor="scancheck::Add",
            commutative=True,
            width=1,
            dtypes=DTYPES,
            combine=lambda a, b: a + b,
            combine_exact=lambda a, b: a + b,
            _identity=lambda dt: 0,
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
            family="sum",
            ufunc=np.add,
            doc="a + b; integers wrap modulo 2**bits, floats round to nearest",
        ),
        Operator(
            name="max",
            cuda_functor="scancheck::Max",
            commutative=True,
            width=1,
            dtypes=INPUT_DTYPES,
            combine=max_np,
            combine_exact=max,
            _identity=lowest,
            exact_in=lambda dt: True,
            flush="exact",
            family="order",
            ufunc=np.maximum,
            doc="NaN-propagating maximum; the earlier operand wins ties",
        ),
        Operator(
            name="min",
            cuda_functor="scancheck::Min",
            commutative=True,
            width=1,
            dtypes=INPUT_DTYPES,
            combine=min_np,
            combine_exact=min,
            _identity=highest,
            exact_in=lambda dt: True,
            flush="exact",
            family="order",
            ufunc=np.minimum,
            doc="NaN-propagating minimum; the earlier operand wins ties",
        ),
        Operator(
            name="mul",
            cuda_functor="scancheck::Mul",
            commutative=True,
            width=1,
            dtypes=DTYPES,
            combine=mul_np,
            combine_exact=lambda a, b: a * b,
            _identity=lambda dt: 1,
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
            family="product",
            ufunc=np.multiply,
            doc="a * b (cumprod); integers wrap modulo 2**bits, floats round to nearest",
        ),
        Operator(
            name="logaddexp",
            cuda_functor="scancheck::LogAddExp",
            commutative=True,
            width=1,
            dtypes=FLOAT_DTYPES,
            combine=logaddexp_np,
            combine_exact=logaddexp_exact,
            _identity=lambda dt: -np.inf,
            exact_in=lambda dt: False,
            flush="within bound",
            family="logsumexp",
            ufunc=np.logaddexp,
            doc="log(exp(a) + exp(b)) (logcumsumexp), as max + log1p(exp(min - max))",
        ),
        Operator(
            name="argmax",
            cuda_functor="scancheck::ArgMax",
            commutative=False,
            width=2,
            dtypes=ARG_DTYPES,
            combine=arg_np("max"),
            combine_exact=arg_exact("max"),
            _identity=lambda dt: (lowest(dt), -1),
            exact_in=lambda dt: True,
            flush="exact",
            family="arg order",
            ufunc=None,
            doc="(value, index): the larger value, NaN above all, the later index on ties "
                "(cummax with indices)",
            elements="value-index",
            not_a_target=("the monoid cummax and cummin are evaluated in; a target returning "
                          "indices declares op='max' with indices=True"),
        ),
        Operator(
            name="argmin",
            cuda_functor="scancheck::ArgMin",
            commutative=False,
            width=2,
            dtypes=ARG_DTYPES,
            combine=arg_np("min"),
            combine_exact=arg_exact("min"),
            _identity=lambda dt: (highest(dt), -1),
            exact_in=lambda dt: True,
            flush="exact",
            family="arg order",
            ufunc=None,
            doc="(value, index): the smaller value, NaN below all, the later index on ties "
                "(cummin with indices)",
            elements="value-index",
            not_a_target=("the monoid cummax and cummin are evaluated in; a target returning "
                          "indices declares op='min' with indices=True"),
        ),
        Operator(
            name="recurrence",
            cuda_functor="scancheck::Recurrence",
            commutative=False,
            width=2,
            dtypes=DTYPES,
            combine=recurrence_np,
            combine_exact=lambda x, y: (y[0] * x[0], y[0] * x[1] + y[1]),
            _identity=lambda dt: (1, 0),
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
            family="recurrence",
            ufunc=None,
            doc="(a1, b1) then (a2, b2) = (a2*a1, a2*b1 + b2): y_n = a_n*y_{n-1} + b_n",
            elements="pairs",
        ),
        Operator(
            name="segmented_add",
            cuda_functor="scancheck::SegmentedAdd",
            commutative=False,
            width=2,
            dtypes=KERNEL_DTYPES,
            combine=segmented_add_np,
            combine_exact=lambda x, y: (y[0] or x[0], y[1] if y[0] else x[1] + y[1]),
            _identity=lambda dt: (0, 0),
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
            family="segmented sum",
            ufunc=None,
            doc="(f1, v1) then (f2, v2) = (f2 or f1, v2 if f2 else v1 + v2): a sum restarted "
                "at every head flag (Blelloch's segmented scan as one monoid)",
            elements="flagged",
            not_a_target=("the head-flag monoid the segmented reference kernels scan in; a "
                          "segmented sum declares op='add' with segments='flags' (or 'offsets', "
                          "'keys', 'groups')"),
        ),
        Operator(
            name="interval",
            cuda_functor="scancheck::IntervalOp",
            commutative=False,
            width=2,
            dtypes=("int32",),
            combine=interval_np,
            combine_exact=interval_exact,
            _identity=lambda dt: INTERVAL_IDENTITY,
            exact_in=lambda dt: True,
            flush="exact",
            family="interval",
            ufunc=None,
            doc="[i, j] then [j+1, k] = [i, k]; any other pair is the absorbing error",
            elements="intervals",
            not_a_target="scancheck's proof device (the interval of summation), not a scan to check",
            cuda_type="scancheck::Interval",
        ),
    )
}
#: The operators a scan target declares (the others say why not: ``not_a_target``).
TARGET_OPERATORS: tuple[str, ...] = tuple(
    name for name, op in OPERATORS.items() if not op.not_a_target)


def builtin_operator(op: Any) -> Operator | None:
    """The table's row for ``op`` (a built-in operator's name, or its row), None for anything
    else: a user's monoid, ``module:ATTR`` naming one, an unknown name."""
    if isinstance(op, Operator):
        return op
    return OPERATORS.get(op) if isinstance(op, str) else None


def get_operator(op: str | Operator) -> Operator:
    """Look an operator up by name, raising a ValueError that lists the known names."""
    if isinstance(op, Operator):
        return op
    try:
        return OPERATORS[op]
    except KeyError:
        raise ValueError(
            f"operator={op!r} is unknown; allowed: {', '.join(OPERATORS)}"
        ) from None


def sequential_scan(x: np.ndarray, op: str | Operator = "add", inclusive: bool = True) -> np.ndarray:
    """Left-to-right scan in the element type: the textbook CPU reference (seed 004's gold)."""
    oper = get_operator(op)
    x = oper.host_elements(x, allow_empty=True)
    ident = oper.identity(x.dtype.name)
    if oper.family == "order":
        incl = extreme_scan(x, oper.name)
    elif oper.ufunc is not None:
        # accumulate is strictly left to right (no pairwise summation) and wraps ints.
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            incl = oper.ufunc.accumulate(x, dtype=x.dtype)
    else:
        incl = np.empty_like(x)
        acc = ident
        for k in range(x.shape[0]):
            acc = oper.combine(acc, x[k])
            incl[k] = acc
    return incl if inclusive else exclusive_of(incl, ident)


def exclusive_of(inclusive: np.ndarray, identity: np.ndarray) -> np.ndarray:
    """The exclusive scan that goes with an inclusive one: the identity, then all but the last."""
    out = np.empty_like(inclusive)
    if out.shape[0]:
        out[0] = identity
        out[1:] = inclusive[:-1]
    return out


def shifted(a: Any, fill: Any) -> Any:
    """``a`` (host or device) moved one place right along its last axis, ``fill`` first and
    its last element dropped: an inclusive scan's outputs as the exclusive scan's, or an
    input whose inclusive scan is the exclusive scan of ``a`` (``fill`` the identity)."""
    xp = array_module(a)
    head = xp.full(a.shape[:-1] + (min(1, a.shape[-1]),), fill, dtype=a.dtype)
    return xp.concatenate([head, a[..., :-1]], axis=-1)


def interval_input(n: int) -> np.ndarray:
    """The interval proof's input [0,0], [1,1], ..., [n-1,n-1] (int32 pairs)."""
    if n < 1 or n >= 2**31 - 1:
        raise ValueError(f"n={n} is out of range for the interval proof; allowed: 1 <= n < 2**31-1")
    idx = np.arange(n, dtype=np.int32)
    return np.stack([idx, idx], axis=-1)


def interval_expected(n: int, inclusive: bool) -> np.ndarray:
    """What a correct scan returns on :func:`interval_input`: [0, k] or [0, k-1] and the identity."""
    idx = np.arange(n, dtype=np.int32)
    if inclusive:
        return np.stack([np.zeros_like(idx), idx], axis=-1)
    out = np.stack([np.zeros_like(idx), idx - 1], axis=-1)
    out[0] = INTERVAL_IDENTITY
    return out
