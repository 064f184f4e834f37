"""``scancheck hunt``: every built-in library target this machine can run, checked at its
declared contract, one table of every API and mode with its verdict (conforms, known
upstream with its link, new finding, or cannot run here and why), and for every failure no
known bug explains a standalone plain-library reproducer, written and run once.

The GPU part (``--part gpu``: the targets that need a GPU) and the CPU part (``--part
cpu``) run on their own machines; ``--merge`` joins their JSON into the one table
(docs/conformance-matrix.md).
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: What a table cell says of a target.
CONFORMS, KNOWN, KNOWN_HERE, NEW, CANNOT, UNFINISHED, NOT_CHECKED = (
    "conforms", "known upstream", "known finding", "new finding", "cannot run here",
    "no failure found", "not checked")


@dataclass
class Found:
    """One target's line of the table: its API and mode, the verdict, what explains it
    (a known bug's link, a new finding's diagnosis, why it cannot run), the largest n
    checked, the seconds taken, and a new finding's reproducer and what it printed last."""

    target: str
    api: str
    mode: str
    part: str
    verdict: str
    detail: str = ""
    largest_n: int = 0
    seconds: float = 0.0
    reproducer: str = ""
    reproduced: str = ""
    #: The installed versions of the libraries its row calls ("torch 2.9.1, triton 3.5.1"),
    #: where it was checked.
    versions: str = ""


@functools.cache
def _holders() -> Mapping[str, list[str]]:
    """Which installed distributions hold each top-level module: read once a process (it
    walks every installed distribution's files)."""
    import importlib.metadata as md

    return md.packages_distributions()


def library_versions(row: Any) -> str:
    """The distributions, with their installed versions, that hold the modules ``row``
    needs and its API's module, as a line; "" where none is installed."""
    import importlib.metadata as md

    holders = _holders()
    seen: list[str] = []
    for module in (*row.needs, row.api.split(".")[0]):
        seen += [d for d in holders.get(module.split(".")[0], ())[:1] if d not in seen]
    return ", ".join(f"{d} {md.version(d)}" for d in seen)


def _rows(part: str, only: str | None) -> list[Any]:
    """The library rows of ``part`` ("cpu": those that need no GPU, "gpu": those that do and
    those that run on a GPU where one is found, "all"), scancheck's own kernels and models
    left out (the GPU suite checks them)."""
    from ...adapters import all_rows

    rows = [r for r in all_rows() if not r.api.startswith("scancheck")]
    if part == "cpu":
        rows = [r for r in rows if not r.gpu]
    elif part == "gpu":
        rows = [r for r in rows if r.runs_on_gpu]
    if only:
        rows = [r for r in rows if re.search(only, r.name)]
        if not rows:  # a hunt of nothing is a typo, not a clean result
            raise ValueError(f"argument --only: no target of part {part!r} matches {only!r}; "
                             f"'scancheck check --help' lists the built-in targets")
    return rows


def _compiles_first(row: Any) -> int:
    """Where ``row``'s check starts in a hunt: compiled targets, then jitted, then the rest."""
    return {"compiled": 0, "jit": 1}.get(dict(row.mode).get("execution"), 2)


def _mode(row: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in row.mode if k != "api") or "-"


