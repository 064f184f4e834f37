"""Running a target on a case: its outputs, the answer it owes, and where they differ.

Every property calls the target through :func:`run_case` or :func:`on_outputs` (a call
that raises, returns no array or writes into its input is the failure itself) and
compares with :func:`agree`, which reads the spec's zero order, NaN rule and subnormal rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ...core.arrays import as_dtype, dtype_name, same_bits
from ...core.dtypes import DTYPES, is_float
from ...core.operators import get_operator
from ...oracle.exact import (
    RATIONAL_RECURRENCE_MAX,
    exact_scan,
    recurrence_enclosure,
    recurrence_magnitudes,
)
from ...targets.spec import TargetSpec
from ...targets.target import Target
from ..cases import Case
from ..diagnosis import Cause, Reason
from .base import Check, Contract, Failure
from .extremes import extreme_agree, extreme_answers, extreme_some
from .nan_rules import declared_view
from .subnormals import flush_attributed, flushes, new_subnormals


def run(target: Target, x: np.ndarray) -> tuple[np.ndarray | None, Failure | None]:
    """The target's output on ``x``, or a failure if it returns the wrong shape or dtype.
    An exception it raises, on an empty input too, is the caller's to word
    (:func:`scancheck.engine.conformance.check_property`): where the target gave no answer,
    the search goes on where it does."""
    got = target(x)
    out = target.spec.output_dtype(x.dtype)
    if got.shape != x.shape:
        return None, Failure(Cause.LOGIC, f"returned shape {got.shape} for input of shape "
                             f"{x.shape}" + (f" (and dtype {got.dtype}, not {out})"
                                             if dtype_name(got.dtype) != out else ""),
                             at=returned(got), reason=Reason.SHAPE)
    if dtype_name(got.dtype) != out:
        failure = dtype_failure(target, dtype_name(x.dtype), dtype_name(got.dtype))
        failure.at.update(returned(got))
        return None, failure
    return got, None


def returned(got: np.ndarray) -> dict[str, Any]:
    """A case's record of the shape and dtype an output came back in (a reproducer holds the
    call to them)."""
    return {"returned shape": list(got.shape), "returned dtype": dtype_name(got.dtype)}


def dtype_failure(target: Target, given: str, returned: str) -> Failure:
    """The failure of a target that returns ``returned`` for input of ``given`` where its
    spec says another dtype: a promotion it does not declare is named with its flag."""
    out = target.spec.output_dtype(given)
    if returned in DTYPES and given != returned:
        try:
            spec = replace(target.spec, promote=(*((i, o) for i, o in target.spec.promote
                                                   if i != given), (given, returned)))
        except ValueError:
            spec = None
        if spec is not None and spec.output_dtype(given) == returned:
            flag = f"--promote {given}:{returned}"
            return Failure(Cause.CONTRACT, f"returns {returned} for {given} input: it promotes; "
                           f"declare {flag}, or return {out}", detail={"contract": flag},
                           contract=Contract(f"returns {returned} for {given} input", flag,
                                             (("promote", spec.promote),)),
                           reason=Reason.UNDECLARED)
    return Failure(Cause.LOGIC, f"returned dtype {returned} for input of dtype {given} "
                   f"(its spec says {out})", reason=Reason.SHAPE)


def promoted(target: Target, x: np.ndarray) -> np.ndarray:
    """``x`` in the dtype the target returns for it: the type its exact scan is taken in."""
    out = target.spec.output_dtype(x.dtype)
    return x if out == dtype_name(x.dtype) else x.astype(as_dtype(out))


def first_bad(target: Target, ok: np.ndarray, got: np.ndarray, want: np.ndarray,
               diagnosis: str, cause: Cause = Cause.LOGIC,
               reason: Reason = Reason.WRONG_VALUE) -> Failure | None:
    """A failure (of ``reason``) at the first output where ``ok`` is False (None if there is
    none); an output that still holds the harness's fill bytes is one never written."""
    if ok.all():
        return None
    k = int(np.flatnonzero(~ok)[0])
    fill = target.output_fill
    if fill is not None and (np.atleast_1d(got[k]).view(np.uint8) == fill).all():
        reason = Reason.NEVER_WRITTEN
        diagnosis = (f"output {k} never written (it still holds the 0x{fill:02x} bytes the "
                     f"harness fills outputs with)")
    return Failure(cause, diagnosis, k, got[k], want[k], reason=reason)


