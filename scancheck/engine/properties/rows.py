"""``rows``: every row of an N-D input, any axis and layout, by its operator's 1-D
criteria; a failing row is checked alone, to tell a layout bug from a value bug."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ...core.arrays import as_dtype
from ...core.dtypes import is_float
from ...oracle.bounds import (
    Judgement,
    Verdict,
    abs_sums,
    certified,
    classify,
    sequential_depths,
)
from ...oracle.exact import (
    exact_scan_axis,
)
from ...oracle.logsumexp import judge_logsumexp
from ...oracle.products import judge_products
from ...targets.contracts import MAX_RANK, nan_view, rule_owes, viewed
from ...targets.spec import TargetSpec, ranks_taken
from ...targets.target import NotAnArray, Target
from ..cases import Case
from ..diagnosis import Cause, Reason, is_resource_error
from ..layouts import Batch, batch
from .accumulation import accumulated_beyond, accumulated_words, rounded_twice
from .axes import negative_axis_refused
from .base import Contract, Failure, Told, prefix_error, untold
from .extremes import extreme_agree, extreme_some
from .nan_rules import contract_failure, finite_twin, longer_input, nan_rule_kept, rule_stands
from .own_rules import RULE_REASONS, indices_shape_failure
from .running import agree, dtype_failure, promoted, runs_differ
from .subnormals import flush_attributed, flushes, indices_agree, indices_some, new_subnormals


def _judge_of(spec: TargetSpec, dtype: np.dtype) -> Callable[..., Judgement] | None:
    """The judge of a float product or log-sum-exp scan (None where the answer is exact)."""
    if not is_float(dtype):
        return None
    return {"product": judge_products, "logsumexp": judge_logsumexp}.get(spec.family)


def row_verdicts(target: Target, xs: np.ndarray, gs: Any) -> tuple[np.ndarray, Told]:
    """For rows ``xs`` (2-D, each scanned along the last axis) and the target's rows ``gs``
    (a pair of them for indices): which outputs are wrong, and for one of them what it
    shows (its :class:`~scancheck.engine.diagnosis.Reason`, and in words), what came back
    and what was due."""
    spec = target.spec
    flush = flushes(target, xs.dtype)
    if viewed(spec) and not spec.indices:  # the NaN rule's own outputs, then the rest
        given = gs
        xs, gs, broken, rule = nan_view(spec, xs, gs)
        if broken.any():
            return broken, lambda r, k: (Reason.NAN_RULE, f"NaN rule broken: expected {rule}",
                                         given[r, k], rule_owes(spec))
    if spec.indices:
        values, idx = gs
        ok_i, ok_v, want_v, want_i = indices_agree(spec, xs, values, idx, flush)
        wrong_i = ~ok_i
        bad = wrong_i | ~ok_v
        return bad, lambda r, k: (
            (Reason.INDICES, f"an index other than the last position of the running {spec.op} "
             f"(ties and NaNs go to the later index)", idx[r, k], want_i[r, k])
            if wrong_i[r, k] else
            (Reason.WRONG_VALUE, f"values other than the running {spec.op}", values[r, k],
             want_v[r, k]))
    judge = _judge_of(spec, xs.dtype)
    if judge is not None:
        judged = judge(xs, gs, spec.inclusive, flush=flush)
        return ~judged.ok, lambda r, k: (RULE_REASONS[judged.rule[r, k]],
                                         str(judged.reason[r, k]), gs[r, k],
                                         judged.reference[r, k])
    if spec.family == "order" and is_float(xs.dtype):
        ok, ws = extreme_agree(spec, xs, gs, flush)
        bad = ~ok
    else:
        kw = dict(zeros=spec.zeros, nans=spec.nans) if spec.family == "order" else {}
        ws = exact_scan_axis(xs, spec.op, -1, spec.inclusive, **kw)
        bad = ~agree(target, xs, gs, ws)
    beyond = accumulated_beyond(target, xs, gs, ws) if is_float(xs.dtype) else None
    if beyond is not None and beyond[0].any():  # tighter than any-order's bound in its type
        twice = rounded_twice(target, xs, gs, ws, beyond[0])
        return beyond[0], lambda r, k: (Reason.ACCUMULATOR,
                                        accumulated_words(target, xs.dtype.name,
                                                          beyond[1][r, k], twice),
                                        gs[r, k], ws[r, k])
    if not (bad.any() and spec.family == "sum" and is_float(xs.dtype)):
        return bad, lambda r, k: (Reason.WRONG_VALUE, "differs from its exact scan", gs[r, k],
                                  ws[r, k])
    inc = spec.inclusive
    wrong_certified = certified(xs, inc, flush, rows=True) & (gs != ws)
    rep = classify(xs, gs, sequential_depths(xs.shape[-1], inc), inc, exact=ws, flush=flush,
                   rows=True)
    return wrong_certified | (rep.verdicts == Verdict.BEYOND_BOUND), lambda r, k: (
        (Reason.CERTIFICATE, "differs from the exact sum where every summation order is exact "
         "(the exactness certificate)") if wrong_certified[r, k] else
        (Reason.BEYOND_BOUND, "beyond the rounding bound of any summation order")) + (
        gs[r, k], ws[r, k])


def rows_check(target: Target, case: Case, data_seed: int | None = None,
               layout: str | None = None) -> Failure | None:
    """Every row of a batched input (a shape, layout and axis drawn from the case, or
    ``layout`` in place of the drawn one) against the exact scan of that row, by the
    criteria of the 1-D properties, all rows at once.  A failure in a drawn layout other
    than C order is told in C order where the same input fails there told alike: the
    layout then plays no part in it."""
    failure = _rows_failure(target, case, data_seed, layout)
    if failure is None or layout is not None or failure.at.get("layout") in (None, PLAIN):
        return failure
    return untold(failure, lambda: _plainer(target, case, data_seed, failure))


#: The layout a failure is shown in where its own plays no part.
PLAIN = "C"


def _plainer(target: Target, case: Case, data_seed: int | None, failure: Failure) -> Failure:
    """``failure``, or the same case's in C order where that is told the same (cause,
    reason and contract)."""
    try:
        plain = _rows_failure(target, case, data_seed, PLAIN)
    except Exception:  # noqa: BLE001 - no answer in C order: the drawn layout's stands
        return failure
    return plain if failure.told_alike(plain) else failure


def _rows_failure(target: Target, case: Case, data_seed: int | None, layout: str | None
                  ) -> Failure | None:
    """The verdict of :func:`rows_check` on ``case`` in ``layout`` (None: the drawn one)."""
    spec = target.spec
    b = batch(case, fixed_axis=spec.axis if isinstance(spec.axis, int) else None,
              data_seed=data_seed, ranks=ranks_taken(spec.axis, spec.ndim), layout=layout)
    if target.front_axes and b.axis < 0:
        b = replace(b, axis=b.axis % b.x.ndim)
    at = b.describe()
    try:
        got = target(b.x, b.axis)
    except Exception as exc:
        # NotAnArray is an answer, not a refusal; memory is a verdict of its own.
        if isinstance(exc, NotAnArray) or is_resource_error(exc):
            raise
        refusal = negative_axis_refused(lambda ax: target(b.x, ax), b.axis, b.x.shape, exc, at)
        if refusal is not None:  # the answer along the front axis is judged all the same
            front = replace(b, axis=refusal.front)
            return refusal.told(_judged_rows(target, case, front, refusal.answer,
                                             front.describe()))
        if b.x.size:
            raise
        return Failure(Cause.LOGIC, f"raised {type(exc).__name__} on a zero-size input of shape "
                       f"{b.x.shape} ({str(exc)[:120]}); its scan is an empty array", at=at,
                       reason=Reason.EMPTY_REFUSED)
    return _judged_rows(target, case, b, got, at)


def _judged_rows(target: Target, case: Case, b: Batch, got: Any, at: dict[str, Any]
                 ) -> Failure | None:
    """The target's answer ``got`` on the batch ``b`` judged row by row (see rows_check); a
    wrong answer whose rows are right along another axis says which."""
    failure = _row_failure(target, case, b, got, at)
    if (failure is None or failure.cause != Cause.LOGIC or target.spec.indices
            or failure.reason not in _WRONG_VALUES):
        return failure
    fresh = _Fresh(target, b.x.dtype)
    other = _axis_scanned(target, b.x, got, b.axis, fresh)
    if other is None:
        if _permuted(target, b, got):
            failure.diagnosis += ("; every value of the exact scan is there, at other places: "
                                  "the outputs are written in another order than the input is "
                                  "read (a layout or index misread)")
        return failure
    fixed = target.spec.axis
    # Rows of one element are right along any axis: then the fresh input is the evidence.
    told = None if fixed == "arg" else _axis_contract(
        target, b.x.ndim, other, failure, fresh,
        f"every row along axis {other} of " + (f"shape {list(b.x.shape)}" if b.x.shape[other] > 1
                                                else "a fresh input") + " is right")
    if told is None:
        failure.diagnosis += (f"; every row along axis {other} is right: it scans axis {other}"
                              + (f" where it is given axis {b.axis}" if fixed == "arg" else
                                 f" (of {b.x.ndim} axes), not {fixed}"))
        return failure
    return told


def _permuted(target: Target, b: Batch, got: Any) -> bool:
    """Whether ``got``, wrong, holds the exact scan's values of the batch's rows, each as
    often, at other places: of an exact scan only (integers, or max and min), with no NaN."""
    spec = target.spec
    if spec.op not in ("add", "max", "min") or spec.family == "sum" and is_float(b.x.dtype):
        return False
    x = promoted(target, b.x)
    g = np.asarray(got)
    if g.shape != x.shape or g.dtype != x.dtype or is_float(x.dtype) and np.isnan(x).any():
        return False
    kw = dict(zeros=spec.zeros, nans=spec.nans) if spec.family == "order" else {}
    want = exact_scan_axis(x, spec.op, b.axis, spec.inclusive, **kw)
    return bool(np.array_equal(np.sort(g, axis=None), np.sort(want, axis=None)))


#: What a wrong answer shows where another axis may explain it: a value, not a shape or rule.
_WRONG_VALUES = (Reason.WRONG_VALUE, Reason.CERTIFICATE, Reason.BEYOND_BOUND)


def axis_told(target: Target, dtype: str, failure: Failure) -> Failure:
    """``failure``, a wrong value of a 1-D case that a target of a fixed axis and of higher
    ranks only got as one row of the least rank it takes, as the axis to declare where it
    scans another one (its rows along it right on a fresh input of two elements an axis,
    at every rank it takes); ``failure`` itself otherwise."""
    spec = target.spec
    ranks = ranks_taken(spec.axis, spec.ndim)
    if not (isinstance(spec.axis, int) and ranks and 1 not in ranks and not spec.indices
            and failure.cause == Cause.LOGIC and failure.reason in _WRONG_VALUES):
        return failure
    r, fresh = min(ranks), _Fresh(target, as_dtype(dtype))
    for other in range(r):
        if other != spec.axis % r and fresh.right_along(r, spec.axis, other):
            told = _axis_contract(target, r, other, failure, fresh,
                                  f"a 1-D case reaches it as one row of rank {r}; every row "
                                  f"along axis {other} of a fresh input is right")
            if told is not None:
                return told
    return failure


def _axis_contract(target: Target, ndim: int, other: int, failure: Failure, fresh: _Fresh,
                   seen: str) -> Failure | None:
    """``failure`` of a target declared a fixed axis, which scanned axis ``other`` of a
    rank-``ndim`` input (``seen``: the evidence, in words), as the contract that declares
    the axis it scans; None where no fixed axis holds at every rank it takes."""
    fixed = target.spec.axis
    assert isinstance(fixed, int)
    declared = _axis_to_declare(target, ndim, fixed, other, fresh)
    if declared is None:
        return None
    flag = f"--axis {declared}"
    behaviour = f"scans axis {declared}"
    return Failure(Cause.CONTRACT, f"{behaviour} ({seen}), where its spec declares "
                   f"axis={fixed}: declare {flag}", failure.index, failure.got,
                   failure.expected, {"contract": flag}, at=failure.at,
                   contract=Contract(behaviour, flag, (("axis", declared),)),
                   reason=Reason.UNDECLARED)


def _axis_to_declare(target: Target, ndim: int, fixed: int, other: int, fresh: _Fresh
                     ) -> int | None:
    """The fixed axis to declare for a target declared ``fixed`` that scanned axis
    ``other`` of a rank-``ndim`` input: ``other`` counted as the spec counts (from the end
    where it is negative), else the other way, whichever holds at another rank it takes too
    (0 and -ndim are one axis at one rank; where it takes this rank alone, either is);
    None where neither does."""
    counts = (other - ndim, other) if fixed < 0 else (other, other - ndim)
    if target.spec.ndim and set(target.spec.ndim) == {ndim}:
        return counts[0]
    ranks = [r for r in target.spec.ndim if r != ndim][:2] or (
        [ndim + 1] if ndim < MAX_RANK else [])
    for declared in counts:
        if ranks and all(-r <= declared < r and fresh.right_along(r, fixed, declared % r)
                         for r in ranks):
            return declared
    return None


def _row_failure(target: Target, case: Case, b: Batch, got: Any, at: dict[str, Any]
                 ) -> Failure | None:
    """The row-by-row verdict of :func:`_judged_rows`, before its look along other axes."""
    spec = target.spec
    out = spec.output_dtype(b.x.dtype)
    if not spec.indices and got.shape == b.x.shape and got.dtype.name != out:
        failure = dtype_failure(target, b.x.dtype.name, got.dtype.name)
        failure.at = at
        return failure
    wrong = indices_shape_failure(b.x, got) if spec.indices else (
        None if got.shape == b.x.shape else
        f"returned shape {got.shape} for input of shape {b.x.shape}")
    if wrong:
        if not spec.indices and _flattens(target, b.x, got, b.axis):
            return Failure(Cause.CONTRACT, f"{wrong}: it scans its input flattened in C order "
                           f"(as numpy.cumsum does without an axis) whatever the axis; declare "
                           f"no --axis to check it as a scan of 1-D arrays", at=at,
                           reason=Reason.UNDECLARED)
        return Failure(Cause.LOGIC, wrong, at=at, reason=Reason.SHAPE)
    x = promoted(target, b.x)
    if x.size == 0:
        return None
    moved = np.moveaxis(x, b.axis, -1)
    m = moved.shape[-1]

    def rows(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(a, b.axis, -1)).reshape(x.size // m, m)

    xs = rows(x)
    bad, told = row_verdicts(target, xs, tuple(rows(v) for v in got) if spec.indices
                              else rows(got))
    if not bad.any():
        return _differs_again(target, b, got, at) if (
            spec.deterministic and is_float(x.dtype)) else None
    r, k = (int(v) for v in np.argwhere(bad)[0])
    row = [int(i) for i in np.unravel_index(r, moved.shape[:-1])]
    kept = None if spec.indices else nan_rule_kept(target, xs, rows(got))
    if kept is not None:
        kept = rule_stands(target, kept, lambda: _rows_answer(target, b, finite_twin(b.x),
                                                              same_layout=True),
                           lambda: _rows_answer(target, b, np.moveaxis(longer_input(
                               np.moveaxis(b.x, b.axis, -1), None), -1, b.axis)))
    if kept is not None:
        failure = contract_failure(target, kept, r * m + k, rows(got), xs)
        failure.index, failure.at = k, {**at, "row": row}
        return failure
    reason, why, shown, wanted = told(r, k)
    cause = Cause.SPECIALS if reason == Reason.NAN_RULE else Cause.LOGIC
    failure = Failure(cause, f"row {row} (of shape {list(x.shape)}, axis {b.axis}, "
                      f"{b.layout} layout): {why}", k, shown, wanted, at={**at, "row": row},
                      reason=reason)
    if is_float(x.dtype) and failure.reason != Reason.NEVER_WRITTEN:
        # The same rows judged under the other subnormal rule: flushing, declared or not.
        flushing = flushes(target, x.dtype)
        flipped = replace(target, spec=replace(spec, subnormals="keep" if flushing else "flush"))
        gs = tuple(rows(v) for v in got) if spec.indices else rows(got)
        bad_other = row_verdicts(flipped, xs, gs)[0]
        ok_flush, ok_keep = (~bad, ~bad_other) if flushing else (~bad_other, ~bad)
        some = None
        if spec.family == "order":
            some = indices_some(spec, xs, *gs) if spec.indices else extreme_some(spec, xs, gs)
        fresh = new_subnormals(xs, gs[0] if spec.indices else gs)
        failure = flush_attributed(target, xs[r], failure, ok_flush, ok_keep, fresh,
                                    underflow=_judge_of(spec, x.dtype) is judge_products,
                                    some=some)
        if failure.reason == Reason.SUBNORMALS:
            return failure
    if spec.family == "sum" and is_float(x.dtype):
        return _too_far(xs[r], k, spec.inclusive, failure) or _rows_attribution(target, case,
                                                                                failure)
    if _judge_of(spec, x.dtype) is not None and failure.reason in (Reason.BEYOND_BOUND,
                                                                   Reason.CERTIFICATE):
        return _row_alone(target, xs[r], failure)
    return failure


def _rows_answer(target: Target, b: Batch, values: np.ndarray, same_layout: bool = False
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows of ``values`` (an input of the batch's axis, in the batch's memory layout
    where ``same_layout`` and its shape is the batch's) and of the target's output on them;
    None where it gives no array of their shape."""
    x = _in_layout_of(b.x, values) if same_layout else np.ascontiguousarray(values)
    try:
        got = np.asarray(target(x, b.axis))
    except Exception:  # noqa: BLE001 - no answer, no evidence for a rule
        return None
    if got.shape != x.shape:
        return None
    m = x.shape[b.axis]
    xs = np.ascontiguousarray(np.moveaxis(x, b.axis, -1)).reshape(-1, m)
    return xs, np.ascontiguousarray(np.moveaxis(got, b.axis, -1)).reshape(-1, m)


