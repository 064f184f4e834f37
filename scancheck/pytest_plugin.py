"""pytest plugin: ``pytest --scan-target=TARGET -n auto`` runs scancheck's conformance
properties against TARGET (a built-in name, ``kernel:VARIANT``, ``model:VARIANT``, a
``.cu`` file or ``package.module:function``), one test per property."""

from __future__ import annotations

import pytest

from .cases import Budget
from .conformance import PROPERTIES, check_property
from .targets import resolve


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("scancheck")
    group.addoption("--scan-target", action="append", default=[],
                    help="check this scan implementation's conformance (repeatable)")
    group.addoption("--scan-budget", type=float, default=30.0,
                    help="seconds each conformance property may search (default 30)")
    group.addoption("--scan-examples", type=int, default=1000,
                    help="Hypothesis examples per conformance property at most (default 1000)")
    group.addoption("--scan-max-n", type=int, default=None,
                    help="largest n searched (default 2**24 for GPU targets, 2**20 for CPU ones)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("scan_target"):
        config.addinivalue_line("markers", "conformance: a scancheck conformance property")
        # Collect the conformance suite shipped with scancheck instead of the testpaths.
        import scancheck.conformance_suite as suite

        if not config.args or config.args == [str(config.rootpath)]:
            config.args[:] = [suite.__file__]
        elif suite.__file__ not in config.args:
            config.args.append(suite.__file__)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scan_target_name" in metafunc.fixturenames:
        names = metafunc.config.getoption("scan_target")
        metafunc.parametrize("scan_target_name", names, ids=names)
    if "scan_property" in metafunc.fixturenames:
        metafunc.parametrize("scan_property", PROPERTIES, ids=[p.replace(" ", "-") for p in PROPERTIES])


@pytest.fixture
def scan_target(scan_target_name: str):
    target = resolve(scan_target_name)
    if target.unavailable:
        pytest.skip(f"{scan_target_name} is not available here: {target.unavailable}")
    return target


def run_property(config: pytest.Config, target, prop: str) -> None:
    """Fail with the diagnosis and the smallest case; skip where the property does not apply."""
    budget = Budget(config.getoption("scan_budget"), config.getoption("scan_examples"),
                    config.getoption("scan_max_n"))
    r = check_property(target, prop, budget)
    if r.status == "skip":
        pytest.skip(r.diagnosis)
    if r.status != "pass":
        pytest.fail(f"{target.name}: {prop}: {r.diagnosis}; smallest case: {r.smallest_case}",
                    pytrace=False)
