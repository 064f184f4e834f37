"""``scancheck``: the command line.

    scancheck verify              every variant: interval proof, hazards, bounds, kernels
    scancheck bench [--oracle]    GPU bandwidth against memcpy, or exact-oracle throughput
    scancheck sanitize VARIANT    a kernel under compute-sanitizer racecheck and synccheck
    scancheck precision           seed 004's float "bug", reproduced and explained
    scancheck explain IN OUT      is a computed scan's error rounding or a bug?
    scancheck check TARGET        conformance of any scan implementation
    scancheck matrix              pandas, polars, pyarrow, dask, numba and JAX scans, one table
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from .matrix_args import add_matrix_arguments
from .oracle.bounds import fit_columns as _fit
from .oracle.bounds import format_table
from .progress import Progress
from .spec_flags import add_spec_flags, positive, reverse_forms, spec_overrides


def _cmd_verify(args: argparse.Namespace) -> int:
    from .core.devices import gpu_available
    from .verify import verify_all

    gpu, why = gpu_available()
    print(f"GPU: {why}" if gpu else f"No GPU ({why}): checking the CPU models only.")
    results = verify_all(block=args.block, gpu=gpu)
    print(format_table([r.row() for r in results], title=f"scancheck verify (block={args.block})"))
    bad = [r.name for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)} of {len(results)} variants verified"
          + (f"; WRONG: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    _output_path(args.json, "--json")
    if args.oracle:
        rows = bench.oracle_throughput()
        print(format_table(rows, title="exact oracle throughput on this CPU (best of 5)"))
        from .core.devices import gpu_available

        gpu, why = gpu_available()
        if gpu:
            sizes = tuple(2**int(k) for k in args.log2_sizes)
            device = bench.device_oracle_throughput(sizes)
            print(format_table(device, title=f"exact oracle on {why} (median of 10)"))
            if args.json:
                with _writing(args.json, "--json"), open(args.json, "w") as fh:
                    json.dump({"cpu": rows, "device": device}, fh, indent=1)
        return 0
    from .core.devices import gpu_available

    gpu, why = gpu_available()
    if not gpu:
        print(f"No GPU ({why}): the GPU benchmark needs one; try --oracle.")
        return 2
    log2_sizes = tuple(int(k) for k in args.log2_sizes)
    if args.tune:
        _output_path(args.tune, "--tune")
        sweep = bench.tune_sweep(log2_sizes, tuple(args.dtypes), reps=args.reps)
        with _writing(args.tune, "--tune"), open(args.tune, "w") as fh:
            json.dump(sweep, fh, indent=1)
        rows = bench.sweep_rows(sweep)
        print(format_table(rows, title=f"tuning run on {why}: each launch's x memcpy"))
        print(f"wrote {args.tune}; python -m scancheck.kernels.tune --from {args.tune} "
              "writes the table")
        return 0
    rows = bench.speed_table(log2_sizes, tuple(args.dtypes), reps=args.reps,
                             oracle_dists=None if args.oracle_dists is None
                             else tuple(args.oracle_dists))
    print(format_table(rows, title=f"scan bandwidth on {why} (ours: {bench.TUNED_VARIANT} at its "
                                   "tuned config; oracle/torch: time of the exact oracle over "
                                   "torch.cumsum's)"))
    if args.json:
        with _writing(args.json, "--json"), open(args.json, "w") as fh:
            json.dump({"device": why, "rows": rows}, fh, indent=1)
    return 0


def _cmd_sanitize(args: argparse.Namespace) -> int:
    from .engine.sanitizer import sanitize_variant

    status = 0
    for tool in args.tools:
        rep = sanitize_variant(tool, args.variant, args.n, args.block, args.dtype, args.op)
        print(f"{tool}: {rep.issues} issue(s), exit {rep.returncode}"
              + (" (timed out)" if rep.timed_out else ""))
        if rep.issues:
            print(rep.first_lines())
        status |= int(not rep.clean)
    return status


def _cmd_precision(args: argparse.Namespace) -> int:
    from . import precision
    from .core.devices import gpu_available

    if args.practical:
        from .practical import report

        print(report())
        return 0
    _output_path(args.plot if args.sweep else None, "--plot")
    gpu, why = gpu_available()
    print(f"GPU: {why}" if gpu else
          f"No GPU ({why}): the multi-block scans run as their CPU models instead.")
    x = precision.practical_data(args.n, args.distribution, args.seed)
    rows, text = precision.precision_table(x, gpu)
    print(format_table([r.as_dict() for r in rows],
                       title=f"n = {args.n:,} float32 '{args.distribution}' values (seed {args.seed})"))
    print("\n" + text)
    if args.sweep:
        top = args.max_log2 or (30 if gpu else 22)
        points = precision.sweep(range(10, top + 1, 2), gpu, args.distribution)
        print(format_table([p.as_dict() for p in points], title="\nsweep: float32 error vs exact"))
        if args.plot:
            where = why if gpu else "CPU models"
            with _writing(args.plot, "--plot"):
                precision.plot(points, args.plot, f"scan error vs n, float32 ({where})")
            print(f"plot written to {args.plot}")
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    from .engine.conformance import jsonable
    from .explain import PROVEN, SUSPICIOUS, explain, load_array

    _output_path(args.json, "--json")
    x = load_array(args.input, args.dtype, "INPUT")
    dtype = x.dtype.name
    result = load_array(args.result, dtype, "RESULT")
    ref = load_array(args.reference, dtype, "--reference") if args.reference else None
    e = explain(x, result, ref, op=args.op, inclusive=not args.exclusive)
    if args.json:
        with _writing(args.json, "--json"), open(args.json, "w") as fh:
            json.dump(e.to_json(), fh, indent=1, default=jsonable)
    print("\n".join(e.lines()))
    return 1 if e.verdict in (PROVEN, SUSPICIOUS) else 0


def _cmd_matrix(args: argparse.Namespace) -> int:
    from .matrix import run_matrix

    return run_matrix(args)


def _output_path(path: str | None, flag: str) -> None:
    """Raise a ValueError naming ``flag`` unless ``path`` (None: not given) can be written as
    a file: checked before a run, so that an hour's check is not lost at its end.  Leaves no
    file behind where there was none."""
    if path is None:
        return
    where = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"argument {flag}: {path} is a directory; give a file name in it")
    if not os.path.isdir(where):
        raise ValueError(f"argument {flag}: {path}: the directory {where} does not exist")
    if os.path.exists(path) and not os.path.isfile(path):
        # A device or a pipe (/dev/stdout): opening it to try could block, or be the write.
        if not os.access(path, os.W_OK):
            raise ValueError(f"argument {flag}: {path} is not writable by this user")
        return
    existed = os.path.lexists(path)
    # access() answers yes to root everywhere (a read-only mount, /proc): only opening tells.
    with _writing(path, flag):
        open(path, "a").close()
    if not existed:
        os.unlink(path)


@contextlib.contextmanager
def _writing(path: str, flag: str) -> Iterator[None]:
    """An OSError inside (a full disk, a directory removed during the run) as a ValueError
    naming ``flag`` and ``path``: a usage or environment error, not a traceback."""
    try:
        yield
    except OSError as exc:
        raise ValueError(f"argument {flag}: {path} cannot be written "
                         f"({exc.strerror or type(exc).__name__})") from None


#: Columns a result table fits in; the whole text of each cell is in --report and --json.
_TABLE_WIDTH = 100
#: Seconds a check searches where --budget is not given (the API's Budget default too).
DEFAULT_BUDGET = 30.0


def _print_report(rep) -> None:
    rows = _fit(rep.rows(), {"property": 22, "diagnosis / detail": 40,
                             "smallest failing case": 21})
    print(format_table(rows, title=f"\n{rep.target}  ({rep.seconds:.1f} s, largest n "
                       f"checked {rep.largest_n:,})"))
    import textwrap

    verdict = rep.verdict
    print(textwrap.fill(f"verdict: {rep.verdict_word}"
                        + (f" - {rep.summary}" if rep.summary else ""), _TABLE_WIDTH,
                        subsequent_indent="  ", break_on_hyphens=False))
    if verdict.findings:  # each cause once, with the properties it explains folded under it
        print("causes, primary first:")
        for k, finding in enumerate(verdict.findings, 1):
            print(textwrap.fill(f"{k}. {finding.folded()}", _TABLE_WIDTH, initial_indent="  ",
                                subsequent_indent="     ", break_on_hyphens=False))
    print(rep.time_spent())


def _check_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of check_isolated that the command line sets."""
    from .engine.cases import Budget

    quick = args.quick
    # A budget given bounds the whole check, the ladders of sizes too; the default one is
    # spent past ladders walked whole, so that a default check's claim reaches every scale
    # to the device's largest n (bounded at 30 s, correct GPU kernels ended "partial" at
    # 2**20-2**23 on an H200).
    seconds = DEFAULT_BUDGET if args.budget is None else args.budget
    budget = Budget(seconds, args.examples or Budget.max_examples, args.max_n,
                    bounded=args.budget is not None)
    return dict(budget=budget, seconds=seconds, timeout=args.timeout,
                large=False if quick else (True if args.large else None),
                sanitize=() if quick else (tuple(args.sanitize) if args.sanitize is not None
                                           else None),
                workers=args.workers)


