"""pytest plugin: ``pytest --scan-target=TARGET -n auto`` runs scancheck's conformance
properties against TARGET (a built-in name, ``kernel:VARIANT``, ``model:VARIANT``, a
``.cu`` file or ``package.module:function``), one test per property.

Each test checks its property with :func:`scancheck.isolation.check_isolated`: the target
runs in a child process, so a fault, an exit or a hang is that test's failure and the
session goes on.  Given ``--scan-target`` and no paths, pytest collects only the shipped
suite (``scancheck/conformance_suite.py``), whatever the project's ``testpaths``; its node
ids (``.../conformance_suite.py::test_conformance[TARGET-property]``) run again when passed
back.  This module imports only pytest and the standard library: scancheck's engine
(NumPy, numba, Hypothesis) loads only in a session given ``--scan-target``.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import importlib.machinery
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: The test module ``--scan-target`` collects.
SUITE = Path(__file__).with_name("conformance_suite.py")
_SUITE_MODULE = "scancheck.conformance_suite"
#: Locator prefixes resolved in this process to learn the spec: they load scancheck's own
#: kernels and library wrappers, never a user's module or a CUDA compilation.
_LOCAL_PREFIXES = ("builtin:", "kernel:", "model:", "scancheck:")
#: What suite node ids given back select (the part after the path).
_PICKS = pytest.StashKey[list]()


def _positive(kind: Callable[[str], Any], allowed: str) -> Callable[[str], Any]:
    """An argparse type accepting a finite number > 0 of ``kind`` (else a usage error
    saying what is allowed)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; allowed: {allowed}") from None
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
                    help="seconds each conformance property may search (default 30)")
    group.addoption("--scan-examples", type=_positive(int, "an integer >= 1"), default=1000,
                    help="Hypothesis examples per conformance property at most (default 1000)")
    group.addoption("--scan-max-n", type=_positive(int, "an integer >= 1"), default=None,
                    help="largest n searched (default 2**24 for GPU targets, 2**20 for CPU ones)")
    group.addoption("--scan-timeout", type=_positive(float, "seconds > 0"), default=60.0,
                    help="seconds one case may run before it is a hang (default 60)")


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
    module (``scancheck.conformance_suite::...``), by its path, or by a path as printed from
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
    if hasattr(config, "workerinput"):  # the controller has checked the targets already
        return
    for locator in targets:
        try:
            _spec_here(locator)
        except ValueError as exc:
            raise pytest.UsageError(f"--scan-target {locator}: {exc}") from None


def _is_local(locator: str) -> bool:
    """Whether ``locator`` names one of scancheck's own targets (resolved here, cheaply)."""
    return locator.startswith(_LOCAL_PREFIXES) or (":" not in locator
                                                   and not locator.endswith(".cu"))


@functools.cache
def _spec_here(locator: str) -> Any:
    """The Target of a built-in, kernel or model locator (its spec known without a child),
    None for a ``.cu`` file or an import path (a child resolves those); raises ValueError
    where the locator cannot name a target at all."""
    if _is_local(locator):
        from .targets import resolve

        return resolve(locator)
    path = locator[3:].rsplit(":", 1)[0] if locator.startswith("cu:") else locator
    if path.endswith(".cu"):
        if not Path(path).is_file():
            raise ValueError(f"{path} is not a file")
        return None
    module = locator.removeprefix("import:").split(":", 1)[0]
    # Only the top-level package is looked for: importing the module itself is the child's
    # job (it may crash, hang or take long, and runs the user's code).
    top = module.split(".")[0]
    found = top in sys.builtin_module_names or (
        top and importlib.machinery.PathFinder.find_spec(top, [os.getcwd(), *sys.path]))
    if not found:
        raise ValueError(f"module {module!r} is not found from {os.getcwd()} or sys.path; "
                         f"allowed: a built-in target name, kernel:VARIANT, model:VARIANT, "
                         f"a .cu file or package.module:function")
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scan_target_name" in metafunc.fixturenames:
        names = metafunc.config.getoption("scan_target")
        metafunc.parametrize("scan_target_name", names, ids=names)
    if "scan_property" in metafunc.fixturenames:
        from .conformance import PROPERTIES

        metafunc.parametrize("scan_property", PROPERTIES,
                             ids=[p.replace(" ", "-") for p in PROPERTIES])


def run_property(config: pytest.Config, locator: str, prop: str) -> tuple[str, str]:
    """Check ``prop`` of the target ``locator`` names in a child process: ("pass", ""),
    ("skip", why), or ("fail", the verdict, the property's diagnosis and the smallest case)."""
    target = _spec_here(locator)
    if target is not None:  # known here: answered without starting a child
        from .conformance import not_applicable

        if target.unavailable:
            return "skip", f"{locator} is not available here: {target.unavailable}"
        why = not_applicable(target.spec, prop)
        if why:
            return "skip", why
    from .cases import Budget
    from .isolation import UsageError, check_isolated

    budget = Budget(config.getoption("scan_budget"), config.getoption("scan_examples"),
                    config.getoption("scan_max_n"))
    try:
        report = check_isolated(locator, properties=(prop,), budget=budget,
                                timeout=config.getoption("scan_timeout"), large=False,
                                sanitize=())
    except UsageError as exc:
        return "fail", f"{locator}: the target cannot be checked: {exc}"
    r = report.results[0]
    if r.status in ("pass", "skip"):
        return r.status, r.diagnosis
    return "fail", (f"{report.target}: {prop}: {r.status}\n"
                    f"verdict: {report.diagnosis}\n"
                    f"diagnosis: {r.diagnosis}\n"
                    f"smallest case: {_shown_case(r.smallest_case)}")


def _shown_case(case: dict[str, Any] | None) -> str:
    """A smallest case on one line, its data cut short (the report holds it whole)."""
    if not case:
        return "none recorded"
    text = ", ".join(f"{k}={v}" for k, v in case.items())
    return text if len(text) <= 400 else text[:400] + " ..."
