"""``deterministic``: the same bits on every run, and a logic error where one of two
differing runs is wrong (a race)."""

from __future__ import annotations

from ...core.arrays import same_bits
from ...core.dtypes import is_float
from ...targets.target import Target
from ..cases import Case
from ..diagnosis import INTERMITTENT, Cause, Reason
from .base import Failure
from .running import first_bad, run
from .values import judge_output


def determinism_check(target: Target, case: Case) -> Failure | None:
    """``deterministic``: the same bits on a second run; differing runs of which one is
    wrong are a logic error (a race).  Only sums and order scans are judged here: another
    operator's differing runs are reported as such, its own property judges its answers."""
    x = case.data(target.spec.op)
    first, bad = run(target, x)
    if bad is not None:
        return bad
    within = ("every run what the spec allows (equal zeros racing, say)"
              if target.spec.family == "order" else "every run within the rounding bound "
              "(an order of combines that varies, or a race)")
    for _ in range(3):
        again = target(x)
        differ = first_bad(target, same_bits(again, first), again, first,
                            f"bits differ between runs on the same input, {within}",
                            Cause.NONDETERMINISM, Reason.NONDETERMINISTIC)
        if differ is None:
            continue
        if target.spec.family not in ("sum", "order"):
            differ.independent = True
            return differ
        runs = (first, again)
        judged = [judge_output(target, case, x, out, attribute=False) if is_float(x.dtype)
                  else None for out in runs]
        wrong = next((i for i, w in enumerate(judged) if w is not None), None)
        if wrong is None:
            differ.independent = True
            return differ
        if None in judged:
            # Wrong in one run of an input and right in another: no loss of precision comes
            # and goes like that, so no attribution to precision is tried (its probe runs
            # would see whichever runs they happened to get).
            failure = judged[wrong]
            failure.cause = Cause.LOGIC
            failure.diagnosis += f"; right in another run of the same input: {INTERMITTENT}"
            return failure
        failure = judge_output(target, case, x, runs[wrong]) or judged[wrong]
        failure.diagnosis += "; and the bits differ between runs (a race?)"
        return failure
    return None
