"""'segments past 2**31': the layout reaches bos * H >= 2**31 with int32 offsets, the check
catches a scan whose starts times heads wrap (as an index overflow, which no smaller check
shows) and passes the correct built-in segmented targets."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scancheck.adapters import builtin_targets
from scancheck.controls import CONTROLS
from scancheck.controls.segmented import starts_times_heads_wrapping
from scancheck.engine.conformance import PROPERTIES, check_property
from scancheck.engine.diagnosis import Cause
from scancheck.engine.large_segments import (
    BOUNDARY,
    HEADS,
    SEGMENT_CHECKS,
    check_segments_large,
    segment_case,
)
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target

#: A boundary a test holds: the same check, the wrap at 2**12 instead of 2**31.
SMALL = 2**12
TARGETS = builtin_targets()
SEGMENTED = [n for n, t in TARGETS.items() if t.spec.segments and "numpy" in n]


def test_the_check_past_2_31_reaches_bos_times_heads_past_2_31_with_int32_offsets():
    """At its real size: more than 2**31 elements; every offset fits int32; a non-empty
    segment starts where start * H >= 2**31 (an empty one just before it), its rows hold
    ones, and int32 arithmetic wraps that product negative."""
    case = segment_case(SEGMENT_CHECKS["segments past 2**31"], HEADS, "int32")
    assert case.t * case.heads > 2**31 and case.t < 2**31
    off = case.description("offsets")
    assert off.dtype == np.int32 and np.array_equal(off.astype(np.int64), case.offsets)
    lengths = np.diff(case.offsets)
    past = [i for i, s in enumerate(case.offsets[:-1]) if s * HEADS >= BOUNDARY and lengths[i]]
    assert past, case.offsets
    assert 0 in lengths[past[0] - 1:past[0]]  # the empty segment at the wrap
    first = int(case.offsets[past[0]])
    assert first * HEADS == BOUNDARY and any(first <= m < first + lengths[past[0]]
                                             for m in case.marks)
    with np.errstate(over="ignore"):
        assert (off[past[0]] * np.int32(HEADS)) < 0


@pytest.mark.parametrize("kind, one_d, dtype", [("offsets", False, "int32"),
                                                ("offsets:int64", False, "int64"),
                                                ("offsets", True, "int64"),
                                                ("offsets:int32", True, None),
                                                ("flags", False, "int32")])
def test_the_offsets_dtype_is_int32_where_the_target_takes_it(kind, one_d, dtype):
    from scancheck.engine.large_segments import _index_dtype

    assert _index_dtype(kind, one_d) == dtype


def _wrapping(limit: int) -> Target:
    return Target("bos * H wrapping", lambda x, o: starts_times_heads_wrapping(x, o, limit),
                  TargetSpec(segments="offsets", axis=0, dtypes=("float32", "int32")))


def test_a_scan_whose_starts_times_heads_wrap_is_an_index_overflow_only_past_the_boundary(budget):
    """The control's bug with its wrap at 2**12: the check at that boundary calls it an index
    overflow, naming the segment and its start times the heads; every other property, and
    'segments' below the wrap, pass it."""
    target = _wrapping(SMALL)
    r = check_segments_large(target, boundary=SMALL, total=SMALL + 17)
    assert r.status == "fail" and r.cause == Cause.INDEX_OVERFLOW.name, r.diagnosis
    assert f"start x heads = {SMALL:,}" in r.diagnosis and "offsets x heads" in r.diagnosis
    assert r.smallest_case["index"] * HEADS >= SMALL
    # Below the boundary it is right: 'segments' (to fewer than 2**12 elements) passes, its
    # ladder whole and its search the profile's seconds.
    assert check_property(target, "segments", replace(budget, max_n=SMALL - 1)).status == "pass"
    # And at the real boundary the same scan is right at this size.
    assert check_segments_large(_wrapping(2**31), boundary=SMALL,
                                total=SMALL + 17).status == "pass"


def test_the_real_control_runs_on_the_gpu_and_is_caught_by_that_check_alone(budget):
    (row,) = [c for c in CONTROLS if c.locator.endswith("offsets_times_heads_in_32_bits")]
    assert row.gpu and row.cause == Cause.INDEX_OVERFLOW and "segments past 2**31" in row.caught_by
    assert "segments past 2**31" not in PROPERTIES  # a check past 2**31, not a property
    # Its own spec (device cpu): right in 'segments' at every size drawn.
    cpu = resolve(row.locator)
    assert check_property(cpu, "segments", replace(budget, max_n=2**12)).status == "pass"


@pytest.mark.parametrize("name", SEGMENTED)
def test_correct_builtin_segmented_targets_pass_the_check(name):
    """Each built-in NumPy segmented scan (offsets, flags, keys, groups; reverse exclusive
    T x H) at the check's boundary moved to 2**12: pass, or a skip saying why (another
    operator than add)."""
    target = TARGETS[name]
    r = check_segments_large(target, boundary=SMALL, total=SMALL + 17)
    if target.spec.op != "add":
        assert r.status == "skip" and "add scan" in r.diagnosis
    else:
        assert r.status == "pass", (r.diagnosis, r.smallest_case)


def test_a_scan_ignoring_its_segments_is_a_logic_error_not_an_overflow():
    t = Target("ignores", lambda x, o: np.cumsum(x, axis=0, dtype=x.dtype),
               TargetSpec(segments="offsets", axis=0, dtypes=("int32",)))
    r = check_segments_large(t, boundary=SMALL, total=SMALL + 17)
    assert r.status == "fail" and r.cause == Cause.LOGIC.name, r.diagnosis


def test_unsegmented_targets_skip_it():
    r = check_property(resolve("numpy.cumsum"), "segments past 2**31")
    assert r.status == "skip" and "not segmented" in r.diagnosis


@pytest.mark.gpu
@pytest.mark.huge
@pytest.mark.slow
def test_a_correct_cupy_segmented_scan_passes_at_the_real_size():
    """A plain CuPy segmented scan (one cumsum per segment) past 2**31 elements with int32
    offsets, judged on the device: pass.  (The NumPy built-ins take minutes at this size on
    a CPU: they are checked at the boundary moved to 2**12 above.)"""
    import cupy as cp

    def scan(x, offsets):
        out = cp.empty_like(x)
        off = cp.asnumpy(offsets).astype(np.int64)
        for a, b in zip(off[:-1], off[1:]):
            if b > a:
                out[a:b] = cp.cumsum(x[a:b], axis=0, dtype=x.dtype)
        return out

    target = Target("cupy segmented cumsum", scan, TargetSpec(
        segments="offsets", axis=0, device="gpu", dtypes=("float32",)))
    r = check_property(target, "segments past 2**31")
    if r.status == "skip":
        pytest.skip(r.diagnosis)
    assert r.status == "pass" and r.detail["index dtype"] == "int32", (r.diagnosis, r.detail)
