"""The operators with rules of their own: ``products within bound`` (cumprod),
``logsumexp within bound`` (logcumsumexp) and ``indices`` (cummax and cummin)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ...core.dtypes import SIGNIFICAND_BITS, finfo, is_float
from ...oracle.bounds import Judgement, Rule
from ...oracle.logsumexp import judge_logsumexp
from ...oracle.products import judge_products
from ...targets.target import Target
from ..cases import Case
from ..diagnosis import Cause, Reason
from .base import Failure, short, untold
from .nan_rules import kept_rule_failure, made_from_specials, remade
from .running import declared_view, first_bad, run, run_case
from .subnormals import flush_attributed, flushes, indices_agree, indices_some, new_subnormals

#: What an output that breaks each rule of a judge shows.
RULE_REASONS = {Rule.SPECIALS: Reason.SPECIALS, Rule.CERTIFICATE: Reason.CERTIFICATE,
                Rule.BOUND: Reason.BEYOND_BOUND, Rule.OVERFLOW: Reason.OVERFLOWED}


def _judged(target: Target, case: Case, judge: Callable[[np.ndarray, np.ndarray, bool], Judgement]
            ) -> Failure | tuple[np.ndarray, Judgement, Failure | None]:
    """The case's input, ``judge``'s judgement of the target's output on it, and the first
    output it rejects as a failure named by its rule (None if none); or the failed call."""
    ran = run_case(target, case)
    return ran if isinstance(ran, Failure) else _judgement(target, *ran, judge)


def _judgement(target: Target, x: np.ndarray, got: np.ndarray,
               judge: Callable[[np.ndarray, np.ndarray, bool], Judgement],
               only: np.ndarray | None = None) -> tuple[np.ndarray, Judgement, Failure | None]:
    """``judge``'s judgement of the target's output ``got`` on ``x``, and its first rejected
    output (among those ``only`` selects, where given) as a failure named by its rule (a NaN
    rule the target keeps as a contract)."""
    inc = target.spec.inclusive
    judged = judge(x, got, inc, flush=flushes(target, x.dtype))
    if only is not None:
        judged.ok |= ~only
    first = np.flatnonzero(~judged.ok)
    failure = None
    if first.size:
        with np.errstate(over="ignore"):  # a reference past the format's range shows as inf
            reference = judged.reference.astype(got.dtype)
        failure = first_bad(target, judged.ok, got, reference, str(judged.reason[first[0]]),
                            reason=RULE_REASONS[judged.rule[first[0]]])
    kept = None if failure is None else kept_rule_failure(target, x, got, failure.index)
    if kept is not None:
        return x, judged, kept
    if failure is not None and failure.reason != Reason.NEVER_WRITTEN:
        # A product's judge relaxes under flush only where some range of the prefix
        # multiplies to below the smallest normal number: that is its evidence.
        failure = flush_attributed(target, x, failure, judge(x, got, inc, flush=True).ok,
                                    judge(x, got, inc, flush=False).ok, new_subnormals(x, got),
                                    underflow=judge is judge_products)
    return x, judged, failure


def products_check(target: Target, case: Case) -> Failure | None:
    """``products within bound``: cumprod judged by :func:`~scancheck.oracle.products.judge_products`."""
    out = _judged(target, case, judge_products)
    return out if isinstance(out, Failure) else _products_told(target, case, *out)


def _products_told(target: Target, case: Case, x: np.ndarray, judged: Judgement,
                   failure: Failure | None) -> Failure | None:
    """A product's failure attributed: precision where factors whose every product is exact
    come out exact and the error is rounding's size, else as its rule named it."""
    if failure is None or failure.reason not in (Reason.BEYOND_BOUND, Reason.CERTIFICATE):
        return failure  # specials, signs, never written, or flushing
    k = failure.index
    inc = target.spec.inclusive
    if failure.reason == Reason.BEYOND_BOUND:
        failure.diagnosis += f" ({judged.error[k] / judged.bound[k]:.3g}x the bound)"
    if not judged.error[k] < 0.5:  # a zero, an infinity or a factor 1.5: no rounding does that
        return failure
    # Factors +-1, +-2 and +-1/2 multiply exactly in every order while in range: a scan
    # wrong on them has no rounding to blame.
    for seed in (case.seed, case.seed + 1, case.seed + 2):
        rng = np.random.default_rng(seed)
        xs = rng.choice(np.array([1.0, -1.0, 2.0, -2.0, 0.5, -0.5]), case.n,
                        p=[0.4, 0.4, 0.05, 0.05, 0.05, 0.05]).astype(x.dtype)
        got_s, bad = run(target, xs)
        if bad is not None:
            return bad
        exact = judge_products(xs, got_s, inc)
        wrong = ~exact.ok | (~np.isnan(exact.bound) & (exact.error != 0))
        if wrong.any():
            failure.diagnosis += (f"; wrong also on factors of +-1, +-2 and +-1/2, whose every "
                                  f"product is exact (index {int(np.flatnonzero(wrong)[0])}), "
                                  f"so no rounding explains it")
            return failure
    bits = int(np.floor(-np.log2(judged.error[k])))
    failure.cause = Cause.PRECISION
    failure.diagnosis += (f"; relative error 2**-{bits}, as if some product kept about {bits} "
                          f"significand bits ({x.dtype.name} has "
                          f"{SIGNIFICAND_BITS[x.dtype.name]}), and factors whose products are "
                          f"exact come out exact")
    failure.detail["behaves like bits"] = bits
    return failure


