"""A target's report: every property's verdict, the one diagnosis they support, how far the
check got and where its time went, as a person reads it and as JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .checks import LARGE
from .diagnosis import UNFINISHED, Diagnosis, PropertyResult, Reason, cause_of, diagnose
from .properties import MONOID_DATA


@dataclass
class ConformanceReport:
    """Every property's verdict for one target, and the one diagnosis they support."""

    target: str
    spec: dict[str, Any]
    results: list[PropertyResult]
    seconds: float = 0.0
    #: Seconds spent loading and compiling the target before any property ran.
    prepare_seconds: float = 0.0
    #: The name the target was loaded by, where its shown name is none (a kernel at another
    #: block, ``kernel:kogge_stone:128:max``): what a report's script resolves.
    locator: str | None = None

    @property
    def checked_nothing(self) -> bool:
        """No property ran: none was named, or none named applies to the target."""
        return all(r.status == "skip" for r in self.results)

    @property
    def passed(self) -> bool:
        """Some property checked, every one to the top of its sizes, and none failed."""
        return not self.checked_nothing and all(r.status in ("pass", "skip")
                                                for r in self.results)

    @property
    def failed(self) -> bool:
        """Some property found the target wrong (or faulting)."""
        return not (self.passed or self.checked_nothing or self.unfinished)

    @property
    def unfinished(self) -> list[PropertyResult]:
        """The properties whose budget ran out before the top of their sizes, where none
        failed (empty where one did: the failure is the verdict)."""
        if any(r.status not in ("pass", "skip", *UNFINISHED) for r in self.results):
            return []
        return [r for r in self.results if r.status in UNFINISHED]

    @property
    def reached(self) -> int:
        """The n up to which every property that claims anything was checked (the largest n
        where all finished); a property scancheck's own error ended claims nothing and is
        told apart, not counted as checked up to 0."""
        left = [r for r in self.unfinished if r.why != Reason.OWN_ERROR]
        return min(int(r.detail.get("largest n", 0)) for r in left) if left else self.largest_n

    @property
    def verdict_word(self) -> str:
        """"conforms", "slow" (the budget ran out, the target's own calls taking most of
        it), "partial" (it ran out on checking the answers), "nothing checked" (no property
        applies) or "DOES NOT CONFORM"."""
        if self.passed:
            return "conforms"
        if self.checked_nothing:
            return "nothing checked"
        left = self.unfinished
        if not left:
            return "DOES NOT CONFORM"
        return "slow" if any(r.status == "slow" for r in left) else "partial"

    @property
    def exit_status(self) -> int:
        """The command line's status for it: 0 where the target conforms, 1 where it fails, 2
        where no property was checked, 3 where the budget ran out first with no failure found
        (neither a pass nor a failure: nothing past the n reached was checked)."""
        return 0 if self.passed else 2 if self.checked_nothing else 3 if self.unfinished else 1

    @property
    def summary(self) -> str:
        """One line: the diagnosis of a failure, how far an unfinished check got, or why no
        property was checked."""
        if self.checked_nothing:
            why = "; ".join(f"{r.name}: {r.diagnosis}" for r in self.results)
            return f"no property applies ({why})" if why else "no property was named"
        left = self.unfinished
        if not left:
            return self.diagnosis
        taken = [r for r in left if r.why == Reason.MEMORY_TAKEN]
        ours = [r for r in left if r.why == Reason.OWN_ERROR]
        slow = [r for r in left if r.timeout is not None]
        short = [r for r in left if r.why not in (Reason.MEMORY_TAKEN, Reason.OWN_ERROR)
                 and r.timeout is None]
        told = [f"out of memory in {', '.join(r.name for r in taken)} from n = "
                f"{min(r.detail['largest n'] for r in taken) + 1:,}, "
                f"{taken[0].detail['memory taken']}"] if taken else []
        told += [f"in '{r.name}' {r.diagnosis}" for r in ours]
        # One slow call told whole (the smallest n): the others' are the same story.
        if slow:
            first = min(slow, key=lambda r: r.detail.get("timed out at n", 0))
            others = f" (and {len(slow) - 1} other properties)" if len(slow) > 1 else ""
            told.append(f"in '{first.name}'{others} {first.diagnosis}")
        if short:
            told.append(f"the budget ran out before the top in "
                        f"{', '.join(r.name for r in short)}: give --budget more seconds, or "
                        f"--max-n {self.reached} for a verdict there")
        if not ours:
            return f"no failure up to n = {self.reached:,}; " + "; ".join(told)
        if all(r.why == Reason.OWN_ERROR or r.status == "skip" for r in self.results):
            return "; ".join(told)
        return f"no failure up to n = {self.reached:,} in the other properties; " + "; ".join(told)

    @property
    def verdict(self) -> Diagnosis:
        return diagnose(self.results)

    @property
    def diagnosis(self) -> str:
        """One line: the primary cause and its smallest case (empty when nothing fails)."""
        return self.verdict.line

    @property
    def notes(self) -> list[str]:
        """What the passing properties found beside the verdict, each once, whole."""
        return list(dict.fromkeys(note for r in self.results for note in r.notes))

    @property
    def largest_n(self) -> int:
        """The largest n any property actually checked."""
        return max([int(r.detail.get("largest n", r.detail.get("n", 0)) or 0)
                    for r in self.results] + [0])

    def time_spent(self) -> str:
        """One line: where the wall time went, by phase and by property (children run side
        by side, so the parts may add up to more than the whole)."""
        phases: dict[str, list[PropertyResult]] = {}
        for r in self.results:
            if r.status == "skip" and not r.seconds:
                continue
            phase = ("sanitizers" if r.name.startswith("sanitizer:") else
                     "checks past 2**31" if r.name in LARGE else "properties")
            phases.setdefault(phase, []).append(r)
        parts = [f"loading the target {self.prepare_seconds:.1f} s"] if self.prepare_seconds else []
        for phase, rs in phases.items():
            each = ", ".join(f"{r.name.removeprefix('sanitizer: ')} {r.seconds:.1f}" for r in rs)
            parts.append(f"{phase} {sum(r.seconds for r in rs):.1f} s ({each})")
        uncharged = sum(r.uncharged for r in self.results)
        if uncharged >= 0.1:
            parts.append(f"first calls of a kind beyond the second, not charged to the "
                         f"budget (a compile or a warm-up, as a JIT's) {uncharged:.1f} s")
        return f"time: {'; '.join(parts)}; wall {self.seconds:.1f} s"

    def rows(self) -> list[dict[str, object]]:
        """One row per property, and one more for each earlier failure that moved its
        search (an empty input, an exception, memory), in the order they were found."""
        verdict = self.verdict
        out = []
        for r in self.results:
            for f in (*r.more, r):
                where = case_text(f.smallest_case)
                text = f.diagnosis or _detail(f.detail)
                by = next((g for g in verdict.findings
                           if f.name in g.explained and g.cause != cause_of(f)), None)
                if by is not None:
                    text = f"explained by the {by.cause.label}: {text}"
                out.append({"property": f.name, "verdict": f.status,
                            "diagnosis / detail": text, "smallest failing case": where})
        return out

    def to_json(self) -> str:
        """Every property's result whole (earlier failures under ``more``), and the verdict:
        its primary cause, and each distinct cause once with the properties it explains."""
        d = asdict(self)
        verdict = self.verdict
        d["verdict"] = {"word": self.verdict_word, "reached": self.reached,
                        "cause": verdict.cause.name if verdict.cause is not None else None,
                        "line": verdict.line, "explained": verdict.explained,
                        "also": verdict.also, "largest n": self.largest_n,
                        "notes": self.notes,
                        "reason": verdict.findings[0].reason if verdict.findings else None,
                        "findings": [{"cause": f.cause.name, "reason": f.reason,
                                      "line": f.line, "source": f.source,
                                      "smallest case": f.smallest_case,
                                      "properties": f.properties, "explains": f.explained}
                                     for f in verdict.findings]}
        return json.dumps(strict_json(d), default=jsonable, indent=1, allow_nan=False)



