"""What each ``scancheck`` command does, handed its parsed arguments (:mod:`scancheck.faces.cli.main`
parses them and calls the one named): each prints what it found and returns the exit
status.  ``check`` and ``check --controls`` run their targets in child processes, several
at once, and print each report and a summary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...core.arrays import as_dtype
from ...oracle.bounds import fit_columns as _fit
from ...oracle.bounds import format_table
from ..progress import Progress
from .spec_flags import spec_overrides


def _cmd_verify(args: argparse.Namespace) -> int:
    from ...core.devices import gpu_available
    from ..jobs.verify import verify_all

    gpu, why = gpu_available()
    print(f"GPU: {why}" if gpu else f"No GPU ({why}): checking the CPU models only.")
    results = verify_all(block=args.block, gpu=gpu)
    print(format_table([r.row() for r in results], title=f"scancheck verify (block={args.block})"))
    bad = [r.name for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)} of {len(results)} variants verified"
          + (f"; WRONG: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from ..jobs import bench

    _output_path(args.json, "--json")
    if args.oracle:
        rows = bench.oracle_throughput()
        print(format_table(rows, title="exact oracle throughput on this CPU (best of 5)"))
        from ...core.devices import gpu_available

        gpu, why = gpu_available()
        if gpu:
            sizes = tuple(2**int(k) for k in args.log2_sizes)
            device = bench.device_oracle_throughput(sizes)
            print(format_table(device, title=f"exact oracle on {why} (median of 10)"))
            if args.json:
                with _writing(args.json, "--json"), open(args.json, "w") as fh:
                    json.dump({"cpu": rows, "device": device}, fh, indent=1)
        return 0
    from ...core.devices import gpu_available

    gpu, why = gpu_available()
    if not gpu:
        print(f"No GPU ({why}): the GPU benchmark needs one; try --oracle.")
        return 2
    log2_sizes = tuple(int(k) for k in args.log2_sizes)
    if args.tune:
        from ...kernels.tune import write_sweep_table

        _output_path(args.tune, "--tune")
        sweep = bench.tune_sweep(log2_sizes, tuple(args.dtypes), reps=args.reps)
        with _writing(args.tune, "--tune"), open(args.tune, "w") as fh:
            json.dump(sweep, fh, indent=1)
        path, _ = write_sweep_table(sweep, Path(args.tune).resolve().parent)
        print(bench.fit_tables(bench.sweep_rows(sweep), ("dtype", "n"),
                               f"tuning run on {why}: the fastest launches, x memcpy "
                               f"({bench.LAUNCH_LEGEND})"))
        bad = {k: v for k, v in sweep["checks"].items() if v != "equal"}
        print(f"launch shapes against their models: {len(sweep['checks']) - len(bad)} of "
              f"{len(sweep['checks'])} equal" + (f"; left out: {bad}" if bad else ""))
        print(f"wrote {args.tune}\nand this device's launch table {path}\n(the package's own "
              f"once in scancheck/kernels/tuned/; SCANCHECK_TUNED_DIR={path.parent} reads it)")
        return 0
    from ...kernels.tune import device_table

    table = device_table()
    scans = bench.speed_table(log2_sizes, table, tuple(args.dtypes), reps=args.reps)
    print(bench.scans_text(scans, table.source))
    oracle: list[dict] = []
    floats = tuple(d for d in args.dtypes if d.startswith("float"))
    if floats and args.oracle_dists != []:  # none given: no oracle table
        oracle = bench.oracle_table(tuple(int(k) for k in args.oracle_sizes),
                                    None if args.oracle_dists is None else
                                    tuple(args.oracle_dists), floats)
        print()
        print(bench.oracle_text(oracle))
    if args.json:
        with _writing(args.json, "--json"), open(args.json, "w") as fh:
            json.dump({"device": why, "launch table": table.source, "scans": scans,
                       "oracle": oracle}, fh, indent=1)
    return 0


def _cmd_sanitize(args: argparse.Namespace) -> int:
    from ...isolation.sanitizer import sanitize_variant

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
    from ...core.devices import gpu_available
    from ..jobs import precision

    if args.practical:
        from ..jobs.practical import report

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
    from ...engine.report import jsonable
    from ...oracle.explain import PROVEN, SUSPICIOUS, explain

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


def _cmd_known(args: argparse.Namespace) -> int:
    """The registry of known bugs: each with its versions, status and link, whether the
    installed version is among those affected, and with --reproduce what its standalone
    reproducer prints last ("still reproduces" or "fixed in <version>")."""
    import subprocess
    from pathlib import Path

    from ...adapters import known_bugs
    from ...adapters.known import versions
    from ...core.devices import gpu_available

    gpu = gpu_available()[0] if args.reproduce else False
    # The reproducers are in the source tree (docs/findings), not in an installed wheel.
    root = Path(__file__).resolve().parents[3]
    rows, links = [], []
    for bug in known_bugs():
        installed = bug.installed()
        here = ((f"{installed}, " + ("affected" if bug.affects(installed) else "not affected"))
                if installed else "not installed")
        row = {"bug": bug.key, "library": bug.library, "affects": versions(bug), "here": here,
               "status": bug.status.split(":")[0]}
        if args.reproduce:
            script = root / bug.reproducer
            if not installed or (bug.gpu and not gpu) or not script.is_file():
                row["reproducer"] = "not run: " + ("not installed" if not installed else "no GPU"
                                                   if script.is_file() else "no source tree")
            else:
                done = subprocess.run([sys.executable, str(script)], capture_output=True,
                                      text=True, timeout=args.timeout)
                out = (done.stdout.strip() or done.stderr.strip() or "no output").splitlines()
                row["reproducer"] = out[-1] if done.returncode == 0 else (
                    f"exit {done.returncode}: {out[-1]}")
        rows.append(row)
        links.append(f"{bug.key}: {bug.link or 'not reported upstream'} -- {bug.title} "
                     f"({bug.reproducer})")
    print(format_table(_fit(rows, {"bug": 30, "status": 21, "reproducer": 30}),
                       title="known bugs of the libraries scancheck checks"))
    import textwrap

    print("\n" + "\n".join(textwrap.fill(ln, _TABLE_WIDTH, subsequent_indent="    ")
                            for ln in links))
    return 0


def _cmd_hunt(args: argparse.Namespace) -> int:
    """Check every library target of a part this machine can run (or merge parts), write the
    table of every API and mode and each new finding's reproducer; 1 where a new finding
    was made."""
    from pathlib import Path

    from ..reports.hunt import NEW, hunt, merge, table, with_table

    if args.write:
        _output_path(args.write, "--write")
    if args.merge:
        missing = [p for p in args.merge if not os.path.isfile(p)]
        if missing:
            raise ValueError(f"argument --merge: {', '.join(missing)} is no file (give the "
                             f"hunt-PART.json files the parts wrote)")
        found = merge([Path(p) for p in args.merge])
    else:
        found = hunt(args.part, Path(args.out), args.jobs, args.budget, args.only, args.timeout)
    text = table(found)
    if args.write:
        page = open(args.write).read() if os.path.isfile(args.write) else ""
        with _writing(args.write, "--write"), open(args.write, "w") as fh:
            fh.write(with_table(page, text))
        print(f"table written to {args.write}")
    else:
        print(text)
    return 1 if any(f.verdict == NEW for f in found) else 0


def _print_known(rep) -> None:
    """The known bugs a report's failures meet ("known upstream: <link>"), and those of its
    target that did not reproduce ("fixed in <version>?")."""
    from ...adapters import known_for
    from ...adapters.known import lines

    for line in lines(rep, known_for(rep.target)):
        print(f"  {line}")


def _cmd_matrix(args: argparse.Namespace) -> int:
    from ..reports.matrix import run_matrix

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
#: Seconds of a default check's wall time that are not search: the command's start, the
#: children's results coming back and the report (about 1.2 s measured on 2 cores), so that
#: the whole command takes about DEFAULT_BUDGET seconds, not that plus its own start.
_NOT_SEARCH = 1.5


def _print_report(rep) -> None:
    rows = _fit(rep.rows(), {"property": 22, "diagnosis / detail": 40,
                             "smallest failing case": 21})
    # The n the summary says too: every property checked to it (one cut short by its
    # budget reached less than the others).
    print(format_table(rows, title=f"\n{rep.target}  ({rep.seconds:.1f} s, largest n "
                       f"checked {rep.reached:,})"))
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
    if rep.notes:  # whole: the table's detail column cuts them short
        print("found beside the verdict:")
        for note in rep.notes:
            print(textwrap.fill(f"- {note}", _TABLE_WIDTH, initial_indent="  ",
                                subsequent_indent="    ", break_on_hyphens=False))
    print(rep.time_spent())


def _check_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of check_isolated that the command line sets."""
    from ...engine.cases import Budget

    quick = args.quick
    # A budget given bounds the whole check, the ladders of sizes too; the default one is
    # spent past ladders walked whole, so that a default check's claim reaches every scale
    # to the device's largest n (bounded at 30 s, correct GPU kernels ended "partial" at
    # 2**20-2**23 on an H200).
    seconds = DEFAULT_BUDGET - _NOT_SEARCH if args.budget is None else args.budget
    budget = Budget(seconds, args.examples or Budget.max_examples, args.max_n,
                    bounded=args.budget is not None)
    return dict(budget=budget, seconds=seconds, timeout=args.timeout,
                large=False if quick else (True if args.large else None),
                sanitize=() if quick else (tuple(args.sanitize) if args.sanitize is not None
                                           else None),
                workers=args.workers)


