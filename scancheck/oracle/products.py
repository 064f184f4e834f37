"""Product scans (cumprod): a reference far more precise than any float type, and what a
correct scan may return at each output.

A float product of k factors, multiplied in any tree of k - 1 correctly rounded
multiplications, is within a relative error gamma(k - 1) = (k-1)u / (1 - (k-1)u) of the
exact product, as long as no partial product overflows or falls below the smallest normal
number.  Which partial products a scan forms depends on its tree, but every parallel scan
multiplies adjacent ranges x_i ... x_j: :func:`judge_products` claims the bound only where
every such range of the prefix stays in the normal range, and otherwise checks what no
order can change (the sign; zeros, infinities and NaN as IEEE arithmetic makes them).

Where every order is exact, the product must be exact, subnormal or not (the exactness
certificate for products): each factor is an odd integer m_i times 2**e_i, the prefix's
m_i multiply to less than 2**p, and every range's sum of e_i keeps its product between the
smallest subnormal and the largest float, so that every partial product any order forms is
representable.  A scan that reads subnormals as zero (DAZ, FTZ) returns zero there; under
subnormals='flush' (within bound: it may) a zero of the product's sign is allowed where
some range of the prefix falls below the smallest normal number.

The reference is a double-double significand and a separate integer exponent, multiplied
in order (:func:`_reference`, compiled by Numba): its relative error stays below
2**-100 per factor, a hundred million times under the bound of any float type.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..core.dtypes import SIGNIFICAND_BITS, finfo
from ..core.operators import shifted
from .bounds import Judgement, Rule
from .exact import lowest_set_bit

_SPLIT = 134217729.0  # 2**27 + 1: Dekker's split of a float64 into two halves


@numba.njit(cache=True)
def _two_product(a: float, b: float) -> tuple[float, float]:
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@numba.njit(cache=True)
def _reference(m: np.ndarray, e: np.ndarray, hi: np.ndarray, lo: np.ndarray,
               ex: np.ndarray) -> None:
    """Prefix products along each row of m_i * 2**e_i (m_i in [0.5, 1)) as (hi + lo) * 2**ex
    with hi in [0.5, 1): double-double significands, exponents as integers (no range to
    leave)."""
    for r in range(m.shape[0]):
        h, el, x = 1.0, 0.0, 0
        for k in range(m.shape[1]):
            p, err = _two_product(h, m[r, k])
            err += el * m[r, k]
            h = p + err
            el = err - (h - p)
            f, shift = math.frexp(h)
            h = f
            el = math.ldexp(el, -shift)
            x += shift + e[r, k]
            hi[r, k], lo[r, k], ex[r, k] = h, el, x


def _prefix_products(xf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hi, lo, ex) of :func:`_reference` along the last axis for the nonzero finite factors
    of float64 ``xf`` (zeros, infinities and NaN count as 1 here: IEEE's rules take them)."""
    m, e = np.frexp(np.where(np.isfinite(xf) & (xf != 0), np.abs(xf), 1.0))
    rows = (-1, xf.shape[-1]) if xf.size else (0, 0)
    hi, lo, ex = np.empty(xf.shape), np.empty(xf.shape), np.empty(xf.shape, dtype=np.int64)
    _reference(np.ascontiguousarray(m).reshape(rows), e.astype(np.int64).reshape(rows),
               hi.reshape(rows), lo.reshape(rows), ex.reshape(rows))
    return hi, lo, ex


