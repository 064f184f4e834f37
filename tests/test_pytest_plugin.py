"""``pytest --scan-target=...`` runs the conformance suite against a target."""

from __future__ import annotations

pytest_plugins = ["pytester"]


def test_plugin_passes_a_correct_target(pytester):
    result = pytester.runpytest("--scan-target=numpy.cumsum", "--scan-budget=1", "-p", "scancheck")
    # recurrence, products, log-sum-exp and indices do not apply to an add scan
    result.assert_outcomes(passed=6, skipped=4)


def test_plugin_fails_a_broken_target_with_its_diagnosis(pytester):
    result = pytester.runpytest("--scan-target=scancheck.controls:nan_dropping_max",
                                "--scan-budget=1", "-p", "scancheck")
    result.assert_outcomes(passed=2, failed=1, skipped=7)
    result.stdout.fnmatch_lines(["*NaN not handled as the spec declares*smallest case*"])