def hunt(part: str, out: Path, jobs: int, budget: float, only: str | None = None,
         timeout: float = 60.0, log: Any = print, max_n: int | None = None) -> list[Found]:
    """Check every library target of ``part`` that can run here, ``jobs`` at once, each
    within ``budget`` seconds and to ``max_n`` at most (None: its device's default; no
    sanitizer, no check past 2**31); write each new finding's reproducer under ``out`` and
    run it once; return the table's lines."""
    from ...adapters import known_for
    from ...adapters.known import explain, unexplained, unseen
    from ...engine.cases import Budget
    from ...engine.options import CheckOptions
    from ...isolation.parent import UsageError, check_isolated

    out.mkdir(parents=True, exist_ok=True)
    rows = _rows(part, only)
    found: list[Found] = []
    todo = []
    for row in rows:
        why = row.unavailable()
        if why:
            found.append(Found(row.name, row.api, _mode(row), part, CANNOT, why))
        else:
            todo.append(row)

    # The budget bounds each target's whole check, shared among its properties, as
    # `scancheck check --budget` does: given to each property, a check of k properties would
    # take k times it.
    options = CheckOptions(budget=Budget(budget, max_n=max_n, bounded=True), seconds=budget,
                           timeout=timeout, large=False, sanitize=(), workers=1)

    def check(row: Any) -> Found:
        start = time.monotonic()
        line = Found(row.name, row.api, _mode(row), part, CONFORMS,
                     versions=library_versions(row))
        try:
            rep = check_isolated(row.name, options)
        except UsageError as exc:
            line.verdict, line.detail = CANNOT, str(exc)
            return line
        line.largest_n, line.seconds = rep.reached, round(time.monotonic() - start, 1)
        bugs = known_for(row.name)
        known = explain(rep, bugs)
        new = unexplained(rep, bugs)
        if new:
            line.verdict, line.detail = NEW, rep.diagnosis or new[0].diagnosis
            line.reproducer = write_reproducer(rep, row, out)
            line.reproduced = (run_reproducer(Path(line.reproducer)) if line.reproducer
                               else NO_CALL if row.call is None else NO_CASE)
        elif known:
            line.verdict = KNOWN if any(b.link for b, _ in known) else KNOWN_HERE
            line.detail = "; ".join(f"{b.told} ({hit.name})" for b, hit in known)
        elif rep.unfinished or rep.checked_nothing:
            line.verdict, line.detail = UNFINISHED, rep.summary
        gone = unseen(rep, bugs)
        if gone:
            line.detail = "; ".join([line.detail, *(f"{b.key} did not reproduce: fixed in "
                                                    f"{b.installed()}?" for b in gone)]).strip("; ")
        return line

    order = {r.name: k for k, r in enumerate(rows)}
    pending = {row.name: row for row in todo}

    def save() -> None:
        # After each target: a run cut short keeps what it found, and lists what it did not
        # finish as such.
        cut = [Found(r.name, r.api, _mode(r), part, NOT_CHECKED,
                     "the hunt ended before this target's check did") for r in pending.values()]
        lines = sorted(found + cut, key=lambda f: order[f.target])
        (out / f"hunt-{part}.json").write_text(json.dumps([asdict(f) for f in lines], indent=1))
        (out / f"hunt-{part}.md").write_text(table(lines))

    save()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        # The longest checks first, so that none starts last beside idle workers: a compiled
        # target compiles each dtype (outside its budget), a jitted one each shape.
        futures = {pool.submit(check, row): row for row in sorted(todo, key=_compiles_first)}
        for done, future in enumerate(as_completed(futures), 1):
            line = future.result()
            found.append(line)
            del pending[line.target]
            save()
            log(f"[{done}/{len(todo)}] {line.target}: {line.verdict}"
                + (f" -- {line.detail[:90]}" if line.detail else ""), flush=True)
    return found


#: What a new finding's line says where no reproducer was written, and why.
NO_CALL = ("no reproducer written: the target is no single library call (its adapter in "
           "scancheck/adapters/ shows what it calls)")
NO_CASE = "no reproducer written: the failing case cannot be rebuilt in plain library code"


def write_reproducer(rep: Any, row: Any, out: Path) -> str:
    """Write a standalone reproducer of ``rep``'s primary failure under ``out`` (the
    report's own snippet: the plain library call on the failing input, rebuilt), ending in
    "still reproduces" where the plain call gives the wrong output the check saw; its path,
    or "" where the failure has no input to rebuild or no plain call."""
    from .markdown import reproducer

    if row.call is None:
        return ""
    name = re.sub(r"[^A-Za-z0-9]+", "_", row.name).strip("_")
    path = out / f"repro_{name}.py"
    try:
        snippet = reproducer(rep, out, name)
    except Exception:  # noqa: BLE001 - a case the report cannot rebuild: none written
        return ""
    resolved = f"resolve({row.name!r}).fn(x, seg)"
    if snippet and resolved in snippet:  # a segmented case: the row's plain call instead
        imports, call = row.call
        snippet = snippet.replace("from scancheck.targets.resolve import resolve\n", imports)
        snippet = snippet.replace(resolved, call.replace("AXIS", "0"))
    if not snippet or re.search(r"^\s*(import|from)\s+scancheck", snippet, re.M):
        return ""
    head = (f'"""{row.name}: {rep.diagnosis}\n\nWritten by scancheck hunt; plain '
            f'{row.api.split(" ")[0].split(".")[0]}, no scancheck."""\n\n')
    path.write_text(head + snippet)
    return str(path)


def run_reproducer(path: Path, timeout: float = 300.0) -> str:
    """Run a reproducer once; its last line (or how it ended)."""
    try:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:g} s"
    text = (done.stdout.strip() or done.stderr.strip() or "no output").splitlines()
    if done.returncode == 0 or (done.returncode == 1 and text[-1] == "still reproduces"):
        return text[-1]
    return f"exit {done.returncode}: {text[-1][:200]}"


