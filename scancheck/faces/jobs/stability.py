"""How stable a diagnosis is: each negative control (and each target) checked ``repeat``
times, each check's search drawing fresh (Hypothesis and the residue sweep seeded from the
operating system's entropy; the ladder's sizes and seeds are fixed, so a bug the ladder
meets comes back with the same case), several at once; per item, how many checks caught it, the distinct
primary diagnoses seen and the smallest failing n of each run (``scancheck check --repeat``).

A control is stable where every run caught it with its expected diagnosis; any item is
stable where every run gave one primary diagnosis, the same one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ...controls import Control
from ...core.counts import is_count
from ...engine.options import CheckOptions
from ..tables import cut_words


@dataclass(frozen=True)
class Item:
    """One thing checked again and again: a negative control, or a target by its locator
    with the spec fields that override its own."""

    name: str
    control: Control | None = None
    overrides: dict[str, Any] | None = None


@dataclass
class Run:
    """One check of an item: whether it was caught as expected (None for a target, which
    has no expected diagnosis), its verdict and primary diagnosis, and its smallest case."""

    name: str
    run: int
    caught: bool | None
    verdict: str
    #: The primary diagnosis, as a key two runs share exactly where they agree: the cause's
    #: label, and the flag of the contract it names where it names one ('' where nothing
    #: failed).
    primary: str
    line: str
    #: The smallest failing n of the primary cause (None where nothing failed).
    n: int | None
    #: Whether no smaller n fails on that case's data (every smaller n checked).
    minimal: bool
    #: The smallest case whole (its seed and distribution reproduce it).
    case: dict[str, Any] | None
    seconds: float
    #: The causes found beside the primary one, each with evidence of its own.
    also: list[str] = field(default_factory=list)
    #: The exit status ``scancheck check`` gives the run's report (0, 1 or 3).
    status: int = 0


@dataclass
class Stability:
    """The runs of one item and what they agree on."""

    name: str
    control: bool
    runs: list[Run] = field(default_factory=list)

    @property
    def caught(self) -> int:
        return sum(bool(r.caught) for r in self.runs)

    @property
    def primaries(self) -> list[str]:
        """Each distinct primary diagnosis seen, in the order first seen."""
        return list(dict.fromkeys(r.primary for r in self.runs))

    @property
    def sizes(self) -> list[int | None]:
        """The smallest failing n of each run, in the runs' order."""
        return [r.n for r in sorted(self.runs, key=lambda r: r.run)]

    @property
    def stable(self) -> bool:
        """One primary diagnosis in every run, and, for a control, caught in every run."""
        return len(self.primaries) == 1 and (not self.control or self.caught == len(self.runs))

    def row(self) -> dict[str, object]:
        sizes = [n for n in self.sizes if n is not None]
        same = len(set(self.sizes)) == 1
        # A target given by its file's path: the file's name and what follows.
        return {"item": self.name.rsplit("/", 1)[-1],
                "caught": f"{self.caught} of {len(self.runs)}" if self.control else "-",
                "primary diagnoses": "\n".join(p or "none" for p in self.primaries),
                "smallest n": ("-" if not sizes else f"{sizes[0]:,} every run" if same else
                               ", ".join("-" if n is None else f"{n:,}" for n in self.sizes)),
                "stable": "yes" if self.stable else "NO"}


def primary_of(rep: Any) -> str:
    """The key of a report's primary diagnosis: its cause's label, and for a contract the
    flag its failure names (two runs told 'declare --nans skip' and 'declare --nans
    propagate' disagree); the verdict word where nothing failed ('conforms', 'slow')."""
    verdict = rep.verdict
    if verdict.cause is None:
        return rep.verdict_word
    source = next((r for r in rep.results if r.name == verdict.source), None)
    contract = (source.detail.get("contract") if source is not None else None) or ""
    return f"{verdict.cause.label} {contract}".strip()


def record(item: Item, run: int, rep: Any, caught: bool | None, seconds: float) -> Run:
    """The :class:`Run` of ``item``'s check ``rep``."""
    verdict = rep.verdict
    case = verdict.smallest_case
    return Run(item.name, run, caught, rep.verdict_word, primary_of(rep),
               rep.summary, None if not case else case.get("n"), verdict.minimal,
               {k: v for k, v in (case or {}).items() if k != "x"} or None, round(seconds, 1),
               list(verdict.also), rep.exit_status)


def check_once(item: Item, run: int, options: CheckOptions) -> Run:
    """One check of ``item`` in child processes, as ``options`` say; a control's budget
    walks every ladder whole, as ``check --controls`` does, and a target's spec takes the
    item's overrides."""
    t0 = time.monotonic()
    if item.control is not None:
        whole = replace(options, budget=replace(options.budget, bounded=False))
        rep, caught = item.control.check(options=whole)
        return record(item, run, rep, caught, time.monotonic() - t0)
    from ...isolation.parent import check_isolated

    rep = check_isolated(item.name, replace(options, overrides=item.overrides))
    return record(item, run, rep, None, time.monotonic() - t0)


