"""The conformance properties, one row each, and how a failing case is attributed to a cause.

* ``integers exact`` -- integer scans equal the exact answer (two's-complement wrap);
* ``certified exact`` -- where every summation order is exact (:func:`~scancheck.oracle.bounds.certified`),
  float outputs equal the exact sum: no bound needed, so a carry kept in 16 bits shows
  although its error stays inside the any-order bound;
* ``floats within bound`` -- float errors within the rounding bound of any summation order
  (depth k-1 for the k-th prefix), infinities only where some order may overflow; max and
  min exact, with the zero order and NaN rule their spec declares;
* ``nan and inf`` -- NaN and infinities propagate as IEEE arithmetic says;
* ``deterministic`` -- the same bits on every run;
* ``recurrence`` -- the (a, b) pair scan solves y_n = a_n*y_{n-1} + b_n;
* ``rows`` -- every row of an N-D input, any axis and layout, by the criteria of its
  operator's 1-D properties (bounds, exact answers, indices);
* ``products within bound`` -- cumprod within gamma(k-1) of the exact product where no range
  leaves the normal numbers, and IEEE's signs, zeros, infinities and NaN (:mod:`.products`);
* ``logsumexp within bound`` -- logcumsumexp within its combine-tree bound, specials exact
  (:mod:`.logsumexp`);
* ``indices`` -- cummax and cummin return the last position of each running extreme.

Subnormals: a target's spec keeps them (IEEE) or declares the float dtypes whose subnormals
read as zero (``subnormals='flush'``), and each operator's ``flush`` column
(:data:`~scancheck.core.operators.FLUSH_RULES`) says what that allows: rounding operators may
flush, selecting ones (max, min, indices) must.  A failure that the other rule explains is
named as such ("subnormals read as zero", "subnormals kept"), with the subnormal that shows it.

A failing float case is a logic error if the target is also wrong on ``steps`` data of the
same size, where every sum of adjacent elements lies in [-3, 3] so that any scan that adds
adjacent ranges is exact in 3 bits; otherwise the precision was lost, and the error says
how many significand bits the target behaves like.  A NaN/inf failure is a logic error if
the same input with its NaNs and infinities replaced by 1 is wrong too; runs whose bits
differ are a logic error if one of them is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.arrays import as_dtype, same_bits
from ..core.operators import (
    DTYPES,
    FLOAT_DTYPES,
    INPUT_DTYPES,
    INT_DTYPES,
    NAN_RULES,
    SIGNIFICAND_BITS,
    arg_extreme_scan,
    extreme_scan,
    finfo,
    flushed_dtypes,
    flushed_extreme_scan,
    get_operator,
    is_float,
    read_as_zero,
    sequential_scan,
    shifted,
    subnormal,
)
from ..oracle.bounds import (
    Judgement,
    Verdict,
    abs_sums,
    certified,
    classify,
    gamma,
    log_depths,
    overflow_threshold,
    sequential_depths,
    ulp,
)
from ..oracle.exact import (
    RATIONAL_RECURRENCE_MAX,
    exact_scan,
    exact_scan_axis,
    recurrence_enclosure,
    recurrence_magnitudes,
)
from ..oracle.logsumexp import judge_logsumexp
from ..oracle.products import judge_products
from .cases import Case
from .diagnosis import Cause
from .layouts import batch
from .spec import TargetSpec
from .targets import NotAnArray, Target


@dataclass
class Failure:
    """Why one case failed: its cause, one line of diagnosis, and where."""

    cause: Cause
    diagnosis: str
    index: int | None = None
    got: Any = None
    expected: Any = None
    detail: dict[str, Any] = field(default_factory=dict)
    #: The case's own evidence shows this failure does not follow from a logic error
    #: (the input without its NaNs is right; every run is within the bound).
    independent: bool = False
    #: Where in a batched input: the row, the shape, the axis, the layout.
    at: dict[str, Any] = field(default_factory=dict)

    def where(self) -> dict[str, Any]:
        if self.index is None:
            return dict(self.at)
        return {**self.at, "index": self.index, "got": _short(self.got),
                "expected": _short(self.expected)}


Check = Callable[[Target, Case], "Failure | None"]


@dataclass(frozen=True)
class Property:
    """One conformance property: its check, and the dtypes, data and operators it covers."""

    name: str
    check: Check
    dtypes: tuple[str, ...]
    distributions: tuple[str, ...]
    ops: tuple[str, ...]
    #: Its own largest n (the recurrence's rational oracle grows with n).
    max_n: int | None = None
    #: Whether it checks N-D inputs (targets whose spec has an axis only).
    batched: bool = False


def _short(v: Any) -> Any:
    v = np.asarray(v)
    return v.item() if v.ndim == 0 else v.tolist()


# -- running a target on a case -------------------------------------------------------


def _called(target: Target, x: np.ndarray) -> tuple[Any, Failure | None]:
    """Whatever the target returns for ``x``, or a failure if it refuses an empty input
    (other exceptions are the caller's: a fault)."""
    try:
        return target(x), None
    except Exception as exc:
        if x.shape[0] or isinstance(exc, NotAnArray):  # the latter: an answer, not a refusal
            raise
        return None, Failure(Cause.LOGIC, f"raised {type(exc).__name__} on an empty input "
                             f"({str(exc)[:120]}); the scan of nothing is an empty array")


def _run(target: Target, x: np.ndarray) -> tuple[np.ndarray | None, Failure | None]:
    """The target's output on ``x``, or a failure if it refuses an empty input or returns
    the wrong shape or dtype (other exceptions are the caller's: a fault)."""
    got, refused = _called(target, x)
    if refused is not None:
        return None, refused
    out = target.spec.output_dtype(x.dtype)
    if got.shape != x.shape or got.dtype.name != out:
        return None, Failure(Cause.LOGIC, f"returned shape {got.shape} dtype {got.dtype} for "
                             f"shape {x.shape} dtype {x.dtype} (expected dtype {out})")
    return got, None


def _promoted(target: Target, x: np.ndarray) -> np.ndarray:
    """``x`` in the dtype the target returns for it: the type its exact scan is taken in."""
    out = target.spec.output_dtype(x.dtype)
    return x if out == x.dtype.name else x.astype(as_dtype(out))


def _first_bad(target: Target, ok: np.ndarray, got: np.ndarray, want: np.ndarray,
               diagnosis: str, cause: Cause = Cause.LOGIC) -> Failure | None:
    """A failure at the first output where ``ok`` is False (None if there is none); an
    output that still holds the harness's fill bytes is named as never written."""
    if ok.all():
        return None
    k = int(np.flatnonzero(~ok)[0])
    fill = target.output_fill
    if fill is not None and (np.atleast_1d(got[k]).view(np.uint8) == fill).all():
        diagnosis = (f"output {k} never written (it still holds the 0x{fill:02x} bytes the "
                     f"harness fills outputs with)")
    return Failure(cause, diagnosis, k, got[k], want[k])


def _exact(target: Target, x: np.ndarray,
           enclosure: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The exact answer for ``x``: for a GPU target's large float add cases, computed on the
    device (bit for bit the CPU oracle's, a thousand times faster), so that the time budget
    buys cases rather than oracle work.  A float recurrence past the rationals' reach gets
    the midpoint of its enclosure (``enclosure``, if the caller has it), within the
    enclosure's width of the exact answer, and its products by a running product."""
    from ..oracle.exact_device import DEVICE_FROM, FORMATS

    spec = target.spec
    if spec.op in ("max", "min"):
        if _flushes(target, x.dtype):
            return _extreme_answers(spec, x, True)[0]
        return exact_scan(x, spec.op, spec.inclusive, zeros=spec.zeros, nans=spec.nans)
    if spec.op == "recurrence" and is_float(x.dtype) and x.shape[0] > RATIONAL_RECURRENCE_MAX:
        lo, hi = enclosure or _recurrence_reference(x, spec.inclusive)[:2]
        with np.errstate(over="ignore", under="ignore"):
            products = np.cumprod(x[:, 0].astype(np.float64))
        if not spec.inclusive:
            products = np.r_[1.0, products[:-1]]
        return np.stack([products, lo / 2 + hi / 2], axis=-1).astype(x.dtype)
    if (spec.device == "gpu" and spec.op == "add" and x.ndim == 1 and x.size >= DEVICE_FROM
            and x.dtype.name in FORMATS):
        import cupy as cp

        return exact_scan(cp.asarray(x), spec.op, spec.inclusive).get()
    return exact_scan(x, spec.op, spec.inclusive)


def _agree(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per output of a scan of ``x`` (along its last axis): the exact answer ``want`` bit for
    bit (any NaN for a NaN), except that a float max or min is held to its spec's zero order
    and subnormal rule (:func:`_extreme_agree`)."""
    if target.spec.op in ("max", "min") and is_float(got.dtype):
        return _extreme_agree(target.spec, x, got, _flushes(target, x.dtype))[0]
    if get_operator(target.spec.op).width == 1:  # rows: per element, not per row
        return same_bits(got.ravel(), want.ravel()).reshape(got.shape)
    return same_bits(got, want)


def _extreme_answers(spec: TargetSpec, x: np.ndarray, flush: bool
                     ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The max or min scan of ``x`` along its last axis under the spec's rules, and with
    ``flush`` (FLUSH_RULES, "exact") that of the inputs read as zero and, per output, the
    first and the last input tied with it."""
    if flush:
        want, first, last = flushed_extreme_scan(x, spec.op, spec.zeros, spec.nans)
        picks = [np.take_along_axis(x, i, axis=-1) for i in (first, last)]
    else:
        want, picks = extreme_scan(x, spec.op, spec.zeros, spec.nans), []
    if not spec.inclusive:
        ident = get_operator(spec.op).identity(x.dtype.name)
        want, picks = shifted(want, ident), [shifted(p, ident) for p in picks]
    return want, picks


def _extreme_agree(spec: TargetSpec, x: np.ndarray, got: np.ndarray, flush: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per output of a float max or min scan of ``x`` along its last axis: whether ``got`` is
    what the spec allows, and the answer it is judged against.  That is the exact scan bit
    for bit, either zero for a zero where the spec leaves the order of zeros open; with
    ``flush``, the scan of the inputs read as zero, or at a zero answer the bits of the
    first or the last input tied with it (what a compare-and-select returns)."""
    want, picks = _extreme_answers(spec, x, flush)

    def same(a: np.ndarray) -> np.ndarray:
        return same_bits(got.ravel(), a.ravel()).reshape(got.shape)

    ok = same(want)
    if spec.zeros == "either":
        ok |= (got == 0) & (want == 0)
    for pick in picks:
        ok |= (want == 0) & same(pick)
    return ok, want


def _ran(target: Target, case: Case) -> tuple[np.ndarray, np.ndarray] | Failure:
    """The case's input (in the type the target returns) and the target's output, or the
    failure of the call."""
    x = case.data(target.spec.op)
    got, bad = _run(target, x)
    if bad is not None:
        return bad
    return _promoted(target, x), got


def _outputs(target: Target, case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray] | Failure:
    """The case's input, the target's output and the exact answer, or the failure of the call."""
    ran = _ran(target, case)
    return ran if isinstance(ran, Failure) else (*ran, _exact(target, ran[0]))


def _bits_differ(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                 ) -> Failure | None:
    failure = _first_bad(target, _agree(target, x, got, want), got, want,
                         "differs from the exact scan")
    if failure is None or target.spec.op not in ("max", "min") or not is_float(x.dtype):
        return failure
    spec = target.spec
    return _flush_attributed(target, x, failure, _extreme_agree(spec, x, got, True)[0],
                             _extreme_agree(spec, x, got, False)[0],
                             _new_subnormals(x, got), some=_extreme_some(spec, x, got))


def _extreme_some(spec: TargetSpec, x: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Per output of a float max or min scan of ``x`` along its last axis: whether ``got`` is
    the running extreme of ``x`` with some of its subnormals read as zero (each output the
    one before it, an input not beyond it staying behind, or that input or its zero, not
    behind it), where no NaN has come; a restart or a skipped input is none."""
    ident = get_operator(spec.op).identity(x.dtype.name)
    xs = x if spec.inclusive else shifted(x, ident)
    zs = read_as_zero(xs)
    prev = shifted(got, ident)
    ahead = np.greater_equal if spec.op == "max" else np.less_equal
    low = np.minimum(xs, zs) if spec.op == "max" else np.maximum(xs, zs)

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return same_bits(a.ravel(), b.ravel()).reshape(a.shape)

    with np.errstate(invalid="ignore"):
        taken = (same(got, xs) | same(got, zs)) & ahead(got, prev)
        kept = (same(got, prev) | ((got == 0) & (prev == 0))) & ahead(prev, low)
    return (taken | kept) & ~np.logical_or.accumulate(np.isnan(xs), axis=-1)


# -- subnormals: flushing declared, or not ---------------------------------------------


def _flush_attributed(target: Target, x: np.ndarray, failure: Failure, ok_flush: np.ndarray,
                      ok_keep: np.ndarray, fresh: bool, underflow: bool = False,
                      some: np.ndarray | None = None) -> Failure:
    """``failure`` (of a float scan of ``x``) as a matter of subnormals where the outputs'
    verdicts under the two subnormal rules, ``ok_flush`` and ``ok_keep``, show it: every
    output right under the rule not declared, or (where the operator's flushing is exact,
    :data:`~scancheck.core.operators.FLUSH_RULES`) each output right under one rule or the other,
    or right once read as zero itself (``some``: some subnormals flushed, others kept); and a
    subnormal shows at the failing output (an input of its prefix, the output or its exact
    value), or ``underflow``: the judge relaxed only where a partial result does.  A scan
    that returned a subnormal of its own making (``fresh``) flushes nothing: none is read as
    zero there."""
    declared = _flushes(target, x.dtype)
    exact = get_operator(target.spec.op).flush == "exact"
    if declared and not exact:  # flushing is allowed, not required: keeping is no failure
        return failure
    witness = _subnormal_witness(x, failure, target.spec.inclusive)
    if witness is None and not underflow:
        return failure
    if fresh and not declared:  # what reads subnormals as zero makes none of its own
        return failure
    other = ok_keep if declared else ok_flush
    dt, rule = x.dtype.name, target.spec.subnormals
    if other.all():
        text = (f"subnormals kept (IEEE gradual underflow) where the spec declares every "
                f"{dt} subnormal read as zero (subnormals={rule!r}); a scan that keeps them "
                f"declares subnormals='keep', or names the dtypes it flushes ('flush:float32')"
                if declared else
                f"subnormals read as zero (DAZ or FTZ): every output is right once subnormal "
                f"inputs and results read as zeros of their sign; a target that flushes by "
                f"design declares TargetSpec(subnormals='flush'), or 'flush:{dt}' where {dt} "
                f"alone flushes")
    elif exact and (ok_flush | ok_keep | (False if some is None else some)).all():
        text = ("some subnormals read as zero and others kept (DAZ or FTZ on some values "
                "only): every output is right once it and some of the subnormal inputs read as "
                "zero, so neither subnormals='keep' nor subnormals='flush' describes it")
    else:
        return failure
    failure.cause = Cause.PRECISION
    failure.diagnosis = (f"{failure.diagnosis}: {text}; " + (
        witness or f"a partial result falls below the smallest normal number "
                   f"{float(finfo(x.dtype).smallest_normal)!r}"))
    failure.detail["subnormals"] = ("kept" if declared and other.all() else
                                    "read as zero" if other.all() else "some read as zero")
    return failure


def _new_subnormals(x: np.ndarray, got: np.ndarray) -> bool:
    """Whether ``got`` holds a subnormal whose bits no element of ``x`` has: a result that
    flushing arithmetic never returns (a move or a selection returns an input unflushed)."""
    out = np.asarray(got).reshape(-1)
    made = out[subnormal(out)]
    if not made.size:
        return False
    view = {2: np.uint16, 4: np.uint32, 8: np.uint64}[out.dtype.itemsize]
    return not np.isin(made.view(view), np.ascontiguousarray(x).reshape(-1).view(view)).all()


def _subnormal_witness(x: np.ndarray, failure: Failure, inclusive: bool) -> str | None:
    """The subnormal that shows a flush at the failure's output: a subnormal input of its
    prefix (the one the output or its exact value is, if either is), and the output or its
    exact value where those are subnormal (None where none is)."""
    k = failure.index
    told = []
    if k is not None:
        prefix = x[:k + 1] if inclusive else x[:k]
        tiny = subnormal(prefix)
        hits = np.argwhere(tiny)
        if hits.size:
            values = {np.asarray(v).tobytes() for v in (failure.got, failure.expected)}
            named = [h for h in hits if prefix[tuple(h)].tobytes() in values] or list(hits)
            at = tuple(int(i) for i in named[-1])
            where = f"x[{at[0]}]" + "".join(f"[{i}]" for i in at[1:])
            told.append(f"{where} = {float(prefix[at])!r} is subnormal")
        for what, v in (("output", failure.got), ("exact output", failure.expected)):
            v = np.asarray(v)
            if v.dtype.kind == "f" and subnormal(v.reshape(-1)).any():
                told.append(f"the {what} {_short(v)!r} " + ("holds a subnormal" if v.ndim else
                                                            "is subnormal"))
    return ", ".join(told) or None


# -- float add: the certificate, the bound, and what a failure means -------------------


def _flushes(target: Target, dtype: Any) -> bool:
    """Whether the target's spec reads subnormals of ``dtype`` as zero."""
    return as_dtype(dtype).name in flushed_dtypes(target.spec.subnormals)


def _flush_explains(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> bool:
    """Whether reading subnormals as zero accounts for every error of ``got``: right where
    the certificate holds for a flushing scan, and within the bound grown by what flushing
    can move."""
    inc = target.spec.inclusive
    if not (np.abs(x[np.isfinite(x)]) < finfo(x.dtype).smallest_normal).any():
        return False
    where = certified(x, inc, flush=True)
    rep = classify(x, got, sequential_depths(x.shape[0], inc), inclusive=inc, exact=want,
                   flush=True)
    return bool(((got == want) | ~where).all()) and rep.verdict != Verdict.BEYOND_BOUND


def _certificate_failure(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                         ) -> Failure | None:
    where = certified(x, target.spec.inclusive, flush=_flushes(target, x.dtype))
    # The values, not the bits: adding the identity +0.0 to a -0.0 sum is a correct +0.0.
    return _first_bad(target, ~where | (got == want), got, want,
                      "differs from the exact sum where every summation order is exact "
                      "(the exactness certificate)")


def _bound_failure(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                   ) -> Failure | None:
    inc = target.spec.inclusive
    rep = classify(x, got, sequential_depths(x.shape[0], inc), inclusive=inc, exact=want,
                   flush=_flushes(target, x.dtype))
    if rep.verdict != Verdict.BEYOND_BOUND:
        return None
    k = int(rep.beyond[0])
    if not (np.isfinite(got[k]) and np.isfinite(want[k])):
        return Failure(Cause.LOGIC, f"{got[k]} where the exact prefix is {want[k]}", k,
                       got[k], want[k])
    return Failure(Cause.LOGIC, f"beyond the rounding bound of any summation order "
                   f"({rep.bound_fraction[k]:.3g}x the bound)", k, got[k], want[k])


def _bound_fractions(x: np.ndarray, got: np.ndarray, want: np.ndarray, inclusive: bool,
                     k: int | None = None) -> dict[str, float]:
    """The error at output k (the worst output if None) as fractions of the bounds of the
    sequential order and of a log2-depth tree, the deepest and the shallowest scans."""
    n = x.shape[0]
    tree = log_depths(n) if inclusive else np.r_[0, log_depths(max(n - 1, 0))][:n]
    out = {}
    for label, depths in (("err/seq bound", sequential_depths(n, inclusive)),
                          ("err/log2 bound", tree)):
        frac = classify(x, got, depths, inclusive=inclusive, exact=want).bound_fraction
        out[label] = float(frac.max() if k is None else frac[k])
    return out


def _steps_probe(target: Target, case: Case) -> Failure | None:
    """The target on ``steps`` data of the case's size (three seeds): any difference from
    the exact answer there is a logic error, since no partial sum of adjacent elements
    needs more than 3 bits."""
    for seed in (case.seed, case.seed + 1, case.seed + 2):
        x = Case(case.n, case.dtype, "steps", seed).data("add")
        got, bad = _run(target, x)
        if bad is not None:
            return bad
        want = _exact(target, _promoted(target, x))
        found = _first_bad(target, got == want, got, want, "")
        if found is not None:
            return found
    return None


def _float_failure(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                   want: np.ndarray, failure: Failure) -> Failure:
    """Attribute a float add failure at ``failure.index``: a logic error if ``steps`` data of
    the same size show it too, else precision lost, with the bits the target behaves like."""
    k = failure.index
    assert k is not None
    detail = _bound_fractions(x, got, want, target.spec.inclusive, k)
    if not _flushes(target, x.dtype) and _flush_explains(target, x, got, want):
        witness = _subnormal_witness(x, failure, target.spec.inclusive)
        return Failure(Cause.PRECISION, f"{failure.diagnosis}: subnormals read as zero (DAZ or "
                       f"FTZ), and within the bound once subnormal inputs and results may be "
                       f"flushed; a target that flushes by design declares "
                       f"TargetSpec(subnormals='flush'); {witness or 'x has subnormals'}",
                       k, got[k], want[k], {**detail, "subnormals": "read as zero"})
    probe = _steps_probe(target, case)
    if probe is not None:
        where = f"index {probe.index}" if probe.index is not None else "the call itself"
        text = probe.diagnosis if "never written" in probe.diagnosis else (
            f"{failure.diagnosis}; wrong also on data whose every sum of adjacent elements is "
            f"at most 3 ('steps' data, n={case.n}, {where}), so no rounding explains it")
        return Failure(Cause.LOGIC, text, k, got[k], want[k], detail)
    p = SIGNIFICAND_BITS[x.dtype.name]
    if not np.isfinite(got[k]):
        reach = abs_sums(x, target.spec.inclusive)[k] / overflow_threshold(x.dtype.name)
        return Failure(Cause.PRECISION, f"{failure.diagnosis}: an infinity or NaN where no "
                       f"summation order can overflow (the prefix's magnitudes sum to "
                       f"{reach:.3g} of the overflow threshold), while data with tiny partial "
                       f"sums are exact: some intermediate has less range than "
                       f"{x.dtype.name} (a narrower type, or an overflow guard set too low)",
                       k, got[k], want[k], detail)
    # At the smallest failing n one lossy step shows (one carry, say), its error at most
    # 2**-bits of what it rounds: the worst of 16 seeds comes within a few percent of that.
    worst = _relative_error(x, got, want, target.spec.inclusive)
    for seed in range(case.seed + 1, case.seed + 16):
        xs = replace(case, seed=seed).data("add")
        got_s, wide = target(xs), _promoted(target, xs)
        worst = max(worst, _relative_error(wide, got_s, _exact(target, wide),
                                           target.spec.inclusive))
    bits = int(np.floor(-np.log2(worst))) if worst > 0 else p
    detail["behaves like bits"] = bits
    if bits < 4:
        return Failure(Cause.LOGIC, f"{failure.diagnosis}; relative error 2**-{bits} of the "
                       f"prefix's magnitude, too large for lost precision (data with tiny "
                       f"partial sums pass: an error that grows with the values)", k, got[k],
                       want[k], detail)
    return Failure(Cause.PRECISION, f"{failure.diagnosis}; behaves like about {bits} significand "
                   f"bits ({x.dtype.name} has {p}), and data with tiny partial sums are exact",
                   k, got[k], want[k], detail)


def _relative_error(x: np.ndarray, got: np.ndarray, want: np.ndarray, inclusive: bool) -> float:
    """The largest finite error of ``got`` as a fraction of its prefix's sum of magnitudes
    (the scale every partial sum of that prefix lives at)."""
    scale = abs_sums(x, inclusive)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    ok = np.isfinite(err) & (scale > 0)
    return float(np.max(err[ok] / scale[ok], initial=0.0))


def _judge(target: Target, case: Case, x: np.ndarray, got: np.ndarray) -> Failure | None:
    """Everything a finite output must satisfy for the target's operator and dtype, with the
    failure attributed (used on twins and on repeated runs)."""
    x = _promoted(target, x)
    want = _exact(target, x)
    if target.spec.op != "add" or not is_float(x.dtype):
        return _bits_differ(target, x, got, want)
    failure = _certificate_failure(target, x, got, want) or _bound_failure(target, x, got, want)
    return failure and _float_failure(target, case, x, got, want, failure)


# -- the checks -----------------------------------------------------------------------


Judge = Callable[[Target, Case, np.ndarray, np.ndarray, np.ndarray], "Failure | None"]


def _on_outputs(judge: Judge) -> Check:
    """A check that runs the target on the case and hands ``judge`` the input, the output
    and the exact answer (a failed call is the check's failure)."""
    def check(target: Target, case: Case) -> Failure | None:
        out = _outputs(target, case)
        return out if isinstance(out, Failure) else judge(target, case, *out)

    return check


@_on_outputs
def _integers_check(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                    want: np.ndarray) -> Failure | None:
    failure = _bits_differ(target, x, got, want)
    if failure is not None and case.dtype != x.dtype.name:
        # The widening was exact: the promoted input goes back to the input's type as it was.
        _narrow_first(target, x.astype(as_dtype(case.dtype)), got, failure)
    return failure


def _narrow_first(target: Target, x: np.ndarray, got: np.ndarray, failure: Failure) -> None:
    """Names the cause of a wrong promoted sum or product of ``x`` (the input, in its own
    type) whose every output is the scan in that type (wrapping; in bool a logical or or
    and), widened afterwards."""
    spec = target.spec
    ufunc = {"add": np.add, "mul": np.multiply}.get(spec.op)
    if ufunc is None or not x.size:
        return
    with np.errstate(over="ignore"):
        narrow = ufunc.accumulate(x, dtype=x.dtype)
    if not spec.inclusive:
        narrow = shifted(narrow, spec.op == "mul")  # the identity: 1 or 0
    if np.array_equal(narrow.astype(got.dtype), got):
        kept = {"add": "a logical or", "mul": "a logical and"}[spec.op] if x.dtype == np.bool_ \
            else f"wrapping modulo 2**{8 * x.dtype.itemsize}"
        failure.diagnosis += (f"; every output is the scan in {x.dtype.name} ({kept}), widened "
                              f"to {got.dtype.name} after: the promotion must come before the "
                              f"first {spec.op}")


def _float_check(criterion: Callable[[Target, np.ndarray, np.ndarray, np.ndarray], Failure | None]
                 ) -> Check:
    @_on_outputs
    def check(target: Target, case: Case, x: np.ndarray, got: np.ndarray, want: np.ndarray
              ) -> Failure | None:
        if target.spec.op != "add":  # max and min round nothing: exact, bit for bit
            return _bits_differ(target, x, got, want)
        failure = criterion(target, x, got, want)
        return failure and _float_failure(target, case, x, got, want, failure)

    return check


@_on_outputs
def _specials_check(target: Target, case: Case, x: np.ndarray, got: np.ndarray,
                    want: np.ndarray) -> Failure | None:
    # Finite outputs are judged elsewhere; here only where NaN and infinities must be.
    special = ~np.isfinite(want) | ~np.isfinite(got)
    ok = ~special | (np.isnan(got) & np.isnan(want)) | (got == want)
    if target.spec.op == "add":  # an overflow some summation order makes is rounding
        inc = target.spec.inclusive
        ok |= classify(x, got, sequential_depths(x.shape[0], inc), inclusive=inc, exact=want,
                       flush=_flushes(target, x.dtype)).verdicts == Verdict.OVERFLOWED
    spec = target.spec
    rule = ("NaN or infinity not propagated as IEEE arithmetic says" if spec.op == "add" else
            f"NaN not handled as the spec declares (nans={spec.nans!r}: {NAN_RULES[spec.nans]})")
    failure = _first_bad(target, ok, got, want, rule, Cause.SPECIALS)
    if failure is None or "never written" in failure.diagnosis:
        return failure
    twin = np.where(np.isfinite(x), x, 1).astype(x.dtype)
    twin_got, twin_bad = _run(target, twin)
    wrong = twin_bad or _judge(target, case, twin, twin_got)
    if wrong is not None:
        wrong.diagnosis = (f"{wrong.diagnosis} (the same input with its NaNs and infinities "
                           f"replaced by 1; here it shows as a wrong NaN or infinity)")
        return wrong
    failure.independent = True
    return failure


def _determinism_check(target: Target, case: Case) -> Failure | None:
    x = case.data(target.spec.op)
    first, bad = _run(target, x)
    if bad is not None:
        return bad
    for _ in range(3):
        again = target(x)
        differ = _first_bad(target, same_bits(again, first), again, first,
                            "bits differ between runs on the same input, every run within the "
                            "rounding bound (an order of combines that varies, or a race)",
                            Cause.NONDETERMINISM)
        if differ is None:
            continue
        judged = [_judge(target, case, x, out) if is_float(x.dtype) else None
                  for out in (first, again)]
        wrong = next((w for w in judged if w is not None), None)
        if wrong is None:
            differ.independent = True
            return differ
        if None in judged:
            # Wrong in one run of an input and right in another: no loss of precision comes
            # and goes like that, whatever the probe runs happened to see.
            wrong.cause = Cause.LOGIC
        wrong.diagnosis += "; and the bits differ between runs (a race?)"
        return wrong
    return None


def _recurrence_check(target: Target, case: Case) -> Failure | None:
    ran = _ran(target, case)  # not _outputs: a long case's enclosure is computed once, here
    if isinstance(ran, Failure):
        return ran
    x, got = ran
    text = "recurrence y_n = a_n*y_{n-1} + b_n not solved"
    cause = ": operand order of the non-commutative pair, or a logic error"
    if not is_float(x.dtype) or x.shape[0] <= RATIONAL_RECURRENCE_MAX:
        want = _exact(target, x)  # exact rationals (or wrapping integers)
        if not is_float(x.dtype):
            return _first_bad(target, same_bits(got, want), got, want, text + cause)
        lo = hi = want[:, 1].astype(np.float64)
        # An upper bound, rounded upward in order: rationals here cost as much as want's
        # (subnormal pairs' denominators run to 2**1074).
        mags = recurrence_magnitudes(x)
        if not target.spec.inclusive:
            mags = np.r_[0.0, mags[:-1]]
    else:  # rigorous enclosures [lo, hi] of y_k, computed once for the case
        lo, hi, mags = _recurrence_reference(x, target.spec.inclusive)
        want = _exact(target, x, (lo, hi))
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

    failure = _first_bad(target, within(_flushes(target, x.dtype)), got, want, text)
    if failure is None or "never written" in failure.diagnosis:
        return failure  # never written: the fill's own words
    failure = _flush_attributed(target, x, failure, within(True), within(False),
                                _new_subnormals(x, got))
    if "subnormals" not in failure.detail:
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


def _recurrence_reference(x: np.ndarray, inclusive: bool
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Enclosures of y_k, (lo, hi), and an upper bound on the magnitudes' recurrence, per
    output of a long float recurrence scan (exclusive: shifted, y_{-1} = 0 first)."""
    lo, hi = recurrence_enclosure(x)
    mags = recurrence_magnitudes(x)
    if inclusive:
        return lo, hi, mags
    return tuple(np.r_[0.0, a[:-1]] for a in (lo, hi, mags))  # type: ignore[return-value]


# -- products, log-sum-exp and indices: rules of their own ------------------------------


def _judged(target: Target, case: Case, judge: Callable[[np.ndarray, np.ndarray, bool], Judgement]
            ) -> Failure | tuple[np.ndarray, Judgement, Failure | None]:
    """The case's input, ``judge``'s judgement of the target's output on it, and the first
    output it rejects as a failure named by its rule (None if none); or the failed call."""
    ran = _ran(target, case)
    if isinstance(ran, Failure):
        return ran
    x, got = ran
    inc = target.spec.inclusive
    judged = judge(x, got, inc, flush=_flushes(target, x.dtype))
    first = np.flatnonzero(~judged.ok)
    failure = None if not first.size else _first_bad(
        target, judged.ok, got, judged.reference.astype(got.dtype), str(judged.reason[first[0]]))
    if failure is not None and "never written" not in failure.diagnosis:
        # A product's judge relaxes under flush only where some range of the prefix
        # multiplies to below the smallest normal number: that is its evidence.
        failure = _flush_attributed(target, x, failure, judge(x, got, inc, flush=True).ok,
                                    judge(x, got, inc, flush=False).ok, _new_subnormals(x, got),
                                    underflow=judge is judge_products)
    return x, judged, failure


def _products_check(target: Target, case: Case) -> Failure | None:
    out = _judged(target, case, judge_products)
    if isinstance(out, Failure):
        return out
    x, judged, failure = out
    if failure is None or "subnormals" in failure.detail or not (
            "bound" in failure.diagnosis or "exactness certificate" in failure.diagnosis):
        return failure  # specials, signs, never written, or flushing
    k = failure.index
    inc = target.spec.inclusive
    if "bound" in failure.diagnosis:
        failure.diagnosis += f" ({judged.error[k] / judged.bound[k]:.3g}x the bound)"
    if not judged.error[k] < 0.5:  # a zero, an infinity or a factor 1.5: no rounding does that
        return failure
    # Factors +-1, +-2 and +-1/2 multiply exactly in every order while in range: a scan
    # wrong on them has no rounding to blame.
    for seed in (case.seed, case.seed + 1, case.seed + 2):
        rng = np.random.default_rng(seed)
        xs = rng.choice(np.array([1.0, -1.0, 2.0, -2.0, 0.5, -0.5]), case.n,
                        p=[0.4, 0.4, 0.05, 0.05, 0.05, 0.05]).astype(x.dtype)
        got_s, bad = _run(target, xs)
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


def _logsumexp_check(target: Target, case: Case) -> Failure | None:
    out = _judged(target, case, judge_logsumexp)
    if isinstance(out, Failure):
        return out
    x, judged, failure = out
    if failure is None or "never written" in failure.diagnosis or "subnormals" in failure.detail:
        return failure
    k = failure.index
    if "bound" in failure.diagnosis:
        err = judged.error[k]
        failure.diagnosis += f" ({err / judged.bound[k]:.3g}x the bound, off by {err:.3g})"
        if err < 0.5:  # a factor e**0.5 in the sum: no term lost or counted twice
            failure.cause = Cause.PRECISION
            failure.diagnosis += "; no term is missing or counted twice"
        else:
            failure.diagnosis += "; a term missing or counted twice, not rounding"
    elif "+inf where" in failure.diagnosis:
        failure.cause = Cause.PRECISION
        failure.diagnosis += (": some intermediate leaves the float range (exp taken before "
                              "the running maximum is subtracted?)")
    elif not np.isfinite(x).all():
        failure.cause = Cause.SPECIALS
    return failure


def _indices_check(target: Target, case: Case) -> Failure | None:
    spec = target.spec
    x = case.data(spec.op)
    out, refused = _called(target, x)
    if refused is not None:
        return refused
    wrong = _indices_shape_failure(x, out)
    if wrong:
        return Failure(Cause.LOGIC, wrong)
    values, idx = out
    flush = _flushes(target, x.dtype)
    ok_i, ok_v, want_v, want_i = _indices_agree(spec, x, values, idx, flush)
    failure = _first_bad(target, ok_i, idx, want_i,
                         f"an index other than the last position of the running {spec.op} "
                         f"(ties and NaNs go to the later index)")
    if failure is not None:
        k = failure.index
        failure.detail = {"value": _short(x[k]), "x at the index returned":
                          _short(x[idx[k]]) if 0 <= idx[k] < x.shape[0] else "out of range"}
    else:
        failure = _first_bad(target, ok_v, values, want_v,
                             f"values other than the running {spec.op} (each is x at its index)")
    if failure is None or not is_float(x.dtype):
        return failure
    # The witness is the value: an index is no subnormal.
    shown = replace(failure, got=values[failure.index], expected=want_v[failure.index])
    verdicts = [np.logical_and(*_indices_agree(spec, x, values, idx, f)[:2]) for f in (True, False)]
    told = _flush_attributed(target, x, shown, *verdicts, _new_subnormals(x, values),
                             some=_indices_some(spec, x, values, idx))
    failure.cause, failure.diagnosis = told.cause, told.diagnosis
    return failure


def _indices_some(spec: TargetSpec, x: np.ndarray, values: np.ndarray, idx: np.ndarray
                  ) -> np.ndarray:
    """Per output of a cummax or cummin: whether it names the index before it or its own,
    an input tied with the running extreme of the inputs read as zero, and returns that
    input or its zero (what a scan that flushes some subnormals and keeps others returns)."""
    m = x.shape[-1]
    inside = (idx == np.arange(m)) | (idx == shifted(idx, -1))
    at = np.clip(idx, 0, max(m - 1, 0))
    picked = np.take_along_axis(x, at, axis=-1) if x.size else x
    want_v = arg_extreme_scan(read_as_zero(x), spec.op)[0]
    zeroed = read_as_zero(picked)

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return same_bits(a.ravel(), b.ravel()).reshape(a.shape)

    with np.errstate(invalid="ignore"):
        tied = same(zeroed, want_v) | ((zeroed == 0) & (want_v == 0))
    return inside & tied & (same(values, picked) | same(values, zeroed))


def _indices_agree(spec: TargetSpec, x: np.ndarray, values: np.ndarray, idx: np.ndarray,
                   flush: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per output of a cummax or cummin of ``x`` along its last axis: whether the index and
    whether the value are right, and the values and indices due.  With ``flush`` the indices
    are those of the inputs read as zero (a subnormal ties with the zeros), and a value may
    be the input at its index or that input read as zero (FLUSH_RULES, "exact")."""
    want_v, want_i = arg_extreme_scan(read_as_zero(x) if flush else x, spec.op)
    ok_i = idx == want_i

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return same_bits(a.ravel(), b.ravel()).reshape(a.shape)

    ok_v = same(values, want_v)
    if flush:
        at = np.clip(want_i, 0, max(x.shape[-1] - 1, 0))
        ok_v |= same(values, np.take_along_axis(x, at, axis=-1) if x.size else x)
    return ok_i, ok_v, want_v, want_i


def _indices_shape_failure(x: np.ndarray, out: Any) -> str | None:
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


def _judge_of(spec: TargetSpec, dtype: np.dtype) -> Callable[..., Judgement] | None:
    """The judge of a float product or log-sum-exp scan (None where the answer is exact)."""
    if not is_float(dtype):
        return None
    return {"mul": judge_products, "logaddexp": judge_logsumexp}.get(spec.op)


Told = Callable[[int, int], tuple[str, Any, Any]]


def _row_verdicts(target: Target, xs: np.ndarray, gs: Any) -> tuple[np.ndarray, Told]:
    """For rows ``xs`` (2-D, each scanned along the last axis) and the target's rows ``gs``
    (a pair of them for indices): which outputs are wrong, and for one of them why, what
    came back and what was due."""
    spec = target.spec
    flush = _flushes(target, xs.dtype)
    if spec.indices:
        values, idx = gs
        ok_i, ok_v, want_v, want_i = _indices_agree(spec, xs, values, idx, flush)
        wrong_i = ~ok_i
        bad = wrong_i | ~ok_v
        return bad, lambda r, k: (
            (f"an index other than the last position of the running {spec.op} (ties and NaNs "
             f"go to the later index)", idx[r, k], want_i[r, k]) if wrong_i[r, k] else
            (f"values other than the running {spec.op}", values[r, k], want_v[r, k]))
    judge = _judge_of(spec, xs.dtype)
    if judge is not None:
        judged = judge(xs, gs, spec.inclusive, flush=flush)
        return ~judged.ok, lambda r, k: (str(judged.reason[r, k]), gs[r, k],
                                         judged.reference[r, k])
    if spec.op in ("max", "min") and is_float(xs.dtype):
        ok, ws = _extreme_agree(spec, xs, gs, flush)
        bad = ~ok
    else:
        kw = dict(zeros=spec.zeros, nans=spec.nans) if spec.op in ("max", "min") else {}
        ws = exact_scan_axis(xs, spec.op, -1, spec.inclusive, **kw)
        bad = ~_agree(target, xs, gs, ws)
    if not (bad.any() and spec.op == "add" and is_float(xs.dtype)):
        return bad, lambda r, k: ("differs from its exact scan", gs[r, k], ws[r, k])
    inc = spec.inclusive
    wrong_certified = certified(xs, inc, flush, rows=True) & (gs != ws)
    rep = classify(xs, gs, sequential_depths(xs.shape[-1], inc), inc, exact=ws, flush=flush,
                   rows=True)
    return wrong_certified | (rep.verdicts == Verdict.BEYOND_BOUND), lambda r, k: (
        "differs from the exact sum where every summation order is exact (the exactness "
        "certificate)" if wrong_certified[r, k] else
        "beyond the rounding bound of any summation order", gs[r, k], ws[r, k])


def _rows_check(target: Target, case: Case, data_seed: int | None = None) -> Failure | None:
    """Every row of a batched input (a shape, layout and axis drawn from the case) against
    the exact scan of that row, by the criteria of the 1-D properties, all rows at once."""
    spec = target.spec
    b = batch(case, fixed_axis=spec.axis if isinstance(spec.axis, int) else None,
              data_seed=data_seed)
    at = b.describe()
    try:
        got = target(b.x, b.axis)
    except Exception as exc:
        if b.x.size or isinstance(exc, NotAnArray):  # the latter: an answer, not a refusal
            raise
        return Failure(Cause.LOGIC, f"raised {type(exc).__name__} on a zero-size input of shape "
                       f"{b.x.shape} ({str(exc)[:120]}); its scan is an empty array", at=at)
    out = spec.output_dtype(b.x.dtype)
    wrong = _indices_shape_failure(b.x, got) if spec.indices else (
        None if got.shape == b.x.shape and got.dtype.name == out else
        f"returned shape {got.shape} dtype {got.dtype} for shape {b.x.shape} dtype "
        f"{b.x.dtype} (expected dtype {out})")
    if wrong:
        return Failure(Cause.LOGIC, wrong, at=at)
    x = _promoted(target, b.x)
    if x.size == 0:
        return None
    moved = np.moveaxis(x, b.axis, -1)
    m = moved.shape[-1]

    def rows(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(a, b.axis, -1)).reshape(x.size // m, m)

    xs = rows(x)
    bad, told = _row_verdicts(target, xs, tuple(rows(v) for v in got) if spec.indices
                              else rows(got))
    if not bad.any():
        return None
    r, k = (int(v) for v in np.argwhere(bad)[0])
    row = [int(i) for i in np.unravel_index(r, moved.shape[:-1])]
    why, shown, wanted = told(r, k)
    failure = Failure(Cause.LOGIC, f"row {row} (of shape {list(x.shape)}, axis {b.axis}, "
                      f"{b.layout} layout): {why}", k, shown, wanted, at={**at, "row": row})
    if is_float(x.dtype) and "never written" not in failure.diagnosis:
        # The same rows judged under the other subnormal rule: flushing, declared or not.
        flushing = _flushes(target, x.dtype)
        flipped = replace(target, spec=replace(spec, subnormals="keep" if flushing else "flush"))
        gs = tuple(rows(v) for v in got) if spec.indices else rows(got)
        bad_other = _row_verdicts(flipped, xs, gs)[0]
        ok_flush, ok_keep = (~bad, ~bad_other) if flushing else (~bad_other, ~bad)
        some = None
        if spec.op in ("max", "min"):
            some = _indices_some(spec, xs, *gs) if spec.indices else _extreme_some(spec, xs, gs)
        fresh = _new_subnormals(xs, gs[0] if spec.indices else gs)
        failure = _flush_attributed(target, xs[r], failure, ok_flush, ok_keep, fresh,
                                    underflow=_judge_of(spec, x.dtype) is judge_products,
                                    some=some)
        if "subnormals" in failure.detail:
            return failure
    if spec.op == "add" and is_float(x.dtype):
        return _rows_attribution(target, case, failure)
    if _judge_of(spec, x.dtype) is not None and (
            "bound" in failure.diagnosis or "exactness certificate" in failure.diagnosis):
        return _row_alone(target, xs[r], failure)
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


def _rows_attribution(target: Target, case: Case, failure: Failure) -> Failure:
    """A logic error if the same shape, layout and axis on 'steps' data (every sum of
    adjacent elements in [-3, 3]) fail too, else precision lost."""
    if case.distribution == "steps":
        return failure
    steps = replace(case, distribution="steps")
    probe = next((p for s in range(3) if (p := _rows_check(target, steps, case.seed + s))), None)
    if probe is not None:
        failure.cause = Cause.LOGIC
        failure.diagnosis += (f"; wrong also on 'steps' data of the same shape and layout "
                              f"(row {probe.at.get('row')}), so no rounding explains it")
    else:
        failure.cause = Cause.PRECISION
        failure.diagnosis += ("; right on 'steps' data of the same shape and layout: precision "
                              "lost, not a logic error")
    return failure


ORDERED = ("add", "max", "min")
TABLE: dict[str, Property] = {p.name: p for p in (
    Property("integers exact", _integers_check, (*INT_DTYPES, "bool"),
             ("integers", "uniform", "steps"), (*ORDERED, "mul")),
    Property("certified exact", _float_check(_certificate_failure), FLOAT_DTYPES,
             ("dyadic", "integers"), ("add",)),
    Property("floats within bound", _float_check(_bound_failure), FLOAT_DTYPES,
             ("integers", "uniform", "wide", "cancellation", "dyadic", "overflow", "zeros",
              "subnormal"), ORDERED),
    Property("nan and inf", _specials_check, FLOAT_DTYPES, ("specials",), ORDERED),
    Property("deterministic", _determinism_check, FLOAT_DTYPES, ("uniform", "cancellation"),
             ORDERED),
    Property("recurrence", _recurrence_check, DTYPES, ("uniform", "subnormal"), ("recurrence",)),
    Property("rows", _rows_check, INPUT_DTYPES, ("integers", "uniform", "dyadic", "specials",
                                           "factors", "steps", "subnormal"),
             (*ORDERED, "mul", "logaddexp"), batched=True),
    Property("products within bound", _products_check, FLOAT_DTYPES,
             ("factors", "specials", "powers"), ("mul",)),
    Property("logsumexp within bound", _logsumexp_check, FLOAT_DTYPES,
             ("uniform", "integers", "wide", "cancellation", "specials", "subnormal"),
             ("logaddexp",)),
    Property("indices", _indices_check, INPUT_DTYPES,
             ("steps", "zeros", "specials", "integers", "subnormal"), ("max", "min")),
)}
PROPERTIES: tuple[str, ...] = tuple(TABLE)


def bound_summary(target: Target, dtypes: tuple[str, ...]) -> dict[str, Any]:
    """The worst error as a fraction of its bound, per float dtype, of a passing product or
    log-sum-exp scan at n = 4096 (factors near 1; uniform data in [-1, 1))."""
    op = target.spec.op
    out: dict[str, Any] = {}
    for dt in dtypes:
        x = Case(4096, dt, "factors" if op == "mul" else "uniform", 1).data(op)
        got = target(x)
        judged = (judge_products if op == "mul" else judge_logsumexp)(x, got, target.spec.inclusive)
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
        x = _promoted(target, x)
        want = _exact(target, x)
        if n == min(4096, top):
            ulps = classify(x, got, sequential_depths(n, inc), inclusive=inc, exact=want).max_ulps
            out.update({"max ulps": ulps, **_bound_fractions(x, got, want, inc)})
        # The last output: the deepest, where orders part most.
        curve.append([n, *_bound_fractions(x, got, want, inc, n - 1).values()])
    out["error/bound by n"] = curve
    return out


#: The type whose accumulation (then one rounding) gives correctly rounded prefixes of the
#: probes below, for each float type it is told for.
ACCUMULATION_PROBE: dict[str, tuple[str, int]] = {  # dtype: (wider type, values below)
    "float16": ("float32", 64), "bfloat16": ("float32", 64), "float32": ("float64", 1024)}


def _sum_probe(target: Target, dtype: str, p: int, below: int) -> np.ndarray:
    """Integers below ``below`` (exact in the type), n of them passing 2**p after a few
    hundred at most and staying below half the largest value (float16's is 65504)."""
    n = min(max(4096, 2 ** (p + 6) // below), int(float(finfo(dtype).max) / below),
            target.spec.max_n or 2**30)
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


def accumulation_precision(target: Target, dtype: str) -> dict[str, Any]:
    """Whether a float16, bfloat16 or float32 add or product scan accumulates in a wider type
    (float32, float32, float64), proved on data whose every partial result (of adjacent
    elements) is exact in the wider type but whose prefixes pass 2**p: integer-valued data
    for sums, factors 3/4 and 3/2 for products.  There the wider accumulation is
    exact in any order and one rounding at the end gives the correctly rounded prefix at
    every output, so any other result rounded some partial results to fewer bits.  With how
    far the target is from that, and from a sequential scan in the type itself."""
    wider, below = ACCUMULATION_PROBE[dtype]
    op, inc = target.spec.op, target.spec.inclusive
    p = SIGNIFICAND_BITS[dtype]
    if op == "add":
        x = _sum_probe(target, dtype, p, below)
        want = exact_scan(x, inclusive=inc)
        n = x.shape[0]
        if float(np.max(want, initial=0)) < 2.0**p:  # every order is exact: nothing to tell
            return {f"accumulation {dtype}": f"undetermined: the {n} outputs a target of max_n "
                                             f"{target.spec.max_n} allows stay below 2**{p}"}
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
    partial = "sums" if op == "add" else "products"
    return {f"accumulation {dtype}": f"{wider} or wider (all {n} outputs correctly rounded)"
            if not off else f"some partial {partial} rounded to {dtype} ({off} of {n} outputs "
                            f"not correctly rounded)",
            f"max err {dtype} (ulps)": float(err.max()),
            f"max err {dtype}, sequential in {dtype} (ulps)": float(err_seq.max())}


def applies(prop: Property, spec: TargetSpec) -> str | None:
    """Why ``prop`` does not apply to a target with this spec (None if it does)."""
    if spec.op not in prop.ops:
        return f"not applicable to operator {spec.op!r}"
    if not any(d in spec.dtypes for d in prop.dtypes):
        return f"no dtype of {prop.dtypes} is declared"
    if prop.batched and spec.axis is None:
        return "the target scans 1-D arrays (its spec has no axis)"
    if spec.indices and prop.name not in ("indices", "rows"):
        return "the target returns (values, indices): 'indices' and 'rows' check both"
    if prop.name == "indices" and not spec.indices:
        return "the target returns no indices (its spec has indices=False)"
    return None