def logsumexp_check(target: Target, case: Case) -> Failure | None:
    """``logsumexp within bound``: judged by :func:`~scancheck.oracle.logsumexp.judge_logsumexp`."""
    out = _judged(target, case, judge_logsumexp)
    if isinstance(out, Failure):
        return out
    failure = _logsumexp_told(target, case, *out)
    if failure is None or failure.cause != Cause.PRECISION or failure.reason != Reason.BEYOND_BOUND:
        return failure
    # Whether it overflows too is asked of the failure told, not of each a shrink meets.
    return untold(failure, partial(_overflow_named, target, out[0].dtype.name, failure))


def _logsumexp_told(target: Target, case: Case, x: np.ndarray, judged: Judgement,
                    failure: Failure | None) -> Failure | None:
    """A log-sum-exp failure attributed: precision where no term is lost or counted twice."""
    if failure is None or failure.reason in (Reason.NEVER_WRITTEN, Reason.SUBNORMALS):
        return failure
    k = failure.index
    if failure.reason == Reason.BEYOND_BOUND:
        err = judged.error[k]
        failure.allowed = float(judged.bound[k])  # a reproducer holds a mend to it
        failure.diagnosis += f" ({err / judged.bound[k]:.3g}x the bound, off by {err:.3g})"
        if err < 0.5:  # a factor e**0.5 in the sum: no term lost or counted twice
            failure.cause = Cause.PRECISION
            failure.diagnosis += "; no term is missing or counted twice"
            if k == 0 and x.ndim == 1 and target.spec.inclusive:
                failure.diagnosis += (" (output 0 combines nothing, yet is not x[0]: it went "
                                      "through exp and log, each of which rounds)")
        else:
            failure.diagnosis += "; a term missing or counted twice, not rounding"
    elif failure.reason == Reason.OVERFLOWED:
        failure.cause = Cause.PRECISION
        failure.diagnosis += (": some intermediate leaves the float range (exp taken before "
                              "the running maximum is subtracted?)")
    elif not np.isfinite(x).all():
        failure.cause = Cause.SPECIALS
    return failure


def _overflow_named(target: Target, dtype: str, failure: Failure) -> Failure:
    """``failure``, saying so where the target returns +inf on two equal values just past
    log(max) of ``dtype`` (exp of each overflows; their log-sum-exp is finite)."""
    top = float(np.floor(np.log(float(finfo(dtype).max)))) + 1
    x = np.full(2, top, dtype=dtype)
    try:
        got, bad = run(target, x)
    except Exception:  # noqa: BLE001 - its failure is the properties' to find
        return failure
    if bad is None and np.isposinf(got.astype(np.float64)).any():
        failure.diagnosis += (f"; it overflows too: +inf on {x.tolist()} ({dtype}), whose "
                              f"log-sum-exp is {top + np.log(2):.6g} (exp taken before the "
                              f"running maximum is subtracted)")
    return failure


#: Each operator with a judge of its own: the judge, how its failures are attributed, and
#: the finite values that stand in for NaN, +inf and -inf in the twin, given the type's
#: largest float: for a product, that float for an infinity (it overflows again where the
#: infinity would have stayed one); for log-sum-exp, whose bound grows with the largest
#: magnitude, small ones (-1000 is its identity as -inf is: exp(-1000) vanishes in every
#: float type).
_OWN_JUDGES: dict[str, tuple[Callable[..., Judgement], Callable[..., Failure | None],
                             Callable[[float], tuple[float, float, float]]]] = {
    "mul": (judge_products, _products_told, lambda top: (1.0, top, -top)),
    "logaddexp": (judge_logsumexp, _logsumexp_told, lambda top: (0.0, 0.0, -1000.0)),
}


