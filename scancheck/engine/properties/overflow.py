"""Integer overflow as a contract: ``integers exact`` under overflow='wrap' (two's
complement, :func:`~scancheck.engine.properties.values.integers_check`) or 'raise' (checked
arithmetic: the call raises exactly when some output's exact prefix leaves the type, and
returns the exact prefixes otherwise); a target that keeps the other rule is named by it,
with the flag that declares it."""

from __future__ import annotations

import numpy as np

from ...core.arrays import as_dtype
from ...core.dtypes import is_float
from ...core.operators import get_operator, shifted
from ...targets.target import Target, raised_by_target
from ..cases import Case
from ..diagnosis import Cause, Reason, is_resource_error
from .base import Contract, Failure
from .running import bits_differ, exact_answer, promoted, run
from .values import integers_check


def first_overflow(x: np.ndarray, op: str, inclusive: bool, dtype: str) -> int | None:
    """The first output of the ``op`` scan of integers ``x`` whose exact value lies outside
    ``dtype``'s range (None if every one fits), computed in Python integers where int64
    could overflow itself."""
    out = as_dtype(dtype)
    info = np.iinfo(out)
    lo, hi = int(info.min), int(info.max)
    oper = get_operator(op)
    if oper.family == "sum" and x.dtype.itemsize < 8:
        exact = np.cumsum(x.astype(np.int64))
        bad = np.flatnonzero((exact < lo) | (exact > hi))
        k = int(bad[0]) if bad.size else None
    elif oper.family == "sum" and x.dtype == out:
        # The running sum in the type itself, wrapping: up to the first overflow it is the
        # exact prefix, so the first add that wraps is the first prefix outside the range
        # (a Python loop over 2**20 elements took a third of a second).
        with np.errstate(over="ignore"):
            w = np.cumsum(x)
        prev = np.concatenate([np.zeros(1, dtype=out), w[:-1]])
        wrapped = w < prev if info.min == 0 else ((prev ^ w) & (x ^ w)) < 0
        bad = np.flatnonzero(wrapped)
        k = int(bad[0]) if bad.size else None
    else:
        acc, k = int(oper.identity(dtype)), None
        for i, v in enumerate(x.tolist()):
            acc = oper.combine_exact(acc, v)
            if not lo <= acc <= hi:
                k = i
                break
            if acc == 0 and oper.family == "product":
                break  # zero times anything stays zero: no later prefix leaves the range
    if k is None or inclusive:
        return k
    return k + 1 if k + 1 < x.shape[0] else None  # exclusive output k + 1 holds prefix k


def _wrapped(x: np.ndarray, op: str, inclusive: bool) -> np.ndarray:
    """The scan in two's complement (what a target that does not check returns)."""
    ufunc = get_operator(op).ufunc
    with np.errstate(over="ignore"):
        out = ufunc.accumulate(x, dtype=x.dtype)
    return out if inclusive else shifted(out, ufunc.identity)


def integers_checked(target: Target, case: Case) -> Failure | None:
    """``integers exact`` under the target's overflow rule: wrap, as
    :func:`integers_check`, except that an exception exactly where some prefix overflows
    names the checked contract; raise, as the module says."""
    spec = target.spec
    if is_float(case.dtype) or spec.family not in ("sum", "product"):
        return integers_check(target, case)
    x = case.data(spec.op)
    out = spec.output_dtype(x.dtype)
    k = first_overflow(x, spec.op, spec.inclusive, out)
    if spec.overflow == "wrap":
        try:
            return integers_check(target, case)
        except Exception as exc:
            if (k is None or not raised_by_target(exc) or is_resource_error(exc)
                    or _raises_anyway(target, x)):
                raise
            told = f"raised {type(exc).__name__} ({str(exc)[:160]}) where output {k}'s prefix " \
                   f"leaves {out}"
            mixed = _some_prefixes_checked(target, out) if out == x.dtype.name else None
            if mixed:
                return Failure(Cause.LOGIC, f"{told}; {mixed}", k, None, None,
                               reason=Reason.WRAPPED)
            return Failure(Cause.CONTRACT, f"{told}: it checks overflow; declare --overflow "
                           f"raise", k, None, None, {"contract": "--overflow raise"},
                           contract=Contract("checks overflow", "--overflow raise",
                                             (("overflow", "raise"),)), reason=Reason.UNDECLARED)
    failure = _checked(target, x, k, out)
    if failure is not None or out != x.dtype.name:
        return failure
    # Drawn data almost never land a prefix exactly on the type's limits, where a check
    # off by one (> max + 1, >= max) goes wrong: these inputs do, each named in the failure.
    # Each is judged with the cases of its own length, so the smallest case's n is its n.
    for edge in (e for e in limit_inputs(spec.op, out, spec.inclusive) if e.size == x.size):
        failure = _checked(target, edge, first_overflow(edge, spec.op, spec.inclusive, out), out)
        if failure is not None:
            failure.diagnosis += f" (on the input {edge.tolist()}, a prefix at the limits)"
            failure.at["edge input"] = edge.tolist()  # the input judged, not the one drawn
            return failure
    return None


