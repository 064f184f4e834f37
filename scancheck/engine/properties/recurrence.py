"""``recurrence``: the (a, b) pair scan solves y_n = a_n*y_{n-1} + b_n, within the bound
of its products and sums (gradual underflow and flushing allowed for as the spec says)."""

from __future__ import annotations

import numpy as np

from ...core.arrays import same_bits
from ...core.dtypes import finfo, is_float
from ...oracle.bounds import (
    gamma,
)
from ...oracle.exact import (
    RATIONAL_RECURRENCE_MAX,
    recurrence_magnitudes,
)
from ...oracle.products import judge_products
from ...targets.target import Target
from ..cases import Case
from ..diagnosis import Reason
from .base import Failure
from .running import exact_answer, first_bad, recurrence_reference, run_case
from .subnormals import flush_attributed, flushes, new_subnormals


def recurrence_check(target: Target, case: Case) -> Failure | None:
    """``recurrence``: the pair scan solves y_n = a_n*y_{n-1} + b_n within its bound."""
    ran = run_case(target, case)  # not on_outputs: a long case's enclosure is computed once, here
    if isinstance(ran, Failure):
        return ran
    x, got = ran
    text = "recurrence y_n = a_n*y_{n-1} + b_n not solved"
    cause = ": operand order of the non-commutative pair, or a logic error"
    if not is_float(x.dtype) or x.shape[0] <= RATIONAL_RECURRENCE_MAX:
        want = exact_answer(target, x)  # exact rationals (or wrapping integers)
        if not is_float(x.dtype):
            same = same_bits(got, want)  # per pair
            if same_bits(got[:, 1], want[:, 1]).all():  # every y_k right: the products wrong
                return first_bad(target, same, got, want, "the running product of the a's "
                                 "(each output pair's first element) differs from the exact "
                                 "one, every y_k right")
            return first_bad(target, same, got, want, text + cause)
        lo = hi = want[:, 1].astype(np.float64)
        # An upper bound, rounded upward in order: rationals here cost as much as want's
        # (subnormal pairs' denominators run to 2**1074).
        mags = recurrence_magnitudes(x)
        if not target.spec.inclusive:
            mags = np.r_[0.0, mags[:-1]]
    else:  # rigorous enclosures [lo, hi] of y_k, computed once for the case
        lo, hi, mags = recurrence_reference(x, target.spec.inclusive)
        want = exact_answer(target, x, (lo, hi))
    # Sequential evaluation bound: two roundings a step, on the magnitudes of the terms.
    # Fail only where the output lies farther from [lo, hi] than the bound: a proven error.
    bound = gamma(2 * (np.arange(x.shape[0]) + 1), x.dtype.name) * mags * 1.01
    g = got[:, 1].astype(np.float64)
    info = finfo(x.dtype)

    def within(flush: bool) -> np.ndarray:
        # Below the normal numbers rounding is absolute: gradual underflow errs by half the
        # smallest subnormal a step, flushing by less than the smallest normal number.
        unit = float(info.smallest_normal) if flush else float(info.smallest_subnormal) / 2
        allowed = bound + _underflow_allowance(x, mags, unit, target.spec.inclusive)
        with np.errstate(invalid="ignore"):
            err = np.maximum(np.maximum(lo - g, g - hi), 0)  # at least |g - y_k|
            ok = ~(err > allowed + np.spacing(np.abs(want[:, 1])))  # NaN: no claim, or NaN got
        return ok & (np.isfinite(g) | ~(np.isfinite(lo) & np.isfinite(hi)))

    failure = first_bad(target, within(flushes(target, x.dtype)), got, want, text,
                        reason=Reason.BEYOND_BOUND)
    if failure is None:
        # The pair's first element is the running product of the a's, as a cumprod is
        # judged: a chunked kernel carries it between chunks, and may carry it wrong.
        products = judge_products(x[:, 0], got[:, 0], target.spec.inclusive,
                                  flush=flushes(target, x.dtype))
        return first_bad(target, products.ok, got, want, "the running product of the a's (each "
                         "output pair's first element) not within the products' bound" + cause,
                         reason=Reason.BEYOND_BOUND)
    if failure.reason == Reason.NEVER_WRITTEN:
        return failure  # never written: the fill's own words
    failure = flush_attributed(target, x, failure, within(True), within(False),
                                new_subnormals(x, got))
    if failure.reason != Reason.SUBNORMALS:
        failure.diagnosis += cause
    return failure


def _underflow_allowance(x: np.ndarray, mags: np.ndarray, unit: float, inclusive: bool
                         ) -> np.ndarray:
    """Per output of a float recurrence scan of the pairs ``x`` (``mags``: the magnitudes'
    recurrence, per output): how far absolute errors of at most ``unit`` in every input and
    every partial result can move it.  Output k's tree has at most 3k operations on 2(k+1)
    inputs; an error in a range's b reaches y_k times the later a's, one in its a times a
    partial y too, so each is carried by at most the prefix's product of max(1, |a|) and
    scaled by at most 1 + the largest magnitude so far."""
    n = x.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        grow = np.multiply.accumulate(np.maximum(np.abs(x[:, 0].astype(np.float64)), 1.0))
        if not inclusive:
            grow = np.r_[1.0, grow[:-1]]
        big = np.maximum.accumulate(np.where(np.isnan(mags), np.inf, mags))
        return unit * 6 * (np.arange(n) + 1) * grow * (1 + big) * 1.01
