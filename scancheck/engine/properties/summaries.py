"""What a passing target's floats look like: its error against both bounds, its curve
over n, and the precision its accumulator behaves like."""

from __future__ import annotations

import enum
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ...core.arrays import as_dtype
from ...core.dtypes import SIGNIFICAND_BITS, finfo
from ...core.operators import sequential_scan
from ...oracle.bounds import (
    classify,
    sequential_depths,
    ulp,
)
from ...oracle.exact import (
    exact_scan,
)
from ...oracle.logsumexp import judge_logsumexp
from ...oracle.products import judge_products
from ...targets.target import Target
from ..cases import Case
from .accumulation import accumulated_beyond
from .running import exact_answer, promoted
from .values import bound_fractions


def bound_summary(target: Target, dtypes: tuple[str, ...]) -> dict[str, Any]:
    """The worst error as a fraction of its bound, per float dtype, of a passing product or
    log-sum-exp scan at n = 4096 (factors near 1; uniform data in [-1, 1))."""
    op, products = target.spec.op, target.spec.family == "product"
    out: dict[str, Any] = {}
    for dt in dtypes:
        x = Case(4096, dt, "factors" if products else "uniform", 1).data(op)
        got = target(x)
        judged = (judge_products if products else judge_logsumexp)(x, got, target.spec.inclusive)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = judged.error / judged.bound
        out[f"err/bound {dt}"] = float(np.nanmax(frac[np.isfinite(frac)], initial=0.0))
    return out


def float_summary(target: Target, dtype: str, top: int = 2**20) -> dict[str, Any]:
    """Error figures of a passing float add scan (ulps; fractions of the sequential and the
    log2-depth bounds) at n = 4096, and the last output's fractions at every 16th power of
    two up to ``top`` ("error/bound by n": [n, of the sequential bound, of the log2 bound]),
    for the report and its plot."""
    inc = target.spec.inclusive
    out: dict[str, Any] = {"dtype": dtype}
    curve = []
    for n in sorted({min(4096, top), *(2**k for k in range(4, 31, 4) if 2**k <= top)}):
        x = Case(n, dtype, "uniform", 1).data("add")
        got = target(x)
        x = promoted(target, x)
        want = exact_answer(target, x)
        if n == min(4096, top):
            ulps = classify(x, got, sequential_depths(n, inc), inclusive=inc, exact=want).max_ulps
            out.update({"max ulps": ulps, **bound_fractions(x, got, want, inc)})
        # The last output: the deepest, where orders part most.
        curve.append([n, *bound_fractions(x, got, want, inc, n - 1).values()])
    out["error/bound by n"] = curve
    return out


#: The key of :func:`accumulation_precision`'s finding for a dtype (``.format(dtype)``).
ACCUMULATION_KEY = "accumulation {}"
#: The type whose accumulation (then one rounding) gives correctly rounded prefixes of the
#: probes below, for each float type it is told for.
ACCUMULATION_PROBE: dict[str, tuple[str, int]] = {  # dtype: (wider type, values below)
    "float16": ("float32", 64), "bfloat16": ("float32", 64), "float32": ("float64", 1024)}


class Accumulation(enum.Enum):
    """What the accumulation probe proved of a float type's scan."""

    WIDER = "every output correctly rounded: it accumulates in the wider type or wider"
    NARROWER = "some partial results rounded to the type itself"
    #: Correctly rounded where every partial result is exact in the wider type, yet beyond
    #: that type's accumulation bound on cancelling data: a compensated sum (Kahan's).
    CORRECTED = "rounded in the type itself and corrected: no wider accumulator fits"
    UNDETERMINED = "every order exact at the sizes allowed: nothing to tell"


class AccumulationFound(dict[str, Any]):
    """The accumulation probe's figures, as a report shows them, and its typed ``outcome``
    (an :class:`Accumulation`), which is what a check reads."""

    def __init__(self, outcome: Accumulation, figures: dict[str, Any]) -> None:
        super().__init__(figures)
        self.outcome = outcome


