"""``scancheck``: the command line.

    scancheck verify              every variant: interval proof, hazards, bounds, kernels
    scancheck bench [--oracle]    GPU bandwidth against memcpy, or exact-oracle throughput
    scancheck sanitize VARIANT    a kernel under compute-sanitizer racecheck and synccheck
    scancheck precision           seed 004's float "bug", reproduced and explained
    scancheck explain IN OUT      is a computed scan's error rounding or a bug?
    scancheck check TARGET        conformance of any scan implementation
    scancheck matrix              pandas, polars, pyarrow, dask, numba and JAX scans, one table
    scancheck known               known bugs of the libraries checked, with their links
    scancheck hunt                every library scan and mode here, checked: one table
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ...core.dtypes import DTYPES
from ..spec_flags import (
    add_spec_flags,
    block_size,
    did_you_mean,
    misplaced_convention,
    pattern,
    positive,
    reverse_forms,
    whole,
)
from .check import DEFAULT_BUDGET, cmd_check
from .commands import (
    cmd_bench,
    cmd_explain,
    cmd_hunt,
    cmd_known,
    cmd_matrix,
    cmd_precision,
    cmd_sanitize,
    cmd_verify,
)

#: The metavar of the positional arguments that are targets (check's and matrix's).
TARGET = "TARGET"


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (what was wrong, naming the argument), and
    an epilog computed only when help is asked for (``epilog_from``)."""

    epilog_from: Callable[[], str] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # A flag is taken whole: an abbreviation a script relies on would change meaning, or
        # fail, once a flag that shares its start is added.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)

    def format_help(self) -> str:
        if self.epilog_from is not None:
            self.epilog = self.epilog_from()
        return super().format_help()

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # Where argparse refuses a choice, with the action and the value at hand (no
        # message to read): a flag of several values takes a TARGET after them for one more.
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            if action.nargs not in ("+", "*") or not self._takes_targets() or not (
                    isinstance(value, str) and _looks_like_target(value)):
                raise
            raise self._target_first(action, exc, value) from None

    def _get_value(self, action: argparse.Action, text: str) -> Any:
        # Where a flag's type refuses a value (--ndim numpy.cumsum), as _check_value does; a
        # value of the flag's own form with a colon in it (--promote bool:int65) is no TARGET.
        try:
            return super()._get_value(action, text)
        except argparse.ArgumentError as exc:
            if not action.option_strings or not self._takes_targets() or not _looks_like_target(
                    text, colon_form=False):
                raise
            raise self._target_first(action, exc, text) from None

    def _target_first(self, action: argparse.Action, exc: argparse.ArgumentError,
                      value: str) -> argparse.ArgumentError:
        """``exc`` with the hint that ``value`` may be the TARGET, put after the flag."""
        flag = action.option_strings[-1]
        more = f", or end {flag}'s values with --" if action.nargs in ("+", "*") else ""
        return argparse.ArgumentError(
            action, f"{exc.message}; {value!r} looks like a {TARGET}: put {TARGET} first{more}")

    def _takes_targets(self) -> bool:
        return any(a.metavar == TARGET for a in self._actions if not a.option_strings)


def _looks_like_target(text: str, colon_form: bool = True) -> bool:
    """Whether ``text`` has a target's form: module:function (with ``colon_form``; else only
    a dotted module's or a path's), file.py, FILE.cu, a file that exists, or a built-in
    name."""
    head = text.rpartition(":")[0]
    if ":" in text and (colon_form or "." in head or "/" in head):
        return True
    if text.endswith((".py", ".cu")) or os.path.exists(text):
        return True
    from ...adapters import names  # only for a value already refused: loads every table

    return text in names()


