"""Rewording every message changes no verdict: the negative controls whose diagnosis turns
on what a failure shows (beyond a bound or the certificate, never written, subnormals, an
overflow, a NaN rule, a declared accumulator, a refused axis, an empty input, a failure
that moves the search) get the same statuses, causes and reasons, property by property,
when every message is replaced by a hash of itself, and a property that decided by its
message's words would not."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

import pytest

from scancheck.controls import CONTROLS
from scancheck.engine.cases import Budget, Case
from scancheck.engine.conformance import check, check_property
from scancheck.engine.diagnosis import Cause, PropertyResult, Reason
from scancheck.engine.properties import TABLE, Failure, Property
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target

#: Each control, and the properties whose attribution of it reads what its failures show.
REWORDED = {
    "product carried in 8 bits": ("products within bound",),
    "cumprod with two bugs: carry in 8 bits, a zero absorbing infinities":
        ("products within bound", "nan and inf"),
    "logcumsumexp through exp": ("logsumexp within bound",),
    "cumprod reading subnormals as zero": ("products within bound",),
    "recurrence reading subnormals as zero": ("recurrence",),
    "subnormal inputs read as zero": ("floats within bound",),
    "block totals carried in float16": ("certified exact", "floats within bound"),
    "sum started from the smallest normal": ("floats within bound",),
    "overflow guard set too low": ("floats within bound",),
    "sum compensated past infinity": ("floats within bound", "nan and inf"),
    "NaN-dropping max": ("nan and inf",),
    "float32 sum declaring float64 accumulation": ("floats within bound",),
    "float32 rows declaring float64 accumulation (N-D)": ("rows",),
    "cumprod carried across rows (N-D)": ("rows",),
    "N-D scan refusing a negative axis": ("rows",),
    "empty input refused, wrong from n = 100": ("integers exact",),
    "segmented (T, H) scan reading its input as C-contiguous": ("segments",),
}
CHOSEN = [c for c in CONTROLS if c.name in REWORDED]


def _hashed(text: str) -> str:
    """``text`` reworded beyond recognition: a hash of it, in no word of any message."""
    return "#" + hashlib.blake2b(str(text).encode(), digest_size=6).hexdigest()


def _reword(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, every message a failure or a property's result is given is reworded
    as it is set (an appended one too)."""
    for cls in (Failure, PropertyResult):
        def setattr_hashed(self, name, value, _base=cls.__setattr__):
            _base(self, name, _hashed(value) if name == "diagnosis" else value)

        monkeypatch.setattr(cls, "__setattr__", setattr_hashed)


def _outcome(results: list[PropertyResult]) -> list[tuple[str, str, str, str]]:
    """What a check decided, property by property, earlier failures first: no words."""
    return [(r.name, r.status, r.cause, r.reason) for p in results for r in (*p.more, p)]


def _checked(control, budget: Budget):
    """The control's check, and what it decided (no words)."""
    rep = check(resolve(control.locator, control.spec), REWORDED[control.name],
                budget=replace(budget, max_n=control.reach))
    verdict = rep.verdict
    return rep, (_outcome(rep.results), verdict.cause,
                 [(f.cause, f.reason, f.properties, f.explained) for f in verdict.findings])


def test_every_control_chosen_is_one():
    assert len(CHOSEN) == len(REWORDED)


@pytest.mark.slow
@pytest.mark.parametrize("control", CHOSEN, ids=[c.name for c in CHOSEN])
def test_a_reworded_message_changes_no_verdict(control, budget, monkeypatch, tmp_path):
    # Failures the first check finds are replayed first by the second (an example database
    # of the test's own): a search's draws differ from run to run, its replays do not.  A
    # second a property lets the first check find what the control shows every time.
    monkeypatch.setenv("SCANCHECK_HYPOTHESIS_DB", str(tmp_path / "examples"))
    budget = replace(budget, seconds=max(budget.seconds, 1.0))
    _, first = _checked(control, budget)
    assert first[1] == control.cause, first
    _reword(monkeypatch)
    rep, again = _checked(control, budget)
    assert again == first
    # Reworded indeed: every failure's message is a hash.
    failing = [r for p in rep.results for r in (*p.more, p) if r.status in ("fail", "fault")]
    assert failing and all(r.diagnosis.startswith("#") for r in failing)


def _wrong_by_far(x):
    import numpy as np

    return np.cumsum(x) * 2


def _text_decided(target: Target, case: Case) -> Failure | None:
    """A property that decides by its message's words: what a reworded check must catch."""
    got, want = target(case.data("add")), case.data("add").cumsum()
    if (got == want).all():
        return None
    failure = Failure(Cause.LOGIC, "beyond the rounding bound", reason=Reason.BEYOND_BOUND)
    if "bound" in failure.diagnosis:
        failure.cause = Cause.PRECISION
    return failure


def test_a_property_deciding_by_words_is_caught_by_rewording(monkeypatch):
    """The negative control of the test above: the same comparison, on a property that
    reads its message, tells the two checks apart."""
    monkeypatch.setitem(TABLE, "decided by words", Property(
        "decided by words", _text_decided, ("int64",), ("integers",), ("add",)))
    target = Target("doubled", _wrong_by_far, TargetSpec(dtypes=("int64",)))
    budget = Budget(2.0, max_n=64)
    first = _outcome([check_property(target, "decided by words", budget)])
    _reword(monkeypatch)
    again = _outcome([check_property(target, "decided by words", budget)])
    assert first[0][2] == "PRECISION" and again[0][2] == "LOGIC"
    assert again != first


#: A decision by a message's or a detail's words, as the engine's code would spell it.
_BY_WORDS = re.compile(r"""["'][^"']*["']\s+(not\s+)?in\s+\w+(\.\w+)*\.(diagnosis|detail)\b"""
                       r"""|\.diagnosis\.(startswith|endswith)\(""")


def test_no_decision_in_the_engine_reads_a_message():
    """No ``"..." in failure.diagnosis`` or ``"..." in result.detail`` anywhere in the
    engine: what a failure shows is its Reason."""
    root = Path(__file__).resolve().parents[2] / "scancheck" / "engine"
    found = [f"{p.relative_to(root)}:{i}: {line.strip()}"
             for p in sorted(root.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if _BY_WORDS.search(line)]
    assert not found, found