def _cmd_check(args: argparse.Namespace) -> int:
    from .engine.isolation import check_isolated
    from .engine.spec import spec_flag

    _output_path(args.json, "--json")
    _output_path(args.report, "--report")
    overrides = spec_overrides(args)
    if args.controls:
        if overrides:  # each control declares what it computes: a flag would unmake it
            raise ValueError(f"argument --controls: spec flags apply to TARGETs, not to the "
                             f"negative controls ({', '.join(map(spec_flag, overrides))} given)")
        return _run_controls(args)
    if not args.targets:
        print("scancheck: error: name at least one TARGET, or --controls", file=sys.stderr)
        return 2
    options = _check_options(args)
    gpu = _round_robin(args.targets)
    with Progress() as progress:
        reports = _each(args.targets, lambda name: check_isolated(
            name, overrides=overrides, progress=progress.task(name), gpu=gpu.get(name),
            **options), args.jobs)
    for rep in reports:
        _print_report(rep)
    statuses = {_exit_status(rep) for rep in reports}
    status = 1 if 1 in statuses else max(statuses)  # a failure outranks an unfinished check
    rows = _fit([{"target": r.target, "verdict": r.verdict_word.replace("DOES NOT CONFORM",
                                                                       "FAILS"),
                  "largest n": f"{r.reached:,}", "seconds": round(r.seconds),
                  "diagnosis": r.summary} for r in reports], {"target": 26, "diagnosis": 36})
    if gpu:  # which GPU ran what
        for row, name in zip(rows, args.targets):
            row["GPU"] = gpu[name]
    print(format_table(rows, title="\nsummary"))
    _write_json(args.json, reports)
    if args.report:
        from .report import markdown

        with _writing(args.report, "--report"):
            markdown(reports, args.report)
        print(f"report written to {args.report}")
    return status


