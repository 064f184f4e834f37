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
        *(f"--scan-target=scan_targets:{t}" for t in ("crash", "leave", "hang")),
        "--scan-timeout", "2", *QUICK, timeout=120)
    result.assert_outcomes(failed=3, deselected=27)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random([
        "*verdict: fault: fault in 'nan and inf': the process died (killed by SIGSEGV)*",
        "diagnosis: the process died (killed by SIGSEGV) at n = *",
        "*verdict: fault: fault in 'nan and inf': the process died (exit status 3)*",
        "*verdict: fault: hang in 'nan and inf': the target gave no answer in 2 s*",
        "smallest case: n=*",
    ])


def test_testpaths_are_not_collected_and_a_node_id_runs_alone_again(pytester):
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    pytester.makepyfile(**{"tests/test_own": "def test_own():\n    assert False",
                           "tests/conftest": "raise RuntimeError('the project conftest ran')"})
    collected = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", "--collect-only", "-q")
    ids = [line for line in collected.stdout.lines if "::" in line]
    assert collected.ret == pytest.ExitCode.OK and len(ids) == 10, collected.stdout.str()
    assert all(i.startswith("conformance_suite.py::test_conformance[numpy.cumsum-") for i in ids), ids
    # Not applicable to an add scan: skipped without a child.
    [picked] = [i for i in ids if i.endswith("-recurrence]")]
    result = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", picked, "-v", "--noconftest")
    result.assert_outcomes(skipped=1, deselected=9)
    assert any(line.startswith(f"{picked} SKIPPED") for line in result.stdout.lines), result.stdout.str()


@pytest.mark.parametrize("option, value", [("--scan-budget", "-1"), ("--scan-max-n", "x"),
                                           ("--scan-timeout", "nan")])
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