class _Version(argparse.Action):
    """``--version``: prints the installed distribution's version and exits 0 (read only
    then: it walks the installed distributions)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        import importlib.metadata

        try:
            version = importlib.metadata.version("scancheck")
        except importlib.metadata.PackageNotFoundError:  # run from a source tree
            version = "(not installed: pip install -e . gives it a version)"
        print(f"scancheck {version}")
        parser.exit(0)


def _plain(text: str) -> str:
    """``text`` with its reST inline markup as the text it marks: ``x`` as x, :role:`x` as x
    (``~a.b`` as b), for help a terminal shows."""
    text = re.sub(r":[a-z]+:`(~?)([^`]*)`",
                  lambda m: m.group(2).split(".")[-1] if m.group(1) else m.group(2), text)
    return re.sub(r"``([^`]+)``", r"\1", text)


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


def builtin_availability() -> tuple[list[str], dict[str, int]]:
    """The built-in target names this machine can run, read from the table of built-in
    targets, and how many more need each package (or a GPU) it lacks."""
    from collections import Counter

    from ...adapters import all_rows

    here, lacked = [], Counter[str]()
    for r in all_rows():
        lacks = r.lacking()
        lacked.update(lacks)
        if not lacks and not r.refused:
            here.append(r.name)
    return here, dict(sorted(lacked.items()))


def _builtin_epilog() -> str:
    """:func:`builtin_availability` as ``check --help`` ends: each name quoted where the
    shell needs it and never broken across lines."""
    here, lacked = builtin_availability()
    lines = ["built-in targets this machine can run:", ""]
    for name in here:
        item = f"'{name}'" if " " in name or "(" in name else name
        if len(lines[-1]) + len(item) + 3 > _HELP_WIDTH - 2:
            lines[-1] += ","
            lines.append("")
        lines[-1] += (", " if lines[-1] else "  ") + item
    if lacked:
        import textwrap

        need = ", ".join(f"{what} ({count})" for what, count in lacked.items())
        lines += ["", *textwrap.wrap(f"and more that need what this machine lacks, by what they "
                                     f"need: {need}; docs/conformance-matrix.md lists every one",
                                     _HELP_WIDTH - 2)]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scancheck", description=_plain(__doc__ or ""),
                     formatter_class=_formatter)
    parser.add_argument("--version", action=_Version, help="print scancheck's version and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("verify", help="verify every registered scan variant")
    p.add_argument("--block", type=functools.partial(block_size, least=2), default=64,
                   help="threads per block, a power of two from 2 (at one, no threads "
                        "combine; default 64; a variant that needs more runs at its least)")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("bench", help="GPU bandwidth table, or --oracle for the exact oracle")
    p.add_argument("--oracle", action="store_true",
                   help="exact-oracle throughput on the CPU, and on the GPU where there is one")
    p.add_argument("--log2-sizes", nargs="+", type=whole(1, 34),
                   help="log2 of the sizes (default 16 20 24 28 30; those over free device "
                        "memory are skipped)")
    p.add_argument("--dtypes", nargs="+", choices=["float32", "float64", "int32", "int64"],
                   help="element types of the scans' table (default: all four)")
    p.add_argument("--reps", type=positive(int),
                   help="timed runs of each scan after its warm-up, the median kept "
                        "(default 20)")
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--tune", metavar="PATH",
                   help="time every candidate launch of the look-back instead, into PATH, and "
                        "write this device's launch table beside it")
    p.add_argument("--oracle-dists", nargs="*", metavar="DIST",
                   help="data distributions the exact oracle is timed on: normal, or those of "
                        "the strategies (default: all; none given: the scans' table alone, "
                        "which --oracle refuses)")
    p.add_argument("--oracle-sizes", nargs="+", metavar="LOG2",
                   help="log2 of the sizes the exact oracle is timed at: the CPU table those up "
                        "to 22 (default 20), the device table each (default 20 24 28)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("precision", help="seed 004's float32 'bug', reproduced and explained")
    p.add_argument("--n", type=positive(int),
                   help="elements of the scan (default: the practical's 1,000,000)")
    p.add_argument("--distribution", metavar="DIST",
                   help="the data, one of the check's distributions (default: integers, the "
                        "practical's integer-valued floats in [0, 1000); another name is "
                        "refused with the list)")
    p.add_argument("--seed", type=whole(0, 2**32 - 1),
                   help="seed of the data (default 8)")
    p.add_argument("--practical", action="store_true",
                   help="the practical's own data, reference and RMS: its two figures judged")
    p.add_argument("--sweep", action="store_true", help="also sweep n from 2^10 up")
    p.add_argument("--max-log2", type=whole(10, 30, "the sweep's sizes run from 2**10 to "
                                           "2**30"),
                   help="largest log2 n of the sweep (default 22 on the CPU models, 30 on a GPU; "
                        "the CPU models take about 150 bytes an element)")
    p.add_argument("--plot", help="write the sweep's log-log plot to this PNG")
    p.set_defaults(func=cmd_precision)

    p = sub.add_parser("explain", help="is a computed scan's error rounding or a bug?")
    p.add_argument("input", metavar="INPUT", help=".npy, .npz[:KEY] or a text file of numbers")
    p.add_argument("result", metavar="RESULT", help="the computed scan of INPUT, same forms; of "
                   "INPUT's dtype or a wider one (INPUT is then judged promoted to it)")
    p.add_argument("--reference", metavar="REF", help="a reference scan it was compared with, of "
                   "RESULT's dtype or a wider one (float64 for a float32 RESULT)")
    p.add_argument("--op", choices=["add", "max", "min"], default="add",
                   help="the operator RESULT scans with (default add)")
    p.add_argument("--exclusive", action="store_true", help="RESULT is an exclusive scan")
    p.add_argument("--dtype", choices=DTYPES, metavar="DTYPE",
                   help="element dtype of text files (default float32): "
                        + ", ".join(DTYPES))
    p.add_argument("--json", help="also write the explanation to this file")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("check", help="conformance of scan implementations, or --controls",
                       description="Check that each TARGET computes what it declares.",
                       formatter_class=_formatter)
    p.epilog_from = _builtin_epilog  # type: ignore[attr-defined]
    p.add_argument("targets", nargs="*", metavar=TARGET, help="a built-in name (below), "
                   "kernel:VARIANT, model:VARIANT, FILE.cu, package.module:function or "
                   "path/to/file.py:function")
    p.add_argument("--controls", action="store_true", help="run the negative controls, print the score")
    add_spec_flags(p)
    p.add_argument("--budget", type=positive(float), default=None, metavar="SECONDS",
                   help="seconds the whole check of a target may take, shared among its "
                   "properties, their ladders of sizes included (what the target's first call "
                   "of each dtype, rank, layout and combine takes beyond its second, a "
                   "library's compile, not counted); a property whose time runs "
                   "out is 'slow' (the target's calls took it) or 'partial' (the checking "
                   "did) with the largest n it reached, and the exit status is 3; a failure "
                   f"found is still shrunk.  Without it: about {DEFAULT_BUDGET:g} s of wall time, "
                   "searching past ladders walked whole, to 2**24 on a GPU and 2**20 on a CPU "
                   "(a GPU target's sanitizer runs and checks past 2**31 come on top).  A "
                   "call that never returns is cut by --timeout, not by the budget")
    p.add_argument("--examples", type=positive(int),
                   help="Hypothesis examples per property at most (default: no cap but time)")
    p.add_argument("--max-n", type=positive(int),
                   help="largest n searched (default 2**24 for GPU targets, 2**20 for CPU ones)")
    p.add_argument("--large", action="store_true",
                   help="check n = 2**31 + 17 and 2**32 + 17 for CPU targets too (GPU ones: always)")
    p.add_argument("--quick", action="store_true",
                   help="skip the sanitizers and the checks past 2**31 and 2**32")
    p.add_argument("--timeout", type=positive(float), default=60,
                   help="seconds one call of the target may run before it is a hang "
                        "(default 60), whatever --budget is left")
    p.add_argument("--sanitize", nargs="*", choices=["racecheck", "synccheck", "memcheck", "initcheck"],
                   help="compute-sanitizer tools (default: all four for GPU targets)")
    p.add_argument("--json", help="write the reports to this file")
    p.add_argument("--report", metavar="FILE.md", help="write a report people read: verdicts, "
                   "a snippet reproducing each failure, the environment")
    p.add_argument("--jobs", type=positive(int), default=1, help="targets checked at once")
    p.add_argument("--workers", type=positive(int),
                   help="child processes per target at once (default: half the cores)")
    p.add_argument("--repeat", type=positive(int), metavar="N", help="check each TARGET (or "
                   "control) N times, the search's draws fresh each time (the ladder's fixed), "
                   "and print how stable its diagnosis is: "
                   "the primary diagnoses seen, the smallest n of each run, and for a "
                   "control how many runs caught it (k of N) "
                   "(exit 1 where one was missed or got two, or a TARGET failed, as check exits); --json "
                   "writes a line per run")
    p.add_argument("--only", action="append", metavar="NAME", help="with --controls: "
                   "check only the controls whose name contains NAME (repeatable)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("matrix", help="the library matrix: pandas, polars, pyarrow, dask, "
                       "numba and JAX scans on the CPU, each under its declared contract",
                       description="The CPU scans of pandas, polars, pyarrow, dask, numba and "
                       "JAX installed here (pip install -e '.[libs]'), each under the contract "
                       "its library documents, in one table.")
    add_matrix_arguments(p)
    p.set_defaults(func=cmd_matrix)

    p = sub.add_parser("known", help="known bugs of the libraries checked: versions, status, "
                       "upstream links", description="The registry of known bugs of the "
                       "libraries whose scans scancheck checks: a check that meets one says "
                       "'known upstream: <link>' beside its diagnosis.")
    p.add_argument("--reproduce", action="store_true", help="run each standalone reproducer "
                   "that can run here and show what it says: still reproduces, or fixed in "
                   "a version")
    p.add_argument("--timeout", type=positive(float), default=600,
                   help="seconds one reproducer may run (default 600)")
    p.set_defaults(func=cmd_known)

    p = sub.add_parser("hunt", help="every library scan API and mode this machine can run, "
                       "checked: one table, and a reproducer for each new finding",
                       description="Check every built-in library target of a part at its "
                       "declared contract; write the table of every API and mode with its "
                       "verdict, and for each failure no known bug explains a standalone "
                       "reproducer, run once.")
    p.add_argument("--part", choices=["cpu", "gpu", "all"], default="all",
                   help="the targets that need no GPU (cpu), those that do (gpu), or both "
                   "(default; those that cannot run here are listed so)")
    p.add_argument("--jobs", type=positive(int), default=None,
                   help="targets checked at once, each in a process of its own (default: "
                   "the cores less two, at least 1)")
    p.add_argument("--budget", type=positive(float), default=20.0, metavar="SECONDS",
                   help="seconds each target's check may take, what its first call of each "
                   "dtype, rank, layout and combine takes beyond its second (a compile) not "
                   "counted (default 20)")
    p.add_argument("--timeout", type=positive(float), default=60,
                   help="seconds one call of the target may run before it is a hang "
                        "(default 60), whatever --budget is left")
    p.add_argument("--max-n", type=positive(int),
                   help="largest n each target's check searches (default 2**24 for GPU "
                        "targets, 2**20 for CPU ones)")
    p.add_argument("--only", metavar="REGEX", type=pattern,
                   help="only the targets whose name holds a match of REGEX (re.search: "
                        "'^numpy\\.cumsum$' is that one name alone)")
    p.add_argument("--out", default="hunt-out", help="folder of the part's JSON and table "
                   "and of the reproducers (default hunt-out)")
    p.add_argument("--merge", nargs="+", metavar="JSON", help="instead: join the parts' "
                   "hunt-PART.json into one table")
    p.add_argument("--write", metavar="PAGE", help="write the table into PAGE (a Markdown "
                   "page: docs/conformance-matrix.md)")
    p.set_defaults(func=cmd_hunt)

    p = sub.add_parser("sanitize", help="run one kernel under compute-sanitizer")
    p.add_argument("variant", help="a kernel of scancheck's table (scancheck verify lists "
                   "them)")
    p.add_argument("--n", type=positive(int), default=256,
                   help="elements of the input it scans (default 256)")
    p.add_argument("--block", type=block_size, default=256,
                   help="threads per block, a power of two (default 256)")
    p.add_argument("--dtype", default="float32",
                   help="its element type (default float32)")
    p.add_argument("--op", default="add", help="its operator (default add)")
    p.add_argument("--tools", nargs="+", default=["racecheck", "synccheck"],
                   choices=["racecheck", "synccheck", "memcheck", "initcheck"], metavar="TOOL",
                   help="compute-sanitizer tools, each run apart: racecheck, synccheck, "
                        "memcheck, initcheck (default: racecheck synccheck)")
    p.set_defaults(func=cmd_sanitize)
    for command in sub.choices.values():  # every command's help fits the same width
        command.formatter_class = _formatter
    return parser


def add_matrix_arguments(parser: argparse.ArgumentParser) -> None:
    """The matrix's options on ``parser``."""
    parser.add_argument("targets", nargs="*", metavar=TARGET,
                        help="with --markdown: library scans (default: every one here)")
    parser.add_argument("--budget", type=positive(float), metavar="SECONDS",
                        help="seconds a cell of the library table may take (default 6), or "
                        "with --markdown a property (default 3)")
    parser.add_argument("--max-n", type=positive(int), help="largest n of a cell (default "
                        "2**20)")
    parser.add_argument("--workers", type=positive(int), default=min(8, os.cpu_count() or 1),
                        help="cells checked at once, each in a process of its own")
    parser.add_argument("--markdown", action="store_true", help="instead: every library scan "
                        "here at every dtype it declares, as Markdown (the GPU suite's matrix)")