def table(found: list[Found]) -> str:
    """Every API and mode with its verdict, as Markdown, and the count of each verdict."""
    counts = {v: sum(f.verdict == v for f in found) for v in
              (CONFORMS, UNFINISHED, KNOWN, KNOWN_HERE, NEW, CANNOT, NOT_CHECKED)}
    head = ("| API | mode | target | verdict | detail | largest n | part | versions |\n"
            "|---|---|---|---|---|---|---|---|\n")

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    def detail(f: Found) -> str:
        if not f.reproducer:
            return cell("; ".join(filter(None, (f.detail, f.reproduced))))
        return cell(f"{f.detail}; reproducer {Path(f.reproducer).name}: {f.reproduced}")

    body = "".join(f"| {cell(f.api)} | {cell(f.mode)} | {cell(f.target)} | **{f.verdict}** | "
                   f"{detail(f)} | {f.largest_n:,} | {f.part} | {cell(f.versions)} |\n"
                   for f in found)
    told = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return f"{len(found)} target{'' if len(found) == 1 else 's'}: {told}.\n\n" + head + body


def _part_lines(path: Path) -> list[Found]:
    """The lines of one part's JSON, a ValueError naming ``path`` where it holds none: not
    JSON, or not the list of findings a part writes."""
    try:
        lines = json.loads(path.read_text())
        if not isinstance(lines, list) or not all(isinstance(d, dict) for d in lines):
            raise TypeError("it holds no list of findings (JSON objects)")
        return [Found(**d) for d in lines]
    except (ValueError, TypeError, OSError) as exc:
        raise ValueError(f"argument --merge: {path} is no part's findings (the hunt-PART.json "
                         f"a hunt writes): {exc}") from None


def merge(paths: list[Path]) -> list[Found]:
    """The lines of several parts' JSON joined: each target's line of every part that ran
    it (JAX's run on the CPU and on a GPU), and where none did, one "not checked" (a part's
    run ended first) or else "cannot run here"; a later file's line of a target and part
    replaces an earlier one's (a run again)."""
    by_part: dict[tuple[str, str], Found] = {}
    for path in paths:
        for f in _part_lines(path):
            by_part[f.target, f.part] = f
    lines: dict[str, list[Found]] = {}
    for f in by_part.values():
        lines.setdefault(f.target, []).append(f)
    from ...adapters import all_rows

    order = {r.name: k for k, r in enumerate(all_rows())}
    out = []
    for target in sorted(lines, key=lambda t: order.get(t, len(order))):
        ran = [f for f in lines[target] if f.verdict not in (CANNOT, NOT_CHECKED)]
        ran = ran or [f for f in lines[target] if f.verdict == NOT_CHECKED]
        out += ran or lines[target][:1]
    return out


HUNT_START, HUNT_END = "<!-- hunt: start -->", "<!-- hunt: end -->"
#: What a page the table is written into says of it, where it had no table before.
_SECTION = """## Every library scan API and mode (scancheck hunt)

Written by `scancheck hunt`: the CPU part on a CPU machine with the `libs` extra (and torch
for its CPU rows), the GPU part on a GPU machine, joined with `scancheck hunt --merge
docs/hunt-cpu.json hunt-gpu.json --write docs/conformance-matrix.md` (docs/hunt-cpu.json
keeps the CPU part's lines).  Each built-in library
target, enumerated from its API's modes (`scancheck/adapters/`), checked at its declared
contract within the hunt's budget, with no sanitizer and no check past 2**31.  **known
upstream**: a failure a known bug explains (`scancheck known`); **known finding**: one
reported in docs/findings.md, not upstream; **new finding**: one none explains, with its
standalone reproducer and what it printed last; **no failure found**: the budget ended
first, at the n shown; **cannot run here**: why, on its part's machine; **not checked**: the
part's run ended before this target's check did.  **versions**: the libraries the line
checked, as installed there (blank where that part's JSON does not record them).

"""


def with_table(page: str, text: str) -> str:
    """``page`` with the hunt's table ``text`` between its markers, or, where it has none,
    a section holding it put first after its title."""
    if HUNT_START in page and HUNT_END in page:
        head, rest = page.split(HUNT_START, 1)
        return f"{head}{HUNT_START}\n{text}{HUNT_END}{rest.split(HUNT_END, 1)[1]}"
    section = f"{_SECTION}{HUNT_START}\n{text}{HUNT_END}\n\n"
    if page.startswith("# "):
        title, _, rest = page.partition("\n\n")
        return f"{title}\n\n{section}{rest}"
    return section + page
