"""``scancheck check``: each target checked in child processes, several at once, a report
and a summary printed, the JSON and Markdown reports written; ``--controls``: the negative
controls checked alike and scored; and the checks on the files a command writes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ...engine.options import CheckOptions
from ..progress import Progress
from ..spec_flags import spec_overrides
from ..tables import around, cut_words, fit_columns, format_table


def print_known(rep) -> None:
    """The known bugs a report's failures meet ("known upstream: <link>"), and those of its
    target that did not reproduce ("fixed in <version>?")."""
    from ...adapters import known_for
    from ...adapters.known import lines

    for line in lines(rep, known_for(rep.target)):
        print(f"  {line}")



def output_path(path: str | None, flag: str) -> None:
    """Raise a ValueError naming ``flag`` unless ``path`` (None: not given) can be written as
    a file: checked before a run, so that an hour's check is not lost at its end.  Leaves no
    file behind where there was none."""
    if path is None:
        return
    where = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"argument {flag}: {path} is a directory; give a file name in it")
    if not os.path.isdir(where):
        what = "is a file, not a directory" if os.path.exists(where) else "does not exist"
        raise ValueError(f"argument {flag}: {path}: {where} {what}")
    if os.path.exists(path) and not os.path.isfile(path):
        # A device or a pipe (/dev/stdout): opening it to try could block, or be the write.
        if not os.access(path, os.W_OK):
            raise ValueError(f"argument {flag}: {path} is not writable by this user")
        return
    existed = os.path.lexists(path)
    # access() answers yes to root everywhere (a read-only mount, /proc): only opening tells.
    with writing(path, flag):
        open(path, "a").close()
    if not existed:
        os.unlink(path)



def output_dir(path: str, flag: str) -> None:
    """Make the folder ``path`` (and its parents) unless it is there, a ValueError naming
    ``flag`` where it cannot be made or is a file: checked before a run, as
    :func:`output_path` checks a file."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"argument {flag}: {path} is a file; give a folder (made where it is "
                         f"not there)")
    with writing(path, flag):
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".scancheck-{os.getpid()}")
        open(probe, "w").close()
        os.unlink(probe)


@contextlib.contextmanager
def writing(path: str, flag: str) -> Iterator[None]:
    """An OSError inside (a full disk, a directory removed during the run) as a ValueError
    naming ``flag`` and ``path``: a usage or environment error, not a traceback."""
    try:
        yield
    except OSError as exc:
        raise ValueError(f"argument {flag}: {path} cannot be written "
                         f"({exc.strerror or type(exc).__name__})") from None



#: Columns a result table fits in; the whole text of each cell is in --report and --json.
TABLE_WIDTH = 100



#: Seconds a check searches where --budget is not given (the API's Budget default too).
DEFAULT_BUDGET = 30.0



#: Seconds of a default check's wall time that are not search: the command's start, the
#: children's results coming back and the report (about 1.2 s measured on 2 cores), so that
#: the whole command takes about DEFAULT_BUDGET seconds, not that plus its own start.
NOT_SEARCH = 1.5



def print_report(rep, report: str | None = None) -> None:
    """A target's report on the terminal: its properties' table, the verdict and causes, and
    the smallest case, said to be rebuilt by the script in ``report`` (the --report file)."""
    rows, case = rep.rows(), "smallest failing case"
    widths = {"property": 22, "diagnosis / detail": 40, case: 21}
    if not any(r[case] for r in rows):  # the detail takes the empty case column's width too
        rows = [{k: v for k, v in r.items() if k != case} for r in rows]
        widths = {"property": 22, "diagnosis / detail": 63}
    rows = fit_columns(rows, widths)
    # The n the summary says too: every property checked to it (one cut short by its
    # budget reached less than the others).
    print(format_table(rows, title=f"\n{rep.target}  ({rep.seconds:.1f} s, largest n "
                       f"checked {rep.reached:,})"))
    import textwrap

    from ...engine.report import case_text

    verdict = rep.verdict
    print(textwrap.fill(f"verdict: {rep.verdict_word}"
                        + (f" - {rep.summary}" if rep.summary else ""), TABLE_WIDTH,
                        subsequent_indent="  ", break_on_hyphens=False))
    if verdict.findings:  # each cause once, with the properties it explains folded under it
        print("causes, primary first:")
        for k, finding in enumerate(verdict.findings, 1):
            print(textwrap.fill(f"{k}. {finding.folded()}", TABLE_WIDTH, initial_indent="  ",
                                subsequent_indent="     ", break_on_hyphens=False))
        case = case_text(verdict.findings[0].smallest_case)
        if case:  # whole: the table's column cuts it short
            from ..reports.markdown import rebuilds

            where = ("" if not rebuilds(rep, verdict.findings[0]) else
                     f" ({report} holds a script that rebuilds it)" if report else
                     " (--report FILE.md writes a script that rebuilds it)")
            print(textwrap.fill(f"smallest case (cause 1): {case}{where}", TABLE_WIDTH,
                                subsequent_indent="  ", break_on_hyphens=False))
    if rep.notes:  # whole: the table's detail column cuts them short
        print("found beside the verdict:")
        for note in rep.notes:
            print(textwrap.fill(f"- {note}", TABLE_WIDTH, initial_indent="  ",
                                subsequent_indent="    ", break_on_hyphens=False))
    print(textwrap.fill(rep.time_spent(), TABLE_WIDTH, subsequent_indent="  ",
                        break_on_hyphens=False))