def _cmd_check(args: argparse.Namespace) -> int:
    from ...isolation.parent import UsageError, check_isolated
    from ...targets.spec import spec_flag

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
    _refuse_unavailable(args.targets)
    options = _check_options(args)
    gpu = _round_robin(args.targets)

    def check(name: str) -> Any:
        try:
            return check_isolated(name, overrides=overrides, progress=progress.task(name),
                                  gpu=gpu.get(name), **options)
        except UsageError as exc:  # the others' reports are kept, and it is named
            return exc

    with Progress() as progress:
        results = _each(args.targets, check, args.jobs)
    unchecked = [(name, str(r)) for name, r in zip(args.targets, results)
                 if isinstance(r, UsageError)]
    ran = [(name, r) for name, r in zip(args.targets, results)
           if not isinstance(r, UsageError)]
    reports = [r for _, r in ran]
    for rep in reports:
        _print_report(rep)
        _print_known(rep)
    statuses = {_exit_status(rep) for rep in reports}
    # A failure outranks a target that could not be checked, which outranks an unfinished
    # check (no budget would check it).
    status = 1 if 1 in statuses else 2 if unchecked else max(statuses)
    if reports:
        rows = _fit([{"target": r.target,
                      "verdict": r.verdict_word.replace("DOES NOT CONFORM", "FAILS"),
                      "largest n": f"{r.reached:,}", "seconds": round(r.seconds),
                      "diagnosis": r.summary} for r in reports],
                    {"target": 26, "diagnosis": 36})
        if gpu:  # which GPU ran what
            for row, (name, _) in zip(rows, ran):
                row["GPU"] = gpu[name]
        print(format_table(rows, title="\nsummary"))
    for _, why in unchecked:
        print(f"scancheck: error: {why}", file=sys.stderr)
    _write_json(args.json, reports, unchecked)
    if args.report and reports:
        from ..reports.markdown import markdown

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
    from ...core.devices import visible_gpus

    gpus = visible_gpus()
    return {item: gpus[k % len(gpus)] for k, item in enumerate(items)} if len(gpus) > 1 else {}


