"""pytest plugin: ``pytest --scan-target=TARGET -n auto`` runs scancheck's conformance
properties against TARGET (a built-in name, ``kernel:VARIANT``, ``model:VARIANT``, a ``.cu``
file or ``package.module:function``), one test per property.

Each test checks its property in child processes (:func:`scancheck.isolation.check_isolated`):
a target that faults, exits or hangs fails that test, and the session goes on.  Given
``--scan-target`` and no paths, pytest collects these tests alone, whatever ``testpaths``
says.  Test ids name the target and the property; ``--scan-property`` runs one again (a
failure prints the command: the suite lives outside the project, so its node ids carry no
file part pytest could take back).  Nothing of
scancheck's engine is imported unless ``--scan-target`` is given: every pytest start-up
loads this module.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import pytest


def _positive(kind: type, option: str) -> Callable[[str], float | int]:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{option}={text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{option}={text!r} must be a positive number")
        return value

    return parse


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("scancheck")
    group.addoption("--scan-target", action="append", default=[],
                    help="check this scan implementation's conformance (repeatable)")
    group.addoption("--scan-budget", type=_positive(float, "--scan-budget"), default=30.0,
                    help="seconds each conformance property may search (default 30)")
    group.addoption("--scan-examples", type=_positive(int, "--scan-examples"), default=None,
                    help="Hypothesis examples per conformance property at most (default: no cap "
                    "but time)")
    group.addoption("--scan-max-n", type=_positive(int, "--scan-max-n"), default=None,
                    help="largest n searched (default 2**24 for GPU targets, 2**20 for CPU ones)")
    group.addoption("--scan-timeout", type=_positive(float, "--scan-timeout"), default=60.0,
                    help="seconds one case may run before it is a hang (default 60)")
    group.addoption("--scan-property", action="append", default=[],
                    help="check only this property (repeatable; a failure prints the command "
                    "that runs it again)")


def pytest_configure(config: pytest.Config) -> None:
    targets = config.getoption("scan_target")
    if not targets:
        return
    config.addinivalue_line("markers", "conformance: a scancheck conformance property")
    import scancheck.conformance_suite as suite

    # No paths given (pytest fell back on testpaths or the directory it runs in): the
    # conformance suite alone, not the project's own tests.
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [suite.__file__]
    elif not any(a.split("::")[0] == suite.__file__ for a in config.args):
        config.args.append(suite.__file__)
    if not hasattr(config, "workerinput"):  # the controller: each name once, before any test
        from .conformance import PROPERTIES
        from .isolation import UsageError, check_isolated

        for prop in config.getoption("scan_property"):
            if prop not in PROPERTIES:
                raise pytest.UsageError(f"--scan-property={prop!r} is unknown; allowed: "
                                        f"{', '.join(PROPERTIES)}")
        for name in targets:
            try:
                check_isolated(name, properties=(), large=False, sanitize=(),
                               timeout=config.getoption("scan_timeout"))
            except UsageError as exc:
                raise pytest.UsageError(f"--scan-target={name}: {exc}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scan_target_name" in metafunc.fixturenames:
        names = metafunc.config.getoption("scan_target")
        metafunc.parametrize("scan_target_name", names, ids=names)
    if "scan_property" in metafunc.fixturenames:
        from .conformance import PROPERTIES

        props = metafunc.config.getoption("scan_property") or PROPERTIES
        metafunc.parametrize("scan_property", props, ids=[p.replace(" ", "-") for p in props])


def run_property(config: pytest.Config, name: str, prop: str) -> None:
    """Check ``prop`` of the target ``name`` in child processes: skip where it does not apply
    (said without a child for built-in targets), fail with the verdict and smallest case."""
    from .cases import Budget
    from .conformance import not_applicable
    from .isolation import check_isolated
    from .targets import builtin_targets

    builtin = builtin_targets().get(name)
    if builtin is not None:
        why = builtin.unavailable or not_applicable(builtin.spec, prop)
        if why:
            pytest.skip(f"{name}: {prop}: {why}")
    budget = Budget(config.getoption("scan_budget"),
                    config.getoption("scan_examples") or Budget.max_examples,
                    config.getoption("scan_max_n"))
    rep = check_isolated(name, properties=(prop,), large=False, sanitize=(), budget=budget,
                         timeout=config.getoption("scan_timeout"), workers=1)
    r = rep.results[0]
    if r.status == "skip":
        pytest.skip(f"{name}: {prop}: {r.diagnosis}")
    if r.status != "pass":
        pytest.fail(f"{name}: {prop}: {r.status}: {rep.verdict.line or r.diagnosis}; smallest "
                    f"case: {r.smallest_case}\nagain: pytest --scan-target='{name}' "
                    f"--scan-property='{prop}'", pytrace=False)