def _in_layout_of(view: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (of ``view``'s shape) in ``view``'s memory layout: the same strides and
    offset into a copy of the buffer ``view`` lies in (a C-contiguous copy where that buffer
    is no contiguous array of its own)."""
    root = view
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is view:  # an array of its own: C or Fortran order
        out = np.empty_like(view, order="K")
        out[...] = values
        return out
    if not root.flags.c_contiguous:
        return np.ascontiguousarray(values)
    buf = root.copy().reshape(-1)
    start = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0])
    out = np.lib.stride_tricks.as_strided(buf[start // view.itemsize:], view.shape,
                                          view.strides)
    out[...] = values
    return out


def _axis_scanned(target: Target, x: np.ndarray, got: np.ndarray, axis: int, fresh: _Fresh
                  ) -> int | None:
    """Another axis along which every row of ``got`` (the target's answer on ``x``, given
    ``axis``) is right, exact or within the bound, and again on a fresh input whose every
    axis has two elements: a case with one long axis cannot tell a scan along it from one of
    the flat buffer.  None where there is none."""
    wide = promoted(target, x)
    for other in range(x.ndim):
        if (other != axis % x.ndim and _right_along(target, wide, got, other)
                and fresh.right_along(x.ndim, axis, other)):
            return other
    return None


def _right_along(target: Target, x: np.ndarray, got: np.ndarray, axis: int) -> bool:
    """Whether every row of ``got`` along ``axis`` is the right scan of ``x``'s."""
    def rows(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(a, axis, -1)).reshape(-1, x.shape[axis])
    xs, gs = rows(x), rows(got)
    # A few rows first: a wrong answer is wrong along every axis nearly always.
    return not row_verdicts(target, xs[:8], gs[:8])[0].any() and not row_verdicts(
        target, xs, gs)[0].any()


def _flattens(target: Target, x: np.ndarray, got: Any, axis: int) -> bool:
    """Whether ``got``, the target's answer on the N-D ``x``, is the right scan of ``x``
    flattened in C order, and so is its answer on a fresh input whose every axis has two
    elements (a case of one long axis cannot tell a flat scan from one along it)."""
    def flat_scan(v: np.ndarray, g: Any) -> bool:
        g = np.asarray(g)  # the case's answer as the target gave it
        return (v.ndim > 1 and g.shape == (v.size,) and v.size > 0
                and not row_verdicts(target, promoted(target, v).reshape(1, -1),
                                     g.reshape(1, -1))[0].any())

    if not flat_scan(x, got):
        return False
    fresh = _fresh_answer(target, x.ndim, x.dtype, axis)
    return fresh is not None and flat_scan(*fresh)


class _Fresh:
    """The target's answers on fresh integers of one dtype (:func:`_fresh_answer`), each
    asked of it once, however many axes are tried against it."""

    def __init__(self, target: Target, dtype: np.dtype) -> None:
        self.target, self.dtype = target, dtype
        self._answers: dict[tuple[int, int], tuple[np.ndarray, np.ndarray] | None] = {}

    def right_along(self, ndim: int, given: int, other: int) -> bool:
        """Whether the target, given axis ``given`` of the fresh input of rank ``ndim``,
        answers rows right along ``other``; False where it raised."""
        if (ndim, given) not in self._answers:
            self._answers[ndim, given] = _fresh_answer(self.target, ndim, self.dtype, given)
        fresh = self._answers[ndim, given]
        if fresh is None:
            return False
        v, g = fresh
        return g.shape == v.shape and _right_along(self.target, promoted(self.target, v), g,
                                                   other)


def _fresh_answer(target: Target, ndim: int, dtype: np.dtype, given: int
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """Fresh integers in [1, 8) of shape (2, 2, ...) of rank ``ndim`` and the target's answer
    on them, given axis ``given``; None where it raises (no answer is no evidence of how it
    reads its axes)."""
    v = np.random.default_rng(ndim).integers(1, 8, [2] * ndim).astype(dtype)
    try:
        return v, np.asarray(target(v, given))
    except Exception:  # noqa: BLE001 - see above
        return None


def _differs_again(target: Target, b: Any, got: Any, at: dict[str, Any]) -> Failure | None:
    """A right batched run's output against a second run on the same input: the first
    element whose bits differ (``deterministic`` on N-D input, its own code path), or None."""
    failure = runs_differ(got, target(b.x, b.axis), lambda k: (
        f"bits differ between runs on the same input (of shape {list(b.x.shape)}, axis "
        f"{b.axis}, {b.layout} layout) at output {k} in C order, every run right"), at)
    if failure is not None:
        failure.index = None  # a flat position, not an output of one row
    return failure


def _row_alone(target: Target, row: np.ndarray, failure: Failure) -> Failure:
    """A product or log-sum-exp row beyond its bound: a logic error of the batching if the
    same row scanned alone (a contiguous 1-D array) is within it, else precision lost."""
    if target.spec.axis != "arg":  # a fixed-axis target takes no 1-D row
        return failure
    judged = _judge_of(target.spec, row.dtype)(row, target(row.copy(), 0), target.spec.inclusive)
    if judged.ok.all():
        failure.diagnosis += ("; the same row scanned alone (1-D, contiguous) is within the "
                              "bound: the batched scan mixes rows or misreads the layout")
    else:
        failure.cause = Cause.PRECISION
        failure.diagnosis += ("; the same row scanned alone is beyond the bound too: precision "
                              "lost, not the batching")
    return failure


def _too_far(row: np.ndarray, k: int, inclusive: bool, failure: Failure) -> Failure | None:
    """A float sum's output ``k`` of ``row`` wrong by more than lost precision makes: finite
    where the exact prefix rounds to an infinity, or the largest float where some partial
    sum may overflow (a narrower type overflows sooner, not later), or off by 2**-4 of its
    prefix's magnitudes or more; None otherwise."""
    got, want = float(failure.got), float(failure.expected)
    scale = float(abs_sums(row.astype(np.float64), inclusive)[k])
    top = float(np.finfo(row.dtype).max)
    if np.isfinite(got) and (np.isinf(want) or abs(got) == top and scale > top):
        failure.diagnosis += (f"; {got:g} where the exact prefix is {want:g} and some partial "
                              f"sum may overflow: a narrower type would overflow sooner, not come "
                              f"back finite (a saturating store?)")
        return failure
    if not (np.isfinite(got) and scale > 0 and abs(got - want) >= scale / 16):
        return None
    bits = int(np.floor(-np.log2(abs(got - want) / scale)))
    failure.diagnosis += f"; {prefix_error(bits)}, too large for lost precision"
    return failure


def _rows_attribution(target: Target, case: Case, failure: Failure) -> Failure:
    """A logic error if the same shape, layout and axis on 'steps' data (every sum of
    adjacent elements in [-3, 3]) fail too, else precision lost."""
    if case.distribution == "steps":
        return failure
    steps = replace(case, distribution="steps")
    # A negative axis refused is no wrong answer on 'steps' data.
    probe = next((p for s in range(3) if (p := rows_check(target, steps, case.seed + s,
                                                           failure.at.get("layout")))
                  and p.reason != Reason.REFUSED_AXIS), None)
    if probe is not None:
        failure.cause = Cause.LOGIC
        failure.diagnosis += (f"; wrong also on 'steps' data of the same shape and layout "
                              f"(row {probe.at.get('row')}), so no rounding explains it")
    else:
        failure.cause = Cause.PRECISION
        failure.diagnosis += ("; right on 'steps' data of the same shape and layout: precision "
                              "lost, not a logic error")
    return failure
