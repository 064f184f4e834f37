"""``pytest --scan-target=...`` runs the conformance suite against a target, each property
in a child process.  Sessions that run a target are subprocesses, as a user's would be;
those that stop before any target code runs are run in this process, which is cheaper."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scancheck.engine.properties import PROPERTIES

pytest_plugins = ["pytester"]

#: One cheap property per run: a few tiny cases, the target in a child, no conftest.
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


@pytest.fixture(scope="module")
def engine():
    """scancheck's engine, imported before pytester notes which modules are loaded (it
    removes the others when its test ends, and NumPy cannot be imported twice)."""
    import scancheck.engine.conformance
    import scancheck.isolation.parent
    import scancheck.targets.target

    return scancheck.isolation.parent


@pytest.mark.slow
def test_faults_exits_and_hangs_are_failures_and_the_session_goes_on(pytester):
    pytester.makepyfile(scan_targets=TARGETS)
    # Both forms of a user's target: an import path and a file path.
    targets = ("scan_targets:crash", "scan_targets.py:leave", "scan_targets:hang")
    result = pytester.runpytest_subprocess(*(f"--scan-target={t}" for t in targets),
                                           "--scan-timeout", "1", *QUICK, timeout=120)
    result.assert_outcomes(failed=3, deselected=3 * len(PROPERTIES) - 3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random([
        "*verdict: fault in 'nan and inf': the process died (killed by SIGSEGV)*",
        "diagnosis: the process died (killed by SIGSEGV) at n = *",
        "*verdict: fault in 'nan and inf': the process died (exit status 3)*",
        "*verdict: fault: hang in 'nan and inf': the target gave no answer in 1 s*",
        # The flag that sets the timeout is the plugin's, not check's.
        "*(its first call ran past --scan-timeout: a loop that never ends, or a target slower*",
        "smallest case: n=*",
    ])


def test_testpaths_are_not_collected_and_a_node_id_runs_alone_again(pytester, engine):
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    pytester.makepyfile(**{"tests/test_own": "def test_own():\n    assert False",
                           "tests/conftest": "raise RuntimeError('the project conftest ran')"})
    collected = pytester.runpytest_inprocess("--scan-target=numpy.cumsum", "--collect-only", "-q")
    ids = [line for line in collected.stdout.lines if "::" in line]
    assert collected.ret == pytest.ExitCode.OK and len(ids) == len(PROPERTIES), collected.stdout.str()
    assert all(i.startswith("conformance_suite.py::test_conformance[numpy.cumsum-") for i in ids), ids
    # Not applicable to an add scan: skipped without a child.
    [picked] = [i for i in ids if i.endswith("-recurrence]")]
    result = pytester.runpytest_inprocess("--scan-target=numpy.cumsum", picked, "-v", "--noconftest")
    result.assert_outcomes(skipped=1, deselected=len(PROPERTIES) - 1)
    assert any(line.startswith(f"{picked} SKIPPED") for line in result.stdout.lines), result.stdout.str()


# Older pytest releases warn of their own hook wrapper where a usage error ends the parse.
@pytest.mark.filterwarnings("ignore::pluggy.PluggyTeardownRaisedWarning")
@pytest.mark.parametrize("option, value", [("--scan-budget", "-1"), ("--scan-max-n", "x"),
                                           ("--scan-timeout", "nan"), ("--scan-examples", "0")])
def test_a_value_out_of_range_is_a_usage_error(pytester, engine, option, value):
    result = pytester.runpytest_inprocess("--scan-target=numpy.cumsum", option, value, "--noconftest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument {option}: '{value}' is *; allowed: *"])


@pytest.mark.slow
def test_unknown_targets_are_one_usage_error(pytester, engine):
    pytester.makepyfile(scan_targets="def scan(x):\n    return x")
    # The missing function is found by loading its module in a child.
    wrong = ("no.such.scan", "scan_targets:no_such_scan")
    result = pytester.runpytest_inprocess("--scan-target=numpy.cumsum",
                                          *(f"--scan-target={t}" for t in wrong), "--noconftest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: --scan-target no.such.scan: *is none of a built-in*",
        "--scan-target scan_targets:no_such_scan: *scan_targets has no attribute 'no_such_scan'"])


def test_a_target_its_spec_cannot_call_names_the_plugins_argument(pytester, engine):
    """A 1-D scan given an axis: the signature error names check's flag, and the line under
    it how pytest takes that flag."""
    pytester.makepyfile(one_d="def scan(x):\n    return x")
    result = pytester.runpytest_inprocess("--scan-target=one_d:scan", "--scan-spec=--axis arg",
                                          "--noconftest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot be called as fn(x, axis)*",
                                 "(where a flag of scancheck check is named above, it goes, "
                                 "under pytest, in one argument: --scan-spec='--axis arg', "
                                 "say)"])


def test_large_and_sanitizer_checks_are_tests_of_their_own(pytester, monkeypatch, engine):
    from scancheck.engine.conformance import ConformanceReport
    from scancheck.engine.diagnosis import PropertyResult

    calls = []

    def check_isolated(locator, options):
        # Children are not what this test is about: answer as check_isolated would.
        properties, large, sanitize = options.properties, options.large, options.sanitize
        calls.append((locator, properties, large, sanitize))
        if locator == "gpu_scans:scan":
            raise engine.EnvironmentProblem("no CUDA device")
        results = [PropertyResult("past 2**31", "hang", "no answer", {"n": 2**31 + 1}),
                   PropertyResult("past 2**32", "skip", "not run")] if large else [
                   PropertyResult(f"sanitizer: {t}", "pass") for t in sanitize]
        return ConformanceReport(locator, {}, results)

    monkeypatch.setattr(engine, "check_isolated", check_isolated)
    result = pytester.runpytest_inprocess(
        "--scan-target=numpy.cumsum", "--scan-target=gpu_scans:scan", "--scan-large",
        "--scan-sanitize", "memcheck", "--scan-sanitize", "racecheck", "--scan-sanitize",
        "memcheck", "-k", "large or memcheck or racecheck", "-rs", "--noconftest")
    # Each of the two targets' properties is a test that -k deselects.
    result.assert_outcomes(failed=1, passed=2, skipped=3, deselected=2 * len(PROPERTIES))
    result.stdout.fnmatch_lines_random([
        "numpy.cumsum: large: hang", "past 2**31: smallest case: n=2147483649",
        "SKIPPED *: gpu_scans:scan is not available here: no CUDA device"])
    assert sorted(calls) == [
        ("gpu_scans:scan", (), False, ()), ("numpy.cumsum", (), False, ("memcheck",)),
        ("numpy.cumsum", (), False, ("racecheck",)), ("numpy.cumsum", (), True, ())]


def test_scan_spec_declares_the_contract_check_flags_would(pytester):
    """A reverse cumsum fails as a forward scan, its diagnosis naming --reverse; given
    --scan-spec='--reverse', the flag `scancheck check` would take, it conforms."""
    pytester.makepyfile(rev="import numpy as np\n\n\ndef scan(x):\n"
                            "    return np.cumsum(x[::-1], dtype=x.dtype)[::-1]\n")
    quick = ("--scan-budget", "0.5", "--scan-max-n", "64", "-k", "integers-exact",
             "--noconftest", "-p", "no:cacheprovider")
    plain = pytester.runpytest_subprocess("--scan-target=rev:scan", *quick, timeout=120)
    plain.assert_outcomes(failed=1, deselected=len(PROPERTIES) - 1)
    plain.stdout.fnmatch_lines(["*declare --reverse*", "(under pytest, the flags it names go "
                                "in one argument: --scan-spec='--reverse')"])
    declared = pytester.runpytest_subprocess("--scan-target=rev:scan", "--scan-spec=--reverse",
                                             *quick, timeout=120)
    declared.assert_outcomes(passed=1, deselected=len(PROPERTIES) - 1)


# Older pytest releases warn of their own hook wrapper where a usage error ends the parse.
@pytest.mark.filterwarnings("ignore::pluggy.PluggyTeardownRaisedWarning")
@pytest.mark.parametrize("flags, message", [
    ("--op sum", "--scan-spec: argument --op: *"),
    ("--revers", "--scan-spec: unrecognized arguments: --revers (did you mean --reverse?)"),
    # check's own options, which are pytest's here, are named with the plugin's form.
    ("--max-n 5 --budget=3", "--scan-spec: unrecognized arguments: --max-n 5 --budget=3 "
                             "(not spec flags: under pytest --max-n is --scan-max-n, --budget "
                             "is --scan-budget)"),
])
def test_a_scan_spec_that_is_no_spec_flags_is_a_usage_error(pytester, engine, flags, message):
    result = pytester.runpytest_inprocess("--scan-target=numpy.cumsum", f"--scan-spec={flags}",
                                          "--noconftest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_the_plugin_imports_no_engine_at_start_up():
    code = ("import sys, scancheck.faces.plugin.hooks; "
            "print(sorted(m for m in ('numpy', 'numba', 'hypothesis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_property_alone_gives_no_cause_the_whole_check_refutes(pytester, engine):
    """'floats within bound' alone meets the underflow guard only on data around the
    smallest normal number (its ladder's at 2**14), where reading subnormals as zero seemed
    to explain it: the same data scaled out of the subnormals are still wrong, and the
    property says so, as the whole check does."""
    result = pytester.runpytest_inprocess(
        "--scan-target=scancheck.controls.bands:underflow_guard_too_high", "--scan-budget", "1",
        "--scan-max-n", "32768", "-k", "floats-within-bound", "--noconftest")
    result.assert_outcomes(failed=1, deselected=len(PROPERTIES) - 1)
    out = result.stdout.str()
    assert "less exponent range" in out and "subnormals read as zero (DAZ" not in out, out


def test_a_session_from_another_folder_gets_none_of_the_projects_test_setup(pytester):
    """The suite lies in the package; from a source checkout (an editable install) pytest
    loads the conftest of every folder above it, the checkout's own included.  That one sets
    nothing up (the project's is tests/conftest.py): no Hypothesis profile of the project's,
    no header, and the session's Hypothesis settings are the ones Hypothesis alone picks in
    the same environment (its own ``ci`` profile where a CI variable is set)."""
    seen = ("from hypothesis import settings\n"
            "def seen():\n"
            "    return f'profile seen: {settings._current_profile} {settings().max_examples}'\n")
    pytester.makepyfile(probe=seen + "def pytest_report_header(config):\n"
                                     "    return [seen()]\n")
    alone = subprocess.run([sys.executable, "-c", seen + "print(seen())"], check=True,
                           capture_output=True, text=True, cwd=pytester.path).stdout.strip()
    result = pytester.runpytest_subprocess("--scan-target=numpy.cumsum", "-p", "probe",
                                           "-p", "no:cacheprovider",
                                           *(q for q in QUICK if q != "--noconftest"))
    out = result.stdout.str()
    assert alone in out, (alone, out)
    assert "hypothesis profile:" not in out and "scancheck: no GPU" not in out, out
    result.assert_outcomes(passed=1)


def test_a_failure_carries_a_standalone_script_that_reproduces_it(pytester, engine):
    """The failing test's text holds the report's script: run alone, it says "still
    reproduces" and exits 1."""
    pytester.makepyfile(blocked="import numpy as np\n\n"
                        "def scan(x):\n"
                        "    out = np.cumsum(x, dtype=x.dtype)\n"
                        "    out[40:] -= out[39] if len(x) > 40 else 0\n"
                        "    return out\n")
    result = pytester.runpytest_inprocess("--scan-target=blocked.py:scan", "--scan-budget", "1",
                                          "--scan-max-n", "256", "-k", "integers-exact",
                                          "--noconftest")
    result.assert_outcomes(failed=1, deselected=len(PROPERTIES) - 1)
    out = result.stdout.str()
    start = out.index("a standalone script that reproduces it:\n") + len(
        "a standalone script that reproduces it:\n")
    script = out[start:out.index("raise SystemExit(status)", start) + len("raise SystemExit(status)")]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and done.stdout.splitlines()[-1] == "still reproduces", (
        done.stdout, done.stderr)


def test_a_monoid_case_is_shown_without_the_dtype_none_of_its_leaves_has():
    from scancheck.engine.properties import MONOID_DATA
    from scancheck.faces.plugin.hooks import _shown_case

    data = sorted(MONOID_DATA)[0]
    shown = _shown_case({"n": 7, "dtype": "int64", "data": data, "seed": 3})
    assert shown == f"n=7, data={data}, seed=3"
    assert _shown_case({"n": 7, "dtype": "int64", "data": "integers"}).startswith(
        "n=7, dtype=int64")
