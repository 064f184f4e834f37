"""Exact prefix scans: what the answer is, before any rounding.

Two independent exact paths compute prefix sums of float inputs:

* :func:`exact_scan_mpmath` sums in mpmath at a working precision chosen from the
  input's exponent range and length, so that every addition is exact;
* :func:`exact_scan` (the default for floats) adds every finite value, in order, to a
  fixed-point integer of as many 64-bit words as the data's exponent span needs and
  rounds each prefix once (:mod:`scancheck.oracle.exact_cpu`, compiled by Numba; on the device,
  :mod:`scancheck.oracle.exact_device`).  No float accumulation happens anywhere; it runs at
  tens of millions of elements a second on one core.

Both round each exact prefix once to the input's type (round to nearest, ties to
even).  IEEE specials follow the standard: a NaN makes every later inclusive prefix
NaN, +inf and -inf together give NaN, and a prefix of only -0.0 is -0.0.  Integer
sums wrap modulo 2**bits (two's complement), as every GPU scan of int32/int64 does.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from ..core.arrays import KeptArrays, as_dtype, on_device
from ..core.counts import check_flag
from ..core.dtypes import FLOAT_DTYPES, SIGNIFICAND_BITS, is_float
from ..core.operators import Operator, exclusive_of, get_operator
from ..core.rules import check_rules, extreme_scan

_EMIN = {"float32": -126, "float64": -1022, "float16": -14, "bfloat16": -126}
_EMAX = {"float32": 127, "float64": 1023, "float16": 15, "bfloat16": 127}


def _float_kind(dtype: np.dtype) -> str:
    try:
        return _KINDS[dtype]
    except (KeyError, TypeError):  # not seen yet, or unhashable: named the long way
        pass
    name = as_dtype(dtype).name
    if name not in SIGNIFICAND_BITS:
        raise ValueError(f"dtype={name!r} is not a float type; allowed: {', '.join(FLOAT_DTYPES)}")
    _KINDS[dtype] = name
    return name


#: dtype (as given) -> its float kind: the exact recurrence rounds every output through
#: ``round_dyadic``, and naming a NumPy dtype costs more than the rounding.
_KINDS: dict[Any, str] = {}


def round_dyadic(man: int, exp: int, dtype: str) -> float:
    """Round ``man * 2**exp`` (Python ints) to ``dtype`` once: nearest, ties to even."""
    kind = _float_kind(dtype)
    if man == 0:
        return 0.0
    p, emin, emax = SIGNIFICAND_BITS[kind], _EMIN[kind], _EMAX[kind]
    mag = abs(man)
    lead = mag.bit_length() - 1 + exp
    quantum = max(lead - p + 1, emin - p + 1)
    if exp >= quantum:
        keep = mag << (exp - quantum)
    else:
        d = quantum - exp
        keep, rem = mag >> d, mag & ((1 << d) - 1)
        half = 1 << (d - 1)
        if rem > half or (rem == half and keep & 1):
            keep += 1
    if keep.bit_length() + quantum - 1 > emax:
        value = math.inf
    else:
        value = math.ldexp(float(keep), quantum)
    return -value if man < 0 else value


_LAYOUT = {  # (signed integer view, fraction bits, exponent bits, exponent bias)
    "float32": (np.int32, 23, 8, 127),
    "float64": (np.int64, 52, 11, 1023),
    "float16": (np.int16, 10, 5, 15),
    "bfloat16": (np.int16, 7, 8, 127),
}


def _decompose(x: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer mantissas and exponents with x == M * 2**E exactly (zeros give M == 0).

    Read straight from the IEEE bit fields, so subnormals need no special care.
    """
    view, frac_bits, exp_bits, bias = _LAYOUT[kind]
    bits = x.view(view).astype(np.int64)
    field = (bits >> frac_bits) & ((1 << exp_bits) - 1)
    frac = bits & ((1 << frac_bits) - 1)
    normal = field != 0
    mant = np.where(normal, frac | (1 << frac_bits), frac)
    expo = np.where(normal, field, 1) - bias - frac_bits
    return np.where(bits < 0, -mant, mant), expo


def lowest_set_bit(x: np.ndarray) -> np.ndarray:
    """Per element of a float array: the largest e with x a multiple of 2**e (+inf for 0)."""
    kind = _float_kind(x.dtype)
    mant, expo = _decompose(np.ascontiguousarray(x), kind)
    mag = np.abs(mant)
    low = mag & -mag  # the lowest set bit of the integer mantissa, a power of two
    tz = np.frexp(low.astype(np.float64))[1] - 1  # exact: low is a power of two < 2**53
    return np.where(mag == 0, np.inf, (expo + tz).astype(np.float64))


