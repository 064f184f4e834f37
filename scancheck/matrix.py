"""The conformance matrix: every library scan installed here, under its operator, checked
at each dtype it declares on its own, with the N-D rows (any axis and layout) beside the
1-D properties.  ``python -m scancheck.matrix`` prints it as Markdown (docs/ keeps the
H100 run's).

A cell is a verdict (conforms, or the cause of its one diagnosis), the worst error seen as
a fraction of its bound (add: of the bound of any summation order at n = 4096; products
and log-sum-exp: at n = 4096 of data near 1; max and min are exact), and for float16,
bfloat16 and float32 sums the accumulation precision proved by
:func:`scancheck.engine.properties.accumulation_precision`.
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context

from .engine.cases import Budget
from .engine.conformance import PROPERTIES, check
from .engine.library import builtin_targets
from .engine.resolve import resolve

#: What each operator is called in the libraries.
SCAN_NAMES = {"add": "cumsum", "mul": "cumprod", "logaddexp": "logcumsumexp",
              "max": "cummax", "min": "cummin"}


@dataclass
class Cell:
    """One library scan at one dtype: the verdict, its figures and its diagnosis."""

    target: str
    op: str
    dtype: str
    verdict: str
    rows: str
    worst: str
    accumulation: str
    diagnosis: str
    largest_n: int
    #: The dtype the scan returns (the input's, unless the target promotes it).
    returns: str = ""


def library_targets() -> list[str]:
    """The built-in library scans available here (scancheck's own kernels and models aside)."""
    # Scans over tuples of arrays have no dtype of their own: the probe monoids drive them.
    return [name for name, t in builtin_targets().items()
            if not t.unavailable and not name.startswith(("scancheck:", "model:"))
            and not t.spec.combine]


def check_cell(name: str, dtype: str, seconds: float) -> Cell:
    """``name`` checked at ``dtype`` alone, every property within ``seconds``."""
    target = resolve(name)
    target = replace(target, spec=replace(target.spec, dtypes=(dtype,)))
    rep = check(target, PROPERTIES, budget=Budget(seconds=seconds))
    rows = next((r.status for r in rep.results if r.name == "rows"), "skip")
    one_d = [r for r in rep.results if r.name != "rows"]
    failing = [r for r in one_d if r.status not in ("pass", "skip")]
    worst, accumulation = "", ""
    for r in one_d:
        d = r.detail
        if "err/seq bound" in d:
            worst = f"{d['err/seq bound']:.3g}"
        if f"err/bound {dtype}" in d:
            worst = f"{d[f'err/bound {dtype}']:.3g}"
        if f"accumulation {dtype}" in d:
            accumulation = str(d[f"accumulation {dtype}"])
    if not failing and not worst:  # integers, max and min: exact, bit for bit
        worst = "exact"
    verdict = rep.verdict
    return Cell(name, target.spec.op, dtype,
                "conforms" if not failing else (verdict.cause.label if verdict.cause else "fails"),
                "n/a" if rows == "skip" else ("conforms" if rows == "pass" else rows),
                worst, accumulation,
                "" if not failing else verdict.line, rep.largest_n, target.spec.output_dtype(dtype))


def _cell(args: tuple[str, str, float]) -> Cell:
    return check_cell(*args)


def matrix(names: list[str], seconds: float, workers: int) -> list[Cell]:
    """Every (target, declared dtype) cell of ``names``, ``workers`` checked at once in
    processes of their own (spawned: CUDA does not survive a fork)."""
    jobs = [(n, dt, seconds) for n in names for dt in resolve(n).spec.dtypes]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(_cell, jobs))


def markdown(cells: list[Cell]) -> str:
    """The cells as a Markdown table, and each failing cell's diagnosis below it."""
    head = ("| library scan | operator | dtype | 1-D verdict | N-D rows | worst err / bound | "
            "accumulation | largest n |\n|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {c.target} | {SCAN_NAMES.get(c.op, c.op)} | "
        f"{c.dtype if c.returns in ('', c.dtype) else f'{c.dtype} → {c.returns}'} | {c.verdict} | {c.rows} | "
        f"{c.worst} | {c.accumulation} | {c.largest_n:,} |\n" for c in cells)
    notes = "".join(f"- **{c.target} {c.dtype}**: {c.diagnosis}\n" for c in cells if c.diagnosis)
    return head + body + ("\nDiagnoses:\n\n" + notes if notes else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scancheck.matrix", description=__doc__)
    parser.add_argument("targets", nargs="*", help="library scans (default: every one here)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per property")
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    cells = matrix(args.targets or library_targets(), args.budget, args.workers)
    print(markdown(cells))
    return 0 if all(c.verdict == "conforms" for c in cells) else 1


if __name__ == "__main__":
    raise SystemExit(main())
