"""``pytest --scan-target=...`` runs the conformance suite against a target, each property
in a child process; each pytest run here is a subprocess, as a user's would be."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

#: One cheap property per run: a few tiny cases, the target in a child.  No conftest: this
#: repository's own would load for the suite's directory, which lies in it.
QUICK = ("--scan-budget", "0.2", "--scan-max-n", "64", "-k", "nan-and-inf", "--noconftest")

TARGETS = """
import ctypes
import os
import time


def crash(x):
    ctypes.string_at(0)


def leave(x):
    os._exit(3)


def hang(x):
    time.sleep(1000)
"""


@pytest.mark.slow
def test_faults_exits_and_hangs_are_failures_and_the_session_goes_on(pytester):
    pytester.makepyfile(scan_targets=TARGETS)
    result = pytester.runpytest_subprocess(
        *(f"--scan-target={t}" for t in ("scan_targets:crash", "scan_targets:leave",
                                         "scan_targets:hang", "numpy.cumsum")),
        "--scan-timeout", "2", *QUICK, timeout=120)
    result.assert_outcomes(passed=1, failed=3, deselected=36)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random([
        "*verdict: fault: fault in 'nan and inf': the process died (killed by SIGSEGV)*",
        "*verdict: fault: fault in 'nan and inf': the process died (exit status 3)*",
        "*verdict: fault: hang in 'nan and inf': the target gave no answer in 2 s*",
        "diagnosis: the process died (killed by SIGSEGV) at n = *",
        "smallest case: n=*",
    ])


def test_only_the_scan_tests_run_in_a_project_with_testpaths(pytester):
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    pytester.makepyfile(**{"tests/test_own": "def test_own():\n    assert False",
                           "tests/conftest": "raise RuntimeError('the project conftest ran')"})
    # Not applicable to an add scan: skipped here, no child started.
    result = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", "-k", "indices", "-v")
    result.assert_outcomes(skipped=1, deselected=9)
    assert any(line.startswith("conformance_suite.py::test_conformance[numpy.cumsum-indices] SKIPPED")
               for line in result.stdout.lines), result.stdout.str()
    result.stdout.no_fnmatch_line("*test_own*")


def test_a_collected_node_id_runs_alone_again(pytester):
    collected = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", "--collect-only", "-q",
                                              "--noconftest")
    ids = [line for line in collected.stdout.lines if "::test_conformance[" in line]
    assert len(ids) == 10 and all("numpy.cumsum" in i for i in ids), ids
    [picked] = [i for i in ids if i.endswith("-recurrence]")]
    result = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", picked, "-v", "--noconftest")
    result.assert_outcomes(skipped=1, deselected=9)
    assert any(line.startswith(f"{picked} SKIPPED") for line in result.stdout.lines), result.stdout.str()


@pytest.mark.parametrize("option, value", [("--scan-budget", "-1"), ("--scan-examples", "0"),
                                           ("--scan-max-n", "x"), ("--scan-timeout", "nan")])
def test_a_value_out_of_range_is_a_usage_error(pytester, option, value):
    result = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", option, value, "--noconftest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument {option}: '{value}' is *; allowed: *"])


@pytest.mark.parametrize("target, told", [("no.such.scan", "*is not a built-in*"),
                                          ("no_such_module:scan", "*module 'no_such_module' is not found*")])
def test_an_unknown_target_is_a_usage_error(pytester, target, told):
    result = pytester.runpytest_subprocess(f"--scan-target={target}", "--noconftest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --scan-target {target}: {told}"])


def test_the_plugin_imports_no_engine_at_start_up():
    code = ("import sys, scancheck.pytest_plugin; "
            "print(sorted(m for m in ('numpy', 'numba', 'hypothesis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