def _prefix_sums(x: np.ndarray, kind: str) -> np.ndarray:
    """Correctly rounded inclusive prefix sums along the last axis of a float array (1-D, or
    2-D rows scanned each on its own), IEEE's specials included, as float64 values that
    hold them exactly (a new array, which the caller may keep or write into)."""
    from .exact_cpu import prefix_sums

    view, frac_bits, exp_bits, bias = _LAYOUT[kind]
    bits = np.atleast_2d(np.ascontiguousarray(x)).view(np.dtype(view).str.replace("i", "u"))
    key = _kept_key(kind, bits)
    if key is not None:
        kept = _KEPT.get(key)
        if kept is not None:
            return kept.reshape(x.shape)
    sums = prefix_sums(bits, frac_bits, exp_bits, bias, SIGNIFICAND_BITS[kind], _EMIN[kind],
                       _EMAX[kind])
    if key is not None:
        _KEPT.put(key, sums)
    return sums.reshape(x.shape)


#: The exact sums of the inputs summed last in this process, by their bits, handed out as
#: copies: the properties of a check, the orders :func:`~scancheck.explain.explain` weighs,
#: and a session's checks (the controls, the tests) meet the same inputs again and again.
#: Only inputs of :data:`KEPT_FROM` elements or more, whose SHA-256 (a twelfth of the sums'
#: time) is then worth it.
KEPT_FROM = 4096


def _kept_key(kind: str, bits: np.ndarray) -> tuple | None:
    if bits.size < KEPT_FROM:
        return None
    import hashlib

    return kind, bits.shape, hashlib.sha256(memoryview(bits).cast("B")).digest()


_KEPT = KeptArrays(64 * 2**20)


