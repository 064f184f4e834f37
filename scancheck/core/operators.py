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

import mpmath
import numpy as np

from .arrays import array_module, as_dtype, to_numpy

#: The dtypes the reference kernels are instantiated for, and what a target declares unless
#: it says otherwise.
KERNEL_DTYPES: tuple[str, ...] = ("float32", "float64", "int32", "int64")
FLOAT_DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "bfloat16")
INT_DTYPES: tuple[str, ...] = ("int32", "int64", "int8", "int16", "uint8", "uint16", "uint32",
                               "uint64")
#: Every numeric element dtype: what every operator of numbers takes, the oracle, the bounds
#: and the properties.
DTYPES: tuple[str, ...] = (*KERNEL_DTYPES, "float16", "bfloat16", *INT_DTYPES[2:])
#: Every dtype a target may take: the numeric ones and bool.  A max or min scan of booleans
#: (a running or, a running and) is one in bool; a sum or product of booleans is scanned in
#: the integer type the target promotes bool to (in bool, + would be a logical or).
INPUT_DTYPES: tuple[str, ...] = (*DTYPES, "bool")
#: Types whose pair elements (value, index) hold any value of a narrower type and any
#: index below 2**53 exactly: the argmax and argmin monoids are evaluated in them.
ARG_DTYPES: tuple[str, ...] = ("float64", "int64")
#: Significand bits p of each float dtype, the implicit bit included: its unit roundoff is
#: 2**-p, and sums of multiples of 2**e stay exact while they stay below 2**(p+e).
SIGNIFICAND_BITS: dict[str, int] = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}

#: C++ spelling of each element dtype; the same table drives the CUDA instantiations.
CUDA_SCALAR: dict[str, str] = {
    "float32": "float",
    "float64": "double",
    "int32": "int",
    "int64": "long long",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
    "int8": "signed char",
    "int16": "short",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "bool": "bool",
}


def is_float(dtype: Any) -> bool:
    """Whether ``dtype`` is one of :data:`FLOAT_DTYPES` (bfloat16's NumPy kind is 'V')."""
    return as_dtype(dtype).name in SIGNIFICAND_BITS


def finfo(dtype: Any) -> Any:
    """``numpy.finfo`` for every float dtype, bfloat16 included."""
    dt = as_dtype(dtype)
    if dt.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(dt)
    return np.finfo(dt)

#: How a max or min scan may order equal zeros, as a target's spec declares it.
ZERO_ORDERS: dict[str, str] = {
    "either": "-0 and +0 are equal: either may come back (IEEE 754-2008 maxNum and minNum)",
    "ordered": "-0 < +0 (IEEE 754-2019 maximum and minimum)",
}
#: How a float scan treats a NaN input, as a target's spec declares it.  "propagate" is
#: IEEE arithmetic for every operator; "ignore" and "skip" are declared for add, mul, max
#: and min (what an all-NaN prefix gives under "ignore" is :data:`NAN_PREFIXES`').
NAN_RULES: dict[str, str] = {
    "propagate": "a NaN anywhere in the prefix gives NaN (IEEE arithmetic; IEEE 754-2019 "
                 "maximum and minimum)",
    "ignore": "NaN inputs are left out of the running result, which a NaN input's output "
              "repeats (C fmax and fmin, IEEE 754-2019 maximumNumber, numpy.nancumsum)",
    "skip": "NaN at each NaN input, every other output the scan of the inputs that are not "
            "NaN (pandas' skipna=True: [1, nan, 2, 3] -> [1, nan, 3, 6])",
}
#: Under nans="ignore": what an output whose whole prefix is NaN holds.
NAN_PREFIXES: dict[str, str] = {
    "nan": "NaN (numpy.fmax.accumulate, C fmax)",
    "identity": "the operator's identity: 0 for add, 1 for mul, -inf for max, +inf for min "
                "(numpy.nancumsum, pyarrow)",
}

