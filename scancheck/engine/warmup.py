"""A target called on every input its properties' ladders will hand it, ahead of the checks.

XLA compiles a JAX scan once per (shape, dtype), and each property of a check walks a
ladder of some 24 shapes: on a fresh H100 a test of ``jax.lax.associative_scan`` spent
about 28 of its 30 s compiling.  With JAX's compilation cache on disk, :func:`warm` run
once per machine, before the tests, compiles each shape once, in parallel threads (XLA
compiles outside the GIL); the tests that walk the same ladders then load the programs.
Nothing here judges an answer: a call that raises is passed over (the check will meet it).

The GPU suite runs its warm step beside its tests: it lists its jobs by target in a folder
named by ``SCANCHECK_WARMING`` and marks each as it ends, and a test of such a target waits
for them (:func:`wait_warmed`) rather than compile what they are compiling.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..targets.resolve import resolve
from ..targets.target import Target, forward, seeded
from .cases import Budget, Case, ladder
from .conformance import check_property
from .layouts import batch
from .properties import TABLE, applies, passing_probes


def ladder_calls(target: Target, max_n: int) -> dict[tuple, tuple[int, Callable[[], Any]]]:
    """(dtype, shape[, axis]) -> (elements, call) for each distinct input that the ladders of
    ``target``'s properties reach up to ``max_n``, one dtype at a time as the GPU suite
    splits them, and the probes a passing property runs after them; the target as
    :func:`~scancheck.engine.conformance.check_property` sees it (a reverse scan forward,
    one from an initial value seeded)."""
    target = seeded(forward(target))
    spec = target.spec
    calls: dict[tuple, tuple[int, Callable[[], Any]]] = {}
    for prop, row in TABLE.items():
        if applies(row, spec):
            continue
        top = Budget(max_n=max_n).top(spec.device, row.max_n, spec.max_n,
                                      row.cap(spec) if row.cap else None)
        for dtype in (d for d in row.dtypes if d in spec.dtypes):
            for case in ladder((dtype,), row.data_for(spec.op), top, spec.allows_empty):
                if prop == "rows":
                    b = batch(case, fixed_axis=spec.axis if isinstance(spec.axis, int) else None,
                              ranks=spec.ndim)
                    key: tuple = (dtype, b.x.shape, b.axis)
                    calls.setdefault(key, (b.x.size, _call(target, b.x, b.axis)))
                else:
                    calls.setdefault((dtype, (case.n,)), (case.n, _lazy(target, case, spec.op)))
            for dt, probe in passing_probes(target, prop, (dtype,), top):
                calls.setdefault((dtype, "probe", prop, dt), (top, probe))
    return calls


def _call(target: Target, x: Any, axis: int) -> Callable[[], Any]:
    return lambda: target(x, axis)


def _lazy(target: Target, case: Case, op: str) -> Callable[[], Any]:
    return lambda: target(case.data(op))


def warm(name: str, max_n: int, dtypes: tuple[str, ...] | None = None, threads: int = 4,
         part: int = 0, parts: int = 1) -> int:
    """Call the built-in or importable target ``name`` once on each input of
    :func:`ladder_calls` (of ``dtypes`` alone, where given; of every ``parts``-th from the
    ``part``-th, largest first, where the work is shared among processes), ``threads`` at a
    time, largest first; the number of calls."""
    target = resolve(name)
    if target.unavailable:
        return 0
    if dtypes is not None:
        target = replace(target, spec=replace(target.spec, dtypes=tuple(dtypes)))
    calls = sorted(ladder_calls(target, max_n).values(), key=lambda c: -c[0])[part::parts]

    def run(call: Callable[[], Any]) -> None:
        with contextlib.suppress(Exception):
            call()

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, (call for _, call in calls)))
    return len(calls)


def warm_check(name: str, prop: str, max_n: int) -> str:
    """Run property ``prop`` of the target ``name`` up to ``max_n`` with next to no search past
    its ladder, so that a library that compiles per combine or kernel specialisation into a
    cache on disk (Inductor, Triton) has compiled what the check meets; the status (unjudged)."""
    target = resolve(name)
    if target.unavailable:
        return "unavailable"
    return check_property(target, prop, Budget(1e-9, max_examples=1, max_n=max_n)).status


#: The variable naming the folder of a warm step running beside the tests.
WARMING_ENV = "SCANCHECK_WARMING"
#: The longest a test waits for a warm step's jobs (the step's own deadline).
WARMING_WAIT = 300.0


def plan_warming(folder: Path, jobs: dict[str, dict[str, list[str]]]) -> None:
    """Start ``folder`` for a warm step whose jobs are ``jobs`` (target -> dtype -> job ids)."""
    (folder / "done").mkdir(parents=True, exist_ok=True)
    (folder / "plan.json").write_text(json.dumps(jobs))


def job_ended(folder: Path, job: str) -> None:
    """Mark job ``job`` of the warm step in ``folder`` ended, whatever its outcome."""
    (folder / "done" / job).touch()


def warming_over(folder: Path) -> None:
    """Mark the whole warm step in ``folder`` ended: no test waits on it any more."""
    (folder / "over").touch()


def wait_warmed(name: str, dtype: str | None = None, timeout: float = WARMING_WAIT) -> float:
    """Where a warm step runs beside the tests (``SCANCHECK_WARMING``), wait until its jobs for
    target ``name`` (for ``dtype`` alone, where given) have ended, so that the test loads what
    they compiled instead of compiling it again; the seconds waited (0 where none is planned).
    Never longer than ``timeout``: a job that hangs leaves the test to compile what it meets."""
    where = os.environ.get(WARMING_ENV)
    if not where:
        return 0.0
    folder = Path(where)
    try:
        plan = json.loads((folder / "plan.json").read_text())
    except (OSError, ValueError):
        return 0.0
    by_dtype = plan.get(name, {})
    jobs = [j for d, ids in by_dtype.items() if dtype is None or d == dtype for j in ids]
    if not jobs:
        return 0.0
    start = time.monotonic()
    while jobs and not (folder / "over").exists() and time.monotonic() - start < timeout:
        jobs = [j for j in jobs if not (folder / "done" / j).exists()]
        if jobs:
            time.sleep(0.1)
    waited = time.monotonic() - start
    if waited >= 0.05:
        with contextlib.suppress(OSError), open(folder / "waited", "a") as fh:
            fh.write(f"{waited:.2f}\t{name}\t{dtype or '-'}\n")
    return waited
