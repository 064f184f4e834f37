"""The conformance matrices.

``scancheck matrix``: the library matrix, the CPU scans of
pandas, polars, pyarrow, dask (two chunkings, both methods), numba and JAX that are
installed here (``pip install -e '.[libs]'``), each with its documented contract declared,
checked at each of float32, float64, int32 and int64 it takes within a time budget a cell:
one table of library, function, dtype, contract (the flags that declare it), verdict,
largest n and seconds, 100 columns wide, each failure's diagnosis below it.

``scancheck matrix --markdown``: every library scan installed here, under its
operator, checked at each dtype it declares on its own, with the N-D rows (any axis and
layout) beside the 1-D properties, as Markdown (docs/ keeps the H100 run's).

A cell is a verdict (conforms, or the cause of its one diagnosis), the worst error seen as
a fraction of its bound (add: of the bound of any summation order at n = 4096; products
and log-sum-exp: at n = 4096 of data near 1; max and min are exact), and for float16,
bfloat16 and float32 sums the accumulation precision proved by
:func:`scancheck.engine.properties.accumulation_precision`.
"""

from __future__ import annotations

import argparse
import contextlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from typing import Any

from ...adapters import builtin_targets, row
from ...engine.cases import Budget
from ...engine.checks import PROPERTIES, not_applicable
from ...engine.conformance import check
from ...engine.report import ranked_exit
from ...targets.resolve import resolve
from ...targets.spec import contract_flags
from ..tables import fit_columns, format_table

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
    #: The check's exit status: 0 conforms, 1 fails, 2 nothing checked, 3 the budget ran out
    #: first.
    status: int = 0


def library_targets() -> list[str]:
    """The built-in library scans available here (scancheck's own kernels and models aside)."""
    # Scans over tuples of arrays have no dtype of their own: the probe monoids drive them.
    return [name for name, t in builtin_targets().items()
            if not t.unavailable and not name.startswith(("scancheck:", "model:"))
            and not t.spec.combine]


def check_cell(name: str, dtype: str, seconds: float, max_n: int | None = None) -> Cell:
    """``name`` checked at ``dtype`` alone, every property within ``seconds``, up to
    ``max_n`` elements (None: the default largest n)."""
    target = resolve(name)
    target = replace(target, spec=replace(target.spec, dtypes=(dtype,)))
    rep = check(target, PROPERTIES, budget=Budget(seconds=seconds, max_n=max_n))
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
                "" if not failing else verdict.line, rep.largest_n, target.spec.output_dtype(dtype),
                rep.exit_status)


def _cell(args: tuple[str, str, float, int | None]) -> Cell:
    return check_cell(*args)


def matrix(names: list[str], seconds: float, workers: int, max_n: int | None = None
           ) -> list[Cell]:
    """Every (target, declared dtype) cell of ``names``, ``workers`` checked at once in
    processes of their own (spawned: CUDA does not survive a fork), up to ``max_n``."""
    jobs = [(n, dt, seconds, max_n) for n in names for dt in resolve(n).spec.dtypes]
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


#: The library matrix's scans: (library, function as the table shows it, built-in target).
LIBRARY_SCANS: tuple[tuple[str, str, str], ...] = (
    *(("pandas", f"Series.{m}()", f"pandas Series.{m}()")
      for m in ("cumsum", "cumprod", "cummax", "cummin")),
    ("pandas", "DataFrame.cumsum(axis=)", "pandas DataFrame.cumsum(axis=)"),
    *(("polars", f"Series.{m}()", f"polars Series.{m}()")
      for m in ("cum_sum", "cum_prod", "cum_max", "cum_min")),
    *(("pyarrow", f, f"pyarrow.compute.{f}") for f in (
        "cumulative_sum", "cumulative_sum_checked", "cumulative_prod", "cumulative_max",
        "cumulative_min")),
    *(("dask", f"cumsum chunks={c} {m}", f"dask.array.cumsum (chunks={c}, method={m})")
      for c in (64, 1000) for m in ("sequential", "blelloch")),
    ("numba", "njit(np.cumsum)", "numba njit(np.cumsum)"),
    ("numba", "njit(np.cumprod)", "numba njit(np.cumprod)"),
    ("jax", "numpy.cumsum", "jax.numpy.cumsum"),
    ("jax", "numpy.cumprod", "jax.numpy.cumprod"),
    ("jax", "lax.associative_scan", "jax.lax.associative_scan"),
    ("jax", "numpy.cumsum (x64)", "jax.numpy.cumsum (x64)"),
)
#: The dtypes of the library matrix, where a scan takes them.
LIBRARY_DTYPES = ("float32", "float64", "int32", "int64")
#: Column widths of the library table: with format_table's two-space gaps, 100 columns.
_WIDTHS = {"library": 7, "function": 22, "dtype": 7, "contract": 27, "verdict": 12,
           "largest n": 9, "s": 4}


@dataclass
class LibraryCell:
    """One library scan at one dtype under its declared contract: the verdict (conforms,
    slow or partial with the n every property reached, or the cause of its diagnosis)."""

    library: str
    function: str
    dtype: str
    contract: str
    verdict: str
    largest_n: int
    seconds: float
    diagnosis: str = ""
    #: The check's exit status: 0 conforms, 1 fails, 2 nothing checked, 3 the budget ran out
    #: first.
    status: int = 0