#: What a float scan does with subnormal numbers, as a target's spec declares it; also
#: "flush:DTYPE,...", "flush" in the float dtypes named alone (:func:`flushed_dtypes`).
SUBNORMAL_RULES: dict[str, str] = {
    "keep": "IEEE gradual underflow: subnormal inputs and results are numbers like any other",
    "flush": "subnormal inputs and results read as zero of their sign (DAZ and FTZ, as XLA does "
             "on CPUs) in every float dtype; what that allows depends on the operator "
             "(FLUSH_RULES).  'flush:float32' names the dtypes that flush: -ftz=true on NVIDIA "
             "GPUs flushes float32, never float64 (docs/ftz-h100.txt)",
}
#: What subnormals='flush' allows, per operator (the ``flush`` column of :data:`OPERATORS`).
#: Decided from what flush-to-zero hardware computes (docs/ftz-h100.txt, an H100 under
#: -ftz=true and --use_fast_math, float32; float64 never flushes there): add, mul, fma and
#: exp-log arithmetic read subnormal operands as zeros of their sign and flush subnormal
#: results to them, sign kept; fmaxf and fminf (max.ftz, min.ftz) do the same and order -0
#: below +0; a compare-and-select (setp.ftz, then selp) compares subnormals as zeros but
#: returns the selected operand's bits unflushed; moves never flush.  The CPU libraries agree:
#: jax's cummax returns flushed zeros, torch's cummax under set_flush_denormal(True) the
#: flushed value at the last tied index.
FLUSH_RULES: dict[str, str] = {
    # Rounding operators: a flushed output is a rounding of its own, so 'flush' permits it.
    "within bound": "may flush: every output is held to the operator's criterion grown by what "
                    "reading subnormal inputs and partial results as zero can move it; a scan "
                    "that keeps every subnormal conforms too",
    # Selecting operators round nothing: flushing is visible in the bits, so it is required.
    "exact": "must flush: every comparison reads a subnormal as a zero of its sign, and each "
             "output is the exact scan of those zeros (fmaxf under -ftz=true), or the first or "
             "the last input tied with it, unflushed (a compare-and-select: the earlier or the "
             "later operand winning ties); an index names the last tied input, its value that "
             "input or its zero.  A scan that keeps subnormals, or flushes only some, fails",
}

#: The interval monoid's encoding of its identity and of its absorbing error element.
INTERVAL_IDENTITY = (-1, -1)
INTERVAL_ERROR = (-2, -2)


def _max_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # NaN-propagating, and the earlier operand wins ties (so -0.0/+0.0 and NaN
    # payloads resolve the same way on every schedule): the CUDA functor is identical.
    take_b = np.isnan(b) | (b > a) if is_float(a.dtype) else b > a
    if is_float(a.dtype):
        take_b &= ~np.isnan(a)
    return np.where(take_b, b, a)


def _min_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    take_b = np.isnan(b) | (b < a) if is_float(a.dtype) else b < a
    if is_float(a.dtype):
        take_b &= ~np.isnan(a)
    return np.where(take_b, b, a)


def _recurrence_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # (a1, b1) then (a2, b2): y = a2*(a1*y0 + b1) + b2.  Two separately rounded
    # operations, never a fused multiply-add: the kernels are compiled with --fmad=false.
    a1, b1 = x[..., 0], x[..., 1]
    a2, b2 = y[..., 0], y[..., 1]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.stack([a2 * a1, a2 * b1 + b2], axis=-1)


def _segmented_add_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # (f1, v1) then (f2, v2): a head flag f2 starts a new segment, so the sum restarts at v2.
    f1, v1 = x[..., 0], x[..., 1]
    f2, v2 = y[..., 0], y[..., 1]
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add(v1, v2, dtype=np.result_type(v1, v2))  # integers wrap, as in CUDA
    # The later flag where it is one, else the earlier: "or" on flags of 0 and 1, and the
    # identity (0, 0) neutral on any flag value.
    return np.stack([np.where(f2 != 0, f2, f1), np.where(f2 != 0, v2, total)], axis=-1)


def _mul_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.multiply(a, b, dtype=np.result_type(a, b))  # integers wrap, as in CUDA


def _logaddexp_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # NumPy has no float16 or bfloat16 loop of its own precision: through float32, once
    # rounded, as the CUDA functor computes it.
    dt = np.result_type(a, b)
    wide = np.float64 if dt == np.float64 else np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        return np.logaddexp(np.asarray(a, wide), np.asarray(b, wide)).astype(dt)


def _logaddexp_exact(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) at mpmath's working precision (-inf is the identity)."""
    if mpmath.isinf(a) and a < 0:
        return b
    if mpmath.isinf(b) and b < 0:
        return a
    hi, lo = (a, b) if a >= b else (b, a)
    return hi + mpmath.log1p(mpmath.exp(lo - hi))


