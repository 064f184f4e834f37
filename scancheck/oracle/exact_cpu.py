"""The CPU's exact prefix sums, compiled: fixed-point integers of W 64-bit words, in order.

Every finite value ``mant * 2**(base + offset)`` is added to a running two's-complement
integer of W words (``offset`` places its bits; a value touches two words and a carry),
and each prefix is rounded once to the format -- nearest, ties to even, the format's
subnormal spacing, overflow to infinity -- from its two top words and a sticky bit, as
``kernels/oracle/exact_scan.cu`` rounds on the device.  One pass, whatever the data's
exponent span: 10**6 float32 values take tens of milliseconds on one core.

Compiled by Numba (a well-kept JIT for NumPy loops): an exact sum is a sequential carry
chain, which NumPy can only express through many whole-array passes over limbs.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros

_U1 = np.uint64(1)
_U63 = np.uint64(63)


@numba.njit(cache=True, nogil=True)
def _bit_length(v: np.uint64) -> int:
    return 64 - leading_zeros(v)  # LLVM's ctlz: one instruction


@numba.njit(cache=True, nogil=True)
def _add(acc: np.ndarray, word: int, lo: np.uint64, hi: np.uint64) -> None:
    s = acc[word] + lo
    carry = np.uint64(1) if s < lo else np.uint64(0)
    acc[word] = s
    t = acc[word + 1] + hi
    c2 = t < hi
    t2 = t + carry
    carry = np.uint64(1) if (c2 or t2 < t) else np.uint64(0)
    acc[word + 1] = t2
    k = word + 2
    while carry and k < acc.shape[0]:
        acc[k] += _U1
        carry = np.uint64(1) if acc[k] == 0 else np.uint64(0)
        k += 1


@numba.njit(cache=True, nogil=True)
def _subtract(acc: np.ndarray, word: int, lo: np.uint64, hi: np.uint64) -> None:
    a = acc[word]
    borrow = np.uint64(1) if a < lo else np.uint64(0)
    acc[word] = a - lo
    b = acc[word + 1]
    t = b - hi
    b2 = b < hi or t < borrow
    acc[word + 1] = t - borrow
    borrow = np.uint64(1) if b2 else np.uint64(0)
    k = word + 2
    while borrow and k < acc.shape[0]:
        borrow = np.uint64(1) if acc[k] == 0 else np.uint64(0)
        acc[k] -= _U1
        k += 1


@numba.njit(cache=True, nogil=True)
def _round(acc: np.ndarray, base: int, p: int, qmin: int, emax: int) -> float:
    """``acc * 2**base`` (two's complement) rounded once to p significand bits (quantum at
    least 2**qmin, overflow past emax to infinity), as a float64 that holds it exactly.

    Only the two top words of the magnitude are read, with a sticky bit for the rest: for
    acc < 0, |acc| = ~acc + 1, and the +1 reaches those words only when every word below
    them is zero in acc, exactly when the bits below are zero in |acc|.
    """
    w = acc.shape[0]
    neg = (acc[w - 1] >> _U63) != 0
    fill = ~np.uint64(0) if neg else np.uint64(0)
    top = w - 1
    while top > 1 and acc[top] == fill:
        top -= 1
    hi, lo = acc[top] ^ fill, acc[top - 1] ^ fill
    below = False
    for k in range(top - 1):
        if acc[k] != 0:
            below = True
            break
    wbase = base + 64 * (top - 1)
    if neg and not below:
        lo += _U1
        if lo == 0:
            hi += _U1
            if hi == 0:  # the magnitude is 2**128 words up: one word higher, as 2**64
                hi, wbase = _U1, wbase + 64
    if hi == 0 and lo == 0:
        return 0.0
    lead = (63 + _bit_length(hi) if hi else _bit_length(lo) - 1) + wbase
    quantum = max(lead - p + 1, qmin)
    drop = quantum - wbase
    if drop <= 0:
        keep = lo << np.uint64(-drop)  # below 2**(p + wbase): nothing to round
    else:
        if drop >= 64:
            keep = hi >> np.uint64(drop - 64)
        else:
            keep = (lo >> np.uint64(drop)) | (hi << np.uint64(64 - drop))
        h = drop - 1  # the rounding bit; everything below it is sticky
        if h >= 64:
            half = (hi >> np.uint64(h - 64)) & _U1
            rest = lo != 0 or (hi & ((_U1 << np.uint64(h - 64)) - _U1)) != 0
        else:
            half = (lo >> np.uint64(h)) & _U1
            rest = (lo & ((_U1 << np.uint64(h)) - _U1)) != 0
        if half and (rest or below or (keep & _U1)):
            keep += _U1
    if _bit_length(keep) + quantum - 1 > emax:
        value = math.inf
    else:
        value = math.ldexp(float(keep), quantum)
    return -value if neg else value


@numba.njit(cache=True, nogil=True)
def _decode(b: np.uint64, frac_bits: int, exp_bits: int, bias: int) -> tuple[int, int]:
    """A finite value's bits as (signed integer mantissa, exponent of its last place)."""
    # Signed 64-bit throughout: Numba makes float64 of mixed signed and unsigned arithmetic.
    field = np.int64((b >> np.uint64(frac_bits)) & np.uint64((1 << exp_bits) - 1))
    mant = np.int64(b & np.uint64((1 << frac_bits) - 1))
    if field:
        mant |= np.int64(1) << np.int64(frac_bits)
    expo = max(field, np.int64(1)) - np.int64(bias + frac_bits)
    return (-mant if (b >> np.uint64(frac_bits + exp_bits)) & _U1 else mant), expo