def _refuse_unavailable(names: list[str]) -> None:
    """A ValueError naming each built-in target that cannot run on this machine (its library
    or a GPU missing), before any check starts: a long run is not spent to learn that."""
    from ...adapters import find

    # Each name loads its own library's table alone.
    found = [(name, find(name)) for name in names]
    unrun = [f"{name!r} ({t.unavailable})" for name, t in found if t is not None and t.unavailable]
    if unrun:
        raise ValueError(f"argument TARGET: {', '.join(unrun)} cannot run here; nothing was "
                         f"checked (install what is missing, or leave the target out)")


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
            if isinstance(result, Exception):  # a check that could not run, said so
                if len(items) > 1:  # one target's is the error printed at the end, alone
                    print(f"[{done}/{len(items)}] {result}", flush=True)
                continue
            rep = result[0] if isinstance(result, tuple) else result
            verdict = "conforms" if rep.passed else rep.summary[:100]
            print(f"[{done}/{len(items)}] {rep.target} ({rep.seconds:.0f} s): {verdict}", flush=True)
    return reports


def _write_json(path: str | None, reports: list,
                unchecked: list[tuple[str, str]] | tuple = ()) -> None:
    """The reports as a JSON list, and a record of each target not checked, with why."""
    if path:
        records = [r.to_json() for r in reports] + [
            json.dumps({"target": name, "not checked": why}) for name, why in unchecked]
        with _writing(path, "--json"), open(path, "w") as fh:
            fh.write("[" + ",\n".join(records) + "]\n")
        print(f"report written to {path}")