def library_jobs(max_n: int | None = None) -> list[tuple[str, str, str, str]]:
    """The (library, function, target, dtype) cells of the library matrix whose library is
    installed here."""
    targets = builtin_targets()
    return [(lib, fn, name, dt) for lib, fn, name in LIBRARY_SCANS
            if not targets[name].unavailable
            for dt in LIBRARY_DTYPES if dt in targets[name].spec.dtypes]


def library_cell(job: tuple[str, str, str, str], seconds: float,
                 max_n: int | None = None) -> LibraryCell:
    """One cell: the target at one dtype, every property that applies within an even share
    of ``seconds``, each bounded by it (its ladder too)."""
    lib, fn, name, dtype = job
    target = resolve(name)
    target = replace(target, spec=replace(target.spec, dtypes=(dtype,)))
    props = [p for p in PROPERTIES if not not_applicable(target.spec, p)]
    _warm(target, tuple(props))
    rep = check(target, tuple(props), budget=Budget(seconds / max(len(props), 1),
                                                    max_n=max_n, bounded=True))
    verdict = rep.verdict_word
    if verdict == "DOES NOT CONFORM":
        verdict = rep.verdict.cause.label if rep.verdict.cause else "fails"
    return LibraryCell(lib, fn, dtype, contract_flags(target.spec, dtype) or "-", verdict,
                       rep.reached, round(rep.seconds, 1),
                       "" if rep.passed else rep.summary, rep.exit_status)


def _warm(target: Any, props: tuple[str, ...]) -> None:
    """The properties once on a few elements first: the library's import, its first compile
    (numba, JAX) and the oracles' are not the cell's time."""
    with contextlib.suppress(Exception):  # the check itself reports what the target raises
        check(target, props, budget=Budget(0.01, max_n=16))


def _library_cell(args: tuple[tuple[str, str, str, str], float, int | None]) -> LibraryCell:
    return library_cell(*args)


def library_matrix(seconds: float, workers: int, max_n: int | None = None
                   ) -> list[LibraryCell]:
    """Every installed cell of the library matrix, ``workers`` at once in processes of their
    own (a library's threads and JIT caches stay in its process)."""
    jobs = [(job, seconds, max_n) for job in library_jobs()]
    if workers <= 1:
        return [_library_cell(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(_library_cell, jobs))


def missing_libraries() -> list[str]:
    """The libraries of the matrix that cannot run here, in the matrix's order (asked of each
    scan's row: no target is built, no library imported)."""
    return list(dict.fromkeys(lib for lib, _, name in LIBRARY_SCANS
                              if row(name).unavailable()))


def library_table(cells: list[LibraryCell], missing: list[str] | None = None) -> str:
    """The cells as one plain-text table within 100 columns, below it each diagnosis
    (wrapped to 100 columns) of a cell that did not conform, where the libraries' further
    modes are checked, and the ``missing`` libraries named last."""
    import textwrap

    absent = (f"\n\nnot installed here, so not in the table: {', '.join(missing)} (pip install "
              f"-e '.[libs]')" if missing else "")
    if not cells:
        return ("no library of the matrix is installed here (pandas, polars, pyarrow, dask, "
                "numba, jax): pip install -e '.[libs]'")
    rows = [{"library": c.library, "function": c.function, "dtype": c.dtype,
             "contract": c.contract, "verdict": c.verdict, "largest n": f"{c.largest_n:,}",
             "s": f"{c.seconds:.1f}"} for c in cells]
    notes = [textwrap.fill(f"{c.library} {c.function} {c.dtype}: {c.diagnosis}", 100,
                           subsequent_indent="    ") for c in cells if c.diagnosis]
    # A clean table is of these calls alone: the modes where the known bugs are, are not in it.
    modes = ("\n\nthe libraries' plain scan calls only: their further modes (groupby, chunkings, "
             "jit and eager,\nreverse) and the known bugs there are checked by scancheck hunt "
             "--part cpu")
    return (format_table(fit_columns(rows, _WIDTHS)) + ("\n\n" + "\n".join(notes) if notes else "")
            + modes + absent)


def matrix_status(cells: list[Cell] | list[LibraryCell]) -> int:
    """The exit status of a matrix, as ``check``'s of several targets
    (:func:`~scancheck.engine.report.ranked_exit` of its cells')."""
    return ranked_exit(c.status for c in cells)


def run_matrix(args: argparse.Namespace) -> int:
    """Print the matrix ``args`` ask for; its status as :func:`matrix_status` says."""
    if args.markdown:
        cells = matrix(args.targets or library_targets(), args.budget or 3.0, args.workers,
                       args.max_n)
        print(markdown(cells))
        return matrix_status(cells)
    if args.targets:
        raise ValueError("argument TARGET: library scans are named with --markdown only; the "
                         "library table runs every one of its scans installed here")
    found = library_matrix(args.budget or 6.0, args.workers, args.max_n)
    print(library_table(found, missing_libraries()))
    return matrix_status(found)

