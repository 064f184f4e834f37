"""Conformance of any scan implementation: a verdict per property and one diagnosis.

Each property (:mod:`scancheck.engine.properties`) searches for its smallest failing case within a
time :class:`~scancheck.engine.cases.Budget`, over sizes spread log-uniformly up to 2**24 for GPU
targets and 2**20 for CPU ones (:mod:`scancheck.engine.cases`); the checks past 2**31 and 2**32
elements are in :mod:`scancheck.engine.large`; the verdicts combine into one root cause
(:mod:`scancheck.engine.diagnosis`).  :func:`check` runs in this process;
:func:`~scancheck.engine.isolation.check_isolated` runs the target in child processes, under
compute-sanitizer too, so that a fault or a hang is a verdict and the session goes on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .cases import Budget, Case, search, smallest_failing
from .diagnosis import Cause, Diagnosis, PropertyResult, diagnose
from .large import BATCH_CHECKS, LARGE_SIZES, check_batch, check_large
from .properties import (
    ACCUMULATION_PROBE,
    PROPERTIES,
    TABLE,
    Failure,
    accumulation_precision,
    applies,
    bound_summary,
    float_summary,
)
from .spec import TargetSpec
from .targets import InputWritten, NotAnArray, Target, forward, seeded

__all__ = ["LARGE", "PROPERTIES", "Budget", "ConformanceReport", "PropertyResult", "check",
           "check_property"]

#: The checks past 2**31 and 2**32 elements, by name: 1-D, then batched.
LARGE: tuple[str, ...] = (*LARGE_SIZES, *BATCH_CHECKS)


@dataclass
class ConformanceReport:
    """Every property's verdict for one target, and the one diagnosis they support."""

    target: str
    spec: dict[str, Any]
    results: list[PropertyResult]
    seconds: float = 0.0
    #: Seconds spent loading and compiling the target before any property ran.
    prepare_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(r.status in ("pass", "skip") for r in self.results)

    @property
    def verdict(self) -> Diagnosis:
        return diagnose(self.results)

    @property
    def diagnosis(self) -> str:
        """One line: the primary cause and its smallest case (empty when nothing fails)."""
        return self.verdict.line

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
        parts = [f"compile {self.prepare_seconds:.1f} s"] if self.prepare_seconds else []
        for phase, rs in phases.items():
            each = ", ".join(f"{r.name.removeprefix('sanitizer: ')} {r.seconds:.1f}" for r in rs)
            parts.append(f"{phase} {sum(r.seconds for r in rs):.1f} s ({each})")
        return f"time: {'; '.join(parts)}; wall {self.seconds:.1f} s"

    def rows(self) -> list[dict[str, object]]:
        verdict = self.verdict
        out = []
        for r in self.results:
            case = r.smallest_case or {}
            where = ", ".join(f"{k}={v}" for k, v in case.items() if k != "x")
            text = r.diagnosis or _detail(r.detail)
            if r.name in verdict.explained:
                text = f"explained by the {verdict.cause.label}: {text}"
            out.append({"property": r.name, "verdict": r.status, "diagnosis / detail": text,
                        "smallest failing case": where})
        return out

    def to_json(self) -> str:
        d = asdict(self)
        verdict = self.verdict
        d["verdict"] = {"cause": verdict.cause.name if verdict.cause is not None else None,
                        "line": verdict.line, "explained": verdict.explained,
                        "also": verdict.also, "largest n": self.largest_n}
        return json.dumps(d, default=jsonable, indent=1)


def _detail(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items()
                     if not isinstance(v, list))  # curves are the report's plots