@numba.njit(cache=True, nogil=True)
def _scan_rows(bits: np.ndarray, frac_bits: int, exp_bits: int, bias: int, p: int, qmin: int,
               emax: int, out: np.ndarray) -> None:
    special = np.uint64((1 << exp_bits) - 1)  # the exponent field of infinities and NaN
    sign = np.uint64(1) << np.uint64(frac_bits + exp_bits)
    lowest, highest = 1 << 30, -(1 << 30)
    for r in range(bits.shape[0]):
        for i in range(bits.shape[1]):
            b = np.uint64(bits[r, i])
            if (b >> np.uint64(frac_bits)) & special != special:
                m, e = _decode(b, frac_bits, exp_bits, bias)
                if m != 0:
                    lowest = min(lowest, e)
                    highest = max(highest, e)
    n = bits.shape[1]
    nbits = 1
    while (1 << nbits) <= n:
        nbits += 1
    # Two words for a value's bits at any shift, the span, the sum's growth and a sign.
    words = max(highest - lowest + 64 + nbits + 1, 0) // 64 + 2
    acc = np.zeros(words, dtype=np.uint64)
    for r in range(bits.shape[0]):
        acc[:] = 0
        nan = pinf = ninf = False
        negzero = True  # every value so far is -0.0
        for i in range(n):
            b = np.uint64(bits[r, i])
            if (b >> np.uint64(frac_bits)) & special == special:
                if b & ((_U1 << np.uint64(frac_bits)) - _U1):
                    nan = True
                elif b & sign:
                    ninf = True
                else:
                    pinf = True
                negzero = False
            else:
                negzero = negzero and b == sign
                m, e = _decode(b, frac_bits, exp_bits, bias)
                if m != 0:
                    off = e - lowest
                    bit = np.uint64(off & 63)
                    u = np.uint64(-m if m < 0 else m)
                    lo = u << bit
                    hi = u >> (np.uint64(64) - bit) if bit else np.uint64(0)
                    if m < 0:
                        _subtract(acc, off >> 6, lo, hi)
                    else:
                        _add(acc, off >> 6, lo, hi)
            # IEEE's rules for the specials, as exact._apply_specials states them.
            if nan or (pinf and ninf):
                out[r, i] = math.nan
            elif pinf or ninf:
                out[r, i] = math.inf if pinf else -math.inf
            elif negzero:
                out[r, i] = -0.0
            else:
                out[r, i] = _round(acc, lowest, p, qmin, emax)


def prefix_sums(x: np.ndarray, frac_bits: int, exp_bits: int, bias: int, p: int, emin: int,
                emax: int) -> np.ndarray:
    """Inclusive prefix sums along the last axis of a 2-D array of floats (rows scanned
    apart) given as their unsigned bits, each rounded once to p significand bits with normal
    exponents in [emin, emax], as float64 values that hold them exactly; NaN and infinities
    by IEEE's rules, and -0.0 while every value so far is -0.0."""
    out = np.empty(x.shape, dtype=np.float64)
    if x.size:
        # Widened to 64 bits: one compiled _scan_rows serves every format (a specialization
        # per width cost 1.6 s more of a cold cache's compile, in each fresh checkout).
        _scan_rows(np.ascontiguousarray(x, dtype=np.uint64), frac_bits, exp_bits, bias, p,
                   emin - p + 1, emax, out)
    return out


@numba.njit(cache=True, nogil=True)
def _down(v: float) -> float:
    return np.nextafter(v, -np.inf)


@numba.njit(cache=True, nogil=True)
def _up(v: float) -> float:
    return np.nextafter(v, np.inf)


@numba.njit(cache=True, nogil=True)
def recurrence_enclosure(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """lo[k] <= y_k <= hi[k] for y_k = a_k*y_{k-1} + b_k, y_{-1} = 0 (float64 inputs, exact):
    interval arithmetic in order, each result rounded to nearest and then moved one step
    outward, which contains the exact result (underflow and overflow included)."""
    y_lo = y_hi = 0.0
    for k in range(a.shape[0]):
        p1, p2 = a[k] * y_lo, a[k] * y_hi
        y_lo = _down(_down(min(p1, p2)) + b[k])
        y_hi = _up(_up(max(p1, p2)) + b[k])
        lo[k], hi[k] = y_lo, y_hi


@numba.njit(cache=True, nogil=True)
def magnitudes_above(a: np.ndarray, b: np.ndarray, hi: np.ndarray) -> None:
    """hi[k] >= m_k for m_k = |a_k|*m_{k-1} + |b_k|, m_{-1} = 0: rounded upward in order."""
    m = 0.0
    for k in range(a.shape[0]):
        m = _up(_up(abs(a[k]) * m) + abs(b[k]))
        hi[k] = m