def ranked_exit(statuses: Iterable[int]) -> int:
    """One exit status for several checks' (:attr:`ConformanceReport.exit_status`): a failure
    (1) outranks nothing checked (2), which outranks an unfinished check (3), which
    outranks conforming (0)."""
    seen = set(statuses)
    return 1 if 1 in seen else 2 if 2 in seen else max(seen, default=0)


def case_text(case: dict[str, Any] | None) -> str:
    """A smallest case as ``key=value, ...`` (n, dtype, data, seed, and where and what it
    got); the input and a segment description whole are a reproducer's, not a line's, and a
    monoid's case has no dtype of its own (its leaves have theirs)."""
    case = case or {}
    hidden = ("x", "description", *(("dtype",) if case.get("data") in MONOID_DATA else ()))
    return ", ".join(f"{k}={v}" for k, v in case.items() if k not in hidden)


def _detail(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items()
                     if not isinstance(v, list))  # curves are the report's plots



def strict_json(v: Any) -> Any:
    """``v`` with every infinity and NaN as the text "inf", "-inf" or "nan" (arrays and NumPy
    scalars first as lists and numbers): standard JSON has no such numbers, and parsers
    other than Python's refuse the Infinity and NaN that ``json`` writes by default."""
    if isinstance(v, np.ndarray | np.generic):
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else "inf" if v > 0 else "-inf"
    if isinstance(v, dict):
        return {k: strict_json(e) for k, e in v.items()}
    if isinstance(v, list | tuple):
        return [strict_json(e) for e in v]
    return v


def jsonable(v: Any) -> Any:
    """``v`` as JSON can hold it (arrays as lists, NumPy scalars as numbers, the rest as text)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return str(v)
