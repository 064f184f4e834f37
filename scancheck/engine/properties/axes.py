"""A target that raises on a negative axis: told as that, not as a fault of the case.

Rows and the N-D probe monoids hand a target of any axis a negative one half the time (as
NumPy, CuPy, torch and JAX document them).  Where the target raises, the same call with the
axis counted from the front tells whether the negative number alone was refused: JAX's
``lax.associative_scan(..., reverse=True, axis=-1)`` raised so (``lax.rev`` before the
axis is normalised; docs/findings.md).  The answer that call gives is judged as the case's,
so that a wrong answer is not hidden behind the refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ...targets.target import InputWritten, NotAnArray, Target, raised_by_target
from ..diagnosis import Cause, Reason, is_resource_error
from .base import Failure


@dataclass
class Refusal:
    """A negative axis refused: the fault that names it, in short, the axis counted from
    the front, and the target's answer along that one."""

    failure: Failure
    words: str
    front: int
    answer: Any

    def told(self, judged: Failure | None) -> Failure:
        """The case's failure: the front answer's own with the refusal named beside it, or
        the refusal where that answer is right."""
        if judged is None:
            return self.failure
        judged.diagnosis += f"; it also refuses a negative axis ({self.words})"
        return judged


def negative_axis_refused(call: Callable[[int], Any], axis: int, shape: tuple[int, ...],
                          exc: Exception, at: dict[str, Any]) -> Refusal | None:
    """The refusal of the negative ``axis`` where ``call(axis)`` raised ``exc`` and the same
    axis counted from the front is taken without raising; None where the axis was not
    negative, the exception is no refusal of the target's own, or both calls raise."""
    if (axis >= 0 or not raised_by_target(exc) or is_resource_error(exc)
            or isinstance(exc, (NotAnArray, InputWritten))):
        return None
    front = axis % len(shape)
    try:
        answer = call(front)
    except Exception:  # noqa: BLE001 - raising on both axes is the case's own fault
        return None
    words = (f"raised {type(exc).__name__} on axis {axis}, and took the same axis counted "
             f"from the front ({front})")
    failure = Failure(Cause.FAULT, f"raised {type(exc).__name__} ({str(exc)[:160]}) on axis "
                      f"{axis} of an input of shape {list(shape)}, and took the same axis "
                      f"counted from the front ({front}): it refuses a negative axis",
                      detail={"refused axis": axis}, at=dict(at), reason=Reason.REFUSED_AXIS)
    return Refusal(failure, words, front, answer)


def front_axes(target: Target) -> Target:
    """``target`` to be handed each axis counted from the front: what a property's search
    goes on with once the target refused a negative one, so that the refusal hides no wrong
    answer a larger case would show."""
    return replace(target, front_axes=True)