def _exit_status(rep) -> int:
    """0 where the target conforms, 1 where it fails, 3 where the budget ran out first with
    no failure found (neither a pass nor a failure: nothing past the n reached was checked)."""
    return 0 if rep.passed else 3 if rep.unfinished else 1


def _round_robin(items: list) -> dict[Any, str]:
    """With several GPUs visible, each item's GPU, round-robin (none pinned with one)."""
    from .core.devices import visible_gpus

    gpus = visible_gpus()
    return {item: gpus[k % len(gpus)] for k, item in enumerate(items)} if len(gpus) > 1 else {}


def _each(items: list, check: Callable[[Any], Any], jobs: int) -> list:
    """``check`` on every item, ``jobs`` at a time, a line as each report comes in; the
    reports in the items' order.  Each check runs in child processes of its own, so the
    threads here only wait on them."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(check, item): k for k, item in enumerate(items)}
        reports: list = [None] * len(items)
        for done, future in enumerate(as_completed(futures), 1):
            result = future.result()
            reports[futures[future]] = result
            rep = result[0] if isinstance(result, tuple) else result
            verdict = "conforms" if rep.passed else rep.summary[:100]
            print(f"[{done}/{len(items)}] {rep.target} ({rep.seconds:.0f} s): {verdict}", flush=True)
    return reports


def _write_json(path: str | None, reports: list) -> None:
    if path:
        with _writing(path, "--json"), open(path, "w") as fh:
            fh.write("[" + ",\n".join(r.to_json() for r in reports) + "]\n")
        print(f"report written to {path}")


def _run_controls(args: argparse.Namespace) -> int:
    from .controls import CONTROLS
    from .core.devices import gpu_available

    gpu = gpu_available()[0]
    options = _check_options(args)
    # Each control shows what the whole ladder catches: its budget bounds the draws only.
    options["budget"] = replace(options["budget"], bounded=False)
    todo = [c for c in CONTROLS if gpu or not c.gpu]
    gpu = _round_robin([c.name for c in todo])
    with Progress() as progress:
        checked = dict(zip([c.name for c in todo], _each(todo, lambda c: c.check(
            progress=progress.task(c.name), gpu=gpu.get(c.name), **options), args.jobs)))
    rows, caught = [], 0
    for c in CONTROLS:
        if c.name not in checked:
            rows.append({"control": c.name, "expected": f"{c.cause.label}: {c.expect}",
                         "diagnosis": "skipped: no GPU", "caught": "-"})
            continue
        rep, ok = checked[c.name]
        caught += ok
        rows.append({"control": c.name, "expected": f"{c.cause.label}: {c.expect}",
                     "diagnosis": rep.diagnosis, "seconds": round(rep.seconds),
                     "caught": "yes" if ok else "NO"})
    run = len(checked)
    for name, (rep, ok) in checked.items():
        if not ok:
            print(f"\n{name} was not caught as expected:")
            _print_report(rep)
    _write_json(args.json, [rep for rep, _ in checked.values()])
    print(format_table(_fit(rows, {"control": 24, "expected": 30, "diagnosis": 30}),
                       title="\nnegative controls"))
    print(f"\nscore: {caught} of {run} negative controls caught with the right diagnosis")
    return 0 if caught == run else 1


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (what was wrong, naming the argument), and
    an epilog computed only when help is asked for (``epilog_from``)."""

    epilog_from: Callable[[], str] | None = None

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)

    def format_help(self) -> str:
        if self.epilog_from is not None:
            self.epilog = self.epilog_from()
        return super().format_help()