def jsonable(v: Any) -> Any:
    """``v`` as JSON can hold it (arrays as lists, NumPy scalars as numbers, the rest as text)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def check_property(target: Target, prop: str, budget: Budget | None = None,
                   on_case: Callable[[int], None] | None = None) -> PropertyResult:
    """Search within ``budget`` for the smallest case on which ``target`` breaks ``prop``
    (``on_case(n)`` is called before each case: a heartbeat for watchdogs).  The target is
    handed copies (:meth:`Target.run`) and judged on its input as it was; one that writes
    into its input fails with that cause, wherever in the property the write shows."""
    try:
        return _check_property(target, prop, budget, on_case)
    except InputWritten as exc:  # outside the search: a summary, a check past 2**31
        size = {"n": exc.shape[0]} if len(exc.shape) == 1 else {"shape": list(exc.shape)}
        return PropertyResult(prop, "fail", exc.told, {**size, "dtype": exc.dtype,
                                                       **_written(exc).where()},
                              cause=Cause.INPUT_WRITTEN.name, independent=True)
    except NotAnArray as exc:  # outside the search: a summary, a check past 2**31
        return PropertyResult(prop, "fail", str(exc), cause=Cause.LOGIC.name)


def _written(exc: InputWritten) -> Failure:
    """The failure of a case on which the target wrote into its input."""
    shape = {"input shape": list(exc.shape)} if len(exc.shape) > 1 else {}
    return Failure(Cause.INPUT_WRITTEN, exc.told, at={**shape, **exc.where()}, independent=True)


def _check_property(target: Target, prop: str, budget: Budget | None,
                    on_case: Callable[[int], None] | None) -> PropertyResult:
    budget = budget or Budget()
    if prop not in TABLE and prop not in LARGE:
        raise ValueError(f"property {prop!r} is unknown; allowed: "
                         f"{', '.join(PROPERTIES + LARGE)}")
    if target.unavailable:
        return PropertyResult(prop, "skip", f"not available here: {target.unavailable}")
    if target.spec.reverse:  # checked as the forward scan it mirrors; indices mapped back
        return _mirrored(check_property(forward(target), prop, budget, on_case))
    if target.spec.initial:  # checked as a plain scan of [initial value, data...]
        return _seeded(check_property(seeded(target), prop, budget, on_case),
                       target.spec.inclusive)
    if prop in LARGE_SIZES:
        return check_large(target, prop, on_case)
    if prop in BATCH_CHECKS:
        return check_batch(target, prop, on_case)
    row = TABLE[prop]
    spec = target.spec
    why = not_applicable(spec, prop)
    if why:
        return PropertyResult(prop, "skip", why)
    dtypes = tuple(d for d in row.dtypes if d in spec.dtypes)
    top = budget.top(spec.device, row.max_n, spec.max_n)

    def check(case: Case):  # noqa: ANN202
        if on_case is not None:
            on_case(case.n)
        try:
            return row.check(target, case)
        except InputWritten as exc:
            return _written(exc)
        except NotAnArray as exc:
            return Failure(Cause.LOGIC, str(exc))

    if prop == "deterministic" and not spec.deterministic:
        seen = check(Case(top, dtypes[0], row.distributions[0], 0))
        return PropertyResult(prop, "skip", "declared non-deterministic" + (
            f"; observed: bits differ between runs at n={top}" if seen else ""))
    # The same target and property share their failures across runs and runners.
    key = f"scancheck\0{target.locator or target.name}\0{prop}".encode()
    found = search(check, dtypes, row.distributions, top, budget, empty=spec.allows_empty, key=key)
    stats = {"largest n": found.largest_n, "cases": found.cases,
             "seconds": round(found.seconds, 1)}
    if found.budget_spent:
        stats["budget spent"] = f"{budget.seconds:g} s"
    if found.failing is None:
        if prop == "floats within bound" and spec.op == "add":
            # The report's curve stops at 2**22: past it each point is seconds of host work.
            stats.update(float_summary(target, dtypes[0], min(top, 2**22)))
        elif prop in ("products within bound", "logsumexp within bound"):
            stats.update(bound_summary(target, dtypes))
        if prop in ("floats within bound", "products within bound") and spec.op in ("add", "mul"):
            for dt in ACCUMULATION_PROBE:
                if dt in dtypes and spec.output_dtype(dt) == dt:
                    stats.update(accumulation_precision(target, dt))
        return PropertyResult(prop, "pass", detail=stats)
    case, failure = found.failing, found.failure
    if case.n > 1:
        seen: dict[int, Any] = {}

        def fails(c: Case) -> bool:
            seen[c.n] = check(c)
            return seen[c.n] is not None

        case = smallest_failing(fails, case)
        failure = seen.get(case.n) or failure  # the found case itself was not checked again
    assert failure is not None
    return PropertyResult(prop, "fail", failure.diagnosis, {**case.describe(), **failure.where()},
                          {**failure.detail, **stats}, cause=failure.cause.name,
                          independent=failure.independent)


def not_applicable(spec: TargetSpec, prop: str) -> str | None:
    """Why ``prop`` checks nothing of a target with ``spec`` (its operator, dtypes, axis or
    indices rule it out), before any case is drawn; None where it applies."""
    return applies(TABLE[prop], spec) if prop in TABLE else None


def _mirrored(result: PropertyResult) -> PropertyResult:
    """A forward view's result told in the reverse scan's own indices (output n-1-k)."""
    case = result.smallest_case
    if case and "index" in case:
        length = case["shape"][case["axis"]] if "shape" in case else case["n"]
        case["index"] = length - 1 - case["index"]
        result.detail["indices"] = "the reverse scan's own (output k combines x[k:])"
    return result


def _seeded(result: PropertyResult, inclusive: bool) -> PropertyResult:
    """A seeded view's result told in the target's own terms: element 0 of a case is the
    initial value, the rest its input."""
    case = result.smallest_case
    if case and "index" in case:
        case["index"] -= inclusive  # the view's output 0 is the initial value itself
    if result.status != "skip":
        result.detail["initial value"] = ("element 0 of each case's data; the target scans "
                                          "the rest")
    return result


def check(target: Target, properties: tuple[str, ...] = PROPERTIES, large: bool = False,
          budget: Budget | None = None) -> ConformanceReport:
    """Check ``target`` in this process against every property (and past 2**31 and 2**32
    elements if ``large``); a property on which the target raises is reported as a fault."""
    t0 = time.time()
    results = []
    for p in tuple(properties) + (LARGE if large else ()):
        start = time.time()
        try:
            results.append(check_property(target, p, budget))
        except Exception as exc:  # a target that raises is a verdict, not a crash of ours
            results.append(PropertyResult(p, "fault", f"{type(exc).__name__}: {str(exc)[:300]}"))
        results[-1].seconds = round(time.time() - start, 2)
    return ConformanceReport(target.name, asdict(target.spec), results, time.time() - t0)