def own_specials_check(target: Target, case: Case) -> Failure | None:
    """``nan and inf`` of products and log-sum-exp, by their own judge on data holding NaN
    and infinities, on the outputs whose prefix holds one (the others are the value
    property's).  A wrong one is the specials' own unless the same input with finite values
    in their place (the twin) is wrong there too with an error no rounding makes: then the
    twin's failure is told, a value bug seen first through a special."""
    judge, told, stand_ins = _OWN_JUDGES[target.spec.op]
    ran = run_case(target, case)
    if isinstance(ran, Failure):
        return ran
    x, got = ran
    # -inf too: log-sum-exp's identity, and two of them meeting make a NaN in a naive combine.
    reached = np.logical_or.accumulate(~np.isfinite(x))
    if not target.spec.inclusive:  # output k is the scan of x[:k]
        reached = np.concatenate([[False], reached[:-1]])
    x, judged, failure = _judgement(target, x, got, judge, only=reached)
    if (failure is None or failure.cause == Cause.CONTRACT
            or failure.reason in (Reason.SUBNORMALS, Reason.NEVER_WRITTEN)):
        return told(target, case, x, judged, failure)
    made = made_from_specials(*stand_ins(float(finfo(x.dtype).max)))
    twin = remade(x, made)
    twin_got, bad = run(target, twin)
    if bad is not None:
        return bad
    seen = declared_view(target, twin, twin_got)
    if isinstance(seen, Failure):
        return seen
    _, twin_judged, wrong = _judgement(target, *seen, judge)
    k = failure.index if failure.index is not None else 0
    # A value bug explains a failure at k where the twin is wrong by then, as for a sum
    # (values._specials_failure): one that first shows later leaves every output up to k
    # right.  A wrong finite value whatever the twin's error, a wrong NaN or infinity only
    # by an error no rounding makes (no loss of precision makes or unmakes one).
    wrong = None if wrong is None or twin_judged.ok[:k + 1].all() else told(
        target, case, twin, twin_judged, wrong)
    finite = all(v is not None and np.isfinite(v) for v in (failure.got, failure.expected))
    if wrong is not None and (finite or wrong.cause != Cause.PRECISION):
        wrong.diagnosis += (f" (the same input with NaN, +inf and -inf replaced by "
                            f"{made['nan']:g}, {made['+inf']:g} and {made['-inf']:g}; there "
                            f"output {k} showed as {failure.got} where {failure.expected} was "
                            f"due)")
        wrong.at["input made"] = made
        return wrong
    failure = told(target, case, x, judged, failure)
    assert failure is not None
    failure.cause, failure.independent = Cause.SPECIALS, True
    return failure


def indices_check(target: Target, case: Case) -> Failure | None:
    """``indices``: cummax and cummin name the last position of each running extreme."""
    spec = target.spec
    x = case.data(spec.op)
    out = target(x)
    wrong = indices_shape_failure(x, out)
    if wrong:
        return Failure(Cause.LOGIC, wrong, reason=Reason.SHAPE)
    values, idx = out
    flush = flushes(target, x.dtype)
    ok_i, ok_v, want_v, want_i = indices_agree(spec, x, values, idx, flush)
    failure = first_bad(target, ok_i, idx, want_i,
                         f"an index other than the last position of the running {spec.op} "
                         f"(ties and NaNs go to the later index)", reason=Reason.INDICES)
    if failure is not None:
        k = failure.index
        failure.detail = {"value": short(x[k]), "x at the index returned":
                          short(x[idx[k]]) if 0 <= idx[k] < x.shape[0] else "out of range"}
    else:
        failure = first_bad(target, ok_v, values, want_v,
                             f"values other than the running {spec.op} (each is x at its index)")
    if failure is None or not is_float(x.dtype):
        return failure
    # The witness is the value: an index is no subnormal.
    shown = replace(failure, got=values[failure.index], expected=want_v[failure.index])
    verdicts = [np.logical_and(*indices_agree(spec, x, values, idx, f)[:2]) for f in (True, False)]
    told = flush_attributed(target, x, shown, *verdicts, new_subnormals(x, values),
                             some=indices_some(spec, x, values, idx))
    failure.cause, failure.diagnosis, failure.reason = told.cause, told.diagnosis, told.reason
    return failure


def indices_shape_failure(x: np.ndarray, out: Any) -> str | None:
    """Why ``out`` is not the (values, indices) pair a cummax or cummin of ``x`` returns
    (None if it is)."""
    if (isinstance(out, tuple) and len(out) == 2 and out[0].shape == x.shape
            and out[1].shape == x.shape and out[0].dtype == x.dtype
            and np.issubdtype(out[1].dtype, np.integer)):
        return None
    what = (f"a {type(out).__name__}" if not isinstance(out, tuple) else
            ", ".join(f"{getattr(v, 'shape', '?')} {getattr(v, 'dtype', '?')}" for v in out))
    return (f"returned {what} for shape {x.shape} dtype {x.dtype}; indices=True means (values "
            f"of dtype {x.dtype}, integer indices)")
