"""The example targets users copy (``examples/``) conform, checked as users would check them:
by import path, at the test profile's budget (on a GPU: they are Triton and numba.cuda)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import pytest

from scancheck.engine.conformance import PROPERTIES, check_property
from scancheck.targets.resolve import resolve

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
    the combine, under the probe monoids (to 2**11, 128 of its chunks: its fold is Python,
    and the exact answer of a product of n floats has O(n) digits, so the rungs at 4095 and
    4096 took two thirds of the chunked scan's two checks).  CPU only: NumPy."""
    res = check_property(resolve(name), prop, replace(budget, max_n=2**11))
    assert res.status == "pass", res


#: Triton's tl.associative_scan with a user's non-commutative pair combine, and the property
#: that judges each target.
TRITON_ASSOC = [("examples.triton_assoc_scan:affine_scan", "monoid scan"),
                ("examples.triton_assoc_scan:affine_scan_reverse", "monoid scan"),
                ("examples.triton_assoc_scan:segmented_cumsum", "segments")]


def _triton_assoc_verdicts(interpret: bool, seconds: float, max_n: int,
                           targets: list[tuple[str, str]] = TRITON_ASSOC) -> dict[str, str]:
    """Each Triton pair-scan target's status (and diagnosis where it did not pass), checked
    in a child process: TRITON_INTERPRET must be set before triton is imported."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json\n"
        "from scancheck.engine.cases import Budget\n"
        "from scancheck.engine.conformance import check_property\n"
        "from scancheck.targets.resolve import resolve\n"
        f"out = {{}}\n"
        f"for name, prop in {targets!r}:\n"
        f"    r = check_property(resolve(name), prop, Budget({seconds}, max_n={max_n}))\n"
        "    out[name] = r.status if r.status == 'pass' else f'{r.status}: {r.diagnosis}'\n"
        "print(json.dumps(out))\n")
    env = dict(os.environ, TRITON_INTERPRET="1" if interpret else "0")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_triton_pair_scans_conform_in_tritons_interpreter():
    """Forward, reverse ('flip') and segmented, tile seams at 256: the host logic and the
    kernels' combine order, run by Triton's interpreter on the CPU (the compiled kernels are
    the GPU test's)."""
    for needs in ("torch", "triton"):
        if importlib.util.find_spec(needs) is None:
            pytest.skip(f"{needs} is not installed")
    verdicts = _triton_assoc_verdicts(True, 2, 600)
    assert verdicts == {name: "pass" for name, _ in TRITON_ASSOC}, verdicts


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("target", TRITON_ASSOC, ids=[name for name, _ in TRITON_ASSOC])
def test_the_triton_pair_scans_conform_compiled(target, budget):
    """The same targets compiled for the GPU (Triton #4362: a reverse scan of a
    non-commutative combine was reported wrong; this says what this Triton does), one test
    each so that their compiles run side by side."""
    _usable("triton")
    verdicts = _triton_assoc_verdicts(False, budget.seconds, 2**16, [target])
    assert verdicts == {target[0]: "pass"}, verdicts
