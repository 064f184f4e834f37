"""Integer overflow as a contract: ``integers exact`` under overflow='wrap' (two's
complement, :func:`~scancheck.engine.properties.values.integers_check`) or 'raise' (checked
arithmetic: the call raises exactly when some output's exact prefix leaves the type, and
returns the exact prefixes otherwise); a target that keeps the other rule is named by it,
with the flag that declares it."""

from __future__ import annotations

import numpy as np

from ...core.arrays import as_dtype
from ...core.operators import is_float, shifted
from ..cases import Case
from ..diagnosis import Cause, is_resource_error
from ..targets import Target, raised_by_target
from .base import Failure
from .running import bits_differ, exact_answer, promoted, run
from .values import integers_check


def first_overflow(x: np.ndarray, op: str, inclusive: bool, dtype: str) -> int | None:
    """The first output of the ``op`` scan of integers ``x`` whose exact value lies outside
    ``dtype``'s range (None if every one fits), computed in Python integers where int64
    could overflow itself."""
    info = np.iinfo(as_dtype(dtype))
    lo, hi = int(info.min), int(info.max)
    if op == "add" and x.dtype.itemsize < 8:
        exact = np.cumsum(x.astype(np.int64))
        bad = np.flatnonzero((exact < lo) | (exact > hi))
        k = int(bad[0]) if bad.size else None
    else:
        acc, k = (0 if op == "add" else 1), None
        for i, v in enumerate(x.tolist()):
            acc = acc + v if op == "add" else acc * v
            if not lo <= acc <= hi:
                k = i
                break
    if k is None or inclusive:
        return k
    return k + 1 if k + 1 < x.shape[0] else None  # exclusive output k + 1 holds prefix k


def _wrapped(x: np.ndarray, op: str, inclusive: bool) -> np.ndarray:
    """The scan in two's complement (what a target that does not check returns)."""
    with np.errstate(over="ignore"):
        out = (np.add if op == "add" else np.multiply).accumulate(x, dtype=x.dtype)
    return out if inclusive else shifted(out, 1 if op == "mul" else 0)


def integers_checked(target: Target, case: Case) -> Failure | None:
    """``integers exact`` under the target's overflow rule: wrap, as
    :func:`integers_check`, except that an exception exactly where some prefix overflows
    names the checked contract; raise, as the module says."""
    spec = target.spec
    if is_float(case.dtype) or spec.op not in ("add", "mul"):
        return integers_check(target, case)
    x = case.data(spec.op)
    out = spec.output_dtype(x.dtype)
    k = first_overflow(x, spec.op, spec.inclusive, out)
    if spec.overflow == "wrap":
        try:
            return integers_check(target, case)
        except Exception as exc:
            if k is None or not raised_by_target(exc) or is_resource_error(exc):
                raise
            return Failure(Cause.CONTRACT, f"raised {type(exc).__name__} ({str(exc)[:160]}) "
                           f"where output {k}'s prefix leaves {out}: it checks overflow; "
                           f"declare --overflow raise", k, None, None,
                           {"contract": "--overflow raise"})
    try:
        got, bad = run(target, x)
    except Exception as exc:
        if not raised_by_target(exc) or is_resource_error(exc):
            raise
        if k is not None:
            return None  # checked, as declared
        return Failure(Cause.LOGIC, f"raised {type(exc).__name__} ({str(exc)[:160]}) where no "
                       f"prefix leaves {out} (declared overflow='raise': it must raise "
                       f"exactly when one does)")
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
                       f"checks overflow too late", k, got[k], None)
    if np.array_equal(got, _wrapped(xs, spec.op, spec.inclusive)):
        return Failure(Cause.CONTRACT, f"wraps on overflow (two's complement) where its spec "
                       f"declares overflow='raise' (output {k}'s prefix leaves {out}): declare "
                       f"--overflow wrap", k, got[k], None, {"contract": "--overflow wrap"})
    return Failure(Cause.LOGIC, f"returned output {k}, whose prefix leaves {out}, without "
                   f"raising (declared overflow='raise')", k, got[k], None)
