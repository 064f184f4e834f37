"""Conformance checks: correct targets conform, faults and hangs are reported and the
session goes on, reports serialize."""

from __future__ import annotations

import json

import pytest

from scancheck.conformance import PROPERTIES, check, check_isolated, check_property
from scancheck.targets import builtin_targets, resolve


@pytest.mark.parametrize("name", ["numpy.cumsum", "model:recursive", "model:decoupled_lookback",
                                  "model:brent_kung"])
def test_correct_cpu_targets_conform(name):
    report = check(resolve(name), max_examples=20)
    assert report.passed, report.rows()
    assert report.diagnosis == ""


def test_floats_report_ulps_and_both_bounds():
    r = check_property(resolve("numpy.cumsum"), "floats within bound", max_examples=10)
    assert r.status == "pass"
    assert r.detail["max ulps"] >= 0 and 0 <= r.detail["err/seq bound"] <= 1


def test_a_faulting_target_is_reported_and_the_session_goes_on():
    report = check_isolated("scancheck.testing:crashing_scan", timeout=30, max_examples=10)
    statuses = {r.name: r.status for r in report.results}
    assert statuses["integers exact"] == "fault"
    assert "SIGABRT" in report.results[0].diagnosis
    assert set(statuses) == set(PROPERTIES)  # every property was still visited
    # ... and this process can go on checking other targets.
    assert check(resolve("numpy.cumsum"), max_examples=5).passed


def test_a_hanging_target_is_reported_as_a_hang():
    report = check_isolated("scancheck.testing:hanging_scan", ("integers exact", "deterministic"),
                            timeout=3, max_examples=5)
    assert [r.status for r in report.results] == ["hang", "hang"]
    assert "hang in 'integers exact'" in report.diagnosis


def test_report_serializes_to_json():
    report = check(resolve("numpy.cumsum"), ("integers exact",), max_examples=5)
    data = json.loads(report.to_json())
    assert data["target"] == "numpy.cumsum" and data["results"][0]["status"] == "pass"


def test_unknown_property_is_refused():
    with pytest.raises(ValueError, match="property 'speed' is unknown"):
        check_property(resolve("numpy.cumsum"), "speed")


GPU_TARGETS = ["cupy.cumsum (CUB)", "cupy.cumsum (no CUB)", "torch.cumsum (CUDA)",
               "kernel:decoupled_lookback", "kernel:hierarchical", "kernel:recursive",
               "kernel:chained", "kernel:kogge_stone"]


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("name", GPU_TARGETS)
def test_gpu_targets_conform(name):
    target = resolve(name)
    if target.unavailable:
        pytest.skip(target.unavailable)
    report = check(target, max_examples=20, max_n=100_000)
    assert report.passed, report.rows()


def test_builtin_targets_say_why_they_are_unavailable():
    for t in builtin_targets().values():
        assert t.unavailable is None or isinstance(t.unavailable, str)