def _sum_probe(target: Target, dtype: str, p: int, below: int, top: int = 2**30) -> np.ndarray:
    """Integers below ``below`` (exact in the type), n of them passing 2**p after a few
    hundred at most and staying below half the largest value (float16's is 65504); at most
    ``top`` (the search's largest n) of them."""
    n = min(max(4096, 2 ** (p + 6) // below), int(float(finfo(dtype).max) / below),
            target.spec.max_n or 2**30, top)
    return np.random.default_rng(11).integers(0, below, n).astype(np.float64).astype(
        as_dtype(dtype))


def _product_probe(target: Target, dtype: str, wider: str) -> np.ndarray:
    """Signs, and at random places in the first half as many factors 3/4 and 3/2 as the wider
    type holds powers of 3 (15 in float32, 33 in float64): every product of adjacent
    factors is exact in the wider type and near 1, and a prefix of k of them needs
    1.58k significand bits."""
    n = min(1024, target.spec.max_n or 1024)
    rng = np.random.default_rng(11)
    x = rng.choice([1.0, -1.0], n)
    threes = int(SIGNIFICAND_BITS[wider] / np.log2(3))
    places = rng.choice(max(n // 2, 1), min(n // 2, threes), replace=False)
    x[places] *= rng.choice([0.75, 1.5], places.size)
    return x.astype(as_dtype(dtype))


def accumulation_precision(target: Target, dtype: str, top: int = 2**30) -> AccumulationFound:
    """Whether a float16, bfloat16 or float32 add or product scan accumulates in a wider type
    (float32, float32, float64), proved on data whose every partial result (of adjacent
    elements) is exact in the wider type but whose prefixes pass 2**p: integer-valued data
    for sums, factors 3/4 and 3/2 for products.  There the wider accumulation is
    exact in any order and one rounding at the end gives the correctly rounded prefix at
    every output, so any other result rounded some partial results to fewer bits.  With how
    far the target is from that, and from a sequential scan in the type itself; at most
    ``top`` elements (the search's largest n)."""
    wider, below = ACCUMULATION_PROBE[dtype]
    op, inc, family = target.spec.op, target.spec.inclusive, target.spec.family
    p = SIGNIFICAND_BITS[dtype]
    if family == "sum":
        x = _sum_probe(target, dtype, p, below, top)
        want = exact_scan(x, inclusive=inc)
        n = x.shape[0]
        if float(np.max(want, initial=0)) < 2.0**p:  # every order is exact: nothing to tell
            return AccumulationFound(Accumulation.UNDETERMINED, {
                ACCUMULATION_KEY.format(dtype): f"undetermined: every prefix stays below "
                                                f"2**{p} at the largest n checked ({n:,})"})
    else:
        x = _product_probe(target, dtype, wider)
        exact = np.cumprod(x.astype(np.float64))  # exact: odd parts below 2**53
        want = (exact if inc else np.r_[1.0, exact[:-1]]).astype(x.dtype)
    n = x.shape[0]
    got = target(x)
    narrow = sequential_scan(x, op, inclusive=inc)  # every partial result rounded to the type
    units = ulp(want, dtype)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64)) / units
    err_seq = np.abs(narrow.astype(np.float64) - want.astype(np.float64)) / units
    off = int((got != want).sum())
    times = None if off or family != "sum" else _cancelling_beyond(target, dtype, wider)
    outcome = (Accumulation.NARROWER if off else Accumulation.WIDER if times is None
               else Accumulation.CORRECTED)
    if outcome == Accumulation.WIDER:
        told = f"{wider} or wider (all {n} outputs correctly rounded)"
    elif outcome == Accumulation.NARROWER:
        told = (f"some partial {family}s rounded to {dtype} ({off} of {n} outputs not "
                f"correctly rounded)")
    else:
        told = (f"not {wider}: all {n} outputs correctly rounded where every partial sum is "
                f"exact in {wider}, yet {times:.3g}x the bound of a sum accumulated in {wider} "
                f"on cancelling data: rounded in {dtype} and corrected (a compensated sum, as "
                f"Kahan's), which no --accumulates declaration fits")
    return AccumulationFound(outcome, {
        ACCUMULATION_KEY.format(dtype): told,
        f"max err {dtype} (ulps)": float(err.max()),
        f"max err {dtype}, sequential in {dtype} (ulps)": float(err_seq.max())})


def _cancelling_beyond(target: Target, dtype: str, wider: str) -> float | None:
    """The most a sum correct on the accumulation probe passes the bound of one accumulated
    in ``wider`` on cancelling data (seeds 0 to 3, 4 to 1024 elements), None where it stays
    within: a compensated sum in the type itself is right wherever every partial sum is
    exact in ``wider``, and off by its own type's precision where large terms cancel."""
    worst = None
    for n in (4, 64, 1024):
        for seed in range(4):
            x = Case(min(n, target.spec.max_n or n), dtype, "cancellation", seed).data("add")
            beyond = accumulated_beyond(target, x, target(x), exact_answer(target, x), wider)
            if beyond is not None and beyond[0].any():
                worst = max(worst or 0.0, float(beyond[1][beyond[0]].max()))
    return worst


def passing_probes(target: Target, prop: str, dtypes: tuple[str, ...], top: int
                   ) -> list[tuple[str | None, Callable[[], dict[str, Any]]]]:
    """The summaries and probes a property that passed runs after its search, in order, each
    as (the dtype of an accumulation probe, None for a summary; the call that tells its
    figures): the one list that a check (:func:`~scancheck.engine.conformance.check_property`)
    and the GPU suite's warm step (:mod:`scancheck.engine.warmup`) both read."""
    spec = target.spec
    out: list[tuple[str | None, Callable[[], dict[str, Any]]]] = []
    if prop == "floats within bound" and spec.family == "sum":
        # The report's curve stops at 2**22: past it each point is seconds of host work.
        out.append((None, partial(float_summary, target, dtypes[0], min(top, 2**22))))
    elif prop in ("products within bound", "logsumexp within bound"):
        out.append((None, partial(bound_summary, target, dtypes)))
    if prop in ("floats within bound", "products within bound") and (
            spec.family in ("sum", "product")):
        out += [(dt, partial(accumulation_precision, target, dt, top)) for dt in ACCUMULATION_PROBE
                if dt in dtypes and spec.output_dtype(dt) == dt]
    return out