def _arg_np(which: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
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


def _arg_exact(which: str) -> Callable[[Any, Any], tuple]:
    def combine(x: Any, y: Any) -> tuple:
        if y[1] < 0:
            return tuple(x)
        if x[1] < 0 or y[0] != y[0]:
            return tuple(y)
        if x[0] != x[0]:
            return tuple(x)
        return tuple(y) if (y[0] >= x[0] if which == "max" else y[0] <= x[0]) else tuple(x)

    return combine


def _interval_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ident = np.array(INTERVAL_IDENTITY, dtype=x.dtype)
    err = np.array(INTERVAL_ERROR, dtype=x.dtype)
    x_id = np.all(x == ident, axis=-1)
    y_id = np.all(y == ident, axis=-1)
    adjacent = (x[..., 1] + 1 == y[..., 0]) & (x[..., 0] >= 0) & (y[..., 0] >= 0)
    joined = np.stack([x[..., 0], y[..., 1]], axis=-1)
    out = np.where(adjacent[..., None], joined, err)
    out = np.where(y_id[..., None], x, out)
    return np.where(x_id[..., None], y, out)


def _interval_exact(x: tuple, y: tuple) -> tuple:
    if tuple(x) == INTERVAL_IDENTITY:
        return tuple(y)
    if tuple(y) == INTERVAL_IDENTITY:
        return tuple(x)
    if x[0] >= 0 and y[0] >= 0 and x[1] + 1 == y[0]:
        return (x[0], y[1])
    return INTERVAL_ERROR


def _lowest(dtype: str) -> Any:
    if as_dtype(dtype) == np.bool_:
        return False
    return -np.inf if is_float(dtype) else np.iinfo(dtype).min


def _highest(dtype: str) -> Any:
    if as_dtype(dtype) == np.bool_:
        return True
    return np.inf if is_float(dtype) else np.iinfo(dtype).max


#: How an operator's elements are made for a case (its ``elements`` column).
ELEMENT_KINDS: dict[str, str] = {
    "scalars": "n values of the dtype, drawn from the case's distribution",
    "value-index": "(value, index) pairs: n values drawn as scalars, each with its position",
    "pairs": "(a, b) pairs of the first-order recurrence, drawn as such (contracting or not)",
    "intervals": "the interval proof's input, [k, k] at position k: no data is drawn",
    "flagged": "(flag, value) pairs of a segmented scan: values drawn as scalars, flags 0 or 1 "
               "(1 starts a segment) at a density drawn per case",
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
    doc: str = ""
    #: How its elements are made for a case: a key of :data:`ELEMENT_KINDS`.
    elements: str = "scalars"
    #: Why a target may not declare it ("" where it may): scancheck's own devices.
    not_a_target: str = ""
    #: The C++ element type where it is one type, not a template over the dtype.
    cuda_type: str = ""

    def check_dtype(self, dtype: str) -> np.dtype:
        """Return ``dtype`` as a NumPy dtype, or raise naming the dtypes this operator takes."""
        name = as_dtype(dtype).name
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
            doc="a + b; integers wrap modulo 2**bits, floats round to nearest",
        ),
        Operator(
            name="max",
            cuda_functor="scancheck::Max",
            commutative=True,
            width=1,
            dtypes=INPUT_DTYPES,
            combine=_max_np,
            combine_exact=max,
            _identity=_lowest,
            exact_in=lambda dt: True,
            flush="exact",
            doc="NaN-propagating maximum; the earlier operand wins ties",
        ),
        Operator(
            name="min",
            cuda_functor="scancheck::Min",
            commutative=True,
            width=1,
            dtypes=INPUT_DTYPES,
            combine=_min_np,
            combine_exact=min,
            _identity=_highest,
            exact_in=lambda dt: True,
            flush="exact",
            doc="NaN-propagating minimum; the earlier operand wins ties",
        ),
        Operator(
            name="mul",
            cuda_functor="scancheck::Mul",
            commutative=True,
            width=1,
            dtypes=DTYPES,
            combine=_mul_np,
            combine_exact=lambda a, b: a * b,
            _identity=lambda dt: 1,
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
            doc="a * b (cumprod); integers wrap modulo 2**bits, floats round to nearest",
        ),
        Operator(
            name="logaddexp",
            cuda_functor="scancheck::LogAddExp",
            commutative=True,
            width=1,
            dtypes=FLOAT_DTYPES,
            combine=_logaddexp_np,
            combine_exact=_logaddexp_exact,
            _identity=lambda dt: -np.inf,
            exact_in=lambda dt: False,
            flush="within bound",
            doc="log(exp(a) + exp(b)) (logcumsumexp), as max + log1p(exp(min - max))",
        ),
        Operator(
            name="argmax",
            cuda_functor="scancheck::ArgMax",
            commutative=False,
            width=2,
            dtypes=ARG_DTYPES,
            combine=_arg_np("max"),
            combine_exact=_arg_exact("max"),
            _identity=lambda dt: (_lowest(dt), -1),
            exact_in=lambda dt: True,
            flush="exact",
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
            combine=_arg_np("min"),
            combine_exact=_arg_exact("min"),
            _identity=lambda dt: (_highest(dt), -1),
            exact_in=lambda dt: True,
            flush="exact",
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
            combine=_recurrence_np,
            combine_exact=lambda x, y: (y[0] * x[0], y[0] * x[1] + y[1]),
            _identity=lambda dt: (1, 0),
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
            doc="(a1, b1) then (a2, b2) = (a2*a1, a2*b1 + b2): y_n = a_n*y_{n-1} + b_n",
            elements="pairs",
        ),
        Operator(
            name="segmented_add",
            cuda_functor="scancheck::SegmentedAdd",
            commutative=False,
            width=2,
            dtypes=KERNEL_DTYPES,
            combine=_segmented_add_np,
            combine_exact=lambda x, y: (y[0] or x[0], y[1] if y[0] else x[1] + y[1]),
            _identity=lambda dt: (0, 0),
            exact_in=lambda dt: not is_float(dt),
            flush="within bound",
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
            combine=_interval_np,
            combine_exact=_interval_exact,
            _identity=lambda dt: INTERVAL_IDENTITY,
            exact_in=lambda dt: True,
            flush="exact",
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
    if oper.name == "add":
        # add.accumulate is strictly left to right (no pairwise summation) and wraps ints.
        with np.errstate(over="ignore", invalid="ignore"):
            incl = np.add.accumulate(x, dtype=x.dtype)
    elif oper.name in ("max", "min"):
        incl = extreme_scan(x, oper.name)
    else:
        incl = np.empty_like(x)
        acc = ident
        for k in range(x.shape[0]):
            acc = oper.combine(acc, x[k])
            incl[k] = acc
    return incl if inclusive else exclusive_of(incl, ident)


def check_rules(zeros: str = "either", nans: str = "propagate", subnormals: str = "keep") -> None:
    """Raise a ValueError naming the argument unless each is a known rule."""
    for name, value, allowed in (("zeros", zeros, ZERO_ORDERS), ("nans", nans, NAN_RULES)):
        if value not in allowed:
            raise ValueError(f"{name}={value!r} is unknown; allowed: {', '.join(allowed)}")
    flushed_dtypes(subnormals)


def flushed_dtypes(subnormals: str) -> tuple[str, ...]:
    """The float dtypes whose subnormals a target with the subnormal rule ``subnormals``
    (:data:`SUBNORMAL_RULES`) reads as zero, or a ValueError naming what is allowed."""
    if subnormals in SUBNORMAL_RULES:
        return () if subnormals == "keep" else FLOAT_DTYPES
    head, _, named = str(subnormals).partition(":")
    dtypes = tuple(named.split(",")) if named else ()
    if head != "flush" or not dtypes or not set(dtypes) <= set(FLOAT_DTYPES):
        raise ValueError(f"subnormals={subnormals!r} is unknown; allowed: "
                         f"{', '.join(SUBNORMAL_RULES)}, or flush:DTYPE,... of "
                         f"{', '.join(FLOAT_DTYPES)}")
    return dtypes


def extreme_scan(x: np.ndarray, which: str, zeros: str = "either", nans: str = "propagate"
                 ) -> np.ndarray:
    """The inclusive max or min scan along the last axis of ``x`` under a zero order of
    :data:`ZERO_ORDERS` and a NaN rule of :data:`NAN_RULES`, exact.  Under "either" the
    earlier operand wins ties, as the CUDA functors do, so a zero answer has the sign of the
    row's first zero."""
    if which not in ("max", "min"):
        raise ValueError(f"which={which!r}; allowed: 'max', 'min'")
    check_rules(zeros, nans)
    with np.errstate(invalid="ignore"):
        if nans in ("ignore", "skip"):
            out = (np.fmax if which == "max" else np.fmin).accumulate(x, axis=-1)
            if nans == "skip":
                out = np.where(np.isnan(x), x, out)
        else:
            out = (np.maximum if which == "max" else np.minimum).accumulate(x, axis=-1)
    if not is_float(x.dtype) or not x.size:
        return out
    zero = x == 0
    if not zero.any():
        return out
    if zeros == "either":
        first = np.take_along_axis(x, np.argmax(zero, axis=-1)[..., None], axis=-1)
        return np.where(out == 0, first, out)
    # Ordered: max is +0 once any +0 is in the prefix, min is -0 once any -0 is.
    seen = np.logical_or.accumulate(zero & (np.signbit(x) == (which == "min")), axis=-1)
    wanted = x.dtype.type(-0.0 if which == "min" else 0.0)
    return np.where(out == 0, np.where(seen, wanted, -wanted), out)


def subnormal(x: np.ndarray) -> np.ndarray:
    """Per element of ``x``: True where it is a nonzero float below the smallest normal number
    of its dtype in magnitude (never for integers, NaN or infinities)."""
    if not is_float(x.dtype):
        return np.zeros(np.shape(x), dtype=bool)
    a = np.abs(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        return (a > 0) & (a < float(finfo(x.dtype).smallest_normal))


def read_as_zero(x: np.ndarray) -> np.ndarray:
    """``x`` with each subnormal replaced by a zero of its sign, as flush-to-zero hardware
    reads it (DAZ); other values unchanged, bit for bit."""
    tiny = subnormal(x)
    if not tiny.any():
        return x
    return np.where(tiny, np.copysign(x.dtype.type(0), x), x).astype(x.dtype)


def flushed_extreme_scan(x: np.ndarray, which: str, zeros: str = "either",
                         nans: str = "propagate") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a max or min scan along the last axis of ``x`` may return under
    subnormals='flush' (:data:`FLUSH_RULES`, "exact"): the scan of :func:`read_as_zero` of
    ``x``, and per output the positions of the first and the last input tied with it (equal
    once read as zero; under the "ordered" zero order, with its sign too), whose own bits a
    compare-and-select returns."""
    key = read_as_zero(x)
    answer = extreme_scan(key, which, zeros, nans)
    with np.errstate(invalid="ignore"):
        tied = key == answer
        if zeros == "ordered":
            tied &= np.signbit(key) == np.signbit(answer)
        same = answer[..., 1:] == answer[..., :-1]
        if zeros == "ordered":
            same &= np.signbit(answer[..., 1:]) == np.signbit(answer[..., :-1])
    at = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    # The running answer takes a new value only from an input equal to it: its first tie.
    changed = np.concatenate([np.ones(x.shape[:-1] + (min(1, x.shape[-1]),), dtype=bool), ~same],
                             axis=-1)
    first = np.maximum.accumulate(np.where(changed, at, 0), axis=-1)
    # Inputs tied with the answer when they came are tied with it still, until it changes.
    last = np.maximum.accumulate(np.where(tied, at, 0), axis=-1)
    return answer, first, np.maximum(first, last)


def arg_extreme_scan(x: np.ndarray, which: str) -> tuple[np.ndarray, np.ndarray]:
    """The inclusive cummax or cummin of ``x`` along its last axis with indices, exactly as the
    argmax and argmin monoids define them: NaN wins, and equal values go to the later index
    (so each value is ``x`` at its index, the zero's sign included)."""
    if which not in ("max", "min"):
        raise ValueError(f"which={which!r}; allowed: 'max', 'min'")
    if x.shape[-1] == 0:
        return x.copy(), np.zeros(x.shape, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        if is_float(x.dtype):
            ordered = (np.fmax if which == "max" else np.fmin).accumulate(x, axis=-1)
            seen_nan = np.logical_or.accumulate(np.isnan(x), axis=-1)
        else:
            ordered = (np.maximum if which == "max" else np.minimum).accumulate(x, axis=-1)
            seen_nan = np.zeros(x.shape, dtype=bool)
        before = np.concatenate([ordered[..., :1], ordered[..., :-1]], axis=-1)
        nan_before = np.concatenate([np.zeros_like(seen_nan[..., :1]), seen_nan[..., :-1]],
                                    axis=-1)
        beats = (x >= before) if which == "max" else (x <= before)
        # Position i takes over when it is a NaN, or matches the running extreme and no NaN
        # came before it; an output's index is the last takeover so far.
        update = (np.isnan(x) if is_float(x.dtype) else False) | (~nan_before & beats)
    update[..., 0] = True
    idx = np.maximum.accumulate(np.where(update, np.arange(x.shape[-1]), 0), axis=-1)
    return np.take_along_axis(x, idx, axis=-1), idx.astype(np.int64)


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
