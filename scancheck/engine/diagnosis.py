"""One root cause per verdict: the failing properties ranked, the rest explained or listed.

Every failure carries a :class:`Cause`, decided by the evidence of its own case (a float
error that data with tiny partial sums do not show is lost precision; a NaN missing from
an output is a logic error if the same input without its NaNs is wrong too).  The verdict
names the highest-ranked cause -- fault or hang > data race > logic error > precision lost
> NaN/inf semantics > non-determinism > index overflow > writes into its input -- with its
smallest case.  Other failures of the same cause are its evidence; a failure of another
cause is listed beside it only where its own evidence shows that it does not follow from
the primary one.  A write into the input is its own evidence: every answer is judged on the
input as it was, so the write explains no other failure and none but a race explains it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Cause(enum.IntEnum):
    """Why a scan is wrong, ranked: a lower value is the more fundamental cause."""

    FAULT = 1  # the process died or hung, or touched memory it does not own
    RACE = 2
    LOGIC = 3
    PRECISION = 4
    SPECIALS = 5
    NONDETERMINISM = 6
    INDEX_OVERFLOW = 7
    INPUT_WRITTEN = 8  # the target changed the array it was handed

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Cause.FAULT: "fault",
    Cause.RACE: "data race",
    Cause.LOGIC: "logic error",
    Cause.PRECISION: "precision lost",
    Cause.SPECIALS: "NaN/inf semantics broken",
    Cause.NONDETERMINISM: "non-deterministic",
    Cause.INDEX_OVERFLOW: "index overflow",
    Cause.INPUT_WRITTEN: "writes into its input",
}


@dataclass
class PropertyResult:
    """The verdict on one property: pass, fail, skip, fault or hang, why, and where."""

    name: str
    status: str
    diagnosis: str = ""
    smallest_case: dict[str, Any] | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    #: The :class:`Cause` name of a failure ("" where nothing failed).
    cause: str = ""
    #: The failing case's own evidence shows it does not follow from a logic error.
    independent: bool = False
    #: Wall seconds the property took whole: its search, shrinking and report (a sanitizer
    #: tool's run; for a hang or fault, its child's time).
    seconds: float = 0.0


@dataclass
class Diagnosis:
    """The primary cause with its property and smallest case, and how the rest relate to it."""

    cause: Cause | None
    source: str | None = None  # the property that shows it
    text: str = ""
    smallest_case: dict[str, Any] | None = None
    #: Other properties failing with the same cause: more evidence of it.
    same_cause: list[str] = field(default_factory=list)
    #: Failing properties whose failure follows from the primary cause.
    explained: list[str] = field(default_factory=list)
    #: Other causes with evidence of their own, one line each.
    also: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        """One line for a person: the primary cause first, independent ones after it."""
        if self.cause is None:
            return ""
        where = ""
        if self.smallest_case and "n" in self.smallest_case:
            where = f" (smallest case n={self.smallest_case['n']}"
            where += f", index {self.smallest_case['index']})" if "index" in self.smallest_case else ")"
        head = f"{self.cause.label}: {self.text}{where}"
        return "; ".join([head, *(f"also {a}" for a in self.also)])


def cause_of(result: PropertyResult) -> Cause:
    """The cause a property result claims (a fault or hang is always FAULT)."""
    if result.status in ("fault", "hang"):
        return Cause.FAULT
    return Cause[result.cause] if result.cause else Cause.LOGIC


def _smallest_n(result: PropertyResult) -> float:
    case = result.smallest_case or {}
    return case.get("n", float("inf"))


def diagnose(results: list[PropertyResult]) -> Diagnosis:
    """The one diagnosis that explains these property results (``cause`` None if all pass)."""
    failing = [r for r in results if r.status in ("fail", "fault", "hang")]
    if not failing:
        return Diagnosis(None)
    primary = min(failing, key=lambda r: (cause_of(r), _smallest_n(r)))
    top = cause_of(primary)
    text = primary.diagnosis if primary.status == "fail" else (
        f"{primary.status} in '{primary.name}': {primary.diagnosis}")
    out = Diagnosis(top, primary.name, text, primary.smallest_case)
    causes = {cause_of(r) for r in failing}
    for r in failing:
        if r is primary:
            continue
        c = cause_of(r)
        if c == top:
            out.same_cause.append(r.name)
        elif _independent(r, c, top, causes, primary):
            out.also.append(f"{c.label} in '{r.name}': {r.diagnosis}")
        else:
            out.explained.append(r.name)
    return out


#: Sanitizer findings that, like a race, can corrupt any result of the same target: a read
#: past an array's end or of memory never written returns whatever lies there.
_CORRUPTING = ("sanitizer: memcheck", "sanitizer: initcheck")


def _independent(r: PropertyResult, c: Cause, top: Cause, causes: set[Cause],
                 primary: PropertyResult | None = None) -> bool:
    """Whether failure ``r`` (cause ``c``) stands on its own beside the primary cause ``top``."""
    if top == Cause.RACE:
        return False  # a race can corrupt any result
    if primary is not None and primary.name in _CORRUPTING and c != Cause.INPUT_WRITTEN:
        return False
    if c == Cause.INDEX_OVERFLOW:
        # Index overflow only when the logic holds at every smaller scale.
        return Cause.LOGIC not in causes and Cause.RACE not in causes
    if top == Cause.FAULT:
        # A wrong answer from a run that did not fault is not explained by another run's fault.
        return r.status == "fail"
    return bool(r.independent)