def check_options(args: argparse.Namespace) -> CheckOptions:
    """The options of a check that the command line sets (its spec flags aside)."""
    from ...engine.cases import Budget

    quick = args.quick
    # A budget given bounds the whole check, the ladders of sizes too; the default one is
    # spent past ladders walked whole, so that a default check's claim reaches every scale
    # to the device's largest n (bounded at 30 s, correct GPU kernels ended "partial" at
    # 2**20-2**23 on an H200).
    seconds = DEFAULT_BUDGET - NOT_SEARCH if args.budget is None else args.budget
    budget = Budget(seconds, args.examples or Budget.max_examples, args.max_n,
                    bounded=args.budget is not None)
    return CheckOptions(budget=budget, seconds=seconds, timeout=args.timeout,
                        large=False if quick else (True if args.large else None),
                        sanitize=() if quick else (tuple(args.sanitize)
                                                   if args.sanitize is not None else None),
                        workers=args.workers)



def cmd_check(args: argparse.Namespace) -> int:
    from ...isolation.parent import UsageError, check_isolated
    from ...targets.spec import spec_flag

    output_path(args.json, "--json")
    output_path(args.report, "--report")
    overrides = spec_overrides(args)
    if args.controls:
        if overrides:  # each control declares what it computes: a flag would unmake it
            raise ValueError(f"argument --controls: spec flags apply to TARGETs, not to the "
                             f"negative controls ({', '.join(map(spec_flag, overrides))} given)")
    if args.report and (args.repeat is not None or args.only or args.controls):
        by = "--repeat" if args.repeat is not None else "--only" if args.only else "--controls"
        raise ValueError(f"argument --report: {by} writes no report (a report is of TARGETs "
                         f"checked once); leave --report out, or take --json")
    if args.repeat is not None or args.only:
        from ..jobs.stability import repeated

        return repeated(args.controls, args.only, args.targets, overrides, args.repeat or 1,
                        check_options(args), args.jobs, args.json)
    if args.controls:
        if args.targets:
            raise ValueError(f"argument --controls: it runs the negative controls alone "
                             f"({', '.join(args.targets)} given); check TARGETs in a run of "
                             f"their own, or give --repeat N to check both N times")
        return run_controls(args)
    if not args.targets:
        print("scancheck check: error: name at least one TARGET, or --controls", file=sys.stderr)
        return 2
    refuse_unavailable(args.targets)
    options = replace(check_options(args), overrides=overrides)
    gpu = round_robin(args.targets)

    def check(name: str) -> Any:
        try:
            return check_isolated(name, replace(options, gpu=gpu.get(name)),
                                  progress=progress.task(name))
        except UsageError as exc:  # the others' reports are kept, and it is named
            return exc

    with Progress() as progress:
        results = each(args.targets, check, args.jobs)
    unchecked = [(name, str(r)) for name, r in zip(args.targets, results)
                 if isinstance(r, UsageError)]
    reports = [r for r in results if not isinstance(r, UsageError)]
    for rep in reports:
        print_report(rep, args.report)
        print_known(rep)
    from ...engine.report import ranked_exit

    # A target that could not be checked ranks as one with nothing checked.
    status = ranked_exit([rep.exit_status for rep in reports] + [2] * bool(unchecked))
    if reports:
        # Targets' names whole where they fit beside 20 columns of diagnosis, else their
        # ends: two names that differ at their ends stay told apart (the diagnoses are whole
        # above, and the reasons a target was not checked below).  Every target named has
        # its row, in the order named.
        name = min(max(26, *(len(r.target) for r in reports)), 48)
        rows = fit_columns([{"target": r.target,
                             "verdict": r.verdict_word.replace("DOES NOT CONFORM", "FAILS"),
                             "largest n": f"{r.reached:,}", "seconds": round(r.seconds),
                             "diagnosis": r.summary} if not isinstance(r, UsageError) else
                            {"target": target, "verdict": "not checked", "largest n": "-",
                             "seconds": "-", "diagnosis": "usage error (below)"}
                            for target, r in zip(args.targets, results)],
                           {"target": name, "diagnosis": min(36, 68 - name)}, ends=("target",))
        if gpu:  # which GPU ran what
            for row, target in zip(rows, args.targets):
                row["GPU"] = gpu[target]
        print(format_table(rows, title="\nsummary"))
    for _, why in unchecked:
        print(f"scancheck check: error: {why}", file=sys.stderr)
    write_json(args.json, reports, unchecked)
    if args.report and reports:
        from ..reports.markdown import markdown

        with writing(args.report, "--report"):
            markdown(reports, args.report)
        print(f"report written to {args.report}")
    return status



