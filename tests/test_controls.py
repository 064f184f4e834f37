"""Every negative control is caught, with the right diagnosis."""

from __future__ import annotations

import pytest

from scancheck.controls import CONTROLS

CPU = [c for c in CONTROLS if not c.gpu]
GPU = [c for c in CONTROLS if c.gpu and not c.large]
LARGE = [c for c in CONTROLS if c.large]


def _caught(c, **kw):
    rep, caught = c.check(**kw)
    assert caught, f"{c.name}: {rep.diagnosis!r}\n{rep.rows()}"
    return rep


@pytest.mark.slow
@pytest.mark.parametrize("control", CPU, ids=[c.name for c in CPU])
def test_cpu_negative_controls_are_caught(control):
    rep = _caught(control, max_examples=25, timeout=120)
    failing = [r for r in rep.results if r.status == "fail"]
    assert all(r.smallest_case for r in failing)
    assert min(r.smallest_case["n"] for r in failing) <= 65  # one past a block of 64


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("control", GPU, ids=[c.name for c in GPU])
def test_gpu_negative_controls_are_caught(control):
    # A hang is reported after 5 s: the deadlock control blocks from its first case on,
    # and the other GPU control runs only under the sanitizer, which has its own limit.
    _caught(control, max_examples=15, max_n=2**22, timeout=5)


@pytest.mark.gpu
@pytest.mark.huge
@pytest.mark.parametrize("control", LARGE, ids=[c.name for c in LARGE])
def test_index_overflow_control_is_caught_past_2_to_the_31(control):
    _caught(control, max_examples=10, max_n=100_000, timeout=300)