def _certified(xf: np.ndarray, dt: str) -> tuple[np.ndarray, np.ndarray]:
    """Per output of a product scan of the float64 ``xf`` (values of ``dt``, shifted already
    for an exclusive scan): where every order of multiplication is exact in ``dt``, and where
    moreover no range of the prefix falls below the smallest normal number (so that no order
    meets a subnormal to flush).  Zeros, infinities and NaN certify nothing."""
    # A certificate, once lost, stays lost along a row (the odd parts' product only grows),
    # and most data lose it within a few factors: the columns are read in growing windows
    # until every row has lost it.
    n = xf.shape[-1]
    w = min(n, 64)
    exact, unflushed = _certified_prefix(xf[..., :w], dt)
    while w < n and exact[..., -1].any():
        w = min(n, 8 * w)
        exact, unflushed = _certified_prefix(xf[..., :w], dt)
    if w == n:
        return exact, unflushed
    pad = np.zeros(xf.shape[:-1] + (n - w,), dtype=bool)
    return np.concatenate([exact, pad], axis=-1), np.concatenate([unflushed, pad], axis=-1)


def _certified_prefix(xf: np.ndarray, dt: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_certified` on every column of ``xf``."""
    info = finfo(dt)
    p = SIGNIFICAND_BITS[dt]
    plain = np.isfinite(xf) & (xf != 0)
    mag = np.where(plain, np.abs(xf), 1.0)
    e = lowest_set_bit(mag).astype(np.int64)  # mag = odd * 2**e, odd an integer below 2**p
    with np.errstate(over="ignore"):  # exact below 2**53; past it, at least 2**53
        odd = np.logical_and.accumulate(plain, axis=-1) & (
            np.multiply.accumulate(np.ldexp(mag, -e), axis=-1) < 2.0**p)
    s = np.concatenate([np.zeros(xf.shape[:-1] + (1,), dtype=np.int64), np.cumsum(e, axis=-1)],
                       axis=-1)
    # A range's product is its odd parts' times 2**(its sum of e): at least 2**that, below
    # 2**(that + p), so its largest and smallest sums bound every partial product.
    rise = np.maximum.accumulate(s[..., 1:] - np.minimum.accumulate(s[..., :-1], axis=-1), axis=-1)
    fall = np.minimum.accumulate(s[..., 1:] - np.maximum.accumulate(s[..., :-1], axis=-1), axis=-1)
    exact = odd & (rise + p <= int(info.maxexp)) & (fall >= int(info.minexp) - p + 1)
    return exact, exact & (fall >= int(info.minexp))


def judge_products(x: np.ndarray, got: np.ndarray, inclusive: bool = True, flush: bool = False
                   ) -> Judgement:
    """Judge ``got``, a float product scan of ``x`` along its last axis (each row on its own;
    both in one float dtype), output by output against the rules in the module docstring;
    the error is relative.  With ``flush`` the target may read subnormals as zero."""
    dt = x.dtype.name
    n = x.shape[-1]
    xf = x.astype(np.float64)
    g = got.astype(np.float64)
    if not inclusive:
        xf = shifted(xf, 1.0)
    with np.errstate(all="ignore"):
        finite = np.isfinite(xf)
        nan = np.logical_or.accumulate(np.isnan(xf), axis=-1)
        zero = np.logical_or.accumulate(xf == 0, axis=-1)
        inf = np.logical_or.accumulate(np.isinf(xf), axis=-1)
        nan |= zero & inf
        negative = np.logical_xor.accumulate(np.signbit(xf) & ~np.isnan(xf), axis=-1)
        exact = ~(nan | zero | inf)
        # Once a prefix holds a NaN, a zero or an infinity, IEEE's rules decide every later
        # output: the reference's arithmetic is needed on the first m columns alone (every
        # step below is a running one, so a column's values do not depend on later ones).
        m = int(exact.sum(axis=-1).max()) if exact.size else 0
        live = (..., slice(0, m))
        hi, lo = np.ones(xf.shape), np.zeros(xf.shape)
        ex = np.zeros(xf.shape, dtype=np.int64)
        hi[live], lo[live], ex[live] = _prefix_products(xf[live])
        # Ranges x_i..x_j of the prefix: their log2 magnitudes are differences of the running
        # sum s, whose largest rise and fall bound every partial product a scan can form.
        logs = np.log2(np.where(finite & (xf != 0), np.abs(xf), 1.0))
        s = np.concatenate([np.zeros(xf.shape[:-1] + (1,)), np.cumsum(logs, axis=-1)], axis=-1)
        rise = np.maximum.accumulate(s[..., 1:] - np.minimum.accumulate(s[..., :-1], axis=-1),
                                     axis=-1)
        fall = np.minimum.accumulate(s[..., 1:] - np.maximum.accumulate(s[..., :-1], axis=-1),
                                     axis=-1)
        slack = 1e-9 * np.arange(1, n + 1) + 1e-6  # the float64 sum's own rounding, and more
        info = finfo(dt)
        k = np.arange(n, dtype=np.float64)  # multiplications behind output k
        u = 2.0 ** -SIGNIFICAND_BITS[dt]
        gamma = k * u / (1 - k * u)
        margin = np.log2(1 + gamma) + slack
        no_overflow = rise + margin < np.log2(float(info.max))
        no_underflow = fall - margin >= np.log2(float(info.smallest_normal))
        in_range = exact & no_overflow & no_underflow

        gm, ge = np.frexp(np.abs(g[live]))
        shift = np.clip(ge - ex[live], -4, 4)
        d = np.ldexp(gm, shift) - hi[live] - lo[live]  # exact first step: within a factor 2
        rel = np.full(xf.shape, np.inf)                 # (Sterbenz)
        rel[live] = np.where((np.abs(ge - ex[live]) <= 2) & np.isfinite(g[live]) & (g[live] != 0),
                             np.abs(d) / hi[live], np.inf)
        sign_ok = np.signbit(g) == negative
        magnitude = np.ldexp(hi, np.clip(ex, -2000, 2000))
        reference = np.where(nan, np.nan, np.where(zero, 0.0, np.where(inf, np.inf, magnitude)))
        reference = np.where(negative, -reference, reference)

    # A finite result where no range underflows: nothing overflowed on its way either
    # (an infinity stays one), so the bound holds for it too.
    bounded = in_range | (exact & no_underflow & np.isfinite(g))
    judged = Judgement.start(rel, np.where(bounded, gamma, np.nan), reference)
    fail = judged.fail
    # A zero times a partial product that overflowed, or an infinity times one that
    # underflowed to zero, is NaN in some orders.
    may_nan = nan | (zero & ~no_overflow) | (inf & ~no_underflow) | (
        exact & ~no_overflow & ~no_underflow)
    fail(nan & ~np.isnan(g), Rule.SPECIALS,
         "not NaN where the prefix has a NaN, or a zero and an infinity")
    fail(~may_nan & np.isnan(g), Rule.SPECIALS, "NaN where no order of multiplication makes one")
    certified, unflushed = np.zeros(xf.shape, dtype=bool), np.zeros(xf.shape, dtype=bool)
    certified[live], unflushed[live] = _certified(xf[live], dt)
    flushed = flush & certified & ~unflushed & (g == 0) & sign_ok
    fail(certified & ~(g == reference) & ~flushed, Rule.CERTIFICATE, "differs from the exact "
         "product where every order of multiplication is exact (the exactness certificate)")
    fail(zero & ~nan & ~np.isnan(g) & ~((g == 0) & sign_ok), Rule.SPECIALS,
         "not a zero of the product's sign where the prefix has a zero")
    fail(inf & ~nan & ~zero & ~np.isnan(g) & ~(np.isinf(g) & sign_ok), Rule.SPECIALS,
         "not an infinity of the product's sign where the prefix has an infinity")
    fail(exact & ~np.isnan(g) & ~sign_ok, Rule.SPECIALS, "the sign differs from the product's")
    fail(bounded & ~(rel <= gamma * (1 + 2.0**-40) + (k + 1) * 2.0**-100), Rule.BOUND,
         "beyond the rounding bound of any order of multiplication")
    fail(in_range & ~np.isfinite(g), Rule.OVERFLOW,
         "an infinity where no range of the prefix overflows")
    return judged