def _raises_anyway(target: Target, x: np.ndarray) -> bool:
    """Whether the target also raises on an input of ``x``'s size and dtype whose every
    element is the operator's identity (no prefix leaves the type): its raise is then no
    overflow check, and no overflow rule describes it."""
    calm = np.full_like(x, get_operator(target.spec.op).identity(x.dtype.name))
    try:
        target(calm)
    except Exception as exc:
        if not raised_by_target(exc):
            raise
        return True
    return False


def limit_inputs(op: str, dtype: str, inclusive: bool) -> list[np.ndarray]:
    """Short inputs of ``dtype`` whose ``op`` prefixes land exactly on its largest and
    smallest values and one past each (an exclusive scan gets one more element, so that
    its last output holds the whole prefix)."""
    info = np.iinfo(as_dtype(dtype))
    lo, hi = int(info.min), int(info.max)
    oper = get_operator(op)
    if oper.family == "sum":
        rows = [[hi], [hi - 1, 1], [hi, 1]]
        rows += [[hi, 1, -1], [lo], [lo + 1, -1], [lo, -1]] if lo else [[hi, hi]]
    else:
        half = 1 << (info.bits // 2)
        rows = [[hi, 1], [half, half // 2], [half, half]] if not lo else [
            [hi, 1], [half, half // 2], [-half, half // 2], [-half, half // 2, -1], [lo, 1]]
    pad = [] if inclusive else [int(oper.identity(dtype))]
    return [np.array(r + pad, dtype=dtype) for r in rows]


def _some_prefixes_checked(target: Target, out: str) -> str | None:
    """Where the target raises on one input whose prefix leaves ``out`` and returns on
    another (of :func:`limit_inputs`), the two told: neither contract describes it, and
    naming either flag would send its user to the other; None where it does one or the
    other on every such input."""
    spec = target.spec
    raised: list[list[int]] = []
    returned: list[list[int]] = []
    for edge in limit_inputs(spec.op, out, spec.inclusive):
        if first_overflow(edge, spec.op, spec.inclusive, out) is None:
            continue
        try:
            target(edge)
        except Exception as exc:
            if not raised_by_target(exc) or is_resource_error(exc):
                raise
            raised.append(edge.tolist())
        else:
            returned.append(edge.tolist())
    if not (raised and returned):
        return None
    return (f"it raised on {raised[0]} and returned on {returned[0]}, each with a prefix that "
            f"leaves {out}: it checks some prefixes only (the total's, say), so neither "
            f"--overflow wrap nor raise describes it")


def _checked(target: Target, x: np.ndarray, k: int | None, out: str) -> Failure | None:
    """One input judged under overflow='raise': ``k`` is its first output whose prefix
    leaves ``out`` (None where none does)."""
    spec = target.spec
    try:
        got, bad = run(target, x)
    except Exception as exc:
        if not raised_by_target(exc) or is_resource_error(exc):
            raise
        if k is not None:
            return None  # checked, as declared
        return Failure(Cause.LOGIC, f"raised {type(exc).__name__} ({str(exc)[:160]}) where no "
                       f"prefix leaves {out} (declared overflow='raise': it must raise "
                       f"exactly when one does)", reason=Reason.WRAPPED)
    if bad is not None:
        return bad
    xs = promoted(target, x)
    if k is None:
        return bits_differ(target, xs, got, exact_answer(target, xs))
    longer = np.concatenate([x, x[-1:]])
    try:
        target(longer)
    except Exception as exc:
        if not raised_by_target(exc):
            raise
        return Failure(Cause.LOGIC, f"returned output {k} although its prefix leaves {out}, "
                       f"and raised {type(exc).__name__} only with one more element: it "
                       f"checks overflow too late", k, got[k], None, reason=Reason.WRAPPED)
    mixed = _some_prefixes_checked(target, out) if out == x.dtype.name else None
    if mixed:
        return Failure(Cause.LOGIC, f"returned output {k}, whose prefix leaves {out}, without "
                       f"raising; {mixed}", k, got[k], None, reason=Reason.WRAPPED)
    if np.array_equal(got, _wrapped(xs, spec.op, spec.inclusive)):
        return Failure(Cause.CONTRACT, f"wraps on overflow (two's complement) where its spec "
                       f"declares overflow='raise' (output {k}'s prefix leaves {out}): declare "
                       f"--overflow wrap", k, got[k], None, {"contract": "--overflow wrap"},
                       contract=Contract("wraps on overflow (two's complement)",
                                         "--overflow wrap", (("overflow", "wrap"),)),
                       reason=Reason.UNDECLARED)
    return Failure(Cause.LOGIC, f"returned output {k}, whose prefix leaves {out}, without "
                   f"raising (declared overflow='raise')", k, got[k], None,
                   reason=Reason.WRAPPED)
