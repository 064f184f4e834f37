"""Log-sum-exp scans (logcumsumexp): a float64 reference with its own error bound, and the
rounding bound any order of combines obeys.

One combine c = log(exp(a) + exp(b)), evaluated as max + log1p(exp(min - max)), errs by at
most u*|c| (the final addition) plus a few units of u on log1p's value, which lies in
[0, log 2]: scancheck allows u*(|c| + 4), twice what libm-quality exp and log1p need.  An
error in an operand reaches c scaled by d c / d a = exp(a - c), and these weights sum to
at most 1 over the disjoint ranges any one level of a combine tree holds; so the error
of an output of k terms is at most the sum of its k - 1 combines' own errors.  Every
partial result of a range of the prefix lies in [-M, M + log k], M the largest finite
magnitude in the prefix, which bounds |c|: the bound is (k-1) * u * (M + log k + 4).  A
combine with the identity -inf returns the other operand exactly (the max-based formula
does), so the first output is x_0 itself.

Specials are exact: NaN from a NaN on; +inf from a +inf on; -inf while every term is -inf
(the identity).  A finite prefix may come back +inf only where M + log k reaches the
largest float.

Under subnormals='flush' (within bound: it may) each combine may also flush exp's result,
log1p's and the sum's, each moving c by less than the smallest normal number, and the
inputs may read as zero (their weights sum to 1): (3(k-1) + 1) of it more.
"""

from __future__ import annotations

import numba
import numpy as np

from ..core.dtypes import SIGNIFICAND_BITS, finfo
from ..core.operators import shifted
from .bounds import Judgement, Rule

#: Units of u that one combine may err by on log1p's value, beyond the rounding of |c|.
COMBINE_SLACK = 4.0


@numba.njit(cache=True)
def _reference(x: np.ndarray, out: np.ndarray, err: np.ndarray) -> None:
    """Inclusive log-sum-exp prefixes along each row of finite or -inf float64 ``x`` by a
    running maximum and a rescaled sum, with an upper bound on each result's own float64
    error."""
    u = 2.0 ** -53
    for r in range(x.shape[0]):
        m, s = -np.inf, 0.0
        for k in range(x.shape[1]):
            v = x[r, k]
            if v > m:
                s = s * np.exp(m - v) + 1.0  # exp(-inf) = 0 while nothing came before
                m = v
            elif v > -np.inf:
                s += np.exp(v - m)
            if m == -np.inf:
                out[r, k], err[r, k] = -np.inf, 0.0
            else:
                ls = np.log(s)
                out[r, k] = m + ls
                # s: about four roundings a term (exp, product, sum); then log and the sum.
                err[r, k] = (4.0 * (k + 1) + 2.0 * abs(ls) + 2.0 * abs(out[r, k]) + 2.0) * u


def judge_logsumexp(x: np.ndarray, got: np.ndarray, inclusive: bool = True, flush: bool = False
                    ) -> Judgement:
    """Judge ``got``, a log-sum-exp scan of the float ``x`` along its last axis (each row on
    its own; both in one dtype), output by output against the rules in the module
    docstring; the bound includes the float64 reference's own error, and with ``flush`` what
    reading subnormals as zero can move it."""
    dt = x.dtype.name
    n = x.shape[-1]
    xf = x.astype(np.float64)
    g = got.astype(np.float64)
    if not inclusive:
        xf = shifted(xf, -np.inf)
    with np.errstate(all="ignore"):
        nan = np.logical_or.accumulate(np.isnan(xf), axis=-1)
        pinf = np.logical_or.accumulate(xf == np.inf, axis=-1)
        finite = np.isfinite(xf)
        any_finite = np.logical_or.accumulate(finite, axis=-1)
        ref, ref_err = np.empty(xf.shape), np.empty(xf.shape)
        rows = (-1, n) if xf.size else (0, 0)
        _reference(np.where(finite, xf, -np.inf).reshape(rows), ref.reshape(rows),
                   ref_err.reshape(rows))
        big = np.maximum.accumulate(np.where(finite, np.abs(xf), 0.0), axis=-1)
        count = np.maximum.accumulate(np.where(finite, np.arange(1, n + 1), 0), axis=-1)
        k = np.arange(n, dtype=np.float64)  # combines behind output k
        u = 2.0 ** -SIGNIFICAND_BITS[dt]
        reach = big + np.log(np.maximum(count, 1)) + 1.0
        bound = k * u * (reach + COMBINE_SLACK) * (1 + 2.0**-20) + ref_err
        if flush:
            bound = bound + (3 * k + 1) * float(finfo(dt).smallest_normal)
        error = np.abs(g - ref)
        may_overflow = reach + bound >= float(finfo(dt).max)

    regular = ~nan & ~pinf & any_finite
    judged = Judgement.start(error, np.where(regular, bound, np.nan),
                             np.where(nan, np.nan, np.where(pinf, np.inf, ref)))
    fail = judged.fail
    fail(nan & ~np.isnan(g), Rule.SPECIALS, "not NaN where the prefix has a NaN")
    fail(~nan & pinf & ~(g == np.inf), Rule.SPECIALS, "not +inf where the prefix has +inf")
    fail(~nan & ~pinf & ~any_finite & ~(g == -np.inf), Rule.SPECIALS,
         "not -inf where every term is -inf (the identity)")
    fail(regular & (g == np.inf) & ~may_overflow, Rule.OVERFLOW,
         "+inf where the log-sum-exp is finite and no combine can overflow")
    fail(regular & ~np.isfinite(g) & ~(g == np.inf), Rule.SPECIALS,
         "NaN or -inf where the log-sum-exp is finite")
    fail(regular & np.isfinite(g) & ~(error <= bound), Rule.BOUND,
         "beyond the rounding bound of any order of combines")
    return judged