#: Columns help is laid out in at most (a wide terminal still gets lines one can read).
_HELP_WIDTH = 100


class _Help(argparse.HelpFormatter):
    """Help text filled to the width, except text laid out by hand (it has line breaks)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip():
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _formatter(prog: str) -> argparse.HelpFormatter:
    """Help laid out to the terminal's width, at most :data:`_HELP_WIDTH` columns."""
    return _Help(prog, width=min(_HELP_WIDTH, shutil.get_terminal_size().columns) - 2)


def _builtin_epilog() -> str:
    """The built-in target names, read from the table of built-in targets, quoted where the
    shell needs it and never broken across lines."""
    from .engine.library import builtin_targets

    lines = ["built-in targets (each where its library, and for GPU ones a GPU, is found):", ""]
    for name in builtin_targets():
        item = f"'{name}'" if " " in name or "(" in name else name
        if len(lines[-1]) + len(item) + 3 > _HELP_WIDTH - 2:
            lines[-1] += ","
            lines.append("")
        lines[-1] += (", " if lines[-1] else "  ") + item
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scancheck", description=__doc__, formatter_class=_formatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("verify", help="verify every registered scan variant")
    p.add_argument("--block", type=int, default=64, help="threads per block (default 64)")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("bench", help="GPU bandwidth table, or --oracle for the exact oracle")
    p.add_argument("--oracle", action="store_true",
                   help="exact-oracle throughput on the CPU, and on the GPU where there is one")
    p.add_argument("--log2-sizes", nargs="+", default=["16", "20", "24", "28", "30"],
                   help="log2 of the sizes (default 16 20 24 28 30; those over free device "
                        "memory are skipped)")
    p.add_argument("--dtypes", nargs="+", default=["float32", "float64", "int32", "int64"],
                   choices=["float32", "float64", "int32", "int64"])
    p.add_argument("--reps", type=positive(int), default=20)
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--tune", metavar="PATH",
                   help="time every candidate launch of the look-back instead, into PATH "
                        "(python -m scancheck.kernels.tune --from PATH writes the table)")
    p.add_argument("--oracle-dists", nargs="*", metavar="DIST",
                   help="data distributions the exact oracle is timed on (default: all; "
                        "none given: no oracle columns)")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("precision", help="seed 004's float32 'bug', reproduced and explained")
    p.add_argument("--n", type=positive(int), default=1_000_000)
    p.add_argument("--distribution", default="integers")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--practical", action="store_true",
                   help="the practical's own data, reference and RMS: its two figures judged")
    p.add_argument("--sweep", action="store_true", help="also sweep n from 2^10 up")
    p.add_argument("--max-log2", type=positive(int), help="largest log2 n of the sweep (22 CPU, 30 GPU)")
    p.add_argument("--plot", help="write the sweep's log-log plot to this PNG")
    p.set_defaults(func=_cmd_precision)

    p = sub.add_parser("explain", help="is a computed scan's error rounding or a bug?")
    p.add_argument("input", metavar="INPUT", help=".npy, .npz[:KEY] or a text file of numbers")
    p.add_argument("result", metavar="RESULT", help="the computed scan of INPUT, same forms")
    p.add_argument("--reference", metavar="REF", help="a reference scan it was compared with")
    p.add_argument("--op", choices=["add", "max", "min"], default="add")
    p.add_argument("--exclusive", action="store_true", help="RESULT is an exclusive scan")
    p.add_argument("--dtype", help="element dtype of text files (default float32)")
    p.add_argument("--json", help="also write the explanation to this file")
    p.set_defaults(func=_cmd_explain)

    p = sub.add_parser("check", help="conformance of scan implementations, or --controls",
                       description="Check that each TARGET computes what it declares.",
                       formatter_class=_formatter)
    p.epilog_from = _builtin_epilog  # type: ignore[attr-defined]
    p.add_argument("targets", nargs="*", metavar="TARGET", help="a built-in name (below), "
                   "kernel:VARIANT, model:VARIANT, FILE.cu, package.module:function or "
                   "path/to/file.py:function")
    p.add_argument("--controls", action="store_true", help="run the negative controls, print the score")
    add_spec_flags(p)
    p.add_argument("--budget", type=positive(float), default=None, metavar="SECONDS",
                   help="seconds the whole check of a target may take, shared among its "
                   "properties, their ladders of sizes included; a property whose time runs "
                   "out is 'slow' (the target's calls took it) or 'partial' (the checking "
                   "did) with the largest n it reached, and the exit status is 3; a failure "
                   f"found is still shrunk.  Without it: {DEFAULT_BUDGET:g} s of search past "
                   "ladders walked whole, to 2**24 on a GPU and 2**20 on a CPU")
    p.add_argument("--examples", type=positive(int),
                   help="Hypothesis examples per property at most (default: no cap but time)")
    p.add_argument("--max-n", type=positive(int),
                   help="largest n searched (default 2**24 for GPU targets, 2**20 for CPU ones)")
    p.add_argument("--large", action="store_true",
                   help="check n = 2**31 + 17 and 2**32 + 17 for CPU targets too (GPU ones: always)")
    p.add_argument("--quick", action="store_true",
                   help="skip the sanitizers and the checks past 2**31 and 2**32")
    p.add_argument("--timeout", type=positive(float), default=60,
                   help="seconds one case may run before it is a hang (default 60)")
    p.add_argument("--sanitize", nargs="*", choices=["racecheck", "synccheck", "memcheck", "initcheck"],
                   help="compute-sanitizer tools (default: all four for GPU targets)")
    p.add_argument("--json", help="write the reports to this file")
    p.add_argument("--report", metavar="FILE.md", help="write a report people read: verdicts, "
                   "a snippet reproducing each failure, the environment")
    p.add_argument("--jobs", type=positive(int), default=1, help="targets checked at once")
    p.add_argument("--workers", type=positive(int),
                   help="child processes per target at once (default: half the cores)")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("matrix", help="the library matrix: pandas, polars, pyarrow, dask, "
                       "numba and JAX scans on the CPU, each under its declared contract",
                       description="The CPU scans of pandas, polars, pyarrow, dask, numba and "
                       "JAX installed here (pip install -e '.[libs]'), each under the contract "
                       "its library documents, in one table.")
    add_matrix_arguments(p)
    p.set_defaults(func=_cmd_matrix)

    p = sub.add_parser("sanitize", help="run one kernel under compute-sanitizer")
    p.add_argument("variant")
    p.add_argument("--n", type=positive(int), default=256)
    p.add_argument("--block", type=int, default=256)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--op", default="add")
    p.add_argument("--tools", nargs="+", default=["racecheck", "synccheck"])
    p.set_defaults(func=_cmd_sanitize)
    for command in sub.choices.values():  # every command's help fits the same width
        command.formatter_class = _formatter
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``scancheck`` console script."""
    from .core.locks import LockRefused

    args = build_parser().parse_args(reverse_forms(sys.argv[1:] if argv is None else argv))
    try:
        return args.func(args)
    # Bad arguments, a target that cannot be loaded or cannot run on this machine, an
    # unsafe lock directory: exit 2 saying what was wrong, no traceback.  Only a target's
    # behaviour exits 1.
    except (ValueError, LockRefused) as exc:
        print(f"scancheck: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
