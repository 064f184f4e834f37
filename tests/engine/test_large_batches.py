"""Batches past 2**32 elements: both axes checked, wrong rows named, and the size blamed
only where the same layout below 2**31 elements is right.  The full-size runs are GPU
tests (huge)."""

from __future__ import annotations

import numpy as np

import scancheck.engine.large_batches as large_batches
from scancheck.engine.diagnosis import Cause
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target


def _numpy():
    return Target("t", lambda x: np.cumsum(x, dtype=x.dtype), TargetSpec())


def _batched(fn, **spec):
    return Target("batched", fn, TargetSpec(axis="arg", dtypes=("float32", "int32"), **spec))


def test_batches_past_2_to_the_32_are_checked_along_both_axes_and_told(monkeypatch):
    """At a stand-in size (3000 elements, retried at 999): numpy's batched cumsum and cumprod
    are right along either axis; wrong rows are named, and an error gone at the smaller size
    is blamed on the size (an index overflow), one still there on the rows; 1-D targets
    skip."""
    monkeypatch.setitem(large_batches.BATCH_CHECKS, "batch past 2**32", 3000)
    monkeypatch.setattr(large_batches, "BATCH_BELOW", 999)
    for op, fn in (("add", np.cumsum), ("mul", np.cumprod)):
        r = large_batches.check_batch(_batched(lambda x, axis, f=fn: f(x, axis=axis, dtype=x.dtype), op=op))
        assert r.status == "pass" and r.detail["shape [1000, 3]"] == r.detail["shape [3, 1000]"] \
            == "right", r

    def wrong_from(row):
        def scan(x, axis):
            out = np.cumsum(x, axis=axis, dtype=x.dtype)
            if axis == 1 and x.shape[0] > row:
                out[row:] += 1
            return out
        return scan

    # Right at the size below (333 rows), wrong at the full one: the size is to blame.
    r = large_batches.check_batch(_batched(wrong_from(900)))
    assert r.status == "fail" and r.cause == Cause.INDEX_OVERFLOW.name, r
    assert "row 900 " in r.diagnosis and "element 2,700 of the batch" in r.diagnosis
    assert r.smallest_case["row"] == 900 and r.smallest_case["axis"] == 1
    # Wrong at the size below too: rows, not sizes.
    r = large_batches.check_batch(_batched(wrong_from(100)))
    assert r.cause == Cause.LOGIC.name and "not of 32-bit sizes" in r.diagnosis
    one_d = large_batches.check_batch(_numpy())
    assert one_d.status == "skip" and "1-D" in one_d.diagnosis
