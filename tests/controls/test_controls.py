"""Every negative control is caught with its one right diagnosis, at the default flags of
``scancheck check`` (the time budget is the test profile's; the quick profile's ladders stop
at each control's reach, past the size that catches it, and the thorough profile and
``check --controls`` walk them whole)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace

import numpy as np
import pytest
from hypothesis import settings

from scancheck.controls import CONTROLS, sums
from scancheck.core.arrays import same_bits
from scancheck.engine.cases import Budget, Case
from scancheck.engine.diagnosis import Cause
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import spec_from_json

CPU = [c for c in CONTROLS if not c.gpu]
GPU = [c for c in CONTROLS if c.gpu]
#: Caught at any budget: by the ladder of sizes, or the first sizes every search tries.
ANY_BUDGET = [c for c in CPU if c.seconds is None]


def _caught(c, **kw):
    rep, caught = c.check(**kw)
    verdict = rep.verdict
    assert caught, f"{c.name}: {verdict.line!r}\n{rep.rows()}"
    return rep


def test_every_cause_has_a_control():
    assert {c.cause for c in CONTROLS} - {None} == set(Cause)
    assert any(c.cause is None for c in CPU)  # a right but slow one, told slow


@pytest.mark.slow
@pytest.mark.parametrize("control", ANY_BUDGET, ids=[c.name for c in ANY_BUDGET])
def test_cpu_negative_controls_are_caught(control, budget):
    """In this process: a CPU control neither faults nor hangs, so a child process would only
    add its start-up.  ``scancheck check --controls`` (the GPU suite) runs them isolated, and
    to 2**20: past each control's reach the ladders took three quarters of this test's time."""
    if settings._current_profile == "ci":
        budget = replace(budget, max_n=control.reach)
    # A control with a timeout of its own passes it: only a child can be killed there.
    rep = _caught(control, isolated=control.process_state or control.dies
                  or control.timeout is not None, budget=budget)
    failing = [r for r in rep.results if r.status == "fail"]
    assert all(r.smallest_case for r in failing)


def test_a_bug_only_at_some_sizes_is_found_within_one_propertys_share_of_the_default_budget():
    """Wrong only at n in [1000, 1010] and [3000, 3010], no size of the ladder among them:
    the search's draws find it, to 2**20 as by default, within the seconds each of five
    properties gets of the default 30 (a cap of 1000 examples would end it after 5 s of
    30, and scales drawn evenly give a few dozen cases each).  It ends once found, in about a
    second."""
    (control,) = [c for c in CPU if c.name.startswith("tail wrong only at")]
    # A budget's seconds are wall-clock ones, of which the other workers and processes of a
    # loaded 2-core CI machine take their share: the search gets the default 30 s, and the
    # seconds it must find the bug within are its own, CPU-seconds, twice the control's.  A
    # cap of 1000 examples (the bug this test is for) would still end the search first.
    # What any check loads on its first case (the exact oracles from Numba's cache, say) is
    # loaded first: the seconds measured are the search's.
    control.check(isolated=False, properties=("integers exact",), budget=Budget(0.1, max_n=64))
    cpu = time.process_time()
    rep = _caught(control, isolated=False, properties=("integers exact",), budget=Budget())
    spent = time.process_time() - cpu
    assert spent <= 2 * control.seconds, (spent, rep.rows())
    assert rep.verdict.smallest_case["n"] in (1000, 3000), rep.rows()


BANDS = [c for c in CPU if c.locator.startswith("scancheck.controls.bands:") and c.seconds]
#: The properties that search each band control (the float value properties where unnamed).
BAND_PROPERTIES = {"integer sum checking overflow at some sizes": ("integers exact",),
                   "reverse scan flipped at some sizes": ("probe monoids",),
                   "sum reading NaN as zero in the last tile at some sizes": ("nan and inf",)}
def _band_cases() -> list:
    return [pytest.param(c, prop, id=f"{c.name}-{prop}") for c in BANDS
            for prop in BAND_PROPERTIES.get(c.name, ("certified exact", "floats within bound"))]


@pytest.mark.slow
@pytest.mark.parametrize(("control", "prop"), _band_cases())
def test_a_bug_in_1_64_of_the_sizes_past_5000_is_found_and_told_at_its_smallest_n(control,
                                                                                  prop):
    """No size of the ladder lies in the band (n > 5000, n % 64 == 7): the sizes of each
    block's residues that every search sweeps meet it within one property's share of the
    default budget, and the shrink takes it down that residue to n = 5063, where no NaN
    rule, promotion, flush, overflow rule or reverse convention is told for it."""
    # The search gets the default wall-clock budget, so that a loaded CI machine taking its
    # share of the seconds cannot end it early; the seconds it must find the band within are
    # those of its search up to the failure (the report's), the shrinking after it apart.
    control.check(isolated=False, properties=(prop,), budget=Budget(0.1, max_n=64))
    rep = _caught(control, isolated=False, properties=(prop,), budget=Budget())
    (failed,) = [r for r in rep.results if r.status == "fail"]
    assert failed.detail["seconds"] <= 2 * control.seconds, rep.rows()
    assert rep.verdict.smallest_case["n"] == 5063, rep.rows()


@pytest.mark.slow
def test_a_nan_mishandled_only_after_no_other_special_is_found_on_lone_specials():
    """Past 4000 elements the last tile reads NaN as zero: on data one element in 20
    special the outputs there are NaN already, so only the sweep's lone specials show it,
    within one property's share of the default budget, as broken NaN handling (no rule)."""
    (control,) = [c for c in CPU if c.name == "sum reading a late NaN as zero"]
    control.check(isolated=False, properties=("nan and inf",), budget=Budget(0.1, max_n=64))
    rep = _caught(control, isolated=False, properties=("nan and inf",), budget=Budget())
    (failed,) = [r for r in rep.results if r.status == "fail"]
    assert failed.detail["seconds"] <= 2 * control.seconds, rep.rows()
    assert rep.verdict.smallest_case["data"] == "lone specials", rep.rows()
    assert rep.verdict.smallest_case["n"] > 4000, rep.rows()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("data", ["uniform", "cancellation", "overflow", "specials", "zeros"])
