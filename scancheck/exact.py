"""Exact prefix scans: what the answer is, before any rounding.

Two independent exact paths compute prefix sums of float inputs:

* :func:`exact_scan_mpmath` sums in mpmath at a working precision chosen from the
  input's exponent range and length, so that every addition is exact;
* :func:`exact_scan` (the default for floats) writes every finite value as a
  fixed-point integer split into 32-bit limbs, takes NumPy int64 prefix sums of the
  limbs, propagates the carries and rounds the exact result once.  No float
  accumulation happens anywhere; it runs at tens of millions of elements a second.

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

from .operators import (
    FLOAT_DTYPES,
    SIGNIFICAND_BITS,
    Operator,
    as_dtype,
    exclusive_of,
    extreme_scan,
    get_operator,
    is_float,
)

_LIMB = 32
_MASK = (1 << _LIMB) - 1
_EMIN = {"float32": -126, "float64": -1022, "float16": -14, "bfloat16": -126}
_EMAX = {"float32": 127, "float64": 1023, "float16": 15, "bfloat16": 127}
_CHUNK = 1 << 16


def _float_kind(dtype: np.dtype) -> str:
    name = as_dtype(dtype).name
    if name not in SIGNIFICAND_BITS:
        raise ValueError(f"dtype={name!r} is not a float type; allowed: {', '.join(FLOAT_DTYPES)}")
    return name


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


def round_to_bits(v: np.ndarray, p: int) -> np.ndarray:
    """float64 values rounded to ``p`` significand bits, to nearest, ties to even, on their
    bit patterns (exact where ``v`` was rounded to odd at 53 bits first, as the exact paths
    do: 53 >= p + 2).  Values of a type's subnormal range need no rounding here: every sum
    of its values is a multiple of its smallest subnormal."""
    bits = np.ascontiguousarray(v, dtype=np.float64).view(np.int64)
    drop = 53 - p
    keep_odd = (bits >> drop) & 1
    rounded = (bits + ((1 << (drop - 1)) - 1) + keep_odd) & ~((1 << drop) - 1)
    finite = np.isfinite(v)
    return np.where(finite, rounded.view(np.float64), v)


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


def _normalize(limbs: np.ndarray) -> None:
    """Propagate carries in place so every limb but the top lies in [0, 2**32)."""
    for i in range(limbs.shape[0] - 1):
        carry = limbs[i] >> _LIMB
        limbs[i] &= _MASK
        limbs[i + 1] += carry


def _round_word(word: np.ndarray, sticky: np.ndarray, lsb: np.ndarray, p: int) -> np.ndarray:
    """Round ``word * 2**lsb`` (uint64 words with bit 63 set, plus a sticky bit) to ``p`` bits."""
    sh = np.uint64(64 - p)
    keep = word >> sh
    rem = word & ((np.uint64(1) << sh) - np.uint64(1))
    half = np.uint64(1) << (sh - np.uint64(1))
    up = (rem > half) | ((rem == half) & (sticky | ((keep & np.uint64(1)) == 1)))
    keep = keep + up.astype(np.uint64)
    exponent = np.clip(lsb + (64 - p), -4000, 4000).astype(np.int32)
    with np.errstate(over="ignore"):
        return np.ldexp(keep.astype(np.float64), exponent)


def _bit_length(v: np.ndarray) -> np.ndarray:
    """Bit lengths of uint64 values (0 for 0), exact even where float64 would round up."""
    t = (v.astype(np.float64).view(np.int64) >> 52) - 1022
    t = np.where(v == 0, 0, t)
    over = (v >> np.maximum(t - 1, 0).astype(np.uint64)) == 0
    return t - (over & (t > 0))


def _round_int64(fixed: np.ndarray, base: int, p: int) -> np.ndarray:
    """Correctly rounded values of ``fixed * 2**base`` (|fixed| < 2**62) to ``p`` bits, as float64.

    int64 -> float64 conversion rounds to nearest even in hardware.  For p < 53 the
    result is first rounded to odd at 53 bits, which makes the second rounding to p
    bits exact (53 >= p + 2), then scaled by a power of two, which is exact.
    """
    approx = fixed.astype(np.float64)
    if p < 53 and np.abs(fixed).max() >= 2**53:  # below 2**53 the conversion was exact
        mag = np.abs(fixed)
        bits = np.abs(approx).view(np.int64)
        residual = mag - np.abs(approx).astype(np.int64)
        # Not exact and even: step one ulp toward the exact value (an odd neighbour).
        nudge = np.where((residual != 0) & ((bits & 1) == 0), np.sign(residual), 0)
        approx = np.copysign((bits + nudge).view(np.float64), approx)
    return approx * np.float64(2.0) ** base


def _round_limbs(mag: np.ndarray, base: int, p: int) -> np.ndarray:
    """Correctly rounded float64 values of ``sum(mag[i] << 32*i) * 2**base`` to ``p`` bits.

    ``mag`` holds non-negative normalized limbs, two zero limbs at the bottom.
    """
    nl, m = mag.shape
    nz = mag != 0
    top = nl - 1 - np.argmax(nz[::-1], axis=0)
    cols = np.arange(m)
    lh = mag[top, cols].astype(np.uint64)
    lh1 = mag[top - 1, cols].astype(np.uint64)
    lh2 = mag[np.maximum(top - 2, 0), cols].astype(np.uint64)
    t = np.maximum(_bit_length(lh), 1).astype(np.uint64)
    word = (lh << (np.uint64(64) - t)) | (lh1 << (np.uint64(32) - t)) | (lh2 >> t)
    below = np.logical_or.accumulate(nz, axis=0)[np.maximum(top - 3, 0), cols] & (top >= 3)
    sticky = ((lh2 & ((np.uint64(1) << t) - np.uint64(1))) != 0) | below
    lsb = _LIMB * (top.astype(np.int64) - 2) + t.astype(np.int64) - 64 + base
    out = _round_word(word, sticky, lsb, p)
    out[~nz.any(axis=0)] = 0.0
    return out


def _finite_prefix_sums(x: np.ndarray, kind: str) -> np.ndarray:
    """Correctly rounded inclusive prefix sums along the last axis of a finite float array
    (1-D, or 2-D rows scanned each on its own), as float64."""
    n = x.shape[-1]
    p = SIGNIFICAND_BITS[kind]
    mant, expo = _decompose(np.ascontiguousarray(x), kind)
    nonzero = mant != 0
    if not nonzero.any():
        return np.zeros(x.shape, dtype=np.float64)
    base = int(expo[nonzero].min())
    offset = np.where(nonzero, expo - base, 0)
    span = int(offset.max()) + p + max(n, 2).bit_length() + 1
    if span <= 62:
        # Every prefix fits one int64 fixed-point word: one exact cumsum, one rounding.
        fixed = np.cumsum(mant << offset, axis=-1)
        return _round_int64(fixed, base, p)
    if p + _LOW <= 64 and span <= _LOW + 62:
        return _two_word_prefix_sums(mant, offset, base, p)
    if x.ndim == 2:
        return np.stack([_limb_prefix_sums(m, o, base, p, span) for m, o in zip(mant, offset)])
    return _limb_prefix_sums(mant, offset, base, p, span)


_LOW = 40  # bits of the low word of the two-word path


def _two_word_prefix_sums(mant: np.ndarray, offset: np.ndarray, base: int, p: int) -> np.ndarray:
    """Prefix sums of ``mant * 2**offset`` as (high, low) int64 words: dense, no scatter.

    Each value splits into its bits below ``_LOW`` and above; both words are summed
    exactly (the caller's span check keeps the high word's sums below 2**62), carries
    move from low to high, and the result is rounded once.  The work goes a cache-sized
    chunk at a time, carrying both words into the next: that also keeps the low word's
    sums, below 2**40 a term, far from overflowing an int64 (2**23 terms would).
    """
    out = np.empty(mant.shape, dtype=np.float64)
    carry_lo = np.zeros(mant.shape[:-1] + (1,), dtype=np.int64)
    carry_hi = np.zeros_like(carry_lo)
    scale = np.float64(2.0) ** base
    for start in range(0, mant.shape[-1], _WORD_CHUNK):
        part = slice(start, start + _WORD_CHUNK)
        m, o = mant[..., part], offset[..., part]
        # m * 2**o = hi * 2**40 + lo with 0 <= lo < 2**40, on two's-complement words: the
        # arithmetic right shift floors, and the mask keeps the value modulo 2**40.
        # |m| < 2**24 and o < 40: the shifted value fits in 63 bits (float32 only).
        above = o >= _LOW
        hi = np.where(above, m << np.maximum(o - _LOW, 0), m >> np.maximum(_LOW - o, 0))
        lo = np.where(above, 0, (m << np.minimum(o, _LOW - 1)) & ((1 << _LOW) - 1))
        lo = np.cumsum(lo, axis=-1) + carry_lo
        hi = np.cumsum(hi, axis=-1) + carry_hi
        carry = lo >> _LOW
        lo -= carry << _LOW
        hi += carry
        carry_lo, carry_hi = lo[..., -1:].copy(), hi[..., -1:].copy()
        out[..., part] = _round_words(hi, lo, p) * scale
    return out


_WORD_CHUNK = 1 << 15  # elements: a chunk's temporaries stay in cache


def _round_words(hi: np.ndarray, lo: np.ndarray, p: int) -> np.ndarray:
    """``hi * 2**40 + lo`` (0 <= lo < 2**40) as float64, rounded to nearest where p is 53
    and to odd at 53 bits otherwise (so that a later rounding to p bits is exact)."""
    # Negative values: round the magnitude.
    neg = hi < 0
    borrow = neg & (lo > 0)
    hi = np.where(neg, -hi - borrow, hi)
    lo = np.where(borrow, (1 << _LOW) - lo, lo)
    # float64(hi) * 2**40 and the sum each round once: the result is within an ulp.
    approx = hi.astype(np.float64) * float(1 << _LOW) + lo.astype(np.float64)
    if p < 53:
        # Round to odd at 53 bits (exact residual from the words), then to p bits.
        a_hi = np.floor(approx / float(1 << _LOW))
        a_lo = approx - a_hi * float(1 << _LOW)  # exact: both are multiples of approx's ulp
        residual = (hi - a_hi.astype(np.int64)) * (1 << _LOW) + (lo - a_lo.astype(np.int64))
        bits = approx.view(np.int64)
        nudge = np.where((residual != 0) & ((bits & 1) == 0), np.sign(residual), 0)
        approx = (bits + nudge).view(np.float64)
    return np.where(neg, -approx, approx)


def _limb_prefix_sums(
    mant: np.ndarray, offset: np.ndarray, base: int, p: int, span: int
) -> np.ndarray:
    """The wide-range path: 32-bit limbs, int64 limb prefix sums, carries, one rounding."""
    n = mant.shape[0]
    nl = span // _LIMB + 3
    out = np.empty(n, dtype=np.float64)
    carry = np.zeros(nl, dtype=np.int64)
    sign = np.sign(mant)
    mag = np.abs(mant).astype(np.uint64)
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        m = hi - lo
        cols = np.arange(m)
        # Two zero limbs at the bottom let the rounding read limbs top-1 and top-2.
        limbs = np.zeros((nl + 2, m), dtype=np.int64)
        off = offset[lo:hi]
        li = (off // _LIMB) + 2
        s = (off % _LIMB).astype(np.uint64)
        sg = sign[lo:hi]
        mg = mag[lo:hi]
        for part, extra in ((mg & np.uint64(_MASK), 0), (mg >> np.uint64(_LIMB), 1)):
            shifted = part << s
            limbs[li + extra, cols] += sg * (shifted & np.uint64(_MASK)).astype(np.int64)
            limbs[li + extra + 1, cols] += sg * (shifted >> np.uint64(_LIMB)).astype(np.int64)
        body = limbs[2:]
        np.cumsum(body, axis=1, out=body)
        body += carry[:, None]
        _normalize(body)
        carry = body[:, -1].copy()
        neg = body[-1] < 0
        if neg.any():
            flipped = -body[:, neg]
            _normalize(flipped)
            body[:, neg] = flipped
        res = _round_limbs(limbs, base, p)
        out[lo:hi] = np.where(neg, -res, res)
    return out


def _apply_specials(x: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Overlay IEEE NaN, infinity and negative-zero semantics on exact finite sums."""
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

    A device array (CuPy, ``__cuda_array_interface__`` or DLPack) gets a CuPy array back:
    1-D floats under ``add`` are computed on the device (:mod:`scancheck.exact_device`),
    the rest on the host, never by the library under test.
    Floats under ``add`` take the fast exact limb path; integer ``add`` wraps; ``max``
    and ``min`` are exact in any type, with the zero order and NaN rule given
    (:data:`~scancheck.operators.ZERO_ORDERS`, :data:`~scancheck.operators.NAN_RULES`);
    the recurrence pair goes through rationals.
    """
    oper = get_operator(op)
    if on_device(x):
        return _exact_scan_on_device(x, oper, inclusive, zeros, nans)
    x = oper.host_elements(x, allow_empty=True)
    if oper.name == "recurrence":
        out = exact_recurrence(x)
    elif oper.name == "interval":
        from .operators import sequential_scan

        out = sequential_scan(x, oper, inclusive=True)
    else:
        out = _exact_rows(x[None, :], oper, zeros, nans)[0]
    return out if inclusive else exclusive_of(out, oper.identity(x.dtype.name))


def on_device(x: Any) -> bool:
    """Whether ``x`` is an array in CUDA device memory (CuPy, torch, JAX, Numba...)."""
    if hasattr(x, "__cuda_array_interface__"):
        return True
    dlpack_device = getattr(x, "__dlpack_device__", None)
    # DLPack device types 2, 3 and 13: CUDA, CUDA pinned host and CUDA managed memory.
    return dlpack_device is not None and int(dlpack_device()[0]) in (2, 3, 13)


def _exact_scan_on_device(x: Any, oper: Operator, inclusive: bool, zeros: str,
                          nans: str) -> Any:
    import cupy as cp

    from .exact_device import FORMATS, as_device_array, exact_scan_device

    a = as_device_array(x)
    if oper.name == "add" and a.ndim == 1 and a.dtype.name in FORMATS:
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
    if (zeros, nans) != ("either", "propagate") and oper.name not in ("max", "min"):
        raise ValueError(f"zeros= and nans= apply to max and min, not to operator {oper.name!r}")
    if oper.name in ("max", "min"):
        return extreme_scan(x, oper.name, zeros, nans)
    if not is_float(x.dtype):  # integer addition wraps modulo 2**bits, exactly
        with np.errstate(over="ignore"):
            return np.add.accumulate(x, axis=-1, dtype=x.dtype)
    kind = _float_kind(x.dtype)
    finite = np.where(np.isfinite(x), x, 0).astype(x.dtype)
    with np.errstate(over="ignore"):  # sums rounded past the largest float are infinite
        sums = _finite_prefix_sums(finite, kind)
        if SIGNIFICAND_BITS[kind] < 24:
            # NumPy's and ml_dtypes' casts from float64 may round twice (through float32):
            # round here, so that the cast below is exact (or overflows to infinity).
            sums = round_to_bits(sums, SIGNIFICAND_BITS[kind])
        return _apply_specials(x, sums).astype(x.dtype)


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


def exact_recurrence(pairs: np.ndarray) -> np.ndarray:
    """Inclusive scan of recurrence pairs (a, b) in exact rationals, rounded once per component.

    Component b of prefix k is y_k of y_k = a_k*y_{k-1} + b_k with y_{-1} = 0.
    """
    pairs = get_operator("recurrence").host_elements(pairs, "pairs", allow_empty=True)
    if np.issubdtype(pairs.dtype, np.integer):
        from .operators import sequential_scan

        return sequential_scan(pairs, "recurrence")
    if not np.isfinite(pairs).all():
        raise ValueError("pairs must be finite for the exact recurrence")
    kind = _float_kind(pairs.dtype)
    out = np.empty(pairs.shape, dtype=np.float64)
    acc_a, acc_b = Fraction(1), Fraction(0)
    for k, (a, b) in enumerate(pairs.tolist()):
        fa, fb = Fraction(a), Fraction(b)
        acc_a, acc_b = fa * acc_a, fa * acc_b + fb
        out[k, 0] = round_fraction(acc_a, kind)
        out[k, 1] = round_fraction(acc_b, kind)
    return out.astype(pairs.dtype)