def measure(items: Sequence[Item], repeat: int, options: CheckOptions, jobs: int = 1,
            log: str | None = None, said: Callable[[str], None] | None = print,
            check: Callable[[Item, int, CheckOptions], Run] = check_once) -> list[Stability]:
    """Every item checked ``repeat`` times, ``jobs`` checks at once (run by run: the first
    run of every item before any second one); each run as it ends appended to ``log`` as
    one JSON line and told to ``said``.  The stability of each item, in the items' order."""
    if not is_count(repeat):
        raise ValueError(f"repeat={repeat!r} must be a positive integer")
    found = {item.name: Stability(item.name, item.control is not None) for item in items}
    todo = [(item, run) for run in range(repeat) for item in items]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(check, item, run, options) for item, run in todo]
        for done, future in enumerate(as_completed(futures), 1):
            try:
                got = future.result()
            except BaseException:  # an item that cannot be checked: no run waits on it
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            found[got.name].runs.append(got)
            if log is not None:
                with open(log, "a") as fh:
                    fh.write(json.dumps(asdict(got)) + "\n")
            if said is not None:
                mark = "" if got.caught is None else " caught" if got.caught else " MISSED"
                said(cut_words(f"[{done}/{len(todo)}] {got.name} run {got.run + 1} "
                               f"({got.seconds:.0f} s){mark}: {got.line or got.verdict}"))
    return [found[item.name] for item in items]


def select(names: Sequence[str] | None, gpu: bool) -> list[Control]:
    """The controls whose name contains one of ``names`` (every one where None), leaving
    out those needing a GPU where ``gpu`` is false; a ValueError naming each of ``names``
    that matches none."""
    from ...controls import CONTROLS

    runnable = [c for c in CONTROLS if gpu or not c.gpu]
    if not names:
        return runnable
    unmatched = [n for n in names if not any(n in c.name for c in CONTROLS)]
    if unmatched:
        import difflib

        every = [c.name for c in CONTROLS]
        close = list(dict.fromkeys(m for n in unmatched
                                   for m in difflib.get_close_matches(n, every, 3, 0.5)))
        hint = (f"; did you mean {' or '.join(map(repr, close))}?" if close else "")
        raise ValueError(f"argument --only: no control's name contains "
                         f"{', '.join(map(repr, unmatched))}{hint} (docs/reference/"
                         f"diagnoses.md lists all {len(every)}, each with its cause)")
    return [c for c in runnable if any(n in c.name for n in names)]


def table(results: Sequence[Stability], repeat: int) -> tuple[str, int]:
    """The table of every item's stability and a closing line, and the exit status: 1 where
    any control was missed or any item got two primary diagnoses, else the targets' runs'
    statuses ranked as ``scancheck check`` ranks them (:func:`~scancheck.engine.report.
    ranked_exit`)."""
    from ...engine.report import ranked_exit
    from ..tables import fit_columns, format_table

    rows = [s.row() for s in results]
    if not any(s.control for s in results):  # "caught" is a control's alone
        rows = [{k: v for k, v in r.items() if k != "caught"} for r in rows]
    # The diagnoses whole, a line each, since telling them apart is the table's point.
    rows = fit_columns(rows, {"item": 34, "primary diagnoses": 40, "smallest n": 40},
                       wrap=("primary diagnoses",))
    unstable = [s.name for s in results if not s.stable]
    runs = f"{repeat} runs each, the search's draws fresh" if repeat > 1 else "1 run"
    text = format_table(rows, title=f"\nstability over {runs}")
    text += (f"\n{len(results) - len(unstable)} of {len(results)} stable"
             + (f"; not: {', '.join(unstable)}" if unstable else ""))
    targets = {r.status for s in results if not s.control for r in s.runs}
    return text, 1 if unstable else ranked_exit(targets)


def repeated(controls: bool, only: Sequence[str] | None, targets: Sequence[str],
             overrides: dict[str, Any] | None, repeat: int, options: CheckOptions,
             jobs: int = 1, log: str | None = None) -> int:
    """``scancheck check --repeat``: the controls (those ``only`` names, with ``controls``)
    and ``targets`` (each with ``overrides``), each checked ``repeat`` times; the table
    printed, each run written to ``log`` as a JSON line (the file started afresh).  The
    exit status of :func:`table`; a ValueError naming the argument where nothing was named,
    or ``only`` without ``controls``."""
    from ...core.devices import gpu_available

    if only and not controls:
        raise ValueError("argument --only: it selects negative controls; give --controls too")
    items = [Item(c.name, control=c) for c in select(only, gpu_available()[0])] if controls \
        else []
    items += [Item(t, overrides=overrides or None) for t in targets]
    if not items:
        raise ValueError("argument --repeat: name at least one TARGET, or --controls")
    if log is not None:
        open(log, "w").close()
    text, status = table(measure(items, repeat, options, jobs, log), repeat)
    print(text)
    return status