def test_carries_taken_at_once_are_those_carried_block_after_block(dtype, data):
    """A running sum of block totals (the varying tile's, the float16 one) is one accumulate,
    the same bits as the carry it stands for, passed from block to block (float16 totals in
    the float types that control declares)."""
    x = Case(3_000, dtype, data, 5).data("add")
    plain = [lambda local, xs: sums.running_offsets(local, x.dtype),
             sums.one_by_one(lambda off, local, xs, outs: outs)]
    half = [lambda local, xs: sums.running_offsets(local, np.float16).astype(x.dtype),
            sums.one_by_one(lambda off, local, xs, outs:
                               (np.float16(off) + np.float16(local)).astype(x.dtype))]
    with np.errstate(all="ignore"):
        for at_once, one_by_one in [plain] + [half] * (dtype != "int32"):
            for block in (2, 37, 64):
                want = sums.blocked(x, one_by_one, block)
                assert same_bits(sums.blocked(x, at_once, block), want).all()


@pytest.mark.parametrize("v", [0.0, -0.0, np.inf, -np.inf, np.nan, 1 + 2**-9, -(1 + 3 * 2**-9),
                               2.5 * 2**-1070, 5e-324, np.finfo(np.float64).max, -3.0e300])
def test_a_carry_rounded_to_fewer_bits_is_numpys_rounding_of_its_significand(v):
    """Zeros keep their sign, infinities and NaN stay, a rounding past the largest float is
    an infinity, a tie goes to even: frexp, round and ldexp as NumPy does them."""
    m, e = np.frexp(np.float64(v))
    with np.errstate(over="ignore"):
        want = np.ldexp(np.round(m * 2.0**8), e - 8)
    assert same_bits(np.float64(sums.round_to_bits(v, 8)), want)


@pytest.mark.parametrize("control", CPU, ids=[c.name for c in CPU])
def test_what_a_child_is_told_of_a_cpu_control_is_what_it_declares(control):
    """The isolated check hands the child the spec as JSON and reads the resolved one back:
    both trips must keep every field (the promotions' pairs came back as lists once)."""
    declared = resolve(control.locator, control.spec).spec
    assert spec_from_json(json.loads(json.dumps(asdict(declared)))) == declared


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.huge
@pytest.mark.parametrize("control", GPU, ids=[c.name for c in GPU])
def test_gpu_negative_controls_are_caught(control, budget):
    """Sanitizers and the checks past 2**31 and 2**32 run, as they do by default."""
    _caught(control, budget=budget)