def runs_differ(first: Any, second: Any, told: Callable[[int], str], at: dict[str, Any]
                ) -> Failure | None:
    """A non-determinism failure at the first output (in C order, leaf after leaf of a tuple)
    whose bits differ between two runs of one input, ``told(k)`` its words; None where the
    runs agree."""
    firsts, seconds = (first, second) if isinstance(first, tuple) else ((first,), (second,))
    for a, b in zip(firsts, seconds):
        same = same_bits(np.ravel(b), np.ravel(a))
        if not same.all():
            k = int(np.flatnonzero(~same)[0])
            return Failure(Cause.NONDETERMINISM, told(k), k, np.ravel(b)[k], np.ravel(a)[k],
                           at=at, independent=True, reason=Reason.NONDETERMINISTIC)
    return None


def exact_answer(target: Target, x: np.ndarray,
           enclosure: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The exact answer for ``x``: for a GPU target's large float add cases, computed on the
    device (bit for bit the CPU oracle's, a thousand times faster), so that the time budget
    buys cases rather than oracle work.  A float recurrence past the rationals' reach gets
    the midpoint of its enclosure (``enclosure``, if the caller has it), within the
    enclosure's width of the exact answer, and its products by a running product."""
    from ...oracle.exact_device import DEVICE_FROM, FORMATS

    spec = target.spec
    if spec.family == "order":
        if flushes(target, x.dtype):
            return extreme_answers(spec, x, True)[0]
        return exact_scan(x, spec.op, spec.inclusive, zeros=spec.zeros, nans=spec.nans)
    if spec.op == "recurrence" and is_float(x.dtype) and x.shape[0] > RATIONAL_RECURRENCE_MAX:
        lo, hi = enclosure or recurrence_reference(x, spec.inclusive)[:2]
        with np.errstate(over="ignore", under="ignore"):
            products = np.cumprod(x[:, 0].astype(np.float64))
        if not spec.inclusive:
            products = np.r_[1.0, products[:-1]]
        return np.stack([products, lo / 2 + hi / 2], axis=-1).astype(x.dtype)
    if (spec.device == "gpu" and spec.family == "sum" and x.ndim == 1 and x.size >= DEVICE_FROM
            and dtype_name(x.dtype) in FORMATS):
        import cupy as cp

        return exact_scan(cp.asarray(x), spec.op, spec.inclusive).get()
    return exact_scan(x, spec.op, spec.inclusive)


def agree(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per output of a scan of ``x`` (along its last axis): the exact answer ``want`` bit for
    bit (any NaN for a NaN), except that a float max or min is held to its spec's zero order
    and subnormal rule (:func:`extreme_agree`)."""
    if target.spec.family == "order" and is_float(got.dtype):
        return extreme_agree(target.spec, x, got, flushes(target, x.dtype))[0]
    if get_operator(target.spec.op).width == 1:  # rows: per element, not per row
        return same_bits(got.ravel(), want.ravel()).reshape(got.shape)
    return same_bits(got, want)


def run_case(target: Target, case: Case) -> tuple[np.ndarray, np.ndarray] | Failure:
    """The case's input (in the type the target returns) and the target's output, or the
    failure of the call."""
    x = case.data(target.spec.op)
    got, bad = run(target, x)
    if bad is not None:
        return bad
    return declared_view(target, promoted(target, x), got)


def _outputs(target: Target, case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray] | Failure:
    """The case's input, the target's output and the exact answer, or the failure of the call."""
    ran = run_case(target, case)
    return ran if isinstance(ran, Failure) else (*ran, exact_answer(target, ran[0]))


def bits_differ(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray
                 ) -> Failure | None:
    """The first output that differs from the exact answer under the spec's rules, with
    flushing named where it explains the difference."""
    ok = agree(target, x, got, want)
    failure = first_bad(target, ok, got, want, "differs from the exact scan")
    if failure is not None and failure.reason == Reason.WRONG_VALUE:
        _one_output_told(target, x, got, want, ok, failure)
    if failure is not None and target.spec.family == "sum" and got.dtype.kind in "iu":
        return _saturated(target.spec, x, failure)
    if failure is None or target.spec.family != "order" or not is_float(x.dtype):
        return failure
    spec = target.spec
    failure = flush_attributed(target, x, failure, extreme_agree(spec, x, got, True)[0],
                               extreme_agree(spec, x, got, False)[0],
                               new_subnormals(x, got), some=extreme_some(spec, x, got))
    if (spec.zeros == "either" and failure.cause == Cause.LOGIC and failure.got == 0
            and failure.expected == 0):
        failure.diagnosis = (f"a zero of a sign no zero of its prefix has: {failure.got} where "
                             f"each is {failure.expected} (-0 and +0 are equal under "
                             f"zeros='either', but a {spec.op} returns one of its operands)")
    elif (spec.zeros == "ordered" and failure.cause == Cause.LOGIC and failure.got == 0
            and failure.expected == 0):
        failure.diagnosis += (f": {failure.got} where the spec's zero order (zeros='ordered', "
                              f"-0 < +0) gives {failure.expected}")
    return failure


#: Operators whose identity a wrong first output of an exclusive scan may hold in place of
#: its own (0 for a max, say).
_IDENTITIES = ("add", "mul", "max", "min")


def _one_output_told(target: Target, x: np.ndarray, got: np.ndarray, want: np.ndarray,
                     ok: np.ndarray, failure: Failure) -> None:
    """Says what the one wrong output of a 1-D scan holds, where it is one of two slips: an
    exclusive scan's first output (the identity) holding another operator's identity or the
    first input, or an inclusive output leaving out its own input (the exclusive value).
    In scan order, told without its index: a reverse scan is judged as a forward view."""
    spec, k = target.spec, failure.index
    if (x.ndim != 1 or k is None or np.count_nonzero(~ok) != 1 or (target.declared or spec).initial
            or spec.family == "sum" and is_float(x.dtype)):  # judged by its bound
        return
    oper = get_operator(spec.op)
    try:
        own = oper.identity(got.dtype.name)
    except ValueError:
        return
    if not spec.inclusive and k == 0:
        for name in _IDENTITIES:
            try:
                other = get_operator(name).identity(got.dtype.name)
            except ValueError:
                continue
            if name != oper.name and same_bits(got[:1], other.reshape(1))[0]:
                failure.diagnosis += (f": the first output of an exclusive scan is {got[0]}, "
                                      f"the identity of {name}, where {oper.name}'s is {own}")
                return
        if same_bits(got[:1], x[:1].astype(got.dtype))[0]:
            failure.diagnosis += (f": the first output of an exclusive scan is the first "
                                  f"input, {got[0]}, where it holds {oper.name}'s identity, "
                                  f"{own}")
    elif spec.inclusive:
        before = want[k - 1:k] if k else own.reshape(1)
        if same_bits(got[k:k + 1], before)[0]:
            failure.diagnosis += (f": it leaves out its own input, holding the scan of the "
                                  f"inputs before it ({got[k]}); every other output is right")


def _saturated(spec: TargetSpec, x: np.ndarray, failure: Failure) -> Failure:
    """An integer sum's ``failure``, saying so where its output is the type's limit and the
    prefix's sum lies past that limit: a saturating add, where two's complement wraps."""
    k = failure.index
    if x.ndim != 1 or spec.reverse or k is None or failure.got is None:
        return failure
    info = np.iinfo(x.dtype)
    total = int(x[:k + 1 if spec.inclusive else k].astype(object).sum())  # Python's: no wrap
    if (failure.got, total > info.max, total < info.min) in ((info.max, True, False),
                                                             (info.min, False, True)):
        end = "largest" if failure.got == info.max else "smallest"
        failure.diagnosis += (f": {failure.got}, the {end} {x.dtype.name}, where the prefix "
                              f"sums to {total} past it, which wraps (a saturating add?)")
    return failure


Judge = Callable[[Target, Case, np.ndarray, np.ndarray, np.ndarray], "Failure | None"]


def on_outputs(judge: Judge) -> Check:
    """A check that runs the target on the case and hands ``judge`` the input, the output
    and the exact answer (a failed call is the check's failure)."""
    def check(target: Target, case: Case) -> Failure | None:
        out = _outputs(target, case)
        return out if isinstance(out, Failure) else judge(target, case, *out)

    return check


def recurrence_reference(x: np.ndarray, inclusive: bool
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Enclosures of y_k, (lo, hi), and an upper bound on the magnitudes' recurrence, per
    output of a long float recurrence scan (exclusive: shifted, y_{-1} = 0 first)."""
    lo, hi = recurrence_enclosure(x)
    mags = recurrence_magnitudes(x)
    if inclusive:
        return lo, hi, mags
    return tuple(np.r_[0.0, a[:-1]] for a in (lo, hi, mags))  # type: ignore[return-value]
