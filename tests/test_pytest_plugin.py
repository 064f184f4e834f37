"""``pytest --scan-target=...`` runs the conformance suite against a target, each property in
child processes: a fault, an exit or a hang fails one test and the session goes on."""

from __future__ import annotations

import pytest

# Imported here, before pytester's in-process runs: it restores sys.modules after each, and
# numba's extensions cannot be loaded twice in one process.
import scancheck.conformance_suite  # noqa: F401
import scancheck.isolation  # noqa: F401

pytest_plugins = ["pytester"]

FAST = ("--scan-budget=0.3", "--scan-max-n=4096", "-p", "no:cacheprovider")

_TARGETS = """
import ctypes, os, time
import numpy as np

def segfaults(x):
    if x.shape[0] > 3:
        ctypes.string_at(0)
    return np.cumsum(x, dtype=x.dtype)

def exits(x):
    if x.shape[0] > 3:
        os._exit(3)
    return np.cumsum(x, dtype=x.dtype)

def hangs(x):
    while x.shape[0] > 3:
        time.sleep(1)
    return np.cumsum(x, dtype=x.dtype)
"""


def test_plugin_passes_a_correct_target_and_skips_what_does_not_apply(pytester):
    result = pytester.runpytest("--scan-target=numpy.cumsum", *FAST, "-k",
                                "integers-exact or recurrence")
    result.assert_outcomes(passed=1, skipped=1)  # the recurrence: not an add scan's


def test_plugin_fails_a_broken_target_with_its_diagnosis(pytester):
    result = pytester.runpytest("--scan-target=scancheck.controls:nan_dropping_max", *FAST,
                                "-k", "nan-and-inf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*NaN not handled as the spec declares*smallest case*",
                                 "again: pytest --scan-target='scancheck.controls:nan_dropping_max'"
                                 " --scan-property='nan and inf'"])


@pytest.mark.slow
def test_a_target_that_segfaults_exits_or_hangs_fails_its_test_and_the_session_goes_on(
        pytester):
    pytester.makepyfile(scans=_TARGETS)
    result = pytester.runpytest("--scan-target=scans:segfaults", "--scan-target=scans:exits",
                                "--scan-target=scans:hangs", "--scan-timeout=1", *FAST,
                                "-k", "integers-exact")
    result.assert_outcomes(failed=3)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*scans:segfaults: integers exact: fault*SIGSEGV*",
                                 "*scans:exits: integers exact: fault*exit status 3*",
                                 "*scans:hangs: integers exact: hang*no answer in 1 s*"],
                                consecutive=False)


@pytest.mark.slow
def test_scan_target_alone_runs_the_scan_tests_not_the_projects_and_one_runs_again(pytester):
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkpydir("tests").joinpath("test_own.py").write_text("def test_own():\n    assert 0\n")
    collected = pytester.runpytest("--scan-target=numpy.cumsum", "--collect-only", "-q",
                                   *FAST)
    ids = [ln for ln in collected.outlines if "::test_conformance[" in ln]
    assert len(ids) == 10 and not any("test_own" in ln for ln in collected.outlines)
    assert any(i.endswith("[numpy.cumsum-integers-exact]") for i in ids)
    # What a failure prints to run it again runs that one test.
    again = pytester.runpytest("--scan-target=numpy.cumsum", "--scan-property=integers exact",
                               *FAST)
    again.assert_outcomes(passed=1)


@pytest.mark.parametrize("option, message", [
    ("--scan-budget=-1", "--scan-budget='-1' must be a positive number"),
    ("--scan-max-n=x", "--scan-max-n='x' is not an integer"),
    ("--scan-target=no_such_module:scan", "module 'no_such_module' cannot be imported"),
    ("--scan-property=speed", "--scan-property='speed' is unknown"),
])
def test_bad_options_and_unknown_targets_are_usage_errors(pytester, option, message):
    args = [option] if option.startswith("--scan-target") else ["--scan-target=numpy.cumsum",
                                                                option]
    result = pytester.runpytest(*args, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_the_plugin_module_imports_nothing_of_the_engine():
    """Every pytest start-up loads it: numba and Hypothesis only where --scan-target asks."""
    import subprocess
    import sys

    code = ("import sys, scancheck.pytest_plugin; "
            "print(sorted(m for m in ('numba', 'hypothesis', 'scancheck.conformance') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