def _run_controls(args: argparse.Namespace) -> int:
    from ...controls import CONTROLS
    from ...core.devices import gpu_available

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
            rows.append({"control": c.name, "expected": c.expected,
                         "diagnosis": "skipped: no GPU", "caught": "-"})
            continue
        rep, ok = checked[c.name]
        caught += ok
        rows.append({"control": c.name, "expected": c.expected,
                     "diagnosis": rep.diagnosis or rep.summary, "seconds": round(rep.seconds),
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


def load_array(path: str, dtype: str | None = None, argname: str = "INPUT") -> np.ndarray:
    """A 1-D array from ``.npy``, ``.npz`` (its only array, or ``file.npz:key``) or text
    (whitespace or comma separated; ``dtype``, float32 by default, must hold every value
    exactly)."""
    file, _, key = path.partition(".npz:")
    if key:
        file += ".npz"
    p = Path(file)
    if not p.is_file():
        raise ValueError(f"{argname}: {file} is not a file")
    if p.suffix == ".npy":
        a = np.load(p, allow_pickle=False)
    elif p.suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            names = list(z.files)
            if not key and len(names) != 1:
                raise ValueError(f"{argname}: {file} holds {names}; name one as {file}:KEY")
            if key and key not in names:
                raise ValueError(f"{argname}: {file} has no array {key!r}; it holds {names}")
            a = z[key or names[0]]
    else:
        text = p.read_text().replace(",", " ").split()
        try:
            wide = np.array([float(t) for t in text], dtype=np.float64)
        except ValueError as exc:
            raise ValueError(f"{argname}: {file} is not a list of numbers ({exc})") from None
        a = wide.astype(as_dtype(dtype or "float32"))
        if not np.array_equal(a.astype(np.float64), wide, equal_nan=True):
            raise ValueError(f"{argname}: {file} has values that {a.dtype.name} cannot hold "
                             f"exactly; pass --dtype float64")
    if dtype is not None and a.dtype != as_dtype(dtype):
        raise ValueError(f"{argname}: {file} holds {a.dtype.name}, not {dtype}")
    if a.ndim != 1:
        raise ValueError(f"{argname}: {file} holds an array of shape {a.shape}; explain takes 1-D")
    return a