def _apply_specials(x: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Overlay IEEE NaN, infinity and negative-zero semantics on exact finite sums (for the
    mpmath path: the compiled path applies the same rules as it goes, independently)."""
    if is_float(x.dtype) and x.size and not (np.isfinite(x).all() and (x[..., 0] != 0).all()):
        nan_seen = np.logical_or.accumulate(np.isnan(x), axis=-1)
        pinf = np.logical_or.accumulate(x == np.inf, axis=-1)
        ninf = np.logical_or.accumulate(x == -np.inf, axis=-1)
        negzero = np.logical_and.accumulate((x == 0) & np.signbit(x), axis=-1)
        sums = np.where(pinf, np.inf, sums)
        sums = np.where(ninf, -np.inf, sums)
        sums = np.where(nan_seen | (pinf & ninf), np.nan, sums)
        sums = np.where(negzero, -0.0, sums)
    return sums


def exact_scan(
    x: np.ndarray, op: str | Operator = "add", inclusive: bool = True, *,
    zeros: str = "either", nans: str = "propagate",
) -> np.ndarray:
    """The exact scan of ``x`` rounded once to its dtype: the answer a scan must approximate.

    A device array (CuPy, ``__cuda_array_interface__`` or DLPack) gets a CuPy array back
    (a torch bfloat16 tensor gets one of those): 1-D floats under ``add`` are computed on
    the device (:mod:`scancheck.oracle.exact_device`), the rest on the host, never by the library
    under test.  Floats under ``add`` take the compiled fixed-point path
    (:mod:`scancheck.oracle.exact_cpu`); integer ``add`` wraps; ``max``
    and ``min`` are exact in any type, with the zero order and NaN rule given
    (:data:`~scancheck.core.rules.ZERO_ORDERS`, :data:`~scancheck.core.rules.NAN_RULES`);
    the recurrence pair goes through rationals.
    """
    oper = get_operator(op)
    check_flag("inclusive", inclusive, np.bool_)
    check_rules(zeros, nans)
    if on_device(x):
        return _exact_scan_on_device(x, oper, inclusive, zeros, nans)
    x = oper.host_elements(x, allow_empty=True)
    if oper.name == "recurrence":
        out = exact_recurrence(x)
    elif oper.name == "interval":
        from ..core.operators import sequential_scan

        out = sequential_scan(x, oper, inclusive=True)
    else:
        out = _exact_rows(x[None, :], oper, zeros, nans)[0]
    return out if inclusive else exclusive_of(out, oper.identity(x.dtype.name))


def _exact_scan_on_device(x: Any, oper: Operator, inclusive: bool, zeros: str,
                          nans: str) -> Any:
    import cupy as cp

    from .exact_device import FORMATS, as_device_array, exact_scan_device, is_torch_bfloat16

    if is_torch_bfloat16(x):  # CuPy has no bfloat16: the device oracle reads the bits
        if oper.family == "sum" and x.ndim == 1:
            return exact_scan_device(x, inclusive)
        import torch

        host = x.detach().cpu().view(torch.int16).numpy().view(as_dtype("bfloat16"))
        out = exact_scan(host, oper, inclusive, zeros=zeros, nans=nans)
        return torch.from_numpy(out.view(np.int16)).view(torch.bfloat16).to(x.device)
    a = as_device_array(x)
    if oper.family == "sum" and a.ndim == 1 and a.dtype.name in FORMATS:
        return exact_scan_device(a, inclusive)
    return cp.asarray(exact_scan(cp.asnumpy(a), oper, inclusive, zeros=zeros, nans=nans))


def exact_scan_axis(x: Any, op: str | Operator = "add", axis: int = -1, inclusive: bool = True,
                    *, zeros: str = "either", nans: str = "propagate") -> np.ndarray:
    """:func:`exact_scan` of every row of an N-D array along ``axis`` (add, max or min): each
    row rounded once, as if scanned alone; the rows are computed together."""
    oper = get_operator(op)
    if oper.width != 1:
        raise ValueError(f"operator {oper.name!r} has pair elements; exact_scan_axis takes "
                         f"add, max or min")
    a = np.asarray(x)
    if a.ndim == 0:
        raise ValueError("x must have at least one dimension, got a 0-D array")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"axis={axis} is out of range for x of {a.ndim} dimensions")
    oper.check_dtype(a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    moved = np.moveaxis(a, axis, -1)
    rows = np.ascontiguousarray(moved).reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
    out = _exact_rows(rows, oper, zeros, nans) if rows.size else rows.copy()
    if not inclusive and out.shape[-1]:
        out = np.concatenate([np.broadcast_to(oper.identity(a.dtype.name), (out.shape[0], 1)),
                              out[:, :-1]], axis=1)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def _exact_rows(x: np.ndarray, oper: Operator, zeros: str, nans: str) -> np.ndarray:
    """Inclusive exact scans of the rows of a 2-D array of a scalar monoid's elements."""
    if (zeros, nans) != ("either", "propagate") and oper.family != "order":
        raise ValueError(f"zeros= and nans= apply to max and min, not to operator {oper.name!r}")
    if oper.family == "order":
        return extreme_scan(x, oper.name, zeros, nans)
    if not is_float(x.dtype):  # integer sums and products wrap modulo 2**bits, exactly
        with np.errstate(over="ignore"):
            if oper.family == "product":
                return np.multiply.accumulate(x, axis=-1, dtype=x.dtype)
            return np.add.accumulate(x, axis=-1, dtype=x.dtype)
    if oper.family != "sum":
        raise ValueError(f"float scans under {oper.name!r} are not rounded once here: they are "
                         f"judged against a bound (scancheck.oracle.products, scancheck.oracle.logsumexp)")
    # The sums come rounded to the type already, so the cast is exact: a cast from float64
    # to a 16-bit type may round twice, through float32 (ml_dtypes' to bfloat16 before 0.7).
    return _prefix_sums(x, _float_kind(x.dtype)).astype(x.dtype)


def working_precision(x: np.ndarray) -> int:
    """Bits of precision at which every partial sum of finite ``x`` is exact in mpmath."""
    kind = _float_kind(x.dtype)
    mant, expo = _decompose(np.where(np.isfinite(x), x, 0).astype(x.dtype), kind)
    nonzero = mant != 0
    if not nonzero.any():
        return 2
    span = int(expo[nonzero].max() - expo[nonzero].min())
    return span + SIGNIFICAND_BITS[kind] + max(x.shape[0], 2).bit_length() + 2


def exact_scan_mpmath(x: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Prefix sums of a float array summed exactly in mpmath, each rounded once to its dtype."""
    x = get_operator("add").host_elements(x, allow_empty=True)
    kind = _float_kind(x.dtype)
    finite = np.where(np.isfinite(x), x, 0).astype(x.dtype)
    ctx = mpmath.MPContext()
    ctx.prec = working_precision(x)
    acc = ctx.mpf(0)
    sums = np.empty(x.shape[0], dtype=np.float64)
    for k, v in enumerate(finite.astype(np.float64).tolist()):  # exact: every float type fits
        acc = acc + ctx.mpf(v)
        man, exp = acc.man_exp if acc != 0 else (0, 0)
        sums[k] = round_dyadic(-int(man) if acc < 0 else int(man), int(exp), kind)
    out = _apply_specials(x, sums).astype(x.dtype)
    return out if inclusive else exclusive_of(out, np.zeros((), dtype=x.dtype))


def round_fraction(q: Fraction, dtype: str) -> float:
    """Round a rational once to ``dtype`` (nearest, ties to even)."""
    kind = _float_kind(dtype)
    if q == 0:
        return 0.0
    num, den = q.numerator, q.denominator
    # Scale so that the integer quotient carries p + 2 bits beyond the leading bit;
    # the remainder becomes the sticky bit, which keeps ties-to-even exact.
    shift = max(0, SIGNIFICAND_BITS[kind] + 3 + den.bit_length() - abs(num).bit_length())
    quo, rem = divmod(abs(num) << shift, den)
    quo = (quo << 1) | (1 if rem else 0)
    return round_dyadic(quo if num > 0 else -quo, -shift - 1, kind)


#: Recurrences up to this length take exact rationals (their size grows with n); longer
#: ones a rigorous interval enclosure (:func:`recurrence_enclosure`).
RATIONAL_RECURRENCE_MAX = 300


def _recurrence_columns(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The a and b of float recurrence pairs as contiguous float64 columns (exact)."""
    pairs = get_operator("recurrence").host_elements(pairs, "pairs", allow_empty=True)
    _float_kind(pairs.dtype)
    p = pairs.astype(np.float64)  # exact: every float type is a float64
    return np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1])