def round_robin(items: list) -> dict[Any, str]:
    """With several GPUs visible, each item's GPU, round-robin (none pinned with one)."""
    from ...core.devices import visible_gpus

    gpus = visible_gpus()
    return {item: gpus[k % len(gpus)] for k, item in enumerate(items)} if len(gpus) > 1 else {}



def refuse_unavailable(names: list[str]) -> None:
    """A ValueError naming a target that is none of the target forms, or each built-in
    target that cannot run on this machine (its library or a GPU missing), before any check
    starts: a long run is not spent to learn that."""
    from ...adapters import row
    from ...targets.resolve import unknown_name

    unknown = [why for name in names if (why := unknown_name(name))]
    if unknown:
        raise ValueError(f"argument TARGET: nothing was checked: {'; '.join(unknown)}")
    # Each name loads its own library's table alone, and no library is imported to ask.
    found = [(name, row(name)) for name in names]
    unrun = [f"{name!r} ({why})" for name, r in found if r is not None and (why := r.unavailable())]
    if unrun:
        raise ValueError(f"argument TARGET: {', '.join(unrun)} cannot run here; nothing was "
                         f"checked (install what is missing, or leave the target out)")



def each(items: list, check: Callable[[Any], Any], jobs: int) -> list:
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
            # A line each, cut to fit a terminal: the reports and errors come whole later.
            if isinstance(result, Exception):  # a check that could not run, said so
                if len(items) > 1:  # one target's is the error printed at the end, alone
                    print(cut_words(f"[{done}/{len(items)}] {result}"), flush=True)
                continue
            rep = result[0] if isinstance(result, tuple) else result
            verdict = "conforms" if rep.passed else known_first(rep) + rep.summary
            print(cut_words(f"[{done}/{len(items)}] {rep.target} ({rep.seconds:.0f} s): {verdict}"),
                  flush=True)
    return reports


def known_first(rep: Any) -> str:
    """"known (KEY, ...): " where known bugs of the installed version explain every failure
    of ``rep``, "new beside known (KEY, ...): " where they explain some, so that a long check
    tells them as each target ends; "" where none does."""
    from ...adapters import known_for
    from ...adapters.known import explain, unexplained

    bugs = known_for(rep.target)
    keys = ", ".join(dict.fromkeys(bug.key for bug, _ in explain(rep, bugs)))
    if not keys:
        return ""
    return f"new beside known ({keys}): " if unexplained(rep, bugs) else f"known ({keys}): "



def write_json(path: str | None, reports: list,
                unchecked: list[tuple[str, str]] | tuple = ()) -> None:
    """The reports as a JSON list, and a record of each target not checked, with why."""
    if path:
        records = [r.to_json() for r in reports] + [
            json.dumps({"target": name, "not checked": why}) for name, why in unchecked]
        with writing(path, "--json"), open(path, "w") as fh:
            fh.write("[" + ",\n".join(records) + "]\n")
        print(f"report written to {path}")



def run_controls(args: argparse.Namespace) -> int:
    from ...controls import CONTROLS
    from ...core.devices import gpu_available

    gpu = gpu_available()[0]
    options = check_options(args)
    # Each control shows what the whole ladder catches: its budget bounds the draws only.
    options = replace(options, budget=replace(options.budget, bounded=False))
    todo = [c for c in CONTROLS if gpu or not c.gpu]
    gpu = round_robin([c.name for c in todo])
    with Progress() as progress:
        checked = dict(zip([c.name for c in todo], each(todo, lambda c: c.check(
            options=replace(options, gpu=gpu.get(c.name)), progress=progress.task(c.name)),
            args.jobs)))
    rows, caught = [], 0
    for c in CONTROLS:
        # Each about the words the diagnosis was to hold, which then show in both.
        expected = around(c.expected, c.expect, 30)
        if c.name not in checked:
            rows.append({"control": c.name, "expected": expected,
                         "diagnosis": "skipped: no GPU", "caught": "-"})
            continue
        rep, ok = checked[c.name]
        caught += ok
        told = rep.diagnosis or rep.summary or rep.verdict_word.lower()
        rows.append({"control": c.name, "expected": expected,
                     "diagnosis": around(told, c.expect, 30), "seconds": round(rep.seconds),
                     "caught": "yes" if ok else "NO"})
    run = len(checked)
    for name, (rep, ok) in checked.items():
        if not ok:
            print(f"\n{name} was not caught as expected:")
            print_report(rep)
    write_json(args.json, [rep for rep, _ in checked.values()])
    print(format_table(fit_columns(rows, {"control": 24, "expected": 30, "diagnosis": 30}),
                       title="\nnegative controls"))
    unrun = len(CONTROLS) - run
    print(f"\nscore: {caught} of {run} negative controls caught with the right diagnosis"
          + (f" ({unrun} not run: no GPU)" if unrun else ""))
    if caught < run and args.budget is not None and args.budget < DEFAULT_BUDGET:
        # A bug at some sizes only is met by the search's draws, which the budget bounds.
        import textwrap

        print(textwrap.fill(f"(at --budget {args.budget:g}, below check's default of "
                            f"{DEFAULT_BUDGET:g} s at which the controls are scored: a control "
                            f"met only by the search's draws may need more)", TABLE_WIDTH))
    return 0 if caught == run else 1