def _did_you_mean(parser: argparse.ArgumentParser, command: str, left: list[str]) -> str:
    """" (did you mean --budget?)" for the flags among ``left`` near ``command``'s own
    (:func:`~scancheck.faces.spec_flags.did_you_mean`), or ""."""
    sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    return did_you_mean(sub, left)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``scancheck`` console script."""
    from ...core.loading import shadowed
    from ...core.locks import LockRefused

    # Before any target is loaded: a target that cannot be is not to be blamed for it.
    wrong = shadowed()
    if wrong is not None:
        print(f"scancheck: error: {wrong}", file=sys.stderr)
        return 2
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args, left = parser.parse_known_args(reverse_forms(argv))
    misplaced = misplaced_convention(argv, left) if left else None
    if (left and not misplaced and args.command == "check"
            and not any(a.startswith("-") for a in left)):
        # TARGETs after the options (argparse takes one run of positionals): checked too.
        args.targets, left = [*args.targets, *left], []
    if left:  # as parse_args, but a convention mistyped after --reverse is told as such,
        # and either named as the command's own errors are
        wrong = misplaced or (f"unrecognized arguments: {' '.join(left)}"
                              + _did_you_mean(parser, args.command, left))
        print(f"scancheck {args.command}: error: {wrong}", file=sys.stderr)
        return 2
    try:
        status = args.func(args)
        sys.stdout.flush()  # here, where a reader gone away is caught, not at exit
        return status
    # Bad arguments, a target that cannot be loaded or cannot run on this machine, an
    # unsafe lock directory: exit 2 saying what was wrong, no traceback.  Only a target's
    # behaviour exits 1.
    except (ValueError, LockRefused) as exc:  # named as argparse names its own errors
        print(f"scancheck {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as SIGPIPE would
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + 13