def recurrence_enclosure(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 bounds ``lo <= y_k <= hi`` on component b (y_k) of every inclusive prefix of
    float recurrence pairs, rigorous: interval arithmetic in order, rounded outward
    (:func:`scancheck.oracle.exact_cpu.recurrence_enclosure`), 10**7 pairs a second.  Where the
    data overflow float64 the bounds are infinite or NaN: nothing is claimed there."""
    from .exact_cpu import recurrence_enclosure as enclose

    a, b = _recurrence_columns(pairs)
    lo, hi = np.empty(a.shape[0]), np.empty(a.shape[0])
    with np.errstate(all="ignore"):
        enclose(a, b, lo, hi)
    return lo, hi


def recurrence_magnitudes(pairs: np.ndarray) -> np.ndarray:
    """An upper bound, per k, on the recurrence of the magnitudes (m_k = |a_k|*m_{k-1} +
    |b_k|), rounded upward in order: the scale of the recurrence's rounding bound."""
    from .exact_cpu import magnitudes_above

    a, b = _recurrence_columns(pairs)
    hi = np.empty(a.shape[0])
    with np.errstate(all="ignore"):
        magnitudes_above(a, b, hi)
    return hi


def exact_recurrence(pairs: np.ndarray) -> np.ndarray:
    """Inclusive scan of recurrence pairs (a, b) in exact rationals, rounded once per component.

    Component b of prefix k is y_k of y_k = a_k*y_{k-1} + b_k with y_{-1} = 0.
    """
    pairs = get_operator("recurrence").host_elements(pairs, "pairs", allow_empty=True)
    if np.issubdtype(pairs.dtype, np.integer):
        from ..core.operators import sequential_scan

        return sequential_scan(pairs, "recurrence")
    if not np.isfinite(pairs).all():
        raise ValueError("pairs must be finite for the exact recurrence")
    kind = _float_kind(pairs.dtype)
    out = np.empty(pairs.shape, dtype=np.float64)
    # Every float is m * 2**e, and so is every prefix: integers and a shared exponent carry
    # the rationals exactly, without the gcd a Fraction takes at each step.
    ma, ea, mb, eb = 1, 0, 0, 0
    for k, (a, b) in enumerate(pairs.tolist()):
        (na, ka), (nb, kb) = _dyadic(a), _dyadic(b)
        ma, ea, mb, eb = na * ma, ka + ea, na * mb, ka + eb
        if eb <= kb:
            mb += nb << (kb - eb)
        else:
            mb, eb = (mb << (eb - kb)) + nb, kb
        ma, ea = _trimmed(ma, ea)
        mb, eb = _trimmed(mb, eb)
        out[k, 0] = round_dyadic(ma, ea, kind)
        out[k, 1] = round_dyadic(mb, eb, kind)
    return out.astype(pairs.dtype)


def _dyadic(v: float) -> tuple[int, int]:
    """A finite float as (m, e), v = m * 2**e exactly."""
    num, den = v.as_integer_ratio()  # den is a power of two
    return num, 1 - den.bit_length()


def _trimmed(m: int, e: int) -> tuple[int, int]:
    """m * 2**e with the trailing zero bits of m moved into e (0 as (0, 0))."""
    if m == 0:
        return 0, 0
    tz = (m & -m).bit_length() - 1
    return m >> tz, e + tz
