"""The example targets users copy (``examples/``) conform, checked as users would check them:
by import path, at the test profile's budget (on a GPU: they are Triton and numba.cuda)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import pytest

from scancheck.engine.conformance import PROPERTIES, check_property
from scancheck.engine.resolve import resolve

EXAMPLES = [("examples.triton_scan:cumsum", "triton"), ("examples.numba_scan:cumsum", "numba")]


def _usable(needs: str) -> None:
    """Skip, saying why, where the example's library is absent or cannot compile a kernel."""
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed")
    if needs == "numba":
        import cupy as cp

        importlib.import_module("examples.numba_scan")  # its NumPy 2.5 shim first
        from numba import cuda

        @cuda.jit
        def one(a):
            a[0] = 1

        try:
            one[1, 1](cp.zeros(1, dtype=cp.float32))
        except AttributeError as exc:  # NumPy 2.5 beside numba-cuda (docs/findings.md)
            pytest.skip(f"numba.cuda cannot compile a one-line kernel here: {exc}")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("prop", PROPERTIES, ids=[p.replace(" ", "-") for p in PROPERTIES])
@pytest.mark.parametrize("name, needs", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_the_examples_conform(name, needs, prop, budget):
    """One property a test: each pays the example's JIT compilation once per size, and a
    whole check in one test would take a minute."""
    _usable(needs)
    target = resolve(name)
    assert target.spec.device == "gpu"
    r = check_property(target, prop, replace(budget, max_n=2**22))  # as test_conformance's
    if r.status == "skip":
        pytest.skip(f"{name}: {prop}: {r.diagnosis}")
    assert r.status == "pass", (r.diagnosis, r.smallest_case, r.detail)
    assert r.detail["largest n"] >= min(2**20, target.spec.max_n or 2**20)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.huge
@pytest.mark.parametrize("name, needs", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_the_examples_are_right_past_2_to_the_31(name, needs):
    """Step data, then random data, at 2**31 + 17: 64-bit indices everywhere (and a target
    that returns a torch tensor is checked where it lies, as a CuPy array)."""
    from scancheck.engine.large import check_large

    _usable(needs)
    r = check_large(resolve(name), "past 2**31")
    assert r.status == "pass" and r.detail["random data"] == "right", r


@pytest.mark.parametrize("name, prop", [
    ("examples.linear_recurrence:chunked_scan", "operator laws"),
    ("examples.linear_recurrence:chunked_scan", "monoid scan"),
    ("examples.linear_recurrence:generic_scan", "probe monoids"),
])
def test_the_linear_recurrence_example_conforms(name, prop, budget):
    """A user's Monoid over float32 pairs (a, b) and a chunked scan of it, judged within the
    rounding bound of any association order around the exact answer; the same scan taking
    the combine, under the probe monoids (to 2**12: its fold is Python).  CPU only: NumPy."""
    res = check_property(resolve(name), prop, replace(budget, max_n=2**12))
    assert res.status == "pass", res
