"""pytest plugin: ``pytest --scan-target=TARGET -n auto`` runs scancheck's conformance
properties against TARGET (a built-in name, ``kernel:VARIANT``, ``model:VARIANT``, a
``.cu`` file, ``package.module:function`` or ``path/to/file.py:function``), one test per
property; ``--scan-large`` adds one test for the checks past 2**31 and 2**32 elements and
``--scan-sanitize TOOL`` one per compute-sanitizer tool.

Each test checks with :func:`scancheck.isolation.parent.check_isolated`: the target runs in a child
process, so a fault, an exit or a hang is that test's failure and the session goes on.  The
targets are checked once before collection (a user's in a child of its own): one that
cannot be loaded is a usage error, one that cannot run here skips its tests, and checks that
do not apply to its spec skip without a child.  Given ``--scan-target`` and no paths, pytest
collects only the shipped suite (``scancheck/faces/plugin/conformance_suite.py``), whatever the project's
``testpaths``; its node ids (``.../conformance_suite.py::test_conformance[TARGET-check]``)
run again when passed back.  This module imports only pytest and the standard library:
scancheck's engine (NumPy, numba, Hypothesis) loads only in a session given
``--scan-target``.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ...isolation.sanitizer import TOOLS

if TYPE_CHECKING:
    from ...engine.options import CheckOptions

#: The test module ``--scan-target`` collects.
SUITE = Path(__file__).with_name("conformance_suite.py")
_SUITE_MODULE = "scancheck.faces.plugin.conformance_suite"
#: Locator prefixes resolved in this process to learn the spec: they load scancheck's own
#: kernels and library wrappers, never a user's module or a CUDA compilation.
_LOCAL_PREFIXES = ("builtin:", "kernel:", "model:", "scancheck:")
#: What suite node ids given back select (the part after the path).
_PICKS = pytest.StashKey[list]()
#: Per target, the checks answered without a child: check name -> why it skips.
_KNOWN = pytest.StashKey[dict]()
#: The TargetSpec fields --scan-spec names, parsed once a process.
_SPEC = pytest.StashKey[dict]()
#: The check that runs the checks past 2**31 and 2**32 elements, all in one child.
LARGE_CHECK = "large"


def _positive(kind: Callable[[str], Any], allowed: str) -> Callable[[str], Any]:
    """An argparse type accepting a finite number > 0 of ``kind`` (else a usage error
    saying what is allowed)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}; allowed: {allowed}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{text!r} is out of range; allowed: {allowed}")
        return value

    parse.__name__ = allowed  # argparse names the type by it in its own messages
    return parse


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("scancheck")
    group.addoption("--scan-target", action="append", default=[],
                    help="check this scan implementation's conformance, one test per property "
                         "(repeatable); without paths, only these tests run")
    group.addoption("--scan-budget", type=_positive(float, "seconds > 0"), default=30.0,
                    help="seconds each conformance property may search (default 30): "
                         "each property is a test of its own, where `scancheck check "
                         "--budget` shares its seconds among a target's properties")
    group.addoption("--scan-examples", type=_positive(int, "an integer >= 1"), default=None,
                    help="Hypothesis examples per conformance property at most (default: no "
                         "cap, the budget's seconds end each search)")
    group.addoption("--scan-max-n", type=_positive(int, "an integer >= 1"), default=None,
                    help="largest n searched (default 2**24 for GPU targets, 2**20 for CPU ones)")
    group.addoption("--scan-timeout", type=_positive(float, "seconds > 0"), default=60.0,
                    help="seconds one case may run before it is a hang (default 60)")
    group.addoption("--scan-large", action="store_true",
                    help="also check past 2**31 and 2**32 elements, one test per target (off "
                         "by default: it needs most of a GPU's memory and takes minutes)")
    group.addoption("--scan-spec", metavar="FLAGS", default="",
                    help="what the target computes, as the spec flags of `scancheck check` in "
                         "one argument: --scan-spec='--reverse --op max' (each replaces that "
                         "field of every --scan-target's declared spec)")
    group.addoption("--scan-sanitize", action="append", default=[], choices=TOOLS,
                    metavar="TOOL",
                    help=f"also run the target under this compute-sanitizer tool, one test each "
                         f"(repeatable; one of {', '.join(TOOLS)}; off by default)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    """With ``--scan-target``, the suite's directory is where pytest collects when no path
    is given (before pytest falls back to ``testpaths`` and loads their conftests); a suite
    node id given back becomes that directory plus a selection made at collection."""
    known = early_config.known_args_namespace
    if not getattr(known, "scan_target", None):
        return
    here = early_config.invocation_params.dir
    given = list(known.file_or_dir or ())
    picks = {a: _suite_pick(a, here) for a in given}
    kept = [a for a in given if picks[a] is None]
    # pytest parses ``args`` again after this hook: editing the list in place is what makes
    # the suite's directory a path of the session.  xdist workers get the original
    # arguments and run this hook themselves, to the same effect.
    args[:] = [a for a in args if a not in picks or a in kept]
    if len(kept) < len(given) or not given:
        args.append(str(SUITE.parent))
        kept.append(str(SUITE.parent))
    known.file_or_dir = kept
    early_config.stash[_PICKS] = [p for p in picks.values() if p]


def _suite_pick(arg: str, here: Path) -> str | None:
    """What ``arg`` selects of the suite where it names the suite (``""``: all of it), by
    module (``scancheck.faces.plugin.conformance_suite::...``), by its path, or by a path as printed from
    another directory that is not there from here; None for any other argument."""
    base = arg.partition("[")[0]
    path = base.partition("::")[0]
    where = here / path
    if (path == _SUITE_MODULE or (where.exists() and where.resolve() == SUITE.resolve())
            or (Path(path).name == SUITE.name and not where.exists())):
        return arg[len(path) + 2:]
    return None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # The suite's directory is scancheck itself: nothing else in it is a test.
    if (config.getoption("scan_target") and collection_path.parent == SUITE.parent
            and collection_path != SUITE):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if file_path != SUITE or not parent.config.getoption("scan_target"):
        return None
    # Where the project's python_files match the suite, pytest's own hook collects it.
    if any(fnmatch.fnmatch(SUITE.name, pattern) for pattern in parent.config.getini("python_files")):
        return None
    return pytest.Module.from_parent(parent, path=file_path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from .known_xfail import mark_known

    mark_known(items)  # a known upstream bug: a strict xfail carrying its link
    picks = config.stash.get(_PICKS, [])
    if not picks:
        return
    # A suite node id given back: keep the tests it names; the rest of the suite is
    # deselected, tests from other paths are kept.
    keep, drop = [], []
    for item in items:
        tail = item.nodeid.partition("::")[2]
        chosen = item.path != SUITE or any(tail == p or tail.startswith((p + "[", p + "::"))
                                           for p in picks)
        (keep if chosen else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_configure(config: pytest.Config) -> None:
    targets = config.getoption("scan_target")
    if not targets:
        return
    config.addinivalue_line("markers", "conformance: a scancheck conformance property")
    if hasattr(config, "workerinput") or config.option.help:
        return  # an xdist worker is told by the controller (pytest_configure_node)
    from ...core.loading import shadowed

    if (wrong_import := shadowed()) is not None:  # before a target is blamed for it
        raise pytest.UsageError(f"scancheck: {wrong_import}")
    timeout = config.getoption("scan_timeout")
    try:
        given = spec_overrides(config)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    # A user's target loads in a child of its own (a second or more each): all at once.
    theirs = [t for t in dict.fromkeys(targets) if not _is_local(t)]
    with ThreadPoolExecutor(max_workers=max(1, len(theirs))) as pool:
        loaded = dict(zip(theirs, pool.map(lambda t: _known_skips(t, timeout, given), theirs)))
    found = {t: loaded[t] if t in loaded else _known_skips(t, timeout, given) for t in targets}
    wrong = [f"--scan-target {t}: {error}" for t, (_, error) in found.items() if error]
    if wrong:
        wrong.append("(where a flag of scancheck check is named above, it goes, under pytest, "
                     "in one argument: --scan-spec='--axis arg', say)")
        raise pytest.UsageError("\n".join(wrong))
    config.stash[_KNOWN] = {t: skips for t, (skips, _) in found.items()}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Each xdist worker learns what the controller found of the targets, not loading them
    again."""
    node.workerinput["scancheck_known"] = node.config.stash.get(_KNOWN, {})


class _SpecFlags(argparse.ArgumentParser):
    """The spec flags of ``scancheck check``, a mistake a ValueError naming --scan-spec."""

    def error(self, message: str) -> Any:
        raise ValueError(f"--scan-spec: {message}")


def spec_overrides(config: pytest.Config) -> dict[str, Any]:
    """The TargetSpec fields ``--scan-spec`` names, and their values (none: {}); a ValueError
    saying what was wrong with it."""
    import shlex

    from ..spec_flags import add_spec_flags, did_you_mean
    from ..spec_flags import spec_overrides as overrides

    if _SPEC in config.stash:  # each test's options ask again
        return config.stash[_SPEC]
    text = config.getoption("scan_spec")
    parser = _SpecFlags(prog="--scan-spec", add_help=False, allow_abbrev=False)
    add_spec_flags(parser)
    try:
        flags, extra = parser.parse_known_args(shlex.split(text))
    except argparse.ArgumentError as exc:
        raise ValueError(f"--scan-spec: {exc}") from None
    if extra:
        # check's options that are not spec flags are options of pytest's own here.
        own = {f"--{name}": f"--scan-{name}" for name in
               ("budget", "timeout", "max-n", "examples", "large", "sanitize")}
        moved = [f"{flag} is {own[flag]}" for flag in
                 dict.fromkeys(a.partition("=")[0] for a in extra) if flag in own]
        raise ValueError(f"--scan-spec: unrecognized arguments: {' '.join(extra)}"
                         + (f" (not spec flags: under pytest {', '.join(moved)})" if moved
                            else did_you_mean(parser, extra)))
    given = overrides(flags)
    config.stash[_SPEC] = given
    return given


def _is_local(locator: str) -> bool:
    """Whether ``locator`` names one of scancheck's own targets (resolved here, cheaply)."""
    return locator.startswith(_LOCAL_PREFIXES) or (":" not in locator
                                                   and not locator.endswith(".cu"))


def _known_skips(locator: str, timeout: float, overrides: dict[str, Any]
                 ) -> tuple[dict[str, str], str | None]:
    """The checks of ``locator`` (its spec as ``overrides`` amend it) that skip without a
    child (check -> why), and what is wrong where it cannot name a target at all (else None).
    scancheck's own targets resolve in this process; any other loads in a child, which may
    crash or hang without harm here."""
    from ...engine.checks import PROPERTIES, not_applicable

    if _is_local(locator):
        from ...targets.resolve import resolve

        try:
            target = resolve(locator, overrides=overrides)
        except ValueError as exc:
            return {}, str(exc)
        unavailable, spec = target.unavailable, target.spec
    else:
        from ...engine.options import CheckOptions
        from ...isolation.parent import EnvironmentProblem, UsageError, check_isolated
        from ...targets.spec import TargetSpec

        try:  # resolved and prepared, nothing run
            report = check_isolated(locator, CheckOptions(properties=(), large=False,
                                                          sanitize=(), timeout=timeout,
                                                          timeout_flag="--scan-timeout",
                                                          overrides=overrides))
        except EnvironmentProblem as exc:
            unavailable, spec = str(exc), None
        except UsageError as exc:
            return {}, str(exc)
        else:
            unavailable, spec = None, TargetSpec(**report.spec)
    if unavailable:
        why = f"{locator} is not available here: {unavailable}"
        return {c: why for c in (*PROPERTIES, LARGE_CHECK, *TOOLS)}, None
    skips = {p: not_applicable(spec, p) for p in PROPERTIES}
    return {p: why for p, why in skips.items() if why}, None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if "scan_target_name" in metafunc.fixturenames:
        names = list(dict.fromkeys(config.getoption("scan_target")))
        metafunc.parametrize("scan_target_name", names, ids=names)
    if "scan_check" in metafunc.fixturenames:
        from ...engine.checks import PROPERTIES

        checks = [*PROPERTIES, *[LARGE_CHECK] * config.getoption("scan_large"),
                  *dict.fromkeys(config.getoption("scan_sanitize"))]
        metafunc.parametrize("scan_check", checks, ids=[c.replace(" ", "-") for c in checks])


def run_check(config: pytest.Config, locator: str, check: str) -> tuple[str, str]:
    """Run ``check`` (a property, :data:`LARGE_CHECK` or a sanitizer tool) of the target
    ``locator`` names in child processes: ("pass", ""), ("skip", why), or ("fail", the
    verdict, and each failing check's diagnosis and smallest case)."""
    known = (config.workerinput.get("scancheck_known", {}) if hasattr(config, "workerinput")
             else config.stash.get(_KNOWN, {}))
    why = known.get(locator, {}).get(check)
    if why:
        return "skip", why
    from ...isolation.parent import EnvironmentProblem, UsageError, check_isolated

    try:
        report = check_isolated(locator, check_options(config, check))
    except EnvironmentProblem as exc:
        return "skip", f"{locator} is not available here: {exc}"
    except UsageError as exc:
        return "fail", f"{locator}: the target cannot be checked: {exc}"
    failed = [r for r in report.results if r.status not in ("pass", "skip")]
    if failed:
        from .known_xfail import raise_if_known

        raise_if_known(report)  # a known upstream bug's failure: the test's xfail
    if not failed:
        skipped = [r for r in report.results if r.status == "skip"]
        if len(skipped) == 1 == len(report.results):
            return "skip", skipped[0].diagnosis
        if report.results and len(skipped) == len(report.results):
            return "skip", "; ".join(f"{r.name}: {r.diagnosis}" for r in skipped)
        return "pass", ""
    lines = [f"{report.target}: {check}: {', '.join(r.status for r in failed)}",
             f"verdict: {report.diagnosis}"]
    from ...engine.diagnosis import Cause

    if report.verdict.cause is Cause.CONTRACT:  # its advice names check's flags
        flags = next((r.detail["contract"] for r in failed
                      if isinstance(r.detail.get("contract"), str)), "...")
        lines.append(f"(under pytest, the flags it names go in one argument: "
                     f"--scan-spec='{flags}')")
    for r in failed:
        named = f"{r.name}: " if len(report.results) > 1 else ""
        for f in (*r.more, r):  # the failures that moved its search too, each once
            lines += [f"{named}diagnosis: {f.diagnosis}",
                      f"{named}smallest case: {_shown_case(f.smallest_case)}"]
    import re
    import tempfile
    from pathlib import Path

    from ..reports.markdown import reproducer

    # A large input goes to a .npy file, made only then, named after the test (a rerun's
    # replaces it, as its script does); a failure with no case to rebuild gets no script.
    folder = Path(tempfile.gettempdir()) / "scancheck-cases"
    snippet = reproducer(report, folder, re.sub(r"[^\w.-]+", "_", f"{locator}-{check}")[-100:])
    if snippet:
        lines += ["a standalone script that reproduces it:", snippet.rstrip("\n")]
    return "fail", "\n".join(lines)


def check_options(config: pytest.Config, check: str) -> CheckOptions:
    """The :class:`~scancheck.engine.options.CheckOptions` of ``check`` (a property,
    :data:`LARGE_CHECK` or a sanitizer tool) as the session's options set them."""
    from ...engine.cases import Budget
    from ...engine.options import CheckOptions

    # No count ends a search unless asked: at 1000 examples one ended after 5 s of its 30.
    budget = Budget(config.getoption("scan_budget"),
                    config.getoption("scan_examples") or Budget.max_examples,
                    config.getoption("scan_max_n"))
    what = dict(properties=(), large=True, sanitize=()) if check == LARGE_CHECK else (
        dict(properties=(), large=False, sanitize=(check,)) if check in TOOLS else
        dict(properties=(check,), large=False, sanitize=()))
    return CheckOptions(budget=budget, timeout=config.getoption("scan_timeout"),
                        timeout_flag="--scan-timeout", overrides=spec_overrides(config), **what)


def _shown_case(case: dict[str, Any] | None) -> str:
    """A smallest case on one line, its data cut short (the report holds it whole)."""
    if not case:
        return "none recorded"
    from ...engine.properties import MONOID_DATA

    # A monoid's leaves have dtypes of their own: the case's is none of theirs.
    hidden = ("dtype",) if case.get("data") in MONOID_DATA else ()
    text = ", ".join(f"{k}={v}" for k, v in case.items() if k not in hidden)
    return text if len(text) <= 400 else text[:400] + " ..."
